"""Lab 2.7 softmax: the compiler's view of each rung, the dispatch by row length, the plan on GPUs learners have
(shared memory, SM count, tuning record, --set), the edge-row conventions (all -inf rows are NaN, -inf entries are 0,
large magnitudes), bad input, misaligned rows, 64-bit row offsets."""
import math
import os

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from phase2_cuda.lab07_softmax import bench as smb
from phase2_cuda.lab07_softmax import lab as sm
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu
CPU_ONLY = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test")
CUDA_ALL = [sm.softmax_cuda_05, sm.softmax_cuda_06]
CUDA_F32 = [sm.softmax_cuda_01, sm.softmax_cuda_02, sm.softmax_cuda_03, sm.softmax_cuda_04]


@pytest.fixture(scope="module")
def rep90():
    return cuda.compile_report(sm.CU, "sm_90", defines=sm.CONFIG)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler made of the rungs
# ---------------------------------------------------------------------------------------------------------------------
def test_register_rung_loads_16_bytes_and_issues_all_loads_first(rep90):
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")
    k = rep90["softmax_05_block_row_f32"]
    c = k.sass_counts
    assert c.get("LDG.128", 0) == 8 and c.get("STG.128", 0) == 8          # EPT = 32 floats = 8 float4
    first_max = next(i for i, s in enumerate(k.sass) if "FMNMX" in s)
    assert sum("LDG" in s for s in k.sass[:first_max]) == 8, "every load should be in flight before the first use"
    assert rep90["softmax_05_block_row_bf16"].sass_counts.get("LDG.128", 0) == 4   # 32 bf16 = 4 x 16 bytes
    assert rep90["softmax_05_block_row_f32_scalar"].sass_counts.get("LDG.128", 0) == 0
    assert rep90["softmax_02_fused_smem"].sass_counts.get("LDG.128", 0) == 0


def test_barriers_and_shuffles_along_the_ladder(rep90):
    assert rep90["softmax_03_warp_per_row"].barriers == 0          # a warp per row: no block barrier at all
    assert rep90["softmax_05_warp_rows_f32"].barriers == 0
    assert rep90["softmax_02_fused_smem"].barriers >= 1
    if cuda.find_cuobjdump():
        c2 = rep90["softmax_02_fused_smem"].sass_counts
        c5 = rep90["softmax_05_block_row_f32"].sass_counts
        assert c2.get("SHFL", 0) == 0 and c5.get("SHFL", 0) >= 10
        assert c5.get("BAR", 0) == 2                                # one barrier per block reduction
        assert c2.get("LDS.32", 0) + c2.get("STS.32", 0) > c5.get("LDS.32", 0) + c5.get("STS.32", 0)


def test_register_budget_fits_the_largest_block(rep90):
    # 1024-thread blocks may use at most 64 registers each (65536 per SM), without spilling
    for dt in ("f32", "f16", "bf16"):
        k = rep90[f"softmax_05_block_row_{dt}"]
        assert 0 < k.registers <= 64 and k.spills == 0
    # fewer values per thread, fewer registers: the knob the --tune sweep turns
    small = cuda.compile_report(sm.CU, "sm_90", defines=dict(sm.CONFIG, EPT=16))
    assert small["softmax_05_block_row_f32"].registers < rep90["softmax_05_block_row_f32"].registers


def test_streaming_hints_knob():
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")

    def loads(h):
        rep = cuda.compile_report(sm.CU, "sm_90", defines=dict(sm.CONFIG, STREAM_HINTS=h))
        return [s for s in rep["softmax_05_block_row_f32"].sass if "LDG" in s]

    assert all(".EF" in s for s in loads(1)) and not any(".EF" in s for s in loads(0))
    assert all("LTC256B" in s for s in loads(2))          # the 256-byte L2 prefetch hint (sm_80+)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: dispatch plans
# ---------------------------------------------------------------------------------------------------------------------
def test_plan_05_boundaries():
    assert sm.plan_05(10, 1024, "float32", True)["kernel"] == "softmax_05_warp_rows_f32"
    p = sm.plan_05(10, 1025, "float32", False)
    assert p["kernel"] == "softmax_05_block_row_f32_scalar" and p["block"] == 64
    assert sm.plan_05(10, 4096, "float32", True)["block"] == 128
    assert sm.plan_05(10, 4096, "bfloat16", True) == {"kernel": "softmax_05_block_row_bf16", "grid": 10, "block": 128}
    assert sm.plan_05(10, 32768, "float32", True)["block"] == 1024
    assert sm.plan_05(10, 32769, "float32", True) is None
    assert sm.plan_05(10, 16384, "float16", False)["block"] == 512
    assert sm.plan_05(10, 16385, "float16", False) is None            # scalar rows stop at 512 threads
    assert sm.plan_05(9, 100, "float32", True)["grid"] == math.ceil(9 / sm.CONFIG["WARP_ROWS"])


@pytest.mark.parametrize("rows,cols,dt,vec", [(1, 262144, "float32", True), (3, 40_000, "bfloat16", True),
                                              (2, 32769, "float32", False), (5000, 65536, "float16", True),
                                              (1, 7, "float32", False)])
def test_plan_06_chunks_cover_the_row(rows, cols, dt, vec):
    p = sm.plan_06(rows, cols, dt, vec)
    assert p["chunk"] % p["w"] == 0 and p["chunks"] * p["chunk"] >= cols > (p["chunks"] - 1) * p["chunk"]
    assert p["grid"] == rows * p["chunks"]
    if rows == 1 and cols == 262144:
        assert p["chunks"] > 16, "one long row must be spread over many blocks"


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs learners have (common.plan), configurations and where they come from
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture
def fresh_config():
    """--set overrides and a simulated GPU do not outlive the test."""
    config.set_overrides([])
    yield
    config.set_overrides([])
    config.forget()
    device.simulate(None)


def _launch(launches, variant, kernel, case):
    return next(x for x in launches if x.variant == variant and x.kernel == kernel and x.case == case)


def test_rung02_stages_long_rows_only_where_shared_memory_allows(fresh_config):
    """The 32768-column target row (128 KiB) fits an sm_90 GPU's 227 KiB per block, not a T4's 64 KiB or an RTX
    card's 99 KiB: there rung 02 stages in the output row and launches without dynamic shared memory."""
    t4, rtx, h100 = (device.profile_info(s) for s in ("t4", "rtx-4090", "h100-sxm"))
    _, static = cuda.resources(sm.CU, "softmax_02_fused_smem", t4, defines=sm.knobs(t4))
    assert static > 0 and sm.smem_row_limit(t4) == 64 * 1024 - static
    assert sm.smem_row_limit(t4) // 4 < sm.smem_row_limit(rtx) // 4 < 32768 <= sm.smem_row_limit(h100) // 4
    name = "cuda 02 fused, block per row, smem"
    for gpu, smem in ((t4, 0), (rtx, 0), (h100, 4 * 32768)):
        got = sm.launches(gpu)
        assert _launch(got, name, "softmax_02_fused_smem", "4096 x 32768 float32").dyn_smem == smem, gpu.name
        assert _launch(got, name, "softmax_02_fused_smem", "32768 x 4096 float32").dyn_smem == 4 * 4096
    assert not any(f.problems for f in plan.verify(plan.make(sm, smb, t4)))


def test_rung06_split_follows_the_sm_count(fresh_config):
    """Rung 06 spreads 128 rows of 262144 columns (the sweep's longest rows) over ~4 blocks per SM: 2 chunks a row
    on a 40-SM T4, 5 on a 132-SM H100, 6 on a 170-SM RTX 5090; one long row gets 64 chunks everywhere."""
    for slug, chunks in (("t4", 2), ("h100-sxm", 5), ("rtx-5090", 6)):
        gpu = device.profile_info(slug)
        p = sm.plan_06(128, 262144, "float32", True, gpu)
        assert (p["chunks"], p["grid"]) == (chunks, 128 * chunks), slug
        assert sm.plan_06(1, 262144, "float32", True, gpu)["chunks"] == 64
        assert f"rung 06 at 128 x 262144 fp32 ({gpu.sms} SMs)" in smb.predict(gpu)


def test_plan_of_every_variant_on_a_t4(fresh_config):
    t4 = device.profile_info("t4")
    p = plan.make(sm, smb, t4)
    assert p.skipped == [] and set(p.running) == {v.name for v in sm.VARIANTS + sm.PEERS}
    kinds = {(x.variant, x.kernel) for x in p.launches}
    assert ("cuda 05 registers, 16-byte loads", "softmax_05_block_row_bf16") in kinds
    assert ("cuda 06 online, split rows", "softmax_06b_online_normalize_f32") in kinds
    x = _launch(p.launches, sm.BEST, "softmax_05_block_row_f32", "4096 x 32768 float32")
    assert (x.grid, x.threads, x.config_source) == ((4096,), 1024, "default")
    t = _launch(p.launches, "triton online", "softmax_online_kernel", "32768 x 4096 bfloat16")
    assert t.signature["x_ptr"] == "*bf16" and t.defines == {"BLOCK": 4096} and t.num_warps == 8
    pred = smb.predict(t4)
    assert pred["bytes in flight per SM that Little's law asks (bandwidth x ~1 us / SMs)"] == "8 KiB"
    assert "3.355 ms" in pred["floor at 32768 x 4096 float32 (2 s R C bytes / 320 GB/s)"]


def test_the_tuned_record_applies_to_its_own_gpu_only(fresh_config):
    if not os.path.exists(os.path.join(H200, sm.TUNED + ".json")):
        pytest.skip("no committed tuning record")
    h200, h100 = device.profile_info("h200"), device.profile_info("h100-sxm")
    assert "tuned on NVIDIA H200" in sm.knobs_source(h200)
    assert sm.knobs_source(h100) == "default" and sm.knobs(h100) == sm.CONFIG
    x = _launch(sm.launches(h200), sm.BEST, "softmax_05_block_row_f32", "32768 x 4096 float32")
    assert "tuned on NVIDIA H200" in x.config_source
    assert _launch(sm.launches(h100), sm.BEST, "softmax_05_block_row_f32", "32768 x 4096 float32").config_source \
        == "default"


def test_set_ept_changes_rung_05_and_says_so(fresh_config, capsys):
    t4 = device.profile_info("t4")
    config.set_overrides(["EPT=16"])
    assert sm.knobs(t4)["EPT"] == 16 and sm.knobs_source(t4) == "EPT: --set EPT=16; the rest default"
    x = _launch(sm.launches(t4), sm.BEST, "softmax_05_block_row_f32", "32768 x 4096 float32")
    assert x.threads == 256 and x.defines["EPT"] == 16 and "--set EPT=16" in x.config_source
    # 32768 columns at 16 values per thread would need 2048 threads: rung 05 hands the row to rung 06
    long_rows = [x for x in sm.launches(t4) if x.variant == sm.BEST and x.case == "4096 x 32768 float32"]
    assert [x.kernel for x in long_rows] == ["softmax_06a_online_stats_f32", "softmax_06b_online_normalize_f32"]
    assert lab_main(sm)(["--plan", "--gpu", "t4", "--set", "EPT=16"]) == 0
    out = capsys.readouterr().out
    assert "EPT=16" in out and "--set EPT=16" in out and "Tesla T4" in out
    config.set_overrides(["EPT=12"])
    with pytest.raises(ValueError, match="EPT a multiple of 8"):
        sm.knobs(t4)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: conventions, inputs, tolerances, the Triton kernel in the interpreter
# ---------------------------------------------------------------------------------------------------------------------
def test_reference_conventions():
    x = np.array([[1.0, 2.0, 3.0], [-np.inf, 0.0, -np.inf], [-np.inf] * 3, [1e4, 1e4 + 1, 1e4 - 1]])
    y = sm.reference(x)
    assert np.allclose(y[0].sum(), 1.0) and np.all(np.isnan(y[2]))
    assert y[1].tolist() == [0.0, 1.0, 0.0]
    assert np.all(np.isfinite(y[3])) and np.isclose(y[3].sum(), 1.0)


def test_make_inputs_has_the_edge_rows():
    (x,) = sm.make_inputs((8, 50), "float32", check.rng(0), "cpu")
    assert np.isneginf(x[0]).any() and not np.isneginf(x[0]).all()
    assert np.isneginf(x[4]).all()                                  # the middle row
    assert x[1].min() > 9000 and np.abs(x[2]).max() > 1000
    (h,) = sm.make_inputs((8, 50), "float16", check.rng(0), "cpu")
    assert np.isfinite(h[2]).all()                                  # fp16's large row stays in range
    (one,) = sm.make_inputs((1, 1), "float32", check.rng(0), "cpu")
    assert np.isfinite(one).all()


def test_fp16_tolerance_loosens_only_for_long_rows():
    assert sm.tolerance((4, 4096), "float16") == check.tolerance("float16")
    t = sm.tolerance((2, 262144), "float16")
    assert t.rel_norm > check.tolerance("float16").rel_norm
    assert sm.tolerance((2, 262144), "float32") == check.tolerance("float32")


@CPU_ONLY
@pytest.mark.parametrize("shape,block", [((1, 1), None), ((6, 2500), 1024), ((3, 7), 4), ((2, 64), 64)])
def test_triton_edge_rows_in_the_interpreter(shape, block):
    (x,) = sm.make_inputs(shape, "float32", check.rng(shape[1]), "cpu")
    out = check.poison(np.empty(shape, np.float32))
    check.assert_close(sm.softmax_triton(x, out=out, block=block), sm.reference(x), "float32")
    if shape[0] >= 4:
        assert np.isnan(out[shape[0] // 2]).all()
        assert np.all(out[0][np.isneginf(x[0])] == 0.0)


@CPU_ONLY
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_triton_16_bit_storage(dt):
    (x,) = sm.make_inputs((4, 300), dt, check.rng(5), "cpu")
    y = sm.softmax_triton(x)
    assert arrays.dtype_name(y) == dt
    c = check.compare(y, sm.reference(arrays.to_numpy(x)), dt, sm.tolerance((4, 300), dt))
    assert c.ok, c.message


@CPU_ONLY
def test_empty_shapes():
    assert sm.softmax_triton(np.empty((0, 5), np.float32)).shape == (0, 5)
    assert sm.softmax_triton(np.empty((3, 0), np.float32)).shape == (3, 0)


@CPU_ONLY
def test_triton_rejects_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        sm.softmax_triton(np.ones(8, np.float32))
    with pytest.raises(ValueError, match="2-D"):
        sm.softmax_triton(np.ones((2, 2, 2), np.float32))
    with pytest.raises(TypeError, match="dtype int32"):
        sm.softmax_triton(np.ones((2, 4), np.int32))
    with pytest.raises(TypeError, match="dtype float64"):
        sm.softmax_triton(np.ones((2, 4), np.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        sm.softmax_triton(np.ones((4, 8), np.float32)[:, ::2])
    with pytest.raises(ValueError, match="out: expected shape"):
        sm.softmax_triton(np.ones((2, 4), np.float32), out=np.empty((4, 2), np.float32))


@pytest.mark.parametrize("fn", CUDA_ALL + CUDA_F32)
def test_cuda_wrappers_reject_bad_input_before_any_launch(fn):
    import torch

    with pytest.raises(TypeError, match="x: expected a GPU array"):
        fn(np.ones((2, 4), np.float32))
    with pytest.raises(TypeError, match="dtype int32"):
        fn(np.ones((2, 4), np.int32))
    if fn in CUDA_ALL:
        with pytest.raises(TypeError, match="x: expected a GPU array"):
            fn(torch.ones((2, 4), dtype=torch.bfloat16))
    else:
        with pytest.raises(TypeError, match="dtype bfloat16"):
            fn(torch.ones((2, 4), dtype=torch.bfloat16))


@CPU_ONLY
def test_main_quick_on_cpu(capsys):
    assert lab_main(sm)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "softmax_05_block_row_f32" in out and "interpreter" in out and "dispatch" in out


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def _misaligned(shape, dtype, seed=0):
    """A C-contiguous matrix whose base is one element past a 16-byte boundary (the scalar path must take it)."""
    import cupy
    import torch

    (x,) = sm.make_inputs(shape, dtype, check.rng(seed), "cuda")
    n = shape[0] * shape[1]
    if dtype == "bfloat16":
        buf = torch.empty(n + 1, dtype=torch.bfloat16, device="cuda")
        v = buf[1:].view(shape)
        v.copy_(x)
    else:
        buf = cupy.empty(n + 1, dtype=dtype)
        v = buf[1:].reshape(shape)
        v[...] = x
    return v


@gpu
@pytest.mark.parametrize("fn", CUDA_ALL + [sm.softmax_triton])
@pytest.mark.parametrize("dtype", sm.DTYPES)
@pytest.mark.parametrize("cols", [8, 1024, 4096, 40_000])
def test_misaligned_rows_take_the_scalar_path(fn, dtype, cols):
    x = _misaligned((5, cols), dtype, seed=cols)
    assert not arrays.aligned(x, 16)
    out = check.poisoned(tuple(x.shape), dtype, x)
    fn(x, out=out)
    check.assert_close(out, sm.reference(arrays.to_numpy(x)), dtype, sm.tolerance(x.shape, dtype))


@gpu
@pytest.mark.parametrize("fn", CUDA_ALL + CUDA_F32 + [sm.softmax_triton, sm.peer_torch_softmax])
@pytest.mark.parametrize("cols", [1, 5, 4096, 33_000])
def test_all_minus_inf_rows_are_nan_and_masked_entries_are_zero(fn, cols):
    import cupy

    x = cupy.asarray(check.rng(cols).standard_normal((4, cols)), dtype=cupy.float32)
    x[1] = -cupy.inf
    if cols > 1:
        x[2, ::2] = -cupy.inf
    y = arrays.to_numpy(fn(x))
    assert np.isnan(y[1]).all()
    if cols > 1:
        assert np.all(y[2, ::2] == 0.0) and np.isclose(y[2].sum(), 1.0, rtol=1e-5)
    assert np.isfinite(y[[0, 3]]).all()


@gpu
@pytest.mark.parametrize("fn", CUDA_ALL + CUDA_F32 + [sm.softmax_triton])
def test_empty_and_bad_input_on_gpu(fn):
    import cupy
    import torch

    assert fn(cupy.empty((0, 7), cupy.float32)).shape == (0, 7)
    assert fn(cupy.empty((3, 0), cupy.float32)).shape == (3, 0)
    with pytest.raises(TypeError, match="dtype"):
        fn(cupy.ones((2, 4), cupy.float64))
    with pytest.raises(ValueError, match="2-D"):
        fn(cupy.ones(8, cupy.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(cupy.ones((4, 8), cupy.float32)[:, ::2])
    if fn is not sm.softmax_triton:
        with pytest.raises(TypeError, match="from_dlpack"):
            fn(torch.ones((2, 4), device="cuda"))                  # fp32 CUDA kernels take CuPy arrays


@gpu
@pytest.mark.parametrize("fn", CUDA_ALL)
def test_row_offsets_beyond_2_to_the_31(fn):
    """(65537, 32768) fp16: the last row starts past element 2^31; only 64-bit offsets reach it."""
    import cupy

    rows, cols = 65537, 32768
    free, _ = cupy.cuda.runtime.memGetInfo()
    if free < 2 * 2 * rows * cols + 2**30:
        pytest.skip("needs ~9 GiB free")
    x = cupy.empty((rows, cols), cupy.float16)
    x[...] = 0
    tail = cupy.asarray(check.rng(1).standard_normal((2, cols)) * 3, dtype=cupy.float16)
    x[-2:] = tail
    y = fn(x)
    check.assert_close(y[-2:], sm.reference(arrays.to_numpy(tail)), "float16", sm.tolerance((2, cols), "float16"))
    assert bool(cupy.all(y[0] == y[0, 0]))
    del x, y
    cupy.get_default_memory_pool().free_all_blocks()


@gpu
def test_rung02_stages_in_global_memory_for_rows_beyond_shared_memory():
    import cupy

    cols = sm._smem_row_limit() // 4 + 1
    x = cupy.asarray(check.rng(3).standard_normal((2, cols)), dtype=cupy.float32)
    check.assert_close(sm.softmax_cuda_02(x), sm.reference(arrays.to_numpy(x)), "float32")
