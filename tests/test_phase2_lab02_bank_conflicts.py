"""Lab 2.2 bank conflicts: the bank simulator every prediction comes from, compiler facts read from NVRTC (the three
row-sum kernels differ only in their addresses), the Triton row sum in the interpreter, input validation, the lab's
--quick run on the CPU, --replot from the committed JSON; on a GPU the sweep kernels at every stride (exact) and the
row sums' edges."""
import math

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from phase2_cuda.lab02_bank_conflicts import bench as bkb
from phase2_cuda.lab02_bank_conflicts import lab as bk
from tests.helpers import cp, lab_main, needs_sass, quick_output, rand, replot

gpu = pytest.mark.gpu


# =====================================================================================================================
# CPU tier
# =====================================================================================================================
def test_bank_simulator_predicts_gcd_and_broadcast():
    for s in range(1, 65):
        assert bk.stride_passes(s) == math.gcd(s, 32), s
    assert bk.stride_passes(0) == 1                     # every lane reads the same word: broadcast
    assert bk.swizzle_passes() == 1
    assert bk.passes([0, 32, 64, 0]) == 3               # three distinct words in bank 0; the repeat is free
    assert (bk.tile_passes("conflicted"), bk.tile_passes("padded"), bk.tile_passes("swizzled")) == (1056, 64, 64)


@needs_sass
def test_rowsum_kernels_differ_only_in_addresses():
    rep = cuda.compile_report(bk.CU, "sm_90")
    counts = [rep[k].sass_counts for k in ("rowsum_01_conflicted", "rowsum_02_padded", "rowsum_03_swizzled")]
    for c in counts:
        assert c.get("LDS.32") == 32 and c.get("STS.32") == 32 and c.get("LDS.128", 0) == 0
        assert c.get("LDG.32") == 32
    assert rep["bank_01_stride"].sass_counts.get("LDS.32", 0) >= bk.READS
    assert all(rep[k].sass_counts.get("BAR", 0) == 0 for k in ("rowsum_01_conflicted", "rowsum_02_padded"))


def test_sweep_reference_swizzle_equals_stride_32():
    src = check.rng(3).integers(1, 5, bk.BUF_WORDS).astype(np.float32)
    ref = bk.sweep_reference(src, 32, 7, 64)
    assert ref.shape == (64,) and np.array_equal(ref[:32], ref[32:])
    assert ref[1] == 7 * src[32:64].sum()


@pytest.mark.cpu_only
@pytest.mark.parametrize("rows", [1, 33, 129])
def test_triton_rowsum_in_the_interpreter(rows):
    x = rand((rows, 32), rows)
    check.assert_close(bk.rowsum_triton(x, out=check.poison(np.empty(rows, np.float32))), bk.reference(x), "float32")


@pytest.mark.cpu_only
def test_rowsum_rejects_rows_that_are_not_32_wide():
    with pytest.raises(ValueError, match="rows of 32"):
        bk.rowsum_triton(rand((4, 31)))
    with pytest.raises(TypeError, match="GPU array"):
        bk.rowsum_cuda_02(rand((4, 32)))


def test_plan_the_sweep_wave_follows_the_sms_and_their_limits():
    """One wave of both sweep kernels: SMs x the blocks both fit; on a T4 (1024 threads per SM) four of 256 threads,
    on an H200 the swizzled kernel's registers hold it below the eight its threads would allow."""
    for slug, per_sm in (("t4", 4), ("h200", 5)):
        gpu = device.profile_info(slug)
        p = plan.make(bk, bkb, gpu)
        sweep = [x for x in p.launches if x.kernel.startswith("bank_")]
        assert [x.grid for x in sweep] == [(gpu.sms * per_sm,)] * 2 and not any(x.variant for x in sweep)
        assert min(bk.blocks_per_sm(k, bk.SWEEP_THREADS, gpu) for k in ("bank_01_stride", "bank_02_xor_swizzle")) \
            == per_sm
        assert p.predictions["stride sweep: one wave of both kernels"] == f"{gpu.sms * per_sm} blocks ({per_sm} per SM)"


def test_plan_says_where_the_conflict_is_the_bound():
    key = "cuda 01 conflicted (1056 passes per tile)"
    big = plan.make(bk, bkb, device.profile_info("h200")).predictions[key]
    slow = plan.make(bk, bkb, device.profile_info("l4")).predictions[key]
    assert "shared memory is the bound" in big and "hides under the DRAM time" in slow


def test_set_changes_the_row_sum_launch_and_says_so():
    gpu = device.profile_info("a100")
    default = {x.kernel: x for x in bk.launches(gpu)}["rowsum_02_padded"]
    assert default.grid == (2**23 // 32 // 8,) and default.threads == 256 and default.config_source == "default"
    try:
        config.set_overrides(["WARPS=4", "BLOCK_R=64"])
        got = {x.kernel: x for x in bk.launches(gpu)}
        r = got["rowsum_02_padded"]
        assert r.grid == (2**23 // 32 // 4,) and r.threads == 128 and r.defines == {"WARPS": 4}
        assert r.config_source == "--set WARPS=4"
        assert got["rowsum_kernel"].grid == (2**23 // 64,) and "--set BLOCK_R=64" in got["rowsum_kernel"].config_source
        config.set_overrides(["WARPS=16"])                 # 16 tiles of 33 x 32 floats: 66 KiB of static shared memory
        with pytest.raises(ValueError, match="WARPS in 1, 2, 4, 8"):
            bk.launches(gpu)
    finally:
        config.set_overrides([])


@pytest.mark.cpu_only
def test_main_quick_on_the_cpu(capsys):
    out = quick_output(lab_main(bk), capsys)
    assert "predicted passes per warp load" in out and "1056" in out          # the model (bench.explain)
    assert "rowsum_03_swizzled" in out                                        # the compile report
    if cuda.find_cuobjdump():
        assert "the same shared-memory instructions" in out                   # its conclusion, read from the SASS


def test_replot_draws_the_committed_json(tmp_path):
    assert replot(lab_main(bk), tmp_path) == [f"{bk.LAB}.png", f"{bk.LAB}_sweep.png"]


# =====================================================================================================================
# GPU tier
# =====================================================================================================================


@gpu
def test_bank_sweep_kernels_exact_at_every_stride():
    src = bk.sweep_source(check.rng(7))
    s_np = arrays.to_numpy(src)
    for stride in range(0, bk.MAX_STRIDE + 1):
        got = arrays.to_numpy(bk.stride_read(src, stride, 2, 3))
        assert np.array_equal(got, bk.sweep_reference(s_np, stride, 2, 3 * bk.SWEEP_THREADS)), stride
    got = arrays.to_numpy(bk.swizzle_read(src, 5, 2))
    assert np.array_equal(got, bk.sweep_reference(s_np, 32, 5, 2 * bk.SWEEP_THREADS))
    with pytest.raises(ValueError, match="stride"):
        bk.stride_read(src, bk.MAX_STRIDE + 1, 1, 1)
    with pytest.raises(ValueError, match="at least"):
        bk.stride_read(src[:100], 1, 1, 1)
    with pytest.raises(ValueError, match="reps"):
        bk.swizzle_read(src, 0, 1)


@gpu
@pytest.mark.parametrize("fn", [bk.rowsum_cuda_01, bk.rowsum_cuda_02, bk.rowsum_cuda_03])
def test_rowsum_edges_on_gpu(fn):
    import cupy

    assert fn(cupy.empty((0, 32), cupy.float32)).shape == (0,)
    with pytest.raises(ValueError, match="rows of 32"):
        fn(cupy.ones((4, 33), cupy.float32))
    x = cp(rand((8 * 32 * 3 + 5, 32), 8))                 # several blocks, a partial warp tile, idle warps
    check.assert_close(fn(x), bk.reference(arrays.to_numpy(x)), "float32")


@gpu
def test_the_sweep_check_passes():
    rows, ok = bkb.check_sweep()
    assert ok and len(rows) == 8, rows
