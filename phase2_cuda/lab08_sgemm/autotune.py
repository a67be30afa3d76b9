"""Lab 2.8's autotuner of rung 11 (--tune, on a GPU): the declared search space of tile configurations, and the
search that compiles, checks and times each one and keeps the fastest that is right on awkward shapes as well."""
from __future__ import annotations

import time

from common import arrays, bench, check, cli, device
from common.i18n import tr

from . import lab as L
from .lab import AsyncConfig, _async_available, make_inputs, peer_cublas, plan, reference, run, tolerance
from .sweep import _square_inputs

# The autotuner's declared search space (rung 11): block tile, k-depth, warp tile, thread tile, stages, blocks/SM.
# Every entry fits the shared memory of every GPU with cp.async (the largest takes 99,840 bytes; sm_80+ GPUs allow 99
# KiB a block and more: tests/test_phase2_lab08_sgemm_ladder.py checks each profile) and compiles without spills for
# sm_90 (checked too). Other architectures spill on a few (NVRTC 13.0: the BK = 32 entries on sm_80-sm_89, one 4-stage
# entry on sm_100, one 2-stage BK = 8 entry on sm_120): the tuner compiles each for the GPU at hand and leaves out
# those that spill there, with their spill bytes in its table. 28 entries keep --tune within its 60 s budget (each: a
# compile of about a second + ~20 timed calls at 4096^3).
TUNE_SPACE: tuple[AsyncConfig, ...] = (
    AsyncConfig(128, 128, 8, 64, 32, 8, 8, 2, 2),
    AsyncConfig(128, 128, 8, 64, 32, 8, 8, 3, 2),
    AsyncConfig(128, 128, 8, 64, 32, 8, 8, 4, 2),
    AsyncConfig(128, 128, 16, 64, 32, 8, 8, 2, 2),
    AsyncConfig(128, 128, 16, 64, 32, 8, 8, 3, 2),
    AsyncConfig(128, 128, 16, 64, 32, 8, 8, 4, 2),
    AsyncConfig(128, 128, 16, 32, 64, 8, 8, 3, 2),
    AsyncConfig(128, 128, 32, 64, 32, 8, 8, 2, 2),
    AsyncConfig(128, 128, 32, 64, 32, 8, 8, 3, 2),
    AsyncConfig(128, 256, 8, 64, 32, 8, 8, 3, 1),
    AsyncConfig(128, 256, 16, 64, 32, 8, 8, 3, 1),
    AsyncConfig(256, 128, 16, 64, 32, 8, 8, 3, 1),
    AsyncConfig(256, 128, 16, 32, 64, 8, 8, 3, 1),
    AsyncConfig(128, 64, 16, 32, 32, 8, 4, 3, 3),
    AsyncConfig(64, 128, 16, 32, 32, 4, 8, 3, 3),
    AsyncConfig(64, 64, 16, 32, 32, 8, 4, 4, 4),
    # 64 x 64 warp tiles, 128 accumulators a lane (16 x 8 or 8 x 16): twice the FFMAs per shared-memory load of the
    # 8 x 8 tiles above, at ~200 registers (one 256-thread block per SM, or two of 128). cuBLAS's SGEMM on the GPU
    # the course measured on runs a 256 x 128 x 8 tile with 4 x 2 warps, 3 stages (its kernel name says so; the
    # lesson has the profile): this shape of tile
    AsyncConfig(256, 128, 8, 64, 64, 16, 8, 3, 1),
    AsyncConfig(256, 128, 8, 64, 64, 8, 16, 3, 1),
    AsyncConfig(256, 128, 8, 64, 64, 16, 8, 4, 1),
    AsyncConfig(256, 128, 16, 64, 64, 16, 8, 3, 1),
    AsyncConfig(128, 256, 8, 64, 64, 8, 16, 3, 1),
    AsyncConfig(128, 128, 8, 64, 64, 16, 8, 4, 2),
    AsyncConfig(128, 128, 16, 64, 64, 16, 8, 3, 2),
    AsyncConfig(128, 128, 16, 64, 64, 8, 16, 3, 2),
    # fragments double-buffered in registers (DB = 1): the next k-step's shared-memory reads issued before this
    # step's FMAs, on the previous winner and on cuBLAS's tile shape
    AsyncConfig(128, 128, 16, 64, 32, 8, 8, 4, 2, 1),
    AsyncConfig(128, 128, 8, 64, 32, 8, 8, 4, 2, 1),
    AsyncConfig(256, 128, 8, 64, 64, 16, 8, 3, 1, 1),
    AsyncConfig(256, 128, 16, 64, 64, 16, 8, 3, 1, 1),
)


def autotune(n: int = 4096, budget_s: float = 60.0) -> tuple[list[dict], AsyncConfig | None]:
    """Compile, check and time every configuration of TUNE_SPACE at n^3 on this GPU; record the fastest correct one.

    Each configuration is checked against cuBLAS on the same product (relative error <= 1e-5) before it may win; one
    that spills registers on this GPU is left out (spills are never the answer). Stops early (and says so) when the
    time budget is spent.
    """
    import cupy

    ok, why = _async_available()
    if not ok:
        print(tr("--tune: {why}", why=why))
        return [], None
    limit = device.info().smem_per_block_optin
    space = [c for c in TUNE_SPACE if not c.problems(limit)]
    a, b, c = _square_inputs(n, 11)
    ref = peer_cublas(a, b)
    t_cublas = bench.bench(lambda: peer_cublas(a, b, out=c), warmup_ms=10, rep_ms=30, min_reps=3)
    flops = 2.0 * n ** 3
    rows, t_start = [], time.perf_counter()
    for cfg in cli.progress(space, tr("autotuning {count} tile configurations at {n}^3", count=len(space), n=n)):
        if time.perf_counter() - t_start > budget_s:
            rows.append({"config": cfg.short(), "result": tr("not tried: {s:.0f} s budget spent", s=budget_s)})
            continue
        t0 = time.perf_counter()
        row = {"config": cfg.short(), **cfg.defines, "threads": cfg.threads, "smem": cfg.smem_bytes}
        try:
            p = plan(cfg, n, n, n)
            kern = L._kernel(p.path, p.kernel, p.defines, p.smem)
            row["compile_s"] = round(time.perf_counter() - t0, 2)
            row["regs"] = int(kern.attributes.get("num_regs", 0))
            row["spill_bytes"] = int(kern.attributes.get("local_size_bytes", 0))
            if row["spill_bytes"]:
                row["result"] = tr("spills {b} B of local memory on this GPU: excluded", b=row["spill_bytes"])
                rows.append(row)
                continue
            c.fill(float("nan"))
            run(cfg, a, b, out=c)
            err = float(cupy.linalg.norm(c - ref) / cupy.linalg.norm(ref))
            row["rel_err_vs_cublas"] = err
            if not err <= 1e-5:
                row["result"] = tr("WRONG RESULT: excluded")
                rows.append(row)
                continue
            t = bench.bench(lambda: run(cfg, a, b, out=c), warmup_ms=5, rep_ms=30, min_reps=3)
            row.update(ms=t.median_ms, tflops=t.tflops(flops), vs_cublas=t_cublas.median_ms / t.median_ms,
                       spread=round(t.spread, 4), result="ok")
        except Exception as e:  # noqa: BLE001 - one bad configuration must not stop the search; it is reported
            row["result"] = tr("failed: {error}", error=f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
        rows.append(row)
    a = b = c = ref = None
    cupy.get_default_memory_pool().free_all_blocks()
    good = sorted((r for r in rows if r.get("result") == "ok"), key=lambda r: r["ms"])
    win, winner = None, None
    for r in good:                      # the fastest that is also right on edge tiles, K tails and N % 4 != 0
        cfg = AsyncConfig(**{k: r[k] for k in AsyncConfig().defines})
        bad = _edge_check(cfg)
        if bad:
            r["result"] = tr("fast but WRONG on {shape}: excluded", shape=bad)
            continue
        win, winner = r, cfg
        break
    if winner is None:
        return rows, None
    for r in rows:
        r["winner"] = r is win
    good = [r for r in good if r.get("result") == "ok"]
    print(tr("autotuner: {ok}/{n} configurations ok in {s:.1f} s; cuBLAS {cublas:.1f} TFLOP/s; winner {cfg} at "
             "{tflops:.1f} TFLOP/s ({x:.2f}x cuBLAS)", ok=len(good), n=len(space), s=time.perf_counter() - t_start,
             cublas=t_cublas.tflops(flops), cfg=winner.short(), tflops=win["tflops"], x=win["vs_cublas"]))
    return rows, winner


def _edge_check(cfg: AsyncConfig) -> str:
    """'' when the configuration matches float64 on a few awkward shapes (edges, K tail, N % 4, 1 x 1 x 1), else the
    first failing shape."""
    for i, shape in enumerate(((1, 1, 1), (127, 129, 131), (301, 200, 4), (257, 130, 37))):
        a, b = make_inputs(shape, "float32", check.rng(900 + i), "cuda")
        out = check.poisoned((shape[0], shape[1]), "float32", a)
        run(cfg, a, b, out=out)
        if not check.compare(out, reference(arrays.to_numpy(a), arrays.to_numpy(b)), "float32",
                             tolerance(shape, "float32")).ok:
            return "x".join(map(str, shape))
    return ""

