"""python -m course list | exercise ID [--begin | --hint [N] | --solution | --file PATH] [--lang en|ko]"""
from __future__ import annotations

import argparse
import os
import sys
import textwrap

from common import i18n
from common.i18n import tr
from course.exercise import WORK, all_exercises, check_isolated, find  # noqa: F401 - WORK: where --begin copies to

PARTIAL = 3        # the exit status of a check that could not run everything here (no GPU): neither RIGHT nor wrong


def _usage() -> str:
    """The commands, one a line, each with what it does in the chosen language (the package docstring's list)."""
    lines = [("python -m course list", tr("every exercise, by phase, and where it runs (CPU or GPU)")),
             ("python -m course exercise 1.2.1", tr("check your answer to exercise 1.2.1")),
             ("python -m course exercise 1.2.1 --begin", tr("copy the starting point to my_work/1.2.1/ to edit")),
             ("python -m course exercise 1.2.1 --hint", tr("the next hint (three at most, each nearer the fix)")),
             ("python -m course exercise 1.2.1 --solution", tr("show the solution (try first)")),
             ("python -m course list --lang ko", tr("in Korean (or COURSE_LANG=ko, or a Korean locale)")),
             ("COURSE_CHECK_TIMEOUT=120 python -m course ...", tr("stop a check that hangs after 120 s (default 600)"))]
    return "\n".join([f"    {cmd:46s} # {what}" for cmd, what in lines] + ["", tr(
        "exit status of a check: 0 RIGHT; 1 NOT YET (wrong, or it does not load or compile); 2 a wrong command; "
        "3 NOT RUN HERE: nothing found wrong, but part of the check needs a GPU (a CUDA kernel compiled, not run)")])


PROGRESS = os.path.join(WORK, ".progress.json")      # the last verdict of each exercise (my_work/ is git-ignored)
STATES = {"done": "done", "tried": "tried", "partial": "compiled"}


def _progress() -> dict:
    """{exercise id: 'done' | 'tried' | 'partial'} from the last verdicts, and "hints": {exercise id: how many hints
    `--hint` has shown}; {} when there are none or unreadable."""
    import json

    try:
        with open(PROGRESS, encoding="utf-8") as f:
            got = json.load(f)
        return got if isinstance(got, dict) else {}
    except (OSError, ValueError):
        return {}


def _record(ex_id: str, state) -> None:
    """Keep the last verdict of `ex_id` in my_work/.progress.json, for `list` (or, under the key "hints", the hints
    shown); a file that cannot be written is no reason to fail a check."""
    import json

    seen = _progress()
    seen[ex_id] = state
    try:
        os.makedirs(WORK, exist_ok=True)
        with open(PROGRESS, "w", encoding="utf-8") as f:
            json.dump(seen, f, indent=1, sort_keys=True)
    except OSError:
        pass


def _hints_seen(ex_id: str) -> int:
    """How many of `ex_id`'s hints `--hint` has shown (kept under "hints" in my_work/.progress.json)."""
    seen = _progress().get("hints")
    n = seen.get(ex_id, 0) if isinstance(seen, dict) else 0
    return n if isinstance(n, int) and n > 0 else 0


def _hint(ap: argparse.ArgumentParser, x, which: str) -> int:
    """`--hint`: the next hint not yet seen; `--hint N`: hint N. Hints come graduated - where to look, the mechanism,
    nearly the fix - and after the last one the solution is next."""
    hints = x.hints
    solution = f"python -m course exercise {x.id} --solution"
    if which == "":
        k = _hints_seen(x.id) + 1
        if k > len(hints):
            print(tr("no hints left for {id}: you have seen all {n}. Next: `{solution}`", id=x.id, n=len(hints),
                     solution=solution))
            return 0
    elif which.isdigit() and 1 <= int(which) <= len(hints):
        k = int(which)
    else:
        ap.error(tr("--hint N: N is a hint's number, 1 to {n}, for exercise {id} (not {got})", n=len(hints), id=x.id,
                    got=which))
    print(tr("hint {k} of {n} for {id}:", k=k, n=len(hints), id=x.id))
    print(textwrap.fill(hints[k - 1], width=112, initial_indent="  ", subsequent_indent="  ", break_long_words=False,
                        break_on_hyphens=False))
    seen = _hints_seen(x.id)
    if k == len(hints):
        print(tr("(that was the last hint. Next: `{solution}`)", solution=solution))
    elif k >= seen:
        print(tr("(`python -m course exercise {id} --hint` again for hint {next})", id=x.id, next=k + 1))
    else:
        print(tr("(hint {next}: `python -m course exercise {id} --hint {next}`)", id=x.id, next=k + 1))
    if k > seen:
        progress = _progress()
        shown = progress.get("hints") if isinstance(progress.get("hints"), dict) else {}
        _record("hints", {**shown, x.id: k})
    return 0


def _lang_option(p: argparse.ArgumentParser, default) -> None:
    p.add_argument("--lang", choices=i18n.LANGS, default=default,
                   help=tr("language of the output: en or ko (default: COURSE_LANG, else the locale; ko = Korean)"))


def _chosen(argv) -> str | None:
    """--lang of `argv` (before or after the subcommand), read before the parser is built: its help is in that
    language too."""
    for i, a in enumerate(argv):
        if a == "--lang" and i + 1 < len(argv) and argv[i + 1] in i18n.LANGS:
            return argv[i + 1]
        if a.startswith("--lang=") and a.split("=", 1)[1] in i18n.LANGS:
            return a.split("=", 1)[1]
    return None


def main(argv=None) -> int:
    from common.cli import quiet_broken_pipe

    quiet_broken_pipe()
    argv = sys.argv[1:] if argv is None else list(argv)
    if _chosen(argv):
        i18n.set_lang(_chosen(argv))
    ap = argparse.ArgumentParser(prog="python -m course", description=tr("The course's own command: exercises that "
                                                                          "check themselves."),
                                 epilog=_usage(), formatter_class=argparse.RawDescriptionHelpFormatter)
    _lang_option(ap, None)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ls = sub.add_parser("list", help=tr("every exercise, by phase"))
    e = sub.add_parser("exercise", help=tr("check (or begin, or see the solution of) one exercise"))
    e.add_argument("id", help=tr("the exercise, e.g. 1.2.1"))
    g = e.add_mutually_exclusive_group()
    g.add_argument("--begin", action="store_true", help=tr("copy the starting point to my_work/<id>/ to edit"))
    g.add_argument("--hint", nargs="?", const="", default=None, metavar="N",
                   help=tr("the next hint not yet seen, or hint N (1 to 3); after the last, --solution"))
    g.add_argument("--solution", action="store_true", help=tr("print the solution file"))
    g.add_argument("--file", default=None, help=tr("check this file instead of my_work/<id>/<file>"))
    for p in (ls, e):                   # --lang after the subcommand too; SUPPRESS keeps one given before it
        _lang_option(p, argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.lang:
        i18n.set_lang(args.lang)

    exs = all_exercises()
    if args.cmd == "list":
        from common import device

        here = "GPU" if device.has_gpu() else tr("CPU only")
        print(tr("{n} exercises (this machine: {here}); `python -m course exercise ID --begin` to start one\n",
                 n=len(exs), here=here))
        seen = _progress()
        for x in exs:
            where = tr("CPU or GPU") if x.tier == "cpu" else tr("needs a GPU")
            state = tr(STATES[seen[x.id]]) if seen.get(x.id) in STATES else tr("not started")
            print(f"  {x.id:7s} {state:12s} {x.title_text}  [{where}]  {os.path.relpath(x.readme)}")
        return 0
    try:
        x = find(args.id)
    except KeyError:
        ap.error(tr("no exercise {id}; the exercises are {ids}", id=args.id, ids=", ".join(x.id for x in exs)))
    if args.begin:
        os.makedirs(os.path.dirname(x.work), exist_ok=True)
        if os.path.exists(x.work):
            print(tr("{path} exists already: edit it (delete it to start over)", path=os.path.relpath(x.work)))
            return 0
        with open(x.work, "w", encoding="utf-8") as f:
            f.write(x.start_text())
        print(tr("copied the starting point to {path}; the task: {readme}; check with `python -m course exercise {id}`",
                 path=os.path.relpath(x.work), readme=os.path.relpath(x.readme), id=x.id))
        return 0
    if args.hint is not None:
        return _hint(ap, x, args.hint)
    if args.solution:
        print(open(x.solution_path(), encoding="utf-8").read())
        return 0
    path = args.file or (x.work if os.path.exists(x.work) else x.start)
    if not args.file and not os.path.exists(x.work):
        print(tr("(no {path} yet: checking the starting point; `--begin` copies it for you to edit)",
                 path=os.path.relpath(x.work)))
    try:
        v = check_isolated(x, path)
    except ValueError as e:             # a COURSE_CHECK_TIMEOUT that is not a number of seconds
        ap.error(str(e))
    if not args.file:                   # the learner's own file: `--file` checks (a solution, a test's) do not count
        _record(x.id, "partial" if v.partial else "done" if v.ok else "tried")
    if v.partial:
        print(tr("NOT RUN HERE: {why}; {not_run}", why=v.why, not_run=v.not_run))
        return PARTIAL
    print(tr("RIGHT: {why}", why=v.why) if v.ok else tr("NOT YET: {why}", why=v.why))
    return 0 if v.ok else 1


if __name__ == "__main__":
    sys.exit(main())
