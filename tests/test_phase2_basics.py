"""Phase 2 lab 5 ( launch configuration, register pressure).

CPU tier: the models every prediction comes from (sectors, bank passes, occupancy, Little's law), compiler facts read
from NVRTC (never hard-coded where the compiler decides), the Triton kernels in the interpreter, input validation,
and each lab's main() in --quick mode. GPU tier: awkward shapes and launch parameters that the generic test_labs.py
does not reach (the tile-row loop past gridDim.y, misaligned views, every register setting at full size, the
occupancy probe against the driver), and bad input on the device.
"""
import math

import numpy as np
import pytest

from common import arrays, check, cuda, device
from common.occupancy import occupancy
from phase2_cuda import lab05_register_pressure as rp

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (the GPU tier covers the device)")
needs_sass = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


def _rand(shape, seed=0):
    return check.rng(seed).standard_normal(shape).astype(np.float32)


# =====================================================================================================================
# CPU tier
# =====================================================================================================================
# ---- lab 2.5: register pressure --------------------------------------------------------------------------------------
def _row(setting, arch="sm_90"):
    return rp.compile_row(setting, arch)


def test_registers_rise_and_spills_appear_as_work_grows():
    rows = [_row(rp.work_setting(w)) for w in rp.QUICK_WORK]      # values from NVRTC, nothing hard-coded
    regs = [r["regs"] for r in rows]
    spills = [r["spill_st"] + r["spill_ld"] for r in rows]
    assert regs == sorted(regs) and regs[0] < regs[1] < regs[2], regs
    assert spills[0] == 0 and spills[-1] > 0, spills
    assert rp.registers_rise_and_spills_appear(rows) == (True, True)
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


@cpu_only
@pytest.mark.parametrize("shape", [(1, 1), (5, 65), (16, 130)])
def test_triton_colnorm_in_the_interpreter(shape):
    x = _rand(shape, shape[1])
    check.assert_close(rp.colnorm_triton(x, out=check.poison(np.empty(shape, np.float32))), rp.reference(x), "float32")


def test_colnorm_rejects_bad_input_before_launch():
    with pytest.raises(TypeError, match="GPU array"):
        rp.colnorm(np.ones((4, 4), np.float32))
    if not device.has_gpu():
        with pytest.raises(ValueError, match="at most 256 rows"):
            rp.colnorm_triton(np.ones((257, 2), np.float32))


# ---- every lab's main() on the CPU -----------------------------------------------------------------------------------
@cpu_only
@pytest.mark.parametrize("mod", [rp], ids=lambda m: m.__name__.split(".")[-1])
def test_main_quick_on_the_cpu(mod, capsys):
    assert mod.main(["--quick", "--arch", "sm_90"]) == 0
    out = capsys.readouterr().out
    assert "interpreter" in out and "compiled" in out and "ok (" in out


# =====================================================================================================================
# GPU tier
# =====================================================================================================================
def _cp(a):
    import cupy

    return cupy.asarray(a)


@gpu
def test_occupancy_calculator_agrees_with_the_driver():
    arch = device.current_arch()
    if arch not in device.ARCHS:
        pytest.skip(f"{arch} is not in common.device.ARCHS")
    for s in rp.settings(quick=True):
        k = cuda.get_kernel(rp.CU, s.kernel, options=s.options, defines=s.defines)
        from cupy_backends.cuda.api import driver

        want = driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, rp.THREADS, 0)
        assert occupancy(arch, rp.THREADS, k.num_regs, k.shared_size_bytes).blocks_per_sm == want, s.name


@gpu
@pytest.mark.parametrize("setting", rp.settings(quick=False), ids=lambda s: s.name)
def test_colnorm_every_setting_at_full_capacity(setting):
    x = _cp(_rand((setting.capacity, 1003), setting.capacity))
    out = check.poisoned(x.shape, "float32", x)
    check.assert_close(rp.colnorm(x, out, setting=setting), rp.reference(arrays.to_numpy(x)), "float32")
    with pytest.raises(ValueError, match="at most"):
        rp.colnorm(_cp(_rand((setting.capacity + 1, 3))), setting=setting)


@gpu
def test_occupancy_probe_measures_resident_warps():
    import cupy

    d = device.info()
    for s in (rp.work_setting(4), rp.work_setting(160)):
        x = _cp(_rand((s.capacity, 2**20 // s.capacity), 1))
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
