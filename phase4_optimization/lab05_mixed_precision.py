"""Lab 4.5 - Mixed precision: what fp32, tf32, bf16, fp16 and fp8 cost in error, and what they buy in speed.

You will learn
  * the formats by their two numbers, range and precision, computed here rather than quoted: fp16 stops at 65504
    (exp(x) overflows past x = 11.09, 256 x 256 is already inf) and its smallest subnormal is 2^-24 = 5.96e-8;
    bf16 has fp32's range (3.4e38) but 8 significant bits, so 256 + 1 == 256; fp8 e4m3 stops at 448;
  * GEMM in each precision on the tensor cores (cuBLAS through torch: fp32 with TF32 off, tf32, bf16, fp16, and fp8
    e4m3 through torch._scaled_mm with per-tensor scales): relative error against float64 and TFLOP/s side by side,
    at 4096^3, and how the error grows with K (M = N = 1024, K = 256 .. 16384);
  * fp32 vs fp16 ACCUMULATION, with our own kernels: one CUDA C WMMA kernel built twice (an fp32 or an fp16
    accumulator fragment, nothing else changed; lab05_mixed_precision.cu) and one Triton tl.dot kernel with
    out_dtype fp32 or fp16. The fp16 accumulator's error grows like 2^-11 sqrt(K / steps) and a running sum above
    65504 becomes inf for good (4096 products of 1 x 32: 131072 in fp32, inf in fp16), even when the final answer
    would fit;
  * softmax and layernorm in fp32/bf16/fp16 with the repository's Triton kernels (phase 3 labs 3 and 4) and torch:
    with fp32 arithmetic inside, their error sits at the output-rounding floor (the error of rounding the exact
    answer to the dtype); a naive kernel of this lab that keeps its sums in the 16-bit type shows what happens
    without that (prediction: a few times the floor in fp16, more in bf16, whose 8 bits drop most of each small
    term added to a large running sum; seen in the interpreter at 8 x 512, fp16: 1.7x the floor for softmax, 2.7x
    for layernorm);
  * loss scaling with a number: the fraction of a log-normal gradient population (around 1e-9 .. 1e-6) that fp16
    flushes to zero at scale 1, at 2^16, and the fraction that overflows at larger scales; bf16 needs no scale.

The two numbers (main case, GEMM 4096 x 4096 x 4096): FLOPs = 2 M N K = 137.4 GFLOP; bytes that must move =
(M K + K N) x itemsize + M N x out itemsize = 100.7 MB in 16-bit (201 MB in fp32, 67 MB of fp8 inputs). 1365 FLOP/B
in 16-bit, far above the H200 ridge point (~206 FLOP/B for bf16, ~14 for fp32 CUDA cores): compute-bound in every
precision, so the speed of each precision is its tensor-core (or FMA) rate. Prediction from the datasheet: fp32
~67 TFLOP/s (measured 45-51 in phase 2/3), tf32 ~2x less than bf16 (~400), bf16 = fp16 (~700 measured in phase 3),
fp8 ~2x bf16 (~1300). Errors: fp32 ~1e-6 (sum of K roundings of 2^-24), tf32 ~5e-4 (inputs rounded to 11 bits),
fp16 ~5e-4 (inputs rounded to 11 bits, fp32 accumulation), bf16 ~4e-3 (8 bits), fp8 e4m3 ~4e-2 (4 bits).
Softmax/layernorm: 2 passes over the data (read + write), 5-10 FLOP/element: memory-bound; their lesson here is error.
Targets from the issue: the precision table (error + speed), the accumulation comparison, the overflow cases, and
loss scaling with a number. There is no speed target.

Measured on an H200 (results/h200/phase4_lab05_mixed_precision.json, commit 72d4173; GEMM 4096^3 through
cuBLAS/torch, errors are the relative (Frobenius) error against float64): every error prediction held; two speed
predictions missed. (The first run, commit 31784b5, agreed within 4%: bf16 790, fp16 752, fp8 1143 / 1248 TFLOP/s.)
  precision                 TFLOP/s   rel err    predicted
  fp32 (TF32 off)           51.4      1.1e-6     ~67 datasheet, 45-51 measured / ~1e-6: held (0.77 of datasheet)
  tf32                      399       2.9e-4     ~400 / ~5e-4: held
  bf16                      759       2.9e-3     ~700 / ~4e-3: held, faster than predicted
  fp16                      742       3.6e-4     ~700 (= bf16) / ~5e-4: held (0.98x bf16)
  fp8 e4m3, fp32-promoted   1120      3.7e-2     ~1300 (~2x bf16) / ~4e-2: error held, speed missed: 1.48x bf16
  fp8 e4m3, use_fast_accum  1208      3.7e-2     the same error; 1.59x bf16
fp8 missed ~2x at this size, not in general: the 8192^3 ceilings run of lab 4.1 measured 1305 TFLOP/s fp8 against
680 bf16 (1.92x). At 4096^3 the fp8 GEMM lasts 0.110-0.120 ms and writes its fp32 output (67 MB, ~0.015 ms at the
HBM ceiling), so fixed and output costs weigh more than in the bf16 one; an inference from the two sizes, not a
profile. Error vs K (M = N = 1024, K = 256 .. 16384): flat for every precision that accumulates in fp32 (tf32
2.93-2.94e-4, bf16 2.88e-3, fp16 3.6e-4, fp8 3.74-3.76e-2: the input rounding, not the sum, sets the error); only
fp32 grows, 2.9e-7 to 1.1e-6, and use_fast_accum costs nothing visible in fp8 (3.76e-2 against 3.74e-2 at K =
16384).
Accumulation, our kernels, fp16 inputs: against the exact product of the fp16-rounded inputs, the fp16 accumulator's
error grows with K as predicted: 6.1e-4 at K = 256, 1.2e-3 at 1024, 2.35e-3 at 4096, 4.7e-3 at 16384 (~2x per 4x K,
the sqrt(K) law; ~1e-3 and 4e-3 predicted), 5.3-5.5x under the one-rounding-per-product bound 0.41 u sqrt(K) the check
uses; the fp32 accumulator's is 3.4e-7 to 1.9e-5. The WMMA kernel and the Triton tl.dot kernel gave the same errors
to the digits shown. Both fp16 accumulators overflowed as predicted: 4096 products of 1 x 32 gave inf (131072 in
fp32), and the +32 / -32 case whose exact answer is 0 also gave inf. Speed (4096^3): the prediction that an fp16
accumulator buys nothing missed: it was faster in both kernels, WMMA 49.1 against 44.0 TFLOP/s (1.12x), Triton 570
against 475 (1.20x; first run 1.11x and 1.23x), both far below cuBLAS fp16 (742), so the tensor cores' rate is not what differs. Likely cause:
an fp16 accumulator tile takes half the registers (two values per 32-bit register), which these untuned kernels can
spend on occupancy or pipelining; an inference, no profile or register count of the GPU build was taken, and the
Triton timings spread up to 13% p20-p80.
Softmax and layernorm, 4096 x 4096: with fp32 inside, torch and the phase 3 Triton kernels sit at the output-rounding
floor in bf16 and fp16 (softmax 1.6e-3 bf16, 2.0e-4 fp16; layernorm 1.66e-3, 2.08e-4) and at 2.3-3x the floor in
fp32 (softmax 7.0e-8 vs 2.45e-8, layernorm 7.7e-8 vs 2.53e-8). The naive 16-bit-sum kernels: fp16 softmax 3.7x the
floor (7.4e-4), fp16 layernorm 2.9x (5.95e-4), bf16 softmax 6.0x (9.62e-3), bf16 layernorm 3.1x (5.07e-3): "a few
times the floor" held, "more in bf16" held for softmax (6.0x against 3.7x) and barely for layernorm (3.1x against
2.9x). (In the first run the bf16 naive softmax did not compile: under Triton 3.6 bf16 + bf16 is computed in fp32, so
its loop variable changed type; it now casts back to bf16 after each add, as the lesson intends.)
Loss scaling, 10^6 log-normal fp16 gradients: at scale 1, 48.1% flush to zero and 51.3% are subnormal; at 2^8 0.06%
flush (87.0% subnormal); at 2^16 none flush and none overflow (2.0% subnormal); at 2^24 0.05% overflow, at 2^32
0.81%. bf16 at scale 1: none flushed, median relative error 1.35e-3.

Run: python -m phase4_optimization.lab05_mixed_precision [--quick]
"""
from __future__ import annotations

import math
import os
import sys
import time

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton
from common.bench import torch_tf32 as _tf32      # TF32 on or off for cuBLAS through torch, restored afterwards

LAB = "phase4_lab05_mixed_precision"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab05_mixed_precision.cu")
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
    if m == 0 or n == 0:
        return out
    if k == 0:
        arrays.fill(out, 0.0)
        return out
    grid_y = -(-m // BM)
    if grid_y > 65535:
        raise ValueError(f"a: {m} rows need {grid_y} row-blocks, over the grid's y limit 65535")
    kern = cuda.get_kernel(CU, WMMA_KERNEL, defines={"ACC_HALF": int(acc == "float16")})
    kern((-(-n // BN), grid_y, 1), (THREADS, 1, 1), (a, b, out, np.int32(m), np.int32(n), np.int32(k)))
    return out


def wmma_acc_f32(a, b, out=None):
    return wmma_gemm(a, b, out, acc="float32")


def wmma_acc_f16(a, b, out=None):
    return wmma_gemm(a, b, out, acc="float16")


# ---------------------------------------------------------------------------------------------------------------------
# Triton: tl.dot with an fp32 or an fp16 accumulator (out_dtype), the same kernel otherwise
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def dot_acc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, ACC_F16: tl.constexpr):
    # one program per BLOCK_M x BLOCK_N tile of C; A, B, C contiguous row-major; ragged edges masked with zeros
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * N + offs_n[None, :]
    m_ok = offs_m[:, None] < M
    n_ok = offs_n[None, :] < N
    if ACC_F16:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < K - k0), other=0.0)
        # the accumulator's dtype is the lesson: with out_dtype fp16 the tensor cores round the running sum to
        # 11 bits after every MMA (HMMA.F16 / wgmma .f16 instead of .f32)
        if ACC_F16:
            acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        else:
            acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float32), mask=m_ok & n_ok)


# GPU: one Hopper-friendly tile (two warpgroups on 128 x 128, 64-deep K steps, 3 stages = 96 KiB of shared memory);
# interpreter: small tiles (each program costs milliseconds there).
DOT_GPU = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, num_warps=8, num_stages=3)
DOT_INTERPRETER = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, num_warps=4, num_stages=1)


def dot_gemm(a, b, out=None, *, acc: str = "float32", config: dict | None = None):
    """C (fp32) = A @ B, fp16 A, B, with a Triton tl.dot accumulating in `acc` ('float32' or 'float16')."""
    if acc not in ("float32", "float16"):
        raise ValueError(f"acc: expected 'float32' or 'float16', got {acc!r}")
    m, n, k, out = _check_gemm(a, b, out, dev=not INTERPRETER)
    for name, x in (("a", a), ("b", b)):
        if not arrays.is_contiguous(x):
            raise ValueError(f"{name}: expected a C-contiguous array")
    if m == 0 or n == 0:
        return out
    if k == 0:
        arrays.fill(out, 0.0)
        return out
    cfg = dict(config or (DOT_INTERPRETER if INTERPRETER else DOT_GPU))
    grid = (triton.cdiv(m, cfg["BLOCK_M"]), triton.cdiv(n, cfg["BLOCK_N"]))
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
                note="HMMA.16816.F32; lab05_mixed_precision.cu, ACC_HALF=0"),
    lab.Variant("cuda wmma, fp16 accumulator", wmma_acc_f16, "cuda", ("f16acc",),
                note="HMMA.16816.F16; the same kernel, ACC_HALF=1"),
    lab.Variant("triton tl.dot, fp32 accumulator", dot_acc_f32, "triton", ("float16",)),
    lab.Variant("triton tl.dot, fp16 accumulator (out_dtype)", dot_acc_f16, "triton", ("f16acc",)),
]
PEERS: list = []
_SHAPES_GPU = [(1, 1, 1), (1, 1, 1000), (17, 33, 7), (64, 64, 64), (65, 63, 33), (127, 129, 300), (200, 131, 1000),
               (256, 256, 2048)]
CHECK_CASES = [(s, d) for s in _SHAPES_GPU for d in GEMM_DTYPES] + [((130, 70, 4099), "float16")]
CPU_CHECK_CASES = [((1, 1, 1), "float16"), ((1, 1, 1), "f16acc"), ((5, 3, 7), "float16"), ((5, 3, 7), "f16acc"),
                   ((33, 17, 40), "float16"), ((33, 17, 40), "f16acc"), ((40, 37, 300), "float16"),
                   ((40, 37, 300), "f16acc")]
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# Naive softmax and layernorm that keep their sums in the 16-bit type (for comparison with the fp32-inside kernels)
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def softmax_lowp_kernel(x_ptr, y_ptr, n_cols, CHUNK: tl.constexpr):
    # One program per row, walked in CHUNK-wide pieces. Every intermediate has the input's type: x - max, exp(.)
    # rounded at once (Triton's exp runs in fp32), the running sums (CHUNK lanes, each adding n_cols / CHUNK terms
    # one after another), the final tree sum (dtype=) and the division.
    lo = x_ptr.dtype.element_ty
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, CHUNK)
    m = tl.full((CHUNK,), float("-inf"), lo)
    for start in range(0, n_cols, CHUNK):
        m = tl.maximum(m, tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))).to(lo)
    row_max = tl.max(m, axis=0)
    s = tl.zeros((CHUNK,), lo)
    for start in range(0, n_cols, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        # each add rounded back to 16 bits (Triton 3.6 on the GPU computes bf16 + bf16 in fp32: keep the loop type)
        s = (s + tl.exp((x - row_max).to(tl.float32)).to(lo)).to(lo)
    total = tl.sum(s, axis=0, dtype=lo)
    for start in range(0, n_cols, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        e = tl.exp((x - row_max).to(tl.float32)).to(lo)
        tl.store(y_row + start + cols, (e / total).to(lo), mask=start + cols < n_cols)


@triton.jit
def layernorm_lowp_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, CHUNK: tl.constexpr):
    # The layernorm forward of phase 3 lab 4 with its fp32 accumulators replaced by the input's type: the sum for
    # the mean and the sum of centred squares run in CHUNK lanes of 16-bit values, then a 16-bit tree sum.
    lo = x_ptr.dtype.element_ty
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, CHUNK)
    s = tl.zeros((CHUNK,), lo)
    for start in range(0, n_cols, CHUNK):
        s = (s + tl.load(x_row + start + cols, mask=start + cols < n_cols, other=0.0)).to(lo)
    mean = (tl.sum(s, axis=0, dtype=lo) / n_cols).to(lo)
    v = tl.zeros((CHUNK,), lo)
    for start in range(0, n_cols, CHUNK):
        ok = start + cols < n_cols
        xc = tl.where(ok, tl.load(x_row + start + cols, mask=ok, other=0.0) - mean, 0.0).to(lo)
        v = (v + (xc * xc).to(lo)).to(lo)
    var = (tl.sum(v, axis=0, dtype=lo) / n_cols).to(lo)
    rstd = (1.0 / tl.sqrt(var.to(tl.float32) + eps)).to(lo)
    for start in range(0, n_cols, CHUNK):
        ok = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=ok, other=0.0)
        w = tl.load(w_ptr + start + cols, mask=ok, other=0.0)
        b = tl.load(b_ptr + start + cols, mask=ok, other=0.0)
        y = ((x - mean) * rstd).to(lo) * w + b
        tl.store(y_row + start + cols, y.to(lo), mask=ok)


LOWP_CHUNK = 64
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
        launch(softmax_lowp_kernel, (rows,), x, out, cols, CHUNK=chunk, num_warps=2)
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
        launch(layernorm_lowp_kernel, (int(x.shape[0]),), x, w, b, out, n, float(eps), CHUNK=chunk, num_warps=2)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Tables computed on the CPU: range, precision, overflow, underflow, loss scaling
# ---------------------------------------------------------------------------------------------------------------------
def _f(x) -> float:
    return float(np.asarray(arrays.to_numpy(x) if arrays.library(x) == "torch" else x, np.float64))


def fp16_sequential_sum(values, acc_dtype=np.float16) -> float:
    """Add values one after another in acc_dtype, rounding after every addition (what an fp16 accumulator does)."""
    s = acc_dtype(0)
    with np.errstate(over="ignore"):
        for v in np.asarray(values, acc_dtype):
            s = acc_dtype(s + v)
    return float(s)


def format_table() -> list[dict]:
    """Each format's range and precision, read from torch.finfo (and one computed value each)."""
    import torch

    rows = []
    for name, dt in (("float32", torch.float32), ("tf32 (fp32 storage)", None), ("bfloat16", torch.bfloat16),
                     ("float16", torch.float16), ("float8 e4m3fn", getattr(torch, "float8_e4m3fn", None)),
                     ("float8 e5m2", getattr(torch, "float8_e5m2", None))):
        if name.startswith("tf32"):
            rows.append({"format": name, "bits": 19, "mantissa bits": 10, "max": _f(torch.finfo(torch.float32).max),
                         "smallest normal": _f(torch.finfo(torch.float32).tiny), "smallest subnormal": "fp32's",
                         "eps (1 ulp at 1)": 2.0 ** -10, "note": "tensor-core input format; stored as fp32"})
            continue
        if dt is None:
            continue
        fi = torch.finfo(dt)
        sub = float(fi.smallest_normal) * float(fi.eps)  # one ulp of the subnormal range
        rows.append({"format": name, "bits": fi.bits, "mantissa bits": int(round(-math.log2(float(fi.eps)))),
                     "max": float(fi.max), "smallest normal": float(fi.smallest_normal), "smallest subnormal": sub,
                     "eps (1 ulp at 1)": float(fi.eps), "note": ""})
    return rows


def overflow_table() -> list[dict]:
    """Range and precision cases, each computed by running the operation (torch / NumPy on the CPU)."""
    import torch

    f16, bf16, f32 = torch.float16, torch.bfloat16, torch.float32
    t = torch.tensor
    rows = []

    def add(case, dtype, value, exact, why):
        rows.append({"case": case, "dtype": dtype, "computed": value, "exact": exact, "why": why})

    add("65504 * 2", "float16", _f(t(FP16_MAX, dtype=f16) * 2), 131008.0, "fp16 max is 65504: the product is inf")
    add("65504 * 2", "bfloat16", _f(t(FP16_MAX, dtype=bf16) * 2), 131008.0,
        "bf16 has fp32's exponent (max 3.4e38); 65504 itself rounds to 65536 in bf16")
    add("x * x, x = 256", "float16", _f(t(256.0, dtype=f16) * t(256.0, dtype=f16)), 65536.0,
        "65536 > 65504: a square of a modest activation overflows")
    for x in (11.0, 11.09, 11.1):
        add(f"exp({x}) computed in fp32, stored as fp16", "float16", _f(torch.exp(t(x, dtype=f32)).to(f16)),
            math.exp(x), "ln(65504) = 11.0898; values from 65520 up round to inf")
    vals = np.full(4096, 32.0)
    add("sum of 4096 x 32, fp16 accumulator", "float16", fp16_sequential_sum(vals, np.float16), 131072.0,
        "the running sum passes 65504 after 2047 terms, then stays inf")
    add("sum of 4096 x 32, fp32 accumulator", "float32", fp16_sequential_sum(vals, np.float32), 131072.0,
        "fp32 holds it exactly (stored back to fp16 it would still overflow)")
    add("256 + 1", "bfloat16", _f(t(256.0, dtype=bf16) + t(1.0, dtype=bf16)), 257.0,
        "8 significant bits: the spacing at 256 is 2, and the tie rounds to even (256)")
    add("256 + 1", "float16", _f(t(256.0, dtype=f16) + t(1.0, dtype=f16)), 257.0,
        "11 significant bits: exact up to 2048")
    add("2048 + 1", "float16", _f(t(2048.0, dtype=f16) + t(1.0, dtype=f16)), 2049.0,
        "fp16's spacing at 2048 is 2: the same loss, 8x further out")
    add("1e-8 stored as fp16", "float16", _f(t(1e-8, dtype=f32).to(f16)), 1e-8,
        "below half the smallest subnormal (2^-25 = 2.98e-8): flushed to 0")
    add("5e-8 stored as fp16", "float16", _f(t(5e-8, dtype=f32).to(f16)), 5e-8,
        "rounds to the smallest subnormal 2^-24 = 5.96e-8 (19% off)")
    add("1e-8 stored as bf16", "bfloat16", _f(t(1e-8, dtype=f32).to(bf16)), 1e-8, "bf16 reaches 1e-38: fine")
    e4m3 = getattr(torch, "float8_e4m3fn", None)
    if e4m3 is not None:
        add("448 stored as fp8 e4m3fn", "float8_e4m3fn", _f(t(448.0).to(e4m3).float()), 448.0, "e4m3fn's largest value")
        v = _f(t(500.0).to(e4m3).float())
        add("500 stored as fp8 e4m3fn", "float8_e4m3fn", v, 500.0,
            f"past the top: e4m3fn has no inf; this cast {'saturated to 448' if v == 448 else f'gave {v}'} (casts "
            "differ: saturate or NaN), either way the value is lost: hence per-tensor scales")
        add("0.3 stored as fp8 e4m3fn", "float8_e4m3fn", _f(t(0.3).to(e4m3).float()), 0.3,
            "4 significant bits: 0.3 becomes 0.3125")
    for r in rows:
        c, e = r["computed"], r["exact"]
        r["rel err"] = abs(c - e) / abs(e) if math.isfinite(c) else c
    return rows


LOSS_SCALES = (1, 2**8, 2**16, 2**24, 2**32)


def gradient_sample(n: int = 1_000_000, seed: int = 0) -> np.ndarray:
    """A gradient population, fp32: random signs, log10|g| ~ Normal(-7.5, 0.75) (95% between 3e-9 and 1e-6), plus
    1% of larger values, log10|g| ~ Normal(-4, 1), the gradients of a few sensitive weights."""
    rng = np.random.default_rng(seed)
    lg = rng.normal(-7.5, 0.75, n)
    big = rng.random(n) < 0.01
    lg[big] = rng.normal(-4.0, 1.0, int(big.sum()))
    return (np.sign(rng.random(n) - 0.5) * 10.0 ** lg).astype(np.float32)


def loss_scaling_table(g: np.ndarray, scales=LOSS_SCALES) -> list[dict]:
    """For each scale s: cast s*g (fp32) to fp16 with torch and count zeros, subnormals and infs; the gradient is
    recovered as fp16(s*g) / s in fp32. bf16 at scale 1 for comparison."""
    import torch

    gt = torch.from_numpy(g)
    rows = []
    for dtype, scs in (("float16", scales), ("bfloat16", (1,))):
        tdt = getattr(torch, dtype)
        tiny = float(torch.finfo(tdt).smallest_normal)
        for s in scs:
            q = (gt * float(s)).to(tdt)
            zero = (q == 0) & (gt != 0)
            inf = torch.isinf(q)
            sub = (q != 0) & (q.abs() < tiny)
            ok = ~zero & ~inf
            back = q.float()[ok] / float(s)
            rel = ((back.double() - gt[ok].double()).abs() / gt[ok].double().abs())
            rows.append({"dtype": dtype, "scale": f"2^{int(math.log2(s))}", "scale_value": float(s),
                         "flushed to 0": float(zero.double().mean()), "subnormal": float(sub.double().mean()),
                         "overflow (inf)": float(inf.double().mean()),
                         "median rel err (finite, nonzero)": float(rel.median()) if rel.numel() else float("nan"),
                         "n": int(g.size)})
    return rows


def loss_scaling_story(rows: list[dict]) -> str:
    by = {(r["dtype"], r["scale"]): r for r in rows}
    a, b, top = by[("float16", "2^0")], by[("float16", "2^16")], by[("float16", "2^32")]
    bf = by[("bfloat16", "2^0")]
    return (f"fp16 at scale 1 flushes {a['flushed to 0']:.1%} of these gradients to zero (|g| < 2^-25 = 2.98e-8) and "
            f"keeps {a['subnormal']:.1%} as subnormals with few bits; scaling the loss by 2^16 = 65536 moves every "
            f"value up 16 binades: {b['flushed to 0']:.2%} flushed, {b['overflow (inf)']:.3%} overflow. Too large a "
            f"scale overflows instead: 2^32 turns {top['overflow (inf)']:.2%} into inf (|g| > 65504 / 2^32 = 1.5e-5), "
            "which is why dynamic loss scaling halves the scale whenever an inf appears and grows it slowly otherwise. "
            f"bf16 at scale 1: {bf['flushed to 0']:.2%} flushed (its range reaches 1e-38), median relative error "
            f"{bf['median rel err (finite, nonzero)']:.1e} from its 8 bits: no scaling needed, precision is its cost.")


# ---------------------------------------------------------------------------------------------------------------------
# Softmax / layernorm error tables (CPU in the interpreter at small sizes, GPU at 4096 x 4096)
# ---------------------------------------------------------------------------------------------------------------------
def _err(out, ref) -> dict:
    o = np.asarray(arrays.to_numpy(out), np.float64)
    r = np.asarray(ref, np.float64)
    fin = np.isfinite(r)
    d = o[fin] - r[fin]
    bad = int((~np.isfinite(o[fin])).sum())
    nrm = float(np.linalg.norm(r[fin]))
    rel = float(np.linalg.norm(np.where(np.isfinite(d), d, 0.0))) / nrm if nrm else float("nan")
    return {"rel err": rel if not bad else float("inf"), "max abs err": float(np.nanmax(np.abs(d))) if d.size else 0.0,
            "non-finite": bad}


def _rounding_floor(ref, dtype: str) -> dict:
    import torch

    r = torch.from_numpy(np.ascontiguousarray(ref, np.float64)).to(getattr(torch, dtype))
    return _err(r, ref)


def _torch(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x) if arrays.on_device(x) else torch.from_numpy(x)


def _interpretable(dtype: str, fn):
    """Triton's interpreter does arithmetic on NumPy arrays, and NumPy has no bf16: it adds and multiplies bf16 tiles
    as their raw 16-bit patterns (seen with Triton 3.9: inf and 1e38 out of a bf16 sum). Kernels that convert to fp32
    first (phase 3's) are fine; a kernel whose point is bf16 arithmetic can only run on a GPU."""
    if INTERPRETER and dtype == "bfloat16":
        def skipped():
            raise NotImplementedError("bf16 arithmetic needs a GPU (the interpreter has no bf16 arithmetic)")
        return skipped
    return fn


def norm_ops_table(rows_: int, cols: int, dtypes=("float32", "bfloat16", "float16"), seed: int = 5) -> list[dict]:
    """Softmax and layernorm (forward y) errors against float64, per dtype: the rounding floor, torch, the
    repository's Triton kernels (phase 3), and the naive 16-bit-sum kernels of this lab."""
    import torch.nn.functional as F

    sm = lab.lab_module("phase3_triton", "lab03_fused_softmax")
    ln = lab.lab_module("phase3_triton", "lab04_layernorm")

    where = lab.where()
    out = []
    for dt in dtypes:
        rng = np.random.default_rng(seed)
        (x,) = sm.make_inputs((rows_, cols), dt, rng, where)
        ref = sm.reference(np.asarray(arrays.to_numpy(x), np.float64))
        cands = {"rounding floor (exact, rounded to dtype)": None,
                 "torch.softmax": lambda: _torch(x).softmax(-1),
                 "phase 3 Triton softmax (fp32 inside)": lambda: sm.softmax_triton(x)}
        if dt in LOWP_DTYPES:
            cands[f"naive Triton, {dt} sums"] = _interpretable(dt, lambda: softmax_lowp(x))
        for name, fn in cands.items():
            try:
                e = _rounding_floor(ref, dt) if fn is None else _err(fn(), ref)
            except Exception as ex:  # noqa: BLE001 - a peer missing for a dtype on this machine is reported
                e = {"rel err": None, "max abs err": None, "non-finite": None, "note": f"{type(ex).__name__}: {ex}"}
            out.append({"op": "softmax", "dtype": dt, "shape": f"{rows_}x{cols}", "impl": name, **e})
        xs, w, b, _dy = ln.make_inputs((rows_, cols), dt, np.random.default_rng(seed + 1), where)
        ref = ln.reference(*(np.asarray(arrays.to_numpy(a), np.float64) for a in (xs, w, b, _dy)))[0]
        cands = {"rounding floor (exact, rounded to dtype)": None,
                 "torch F.layer_norm": lambda: F.layer_norm(_torch(xs), (cols,), _torch(w), _torch(b), ln.EPS),
                 "phase 3 Triton layernorm (fp32 inside)": lambda: ln.layernorm_fwd(xs, w, b)[0]}
        if dt in LOWP_DTYPES:
            cands[f"naive Triton, {dt} sums"] = _interpretable(dt, lambda: layernorm_lowp(xs, w, b, ln.EPS))
        for name, fn in cands.items():
            try:
                e = _rounding_floor(ref, dt) if fn is None else _err(fn(), ref)
            except Exception as ex:  # noqa: BLE001
                e = {"rel err": None, "max abs err": None, "non-finite": None, "note": f"{type(ex).__name__}: {ex}"}
            out.append({"op": "layernorm", "dtype": dt, "shape": f"{rows_}x{cols}", "impl": name, **e})
    return out


# ---------------------------------------------------------------------------------------------------------------------
# GPU: GEMM in each precision (cuBLAS through torch), error vs float64 and speed
# ---------------------------------------------------------------------------------------------------------------------
def fp8_available() -> tuple[bool, str]:
    import torch

    if not device.has_gpu():
        return False, "needs a GPU"
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        return False, f"torch {torch.__version__} has no float8_e4m3fn / _scaled_mm"
    cc = torch.cuda.get_device_capability()
    if cc < (8, 9):
        return False, f"fp8 tensor cores need sm_89 or newer, this GPU is sm_{cc[0]}{cc[1]}"
    return True, ""


def fp8_prepare(a32, b32):
    """Per-tensor scaled e4m3 copies: A8 = A / sa, B8 = B / sb with s = amax / 448 (so the largest value maps to
    e4m3's largest), B8 column-major as cuBLASLt wants. Returns (a8, b8, sa, sb)."""
    import torch

    e4m3 = torch.float8_e4m3fn
    top = float(torch.finfo(e4m3).max)
    sa = (a32.abs().max().float() / top).clamp(min=1e-12).reshape(())
    sb = (b32.abs().max().float() / top).clamp(min=1e-12).reshape(())
    a8 = (a32 / sa).to(e4m3).contiguous()
    b8 = (b32 / sb).to(e4m3).t().contiguous().t()
    return a8, b8, sa, sb


def fp8_matmul(a8, b8, sa, sb, *, fast_accum: bool = False):
    """(sa * sb) * (A8 @ B8) on the fp8 tensor cores, fp32 output where the build allows it (see _fp8_call).
    fast_accum=False: cuBLASLt adds the tensor cores' partial sums into fp32 regularly; True: it does not."""
    import torch

    global _FP8_OUT
    if _FP8_OUT is None:
        _FP8_OUT = torch.float32
    return _fp8_call(a8, b8, sa, sb, fast_accum)


def _fp8_call(a8, b8, sa, sb, fast_accum):
    """torch._scaled_mm (torch 2.11: mat_a, mat_b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum):
    out = (sa * sb) * (A8 @ B8), fp32 output. Older torch returned (out, amax): take the first."""
    import torch

    global _FP8_OUT
    try:
        r = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=_FP8_OUT, use_fast_accum=fast_accum)
    except RuntimeError:
        if _FP8_OUT is torch.bfloat16:
            raise
        # a build that refuses an fp32 output for per-tensor scales: bf16 output (adds ~2^-9 rounding, far below
        # fp8's own ~4e-2)
        _FP8_OUT = torch.bfloat16
        r = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=_FP8_OUT, use_fast_accum=fast_accum)
    return r[0] if isinstance(r, tuple) else r


_FP8_OUT = None     # set on first use: torch.float32, or bfloat16 where fp32 output is refused


def _gpu_err(out, ref) -> dict:
    d = out.double() - ref
    fin = bool(torch_isfinite_all(out))
    return {"rel err": float(d.norm() / ref.norm()) if fin else float("inf"),
            "max abs err": float(d.abs().max()) if fin else float("inf"),
            "max err / rms(ref)": float(d.abs().max() / ref.pow(2).mean().sqrt()) if fin else float("inf")}


def torch_isfinite_all(x) -> bool:
    import torch

    return bool(torch.isfinite(x).all())


def gemm_precisions(a32, b32):
    """{name: (make, note)}: make() returns a zero-argument function that computes the product (inputs converted
    once, outside the timed call) in that precision, reading the fp32 inputs a32, b32 (torch CUDA)."""
    import torch

    out = {}
    a16, b16 = a32.half(), b32.half()
    ab, bb = a32.bfloat16(), b32.bfloat16()

    def fp32():
        c = torch.empty(a32.shape[0], b32.shape[1], device=a32.device)

        def run():
            with _tf32(False):
                return torch.matmul(a32, b32, out=c)
        return run

    def tf32():
        c = torch.empty(a32.shape[0], b32.shape[1], device=a32.device)

        def run():
            with _tf32(True):
                return torch.matmul(a32, b32, out=c)
        return run

    out["fp32 (TF32 off)"] = (fp32, "cuBLAS SGEMM, CUDA cores")
    out["tf32"] = (tf32, "fp32 in memory, 10-bit mantissa into the tensor cores, fp32 accumulate")
    out["bf16"] = (lambda: (lambda: torch.matmul(ab, bb)), "bf16 in/out, fp32 accumulate")
    out["fp16"] = (lambda: (lambda: torch.matmul(a16, b16)), "fp16 in/out, fp32 accumulate")
    ok8, why8 = fp8_available()
    if ok8:
        a8, b8, sa, sb = fp8_prepare(a32, b32)
        out["fp8 e4m3 (per-tensor scales)"] = (lambda: (lambda: fp8_matmul(a8, b8, sa, sb)),
                                               "torch._scaled_mm, fp32 out, accumulation promoted to fp32")
        out["fp8 e4m3, use_fast_accum"] = (lambda: (lambda: fp8_matmul(a8, b8, sa, sb, fast_accum=True)),
                                           "the tensor cores' own reduced-precision accumulator throughout")
    a16c = cupy_view(a16)
    b16c = cupy_view(b16)
    for acc in ("float32", "float16"):
        c = cupy_empty((int(a32.shape[0]), int(b32.shape[1])))
        out[f"our WMMA, fp16 in, {acc[5:]}-bit acc"] = (
            lambda c=c, acc=acc: (lambda: wmma_gemm(a16c, b16c, c, acc=acc)),
            f"lab05_mixed_precision.cu, ACC_HALF={int(acc == 'float16')} (simple kernel: not tuned)")
        c2 = torch.empty(a32.shape[0], b32.shape[1], device=a32.device)
        out[f"our Triton dot, fp16 in, {acc[5:]}-bit acc"] = (
            lambda c2=c2, acc=acc: (lambda: dot_gemm(a16, b16, c2, acc=acc)),
            "dot_acc_kernel 128x128x64, 8 warps, 3 stages")
    return out, ("" if ok8 else why8)


def cupy_view(t):
    import cupy

    return cupy.from_dlpack(t)


def cupy_empty(shape):
    import cupy

    return cupy.empty(shape, dtype=cupy.float32)


def _device_randn(shape, seed):
    import torch

    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return torch.randn(*shape, device="cuda", generator=g, dtype=torch.float32)


def gemm_table(n: int = 4096, rep_ms: float = 40.0) -> tuple[list[dict], str]:
    """Every precision at n^3: relative error against the float64 product of the fp32 inputs (so rounding the inputs
    to the precision counts: that is what choosing the precision costs), and TFLOP/s."""
    import torch

    a32, b32 = _device_randn((n, n), 1), _device_randn((n, n), 2)
    ref = a32.double() @ b32.double()          # cuBLAS DGEMM: IEEE float64, ~1e-16, far below every error here
    fns, why8 = gemm_precisions(a32, b32)
    rows = []
    for name, (make, note) in cli.progress(list(fns.items()), f"GEMM precisions at {n}^3"):
        try:
            fn = make()
            res = fn()
            res = torch.from_dlpack(res) if arrays.library(res) == "cupy" else res
            e = _gpu_err(res.float(), ref)
            t = bench.bench(fn, rep_ms=rep_ms)
        except Exception as ex:  # noqa: BLE001 - one precision this build cannot run must not hide the others
            rows.append({"precision": name, "n": n, "rel err": None, "max abs err": None, "max err / rms(ref)": None,
                         "ms": None, "tflops": None, "spread": None, "note": f"FAILED {type(ex).__name__}: {ex}"})
            continue
        if name.startswith("fp8") and _FP8_OUT is not None and _FP8_OUT != torch.float32:
            note += " (bf16 output: this build refused fp32)"
        rows.append({"precision": name, "n": n, **e, "ms": t.median_ms, "tflops": t.tflops(2.0 * n ** 3),
                     "spread": t.spread, "note": note})
    del ref
    torch.cuda.empty_cache()
    return rows, why8


K_SWEEP = (256, 1024, 4096, 16384)


def k_sweep(ks=K_SWEEP, mn: int = 1024) -> list[dict]:
    """Error against float64 as K grows (M = N = mn), each precision; no timing. Two references: the fp32 inputs'
    exact product (what the precision costs end to end), and the fp16-rounded inputs' exact product (what the
    accumulator alone costs, for the fp16-input kernels)."""
    import torch

    rows = []
    for k in cli.progress(list(ks), "K sweep"):
        a32, b32 = _device_randn((mn, k), 10 + k), _device_randn((k, mn), 20 + k)
        ref = a32.double() @ b32.double()
        ref16 = a32.half().double() @ b32.half().double()
        fns, _ = gemm_precisions(a32, b32)
        for name, (make, _note) in fns.items():
            try:
                res = make()()
            except Exception:  # noqa: BLE001 - reported (with its reason) in the 4096^3 table
                continue
            res = torch.from_dlpack(res) if arrays.library(res) == "cupy" else res
            e = _gpu_err(res.float(), ref)
            e16 = _gpu_err(res.float(), ref16) if "fp16 in" in name or name == "fp16" else {}
            rows.append({"precision": name, "K": k, "rel err": e["rel err"], "max err / rms(ref)":
                         e["max err / rms(ref)"], "rel err vs fp16-input product": e16.get("rel err"),
                         "model fp16 acc": (0.41 * U16 * math.sqrt(k) if "16-bit acc" in name else None)})
        torch.cuda.empty_cache()
    return rows


def accumulator_overflow_gpu(k: int = 4096) -> list[dict]:
    """All-ones A times B = 32: every C element is 32 K = 131072 (> 65504). And the same with B's second half -32:
    exact answer 0, but the running sum passes 65504 on the way."""
    import cupy

    rows = []
    for case, bcol in (("A = 1, B = 32: C = 32 K", np.full(k, 32.0)),
                       ("A = 1, B = +32 then -32: C = 0, partial sums reach 16 K",
                        np.concatenate([np.full(k // 2, 32.0), np.full(k - k // 2, -32.0)]))):
        a = cupy.ones((64, k), dtype=cupy.float16)
        b = cupy.asarray(np.tile(bcol[:, None], (1, 64)), dtype=cupy.float16)
        exact = float(bcol.sum())
        for name, fn in (("WMMA fp32 acc", wmma_acc_f32), ("WMMA fp16 acc", wmma_acc_f16),
                         ("Triton fp32 acc", dot_acc_f32), ("Triton fp16 acc", dot_acc_f16)):
            out = fn(a, b)
            v = cupy.asnumpy(out)
            rows.append({"case": case, "K": k, "kernel": name, "exact": exact, "C[0,0]": float(v[0, 0]),
                         "all equal exact": bool(np.all(v == exact))})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------------
def plot_k_sweep(rows, path) -> str:
    ks = sorted({r["K"] for r in rows})
    names = list(dict.fromkeys(r["precision"] for r in rows))
    by = {(r["precision"], r["K"]): r["rel err"] for r in rows}
    series = {n: [by.get((n, k)) if by.get((n, k)) not in (None, float("inf")) else None for k in ks] for n in names}
    return report.plot_lines(path, ks, series, xlabel="K (M = N = 1024)", ylabel="relative error vs float64",
                             title="GEMM error against the float64 product of the fp32 inputs, as K grows",
                             logy=True, xticks=ks, xticklabels=[str(k) for k in ks])


def plot_speed_vs_error(rows, path) -> str:
    plt = report.pyplot()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for r in rows:
        if r["rel err"] in (None, float("inf")) or not r.get("tflops"):
            continue
        ax.scatter(r["rel err"], r["tflops"], s=30)
        ax.annotate(r["precision"], (r["rel err"], r["tflops"]), xytext=(4, 3), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("relative error vs float64 (4096^3, standard normal inputs)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"GEMM speed against error per precision on {device.info().name}", fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
def show_compile_report(arch: str) -> list[dict]:
    rows = []
    for acc, d in (("fp32", 0), ("fp16", 1)):
        try:
            rep = cuda.compile_report(CU, arch, defines={"ACC_HALF": d})
        except (cuda.ToolMissing, cuda.CompileError) as e:
            print(f"compile report skipped: {e}")
            return rows
        k = rep[WMMA_KERNEL]
        hmma = sorted({ln.split()[0] for ln in k.sass if ln.split() and ln.split()[0].startswith("HMMA")})
        rows.append({"build": f"ACC_HALF={d} ({acc} accumulator)", "arch": arch, "regs": k.registers,
                     "smem B": k.smem_bytes, "spills B": k.spills, "HMMA": k.sass_counts.get("HMMA", 0),
                     "HMMA opcode": " ".join(hmma) or "(no cuobjdump)"})
    report.print_table(rows, title=f"{os.path.basename(CU)} compiled with NVRTC for {arch}: the one define changes "
                                   "the accumulator (HMMA .F32 vs .F16) and halves the accumulator staging")
    return rows


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    gpu = device.has_gpu()
    this = sys.modules[__name__]
    t0 = time.perf_counter()

    fmt = format_table()
    report.print_table(fmt, title="Formats (torch.finfo): range and precision")
    ovf = overflow_table()
    report.print_table(ovf, ["case", "dtype", "computed", "exact", "rel err", "why"],
                       title="Overflow, rounding and underflow, computed on the CPU (torch / NumPy)")
    g = gradient_sample(200_000 if args.quick else 1_000_000)
    ls = loss_scaling_table(g)
    report.print_table(ls, ["dtype", "scale", "flushed to 0", "subnormal", "overflow (inf)",
                            "median rel err (finite, nonzero)", "n"],
                       title="Loss scaling: a log-normal gradient population cast to fp16 after scaling by s")
    print("  -> " + loss_scaling_story(ls))

    cases = CHECK_CASES if gpu else CPU_CHECK_CASES
    _, ok = lab.check_variants(this, VARIANTS, cases[:QUICK_CASES] if args.quick else cases)
    compile_rows = show_compile_report(args.arch)

    shape = (4096, 4096) if gpu else ((8, 512) if args.quick else (32, 1024))
    norm = norm_ops_table(*shape)
    report.print_table(norm, ["op", "dtype", "shape", "impl", "rel err", "max abs err", "non-finite", "note"],
                       title="Softmax and layernorm against float64: fp32 arithmetic inside keeps the error at the "
                             "output-rounding floor")
    if not gpu:
        print(f"\nRan on the CPU in {time.perf_counter() - t0:.1f} s: the tables above, the Triton kernels in the "
              "interpreter (tl.dot with an fp16 accumulator, the naive 16-bit softmax/layernorm, phase 3's kernels). "
              "The WMMA kernel was only compiled. GEMM precisions, fp8 and timings need a GPU.")
        return 0 if ok else 1
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    n = 2048 if args.quick else 4096
    gemm, why8 = gemm_table(n, rep_ms=20.0 if args.quick else 40.0)
    if why8:
        print(f"fp8 skipped: {why8}")
    fp16_row = next(r for r in gemm if r["precision"] == "fp16")
    for r in gemm:
        r["vs cuBLAS fp16"] = r["tflops"] / fp16_row["tflops"] if r["tflops"] and fp16_row["tflops"] else None
    report.print_table(gemm, ["precision", "n", "rel err", "max err / rms(ref)", "ms", "tflops", "vs cuBLAS fp16",
                              "spread", "note"],
                       title=f"GEMM {n}^3 per precision: error against the float64 product of the fp32 inputs, speed")
    sweep = k_sweep(K_SWEEP[:2] if args.quick else K_SWEEP)
    report.print_table(sweep, title="GEMM error vs K (M = N = 1024); model fp16 acc = 0.41 u sqrt(K), one rounding "
                                    "per product (the hardware rounds less often)")
    ovf_gpu = accumulator_overflow_gpu()
    report.print_table(ovf_gpu, title="Accumulator overflow on the GPU (K = 4096)")
    out_dir = args.out or report.results_dir()
    if args.json:
        rows = [report.row(LAB, r["precision"], "peer" if not r["precision"].startswith("our") else "ours",
                           [r["n"]] * 3, r["precision"], None, ms=r["ms"], tflops=r["tflops"], rel_err=r["rel err"],
                           max_err_rms=r["max err / rms(ref)"], spread=r["spread"], note=r["note"]) for r in gemm]
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, k_sweep=sweep, accumulator_overflow=ovf_gpu,
                                         norm_ops=norm, formats=fmt, overflow=ovf, loss_scaling=ls,
                                         fp8_skipped=why8, compile_report=compile_rows,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot_k_sweep(sweep, os.path.join(out_dir, f"{LAB}_error_vs_k.png")))
        print("wrote", plot_speed_vs_error(gemm, os.path.join(out_dir, f"{LAB}_speed_vs_error.png")))
    print(f"total {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
