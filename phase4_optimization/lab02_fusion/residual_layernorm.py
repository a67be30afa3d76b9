"""Part 2 of lab 4.2, residual + layernorm with h written too: Triton's residual_layernorm_kernel (with lab 3.4's
launch arithmetic), the unfused chain (an add kernel, then lab 3.4's layernorm forward), kernels.cu's fusion_03 and
torch eager. Its public function: residual_layernorm()."""
from __future__ import annotations

import numpy as np

from common import arrays, config, cuda
from common.triton_support import INTERPRETER, launch, triton

from .elementwise import SUFFIX, _cuda_vector_ok, add_triton
from .parts import CU, DTYPES, EPS, LN_OPS, MAX_GRID, TUNED, TUNED_HERE, _check_like, _need, _torch_view
from .triton_kernels import residual_layernorm_kernel


# =====================================================================================================================
# Part 2 - residual + layernorm
# =====================================================================================================================
LN_MAX_SINGLE = 16384      # longest row (rounded up to a power of two) kept in registers in one piece (as lab 3.4's)
LN_LOOP_BLOCK = 4096       # columns per step when a row is longer


def _layernorm_lab():
    """Lab 3.4 (phase 3's layernorm): its forward is the unfused chain's second kernel, and its launch arithmetic
    (rows per program, warps) is this kernel's too."""
    from phase3_triton.lab04_layernorm import lab as layernorm_lab

    return layernorm_lab


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
