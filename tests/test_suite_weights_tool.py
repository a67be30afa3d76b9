"""tools/suite_weights.py (each test file's time from a junit file) and the order tests/conftest.py gives the files
under --dist loadfile (tests.helpers.heaviest_files_first)."""
import json
import os
import subprocess
import sys
import types

from tests.helpers import heaviest_files_first
from tools import suite_weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="5">
<testcase classname="" name="tests.test_notebooks" time="0.000"><skipped message="collection skipped"/></testcase>
<testcase classname="tests.test_a" name="test_one" time="1.25"/>
<testcase classname="tests.test_a" name="test_two[x]" time="2.5"/>
<testcase classname="tests.test_b.TestGroup" name="test_three" time="10.0"/>
<testcase classname="tests.test_c" name="test_four" time="0.05"><skipped message="no GPU"/></testcase>
</testsuite></testsuites>
"""


def _junit(tmp_path):
    p = tmp_path / "junit.xml"
    p.write_text(JUNIT)
    return str(p)


def test_file_seconds_sums_each_files_items_and_reads_class_names(tmp_path):
    got = suite_weights.file_seconds(_junit(tmp_path))
    assert got == {"tests/test_b.py": 10.0, "tests/test_a.py": 3.8, "tests/test_c.py": 0.1}   # 3.75, 0.05 rounded
    assert list(got) == ["tests/test_b.py", "tests/test_a.py", "tests/test_c.py"]


def test_cli_writes_the_record_only_where_told(tmp_path):
    out = tmp_path / "w.json"
    assert suite_weights.main([_junit(tmp_path), "--gpu", "some GPU", "--commit", "abc", "--out", str(out)]) == 0
    rec = json.loads(out.read_text())
    assert rec["gpu"] == "some GPU" and rec["commit"] == "abc" and rec["seconds"]["tests/test_b.py"] == 10.0
    out2 = tmp_path / "never.json"
    assert suite_weights.main([_junit(tmp_path), "--print", "--out", str(out2)]) == 0
    assert not out2.exists()


def test_cli_refuses_a_missing_or_empty_junit_file(tmp_path, capsys):
    assert suite_weights.main([str(tmp_path / "nope.xml")]) == 2
    assert "nope.xml" in capsys.readouterr().err
    empty = tmp_path / "empty.xml"
    empty.write_text("<testsuites/>")
    assert suite_weights.main([str(empty), "--print"]) == 2
    assert "no test cases" in capsys.readouterr().err


def test_cli_help():
    r = subprocess.run([sys.executable, "-m", "tools.suite_weights", "--help"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0 and "--dist loadfile" in r.stdout and "junit" in r.stdout


def _items(*nodeids):
    return [types.SimpleNamespace(nodeid=n) for n in nodeids]


def test_heaviest_files_first_keeps_each_file_together_and_in_order():
    items = _items("tests/test_small.py::a", "tests/test_many.py::a", "tests/test_many.py::b",
                   "tests/test_long.py::x[1]", "tests/test_long.py::x[2]", "tests/test_many.py::c")
    got = [i.nodeid for i in heaviest_files_first(items, {"tests/test_long.py": 300.0, "tests/test_many.py": 3.0,
                                                            "tests/test_small.py": 1.0})]
    assert got == ["tests/test_long.py::x[1]", "tests/test_long.py::x[2]", "tests/test_many.py::a",
                   "tests/test_many.py::b", "tests/test_many.py::c", "tests/test_small.py::a"]


def test_a_file_without_a_time_counts_its_items_at_the_mean_rate():
    # listed: 100 s over 2 items = 50 s an item; the new file's 3 items weigh 150 s and go first, the empty record
    # keeps the collection order
    items = _items("tests/test_old.py::a", "tests/test_old.py::b", "tests/test_new.py::a", "tests/test_new.py::b",
                   "tests/test_new.py::c")
    got = [i.nodeid.split("::")[0] for i in heaviest_files_first(items, {"tests/test_old.py": 100.0})]
    assert got[:3] == ["tests/test_new.py"] * 3
    assert [i.nodeid for i in heaviest_files_first(items, {})] == [i.nodeid for i in items]


def test_the_committed_times_name_test_files_that_exist():
    with open(os.path.join(ROOT, "tests", "file_seconds.json")) as f:
        rec = json.load(f)
    stale = [p for p in rec["seconds"] if not os.path.exists(os.path.join(ROOT, p))]
    assert not stale, (f"tests/file_seconds.json lists files that are gone: {stale} - drop them, or regenerate it "
                       "from a GPU run (python -m tools.suite_weights JUNIT)")
    assert rec["gpu"] and rec["commit"] and rec["seconds"]


def _file_order(args: list[str]) -> list[str]:
    """The test files in the order a pytest run reports them (collected or run), each once."""
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = []
    for line in r.stdout.splitlines():
        for word in line.split():
            f = word.split("::", 1)[0]
            if f.startswith("tests/test_") and f.endswith(".py") and "::" in word and f not in out:
                out.append(f)
    return out


def test_xdist_workers_hand_out_the_files_heaviest_first():
    """Under -n --dist loadfile the workers collect (with dist "no" of their own): the controller passes its mode on
    (pytest_configure_node), so the files run in tests/file_seconds.json's order - here given on the command line in
    the reverse of it, which is the order a scheduler left to itself would keep."""
    files = ["tests/test_common_choices.py", "tests/test_headline_tool.py", "tests/test_profile_tool.py"]
    want = _file_order(["--collect-only", "-q", "--dist", "loadfile", *files])
    assert sorted(want) == sorted(files)
    given = want[::-1]
    assert given != want, "the three files weigh the same: pick files whose recorded times differ"
    assert _file_order(["-n", "1", "--dist", "loadfile", "-v", *given]) == want
