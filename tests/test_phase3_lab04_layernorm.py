"""Lab 3.4 (layernorm): the reference against torch.autograd, the kernels under gradcheck, long rows, bad input."""
import numpy as np
import pytest

from common import arrays, check, config, device, plan
from common import triton_support as ts
from phase3_triton.lab04_layernorm import bench as lnb
from phase3_triton.lab04_layernorm import lab as ln
from tests.helpers import H200, lab_main

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
    assert len(lnb.compile_table("sm_90")) == 8


@pytest.mark.parametrize("cols, block_n, even", [(4096, 2048, True), (4099, 2048, False)])
def test_aot_welford_forward_is_light_on_registers(cols, block_n, even):
    # The point of the two-pass kernel is occupancy: few registers a thread, 16-byte loads, nothing in local memory
    # (at least half the SM's warps resident; the rows-in-registers winner at 16 warps gets an eighth of them)
    from common.occupancy import occupancy

    k = lnb.aot_fwd_welford(90, "float32", cols, block_n, 8)
    s = ts.summarize(k)
    assert ".entry layernorm_fwd_welford_kernel" in k.asm["ptx"] and s["local"] in (0, None)
    assert s["ptx_mem"].get("ld.global.v4.b32", 0) >= 2
    if s["regs"]:
        assert occupancy("sm_90", 32 * 8, s["regs"], smem_dynamic=s["shared"]).blocks_per_sm * 8 >= 32, s["regs"]


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
    if not single:          # the two-pass Welford forward: one row of one value is a masked 16-wide chunk
        ints = {"n_cols": 1, "x_row_stride": 1, "y_row_stride": 1}
        ts.aot(ln.layernorm_fwd_welford_kernel, {**fwd, **{k: "constexpr" for k in ints}, "BLOCK_N": "constexpr",
                                                 "EVEN_N": "constexpr"},
               {**ints, "BLOCK_N": 16, "EVEN_N": False}, cc=90)
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
    cands = [{"BLOCK_M": 2, "num_warps": 4}, {"SINGLE": False, "BLOCK_N": 16, "num_warps": 4},
             {"WELFORD": True, "BLOCK_N": 32, "num_warps": 4}]
    rows, best = lnb.tune_config("fwd", x, w, b, dy, cands)
    rows2, best2 = lnb.tune_config("bwd", x, w, b, dy, [{"programs_per_sm": 2, "num_warps": 4}])
    assert [r["kind"] for r in rows + rows2] == ["fwd", "fwd", "fwd", "bwd"] and all(r["ms"] > 0 for r in rows + rows2)
    assert best in cands
    assert sum(r["winner"] for r in rows) == 1 and best2 == {"programs_per_sm": 2, "num_warps": 4}
    for cfg in cands:
        got = ln.layernorm_fwd(x, w, b, config=cfg)          # 48 columns in three 16-column chunks, or 32 + 16
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
                                              ("fwd", {"WELFORD": True, "BLOCK_N": 8, "num_warps": 4}, "BLOCK_N"),
                                              ("fwd", {"WELFORD": True, "BLOCK_N": 8192, "num_warps": 4}, "BLOCK_N"),
                                              ("fwd", {"WELFORD": True, "BLOCK_M": 2, "BLOCK_N": 64, "num_warps": 4},
                                               "WELFORD"),
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


def test_every_forward_candidate_is_a_valid_config():
    assert all(ln.check_config("fwd", c) == c for c in lnb.FWD_CANDIDATES)
    assert sum(1 for c in lnb.FWD_CANDIDATES if c.get("WELFORD")) >= 4


# The two-pass Welford forward (layernorm_fwd_welford_kernel), on the tier's own device: interpreted on a CPU machine,
# compiled on a GPU one. Widths: 1, primes, a chunk wider than the row, exact multiples of the chunk (EVEN_N: no
# masks at all) and ragged last chunks; y in a poisoned buffer with guard bands, mean and rstd poisoned.
def _on_tier(arrs, dtype):
    where = "cpu" if ln.INTERPRETER else "cuda"
    return tuple(arrays.from_numpy(np.asarray(a, np.float64), dtype, where) for a in arrs)


def _welford_fwd(x, w, b, dtype, block_n, num_warps=4):
    rows, cols = x.shape
    acc = ln.acc_dtype(dtype)
    outs = (check.guarded((rows, cols), dtype, x), check.poisoned((rows,), acc, x), check.poisoned((rows,), acc, x))
    got = ln.layernorm_fwd(x, w, b, out=outs, config={"WELFORD": True, "BLOCK_N": block_n, "num_warps": num_warps})
    assert check.guard_damage(outs[0]) == ""
    return got


@pytest.mark.parametrize("rows, cols, block_n, dtype", [
    (1, 1, 16, "float32"),          # one value: variance 0, one live lane in a 16-wide chunk
    (1, 13, 64, "float32"),         # chunk clamped to the row (16), ragged
    (3, 17, 16, "float32"),         # two chunks, the second with one live lane
    (2, 97, 32, "float32"),         # prime: four chunks, the last ragged
    (5, 64, 16, "float32"),         # EVEN_N: four full chunks, no masks
    (4, 1031, 256, "float32"),      # prime, five chunks
    (3, 256, 64, "bfloat16"),       # EVEN_N, 16-bit storage
    (2, 41, 16, "float64"),         # fp64 statistics
])
def test_welford_forward_awkward_sizes(rows, cols, block_n, dtype):
    x, w, b = _on_tier(ln.make_inputs((rows, cols), "float64", check.rng(rows * 1000 + cols), "cpu")[:3], dtype)
    got = _welford_fwd(x, w, b, dtype, block_n)
    want = ln.reference(*(arrays.to_numpy(a).astype(np.float64) for a in (x, w, b, x)))[:3]
    for g, e, what in zip(got, want, ("y", "mean", "rstd")):
        check.assert_close(g, e, dtype, tol=ln.tolerance((rows, cols), dtype), what=f"{what} {rows}x{cols}")


@pytest.mark.parametrize("first", ["typical", "outlier"])
def test_welford_forward_keeps_a_large_mean(first):
    # Mean 1e3, std 1, fp32: E[x^2] - E[x]^2 cancels 1e6 - 1e6 (fp32 spacing 0.0625 there), and even a centred kernel
    # pays for rounding the mean to fp32 (ulp(1e3) / 2 ~ 3e-5 on unit deviations). The Welford kernel works on
    # x - x[row, 0] and normalizes (x - shift) - mean_s, so y keeps fp32 accuracy relative to the deviations - also
    # when the shift is an outlier (40 std above the rest): then its statistics sit near -40, still far from 1e3.
    rng = check.rng(69)
    x64 = 1e3 + rng.standard_normal((6, 300))
    if first == "outlier":
        x64[:, 0] += 40.0
    x, w, b = _on_tier((x64, 1 + 0.2 * rng.standard_normal(300), 0.5 * rng.standard_normal(300)), "float32")
    xr, wr, br = (arrays.to_numpy(a).astype(np.float64) for a in (x, w, b))
    y_ref, mean_ref, rstd_ref = ln.reference(xr, wr, br, xr)[:3]
    # the input is hard: the one-pass formula in fp32 loses the variance
    x32 = xr.astype(np.float32)
    naive = (x32 * x32).mean(axis=1, dtype=np.float32) - np.square(x32.mean(axis=1, dtype=np.float32))
    assert np.abs(naive / np.square(1 / rstd_ref) - 1).max() > 1e-3
    y, mean, rstd = _welford_fwd(x, w, b, "float32", 64)           # 300 columns: four full chunks and a ragged one
    assert np.abs(arrays.to_numpy(rstd) / rstd_ref - 1).max() < 1e-5
    assert np.abs(arrays.to_numpy(mean) - mean_ref).max() <= np.spacing(np.float32(1e3))    # its fp32 rounding
    err = np.abs(arrays.to_numpy(y) - y_ref).max()
    assert err < 1e-5, err                  # the rows-in-registers kernel is limited to ~3e-5 here (rounded mean)
    y1, _, _ = ln.layernorm_fwd(x, w, b, config={"BLOCK_M": 1, "num_warps": 4})
    assert err <= np.abs(arrays.to_numpy(y1) - y_ref).max()


def test_a_recorded_welford_winner_is_what_the_wrapper_launches(tuning_record, monkeypatch):
    launched = []
    monkeypatch.setattr(ln, "launch", lambda k, grid, *a, **meta: launched.append((k, grid, meta)) or
                        ts.launch(k, grid, *a, **meta))
    tuning_record(ln.TUNED, {"fwd float32 64": {"WELFORD": True, "BLOCK_N": 16, "num_warps": 4}})
    x, w, b = _on_tier(ln.make_inputs((3, 50), "float64", check.rng(70), "cpu")[:3], "float32")
    y, mean, rstd = ln.layernorm_fwd(x, w, b)
    (k, grid, meta), = launched
    assert k is ln.layernorm_fwd_welford_kernel and grid == (3,) and meta["BLOCK_N"] == 16 and not meta["EVEN_N"]
    check.assert_close(y, ln.reference(*(arrays.to_numpy(a).astype(np.float64) for a in (x, w, b, x)))[0], "float32")


@interpreter_only
def test_main_quick_on_cpu(capsys):
    assert lab_main(ln)(["--quick"]) == 0
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
@pytest.mark.parametrize("cfg", [c for c in lnb.FWD_CANDIDATES if c.get("WELFORD")], ids=str)
@pytest.mark.parametrize("shape, dtype", [((257, 4096), "float32"), ((33, 4099), "float32"), ((3, 40000), "float32"),
                                          ((65, 4096), "bfloat16"), ((7, 1000), "float16")])
def test_gpu_welford_candidates_match_float64(cfg, shape, dtype):
    # every tuner candidate of the two-pass kernel, at the tuned width (EVEN_N), one past it (ragged), a long row
    # (many chunks), 16-bit storage, and a width below most chunks (clamped): poisoned and guarded outputs
    x, w, b = _on_tier(ln.make_inputs(shape, "float64", check.rng(71), "cpu")[:3], dtype)
    got = _welford_fwd(x, w, b, dtype, cfg["BLOCK_N"], cfg["num_warps"])
    want = ln.reference(*(arrays.to_numpy(a).astype(np.float64) for a in (x, w, b, x)))[:3]
    for g, e, what in zip(got, want, ("y", "mean", "rstd")):
        check.assert_close(g, e, dtype, tol=ln.tolerance(shape, dtype), what=f"{what} {cfg}")


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
    assert lab_main(ln)(["--replot", H200, "--out", str(tmp_path)]) == 0
    assert (tmp_path / f"{ln.LAB}.png").stat().st_size > 10_000


def test_a_malformed_tuning_record_falls_back_to_the_defaults(tuning_record):
    for bad in ({"": {"BLOCK_M": 1, "num_warps": 8}}, [1],
                {"fwd float32 4096": {"SINGLE": False, "BLOCK_N": 8192, "num_warps": 8}}):
        tuning_record(ln.TUNED, bad)
        with pytest.warns(UserWarning, match="unusable tuning record"):
            assert ln.tuned_config("fwd", 4096, "float32") is None
    tuning_record(ln.TUNED, {"fwd float32 4096": {"SINGLE": False, "BLOCK_N": 2048, "num_warps": 8}})
    assert ln.tuned_config("fwd", 4000, "float32") == {"SINGLE": False, "BLOCK_N": 2048, "num_warps": 8}


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs a learner may have (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def _launches(name: str):
    p = plan.make(ln, lnb, device.profile_info(name))
    assert not p.skipped and len(p.launches) == 18                 # 3 variants x 2 dtypes x (fwd, bwd, dw/db)
    return {(x.variant, x.kernel, x.case.split(",")[0]): x for x in p.launches}, p


def test_plan_g_follows_the_sm_count_and_the_h200_reads_its_record():
    main, case = "triton fwd + bwd", "32768 x 4096 float32"
    for name, g in (("t4", 4 * 40), ("h100-sxm", 4 * 132)):          # the default: 4 programs per SM
        got, _ = _launches(name)
        assert got[(main, "layernorm_bwd_kernel", case)].grid == (g,)
        fwd = got[(main, "layernorm_fwd_kernel", case)]
        assert fwd.defines["BLOCK_M"] == 1 and fwd.grid == (32768,) and fwd.config_source == "default"
        assert got[("triton fwd + bwd, long-row paths forced", "layernorm_bwd_kernel", case)].defines == \
            {"BLOCK_N": 1024, "SINGLE": False}                        # a quarter of the row a step
    got, p = _launches("h200")
    bwd = got[(main, "layernorm_bwd_kernel", case)]
    assert bwd.grid == (2 * 132,) and bwd.num_warps == 16 and bwd.config_source.startswith("tuned on NVIDIA H200")
    assert (main, "layernorm_fwd_welford_kernel", case) in got        # the record's fp32 forward
    per_sm = next(v for k, v in p.predictions.items() if k.startswith("bytes in flight per SM"))
    t4_per_sm = next(v for k, v in _launches("t4")[1].predictions.items() if k.startswith("bytes in flight per SM"))
    assert per_sm != t4_per_sm


def test_set_changes_the_forward_and_the_backward_and_says_so():
    try:
        config.set_overrides(["FWD_FORM=welford", "FWD_CHUNK=1024", "BWD_PER_SM=1"])
        got, _ = _launches("l4")
        case = "32768 x 4096 bfloat16"
        fwd = got[("triton fwd + bwd", "layernorm_fwd_welford_kernel", case)]
        assert fwd.defines == {"BLOCK_N": 1024, "EVEN_N": True} and "--set FWD_FORM=welford" in fwd.config_source
        bwd = got[("triton fwd + bwd", "layernorm_bwd_kernel", case)]
        assert bwd.grid == (58,) and "--set BWD_PER_SM=1" in bwd.config_source           # one program per SM
        config.set_overrides(["FWD_FORM=tiled"])
        with pytest.raises(ValueError, match="FWD_FORM: expected one of rows, persistent, chunked, welford"):
            ln.layernorm_fwd(*ln.make_inputs((2, 8), "float32", check.rng(1), "cuda" if device.has_gpu() else
                                             "cpu")[:3])
    finally:
        config.set_overrides([])
