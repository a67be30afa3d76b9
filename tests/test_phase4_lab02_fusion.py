"""Lab 4.2 (kernel fusion): references against torch, the contract's three parts (every part has a fused and an
unfused variant; each part's cases through the Triton variants in the interpreter - tests/test_labs.py runs them all),
the public functions' edge cases, the CUDA C compile report (spills, 16-byte loads), argument validation, the CLI and
the plot redrawn from the committed JSON. GPU tier: every part, CUDA C included, with the peer."""
import json
import os

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, lab, plan
from phase4_optimization.lab02_fusion import bench as fzb
from phase4_optimization.lab02_fusion import elementwise, gemm, gemm_tma, residual_layernorm
from phase4_optimization.lab02_fusion import lab as fz
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu
WHERE = "cuda" if device.has_gpu() else "cpu"


def _put(a, dtype):
    return arrays.from_numpy(np.asarray(a, np.float64), dtype, WHERE)


def _rounded(a, dtype):
    """The values a kernel actually receives: a rounded to dtype, back in float64 (the reference's input)."""
    return arrays.round_to(a, dtype)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: references
# ---------------------------------------------------------------------------------------------------------------------
def test_gelu_references_match_torch():
    import torch
    import torch.nn.functional as F

    t = np.linspace(-12.0, 12.0, 2001)
    tt = torch.tensor(t, dtype=torch.float64)
    np.testing.assert_allclose(fz.gelu_tanh_ref(t), F.gelu(tt, approximate="tanh").numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fz.gelu_erf_ref(t), F.gelu(tt).numpy(), rtol=1e-12, atol=1e-15)
    # the two GELUs are different functions (named apart for a reason), close but not equal
    assert 1e-5 < np.max(np.abs(fz.gelu_tanh_ref(t) - fz.gelu_erf_ref(t))) < 1e-2


def test_gelu_tanh_kernel_form_is_the_function_and_compiles_to_approximate_ops():
    """gelu_tanh as the kernels compute it - exp2(t (K1 + K2 t^2)) with log2 e folded into K1, K2, and an approximate
    division - is the tanh GELU: in float64 the folded constants give the reference to 1e-14 over the range where it
    is not ~0, and at -inf, +inf, very negative and very positive t it ends as the written-out form does (NaN, inf,
    -0, t). Compiled for sm_90 (no GPU needed), the elementwise kernel's PTX has ex2.approx and div.approx and no
    full-range or IEEE division - on a Triton whose fdiv has approx= (FDIV_APPROX); on an older one, div.full and no
    IEEE division."""
    from common.triton_support import FDIV_APPROX, aot
    from phase4_optimization.lab02_fusion import triton_kernels as tk

    k1, k2 = -2.302208198144325, -0.1029432395800235
    assert k1 == pytest.approx(-2 * np.sqrt(2 / np.pi) / np.log(2), rel=1e-15) and k2 == pytest.approx(0.044715 * k1)
    t = np.linspace(-8.0, 12.0, 4001)
    np.testing.assert_allclose(t / (1 + np.exp2(t * (k1 + k2 * t * t))), fz.gelu_tanh_ref(t), rtol=1e-12, atol=1e-14)
    with np.errstate(over="ignore", invalid="ignore"):
        edge = np.array([-np.inf, np.inf, -1e4, -40.0, 40.0, 1e4], dtype=np.float32)
        got = edge / (np.float32(1) + np.exp2(edge * (np.float32(k1) + np.float32(k2) * edge * edge)))
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == got[3] == 0 and np.signbit(got[2])
    assert got[4] == 40.0 and got[5] == 1e4
    sig = {"x_ptr": "*fp32", "bias_ptr": "*fp32", "c_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32",
           "HAS_BIAS": "constexpr", "ACT": "constexpr", "HAS_C": "constexpr", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr"}
    ptx = aot(tk.elementwise_kernel, sig, dict(HAS_BIAS=False, ACT=1, HAS_C=False, BLOCK_M=4, BLOCK_N=64)).asm["ptx"]
    div, other = ("div.approx.f32", "div.full.f32") if FDIV_APPROX else ("div.full.f32", "div.approx.f32")
    assert "ex2.approx" in ptx and div in ptx, "gelu_tanh: exp2 and the approximate division"
    assert other not in ptx and "div.rn.f32" not in ptx


def test_reference_ops():
    import torch
    import torch.nn.functional as F

    rng = check.rng(70)
    x, r = rng.standard_normal((5, 9)) + 3, rng.standard_normal((5, 9))
    w, b = 1 + 0.2 * rng.standard_normal(9), rng.standard_normal(9)
    y, h = fz.reference("residual_layernorm", x, r, w, b)
    np.testing.assert_allclose(h, x + r)
    want = F.layer_norm(torch.tensor(x + r), (9,), torch.tensor(w), torch.tensor(b), fz.EPS).numpy()
    np.testing.assert_allclose(y, want, rtol=1e-10, atol=1e-12)
    a, wm = rng.standard_normal((4, 6)), rng.standard_normal((6, 3))
    bias, res = rng.standard_normal(3), rng.standard_normal((4, 3))
    np.testing.assert_allclose(fz.reference("linear_plain", a, wm), a @ wm)
    np.testing.assert_allclose(fz.reference("linear_gelu_tanh", a, wm, bias), fz.gelu_tanh_ref(a @ wm + bias))
    np.testing.assert_allclose(fz.reference("linear_bias_residual", a, wm, bias, res), a @ wm + bias + res)
    with pytest.raises(ValueError, match="op"):
        fz.reference("softmax", a)


def test_byte_prediction():
    assert fzb.predicted_elements("bias_gelu_tanh", False) == 4 and fzb.predicted_elements("bias_gelu_tanh", True) == 2
    assert fzb.predicted_elements("bias_residual", False) == 5 and fzb.predicted_elements("bias_residual", True) == 3
    assert fzb.predicted_elements("residual_layernorm", False) == 5
    rows = {r["case"]: r for r in fzb.byte_table(64, 64, 64, 64, 4096, gemm_tflops=700.0, hbm_gbps=4400.0)}
    assert rows["bias_gelu_erf"]["predicted speed-up"] == pytest.approx(2.0)
    assert rows["residual_layernorm"]["predicted speed-up"] == pytest.approx(1.25)
    # 4096^3: GEMM 0.196 ms at 700 TFLOP/s plus the unfused tail's 4 N^2 bf16 elements (134 MB) at 4.4 TB/s, 0.031 ms,
    # over the GEMM alone: the 1.155x the lab's docstring quotes
    assert rows["linear_gelu_tanh"]["predicted speed-up"] == pytest.approx(1.1554, abs=1e-4)
    # no tensor-core rate known: no GEMM prediction, the other rows stand
    rows = {r["case"]: r for r in fzb.byte_table(64, 64, 64, 64, 4096, gemm_tflops=None, hbm_gbps=300.0)}
    assert rows["linear_gelu_tanh"]["predicted speed-up"] is None and rows["bias_residual"]["predicted speed-up"] > 1


def test_prediction_rates_come_from_the_gpu_or_its_measured_ceilings():
    """The GEMM row's rates: lab 4.1's measured ceilings where this GPU's results folder has them (the H200's), else
    the datasheet (bf16; fp16 on a GPU without bf16 tensor cores), and the bandwidth measured in this run first."""
    h200 = device.profile_info("h200")
    r = fzb.prediction_rates(h200)
    if os.path.exists(os.path.join(H200, fzb.LAB01_CEILINGS)):
        with open(os.path.join(H200, fzb.LAB01_CEILINGS)) as f:
            measured = json.load(f)["ceilings"]
        assert r["gemm_tflops"] == measured["tflops"]["bf16"] and "measured" in r["gemm_from"]
        assert r["hbm_gbps"] == measured["hbm_gbps"]
    assert fzb.prediction_rates(h200, hbm_measured=1234.0)["hbm_gbps"] == 1234.0
    t4 = fzb.prediction_rates(device.profile_info("t4"))
    assert t4["gemm_tflops"] == device.profile_info("t4").peak("fp16_tflops") and "fp16" in t4["gemm_from"]
    assert t4["hbm_gbps"] == device.profile_info("t4").peak("hbm_gbps") and t4["hbm_from"] == "datasheet bandwidth"


# ---------------------------------------------------------------------------------------------------------------------
# The contract: one lab, three parts, every part checked fused and unfused
# ---------------------------------------------------------------------------------------------------------------------
def _part_cases(part, cases):
    return [c for c in cases if fz.part_of(c[0][0]) == part]


def _serving(part, dtype="bfloat16"):
    """The variants (and peers) that take a case of this part."""
    size = _part_cases(part, fz.CPU_CHECK_CASES)[0][0]
    return [v for v in fz.VARIANTS + fz.PEERS if not (v.cannot_serve and v.cannot_serve(size, dtype))]


@pytest.mark.parametrize("part", list(fz.PARTS))
def test_every_part_is_in_the_contract_fused_and_unfused(part):
    for cases in (fz.CHECK_CASES, fz.CPU_CHECK_CASES):
        assert _part_cases(part, cases), f"{part}: no check case"
        assert {fz.part_of(c[0][0]) for c in cases[:fz.QUICK_CASES]} == set(fz.PARTS), "--quick covers every part"
    names = [v.name for v in _serving(part)]
    assert any("unfused" in n for n in names) and any(" fused" in n for n in names), names
    assert any(v.impl == "peer" for v in _serving(part))
    # the CUDA C kernels are in it where they exist (parts 1 and 2), and say why not for part 3
    cuda_ = [v for v in _serving(part) if v.impl == "cuda"]
    assert len(cuda_) == {"elementwise chains": 2, "residual + layernorm": 1, "GEMM + epilogue": 0}[part]


def test_cannot_serve_names_the_reason_and_nothing_else():
    unf, fus = fz.VARIANTS[0], fz.VARIANTS[1]
    assert "part 1 only" in unf.cannot_serve(("residual_layernorm", 4, 8), "float32")
    assert "GEMM" in fus.cannot_serve(("linear_plain", 4, 8, 8), "bfloat16")
    assert fus.cannot_serve(("residual_layernorm", 4, 8), "float32") == ""
    tri = next(v for v in fz.VARIANTS if v.name.startswith("triton fused ("))
    assert "16-bit" in tri.cannot_serve(("linear_plain", 4, 8, 8), "float32")
    for size, dt in fz.CHECK_CASES + fz.CPU_CHECK_CASES:
        assert tri.cannot_serve(size, dt) == "", (size, dt)
    with pytest.raises(ValueError, match="op"):
        fz.part_of("softmax")
    # an op outside a variant's parts is refused by name; host arrays are refused first, whatever the op
    with pytest.raises(ValueError, match="no kernel for GEMM"):
        fz._dispatch("linear_plain", {"elementwise chains": fz.ew_cuda_fused}, "cuda fused")
    with pytest.raises(TypeError, match="GPU array"):
        fz.cuda_unfused("residual_layernorm", np.ones((2, 4), np.float32), np.ones((2, 4), np.float32),
                        np.ones(4, np.float32), np.ones(4, np.float32))


@pytest.mark.parametrize("part", list(fz.PARTS))
def test_triton_parts_match_reference(part):
    """Each part's cases through every Triton variant (interpreter on the CPU, compiled on a GPU)."""
    variants = [v for v in _serving(part) if v.impl == "triton"]
    assert len(variants) == (4 if part == fz.GEMM else 3)      # part 3 also has the persistent TMA GEMM
    cases = _part_cases(part, fz.CHECK_CASES if device.has_gpu() else fz.CPU_CHECK_CASES)
    rows, ok = lab.check_variants(fz, variants, cases, verbose=False)
    for v, r in zip(variants, rows):
        if device.has_gpu() and not v.available()[0]:
            continue                            # the TMA GEMM on a GPU without it (sm_80, sm_89): skipped, said so
        served = [c for c in cases if not (v.cannot_serve and v.cannot_serve(*c))]
        assert served and r["cases"] == len(served), (v.name, r)
    assert ok, [r["result"] for r in rows]


def test_lab_py_still_offers_every_part():
    """The parts live in a module each; lab 4.7, tools/ and bench.py reach them through lab.py, as the same objects
    (bench.py's tuning fills lab.TUNED, which the parts' config lookups read)."""
    from phase4_optimization.lab02_fusion import parts

    for name in ("linear", "linear_config", "linear_meta", "linear_tma_config", "tile_of", "ring_bytes", "tma_programs",
                 "tma_unavailable", "tma_constexprs", "linear_signature", "linear_tma_signature", "LINEAR_CONFIGS",
                 "LINEAR_BIG_MIN", "ACT_CODE", "_gcfg", "linear_kernel", "linear_tma_kernel", "residual_layernorm",
                 "bias_gelu", "bias_residual", "residual_layernorm_cuda", "ew_cuda_fused"):
        assert hasattr(fz, name), name
    assert fz.linear is gemm.linear and fz.bias_gelu is elementwise.bias_gelu and fz.TUNED is parts.TUNED
    assert fz.residual_layernorm is residual_layernorm.residual_layernorm
    assert fz.tma_unavailable is gemm_tma.tma_unavailable


def test_layernorm_launch_arithmetic_is_lab_3_4s():
    from phase3_triton.lab04_layernorm import lab as ln

    for n in (1, 33, 768, 4096, 16384, 20000):
        assert fz.ln_default(n) == ln.fwd_default(n)
    cfg = fz.long_row_config(300)
    assert cfg["LOOP_BLOCK"] == 128 and cfg["num_warps"] == ln.fwd_default(300)["num_warps"]


def test_small_tiles_really_take_the_multi_tile_paths(monkeypatch):
    """The small-tiles variant launches several column programs (part 1), the long-row path in chunks (part 2) and
    several GEMM tiles (part 3)."""
    seen = []
    real = elementwise.launch

    def spy(kernel, grid, *args, **meta):
        seen.append((grid, meta))
        return real(kernel, grid, *args, **meta)

    for part in (elementwise, residual_layernorm, gemm):         # each part launches its kernels itself
        monkeypatch.setattr(part, "launch", spy)
    for size in (("bias_gelu_tanh", 3, 40), ("residual_layernorm", 2, 100), ("linear_plain", 40, 70, 33)):
        inputs = fz.make_inputs(size, "float16", check.rng(1), lab.where())
        out = fz.triton_fused_small_tiles(*inputs)
        ref = fz.reference(*[arrays.to_numpy(x).astype(np.float64) if i else x for i, x in enumerate(inputs)])
        for o, r in zip(out, ref) if isinstance(ref, tuple) else [(out, ref)]:
            check.assert_close(o, r, "float16", fz.tolerance(size, "float16"), what=str(size))
    (ew_grid, ew), (ln_grid, ln), (gemm_grid, _) = seen
    assert ew_grid[1] == 3 and ew["BLOCK_N"] == fz.SMALL_EW["BLOCK_N"]     # 40 columns in blocks of 16
    assert ln["SINGLE"] is False and ln["BLOCK_N"] == 32                   # the long-row path, 4 chunks of 32
    assert gemm_grid[0] > 2


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the CUDA C file without a GPU
# ---------------------------------------------------------------------------------------------------------------------
def test_cuda_archs_claimed():
    assert cuda.claimed_archs(fz.CU) == ("sm_75", "sm_80", "sm_90")


@pytest.mark.parametrize("arch", ["sm_90"])
def test_cuda_vector_kernels_use_16_byte_accesses(arch):
    rep = cuda.compile_report(fz.CU, arch)
    names = cuda.kernel_names(fz.CU)
    assert len(names) == 48
    if cuda.find_cuobjdump() is None:
        pytest.skip("no cuobjdump: SASS not available")
    for name in names:
        k = rep[name]
        assert k.spills == 0, name
        c = k.sass_counts
        if name.endswith("_scalar"):
            assert c.get("LDG.128", 0) == 0 and c.get("STG.128", 0) == 0, f"{name}: {c}"
        else:
            assert c.get("LDG.128", 0) > 0 and c.get("STG.128", 0) > 0, f"{name}: {c}"
            narrow = [kk for kk in c if kk.startswith("LDG.") and kk != "LDG.128"]
            assert not narrow, f"{name} has narrow global loads: {narrow}"


def test_cuda_plan():
    p = fz.cuda_plan("fusion_02_bias_gelu_tanh", "bfloat16", 8192, 8192, True)
    assert p["kernel"] == "fusion_02_bias_gelu_tanh_bf16" and p["V"] == 8
    assert p["blocks"] == 8192 * 8192 // 8 // (fz.CUDA_THREADS * fz.CUDA_UNROLL)
    q = fz.cuda_plan("fusion_01_add", "float32", 3, 5, False)
    assert q["kernel"] == "fusion_01_add_f32_scalar" and q["blocks"] == 1
    for name in (p["kernel"], q["kernel"]):
        assert name in cuda.kernel_names(fz.CU)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: validation before any launch
# ---------------------------------------------------------------------------------------------------------------------
def test_validation_errors():
    x, b = _put(np.ones((4, 8)), "float32"), _put(np.ones(8), "float32")
    with pytest.raises(ValueError, match="bias"):
        fz.bias_gelu(x, _put(np.ones(7), "float32"))
    with pytest.raises(TypeError, match="bias"):
        fz.bias_gelu(x, _put(np.ones(8), "float16"))
    with pytest.raises(ValueError, match="approximate"):
        fz.bias_gelu(x, b, approximate="sigmoid")
    with pytest.raises(ValueError, match="x"):
        fz.bias_gelu(_put(np.ones(8), "float32"), b)
    with pytest.raises(ValueError, match="out"):
        fz.bias_gelu(x, b, out=_put(np.ones((4, 9)), "float32"))
    with pytest.raises(ValueError, match="residual"):
        fz.bias_residual(x, b, _put(np.ones((4, 7)), "float32"))
    with pytest.raises(ValueError, match="contiguous"):
        fz.bias_gelu(_put(np.ones((8, 4)), "float32").T, _put(np.ones(8), "float32"))
    with pytest.raises(TypeError, match="x"):
        fz.bias_gelu([[1.0]], b)
    # CUDA C wrappers: host arrays are refused before anything touches a GPU
    with pytest.raises(TypeError, match="GPU array"):
        fz.ew_cuda_fused("bias_gelu_tanh", np.ones((4, 8), np.float32), np.ones(8, np.float32))
    with pytest.raises(TypeError, match="GPU array"):
        fz.residual_layernorm_cuda(*(np.ones(s_, np.float32) for s_ in ((4, 8), (4, 8), (8,), (8,))))
    with pytest.raises(ValueError, match="op"):
        fz.ew_triton_fused("softmax", x, b)


def test_validation_errors_layernorm_and_linear():
    x = _put(np.ones((4, 8)), "float32")
    w = _put(np.ones(8), "float32")
    with pytest.raises(ValueError, match="residual"):
        fz.residual_layernorm(x, _put(np.ones((4, 7)), "float32"), w, w)
    with pytest.raises(ValueError, match="weight"):
        fz.residual_layernorm(x, x, _put(np.ones(7), "float32"), w)
    with pytest.raises(ValueError, match="eps"):
        fz.residual_layernorm(x, x, w, w, eps=0.0)
    with pytest.raises(TypeError, match="out"):
        fz.residual_layernorm(x, x, w, w, out=x)
    a, wm = _put(np.ones((4, 8)), "bfloat16"), _put(np.ones((8, 3)), "bfloat16")
    with pytest.raises(TypeError, match="x"):
        fz.linear(x, _put(np.ones((8, 3)), "float32"))           # fp32 GEMM is not offered
    with pytest.raises(ValueError, match="inner"):
        fz.linear(a, _put(np.ones((7, 3)), "bfloat16"))
    with pytest.raises(ValueError, match="activation"):
        fz.linear(a, wm, activation="relu")
    with pytest.raises(ValueError, match="bias"):
        fz.linear(a, wm, _put(np.ones(4), "bfloat16"))
    with pytest.raises(ValueError, match="residual"):
        fz.linear(a, wm, residual=_put(np.ones((4, 4)), "bfloat16"))
    with pytest.raises(TypeError, match="w"):
        fz.linear(a, _put(np.ones((8, 3)), "float16"))


def test_gelu_tail_tolerance_has_an_absolute_floor_that_still_catches_bugs():
    """fp32 GELU deep in its negative tail: 1 + tanh(u) cancels, so one rounding is ~1e-3 relative on a ~5e-5
    output (seen on the H200, 1 x 1 float32). The fp32 floor (1e-6) passes that and fails an order-1 bug."""
    tol = fz.tolerance(("bias_gelu_tanh", 1, 1), "float32")
    assert tol.atol == 1e-6 and fz.tolerance(("bias_residual", 1, 1), "float32").atol == 0.0
    ref = np.array([[-5.35e-5]])
    assert check.compare(ref + 5.82e-8, ref, "float32", tol).ok
    assert not check.compare(ref + 1e-3, ref, "float32", tol).ok


def test_cli_quick(tmp_path):
    assert lab_main(fz)(["--quick", "--no-plot", "--no-json", "--out", str(tmp_path)]) == 0
    assert not os.listdir(tmp_path)


def test_replot_from_the_committed_json(tmp_path):
    path = os.path.join(H200, f"{fz.LAB}.json")
    if not os.path.exists(path):
        pytest.skip("no committed H200 results for lab 4.2")
    assert lab_main(fz)(["--replot", H200, "--out", str(tmp_path)]) == 0
    png = tmp_path / f"{fz.LAB}.png"
    assert png.stat().st_size > 20_000
    with open(path) as f:
        data = json.load(f)
    assert {r["case"] for r in data["rows"]} == set(fz.EW_OPS) | {"residual_layernorm", "linear_gelu_tanh"}


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("part", list(fz.PARTS))
def test_gpu_parts_with_peers(part):
    rows, ok = lab.check_variants(fz, _serving(part), _part_cases(part, fz.CHECK_CASES), verbose=False)
    assert all(r["cases"] > 0 for r in rows), rows
    assert ok, [r["result"] for r in rows]


def _one_element_past_16_bytes(arrays_):
    """Copies of the arrays, each starting one element past a 16-byte boundary (same shape and values)."""
    import torch

    out = []
    for a in arrays_:
        t = fz._torch_view(a)
        buf = torch.empty(t.numel() + 1, dtype=t.dtype, device="cuda")
        v = buf[1:].view(t.shape)
        v.copy_(t)
        out.append(v)
    return out


@gpu
@pytest.mark.parametrize("dtype", fz.DTYPES)
@pytest.mark.parametrize("op", fz.EW_OPS)
def test_gpu_cuda_misaligned_takes_scalar_path(op, dtype):
    """A contiguous matrix starting one element past a 16-byte boundary: the wrappers must pick the scalar kernels."""
    m, n = 33, 64
    inputs = fz.make_inputs((op, m, n), dtype, check.rng(75), "cuda")
    shifted = _one_element_past_16_bytes(inputs[1:])
    assert not arrays.aligned(shifted[0], 16)
    ref = fz.reference(op, *[arrays.to_numpy(a).astype(np.float64) for a in inputs[1:]])
    for fn in (fz.ew_cuda_fused, fz.ew_cuda_unfused):
        out = check.poisoned((m, n), dtype, shifted[0])
        check.assert_close(fn(op, *shifted, out=out), ref, dtype, what=f"{fn.__name__} {op} {dtype} misaligned")


@gpu
def test_gpu_linear_big_tile_ragged():
    """The benchmark's 128 x 256 x 64 tile on a shape that is ragged in M, N and K (masked main loop and epilogue)."""
    op = "linear_bias_residual"
    for size in ((op, 300, 520, 200), ("linear_gelu_tanh", 257, 1000, 96)):
        inputs = fz.make_inputs(size, "bfloat16", check.rng(76), "cuda")
        ref = fz.reference(size[0], *[arrays.to_numpy(a) for a in inputs[1:]])
        x, w, b = inputs[1:4]
        res = inputs[4] if len(inputs) > 4 else None
        out = check.poisoned(ref.shape, "bfloat16", x)
        got = fz.linear(x, w, b, activation="gelu_tanh" if size[0] == "linear_gelu_tanh" else None, residual=res,
                        out=out, config=fz.LINEAR_BIG)
        check.assert_close(got, ref, "bfloat16", what=f"{size}")


@gpu
@pytest.mark.parametrize("dtype", fz.DTYPES)
def test_gpu_cuda_layernorm_misaligned_takes_scalar_path(dtype):
    m, n = 7, 256
    inputs = fz.make_inputs(("residual_layernorm", m, n), dtype, check.rng(77), "cuda")
    shifted = _one_element_past_16_bytes(inputs[1:])
    ref_y, ref_h = fz.reference("residual_layernorm", *[arrays.to_numpy(a).astype(np.float64) for a in inputs[1:]])
    y, h = fz.residual_layernorm_cuda(*shifted, out=(check.poisoned((m, n), dtype, shifted[0]),
                                                       check.poisoned((m, n), dtype, shifted[0])))
    check.assert_close(h, ref_h, dtype, what="h")
    check.assert_close(y, ref_y, dtype, what="y")


def test_gelu_tail_gain_is_the_peak_of_t_times_the_slope():
    """The 16-bit GELU floor rests on max over t < 0 of |t g'(t)|: recompute it from the reference."""
    t = np.linspace(-12.0, 0.0, 240001)
    gain = np.abs(t * np.gradient(fz.gelu_tanh_ref(t), t)).max()
    assert abs(gain - fz.GELU_TAIL_GAIN) < 1e-3, gain


def test_tma_linear_kernel_compiles_for_sm_90_without_spills():
    """The Hopper path's promise (README): the 3-stage ring and the C tile fit in 227 KiB, the GELU epilogue in the
    255 registers, with no local memory."""
    rows = [r for r in fzb.linear_compile_table("sm_90", []) if r["epilogue"].startswith("TMA")]
    assert len(rows) == 2
    for r in rows:
        assert r["local B"] == 0 and r["shared KiB"] <= 227 and r["HGMMA"] > 0, r


def test_linear_sends_only_what_the_tma_kernel_can_do_to_it(monkeypatch):
    """linear()'s dispatch: the TMA kernel has no residual epilogue, so a residual (or an explicit config, a small
    problem, a CuPy-like array, a bad stride, a pre-Hopper GPU) must keep the call on linear_kernel."""
    import torch

    monkeypatch.setattr(gemm_tma, "INTERPRETER", False)         # the dispatch rule lives in gemm_tma.py
    monkeypatch.setattr(gemm_tma, "_tma_here", lambda: True)
    x = torch.empty((4096, 2048), dtype=torch.bfloat16)
    w = torch.empty((2048, 4096), dtype=torch.bfloat16)
    y = torch.empty((4096, 4096), dtype=torch.bfloat16)
    assert fz.linear_uses_tma(x, w, y)
    assert not fz.linear_uses_tma(x, w, y, residual=y)
    assert not fz.linear_uses_tma(x, w, y, config=fz.LINEAR_BIG)
    assert not fz.linear_uses_tma(x[:512], w, y[:512])
    x2, w2 = torch.empty((4096, 2052), dtype=torch.bfloat16), torch.empty((2052, 4096), dtype=torch.bfloat16)
    assert not fz.linear_uses_tma(x2, w2, y)
    monkeypatch.setattr(gemm_tma, "_tma_here", lambda: False)
    assert not fz.linear_uses_tma(x, w, y)


# ---------------------------------------------------------------------------------------------------------------------
# The plan on the GPUs learners have
# ---------------------------------------------------------------------------------------------------------------------
def _by_kernel(p):
    out = {}
    for x in p.launches:
        out.setdefault(x.kernel, []).append(x)
    return out


def test_plan_on_an_h200_uses_the_persistent_tma_gemm():
    """Hopper with its 227 KiB a block: the persistent TMA GEMM runs part 3 (a program per SM, GROUP_M from lab 3.2's
    record for that GPU where one is committed), linear_kernel keeps the big default tile for the grid-per-tile run."""
    config.set_overrides([])
    gpu = device.profile_info("h200")
    p = plan.make(fz, fzb, gpu)
    assert not p.skipped
    k = _by_kernel(p)
    tma = k["linear_tma_kernel"]
    assert {x.grid for x in tma} == {(gpu.sms,)} and all(x.defines["NUM_PROGRAMS"] == gpu.sms for x in tma)
    assert {x.variant for x in tma} == {v.name for v in fz.VARIANTS if "unfused" in v.name and "triton" in v.name
                                        or v.name.startswith("triton fused (") or "persistent TMA" in v.name}
    (grid_per_tile,) = k["linear_kernel"]
    tile = (grid_per_tile.defines["BLOCK_M"], grid_per_tile.defines["BLOCK_N"], grid_per_tile.num_stages)
    assert tile == (128, 256, 4)
    assert grid_per_tile.grid == ((4096 // 128) * (4096 // 256),)
    assert k["fusion_03_residual_layernorm_bf16"][0].grid == (fz.LN_SHAPE[0],)
    assert "GEMM 4096^3 bfloat16" in tma[0].case


def test_plan_on_gpus_without_tma_or_bf16():
    """A consumer Blackwell card has TMA but 99 KiB a block: the TMA variant is skipped (shared memory), part 3 runs on
    linear_kernel with a tile whose ring fits. A T4: no sm_90, no bf16 tensor cores: part 3 in fp16, the same fitted
    tile; the grid of every CUDA C kernel the same (it depends on the shape, not the GPU)."""
    config.set_overrides([])
    for slug, why in (("rtx-5090", "shared memory per block"), ("t4", "needs sm_90+")):
        gpu = device.profile_info(slug)
        p = plan.make(fz, fzb, gpu)
        (skip,) = p.skipped
        assert "persistent TMA" in skip.name and why in skip.why, skip
        k = _by_kernel(p)
        assert "linear_tma_kernel" not in k
        for x in k["linear_kernel"]:
            assert fz.ring_bytes(dict(x.defines, num_stages=x.num_stages)) <= gpu.smem_per_block_optin
            assert (x.defines["BLOCK_M"], x.defines["BLOCK_N"], x.defines["BLOCK_K"]) == (128, 128, 32)
        dt = "*fp16" if slug == "t4" else "*bf16"
        assert all(x.signature["x_ptr"] == dt for x in k["linear_kernel"])
        assert k["fusion_02_bias_gelu_tanh_bf16"][0].grid == (8192 * 8192 // 8 // (256 * 2),)
    a100 = fz.linear_default(4096, 4096, 4096, device.profile_info("a100"))
    assert a100 == fz.LINEAR_CONFIGS[1]                        # 163 KiB: the 3-stage big tile
    assert fz.linear_default(100, 4096, 4096, device.profile_info("h200")) == fz.LINEAR_SMALL


def test_set_changes_the_kernels_configuration_and_says_so():
    config.set_overrides(["UNROLL=4", "GEMM_STAGES=2", "LN_THREADS=512", "EW_ELEMS=8192"])
    try:
        gpu = device.profile_info("l4")
        k = _by_kernel(plan.make(fz, fzb, gpu))
        ew = k["fusion_02_bias_gelu_tanh_bf16"][0]
        assert ew.defines == {"THREADS": 256, "UNROLL": 4} and ew.grid == (8192 * 8192 // 8 // (256 * 4),)
        assert ew.config_source == "UNROLL: --set UNROLL=4; the rest default"
        assert all(x.num_stages == 2 and "--set GEMM_STAGES=2" in x.config_source for x in k["linear_kernel"])
        ln = k["fusion_03_residual_layernorm_bf16"][0]
        assert ln.threads == 512 and ln.defines == {"LN_THREADS": 512}
        assert all(x.defines["BLOCK_M"] * x.defines["BLOCK_N"] == 8192 for x in k["elementwise_kernel"]
                   if x.case.startswith("8192 x 8192"))
        config.set_overrides(["LN_THREADS=100"])
        with pytest.raises(ValueError, match="LN_THREADS"):
            fz.cuda_ln_config()
    finally:
        config.set_overrides([])


def test_benchmark_shapes_fit_a_small_gpu():
    """A GPU with less memory than the parts need gets smaller shapes (rows halved), and the plan says so."""
    import dataclasses

    small = dataclasses.replace(device.profile_info("rtx-3060"), total_mem_bytes=2 * 2**30)
    ew, ln_shape, g, notes = fz.bench_shapes(small)
    assert ew[1] == fz.EW_SHAPE[1] and ew[0] < fz.EW_SHAPE[0] and fz.ew_bytes(ew) <= 0.6 * 2 * 2**30
    assert ln_shape[1] == fz.LN_SHAPE[1] and ln_shape[0] < fz.LN_SHAPE[0] and len(notes) >= 2
    assert fz.bench_shapes(device.profile_info("h200"))[3] == []

