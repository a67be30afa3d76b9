"""Lab 2.8's measuring side, the hooks the runner calls: the command-line options, what rung 11 uses here, the compile
report, the predictions for a GPU, the benchmark and --tune. The work is done beside it, one job a module:
resources.py (what the compiler made of each rung), sweep.py (the timed runs), autotune.py (rung 11's search) and
plots.py (the plots, redrawn from the JSON by --replot)."""
from __future__ import annotations

import os

from common import cli, config, cuda, device, lab, target, tuned
from common import plan as course_plan
from common.i18n import in_english, korean, tr

from . import lab as L
from .autotune import TUNE_SPACE as TUNE_SPACE, autotune as autotune
from .lab import RUNGS, TUNED, _async_available, plan, tuned_config
from .plots import left_out as left_out, plot as plot
from .resources import _executed_census as _executed_census, _limits, occupancy, resource_rows, show_compile_reports
from .sweep import IRREGULAR as IRREGULAR, SIZES, TARGETS, bench_irregular, head_to_head, peer_precision, sweep

CPU_NOTE = ("\nCUDA C rungs were compiled, not run (no GPU); the Triton kernel ran in the interpreter. Nothing was "
            "timed.")


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
        tables.append((target.said(tg), None,
                       "targets: best rung vs cuBLAS SGEMM (interleaved rounds, same run)"))
    return lab.Result(rows=rows, tables=tables, ok=all(r["check"] == "ok" for r in irregular),
                      meta=dict(targets=target.records(tg), irregular=irregular, peer_precision=prec,
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
