"""Run the randomized suites with fresh seeds and print every seed that fails: `make fuzz SEEDS=N`.

A plain `make test` draws every random input from one fixed seed (tests/seeds.py), so it gates without luck; this
command explores. Each seed is one pytest process with COURSE_SEED set, over tests/seeds.RANDOMIZED_SUITES (the
property sweep, every variant against the float64 reference, the bad-input suites), several processes at a time.
A failing seed is printed with the tests it failed and the command that replays it; `--record` appends it to
tests/data/regression_seeds.json, which the gate then replays every run (fix the kernel or the limit, then edit the
entry's "why" to say which it was).

    python -m tools.fuzz --seeds 50            # what `make fuzz SEEDS=50` runs
    python -m tools.fuzz --seeds 5 --jobs 1 -- -k softmax
Exit status: 0 when every seed passed, 1 when one failed, 2 for a usage error.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests import seeds  # noqa: E402


def run_seed(seed: int, extra: list[str], timeout: float) -> dict:
    env = dict(os.environ, COURSE_SEED=str(seed), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *seeds.RANDOMIZED_SUITES, *extra]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        out, rc = r.stdout + r.stderr, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = f"timed out after {timeout:.0f} s\n{e.stdout or ''}", -1
    failed = re.findall(r"^FAILED (\S+)", out, re.M)
    summary = next((ln for ln in reversed(out.splitlines()) if re.search(r"\b(passed|failed|error)", ln)), "")
    return {"seed": seed, "rc": rc, "failed": failed, "summary": summary.strip("= "),
            "secs": round(time.perf_counter() - t0, 1), "tail": out[-3000:]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=10, help="how many fresh seeds (default 10)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="pytest processes at a time (default: cores)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one seed may take (default 1800)")
    ap.add_argument("--record", action="store_true",
                    help="append each failing seed to tests/data/regression_seeds.json")
    ap.add_argument("--json", default=None, metavar="FILE", help="also write the per-seed results to FILE")
    ap.add_argument("pytest_args", nargs="*", help="after --: extra pytest arguments (-k, -m, ...)")
    args = ap.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1:
        ap.error("--seeds and --jobs must be at least 1")
    fresh = [int.from_bytes(os.urandom(4), "little") for _ in range(args.seeds)]
    print(f"fuzz: {args.seeds} fresh seeds over {', '.join(seeds.RANDOMIZED_SUITES)}, {args.jobs} at a time",
          flush=True)
    results, t0 = [], time.perf_counter()
    with cf.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(run_seed, s, args.pytest_args, args.timeout) for s in fresh]
        for i, f in enumerate(cf.as_completed(futs), 1):
            r = f.result()
            results.append(r)
            state = "ok" if r["rc"] == 0 else f"FAILED {len(r['failed'])}" if r["failed"] else f"exit {r['rc']}"
            print(f"  [{i}/{args.seeds}] seed {r['seed']:>10}: {state:10s} {r['secs']:6.1f} s  {r['summary']}",
                  flush=True)
    bad = [r for r in results if r["rc"] != 0]
    print(f"\n{len(results) - len(bad)} of {len(results)} seeds passed in {time.perf_counter() - t0:.0f} s")
    for r in bad:
        print(f"\nseed {r['seed']} failed (replay: COURSE_SEED={r['seed']} python -m pytest "
              f"{' '.join(seeds.RANDOMIZED_SUITES)}):")
        for t in r["failed"] or ["(no test named; the end of its output follows)"]:
            print(f"  {t}")
        if not r["failed"]:
            print(r["tail"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date": datetime.date.today().isoformat(), "results": results}, f, indent=1)
    if bad and args.record:
        with open(seeds.REGRESSIONS_FILE) as f:
            data = json.load(f)
        for r in bad:
            files = sorted({t.split("::")[0] for t in r["failed"]}) or list(seeds.RANDOMIZED_SUITES)
            names = sorted({t.split("::", 1)[1].split("[")[0] for t in r["failed"] if "::" in t})
            data["seeds"].append({"seed": r["seed"], "tests": files + (["-k", " or ".join(names)] if names else []),
                                  "why": f"found by tools.fuzz on {datetime.date.today()}: "
                                         f"{'; '.join(r['failed'])[:300]}"
                                         " - say what was wrong and what fixed it"})
        with open(seeds.REGRESSIONS_FILE, "w") as f:
            json.dump(data, f, indent=2)
            f.write("\n")
        print(f"recorded {len(bad)} seed(s) in {os.path.relpath(seeds.REGRESSIONS_FILE, ROOT)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
