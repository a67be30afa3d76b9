"""Lab 4.5 - Mixed precision: what fp32, tf32, bf16, fp16 and fp8 cost in error, and what they buy in speed.

You will learn
  * the formats by their two numbers, range and precision, computed here rather than quoted: fp16 stops at 65504
    (exp(x) overflows past x = 11.09, 256 x 256 is already inf) and its smallest subnormal is 2^-24 = 5.96e-8;
    bf16 has fp32's range (3.4e38) but 8 significant bits, so 256 + 1 == 256; fp8 e4m3 stops at 448;
  * GEMM in each precision on the tensor cores (cuBLAS through torch: fp32 with TF32 off, tf32, bf16, fp16, and fp8
    e4m3 through torch._scaled_mm with per-tensor scales): relative error against float64 and TFLOP/s side by side,
    at 4096^3, and how the error grows with K (M = N = 1024, K = 256 .. 16384);
  * fp32 vs fp16 ACCUMULATION, with our own kernels: one CUDA C WMMA kernel built twice (an fp32 or an fp16
    accumulator fragment, nothing else changed; kernels.cu) and one Triton tl.dot kernel with out_dtype fp32 or
    fp16. The fp16 accumulator's error grows like 2^-11 sqrt(K / steps) and a running sum above 65504 becomes inf
    for good (4096 products of 1 x 32: 131072 in fp32, inf in fp16), even when the final answer would fit;
  * softmax and layernorm in fp32/bf16/fp16 with the repository's Triton kernels (phase 3 labs 3 and 4) and torch:
    with fp32 arithmetic inside, their error sits at the output-rounding floor (the error of rounding the exact
    answer to the dtype); a naive kernel of this lab that keeps its sums in the 16-bit type shows what happens
    without that (prediction: a few times the floor in fp16, more in bf16, whose 8 bits drop most of each small
    term added to a large running sum);
  * loss scaling with a number: the fraction of a log-normal gradient population (around 1e-9 .. 1e-6) that fp16
    flushes to zero at scale 1, at 2^16, and the fraction that overflows at larger scales; bf16 needs no scale.

The two numbers (main case, GEMM 4096 x 4096 x 4096): FLOPs = 2 M N K = 137.4 GFLOP; bytes that must move =
(M K + K N) x itemsize + M N x out itemsize = 100.7 MB in 16-bit (201 MB in fp32, 67 MB of fp8 inputs). 1365 FLOP/B
in 16-bit, far above the ridge points of any current GPU (a bf16 tensor-core ridge of a few hundred FLOP/B, an fp32
CUDA-core ridge of tens; `--plan` prints this GPU's): compute-bound in every precision, so the speed of each precision
is its tensor-core (or FMA) rate.
Predictions from the datasheet ratios: tf32 about half of bf16; bf16 = fp16; fp8 about 2x bf16; fp32 on the CUDA
cores about 1/15 of bf16 (and ~0.7-0.75 of its own datasheet rate, as phases 2 and 3 found). Errors: fp32 ~1e-6
(sum of K roundings of 2^-24), tf32 ~5e-4 (inputs rounded to 11 bits), fp16 ~5e-4 (inputs rounded to 11 bits, fp32
accumulation), bf16 ~4e-3 (8 bits), fp8 e4m3 ~4e-2 (4 bits). The fp16 accumulator: ~1e-3 at K = 1024, ~4e-3 at
K = 16384, and no faster than fp32 accumulation on a data-center GPU (same tensor-core rate).
Softmax/layernorm: 2 passes over the data (read + write), 5-10 FLOP/element: memory-bound; their lesson here is error.
Targets: the precision table (error + speed), the accumulation comparison, the overflow cases, and loss scaling with
a number. There is no speed target. What the runs measured, and which predictions missed: README.md.

Run: python -m phase4_optimization.lab05_mixed_precision [--quick] [--no-bench] [--replot] [--plan [--gpu NAME]]
     [--set BLOCK_K=32]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import dot_acc_kernel, layernorm_lowp_kernel, softmax_lowp_kernel

LAB = "phase4_lab05_mixed_precision"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
WMMA_KERNEL = "mp_wmma_gemm"
FP16_MAX = 65504.0
U16 = 2.0 ** -11          # unit roundoff of fp16 (11 significant bits)


# ---------------------------------------------------------------------------------------------------------------------
# The lab contract: a GEMM with fp16 inputs and an fp32 output buffer; only the accumulator differs between variants.
# size = (M, N, K). dtype "float16": fp16 inputs, fp32 accumulation. dtype "f16acc": the same inputs, fp16
# accumulation (its own, K-dependent tolerance: see tolerance()).
# ---------------------------------------------------------------------------------------------------------------------
GEMM_DTYPES = ("float16", "f16acc")


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """A (M x K), B (K x N), standard normal, stored as fp16: sums of order sqrt(K), far from 65504 for K < 10^8."""
    if dtype not in GEMM_DTYPES:
        raise ValueError(f"dtype: expected one of {GEMM_DTYPES}, got {dtype!r}")
    m, n, k = size
    return (arrays.from_numpy(rng.standard_normal((m, k)), "float16", where),
            arrays.from_numpy(rng.standard_normal((k, n)), "float16", where))


def out_dtype(dtype: str) -> str:
    return "float32"          # the output never rounds: what the check sees is the accumulator's error alone


def tolerance(size, dtype: str) -> check.Tol:
    """fp32 accumulator: the inputs are exact in float64, so only fp32 sums err: ~2^-24 sqrt(K) relative; the fp32
    default, widened by sqrt(K / 256) past K = 256 (tensor cores may truncate their internal sums).

    fp16 accumulator: every accumulation step rounds a running sum of size ~sqrt(k) to 11 bits. Modelled as one
    rounding per product (the worst case; the hardware rounds once per 16-wide MMA, Triton once per BLOCK_K), the
    error of a K-term sum is ~u K / sqrt(6) against a result of ~sqrt(K): relative ~0.41 u sqrt(K), u = 2^-11.
    The tolerance is 1.5 u sqrt(K) in norm (3.7x the worst-case model) and 8 u sqrt(K) per element (the largest of
    10^5 Gaussian errors is ~4.5 sigma). It is meaningful while it stays small: at K = 2048 (the largest checked) it
    is 3.3% in norm, while dropping one 32-wide K slice would give sqrt(32 / 2048) = 12%; at K ~ 10^6 it would
    exceed 100% and check nothing, which is why the checks stop at K = 2048.
    """
    k = max(int(size[2]), 16)
    if dtype == "f16acc":
        return check.Tol(rel_norm=1.5 * U16 * math.sqrt(k), elem=8 * U16 * math.sqrt(k))
    s = max(1.0, math.sqrt(k / 256))
    return check.Tol(rel_norm=1e-5 * s, elem=1e-4 * s)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C: the WMMA kernel, built with an fp32 (ACC_HALF=0) or an fp16 (ACC_HALF=1) accumulator
# ---------------------------------------------------------------------------------------------------------------------
BM = BN = 64
THREADS = 128


def _check_gemm(a, b, out, *, dev: bool, libs=("cupy", "torch", "numpy")):
    arrays.check_array("a", a, dtypes=("float16",), ndim=2, device=dev, libs=libs)
    arrays.check_array("b", b, dtypes=("float16",), ndim=2, device=dev, libs=libs)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b)
    if max(m, n, k) >= 2**31:
        raise ValueError(f"a, b: dimensions must be below 2^31 (32-bit int arguments), got {m} x {n} x {k}")
    out = arrays.check_out(out, (m, n), "float32", a)
    return m, n, k, out


def wmma_gemm(a, b, out=None, *, acc: str = "float32"):
    """C (fp32) = A @ B with fp16 A, B on the tensor cores (WMMA), accumulating in `acc` ('float32' or 'float16').

    CuPy arrays on a GPU (wrap a torch tensor with cupy.from_dlpack). Any M, N, K; contiguous row-major.
    """
    if acc not in ("float32", "float16"):
        raise ValueError(f"acc: expected 'float32' or 'float16', got {acc!r}")
    m, n, k, out = _check_gemm(a, b, out, dev=True, libs=("cupy",))
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    grid_y = -(-m // BM)
    if grid_y > 65535:
        raise ValueError(f"a: {m} rows need {grid_y} row-blocks, over the grid's y limit 65535")
    kern = cuda.get_kernel(CU, WMMA_KERNEL, defines=wmma_defines(acc))
    kern(wmma_grid(m, n), (THREADS, 1, 1), (a, b, out, np.int32(m), np.int32(n), np.int32(k)))
    return out


def wmma_defines(acc: str) -> dict:
    """The one -D that makes the two builds: the accumulator fragments' type."""
    return {"ACC_HALF": int(acc == "float16")}


def wmma_grid(m: int, n: int) -> tuple[int, int, int]:
    """A block per 64 x 64 tile of C: column tiles on x, row tiles on y."""
    return (-(-n // BN), -(-m // BM), 1)


def wmma_acc_f32(a, b, out=None):
    return wmma_gemm(a, b, out, acc="float32")


def wmma_acc_f16(a, b, out=None):
    return wmma_gemm(a, b, out, acc="float16")


# ---------------------------------------------------------------------------------------------------------------------
# Triton: tl.dot with an fp32 or an fp16 accumulator (out_dtype), the same kernel otherwise (triton_kernels.py)
# ---------------------------------------------------------------------------------------------------------------------
# GPU: 8 warps (two warpgroups on Hopper) on a 128 x 128 tile, 64-deep K steps, 3 stages (the lab's default;
# `--set BLOCK_K=32` and the like override it). Its operand ring fits the shared memory of every GPU the course
# describes, the 64 KiB a block may have on the oldest architecture included (the plan compiles it for each).
# Interpreter: small tiles (each program costs milliseconds there).
DOT_GPU = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
DOT_INTERPRETER = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, num_warps=4, num_stages=1)


def dot_config() -> config.Resolved:
    """The tl.dot kernel's tile on a GPU: DOT_GPU, then --set."""
    return config.resolve("triton dot_acc_kernel", DOT_GPU, validate=_check_dot)


def dot_config_interpreter() -> config.Resolved:
    """The interpreter's small tile, through the same --set names."""
    return config.resolve("triton dot_acc_kernel (interpreter tile)", DOT_INTERPRETER, validate=_check_dot)


def _check_dot(v: dict) -> dict:
    for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"):
        if v[key] < 16 or v[key] & (v[key] - 1) or v[key] > 256:
            raise ValueError(f"dot_acc_kernel: {key} must be a power of two from 16 to 256; got {config.fmt(v)}")
    if v["num_warps"] not in (1, 2, 4, 8, 16) or not 1 <= v["num_stages"] <= 8:
        raise ValueError(f"dot_acc_kernel: num_warps in 1, 2, 4, 8, 16 and num_stages 1..8; got {config.fmt(v)}")
    return v


def dot_grid(m: int, n: int, cfg: dict) -> tuple[int, int]:
    """A program per BLOCK_M x BLOCK_N tile of C."""
    return triton.cdiv(m, cfg["BLOCK_M"]), triton.cdiv(n, cfg["BLOCK_N"])


def dot_gemm(a, b, out=None, *, acc: str = "float32", config: dict | None = None):
    """C (fp32) = A @ B, fp16 A, B, with a Triton tl.dot accumulating in `acc` ('float32' or 'float16')."""
    if acc not in ("float32", "float16"):
        raise ValueError(f"acc: expected 'float32' or 'float16', got {acc!r}")
    m, n, k, out = _check_gemm(a, b, out, dev=not INTERPRETER)
    for name, x in (("a", a), ("b", b)):
        if not arrays.is_contiguous(x):
            raise ValueError(f"{name}: expected a C-contiguous array")
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    cfg = dict(config or (dot_config_interpreter() if INTERPRETER else dot_config()).values)
    grid = dot_grid(m, n, cfg)
    if grid[1] > 65535:
        raise ValueError(f"b: {n} columns need {grid[1]} column-blocks, over the grid's y limit 65535")
    launch(dot_acc_kernel, grid, a, b, out, m, n, k, BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"],
           BLOCK_K=cfg["BLOCK_K"], ACC_F16=acc == "float16", num_warps=cfg["num_warps"],
           num_stages=cfg["num_stages"])
    return out


def dot_acc_f32(a, b, out=None):
    return dot_gemm(a, b, out, acc="float32")


def dot_acc_f16(a, b, out=None):
    return dot_gemm(a, b, out, acc="float16")


VARIANTS = [
    lab.Variant("cuda wmma, fp32 accumulator", wmma_acc_f32, "cuda", ("float16",),
                note="HMMA.16816.F32; kernels.cu, ACC_HALF=0"),
    lab.Variant("cuda wmma, fp16 accumulator", wmma_acc_f16, "cuda", ("f16acc",),
                note="HMMA.16816.F16; the same kernel, ACC_HALF=1"),
    lab.Variant("triton tl.dot, fp32 accumulator", dot_acc_f32, "triton", ("float16",)),
    lab.Variant("triton tl.dot, fp16 accumulator (out_dtype)", dot_acc_f16, "triton", ("f16acc",)),
]
PEERS: list = []
_SHAPES_GPU = [(1, 1, 1), (1, 1, 1000), (17, 33, 7), (64, 64, 64), (65, 63, 33), (127, 129, 299), (200, 131, 1000),
               (256, 256, 2048)]
CHECK_CASES = [(s, d) for s in _SHAPES_GPU for d in GEMM_DTYPES] + [((130, 70, 4099), "float16")]
CPU_CHECK_CASES = [((1, 1, 1), "float16"), ((1, 1, 1), "f16acc"), ((5, 3, 7), "float16"), ((5, 3, 7), "f16acc"),
                   ((33, 17, 40), "float16"), ((33, 17, 40), "f16acc"), ((40, 37, 299), "float16"),
                   ((40, 37, 299), "f16acc")]
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# Naive softmax and layernorm that keep their sums in the 16-bit type (for comparison with the fp32-inside kernels)
# ---------------------------------------------------------------------------------------------------------------------
LOWP_CHUNK = 64
LOWP_WARPS = 2
LOWP_DTYPES = ("float16", "bfloat16")


def _check_rows(name, x, dtypes):
    dt = arrays.check_array(name, x, dtypes=dtypes, ndim=2, device=not INTERPRETER)
    if int(x.shape[1]) == 0:
        raise ValueError(f"{name}: rows are empty (shape {tuple(x.shape)})")
    return dt


def softmax_lowp(x, out=None, *, chunk: int = LOWP_CHUNK):
    """Row softmax of a contiguous 2-D fp16/bf16 array, every sum kept in the 16-bit type (the naive way)."""
    dt = _check_rows("x", x, LOWP_DTYPES)
    if chunk < 1 or chunk & (chunk - 1):
        raise ValueError(f"chunk: expected a power of two, got {chunk}")
    out = arrays.check_out(out, tuple(x.shape), dt, x)
    rows, cols = (int(s) for s in x.shape)
    if rows:
        launch(softmax_lowp_kernel, (rows,), x, out, cols, CHUNK=chunk, num_warps=LOWP_WARPS)
    return out


def layernorm_lowp(x, w, b, eps: float = 1e-5, out=None, *, chunk: int = LOWP_CHUNK):
    """Layernorm forward (y only) of a contiguous 2-D fp16/bf16 array, mean and variance summed in the 16-bit type."""
    dt = _check_rows("x", x, LOWP_DTYPES)
    n = int(x.shape[1])
    for name, p in (("w", w), ("b", b)):
        arrays.check_array(name, p, dtypes=(dt,), ndim=1, device=not INTERPRETER)
        if int(p.shape[0]) != n:
            raise ValueError(f"{name}: expected shape ({n},) to match x's rows, got {tuple(p.shape)}")
    if chunk < 1 or chunk & (chunk - 1):
        raise ValueError(f"chunk: expected a power of two, got {chunk}")
    if not eps > 0:
        raise ValueError(f"eps: expected a positive number, got {eps!r}")
    out = arrays.check_out(out, tuple(x.shape), dt, x)
    if int(x.shape[0]):
        launch(layernorm_lowp_kernel, (int(x.shape[0]),), x, w, b, out, n, float(eps), CHUNK=chunk,
               num_warps=LOWP_WARPS)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every kernel launch of the benchmark's headline cases on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
GEMM_N = 4096                    # the precision table's GEMM: n x n x n
NORM_SHAPE = (4096, 4096)        # the softmax / layernorm error table on a GPU
_PTR = {"float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32"}


def bench_bytes(n: int) -> int:
    """Bytes the GEMM table holds at once at n^3, about: the fp32 inputs (8 n^2), their float64 product and the
    float64 copies that make it (24 n^2), the 16-bit and fp8 copies (10 n^2) and an fp32 output per kernel (~24 n^2)."""
    return 66 * n * n


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or GEMM_N, bench_bytes, gpu, what="the GEMM table's n")
    case = tr("GEMM {n}^3, fp16 inputs, fp32 out", n=n)
    dot = dot_config()
    d = dot.values
    out = []
    for acc, var in (("float32", VARIANTS[0]), ("float16", VARIANTS[1])):
        out.append(plan.Launch(var.name, WMMA_KERNEL, "cuda", grid=wmma_grid(n, n), threads=THREADS, source=CU,
                               defines=wmma_defines(acc), case=case))
    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "ACC_F16": "constexpr"}
    for acc, var in (("float32", VARIANTS[2]), ("float16", VARIANTS[3])):
        out.append(plan.Launch(var.name, "dot_acc_kernel", "triton", fn=dot_acc_kernel, grid=dot_grid(n, n, d),
                               signature=dict(sig), defines={"BLOCK_M": d["BLOCK_M"], "BLOCK_N": d["BLOCK_N"],
                                                             "BLOCK_K": d["BLOCK_K"], "ACC_F16": acc == "float16"},
                               num_warps=d["num_warps"], num_stages=d["num_stages"], case=case,
                               config_source=dot.source()))
    rows, cols = NORM_SHAPE
    for dt in LOWP_DTYPES:
        ncase = tr("naive {dtype} sums, {rows} x {cols}", dtype=dt, rows=rows, cols=cols)
        out.append(plan.Launch("", "softmax_lowp_kernel", "triton", fn=softmax_lowp_kernel, grid=rows,
                               signature={"x_ptr": _PTR[dt], "y_ptr": _PTR[dt], "n_cols": "i32", "CHUNK": "constexpr"},
                               defines={"CHUNK": LOWP_CHUNK}, num_warps=LOWP_WARPS, case=ncase))
        out.append(plan.Launch("", "layernorm_lowp_kernel", "triton", fn=layernorm_lowp_kernel, grid=rows,
                               signature={"x_ptr": _PTR[dt], "w_ptr": _PTR[dt], "b_ptr": _PTR[dt], "y_ptr": _PTR[dt],
                                          "n_cols": "i32", "eps": "fp32", "CHUNK": "constexpr"},
                               defines={"CHUNK": LOWP_CHUNK}, num_warps=LOWP_WARPS, case=ncase))
    return out


PLAN_NOTES = ["the library peers (cuBLAS in each precision through torch, fp8 through torch._scaled_mm) and phase 3's "
              "softmax / layernorm kernels launch their own kernels; the K sweep and the overflow cases launch the "
              "four GEMM kernels above at other shapes"]
