"""Part 1 of lab 4.2, the elementwise chains (bias + gelu_tanh, bias + gelu_erf, bias + residual): Triton's
elementwise_kernel launched once per op (unfused) or once per chain (fused), kernels.cu's fusion_01 (one kernel per
op) and fusion_02 (one per chain), and torch eager. Its public functions: bias_gelu(), bias_residual()."""
from __future__ import annotations

import numpy as np

from common import arrays, config, cuda, device
from common.triton_support import INTERPRETER, launch, triton

from .parts import ACT_CODE, CU, EW_OPS, MAX_GRID, MAX_GRID_YZ, _ew_args, _need, _torch_view
from .triton_kernels import ACT_NONE, elementwise_kernel


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
