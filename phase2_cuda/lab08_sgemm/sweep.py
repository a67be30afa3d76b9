"""Lab 2.8's timed runs on the GPU: every rung, Triton and the peers over square sizes, the best rung against cuBLAS
at the target sizes (interleaved rounds), the irregular and skinny shapes, and the peers' precision (no TF32)."""
from __future__ import annotations

from common import bench, check, cli, device, lab, report, target
from common.i18n import tr

from . import lab as L
from .lab import BEST, PEERS, RUNGS, VARIANTS, peer_cublas

SIZES = (1024, 2048, 3000, 4096, 4097, 8192)
TARGETS = {2048: 0.75, 4096: 0.92, 8192: 0.92}


def _square_inputs(n: int, seed: int):
    import cupy

    cupy.random.seed(seed)
    a = cupy.random.standard_normal((n, n), dtype=cupy.float32)
    b = cupy.random.standard_normal((n, n), dtype=cupy.float32)
    return a, b, cupy.empty((n, n), dtype=cupy.float32)


def _contenders(n: int) -> list[lab.Variant]:
    out = []
    for v in PEERS + VARIANTS:
        ok, _ = v.available()
        if not ok:
            continue
        if v.impl == "cuda" and not v.name.startswith(("cuda 10", "cuda 11")):
            if n > RUNGS[int(v.name.split()[1])].max_bench:
                continue
        out.append(v)
    return out


def sweep(sizes) -> list[dict]:
    """TFLOP/s of every rung, Triton and the peers at each square size (L2 flushed before each call)."""
    import cupy

    rows = []
    peak = device.info().datasheet.get("fp32_tflops")
    for n in cli.progress(sizes, "SGEMM sizes"):
        a, b, c = _square_inputs(n, n)
        flops, nbytes = 2.0 * n ** 3, 4.0 * 3 * n * n
        ref_ms = None
        for v in _contenders(n):
            t = bench.bench(lambda v=v: v.fn(a, b, out=c), warmup_ms=10, rep_ms=60, min_reps=5)
            if v.name == "cuBLAS (cupy)":
                ref_ms = t.median_ms
            rows.append(report.row(L.LAB, v.name, v.impl, (n, n, n), "float32", t, nbytes=nbytes, flops=flops,
                                   vs_cublas=(ref_ms / t.median_ms) if ref_ms else None,
                                   frac_peak=(t.tflops(flops) / peak) if peak else None))
        a = b = c = None
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def head_to_head(sizes, rounds: int = 5) -> list[target.Target]:
    """The lab's targets: the best rung against cuBLAS, interleaved rounds at each target size."""
    import cupy

    best = next(v for v in VARIANTS if v.name == BEST)
    ok, why = best.available()
    if not ok:
        print(tr("targets not measured: {best} {why}", best=BEST, why=tr(why)))
        return []
    out = []
    for n in cli.progress(sizes, "target sizes"):
        a, b, c = _square_inputs(n, n + 1)
        c2 = cupy.empty_like(c)
        ts, tries, steady = bench.steady({"cuBLAS": lambda: peer_cublas(a, b, out=c2),
                                          BEST: lambda: best.fn(a, b, out=c)},
                                         rounds=rounds, warmup_ms=10, rep_ms=60, min_reps=5)
        flops = 2.0 * n ** 3
        ratio = ts["cuBLAS"].median_ms / ts[BEST].median_ms
        out.append(target.versus(f"{n}^3", BEST, "cuBLAS (cupy)", ratio, steady=steady, at_least=TARGETS[n],
                                 detail={"tflops": ts[BEST].tflops(flops), "cublas_tflops": ts["cuBLAS"].tflops(flops),
                                         "spread": max(ts[BEST].spread, ts["cuBLAS"].spread), "rounds_run": tries}))
        a = b = c = c2 = None
        cupy.get_default_memory_pool().free_all_blocks()
    return out


# the shapes a user hits beyond squares: ragged in every dimension, tall-skinny, a long K with a tiny output, one row
IRREGULAR = [(8205, 2949, 5921), (32768, 32, 32), (256, 256, 65536), (1, 4096, 4096)]


def bench_irregular(rounds: int = 3) -> list[dict]:
    """The best rung on IRREGULAR shapes: checked on sampled rows against float64, timed against cuBLAS (a ratio, no
    target)."""
    import cupy

    best = next(v for v in VARIANTS if v.name == BEST)
    if not best.available()[0]:
        return []
    rows = []
    for m, n, k in cli.progress(IRREGULAR, "irregular shapes"):
        cupy.random.seed(m + n + k)
        a = cupy.random.standard_normal((m, k), dtype=cupy.float32)
        b = cupy.random.standard_normal((k, n), dtype=cupy.float32)
        c, c2 = cupy.full((m, n), cupy.nan, dtype=cupy.float32), cupy.empty((m, n), dtype=cupy.float32)
        best.fn(a, b, out=c)
        pick = cupy.asarray(sorted({0, m - 1, *check.rng(m).integers(0, m, 64).tolist()}))
        ref = a[pick].astype(cupy.float64) @ b.astype(cupy.float64)
        cmp = check.compare(c[pick].get(), ref.get(), "float32", L.tolerance((m, n, k), "float32"))
        ts, tries, steady = bench.steady({"cuBLAS": lambda: peer_cublas(a, b, out=c2),
                                          BEST: lambda: best.fn(a, b, out=c)}, rounds=rounds, warmup_ms=10,
                                         rep_ms=60, min_reps=5)
        flops = 2.0 * m * n * k
        rows.append({"shape": f"{m}x{n}x{k}", "variant": BEST, "ms": ts[BEST].median_ms,
                     "cublas_ms": ts["cuBLAS"].median_ms, "tflops": ts[BEST].tflops(flops),
                     "cublas_tflops": ts["cuBLAS"].tflops(flops),
                     "vs_cublas": ts["cuBLAS"].median_ms / ts[BEST].median_ms,
                     "spread": max(t.spread for t in ts.values()), "steady": steady,
                     "check": "ok" if cmp.ok else cmp.message})
        a = b = c = c2 = None
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def peer_precision(n: int = 1024) -> list[dict]:
    """The peers' relative error against float64 at n^3: fp32 lands near 1e-7..1e-6, TF32 near 1e-4..1e-3."""
    import cupy

    a, b, c = _square_inputs(n, 7)
    ref = cupy.matmul(a.astype(cupy.float64), b.astype(cupy.float64))
    rows = []
    for v in PEERS + [v for v in VARIANTS if v.name in (BEST, "triton (ieee fp32)")]:
        if not v.available()[0]:
            continue
        out = v.fn(a, b, out=c)
        err = float(cupy.linalg.norm(out.astype(cupy.float64) - ref) / cupy.linalg.norm(ref))
        rows.append({"variant": v.name, "rel_err_vs_fp64": err,
                     "verdict": "fp32" if err < 1e-5 else "NOT fp32 (TF32?)"})
    return rows

