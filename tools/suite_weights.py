"""Each test file's time on a GPU, from one whole-suite run's junit file: the order in which `--dist loadfile` hands
files to its workers (tests/conftest.py reads tests/file_seconds.json, heaviest first).

    python3 -m pytest tests/ -n 14 --dist loadfile --junitxml=/tmp/junit.xml     # on a GPU machine
    python -m tools.suite_weights /tmp/junit.xml --gpu "NVIDIA H100 80GB HBM3" --commit abc1234
    python -m tools.suite_weights /tmp/junit.xml --print      # the table only, nothing written

Why: pytest-xdist gives a whole file to one worker, so the suite cannot end before its longest file does, and it ends
later still when a long file starts last. xdist's own order puts files with many items first; a file of seven long
items (every lab's plan compiled for every GPU) then starts when the others are nearly done. Started first, the long
files overlap the short ones and the run ends close to (sum of the files' times) / workers.
Exit status: 0, or 2 for a usage error (a missing or unreadable junit file).
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import sys
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "file_seconds.json")


def file_seconds(junit_path: str) -> dict[str, float]:
    """{"tests/test_x.py": seconds summed over its items (setup, call and teardown, as junit records them)}."""
    agg: dict[str, float] = collections.defaultdict(float)
    for case in ET.parse(junit_path).iter("testcase"):
        cls = case.get("classname", "")
        if not cls:
            continue
        # classname is the module path with dots ("tests.test_x", or "tests.test_x.TestY" for a class's tests)
        parts = cls.split(".")
        mod = next((i for i in range(len(parts), 0, -1) if parts[i - 1].startswith("test_")), None)
        if mod is None:
            continue
        agg["/".join(parts[:mod]) + ".py"] += float(case.get("time") or 0.0)
    return {f: round(s, 1) for f, s in sorted(agg.items(), key=lambda kv: -kv[1])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("junit", help="the junit XML file of one whole-suite run (pytest --junitxml)")
    ap.add_argument("--gpu", default="", help="the GPU it ran on, recorded beside the times")
    ap.add_argument("--commit", default="", help="the commit it ran at, recorded beside the times")
    ap.add_argument("--out", default=OUT, help=f"where to write (default {os.path.relpath(OUT, ROOT)})")
    ap.add_argument("--print", action="store_true", help="print the table and write nothing")
    args = ap.parse_args(argv)
    try:
        seconds = file_seconds(args.junit)
    except (OSError, ET.ParseError) as e:
        print(f"error: {args.junit}: {e}", file=sys.stderr)
        return 2
    if not seconds:
        print(f"error: {args.junit} has no test cases", file=sys.stderr)
        return 2
    for f, s in seconds.items():
        print(f"{s:8.1f}  {f}")
    total = sum(seconds.values())
    print(f"{total:8.1f}  all {len(seconds)} files")
    if args.print:
        return 0
    record = {"what": "seconds of each test file in one whole-suite run (tools/suite_weights.py)",
              "gpu": args.gpu, "commit": args.commit, "date": datetime.date.today().isoformat(),
              "seconds": seconds}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    print(f"wrote {os.path.relpath(args.out, ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
