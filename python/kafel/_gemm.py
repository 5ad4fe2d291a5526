# kafel.gemm and kafel.GemmPlan: C = alpha op(a) op(b) + beta c on host arrays (numpy) or on
# arrays in CUDA memory (torch, cupy) without copies, always through kafel's C++ library.
"""GEMM for Python arrays; see :func:`gemm` and :class:`GemmPlan`."""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from typing import Any, Optional, Union

from numpy import ndarray as _ndarray

from . import _arrays, _kafel
from ._kafel import Device

DeviceLike = Union[Device, str, None]


def gemm(a: Any, b: Any, c: Any = None, *, alpha: float = 1.0, beta: float = 0.0,
         trans_a: bool = False, trans_b: bool = False, device: DeviceLike = None,
         kernel: Optional[str] = None, compute: Optional[str] = None, out: Any = None,
         verify: bool = False) -> Any:
    """C = alpha * op(a) @ op(b) + beta * c, returned as an array of the caller's kind.

    a, b: 2-D arrays; op(x) is x, or x.T when trans_x. numpy (or anything numpy can read) in,
    numpy out; torch CUDA tensors in, a torch CUDA tensor out; cupy in, cupy out.
    c: C's input values (read when beta != 0); when None and beta != 0, ``out``'s current
    contents are C. out: the array to write (any writable array of the right shape and type;
    it may be c itself); None allocates a new C-ordered one.
    Element types: float32, float64, float16, int32, int8 (C int32), bfloat16 (arrays that
    have it, e.g. torch.bfloat16); a and b need the same type. compute: 'tf32', '3xtf32', 'f16',
    ... (default: the natural mode of a's type). kernel: a kernel name ('cpu.packed', see
    Device.kernels); None chooses as the C++ API does. device: a kafel.Device or a name; None is
    $KAFEL_DEVICE (else 'cpu') for host arrays and the arrays' own GPU for CUDA arrays.
    Layouts: any strides that give a row- or column-major view with a leading dimension are
    used in place (C- and Fortran-ordered arrays, slices of rows or columns, transposes);
    other strides (negative, zero, every other element) are copied once into a contiguous
    array (on the GPU, by the producer's own library). NaN and infinities propagate as IEEE
    arithmetic does. Host arrays with a GPU device are copied to it and back (the C++ gemm()
    path); arrays in CUDA memory never travel through the host, and a CUDA array with a
    non-CUDA device is an error, not a hidden copy. CUDA arrays: the GEMM is enqueued on the
    producer's current stream (torch.cuda.current_stream(), cupy's current stream) and the call
    returns without waiting, as torch.matmul does; work on that stream sees the result. The
    prepared GEMMs of the last few small CUDA problems are kept per thread, so a repeated call
    skips choosing the kernel (the choice is made at the first call of a shape; GemmPlan makes
    that explicit).
    verify: also check the result against the float64 reference as the CLI does (host arrays);
    raises kafel.VerificationError with the worst element when it fails.
    The GIL is released while the device works. Raises kafel.InvalidArgument (a ValueError)
    for bad shapes, types or names, kafel.Unsupported when the device cannot do it.
    """
    if _all_numpy(a, b, c, out):  # the common case, without the generic dispatch below
        return _kafel.gemm_host(a, b, c, out, alpha, beta, trans_a, trans_b, device, kernel or "",
                                compute, verify)
    gpu = _gpu_of(a, b, c, out)
    if gpu is None:
        result = _kafel.gemm_host(_arrays.as_host_array(a), _arrays.as_host_array(b),
                                  None if c is None else _arrays.as_host_array(c), out,
                                  alpha, beta, trans_a, trans_b, device, kernel or "", compute,
                                  verify)
        return result if out is not None else _arrays.to_callers_kind(result, a)
    if verify:
        raise _kafel.Unsupported("verify=True takes host arrays; check GPU results with "
                                 "kafel.gemm on host copies")
    device = device if device is not None else f"cuda:{gpu}"
    out = _device_output(a, b, c, out, beta, trans_a, trans_b, compute)
    stream = _arrays.current_stream(a, gpu)
    handles = (_handle(a, stream), _handle(b, stream), _handle(out, stream))
    key = _plan_key(a, b, out, alpha, beta, trans_a, trans_b, device, kernel, compute)
    if key is None:
        _kafel.gemm_device(*handles, alpha, beta, trans_a, trans_b, device, kernel or "", compute,
                           stream)
        return out
    plans = _recent_plans()
    plan = plans.pop(key, None)
    if plan is None:
        plan = _kafel.Plan(alpha, beta, trans_a, trans_b, device, kernel or "", compute, True)
    plan.run_device(*handles, stream)
    plans[key] = plan  # kept (as the newest) only once it has run: a failing GEMM is not
    if len(plans) > _RECENT_PLANS:
        plans.popitem(last=False)
    return out


class GemmPlan:
    """A GEMM prepared once and run many times on new operands of the same shape and type.

    ``plan = kafel.GemmPlan(a, b, c, alpha=..., beta=..., trans_a=..., trans_b=..., device=...,
    kernel=..., compute=...)`` takes example operands (their shapes, types and memory; the
    values are not read), chooses the kernel and its parameters and makes the device plan
    once; ``plan(a, b, c=None, out=None)`` then runs with the per-call cost of the binding
    alone, like nvmath-python's stateful Matmul. Arguments mean what they mean for
    :func:`gemm`. Operands of another layout (a Fortran-ordered array after C-ordered ones)
    are accepted and get a prepared GEMM of their own; another shape or type is an error.
    """

    def __init__(self, a: Any, b: Any, c: Any = None, *, alpha: float = 1.0, beta: float = 0.0,
                 trans_a: bool = False, trans_b: bool = False, device: DeviceLike = None,
                 kernel: Optional[str] = None, compute: Optional[str] = None) -> None:
        gpu = _gpu_of(a, b, c)
        if gpu is not None and device is None:
            device = f"cuda:{gpu}"
        self._gpu = gpu
        self._trans = (trans_a, trans_b)
        self._compute = compute
        self._beta = beta
        self._plan = _kafel.Plan(alpha, beta, trans_a, trans_b, device, kernel or "", compute,
                                 gpu is not None)
        self._c_types: dict = {}  # a's dtype -> the name of C's, for outputs made here

    def __call__(self, a: Any, b: Any, c: Any = None, *, out: Any = None) -> Any:
        """Runs the prepared GEMM on these operands; returns C as :func:`gemm` does.

        On the GPU one call resolves the operands' pointers (no copy), allocates C through the
        caller's library unless ``out`` is given, and enqueues the GEMM on the producer's current
        stream: no device allocation by kafel, no host synchronisation, no timing events.
        """
        if self._gpu is None:
            if _all_numpy(a, b, c, out):
                return self._plan.run_host(a, b, c, out)
            result = self._plan.run_host(a, b, c, out)
            return result if out is not None else _arrays.to_callers_kind(result, a)
        if out is None and c is None and self._beta == 0:
            out = self._new_output(a, b)
        else:
            out = _device_output(a, b, c, out, self._beta, *self._trans, self._compute)
        stream = _arrays.current_stream(a, self._gpu)
        self._plan.run_device(_handle(a, stream), _handle(b, stream), _handle(out, stream), stream)
        return out

    def _new_output(self, a: Any, b: Any) -> Any:
        """A new C for operands a, b, of the element type worked out once per type of a."""
        trans_a, trans_b = self._trans
        m = a.shape[1] if trans_a else a.shape[0]
        n = b.shape[0] if trans_b else b.shape[1]
        c_type = self._c_types.get(a.dtype)
        if c_type is None:
            c_type = _dtype_name_of(_kafel.result_dtype(_dtype_name(a), self._compute))
            self._c_types[a.dtype] = c_type
        return _arrays.empty_like_kind(a, (m, n), c_type)

    @property
    def device(self) -> Device:
        """The device the plan runs on."""
        return self._plan.device

    @property
    def kernel(self) -> str:
        """The kernel chosen at the first call ('' before it)."""
        return self._plan.kernel

    @property
    def config(self) -> str:
        """The kernel's parameters and where they came from ('' before the first call)."""
        return self._plan.config

    @property
    def last_report(self) -> _kafel.GemmReport:
        """Kernel and times (kernel_ms, total_ms) of the last call."""
        return self._plan.last_report

    def __repr__(self) -> str:
        return f"kafel.GemmPlan(device={self.device.id!r}, kernel={self.kernel!r})"


def _all_numpy(a: Any, b: Any, c: Any, out: Any) -> bool:
    return (type(a) is _ndarray and type(b) is _ndarray and (c is None or type(c) is _ndarray)
            and (out is None or type(out) is _ndarray))


# kafel.gemm on CUDA arrays keeps, per thread, the prepared GEMMs of its last few small problems:
# choosing the kernel and making its plan costs more than a small GEMM itself, and a caller who
# repeats a shape through kafel.gemm should not have to know about GemmPlan. Large problems are
# not kept (their choice is cheap next to the GEMM, and a plan may hold staging buffers of their
# size); per thread, because a plan is not to be run by two threads at once.
_RECENT_PLANS = 8
_RECENT_ELEMENTS = 1 << 22
_recent = threading.local()


def _forget_recent_plans() -> None:
    """Drops the calling thread's kept plans (run at exit for the main thread: its thread-local
    data outlives the interpreter's teardown, and nanobind reports the plans' objects as leaked)."""
    plans = getattr(_recent, "plans", None)
    if plans is not None:
        plans.clear()


atexit.register(_forget_recent_plans)


def _recent_plans() -> "OrderedDict[tuple, Any]":
    plans = getattr(_recent, "plans", None)
    if plans is None:
        plans = _recent.plans = OrderedDict()
    return plans


def _plan_key(a: Any, b: Any, out: Any, alpha: float, beta: float, trans_a: bool, trans_b: bool,
              device: Any, kernel: Optional[str], compute: Optional[str]) -> Optional[tuple]:
    """What makes two kafel.gemm calls the same prepared GEMM; None: not kept."""
    try:
        (m, k), (k2, n) = a.shape, b.shape
        if m * k + k2 * n + out.shape[0] * out.shape[1] > _RECENT_ELEMENTS:
            return None
        where = device if isinstance(device, str) else device.id
        return (tuple(a.shape), tuple(b.shape), a.dtype, b.dtype, out.dtype, float(alpha),
                float(beta), bool(trans_a), bool(trans_b), where, kernel or "", compute)
    except (AttributeError, TypeError, ValueError):  # not 2-D, no dtype ...: the uncached call
        return None


def _handle(x: Any, stream: int) -> Any:
    """What the binding reads for a CUDA array: its raw pointer tuple where that is enough (torch
    and cupy arrays of a plain layout, the per-call fast path), else a DLPack capsule / CAI tuple."""
    raw = _arrays.raw_operand(x)
    return raw if raw is not None else _arrays.device_handle(x, stream)


def _gpu_of(*arrays: Any) -> Optional[int]:
    """The CUDA ordinal of the arrays' memory, None for host memory; mixing them is an error."""
    places = {_arrays.cuda_device_of(x) for x in arrays if x is not None}
    if len(places) > 1:
        where = ", ".join("host" if p is None else f"cuda:{p}" for p in sorted(
            places, key=lambda p: -1 if p is None else p))
        raise _kafel.InvalidArgument(
            f"operands live in different memories ({where}); kafel copies nothing behind your "
            "back: move them to one device first")
    return places.pop() if places else None


def _device_output(a: Any, b: Any, c: Any, out: Any, beta: float, trans_a: bool, trans_b: bool,
                   compute: Optional[str]) -> Any:
    """The CUDA array C is written to: out, a device copy of c, or a new array of a's kind."""
    if out is not None:
        if c is not None and beta != 0 and out is not c:
            out[...] = c
        return out
    if c is not None and beta != 0:
        return _arrays.copy_on_device(c)
    if beta != 0:
        raise _kafel.InvalidArgument(f"beta = {beta} needs C: pass c, or out holding C's values")
    m = a.shape[1] if trans_a else a.shape[0]
    n = b.shape[0] if trans_b else b.shape[1]
    dtype = c.dtype if c is not None else _kafel.result_dtype(_dtype_name(a), compute)
    return _arrays.empty_like_kind(a, (m, n), _dtype_name_of(dtype))


def _dtype_name(x: Any) -> str:
    return _dtype_name_of(x.dtype)


def _dtype_name_of(dtype: Any) -> str:
    """'float32' for numpy/cupy dtypes and torch.float32 alike."""
    return str(dtype).rsplit(".", 1)[-1]
