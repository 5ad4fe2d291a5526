# kafel.GemmPlan: one shape prepared once and reused (1,000 calls), new layouts accepted,
# another shape refused.
import numpy as np
import pytest

import kafel
from conftest import small_integers


def test_a_plan_reused_a_thousand_times(rng):
    a = [small_integers(rng, (24, 16), "float32") for _ in range(3)]
    b = [small_integers(rng, (16, 8), "float32") for _ in range(3)]
    want = [x.astype(np.float64) @ y.astype(np.float64) for x, y in zip(a, b)]
    plan = kafel.GemmPlan(a[0], b[0])
    out = np.empty((24, 8), "f4")
    for i in range(1000):
        j = i % 3
        got = plan(a[j], b[j], out=out) if i % 2 else plan(a[j], b[j])
        np.testing.assert_array_equal(got, want[j])
    assert plan.kernel and plan.last_report.kernel == plan.kernel
    assert plan.device.id == "cpu"


def test_a_plan_with_beta_and_transposes(rng):
    a = small_integers(rng, (9, 12), "float64")
    b = small_integers(rng, (7, 9), "float64")
    c = small_integers(rng, (12, 7), "float64")
    plan = kafel.GemmPlan(a, b, c, alpha=2, beta=-1, trans_a=True, trans_b=True)
    for _ in range(3):
        np.testing.assert_array_equal(plan(a, b, c), 2 * a.T @ b.T - c)


def test_a_plan_takes_other_layouts_but_not_other_shapes(rng):
    a = small_integers(rng, (10, 6), "float32")
    b = small_integers(rng, (6, 4), "float32")
    plan = kafel.GemmPlan(a, b)
    np.testing.assert_array_equal(plan(np.asfortranarray(a), b), a @ b)
    with pytest.raises(kafel.InvalidArgument) as e:
        plan(np.ones((11, 6), "f4"), b)
    assert "plan made for" in str(e.value) or "prepared for" in str(e.value)
    with pytest.raises(kafel.InvalidArgument):
        plan(a.astype("f8"), b.astype("f8"))


def test_a_reused_plan_prepares_once_and_writes_out_in_place(rng):
    # Per-call cost: a reused plan neither chooses nor prepares again (one prepared GEMM per
    # layout) and writes out= where it is, with bit-identical results on every call.
    a = rng.standard_normal((33, 17)).astype("f4")  # odd sizes: no padded, aligned rows
    b = rng.standard_normal((17, 9)).astype("f4")
    plan = kafel.GemmPlan(a, b)
    out = np.empty((33, 9), "f4")
    first = plan(a, b).copy()
    for _ in range(1000):
        assert plan(a, b, out=out) is out
        assert np.array_equal(out, first)
    assert plan._plan.prepared_count == 1
    np.testing.assert_allclose(first, a.astype("f8") @ b.astype("f8"), rtol=1e-5, atol=1e-5)
    fortran = np.asfortranarray(a)
    for _ in range(10):
        np.testing.assert_allclose(plan(fortran, b), first, rtol=1e-6, atol=1e-6)
    assert plan._plan.prepared_count == 2  # the column-major A got a prepared GEMM of its own
    plan(a, b, out=out)
    assert plan._plan.prepared_count == 2 and np.array_equal(out, first)


def test_what_kafel_gemm_keeps_prepared_for_cuda_arrays():
    # The key of kafel.gemm's per-thread plans (used for CUDA arrays): every argument that
    # changes the prepared GEMM is in it, and large problems are not kept.
    from kafel import _gemm

    a, b, out = np.ones((8, 4), "f4"), np.ones((4, 2), "f4"), np.ones((8, 2), "f4")
    key = _gemm._plan_key(a, b, out, 1, 0, False, False, "cuda:0", None, None)
    assert key == _gemm._plan_key(a.copy(), b, out, 1.0, 0.0, False, False, "cuda:0", "", None)
    others = [
        _gemm._plan_key(a.astype("f8"), b, out, 1, 0, False, False, "cuda:0", None, None),
        _gemm._plan_key(a, b, out, 2, 0, False, False, "cuda:0", None, None),
        _gemm._plan_key(a, b, out, 1, 1, False, False, "cuda:0", None, None),
        _gemm._plan_key(a.T, b[:, :1].T, out[:4, :1], 1, 0, True, True, "cuda:0", None, None),
        _gemm._plan_key(a, b, out, 1, 0, False, False, "cuda:1", None, None),
        _gemm._plan_key(a, b, out, 1, 0, False, False, "cuda:0", "cuda.smem", None),
        _gemm._plan_key(a, b, out, 1, 0, False, False, "cuda:0", None, "tf32"),
    ]
    assert key is not None and all(k is not None and k != key for k in others)
    big = np.ones((2048, 2048), "f4")
    assert _gemm._plan_key(big, big, big, 1, 0, False, False, "cuda:0", None, None) is None
    assert _gemm._plan_key(a, b, out, 1, 0, False, False, 0, None, None) is None
