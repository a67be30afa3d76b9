"""One timer for CUDA C kernels, Triton kernels and library peers.

On a GPU:
  * flush_l2=True (the default): `triton.testing.do_bench`, which writes a 256 MB buffer before every timed call so
    each call starts with a cold L2, and times each call with CUDA events;
  * flush_l2=False: `cupyx.profiler.benchmark`, the same events without the flush, so data that fits in L2 stays
    there between calls. Use it on purpose, to show the L2-resident regime (the vector-add size sweep does).
Both exclude warm-up, repeat until about `rep_ms` of GPU time has been spent, and report the median with the
20th/80th percentiles as the spread.
Without a GPU, `bench` times with the host clock and labels the result "wall (interpreter)"; such numbers say how
slow the interpreter is, nothing about a GPU.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from . import device


@dataclass(frozen=True)
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    min_ms: float
    n: int
    clock: str  # "cuda events (L2 flushed)", "cuda events (L2 warm)", "wall (interpreter)"

    @property
    def spread(self) -> float:
        """(p80 - p20) / median: a relative spread; a difference smaller than this between two variants is noise."""
        return (self.p80_ms - self.p20_ms) / self.median_ms if self.median_ms > 0 else 0.0

    def gbps(self, nbytes: float) -> float:
        return nbytes / (self.median_ms * 1e6)

    def tflops(self, flops: float) -> float:
        return flops / (self.median_ms * 1e9)


def _summary(times_ms: list[float], clock: str) -> Timing:
    ts = sorted(float(t) for t in times_ms)
    q = statistics.quantiles(ts, n=5) if len(ts) >= 2 else [ts[0]] * 4
    return Timing(median_ms=statistics.median(ts), p20_ms=q[0], p80_ms=q[3], min_ms=ts[0], n=len(ts), clock=clock)


def bench(fn, *, flush_l2: bool = True, warmup_ms: float = 25.0, rep_ms: float = 100.0, max_reps: int = 2000) -> Timing:
    """Time `fn()` (which launches GPU work) and return its Timing."""
    if not device.has_gpu():
        return _bench_wall(fn, rep_ms=rep_ms)
    if flush_l2:
        from triton.testing import do_bench

        # do_bench sizes its repeat count from a short estimate; cap the count so that sub-microsecond kernels
        # (dominated by the 256 MB flush between calls) do not take seconds each
        est = do_bench(fn, warmup=1, rep=5, return_mode="median")
        rep = min(rep_ms, max(est * max_reps, est))
        times = do_bench(fn, warmup=warmup_ms, rep=rep, return_mode="all")
        return _summary(times, "cuda events (L2 flushed)")
    import cupyx.profiler

    fn()  # compile / load outside the measurement
    t0 = time.perf_counter()
    fn()
    import cupy

    cupy.cuda.Device().synchronize()
    one = max(time.perf_counter() - t0, 1e-6)
    n_warm = max(1, min(1000, int(warmup_ms / 1e3 / one)))
    n_rep = max(10, min(max_reps, int(rep_ms / 1e3 / one)))
    res = cupyx.profiler.benchmark(fn, n_warmup=n_warm, n_repeat=n_rep)
    return _summary(list(res.gpu_times[0] * 1e3), "cuda events (L2 warm)")


def _bench_wall(fn, *, rep_ms: float, max_reps: int = 50) -> Timing:
    fn()
    times = []
    t_end = time.perf_counter() + rep_ms / 1e3
    while len(times) < 3 or (time.perf_counter() < t_end and len(times) < max_reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return _summary(times, "wall (interpreter)")
