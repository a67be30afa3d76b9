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
# # Phase 2 - CUDA C
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/phase2.ipynb)
#
# Coalescing, shared memory and bank conflicts, warp shuffles, launch configuration, register pressure; then three
# real kernels built rung by rung (reduction, softmax, SGEMM), each rung checked on awkward shapes and, on a GPU, timed
# against the library. This notebook runs the eight labs of the phase with small sizes (`--quick`). On Colab choose a
# GPU runtime (Runtime > Change runtime type > T4 GPU); a kernel that needs a newer GPU than the T4 (sm_75), such
# as the `cp.async` rungs of lab 2.8 (sm_80), says so and is skipped. Without a GPU the kernels are compiled with
# NVRTC and their compile reports (registers, shared memory, spills, SASS) shown; the Triton kernels run in the
# interpreter; nothing is timed.
#
# The questions, their answers and the H200's numbers are in
# [phase2_cuda/README.md](https://github.com/OWNER/REPO/blob/main/phase2_cuda/README.md).
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
# ## Lab 2.1 - Memory coalescing: matrix transpose
#
# A warp's 32 addresses are served in 32-byte sectors, and an access costs the sectors it touches. A transpose reads
# rows and writes columns, so one side is uncoalesced until a tile in shared memory turns the write into a row too;
# one word of padding per tile row removes the 32-way bank conflict the tile creates.

# %%
run_lab("phase2_cuda.lab01_coalescing_transpose")

# %% [markdown]
# ## Lab 2.2 - Shared memory and bank conflicts
#
# 32 banks of 4 bytes: a warp's access takes as many passes as the busiest bank has distinct words, so a lane stride
# `s` costs `gcd(s, 32)` passes. The lab predicts that with a small simulator, then fixes the classic 32-way case by
# padding or by an XOR swizzle.

# %%
run_lab("phase2_cuda.lab02_bank_conflicts")

# %% [markdown]
# ## Lab 2.3 - Warp shuffle
#
# `__shfl_down_sync`, `__shfl_xor_sync` and `__shfl_up_sync` move registers between the lanes of a warp with no
# shared memory and no barrier: a warp sum and a warp scan, against their shared-memory versions, then a scan of an
# array of any length built from them.

# %%
run_lab("phase2_cuda.lab03_warp_shuffle")

# %% [markdown]
# ## Lab 2.4 - Launch configuration
#
# What limits the blocks an SM holds, what a wave is, and Little's law for a memory-bound kernel: with one 16-byte load
# in flight per thread, the resident threads set the bandwidth. A grid-stride loop lets the grid be sized to the GPU;
# a partial last wave (the tail) costs less than a whole wave, but not nothing.

# %%
run_lab("phase2_cuda.lab04_launch_config")

# %% [markdown]
# ## Lab 2.5 - Register pressure
#
# More work per thread means more registers, so fewer resident warps, but also more loads in flight: a kernel at 25%
# occupancy can move as many bytes as one at 100%. The compile table shows registers, stack frames and spills for
# each setting, and what `__launch_bounds__` and `-maxrregcount` change.

# %%
run_lab("phase2_cuda.lab05_register_pressure")

# %% [markdown]
# ## Lab 2.6 - Reduction
#
# A reduction combines values across threads, and how (shared-memory trees, barriers, shuffles) decides its speed
# before memory does. The ladder goes from the textbook's first kernel to a single-pass one with 16-byte loads and a
# grid sized to the GPU; the numerics table shows how far each summation order lands from the float64 sum.

# %%
run_lab("phase2_cuda.lab06_reduction")

# %% [markdown]
# ## Lab 2.7 - Softmax
#
# A row max, a row sum of exponentials, a normalization: the max is subtracted so that `exp` cannot overflow. The
# ladder goes from three kernels to one that reads each byte once and writes it once (online softmax, the row held
# in registers), with fp16 and bf16 storage and the edge cases (`-inf` entries, rows of one element).

# %%
run_lab("phase2_cuda.lab07_softmax")

# %% [markdown]
# ## Lab 2.8 - The SGEMM ladder
#
# An fp32 matrix multiply from the naive kernel to cuBLAS's speed, one change per rung: shared-memory tiles, register
# blocking, `float4` loads, a conflict-free shared layout, warp tiling, double buffering, a `cp.async` pipeline and
# autotuned tiles. Without a GPU the compile report shows each rung's registers, shared memory and SASS.

# %%
run_lab("phase2_cuda.lab08_sgemm")

# %% [markdown]
# ## What the H200 measured
#
# Lab 2.8 at 4096 x 4096 x 4096, every rung against cuBLAS: register blocking (rungs 04 and 05) gives the largest
# steps, each later rung a few TFLOP/s more, and the autotuned rung 11 reaches 45.2 TFLOP/s against cuBLAS's 51.4.
# Rungs 01-03 are too slow to run at this size (the note under the plot gives their speed at 2048).

# %%
show("phase2_lab08_sgemm_ladder.png")
