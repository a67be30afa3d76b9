"""Lab 1.1's measuring side: the device and software-stack tables (every machine), the smoke test of every layer, the
copy that measures bandwidth (GPU), and the plot of theoretical against measured bandwidth (redrawn from the JSON by
--replot)."""
from __future__ import annotations

import os

from common import bench, cli, device, lab, report
from common.device import GiB

from . import lab as L

CPU_NOTE = "\nNothing was timed: no GPU. The Triton copy ran in the interpreter; CUDA C was only compiled."


def add_arguments(p) -> None:
    cli.add_size(p, "elements of the copy probe (default 2^28, quick 2^24)")
    p.add_argument("--errors", action="store_true", help="print the full table of known version-mismatch errors")


# ---------------------------------------------------------------------------------------------------------------------
# What is printed on every machine: the device (or the chosen arch), the stack, the rules, one action per layer
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    if device.has_gpu():
        report.print_table(L.device_rows(), title="The GPU, read off the device")
        bad = L.table_mismatches()
        print("ARCHS table agrees with this GPU" if not bad else "ARCHS table differs from this GPU: " + "; ".join(bad))
    else:
        report.print_table(L.arch_rows(args.arch), title=f"No GPU: {args.arch} from the course's table "
                                                          f"(example GPU's datasheet figures)")
        report.print_table(L.what_runs_here(args.arch), title="What runs on this machine")
    v = L.versions()
    report.print_table([{"component": k, "version": val} for k, val in v.items()], title="Software stack")
    checks = L.version_checks(v)
    if checks:
        report.print_table(checks, title="Compatibility rules")


def extra_checks(args) -> bool:
    """One tiny action per layer (a failure is explained), then the mismatch errors met most often."""
    smoke = L.smoke_tests(args.arch)
    report.print_table(smoke, title="One action per layer")
    errs = L.KNOWN_ERRORS if args.errors else L.KNOWN_ERRORS[:4]
    print("\nThe mismatch errors met most often (--errors for all):")
    for _, meaning, fix in errs:
        print(f"  * {meaning}\n      fix: {fix}")
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


def benchmark(ctx) -> lab.Result:
    n = ctx.args.size or (2**24 if ctx.quick else 2**28)
    rows, summary = bandwidth(n)
    d = device.info()
    bw = [{"figure": "theoretical (2 x memory clock x bus width)", "GB/s": summary["theoretical_gbps"]},
          {"figure": "datasheet", "GB/s": summary["datasheet_gbps"]},
          {"figure": f"measured ceiling ({summary['measured_method']}, cached)",
           "GB/s": summary["measured_ceiling_gbps"]}]
    bw += [{"figure": f"measured: {r['variant']}, n = {n}", "GB/s": r["gbps"]} for r in rows]
    for r in bw:
        r["of theoretical"] = r["GB/s"] / summary["theoretical_gbps"] if r["GB/s"] else None
    checks = L.version_checks(L.versions())
    smoke = L.smoke_tests(ctx.args.arch)
    return lab.Result(rows=rows, meta=dict(device=d.as_dict(), versions_checked=checks, smoke=smoke,
                                           bandwidth=summary, table_mismatches=L.table_mismatches()),
                      tables=[(bw, None, f"Memory bandwidth of {d.name}")],
                      ok=all(r["result"] != "FAILED" for r in smoke))


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    summary, rows = data["bandwidth"], data["rows"]
    labels, values = ["theoretical (2 x mem clock x bus)"], [summary["theoretical_gbps"]]
    if summary.get("datasheet_gbps"):
        labels.append("datasheet")
        values.append(summary["datasheet_gbps"])
    fixed = len(values)
    for k, v in summary.get("measured_all", {}).items():
        labels.append(f"measured: {k} (ceiling probe)")
        values.append(v)
    for r in rows:
        labels.append(f"measured: {r['variant']} ({r['shape'][0] * 8 / GiB:.1f} GiB moved)")
        values.append(r["gbps"])
    colors = ["tab:gray"] * fixed + ["tab:blue"] * (len(values) - fixed)
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_bars(path, labels, values, ylabel="GB/s (bytes read + written)", colors=colors,
                             title=f"{data.get('gpu', 'GPU')}: theoretical vs measured memory bandwidth")]
