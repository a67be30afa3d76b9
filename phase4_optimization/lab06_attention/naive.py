"""Lab 4.6's naive attention, the baseline flash is measured against: S = Q K^T and O = P V by the library GEMM, the
row softmax (scale, causal mask, LSE) by naive_softmax_kernel, S and P - B x H x S x S elements each - written to HBM
and read back; the backward written the same way, with dP and dS in HBM too."""
from __future__ import annotations

import math

from common import arrays
from common.triton_support import INTERPRETER, launch, triton

from .flash import _check_attn
from .shared import LOG2E, NAIVE_MAX_S
from .triton_kernels import naive_softmax_kernel


def _check_qkv(q, k, v, causal, sm_scale):
    """Validate q, k, v of one shape (B, H, S, D) - the naive version's - and return (B, H, S, D, dtype, scale)."""
    a = _check_attn(q, k, v, causal, sm_scale)
    if (a.hkv, a.sk) != (a.hq, a.sq):
        raise ValueError(f"k: shape {tuple(k.shape)} must equal q's {tuple(q.shape)} here (q, k, v: shapes must "
                         "match; grouped-query k, v and Sq != Sk run on the flash kernels)")
    return a.b, a.hq, a.sq, a.d, a.dtype, a.scale


def library_matmul(a, b):
    """The naive version's library GEMM: torch.matmul, which is cuBLAS on a GPU (16-bit operands, fp32 accumulation,
    the product rounded once to the operands' dtype).

    On the CPU the same semantics are computed from exact fp32 copies: torch's CPU bf16/fp16 matmul goes to oneDNN,
    whose AMX kernels (Intel CPUs with AMX-BF16, such as CI's) read the K tail of each row of `a` past its end when K
    is over 32 and not a multiple of 32, counting on zero padding in `b` to cancel it. NaN x 0 is NaN, so a NaN row of
    P (a head whose key is NaN) leaked into the neighbouring rows of O = P V (oneDNN's bug report 5717, fixed after
    the oneDNN 3.12 that torch 2.13 ships). fp32 GEMMs take another path, and fp32 accumulation is what cuBLAS does."""
    import torch

    if a.is_cuda or a.dtype == torch.float32:
        return torch.matmul(a, b)
    return torch.matmul(a.float(), b.float()).to(a.dtype)


def naive_attn_fwd(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """Three kernels: S = Q K^T (cuBLAS via torch.matmul, q's dtype), P = softmax(scale S) with the causal mask and
    the LSE (naive_softmax_kernel), O = P V (cuBLAS). Returns (o, lse, p); p is the S x S matrix it wrote."""
    import torch

    b, h, s, d, dt, scale = _check_qkv(q, k, v, causal, sm_scale)
    if s > NAIVE_MAX_S:
        raise ValueError(f"q: S = {s} is beyond the naive softmax's one-row-in-registers limit {NAIVE_MAX_S}")
    sm = library_matmul(q, k.transpose(-1, -2)).contiguous()   # (B, H, S, S): written to HBM
    p = torch.empty_like(sm)
    lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    block, warps = naive_softmax_config(s)
    launch(naive_softmax_kernel, (b * h * s,), sm, p, lse, s, scale * LOG2E, BLOCK=block, CAUSAL=bool(causal),
           num_warps=warps)
    o = library_matmul(p, v)
    return o, lse, p


def naive_softmax_config(s: int) -> tuple[int, int]:
    """(BLOCK, num_warps) of naive_softmax_kernel for rows of S: the whole row in one block (S rounded up to a power
    of two, at least 16), 4 warps up to 2048 columns, 8 up to 8192, 16 beyond (about 16 values a thread)."""
    block = max(16, triton.next_power_of_2(int(s)))
    return block, 4 if block <= 2048 else 8 if block <= 8192 else 16


def naive_attn_bwd(do, q, k, v, p, sm_scale: float | None = None):
    """The backward written the same way, with dP and dS (S x S each) in HBM: torch matmuls and elementwise ops."""
    arrays.check_array("do", do, dtypes=(arrays.dtype_name(q),), ndim=4, device=not INTERPRETER, contiguous=False,
                       libs=("torch",))
    if tuple(do.shape) != tuple(q.shape):
        raise ValueError(f"do: expected shape {tuple(q.shape)} like q, got {tuple(do.shape)}")
    scale = 1.0 / math.sqrt(int(q.shape[-1])) if sm_scale is None else sm_scale
    dv = library_matmul(p.transpose(-1, -2), do)
    dp = library_matmul(do, v.transpose(-1, -2)).float()
    pf = p.float()
    ds = (pf * (dp - (pf * dp).sum(dim=-1, keepdim=True))).to(q.dtype)
    dq = library_matmul(ds, k) * scale
    dk = library_matmul(ds.transpose(-1, -2), q) * scale
    return dq, dk, dv
