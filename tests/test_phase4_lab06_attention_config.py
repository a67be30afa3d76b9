"""Lab 4.6: one configuration per kernel family. Python is the only place a compile-time value of kernels.cu and
kernels_hopper.cu has a value: cuda_rungs.defines (CONFIG's NWARPS, the tile sizes, the register caps, the build's
head dim and dtype) and hopper.CONFIG (with the build's HEAD_DIM, ATTN_FP16, V_KMAJOR). Every one reaches the kernel
as -DNAME=VALUE, the .cu files hold no default (an `#ifndef X` is followed by an `#error` naming X and where it is
set), a compile without one fails naming it, and a changed value changes the compiled kernel. NVRTC only, no GPU."""
import os
import re

import pytest

from common import config, cuda, device
from phase4_optimization.lab06_attention import cuda_rungs as cr
from phase4_optimization.lab06_attention import hopper as hp
from phase4_optimization.lab06_attention import lab as att
from tests.helpers import config_guards

CU_FILES = {cr.CU: "cuda_rungs.py", hp.KERNEL_PATH: "hopper.py"}


@pytest.fixture(autouse=True)
def no_overrides():
    config.set_overrides([])
    yield
    config.set_overrides([])


def _guards(path: str) -> list[str]:
    return config_guards(path, (CU_FILES[path],))


def test_the_guards_are_exactly_what_python_passes():
    assert set(_guards(cr.CU)) == set(cr.DEFINES) == set(cr.defines(128, arch="sm_90"))
    assert set(_guards(hp.KERNEL_PATH)) == set(hp.CONFIG) | set(hp.BUILD_DEFINES) == set(hp.defines(64))
    for path in CU_FILES:                                       # no value of its own for any of them
        src = open(path, encoding="utf-8").read()
        assert not [n for n in _guards(path) if re.search(rf"^\s*#define\s+{n}\b", src, re.M)]


def test_compile_defines_is_the_whole_set():
    assert att.compile_defines(hp.KERNEL_PATH) == hp.defines(128)
    assert set(att.compile_defines(cr.CU)) == set(cr.DEFINES)
    assert att.compile_defines(cr.CU, "sm_90") == cr.defines(128, arch="sm_90")
    with pytest.raises(ValueError, match="not a CUDA C file"):
        att.compile_defines(os.path.join(os.path.dirname(cr.CU), "nope.cu"))


@pytest.mark.parametrize("path,knob", [(cr.CU, "NWARPS"), (cr.CU, "BLOCK_N"), (cr.CU, "MIN_BLOCKS_WIDE"),
                                       (hp.KERNEL_PATH, "STAGES"), (hp.KERNEL_PATH, "PRODUCER_REGS"),
                                       (hp.KERNEL_PATH, "SINK_BYTES")])
def test_compile_without_a_value_names_it(path, knob):
    arch = "sm_90a" if path == hp.KERNEL_PATH else "sm_90"
    missing = {k: v for k, v in att.compile_defines(path).items() if k != knob}
    with pytest.raises(cuda.CompileError) as e:
        cuda.compile_report(path, arch, defines=missing)
    assert f"{knob} is set by" in str(e.value) and CU_FILES[path] in str(e.value)


def test_every_planned_cuda_launch_carries_the_whole_set():
    gpu = device.profile_info("h100-sxm")
    launches = [x for x in att.launches(gpu) if x.impl == "cuda"]
    assert {x.source for x in launches} == set(CU_FILES)
    for x in launches:
        want = set(cr.DEFINES) if x.source == cr.CU else set(hp.CONFIG) | set(hp.BUILD_DEFINES)
        assert set(x.defines) == want, f"{x.variant} {x.kernel}: {sorted(x.defines)}"


def test_hopper_config_reaches_the_kernel(monkeypatch):
    base = hp.compile_report(64)
    monkeypatch.setitem(hp.CONFIG, "PRODUCER_REGS", 32)
    monkeypatch.setitem(hp.CONFIG, "SINK_BYTES", 128)
    assert hp.defines(64)["PRODUCER_REGS"] == 32 and hp.smem_bytes(64) == hp.smem_bytes(64, 2)
    changed = hp.compile_report(64)
    sass = changed.kernels[hp.KERNELS["03"]].sass
    if sass:                                                   # setmaxnreg.dec.sync.aligned.u32 32
        assert any("USETMAXREG.DEALLOC" in s and "0x20" in s for s in sass)
        assert sass != base.kernels[hp.KERNELS["03"]].sass
    monkeypatch.setitem(hp.CONFIG, "BLOCK_M", 64)               # fixed by the descriptors: refused, not ignored
    with pytest.raises(cuda.CompileError, match="128-row boxes"):
        hp.compile_report(64)


def test_hopper_smem_follows_config(monkeypatch):
    before = hp.smem_bytes(128, 3)
    monkeypatch.setitem(hp.CONFIG, "SINK_BYTES", 128)
    assert hp.smem_bytes(128, 3) == before + 64
    monkeypatch.setitem(hp.CONFIG, "STAGES", 3)
    assert hp.defines(128)["STAGES"] == 3 and hp.smem_bytes(128) == hp.smem_bytes(128, 3)


def test_cuda_values_reach_the_kernel(monkeypatch):
    base = cr.defines(128, arch="sm_90")
    monkeypatch.setattr(cr, "CUDA_BLOCK_N", 32)
    small = cr.defines(128, arch="sm_90")
    assert (base["BLOCK_N"], small["BLOCK_N"]) == (64, 32) and cr.smem_bytes("02", 128) == 2 * 2 * 32 * 128 * 2
    r64 = cuda.compile_report(cr.CU, "sm_90", defines=base)[cr.KERNELS["02"]]
    r32 = cuda.compile_report(cr.CU, "sm_90", defines=small)[cr.KERNELS["02"]]
    if r64.sass:
        assert r32.sass != r64.sass
    monkeypatch.undo()
    config.set_overrides(["NWARPS=8"])
    assert cr.defines(128, arch="sm_90")["NWARPS"] == 8
    r8 = cuda.compile_report(cr.CU, "sm_90", defines=cr.defines(128, arch="sm_90"))[cr.KERNELS["01"]]
    assert r8.registers != 0 and (not r8.sass or r8.sass != cuda.compile_report(
        cr.CU, "sm_90", defines=base)[cr.KERNELS["01"]].sass)
