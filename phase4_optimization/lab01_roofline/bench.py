"""Lab 4.1's measuring side: read every results/<gpu>/*.json, choose one row per kernel, resolve the roofs (this lab's
measured ceilings, measured peers in the results, the datasheet), place every kernel and draw the repository's
roofline; on a GPU, measure the roofs (--measure) and run the k-FMA sweep that crosses from one roof to the other.
The plot is drawn from the JSON (placed rows + ceilings), so --replot redraws it without a GPU."""
from __future__ import annotations

import argparse
import functools
import glob
import math
import os
import re
import string
import textwrap

import numpy as np

from common import bench, cli, device, lab, plan, report
from common.i18n import korean, tr

from .lab import (CEILINGS_FILE, COUNTS_FROM, COUNTS_UNKNOWN, LAB, ROOT, SWEEP_KS, SWEEP_N, UNIT_NAMES, UNITS, Ceilings,
                  _prod, bench_bytes, counts, datasheet_for, datasheet_of, fma_chain, fma_config, place, sweep_counts,
                  unit_for)

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


# ---------------------------------------------------------------------------------------------------------------------
# What the lab writes into its JSON in English (sources of the roofs, notes, what is missing, where counts came from),
# made from these templates, and printed or drawn in the chosen language by say()
# ---------------------------------------------------------------------------------------------------------------------
SRC_MEASURED = "measured ({method}, {file})"
SRC_RECORDED = "measured HBM ceiling recorded in {file} (highest of {n} records)"
SRC_THIS_RUN = "measured in this run ({how})"
SRC_CLOCK = "{gpu}'s memory clock x bus width (no datasheet entry)"
SRC_PEER = "measured peer: {what}"
NOTE_FFMA = "FFMA register probe ({variant}, {file}): {tflops} TFLOP/s fp32 - what the CUDA cores reach with no memory " \
            "traffic"
NOTE_NO_DATASHEET = "no datasheet entry for {gpu} in the course's table of GPUs: no datasheet roofs"
NOTE_NO_ROOFS = "no datasheet entry for {gpu} in the course's table of GPUs: no datasheet roofs, and no compute roof " \
                "at all (measure them with --measure)"
MISSING_MINE = "no recorded results of {gpu} in results/{slug}/ yet: only this run's own measurements are placed (run " \
               "the other labs on this GPU, then this one again, to place theirs)"
MISSING_ALL = "no recorded results in results/ at all (and none of {gpu}): nothing to place"
MISSING_COMMITTED = "{gpu} has no recorded results (results/{slug}/): placing the committed results/{committed}/, on " \
                    "the roofs of the GPU they were measured on"
MISSING_FOLDER = "--results: no folder {folder}; nothing recorded to place"
MISSING_ROOFS = "no roofs in the JSON: rebuilt from its rows' HBM ceiling and the datasheet"
MISSING_NOTHING = "nothing placed: no recorded kernel and no k-FMA sweep"
SUMMARY = "{mem} of {placed} placed kernels are memory-bound, {compute} compute-bound. {left} rows left out (sweep " \
          "points, duplicates, rows without counts: see 'left_out' in the JSON)."
TARGET_LOW = "k-FMA sweep, k <= 8 (AI <= 2): worst fraction of the HBM roof"
TARGET_HIGH = "k-FMA sweep, k >= 512 (AI >= 128): worst fraction of the datasheet fp32 peak"
SAID = [NOTE_NO_ROOFS, NOTE_NO_DATASHEET, NOTE_FFMA, SRC_RECORDED, SRC_THIS_RUN, SRC_MEASURED, SRC_CLOCK, SRC_PEER,
        MISSING_MINE, MISSING_ALL, MISSING_COMMITTED, MISSING_FOLDER, SUMMARY, COUNTS_UNKNOWN, COUNTS_FROM]


@functools.lru_cache(maxsize=None)
def _pattern(template: str):
    out, seen = "", set()
    for literal, name, _, _ in string.Formatter().parse(template):
        out += re.escape(literal)
        if name is not None:
            out += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
            seen.add(name)
    return re.compile(out, re.S)


def say(text):
    """One of the lab's English phrases (made from a template of SAID, or a fixed one) in the chosen language; the
    pieces of a 'counts' phrase joined by '; ' each on their own."""
    if not korean() or not isinstance(text, str) or not text:
        return text
    if "; " in text and all(_said_by(p) for p in text.split("; ")):
        return "; ".join(say(p) for p in text.split("; "))
    t = _said_by(text)
    if t is None:
        return tr(text)
    return tr(t, **{k: tr(v) for k, v in _pattern(t).fullmatch(text).groupdict().items()})


def _said_by(text: str):
    return next((t for t in SAID if _pattern(t).fullmatch(text)), None)


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
                                            f"in {r.get('_file', 'the JSON')}")
    return best


def resolve_ceilings(rows: list[dict], headers: list[dict], gpu_name: str, results_dir: str | None,
                     roof: str = "measured", measured: dict | None = None, *, gpu: device.DeviceInfo | None = None,
                     hbm_measured: tuple[float, str] | None = None) -> Ceilings:
    """HBM and compute roofs, each from the best source available, named.

    Order per roof: this lab's ceilings file (measured with --measure on that GPU) > measured peers already in the
    results (HBM ceiling_gbps; cuBLAS SGEMM for fp32; cuBLAS bf16/fp16/tf32 from the matmul lab) > for HBM, the ceiling
    measured in this run (hbm_measured: (GB/s, how)) > the datasheet of the GPU the results name (else of `gpu`, the
    GPU described here) > for HBM, the bandwidth `gpu`'s memory clock and bus width give. A roof that none of them
    has is left out, and the notes say so. roof='datasheet' uses the datasheet figures as the roofs (the measured ones
    are still reported). results_dir None: nothing recorded (a GPU without results yet).
    """
    ds, ds_src = datasheet_for(gpu_name)
    if not ds and gpu is not None and (not gpu_name or gpu_name == gpu.name):
        ds, ds_src = datasheet_of(gpu)
    cached = dict(measured or {})
    path = os.path.join(results_dir, CEILINGS_FILE) if results_dir else ""
    if not cached and path and os.path.exists(path):
        try:
            cached = report.read_json(path).get("ceilings", {})
        except (OSError, ValueError):
            cached = {}
    peaks, sources, notes = {}, {}, []
    # HBM
    hbm, hbm_src = None, ""
    if cached.get("hbm_gbps"):
        hbm, hbm_src = float(cached["hbm_gbps"]), SRC_MEASURED.format(method=cached.get('hbm_method', '?'),
                                                                      file=CEILINGS_FILE)
    else:
        vals = [(float(r["ceiling_gbps"]), r.get("_file", "the JSON")) for r in rows
                if isinstance(r.get("ceiling_gbps"), (int, float))]
        for h in headers:
            c = h.get("ceiling")
            if isinstance(c, dict) and isinstance(c.get("hbm_gbps"), (int, float)):
                vals.append((float(c["hbm_gbps"]), h["file"]))
            if isinstance(h.get("ceiling_gbps"), (int, float)):
                vals.append((float(h["ceiling_gbps"]), h["file"]))
        if vals:
            hbm, f = max(vals)
            hbm_src = SRC_RECORDED.format(file=f, n=len(vals))
    if hbm is None and hbm_measured:
        hbm, hbm_src = float(hbm_measured[0]), SRC_THIS_RUN.format(how=hbm_measured[1])
    if hbm is None and ds.get("hbm_gbps"):
        hbm, hbm_src = float(ds["hbm_gbps"]), ds_src
    if hbm is None and gpu is not None and gpu.theoretical_gbps:
        hbm, hbm_src = float(gpu.theoretical_gbps), SRC_CLOCK.format(gpu=gpu.name)
    if hbm is None:
        raise ValueError(f"no HBM figure: no ceiling in {results_dir} and no datasheet entry for {gpu_name!r}")
    # compute
    peer_words = {"fp32": ("phase2_lab08", ("cuBLAS",), "float32"), "tf32": ("phase3_lab02", ("cuBLAS",), "tf32"),
                  "bf16": ("phase3_lab02", ("cuBLAS",), "bfloat16"), "fp16": ("phase3_lab02", ("cuBLAS",), "float16")}
    for u in UNITS:
        c = cached.get("tflops", {}).get(u)
        if c:
            peaks[u], sources[u] = float(c), SRC_MEASURED.format(method=cached.get('method', {}).get(u, 'torch.matmul'),
                                                                 file=CEILINGS_FILE)
            continue
        if u in peer_words:
            hit = _best_peer_tflops(rows, *peer_words[u])
            if hit:
                peaks[u], sources[u] = hit[0], SRC_PEER.format(what=hit[1])
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
        notes.append(NOTE_FFMA.format(variant=ffma[0]['variant'], file=ffma[0].get('_file', 'the JSON'),
                                      tflops=f"{ffma[0]['tflops']:.1f}"))
    if not ds:
        notes.append((NOTE_NO_DATASHEET if peaks else NOTE_NO_ROOFS).format(gpu=repr(gpu_name or 'this GPU')))
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
        out["errors"]["fp8"] = f"{type(e).__name__}: {e}"[:280]
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
        out.append({"target": TARGET_LOW, "predicted": ">= 0.85", "measured": min(low), "met": min(low) >= 0.85})
    if high:
        out.append({"target": TARGET_HIGH, "predicted": ">= 0.75", "measured": min(high), "met": min(high) >= 0.75})
    return out


def sweep_from_rows(rows: list[dict]) -> list[dict]:
    """The AI-sweep rows found in a results folder (kind == 'sweep'), ordered by k."""
    return sorted((r for r in rows if r.get("kind") == "sweep" and r.get("ms")), key=lambda r: r.get("k", 0))


# ---------------------------------------------------------------------------------------------------------------------
# Output: table and plot
# ---------------------------------------------------------------------------------------------------------------------
TABLE_COLS = ["n", "lab", "variant", "dtype", "unit", "ai", "achieved", "roof", "bound", "frac_roof",
              "frac_datasheet_roof", "on_plot", "counts"]


def on_roofline(p: dict) -> bool:
    """A placed kernel with both an AI and an achieved TFLOP/s (a point on the roofline), not a k-FMA sweep point."""
    return bool(p.get("ai") and p.get("achieved_tflops") and not p.get("sweep"))


def _lab_key(lab_name: str):
    """Phase, lab number, then the name: the course's order."""
    m = re.match(r"phase(\d+)_lab(\d+)", lab_name or "")
    return (int(m.group(1)), int(m.group(2)), lab_name) if m else (99, 99, lab_name or "")


def named_points(placed: list[dict]) -> list[dict]:
    """The few points the roofline names: per lab with points on the roofline, its best kernel (ours: the highest
    achieved TFLOP/s) and its closest library peer (same dtype first, then the nearest AI - the same case - then the
    fastest). Every other kernel is in the table. Returns [{lab, best, peer (or None), bound}] in the course's order."""
    by_lab: dict = {}
    for p in placed:
        if on_roofline(p):
            by_lab.setdefault(p["lab"], []).append(p)
    out = []
    for labn in sorted(by_lab, key=_lab_key):
        ps = by_lab[labn]
        ours = [p for p in ps if p["impl"] != "peer"]
        if not ours:
            continue
        best = max(ours, key=lambda p: (p["achieved_tflops"], p.get("frac_roof") or 0.0))
        peers = [p for p in ps if p["impl"] == "peer"]
        peer = min(peers, key=lambda q: (q.get("dtype") != best.get("dtype"),
                                         round(abs(math.log2(q["ai"] / best["ai"])), 1), -q["achieved_tflops"])) \
            if peers else None
        bound = "compute" if str(best.get("bound", "")).startswith("compute") else "memory"
        out.append({"lab": labn, "best": best, "peer": peer, "bound": bound})
    return out


def _is_named(p: dict, named: list[dict]) -> bool:
    return any(p is n["best"] or p is n["peer"] for n in named)


def table_rows(placed: list[dict], said: bool = False) -> list[dict]:
    """One table row per placed kernel; said: bound, on_plot and counts in the chosen language (the table printed;
    the English rows give the JSON its on_plot)."""
    named = named_points(placed)
    say_ = say if said else (lambda s: s)
    out = []
    for i, p in enumerate(placed, 1):
        if p["achieved_tflops"] is not None and p["ai"]:
            ach, roof = f"{p['achieved_tflops']:.3g} TFLOP/s", f"{p['roof_tflops']:.3g} TFLOP/s"
        else:
            ach = f"{p['achieved_gbps']:.0f} GB/s" if p["achieved_gbps"] else "-"
            roof = "HBM" if p["achieved_gbps"] else "-"
        on_plot = ("named" if _is_named(p, named) else "point") if on_roofline(p) else \
            ("sweep line" if p.get("sweep") else "right panel")
        on_plot = tr(on_plot) if said else on_plot
        out.append({"n": i, "lab": _short_lab(p["lab"]), "variant": (p["variant"] + (" [peer]" if p["impl"] == "peer"
                                                                                      else ""))[:48],
                    "dtype": p["dtype"], "unit": p["unit"], "ai": p["ai"], "achieved": ach, "roof": roof,
                    "bound": tr(p["bound"]) if said and p["bound"] else p["bound"], "frac_roof": p["frac_roof"],
                    "frac_datasheet_roof": p["frac_datasheet_roof"],
                    "on_plot": on_plot, "counts": "" if p["counts"] == "recorded" else say_(p["counts"])[:40]})
    return out


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


def point_label(n: dict, placed: list[dict], said: bool = False) -> str:
    """Two lines: 'lab: best kernel [dtype] fraction-of-roof' and 'peer: ... fraction' (the dtype only where the lab
    put several on the roofline); said: in the chosen language (the plot; the JSON keeps the English)."""
    dtypes = {p.get("dtype") for p in placed if p["lab"] == n["lab"] and on_roofline(p)}

    def one(p):
        dt = f" {DSHORT.get(p.get('dtype'), p.get('dtype'))}" if len(dtypes) > 1 else ""
        name = _normalized(p["variant"])
        name = name if len(name) <= 40 else name[:39].rstrip(" ,") + "\u2026"
        return f"{name}{dt} {p['frac_roof']:.2f}"

    peer = f"peer {one(n['peer'])}" if n["peer"] else (tr("(no library peer)") if said else "(no library peer)")
    return f"{_lab_title(n['lab'])}: {one(n['best'])}\n{peer}"


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
    """One figure for the repository: the roofline (left: points coloured by lab, each lab's best kernel and its peer
    named, the roofs labelled in the right margin) and every placed kernel's fraction of its roof, lab by lab (right:
    also the kernels with no FLOPs or no bytes, which have no point on the roofline). The full list is the table the
    lab prints and the JSON's placed rows. `missing`: what the figure lacks (a GPU without recorded results, roofs
    rebuilt), written in a box on the roofline."""
    plt = report.pyplot()
    from matplotlib.gridspec import GridSpec
    from matplotlib.lines import Line2D

    fig = plt.figure(figsize=(18, 10.5))
    gs = GridSpec(1, 2, width_ratios=[2.3, 1], figure=fig, left=0.045, right=0.985, bottom=0.065, top=0.93,
                  wspace=0.6)
    ax = fig.add_subplot(gs[0, 0])
    axs = fig.add_subplot(gs[0, 1])
    colors = lab_colors(placed)
    pts = [p for p in placed if on_roofline(p)]
    named = named_points(placed)
    ais = [p["ai"] for p in pts] + [r.get("ai") or 0 for r in sweep]
    ridges = {u: ceil.ridge(u) for u in UNITS if ceil.ridge(u)}
    xmin = max(min([a for a in ais if a > 0] or [0.1]) / 3, 1e-3)
    xmax = max(max(ais or [1.0]), *(ridges.values() or [1.0])) * 4
    top = max(list(ceil.peaks.values()) or [p["achieved_tflops"] for p in pts] + [r["tflops"] for r in sweep]
              or [1.0])
    n_compute = sum(1 for n in named if n["bound"] == "compute")
    ymin = min([p["achieved_tflops"] for p in pts] + [r["tflops"] for r in sweep] + [top]) / 3
    ymax = top * 1.4 * 10 ** (0.2 * max(n_compute, 1))          # room above the roofs for the compute-bound names
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
    # the points: colour = lab, marker = ours (CUDA C / Triton) or library peer
    for p in pts:
        col = colors[p["lab"]]
        peer = p["impl"] == "peer"
        ax.scatter([p["ai"]], [p["achieved_tflops"]], marker=IMPL_MARKERS.get(p["impl"], "s"), s=30 if peer else 26,
                   color=col, zorder=3, linewidths=1.2, alpha=0.9)
    for n in named:                  # the named pair: ringed, and joined by a dotted line
        col = colors[n["lab"]]
        for p in (n["best"], n["peer"]):
            if p is not None:
                ax.scatter([p["ai"]], [p["achieved_tflops"]], marker="o", s=90, facecolors="none", edgecolors=col,
                           linewidths=1.0, zorder=4)
        if n["peer"] is not None:
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
    handles += [Line2D([], [], color="k", marker="o", ms=9, mfc="none", ls=":",
                       label=tr("named: each lab's best kernel and its peer\n(label: fraction of its roof)")),
                Line2D([], [], color="gray", ls="--", label=tr("datasheet roofs"))]
    if sweep:
        handles.append(Line2D([], [], color=SWEEP_COLOR, marker="s", label=tr("k-FMA chain sweep (this lab)")))
    ax.legend(handles=handles, fontsize=7.5, loc="upper left", title=tr("colour = lab (named in the right panel)"),
              title_fontsize=7.5, framealpha=0.9)
    # the names, placed where nothing else is (display pixels, after the layout is final)
    fig.canvas.draw()
    to_px = ax.transData.transform
    dpi_scale = fig.dpi / 72.0
    line_px = 7 * 1.25 * dpi_scale
    mem = [n for n in named if n["bound"] == "memory"]
    comp = [n for n in named if n["bound"] == "compute"]
    if mem:
        # left-aligned in the empty band right of the memory-bound points and under the k-FMA sweep; the leaders run
        # left to the points, ordered so that they do not cross (by angle from the column)
        x_right = max(to_px((n["best"]["ai"], n["best"]["achieved_tflops"]))[0] for n in mem)
        x_col = x_right + 14 * dpi_scale
        floor_px = to_px((xmin, ymin))[1] + 4 * dpi_scale
        step = 2 * line_px + 3 * dpi_scale
        y_top = floor_px + step * (len(mem) - 0.5)
        y_mid = (y_top + floor_px) / 2

        def angle(n):
            px, py = to_px((n["best"]["ai"], n["best"]["achieved_tflops"]))
            return math.atan2(py - y_mid, x_col - px)

        items = [{"text": point_label(n, placed, said=True), "xy": (n["best"]["ai"], n["best"]["achieved_tflops"]),
                  "color": colors[n["lab"]]} for n in sorted(mem, key=angle, reverse=True)]
        _stack(fig, ax, items, x_col, y_top, step)
    if comp:
        # above the roofs, right-aligned at each point's x: a staircase (the leftmost point's name lowest), so each
        # leader drops to its point without crossing another name
        comp = sorted(comp, key=lambda n: (n["best"]["ai"], n["best"]["achieved_tflops"]))
        y_base = to_px((xmin, top * 1.4))[1] + line_px
        step = 2 * line_px + 4 * dpi_scale
        prev = -1e9
        for k, n in enumerate(comp):
            px = max(to_px((n["best"]["ai"], n["best"]["achieved_tflops"]))[0], prev + 10 * dpi_scale)
            prev = px
            tx, ty = ax.transData.inverted().transform((px, y_base + k * step))
            ax.annotate(point_label(n, placed, said=True), xy=(n["best"]["ai"], n["best"]["achieved_tflops"]),
                        xytext=(tx, ty),
                        ha="right", va="bottom", fontsize=7, color=colors[n["lab"]], zorder=6, linespacing=1.05,
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
    _fraction_panel(axs, placed, colors, named)
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path


def _fraction_panel(ax, placed: list[dict], colors: dict, named: list[dict]) -> None:
    """Every placed kernel as a fraction of its roof, one row per lab: the roofline's points and the kernels that
    have no point there (no FLOPs counted: GB/s over HBM; no bytes: TFLOP/s over the unit's peak)."""
    labs = sorted({p["lab"] for p in placed if p.get("frac_roof") is not None}, key=_lab_key)
    ys = {name: i for i, name in enumerate(labs[::-1])}
    best_ids = {id(n["best"]) for n in named} | {id(n["peer"]) for n in named if n["peer"]}
    xmax = 1.2
    for p in placed:
        f = p.get("frac_roof")
        if f is None:
            continue
        y = ys[p["lab"]]
        col = SWEEP_COLOR if p.get("sweep") else colors.get(p["lab"], NO_POINT_COLOR)
        shown = min(f, xmax - 0.02)
        mk = "s" if p.get("sweep") else IMPL_MARKERS.get(p["impl"], "s")
        ax.scatter([shown], [y], marker=mk, s=30, color=col, alpha=0.85, linewidths=1.2,
                   zorder=3)
        if id(p) in best_ids:
            ax.scatter([shown], [y], marker="o", s=90, facecolors="none", edgecolors=col, linewidths=1.0, zorder=4)
    ax.axvline(1.0, color="black", lw=1.2)
    ax.set_xlim(0, xmax)
    ax.set_ylim(-0.7, len(labs) - 0.3)
    ax.set_yticks([ys[n] for n in labs])
    kinds = {}
    for p in placed:
        kinds.setdefault(p["lab"], set()).add("point" if on_roofline(p) else "sweep" if p.get("sweep") else "bar")
    labels = []
    for n in labs:
        extra = "" if "point" in kinds[n] else (tr(" (line)") if kinds[n] == {"sweep"} else " *")
        labels.append(_lab_title(n) + extra)
    ax.set_yticklabels(labels, fontsize=7.5)
    for t, n in zip(ax.get_yticklabels(), labs):
        t.set_color(SWEEP_COLOR if kinds[n] == {"sweep"} else colors.get(n, NO_POINT_COLOR))
    prev_phase = None
    for n in labs:
        ph = _lab_key(n)[0]
        if prev_phase is not None and ph != prev_phase:
            ax.axhline(ys[n] + 0.5, color="gray", lw=0.6)
        prev_phase = ph
    ax.grid(True, axis="x", alpha=0.3)
    ax.tick_params(axis="x", labelsize=8)
    ax.set_xlabel(tr("fraction of the roof (achieved / min(peak of its unit, AI x HBM))"), fontsize=8.5)
    ax.annotate("roof", xy=(1.0, 1.0), xycoords=("data", "axes fraction"), xytext=(0, 2), textcoords="offset points",
                ha="center", va="bottom", fontsize=8)
    ax.set_title(tr("every placed kernel, lab by lab: how close to its roof\n"
                    "(* = no point on the roofline: no FLOPs or no bytes counted)"), fontsize=8.5, pad=14)


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
    placed, left = analyze(rows, ceil)
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
               tr("Every kernel on the roofline ({n} placed; frac_roof = achieved / min(peak of its unit, AI x HBM); "
                  "memory-only kernels: GB/s / HBM; on_plot: 'named' = labelled on the roofline, 'point' = an "
                  "unlabelled point there, 'right panel' = only in the fraction-of-roof panel)", n=len(placed)))]
    if targets:
        tables.append(([dict(t, target=tr(t["target"])) for t in targets], ["target", "predicted", "measured", "met"],
                       "The k-FMA sweep's predictions"))
    return lab.Result(rows=kept + placed, tables=tables,
                      meta=dict(ceilings=ceil.as_dict(), results_dir=os.path.relpath(results_dir, ROOT)
                                if results_dir else None, left_out=left, missing=missing,
                                source_gpu=gpu_name, targets=targets, roof=args.roof, summary=summary,
                                named_on_plot=[{"lab": n["lab"], "best": n["best"]["variant"],
                                                "peer": (n["peer"] or {}).get("variant"),
                                                "label": point_label(n, placed)} for n in named]))


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
    run's measurements)."""
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
    title = tr("Roofline of {gpu}: every kernel of the repository (HBM {gbps:,.0f} GB/s; roofs: {roof})", gpu=gpu,
               gbps=ceil.hbm_gbps, roof=tr(data.get('roof', 'measured')))
    return [plot_roofline(os.path.join(out_dir, f"{LAB}.png"), placed, ceil, sweep, title, missing)]
