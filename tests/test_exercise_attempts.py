"""Checkers a learner can trust: for every exercise the starting point fails, the solution passes, and the realistic
wrong attempts each exercise lists (ATTEMPTS in its exercise.py: the half-fix, the off-by-one tail, a wrong constant)
fail with the message that names the mistake - never a crash (here phases 1 and 2's attempts; every other phase's in
tests/test_exercise_attempts_phases34.py). A kernel that writes past its output's end is run in a
subprocess (it could corrupt the memory of the process running it). Without a GPU a CUDA kernel is compiled, not run:
its verdict says so (Verdict.not_run) and `python -m course` exits 3, never 0."""
import os
import re
import subprocess
import sys

import pytest

from tests.attempts import EXS, GPU, ROOT, attempt_text, attempts, check_wrong_attempt

ATTEMPTS = attempts(phases=(1, 2))


def test_every_exercise_lists_two_realistic_wrong_attempts():
    for x in EXS:
        atts = getattr(x.module, "ATTEMPTS", [])
        assert len(atts) >= 2, f"{x.id}: list at least two realistic wrong attempts in ATTEMPTS"
        for a in atts:
            attempt_text(x, a)                          # every pair applies
            assert attempt_text(x, a) != open(x.solution, encoding="utf-8").read()


@pytest.mark.parametrize("x", EXS, ids=[x.id for x in EXS])
def test_start_fails_and_solution_passes_here(x):
    """On this machine, whatever it is: the solution is never wrong (without a GPU a CUDA kernel is only compiled,
    and the verdict says what was not run), the starting point is never RIGHT."""
    good = x.check(x.solution)
    assert good.ok, f"{x.id}: the checker rejects its own solution: {good.why}"
    if GPU:
        assert not good.not_run, f"{x.id}: on a GPU everything is checked: {good.not_run}"
    elif x.tier == "gpu":
        assert good.not_run and "not run" in good.not_run, f"{x.id}: say what a CPU could not check"
    bad = x.check(x.start)
    assert not bad.ok or bad.partial, f"{x.id}: the unmodified starting point is RIGHT: {bad.why}"


@pytest.mark.parametrize("x,i,attempt", ATTEMPTS, ids=[f"{x.id}-{i}" for x, i, _ in ATTEMPTS])
def test_wrong_attempt_fails_with_the_right_message(x, i, attempt, tmp_path):
    """Phases 1 and 2 (3 and 4: tests/test_exercise_attempts_phases34.py, a file of its own so that the GPU suite's
    workers share the work)."""
    check_wrong_attempt(x, attempt, tmp_path)


def _course(*args):
    # a check that hangs (a wrecked heap) is stopped by the checker after COURSE_CHECK_TIMEOUT: here 180 s, well past
    # any check's own time on a slow CPU and well inside the run's
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True, timeout=900,
                          errors="replace", cwd=ROOT,
                          env={**os.environ, "COURSE_LANG": "en", "COURSE_CHECK_TIMEOUT": "180"})


def test_cli_half_fix_says_how_far_past_the_end_it_wrote(tmp_path):
    """Exercise 1.2.1 with the grid rounded up and no mask yet: 'wrote 255 elements past the end of c', exit 1, no
    crash of the checker (it once died with glibc's 'mremap_chunk(): invalid pointer', exit 134)."""
    x = next(x for x in EXS if x.id == "1.2.1")
    half = next(a for a in x.module.ATTEMPTS if a[0].startswith("the half-fix"))
    path = tmp_path / x.file
    path.write_text(attempt_text(x, half), encoding="utf-8")
    r = _course("exercise", x.id, "--file", str(path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"wrote \d+ elements past the end of c", r.stdout), r.stdout


def test_cli_a_kernel_that_writes_far_past_the_end_is_a_verdict(tmp_path):
    """A grid a hundred times too large and no mask writes far beyond the guard bands: whatever that does to the
    process running it, the learner gets NOT YET and exit 1, not a crash."""
    x = next(x for x in EXS if x.id == "1.2.1")
    text = attempt_text(x, next(a for a in x.module.ATTEMPTS if a[0].startswith("the half-fix")))
    text = text.replace("(triton.cdiv(n, BLOCK),)", "(100 * triton.cdiv(n, BLOCK),)")
    path = tmp_path / x.file
    path.write_text(text, encoding="utf-8")
    r = _course("exercise", x.id, "--file", str(path))
    assert r.returncode == 1 and r.stdout.startswith("NOT YET"), r.stdout + r.stderr


def test_a_checker_child_that_hangs_is_stopped_and_the_learner_gets_a_verdict(monkeypatch):
    """A child that sent its verdict and then hangs in its exit keeps the verdict and is stopped after a grace period;
    one that never answers is stopped at the time limit, with a verdict that says so. Never a hang of the checker."""
    import threading

    from course import exercise as ce
    from tests import helpers

    monkeypatch.setattr(ce, "EXIT_GRACE_S", 1.0)
    x = next(x for x in EXS if x.id == "1.2.1")
    got = []

    def both():
        got.append(ce.check_isolated(x, x.solution, target=helpers.child_answers_then_hangs))
        got.append(ce.check_isolated(x, x.solution, target=helpers.child_hangs, timeout_s=3))

    worker = threading.Thread(target=both, daemon=True)      # a checker that hangs fails this test, not the run
    worker.start()
    worker.join(180)
    assert not worker.is_alive() and len(got) == 2, "check_isolated did not come back from a hung child"
    assert not got[0].ok and got[0].why == "NOT YET: a planted verdict", got[0].why
    assert not got[1].ok and "gave no answer in 3 s" in got[1].why, got[1].why
    for bad in ("soon", "0", "-5"):
        monkeypatch.setenv("COURSE_CHECK_TIMEOUT", bad)
        with pytest.raises(ValueError, match="COURSE_CHECK_TIMEOUT"):
            ce.check_isolated(x, x.solution, target=helpers.child_hangs)
    from course.__main__ import main as course_main

    with pytest.raises(SystemExit) as stop:          # the CLI: a usage error, exit 2, not a traceback
        course_main(["exercise", x.id, "--file", x.solution])
    assert stop.value.code == 2


@pytest.mark.skipif(GPU, reason="on a GPU the CUDA kernels run")
def test_cli_cuda_on_a_cpu_exits_3_and_says_what_was_not_run(tmp_path):
    """2.4.2 with the off-by-one tail (i <= n) is only compiled here: not RIGHT, exit 3, 'not run' in the verdict."""
    x = next(x for x in EXS if x.id == "2.4.2")
    path = tmp_path / x.file
    path.write_text(attempt_text(x, x.module.ATTEMPTS[0]), encoding="utf-8")
    r = _course("exercise", x.id, "--file", str(path))
    assert r.returncode == 3 and "RIGHT" not in r.stdout and "not run" in r.stdout, r.stdout + r.stderr
    g = next(x for x in EXS if x.tier == "gpu" and x.file.endswith(".cu"))
    r = _course("exercise", g.id, "--file", g.solution)
    assert r.returncode == 3 and "compiles" in r.stdout, r.stdout + r.stderr


def test_help_names_only_exercises_that_exist_and_the_exit_statuses():
    r = _course("--help")
    assert r.returncode == 0
    ids = {x.id for x in EXS}
    named = set(re.findall(r"\b\d+\.\d+\.\d+\b", r.stdout))
    assert named and named <= ids, f"--help names {sorted(named - ids)}, which do not exist"
    for status in ("0 RIGHT", "1 NOT YET", "3 NOT RUN HERE"):
        assert status in r.stdout, f"--help does not document exit status {status!r}"


@pytest.mark.parametrize("ex_id", ["1.5.1", "3.1.1", "4.1.1"])
def test_an_unanswered_start_gives_no_answers(ex_id):
    """Checking the untouched starting point says what is not answered yet, never the model's values."""
    x = next(x for x in EXS if x.id == ex_id)
    v = x.check(x.start)
    assert not v.ok and "not answered yet" in v.why, v.why
    assert "the calculator says" not in v.why and "the compiler made" not in v.why and "model says" not in v.why


def test_a_wrong_number_gets_a_direction_not_the_value(tmp_path):
    """4.1.1: a wrong byte count is 'too low' with what to count, and the right value is not in the message."""
    x = next(x for x in EXS if x.id == "4.1.1")
    a = next(a for a in x.module.ATTEMPTS if "without the write" in a[0])
    path = tmp_path / x.file
    path.write_text(attempt_text(x, a), encoding="utf-8")
    v = x.check(str(path))
    assert not v.ok and "too low" in v.why, v.why
    assert str(12 * 2**29) not in v.why.replace(",", "") and "6.44e+09" not in v.why, v.why


def test_cli_a_process_that_dies_with_bytes_that_are_not_utf8_is_a_verdict(tmp_path):
    """The learner's file aborts the checking process after writing bytes that are not UTF-8 to its stderr (what a
    dying C++ backtrace printed once, after a kernel wrote over the process's memory): NOT YET, exit 1, and the
    process's last words come through readable, with U+FFFD in place of the bad bytes."""
    x = next(x for x in EXS if x.id == "1.2.1")
    path = tmp_path / x.file
    path.write_text("import os\nos.write(2, b'backtrace \\xad\\xff frame #29\\n')\nos.abort()\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "course", "exercise", x.id, "--file", str(path)], capture_output=True,
                       cwd=ROOT, env={**os.environ, "COURSE_LANG": "en"}, timeout=900)
    out, err = r.stdout.decode("utf-8"), r.stderr.decode("utf-8")    # strict: what the course prints is UTF-8
    assert r.returncode == 1 and out.startswith("NOT YET") and "died" in out, out + err
    assert "backtrace \ufffd\ufffd frame #29" in err, err
