"""Lab 4.2 - Kernel fusion: count the bytes a chain of kernels moves, then stop moving the ones nobody needs.

You will learn
  * (part 1) why a chain of cheap elementwise ops costs what its memory passes cost, not what its arithmetic costs:
    bias + GELU as two kernels (t = x + bias, then y = gelu(t)) writes t to memory and reads it back; one fused kernel
    keeps t in registers. Both GELUs are here and named: "gelu_tanh" (the tanh approximation, computed as
    t / (1 + exp(-2u)), the same function) and "gelu_erf" (the exact 0.5 t (1 + erf(t / sqrt 2)));
  * predicting the speed-up of a fusion from a byte count alone, and checking the prediction: one kernel per op,
    written here in CUDA C (16-byte vector loads, scalar fallback for unaligned arrays and ragged rows) and in
    Triton, against one fused kernel in each, with the number of launches and the bytes of every variant explicit;
  * (part 2) a normalization epilogue: h = x + residual, y = layernorm(h), where h is ALSO written (it is the next
    residual stream of a transformer block): one pass that reads x and residual and writes h and y, against an add
    kernel plus a layernorm kernel (phase 3's) that reads h back. In Triton the row stays in registers between the two
    reductions; the CUDA C version (a block per row) re-reads its own h from L2, with plain loads - the read-only
    __ldg path is wrong for data the kernel itself writes;
  * (part 3) a GEMM epilogue: y = gelu_tanh(x @ W + bias) computed while the accumulator tile is still in registers,
    against cuBLAS followed by separate bias and GELU kernels. The epilogue saves little memory traffic next to the
    GEMM's math, so the fused kernel wins only if the Triton GEMM itself runs close to cuBLAS: fusion cannot rescue a
    slow main loop. Optional residual add (y = x @ W + bias + residual) and no-activation mode;
  * public functions the transformer-block lab reuses: linear(), residual_layernorm(), bias_gelu(), bias_residual()
    (Triton; on CuPy / torch CUDA arrays on a GPU, NumPy / CPU torch in the interpreter).

One lab, three parts, one question asked of each: what does fusing the chain save, and does the saving show?
  part 1  elementwise chains: bias + gelu_tanh, bias + gelu_erf, bias + residual    CUDA C fusion_01/02, Triton
  part 2  residual + layernorm, h written too                                      CUDA C fusion_03, Triton
  part 3  GEMM + bias + gelu_tanh (or + bias + residual, or plain)                 Triton
A case's size names its op first - (op, M, N), or (op, M, N, K) for the GEMM - and so do the inputs, so every variant
below takes every part's cases: fused and unfused, CUDA C and Triton; where an implementation has no kernel for a part
(CUDA C has no GEMM here, and no unfused layernorm) the variant says so (cannot_serve) and the check passes it over.

The two numbers (elt = bytes per element, M N = the elements of one matrix; FLOPs ~20 per element for a GELU, ~10
for a layernorm, 2 M N K for a GEMM):
  * bias + GELU, bf16 8192 x 8192: unfused = 4 M N elt = 537 MB (read x, write t, read t, write y), fused = 2 M N elt =
    268 MB; ~1.3 GFLOP, at most ~10 FLOP/B: memory-bound either way, so the predicted speed-up is the byte ratio, 2.0x;
  * bias + residual, same shape: unfused 5 M N elt = 671 MB (add_bias 2 + add 3), fused 3 M N elt = 403 MB: 1.67x;
  * residual + layernorm, bf16 32768 x 4096: fused = read x, r + write h, y = 4 M N elt = 1.07 GB; unfused = add
    (3 M N) + layernorm (2 M N) = 5 M N elt = 1.34 GB: 1.25x; memory-bound. torch eager moves the same 5 M N;
    torch.compile fuses to 4 M N, so matching it means running at the same fraction of the ceiling;
  * GEMM + bias + GELU, bf16 4096^3: 2 M N K = 137.4 GFLOP against (M K + K N + M N) x 2 B = 101 MB, ~1365 FLOP/B:
    compute-bound (far right of the bf16 ridge of any current GPU; `--plan` prints this GPU's). The unfused tail
    (write t, then read + write for the bias add, read + write for GELU) moves 4 M N x 2 B = 134 MB more, plus two
    launches: the predicted speed-up of a fused kernel whose GEMM runs at cuBLAS's rate is (GEMM time + the tail's
    bytes over the bandwidth) / GEMM time - about 1.15x where the GEMM is ~0.2 ms and the bandwidth a few TB/s
    (`--plan` prints this GPU's), less if the fused GEMM runs a few percent slower.
Targets (same run): the fused GEMM epilogue at bf16 4096^3 >= 1.1x the unfused pair (torch.matmul + torch bias add +
torch GELU); fused residual + layernorm at bf16 32768 x 4096 >= 1.0x torch.compile. The lesson, each prediction and
what the measured runs taught: README.md.

Run: python -m phase4_optimization.lab02_fusion [--quick] [--no-bench] [--arch sm_80] [--replot] [--plan [--gpu NAME]]
     [--set UNROLL=4] [--set GEMM_STAGES=3]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import (ACT_GELU_ERF, ACT_GELU_TANH, ACT_NONE, elementwise_kernel, linear_kernel,
                             linear_tma_kernel, residual_layernorm_kernel)

LAB = "phase4_lab02_fusion"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
DTYPES = ("float32", "float16", "bfloat16")
GEMM_DTYPES = ("bfloat16", "float16")
EPS = 1e-5
EW_OPS = ("bias_gelu_tanh", "bias_gelu_erf", "bias_residual")
LN_OPS = ("residual_layernorm",)
LINEAR_OPS = ("linear_gelu_tanh", "linear_bias_residual", "linear_plain")
EW, LN, GEMM = "elementwise chains", "residual + layernorm", "GEMM + epilogue"     # the lab's three parts
PARTS = {EW: EW_OPS, LN: LN_OPS, GEMM: LINEAR_OPS}
ACTIVATIONS = (None, "gelu_tanh")
ACT_CODE = {None: ACT_NONE, "gelu_tanh": ACT_GELU_TANH, "gelu_erf": ACT_GELU_ERF}
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
MAX_GRID = 2**31 - 1
MAX_GRID_YZ = 65535


def part_of(op) -> str:
    """The part of the lab a case's op belongs to."""
    for part, ops in PARTS.items():
        if op in ops:
            return part
    raise ValueError(f"op: unknown op {op!r}; the lab's ops are {', '.join(o for ops in PARTS.values() for o in ops)}")


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs. A case's size names the op: (op, M, N) for the elementwise chains and residual_layernorm,
# (op, M, N, K) for the linear layer. make_inputs puts the op name first among the inputs, so reference() and every
# variant know which computation a case is (a name passes through the lab driver untouched).
# ---------------------------------------------------------------------------------------------------------------------
def gelu_tanh_ref(t: np.ndarray) -> np.ndarray:
    return 0.5 * t * (1.0 + np.tanh(SQRT_2_OVER_PI * (t + 0.044715 * t ** 3)))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_erf_ref(t: np.ndarray) -> np.ndarray:
    return 0.5 * t * (1.0 + _erf(t / math.sqrt(2.0)))


def layernorm_ref(h: np.ndarray, w, b, eps: float = EPS) -> np.ndarray:
    mean = h.mean(axis=-1, keepdims=True)
    hc = h - mean
    return hc / np.sqrt((hc * hc).mean(axis=-1, keepdims=True) + eps) * w + b


def reference(op: str, *a, dtype: str | None = None):
    """float64 ground truth for every op of the lab. residual_layernorm: h = x + r is stored in `dtype` and the stored
    h is what gets normalized (by every variant here, as by an unfused add + layernorm), so y is the layernorm of h
    rounded to `dtype` (no rounding without it); the h it returns is exact, for the comparison to round."""
    a = [np.asarray(v, np.float64) for v in a]
    if op == "bias_gelu_tanh":
        return gelu_tanh_ref(a[0] + a[1])
    if op == "bias_gelu_erf":
        return gelu_erf_ref(a[0] + a[1])
    if op == "bias_residual":
        return a[0] + a[1] + a[2]
    if op == "residual_layernorm":
        x, r, w, b = a
        h = x + r
        if dtype:        # the interpreter truncates to bf16 (see tolerance()), so its stored h is truncated
            h_st = arrays.round_to(h, dtype, toward_zero=INTERPRETER and dtype == "bfloat16")
        return layernorm_ref(h_st if dtype else h, w, b), h
    if op in LINEAR_OPS:
        t = a[0] @ a[1]
        if op != "linear_plain":
            t = t + a[2]
        if op == "linear_gelu_tanh":
            t = gelu_tanh_ref(t)
        if op == "linear_bias_residual":
            t = t + a[3]
        return t
    raise ValueError(f"op: unknown op {op!r}")


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """Inputs of the op the size names. Elementwise: x ~ 1.5 N(0,1) (GELU sees both tails), bias, residual.
    Layernorm: x with mean 3 and a few outliers (a large mean is what breaks a one-pass variance), residual, weight
    ~ 1 +- 0.2, bias. Linear: x ~ N(0,1), W ~ N(0,1)/sqrt(K) (outputs of order 1 whatever K), bias, residual."""
    op, m, n = size[0], size[1], size[2]

    def put(v):
        return arrays.from_numpy(v, dtype, where)

    if op in EW_OPS:
        x = 1.5 * rng.standard_normal((m, n))
        bias = 0.5 * rng.standard_normal(n)
        if op == "bias_residual":
            return op, put(x), put(bias), put(rng.standard_normal((m, n)))
        return op, put(x), put(bias)
    if op == "residual_layernorm":
        x = 3.0 + 2.0 * rng.standard_normal((m, n))
        if x.size > 16:
            x.flat[rng.integers(0, x.size, 3)] = 40.0
        r = rng.standard_normal((m, n))
        return op, put(x), put(r), put(1.0 + 0.2 * rng.standard_normal(n)), put(0.5 * rng.standard_normal(n))
    if op in LINEAR_OPS:
        k = size[3]
        x = rng.standard_normal((m, k))
        w = rng.standard_normal((k, n)) / math.sqrt(max(k, 1))
        out = [op, put(x), put(w)]
        if op != "linear_plain":
            out.append(put(0.5 * rng.standard_normal(n)))
        if op == "linear_bias_residual":
            out.append(put(rng.standard_normal((m, n))))
        return tuple(out)
    raise ValueError(f"size: unknown op {op!r}")


GELU_TAIL_GAIN = 0.198    # max over t < 0 of |t g'(t)| for gelu_tanh: the absolute error per unit relative error of t


def tolerance(size, dtype: str) -> check.Tol:
    # Elementwise and layernorm: fp32 arithmetic, one (fused) or two (unfused: the intermediate is stored) roundings
    # to the storage dtype: the dtype's default. Layernorm of one column: the variance is exactly 0 and y = bias.
    # Linear: fp32 accumulation, so the error is the final rounding (plus one of the intermediate when unfused).
    # 16-bit GELU chains: the unfused variants round t before the GELU, and in GELU's negative tail the function is
    # small next to its slope (|t g'(t) / g(t)| ~ 4 at t = -2), which amplifies that rounding; over a handful of
    # elements the norm error can pass the dtype's default (seen: 1.07e-2 for a 1 x 1 x 1 bf16 linear + GELU,
    # three roundings in a row). Twice the default norm limit; the per-element limit stays.
    # In the interpreter, bf16 also rounds toward zero (Triton 3.9's x.to(tl.bfloat16) truncates, as lab 4.3 notes):
    # each rounding can cost 2^-8 instead of 2^-9, all in the same direction, and the unfused linear + bias + GELU
    # chain rounds three times; seen on the CPU (seed 4065416443): 2.35e-2 on a 1 x 1 x 1 case (0.265 against the
    # reference: three truncations of 0.78%). So twice again there, on the CPU only; the GPU limits are unchanged.
    # Deep in GELU's negative tail the output is ~0 (g(-5) ~ -1.5e-6) and a relative error means nothing: on one
    # element (1 x 1 x 1) neither limit has another scale, and seed 3 gave 0.28 relative for 5e-8 absolute. An
    # absolute floor of 1e-4 (the inputs and outputs are of order 1; a real bug costs order 1) covers that.
    # fp32 has the same tail: 1 + tanh(u) cancels there, so GPU fp32 gave 1.09e-3 relative on a 1 x 1 bias + GELU
    # whose output is ~5e-5 (5.8e-8 absolute, one fp32 rounding of tanh times |x| / 2); its floor is 1e-6.
    # The relative limit alone cannot hold where one element sits in that tail at ~1e-2: a rounding of t by u
    # (relative) moves g(t) by |t g'(t)| u in absolute terms, and for t < 0 |t g'(t)| peaks at 0.198 (t = -1.65).
    # So the 16-bit floor is that gain times the two roundings of t before the GELU (t = x W, then t + bias, when
    # unfused), each 2u when the interpreter truncates: bf16 3.1e-3 in the interpreter, 1.5e-3 on a GPU; fp16 1.9e-4.
    # Seen (seed 4100928171): 7.83e-4 absolute, 8% of an output of ~1e-2, on a 1 x 1 x 1 bf16 linear + GELU in the
    # interpreter. A real bug (a wrong constant, the bias after the GELU) costs order 1.
    t = check.tolerance(dtype)
    if dtype in ("bfloat16", "float16") and "gelu" in size[0]:
        trunc = 2 if INTERPRETER and dtype == "bfloat16" else 1
        tail = GELU_TAIL_GAIN * 2 * trunc * check.UNIT_ROUNDOFF[dtype]
        return check.Tol(2 * trunc * t.rel_norm, t.elem, max(t.atol, 1e-4, tail))
    if "gelu" in size[0]:
        return check.Tol(t.rel_norm, t.elem, max(t.atol, 1e-6))
    return t


# ---------------------------------------------------------------------------------------------------------------------
# Validation shared by the wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def _check_matrix(name, x, dtypes, dev, libs=("cupy", "torch", "numpy")) -> str:
    return arrays.check_array(name, x, dtypes=dtypes, ndim=2, device=dev, libs=libs)


def _check_row(name, v, x, n: int, dev, libs=("cupy", "torch", "numpy")):
    arrays.check_array(name, v, dtypes=(arrays.dtype_name(x),), ndim=1, device=dev, libs=libs)
    if int(v.shape[0]) != n:
        raise ValueError(f"{name}: expected {n} values (x has {n} columns), got shape {tuple(v.shape)}")
    if arrays.library(v) != arrays.library(x):
        raise TypeError(f"{name}: expected a {arrays.library(x)} array like x, got {arrays.library(v)}")


def _check_like(name, v, x, dev, libs=("cupy", "torch", "numpy")):
    arrays.check_array(name, v, dtypes=(arrays.dtype_name(x),), ndim=x.ndim, device=dev, libs=libs)
    arrays.check_same(f"x, {name}", x, v)


def _ew_args(x, bias, residual, out, dev, libs=("cupy", "torch", "numpy")):
    """Validate an elementwise chain's arguments (before any launch); returns (out, M, N, dtype)."""
    dt = _check_matrix("x", x, DTYPES, dev, libs)
    m, n = (int(s) for s in x.shape)
    if bias is not None:
        _check_row("bias", bias, x, n, dev, libs)
    if residual is not None:
        _check_like("residual", residual, x, dev, libs)
    out = arrays.check_out(out, (m, n), dt, x)
    arrays.check_array("out", out, dtypes=(dt,), ndim=2, device=dev, libs=libs)
    return out, m, n, dt


def _need(op, want: tuple[str, ...]):
    if op not in want:
        raise ValueError(f"op: {op!r} is not one of this function's ops ({', '.join(want)})")


# =====================================================================================================================
# Part 1 - elementwise chains
# =====================================================================================================================
# ---- Triton: elementwise_kernel (triton_kernels.py), launched once per op (unfused) or once per chain (fused) ----
# The tile of elementwise_kernel (the lab's default; `--set EW_ELEMS=8192` and the like override it): about EW_ELEMS
# elements per program (32 per thread at 4 warps: 4 x 16-byte loads in flight per stream in bf16), rows of at most
# EW_MAX_BLOCK_N columns. The interpreter takes fewer, larger tiles: every program costs it milliseconds.
EW_TILE = dict(EW_ELEMS=4096, EW_MAX_BLOCK_N=1024, EW_WARPS=4)
EW_TILE_INTERPRETER = dict(EW_ELEMS=16384, EW_MAX_BLOCK_N=4096, EW_WARPS=4)


def ew_tile(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The tile's knobs: a call here (the interpreter's where there is no GPU), or those of a GPU's plan (`gpu`)."""
    if INTERPRETER and gpu is None:
        return config.resolve("triton elementwise_kernel (interpreter tile)", EW_TILE_INTERPRETER, validate=_check_ew)
    return config.resolve("triton elementwise_kernel", EW_TILE, validate=_check_ew)


def _check_ew(v: dict) -> dict:
    if any(v[k] < 1 or v[k] & (v[k] - 1) for k in ("EW_ELEMS", "EW_MAX_BLOCK_N")) or \
            v["EW_WARPS"] not in (1, 2, 4, 8, 16):
        raise ValueError(f"elementwise_kernel: EW_ELEMS and EW_MAX_BLOCK_N powers of two, EW_WARPS in 1, 2, 4, 8, 16; "
                         f"got {config.fmt(v)}")
    return v


def ew_config(m: int, n: int, tile: dict | None = None) -> dict:
    """The program tile for an M x N chain: BLOCK_N = N rounded up to a power of two (at most EW_MAX_BLOCK_N), as
    many rows as make EW_ELEMS elements."""
    t = tile or ew_tile().values
    bn = min(triton.next_power_of_2(max(n, 1)), t["EW_MAX_BLOCK_N"])
    bm = max(1, min(triton.next_power_of_2(max(m, 1)), t["EW_ELEMS"] // bn))
    return {"BLOCK_M": bm, "BLOCK_N": bn, "num_warps": t["EW_WARPS"]}


def ew_grid(m: int, n: int, cfg: dict) -> tuple[int, int]:
    """Row blocks on grid axis 0, column blocks on axis 1."""
    return triton.cdiv(m, cfg["BLOCK_M"]), triton.cdiv(n, cfg["BLOCK_N"])


def _ew_launch(x, bias, c, y, m, n, act: int, config: dict | None = None):
    if m == 0 or n == 0:
        return y
    cfg = config or ew_config(m, n)
    grid = ew_grid(m, n, cfg)
    if grid[0] > MAX_GRID or grid[1] > MAX_GRID_YZ:
        raise ValueError(f"x: shape {m} x {n} needs a grid of {grid}, over the limits ({MAX_GRID}, {MAX_GRID_YZ})")
    launch(elementwise_kernel, grid, x, bias if bias is not None else x, c if c is not None else x, y, m, n,
           HAS_BIAS=bias is not None, ACT=act, HAS_C=c is not None, BLOCK_M=cfg["BLOCK_M"],
           BLOCK_N=cfg["BLOCK_N"], num_warps=cfg["num_warps"])
    return y


def _gelu_name(approximate: str) -> str:
    if approximate not in ("tanh", "none"):
        raise ValueError(f"approximate: expected 'tanh' (gelu_tanh) or 'none' (the exact gelu_erf), got "
                         f"{approximate!r}")
    return "gelu_tanh" if approximate == "tanh" else "gelu_erf"


def bias_gelu(x, bias, out=None, *, approximate: str = "tanh", config: dict | None = None):
    """y = gelu(x + bias) in one Triton kernel; approximate="tanh" (gelu_tanh, default) or "none" (gelu_erf).

    x: (M, N) contiguous fp32 / fp16 / bf16; bias: (N,) same dtype. GPU: CuPy or torch CUDA arrays (bf16: torch);
    no GPU: NumPy or CPU torch, run in the interpreter. Arithmetic in fp32; t = x + bias is never rounded.
    config: the tile ({BLOCK_M, BLOCK_N, num_warps}; default ew_config(M, N)).
    """
    act = ACT_CODE[_gelu_name(approximate)]
    out, m, n, _ = _ew_args(x, bias, None, out, not INTERPRETER)
    return _ew_launch(x, bias, None, out, m, n, act, config)


def bias_residual(x, bias, residual, out=None, *, config: dict | None = None):
    """y = x + bias + residual in one Triton kernel (fp32 arithmetic, one rounding)."""
    out, m, n, _ = _ew_args(x, bias, residual, out, not INTERPRETER)
    return _ew_launch(x, bias, residual, out, m, n, ACT_NONE, config)


def add_bias_triton(x, bias, out=None):
    """t = x + bias, one pass (the first step of an unfused chain)."""
    out, m, n, _ = _ew_args(x, bias, None, out, not INTERPRETER)
    return _ew_launch(x, bias, None, out, m, n, ACT_NONE)


def gelu_triton(t, out=None, *, approximate: str = "tanh"):
    """y = gelu(t), one pass."""
    act = ACT_CODE[_gelu_name(approximate)]
    out, m, n, _ = _ew_args(t, None, None, out, not INTERPRETER)
    return _ew_launch(t, None, None, out, m, n, act)


def add_triton(a, b, out=None):
    """y = a + b, one pass."""
    out, m, n, _ = _ew_args(a, None, b, out, not INTERPRETER)
    return _ew_launch(a, None, b, out, m, n, ACT_NONE)


def ew_triton_fused(op, *a, out=None, config: dict | None = None):
    """The chain `op` as one Triton kernel (1 launch)."""
    _need(op, EW_OPS)
    if op == "bias_residual":
        return bias_residual(a[0], a[1], a[2], out=out, config=config)
    return bias_gelu(a[0], a[1], out=out, approximate="tanh" if op == "bias_gelu_tanh" else "none", config=config)


def ew_triton_unfused(op, *a, out=None):
    """The chain `op` as one Triton kernel per op (2 launches; t goes through memory)."""
    _need(op, EW_OPS)
    out, _, _, _ = _ew_args(a[0], a[1], a[2] if op == "bias_residual" else None, out, not INTERPRETER)
    t = add_bias_triton(a[0], a[1])
    if op == "bias_residual":
        return add_triton(t, a[2], out=out)
    return gelu_triton(t, out=out, approximate="tanh" if op == "bias_gelu_tanh" else "none")


# ---- CUDA C: the same chains (kernels.cu), fusion_01_* one kernel per op, fusion_02_* fused ----
SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
# THREADS and UNROLL of kernels.cu's fusion_01/02 (the lab's default, compiled in as -D; `--set UNROLL=4` and the like
# override them): threads per block, and vectors (or elements) each thread loads before using the first
CUDA_EW = dict(THREADS=256, UNROLL=2)
CUDA_THREADS, CUDA_UNROLL = CUDA_EW["THREADS"], CUDA_EW["UNROLL"]


def cuda_ew_config() -> config.Resolved:
    return config.resolve("cuda fusion_01/02 (elementwise)", CUDA_EW, validate=_check_cuda_ew)


def _check_cuda_ew(v: dict) -> dict:
    if v["THREADS"] not in (32, 64, 128, 256, 512, 1024) or not 1 <= v["UNROLL"] <= 16:
        raise ValueError(f"fusion_01/02: THREADS in 32..1024 (a power of two), UNROLL in 1..16; got {config.fmt(v)}")
    return v


def _cuda_vector_ok(dt: str, n: int, *arrs) -> bool:
    """16-byte accesses need N % V == 0 (a vector stays in one row; its bias values are one aligned run) and every
    pointer on a 16-byte boundary."""
    v = 16 // arrays.ITEMSIZE[dt]
    return n % v == 0 and all(a is None or arrays.aligned(a, 16) for a in arrs)


def cuda_plan(op_kernel: str, dt: str, m: int, n: int, vector: bool) -> dict:
    """Which kernel and launch shape a call gets (pure arithmetic; the tests and the plan read it too)."""
    cfg = cuda_ew_config().values
    v = 16 // arrays.ITEMSIZE[dt] if vector else 1
    units = m * n // v
    blocks = max(1, -(-units // (cfg["THREADS"] * cfg["UNROLL"])))
    return {"kernel": f"{op_kernel}_{SUFFIX[dt]}" + ("" if vector else "_scalar"), "blocks": blocks,
            "threads": cfg["THREADS"], "vector": vector, "V": v, "defines": dict(cfg)}


def _cuda_launch(op_kernel: str, x, bias, c, y, m: int, n: int, dt: str):
    if m == 0 or n == 0:
        return y
    how = cuda_plan(op_kernel, dt, m, n, _cuda_vector_ok(dt, n, x, bias, c, y))
    if how["blocks"] > MAX_GRID:
        raise ValueError(f"x: {m} x {n} needs {how['blocks']} blocks, more than a 1-D grid holds")
    kern = cuda.get_kernel(CU, how["kernel"], defines=how["defines"])

    def p(a):
        return np.uint64(arrays.ptr(a) if a is not None else 0)

    kern((how["blocks"],), (how["threads"],), (p(x), p(bias), p(c), p(y), np.int64(m * n), np.int32(n)))
    return y


def _cuda_args(op, a, out):
    _need(op, EW_OPS)
    if getattr(a[0], "ndim", 0) == 2 and int(a[0].shape[1]) >= 2**31:
        raise ValueError(f"x: {int(a[0].shape[1])} columns do not fit the kernels' 32-bit column index")
    return _ew_args(a[0], a[1], a[2] if op == "bias_residual" else None, out, True, libs=("cupy", "torch"))


def ew_cuda_fused(op, *a, out=None):
    """CUDA C fusion_02_<op> (1 launch)."""
    out, m, n, dt = _cuda_args(op, a, out)
    c = a[2] if op == "bias_residual" else None
    return _cuda_launch(f"fusion_02_{op}", a[0], a[1], c, out, m, n, dt)


def ew_cuda_unfused(op, *a, out=None):
    """CUDA C fusion_01_add_bias, then fusion_01_gelu_* or fusion_01_add (2 launches)."""
    out, m, n, dt = _cuda_args(op, a, out)
    t = arrays.empty((m, n), dt, a[0])
    _cuda_launch("fusion_01_add_bias", a[0], a[1], None, t, m, n, dt)
    if op == "bias_residual":
        return _cuda_launch("fusion_01_add", t, None, a[2], out, m, n, dt)
    return _cuda_launch(f"fusion_01_{op[len('bias_'):]}", t, None, None, out, m, n, dt)


def ew_torch_eager(op, *a, out=None):
    """torch eager, one kernel per op (x + bias, then F.gelu / + residual)."""
    import torch.nn.functional as F

    _need(op, EW_OPS)
    tx, tb = _torch_view(a[0]), _torch_view(a[1])
    if op == "bias_residual":
        res = tx + tb + _torch_view(a[2])
    else:
        res = F.gelu(tx + tb, approximate="tanh" if op == "bias_gelu_tanh" else "none")
    out = arrays.check_out(out, tuple(a[0].shape), arrays.dtype_name(a[0]), a[0])
    _torch_view(out).copy_(res)
    return out


# =====================================================================================================================
# Part 2 - residual + layernorm
# =====================================================================================================================
LN_MAX_SINGLE = 16384      # longest row (rounded up to a power of two) kept in registers in one piece (as lab 3.4's)
LN_LOOP_BLOCK = 4096       # columns per step when a row is longer
TUNED: dict = {}           # {("ln", N, dtype) | ("linear", M, N, K, dtype): config}, filled by bench.py's tuning
TUNED_HERE = "tuned in this run (the benchmark's sweep at its shape)"


def _layernorm_lab():
    """Lab 3.4 (phase 3's layernorm): its forward is the unfused chain's second kernel, and its launch arithmetic
    (rows per program, warps) is this kernel's too."""
    return lab.lab_module("phase3_triton", "lab04_layernorm")


def ln_default(n: int) -> dict:
    """Rows per program and warps for a row of n columns: lab 3.4's forward default (the same row-block arithmetic:
    ~2048+ elements per program, ~16 values of each input per thread)."""
    return _layernorm_lab().fwd_default(n)


def ln_config(n: int, dt: str) -> config.Resolved:
    """residual_layernorm_kernel's rows per program and warps for rows of n columns: lab 3.4's forward default
    (ln_default), then the benchmark's tuning of this run at this N, then --set LN_BLOCK_M / LN_WARPS."""
    d = ln_default(n)
    t = TUNED.get(("ln", n, dt))
    return config.resolve("triton residual_layernorm_kernel", {"LN_BLOCK_M": d["BLOCK_M"], "LN_WARPS": d["num_warps"]},
                          tuned={"LN_BLOCK_M": t["BLOCK_M"], "LN_WARPS": t["num_warps"]} if t else None,
                          tuned_source=TUNED_HERE, validate=_check_ln)


def _check_ln(v: dict) -> dict:
    if v["LN_BLOCK_M"] < 1 or v["LN_BLOCK_M"] & (v["LN_BLOCK_M"] - 1) or v["LN_WARPS"] not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"residual_layernorm_kernel: LN_BLOCK_M a power of two, LN_WARPS in 1..32 (a power of two); "
                         f"got {config.fmt(v)}")
    return v


def ln_launch(rows: int, n: int, cfg: dict) -> tuple[int, dict]:
    """(programs, constexprs and warps) of one residual_layernorm call: BLOCK_M whole rows a program when the row fits
    in registers in one piece, else one row a program walked in LOOP_BLOCK chunks (a config with LOOP_BLOCK forces
    that path)."""
    bn = triton.next_power_of_2(n)
    single = bn <= LN_MAX_SINGLE and "LOOP_BLOCK" not in cfg
    bm = cfg["BLOCK_M"] if single else 1
    meta = dict(BLOCK_M=bm, BLOCK_N=bn if single else cfg.get("LOOP_BLOCK", min(LN_LOOP_BLOCK, bn)), SINGLE=single,
                num_warps=cfg["num_warps"])
    return triton.cdiv(rows, bm), meta


def _ln_args(x, residual, weight, bias, eps, out, dev):
    dt, n = arrays.check_rows("x", x, dtypes=DTYPES, device=dev)
    _check_like("residual", residual, x, dev)
    for name, p in (("weight", weight), ("bias", bias)):
        arrays.check_array(name, p, dtypes=(dt,), ndim=1, device=dev)
        if int(p.shape[0]) != n:
            raise ValueError(f"{name}: expected {n} values (x.shape[-1]), got shape {tuple(p.shape)}")
        if arrays.library(p) != arrays.library(x):
            raise TypeError(f"{name}: expected a {arrays.library(x)} array like x, got {arrays.library(p)}")
    if not (eps > 0):
        raise ValueError(f"eps: expected a positive number, got {eps!r}")
    if out is None:
        out = (None, None)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("out: expected a tuple (y, h) or None")
    y = arrays.check_out(out[0], tuple(x.shape), dt, x, name="out[0] (y)")
    h = arrays.check_out(out[1], tuple(x.shape), dt, x, name="out[1] (h)")
    return y, h, dt, n


def residual_layernorm(x, residual, weight, bias, eps: float = EPS, out=None, *, config: dict | None = None):
    """h = x + residual (rounded to x's dtype, and returned: the next residual stream); y = layernorm(h) over the last
    axis with weight and bias. One Triton kernel; returns (y, h).

    x, residual: same shape (any leading dims), contiguous fp32 / fp16 / bf16; weight, bias: (N,) same dtype.
    out: None or a tuple (y, h) of preallocated arrays. Statistics in fp32 (centred variance).
    config: {BLOCK_M, num_warps} (default: tuned for this N, else ln_default); with LOOP_BLOCK as well, the long-row
    path runs whatever the row length, in chunks of LOOP_BLOCK columns (the path of rows longer than LN_MAX_SINGLE).
    """
    y, h, dt, n = _ln_args(x, residual, weight, bias, eps, out, not INTERPRETER)
    rows = arrays.size(x) // n
    if rows == 0:
        return y, h
    if config:
        cfg = dict(config)
    else:
        v = ln_config(n, dt).values
        cfg = {"BLOCK_M": v["LN_BLOCK_M"], "num_warps": v["LN_WARPS"]}
    programs, meta = ln_launch(rows, n, cfg)
    if programs > MAX_GRID:
        raise ValueError(f"x: {rows} rows need {programs} programs, over the grid limit {MAX_GRID}")
    launch(residual_layernorm_kernel, (programs,), x, residual, weight, bias, y, h, rows, n, float(eps), **meta)
    return y, h


def ln_triton_fused(op, x, r, w, b, out=None, *, config: dict | None = None):
    """residual_layernorm (1 launch)."""
    _need(op, LN_OPS)
    return residual_layernorm(x, r, w, b, EPS, out=out, config=config)


def long_row_config(n: int) -> dict:
    """The long-row path on a row of any length, in ~4 chunks (the path a row longer than LN_MAX_SINGLE takes)."""
    return dict(ln_default(n), LOOP_BLOCK=max(16, triton.next_power_of_2(n) // 4))


def ln_triton_fused_looped(op, x, r, w, b, out=None):
    """The same kernel with its long-row path forced (rows in ~4 chunks): the code path of N > LN_MAX_SINGLE."""
    return ln_triton_fused(op, x, r, w, b, out=out, config=long_row_config(int(x.shape[-1])))


def ln_triton_unfused(op, x, r, w, b, out=None):
    """Triton add kernel (h = x + r), then phase 3's layernorm forward on h (2 launches; h read back)."""
    _need(op, LN_OPS)
    y, h, dt, n = _ln_args(x, r, w, b, EPS, out, not INTERPRETER)
    rows = arrays.size(x) // n
    x2, r2, h2 = (a.reshape(rows, n) for a in (x, r, h))
    add_triton(x2, r2, out=h2)
    lead = tuple(x.shape[:-1])
    _layernorm_lab().layernorm_fwd(h, w, b, EPS, out=(y, arrays.empty(lead, "float32", x),
                                                      arrays.empty(lead, "float32", x)))
    return y, h


# LN_THREADS of kernels.cu's fusion_03 (the lab's default, compiled in as -D; `--set LN_THREADS=512` overrides it):
# threads of the block that walks one row
CUDA_LN = dict(LN_THREADS=256)
CUDA_LN_THREADS = CUDA_LN["LN_THREADS"]


def cuda_ln_config() -> config.Resolved:
    return config.resolve("cuda fusion_03 (residual + layernorm)", CUDA_LN, validate=_check_cuda_ln)


def _check_cuda_ln(v: dict) -> dict:
    if v["LN_THREADS"] % 32 or not 32 <= v["LN_THREADS"] <= 1024:
        raise ValueError(f"fusion_03: LN_THREADS a multiple of 32 from 32 to 1024 (its block sum keeps one value per "
                         f"warp); got {config.fmt(v)}")
    return v


def residual_layernorm_cuda(x, residual, weight, bias, eps: float = EPS, out=None):
    """The same as residual_layernorm, by the CUDA C kernel fusion_03 (a block per row; h re-read from L2)."""
    libs = ("cupy", "torch")
    for name, a in (("x", x), ("residual", residual), ("weight", weight), ("bias", bias)):
        arrays.check_array(name, a, ndim=None, libs=libs, dtypes=DTYPES)
    y, h, dt, n = _ln_args(x, residual, weight, bias, eps, out, True)
    rows = arrays.size(x) // n
    if rows == 0:
        return y, h
    if rows > MAX_GRID:
        raise ValueError(f"x: {rows} rows need as many blocks, more than a 1-D grid holds")
    vector = _cuda_vector_ok(dt, n, x, residual, weight, bias, y, h)
    name = f"fusion_03_residual_layernorm_{SUFFIX[dt]}" + ("" if vector else "_scalar")
    ptrs = [np.uint64(arrays.ptr(a)) for a in (x, residual, weight, bias, y, h)]
    cfg = cuda_ln_config().values
    cuda.get_kernel(CU, name, defines=dict(cfg))((rows,), (cfg["LN_THREADS"],), (*ptrs, np.int32(n), np.float32(eps)))
    return y, h


def ln_cuda_fused(op, x, r, w, b, out=None):
    """CUDA C fusion_03_residual_layernorm (1 launch)."""
    _need(op, LN_OPS)
    return residual_layernorm_cuda(x, r, w, b, EPS, out=out)


def ln_torch_eager(op, x, r, w, b, out=None):
    """torch eager, h = x + r, then F.layer_norm(h) (2 kernels, h read back)."""
    import torch.nn.functional as F

    _need(op, LN_OPS)
    h = _torch_view(x) + _torch_view(r)
    y = F.layer_norm(h, (int(x.shape[-1]),), _torch_view(w), _torch_view(b), EPS)
    out = out or (None, None)
    yo = arrays.check_out(out[0], tuple(x.shape), arrays.dtype_name(x), x)
    ho = arrays.check_out(out[1], tuple(x.shape), arrays.dtype_name(x), x)
    _torch_view(yo).copy_(y)
    _torch_view(ho).copy_(h)
    return yo, ho


# =====================================================================================================================
# Part 3 - a GEMM with its epilogue fused: linear_kernel (triton_kernels.py)
# =====================================================================================================================
def _gcfg(bm, bn, bk, warps, stages, group=8):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages)


# 16-bit inputs. One stage of x + W tiles is (BM + BN) x BK x 2 B: 48 KiB for 128 x 256 x 64, so 4 stages need
# 192 KiB and fit the 227 KiB a block may use on Hopper; 8 warps = two warpgroups of wgmma. 128 x 256 x 64, 8 warps,
# 4 stages is lab 3.2's best tile at bf16 4096^3; the epilogue adds registers (bias, GELU temporaries), which is why
# smaller tiles are candidates too. The tuning (bench.py) times each at the benchmark shape.
LINEAR_CONFIGS = [_gcfg(128, 256, 64, 8, 4), _gcfg(128, 256, 64, 8, 3), _gcfg(256, 128, 64, 8, 3),
                  _gcfg(128, 128, 64, 8, 4), _gcfg(128, 128, 64, 4, 4)]
LINEAR_BIG = LINEAR_CONFIGS[0]          # the default for M, N, K >= LINEAR_BIG_MIN where its ring fits (linear_default)
LINEAR_BIG_MIN = 512
# The big-problem default of a GPU whose shared memory per block holds the ring of none of LINEAR_CONFIGS (99 KiB on
# consumer cards, 64 KiB on the oldest architecture the course supports): 4 stages of 128 x 128 x 32 = 64 KiB.
LINEAR_FIT = _gcfg(128, 128, 32, 4, 4)
LINEAR_SMALL = _gcfg(64, 64, 32, 4, 3)  # small and ragged problems
LINEAR_INTERPRETER = _gcfg(32, 32, 16, 4, 1, group=4)
# a tile's names on the command line (--set GEMM_STAGES=3): one prefix per kernel, so the two GEMMs never share a name
_KNOB = {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "BLOCK_K": "BLOCK_K", "GROUP_M": "GROUP_M", "num_warps": "WARPS",
         "num_stages": "STAGES"}


def knobs(cfg: dict, prefix: str) -> dict:
    """A GEMM tile in --set names: {'BLOCK_M': 128, 'num_warps': 8} -> {'GEMM_BLOCK_M': 128, 'GEMM_WARPS': 8}."""
    return {prefix + _KNOB[k]: v for k, v in cfg.items() if k in _KNOB}


def tile_of(values: dict, prefix: str) -> dict:
    """The inverse of knobs(): the tile as the kernel takes it."""
    return {k: values[prefix + name] for k, name in _KNOB.items() if prefix + name in values}


def _tile_validator(kernel: str, prefix: str):
    def validate(v: dict) -> dict:
        t = tile_of(v, prefix)
        bad = [k for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M") if t[k] < 1 or t[k] & (t[k] - 1)]
        if bad or min(t["BLOCK_M"], t["BLOCK_N"], t["BLOCK_K"]) < 16 or t["num_warps"] not in (1, 2, 4, 8, 16) \
                or not 1 <= t["num_stages"] <= 8:
            raise ValueError(f"{kernel}: {prefix}BLOCK_M/N/K powers of two >= 16, {prefix}GROUP_M a power of two, "
                             f"{prefix}WARPS in 1..16 (a power of two), {prefix}STAGES in 1..8; got {config.fmt(v)}")
        return v
    return validate


def ring_bytes(cfg: dict, elt: int = 2) -> int:
    """Shared memory of a GEMM tile's operand ring, counted as num_stages (x, W) tile pairs of 16-bit values: what
    Hopper's pipeline keeps (earlier architectures keep one stage fewer, so this errs on the safe side)."""
    return cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elt


def linear_default(m: int, n: int, k: int, gpu: device.DeviceInfo) -> dict:
    """The lab's default tile for an M x N x K problem on `gpu`: LINEAR_SMALL below LINEAR_BIG_MIN in any dimension;
    else the first of LINEAR_CONFIGS (LINEAR_BIG first) whose ring fits the GPU's shared memory per block, else
    LINEAR_FIT. Derived from the GPU's limits here, so that the default fits every GPU (tests/test_gpu_plans.py)."""
    if min(m, n, k) < LINEAR_BIG_MIN:
        return dict(LINEAR_SMALL)
    return dict(next((c for c in LINEAR_CONFIGS if ring_bytes(c) <= gpu.smem_per_block_optin), LINEAR_FIT))


def linear_config(m: int, n: int, k: int, dt: str, gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """linear_kernel's tile: linear_default on this GPU (or `gpu`), then the benchmark's tuning of this run at this
    shape, then --set GEMM_BLOCK_M=... (the interpreter: LINEAR_INTERPRETER, then --set)."""
    check = _tile_validator("linear_kernel", "GEMM_")
    if INTERPRETER and gpu is None:
        return config.resolve("triton linear_kernel (interpreter tile)", knobs(LINEAR_INTERPRETER, "GEMM_"),
                              validate=check)
    t = TUNED.get(("linear", m, n, k, dt))
    return config.resolve("triton linear_kernel", knobs(linear_default(m, n, k, gpu or device.current()), "GEMM_"),
                          tuned=knobs(t, "GEMM_") if t else None, tuned_source=TUNED_HERE, validate=check)


def linear_meta(m: int, n: int, k: int, cfg: dict) -> tuple[int, dict]:
    """(programs, constexprs) of one linear_kernel launch with tile `cfg`: one program per output tile, and the
    compile-time flags that drop the masks where the shape is even and switch to 64-bit offsets past 2^31."""
    meta = {key: v for key, v in cfg.items() if key.isupper()}
    meta.update(EVEN_K=k % meta["BLOCK_K"] == 0, EVEN_MN=m % meta["BLOCK_M"] == 0 and n % meta["BLOCK_N"] == 0,
                INDEX_64=max(m * k, k * n, m * n) >= 2**31 - 1)
    return triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), meta


def gemm_dtype(gpu: device.DeviceInfo) -> str:
    """The 16-bit type of part 3's benchmark on `gpu`: bf16, where the tensor cores take it (sm_80 and newer: Triton's
    bf16 tl.dot needs them); fp16 before that."""
    return "bfloat16" if gpu.cc >= 80 else "float16"


def _no_bf16_dot_here() -> str:
    """Why this machine's GPU cannot run a bf16 tl.dot ('' when it can, or without a GPU: the interpreter can)."""
    if device.has_gpu() and gemm_dtype(device.info()) != "bfloat16":
        return tr("bf16 tl.dot needs sm_80 or newer; this GPU is {arch} (its fp16 GEMM cases run)",
                  arch=device.info().arch)
    return ""


# Hopper (sm_90+): the persistent TMA GEMM (triton_kernels.linear_tma_kernel) with the bias + activation epilogue.
# The tile is fixed by shared memory: a 3-stage ring of 128 x 64 + 64 x 256 bf16 tiles (144 KiB) plus the 64 KiB C tile
# of the TMA store fit in the 227 KiB a block may use, a 4th stage would not (the compile report shows 208 KiB); the
# group size comes from lab 3.2's tuning record for this GPU (its persistent kernel has the same main loop). A GPU with
# TMA but less shared memory per block (the consumer Blackwell cards) runs linear_kernel instead (tma_unavailable).
LINEAR_TMA = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
LINEAR_TMA_INTERPRETER = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2, num_warps=4, num_stages=1)
TMA_PROGRAMS_INTERPRETER = 4     # persistent programs in the interpreter (on a GPU: one per SM)


def _matmul_lab():
    return lab.lab_module("phase3_triton", "lab02_matmul")


def tma_unavailable(gpu: device.DeviceInfo) -> str:
    """Why the persistent TMA GEMM cannot run on `gpu` ('' when it can): tensor descriptors need sm_90 or newer, and
    the tile needs lab 3.2's TMA_MIN_SMEM of shared memory per block."""
    mm = _matmul_lab()
    if gpu.cc < mm.TMA_MIN_CC * 10:
        return tr("tensor descriptors (TMA) need sm_90 or newer; this GPU is {arch}", arch=gpu.arch)
    if gpu.smem_per_block_optin < mm.TMA_MIN_SMEM:
        return tr("the persistent TMA tile (ring + C tile) needs {need} KiB of shared memory per block; this GPU has "
                  "{have} KiB", need=mm.TMA_MIN_SMEM // 1024, have=gpu.smem_per_block_optin // 1024)
    return ""


def _tma_here() -> bool:
    """The GPU at hand can run the persistent TMA GEMM."""
    return device.has_gpu() and not tma_unavailable(device.info())


def _variant_tma_unavailable(gpu) -> str:
    return tma_unavailable(gpu) if gpu is not None else ""      # None: the interpreter, which runs it


def _tma_group(m: int, n: int, k: int, gpu: device.DeviceInfo) -> tuple[int | None, str]:
    """GROUP_M from lab 3.2's tuning record for `gpu` (its winner tuned nearest to M N K), and where it came from;
    (None, why not) without one."""
    mm = _matmul_lab()
    winners, source = tuned.record(mm.TUNED_RECORD, mm._check_winners, gpu=gpu)
    if not winners:
        return None, source
    best = tuned.nearest(winners, (m, n, k))
    return best["config"]["GROUP_M"], f"{source}, lab 3.2's winner at {'x'.join(map(str, best['shape']))}"


def tma_programs(m: int, n: int, cfg: dict, gpu: device.DeviceInfo | None) -> int:
    """The persistent grid: one program per SM of `gpu` (None, the interpreter: TMA_PROGRAMS_INTERPRETER), never more
    than tiles."""
    tiles = triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])
    return min(tiles, TMA_PROGRAMS_INTERPRETER if gpu is None else gpu.sms)


def _check_bias(bias, n: int, dt: str, dev: bool, x) -> None:
    if bias is not None:
        arrays.check_array("bias", bias, dtypes=(dt,), ndim=1, device=dev)
        if int(bias.shape[0]) != n:
            raise ValueError(f"bias: expected {n} values (w has {n} columns), got shape {tuple(bias.shape)}")
        arrays.check_same("x, bias", x, bias, shape=False)


def linear_tma_config(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """linear_tma_kernel's tile: LINEAR_TMA with GROUP_M from lab 3.2's tuning record for this GPU (or `gpu`), then
    --set TMA_GROUP_M=... (the interpreter: LINEAR_TMA_INTERPRETER, then --set)."""
    check = _tile_validator("linear_tma_kernel", "TMA_")
    if INTERPRETER and gpu is None:
        return config.resolve("triton linear_tma_kernel (interpreter tile)", knobs(LINEAR_TMA_INTERPRETER, "TMA_"),
                              validate=check)
    group, source = _tma_group(m, n, k, gpu or device.current())
    return config.resolve("triton linear_tma_kernel", knobs(LINEAR_TMA, "TMA_"),
                          tuned={"TMA_GROUP_M": group} if group else None, tuned_source=source, validate=check)


def linear_uses_tma(x, w, out, residual=None, config: dict | None = None) -> bool:
    """Whether linear() sends this call to the persistent TMA kernel: a Hopper-class GPU, no residual (its tile would
    not fit in shared memory beside the ring), no explicit config, M, N, K >= LINEAR_BIG_MIN and lab 3.2's size and
    array-library conditions (uses_tma), layouts a tensor descriptor takes."""
    mm = _matmul_lab()
    if INTERPRETER or config is not None or residual is not None or not _tma_here():
        return False
    m, k = (int(v) for v in x.shape)
    n = int(w.shape[1])
    return (min(m, n, k) >= LINEAR_BIG_MIN and m * n * k >= mm.TMA_MIN_MNK and arrays.library(x) == "torch"
            and not mm.tma_problems(x, w, out))


def linear_tma(x, w, bias=None, *, activation: str | None = None, out=None, config: dict | None = None):
    """y = activation(x @ w + bias) with the persistent TMA kernel (sm_90+, or the interpreter): bf16 / fp16, rows of
    x, w and y contiguous with row strides that are multiples of 16 bytes (K and N multiples of 8). No residual: use
    linear(). Anything else is refused with the reason."""
    dev = not INTERPRETER
    mm = _matmul_lab()
    dt = _check_matrix("x", x, GEMM_DTYPES, dev)
    arrays.check_array("w", w, dtypes=(dt,), ndim=2, device=dev)
    arrays.check_same("x, w", x, w, shape=False)
    if dev and not _tma_here():
        raise RuntimeError(f"linear_tma cannot run here: {tma_unavailable(device.info())}; use linear")
    m, n, k = arrays.matmul_dims(x, w, ("x", "w"))
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation: expected None or 'gelu_tanh', got {activation!r}")
    _check_bias(bias, n, dt, dev, x)
    out = arrays.check_out(out, (m, n), dt, x)
    if m == 0 or n == 0:
        return out
    if k == 0:
        return linear(x, w, bias, activation=activation, out=out, tma=False)
    why = mm.tma_problems(x, w, out)
    if why:
        raise ValueError(f"linear_tma cannot take these arrays: {why}; use linear")
    cfg = dict(config) if config else tile_of(linear_tma_config(m, n, k).values, "TMA_")
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    x_desc, w_desc, y_desc, _ = mm.tma_operands(x, w, out, bm, bn, bk, bn)
    programs = tma_programs(m, n, cfg, None if INTERPRETER else device.info())
    launch(linear_tma_kernel, (programs,), x_desc, w_desc, y_desc, y_desc, bias if bias is not None else out, m, n, k,
           HAS_BIAS=bias is not None, ACT=ACT_CODE[activation], HAS_RES=False, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
           GROUP_M=cfg["GROUP_M"], NUM_PROGRAMS=programs, UPCAST=bool(INTERPRETER),
           num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return out


def linear(x, w, bias=None, *, activation: str | None = None, residual=None, out=None, config: dict | None = None,
           tma: bool = True):
    """y = activation(x @ w + bias) + residual, one Triton kernel (GEMM with the rest fused into its epilogue).

    x: (M, K), w: (K, N), both row-major contiguous bf16 or fp16; bias: (N,) or None; residual: (M, N) or None;
    activation: None or "gelu_tanh". fp32 accumulation, one rounding to x's dtype at the end. out may be residual
    (in place: each element is read before it is written, by the same program). config: a dict of BLOCK_M, BLOCK_N,
    BLOCK_K, GROUP_M, num_warps, num_stages (default: tuned for this shape if the benchmark tuned it, else a fixed
    one). On a Hopper-class GPU, calls linear_uses_tma() accepts run the persistent TMA kernel (tma=False opts out).
    GPU: CuPy (fp16) or torch CUDA arrays; no GPU: NumPy / CPU torch in the interpreter.
    """
    dev = not INTERPRETER
    dt = _check_matrix("x", x, GEMM_DTYPES, dev)
    arrays.check_array("w", w, dtypes=(dt,), ndim=2, device=dev)
    arrays.check_same("x, w", x, w, shape=False)
    m, n, k = arrays.matmul_dims(x, w, ("x", "w"))
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation: expected None or 'gelu_tanh', got {activation!r}")
    _check_bias(bias, n, dt, dev, x)
    if residual is not None:
        arrays.check_array("residual", residual, dtypes=(dt,), ndim=2, device=dev)
        if tuple(residual.shape) != (m, n):
            raise ValueError(f"residual: expected shape {(m, n)}, got {tuple(residual.shape)}")
        arrays.check_same("x, residual", x, residual, shape=False)
    out = arrays.check_out(out, (m, n), dt, x)
    if m == 0 or n == 0:
        return out
    if tma and linear_uses_tma(x, w, out, residual, config):
        return linear_tma(x, w, bias, activation=activation, out=out)
    cfg = dict(config) if config else tile_of(linear_config(m, n, k, dt).values, "GEMM_")
    if _k_step_overflows(n, cfg):
        raise ValueError(f"w: {n} columns make the K loop's 32-bit pointer step overflow; split the layer")
    programs, meta = linear_meta(m, n, k, cfg)
    if programs > MAX_GRID:
        raise ValueError(f"x, w: {programs} tiles exceed the grid limit; use larger BLOCK_M / BLOCK_N")
    # operands a call does not use get `out` as a stand-in pointer (never dereferenced: the flags compile their
    # loads away, and with K = 0 the main loop has no iteration); `out` is never empty here, x and w may be (K = 0)
    launch(linear_kernel, (programs,), x if k else out, w if k else out, bias if bias is not None else out,
           residual if residual is not None else out, out, m, n, k, HAS_BIAS=bias is not None,
           ACT=ACT_CODE[activation], HAS_RES=residual is not None, UPCAST=bool(INTERPRETER), **meta,
           num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return out


def _k_step_overflows(n: int, cfg: dict) -> bool:
    """The K loop advances W's pointers by BLOCK_K x N elements in 32-bit arithmetic."""
    return cfg["BLOCK_K"] * n >= 2**31


def _linear_parts(op, a):
    _need(op, LINEAR_OPS)
    x, w = a[0], a[1]
    bias = a[2] if op != "linear_plain" else None
    res = a[3] if op == "linear_bias_residual" else None
    return x, w, bias, res, ("gelu_tanh" if op == "linear_gelu_tanh" else None)


def linear_triton_fused(op, *a, out=None, config: dict | None = None):
    """linear() with the epilogue fused (1 launch)."""
    x, w, bias, res, act = _linear_parts(op, a)
    return linear(x, w, bias, activation=act, residual=res, out=out, config=config)


def linear_triton_unfused(op, *a, out=None):
    """The same Triton GEMM without epilogue, then the bias kernel, then the GELU (or add) kernel (3 launches)."""
    x, w, bias, res, act = _linear_parts(op, a)
    if bias is None:
        return linear(x, w, out=out)
    t = linear(x, w)
    t = add_bias_triton(t, bias)
    out = arrays.check_out(out, tuple(t.shape), arrays.dtype_name(t), t)
    if act == "gelu_tanh":
        return gelu_triton(t, out=out, approximate="tanh")
    return add_triton(t, res, out=out)


def linear_torch_eager(op, *a, out=None):
    """torch.matmul (cuBLAS), then + bias, then F.gelu(tanh) / + residual, each its own kernel."""
    import torch
    import torch.nn.functional as F

    x, w, bias, res, act = _linear_parts(op, a)
    t = torch.matmul(_torch_view(x), _torch_view(w))
    if bias is not None:
        t = t + _torch_view(bias)
    if act == "gelu_tanh":
        t = F.gelu(t, approximate="tanh")
    if res is not None:
        t = t + _torch_view(res)
    out = arrays.check_out(out, tuple(t.shape), arrays.dtype_name(x), x)
    _torch_view(out).copy_(t)
    return out


# =====================================================================================================================
# The lab contract: every variant takes every part's cases (the op comes first among the inputs) and dispatches
# on the op; a part an implementation has no kernel for is named by cannot_serve, and the checks pass it over.
# =====================================================================================================================
def _dispatch(op, table: dict, what: str):
    part = part_of(op)
    if part not in table:
        raise ValueError(f"op: {what} has no kernel for {part} ({op!r}): {NO_KERNEL[what]}")
    return table[part]


def _gpu_first(a):
    """The CUDA C variants refuse host arrays before anything else, whatever the op (the message says how to move
    them)."""
    arrays.check_array("x", a[0], ndim=None, libs=("cupy", "torch"), contiguous=False)


def cuda_unfused(op, *a, out=None):
    """CUDA C, one kernel per op: part 1's chains as fusion_01_add_bias, then fusion_01_gelu_* / fusion_01_add."""
    _gpu_first(a)
    return _dispatch(op, {EW: ew_cuda_unfused}, "cuda unfused")(op, *a, out=out)


def cuda_fused(op, *a, out=None):
    """CUDA C, one kernel per chain: fusion_02_<op> (part 1), fusion_03_residual_layernorm (part 2)."""
    _gpu_first(a)
    return _dispatch(op, {EW: ew_cuda_fused, LN: ln_cuda_fused}, "cuda fused")(op, *a, out=out)


def triton_unfused(op, *a, out=None):
    """Triton, one kernel per op: add_bias then gelu / add (part 1); add, then phase 3's layernorm (part 2); the GEMM,
    then bias, then gelu / add (part 3)."""
    return _dispatch(op, {EW: ew_triton_unfused, LN: ln_triton_unfused, GEMM: linear_triton_unfused},
                     "triton unfused")(op, *a, out=out)


def triton_fused(op, *a, out=None):
    """Triton, one kernel per chain: elementwise_kernel, residual_layernorm_kernel, linear_kernel with its epilogue."""
    return _dispatch(op, {EW: ew_triton_fused, LN: ln_triton_fused, GEMM: linear_triton_fused},
                     "triton fused")(op, *a, out=out)


# Tiles far smaller than the cases, so every fused kernel runs its multi-tile paths: several column blocks per row
# (part 1), a row in ~4 chunks - the long-row path of rows longer than LN_MAX_SINGLE (part 2), several tile groups and
# K steps with ragged edges (part 3).
SMALL_EW = {"BLOCK_M": 2, "BLOCK_N": 16, "num_warps": 1}
SMALL_LINEAR = _gcfg(16, 16, 16, 4, 1, group=2) if INTERPRETER else _gcfg(32, 32, 32, 4, 2, group=2)


def triton_fused_small_tiles(op, *a, out=None):
    """triton_fused with tiles smaller than the problem: SMALL_EW, the long-row path, SMALL_LINEAR."""
    return _dispatch(op, {EW: lambda *x, out: ew_triton_fused(*x, out=out, config=SMALL_EW),
                          LN: ln_triton_fused_looped,
                          GEMM: lambda *x, out: linear_triton_fused(*x, out=out, config=SMALL_LINEAR)},
                     "triton fused, small tiles")(op, *a, out=out)


def linear_tma_fused(op, *a, out=None):
    """Part 3 with the persistent TMA kernel (linear_tma); the residual op is not among its cases."""
    x, w, bias, res, act = _linear_parts(op, a)
    if res is not None:
        raise ValueError("linear_tma has no residual epilogue (its tile would not fit beside the ring); use linear")
    return linear_tma(x, w, bias, activation=act, out=out)


def _tma_cannot_serve(size, dtype) -> str:
    op = size[0]
    if part_of(op) != GEMM:
        return tr("the TMA kernel is part 3's GEMM only")
    if dtype not in GEMM_DTYPES:
        return tr("the GEMM takes 16-bit inputs only")
    if op == "linear_bias_residual":
        return tr("no residual epilogue in the TMA kernel")
    if size[2] % 8 or size[3] % 8:
        return tr("TMA needs row strides of 16 bytes: N and K multiples of 8")
    return ""


def peer_torch_eager(op, *a, out=None):
    """torch eager, one kernel per op as a user writes it (x + bias, F.gelu; x + r, F.layer_norm; matmul, + bias,
    F.gelu), the result copied into out."""
    return _dispatch(op, {EW: ew_torch_eager, LN: ln_torch_eager, GEMM: linear_torch_eager}, "torch")(op, *a, out=out)


# Why an implementation has no kernel for a part (CUDA C: no GEMM here, no unfused layernorm).
NO_KERNEL = {"cuda unfused": "CUDA C has an unfused chain for part 1 only (no layernorm or GEMM kernel here)",
             "cuda fused": "CUDA C has parts 1 and 2 only (no GEMM here: lab 4.3's is the CUDA C GEMM)"}


def _cannot(serves: tuple[str, ...], why: str = ""):
    """cannot_serve of a variant: the cases of the parts it has no kernel for, and fp32 GEMMs (16-bit inputs only)."""
    def cannot_serve(size, dtype) -> str:
        part = part_of(size[0])
        if part not in serves:
            return tr(why) if why else why
        if part == GEMM and dtype not in GEMM_DTYPES:
            return tr("the GEMM takes 16-bit inputs only")
        if part == GEMM and dtype == "bfloat16":
            return _no_bf16_dot_here()
        return ""
    return cannot_serve


VARIANTS = [
    lab.Variant("cuda 01 unfused (one kernel per op)", cuda_unfused, "cuda", dtypes=DTYPES,
                note="part 1: 2 launches", cannot_serve=_cannot((EW,), NO_KERNEL["cuda unfused"])),
    lab.Variant("cuda 02/03 fused (one kernel per chain)", cuda_fused, "cuda", dtypes=DTYPES,
                note="parts 1-2: 1 launch", cannot_serve=_cannot((EW, LN), NO_KERNEL["cuda fused"])),
    lab.Variant("triton unfused (one kernel per op)", triton_unfused, "triton", dtypes=DTYPES,
                note="2-3 launches", cannot_serve=_cannot((EW, LN, GEMM))),
    lab.Variant("triton fused (one kernel per chain)", triton_fused, "triton", dtypes=DTYPES, note="1 launch",
                cannot_serve=_cannot((EW, LN, GEMM))),
    lab.Variant("triton fused, small tiles (multi-tile and long-row paths)", triton_fused_small_tiles, "triton",
                dtypes=DTYPES, note="1 launch", cannot_serve=_cannot((EW, LN, GEMM))),
    lab.Variant("triton fused GEMM, persistent TMA (sm_90+)", linear_tma_fused, "triton", dtypes=GEMM_DTYPES,
                note="part 3 without residual", archs=("sm_90+",), unavailable=_variant_tma_unavailable,
                cannot_serve=_tma_cannot_serve),
]
PEERS = [lab.Variant("torch eager (one kernel per op)", peer_torch_eager, "peer", dtypes=DTYPES)]
# One case of each part first (--quick checks those three), then the awkward ones: 1 column, odd N (the scalar CUDA
# path), N % 8 == 0 (the vector path), rows not a multiple of any tile, a row longer than LN_MAX_SINGLE (part 2's
# long-row path), GEMMs ragged in M, N and K, and one large enough for the big tile.
CHECK_CASES = [(("bias_gelu_tanh", 257, 1030), "bfloat16"), (("residual_layernorm", 130, 4096), "bfloat16"),
               (("linear_gelu_tanh", 127, 264, 136), "bfloat16"),
               (("bias_gelu_tanh", 1, 1), "float32"), (("bias_gelu_erf", 37, 1000), "float32"),
               (("bias_residual", 129, 72), "bfloat16"), (("bias_gelu_erf", 64, 4104), "float16"),
               (("bias_residual", 3, 4097), "float32"), (("bias_gelu_tanh", 33, 520), "float16"),
               (("bias_gelu_erf", 5, 24), "bfloat16"),
               (("residual_layernorm", 1, 1), "float32"), (("residual_layernorm", 37, 1000), "float32"),
               (("residual_layernorm", 17, 768), "float16"), (("residual_layernorm", 9, 20000), "float32"),
               (("linear_gelu_tanh", 1, 1, 1), "bfloat16"), (("linear_bias_residual", 67, 131, 97), "float16"),
               (("linear_plain", 130, 70, 299), "bfloat16"), (("linear_gelu_tanh", 512, 768, 512), "bfloat16"),
               (("linear_gelu_tanh", 127, 255, 129), "bfloat16"), (("linear_plain", 1, 8, 8), "float16"),
               (("linear_gelu_tanh", 520, 1032, 776), "bfloat16")]
CPU_CHECK_CASES = [(("bias_gelu_tanh", 13, 40), "float16"), (("residual_layernorm", 5, 33), "float32"),
                   (("linear_gelu_tanh", 33, 72, 40), "bfloat16"),
                   (("bias_gelu_tanh", 1, 1), "float32"), (("bias_gelu_erf", 7, 33), "float32"),
                   (("bias_residual", 5, 24), "bfloat16"), (("bias_gelu_erf", 3, 130), "bfloat16"),
                   (("bias_residual", 9, 17), "float16"),
                   (("residual_layernorm", 1, 1), "float32"), (("residual_layernorm", 4, 100), "bfloat16"),
                   (("residual_layernorm", 6, 299), "float16"),
                   (("linear_gelu_tanh", 1, 1, 1), "bfloat16"), (("linear_bias_residual", 17, 31, 23), "float16"),
                   (("linear_plain", 5, 7, 3), "float16"), (("linear_gelu_tanh", 33, 65, 40), "bfloat16"),
                   (("linear_plain", 1, 8, 8), "float16")]
QUICK_CASES = 3


# =====================================================================================================================
# The plan: every kernel launch of the benchmark's three headline cases on a given GPU (common.plan)
# =====================================================================================================================
EW_SHAPE = (8192, 8192)          # part 1's benchmark, bf16
LN_SHAPE = (32768, 4096)         # part 2's benchmark, bf16
GEMM_N = 4096                    # part 3's benchmark, GEMM_N^3 in gemm_dtype(gpu)
TY = {"float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32"}
PLAN_NOTES = ["part 2's unfused chain ends in phase 3's layernorm forward (lab 3.4's plan lists its launch); the "
              "small-tiles variant is checked, not benchmarked; torch eager and torch.compile launch their own kernels"]


def ew_bytes(shape) -> int:
    """Bytes part 1's benchmark holds at once: x, the residual, four outputs, the unfused chains' intermediates and
    torch's, about 12 matrices of 2-byte elements."""
    return 24 * shape[0] * shape[1]


def ln_bytes(shape) -> int:
    """Part 2's: x, r, three (y, h) pairs, torch's h and y and the unfused chain's statistics, about 14 matrices."""
    return 28 * shape[0] * shape[1]


def gemm_bytes(n: int) -> int:
    """Part 3's: x, W, five outputs, the unfused chains' intermediates, about 12 n x n matrices of 2-byte elements."""
    return 24 * n * n


def _halve_rows(shape):
    return (shape[0] // 2, shape[1])


def bench_shapes(gpu: device.DeviceInfo) -> tuple[tuple, tuple, int, list[str]]:
    """(part 1's shape, part 2's, part 3's n, notes): the benchmark's shapes, scaled down (rows halved, or n) where
    the GPU's memory cannot hold them."""
    ew, n1 = plan.fit(EW_SHAPE, ew_bytes, gpu, shrink=_halve_rows, what="part 1's shape")
    lnr, n2 = plan.fit(LN_SHAPE, ln_bytes, gpu, shrink=_halve_rows, what="part 2's shape")
    g, n3 = plan.fit(GEMM_N, gemm_bytes, gpu, what="part 3's n")
    return ew, lnr, g, [t for t in (n1, n2, n3) if t]


def ew_signature(dt: str) -> dict:
    ty = TY[dt]
    return {"x_ptr": ty, "bias_ptr": ty, "c_ptr": ty, "y_ptr": ty, "M": "i32", "N": "i32", "HAS_BIAS": "constexpr",
            "ACT": "constexpr", "HAS_C": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


def ln_signature(dt: str) -> dict:
    ty = TY[dt]
    return {"x_ptr": ty, "r_ptr": ty, "w_ptr": ty, "b_ptr": ty, "y_ptr": ty, "h_ptr": ty, "n_rows": "i32",
            "n_cols": "i32", "eps": "fp32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "SINGLE": "constexpr"}


def linear_signature(dt: str, const: dict) -> dict:
    """linear_kernel's arguments as Triton's ahead-of-time compiler takes them, its constexprs `const` included."""
    ty = TY[dt]
    sig = {"x_ptr": ty, "w_ptr": ty, "bias_ptr": ty, "res_ptr": ty, "y_ptr": ty, "M": "i32", "N": "i32", "K": "i32"}
    sig.update({k: "constexpr" for k in const})
    return sig


def linear_tma_signature(dt: str, cfg: dict, const: dict) -> dict:
    """linear_tma_kernel's: the tensor descriptors of the x, W and y tiles of `cfg`, the bias, the sizes, `const`."""
    t = TY[dt][1:]
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    sig = {"x_desc": f"tensordesc<{t}[{bm},{bk}]>", "w_desc": f"tensordesc<{t}[{bk},{bn}]>",
           "y_desc": f"tensordesc<{t}[{bm},{bn}]>", "res_desc": f"tensordesc<{t}[{bm},{bn}]>", "bias_ptr": TY[dt],
           "M": "i32", "N": "i32", "K": "i32"}
    sig.update({k: "constexpr" for k in const})
    return sig


def tma_constexprs(cfg: dict, programs: int, act: int, has_bias: bool = True) -> dict:
    return {"HAS_BIAS": has_bias, "ACT": act, "HAS_RES": False, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"],
            "BLOCK_K": cfg["BLOCK_K"], "GROUP_M": cfg["GROUP_M"], "NUM_PROGRAMS": programs, "UPCAST": False}


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Every kernel the benchmark's three parts launch on `gpu` (size: unused; the lab has one shape per part,
    bench_shapes fits them to the GPU's memory)."""
    (m, n), (lm, ln_), g, _ = bench_shapes(gpu)
    dt, gdt = "bfloat16", gemm_dtype(gpu)
    unf_c, fus_c, unf_t, fus_t, _small, tma_v = (v.name for v in VARIANTS)
    ew_case, ln_case, g_case = f"{m} x {n} {dt}", f"{lm} x {ln_} {dt}", f"GEMM {g}^3 {gdt}"
    out = []
    # part 1 (and part 2's CUDA C kernel): fusion_01 x 4, fusion_02 x 3, fusion_03; the benchmark's arrays are aligned
    ce, cl = cuda_ew_config(), cuda_ln_config()
    for var, names in ((unf_c, ("fusion_01_add_bias", "fusion_01_gelu_tanh", "fusion_01_gelu_erf", "fusion_01_add")),
                       (fus_c, ("fusion_02_bias_gelu_tanh", "fusion_02_bias_gelu_erf", "fusion_02_bias_residual"))):
        for name in names:
            how = cuda_plan(name, dt, m, n, n % (16 // arrays.ITEMSIZE[dt]) == 0)
            out.append(plan.Launch(var, how["kernel"], "cuda", grid=how["blocks"], threads=how["threads"], source=CU,
                                   defines=how["defines"], case=ew_case, config_source=ce.source()))
    vec = "" if ln_ % (16 // arrays.ITEMSIZE[dt]) == 0 else "_scalar"
    out.append(plan.Launch(fus_c, f"fusion_03_residual_layernorm_{SUFFIX[dt]}{vec}", "cuda", grid=lm,
                           threads=cl["LN_THREADS"], source=CU, defines=dict(cl.values), case=ln_case,
                           config_source=cl.source()))
    # Triton elementwise_kernel: (has_bias, act, has_c) per launch
    tile = ew_tile(gpu)

    def ew(var, flags, shape, ty, case):
        cfg = ew_config(*shape, tile.values)
        bias, act, c = flags
        return plan.Launch(var, "elementwise_kernel", "triton", fn=elementwise_kernel, grid=ew_grid(*shape, cfg),
                           signature=ew_signature(ty), defines=dict(HAS_BIAS=bias, ACT=act, HAS_C=c,
                                                                    BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"]),
                           num_warps=cfg["num_warps"], case=case, config_source=tile.source())

    add_bias, add = (True, ACT_NONE, False), (False, ACT_NONE, True)
    out += [ew(unf_t, f, (m, n), dt, ew_case) for f in (add_bias, (False, ACT_GELU_TANH, False),
                                                        (False, ACT_GELU_ERF, False), add)]
    out += [ew(fus_t, f, (m, n), dt, ew_case) for f in ((True, ACT_GELU_TANH, False), (True, ACT_GELU_ERF, False),
                                                        (True, ACT_NONE, True))]
    # part 2: the unfused chain's add (then lab 3.4's layernorm), the fused kernel
    out.append(ew(unf_t, add, (lm, ln_), dt, ln_case))
    lc = ln_config(ln_, dt)
    programs, meta = ln_launch(lm, ln_, {"BLOCK_M": lc["LN_BLOCK_M"], "num_warps": lc["LN_WARPS"]})
    out.append(plan.Launch(fus_t, "residual_layernorm_kernel", "triton", fn=residual_layernorm_kernel, grid=programs,
                           signature=ln_signature(dt), defines={k: meta[k] for k in ("BLOCK_M", "BLOCK_N", "SINGLE")},
                           num_warps=meta["num_warps"], case=ln_case, config_source=lc.source()))
    # part 3: the GEMM (linear_kernel, or the persistent TMA kernel where the GPU has it) with and without epilogue
    gc = linear_config(g, g, g, gdt, gpu)
    cfg = tile_of(gc.values, "GEMM_")
    programs, meta = linear_meta(g, g, g, cfg)

    def gemm(var, has_bias, act, case):
        const = dict(HAS_BIAS=has_bias, ACT=act, HAS_RES=False, INDEX_64=meta["INDEX_64"], UPCAST=False,
                     **{k: meta[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "EVEN_K", "EVEN_MN")})
        return plan.Launch(var, "linear_kernel", "triton", fn=linear_kernel, grid=programs,
                           signature=linear_signature(gdt, const), defines=const, num_warps=cfg["num_warps"],
                           num_stages=cfg["num_stages"], case=case, config_source=gc.source())

    tma = not tma_unavailable(gpu) and g >= LINEAR_BIG_MIN and g ** 3 >= _matmul_lab().TMA_MIN_MNK
    if tma:
        tc = linear_tma_config(g, g, g, gpu)
        tcfg = tile_of(tc.values, "TMA_")
        tp = tma_programs(g, g, tcfg, gpu)

        def persistent(var, has_bias, act, case):
            const = tma_constexprs(tcfg, tp, act, has_bias)
            return plan.Launch(var, "linear_tma_kernel", "triton", fn=linear_tma_kernel, grid=tp,
                               signature=linear_tma_signature(gdt, tcfg, const), defines=const,
                               num_warps=tcfg["num_warps"], num_stages=tcfg["num_stages"], case=case,
                               config_source=tc.source())

        out += [persistent(unf_t, False, ACT_NONE, tr("{case}, the GEMM alone", case=g_case)),
                persistent(fus_t, True, ACT_GELU_TANH, tr("{case}, persistent TMA", case=g_case)),
                persistent(tma_v, True, ACT_GELU_TANH, g_case),
                gemm(fus_t, True, ACT_GELU_TANH, tr("{case}, grid per tile (tma=False)", case=g_case))]
    else:
        out += [gemm(unf_t, False, ACT_NONE, tr("{case}, the GEMM alone", case=g_case)),
                gemm(fus_t, True, ACT_GELU_TANH, g_case)]
    out += [ew(unf_t, f, (g, g), gdt, tr("{case}, the unfused tail", case=g_case))
            for f in (add_bias, (False, ACT_GELU_TANH, False))]
    return out


def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
