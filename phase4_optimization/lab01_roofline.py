"""Lab 4.1 - The roofline: where every kernel of the repository stands against the memory and compute ceilings.

You will learn
  * what a roofline is: a kernel that moves B bytes to and from HBM and does F floating-point operations has an
    arithmetic intensity AI = F / B (FLOP/B). It cannot run faster than the memory system delivers bytes
    (AI x HBM GB/s) nor faster than the arithmetic units retire FLOPs (the compute peak of the unit it uses), so its
    roof is min(peak, AI x HBM). Plotted log-log, the memory ceiling is a diagonal and each compute ceiling a flat
    line; they meet at the ridge point AI* = peak / HBM. Left of the ridge a kernel is memory-bound (more bandwidth,
    or fewer bytes, would speed it up), right of it compute-bound (more FLOP/s, or fewer FLOPs, would);
  * that the ridge depends on the unit: FFMA on the CUDA cores (fp32) and the tensor cores (tf32, bf16/fp16, fp8)
    have peaks an order of magnitude apart, so a bf16 GEMM needs ~15x more FLOP/B than an fp32 one to leave the
    memory roof;
  * how to read "distance from the roof": achieved / roof, a fraction. A memory-bound kernel at 0.95 has nothing
    left but moving fewer bytes (fusion, lab 4.2; smaller dtypes, lab 4.5); a compute-bound one at 0.4 is losing
    time to something the roofline does not draw (latency, occupancy, instruction overhead, shared memory);
  * to measure the roof rather than only draw it: a Triton kernel with a tunable intensity, y = k chained FMAs of
    x (AI = 2k FLOP per 8 bytes = k/4 FLOP/B in fp32), swept over k, crosses from the memory roof to the fp32
    compute roof near k ~ 4 x ridge.

The two numbers. The tool works on the byte and FLOP counts each lab recorded: bytes = gbps x ms and FLOPs =
tflops x ms of every results/<gpu>/*.json row (where a row lacks one of them, a byte/FLOP model fills it in: the
lab's own `roofline_counts(row)` if it defines one, else the GEMM, softmax and layernorm models in MODELS below, and
the row is marked so). For the AI-sweep kernel on n fp32 elements: bytes = 8 n (read x, write y), FLOPs = 2 k n.
At k = 1 that is 0.25 FLOP/B (memory wins by ~60x); at k = 256, 64 FLOP/B (compute wins by ~4x).

Ridge points on an H200 (HBM measured 4.34-4.36 TB/s in this repository's runs, datasheet 4.8 TB/s):
  fp32 FFMA    67 TFLOP/s datasheet (measured: cuBLAS SGEMM ~51)        -> ridge ~15 FLOP/B (~12 with SGEMM)
  tf32 tensor 494 datasheet                                              -> ~113 FLOP/B
  bf16/fp16   989 datasheet (measured: cuBLAS 4096^3 ~703 / ~651)        -> ~227 FLOP/B (~161 measured)
  fp8        1979 datasheet                                              -> ~454 FLOP/B
Where the repository's kernels land (from results/h200, roofs = the measured figures above; run the lab for the table):
  * every elementwise kernel, copy, transpose, reduction, scan, softmax and layernorm: 0-2 FLOP/B, far left of every
    ridge: memory-bound, so their distance from the roof is their fraction of the HBM ceiling: 0.9-1.0 for the tuned
    rungs (vector add float4 1.0, reduction 08 0.98, transpose 04 0.91, softmax 05 0.89, layernorm fwd 0.93), 0.1-0.5
    for the early ones (reduction 01 0.09: divergence; transpose 01 0.13: uncoalesced; bank-conflicted sums 0.23).
    The int32 branch kernels of lab 1.3 sit at 0.01-0.03: they are latency demonstrations with no FLOPs counted;
  * SGEMM (phase 2 lab 8), headline 8192^3 fp32: compulsory bytes 3 x 256 MiB, AI ~1365 FLOP/B: compute-bound on the
    fp32 roof; the autotuned rung at 0.89 of measured cuBLAS (51 TFLOP/s) and 0.69 of the datasheet 67;
  * the Triton matmul (phase 3 lab 2): bf16 8192^3 at AI ~2731, 0.89 of the measured bf16 roof (cuBLAS 703 at
    4096^3) and 0.63 of the datasheet 989; fp16 4096^3 0.96; tf32 only 0.35 of cuBLAS tf32 (397): the one GEMM far
    under its roof;
  * the naive matmuls (phase 1 lab 6) have a high AI on paper (compulsory bytes) but run at 0.01-0.09 of the fp32
    roof: they re-read operands from L2/HBM many times. The roofline counts only the bytes that must move, so the
    gap is the cost of the traffic the kernel adds (the 64x64-tile Triton version closes it to 0.84).
Performance target (issue 8, lab 1): every kernel placed, labelled memory- or compute-bound with its fraction of the
roof, one plot for the repository (results/h200/phase4_lab01_roofline.png). Predictions for the AI sweep on a GPU:
>= 0.85 of the HBM roof for k <= 8 (an elementwise Triton kernel reached 0.95 in lab 1.1), and >= 0.75 of the
datasheet fp32 peak for k >= 512 (lab 1.4's FFMA register probe, no memory traffic at all, reached 57 of 67 TFLOP/s,
0.85; the loop's own counter and branch cost ~3 issue slots per 32 FFMAs).

Measured on an H200 (results/h200/phase4_lab01_ceilings.json for the ceilings, phase4_lab01_roofline.json for the
sweep and the placement; the sweep was recorded on the GPU, the placement re-run from the committed results): both
sweep predictions held. Measured ceilings (--measure): HBM 4,340 GB/s (a torch add); torch.matmul at 8192^3: fp32
51.3 TFLOP/s (TF32 off), tf32 360.1, bf16 680.0, fp16 672.2, and fp8 1304.9 (torch._scaled_mm e4m3, fast
accumulation). Ridges on those roofs: fp32 11.8 FLOP/B (predicted ~12: held), tf32 83.0, bf16 156.7, fp16 154.9 (~161
predicted), fp8 300.7. Every tensor-core roof measured at 0.66-0.73 of its datasheet peak (tf32 0.73, bf16 0.69,
fp16 0.68, fp8 0.66), so the measured ridges sit left of the datasheet ones (tf32 83 vs ~113, fp8 301 vs ~454).
  * k-FMA sweep, 2^26 fp32 elements: k = 1 .. 8 ran at 4,087-4,113 GB/s, worst 0.942 of the HBM roof (>= 0.85
    predicted: held); k = 16 and 32 (AI 4 and 8, still left of the 11.8 ridge) stayed on it (0.946, 0.928). The
    crossing came between k = 32 and k = 64 (AI 16: 45.0 TFLOP/s, 0.878 of the fp32 roof, 0.649 of the HBM one), as
    the k ~ 4 x ridge rule said. k >= 512: 59.4 TFLOP/s at k = 512 and 60.2 at k = 1024, worst 0.886 of the
    datasheet 67 (>= 0.75 predicted: held). From k = 128 on (52.0 TFLOP/s) the chain beat the measured fp32 roof
    (cuBLAS SGEMM, 51.3), and from k = 256 (57.5) it beat lab 1.4's register probe (57.0): the loop overhead was
    smaller than guessed, and neither figure is the FFMA ceiling, which the chain puts at >= 60.2 (0.90 of datasheet).
  * Placement: 193 rows from 28 labs' results placed, 227 left out with a reason (sweep points whose best is shown,
    probes of shared memory or registers, rows with neither GB/s nor TFLOP/s). 93 memory-bound and 36 with bytes
    but no FLOP count (copies, transposes, branch probes; read against the HBM roof); 49 compute-bound; 15 with
    FLOPs but no byte count ("compute?"). The phase 1-3 figures quoted above held on the measured roofs: vector add
    float4 1.01 of the HBM roof, reduction 08 0.988, transpose 04 0.918, softmax 05 0.889 (fp32), layernorm fwd
    0.932; reduction 01 0.095, transpose 01 0.128, conflicted sums 0.229, branch kernels 0.014-0.028; SGEMM 11
    0.895 of the fp32 roof (0.685 of datasheet); the naive matmuls 0.010 and 0.088, the 64 x 64 Triton tile 0.839.
    The Triton matmul moved with the new roofs: bf16 8192^3 0.917 (623 TFLOP/s), fp16 4096^3 0.926, tf32 0.381.
  * Phase 4 on the map: wgmma+TMA (lab 4.3) 713 TFLOP/s at bf16 8192^3, 1.05 of the measured bf16 roof (0.721 of
    datasheet), and 668 at fp16 4096^3 (0.994); mma.sync 0.38-0.40, wmma 0.14-0.15 of the roof, the Triton tl.dot
    0.86-0.88. Flash attention (lab 4.6, AI ~1020 forward): Triton forward 0.63 (428 TFLOP/s), backward 0.54, the
    mma.sync CUDA forward 0.45; cuDNN SDPA 0.77 / 0.76. The naive attention forward (AI 60, left of the bf16 ridge)
    is memory-bound at 0.916 of HBM. Fractions above 1 are the measured roof's own noise, not a faster unit: the
    ceilings run's cuBLAS bf16 8192^3 gave 680 TFLOP/s, the same call in lab 4.3's run 738 (1.085) and lab 4.5's
    bf16 4096^3 790 (1.16); a measured roof is one run's figure, with a band of ~10% across runs (why the runs
    differ was not examined: no clocks were logged and no ncu profile was taken).

Run: python -m phase4_optimization.lab01_roofline [--quick] [--results results/h200] [--measure] [--out DIR]
"""
from __future__ import annotations

import argparse
import glob
import importlib
import math
import os
import re
import sys
from dataclasses import dataclass, field

import numpy as np

from common import arrays, bench, check, cli, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase4_lab01_roofline"
CEILINGS_FILE = "phase4_lab01_ceilings.json"
ROOT = report.ROOT

# ---------------------------------------------------------------------------------------------------------------------
# Datasheet peaks (dense, no sparsity), TFLOP/s and GB/s. Leads, not measurements; fp8 is missing from
# common.device.DATASHEET, so this table carries it. Source: NVIDIA H200 / H100 SXM product pages (dense figures are
# half the "with sparsity" ones printed there).
# ---------------------------------------------------------------------------------------------------------------------
DATASHEET = {
    "H200": dict(hbm_gbps=4800, fp32=67, tf32=494, bf16=989, fp16=989, fp8=1979),
    "H100": dict(hbm_gbps=3350, fp32=67, tf32=494, bf16=989, fp16=989, fp8=1979),
    "A100": dict(hbm_gbps=2039, fp32=19.5, tf32=156, bf16=312, fp16=312, fp8=None),
}
DATASHEET_SOURCE = "NVIDIA datasheet ({}), dense"
UNITS = ("fp32", "tf32", "bf16", "fp16", "fp8")
UNIT_NAMES = {"fp32": "fp32 FFMA (CUDA cores)", "tf32": "tf32 tensor cores", "bf16": "bf16 tensor cores",
              "fp16": "fp16 tensor cores", "fp8": "fp8 tensor cores"}
ELT_BYTES = {"float64": 8, "float32": 4, "tf32": 4, "int32": 4, "bfloat16": 2, "float16": 2, "float8": 1,
             "float8_e4m3fn": 1, "float8_e5m2": 1, "fp8": 1, "int8": 1}
# labs whose bf16/fp16/tf32/fp8 rows are tensor-core GEMM work (everything else computes on the CUDA cores, whatever
# it loads: a bf16 softmax converts to fp32 and does its math in FFMA/MUFU)
TENSOR_LAB_WORDS = ("matmul", "gemm", "tensor_core", "attention", "mixed_precision", "transformer")


def datasheet_for(gpu_name: str) -> tuple[dict, str]:
    """Datasheet peaks for a GPU name, fp8 included where known; ({}, '') for a card not in either table."""
    for key in sorted(DATASHEET, key=len, reverse=True):
        if key.lower() in (gpu_name or "").lower():
            return dict(DATASHEET[key]), DATASHEET_SOURCE.format(key)
    ds = device.datasheet(gpu_name or "")
    if ds:
        return ({"hbm_gbps": ds.get("hbm_gbps"), "fp32": ds.get("fp32_tflops"), "tf32": ds.get("tf32_tflops"),
                 "bf16": ds.get("bf16_tflops"), "fp16": ds.get("fp16_tflops"), "fp8": None}, ds["source"])
    return {}, ""


# =====================================================================================================================
# Part 1 - a kernel with a tunable arithmetic intensity (the lab's VARIANTS): y = k chained FMAs applied to x
# =====================================================================================================================
FMA_A = 0.9375    # exact in binary; |A| < 1 makes the chain contract, so fp32 rounding errors shrink, never grow
FMA_B = 0.0625    # fixed point B / (1 - A) = 1.0: values stay O(1) for any k
BLOCK = 1024
NUM_WARPS = 4     # 8 elements per thread: 8 independent FMA chains per thread hide the 4-cycle FFMA latency
MAX_K = 1 << 20


@triton.jit
def fma_chain_kernel(x_ptr, y_ptr, n, k, a, b, BLOCK: tl.constexpr):
    """y[i] = f^k(x[i]) with f(v) = a v + b: one load, k FFMAs, one store per element.

    Launch: one program per BLOCK elements. Bytes: 8 n (fp32 in and out). FLOPs: 2 k n. k is a run-time argument,
    so the loop is a real loop (not unrolled away) and one compiled kernel serves the whole sweep; the chain is
    serial per element, so the compiler cannot fold it, and tl.fma makes each step exactly one FFMA. Each thread
    holds BLOCK / (32 x num_warps) = 8 elements: 8 independent chains, enough to hide the FFMA latency (~4 cycles)
    at one FFMA issued per cycle per SM sub-partition.
    """
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # four FMAs a trip: the loop's own counter, compare and branch take issue slots too, and at one FMA a trip
    # they would cap the kernel near 8 / 11 of the FFMA peak (8 elements a thread); at four, near 32 / 35
    for _ in range(k // 4):
        for _u in tl.static_range(4):
            y = tl.fma(y, a, b)
    for _ in range(k % 4):
        y = tl.fma(y, a, b)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def fma_chain(x, k: int, out=None):
    """Apply k chained FMAs (v <- 0.9375 v + 0.0625) to every element of a 1-D fp32 array."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k: expected an int (FMAs per element), got {type(k).__name__}")
    k = int(k)
    if not 0 <= k <= MAX_K:
        raise ValueError(f"k: expected 0 <= k <= {MAX_K}, got {k}")
    on_gpu = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, device=on_gpu)
    n = arrays.size(x)
    if n == 0:
        raise ValueError("x: expected a non-empty array")
    out = arrays.check_out(out, (n,), "float32", x)
    grid = (triton.cdiv(n, BLOCK),)
    launch(fma_chain_kernel, grid, x, out, n, k, FMA_A, FMA_B, BLOCK=BLOCK, num_warps=NUM_WARPS)
    return out


def reference(x, k):
    """float64 NumPy: the same chain."""
    y = np.asarray(x, np.float64).copy()
    for _ in range(int(k)):
        y = y * FMA_A + FMA_B
    return y


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """size = (n, k): n standard-normal values (distinct per element, so an indexing error shows) and k."""
    n, k = size
    x = rng.standard_normal(n) * 4.0
    return arrays.from_numpy(x, dtype, where), int(k)


def sweep_counts(n: int, k: int) -> tuple[float, float]:
    """(bytes, FLOPs) of one fma_chain call on n fp32 elements."""
    return 8.0 * n, 2.0 * k * n


VARIANTS = [lab.Variant("triton fma chain", fma_chain, "triton", ("float32",),
                        note="k FFMAs per element, AI = k/4 FLOP/B")]
PEERS: list = []   # no library computes this; the roof itself is the comparison
# sizes that are 1, primes and non-multiples of BLOCK, with k = 0 (a copy), small and odd k
CPU_CHECK_CASES = [((1, 0), "float32"), ((1, 3), "float32"), ((1000, 1), "float32"), ((4099, 7), "float32"),
                   ((2053, 33), "float32")]
CHECK_CASES = CPU_CHECK_CASES + [((1_000_003, 64), "float32"), ((3 * 2**20 + 1, 257), "float32")]
SWEEP_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SWEEP_N = 1 << 26       # 256 MiB in + 256 MiB out: far beyond the 60 MiB L2


def tolerance(size, dtype: str) -> check.Tol:
    # each FMA rounds once (~6e-8 relative); the chain contracts by 0.9375 a step, so errors add up to at most
    # 1 / (1 - 0.9375) = 16 roundings: fp32's default tolerance holds for every k
    return check.tolerance("float32")


# =====================================================================================================================
# Part 2 - reading every result file and placing its kernels on the roofline
# =====================================================================================================================
@dataclass
class Ceilings:
    """The roofs: HBM bandwidth and one compute peak per unit, each with where it came from."""
    hbm_gbps: float
    peaks: dict                        # unit -> TFLOP/s used as the roof (measured where there is a measurement)
    sources: dict = field(default_factory=dict)      # 'hbm' / unit -> where the figure came from
    datasheet: dict = field(default_factory=dict)    # 'hbm_gbps' / unit -> datasheet figure
    notes: list = field(default_factory=list)

    def peak(self, unit: str) -> float | None:
        return self.peaks.get(unit)

    def ridge(self, unit: str, *, datasheet: bool = False) -> float | None:
        """AI (FLOP/B) where the unit's flat roof meets the HBM diagonal."""
        p = self.datasheet.get(unit) if datasheet else self.peaks.get(unit)
        bw = (self.datasheet.get("hbm_gbps") if datasheet else self.hbm_gbps)
        return p * 1e3 / bw if p and bw else None

    def as_dict(self) -> dict:
        return {"hbm_gbps": self.hbm_gbps, "peaks_tflops": self.peaks, "sources": self.sources,
                "datasheet": self.datasheet, "ridges_flop_per_byte": {u: self.ridge(u) for u in self.peaks},
                "notes": self.notes}


def place(nbytes: float | None, flops: float | None, ms: float, unit: str, ceil: Ceilings) -> dict:
    """Where one kernel sits: AI, achieved TFLOP/s and GB/s, roof, bound, fraction of the roof.

    With FLOPs unknown or zero (a copy, a transpose) the roof is the HBM bandwidth and the fraction is GB/s over it.
    """
    if not ms or ms <= 0:
        raise ValueError(f"ms: expected a positive time, got {ms!r}")
    out = {"unit": unit, "ai": None, "achieved_tflops": None, "achieved_gbps": None, "roof_tflops": None,
           "ridge": ceil.ridge(unit), "bound": None, "frac_roof": None, "frac_datasheet_roof": None}
    if nbytes:
        out["achieved_gbps"] = nbytes / (ms * 1e6)
    if flops:
        out["achieved_tflops"] = flops / (ms * 1e9)
    if nbytes and flops:
        ai = flops / nbytes
        peak = ceil.peak(unit)
        mem_roof = ai * ceil.hbm_gbps / 1e3
        roof = min(peak, mem_roof) if peak else mem_roof
        out.update(ai=ai, roof_tflops=roof, frac_roof=out["achieved_tflops"] / roof)
        ridge = out["ridge"]
        out["bound"] = ("memory" if ai < ridge else "compute") if ridge else "memory (no compute peak known)"
        dpeak, dbw = ceil.datasheet.get(unit), ceil.datasheet.get("hbm_gbps")
        if dpeak and dbw:
            out["frac_datasheet_roof"] = out["achieved_tflops"] / min(dpeak, ai * dbw / 1e3)
    elif nbytes:
        out.update(ai=0.0 if flops == 0 else None, roof_tflops=None, bound="memory (no FLOPs)",
                   frac_roof=out["achieved_gbps"] / ceil.hbm_gbps)
        if ceil.datasheet.get("hbm_gbps"):
            out["frac_datasheet_roof"] = out["achieved_gbps"] / ceil.datasheet["hbm_gbps"]
    elif flops:
        peak = ceil.peak(unit)
        out.update(bound="compute? (bytes unknown)", roof_tflops=peak,
                   frac_roof=out["achieved_tflops"] / peak if peak else None)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Byte / FLOP models for rows that recorded only one of the two
# ---------------------------------------------------------------------------------------------------------------------
def _prod(shape) -> int:
    return int(np.prod([int(s) for s in shape], dtype=np.int64)) if shape else 0


def _gemm_model(row):
    """C = A B with (M, N, K) in any order: compulsory bytes = (MK + KN + MN) x elt (symmetric in the three)."""
    m, n, k = (int(s) for s in row["shape"])
    elt = ELT_BYTES.get(row.get("dtype"), 4)
    return (m * k + k * n + m * n) * elt, 2.0 * m * n * k


def _softmax_model(row):
    """5 FLOPs an element (max, subtract, exp, sum, divide), as phase 2 lab 7 and phase 3 lab 3 count them."""
    return None, 5.0 * _prod(row["shape"])


def _layernorm_model(row):
    """~8 FLOPs an element forward, ~12 backward (phase 3 lab 4's docstring)."""
    back = re.search(r"bwd|backward", row.get("variant", ""), re.I)
    return None, (12.0 if back else 8.0) * _prod(row["shape"])


# (test on the row, model, what to call it)
MODELS = [
    (lambda r: any(w in r["lab"] for w in ("matmul", "gemm")) and len(r.get("shape") or []) == 3, _gemm_model,
     "GEMM model: 2MNK FLOPs, (MK+KN+MN) x elt bytes"),
    (lambda r: "softmax" in r["lab"] and len(r.get("shape") or []) == 2, _softmax_model, "softmax model: 5 FLOP/elt"),
    (lambda r: "layernorm" in r["lab"] and len(r.get("shape") or []) == 2, _layernorm_model,
     "layernorm model: 8 (fwd) / 12 (bwd) FLOP/elt"),
]


def _lab_module_file(lab_name: str) -> str | None:
    m = re.match(r"phase(\d+)_lab(\d+)", lab_name or "")
    if not m:
        return None
    hits = sorted(glob.glob(os.path.join(ROOT, f"phase{m.group(1)}_*", f"lab{m.group(2)}_*.py")))
    return hits[0] if hits else None


def _lab_hook(lab_name: str):
    """The lab's own roofline_counts(row) -> (bytes, flops), if its module defines one (found without importing)."""
    path = _lab_module_file(lab_name)
    if not path:
        return None
    try:
        with open(path) as f:
            if "def roofline_counts(" not in f.read():
                return None
        rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
        return getattr(importlib.import_module(rel), "roofline_counts", None)
    except Exception:  # noqa: BLE001 - a lab that fails to import just has no model here
        return None


def counts(row: dict) -> tuple[float | None, float | None, str]:
    """(bytes, FLOPs, source) of one result row: recorded figures first, then the lab's model, then MODELS."""
    ms = row.get("ms")
    nbytes = row["gbps"] * ms * 1e6 if row.get("gbps") is not None and ms else None
    flops = row["tflops"] * ms * 1e9 if row.get("tflops") is not None and ms else None
    src = "recorded"
    if nbytes is None or flops is None:
        for fn, name in [(_lab_hook(row.get("lab", "")), "lab's roofline_counts")] + \
                        [(mf, mname) for test, mf, mname in MODELS if test(row)]:
            if fn is None:
                continue
            try:
                mb, mf_ = fn(row)
            except Exception:  # noqa: BLE001 - a model that cannot handle this row is skipped
                continue
            filled = []
            if nbytes is None and mb is not None:
                nbytes = float(mb)
                filled.append("bytes")
            if flops is None and mf_ is not None:
                flops = float(mf_)
                filled.append("FLOPs")
            if filled:
                src = f"{'+'.join(filled)} from {name}"
            if nbytes is not None and flops is not None:
                break
        if nbytes is None or flops is None:
            missing = "FLOPs" if flops is None else "bytes"
            src = (src + "; " if src != "recorded" else "") + f"{missing} unknown: placed by what it has"
    return nbytes, flops, src


def unit_for(lab_name: str, variant: str, dtype: str) -> str:
    """The arithmetic unit whose peak is the kernel's compute roof."""
    d = (dtype or "").lower()
    tensor = (any(w in (lab_name or "") for w in TENSOR_LAB_WORDS)
              or re.search(r"tensor|wmma|mma|tl\.dot|^linear", variant or ""))   # lab 4.2's GEMMs: "linear_..."
    if tensor:
        # lab 4.5 labels its rows by precision ("bf16", "fp8 e4m3 (per-tensor scales)", "fp32 (TF32 off)")
        if d.startswith("tf32"):
            return "tf32"
        if d in ("bfloat16", "bf16") or d.startswith("bf16 "):
            return "bf16"
        if d in ("float16", "fp16") or d.startswith("fp16 "):
            return "fp16"
        if d.startswith("float8") or d.startswith("fp8"):
            return "fp8"
    return "fp32"


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


def plot(path: str, placed: list[dict], ceil: Ceilings, sweep: list[dict], title: str) -> str:
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


# ---------------------------------------------------------------------------------------------------------------------
def default_results_dir() -> str:
    """results/<gpu at hand>, or the committed results/h200 without a GPU."""
    if device.has_gpu():
        return os.path.join(ROOT, "results", device.gpu_slug())
    return os.path.join(ROOT, "results", "h200")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    p.add_argument("--results", default=None, metavar="DIR",
                   help="folder of result JSON files to place (default: results/<gpu at hand>, else results/h200)")
    p.add_argument("--measure", action="store_true",
                   help="on a GPU: measure HBM and the tensor-core / fp32 peaks (torch.matmul 8192^3) and cache them "
                        f"in <out>/{CEILINGS_FILE}")
    p.add_argument("--roof", choices=("measured", "datasheet"), default="measured",
                   help="which figures are the roofs (default: measured where there is a measurement)")
    p.add_argument("--sweep", action=argparse.BooleanOptionalAction, default=True,
                   help="run the k-FMA AI sweep on a GPU")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    gpu = device.has_gpu()
    cases = CHECK_CASES if gpu else CPU_CHECK_CASES
    if args.quick:
        cases = cases[:4]
    print("\nThe k-FMA chain kernel (tunable arithmetic intensity) against its float64 reference")
    _, ok = lab.check_variants(this, VARIANTS, cases)
    show_compile_report(args.arch)
    results_dir = os.path.abspath(args.results or default_results_dir())
    out_dir = args.out or report.results_dir()
    os.makedirs(out_dir, exist_ok=True)
    sweep_rows, measured = [], None
    if gpu and args.bench:
        if not ok:
            print("correctness failed: not measuring")
            return 1
        if args.measure:
            measured = measure_ceilings(quick=args.quick)
            if args.json:
                print("wrote", report.write_json(CEILINGS_FILE[:-5], [], out_dir=out_dir, ceilings=measured,
                                                 device=device.info().as_dict()))
        if args.sweep:
            hbm = bench.ceilings()["hbm_gbps"]
            sweep_rows = run_sweep(SWEEP_KS[::2] if args.quick else SWEEP_KS, (1 << 24) if args.quick else SWEEP_N,
                                   hbm)
    if not os.path.isdir(results_dir):
        print(f"--results: no folder {results_dir}; nothing to place")
        return 0 if ok else 1
    rows, headers, gpu_name = load_rows(results_dir)
    if gpu:
        gpu_name = device.info().name if not gpu_name else gpu_name
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
    report.print_table(table_rows(placed), TABLE_COLS,
                       title=f"Every kernel on the roofline ({len(placed)} placed; frac_roof = achieved / "
                             "min(peak of its unit, AI x HBM); memory-only kernels: GB/s / HBM)")
    n_mem = sum(1 for p in placed if str(p["bound"]).startswith("memory"))
    print(f"\n{n_mem} of {len(placed)} placed kernels are memory-bound, {len(placed) - n_mem} compute-bound. "
          f"{len(left)} rows left out (sweep points, duplicates, rows without counts: see 'left_out' in the JSON).")
    targets = sweep_targets(sweep, ceil)
    for t in targets:
        print(f"target: {t['target']}: measured {t['measured']:.3f} (predicted {t['predicted']}) -> "
              f"{'met' if t['met'] else 'NOT met'}")
    if args.json:
        # the sweep measured now, or (re-placing on a machine without a GPU) the one recorded before: kept either way
        kept = sweep_rows or [{k: v for k, v in r.items() if not k.startswith("_")} for r in sweep]
        print("wrote", report.write_json(LAB, kept + placed, out_dir=out_dir, ceilings=ceil.as_dict(),
                                         results_dir=os.path.relpath(results_dir, ROOT), left_out=left,
                                         source_gpu=gpu_name, targets=targets))
    if args.plot:
        title = (f"Roofline of {gpu_name or 'the GPU'}: every kernel of the repository "
                 f"(HBM {ceil.hbm_gbps:,.0f} GB/s; roofs: {args.roof})")
        print("wrote", plot(os.path.join(out_dir, f"{LAB}.png"), placed, ceil, sweep, title))
    if not gpu:
        print("\nNo GPU: the k-FMA kernel ran in the interpreter (correctness only) and its sweep was not timed; "
              "the repository's kernels were placed from the recorded results.")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
