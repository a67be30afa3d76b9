"""Which version of its English page each Korean twin translates, and which twins are behind.

    python -m tools.ko_twins               # list the Korean twins whose English page changed since they were translated
    python -m tools.ko_twins --stamp PAGE  # after updating PAGE's Korean twin: record that it translates PAGE as it is
    python -m tools.ko_twins --stamp-all   # record every twin as current (only when every twin was checked)

Each Korean page (X.ko.md) carries, on its first line, a comment naming the English page's fingerprint:
`<!-- translates README.md @ 1a2b3c4d5e6f -->`. The fingerprint is a hash of the English page without its generated
blocks (results change them, not a writer), so any change a writer makes to the English page makes the twin stale,
and tests/test_korean_twins.py fails until the twin is updated and stamped again. Exit status 1 when a twin is stale
(without --stamp).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = re.compile(r"<!-- ([\w.-]+):start -->.*?<!-- \1:end -->", re.S)
RECORD = re.compile(r"^<!-- translates (\S+) @ ([0-9a-f]{12}) -->\n")
PATTERNS = ["README.md", "START_HERE.md", "phase*/README.md", "phase*/lab*/README.md", "course/exercises/README.md",
            "course/exercises/ex_*/README.md"]


def english_pages() -> list[str]:
    return sorted(os.path.relpath(p, ROOT) for pat in PATTERNS for p in glob.glob(os.path.join(ROOT, pat)))


def twin_of(page: str) -> str:
    return page[: -len(".md")] + ".ko.md"


def fingerprint(page: str) -> str:
    """The hash of an English page as a writer wrote it: generated blocks emptied, trailing spaces ignored."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        text = GENERATED.sub(lambda m: m.group(0).split("\n", 1)[0], f.read())
    text = "\n".join(ln.rstrip() for ln in text.splitlines())
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def recorded(page: str) -> str | None:
    """The fingerprint the Korean twin of `page` says it translates, or None when it records none."""
    path = os.path.join(ROOT, twin_of(page))
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        m = RECORD.match(f.read(200))
    return m.group(2) if m and m.group(1) == os.path.basename(page) else None


def stale() -> list[str]:
    """English pages whose Korean twin records another fingerprint (or none)."""
    return [p for p in english_pages() if os.path.exists(os.path.join(ROOT, twin_of(p)))
            and recorded(p) != fingerprint(p)]


def stamp(page: str) -> None:
    path = os.path.join(ROOT, twin_of(page))
    with open(path, encoding="utf-8") as f:
        text = RECORD.sub("", f.read(), count=1)
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"<!-- translates {os.path.basename(page)} @ {fingerprint(page)} -->\n" + text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--stamp", nargs="+", metavar="PAGE", help="English pages whose Korean twin is now up to date")
    ap.add_argument("--stamp-all", action="store_true", help="record every twin as current")
    args = ap.parse_args(argv)
    if args.stamp or args.stamp_all:
        pages = english_pages() if args.stamp_all else [os.path.relpath(os.path.abspath(p), ROOT) for p in args.stamp]
        for p in pages:
            if p not in english_pages():
                ap.error(f"{p}: not an English page with a Korean twin (one of {', '.join(PATTERNS)})")
            stamp(p)
            print("stamped", twin_of(p))
        return 0
    behind = stale()
    for p in behind:
        print(f"{twin_of(p)} is behind {p} (translates {recorded(p) or 'no recorded version'}, "
              f"the English page is {fingerprint(p)})")
    if not behind:
        print("every Korean twin translates its English page as it is")
    return 1 if behind else 0


if __name__ == "__main__":
    sys.exit(main())
