"""The course site: assemble its pages from the repository's own files, build it with MkDocs, serve it.

    python -m tools.site build        # build/site_src + build/mkdocs.yml, then `mkdocs build --strict` into site/
    python -m tools.site serve        # the same, then `mkdocs serve` (http://127.0.0.1:8000)
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
copied, and a link to a file the site does not publish (a test, a tool) becomes plain code text.
Korean pages are the *.ko.md twins; the i18n plugin puts a language switch on every page.
"""
from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
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
    pats += ["docs/screenshots/*.png"]
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
def assemble(out: str | None = None) -> dict[str, str]:
    """Write the site's page tree into `out`; return {repository path: site path}."""
    out = out or SRC
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    pages = published()
    asset_set = set(assets())
    lab_titles = {}
    for repo, site in pages.items():
        if repo.endswith("README.md") and "/lab" in f"/{repo}":
            lab_titles[os.path.dirname(repo)] = title_of(open(os.path.join(ROOT, repo), encoding="utf-8").read())
    for repo, site in pages.items():
        dst = os.path.join(out, site)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if repo.endswith(".md"):
            text = open(os.path.join(ROOT, repo), encoding="utf-8").read()
            # a Korean twin's first line records the English version it translates (tools/ko_twins.py): a comment
            # above the title would hide the title from MkDocs (the navigation would say "Index")
            text = re.sub(r"\A<!-- translates \S+ @ [0-9a-f]+ -->\n", "", text)
            text = tag_command_blocks(rewrite_links(text, repo, pages, asset_set))
        else:
            text = source_markdown(repo, lab_titles.get(os.path.dirname(repo), ""))
        with open(dst, "w", encoding="utf-8") as f:
            f.write(text)
    for a in asset_set:
        dst = os.path.join(out, a)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(os.path.join(ROOT, a), dst)
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
    """<src>/../mkdocs.yml: the committed mkdocs.yml, plus where the pages are and the navigation."""
    import json

    src, site = src or SRC, site or SITE
    path = os.path.join(os.path.dirname(src), "mkdocs.yml")
    n = nav(pages)
    ko = {k: v for k, v in SECTION_KO.items()}
    for p in PHASES:
        kp = os.path.join(ROOT, p, "README.ko.md")
        if os.path.exists(kp):
            ko[title_of(open(os.path.join(ROOT, p, "README.md"), encoding="utf-8").read())] = \
                title_of(open(kp, encoding="utf-8").read())
    lines = [f"INHERIT: {os.path.join(ROOT, 'mkdocs.yml')}", f"docs_dir: {src}", f"site_dir: {site}", "nav:"]
    lines += [f"  - {json.dumps(item, ensure_ascii=False)}" for item in n]
    # the Korean section titles (the i18n plugin's nav_translations); JSON is valid YAML
    lines += ["plugins:", "  - search", "  - i18n:", "      docs_structure: suffix", "      fallback_to_default: true",
              "      reconfigure_material: true", "      reconfigure_search: true", "      languages:",
              "        - {locale: en, default: true, name: English, build: true}",
              "        - {locale: ko, name: 한국어, build: true, "
              f"nav_translations: {json.dumps(ko, ensure_ascii=False)}}}"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
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
         ("ko/gpus/", "site_gpus_ko.png")]


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
        pages = assemble(src)
        return mkdocs("serve", "-f", write_config(pages, src, site), "--dev-addr", args.dev_addr,
                      cwd=os.path.dirname(src))
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
