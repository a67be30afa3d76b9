"""Lab 4.7's training step (backward.py): the block's forward keeping its activations and its backward, from lab 4.6's
attention backward, lab 3.4's layernorm backward (fused with the skip gradient and bias sums) and the strided GEMM
with the backward's epilogues, against torch.autograd.

The rule, for y, dX and every weight and bias gradient g (relative norm errors to a float64 torch-autograd run of
the same block on the same rounded inputs, e = ||g - g64|| / ||g64||):
    e(ours) <= F x e(torch, same dtype) + floor,
where torch is the plain module (lab.torch_module) with torch.autograd in the same 16-bit dtype (the CPU's kernels
here, SDPA and cuBLAS on a GPU). F = 3 where both round to nearest: fp16 everywhere, bf16 on a GPU. Measured ratios,
6 seeds, sizes (1, 5, 64, 2) and (2, 17, 96, 3): fp16 0.69-1.16. In the interpreter a bf16 store truncates instead
of rounding to nearest (Triton 3.9's interpreter converts fp32 to bf16 by dropping bits: rms error ulp / sqrt(3)
against ulp / (2 sqrt(3)), twice the error of every stored activation and gradient), so bf16 on the CPU takes
F = 2 x 3 = 6; measured 1.8-4.5 there. floor = u / 20 (u = 2^-8 bf16, 2^-11 fp16: 2e-4 and 2.4e-5), for a gradient
whose torch error could vanish (an exactly representable result); torch's own errors measured >= 1.4e-3 (bf16) and
1.8e-4 (fp16), so the floor is under a seventh of them and never decides a case. Element by element (a single wrong
element hides in a norm): max |g - g64| <= 2 F x torch's max + floor x max |g64|; measured max ratios fp16 0.58-1.60,
bf16 in the interpreter 2.0-5.9 (5 seeds). Every output and intermediate buffer is NaN-filled before the run, so an
unwritten element fails (a NaN fails both rules).

Sizes: D = d / H = 32, the smallest head dim lab 4.6's Triton kernels take (16 is not one); S 5 and 17, not multiples
of any tile; d 64 and 96 (3d = 288, 4d = 384 columns: ragged and multi-tile). CPU tier a few seconds a case.
"""
import math

import numpy as np
import pytest

from common import check, device, lab
from phase4_optimization.lab07_transformer_block import backward as B
from phase4_optimization.lab07_transformer_block import backward_kernels as K
from phase4_optimization.lab07_transformer_block import lab as tb
from phase4_optimization.lab07_transformer_block import train_bench as TB

ROUNDOFF = {"bfloat16": 2.0**-8, "float16": 2.0**-11}


def _case(size, dtype, seed):
    import torch

    rng = check.rng(seed)
    x, h, *w = tb.make_inputs(size, dtype, rng, lab.where())
    dy = torch.from_numpy(rng.standard_normal(tuple(x.shape)).astype(np.float32)).to(x.device, x.dtype)
    return x, h, w, dy


def _rel(a, ref) -> float:
    a = lab._np64(a)
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def _check_step(size, dtype, seed, factor, alternatives: bool = False, **kw):
    x, h, w, dy = _case(size, dtype, seed)
    plan = B.TrainPlan(x, dy, h, *w, **kw)
    if alternatives:         # every backward GEMM stage with a second kernel on it, as pick_gemm_kernels may leave it
        assert plan.gemm_alternatives
        plan.bwd_stages = [(n, k, plan.gemm_alternatives[n][1] if n in plan.gemm_alternatives else f)
                           for n, k, f in plan.bwd_stages]
    keys = ("y", "z", "f", "dz", "dg", "dh", "do", "heads", "dqkv", "da", "df")     # df: the wgmma dZ stage's (sm_90)
    for t in [*plan.grads.values(), *(plan.buffers[k] for k in keys if k in plan.buffers)]:
        check.poison(t)
    y, grads = plan.run()
    y64, g64 = B.reference_grads(x, h, *w, dy=dy)
    yt, gt = B.torch_grads(x, h, *w, dy=dy)
    floor = ROUNDOFF[dtype] / 20
    report = []
    for name, ours, peer, ref in [("y", y, yt, y64), *((k, grads[k], gt[k], g64[k]) for k in g64)]:
        assert tuple(ours.shape) == ref.shape, name
        e_ours, e_peer = _rel(ours, ref), _rel(peer, ref)
        m_ours, m_peer = (float(np.abs(lab._np64(t) - ref).max()) for t in (ours, peer))
        report.append(f"{name}: ours {e_ours:.2e} torch {e_peer:.2e}")
        assert e_ours <= factor * e_peer + floor, f"{name}: ours {e_ours:.2e} > {factor} x torch {e_peer:.2e}"
        assert m_ours <= 2 * factor * m_peer + floor * np.abs(ref).max(), \
            f"{name}: largest error ours {m_ours:.2e} > {2 * factor} x torch's {m_peer:.2e}"
    return report


@pytest.mark.parametrize("size,dtype", [((1, 5, 64, 2), "float16"), ((2, 17, 96, 3), "float16"),
                                        ((2, 17, 96, 3), "bfloat16")])
def test_train_step_matches_autograd(size, dtype):
    """Every gradient (and y) of the step against float64 autograd, within F x the same-dtype torch module's error
    (F = 3; 6 for bf16 in the interpreter, whose bf16 stores truncate: the module docstring has the numbers)."""
    factor = 6 if dtype == "bfloat16" and not device.has_gpu() else 3
    _check_step(size, dtype, 31, factor)


SMALL = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2, num_warps=4, num_stages=1)


def _gelu(z):
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z ** 3)))


def _gelu_grad(z):
    c = math.sqrt(2 / math.pi)
    t = np.tanh(c * (z + 0.044715 * z ** 3))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_grad_gemm_layouts_epilogues_and_split_k(dtype):
    """The GEMM on transposed views (A = X^T with stride_am 1, B = W^T with stride_bk 1), small tiles so M, N and K
    each span several ragged tiles: plain (split-K 1 and 3), dZ = product * gelu'(z) with the column sums of the
    stored dZ, and the forward's bias + GELU keeping z; against float64 NumPy, outputs poisoned."""
    import torch

    rng = check.rng(5)
    tdt = getattr(torch, dtype)
    m, n, k = 45, 70, 37
    t = (lambda a: torch.from_numpy(np.asarray(a, np.float32)).to(lab.where()).to(tdt))
    a = t(rng.standard_normal((k, m))).t()
    b = t(rng.standard_normal((n, k))).t()
    assert a.stride()[0] == 1 and b.stride()[0] == 1
    ref = lab._np64(a) @ lab._np64(b)
    tol = check.Tol(1e-2, 5e-2) if dtype == "bfloat16" else check.Tol(2e-3, 1e-2)
    new = (lambda *shape: check.poisoned(shape, dtype, a))
    for split in (1, 3):
        c = new(m, n)
        g = B.Gemm(a, b, c, weight_grad=True)
        g.config, g.split_k = SMALL, split
        check.assert_close(g(), ref, dtype, tol, what=f"plain, split-K {split}")
    z = t(2 * rng.standard_normal((m, n)))
    c = new(m, n)
    g = B.Gemm(a, b, c, epi=K.EPI_DGELU, z=z, colsum=True)
    g.config = SMALL
    check.assert_close(g(), ref * _gelu_grad(lab._np64(z)), dtype, tol, what="dgelu")
    sums = new(n)
    B.colsum(g.part, sums)
    assert tuple(g.part.shape) == (2, n)
    check.assert_close(sums, lab._np64(c).sum(axis=0), dtype, tol, what="column sums of the stored dZ")
    bias = t(rng.standard_normal(n))
    zz, c = new(m, n), new(m, n)
    g = B.Gemm(a, b, c, epi=K.EPI_GELU_KEEP, z=zz, bias=bias)
    g.config = SMALL
    g()
    zr = ref + lab._np64(bias)
    check.assert_close(zz, zr, dtype, tol, what="kept z")
    check.assert_close(c, _gelu(zr), dtype, tol, what="gelu(z)")
    with pytest.raises(ValueError, match="split-K"):
        g.split_k = 2
        g()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("m,n,rows", [(1, 1, 16), (37, 130, 64), (131, 257, 32)])
def test_dgelu_pass_matches_the_fused_epilogue_rule(dtype, m, n, rows):
    """dgelu_colsum (the proj dX stage's second half when its GEMM runs on wgmma): dZ = dF * gelu'(z) against float64
    inside poisoned guard bands, and its column sums of the stored dZ in `rows`-row blocks (Gemm's COLSUM layout) -
    sizes of 1, primes, neither a multiple of the 16-row step nor of the 128-column tile."""
    import torch

    rng = check.rng(m + n)
    t = (lambda a: torch.from_numpy(np.asarray(a, np.float32)).to(lab.where()).to(getattr(torch, dtype)))
    df, z = t(rng.standard_normal((m, n))), t(2 * rng.standard_normal((m, n)))
    dz = check.guarded((m, n), dtype, df)
    blocks = -(-m // rows)
    part = check.guarded((blocks, n), "float32", df)
    B.dgelu_colsum(df, z, dz, part, rows)
    tol = check.Tol(1e-2, 2e-2) if dtype == "bfloat16" else check.Tol(2e-3, 4e-3)
    check.assert_close(dz, lab._np64(df) * _gelu_grad(lab._np64(z)), dtype, tol, what="dgelu")
    stored = np.pad(lab._np64(dz), ((0, blocks * rows - m), (0, 0))).reshape(blocks, rows, n).sum(axis=1)
    check.assert_close(part, stored, "float32", check.Tol(1e-5, 1e-5), what="column sums of the stored dZ")
    assert check.guard_damage(dz) == "" and check.guard_damage(part) == ""
    with pytest.raises(ValueError, match="part"):
        B.dgelu_colsum(df, z, dz, part[:, :-1] if n > 1 else part[:0], rows)
    with pytest.raises(ValueError, match="one shape"):
        B.dgelu_colsum(df, z[:, :0], dz, part, rows)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fused_layernorm_backward_is_lab_3_4s_plus_the_skip(dtype):
    """ln_bwd_residual_kernel's dx is lab 3.4's layernorm_bwd dx + the skip gradient, its dw, db are lab 3.4's, and
    its extra column sums are those of the skip gradient and of the stored dx (ragged width 72, 9 rows)."""
    import torch

    ln = tb._kernels()[0]
    rng = check.rng(9)
    rows, n = 9, 72
    t = (lambda a: torch.from_numpy(np.asarray(a, np.float32)).to(lab.where()).to(getattr(torch, dtype)))
    x, dy, res = (t(rng.standard_normal((rows, n))) for _ in range(3))
    w, b = t(1 + 0.1 * rng.standard_normal(n)), t(0.1 * rng.standard_normal(n))
    _, mean, rstd = ln.layernorm_fwd(x, w, b)
    dx34, dw34, db34 = ln.layernorm_bwd(dy, x, w, mean, rstd)
    out, sums = check.poisoned((rows, n), dtype, x), check.poisoned((4 * n,), dtype, x)
    op = B.LnBackward(x, w, dy, res, mean, rstd, out, sums, sum_res=True, sum_out=True)
    op()
    op.finish()
    tol = check.Tol(1e-2, 5e-2) if dtype == "bfloat16" else check.Tol(2e-3, 1e-2)
    want = lab._np64(dx34) + lab._np64(res)
    check.assert_close(out, want, dtype, tol, what="dx + skip")
    for i, (name, ref) in enumerate((("dw", lab._np64(dw34)), ("db", lab._np64(db34)),
                                     ("sum res", lab._np64(res).sum(0)), ("sum dx", lab._np64(out).sum(0)))):
        check.assert_close(sums[i * n:(i + 1) * n], ref, dtype, tol, what=name)


def test_gelu_derivative_constants_are_the_derivative():
    """_gelu_tanh_grad's folded form - s = 1 / (1 + exp2(z (K1 + K2 z^2))), q = z (Q1 + Q2 z^2), s + q s (1 - s) -
    is d/dz of gelu_tanh in float64 (the centered difference of tb's reference to 1e-8), with the constants the
    kernel holds (pinned: a change to one must be made to the other)."""
    k1, k2, q1, q2 = -2.302208198144325, -0.1029432395800235, 1.5957691216057308, 0.21406444881780076
    c, a = math.sqrt(2 / math.pi), 0.044715
    assert (k1, k2, q1, q2) == pytest.approx((-2 * c / math.log(2), -2 * c * a / math.log(2), 2 * c, 6 * c * a),
                                             rel=1e-15)
    z = np.linspace(-9.0, 9.0, 3601)
    s = 1 / (1 + np.exp2(z * (k1 + k2 * z * z)))
    q = z * (q1 + q2 * z * z)
    h = 1e-5
    fd = (tb.gelu_tanh(z + h) - tb.gelu_tanh(z - h)) / (2 * h)
    np.testing.assert_allclose(s + q * s * (1 - s), fd, rtol=1e-7, atol=1e-8)
    src = open(K.__file__).read()
    assert "tl.exp2(z * (-2.302208198144325 + -0.1029432395800235 * z2))" in src
    assert "q = z * (1.5957691216057308 + 0.21406444881780076 * z2)" in src


def test_train_step_checks_dy_and_keeps_the_forward():
    x, h, w, dy = _case((1, 5, 64, 2), "float16", 1)
    with pytest.raises(ValueError, match="dy"):
        B.TrainPlan(x, dy[:, :4], h, *w)
    with pytest.raises(ValueError, match="dy"):
        B.TrainPlan(x, dy.float(), h, *w)
    with pytest.raises(ValueError, match="attention_bwd: expected 'triton', 'auto' or a Hopper rung"):
        B.TrainPlan(x, dy, h, *w, attention_bwd="cudnn")
    with pytest.raises(ValueError, match="proj_dx: expected one of"):
        B.TrainPlan(x, dy, h, *w, proj_dx="epilogue")
    plan = B.TrainPlan(x, dy, h, *w)
    names = [s[0] for s in plan.stages]
    assert "FC GEMM + bias + GELU, Z kept" in names and len(names) == 7 and len(plan.bwd_stages) == 13
    assert set(plan.grads) == {"x", *tb.PARAM_NAMES}
    assert plan.gemm_kernels == {n: "triton" for n in plan.gemms}       # the Triton grad GEMM unless a pick says so
    assert set(plan.gemm_alternatives) <= {"FC dX GEMM", "out dX GEMM", "QKV dX GEMM",
                                           "proj dX GEMM + GELU' + bias sums"}
    assert bool(plan.gemm_alternatives) is (tb._wgmma_unavailable(x) is None)
    for key in ("mean1", "rstd1", "mean2", "rstd2"):          # the forward keeps the LN statistics
        assert tuple(plan.buffers[key].shape) == (5,)


def test_flops_split_and_prediction():
    """The step's FLOPs are 3x the forward's GEMMs + 3.5x its attention (5.43 TFLOP at the main case); split-K only
    where a weight gradient's tiles leave half the SMs idle; the prediction and the memory fit on an H100."""
    assert B.train_flops(8, 2048, 2048, 16) == 3 * 24.0 * 16384 * 2048 ** 2 + 3.5 * 2.0 * 8 * 16 * 2048 ** 2 * 128
    assert abs(B.train_flops(8, 2048, 2048, 16) / 1e12 - 5.43) < 0.01
    big = dict(BLOCK_M=128, BLOCK_N=256)
    assert B.default_split(1024, 1024, 16384, big, 132) == 4          # 32 tiles -> 128 programs
    assert B.default_split(2048, 8192, 16384, big, 132) == 1          # 512 tiles
    assert B.default_split(1024, 1024, 1024, big, 132) == 1           # too little K to split
    gpu = device.profile_info("h100-sxm")
    p = TB.predict_train(gpu)
    assert any("training step's floor" in k for k in p) and all(TB.fit_case(c, gpu)[1] == "" for c in tb.BENCH_CASES)
    assert set(TB.TRAIN_TARGETS) == set(tb.BENCH_CASES)


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier: medium sizes, bf16 and fp16, the rule with F = 3 against the module on the GPU (cuBLAS, SDPA)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("size,dtype", [((2, 129, 256, 4), "bfloat16"), ((2, 129, 256, 4), "float16"),
                                        ((1, 1000, 512, 4), "bfloat16"), ((3, 200, 384, 3), "float16")])
def test_train_step_matches_autograd_on_gpu(size, dtype):
    _check_step(size, dtype, 41, 3)


@pytest.mark.gpu
def test_train_step_with_the_triton_attention_forward_on_gpu():
    """The same rule with lab 4.6's Triton forward (where the Hopper one is the default, its LSE feeds the backward
    just as well)."""
    _check_step((2, 300, 256, 2), "bfloat16", 43, 3, attention="triton")


def _hopper_ready() -> bool:
    from phase4_optimization.lab06_attention import hopper

    return device.has_gpu() and not hopper.unavailable_reason()


@pytest.mark.gpu
@pytest.mark.skipif(not _hopper_ready(), reason="the Hopper attention backward needs an sm_90 GPU")
@pytest.mark.parametrize("rung", ["01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"])
def test_train_step_with_the_hopper_attention_backward_on_gpu(rung):
    """The step with lab 4.6's Hopper CUDA C backward in place of the Triton one (D = 128 and 64), the same rule."""
    _check_step((2, 129, 256, 2), "bfloat16", 49, 3, attention_bwd=rung)
    _check_step((1, 200, 256, 4), "float16", 51, 3, attention_bwd=rung)


@pytest.mark.gpu
@pytest.mark.skipif(not _hopper_ready(), reason="lab 4.3's wgmma GEMM needs an sm_90 GPU")
@pytest.mark.parametrize("proj_dx", B.PROJ_DX)
@pytest.mark.parametrize("size,dtype", [((2, 129, 256, 4), "bfloat16"), ((1, 77, 160, 2), "float16")])
def test_train_step_with_the_wgmma_input_gradients_on_gpu(size, dtype, proj_dx):
    """The input gradients' GEMMs on lab 4.3's wgmma kernel reading W as B^T in place (dZ's with GELU' and the bias
    sums in its epilogue, or followed by dgelu_colsum's pass), the same rule (head dim 80 at d = 160: N = d not a
    multiple of the 256-wide tile). Every head dim the attention takes is a multiple of 8, so d and 4d are too and
    no stage takes the padded copy; lab 4.3's tests cover that path (K = 13)."""
    _check_step(size, dtype, 53, 3, alternatives=True, proj_dx=proj_dx)


@pytest.mark.gpu
def test_tuned_tiles_keep_the_answer_on_gpu():
    """TrainPlan.tune picks a tile (and split-K) per GEMM stage by timing; the step's gradients are the same within
    rounding afterwards."""
    import torch

    x, h, w, dy = _case((2, 256, 512, 4), "bfloat16", 47)
    plan = B.TrainPlan(x, dy, h, *w)
    _, before = plan.run()
    before = {k: v.clone() for k, v in before.items()}
    fu = tb._kernels()[1]
    rows = plan.tune(fu.LINEAR_CONFIGS[3:4], rep_ms=5.0)
    assert rows and all(g.config is not None for g in plan.gemms.values())
    _, after = plan.run()
    for k, v in after.items():
        rel = float((v.float() - before[k].float()).norm() / before[k].float().norm())
        assert rel < 2e-2 and torch.isfinite(v).all(), k


def _grad_gemm_resources(cfg: dict, epi: int, cc: int) -> dict:
    """grad_gemm_kernel compiled for `cc` (no GPU needed) as the proj dX stage launches it: bf16, A = dY row-major and
    B = W^T (both unit strides along K, which a launch specializes), COLSUM with the dGELU epilogue, pointers and
    sizes 16-divisible as the bench's are. Its registers and stack (spills) per thread."""
    from common.triton_support import aot, cubin_resources

    sig = {n: "*bf16" for n in ("a_ptr", "b_ptr", "c_ptr", "z_ptr", "bias_ptr")}
    sig.update(part_ptr="*fp32", M="i32", N="i32", K="i32", stride_am="i32", stride_ak="constexpr",
               stride_bk="constexpr", stride_bn="i32", stride_cm="i32")
    cx = dict(stride_ak=1, stride_bk=1, EPI=epi, HAS_BIAS=False, COLSUM=epi == K.EPI_DGELU, SPLIT_K=1,
              BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"], GROUP_M=cfg["GROUP_M"],
              EVEN_K=True, EVEN_MN=True, INDEX_64=False, UPCAST=False)
    sig.update({name: "constexpr" for name in cx})
    div = ("a_ptr", "b_ptr", "c_ptr", "z_ptr", "bias_ptr", "part_ptr", "M", "N", "K", "stride_am", "stride_bn",
           "stride_cm")
    k = aot(K.grad_gemm_kernel, sig, cx, cc=cc, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
            divisible_by_16=div)
    return cubin_resources(k.asm["cubin"])["grad_gemm_kernel"]


def _acc_per_thread(cfg: dict) -> int:
    """A tile's fp32 accumulator elements per thread: BLOCK_M x BLOCK_N over 32 num_warps threads."""
    return cfg["BLOCK_M"] * cfg["BLOCK_N"] // (32 * cfg["num_warps"])


def test_dgelu_stage_default_tile_is_lab_4_2s_and_spills_on_sm_90():
    """The proj dX stage (dZ = dY W^T * gelu'(z), bias sums) at the lab's training case, M N K = 16384 4096 1024:
    its default tile on an H100 (backward._tile, the GPU's limits from its profile) is lab 4.2's, as every stage's,
    and with this epilogue it spills at 255 registers on sm_90 - what the lesson says and the H100's ncu measured;
    the smaller tile that does not spill (64 accumulator elements a thread, a tuning candidate) compiles clean, and
    was the slower of the two there."""
    gpu = device.profile_info("h100-sxm")
    fu = tb._kernels()[1]
    cfg = B._tile(16384, 4096, 1024, "bfloat16", gpu=gpu)
    assert cfg == fu.tile_of(fu.linear_config(16384, 4096, 1024, "bfloat16", gpu=gpu).values, "GEMM_")
    assert _acc_per_thread(cfg) == 128, cfg
    spilled = _grad_gemm_resources(cfg, K.EPI_DGELU, 90)
    assert spilled["REG"] == 255 and spilled["STACK"] > 0, spilled
    small = next(c for c in fu.LINEAR_CONFIGS if _acc_per_thread(c) == 64)
    res = _grad_gemm_resources(small, K.EPI_DGELU, 90)
    assert res["STACK"] == 0 and res["LOCAL"] == 0, (small, res)
