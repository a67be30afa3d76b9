"""Lab 2.2 bank conflicts: the bank simulator every prediction comes from, compiler facts read from NVRTC (the three
row-sum kernels differ only in their addresses), the Triton row sum in the interpreter, input validation, the lab's
--quick run on the CPU, --replot from the committed JSON; on a GPU the sweep kernels at every stride (exact) and the
row sums' edges."""
import math

import numpy as np
import pytest

from common import arrays, check, cuda
from phase2_cuda.lab02_bank_conflicts import bench as bkb
from phase2_cuda.lab02_bank_conflicts import lab as bk
from tests.helpers import cp, needs_sass, quick_output, rand, replot

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


@pytest.mark.cpu_only
def test_main_quick_on_the_cpu(capsys):
    out = quick_output(bk.main, capsys)
    assert "predicted passes per warp load" in out and "1056" in out          # the model (bench.explain)
    assert "rowsum_03_swizzled" in out                                        # the compile report
    if cuda.find_cuobjdump():
        assert "the same shared-memory instructions" in out                   # its conclusion, read from the SASS


def test_replot_draws_the_committed_json(tmp_path):
    assert replot(bk.main, tmp_path) == [f"{bk.LAB}.png", f"{bk.LAB}_sweep.png"]


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
