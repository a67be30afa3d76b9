"""Build the course notebooks: every notebooks/phaseN.py (jupytext percent format, the source of truth) becomes
notebooks/phaseN.ipynb (generated, committed, what "Open in Colab" opens).

    python -m notebooks                    # regenerate every .ipynb from its .py
    python -m notebooks --check            # change nothing; exit 1 when an .ipynb is missing or differs from its .py
    python -m notebooks --repo OWNER/NAME  # set the GitHub repository the notebooks name, then build
    python notebooks/build.py [...]        # the same, without the package

The GitHub repository (owner/name) appears in every notebook's "Open in Colab" badge, its links to the course's
pages and the GITHUB_REPO constant of its set-up cell, which Colab clones. Colab cannot tell a notebook where it came
from, so the value is written into the sources: from --repo, else from `git remote get-url origin` when that is a
GitHub address, else it stays as it is (PLACEHOLDER in a fresh checkout, which the badge and the clone cannot use).
--check never rewrites it; it fails when the notebooks disagree on it and only warns about the placeholder.

The generated .ipynb has no outputs and deterministic cell ids (cell-00, cell-01, ...), so building twice gives the
same bytes and the committed file changes only when its .py does.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PLACEHOLDER = "OWNER/REPO"

# the two places the repository is written: the set-up cell's constant and the badge's address
CONSTANT = re.compile(r'^GITHUB_REPO = "([^"]*)"', re.M)
BADGE = re.compile(r"colab\.research\.google\.com/github/([^/\s]+/[^/\s]+)/blob/")
LINK = re.compile(r"https://github\.com/([^/\s]+/[^/\s]+)/blob/")  # links to the course's pages
REMOTE = re.compile(r"github\.com[:/]+([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")


def sources() -> list[Path]:
    """The notebooks' sources, phase1.py .. phase4.py."""
    return sorted(HERE.glob("phase*.py"))


def ipynb_path(py: Path) -> Path:
    return py.with_suffix(".ipynb")


def repos_in(text: str) -> set[str]:
    """Every repository a source names (the constant and the badges)."""
    return set(CONSTANT.findall(text)) | set(BADGE.findall(text)) | set(LINK.findall(text))


def with_repo(text: str, repo: str) -> str:
    """The source with its constant and its badges naming `repo`."""
    text = CONSTANT.sub(f'GITHUB_REPO = "{repo}"', text)
    text = BADGE.sub(f"colab.research.google.com/github/{repo}/blob/", text)
    return LINK.sub(f"https://github.com/{repo}/blob/", text)


def git_remote_repo() -> str | None:
    """owner/name of the checkout's `origin` when it is on GitHub, else None."""
    try:
        url = subprocess.run(["git", "remote", "get-url", "origin"], cwd=ROOT, capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = REMOTE.search(url)
    return m.group(1) if m else None


def to_ipynb(text: str) -> str:
    """The .ipynb text of a percent-format source: no outputs, cell ids numbered in order."""
    import jupytext  # the build's own dependency; imported here so that --help works without it

    nb = jupytext.reads(text, fmt="py:percent")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    out = jupytext.writes(nb, fmt="ipynb")
    return out if out.endswith("\n") else out + "\n"


def main(argv=None) -> int:
    doc = __doc__.split("\n\n")
    ap = argparse.ArgumentParser(prog="python -m notebooks", description=doc[0],
                                 epilog="\n\n".join(doc[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when an .ipynb is stale or missing")
    ap.add_argument("--repo", metavar="OWNER/NAME", help="the GitHub repository of the badges and of the clone "
                                                         "(default: git remote origin when on GitHub)")
    args = ap.parse_args(argv)
    if args.repo is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", args.repo):
        ap.error(f"--repo must be OWNER/NAME, got {args.repo!r}")
    if args.check and args.repo:
        ap.error("--check writes nothing: run --repo without it")

    paths = sources()
    if not paths:
        print(f"notebooks: no phase*.py in {HERE}", file=sys.stderr)
        return 1
    texts = {p: p.read_text(encoding="utf-8") for p in paths}
    named = set().union(*(repos_in(t) for t in texts.values()))
    problems = []

    if not args.check:
        repo = args.repo or git_remote_repo()
        if repo is not None and named != {repo}:
            for p in paths:
                texts[p] = with_repo(texts[p], repo)
                p.write_text(texts[p], encoding="utf-8")
            print(f"notebooks: GitHub repository set to {repo} in {len(paths)} sources")
            named = {repo}
    if len(named) != 1:
        problems.append(f"the sources name {len(named)} GitHub repositories, not one: {sorted(named)} "
                        "(python -m notebooks --repo OWNER/NAME sets them all)")

    for p in paths:
        want = to_ipynb(texts[p])
        nb = ipynb_path(p)
        have = nb.read_text(encoding="utf-8") if nb.exists() else None
        if have == want:
            continue
        if args.check:
            problems.append(f"{nb.relative_to(ROOT)} is {'missing' if have is None else 'stale'}: "
                            f"run python -m notebooks")
        else:
            nb.write_text(want, encoding="utf-8")
            print(f"notebooks: wrote {nb.relative_to(ROOT)}")

    for line in problems:
        print(f"notebooks: {line}", file=sys.stderr)
    if named == {PLACEHOLDER}:
        print(f"notebooks: note: the badges and the Colab clone still name the placeholder {PLACEHOLDER}; "
              "python -m notebooks --repo OWNER/NAME sets the real repository", file=sys.stderr)
    if not problems and args.check:
        print(f"notebooks: {len(paths)} notebooks up to date")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
