"""Lab 4.6 (attention), the Triton side: the float64 reference against torch.autograd, the Triton flash forward and
backward at awkward sizes (interpreter on the CPU, compiled on a GPU), the autograd.Function, the naive version, bad
input, the sm_90 compile of the kernels (and that their shared @triton.jit helpers compile ahead of time), the CLI and
--replot. The CUDA C forward: tests/test_phase4_lab06_attention_cuda.py."""
import math
import os

import numpy as np
import pytest

from common import check, lab
from phase4_optimization.lab06_attention import bench as attb
from phase4_optimization.lab06_attention import lab as att
from tests.helpers import H200, lab_main, replot

gpu = pytest.mark.gpu
interpreter_only = pytest.mark.cpu_only           # host tensors in the interpreter; the GPU tier covers the same
OUT_NAMES = ("o", "lse", "dq", "dk", "dv")


def _torch_naive(q, k, v, causal, scale=None):
    """Attention in plain torch ops (S x S materialized), differentiable: what torch.autograd checks against."""
    import torch

    s = q.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    sc = torch.matmul(q, k.transpose(-1, -2)) * scale
    if causal:
        sc = sc.masked_fill(~torch.ones(s, s, dtype=torch.bool, device=q.device).tril(), float("-inf"))
    return torch.matmul(torch.softmax(sc, dim=-1), v), torch.logsumexp(sc, dim=-1)


def _autograd64(q, k, v, do, causal, scale=None):
    """(o, lse, dq, dk, dv) by torch.autograd through the float64 naive version, on q's device."""
    import torch

    qq, kk, vv = (t.detach().double().requires_grad_(True) for t in (q, k, v))
    o, lse = _torch_naive(qq, kk, vv, causal, scale)
    dq, dk, dv = torch.autograd.grad(o, (qq, kk, vv), do.double())
    return o.detach(), lse.detach(), dq, dk, dv


def _poisoned_outs(b, h, s, d, dtype, like):
    return tuple(check.poisoned(shape, dt, like) for shape, dt in
                 (((b, h, s, d), dtype), ((b, h, s), "float32"), ((b, h, s, d), dtype), ((b, h, s, d), dtype),
                  ((b, h, s, d), dtype)))


def _assert_all(got, want, dtype, what="", names=OUT_NAMES):
    tol = att.tolerance(None, dtype)
    for g, w, n in zip(got, want, names, strict=True):
        w = w.cpu().numpy() if hasattr(w, "cpu") else w
        check.assert_close(g, w, dtype, tol, what=f"{what} {n}")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("causal", [False, True])
def test_reference_matches_torch_autograd_float64(causal):
    """The analytical float64 gradients of reference() against torch.autograd on the naive version (CPU, float64)."""
    import torch

    q, k, v, do, _ = att.make_inputs((2, 3, 13, 64, causal), "float16", check.rng(70), "cpu")
    ref = att.reference(*(t.double().numpy() for t in (q, k, v, do)), causal)
    auto = _autograd64(q, k, v, do, causal)
    for r, a, n in zip(ref, auto, OUT_NAMES):
        np.testing.assert_allclose(r, a.numpy(), rtol=1e-10, atol=1e-12, err_msg=n)
    # and an overridden scale goes through both
    ref2 = att.reference(*(t.double().numpy() for t in (q, k, v, do)), causal, sm_scale=0.3)
    auto2 = _autograd64(q, k, v, do, causal, scale=0.3)
    np.testing.assert_allclose(ref2[2], auto2[2].numpy(), rtol=1e-10, atol=1e-12)
    assert torch.isfinite(auto[1]).all()


@pytest.mark.parametrize("s,d,causal,dtype", [(1, 64, False, "bfloat16"), (1, 64, True, "float16"),
                                              (17, 64, True, "float16"), (67, 64, True, "bfloat16"),
                                              (67, 64, False, "float16"), (40, 128, True, "bfloat16")])
def test_flash_forward_backward_small(s, d, causal, dtype):
    """Flash forward + backward into poisoned outputs, against the float64 reference: in the interpreter its tiles
    (32 x 16 / 16 x 32) make several tiles, a ragged last one and the diagonal blocks all run; on a GPU the GPU
    tiles."""
    q, k, v, do, c = att.make_inputs((2, 1, s, d, causal), dtype, check.rng(71 + s), lab.where())
    outs = _poisoned_outs(2, 1, s, d, dtype, q)
    got = att.attention_flash(q, k, v, do, c, out=outs)
    assert all(g is o for g, o in zip(got, outs)), "the outputs must be written into out"
    _assert_all(got, att.reference(*(t.double().cpu().numpy() for t in (q, k, v, do)), causal), dtype,
                f"S={s} D={d} causal={causal}")


def test_autograd_function_against_torch_autograd():
    """flash_attention as a torch.autograd.Function: backward() through the Triton kernels against torch.autograd on
    the float64 naive version; dO arrives as a non-contiguous view; scale overridden."""
    q, k, v, do, _ = att.make_inputs((1, 2, 37, 64, True), "bfloat16", check.rng(72), lab.where())
    qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    o = att.flash_attention(qq, kk, vv, causal=True, sm_scale=0.2)
    do_t = do.transpose(2, 3).contiguous().transpose(2, 3)          # same values, last dim strided
    assert not do_t.is_contiguous()
    o.backward(do_t)
    want = _autograd64(q, k, v, do, True, scale=0.2)
    _assert_all((o, qq.grad, kk.grad, vv.grad), want[:1] + want[2:], "bfloat16", "autograd.Function",
                names=("o", "dq", "dk", "dv"))


def test_naive_materializes_p_and_matches():
    q, k, v, do, _ = att.make_inputs((1, 2, 23, 64, True), "float16", check.rng(73), lab.where())
    o, lse, p = att.naive_attn_fwd(q, k, v, causal=True)
    assert tuple(p.shape) == (1, 2, 23, 23)
    pf = p.float().cpu().numpy()
    np.testing.assert_allclose(pf.sum(-1), 1.0, atol=5e-3)
    assert (np.triu(np.ones((23, 23)), 1)[None, None] * pf == 0).all(), "causal: P must be 0 above the diagonal"
    ref = att.reference(*(t.double().cpu().numpy() for t in (q, k, v, do)), True)
    check.assert_close(o, ref[0], "float16", what="naive o")
    check.assert_close(lse, ref[1], "float16", what="naive lse")
    # the byte counts the lab prints: S x S dominates the naive version
    assert att.naive_bytes(4, 32, 2048, 128, 2) > 10 * att.flash_bytes(4, 32, 2048, 128, 2)


def _qkv(shape=(1, 2, 8, 64), dtype="float16"):
    import torch

    return tuple(torch.zeros(shape, dtype=getattr(torch, dtype)) for _ in range(3))


@interpreter_only
def test_validation_errors():
    import torch

    q, k, v = _qkv()
    with pytest.raises(ValueError, match="shapes must match"):
        att.flash_attn_fwd(q, k[:, :, :5], v)
    with pytest.raises(ValueError, match="head dim"):
        att.flash_attn_fwd(*_qkv((1, 2, 8, 48)))
    with pytest.raises(TypeError, match="dtype float32"):
        att.flash_attn_fwd(*_qkv(dtype="float32"))
    with pytest.raises(TypeError, match="dtypes must match"):
        att.flash_attn_fwd(q, k.bfloat16(), v)
    with pytest.raises(ValueError, match="last .head. dimension must be contiguous"):
        att.flash_attn_fwd(q, torch.zeros(1, 2, 64, 8, dtype=torch.float16).transpose(2, 3), v)
    with pytest.raises(TypeError, match="torch"):
        att.flash_attn_fwd(np.zeros((1, 2, 8, 64), np.float16), k, v)
    with pytest.raises(ValueError, match="4-D"):
        att.flash_attn_fwd(q[0], k[0], v[0])
    with pytest.raises(ValueError, match="empty"):
        att.flash_attn_fwd(*_qkv((1, 2, 0, 64)))
    with pytest.raises(TypeError, match="causal"):
        att.flash_attn_fwd(q, k, v, causal="yes")
    with pytest.raises(ValueError, match="sm_scale"):
        att.flash_attn_fwd(q, k, v, sm_scale=-1.0)
    with pytest.raises(ValueError, match="multiple of BLOCK_N"):
        att.flash_attn_fwd(q, k, v, config={"BLOCK_M": 32, "BLOCK_N": 64, "num_warps": 4, "num_stages": 1})
    with pytest.raises(ValueError, match="expected shape"):
        att.flash_attn_fwd(q, k, v, out=(torch.empty(1, 2, 9, 64, dtype=torch.float16), None))
    o, lse = torch.zeros_like(q), torch.zeros(1, 2, 8)
    with pytest.raises(ValueError, match="lse: expected shape"):
        att.flash_attn_bwd(q, q, k, v, o, torch.zeros(1, 2, 4))
    with pytest.raises(TypeError, match="lse"):
        att.flash_attn_bwd(q, q, k, v, o, lse.double())
    with pytest.raises(ValueError, match="do: expected shape"):
        att.flash_attn_bwd(q[:, :1], q, k, v, o, lse)
    with pytest.raises(ValueError, match="do: expected shape"):
        att.attention_naive(q, k, v, q[:, :1], False)
    with pytest.raises(TypeError, match="out: expected a 5-tuple"):
        att.attention_flash(q, k, v, q, False, out=(o, lse))


def test_cuda_variants_are_guarded():
    """Every CUDA C rung is a variant, checked like the Triton ones; without a GPU (or below sm_80 for rungs 01, 02,
    02w; off sm_90 for the Hopper rungs 03-07) each says why it cannot run."""
    from phase4_optimization.lab06_attention import hopper

    cuda_v = [v for v in att.VARIANTS if v.impl == "cuda"]
    assert [v.name.split()[1] for v in cuda_v] == ["01", "02", "02w", "03", "04", "05", "06", "07", "08"]
    for v in cuda_v:
        ok, why = v.available()
        reason = att.unavailable_reason() if v.name.split()[1] in ("01", "02", "02w") else hopper.unavailable_reason()
        assert ok == (reason is None)
        assert ok or why


@interpreter_only
def test_forward_compiles_for_sm90_with_wgmma_and_no_spills():
    """The causal D = 128 forward at its GPU tile (128 x 64, 8 warps, 3 stages), compiled ahead of time for sm_90:
    it must use wgmma and spill nothing (the full report, backward included, is in main() without --quick)."""
    r = attb.compile_summary(attb.aot_kernel("fwd", 128, True, cc=90))
    assert r["wgmma"] > 0, r
    assert r["local B"] == 0, r
    assert r["shared B"] <= 227 * 1024, r


@interpreter_only
@pytest.mark.parametrize("kind, d", [("fwd", 96), ("bwd_dkdv", 256), ("bwd_dq", 256)])
def test_other_head_dims_compile_for_sm90_without_spills(kind, d):
    """A padded head dim (96 in a 128-wide tile) and the largest (256, its own smaller tiles) at their GPU defaults:
    wgmma, no local memory, shared memory within an sm_90 block's 227 KiB."""
    r = attb.compile_summary(attb.aot_kernel(kind, d, True, cc=90))
    assert r["wgmma"] > 0 and r["local B"] == 0 and r["shared B"] <= 227 * 1024, r


@interpreter_only
def test_backward_kernels_with_shared_helpers_compile_ahead_of_time():
    """dK/dV and dQ call the @triton.jit helpers they share with the forward (_load_rows, _attends, _mma_operand, ...):
    common.triton_support swaps the interpreter's helpers for the compiler's, so the reports still compile (wgmma, no
    spill) in a process whose kernels run in the interpreter - after an interpreted launch too."""
    q, k, v, do, c = att.make_inputs((1, 1, 17, 64, True), "bfloat16", check.rng(75), "cpu")
    att.attention_flash(q, k, v, do, c)                       # the interpreter patches triton.language here
    for kind in ("bwd_dkdv", "bwd_dq"):
        r = attb.compile_summary(attb.aot_kernel(kind, 64, True, cc=90))
        assert r["wgmma"] > 0 and r["local B"] == 0, r


def test_cli_quick_exits_0(capsys):
    assert lab_main(att)(["--quick", "--no-json", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "the two numbers" in out and "kernels.cu compiled with NVRTC" in out
    assert "one warp, one K/V tile" in out and "tiling" in out


def test_replot_draws_the_committed_json(tmp_path):
    """--replot redraws the plot from results/h200/ without a GPU (rows of the committed JSON, which predates the
    CUDA C shapes' rows: their plot appears only once they are measured)."""
    replot(lab_main(att), tmp_path)
    assert os.path.getsize(tmp_path / f"{att.LAB}.png") > 10_000


def _figures(monkeypatch) -> list:
    """The figures a plot function draws, kept open (it closes them after saving)."""
    import matplotlib.pyplot as plt

    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    return figs


def test_attention_plot_has_a_legend_and_the_shapes_in_its_title(tmp_path, monkeypatch):
    """Drawn from the committed JSON: a legend that names every bar colour (ours vs each SDPA backend), and a title
    that gives each shape measured as B H S D, the dtype and causal or not."""
    import json

    from matplotlib.colors import to_hex

    with open(os.path.join(H200, f"{att.LAB}.json")) as f:
        data = json.load(f)
    figs = _figures(monkeypatch)
    attb.plot(data, str(tmp_path))
    fig = figs[0]
    assert len(fig.legends) == 1
    leg = fig.legends[0]
    names = [t.get_text() for t in leg.get_texts()]
    assert {"ours: Triton flash attention", "ours: CUDA C mma.sync flash", "torch SDPA, cuDNN backend",
            "torch SDPA, FlashAttention-2 backend"} <= set(names)
    assert {to_hex(p.get_facecolor()) for p in fig.axes[0].patches} <= {to_hex(h.get_facecolor())
                                                                         for h in leg.legend_handles}
    title = fig.get_suptitle()
    for shape in ("B4 H32 S4096 D128 bf16: fwd non-causal, fwd causal, bwd non-causal",
                  "B8 H32 S2048 D64 bf16: fwd non-causal", "B4 H32 S2048 D128 bf16: naive vs flash (non-causal)"):
        assert shape in title, title


def test_attention_shape_text():
    assert attb.shape_text([4, 32, 4096, 128], "bfloat16", True) == "B4 H32 S4096 D128 bf16 causal"
    assert attb.shape_text(None, None, False) == "non-causal" and attb.shape_text([1, 2], None, None) == ""
    assert attb.contender("attn_02_mma_pipelined (8 warps)", "cuda")[0] == "ours: CUDA C mma.sync flash"
    assert attb.contender("torch SDPA cuDNN fwd", "peer")[1] == "dimgray"


def test_plot_draws_the_cuda_shapes_when_measured(tmp_path):
    rows = [{"case": "fwd D128 non-causal", "variant": "triton flash fwd", "impl": "triton", "tflops": 400.0},
            {"variant": "attn_02_mma_pipelined", "impl": "cuda", "part": "cuda shapes", "causal": False,
             "shape": [4, 32, 4096, 128], "tflops": 300.0},
            {"variant": "torch SDPA flash", "impl": "peer", "part": "cuda shapes", "causal": True,
             "shape": [4, 32, 4096, 128], "tflops": 310.0}]
    paths = attb.plot({"rows": rows, "gpu": "a GPU"}, str(tmp_path))
    assert [os.path.basename(p) for p in paths] == [f"{att.LAB}.png", f"{att.LAB}_cuda.png"]


def test_cuda_shapes_plot_has_a_legend_and_its_shape_in_the_title(tmp_path, monkeypatch):
    rows = [{"variant": "attn_02_mma_pipelined", "impl": "cuda", "part": "cuda shapes", "causal": False,
             "shape": [4, 32, 4096, 128], "dtype": "bfloat16", "tflops": 300.0},
            {"variant": "torch SDPA flash", "impl": "peer", "part": "cuda shapes", "causal": True,
             "shape": [4, 32, 4096, 128], "dtype": "bfloat16", "tflops": 310.0}]
    figs = _figures(monkeypatch)
    attb.plot({"rows": rows, "gpu": "a GPU"}, str(tmp_path))
    fig = figs[-1]
    assert "B4 H32 S4096 D128 bf16, causal and non-causal" in fig.get_suptitle()
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["ours: CUDA C mma.sync flash",
                                                                  "torch SDPA, FlashAttention-2 backend"]


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
# every (S, D, causal) once, dtypes alternating (each new combination compiles three kernels: keep the tier short)
GPU_CASES = [(s, d, causal, ("bfloat16", "float16")[(i + j + int(causal)) % 2])
             for i, s in enumerate((1, 127, 1000, 4097)) for j, d in enumerate((64, 128)) for causal in (False, True)]


@gpu
@pytest.mark.parametrize("s,d,causal,dtype", GPU_CASES)
def test_gpu_flash_against_autograd_on_naive(s, d, causal, dtype):
    """Flash forward + backward on the GPU (default GPU tiles) against torch.autograd on the naive version in
    float64 on the GPU, outputs poisoned."""
    b, h = (1, 1) if s > 1000 else (2, 3)
    q, k, v, do, c = att.make_inputs((b, h, s, d, causal), dtype, check.rng(80 + s + d), "cuda")
    outs = _poisoned_outs(b, h, s, d, dtype, q)
    got = att.attention_flash(q, k, v, do, c, out=outs)
    _assert_all(got, _autograd64(q, k, v, do, causal), dtype, f"S={s} D={d} causal={causal}")


@gpu
def test_gpu_autograd_function_and_strided_inputs():
    import torch

    b, s, h, d = 2, 300, 4, 128
    g = torch.Generator(device="cuda").manual_seed(5)
    base = torch.randn(b, s, 3, h, d, device="cuda", generator=g).bfloat16()       # a fused QKV projection
    q, k, v = (base[:, :, i].transpose(1, 2) for i in range(3))                    # (B, H, S, D) views
    assert not q.is_contiguous() and q.stride(-1) == 1
    do = torch.randn(b, h, s, d, device="cuda", generator=g).bfloat16()
    qq, kk, vv = (t.detach().requires_grad_(True) for t in (q, k, v))
    o = att.flash_attention(qq, kk, vv, causal=True)
    o.backward(do)
    want = _autograd64(q, k, v, do, True)
    _assert_all((o, qq.grad, kk.grad, vv.grad), want[:1] + want[2:], "bfloat16", "strided autograd",
                names=("o", "dq", "dk", "dv"))


@gpu
def test_gpu_naive_matches():
    q, k, v, do, _ = att.make_inputs((2, 2, 1000, 64, True), "bfloat16", check.rng(90), "cuda")
    got = att.attention_naive(q, k, v, do, True)
    _assert_all(got, _autograd64(q, k, v, do, True), "bfloat16", "naive")


def test_forward_writes_into_a_strided_output_view():
    """o may be a (B, H, S, D) view of a (B, S, H, D) buffer (what the transformer-block lab hands in)."""
    import torch

    q, k, v, do, _ = att.make_inputs((2, 3, 19, 64, False), "float16", check.rng(74), lab.where())
    buf = torch.full((2, 19, 3, 64), float("nan"), dtype=torch.float16, device=q.device)
    lse = torch.full((2, 3, 19), float("nan"), device=q.device)
    o, _ = att.flash_attn_fwd(q, k, v, False, out=(buf.permute(0, 2, 1, 3), lse))
    ref = att.reference(*(t.double().cpu().numpy() for t in (q, k, v, do)), False)
    check.assert_close(buf.permute(0, 2, 1, 3), ref[0], "float16", what="o through the view")
    check.assert_close(lse, ref[1], "float16", what="lse")


def test_short_rows_get_an_absolute_floor_that_still_catches_bugs():
    """S <= 16: 16 u absolute (the roundings of O in delta and of P, dS are not small next to a handful of dP);
    longer rows: no floor. An order-1 error on an order-1 gradient fails either way."""
    short, long_ = att.tolerance((1, 1, 3, 64, True), "bfloat16"), att.tolerance((1, 1, 4097, 64, True), "bfloat16")
    assert short.atol == 16 * 2.0**-8 and long_.atol == 0.0
    assert att.tolerance((1, 1, 2, 64, True), "float16").atol == 16 * 2.0**-11
    rng = check.rng(5)
    ref = rng.standard_normal((3, 64))
    assert check.compare(ref + 0.03 * rng.uniform(-1, 1, ref.shape), ref, "bfloat16", short).ok   # seen: 3.2e-2
    wrong = ref.copy()
    wrong[2] = 0.0                                  # one row lost, e.g. a causal mask off by one
    assert not check.compare(wrong, ref, "bfloat16", short).ok


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("k_len", [33, 67, 100])
def test_library_matmul_keeps_nan_rows_apart(dtype, k_len):
    """The naive version's library GEMM on the CPU: a NaN row of P poisons its own row of O = P V and no other.

    torch's CPU 16-bit matmul (oneDNN) on an AMX CPU read past the end of each row when K > 32 and K % 32 != 0, and
    the NaN of one row leaked into its neighbours (CI's CPU failed lab 4.6's NaN test every time). This test runs the
    shape that leaked; on a CPU without AMX it passes either way, on CI's it is the regression test."""
    import torch

    g = np.random.default_rng(3)
    p = torch.from_numpy(g.random((1, 2, 40, k_len)).astype(np.float32)).to(getattr(torch, dtype))
    v = torch.from_numpy(g.standard_normal((1, 2, k_len, 64)).astype(np.float32)).to(getattr(torch, dtype))
    nan_rows = [1, 7, 8, 39]
    p[0, 0, nan_rows, 5] = float("nan")
    p[0, 1, :, 0] = float("nan")                     # a whole head, as a NaN key makes it
    o = att.library_matmul(p, v)
    assert o.dtype == p.dtype
    want = p.double().numpy() @ v.double().numpy()
    got = o.double().numpy()
    assert np.isnan(got[0, 1]).all() and np.isnan(got[0, 0, nan_rows]).all()
    clean = [i for i in range(40) if i not in nan_rows]
    assert np.isfinite(got[0, 0, clean]).all(), "a NaN row of P leaked into another row of O"
    check.assert_close(got[0, 0, clean], want[0, 0, clean], dtype)


# ---------------------------------------------------------------------------------------------------------------------
# The float64 reference for grouped-query attention and Sq != Sk (the bottom-right causal mask), checked itself
# against torch.autograd: what the Triton kernels are checked against in tests/test_phase4_lab06_attention_gqa.py
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hq, hkv, sq, sk, causal", [(4, 2, 5, 9, True), (4, 1, 7, 7, True), (6, 3, 9, 4, False),
                                                     (2, 2, 3, 8, True), (4, 4, 8, 8, False)])
def test_reference_gqa_and_unequal_lengths_against_autograd(hq, hkv, sq, sk, causal):
    import torch

    rng = check.rng(71)
    b, d = 2, 8
    q, do = (torch.from_numpy(rng.standard_normal((b, hq, sq, d))) for _ in range(2))
    k, v = (torch.from_numpy(rng.standard_normal((b, hkv, sk, d))) for _ in range(2))
    for t in (q, k, v):
        t.requires_grad_(True)
    g = hq // hkv
    kx, vx = k.repeat_interleave(g, dim=1), v.repeat_interleave(g, dim=1)
    s = q @ kx.transpose(-1, -2) / math.sqrt(d)
    if causal:     # bottom-right: key j for query i when j <= i + sk - sq (every row keeps a key here: sq <= sk)
        keep = torch.arange(sk)[None, :] <= torch.arange(sq)[:, None] + (sk - sq)
        s = s.masked_fill(~keep, float("-inf"))
    o = torch.softmax(s, dim=-1) @ vx
    o.backward(do)
    got = att.reference(q.detach().numpy(), k.detach().numpy(), v.detach().numpy(), do.numpy(), causal)
    want = (o.detach(), torch.logsumexp(s.detach(), dim=-1), q.grad, k.grad, v.grad)
    for name, a, w in zip(("o", "lse", "dq", "dk", "dv"), got, want):
        np.testing.assert_allclose(a, w.numpy(), rtol=1e-10, atol=1e-12, err_msg=name)


def test_reference_rows_with_no_key():
    # causal with Sq > Sk: query i attends keys j <= i - (Sq - Sk); the first Sq - Sk rows attend none
    rng = check.rng(72)
    q, do = (rng.standard_normal((1, 2, 6, 4)) for _ in range(2))
    k, v = (rng.standard_normal((1, 1, 3, 4)) for _ in range(2))
    o, lse, dq, dk, dv = att.reference(q, k, v, do, causal=True)
    assert (o[:, :, :3] == 0).all() and np.isneginf(lse[:, :, :3]).all() and (dq[:, :, :3] == 0).all()
    assert np.isfinite(o).all() and np.isfinite(dk).all() and np.isfinite(dv).all()
    assert np.isfinite(lse[:, :, 3:]).all()
    # row 3 attends key 0 only: its output is v[0], for both query heads
    np.testing.assert_allclose(o[0, :, 3], np.repeat(v[0, :, 0], 2, axis=0), rtol=1e-12)
    assert att.causal_mask(2, 2).tolist() == [[True, False], [True, True]]


@pytest.mark.parametrize("shapes, match", [(((1, 4, 3, 8), (1, 3, 3, 8), (1, 3, 3, 8)), "divide"),
                                           (((1, 4, 3, 8), (1, 2, 3, 8), (1, 2, 4, 8)), "v: shape"),
                                           (((1, 4, 3, 8), (2, 2, 3, 8), (2, 2, 3, 8)), "batch"),
                                           (((1, 4, 3, 8), (1, 2, 3, 4), (1, 2, 3, 4)), "head dim")])
def test_reference_refuses_shapes_that_do_not_fit(shapes, match):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=match):
        att.reference(q, k, v, np.zeros(shapes[0]))
