"""Lab 2.8's measuring side: what the compiler made of each rung (registers, occupancy, the SASS census), the sweep of
every rung and peer over square sizes, the targets against cuBLAS in interleaved rounds, the peers' precision (no
TF32), the autotuner of rung 11 (--tune) over a declared space, and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import os
import time

from common import arrays, bench, check, cli, cuda, device, lab, report, tuned
from common import occupancy as occupancy_calc
from common import config
from common import plan as course_plan
from common.i18n import in_english, korean, tr

from . import lab as L
from .lab import (ASYNC_ARCHS, ASYNC_DEFAULT, BEST, CU_ASYNC, PEERS, RUNGS, TUNED, VARIANTS, AsyncConfig, _ai,
                  _async_available, make_inputs, peer_cublas, plan, reference, run, tolerance, tuned_config)

SIZES = (1024, 2048, 3000, 4096, 4097, 8192)
TARGETS = {2048: 0.75, 4096: 0.92, 8192: 0.92}
CPU_NOTE = ("\nCUDA C rungs were compiled, not run (no GPU); the Triton kernel ran in the interpreter. Nothing was "
            "timed.")

# The autotuner's declared search space (rung 11): block tile, k-depth, warp tile, thread tile, stages, blocks/SM.
# Every entry fits the shared memory of every GPU with cp.async (the largest takes 99,840 bytes; sm_80+ GPUs allow 99
# KiB a block and more: tests/test_phase2_lab08_sgemm.py checks each profile) and compiles without spills for sm_90
# (checked too). Other architectures spill on a few (NVRTC 13.0: the BK = 32 entries on sm_80-sm_89, one 4-stage
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


def add_arguments(p) -> None:
    cli.add_size(p, tr("benchmark this one square size instead of the sweep 1024..8192"))
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) autotune rung 11's tile configuration at 4096^3 and record the winner in "
                           "results/<gpu>/{name}.json (~60 s); the next run measures rung 11 with it", name=TUNED))


def explain(args) -> None:
    """Which tile configuration rung 11 uses here, or would use on the GPU --arch / --gpu describes (and, on a GPU,
    CuPy's float32 matmul compute type)."""
    gpu = device.current(args.arch)
    if not device.has_gpu():
        ok, why = _async_available(gpu)
        cfg, src = tuned_config(gpu=gpu)
        print(tr("rung 11 would use {cfg} on {gpu} [{src}]", cfg=cfg.short(), gpu=gpu.label(),
                 src=config.say_source(src)) + ("" if ok else tr(" - but {why}", why=why)))
        return
    cfg, src = tuned_config()
    print(tr("rung 11 uses {cfg} [{src}]", cfg=cfg.short(), src=config.say_source(src)))
    print(tr("CuPy float32 matmul compute type: {kind} (CUPY_TF32={env})", kind=L._cupy_compute_type(),
             env=os.environ.get("CUPY_TF32", tr("unset"))))


def compile_report(args) -> None:
    show_compile_reports(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# Resources and occupancy (from the compiler, no GPU needed)
# ---------------------------------------------------------------------------------------------------------------------
def occupancy(arch: str, threads: int, regs: int, smem: int) -> tuple[int, str]:
    """(blocks per SM, what limits it) by common.occupancy, for `smem` bytes of shared memory per block (static +
    dynamic; the wrapper raises a kernel's dynamic limit to what its launch needs)."""
    a = device.arch_info(arch)
    o = occupancy_calc.occupancy(arch, threads, regs, 0, smem,
                                 max_dynamic_smem=min(max(smem, a.smem_per_block_default), a.smem_per_block_optin))
    return o.blocks_per_sm, "+".join(o.limiters) or min(o.limits, key=o.limits.get)


def _launch_of(v_name: str, gpu: device.DeviceInfo):
    """(Launch, label) of a CUDA variant for a 4096^3 product; rung 11 with the configuration it gets on `gpu`."""
    if v_name.startswith("cuda 10"):
        return plan(ASYNC_DEFAULT, 4096, 4096, 4096), ASYNC_DEFAULT.short()
    if v_name.startswith("cuda 11"):
        cfg, src = tuned_config(gpu=gpu)
        return plan(cfg, 4096, 4096, 4096), f"{cfg.short()} [{src}]"
    num = int(v_name.split()[1])
    return plan(num, 4096, 4096, 4096), ""


def resource_rows(arch: str, gpu: device.DeviceInfo | None = None) -> list[dict]:
    """Registers, shared memory, spills, occupancy and SASS census of every rung, compiled with NVRTC for `arch`;
    rung 11 with the tile configuration it gets on `gpu` (default: the GPU at hand, or without one the GPU `arch`
    stands for, or --gpu's)."""
    gpu = gpu or device.current(arch)
    rows = []
    for v in VARIANTS:
        if v.impl != "cuda":
            continue
        p, label = _launch_of(v.name, gpu)
        if p.path == CU_ASYNC and not lab.arch_matches(arch, ASYNC_ARCHS):
            rows.append({"rung": v.name, "note": tr("needs sm_80+ (cp.async); not compiled for {arch}", arch=arch)})
            continue
        rep = cuda.compile_report(p.path, arch, defines=dict(p.defines))
        k = rep[p.kernel]
        threads = p.block[0] * p.block[1] * p.block[2]
        smem = k.smem_bytes + p.smem
        try:
            blocks, limiter = occupancy(arch, threads, k.registers, smem)
        except ValueError:                          # an architecture the course's table does not describe
            blocks, limiter = 0, "?"
        c = _executed_census(k.sass)
        r = RUNGS.get(int(v.name.split()[1]))
        cfg = dict(p.defines)
        ai = r.tile_flop_per_byte if r else _ai(cfg["BM"], cfg["BN"])
        fpw = r.fma_per_smem_word if r else cfg["TM"] * cfg["TN"] / (cfg["TM"] + cfg["TN"])
        rows.append({
            "rung": v.name, "threads": threads, "regs": k.registers, "smem": smem, "spills": k.spills,
            "blocks/SM": blocks, "warps/SM": blocks * threads // 32, "limit": limiter,
            "tile FLOP/B": round(ai, 2), "FMA/smem word": round(fpw, 2) if fpw else "-",
            "LDG.128": c.get("LDG.128", 0), "LDS": sum(v for key, v in c.items() if key.startswith("LDS.")),
            "LDS.128": c.get("LDS.128", 0), "LDGSTS": c.get("LDGSTS", 0), "FFMA": c.get("FFMA", 0), "note": label,
        })
    return rows


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu`, from its description: the floor of the headline product (2 n^3 FLOPs over
    the datasheet fp32 peak, against the bytes over the bandwidth), where 683 FLOP/B sits against the ridge point,
    and for the best rungs that run there their blocks per SM (registers and shared memory compiled for the GPU's
    architecture, the occupancy calculator) and the waves of tiles over its SMs."""
    n, _ = course_plan.fit(L.BENCH_N, L.bench_bytes, gpu)
    flops, nbytes = 2.0 * n ** 3, 4.0 * 3 * n * n
    bw = gpu.hbm_gbps
    out = {tr("bytes at {n}^3 over {bw:.0f} GB/s", n=n, bw=bw): f"{nbytes / (bw * 1e9) * 1e3:.3f} ms"}
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e3 / bw
        out[tr("floor at {n}^3 (2 n^3 FLOPs / the {peak:g} TFLOP/s fp32 peak)", n=n, peak=fp32)] = \
            f"{flops / (fp32 * 1e12) * 1e3:.2f} ms"
        out[tr("fp32 ridge point (datasheet FLOP/s over bandwidth)")] = tr(
            "{ridge:.1f} FLOP/B: {n}^3's {ai:.0f} FLOP/B is {x:.0f}x above", ridge=ridge, n=n, ai=flops / nbytes,
            x=flops / nbytes / ridge)
        t = TARGETS.get(n, 0.9)
        out[tr("cuBLAS at ~70-75% of the peak; the {t:.2f}x target at {n}^3", t=t, n=n)] = (
            f"{0.70 * fp32:.1f}-{0.75 * fp32:.1f} TFLOP/s; {t * 0.70 * fp32:.1f}-{t * 0.75 * fp32:.1f} TFLOP/s")
    best = [(RUNGS[9].name, plan(9, n, n, n), "")]
    ok, why = _async_available(gpu)
    if ok:
        cfg, src = tuned_config(gpu=gpu)
        best.append((f"cuda 11 autotuned ({cfg.short()})", plan(cfg, n, n, n), src))
    else:
        out[tr("cuda 10-11 (cp.async)")] = tr("not here: {why}", why=why)
    for name, p, src in best:
        regs, smem = cuda.resources(p.path, p.kernel, gpu, defines=dict(p.defines))
        threads = p.block[0] * p.block[1] * p.block[2]
        blocks, limiter = occupancy(gpu.arch, threads, regs, smem + p.smem)
        tiles = p.grid[0] * p.grid[1]
        waves = tiles / max(1, gpu.sms * blocks)
        out[tr("{name}: blocks per SM, waves at {n}^3", name=name, n=n)] = tr(
            "{blocks} of {threads} threads x {regs} registers, {kib:.1f} KiB (limit: {limit}); {tiles} tiles / ({sms} "
            "SMs x {blocks}) = {waves:.2f} waves", blocks=blocks, threads=threads, regs=regs,
            kib=(smem + p.smem) / 1024, limit=_limits(limiter), tiles=tiles, sms=gpu.sms, waves=waves) + \
            (f" [{config.say_source(src)}]" if src else "")
    meta = L.triton_config(gpu)
    out[tr("triton tiles here")] = tr("{bm} x {bn} x {bk}, {stages} stages ({kib} KiB of shared memory a block)",
                                      bm=meta["BLOCK_M"], bn=meta["BLOCK_N"], bk=meta["BLOCK_K"],
                                      stages=meta["num_stages"], kib=gpu.smem_per_block_optin // 1024)
    return out


def _limits(limiter: str) -> str:
    """What limits the blocks per SM ("registers+shared memory"), each part in the chosen language."""
    return "+".join(tr(x) for x in limiter.split("+"))


def _executed_census(sass: list[str]) -> dict[str, int]:
    """SASS census without the never-executed (@!PT) padding ptxas places around cp.async."""
    return cuda.sass_census([ln for ln in sass if not ln.startswith("@!PT")])


def show_compile_reports(arch: str) -> list[dict]:
    rows = resource_rows(arch)
    cols = ["rung", "threads", "regs", "smem", "spills", "blocks/SM", "warps/SM", "limit", "tile FLOP/B",
            "FMA/smem word", "LDG.128", "LDS", "LDS.128", "LDGSTS", "FFMA"]
    said = rows if not korean() else [dict(r, limit=_limits(r["limit"])) if "limit" in r else r for r in rows]
    report.print_table(said, cols, title=tr("What the compiler made of each rung (NVRTC {version}, {arch}; smem = "
                                            "static + dynamic bytes per block; occupancy from the allocation rules)",
                                            version=cuda.nvrtc_version(), arch=arch))
    for r in rows:
        if r.get("note"):
            print(f"  {r['rung']}: {_said_note(r['note'])}")
    print(tr("  Read it as: FFMA per LDS is the register blocking at work (rungs 03-05: ptxas already merged loads "
             "that\n  are contiguous in k into LDS.128); LDG.128 appears from rung 06 (the float4 path, its scalar "
             "fallback\n  beside it); LDGSTS is cp.async (rungs 10-11). Counts are static instructions of the whole "
             "kernel, not\n  per k-step; never-executed '@!PT LDS' slots that ptxas puts after cp.async are left out."))
    return rows


def _said_note(note: str) -> str:
    """A resource row's note as printed: rung 11's configuration with its source in the chosen language."""
    if note.endswith("]") and " [" in note:
        cfg, _, src = note[:-1].rpartition(" [")
        return f"{cfg} [{config.say_source(src)}]"
    return note


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
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
        del a, b, c
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def head_to_head(sizes, rounds: int = 5) -> list[dict]:
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
        out.append({"size": f"{n}^3", "variant": BEST, "tflops": ts[BEST].tflops(flops),
                    "cublas_tflops": ts["cuBLAS"].tflops(flops), "vs_cublas": ratio, "target": f">= {TARGETS[n]:.2f}",
                    "met": ratio >= TARGETS[n] and steady, "spread": max(ts[BEST].spread, ts["cuBLAS"].spread),
                    "steady": steady, "rounds_run": tries})
        del a, b, c, c2
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
        del a, b, c, c2
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


def benchmark(ctx) -> lab.Result:
    """The peers' precision, the sweep over square sizes, the targets at the target sizes."""
    cfg, src = tuned_config()
    prec = peer_precision()
    sizes = [ctx.args.size] if ctx.args.size else ([1024, 2048] if ctx.quick else list(SIZES))
    top, note = course_plan.fit(max(sizes), L.bench_bytes, device.info())
    if note:
        print(tr(note))
        sizes = [s for s in sizes if s <= top] or [top]
    print(tr("benchmark: rungs 01-03 run up to 2048^3 and 04-05 up to 4097^3 (at 8192^3 they would take seconds per "
             "call); the rest at every size"))
    rows = sweep(sizes)
    tg = head_to_head([s for s in sizes if s in TARGETS])
    tables = [([dict(r, verdict=tr(r["verdict"])) for r in prec], None,
               "TF32 check: relative error against float64 at 1024^3")]
    tables += [([r for r in rows if r["shape"][0] == n], ["variant", "impl", "ms", "tflops", "vs_cublas", "frac_peak",
                                                          "spread"],
                tr("SGEMM {n}^3 (fp32, L2 flushed; vs_cublas = cuBLAS time / this time)", n=n)) for n in sizes]
    irregular = [] if ctx.quick or ctx.args.size else bench_irregular()
    if irregular:
        tables.append(([_said(r, "check", "steady") for r in irregular], None,
                       "irregular and skinny shapes: best rung vs cuBLAS (checked on sampled rows; a ratio, no "
                       "target)"))
    if tg:
        tables.append(([_said(r, "met", "steady") for r in tg], None,
                       "targets: best rung vs cuBLAS SGEMM (interleaved rounds, same run)"))
    return lab.Result(rows=rows, tables=tables, ok=all(r["check"] == "ok" for r in irregular),
                      meta=dict(targets=tg, irregular=irregular, peer_precision=prec,
                                resources=in_english(resource_rows, ctx.args.arch),
                                rung11_config=cfg.defines, rung11_source=src,
                                cupy_compute_type=L._cupy_compute_type(), device=device.info().as_dict()))


def _said(row: dict, *keys: str) -> dict:
    """A row as printed: in Korean, its booleans (and an "ok" check) translated; the JSON keeps them as they are."""
    if not korean():
        return row
    out = dict(row)
    for k in keys:
        v = row.get(k)
        out[k] = (tr("yes") if v else tr("no")) if isinstance(v, bool) else tr(v) if v == "ok" else v
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Autotuner (GPU): rung 11
# ---------------------------------------------------------------------------------------------------------------------
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
    del a, b, c, ref
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


def tune(ctx) -> lab.Result:
    """--tune: the autotuner's table, and the winner recorded as results/<gpu>/phase2_lab08_sgemm_tuned.json (where
    rung 11 reads it; with --out, there instead). Nothing is recorded when no configuration passes its checks."""
    rows, winner = autotune()
    tables = [([_said(r, "result") for r in rows],
               ["config", "regs", "smem", "compile_s", "tflops", "vs_cublas", "spread", "result"],
               "autotuner: rung 10's kernel over the declared space")] if rows else []
    tuned.forget()
    if winner is None:
        return lab.Result(rows=rows, tables=tables, name=TUNED + "_failed", ok=False)
    print(tr("winner: {cfg} (the next run measures rung 11 with it)", cfg=winner.short()))
    return lab.Result(rows=rows, tables=tables, name=TUNED,
                      meta=dict(winner=winner.defines, size=4096, arch=device.info().arch))


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


# ---------------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------------
def left_out(rows: list[dict], names: list[str] | None = None) -> list[tuple[list[str], list[int]]]:
    """Which contenders were not run at which of the sizes the sweep measured: [(variants, sizes missing)], variants
    that miss the same sizes together, in ladder order (the slow early rungs stop at a size: RUNGS[n].max_bench)."""
    sizes = sorted({r["shape"][0] for r in rows})
    names = names or list(dict.fromkeys(r["variant"] for r in rows))
    by: dict = {}
    for name in names:
        have = {r["shape"][0] for r in rows if r["variant"] == name}
        if have and len(have) < len(sizes):
            by.setdefault(tuple(s for s in sizes if s not in have), []).append(name)
    return [(v, list(k)) for k, v in by.items()]


def _rung_list(names: list[str]) -> str:
    """'cuda 01 naive, cuda 02 coalesced, cuda 03 shared-memory tiling' -> 'cuda 01-03 (naive, coalesced, shared-memory
    tiling)' where the names are consecutive rungs."""
    nums = [int(n.split()[1]) for n in names if n.startswith("cuda ") and n.split()[1].isdigit()]
    if len(nums) == len(names) and len(nums) > 1 and nums == list(range(nums[0], nums[0] + len(nums))):
        return f"cuda {nums[0]:02d}-{nums[-1]:02d} ({', '.join(n.split(' ', 2)[2] for n in names)})"
    return ", ".join(names)


def _sizes_text(sizes: list[int]) -> str:
    """'8192', '4097 and 8192', '3000, 4096, 4097 and 8192'."""
    s = [str(x) for x in sizes]
    if korean():
        return ", ".join(s)
    return s[0] if len(s) == 1 else ", ".join(s[:-1]) + " and " + s[-1]


def plot(data: dict, out_dir: str) -> list[str]:
    """The sweep over sizes (<LAB>.png: sizes evenly spaced, so 4096 and 4097 get a tick each) and the ladder at 4096
    (<LAB>_ladder.png: every rung, the ones not run at that size marked). A footnote on each says which rungs were
    left out at which sizes."""
    rows, gpu = data["rows"], data.get("gpu", "GPU")
    peak = data.get("device", {}).get("datasheet", {}).get("fp32_tflops")
    sizes = sorted({r["shape"][0] for r in rows})
    names = list(dict.fromkeys([v.name for v in VARIANTS + PEERS] + [r["variant"] for r in rows]))
    series = {}
    for name in names:
        by = {r["shape"][0]: r["tflops"] for r in rows if r["variant"] == name}
        if by:
            series[name] = [by.get(s) for s in sizes]
    # the CUDA C rungs dark to bright in ladder order, Triton dashed orange, the libraries black / gray
    import matplotlib

    rungs = [n for n in series if n.startswith("cuda ")]
    cmap = matplotlib.colormaps["viridis"]
    styles = {n: {"color": cmap(i / max(len(rungs) - 1, 1) * 0.92)} for i, n in enumerate(rungs)}
    peer_styles = [{"color": "black", "ls": "--", "marker": "s"}, {"color": "gray", "ls": ":", "marker": "D"}]
    for n in series:
        if n not in styles:
            impl = next((r["impl"] for r in rows if r["variant"] == n), "")
            styles[n] = ({"color": "tab:orange", "ls": "--", "marker": "^"} if impl == "triton"
                         else peer_styles.pop(0) if impl == "peer" and peer_styles else {"color": "tab:red"})
    tile = (data.get("rung11_config") or {}).get("BM") or 128
    ragged = [s for s in sizes if s % tile]
    gaps = left_out(rows, names)
    foot = [tr("left out at {sizes} (too slow there): {rungs}", sizes=_sizes_text(miss), rungs=_rung_list(v))
            for v, miss in gaps]
    if ragged:
        foot.append(tr("* not a multiple of {tile} (rung 11's block tile): the tiles at the edges of C are partial",
                       tile=tile))
    hl = {tr("fp32 peak (datasheet) {peak} TFLOP/s", peak=peak): peak} if peak else {}
    pos = list(range(len(sizes)))
    paths = [report.plot_lines(os.path.join(out_dir, f"{L.LAB}.png"), pos, series,
                               xlabel="M = N = K (the sizes measured, evenly spaced)",
                               ylabel="TFLOP/s (2 M N K / time)",
                               title=tr("SGEMM ladder on {gpu} (fp32, L2 flushed)", gpu=gpu),
                               logx=False, hlines=hl, xticks=pos,
                               xticklabels=[f"{s}*" if s in ragged else str(s) for s in sizes], styles=styles,
                               note="\n".join(foot) or None, legend_outside=True)]
    at = 4096 if 4096 in sizes else sizes[-1]
    order = {n: i for i, n in enumerate(names)}
    ladder = sorted((r for r in rows if r["shape"][0] == at), key=lambda r: order.get(r["variant"], 99))
    skipped = [n for n in names if n in series and not any(r["variant"] == n for r in ladder)]
    entries = sorted([(r["variant"], r["tflops"], r["impl"]) for r in ladder] + [(n, None, "cuda") for n in skipped],
                     key=lambda e: order.get(e[0], 99))
    cub = next((r["tflops"] for r in ladder if r["variant"] == "cuBLAS (cupy)"), None)
    note = None
    if skipped:
        last = {n: max(r["shape"][0] for r in rows if r["variant"] == n) for n in skipped}
        note = "\n".join(tr("{name}: not run at {at}^3 (too slow; largest size run: {last}^3, {tflops:.1f} TFLOP/s)",
                            name=n, at=at, last=last[n],
                            tflops=next(r["tflops"] for r in rows if r["variant"] == n and r["shape"][0] == last[n]))
                         for n in skipped)
    paths.append(report.plot_bars(
        os.path.join(out_dir, f"{L.LAB}_ladder.png"), [e[0] for e in entries], [e[1] for e in entries],
        ylabel="TFLOP/s", title=tr("SGEMM {at}^3 on {gpu}: every rung against cuBLAS", at=at, gpu=gpu),
        colors=[report.IMPL_COLORS.get(e[2], "tab:blue") for e in entries],
        hlines={f"cuBLAS {cub:.1f}": cub, tr("0.90x cuBLAS {tflops:.1f}", tflops=0.9 * cub): 0.9 * cub}
        if cub else None,
        annotate_fmt="{:.1f}", note=note, missing=tr("not run at {at}^3 (see the note below)", at=at)))
    return paths
