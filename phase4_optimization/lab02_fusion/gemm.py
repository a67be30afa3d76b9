"""Part 3 of lab 4.2, a GEMM with its epilogue fused (y = activation(x @ W + bias) + residual): linear() runs
linear_kernel (a program per output tile) or, on Hopper, the persistent TMA kernel through linear_tma(); the same GEMM
unfused (then part 1's bias and GELU kernels) and torch eager. Its public functions: linear(), linear_tma()."""
from __future__ import annotations

from common import arrays, device
from common.triton_support import INTERPRETER, launch

from .elementwise import add_bias_triton, add_triton, gelu_triton
from .gemm_tiles import linear_config, linear_meta, tile_of
from .gemm_tma import _matmul_lab, _tma_here, linear_tma_config, linear_uses_tma, tma_programs, tma_unavailable
from .parts import ACT_CODE, ACTIVATIONS, GEMM_DTYPES, LINEAR_OPS, MAX_GRID, _check_matrix, _need, _torch_view
from .triton_kernels import linear_kernel, linear_tma_kernel


# =====================================================================================================================
# Part 3 - the GEMM's wrappers: linear_kernel (triton_kernels.py), and the persistent TMA kernel where it runs
# =====================================================================================================================
def _check_bias(bias, n: int, dt: str, dev: bool, x) -> None:
    if bias is not None:
        arrays.check_array("bias", bias, dtypes=(dt,), ndim=1, device=dev)
        if int(bias.shape[0]) != n:
            raise ValueError(f"bias: expected {n} values (w has {n} columns), got shape {tuple(bias.shape)}")
        arrays.check_same("x, bias", x, bias, shape=False)


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
