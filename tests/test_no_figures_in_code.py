"""Measured figures live in generated files, never in code: no GB/s or TFLOP/s figure, no commit id and no tracker
reference ("issue 11", "the issue's target") in the labs' Python and CUDA sources or in common/.

A measurement typed into a docstring or a kernel header goes stale the day the kernel or the GPU changes; the lab's
README carries the figures in a block generated from results/<gpu>/*.json (tools/readme_tables.py, checked by
tests/test_cli.py). Predictions stay in the code where they explain a design - as ratios and fractions ("~2x rung
01", "within 10% of the ceiling"), or as named constants - and the lesson (README.md) may work them out in GB/s.
"""
import glob
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# common/gpu_specs.py is the cited table of datasheet figures: the one place such figures live
SOURCES = sorted(p for pat in ("phase*/**/*.py", "phase*/**/*.cu", "phase*/**/*.cuh", "common/**/*.py",
                               "common/**/*.cuh") for p in glob.glob(os.path.join(ROOT, pat), recursive=True)
                 if not p.endswith(os.path.join("common", "gpu_specs.py")))

FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s*(?:GB/s|TB/s|GiB/s|TFLOP/s|TFLOPS|GFLOP/s|PFLOP/s)", re.I)
# 7-40 hex digits with at least one letter and one digit, not a 0x constant
COMMIT = re.compile(r"(?<![0-9A-Za-z_.])(?<!0x)(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![0-9A-Za-z_])"
                    r"|\bcommits?\s+[0-9a-f]{7,40}\b")
TRACKER = re.compile(r"\bissue\s*#?\d+|\bthe issue'?s\b|\(issue\b", re.I)


def findings(path: str) -> list[str]:
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            for what, pat in (("figure", FIGURE), ("commit id", COMMIT), ("tracker reference", TRACKER)):
                m = pat.search(line)
                if m:
                    out.append(f"{os.path.relpath(path, ROOT)}:{i}: {what} {m.group(0)!r}: {line.strip()[:110]}")
    return out


def test_the_scan_sees_every_lab():
    assert any(p.endswith(os.path.join("lab07_softmax", "kernels.cu")) for p in SOURCES)
    assert len(SOURCES) > 30


def test_the_patterns_catch_what_they_should():
    bad = ["// measured 3,860 GB/s (0.89 of the ceiling)", "at 4.4 TB/s", "reached 745 TFLOP/s",
           "(results/h200/x.json, commit 1328531)", "commit f2ffb1c", "the issue's target", "issue 11 asks"]
    good = ["x = 0xffffffffu", "ylabel='GB/s'", "f'{g:.0f} GB/s'", "each warp must issue its own MMAs",
            "issued before the first use", "~2x rung 01", "hbm_gbps=4800", "sm_90a", '"bf16 TFLOP/s": x']
    assert all(FIGURE.search(s) or COMMIT.search(s) or TRACKER.search(s) for s in bad)
    assert not any(FIGURE.search(s) or COMMIT.search(s) or TRACKER.search(s) for s in good)


@pytest.mark.parametrize("path", SOURCES, ids=[os.path.relpath(p, ROOT) for p in SOURCES])
def test_no_measured_figures_commit_ids_or_tracker_words(path):
    found = findings(path)
    assert not found, "move these to the lab's README (generated block) or drop them:\n" + "\n".join(found[:20])
