"""Run the four phases in order in one process: what `make run` (and `make bench`, with --bench) runs.

    python -m tools.run_phases [--quick] [--only LAB ...] [any lab flag]
One process, so the flags are checked once (a flag no lab takes, a bad --size or --arch: one usage error, exit 2)
and the no-GPU explanation is printed once, not once per lab. Exit status: 0 when every lab passed its checks, else
the first failing lab's status.
"""
from __future__ import annotations

import importlib
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]


def main(argv=None) -> int:
    from common import cli, lab, phase, report
    from common.i18n import tr

    argv = list(sys.argv[1:] if argv is None else argv)
    pkgs = [importlib.import_module(p) for p in PHASES]
    every = [(p, n) for p, pkg in zip(PHASES, pkgs) for n in pkg.LABS]
    names = [n for _, n in every]
    parser = phase.phase_parser("The course", names)
    parser.prog = "python -m tools.run_phases"
    parser.description = (__doc__ or "").split("\n\n")[0]
    args, unknown = parser.parse_known_args(argv)
    extra = set().union(*(phase.lab_flags(p, [n]) for p, n in every))
    bad = [a for a in unknown if a.startswith("-") and a.split("=")[0] not in extra]
    if bad:
        parser.error(f"unrecognized arguments: {' '.join(bad)} (no lab takes them)")
    if args.list:
        for p, n in every:
            print(f"{p}.{n:32s} {lab.title_of(lab.lab_module(p, n))}")
        return 0
    chosen = set(phase.select_labs(parser, names, args.only))
    cli.print_mode_line()
    status, summary = 0, []
    for p, pkg in zip(PHASES, pkgs):
        mine = [n for n in pkg.LABS if n in chosen]
        if not mine:
            continue
        print(f"\n=== {p} ===", flush=True)
        t0 = time.perf_counter()
        rc = phase.run_phase(p, pkg.TITLE, pkg.LABS, argv + [f"--only={n}" for n in mine] if args.only else argv,
                             none_ok=True)
        status = status or rc
        summary.append({"phase": p, "labs": len(mine), "exit": rc, "secs": round(time.perf_counter() - t0, 1)})
    report.print_table(summary, title=tr("the course: summary (0 = every check passed)"))
    print(tr("next: `make test` runs the tests; read {guide} for what each lab teaches, and "
             "`python -m course list` for the exercises", guide="phase1_architecture/README.md") if status == 0 else
          tr("a lab failed: scroll up to its FAILED line; `python -m {phase} --only LAB` runs that lab alone",
             phase=next((r["phase"] for r in summary if r["exit"]), PHASES[0])))
    return status


if __name__ == "__main__":
    sys.exit(main())
