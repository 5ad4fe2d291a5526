# kafel.cov against numpy.cov in float64: the radar article's signal, an offset-mean signal,
# 33 channels, both layouts and memory orders, ddof; kafel.CovStream over a few blocks.
import numpy as np
import pytest

import kafel

TOL = 1e-6  # relative Frobenius error, as the C++ covariance tests allow


def rel_err(got, want):
    return np.linalg.norm(got - want) / np.linalg.norm(want)


def numpy_cov(x, **kw):
    return np.cov(x.astype(np.float64), **kw)


@pytest.mark.parametrize("kind,channels,samples", [
    ("seed", 10, 1 << 16),     # the article's signal
    ("offset", 8, 50_000),     # mean 1e4, std 1: punishes one-pass formulas
    ("random", 33, 20_000),    # more channels than any fixed tile
])
def test_matches_numpy_cov(device, kind, channels, samples):
    x = kafel.signal(kind, channels, samples)
    got = kafel.cov(x, device=device)
    assert got.dtype == np.float64 and got.shape == (channels, channels)
    assert rel_err(got, numpy_cov(x)) < TOL
    np.testing.assert_array_equal(got, got.T)


def test_reference_matches_numpy_closely():
    x = kafel.signal("offset", 5, 10_000)
    assert rel_err(kafel.reference_cov(x), numpy_cov(x)) < 1e-12


def test_layouts_and_memory_orders():
    x = kafel.signal("random", 6, 4_000)
    want = numpy_cov(x)
    for name, arr, layout in [
        ("planar C", x, "planar"),
        ("planar F", np.asfortranarray(x), "planar"),
        ("interleaved C", np.ascontiguousarray(x.T), "interleaved"),
        ("interleaved F", x.T, "interleaved"),
        ("row slice", np.pad(x, ((0, 0), (0, 7)))[:, :4_000], "planar"),
        ("every other sample (copied)", np.repeat(x, 2, axis=1)[:, ::2], "planar"),
    ]:
        assert rel_err(kafel.cov(arr, layout=layout), want) < TOL, name


def test_interleaved_signal_is_the_planar_one_transposed():
    planar = kafel.signal("seed", 4, 1000)
    interleaved = kafel.signal("seed", 4, 1000, layout="interleaved")
    np.testing.assert_array_equal(planar, interleaved.T)


def test_ddof_and_one_channel():
    x = kafel.signal("random", 3, 1000)
    assert rel_err(kafel.cov(x, ddof=0), numpy_cov(x, ddof=0)) < TOL
    v = kafel.cov(x[0])
    assert v.shape == () and abs(v - np.cov(x[0].astype(np.float64))) < 1e-6 * v


def test_nan_makes_its_row_and_column_nan():
    x = kafel.signal("random", 4, 1000)
    x[1, 10] = np.nan
    got = kafel.cov(x)
    assert np.isnan(got[1]).all() and np.isnan(got[:, 1]).all()
    assert np.isfinite(np.delete(np.delete(got, 1, 0), 1, 1)).all()


def test_every_cov_kernel_of_the_cpu():
    x = kafel.signal("offset", 12, 30_000)
    want = numpy_cov(x)
    for kernel in kafel.Device("cpu").cov_kernels:
        try:
            got = kafel.cov(x, device="cpu", kernel=kernel)
        except kafel.Unsupported:
            continue
        assert rel_err(got, want) < TOL, kernel


def test_cov_stream_over_blocks():
    stream = kafel.CovStream(10, 8192, rate=20)
    for block in range(4):
        x = kafel.signal("seed", 10, 8192, first=block * 8192)
        assert rel_err(stream.push(x), numpy_cov(x)) < TOL
    stats = stream.stats
    assert stats.blocks == 4 and len(stats.latency_ms) == 4
    assert 0 < stats.median_ms <= stats.p99_ms <= stats.max_ms
    assert 0 <= stats.missed <= 4 and stats.blocks_per_s > 0
    assert stats.kernel == stream.kernel and len(stats.cpp_ms) == 4
    with pytest.raises(kafel.InvalidArgument):
        stream.push(np.zeros((10, 100), "f4"))


def test_cov_stream_runs_a_generated_signal_in_cpp():
    stream = kafel.CovStream(10, 1 << 15, rate=0, depth=2)
    seen = []
    stats = stream.run("seed", blocks=5, on_result=lambda b, c: seen.append((b, c)))
    assert stats.blocks == 5 and len(stats.latency_ms) == 5 and stats.kernel == stream.kernel
    assert [b for b, _ in seen] == list(range(5))
    want = numpy_cov(kafel.signal("seed", 10, 1 << 15))
    assert rel_err(seen[0][1], want) < TOL
    with pytest.raises(kafel.InvalidArgument):
        stream.run("seed")  # a generated signal never ends


def test_cov_stream_runs_an_iterable_of_blocks():
    blocks = [kafel.signal("random", 6, 5000) for _ in range(3)]
    blocks.append(np.asfortranarray(blocks[0]))  # any memory order is copied in
    stream = kafel.CovStream(6, 5000, rate=0)
    results = []
    stats = stream.run(iter(blocks), on_result=lambda b, c: results.append(c))
    assert stats.blocks == 4 and len(results) == 4
    for got, x in zip(results, blocks):
        assert rel_err(got, numpy_cov(x)) < TOL
    with pytest.raises(kafel.InvalidArgument):
        stream.run([np.zeros((6, 10), "f4")])
