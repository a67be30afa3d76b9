"""Lab 1.4 - The memory hierarchy: bandwidth against working-set size, the latency of each level, and what shared
memory and registers deliver next to global memory.

You will learn
  * that "memory bandwidth" depends on where the bytes live: the same read kernel runs at tens of TB/s while its
    working set fits the SM's L1 (~200 KiB free of the 256 KiB L1/shared array), at ~10 TB/s while it fits the L2
    (60 MiB on an H200, in two halves), and at the HBM's ~4 TB/s beyond - one sweep, three plateaus;
  * latency, which bandwidth hides: a dependent pointer chase (each address comes from the previous load) takes
    ~40 cycles per step in L1, ~290-520 in L2 and ~670 in HBM; at ~2 GHz that is ~20 ns against ~340 ns (measured;
    the ~30 cycles predicted for L1 were low, see below);
  * why the GPU is built for throughput: it hides hundreds of cycles of latency by keeping thousands of loads in
    flight (lab 1.5 turns that knob);
  * shared memory (a software-managed slice of the same L1 array, ~128 B/clock/SM) and registers (three operands per
    FFMA, 128 FFMA/clock/SM: ~400 TB/s; 342 measured) as the two levels above the caches that phase 2 kernels are
    built from.

The two numbers, for the main case of the sweep (a 4 GiB working set read once, float4 loads): bytes = 4 GiB read
(plus one float per block written), FLOPs = one add per float read, 2^30: 0.25 FLOP/B, ~55x below an H200's ridge
point (67 TFLOP/s / 4.8 TB/s = 14 FLOP/B): memory-bound at every level of the sweep, so the time measures the
level the bytes come from. At ~4 TB/s 4 GiB takes ~1.1 ms; at the L2's ~10 TB/s, the 2 GiB of re-reads the sweep
makes of a 16 MiB working set take ~0.2 ms.

Measured on an H200 (results/h200/phase1_lab04_memory_hierarchy.json, commit 173e2d9; HBM ceiling 4,341 GB/s):
  * three plateaus, as predicted. L1: 29.3-29.8 TB/s for working sets of 8 KiB to 192 KiB (median 29,694 GB/s,
    0.89 of 128 B/clock/SM x 132 x 1980 MHz = 33,454), falling to 19.9 TB/s at 256 KiB. Between 256 KiB and
    1.5 MiB, 11-20 TB/s (part L1, part L2). L2: 9.1-10.2 TB/s from 2 to 24 MiB (median 9,725 GB/s over 2-15 MiB,
    level with the published ~9.7 TB/s), 8.6-9.0 TB/s from 32 to 54 MiB, then 7.7 TB/s at 64 MiB, 6.9 at 75 MiB
    (where it crosses the L2/HBM midpoint: 1.25x the 60 MiB L2, inside the 0.5-1.5x target) and 4.8 at 128 MiB. HBM:
    median 4,183 GB/s from 512 MiB up (0.96 of the ceiling, 0.87 of the 4.8 TB/s datasheet); the 4 GiB main case
    took 1.04 ms, 4,120 GB/s, and the 16 MiB point 0.234 ms, 9,177 GB/s.
  * latency (one thread, clock64): L1 39.6 cycles (20.0 ns), 1.3x the ~30 predicted but inside the published
    28-45; each step also waits for the IMAD.WIDE that turns the index into an address (the SASS has one per
    step), which a chase over stored pointers would not. L2 287 cycles (145 ns) for 1-24 MiB, which fit the near
    half; 522 cycles (263 ns) at 45 MiB, more than a half holds, so many loads cross to the far half. HBM 665-674
    cycles (336-340 ns). All in the published ranges; every chase ended where the host's walk does.
  * shared memory (mem_04): 31,534 GB/s, 0.94 of 128 B/clock/SM, a little above global loads that hit L1 (0.89).
    Registers (mem_05): 342 TB/s of FFMA operands, 57.0 TFLOP/s, 0.85 of the 401 TB/s (66.9 TFLOP/s) peak. The
    loop's counter, compare and branch take 3 of every 35 issue slots (at most 0.91); the rest is not explained by
    this run (the SM clock under an all-SM FFMA load, which the power limit can lower, was not recorded).
  * Triton (same contract, 4 warps a program) reached 4,676 GB/s at 64 KiB, 4,258 at 16 MiB and 3,151 at 1 GiB:
    0.16, 0.46 and 0.76 of mem_02. It never left HBM speed even when the data sat in L1: its loads are 4 bytes
    wide (after the tl.where wrap it cannot prove four neighbouring addresses contiguous, so no 16-byte loads) and
    every 1024-element tile pays a 64-bit modulo, so it is most likely bound by instructions, not by a memory level
    (a compile for sm_90 shows ld.global.b32 and a rem.s64 in the loop).

Run: python -m phase1_architecture.lab04_memory_hierarchy [--quick] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, occupancy, report
from common.device import GiB, KiB, MiB
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase1_lab04_memory_hierarchy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab04_memory_hierarchy.cu")
THREADS = 256
UNROLL = 4                       # mem_02's default (the .cu file's macro)
TILE_FLOAT4 = 2048               # mem_04's default: 32 KiB of shared memory per block
NACC = 8                         # mem_05's default: independent FMA chains per thread
CHASE_STRIDE = 128               # bytes between pointer-chase entries: one per cache line

# Published figures the measurements are named against (sources in the strings).
PUBLISHED = {
    "l1_latency_cycles": (28, 45, "H100 PCIe ~34 cycles (te42kyfo/gpu-benches gpu-latency/h100_pcie.txt)"),
    "l2_latency_cycles": (180, 550, "H100 PCIe ~265 (near L2 half) to ~475 cycles (far half), same source"),
    "hbm_latency_cycles": (450, 1200, "H100 PCIe ~650 cycles beyond the L2, same source"),
    "l2_gbps_h200": (9700.0, "H200 ~9.7-10 TB/s up to ~40 MB, HBM level past ~64 MB "
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
# Triton: one program per block, the same cyclic range, tl.sum at the end. Measured on an H200: 4,676 / 4,258 /
# 3,151 GB/s at 64 KiB / 16 MiB / 1 GiB, 0.16 / 0.46 / 0.76 of mem_02: 4-byte loads (the wrapped index hides the
# contiguity Triton needs for 16-byte ones) and a 64-bit modulo per tile keep it at about HBM speed at every level.
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def read_sweep_kernel(x_ptr, out_ptr, n, per_block, BLOCK: tl.constexpr, WRAP_MOD: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    nb = tl.num_programs(0).to(tl.int64)
    s = (b * n // nb) // 4 * 4
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, per_block, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        mask = offs < per_block
        if WRAP_MOD:                     # a working set smaller than BLOCK wraps several times within one tile
            k = (s + offs) % n
        else:                            # one scalar modulo per tile, then at most one wrap per element
            k = (s + j) % n + tl.arange(0, BLOCK)
            k = tl.where(k >= n, k - n, k)
        acc += tl.load(x_ptr + k, mask=mask, other=0.0)
    tl.store(out_ptr + b, tl.sum(acc, axis=0))


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
# GPU measurements
# ---------------------------------------------------------------------------------------------------------------------
def _blocks_for(kernel_name: str) -> tuple[int, int]:
    """A grid that fills every SM once, from the kernel's own registers and the occupancy calculator."""
    d = device.info()
    k = cuda.get_kernel(CU, kernel_name)
    occ = occupancy.occupancy(d.arch, THREADS, int(k.num_regs), int(k.shared_size_bytes))
    return d.sms * occ.blocks_per_sm, occ.blocks_per_sm


def sweep_sizes(quick: bool, l2_bytes: int) -> list[int]:
    """Working sets in bytes: 8 KiB .. 4 GiB at two points per octave, plus extra points around the L2 size."""
    if quick:
        return [2**k for k in range(14, 29, 2)]
    sizes = {int(m * 2**k) for k in range(13, 32) for m in (1, 1.5)} | {2**32}
    sizes |= {int(f * l2_bytes) // 4096 * 4096 for f in (0.6, 0.7, 0.8, 0.9, 1.1, 1.25)}
    return sorted(sizes)


def bandwidth_sweep(sizes: list[int], ceiling_gbps: float, with_triton: tuple[int, ...] = ()) -> list[dict]:
    import cupy

    blocks, _ = _blocks_for("mem_02_read_sweep_float4")
    x_all = cupy.ones(max(sizes) // 4, dtype=cupy.float32)
    out = cupy.empty(blocks, dtype=cupy.float32)
    rows = []
    for w in cli.progress(sizes, "working sets"):
        n = w // 4
        x = x_all[:n]
        total = max(w, 2 * GiB)                          # bytes read per call: >= 2 GiB, ~80 us even at L1 speed
        per_block = (total // 4 // blocks) // 4 * 4
        t = bench.bench(lambda: read_cuda_02(x, blocks, per_block, out=out), flush_l2=False, warmup_ms=5, rep_ms=20)
        rows.append(report.row(LAB, "cuda 02 float4 x4 in flight", "cuda", (n,), "float32", t,
                               nbytes=4 * blocks * per_block, flops=blocks * per_block, ceiling_gbps=ceiling_gbps,
                               working_set_bytes=w, blocks=blocks, per_block=per_block))
        if w in with_triton:
            t = bench.bench(lambda: read_triton(x, blocks, per_block, out=out), flush_l2=False, warmup_ms=5,
                            rep_ms=20)
            rows.append(report.row(LAB, "triton", "triton", (n,), "float32", t, nbytes=4 * blocks * per_block,
                                   flops=blocks * per_block, ceiling_gbps=ceiling_gbps, working_set_bytes=w,
                                   blocks=blocks, per_block=per_block))
    x = x_all = out = None
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def chase_sizes(quick: bool, l2_bytes: int) -> list[int]:
    if quick:
        return [16 * KiB, 1 * MiB, 256 * MiB]
    return [16 * KiB, 64 * KiB, 128 * KiB, 1 * MiB, 8 * MiB, int(0.4 * l2_bytes) // MiB * MiB,
            int(0.75 * l2_bytes) // MiB * MiB, 128 * MiB, 512 * MiB, 2 * GiB]


def level_of(nbytes: int, l2_bytes: int) -> str:
    if nbytes <= 128 * KiB:
        return "L1"
    if nbytes <= l2_bytes // 2:
        return "L2 (fits half)"
    if nbytes <= l2_bytes:
        return "L2 (full)"
    if nbytes <= 2 * l2_bytes:
        return "L2 edge"
    return "HBM"


def latency_sweep(sizes: list[int]) -> list[dict]:
    import cupy

    d = device.info()
    rows = []
    for w in cli.progress(sizes, "pointer chase"):
        nxt, order = build_chase(w, seed=w % 9973)
        lines = int(order.size)
        steps = 2**15 if w <= 64 * MiB else 2**14
        warm = 2 * lines if lines <= 2**16 else (lines if w <= 2 * d.l2_bytes else 0)
        start = int(order[0]) * (CHASE_STRIDE // 4)
        idx, cyc, ns = pointer_chase(nxt, start, warm, steps)
        expect = int(order[(warm + steps) % lines]) * (CHASE_STRIDE // 4)
        rows.append({"working_set_bytes": w, "level": level_of(w, d.l2_bytes), "steps": steps, "warm": warm,
                     "cycles_per_load": cyc / steps, "ns_per_load": ns / steps,
                     "clock_mhz_seen": cyc / ns * 1e3 if ns else None, "chase_ok": idx == expect})
        del nxt, order
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def level_bandwidths(sweep: list[dict], l2_bytes: int) -> dict:
    """The plateau of each level from the sweep (medians over working sets that sit clearly inside each level)."""
    cu = [r for r in sweep if r["variant"].startswith("cuda")]

    def med(lo, hi):
        v = [r["gbps"] for r in cu if lo <= r["working_set_bytes"] <= hi]
        return float(np.median(v)) if v else None

    return {"L1": med(16 * KiB, 96 * KiB), "L2": med(2 * MiB, l2_bytes // 4),
            "HBM": med(8 * l2_bytes, 2**40)}


def l2_edge(sweep: list[dict], levels: dict) -> float | None:
    """The smallest working set past 2 MiB whose bandwidth falls below the midpoint between the L2 and HBM levels."""
    if not levels.get("L2") or not levels.get("HBM"):
        return None
    mid = (levels["L2"] + levels["HBM"]) / 2
    for r in sorted((r for r in sweep if r["variant"].startswith("cuda")), key=lambda r: r["working_set_bytes"]):
        if r["working_set_bytes"] > 2 * MiB and r["gbps"] < mid:
            return float(r["working_set_bytes"])
    return None


def on_chip_bandwidths() -> list[dict]:
    """Shared memory (mem_04) and registers (mem_05), each filling the GPU."""
    import cupy

    d = device.info()
    rows = []
    blocks, _ = _blocks_for("mem_04_shared_read")
    x = cupy.ones(blocks * 4 * TILE_FLOAT4, dtype=cupy.float32)
    out = cupy.empty(blocks, dtype=cupy.float32)
    reps = 2048
    t = bench.bench(lambda: shared_read(x, reps, out=out), flush_l2=False, warmup_ms=5, rep_ms=30)
    rows.append(report.row(LAB, "shared memory (mem_04, LDS.128)", "cuda", (blocks,), "float32", t,
                           nbytes=blocks * reps * THREADS * 16, level="shared"))
    n = d.sms * d.max_threads_per_sm * 4
    xr = cupy.ones(n, dtype=cupy.float32)
    yr = cupy.empty_like(xr)
    iters = 2048
    t = bench.bench(lambda: register_fma(xr, iters, 0.999, 0.001, out=yr), flush_l2=False, warmup_ms=5, rep_ms=30)
    ffma = n * NACC * iters
    rows.append(report.row(LAB, "registers (mem_05, FFMA operands)", "cuda", (n,), "float32", t,
                           nbytes=12 * ffma, flops=2 * ffma, level="registers"))
    x = out = xr = yr = None
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------------
def _size_ticks(lo, hi):
    ticks, labels = [], []
    for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1, 2):
        ticks.append(2**k)
        v = 2**k
        labels.append(f"{v // GiB} GiB" if v >= GiB else f"{v // MiB} MiB" if v >= MiB else f"{v // KiB} KiB")
    return ticks, labels


def plot_bandwidth(sweep: list[dict], levels: dict, ceiling: dict, path: str) -> str:
    d = device.info()
    cu = [r for r in sweep if r["impl"] == "cuda"]          # Triton's three points are in the table, not the curve
    xs = sorted({r["working_set_bytes"] for r in cu})
    series = {}
    for name in dict.fromkeys(r["variant"] for r in cu):
        by = {r["working_set_bytes"]: r["gbps"] for r in cu if r["variant"] == name}
        series[name] = [by.get(x) for x in xs]
    l1_pub = PUBLISHED["l1_bytes_per_clock_per_sm"][0] * d.sms * d.sm_clock_mhz / 1e3
    hl = {f"L1/shared published: 128 B/clk/SM x {d.sms} x {d.sm_clock_mhz:.0f} MHz = {l1_pub:,.0f} GB/s": l1_pub,
          f"measured HBM ceiling {ceiling['hbm_gbps']:,.0f} GB/s ({ceiling['hbm_method']})": ceiling["hbm_gbps"]}
    if "H200" in d.name:
        hl[f"published H200 L2 ~{PUBLISHED['l2_gbps_h200'][0]:,.0f} GB/s (gpu-benches)"] = PUBLISHED["l2_gbps_h200"][0]
    if d.datasheet.get("hbm_gbps"):
        hl[f"datasheet HBM {d.datasheet['hbm_gbps']:,} GB/s"] = d.datasheet["hbm_gbps"]
    ticks, labels = _size_ticks(xs[0], xs[-1])
    return report.plot_lines(
        path, xs, series, xlabel="working set (bytes, log scale)", ylabel="GB/s read", logy=True,
        title=f"{d.name}: read bandwidth vs working set (L2 not flushed, every block re-reads its range)",
        hlines=hl, vlines={"L1+shared 256 KiB/SM": 256 * KiB, f"L2 {d.l2_bytes / MiB:.0f} MiB": d.l2_bytes,
                           f"L2 half {d.l2_bytes / 2 / MiB:.0f} MiB": d.l2_bytes / 2},
        xticks=ticks, xticklabels=labels)


def plot_latency(lat: list[dict], path: str) -> str:
    d = device.info()
    xs = [r["working_set_bytes"] for r in lat]
    hl = {}
    for key, label in (("l1_latency_cycles", "L1"), ("l2_latency_cycles", "L2"), ("hbm_latency_cycles", "HBM")):
        lo, hi, _ = PUBLISHED[key]
        hl[f"published {label}: {lo}-{hi} cycles"] = (lo + hi) / 2
    ticks, labels = _size_ticks(xs[0], xs[-1])
    return report.plot_lines(
        path, xs, {"cycles per dependent load": [r["cycles_per_load"] for r in lat],
                   "ns per dependent load": [r["ns_per_load"] for r in lat]},
        xlabel="working set of the pointer chase (bytes)", ylabel="latency per load", logy=True,
        title=f"{d.name}: pointer-chase latency (one thread, random 128-byte lines)", hlines=hl,
        vlines={f"L2 {d.l2_bytes / MiB:.0f} MiB": d.l2_bytes}, xticks=ticks, xticklabels=labels)


def plot_levels(lvl_rows: list[dict], path: str) -> str:
    """Measured and published bandwidth of each level, log scale (the levels span two orders of magnitude)."""
    plt = report.pyplot()
    rows = [r for r in lvl_rows if r["measured GB/s"]]
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.8))
    ys = np.arange(len(rows))[::-1]
    ax.barh(ys + 0.2, [r["measured GB/s"] for r in rows], height=0.4, color="tab:blue", label="measured")
    pub = [(y, r["published GB/s"]) for y, r in zip(ys, rows) if r["published GB/s"]]
    ax.barh([y - 0.2 for y, _ in pub], [v for _, v in pub], height=0.4, color="tab:gray", label="published")
    for y, r in zip(ys, rows):
        ax.annotate(f"{r['measured GB/s']:,.0f}", xy=(r["measured GB/s"], y + 0.2), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.set_xscale("log")
    ax.set_yticks(ys)
    ax.set_yticklabels([r["level"] for r in rows], fontsize=9)
    ax.set_xlabel("GB/s (log scale)")
    ax.set_title(f"{device.info().name}: bandwidth of each level of the hierarchy", fontsize=11)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
def show_compile_report(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="mem_02_read_sweep_float4")
    k = rep.kernels.get("mem_02_read_sweep_float4")
    if k is not None and k.sass:
        c = k.sass_counts
        print(f"-> mem_02 issues {c.get('LDG.128', 0)} x LDG.E.128 in its loop: {UNROLL} independent 16-byte loads "
              "before the first add (Little's law: bytes in flight hide latency).")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:2] if args.quick else CPU_CHECK_CASES)
        show_compile_report(args.arch)
        a = device.arch_info(args.arch)
        print(f"\nWhat the GPU run would show on {a.example_gpu}: an L1 plateau up to ~200 KiB, an L2 plateau up to "
              f"~{a.example_l2_bytes / MiB:.0f} MiB (or earlier: the L2 of A100/H100/H200 is split in two halves), then "
              f"HBM at <= {a.example_hbm_gbps:.0f} GB/s; latencies of ~30 / ~250-500 / ~600+ cycles.")
        print("CUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS, CHECK_CASES[:6] if args.quick else CHECK_CASES)
    show_compile_report(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    d = device.info()
    ceiling = bench.ceilings()
    out_dir = args.out or report.results_dir()
    os.makedirs(out_dir, exist_ok=True)
    sizes = sweep_sizes(args.quick, d.l2_bytes)
    tri = tuple(s for s in (64 * KiB, 16 * MiB, 1 * GiB) if s in sizes) if not args.quick else ()
    sweep = bandwidth_sweep(sizes, ceiling["hbm_gbps"], with_triton=tri)
    levels = level_bandwidths(sweep, d.l2_bytes)
    edge = l2_edge(sweep, levels)
    lat = latency_sweep(chase_sizes(args.quick, d.l2_bytes))
    onchip = on_chip_bandwidths()
    report.print_table([r for r in sweep if r["variant"].startswith("cuda")],
                       ["working_set_bytes", "ms", "gbps", "frac_ceiling", "per_block"],
                       title="Read bandwidth vs working set (cuda 02, float4)")
    tri_rows = []
    for r in (r for r in sweep if r["impl"] == "triton"):
        c = next(q for q in sweep if q["impl"] == "cuda" and q["working_set_bytes"] == r["working_set_bytes"])
        tri_rows.append({"working_set_bytes": r["working_set_bytes"], "cuda 02 GB/s": c["gbps"],
                         "triton GB/s": r["gbps"], "triton / cuda": r["gbps"] / c["gbps"]})
    if tri_rows:
        report.print_table(tri_rows, title="The same sweep in Triton, at one working set per level")
    report.print_table(lat, title="Pointer-chase latency")
    report.print_table(onchip, ["variant", "ms", "gbps", "tflops"], title="On-chip levels")
    l1_pub = PUBLISHED["l1_bytes_per_clock_per_sm"][0] * d.sms * d.sm_clock_mhz / 1e3
    lvl_rows = [
        {"level": "registers (FFMA operands)", "measured GB/s": onchip[1]["gbps"],
         "published GB/s": 12 * PUBLISHED["ffma_per_clock_per_sm"][0] * d.sms * d.sm_clock_mhz / 1e3,
         "source": PUBLISHED["ffma_per_clock_per_sm"][1]},
        {"level": "shared memory", "measured GB/s": onchip[0]["gbps"], "published GB/s": l1_pub,
         "source": PUBLISHED["l1_bytes_per_clock_per_sm"][1]},
        {"level": "L1 (global loads)", "measured GB/s": levels["L1"], "published GB/s": l1_pub,
         "source": PUBLISHED["l1_bytes_per_clock_per_sm"][1]},
        {"level": "L2", "measured GB/s": levels["L2"],
         "published GB/s": PUBLISHED["l2_gbps_h200"][0] if "H200" in d.name else None,
         "source": PUBLISHED["l2_gbps_h200"][1]},
        {"level": "HBM", "measured GB/s": levels["HBM"], "published GB/s": d.datasheet.get("hbm_gbps"),
         "source": "datasheet"},
    ]
    report.print_table(lvl_rows, title="Each level against its published figure")
    targets = []

    def lat_target(level_names, key):
        v = [r["cycles_per_load"] for r in lat if r["level"] in level_names]
        lo, hi, src = PUBLISHED[key]
        if v:
            m = float(np.median(v))
            targets.append({"target": f"{'/'.join(level_names)} latency in the published range", "measured": m,
                            "range": f"{lo}-{hi} cycles", "source": src, "met": lo <= m <= hi})

    lat_target(("L1",), "l1_latency_cycles")
    lat_target(("L2 (fits half)",), "l2_latency_cycles")
    lat_target(("HBM",), "hbm_latency_cycles")
    if edge:
        targets.append({"target": "L2 plateau ends near the L2 size (0.5x .. 1.5x)", "measured": edge / MiB,
                        "range": f"{0.5 * d.l2_bytes / MiB:.0f}-{1.5 * d.l2_bytes / MiB:.0f} MiB",
                        "source": f"cudaDevAttrL2CacheSize = {d.l2_bytes / MiB:.0f} MiB",
                        "met": 0.5 * d.l2_bytes <= edge <= 1.5 * d.l2_bytes})
    targets.append({"target": "every pointer chase ended where the host's walk ends", "measured":
                    sum(r["chase_ok"] for r in lat), "range": f"{len(lat)} of {len(lat)}", "source": "-",
                    "met": all(r["chase_ok"] for r in lat)})
    report.print_table(targets, title="Predictions and published ranges vs measurement")
    ok = all(r["chase_ok"] for r in lat)
    if args.json:
        print("wrote", report.write_json(LAB, sweep + onchip, out_dir=out_dir, latency=lat, levels=levels,
                                         l2_edge_bytes=edge, level_table=lvl_rows, targets=targets,
                                         published=PUBLISHED, ceiling=ceiling, device=d.as_dict()))
    if args.plot:
        print("wrote", plot_bandwidth(sweep, levels, ceiling, os.path.join(out_dir, f"{LAB}_bandwidth.png")))
        print("wrote", plot_latency(lat, os.path.join(out_dir, f"{LAB}_latency.png")))
        print("wrote", plot_levels(lvl_rows, os.path.join(out_dir, f"{LAB}_levels.png")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
