"""Lab 4.7, the transformer block: the float64 reference, the PyTorch peer module and our block agree.

CPU tier: the NumPy reference against the same block written with torch.nn in float64 (checks the reference, the
weight layout the peer module uses and the causal mask), argument validation, and (through tests/test_labs.py) our
block's Triton kernels in the interpreter. GPU tier: our block against the float64 reference and the eager module on
awkward shapes; the benchmark command in its quick form. On every machine: the block is made of labs 3.4, 4.2 and
4.6's kernels, and --replot redraws the committed plot.
"""
import os
import re

import numpy as np
import pytest

from common import check, device, lab
from phase4_optimization.lab07_transformer_block import bench as tbb
from phase4_optimization.lab07_transformer_block import lab as tb
from tests.helpers import H200, lab_main, replot, skip_unless_available


def _inputs(size, dtype="float64", seed=0):
    return tb.make_inputs(size, dtype, np.random.default_rng(seed), "cpu")


@pytest.mark.parametrize("size", [(1, 1, 8, 2), (2, 7, 12, 3), (1, 33, 16, 1)])
def test_reference_matches_a_torch_module_in_float64(size):
    """Two independent writings of the block: NumPy (the reference) and torch.nn (the peer), float64 on the CPU."""
    import torch

    x, h, *w = _inputs(size)
    ref = tb.reference(*[a.numpy() if hasattr(a, "numpy") else a for a in (x, h, *w)])
    with torch.no_grad():
        y = tb.torch_module(x, h, *w)(x).numpy()
    check.assert_close(y, ref, "float64", check.Tol(1e-10, 1e-8), what=f"torch module vs reference {size}")


def test_reference_is_causal():
    """Changing the last token must not change any earlier output; changing the first changes all of them."""
    x, h, *w = _inputs((1, 9, 8, 2))
    args = [a.numpy() if hasattr(a, "numpy") else a for a in (x, h, *w)]
    y0 = tb.reference(*args)
    x1 = args[0].copy()
    x1[0, -1, 0] += 1.0         # one element: a constant added to a whole row would vanish in LN1
    y1 = tb.reference(x1, *args[1:])
    assert np.array_equal(y0[0, :-1], y1[0, :-1])
    assert not np.allclose(y0[0, -1], y1[0, -1])
    x2 = args[0].copy()
    x2[0, 0, 0] += 1.0
    y2 = tb.reference(x2, *args[1:])
    assert not np.allclose(y0[0, 1:], y2[0, 1:])


def test_flops_of_the_main_case():
    # 24 M d^2 for the GEMMs + 2 B H S^2 D for causal attention
    m, d = 8 * 2048, 2048
    assert tb.flops(8, 2048, 2048, 16) == 24.0 * m * d * d + 2.0 * 8 * 16 * 2048 ** 2 * 128


@pytest.mark.parametrize("size,err,match", [
    ((1, 4, 64, 3), ValueError, "multiple"),          # d % H != 0
    ((1, 4, 96, 2), ValueError, "head dim"),          # D = 48: not a head dim the attention kernel takes
])
def test_block_rejects_bad_heads(size, err, match):
    import torch

    bsz, s, d, h = size
    x = torch.zeros(bsz, s, d, dtype=torch.bfloat16)
    p = tb.make_params(d, np.random.default_rng(0))
    w = [torch.from_numpy(p[n]).to(torch.bfloat16) for n in tb.PARAM_NAMES]
    with pytest.raises(err, match=match):
        tb.BlockPlan(x, h, *w)


def test_block_rejects_wrong_weight_shape_and_dtype():
    import torch

    x, h, *w = _inputs((1, 4, 64, 1), "bfloat16")
    bad = list(w)
    bad[2] = torch.zeros(64, 64, dtype=torch.bfloat16)           # w_qkv must be (d, 3d)
    with pytest.raises(ValueError, match="w_qkv"):
        tb.BlockPlan(x, h, *bad)
    bad = list(w)
    bad[0] = bad[0].float()
    with pytest.raises(TypeError, match="ln1_w"):
        tb.BlockPlan(x, h, *bad)
    with pytest.raises(TypeError, match="weights"):
        tb.BlockPlan(x, h, *w[:-1])
    with pytest.raises(ValueError, match="x"):
        tb.BlockPlan(x[0], h, *w)


def test_cli_quick_runs(capsys):
    assert lab_main(tb)(["--quick", "--no-bench", "--no-json", "--no-plot", "--dtype", "bfloat16"]) == 0
    out = capsys.readouterr().out
    assert "the block at B8 S2048 d2048 H16" in out and "ours: LN + fused-epilogue GEMMs" in out


def test_the_block_is_made_of_the_earlier_labs_kernels():
    """Lab 4.7 writes no kernel of its own: lab 3.4's layernorm, lab 4.2's fused GEMMs, lab 4.6's flash attention."""
    ln, fu, at = tb._kernels()
    assert ln is lab.lab_module("phase3_triton", "lab04_layernorm")
    assert fu is lab.lab_module("phase4_optimization", "lab02_fusion")
    assert at is lab.lab_module("phase4_optimization", "lab06_attention")
    assert callable(ln.layernorm_fwd) and callable(fu.linear) and callable(at.flash_attn_fwd)


def test_replot_draws_the_committed_json(tmp_path):
    replot(lab_main(tb), tmp_path)
    assert os.path.getsize(tmp_path / f"{tb.LAB}.png") > 10_000
    assert set(tbb.TARGETS) == set(tbb.BENCH_CASES)


def test_block_plot_legend_clears_the_bars_and_the_floor_is_explained(tmp_path, monkeypatch):
    """Drawn from the committed JSON: one legend, outside both panels (so off every value label), a colour per
    stage, and a note that says what each kind of stage's floor is."""
    import json

    import matplotlib.pyplot as plt

    with open(os.path.join(H200, f"{tb.LAB}.json")) as f:
        data = json.load(f)
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    tbb.plot(data, str(tmp_path))
    fig = figs[0]
    r = fig.canvas.get_renderer()
    assert len(fig.legends) == 1 and all(ax.get_legend() is None for ax in fig.axes)
    leg = fig.legends[0].get_window_extent(r)
    assert not any(leg.overlaps(ax.get_window_extent(r)) for ax in fig.axes)
    stages = list(dict.fromkeys(row["stage"] for row in data["rows"] if "stage" in row and
                                row["stage"] != "sum of stages" and row.get("kind") != "alternative"))
    colors = tbb.stage_colors(stages)
    assert len(set(colors.values())) == len(stages) == 7
    assert not set(colors.values()) & set(tbb.WHOLE_COLORS.values())
    note = " ".join(t.get_text() for t in fig.texts)
    for words in ("floor of a stage", "cuBLAS", "SDPA"):
        assert words in note, note
    assert re.search(r"HBM ceiling \([\d,]+ GB/s\)", note), note      # the ceiling this run measured


def test_floor_note_names_only_the_kinds_present():
    note = tbb.floor_note([{"kind": "memory"}], 4000.0)
    assert "HBM ceiling (4,000 GB/s)" in note and "cuBLAS" not in note and "SDPA" not in note
    assert "(cudnn here)" in tbb.floor_note([{"kind": "attention", "floor": "SDPA cudnn: 474 TFLOP/s"}], None)
    assert tbb.stage_colors(["LN1", "something new"])["something new"] not in tbb.STAGE_COLORS.values()


@pytest.mark.gpu
@pytest.mark.parametrize("size", [(1, 1, 128, 1), (2, 129, 256, 4), (1, 1000, 512, 4)])
def test_block_matches_eager_module_on_gpu(size):
    """Ours and the eager module, both bf16, both against the float64 reference: ours must be as close as torch."""
    x, h, *w = tb.make_inputs(size, "bfloat16", check.rng(7), "cuda")
    ref = tb.reference(*[a.double().cpu().numpy() if hasattr(a, "double") else a for a in (x, h, *w)])
    ours = tb.block_ours(x, h, *w)
    peer = tb.peer_torch_eager(x, h, *w)
    c_ours = check.assert_close(ours, ref, "bfloat16", tb.tolerance(size, "bfloat16"), what="ours")
    c_peer = check.compare(peer, ref, "bfloat16", tb.tolerance(size, "bfloat16"))
    assert c_ours.rel_norm_err <= max(2.0 * c_peer.rel_norm_err, 5e-3), (c_ours.message, c_peer.message)


@pytest.mark.gpu
def test_plan_stages_cover_the_block_on_gpu():
    """Running the stages one by one (how the breakdown times them) gives the block's output."""
    x, h, *w = tb.make_inputs((2, 64, 256, 2), "bfloat16", check.rng(8), "cuda")
    plan = tb.BlockPlan(x, h, *w)
    for _, _, fn in plan.stages:
        fn()
    y = plan.buffers["y"].clone()
    assert device.has_gpu()
    assert (tb.block_ours(x, h, *w) == y).all()


@pytest.mark.parametrize("size", [(2, 37, 64, 2), (1, 20, 96, 1)])
def test_block_takes_other_head_dims(size):
    """d / H = 32 and 96 (a head dim lab 4.6's Triton kernels run in a padded 128-wide tile): the whole block
    against the float64 reference, output poisoned."""
    from common import lab

    x, *rest = tb.make_inputs(size, "bfloat16", np.random.default_rng(3), lab.where())
    ref = tb.reference(*[lab._np64(a) for a in (x, *rest)])
    ours = tb.VARIANTS[0]
    skip_unless_available(ours)
    out = check.poisoned(ref.shape, "bfloat16", x)
    check.assert_close(ours.fn(x, *rest, out=out), ref, "bfloat16", tb.tolerance(size, "bfloat16"),
                       what=f"{size}")


@pytest.mark.parametrize("where", ["last", "middle"])
@pytest.mark.parametrize("variant", [0, 1])
def test_a_nan_token_poisons_later_tokens_only(where, variant):
    """The documented pattern: a non-finite token t reaches the tokens >= t of its sequence (through attention) and
    no earlier one - in the float64 reference (which must not multiply the masked zeros of P by t's NaN value row)
    and in our block (whose flash kernel zeroes a non-finite V row of the diagonal tile for the P V product and
    carries it through the score). The case is longer than the interpreter's 32-row query tile, so the tokens
    before t share t's diagonal tile."""
    from common import lab

    size, dtype = (2, 45, 64, 1), "bfloat16"
    x, *rest = tb.make_inputs(size, dtype, np.random.default_rng(11), lab.where())
    t = size[1] - 1 if where == "last" else size[1] // 2 + 3
    x[1, t, 5] = float("inf")
    x[0, t, 0] = float("nan")
    ref = tb.reference(*[lab._np64(a) for a in (x, *rest)])
    assert np.isnan(ref[:, t:]).all() and np.isfinite(ref[:, :t]).all(), "reference: NaN from token t on, only"
    ours = tb.VARIANTS[variant]
    skip_unless_available(ours)
    out = check.poisoned(ref.shape, dtype, x)
    y = ours.fn(x, *rest, out=out)
    if tb.BlockPlan(x, *rest).attention != "hopper" or variant == 1:
        check.assert_close(y, ref, dtype, tb.tolerance(size, dtype), what=f"NaN/Inf at token {t}")
        return
    # lab 4.6's Hopper forward (FlashAttention-3's and cuDNN's behaviour): a non-finite V row is multiplied by the
    # zero P of the masked rows too, inside the P V wgmma, so the token reaches every row of its 128-row diagonal
    # tile; rows of earlier tiles stay finite and right, rows from t on are NaN. Here t's tile starts at row 0, so a
    # longer sequence with t in its second tile shows the first tile untouched.
    got = lab._np64(y)
    assert np.isnan(got[:, t:]).all() and np.isfinite(got[:, :t // 128 * 128]).all()
    size = (2, 300, 64, 1)
    x, *rest = tb.make_inputs(size, dtype, np.random.default_rng(12), lab.where())
    t = 200 if where == "last" else 150
    x[1, t, 5] = float("inf")
    x[0, t, 0] = float("nan")
    ref = tb.reference(*[lab._np64(a) for a in (x, *rest)])
    y = lab._np64(ours.fn(x, *rest, out=check.poisoned(ref.shape, dtype, x)))
    assert np.isnan(y[:, t:]).all() and np.isfinite(y[:, :128]).all()
    check.assert_close(y[:, :128], ref[:, :128], dtype, tb.tolerance(size, dtype), what="the tile before t's")


def test_wgmma_module_is_lab_4_3s():
    wg = tb._wgmma()
    assert callable(wg.gemm_wgmma) and wg.EPI_BIAS | wg.EPI_GELU | wg.EPI_RES == 7
    assert tb._wgmma_unavailable() == wg.unavailable_reason() or not tb.device.has_gpu()


def test_gemm_choice():
    """The GEMMs are lab 4.2's Triton linear() unless gemm="wgmma" asks for lab 4.3's CUDA C kernel, which runs only
    where that kernel does (an sm_90 GPU, the input on it) and says why elsewhere; then the Triton plan carries the
    wgmma kernel as each GEMM stage's alternative for the benchmark. An unknown choice is refused by name."""
    from common import lab

    x, *rest = tb.make_inputs((1, 5, 128, 2), "bfloat16", np.random.default_rng(0), lab.where())
    why = tb._wgmma_unavailable(x)
    plan = tb.BlockPlan(x, *rest)
    assert plan.gemm == "triton"
    assert sorted(plan.gemm_alternatives) == ([] if why else sorted(tb.BlockPlan.GEMM_KEYS))
    with pytest.raises(ValueError, match="gemm: expected one of"):
        tb.BlockPlan(x, *rest, gemm="cublas")
    if why:
        hint = r"x\.cuda\(\)" if why == "x is not on a GPU" else "gemm: the wgmma kernel cannot run here"
        with pytest.raises((TypeError, ValueError), match=hint):
            tb.BlockPlan(x, *rest, gemm="wgmma")
    else:
        assert tb.BlockPlan(x, *rest, gemm="wgmma").gemm_alternatives == {}


def test_attention_choice():
    """auto takes lab 4.6's Hopper forward only where it runs (an sm_90 GPU, D 64 or 128, the input on the GPU);
    asking for it elsewhere says why; an unknown choice is refused by name."""
    from common import lab

    x, *rest = tb.make_inputs((1, 5, 128, 2), "bfloat16", np.random.default_rng(0), lab.where())
    hopper_here = tb._hopper().unavailable_reason() is None
    assert tb.resolve_attention("auto", 64, x) == ("hopper" if hopper_here else "triton")
    assert tb.resolve_attention("triton", 64, x) == "triton"
    assert tb.resolve_attention("auto", 96, x) == "triton"            # a head dim only the Triton kernel takes
    if not hopper_here:
        with pytest.raises(ValueError, match="attention: the Hopper kernel cannot run here"):
            tb.resolve_attention("hopper", 64, x)
    with pytest.raises(ValueError, match="attention: expected one of"):
        tb.resolve_attention("flash", 64, x)
    with pytest.raises(ValueError, match="attention: expected one of"):
        tb.BlockPlan(x, *rest, attention="flash")
    plan = tb.BlockPlan(x, *rest)
    assert plan.attention in ("hopper", "triton")
    assert (plan.attention_alternative is not None) == (plan.attention == "hopper")


# ---------------------------------------------------------------------------------------------------------------------
# The plan on the GPUs learners have (common.plan; compiling every launch is tests/test_gpu_plans.py's)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture
def no_overrides():
    from common import config

    config.set_overrides([])
    yield
    config.set_overrides([])


def _plan(slug):
    from common import plan

    return plan.make(tb, tbb, device.profile_info(slug))


def test_plan_on_a_t4_runs_only_the_torch_peer(no_overrides):
    p = _plan("t4")
    assert p.running == ["torch module, eager"] and p.launches == []
    why = {v.name: v.why for v in p.skipped}
    assert "sm_80" in why[tb.VARIANTS[0].name] and "Hopper-only" in why[tb.VARIANTS[2].name]
    assert "none on sm_75" in next(iter(p.predictions.values()))


def test_plan_on_an_rtx_4090_uses_the_triton_attention_and_tiles_that_fit(no_overrides):
    p = _plan("rtx-4090")
    assert p.running == [tb.VARIANTS[0].name, "torch module, eager"]
    assert "the same as the variant above" in {v.name: v.why for v in p.skipped}[tb.VARIANTS[1].name]
    kernels = [x.kernel for x in p.launches]
    assert kernels.count("attn_fwd_kernel") == 2 and "linear_tma_kernel" not in kernels        # one per case
    assert kernels.count("layernorm_fwd_kernel") == 4 and kernels.count("linear_kernel") == 8
    attn = next(x for x in p.launches if x.kernel == "attn_fwd_kernel" and x.defines["HEAD_DIM"] == 128)
    assert (attn.defines["BLOCK_N"], attn.num_stages, attn.defines["CAUSAL"]) == (64, 2, True)
    assert attn.grid == (2048 // 128, 8 * 16)
    fu = lab.lab_module("phase4_optimization", "lab02_fusion")
    for x in p.launches:
        if x.kernel == "linear_kernel":
            assert fu.ring_bytes({k: x.defines[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")} |
                                 {"num_stages": x.num_stages}) <= p.gpu.smem_per_block_optin
    assert any("share of the floor" in k for k in p.predictions)


def test_plan_on_an_h200_runs_the_hopper_attention_and_every_variant(no_overrides):
    p = _plan("h200")
    assert not p.skipped
    hop = tb._hopper()
    rung = [x for x in p.launches if x.kernel == hop.KERNELS[hop.DEFAULT_KERNEL]]
    assert len(rung) == 2 and all(x.variant == tb.VARIANTS[0].name and x.arch == "sm_90a" for x in rung)
    assert {x.kernel for x in p.launches if x.variant == tb.VARIANTS[1].name} == {"attn_fwd_kernel"}
    wg = [x for x in p.launches if x.variant == tb.VARIANTS[2].name]
    assert len(wg) == 8 and all(x.kernel == "gemm_wgmma_tma" and x.grid[0] <= p.gpu.sms for x in wg)
    # the untuned GEMMs without a residual run lab 4.2's persistent TMA kernel, one program per SM
    tma = [x for x in p.launches if x.kernel == "linear_tma_kernel"]
    assert len(tma) == 4 and all(x.grid == (p.gpu.sms,) for x in tma)


def test_set_reaches_the_block_through_its_labs_names(no_overrides):
    from common import config

    config.set_overrides(["FWD_BLOCK_N=32"])
    attn = next(x for x in _plan("a100").launches if x.kernel == "attn_fwd_kernel")
    assert attn.defines["BLOCK_N"] == 32 and "--set FWD_BLOCK_N=32" in attn.config_source
    config.set_overrides([])
    attn = next(x for x in _plan("a100").launches if x.kernel == "attn_fwd_kernel")
    assert attn.defines["BLOCK_N"] == 64 and attn.config_source == "default"


def test_a_case_too_big_for_the_gpu_is_scaled_down():
    from common import device as dev

    small = dev.profile_info("rtx-3060")
    huge = (64, 4096, 4096, 32)
    case, note = tb.fit_case(huge, small)
    assert case[1:] == huge[1:] and case[0] < huge[0] and "scaled down" in note
    assert tb.bench_bytes(case) <= 0.6 * small.total_mem_bytes
    for c in tbb.BENCH_CASES:
        assert tb.fit_case(c, small) == (c, "")


def test_pick_gemm_kernels_keeps_the_faster_kernel_per_stage(monkeypatch):
    """stage_picks.pick_gemm_kernels on a stand-in plan (stage functions whose 'time' is known): a GEMM stage whose
    alternative is faster runs the alternative from then on and keeps its old kernel as the alternative; a stage
    whose own kernel is faster, and a stage with no alternative, are left as they are; the rows say both times."""
    from types import SimpleNamespace

    times = {"t_qkv": 2.0, "w_qkv": 1.0, "t_fc": 1.0, "w_fc": 3.0, "ln": 0.1}
    fns = {k: (lambda k_=k: k_) for k in times}
    from phase4_optimization.lab07_transformer_block import stage_picks

    monkeypatch.setattr(stage_picks.bench, "bench", lambda fn, **kw: SimpleNamespace(median_ms=times[fn()]))
    plan = SimpleNamespace(
        stages=[("LN1", "memory", fns["ln"]), ("QKV", "gemm", fns["t_qkv"]), ("FC", "gemm", fns["t_fc"])],
        gemm_kernels={"QKV": "triton", "FC": "triton"},
        gemm_alternatives={"QKV": ("wgmma", fns["w_qkv"]), "FC": ("wgmma", fns["w_fc"])})
    rows = stage_picks.pick_gemm_kernels(plan)
    assert [fn() for _, _, fn in plan.stages] == ["ln", "w_qkv", "t_fc"]
    assert plan.gemm_kernels == {"QKV": "wgmma", "FC": "triton"}
    assert plan.gemm_alternatives["QKV"][0] == "triton" and plan.gemm_alternatives["QKV"][1]() == "t_qkv"
    assert plan.gemm_alternatives["FC"][0] == "wgmma"
    assert rows == [{"stage": "QKV", "triton ms": 2.0, "wgmma ms": 1.0, "picked": "wgmma"},
                    {"stage": "FC", "triton ms": 1.0, "wgmma ms": 3.0, "picked": "triton"}]
    train = SimpleNamespace(bwd_stages=[("FC dX", "gemm", fns["t_qkv"])], gemm_kernels={"FC dX": "triton"},
                            gemm_alternatives={"FC dX": ("wgmma", fns["w_qkv"])})      # a TrainPlan's backward
    assert stage_picks.pick_gemm_kernels(train, train.bwd_stages)[0]["picked"] == "wgmma"
    assert train.bwd_stages[0][2]() == "w_qkv" and train.gemm_kernels == {"FC dX": "wgmma"}
