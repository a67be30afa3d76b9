"""Lab 2.8's plots, drawn from the results JSON (so --replot redraws them without a GPU): the ladder over the sizes
measured and every rung at 4096^3, with footnotes on the rungs left out at the sizes where they are too slow."""
from __future__ import annotations

import os

from common import report
from common.i18n import korean, tr

from . import lab as L
from .lab import PEERS, VARIANTS


def left_out(rows: list[dict], names: list[str] | None = None) -> list[tuple[list[str], list[int]]]:
    """Which contenders were not run at which of the sizes the sweep measured: [(variants, sizes missing)], variants
    that miss the same sizes together, in ladder order (the slow early rungs stop at a size: RUNGS[n].max_bench)."""
    sizes = sorted({r["shape"][0] for r in rows})
    names = names or list(dict.fromkeys(r["variant"] for r in rows))
    by: dict = {}
    for name in names:
        have = {r["shape"][0] for r in rows if r["variant"] == name}
        if have and len(have) < len(sizes):
            by.setdefault(tuple(s for s in sizes if s not in have), []).append(name)
    return [(v, list(k)) for k, v in by.items()]


def _rung_list(names: list[str]) -> str:
    """'cuda 01 naive, cuda 02 coalesced, cuda 03 shared-memory tiling' -> 'cuda 01-03 (naive, coalesced, shared-memory
    tiling)' where the names are consecutive rungs."""
    nums = [int(n.split()[1]) for n in names if n.startswith("cuda ") and n.split()[1].isdigit()]
    if len(nums) == len(names) and len(nums) > 1 and nums == list(range(nums[0], nums[0] + len(nums))):
        return f"cuda {nums[0]:02d}-{nums[-1]:02d} ({', '.join(n.split(' ', 2)[2] for n in names)})"
    return ", ".join(names)


def _sizes_text(sizes: list[int]) -> str:
    """'8192', '4097 and 8192', '3000, 4096, 4097 and 8192'."""
    s = [str(x) for x in sizes]
    if korean():
        return ", ".join(s)
    return s[0] if len(s) == 1 else ", ".join(s[:-1]) + " and " + s[-1]


# what each bar colour of the ladder means (report.IMPL_COLORS), in the legend under the axes
LADDER_LEGEND = {"cuda": "CUDA C (ours: the ladder's rungs)", "triton": "Triton (ours)",
                 "peer": "library peer (cuBLAS through cupy and torch)"}


def plot_ladder(path: str, entries: list[tuple], *, at: int, gpu: str, cub: float | None, note: str | None) -> str:
    """The ladder at at^3: [(variant, TFLOP/s or None, impl)] as bars coloured by what wrote them (a legend under the
    axes says which colour is which), a rung not run at this size marked on its row, cuBLAS and 0.9x cuBLAS dashed;
    note: the footnote on the rungs left out."""
    impls = dict.fromkeys(i for _, _, i in entries)
    return report.plot_bars(
        path, [e[0] for e in entries], [e[1] for e in entries], ylabel="TFLOP/s",
        title=tr("SGEMM {at}^3 on {gpu}: every rung against cuBLAS", at=at, gpu=gpu),
        colors=[report.IMPL_COLORS.get(i, "tab:blue") for _, _, i in entries],
        hlines=({f"cuBLAS {cub:.1f}": cub, tr("0.90x cuBLAS {tflops:.1f}", tflops=0.9 * cub): 0.9 * cub}
                if cub else None),
        annotate_fmt="{:.1f}", note=note, missing=tr("not run at {at}^3 (see the note below)", at=at),
        legend={LADDER_LEGEND.get(i, i): report.IMPL_COLORS.get(i, "tab:blue") for i in impls})


def plot(data: dict, out_dir: str) -> list[str]:
    """The sweep over sizes (<LAB>.png: sizes evenly spaced, so 4096 and 4097 get a tick each) and the ladder at 4096
    (<LAB>_ladder.png: every rung, the ones not run at that size marked). A footnote on each says which rungs were
    left out at which sizes."""
    rows, gpu = data["rows"], data.get("gpu", "GPU")
    peak = data.get("device", {}).get("datasheet", {}).get("fp32_tflops")
    sizes = sorted({r["shape"][0] for r in rows})
    names = list(dict.fromkeys([v.name for v in VARIANTS + PEERS] + [r["variant"] for r in rows]))
    series = {}
    for name in names:
        by = {r["shape"][0]: r["tflops"] for r in rows if r["variant"] == name}
        if by:
            series[name] = [by.get(s) for s in sizes]
    # the CUDA C rungs dark to bright in ladder order, Triton dashed orange, the libraries black / gray
    import matplotlib

    rungs = [n for n in series if n.startswith("cuda ")]
    cmap = matplotlib.colormaps["viridis"]
    styles = {n: {"color": cmap(i / max(len(rungs) - 1, 1) * 0.92)} for i, n in enumerate(rungs)}
    peer_styles = [{"color": "black", "ls": "--", "marker": "s"}, {"color": "gray", "ls": ":", "marker": "D"}]
    for n in series:
        if n not in styles:
            impl = next((r["impl"] for r in rows if r["variant"] == n), "")
            styles[n] = ({"color": "tab:orange", "ls": "--", "marker": "^"} if impl == "triton"
                         else peer_styles.pop(0) if impl == "peer" and peer_styles else {"color": "tab:red"})
    tile = (data.get("rung11_config") or {}).get("BM") or 128
    ragged = [s for s in sizes if s % tile]
    gaps = left_out(rows, names)
    foot = [tr("left out at {sizes} (too slow there): {rungs}", sizes=_sizes_text(miss), rungs=_rung_list(v))
            for v, miss in gaps]
    if ragged:
        foot.append(tr("* not a multiple of {tile} (rung 11's block tile): the tiles at the edges of C are partial",
                       tile=tile))
    hl = {tr("fp32 peak (datasheet) {peak} TFLOP/s", peak=peak): peak} if peak else {}
    pos = list(range(len(sizes)))
    paths = [report.plot_lines(os.path.join(out_dir, f"{L.LAB}.png"), pos, series,
                               xlabel="M = N = K (the sizes measured, evenly spaced)",
                               ylabel="TFLOP/s (2 M N K / time)",
                               title=tr("SGEMM ladder on {gpu} (fp32, L2 flushed)", gpu=gpu),
                               logx=False, hlines=hl, xticks=pos,
                               xticklabels=[f"{s}*" if s in ragged else str(s) for s in sizes], styles=styles,
                               note="\n".join(foot) or None, legend_outside=True)]
    at = 4096 if 4096 in sizes else sizes[-1]
    order = {n: i for i, n in enumerate(names)}
    ladder = sorted((r for r in rows if r["shape"][0] == at), key=lambda r: order.get(r["variant"], 99))
    skipped = [n for n in names if n in series and not any(r["variant"] == n for r in ladder)]
    entries = sorted([(r["variant"], r["tflops"], r["impl"]) for r in ladder] + [(n, None, "cuda") for n in skipped],
                     key=lambda e: order.get(e[0], 99))
    cub = next((r["tflops"] for r in ladder if r["variant"] == "cuBLAS (cupy)"), None)
    note = None
    if skipped:
        last = {n: max(r["shape"][0] for r in rows if r["variant"] == n) for n in skipped}
        note = "\n".join(tr("{name}: not run at {at}^3 (too slow; largest size run: {last}^3, {tflops:.1f} TFLOP/s)",
                            name=n, at=at, last=last[n],
                            tflops=next(r["tflops"] for r in rows if r["variant"] == n and r["shape"][0] == last[n]))
                         for n in skipped)
    paths.append(plot_ladder(os.path.join(out_dir, f"{L.LAB}_ladder.png"), entries, at=at, gpu=gpu, cub=cub,
                             note=note))
    return paths
