# kafel.cov (numpy.cov semantics, float64 result) and kafel.CovStream (blocks pushed one by
# one, the radar case) on any device, through kafel's C++ covariance kernels.
"""Covariance for Python arrays; see :func:`cov` and :class:`CovStream`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, List, Optional

import numpy as np

from . import _arrays, _kafel
from ._gemm import DeviceLike


def cov(x: Any, *, ddof: int = 1, layout: str = "planar", device: DeviceLike = None,
        kernel: Optional[str] = None) -> np.ndarray:
    """Covariance matrix of float32 samples, float64 result, as ``numpy.cov(x, ddof=ddof)``.

    layout 'planar': rows are channels (numpy.cov's default, x is channels x samples);
    'interleaved': columns are channels (numpy.cov(x, rowvar=False)). The memory order is read
    from the strides: C- and Fortran-ordered arrays and row or column slices are used in place;
    other strides are copied once. A 1-D x is one channel and gives a 0-d array, as in numpy.
    Only float32 samples are taken (convert with x.astype(numpy.float32)): kafel's kernels read
    float32 and accumulate in float64 around a per-channel pilot, so an offset mean does not
    cost accuracy. NaN in a channel makes its row and column NaN. kernel: e.g. 'cpu.fast'
    (Device.cov_kernels); device: as for kafel.gemm (None: $KAFEL_DEVICE, else the CPU).
    """
    x = _arrays.as_host_array(x)
    one_channel = getattr(x, "ndim", None) == 1
    if one_channel:
        x = np.asarray(x)[np.newaxis, :]
    result = _kafel.cov_host(x, ddof, layout, device, kernel or "")[0]
    return result[0, 0].copy() if one_channel else result


@dataclass
class CovStreamStats:
    """Latency statistics of the blocks a CovStream processed (milliseconds)."""

    blocks: int = 0
    latency_ms: List[float] = field(default_factory=list)
    cpp_ms: List[float] = field(default_factory=list)  # covariance()'s own total_ms per block
    kernel: str = ""
    median_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    missed: int = 0  # blocks whose latency exceeded the deadline
    blocks_per_s: float = 0.0


class CovStream:
    """Covariance of a stream of blocks of ``channels`` x ``samples`` float32 samples.

    ``push(block)`` computes the covariance of one block (float64, channels x channels) and
    records its latency: from the push to the result, the time a block arriving at ``rate``
    blocks per second has before the next one. ``stats`` summarises the latencies (median,
    p99, max, blocks missing ``deadline_ms``, throughput). Layout, device and kernel mean what
    they mean for :func:`cov`; the device plan is chosen once.
    """

    def __init__(self, channels: int, samples: int, *, device: DeviceLike = None,
                 rate: float = 20.0, deadline_ms: Optional[float] = None, ddof: int = 1,
                 layout: str = "planar", kernel: Optional[str] = None) -> None:
        if channels < 1 or samples <= ddof:
            raise _kafel.InvalidArgument(
                f"a CovStream needs channels >= 1 and samples > ddof (got {channels} x {samples},"
                f" ddof {ddof})")
        if rate < 0:
            raise _kafel.InvalidArgument(f"rate must be >= 0 blocks/s, got {rate}")
        self.channels, self.samples, self.rate = channels, samples, rate
        self.deadline_ms = deadline_ms if deadline_ms is not None else (
            1000.0 / rate if rate > 0 else float("inf"))
        self._ddof, self._layout, self._kernel = ddof, layout, kernel or ""
        self.device = device if isinstance(device, _kafel.Device) else _kafel.Device(device or "")
        self._latencies: List[float] = []
        self._cpp_ms: List[float] = []
        self._kernel_used = ""
        self._first: Optional[float] = None
        self._last: float = 0.0

    def push(self, block: Any) -> np.ndarray:
        """The covariance of one block (shape (channels, samples) for 'planar')."""
        shape = (self.channels, self.samples) if self._layout.startswith("planar") else (
            self.samples, self.channels)
        if tuple(getattr(block, "shape", ())) != shape:
            raise _kafel.InvalidArgument(
                f"block has shape {tuple(getattr(block, 'shape', ()))}, the stream takes {shape}")
        start = time.perf_counter()
        result, self._kernel_used, _, total_ms = _kafel.cov_host(
            block, self._ddof, self._layout, self.device, self._kernel)
        end = time.perf_counter()
        self._cpp_ms.append(total_ms)
        self._first = start if self._first is None else self._first
        self._last = end
        self._latencies.append((end - start) * 1e3)
        return result

    @property
    def stats(self) -> CovStreamStats:
        """Latency statistics over every block pushed so far."""
        lat = self._latencies
        if not lat:
            return CovStreamStats()
        wall = self._last - (self._first or self._last)
        return CovStreamStats(
            blocks=len(lat), latency_ms=list(lat), cpp_ms=list(self._cpp_ms),
            kernel=self._kernel_used, median_ms=float(np.median(lat)),
            p99_ms=float(np.quantile(lat, 0.99, method="inverted_cdf")), max_ms=max(lat),
            missed=sum(v > self.deadline_ms for v in lat),
            blocks_per_s=len(lat) / wall if wall > 0 else 0.0)
