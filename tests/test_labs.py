"""Every lab honours the contract, and every variant matches the float64 reference on awkward sizes.

CPU tier: the Triton variants run in the interpreter (CPU_CHECK_CASES). GPU tier: every variant and peer runs on the
GPU (CHECK_CASES), outputs poisoned, inputs fresh.
"""
import subprocess
import sys

import pytest

from common import device, lab
from tests.conftest import lab_modules
from tests.helpers import skip_unless_available

LABS = lab_modules()
IDS = [name for name, _ in LABS]


def test_labs_exist():
    assert LABS, "no lab registered in any phase's LABS list"


@pytest.mark.parametrize("name,mod", LABS, ids=IDS)
def test_contract(name, mod):
    doc = mod.__doc__ or ""
    assert "You will learn" in doc, f"{name}: the module docstring must start with what the learner will learn"
    assert "bytes" in doc.lower() and "flop" in doc.lower(), f"{name}: the docstring must give bytes and FLOPs"
    for attr in ("main",):
        assert callable(getattr(mod, attr, None)), f"{name}: missing {attr}()"
    if hasattr(mod, "VARIANTS"):
        for attr in ("reference", "make_inputs"):
            assert callable(getattr(mod, attr, None)), f"{name}: missing {attr}()"
        assert mod.VARIANTS and all(isinstance(v, lab.Variant) for v in mod.VARIANTS + getattr(mod, "PEERS", []))
        assert {v.impl for v in mod.VARIANTS} <= {"cuda", "triton"}
        assert all(v.impl == "peer" for v in getattr(mod, "PEERS", []))


def _variant_cases():
    out = []
    for name, mod in LABS:
        for v in getattr(mod, "VARIANTS", []) + getattr(mod, "PEERS", []):
            out.append(pytest.param(mod, v, id=f"{name}:{v.name}",
                                    marks=[] if v.runs_without_gpu else [pytest.mark.gpu]))
    return out


@pytest.mark.parametrize("mod,variant", _variant_cases())
def test_variant_matches_reference(mod, variant):
    skip_unless_available(variant)
    cases = mod.CHECK_CASES if device.has_gpu() else mod.CPU_CHECK_CASES
    rows, all_ok = lab.check_variants(mod, [variant], cases, verbose=False)
    assert rows[0]["cases"] > 0, f"{variant.name}: no case ran ({rows[0]['result']})"
    assert all_ok, rows[0]["result"]


@pytest.mark.parametrize("name,mod", LABS, ids=IDS)
def test_help(name, mod):
    res = subprocess.run([sys.executable, "-m", name, "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "--quick" in res.stdout
