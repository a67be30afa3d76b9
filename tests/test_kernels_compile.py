"""CPU tier: every CUDA C kernel of the course compiles with NVRTC for every architecture its file claims, with zero
spills (a spill at the shipped sizes is a bug: local memory traffic the lesson never accounts for)."""
import glob
import importlib
import inspect
import os

import pytest

from common import cuda

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CU_FILES = sorted(glob.glob(os.path.join(ROOT, "phase*", "**", "*.cu"), recursive=True))
CASES = [(p, a) for p in CU_FILES for a in cuda.claimed_archs(p)]


def _id(path, arch):
    return f"{os.path.relpath(os.path.dirname(path), ROOT)}/{os.path.basename(path)}-{arch}"


def test_there_are_kernels_to_compile():
    assert CU_FILES, "no .cu files found under phase*/"


def lab_defines(path: str, arch: str) -> dict | None:
    """The -D values the .cu's lab compiles it with for `arch`, where its lab.py owns them (a CONFIG: the .cu has no
    defaults of its own)."""
    rel = os.path.relpath(os.path.dirname(path), ROOT).split(os.sep)
    if len(rel) < 2:
        return None
    mod = importlib.import_module(".".join(rel[:2]) + ".lab")
    fn = getattr(mod, "compile_defines", None)
    if fn is None:
        return None
    return fn(path, arch=arch) if "arch" in inspect.signature(fn).parameters else fn(path)


@pytest.mark.parametrize("path,arch", CASES, ids=[_id(p, a) for p, a in CASES])
def test_compiles_without_spills(path, arch):
    rep = cuda.compile_report(path, arch, defines=lab_defines(path, arch))
    declared = cuda.kernel_names(path)
    assert declared, f"{path} declares no extern \"C\" __global__ kernel"
    assert set(declared) <= set(rep.kernels), f"ptxas reported {sorted(rep.kernels)}, file declares {declared}"
    for name, k in rep.kernels.items():            # every kernel ptxas built, macro-instantiated ones too
        assert k.registers > 0, f"{name}: no register count parsed"
        assert k.spills == 0, f"{name} spills on {arch}: {k.spill_stores} B stored, {k.spill_loads} B loaded"
