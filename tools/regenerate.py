"""Re-measure everything on the GPU at hand and write its results pages.

    python -m tools.regenerate                  # every lab: checks, then benchmarks -> results/<gpu>/*.json, *.png
    python -m tools.regenerate --quick          # small sizes, minutes -> results/<gpu>-quick/ (keeps the real ones)
    python -m tools.regenerate --only phase2_cuda --only lab06_attention    # some phases or labs (or numbers: 2.7)
    python -m tools.regenerate --dry-run        # list what would run (works without a GPU)
    make results ARGS="--quick"                 # the same through make

Each lab runs in its own process (`python -m phaseN_x.labNN_y --bench --out DIR`), so one failure does not stop the
others; the exit status is 1 when any lab failed (a failed correctness check included). Then
`python tools/readme_tables.py --gpu <gpu>` writes results/<gpu>/README.md: the headline table (our best kernels vs
the libraries), the key plots and every target, for your GPU. On the H200 the repository's READMEs are rewritten too.
Without a GPU there is nothing to measure: it says so and exits 2.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tools import readme_tables  # noqa: E402


def select(all_labs: list[dict], only: list[str] | None) -> list[dict]:
    """The labs whose phase, name, module or number ('2.7') matches one of `only` (all of them when None)."""
    if not only:
        return list(all_labs)
    return [lab for lab in all_labs
            if any(o in (lab["num"], lab["module"], lab["stem"]) or o in lab["phase"] or o in lab["name"]
                   for o in only)]


def commands(labs: list[dict], out_dir: str, quick: bool) -> list[list[str]]:
    rel = os.path.relpath(out_dir, ROOT)
    return [[sys.executable, "-m", lab["module"], "--bench", "--out", rel] + (["--quick"] if quick else [])
            for lab in labs]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--quick", action="store_true",
                    help="small sizes (every lab's --quick); writes results/<gpu>-quick/ unless --out says otherwise")
    ap.add_argument("--only", action="append", default=None, metavar="PHASE_OR_LAB",
                    help="run only the phases or labs whose name contains this, or lab number like 2.7 (repeatable)")
    ap.add_argument("--out", default=None, help="results folder (default results/<gpu>/, e.g. results/rtx-4090/)")
    ap.add_argument("--dry-run", action="store_true", help="list the commands and exit (no GPU needed)")
    ap.add_argument("--no-pages", action="store_true", help="do not write results/<gpu>/README.md afterwards")
    args = ap.parse_args(argv)

    from common import cli, device, report

    labs = select(readme_tables.labs(), args.only)
    if not labs:
        ap.error(f"--only {' '.join(args.only or [])}: no lab matches (see python -m tools.regenerate --dry-run)")
    gpu = device.has_gpu()
    slug = device.gpu_slug() if gpu else "<your-gpu>"
    if args.quick:
        slug += "-quick"
    out_dir = os.path.abspath(args.out or os.path.join(ROOT, "results", slug))
    cmds = commands(labs, out_dir, args.quick)

    if args.dry_run:
        if not gpu:
            print(f"(no GPU here: {device.no_gpu_reason()}; on a GPU these would run)")
        for c in cmds:
            print("python " + " ".join(c[1:]))
        if not args.no_pages:
            print(f"python tools/readme_tables.py --gpu {os.path.basename(out_dir)}")
        return 0
    if not gpu:
        print(f"regenerate needs a CUDA GPU to measure on, and none is usable ({device.no_gpu_reason()}); "
              "`python -m tools.regenerate --dry-run` lists what it would run.", file=sys.stderr)
        return 2

    print(f"{cli.mode_line()}\nwriting {os.path.relpath(out_dir, ROOT)}/ ({len(cmds)} labs)", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    summary, status = [], 0
    for lab, cmd in cli.progress(list(zip(labs, cmds)), "labs"):
        print(f"\n{'=' * 100}\n{' '.join(['python'] + cmd[1:])}\n{'=' * 100}", flush=True)
        t0 = time.perf_counter()
        rc = subprocess.run(cmd, cwd=ROOT).returncode
        status = status or (1 if rc else 0)
        summary.append({"lab": lab["num"], "module": lab["module"], "exit": rc,
                        "secs": round(time.perf_counter() - t0, 1)})
    report.print_table(summary, title=f"regenerate: {os.path.relpath(out_dir, ROOT)}/")

    folder = os.path.basename(out_dir)
    if args.no_pages:
        pass
    elif os.path.dirname(out_dir) != os.path.join(ROOT, "results"):
        print(f"results pages are written for folders directly under results/; {out_dir} is not one, so none was")
    else:
        rc = readme_tables.main(["--gpu", folder])
        status = status or rc
        print(f"results page: results/{folder}/README.md"
              + (" (and the repository's READMEs)" if folder == readme_tables.README_GPU else ""))
    if status:
        print("some labs failed (see the summary above): their results were not all written", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
