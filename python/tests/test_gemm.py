# kafel.gemm on host arrays against numpy in float64: every element type each device supports,
# C- and Fortran-ordered operands, transposes, strided views, alpha/beta, out= and verify=.
import threading

import numpy as np
import pytest

import kafel
from conftest import HOST_TYPES, host_devices, small_integers


def reference(a, b, c=None, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    r = alpha * ((a64.T if trans_a else a64) @ (b64.T if trans_b else b64))
    return r + beta * c.astype(np.float64) if c is not None else r


def test_readme_example_is_accurate():
    a = np.random.rand(300, 200).astype("f4")
    b = np.random.rand(200, 100).astype("f4")
    c = kafel.gemm(a, b)
    assert isinstance(c, np.ndarray) and c.dtype == np.float32 and c.shape == (300, 100)
    assert abs(c - a @ b).max() < 1e-4


@pytest.mark.parametrize("role", sorted(HOST_TYPES))
def test_every_supported_type_is_exact_on_small_integers(device, role, rng):
    if role not in device.gemm_types:
        pytest.skip(f"{device.id} runs no {role} GEMM (it supports {device.gemm_types})")
    dtype = HOST_TYPES[role]
    a = small_integers(rng, (37, 29), dtype)
    b = small_integers(rng, (29, 23), dtype)
    c = kafel.gemm(a, b, device=device)
    want_dtype = np.int32 if role in ("i8", "i32") else np.dtype(dtype)
    assert c.dtype == want_dtype
    np.testing.assert_array_equal(c.astype(np.float64), reference(a, b))


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-6), ("float64", 1e-14)])
def test_random_floats_within_rounding(device, dtype, tol, rng):
    if {"float32": "f32", "float64": "f64"}[dtype] not in device.gemm_types:
        pytest.skip(f"{device.id} runs no {dtype} GEMM")
    a = rng.standard_normal((130, 70)).astype(dtype)
    b = rng.standard_normal((70, 90)).astype(dtype)
    ref = reference(a, b)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    assert (np.abs(kafel.gemm(a, b, device=device) - ref) <= tol * 70 * scale).all()


@pytest.mark.parametrize("order_a", "CF")
@pytest.mark.parametrize("order_b", "CF")
@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("order_c", "CF")
def test_layouts_transposes_alpha_beta(order_a, order_b, trans_a, trans_b, order_c, rng):
    m, n, k = 19, 13, 11
    a = small_integers(rng, (k, m) if trans_a else (m, k), "float64", order_a)
    b = small_integers(rng, (n, k) if trans_b else (k, n), "float64", order_b)
    c = small_integers(rng, (m, n), "float64", order_c)
    got = kafel.gemm(a, b, c, alpha=2.0, beta=-3.0, trans_a=trans_a, trans_b=trans_b,
                     device="cpu")
    np.testing.assert_array_equal(got, reference(a, b, c, 2.0, -3.0, trans_a, trans_b))
    np.testing.assert_array_equal(c, c.copy())  # c is read, never written


def test_strided_views_are_used_in_place_or_copied(rng):
    big = small_integers(rng, (40, 50), "float32")
    views = {
        "row slice (leading dim 50)": big[3:20, 5:30],
        "transposed slice": big[3:20, 5:30].T,
        "every other element (copied)": big[::2, ::2],
        "negative strides (copied)": big[::-1, ::-1][:25, :20],
    }
    other = small_integers(rng, (50, 25), "float32")
    for name, a in views.items():
        b = other[: a.shape[1], :]
        np.testing.assert_array_equal(kafel.gemm(a, b), reference(a, b), err_msg=name)


def test_out_is_written_in_place_in_any_layout(rng):
    a = small_integers(rng, (8, 6), "float32")
    b = small_integers(rng, (6, 5), "float32")
    for out in (np.zeros((8, 5), "f4"), np.zeros((8, 5), "f4", order="F"),
                np.zeros((8, 10), "f4")[:, ::2]):
        result = kafel.gemm(a, b, out=out)
        assert result is out
        np.testing.assert_array_equal(out, reference(a, b))


def test_out_may_be_c_and_accumulates(rng):
    a = small_integers(rng, (8, 6), "float64")
    b = small_integers(rng, (6, 5), "float64")
    c = small_integers(rng, (8, 5), "float64")
    want = reference(a, b, c, 1.0, 0.5)
    assert kafel.gemm(a, b, c, beta=0.5, out=c) is c
    np.testing.assert_array_equal(c, want)
    acc = small_integers(rng, (8, 5), "float64")
    want = reference(a, b, acc, 1.0, 1.0)
    kafel.gemm(a, b, beta=1.0, out=acc)  # out's contents are C when c is None
    np.testing.assert_array_equal(acc, want)


def test_out_overlapping_an_input_gets_the_right_result(rng):
    a = small_integers(rng, (6, 6), "float64")
    want = reference(a, a)
    kafel.gemm(a, a, out=a)
    np.testing.assert_array_equal(a, want)


def test_compute_modes_and_kernels(rng):
    a = rng.standard_normal((64, 48)).astype("f4")
    b = rng.standard_normal((48, 32)).astype("f4")
    for kernel in kafel.Device("cpu").kernels:
        try:
            got = kafel.gemm(a, b, device="cpu", kernel=kernel, verify=True)
        except kafel.Unsupported:
            continue  # e.g. a baseline without f32, or a kernel this CPU lacks
        assert np.allclose(got, a @ b, rtol=1e-4, atol=1e-4), kernel


def test_a_compute_mode_runs_verified_or_is_refused_by_name(rng):
    a = rng.standard_normal((64, 48)).astype("f4")
    b = rng.standard_normal((48, 32)).astype("f4")
    try:
        got = kafel.gemm(a, b, compute="tf32", verify=True)
    except kafel.Unsupported as refused:
        assert "tf32" in str(refused)
    else:
        assert np.allclose(got, a @ b, rtol=1e-2, atol=1e-2)


def test_verify_runs_the_cli_check(rng):
    a = rng.standard_normal((50, 40))
    b = rng.standard_normal((40, 30))
    c = rng.standard_normal((50, 30))
    got = kafel.gemm(a, b, c, alpha=0.5, beta=2.0, verify=True)
    np.testing.assert_allclose(got, reference(a, b, c, 0.5, 2.0), rtol=1e-12, atol=1e-12)


def test_nan_propagates_to_its_row_and_column(rng):
    a = rng.standard_normal((5, 4))
    b = rng.standard_normal((4, 3))
    a[2, 1] = np.nan
    got = kafel.gemm(a, b)
    assert np.isnan(got[2]).all()
    assert np.isfinite(np.delete(got, 2, axis=0)).all()


def test_empty_and_degenerate_shapes(rng):
    assert kafel.gemm(np.zeros((0, 3), "f4"), np.zeros((3, 4), "f4")).shape == (0, 4)
    np.testing.assert_array_equal(kafel.gemm(np.zeros((2, 0)), np.zeros((0, 3))), np.zeros((2, 3)))
    a = small_integers(rng, (1, 7), "float32")
    b = small_integers(rng, (7, 1), "float32")
    np.testing.assert_array_equal(kafel.gemm(a, b), reference(a, b))


def test_lists_and_other_buffers_are_read_as_numpy():
    got = kafel.gemm([[1.0, 2.0], [3.0, 4.0]], np.eye(2))
    np.testing.assert_array_equal(got, [[1.0, 2.0], [3.0, 4.0]])


def test_the_gil_is_released_while_the_device_works(rng):
    a = rng.standard_normal((700, 700))
    done = threading.Event()
    ticks = 0

    def run():
        kafel.gemm(a, a, device="cpu", kernel="cpu.naive")
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    while not done.is_set():
        ticks += 1
    worker.join()
    # With the GIL held, this loop could not run until the GEMMs finished.
    assert ticks > 10_000


@pytest.mark.skipif(len(host_devices()) < 2, reason="only the CPU is present")
def test_host_arrays_on_every_device(rng):
    a = small_integers(rng, (33, 17), "float32")
    b = small_integers(rng, (17, 9), "float32")
    for dev in host_devices():
        np.testing.assert_array_equal(kafel.gemm(a, b, device=dev), reference(a, b))


def test_wider_c_through_out(rng):
    # f16 inputs accumulated into a float32 C: the roles "f16->f32", chosen by out's type.
    a = small_integers(rng, (20, 30), "float16")
    b = small_integers(rng, (30, 10), "float16")
    out = np.zeros((20, 10), "f4")
    assert kafel.gemm(a, b, out=out) is out
    np.testing.assert_array_equal(out, reference(a, b))


def test_torch_cpu_tensors_in_and_out_including_bfloat16(rng):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        a = torch.randint(-4, 5, (20, 30)).to(dtype)
        b = torch.randint(-4, 5, (30, 10)).to(dtype)
        c = kafel.gemm(a, b, device="cpu")
        assert isinstance(c, torch.Tensor) and c.dtype == dtype and not c.is_cuda
        assert torch.equal(c.double(), a.double() @ b.double()), dtype
