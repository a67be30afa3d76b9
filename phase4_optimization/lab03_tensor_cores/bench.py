"""Lab 4.3's measuring side: every rung and peer over square sizes, the targets in interleaved rounds (mma.sync at
4096^3, wgmma + TMA at 4096^3 and 8192^3), the sweeps of --tune (mma.sync configurations; on sm_90 the wgmma builds)
and their records, what the compiler made of each rung (and of the wgmma kernel's descriptors), and the plots (redrawn
from the JSON by --replot).

This module holds the runner's hooks (common/contract.py's BenchHooks) and the predictions; the work is in modules of
their own, whose names it re-exports: bench_compile.py (the compile reports), bench_timing.py (rungs 01, 02, Triton
and the peers timed; the mma.sync --tune sweep) and bench_wgmma.py (rung 03's checks, head to head and --tune sweep)."""
from __future__ import annotations

import os

from common import cli, config, cuda, device, lab, occupancy, plan, report, target, tuned
from common.i18n import korean, tr

from . import lab as L
from . import wgmma as wg

# The measuring modules. Each import names everything the module offers, used here or not: the tests and
# tools/profile.py reach those names as bench.X (hence noqa: F401, re-exports).
from .bench_compile import (_RESOURCES, compile_report, find_cuobjdump_missing, show_compile_reports,  # noqa: F401
                            wgmma_compile_report)
from .bench_timing import (RESULTS, _contenders, _edge_check, _free, _sample_error, _said_result,  # noqa: F401
                           _square, ceiling_facts, head_to_head, mma_ceiling, mma_peak_launch, sweep, tune_configs)
from .bench_wgmma import (WGMMA_SIZES, _wgmma_edge_check, tune_wgmma, wgmma_checks,  # noqa: F401
                          wgmma_head_to_head, wgmma_tune_and_record)

CPU_NOTE = ("\nCUDA C rungs were compiled, not run (no GPU); the Triton kernel ran in the interpreter. Nothing was "
            "timed.")
SIZES = (2048, 4096, 8192)
EPILOGUES = wg.EPILOGUES            # (tma_store, c_passes) of the builds the head to head times


def add_arguments(p) -> None:
    cli.add_size(p, tr("benchmark this one square size (default: 2048, 4096, 8192; --quick: 4096)"))
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) time every mma.sync config of CONFIGS at 4096^3 bf16 and record the winner in "
                           "results/<gpu>/{record}.json; on sm_90 also every wgmma + TMA build at {sizes}, winners in "
                           "results/<gpu>/{wgmma_record}.json (a few minutes); later runs use them", record=L.TUNED,
                           sizes=(', ' if korean() else ' and ').join(f'{s}^3' for s in WGMMA_SIZES),
                           wgmma_record=wg.TUNED))
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
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
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
    targets = []                    # the mma.sync target, then wgmma's (common.target records, under "targets")
    if 4096 in sizes and mma_runs:
        targets.append(head_to_head(4096, rounds=3 if ctx.quick else 5))
        tables.append((target.said(targets), None, tr("target: mma.sync vs cuBLAS, bf16 4096^3, steady interleaved "
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
        wg_targets = [target.versus(f"bf16 {r['shape']}", f"{L.WGMMA_NAME}, {r['build']}", L.CUBLAS, r["ratio"],
                                    steady=r["steady"], at_least=L.WGMMA_TARGET,
                                    checked=all(p["ok"] for p in r["builds"] if p["build"] == r["build"]),
                                    detail={"build source": r["build source"], "rounds_run": r["rounds_run"]})
                      for r in h2h if r["dtype"] == "bfloat16"
                      and r["shape"] in {f"{s}x{s}x{s}" for s in L.WGMMA_TARGET_SIZES}]
        targets += wg_targets
        tables.append((h2h, ["shape", "dtype", "B layout"]
                       + [f"ratio {wg.build_label(bd)}" for bd in wg.builds()]
                       + ["build", "ratio", "wgmma_tflops", "cublas_tflops", "best build", "best ratio", "spread",
                          "steady", "check"],
                       tr("rung 03, wgmma + TMA (single blocks / 2-block clusters sharing B by multicast; C stored "
                          "from registers / through shared memory by TMA) vs cuBLAS (torch.matmul), steady "
                          "interleaved rounds, L2 flushed; build/ratio: the build gemm_wgmma runs by default here")))
        if wg_targets:
            tables.append((target.said(wg_targets), None,
                           tr("targets: wgmma + TMA vs cuBLAS, bf16 4096^3 and 8192^3, the build gemm_wgmma runs by "
                              "default (its source in the row)")))
    if targets:
        meta["targets"] = target.records(targets)
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
