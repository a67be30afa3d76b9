# ---
# jupyter:
#   accelerator: GPU
#   colab:
#     gpuType: T4
#     provenance: []
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: accelerator,colab,kernelspec
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Phase 3 - Triton
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/phase3.ipynb)
#
# The ideas of phase 2 one level up: a Triton program is a block, the tile you load replaces thread-index
# arithmetic, and the compiler lays out threads, shared memory and tensor-core instructions for you. This notebook
# runs the four labs of the phase with small sizes (`--quick`). On Colab choose a GPU runtime (Runtime > Change
# runtime type > T4 GPU); a kernel that needs a newer GPU than the T4 (sm_75) says so and is skipped. Without a
# GPU every kernel runs in the Triton interpreter (slowly, with the same checks), and its compiled form for sm_90 is
# shown ahead of time.
#
# The questions, their answers and the H200's numbers are in
# [phase3_triton/README.md](https://github.com/OWNER/REPO/blob/main/phase3_triton/README.md).
#
# The first cell sets up: on Colab it clones the course and installs what Colab lacks (CuPy and NVRTC for CUDA 12;
# Colab's own torch and Triton are kept); elsewhere it uses this checkout. The labs write no file into the
# repository (`--no-json --no-plot`, and a temporary results folder).

# %%
import subprocess
import sys
from pathlib import Path

GITHUB_REPO = "OWNER/REPO"  # the course on GitHub; `python -m notebooks --repo OWNER/NAME` sets it in every notebook

if "google.colab" in sys.modules:  # fetch the course; elsewhere the notebook runs from this checkout
    if GITHUB_REPO == "OWNER/REPO":
        raise RuntimeError("GITHUB_REPO is still the placeholder: set it to the course's owner/name on GitHub")
    ROOT = Path("/content") / GITHUB_REPO.split("/")[1]
    if not ROOT.exists():
        subprocess.run(["git", "clone", "--depth", "1", f"https://github.com/{GITHUB_REPO}", str(ROOT)], check=True)
else:
    ROOT = Path.cwd() if (Path.cwd() / "pyproject.toml").exists() else Path.cwd().parent
sys.path.insert(0, str(ROOT))
from notebooks.helpers import run_lab, show  # noqa: E402 - on Colab it installs what Colab lacks (notebooks/helpers.py)

# %% [markdown]
# ## Lab 3.1 - The programming model
#
# `tl.program_id` is `blockIdx`, a `tl.arange` tile replaces `threadIdx` arithmetic, a mask replaces the bounds check,
# and `num_warps` sets how many threads share a tile. The vector add of lab 1.2 and a row sum, each in CUDA C and in
# Triton, checked against the same reference; the compile reports show the layout and the width of every load.

# %%
run_lab("phase3_triton.lab01_programming_model")

# %% [markdown]
# ## Lab 3.2 - Block tiling: a fast Triton matmul
#
# One program computes one `BLOCK_M x BLOCK_N` tile of C, walking K in `BLOCK_K` steps with a `tl.dot` per step. The
# order of the programs (grouped by `GROUP_M`) decides how much of A and B comes from L2 instead of HBM, and
# `num_stages` keeps loads in flight ahead of the tensor cores. On a GPU the configuration is autotuned.

# %%
run_lab("phase3_triton.lab02_matmul")

# %% [markdown]
# ## Lab 3.3 - Fused softmax
#
# Written as separate tensor operations, softmax reads and writes the whole matrix about eight times; fused, each row
# is read once and written once. Rows too long for registers take the online softmax (a running max and a running
# sum, rescaled as the max grows): three passes over the row instead of two.

# %%
run_lab("phase3_triton.lab03_fused_softmax")

# %% [markdown]
# ## Lab 3.4 - LayerNorm forward and backward
#
# The forward pass is a fused row kernel that saves each row's mean and `rstd` for later. The backward needs two
# reductions: along each row for `dx`, and down each column for `dw` and `db`, done in two levels (partial sums per
# program, then a small kernel) with no atomics; it is checked against `torch.autograd`.

# %%
run_lab("phase3_triton.lab04_layernorm")

# %% [markdown]
# ## What the H200 measured
#
# Lab 3.3's softmax against the row length, the matrix always 2^26 fp32 elements. Up to 16384 columns (`MAX_FUSED`)
# a row fits in registers and the fused Triton kernel runs at 0.84 to 0.94 of the measured HBM ceiling; longer rows
# take the online kernel, three passes instead of two, and fall below two thirds of it. `torch.softmax` is faster on
# the shortest rows and slower from 4096 columns on.

# %%
show("phase3_lab03_fused_softmax.png")
