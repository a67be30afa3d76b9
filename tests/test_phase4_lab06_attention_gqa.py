"""Lab 4.6 (attention), the Triton flash kernels beyond Hq = Hkv and Sq = Sk: grouped-query and multi-query k, v
(Hkv heads dividing q's Hq; dK, dV summed over each group inside the dK/dV kernel) and Sq != Sk with the causal mask
aligned bottom-right (query i attends key j when j <= i + Sk - Sq; a row with no key gives O = 0, LSE = -inf and no
gradient). CPU tier: tiny shapes in the interpreter against the float64 reference, outputs poisoned inside guard
bands, and the refusals of shapes the kernels (and the CUDA C wrapper, which takes Hq = Hkv and Sq = Sk only) do not
take. The GPU tier's realistic shapes, judged by FlashAttention's rule against torch's SDPA:
tests/test_phase4_lab06_attention_gqa_gpu.py."""
import pytest

from common import check, lab
from phase4_optimization.lab06_attention import lab as att
from tests.attention_rule import OUT_NAMES, guarded_outs, inputs


def _reference(q, k, v, do, causal, sm_scale=None):
    return att.reference(*(t.detach().double().cpu().numpy() for t in (q, k, v, do)), causal, sm_scale)


def _run_and_check(b, hq, hkv, sq, sk, d, causal, dtype, seed):
    q, k, v, do = inputs(b, hq, hkv, sq, sk, d, dtype, seed, lab.where())
    outs = guarded_outs(q, k, dtype)
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
    q, k, v, do = inputs(2, 4, 1, 19, 30, 64, "bfloat16", 170, lab.where())
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
