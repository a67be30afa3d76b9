"""The exercise contract, the registry, and the checker's verdict.

An exercise is a folder course/exercises/ex_<phase>_<lab>_<n>_<slug>/ holding:
  README.md (+ README.ko.md)   the task, as a kernel engineer would set it; the solution's explanation folded away
  exercise.py                  ID ("2.6.3"), TITLE, TIER ("cpu" | "gpu"), FILE (the file the learner edits, e.g.
                               "kernel.cu"), and check(path) -> Verdict: is the file at `path` a right answer?
                               HINTS: one to three hints, each nearer the fix (where to look, the mechanism, nearly
                               the fix; never the solution's code), shown one at a time by `--hint`
  solution/<FILE>              a right answer
  the starting point           start/<FILE> (a knob to turn, a rung to write), or - for "fix the broken kernel" -
                               BREAK in exercise.py: [(text of the solution, what it becomes), ...], applied to the
                               solution (one source of truth: the start is the solution with the bug put in), and/or
                               START_FROM = "N.L.K": that exercise's solution is this one's starting point (BREAK, if
                               any, is applied to it); with TASK (a string), a .py starting point opens with that
                               docstring (the task) instead of the solution's (the explanation)
The learner works on my_work/<ID>/<FILE> (`--begin` copies the starting point there; git ignores my_work/), so the
starting point stays as it is: the tests check that every checker fails on it and passes on the solution.

In Korean (`--lang ko`, COURSE_LANG=ko or a Korean locale) the learner gets the same code with Korean comments:
  start.ko/<FILE>              the Korean twin of a stored start/<FILE>
  solution.ko/<FILE>           the Korean twin of solution/<FILE>; a derived starting point is made from it by the same
                               rule, with BREAK_KO (the BREAK pairs as the Korean solution words them; BREAK when its
                               texts hold no comment) and TASK_KO (the task, in Korean) in exercise.py
tests/test_course_korean.py checks that every twin's code, comments and docstrings taken out, is the English file's.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import tempfile
from dataclasses import dataclass

from common import i18n

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXERCISES = os.path.join(ROOT, "course", "exercises")
WORK = os.path.join(ROOT, "my_work")


def _lang(lang: str | None) -> str:
    """'en' or 'ko': `lang`, else the language the learner chose (common.i18n)."""
    return lang or i18n.lang()


@dataclass
class Verdict:
    ok: bool
    why: str            # one or two sentences: what was checked, and what was right or wrong
    not_run: str = ""   # what could not be checked here (no GPU: the kernel was compiled, not run); '' = all of it

    @property
    def partial(self) -> bool:
        """Nothing found wrong, but not everything checked: not RIGHT (`python -m course` exits 3)."""
        return self.ok and bool(self.not_run)

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
        """A file holding the starting point in the chosen language (written to a temporary folder when it is derived,
        not stored)."""
        return self.start_path()

    def start_path(self, lang: str | None = None) -> str:
        lang = _lang(lang)
        stored = self._twin("start", lang)
        if stored:
            return stored
        path = os.path.join(tempfile.gettempdir(), "course-exercise-start", self.id, *(["ko"] if lang == "ko" else []),
                            self.file)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.start_text(lang))
        return path

    def _twin(self, kind: str, lang: str) -> str | None:
        """<kind>/<FILE> ('start' or 'solution'), or its Korean twin <kind>.ko/<FILE> when lang is 'ko' and there is
        one; None when neither is stored."""
        for folder in ([kind + ".ko"] if lang == "ko" else []) + [kind]:
            path = os.path.join(self.folder, folder, self.file)
            if os.path.exists(path):
                return path
        return None

    def start_text(self, lang: str | None = None) -> str:
        """The starting point: start/<FILE> (start.ko/<FILE> in Korean), else derived from a solution (BREAK, TASK)."""
        lang = _lang(lang)
        stored = self._twin("start", lang)
        if stored:
            return open(stored, encoding="utf-8").read()
        src = getattr(self.module, "START_FROM", None)
        base = find(src) if src else self
        korean = lang == "ko" and base._twin("solution", "ko") != base.solution
        text = open(base.solution_path("ko" if korean else "en"), encoding="utf-8").read()
        breaks = getattr(self.module, "BREAK_KO", None) if korean else None
        for good, bad in getattr(self.module, "BREAK", []) if breaks is None else breaks:
            if text.count(good) != 1:
                whose = f"exercise {src}'s solution" if src else "the solution"
                raise ValueError(f"exercise {self.id}: BREAK text {good[:40]!r} is not in {whose}"
                                 f"{' (solution.ko/)' if korean else ''} exactly once")
            text = text.replace(good, bad)
        task = getattr(self.module, "TASK_KO" if korean else "TASK", None)
        if task is not None:
            if not (self.file.endswith(".py") and text.startswith('"""')):
                raise ValueError(f"exercise {self.id}: TASK replaces the opening docstring of a .py file")
            text = '"""' + task + text[text.index('"""', 3):]
        return text

    @property
    def solution(self) -> str:
        return os.path.join(self.folder, "solution", self.file)

    def solution_path(self, lang: str | None = None) -> str:
        """solution/<FILE>, or in Korean its twin solution.ko/<FILE> where there is one."""
        return self._twin("solution", _lang(lang)) or self.solution

    @property
    def readme(self) -> str:
        """The task in the chosen language: README.md, or README.ko.md in Korean."""
        return os.path.join(self.folder, "README.ko.md" if i18n.korean() else "README.md")

    @property
    def title_text(self) -> str:
        """TITLE in the chosen language (course/ko.py holds the Korean titles)."""
        return i18n.tr(self.title)

    @property
    def hints(self) -> list[str]:
        """HINTS in the chosen language (course/ko_phase<N>.py holds the Korean lines)."""
        return [i18n.tr(h) for h in getattr(self.module, "HINTS", [])]

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


def _check_child(ex_id: str, path: str, lang: str, conn, err_path: str) -> None:
    """In a child process: exercise `ex_id`'s verdict on `path`, sent back through `conn` as a tuple. What the child
    writes to stderr (file descriptor 2, so C++ and the driver too) goes to `err_path`."""
    fd = os.open(err_path, os.O_WRONLY | os.O_APPEND)
    os.dup2(fd, 2)
    os.close(fd)
    i18n.set_lang(lang)
    v = find(ex_id).check(path)
    conn.send((v.ok, v.why, v.not_run))
    conn.close()


def _printable(raw: bytes, last: int | None = None) -> str:
    """Bytes a process wrote to stderr as text: a kernel that wrote over the process's memory can leave bytes that are
    not UTF-8 in a dying backtrace; those are shown as U+FFFD. `last`: keep only the last that many lines."""
    lines = raw.decode("utf-8", errors="replace").splitlines()
    return "\n".join(lines if last is None else lines[-last:])


# How long a check may run before the child is taken for hung (COURSE_CHECK_TIMEOUT overrides), and how long a child
# that has sent its verdict may take to exit: one whose memory a kernel wrecked can hang in its own exit (glibc's heap
# locks), and it is then stopped, the verdict kept.
CHECK_TIMEOUT_S = 600.0
EXIT_GRACE_S = 20.0


def check_isolated(x: Exercise, path: str, *, target=None, timeout_s: float | None = None) -> Verdict:
    """x.check(path) in a child process: a learner's kernel that writes far outside its arrays can corrupt the memory
    of the process that runs it and abort it (glibc's 'invalid pointer', a segfault) or hang it; that is said as a
    verdict, not a crash or a hang of the checker. The child's stderr is passed on when it finished (warnings the
    learner should see); when it died, only its last lines, under the verdict's explanation. target: the child's
    function (default _check_child; a test passes one that misbehaves); timeout_s: default CHECK_TIMEOUT_S."""
    import multiprocessing as mp
    import sys
    import time

    if timeout_s is None:
        raw = os.environ.get("COURSE_CHECK_TIMEOUT", str(CHECK_TIMEOUT_S))
        try:
            timeout_s = float(raw)
        except ValueError:
            timeout_s = -1.0
        if not timeout_s > 0:
            raise ValueError(f"COURSE_CHECK_TIMEOUT: expected a number of seconds above 0, got {raw!r}")
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    with tempfile.NamedTemporaryFile(prefix="course-check-", suffix=".stderr", delete=False) as f:
        err_path = f.name
    got, hung = None, False
    try:
        p = ctx.Process(target=target or _check_child, args=(x.id, os.path.abspath(path), i18n.lang(), send,
                                                              err_path))
        p.start()
        send.close()
        t0 = time.monotonic()
        while not recv.poll(0.5):          # data, or the child's end closed (it died): recv answers at once
            if time.monotonic() - t0 > timeout_s:
                hung = True
                break
        if not hung:
            try:
                got = recv.recv()
            except EOFError:
                got = None
        p.join(EXIT_GRACE_S if not hung else 0)
        if p.is_alive():
            p.kill()
            p.join()
        with open(err_path, "rb") as f:
            err = f.read()
    finally:
        os.unlink(err_path)
    if got is not None:
        if err:
            sys.stderr.write(_printable(err) + "\n")
        return Verdict(*got)
    if err:
        said = (i18n.tr("the last lines the process wrote before it was stopped:") if hung
                else i18n.tr("the last lines the process wrote as it died:"))
        sys.stderr.write(said + "\n" + _printable(err, 8) + "\n")
    if hung:
        return Verdict(False, i18n.tr("the check stopped: the process that ran your code gave no answer in {secs:.0f} "
                                      "s and was stopped. A kernel that writes far past the end of an array corrupts "
                                      "the memory around it, which can hang the process: check every index against "
                                      "its bound", secs=timeout_s))
    return Verdict(False, i18n.tr("the check stopped: the process that ran your code died (exit status {rc}). A kernel "
                                  "that writes far past the end of an array corrupts the memory around it, and on a "
                                  "GPU the launch faults: check every index against its bound", rc=p.exitcode))
