"""Lab 1.3 - Thread, warp, block, grid: where every thread runs, when, and what a divergent branch costs.

You will learn
  * how a launch is cut up: a grid of blocks, a block of threads (1-D or 2-D), and warps of 32 threads cut from the
    block's LINEARIZED thread index (x fastest): a (16, 4) block's warp 0 is rows y = 0 and 1;
  * that the hardware tells you where a thread is: %laneid, %smid, and two clocks - clock64() (per-SM cycles, not
    comparable across SMs) and %globaltimer (GPU-wide nanoseconds, good for a timeline);
  * how blocks are dealt to SMs: a block is resident on one SM until it finishes; an SM holds as many blocks as its
    resources allow (lab 1.5), and a grid larger than that runs in waves - the timeline plot shows them, and where
    the ideal-waves model stops describing them;
  * warp divergence, measured: a warp executes one instruction stream, so when its lanes disagree on a branch it runs
    both sides one after the other, with the other lanes masked off. The same code, branching on the parity of the
    element, costs 2x when consecutive lanes take different sides (div_01) and 1x when whole warps do (div_02).
    Triton has no per-thread branches: `tl.where` computes both sides as written - unless the compiler can prove
    which side each element takes, as it can here.

The two numbers, for the divergence benchmark (n = 2^22 int32 elements, 256 rounds of a 5-instruction hash):
bytes = 8 n = 32 MiB, floating-point FLOPs = 0, integer operations = 5 x 256 n = 5.4 G. At ~64 integer operations
per clock per SM the arithmetic takes ~40x longer than moving the bytes: compute-bound, so every extra instruction
slot a divergent warp spends shows up in full. Predicted: divergent / uniform = 2.0. The lesson, the predictions and
this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab03_thread_hierarchy [--quick] [--size N] [--rounds R] [--no-bench] [--replot]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, check, cuda, lab
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import both_hashes_kernel

LAB = "phase1_lab03_thread_hierarchy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256
NFIELDS = 10
FIELDS = ("block", "tx", "ty", "tid", "warp", "lane", "sm", "clock0", "gtime0_ns", "gtime1_ns")
HASH_EVEN = (16, 0x7FEB352D, 13)     # shift, multiplier, shift: must match hash_even in kernels.cu
HASH_ODD = (15, 0x846CA68B, 11)
ROUNDS_CHECK = 24                    # rounds in the correctness checks (the reference runs in NumPy)
BENCH_N, BENCH_ROUNDS = 2**22, 256


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs (the divergence kernels are the checkable part of this lab)
# ---------------------------------------------------------------------------------------------------------------------
def _hash(v: np.ndarray, rounds: int, s1: int, mul: int, s2: int) -> np.ndarray:
    v = v.copy()
    for _ in range(rounds):
        v ^= v >> np.uint32(s1)
        v *= np.uint32(mul)          # uint32 arithmetic wraps modulo 2^32, like the GPU's
        v ^= v >> np.uint32(s2)
    return v


def reference(x, rounds: int) -> np.ndarray:
    """out[i] = even-hash(x[i]) for even i, odd-hash(x[i]) for odd i; int32 bit patterns returned as float64."""
    u = np.asarray(x).astype(np.int64).astype(np.uint32).ravel()    # the int32 values' bits
    i = np.arange(u.size)
    out = np.where(i % 2 == 0, _hash(u, rounds, *HASH_EVEN), _hash(u, rounds, *HASH_ODD))
    return out.view(np.int32).astype(np.float64).reshape(np.shape(x))


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str, rounds: int = ROUNDS_CHECK):
    """Random 32-bit words (the whole range: every bit matters to a hash) and the round count."""
    x = rng.integers(-2**31, 2**31, size=n, dtype=np.int64).astype(np.int32)
    return arrays.from_numpy(x, "int32", where), rounds


def out_dtype(dtype: str) -> str:
    return "int32"


def tolerance(size, dtype) -> check.Tol:
    return check.Tol(0.0, 0.0)   # integer hashes: every bit must match


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(x, rounds, out):
    arrays.check_array("x", x, dtypes=("int32", "uint32"), libs=("cupy",))
    if not isinstance(rounds, (int, np.integer)) or isinstance(rounds, bool) or not 0 <= rounds < 2**31:
        raise ValueError(f"rounds: expected an integer in [0, 2^31), got {rounds!r}")
    out = arrays.check_out(out, x.shape, arrays.dtype_name(x), x)
    arrays.check_array("out", out, dtypes=("int32", "uint32"), libs=("cupy",))
    return out, arrays.size(x)


def div_cuda_01(x, rounds, out=None):
    """Branch on the element's parity with thread = element: every warp diverges."""
    out, n = _prepare(x, rounds, out)
    if n == 0:
        return out
    k = cuda.get_kernel(CU, "div_01_branch_on_lane_parity")
    k((math.ceil(n / THREADS),), (THREADS,), (x, out, np.int64(n), np.int32(rounds)))
    return out


def div_cuda_02(x, rounds, out=None):
    """Same branch, threads remapped so each warp holds only even or only odd elements: no divergence."""
    out, n = _prepare(x, rounds, out)
    if n == 0:
        return out
    threads_needed = 64 * math.ceil(n / 64)           # warps come in (even, odd) pairs of 64 elements
    k = cuda.get_kernel(CU, "div_02_branch_on_warp_index")
    k((math.ceil(threads_needed / THREADS),), (THREADS,), (x, out, np.int64(n), np.int32(rounds)))
    return out


def whoami(n: int, block=(THREADS, 1), spin_cycles: int = 0):
    """Launch hier_01_whoami over n threads; returns a (n, 10) int64 CuPy array of records (see FIELDS)."""
    import cupy

    bx, by = (block, 1) if isinstance(block, int) else tuple(block)
    if not (1 <= bx <= 1024 and 1 <= by <= 1024 and bx * by <= 1024):
        raise ValueError(f"block: expected (x, y) with 1 <= x * y <= 1024, got {block!r}")
    if n < 0 or spin_cycles < 0:
        raise ValueError(f"n and spin_cycles must be >= 0, got {n}, {spin_cycles}")
    blocks = math.ceil(n / (bx * by))
    if blocks > 2**31 - 1:
        raise ValueError(f"n: {n} threads need {blocks} blocks, more than gridDim.x allows (2^31 - 1)")
    rec = cupy.full((n, NFIELDS), -1, dtype=cupy.int64)
    if n:
        k = cuda.get_kernel(CU, "hier_01_whoami")
        k((blocks,), (bx, by), (rec, np.int64(n), np.int64(spin_cycles)))
    return rec


# ---------------------------------------------------------------------------------------------------------------------
# Triton: both_hashes_kernel of triton_kernels.py, one program per BLOCK elements
# ---------------------------------------------------------------------------------------------------------------------
TRITON_BLOCK = 1024


def div_triton(x, rounds, out=None):
    """Triton: tl.where over both hashes. Written as the cost of the divergent version, but the parity of each of a
    thread's elements is known at compile time, so the select folds and only one hash runs per element."""
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("int32",), device=dev)
    if not isinstance(rounds, (int, np.integer)) or isinstance(rounds, bool) or not 0 <= rounds < 2**31:
        raise ValueError(f"rounds: expected an integer in [0, 2^31), got {rounds!r}")
    out = arrays.check_out(out, x.shape, "int32", x)
    n = arrays.size(x)
    if n == 0:
        return out
    launch(both_hashes_kernel, (triton.cdiv(n, TRITON_BLOCK),), x, out, n, int(rounds), BLOCK=TRITON_BLOCK,
           num_warps=4)
    return out


VARIANTS = [
    lab.Variant("cuda 01 branch on lane parity (divergent)", div_cuda_01, "cuda", dtypes=("int32",)),
    lab.Variant("cuda 02 branch on warp index (uniform)", div_cuda_02, "cuda", dtypes=("int32",)),
    lab.Variant("triton tl.where (both sides)", div_triton, "triton", dtypes=("int32",)),
]
CHECK_CASES = [(n, "int32") for n in (1, 2, 31, 33, 63, 64, 65, 1000, 4097, 65537, 1_000_003)]
CPU_CHECK_CASES = [(n, "int32") for n in (1, 3, 64, 1025)]


# ---------------------------------------------------------------------------------------------------------------------
# The mapping: a table of a few threads, and a check of the warp rule over all of them
# ---------------------------------------------------------------------------------------------------------------------
MAP_BLOCK = (16, 4)       # a 2-D block: warps are cut from the linear index tx + ty * 16
MAP_BLOCKS = 3


def predicted_records(block=MAP_BLOCK, blocks=MAP_BLOCKS) -> np.ndarray:
    """What hier_01_whoami writes for the deterministic fields (block, tx, ty, tid, warp, lane); -1 for the rest."""
    bx, by = block
    rows = []
    for b in range(blocks):
        for ty in range(by):
            for tx in range(bx):
                tid = tx + ty * bx
                rows.append([b, tx, ty, tid, tid // 32, tid % 32, -1, -1, -1, -1])
    return np.array(rows, dtype=np.int64)


def mapping_table(rec: np.ndarray, block=MAP_BLOCK) -> list[dict]:
    """A few telling rows: both sides of the first warp boundary, the end of a block, the next block's start."""
    bx, by = block
    per = bx * by
    want = [0, 1, bx - 1, bx, 31, 32, per - 1, per, 2 * per]
    rows = []
    for r in want:
        if r < len(rec):
            d = dict(zip(FIELDS[:7], (int(v) for v in rec[r][:7])))
            if d["sm"] < 0:
                d["sm"] = "? (GPU only)"
            rows.append(d)
    return rows


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
