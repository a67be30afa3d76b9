"""Lab 4.2's byte model, before any timing: the elements each chain must move fused and unfused, the speed-up their
ratio predicts, and the rates the GEMM row's prediction divides by (lab 4.1's measured ceilings, else the datasheet)."""
from __future__ import annotations

import os

from common import device, report
from common.i18n import tr

from . import lab as L


# ---------------------------------------------------------------------------------------------------------------------
# The prediction: bytes each variant must move (elements of the storage dtype; bias rows and layernorm weights ignored)
# ---------------------------------------------------------------------------------------------------------------------
def predicted_elements(case: str, fused: bool) -> int:
    """Multiples of M N elements: what one call reads + writes from memory."""
    table = {"bias_gelu_tanh": (4, 2), "bias_gelu_erf": (4, 2), "bias_residual": (5, 3),
             "residual_layernorm": (5, 4), "linear_gelu_tanh": (5, 1)}
    unf, fu = table[case]
    return fu if fused else unf


# The rates the GEMM row of the prediction assumes: the GPU's 16-bit tensor-core rate and its HBM bandwidth. Measured
# where a measurement exists (the HBM ceiling of this run; lab 4.1's --measure of cuBLAS at 8192^3, its
# phase4_lab01_ceilings.json in this GPU's results folder), else the GPU's datasheet (common.device).
LAB01_CEILINGS = "phase4_lab01_ceilings.json"


def prediction_rates(gpu: device.DeviceInfo, hbm_measured: float | None = None) -> dict:
    """{gemm_tflops, gemm_from, hbm_gbps, hbm_from} for `gpu`: the rates the GEMM row's prediction divides by."""
    unit = "bf16" if L.gemm_dtype(gpu) == "bfloat16" else "fp16"
    measured = {}
    path = os.path.join(report.ROOT, "results", gpu.slug, LAB01_CEILINGS)
    if os.path.exists(path):
        try:
            doc = report.read_json(path)
            if doc.get("gpu") in (None, gpu.name):
                measured = doc.get("ceilings") or {}
        except (OSError, ValueError):
            measured = {}
    where = tr("measured ({path})", path=os.path.relpath(path, report.ROOT))
    out = {}
    if (measured.get("tflops") or {}).get(unit):
        out.update(gemm_tflops=float(measured["tflops"][unit]), gemm_from=f"cuBLAS {unit} {where}")
    elif gpu.peak(f"{unit}_tflops"):
        out.update(gemm_tflops=float(gpu.peak(f"{unit}_tflops")), gemm_from=tr("{unit} datasheet peak", unit=unit))
    else:
        out.update(gemm_tflops=None, gemm_from=tr("no {unit} rate known for {gpu}", unit=unit, gpu=gpu.name))
    if hbm_measured:
        out.update(hbm_gbps=float(hbm_measured), hbm_from=tr("HBM ceiling measured in this run"))
    elif measured.get("hbm_gbps"):
        out.update(hbm_gbps=float(measured["hbm_gbps"]), hbm_from=tr("HBM ceiling {where}", where=where))
    else:
        out.update(hbm_gbps=gpu.hbm_gbps, hbm_from=tr("datasheet bandwidth") if gpu.peak("hbm_gbps") else
                   tr("memory clock x bus width"))
    return out


def byte_table(m_ew: int, n_ew: int, m_ln: int, n_ln: int, gemm: int, elt: int = 2, *, gemm_tflops: float | None,
               hbm_gbps: float) -> list[dict]:
    """The prediction, before any timing: bytes, launches and the speed-up they imply (the GEMM row's at
    gemm_tflops and hbm_gbps: the GEMM's time plus its unfused tail's, over the GEMM's)."""
    rows = []
    for case, launches, shape in (("bias_gelu_tanh", (2, 1), (m_ew, n_ew)), ("bias_gelu_erf", (2, 1), (m_ew, n_ew)),
                                  ("bias_residual", (2, 1), (m_ew, n_ew)),
                                  ("residual_layernorm", (2, 1), (m_ln, n_ln))):
        mn = shape[0] * shape[1]
        u, f = predicted_elements(case, False), predicted_elements(case, True)
        rows.append({"case": case, "shape": f"{shape[0]}x{shape[1]}", "unfused launches": launches[0],
                     "unfused bytes": f"{u} MN = {u * mn * elt / 1e6:.0f} MB", "fused launches": launches[1],
                     "fused bytes": f"{f} MN = {f * mn * elt / 1e6:.0f} MB", "predicted speed-up": u / f})
    mn = gemm * gemm
    tail_ms = 4 * mn * elt / (hbm_gbps * 1e9) * 1e3
    gemm_ms = 2.0 * gemm ** 3 / (gemm_tflops * 1e12) * 1e3 if gemm_tflops else None
    rows.append({"case": "linear_gelu_tanh", "shape": f"{gemm}^3", "unfused launches": 3,
                 "unfused bytes": f"GEMM + 4 MN = {(3 * mn + 4 * mn) * elt / 1e6:.0f} MB",
                 "fused launches": 1, "fused bytes": f"GEMM (x, W, y) = {3 * mn * elt / 1e6:.0f} MB",
                 "predicted speed-up": (gemm_ms + tail_ms) / gemm_ms if gemm_ms else None})
    return rows
