"""Lab 1.1's measuring side: the device and software-stack tables (every machine), the smoke test of every layer, the
copy that measures bandwidth (GPU), and the plot of theoretical against measured bandwidth (redrawn from the JSON by
--replot)."""
from __future__ import annotations

import os

from common import bench, cli, device, lab, plan, report
from common.device import GiB
from common.i18n import tr

from . import lab as L

CPU_NOTE = "\nNothing was timed: no GPU. The Triton copy ran in the interpreter; CUDA C was only compiled."


def add_arguments(p) -> None:
    cli.add_size(p, tr("elements of the copy probe (default {n}, quick 2^24; scaled down where the GPU's memory "
                       "cannot hold it)", n=plan.fmt_size(L.BENCH_N)))
    p.add_argument("--errors", action="store_true", help=tr("print the full table of known version-mismatch errors"))


# ---------------------------------------------------------------------------------------------------------------------
# What is printed on every machine: the device (or the chosen arch), the stack, the rules, one action per layer
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    if device.has_gpu():
        report.print_table(L.device_rows(), title="The GPU, read off the device")
        bad = L.table_mismatches()
        print(tr("the course's table (architecture limits, and the profile of this GPU's name where there is one) "
                 "agrees with this GPU") if not bad else
              tr("the course's table (architecture limits, and the profile of this GPU's name where there is one) "
                 "differs from this GPU: {diffs}", diffs="; ".join(bad)))
        for note in L.profile_notes():
            print(tr("  note: {text}", text=note))
    else:
        d = device.current(args.arch)
        report.print_table(L.arch_rows(args.arch), title=tr("No GPU: {name} ({arch}), a profile of the course's "
                                                             "table (common/gpu_specs.py; --gpu chooses another)",
                                                             name=d.name, arch=d.arch))
        report.print_table(L.what_runs_here(args.arch), title="What runs on this machine")
    v = L.versions()
    report.print_table([{"component": tr(k), "version": val} for k, val in v.items()], title="Software stack")
    checks = L.version_checks(v)
    if checks:
        report.print_table(checks, title="Compatibility rules")


def extra_checks(args) -> bool:
    """One tiny action per layer (a failure is explained), then the mismatch errors met most often."""
    smoke = L.smoke_tests(args.arch)
    report.print_table([dict(r, result=tr(r["result"]) if r["result"] else "") for r in smoke],
                       title="One action per layer")
    if not args.errors and not device.has_gpu():      # driver errors need a driver: on a CPU, only on request
        print("\n" + tr("With a GPU, the mismatch errors met most often are listed here (--errors shows them all)."))
        return all(r["result"] != "FAILED" for r in smoke)
    errs = L.KNOWN_ERRORS if args.errors else L.KNOWN_ERRORS[:4]
    print("\n" + tr("The mismatch errors met most often (--errors for all):"))
    for _, meaning, fix in errs:
        print(tr("  * {meaning}\n      fix: {fix}", meaning=tr(meaning), fix=tr(fix)))
    return all(r["result"] != "FAILED" for r in smoke)


# ---------------------------------------------------------------------------------------------------------------------
# Bandwidth (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def bandwidth(n: int) -> tuple[list[dict], dict]:
    """Theoretical (clock x bus), datasheet, and measured (library copy/add, the Triton copy) in GB/s."""
    import cupy

    d = device.info()
    ceil = bench.ceilings()
    x = cupy.full(n, 1.25, dtype=cupy.float32)        # the values do not matter to a copy's speed
    y = cupy.empty_like(x)
    t_tri = bench.bench(lambda: L.copy_triton(x, out=y))
    t_cp = bench.bench(lambda: L.peer_cupy_copy(x, out=y))
    x = y = None                                      # release before freeing the pool
    cupy.get_default_memory_pool().free_all_blocks()
    rows = [
        report.row(L.LAB, "triton copy", "triton", (n,), "float32", t_tri, nbytes=8 * n,
                   ceiling_gbps=ceil["hbm_gbps"]),
        report.row(L.LAB, "cupy.copyto", "peer", (n,), "float32", t_cp, nbytes=8 * n, ceiling_gbps=ceil["hbm_gbps"]),
    ]
    summary = {"theoretical_gbps": d.theoretical_gbps, "datasheet_gbps": d.datasheet.get("hbm_gbps"),
               "measured_ceiling_gbps": ceil["hbm_gbps"], "measured_method": ceil["hbm_method"],
               "measured_all": ceil.get("all", {})}
    return rows, summary


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description alone: the copy's floor at the datasheet bandwidth,
    the clock-derived bandwidth and the ~90% of it a large copy reaches, the FP32 peak and the ridge point."""
    n, _ = plan.fit(L.BENCH_N, L.bench_bytes, gpu)
    d = L.derived(gpu)
    bw = gpu.hbm_gbps
    peak, ridge = d["peak TFLOP/s, FP32 (SMs x lanes x 2 x clock)"], d["ridge point FLOP/B (peak / bandwidth)"]
    out = {tr("clock-derived bandwidth (2 x memory clock x bus)"): f"{gpu.theoretical_gbps:.0f} GB/s",
           tr("a large copy reaches (~90% of it)"): f"~{0.9 * gpu.theoretical_gbps:.0f} GB/s",
           tr("copy floor at n = {n} (8 n B / {bw:.0f} GB/s)", n=plan.fmt_size(n), bw=bw):
               f"{8 * n / (bw * 1e9) * 1e3:.3f} ms",
           tr("peak FP32 (SMs x lanes x 2 x clock)"): f"{peak:.1f} TFLOP/s",
           tr("ridge point (FP32 peak / clock-derived bandwidth)"): f"{ridge:.1f} FLOP/B",
           tr("resident threads (SMs x threads per SM)"): d["resident threads on the GPU"]}
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        out[tr("datasheet FP32")] = f"{fp32:g} TFLOP/s"
    return out


def benchmark(ctx) -> lab.Result:
    n = ctx.args.size or (2**24 if ctx.quick else L.BENCH_N)
    n, note = plan.fit(n, L.bench_bytes, device.info())
    if note:
        print(tr(note))
    rows, summary = bandwidth(n)
    d = device.info()
    bw = [{"figure": tr("theoretical (2 x memory clock x bus width)"), "GB/s": summary["theoretical_gbps"]},
          {"figure": tr("datasheet"), "GB/s": summary["datasheet_gbps"]},
          {"figure": tr("measured ceiling ({method}, cached)", method=summary["measured_method"]),
           "GB/s": summary["measured_ceiling_gbps"]}]
    bw += [{"figure": tr("measured: {variant}, n = {n}", variant=r["variant"], n=n), "GB/s": r["gbps"]} for r in rows]
    for r in bw:
        r["of theoretical"] = r["GB/s"] / summary["theoretical_gbps"] if r["GB/s"] else None
    checks = L.version_checks(L.versions())
    smoke = L.smoke_tests(ctx.args.arch)
    return lab.Result(rows=rows, meta=dict(device=d.as_dict(), versions_checked=checks, smoke=smoke,
                                           bandwidth=summary, table_mismatches=L.table_mismatches(),
                                           profile_notes=L.profile_notes()),
                      tables=[(bw, None, tr("Memory bandwidth of {gpu}", gpu=d.name))],
                      ok=all(r["result"] != "FAILED" for r in smoke))


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    summary, rows = data["bandwidth"], data["rows"]
    labels, values = [tr("theoretical (2 x mem clock x bus)")], [summary["theoretical_gbps"]]
    if summary.get("datasheet_gbps"):
        labels.append(tr("datasheet"))
        values.append(summary["datasheet_gbps"])
    fixed = len(values)
    for k, v in summary.get("measured_all", {}).items():
        labels.append(tr("measured: {probe} (ceiling probe)", probe=k))
        values.append(v)
    for r in rows:
        labels.append(tr("measured: {variant} ({gib:.1f} GiB moved)", variant=r["variant"],
                         gib=r["shape"][0] * 8 / GiB))
        values.append(r["gbps"])
    colors = ["tab:gray"] * fixed + ["tab:blue"] * (len(values) - fixed)
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_bars(path, labels, values, ylabel="GB/s (bytes read + written)", colors=colors,
                             title=tr("{gpu}: theoretical vs measured memory bandwidth", gpu=data.get("gpu", "GPU")))]
