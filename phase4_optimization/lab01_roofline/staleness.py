"""Is the committed roofline current? Its JSON records every results file it read, each with a hash of its content;
`python -m phase4_optimization.lab01_roofline --check [DIR]` compares them with the files in DIR now (exit 1 naming
what changed, 0 when current), as tools/readme_tables.py --check does for the READMEs."""
from __future__ import annotations

import glob
import hashlib
import json
import os

from common import lab, report

from .lab import LAB, ROOT


def counts_as_results(name: str, doc) -> bool:
    """A file the roofline reads: not its own output, and either kernel rows (rows that name a variant) or recorded
    ceilings (headline.json and the mutation log have neither)."""
    if name == f"{LAB}.json" or not isinstance(doc, dict):
        return False
    if any(isinstance(doc.get(k), (dict, int, float)) for k in ("ceilings", "ceiling", "ceiling_gbps")):
        return True
    return any(isinstance(r, dict) and r.get("variant") for r in doc.get("rows") or [])


def digest(path: str) -> str:
    with open(path, "rb") as f:
        return "sha256:" + hashlib.sha256(f.read()).hexdigest()


def fingerprint(results_dir: str) -> dict:
    """{file name: content hash} of every results file in results_dir the roofline reads."""
    out = {}
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        try:
            doc = report.read_json(path)
        except (OSError, ValueError):
            continue
        if counts_as_results(os.path.basename(path), doc):
            out[os.path.basename(path)] = digest(path)
    return out


def stale(results_dir: str) -> list[str]:
    """What makes the roofline JSON in results_dir out of date, one line a file; [] when it is current."""
    own = os.path.join(results_dir, f"{LAB}.json")
    if not os.path.exists(own):
        return [f"no {os.path.relpath(own, ROOT)}"]
    with open(own, encoding="utf-8") as f:
        recorded = json.load(f).get("inputs")
    if not isinstance(recorded, dict):
        return [f"{os.path.relpath(own, ROOT)} records no inputs (written before they were recorded)"]
    now = fingerprint(results_dir)
    out = [f"{name}: changed since the roofline read it" for name in sorted(now)
           if name in recorded and recorded[name] != now[name]]
    out += [f"{name}: new, not read by the roofline" for name in sorted(set(now) - set(recorded))]
    out += [f"{name}: read by the roofline, now gone" for name in sorted(set(recorded) - set(now))]
    return out


def check(results_dir: str | None = None) -> int:
    """Print whether the roofline of results_dir (default: the folder of the GPU the READMEs show) is current: 0 yes,
    1 no (naming the files), 2 no such folder."""
    folder = os.path.abspath(results_dir or os.path.join(ROOT, "results", lab.REFERENCE_GPU))
    if not os.path.isdir(folder):
        print(f"--check: no folder {folder}")
        return 2
    lines = stale(folder)
    where = os.path.relpath(folder, ROOT)
    if not lines:
        print(f"{where}/{LAB}.json is current: every results file it read is unchanged")
        return 0
    print(f"{where}/{LAB}.json is stale:")
    for line in lines:
        print(f"  {line}")
    print(f"regenerate it (no GPU needed): python -m phase4_optimization.lab01_roofline --results {where} "
          f"--out {where}")
    return 1
