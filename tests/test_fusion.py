"""Lab 4.2 (kernel fusion): references against torch, the Triton kernels in the interpreter (layernorm and GEMM
groups; the elementwise chains run through tests/test_labs.py), the public functions' edge cases, the CUDA C compile
report (spills, 16-byte loads), argument validation and the CLI. GPU tier: every group, CUDA C included, with peers."""
import numpy as np
import pytest

from common import arrays, check, cuda, device, lab
from phase4_optimization import lab02_fusion as fz

gpu = pytest.mark.gpu
WHERE = "cuda" if device.has_gpu() else "cpu"


def _put(a, dtype):
    return arrays.from_numpy(np.asarray(a, np.float64), dtype, WHERE)


def _rounded(a, dtype):
    """The values a kernel actually receives: a rounded to dtype, back in float64 (the reference's input)."""
    return arrays.to_numpy(arrays.from_numpy(np.asarray(a, np.float64), dtype, "cpu")).astype(np.float64)


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
    assert fz.predicted_elements("bias_gelu_tanh", False) == 4 and fz.predicted_elements("bias_gelu_tanh", True) == 2
    assert fz.predicted_elements("bias_residual", False) == 5 and fz.predicted_elements("bias_residual", True) == 3
    assert fz.predicted_elements("residual_layernorm", False) == 5
    rows = {r["case"]: r for r in fz.byte_table(64, 64, 64, 64, 4096)}
    assert rows["bias_gelu_erf"]["predicted speed-up"] == pytest.approx(2.0)
    assert rows["residual_layernorm"]["predicted speed-up"] == pytest.approx(1.25)
    # 4096^3: GEMM 0.196 ms at 700 TFLOP/s plus the unfused tail's 4 N^2 bf16 elements (134 MB) at 4.4 TB/s, 0.031 ms,
    # over the GEMM alone: the 1.155x the lab's docstring quotes
    assert rows["linear_gelu_tanh"]["predicted speed-up"] == pytest.approx(1.1554, abs=1e-4)


# ---------------------------------------------------------------------------------------------------------------------
# Both tiers: the Triton groups against the float64 reference (interpreter on the CPU, compiled on a GPU)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("group", [g[0] for g in fz.GROUPS[1:]])
def test_triton_groups_match_reference(group):
    title, variants, _, gpu_cases, cpu_cases = next(g for g in fz.GROUPS if g[0] == group)
    variants = [v for v in variants if v.available()[0]]        # CUDA C ones need a GPU
    assert any(v.impl == "triton" for v in variants)
    rows, ok = lab.check_variants(fz, variants, gpu_cases if device.has_gpu() else cpu_cases, verbose=False)
    assert all(r["cases"] > 0 for r in rows), rows
    assert ok, [r["result"] for r in rows]


@pytest.mark.parametrize("approximate,ref", [("tanh", "gelu_tanh_ref"), ("none", "gelu_erf_ref")])
def test_bias_gelu_public(approximate, ref):
    rng = check.rng(71)
    x, b = 2.0 * rng.standard_normal((3, 37)), rng.standard_normal(37)
    x[0, :4] = (-30.0, 30.0, 0.0, -1e-4)                     # both tails, and zero
    x, b = _rounded(x, "float32"), _rounded(b, "float32")
    out = check.poisoned((3, 37), "float32", _put(x, "float32"))
    y = fz.bias_gelu(_put(x, "float32"), _put(b, "float32"), out=out, approximate=approximate)
    check.assert_close(y, getattr(fz, ref)(x + b), "float32", what=f"bias_gelu {approximate}")


@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (2, 3, 1), (1, 13, 7), (11, 1, 5), (7, 5, 0)])
def test_linear_edge_shapes(m, n, k):
    rng = check.rng(72)
    dt = "float16"
    a, w = _rounded(rng.standard_normal((m, k)), dt), _rounded(rng.standard_normal((k, n)), dt)
    b, r = _rounded(rng.standard_normal(n), dt), _rounded(rng.standard_normal((m, n)), dt)
    for act in (None, "gelu_tanh"):
        for use_b, use_r in ((False, False), (True, False), (True, True), (False, True)):
            want = (a @ w) + (b if use_b else 0)
            want = fz.gelu_tanh_ref(want) if act else want
            want = want + (r if use_r else 0)
            out = check.poisoned((m, n), dt, _put(a, dt))
            got = fz.linear(_put(a, dt), _put(w, dt), _put(b, dt) if use_b else None, activation=act,
                            residual=_put(r, dt) if use_r else None, out=out)
            check.assert_close(got, want, dt, what=f"linear {m}x{n}x{k} act={act} bias={use_b} res={use_r}")


def test_linear_residual_in_place():
    rng = check.rng(73)
    a, w, b, r = (_rounded(rng.standard_normal(s), "bfloat16") for s in ((19, 23), (23, 29), (29,), (19, 29)))
    res = _put(r, "bfloat16")
    want = fz.reference("linear_bias_residual", a, w, b, arrays.to_numpy(res))
    got = fz.linear(_put(a, "bfloat16"), _put(w, "bfloat16"), _put(b, "bfloat16"), residual=res, out=res)
    assert got is res
    check.assert_close(res, want, "bfloat16", what="in place")


def test_residual_layernorm_3d_and_one_column():
    rng = check.rng(74)
    x, r = 3 + rng.standard_normal((2, 3, 20)), rng.standard_normal((2, 3, 20))
    w, b = 1 + 0.1 * rng.standard_normal(20), rng.standard_normal(20)
    x, r, w, b = (_rounded(v, "float32") for v in (x, r, w, b))
    y, h = fz.residual_layernorm(*(_put(v, "float32") for v in (x, r, w, b)))
    ry, rh = fz.reference("residual_layernorm", x, r, w, b)
    check.assert_close(h, rh, "float32", what="h")
    check.assert_close(y, ry, "float32", what="y")
    y1, _ = fz.residual_layernorm(*(_put(v, "float32") for v in (x[..., :1], r[..., :1], w[:1], b[:1])))
    np.testing.assert_allclose(arrays.to_numpy(y1), np.broadcast_to(np.float32(b[0]), (2, 3, 1)))


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


def test_cli_quick():
    assert fz.main(["--quick", "--no-plot", "--no-json"]) == 0


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("group", [g[0] for g in fz.GROUPS])
def test_gpu_groups_with_peers(group):
    title, variants, peers, gpu_cases, _ = next(g for g in fz.GROUPS if g[0] == group)
    rows, ok = lab.check_variants(fz, variants + peers, gpu_cases, verbose=False)
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
