"""Korean wherever a learner reads, when they choose it (common/i18n.py): every message the code prints through tr()
has its Korean line with the same {placeholders}; a Korean run of a lab, of a phase runner and of `python -m course`
prints Hangul and no sentence left in English; a plot drawn for Korean uses a font that has Hangul."""
import ast
import glob
import os
import re
import subprocess
import sys

import pytest

from common import i18n
from tests.helpers import needs_setup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = sorted(p for pat in ("common/*.py", "course/**/*.py", "tools/*.py", "phase*/*.py", "phase*/lab*/*.py")
                 for p in glob.glob(os.path.join(ROOT, pat), recursive=True)
                 if not re.fullmatch(r"ko(_\w+)?\.py", os.path.basename(p)))


SAID_BY_HELPERS = ("title", "xlabel", "ylabel", "note", "missing")


def messages() -> dict[str, list[str]]:
    """{english message: [where it is used]} for every tr("...") and plural(n, "...", "...") with literal text."""
    out: dict[str, list[str]] = {}
    for path in SOURCES:
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.id if isinstance(node.func, ast.Name) else \
                node.func.attr if isinstance(node.func, ast.Attribute) else ""
            args = node.args[:1] if name in ("tr", "said") else node.args[1:3] if name == "plural" else []
            # what the table and plot helpers translate themselves: titles, axis labels, notes, column names,
            # progress descriptions
            args += [k.value for k in node.keywords if k.arg in SAID_BY_HELPERS]
            if name == "print_table" and len(node.args) > 1 and isinstance(node.args[1], (ast.List, ast.Tuple)):
                args += node.args[1].elts
            if name == "progress" and len(node.args) > 1:
                args.append(node.args[1])
            for a in args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and re.search(r"[A-Za-z]{2}", a.value):
                    out.setdefault(a.value, []).append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    return out


MESSAGES = messages()


def string_constants() -> set[str]:
    """Every string literal of the sources (a message may reach tr() through a name: a reason, a column, a source)."""
    out = set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(open(path, encoding="utf-8").read(), path)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.add(node.value)
    return out


def test_the_scan_finds_messages():
    assert "correctness failed: not benchmarking" in MESSAGES and len(MESSAGES) > 50


def test_every_message_has_its_korean_line():
    ko = i18n.catalogue()
    missing = [f"{where[0]}: {msg!r}" for msg, where in MESSAGES.items() if msg not in ko]
    assert not missing, f"{len(missing)} messages have no Korean line (add them to the ko.py beside the code):\n" + \
        "\n".join(missing[:40])


def test_korean_lines_fill_the_same_placeholders():
    bad = [f"{en!r}: {sorted(i18n.placeholders(en))} vs {sorted(i18n.placeholders(ko))}"
           for en, ko in i18n.catalogue().items() if i18n.placeholders(en) != i18n.placeholders(ko)]
    assert not bad, "\n".join(bad[:30])


def test_every_korean_line_is_korean_and_used():
    ko = i18n.catalogue()
    not_korean = [en for en, k in ko.items() if k != en and not re.search(r"[가-힣]", k)
                  and re.search(r"[a-z]{3,} [a-z]{3,}", en)]      # (a term kept in Latin script maps to itself)
    assert not not_korean, f"entries whose Korean side has no Hangul: {not_korean[:10]}"
    unused = sorted(set(ko) - set(MESSAGES) - string_constants())
    assert not unused, f"{len(unused)} Korean lines whose English no code holds (remove them): {unused[:15]}"


def test_the_language_is_chosen_by_flag_then_environment(monkeypatch):
    monkeypatch.delenv("COURSE_LANG", raising=False)
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    i18n.set_lang(None)
    assert i18n.lang() == "en"
    monkeypatch.setenv("LANG", "ko_KR.UTF-8")
    assert i18n.lang() == "ko"
    monkeypatch.setenv("COURSE_LANG", "en")
    assert i18n.lang() == "en"
    try:
        i18n.set_lang("ko")
        assert i18n.lang() == "ko" and i18n.tr("wrote {path}", path="x") != "wrote x"
        with pytest.raises(ValueError):
            i18n.set_lang("fr")
    finally:
        i18n.set_lang(None)


# ---------------------------------------------------------------------------------------------------------------------
# Korean runs
# ---------------------------------------------------------------------------------------------------------------------
ENGLISH_RUN = re.compile(r"(?<![\w.`/-])(?:[A-Za-z][a-z]+,? ){3,}[A-Za-z][a-z]+(?![\w`/-])")


def untranslated(text: str, allowed: set[str]) -> list[str]:
    """Lines of `text` that still hold an English sentence: four English words in a row, once the names that stay in
    English are taken out (variants, kernels, library calls, file paths and commands)."""
    out = []
    for line in text.splitlines():
        plain = line
        for name in sorted(allowed, key=len, reverse=True):
            plain = plain.replace(name, " ")
        plain = re.sub(r"\S*[/_.=()\[\]<>:]\S*", " ", plain)          # paths, identifiers, calls, --flags=values
        if ENGLISH_RUN.search(plain):
            out.append(line.strip())
    return out


def names_that_stay(mods) -> set[str]:
    out = {"torch.compile", "cuBLAS", "cuDNN", "Triton", "CUDA C", "NVRTC"}
    for mod in mods:
        for v in getattr(mod, "VARIANTS", []) + getattr(mod, "PEERS", []):
            out.add(v.name)
    return out


def _run(args, env_extra=None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COURSE_LANG": "ko", **(env_extra or {})}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=900)


@pytest.mark.slow
def test_a_lab_runs_in_korean():
    from common import lab

    mod = lab.lab_module("phase2_cuda", "lab07_softmax")
    r = _run(["-m", "phase2_cuda.lab07_softmax", "--quick", "--lang", "ko", "--no-json", "--no-plot"],
             {"COURSE_LANG": "en"})                     # --lang wins over the environment
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert re.search(r"[가-힣]", r.stdout)
    left = untranslated(r.stdout, names_that_stay([mod]))
    assert not left, "English left in the Korean run:\n" + "\n".join(left[:20])


def test_the_exercise_list_is_korean():
    r = _run(["-m", "course", "list"])
    assert r.returncode == 0, r.stderr
    assert re.search(r"[가-힣]", r.stdout) and "README.ko.md" in r.stdout
    left = untranslated(r.stdout, set())
    assert not left, "English left in the Korean list:\n" + "\n".join(left[:20])


def test_a_plot_drawn_for_korean_has_a_font_with_hangul(tmp_path):
    """koreanize-matplotlib's font draws every character of a Korean title (no missing-glyph boxes)."""
    import importlib.util

    if importlib.util.find_spec("koreanize_matplotlib") is None:
        needs_setup("koreanize-matplotlib")
    code = ("from common import i18n, report; i18n.set_lang('ko'); plt = report.pyplot(); "
            "from matplotlib import font_manager as fm; import matplotlib; "
            "f = fm.findfont(matplotlib.rcParams['font.family'][0], fallback_to_default=False); "
            "from matplotlib.ft2font import FT2Font; font = FT2Font(f); "
            "print(f); print(all(font.get_char_index(ord(c)) for c in '대역폭과 한계'))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip().splitlines()[-1] == "True", r.stdout


def test_one_korean_line_for_each_english_message():
    """Catalogues merge into one: a message two files translate differently would read one way or the other
    depending on which file was loaded last."""
    import importlib

    seen, clash = {}, []
    for path in i18n.catalogue_files():
        for en, ko in getattr(importlib.import_module(i18n._module_name(path)), "KO", {}).items():
            if en in seen and seen[en][1] != ko:
                clash.append(f"{en!r}: {seen[en][0]} and {os.path.relpath(path, ROOT)} differ")
            seen.setdefault(en, (os.path.relpath(path, ROOT), ko))
    assert not clash, "\n".join(clash[:20])
