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
        torch = sys.modules["torch"]
        # The raw handle without building a torch.cuda.Stream object (a few microseconds).
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return int(raw(device_index))
        return int(torch.cuda.current_stream(device_index).cuda_stream)
    if fw == "cupy":
        cupy = sys.modules["cupy"]
        try:
            return int(cupy.cuda.get_current_stream(device_index).ptr)
        except TypeError:  # a cupy whose get_current_stream takes no device
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
        torch = sys.modules["torch"]
        return like.new_empty(shape, dtype=getattr(torch, dtype_name))
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


def raw_operand(x: Any) -> Optional[tuple]:
    """The raw (pointer, rows, cols, stride0, stride1, dtype, device) tuple of a plain 2-D torch
    tensor or cupy array in CUDA memory whose layout kafel takes as it is, read from a few
    attributes; None for anything else (other libraries, autograd tensors, other layouts ...),
    which then takes the general DLPack path with its checks and messages.

    This is the per-call fast path of GemmPlan and gemm on the GPU: exporting a DLPack capsule
    costs torch several Python-level stream queries per array, which made the binding's overhead
    several times torch.matmul's. Reading the pointer is the same zero-copy hand-over: kafel
    runs on the producer's current stream, as the DLPack exchange would have arranged.
    """
    reader = _READERS.get(type(x), _UNKNOWN)
    if reader is _UNKNOWN:
        reader = _READERS[type(x)] = _reader_for(type(x))
    return reader(x) if reader is not None else None


_UNKNOWN = object()
_READERS: dict = {}  # array type -> its raw_operand reader, or None


def _reader_for(kind: type) -> Any:
    module = kind.__module__.split(".", 1)[0]
    if module == "torch" and kind is sys.modules["torch"].Tensor:
        return _torch_reader(sys.modules["torch"])
    if module == "cupy" and kind is sys.modules["cupy"].ndarray:
        return _cupy_reader()
    return None


def _takes_as_is(rows: int, cols: int, s0: int, s1: int) -> bool:
    """Row-major or column-major with a leading dimension (the common cases of strided_view)."""
    return (s1 == 1 and s0 >= cols) or (s0 == 1 and s1 >= rows)


_KAFEL_TYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int32": "i32", "int8": "i8", "float8_e4m3fn": "e4m3", "float8_e5m2": "e5m2"}


def _torch_reader(torch: Any) -> Any:
    types = {getattr(torch, n): k for n, k in _KAFEL_TYPES.items() if hasattr(torch, n)}
    strided = torch.strided

    def read(x: Any) -> Optional[tuple]:
        kind = types.get(x.dtype)
        if (kind is None or x.requires_grad or x.layout is not strided or x.is_neg()
                or x.dim() != 2):
            return None
        device = x.device
        if device.type != "cuda":
            return None
        rows, cols = x.shape
        s0, s1 = x.stride()
        if not _takes_as_is(rows, cols, s0, s1):
            return None
        return (x.data_ptr(), rows, cols, s0, s1, kind, device.index)

    return read


def _cupy_reader() -> Any:
    types = {np.dtype(n): k for n, k in _KAFEL_TYPES.items() if hasattr(np, n)}

    def read(x: Any) -> Optional[tuple]:
        kind = types.get(x.dtype)
        if kind is None or x.ndim != 2:
            return None
        size = x.itemsize
        rows, cols = x.shape
        b0, b1 = x.strides
        if b0 % size or b1 % size or not _takes_as_is(rows, cols, b0 // size, b1 // size):
            return None
        return (x.data.ptr, rows, cols, b0 // size, b1 // size, kind, x.device.id)

    return read


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
