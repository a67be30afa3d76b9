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

The ridge points come from the GPU's description, its datasheet peaks over its bandwidth (`--plan` prints this GPU's:
the fp32 FFMA ridge sits an order of magnitude left of the tensor cores'); --measure measures the roofs themselves,
and the lab prints them. Every elementwise kernel, copy, transpose, reduction, scan, softmax and layernorm of the
repository sits at 0-2 FLOP/B, far left of every ridge: its distance from the roof is its fraction of the HBM ceiling.
A GEMM's compulsory bytes put it far right of its unit's ridge (8192^3 fp32: ~1365 FLOP/B), so its distance is its
fraction of that unit's peak - except where the kernel re-reads operands the roofline does not count (the naive
matmuls of lab 1.6: a high AI on paper, a small fraction of the roof).
Predictions for the AI sweep on a GPU: >= 0.85 of the HBM roof for k <= 8, and >= 0.75 of the datasheet fp32 peak
for k >= 512 (the loop's own counter and branch cost ~3 issue slots per 32 FFMAs); the crossing near k ~ 4 x the
fp32 ridge. Where every kernel landed, what the sweep measured and what that taught: README.md.

Run: python -m phase4_optimization.lab01_roofline [--quick] [--results results/<gpu>] [--roof datasheet] [--measure]
     [--no-sweep] [--out DIR] [--replot] [--plan [--gpu NAME]] [--set BLOCK=512]
"""
from __future__ import annotations

import glob
import importlib
import os
import re
from dataclasses import dataclass, field

import numpy as np

from common import arrays, check, config, device, lab, plan, report
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import fma_chain_kernel

LAB = "phase4_lab01_roofline"
CEILINGS_FILE = "phase4_lab01_ceilings.json"
ROOT = report.ROOT

DATASHEET_KEYS = {"hbm_gbps": "hbm_gbps", "fp32": "fp32_tflops", "tf32": "tf32_tflops", "bf16": "bf16_tflops",
                  "fp16": "fp16_tflops", "fp8": "fp8_tflops"}
UNITS = ("fp32", "tf32", "bf16", "fp16", "fp8")
UNIT_NAMES = {"fp32": "fp32 FFMA (CUDA cores)", "tf32": "tf32 tensor cores", "bf16": "bf16 tensor cores",
              "fp16": "fp16 tensor cores", "fp8": "fp8 tensor cores"}
ELT_BYTES = {"float64": 8, "float32": 4, "tf32": 4, "int32": 4, "bfloat16": 2, "float16": 2, "float8": 1,
             "float8_e4m3fn": 1, "float8_e5m2": 1, "fp8": 1, "int8": 1}
# labs whose bf16/fp16/tf32/fp8 rows are tensor-core GEMM work (everything else computes on the CUDA cores, whatever
# it loads: a bf16 softmax converts to fp32 and does its math in FFMA/MUFU)
TENSOR_LAB_WORDS = ("matmul", "gemm", "tensor_core", "attention", "mixed_precision", "transformer")


def datasheet_for(gpu_name: str) -> tuple[dict, str]:
    """Datasheet peaks (dense) of a GPU by the name the driver reports, from the course's table of GPUs
    (common.device.datasheet): {'hbm_gbps', 'fp32', 'tf32', 'bf16', 'fp16', 'fp8'} (a unit the GPU lacks is left out),
    and where they came from; ({}, '') for a card the table does not have."""
    return _peaks(device.datasheet(gpu_name or ""))


def datasheet_of(gpu: device.DeviceInfo) -> tuple[dict, str]:
    """The same for a GPU's description (the GPU at hand, or a profile of the table)."""
    return _peaks(gpu.datasheet or {})


def _peaks(ds: dict) -> tuple[dict, str]:
    if not ds:
        return {}, ""
    out = {k: ds.get(v) for k, v in DATASHEET_KEYS.items() if ds.get(v)}
    return out, ds.get("source", "datasheet")


# =====================================================================================================================
# Part 1 - a kernel with a tunable arithmetic intensity (the lab's VARIANTS): y = k chained FMAs applied to x
# =====================================================================================================================
FMA_A = 0.9375    # exact in binary; |A| < 1 makes the chain contract, so fp32 rounding errors shrink, never grow
FMA_B = 0.0625    # fixed point B / (1 - A) = 1.0: values stay O(1) for any k
# The kernel's tile (the lab's default; `--set BLOCK=2048` and the like override it): BLOCK elements per program over
# num_warps warps, so BLOCK / (32 num_warps) = 8 elements a thread: 8 independent FMA chains per thread hide the
# 4-cycle FFMA latency.
FMA = dict(BLOCK=1024, num_warps=4)
BLOCK, NUM_WARPS = FMA["BLOCK"], FMA["num_warps"]
MAX_K = 1 << 20
SWEEP_KS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
SWEEP_N = 1 << 26       # 256 MiB in + 256 MiB out: several times the L2 of any current GPU


def fma_config() -> config.Resolved:
    return config.resolve("triton fma_chain_kernel", FMA, validate=_check_fma)


def _check_fma(v: dict) -> dict:
    block, warps = v["BLOCK"], v["num_warps"]
    if warps not in (1, 2, 4, 8, 16) or block < 32 * warps or block & (block - 1) or block > 2**16:
        raise ValueError(f"fma_chain_kernel: num_warps in 1, 2, 4, 8, 16 and BLOCK a power of two from 32 x num_warps "
                         f"to 65536; got {config.fmt(v)}")
    return v


def fma_grid(n: int, block: int) -> int:
    """Programs of one fma_chain call on n elements: one per BLOCK."""
    return triton.cdiv(n, block)


def bench_bytes(n: int) -> int:
    """Bytes the k-FMA sweep holds at once at size n: x and y, fp32."""
    return 8 * n


def fma_chain(x, k: int, out=None):
    """Apply k chained FMAs (v <- 0.9375 v + 0.0625) to every element of a 1-D fp32 array (fma_chain_kernel)."""
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
    cfg = fma_config().values
    launch(fma_chain_kernel, (fma_grid(n, cfg["BLOCK"]),), x, out, n, k, FMA_A, FMA_B, BLOCK=cfg["BLOCK"],
           num_warps=cfg["num_warps"])
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


def tolerance(size, dtype: str) -> check.Tol:
    # each FMA rounds once (~6e-8 relative); the chain contracts by 0.9375 a step, so errors add up to at most
    # 1 / (1 - 0.9375) = 16 roundings: fp32's default tolerance holds for every k
    return check.tolerance("float32")


VARIANTS = [lab.Variant("triton fma chain", fma_chain, "triton", ("float32",),
                        note="k FFMAs per element, AI = k/4 FLOP/B")]
PEERS: list = []   # no library computes this; the roof itself is the comparison
# sizes that are 1, primes and non-multiples of BLOCK, with k = 0 (a copy), small and odd k
CPU_CHECK_CASES = [((1, 0), "float32"), ((1, 3), "float32"), ((1000, 1), "float32"), ((4099, 7), "float32"),
                   ((2053, 33), "float32")]
CHECK_CASES = CPU_CHECK_CASES + [((1_000_003, 64), "float32"), ((3 * 2**20 + 1, 257), "float32")]
QUICK_CASES = 4


# =====================================================================================================================
# Part 2 - the roofline model: the roofs, where one kernel sits under them, and the counts of a recorded row
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

    @classmethod
    def from_dict(cls, d: dict) -> "Ceilings":
        """The roofs as_dict() wrote into a JSON (what --replot draws with)."""
        return cls(hbm_gbps=float(d["hbm_gbps"]), peaks=dict(d.get("peaks_tflops") or {}),
                   sources=dict(d.get("sources") or {}), datasheet=dict(d.get("datasheet") or {}),
                   notes=list(d.get("notes") or []))


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


def _attention_model(row):
    """Compulsory bytes of attention on (B, H, S, D): read Q, K, V and write O once, 4 B H S D x elt (the FLOPs are
    recorded; the S x S scores never reach HBM in a flash kernel)."""
    return 4 * _prod(row["shape"]) * ELT_BYTES.get(row.get("dtype"), 2), None


def _layernorm_model(row):
    """~8 FLOPs an element forward, ~12 backward (phase 3 lab 4's docstring)."""
    back = re.search(r"bwd|backward", row.get("variant", ""), re.I)
    return None, (12.0 if back else 8.0) * _prod(row["shape"])


# (test on the row, model, what to call it)
MODELS = [
    (lambda r: (any(w in r["lab"] for w in ("matmul", "gemm")) or r["variant"].startswith("linear_"))
     and len(r.get("shape") or []) == 3, _gemm_model, "GEMM model: 2MNK FLOPs, (MK+KN+MN) x elt bytes"),
    (lambda r: "attention" in r["lab"] and len(r.get("shape") or []) == 4, _attention_model,
     "attention model: Q, K, V, O once"),
    (lambda r: "softmax" in r["lab"] and len(r.get("shape") or []) == 2, _softmax_model, "softmax model: 5 FLOP/elt"),
    (lambda r: "layernorm" in r["lab"] and len(r.get("shape") or []) == 2, _layernorm_model,
     "layernorm model: 8 (fwd) / 12 (bwd) FLOP/elt"),
]


def _lab_module_files(lab_name: str) -> list[str]:
    """The source files of the lab a result row names ('phase2_lab07_softmax'): its folder's lab.py and bench.py, or
    the flat module of a lab not yet moved into its folder."""
    m = re.match(r"phase(\d+)_lab(\d+)", lab_name or "")
    if not m:
        return []
    phase = os.path.join(ROOT, f"phase{m.group(1)}_*")
    folders = sorted(glob.glob(os.path.join(phase, f"lab{m.group(2)}_*", "lab.py")))
    if folders:
        here = os.path.dirname(folders[0])
        return [p for p in (os.path.join(here, "lab.py"), os.path.join(here, "bench.py")) if os.path.exists(p)]
    return sorted(glob.glob(os.path.join(phase, f"lab{m.group(2)}_*.py")))[:1]


def _lab_hook(lab_name: str):
    """The lab's own roofline_counts(row) -> (bytes, flops), if its lab.py or bench.py defines one (found without
    importing)."""
    for path in _lab_module_files(lab_name):
        try:
            with open(path) as f:
                if "def roofline_counts(" not in f.read():
                    continue
            rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
            return getattr(importlib.import_module(rel), "roofline_counts", None)
        except Exception:  # noqa: BLE001 - a lab that fails to import just has no model here
            return None
    return None


# where a row's counts came from, as the JSON and the table say it (bench.say() prints them in the chosen language)
COUNTS_FROM = "{what} from {model}"
COUNTS_UNKNOWN = "{what} unknown: placed by what it has"


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
                src = COUNTS_FROM.format(what='+'.join(filled), model=name)
            if nbytes is not None and flops is not None:
                break
        if nbytes is None or flops is None:
            missing = "FLOPs" if flops is None else "bytes"
            src = (src + "; " if src != "recorded" else "") + COUNTS_UNKNOWN.format(what=missing)
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


# =====================================================================================================================
# The plan: the sweep's kernel launch on a given GPU (common.plan)
# =====================================================================================================================
FMA_SIGNATURE = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "k": "i32", "a": "fp32", "b": "fp32",
                 "BLOCK": "constexpr"}
PLAN_NOTES = ["the k-FMA sweep launches one compiled kernel for every k (k is a run-time argument); the placement "
              "of the other labs' kernels launches nothing"]


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or SWEEP_N, bench_bytes, gpu, what="the k-FMA sweep's n")
    cfg = fma_config()
    return [plan.Launch("triton fma chain", "fma_chain_kernel", "triton", fn=fma_chain_kernel,
                        grid=fma_grid(n, cfg["BLOCK"]), signature=dict(FMA_SIGNATURE), defines={"BLOCK": cfg["BLOCK"]},
                        num_warps=cfg["num_warps"], case=f"n = {plan.fmt_size(n)} fp32, k = {SWEEP_KS[0]} .. "
                                                         f"{SWEEP_KS[-1]}", config_source=cfg.source())]
