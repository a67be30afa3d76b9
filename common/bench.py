"""One timer for CUDA C kernels, Triton kernels and library peers.

How it measures (on a GPU): `fn` is called back to back, each call between two CUDA events on the current stream,
and the host waits only once at the end. So the GPU never idles waiting for Python between calls as long as a call
takes longer on the GPU than on the host; for tiny kernels the host is the bottleneck and the time shown is the real
per-call cost of launching from Python (that is the launch-bound regime, and it is worth seeing).
  * flush_l2=True (the default): before every call a buffer of twice the L2 size is overwritten, outside the
    events, so each call starts with a cold L2 (what triton.testing.do_bench does);
  * flush_l2=False: nothing between calls, so data that fits in L2 stays there. Use it on purpose, to show the
    L2-resident regime (the vector-add size sweep does).
Warm-up calls come first (compilation, autotuning, clock ramp-up stay out of the numbers); the repeat count targets
about `rep_ms` of GPU time. The result is the median with the 20th/80th percentiles as the spread.

graph=True removes the host from the picture: `calls` calls of fn are captured once into a CUDA graph (CuPy stream
capture, with torch and Triton pointed at the same stream), and the graph is replayed between events; the time per
call is the replay time divided by `calls`. Use it where a kernel takes less time on the GPU than a Python call takes
on the host (a few microseconds): small sizes of a sweep, where the ordinary timer measures Python, not the GPU.
If capture fails (a function that synchronizes, allocates or uses another stream), the ordinary timer is used and
the Timing's clock says why.

Why not cupyx.profiler.benchmark: it synchronizes after every call, so each call starts from an idle GPU and the
host's launch latency lands inside the events; on an H200 that understated a 1.6 GB vector add by 25%.

Without a GPU, `bench` times with the host clock and labels the result "wall (interpreter)"; such numbers say how
slow the interpreter is, nothing about a GPU.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
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


@functools.lru_cache(maxsize=1)
def _flush_buffer():
    import cupy

    nbytes = max(2 * device.info().l2_bytes, 64 * 2**20)
    return cupy.empty(nbytes // 4, dtype=cupy.int32)


def bench(fn, *, flush_l2: bool = True, warmup_ms: float = 25.0, rep_ms: float = 100.0, max_reps: int = 2000,
          min_reps: int = 10, graph: bool = False, calls: int = 100) -> Timing:
    """Time `fn()` (which launches GPU work on the current stream) and return its Timing."""
    if not device.has_gpu():
        return _bench_wall(fn, rep_ms=rep_ms)
    if graph:
        return _bench_graph(fn, calls=calls, rep_ms=rep_ms, max_reps=max_reps, min_reps=min_reps,
                            flush_l2=flush_l2, warmup_ms=warmup_ms)
    import cupy

    flush = _flush_buffer().fill if flush_l2 else (lambda _v: None)
    stream = cupy.cuda.get_current_stream()
    fn()
    stream.synchronize()
    # estimate one call, then size the warm-up and the repeat count from it
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    e0.record(stream)
    for _ in range(5):
        flush(0)
        fn()
    e1.record(stream)
    e1.synchronize()
    est = max(cupy.cuda.get_elapsed_time(e0, e1) / 5, 1e-4)
    for _ in range(max(1, min(1000, int(warmup_ms / est)))):
        flush(0)
        fn()
    times = _event_times(fn, stream, flush, max(min_reps, min(max_reps, int(rep_ms / est))))
    return _summary(times, "cuda events (L2 flushed)" if flush_l2 else "cuda events (L2 warm)")


def _event_times(call, stream, flush, n: int) -> list[float]:
    """n timed calls of `call` on `stream`, each after flush(0), each between two CUDA events: their times in ms."""
    import cupy

    starts = [cupy.cuda.Event() for _ in range(n)]
    ends = [cupy.cuda.Event() for _ in range(n)]
    for s, e in zip(starts, ends):
        flush(0)
        s.record(stream)
        call()
        e.record(stream)
    ends[-1].synchronize()
    return [cupy.cuda.get_elapsed_time(s, e) for s, e in zip(starts, ends)]


def _bench_graph(fn, *, calls: int, rep_ms: float, max_reps: int, min_reps: int, flush_l2: bool,
                 warmup_ms: float) -> Timing:
    import contextlib

    import cupy

    stream = cupy.cuda.Stream(non_blocking=True)
    try:
        import torch

        torch_stream = torch.cuda.stream(torch.cuda.ExternalStream(stream.ptr))
    except ImportError:  # pragma: no cover - torch is a dependency; without it only CuPy work is captured
        torch_stream = contextlib.nullcontext()
    graph = None
    why = ""
    with stream, torch_stream:
        fn()                      # compile, load, autotune: outside the capture
        stream.synchronize()
        try:
            stream.begin_capture()
            try:
                for _ in range(calls):
                    fn()
            finally:
                graph = stream.end_capture()
            graph.launch(stream)  # a graph that captured nothing, or the wrong stream, fails or does nothing here
            stream.synchronize()
        except Exception as e:  # noqa: BLE001 - any capture failure falls back to the ordinary timer
            graph, why = None, f"{type(e).__name__}: {str(e)[:80]}"
    if graph is None:
        t = bench(fn, flush_l2=flush_l2, warmup_ms=warmup_ms, rep_ms=rep_ms, max_reps=max_reps, min_reps=min_reps)
        return Timing(t.median_ms, t.p20_ms, t.p80_ms, t.min_ms, t.n, t.clock + f" (graph capture failed: {why})")
    flush = _flush_buffer().fill if flush_l2 else (lambda _v: None)
    e0, e1 = cupy.cuda.Event(), cupy.cuda.Event()
    with stream:
        e0.record(stream)
        graph.launch(stream)
        e1.record(stream)
        e1.synchronize()
        est = max(cupy.cuda.get_elapsed_time(e0, e1), 1e-4)          # one replay = `calls` calls
        for _ in range(max(1, min(100, int(warmup_ms / est)))):
            graph.launch(stream)
        n = max(min_reps, min(max_reps, int(rep_ms / est)))
        times = [t / calls for t in _event_times(lambda: graph.launch(stream), stream, flush, n)]
    label = "L2 flushed per replay" if flush_l2 else "L2 warm"
    return _summary(times, f"cuda graph of {calls} calls ({label})")


def interleaved(fns: dict, *, rounds: int = 5, **kw) -> dict[str, Timing]:
    """Time several functions in alternating rounds and pool their samples.

    For head-to-head ratios near 1.0: clocks and the memory system drift over seconds, and alternating the
    contenders spreads that drift evenly instead of favouring whichever ran in the quiet moment.
    """
    samples: dict[str, list[Timing]] = {k: [] for k in fns}
    for _ in range(rounds):
        for k, f in fns.items():
            samples[k].append(bench(f, **kw))
    return _pool(samples, f", {rounds} interleaved rounds")


MAX_SPREAD = 0.03   # a comparison quoted against a target: every contender's spread under this, or the rounds rerun


def _pool(samples: dict[str, list[Timing]], label: str) -> dict[str, Timing]:
    out = {}
    for k, ts in samples.items():
        out[k] = Timing(median_ms=statistics.median(t.median_ms for t in ts), p20_ms=min(t.p20_ms for t in ts),
                        p80_ms=max(t.p80_ms for t in ts), min_ms=min(t.min_ms for t in ts), n=sum(t.n for t in ts),
                        clock=ts[0].clock + label)
    return out


def steady(fns: dict, *, rounds: int = 5, max_spread: float = MAX_SPREAD, max_rounds: int | None = None,
           **kw) -> tuple[dict[str, Timing], int, bool]:
    """Interleaved rounds (as interleaved()), where a round in which any contender's own spread exceeds `max_spread`
    is repeated, not counted: measured until `rounds` steady rounds are in hand or `max_rounds` (3 x rounds) have run.

    Returns (timings pooled over the steady rounds, rounds run, steady). A ratio quoted against a target comes from
    `rounds` steady rounds; when fewer were steady, every round run is pooled and returned with steady=False, and the
    report says so rather than quoting it as met. (The pooled spread also contains the drift between rounds, so it
    can exceed max_spread even when every round was steady.)"""
    max_rounds = max_rounds or 3 * rounds
    kept: dict[str, list[Timing]] = {k: [] for k in fns}
    every: dict[str, list[Timing]] = {k: [] for k in fns}
    run = good = 0
    while good < rounds and run < max_rounds:
        run += 1
        this = {k: bench(f, **kw) for k, f in fns.items()}
        for k, t in this.items():
            every[k].append(t)
        if max(t.spread for t in this.values()) <= max_spread:
            good += 1
            for k, t in this.items():
                kept[k].append(t)
    if good >= rounds:
        return _pool(kept, f", {good} steady interleaved rounds of {run}"), run, True
    return _pool(every, f", {run} interleaved rounds, only {good} steady"), run, False


def _bench_wall(fn, *, rep_ms: float, max_reps: int = 50) -> Timing:
    fn()
    times = []
    t_end = time.perf_counter() + rep_ms / 1e3
    while len(times) < 3 or (time.perf_counter() < t_end and len(times) < max_reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return _summary(times, "wall (interpreter)")


def runs(fn, what: str) -> bool:
    """Call fn once; False (with a note) when it raises: an optional contender must not stop a benchmark."""
    try:
        fn()
        return True
    except Exception as e:  # noqa: BLE001
        from .i18n import tr

        print(tr("  ({what} skipped: {error})", what=what, error=f"{type(e).__name__}: {str(e)[:160]}"))
        return False


@contextlib.contextmanager
def torch_tf32(allowed: bool):
    """torch.backends.cuda.matmul.allow_tf32 set for the duration (cuBLAS SGEMM is true fp32 only with it off)."""
    import torch

    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


# ---------------------------------------------------------------------------------------------------------------------
# Measured ceilings
# ---------------------------------------------------------------------------------------------------------------------
def _cache_path() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpu-kernel-course", "ceilings.json")


def _cache_key() -> str:
    d = device.info()
    import cupy

    return f"{d.name}|{d.arch}|{d.driver_cuda}|cupy {cupy.__version__}"


def measure_hbm_bandwidth(nbytes: int = device.GiB) -> dict:
    """Best of three large streaming kernels (CuPy copy, torch copy, torch add), GB/s counting reads + writes.

    `nbytes` is the size of one array; it is shrunk to fit in a quarter of the free memory. It must be many times the
    L2 so that every byte really comes from HBM.
    """
    device.require_gpu("measuring HBM bandwidth")
    import cupy

    free, _ = cupy.cuda.runtime.memGetInfo()
    nbytes = int(min(nbytes, free // 4)) // 16 * 16
    n = nbytes // 4
    a = cupy.random.random(n, dtype=cupy.float32)
    b = cupy.random.random(n, dtype=cupy.float32)
    c = cupy.empty_like(a)
    results = {}
    results["cupy copy"] = 2 * nbytes / (bench(lambda: cupy.copyto(c, a)).median_ms * 1e6)
    try:
        import torch

        ta, tb, tc = (torch.from_dlpack(x) for x in (a, b, c))
        results["torch copy_"] = 2 * nbytes / (bench(lambda: tc.copy_(ta)).median_ms * 1e6)
        results["torch add"] = 3 * nbytes / (bench(lambda: torch.add(ta, tb, out=tc)).median_ms * 1e6)
    except ImportError:
        pass
    best = max(results, key=results.get)
    a = b = c = None
    return {"hbm_gbps": results[best], "hbm_method": best, "hbm_array_bytes": nbytes, "all": results}


def ceilings(refresh: bool = False) -> dict:
    """Measured ceilings of the GPU at hand, cached per device in ~/.cache/gpu-kernel-course/ceilings.json.

    Returns {'hbm_gbps', 'hbm_method', 'datasheet': {...}, ...}. Set refresh=True to measure again.
    """
    device.require_gpu("measuring ceilings")
    path = _cache_path()
    key = _cache_key()
    cache = {}
    if os.path.exists(path):
        try:
            with open(path) as f:
                cache = json.load(f)
        except (OSError, ValueError):
            cache = {}
    if refresh or key not in cache:
        cache[key] = measure_hbm_bandwidth()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            json.dump(cache, f, indent=1)
    out = dict(cache[key])
    out["datasheet"] = device.info().datasheet
    return out
