# The kafel Python package: fast, verified GEMM and covariance from numpy, torch and cupy,
# built on kafel's C++ library (the nanobind module _kafel) — no second implementation.
"""kafel: fast, verified GEMM and covariance on CPUs, OpenCL devices and NVIDIA GPUs.

>>> import kafel, numpy as np
>>> a, b = np.random.rand(300, 200).astype("f4"), np.random.rand(200, 100).astype("f4")
>>> c = kafel.gemm(a, b)                          # numpy in, numpy out
>>> s = kafel.cov(kafel.signal("seed", 10, 4096))  # numpy.cov semantics, float64

Devices are named as in C++ and the CLI: 'cpu', 'opencl:0:0', 'cuda:0' ($KAFEL_DEVICE sets the
default). Errors are kafel.Error subclasses with kafel's one-line messages. ``python -m kafel``
runs the kafel command-line tool.
"""

from __future__ import annotations

from . import _kafel
from ._cov import CovStream, CovStreamStats, cov
from ._gemm import GemmPlan, gemm
from ._kafel import (BuildError, Device, DeviceError, Error, GemmReport, InvalidArgument, IoError,
                     OutOfMemory, Unsupported, VerificationError, best_device, devices,
                     reference_cov, signal)

__version__: str = _kafel.__version__
with_cuda: bool = _kafel.with_cuda  # this build has the CUDA backend
with_opencl: bool = _kafel.with_opencl  # this build has the OpenCL backend

__all__ = [
    "BuildError", "CovStream", "CovStreamStats", "Device", "DeviceError", "Error", "GemmPlan",
    "GemmReport", "InvalidArgument", "IoError", "OutOfMemory", "Unsupported",
    "VerificationError", "__version__", "best_device", "cov", "devices", "gemm", "reference_cov",
    "signal", "with_cuda", "with_opencl",
]
