"""One configuration per kernel family: a lab's CONFIG in Python is the only place a compile-time knob has a value.

Labs 2.7 (softmax) and 2.8 (SGEMM): every knob of their .cu files is an entry of the lab's CONFIG (lab 2.8's rung 10/11
tile: the AsyncConfig defaults), reaches the kernel as -DNAME=VALUE on every compile, and the .cu files hold no default
of their own (an `#ifndef X` is followed by an `#error` naming X and where it is set). So:
  * changing a CONFIG value (in the dict, or with --set) changes the compiled kernel and the planned launch;
  * compiling a .cu file without its CONFIG fails, with a message naming the knob and where it is set;
  * every launch the plan lists carries the whole CONFIG of its file.
NVRTC only, no GPU; nothing tracked is written (the lab folders and their tuning records are checked unchanged).
"""
import glob
import os

import pytest

from common import config, cuda, device
from tests.helpers import config_guards, files_unchanged
from phase2_cuda.lab07_softmax import lab as sm
from phase2_cuda.lab08_sgemm import lab as sg

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB_DIRS = [os.path.dirname(sm.CU), os.path.dirname(sg.CU)]
WATCHED = sorted([p for d in LAB_DIRS for p in glob.glob(os.path.join(d, "*")) if os.path.isfile(p)]
                 + glob.glob(os.path.join(ROOT, "results", "*", "phase2_lab0[78]_*.json")))
CU_FILES = [sm.CU, sg.CU, sg.CU_ASYNC]


@pytest.fixture(autouse=True)
def nothing_written():
    """No test here writes a tracked file of these labs (CONFIG is changed in memory only)."""
    config.set_overrides([])
    with files_unchanged(WATCHED):
        yield
        config.set_overrides([])


def _untuned() -> device.DeviceInfo:
    """A GPU profile without a tuning record for either lab: CONFIG is what it gets (an H200 gets its record)."""
    gpu = device.profile_info("h100-sxm")
    assert sm.knobs_source(gpu) == "default" and sg.tuned_config(gpu=gpu)[1] == "default"
    return gpu


# ---------------------------------------------------------------------------------------------------------------------
# The .cu files hold no value of their own
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", CU_FILES, ids=os.path.basename)
def test_every_ifndef_is_a_guard_not_a_default(path):
    guarded = config_guards(path, ("lab.py",))
    own = sm.CONFIG if path == sm.CU else sg.CONFIG if path == sg.CU else sg.ASYNC_DEFAULT.defines
    assert set(guarded) == set(own), f"{os.path.basename(path)}: guards {guarded}, CONFIG {sorted(own)}"


@pytest.mark.parametrize("path,knob", [(sm.CU, "EPT"), (sm.CU, "STREAM_HINTS"), (sg.CU, "TILE"), (sg.CU, "WT_BK"),
                                       (sg.CU_ASYNC, "STAGES"), (sg.CU_ASYNC, "BM")])
def test_compile_without_the_config_names_the_knob(path, knob):
    full = sm.CONFIG if path == sm.CU else sg.compile_defines(path)
    missing = {k: v for k, v in full.items() if k != knob}
    with pytest.raises(cuda.CompileError) as e:
        cuda.compile_report(path, "sm_90", defines=missing)
    msg = str(e.value)
    assert f"{knob} is set by" in msg and "lab.py" in msg and f"--set {knob}=" in msg
    with pytest.raises(cuda.CompileError, match="is set by"):            # nothing at all: the same kind of message
        cuda.compile_report(path, "sm_90")


def test_compile_defines_is_the_whole_config():
    gpu = _untuned()
    assert sm.compile_defines(sm.CU, gpu) == sm.CONFIG
    assert sg.compile_defines(sg.CU) == sg.CONFIG and sg.compile_defines(sg.CU_ASYNC) == sg.ASYNC_DEFAULT.defines
    with pytest.raises(ValueError, match="not a CUDA C file"):
        sm.compile_defines(sg.CU)


def test_every_planned_cuda_launch_carries_its_files_config():
    gpu = _untuned()
    for lab_mod, want in ((sm, {sm.CU: sm.CONFIG}), (sg, {sg.CU: sg.CONFIG, sg.CU_ASYNC: sg.ASYNC_DEFAULT.defines})):
        cuda_launches = [x for x in lab_mod.launches(gpu) if x.impl == "cuda"]
        assert cuda_launches
        for x in cuda_launches:
            assert set(x.defines) == set(want[x.source]), f"{x.variant} {x.kernel}: {sorted(x.defines)}"


# ---------------------------------------------------------------------------------------------------------------------
# Changing a value changes the kernel
# ---------------------------------------------------------------------------------------------------------------------
def _launch(launches, kernel_prefix: str, case_part: str = ""):
    return next(x for x in launches if x.kernel.startswith(kernel_prefix) and case_part in x.case)


@pytest.mark.parametrize("how", ["CONFIG", "--set"])
def test_softmax_ept_reaches_the_kernel(monkeypatch, how):
    gpu = _untuned()
    base = _launch(sm.launches(gpu), "softmax_05_block_row_f32", "float32")
    if how == "CONFIG":
        monkeypatch.setitem(sm.CONFIG, "EPT", 16)
    else:
        config.set_overrides(["EPT=16"])
    small = _launch(sm.launches(gpu), "softmax_05_block_row_f32", "float32")
    assert (base.defines["EPT"], small.defines["EPT"]) == (32, 16)
    assert (base.threads, small.threads) == (128, 256)                  # 4096 columns over 32 or 16 values a thread
    assert ("--set EPT=16" in small.config_source) == (how == "--set")
    r32 = cuda.compile_report(sm.CU, "sm_90", defines=base.defines)["softmax_05_block_row_f32"]
    r16 = cuda.compile_report(sm.CU, "sm_90", defines=small.defines)["softmax_05_block_row_f32"]
    assert r16.registers < r32.registers, (r16.registers, r32.registers)
    if cuda.find_cuobjdump():                                             # EPT / 4 16-byte loads of fp32 per thread
        count = {n: sum("LDG.E.128" in s for s in r.sass) for n, r in (("32", r32), ("16", r16))}
        assert count == {"32": 8, "16": 4}, count


def test_softmax_sm_threads_reaches_kernel_and_launch(monkeypatch):
    gpu = _untuned()
    monkeypatch.setitem(sm.CONFIG, "SM_THREADS", 128)
    x = _launch(sm.launches(gpu), "softmax_04_online")
    assert x.threads == 128 and x.defines["SM_THREADS"] == 128
    k = cuda.compile_report(sm.CU, "sm_90", defines=x.defines)["softmax_01a_row_max"]
    assert k.smem_bytes == 128 * 4                                       # __shared__ float s[SM_THREADS]
    with pytest.raises(ValueError, match="SM_THREADS"):
        config.set_overrides(["SM_THREADS=100"])
        sm.knobs(gpu)


def test_sgemm_tile_reaches_rung_03(monkeypatch):
    base = sg.plan(3, 100, 100, 100)
    monkeypatch.setitem(sg.CONFIG, "TILE", 16)
    small = sg.plan(3, 100, 100, 100)
    assert dict(small.defines)["TILE"] == 16 and small.block == (16, 16, 1) and small.grid == (7, 7, 1)
    assert base.block == (32, 32, 1) and base.grid == (4, 4, 1)
    s32 = cuda.compile_report(sg.CU, "sm_90", defines=dict(base.defines))["sgemm_03_smem_tiling"].smem_bytes
    s16 = cuda.compile_report(sg.CU, "sm_90", defines=dict(small.defines))["sgemm_03_smem_tiling"].smem_bytes
    assert (s32, s16) == (2 * 32 * 32 * 4, 2 * 16 * 16 * 4)


def test_sgemm_warp_tile_reaches_rungs_08_09():
    config.set_overrides(["WT_BK=16"])
    p = sg.plan(9, 256, 256, 256)
    assert dict(p.defines)["WT_BK"] == 16 and p.block == (256, 1, 1)
    smem = cuda.compile_report(sg.CU, "sm_90", defines=dict(p.defines))["sgemm_09_double_buffering"].smem_bytes
    assert smem == 2 * 16 * (128 + 4 + 128) * 4                          # two stages of As[BK][BM + 4] and Bs[BK][BN]
    config.set_overrides(["WT_WM=48"])
    with pytest.raises(ValueError, match="WT_WM"):
        sg.plan(9, 256, 256, 256)


@pytest.mark.parametrize("how", ["CONFIG", "--set"])
def test_sgemm_rung_11_tile_reaches_the_kernel(monkeypatch, how):
    gpu = _untuned()

    def r11():
        return next(x for x in sg.launches(gpu) if x.variant == "cuda 11 autotuned")

    base = r11()
    if how == "CONFIG":
        monkeypatch.setattr(sg, "ASYNC_DEFAULT", sg.AsyncConfig(BK=32, STAGES=2))
    else:
        config.set_overrides(["BK=32", "STAGES=2"])
    deep = r11()
    assert (deep.defines["BK"], deep.defines["STAGES"]) == (32, 2)
    assert (base.dyn_smem, deep.dyn_smem) == (3 * 16 * (128 + 4 + 128) * 4, 2 * 32 * (128 + 4 + 128) * 4)
    k16 = cuda.compile_report(sg.CU_ASYNC, "sm_90", defines=base.defines)["sgemm_10_cp_async"]
    k32 = cuda.compile_report(sg.CU_ASYNC, "sm_90", defines=deep.defines)["sgemm_10_cp_async"]
    assert k32.spills == 0 and k16.spills == 0
    if cuda.find_cuobjdump():                                             # twice the k-steps unrolled per stage
        ffma = [sum(s.split()[0].startswith("FFMA") or " FFMA" in s for s in k.sass) for k in (k16, k32)]
        assert ffma[1] > ffma[0], ffma
