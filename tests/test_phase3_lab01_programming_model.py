"""Lab 3.1 (Triton programming model): the AOT compile report, the CUDA C row sums, the interpreter, bad input."""
import numpy as np
import pytest

from common import check, config, cuda, device, lab, plan
from common import triton_support as ts
from phase3_triton.lab01_programming_model import bench as pmb
from phase3_triton.lab01_programming_model import lab as pm
from tests.helpers import H200, lab_main

va = lab.lab_module("phase1_architecture", "lab02_vector_add")

gpu = pytest.mark.gpu
interpreter_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter test (host arrays); the GPU tier covers "
                                                               "the same on device")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: ahead-of-time compilation (runs without a GPU, and on a GPU machine with the real compiler)
# ---------------------------------------------------------------------------------------------------------------------
def test_vector_add_aot_ptx_and_load_width_follow_divisibility():
    rows = pmb.add_alignment_table(cc=90)
    none, ptr_only, both = (r["PTX global loads"] for r in rows)
    assert "v4" not in none and "b32" in none, none
    assert "v4" not in ptr_only, f"aligned pointers but odd n must still give scalar loads: {ptr_only}"
    assert "v4.b32" in both, both
    k = ts.aot(va.add_kernel, pmb.ADD_SIG, {"BLOCK": 1024}, cc=90, num_warps=4,
               divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "n"))
    assert ".entry add_kernel" in k.asm["ptx"] and k.metadata.num_warps == 4
    s = ts.summarize(k)
    assert s["ptx_mem"].get("ld.global.v4.b32") == 4      # 1024 floats / 128 threads = 8 per thread = 2 per input
    if cuda.find_cuobjdump():
        assert s["sass"].get("LDG.128") == 4 and s["regs"] and s["regs"] > 0


def test_num_warps_sets_threads_elements_and_width():
    rows = {r["num_warps"]: r for r in pmb.add_num_warps_table(cc=90, warps=(4, 16, 32))}
    assert rows[4]["elements/thread"] == 8 and rows[4]["sizePerThread"] == "4"
    assert "v4.b32" in rows[4]["PTX global loads"]
    assert "v2.b32" in rows[16]["PTX global loads"]           # 2 floats per thread: 8-byte loads
    assert "v2" not in rows[32]["PTX global loads"] and "v4" not in rows[32]["PTX global loads"]
    assert rows[32]["threads"] == 1024


def test_rowsum_reduction_is_shuffles_and_a_barrier():
    rows = pmb.rowsum_stage_table(cc=90, stages=(1, 3))
    for r in rows:
        assert r["shfl.sync"] >= 5, r         # log2(32) butterfly steps inside a warp, at least
        assert r["bar.sync"] >= 1, r          # the cross-warp step goes through shared memory
        assert "v4.b32" in r["PTX global loads"]


def _all_ints_one(sig: dict, const: dict):
    """A GPU launch passes an integer argument equal to 1 as a compile-time constant: compile that way."""
    sig, const = dict(sig), dict(const)
    for name, ty in list(sig.items()):
        if ty in ("i32", "i64"):
            sig[name], const[name] = "constexpr", 1
    return sig, const


@pytest.mark.parametrize("ty", ["*fp32", "*fp16", "*bf16"])
def test_kernels_compile_for_every_dtype_and_integers_of_one(ty):
    """The interpreter checks no types; the GPU compiler does. And a launch passes integers equal to 1 as
    compile-time constants: both kernels must compile that way too."""
    row_sig = dict(pmb.ROWSUM_SIG, x_ptr=ty)
    ts.aot(pm.rowsum_kernel, *_all_ints_one(row_sig, {"BLOCK_N": 16}), cc=90)
    ts.aot(pm.rowsum_kernel, row_sig, {"BLOCK_N": 4096}, cc=90, num_warps=8)
    tile_sig = {"x_ptr": ty, "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32", "row_stride": "i32",
                "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    ts.aot(pm.rowsum_tile_kernel, *_all_ints_one(tile_sig, {"BLOCK_M": 256, "BLOCK_N": 16}), cc=90)


def test_ptx_memory_ops_reads_cache_hints():
    ptx = "ld.global.L1::evict_first.L2::cache_hint.v4.b32 {...}\nst.global.cs.v4.b32 [..]\nld.global.b32 %r"
    assert ts.ptx_memory_ops(ptx) == {"ld.global.v4.b32": 1, "st.global.cs.v4.b32": 1, "ld.global.b32": 1}


def test_cuda_rowsum_compile_facts():
    rep = cuda.compile_report(pm.CU, "sm_90")
    k1, k2, k3 = (rep[n] for n in ("rowsum_01_block_per_row", "rowsum_02_float4_shuffle", "rowsum_03_warp_per_row"))
    assert k1.smem_bytes == 4 * pm.THREADS and k3.smem_bytes == 0
    assert k2.smem_bytes == 4 * pm.WARPS_PER_BLOCK
    if not k1.sass:
        pytest.skip("no cuobjdump to disassemble with")
    c1, c2, c3 = k1.sass_counts, k2.sass_counts, k3.sass_counts
    assert c2.get("LDG.128", 0) > 0 and c1.get("LDG.128", 0) == 0
    assert c2.get("SHFL", 0) >= 5 and c3.get("SHFL", 0) >= 5 and c1.get("SHFL", 0) == 0
    assert c1.get("BAR", 0) > c2.get("BAR", 0) >= 1 and c3.get("BAR", 0) == 0


def test_cuda_wrappers_reject_host_arrays_before_launch():
    x = np.ones((4, 8), np.float32)
    for fn in (pm.rowsum_cuda_01, pm.rowsum_cuda_02, pm.rowsum_cuda_03):
        with pytest.raises(TypeError, match=r"x: expected a GPU array"):
            fn(x)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the interpreter
# ---------------------------------------------------------------------------------------------------------------------
@interpreter_only
@pytest.mark.parametrize("fn", [pm.rowsum_triton, pm.rowsum_triton_tile])
def test_interpreter_rowsum_edges(fn):
    import torch

    rng = check.rng(30)
    for shape in ((1, 1), (2, 3), (5, 257), (3, 4097)):
        x = (rng.standard_normal(shape) + 0.25).astype(np.float32)
        out = check.poison(np.empty(shape[0], np.float32))
        check.assert_close(fn(x, out=out), x.astype(np.float64).sum(1), "float32", what=str(shape))
    assert fn(np.zeros((0, 5), np.float32)).shape == (0,)
    np.testing.assert_array_equal(fn(np.zeros((3, 0), np.float32), out=check.poison(np.empty(3, np.float32))), 0)
    xb = torch.randn(4, 50, dtype=torch.bfloat16)
    check.assert_close(fn(xb), xb.double().sum(1).numpy(), "float32", what="bf16 in, fp32 out")


@interpreter_only
def test_interpreter_rejects_bad_input():
    x = np.ones((4, 8), np.float32)
    with pytest.raises(ValueError, match="2-D"):
        pm.rowsum_triton(np.ones(8, np.float32))
    with pytest.raises(TypeError, match="dtype int32"):
        pm.rowsum_triton(x.astype(np.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        pm.rowsum_triton(np.ones((8, 4), np.float32).T)
    with pytest.raises(ValueError, match="out: expected shape"):
        pm.rowsum_triton(x, out=np.empty(3, np.float32))
    with pytest.raises(TypeError, match="out: dtype float16"):
        pm.rowsum_triton_tile(x, out=np.empty(4, np.float16))


def test_earlier_cuda_variant_lookup():
    v = lab.earlier_cuda_variant(pm, "cuda 02", "float32")
    if device.has_gpu():
        assert v is not None and v.name.startswith("cuda 02")
    else:
        assert v is None                     # CUDA C variants cannot run without a GPU


@interpreter_only
def test_guarded_launch_leaves_the_compiler_usable():
    """After an interpreted kernel that calls tl.sum, a plain compile_for (no compiler_mode) must still work."""
    x = np.ones((3, 40), np.float32)
    pm.rowsum_triton(x)
    k = ts.compile_for(va.add_kernel, pmb.ADD_SIG, {"BLOCK": 256}, cc=80, num_warps=2)
    assert "ld.global" in k.asm["ptx"]


@interpreter_only
def test_main_quick_on_cpu(capsys):
    assert lab_main(pm)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "interpreter" in out and "v4.b32" in out and "rowsum_02_float4_shuffle" in out
    assert "sizePerThread" in out and "compiled (NVRTC), not run" in out


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
def test_gpu_launches_specialize_on_alignment_and_n():
    rows = pmb.launched_kernels_report()
    aligned, odd, offset, rowsum = rows
    assert "v4" in aligned["PTX global loads"], aligned
    assert "v4" not in odd["PTX global loads"], odd
    assert "v4" not in offset["PTX global loads"], offset
    assert rowsum["regs"] and rowsum["regs"] > 0 and rowsum["spills"] == 0


@gpu
@pytest.mark.parametrize("fn", [pm.rowsum_cuda_01, pm.rowsum_cuda_02, pm.rowsum_cuda_03, pm.rowsum_triton,
                                pm.rowsum_triton_tile])
def test_gpu_rowsum_misaligned_and_odd_rows(fn):
    import cupy

    rng = check.rng(31)
    for rows, cols in ((5, 1001), (7, 4096), (3, 3)):
        flat = cupy.asarray(rng.standard_normal(rows * cols + 1), dtype=cupy.float32)
        x = flat[1:].reshape(rows, cols)          # contiguous, but 4 bytes off a 16-byte boundary
        assert not pm.float4_rows_ok(x)
        out = check.poisoned((rows,), "float32", x)
        check.assert_close(fn(x, out=out), x.get().astype(np.float64).sum(1), "float32", what=f"{rows}x{cols}")
    e = cupy.zeros((3, 0), cupy.float32)
    assert float(fn(e).sum()) == 0.0
    assert fn(cupy.zeros((0, 4), cupy.float32)).shape == (0,)


@gpu
def test_gpu_bad_input():
    import cupy

    x = cupy.ones((4, 8), cupy.float32)
    for fn in (pm.rowsum_cuda_01, pm.rowsum_cuda_02, pm.rowsum_cuda_03):
        with pytest.raises(TypeError, match="float16"):
            fn(x.astype(cupy.float16))
        with pytest.raises(ValueError, match="C-contiguous"):
            fn(x.T)
    with pytest.raises(TypeError, match="expected a GPU array"):
        pm.rowsum_triton(np.ones((4, 8), np.float32))
    with pytest.raises(ValueError, match="2-D"):
        pm.rowsum_triton(cupy.ones(8, cupy.float32))


def test_replot_redraws_the_committed_plot(tmp_path):
    assert lab_main(pm)(["--replot", H200, "--out", str(tmp_path)]) == 0
    assert (tmp_path / f"{pm.LAB}.png").stat().st_size > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs a learner may have (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def _launches(gpu_name: str) -> dict:
    p = plan.make(pm, pmb, device.profile_info(gpu_name))
    return {(x.kernel, x.case): x for x in p.launches}, p


def test_plan_on_a_t4_and_an_rtx_4090():
    for name, sms, per_sm in (("t4", 40, 4), ("rtx-4090", 128, 6)):
        got, p = _launches(name)
        assert not p.skipped, [(v.name, v.why) for v in p.skipped]       # every row sum runs on both
        main = "row sums 32768 x 4096 float32"
        assert got[("rowsum_01_block_per_row", main)].grid == (32768,)
        assert got[("rowsum_03_warp_per_row", main)].grid == (32768 // 8,)       # 8 warps (rows) a block of 256
        row = got[("rowsum_kernel", main)]
        assert row.defines == {"BLOCK_N": 4096} and row.num_warps == 8 and row.config_source == "default"
        tile = got[("rowsum_tile_kernel", "row sums 262144 x 128 float32")]
        assert tile.defines == {"BLOCK_M": 32, "BLOCK_N": 128} and tile.grid == (262144 // 32,)
        assert any(x.kernel == "add_kernel" and x.variant == "" for x in p.launches)   # lab 1.2's, timed beside
        # resident blocks of rowsum_01 follow the architecture's threads per SM (1024 on sm_75, 1536 on sm_89)
        waves = next(v for k, v in p.predictions.items() if k.startswith("rowsum_01 at"))
        assert waves.startswith(f"{per_sm} (") and f"over {sms} SMs" in waves, waves
        floor = next(v for k, v in p.predictions.items() if k.startswith("floor of row sums 32768"))
        bw = device.profile_info(name).hbm_gbps
        assert abs(float(floor.split()[0]) - 32768 * 4097 * 4 / (bw * 1e9) * 1e3) < 1e-3


def test_set_changes_the_launch_and_says_so():
    try:
        config.set_overrides(["THREADS=128", "ROW_WARPS=2"])
        got, _ = _launches("l4")
        k3 = got[("rowsum_03_warp_per_row", "row sums 32768 x 4096 float32")]
        assert k3.threads == 128 and k3.defines == {"THREADS": 128} and k3.grid == (32768 // 4,)
        assert k3.config_source == "--set THREADS=128"
        row = got[("rowsum_kernel", "row sums 32768 x 4096 float32")]
        assert row.num_warps == 2 and "--set ROW_WARPS=2" in row.config_source
        config.set_overrides(["THREADS=96"])
        with pytest.raises(ValueError, match="THREADS must be a power of two"):
            pm.cuda_config()
    finally:
        config.set_overrides([])
    assert pm.cuda_config().source() == "default" and pm.row_config(4096) == (4096, 8)


def test_plan_command_prints_the_gpu_and_the_override(capsys):
    try:
        assert lab_main(pm)(["--plan", "--gpu", "t4", "--set", "TILE_WARPS=8"]) == 0
    finally:
        config.set_overrides([])
        device.simulate(None)
    out = capsys.readouterr().out
    assert "Tesla T4" in out and "rowsum_tile_kernel" in out and "--set TILE_WARPS=8" in out
