"""What lab 4.1 writes into its JSON in English - where each roof came from, notes, what is missing, where a row's
counts came from - as templates, and say(), which prints or draws such a phrase in the chosen language."""
from __future__ import annotations

import functools
import re
import string

from common.i18n import korean, tr

from .lab import COUNTS_FROM, COUNTS_UNKNOWN


# ---------------------------------------------------------------------------------------------------------------------
# What the lab writes into its JSON in English (sources of the roofs, notes, what is missing, where counts came from),
# made from these templates, and printed or drawn in the chosen language by say()
# ---------------------------------------------------------------------------------------------------------------------
SRC_MEASURED = "measured ({method}, {file})"
SRC_RECORDED = "measured HBM ceiling recorded in {file} (highest of {n} records)"
SRC_THIS_RUN = "measured in this run ({how})"
SRC_CLOCK = "{gpu}'s memory clock x bus width (no datasheet entry)"
SRC_PEER = "measured peer: {what}"
NOTE_FFMA = "FFMA register probe ({variant}, {file}): {tflops} TFLOP/s fp32 - what the CUDA cores reach with no " \
            "memory traffic"
NOTE_NO_DATASHEET = "no datasheet entry for {gpu} in the course's table of GPUs: no datasheet roofs"
NOTE_NO_ROOFS = "no datasheet entry for {gpu} in the course's table of GPUs: no datasheet roofs, and no compute roof " \
                "at all (measure them with --measure)"
MISSING_MINE = "no recorded results of {gpu} in results/{slug}/ yet: only this run's own measurements are placed " \
               "(run the other labs on this GPU, then this one again, to place theirs)"
MISSING_ALL = "no recorded results in results/ at all (and none of {gpu}): nothing to place"
MISSING_COMMITTED = "{gpu} has no recorded results (results/{slug}/): placing the committed results/{committed}/, on " \
                    "the roofs of the GPU they were measured on"
MISSING_FOLDER = "--results: no folder {folder}; nothing recorded to place"
MISSING_ROOFS = "no roofs in the JSON: rebuilt from its rows' HBM ceiling and the datasheet"
MISSING_NOTHING = "nothing placed: no recorded kernel and no k-FMA sweep"
SUMMARY = "{mem} of {placed} placed kernels are memory-bound, {compute} compute-bound. {left} rows left out (sweep " \
          "points, duplicates, rows without counts: see 'left_out' in the JSON)."
TARGET_LOW = "k-FMA sweep, k <= 8 (AI <= 2): worst fraction of the HBM roof"
TARGET_HIGH = "k-FMA sweep, k >= 512 (AI >= 128): worst fraction of the datasheet fp32 peak"
SAID = [NOTE_NO_ROOFS, NOTE_NO_DATASHEET, NOTE_FFMA, SRC_RECORDED, SRC_THIS_RUN, SRC_MEASURED, SRC_CLOCK, SRC_PEER,
        MISSING_MINE, MISSING_ALL, MISSING_COMMITTED, MISSING_FOLDER, SUMMARY, COUNTS_UNKNOWN, COUNTS_FROM]


@functools.lru_cache(maxsize=None)
def _pattern(template: str):
    out, seen = "", set()
    for literal, name, _, _ in string.Formatter().parse(template):
        out += re.escape(literal)
        if name is not None:
            out += f"(?P={name})" if name in seen else f"(?P<{name}>.+?)"
            seen.add(name)
    return re.compile(out, re.S)


def say(text):
    """One of the lab's English phrases (made from a template of SAID, or a fixed one) in the chosen language; the
    pieces of a 'counts' phrase joined by '; ' each on their own."""
    if not korean() or not isinstance(text, str) or not text:
        return text
    if "; " in text and all(_said_by(p) for p in text.split("; ")):
        return "; ".join(say(p) for p in text.split("; "))
    t = _said_by(text)
    if t is None:
        return tr(text)
    return tr(t, **{k: tr(v) for k, v in _pattern(t).fullmatch(text).groupdict().items()})


def _said_by(text: str):
    return next((t for t in SAID if _pattern(t).fullmatch(text)), None)
