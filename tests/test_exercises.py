"""Exercises that check themselves: every checker passes on its solution and fails on the unmodified starting point,
every exercise has its task in English and Korean, and each phase has at least four exercises, two of which a
CPU-only machine can check. The CLI (`python -m course`) lists, begins and checks."""
import os
import subprocess
import sys
from collections import Counter

import pytest

from common import device
from course.exercise import EXERCISES, all_exercises

EXS = all_exercises()
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _runs_here(x):
    return x.tier == "cpu" or device.has_gpu()


def test_each_phase_has_four_exercises_two_of_them_for_a_cpu():
    per_phase = Counter(x.id.split(".")[0] for x in EXS)
    cpu = Counter(x.id.split(".")[0] for x in EXS if x.tier == "cpu")
    for phase in "1234":
        assert per_phase[phase] >= 4, f"phase {phase}: {per_phase[phase]} exercises, want at least 4"
        assert cpu[phase] >= 2, f"phase {phase}: {cpu[phase]} checkable without a GPU, want at least 2"


@pytest.mark.parametrize("x", EXS, ids=[x.id for x in EXS])
def test_exercise_is_complete(x):
    assert os.path.exists(x.solution), f"{x.id}: solution/ holds {x.file}"
    assert x.start_text() != open(x.solution).read(), f"{x.id}: the starting point is the solution"
    for readme in ("README.md", "README.ko.md"):
        text = open(os.path.join(x.folder, readme), encoding="utf-8").read()
        assert f"python -m course exercise {x.id}" in text, f"{x.id}/{readme}: no check command"
        assert "<details>" in text, f"{x.id}/{readme}: the solution is not folded away"


@pytest.mark.parametrize("x", EXS, ids=[x.id for x in EXS])
def test_checker_passes_the_solution_and_fails_the_start(x):
    if not _runs_here(x):
        pytest.skip(f"exercise {x.id} checks on a GPU: {device.no_gpu_reason()}")
    good = x.check(x.solution)
    assert good.ok, f"{x.id}: the checker rejects its own solution: {good.why}"
    bad = x.check(x.start)
    assert not bad.ok, f"{x.id}: the checker accepts the unmodified starting point"
    assert len(bad.why) > 20, f"{x.id}: say why the starting point is wrong"


def _course(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "course", *args], capture_output=True, text=True, timeout=600,
                          cwd=cwd)


def test_cli_lists_begins_and_checks(tmp_path, monkeypatch):
    r = _course("list")
    assert r.returncode == 0 and all(x.id in r.stdout for x in EXS)
    r = _course("exercise", "0.0.0")
    assert r.returncode == 2 and "no exercise" in r.stderr
    x = next(x for x in EXS if x.tier == "cpu")
    r = _course("exercise", x.id, "--file", x.solution)
    assert r.returncode == 0 and r.stdout.startswith("RIGHT"), r.stdout + r.stderr
    r = _course("exercise", x.id, "--file", x.start)
    assert r.returncode == 1 and "NOT YET" in r.stdout
    assert os.path.basename(EXERCISES) == "exercises"


def test_a_compile_error_on_the_gpu_reads_as_on_the_cpu(monkeypatch, tmp_path):
    """On a GPU a learner's kernel is compiled by CuPy at its first use; a typo must still read "it does not compile"
    with the compiler's error line, as the NVRTC compile report says it without a GPU."""
    from common import cuda
    from course import checks

    def typo(*_a, **_k):
        raise cuda.CompileError('x.cu failed to compile:\nx.cu(12): error: expected a ";"\n1 error detected')

    monkeypatch.setattr(cuda, "get_kernel", typo)
    (tmp_path / "x.cu").write_text("", encoding="utf-8")
    v = checks.gpu_kernel(str(tmp_path / "x.cu"), "k")
    assert not v.ok and v.why.startswith("it does not compile") and 'expected a ";"' in v.why
