"""tools/gpu_session.sh, the one-call script for a GPU machine, run here with a stand-in Python (PYTHON=...): the labs
run in order within the deadline, each with its own arguments, and a step with a limit of its own (lab@N) that runs
past it is stopped there - its exit 124 logged - while the next step still runs."""
import os
import stat
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

STUB = """#!/usr/bin/env bash
# a stand-in for python3: `-m NAME ARGS` prints what it ran; the module "slow" sleeps first
[ "$1" = "-m" ] || exit 0
[ "$2" = "slow" ] && sleep 20
echo "ran $2 ${*:3}"
"""


def test_labs_run_in_order_with_their_arguments_and_a_step_limit_stops_only_its_step(tmp_path):
    py = tmp_path / "python"
    py.write_text(STUB)
    py.chmod(py.stat().st_mode | stat.S_IEXEC)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHON": str(py), "OUT": str(out), "DEADLINE": "120", "COURSE_COMMIT": "test",
           "LABS": "first:--a,1 slow:--b@2 last"}
    r = subprocess.run(["bash", os.path.join(ROOT, "tools", "gpu_session.sh")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=90)
    log = (out / "session.log").read_text()
    assert "ran first --a 1" in log and "ran last" in log and "ran slow" not in log, log
    assert "== slow --b: exit 124 in" in log and "== first --a 1: exit 0" in log and "== last : exit 0" in log, log
    assert log.index("ran first") < log.index("== slow --b: exit 124") < log.index("ran last")
    assert r.returncode == 1, r.stdout[-2000:]           # a step failed (here: stopped at its limit)
