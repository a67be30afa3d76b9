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
per clock per SM the arithmetic takes an order of magnitude longer than moving the bytes on any current GPU (`--plan`
prints both times for this one): compute-bound, so every extra instruction slot a divergent warp spends shows up in
full. Predicted: divergent / uniform = 2.0. The lesson, the predictions and this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab03_thread_hierarchy [--quick] [--size N] [--rounds R] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set BLOCK=512]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, occupancy, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import both_hashes_kernel

LAB = "phase1_lab03_thread_hierarchy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256                        # threads per block of every CUDA C launch of the lab (any multiple of 32)
NFIELDS = 10
FIELDS = ("block", "tx", "ty", "tid", "warp", "lane", "sm", "clock0", "gtime0_ns", "gtime1_ns")
HASH_EVEN = (16, 0x7FEB352D, 13)     # shift, multiplier, shift: must match hash_even in kernels.cu
HASH_ODD = (15, 0x846CA68B, 11)
ROUNDS_CHECK = 24                    # rounds in the correctness checks (the reference runs in NumPy)
BENCH_N, BENCH_ROUNDS = 2**22, 256
# 32-bit integer add, shift and logic results per clock per SM: 64 on every architecture this course compiles for
# (the programming guide's arithmetic-instruction throughput table); the model of the lesson.
INT_OPS_PER_CLOCK_PER_SM = 64
HASH_OPS_PER_ROUND = 5               # shift, xor, multiply, shift, xor
TIMELINE_WAVES, TIMELINE_SPIN_US = 2.5, 20.0


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


def div01_blocks(n: int) -> int:
    """div_01's grid: a thread per element."""
    return math.ceil(n / THREADS)


def div02_blocks(n: int) -> int:
    """div_02's grid: warps come in (even, odd) pairs of 64 elements, so 64 * ceil(n / 64) threads."""
    return math.ceil(64 * math.ceil(n / 64) / THREADS)


def div_cuda_01(x, rounds, out=None):
    """Branch on the element's parity with thread = element: every warp diverges."""
    out, n = _prepare(x, rounds, out)
    if n == 0:
        return out
    k = cuda.get_kernel(CU, "div_01_branch_on_lane_parity")
    k((div01_blocks(n),), (THREADS,), (x, out, np.int64(n), np.int32(rounds)))
    return out


def div_cuda_02(x, rounds, out=None):
    """Same branch, threads remapped so each warp holds only even or only odd elements: no divergence."""
    out, n = _prepare(x, rounds, out)
    if n == 0:
        return out
    k = cuda.get_kernel(CU, "div_02_branch_on_warp_index")
    k((div02_blocks(n),), (THREADS,), (x, out, np.int64(n), np.int32(rounds)))
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


def timeline_launch(gpu: device.DeviceInfo | None = None, waves: float = TIMELINE_WAVES) -> dict:
    """The timeline's launch of hier_01_whoami on `gpu` (default: the GPU at hand): blocks of THREADS threads, as many
    as `waves` x what the whole GPU holds at once (the occupancy calculator on the kernel's own registers)."""
    gpu = gpu or device.info()
    regs, smem = cuda.resources(CU, "hier_01_whoami", gpu)
    occ = occupancy.occupancy(gpu.arch, THREADS, regs, smem)
    per_wave = gpu.sms * occ.blocks_per_sm
    return {"blocks": int(waves * per_wave), "per_wave": per_wave, "blocks_per_sm": occ.blocks_per_sm,
            "limiter": occ.limiter}


def hash_ms(gpu: device.DeviceInfo, n: int, rounds: int) -> float:
    """The uniform kernel's predicted time: the hash's integer operations at INT_OPS_PER_CLOCK_PER_SM on every SM."""
    return HASH_OPS_PER_ROUND * rounds * n / (gpu.sms * INT_OPS_PER_CLOCK_PER_SM * gpu.sm_clock_mhz * 1e6) * 1e3


# ---------------------------------------------------------------------------------------------------------------------
# Triton: both_hashes_kernel of triton_kernels.py, one program per BLOCK elements
# ---------------------------------------------------------------------------------------------------------------------
# Elements and warps per program (the lab's default; `--set BLOCK=512` and the like override them): 1024 elements over
# 4 warps, 8 per thread in aligned runs of 4 - the layout that lets the compiler see each element's parity.
TRITON = dict(BLOCK=1024, num_warps=4)


def triton_config() -> config.Resolved:
    return config.resolve("triton both_hashes_kernel", TRITON, validate=_check_triton)


def _check_triton(v: dict) -> dict:
    b, w = v["BLOCK"], v["num_warps"]
    if b < 32 or b > 2**16 or b & (b - 1) or w not in (1, 2, 4, 8, 16, 32):
        raise ValueError(tr("triton both_hashes_kernel: BLOCK a power of two in 32..65536, num_warps in 1, 2, 4, 8, "
                            "16, 32; got {got}", got=config.fmt(v)))
    return v


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
    cfg = triton_config().values
    launch(both_hashes_kernel, (triton.cdiv(n, cfg["BLOCK"]),), x, out, n, int(rounds), BLOCK=cfg["BLOCK"],
           num_warps=cfg["num_warps"])
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
                d["sm"] = tr("? (GPU only)")
            rows.append(d)
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the divergence benchmark holds at once at size n: the int32 input and output."""
    return 8 * n


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or BENCH_N, bench_bytes, gpu)
    case = tr("n = {n} int32, {rounds} rounds", n=plan.fmt_size(n), rounds=BENCH_ROUNDS)
    tcfg = triton_config()
    tl_ = timeline_launch(gpu)
    cu = dict(impl="cuda", source=CU, threads=THREADS)
    return [
        plan.Launch(VARIANTS[0].name, "div_01_branch_on_lane_parity", grid=div01_blocks(n), case=case, **cu),
        plan.Launch(VARIANTS[1].name, "div_02_branch_on_warp_index", grid=div02_blocks(n), case=case, **cu),
        plan.Launch(VARIANTS[2].name, "both_hashes_kernel", "triton", fn=both_hashes_kernel,
                    grid=triton.cdiv(n, tcfg["BLOCK"]),
                    signature={"x_ptr": "*i32", "y_ptr": "*i32", "n": "i32", "rounds": "i32", "BLOCK": "constexpr"},
                    defines={"BLOCK": tcfg["BLOCK"]}, num_warps=tcfg["num_warps"], case=case,
                    config_source=tcfg.source()),
        plan.Launch("", "hier_01_whoami", grid=tl_["blocks"],
                    case=tr("the timeline: {waves} waves of {blocks} blocks", waves=TIMELINE_WAVES,
                            blocks=tl_["per_wave"]), **cu),
        plan.Launch("", "hier_01_whoami", "cuda", source=CU, grid=MAP_BLOCKS, threads=MAP_BLOCK[0] * MAP_BLOCK[1],
                    case=tr("the mapping: {blocks} blocks of {block}", blocks=MAP_BLOCKS, block=MAP_BLOCK)),
    ]
