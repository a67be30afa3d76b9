"""Lab 2.7's measuring side: the ladder at the target shapes, a row-length sweep, the targets in interleaved rounds,
rung 05's knobs (--tune), what the compiler made of each kernel, and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import functools
import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, occupancy, report, target, tuned
from common.i18n import tr, yes_no

from . import lab as L

TARGET_CASES = L.BENCH_CASES
QUICK_CASES = [((8192, 4096), "float32"), ((8192, 4096), "bfloat16")]
# the peer each target names and the factor it asks for
TARGETS = {((32768, 4096), "float32"): ("torch.compile", 1.2), ((32768, 4096), "bfloat16"): ("torch.compile", 2.0),
           ((4096, 32768), "float32"): ("torch.softmax", 1.4)}
SWEEP_COLS = (128, 1024, 4096, 16384, 65536, 262144)
SWEEP_NAMES = ["cuda 03 warp per row, shuffles", "cuda 04 online, block per row", L.BEST, "cuda 06 online, split rows",
               "triton online", "torch.softmax"]
CPU_NOTE = "\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter."
HONOURS = ("size", "dtype", "variant")   # --size / --dtype narrow the timed cases, --variant the timed rungs


def add_arguments(p) -> None:
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) sweep rung 05's EPT and cache hints at 4096 columns"))
    p.add_argument("--compile-all", action="store_true",
                   help=tr("(GPU) also torch.compile the 4096 x 32768 case (one more 20-60 s compilation)"))


# ---------------------------------------------------------------------------------------------------------------------
# Peers beyond PEERS: torch.compile, and phase 3's tuned Triton kernel (a later lab, measured here at the benchmark
# shapes only: its limits are its own lab's business)
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def compiled_softmax():
    """torch.compile of torch.softmax, static shapes (one compilation per shape and dtype, on first call)."""
    import torch

    return torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)




# ---------------------------------------------------------------------------------------------------------------------
# What the compiler made of the kernels, and which kernel each row length gets (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    """Which rung-05/06 kernel each row length gets on this GPU (or the one --arch / --gpu describes), and the
    predictions for it (predict())."""
    gpu = device.current(args.arch)
    k = L.knobs(gpu)
    rows = []
    for cols in (100, 1024, 4096, 4097, 16384, 32768, 32769, 262144):
        for dt in ("float32", "bfloat16"):
            vec = (cols * arrays.ITEMSIZE[dt]) % 16 == 0
            p = L.plan_05(32768 if cols <= 4096 else 4096, cols, dt, vec, cfg=k)
            if p is None:
                q = L.plan_06(4096, cols, dt, vec, gpu, cfg=k)
                rows.append({"cols": cols, "dtype": dt, "16-byte loads": yes_no(vec), "kernel": tr("06 online split"),
                             "launch": tr("{grid} blocks x {block} ({chunks} per row)", grid=q["grid"],
                                          block=q["block"], chunks=q["chunks"]),
                             "HBM reads": tr("2 (1 if in L2)")})
            else:
                rows.append({"cols": cols, "dtype": dt, "16-byte loads": yes_no(vec), "kernel": p["kernel"],
                             "launch": tr("{grid} blocks x {block}", grid=p["grid"], block=p["block"]),
                             "HBM reads": "1"})
    report.print_table(rows, title=tr("rung 05's dispatch by row length on {gpu} (R = 32768 rows up to 4096 columns, "
                                      "else 4096; EPT = {ept}, {sms} SMs for rung 06's split)", gpu=gpu.label(),
                                      ept=k["EPT"], sms=gpu.sms))
    report.print_table([{"prediction": name, "value": v} for name, v in predict(gpu).items()],
                       title=tr("predictions for {gpu} (python -m {lab} --plan lists every launch)", gpu=gpu.name,
                                lab=L.__package__))


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu`, from its description: the floor of each headline case (2 s R C bytes over
    the datasheet bandwidth), how far below the ridge point softmax sits, the bytes in flight per SM that Little's law
    asks and what rung 05 keeps in flight (its registers on this GPU, the occupancy calculator), the longest row rung
    02 stages in shared memory, rung 06's split, and the L2 that rungs 04 and 06 reread from."""
    cases, _ = L.bench_cases(gpu)
    k = L.knobs(gpu)
    bw = gpu.hbm_gbps
    out = {}
    for (r, c), dt in cases:
        nbytes = 2 * arrays.ITEMSIZE[dt] * r * c
        out[tr("floor at {r} x {c} {dt} (2 s R C bytes / {bw:.0f} GB/s)", r=r, c=c, dt=dt, bw=bw)] = \
            f"{nbytes / (bw * 1e9) * 1e3:.3f} ms"
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e3 / bw
        out[tr("fp32 ridge point (datasheet FLOP/s over bandwidth)")] = tr(
            "{ridge:.1f} FLOP/B: fp32 softmax's 5 FLOP per 8 bytes is {x:.0f}x below", ridge=ridge, x=ridge / 0.625)
    little = bw * 1e9 * 1e-6 / gpu.sms
    out[tr("bytes in flight per SM that Little's law asks (bandwidth x ~1 us / SMs)")] = f"{little / 1024:.0f} KiB"
    for dt in ("float32", "bfloat16"):
        p = L.plan_05(32768, 4096, dt, True, cfg=k)
        if p is None or "block_row" not in p["kernel"]:
            continue
        regs, smem = cuda.resources(L.CU, p["kernel"], gpu, defines=k)
        occ = occupancy.occupancy(gpu.arch, p["block"], regs, smem)
        row = 4096 * arrays.ITEMSIZE[dt]
        flight = occ.blocks_per_sm * row
        out[tr("rung 05 at 4096 {dt} columns: bytes in flight per SM", dt=dt)] = tr(
            "{blocks} blocks of {threads} threads x {regs} registers, {kib} KiB each: {flight} KiB ({x:.1f}x Little's "
            "law)", blocks=occ.blocks_per_sm, threads=p["block"], regs=regs, kib=row // 1024, flight=flight // 1024,
            x=flight / little)
    limit = L.smem_row_limit(gpu)
    out[tr("rung 02: the longest fp32 row staged in shared memory")] = tr(
        "{cols:,} columns ({kib:.0f} KiB a block); longer rows stage in the output row", cols=limit // 4,
        kib=limit / 1024)
    for rows_, cols_ in ((4096, 32768), (2**25 // 262144, 262144)):      # a target, and the sweep's longest rows
        q = L.plan_06(rows_, cols_, "float32", True, gpu, cfg=k)
        out[tr("rung 06 at {rows} x {cols} fp32 ({sms} SMs)", rows=rows_, cols=cols_, sms=gpu.sms)] = tr(
            "{grid:,} blocks, {chunks} per row of {chunk:,} columns", grid=q["grid"], chunks=q["chunks"],
            chunk=q["chunk"])
    out[tr("rungs 04 and 06 reread from L2 a matrix up to")] = tr("~{mib:.0f} MiB (the L2)",
                                                                  mib=gpu.l2_bytes / device.MiB)
    return out


def compile_report(args) -> None:
    names = ["softmax_01a_row_max", "softmax_01b_row_sum_exp", "softmax_01c_normalize", "softmax_02_fused_smem",
             "softmax_03_warp_per_row", "softmax_04_online", "softmax_05_warp_rows_f32", "softmax_05_block_row_f32",
             "softmax_05_block_row_f32_scalar", "softmax_05_block_row_bf16", "softmax_06a_online_stats_f32",
             "softmax_06b_online_normalize_f32"]
    knobs = L.knobs(device.current(args.arch))
    rep = cuda.print_compile_report(L.CU, args.arch, defines=knobs, kernels=names,
                                    excerpt_of="softmax_05_block_row_f32")
    k = rep.kernels["softmax_05_block_row_f32"]
    a = device.arch_info(args.arch)
    regs = max(k.registers, 1)
    p = L.plan_05(32768, 4096, "float32", True, cfg=knobs)
    threads = p["block"] if p and "block_row" in p["kernel"] else 128
    alloc = 8 * math.ceil(regs / 8)               # registers are allocated per warp in 256-register chunks
    blocks = min(a.regs_per_sm // (alloc * threads), a.max_threads_per_sm // threads, a.max_blocks_per_sm)
    print(tr("-> softmax_05_block_row_f32 at 4096 fp32 columns (EPT = {ept}): {threads} threads x {regs} registers "
             "-> {blocks} blocks per SM on {arch} (by registers), each with 16 KiB of loads issued before the first "
             "use: ~{kib} KiB in flight per SM.", ept=knobs["EPT"], threads=threads, regs=regs, blocks=blocks,
             arch=args.arch, kib=16 * blocks))
    if k.sass:
        c = k.sass_counts
        first_use = next((i for i, s in enumerate(k.sass) if s.split()[0].startswith("FMNMX")), None)
        loads_before = sum(1 for s in k.sass[:first_use] if "LDG" in s) if first_use else 0
        print(tr("-> its SASS: {ldg} x LDG.E.128 ({before} of them before the first FMNMX: all in flight at once), "
                 "{bar} barriers, {shfl} SHFL, {mufu} MUFU (ex2), {stg} x STG.E.128.", ldg=c.get("LDG.128", 0),
                 before=loads_before, bar=c.get("BAR", 0), shfl=c.get("SHFL", 0), mufu=c.get("MUFU", 0),
                 stg=c.get("STG.128", 0)))
    print(tr("-> the full table (every dtype and the *_scalar fallbacks) is what tests/test_kernels_compile.py checks: "
             "zero spills on sm_75, sm_80, sm_90."))


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _device_input(shape, dtype):
    import cupy
    import torch

    if dtype == "bfloat16":
        return torch.randn(shape, device="cuda", dtype=torch.bfloat16) * 3
    return (cupy.random.standard_normal(shape, dtype=cupy.float32) * 3).astype(dtype)


def _contenders(x, names, compiled: bool):
    """name -> zero-argument callable. Peers are called as a learner would (torch allocates its output)."""
    import torch

    out = arrays.empty(x.shape, arrays.dtype_name(x), x)
    tx = L._torch(x)
    fns = {}
    dt = arrays.dtype_name(x)
    for v in L.VARIANTS:
        if dt in v.dtypes and (names is None or v.name in names):
            fns[v.name] = (lambda f=v.fn: f(x, out=out))
    fns["torch.softmax"] = lambda: torch.softmax(tx, dim=-1)
    if compiled:
        try:
            cf = compiled_softmax()
            cf(tx)                      # compile now (20-60 s the first time per shape and dtype), not in the timer
            fns["torch.compile"] = lambda: cf(tx)
        except Exception as e:  # noqa: BLE001 - report, keep measuring the rest
            print(tr("torch.compile unavailable: {error}", error=f"{type(e).__name__}: {e}"), file=sys.stderr)
    return fns, out


def _impl(name):
    return next((v.impl for v in L.VARIANTS if v.name == name), "peer")


def _nbytes(shape, dtype) -> int:
    return 2 * arrays.ITEMSIZE[dtype] * shape[0] * shape[1]


def ladder(shape, dtype, ceiling_gbps: float, compiled: bool, names=None) -> list[dict]:
    """Every rung (or those `names` picks) and the peers once at one shape (L2 flushed before each call), ratios to
    torch eager and compile."""
    x = _device_input(shape, dtype)
    fns, _ = _contenders(x, names, compiled)
    ts = {name: bench.bench(f) for name, f in cli.progress(list(fns.items()), tr("ladder {shape} {dtype}",
                                                                                 shape=shape, dtype=dtype))}
    eager = ts["torch.softmax"].median_ms
    comp = ts["torch.compile"].median_ms if "torch.compile" in ts else None
    return [report.row(L.LAB, name, _impl(name), shape, dtype, t, nbytes=_nbytes(shape, dtype),
                       flops=5 * shape[0] * shape[1], ceiling_gbps=ceiling_gbps, vs_eager=eager / t.median_ms,
                       vs_compile=comp / t.median_ms if comp else None, part="ladder")
            for name, t in ts.items()]


def head_to_head(cases, rounds: int, compiled: bool) -> list[target.Target]:
    """The targets in interleaved rounds (best rung against the peer the target names; the other contenders against
    the same peer are reference lines, no goal)."""
    out = []
    for shape, dtype in cases:
        x = _device_input(shape, dtype)
        peer, factor = TARGETS.get((shape, dtype), ("torch.compile", 2.0 if dtype == "bfloat16" else 1.2))
        fns, _ = _contenders(x, [L.BEST, "cuda 06 online, split rows"], compiled and peer == "torch.compile")
        # rounds whose contenders are not all within bench.MAX_SPREAD are rerun, and a target is only called met
        # from a steady set of rounds
        ts, tries, steady = bench.steady(fns, rounds=rounds, flush_l2=True)
        for name, t in ts.items():
            out.append(target.versus(f"{shape[0]}x{shape[1]} {dtype}", name, peer,
                                     ts[peer].median_ms / t.median_ms if peer in ts else None, steady=steady,
                                     at_least=factor if name == L.BEST else None,
                                     note="peer not measured" if name == L.BEST and peer not in ts else "",
                                     detail={"ms": t.median_ms, "GB/s": t.gbps(_nbytes(shape, dtype)),
                                             "spread": t.spread, "rounds_run": tries}))
        x = None
    return out


def sweep(ceiling_gbps: float, elements: int = 2**25, cols_list=SWEEP_COLS, names=None) -> list[dict]:
    """GB/s over the row length at a fixed matrix size (fp32, 2 x 128 MiB): where each design wins."""
    import cupy

    rows_out = []
    for cols in cli.progress(cols_list, "row lengths"):
        shape = (max(1, elements // cols), cols)
        x = _device_input(shape, "float32")
        wanted = [n for n in SWEEP_NAMES if names is None or n in names or _impl(n) == "peer"]
        fns, _ = _contenders(x, wanted, False)
        for name, f in fns.items():
            if name not in wanted:
                continue
            rows_out.append(report.row(L.LAB, name, _impl(name), shape, "float32", bench.bench(f),
                                       nbytes=8 * shape[0] * cols, ceiling_gbps=ceiling_gbps, part="sweep"))
        x = None
        cupy.get_default_memory_pool().free_all_blocks()
    return rows_out


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    hbm = ceiling["hbm_gbps"]
    # --size / --dtype narrow the cases, --variant the rungs (the peers are always timed beside them)
    cases, notes = L.bench_cases(device.info(), lab.chosen_cases(ctx.args, QUICK_CASES if ctx.quick else TARGET_CASES))
    for note in notes:
        print(tr(note))
    names = lab.chosen_names(ctx.args)
    compiled = not ctx.quick
    lad = []
    for shape, dtype in cases:
        lad += ladder(shape, dtype, hbm, compiled and (ctx.args.compile_all or shape[1] == 4096), names)
    sw = [] if ctx.args.size is not None or ctx.args.dtype not in (None, "float32") else \
        sweep(hbm, cols_list=(1024, 4096, 65536) if ctx.quick else SWEEP_COLS, names=names)
    # the targets are the lab's own cases: a --size of the learner's, or a --variant without the best rung, has none
    own_cases = ctx.args.size is None and (names is None or L.BEST in names)
    tg = head_to_head(cases, rounds=3 if ctx.quick else 5, compiled=compiled) if own_cases else []
    return lab.Result(
        rows=lad + sw,
        meta=dict(ceiling=ceiling, targets=target.records(tg), knobs=L.knobs(), knobs_source=L.knobs_source(),
                  device=device.info().as_dict()),
        tables=[(sw, ["variant", "shape", "ms", "gbps", "frac_ceiling"], "row-length sweep (fp32)"),
                (lad, ["variant", "shape", "dtype", "ms", "gbps", "frac_ceiling", "vs_eager", "vs_compile"],
                 tr("the ladder (L2 flushed; measured ceiling {hbm:.0f} GB/s)", hbm=hbm)),
                (target.said(tg), None, "targets (interleaved rounds, same run)")])


def tune(ctx) -> lab.Result:
    """--tune: rung 05's knobs (values per thread, cache hints) at the two 4096-column targets, every combination in
    interleaved rounds with torch.compile; the winner (least total time over both cases, each checked against float64
    first) is recorded as results/<gpu>/phase2_lab07_softmax_tuned.json, where L.knobs() reads it."""
    import torch

    rows, total = [], {}
    combos = [(e, h) for e in L.TUNABLE["EPT"] for h in L.TUNABLE["STREAM_HINTS"]]
    for shape, dtype in cli.progress(TARGET_CASES[:2], "tuning cases"):
        x = _device_input(shape, dtype)
        out = arrays.empty(shape, dtype, x)
        comp = compiled_softmax()
        tx = L._torch(x)
        fns = {"torch.compile": (lambda: comp(tx)), "torch.softmax": (lambda: torch.softmax(tx, dim=-1))}
        for ept, hints in combos:
            fn = (lambda e=ept, h=hints: L.softmax_cuda_05(x, out, EPT=e, STREAM_HINTS=h))
            c = _check_rows(fn, x, out, dtype)
            if c:
                rows.append({"case": f"{shape[0]}x{shape[1]} {dtype}", "config": f"EPT={ept} STREAM_HINTS={hints}",
                             "result": tr("check failed: {why}", why=c)})
                total[(ept, hints)] = float("inf")
                continue
            fns[f"05 EPT={ept} STREAM_HINTS={hints}"] = fn
        for f in fns.values():
            f()
        ts = bench.interleaved(fns, rounds=3, flush_l2=True)
        for k, t in ts.items():
            rows.append({"case": f"{shape[0]}x{shape[1]} {dtype}", "config": k, "ms": t.median_ms,
                         "GB/s": t.gbps(_nbytes(shape, dtype)), "spread": round(t.spread, 4),
                         "vs compile": ts["torch.compile"].median_ms / t.median_ms, "result": "ok"})
        for ept, hints in combos:
            k = f"05 EPT={ept} STREAM_HINTS={hints}"
            if k in ts:
                total[(ept, hints)] = total.get((ept, hints), 0.0) + ts[k].median_ms
        x = out = None
    if not total or min(total.values()) == float("inf"):
        print(tr("--tune: no combination passed its check; nothing recorded"))
        return lab.Result(rows=rows, tables=[(rows, None, "rung 05 knobs: every combination failed its check")],
                          name=L.TUNED + "_failed", ok=False)
    ept, hints = min(total, key=total.get)
    for r in rows:
        r["winner"] = r["config"] == f"05 EPT={ept} STREAM_HINTS={hints}"
    tuned.forget()
    print(tr("winner: EPT={ept} STREAM_HINTS={hints} (recorded; the next run's rung 05 uses it)", ept=ept,
             hints=hints))
    return lab.Result(rows=rows, tables=[(rows, None, "rung 05 knobs (interleaved rounds; winner: least total time)")],
                      name=L.TUNED, meta=dict(winner={"EPT": ept, "STREAM_HINTS": hints}))


def _check_rows(fn, x, out, dtype: str) -> str:
    """'' when rung 05 with these knobs matches float64 on the first 64 rows of the tuning input, else the message."""
    arrays.fill(out, float("nan"))
    fn()
    got = arrays.to_numpy(out[:64]).astype(np.float64)
    want = L.reference(arrays.to_numpy(x[:64]).astype(np.float64))
    c = check.compare(got, want, dtype, L.tolerance((64, x.shape[1]), dtype))
    return "" if c.ok else c.message


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
# what each bar colour of a ladder means (report.IMPL_COLORS), in the legend under the axes
LADDER_LEGEND = {"cuda": "CUDA C (ours: the ladder's rungs)", "triton": "Triton (ours)",
                 "peer": "peer (torch, or phase 3's kernel)"}


def plot_ladder(rows: list[dict], ceiling: float, path: str, title: str) -> str:
    """One shape's ladder: every contender's GB/s as a bar, coloured by what wrote it (a legend under the axes says
    which colour is which), the measured HBM ceiling dashed."""
    impls = dict.fromkeys(r["impl"] for r in rows)
    return report.plot_bars(path, [r["variant"] for r in rows], [r["gbps"] for r in rows],
                            ylabel="GB/s (input read + output written once)", title=title,
                            colors=[report.IMPL_COLORS[r["impl"]] for r in rows],
                            hlines={tr("measured HBM ceiling {gbps:.0f} GB/s", gbps=ceiling): ceiling},
                            legend={LADDER_LEGEND.get(i, i): report.IMPL_COLORS[i] for i in impls})


def plot(data: dict, out_dir: str) -> list[str]:
    rows, ceiling, gpu = data["rows"], data["ceiling"]["hbm_gbps"], data.get("gpu", "GPU")
    ladder_rows = [r for r in rows if r.get("part", "ladder" if "vs_eager" in r else "sweep") == "ladder"]
    sweep_rows = [r for r in rows if r not in ladder_rows]
    paths = []
    for shape, dtype in dict.fromkeys((tuple(r["shape"]), r["dtype"]) for r in ladder_rows):
        sel = [r for r in ladder_rows if tuple(r["shape"]) == shape and r["dtype"] == dtype]
        name = f"{L.LAB}_{shape[0]}x{shape[1]}_{dtype}.png"
        paths.append(plot_ladder(sel, ceiling, os.path.join(out_dir, name),
                                 tr("Softmax {rows} x {cols} {dtype} on {gpu}", rows=shape[0], cols=shape[1],
                                    dtype=dtype, gpu=gpu)))
    if sweep_rows:
        cols = sorted({r["shape"][1] for r in sweep_rows})
        names = list(dict.fromkeys(r["variant"] for r in sweep_rows))
        series = {n: [next((r["gbps"] for r in sweep_rows if r["variant"] == n and r["shape"][1] == c), None)
                      for c in cols] for n in names}
        ept = data.get("knobs", L.CONFIG)["EPT"]
        paths.append(report.plot_lines(os.path.join(out_dir, f"{L.LAB}_cols.png"), cols, series,
                                       xlabel="row length (fp32 columns; 2^25 elements in all)",
                                       ylabel="GB/s (read + write once)",
                                       title=tr("Softmax: which design wins at which row length ({gpu})", gpu=gpu),
                                       hlines={tr("measured HBM ceiling {gbps:.0f} GB/s", gbps=ceiling): ceiling},
                                       vlines={"32 x EPT (warp in registers)": 32 * ept,
                                               "1024 x EPT (block in registers)": 1024 * ept}))
    return paths
