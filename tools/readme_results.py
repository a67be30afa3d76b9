"""What the READMEs' generated blocks are made of (tools/readme_tables.py writes them): the labs that exist (their
number, title, command and results stem, read from the phase packages and the labs' docstrings), and what a lab's
results JSON says - every target it recorded, met or not, and its headline: its best kernel against its best library
peer at the lab's headline case. Nothing here needs a GPU."""
from __future__ import annotations

import importlib
import math
import os
import re

from common.headline import HEADLINE_CASE, HEADLINE_FROM_ROWS, choose  # noqa: F401 - the rule's names

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]
README_GPU = "h200"          # the GPU whose results the repository's READMEs show


def _title(path: str) -> str:
    """First paragraph of a module's docstring, on one line, without importing it (no GPU or Triton needed)."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    m = re.search(r'^\s*[rub]*"""(.*?)(?:\n\s*\n|""")', src, re.S)
    return " ".join(m.group(1).split()) if m else ""


def labs() -> list[dict]:
    """Every lab that exists, in the planned order: phase, name, number ('2.7'), title, command, results stem."""
    out = []
    for phase in PHASES:
        pkg = importlib.import_module(phase)
        for name in getattr(pkg, "LABS", []):
            src = os.path.join(ROOT, phase, name, "lab.py")
            title = _title(src if os.path.exists(src) else os.path.join(ROOT, phase, name + ".py"))
            num, _, rest = title.partition(" - ")
            pnum = phase[len("phase")]
            out.append({"phase": phase, "name": name, "num": num.replace("Lab ", "") or f"{pnum}.?",
                        "title": rest or title, "module": f"{phase}.{name}",
                        "stem": f"phase{pnum}_{name}"})
    return out


def _fmt(v) -> str:
    if isinstance(v, bool):
        return str(v)
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


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def all_targets(doc: dict) -> list[dict]:
    """Targets wherever a lab put them: header 'targets' (list) or 'target' (dict or list), or rows of impl 'target'."""
    out = []
    for key in ("targets", "target"):
        t = doc.get(key)
        if isinstance(t, dict):
            out.append(t)
        elif isinstance(t, list):
            out += [x for x in t if isinstance(x, dict)]
    out += [r for r in doc.get("rows") or [] if isinstance(r, dict) and r.get("impl") == "target"]
    return out


_WHAT = ("case", "size", "shape", "n", "variant")
_MEASURED = ("ratio", "vs_cublas", "vs_peer", "vs torch.add", "vs torch.sum", "measured")


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)




def target_rows(docs: dict[str, dict], yes: str = "yes", no: str = "**no**") -> list[list[str]]:
    rows = []
    for stem, doc in docs.items():
        for t in all_targets(doc):
            if t.get("met") is None:
                continue            # a reference row (the peer itself), not a target
            met = t["met"]
            if "predicted" in t or "range" in t:
                what, goal = t.get("target", ""), t.get("predicted", t.get("range"))
            else:
                what = ", ".join(_fmt(t[k]) for k in _WHAT if k in t and t[k] not in (None, ""))
                goal = t.get("target", "")
            meas = next((t[k] for k in _MEASURED if k in t), "")
            shown = (yes if met else no) if isinstance(met, bool) else _cell(met)
            if met is False and t.get("steady") is False:
                shown += " (spread > 3%)"      # not quotable either way: too few steady rounds
            rows.append([stem, _cell(what), _fmt(meas), _cell(_fmt(goal)), shown,
                         str(doc.get("commit", "?"))])
    return rows






def _shape_label(shape, dtype: str) -> str:
    shape = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    if len(shape) == 1:
        s = _fmt(shape[0])
    elif len(set(shape)) == 1 and len(shape) == 3:
        s = f"{shape[0]}^3"
    else:
        s = "x".join(str(x) for x in shape)
    return f"{s} {dtype}".strip()


def headline(doc: dict, stem: str) -> dict | None:
    """The lab's best kernel against its best library peer at its headline case, or None (no peer measured): the one
    rule the roofline uses too (common/headline.py)."""
    return choose(doc, stem)
