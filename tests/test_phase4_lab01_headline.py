"""Lab 4.1's headline pairs and staleness check: the lab chooses each lab's headline by the README's rules (never
importing tools/), and the committed roofline is current (what CI runs)."""
import glob
import json
import os
import shutil

import pytest

from common import headline as common_headline
from phase4_optimization.lab01_roofline import headline as hl
from phase4_optimization.lab01_roofline import lab as rl
from phase4_optimization.lab01_roofline import staleness
from tests.helpers import H200
from tools import readme_results

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = sorted(glob.glob(os.path.join(ROOT, "results", "*", "*.json")))


def _doc(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def test_one_rule_for_the_readme_and_the_roofline():
    """The README's headline table and the roofline take their choice from the same function (common/headline.py)."""
    assert readme_results.choose is hl.choose is common_headline.choose
    assert hl.HEADLINE_CASE is readme_results.HEADLINE_CASE is common_headline.HEADLINE_CASE


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: os.path.relpath(p, ROOT))
def test_a_headline_is_ours_against_a_library_peer(path):
    """For every committed results JSON with a headline: two different kernels, a positive ratio, and never a naive
    kernel of ours (the old roofline's star was lab 4.6's naive attention)."""
    doc = _doc(path)
    if not isinstance(doc, dict):
        pytest.skip("not a results document")
    h = hl.choose(doc, os.path.basename(path)[:-5])
    if h is None:
        pytest.skip("no peer measured in this file")
    assert h["ours"] and h["peer"] and h["ours"] != h["peer"] and h["ratio"] > 0
    assert "naive" not in h["ours"].lower() or "naive" in os.path.basename(path)


def test_headline_rows_prefer_the_case_then_the_exact_name():
    rows = [{"variant": "triton", "impl": "triton", "shape": [256, 262144], "dtype": "float32", "ms": 1.0},
            {"variant": "triton (tuned)", "impl": "triton", "shape": [32768, 4096], "dtype": "float32", "ms": 1.0},
            {"variant": "torch.compile", "impl": "peer", "shape": [32768, 4096], "dtype": "float32", "ms": 1.25}]
    h = {"case": "softmax 32768x4096 float32", "ours": "triton", "peer": "torch.compile", "ratio": 1.25}
    ours, peer = hl.headline_rows(rows, h)
    assert ours["variant"] == "triton (tuned)" and peer["variant"] == "torch.compile"


def test_committed_roofline_is_current():
    """The committed roofline read the results files as they are now (regenerate: see the lab's README)."""
    if not os.path.exists(os.path.join(H200, f"{rl.LAB}.json")):
        pytest.skip("no committed roofline JSON")
    assert staleness.stale(H200) == []
    assert staleness.check(H200) == 0


def test_check_names_a_changed_and_a_new_file(tmp_path, capsys):
    if not os.path.exists(os.path.join(H200, f"{rl.LAB}.json")):
        pytest.skip("no committed roofline JSON")
    folder = tmp_path / "h200"
    shutil.copytree(H200, folder, ignore=shutil.ignore_patterns("*.png", "ko"))
    assert staleness.check(str(folder)) == 0
    victim = folder / "phase2_lab06_reduction.json"
    doc = json.loads(victim.read_text())
    doc["rows"][0]["ms"] = doc["rows"][0]["ms"] * 2
    victim.write_text(json.dumps(doc))
    new = folder / "phase9_lab01_new.json"
    new.write_text(json.dumps({"rows": [{"lab": "phase9_lab01_new", "variant": "cuda 01", "impl": "cuda"}]}))
    (folder / "notes.json").write_text(json.dumps({"rows": [{"what": "not a kernel"}]}))   # not a results file
    assert staleness.check(str(folder)) == 1
    out = capsys.readouterr().out
    assert "phase2_lab06_reduction.json: changed" in out and "phase9_lab01_new.json: new" in out
    assert "notes.json" not in out
    assert staleness.stale(str(tmp_path / "nowhere")) and staleness.check(str(tmp_path / "nowhere")) == 2


def test_check_from_the_command_line(capsys):
    from tests.helpers import lab_main
    with pytest.raises(SystemExit) as e:
        lab_main(rl)(["--check", H200])
    assert e.value.code == 0 and "is current" in capsys.readouterr().out
