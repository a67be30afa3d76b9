"""Lab 2.5 register pressure: compiler facts read from NVRTC (registers rise and spills appear as WORK grows, the caps,
the run-time-indexed array in local memory: never hard-coded where the compiler decides), the occupancy that follows
(common.occupancy), the Triton kernel in the interpreter, input validation, the lab's --quick run on the CPU, --replot
from the committed JSON; on a GPU the calculator against the driver, every setting at full capacity, and the
occupancy probe.
"""
import math

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from common.occupancy import occupancy
from phase2_cuda.lab05_register_pressure import bench as rpb
from phase2_cuda.lab05_register_pressure import lab as rp
from tests.helpers import cp, lab_main, needs_sass, quick_output, rand, replot

gpu = pytest.mark.gpu


# =====================================================================================================================
# CPU tier
# =====================================================================================================================
def _row(setting, arch="sm_90"):
    return rpb.compile_row(setting, arch)


def test_registers_rise_and_spills_appear_as_work_grows():
    rows = [_row(rp.work_setting(w)) for w in rp.QUICK_WORK]      # values from NVRTC, nothing hard-coded
    regs = [r["regs"] for r in rows]
    spills = [r["spill_st"] + r["spill_ld"] for r in rows]
    assert regs == sorted(regs) and regs[0] < regs[1] < regs[2], regs
    assert spills[0] == 0 and spills[-1] > 0, spills
    assert rpb.registers_rise_and_spills_appear(rows) == (True, True)
    # occupancy follows the registers down
    assert rows[0]["occupancy"] >= rows[1]["occupancy"] >= rows[2]["occupancy"]
    assert rows[2]["regs"] == device.arch_info("sm_90").max_regs_per_thread


def test_register_caps():
    free = _row(rp.work_setting(32))
    capped = _row(rp.CAP_SETTINGS[0])                  # -maxrregcount=32 on colnorm_01
    bound8 = _row(rp.CAP_SETTINGS[3])                  # __launch_bounds__(256, 8) on colnorm_02
    assert free["regs"] > 32 and free["spill_st"] == 0
    assert capped["regs"] <= 32 and capped["spill_st"] > 0
    assert bound8["regs"] <= 65536 // (256 * 8) and bound8["spill_st"] > 0
    assert capped["occupancy"] > free["occupancy"]
    # a __launch_bounds__ kernel ignores -maxrregcount (its own bound wins)
    rep = cuda.compile_report(rp.CU, "sm_90", options=("-maxrregcount=32",), defines={"WORK": 32})
    assert rep["colnorm_02_launch_bounds"].registers > 32


@needs_sass
def test_runtime_index_goes_to_local_memory_without_a_spill():
    r = _row(rp.CAP_SETTINGS[4])
    assert r["stack"] >= 4 * rp.FIXED_WORK and r["spill_st"] == 0 and r["spill_ld"] == 0
    ldl, stl = (int(v) for v in r["ldl/stl"].split("/"))
    assert ldl > 0 and stl > 0


@pytest.mark.cpu_only
@pytest.mark.parametrize("shape", [(1, 1), (5, 65), (16, 130)])
def test_triton_colnorm_in_the_interpreter(shape):
    x = rand(shape, shape[1])
    check.assert_close(rp.colnorm_triton(x, out=check.poison(np.empty(shape, np.float32))), rp.reference(x), "float32")


def test_colnorm_rejects_bad_input_before_launch():
    with pytest.raises(TypeError, match="GPU array"):
        rp.colnorm(np.ones((4, 4), np.float32))
    if not device.has_gpu():
        with pytest.raises(ValueError, match="at most 256 rows"):
            rp.colnorm_triton(np.ones((257, 2), np.float32))


def test_plan_whether_a_cap_spills_depends_on_the_gpu():
    """__launch_bounds__(256, 8) asks for 2048 resident threads: on an SM that holds them ptxas caps the kernel at 32
    registers and spills; on one of 1536 threads (sm_86) it settles for what fits, without a spill."""
    lb8 = "cuda 02 __launch_bounds__(256, 8)"
    big = plan.make(rp, rpb, device.profile_info("h200")).predictions[lb8]
    small = plan.make(rp, rpb, device.profile_info("rtx-3090")).predictions[lb8]
    assert big.startswith("32 registers") and "B spilled" in big and "8 blocks/SM" in big
    assert "no spill" in small and "8 blocks/SM" not in small


def test_plan_launches_every_setting_the_benchmark_times():
    got = rp.launches(device.profile_info("t4"))
    cuda_runs = [x for x in got if x.impl == "cuda"]
    assert len(cuda_runs) == len(rp.settings(quick=False))
    named = {x.variant: x for x in cuda_runs if x.variant}
    assert set(named) == {v.name for v in rp.VARIANTS if v.impl == "cuda"}
    w160 = named["cuda 01 WORK=160"]
    assert w160.defines == {"WORK": 160} and w160.grid == (math.ceil(2**26 // 160 / 256),) and w160.threads == 256
    assert named["cuda 01 WORK=32 -maxrregcount=32"].options == ("-maxrregcount=32",)


def test_set_changes_the_triton_tile_and_says_so():
    gpu = device.profile_info("b200")
    try:
        config.set_overrides(["BLOCK_C=32"])
        tri = next(x for x in rp.launches(gpu) if x.impl == "triton")
        assert tri.defines["BLOCK_C"] == 32 and tri.grid == (2**26 // 16 // 32,)
        assert tri.config_source == "BLOCK_C: --set BLOCK_C=32; the rest default"
        config.set_overrides(["BLOCK_C=48"])
        with pytest.raises(ValueError, match="BLOCK_C a power of two"):
            rp.triton_config()
    finally:
        config.set_overrides([])


@pytest.mark.cpu_only
def test_main_quick_on_the_cpu(capsys):
    out = quick_output(lab_main(rp), capsys)
    assert "registers rise and spills appear" in out                          # the compile table's verdict
    assert "-maxrregcount=32: " in out and "B of local memory per thread" in out   # one line per cap


def test_caps_summary_reads_compile_rows_and_gpu_rows():
    cpu = [_row(s) for s in (rp.work_setting(32), rp.CAP_SETTINGS[0], rp.CAP_SETTINGS[4])]
    lines = rpb.caps_summary(cpu)
    assert len(lines) == 2 and f"{cpu[0]['regs']} -> {cpu[1]['regs']} registers" in lines[0]
    gpu_rows = [dict(variant=r["setting"], occupancy_theory=r["occupancy"], local_bytes=r["stack"],
                     **{k: r[k] for k in ("regs", "spill_st")}) for r in cpu]
    assert rpb.caps_summary(gpu_rows) == lines


def test_replot_draws_the_committed_json(tmp_path):
    assert replot(lab_main(rp), tmp_path) == [f"{rp.LAB}.png"]


# =====================================================================================================================
# GPU tier
# =====================================================================================================================


@gpu
@pytest.mark.parametrize("setting", rp.settings(quick=True), ids=lambda s: s.name)
def test_occupancy_calculator_agrees_with_the_driver(setting):
    """common.occupancy (the compile table's blocks/SM) against cuOccupancyMaxActiveBlocksPerMultiprocessor."""
    from cupy_backends.cuda.api import driver

    k = cuda.get_kernel(rp.CU, setting.kernel, options=setting.options, defines=setting.defines)
    want = driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, rp.THREADS, 0)
    if device.current_arch() not in device.ARCHS:
        pytest.skip(f"{device.current_arch()} is not in common.device.ARCHS")
    assert occupancy(device.current_arch(), rp.THREADS, k.num_regs, k.shared_size_bytes).blocks_per_sm == want


@gpu
@pytest.mark.parametrize("setting", rp.settings(quick=False), ids=lambda s: s.name)
def test_colnorm_every_setting_at_full_capacity(setting):
    x = cp(rand((setting.capacity, 1003), setting.capacity))
    out = check.poisoned(x.shape, "float32", x)
    check.assert_close(rp.colnorm(x, out, setting=setting), rp.reference(arrays.to_numpy(x)), "float32")
    with pytest.raises(ValueError, match="at most"):
        rp.colnorm(cp(rand((setting.capacity + 1, 3))), setting=setting)


@gpu
def test_occupancy_probe_measures_resident_warps():
    import cupy

    d = device.info()
    for s in (rp.work_setting(4), rp.work_setting(160)):
        x = cp(rand((s.capacity, 2**20 // s.capacity), 1))
        probe = cupy.zeros(2 * rp.PROBE_SLOTS, cupy.int32)
        y = rp.colnorm(x, setting=s, probe=probe)
        check.assert_close(y, rp.reference(arrays.to_numpy(x)), "float32")
        p = probe.get()
        assert (p[: rp.PROBE_SLOTS] == 0).all(), "every block that entered also left"
        peak = p[rp.PROBE_SLOTS:]
        k = cuda.get_kernel(rp.CU, s.kernel, options=s.options, defines=s.defines)
        from cupy_backends.cuda.api import driver

        limit = driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, rp.THREADS, 0) * rp.THREADS // 32
        assert 0 < peak.max() <= limit <= d.max_threads_per_sm // 32
        with pytest.raises(ValueError, match="probe"):
            rp.colnorm(x, setting=s, probe=cupy.zeros(10, cupy.int32))
