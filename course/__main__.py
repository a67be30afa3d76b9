"""python -m course list | exercise ID [--begin | --solution | --file PATH] [--lang en|ko]"""
from __future__ import annotations

import argparse
import os
import sys

from common import i18n
from common.i18n import tr
from course.exercise import WORK, all_exercises, find  # noqa: F401 - WORK: where --begin copies to


def _usage() -> str:
    """The commands, one a line, each with what it does in the chosen language (the package docstring's list)."""
    lines = [("python -m course list", tr("every exercise, by phase, and where it runs (CPU or GPU)")),
             ("python -m course exercise 2.6.3", tr("check your answer to exercise 2.6.3")),
             ("python -m course exercise 2.6.3 --begin", tr("copy the starting point to my_work/2.6.3/ to edit")),
             ("python -m course exercise 2.6.3 --solution", tr("show the solution (try first)")),
             ("python -m course list --lang ko", tr("in Korean (or COURSE_LANG=ko, or a Korean locale)"))]
    return "\n".join(f"    {cmd:42s} # {what}" for cmd, what in lines)


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
    e.add_argument("id", help=tr("the exercise, e.g. 2.6.3"))
    g = e.add_mutually_exclusive_group()
    g.add_argument("--begin", action="store_true", help=tr("copy the starting point to my_work/<id>/ to edit"))
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
        for x in exs:
            where = tr("CPU or GPU") if x.tier == "cpu" else tr("needs a GPU")
            print(f"  {x.id:7s} {x.title_text}  [{where}]  {os.path.relpath(x.readme)}")
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
    if args.solution:
        print(open(x.solution_path(), encoding="utf-8").read())
        return 0
    path = args.file or (x.work if os.path.exists(x.work) else x.start)
    if not args.file and not os.path.exists(x.work):
        print(tr("(no {path} yet: checking the starting point; `--begin` copies it for you to edit)",
                 path=os.path.relpath(x.work)))
    if x.tier == "gpu":
        from common import device

        if not device.has_gpu():
            print(tr("exercise {id} needs a GPU to check ({why})", id=x.id, why=tr(device.no_gpu_reason())))
            return 2
    v = x.check(path)
    print(tr("RIGHT: {why}", why=v.why) if v.ok else tr("NOT YET: {why}", why=v.why))
    return 0 if v.ok else 1


if __name__ == "__main__":
    sys.exit(main())
