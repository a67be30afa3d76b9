"""A lab's headline: its best kernel against its best library peer at the lab's headline case, chosen from its
results JSON. One rule for every place that shows it: the READMEs' headline table (tools/readme_results.py) and the
roofline (lab 4.1, which places both kernels of each headline under the roofs).

The rules, in order: a 'headline' the lab wrote into its JSON; else the targets it recorded against a peer
(common.target.recorded: records with a peer, a goal and a measured ratio), at the lab's headline case
(HEADLINE_CASE, else the first case), the highest ratio; else the rows: the largest case where a kernel of ours
and a library peer were both timed, the fastest of each."""
from __future__ import annotations

import math
import re

from .target import finite, recorded, shape_text

# a choice per lab, not a number
HEADLINE_CASE = {"phase2_lab08_sgemm": "4096^3"}
HEADLINE_FROM_ROWS = {"phase4_lab03_tensor_cores"}


def choose(doc: dict, stem: str) -> dict | None:
    """The lab's headline: {case, ours, peer, ratio, target, met}, or None where no peer was measured."""
    given = doc.get("headline")
    if isinstance(given, dict) and finite(given.get("ratio")):
        return {k: str(given.get(k, "")) for k in ("case", "ours", "peer")} | {
            "ratio": float(given["ratio"]), "target": str(given.get("target", "")), "met": given.get("met")}
    found = [] if stem in HEADLINE_FROM_ROWS else [t for t in recorded(doc)
                                                   if t.peer and t.goal and finite(t.ratio)]
    if found:
        order = list(dict.fromkeys(t.case for t in found))
        case = HEADLINE_CASE[stem] if HEADLINE_CASE.get(stem) in order else order[0]
        best = max((t for t in found if t.case == case), key=lambda t: t.ratio)   # the first of equals
        return {"case": best.case, "ours": best.ours or "ours", "peer": best.peer, "ratio": float(best.ratio),
                "target": best.goal, "met": best.met}
    return _from_rows(doc, stem)


def _from_rows(doc: dict, stem: str) -> dict | None:
    cases: dict = {}
    for r in doc.get("rows") or []:
        if not isinstance(r, dict) or r.get("impl") not in ("cuda", "triton", "peer"):
            continue
        if not finite(r.get("ms")) or r["ms"] <= 0:
            continue
        owner, v = str(r.get("lab") or ""), str(r.get("variant", ""))
        if re.match(r"phase\d_lab\d\d_", owner) and not owner.startswith(stem):
            continue                        # another lab's row, re-read (this lab's own placed rows)
        if (r["impl"] == "peer" and v.startswith("phase ")) or (r["impl"] != "peer" and "(probe)" in v):
            continue                        # one of our kernels run as a reference; a measuring probe
        shape = r.get("shape") or []
        key = (r.get("lab"), v.split(": ", 1)[0] if ": " in v else "",
               tuple(shape) if isinstance(shape, list) else (shape,), r.get("dtype", ""))
        cases.setdefault(key, ([], []))[r["impl"] == "peer"].append((r["ms"], v))
    both = [(k, v) for k, v in cases.items() if v[0] and v[1]]
    if not both:
        return None

    def elements(k) -> int:
        try:
            return math.prod(int(x) for x in k[2])
        except (TypeError, ValueError):
            return 0

    key, (ours, peers) = both[0]
    for k, v in both[1:]:                   # the largest case; the first of equal ones
        if elements(k) > elements(key):
            key, (ours, peers) = k, v
    (o_ms, o_name), (p_ms, p_name) = min(ours), min(peers)
    op = f"{key[1]} " if key[1] else ""
    return {"case": op + shape_text(list(key[2]), key[3]), "ours": o_name, "peer": p_name, "ratio": p_ms / o_ms,
            "target": "", "met": None}
