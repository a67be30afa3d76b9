"""Lab 4.5's plots, drawn from the results JSON (so --replot redraws them without a GPU): the GEMM error as K grows,
and speed against error per precision."""
from __future__ import annotations

import os

from common import report
from common.i18n import tr

from . import lab as L


def plot_k_sweep(rows, path) -> str:
    ks = sorted({r["K"] for r in rows})
    names = list(dict.fromkeys(r["precision"] for r in rows))
    by = {(r["precision"], r["K"]): r["rel err"] for r in rows}
    series = {n: [by.get((n, k)) if by.get((n, k)) not in (None, float("inf")) else None for k in ks] for n in names}
    return report.plot_lines(path, ks, series, xlabel="K (M = N = 1024)", ylabel="relative error vs float64",
                             title="GEMM error against the float64 product of the fp32 inputs, as K grows",
                             logy=True, xticks=ks, xticklabels=[str(k) for k in ks])


def label_offsets(frac: list[tuple[float, float]], near: float = 0.04, step: float = 10.0) -> list[tuple]:
    """Where each point's label goes, from the points' positions as fractions of the axes: (dx, dy in points, ha,
    leader line or not). A label sits to the right of its point, or to the left in the right quarter of the axes (so
    it stays inside them); points closer than `near` to one another (fp8 with and without use_fast_accum: the same
    error, a few % apart in speed) get their labels stacked `step` points apart, the top point's on top, each with a
    leader line to its point, so no label lies on another."""
    out: list = [None] * len(frac)
    order = sorted(range(len(frac)), key=lambda i: -frac[i][1])
    done: set = set()
    for i in order:
        if i in done:
            continue
        group = [j for j in order if j not in done and abs(frac[j][0] - frac[i][0]) < near
                 and abs(frac[j][1] - frac[i][1]) < near]
        done.update(group)
        for k, j in enumerate(group):
            left = frac[j][0] > 0.75
            if len(group) == 1:
                out[j] = (-4 if left else 4, 3, "right" if left else "left", False)
            else:
                out[j] = (-14 if left else 14, step * ((len(group) - 1) / 2 - k) + 3, "right" if left else "left",
                          True)
    return out


def plot_speed_vs_error(rows, path, gpu: str | None = None) -> str:
    plt = report.pyplot()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    pts = [r for r in rows if r["rel err"] not in (None, float("inf")) and r.get("tflops")]
    for r in pts:
        ax.scatter(r["rel err"], r["tflops"], s=30)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.autoscale_view()
    to_frac = ax.transData + ax.transAxes.inverted()
    frac = [tuple(to_frac.transform((r["rel err"], r["tflops"]))) for r in pts]
    for r, (dx, dy, ha, leader) in zip(pts, label_offsets(frac)):
        ax.annotate(r["precision"], (r["rel err"], r["tflops"]), xytext=(dx, dy), textcoords="offset points",
                    fontsize=7, ha=ha, va="center" if leader else "baseline",
                    arrowprops=dict(arrowstyle="-", color="gray", lw=0.6, shrinkA=1, shrinkB=3) if leader else None)
    ax.set_xlabel(tr("relative error vs float64 (4096^3, standard normal inputs)"))
    ax.set_ylabel("TFLOP/s")
    ax.set_title(tr("GEMM speed against error per precision on {gpu}", gpu=gpu or tr('the GPU')), fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    return report.save(fig, path)


def plot(data: dict, out_dir: str) -> list[str]:
    """The error-vs-K sweep and speed against error per precision, from the JSON."""
    gpu = data.get("gpu", "GPU")
    paths = []
    if data.get("k_sweep"):
        paths.append(plot_k_sweep(data["k_sweep"], os.path.join(out_dir, f"{L.LAB}_error_vs_k.png")))
    pts = [{"precision": r["variant"], "rel err": r.get("rel_err"), "tflops": r.get("tflops")} for r in data["rows"]]
    if pts:
        paths.append(plot_speed_vs_error(pts, os.path.join(out_dir, f"{L.LAB}_speed_vs_error.png"), gpu))
    return paths
