"""What the READMEs' generated blocks are made of (tools/readme_tables.py writes them): the labs that exist (their
number, title, command and results stem, read from the phase packages and the labs' docstrings), and what a lab's
results JSON says - every target it recorded, met or not, and its headline: its best kernel against its best library
peer at the lab's headline case. Nothing here needs a GPU."""
from __future__ import annotations

import importlib
import os
import re

from common.headline import HEADLINE_CASE, HEADLINE_FROM_ROWS, choose  # noqa: F401 - the rule's names
from common.target import Target, finite, fmt, recorded, shape_text

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


_fmt = fmt                   # the READMEs' number format (common/target.py: one for the headline and the tables)


def _cell(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


_is_num = finite


def _verdict(t: Target, words: dict) -> str:
    """How the targets table says a record's verdict: yes / no, or why there is none."""
    if t.met is not None:
        shown = words["yes"] if t.met else words["no"]
        if t.met is False and t.steady is False:
            shown += " (spread > 3%)"      # a legacy record: called missed from rounds that were not steady
        return shown
    if t.note:
        return _cell(t.note)
    return words["unsteady"] if t.steady is False else words["unmeasured"]


def target_rows(docs: dict[str, dict], yes: str = "yes", no: str = "**no**", unsteady: str = "no verdict (spread > 3%)",
                unmeasured: str = "not measured") -> list[list[str]]:
    """Every target and prediction of the documents, as recorded (common.target.recorded): results file, case,
    ours, peer, measured, goal, verdict, commit. Reference lines (no goal) are left out."""
    words = {"yes": yes, "no": no, "unsteady": unsteady, "unmeasured": unmeasured}
    rows = []
    for stem, doc in docs.items():
        for t in recorded(doc):
            if t.is_target:
                rows.append([stem, _cell(t.case), _cell(t.ours), _cell(t.peer),
                             _fmt(t.ratio) if t.ratio is not None else "", _cell(t.goal), _verdict(t, words),
                             str(doc.get("commit", "?"))])
    return rows


_shape_label = shape_text


def headline(doc: dict, stem: str) -> dict | None:
    """The lab's best kernel against its best library peer at its headline case, or None (no peer measured): the one
    rule the roofline uses too (common/headline.py)."""
    return choose(doc, stem)
