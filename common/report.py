"""Tables on the terminal, JSON under results/<gpu>/, PNG plots with matplotlib.

Every measurement row carries: lab, variant, impl ('cuda' | 'triton' | 'peer'), shape, dtype, ms (median), spread,
gbps, tflops, ceiling_gbps (the measured HBM ceiling), frac_ceiling, and, in the file's header, the GPU name,
library versions, date and git commit. Labs add their own columns (vs_peer, sectors per request, ...).
"""
from __future__ import annotations

import datetime
import json
import math
import os
import platform
import subprocess
import sys

from . import device, table
from .i18n import tr
from .table import _fmt  # noqa: F401 - the report API

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---------------------------------------------------------------------------------------------------------------------
# Tables; a compile report names each kernel's variants the way the correctness table does
# ---------------------------------------------------------------------------------------------------------------------
def print_table(rows: list[dict], columns: list[str] | None = None, *, title: str | None = None, file=None,
                used_by: dict | None = None, width: int = 0) -> None:
    """A plain aligned table (common.table.print_table). A table with a "kernel" column also says which variants
    launch each kernel, under the names the correctness table gives them: `used_by` {kernel: [variant, ...]}, or,
    left out, the names of the lab whose compile report is printing (common.table.naming, set by common.lab.run)."""
    cols = list(columns or (rows[0].keys() if rows else []))
    if used_by is None and "kernel" in cols and not {"variant", table.USED_BY} & set(cols):
        used_by = table.kernel_names([str(r.get("kernel", "")) for r in rows], _arch_of(rows))
    table.print_kernel_table(rows, columns, title=title, file=file, used_by=used_by, width=width)


def _arch_of(rows: list[dict]) -> str:
    archs = {str(r["arch"]) for r in rows if r.get("arch")}
    return archs.pop() if len(archs) == 1 else device.DEFAULT_ARCH


def git_commit() -> str:
    """The commit the numbers come from (COURSE_COMMIT overrides, for copies of the tree without .git)."""
    if os.environ.get("COURSE_COMMIT"):
        return os.environ["COURSE_COMMIT"]
    try:
        out = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             timeout=10)
        sha = out.stdout.strip() or "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def versions() -> dict:
    """Versions of everything that can change a number."""
    v = {"python": platform.python_version()}
    for mod in ("numpy", "cupy", "triton", "torch", "matplotlib"):
        m = sys.modules.get(mod)
        if m is None:
            try:
                if mod == "triton":
                    # through common.triton_support, which picks the interpreter or the compiler before Triton's first
                    # import (imported bare here, every kernel this process builds later would get the wrong one)
                    from .triton_support import triton as m
                else:
                    m = __import__(mod)
            except Exception:  # noqa: BLE001 - any import failure just means "not available"
                v[mod] = "missing"
                continue
        v[mod] = getattr(m, "__version__", "?")
    from . import cuda

    v["nvrtc"] = cuda.nvrtc_version()
    if device.has_gpu():
        d = device.info()
        v["cuda_driver"], v["cuda_runtime"] = d.driver_cuda, d.runtime_cuda
    return v


def meta(command: str | None = None) -> dict:
    gpu = device.info().name if device.has_gpu() else f"none ({device.no_gpu_reason()})"
    return {
        "gpu": gpu,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(),
        "versions": versions(),
        "command": command or " ".join([os.path.basename(sys.executable)] + sys.argv),
    }


def results_root() -> str:
    """Where measurements are written: results/, or COURSE_RESULTS when set (the test suite points it at a temporary
    folder, so a test run never changes a committed file)."""
    return os.environ.get("COURSE_RESULTS") or os.path.join(ROOT, "results")


def results_dir(slug: str | None = None, root: str | None = None) -> str:
    """results/<gpu>/ for the GPU at hand (results/no-gpu/ without one, which git ignores)."""
    d = os.path.join(root or results_root(), slug or device.gpu_slug())
    os.makedirs(d, exist_ok=True)
    return d


def row(lab: str, variant: str, impl: str, shape, dtype: str, timing=None, *, nbytes: float | None = None,
        flops: float | None = None, ceiling_gbps: float | None = None, **extra) -> dict:
    """One measurement as a flat dict (timing: a common.bench.Timing, or None for a row with no time)."""
    r = {"lab": lab, "variant": variant, "impl": impl,
         "shape": list(shape) if isinstance(shape, (tuple, list)) else [shape], "dtype": dtype,
         "ms": None, "spread": None, "gbps": None, "tflops": None, "ceiling_gbps": ceiling_gbps, "frac_ceiling": None}
    if timing is not None:
        r["ms"] = timing.median_ms
        r["spread"] = round(timing.spread, 4)
        r["clock"] = timing.clock
        if nbytes is not None:
            r["gbps"] = timing.gbps(nbytes)
            if ceiling_gbps:
                r["frac_ceiling"] = r["gbps"] / ceiling_gbps
        if flops is not None:
            r["tflops"] = timing.tflops(flops)
    r.update(extra)
    return r


def write_json(name: str, rows: list[dict], *, out_dir: str | None = None, **header) -> str:
    """Write {meta..., header..., rows: [...]} to <out_dir>/<name>.json and return the path."""
    out_dir = out_dir or results_dir()
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{name}.json")
    doc = dict(meta())
    doc.update(header)
    doc["rows"] = rows
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, default=_json_default)
        f.write("\n")
    return path


def _json_default(o):
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    return str(o)


def read_json(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


# ---------------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------------
def pyplot():
    """matplotlib.pyplot with a file-only backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .i18n import matplotlib_fonts

    matplotlib_fonts()          # Korean output: a font with Hangul (koreanize-matplotlib)
    return plt


def save(fig, path: str, *, note: str | None = None, dpi: int = 120) -> str:
    """Lay a figure out, write it to `path` as a PNG and close it; returns path. note: small print under the axes (a
    footnote), with room made for its lines."""
    bottom = 0.0
    if note:
        fig.text(0.01, 0.01, note, ha="left", va="bottom", fontsize=8, color="#333333")
        bottom = (0.1 + 0.15 * (note.count("\n") + 1)) / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    return path


def plot_lines(path: str, x, series: dict, *, xlabel: str, ylabel: str, title: str, logx: bool = True,
               logy: bool = False, hlines: dict | None = None, vlines: dict | None = None, xticks=None,
               xticklabels=None, shade: list | None = None, styles: dict | None = None, note: str | None = None,
               legend_outside: bool = False) -> str:
    """Line plot of several series over one x axis, with labelled horizontal/vertical reference lines.

    series: {label: [y...]} (None for a missing point); hlines/vlines: {label: value};
    shade: [(x0, x1, label), ...] regions to shade and label; styles: {label: matplotlib line keywords} for the series
    that need their own colour or line style; note: small print under the axes (a footnote); legend_outside: the
    legend to the right of the axes instead of on them.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(11.5 if legend_outside else 9, 5.2 + 0.16 * (note or "").count("\n")
                                    + (0.3 if note else 0)))
    for label, ys in series.items():
        pts = [(a, b) for a, b in zip(x, ys) if b is not None]
        if pts:
            kw = dict(marker="o", ms=3, lw=1.6)
            kw.update((styles or {}).get(label, {}))
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **kw)
    styles = ["--", ":", "-."]
    for i, (label, y) in enumerate((hlines or {}).items()):
        ax.axhline(y, ls=styles[i % 3], color="gray", lw=1)
        ax.annotate(tr(label), xy=(0.01, y), xycoords=("axes fraction", "data"), va="bottom", fontsize=8,
                    color="dimgray")
    for i, (label, xv) in enumerate((vlines or {}).items()):
        ax.axvline(xv, ls=":", color="tab:gray", lw=1)
        ax.annotate(tr(label), xy=(xv, 0.02), xycoords=("data", "axes fraction"), rotation=90, va="bottom",
                    fontsize=8, color="dimgray")
    for x0, x1, label in shade or []:
        ax.axvspan(x0, x1, alpha=0.07, color="tab:blue")
        ax.annotate(tr(label), xy=((x0 * x1) ** 0.5 if logx else (x0 + x1) / 2, 0.97),
                    xycoords=("data", "axes fraction"),
                    ha="center", va="top", fontsize=8)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    if xticks is not None:
        ax.set_xticks(xticks)
        if xticklabels is not None:
            ax.set_xticklabels(xticklabels, fontsize=8)
    ax.set_xlabel(tr(xlabel))
    ax.set_ylabel(tr(ylabel))
    ax.set_title(tr(title), fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    if legend_outside:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    else:
        ax.legend(fontsize=8)
    return save(fig, path, note=tr(note) if note else note)


def plot_bars(path: str, labels: list[str], values: list, *, ylabel: str, title: str,
              colors: list[str] | None = None, hlines: dict | None = None, annotate_fmt: str = "{:.0f}",
              note: str | None = None, missing: str = "not run", legend: dict | None = None) -> str:
    """Horizontal bars (a ladder of versions), each annotated with its value.

    A value of None draws no bar, only `missing` in gray on its row (a rung that was not run at this size); note:
    small print under the axes (a footnote); legend: {label: colour}, what each bar colour means, in one row under
    the x label.
    """
    plt = pyplot()
    n_note = note.count("\n") + 1 if note else 0
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(labels) + 1.6 + 0.16 * n_note + (0.4 if legend else 0)))
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, [0.0 if v is None else v for v in values], color=colors)
    for y, v in zip(ys, values):
        if v is None:
            ax.annotate(tr(missing), xy=(0, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8,
                        color="gray", style="italic")
            continue
        ax.annotate(annotate_fmt.format(v), xy=(v, y), xytext=(3, 0), textcoords="offset points", va="center",
                    fontsize=8)
    for i, (label, x) in enumerate((hlines or {}).items()):
        ax.axvline(x, ls="--", color="gray", lw=1)
        ax.annotate(tr(label), xy=(x, 1.0), xycoords=("data", "axes fraction"), rotation=90, ha="right", va="top",
                    fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel(tr(ylabel))
    ax.set_title(tr(title), fontsize=11)
    ax.grid(True, axis="x", alpha=0.3)
    if legend:
        from matplotlib.patches import Patch
        from matplotlib.transforms import ScaledTranslation

        ax.legend(handles=[Patch(color=c, label=tr(label)) for label, c in legend.items()], loc="upper center",
                  bbox_to_anchor=(0.5, 0),
                  bbox_transform=ax.transAxes + ScaledTranslation(0, -0.5, fig.dpi_scale_trans),  # under the x label
                  ncol=len(legend), fontsize=8.5, frameon=False)
    return save(fig, path, note=tr(note) if note else note)


IMPL_COLORS = {"cuda": "tab:blue", "triton": "tab:orange", "peer": "tab:gray"}


def plot_grouped_bars(path: str, groups: list, *, xlabel: str, title: str, legend: dict | None = None,
                      annotate_fmt: str = "{:.0f}", note: str | None = None, vlines: dict | None = None) -> str:
    """Horizontal bars in labelled groups (one case per group, one bar per contender), each bar annotated with its
    value, with a legend of what the colours mean.

    groups: [(header, [(label, value, color), ...]), ...], drawn top to bottom; title: may span several lines
    (centred over the figure); legend: {label: color}, shown under the axes; note: small print under the legend;
    vlines: {label: x} reference lines.
    """
    from matplotlib.patches import Patch

    plt = pyplot()
    n_rows = sum(1 + len(bars) for _, bars in groups)
    n_title = title.count("\n") + 1
    n_legend = math.ceil(len(legend or {}) / 2)
    n_note = note.count("\n") + 1 if note else 0
    top_in, bottom_in = 0.05 + 0.19 * n_title, 0.1 + 0.2 * n_legend + 0.17 * n_note
    height = 0.3 * n_rows + 0.9 + top_in + bottom_in
    fig, ax = plt.subplots(figsize=(9.5, height))
    y, ticks, labels, headers, seps = n_rows, [], [], [], []
    for g, (header, bars) in enumerate(groups):
        y -= 1
        ticks.append(y)
        labels.append(header)
        headers.append(len(labels) - 1)
        if g:
            seps.append(y + 0.5)
        for label, value, color in bars:
            y -= 1
            ax.barh(y, value, color=color, height=0.78)
            ax.annotate(annotate_fmt.format(value), xy=(value, y), xytext=(3, 0), textcoords="offset points",
                        va="center", fontsize=8)
            ticks.append(y)
            labels.append(label)
    for s in seps:
        ax.axhline(s, color="gray", lw=0.6)
    for label, x in (vlines or {}).items():
        ax.axvline(x, ls="--", color="gray", lw=1)
        ax.annotate(tr(label), xy=(x, 1.0), xycoords=("data", "axes fraction"), rotation=90, ha="right", va="top",
                    fontsize=8)
    ax.set_yticks(ticks)
    ax.set_yticklabels(labels, fontsize=8)
    for i in headers:
        ax.get_yticklabels()[i].set_fontweight("bold")
        ax.get_yticklabels()[i].set_fontsize(8.5)
    ax.set_ylim(-0.6, n_rows - 0.4)
    ax.set_xlim(0, max([v for _, bars in groups for _, v, _ in bars] + [1e-9]) * 1.12)
    ax.set_xlabel(tr(xlabel))
    ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(tr(title), fontsize=10.5, y=1 - 0.12 / height, va="top")
    if legend:
        fig.legend(handles=[Patch(color=c, label=tr(k)) for k, c in legend.items()], loc="lower center",
                   bbox_to_anchor=(0.5, (0.05 + 0.17 * n_note) / height), ncol=2, fontsize=8, frameon=False)
    if note:
        fig.text(0.5, 0.05 / height, tr(note), ha="center", va="bottom", fontsize=7.5, color="dimgray")
    fig.tight_layout(rect=(0, bottom_in / height, 1, 1))      # tight_layout makes room for the suptitle
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
