"""Write the READMEs' generated blocks from the code and the committed results, or check they are current.

    python tools/readme_tables.py              # rewrite the blocks (README.md, README.ko.md, the phase guides
                                               # and the lab lessons, with their Korean twins)
                                               # and the page results/h200/README.md
    python tools/readme_tables.py --check      # exit 1 when any of them differs from what the sources say
    python tools/readme_tables.py --gpu rtx-4090   # write results/rtx-4090/README.md from results/rtx-4090/*.json
                                               # (the repository's READMEs keep the H200 figures)

Blocks (between <!-- NAME:start --> and <!-- NAME:end --> markers):
  labs            the phase map: every lab that exists, its title (its docstring's first line) and its command
  device          the GPU, the library versions and the measured ceilings the results were taken with
  headline        per lab: its best kernel vs its best library peer at the lab's headline case, as a ratio
  gpus            the headline ratios on every GPU with committed results (results/<gpu>/), side by side
  plots           the key plots that exist under results/<gpu>/, and the ones not measured yet
  targets         every performance target and prediction recorded in results/<gpu>/*.json, met or not: the
                  common.target.Target records as they are (older files read by Target.from_legacy)
  answer-LABNAME  (phase READMEs) what the lab measured: headline, targets, plots; or "not yet measured"
Nothing in these blocks is typed by hand: change the code or the results, then run this again.
The headline case of a lab is the case of its first performance target against a peer (HEADLINE_CASE picks another
where the issue's main target is not the first), else the largest shape measured against a peer. A lab may also write
a "headline" entry in its JSON header ({"case", "ours", "peer", "ratio", "target", "met"}), which wins.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
# the blocks and what they are made of (re-exported: other tools and the tests read them from here)
from tools.readme_blocks import (TEXT, answer_block as answer_block, device_block, gpu_name,  # noqa: E402
                                 headline_block, labs_block, measured_block, plots_block, results_page, targets_block)
from tools.readme_results import (PHASES as PHASES, README_GPU, _cell, _fmt as _fmt, headline,  # noqa: E402
                                  labs, target_rows as target_rows)


# ---------------------------------------------------------------------------------------------------------------------
# The results folders: every GPU's (the GPUs side by side read them all)
# ---------------------------------------------------------------------------------------------------------------------
def load_results(gpu: str) -> dict[str, dict]:
    docs = {}
    for path in sorted(glob.glob(os.path.join(ROOT, "results", gpu, "*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                docs[os.path.basename(path)[:-5]] = json.load(f)
        except (OSError, ValueError):
            continue
    return docs


def committed_gpus() -> list[str]:
    """GPU folders under results/ with committed JSON results, the README's GPU first."""
    root = os.path.join(ROOT, "results")
    found = [d for d in sorted(os.listdir(root)) if os.path.isdir(os.path.join(root, d))
             and not d.endswith("-quick") and d not in ("no-gpu", "scratch")
             and glob.glob(os.path.join(root, d, "phase*.json"))]
    return sorted(found, key=lambda d: (d != README_GPU, d))


def gpus_block(lang: str = "en") -> str:
    """The headline ratio of every lab on every GPU with committed results, side by side: a column per GPU with at
    least one lab's headline (a folder holding only, say, a training-step file has its own results page, no column
    of dashes here)."""
    T = TEXT[lang]
    docs = {g: load_results(g) for g in committed_gpus()}
    heads_of = {lab["stem"]: {g: headline(docs[g][lab["stem"]], lab["stem"]) if lab["stem"] in docs[g] else None
                              for g in docs} for lab in labs()}
    gpus = [g for g in docs if any(h[g] for h in heads_of.values())]
    names = {g: gpu_name(docs[g], g) for g in docs}
    if len(gpus) < 2:
        rest = [g for g in docs if g not in gpus]
        page = "README.ko.md" if lang == "ko" else "README.md"
        links = ", ".join(f"[{names[g]}](results/{g}/{page})" for g in rest)
        return T["gpus_one"].format(gpu=", ".join(names[g] for g in gpus) or "-",
                                    others=T["gpus_others"].format(links=links) if rest else "")
    lines = [T["gpus_head"] + "".join(f" {names[g]} |" for g in gpus), "|---|---|" + "---|" * len(gpus)]
    for lab in labs():
        heads = {g: heads_of[lab["stem"]][g] for g in gpus}
        if not any(heads.values()):
            continue
        case = next(h["case"] for h in heads.values() if h)
        cells = []
        for g in gpus:
            h = heads[g]
            cells.append("-" if h is None else f"**{_fmt(h['ratio'])}**" + (f" ({_cell(h['case'])})"
                                                                          if h["case"] != case else ""))
        lines.append(f"| {lab['num']} | {_cell(case)} | " + " | ".join(cells) + " |")
    return "\n".join(lines + ["", T["gpus_note"]])


# ---------------------------------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------------------------------
def render(text: str, blocks: dict[str, str], where: str = "README.md") -> str:
    for name, body in blocks.items():
        pat = re.compile(rf"(<!-- {re.escape(name)}:start -->\n).*?(<!-- {re.escape(name)}:end -->)", re.S)
        if not pat.search(text):
            raise SystemExit(f"{where} has no <!-- {name}:start --> ... <!-- {name}:end --> block")
        text = pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)
    return text


def block_names(text: str) -> list[str]:
    return re.findall(r"<!-- ([\w.-]+):start -->", text)


def outputs(gpu: str) -> dict[str, str]:
    """{path: new text} for every file this tool writes for results/<gpu>/."""
    docs = load_results(gpu)
    out = {}
    if gpu == README_GPU:
        readme_blocks = {
            "README.md": ("en", "results/%s/" % gpu),
            "README.ko.md": ("ko", "results/%s/" % gpu),
        }
        for fname, (lang, rel) in readme_blocks.items():
            path = os.path.join(ROOT, fname)
            if not os.path.exists(path):
                continue
            with open(path, encoding="utf-8") as f:
                old = f.read()
            avail = {"labs": lambda: labs_block(lang), "device": lambda: device_block(docs, lang),
                     "headline": lambda: headline_block(docs, gpu, lang), "gpus": lambda: gpus_block(lang),
                     "plots": lambda: plots_block(gpu, lang, rel), "targets": lambda: targets_block(docs, gpu, lang)}
            present = block_names(old)
            out[path] = render(old, {k: fn() for k, fn in avail.items() if k in present}, fname)
        by_phase: dict[str, list[dict]] = {}
        for lab in labs():
            by_phase.setdefault(lab["phase"], []).append(lab)
        for phase, ls in by_phase.items():
            for guide in ("README.md", "README.ko.md"):      # the phase guide and its Korean twin
                path = os.path.join(ROOT, phase, guide)
                if not os.path.exists(path):
                    continue
                with open(path, encoding="utf-8") as f:
                    old = f.read()
                present = block_names(old)
                lang = "ko" if guide.endswith(".ko.md") else "en"
                blocks = {f"answer-{lab['name']}": answer_block(lab, docs, gpu, f"../results/{gpu}/", lang)
                          for lab in ls if f"answer-{lab['name']}" in present}
                out[path] = render(old, blocks, os.path.relpath(path, ROOT))
            for lab in ls:                         # each lab's lesson: its README's measured block
                for fname in ("README.md", "README.ko.md"):
                    lpath = os.path.join(ROOT, phase, lab["name"], fname)
                    if not os.path.exists(lpath):
                        continue
                    with open(lpath, encoding="utf-8") as f:
                        ltext = f.read()
                    if "measured" in block_names(ltext):
                        lang = "ko" if fname.endswith(".ko.md") else "en"
                        block = measured_block(lab, docs, gpu, f"../../results/{gpu}/", lang=lang)
                        out[lpath] = render(ltext, {"measured": block}, os.path.relpath(lpath, ROOT))
    if docs:
        out[os.path.join(ROOT, "results", gpu, "README.md")] = results_page(docs, gpu)
        out[os.path.join(ROOT, "results", gpu, "README.ko.md")] = results_page(docs, gpu, "ko")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.splitlines()[1:]))
    ap.add_argument("--check", action="store_true", help="exit 1 when a generated file is not current")
    ap.add_argument("--gpu", default=README_GPU,
                    help=f"results/<gpu>/ to summarise (default {README_GPU}, which also feeds the READMEs)")
    args = ap.parse_args(argv)
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", args.gpu):
        ap.error(f"--gpu: expected a folder name like h200 or rtx-4090, got {args.gpu!r}")
    files = outputs(args.gpu)
    if not files:
        print(f"nothing to write: results/{args.gpu}/ has no JSON results", file=sys.stderr)
        return 1 if args.check else 0
    stale = []
    for path, new in files.items():
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if new == old:
            continue
        stale.append(os.path.relpath(path, ROOT))
        if not args.check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    if args.check:
        if stale:
            print(f"out of date: {', '.join(stale)}; run python tools/readme_tables.py"
                  + ("" if args.gpu == README_GPU else f" --gpu {args.gpu}"), file=sys.stderr)
            return 1
        print(f"current: {', '.join(os.path.relpath(p, ROOT) for p in files)}")
        return 0
    print(("updated: " + ", ".join(stale)) if stale else "already current")
    return 0


if __name__ == "__main__":
    sys.exit(main())
