"""Lab 4.6, the Hopper attention forward on an sm_90 GPU (marked gpu; the CPU tier is test_phase4_lab06_attention_hopper
.py): O and LSE against float64 at awkward sizes for every rung, outputs poisoned first, the V K-major fallback, the
other ring depth, grouped-query heads, strided views, the persistent rungs' walk over many tiles, prepared launches,
fp16 through CuPy, the lab's own check cases through common.lab.run_variant, bad inputs refused by name, and the
--check CLI. A file of its own so that pytest-xdist's loadfile runs it beside the CPU tier's compiles.
"""
import numpy as np
import pytest

from common import check, device
from common import lab as common_lab
from phase4_optimization.lab06_attention import hopper as hp
from phase4_optimization.lab06_attention import hopper_check as hc
from phase4_optimization.lab06_attention import lab as att


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier (sm_90 only)
# ---------------------------------------------------------------------------------------------------------------------
def _need_hopper():
    why = hp.unavailable_reason()
    if why:
        pytest.skip(why)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(hp.KERNELS))
@pytest.mark.parametrize("size,dtype", hc.check_cases(), ids=lambda x: str(x).replace(" ", ""))
def test_gpu_matches_float64(size, dtype, kernel):
    _need_hopper()
    ok, lines = hc.check_case(size, dtype, seed=sum(size[:5]), kernel=kernel)
    assert ok, "\n".join(lines)


@pytest.mark.gpu
@pytest.mark.parametrize("size,dtype", [((1, 2, 2, 129, 128, False), "bfloat16"), ((2, 1, 1, 300, 64, True), "float16"),
                                        ((1, 4, 2, 17, 128, True), "bfloat16")])
@pytest.mark.parametrize("kernel", sorted(hp.KERNELS))
def test_gpu_v_kmajor_fallback(size, dtype, kernel):
    _need_hopper()
    ok, lines = hc.check_case(size, dtype, v_kmajor=True, seed=7, kernel=kernel)
    assert ok, "\n".join(lines)


@pytest.mark.gpu
@pytest.mark.parametrize("kernel,stages", [(k, s) for k in sorted(hp.KERNELS) for s in hp.STAGE_CHOICES
                                           if s != hp.DEFAULT_STAGES[k]])
@pytest.mark.parametrize("size,dtype", [((1, 2, 2, 1, 128, False), "bfloat16"), ((1, 2, 1, 300, 128, True), "float16"),
                                        ((2, 1, 1, 1000, 64, False), "bfloat16"), ((1, 2, 2, 385, 128, False),
                                                                                   "bfloat16")])
def test_gpu_other_ring_depth(size, dtype, kernel, stages):
    """Each rung with the ring depth it does not default to: the parity arithmetic for 3 stages (S = 385: 4 tiles,
    the ring wraps once) and 2 (rung 05)."""
    _need_hopper()
    ok, lines = hc.check_case(size, dtype, seed=3, kernel=kernel, stages=stages)
    assert ok, "\n".join(lines)


@pytest.mark.gpu
@pytest.mark.parametrize("case", att.CHECK_CASES, ids=lambda c: str(c).replace(" ", ""))
def test_gpu_lab_check_cases_as_a_variant(case):
    """The lab's own check cases (strided views for odd S, the Triton backward from this forward's O and LSE)."""
    _need_hopper()
    size, dtype = case
    c = common_lab.run_variant(att, att.HOPPER_VARIANT, size, dtype, check.rng(11))
    assert c.ok, c.message


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", sorted(hp.KERNELS))
@pytest.mark.parametrize("b,s,h,d,causal", [(2, 300, 3, 128, True), (1, 129, 2, 64, False), (1, 1, 1, 128, True)])
def test_gpu_strided_qkv_views_and_output(kernel, b, s, h, d, causal):
    """Lab 4.7's layout: q, k, v as views into one (B, S, 3, H, D) buffer, O written through a (B, H, S, D) view of a
    (B, S, H, D) buffer poisoned first - no copies, and every element of that buffer written, against float64."""
    _need_hopper()
    import torch

    g = torch.Generator(device="cuda").manual_seed(s + d)
    qkv = torch.randn((b, s, 3, h, d), generator=g, device="cuda").to(torch.bfloat16)
    q, k, v = (qkv[:, :, i].permute(0, 2, 1, 3) for i in range(3))
    obuf = torch.full((b, s, h, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    lse = torch.full((b, h, s), float("nan"), device="cuda")
    hp.flash_attn_hopper(q, k, v, causal=causal, out=obuf.permute(0, 2, 1, 3), lse=lse, kernel=kernel)
    torch.cuda.synchronize()
    assert not torch.isnan(obuf).any(), "unwritten output elements"
    q64, k64, v64 = (x.float().cpu().numpy().astype(np.float64) for x in (q, k, v))
    o_ref, lse_ref = att.forward_reference(q64, k64, v64, causal)
    c = check.compare(obuf.permute(0, 2, 1, 3).float().cpu().numpy(), o_ref, "bfloat16",
                      att.tolerance((b, h, s, d, causal), "bfloat16"))
    assert c.ok, c.message
    c = check.compare(lse.cpu().numpy(), lse_ref, "float32", hc.LSE_TOL)
    assert c.ok, c.message


def test_persistent_grid():
    assert hp.persistent_grid(5, 132) == 5 and hp.persistent_grid(4096, 132) == 132 and hp.persistent_grid(0, 8) == 1
    assert hp.PERSISTENT == ("07", "08") and hp.DEFAULT_STAGES["07"] == hp.DEFAULT_STAGES["08"] == 3


@pytest.mark.gpu
@pytest.mark.parametrize("kernel", hp.PERSISTENT)
@pytest.mark.parametrize("blocks", [1, 3, 7])
@pytest.mark.parametrize("size,dtype", [((2, 3, 3, 300, 128, False), "bfloat16"),
                                        ((2, 4, 2, 385, 128, True), "float16"),
                                        ((1, 3, 1, 129, 64, True), "bfloat16"), ((3, 2, 2, 1, 64, False), "float16")])
def test_gpu_persistent_blocks_walk_many_tiles(size, dtype, blocks, kernel):
    """Rungs 07 and 08 with the grid capped (blocks=): each block walks several (query tile, head) tiles, so the K/V
    ring runs on across tiles, Q's buffer is handed back (q_empty) between them and (08) the consumers' turns run on
    tile after tile - what the small check cases, one tile per block on a 132-SM GPU, never exercise. Outputs
    poisoned first, against float64."""
    _need_hopper()
    import torch

    b, hq, hkv, s, d, causal = size
    q, k, v, (q64, k64, v64) = hc.make_case(size, dtype, seed=blocks + s)
    o = check.poisoned((b, hq, s, d), dtype, q)
    lse = check.poisoned((b, hq, s), "float32", q)
    hp.flash_attn_hopper(q, k, v, causal=causal, out=o, lse=lse, kernel=kernel, blocks=blocks)
    torch.cuda.synchronize()
    assert hp.hang_report() is None
    o_ref, lse_ref = att.forward_reference(q64, k64, v64, causal)
    c = check.compare(o.float().cpu().numpy(), o_ref, dtype, att.tolerance((b, hq, s, d, causal), dtype))
    assert c.ok, c.message
    c = check.compare(lse.cpu().numpy(), lse_ref, "float32", hc.LSE_TOL)
    assert c.ok, c.message


@pytest.mark.gpu
@pytest.mark.parametrize("v_kmajor", [False, True])
@pytest.mark.parametrize("kernel", [hp.DEFAULT_KERNEL, "07"])
def test_gpu_prepared_launch_follows_new_contents(kernel, v_kmajor):
    """prepare_hopper checks and encodes once; each call launches on whatever q, k, v hold then (the V K-major
    fallback refills its transposed copy): three rounds of new contents written in place, each checked against
    float64 with the outputs poisoned first."""
    _need_hopper()
    import torch

    size, dtype = (2, 4, 2, 300, 128, True), "bfloat16"
    b, hq, hkv, s, d, causal = size
    q, k, v, _ = hc.make_case(size, dtype, seed=0)
    o = check.poisoned((b, hq, s, d), dtype, q)
    lse = check.poisoned((b, hq, s), "float32", q)
    launch = hp.prepare_hopper(q, k, v, causal=causal, out=o, lse=lse, kernel=kernel, v_kmajor=v_kmajor)
    for seed in (1, 2, 3):
        q2, k2, v2, (q64, k64, v64) = hc.make_case(size, dtype, seed=seed)
        for dst, src in ((q, q2), (k, k2), (v, v2)):
            dst.copy_(src)
        o.copy_(check.poisoned(tuple(o.shape), dtype, q))
        lse.fill_(float("nan"))
        got_o, got_lse = launch()
        assert got_o is o and got_lse is lse
        torch.cuda.synchronize()
        o_ref, lse_ref = att.forward_reference(q64, k64, v64, causal)
        c = check.compare(o.float().cpu().numpy(), o_ref, dtype, att.tolerance((b, hq, s, d, causal), dtype))
        assert c.ok, f"round {seed}: {c.message}"
        assert check.compare(lse.cpu().numpy(), lse_ref, "float32", hc.LSE_TOL).ok, f"round {seed}"


@pytest.mark.gpu
def test_gpu_fp16_cupy_and_sm_scale():
    _need_hopper()
    import cupy
    import torch

    q, k, v, (q64, k64, v64) = hc.make_case((1, 2, 2, 129, 64, True), "float16", seed=5)
    qc, kc, vc = (cupy.from_dlpack(x) for x in (q, k, v))
    o, lse = hp.flash_attn_hopper(qc, kc, vc, causal=True, sm_scale=0.3)
    torch.cuda.synchronize()
    o_ref, lse_ref = att.forward_reference(q64, k64, v64, True, sm_scale=0.3)
    assert check.compare(o, o_ref, "float16", att.tolerance((1, 2, 129, 64, True), "float16")).ok
    assert check.compare(lse, lse_ref, "float32", hc.LSE_TOL).ok


@pytest.mark.gpu
def test_gpu_bad_inputs_refused_by_name():
    _need_hopper()
    import torch

    q = torch.zeros((1, 2, 64, 128), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(TypeError, match="q: dtype float32"):
        hp.flash_attn_hopper(q.float(), q, q)
    with pytest.raises(TypeError, match="q, k, v: dtypes must match"):
        hp.flash_attn_hopper(q, q.half(), q.half())
    flat = torch.zeros(q.numel() + 8, dtype=torch.bfloat16, device="cuda")
    mis = flat[1:1 + q.numel()].view(q.shape)
    with pytest.raises(ValueError, match="k: the data must start 16-byte aligned"):
        hp.flash_attn_hopper(q, mis, q)
    with pytest.raises(ValueError, match="q: head dimension 32"):
        hp.flash_attn_hopper(*(torch.zeros((1, 2, 64, 32), dtype=torch.bfloat16, device="cuda"),) * 3)
    with pytest.raises(ValueError, match="out: expected shape"):
        hp.flash_attn_hopper(q, q, q, out=q[:, :1])
    with pytest.raises(ValueError, match="lse: expected shape"):
        hp.flash_attn_hopper(q, q, q, lse=torch.zeros((1, 2, 63), device="cuda"))
    with pytest.raises(ValueError, match="k: Sk = 32"):
        hp.flash_attn_hopper(q, q[:, :, :32], q[:, :, :32])


@pytest.mark.gpu
def test_gpu_check_mode_quick(capsys):
    _need_hopper()
    assert hc.run_check(quick=True, kernels=tuple(hp.KERNELS)) == 0, capsys.readouterr().out


def test_size_one_dims_and_out_strides():
    """A dimension of size 1 is never stepped along, so its stride does not count (torch may report an odd one for a
    contiguous tensor: refusing it would refuse a plain tensor); tma_ready leaves a TMA-ready view alone and copies
    anything else; an out= with a zero stride (an expanded view: blocks would store to the same elements) is refused."""
    torch = pytest.importorskip("torch")
    odd = torch.empty_strided((1, 2, 8, 64), (1, 512, 64, 1), dtype=torch.bfloat16)
    assert hp._strides(odd) == (64, 512, 64, 1) and hp._tma_strides_ok(odd)
    view = torch.zeros((1, 16, 4, 128), dtype=torch.bfloat16).transpose(1, 2)
    assert hp.tma_ready(view) is view or not hp.arrays.aligned(view, 16)
    bad = torch.zeros((1, 4, 16, 132), dtype=torch.bfloat16)[..., :128]
    fixed = hp.tma_ready(bad)
    assert fixed is not bad and hp._tma_strides_ok(fixed) and torch.equal(fixed, bad)
    if not device.has_gpu() or hp.unavailable_reason():
        return
    q = torch.zeros((1, 2, 64, 128), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="out: .* positive and even"):
        hp.flash_attn_hopper(q, q, q, out=torch.zeros((1, 1, 64, 128), dtype=torch.bfloat16,
                                                       device="cuda").expand(1, 2, 64, 128))
