"""`python -m course exercise ID --hint`: every exercise has one to three graduated hints (HINTS in its exercise.py),
each with its Korean line, none holding a line of the solution's code; `--hint` walks them in order, remembering how
many were shown in the progress file, and then names `--solution`; `--hint N` shows hint N."""
import glob
import io
import json
import os
import re
import tokenize

import pytest

from common import i18n
from course import __main__ as cli
from course.exercise import all_exercises

EXS = all_exercises()
IDS = [x.id for x in EXS]
# four English words in a row, once paths, identifiers, calls and flags are out (as tests/test_course_korean.py reads)
ENGLISH_RUN = re.compile(r"(?<![\w.`/-])(?:[A-Za-z][a-z]+,? ){3,}[A-Za-z][a-z]+(?![\w`/-])")
SHORTEST = 10          # a normalized code line shorter than this ("}", "return acc") says nothing about a hint


def english_left(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if ENGLISH_RUN.search(re.sub(r"\S*[/_.=()\[\]<>:`]\S*", " ", line))]


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _python_code_lines(text: str) -> list[str]:
    """The lines of a .py file with its docstrings and comments taken out."""
    lines = text.splitlines()
    drop, cut = set(), {}
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for i, t in enumerate(toks):
        if t.type == tokenize.COMMENT:
            cut[t.start[0]] = min(cut.get(t.start[0], len(lines[t.start[0] - 1])), t.start[1])
        elif t.type == tokenize.STRING and t.string.startswith(('"""', "'''")):
            before = next((p for p in reversed(toks[:i]) if p.type not in (tokenize.NL, tokenize.COMMENT)), None)
            if before is None or before.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                drop.update(range(t.start[0], t.end[0] + 1))
    return [line[:cut.get(n, len(line))] for n, line in enumerate(lines, 1) if n not in drop]


def _cuda_code_lines(text: str) -> list[str]:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return [line.split("//", 1)[0] for line in text.splitlines()]


def solution_code(x) -> set[str]:
    """The normalized (no whitespace) code lines of every solution file of `x`, English and Korean."""
    out = set()
    for path in glob.glob(os.path.join(x.folder, "solution*", "*")):
        text = open(path, encoding="utf-8").read()
        lines = _python_code_lines(text) if path.endswith(".py") else _cuda_code_lines(text)
        out.update(n for n in map(_norm, lines) if len(n) >= SHORTEST)
    return out


@pytest.fixture
def progress(tmp_path, monkeypatch):
    """The progress file in a temporary my_work/, never the learner's."""
    work = tmp_path / "my_work"
    monkeypatch.setattr(cli, "WORK", str(work))
    monkeypatch.setattr(cli, "PROGRESS", str(work / ".progress.json"))
    yield work / ".progress.json"
    i18n.set_lang(None)


def run(capsys, *args) -> str:
    assert cli.main(["exercise", *args]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("ex_id", IDS)
def test_every_exercise_has_one_to_three_hints_each_in_korean(ex_id):
    x = next(e for e in EXS if e.id == ex_id)
    hints = getattr(x.module, "HINTS", [])
    assert 1 <= len(hints) <= 3, f"exercise {ex_id}: {len(hints)} hints (HINTS in its exercise.py)"
    ko = i18n.catalogue()
    for h in hints:
        assert isinstance(h, str) and h.strip() and h in ko, f"exercise {ex_id}: no Korean line for {h[:60]!r}"
        assert not i18n.placeholders(h), f"exercise {ex_id}: a hint is printed as written, no {{placeholders}}"
        assert re.search(r"[가-힣]", ko[h]) and not english_left(ko[h]), f"{ex_id}: {ko[h][:80]!r}"
    assert len(set(hints)) == len(hints)


@pytest.mark.parametrize("ex_id", IDS)
def test_no_hint_holds_a_line_of_the_solution(ex_id):
    x = next(e for e in EXS if e.id == ex_id)
    code = solution_code(x)
    assert code, f"exercise {ex_id}: no code read from its solution"
    ko = i18n.catalogue()
    for h in x.module.HINTS:
        for text in (h, ko[h]):
            given = [line for line in code if line in _norm(text)]
            assert not given, f"exercise {ex_id}: a hint gives the solution's code {given}: {text[:80]!r}"


def test_the_scan_finds_a_solution_line():
    """The check above would see a hint that quoted the solution."""
    x = next(e for e in EXS if e.id == "3.4.1")
    assert "var=tl.sum(xc*xc,axis=0)/n_cols" in solution_code(x)
    assert not any("thepopulation" in line for line in solution_code(x))       # comments and docstrings are out


def test_hint_walks_one_two_three_then_names_the_solution(capsys, progress):
    hints = next(e for e in EXS if e.id == "1.2.1").module.HINTS
    for k in (1, 2, 3):
        out = run(capsys, "1.2.1", "--hint")
        assert f"hint {k} of 3 for 1.2.1" in out and " ".join(out.split()).count(hints[k - 1]) == 1, out
        assert json.loads(progress.read_text())["hints"] == {"1.2.1": k}
    assert "--solution" in out and "last hint" in out
    out = run(capsys, "1.2.1", "--hint")
    assert "no hints left" in out and "python -m course exercise 1.2.1 --solution" in out
    assert json.loads(progress.read_text())["hints"] == {"1.2.1": 3}


def test_hint_n_shows_that_hint_and_the_others_keep_their_count(capsys, progress):
    hints = next(e for e in EXS if e.id == "2.6.1").module.HINTS
    out = run(capsys, "2.6.1", "--hint", "2")
    assert "hint 2 of 3" in out and hints[1] in " ".join(out.split())
    assert json.loads(progress.read_text())["hints"] == {"2.6.1": 2}
    assert "hint 3 of 3" in run(capsys, "2.6.1", "--hint")
    assert "hint 1 of 3" in run(capsys, "2.6.1", "--hint", "1")          # looking back forgets nothing
    assert json.loads(progress.read_text())["hints"] == {"2.6.1": 3}
    assert "hint 1 of 3 for 1.2.1" in run(capsys, "1.2.1", "--hint")      # each exercise counts its own


def test_the_verdicts_and_the_hint_counts_share_the_file(capsys, progress):
    progress.parent.mkdir()
    progress.write_text(json.dumps({"1.2.1": "tried"}))
    run(capsys, "1.2.1", "--hint")
    assert json.loads(progress.read_text()) == {"1.2.1": "tried", "hints": {"1.2.1": 1}}
    assert cli._progress().get("1.2.1") == "tried"


@pytest.mark.parametrize("bad", ["9", "0", "two"])
def test_a_hint_number_out_of_range_is_a_usage_error(capsys, progress, bad):
    with pytest.raises(SystemExit) as e:
        cli.main(["exercise", "1.2.1", "--hint", bad])
    assert e.value.code == 2
    assert "--hint N" in capsys.readouterr().err
    assert not progress.exists()


def test_hint_and_solution_do_not_go_together(capsys, progress):
    with pytest.raises(SystemExit) as e:
        cli.main(["exercise", "1.2.1", "--hint", "--solution"])
    assert e.value.code == 2


@pytest.mark.parametrize("ex_id", IDS)
def test_the_hints_in_korean_hold_no_english_sentence(capsys, progress, ex_id):
    hints = next(e for e in EXS if e.id == ex_id).module.HINTS
    for k in range(1, len(hints) + 2):
        out = run(capsys, ex_id, "--hint", "--lang", "ko")
        assert re.search(r"[가-힣]", out) and not english_left(out), out
        assert not any(h[:40] in out for h in hints), out
    assert "--solution" in out


def test_the_help_names_hint_in_both_languages(capsys):
    for lang, word in (("en", "the next hint"), ("ko", "다음 힌트")):
        with pytest.raises(SystemExit):
            cli.main(["--help", "--lang", lang])
        assert "--hint" in capsys.readouterr().out
        with pytest.raises(SystemExit):
            cli.main(["exercise", "--help", "--lang", lang])
        assert word in capsys.readouterr().out
    i18n.set_lang(None)
