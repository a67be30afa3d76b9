"""Lab 4.6, the CUDA C flash-attention forward (kernels.cu; its wrapper flash_attn_cuda in cuda_rungs.py, its NumPy
models in models.py and its diagnosis in diagnosis.py, all reached here through lab.py and bench.py).

CPU tier
  * NVRTC: both kernels compile for sm_80 and sm_90 at D = 64 and 128 with zero spills; HMMA (mma.sync) and LDSM
    (ldmatrix) in the SASS, LDGSTS (cp.async) in rung 02 only; the fp16 build and the 8-warp shape compile too;
  * a float64 NumPy model of the kernel's tiling (64-row Q blocks, 64-key tiles zero-padded past S, the same masks,
    skipped tiles and update order) against the reference on awkward S - and a model with the wrong mask fails;
  * one warp modelled lane by lane with kernels.cu's address formulas through the PTX semantics of ldmatrix and
    mma.m16n8k16: S = Q K^T and O = P V come out right, the swizzle makes every ldmatrix conflict-free;
  * argument validation before any launch; the mismatch-pattern printer and the permutation probe.
GPU tier: every rung against float64 on S in {1, 17, 127, 128, 129, 1000, 4097}, D 64/128, causal or not, into
poisoned outputs, with the LSE to 1e-4; fp16; out= and lse= arrays; the alternative occupancy shapes; the
permutation probe on the real kernels. (Both rungs are also VARIANTS of the lab: tests/test_labs.py checks them on
the lab's CHECK_CASES, with the Triton backward run from their O and LSE.)
"""
import numpy as np
import pytest
import torch

from common import check, cuda, device
from phase4_optimization.lab06_attention import bench as attb
from phase4_optimization.lab06_attention import lab as att
from tests.helpers import lab_main

gpu = pytest.mark.gpu
CHECK_S = (1, 17, 127, 128, 129, 1000, 4097)
# (kernel, nwarps, min_blocks) of rung 02 other than its default: the occupancy shapes the benchmark times
OTHER_SHAPES = [c for c in attb.CUDA_CONFIGS if c[1:] != (None, None)]


def cuda_inputs(b, h, s, d, dtype="bfloat16", seed_offset=0):
    """Torch GPU tensors drawn from N(0, 1), with one head scaled up (sharper softmax, larger max subtraction)."""
    g = check.rng(seed_offset)
    x = g.standard_normal((3, b, h, s, d)).astype(np.float32)
    x[:2, :, -1] *= 3.0
    t = torch.from_numpy(x).to("cuda", dtype=getattr(torch, dtype))
    return t[0].contiguous(), t[1].contiguous(), t[2].contiguous()


def run_check(kernel, s, d, causal, b=1, h=2, dtype="bfloat16", nwarps=None, min_blocks=None) -> dict:
    """One rung (or shape) into NaN-poisoned outputs against float64: o to the dtype's tolerance, the LSE to 1e-4; on a
    failure the mismatch pattern is printed (which heads, rows mod 16, columns mod 16)."""
    q, k, v = cuda_inputs(b, h, s, d, dtype, seed_offset=s * 7 + d + causal)
    o = torch.full((b, h, s, d), float("nan"), device="cuda", dtype=q.dtype)
    lse = torch.full((b, h, s), float("nan"), device="cuda", dtype=torch.float32)
    att.flash_attn_cuda(q, k, v, causal=causal, out=o, lse=lse, kernel=kernel, nwarps=nwarps, min_blocks=min_blocks)
    torch.cuda.synchronize()
    o_ref, lse_ref = att.forward_reference(q, k, v, causal)
    c1 = check.compare(o, o_ref, dtype)
    c2 = check.compare(lse, lse_ref, "float32", attb.LSE_TOL)
    if not (c1.ok and c2.ok):
        for ln in attb.mismatch_pattern(o, o_ref, lse, lse_ref):
            print("   ", ln)
    return {"kernel": attb.config_name(kernel, nwarps, min_blocks), "o": c1.message, "lse": c2.message,
            "ok": bool(c1.ok and c2.ok)}


# ---------------------------------------------------------------------------------------------------------------------
# Compiler facts
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("d", [64, 128])
def test_kernels_compile_without_spills(arch, d):
    rep = cuda.compile_report(att.CU, arch, defines=att.defines(d, arch=arch))
    assert set(att.KERNELS.values()) <= set(rep.kernels)
    for name in att.KERNELS.values():
        k = rep[name]
        assert k.registers > 0 and k.spills == 0, f"{name} {arch} D={d}: {k.registers} regs, {k.spills} B spilled"
        assert k.registers <= 65536 // 128 // 2, f"{name}: {k.registers} registers do not fit 2 CTAs of 4 warps"
    if arch == "sm_90" and d == 128:   # the register cap that lets 3 CTAs (12 warps) share an sm_90 SM
        assert rep[att.KERNELS["02"]].registers <= 168
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with (it ships with the triton wheel)")
    c1, c2 = rep[att.KERNELS["01"]].sass_counts, rep[att.KERNELS["02"]].sass_counts
    # mma per warp and K/V tile: Q K^T and P V, two n8 tiles per ldmatrix
    steps = (d // 16) * (att.CUDA_BLOCK_N // 16) * 2 * 2
    for c in (c1, c2):
        assert c.get("HMMA", 0) >= steps
        assert c.get("LDSM", 0) >= steps // 2
        assert c.get("LDL", 0) == 0 and c.get("STL", 0) == 0
    assert c1.get("LDGSTS", 0) == 0 and c2.get("LDGSTS", 0) > 0


def test_fp16_and_8_warp_builds_compile_without_spills():
    rep = cuda.compile_report(att.CU, "sm_90", defines=att.defines(128, "float16", arch="sm_90"))
    assert all(rep[n].spills == 0 for n in att.KERNELS.values())
    assert "f16.f16" in rep.ptx and "bf16" not in rep.ptx.split("mma.sync")[1][:40]
    rep8 = cuda.compile_report(att.CU, "sm_90", defines=att.defines(128, nwarps=8, arch="sm_90"))
    assert all(rep8[n].spills == 0 for n in att.KERNELS.values())


def test_shared_memory_fits():
    for d in att.HEAD_DIMS:
        assert att.smem_bytes("02", d) <= device.arch_info("sm_80").smem_per_block_optin
        # Q (16 NWARPS rows) is staged in one K + V tile (2 BLOCK_N rows)
        assert 16 * 8 * d * 2 <= att.smem_bytes("01", d)
    assert 3 * (att.smem_bytes("02", 128) + 1024) <= device.arch_info("sm_90").smem_per_sm


# ---------------------------------------------------------------------------------------------------------------------
# The algorithm, without a GPU
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("s", [1, 17, 63, 64, 65, 129, 200])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_model_matches_reference(s, causal):
    g = check.rng(s + 1000 * causal)
    d = 64 if s % 2 else 128
    q, k, v = (g.standard_normal((1, 2, s, d)) * (1 + 2 * i) for i in range(3))
    o_ref, l_ref = att.forward_reference(q, k, v, causal)
    o, l_ = attb.tiled_model(q, k, v, causal, round_p=False)   # exact arithmetic: the tiling changes nothing
    np.testing.assert_allclose(o, o_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(l_, l_ref, rtol=1e-12)
    o, _ = attb.tiled_model(q, k, v, causal, sm_scale=0.3)      # P in bf16, as the kernel: within the bf16 tolerance
    check.assert_close(o, att.forward_reference(q, k, v, causal, sm_scale=0.3)[0], "bfloat16", what=f"S={s}")
    # another block shape (8 warps: 128-row Q blocks) must agree too
    o2, _ = attb.tiled_model(q, k, v, causal, block_m=128, round_p=False)
    np.testing.assert_allclose(o2, o_ref, rtol=1e-10, atol=1e-12)


def test_tiled_model_check_can_fail():
    g = check.rng(7)
    q, k, v = (g.standard_normal((1, 1, 100, 64)) for _ in range(3))
    o_ref, _ = att.forward_reference(q, k, v, causal=True)
    o_wrong, _ = attb.tiled_model(q, k, v, causal=False)
    assert not check.compare(o_wrong, o_ref, "bfloat16").ok


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("swizzle", [False, True])
def test_warp_fragment_model(d, swizzle):
    stats = {}
    s_f, s_r, o_f, o_r = attb.warp_fragment_model(d, swizzle, nwarps=8 if swizzle else 4, warp=3, stats=stats)
    np.testing.assert_allclose(s_f, s_r, atol=1e-10)
    np.testing.assert_allclose(o_f, o_r, atol=1e-9)
    assert stats["ways"] == (1 if swizzle else 8)


@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("warp", [0, 3])
def test_warp_fragment_model_two_row_tiles(d, warp):
    """Rung 02w: a warp's 32 rows as two m16 tiles sharing each K and V fragment, Q read per k16 step at its own
    rows; conflict-free like rung 02."""
    stats = {}
    s_f, s_r, o_f, o_r = attb.warp_fragment_model(d, True, nwarps=4, warp=warp, stats=stats, m_tiles=2)
    np.testing.assert_allclose(s_f, s_r, atol=1e-10)
    np.testing.assert_allclose(o_f, o_r, atol=1e-9)
    assert stats["ways"] == 1 and s_f.shape == (32, att.CUDA_WIDE_BLOCK_N)


def test_wide_rung_q_address_matches_the_kernel():
    """The model's Q address for two row tiles is the one kernels.cu's body builds (q_lane + mt 16 rows + lane_chunk
    + (kk >> 2) 128), and the wide rung's shape constants are the ones the host uses."""
    src = open(att.CU).read()
    assert "q_lane + mt * 16 * ROW_BYTES + lane_chunk<SW>(kk & 3, lane >> 4, lane & 7) +" in src
    assert "(kk >> 2) * 128);" in src
    assert "q_stage + (unsigned)((MT * warp) * 16 + (lane & 15)) * ROW_BYTES" in src
    assert "#define WIDE_BLOCK_N" not in src and att.defines(128)["WIDE_BLOCK_N"] == att.CUDA_WIDE_BLOCK_N
    assert att.smem_bytes("02w", 128) == 64 * 1024 and att.ROW_TILES["02w"] == 2


def test_round_bf16():
    x = np.array([1.0, 1.0 + 2**-8, 1.0 + 3 * 2**-8, 0.1, 0.0])
    want = torch.tensor(x, dtype=torch.float64).to(torch.bfloat16).double().numpy()
    np.testing.assert_array_equal(attb.round_bf16(x), want)


# ---------------------------------------------------------------------------------------------------------------------
# Validation (before any launch), diagnosis, CLI
# ---------------------------------------------------------------------------------------------------------------------
def _qkv(shape=(1, 2, 8, 64), dtype=torch.bfloat16):
    return tuple(torch.randn(shape).to(dtype) for _ in range(3))


def test_validation_errors():
    q, k, v = _qkv()
    with pytest.raises(TypeError, match="float32"):
        att.flash_attn_cuda(*(x.float() for x in (q, k, v)))
    with pytest.raises(TypeError, match="dtypes must match"):
        att.flash_attn_cuda(q, k.half(), v)
    with pytest.raises(TypeError, match="numpy"):
        att.flash_attn_cuda(np.zeros((1, 2, 8, 64), np.float16), k, v)
    with pytest.raises(ValueError, match="4-D"):
        att.flash_attn_cuda(q[0], k[0], v[0])
    with pytest.raises(ValueError, match="shapes must match"):
        att.flash_attn_cuda(q, k[:, :, :4], v)
    with pytest.raises(ValueError, match="head dimension 96"):
        att.flash_attn_cuda(*_qkv((1, 2, 8, 96)))
    with pytest.raises(ValueError, match="empty"):
        att.flash_attn_cuda(*_qkv((1, 2, 0, 64)))
    nc = torch.randn(1, 8, 2, 64).to(torch.bfloat16).transpose(1, 2)
    with pytest.raises(ValueError, match="contiguous"):
        att.flash_attn_cuda(nc, nc, nc)
    for bad in (0.0, -1.0, float("nan"), float("inf"), "x"):
        with pytest.raises(ValueError, match="sm_scale"):
            att.flash_attn_cuda(q, k, v, sm_scale=bad)
    with pytest.raises(TypeError, match="causal"):
        att.flash_attn_cuda(q, k, v, causal="yes")
    with pytest.raises(ValueError, match="kernel"):
        att.flash_attn_cuda(q, k, v, kernel="03")
    with pytest.raises(ValueError, match="nwarps"):
        att.flash_attn_cuda(q, k, v, nwarps=2)
    with pytest.raises(TypeError, match="GPU"):          # everything else is valid: host tensors are the problem
        att.flash_attn_cuda(q, k, v)


def test_unavailable_reason():
    r = att.unavailable_reason()
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
    text = "\n".join(attb.mismatch_pattern(out, ref))
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

    good = "\n".join(attb.probe("02", 64, fn=attention, dev="cpu"))
    assert "every row took its own key" in good and "every column in place" in good
    bad = "\n".join(attb.probe("02", 64, fn=lambda *a, **kw: attention(*a, **kw, swap_keys=True), dev="cpu"))
    assert "8 rows took other keys" in bad and "row 9 took keys [1]" in bad
    bad = "\n".join(attb.probe("02", 128, fn=lambda *a, **kw: attention(*a, **kw, swap_cols=True), dev="cpu"))
    assert "2 columns hold others" in bad and "col 2 holds [3]" in bad


def test_quick_run_models_the_kernel_and_shows_its_compile(capsys):
    """The lab's --quick run shows the CUDA C side too: the tiling model, the one-warp fragment model (8-way
    conflicts unswizzled, none swizzled) and the NVRTC table, all before any timing (--no-bench: on a GPU the quick
    benchmark is test_phase4_lab06_attention.py's test_cli_quick_exits_0, the same command timed once)."""
    assert lab_main(att)(["--quick", "--no-bench", "--no-json", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "NumPy model of the CUDA C kernel's tiling" in out and "8-way" in out and "1-way" in out
    assert "attn_02_mma_pipelined" in out


def test_model_and_fragment_checks_pass():
    assert attb.model_check(quick=True)
    assert attb.fragment_check()


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("kernel", ["01", "02", "02w"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("s", CHECK_S)
def test_gpu_matches_float64(kernel, d, causal, s):
    row = run_check(kernel, s, d, causal)
    assert row["ok"], f"{row['o']} / lse {row['lse']} [seed {check.seed()}]"


@gpu
@pytest.mark.parametrize("kernel,nwarps,min_blocks", OTHER_SHAPES)
@pytest.mark.parametrize("causal", [False, True])
def test_gpu_other_shapes(kernel, nwarps, min_blocks, causal):
    for s in (1, 129, 1000):
        row = run_check(kernel, s, 128, causal, b=2, h=3, nwarps=nwarps, min_blocks=min_blocks)
        assert row["ok"], f"S={s}: {row['o']} / lse {row['lse']}"


@gpu
@pytest.mark.parametrize("kernel", ["02", "02w"])
def test_gpu_fp16(kernel):
    for causal in (False, True):
        row = run_check(kernel, 257, 128, causal, dtype="float16")
        assert row["ok"], row


@gpu
def test_gpu_out_and_lse_arrays_are_filled():
    q, k, v = cuda_inputs(2, 3, 200, 64)
    out = torch.full_like(q, float("nan"))
    lse = torch.full((2, 3, 200), float("nan"), device="cuda")
    o, l_ = att.flash_attn_cuda(q, k, v, True, 0.2, out, lse=lse)
    assert o is out and l_ is lse
    o_ref, l_ref = att.forward_reference(q, k, v, True, 0.2)
    check.assert_close(o, o_ref, "bfloat16")
    check.assert_close(l_, l_ref, "float32", attb.LSE_TOL)
    with pytest.raises(ValueError, match="out"):
        att.flash_attn_cuda(q, k, v, out=torch.empty(2, 3, 200, 32, device="cuda", dtype=q.dtype))


@gpu
def test_gpu_probe_every_row_takes_its_own_key():
    """The permutation probe (the old --debug step) on the real kernels, both rungs and head dims."""
    if att.unavailable_reason():
        pytest.skip(att.unavailable_reason())
    assert attb.probe_check()


@gpu
def test_gpu_matches_sdpa():
    import torch.nn.functional as F

    q, k, v = cuda_inputs(2, 4, 333, 128)
    for causal in (False, True):
        o, _ = att.flash_attn_cuda(q, k, v, causal)
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
        diff = o.float() - ref
        # two bf16 computations: a few bf16 ulps apart at most (|o| <= ~4 here: 1 ulp = 2^-6)
        assert diff.abs().max().item() < 0.08 and (diff.norm() / ref.norm()).item() < 1e-2


def test_wide_rung_refuses_occupancy_that_spills():
    """min_blocks above rung 02w's register cap (2 CTAs at D = 128, 3 at D = 64) would spill its two tiles of S and
    O: refused by name before anything runs."""
    q = torch.zeros((1, 2, 16, 128), dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="min_blocks: rung 02w at D = 128"):
        att.flash_attn_cuda(q, q, q, kernel="02w", min_blocks=3)
    with pytest.raises(ValueError, match="nwarps: rung 02w"):
        att.flash_attn_cuda(q, q, q, kernel="02w", nwarps=8)
    for d, cap in att.WIDE_MAX_BLOCKS.items():
        rep = cuda.compile_report(att.CU, "sm_90", defines=att.defines(d, min_blocks=cap, arch="sm_90"))
        assert rep[att.KERNELS["02w"]].spills == 0, (d, cap)
