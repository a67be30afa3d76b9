"""What every course notebook's first cell imports, once it has the course on its path: on Colab the install of what
Colab lacks, then the notebook's working folder, its results folder and the two functions its cells call.

    from notebooks.helpers import run_lab, show

On Colab (the course cloned by the first cell) this installs the pins of requirements/cuda12.txt for the packages
Colab does not already have (CuPy and NVRTC for CUDA 12; Colab's own torch, Triton, NumPy and matplotlib are kept).
Everywhere it makes the checkout the working folder, sends every JSON and plot a lab writes to a temporary folder
(COURSE_RESULTS), so a notebook never writes into the repository, and prints the labs in English.
"""
from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUICK = ["--quick", "--no-json", "--no-plot"]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def install_on_colab() -> None:
    """pip install the course with the pins of requirements/cuda12.txt, leaving alone every package Colab has."""
    have = {_norm(d.metadata["Name"] or "") for d in metadata.distributions()}
    pins = [line for line in (ROOT / "requirements" / "cuda12.txt").read_text().splitlines()
            if "==" in line and not line.startswith("#") and _norm(line.split("==")[0]) not in have]
    constraints = Path(tempfile.mkdtemp()) / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-c", str(constraints), "-e", f"{ROOT}[cuda12]"],
                   check=True)


def run_lab(name: str, *flags: str) -> None:
    """Run one lab in this kernel, as `python -m NAME --quick --no-json --no-plot` does; stop on a failed check."""
    print(f"$ python -m {name} {' '.join(QUICK + list(flags))}", flush=True)
    status = importlib.import_module(f"{name}.__main__").main(QUICK + list(flags))
    assert status == 0, f"{name} exited with status {status}"


def show(png: str, width: int = 900) -> None:
    """A plot the course measured on an H200 (committed under results/h200/)."""
    from IPython.display import Image, display

    display(Image(filename=str(ROOT / "results" / "h200" / png), width=width))


if "google.colab" in sys.modules:
    install_on_colab()
os.chdir(ROOT)
os.environ["COURSE_RESULTS"] = tempfile.mkdtemp(prefix="course-results-")  # any JSON or plot goes here
os.environ["COURSE_LANG"] = "en"
