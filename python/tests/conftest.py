# Shared fixtures of the kafel Python tests: the devices to run on (every host-visible device;
# CUDA ones only when a GPU is there) and random operands in every element type.
import numpy as np
import pytest

import kafel

# numpy names of the element types kafel takes from host arrays, with kafel's role names.
HOST_TYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "i32": "int32", "i8": "int8"}


def host_devices():
    """CPU and OpenCL devices (host arrays run there through the C++ gemm())."""
    return [d for d in kafel.devices() if d.backend in ("cpu", "opencl")]


# Parametrised by name: pytest keeps its parameters until exit, after the binding's teardown,
# where nanobind would report Device objects held there as leaked.
@pytest.fixture(params=[d.id for d in host_devices()])
def device(request):
    return kafel.Device(request.param)


def small_integers(rng, shape, dtype, order="C"):
    """Values exact in every type, so every kernel's result is exact too."""
    return np.asarray(rng.integers(-4, 5, size=shape), dtype=dtype, order=order)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)
