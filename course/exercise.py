"""The exercise contract, the registry, and the checker's verdict.

An exercise is a folder course/exercises/ex_<phase>_<lab>_<n>_<slug>/ holding:
  README.md (+ README.ko.md)   the task, as a kernel engineer would set it; the solution's explanation folded away
  exercise.py                  ID ("2.6.3"), TITLE, TIER ("cpu" | "gpu"), FILE (the file the learner edits, e.g.
                               "kernel.cu"), and check(path) -> Verdict: is the file at `path` a right answer?
  solution/<FILE>              a right answer
  the starting point           start/<FILE> (a knob to turn, a rung to write), or - for "fix the broken kernel" -
                               BREAK in exercise.py: [(text of the solution, what it becomes), ...], applied to the
                               solution (one source of truth: the start is the solution with the bug put in), and/or
                               START_FROM = "N.L.K": that exercise's solution is this one's starting point (BREAK, if
                               any, is applied to it); with TASK (a string), a .py starting point opens with that
                               docstring (the task) instead of the solution's (the explanation)
The learner works on my_work/<ID>/<FILE> (`--begin` copies the starting point there; git ignores my_work/), so the
starting point stays as it is: the tests check that every checker fails on it and passes on the solution.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import tempfile
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXERCISES = os.path.join(ROOT, "course", "exercises")
WORK = os.path.join(ROOT, "my_work")


@dataclass
class Verdict:
    ok: bool
    why: str            # one or two sentences: what was checked, and what was right or wrong

    def __bool__(self) -> bool:
        return self.ok


@dataclass
class Exercise:
    id: str
    title: str
    tier: str
    file: str
    folder: str
    module: object

    @property
    def start(self) -> str:
        """A file holding the starting point (written next to the work folder when it is derived, not stored)."""
        stored = os.path.join(self.folder, "start", self.file)
        if os.path.exists(stored):
            return stored
        path = os.path.join(tempfile.gettempdir(), "course-exercise-start", self.id, self.file)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.start_text())
        return path

    def start_text(self) -> str:
        stored = os.path.join(self.folder, "start", self.file)
        if os.path.exists(stored):
            return open(stored, encoding="utf-8").read()
        src = getattr(self.module, "START_FROM", None)
        text = open(find(src).solution if src else self.solution, encoding="utf-8").read()
        for good, bad in getattr(self.module, "BREAK", []):
            if text.count(good) != 1:
                whose = f"exercise {src}'s solution" if src else "the solution"
                raise ValueError(f"exercise {self.id}: BREAK text {good[:40]!r} is not in {whose} exactly once")
            text = text.replace(good, bad)
        task = getattr(self.module, "TASK", None)
        if task is not None:
            if not (self.file.endswith(".py") and text.startswith('"""')):
                raise ValueError(f"exercise {self.id}: TASK replaces the opening docstring of a .py file")
            text = '"""' + task + text[text.index('"""', 3):]
        return text

    @property
    def solution(self) -> str:
        return os.path.join(self.folder, "solution", self.file)

    @property
    def work(self) -> str:
        return os.path.join(WORK, self.id, self.file)

    def check(self, path: str) -> Verdict:
        return self.module.check(path)


def _load(folder: str) -> Exercise:
    spec = importlib.util.spec_from_file_location(f"course_exercise_{os.path.basename(folder)}",
                                                  os.path.join(folder, "exercise.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return Exercise(mod.ID, mod.TITLE, mod.TIER, mod.FILE, folder, mod)


def _key(ex_id: str):
    return tuple(int(p) for p in ex_id.split("."))


def all_exercises() -> list[Exercise]:
    folders = sorted(d for d in glob.glob(os.path.join(EXERCISES, "ex_*")) if os.path.isdir(d))
    return sorted((_load(d) for d in folders), key=lambda e: _key(e.id))


def find(ex_id: str) -> Exercise:
    for e in all_exercises():
        if e.id == ex_id:
            return e
    raise KeyError(ex_id)
