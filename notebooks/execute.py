"""Run the course notebooks top to bottom in a Jupyter kernel, as a learner's "Run all" would, and keep the executed
copies (outputs, plots, the time of every cell) outside the repository.

    python -m notebooks.execute                     # every notebook, on the GPU when there is one
    python -m notebooks.execute phase2 phase4       # these only
    python -m notebooks.execute --cpu               # CPU mode (COURSE_FORCE_CPU=1), as CI runs them
    python -m notebooks.execute --out run1          # keep the executed .ipynb files in run1/ (default: a temp folder)

Each notebook is read from notebooks/phaseN.ipynb (built from phaseN.py by `python -m notebooks`), executed with
nbclient in a fresh python3 kernel whose working folder is notebooks/, and written to --out as phaseN.ipynb with its
outputs. A line per cell says what ran and how long it took. The labs the notebooks run write their JSON and plots
into a temporary folder (COURSE_RESULTS), never into results/.

Needs nbclient and ipykernel (`make setup` installs both). Exit status: 0 when every notebook ran, 1 when a cell
failed (its traceback is printed), 2 for a usage error or a missing package.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CELL_TIMEOUT_S = 900  # one lab: lab 4.6 compiles for about a minute on two CPU cores, more on a cold GPU cache


def names() -> list[str]:
    """The notebooks there are: phase1 .. phase4."""
    return [p.stem for p in sorted(HERE.glob("phase*.ipynb"))]


def _first_line(source: str) -> str:
    lines = [s for s in source.splitlines() if s.strip() and not s.lstrip().startswith("#")]
    return (lines[0] if lines else "(comments)")[:90]


def run(name: str, out: Path, cpu: bool, timeout: int = CELL_TIMEOUT_S) -> dict:
    """Execute notebooks/NAME.ipynb, write the executed copy to out/NAME.ipynb and return what happened."""
    import nbclient
    import nbformat

    nb = nbformat.read(HERE / f"{name}.ipynb", as_version=4)
    env = dict(os.environ)
    if cpu:
        env["COURSE_FORCE_CPU"] = "1"
    else:
        env.pop("COURSE_FORCE_CPU", None)
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(HERE)}})
    cells, t0, error = [], time.perf_counter(), None
    with client.setup_kernel(env=env):   # the kernel's own environment; this process's is left as it is
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            t = time.perf_counter()
            try:
                client.execute_cell(cell, i)
            except nbclient.exceptions.CellExecutionError as e:
                error = f"cell {i}: {e}"
            secs = time.perf_counter() - t
            cells.append({"cell": i, "code": _first_line(cell.source), "secs": round(secs, 1), "ok": error is None})
            print(f"  {name} cell {i:2d} {secs:7.1f} s  {'ok  ' if error is None else 'FAIL'}  "
                  f"{_first_line(cell.source)}", flush=True)
            if error is not None:
                break
    out.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, out / f"{name}.ipynb")
    return {"notebook": name, "mode": "cpu" if cpu else "gpu if present", "secs": round(time.perf_counter() - t0, 1),
            "cells": cells, "error": error}


def main(argv=None) -> int:
    doc = __doc__.split("\n\n")
    ap = argparse.ArgumentParser(prog="python -m notebooks.execute", description=doc[0],
                                 epilog="\n\n".join(doc[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("notebook", nargs="*", help=f"which ones (default: all of {', '.join(names())})")
    ap.add_argument("--cpu", action="store_true", help="CPU mode: COURSE_FORCE_CPU=1 in the kernel, as CI runs them")
    ap.add_argument("--out", metavar="DIR", help="where the executed notebooks and run.json go (default: a new "
                                                 "temporary folder)")
    ap.add_argument("--timeout", type=int, default=CELL_TIMEOUT_S, metavar="S",
                    help=f"seconds a cell may run (default {CELL_TIMEOUT_S})")
    args = ap.parse_args(argv)
    unknown = [n for n in args.notebook if n not in names()]
    if unknown:
        ap.error(f"no notebook {', '.join(unknown)}; there are {', '.join(names())}")
    if args.timeout < 1:
        ap.error(f"--timeout must be at least 1 second, got {args.timeout}")
    try:
        import ipykernel  # noqa: F401 - the kernel nbclient starts
        import nbclient  # noqa: F401
    except ImportError as e:
        print(f"notebooks.execute: {e.name} is not installed: run `make setup`", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="course-notebooks-"))
    runs = []
    for name in args.notebook or names():
        print(f"{name}: running ({'CPU mode' if args.cpu else 'on the GPU when there is one'})", flush=True)
        runs.append(run(name, out, args.cpu, args.timeout))
        r = runs[-1]
        print(f"{name}: {'ok' if r['error'] is None else 'FAILED'} in {r['secs']} s -> {out / (name + '.ipynb')}",
              flush=True)
        if r["error"]:
            print(r["error"], file=sys.stderr)
    (out / "run.json").write_text(json.dumps(runs, indent=1) + "\n", encoding="utf-8")
    failed = [r["notebook"] for r in runs if r["error"]]
    print(f"{len(runs) - len(failed)} of {len(runs)} notebooks ran" + (f"; failed: {', '.join(failed)}" if failed
                                                                       else "") + f"; written to {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
