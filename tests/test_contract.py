"""Every lab meets the runner's contract (common/contract.py): lab.py has what common.lab.run needs, and every hook
lab.py or bench.py defines takes the arguments the runner passes. A lab's __main__.py is its composition root."""
import ast
import importlib
import os

import pytest

from common import contract
from common import lab as course_lab
from tests.helpers import PHASES

LABS = course_lab.lab_names(PHASES)


@pytest.mark.parametrize("phase,name", LABS, ids=[n for _, n in LABS])
def test_lab_and_bench_meet_the_contract(phase, name):
    lab = course_lab.lab_module(phase, name)
    bench = course_lab.bench_module(phase, name)
    found = (contract.problems(lab, contract.Lab, required=True)
             + contract.problems(lab, contract.LabHooks, required=False)
             + contract.problems(bench, contract.BenchHooks, required=False))
    assert not found, "\n".join(found)
    assert isinstance(lab, contract.Lab)


@pytest.mark.parametrize("phase,name", LABS, ids=[n for _, n in LABS])
def test_main_is_the_composition_root(phase, name):
    """__main__.py imports lab and bench and hands them to the runner; importing it runs nothing."""
    path = os.path.join(phase, name, "__main__.py")
    tree = ast.parse(open(os.path.join(os.path.dirname(os.path.dirname(__file__)), path),
                          encoding="utf-8").read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 1 for a in n.names}
    assert {"lab", "bench"} <= imported, path
    main = importlib.import_module(f"{phase}.{name}.__main__").main
    assert callable(main)


def test_the_contract_notices_a_missing_member_and_a_wrong_signature():
    class Broken:
        __name__ = "broken"
        LAB = "x"
        VARIANTS = CHECK_CASES = []

        @staticmethod
        def reference(*inputs):
            return inputs

        @staticmethod
        def make_inputs(size):             # the runner passes (size, dtype, rng, where)
            return ()

    found = contract.problems(Broken, contract.Lab, required=True)
    assert any("no CPU_CHECK_CASES" in f for f in found)
    assert any("make_inputs" in f for f in found)
    assert contract.problems(Broken, contract.BenchHooks, required=False) == []
