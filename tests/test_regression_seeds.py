"""Every process seed that once failed (tests/data/regression_seeds.json) is replayed on the tests it failed.

Each replay is a pytest subprocess with COURSE_SEED set, so it draws exactly the inputs that failed then. A seed is
recorded by `python -m tools.fuzz --record` (or by hand) with why it failed and what fixed it.
"""
import os
import subprocess
import sys

import pytest

from tests import seeds

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENTRIES = seeds.regressions()


def test_regression_file_is_well_formed():
    assert ENTRIES, "no regression seed recorded"
    for e in ENTRIES:
        assert isinstance(e["seed"], int) and e["seed"] >= 0, e
        assert e["why"].strip(), f"seed {e['seed']}: say what it failed and what fixed it"
        files = [t for t in e["tests"] if t.startswith("tests/")]
        assert files, f"seed {e['seed']}: no test file to replay"
        for f in files:
            assert os.path.exists(os.path.join(ROOT, f.split("::")[0])), f"seed {e['seed']}: {f} does not exist"


@pytest.mark.parametrize("entry", ENTRIES, ids=[str(e["seed"]) for e in ENTRIES])
def test_seed_that_once_failed_passes(entry):
    env = dict(os.environ, COURSE_SEED=str(entry["seed"]), COURSE_TREE_GUARD="0")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
           *entry["tests"]]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    tail = (r.stdout + r.stderr)[-4000:]
    assert r.returncode != 5, f"seed {entry['seed']}: no test selected by {entry['tests']}\n{tail}"
    assert r.returncode == 0, f"seed {entry['seed']} fails again ({entry['why']}):\n{tail}"
