"""No GPU is built into a lab: no GPU model's name and no datasheet figure of one in the labs' Python and CUDA C.

The course runs on the learner's GPU. Every prediction, model, ceiling and plot takes its numbers from the one
description of the GPU in use (common.device: read off the device, completed by the cited table common/gpu_specs.py),
so a lab that says "an H200's ridge point is ~200 FLOP/B" or divides by 4800 GB/s is wrong on every other card. Figures
of a particular GPU belong in the table, and measured ones in the generated results; the lessons (README.md) may name
the GPUs their generated blocks were measured on.
"""
import glob
import os
import re

import pytest

from common import gpu_specs

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = sorted(p for pat in ("phase*/**/*.py", "phase*/**/*.cu", "phase*/**/*.cuh")
                 for p in glob.glob(os.path.join(ROOT, pat), recursive=True))

# GPU models (not architectures: "Hopper", "sm_90a" and "Blackwell" name what a kernel needs, not a card)
GPU_NAME = re.compile(r"(?<![\w/-])(?:[HAB]\d{3}|GB\d{3}|[HAL]\d{2}[SG]?|T4|L4|V100|P100|RTX[ -]?\d{4}|GeForce|Tesla|"
                      r"Quadro|Jetson|DGX|HGX)(?![\w])", re.I)
# results folders of particular GPUs, read by name ("results/h200/...")
RESULTS_OF_A_GPU = re.compile(r"results/(?!<)[a-z0-9-]+/", re.I)


def datasheet_numbers() -> set[str]:
    """The distinctive datasheet figures of the table: memory bandwidths and tensor rates of 200 and more, as they
    would be typed (4800, 3350, 989, 1979, 2039...)."""
    out = set()
    for p in gpu_specs.PROFILES.values():
        for k in ("hbm_gbps", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops"):
            v = p.get(k)
            if v and v >= 200:
                out.add(f"{v:g}")
    return out


NUMBERS = datasheet_numbers()
NUMBER = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?)(?![\w.]*\d)")
# a figure of three digits (300, 312, 989) is also an ordinary size: it counts only next to what it would measure
CONTEXT = re.compile(r"GB/s|TB/s|FLOP|bandwidth|datasheet|peak|ridge|hbm|tensor", re.I)


def _is_datasheet_figure(token: str, line: str) -> bool:
    v = token.replace(",", "")
    if v not in NUMBERS:
        return False
    return float(v) >= 1000 or bool(CONTEXT.search(line))


def findings(path: str) -> list[str]:
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            where = f"{os.path.relpath(path, ROOT)}:{i}"
            if m := GPU_NAME.search(line):
                out.append(f"{where}: GPU name {m.group(0)!r}: {line.strip()[:110]}")
            if m := RESULTS_OF_A_GPU.search(line):
                out.append(f"{where}: a GPU's results folder {m.group(0)!r}: {line.strip()[:110]}")
            for m in NUMBER.finditer(line):
                if _is_datasheet_figure(m.group(1), line):
                    out.append(f"{where}: datasheet figure {m.group(1)!r}: {line.strip()[:110]}")
    return out


def test_the_patterns_catch_what_they_should():
    bad = ["on an H200 the ridge point", "(H100 PCIe ~34 cycles)", "an RTX 4090", "a T4 has", "A100-SXM4",
           "capped at 90% of 4800", "1979 TFLOP/s", "results/h200/x.json", "the L4's", "hbm_gbps=300",
           "a 989 peak"]
    good = ["sm_90a", "Hopper's wgmma", "Blackwell", "h_max", "TH4", "x4", "B200_ROWS = 4", "L2", "4096", "2048",
            "the GPU's ridge point", "results/<gpu>/x.json", "float4", "H = 32 heads", "BLOCK_H100",
            "CHECK_CASES = [(300, 64)]", "timeout=300"]

    def flagged(s):
        return bool(GPU_NAME.search(s) or RESULTS_OF_A_GPU.search(s)
                    or any(_is_datasheet_figure(m.group(1), s) for m in NUMBER.finditer(s)))

    for s in bad:
        assert flagged(s), s
    for s in good:
        assert not flagged(s), s


def test_the_scan_sees_every_lab():
    assert any(p.endswith(os.path.join("lab07_softmax", "kernels.cu")) for p in SOURCES)
    assert len(SOURCES) > 30


@pytest.mark.parametrize("path", SOURCES, ids=[os.path.relpath(p, ROOT) for p in SOURCES])
def test_no_gpu_name_or_datasheet_figure_in_lab_code(path):
    found = findings(path)
    assert not found, ("read these from common.device (the GPU in use, or the table's profile) or move them to the "
                       "lesson:\n" + "\n".join(found[:25]))
