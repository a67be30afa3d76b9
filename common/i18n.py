"""English or Korean: what the course prints, in the language the learner chose.

Korean is chosen by `--lang ko` (every lab, every phase runner, `python -m course`), by COURSE_LANG=ko, or by a Korean
locale (LC_ALL, LC_MESSAGES or LANG starting with "ko"); English otherwise (`--lang en` wins over the environment).

    from common.i18n import tr
    print(tr("correctness failed: not benchmarking"))
    print(tr("{n} cases, worst rel err {err:.1e}", n=3, err=1e-5))

The English text is the key, so the English output reads exactly as written. The Korean catalogues are plain dicts,
KO = {english: korean}, in a file ko.py beside the code that prints: common/ko.py for the shared driver, each lab's
own ko.py, course/ko.py for the exercises. A message that no catalogue has prints in English; tests/test_i18n.py
fails on it (every tr("...") of the sources must have its Korean line, with the same {placeholders}).
Plots drawn for Korean use a Korean font (koreanize-matplotlib, installed by `make setup`), never boxes.
"""
from __future__ import annotations

import functools
import glob
import importlib
import os
import string

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LANGS = ("en", "ko")
_CHOSEN: str | None = None


def set_lang(lang: str | None) -> None:
    """The language of this process's output ('en', 'ko'), or None to follow the environment."""
    global _CHOSEN
    if lang is not None and lang not in LANGS:
        raise ValueError(f"lang: expected one of {', '.join(LANGS)}, got {lang!r}")
    _CHOSEN = lang


def _from_argv() -> str | None:
    """--lang of this process's command line, read before argparse has run (a parser's own help text is in the
    chosen language too)."""
    import sys

    argv = sys.argv[1:]
    for i, a in enumerate(argv):
        if a == "--lang" and i + 1 < len(argv) and argv[i + 1] in LANGS:
            return argv[i + 1]
        if a.startswith("--lang=") and a.split("=", 1)[1] in LANGS:
            return a.split("=", 1)[1]
    return None


def lang() -> str:
    """'ko' or 'en': --lang, else COURSE_LANG, else the locale."""
    if _CHOSEN:
        return _CHOSEN
    chosen = _from_argv()
    if chosen:
        return chosen
    env = os.environ.get("COURSE_LANG", "").strip().lower()
    if env in LANGS:
        return env
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        v = os.environ.get(var, "")
        if v:
            return "ko" if v.lower().startswith("ko") else "en"
    return "en"


def korean() -> bool:
    return lang() == "ko"


def catalogue_files() -> list[str]:
    """Every Korean catalogue of the course: common/ko.py, course/ko.py (and its ko_phase*.py, one a phase's
    exercises), tools/ko.py and each lab's ko.py."""
    pats = ["common/ko.py", "course/ko.py", "course/ko_*.py", "tools/ko.py", "phase*/ko.py", "phase*/lab*/ko.py"]
    return sorted(p for pat in pats for p in glob.glob(os.path.join(ROOT, pat)))


def _module_name(path: str) -> str:
    return os.path.relpath(path, ROOT)[: -len(".py")].replace(os.sep, ".")


@functools.lru_cache(maxsize=None)
def catalogue() -> dict[str, str]:
    """All Korean catalogues merged: {english: korean}."""
    out: dict[str, str] = {}
    for path in catalogue_files():
        mod = importlib.import_module(_module_name(path))
        out.update(getattr(mod, "KO", {}))
    return out


class Said(str):
    """An English sentence made now and shown later (a reason stored in a result, a note of a computation): it reads
    as the English text, and tr() turns it into the chosen language from the template and values it remembers."""

    template: str
    values: dict

    def __new__(cls, template: str, values: dict):
        obj = super().__new__(cls, template.format(**values) if values else template)
        obj.template, obj.values = template, dict(values)
        return obj


def said(template: str, /, **values) -> Said:
    """The English text now (a str), translatable later: tr(said("needs {arch}", arch=a)) is Korean in Korean runs."""
    return Said(template, values)


def tr(text: str, /, **values) -> str:
    """`text` in the chosen language, with its {placeholders} filled from `values` (str.format rules). A Said (said())
    is translated from its own template and values."""
    if isinstance(text, Said) and not values:
        text, values = text.template, text.values
    if korean():
        text = catalogue().get(text, text)
    return text.format(**values) if values else text


def in_english(fn, *args, **kw):
    """fn(*args, **kw) with every tr() in English: what a results JSON keeps (tools/readme_tables.py reads it)."""
    if not korean():
        return fn(*args, **kw)
    set_lang("en")
    try:
        return fn(*args, **kw)
    finally:
        set_lang("ko")


def yes_no(met: bool | None):
    """A verdict as printed: True / False (the JSON, and English), 예 / 아니오 in a Korean printout; None (not
    measured) stays None."""
    return (tr("yes") if met else tr("no")) if korean() and met is not None else met


def placeholders(text: str) -> set[str]:
    """The {names} a message fills ('{n} cases, {err:.1e}' -> {'n', 'err'})."""
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def plural(n: int, one: str, many: str) -> str:
    """English needs a plural; Korean does not ('1 case' / '3 cases', '케이스 3개'): pass both English forms."""
    return tr(one if n == 1 else many, n=n)


def matplotlib_fonts() -> None:
    """Make the next plots able to draw Hangul when the output is Korean: koreanize-matplotlib registers a Korean font
    (Nanum Gothic) and selects it. Without it, a one-line warning and the default font (Latin labels stay right)."""
    if not korean():
        return
    try:
        importlib.import_module("koreanize_matplotlib")
        import matplotlib

        matplotlib.rcParams["axes.unicode_minus"] = False     # Nanum Gothic has no U+2212: draw '-' for minus
    except ImportError:
        import warnings

        warnings.warn("koreanize-matplotlib is not installed (make setup installs it): Korean plot labels would draw "
                      "as boxes; pip install koreanize-matplotlib")
