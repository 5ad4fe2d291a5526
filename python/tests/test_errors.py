# Bad input to kafel's Python API: each raises the kafel exception mapped from the C++ error
# (also the matching built-in type), with kafel's one-line message; nothing crashes.
import numpy as np
import pytest

import kafel


def one_line(excinfo):
    message = str(excinfo.value)
    assert message and "\n" not in message
    return message


@pytest.fixture
def ab():
    return np.ones((4, 3), "f4"), np.ones((3, 2), "f4")


def test_the_exception_hierarchy():
    assert issubclass(kafel.InvalidArgument, kafel.Error)
    assert issubclass(kafel.InvalidArgument, ValueError)
    assert issubclass(kafel.OutOfMemory, MemoryError)
    assert issubclass(kafel.IoError, OSError)
    assert issubclass(kafel.BuildError, kafel.DeviceError)
    for name in ("Unsupported", "DeviceError", "VerificationError"):
        assert issubclass(getattr(kafel, name), kafel.Error)


@pytest.mark.parametrize("dtype", ["uint8", "complex64", "bool", "int16", "float128"
                                   if hasattr(np, "float128") else "uint32"])
def test_wrong_dtype(dtype):
    a = np.ones((4, 3), dtype)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, a.T)
    assert "element type" in one_line(e)


def test_mixed_dtypes_are_refused(ab):
    a, b = ab
    with pytest.raises(kafel.Error) as e:
        kafel.gemm(a, b.astype("f8"))
    one_line(e)


@pytest.mark.parametrize("shape", [(2, 3, 4), (5,), ()])
def test_not_2d(shape, ab):
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(np.ones(shape, "f4"), ab[1])
    assert "2-D" in one_line(e)


def test_mismatched_shapes(ab):
    a, b = ab
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, a)
    assert "inner dimensions" in one_line(e)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, np.ones((3, 3), "f4"), beta=1.0)
    assert "c is 3x3" in one_line(e)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, out=np.ones((4, 3), "f4"))
    assert "out is 4x3" in one_line(e)


def test_bad_out(ab):
    a, b = ab
    frozen = np.zeros((4, 2), "f4")
    frozen.flags.writeable = False
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, out=frozen)
    assert "read-only" in one_line(e)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, beta=0.5)
    assert "needs C" in one_line(e)


def test_not_an_array(ab):
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(object(), ab[1])
    one_line(e)


def test_unknown_names(ab):
    a, b = ab
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, device="no-such-device")
    assert "no-such-device" in one_line(e)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, kernel="cpu.nope")
    assert "cpu.nope" in one_line(e)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, b, compute="fp7")
    assert "fp7" in one_line(e)
    with pytest.raises(kafel.InvalidArgument):
        kafel.Device("cuda:99")


def test_integer_gemm_refuses_fractional_alpha():
    a = np.ones((3, 3), "i4")
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, a, alpha=0.5)
    assert "alpha" in one_line(e)


def test_non_finite_scalars(ab):
    with pytest.raises(kafel.InvalidArgument):
        kafel.gemm(*ab, alpha=float("nan"))


def test_cov_errors():
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.cov(np.ones((3, 10)))  # float64 samples
    assert "float32" in one_line(e)
    with pytest.raises(kafel.InvalidArgument):
        kafel.cov(np.ones((3, 1), "f4"))  # N <= ddof
    with pytest.raises(kafel.InvalidArgument):
        kafel.cov(np.ones((2, 3, 4), "f4"))
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.cov(np.ones((3, 10), "f4"), layout="diagonal")
    assert "diagonal" in one_line(e)
    with pytest.raises(kafel.InvalidArgument):
        kafel.signal("seed", 0, 10)
    with pytest.raises(kafel.InvalidArgument):
        kafel.signal("sawtooth", 2, 10)


class FakeCudaArray:
    """Claims CUDA memory through __cuda_array_interface__ (never dereferenced here)."""

    def __init__(self, shape):
        self.shape = shape
        self.dtype = np.dtype("f4")

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": "<f4", "data": (0, False), "version": 3,
                "strides": None}


@pytest.mark.skipif(any(d.backend == "cuda" for d in kafel.devices()),
                    reason="a CUDA device is present (the fake array would be dereferenced)")
def test_cuda_arrays_without_a_cuda_device_are_refused():
    a = FakeCudaArray((4, 4))
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, a, out=FakeCudaArray((4, 4)))
    assert "cuda" in one_line(e)
    with pytest.raises(kafel.InvalidArgument) as e:
        kafel.gemm(a, np.ones((4, 4), "f4"))  # host and device memory mixed
    assert "different memories" in one_line(e)
