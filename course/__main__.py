"""python -m course list | exercise ID [--begin | --solution | --file PATH]"""
from __future__ import annotations

import argparse
import os
import sys

from course import __doc__ as DOC
from course.exercise import WORK, all_exercises, find


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m course", description=DOC.splitlines()[0],
                                 epilog=DOC.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="every exercise, by phase")
    e = sub.add_parser("exercise", help="check (or begin, or see the solution of) one exercise")
    e.add_argument("id", help="the exercise, e.g. 2.6.3")
    g = e.add_mutually_exclusive_group()
    g.add_argument("--begin", action="store_true", help="copy the starting point to my_work/<id>/ to edit")
    g.add_argument("--solution", action="store_true", help="print the solution file")
    g.add_argument("--file", default=None, help="check this file instead of my_work/<id>/<file>")
    args = ap.parse_args(argv)

    exs = all_exercises()
    if args.cmd == "list":
        from common import device

        here = "GPU" if device.has_gpu() else "CPU only"
        print(f"{len(exs)} exercises (this machine: {here}); `python -m course exercise ID --begin` to start one\n")
        for x in exs:
            where = "CPU or GPU" if x.tier == "cpu" else "needs a GPU"
            print(f"  {x.id:7s} {x.title}  [{where}]  {os.path.relpath(os.path.join(x.folder, 'README.md'))}")
        return 0
    try:
        x = find(args.id)
    except KeyError:
        ap.error(f"no exercise {args.id}; the exercises are {', '.join(x.id for x in exs)}")
    if args.begin:
        os.makedirs(os.path.dirname(x.work), exist_ok=True)
        if os.path.exists(x.work):
            print(f"{os.path.relpath(x.work)} exists already: edit it (delete it to start over)")
            return 0
        with open(x.work, "w", encoding="utf-8") as f:
            f.write(x.start_text())
        print(f"copied the starting point to {os.path.relpath(x.work)}; the task: "
              f"{os.path.relpath(os.path.join(x.folder, 'README.md'))}; check with `python -m course exercise {x.id}`")
        return 0
    if args.solution:
        print(open(x.solution, encoding="utf-8").read())
        return 0
    path = args.file or (x.work if os.path.exists(x.work) else x.start)
    if not args.file and not os.path.exists(x.work):
        print(f"(no {os.path.relpath(x.work)} yet: checking the starting point; `--begin` copies it for you to edit)")
    if x.tier == "gpu":
        from common import device

        if not device.has_gpu():
            print(f"exercise {x.id} needs a GPU to check ({device.no_gpu_reason()})")
            return 2
    v = x.check(path)
    print(("RIGHT: " if v.ok else "NOT YET: ") + v.why)
    return 0 if v.ok else 1


if __name__ == "__main__":
    sys.exit(main())
