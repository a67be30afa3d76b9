"""Which recorded rows lab 4.1 places: every row of a results folder read, one row kept per kernel (the rules in
select()), and each kept row placed under the roofs (analyze())."""
from __future__ import annotations

import glob
import os
import re

from common import report

from .headline import choose, headline_rows
from .lab import LAB, Ceilings, _prod, counts, place, unit_for
from .staleness import counts_as_results


# ---------------------------------------------------------------------------------------------------------------------
# Which rows are kernels, and which one of each to show
# ---------------------------------------------------------------------------------------------------------------------
def _normalized(variant: str) -> str:
    """The kernel a variant name refers to: 'row sum: cuda 02 x' -> 'cuda 02 x'; 'cuda C, phase 2 (cuda 05 y)' ->
    'cuda 05 y'."""
    m = re.search(r"\((cuda \d\d[^()]*)\)", variant)
    if m:
        return m.group(1).strip()
    return variant.split(": ", 1)[1].strip() if ": " in variant else variant.strip()


def is_named_kernel(variant: str) -> bool:
    """'cuda 05 ...' or 'triton ...' without a knob setting; anything else ('stride 4', 'b32 1 wave', 'WORK=16',
    'rows=2 warps=8') is a point of a sweep."""
    v = _normalized(variant).lower()
    return v.startswith(("cuda", "triton")) and "=" not in v


def load_rows(results_dir: str) -> tuple[list[dict], list[dict], str]:
    """Every row of every JSON under results_dir (with its file), the file headers, and the GPU name they name.

    This lab's own placed rows are skipped (they are an output); its AI-sweep rows are kept (they are measurements).
    Files with neither kernel rows nor ceilings (headline.json, the mutation log) are not results (staleness.py).
    """
    rows, headers, gpu = [], [], ""
    for path in sorted(glob.glob(os.path.join(results_dir, "*.json"))):
        try:
            doc = report.read_json(path)
        except (OSError, ValueError):
            continue
        name = os.path.basename(path)
        if not isinstance(doc, dict) or not (name == f"{LAB}.json" or counts_as_results(name, doc)):
            continue
        headers.append(dict({k: v for k, v in doc.items() if k != "rows"}, file=name))
        if not gpu and isinstance(doc.get("gpu"), str) and not doc["gpu"].startswith("none"):
            gpu = doc["gpu"]
        for i, r in enumerate(doc.get("rows") or []):
            if not isinstance(r, dict):
                continue
            if name.startswith(LAB) and r.get("kind") != "sweep":
                continue
            rows.append(dict(r, _file=name, _index=i))
    return rows, headers, gpu


def select(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """The rows to place (one per kernel, dtype) and the ones left out, each with a reason.

    Rules: a row needs lab, variant, impl, a positive ms and at least one of gbps / tflops; shared-memory and register
    probes are not HBM traffic; per (lab, variant, dtype, impl) the largest shape wins, and at equal shape (a sweep of
    a knob) the fastest; sweep points of a lab ('stride 4', 'WORK=16') are reduced to the best one; a row that
    re-measures another lab's kernel ('cuda C, phase 2 (cuda 05 ...)') is dropped when that lab's row is present.
    """
    left, cands = [], []
    for r in rows:
        why = None
        if not r.get("lab") or not r.get("variant") or r.get("impl") not in ("cuda", "triton", "peer"):
            why = "not a kernel row (no lab/variant/impl: a tuner table or a summary)"
        elif not isinstance(r.get("ms"), (int, float)) or r["ms"] <= 0:
            why = "no time"
        elif r.get("gbps") is None and r.get("tflops") is None:
            why = "neither GB/s nor TFLOP/s recorded"
        elif r.get("level") not in (None, "hbm", "HBM", "dram", "DRAM"):
            why = f"a {r['level']} probe, not HBM traffic"
        if why:
            if r.get("lab") or r.get("variant"):
                left.append({"lab": r.get("lab"), "variant": r.get("variant"), "why": why})
            continue
        cands.append(r)

    def speed_key(r):
        both = r.get("gbps") is not None and r.get("tflops") is not None
        return (_prod(r.get("shape")), both, 1.0 / r["ms"])

    best: dict = {}
    for r in cands:
        key = (r["lab"], r["variant"], r.get("dtype"), r["impl"])
        if key not in best or speed_key(r) > speed_key(best[key]):
            best[key] = r
    chosen = list(best.values())
    # sweep points: keep the best of each (lab, dtype) family
    families: dict = {}
    kept = []
    for r in chosen:
        if r["impl"] == "peer" or is_named_kernel(r["variant"]) or r.get("kind") == "sweep":
            kept.append(r)
        else:
            families.setdefault((r["lab"], r.get("dtype")), []).append(r)
    for (labn, _), fam in families.items():
        top = max(fam, key=lambda r: (r.get("gbps") or 0.0, r.get("tflops") or 0.0))
        kept.append(dict(top, _note=f"best of {len(fam)} sweep points"))
        for r in fam:
            if r is not top:
                left.append({"lab": labn, "variant": r["variant"],
                             "why": f"sweep point (best shown: {top['variant']})"})
    # cross-lab re-measurements
    names = {(r["variant"], r["impl"], r.get("dtype")) for r in kept}
    out = []
    for r in kept:
        norm = _normalized(r["variant"])
        if norm != r["variant"] and r["impl"] != "peer" and (norm, r["impl"], r.get("dtype")) in names:
            left.append({"lab": r["lab"], "variant": r["variant"], "why": f"re-measures '{norm}' (shown once)"})
            continue
        out.append(r)
    # peers measured by several labs at the same shape: once
    seen, final = set(), []
    for r in sorted(out, key=lambda r: (r["lab"], r.get("_file", ""), r.get("_index", 0))):
        if r["impl"] == "peer":
            k = (r["variant"], r.get("dtype"), tuple(r.get("shape") or ()))
            if k in seen:
                left.append({"lab": r["lab"], "variant": r["variant"], "why": "peer already shown by an earlier lab"})
                continue
            seen.add(k)
        final.append(r)
    return final, left


def _short_lab(lab_name: str) -> str:
    m = re.match(r"phase(\d+)_lab(\d+)_?(.*)", lab_name or "")
    return f"{int(m.group(1))}.{int(m.group(2))} {m.group(3)}" if m else (lab_name or "?")


def _placed(r: dict, ceil: Ceilings) -> dict | None:
    nbytes, flops, src = counts(r)
    if nbytes is None and flops is None:
        return None
    p = place(nbytes, flops, r["ms"], unit_for(r["lab"], r["variant"], r.get("dtype")), ceil)
    return dict(kind="placed", lab=r["lab"], variant=r["variant"], impl=r["impl"], shape=r.get("shape"),
                dtype=r.get("dtype"), ms=r["ms"], bytes=nbytes, flops=flops, counts=src,
                file=r.get("_file", "this run"), index=r.get("_index"), note=r.get("_note", ""),
                sweep=r.get("kind") == "sweep", k=r.get("k"), **p)


def _order(p: dict):
    return (p["impl"] == "peer", p["lab"], p["k"] or 0, p["variant"], p["dtype"] or "")


def analyze(rows: list[dict], ceil: Ceilings, headers: list[dict] = ()) -> tuple[list[dict], list[dict]]:
    """Place every selected row: (placed rows, rows left out with why). With the files' headers, each lab's headline
    pair (headline.py: its best kernel and its library peer at its headline case, as the READMEs choose them) is
    placed too - in place of the row select() kept for the same kernel where that was another case - and marked:
    'headline' is 'ours' or 'peer' on those two rows."""
    chosen, left = select(rows)
    placed = []
    for r in chosen:
        p = _placed(r, ceil)
        if p is None:
            left.append({"lab": r["lab"], "variant": r["variant"], "why": "no byte or FLOP count"})
            continue
        placed.append(p)
    for labn, h, pair in headline_pairs(rows, headers):
        for role, r in zip(("ours", "peer"), pair):
            if r is None:
                continue
            same = [p for p in placed if (p["file"], p["index"]) == (r["_file"], r["_index"])]
            if not same:
                new = _placed(r, ceil)
                if new is None:
                    continue
                key = (r["lab"], r["variant"], r.get("dtype"), r["impl"])
                placed = [p for p in placed if (p["lab"], p["variant"], p["dtype"], p["impl"]) != key]
                same = [new]
                placed.append(new)
            same[0].update(headline=role, headline_case=h["case"], headline_ratio=h["ratio"],
                           headline_name=h[role])
    placed.sort(key=_order)
    return placed, left


def _is_a_lab(stem: str) -> bool:
    """Whether a results stem ('phase2_lab07_softmax') is a lab of the course - its folder or flat module exists -
    and not a side file of one ('phase4_lab03_wgmma', '..._tuned')."""
    m = re.match(r"phase(\d+)_(lab\d+_.+)$", stem)
    if not m:
        return True                 # a results folder made by hand (the tests' fixtures): its files are its labs
    where = os.path.join(report.ROOT, f"phase{m.group(1)}_*", m.group(2))
    return bool(glob.glob(where) or glob.glob(where + ".py"))


def headline_pairs(rows: list[dict], headers: list[dict]) -> list[tuple[str, dict, tuple]]:
    """(lab, headline, (ours row, peer row)) of every results file that is a lab's own (its stem is the lab its rows
    name: not a _tuned or a side file), in the course's order; a row is None where none matches."""
    out = []
    for hdr in headers:
        stem = hdr["file"][:-5]
        mine = [r for r in rows if r.get("_file") == hdr["file"] and r.get("lab") == stem]
        if not mine or stem == LAB or not _is_a_lab(stem):
            continue
        doc = {k: v for k, v in hdr.items() if k != "file"}
        doc["rows"] = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows
                       if r.get("_file") == hdr["file"]]
        h = choose(doc, stem)
        if h is None:
            continue
        usable = [r for r in mine if isinstance(r.get("ms"), (int, float)) and r["ms"] > 0
                  and (r.get("gbps") is not None or r.get("tflops") is not None)
                  and r.get("level") in (None, "hbm", "HBM", "dram", "DRAM")]
        out.append((stem, h, headline_rows(usable, h)))
    return out
