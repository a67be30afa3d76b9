"""Lab 4.6 (attention), the Triton flash kernels beyond Hq = Hkv and Sq = Sk: grouped-query and multi-query k, v
(Hkv heads dividing q's Hq; dK, dV summed over each group inside the dK/dV kernel) and Sq != Sk with the causal mask
aligned bottom-right (query i attends key j when j <= i + Sk - Sq; a row with no key gives O = 0, LSE = -inf and no
gradient). CPU tier: tiny shapes in the interpreter against the float64 reference, outputs poisoned inside guard
bands, and the refusals of shapes the kernels (and the CUDA C wrapper, which takes Hq = Hkv and Sq = Sk only) do not
take. GPU tier: realistic shapes, judged by FlashAttention's rule against torch's SDPA (within_peer_rule)."""
import warnings

import numpy as np
import pytest

from common import check, lab
from phase4_optimization.lab06_attention import lab as att

gpu = pytest.mark.gpu
OUT_NAMES = ("o", "lse", "dq", "dk", "dv")


def _inputs(b, hq, hkv, sq, sk, d, dtype, seed, where):
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


def _guarded_outs(q, k, dtype):
    """Poisoned (NaN) outputs inside guard bands: o, lse like q's rows, dq like q, dk and dv like k. An element the
    kernels leave unwritten stays NaN and fails the comparison; a write past an output's end lands in a band."""
    b, hq, sq, d = (int(n) for n in q.shape)
    kshape = tuple(int(n) for n in k.shape)
    return tuple(check.guarded(shape, dt, q) for shape, dt in
                 (((b, hq, sq, d), dtype), ((b, hq, sq), "float32"), ((b, hq, sq, d), dtype), (kshape, dtype),
                  (kshape, dtype)))


def _reference(q, k, v, do, causal, sm_scale=None):
    return att.reference(*(t.detach().double().cpu().numpy() for t in (q, k, v, do)), causal, sm_scale)


def _run_and_check(b, hq, hkv, sq, sk, d, causal, dtype, seed):
    q, k, v, do = _inputs(b, hq, hkv, sq, sk, d, dtype, seed, lab.where())
    outs = _guarded_outs(q, k, dtype)
    got = att.attention_flash(q, k, v, do, causal, out=outs)
    assert all(g is o for g, o in zip(got, outs)), "the outputs must be written into out"
    # the tolerance's short-row floor is for rows of at most 16 keys: Sk is the row length here
    tol = att.tolerance((b, hq, sk, d, causal), dtype)
    what = f"B{b} Hq{hq} Hkv{hkv} Sq{sq} Sk{sk} D{d} causal={causal} {dtype}"
    for g, w, n in zip(got, _reference(q, k, v, do, causal), OUT_NAMES, strict=True):
        check.assert_close(g, w, dtype, tol, what=f"{what} {n}")
        damage = check.guard_damage(g)
        assert not damage, f"{what} {n}: {damage}"
    return got


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier (the interpreter's tiles: forward 32 x 16, dK/dV 32 keys x 16 queries, dQ 32 queries x 16 keys)
# ---------------------------------------------------------------------------------------------------------------------
HEADS = [(4, 4), (4, 2), (4, 1)]                    # (Hq, Hkv): ordinary, grouped-query, multi-query
# (Sq, Sk): one query; one key (causal: rows 0..5 attend nothing); Sk > Sq and Sq > Sk (shift +16 / -16, across
# tile edges); one whole tile each
LENGTHS = [(1, 7), (7, 1), (17, 33), (33, 17), (16, 16)]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("sq, sk", LENGTHS)
@pytest.mark.parametrize("hq, hkv", HEADS)
def test_flash_gqa_and_unequal_lengths(hq, hkv, sq, sk, causal, dtype):
    """O, LSE, dQ, dK, dV against the float64 reference, every (heads, lengths, causal, dtype) combination (batch 1:
    the tests below run batch 2)."""
    _run_and_check(1, hq, hkv, sq, sk, 64, causal, dtype,
                   seed=100 + 7 * hq + hkv + 3 * sq + sk + int(causal))


@pytest.mark.parametrize("d", [32, 80, 96, 256])
@pytest.mark.parametrize("sq, sk, causal, dtype", [(17, 33, True, "float16"), (33, 17, False, "bfloat16")])
def test_flash_other_head_dims(d, sq, sk, causal, dtype):
    """Head dims other than 64 and 128: a power of two (32, 256) is its own tile; 80 and 96 run in a 128-wide tile
    whose padding columns must read as 0 and never be stored (the guard bands around each output catch a stray
    write; a pad column read as garbage breaks the dot products)."""
    _run_and_check(1, 2, 1, sq, sk, d, causal, dtype, seed=300 + d + sq)


@pytest.mark.parametrize("hq, hkv, sq, sk, dtype", [(4, 2, 70, 45, "bfloat16"), (4, 1, 45, 70, "float16"),
                                                    (2, 2, 45, 70, "bfloat16")])
def test_flash_causal_bands_of_several_tiles(hq, hkv, sq, sk, dtype):
    """Causal, with the shift (+-25) a multiple of no tile: the diagonal band of every forward / dQ query block and
    of every dK/dV key block spans several tiles and starts mid-tile, so the band's first and last blocks are both
    checked (a band that starts one query block late, or ends one early, fails here). Batch 2: the second batch's
    K/V, LSE and dK/dV offsets."""
    _run_and_check(2, hq, hkv, sq, sk, 64, True, dtype, seed=140 + sq)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_rows_with_no_key_are_exactly_zero(dtype):
    """Causal with Sq > Sk: the first Sq - Sk rows attend no key. Their O and dQ are exactly 0 and their LSE -inf -
    never NaN - and they add nothing to dK, dV (checked against the reference, which drops them)."""
    import torch

    b, hq, hkv, sq, sk, d = 1, 4, 2, 40, 9, 64
    got = _run_and_check(b, hq, hkv, sq, sk, d, True, dtype, seed=160)
    o, lse, dq, dk, dv = (g.float().cpu() for g in got)
    empty = sq - sk
    assert (o[:, :, :empty] == 0).all() and (dq[:, :, :empty] == 0).all()
    assert torch.isneginf(lse[:, :, :empty]).all() and torch.isfinite(lse[:, :, empty:]).all()
    assert all(torch.isfinite(t).all() for t in (o, dq, dk, dv))


def test_autograd_function_with_grouped_kv():
    """flash_attention: q.grad has q's shape, k.grad and v.grad k's (summed over each group by the dK/dV kernel);
    against the float64 reference, scale overridden."""
    q, k, v, do = _inputs(2, 4, 1, 19, 30, 64, "bfloat16", 170, lab.where())
    qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    o = att.flash_attention(qq, kk, vv, causal=True, sm_scale=0.2)
    o.backward(do)
    assert tuple(kk.grad.shape) == tuple(k.shape) and tuple(qq.grad.shape) == tuple(q.shape)
    want = _reference(q, k, v, do, True, sm_scale=0.2)
    tol = att.tolerance((2, 4, 30, 64, True), "bfloat16")
    for g, w, n in zip((o, qq.grad, kk.grad, vv.grad), want[:1] + want[2:], ("o", "dq", "dk", "dv")):
        check.assert_close(g.detach(), w, "bfloat16", tol, what=f"autograd.Function {n}")


def _t(shape, dtype="float16"):
    import torch

    return torch.zeros(shape, dtype=getattr(torch, dtype), device=lab.where())


@pytest.mark.parametrize("q_shape, kv_shape, match", [
    ((1, 4, 8, 64), (1, 3, 8, 64), r"^k: its 3 heads must divide q's 4"),
    ((1, 4, 8, 64), (2, 2, 8, 64), r"^k: batch 2 must match q's 1"),
    ((1, 4, 8, 64), (1, 2, 8, 128), r"^k: head dim 128 must match q's 64"),
    ((1, 4, 8, 64), (1, 2, 0, 64), r"^k: empty key sequence"),
])
def test_flash_refuses_shapes_that_do_not_fit(q_shape, kv_shape, match):
    for fn in (lambda q, k, v: att.flash_attn_fwd(q, k, v),
               lambda q, k, v: att.flash_attention(q, k, v, causal=True)):
        with pytest.raises(ValueError, match=match):
            fn(_t(q_shape), _t(kv_shape), _t(kv_shape))


def test_flash_refuses_v_unlike_k_and_misshapen_backward_arguments():
    q, k = _t((1, 4, 8, 64)), _t((1, 2, 5, 64))
    with pytest.raises(ValueError, match=r"^v: shape \(1, 2, 6, 64\) must equal k's"):
        att.flash_attn_fwd(q, k, _t((1, 2, 6, 64)))
    with pytest.raises(ValueError, match=r"^v: shape \(1, 1, 5, 64\) must equal k's"):
        att.flash_attn_fwd(q, k, _t((1, 1, 5, 64)))
    o, lse = _t((1, 4, 8, 64)), _t((1, 4, 8), "float32")
    with pytest.raises(ValueError, match=r"^do: expected shape \(1, 4, 8, 64\) like q"):
        att.flash_attn_bwd(_t((1, 2, 5, 64)), q, k, k, o, lse)
    with pytest.raises(ValueError, match=r"^lse: expected shape \(1, 4, 8\)"):
        att.flash_attn_bwd(q, q, k, k, o, _t((1, 2, 8), "float32"))
    with pytest.raises(ValueError, match=r"^out\[1\] \(dk\): expected shape \(1, 2, 5, 64\)"):
        att.flash_attn_bwd(q, q, k, k, o, lse, out=(None, _t((1, 4, 8, 64)), None))


def test_naive_version_refuses_grouped_kv_and_unequal_lengths():
    """The naive variant keeps one (B, H, S, D) shape for q, k, v; it says so, naming k."""
    q = _t((1, 4, 8, 64))
    for kv in ((1, 2, 8, 64), (1, 4, 9, 64)):
        with pytest.raises(ValueError, match=r"^k: shape .* must equal q's .*shapes must match"):
            att.naive_attn_fwd(q, _t(kv), _t(kv))


@pytest.mark.parametrize("k_shape, v_shape, match", [
    ((1, 2, 8, 64), (1, 2, 8, 64), r"^k: 2 heads against q's 4: the CUDA C kernels take Hq == Hkv only"),
    ((1, 4, 8, 64), (1, 1, 8, 64), r"^v: 1 heads against q's 4"),
    ((1, 4, 5, 64), (1, 4, 5, 64), r"^k: Sk = 5 keys against q's Sq = 8: the CUDA C kernels take Sq == Sk only"),
    ((1, 4, 8, 64), (1, 4, 9, 64), r"^v: Sk = 9 keys against q's Sq = 8"),
])
def test_cuda_c_wrapper_refuses_grouped_kv_and_unequal_lengths(k_shape, v_shape, match):
    """kernels.cu takes Hq = Hkv and Sq = Sk only: its wrapper refuses the rest by name before anything else (no
    GPU needed: the refusal comes before the device is looked at), pointing to the Triton kernels."""
    with pytest.raises(ValueError, match=match):
        att.flash_attn_cuda(_t((1, 4, 8, 64), "bfloat16"), _t(k_shape, "bfloat16"), _t(v_shape, "bfloat16"))


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier: realistic shapes, FlashAttention's rule against torch's SDPA
# ---------------------------------------------------------------------------------------------------------------------
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


def test_within_peer_rule_passes_and_fails():
    """The rule itself (CPU): an error at the peer's size passes, one three times it fails, a NaN fails."""
    import torch

    ref = torch.linspace(-1, 1, 64, dtype=torch.float64)
    noise = torch.full_like(ref, 1e-2)
    peer = (ref + noise).to(torch.bfloat16)
    within_peer_rule((ref + noise).to(torch.bfloat16), peer, ref, 2, "bfloat16")
    with pytest.raises(AssertionError, match="SDPA's"):
        within_peer_rule((ref + 3 * noise + 0.02).to(torch.bfloat16), peer, ref, 2, "bfloat16")
    bad = (ref + noise).to(torch.bfloat16)
    bad[5] = float("nan")
    with pytest.raises(AssertionError, match="non-finite"):
        within_peer_rule(bad, peer, ref, 2, "bfloat16")


def _bottom_right_mask(sq, sk, device):
    """(Sq, Sk) booleans, True where query i attends key j <= i + Sk - Sq: SDPA's is_causal is aligned top-left, so
    the peer gets this mask explicitly."""
    import torch

    return torch.arange(sk, device=device)[None, :] <= torch.arange(sq, device=device)[:, None] + (sk - sq)


def _sdpa_same_precision(q, k, v, mask):
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


def _exact_reference(q, k, v, do, causal):
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
        keep = _bottom_right_mask(q.shape[2], k.shape[2], q.device)
        s = s.masked_fill(~keep, float("-inf"))
        p = torch.softmax(s, dim=-1).masked_fill(~keep, 0.0)
    o = (torch.softmax(s, dim=-1) if p is None else p) @ vx
    dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), do.double())
    return o.detach(), torch.logsumexp(s.detach(), dim=-1), dq, dk, dv


def _peer_grads(q, k, v, do, causal):
    import torch

    qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    mask = _bottom_right_mask(q.shape[2], k.shape[2], q.device) if causal else None
    o = _sdpa_same_precision(qq, kk, vv, mask)
    dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), do)
    return o.detach(), dq, dk, dv


# (Sq, Sk): ragged and tile-straddling lengths, the usual decode-like Sq << Sk, and Sq > Sk (causal: 90 rows with no
# key). Hq 8, Hkv 2 on every (Sq, Sk, D, causal); multi-query (Hkv 1) and Hkv = Hq on two of them. dtypes alternate
# so that each kernel specialization compiles once or twice, not four times.
GPU_PAIRS = [(113, 203), (128, 217), (1023, 1024), (3, 799), (203, 113)]
GPU_CASES = ([(8, 2, sq, sk, d, causal, ("bfloat16", "float16")[(i + j + int(causal)) % 2])
              for i, (sq, sk) in enumerate(GPU_PAIRS) for j, d in enumerate((64, 128)) for causal in (False, True)]
             + [(8, hkv, sq, sk, 128, True, dt) for hkv, dt in ((1, "bfloat16"), (8, "float16"))
                for sq, sk in ((113, 203), (203, 113))]
             # the other head dims (80 and 96 in a padded 128-wide tile)
             + [(8, 2, 113, 203, d, causal, ("bfloat16", "float16")[int(causal)]) for d in (32, 80, 96, 256)
                for causal in (False, True)])


@gpu
@pytest.mark.parametrize("hq, hkv, sq, sk, d, causal, dtype", GPU_CASES)
def test_gpu_flash_gqa_against_sdpa_rule(hq, hkv, sq, sk, d, causal, dtype):
    """B 2, Hq 8 with Hkv 2 (grouped), 1 (multi-query) or 8: O within 2x SDPA's error, dQ, dK, dV within 3x, LSE
    within 1e-3 of the exact one (SDPA returns none to compare with), outputs poisoned inside guard bands. Rows with
    no key (causal, Sq > Sk) are left out of the rule (SDPA's kernels give NaN or 0 there, by version) and checked
    on their own: O and dQ exactly 0, LSE -inf. The peer runs on the rows that attend a key; rows are independent,
    and rows with no key add nothing to dK, dV."""
    import torch

    b = 2
    q, k, v, do = _inputs(b, hq, hkv, sq, sk, d, dtype, 200 + sq + sk + d, "cuda")
    outs = _guarded_outs(q, k, dtype)
    got = att.attention_flash(q, k, v, do, causal, out=outs)
    for g, n in zip(got, OUT_NAMES):
        damage = check.guard_damage(g)
        assert not damage, f"{n}: {damage}"
    o, lse, dq, dk, dv = got
    ref = _exact_reference(q, k, v, do, causal)
    lo = max(sq - sk, 0) if causal else 0            # the first row that attends a key
    if lo:
        assert (o[:, :, :lo] == 0).all() and (dq[:, :, :lo] == 0).all(), "rows with no key: O and dQ must be 0"
        assert torch.isneginf(lse[:, :, :lo]).all(), "rows with no key: LSE must be -inf"
    rows = slice(lo, None)
    # the peer's bottom-right mask for the Sq - lo rows it sees is the same mask, rows shifted by lo
    peer = _peer_grads(q[:, :, rows], k, v, do[:, :, rows], causal)
    what = f"B{b} Hq{hq} Hkv{hkv} Sq{sq} Sk{sk} D{d} causal={causal}"
    within_peer_rule(o[:, :, rows], peer[0], ref[0][:, :, rows], 2, dtype, f"{what} o")
    within_peer_rule(dq[:, :, rows], peer[1], ref[2][:, :, rows], 3, dtype, f"{what} dq")
    within_peer_rule(dk, peer[2], ref[3], 3, dtype, f"{what} dk")
    within_peer_rule(dv, peer[3], ref[4], 3, dtype, f"{what} dv")
    lse_err = (lse[:, :, rows].double() - ref[1][:, :, rows]).abs().max().item()
    assert lse_err <= 1e-3, f"{what} lse: max abs error {lse_err:.2e}"
