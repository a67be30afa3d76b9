"""The course site: assemble its pages from the repository's own files, build it with MkDocs, serve it.

    python -m tools.site build        # build/site_src + build/mkdocs.yml, then `mkdocs build --strict` into site/
    python -m tools.site serve        # the same, then `mkdocs serve` (http://127.0.0.1:8000); a change to a lesson,
                                      # a kernel source or a result re-assembles the page tree and the browser reloads
    python -m tools.site assemble     # only the page tree (what the tests inspect)
    python -m tools.site screenshots  # build, then save pages as PNG in docs/screenshots/ (headless Chromium)
`make site` and `make serve` run the first two. --src-dir / --site-dir put the page tree and the site elsewhere
(the browser test builds into a temporary folder).

Nothing on the site is written for the site: every page is generated from the file a reader of the repository reads
(README.md and README.ko.md, START_HERE.md, the phase guides phaseN/README.md, the lab lessons
phaseN/labNN/README.md, their Korean twins README.ko.md, the exercises), with links rewritten for the site's tree:
README.md becomes the folder's index page, a link to a kernel source (kernels.cu, triton_kernels.py, lab.py,
bench.py) goes to a generated page that shows the file with syntax highlighting and line anchors
(`kernels.cu#softmax_04_online` lands on the line that defines that kernel), images and JSON under results/ are
copied, and a link to a file the site does not publish (a test, a tool) becomes plain code text. Each exercise page
links a page of its starting code (what `python -m course exercise ID --begin` copies to my_work/), in both languages.
Korean pages are the *.ko.md twins; the i18n plugin puts a language switch on every page. Lists are read as GitHub
reads them (mkdocs.yml: mdx_better_lists), a click on a plot opens it full size (glightbox), and SITE_CSS is the
site's own style sheet.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
SRC = os.path.join(BUILD, "site_src")
SITE = os.path.join(ROOT, "site")
PHASES = ["phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"]
README_GPU = "h200"
SOURCE_FILES = ("*.cu", "*.py")      # a lab's kernels and modules, each a page of its own
NOT_SOURCE = ("__init__.py", "__main__.py", "ko.py")     # packaging, the composition root, the Korean catalogue
SECTION_KO = {"Start here": "여기서 시작", "Exercises": "연습 문제", "Results": "측정 결과",
              "What runs on your GPU": "내 GPU에서 실행되는 것"}
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\s+\"[^\"]*\")?\)")


# ---------------------------------------------------------------------------------------------------------------------
# What the site publishes: repository path -> site path
# ---------------------------------------------------------------------------------------------------------------------
def _rel(p: str) -> str:
    return os.path.relpath(p, ROOT).replace(os.sep, "/")


def lab_dirs(phase: str) -> list[str]:
    return sorted(d for d in glob.glob(os.path.join(ROOT, phase, "lab*")) if os.path.isfile(os.path.join(d, "lab.py")))


def source_page(repo_path: str) -> str:
    """kernels.cu -> kernels_cu.md (in the same folder)."""
    d, name = os.path.split(repo_path)
    stem, ext = os.path.splitext(name)
    return f"{d}/{stem}_{ext[1:]}.md" if d else f"{stem}_{ext[1:]}.md"


def published() -> dict[str, str]:
    """{repository path: site path} for every Markdown page and source page the site has (assets are separate)."""
    out = {}
    for name, target in (("README.md", "index.md"), ("README.ko.md", "index.ko.md"),
                         ("START_HERE.md", "start-here.md"), ("START_HERE.ko.md", "start-here.ko.md"),
                         ("GPUS.md", "gpus.md"), ("GPUS.ko.md", "gpus.ko.md")):
        if os.path.exists(os.path.join(ROOT, name)):
            out[name] = target
    folders = list(PHASES) + [_rel(d) for p in PHASES for d in lab_dirs(p)]
    folders += [_rel(d) for d in sorted(glob.glob(os.path.join(ROOT, "course", "exercises", "*")))
                if os.path.isdir(d) and os.path.exists(os.path.join(d, "README.md"))]
    if os.path.exists(os.path.join(ROOT, "course", "exercises", "README.md")):
        folders.append("course/exercises")
    for f in folders:
        for name, target in (("README.md", "index.md"), ("README.ko.md", "index.ko.md")):
            if os.path.exists(os.path.join(ROOT, f, name)):
                out[f"{f}/{name}"] = f"{f}/{target}"
    for p in PHASES:
        for d in lab_dirs(p):
            if not os.path.exists(os.path.join(d, "README.md")):
                continue                                      # a lab without its lesson yet: no source pages
            for pat in SOURCE_FILES:
                for src in sorted(glob.glob(os.path.join(d, pat))):
                    if os.path.basename(src) not in NOT_SOURCE:
                        out[_rel(src)] = source_page(_rel(src))
    for gpu in result_gpus():
        for name, target in (("README.md", "index.md"), ("README.ko.md", "index.ko.md")):
            res = f"results/{gpu}/{name}"
            if os.path.exists(os.path.join(ROOT, res)):
                out[res] = f"results/{gpu}/{target}"
    return out


def result_gpus() -> list[str]:
    """The GPU folders with committed results (the README's GPU first): every one gets its results page."""
    root = os.path.join(ROOT, "results")
    found = [d for d in sorted(os.listdir(root)) if os.path.isfile(os.path.join(root, d, "README.md"))
             and not d.endswith("-quick")] if os.path.isdir(root) else []
    return sorted(found, key=lambda d: (d != README_GPU, d))


def assets() -> list[str]:
    """Files copied as they are: the committed plots and JSON, and the screenshots the docs show."""
    pats = [f"results/{g}/{ext}" for g in result_gpus() for ext in ("*.png", "*.json", "ko/*.png")]
    pats += ["docs/screenshots/*.png", "docs/diagrams/*.png", "docs/diagrams/ko/*.png"]
    return sorted(_rel(p) for pat in pats for p in glob.glob(os.path.join(ROOT, pat)))


# ---------------------------------------------------------------------------------------------------------------------
# Kernel and source pages
# ---------------------------------------------------------------------------------------------------------------------
_PY_DEF = re.compile(r"^(?:def|class)\s+(\w+)")


def definitions(repo_path: str) -> dict[str, int]:
    """{name: 1-based line} of the kernels (CUDA C: __global__ functions, macro-stamped ones at their macro's use)
    and the top-level functions/classes (Python) a lesson may link to."""
    text = open(os.path.join(ROOT, repo_path), encoding="utf-8").read()
    out: dict[str, int] = {}
    lines = text.splitlines()
    if repo_path.endswith(".cu"):
        from common import cuda

        return cuda.kernel_lines(os.path.join(ROOT, repo_path))
    else:
        for i, ln in enumerate(lines, 1):
            m = _PY_DEF.match(ln)
            if m and m.group(1) not in out:
                out[m.group(1)] = i
    return out


def source_markdown(repo_path: str, lab_title: str) -> str:
    lang = "cuda" if repo_path.endswith(".cu") else "python"
    text = open(os.path.join(ROOT, repo_path), encoding="utf-8").read()
    defs = definitions(repo_path)
    name = os.path.basename(repo_path)
    kind = "the kernels" if name.startswith(("kernels", "triton")) else "the functions"
    head = [f"# {name} - {lab_title}", "",
            f"`{repo_path}`, as it is in the repository; line numbers are links. Back to [the lesson](index.md).", ""]
    if defs:
        head += [f"In this file ({kind}, in order):", ""]
        head += [f"- [`{n}`](#__codelineno-0-{line}) (line {line})" for n, line in sorted(defs.items(),
                                                                                          key=lambda kv: kv[1])]
        head.append("")
    fence = "````" if "```" in text else "```"
    return "\n".join(head + [f'{fence}{lang} linenums="1"', text.rstrip("\n"), fence, ""])


def exercise_starts() -> dict[str, tuple[str, str, str]]:
    """{exercise folder: (file name, starting code in English, in Korean)}: what `--begin` copies to my_work/ (stored
    in start/, or made from the solution by the exercise's BREAK/TASK; course/exercise.py)."""
    root = os.path.join(ROOT, "course", "exercises")
    if not os.path.isdir(root):
        return {}
    from course.exercise import all_exercises

    return {_rel(x.folder): (x.file, x.start_text("en"), x.start_text("ko")) for x in all_exercises()
            if os.path.exists(os.path.join(x.folder, "README.md"))}


def start_page(name: str) -> str:
    """add.py -> start_add_py.md (in the exercise's folder)."""
    return "start_" + source_page(name)


def start_markdown(folder: str, name: str, code: str, ko: bool) -> str:
    """The page of an exercise's starting file: the exercise's title, where `--begin` puts it, the code."""
    readme = os.path.join(ROOT, folder, "README.ko.md" if ko and os.path.exists(os.path.join(
        ROOT, folder, "README.ko.md")) else "README.md")
    title = title_of(open(readme, encoding="utf-8").read())
    ex_id = re.search(r"\d+\.\d+\.\d+", title)
    ex_id = ex_id.group(0) if ex_id else "ID"
    lang = "cuda" if name.endswith(".cu") else "python"
    if ko:
        head = [f"# {name} - 시작 코드", "", f"{title}. `python -m course exercise {ex_id} --begin`이 이 파일을 "
                f"`my_work/{ex_id}/{name}`로 복사합니다. 그 사본을 고치고, `python -m course exercise {ex_id}`로 "
                "검사합니다. [과제로 돌아가기](index.md).", ""]
    else:
        head = [f"# {name} - the starting code", "", f"{title}. `python -m course exercise {ex_id} --begin` copies "
                f"this file to `my_work/{ex_id}/{name}`; edit that copy, and check it with "
                f"`python -m course exercise {ex_id}`. Back to [the task](index.md).", ""]
    fence = "````" if "```" in code else "```"
    return "\n".join(head + [f'{fence}{lang} linenums="1"', code.rstrip("\n"), fence, ""])


def link_start_page(text: str, name: str, ko: bool) -> str:
    """An exercise page with a line that links its starting code, after the paragraph under its title."""
    line = (f"**시작 코드**: [{name}]({start_page(name)})" if ko else
            f"**Starting code**: [{name}]({start_page(name)})")
    m = re.search(r"^# .+\n\n(?:.+\n)+", text, re.M)
    if not m:
        return text.rstrip("\n") + f"\n\n{line}\n"
    return text[: m.end()] + f"\n{line}\n" + text[m.end():]


# ---------------------------------------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------------------------------------
def rewrite_links(text: str, repo_path: str, pages: dict[str, str], asset_set: set[str]) -> str:
    """Every relative link of a page re-pointed for the site tree (see the module docstring)."""
    src_dir = os.path.dirname(repo_path)
    site_dir = os.path.dirname(pages[repo_path])
    ko = repo_path.endswith(".ko.md")

    def repl(m):
        label, target, title = m.group(1), m.group(2), m.group(3) or ""
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            return m.group(0)
        path, _, frag = target.partition("#")
        p = os.path.normpath(os.path.join(src_dir, path)).replace(os.sep, "/") if path else repo_path
        if os.path.isdir(os.path.join(ROOT, p)):
            p = f"{p}/README.md"
        twin = p.endswith(".ko.md") != ko and re.sub(r"\.ko\.md$", ".md", p) == re.sub(r"\.ko\.md$", ".md", repo_path)
        if twin or (p.endswith(".ko.md") and not ko) or (ko and p.endswith(".md") and not p.endswith(".ko.md")
                                                        and f"{p[:-3]}.ko.md" in pages and p[:-3] + ".ko.md" ==
                                                        repo_path):
            return label[1:-2] if not label.startswith("!") else ""   # the language switch does this on the site
        if ko and p.endswith("README.md") and f"{p[:-3]}.ko.md" in pages:
            p = f"{p[:-3]}.ko.md"
        if p in pages:
            dest = pages[p]
            if ko and dest.endswith(".ko.md"):
                dest = dest[: -len(".ko.md")] + ".md"           # the i18n plugin links the twin itself
            if frag and p.endswith((".cu", ".py")):
                line = definitions(p).get(frag)
                frag = f"__codelineno-0-{line}" if line else ""
        elif p in asset_set:
            dest = p
        else:
            return f"`{label[1:-2] if not label.startswith('!') else p}`" if not label.startswith("!") \
                else f"`{p}`"
        rel = os.path.relpath(dest, site_dir or ".").replace(os.sep, "/")
        return f"{label}{rel}{'#' + frag if frag else ''}{title})"

    return LINK.sub(repl, text)


_UNTAGGED = re.compile(r"^(```+)[ \t]*\n(.*?)^\1[ \t]*$", re.S | re.M)


def tag_command_blocks(text: str) -> str:
    """A fence without a language whose lines are shell commands (python -m ..., make ..., git ...) becomes a bash
    block, so the site highlights it like the rest of the code; file trees and outputs stay plain text."""
    def repl(m):
        lines = [ln for ln in m.group(2).splitlines() if ln.strip()]
        cmd = lines and all(re.match(r"\s*(python3?|make|git|pip|\.venv/bin/\S+|cd|export|COURSE_\w+=|#)\b", ln)
                            for ln in lines)
        return f"{m.group(1)}bash\n{m.group(2)}{m.group(1)}" if cmd else m.group(0)

    return _UNTAGGED.sub(repl, text)


def title_of(md: str) -> str:
    m = re.search(r"^#\s+(.+)$", md, re.M)
    return m.group(1).strip() if m else ""


# ---------------------------------------------------------------------------------------------------------------------
# Assembly and build
# ---------------------------------------------------------------------------------------------------------------------
SITE_CSS = """\
/* The course site's own style (tools/site.py writes it; mkdocs.yml lists it under extra_css). */

/* The left sidebar's title (the site name, which the header shows already) is sticky; on two lines it covered the
   navigation scrolled under it. On a wide screen it goes; in the narrow-screen drawer it stays. */
@media screen and (min-width: 76.25em) {
  .md-nav--primary > .md-nav__title { display: none; }
}

/* Plots in a table (the home page's key plots, two a row) take the table's full width, not the width of their
   caption; a click opens one full size (glightbox). */
.md-typeset table:not([class]):has(img) { display: table; width: 100%; }
.md-typeset table:not([class]) td:has(img) { width: 50%; vertical-align: top; }
.md-typeset table:not([class]) td img { width: 100%; max-width: 100%; }
.md-typeset a.glightbox img { cursor: zoom-in; }
"""


def page_tree() -> tuple[dict[str, str], dict[str, str | bytes]]:
    """({repository path: site path}, {site path: the file's content}) - everything the site's page tree holds."""
    pages = published()
    asset_set = set(assets())
    starts = exercise_starts()
    files: dict[str, str | bytes] = {}
    lab_titles = {}
    for repo, site in pages.items():
        if repo.endswith("README.md") and "/lab" in f"/{repo}":
            lab_titles[os.path.dirname(repo)] = title_of(open(os.path.join(ROOT, repo), encoding="utf-8").read())
    for repo, site in pages.items():
        if repo.endswith(".md"):
            text = open(os.path.join(ROOT, repo), encoding="utf-8").read()
            # a Korean twin's first line records the English version it translates (tools/ko_twins.py): a comment
            # above the title would hide the title from MkDocs (the navigation would say "Index")
            text = re.sub(r"\A<!-- translates \S+ @ [0-9a-f]+ -->\n", "", text)
            text = tag_command_blocks(rewrite_links(text, repo, pages, asset_set))
            folder = os.path.dirname(repo)
            if folder in starts and os.path.basename(repo) in ("README.md", "README.ko.md"):
                text = link_start_page(text, starts[folder][0], repo.endswith(".ko.md"))   # a site link: after
        else:
            text = source_markdown(repo, lab_titles.get(os.path.dirname(repo), ""))
        files[site] = text
    for folder, (name, en, ko) in starts.items():
        files[f"{folder}/{start_page(name)}"] = start_markdown(folder, name, en, False)
        files[f"{folder}/{start_page(name)[:-3]}.ko.md"] = start_markdown(folder, name, ko, True)
    for a in asset_set:
        files[a] = open(os.path.join(ROOT, a), "rb").read()
    files["assets/course.css"] = SITE_CSS
    return pages, files


def assemble(out: str | None = None) -> dict[str, str]:
    """Write the site's page tree into `out`; return {repository path: site path}. Only files whose content changed
    are written, and files no longer published are removed: `mkdocs serve` watches this folder, and rebuilds for
    what changed."""
    out = out or SRC
    pages, files = page_tree()
    for site, content in files.items():
        dst = os.path.join(out, site)
        data = content.encode("utf-8") if isinstance(content, str) else content
        if os.path.isfile(dst):
            with open(dst, "rb") as f:
                if f.read() == data:
                    continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as f:
            f.write(data)
    keep = {os.path.normpath(os.path.join(out, s)) for s in files}
    for d, dirs, names in os.walk(out, topdown=False):
        for n in names:
            if os.path.normpath(os.path.join(d, n)) not in keep:
                os.remove(os.path.join(d, n))
        if d != out and not os.listdir(d):
            os.rmdir(d)
    return pages


def nav(pages: dict[str, str]) -> list:
    sites = set(pages.values())
    items: list = ["index.md"]
    if "start-here.md" in sites:
        items.append({"Start here": "start-here.md"})
    for p in PHASES:
        sec = [f"{p}/index.md"] if f"{p}/index.md" in sites else []
        sec += [f"{_rel(d)}/index.md" for d in lab_dirs(p) if f"{_rel(d)}/index.md" in sites]
        if sec:
            title = title_of(open(os.path.join(ROOT, p, "README.md"), encoding="utf-8").read()) or p
            items.append({title: sec})
    ex = sorted(s for s in sites if s.startswith("course/exercises/") and s.endswith("/index.md"))
    if ex:
        items.append({"Exercises": sorted(ex, key=lambda s: (s != "course/exercises/index.md", s))})
    if "gpus.md" in sites:
        items.append({"What runs on your GPU": "gpus.md"})
    res = [f"results/{g}/index.md" for g in result_gpus() if f"results/{g}/index.md" in sites]
    if res:
        items.append({"Results": res})
    return items


def write_config(pages: dict[str, str], src: str | None = None, site: str | None = None) -> str:
    """<src>/../mkdocs.yml: the committed mkdocs.yml, plus where the pages are, the navigation, and the Korean
    section titles (the i18n plugin's nav_translations). MkDocs' INHERIT replaces a list as a whole, so the plugins
    are the committed list, copied, with the i18n entry completed."""
    import json

    import yaml

    src, site = src or SRC, site or SITE
    path = os.path.join(os.path.dirname(src), "mkdocs.yml")
    n = nav(pages)
    ko = {k: v for k, v in SECTION_KO.items()}
    for p in PHASES:
        kp = os.path.join(ROOT, p, "README.ko.md")
        if os.path.exists(kp):
            ko[title_of(open(os.path.join(ROOT, p, "README.md"), encoding="utf-8").read())] = \
                title_of(open(kp, encoding="utf-8").read())
    with open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8") as f:
        plugins = yaml.safe_load(f).get("plugins", [])
    for entry in plugins:
        if isinstance(entry, dict) and "i18n" in entry:
            for lang in entry["i18n"].get("languages", []):
                if lang.get("locale") == "ko":
                    lang["nav_translations"] = ko
    lines = [f"INHERIT: {os.path.join(ROOT, 'mkdocs.yml')}", f"docs_dir: {src}", f"site_dir: {site}", "nav:"]
    lines += [f"  - {json.dumps(item, ensure_ascii=False)}" for item in n]
    lines += ["plugins:"] + [f"  - {json.dumps(entry, ensure_ascii=False)}" for entry in plugins]   # JSON is YAML
    text = "\n".join(lines) + "\n"
    if not (os.path.isfile(path) and open(path, encoding="utf-8").read() == text):   # serve reloads on a change
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return path


def build(src: str | None = None, site: str | None = None, quiet: bool = False) -> int:
    """Assemble the pages into `src` and build the site into `site` (mkdocs build --strict); 0 when it built."""
    src, site = src or SRC, site or SITE
    pages = assemble(src)
    cfg = write_config(pages, src, site)
    if not quiet:
        print(f"tools.site: {len(pages)} pages assembled in {os.path.relpath(src, ROOT)}", flush=True)
    return mkdocs("build", "--strict", *(["-q"] if quiet else []), "-f", cfg, cwd=os.path.dirname(src))


SHOTS = [("phase2_cuda/lab07_softmax/", "site_lab_en.png"), ("ko/start-here/", "site_start_here_ko.png"),
         ("ko/phase2_cuda/lab07_softmax/", "site_lab_ko.png"), ("ko/", "site_home_ko.png"),
         ("ko/gpus/", "site_gpus_ko.png"),
         ("phase2_cuda/lab07_softmax/#the-two-numbers", "site_lists_en.png")]   # a list written GitHub-style


def screenshots(site: str, out_dir: str, pages=SHOTS) -> list[str]:
    """Save pages of a built site as PNG, through headless Chromium (tests/site_browser.py drives it)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from site_browser import Browser, serve

    os.makedirs(out_dir, exist_ok=True)
    if shutil.which("fc-list") and not subprocess.run(["fc-list", ":lang=ko"], capture_output=True,
                                                      text=True).stdout.strip():
        print("tools.site: no Korean font installed, so the Korean page will show boxes "
              "(Debian/Ubuntu: apt-get install fonts-noto-cjk)", file=sys.stderr)
    paths = []
    with serve(site) as base, Browser() as b:
        for page, name in pages:
            b.open(base + page)
            paths.append(b.screenshot(os.path.join(out_dir, name)))
    return paths


WATCHED = ("*.md", "mkdocs.yml", "course/exercises/**/*", "results/*/**/*")     # + every phase folder


def source_state() -> dict[str, tuple[float, int]]:
    """{path: (mtime, size)} of every file the page tree is made from: the top-level pages, the phase folders (lessons,
    kernels, modules), the exercises and the results."""
    paths = [p for pat in WATCHED for p in glob.glob(os.path.join(ROOT, pat), recursive=True)]
    paths += [p for ph in PHASES for p in glob.glob(os.path.join(ROOT, ph, "**", "*"), recursive=True)]
    out = {}
    for p in paths:
        if "__pycache__" in p or not os.path.isfile(p):
            continue
        try:
            st = os.stat(p)
        except OSError:          # removed between the listing and the stat
            continue
        out[p] = (st.st_mtime, st.st_size)
    return out


def serve(src: str, site: str, dev_addr: str, poll_s: float = 1.0) -> int:
    """`mkdocs serve` on the page tree, and a loop here that re-assembles it when a source changes: MkDocs watches only
    its docs_dir (build/site_src), which is generated, so a lesson edited in the repository reached the browser only
    after a restart. assemble() rewrites only what changed, so MkDocs rebuilds and the page reloads."""
    pages = assemble(src)
    cfg = write_config(pages, src, site)
    if mkdocs_missing():
        return mkdocs()
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-f", cfg, "--dev-addr", dev_addr],
                            cwd=os.path.dirname(src), env=env)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))     # `kill`: stop the server too (finally, below)
    state = source_state()
    print(f"tools.site: watching {len(state)} source files; an edit re-assembles {os.path.relpath(src, ROOT)}",
          flush=True)
    try:
        while proc.poll() is None:
            try:
                proc.wait(timeout=poll_s)
                break
            except subprocess.TimeoutExpired:
                pass
            now = source_state()
            if now != state:
                changed = sorted(os.path.relpath(p, ROOT) for p in set(now) | set(state) if now.get(p) != state.get(p))
                state = now
                try:
                    write_config(assemble(src), src, site)
                    print(f"tools.site: re-assembled after a change to {', '.join(changed[:3])}"
                          f"{' ...' if len(changed) > 3 else ''}", flush=True)
                except Exception as e:        # a half-saved file: report it, keep serving, retry on the next save
                    print(f"tools.site: could not re-assemble ({type(e).__name__}: {e})", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        if proc.poll() is None:
            proc.terminate()
    return proc.wait()


def mkdocs_missing() -> bool:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        return True
    return False


def mkdocs(*args: str, cwd: str | None = None) -> int:
    try:
        import mkdocs  # noqa: F401
    except ImportError:
        print("tools.site: MkDocs is not installed in this Python; run `make setup` (it installs the docs extra) or "
              "`pip install -e .[docs]`", file=sys.stderr)
        return 2
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    os.makedirs(cwd or BUILD, exist_ok=True)
    return subprocess.call([sys.executable, "-m", "mkdocs", *args], cwd=cwd or BUILD, env=env)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("build", "serve", "assemble", "screenshots"))
    ap.add_argument("--src-dir", default=SRC, help=f"where the page tree goes (default {os.path.relpath(SRC, ROOT)})")
    ap.add_argument("--site-dir", default=SITE, help=f"where the site goes (default {os.path.relpath(SITE, ROOT)})")
    ap.add_argument("--dev-addr", default="127.0.0.1:8000", help="serve: address and port")
    args = ap.parse_args(argv)
    src, site = os.path.abspath(args.src_dir), os.path.abspath(args.site_dir)
    if args.what == "assemble":
        pages = assemble(src)
        write_config(pages, src, site)
        print(f"tools.site: {len(pages)} pages assembled in {src}")
        return 0
    if args.what == "serve":
        return serve(src, site, args.dev_addr)
    rc = build(src, site)
    if rc != 0:
        return rc
    print(f"tools.site: built {site} (open its index.html, or `make serve`)")
    if args.what == "screenshots":
        for p in screenshots(site, os.path.join(ROOT, "docs", "screenshots")):
            print("wrote", os.path.relpath(p, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
