"""Lab 3.4 (layernorm): the reference against torch.autograd, the kernels under gradcheck, long rows, bad input."""
import numpy as np
import pytest

from common import arrays, check, device
from common import triton_support as ts
from phase3_triton.lab04_layernorm import bench as lnb
from phase3_triton.lab04_layernorm import lab as ln

gpu = pytest.mark.gpu
interpreter_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter test (host arrays); the GPU tier covers "
                                                               "the same on device")


def _torch_grads(x, w, b, dy, eps=ln.EPS):
    """dx, dw, db by torch.autograd through F.layer_norm, in float64 on the CPU."""
    import torch
    import torch.nn.functional as F

    xt, wt, bt = (torch.tensor(np.asarray(a, np.float64), requires_grad=True) for a in (x, w, b))
    y = F.layer_norm(xt, (xt.shape[-1],), wt, bt, eps)
    y.backward(torch.tensor(np.asarray(dy, np.float64)))
    return y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(), bt.grad.numpy()


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier
# ---------------------------------------------------------------------------------------------------------------------
def test_reference_formulas_match_torch_autograd():
    x, w, b, dy = ln.make_inputs((9, 37), "float64", check.rng(60), "cpu")
    y, mean, rstd, dx, dw, db = ln.reference(x, w, b, dy)
    ty, tdx, tdw, tdb = _torch_grads(x, w, b, dy)
    for got, want, what in ((y, ty, "y"), (dx, tdx, "dx"), (dw, tdw, "dw"), (db, tdb, "db")):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=what)
    np.testing.assert_allclose(mean, x.mean(axis=1), rtol=1e-12)


@interpreter_only
@pytest.mark.parametrize("looped", [False, True])
def test_gradcheck_through_the_triton_kernels(looped):
    """torch.autograd.gradcheck: finite differences of the Triton forward vs the Triton backward, in float64."""
    import torch

    g = torch.Generator().manual_seed(61)
    x = (torch.randn(3, 6, generator=g, dtype=torch.float64) * 2 + 3).requires_grad_()
    w = (1 + 0.2 * torch.randn(6, generator=g, dtype=torch.float64)).requires_grad_()
    b = torch.randn(6, generator=g, dtype=torch.float64).requires_grad_()
    saved = ln.FWD_MAX_SINGLE, ln.BWD_MAX_SINGLE, ln.LOOP_BLOCK
    if looped:
        ln.FWD_MAX_SINGLE = ln.BWD_MAX_SINGLE = 0
        ln.LOOP_BLOCK = 4                       # 6 columns in two chunks, the second one ragged
    try:
        # fast_mode: checks u^T J v for random u, v (one directional derivative instead of one per input element)
        assert torch.autograd.gradcheck(lambda x_, w_, b_: ln.layernorm(x_, w_, b_, 1e-5), (x, w, b), eps=1e-6,
                                        atol=1e-6, rtol=1e-5, fast_mode=True)
    finally:
        ln.FWD_MAX_SINGLE, ln.BWD_MAX_SINGLE, ln.LOOP_BLOCK = saved


@interpreter_only
def test_triton_backward_matches_torch_autograd_fp32():
    x, w, b, dy = ln.make_inputs((7, 33), "float32", check.rng(62), "cpu")
    y, mean, rstd, dx, dw, db = ln.layernorm_triton(x, w, b, dy)
    ty, tdx, tdw, tdb = _torch_grads(x, w, b, dy)
    for got, want, what in ((y, ty, "y"), (dx, tdx, "dx"), (dw, tdw, "dw"), (db, tdb, "db")):
        check.assert_close(got, want, "float32", what=what)


@interpreter_only
def test_interpreter_leading_dims_and_many_partials():
    x = check.rng(63).standard_normal((2, 5, 40)).astype(np.float32) + 3
    w = np.linspace(0.5, 1.5, 40).astype(np.float32)
    b = np.linspace(-1, 1, 40).astype(np.float32)
    y, mean, rstd = ln.layernorm_fwd(x, w, b)
    assert mean.shape == (2, 5) and rstd.dtype == np.float32
    check.assert_close(y, ln.reference(x, w, b, x)[0], "float32")
    # more rows than programs: each program walks several rows and keeps one partial row of dw/db
    x2, w2, b2, dy2 = ln.make_inputs((50, 24), "float32", check.rng(64), "cpu")
    ref = ln.reference(x2, w2, b2, dy2)
    for got, want in zip(ln.layernorm_triton(x2, w2, b2, dy2), ref):
        check.assert_close(got, want, "float32")


def test_bad_input_is_rejected_before_any_launch():
    if device.has_gpu():
        import cupy as xp
    else:
        xp = np
    x = xp.ones((4, 8), np.float32)
    w = xp.ones(8, np.float32)
    with pytest.raises(TypeError, match="x: dtype int32"):
        ln.layernorm_fwd(x.astype(np.int32), w, w)
    with pytest.raises(ValueError, match=r"weight: normalized shape \(7,\) does not match x.shape\[-1\] = 8"):
        ln.layernorm_fwd(x, xp.ones(7, np.float32), w)
    with pytest.raises(ValueError, match="bias: normalized shape"):
        ln.layernorm_fwd(x, w, xp.ones(9, np.float32))
    with pytest.raises(ValueError, match="weight: expected a 1-D"):
        ln.layernorm_fwd(xp.ones((4, 2, 4), np.float32), xp.ones((2, 4), np.float32), xp.ones(4, np.float32))
    with pytest.raises(TypeError, match="weight: dtype float16 does not match"):
        ln.layernorm_fwd(x, w.astype(np.float16), w)
    with pytest.raises(ValueError, match=r"normalized_shape \(4,\) does not match weight"):
        ln.layernorm_fwd(x, w, w, normalized_shape=(4,))
    with pytest.raises(ValueError, match="only the last dimension"):
        ln.layernorm_fwd(x, w, w, normalized_shape=(4, 8))
    with pytest.raises(ValueError, match="C-contiguous"):
        ln.layernorm_fwd(xp.ones((8, 4), np.float32).T, xp.ones(8, np.float32)[:4], xp.ones(4, np.float32))
    with pytest.raises(ValueError, match="eps"):
        ln.layernorm_fwd(x, w, w, eps=0.0)
    with pytest.raises(ValueError, match="empty"):
        ln.layernorm_fwd(xp.ones((3, 0), np.float32), xp.ones(0, np.float32), xp.ones(0, np.float32))
    mean = xp.zeros(4, np.float32)
    with pytest.raises(ValueError, match="shapes must match"):
        ln.layernorm_bwd(xp.ones((4, 9), np.float32), x, w, mean, mean)
    with pytest.raises(ValueError, match=r"mean: expected shape \(4,\)"):
        ln.layernorm_bwd(x, x, w, xp.zeros(5, np.float32), mean)
    with pytest.raises(TypeError, match="rstd: dtype float16"):
        ln.layernorm_bwd(x, x, w, mean, mean.astype(np.float16))
    with pytest.raises(TypeError, match="out: expected a tuple"):
        ln.layernorm_fwd(x, w, w, out=x)


def test_aot_layernorm_reports():
    k = lnb.aot_fwd(90, "float32", 4096)
    s = ts.summarize(k)
    assert ".entry layernorm_fwd_kernel" in k.asm["ptx"] and k.metadata.num_warps == ln.fwd_default(4096)["num_warps"]
    assert s["ptx_mem"].get("ld.global.v4.b32", 0) >= 4 and s["local"] in (0, None)
    sb = ts.summarize(lnb.aot_bwd(90, "bfloat16", 4096))
    assert sb["ptx_mem"].get("ld.global.v4.b32", 0) >= 2 and sb["local"] in (0, None)
    assert len(lnb.compile_table("sm_90")) == 5


@pytest.mark.parametrize("ty", ["*fp32", "*bf16", "*fp16", "*fp64"])
@pytest.mark.parametrize("single", [True, False])
def test_kernels_compile_for_each_path_dtype_and_integers_of_one(single, ty):
    """The interpreter checks no types, the compiler does (a loop may not change a variable's dtype); and (1, 1)
    inputs make every integer argument 1, which a GPU launch passes as a compile-time constant (no .to())."""
    f32 = "*fp64" if ty == "*fp64" else "*fp32"      # accumulation / statistics dtype
    fwd = {"x_ptr": ty, "w_ptr": ty, "b_ptr": ty, "y_ptr": ty, "mean_ptr": f32, "rstd_ptr": f32, "eps": "fp32"}
    ints = {"n_rows": 1, "n_cols": 1, "x_row_stride": 1, "y_row_stride": 1}
    ts.aot(ln.layernorm_fwd_kernel, {**fwd, **{k: "constexpr" for k in ints}, "BLOCK_M": "constexpr",
                                     "BLOCK_N": "constexpr", "SINGLE": "constexpr", "PERSIST": "constexpr"},
           {**ints, "BLOCK_M": 128, "BLOCK_N": 16, "SINGLE": single, "PERSIST": False}, cc=90)
    ts.aot(ln.layernorm_fwd_kernel, {**fwd, **{k: "constexpr" for k in ints}, "BLOCK_M": "constexpr",
                                     "BLOCK_N": "constexpr", "SINGLE": "constexpr", "PERSIST": "constexpr"},
           {**ints, "BLOCK_M": 1, "BLOCK_N": 16, "SINGLE": True, "PERSIST": True}, cc=90)
    bwd = {k: ty for k in ("x_ptr", "w_ptr", "dy_ptr", "dx_ptr")}
    bwd.update({k: f32 for k in ("mean_ptr", "rstd_ptr", "dw_part_ptr", "db_part_ptr")})
    ints = {"n_rows": 1, "n_cols": 1, "x_row_stride": 1, "dy_row_stride": 1, "dx_row_stride": 1}
    ts.aot(ln.layernorm_bwd_kernel, {**bwd, **{k: "constexpr" for k in ints}, "BLOCK_N": "constexpr",
                                     "SINGLE": "constexpr"}, {**ints, "BLOCK_N": 16, "SINGLE": single}, cc=90)
    red = {"dw_part_ptr": f32, "db_part_ptr": f32, "dw_ptr": ty, "db_ptr": ty, "n_parts": "constexpr",
           "n_cols": "constexpr", "BLOCK_P": "constexpr", "BLOCK_C": "constexpr"}
    ts.aot(ln.layernorm_dwdb_kernel, red, {"n_parts": 1, "n_cols": 1, "BLOCK_P": 64, "BLOCK_C": 64}, cc=90)


@interpreter_only
def test_benchmark_helpers_on_cpu_torch_tensors():
    """The GPU benchmark's own check (check_big) and tuner (tune_config), run on small CPU torch tensors."""
    import torch

    x, w, b, dy = (torch.from_numpy(np.asarray(a, np.float32))
                   for a in ln.make_inputs((20, 48), "float32", check.rng(67), "cpu"))
    c = lnb.check_big(x, w, b, dy, n_rows=5)
    assert c.ok, c.message
    rows, best = lnb.tune_config("fwd", x, w, b, dy, [{"BLOCK_M": 2, "num_warps": 4},
                                                      {"SINGLE": False, "BLOCK_N": 16, "num_warps": 4}])
    rows2, best2 = lnb.tune_config("bwd", x, w, b, dy, [{"programs_per_sm": 2, "num_warps": 4}])
    assert [r["kind"] for r in rows + rows2] == ["fwd", "fwd", "bwd"] and all(r["ms"] > 0 for r in rows + rows2)
    assert best in ({"BLOCK_M": 2, "num_warps": 4}, {"SINGLE": False, "BLOCK_N": 16, "num_warps": 4})
    assert sum(r["winner"] for r in rows) == 1 and best2 == {"programs_per_sm": 2, "num_warps": 4}
    for cfg in ({"BLOCK_M": 2, "num_warps": 4}, {"SINGLE": False, "BLOCK_N": 16, "num_warps": 4}):
        got = ln.layernorm_fwd(x, w, b, config=cfg)          # 48 columns in three 16-column chunks
        for g, want in zip(got, ln.reference(x.numpy(), w.numpy(), b.numpy(), dy.numpy())[:3]):
            check.assert_close(g, want, "float32", what=str(cfg))


@pytest.mark.parametrize("rows, cols", [(1, 1), (7, 33), (13, 50)])
def test_persistent_forward_prefetch(rows, cols, monkeypatch):
    # 4 "SMs" (on a GPU too): PERSIST 1 -> 4 programs walking 1, 7 or 13 rows, so the loop carries a prefetched row
    # into the next iteration (each program's last prefetch masked off, a program with no row at all when rows < 4);
    # poisoned outputs, so an unwritten row fails
    monkeypatch.setattr(ln, "_sms", lambda: 4)
    where = "cpu" if ln.INTERPRETER else "cuda"       # on a GPU machine the same check runs the compiled kernel
    x, w, b, dy = (arrays.from_numpy(a, "float32", where)
                   for a in ln.make_inputs((rows, cols), "float32", check.rng(rows * 100 + cols), "cpu"))
    outs = tuple(check.poisoned(s, "float32", x) for s in ((rows, cols), (rows,), (rows,)))
    got = ln.layernorm_fwd(x, w, b, out=outs, config={"BLOCK_M": 1, "PERSIST": 1, "num_warps": 4})
    want = ln.reference(*(arrays.to_numpy(a).astype(np.float64) for a in (x, w, b, dy)))[:3]
    for g, e, what in zip(got, want, ("y", "mean", "rstd")):
        check.assert_close(g, e, "float32", what=what)


@pytest.mark.parametrize("kind, cfg, match", [("fwd", {"BLOCK_M": 3, "num_warps": 4}, "BLOCK_M"),
                                              ("fwd", {"BLOCK_M": 2, "PERSIST": 2, "num_warps": 4}, "PERSIST"),
                                              ("fwd", {"BLOCK_M": 1, "PERSIST": 3, "num_warps": 4}, "PERSIST"),
                                              ("fwd", {"SINGLE": False, "BLOCK_N": 8, "num_warps": 4}, "BLOCK_N"),
                                              ("fwd", {"BLOCK_M": 1, "num_warps": 6}, "num_warps"),
                                              ("bwd", {"programs_per_sm": 0, "num_warps": 4}, "programs_per_sm"),
                                              ("mid", {"num_warps": 4}, "kind")])
def test_bad_configs_are_refused(kind, cfg, match):
    with pytest.raises(ValueError, match=match):
        ln.check_config(kind, cfg)


@interpreter_only
def test_chunked_forward_keeps_the_variance_of_a_large_mean():
    # The chunked forward takes the mean first, then the centred squares. At a mean of 1e4 with unit spread a
    # sum-of-squares formula (E[x^2] - E[x]^2 = 1e8 - 1e8 in fp32) would lose the variance entirely; rstd stays at
    # fp32 accuracy. y carries the fp32 rounding of the mean itself (ulp(1e4) / 2 ~ 5e-4 against unit deviations),
    # which no fp32 kernel avoids: it must be no worse than the single-pass kernel's on the same input.
    rng = check.rng(68)
    x64 = rng.standard_normal((6, 50)) + 1e4
    w64, b64 = rng.standard_normal(50), rng.standard_normal(50)
    x, w, b = (arrays.from_numpy(a, "float32", "cpu") for a in (x64, w64, b64))
    y2, mean2, rstd2 = ln.layernorm_fwd(x, w, b, config={"SINGLE": False, "BLOCK_N": 16, "num_warps": 4})
    y1, _, _ = ln.layernorm_fwd(x, w, b, config={"BLOCK_M": 1, "num_warps": 4})
    xr = arrays.to_numpy(x).astype(np.float64)
    y_ref, mean_ref, rstd_ref = ln.reference(xr, arrays.to_numpy(w).astype(np.float64),
                                             arrays.to_numpy(b).astype(np.float64), np.zeros_like(xr))[:3]
    check.assert_close(rstd2, rstd_ref, "float32")
    check.assert_close(mean2, mean_ref, "float32")
    err2 = np.abs(arrays.to_numpy(y2) - y_ref).max()
    err1 = np.abs(arrays.to_numpy(y1) - y_ref).max()
    assert err2 <= 1.5 * err1 + 1e-6, (err2, err1)
    assert err2 < 4e-3


@interpreter_only
def test_main_quick_on_cpu(capsys):
    assert ln.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "interpreter" in out and "programs/SM" in out


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
def test_gpu_gradcheck_float64():
    import torch

    g = torch.Generator(device="cuda").manual_seed(65)
    x = (torch.randn(4, 10, generator=g, device="cuda", dtype=torch.float64) + 2).requires_grad_()
    w = torch.randn(10, generator=g, device="cuda", dtype=torch.float64).requires_grad_()
    b = torch.randn(10, generator=g, device="cuda", dtype=torch.float64).requires_grad_()
    assert torch.autograd.gradcheck(lambda x_, w_, b_: ln.layernorm(x_, w_, b_, 1e-5), (x, w, b), atol=1e-6,
                                    rtol=1e-5)


@gpu
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("shape", [(256, 1000), (3, 40000), (5000, 64)])
def test_gpu_matches_torch(dtype, shape):
    import torch.nn.functional as F

    x, w, b, dy = ln.make_inputs(shape, dtype, check.rng(66), "cuda")
    tx, tw, tb, tdy = (ln._torch_view(a).detach().clone().requires_grad_() for a in (x, w, b, dy))
    y = F.layer_norm(tx, (shape[1],), tw, tb, ln.EPS)
    y.backward(tdy.detach())
    got = ln.layernorm_triton(x, w, b, dy)
    ref = ln.reference(*(arrays.to_numpy(a) for a in (x, w, b, dy)))
    for i, name in ((0, "y"), (3, "dx"), (4, "dw"), (5, "db")):
        check.assert_close(got[i], ref[i], dtype, what=f"{name} vs float64")
    check.assert_close(got[0], y.detach().float().cpu().numpy().astype(np.float64), dtype, what="y vs torch")


@gpu
def test_gpu_bad_input():
    import cupy
    import torch

    x = cupy.ones((4, 8), cupy.float32)
    with pytest.raises(TypeError, match="expected a GPU array"):
        ln.layernorm_fwd(np.ones((4, 8), np.float32), np.ones(8, np.float32), np.ones(8, np.float32))
    with pytest.raises(TypeError, match="weight: expected a cupy array like x"):
        ln.layernorm_fwd(x, torch.ones(8, device="cuda"), torch.ones(8, device="cuda"))


def test_replot_redraws_the_committed_plot(tmp_path):
    assert ln.main(["--replot", "--out", str(tmp_path)]) == 0
    assert (tmp_path / f"{ln.LAB}.png").stat().st_size > 10_000


def test_a_malformed_tuning_record_falls_back_to_the_defaults(tuning_record):
    for bad in ({"": {"BLOCK_M": 1, "num_warps": 8}}, [1],
                {"fwd float32 4096": {"SINGLE": False, "BLOCK_N": 8192, "num_warps": 8}}):
        tuning_record(ln.TUNED, bad)
        with pytest.warns(UserWarning, match="unusable tuning record"):
            assert ln.tuned_config("fwd", 4096, "float32") is None
    tuning_record(ln.TUNED, {"fwd float32 4096": {"SINGLE": False, "BLOCK_N": 2048, "num_warps": 8}})
    assert ln.tuned_config("fwd", 4000, "float32") == {"SINGLE": False, "BLOCK_N": 2048, "num_warps": 8}
