"""Lab 4.1's measuring side: read every results/<gpu>/*.json, choose one row per kernel, resolve the roofs (this lab's
measured ceilings, measured peers in the results, the datasheet), place every kernel and draw the repository's
roofline; on a GPU, measure the roofs (--measure) and run the k-FMA sweep that crosses from one roof to the other.
The plot is drawn from the JSON (placed rows + ceilings), so --replot redraws it without a GPU. bench.py holds the
runner's hooks and the placement; each step is a module of its own: phrases.py (what the JSON says, in the chosen
language), selection.py (which rows are placed), roofs.py (the roofs), measure.py (the roofs measured and the
sweep), table.py and figure.py (the output)."""
from __future__ import annotations

import argparse
import os
import re

from common import device, lab, plan, report, target
from common.i18n import tr

from .figure import headline_entry, plot_roofline, point_label, roof_label_groups  # noqa: F401 - the tests' too
from .lab import (CEILINGS_FILE, LAB, ROOT, SWEEP_KS, SWEEP_N, UNIT_NAMES, UNITS, Ceilings, bench_bytes, datasheet_of,
                  fma_config)
from .measure import measure_ceilings, run_sweep, sweep_from_rows, sweep_targets
from .phrases import (MISSING_ALL, MISSING_COMMITTED, MISSING_FOLDER, MISSING_MINE, MISSING_NOTHING, MISSING_ROOFS,
                      SUMMARY, say)
from .roofs import resolve_ceilings
from .staleness import check, fingerprint
from .selection import analyze, load_rows
from .table import TABLE_COLS, named_points, on_roofline, table_rows  # noqa: F401 - on_roofline: the tests' too

CPU_NOTE = ("\nNo GPU: the k-FMA kernel ran in the interpreter (correctness only) and its sweep was not timed; the "
            "repository's kernels were placed from the recorded results.")


def add_arguments(p) -> None:
    p.add_argument("--results", default=None, metavar="DIR",
                   help=tr("folder of result JSON files to place (default: results/<this GPU>; without a GPU, where "
                           "that folder does not exist, the first committed GPU folder)"))
    p.add_argument("--measure", action="store_true",
                   help=tr("on a GPU: measure HBM and the tensor-core / fp32 peaks (torch.matmul 8192^3) and cache "
                           "them in <out>/{file}", file=CEILINGS_FILE))
    p.add_argument("--roof", choices=("measured", "datasheet"), default="measured",
                   help=tr("which figures are the roofs (default: measured where there is a measurement)"))
    p.add_argument("--sweep", action=argparse.BooleanOptionalAction, default=True,
                   help=tr("run the k-FMA AI sweep on a GPU"))
    p.add_argument("--check", nargs="?", const="", default=None, metavar="DIR",
                   help=tr("exit 1 if the roofline JSON in DIR (default: the README's results folder) is older than "
                           "the results files it read (a recorded content hash no longer matches, or a lab's file is "
                           "new), 0 if current"))


# ---------------------------------------------------------------------------------------------------------------------
# CPU teaching aid: what the sweep kernel compiles to
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_report(arch: str) -> None:
    """Compile fma_chain_kernel ahead of time and count the FMAs in its loop (no GPU needed)."""
    from common import triton_support as ts

    from .lab import FMA_SIGNATURE
    from .triton_kernels import fma_chain_kernel

    cc = device.arch_info(arch).cc
    cfg = fma_config().values
    try:
        k = ts.compile_for(fma_chain_kernel, dict(FMA_SIGNATURE), {"BLOCK": cfg["BLOCK"]}, cc=cc,
                           num_warps=cfg["num_warps"], divisible_by_16=("x_ptr", "y_ptr", "n"))
        ptx = k.asm["ptx"]
    except Exception as e:  # noqa: BLE001 - a teaching aid; say why it is missing and go on
        print("\n" + tr("(compile report for sm_{cc} unavailable: {error})", cc=cc,
                        error=f"{type(e).__name__}: {str(e)[:200]}"))
        return
    n_single = len(re.findall(r"\bfma\.rn\.f32(?!x)\b", ptx))
    n_pair = len(re.findall(r"\bfma\.rn\.f32x2\b", ptx))     # sm_100+: two independent FMAs in one instruction
    n_fma = n_single + 2 * n_pair
    loads = re.findall(r"\bld\.global[\w.]*", ptx)
    per = cfg["BLOCK"] // (32 * cfg["num_warps"])
    paired = tr(", {pairs} of them as {n} packed fma.rn.f32x2 (two chains a instruction)", pairs=2 * n_pair,
                n=n_pair) if n_pair else ""
    print("\n" + tr("fma_chain_kernel compiled for sm_{cc} (ahead of time): {n_fma} fp32 FMAs in the PTX{paired} "
                    "(expected {main} in the 4-way main loop + {per} in the remainder loop: {per} elements a thread), "
                    "loads {loads} (compiled as the sweep launches it: 16-byte aligned pointers, n % 16 == 0). The "
                    "{per} chains of a thread are independent: that is what hides the FFMA latency.", cc=cc,
                    n_fma=n_fma, paired=paired, main=4 * per, per=per, loads=sorted(set(loads))))
    users = plan.build_users(__package__, arch, "fma_chain_kernel", {"BLOCK": cfg["BLOCK"]},
                             signature=dict(FMA_SIGNATURE), num_warps=cfg["num_warps"])
    if users:                                    # the correctness table's name for the kernel
        print("  " + tr("used by: {variants}", variants="; ".join(users)))


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# The lab's run: place the recorded kernels (every machine), or measure and then place (a GPU that benchmarks)
# ---------------------------------------------------------------------------------------------------------------------
def default_results_dir(gpu: device.DeviceInfo | None = None) -> tuple[str | None, list[str]]:
    """(the folder whose results are placed, what is missing): results/<this GPU> (the GPU at hand, or the one
    described without a GPU: --gpu, else the --arch example); without a GPU, where that folder does not exist, the
    first committed GPU folder (whose files name the GPU they were measured on). On a GPU without recorded results
    yet: None, and the line that says so (the lab then places only what this run measures)."""
    gpu = gpu or (device.info() if device.has_gpu() else device.current())
    mine = os.path.join(ROOT, "results", gpu.slug)
    if os.path.isdir(mine):
        return mine, []
    if not gpu.simulated:
        return None, [MISSING_MINE.format(gpu=gpu.name, slug=gpu.slug)]
    committed = lab.committed_gpus()
    if not committed:
        return None, [MISSING_ALL.format(gpu=gpu.name)]
    return os.path.join(ROOT, "results", committed[0]), [
        MISSING_COMMITTED.format(gpu=gpu.name, slug=gpu.slug, committed=committed[0])]


def placement(args, sweep_rows=(), measured: dict | None = None, *, gpu: device.DeviceInfo | None = None,
              hbm_measured: tuple[float, str] | None = None) -> lab.Result | None:
    """Every recorded kernel of --results placed on the roofs (with this run's sweep, if it ran one): the Result a
    benchmark hands back (rows: the sweep + the placed kernels; meta: the roofs, what was left out, the targets, what
    is missing), or None when there is nothing to place at all (no folder and no measurement of this run).

    gpu: the GPU described here (default: the one at hand, else device.current(--arch)); hbm_measured: the HBM
    ceiling this run measured, (GB/s, how), the roof where the results record none (a GPU without results yet)."""
    gpu = gpu or (device.info() if device.has_gpu() else device.current(getattr(args, "arch", None)))
    if args.results:
        results_dir = os.path.abspath(args.results)
        missing = [] if os.path.isdir(results_dir) else [MISSING_FOLDER.format(folder=results_dir)]
        results_dir = results_dir if not missing else None
    else:
        results_dir, missing = default_results_dir(gpu)
    for m in missing:
        print(tr("note: {text}", text=say(m)))
    if results_dir is None and not sweep_rows and not measured and not hbm_measured:
        return None
    rows, headers, gpu_name = load_rows(results_dir) if results_dir else ([], [], "")
    if not gpu_name and (results_dir is None or not gpu.simulated):
        gpu_name = gpu.name
    ceil = resolve_ceilings(rows, headers, gpu_name, results_dir, roof=args.roof, measured=measured,
                            gpu=gpu if gpu_name == gpu.name else None, hbm_measured=hbm_measured)
    sweep = [dict(r, _file="this run", _index=i) for i, r in enumerate(sweep_rows)] or sweep_from_rows(rows)
    rows = [r for r in rows if r.get("kind") != "sweep"] + sweep
    placed, left = analyze(rows, ceil, headers)
    named = named_points(placed)
    for p, t in zip(placed, table_rows(placed)):
        p["on_plot"] = t["on_plot"]       # 'named', 'point', 'sweep line' or 'right panel': where the plot shows it
    where = os.path.relpath(results_dir, ROOT) if results_dir else "none recorded"
    print("\n" + tr("Ceilings ({gpu}; results from {where}):", gpu=gpu_name or tr("unknown GPU"),
                    where=where if results_dir else tr(where)))
    print(f"  HBM {ceil.hbm_gbps:,.0f} GB/s  [{say(ceil.sources['hbm'])}]")
    for u in UNITS:
        if ceil.peak(u):
            print(f"  {UNIT_NAMES[u]:24s} {ceil.peak(u):7,.0f} TFLOP/s, ridge {ceil.ridge(u):6.1f} FLOP/B  "
                  f"[{say(ceil.sources[u])}]" + (f"  (datasheet {ceil.datasheet[u]:,.0f})" if ceil.datasheet.get(u)
                                                 and "datasheet" not in ceil.sources[u] else ""))
    for n_ in ceil.notes:
        print(tr("  note: {text}", text=say(n_)))
    n_mem = sum(1 for p in placed if str(p["bound"]).startswith("memory"))
    summary = SUMMARY.format(mem=n_mem, placed=len(placed), compute=len(placed) - n_mem, left=len(left))
    targets = sweep_targets(sweep, ceil)
    # the sweep measured now, or (re-placing on a machine without a GPU) the one recorded before: kept either way
    kept = list(sweep_rows) or [{k: v for k, v in r.items() if not k.startswith("_")} for r in sweep]
    tables = [(table_rows(placed, said=True), TABLE_COLS,
               tr("Every kernel placed ({n}; frac_roof = achieved / min(peak of its unit, AI x HBM); memory-only "
                  "kernels: GB/s / HBM; on_plot: 'named' = a lab's headline pair, numbered on the roofline, 'listed' "
                  "= a headline pair with no point there (no FLOPs), listed beside it, 'table only' = here and in the "
                  "JSON)", n=len(placed)))]
    if targets:
        tables.append((target.said(targets, translate=("case",)), ["case", "goal", "measured", "met"],
                       "The k-FMA sweep's predictions"))
    return lab.Result(rows=kept + placed, tables=tables,
                      meta=dict(ceilings=ceil.as_dict(), results_dir=os.path.relpath(results_dir, ROOT)
                                if results_dir else None, left_out=left, missing=missing,
                                source_gpu=gpu_name, targets=target.records(targets), roof=args.roof, summary=summary,
                                inputs=fingerprint(results_dir) if results_dir else {},
                                headlines=[headline_entry(n) for n in named]))


def _report(res: lab.Result) -> None:
    """What run() prints after a benchmark, for the placement made without one."""
    print("\n" + say(res.meta["summary"]))
    for rows, cols, title in res.tables:
        report.print_table(rows, cols, title=title)


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description: each unit's ridge point (datasheet peak over
    bandwidth), where the k-FMA sweep should leave the memory roof (k ~ 4 x the fp32 ridge: AI = k / 4), and the
    sweep's floor time at k = 1 (8 n bytes over the bandwidth)."""
    ds, _ = datasheet_of(gpu)
    bw = gpu.hbm_gbps
    n, _ = plan.fit(SWEEP_N, bench_bytes, gpu)
    out = {tr("HBM roof (datasheet, else memory clock x bus)"): f"{bw:,.0f} GB/s"}
    for u in UNITS:
        if ds.get(u):
            out[f"ridge point, {UNIT_NAMES[u]}"] = f"{ds[u] * 1e3 / bw:.1f} FLOP/B ({ds[u]:,g} TFLOP/s)"
    if ds.get("fp32"):
        ridge = ds["fp32"] * 1e3 / bw
        out[tr("k-FMA sweep leaves the HBM roof near (k = 4 x fp32 ridge)")] = f"k ~ {4 * ridge:.0f}"
    else:
        out[tr("k-FMA sweep")] = tr("no fp32 datasheet peak for this GPU: the crossing is not predicted")
    out[tr("k-FMA sweep floor at k = 1, n = {n} (8 n B over HBM)", n=plan.fmt_size(n))] = \
        f"{8 * n / (bw * 1e9) * 1e3:.3f} ms"
    return out


def explain(args) -> None:
    """The roofs of the GPU described here (the one at hand, or device.current(--arch)) from its datasheet, with their
    ridge points; then, on a machine that will not benchmark, every recorded kernel placed on the roofs, with the JSON
    and the plot a benchmark would write (on a GPU that benchmarks, the placement comes after the sweep, with this
    run's measurements). --check [DIR]: only whether the committed roofline is current (staleness.py), then exit."""
    if getattr(args, "check", None) is not None:
        raise SystemExit(check(args.check or None))
    gpu = device.current(args.arch)
    ds, src = datasheet_of(gpu)
    if ds.get("hbm_gbps"):
        rows = [{"unit": UNIT_NAMES[u], "peak TFLOP/s": ds[u], "ridge FLOP/B": ds[u] * 1e3 / ds["hbm_gbps"]}
                for u in UNITS if ds.get(u)]
        report.print_table(rows, title=tr("The roofs before any measurement: {source}, HBM {hbm:,} GB/s (a kernel left "
                                          "of its unit's ridge is memory-bound)", source=src, hbm=ds['hbm_gbps']))
    else:
        print(tr("The roofs before any measurement: {gpu} is not in the course's table of GPUs, so there are no "
                 "datasheet peaks; HBM from its memory clock and bus width: {gbps:,.0f} GB/s. Measure the compute "
                 "roofs with --measure.", gpu=gpu.name, gbps=gpu.hbm_gbps))
    if device.has_gpu() and args.bench:
        print(tr("(on this GPU the kernels are placed after the k-FMA sweep, on this run's measured roofs)"))
        return
    res = placement(args)
    if res is None:
        return
    _report(res)
    out_dir = args.out or report.results_dir()
    if args.json:
        # the rows are the placed GPU's measurements, whatever machine placed them: its name is the file's "gpu"
        gpu_field = {"gpu": res.meta["source_gpu"]} if res.meta["source_gpu"] else {}
        print(tr("wrote {path}", path=report.write_json(LAB, res.rows, out_dir=out_dir, **res.meta, **gpu_field)))
    if args.plot:
        for path in plot(dict(res.meta, rows=res.rows, gpu=res.meta["source_gpu"]), out_dir):
            print(tr("wrote {path}", path=path))


def benchmark(ctx) -> lab.Result:
    """On a GPU: the roofs measured (--measure, cached in CEILINGS_FILE), the k-FMA sweep (--sweep), then every
    recorded kernel placed on the roofs. A GPU without recorded results gets its own sweep placed on its own roofs
    (this run's HBM ceiling and --measure's peaks, else the datasheet's), and the JSON and the plot say what is
    missing."""
    args = ctx.args
    measured = None
    if args.measure:
        measured = measure_ceilings(quick=ctx.quick)
        if args.json:
            print(tr("wrote {path}", path=report.write_json(CEILINGS_FILE[:-5], [], out_dir=ctx.out_dir,
                                                            ceilings=measured, device=device.info().as_dict())))
    ceiling = ctx.ceiling()
    n, note = plan.fit((1 << 24) if ctx.quick else SWEEP_N, bench_bytes, device.info(), what="the k-FMA sweep's n")
    if note:
        print(tr(note))
    sweep_rows = []
    if args.sweep:
        sweep_rows = run_sweep(SWEEP_KS[::2] if ctx.quick else SWEEP_KS, n, ceiling["hbm_gbps"])
    res = placement(args, sweep_rows, measured,
                    hbm_measured=(ceiling["hbm_gbps"], ceiling.get("hbm_method") or "common.bench.ceilings"))
    print("\n" + say(res.meta["summary"]))
    return res


def plot(data: dict, out_dir: str) -> list[str]:
    """The repository's roofline from the JSON: the placed rows, the sweep rows and the roofs (old JSON files without
    a 'roof' field were placed on the measured roofs). A JSON without roofs (written before they were recorded) gets
    them rebuilt from its rows' measured HBM ceiling and the datasheet of the GPU it names; the plot says what it
    lacks."""
    rows = data["rows"]
    placed = [r for r in rows if r.get("kind") == "placed"]
    sweep = sorted((r for r in rows if r.get("kind") == "sweep" and r.get("tflops")), key=lambda r: r.get("k") or 0)
    gpu = data.get("source_gpu") or data.get("gpu") or "the GPU"
    missing = list(data.get("missing") or [])
    if data.get("ceilings"):
        ceil = Ceilings.from_dict(data["ceilings"])
    else:
        try:
            ceil = resolve_ceilings(rows, [], data.get("source_gpu") or data.get("gpu") or "", None)
        except ValueError as e:
            print(tr("no roofline drawn: the JSON has no roofs and none can be rebuilt ({error})", error=e))
            return []
        missing.append(MISSING_ROOFS)
    if not placed and not sweep:
        missing.append(MISSING_NOTHING)
    title = tr("Roofline of {gpu}: each lab's headline kernel and its library peer (HBM {gbps:,.0f} GB/s; "
               "roofs: {roof})", gpu=gpu,
               gbps=ceil.hbm_gbps, roof=tr(data.get('roof', 'measured')))
    return [plot_roofline(os.path.join(out_dir, f"{LAB}.png"), placed, ceil, sweep, title, missing)]
