"""The course site, built strictly and opened in a real browser (headless Chromium through Selenium).

The site is built into a temporary folder (tools.site), served on a local port, and these pages are opened in both
languages: the home page, the start-here page and one lab lesson per phase. On each: every image loaded (natural
width > 0), every internal link resolves (and a link to a line of a kernel source lands on an element with that id),
code blocks are highlighted, and the language switch lands on the twin page. Screenshots go to the temporary
folder; `python -m tools.site screenshots` writes the two committed ones (docs/screenshots/).

Without MkDocs, Selenium or Chromium the tests skip with the reason - except where COURSE_REQUIRE_BROWSER=1 (CI sets
it), where a missing piece is a failure.
"""
from __future__ import annotations

import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from site_browser import Browser, browser_missing, serve  # noqa: E402

REQUIRE = os.environ.get("COURSE_REQUIRE_BROWSER") == "1"
LABS = ["phase1_architecture/lab02_vector_add/", "phase2_cuda/lab07_softmax/", "phase3_triton/lab03_fused_softmax/",
        "phase4_optimization/lab06_attention/"]
PAGES = ["", "start-here/"] + LABS


def _skip_or_fail(why: str):
    if REQUIRE:
        pytest.fail(f"COURSE_REQUIRE_BROWSER=1 but {why}")
    pytest.skip(why)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    try:
        import mkdocs  # noqa: F401
        import material  # noqa: F401
    except ImportError:
        _skip_or_fail("MkDocs Material is not installed (`make setup` installs the docs extra)")
    from tools import site

    d = tmp_path_factory.mktemp("site")
    rc = site.build(str(d / "src"), str(d / "site"), quiet=True)
    assert rc == 0, "mkdocs build --strict failed (run `python -m tools.site build` to see why)"
    return d


@pytest.fixture(scope="module")
def browser(built):
    why = browser_missing()
    if why:
        _skip_or_fail(why)
    with serve(str(built / "site")) as base, Browser() as b:
        yield base, b


def test_every_page_of_the_tour_exists(built):
    for lang in ("", "ko/"):
        for page in PAGES:
            assert (built / "site" / lang / page / "index.html").exists(), f"no page {lang}{page}"


_STATUS: dict[str, int] = {}


def _status(url: str) -> int:
    if url not in _STATUS:
        try:
            with urllib.request.urlopen(url, timeout=30) as r:
                _STATUS[url] = r.status
        except urllib.error.HTTPError as e:
            _STATUS[url] = e.code
    return _STATUS[url]


def _html(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as r:
        return r.read().decode("utf-8", "replace")


@pytest.mark.parametrize("lang", ["", "ko/"], ids=["en", "ko"])
@pytest.mark.parametrize("page", PAGES, ids=["home", "start-here"] + [p.split("/")[1] for p in LABS])
def test_page_in_a_real_browser(browser, built, page, lang, tmp_path):
    base, b = browser
    url = base + lang + page
    b.open(url)
    assert b.js("return document.title"), f"{url}: no title"
    b.screenshot(str(tmp_path / "page.png"))

    # every image loaded
    broken = b.js("return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
                  ".map(i => i.getAttribute('src'))")
    assert not broken, f"{url}: images that did not load: {broken}"
    if page in LABS:
        assert b.js("return document.querySelectorAll('.md-content img').length") > 0, f"{url}: a lesson with no plot"

    # code blocks in a language are highlighted (Pygments spans inside .highlight); plain text (a file tree, an
    # output listing) is not; every lesson shows its commands as highlighted shell code
    plain = b.js("return Array.from(document.querySelectorAll('.md-content div.highlight'))"
                 ".filter(d => !/language-(text|plain)/.test(d.className) && d.className.includes('language-'))"
                 ".filter(d => d.querySelectorAll('code span[class]').length === 0).length")
    assert plain == 0, f"{url}: {plain} code block(s) in a language without highlighting"
    if page in LABS:
        lit = b.js("return document.querySelectorAll('.md-content div.highlight code span[class]').length")
        assert lit > 0, f"{url}: a lesson without a highlighted code block"

    # every internal link resolves; a link into a line of a source page finds that line's anchor
    hrefs = set(b.js("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"))
    own = [h for h in hrefs if h.startswith(base)]
    assert own, f"{url}: no internal links at all"
    bad = []
    for h in sorted(own):
        target, _, frag = h.partition("#")
        if _status(target) != 200:
            bad.append(f"{h} -> {_status(target)}")
        elif frag and target != url and frag.startswith("__codelineno"):
            if f'id="{frag}"' not in _html(target):
                bad.append(f"{h}: no element with id {frag}")
    assert not bad, f"{url}: broken internal links:\n" + "\n".join(bad[:20])

    # the language switch lands on the twin page
    twin_lang = "ko" if lang == "" else "en"
    links = b.js("return Array.from(document.querySelectorAll('a.md-select__link'))"
                 ".map(a => [a.getAttribute('hreflang'), a.href])")
    switch = dict(links)
    assert twin_lang in switch, f"{url}: no language switch to {twin_lang} ({links})"
    want = base + ("ko/" if twin_lang == "ko" else "") + page
    assert urllib.parse.urljoin(url, switch[twin_lang]) == want, f"{url}: the switch goes to {switch[twin_lang]}"
    assert _status(want) == 200


def test_a_lesson_links_to_the_line_of_its_kernel(built):
    """The lab 2.7 lesson names its kernels; the source page of kernels.cu anchors each kernel's line."""
    html = (built / "site" / "phase2_cuda" / "lab07_softmax" / "kernels_cu" / "index.html").read_text()
    anchors = re.findall(r'href="#(__codelineno-0-\d+)"', html)
    assert anchors and all(f'id="{a}"' in html for a in anchors)


def test_korean_pages_have_their_titles_in_the_navigation(built):
    """Every page of the built site has its own title in the navigation, in both languages (a Korean twin's record
    of the English version it translates is a comment that must not hide its title: the navigation said 'Index')."""
    seen = {}
    for lang, folder in (("en", built / "site"), ("ko", built / "site" / "ko")):
        page = (folder / "phase2_cuda" / "lab07_softmax" / "index.html").read_text(encoding="utf-8")
        nav = re.findall(r'class="md-nav__link[^"]*"[^>]*>\s*(?:<span[^>]*>)?\s*([^<]+?)\s*<', page)
        seen[lang] = nav
        assert nav and sum(t.strip() == "Index" for t in nav) == 0, f"{lang}: {nav[:12]}"
    assert any("Lab 2.7" in t for t in seen["ko"])
