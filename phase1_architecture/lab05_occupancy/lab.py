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
FLOPs = n = 67 M: 1/8 FLOP/B, two orders of magnitude below the ridge point of any current GPU (`--plan` prints this
GPU's), so memory wins at every occupancy and time = bytes / (bytes in flight per second). At one warp per SM with
128 B in flight per warp, SMs x 128 B per HBM round trip (~0.4-0.7 us) is a few percent of the HBM ceiling at most:
the sweep spans one to two orders of magnitude. The lesson, the predictions and this GPU's measured figures:
README.md.

Run: python -m phase1_architecture.lab05_occupancy [--quick] [--no-bench] [--arch sm_86] [--replot]
     [--plan [--gpu NAME]] [--set UNROLL=8]
     python -m phase1_architecture.lab05_occupancy --record-fixture tests/data/occupancy_sm_90.json   (GPU)
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np

from common import arrays, config, cuda, device, lab, occupancy, plan
from common.device import KiB
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import scale_kernel

LAB = "phase1_lab05_occupancy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
FULL_THREADS = 256
UNROLL = 4                                   # occ_02's default (`--set UNROLL=8` overrides it)
WARP_POINTS = (1, 2, 4, 8, 16, 24, 32, 48, 64)   # the sweep's warps per SM, up to what the GPU's SM holds
QUICK_POINTS = (1, 4, 16, 64)
BENCH_N = 2**26
LATENCY_NS = 700.0                           # a loaded HBM round trip, the model's guess before the 1-warp point is
                                             # measured (the benchmark fits its own)


def unroll_config() -> config.Resolved:
    return config.resolve("occ_02_scale_float4_ilp", {"UNROLL": UNROLL}, validate=_check_unroll)


def _check_unroll(v: dict) -> dict:
    if v["UNROLL"] not in (1, 2, 4, 8, 16):
        raise ValueError(tr("occ_02: UNROLL in 1, 2, 4, 8, 16; got {got}", got=config.fmt(v)))
    return v


def kernel(name: str):
    """occ_01 / occ_02 as the wrappers launch them (occ_02 with the resolved UNROLL)."""
    return cuda.get_kernel(CU, name, defines=unroll_config().values)


class Resources(NamedTuple):
    """What forced_config reads of a kernel: a RawKernel has the same two attributes."""
    num_regs: int
    shared_size_bytes: int


def resources(gpu: device.DeviceInfo, name: str) -> Resources:
    """occ_01's or occ_02's registers and static shared memory on `gpu` (a compile for a simulated one)."""
    return Resources(*cuda.resources(CU, name, gpu, defines=unroll_config().values))


def bytes_in_flight_per_warp(name: str) -> int:
    """occ_01: one 4-byte load per lane; occ_02: UNROLL 16-byte loads per lane."""
    return 32 * 4 if name == "occ_01_scale_scalar" else 32 * 16 * unroll_config()["UNROLL"]


def max_forced_warps(kernel, arch: str) -> int:
    """The most warps per SM forced_config can make resident for `kernel` (its registers and static shared memory):
    the SM's warps, unless the kernel's registers allow fewer."""
    for w in range(device.arch_info(arch).max_warps_per_sm, 1, -2):
        try:
            forced_config(w, kernel, arch)
            return w
        except (ValueError, RuntimeError):
            continue
    return 1


def warp_points(gpu: device.DeviceInfo, kernel, quick: bool = False) -> list[int]:
    """The sweep's points for `kernel` on `gpu`: WARP_POINTS (QUICK_POINTS) up to the most warps it can have resident,
    and that most (full occupancy: 64 warps on an SM of 2048 threads, 48 on one of 1536, fewer where registers
    limit)."""
    top = max_forced_warps(kernel, gpu.arch)
    return sorted({w for w in (QUICK_POINTS if quick else WARP_POINTS) if w <= top} | {top})


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
    warp per SM, and above that the smallest blocks of 2, 4, 8 ... warps that divide `warps_per_sm` into no more
    blocks than the SM may hold (64 threads on an SM of 64 warps and 32 blocks; 128 threads for 48 warps on an SM of
    16 blocks).
    """
    regs, static = int(kernel.num_regs), int(kernel.shared_size_bytes)
    if warps_per_sm is None:
        occ = occupancy.occupancy(arch, FULL_THREADS, regs, static)
        return dict(threads=FULL_THREADS, blocks_per_sm=occ.blocks_per_sm, dyn=0, occ=occ)
    a = device.arch_info(arch)
    if warps_per_sm < 1 or warps_per_sm > a.max_warps_per_sm or (warps_per_sm > 1 and warps_per_sm % 2):
        raise ValueError(f"warps_per_sm: expected 1 or an even number up to {a.max_warps_per_sm}, got {warps_per_sm}")
    sizes = [1] if warps_per_sm == 1 else [b for b in (2, 4, 8, 16, 32) if warps_per_sm % b == 0]
    fits = [b for b in sizes if warps_per_sm // b <= a.max_blocks_per_sm]
    if not fits:
        raise ValueError(f"warps_per_sm: {warps_per_sm} warps come in no block size that an {arch} SM, holding at most "
                         f"{a.max_blocks_per_sm} blocks, can hold")
    threads = 32 * fits[0]
    per_sm = warps_per_sm // fits[0]
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
    kernel((scale_blocks(d, cfg),), (cfg["threads"],), (x, out, np.int64(n), np.float32(alpha)),
           shared_mem=cfg["dyn"])
    return out


def scale_blocks(gpu: device.DeviceInfo, cfg: dict) -> int:
    """The grid of a forced (or full) occupancy: exactly one wave, every SM holding cfg's blocks (the kernels loop)."""
    return gpu.sms * cfg["blocks_per_sm"]


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
    return _launch_scale(kernel("occ_01_scale_scalar"), x, out, n, alpha, warps_per_sm)


def scale_cuda_02(x, alpha, out=None, *, warps_per_sm: int | None = None):
    """y = alpha x, UNROLL float4 loads in flight per thread; falls back to occ_01 for misaligned views."""
    out, n = _prepare(x, alpha, out)
    if n == 0:
        return out
    name = "occ_02_scale_float4_ilp" if arrays.aligned(x, 16) and arrays.aligned(out, 16) else "occ_01_scale_scalar"
    return _launch_scale(kernel(name), x, out, n, alpha, warps_per_sm)


# Elements and warps per program of the Triton kernel (the lab's default; `--set BLOCK=2048` and the like override
# them). Triton picks no occupancy of its own beyond these: the lab's forced occupancies are a CUDA C experiment.
TRITON = dict(BLOCK=1024, num_warps=4)


def triton_config() -> config.Resolved:
    return config.resolve("triton scale_kernel", TRITON, validate=_check_triton)


def _check_triton(v: dict) -> dict:
    b, w = v["BLOCK"], v["num_warps"]
    if b < 32 or b > 2**16 or b & (b - 1) or w not in (1, 2, 4, 8, 16, 32):
        raise ValueError(tr("triton scale_kernel: BLOCK a power of two in 32..65536, num_warps in 1, 2, 4, 8, 16, 32; "
                            "got {got}", got=config.fmt(v)))
    return v


def scale_triton(x, alpha, out=None):
    arrays.check_array("x", x, dtypes=("float32",), device=not INTERPRETER)
    out = arrays.check_out(out, x.shape, "float32", x)
    n = arrays.size(x)
    if n == 0:
        return out
    cfg = triton_config().values
    launch(scale_kernel, (triton.cdiv(n, cfg["BLOCK"]),), x, out, n, float(alpha), BLOCK=cfg["BLOCK"],
           num_warps=cfg["num_warps"])
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
        calc = (tr("{blocks} block ({warps} warps), limiter {limiter}", blocks=o.blocks_per_sm,
                   warps=o.active_warps, limiter=tr(o.limiter)) if o.blocks_per_sm == 1 else
                tr("{blocks} blocks ({warps} warps), limiter {limiter}", blocks=o.blocks_per_sm,
                   warps=o.active_warps, limiter=tr(o.limiter)))
        rows.append({"source": tr("CUDA C++ Programming Guide, 'Multiprocessor Level' (64K registers, 2048 "
                                  "threads/SM)"),
                     "case": tr("512 threads x {regs} registers", regs=regs),
                     "expected": tr("2 blocks (32 warps)") if regs == 64 else tr("1 block (16 warps)"),
                     "calculator": calc})
    for threads, exp in ((128, tr("12 blocks, 75%")), (10 * 32, tr("4 blocks, 63%"))):   # blocks of 4 and of 10 warps
        o = occupancy.occupancy("sm_80", threads, 37)
        rows.append({"source": tr("CUDA C++ Best Practices Guide, 'Calculating Occupancy' (compute capability 7.0; "
                                  "sm_80 has the same register file and thread limits)"),
                     "case": tr("{threads} threads x 37 registers", threads=threads), "expected": exp,
                     "calculator": tr("{blocks} blocks, {occ:.1%}", blocks=o.blocks_per_sm, occ=o.occupancy)})
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
        row = o.row()
        if o.blocks_per_sm:
            row["limiter"] = "+".join(tr(x) for x in o.limiters)
        rows.append(row | {"note": tr(o.notes[0]) if o.notes else ""})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the checks' variants and of the occupancy sweep on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the sweep holds at once at size n: the fp32 input and output."""
    return 8 * n


def _scale_launch(gpu, variant, name, warps, n, case) -> plan.Launch:
    cfg = forced_config(warps, resources(gpu, name), gpu.arch)
    defines = unroll_config().values if name == "occ_02_scale_float4_ilp" else {}
    source = unroll_config().source() if defines else ""
    return plan.Launch(variant, name, "cuda", source=CU, grid=scale_blocks(gpu, cfg), threads=cfg["threads"],
                       dyn_smem=cfg["dyn"], defines=defines, config_source=source, case=case)


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or BENCH_N, bench_bytes, gpu)
    case = f"n = {plan.fmt_size(n)} float32"
    tcfg = triton_config()
    out = [_scale_launch(gpu, VARIANTS[0].name, "occ_01_scale_scalar", None, n, case),
           _scale_launch(gpu, VARIANTS[1].name, "occ_01_scale_scalar", 1, n, case),
           _scale_launch(gpu, VARIANTS[2].name, "occ_02_scale_float4_ilp", None, n, case),
           _scale_launch(gpu, VARIANTS[3].name, "occ_02_scale_float4_ilp", 6, n, case),
           plan.Launch(VARIANTS[4].name, "scale_kernel", "triton", fn=scale_kernel, grid=triton.cdiv(n, tcfg["BLOCK"]),
                       signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "alpha": "fp32",
                                  "BLOCK": "constexpr"},
                       defines={"BLOCK": tcfg["BLOCK"]}, num_warps=tcfg["num_warps"], case=case,
                       config_source=tcfg.source())]
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        for w in warp_points(gpu, resources(gpu, name)):
            out.append(_scale_launch(gpu, "", name, w, n, tr("the sweep: {w} warps/SM, {case}", w=w, case=case)
                                     if w > 1 else tr("the sweep: {w} warp/SM, {case}", w=w, case=case)))
    return out
