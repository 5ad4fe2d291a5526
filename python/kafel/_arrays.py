# Array kinds for kafel's Python API: host arrays (numpy and anything numpy can wrap) versus
# arrays in CUDA memory (torch, cupy, any DLPack or __cuda_array_interface__ producer).
"""How kafel recognises, hands over and allocates arrays of the caller's kind.

Host arrays go to the C++ binding as they are (buffer protocol / DLPack). Arrays in CUDA
memory are handed over as DLPack capsules taken on the stream the GEMM will run on (the
producer's current stream), or as raw tuples from ``__cuda_array_interface__``; results are
allocated by the producer's own library, so a torch tensor comes back as a torch tensor.
"""

from __future__ import annotations

import sys
from typing import Any, Optional, Tuple

import numpy as np

DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13


def framework(x: Any) -> str:
    """The top-level module of an array's type: 'numpy', 'torch', 'cupy', ..."""
    return type(x).__module__.split(".", 1)[0]


def cuda_device_of(x: Any) -> Optional[int]:
    """The CUDA ordinal holding x's data, or None for host memory."""
    if isinstance(x, np.ndarray):
        return None
    dlpack_device = getattr(x, "__dlpack_device__", None)
    if dlpack_device is not None:
        kind, index = dlpack_device()
        return int(index) if int(kind) in (DL_CUDA, DL_CUDA_MANAGED) else None
    cai = _cuda_array_interface(x)
    if cai is not None:
        return _cai_device(cai)
    return None


def as_host_array(x: Any) -> Any:
    """x itself when the binding can read it, else numpy's view or copy of it (lists ...)."""
    if isinstance(x, np.ndarray) or hasattr(x, "__dlpack__"):
        return x
    try:
        memoryview(x)
        return x
    except TypeError:
        return np.asarray(x)


def to_callers_kind(result: Any, like: Any) -> Any:
    """A host result (numpy or a DLPack-capable array) as the kind of ``like``."""
    fw = framework(like)
    if fw == "numpy":
        return result if isinstance(result, np.ndarray) else np.from_dlpack(result)
    module = sys.modules.get(fw)
    from_dlpack = getattr(module, "from_dlpack", None)
    if from_dlpack is None:
        return result
    return from_dlpack(result)


# ---- CUDA memory ------------------------------------------------------------------------------


def current_stream(like: Any, device_index: int) -> int:
    """The producer's current CUDA stream (cudaStream_t as int; 0 = the legacy default stream).

    kafel runs on it, so its GEMM is ordered with the caller's own work and needs no extra
    synchronisation: torch's current stream, cupy's current stream, else the legacy default.
    """
    fw = framework(like)
    if fw == "torch":
        import torch

        return int(torch.cuda.current_stream(device_index).cuda_stream)
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(device_index):
            return int(cupy.cuda.get_current_stream().ptr)
    cai = _cuda_array_interface(like)
    if cai is not None and cai.get("stream") not in (None, 1, 2):
        return int(cai["stream"])
    return 0


def device_handle(x: Any, stream: int) -> Any:
    """What the binding reads for a CUDA array: a DLPack capsule taken on ``stream``, else a
    raw (pointer, rows, cols, stride0, stride1, dtype, device) tuple from the CUDA array
    interface. Strides that map to no row- or column-major layout are made contiguous first,
    on the device, by the producer's own library."""
    if hasattr(x, "__dlpack__"):
        x = _mappable(x)
        # DLPack stream numbers: 1 is the legacy default stream (0 is not allowed).
        return x.__dlpack__(stream=stream if stream != 0 else 1)
    cai = _cuda_array_interface(x)
    if cai is None:
        raise TypeError(f"{type(x).__name__} is neither a DLPack nor a CUDA array interface array")
    return _raw_tuple(cai)


def empty_like_kind(like: Any, shape: Tuple[int, int], dtype_name: str) -> Any:
    """An uninitialised C-ordered array of the same library and device as ``like``."""
    fw = framework(like)
    if fw == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dtype_name), device=like.device)
    if fw == "cupy":
        import cupy

        with cupy.cuda.Device(cuda_device_of(like)):
            return cupy.empty(shape, dtype=dtype_name)
    raise TypeError(
        f"kafel cannot allocate a {type(like).__name__} result: pass out= (an array in the "
        "same CUDA memory)")


def copy_on_device(x: Any) -> Any:
    """A copy of a CUDA array made by its own library (torch clone / cupy copy)."""
    for method in ("clone", "copy"):
        if hasattr(x, method):
            return getattr(x, method)()
    raise TypeError(f"kafel cannot copy a {type(x).__name__}: pass out= holding C's values")


def _mappable(x: Any) -> Any:
    """x, or a contiguous device copy when its strides give no layout with a leading dim."""
    shape, strides = tuple(getattr(x, "shape", ())), _element_strides(x)
    if len(shape) != 2 or strides is None:
        return x
    rows, cols = shape
    s0, s1 = strides
    row_major = (s1 == 1 or cols <= 1) and (rows <= 1 or s0 >= max(cols, 1))
    col_major = (s0 == 1 or rows <= 1) and (cols <= 1 or s1 >= max(rows, 1))
    if row_major or col_major:
        return x
    if hasattr(x, "contiguous"):
        return x.contiguous()
    return sys.modules[framework(x)].ascontiguousarray(x)


def _element_strides(x: Any) -> Optional[Tuple[int, int]]:
    stride = getattr(x, "stride", None)
    if callable(stride):  # torch: strides in elements
        return tuple(stride())
    strides = getattr(x, "strides", None)
    itemsize = getattr(x, "itemsize", None) or getattr(getattr(x, "dtype", None), "itemsize", 0)
    if strides is None or not itemsize:
        return None
    return tuple(s // itemsize for s in strides)


def _cuda_array_interface(x: Any) -> Optional[dict]:
    try:
        return getattr(x, "__cuda_array_interface__", None)
    except (AttributeError, RuntimeError, TypeError):  # e.g. torch raises for CPU tensors
        return None


def _cai_device(cai: dict) -> int:
    """The CUDA ordinal of a __cuda_array_interface__ pointer (current device if unknown)."""
    try:
        from cuda.bindings import runtime  # type: ignore[import-not-found]

        err, attrs = runtime.cudaPointerGetAttributes(cai["data"][0])
        return int(attrs.device) if int(err) == 0 else 0
    except ImportError:
        return 0


_TYPESTR = {"<f4": "f32", "<f8": "f64", "<f2": "f16", "<i4": "i32", "|i1": "i8"}


def _raw_tuple(cai: dict) -> tuple:
    shape = tuple(cai["shape"])
    if len(shape) != 2:
        from . import InvalidArgument

        raise InvalidArgument(f"a CUDA array must be 2-D, got shape {shape}")
    typestr = cai["typestr"]
    if typestr not in _TYPESTR:
        from . import InvalidArgument

        raise InvalidArgument(f"CUDA array element type {typestr} is not one kafel takes")
    itemsize = int(typestr[2:])
    strides = cai.get("strides") or (shape[1] * itemsize, itemsize)
    return (int(cai["data"][0]), shape[0], shape[1], strides[0] // itemsize,
            strides[1] // itemsize, _TYPESTR[typestr], _cai_device(cai))
