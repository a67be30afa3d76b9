"""Lab 3.3 (fused softmax): -inf rows and entries, the online path, N-D input, the AOT report, bad input."""
import numpy as np
import pytest

from common import arrays, check, config, device, plan
from common import triton_support as ts
from common.occupancy import occupancy
from phase3_triton.lab03_fused_softmax import bench as smb
from phase3_triton.lab03_fused_softmax import lab as sm
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu
interpreter_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter test (host arrays); the GPU tier covers "
                                                               "the same on device")
NEG = -np.inf


def _inf_cases(cols: int) -> np.ndarray:
    """Row 0 all -inf; row 1 -inf everywhere but one entry; row 2 -inf in its first 40 columns (a whole first chunk
    of the online kernel at block_n = 16); row 3 ordinary with a +80 outlier."""
    rng = check.rng(50)
    x = rng.standard_normal((4, cols)) * 2
    x[0] = NEG
    x[1] = NEG
    x[1, cols // 2] = 1.5
    x[2, :40] = NEG
    x[3, 7] = 80.0
    return x


def _check_inf_semantics(y, x):
    y = np.asarray(arrays.to_numpy(y), np.float64)
    assert np.isnan(y[0]).all(), "an all -inf row gives NaN everywhere (documented, like torch.softmax)"
    assert not np.isnan(y[1:]).any()
    np.testing.assert_allclose(y[1], np.where(np.arange(x.shape[1]) == x.shape[1] // 2, 1.0, 0.0), atol=1e-6)
    assert (y[2, :40] == 0).all()                  # exp(-inf) = 0 exactly
    np.testing.assert_allclose(y[1:].sum(axis=1), 1.0, rtol=1e-5)
    check.assert_close(y, sm.reference(x), "float32")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier
# ---------------------------------------------------------------------------------------------------------------------
@interpreter_only
@pytest.mark.parametrize("path", ["fused", "online"])
def test_interpreter_neg_inf_rows_and_entries(path):
    import torch

    x = _inf_cases(100).astype(np.float32)
    out = check.poison(np.empty_like(x))
    if path == "fused":
        y = sm.softmax_triton(x, out=out)
    else:
        y = sm.softmax_online(x, out=out, block_n=16)       # row 2's first chunks are all -inf
    _check_inf_semantics(y, x.astype(np.float64))
    t = torch.softmax(torch.from_numpy(x), dim=-1).numpy()   # torch agrees, NaN row included
    np.testing.assert_array_equal(np.isnan(t), np.isnan(y))


@interpreter_only
def test_interpreter_dispatch_nd_and_dtypes():
    import torch

    rng = check.rng(51)
    x = rng.standard_normal((2, 3, 300)).astype(np.float32)          # any leading dims
    check.assert_close(sm.softmax_triton(x), sm.reference(x), "float32", what="3-D")
    long = rng.standard_normal((2, 1000)).astype(np.float32)
    a = sm.softmax_triton(long, max_fused=256)                       # forced onto the online kernel
    check.assert_close(a, sm.reference(long), "float32", what="online via max_fused")
    xb = torch.randn(3, 257, dtype=torch.bfloat16) * 3
    check.assert_close(sm.softmax_triton(xb), sm.reference(xb.float().numpy()), "bfloat16")
    assert sm.softmax_triton(np.zeros((0, 4), np.float32)).shape == (0, 4)
    one = sm.softmax_triton(np.array([3.0], np.float32))
    assert one.shape == (1,) and one[0] == 1.0


def test_rows_config_keeps_4_to_32_values_per_thread():
    for cols in (1, 7, 128, 1000, 4096, 8192, 16384):
        bm, bn, warps = sm.rows_config(cols)
        per_thread = bm * bn / (32 * warps)
        assert bn >= cols and (bm == 1 or bm * bn <= 4096)
        assert 4 <= per_thread <= 32, (cols, bm, bn, warps)


def test_aot_softmax_loads_exp_and_warps():
    k = smb.aot_rows(90, "float32", 4096)
    s = ts.summarize(k)
    assert ".entry softmax_rows_kernel" in k.asm["ptx"] and k.metadata.num_warps == 8
    assert s["ptx_mem"].get("ld.global.v4.b32") == 4          # 16 floats per thread, 16 bytes at a time
    assert s["ptx_mem"].get("st.global.cs.v4.b32") == 4
    assert "ex2.approx" in k.asm["ptx"]                        # tl.exp = 2^(x log2 e) on the SFU
    assert s["shfl"] > 0 and s["local"] in (0, None)
    sb = ts.summarize(smb.aot_rows(90, "bfloat16", 4096))
    assert sb["ptx_mem"].get("ld.global.v4.b32") == 2          # 16 bf16 per thread = two 16-byte loads
    so = ts.summarize(smb.aot_online(90))
    assert so["ptx_mem"].get("ld.global.v4.b32", 0) >= 8       # two passes over 16 floats per thread


@pytest.mark.parametrize("ty", ["*fp32", "*bf16", "*fp16"])
def test_kernels_compile_for_every_dtype_and_integers_of_one(ty):
    """The interpreter checks no types; the compiler does (a loop may not change a variable's dtype). And (1, 1)
    inputs make every integer argument 1, which a GPU launch passes as a compile-time constant."""
    rows_sig = {"x_ptr": ty, "y_ptr": ty, "n_rows": "constexpr", "n_cols": "constexpr",
                "x_row_stride": "constexpr", "y_row_stride": "constexpr", "BLOCK_M": "constexpr",
                "BLOCK_N": "constexpr"}
    ts.aot(sm.softmax_rows_kernel, rows_sig, {"n_rows": 1, "n_cols": 1, "x_row_stride": 1, "y_row_stride": 1,
                                              "BLOCK_M": 128, "BLOCK_N": 16}, cc=90)
    online_sig = {"x_ptr": ty, "y_ptr": ty, "n_cols": "constexpr", "x_row_stride": "constexpr",
                  "y_row_stride": "constexpr", "BLOCK_N": "constexpr"}
    ts.aot(sm.softmax_online_kernel, online_sig, {"n_cols": 1, "x_row_stride": 1, "y_row_stride": 1,
                                                  "BLOCK_N": 16}, cc=90)


def test_programs_per_sm_come_from_the_occupancy_calculator():
    s = {"regs": 32, "num_warps": 8, "shared": 32}
    assert smb.programs_per_sm(s, "sm_90") == 8                            # thread limit: 2048 / 256
    assert smb.programs_per_sm(dict(s, regs=128, shared=0), "sm_90") == 2  # 65536 / (128 x 256)
    assert smb.programs_per_sm(dict(s, regs=None), "sm_90") is None        # no register count (no cuobjdump)
    for row in smb.compile_table("sm_90"):
        if row["regs"]:
            want = occupancy("sm_90", 32 * row["warps"], row["regs"], smem_dynamic=row["shared B"]).blocks_per_sm
            assert row["programs/SM"] == want > 0, row


def test_bad_input_is_rejected_before_any_launch():
    if device.has_gpu():
        import cupy as xp
    else:
        xp = np
    x = xp.ones((4, 8), np.float32)
    with pytest.raises(TypeError, match="dtype int32"):
        sm.softmax_triton(x.astype(np.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        sm.softmax_triton(xp.ones((8, 4), np.float32).T)
    with pytest.raises(ValueError, match="out: expected shape"):
        sm.softmax_triton(x, out=xp.empty((4, 7), np.float32))
    with pytest.raises(TypeError, match="out: dtype float16"):
        sm.softmax_triton(x, out=xp.empty((4, 8), np.float16))
    with pytest.raises(ValueError, match="0-D"):
        sm.softmax_triton(xp.ones((), np.float32))
    with pytest.raises(ValueError, match="power of two"):
        sm.softmax_online(x, block_n=48)


@interpreter_only
def test_check_sample_and_config_override_on_cpu_torch():
    import torch

    x = torch.randn(300, 40) * 3
    out = torch.empty_like(x)
    sm.softmax_triton(x, out=out, config={"kernel": "fused", "BLOCK_M": 2, "num_warps": 4})  # a tuned-style config
    assert smb.check_sample(out, x, "float32", n_rows=10).ok
    out[299, 3] += 0.01                                                    # the last row is always sampled
    assert not smb.check_sample(out, x, "float32", n_rows=10).ok


@interpreter_only
def test_online_config_through_the_dispatcher():
    rng = check.rng(61)
    x64 = rng.standard_normal((9, 100)) * 3
    x64[2, 40:] = -np.inf                          # a chunk of -inf after finite values, and the reverse below
    x64[3, :60] = -np.inf
    x = arrays.from_numpy(x64, "float32", "cpu")
    out = check.poisoned(x64.shape, "float32", x)
    sm.softmax_triton(x, out=out, config={"kernel": "online", "BLOCK_N": 32, "num_warps": 4})
    check.assert_close(out, sm.reference(x64), "float32")


@pytest.mark.parametrize("cfg, match", [({"kernel": "tiled", "num_warps": 4}, "kernel must be"),
                                        ({"kernel": "fused", "BLOCK_M": 3, "num_warps": 4}, "BLOCK_M"),
                                        ({"kernel": "online", "BLOCK_N": 8, "num_warps": 4}, "BLOCK_N"),
                                        ({"kernel": "online", "BLOCK_N": 64, "num_warps": 3}, "num_warps")])
def test_bad_configs_are_refused(cfg, match):
    with pytest.raises(ValueError, match=match):
        sm.check_config(cfg)
    with pytest.raises(KeyError):
        sm.check_config({"kernel": "fused", "num_warps": 4})


def test_tuning_record_is_read_and_a_bad_one_falls_back(tuning_record):
    tuning_record(sm.TUNED, {"float32 4096": {"kernel": "online", "BLOCK_N": 2048, "num_warps": 8}})
    assert sm.tuned_config(4000, "float32") == {"kernel": "online", "BLOCK_N": 2048, "num_warps": 8}
    assert sm.tuned_config(4096, "bfloat16") is None and f"tuned on {tuning_record.made_on}" in sm.tuned_source()
    tuning_record(sm.TUNED, {"float32 4096": {"kernel": "online", "BLOCK_N": 7, "num_warps": 8}})
    with pytest.warns(UserWarning, match="unusable tuning record"):
        assert sm.tuned_config(4096, "float32") is None
    assert "unusable" in sm.tuned_source()
    for bad in ([1, 2], None):                                          # a winner that is not a dict at all
        tuning_record(sm.TUNED, bad)
        with pytest.warns(UserWarning, match="unusable tuning record"):
            assert sm.tuned_config(4096, "float32") is None


@interpreter_only
def test_main_quick_on_cpu(capsys):
    assert lab_main(sm)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "v4.b32" in out and "unfused" in out and "interpreter" in out


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("path", ["fused", "online"])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_neg_inf_rows_and_entries(path, dtype):
    import torch

    x64 = _inf_cases(5000)
    x = arrays.from_numpy(x64, dtype, "cuda")
    out = check.poisoned(x64.shape, dtype, x)
    y = sm.softmax_triton(x, out=out) if path == "fused" else sm.softmax_online(x, out=out, block_n=16)
    xr = arrays.to_numpy(x).astype(np.float64)
    yn = np.asarray(arrays.to_numpy(y), np.float64)
    assert np.isnan(yn[0]).all() and not np.isnan(yn[1:]).any()
    check.assert_close(yn, sm.reference(xr), dtype)
    t = torch.softmax(sm._torch_view(x), dim=-1)
    np.testing.assert_array_equal(np.isnan(arrays.to_numpy(t)), np.isnan(yn))


@gpu
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_the_recorded_choice_at_the_target_row_length(dtype):
    # whatever kernel this GPU's tuning record picks for 4096-column rows (or the default), on a few rows of them
    x64 = check.rng(62).standard_normal((37, 4096)) * 3
    x = arrays.from_numpy(x64, dtype, "cuda")
    out = check.poisoned(x64.shape, dtype, x)
    check.assert_close(sm.softmax_triton(x, out=out), sm.reference(arrays.to_numpy(x).astype(np.float64)), dtype,
                       what=str(sm.tuned_config(4096, dtype) or "default"))


@gpu
def test_gpu_long_rows_and_many_rows():
    rng = check.rng(52)
    for shape in ((3, 262144), (70000, 7)):
        x = arrays.from_numpy(rng.standard_normal(shape) * 3, "float32", "cuda")
        out = check.poisoned(shape, "float32", x)
        check.assert_close(sm.softmax_triton(x, out=out), sm.reference(x.get()), "float32", what=str(shape))


@gpu
def test_gpu_bad_input():
    with pytest.raises(TypeError, match="expected a GPU array"):
        sm.softmax_triton(np.ones((4, 8), np.float32))


def test_replot_redraws_the_committed_plot(tmp_path):
    assert lab_main(sm)(["--replot", H200, "--out", str(tmp_path)]) == 0
    assert (tmp_path / f"{sm.LAB}.png").stat().st_size > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs a learner may have (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def _tuned_launches(name: str) -> dict:
    """The benchmark's softmax_triton launch at the target shape per dtype on profile `name`."""
    p = plan.make(sm, smb, device.profile_info(name))
    assert not p.skipped and len(p.launches) == 8
    return {x.case.split(":")[0].split()[-1]: x for x in p.launches if x.variant == ""}, p


def test_plan_default_on_a_t4_and_the_tuned_record_on_an_h200():
    t4, p = _tuned_launches("t4")
    for dtype in ("float32", "bfloat16"):
        x = t4[dtype]
        assert x.kernel == "softmax_rows_kernel" and x.defines == {"BLOCK_M": 1, "BLOCK_N": 4096}
        assert x.num_warps == 8 and x.grid == (32768,) and x.config_source == "default"
    h200, q = _tuned_launches("h200")
    assert h200["float32"].kernel == h200["bfloat16"].kernel == "softmax_online_kernel"    # the record's choice
    assert h200["float32"].num_warps == 16 and h200["bfloat16"].num_warps == 4
    assert all(x.config_source.startswith("tuned on NVIDIA H200") for x in h200.values())
    # the variants' own launches do not read the record
    assert all(x.config_source in ("default", "fixed (a quarter row a step)") for x in q.launches if x.variant)
    # whether the online kernel's second read hits L2 depends on the GPU: 2.5 MiB of rows against a 4 MiB L2 on a T4
    l2 = [v for k, v in p.predictions.items() if k.startswith("rows held")]
    assert l2 and "may miss L2" in l2[0]
    assert "should hit L2" in next(v for k, v in q.predictions.items() if k.startswith("rows held"))


def test_set_overrides_the_kernel_and_says_so():
    try:
        config.set_overrides(["KERNEL=online", "CHUNK=2048"])
        t4, _ = _tuned_launches("t4")
        x = t4["float32"]
        assert x.kernel == "softmax_online_kernel" and x.defines == {"BLOCK_N": 2048}
        assert "--set KERNEL=online" in x.config_source and "--set CHUNK=2048" in x.config_source
        h200, _ = _tuned_launches("h200")                     # --set wins over the tuning record
        assert h200["float32"].defines == {"BLOCK_N": 2048} and h200["float32"].num_warps == 16
        config.set_overrides(["ROWS=2"])
        kernel, grid, const, warps = sm.launch_config(300, 40, "float32")          # the wrapper's own arithmetic
        assert kernel is sm.softmax_rows_kernel and grid == 150 and const["BLOCK_M"] == 2
        config.set_overrides(["KERNEL=fused"])
        with pytest.raises(ValueError, match="KERNEL=fused: a row of 262144 columns"):
            sm.softmax_config(262144, "float32")
        config.set_overrides(["KERNEL=tiled"])
        with pytest.raises(ValueError, match="kernel must be"):
            sm.softmax_config(4096, "float32")
    finally:
        config.set_overrides([])
