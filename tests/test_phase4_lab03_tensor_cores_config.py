"""Lab 4.3: one configuration per kernel family. Python is the only place a compile-time value of kernels.cu and
kernels_wgmma.cu has a value: mma_configs.CONFIG (rung 02's tile and its options, GROUP_M, PEAK_CHAINS, tc_01's tile)
with the build's IN_FP16 / OUT_F32 (cuda_rungs.defines), and wgmma_kernel.CONFIG (the shape, the ring, GROUP_M,
MBAR_TIMEOUT) with the build's GEMM_F16, B_KMAJOR, CLUSTER, EPI_TMA, C_PASSES, EPI_OPS (wgmma_kernel.defines). Every
one reaches the kernel as -DNAME=VALUE, the .cu files hold no default (an `#ifndef X` is followed by an `#error`
naming X and where it is set), a compile without one fails naming it, a changed value changes the compiled kernel,
and a value the instructions fix is refused by a static_assert. NVRTC only, no GPU; nothing tracked is written."""
import glob
import os
import re

import pytest

from common import config, cuda, device
from phase4_optimization.lab03_tensor_cores import cuda_rungs as cr
from phase4_optimization.lab03_tensor_cores import lab as tc
from phase4_optimization.lab03_tensor_cores import mma_configs as mc
from phase4_optimization.lab03_tensor_cores import wgmma_kernel as wk
from tests.helpers import config_guards, files_unchanged

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CU_FILES = {cr.CU: ("mma_configs.py", "cuda_rungs.py"), wk.KERNEL_PATH: ("wgmma_kernel.py",)}
WATCHED = sorted(glob.glob(os.path.join(os.path.dirname(cr.CU), "*"))
                 + glob.glob(os.path.join(ROOT, "results", "*", "phase4_lab03_tensor_cores*.json")))


@pytest.fixture(autouse=True)
def nothing_written():
    """No --set left behind, and no lab file or tuning record written (CONFIG is changed in memory only)."""
    config.set_overrides([])
    with files_unchanged(WATCHED):
        yield
        config.set_overrides([])


def _untuned() -> device.DeviceInfo:
    gpu = device.profile_info("h100-sxm")
    assert mc.mma_config(gpu).source() == "default"
    return gpu


def _guards(path: str) -> list[str]:
    return config_guards(path, CU_FILES[path])


# ---------------------------------------------------------------------------------------------------------------------
# The .cu files hold no value of their own
# ---------------------------------------------------------------------------------------------------------------------
def test_the_guards_are_exactly_what_python_passes():
    assert set(_guards(cr.CU)) == set(mc.CONFIG) | set(cr.BUILD_DEFINES) == set(cr.defines())
    assert set(_guards(wk.KERNEL_PATH)) == set(wk.CONFIG) | set(wk.BUILD_DEFINES) == set(wk.defines())
    for path in CU_FILES:                                       # no value of its own for any of them
        src = open(path, encoding="utf-8").read()
        assert not [n for n in _guards(path) if re.search(rf"^\s*#define\s+{n}\b", src, re.M)]


def test_the_mirrors_are_gone():
    """What used to be copied from the .cu files is read from CONFIG: the tile defaults, the wmma tile, the shape."""
    assert mc.DEFAULT_CONFIG == {k: mc.CONFIG[k] for k in mc.CONFIG_KEYS}
    assert mc.OPTIONAL == {k: mc.CONFIG[k] for k in mc.OPTIONAL_KEYS}
    assert cr.WMMA_TILE == (mc.CONFIG["WMMA_BM"], mc.CONFIG["WMMA_BN"])
    assert (wk.BM, wk.BN, wk.BK, wk.STAGES, wk.CONSUMERS) == tuple(wk.CONFIG[k] for k in
                                                                  ("BM", "BN", "BK", "STAGES", "CONSUMERS"))
    assert wk.THREADS == 128 * (wk.CONFIG["CONSUMERS"] + 1)


def test_compile_defines_is_the_whole_set():
    assert tc.compile_defines(cr.CU) == cr.defines("bfloat16", "bfloat16") == dict(mc.CONFIG, IN_FP16=0, OUT_F32=0)
    assert tc.compile_defines(cr.CU, "sm_80") == tc.compile_defines(cr.CU)
    assert tc.compile_defines(wk.KERNEL_PATH) == wk.defines("bfloat16")
    with pytest.raises(ValueError, match="not a CUDA C file"):
        tc.compile_defines(os.path.join(os.path.dirname(cr.CU), "nope.cu"))


@pytest.mark.parametrize("path,knob", [(cr.CU, "BM"), (cr.CU, "XT"), (cr.CU, "GROUP_M"), (cr.CU, "PEAK_CHAINS"),
                                       (cr.CU, "IN_FP16"), (wk.KERNEL_PATH, "MBAR_TIMEOUT"),
                                       (wk.KERNEL_PATH, "STAGES"), (wk.KERNEL_PATH, "CLUSTER"),
                                       (wk.KERNEL_PATH, "CONSUMERS")], ids=lambda v: os.path.basename(str(v)))
def test_compile_without_a_value_names_it(path, knob):
    arch = wk.ARCH if path == wk.KERNEL_PATH else "sm_90"
    missing = {k: v for k, v in tc.compile_defines(path).items() if k != knob}
    with pytest.raises(cuda.CompileError) as e:
        cuda.compile_report(path, arch, defines=missing)
    assert f"{knob} is set by" in str(e.value) and any(f in str(e.value) for f in CU_FILES[path])
    with pytest.raises(cuda.CompileError, match="is set by"):        # nothing at all: the same kind of message
        cuda.compile_report(path, arch)


def test_every_planned_cuda_launch_carries_the_whole_set():
    from phase4_optimization.lab04_tiling_strategy import lab as tiling

    gpu = _untuned()
    want = {cr.CU: set(cr.defines()), wk.KERNEL_PATH: set(wk.defines())}
    for lab_mod in (tc, tiling):
        launches = [x for x in lab_mod.launches(gpu) if x.impl == "cuda"]
        assert launches
        for x in launches:
            assert set(x.defines) == want[x.source], f"{x.variant} {x.kernel}: {sorted(x.defines)}"


def test_a_config_key_kernels_cu_does_not_have_is_refused():
    with pytest.raises(ValueError, match="unknown keys"):
        cr.defines("bfloat16", None, dict(mc.DEFAULT_CONFIG, BLOCK_M=64))


# ---------------------------------------------------------------------------------------------------------------------
# Changing a value changes the kernel
# ---------------------------------------------------------------------------------------------------------------------
def _mma(gpu):
    return next(x for x in tc.launches(gpu) if x.kernel == "tc_02_mma_sync")


@pytest.mark.parametrize("how", ["CONFIG", "--set"])
def test_rung02_stages_reach_kernel_and_launch(monkeypatch, how):
    gpu = _untuned()
    base = _mma(gpu)
    if how == "CONFIG":
        monkeypatch.setitem(mc.CONFIG, "STAGES", 3)
    else:
        config.set_overrides(["STAGES=3"])
    small = _mma(gpu)
    assert (base.defines["STAGES"], small.defines["STAGES"]) == (4, 3)
    assert small.dyn_smem == 3 * base.dyn_smem // 4
    assert ("--set STAGES=3" in small.config_source) == (how == "--set")
    r4 = cuda.compile_report(cr.CU, "sm_90", defines=base.defines)["tc_02_mma_sync"]
    r3 = cuda.compile_report(cr.CU, "sm_90", defines=small.defines)["tc_02_mma_sync"]
    if r4.sass:
        assert r3.sass != r4.sass


def test_group_m_and_peak_chains_reach_the_kernel(monkeypatch):
    base = cuda.compile_report(cr.CU, "sm_90", defines=cr.defines())
    monkeypatch.setitem(mc.CONFIG, "GROUP_M", 4)
    monkeypatch.setitem(mc.CONFIG, "PEAK_CHAINS", 4)
    assert cr.defines()["GROUP_M"] == 4 and tc.compile_defines(cr.CU)["PEAK_CHAINS"] == 4
    changed = cuda.compile_report(cr.CU, "sm_90", defines=cr.defines())
    if not base.kernels["tc_02_mma_sync"].sass:
        pytest.skip("no cuobjdump: SASS unavailable")
    assert changed.kernels["tc_02_mma_sync"].sass != base.kernels["tc_02_mma_sync"].sass
    assert changed.kernels["tc_00_mma_peak"].sass != base.kernels["tc_00_mma_peak"].sass
    # whole rounds of PEAK_CHAINS MMAs (ptxas unrolls the iteration loop by its own measure: not a fixed count)
    hmma = {c: r.kernels["tc_00_mma_peak"].sass_counts.get("HMMA", 0) for c, r in ((8, base), (4, changed))}
    assert all(h > 0 and h % c == 0 for c, h in hmma.items()), hmma


def test_wmma_tile_is_fixed_and_refused_otherwise(monkeypatch):
    monkeypatch.setitem(mc.CONFIG, "WMMA_BM", 32)
    assert cr.wmma_grid(100, 100) == (2, 4, 1)                 # the grid follows CONFIG ...
    with pytest.raises(cuda.CompileError, match="WMMA_BM, WMMA_BN: 64"):   # ... and the kernel refuses it
        cuda.compile_report(cr.CU, "sm_90", defines=cr.defines())


def test_wgmma_config_reaches_the_kernel(monkeypatch):
    base = wk.compile_report()
    monkeypatch.setitem(wk.CONFIG, "MBAR_TIMEOUT", 0)
    monkeypatch.setitem(wk.CONFIG, "GROUP_M", 4)
    assert wk.defines()["MBAR_TIMEOUT"] == 0 and wk.defines(timeout=True)["MBAR_TIMEOUT"] == 1
    changed = wk.compile_report()
    sass, sass0 = changed.kernels[wk.KERNEL].sass, base.kernels[wk.KERNEL].sass
    if sass0:
        assert sass != sass0
        assert sum("CLOCK" in s for s in sass) < sum("CLOCK" in s for s in sass0)   # no clock64() timeout check


def test_wgmma_store_race_reaches_only_the_tma_store_epilogue(monkeypatch):
    """CONFIG's STORE_RACE (a GPU test's knob) adds a clock64() wait to the TMA-store build; 0 compiles it out, and the
    register-epilogue build has no such path at all."""
    assert wk.CONFIG["STORE_RACE"] == 0
    base, regs = wk.compile_report(tma_store=True), wk.compile_report()
    monkeypatch.setitem(wk.CONFIG, "STORE_RACE", 20000)
    assert wk.defines(tma_store=True)["STORE_RACE"] == 20000
    raced = wk.compile_report(tma_store=True).kernels[wk.KERNEL].sass
    sass0 = base.kernels[wk.KERNEL].sass
    if sass0:
        assert sum("CLOCK" in s for s in raced) > sum("CLOCK" in s for s in sass0)
        # (not the SASS compared whole: every compile carries a nonce global of its own, which moves ptxas's
        # choices a little - common/cuda.py)
        clocks = (lambda r: sum("CLOCK" in s for s in r.kernels[wk.KERNEL].sass))
        assert clocks(wk.compile_report()) == clocks(regs)


def test_wgmma_stages_reach_the_kernel_and_the_shared_memory(monkeypatch):
    assert wk.smem_bytes() == wk.SMEM_BYTES
    before = wk.smem_bytes()
    monkeypatch.setitem(wk.CONFIG, "STAGES", 3)
    assert wk.defines()["STAGES"] == 3 and wk.smem_bytes() == before - (wk.A_STAGE_BYTES + wk.B_STAGE_BYTES + 16)
    assert wk.defines(tma_store=True, c_passes=2)["STAGES"] == 3
    monkeypatch.setattr(wk, "EPI_STAGES", 2)
    assert wk.defines(tma_store=True)["STAGES"] == 2 and wk.stages(True, 1) == 2
    k = wk.compile_report(tma_store=True).kernels[wk.KERNEL]
    assert k.registers > 0


@pytest.mark.parametrize("knob,value,message", [("BM", 64, "BM: 128"), ("BN", 128, "BN: 256"), ("BK", 32, "BK: 64"),
                                                ("CONSUMERS", 1, "CONSUMERS: 2")])
def test_wgmma_shape_is_fixed_and_refused_otherwise(monkeypatch, knob, value, message):
    monkeypatch.setitem(wk.CONFIG, knob, value)
    with pytest.raises(cuda.CompileError, match=message):
        wk.compile_report()
