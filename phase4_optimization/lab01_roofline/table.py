"""Lab 4.1's table of placed kernels, and the points its roofline names: each lab's best kernel and its closest
library peer."""
from __future__ import annotations

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
    """The few points the roofline names: per lab, its headline pair - its best kernel and its library peer at the
    lab's headline case, as the READMEs' headline table chooses them (headline.py; analyze() marks the two rows).
    Returns [{lab, best, peer (or None), bound, case, ratio, on_roofline}] in the course's order; every other kernel
    is in the table and the JSON, not on the plot."""
    by_lab: dict = {}
    for p in placed:
        if p.get("headline") in ("ours", "peer"):
            by_lab.setdefault(p["lab"], {})[p["headline"]] = p
    out = []
    for labn in sorted(by_lab, key=_lab_key):
        best, peer = by_lab[labn].get("ours"), by_lab[labn].get("peer")
        if best is None:
            continue
        bound = "compute" if str(best.get("bound", "")).startswith("compute") else "memory"
        out.append({"lab": labn, "best": best, "peer": peer, "bound": bound, "case": best.get("headline_case", ""),
                    "ratio": best.get("headline_ratio"), "on_roofline": on_roofline(best)})
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
        on_plot = ("named" if on_roofline(p) else "listed") if _is_named(p, named) else \
            ("sweep line" if p.get("sweep") else "table only")
        on_plot = tr(on_plot) if said else on_plot
        out.append({"n": i, "lab": _short_lab(p["lab"]), "variant": (p["variant"] + (" [peer]" if p["impl"] == "peer"
                                                                                      else ""))[:48],
                    "dtype": p["dtype"], "unit": p["unit"], "ai": p["ai"], "achieved": ach, "roof": roof,
                    "bound": tr(p["bound"]) if said and p["bound"] else p["bound"], "frac_roof": p["frac_roof"],
                    "frac_datasheet_roof": p["frac_datasheet_roof"],
                    "on_plot": on_plot, "counts": "" if p["counts"] == "recorded" else say_(p["counts"])[:40]})
    return out
