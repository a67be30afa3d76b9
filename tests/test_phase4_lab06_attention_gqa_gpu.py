"""Lab 4.6 (attention), the Triton flash kernels beyond Hq = Hkv and Sq = Sk on the GPU: realistic shapes, judged by
FlashAttention's rule against torch's SDPA (tests.attention_rule.within_peer_rule, checked here on the CPU too).
The interpreter's tiny shapes against the float64 reference: tests/test_phase4_lab06_attention_gqa.py."""
import pytest

from common import check
from phase4_optimization.lab06_attention import lab as att
from tests.attention_rule import OUT_NAMES, exact_reference, guarded_outs, inputs, peer_grads, within_peer_rule

gpu = pytest.mark.gpu


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
    q, k, v, do = inputs(b, hq, hkv, sq, sk, d, dtype, 200 + sq + sk + d, "cuda")
    outs = guarded_outs(q, k, dtype)
    got = att.attention_flash(q, k, v, do, causal, out=outs)
    for g, n in zip(got, OUT_NAMES):
        damage = check.guard_damage(g)
        assert not damage, f"{n}: {damage}"
    o, lse, dq, dk, dv = got
    ref = exact_reference(q, k, v, do, causal)
    lo = max(sq - sk, 0) if causal else 0            # the first row that attends a key
    if lo:
        assert (o[:, :, :lo] == 0).all() and (dq[:, :, :lo] == 0).all(), "rows with no key: O and dQ must be 0"
        assert torch.isneginf(lse[:, :, :lo]).all(), "rows with no key: LSE must be -inf"
    rows = slice(lo, None)
    # the peer's bottom-right mask for the Sq - lo rows it sees is the same mask, rows shifted by lo
    peer = peer_grads(q[:, :, rows], k, v, do[:, :, rows], causal)
    what = f"B{b} Hq{hq} Hkv{hkv} Sq{sq} Sk{sk} D{d} causal={causal}"
    within_peer_rule(o[:, :, rows], peer[0], ref[0][:, :, rows], 2, dtype, f"{what} o")
    within_peer_rule(dq[:, :, rows], peer[1], ref[2][:, :, rows], 3, dtype, f"{what} dq")
    within_peer_rule(dk, peer[2], ref[3], 3, dtype, f"{what} dk")
    within_peer_rule(dv, peer[3], ref[4], 3, dtype, f"{what} dv")
    lse_err = (lse[:, :, rows].double() - ref[1][:, :, rows]).abs().max().item()
    assert lse_err <= 1e-3, f"{what} lse: max abs error {lse_err:.2e}"
