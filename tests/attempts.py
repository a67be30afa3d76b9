"""What the exercise-attempt tests share (tests/test_exercise_attempts*.py, tests/test_exercise_no_answer_given.py):
each exercise's realistic wrong attempts (ATTEMPTS in its exercise.py) as files, and the checker's verdict on one run
in a fresh process (a kernel that writes past its output's end could corrupt the memory of the process running it)."""
import json
import os
import subprocess
import sys

from common import device
from course.exercise import all_exercises

EXS = all_exercises()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GPU = device.has_gpu()


def attempts(phases: tuple[int, ...] | None = None, other_than: tuple[int, ...] = ()) -> list[tuple]:
    """(exercise, index, attempt) of every listed wrong attempt: of the exercises of these phases (None: all), less
    those of the phases in other_than - (1, 2) and other_than=(1, 2) split them in two with nothing left out."""
    def keep(x) -> bool:
        phase = int(x.id.split(".")[0])
        return (phases is None or phase in phases) and phase not in other_than
    return [(x, i, a) for x in EXS if keep(x) for i, a in enumerate(getattr(x.module, "ATTEMPTS", []))]


def attempt_text(x, attempt) -> str:
    """The attempt's file: the solution (or, with "start", the starting point) with each (good, bad) pair applied."""
    _, pairs, _, *base = attempt
    text = x.start_text("en") if base == ["start"] else open(x.solution, encoding="utf-8").read()
    for good, bad in pairs:
        assert text.count(good) == 1, f"{x.id}: attempt text {good[:40]!r} is not in the file exactly once"
        text = text.replace(good, bad)
    return text


_CHILD = ("import json, sys\nfrom common import i18n\nfrom course.exercise import find\ni18n.set_lang('en')\n"
          "v = find(sys.argv[1]).check(sys.argv[2])\nprint('VERDICT ' + json.dumps([v.ok, v.why, v.not_run]))\n")


def verdict_in_child(ex_id: str, path: str):
    """(ok, why, not_run) of the checker run on `path` in a fresh process; a crash fails the test with its output."""
    r = subprocess.run([sys.executable, "-c", _CHILD, ex_id, path], capture_output=True, text=True, timeout=900,
                       cwd=ROOT, env={**os.environ, "COURSE_LANG": "en"})
    line = next((ln for ln in r.stdout.splitlines() if ln.startswith("VERDICT ")), None)
    assert r.returncode == 0 and line, f"{ex_id}: the checker crashed (exit {r.returncode}): {r.stderr[-1500:]}"
    return json.loads(line[len("VERDICT "):])


def check_wrong_attempt(x, attempt, tmp_path) -> None:
    """The attempt's file, checked in a child process: never RIGHT (without a GPU a CUDA attempt compiles and is
    not run), the message the attempt lists, no traceback."""
    label, _, expect, *_ = attempt
    path = tmp_path / x.file
    path.write_text(attempt_text(x, attempt), encoding="utf-8")
    ok, why, not_run = verdict_in_child(x.id, str(path))
    assert not (ok and not not_run), f"{x.id}, {label}: the checker says RIGHT: {why}"
    if isinstance(expect, tuple):
        expect = expect[1] if GPU else expect[0]
        if not GPU:                                     # compiled, not run: neither RIGHT nor a made-up fault
            assert ok and not_run, f"{x.id}, {label}: without a GPU it compiles and is not run: {why}"
    if expect:
        assert expect in why + " " + not_run, f"{x.id}, {label}: want {expect!r} in the verdict: {why} {not_run}"
    assert "Traceback" not in why, f"{x.id}, {label}: {why}"
