"""Lab 1.2 - Vector add: the first kernel, and what it says about memory bandwidth.

You will learn
  * how a grid of blocks of threads covers an array, why the last block needs a bounds check, and why the index must
    be 64-bit once arrays pass 2^31 elements;
  * what a grid-stride loop is for (a grid sized to the GPU, not to the data);
  * why 16-byte loads (float4, LDG.E.128 in SASS) and more bytes in flight per thread matter, and what they need
    (16-byte alignment: a misaligned view must fall back to the scalar path, never read past the end);
  * the same kernel in Triton: a program per block of elements, a mask instead of an if;
  * the three regimes of a bandwidth-bound kernel as the size grows: launch-bound (a few microseconds whatever the
    size), L2-resident (the three arrays fit in L2 and are re-read from it), and HBM-bound.

The two numbers, for n fp32 elements: bytes = 12 n (two 4-byte loads and one 4-byte store per element), FLOPs = n.
One FLOP per 12 bytes is ~170x below the ridge point of any current GPU (~14 FLOP/B on an H200): memory wins, and
the best any version can do is move 12 n bytes at the measured HBM ceiling (2^28 elements move 3 GiB). The target:
at 2^28 elements and above, the float4 kernels and Triton reach >= 1.0x torch.add. The lesson, the predictions and
this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab02_vector_add [--quick] [--size N] [--tune] [--no-bench] [--replot]
"""
from __future__ import annotations

import functools
import math
import os
import sys

import numpy as np

from common import arrays, check, cuda, device, lab, occupancy
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import add_kernel

LAB = "phase1_lab02_vector_add"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256
# vadd_04's launch and compile-time parameters: threads per block, float4 per thread, streaming stores.
# Picked by `--tune` (results/h200/phase1_lab02_vector_add_tune.json, n = 2^28): every configuration was within a
# few % of torch.add; one float4 per thread with evict-first stores was the fastest, and more float4 per thread
# (unroll 2, 4) did not help: 2048 resident threads x 32 B of loads already cover the latency.
V04 = dict(threads=256, unroll=1, stream=1)


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) + np.asarray(b, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """Two random vectors (normal, with a few large values so a wrong element cannot hide as a small error)."""
    a = rng.standard_normal(n) * 4.0
    b = rng.standard_normal(n)
    if n > 16:
        a[rng.integers(0, n, 4)] = 3e4
    return arrays.from_numpy(a, dtype, where), arrays.from_numpy(b, dtype, where)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(a, b, out):
    """Validate before any launch; returns (out, n)."""
    arrays.check_array("a", a, dtypes=("float32",), libs=("cupy",))
    arrays.check_array("b", b, dtypes=("float32",), libs=("cupy",))
    arrays.check_same("a, b", a, b)
    out = arrays.check_out(out, a.shape, "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    return out, arrays.size(a)


@functools.lru_cache(maxsize=None)
def _resident_blocks() -> int:
    """Blocks of THREADS threads that fill every SM once (one wave): the occupancy calculator on vadd_02."""
    d = device.info()
    k = cuda.get_kernel(CU, "vadd_02_grid_stride")
    occ = occupancy.occupancy(d.arch, THREADS, int(k.num_regs), int(k.shared_size_bytes))
    return d.sms * max(1, occ.blocks_per_sm)


def _run(name: str, blocks: int, a, b, out, n: int):
    k = cuda.get_kernel(CU, name)
    k((max(1, blocks),), (THREADS,), (a, b, out, np.int64(n)))
    return out


def add_cuda_01(a, b, out=None):
    """One thread per element."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    return _run("vadd_01_one_thread_per_element", math.ceil(n / THREADS), a, b, out, n)


def add_cuda_02(a, b, out=None):
    """Grid-stride loop over a grid that fills the GPU once."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)


def float4_ok(a, b, out) -> bool:
    """The float4 kernels need all three arrays on 16-byte boundaries (a view at an odd offset is not)."""
    return all(arrays.aligned(x, 16) for x in (a, b, out))


def add_cuda_03(a, b, out=None):
    """One float4 per thread; falls back to the grid-stride kernel for misaligned views."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    if not float4_ok(a, b, out):
        return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)
    return _run("vadd_03_float4", math.ceil((n // 4) / THREADS), a, b, out, n)


def add_cuda_04(a, b, out=None, *, threads=None, unroll=None, stream=None):
    """UNROLL float4 per thread, all loads issued first; falls back for misaligned views."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    if not float4_ok(a, b, out):
        return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)
    threads = threads or V04["threads"]
    unroll = unroll or V04["unroll"]
    stream = V04["stream"] if stream is None else stream
    k = cuda.get_kernel(CU, "vadd_04_float4_ilp", defines={"UNROLL": unroll, "STREAM": stream})
    blocks = max(1, math.ceil((n // 4) / (threads * unroll)))
    k((blocks,), (threads,), (a, b, out, np.int64(n)))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Triton: add_kernel of triton_kernels.py
# ---------------------------------------------------------------------------------------------------------------------
# 512 elements / 128 threads = 4 per thread: one 16-byte load per input, like vadd_04's best launch (128 threads,
# one float4 each, evict-first stores). The --tune sweep (results/h200/phase1_lab02_vector_add_tune.json, n = 2^28,
# interleaved rounds) ranked it first among the Triton configs, all within 0.5% of each other.
# Phase 3's lab 3.1 reads these two names (lab_module("phase1_architecture", "lab02_vector_add")).
TRITON_BLOCK, TRITON_WARPS = 512, 4


def add_triton(a, b, out=None, *, block=None, num_warps=None):
    """Triton vector add: fp32 or fp16, CuPy/torch arrays on a GPU, NumPy/torch CPU arrays in the interpreter."""
    dev = not INTERPRETER
    dt = arrays.check_array("a", a, dtypes=("float32", "float16"), device=dev)
    arrays.check_array("b", b, dtypes=("float32", "float16"), device=dev)
    arrays.check_same("a, b", a, b)
    out = arrays.check_out(out, a.shape, dt, a)
    n = arrays.size(a)
    if n == 0:
        return out
    block = block or TRITON_BLOCK
    grid = (triton.cdiv(n, block),)
    launch(add_kernel, grid, a, b, out, n, BLOCK=block, num_warps=num_warps or TRITON_WARPS)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers: what a learner would call instead
# ---------------------------------------------------------------------------------------------------------------------
def peer_cupy_add(a, b, out=None):
    import cupy

    out = arrays.check_out(out, a.shape, arrays.dtype_name(a), a)
    return cupy.add(a, b, out=out)


def peer_torch_add(a, b, out=None):
    import torch

    out = arrays.check_out(out, a.shape, arrays.dtype_name(a), a)
    torch.add(torch.from_dlpack(a), torch.from_dlpack(b), out=torch.from_dlpack(out))
    return out


VARIANTS = [
    lab.Variant("cuda 01 one thread per element", add_cuda_01, "cuda"),
    lab.Variant("cuda 02 grid-stride", add_cuda_02, "cuda"),
    lab.Variant("cuda 03 float4", add_cuda_03, "cuda"),
    lab.Variant("cuda 04 float4 streaming store", add_cuda_04, "cuda"),
    lab.Variant("triton", add_triton, "triton", dtypes=("float32", "float16")),
]
PEERS = [
    lab.Variant("cupy.add", peer_cupy_add, "peer", dtypes=("float32", "float16")),
    lab.Variant("torch.add", peer_torch_add, "peer", dtypes=("float32", "float16")),
]
CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D] + [(n, "float16") for n in (1, 1000, 65537)]
CPU_CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D_SMALL] + [(4097, "float16")]


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
