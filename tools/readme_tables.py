"""Write the README's generated blocks from the code and the committed results, or check they are current.

    python tools/readme_tables.py            # rewrite the blocks in README.md
    python tools/readme_tables.py --check    # exit 1 if README.md differs from what the sources say
    python tools/readme_tables.py --gpu h200 # which results/<gpu>/ folder feeds the results block (default h200)

Blocks (between <!-- NAME:start --> and <!-- NAME:end --> markers):
  labs      the phase map: every lab that exists, its title (the first line of its docstring) and its command;
  targets   every performance target and prediction recorded in results/<gpu>/*.json, measured vs target, met or not.
Nothing in these blocks is typed by hand.
"""
from __future__ import annotations

import argparse
import glob
import importlib
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]


def _title(path: str) -> str:
    """First paragraph of a module's docstring, on one line, without importing it (no GPU or Triton needed)."""
    with open(path) as f:
        src = f.read()
    m = re.search(r'^\s*[rub]*"""(.*?)(?:\n\s*\n|""")', src, re.S)
    return " ".join(m.group(1).split()) if m else ""


def labs_block() -> str:
    lines = ["| lab | what it teaches | command |", "|---|---|---|"]
    for phase in PHASES:
        pkg = importlib.import_module(phase)
        for name in getattr(pkg, "LABS", []):
            title = _title(os.path.join(ROOT, phase, name + ".py"))
            num, _, rest = title.partition(" - ")
            lines.append(f"| {num.replace('Lab ', '')} | {rest or title} | `python -m {phase}.{name}` |")
    return "\n".join(lines)


_WHAT = ("case", "size", "shape", "n", "variant")
_MEASURED = ("ratio", "vs_cublas", "vs_peer", "vs torch.add", "vs torch.sum", "measured")


def _fmt(v) -> str:
    if isinstance(v, float) and 0 < abs(v) < 1e-3:
        return f"{v:.2e}"
    if isinstance(v, float) and abs(v - 1) < 5e-4 and v != 1:
        return f"{v:.5f}"           # a ratio within rounding of 1.000: show which side of it
    if isinstance(v, float):
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.3f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.1f}"
    if isinstance(v, int) and v >= 2**10 and (v & (v - 1)) == 0:
        return f"2^{v.bit_length() - 1}"
    return str(v)


def target_rows(gpu: str) -> list[list[str]]:
    rows = []
    for path in sorted(glob.glob(os.path.join(ROOT, "results", gpu, "*.json"))):
        with open(path) as f:
            doc = json.load(f)
        lab = os.path.basename(path)[:-5]
        for t in doc.get("targets") or []:
            if t.get("met") is None:
                continue            # a reference row (the peer itself), not a target
            if "predicted" in t or "range" in t:
                what, goal = t.get("target", ""), t.get("predicted", t.get("range"))
            else:
                what = ", ".join(_fmt(t[k]) for k in _WHAT if k in t and t[k] not in (None, ""))
                goal = t.get("target", "")
            meas = next((t[k] for k in _MEASURED if k in t), "")
            rows.append([lab, what, _fmt(meas), _fmt(goal), "yes" if t["met"] else "**no**",
                         doc.get("commit", "?")])
    return rows


def targets_block(gpu: str) -> str:
    rows = target_rows(gpu)
    if not rows:
        return f"(no results with targets under results/{gpu}/ yet)"
    out = ["| results file | case | measured | target | met | commit |", "|---|---|---|---|---|---|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    met = sum(r[4] == "yes" for r in rows)
    out.append("")
    out.append(f"{met} of {len(rows)} targets and predictions met. Ratios are ours / the peer named in the case "
               "(or measured / predicted), from one run each.")
    return "\n".join(out)


def render(text: str, blocks: dict[str, str]) -> str:
    for name, body in blocks.items():
        pat = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        if not pat.search(text):
            raise SystemExit(f"README.md has no <!-- {name}:start --> ... <!-- {name}:end --> block")
        text = pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when README.md is not current")
    ap.add_argument("--gpu", default="h200", help="results/<gpu>/ to summarise (default h200)")
    ap.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    args = ap.parse_args(argv)
    with open(args.readme) as f:
        old = f.read()
    new = render(old, {"labs": labs_block(), "targets": targets_block(args.gpu)})
    if args.check:
        if new != old:
            print("README.md is out of date: run python tools/readme_tables.py", file=sys.stderr)
            return 1
        print("README.md is current")
        return 0
    if new != old:
        with open(args.readme, "w") as f:
            f.write(new)
        print("README.md updated")
    else:
        print("README.md already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
