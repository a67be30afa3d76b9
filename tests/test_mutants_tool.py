"""tools/mutants.py, the mutation check: its list is current with the code (every text to change is in its file
exactly once), it has at least 30 realistic mutants with both tiers, the tool lists them without a GPU, and it
judges a mutant end to end (a planted bug is killed by the tests that guard it)."""
import subprocess
import sys

from tools import mutants
from tools.mutant_list import MUTANTS


def test_the_list_is_current_and_large_enough():
    assert mutants.check_mutants() == []
    assert len(MUTANTS) >= 30
    assert {m.tier for m in MUTANTS} == {"cpu", "gpu"}
    assert len({m.path.split("/")[1] for m in MUTANTS}) >= 12, "mutants spread over the labs"


def test_list_and_usage_errors():
    r = subprocess.run([sys.executable, "-m", "tools.mutants", "--list"], capture_output=True, text=True)
    assert r.returncode == 0 and "causal mask off by one" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tools.mutants", "--only", "no such mutant"], capture_output=True,
                       text=True)
    assert r.returncode == 2


def test_a_planted_bug_is_killed():
    m = next(m for m in MUTANTS if m.name == "vector add: bound off by one")
    scratch = mutants._scratch()
    try:
        r = mutants.judge(m, scratch, timeout=600)
    finally:
        import shutil
        import os

        shutil.rmtree(os.path.dirname(scratch), ignore_errors=True)
    assert r["result"].startswith("killed"), r
