"""Lab 2.4 launch configuration: the occupancy arithmetic it teaches (common.occupancy's, no calculator of its own),
the Little's-law and tail models, compiler facts read from NVRTC (one 16-byte load per loop iteration), the Triton
kernel in the interpreter, input validation, the lab's --quick run on the CPU, --replot from the committed JSON; on a
GPU the calculator against the driver, any launch shape, misaligned views and bad launches."""
import math

import numpy as np
import pytest

from common import arrays, check, config, cuda, device
from common.occupancy import occupancy
from phase2_cuda.lab04_launch_config import bench as lcb
from phase2_cuda.lab04_launch_config import lab as lc
from tests.helpers import cp, lab_main, needs_sass, quick_output, rand, replot

gpu = pytest.mark.gpu


# =====================================================================================================================
# CPU tier
# =====================================================================================================================
@pytest.mark.parametrize("arch,threads,regs,smem,want", [
    ("sm_90", 256, 32, 0, (8, "warps")),
    ("sm_90", 32, 24, 0, (32, "blocks")),               # 32 blocks x 32 threads: half an SM
    ("sm_90", 256, 64, 0, (4, "registers")),
    ("sm_90", 256, 255, 0, (1, "registers")),           # 8160 -> 8192 registers per warp: 2 warps per partition
    ("sm_90", 1024, 64, 0, (1, "registers")),           # 64 x 1024 = the whole register file, exactly
    ("sm_90", 1024, 72, 0, (0, "registers")),           # no block fits: more registers than a block may hold
    ("sm_90", 128, 32, 100 * 1024, (2, "shared memory")),
    ("sm_75", 256, 32, 0, (4, "warps")),
    ("sm_80", 128, 40, 0, (12, "registers")),           # 40 x 32 = 1280 per warp: 12 warps per partition = 48 / 4
])
def test_the_lessons_occupancy_examples(arch, threads, regs, smem, want):
    """The resident-block arithmetic the lab teaches, from common.occupancy (the lab has no calculator of its own)."""
    occ = occupancy(arch, threads, regs, smem_dynamic=smem, max_dynamic_smem=smem or None)
    blocks, limit = want
    assert occ.blocks_per_sm == blocks
    assert limit in occ.limiters if blocks else limit in occ.why_zero


def test_wave_table_and_blocks_per_sm_use_the_common_calculator():
    regs = cuda.compile_report(lc.CU, "sm_90")["scale_grid_stride_float4"].registers
    h200 = device.profile_info("h200")
    rows = {r["threads/block"]: r for r in lcb.wave_table(h200, regs)}
    want = [occupancy("sm_90", b, regs).blocks_per_sm for b in lc.BLOCK_SIZES]
    assert [r["blocks/SM"] for r in rows.values()] == want
    assert rows[32]["limited by"] == "blocks" and rows[32]["occupancy"] == 0.5        # 32-thread blocks: half an SM
    assert rows[256]["blocks/SM"] == 8 and rows[256]["wave (132 SMs)"] == 1056
    assert rows[32]["resident threads"] == rows[256]["resident threads"] // 2
    # a simulated GPU's figure is the calculator's (a real one's is the driver's, checked against it below)
    assert [lc.blocks_per_sm(b, gpu=h200) for b in lc.BLOCK_SIZES] == [r["blocks/SM"] for r in rows.values()]
    assert not hasattr(lc, "resident_blocks") and not hasattr(lc, "sm_count")


def test_waves_and_predictions_come_from_the_gpu_described():
    """A wave is that GPU's SMs x the blocks its SM holds: the plan's grids and the Little's-law predictions follow the
    profile (a T4: 40 SMs, 1024 threads and 16 blocks per SM; an H200: 132 SMs, 2048 and 32)."""
    t4, h200 = device.profile_info("t4"), device.profile_info("h200")
    assert lc.wave(256, gpu=t4) == 40 * 4 and lc.wave(256, gpu=h200) == 132 * 8
    assert lc.wave(32, gpu=t4) == 40 * 16 and lc.wave(32, gpu=h200) == 132 * 32
    for gpu in (t4, h200):
        got = {x.variant: x for x in lc.launches(gpu)}
        assert got["cuda 256 threads x 1 wave (grid-stride)"].grid == (lc.wave(256, gpu=gpu),)
        assert got["cuda 32 threads x 1/8 wave (grid-stride)"].grid == (round(lc.wave(32, gpu=gpu) / 8),)
        assert got["cuda 1024 threads, one float4 per thread"].grid == (2**27 // 4 // 1024,)
        p = lcb.predict(gpu)
        assert p[f"resident threads that saturate {0.9 * gpu.hbm_gbps:.0f} GB/s at 0.7 us"].endswith(
            f"of {gpu.sms * gpu.max_threads_per_sm:,}")
    # Little's law with the same latency asks for bytes in flight in proportion to the bandwidth
    assert lcb.saturating_threads(h200) == pytest.approx(lcb.saturating_threads(t4) * 4800 / 320, rel=1e-3)


def test_compile_report_describes_the_gpu_of_the_arch(capsys):
    """--arch sm_75: the tables of the GPU at hand when it is an sm_75 one, else of sm_75's example profile."""
    here = device.has_gpu() and device.info().arch == "sm_75"
    gpu = device.info() if here else device.profile_info("t4")
    assert lcb.report_gpu("sm_75").name == gpu.name
    lcb.compile_report(type("A", (), {"arch": "sm_75"})())
    out = capsys.readouterr().out
    assert f"{gpu.label()}: one wave" in out and f"wave ({gpu.sms} SMs)" in out
    assert f"capped at 90% of {gpu.hbm_gbps:.0f} GB/s" in out


def test_set_changes_the_triton_launch_and_says_so():
    gpu = device.profile_info("l4")
    tri = next(x for x in lc.launches(gpu) if x.kernel == "scale_kernel")
    assert tri.grid == (2**27 // 1024,) and tri.config_source == "default"
    try:
        config.set_overrides(["BLOCK=4096", "num_warps=8"])
        tri = next(x for x in lc.launches(gpu) if x.kernel == "scale_kernel")
        assert tri.grid == (2**27 // 4096,) and tri.num_warps == 8 and tri.defines == {"BLOCK": 4096}
        assert tri.config_source == "BLOCK: --set BLOCK=4096; num_warps: --set num_warps=8; the rest default"
        config.set_overrides(["BLOCK=1000"])
        with pytest.raises(ValueError, match="power of two"):
            lc.triton_config()
    finally:
        config.set_overrides([])


def test_littles_law_and_tail_models():
    c = 4000.0
    assert lc.little_gbps(10, 0.7, c) < lc.little_gbps(20, 0.7, c) <= c
    assert lc.little_gbps(10**7, 0.7, c) == c
    assert lc.implied_latency_us(1000, lc.little_gbps(1000, 0.5, c)) == pytest.approx(0.5)
    wb = 1056
    for w in (1, 2, 3):
        assert lc.tail_model(w, wb, 256, 0.7, c) == pytest.approx(w)
    for w in (1.1, 1.25, 1.5, 2.1):
        t = lc.tail_model(w, wb, 256, 0.7, c)
        assert w - 1e-9 <= t <= math.ceil(w), w       # between the fluid and the quantized model
    assert lc.tail_model(1.1, wb, 256, 5.0, c) > lc.tail_model(1.1, wb, 256, 0.7, c)   # longer latency, bigger tail


@needs_sass
def test_scale_kernel_is_one_128_bit_load_per_iteration():
    rep = cuda.compile_report(lc.CU, "sm_90")
    c4 = rep["scale_grid_stride_float4"].sass_counts
    assert c4.get("LDG.128") == 1 and c4.get("STG.128") == 1    # #pragma unroll 1: one load in flight per thread
    assert rep["scale_grid_stride_scalar"].sass_counts.get("LDG.128", 0) == 0


@pytest.mark.cpu_only
@pytest.mark.parametrize("n", [1, 3, 1025])
def test_triton_scale_in_the_interpreter(n):
    x = rand(n, n)
    check.assert_close(lc.scale_triton(x, out=check.poison(np.empty(n, np.float32))), lc.reference(x), "float32")


def test_scale_rejects_host_arrays():
    with pytest.raises(TypeError, match="GPU array"):
        lc.scale(np.ones(8, np.float32))


@pytest.mark.cpu_only
def test_main_quick_on_the_cpu(capsys):
    out = quick_output(lab_main(lc), capsys)
    assert "limited by blocks" in out and "limited by warps" in out           # the calculator's arithmetic, printed
    assert "one wave of scale_grid_stride_float4" in out and "tail effect, predicted" in out


def test_replot_draws_the_committed_json(tmp_path):
    assert replot(lab_main(lc), tmp_path) == [f"{lc.LAB}.png", f"{lc.LAB}_tail.png"]


# =====================================================================================================================
# GPU tier
# =====================================================================================================================


@gpu
def test_occupancy_calculator_agrees_with_the_driver():
    arch = device.current_arch()
    if arch not in device.ARCHS:
        pytest.skip(f"{arch} is not in common.device.ARCHS")
    regs = cuda.get_kernel(lc.CU, "scale_grid_stride_float4").num_regs
    for b in lc.BLOCK_SIZES:
        assert occupancy(arch, b, regs).blocks_per_sm == lc.blocks_per_sm(b), b


@gpu
@pytest.mark.parametrize("threads,blocks", [(32, 1), (96, 1), (1024, 7), (256, "per_element"), (64, 100_000)])
@pytest.mark.parametrize("n", [1, 5, 4099, 1_000_003])
def test_scale_any_launch(threads, blocks, n):
    x = cp(rand(n, n))
    out = check.poisoned((n,), "float32", x)
    lc.scale(x, out, threads=threads, blocks=blocks)
    check.assert_close(out, lc.reference(arrays.to_numpy(x)), "float32")


@gpu
def test_scale_misaligned_falls_back_and_bad_launch_is_rejected():
    x = cp(rand(10_003, 3))
    v = x[1:]
    assert not arrays.aligned(v, 16)
    check.assert_close(lc.scale(v, waves=0.5), lc.reference(arrays.to_numpy(v)), "float32")
    with pytest.raises(ValueError, match="16-byte"):
        lc.scale(v, kernel="float4")
    for bad in (33, 0, 2048):
        with pytest.raises(ValueError, match="threads"):
            lc.scale(x, threads=bad)
    with pytest.raises(ValueError, match="blocks"):
        lc.scale(x, blocks=0)
    with pytest.raises(ValueError, match="waves"):
        lc.scale(x, waves=0)
