"""Lab 4.1's figure: the repository's roofline (the roofs, each lab's headline pair - its best kernel and its library
peer - coloured by lab with one label a lab, the k-FMA sweep) beside the list of those pairs."""
from __future__ import annotations

import math
import textwrap

import numpy as np

from common import report
from common.i18n import korean, tr

from .lab import UNITS, Ceilings
from .phrases import say
from .selection import _normalized, _short_lab
from .table import _lab_key, named_points, on_roofline


# ---------------------------------------------------------------------------------------------------------------------
# The plot
# ---------------------------------------------------------------------------------------------------------------------
IMPL_MARKERS = {"cuda": "o", "triton": "^", "peer": "x"}
IMPL_NAMES = {"cuda": "ours, CUDA C", "triton": "ours, Triton", "peer": "library peer"}
# one colour per lab with points on the roofline, in the course's order (tab10 without its red, which is the k-FMA
# sweep's, and its gray, which marks the labs with no point there; then darker shades, ordered so that labs whose
# points share a cluster differ): dark enough for the labels' text
LAB_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#d6616b",
               "#393b79", "#637939", "#e6550d", "#6b6ecf", "#008080", "#bd9e39", "#a55194", "#843c39", "#8ca252",
               "#5254a3", "#7b4173"]
NO_POINT_COLOR = "dimgray"      # labs with no point on the roofline (right panel only)
SWEEP_COLOR = "#d62728"
DSHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16", "tf32": "tf32", "int32": "i32"}


def lab_colors(placed: list[dict]) -> dict:
    """lab -> colour, for every lab with points on the roofline (in the course's order; the same colour in both
    panels)."""
    labs = sorted({p["lab"] for p in placed if on_roofline(p)}, key=_lab_key)
    return {name: LAB_PALETTE[i % len(LAB_PALETTE)] for i, name in enumerate(labs)}


def _lab_title(lab_name: str) -> str:
    return _short_lab(lab_name).replace("_", " ")


def _short_name(name: str, width: int = 34) -> str:
    name = _normalized(name)
    return name if len(name) <= width else name[:width - 1].rstrip(" ,") + "\u2026"


def point_label(n: dict, placed: list[dict] = (), said: bool = False) -> str:
    """The one label of a lab on the roofline: its number and title ('1.2 vector add'); the pair itself is listed
    beside the plot (pair_lines)."""
    return _lab_title(n["lab"])


def pair_lines(n: dict, said: bool = False) -> tuple[str, str]:
    """Two lines for the list beside the roofline: 'lab (case): ours vs peer x.xx' and 'ours name f | peer name f'
    (f: fraction of its roof)."""
    t = tr if said else (lambda s: s)
    ratio = f"{n['ratio']:.2f}x" if isinstance(n.get("ratio"), (int, float)) else "-"
    head = f"{_lab_title(n['lab'])}  ({n.get('case', '')}): {t('ours vs peer')} {ratio}"
    if not n.get("on_roofline"):
        head += t(" - no roofline point")

    def one(p):
        return f"{_short_name(p['variant'])} {p['frac_roof']:.2f}" if p else "-"

    peer = f"peer {one(n['peer'])}" if n["peer"] else t("(no library peer)")
    return head, f"   {one(n['best'])}  |  {peer}"


def headline_entry(n: dict) -> dict:
    """A named pair as the JSON records it (in English)."""
    b, p = n["best"], n["peer"] or {}
    return {"lab": n["lab"], "case": n.get("case"), "ratio": n.get("ratio"), "ours": b["variant"],
            "ours_frac_roof": b.get("frac_roof"), "peer": p.get("variant"), "peer_frac_roof": p.get("frac_roof"),
            "on_roofline": n.get("on_roofline"), "label": point_label(n)}


def _stack(fig, ax, items: list[dict], x_px: float, y_top_px: float, step_px: float):
    """Place labels one under the other from y_top_px down, left-aligned at x_px (display pixels), each with a leader
    to its point; items are in top-to-bottom order."""
    inv = ax.transData.inverted()
    for k, it in enumerate(items):
        y = y_top_px - k * step_px
        tx, ty = inv.transform((x_px, y))
        ax.annotate(it["text"], xy=it["xy"], xytext=(tx, ty), textcoords="data", ha=it.get("ha", "left"),
                    va="center", fontsize=7, color=it["color"], zorder=6, linespacing=1.05,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85),
                    arrowprops=dict(arrowstyle="-", color=it["color"], lw=0.7, alpha=0.8,
                                    shrinkA=1, shrinkB=3, relpos=it.get("relpos", (0.0, 0.5))))


def roof_label_groups(ceil: Ceilings, within: float = 1.1) -> list[list[str]]:
    """The units whose roofs share one label (peaks within `within` of each other, which would print on top of each
    other), lowest roof first, each group in UNITS order: [['fp32'], ['tf32'], ['bf16', 'fp16'], ['fp8']] on a GPU
    whose bf16 and fp16 tensor-core rates are equal."""
    groups: list[list[str]] = []
    for u in sorted((u for u in UNITS if ceil.ridge(u)), key=lambda u: ceil.peaks[u]):
        if groups and ceil.peaks[u] / min(ceil.peaks[v] for v in groups[-1]) < within:
            groups[-1].append(u)
        else:
            groups.append([u])
    return [sorted(g, key=UNITS.index) for g in groups]


def plot_roofline(path: str, placed: list[dict], ceil: Ceilings, sweep: list[dict], title: str,
                  missing: list[str] = ()) -> str:
    """One figure for the repository: the roofline (left) with each lab's headline pair only - its best kernel and
    its library peer at the lab's headline case, as the READMEs choose them - one label a lab, the roofs labelled in
    the right margin, the k-FMA sweep; and (right) the list of those pairs, each kernel's fraction of its roof. Every
    other placed kernel is in the table the lab prints and the JSON's placed rows, not on the plot. `missing`: what the
    figure lacks (a GPU without recorded results, roofs rebuilt), written in a box on the roofline."""
    plt = report.pyplot()
    from matplotlib.gridspec import GridSpec
    from matplotlib.lines import Line2D

    fig = plt.figure(figsize=(18, 10.5))
    gs = GridSpec(1, 2, width_ratios=[2.0, 1.2], figure=fig, left=0.045, right=0.99, bottom=0.065, top=0.93,
                  wspace=0.3)
    ax = fig.add_subplot(gs[0, 0])
    axs = fig.add_subplot(gs[0, 1])
    named = named_points(placed)
    colors = lab_colors([p for n in named for p in (n["best"], n["peer"]) if p is not None])
    shown = [n for n in named if n["on_roofline"]]
    pts = [p for n in shown for p in (n["best"], n["peer"]) if p is not None and on_roofline(p)]
    ais = [p["ai"] for p in pts] + [r.get("ai") or 0 for r in sweep]
    ridges = {u: ceil.ridge(u) for u in UNITS if ceil.ridge(u)}
    xmin = max(min([a for a in ais if a > 0] or [0.1]) / 3, 1e-3)
    xmax = max(max(ais or [1.0]), *(ridges.values() or [1.0])) * 4
    top = max(list(ceil.peaks.values()) or [p["achieved_tflops"] for p in pts] + [r["tflops"] for r in sweep]
              or [1.0])
    n_compute = sum(1 for n in shown if n["bound"] == "compute")
    ymin = min([p["achieved_tflops"] for p in pts] + [r["tflops"] for r in sweep] + [top]) / 3
    ymax = top * 1.4 * 10 ** (0.12 * max(n_compute, 1))          # room above the roofs for the compute-bound names
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    # the memory diagonal up to the highest roof, then each unit's flat roof from its ridge
    xs = np.logspace(math.log10(xmin), math.log10(xmax), 200)
    xr = xs[xs <= top * 1e3 / ceil.hbm_gbps]
    ax.plot(xr, xr * ceil.hbm_gbps / 1e3, color="black", lw=1.8, zorder=2)
    if ceil.datasheet.get("hbm_gbps") and abs(ceil.datasheet["hbm_gbps"] - ceil.hbm_gbps) > 1:
        ax.plot(xr, xr * ceil.datasheet["hbm_gbps"] / 1e3, color="gray", lw=0.8, ls="--", zorder=2)
    unit_colors = {"fp32": "tab:blue", "tf32": "tab:purple", "bf16": "tab:red", "fp16": "tab:pink", "fp8": "tab:brown"}
    for u, r in ridges.items():
        pk = ceil.peaks[u]
        ax.plot([r, xmax], [pk, pk], color=unit_colors[u], lw=1.6, zorder=2)
        ax.plot([r], [pk], marker="D", color=unit_colors[u], ms=4, zorder=2)
        ax.axvline(r, color=unit_colors[u], ls=":", lw=0.6, alpha=0.6, zorder=1)
        dpk = ceil.datasheet.get(u)
        if dpk and abs(dpk - pk) > 0.5:
            ax.plot([dpk * 1e3 / ceil.hbm_gbps, xmax], [dpk, dpk], color=unit_colors[u], lw=0.8, ls="--", zorder=2)
    # the roofs' names in the right margin, one per roof (two roofs within 10% share one: bf16 / fp16)
    for g in roof_label_groups(ceil):
        pk = max(ceil.peaks[u] for u in g)
        names = " / ".join(u for u in g)
        figs = " / ".join(f"{ceil.peaks[u]:,.0f}" for u in g)
        what = tr("FFMA (CUDA cores)") if g == ["fp32"] else "tensor cores"
        ridge = " / ".join(f"{ridges[u]:.0f}" for u in g)
        ax.annotate(f"{names} {what}\n{figs} TFLOP/s, ridge {ridge}", xy=(1.0, pk),
                    xycoords=("axes fraction", "data"), xytext=(4, 0), textcoords="offset points", ha="left",
                    va="center", fontsize=7.5, color=unit_colors[g[0]], annotation_clip=False)
    # the pairs: colour = lab, marker = ours (CUDA C / Triton) or the library peer, joined by a dotted line
    for n in shown:
        col = colors[n["lab"]]
        for p in (n["best"], n["peer"]):
            if p is not None and on_roofline(p):
                ax.scatter([p["ai"]], [p["achieved_tflops"]], marker=IMPL_MARKERS.get(p["impl"], "s"),
                           s=44 if p["impl"] == "peer" else 36, color=col, zorder=4, linewidths=1.4)
        if n["peer"] is not None and on_roofline(n["peer"]):
            ax.plot([n["best"]["ai"], n["peer"]["ai"]], [n["best"]["achieved_tflops"], n["peer"]["achieved_tflops"]],
                    color=col, ls=":", lw=1.0, zorder=3)
    if sweep:
        ax.plot([r["ai"] for r in sweep], [r["tflops"] for r in sweep], color=SWEEP_COLOR, marker="s", ms=4, lw=1.2,
                zorder=4)
    ax.set_xlabel(tr("arithmetic intensity (FLOP per byte of compulsory HBM traffic)"))
    ax.set_ylabel(tr("achieved TFLOP/s"))
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="major", alpha=0.25)
    handles = [Line2D([], [], color="k", marker=m, ls="", label=tr(IMPL_NAMES[k])) for k, m in IMPL_MARKERS.items()]
    handles += [Line2D([], [], color="k", ls=":", label=tr("a lab's headline: its best kernel and its peer")),
                Line2D([], [], color="gray", ls="--", label=tr("datasheet roofs"))]
    if sweep:
        handles.append(Line2D([], [], color=SWEEP_COLOR, marker="s", label=tr("k-FMA chain sweep (this lab)")))
    ax.legend(handles=handles, fontsize=7.5, loc="upper left", title=tr("colour = lab (its pair listed at right)"),
              title_fontsize=7.5, framealpha=0.9)
    # the names, placed where nothing else is (display pixels, after the layout is final)
    fig.canvas.draw()
    to_px = ax.transData.transform
    dpi_scale = fig.dpi / 72.0
    line_px = 7.5 * 1.3 * dpi_scale
    mem = [n for n in shown if n["bound"] == "memory"]
    comp = [n for n in shown if n["bound"] == "compute"]
    if mem:
        # a column right of the memory-bound points, from the floor up; the leaders run left to the points, ordered
        # so that they do not cross (by angle from the column)
        x_right = max(to_px((p["ai"], p["achieved_tflops"]))[0] for n in mem for p in (n["best"], n["peer"])
                      if p is not None and on_roofline(p))
        x_col = x_right + 40 * dpi_scale
        floor_px = to_px((xmin, ymin))[1] + 8 * dpi_scale
        step = line_px + 4 * dpi_scale
        y_top = floor_px + step * (len(mem) - 0.5)
        y_mid = (y_top + floor_px) / 2

        def angle(n):
            px, py = to_px((n["best"]["ai"], n["best"]["achieved_tflops"]))
            return math.atan2(py - y_mid, x_col - px)

        items = [{"text": point_label(n), "xy": (n["best"]["ai"], n["best"]["achieved_tflops"]),
                  "color": colors[n["lab"]]} for n in sorted(mem, key=angle, reverse=True)]
        _stack(fig, ax, items, x_col, y_top, step)
    if comp:
        # above the roofs, right-aligned at each point's x: a staircase (the leftmost point's name lowest), so each
        # leader drops to its point without crossing another name
        comp = sorted(comp, key=lambda n: (n["best"]["ai"], n["best"]["achieved_tflops"]))
        y_base = to_px((xmin, top * 1.25))[1] + line_px
        step = line_px + 5 * dpi_scale
        prev = -1e9
        for k, n in enumerate(comp):
            px = max(to_px((n["best"]["ai"], n["best"]["achieved_tflops"]))[0], prev + 10 * dpi_scale)
            prev = px
            tx, ty = ax.transData.inverted().transform((px, y_base + k * step))
            ax.annotate(point_label(n), xy=(n["best"]["ai"], n["best"]["achieved_tflops"]), xytext=(tx, ty),
                        ha="right", va="bottom", fontsize=7.5, color=colors[n["lab"]], zorder=6,
                        bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85),
                        arrowprops=dict(arrowstyle="-", color=colors[n["lab"]], lw=0.7, alpha=0.8, shrinkA=0,
                                        shrinkB=3, relpos=(1.0, 0.0)))
    # HBM along its diagonal, in the empty triangle above it
    a0 = xmin * 2 ** 2.5
    (x0, y0), (x1, y1) = to_px((a0, a0 * ceil.hbm_gbps / 1e3)), to_px((a0 * 2, 2 * a0 * ceil.hbm_gbps / 1e3))
    how = next((w for w in ("measured", "datasheet") if w in ceil.sources.get("hbm", "measured")), "clock x bus")
    ax.annotate(f"HBM {ceil.hbm_gbps:,.0f} GB/s ({tr(how)})", xy=(a0, a0 * ceil.hbm_gbps / 1e3), xytext=(0, 5),
                textcoords="offset points", rotation=math.degrees(math.atan2(y1 - y0, x1 - x0)),
                rotation_mode="anchor", fontsize=8, ha="left", va="bottom")
    if missing:
        ax.text(0.99, 0.02, "\n".join(textwrap.fill(say(m), 56 if korean() else 80) for m in missing),
                transform=ax.transAxes, ha="right",
                va="bottom", fontsize=7.5, color="dimgray", zorder=7,
                bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="lightgray", alpha=0.9))
    _pairs_panel(axs, named, colors)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _pairs_panel(ax, named: list[dict], colors: dict) -> None:
    """The headline pairs, lab by lab, in the lab's colour: case, ours vs the peer (the README's ratio), and each
    kernel's fraction of its roof."""
    ax.set_axis_off()
    ax.set_title(tr("each lab's headline (as in the README): its best kernel vs its library peer\n"
                    "number after a kernel = its fraction of the roof (achieved / min(peak, AI x HBM))"), fontsize=8.5,
                 loc="left")
    n_lines = max(2 * len(named), 1)
    step = min(1.0 / n_lines, 0.03)
    y = 1.0
    prev_phase = None
    for n in named:
        phase = _lab_key(n["lab"])[0]
        if prev_phase is not None and phase != prev_phase:
            ax.axhline(y + step * 0.15, color="lightgray", lw=0.6)
        prev_phase = phase
        head, pair = pair_lines(n, said=True)
        col = colors.get(n["lab"], NO_POINT_COLOR)
        ax.text(0.0, y, head, transform=ax.transAxes, fontsize=7.5, color=col, va="top", fontweight="bold")
        ax.text(0.0, y - step, pair, transform=ax.transAxes, fontsize=7.2, color=col, va="top")
        y -= 2 * step
    if not named:
        ax.text(0.0, 1.0, tr("(no headline pair recorded)"), transform=ax.transAxes, fontsize=8, va="top")
