"""Lab 1.5 - Occupancy: how many warps an SM holds, which resource limits it, and what occupancy buys.

You will learn
  * the occupancy calculator's rules (common/occupancy.py): a block is resident only when its warps, registers
    (handed out per warp in 256-register chunks, from four sub-partitions), shared memory (static + dynamic + 1 KiB
    reserved per block from sm_80 on, in 128-byte units) and a block slot are all available; the scarcest resource
    is the limiter, and it is the knob to turn (__launch_bounds__ / -maxrregcount, smaller tiles, other block sizes);
  * to check the calculator against the driver (cudaOccupancyMaxActiveBlocksPerMultiprocessor, through CuPy) - and
    to record those answers (--record-fixture) so that the CPU tests check the calculator against real hardware;
  * Little's law, measured: bandwidth = bytes in flight / latency. The same memory-bound kernel, forced to 1 .. 64
    resident warps per SM with dynamic shared memory, gains bandwidth in proportion to its warps at first, then
    less, because latency rises as the memory system fills; a version with 16x the bytes in flight per warp (4 float4
    loads) needs far fewer warps, though not 16x fewer. Occupancy is a means (bytes in flight, latency hiding), not a
    goal.

The two numbers, for the measured kernel (y = alpha x over n = 2^26 fp32, 256 MiB each way): bytes = 8 n = 512 MiB,
FLOPs = n = 67 M: 1/8 FLOP/B, ~110x below an H200's ridge point (~14 FLOP/B), so memory wins at every occupancy and
time = bytes / (bytes in flight per second). At one warp per SM with 128 B in flight per warp, 132 x 128 B per HBM
round trip (~0.4-0.7 us) is ~1-2% of the HBM ceiling: the sweep spans two orders of magnitude. The lesson, the
predictions and this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab05_occupancy [--quick] [--no-bench] [--arch sm_86] [--replot]
     python -m phase1_architecture.lab05_occupancy --record-fixture tests/data/occupancy_sm_90.json   (GPU)
"""
from __future__ import annotations

import os
import sys

import numpy as np

from common import arrays, cuda, device, lab, occupancy
from common.device import KiB
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import scale_kernel

LAB = "phase1_lab05_occupancy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
FULL_THREADS = 256
UNROLL = 4                                   # occ_02's default
WARP_POINTS = (1, 2, 4, 8, 16, 24, 32, 48, 64)
BENCH_N = 2**26


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(x, alpha: float) -> np.ndarray:
    return float(alpha) * np.asarray(x, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    x = rng.standard_normal(n) * 2.0
    if n > 16:
        x[rng.integers(0, n, 4)] = -5.0e4
    return arrays.from_numpy(x, dtype, where), 1.7


# ---------------------------------------------------------------------------------------------------------------------
# Forcing an occupancy: claim shared memory so that only the wanted number of blocks fits on an SM
# ---------------------------------------------------------------------------------------------------------------------
def forced_config(warps_per_sm: int | None, kernel, arch: str) -> dict:
    """threads per block, blocks per SM and dynamic shared memory that make exactly `warps_per_sm` warps resident.

    None: the kernel's natural full occupancy (256-thread blocks, no shared memory). Else blocks of 32 threads for one
    warp per SM, 64 threads above (an SM holds at most 32 blocks: 32 x 64 threads = 2048, the whole SM).
    """
    regs, static = int(kernel.num_regs), int(kernel.shared_size_bytes)
    if warps_per_sm is None:
        occ = occupancy.occupancy(arch, FULL_THREADS, regs, static)
        return dict(threads=FULL_THREADS, blocks_per_sm=occ.blocks_per_sm, dyn=0, occ=occ)
    a = device.arch_info(arch)
    if warps_per_sm < 1 or warps_per_sm > a.max_warps_per_sm or (warps_per_sm > 1 and warps_per_sm % 2):
        raise ValueError(f"warps_per_sm: expected 1 or an even number up to {a.max_warps_per_sm}, got {warps_per_sm}")
    threads = 32 if warps_per_sm == 1 else 64
    per_sm = warps_per_sm // (threads // 32)
    if per_sm > a.max_blocks_per_sm:
        raise ValueError(f"warps_per_sm: {per_sm} blocks of {threads} threads is more than the {a.max_blocks_per_sm} "
                         f"blocks an {arch} SM holds")
    dyn = occupancy.dynamic_smem_for_blocks(arch, per_sm, static)
    occ = occupancy.occupancy(arch, threads, regs, static, dyn, max_dynamic_smem=max(dyn, a.smem_per_block_default
                                                                                         - static))
    if occ.blocks_per_sm != per_sm:
        raise RuntimeError(f"calculator: {dyn} B of dynamic shared memory gives {occ.blocks_per_sm} blocks/SM, wanted "
                           f"{per_sm} ({occ.limiter})")
    return dict(threads=threads, blocks_per_sm=per_sm, dyn=dyn, occ=occ)


def _launch_scale(kernel, x, out, n, alpha, warps_per_sm):
    d = device.info()
    cfg = forced_config(warps_per_sm, kernel, d.arch)
    if cfg["dyn"] > d.smem_per_block - int(kernel.shared_size_bytes):
        kernel.max_dynamic_shared_size_bytes = cfg["dyn"]       # opt in before a launch above 48 KiB
    kernel((d.sms * cfg["blocks_per_sm"],), (cfg["threads"],), (x, out, np.int64(n), np.float32(alpha)),
           shared_mem=cfg["dyn"])
    return out


def _prepare(x, alpha, out):
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    if not isinstance(alpha, (int, float, np.floating, np.integer)) or isinstance(alpha, bool):
        raise TypeError(f"alpha: expected a real scalar, got {type(alpha).__name__}")
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    return out, arrays.size(x)


def scale_cuda_01(x, alpha, out=None, *, warps_per_sm: int | None = None):
    """y = alpha x, one 4-byte load in flight per thread; warps_per_sm forces the occupancy (None: full)."""
    out, n = _prepare(x, alpha, out)
    if n == 0:
        return out
    return _launch_scale(cuda.get_kernel(CU, "occ_01_scale_scalar"), x, out, n, alpha, warps_per_sm)


def scale_cuda_02(x, alpha, out=None, *, warps_per_sm: int | None = None):
    """y = alpha x, UNROLL float4 loads in flight per thread; falls back to occ_01 for misaligned views."""
    out, n = _prepare(x, alpha, out)
    if n == 0:
        return out
    name = "occ_02_scale_float4_ilp" if arrays.aligned(x, 16) and arrays.aligned(out, 16) else "occ_01_scale_scalar"
    return _launch_scale(cuda.get_kernel(CU, name), x, out, n, alpha, warps_per_sm)


def scale_triton(x, alpha, out=None):
    arrays.check_array("x", x, dtypes=("float32",), device=not INTERPRETER)
    out = arrays.check_out(out, x.shape, "float32", x)
    n = arrays.size(x)
    if n == 0:
        return out
    launch(scale_kernel, (triton.cdiv(n, 1024),), x, out, n, float(alpha), BLOCK=1024, num_warps=4)
    return out


VARIANTS = [
    lab.Variant("cuda 01 scalar, full occupancy", scale_cuda_01, "cuda"),
    lab.Variant("cuda 01 scalar, 1 warp/SM", lambda x, a, out=None: scale_cuda_01(x, a, out, warps_per_sm=1), "cuda"),
    lab.Variant("cuda 02 float4 x4, full occupancy", scale_cuda_02, "cuda"),
    lab.Variant("cuda 02 float4 x4, 6 warps/SM", lambda x, a, out=None: scale_cuda_02(x, a, out, warps_per_sm=6),
                "cuda"),
    lab.Variant("triton", scale_triton, "triton"),
]
CHECK_CASES = [(n, "float32") for n in (1, 3, 4, 5, 127, 4099, 65537, 1_000_003)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 1025, 4099)]


# ---------------------------------------------------------------------------------------------------------------------
# The calculator, explained (CPU and GPU)
# ---------------------------------------------------------------------------------------------------------------------
def worked_examples() -> list[dict]:
    """The documentation's worked examples, recomputed (tests/test_common_occupancy.py checks the same numbers)."""
    rows = []
    for regs in (64, 65):
        o = occupancy.occupancy("sm_80", 512, regs)
        rows.append({"source": "CUDA C++ Programming Guide, 'Multiprocessor Level' (64K registers, 2048 threads/SM)",
                     "case": f"512 threads x {regs} registers", "expected": "2 blocks (32 warps)" if regs == 64 else
                     "1 block (16 warps)", "calculator": f"{o.blocks_per_sm} block{'s' if o.blocks_per_sm != 1 else ''}"
                                                           f" ({o.active_warps} warps), limiter {o.limiter}"})
    for threads, exp in ((128, "12 blocks, 75%"), (320, "4 blocks, 63%")):
        o = occupancy.occupancy("sm_80", threads, 37)
        rows.append({"source": "CUDA C++ Best Practices Guide, 'Calculating Occupancy' (compute capability 7.0; sm_80"
                               " has the same register file and thread limits)",
                     "case": f"{threads} threads x 37 registers", "expected": exp,
                     "calculator": f"{o.blocks_per_sm} blocks, {o.occupancy:.1%}"})
    return rows


def curves(arch: str) -> dict:
    """Occupancy against registers, shared memory per block and block size (the three classic calculator plots)."""
    a = device.arch_info(arch)
    regs = list(range(16, 256, 1))
    smem = list(range(0, a.smem_per_block_optin + 1, 1024))
    threads = list(range(32, 1025, 32))
    return {
        "registers (256 threads, no shared memory)": (regs, [occupancy.occupancy(arch, 256, r).occupancy
                                                            for r in regs]),
        "shared memory/block in KiB (128 threads, 32 registers)": (
            [s / KiB for s in smem], [occupancy.occupancy(arch, 128, 32, 0, s, max_dynamic_smem=a.smem_per_block_optin)
                                      .occupancy for s in smem]),
        "threads/block (32 registers, no shared memory)": (threads, [occupancy.occupancy(arch, t, 32).occupancy
                                                                     for t in threads]),
    }


def calculator_tables(arch: str) -> list[dict]:
    """A few telling cases for one architecture."""
    a = device.arch_info(arch)
    cases = [(256, 32, 0, 0), (256, 33, 0, 0), (256, 64, 0, 0), (256, 128, 0, 0), (1024, 64, 0, 0),
             (128, 32, 0, 48 * KiB), (128, 32, 0, a.smem_per_sm // 2 - 1024), (128, 32, 0, a.smem_per_sm // 2),
             (32, 16, 0, 0), (96, 32, 0, 0), (1024, 255, 0, 0)]
    rows = []
    for t, r, s, dyn in cases:
        o = occupancy.occupancy(arch, t, r, s, dyn, max_dynamic_smem=max(dyn, a.smem_per_block_default - s))
        rows.append(o.row() | {"note": o.notes[0] if o.notes else ""})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
