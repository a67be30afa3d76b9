"""The Korean pages follow the glossary and style guide (docs/GLOSSARY.ko.md): its forms, its headings, and Korean
sentence shape (no semicolons after Hangul, no particle cut off after a dash, at the start of a line or after a
space). The tables of the guide are read here, so the guide and the check cannot disagree."""
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUIDE = os.path.join(ROOT, "docs", "GLOSSARY.ko.md")
GENERATED = re.compile(r"<!-- ([\w.-]+):start -->.*?<!-- \1:end -->", re.S)
FENCE = re.compile(r"^[ \t]*(```+|~~~+)[^\n]*\n.*?^[ \t]*\1\s*$", re.S | re.M)   # indented in a list too
INLINE = re.compile(r"`[^`\n]+`")
LINK_TARGET = re.compile(r"\]\([^)]*\)")
HTML = re.compile(r"<[^>\n]+>")
PARTICLE = r"(?:은|는|이|가|을|를|과|와|의|에|에서|으로|로|도|만|까지|부터)"
RULES = [
    ("a semicolon after Hangul (split the sentence)", re.compile(r"[가-힣];")),
    ("a particle cut off after a dash", re.compile(r"(?:^|\s)-\s+" + PARTICLE + r"(?=[\s,.)]|$)")),
    ("a line that starts with a particle", re.compile(r"^\s*(?:은|는|을|를|과|와|의|에서|으로|로|가)(?=[\s,.])")),
    ("a particle written apart from its word",
     re.compile(r"[A-Za-z0-9^`)\]] (?:은|는|을|를|과|와|의|에서|으로|로)(?=[\s,.)]|$)")),
]


def _table(text: str, heading: str) -> list[list[str]]:
    """The rows of the first Markdown table under `## heading` (cells stripped; header and rule rows dropped)."""
    part = text.split(f"## {heading}\n", 1)[1]
    rows = []
    for line in part.splitlines():
        if line.startswith("## "):
            break
        if line.startswith("|") and not re.match(r"^\|[-| ]+\|$", line):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows[1:]


def guide() -> tuple[dict, dict]:
    """(forbidden form -> the form to use, English heading -> Korean heading) from the guide's two tables."""
    text = open(GUIDE, encoding="utf-8").read()
    forbidden = {}
    for english, use, avoid, _example in _table(text, "용어"):
        for form in (f.strip() for f in avoid.split(",")):
            if form:
                forbidden[form] = f"{use} ({english})"
    headings = {en: ko for en, ko in _table(text, "제목")}
    return forbidden, headings


def korean_pages() -> list[str]:
    pats = ["*.ko.md", "phase*/README.ko.md", "phase*/lab*/README.ko.md", "course/exercises/README.ko.md",
            "course/exercises/ex_*/README.ko.md", "results/*/README.ko.md"]
    return sorted({os.path.relpath(p, ROOT) for pat in pats for p in glob.glob(os.path.join(ROOT, pat))})


PAGES = korean_pages()
FORBIDDEN, HEADINGS = guide()


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of the prose a reader reads: no code blocks, inline code, link targets or HTML comments;
    generated blocks included (they are Korean on a Korean page too)."""
    def blank(m):
        return "\n" * m.group(0).count("\n")

    text = FENCE.sub(blank, text)
    text = re.sub(r"<!--.*?-->", blank, text, flags=re.S)
    out = []
    for i, line in enumerate(text.splitlines(), 1):
        line = HTML.sub(" ", LINK_TARGET.sub("]", INLINE.sub("CODE", line)))
        if line.strip():
            out.append((i, line))
    return out


def test_the_guide_has_its_tables():
    assert {"두 개의 숫자", "손잡이", "서류상", "꼬리"} <= set(FORBIDDEN)
    assert HEADINGS["You will learn"] == "배우는 것" and len(HEADINGS) >= 10


def test_the_rules_catch_what_they_should():
    bad = ["빠릅니다; 그러나", "행 하나 - 가 기본값", "(커널의 설정값)\n를 바꿉니다", "ahead-of-time 으로 컴파일",
           "8192^3 에서 잽니다", "`x` 를 보면"]
    good = ["빠릅니다. 그러나", "행 하나(기본값)가", "이 커널은", "sm_90 이상", "`x`를 보면"]
    for s in bad:
        assert any(p.search(ln) for _, p in RULES for _, ln in prose_lines(s)), s
    for s in good:
        assert not any(p.search(ln) for _, p in RULES for ln in prose_lines(s) for ln in [ln[1]]), s


@pytest.mark.parametrize("page", [p for p in PAGES if not p.endswith("GLOSSARY.ko.md")])
def test_korean_page_follows_the_guide(page):
    text = open(os.path.join(ROOT, page), encoding="utf-8").read()
    found = []
    for n, line in prose_lines(text):
        for what, pat in RULES:
            if pat.search(line):
                found.append(f"{page}:{n}: {what}: {line.strip()[:100]}")
        for form, use in FORBIDDEN.items():
            pat = rf"(?<![A-Za-z]){re.escape(form)}(?![A-Za-z])" if form.isascii() else re.escape(form)
            if re.search(pat, line, re.I if form.isascii() else 0):
                found.append(f"{page}:{n}: '{form}': write {use}: {line.strip()[:100]}")
    assert not found, "\n".join(found[:40]) + (f"\n... and {len(found) - 40} more" if len(found) > 40 else "")


def _headings(text: str) -> list[tuple[int, str]]:
    text = FENCE.sub("", GENERATED.sub("", text))
    return [(len(m.group(1)), m.group(2).strip()) for m in re.finditer(r"^(#{1,6})\s+(.+)$", text, re.M)]


@pytest.mark.parametrize("page", [p for p in PAGES if os.path.exists(os.path.join(ROOT, p.replace(".ko.md", ".md")))])
def test_one_korean_heading_for_each_english_heading(page):
    en = _headings(open(os.path.join(ROOT, page.replace(".ko.md", ".md")), encoding="utf-8").read())
    ko = _headings(open(os.path.join(ROOT, page), encoding="utf-8").read())
    wrong = [f"'{e}' must read '{HEADINGS[e]}', not '{k}'" for (_, e), (_, k) in zip(en, ko)
             if e in HEADINGS and k != HEADINGS[e]]
    assert not wrong, f"{page}: " + "; ".join(wrong)
