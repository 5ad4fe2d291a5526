# torch and cupy arrays in CUDA memory through kafel.gemm and kafel.GemmPlan: results of the
# caller's kind, written in place (the data pointers prove no host round trip), producer
# streams honoured. Skipped, with the reason, without a GPU, torch/cupy or kafel's CUDA backend.
import numpy as np
import pytest

import kafel

# Names, not Device objects: a module global outlives the binding's teardown at exit, and
# nanobind then reports the objects it holds as leaked.
cuda_ids = [d.id for d in kafel.devices() if d.backend == "cuda"]


def cuda0():
    return kafel.Device(cuda_ids[0])


needs_gpu = pytest.mark.skipif(not cuda_ids, reason="no CUDA device present "
                               f"(kafel built with CUDA: {kafel.with_cuda})")
torch = pytest.importorskip("torch", reason="torch is not installed") if cuda_ids else None
cupy = None
if cuda_ids:
    try:
        import cupy  # noqa: F811
    except ImportError:
        cupy = None

pytestmark = needs_gpu


def ref64(a, b, trans_a=False, trans_b=False):
    a, b = a.double().cpu(), b.double().cpu()
    return (a.T if trans_a else a) @ (b.T if trans_b else b)


ROLES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16"}


@pytest.mark.parametrize("dtype,tol", [("float32", 1e-5), ("float64", 1e-13),
                                       ("float16", 2e-3), ("bfloat16", 1e-2)])
def test_torch_in_torch_out(dtype, tol):
    if ROLES[dtype] not in cuda0().gemm_types:
        pytest.skip(f"{cuda0().id} runs no {dtype} GEMM")
    dt = getattr(torch, dtype)
    a = torch.randn(300, 200, device="cuda", dtype=dt)
    b = torch.randn(200, 100, device="cuda", dtype=dt)
    c = kafel.gemm(a, b)
    assert isinstance(c, torch.Tensor) and c.is_cuda and c.dtype == dt
    ref = ref64(a, b)
    # Relative to the largest product: the rounding of C's type plus accumulation.
    err = (c.double().cpu() - ref).abs().max().item() / ref.abs().max().item()
    assert err <= tol, err


def test_torch_int8_gives_int32():
    a = torch.randint(-4, 5, (64, 48), device="cuda", dtype=torch.int8)
    b = torch.randint(-4, 5, (48, 32), device="cuda", dtype=torch.int8)
    c = kafel.gemm(a, b)
    assert c.dtype == torch.int32 and c.is_cuda
    assert torch.equal(c.cpu().long(), a.cpu().long() @ b.cpu().long())


def test_out_is_written_in_place_no_host_round_trip():
    a = torch.randn(128, 64, device="cuda")
    b = torch.randn(64, 32, device="cuda")
    out = torch.empty(128, 32, device="cuda")
    ptr = out.data_ptr()
    result = kafel.gemm(a, b, out=out)
    assert result is out and out.data_ptr() == ptr
    assert (out.double().cpu() - ref64(a, b)).abs().max().item() < 1e-3


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
def test_torch_transposed_views_and_strides(trans_a, trans_b):
    a = torch.randn(50, 70, device="cuda")
    b = torch.randn(70, 30, device="cuda")
    a_op = a.t().contiguous().t() if trans_a else a  # column-major storage, same values
    got = kafel.gemm(a_op.t() if trans_a else a_op, b.t().contiguous() if trans_b else b,
                     trans_a=trans_a, trans_b=trans_b)
    assert (got.double().cpu() - ref64(a, b)).abs().max().item() < 1e-3
    odd = torch.randn(100, 140, device="cuda")[::2, ::2]  # copied on the device
    assert (kafel.gemm(odd, b).double().cpu() - ref64(odd, b)).abs().max().item() < 1e-3


def test_torch_on_a_side_stream():
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        a = torch.randn(512, 512, device="cuda")
        b = torch.randn(512, 512, device="cuda")
        a.mul_(2)  # pending on the side stream when kafel is called
        c = kafel.gemm(a, b)
    stream.synchronize()
    assert (c.double().cpu() - ref64(a, b)).abs().max().item() < 1e-2


def test_torch_plan_reused_keeps_the_output_pointer():
    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, 64, device="cuda")
    out = torch.empty(64, 64, device="cuda")
    plan = kafel.GemmPlan(a, b)
    for _ in range(100):
        assert plan(a, b, out=out).data_ptr() == out.data_ptr()
    assert (out.double().cpu() - ref64(a, b)).abs().max().item() < 1e-3


def test_torch_plan_reused_a_thousand_times_is_exact_and_prepares_once():
    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, 64, device="cuda")
    out = torch.empty(64, 64, device="cuda")
    plan = kafel.GemmPlan(a, b)
    first = plan(a, b).clone()
    ptr = out.data_ptr()
    for i in range(1000):
        assert plan(a, b, out=out) is out
        if i % 100 == 99:
            assert torch.equal(out, first)
    assert out.data_ptr() == ptr and plan._plan.prepared_count == 1
    assert (first.double().cpu() - ref64(a, b)).abs().max().item() < 1e-3


def test_torch_plan_on_staged_operands_across_two_streams():
    # 33 x 17 float32 rows are no multiple of 16 bytes: the plan copies the operands into its
    # own buffers, made once and shared by every call, so calls that switch streams must still
    # be ordered on them (and each call's inputs are new).
    xs = [torch.randn(33, 17, device="cuda") for _ in range(4)]
    b = torch.randn(17, 9, device="cuda")
    plan = kafel.GemmPlan(xs[0], b)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    outs = []
    for i in range(40):
        if i % 2:
            with torch.cuda.stream(side):
                outs.append(plan(xs[i % 4], b))
        else:
            outs.append(plan(xs[i % 4], b))
    torch.cuda.synchronize()
    for i, got in enumerate(outs):
        assert (got.double().cpu() - ref64(xs[i % 4], b)).abs().max().item() < 1e-4, i
    assert plan._plan.prepared_count == 1


def test_cublas_plan_reused_with_new_operands():
    dev = cuda0()
    if "cuda.cublas" not in dev.kernels or "i8" not in dev.gemm_types:
        pytest.skip(f"{dev.id} has no cuda.cublas int8 GEMM")
    # cuBLASLt's int8 form: operands relaid out k-major into the plan's buffers on every call,
    # the matmul descriptors prepared once.
    xs = [torch.randint(-4, 5, (40, 24), device="cuda", dtype=torch.int8) for _ in range(3)]
    b = torch.randint(-4, 5, (24, 20), device="cuda", dtype=torch.int8)
    plan = kafel.GemmPlan(xs[0], b, kernel="cuda.cublas")
    for i in range(30):
        got = plan(xs[i % 3], b)
        assert torch.equal(got.cpu().long(), xs[i % 3].cpu().long() @ b.cpu().long()), i
    assert plan.kernel == "cuda.cublas" and plan._plan.prepared_count == 1


def test_mixed_memories_are_an_error():
    a = torch.randn(8, 8, device="cuda")
    with pytest.raises(kafel.InvalidArgument):
        kafel.gemm(a, np.ones((8, 8), "f4"))
    with pytest.raises(kafel.InvalidArgument):
        kafel.gemm(a, a, device="cpu")


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
def test_cupy_in_cupy_out():
    a = cupy.random.standard_normal((300, 200), dtype=cupy.float32)
    b = cupy.random.standard_normal((200, 100), dtype=cupy.float32)
    out = cupy.empty((300, 100), dtype=cupy.float32)
    c = kafel.gemm(a, b)
    assert isinstance(c, cupy.ndarray)
    assert kafel.gemm(a, b, out=out) is out and out.data.ptr == out.data.ptr
    want = cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64)
    assert np.abs(cupy.asnumpy(c) - want).max() < 1e-3
    assert np.abs(cupy.asnumpy(out) - want).max() < 1e-3


def test_host_arrays_on_the_gpu_are_copied_explicitly():
    a = np.random.rand(100, 80).astype("f4")
    b = np.random.rand(80, 60).astype("f4")
    got = kafel.gemm(a, b, device=cuda0())
    assert isinstance(got, np.ndarray) and np.abs(got - a @ b).max() < 1e-3


@pytest.mark.skipif(cupy is None, reason="cupy is not installed")
def test_cupy_plan_reused_in_place_and_column_major():
    a = cupy.random.standard_normal((64, 48), dtype=cupy.float32)
    b = cupy.random.standard_normal((48, 32), dtype=cupy.float32)
    out = cupy.empty((64, 32), dtype=cupy.float32)
    plan = kafel.GemmPlan(a, b)
    for _ in range(100):
        assert plan(a, b, out=out) is out
    want = cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64)
    assert np.abs(cupy.asnumpy(out) - want).max() < 1e-3
    fresh = plan(cupy.asfortranarray(a), b)
    assert isinstance(fresh, cupy.ndarray) and np.abs(cupy.asnumpy(fresh) - want).max() < 1e-3
