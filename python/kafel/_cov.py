# kafel.cov (numpy.cov semantics, float64 result) and kafel.CovStream (blocks pushed one by
# one, the radar case) on any device, through kafel's C++ covariance kernels.
"""Covariance for Python arrays; see :func:`cov` and :class:`CovStream`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, List, Optional, Union

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
    cpp_ms: List[float] = field(default_factory=list)  # push(): covariance()'s own total_ms
    kernel: str = ""
    startup_ms: float = 0.0  # run(): plan, buffers, warm-up pass, before the first block
    wall_ms: float = 0.0  # run(): from the first block's clock to the last result
    median_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    missed: int = 0  # blocks whose latency exceeded the deadline
    blocks_per_s: float = 0.0


class CovStream:
    """Covariance of a stream of blocks of ``channels`` x ``samples`` float32 samples.

    The kernel is chosen once (as the CLI's ``kafel cov`` does). Two ways to feed it:

    - ``push(block)`` computes one block's covariance (float64, channels x channels) at once
      and records its latency, push to result; ``stats`` summarises the pushes.
    - ``run(source, blocks=None, on_result=None)`` runs a whole source through the C++ stream
      (``run_cov_stream``: ``depth`` blocks in flight where the backend streams, pinned buffers
      on GPUs): an iterable of arrays (each copied into the stream's buffer), or a signal name
      ('seed', 'random', 'offset') generated once into the buffers, the radar case. With
      ``rate`` > 0 block b arrives at b/rate and its latency runs from its arrival; a block
      misses when it exceeds ``deadline_ms`` (default 1000/rate). on_result(b, cov) is called
      for each block. Returns the C++ statistics.

    Layout, device and kernel mean what they mean for :func:`cov`.
    """

    def __init__(self, channels: int, samples: int, *, device: DeviceLike = None,
                 rate: float = 20.0, deadline_ms: Optional[float] = None, depth: int = 3,
                 ddof: int = 1, layout: str = "planar", kernel: Optional[str] = None) -> None:
        if rate < 0:
            raise _kafel.InvalidArgument(f"rate must be >= 0 blocks/s, got {rate}")
        self.channels, self.samples, self.rate = channels, samples, rate
        self.deadline_ms = deadline_ms if deadline_ms is not None else (
            1000.0 / rate if rate > 0 else 50.0)
        self._engine = _kafel.CovEngine(device, channels, samples, layout, ddof, kernel or "",
                                        depth, rate, self.deadline_ms)
        self._latencies: List[float] = []
        self._cpp_ms: List[float] = []
        self._first: Optional[float] = None
        self._last: float = 0.0

    @property
    def device(self) -> _kafel.Device:
        return self._engine.device

    @property
    def kernel(self) -> str:
        """The covariance kernel chosen for this stream."""
        return self._engine.kernel

    @property
    def config(self) -> str:
        """Its parameters and where they came from."""
        return self._engine.config

    def push(self, block: Any) -> np.ndarray:
        """The covariance of one block (shape (channels, samples) for 'planar')."""
        start = time.perf_counter()
        result, total_ms = self._engine.push(block)
        end = time.perf_counter()
        self._first = start if self._first is None else self._first
        self._last = end
        self._latencies.append((end - start) * 1e3)
        self._cpp_ms.append(total_ms)
        return result

    def run(self, source: Union[str, Iterable[Any]], blocks: Optional[int] = None,
            on_result: Optional[Callable[[int, np.ndarray], None]] = None) -> CovStreamStats:
        """Runs `blocks` blocks (None: until an iterable ends) through the C++ stream."""
        st = self._engine.run(source, -1 if blocks is None else blocks, on_result)
        return CovStreamStats(kernel=self.kernel, **st)

    @property
    def stats(self) -> CovStreamStats:
        """Latency statistics over every block pushed so far."""
        lat = self._latencies
        if not lat:
            return CovStreamStats(kernel=self.kernel)
        wall = self._last - (self._first or self._last)
        return CovStreamStats(
            blocks=len(lat), latency_ms=list(lat), cpp_ms=list(self._cpp_ms), kernel=self.kernel,
            median_ms=float(np.median(lat)),
            p99_ms=float(np.quantile(lat, 0.99, method="inverted_cdf")), max_ms=max(lat),
            missed=sum(v > self.deadline_ms for v in lat),
            blocks_per_s=len(lat) / wall if wall > 0 else 0.0)
