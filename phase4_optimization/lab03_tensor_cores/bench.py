"""Lab 4.3's measuring side: every rung and peer over square sizes, the targets in interleaved rounds (mma.sync at
4096^3, wgmma + TMA at 4096^3 and 8192^3), the sweeps of --tune (mma.sync configurations; on sm_90 the wgmma builds)
and their records, what the compiler made of each rung (and of the wgmma kernel's descriptors), and the plots (redrawn
from the JSON by --replot)."""
from __future__ import annotations

import os
import re
import time

import numpy as np

from common import arrays, bench, check, cli, config, cuda, device, lab, occupancy, plan, report, tuned
from common.i18n import korean, plural, tr

from . import lab as L
from . import wgmma as wg

CPU_NOTE = ("\nCUDA C rungs were compiled, not run (no GPU); the Triton kernel ran in the interpreter. Nothing was "
            "timed.")
SIZES = (2048, 4096, 8192)
WGMMA_SIZES = (4096, 8192)          # the wgmma head to head; its targets are at both
EPILOGUES = wg.EPILOGUES            # (tma_store, c_passes) of the builds the head to head times


def add_arguments(p) -> None:
    cli.add_size(p, tr("benchmark this one square size (default: 2048, 4096, 8192; --quick: 4096)"))
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) time every mma.sync config of CONFIGS at 4096^3 bf16 and record the winner in "
                           "results/<gpu>/{record}.json; on sm_90 also every wgmma + TMA build at {sizes}, winners in "
                           "results/<gpu>/{wgmma_record}.json (a few minutes); later runs use them", record=L.TUNED,
                           sizes=(', ' if korean() else ' and ').join(f'{s}^3' for s in WGMMA_SIZES), wgmma_record=wg.TUNED))
    p.add_argument("--wgmma-debug", action="store_true",
                   help=tr("(sm_90) index-coded probes of the wgmma + TMA kernel that say where a layout bug is"))


# ---------------------------------------------------------------------------------------------------------------------
# Before the checks: which mma.sync configuration runs, and what the configurations cost (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    gpu = device.current(args.arch)
    if not lab.arch_matches(gpu.arch, L.TC_ARCHS):
        print(tr("{gpu}: the CUDA C rungs need bf16 mma.sync, ldmatrix and cp.async (sm_80 or later)",
                 gpu=gpu.label()))
        return
    res = L.mma_config(gpu)
    print(tr("mma.sync uses {config} on {gpu} [{source}]" if not gpu.simulated else
             "mma.sync would use {config} on {gpu} [{source}]", config=L.short(res.values), gpu=gpu.label(),
             source=config.say_source(res.source())))
    if wg.unavailable_reason(gpu) is None:
        for n in WGMMA_SIZES:
            build, why = wg.resolve_build(n, n, n, b_kmajor=wg.default_b_kmajor(), gpu=gpu)
            print(tr("wgmma + TMA at {n}^3 runs {build} [{why}]", n=n, build=wg.build_label(build),
                     why=wg.say_note(why)))
    limit = gpu.smem_per_block_optin
    fits = tr("fits {arch} ({kib} KiB a block)", arch=gpu.arch, kib=limit // device.KiB)
    rows = [{"config": L.short(c), fits: not L.config_problems(c, gpu=gpu),
             "ldmatrix conflicts (A, B)": tr("{a}-way, {b}-way", a=L.ldmatrix_conflicts(c['BK'] // 8, c['BM']),
                                             b=L.ldmatrix_conflicts(c['BN'] // 8, c['BK']))} for c in L.CONFIGS]
    report.print_table(rows, title="mma.sync configs (CONFIGS) - lab 4.4 sweeps these; --tune times them")


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description alone: the main case's FLOPs per byte against this
    GPU's bf16 ridge point and the compute floor (datasheet rates), the mma.sync configuration it runs with its
    registers, blocks per SM and waves, the reuse each block tile buys, and rung 03's persistent grid (or why rung 03
    does not run there)."""
    n, _ = plan.fit(L.BENCH_N, L.bench_bytes, gpu)
    flops, nbytes = 2.0 * n ** 3, 2.0 * 3 * n * n
    out = {tr("bf16 {n}^3: FLOPs, bytes that must move", n=n): f"{flops / 1e9:.1f} GFLOP, {nbytes / 1e6:.1f} MB "
                                                                 f"({flops / nbytes:.0f} FLOP/B)"}
    bf16, fp32 = gpu.peak("bf16_tflops"), gpu.peak("fp32_tflops")
    if bf16:
        ridge = bf16 * 1e12 / (gpu.hbm_gbps * 1e9)
        out[tr("bf16 ridge point (datasheet FLOP/s over bandwidth)")] = \
            tr("{ridge:.0f} FLOP/B: the main case is {times:.1f}x above it, compute-bound", ridge=ridge,
               times=flops / nbytes / ridge)
        out[tr("floor at {n}^3 (2 M N K over the datasheet bf16 rate)", n=n)] = f"{flops / (bf16 * 1e12) * 1e3:.3f} ms"
        if fp32:
            out[tr("tensor cores over CUDA cores (datasheet bf16 / fp32 rates)")] = tr("{x:.1f}x", x=bf16 / fp32)
    else:
        out[tr("bf16 tensor cores")] = tr("none on {arch}: the CUDA C rungs and bf16 tl.dot need sm_80 or later",
                                          arch=gpu.arch)
    if lab.arch_matches(gpu.arch, L.TC_ARCHS):
        res = L.mma_config(gpu)
        cfg = res.values
        regs, _ = cuda.resources(L.CU, "tc_02_mma_sync", gpu, L._defines("bfloat16", "bfloat16", cfg))
        occ = occupancy.occupancy(gpu.arch, L.config_threads(cfg), regs, 0, L.config_smem(cfg),
                                  max_dynamic_smem=gpu.smem_per_block_optin)
        tiles, slots = L.mma_grid(n, n, cfg)[0], gpu.sms * max(1, occ.blocks_per_sm)
        out[tr("mma.sync configuration here")] = f"{L.short(cfg)} [{config.say_source(res.source())}]"
        out[tr("mma.sync blocks per SM, waves")] = tr(
            "{regs} registers: {blocks} block(s) per SM ({limiters}); {tiles} tiles = {waves:.2f} waves of {slots}",
            regs=regs, blocks=occ.blocks_per_sm, limiters='/'.join(tr(x) for x in occ.limiters), tiles=tiles,
            waves=tiles / slots, slots=slots)
        wm, wn = L.WMMA_TILE
        out[tr("FLOP per byte a block tile loads")] = (f"wmma {wm}x{wn}: {wm * wn / (wm + wn):.0f}; mma.sync "
                                                       f"{cfg['BM']}x{cfg['BN']}: "
                                                       f"{cfg['BM'] * cfg['BN'] / (cfg['BM'] + cfg['BN']):.0f}")
    why = wg.unavailable_reason(gpu)
    if why is None:
        build, _ = wg.resolve_build(n, n, n, b_kmajor=wg.default_b_kmajor(), gpu=gpu)
        grid = wg.grid_size(n, n, wg.launch_cluster(n, build["cluster"]), gpu=gpu)
        tiles = -(-n // wg.BM) * -(-n // wg.BN)
        out[tr("rung 03 (wgmma + TMA)")] = tr("{build}: a persistent grid of {grid} blocks (one per SM) walks {tiles} "
                                              "tiles of {bm}x{bn}, {each:.2f} each", build=wg.build_label(build),
                                              grid=grid, tiles=tiles, bm=wg.BM, bn=wg.BN, each=tiles / grid)
    else:
        out[tr("rung 03 (wgmma + TMA)")] = tr("does not run here: {why}", why=why)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Beyond VARIANTS x cases: rung 03's other B layout and its debugging probes (GPU; the layout model on any machine)
# ---------------------------------------------------------------------------------------------------------------------
def wgmma_checks(quick: bool) -> tuple[list[dict], bool]:
    """rung 03 on the shapes of wgmma.CHECK_SHAPES in both dtypes, and in bf16 through the other B layout (the
    fallback that tells a descriptor bug from anything else): the same poisoned-output, float64 check as the lab's."""
    shapes = wg.QUICK_SHAPES if quick else wg.CHECK_SHAPES
    main_kmajor = wg.default_b_kmajor()
    rows, ok = [], True
    todo = [(s, dt, main_kmajor) for dt in L.DTYPES for s in (shapes if dt == "bfloat16" else shapes[:3])]
    todo += [(s, "bfloat16", not main_kmajor) for s in shapes[:3]]
    for s, dt, kmaj in cli.progress(todo, "wgmma checks"):
        c = wg.check_shape(*s, dtype=dt, seed=sum(s) + int(kmaj != main_kmajor), b_kmajor=kmaj)
        ok &= c.ok
        rows.append({"shape": "x".join(map(str, s)), "dtype": dt, "B layout": wg._layout(kmaj), "result": c.message})
    report.print_table(rows, title="rung 03 (wgmma + TMA): both B layouts (poisoned output, float64 reference)")
    return rows, ok


def extra_checks(args) -> bool:
    why = wg.unavailable_reason()
    if why:
        bad = wg.simulate_operands() + wg.simulate_operands(b_kmajor=True)
        if args.wgmma_debug:
            print(tr("--wgmma-debug: the GPU probes need an sm_90 GPU ({why}); the CPU layout model: {result}", why=why,
                     result=tr("every A and B slice correct") if not bad else tr("WRONG: {bad}", bad=bad)))
        return not bad
    _, ok = wgmma_checks(args.quick)
    if args.wgmma_debug or not ok:
        if not ok:
            print("\n" + tr("rung 03 failed a check; the debugging probes say where:"))
        ok = (wg.debug() == 0) and ok
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# What the compiler made of the rungs (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(archs, configs=None) -> list[dict]:
    """tc_01 and tc_02 compiled for each arch (tc_02 once per config), one table."""
    rows = []
    todo = [(arch, cfg) for arch in archs for cfg in (configs if configs is not None else [L.DEFAULT_CONFIG])]
    for i, (arch, cfg) in enumerate(cli.progress(todo, "compiling kernels.cu")):
        first = i == 0 or todo[i - 1][0] != arch
        got = L.compile_rows(arch, [cfg])
        rows += got if first else got[-1:]
    report.print_table(rows, title=tr("kernels.cu compiled with NVRTC {version} (static SASS counts; smem of tc_02 = "
                                      "dynamic, STAGES x (BM BK + BK BN) x 2 B)", version=cuda.nvrtc_version()))
    print(tr("  Read it as: HMMA = tensor-core MMAs (wmma and mma.sync both become HMMA.16816.F32.BF16/F16); LDSM ="
             "\n  ldmatrix (rung 02: 4 plain + 4 .trans per 16-deep step for 32 HMMA per 64x64 warp tile); LDGSTS ="
             "\n  cp.async copies, global -> shared. Rung 01's wmma fragments come in through generic loads (LD, not "
             "LDS:\n  NVRTC 13.0 did not prove the address shared), 2 per HMMA. STS in rung 02 = the element-wise "
             "fallback for\n  misaligned operands. LDS counts leave out ptxas's never-executed '@!PT LDS' slots. "
             "Spills must be 0."))
    if find_cuobjdump_missing():
        print(tr("  (no cuobjdump: SASS columns are 0; it ships with the triton wheel)"))
    return rows


def find_cuobjdump_missing() -> bool:
    return cuda.find_cuobjdump() is None


def wgmma_compile_report(quick: bool = False) -> list[dict]:
    """kernels_wgmma.cu for sm_90a: registers, spills and the Hopper instructions (HGMMA, UTMALDG, SYNCS, ...), the
    descriptors of stage 0, and the NumPy layout model read back through them."""
    rows = []
    builds = ((("bfloat16", False, False, 1), ("bfloat16", False, True, 1)) if quick else
              (("bfloat16", False, False, 1), ("float16", False, False, 1), ("bfloat16", True, False, 1),
               ("bfloat16", False, True, 1), ("bfloat16", False, True, 2)))
    for dt, kmaj, epi, cp in cli.progress(builds, "compiling kernels_wgmma.cu"):
        rep = wg.compile_report(dt, b_kmajor=kmaj, tma_store=epi, c_passes=cp)
        k = rep.kernels[wg.KERNEL]
        ops: dict[str, int] = {}
        for ins in k.sass:
            op = ins.split()[0] if not ins.startswith("@") else ins.split()[1]
            for key in ("HGMMA", "UTMALDG", "UTMASTG", "SYNCS", "USETMAXREG", "WARPGROUP"):
                if op.startswith(key):
                    ops[key] = ops.get(key, 0) + 1
        rows.append({"dtype": dt, "B layout": wg._layout(kmaj),
                     "epilogue": (plural(cp, "TMA store, {n} pass", "TMA store, {n} passes") if epi
                                  else tr("registers")),
                     "stages": wg.stages(epi, cp), "arch": rep.arch, "regs": k.registers,
                     "spills": k.spills, "stack": k.stack_bytes, "smem (dynamic)": wg.smem_bytes(epi, cp),
                     "HGMMA": ops.get("HGMMA", 0), "UTMALDG": ops.get("UTMALDG", 0),
                     "UTMASTG": ops.get("UTMASTG", 0), "SYNCS": ops.get("SYNCS", 0),
                     "USETMAXREG": ops.get("USETMAXREG", 0), "stg": cuda.fmt_widths(k.sass_counts, "STG")})
    report.print_table(rows, title=tr("kernels_wgmma.cu compiled with NVRTC {version} for {arch} (regs = the "
                                      "launch-bound cap; setmaxnreg moves them at run time)",
                                      version=cuda.nvrtc_version(), arch=wg.ARCH))
    report.print_table(wg.descriptor_table(), title="wgmma shared-memory descriptors of stage 0, consumer 0")
    bad = wg.simulate_operands() + wg.simulate_operands(b_kmajor=True)
    print(tr("descriptor/swizzle model: TMA-written stage read back through the kernel's descriptors (both B layouts) "
             "-> {result}", result=tr("every A and B slice correct") if not bad else tr("WRONG: {bad}", bad=bad)))
    return rows


_RESOURCES: list[dict] = []         # the compile rows of this run, for the JSON


def compile_report(args) -> None:
    """On a GPU: its arch and the configuration it runs. Without one: --arch (default sm_90) with the configuration
    it would run (mma_config: the default, a record for --gpu's GPU, --set), and two more of CONFIGS unless --quick;
    the wgmma kernel when the arch is sm_90. An arch a file cannot be built for is skipped with the reason."""
    gpu = device.current(args.arch)
    arch = device.arch_info(args.arch).arch
    if not lab.arch_matches(arch, L.TC_ARCHS):
        print(tr("kernels.cu, kernels_wgmma.cu: not compiled for {arch}: the rungs need bf16 mma.sync, ldmatrix and "
                 "cp.async (sm_80 or later)", arch=arch))
        return
    mine = L.mma_config(gpu).values
    configs = [mine] if args.quick or device.has_gpu() else \
        [mine] + [c for c in L.CONFIGS[1:3] if dict(L.OPTIONAL, **c) != mine]
    try:
        _RESOURCES[:] = show_compile_reports((arch,), configs)
        if arch == "sm_90":
            wgmma_compile_report(args.quick)
        else:
            print(tr("kernels_wgmma.cu: not compiled for {arch}: {why}", arch=arch, why=wg.hopper_only(arch)))
    except (cuda.CompileError, cuda.ToolMissing) as e:     # the report is a lesson, not a check: say why, go on
        print(tr("compile report unavailable: {error}", error=str(e).splitlines()[0]))


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _square(n: int, dtype: str, seed: int):
    a, b = arrays.device_randn((n, n), dtype, seed), arrays.device_randn((n, n), dtype, seed + 1)
    return a, b, arrays.empty((n, n), dtype, a)


def _sample_error(out, a, b, rows: int = 64) -> float:
    """Relative error of sampled rows of a big product against float64 on the GPU (torch DGEMM)."""
    import torch

    ta, tb, to = L._torch_view(a), L._torch_view(b), L._torch_view(out)
    idx = torch.as_tensor(np.unique(np.r_[check.rng(3).integers(0, ta.shape[0], rows), ta.shape[0] - 1]),
                          device=ta.device)
    ref = ta[idx].double() @ tb.double()
    return float(torch.linalg.norm(to[idx].double() - ref) / torch.linalg.norm(ref))


def _free():
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()


def tune_configs(n: int = 4096, dtype: str = "bfloat16", budget_s: float = 120.0) -> tuple[list[dict], dict | None]:
    """Time every config of CONFIGS at n^3 (each checked on sampled rows first); the fastest that is also right on
    awkward shapes wins."""
    a, b, c = _square(n, dtype, 21)
    flops = 2.0 * n ** 3
    t_ref = bench.bench(lambda: L.peer_torch(a, b, out=c), warmup_ms=10, rep_ms=30, min_reps=3)
    gpu = device.info()
    rows, t0 = [], time.perf_counter()
    for cfg in cli.progress(L.CONFIGS, tr("tuning {count} mma.sync configs at {n}^3 {dtype}", count=len(L.CONFIGS),
                                          n=n, dtype=dtype)):
        row = {"config": L.short(cfg), **cfg}
        if L.config_problems(cfg, gpu=gpu):
            row["result"] = "invalid here: " + "; ".join(L.config_problems(cfg, gpu=gpu))
        elif time.perf_counter() - t0 > budget_s:
            row["result"] = f"not tried: {budget_s:.0f} s budget spent"
        else:
            try:
                arrays.fill(c, float("nan"))
                L.gemm_mma(a, b, out=c, config=cfg)
                err = _sample_error(c, a, b)
                row["rel_err"] = err
                if not err < 1e-2:
                    row["result"] = "WRONG RESULT: excluded"
                else:
                    t = bench.bench(lambda cfg=cfg: L.gemm_mma(a, b, out=c, config=cfg), warmup_ms=5, rep_ms=30,
                                    min_reps=3)
                    row.update(ms=t.median_ms, tflops=t.tflops(flops), vs_cublas=t_ref.median_ms / t.median_ms,
                               spread=round(t.spread, 4), result="ok")
            except Exception as e:  # noqa: BLE001 - one bad config must not stop the search; it is reported
                row["result"] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        rows.append(row)
    a = b = c = None
    _free()
    good = sorted((r for r in rows if r.get("result") == "ok"), key=lambda r: r["ms"])
    for r in good:
        cfg = {k: r[k] for k in L.CONFIG_KEYS + ("MIN_BLOCKS", "DB", "XT") if k in r}
        bad = _edge_check(cfg)
        if bad:
            r["result"] = f"fast but WRONG on {bad}: excluded"
            continue
        r["winner"] = True
        return rows, cfg
    return rows, None


def _edge_check(cfg: dict) -> str:
    """'' when a config matches float64 on awkward shapes, else the first failing shape."""
    # the last shape has whole interior blocks for every config and K = 200 (six full 32-deep k-tiles, then 8):
    # tc_02's fast path and its general path in the same launch
    for i, shape in enumerate(((1, 1, 1), (127, 129, 131), (302, 1000, 13), (257, 130, 100), (302, 520, 200))):
        for dt in L.DTYPES:
            a, b = L.make_inputs(shape, dt, check.rng(900 + i), "cuda")
            out = check.poisoned((shape[0], shape[1]), dt, a)
            L.gemm_mma(a, b, out=out, config=cfg)
            ref = L.reference(arrays.to_numpy(a), arrays.to_numpy(b))
            if not check.compare(out, ref, dt, L.tolerance(shape, dt)).ok:
                return f"{'x'.join(map(str, shape))} {dt}"
    return ""


def _contenders(dtype: str) -> list[lab.Variant]:
    return [v for v in L.PEERS + L.VARIANTS if dtype in v.dtypes and v.available()[0]]


def sweep(sizes, dtype: str) -> list[dict]:
    """TFLOP/s of every variant and peer at each square size (L2 flushed before each call)."""
    rows = []
    peak = device.info().datasheet.get("bf16_tflops")
    for n in cli.progress(sizes, tr("{dtype} sizes", dtype=dtype)):
        a, b, c = _square(n, dtype, n)
        flops, nbytes = 2.0 * n ** 3, 2.0 * 3 * n * n
        ref_ms = None
        for v in _contenders(dtype):
            fn = (lambda v=v: v.fn(a, b, out=c))
            try:
                t = bench.bench(fn, warmup_ms=10, rep_ms=40, min_reps=5)
                err = _sample_error(c, a, b)
            except Exception as e:  # noqa: BLE001 - one failing variant must not cost the others their numbers
                rows.append(report.row(L.LAB, v.name, v.impl, (n, n, n), dtype, None,
                                       error=f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"))
                continue
            if v.name == L.CUBLAS:
                ref_ms = t.median_ms
            rows.append(report.row(L.LAB, v.name, v.impl, (n, n, n), dtype, t, nbytes=nbytes, flops=flops,
                                   vs_cublas=(ref_ms / t.median_ms) if ref_ms else None,
                                   frac_peak=(t.tflops(flops) / peak) if peak else None, sampled_rel_err=err))
        a = b = c = None
        _free()
    return rows


def head_to_head(n: int = 4096, dtype: str = "bfloat16", rounds: int = 5) -> dict:
    """The mma.sync target: mma.sync against cuBLAS (torch.matmul), interleaved rounds, same run."""
    a, b, c = _square(n, dtype, 7)
    c2 = arrays.empty((n, n), dtype, a)
    ts, tries, steady = bench.steady({L.CUBLAS: lambda: L.peer_torch(a, b, out=c2),
                                      L.MMA: lambda: L.gemm_mma(a, b, out=c)},
                                     rounds=rounds, warmup_ms=10, rep_ms=40, min_reps=5)
    flops = 2.0 * n ** 3
    ratio = ts[L.CUBLAS].median_ms / ts[L.MMA].median_ms
    a = b = c = c2 = None          # the closures above hold them; let the pool reclaim the memory
    _free()
    return {"size": f"{n}^3", "dtype": dtype, "variant": L.MMA, "tflops": ts[L.MMA].tflops(flops),
            "cublas_tflops": ts[L.CUBLAS].tflops(flops), "vs_cublas": ratio, "target": f">= {L.TARGET:.2f}",
            "met": ratio >= L.TARGET and steady, "steady": steady, "rounds_run": tries,
            "spread": max(ts[L.MMA].spread, ts[L.CUBLAS].spread)}


def ceiling_facts(c: dict) -> list[dict]:
    """The README lines of the mma.sync ceiling (tools/readme_tables.py prints a JSON's "facts")."""
    return [{"fact": "mma.sync's own ceiling (tc_00_mma_peak: register operands, no memory), bf16, as a fraction "
                     "of cuBLAS at 4096^3 in the same run", "value": c["ceiling_vs_cublas"], "unit": "x"},
            {"fact": f"rung 02's {L.TARGET}x target as a fraction of that ceiling",
             "value": c["target_fraction_of_ceiling"], "unit": ""}]


def mma_peak_launch(like, iters: int = 4096, chains: int = 8) -> tuple:
    """(a zero-argument launch of tc_00_mma_peak over one full wave, the FLOPs it does): the ceiling measurement
    here and tools/profile.py's mma_peak case run the same launch (L.peak_blocks: the plan lists it too)."""
    k = L._kernel("tc_00_mma_peak", tuple(sorted(L._defines("bfloat16", "bfloat16", None).items())), 0)
    blocks = L.peak_blocks(int(k.attributes["num_regs"]), device.info())
    threads = L.PEAK_THREADS
    out = arrays.empty((blocks * threads,), "float32", like)
    # warps a block, chains MMAs a step, 16 x 8 x 16 MACs an MMA, 2 FLOP a MAC
    flops = blocks * (threads // 32) * iters * chains * 16 * 8 * 16 * 2
    return (lambda: k((blocks,), (threads,), (np.int32(iters), np.uint64(arrays.ptr(out))))), flops


def mma_ceiling(n: int = 4096, rounds: int = 3) -> dict:
    """How fast mma.sync can go on this GPU at all (tc_00_mma_peak: register operands, no memory) against cuBLAS's
    bf16 GEMM at n^3, interleaved in the same run: the ceiling rung 02's target has to fit under."""
    a, b, c = _square(n, "bfloat16", 5)
    peak, peak_flops = mma_peak_launch(a)
    ts, tries, steady = bench.steady({"cublas": lambda: L.peer_torch(a, b, out=c), "mma.sync peak": peak},
                                     rounds=rounds, warmup_ms=10, rep_ms=40, min_reps=5)
    peak_tflops = ts["mma.sync peak"].tflops(peak_flops)
    cub = ts["cublas"].tflops(2.0 * n ** 3)
    a = b = c = peak = None
    _free()
    return {"what": "mma.sync m16n8k16 bf16 issue ceiling (tc_00_mma_peak, 8 chains/warp, 8 warps/block)",
            "mma_peak_tflops": peak_tflops, "cublas_tflops": cub, "ceiling_vs_cublas": peak_tflops / cub,
            "target_fraction_of_ceiling": L.TARGET * cub / peak_tflops, "steady": steady, "rounds_run": tries}


def wgmma_head_to_head(m, n, k, dtype="bfloat16", rounds=3, b_kmajor: bool = False) -> dict:
    """Rung 03 against cuBLAS (torch.matmul) at one shape, interleaved rounds: every build of wg.builds() (1- and
    2-block clusters; C from registers, by TMA store, by TMA store in two passes), each checked on sampled rows first.
    The row's headline figures (build, ratio, wgmma_tflops) are the build gemm_wgmma runs here when not told
    (wg.resolve_build: this GPU's --tune record, else the default build), timed in the same rounds; the fastest build
    of this run is reported next to it ("best build"), and every build's own figures are in "builds"."""
    import torch

    a = arrays.device_randn((m, k), dtype, m + k)
    b = arrays.device_randn((k, n), dtype, n + k + 1)
    if arrays.library(a) != "torch":
        a, b = torch.from_dlpack(a), torch.from_dlpack(b)
    c_w = torch.empty((m, n), dtype=a.dtype, device=a.device)
    c_t = torch.empty_like(c_w)
    builds = wg.builds(b_kmajor)
    labels = [wg.build_label(bd) for bd in builds]
    cmps = {}
    for bd, lb in zip(builds, labels):          # every build timed is first checked on sampled rows
        c_w.fill_(float("nan"))
        wg.gemm_wgmma(a, b, out=c_w, b_kmajor=b_kmajor, **bd)
        cmps[lb] = wg.verify_sample(c_w, a, b, dtype)
    fns = {"cublas": lambda: torch.matmul(a, b, out=c_t)}
    for bd, lb in zip(builds, labels):
        fns["wgmma " + lb] = lambda bd=bd: wg.gemm_wgmma(a, b, out=c_w, b_kmajor=b_kmajor, **bd)
    ts, tries, steady = bench.steady(fns, rounds=rounds, rep_ms=60)
    flops = 2.0 * m * n * k
    cub = ts["cublas"]
    per = [dict(bd, build=lb, ms=ts["wgmma " + lb].median_ms, tflops=ts["wgmma " + lb].tflops(flops),
                ratio=cub.median_ms / ts["wgmma " + lb].median_ms, spread=round(ts["wgmma " + lb].spread, 4),
                check=cmps[lb].message, ok=cmps[lb].ok) for bd, lb in zip(builds, labels)]
    best = min(per, key=lambda p: p["ms"])
    mine, source = wg.resolve_build(m, n, k, b_kmajor=b_kmajor)
    d = next(p for p in per if p["build"] == wg.build_label(mine))
    bad = [f"{p['build']}: {p['check']}" for p in per if not p["ok"]]
    row = {"shape": f"{m}x{n}x{k}", "dtype": dtype, "B layout": wg._layout(b_kmajor), "build": d["build"],
           "build source": source, "wgmma_tflops": d["tflops"], "cublas_tflops": cub.tflops(flops),
           "ratio": d["ratio"], "wgmma_ms": d["ms"], "cublas_ms": cub.median_ms, "best build": best["build"],
           "best ratio": best["ratio"], "spread": max(t.spread for t in ts.values()), "steady": steady,
           "rounds_run": tries, "check": "; ".join(bad) or "ok", "ok": not bad, "builds": per}
    for p in per:
        row[f"ratio {p['build']}"] = p["ratio"]
    return row


def _wgmma_edge_check(build: dict) -> str:
    """'' when a wgmma build matches float64 on awkward shapes (poisoned output), else the first failing case."""
    for dt in L.DTYPES:
        for s in (wg.QUICK_SHAPES if dt == "bfloat16" else wg.QUICK_SHAPES[:2]):
            c = wg.check_shape(*s, dtype=dt, seed=sum(s) + 3, b_kmajor=False, **build)
            if not c.ok:
                return f"{'x'.join(map(str, s))} {dt}: {c.message}"
    return ""


def tune_wgmma(sizes=WGMMA_SIZES, rounds: int = 3) -> tuple[list[dict], list[dict]]:
    """--tune's second sweep (sm_90): every build of wg.builds() at each size, bf16, checked on sampled rows and timed
    against cuBLAS in steady interleaved rounds (wgmma_head_to_head); at each size the fastest build that is also
    right on awkward shapes wins. Returns (rows, winners as wg.check_winners takes them)."""
    rows, winners, edge = [], [], {}
    for n in cli.progress(sizes, tr("tuning {count} wgmma builds", count=len(wg.builds()))):
        h = wgmma_head_to_head(n, n, n, rounds=rounds, b_kmajor=False)
        win = None
        for p in sorted(h["builds"], key=lambda p: p["ms"]):
            r = {"size": f"{n}^3", "build": p["build"], "ms": p["ms"], "tflops": p["tflops"], "vs_cublas": p["ratio"],
                 "spread": p["spread"], "steady": h["steady"]}
            if not p["ok"]:
                r["result"] = f"WRONG RESULT ({p['check']}): excluded"
            elif win is None:
                key = p["build"]
                if key not in edge:
                    edge[key] = _wgmma_edge_check({k: p[k] for k in wg.BUILD_KEYS})
                if edge[key]:
                    r["result"] = f"fast but WRONG on {edge[key]}: excluded"
                else:
                    win = {k: p[k] for k in wg.BUILD_KEYS}
                    r["result"], r["winner"] = "ok", True
            else:
                r["result"] = "ok"
            rows.append(r)
        if win is not None:
            winners.append({"shape": [n, n, n], "build": win})
    _free()
    return rows, winners


def _fit(n: int, gpu: device.DeviceInfo) -> int:
    """n, or the largest smaller size whose benchmark fits this GPU's memory (common.plan.fit), saying so."""
    got, note = plan.fit(n, L.bench_bytes, gpu)
    if note:
        print(tr(note))
    return got


def benchmark(ctx) -> lab.Result:
    args = ctx.args
    gpu = device.info()
    res = L.mma_config(gpu)
    cfg, src = res.values, res.source()
    sizes = [args.size] if args.size else ([4096] if ctx.quick else list(SIZES))
    sizes = list(dict.fromkeys(_fit(n, gpu) for n in sizes))
    rows = sweep(sizes, "bfloat16")
    if not ctx.quick and not args.size:
        rows += sweep([_fit(4096, gpu)], "float16")
    tables = []
    for dt in L.DTYPES:
        for n in sizes:
            sel = [r for r in rows if r["shape"][0] == n and r["dtype"] == dt]
            if sel:
                tables.append((sel, ["variant", "impl", "ms", "tflops", "vs_cublas", "frac_peak", "spread",
                                     "sampled_rel_err", "error"],
                               tr("{dtype} GEMM {n}^3 (L2 flushed; vs_cublas = cuBLAS time / this time)", dtype=dt,
                                  n=n)))
    meta = dict(mma_config=cfg, mma_config_source=src, resources=_RESOURCES, device=gpu.as_dict())
    mma_runs = next(v for v in L.VARIANTS if v.name == L.MMA).available()[0]
    if 4096 in sizes and mma_runs:
        meta["target"] = head_to_head(4096, rounds=3 if ctx.quick else 5)
        tables.append(([meta["target"]], None, tr("target: mma.sync vs cuBLAS, bf16 4096^3, steady interleaved "
                                                  "rounds")))
        meta["mma_ceiling"] = mma_ceiling(4096, rounds=2 if ctx.quick else 3)
        meta["facts"] = ceiling_facts(meta["mma_ceiling"])
        tables.append(([meta["mma_ceiling"]], None, tr("the mma.sync ceiling (no memory traffic) vs cuBLAS, same "
                                                       "run")))
    ok = True
    if wg.unavailable_reason() is None:
        shapes = [(n,) * 3 for n in sizes] if args.size else ([(4096,) * 3] if ctx.quick else
                                                              [(_fit(s, gpu),) * 3 for s in WGMMA_SIZES])
        h2h = [wgmma_head_to_head(*s, rounds=1 if ctx.quick else 3, b_kmajor=wg.default_b_kmajor())
               for s in cli.progress(shapes, "wgmma head to head")]
        ok = all(r["ok"] for r in h2h)
        meta["wgmma"] = h2h
        # the targets quote the build a user gets by default (the --tune record's, else the default build), timed in
        # the head to head's rounds; the fastest build of the run is in the head to head's table
        meta["targets"] = [{"case": f"bf16 {r['shape']}", "variant": f"{L.WGMMA_NAME}, {r['build']}",
                            "build source": r["build source"], "ratio": r["ratio"],
                            "target": f">= {L.WGMMA_TARGET:.2f} x cuBLAS", "steady": r["steady"],
                            "met": r["ratio"] >= L.WGMMA_TARGET and r["steady"]}
                           for r in h2h if r["dtype"] == "bfloat16"
                           and r["shape"] in {f"{s}x{s}x{s}" for s in L.WGMMA_TARGET_SIZES}]
        tables.append((h2h, ["shape", "dtype", "B layout"]
                       + [f"ratio {wg.build_label(bd)}" for bd in wg.builds()]
                       + ["build", "ratio", "wgmma_tflops", "cublas_tflops", "best build", "best ratio", "spread",
                          "steady", "check"],
                       tr("rung 03, wgmma + TMA (single blocks / 2-block clusters sharing B by multicast; C stored "
                          "from registers / through shared memory by TMA) vs cuBLAS (torch.matmul), steady "
                          "interleaved rounds, L2 flushed; build/ratio: the build gemm_wgmma runs by default here")))
        if meta["targets"]:
            tables.append((meta["targets"], None, tr("targets: wgmma + TMA vs cuBLAS, bf16 4096^3 and 8192^3, the "
                                                     "build gemm_wgmma runs by default (its source in the row)")))
    return lab.Result(rows=rows, meta=meta, tables=tables, ok=ok)


def tune(ctx) -> lab.Result:
    """--tune: every mma.sync config at 4096^3 bf16, winner in results/<gpu>/<LAB>_tuned.json (which every later run,
    and lab 4.4, reads); on sm_90 also every wgmma + TMA build at WGMMA_SIZES, winners in results/<gpu>/<wg.TUNED>.json
    (which gemm_wgmma reads). Elsewhere the wgmma sweep is skipped with its reason."""
    rows, winner = tune_configs()
    tables = [([_said_result(r) for r in rows], ["config", "tflops", "vs_cublas", "spread", "rel_err", "result"],
               tr("--tune: mma.sync configs at 4096^3 bf16 (vs_cublas = cuBLAS time / this time)"))]
    ok = wgmma_tune_and_record(ctx, tables)
    tuned.forget()
    if winner is None:
        print(tr("--tune: no mma.sync config was both fast and right; nothing recorded for it"))
        return lab.Result(rows=rows, tables=tables, ok=False)
    print(tr("--tune winner: {config} (recorded in {record}.json)", config=L.short(winner), record=L.TUNED))
    return lab.Result(rows=rows, meta=dict(winner=winner, size=4096, arch=device.info().arch), tables=tables,
                      name=L.TUNED, ok=ok)


RESULTS = ((r"invalid here: (.*)", "invalid here: {why}"), (r"not tried: (\d+) s budget spent",
                                                              "not tried: {why} s budget spent"),
           (r"fast but WRONG on (.*): excluded", "fast but WRONG on {why}: excluded"),
           (r"WRONG RESULT \((.*)\): excluded", "WRONG RESULT ({why}): excluded"), (r"failed: (.*)", "failed: {why}"))


def _said_result(r: dict) -> dict:
    """A --tune row as printed: its result in the chosen language (the JSON keeps the English)."""
    res = r.get("result")
    if not isinstance(res, str) or res == "ok":
        return r
    for pattern, template in RESULTS:
        m = re.fullmatch(pattern, res, re.S)
        if m:
            return dict(r, result=tr(template, why=m.group(1)))
    return dict(r, result=tr(res))


def wgmma_tune_and_record(ctx, tables: list, sizes=None, rounds: int = 3) -> bool:
    """The wgmma half of --tune: sweep (tune_wgmma at `sizes`, default WGMMA_SIZES), add its table, write its record
    (wg.TUNED, beside the mma.sync one; --no-json writes neither). False when no build won at some size."""
    why = wg.unavailable_reason()
    if why:
        print(tr("--tune: wgmma + TMA builds not swept: {why}", why=why))
        return True
    sizes = tuple(sizes or WGMMA_SIZES)
    rows, winners = tune_wgmma(sizes, rounds)
    tables.append(([_said_result(r) for r in rows], ["size", "build", "tflops", "vs_cublas", "spread", "steady",
                                                      "result"],
                   tr("--tune: wgmma + TMA builds, bf16, steady interleaved rounds with cuBLAS (vs_cublas = cuBLAS "
                      "time / this time)")))
    if winners:
        print(tr("--tune wgmma winners: {list}", list="; ".join(f"{'x'.join(map(str, w['shape']))}: "
                                                                f"{wg.build_label(w['build'])}" for w in winners)))
        if ctx.args.json:
            print(tr("wrote {path}", path=report.write_json(wg.TUNED, rows, out_dir=ctx.out_dir,
                                                            winner=wg.check_winners(winners), sizes=list(sizes),
                                                            arch=device.info().arch)))
        tuned.forget()
    else:
        print(tr("--tune: no wgmma build was both fast and right; nothing recorded for it"))
    return len(winners) == len(sizes)


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    """The rungs and peers at 4096^3 bf16 (else the first size measured), with cuBLAS, the target and the datasheet
    peak; and rung 03's head to head, when the run measured it."""
    rows, gpu = data["rows"], data.get("gpu", "GPU")
    paths = []
    sizes = sorted({r["shape"][0] for r in rows if r.get("dtype") == "bfloat16" and r.get("tflops")})
    at = 4096 if 4096 in sizes else (sizes[0] if sizes else None)
    bars = [r for r in rows if r["shape"][0] == at and r["dtype"] == "bfloat16" and r.get("tflops")]
    if bars:
        cub = next((r["tflops"] for r in bars if r["variant"] == L.CUBLAS), None)
        hl = {}
        if cub:
            hl = {f"cuBLAS {cub:.0f}": cub, tr("target {target}x cuBLAS {tflops:.0f}", target=L.TARGET,
                                               tflops=L.TARGET * cub): L.TARGET * cub}
        peak = (data.get("device") or {}).get("datasheet", {}).get("bf16_tflops")
        if peak:
            hl[tr("bf16 dense peak (datasheet) {peak}", peak=peak)] = peak
        paths.append(report.plot_bars(os.path.join(out_dir, f"{L.LAB}.png"), [r["variant"] for r in bars],
                                      [r["tflops"] for r in bars], ylabel="TFLOP/s (2 M N K / time)",
                                      title=tr("bf16 GEMM {n}^3 on {gpu}: tensor-core rungs against cuBLAS (L2 "
                                               "flushed)", n=at, gpu=gpu),
                                      colors=[report.IMPL_COLORS.get(r["impl"], "tab:blue") for r in bars], hlines=hl,
                                      annotate_fmt="{:.0f}"))
    h2h = data.get("wgmma") or []
    if h2h:
        labels = [f"{r['shape']} {n}" for r in h2h for n in ("wgmma", "cuBLAS")]
        vals = [v for r in h2h for v in (r["wgmma_tflops"], r["cublas_tflops"])]
        colors = [report.IMPL_COLORS["cuda"], report.IMPL_COLORS["peer"]] * len(h2h)
        paths.append(report.plot_bars(os.path.join(out_dir, f"{L.LAB}_wgmma.png"), labels, vals, ylabel="TFLOP/s",
                                      title=tr("rung 03, wgmma + TMA GEMM vs cuBLAS on {gpu} (bf16, interleaved)",
                                               gpu=gpu),
                                      colors=colors))
    return paths
