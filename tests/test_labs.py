"""Every lab honours the contract and answers --help. (Every variant against the float64 reference on awkward sizes:
tests/test_variants_phase*.py, one file per phase.)
"""
import subprocess
import sys

import pytest

from common import lab
from tests.helpers import lab_modules

LABS = lab_modules()
IDS = [name for name, _ in LABS]


def test_labs_exist():
    assert LABS, "no lab registered in any phase's LABS list"


@pytest.mark.parametrize("name,mod", LABS, ids=IDS)
def test_contract(name, mod):
    doc = mod.__doc__ or ""
    assert "You will learn" in doc, f"{name}: the module docstring must start with what the learner will learn"
    assert "bytes" in doc.lower() and "flop" in doc.lower(), f"{name}: the docstring must give bytes and FLOPs"
    if hasattr(mod, "VARIANTS"):
        for attr in ("reference", "make_inputs"):
            assert callable(getattr(mod, attr, None)), f"{name}: missing {attr}()"
        assert mod.VARIANTS and all(isinstance(v, lab.Variant) for v in mod.VARIANTS + getattr(mod, "PEERS", []))
        assert {v.impl for v in mod.VARIANTS} <= {"cuda", "triton"}
        assert all(v.impl == "peer" for v in getattr(mod, "PEERS", []))


@pytest.mark.parametrize("name,mod", LABS, ids=IDS)
def test_help(name, mod):
    res = subprocess.run([sys.executable, "-m", name, "--help"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    for flag in ("--quick", "--size", "--dtype", "--variant", "--plan"):
        assert flag in res.stdout, f"{name} --help: no {flag}"
