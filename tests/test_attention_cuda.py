"""Lab 4.6, CUDA C flash-attention forward (phase4_optimization/attention_cuda.py + lab06_attention.cu).

CPU tier
  * NVRTC: both kernels compile for sm_80 and sm_90 at D = 64 and 128 with zero spills; HMMA (mma.sync) and LDSM
    (ldmatrix) in the SASS, LDGSTS (cp.async) in rung 02 only; the fp16 build and the 8-warp shape compile too;
  * a float64 NumPy model of the kernel's tiling (64-row Q blocks, 64-key tiles zero-padded past S, the same masks,
    skipped tiles and update order) against the reference on awkward S - and a model with the wrong mask fails;
  * one warp modelled lane by lane with the .cu's address formulas through the PTX semantics of ldmatrix and
    mma.m16n8k16: S = Q K^T and O = P V come out right, the swizzle makes every ldmatrix conflict-free;
  * argument validation before any launch; the mismatch-pattern printer; main(["--quick"]).
GPU tier: every rung against float64 on S in {1, 17, 127, 128, 129, 1000, 4097}, D 64/128, causal or not, into
poisoned outputs; fp16; out= and lse= arrays; the alternative occupancy shapes.
"""
import numpy as np
import pytest
import torch

from common import check, cuda, device
from phase4_optimization import attention_cuda as ac

gpu = pytest.mark.gpu


# ---------------------------------------------------------------------------------------------------------------------
# Compiler facts
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("d", [64, 128])
def test_kernels_compile_without_spills(arch, d):
    rep = cuda.compile_report(ac.CU, arch, defines=ac.defines(d))
    assert set(ac.KERNELS.values()) <= set(rep.kernels)
    for name in ac.KERNELS.values():
        k = rep[name]
        assert k.registers > 0 and k.spills == 0, f"{name} {arch} D={d}: {k.registers} regs, {k.spills} B spilled"
        assert k.registers <= 65536 // 128 // 2, f"{name}: {k.registers} registers do not fit 2 CTAs of 4 warps"
    if arch == "sm_90" and d == 128:   # the register cap that lets 3 CTAs (12 warps) share an H200 SM
        assert rep[ac.KERNELS["02"]].registers <= 168
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with (it ships with the triton wheel)")
    c1, c2 = rep[ac.KERNELS["01"]].sass_counts, rep[ac.KERNELS["02"]].sass_counts
    steps = (d // 16) * (ac.BLOCK_N // 16) * 2 * 2  # mma per warp and K/V tile: Q K^T and P V, two n8 tiles per ldmatrix
    for c in (c1, c2):
        assert c.get("HMMA", 0) >= steps
        assert c.get("LDSM", 0) >= steps // 2
        assert c.get("LDL", 0) == 0 and c.get("STL", 0) == 0
    assert c1.get("LDGSTS", 0) == 0 and c2.get("LDGSTS", 0) > 0


def test_fp16_and_8_warp_builds_compile_without_spills():
    rep = cuda.compile_report(ac.CU, "sm_90", defines=ac.defines(128, "float16"))
    assert all(rep[n].spills == 0 for n in ac.KERNELS.values())
    assert "f16.f16" in rep.ptx and "bf16" not in rep.ptx.split("mma.sync")[1][:40]
    rep8 = cuda.compile_report(ac.CU, "sm_90", defines=ac.defines(128, nwarps=8))
    assert all(rep8[n].spills == 0 for n in ac.KERNELS.values())


def test_shared_memory_fits():
    for d in ac.SUPPORTED_D:
        assert ac.smem_bytes("02", d) <= device.arch_info("sm_80").smem_per_block_optin
        # Q (16 NWARPS rows) is staged in one K + V tile (2 BLOCK_N rows)
        assert 16 * 8 * d * 2 <= ac.smem_bytes("01", d)
    assert 3 * (ac.smem_bytes("02", 128) + 1024) <= device.arch_info("sm_90").smem_per_sm


# ---------------------------------------------------------------------------------------------------------------------
# The algorithm, without a GPU
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("s", [1, 17, 63, 64, 65, 129, 200])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_model_matches_reference(s, causal):
    g = check.rng(s + 1000 * causal)
    d = 64 if s % 2 else 128
    q, k, v = (g.standard_normal((1, 2, s, d)) * (1 + 2 * i) for i in range(3))
    o_ref, l_ref = ac.reference(q, k, v, causal)
    o, l_ = ac.tiled_model(q, k, v, causal, round_p=False)   # exact arithmetic: the tiling changes nothing
    np.testing.assert_allclose(o, o_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(l_, l_ref, rtol=1e-12)
    o, _ = ac.tiled_model(q, k, v, causal, sm_scale=0.3)      # P in bf16, as the kernel: within the bf16 tolerance
    check.assert_close(o, ac.reference(q, k, v, causal, sm_scale=0.3)[0], "bfloat16", what=f"S={s}")
    # another block shape (8 warps: 128-row Q blocks) must agree too
    o2, _ = ac.tiled_model(q, k, v, causal, block_m=128, round_p=False)
    np.testing.assert_allclose(o2, o_ref, rtol=1e-10, atol=1e-12)


def test_tiled_model_check_can_fail():
    g = check.rng(7)
    q, k, v = (g.standard_normal((1, 1, 100, 64)) for _ in range(3))
    o_ref, _ = ac.reference(q, k, v, causal=True)
    o_wrong, _ = ac.tiled_model(q, k, v, causal=False)
    assert not check.compare(o_wrong, o_ref, "bfloat16").ok


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("swizzle", [False, True])
def test_warp_fragment_model(d, swizzle):
    stats = {}
    s_f, s_r, o_f, o_r = ac.warp_fragment_model(d, swizzle, nwarps=8 if swizzle else 4, warp=3, stats=stats)
    np.testing.assert_allclose(s_f, s_r, atol=1e-10)
    np.testing.assert_allclose(o_f, o_r, atol=1e-9)
    assert stats["ways"] == (1 if swizzle else 8)


def test_round_bf16():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 0.1, 0.0])
    want = torch.tensor(x, dtype=torch.float64).to(torch.bfloat16).double().numpy()
    np.testing.assert_array_equal(ac.round_bf16(x), want)


# ---------------------------------------------------------------------------------------------------------------------
# Validation (before any launch), diagnosis, CLI
# ---------------------------------------------------------------------------------------------------------------------
def _qkv(shape=(1, 2, 8, 64), dtype=torch.bfloat16):
    return tuple(torch.randn(shape).to(dtype) for _ in range(3))


def test_validation_errors():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="float32"):
        ac.flash_attn_cuda(*(x.float() for x in (q, k, v)))
    with pytest.raises(TypeError, match="dtypes must match"):
        ac.flash_attn_cuda(q, k.half(), v)
    with pytest.raises(TypeError, match="numpy"):
        ac.flash_attn_cuda(np.zeros((1, 2, 8, 64), np.float16), k, v)
    with pytest.raises(ValueError, match="4-D"):
        ac.flash_attn_cuda(q[0], k[0], v[0])
    with pytest.raises(ValueError, match="shapes must match"):
        ac.flash_attn_cuda(q, k[:, :, :4], v)
    with pytest.raises(ValueError, match="head dimension 96"):
        ac.flash_attn_cuda(*_qkv((1, 2, 8, 96)))
    with pytest.raises(ValueError, match="empty"):
        ac.flash_attn_cuda(*_qkv((1, 2, 0, 64)))
    nc = torch.randn(1, 8, 2, 64).to(torch.bfloat16).transpose(1, 2)
    with pytest.raises(ValueError, match="contiguous"):
        ac.flash_attn_cuda(nc, nc, nc)
    for bad in (0.0, -1.0, float("nan"), float("inf"), "x"):
        with pytest.raises(ValueError, match="sm_scale"):
            ac.flash_attn_cuda(q, k, v, sm_scale=bad)
    with pytest.raises(TypeError, match="causal"):
        ac.flash_attn_cuda(q, k, v, causal="yes")
    with pytest.raises(ValueError, match="kernel"):
        ac.flash_attn_cuda(q, k, v, kernel="03")
    with pytest.raises(ValueError, match="nwarps"):
        ac.flash_attn_cuda(q, k, v, nwarps=2)
    with pytest.raises(TypeError, match="GPU"):          # everything else is valid: host tensors are the problem
        ac.flash_attn_cuda(q, k, v)


def test_unavailable_reason():
    r = ac.unavailable_reason()
    if device.has_gpu():
        assert r is None or "sm_80" in r
    else:
        assert isinstance(r, str) and "GPU" in r


def test_mismatch_pattern_names_the_broken_rows_and_columns():
    g = check.rng(3)
    ref = g.standard_normal((1, 3, 40, 64))
    out = ref.copy()
    out[0, 1, 8:16, 1::2] += 1.0        # odd columns of rows 8-15 of head 1: a typical fragment mix-up
    out[0, 2, 33, 5] = np.nan
    text = "\n".join(ac.mismatch_pattern(out, ref))
    assert "b0 h1" in text and "b0 h0" not in text
    assert "rows 8-15" in text and "cols mod 16: 1, 3, 5, 7, 9, 11, 13, 15" in text
    assert "b0 h2: 1 wrong; rows 33" in text and "1 non-finite" in text


def test_probe_reports_permutations():
    def attention(q, k, v, sm_scale, swap_keys=False, swap_cols=False):
        sc = (q.double() @ k.double().transpose(-1, -2)) * sm_scale
        if swap_keys:                      # rows 8-15 see the keys of rows 0-7 (an A/B fragment mix-up)
            sc[..., 8:16, :] = sc[..., 0:8, :].clone()
        o = torch.softmax(sc, -1) @ v.double()
        if swap_cols:                      # output columns 2 and 3 exchanged (a C-fragment mix-up)
            o[..., [2, 3]] = o[..., [3, 2]]
        return o.to(q.dtype), None

    good = "\n".join(ac.probe("02", 64, fn=attention, dev="cpu"))
    assert "every row took its own key" in good and "every column in place" in good
    bad = "\n".join(ac.probe("02", 64, fn=lambda *a, **kw: attention(*a, **kw, swap_keys=True), dev="cpu"))
    assert "8 rows took other keys" in bad and "row 9 took keys [1]" in bad
    bad = "\n".join(ac.probe("02", 128, fn=lambda *a, **kw: attention(*a, **kw, swap_cols=True), dev="cpu"))
    assert "2 columns hold others" in bad and "col 2 holds [3]" in bad


def test_main_quick():
    assert ac.main(["--quick", "--no-json", "--no-plot"]) == 0


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("kernel", ["01", "02"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("s", ac.CHECK_S)
def test_gpu_matches_float64(kernel, d, causal, s):
    row = ac.run_check(kernel, s, d, causal)
    assert row["ok"], f"{row['o']} / lse {row['lse']} [seed {check.seed()}]"


@gpu
@pytest.mark.parametrize("kernel,nwarps,min_blocks", [c for c in ac.CONFIGS if c[1:] != (None, None)])
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_other_shapes(kernel, nwarps, min_blocks, causal):
    for s in (1, 129, 1000):
        row = ac.run_check(kernel, s, 128, causal, b=2, h=3, nwarps=nwarps, min_blocks=min_blocks)
        assert row["ok"], f"S={s}: {row['o']} / lse {row['lse']}"


@gpu
def test_gpu_fp16():
    for causal in (False, True):
        row = ac.run_check("02", 257, 128, causal, dtype="float16")
        assert row["ok"], row


@gpu
def test_gpu_out_and_lse_arrays_are_filled():
    q, k, v = ac.make_inputs(2, 3, 200, 64)
    out = torch.full_like(q, float("nan"))
    lse = torch.full((2, 3, 200), float("nan"), device="cuda")
    o, l_ = ac.flash_attn_cuda(q, k, v, True, 0.2, out, lse=lse)
    assert o is out and l_ is lse
    o_ref, l_ref = ac.reference(q, k, v, True, 0.2)
    check.assert_close(o, o_ref, "bfloat16")
    check.assert_close(l_, l_ref, "float32", ac.LSE_TOL)
    with pytest.raises(ValueError, match="out"):
        ac.flash_attn_cuda(q, k, v, out=torch.empty(2, 3, 200, 32, device="cuda", dtype=q.dtype))


@gpu
def test_gpu_matches_sdpa():
    import torch.nn.functional as F

    q, k, v = ac.make_inputs(2, 4, 333, 128)
    for causal in (False, True):
        o, _ = ac.flash_attn_cuda(q, k, v, causal)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
        diff = o.float() - ref
        # two bf16 computations: a few bf16 ulps apart at most (|o| <= ~4 here: 1 ulp = 2^-6)
        assert diff.abs().max().item() < 0.08 and (diff.norm() / ref.norm()).item() < 1e-2
