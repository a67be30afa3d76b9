"""The course site, built strictly and opened in a real browser (headless Chromium through Selenium).

The site is built into a temporary folder (tools.site), served on a local port, and these pages are opened in both
languages: the home page, the start-here page and one lab lesson per phase. On each: every image loaded (natural
width > 0), every internal link resolves (and a link to a line of a kernel source lands on an element with that id),
code blocks are highlighted, plots are at least 250 px wide and open full size on a click, the sidebar's title does
not cover the navigation, and the language switch lands on the twin page. Screenshots go to the temporary folder;
`python -m tools.site screenshots` writes the committed ones (docs/screenshots/).

Without a browser, the built HTML of every page, English and Korean, is read: no list may be left inside a paragraph
as text (a "- " line: Python-Markdown without mdx_better_lists needs a blank line before a list and 4-space nesting,
GitHub neither), START_HERE's first list has its five items, and each exercise page links its starting code.

Without MkDocs, Selenium or Chromium the tests skip with the reason - except where COURSE_REQUIRE_BROWSER=1 (CI sets
it), where a missing piece is a failure.
"""
from __future__ import annotations

import html.parser
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

from tests.helpers import skip_or_fail  # noqa: E402

# one worker builds the site for every test here (`make test` runs --dist loadgroup; each worker would build its own)
pytestmark = pytest.mark.xdist_group("site")

LABS = ["phase1_architecture/lab02_vector_add/", "phase2_cuda/lab07_softmax/", "phase3_triton/lab03_fused_softmax/",
        "phase4_optimization/lab06_attention/"]
PAGES = ["", "start-here/"] + LABS


def _skip_or_fail(why: str):
    skip_or_fail(why, required_by="COURSE_REQUIRE_BROWSER")


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

    # plots are not tiny (the home page's key plots, two a row in a table, took their caption's width), a click opens
    # one full size (glightbox), and the sidebar's sticky title, which covered the navigation scrolled under it, is
    # not shown on a wide screen
    widths = b.js("return Array.from(document.querySelectorAll('.md-content img')).map(i => i.clientWidth)")
    assert all(w >= 250 for w in widths), f"{url}: plots shown smaller than 250 px wide: {widths}"
    boxed = b.js("return Array.from(document.querySelectorAll('.md-content img'))"
                 ".filter(i => !i.closest('a.glightbox')).map(i => i.getAttribute('src'))")
    assert not boxed, f"{url}: images a click does not enlarge: {boxed}"
    title = b.js("const t = document.querySelector('.md-nav--primary > .md-nav__title');"
                 "return t ? getComputedStyle(t).display : 'none'")
    assert title == "none", f"{url}: the sidebar's sticky title is shown ({title})"

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


# ---------------------------------------------------------------------------------------------------------------------
# Lists render as lists (GitHub starts a list without a blank line before it and nests at 2-3 spaces; plain
# Python-Markdown does neither, and the list became one paragraph: "...one thing: - small n (left): ... - middle: ...")
# ---------------------------------------------------------------------------------------------------------------------
_MARKER = re.compile(r"^\s*(?:[-*+]|1\.)\s")


class _Paragraphs(html.parser.HTMLParser):
    """The text of every <p> of a page (markup dropped, line breaks kept), and the direct <li> count of the first
    list of the page's article."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[str] = []
        self._p: list[str] | None = None
        self._in_article = 0
        self._lists: list[int] = []          # open lists: their direct <li> count so far
        self.first_list_items: int | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "p":
            self._p = []
        elif tag == "article":
            self._in_article += 1
        elif tag in ("ul", "ol") and self._in_article:
            self._lists.append(0)
        elif tag == "li" and self._lists:
            self._lists[-1] += 1

    def handle_endtag(self, tag):
        if tag == "p" and self._p is not None:
            self.paragraphs.append("".join(self._p))
            self._p = None
        elif tag == "article":
            self._in_article -= 1
        elif tag in ("ul", "ol") and self._lists:
            n = self._lists.pop()
            if not self._lists and self.first_list_items is None:
                self.first_list_items = n

    def handle_data(self, data):
        if self._p is not None:
            self._p.append(data)


def parse_page(path) -> _Paragraphs:
    p = _Paragraphs()
    p.feed(path.read_text(encoding="utf-8"))
    p.close()
    return p


def collapsed_lists(site) -> list[str]:
    """'page: line' for every paragraph of the built site that holds a line starting with a list marker ("- ", "* ",
    "+ ", "1. "): a Markdown list the converter did not see, printed as text inside a paragraph."""
    bad = []
    for page in sorted(site.rglob("*.html")):
        for para in parse_page(page).paragraphs:
            for line in para.splitlines():
                if _MARKER.match(line):
                    bad.append(f"{page.relative_to(site)}: {line.strip()[:100]}")
    return bad


def test_lists_render_as_lists_on_every_page(built):
    """No page, English or Korean, has a list collapsed into a paragraph."""
    site = built / "site"
    assert (site / "ko" / "index.html").exists()
    bad = collapsed_lists(site)
    assert not bad, f"{len(bad)} list line(s) printed inside a paragraph:\n" + "\n".join(bad[:30])


def test_the_first_list_of_start_here_has_its_five_items(built):
    """START_HERE's first list (what the lab 1.2 output shows, top to bottom) is five items, in both languages; the
    compile report's columns are a list nested in the third."""
    for lang in ("", "ko/"):
        n = parse_page(built / "site" / lang / "start-here" / "index.html").first_list_items
        assert n == 5, f"{lang}start-here: the first list has {n} items, not 5"


def test_exercise_pages_link_their_starting_code(built):
    """Each exercise page links a page of the code `--begin` starts the learner with, in both languages; that page
    shows the code (line-numbered) and the Korean one the Korean comments."""
    pages = sorted((built / "site" / "course" / "exercises").glob("ex_*/index.html"))
    assert len(pages) >= 20
    for page in pages:
        folder = page.parent.relative_to(built / "site")
        for lang in ("", "ko/"):
            html = (built / "site" / lang / folder / "index.html").read_text(encoding="utf-8")
            links = re.findall(r'href="(start_\w+)/"', html)
            assert links, f"{lang}{folder}: no link to its starting code"
            start = (built / "site" / lang / folder / links[0] / "index.html").read_text(encoding="utf-8")
            assert "__codelineno-0-1" in start and "--begin" in start, f"{lang}{folder}/{links[0]}: no code"
    ko = (built / "site" / "ko" / "course" / "exercises" / "ex_1_2_1_vector_add_tail" / "start_add_py" /
          "index.html").read_text(encoding="utf-8")
    assert "시작 코드" in ko
