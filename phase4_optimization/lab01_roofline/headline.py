"""Which two kernels stand for a lab on the roofline: its headline (common/headline.py, the same choice the READMEs'
headline table makes) and the two recorded rows it names, so that both can be placed under the roofs."""
from __future__ import annotations

import math
import re

from common.headline import HEADLINE_CASE, HEADLINE_FROM_ROWS, choose  # noqa: F401 - the lab's names

# ---------------------------------------------------------------------------------------------------------------------
# The rows a headline names (its names are the README's words: 'triton', 'cuBLAS', 'torch.compile')
# ---------------------------------------------------------------------------------------------------------------------
_DTYPE_WORDS = {"float32": ("float32", "fp32"), "bfloat16": ("bfloat16", "bf16"), "float16": ("float16", "fp16"),
                "tf32": ("tf32",)}


def _words(s: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9.+]+", s.lower()) if len(w) > 1}


def _name_score(want: str, variant: str) -> float:
    """How well a row's variant matches a headline's name: 3 the same, 2 one starts or contains the other, else the
    share of the name's words the variant has."""
    w, v = want.lower().strip(), variant.lower().strip()
    tail = v.split(": ", 1)[1] if ": " in v else v
    if w in (v, tail):
        return 3.0
    if tail.startswith(w) or w.startswith(tail) or w in v:
        return 2.0
    ww = _words(w)
    return len(ww & _words(v)) / len(ww) if ww else 0.0


def _numbers(text: str) -> set[int]:
    out = set()
    for m in re.finditer(r"(\d+)\^(\d+)|\d+", text.replace(",", "")):
        if m.group(1) and int(m.group(1)) == 2:
            out.add(2 ** int(m.group(2)))
        out.add(int(m.group(1) or m.group(0)))
    return out


def _case_score(case: str, row: dict) -> float:
    """How well a row matches a headline's case: its own 'case' named, its dimensions, its dtype."""
    c, score = case.lower(), 0.0
    if row.get("case") and str(row["case"]).lower() in c:
        score += 2
    dims = row.get("shape") or []
    dims = dims if isinstance(dims, list) else [dims]
    if dims and all(isinstance(d, int) for d in dims) and set(dims) <= _numbers(c):
        score += 2
    dt = str(row.get("dtype") or "")
    if any(w in c for w in _DTYPE_WORDS.get(dt, (dt.lower(),)) if w):
        score += 1
    return score


def headline_rows(rows: list[dict], h: dict) -> tuple[dict | None, dict | None]:
    """The recorded rows of ours and of the peer a headline names (rows: the lab's own, each placeable): the best
    name match, then the best case match, then the pair whose time ratio is nearest the headline's."""
    ours = [r for r in rows if r.get("impl") in ("cuda", "triton")]
    peers = [r for r in rows if r.get("impl") == "peer"]

    def ranked(cands, name):
        """(name, case, exact) scores of the rows whose names match at all (a name the rows do not use, 'ours':
        every row, by case and ratio alone); a longer name matches as well as the exact one, which only breaks a tie
        of cases ('triton' -> 'triton (tuned)' at the headline case, not 'triton' at another)."""
        out = []
        for r in cands:
            s = _name_score(name, str(r.get("variant", "")))
            out.append(((min(s, 2.0), _case_score(h["case"], r), s == 3.0), r))
        return [(s, r) for s, r in out if s[0] > 0] or out

    best, best_key = (None, None), None
    for so, o in ranked(ours, h["ours"]) or [((0, 0, False), None)]:
        for sp, p in ranked(peers, h["peer"]) or [((0, 0, False), None)]:
            near = 0.0
            if o is not None and p is not None and h.get("ratio"):
                near = -abs(math.log(max(p["ms"] / o["ms"], 1e-9) / h["ratio"]))
            key = (so[0] + sp[0], so[1] + sp[1], so[2] + sp[2], near)
            if o is not None and (best_key is None or key > best_key):
                best, best_key = (o, p), key
    return best
