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


def plot_speed_vs_error(rows, path, gpu: str | None = None) -> str:
    plt = report.pyplot()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for r in rows:
        if r["rel err"] in (None, float("inf")) or not r.get("tflops"):
            continue
        ax.scatter(r["rel err"], r["tflops"], s=30)
        ax.annotate(r["precision"], (r["rel err"], r["tflops"]), xytext=(4, 3), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
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
