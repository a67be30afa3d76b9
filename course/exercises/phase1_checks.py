"""What phase 1's prediction exercises share: the learner's answers file, held to the cases of its starting point (a
checker compares each case with a model, so which cases there are is not the learner's to change), and the words that
say a wrong answer plainly."""
from __future__ import annotations

import os

from common.i18n import tr


def answers(path: str, tag: str, start: str, names: tuple[str, ...]):
    """The learner's answers module, or a Verdict saying why it cannot be checked: it does not load, or one of
    `names` (dicts in the starting point `start`) is missing or has other keys than the starting point's."""
    from course.checks import load_module
    from course.exercise import Verdict

    mod = load_module(path, tag)
    if isinstance(mod, Verdict):
        return mod
    first = load_module(start, tag + "_start")
    for name in names:
        got, want = getattr(mod, name, None), getattr(first, name)
        if not isinstance(got, dict) or set(got) != set(want):
            return Verdict(False, tr("{file} must keep {name} as a dict with the starting point's cases as its keys: "
                                     "{keys}", file=os.path.basename(path), name=name, keys=sorted(want, key=str)))
    return mod


def not_yet(wrong: list[str], total: int, shown: int = 2) -> str:
    """'2 of 5 not yet right: ...; ...' - the first `shown` wrong answers, each with its reason."""
    from course.checks import listed

    return tr("{n} of {total} not yet right: {reasons}", n=len(wrong), total=total, reasons=listed(wrong[:shown]))
