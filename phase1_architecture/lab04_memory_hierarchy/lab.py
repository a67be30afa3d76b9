"""Lab 1.4 - The memory hierarchy: bandwidth against working-set size, the latency of each level, and what shared
memory and registers deliver next to global memory.

You will learn
  * that "memory bandwidth" depends on where the bytes live: the same read kernel runs at tens of TB/s while its
    working set fits the SM's L1 (most of its unified L1/shared array), several times faster than HBM while it fits
    the L2 (some GPUs split it in two halves), and at the HBM's own speed beyond - one sweep, three plateaus, whose
    edges this GPU's L1 and L2 sizes predict (`--plan` prints them);
  * latency, which bandwidth hides: a dependent pointer chase (each address comes from the previous load) takes tens of
    cycles per step in L1, hundreds in L2 and more in HBM - at ~2 GHz, tens of ns against hundreds;
  * why the GPU is built for throughput: it hides hundreds of cycles of latency by keeping thousands of loads in
    flight (lab 1.5 turns that knob);
  * shared memory (a software-managed slice of the same L1 array, 128 B/clock/SM) and registers (three operands per
    FFMA, one FFMA per FP32 lane per clock: 12x shared memory on a GPU of 128 lanes per SM) as the two levels above
    the caches that phase 2 kernels are built from.

The two numbers, for the main case of the sweep (a 4 GiB working set read once, float4 loads): bytes = 4 GiB read
(plus one float per block written), FLOPs = one add per float read, 2^30: 0.25 FLOP/B, far below the ridge point of
any current GPU (`--plan` prints this GPU's): memory-bound at every level of the sweep, so the time measures the
level the bytes come from. At the HBM ceiling 4 GiB take a millisecond or more; each smaller working set is re-read
until >= 2 GiB have been read, so every point of the sweep runs long enough to time. The lesson, the predictions and
this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab04_memory_hierarchy [--quick] [--no-bench] [--replot] [--plan [--gpu NAME]]
     [--set UNROLL=8]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, check, config, cuda, device, gpu_specs, lab, occupancy, plan
from common.device import GiB, KiB
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import read_sweep_kernel

LAB = "phase1_lab04_memory_hierarchy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256                    # threads per block of every CUDA C kernel of the lab (any multiple of 32)
CHASE_STRIDE = 128               # bytes between pointer-chase entries: one per cache line
SWEEP_TOP = 4 * GiB              # the sweep's largest working set (scaled down where the GPU's memory cannot hold it)
SWEEP_MIN_READ = 2 * GiB         # every point of the sweep reads at least this much (a smaller set is re-read)

# The kernels' compile-time parameters (the lab's defaults; `--set UNROLL=8` and the like override them):
UNROLL = 4                       # mem_02: independent 16-byte loads in flight per thread
TILE_FLOAT4 = 2048               # mem_04: float4 per shared-memory tile (32 KiB: within the 48 KiB any GPU gives a
                                 # block statically)
NACC = 8                         # mem_05: independent FMA chains per thread

# What the measurements are named against. Latencies: ranges around the pointer-chase figures published for recent
# NVIDIA GPUs (te42kyfo/gpu-benches gpu-latency; the lesson, README.md, has the figures); a GPU of another kind may land
# outside them, which is then a finding, not a bug. Bandwidths come from the GPU in use: 128 B per clock per SM for L1
# and shared memory, one FFMA per FP32 lane per clock (device.arch_info(arch).fp32_lanes_per_sm) for registers.
PUBLISHED = {
    "l1_latency_cycles": (28, 45, "published L1 latencies of recent NVIDIA GPUs, ~30-40 cycles (README.md)"),
    "l2_latency_cycles": (180, 550, "published L2 latencies, near to far L2 half (README.md)"),
    "hbm_latency_cycles": (450, 1200, "published DRAM latencies beyond the L2 (README.md)"),
    "l1_bytes_per_clock_per_sm": (128, "NVIDIA: 128 B/clock/SM from L1 and shared memory, Volta and later"),
}


def kernel_configs() -> list[config.Resolved]:
    """The three kernel families' configurations, each resolved (default, then --set)."""
    return [config.resolve("mem_02_read_sweep_float4", {"UNROLL": UNROLL}, validate=_check_unroll),
            config.resolve("mem_04_shared_read", {"TILE_FLOAT4": TILE_FLOAT4}, validate=_check_tile),
            config.resolve("mem_05_register_fma", {"NACC": NACC}, validate=_check_nacc)]


def _check_unroll(v: dict) -> dict:
    if v["UNROLL"] not in (1, 2, 4, 8, 16):
        raise ValueError(tr("mem_02: UNROLL in 1, 2, 4, 8, 16; got {got}", got=config.fmt(v)))
    return v


def _check_tile(v: dict) -> dict:
    t = v["TILE_FLOAT4"]
    if t < THREADS or t & (t - 1) or 16 * t > 48 * KiB:
        raise ValueError(tr("mem_04: TILE_FLOAT4 a power of two from {lo} (one float4 per thread) to {hi} (48 KiB of "
                            "static shared memory); got {got}", lo=THREADS, hi=48 * KiB // 16, got=config.fmt(v)))
    return v


def _check_nacc(v: dict) -> dict:
    if not 1 <= v["NACC"] <= 32:
        raise ValueError(tr("mem_05: NACC in 1..32; got {got}", got=config.fmt(v)))
    return v


def defines() -> dict:
    """The -D values every kernel of kernels.cu is compiled with (one module: one set of values for the file)."""
    out = {}
    for r in kernel_configs():
        out.update(r.values)
    return out


def kernel(name: str):
    return cuda.get_kernel(CU, name, defines=defines())


def l1_bytes(gpu: device.DeviceInfo) -> int:
    """The most L1 a kernel with (almost) no shared memory gets on `gpu`: its unified L1/shared array less the smallest
    shared-memory carve-out (common/gpu_specs.py's architecture entry)."""
    a = device.arch_info(gpu.arch)
    # an architecture the table lacks (common.device.register_arch) borrows the entry it was modelled on
    lim = gpu_specs.ARCH_LIMITS.get(a.arch)
    if lim is None:
        older = [k for k in gpu_specs.ARCH_LIMITS if device.arch_info(k).cc <= a.cc]
        lim = gpu_specs.ARCH_LIMITS[max(older, key=lambda k: device.arch_info(k).cc)]
    return (lim["l1_smem_kib"] - min(lim["smem_carveouts_kib"])) * KiB


def resident_grid(gpu: device.DeviceInfo, kernel_name: str) -> tuple[int, int]:
    """(blocks that fill every SM once, blocks per SM): the occupancy calculator on the kernel's own registers and
    shared memory on `gpu` (read off the loaded kernel on a real GPU, an NVRTC compile for a simulated one)."""
    regs, smem = cuda.resources(CU, kernel_name, gpu, defines=defines())
    occ = occupancy.occupancy(gpu.arch, THREADS, regs, smem)
    return gpu.sms * max(1, occ.blocks_per_sm), max(1, occ.blocks_per_sm)


def per_block_for(working_set: int, blocks: int) -> int:
    """Floats each block reads so that the sweep reads max(working set, SWEEP_MIN_READ) bytes in all (a multiple of 4:
    mem_02 reads whole float4s)."""
    total = max(working_set, SWEEP_MIN_READ)
    return (total // 4 // blocks) // 4 * 4


def fma_elements(gpu: device.DeviceInfo) -> int:
    """mem_05's threads: four times what the GPU holds at once."""
    return gpu.sms * gpu.max_threads_per_sm * 4


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
    k = kernel("mem_01_read_sweep_scalar")
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
        k = kernel("mem_01_read_sweep_scalar")
    else:
        k = kernel("mem_02_read_sweep_float4")
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
    k = kernel("mem_03_pointer_chase")
    try:
        # the kernel uses no shared memory: ask for the whole L1/shared array as L1 (the driver's default for such a
        # kernel too, but the L1 level of the measurement depends on it, so say it)
        k.preferred_shared_memory_carveout = 0
    except Exception as e:  # noqa: BLE001 - a hint only; the measurement stays valid without it
        print(tr("(could not set the L1 carve-out preference: {error})", error=e), file=sys.stderr)
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


def tile_float4() -> int:
    """mem_04's tile in float4, as resolved (default, or --set TILE_FLOAT4=...)."""
    return kernel_configs()[1]["TILE_FLOAT4"]


def shared_read(x, reps: int, out=None):
    """mem_04: every block loads a tile of x (TILE_FLOAT4 float4: 32 KiB by default) into shared memory and reads it
    `reps` x 256 float4 times."""
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    tf4 = tile_float4()
    tile = 4 * tf4
    n = arrays.size(x)
    if n == 0 or n % tile or not arrays.aligned(x, 16):
        raise ValueError(f"x: expected a 16-byte aligned array of a positive multiple of {tile} floats (one tile per "
                         f"block), got {n} elements")
    if not isinstance(reps, (int, np.integer)) or reps < 0 or (reps * THREADS) % tf4 or reps >= 2**30:
        raise ValueError(f"reps: expected a multiple of {tf4 // THREADS} in [0, 2^30) (every tile element is "
                         f"then read equally often), got {reps!r}")
    blocks = n // tile
    out = arrays.check_out(out, (blocks,), "float32", x)
    k = kernel("mem_04_shared_read")
    k((blocks,), (THREADS,), (x, np.int32(reps), out))
    return out


def shared_read_reference(x, reps: int) -> np.ndarray:
    tf4 = tile_float4()
    tiles = np.asarray(x, np.float64).reshape(-1, 4 * tf4)
    return tiles.sum(axis=1) * (reps * THREADS // tf4)


def register_fma(x, iters: int, m: float, c: float, out=None):
    """mem_05: NACC chains a = a * m + c per thread for `iters` iterations (NACC as resolved: default, or --set);
    out[t] = sum of the chains."""
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    if not isinstance(iters, (int, np.integer)) or not 0 <= iters < 2**31:
        raise ValueError(f"iters: expected an integer in [0, 2^31), got {iters!r}")
    n = arrays.size(x)
    out = arrays.check_out(out, x.shape, "float32", x)
    if n == 0:
        return out
    k = kernel("mem_05_register_fma")
    k((math.ceil(n / THREADS),), (THREADS,), (x, out, np.int64(n), np.int32(iters), np.float32(m), np.float32(c)))
    return out


def register_fma_reference(x, iters: int, m: float, c: float) -> np.ndarray:
    x = np.asarray(x, np.float64)
    m, c = float(np.float32(m)), float(np.float32(c))
    total = np.zeros_like(x)
    for j in range(kernel_configs()[2]["NACC"]):
        a = x + j * 0.0009765625
        mk = m ** iters
        geo = iters if m == 1.0 else (1 - mk) / (1 - m)
        total += a * mk + c * geo
    return total


# ---------------------------------------------------------------------------------------------------------------------
# Triton: read_sweep_kernel of triton_kernels.py, one program per block, the same cyclic range, tl.sum at the end
# ---------------------------------------------------------------------------------------------------------------------
# Elements per tile and warps per program (the lab's default; `--set BLOCK=2048` and the like override them).
TRITON = dict(BLOCK=1024, num_warps=4)


def triton_config() -> config.Resolved:
    return config.resolve("triton read_sweep_kernel", TRITON, validate=_check_triton)


def _check_triton(v: dict) -> dict:
    b, w = v["BLOCK"], v["num_warps"]
    if b < 32 or b > 2**16 or b & (b - 1) or w not in (1, 2, 4, 8, 16, 32):
        raise ValueError(tr("triton read_sweep_kernel: BLOCK a power of two in 32..65536, num_warps in 1, 2, 4, 8, "
                            "16, 32; got {got}", got=config.fmt(v)))
    return v


def read_triton(x, blocks, per_block, out=None):
    """The read sweep in Triton (CuPy/torch on a GPU, NumPy/torch CPU arrays in the interpreter)."""
    arrays.check_array("x", x, dtypes=("float32",), device=not INTERPRETER)
    _check_sweep_args(blocks, per_block)
    n = arrays.size(x)
    if n == 0:
        raise ValueError("x: the working set is empty; the sweep reads it cyclically, so it needs n >= 1")
    out = arrays.check_out(out, (blocks,), "float32", x)
    cfg = triton_config().values
    launch(read_sweep_kernel, (int(blocks),), x, out, n, int(per_block), BLOCK=cfg["BLOCK"],
           WRAP_MOD=n < cfg["BLOCK"], num_warps=cfg["num_warps"])
    return out


VARIANTS = [
    lab.Variant("cuda 01 scalar loads", read_cuda_01, "cuda"),
    lab.Variant("cuda 02 float4 x4 in flight", read_cuda_02, "cuda"),
    lab.Variant("triton", read_triton, "triton"),
]
CHECK_CASES = [((n, b, p), "float32") for n, b, p in [
    (1, 1, 1), (5, 3, 7), (1000, 7, 2500), (4096, 4, 4096), (4097, 301, 8), (8, 5, 0), (65536, 16, 100_000),
    (65536, 33, 262_144), (1_000_003, 33, 50_001), (262_144, 64, 1_048_576), (1 << 20, 1056, 4096)]]
CPU_CHECK_CASES = [((n, b, p), "float32") for n, b, p in [(1, 1, 1), (5, 3, 7), (1000, 7, 2500), (4096, 4, 4096)]]


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the sweep's main case, and of the on-chip measurements, on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def sweep_top(gpu: device.DeviceInfo, top: int = SWEEP_TOP) -> tuple[int, str]:
    """(the sweep's largest working set on `gpu`, a note when its memory cannot hold SWEEP_TOP)."""
    return plan.fit(top, lambda w: w, gpu, what="the largest working set")


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    w, _ = sweep_top(gpu, size or SWEEP_TOP)
    blocks, _ = resident_grid(gpu, "mem_02_read_sweep_float4")
    cfgs = kernel_configs()
    tcfg = triton_config()
    case = tr("a {mib} MiB working set read once", mib=w // 2**20)
    # each kernel is listed with the -D values it reads (the wrappers compile the file once, with all of them)
    cu = dict(impl="cuda", source=CU, threads=THREADS)
    tile_blocks, _ = resident_grid(gpu, "mem_04_shared_read")
    tri_w = min(w, 1 * GiB)              # the Triton sweep's largest working set
    return [
        plan.Launch(VARIANTS[0].name, "mem_01_read_sweep_scalar", grid=blocks, case=case + tr(" (mem_02's fallback)"),
                    **cu),
        plan.Launch(VARIANTS[1].name, "mem_02_read_sweep_float4", grid=blocks, case=case, defines=cfgs[0].values,
                    config_source=cfgs[0].source(), **cu),
        plan.Launch(VARIANTS[2].name, "read_sweep_kernel", "triton", fn=read_sweep_kernel, grid=blocks,
                    signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32", "per_block": "i32",
                               "BLOCK": "constexpr", "WRAP_MOD": "constexpr"},
                    defines={"BLOCK": tcfg["BLOCK"], "WRAP_MOD": tri_w // 4 < tcfg["BLOCK"]},
                    num_warps=tcfg["num_warps"], case=tr("a {mib} MiB working set, {floats} floats a program",
                                                         mib=tri_w // 2**20, floats=per_block_for(tri_w, blocks)),
                    config_source=tcfg.source()),
        plan.Launch("", "mem_03_pointer_chase", "cuda", source=CU, grid=1, threads=1,
                    case=tr("the pointer chase: one thread")),
        plan.Launch("", "mem_04_shared_read", grid=tile_blocks, defines=cfgs[1].values, config_source=cfgs[1].source(),
                    case=tr("shared memory: a {kib} KiB tile per block", kib=16 * cfgs[1]["TILE_FLOAT4"] // KiB),
                    **cu),
        plan.Launch("", "mem_05_register_fma", grid=triton.cdiv(fma_elements(gpu), THREADS), defines=cfgs[2].values,
                    config_source=cfgs[2].source(), case=tr("registers: {n} FFMA chains per thread",
                                                            n=cfgs[2]["NACC"]),
                    **cu),
    ]
