"""What lab 4.6's attention tests share (tests/test_phase4_lab06_attention_gqa*.py, the Hopper backward's GPU tier):
inputs with grouped heads and unequal lengths, poisoned outputs inside guard bands, the exact reference by autograd
in float64, the same-precision SDPA peer, and FlashAttention's test rule that judges us against that peer."""
import warnings

import numpy as np

from common import check

OUT_NAMES = ("o", "lse", "dq", "dk", "dv")


def inputs(b, hq, hkv, sq, sk, d, dtype, seed, where):
    """(q, k, v, do) torch tensors, standard normal with a few large entries in q (late rescales of the running
    maximum). A tensor whose sequence length is odd is a (B, H, S, D) view of a (B, S, H, D) buffer, as in
    make_inputs, so the stride path runs with grouped k, v too; dO is contiguous."""
    import torch

    rng = check.rng(seed)
    dt = getattr(torch, dtype)

    def one(h, s, spiky=False):
        strided = s % 2 == 1
        a = rng.standard_normal((b, s, h, d) if strided else (b, h, s, d))
        if spiky and a.size > 8:
            a.flat[rng.integers(0, a.size, 4)] = 4.0
        t = torch.from_numpy(a.astype(np.float32)).to(device=where, dtype=dt)
        return t.transpose(1, 2) if strided else t

    q, k, v = one(hq, sq, spiky=True), one(hkv, sk), one(hkv, sk)
    do = torch.from_numpy(rng.standard_normal((b, hq, sq, d)).astype(np.float32)).to(device=where, dtype=dt)
    return q, k, v, do


def guarded_outs(q, k, dtype):
    """Poisoned (NaN) outputs inside guard bands: o, lse like q's rows, dq like q, dk and dv like k. An element the
    kernels leave unwritten stays NaN and fails the comparison; a write past an output's end lands in a band."""
    b, hq, sq, d = (int(n) for n in q.shape)
    kshape = tuple(int(n) for n in k.shape)
    return tuple(check.guarded(shape, dt, q) for shape, dt in
                 (((b, hq, sq, d), dtype), ((b, hq, sq), "float32"), ((b, hq, sq, d), dtype), (kshape, dtype),
                  (kshape, dtype)))


def within_peer_rule(got, peer, ref, factor: float, dtype: str, what: str = ""):
    """FlashAttention's test rule: our max abs error against an exact reference (computed from the same 16-bit
    inputs, upcast) at most `factor` times a same-precision library kernel's on the same inputs, plus a tiny absolute
    slack: twice the rounding of `dtype` seen in (ref + 0.3) - 0.3 (FlashAttention's fwd_atol). Factor 2 for the
    forward, 3 for dQ, dK, dV. Returns (our error, the peer's, the slack); raises AssertionError when the rule fails
    or our output is not finite where the reference is."""
    import torch

    ref = ref.double()
    err = (got.double() - ref).abs()
    peer_err = (peer.double() - ref).abs().max().item()
    assert torch.isfinite(err).all(), f"{what}: {int((~torch.isfinite(err)).sum())} non-finite output(s)"
    r = ref.to(got.dtype)
    slack = 2 * ((r + 0.3 - 0.3) - r).abs().max().item()
    ours = err.max().item()
    assert ours <= factor * peer_err + slack, (f"{what}: max abs error {ours:.3e} > {factor} x SDPA's {peer_err:.3e} "
                                               f"+ {slack:.1e} ({dtype})")
    return ours, peer_err, slack


def bottom_right_mask(sq, sk, device):
    """(Sq, Sk) booleans, True where query i attends key j <= i + Sk - Sq: SDPA's is_causal is aligned top-left, so
    the peer gets this mask explicitly."""
    import torch

    return torch.arange(sk, device=device)[None, :] <= torch.arange(sq, device=device)[:, None] + (sk - sq)


def sdpa_same_precision(q, k, v, mask):
    """torch SDPA on the 16-bit inputs, for the rule's peer: enable_gqa=True where this torch has it, else k and v
    repeated per query head (repeat_interleave's backward sums each group). The low-precision kernels (flash,
    memory-efficient) are asked for first: SDPA's math fallback may compute in fp32, which would be no same-precision
    peer. The default selection is the last resort."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    group = q.shape[1] // k.shape[1]

    def call(gqa):
        if gqa:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)
        return F.scaled_dot_product_attention(q, k.repeat_interleave(group, dim=1),
                                              v.repeat_interleave(group, dim=1), attn_mask=mask)

    for gqa in ((True, False) if group > 1 else (False,)):
        try:
            # SDPA warns about every backend it turns down before it raises: the fallback below is the answer
            with warnings.catch_warnings(), sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION]):
                warnings.simplefilter("ignore", UserWarning)
                return call(gqa)
        except (RuntimeError, TypeError):       # no low-precision kernel for this call, or no enable_gqa here
            continue
    return call(False)


def exact_reference(q, k, v, do, causal):
    """(o, lse, dq, dk, dv) by torch.autograd on the inputs upcast (float64 on the GPU: FlashAttention's suite uses
    fp32; float64 only makes the reference more exact, and no TF32 setting can touch it). A row with no key has
    P = 0, as lab.reference defines it (softmax alone gives NaN there, and P^T dO would carry it into dV)."""
    import torch

    qq, kk, vv = (t.detach().double().requires_grad_(True) for t in (q, k, v))
    group = q.shape[1] // k.shape[1]
    kx, vx = kk.repeat_interleave(group, dim=1), vv.repeat_interleave(group, dim=1)
    s = (qq @ kx.transpose(-1, -2)) / q.shape[-1] ** 0.5
    p = None
    if causal:
        keep = bottom_right_mask(q.shape[2], k.shape[2], q.device)
        s = s.masked_fill(~keep, float("-inf"))
        p = torch.softmax(s, dim=-1).masked_fill(~keep, 0.0)
    o = (torch.softmax(s, dim=-1) if p is None else p) @ vx
    dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), do.double())
    return o.detach(), torch.logsumexp(s.detach(), dim=-1), dq, dk, dv


def peer_grads(q, k, v, do, causal):
    """(o, dq, dk, dv) of the same-precision SDPA peer on the 16-bit inputs (bottom-right causal mask when causal)."""
    import torch

    qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    mask = bottom_right_mask(q.shape[2], k.shape[2], q.device) if causal else None
    o = sdpa_same_precision(qq, kk, vv, mask)
    dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), do)
    return o.detach(), dq, dk, dv
