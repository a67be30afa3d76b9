"""Lab 4.1's measuring side: read every results/<gpu>/*.json, choose one row per kernel, resolve the roofs (this lab's
measured ceilings, measured peers in the results, the datasheet), place every kernel and draw the repository's
roofline; on a GPU, measure the roofs (--measure) and run the k-FMA sweep that crosses from one roof to the other.
The plot is drawn from the JSON (placed rows + ceilings), so --replot redraws it without a GPU."""
from __future__ import annotations

import argparse
import glob
import math
import os
import re

import numpy as np

from common import bench, cli, device, lab, report

from .lab import (CEILINGS_FILE, LAB, ROOT, UNIT_NAMES, UNITS, Ceilings, _prod, counts, datasheet_for, fma_chain,
                  place, sweep_counts, unit_for)

SWEEP_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SWEEP_N = 1 << 26       # 256 MiB in + 256 MiB out: far beyond the 60 MiB L2
CPU_NOTE = ("\nNo GPU: the k-FMA kernel ran in the interpreter (correctness only) and its sweep was not timed; the "
            "repository's kernels were placed from the recorded results.")


def add_arguments(p) -> None:
    p.add_argument("--results", default=None, metavar="DIR",
                   help="folder of result JSON files to place (default: results/<gpu at hand>, else results/h200)")
    p.add_argument("--measure", action="store_true",
                   help="on a GPU: measure HBM and the tensor-core / fp32 peaks (torch.matmul 8192^3) and cache them "
                        f"in <out>/{CEILINGS_FILE}")
    p.add_argument("--roof", choices=("measured", "datasheet"), default="measured",
                   help="which figures are the roofs (default: measured where there is a measurement)")
    p.add_argument("--sweep", action=argparse.BooleanOptionalAction, default=True,
                   help="run the k-FMA AI sweep on a GPU")


# ---------------------------------------------------------------------------------------------------------------------
# Which rows are kernels, and which one of each to show
# ---------------------------------------------------------------------------------------------------------------------
def _normalized(variant: str) -> str:
    """The kernel a variant name refers to: 'row sum: cuda 02 x' -> 'cuda 02 x'; 'cuda C, phase 2 (cuda 05 y)' ->
    'cuda 05 y'."""
    m = re.search(r"\((cuda \d\d[^()]*)\)", variant)
    if m:
        return m.group(1).strip()
    return variant.split(": ", 1)[1].strip() if ": " in variant else variant.strip()


def is_named_kernel(variant: str) -> bool:
    """'cuda 05 ...' or 'triton ...' without a knob setting; anything else ('stride 4', 'b32 1 wave', 'WORK=16',
    'rows=2 warps=8') is a point of a sweep."""
    v = _normalized(variant).lower()
    return v.startswith(("cuda", "triton")) and "=" not in v


def load_rows(results_dir: str) -> tuple[list[dict], list[dict], str]:
    """Every row of every JSON under results_dir (with its file), the file headers, and the GPU name they name.

    This lab's own placed rows are skipped (they are an output); its AI-sweep rows are kept (they are measurements).
    """
    rows, headers, gpu = [], [], ""
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        try:
            doc = report.read_json(path)
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict):
            continue
        name = os.path.basename(path)
        headers.append(dict({k: v for k, v in doc.items() if k != "rows"}, file=name))
        if not gpu and isinstance(doc.get("gpu"), str) and not doc["gpu"].startswith("none"):
            gpu = doc["gpu"]
        for i, r in enumerate(doc.get("rows") or []):
            if not isinstance(r, dict):
                continue
            if name.startswith(LAB) and r.get("kind") != "sweep":
                continue
            rows.append(dict(r, _file=name, _index=i))
    return rows, headers, gpu


def select(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """The rows to place (one per kernel, dtype) and the ones left out, each with a reason.

    Rules: a row needs lab, variant, impl, a positive ms and at least one of gbps / tflops; shared-memory and register
    probes are not HBM traffic; per (lab, variant, dtype, impl) the largest shape wins, and at equal shape (a sweep of
    a knob) the fastest; sweep points of a lab ('stride 4', 'WORK=16') are reduced to the best one; a row that
    re-measures another lab's kernel ('cuda C, phase 2 (cuda 05 ...)') is dropped when that lab's row is present.
    """
    left, cands = [], []
    for r in rows:
        why = None
        if not r.get("lab") or not r.get("variant") or r.get("impl") not in ("cuda", "triton", "peer"):
            why = "not a kernel row (no lab/variant/impl: a tuner table or a summary)"
        elif not isinstance(r.get("ms"), (int, float)) or r["ms"] <= 0:
            why = "no time"
        elif r.get("gbps") is None and r.get("tflops") is None:
            why = "neither GB/s nor TFLOP/s recorded"
        elif r.get("level") not in (None, "hbm", "HBM", "dram", "DRAM"):
            why = f"a {r['level']} probe, not HBM traffic"
        if why:
            if r.get("lab") or r.get("variant"):
                left.append({"lab": r.get("lab"), "variant": r.get("variant"), "why": why})
            continue
        cands.append(r)

    def speed_key(r):
        both = r.get("gbps") is not None and r.get("tflops") is not None
        return (_prod(r.get("shape")), both, 1.0 / r["ms"])

    best: dict = {}
    for r in cands:
        key = (r["lab"], r["variant"], r.get("dtype"), r["impl"])
        if key not in best or speed_key(r) > speed_key(best[key]):
            best[key] = r
    chosen = list(best.values())
    # sweep points: keep the best of each (lab, dtype) family
    families: dict = {}
    kept = []
    for r in chosen:
        if r["impl"] == "peer" or is_named_kernel(r["variant"]) or r.get("kind") == "sweep":
            kept.append(r)
        else:
            families.setdefault((r["lab"], r.get("dtype")), []).append(r)
    for (labn, _), fam in families.items():
        top = max(fam, key=lambda r: (r.get("gbps") or 0.0, r.get("tflops") or 0.0))
        kept.append(dict(top, _note=f"best of {len(fam)} sweep points"))
        for r in fam:
            if r is not top:
                left.append({"lab": labn, "variant": r["variant"],
                             "why": f"sweep point (best shown: {top['variant']})"})
    # cross-lab re-measurements
    names = {(r["variant"], r["impl"], r.get("dtype")) for r in kept}
    out = []
    for r in kept:
        norm = _normalized(r["variant"])
        if norm != r["variant"] and r["impl"] != "peer" and (norm, r["impl"], r.get("dtype")) in names:
            left.append({"lab": r["lab"], "variant": r["variant"], "why": f"re-measures '{norm}' (shown once)"})
            continue
        out.append(r)
    # peers measured by several labs at the same shape: once
    seen, final = set(), []
    for r in sorted(out, key=lambda r: (r["lab"], r.get("_file", ""), r.get("_index", 0))):
        if r["impl"] == "peer":
            k = (r["variant"], r.get("dtype"), tuple(r.get("shape") or ()))
            if k in seen:
                left.append({"lab": r["lab"], "variant": r["variant"], "why": "peer already shown by an earlier lab"})
                continue
            seen.add(k)
        final.append(r)
    return final, left


def _short_lab(lab_name: str) -> str:
    m = re.match(r"phase(\d+)_lab(\d+)_?(.*)", lab_name or "")
    return f"{int(m.group(1))}.{int(m.group(2))} {m.group(3)}" if m else (lab_name or "?")


def analyze(rows: list[dict], ceil: Ceilings) -> tuple[list[dict], list[dict]]:
    """Place every selected row: (placed rows, rows left out with why)."""
    chosen, left = select(rows)
    placed = []
    for r in chosen:
        nbytes, flops, src = counts(r)
        if nbytes is None and flops is None:
            left.append({"lab": r["lab"], "variant": r["variant"], "why": "no byte or FLOP count"})
            continue
        unit = unit_for(r["lab"], r["variant"], r.get("dtype"))
        p = place(nbytes, flops, r["ms"], unit, ceil)
        placed.append(dict(
            kind="placed", lab=r["lab"], variant=r["variant"], impl=r["impl"], shape=r.get("shape"),
            dtype=r.get("dtype"), ms=r["ms"], bytes=nbytes, flops=flops, counts=src, file=r.get("_file", "this run"),
            note=r.get("_note", ""), sweep=r.get("kind") == "sweep", k=r.get("k"), **p))
    placed.sort(key=lambda p: (p["impl"] == "peer", p["lab"], p["k"] or 0, p["variant"], p["dtype"] or ""))
    return placed, left


# ---------------------------------------------------------------------------------------------------------------------
# Ceilings: measured (this run or cached), measured peers in the results, datasheet
# ---------------------------------------------------------------------------------------------------------------------
def _best_peer_tflops(rows, lab_prefix: str, variant_words: tuple[str, ...], dtype: str) -> tuple[float, str] | None:
    best = None
    for r in rows:
        if (r.get("impl") == "peer" and str(r.get("lab", "")).startswith(lab_prefix) and r.get("dtype") == dtype
                and r.get("tflops") and any(w.lower() in r.get("variant", "").lower() for w in variant_words)):
            if best is None or r["tflops"] > best[0]:
                best = (float(r["tflops"]), f"{r['variant']} {'x'.join(map(str, r.get('shape') or []))} "
                                            f"in {r['_file']}")
    return best


def resolve_ceilings(rows: list[dict], headers: list[dict], gpu_name: str, results_dir: str,
                     roof: str = "measured", measured: dict | None = None) -> Ceilings:
    """HBM and compute roofs, each from the best source available, named.

    Order per roof: this lab's ceilings file (measured with --measure on that GPU) > measured peers already in the
    results (HBM ceiling_gbps; cuBLAS SGEMM for fp32; cuBLAS bf16/fp16/tf32 from the matmul lab) > datasheet.
    roof='datasheet' uses the datasheet figures as the roofs (the measured ones are still reported).
    """
    ds, ds_src = datasheet_for(gpu_name)
    cached = dict(measured or {})
    path = os.path.join(results_dir, CEILINGS_FILE)
    if not cached and os.path.exists(path):
        try:
            cached = report.read_json(path).get("ceilings", {})
        except (OSError, ValueError):
            cached = {}
    peaks, sources, notes = {}, {}, []
    # HBM
    hbm, hbm_src = None, ""
    if cached.get("hbm_gbps"):
        hbm, hbm_src = float(cached["hbm_gbps"]), f"measured ({cached.get('hbm_method', '?')}, {CEILINGS_FILE})"
    else:
        vals = [(float(r["ceiling_gbps"]), r["_file"]) for r in rows if isinstance(r.get("ceiling_gbps"), (int, float))]
        for h in headers:
            c = h.get("ceiling")
            if isinstance(c, dict) and isinstance(c.get("hbm_gbps"), (int, float)):
                vals.append((float(c["hbm_gbps"]), h["file"]))
            if isinstance(h.get("ceiling_gbps"), (int, float)):
                vals.append((float(h["ceiling_gbps"]), h["file"]))
        if vals:
            hbm, f = max(vals)
            hbm_src = f"measured HBM ceiling recorded in {f} (highest of {len(vals)} records)"
    if hbm is None and ds.get("hbm_gbps"):
        hbm, hbm_src = float(ds["hbm_gbps"]), ds_src
    if hbm is None:
        raise ValueError(f"no HBM figure: no ceiling in {results_dir} and no datasheet entry for {gpu_name!r}")
    # compute
    peer_words = {"fp32": ("phase2_lab08", ("cuBLAS",), "float32"), "tf32": ("phase3_lab02", ("cuBLAS",), "tf32"),
                  "bf16": ("phase3_lab02", ("cuBLAS",), "bfloat16"), "fp16": ("phase3_lab02", ("cuBLAS",), "float16")}
    for u in UNITS:
        c = cached.get("tflops", {}).get(u)
        if c:
            peaks[u], sources[u] = float(c), f"measured ({cached.get('method', {}).get(u, 'torch.matmul')}, " \
                                             f"{CEILINGS_FILE})"
            continue
        if u in peer_words:
            hit = _best_peer_tflops(rows, *peer_words[u])
            if hit:
                peaks[u], sources[u] = hit[0], f"measured peer: {hit[1]}"
                continue
        if ds.get(u):
            peaks[u], sources[u] = float(ds[u]), ds_src
    if roof == "datasheet":
        for u in UNITS:
            if ds.get(u):
                peaks[u], sources[u] = float(ds[u]), ds_src
        if ds.get("hbm_gbps"):
            hbm, hbm_src = float(ds["hbm_gbps"]), ds_src
    sources["hbm"] = hbm_src
    ffma = [r for r in rows if r.get("level") == "registers" and r.get("tflops")]
    if ffma:
        notes.append(f"FFMA register probe ({ffma[0]['variant']}, {ffma[0]['_file']}): "
                     f"{ffma[0]['tflops']:.1f} TFLOP/s fp32 - what the CUDA cores reach with no memory traffic")
    dsd = {"hbm_gbps": ds.get("hbm_gbps")}
    dsd.update({u: ds.get(u) for u in UNITS if ds.get(u)})
    return Ceilings(hbm_gbps=hbm, peaks=peaks, sources=sources, datasheet=dsd if ds else {}, notes=notes)


# ---------------------------------------------------------------------------------------------------------------------
# On a GPU: measure the ceilings, run the AI sweep
# ---------------------------------------------------------------------------------------------------------------------
def measure_ceilings(n: int = 8192, quick: bool = False) -> dict:
    """HBM (common.device) and the peak of each unit as torch.matmul at n^3 (cuBLAS / cuBLASLt) reaches it."""
    import torch

    device.require_gpu("measuring the compute ceilings")
    if quick:
        n = 4096
    hbm = bench.ceilings()
    out = {"hbm_gbps": hbm["hbm_gbps"], "hbm_method": hbm.get("hbm_method"), "tflops": {}, "method": {},
           "errors": {}, "n": n}
    flops = 2.0 * n ** 3
    dev = "cuda"
    prev = torch.backends.cuda.matmul.allow_tf32
    try:
        for unit, dt, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                               ("bf16", torch.bfloat16, False), ("fp16", torch.float16, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, device=dev, dtype=torch.float32).to(dt)
            b = torch.randn(n, n, device=dev, dtype=torch.float32).to(dt)
            c = torch.empty(n, n, device=dev, dtype=dt)
            t = bench.bench(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), warmup_ms=50, rep_ms=150)
            out["tflops"][unit] = t.tflops(flops)
            out["method"][unit] = f"torch.matmul {n}^3 {dt} (allow_tf32={tf32})"
            del a, b, c
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    try:   # fp8: torch._scaled_mm wants A row-major, B column-major, fp32 scales; its API moved between releases
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev, dtype=torch.float32)
        t = bench.bench(lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True),
                        warmup_ms=50, rep_ms=150)
        out["tflops"]["fp8"] = t.tflops(flops)
        out["method"]["fp8"] = f"torch._scaled_mm {n}^3 float8_e4m3fn -> bf16, fast accumulation"
    except Exception as e:  # noqa: BLE001 - fp8 is optional; the datasheet figure stands in, and the reason is kept
        out["errors"]["fp8"] = f"{type(e).__name__}: {e}"[:300]
    return out


def run_sweep(ks=SWEEP_KS, n: int = SWEEP_N, hbm_gbps: float | None = None) -> list[dict]:
    """Time fma_chain at each k (L2 flushed): one measured point per AI."""
    import cupy

    x = cupy.random.RandomState(1).standard_normal(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    rows = []
    for k in cli.progress(ks, "AI sweep"):
        t = bench.bench(lambda k=k: fma_chain(x, k, out=y), warmup_ms=10, rep_ms=60)
        nbytes, flops = sweep_counts(n, k)
        rows.append(report.row(LAB, f"triton fma chain k={k}", "triton", (n,), "float32", t, nbytes=nbytes,
                               flops=flops, ceiling_gbps=hbm_gbps, kind="sweep", k=k, ai=flops / nbytes))
    return rows


def sweep_targets(sweep: list[dict], ceil: Ceilings) -> list[dict]:
    """The lab's predictions for the k-FMA sweep, measured: both ends of the roof reached."""
    out = []
    low = [r["gbps"] / ceil.hbm_gbps for r in sweep if r.get("k") is not None and r["k"] <= 8 and r.get("gbps")]
    ds = ceil.datasheet.get("fp32")
    high = [r["tflops"] / ds for r in sweep if ds and r.get("k") is not None and r["k"] >= 512 and r.get("tflops")]
    if low:
        out.append({"target": "k-FMA sweep, k <= 8 (AI <= 2): worst fraction of the HBM roof", "predicted": ">= 0.85",
                    "measured": min(low), "met": min(low) >= 0.85})
    if high:
        out.append({"target": "k-FMA sweep, k >= 512 (AI >= 128): worst fraction of the datasheet fp32 peak",
                    "predicted": ">= 0.75", "measured": min(high), "met": min(high) >= 0.75})
    return out


def sweep_from_rows(rows: list[dict]) -> list[dict]:
    """The AI-sweep rows found in a results folder (kind == 'sweep'), ordered by k."""
    return sorted((r for r in rows if r.get("kind") == "sweep" and r.get("ms")), key=lambda r: r.get("k", 0))


# ---------------------------------------------------------------------------------------------------------------------
# Output: table and plot
# ---------------------------------------------------------------------------------------------------------------------
TABLE_COLS = ["n", "lab", "variant", "dtype", "unit", "ai", "achieved", "roof", "bound", "frac_roof",
              "frac_datasheet_roof", "counts"]


def table_rows(placed: list[dict]) -> list[dict]:
    out = []
    for i, p in enumerate(placed, 1):
        if p["achieved_tflops"] is not None and p["ai"]:
            ach, roof = f"{p['achieved_tflops']:.3g} TFLOP/s", f"{p['roof_tflops']:.3g} TFLOP/s"
        else:
            ach = f"{p['achieved_gbps']:.0f} GB/s" if p["achieved_gbps"] else "-"
            roof = "HBM" if p["achieved_gbps"] else "-"
        out.append({"n": i, "lab": _short_lab(p["lab"]), "variant": (p["variant"] + (" [peer]" if p["impl"] == "peer"
                                                                                      else ""))[:48],
                    "dtype": p["dtype"], "unit": p["unit"], "ai": p["ai"], "achieved": ach, "roof": roof,
                    "bound": p["bound"], "frac_roof": p["frac_roof"], "frac_datasheet_roof": p["frac_datasheet_roof"],
                    "counts": "" if p["counts"] == "recorded" else p["counts"][:40]})
    return out


PHASE_COLORS = {"1": "tab:green", "2": "tab:blue", "3": "tab:orange", "4": "tab:red"}
IMPL_MARKERS = {"cuda": "o", "triton": "^", "peer": "x"}


def plot_roofline(path: str, placed: list[dict], ceil: Ceilings, sweep: list[dict], title: str) -> str:
    """One figure for the repository: the roofline (left), kernels with no FLOPs against HBM (top right), the key."""
    plt = report.pyplot()
    from matplotlib.gridspec import GridSpec

    fig = plt.figure(figsize=(17, 10))
    gs = GridSpec(2, 2, width_ratios=[2.3, 1], height_ratios=[1, 2.2], figure=fig)
    ax = fig.add_subplot(gs[:, 0])
    axb = fig.add_subplot(gs[0, 1])
    axk = fig.add_subplot(gs[1, 1])
    on_roof = [(i, p) for i, p in enumerate(placed, 1) if p["ai"] and p["achieved_tflops"] and not p["sweep"]]
    ais = [p["ai"] for _, p in on_roof] + [r.get("ai") or 0 for r in sweep]
    ridges = {u: ceil.ridge(u) for u in UNITS if ceil.ridge(u)}
    xmin = max(min([a for a in ais if a > 0] or [0.1]) / 3, 1e-3)
    xmax = max(max(ais or [1.0]), *(ridges.values() or [1.0])) * 4
    xs = np.logspace(math.log10(xmin), math.log10(xmax), 200)
    top = max(ceil.peaks.values() or [1.0])
    # the memory diagonal up to the highest roof, then each unit's flat roof from its ridge
    xr = xs[xs <= top * 1e3 / ceil.hbm_gbps]
    ax.plot(xr, xr * ceil.hbm_gbps / 1e3, color="black", lw=1.8)
    ax.annotate(f"HBM {ceil.hbm_gbps:,.0f} GB/s", xy=(xs[3], xs[3] * ceil.hbm_gbps / 1e3), rotation=0, fontsize=8,
                xytext=(4, 8), textcoords="offset points")
    if ceil.datasheet.get("hbm_gbps") and abs(ceil.datasheet["hbm_gbps"] - ceil.hbm_gbps) > 1:
        ax.plot(xr, xr * ceil.datasheet["hbm_gbps"] / 1e3, color="gray", lw=0.8, ls="--")
    unit_colors = {"fp32": "tab:blue", "tf32": "tab:purple", "bf16": "tab:red", "fp16": "tab:pink", "fp8": "tab:brown"}
    for u, r in ridges.items():
        pk = ceil.peaks[u]
        ax.plot([r, xmax], [pk, pk], color=unit_colors[u], lw=1.6)
        ax.plot([r], [pk], marker="D", color=unit_colors[u], ms=5)
        ax.axvline(r, color=unit_colors[u], ls=":", lw=0.7)
        src = "measured" if "measured" in ceil.sources.get(u, "") else "datasheet"
        ax.annotate(f"{UNIT_NAMES[u]} {pk:,.0f} TFLOP/s ({src}); ridge {r:.0f} FLOP/B", xy=(xmax, pk), ha="right",
                    va="top" if u == "fp16" else "bottom", fontsize=7.5, color=unit_colors[u])
        dpk = ceil.datasheet.get(u)
        if dpk and abs(dpk - pk) > 0.5:
            ax.plot([dpk * 1e3 / ceil.hbm_gbps, xmax], [dpk, dpk], color=unit_colors[u], lw=0.8, ls="--")
    offsets = [(3, 2), (3, -8), (-9, 2), (-9, -8)]
    for j, (i, p) in enumerate(on_roof):
        phase = (re.match(r"phase(\d+)", p["lab"]) or [None, "?"])[1]
        peer = p["impl"] == "peer"
        col = "dimgray" if peer else PHASE_COLORS.get(phase, "black")
        ax.scatter([p["ai"]], [p["achieved_tflops"]], marker=IMPL_MARKERS.get(p["impl"], "s"), s=18 if peer else 26,
                   color=col, zorder=3, linewidths=1.0, alpha=0.6 if peer else 1.0)
        if not peer:   # peers stay unnumbered on the plot (the table lists them)
            ax.annotate(str(i), xy=(p["ai"], p["achieved_tflops"]), xytext=offsets[j % 4],
                        textcoords="offset points", fontsize=6, color=col)
    if sweep:
        sx = [r["ai"] for r in sweep]
        sy = [r["tflops"] for r in sweep]
        ax.plot(sx, sy, color="tab:red", marker="s", ms=4, lw=1.2, zorder=4,
                label="this lab: Triton k-FMA chain (measured)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlim(xmin, xmax)
    ymin = min([p["achieved_tflops"] for _, p in on_roof] + [r["tflops"] for r in sweep] + [top]) / 3
    ax.set_ylim(ymin, top * 2.2)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of compulsory HBM traffic)")
    ax.set_ylabel("achieved TFLOP/s")
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="both", alpha=0.25)
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=c, marker="o", ls="", label=f"phase {ph} (ours)") for ph, c in PHASE_COLORS.items()
               if any(p["lab"].startswith(f"phase{ph}_") and p["impl"] != "peer" for _, p in on_roof)]
    handles += [Line2D([], [], color="k", marker=m, ls="", label=f"{k}") for k, m in IMPL_MARKERS.items()]
    handles += [Line2D([], [], color="gray", ls="--", label="datasheet roofs")]
    if sweep:
        handles.append(Line2D([], [], color="tab:red", marker="s", label="k-FMA chain sweep (this lab)"))
    ax.legend(handles=handles, fontsize=7.5, loc="upper left")
    # kernels with no FLOPs: their roof is the HBM bandwidth
    bw = [(i, p) for i, p in enumerate(placed, 1) if not (p["ai"] and p["achieved_tflops"]) and p["achieved_gbps"]]
    if bw:
        ys = list(range(len(bw)))[::-1]
        axb.barh(ys, [p["achieved_gbps"] for _, p in bw],
                 color=["lightgray" if p["impl"] == "peer" else "tab:blue" for _, p in bw])
        axb.axvline(ceil.hbm_gbps, color="black", lw=1.2)
        axb.set_yticks(ys)
        axb.set_yticklabels([f"{i} {_short_lab(p['lab'])[:18]}: {p['variant'][:26]}" for i, p in bw], fontsize=6)
        axb.set_xlabel("GB/s (no FLOPs counted: the roof is HBM)", fontsize=8)
        axb.tick_params(axis="x", labelsize=7)
        axb.set_title(f"memory-only kernels vs HBM {ceil.hbm_gbps:,.0f} GB/s", fontsize=9)
    else:
        axb.axis("off")
    axk.axis("off")
    dshort = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "tf32": "tf32", "int32": "i32"}
    lines = [f"{i:>3} {_short_lab(p['lab']).split()[0]:>4} {_normalized(p['variant'])[:31]:31s} "
             f"{dshort.get(p['dtype'], str(p['dtype'])[:4]):4s} {(p['frac_roof'] or 0):4.2f}"
             for i, p in on_roof if p["impl"] != "peer"]
    head = "  # lab  kernel                          dtyp roof"
    ncol = 1 if len(lines) <= 50 else 2
    per = math.ceil(len(lines) / ncol) if lines else 0
    fs = 6.0 if ncol == 1 else 5.2
    for c in range(ncol):
        axk.text(c * 0.52, 1.0, head + "\n" + "\n".join(lines[c * per:(c + 1) * per]), va="top", ha="left",
                 family="monospace", fontsize=fs, transform=axk.transAxes)
    axk.set_title("our kernels on the roofline (fraction of roof; x = library peers, see the table)", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
# CPU teaching aid: what the sweep kernel compiles to
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_report(arch: str) -> None:
    """Compile fma_chain_kernel ahead of time and count the FMAs in its loop (no GPU needed)."""
    from common import triton_support as ts

    from .lab import BLOCK, NUM_WARPS
    from .triton_kernels import fma_chain_kernel

    cc = int(re.sub(r"\D", "", arch) or 90)
    try:
        k = ts.compile_for(fma_chain_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "k": "i32",
                                              "a": "fp32", "b": "fp32", "BLOCK": "constexpr"},
                           {"BLOCK": BLOCK}, cc=cc, num_warps=NUM_WARPS, divisible_by_16=("x_ptr", "y_ptr", "n"))
        ptx = k.asm["ptx"]
    except Exception as e:  # noqa: BLE001 - a teaching aid; say why it is missing and go on
        print(f"\n(compile report for sm_{cc} unavailable: {type(e).__name__}: {str(e)[:200]})")
        return
    n_fma = len(re.findall(r"\bfma\.rn\.f32\b", ptx))
    loads = re.findall(r"\bld\.global[\w.]*", ptx)
    per = BLOCK // (32 * NUM_WARPS)
    print(f"\nfma_chain_kernel compiled for sm_{cc} (ahead of time): {n_fma} fma.rn.f32 in the PTX (expected "
          f"{4 * per} in the 4-way main loop + {per} in the remainder loop: {per} elements a thread), loads "
          f"{sorted(set(loads))} (compiled as the sweep launches it: 16-byte aligned pointers, n % 16 == 0). "
          f"The {per} chains of a thread are independent: that is what hides the FFMA latency.")


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# The lab's run: place the recorded kernels (every machine), or measure and then place (a GPU that benchmarks)
# ---------------------------------------------------------------------------------------------------------------------
def default_results_dir() -> str:
    """results/<gpu at hand>, or the committed results/h200 without a GPU."""
    if device.has_gpu():
        return os.path.join(ROOT, "results", device.gpu_slug())
    return os.path.join(ROOT, "results", "h200")


def placement(args, sweep_rows=(), measured: dict | None = None) -> lab.Result | None:
    """Every recorded kernel of --results placed on the roofs (with this run's sweep, if it ran one): the Result a
    benchmark hands back (rows: the sweep + the placed kernels; meta: the roofs, what was left out, the targets), or
    None when the folder does not exist."""
    results_dir = os.path.abspath(args.results or default_results_dir())
    if not os.path.isdir(results_dir):
        print(f"--results: no folder {results_dir}; nothing to place")
        return None
    rows, headers, gpu_name = load_rows(results_dir)
    if device.has_gpu() and not gpu_name:
        gpu_name = device.info().name
    ceil = resolve_ceilings(rows, headers, gpu_name, results_dir, roof=args.roof, measured=measured)
    sweep = [dict(r, _file="this run", _index=i) for i, r in enumerate(sweep_rows)] or sweep_from_rows(rows)
    rows = [r for r in rows if r.get("kind") != "sweep"] + sweep
    placed, left = analyze(rows, ceil)
    print(f"\nCeilings ({gpu_name or 'unknown GPU'}; results from {os.path.relpath(results_dir, ROOT)}):")
    print(f"  HBM {ceil.hbm_gbps:,.0f} GB/s  [{ceil.sources['hbm']}]")
    for u in UNITS:
        if ceil.peak(u):
            print(f"  {UNIT_NAMES[u]:24s} {ceil.peak(u):7,.0f} TFLOP/s, ridge {ceil.ridge(u):6.1f} FLOP/B  "
                  f"[{ceil.sources[u]}]" + (f"  (datasheet {ceil.datasheet[u]:,.0f})" if ceil.datasheet.get(u) and
                                            "datasheet" not in ceil.sources[u] else ""))
    for n_ in ceil.notes:
        print("  note:", n_)
    n_mem = sum(1 for p in placed if str(p["bound"]).startswith("memory"))
    summary = (f"{n_mem} of {len(placed)} placed kernels are memory-bound, {len(placed) - n_mem} compute-bound. "
               f"{len(left)} rows left out (sweep points, duplicates, rows without counts: see 'left_out' in the "
               "JSON).")
    targets = sweep_targets(sweep, ceil)
    # the sweep measured now, or (re-placing on a machine without a GPU) the one recorded before: kept either way
    kept = list(sweep_rows) or [{k: v for k, v in r.items() if not k.startswith("_")} for r in sweep]
    tables = [(table_rows(placed), TABLE_COLS,
               f"Every kernel on the roofline ({len(placed)} placed; frac_roof = achieved / min(peak of its unit, "
               "AI x HBM); memory-only kernels: GB/s / HBM)")]
    if targets:
        tables.append((targets, ["target", "predicted", "measured", "met"], "The k-FMA sweep's predictions"))
    return lab.Result(rows=kept + placed, tables=tables,
                      meta=dict(ceilings=ceil.as_dict(), results_dir=os.path.relpath(results_dir, ROOT), left_out=left,
                                source_gpu=gpu_name, targets=targets, roof=args.roof, summary=summary))


def _report(res: lab.Result) -> None:
    """What run() prints after a benchmark, for the placement made without one."""
    print("\n" + res.meta["summary"])
    for rows, cols, title in res.tables:
        report.print_table(rows, cols, title=title)


def explain(args) -> None:
    """The roofs of the GPU at hand (or the H200's) from its datasheet, with their ridge points; then, on a machine
    that will not benchmark, every recorded kernel placed on the roofs, with the JSON and the plot a benchmark would
    write (on a GPU that benchmarks, the placement comes after the sweep, with this run's measurements)."""
    gpu = device.info().name if device.has_gpu() else "NVIDIA H200"
    ds, src = datasheet_for(gpu)
    if ds.get("hbm_gbps"):
        rows = [{"unit": UNIT_NAMES[u], "peak TFLOP/s": ds[u], "ridge FLOP/B": ds[u] * 1e3 / ds["hbm_gbps"]}
                for u in UNITS if ds.get(u)]
        report.print_table(rows, title=f"The roofs before any measurement: {src}, HBM {ds['hbm_gbps']:,} GB/s "
                                       "(a kernel left of its unit's ridge is memory-bound)")
    if device.has_gpu() and args.bench:
        print("(on this GPU the kernels are placed after the k-FMA sweep, on this run's measured roofs)")
        return
    res = placement(args)
    if res is None:
        return
    _report(res)
    out_dir = args.out or report.results_dir()
    if args.json:
        # the rows are the placed GPU's measurements, whatever machine placed them: its name is the file's "gpu"
        gpu_field = {"gpu": res.meta["source_gpu"]} if res.meta["source_gpu"] else {}
        print("wrote", report.write_json(LAB, res.rows, out_dir=out_dir, **res.meta, **gpu_field))
    if args.plot:
        for path in plot(dict(res.meta, rows=res.rows, gpu=res.meta["source_gpu"]), out_dir):
            print("wrote", path)


def benchmark(ctx) -> lab.Result:
    """On a GPU: the roofs measured (--measure, cached in CEILINGS_FILE), the k-FMA sweep (--sweep), then every
    recorded kernel placed on the roofs."""
    args = ctx.args
    measured = None
    if args.measure:
        measured = measure_ceilings(quick=ctx.quick)
        if args.json:
            print("wrote", report.write_json(CEILINGS_FILE[:-5], [], out_dir=ctx.out_dir, ceilings=measured,
                                             device=device.info().as_dict()))
    sweep_rows = []
    if args.sweep:
        sweep_rows = run_sweep(SWEEP_KS[::2] if ctx.quick else SWEEP_KS, (1 << 24) if ctx.quick else SWEEP_N,
                               ctx.ceiling()["hbm_gbps"])
    res = placement(args, sweep_rows, measured)
    if res is None:
        return lab.Result(rows=sweep_rows, tables=[(sweep_rows, ["variant", "ai", "ms", "gbps", "tflops"],
                                                    "k-FMA sweep")])
    print("\n" + res.meta["summary"])
    return res


def plot(data: dict, out_dir: str) -> list[str]:
    """The repository's roofline from the JSON: the placed rows, the sweep rows and the roofs (old JSON files without
    a 'roof' field were placed on the measured roofs)."""
    rows = data["rows"]
    placed = [r for r in rows if r.get("kind") == "placed"]
    sweep = sorted((r for r in rows if r.get("kind") == "sweep" and r.get("tflops")), key=lambda r: r.get("k") or 0)
    ceil = Ceilings.from_dict(data["ceilings"])
    gpu = data.get("source_gpu") or data.get("gpu") or "the GPU"
    title = (f"Roofline of {gpu}: every kernel of the repository "
             f"(HBM {ceil.hbm_gbps:,.0f} GB/s; roofs: {data.get('roof', 'measured')})")
    return [plot_roofline(os.path.join(out_dir, f"{LAB}.png"), placed, ceil, sweep, title)]
