"""Lab 4.6, the Hopper attention backward's rungs on an sm_90 GPU (marked gpu; the CPU tier - compiles, SASS, the
shared-memory mirror, refusals - is test_phase4_lab06_attention_hopper_bwd.py): dQ, dK, dV of every rung against a
float64 reference at awkward sizes (S not a multiple of the 64-row tiles, causal and not, GQA and MQA, D 64 and 128,
fp16 and bf16, strided q/k/v views), outputs poisoned inside guard bands, judged by FlashAttention's rule (at most 3x
the error of torch's same-precision SDPA backward: within_peer_rule of the GQA tests). A file of its own so that
pytest-xdist's loadfile runs it beside the CPU tier's compiles.
"""
import numpy as np
import pytest

from common import check, device
from phase4_optimization.lab06_attention import hopper as hp
from phase4_optimization.lab06_attention import hopper_bwd as hb
from tests.attention_rule import exact_reference, inputs, peer_grads, within_peer_rule
from tests.helpers import builds_with

gpu = pytest.mark.gpu


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier (sm_90 only)
# ---------------------------------------------------------------------------------------------------------------------
def _hopper_ready():
    return device.has_gpu() and not hp.unavailable_reason()


hopper_gpu = pytest.mark.skipif(not _hopper_ready(), reason="the Hopper backward needs an sm_90 GPU")

# (B, Hq, Hkv, S, D, causal, dtype): S past a 64-row tile by a little and by a lot, S = 1, one exact tile; grouped
# (4q / 2kv), multi-query (Hkv 1) and Hq = Hkv; both head dims and dtypes; causal with B Hkv = 6 (rung 09's
# longest_first: a full group of LPT_HEADS heads and a short one)
GPU_CASES = [(1, 2, 2, 113, 64, False, "bfloat16"), (2, 4, 2, 203, 128, True, "float16"),
             (1, 4, 1, 130, 128, False, "bfloat16"), (2, 4, 2, 64, 64, True, "bfloat16"),
             (1, 2, 2, 1, 128, True, "float16"), (1, 4, 2, 257, 64, True, "float16"),
             (1, 2, 1, 300, 128, True, "bfloat16"), (2, 2, 2, 191, 64, False, "float16"),
             (1, 8, 2, 1024, 128, True, "bfloat16"), (1, 4, 4, 65, 128, False, "float16"),
             (3, 2, 2, 200, 64, True, "bfloat16")]


@gpu
@hopper_gpu
@pytest.mark.parametrize("rung", hb.RUNGS)
@pytest.mark.parametrize("b, hq, hkv, s, d, causal, dtype", GPU_CASES)
def test_gpu_backward_against_float64_rule(b, hq, hkv, s, d, causal, dtype, rung):
    """dQ, dK, dV into poisoned guarded outputs, from the exact O (rounded to the dtype) and LSE (fp32), each within
    3x the same-precision SDPA backward's error against float64 (FlashAttention's rule)."""
    _check_against_float64_rule(b, hq, hkv, s, d, causal, dtype, rung)


@pytest.fixture
def load_race(monkeypatch):
    """The backward's builds loaded while CONFIG's LOAD_RACE is raised, and unloaded again after the test."""
    with builds_with(monkeypatch, hb.CONFIG, "LOAD_RACE", 20000, hb._LOADED, hb._functions):
        yield


@gpu
@hopper_gpu
@pytest.mark.parametrize("rung", [r for r in hb.RUNGS if r >= "05"])
@pytest.mark.parametrize("b, hq, hkv, s, d, causal, dtype", [(1, 4, 2, 203, 128, False, "bfloat16"),
                                                             (2, 2, 1, 300, 64, True, "float16")])
def test_gpu_every_stage_wait_holds_for_late_copies(load_race, b, hq, hkv, s, d, causal, dtype, rung):
    """Every step's copies held back (CONFIG's LOAD_RACE): rung 05 issues them just before the step instead of a step
    ahead, the producers of rungs 06-12 wait ~20000 cycles before each stage. A consumer that waits for its stage at
    the wrong phase then reads Q, dO (or rung 08's K, V) before they land, on every launch; with the copies on time,
    the previous step's work hides such a wait. Up to ten steps a block, so each stage is reused."""
    _check_against_float64_rule(b, hq, hkv, s, d, causal, dtype, rung)
    assert hb.hang_report() is None


def _check_against_float64_rule(b, hq, hkv, s, d, causal, dtype, rung):
    import torch

    q, k, v, do = inputs(b, hq, hkv, s, s, d, dtype, 500 + s + d + hq, "cuda")
    o, lse, rdq, rdk, rdv = exact_reference(q, k, v, do, causal)
    o = o.to(q.dtype).contiguous()
    lse = lse.float().contiguous()
    outs = (check.guarded((b, hq, s, d), dtype, q), check.guarded((b, hkv, s, d), dtype, q),
            check.guarded((b, hkv, s, d), dtype, q))
    got = hb.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal, out=outs, rung=rung)
    torch.cuda.synchronize()
    assert all(g is x for g, x in zip(got, outs)), "the gradients must be written into out"
    for g, name in zip(got, ("dq", "dk", "dv")):
        damage = check.guard_damage(g)
        assert not damage, f"{name}: {damage}"
    peer = peer_grads(q, k, v, do, causal)
    what = f"rung {rung} B{b} Hq{hq} Hkv{hkv} S{s} D{d} causal={causal}"
    within_peer_rule(got[0], peer[1], rdq, 3, dtype, f"{what} dq")
    within_peer_rule(got[1], peer[2], rdk, 3, dtype, f"{what} dk")
    within_peer_rule(got[2], peer[3], rdv, 3, dtype, f"{what} dv")


@gpu
@hopper_gpu
@pytest.mark.parametrize("rung", hb.RUNGS)
def test_gpu_backward_matches_triton_backward_and_fresh_outputs(rung):
    """The Hopper backward beside the lab's Triton one on the Hopper forward's own O and LSE (the real pipeline),
    outputs allocated by the wrapper."""
    import torch

    from phase4_optimization.lab06_attention.flash import flash_attn_bwd

    q, k, v, do = inputs(2, 4, 2, 333, 333, 128, "bfloat16", 77, "cuda")
    o, lse = hp.flash_attn_hopper(q, k, v, True)
    got = hb.flash_attn_bwd_hopper(do, q, k, v, o, lse, True, rung=rung)
    ref = flash_attn_bwd(do, q, k, v, o, lse, True)
    torch.cuda.synchronize()
    for g, r, name in zip(got, ref, ("dq", "dk", "dv")):
        assert tuple(g.shape) == tuple(r.shape) and g.dtype == r.dtype, name
        err = (g.double() - r.double()).abs().max().item()
        assert np.isfinite(err) and err <= 0.05 * max(1.0, r.double().abs().max().item()), f"{name}: {err:.3e}"


@gpu
@hopper_gpu
def test_gpu_refuses_misshapen_backward_arguments():
    import torch

    q = torch.zeros((1, 4, 8, 64), dtype=torch.bfloat16, device="cuda")
    k = torch.zeros((1, 2, 8, 64), dtype=torch.bfloat16, device="cuda")
    lse = torch.zeros((1, 4, 8), dtype=torch.float32, device="cuda")
    with pytest.raises(ValueError, match="do: expected shape"):
        hb.flash_attn_bwd_hopper(q[:, :2], q, k, k, q, lse)
    with pytest.raises(ValueError, match="o: expected shape"):
        hb.flash_attn_bwd_hopper(q, q, k, k, q[:, :, :4], lse)
    with pytest.raises(ValueError, match="lse: expected shape"):
        hb.flash_attn_bwd_hopper(q, q, k, k, q, lse[:, :2])
    with pytest.raises(TypeError, match="lse: dtype"):
        hb.flash_attn_bwd_hopper(q, q, k, k, q, lse.double())
    with pytest.raises(ValueError, match=r"out\[1\] \(dk\): expected shape"):
        hb.flash_attn_bwd_hopper(q, q, k, k, q, lse, out=(None, q, None))
    with pytest.raises(ValueError, match="out: expected a tuple"):
        hb.flash_attn_bwd_hopper(q, q, k, k, q, lse, out=q)
    odd = torch.zeros((1 * 4 * 8 * 64 + 2,), dtype=torch.bfloat16, device="cuda")[2:].view(1, 4, 8, 64)
    with pytest.raises(ValueError, match=r"out\[0\] \(dq\): rung 11 stores 16-byte vectors"):
        hb.flash_attn_bwd_hopper(q, q, k, k, q, lse, out=(odd, None, None), rung="11")
