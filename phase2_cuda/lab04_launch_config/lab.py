"""Lab 2.4 - Launch configuration: block size, grid size, waves, and the tail of a partial last wave.

You will learn
  * what limits how many blocks an SM holds at once (threads, blocks, registers, shared memory per SM), what a wave
    is (SMs x resident blocks), and why 32-thread blocks cannot fill an SM (its resident-block limit x 32 threads is
    half of its threads, or less);
  * Little's law for a memory-bound kernel: bandwidth = bytes in flight / latency. With one 16-byte load in flight per
    thread, the number of resident threads sets the bandwidth: a heat map of GB/s over block size x grid size shows
    where it saturates, and the measured points give back the latency (an implied figure, not a guess);
  * the grid-stride loop: any grid computes the right answer, so the grid can be sized to the GPU (whole waves) rather
    than to the data;
  * the tail effect: a grid of 1.25 waves runs its last quarter-wave on a GPU a quarter full; how much that costs for
    a memory-bound kernel (less than a whole wave, more than nothing), predicted from the same Little's law fit;
  * how to choose: blocks of 128-512 threads, and either one element per thread or a grid-stride grid of whole waves.

The two numbers, for y = alpha * x on n fp32 elements (main case n = 2^27, 512 MiB per array): bytes = 8 n = 1.07 GB
(4 read + 4 written per element), FLOPs = n = 0.13 GFLOP: 1/8 FLOP per byte, memory wins on any GPU; the floor is 8 n
bytes over the measured HBM ceiling. Every configuration below moves the same bytes; only how many are in flight
changes. The resident-block arithmetic is common.occupancy's (the calculator every lab shares); this lab prints its
limits. The lesson, the predictions, what the measurements taught and this GPU's measured figures: README.md.

Run: python -m phase2_cuda.lab04_launch_config [--quick] [--size N] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set BLOCK=2048]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan
from common.i18n import tr
from common.occupancy import occupancy
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import scale_kernel

LAB = "phase2_lab04_launch_config"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
ALPHA = 1.75
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
WAVES = (1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8)          # grid-stride grids, in waves; plus one float4 per thread
TAIL_WAVES = (0.5, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.1, 2.5, 3, 3.1, 4)
TAIL_ITERS = 64                                   # float4 per thread in the tail experiment (fixed work per block)
BYTES_IN_FLIGHT_PER_THREAD = 16                   # one float4 load per loop iteration (the loop is not unrolled)
ASSUMED_LATENCY_US = 0.7                          # a-priori DRAM latency under load, for the predictions only
MAIN_N = 2**27


# ---------------------------------------------------------------------------------------------------------------------
# Waves: how many blocks the GPU holds at once (common.occupancy's calculator without a GPU, the driver's with one)
# ---------------------------------------------------------------------------------------------------------------------
def _kernel(name: str):
    return cuda.get_kernel(CU, name)


def blocks_per_sm(threads: int, kernel: str = "scale_grid_stride_float4", gpu: device.DeviceInfo | None = None) -> int:
    """Resident blocks of `threads` threads per SM on `gpu` (default: the GPU every prediction uses here): on the GPU
    at hand the driver's figure (cuOccupancyMaxActiveBlocksPerMultiprocessor); on a simulated one common.occupancy's,
    with the kernel's registers compiled for its architecture."""
    gpu = gpu or device.current()
    if not gpu.simulated and device.has_gpu():
        from cupy_backends.cuda.api import driver

        return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(_kernel(kernel).kernel.ptr, threads, 0))
    regs, smem = cuda.resources(CU, kernel, gpu)
    return occupancy(gpu.arch, threads, regs, smem).blocks_per_sm


def wave(threads: int, kernel: str = "scale_grid_stride_float4", gpu: device.DeviceInfo | None = None) -> int:
    """Blocks of `threads` that the whole GPU holds at once: its SMs x the blocks each holds."""
    gpu = gpu or device.current()
    return gpu.sms * blocks_per_sm(threads, kernel, gpu)


def wave_grid(waves: float, threads: int, kernel: str = "scale_grid_stride_float4",
              gpu: device.DeviceInfo | None = None) -> int:
    """The grid of a launch sized in waves (the wrapper's waves=, the plan's launches)."""
    return max(1, round(waves * wave(int(threads), kernel, gpu)))


def per_element_grid(n: int, threads: int, vec: bool = True) -> int:
    """One float4 (or one float) per thread: the grid that covers the data."""
    return max(1, math.ceil((n // 4 if vec else n) / threads))


# ---------------------------------------------------------------------------------------------------------------------
# Reference, inputs, wrappers
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    return ALPHA * np.asarray(x, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    x = rng.standard_normal(int(n)) * 2.0
    if n > 16:
        x[rng.integers(0, n, 4)] = -3e4
    return (arrays.from_numpy(x, dtype, where),)


MAX_GRID_X = 2**31 - 1


def scale(x, out=None, *, threads: int = 256, blocks=None, waves: float | None = None, kernel: str = "auto"):
    """out = ALPHA * x with a chosen launch: blocks=int, blocks='per_element' (one float4 per thread), or waves=w.

    kernel: 'auto' (float4 when x and out are 16-byte aligned, else scalar), 'float4', or 'scalar'.
    """
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    if not isinstance(threads, (int, np.integer)) or not 32 <= threads <= 1024 or threads % 32:
        raise ValueError(f"threads: expected a multiple of 32 in 32..1024, got {threads!r}")
    if kernel not in ("auto", "float4", "scalar"):
        raise ValueError(f"kernel: expected 'auto', 'float4' or 'scalar', got {kernel!r}")
    aligned = arrays.aligned(x, 16) and arrays.aligned(out, 16)
    if kernel == "float4" and not aligned:
        raise ValueError("kernel='float4' needs x and out on 16-byte boundaries; use kernel='auto' to fall back")
    vec = kernel == "float4" or (kernel == "auto" and aligned)
    name = "scale_grid_stride_float4" if vec else "scale_grid_stride_scalar"
    n = arrays.size(x)
    if n == 0:
        return out
    if waves is not None:
        if not waves > 0:
            raise ValueError(f"waves: expected a positive number, got {waves!r}")
        grid = wave_grid(waves, threads, name, device.info())
    elif blocks is None or blocks == "per_element":
        grid = per_element_grid(n, threads, vec)
    elif isinstance(blocks, (int, np.integer)) and 1 <= blocks <= MAX_GRID_X:
        grid = int(blocks)
    else:
        raise ValueError(f"blocks: expected 1..{MAX_GRID_X}, 'per_element' or None, got {blocks!r}")
    _kernel(name)((grid,), (int(threads),), (x, out, np.float32(ALPHA), np.int64(n)))
    return out


# Triton picks the launch differently: BLOCK elements per program (a "block size" in elements) and num_warps; the grid
# always covers the data. 1024 elements over 4 warps: 8 per thread, two 16-byte loads.
TRITON = dict(BLOCK=1024, num_warps=4)


def triton_config() -> config.Resolved:
    return config.resolve("triton scale_kernel", TRITON, validate=_check_triton)


def _check_triton(cfg: dict) -> dict:
    if cfg["BLOCK"] not in [2**k for k in range(7, 15)] or cfg["num_warps"] not in (1, 2, 4, 8, 16, 32):
        raise ValueError(tr("triton scale_kernel: BLOCK a power of two in 128..16384, num_warps in 1..32 (a power of "
                            "two); got {got}", got=config.fmt(cfg)))
    return cfg


def scale_triton(x, out=None, *, block: int | None = None, num_warps: int | None = None):
    """out = ALPHA * x with one Triton program per BLOCK elements (the lab's configuration unless given)."""
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), device=dev)
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), device=dev)
    n = arrays.size(x)
    if n:
        cfg = triton_config().values
        block = block or cfg["BLOCK"]
        launch(scale_kernel, (triton.cdiv(n, block),), x, out, ALPHA, n, BLOCK=block,
               num_warps=num_warps or cfg["num_warps"])
    return out


def peer_cupy(x, out=None):
    import cupy

    out = arrays.check_out(out, x.shape, "float32", x)
    return cupy.multiply(x, np.float32(ALPHA), out=out)


VARIANTS = [
    lab.Variant("cuda 256 threads x 1 wave (grid-stride)", lambda x, out=None: scale(x, out, threads=256, waves=1),
                "cuda"),
    lab.Variant("cuda 32 threads x 1/8 wave (grid-stride)", lambda x, out=None: scale(x, out, threads=32, waves=1 / 8),
                "cuda"),
    lab.Variant("cuda 1024 threads, one float4 per thread", lambda x, out=None: scale(x, out, threads=1024), "cuda"),
    lab.Variant("cuda 128 threads, scalar kernel, 2 waves",
                lambda x, out=None: scale(x, out, threads=128, waves=2, kernel="scalar"), "cuda"),
    lab.Variant("triton scale_kernel", scale_triton, "triton"),
]
# What each CUDA C variant launches, for the plan: (variant, threads, waves or None for one float4 per thread, kernel)
VARIANT_LAUNCHES = [("cuda 256 threads x 1 wave (grid-stride)", 256, 1, "scale_grid_stride_float4"),
                    ("cuda 32 threads x 1/8 wave (grid-stride)", 32, 1 / 8, "scale_grid_stride_float4"),
                    ("cuda 1024 threads, one float4 per thread", 1024, None, "scale_grid_stride_float4"),
                    ("cuda 128 threads, scalar kernel, 2 waves", 128, 2, "scale_grid_stride_scalar")]
PEERS = [lab.Variant("cupy.multiply", peer_cupy, "peer")]
CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D]
CPU_CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D_SMALL]
QUICK_CASES = 6                # --quick checks the first six


# ---------------------------------------------------------------------------------------------------------------------
# The model: Little's law with one 16-byte load in flight per resident thread
# ---------------------------------------------------------------------------------------------------------------------
def little_gbps(resident_threads: float, latency_us: float, ceiling_gbps: float) -> float:
    """Bandwidth the kernel can draw: bytes in flight / latency, capped at the ceiling. Loads only: each 16 B read
    comes with a 16 B write, so the GB/s counting both is twice the read rate."""
    return min(ceiling_gbps, 2 * resident_threads * BYTES_IN_FLIGHT_PER_THREAD / (latency_us * 1e3))


def implied_latency_us(resident_threads: float, gbps: float) -> float:
    return 2 * resident_threads * BYTES_IN_FLIGHT_PER_THREAD / (gbps * 1e3)


def tail_model(w: float, wave_blocks: int, threads: int, latency_us: float, ceiling_gbps: float) -> float:
    """Predicted time of a w-wave grid relative to one full wave: full waves at the full-residency bandwidth, then
    the last partial wave with only its own blocks resident (spread over the SMs)."""
    full_bw = little_gbps(wave_blocks * threads, latency_us, ceiling_gbps)
    whole, frac = int(math.floor(w + 1e-9)), w - math.floor(w + 1e-9)
    t = whole * 1.0
    if frac > 1e-9:
        t += frac * full_bw / little_gbps(frac * wave_blocks * threads, latency_us, ceiling_gbps)
    return t


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the variants at the main size, and the tail experiment's, on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the heat map holds: x and y, n fp32 each."""
    return 8 * n


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or MAIN_N, bench_bytes, gpu)
    case = f"n = {plan.fmt_size(n)} float32"
    out = []
    for variant, threads, waves, kernel in VARIANT_LAUNCHES:
        grid = per_element_grid(n, threads) if waves is None else wave_grid(waves, threads, kernel, gpu)
        out.append(plan.Launch(variant, kernel, "cuda", source=CU, grid=grid, threads=threads,
                               case=case + ("" if waves is None else tr(", {waves:g} waves", waves=waves) if waves > 1
                                            else tr(", {waves:g} wave", waves=waves))))
    grid = wave_grid(1.25, 256, gpu=gpu)
    out.append(plan.Launch("", "scale_grid_stride_float4", "cuda", source=CU, grid=grid, threads=256,
                           case=tr("tail: 1.25 waves, {iters} float4 per thread", iters=TAIL_ITERS)))
    t = triton_config()
    out.append(plan.Launch("triton scale_kernel", "scale_kernel", "triton", fn=scale_kernel,
                           grid=math.ceil(n / t["BLOCK"]), defines={"BLOCK": t["BLOCK"]}, num_warps=t["num_warps"],
                           signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "alpha": "fp32", "n": "i32",
                                      "BLOCK": "constexpr"}, case=case, config_source=t.source()))
    return out
