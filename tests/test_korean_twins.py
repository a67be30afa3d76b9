"""Every English page a learner reads has a Korean twin that says the same things: the same headings (count and
levels), the same explicit anchors, the same commands and code, the same links and images, the same figures.

Pages: README.md, START_HERE.md, each phase guide, each lab lesson, each exercise, the exercise index. The twin is
the same name with .ko.md. What is compared ignores the prose (that is the translation) and the generated blocks
(between <!-- NAME:start --> and <!-- NAME:end -->, written by tools/readme_tables.py for both languages).
"""
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def english_pages() -> list[str]:
    pats = ["README.md", "START_HERE.md", "phase*/README.md", "phase*/lab*/README.md", "course/exercises/README.md",
            "course/exercises/ex_*/README.md"]
    return sorted(os.path.relpath(p, ROOT) for pat in pats for p in glob.glob(os.path.join(ROOT, pat)))


PAGES = english_pages()
GENERATED = re.compile(r"<!-- ([\w.-]+):start -->.*?<!-- \1:end -->", re.S)
FENCE = re.compile(r"^[ \t]*(```+|~~~+)[^\n]*\n.*?^[ \t]*\1\s*$", re.S | re.M)   # indented in a list too
INLINE = re.compile(r"`[^`\n]+`")
LINK = re.compile(r"(!?)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# ASCII edges: Korean particles follow numbers
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:[.,]\d+)*(?![A-Za-z0-9_])")


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return GENERATED.sub("", f.read())


def _commands(block: str) -> list[str]:
    """A code block without its comments (a Korean twin may translate the comments of a shell or Python block; the
    commands and the code must be the same)."""
    lines = block.splitlines()
    plain = lines[0].strip("`~ ") == ""             # no language: a file tree or an output listing, whose
    out = []                                        # descriptions after the first column may be translated
    for ln in lines:
        ln = ln.split("  ")[0].rstrip() if plain and ln.strip() else re.sub(r"(^|\s)(#|//).*$", "", ln).rstrip()
        if ln:
            out.append(ln)
    return out


def twin_of(path: str) -> str:
    return path[: -len(".md")] + ".ko.md"


def parts(text: str) -> dict:
    blocks = [b.group(0) for b in FENCE.finditer(text)]
    prose = FENCE.sub("", text)
    heads = [len(m.group(1)) for m in re.finditer(r"^(#{1,6})\s", prose, re.M)]
    anchors = re.findall(r'<a id="([^"]+)"', prose)
    links = [(bang, t) for bang, t in LINK.findall(prose)]
    numbers = set(NUMBER.findall(INLINE.sub("", LINK.sub("", prose))))
    details = prose.count("<details>")
    return {"headings": heads, "anchors": anchors, "code": blocks, "links": links, "numbers": numbers,
            "details": details}


def _norm_link(target: str, page: str) -> str:
    """A link of the Korean page, as the English page would write it (X.ko.md -> X.md)."""
    return re.sub(r"\.ko\.md(?=$|#)", ".md", target)


def test_there_are_pages():
    assert "README.md" in PAGES and "START_HERE.md" in PAGES and len(PAGES) > 20


@pytest.mark.parametrize("page", PAGES)
def test_korean_twin_says_the_same_things(page):
    ko = twin_of(page)
    assert os.path.exists(os.path.join(ROOT, ko)), f"{page} has no Korean twin {ko}"
    en, kr = parts(_read(page)), parts(_read(ko))
    assert kr["headings"] == en["headings"], f"{ko}: heading levels {kr['headings']} != {en['headings']}"
    assert kr["anchors"] == en["anchors"], f"{ko}: anchors differ"
    assert len(kr["code"]) == len(en["code"]), f"{ko}: {len(kr['code'])} code blocks, the English has {len(en['code'])}"
    for a, b in zip(en["code"], kr["code"]):
        assert _commands(a) == _commands(b), f"{ko}: a code block differs from the English one (comments aside):" \
                                             f"\n{a[:300]}\n---\n{b[:300]}"
    own = {os.path.basename(page), os.path.basename(ko)}           # each page links its twin: the language link
    en_links = sorted((bang, "@twin" if t in own else t) for bang, t in en["links"])
    ko_links = sorted((bang, "@twin" if t in own else _norm_link(t, ko)) for bang, t in kr["links"])
    assert ko_links == en_links, (f"{ko}: links differ: only in English {sorted(set(en_links) - set(ko_links))[:5]}, "
                                  f"only in Korean {sorted(set(ko_links) - set(en_links))[:5]}")
    missing = en["numbers"] - kr["numbers"]
    assert not missing, f"{ko}: figures of the English page missing: {sorted(missing)[:12]}"
    assert kr["details"] == en["details"], f"{ko}: folded answers {kr['details']} != {en['details']}"


@pytest.mark.parametrize("page", [p for p in PAGES if os.path.exists(os.path.join(ROOT, twin_of(p)))])
def test_korean_links_point_at_korean_twins_where_they_exist(page):
    ko = twin_of(page)
    base = os.path.dirname(os.path.join(ROOT, ko))
    for bang, t in parts(_read(ko))["links"]:
        path = t.split("#")[0]
        if bang or not path.endswith("README.md") or re.match(r"^[a-z]+:", path):
            continue
        target = os.path.normpath(os.path.join(base, path))
        if target == os.path.join(ROOT, page):
            continue                                          # the page's own English twin (the language link)
        assert not os.path.exists(target[:-3] + ".ko.md"), f"{ko}: links {t}, whose Korean twin exists"


def _list_items(text: str) -> int:
    """List items as Markdown reads them: a bullet line, or a numbered line that starts a list (number 1, or after a
    blank line or another item); '2) ...' wrapped into a paragraph is text, not an item."""
    n, prev_blank, in_list = 0, True, False
    for line in text.splitlines():
        if not line.strip():
            prev_blank, in_list = True, in_list
            continue
        bullet = re.match(r"^\s*[-*+]\s+\S", line)
        num = re.match(r"^\s*(\d+)[.)]\s+\S", line)
        if bullet or (num and (num.group(1) == "1" or prev_blank or in_list)):
            n, in_list = n + 1, True
        elif prev_blank:
            in_list = bool(re.match(r"^\s{2,}\S", line)) and in_list      # an indented continuation stays in the list
        prev_blank = False
    return n


def sections(text: str) -> list[dict]:
    """Per heading-delimited section of a page's prose (no code blocks, no generated blocks): its inline code spans
    (sorted), its list items and its table rows."""
    prose = FENCE.sub("", text)
    out = []
    for sec in re.split(r"^#{1,6}\s.*$", prose, flags=re.M):
        spans = [" ".join(c.split()) for c in re.findall(r"`[^`]+`", sec)]     # a span may wrap to the next line
        out.append({"code": sorted(spans), "items": _list_items(sec),
                    "rows": len(re.findall(r"^\|.*\|\s*$", sec, re.M))})
    return out


@pytest.mark.parametrize("page", PAGES)
def test_korean_twin_has_the_same_code_lists_and_tables_in_each_section(page):
    en, kr = sections(_read(page)), sections(_read(twin_of(page)))
    assert len(en) == len(kr)
    bad = []
    for i, (a, b) in enumerate(zip(en, kr)):
        for what in ("code", "items", "rows"):
            if a[what] != b[what]:
                diff = (f"only in English {sorted(set(a[what]) - set(b[what]))[:4]}, only in Korean "
                        f"{sorted(set(b[what]) - set(a[what]))[:4]}" if what == "code" else f"{a[what]} vs {b[what]}")
                bad.append(f"section {i}: {what} differ ({diff})")
    assert not bad, f"{twin_of(page)}: " + "; ".join(bad[:8])


@pytest.mark.parametrize("page", PAGES)
def test_korean_twin_translates_the_english_page_as_it_is(page):
    """The twin records which version of the English page it translates (tools/ko_twins.py): an English change fails
    here until the twin is updated and stamped (`python -m tools.ko_twins --stamp PAGE`)."""
    from tools import ko_twins

    have, want = ko_twins.recorded(page), ko_twins.fingerprint(page)
    assert have == want, (f"{twin_of(page)} translates {page} @ {have or '(no record)'}, the English page is now "
                          f"@ {want}: update the twin, then python -m tools.ko_twins --stamp {page}")
