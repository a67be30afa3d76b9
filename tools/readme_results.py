"""What the READMEs' generated blocks are made of (tools/readme_tables.py writes them): the labs that exist (their
number, title, command and results stem, read from the phase packages and the labs' docstrings), and what a lab's
results JSON says - every target it recorded, met or not, and its headline: its best kernel against its best library
peer at the lab's headline case. Nothing here needs a GPU."""
from __future__ import annotations

import importlib
import math
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]
README_GPU = "h200"          # the GPU whose results the repository's READMEs show

# The case that stands for the lab when its first target is not the main one (a choice, not a number).
HEADLINE_CASE = {"phase2_lab08_sgemm": "4096^3"}
# Labs whose recorded target is about one rung, not the lab's best kernel: their headline comes from the rows (the
# largest case where ours and a peer were both timed); the target still shows in the targets table.
HEADLINE_FROM_ROWS = {"phase4_lab03_tensor_cores"}


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
_RATIO = ("ratio", "vs_peer", "vs_cublas", "vs_compile", "vs torch.add", "vs torch.sum")
_NOT_PEER_RATIO = ("vs eager", "vs_eager", "vs unfused", "vs_unfused", "vs_uniform", "vs_best", "vs_copy")


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _ratio(t: dict):
    """(key, value) of the ours/peer ratio a target records, or None (a prediction, a range, a count)."""
    if "predicted" in t or "range" in t:
        return None
    for k in _RATIO:
        if _is_num(t.get(k)):
            return k, t[k]
    for k, v in t.items():
        if (k.startswith("vs ") or k.startswith("vs_")) and k not in _NOT_PEER_RATIO and _is_num(v):
            return k, v
    return None


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


def _case_label(t: dict) -> str:
    for k in ("case", "size", "shape", "n"):
        v = t.get(k)
        if isinstance(v, (list, tuple)) and v:
            return _shape_label(v, str(t.get("dtype", "")))
        if v not in (None, ""):
            return _fmt(v)
    return ""


def _peer_name(t: dict, key: str) -> str:
    if t.get("peer"):
        return str(t["peer"])
    m = re.match(r"target vs (.+)$", str(t.get("variant", "")))
    if m:
        return m.group(1)
    m = re.search(r"\bx\s+(\S.*)$", str(t.get("target", "")))
    if m:
        return m.group(1).strip()
    if key.startswith("vs ") or key.startswith("vs_"):
        name = key[3:]
        return {"cublas": "cuBLAS", "compile": "torch.compile"}.get(name, name)
    if any("copy" in k for k in t):
        return "device copy (the lab's HBM ceiling)"
    return "library peer"


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
    """The lab's best kernel against its best library peer at its headline case, or None (no peer measured)."""
    h = doc.get("headline")
    if isinstance(h, dict) and _is_num(h.get("ratio")):
        return {"case": str(h.get("case", "")), "ours": str(h.get("ours", "")), "peer": str(h.get("peer", "")),
                "ratio": float(h["ratio"]), "target": str(h.get("target", "")), "met": h.get("met")}
    # 1. from the targets the lab recorded against a peer
    cands = []
    for t in ([] if stem in HEADLINE_FROM_ROWS else all_targets(doc)):
        if not isinstance(t.get("met"), bool):
            continue                # a reference row, or a target that could not be measured here
        r = _ratio(t)
        if r:
            cands.append((_case_label(t), t, r))
    if cands:
        cases = list(dict.fromkeys(c for c, _, _ in cands))
        want = HEADLINE_CASE.get(stem)
        case = want if want in cases else cases[0]
        label, t, (key, ratio) = max((c for c in cands if c[0] == case), key=lambda c: c[2][1])
        variant = str(t.get("variant") or "")
        if not variant or variant.startswith("target vs "):     # name ours after its throughput column, if any
            variant = next((k.split(" ")[0] for k in t if k.endswith(("GB/s", "TFLOP/s")) and
                            not k.startswith(("peer", "copy", "cublas"))), "ours")
        ours = variant
        return {"case": label, "ours": str(ours), "peer": _peer_name(t, key), "ratio": float(ratio),
                "target": str(t.get("target", "")), "met": t.get("met")}
    # 2. from the rows: the largest case where a kernel of ours and a library peer were both timed
    groups: dict[tuple, dict] = {}
    for r in doc.get("rows") or []:
        if not isinstance(r, dict) or r.get("impl") not in ("cuda", "triton", "peer") or not _is_num(r.get("ms")):
            continue
        if r["ms"] <= 0:
            continue
        lab_of = str(r.get("lab") or "")
        if re.match(r"phase\d_lab\d\d_", lab_of) and not lab_of.startswith(stem):
            continue                # another lab's row that this lab re-reads (the roofline places every lab's)
        v = str(r.get("variant", ""))
        if r["impl"] == "peer" and v.startswith("phase "):
            continue                # one of the repository's own kernels, run as a reference
        if r["impl"] != "peer" and "(probe)" in v:
            continue                # a measuring probe, not a solution
        op = v.split(": ", 1)[0] if ": " in v else ""
        shape = r.get("shape") or []
        key = (r.get("lab"), op, tuple(shape) if isinstance(shape, list) else (shape,), r.get("dtype", ""))
        g = groups.setdefault(key, {"ours": [], "peer": []})
        g["peer" if r["impl"] == "peer" else "ours"].append((r["ms"], v))
    both = [(k, g) for k, g in groups.items() if g["ours"] and g["peer"]]
    if not both:
        return None

    def size(k):
        try:
            return math.prod(int(x) for x in k[2])
        except (TypeError, ValueError):
            return 0

    k, g = max(both, key=lambda kg: size(kg[0]))   # max keeps the first of equal sizes
    (oms, ov), (pms, pv) = min(g["ours"]), min(g["peer"])
    case = _shape_label(list(k[2]), k[3])
    return {"case": (f"{k[1]} " if k[1] else "") + case, "ours": ov, "peer": pv, "ratio": pms / oms,
            "target": "", "met": None}
