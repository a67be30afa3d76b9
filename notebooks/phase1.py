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
# # Phase 1 - GPU architecture
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/phase1.ipynb)
#
# Threads, warps, blocks and grids; the memory hierarchy; occupancy. This notebook runs the six labs of the phase
# with small sizes (`--quick`). On Colab choose a GPU runtime (Runtime > Change runtime type > T4 GPU): the labs
# check every kernel, then time it; a kernel that needs a newer GPU than the T4 (sm_75) says so and is skipped.
# Without a GPU the Triton kernels run in the interpreter (slow, still checked),
# the CUDA C kernels are compiled with NVRTC and their registers and shared memory reported, and nothing is timed.
#
# The questions, their answers and the H200's numbers are in
# [phase1_architecture/README.md](https://github.com/OWNER/REPO/blob/main/phase1_architecture/README.md).
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
# ## Lab 1.1 - Device tour
#
# The numbers that bound every kernel: SMs, registers and shared memory per SM, L2, clocks and memory bus, and the
# ceilings that follow (peak FP32 = SMs x lanes x 2 x clock, bandwidth = 2 x memory clock x bus width, and their
# ratio, the ridge point). Then the software stack (driver, CUDA runtime, NVRTC, CuPy, Triton, torch) and which
# versions must agree. Without a GPU the report is for a GPU of the course's table.

# %%
run_lab("phase1_architecture.lab01_device_tour")

# %% [markdown]
# ## Lab 1.2 - Vector add
#
# The first kernel, in CUDA C and in Triton: a grid of blocks covering an array, the bounds check of the last block,
# a grid-stride loop, and 16-byte `float4` loads (which need 16-byte alignment, so a misaligned view takes the scalar
# path). On a GPU the size sweep shows three regimes: launch-bound, L2-resident, HBM-bound.

# %%
run_lab("phase1_architecture.lab02_vector_add")

# %% [markdown]
# ## Lab 1.3 - Thread, warp, block, grid
#
# Where every thread runs: warps are cut from the block's linearized thread index, blocks stay on one SM until they
# finish, and a large grid runs in waves. A divergent branch costs twice when neighbouring lanes disagree (`div_01`)
# and nothing extra when whole warps take the same side (`div_02`).

# %%
run_lab("phase1_architecture.lab03_thread_hierarchy")

# %% [markdown]
# ## Lab 1.4 - The memory hierarchy
#
# The same read kernel is fastest while its working set fits in L1, slower in L2, slowest in HBM: one sweep, three
# plateaus. A dependent pointer chase measures each level's latency, which the GPU hides by keeping thousands of loads
# in flight.

# %%
run_lab("phase1_architecture.lab04_memory_hierarchy")

# %% [markdown]
# ## Lab 1.5 - Occupancy
#
# How many warps an SM holds, from its warps, registers, shared memory and block slots: the scarcest resource limits
# it. Little's law (bandwidth = bytes in flight / latency) says what occupancy buys: a kernel with more bytes in flight
# per warp needs fewer warps. Occupancy is a means, not the goal.

# %%
run_lab("phase1_architecture.lab05_occupancy")

# %% [markdown]
# ## Lab 1.6 - Naive matrix multiply
#
# One thread per output element, reading A and B straight from global memory. Which index `threadIdx.x` walks decides
# how many 32-byte sectors a warp's load touches (33 against 5 per k step): the lab counts them from the addresses.
# The gap to cuBLAS that remains is what phase 2 closes.

# %%
run_lab("phase1_architecture.lab06_matmul_naive")

# %% [markdown]
# ## What the H200 measured
#
# Lab 1.2's vector add against the number of elements: below about 2^19 elements every call takes the same few
# microseconds, so the bandwidth grows with n (launch-bound); while the three arrays fit in the 60 MiB L2 it peaks
# above the HBM figure; beyond, it settles near the measured HBM ceiling, which the `float4` kernels, Triton and
# `torch.add` reach and the one-thread-per-element kernel does not.

# %%
show("phase1_lab02_vector_add.png")
