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
# # Phase 4 - Kernel optimization
#
# [![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)](https://colab.research.google.com/github/OWNER/REPO/blob/main/notebooks/phase4.ipynb)
#
# Where every kernel of the course stands against the roofs, and the techniques that move it: fusion, tensor cores,
# tiling, mixed precision; then flash attention and a whole transformer block rebuilt from the course's own kernels.
# This notebook runs the seven labs of the phase with small sizes (`--quick`). On Colab choose a GPU runtime
# (Runtime > Change runtime type > T4 GPU). The T4 (sm_75) has fp16 tensor cores but none for bf16 (sm_80), fp8
# (sm_89) or Hopper's `wgmma` and TMA (sm_90): a kernel that needs them says so and is skipped, and
# `--plan --gpu t4` lists what runs. Without a GPU the Triton kernels run in the interpreter, the CUDA C kernels
# are compiled with NVRTC and reported, and nothing is timed.
#
# The questions, their answers and the H200's numbers are in
# [phase4_optimization/README.md](https://github.com/OWNER/REPO/blob/main/phase4_optimization/README.md).
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
# ## Lab 4.1 - The roofline
#
# A kernel that moves B bytes and does F FLOPs has an arithmetic intensity F / B; it cannot beat intensity x HBM
# bandwidth (the diagonal) nor the peak of the unit it computes on (a flat roof). The lab places every kernel the
# course has measured against those roofs: its distance from its roof says which lever is left.

# %%
run_lab("phase4_optimization.lab01_roofline")

# %% [markdown]
# ## Lab 4.2 - Kernel fusion
#
# A chain of cheap elementwise kernels costs its memory passes, not its arithmetic. The lab predicts each fusion's
# speed-up from a byte count before timing it: bias + GELU in one kernel, a residual add fused with a layernorm, and
# bias, GELU and residual applied in a GEMM's epilogue while the tile is still in registers.

# %%
run_lab("phase4_optimization.lab02_fusion")

# %% [markdown]
# ## Lab 4.3 - Tensor cores
#
# bf16 / fp16 GEMMs on the tensor cores, four ways: `nvcuda::wmma`, `mma.sync` with `ldmatrix`, a swizzled shared
# layout and a `cp.async` pipeline, Hopper's `wgmma` fed by TMA, and Triton's `tl.dot`. Without a GPU the compile
# reports show the HMMA / HGMMA instructions in the SASS.

# %%
run_lab("phase4_optimization.lab03_tensor_cores")

# %% [markdown]
# ## Lab 4.4 - Tiling strategy
#
# A larger block tile reuses more of each byte it loads, but needs more registers and shared memory, so fewer blocks
# fit on an SM and fewer tiles share out the work; pipeline stages hide HBM latency at the price of shared memory.
# Wave quantization: a last wave that is only partly full leaves SMs idle.

# %%
run_lab("phase4_optimization.lab04_tiling_strategy")

# %% [markdown]
# ## Lab 4.5 - Mixed precision
#
# fp32, tf32, bf16, fp16 and fp8 by their range and precision, computed rather than quoted; the error of a GEMM in
# each next to its speed; and why the accumulator's precision matters more than the storage's: an fp16 accumulator's
# error grows with K, and softmax and layernorm keep their sums in fp32.

# %%
run_lab("phase4_optimization.lab05_mixed_precision")

# %% [markdown]
# ## Lab 4.6 - Attention, from naive to flash
#
# Naive attention writes the S x S score matrix to memory and reads it back. Flash attention keeps a block of query
# rows on chip while K and V stream past, with an online softmax, so nothing of size S x S leaves the chip; its
# backward recomputes the scores tile by tile from the saved log-sum-exp.

# %%
run_lab("phase4_optimization.lab06_attention")

# %% [markdown]
# ## Lab 4.7 - A transformer block
#
# A GPT-style block built from the course's own kernels (lab 3.4's layernorm, lab 4.2's fused-epilogue GEMMs, lab
# 4.6's flash attention), checked against a float64 NumPy block and a PyTorch module with the same weights; on a GPU,
# each stage's time next to its floor.

# %%
run_lab("phase4_optimization.lab07_transformer_block")

# %% [markdown]
# ## What the H200 measured
#
# Lab 4.1's roofline of the H200: arithmetic intensity across, achieved TFLOP/s up. The diagonal is the measured HBM
# bandwidth, the flat lines the measured peaks of the fp32 CUDA cores and of the tensor cores by precision. The
# memory-bound kernels of phases 1-3 sit on or near the diagonal, the GEMMs under their flat roofs; the right panel
# gives every kernel's fraction of its own roof, lab by lab.

# %%
show("phase4_lab01_roofline.png", width=1000)
