"""Lab 4.1's roofs: the HBM and compute ceilings of a results folder, each from the best source there is (this lab's
measured ceilings, measured peers in the results, this run's HBM ceiling, the datasheet, the memory clock), named."""
from __future__ import annotations

import os

from common import device, report

from .lab import CEILINGS_FILE, UNITS, Ceilings, datasheet_for, datasheet_of
from .phrases import (NOTE_FFMA, NOTE_NO_DATASHEET, NOTE_NO_ROOFS, SRC_CLOCK, SRC_MEASURED, SRC_PEER, SRC_RECORDED,
                      SRC_THIS_RUN)


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
