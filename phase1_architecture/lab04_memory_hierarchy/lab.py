"""Lab 1.4 - The memory hierarchy: bandwidth against working-set size, the latency of each level, and what shared
memory and registers deliver next to global memory.

You will learn
  * that "memory bandwidth" depends on where the bytes live: the same read kernel runs at tens of TB/s while its
    working set fits the SM's L1 (~200 KiB free of the 256 KiB L1/shared array), at about twice the HBM ceiling while
    it fits the L2 (60 MiB on an H200, in two halves), and at the HBM's own speed beyond - one sweep, three plateaus;
  * latency, which bandwidth hides: a dependent pointer chase (each address comes from the previous load) takes tens of
    cycles per step in L1, hundreds in L2 and more in HBM - at ~2 GHz, tens of ns against hundreds;
  * why the GPU is built for throughput: it hides hundreds of cycles of latency by keeping thousands of loads in
    flight (lab 1.5 turns that knob);
  * shared memory (a software-managed slice of the same L1 array, 128 B/clock/SM) and registers (three operands per
    FFMA, 128 FFMA/clock/SM: 12x shared memory) as the two levels above the caches that phase 2 kernels are built
    from.

The two numbers, for the main case of the sweep (a 4 GiB working set read once, float4 loads): bytes = 4 GiB read
(plus one float per block written), FLOPs = one add per float read, 2^30: 0.25 FLOP/B, ~55x below the ridge point of
an H200 (~14 FLOP/B): memory-bound at every level of the sweep, so the time measures the level the bytes come from.
At the HBM ceiling 4 GiB takes ~1 ms; each smaller working set is re-read until >= 2 GiB have been read, so every
point of the sweep runs long enough to time. The lesson, the predictions and this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab04_memory_hierarchy [--quick] [--no-bench] [--replot]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, check, cuda, lab
from common.triton_support import INTERPRETER, launch

from .triton_kernels import read_sweep_kernel

LAB = "phase1_lab04_memory_hierarchy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256
UNROLL = 4                       # mem_02's default (kernels.cu's macro)
TILE_FLOAT4 = 2048               # mem_04's default: 32 KiB of shared memory per block
NACC = 8                         # mem_05's default: independent FMA chains per thread
CHASE_STRIDE = 128               # bytes between pointer-chase entries: one per cache line

# Published figures the measurements are named against (sources in the strings).
PUBLISHED = {
    "l1_latency_cycles": (28, 45, "H100 PCIe ~34 cycles (te42kyfo/gpu-benches gpu-latency/h100_pcie.txt)"),
    "l2_latency_cycles": (180, 550, "H100 PCIe ~265 (near L2 half) to ~475 cycles (far half), same source"),
    "hbm_latency_cycles": (450, 1200, "H100 PCIe ~650 cycles beyond the L2, same source"),
    "l2_gbps_h200": (9700.0, "H200 L2 plateau up to ~40 MB, HBM level past ~64 MB "
                             "(te42kyfo/gpu-benches gpu-l2-cache/h200.txt)"),
    "l1_bytes_per_clock_per_sm": (128, "NVIDIA: 128 B/clock/SM from L1 and shared memory, Volta and later"),
    "ffma_per_clock_per_sm": (128, "NVIDIA: 128 FP32 FFMA/clock/SM (Hopper whitepaper)"),
}


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs: the read sweep is the checkable part of this lab
# ---------------------------------------------------------------------------------------------------------------------
def block_start(b: int, n: int, blocks: int) -> int:
    """Where block b starts reading: b * n / blocks, rounded down to a multiple of 4 (16-byte alignment)."""
    return (b * n // blocks) // 4 * 4


def reference(x, blocks: int, per_block: int) -> np.ndarray:
    """out[b] = sum of x[(s_b + j) % n] for j < per_block, from prefix sums (exact in float64)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    n = x.size
    c = np.concatenate([[0.0], np.cumsum(x)])
    full, rem = divmod(per_block, n)
    out = np.empty(blocks)
    for b in range(blocks):
        s = block_start(b, n, blocks)
        e = s + rem
        part = c[e] - c[s] if e <= n else (c[n] - c[s]) + c[e - n]
        out[b] = full * c[n] + part
    return out


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """size = (n, blocks, per_block). Small integers as floats (sums are exact in float32 below 2^24, so the check is
    exact: one element read twice or skipped fails it), plus a few outliers where a wrong index would land."""
    n, blocks, per_block = size
    x = rng.integers(1, 9, size=n).astype(np.float64)
    if n > 16:
        x[rng.integers(0, n, 4)] = 1000.0
    return arrays.from_numpy(x, "float32", where), int(blocks), int(per_block)


def tolerance(size, dtype) -> check.Tol:
    return check.Tol(0.0, 0.0)   # integer-valued sums below 2^24: float32 adds them exactly in any order


def _check_sweep_args(blocks, per_block):
    if not isinstance(blocks, (int, np.integer)) or not 1 <= blocks <= 2**31 - 1:
        raise ValueError(f"blocks: expected an integer in [1, 2^31 - 1] (gridDim.x), got {blocks!r}")
    if not isinstance(per_block, (int, np.integer)) or not 0 <= per_block < 2**40:
        raise ValueError(f"per_block: expected an integer in [0, 2^40), got {per_block!r}")


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(x, blocks, per_block, out):
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    _check_sweep_args(blocks, per_block)
    n = arrays.size(x)
    if n == 0:
        raise ValueError("x: the working set is empty; the sweep reads it cyclically, so it needs n >= 1")
    out = arrays.check_out(out, (blocks,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    return out, n


def read_cuda_01(x, blocks, per_block, out=None):
    """The reference version: 4-byte loads, any n, any alignment."""
    out, n = _prepare(x, blocks, per_block, out)
    k = cuda.get_kernel(CU, "mem_01_read_sweep_scalar")
    k((blocks,), (THREADS,), (x, np.int64(n), np.int64(per_block), out))
    return out


def float4_ok(x, n: int, per_block: int) -> bool:
    """mem_02's preconditions: aligned, whole float4s, enough float4s for one wrap per step, 32-bit indices."""
    return (arrays.aligned(x, 16) and n % 4 == 0 and per_block % 4 == 0 and n // 4 >= THREADS
            and n // 4 <= 2**31 and per_block // 4 <= 2**31)


def read_cuda_02(x, blocks, per_block, out=None):
    """16-byte loads, UNROLL in flight per thread; falls back to the scalar kernel when preconditions fail."""
    out, n = _prepare(x, blocks, per_block, out)
    if not float4_ok(x, n, per_block):
        k = cuda.get_kernel(CU, "mem_01_read_sweep_scalar")
    else:
        k = cuda.get_kernel(CU, "mem_02_read_sweep_float4")
    k((blocks,), (THREADS,), (x, np.int64(n), np.int64(per_block), out))
    return out


def pointer_chase(nxt, start: int, warm: int, steps: int):
    """Run mem_03 on a prepared next[] array; returns (final index, cycles, ns) of the timed steps."""
    import cupy

    arrays.check_array("next", nxt, dtypes=("uint32",), libs=("cupy",))
    if not (0 <= start < arrays.size(nxt)) or warm < 0 or steps < 1:
        raise ValueError(f"start must index next ({arrays.size(nxt)} entries), warm >= 0, steps >= 1; got "
                         f"{start}, {warm}, {steps}")
    out = cupy.zeros(3, dtype=cupy.int64)
    k = cuda.get_kernel(CU, "mem_03_pointer_chase")
    try:
        # the kernel uses no shared memory: ask for the whole L1/shared array as L1 (the driver's default for such a
        # kernel too, but the L1 level of the measurement depends on it, so say it)
        k.preferred_shared_memory_carveout = 0
    except Exception as e:  # noqa: BLE001 - a hint only; the measurement stays valid without it
        print(f"(could not set the L1 carve-out preference: {e})", file=sys.stderr)
    k((1,), (1,), (nxt, np.uint32(start), np.int64(warm), np.int64(steps), out))
    idx, cyc, ns = (int(v) for v in out.get())
    return idx, cyc, ns


def build_chase(nbytes: int, seed: int = 0):
    """next[] over nbytes: one random cycle through entries CHASE_STRIDE bytes apart. Returns (next, order)."""
    import cupy

    n = nbytes // 4
    per = CHASE_STRIDE // 4
    lines = n // per
    if lines < 2:
        raise ValueError(f"nbytes: a chase needs at least two {CHASE_STRIDE}-byte lines, got {nbytes} B")
    # the random order is drawn on the host (NumPy): no cuRAND needed, and the walk is reproducible from the seed
    order = cupy.asarray(np.random.default_rng(seed).permutation(lines).astype(np.uint32))
    nxt = cupy.zeros(n, dtype=cupy.uint32)
    nxt[order * per] = cupy.roll(order, -1) * per
    return nxt, order


def shared_read(x, reps: int, out=None):
    """mem_04: every block loads a 32 KiB tile of x into shared memory and reads it `reps` x 256 float4 times."""
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    tile = 4 * TILE_FLOAT4
    n = arrays.size(x)
    if n == 0 or n % tile or not arrays.aligned(x, 16):
        raise ValueError(f"x: expected a 16-byte aligned array of a positive multiple of {tile} floats (one tile per "
                         f"block), got {n} elements")
    if not isinstance(reps, (int, np.integer)) or reps < 0 or (reps * THREADS) % TILE_FLOAT4 or reps >= 2**30:
        raise ValueError(f"reps: expected a multiple of {TILE_FLOAT4 // THREADS} in [0, 2^30) (every tile element is "
                         f"then read equally often), got {reps!r}")
    blocks = n // tile
    out = arrays.check_out(out, (blocks,), "float32", x)
    k = cuda.get_kernel(CU, "mem_04_shared_read")
    k((blocks,), (THREADS,), (x, np.int32(reps), out))
    return out


def shared_read_reference(x, reps: int) -> np.ndarray:
    tiles = np.asarray(x, np.float64).reshape(-1, 4 * TILE_FLOAT4)
    return tiles.sum(axis=1) * (reps * THREADS // TILE_FLOAT4)


def register_fma(x, iters: int, m: float, c: float, out=None):
    """mem_05: NACC chains a = a * m + c per thread for `iters` iterations; out[t] = sum of the chains."""
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    if not isinstance(iters, (int, np.integer)) or not 0 <= iters < 2**31:
        raise ValueError(f"iters: expected an integer in [0, 2^31), got {iters!r}")
    n = arrays.size(x)
    out = arrays.check_out(out, x.shape, "float32", x)
    if n == 0:
        return out
    k = cuda.get_kernel(CU, "mem_05_register_fma")
    k((math.ceil(n / THREADS),), (THREADS,), (x, out, np.int64(n), np.int32(iters), np.float32(m), np.float32(c)))
    return out


def register_fma_reference(x, iters: int, m: float, c: float) -> np.ndarray:
    x = np.asarray(x, np.float64)
    m, c = float(np.float32(m)), float(np.float32(c))
    total = np.zeros_like(x)
    for j in range(NACC):
        a = x + j * 0.0009765625
        mk = m ** iters
        geo = iters if m == 1.0 else (1 - mk) / (1 - m)
        total += a * mk + c * geo
    return total


# ---------------------------------------------------------------------------------------------------------------------
# Triton: read_sweep_kernel of triton_kernels.py, one program per block, the same cyclic range, tl.sum at the end
# ---------------------------------------------------------------------------------------------------------------------
TRITON_BLOCK = 1024


def read_triton(x, blocks, per_block, out=None):
    """The read sweep in Triton (CuPy/torch on a GPU, NumPy/torch CPU arrays in the interpreter)."""
    arrays.check_array("x", x, dtypes=("float32",), device=not INTERPRETER)
    _check_sweep_args(blocks, per_block)
    n = arrays.size(x)
    if n == 0:
        raise ValueError("x: the working set is empty; the sweep reads it cyclically, so it needs n >= 1")
    out = arrays.check_out(out, (blocks,), "float32", x)
    launch(read_sweep_kernel, (int(blocks),), x, out, n, int(per_block), BLOCK=TRITON_BLOCK,
           WRAP_MOD=n < TRITON_BLOCK, num_warps=4)
    return out


VARIANTS = [
    lab.Variant("cuda 01 scalar loads", read_cuda_01, "cuda"),
    lab.Variant("cuda 02 float4 x4 in flight", read_cuda_02, "cuda"),
    lab.Variant("triton", read_triton, "triton"),
]
CHECK_CASES = [((n, b, p), "float32") for n, b, p in [
    (1, 1, 1), (5, 3, 7), (1000, 7, 2500), (4096, 4, 4096), (4097, 300, 8), (8, 5, 0), (65536, 16, 100_000),
    (65536, 33, 262_144), (1_000_003, 33, 50_001), (262_144, 64, 1_048_576), (1 << 20, 1056, 4096)]]
CPU_CHECK_CASES = [((n, b, p), "float32") for n, b, p in [(1, 1, 1), (5, 3, 7), (1000, 7, 2500), (4096, 4, 4096)]]


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
