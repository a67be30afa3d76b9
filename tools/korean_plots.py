"""Draw every lab's committed plots again in Korean, from the committed JSON (no GPU needed).

    python -m tools.korean_plots                 # results/h200/*.json -> results/h200/ko/*.png
    python -m tools.korean_plots --gpu h100-80gb-hbm3
    python -m tools.korean_plots --only 2.7      # some labs (a number, or part of a name)

Each lab redraws its plots with `--replot results/<gpu> --out results/<gpu>/ko --lang ko`: the same figures, every
title, axis label and note in Korean, in a font that has Hangul (koreanize-matplotlib). The Korean pages of the lessons
and the Korean results page show these (tools/readme_tables.py picks results/<gpu>/ko/<plot>.png where it exists).
Run it after a lab's results or its plot code change, then python tools/readme_tables.py.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from tools import readme_tables  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--gpu", default=readme_tables.README_GPU, help="the results folder (default %(default)s)")
    ap.add_argument("--only", action="append", default=None, metavar="LAB", help="only these labs (repeatable)")
    args = ap.parse_args(argv)
    src = os.path.join("results", args.gpu)
    if not os.path.isdir(os.path.join(ROOT, src)):
        ap.error(f"--gpu: no folder {src}")
    out = os.path.join(src, "ko")
    os.makedirs(os.path.join(ROOT, out), exist_ok=True)
    status = 0
    for lab in readme_tables.labs():
        if args.only and not any(o in (lab["num"], lab["name"], lab["module"]) or o in lab["name"] for o in args.only):
            continue
        if not os.path.exists(os.path.join(ROOT, src, lab["stem"] + ".json")):
            print(f"{lab['num']}: no {src}/{lab['stem']}.json, nothing to draw")
            continue
        r = subprocess.run([sys.executable, "-m", lab["module"], "--replot", src, "--out", out, "--lang", "ko"],
                           cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, COURSE_LANG="ko"))
        drew = [ln for ln in r.stdout.splitlines() if ".png" in ln]
        print(f"{lab['num']}: exit {r.returncode}, {len(drew)} plot(s)")
        if r.returncode:
            print(r.stdout[-1500:] + r.stderr[-1500:])
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
