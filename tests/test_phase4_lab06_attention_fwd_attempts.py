"""Lab 4.6 (attention), the Triton forward's attempts at the Hopper gap to cuDNN (attn_fwd_kernel's switches, timed by
cases.FWD_CANDIDATES): TMA (K and V through TMA tensor descriptors built on the device), PIPE (the unmasked key
loop software-pipelined by hand: S of the next tile issued before the softmax of this one) and WS (Triton's warp
specialization of the key loop). Each must give the same answer as the plain kernel on every shape the forward takes.

CPU tier: the interpreter's tiles (32 x 16) against the float64 reference with poisoned outputs in guard bands, and
bit for bit against the plain kernel (the switches change where data comes from and when the scores are issued, not
the arithmetic); the GPU tiles compiled ahead of time for sm_90 (no spills, shared memory within a block's 227 KiB,
no cp.async left where TMA loads the tiles). GPU tier: the GPU tiles at realistic and ragged shapes, and a K, V whose
alignment no TMA descriptor can take (the wrapper falls back to pointer loads)."""
import numpy as np
import pytest

from common import arrays, check, lab
from phase4_optimization.lab06_attention import bench as attb
from phase4_optimization.lab06_attention import lab as att

gpu = pytest.mark.gpu
interpreter_only = pytest.mark.cpu_only

SMALL = {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1}
SWITCHES = [{"TMA": True}, {"PIPE": True}, {"TMA": True, "PIPE": True}, {"WS": True}]
ATTEMPTS = [c for c in attb.FWD_CANDIDATES[128] if c.get("TMA") or c.get("PIPE") or c.get("WS")]


def _qkv(b, hq, hkv, sq, sk, d, dtype, seed):
    import torch

    rng = check.rng(seed)
    dt = getattr(torch, dtype)
    where = lab.where()

    def one(h, s):
        return torch.from_numpy(rng.standard_normal((b, h, s, d)).astype(np.float32)).to(device=where, dtype=dt)

    q = one(hq, sq)
    q.view(-1)[:: max(q.numel() // 3, 1)] = 4.0          # a few large scores: late rescales of the running maximum
    return q, one(hkv, sk), one(hkv, sk)


def _forward(q, k, v, causal, cfg, dtype):
    b, hq, sq, d = (int(n) for n in q.shape)
    o, lse = check.guarded((b, hq, sq, d), dtype, q), check.guarded((b, hq, sq), "float32", q)
    got = att.flash_attn_fwd(q, k, v, causal, out=(o, lse), config=cfg)
    assert got[0] is o and got[1] is lse
    for x, n in ((o, "o"), (lse, "lse")):
        damage = check.guard_damage(x)
        assert not damage, f"{cfg} {n}: {damage}"
    return o, lse


def _check_against_reference(q, k, v, causal, cfg, dtype, what):
    o, lse = _forward(q, k, v, causal, cfg, dtype)
    ref_o, ref_lse = att.forward_reference(q, k, v, causal)
    b, hq, sq, d = (int(n) for n in q.shape)
    tol = att.tolerance((b, hq, int(k.shape[2]), d, causal), dtype)
    check.assert_close(o, ref_o, dtype, tol, what=f"{what} o")
    check.assert_close(lse, ref_lse, "float32", tol, what=f"{what} lse")
    return o, lse


# (B, Hq, Hkv, Sq, Sk, D): one query; one tile; ragged Sk; grouped-query with Sk > Sq and Sq > Sk (bottom-right causal
# shifts that cross tile edges); a padded head dim (80 in a 128-wide tile: the descriptor's box is wider than the row)
SHAPES = [(1, 2, 2, 1, 19, 64), (1, 2, 2, 32, 32, 64), (2, 2, 1, 45, 70, 64), (1, 4, 2, 70, 45, 32),
          (1, 2, 1, 37, 53, 80)]


@interpreter_only
@pytest.mark.parametrize("switch", SWITCHES, ids=lambda s: "+".join(s))
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_attempts_match_reference_and_plain_kernel_in_interpreter(shape, causal, switch):
    dtype = "float16" if sum(shape) % 2 else "bfloat16"
    q, k, v = _qkv(*shape, dtype, seed=500 + sum(shape) + int(causal))
    what = f"{shape} causal={causal} {switch}"
    o, lse = _check_against_reference(q, k, v, causal, dict(SMALL, **switch), dtype, what)
    o0, lse0 = _forward(q, k, v, causal, dict(SMALL), dtype)
    assert np.array_equal(arrays.to_numpy(o), arrays.to_numpy(o0)), f"{what}: o differs from the plain kernel's"
    assert np.array_equal(arrays.to_numpy(lse), arrays.to_numpy(lse0)), f"{what}: lse differs from the plain kernel's"


@interpreter_only
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("cfg", ATTEMPTS, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_attempt_tiles_compile_for_sm90_without_spills(cfg, causal):
    r = attb.compile_summary(attb.aot_kernel("fwd", 128, causal, cc=90, cfg=cfg))
    assert r["wgmma"] > 0 and r["local B"] == 0 and r["shared B"] <= 227 * 1024, r
    if cfg.get("TMA"):
        assert r["cp.async"] == 0, f"{cfg}: K and V come through TMA, yet the kernel still has cp.async: {r}"


def test_attempts_are_in_the_tuner():
    """The tuner (bench.tune_configs over FWD_CANDIDATES) is where an attempt is timed and, if it wins, recorded:
    every switch the kernel has must be among the candidates."""
    keys = {k for c in ATTEMPTS for k in c if k in ("TMA", "PIPE", "WS")}
    assert keys == {"TMA", "PIPE", "WS"}, keys


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("cfg", ATTEMPTS, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
@pytest.mark.parametrize("b, hq, hkv, sq, sk, causal", [(1, 4, 4, 1000, 1000, False), (2, 4, 2, 383, 517, True),
                                                        (1, 2, 1, 517, 383, True), (1, 2, 2, 1, 129, False)])
def test_gpu_attempts_at_their_tiles(cfg, b, hq, hkv, sq, sk, causal):
    for dtype in ("bfloat16", "float16"):
        q, k, v = _qkv(b, hq, hkv, sq, sk, 128, dtype, seed=900 + sq + sk)
        what = f"B{b} Hq{hq} Hkv{hkv} Sq{sq} Sk{sk} causal={causal} {dtype} {cfg}"
        o, lse = _check_against_reference(q, k, v, causal, cfg, dtype, what)
        o0, lse0 = _forward(q, k, v, causal, {k_: v_ for k_, v_ in cfg.items() if k_ not in ("TMA", "PIPE", "WS")},
                            dtype)
        assert bool((o == o0).all()) and bool((lse == lse0).all()), f"{what}: differs from the plain kernel's"


@gpu
def test_gpu_tma_attempt_falls_back_on_misaligned_kv():
    """K and V one element into their buffers: no TMA descriptor can start there, so the forward must take its
    pointer loads (fwd_tma_ok says so) and still be right."""
    import torch

    q, k, v = _qkv(1, 2, 2, 77, 77, 128, "bfloat16", seed=77)
    k2, v2 = (torch.empty(t.numel() + 1, device=t.device, dtype=t.dtype)[1:].view(t.shape) for t in (k, v))
    k2.copy_(k)
    v2.copy_(v)
    assert att.fwd_tma_ok(k, v) and not att.fwd_tma_ok(k2, v2)
    cfg = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": True}
    _check_against_reference(q, k2, v2, True, cfg, "bfloat16", "misaligned K, V with TMA requested")
