"""Lab 4.1's table of placed kernels, and the points its roofline names: each lab's best kernel and its closest
library peer."""
from __future__ import annotations

import math
import re

from common.i18n import tr

from .phrases import say
from .selection import _short_lab


# ---------------------------------------------------------------------------------------------------------------------
# The table, and the points the roofline names
# ---------------------------------------------------------------------------------------------------------------------
TABLE_COLS = ["n", "lab", "variant", "dtype", "unit", "ai", "achieved", "roof", "bound", "frac_roof",
              "frac_datasheet_roof", "on_plot", "counts"]


def on_roofline(p: dict) -> bool:
    """A placed kernel with both an AI and an achieved TFLOP/s (a point on the roofline), not a k-FMA sweep point."""
    return bool(p.get("ai") and p.get("achieved_tflops") and not p.get("sweep"))


def _lab_key(lab_name: str):
    """Phase, lab number, then the name: the course's order."""
    m = re.match(r"phase(\d+)_lab(\d+)", lab_name or "")
    return (int(m.group(1)), int(m.group(2)), lab_name) if m else (99, 99, lab_name or "")


def named_points(placed: list[dict]) -> list[dict]:
    """The few points the roofline names: per lab with points on the roofline, its best kernel (ours: the highest
    achieved TFLOP/s) and its closest library peer (same dtype first, then the nearest AI - the same case - then the
    fastest). Every other kernel is in the table. Returns [{lab, best, peer (or None), bound}] in the course's order."""
    by_lab: dict = {}
    for p in placed:
        if on_roofline(p):
            by_lab.setdefault(p["lab"], []).append(p)
    out = []
    for labn in sorted(by_lab, key=_lab_key):
        ps = by_lab[labn]
        ours = [p for p in ps if p["impl"] != "peer"]
        if not ours:
            continue
        best = max(ours, key=lambda p: (p["achieved_tflops"], p.get("frac_roof") or 0.0))
        peers = [p for p in ps if p["impl"] == "peer"]
        peer = min(peers, key=lambda q: (q.get("dtype") != best.get("dtype"),
                                         round(abs(math.log2(q["ai"] / best["ai"])), 1), -q["achieved_tflops"])) \
            if peers else None
        bound = "compute" if str(best.get("bound", "")).startswith("compute") else "memory"
        out.append({"lab": labn, "best": best, "peer": peer, "bound": bound})
    return out


def _is_named(p: dict, named: list[dict]) -> bool:
    return any(p is n["best"] or p is n["peer"] for n in named)


def table_rows(placed: list[dict], said: bool = False) -> list[dict]:
    """One table row per placed kernel; said: bound, on_plot and counts in the chosen language (the table printed;
    the English rows give the JSON its on_plot)."""
    named = named_points(placed)
    say_ = say if said else (lambda s: s)
    out = []
    for i, p in enumerate(placed, 1):
        if p["achieved_tflops"] is not None and p["ai"]:
            ach, roof = f"{p['achieved_tflops']:.3g} TFLOP/s", f"{p['roof_tflops']:.3g} TFLOP/s"
        else:
            ach = f"{p['achieved_gbps']:.0f} GB/s" if p["achieved_gbps"] else "-"
            roof = "HBM" if p["achieved_gbps"] else "-"
        on_plot = ("named" if _is_named(p, named) else "point") if on_roofline(p) else \
            ("sweep line" if p.get("sweep") else "right panel")
        on_plot = tr(on_plot) if said else on_plot
        out.append({"n": i, "lab": _short_lab(p["lab"]), "variant": (p["variant"] + (" [peer]" if p["impl"] == "peer"
                                                                                      else ""))[:48],
                    "dtype": p["dtype"], "unit": p["unit"], "ai": p["ai"], "achieved": ach, "roof": roof,
                    "bound": tr(p["bound"]) if said and p["bound"] else p["bound"], "frac_roof": p["frac_roof"],
                    "frac_datasheet_roof": p["frac_datasheet_roof"],
                    "on_plot": on_plot, "counts": "" if p["counts"] == "recorded" else say_(p["counts"])[:40]})
    return out
