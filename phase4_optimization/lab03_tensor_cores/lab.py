"""Lab 4.3 - Tensor cores: bf16 / fp16 GEMM with wmma, mma.sync (+ ldmatrix, swizzle, cp.async), wgmma + TMA and tl.dot.

You will learn
  * what a tensor core is: a unit in each SM sub-partition that multiplies small matrices (16 x 8 x 16 per
    mma.sync, 64 x N x 16 per Hopper wgmma) in one instruction, 16-bit inputs, fp32 accumulation - several times
    the FMAs per clock of the CUDA cores (`--plan` compares this GPU's two datasheet rates). The catch: the operands
    must arrive fast enough, in the exact register layout the instruction defines;
  * rung 01 (tc_01_wmma): nvcuda::wmma, the portable C++ API - opaque 16 x 16 x 16 fragments loaded from shared
    memory tiles. Easy to write, hard to make fast: the layout is hidden, loads are synchronous, the tile is small;
  * rung 02 (tc_02_mma_sync): the PTX instruction mma.sync.aligned.m16n8k16 and everything it needs to run near
    its ceiling: ldmatrix.x4 (one shared-memory instruction fills a warp's whole 16 x 16 A fragment, .trans turns
    row-major B into the "col" operand), an XOR-swizzled shared layout (the eight 16-byte rows an ldmatrix phase
    reads hit 32 different banks, no padding), a cp.async pipeline of STAGES k-tiles (global -> shared without
    registers, zero-fill at the edges through the src-size operand), 64 x 64 warp tiles, grouped block order for L2;
  * what a profile of a slow kernel looks like when the overhead is integer arithmetic: ~25 instructions per
    16-byte cp.async chunk on addresses and bounds, more than the HMMAs they fed; an interior fast path (edges keep
    the general code) removes them (tools/profile.py shows the before and after);
  * rung 03 (gemm_wgmma_tma, sm_90a, kernels_wgmma.cu + wgmma.py): Hopper's warpgroup MMA reading operands from
    shared memory through descriptors, fed by TMA tile copies on an mbarrier ring, with warp specialization;
  * tile parameters as -D defines (BM, BN, BK, WM, WN, STAGES), validated in Python (shared memory within this GPU's
    opt-in limit per block, warps tile the block, registers), and a small CONFIGS list that --tune times at 4096^3
    (lab 4.4 sweeps it); --tune also times rung 03's builds (clusters, epilogues) on sm_90: each GPU's winners are
    recorded in results/, none is written into a kernel; `--set STAGES=3` (or any key) overrides one for a run;
  * the same product in Triton (tl.dot; on Hopper the compiler emits wgmma itself), and cuBLAS via torch/CuPy;
  * correctness for any M, N, K >= 1 and for views whose rows are not 16-byte aligned (a row stride not a multiple
    of 8 elements, or an odd start): those operands take an element-wise path, never a 16-byte access;
  * the error model of fp32 accumulation of 16-bit products: the reference is computed in float64 from the
    *rounded* inputs, so what is left is accumulation error (grows like sqrt(K)) plus one output rounding.

The two numbers (main case: bf16, M = N = K = 4096): FLOPs = 2 M N K = 137.4 GFLOP; bytes that must move =
2 (M K + K N + M N) = 100.7 MB. 1365 FLOP/B, several times the bf16 ridge point of any current GPU (`--plan` prints
this GPU's): compute-bound, so the floor is 2 M N K over the tensor cores' rate, and moving the bytes once costs a
fraction of it.
The real traffic is larger - every block re-reads its A row-panel and B column-panel (from L2 mostly): a BM x BN tile
gets BM BN / (BM + BN) FLOP per byte loaded, 32 for wmma's 64 x 64, 85 for mma.sync's 128 x 256 - so the bigger tile
is what lets the L2 keep up with the tensor cores.

Predictions (bf16 4096^3; each kernel's header in kernels.cu / kernels_wgmma.cu has its reasoning):
  * tc_01_wmma: <= 0.25x cuBLAS: synchronous loads and two barriers per 32-deep k-step;
  * tc_02_mma_sync: 0.6-0.75x cuBLAS. mma.sync is Ampere's instruction; on Hopper it tops out near 60-65% of the
    wgmma peak (each warp issues its own small MMAs from registers), so even a perfect mma.sync kernel cannot reach
    cuBLAS, which uses wgmma + TMA;
  * gemm_wgmma_tma: 0.85-0.95x cuBLAS at 8192^3;
  * Triton tl.dot: 0.9-0.95x cuBLAS (the kind of kernel lab 3.2 tuned);
  * fp16 runs at the same speed as bf16 (same tensor-core rate).
Targets: the mma.sync GEMM at bf16 4096^3 >= TARGET x cuBLAS, and the wgmma GEMM (the build gemm_wgmma runs by
default: this GPU's --tune record) at bf16 4096^3 and 8192^3 >= WGMMA_TARGET x cuBLAS, each measured head to head in
the same run (interleaved rounds). What the runs measured, and what they taught: README.md.

Run: python -m phase4_optimization.lab03_tensor_cores [--quick] [--tune] [--size N] [--wgmma-debug] [--no-bench]
     [--arch sm_80] [--replot] [--plan [--gpu NAME]] [--set STAGES=3] [--set WGMMA_CLUSTER=2]
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import sys

import numpy as np

from common import arrays, check, config, cuda, device, lab, occupancy, plan, tuned
from common.i18n import tr
from common.arrays import mnk as _mnk             # (M, N, K) from an int or a 3-tuple
from common.triton_support import INTERPRETER, launch, triton

from . import wgmma as wg
from .triton_kernels import tc_dot_kernel

LAB = "phase4_lab03_tensor_cores"
TUNED = LAB + "_tuned"
HERE = os.path.dirname(os.path.abspath(__file__))
CU = os.path.join(HERE, "kernels.cu")
DTYPES = ("bfloat16", "float16")
OUT_DTYPES = ("bfloat16", "float16", "float32")
TC_ARCHS = ("sm_80+",)          # bf16 mma.sync, cp.async, ldmatrix: compute capability 8.0 and later
MAX_DIM = 2**31 - 2**16         # M, N, K and row strides are int32 in the kernels
VEC_A, VEC_B, VEC_C = 1, 2, 4
TARGET = 0.65                   # the lab's target: mma.sync bf16 4096^3 >= 0.65x cuBLAS
WGMMA_TARGET = 0.97             # and wgmma + TMA bf16 4096^3 and 8192^3 >= 0.97x cuBLAS
WGMMA_TARGET_SIZES = (4096, 8192)
WMMA_TILE = (64, 64)
WGMMA_MODULE = wg.__name__
WGMMA_NAME = "cuda 03 wgmma+TMA"
WGMMA_CLUSTER_NAME = "cuda 03 wgmma+TMA, 2-block clusters"
WGMMA_TMA_STORE_NAME = "cuda 03 wgmma+TMA, TMA-store epilogue"
WGMMA_CLUSTER_TMA_STORE_NAME = "cuda 03 wgmma+TMA, 2-block clusters, TMA-store epilogue"


# ---------------------------------------------------------------------------------------------------------------------
# Reference, inputs, tolerance
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A @ B in float64. The lab driver passes the inputs as they are stored (already rounded to bf16/fp16), so
    the reference is the exact product of the rounded inputs, and only accumulation and output rounding remain."""
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """A (M x K), B (K x N), standard normal (sums of order sqrt(K): no overflow in fp16 for any K used here)."""
    m, n, k = _mnk(size)
    return (arrays.from_numpy(rng.standard_normal((m, k)), dtype, where),
            arrays.from_numpy(rng.standard_normal((k, n)), dtype, where))


def out_dtype(dtype: str) -> str:
    return dtype




def tolerance(size, dtype: str, out: str | None = None) -> check.Tol:
    """Exact products, fp32 sums, one rounding to the output dtype.

    Output rounding: at most u_out |c| (u = 2^-8 for bf16's 8-bit significand, 2^-11 fp16, 2^-24 fp32).
    fp32 accumulation of K terms: a random walk of roundings, ~sqrt(K) 2^-24 relative to the sum of the magnitudes;
    tensor cores are not IEEE adders (they align the products of a k-group and may truncate), so allow 32x that.
    Both scale with the same (|c| + mean|c|) the element test uses. A missing k-chunk or a misplaced tile gives
    errors of order 1, thousands of times these limits.
    """
    _, _, k = _mnk(size)
    acc = 32.0 * math.sqrt(max(k, 1)) * 2.0**-24
    u = check.UNIT_ROUNDOFF[out or dtype]
    if INTERPRETER and (out or dtype) == "bfloat16":
        u *= 2.0      # Triton's interpreter truncates fp32 -> bf16 (seen with Triton 3.9); a GPU rounds to nearest
    return check.Tol(rel_norm=u + acc, elem=1.05 * u + acc)


# ---------------------------------------------------------------------------------------------------------------------
# The mma.sync kernel's configurations
# ---------------------------------------------------------------------------------------------------------------------
CONFIG_KEYS = ("BM", "BN", "BK", "WM", "WN", "STAGES")


def _cfg(bm, bn, bk, wm, wn, stages) -> dict:
    return dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, STAGES=stages)


# 128 x 256 x 32 with eight 64 x 64 warp tiles: each warp holds 128 fp32 accumulators per thread (~240 registers, no
# spill) and issues 8 ldmatrix.x4 per 32 mma.sync per 16-deep step; 4 stages = 96 KiB of shared memory, one block per
# SM (register-limited), 3 tiles in flight to cover the global latency. 96 KiB fits every GPU that has mma.sync: the
# smallest opt-in limit among them is 99 KiB a block (sm_86, sm_89, sm_120), so the default needs no GPU-dependent
# fallback (tests/test_phase4_lab03_tensor_cores.py checks it against every profile).
DEFAULT_CONFIG = _cfg(128, 256, 32, 64, 64, 4)
# The optional keys of a config and the kernel's behaviour without them (the .cu's #ifndef values): a resolved config
# (mma_config) carries all of them, so --set XT=1 and a tuned record's XT reach the kernel and the run lists them.
OPTIONAL = {"MIN_BLOCKS": 1, "DB": 0, "XT": 0}
CONFIGS: list[dict] = [
    DEFAULT_CONFIG,
    _cfg(128, 256, 64, 64, 64, 3),      # 64-deep k-tiles: half the barriers, 144 KiB
    _cfg(256, 128, 32, 64, 64, 4),      # the transposed block shape
    _cfg(128, 128, 32, 64, 64, 4),      # 4 warps, 64 KiB: two blocks per SM, barriers no longer SM-wide
    _cfg(64, 128, 32, 32, 64, 4),       # small tiles for small problems (4 warps of 32 x 64)
    # Four warps per scheduler instead of two (the profile of the default showed two warps per scheduler and the
    # tensor pipe idle more than half the time; README): 64 x 32 warp tiles hold 64 accumulators, ~128 registers
    _cfg(128, 256, 32, 64, 32, 4),                      # 16 warps in one block
    dict(_cfg(128, 128, 32, 64, 32, 4), MIN_BLOCKS=2),  # 8 warps, two blocks per SM
    # Fragments double-buffered in registers (DB = 1): step kk + 1's ldmatrix issued before step kk's mma.sync, so
    # the shared-memory latency hides behind this warp's own 32 MMAs (the profile: two warps per scheduler)
    dict(_cfg(128, 128, 32, 64, 64, 4), DB=1),
    dict(_cfg(128, 256, 64, 64, 64, 3), DB=1),
    # Attempt 2, the cross-tile loop (XT = 1; kernels.cu's header): the k-loop unrolled by STAGES so every ldmatrix and
    # cp.async address is a register plus a constant, the next k-tile's first fragments loaded while the last step's
    # MMAs issue, the barrier between two halves of those MMAs. BK = 64 spills with XT at 64 x 64 warp tiles: not listed
    dict(_cfg(128, 128, 32, 64, 64, 4), XT=1),
    dict(_cfg(128, 128, 32, 64, 64, 6), XT=1),          # 96 KiB: still two blocks on an SM with 192 KiB or more
    dict(_cfg(128, 256, 32, 64, 64, 4), XT=1),
]
# Kept short on purpose: the CPU tier compiles every entry for sm_80 and sm_90 (~5 s each). Other candidates worth a
# sweep (lab 4.4): 128x256x32 with 3 stages (72 KiB), 128x128x64 with 3 stages (4 warps, 96 KiB, 2 blocks per SM).


def config_problems(cfg: dict, smem_limit: int | None = None, gpu: device.DeviceInfo | None = None) -> list[str]:
    """Why a config cannot compile or launch on `gpu` ([] when it can); mirrors the kernel's static_asserts. gpu:
    default the GPU every prediction uses here (device.current()); smem_limit: default its opt-in shared memory per
    block."""
    gpu = gpu or device.current()
    smem_limit = gpu.smem_per_block_optin if smem_limit is None else smem_limit
    missing = [k for k in CONFIG_KEYS if k not in cfg]
    if missing:
        return [f"missing keys {missing} (a config is a dict of {', '.join(CONFIG_KEYS)})"]
    extra = sorted(set(cfg) - set(CONFIG_KEYS) - {"GROUP_M", "MIN_BLOCKS", "DB", "XT"})
    if extra:
        return [f"unknown keys {extra}"]
    if not all(isinstance(cfg[k], (int, np.integer)) and not isinstance(cfg[k], bool)
               and cfg[k] >= (0 if k in ("DB", "XT") else 1) for k in cfg):
        return ["every value must be a positive integer (DB, XT: 0 or 1)"]
    bm, bn, bk, wm, wn, st = (int(cfg[k]) for k in CONFIG_KEYS)
    p = []
    if bm % wm or bn % wn:
        p.append("warp tiles must tile the block tile (BM % WM == 0 and BN % WN == 0)")
    if wm % 16 or wn % 16:
        p.append("WM and WN must be multiples of 16 (16 x 16 pieces: ldmatrix.x4 loads two 8-wide B tiles)")
    if bk not in (32, 64):
        p.append("BK must be 32 or 64 (the swizzle handles 64- and 128-byte rows)")
    if bn % 64:
        p.append("BN must be a multiple of 64")
    threads = config_threads(cfg) if not (bm % wm or bn % wn) else 0
    if not 32 <= threads <= 1024:
        p.append(f"{threads} threads per block (1-32 warps)")
    else:
        a_chunks, b_chunks = bm * bk // 8, bk * bn // 8
        if a_chunks % threads or b_chunks % threads or a_chunks < threads or b_chunks < threads:
            p.append("each thread must copy a whole number (>= 1) of 16-byte chunks of each tile")
    if wm * wn > 64 * 64:
        p.append(f"warp tile {wm}x{wn}: more than 128 fp32 accumulators per thread would spill")
    if st < 2:
        p.append("STAGES must be >= 2")
    if config_smem(cfg) > smem_limit:
        p.append(f"{config_smem(cfg)} B of shared memory > {smem_limit} B per block")
    if int(cfg.get("DB", 0)) > 1:
        p.append("DB must be 0 or 1")
    if int(cfg.get("XT", 0)) > 1:
        p.append("XT must be 0 or 1")
    elif cfg.get("XT", 0) and cfg.get("DB", 0):
        p.append("XT double-buffers the fragments itself: DB must be 0 with XT = 1")
    if int(cfg.get("GROUP_M", 8)) < 1:
        p.append("GROUP_M must be >= 1")
    mb, per_sm = int(cfg.get("MIN_BLOCKS", 1)), gpu.max_threads_per_sm
    if threads and not 1 <= mb <= per_sm // threads:
        p.append(f"MIN_BLOCKS must be 1..{per_sm // threads} ({threads} threads per block, {per_sm} per SM)")
    return p


def config_threads(cfg: dict) -> int:
    return (cfg["BM"] // cfg["WM"]) * (cfg["BN"] // cfg["WN"]) * 32


def config_smem(cfg: dict) -> int:
    return cfg["STAGES"] * (cfg["BM"] * cfg["BK"] + cfg["BK"] * cfg["BN"]) * 2


def validate_config(cfg: dict | None, smem_limit: int | None = None, gpu: device.DeviceInfo | None = None) -> dict:
    """A checked copy of a config (the default when None); ValueError naming every problem otherwise (on `gpu`,
    default device.current(), as config_problems)."""
    if cfg is None:
        return dict(DEFAULT_CONFIG)
    if not isinstance(cfg, dict):
        raise TypeError(f"config: expected a dict with keys {CONFIG_KEYS}, got {type(cfg).__name__}")
    bad = config_problems(cfg, smem_limit, gpu)
    if bad:
        raise ValueError(f"config {cfg}: {'; '.join(bad)}")
    return {k: int(v) for k, v in cfg.items()}


def short(cfg: dict) -> str:
    return (f"{cfg['BM']}x{cfg['BN']}x{cfg['BK']} warp {cfg['WM']}x{cfg['WN']} {cfg['STAGES']} stages "
            f"({config_threads(cfg) // 32} warps, {config_smem(cfg) // 1024} KiB"
            + (f", >= {cfg['MIN_BLOCKS']} blocks/SM" if cfg.get("MIN_BLOCKS", 1) > 1 else "")
            + (", fragments double-buffered" if cfg.get("DB", 0) else "")
            + (", cross-tile loop XT" if cfg.get("XT", 0) else "") + ")")


def swizzle(r: int, c: int, cpr: int) -> int:
    """The kernel's swz<CPR>: the 16-byte chunk slot of logical chunk c of row r in a tile of cpr chunks per row."""
    if cpr >= 8:
        return r * cpr + (c ^ (r & 7))
    return r * cpr + (c ^ ((r >> 1) & 3))


def ldmatrix_conflicts(cpr: int, rows: int) -> int:
    """Worst bank-conflict degree of one ldmatrix phase (8 rows, one chunk column) over a swizzled tile: 1 = none.
    Banks are 4 bytes wide, 32 of them: a 16-byte chunk slot s covers banks 4 (s mod 8) .. 4 (s mod 8) + 3."""
    worst = 1
    for r0 in range(0, rows, 8):
        for c in range(cpr):
            groups = [swizzle(r0 + i, c, cpr) % 8 for i in range(8)]
            worst = max(worst, max(groups.count(g) for g in set(groups)))
    return worst


def _check_winner(w: dict) -> dict:
    """A recorded winner's shape (keys, tiling, values); its shared memory is checked against the GPU it is applied
    to, by mma_config."""
    return validate_config({k: int(v) for k, v in w.items()}, smem_limit=2**31)


def mma_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The mma.sync configuration gemm_mma runs on `gpu` (default: the GPU every prediction uses here), the one place
    it is decided: DEFAULT_CONFIG, then the --tune winner recorded for this GPU (results/<gpu>/<TUNED>.json), then
    --set BM=.. BN=.. BK=.. WM=.. WN=.. STAGES=.. MIN_BLOCKS=.. DB=.. XT=..; the result is checked against this GPU's
    limits (its opt-in shared memory per block, threads per SM) and refused with a ValueError naming what is wrong."""
    gpu = gpu or device.current()
    winner, source = tuned.record(TUNED, _check_winner, gpu=gpu)

    def check(v: dict) -> dict:
        return validate_config(v, gpu=gpu)

    return config.resolve("tc_02_mma_sync", dict(DEFAULT_CONFIG, **OPTIONAL),
                          tuned=dict(OPTIONAL, **winner) if winner else None, tuned_source=source, validate=check)


# ---------------------------------------------------------------------------------------------------------------------
# Validation shared by every wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _elem_strides(x) -> tuple[int, ...]:
    if arrays.library(x) == "torch":
        return tuple(int(s) for s in x.stride())
    return tuple(int(s) // x.itemsize for s in x.strides)


def _row_stride(name: str, x) -> int:
    """The row stride (elements) of a matrix whose rows are contiguous; ValueError for any other layout."""
    rows, cols = (int(s) for s in x.shape)
    if rows == 0 or cols == 0:
        return max(cols, 1)                                    # no element: the stride is never used
    s0, s1 = _elem_strides(x)
    if cols > 1 and s1 != 1:
        raise ValueError(f"{name}: rows must be contiguous (unit column stride), got strides {(s0, s1)} elements; "
                         "pass a contiguous copy (a transposed view is not supported by the CUDA kernels)")
    ld = s0 if rows > 1 else cols                              # one row: the stride is never used
    if ld < cols or ld < 1:
        raise ValueError(f"{name}: row stride {s0} is smaller than the row length {cols}")
    if ld > MAX_DIM:
        raise ValueError(f"{name}: row stride {ld} exceeds {MAX_DIM} (the kernels take 32-bit strides)")
    return ld


def prepare(a, b, out, out_dtype_: str | None, *, device_arrays: bool = True):
    """Validate before any launch; returns (out, M, N, K, lda, ldb, ldc, input dtype)."""
    dt = arrays.check_array("a", a, dtypes=DTYPES, ndim=2, device=device_arrays, contiguous=False)
    arrays.check_array("b", b, dtypes=DTYPES, ndim=2, device=device_arrays, contiguous=False)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b, max_dim=MAX_DIM)
    od = out_dtype_ or dt
    if od not in (dt, "float32"):
        raise ValueError(f"out_dtype: expected {dt!r} (the input dtype) or 'float32', got {od!r}")
    if out is None:
        out = arrays.empty((m, n), od, a)
    else:
        arrays.check_array("out", out, dtypes=(od,), ndim=2, device=device_arrays, contiguous=False)
        if tuple(int(s) for s in out.shape) != (m, n):
            raise ValueError(f"out: expected shape {(m, n)}, got {tuple(out.shape)}")
        if arrays.library(out) != arrays.library(a):
            raise TypeError(f"out: expected a {arrays.library(a)} array like the inputs, got {arrays.library(out)}")
        if arrays.overlap(out, a) or arrays.overlap(out, b):
            raise ValueError("out: must not share memory with a or b (the kernels read A and B while writing C)")
    lda, ldb, ldc = _row_stride("a", a), _row_stride("b", b), _row_stride("out", out)
    return out, m, n, k, lda, ldb, ldc, dt


def vec_flags(a, b, out, lda: int, ldb: int, ldc: int) -> int:
    """Which operands may take 16-byte accesses: row stride a multiple of 8 elements and a 16-byte aligned start
    (then every 8-element chunk of every row is aligned). C stores pairs: even row stride, pair-aligned start."""
    f = 0
    if lda % 8 == 0 and arrays.aligned(a, 16):
        f |= VEC_A
    if ldb % 8 == 0 and arrays.aligned(b, 16):
        f |= VEC_B
    pair = 2 * arrays.ITEMSIZE[arrays.dtype_name(out)]
    if ldc % 2 == 0 and arrays.aligned(out, pair):
        f |= VEC_C
    return f


# ---------------------------------------------------------------------------------------------------------------------
# The CUDA C rungs
# ---------------------------------------------------------------------------------------------------------------------
def _available() -> tuple[bool, str]:
    if not device.has_gpu():
        return False, "needs a GPU"
    arch = device.info().arch
    if not lab.arch_matches(arch, TC_ARCHS):
        return False, f"needs bf16 mma.sync and cp.async (sm_80 or later); this GPU is {arch}"
    return True, ""


def wmma_grid(m: int, n: int) -> tuple[int, int, int]:
    """tc_01_wmma's grid: one block of 128 threads per 64 x 64 tile of C, (column tiles, row tiles)."""
    grid_n, grid_m = -(-n // WMMA_TILE[1]), -(-m // WMMA_TILE[0])
    if grid_m > 65535:
        raise ValueError(f"a: M = {m} needs {grid_m} > 65535 row blocks of {WMMA_TILE[0]}")
    return grid_n, grid_m, 1


def mma_grid(m: int, n: int, cfg: dict) -> tuple[int, int, int]:
    """tc_02_mma_sync's grid: one block per BM x BN tile of C, in one dimension (the kernel orders them in groups)."""
    tiles = -(-m // cfg["BM"]) * -(-n // cfg["BN"])
    if tiles > 2**31 - 1:
        raise ValueError(f"a, b: {tiles} tiles exceed the grid limit")
    return tiles, 1, 1


def _defines(dtype: str, out_dt: str, cfg: dict | None) -> dict:
    d = {"IN_FP16": int(dtype == "float16"), "OUT_F32": int(out_dt == "float32")}
    if cfg:
        d.update(cfg)
    return d


@functools.lru_cache(maxsize=None)
def _kernel(name: str, defines: tuple, smem: int):
    k = cuda.get_kernel(CU, name, defines=dict(defines))
    if smem > 48 * 1024:
        k.max_dynamic_shared_size_bytes = smem      # opt in above the 48 KiB default, once per compiled kernel
    return k


def _run(name: str, a, b, out, out_dtype_, cfg):
    out, m, n, k, lda, ldb, ldc, dt = prepare(a, b, out, out_dtype_)     # validate first: host arrays -> TypeError
    ok, why = _available()
    if not ok:
        raise RuntimeError(f"{name}: {why}")
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    od = arrays.dtype_name(out)
    if name == "tc_01_wmma":
        grid, block, smem, defs = wmma_grid(m, n), (128, 1, 1), 0, _defines(dt, od, None)
    else:
        gpu = device.info()
        cfg = validate_config(cfg, gpu=gpu) if cfg is not None else mma_config(gpu).values
        grid, block, smem, defs = mma_grid(m, n, cfg), (config_threads(cfg), 1, 1), config_smem(cfg), \
            _defines(dt, od, cfg)
    kern = _kernel(name, tuple(sorted(defs.items())), smem)
    # pointers go as 64-bit integers: bf16 arrays are torch tensors, which CuPy's launcher does not take
    args = (np.int32(m), np.int32(n), np.int32(k), np.uint64(arrays.ptr(a)), np.int32(lda), np.uint64(arrays.ptr(b)),
            np.int32(ldb), np.uint64(arrays.ptr(out)), np.int32(ldc), np.int32(vec_flags(a, b, out, lda, ldb, ldc)))
    kern(grid, block, args, shared_mem=smem)
    return out


def gemm_wmma(a, b, out=None, *, out_dtype: str | None = None):
    """Rung 01: C = a @ b with nvcuda::wmma. a, b: CuPy fp16 or torch CUDA bf16/fp16 matrices with contiguous rows
    (any row stride, any alignment); out: same dtype as the inputs, or float32 (out_dtype='float32')."""
    return _run("tc_01_wmma", a, b, out, out_dtype, None)


def gemm_mma(a, b, out=None, *, config: dict | None = None, out_dtype: str | None = None):
    """Rung 02: C = a @ b with mma.sync + ldmatrix + swizzle + cp.async. config: a dict of BM, BN, BK, WM, WN, STAGES
    (validated; default: mma_config - the --tune record for this GPU, else DEFAULT_CONFIG, then --set). Arrays as for
    gemm_wmma."""
    if config is not None:
        validate_config(config)        # before anything else, GPU or not
    return _run("tc_02_mma_sync", a, b, out, out_dtype, config)


# ---------------------------------------------------------------------------------------------------------------------
# Triton: tl.dot (tc_dot_kernel in triton_kernels.py)
# ---------------------------------------------------------------------------------------------------------------------
def _tcfg(bm, bn, bk, warps, stages, group=8) -> dict:
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages)


# A few configs for GPUs with 144 KiB or more of shared memory a block (lab 3.2's tuner picked 128 x 256 x 64, 8 warps,
# 4 stages at 4096^3 bf16 on Hopper), and a compact set for GPUs that give a block 99 KiB, where none of the first
# fits (triton_candidates picks); 64 x 64 for small problems.
TRITON_CONFIGS = [_tcfg(128, 256, 64, 8, 3), _tcfg(128, 256, 64, 8, 4), _tcfg(256, 128, 64, 8, 3),
                  _tcfg(128, 128, 64, 4, 4)]
TRITON_COMPACT = [_tcfg(128, 256, 32, 8, 3), _tcfg(128, 128, 32, 4, 4), _tcfg(64, 128, 64, 4, 3)]
TRITON_SMALL = _tcfg(64, 64, 32, 4, 3)
TRITON_INTERPRETER = _tcfg(32, 32, 16, 4, 1, group=4)
TRITON_TUNE_MIN = 512
TRITON_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")


def triton_smem(cfg: dict, elt: int = 2) -> int:
    """Shared memory a tl.dot config asks for when Triton pipelines its loads: num_stages slabs of (BM + BN) x BK
    elements. That is what a launch on 16-byte aligned operands gets; a compile that cannot assume the alignment (the
    plan's ahead-of-time check) does not pipeline and needs less, so this estimate, not the plan, decides what fits."""
    return cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elt


def triton_candidates(gpu: device.DeviceInfo | None = None) -> list[dict]:
    """The configs the autotuner times on `gpu` (default: device.current()): those of TRITON_CONFIGS that fit its
    shared memory per block, or TRITON_COMPACT where none does (a config that does not fit fails to launch)."""
    limit = (gpu or device.current()).smem_per_block_optin
    return [c for c in TRITON_CONFIGS if triton_smem(c) <= limit] or \
        [c for c in TRITON_COMPACT if triton_smem(c) <= limit]


def triton_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """How gemm_triton runs on `gpu` (default: here, device.current()), decided here: with TRITON_AUTOTUNE=1 (the
    default) triton.autotune chooses among triton_candidates(gpu) for problems of at least TRITON_TUNE_MIN a side, and
    smaller ones run the fixed config; TRITON_AUTOTUNE=0 runs the fixed config at every size. The fixed config is
    TRITON_SMALL (here in the interpreter: TRITON_INTERPRETER), then --set BLOCK_M=.. BLOCK_N=.. BLOCK_K=.. GROUP_M=..
    num_warps=.. num_stages=.. (so `--set TRITON_AUTOTUNE=0 --set BLOCK_M=128` runs 128-row tiles everywhere)."""
    interpreter = INTERPRETER and gpu is None
    gpu = gpu or device.current()

    def check(v: dict) -> dict:
        pow2 = all(v[k] >= 16 and v[k] & (v[k] - 1) == 0 for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        if not pow2 or v["GROUP_M"] < 1 or v["num_warps"] not in (1, 2, 4, 8, 16) or v["num_stages"] < 1 \
                or v["TRITON_AUTOTUNE"] not in (0, 1):
            raise ValueError(f"triton tc_dot_kernel: BLOCK_M, BLOCK_N, BLOCK_K powers of two >= 16, GROUP_M >= 1, "
                             f"num_warps 1..16 (a power of two), num_stages >= 1, TRITON_AUTOTUNE 0 or 1; got "
                             f"{config.fmt(v)}")
        if not interpreter and triton_smem(v) > gpu.smem_per_block_optin:
            raise ValueError(f"triton tc_dot_kernel: {config.fmt(v)} needs {triton_smem(v)} B of shared memory, "
                             f"more than the {gpu.smem_per_block_optin} B a block may have on {gpu.name}")
        return v

    fixed = TRITON_INTERPRETER if interpreter else TRITON_SMALL
    return config.resolve("triton tc_dot_kernel", dict(fixed, TRITON_AUTOTUNE=1), validate=check)


@functools.lru_cache(maxsize=None)
def _autotuned(candidates: tuple):
    """triton.autotune over `candidates` (tuples of a config's items), one autotuner per candidate list."""
    cfgs = [triton.Config({k: v for k, v in c if k.isupper()}, num_warps=dict(c)["num_warps"],
                          num_stages=dict(c)["num_stages"]) for c in candidates]
    return triton.autotune(configs=cfgs, key=["M", "N", "K"])(tc_dot_kernel)


def triton_grid(m: int, n: int, meta: dict) -> tuple[int]:
    """Programs of tc_dot_kernel: one per BLOCK_M x BLOCK_N tile of C."""
    return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)


def gemm_triton(a, b, out=None, *, config: dict | None = None, out_dtype: str | None = None):
    """Triton tl.dot: C = a @ b, fp32 accumulation. On a GPU: CuPy/torch arrays, as triton_config says (autotuned over
    the candidates that fit this GPU when M, N, K >= 512, else one fixed config), or one explicit config; in the
    interpreter: NumPy / CPU torch arrays, TRITON_INTERPRETER."""
    out, m, n, k, lda, ldb, ldc, dt = prepare(a, b, out, out_dtype, device_arrays=not INTERPRETER)
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    args = (a, b, out, m, n, k, lda, ldb, ldc)
    upcast = bool(INTERPRETER and dt == "bfloat16")
    resolved = triton_config().values if config is None else None
    if resolved is not None and resolved["TRITON_AUTOTUNE"] and not INTERPRETER and min(m, n, k) >= TRITON_TUNE_MIN:
        cands = tuple(tuple(c.items()) for c in triton_candidates(device.info()))
        launch(_autotuned(cands), lambda meta: triton_grid(m, n, meta), *args, UPCAST=upcast)
        return out
    cfg = dict(config or {k_: resolved[k_] for k_ in TRITON_KEYS})
    meta = {k_: v for k_, v in cfg.items() if k_.isupper()}
    launch(tc_dot_kernel, triton_grid(m, n, meta), *args, UPCAST=upcast, **meta, num_warps=cfg["num_warps"],
           num_stages=cfg["num_stages"])
    return out


def triton_unavailable(gpu=None) -> str:
    """bf16 tl.dot has no tensor-core path before sm_80 (Triton refuses to compile it for sm_75)."""
    if gpu is not None and gpu.cc < 80:
        return tr("bf16 tl.dot needs sm_80 or later (no bf16 tensor cores before Ampere); this GPU is {arch}",
                  arch=gpu.arch)
    return ""


# ---------------------------------------------------------------------------------------------------------------------
# Rung 03, the Hopper path (wgmma + TMA): kernels_wgmma.cu, its host side in wgmma.py
# ---------------------------------------------------------------------------------------------------------------------
# The build each rung-03 variant asks gemm_wgmma for. The plain one asks nothing: it runs what wgmma.resolve_build
# picks (this GPU's --tune record, else the default; --set WGMMA_CLUSTER=2 and the like). The fixed builds name every
# field, so neither the record nor --set changes what they measure.
WGMMA_BUILDS = {
    WGMMA_NAME: {},
    WGMMA_CLUSTER_NAME: dict(b_kmajor=False, cluster=2, tma_store=False),
    WGMMA_TMA_STORE_NAME: dict(cluster=1, tma_store=True, c_passes=1),
    WGMMA_CLUSTER_TMA_STORE_NAME: dict(b_kmajor=False, cluster=2, tma_store=True, c_passes=1),
}


def gemm_wgmma_tma(a, b, out=None):
    """sm_90a wgmma + TMA GEMM (kernels_wgmma.cu through wgmma.gemm_wgmma): bf16 / fp16 in and out, fp32 accumulate.
    The build gemm_wgmma picks when not told: this GPU's --tune record (wgmma.resolve_build), else the default."""
    return wg.gemm_wgmma(a, b, out=out, **WGMMA_BUILDS[WGMMA_NAME])


def gemm_wgmma_cluster(a, b, out=None):
    """Rung 03 compiled with CLUSTER=2: pairs of blocks share each B tile by TMA multicast (N-major B), C from
    registers."""
    return wg.gemm_wgmma(a, b, out=out, **WGMMA_BUILDS[WGMMA_CLUSTER_NAME])


def gemm_wgmma_tma_store(a, b, out=None):
    """Rung 03 compiled with EPI_TMA=1: C through shared memory and TMA stores, overlapped with the next tile."""
    return wg.gemm_wgmma(a, b, out=out, **WGMMA_BUILDS[WGMMA_TMA_STORE_NAME])


def gemm_wgmma_cluster_tma_store(a, b, out=None):
    """Rung 03 with CLUSTER=2 and EPI_TMA=1 together (N-major B)."""
    return wg.gemm_wgmma(a, b, out=out, **WGMMA_BUILDS[WGMMA_CLUSTER_TMA_STORE_NAME])


class HopperVariant(lab.Variant):
    """A variant of the sm_90a kernel (archs=("sm_90",)). Off Hopper its one-line reason is wgmma's own
    (wgmma.unavailable_reason: Hopper-only, sm_90a) rather than the bare architecture mismatch."""

    def available(self, gpu=None):
        ok, why = super().available(gpu)
        here = gpu if gpu is not None else device.info() if device.has_gpu() else None
        if not ok and here is not None and not lab.arch_matches(here.arch, self.archs):
            why = wg.unavailable_reason(here) or why
        return ok, why


# ---------------------------------------------------------------------------------------------------------------------
# Peers: cuBLAS through torch and CuPy
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


@contextlib.contextmanager
def _full_fp32_reduction():
    """cuBLAS may otherwise keep split-K partial sums in 16 bits (a different, less accurate function); the check
    holds every variant to fp32 accumulation, so the peer is asked for it too (no effect on speed at 4096^3)."""
    import torch

    m = torch.backends.cuda.matmul
    old = (m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction)
    m.allow_fp16_reduced_precision_reduction = False
    m.allow_bf16_reduced_precision_reduction = False
    try:
        yield
    finally:
        m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = old


def peer_torch(a, b, out=None):
    """torch.matmul (cuBLAS), fp32 accumulation."""
    import torch

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), arrays.dtype_name(a), a)
    with _full_fp32_reduction():
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
    return out


def peer_cupy(a, b, out=None):
    """cupy.matmul (cuBLAS); fp16 only (CuPy has no bf16)."""
    import cupy

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), arrays.dtype_name(a), a)
    cupy.matmul(a, b, out=out)
    return out


VARIANTS = [
    lab.Variant("cuda 01 wmma", gemm_wmma, "cuda", dtypes=DTYPES, archs=TC_ARCHS, note="nvcuda::wmma 16x16x16"),
    lab.Variant("cuda 02 mma.sync", gemm_mma, "cuda", dtypes=DTYPES, archs=TC_ARCHS,
                note="mma.sync m16n8k16 + ldmatrix + swizzle + cp.async"),
    lab.Variant("triton tl.dot", gemm_triton, "triton", dtypes=DTYPES, unavailable=triton_unavailable),
    HopperVariant(WGMMA_NAME, gemm_wgmma_tma, "cuda", dtypes=DTYPES, archs=("sm_90",),
                  unavailable=wg.unavailable_reason,
                  note="sm_90a wgmma + TMA (kernels_wgmma.cu), the build --tune recorded for this GPU"),
    HopperVariant(WGMMA_CLUSTER_NAME, gemm_wgmma_cluster, "cuda", dtypes=DTYPES, archs=("sm_90",),
                  unavailable=wg.unavailable_reason, note="rung 03 with CLUSTER=2: B tiles shared by TMA multicast"),
    HopperVariant(WGMMA_TMA_STORE_NAME, gemm_wgmma_tma_store, "cuda", dtypes=DTYPES, archs=("sm_90",),
                  unavailable=wg.unavailable_reason,
                  note="rung 03 with EPI_TMA=1: C through shared memory + TMA store, 3 stages"),
    HopperVariant(WGMMA_CLUSTER_TMA_STORE_NAME, gemm_wgmma_cluster_tma_store, "cuda", dtypes=DTYPES,
                  archs=("sm_90",), unavailable=wg.unavailable_reason, note="rung 03 with CLUSTER=2 and EPI_TMA=1"),
]
PEERS = [
    lab.Variant("torch.matmul (cuBLAS)", peer_torch, "peer", dtypes=DTYPES),
    lab.Variant("cupy.matmul (cuBLAS)", peer_cupy, "peer", dtypes=("float16",)),
]
MMA = "cuda 02 mma.sync"
CUBLAS = "torch.matmul (cuBLAS)"

# Every tile edge, K tails (K not a multiple of 8, K < one k-tile), one row or column, tall and skinny, a product
# large enough for interior tiles and many k-tiles.
CHECK_CASES = [((1, 1, 1), "bfloat16"), ((1, 1, 1), "float16"), ((127, 129, 131), "bfloat16"),
               ((127, 129, 131), "float16"), ((1000, 1000, 8), "bfloat16"), ((33, 65, 13), "float16"),
               ((257, 302, 1000), "bfloat16"), ((5, 4097, 77), "float16"), ((1500, 7, 333), "bfloat16"),
               ((512, 512, 2048), "float16")]
# Under compute-sanitizer (tools/sanitize.py): the two smallest edge cases, and one with an interior block for the
# 128-row tiles and a K tail (40 = one 32-deep k-tile + 8): tc_02's fast copy path next to the general one.
SANITIZE_CASES = [((1, 1, 1), "bfloat16"), ((5, 4097, 77), "float16"), ((136, 256, 40), "bfloat16"),
                  ((257, 40, 64), "bfloat16")]       # 3 tile rows (a clamped cluster partner), 1 B box
CPU_CHECK_CASES = [((1, 1, 1), "bfloat16"), ((5, 7, 3), "float16"), ((33, 65, 40), "bfloat16"),
                   ((40, 50, 70), "float16"), ((127, 33, 19), "bfloat16")]
QUICK_CASES = 3                # --quick checks the first three


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's main cases on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
BENCH_N = 4096          # the main case, bf16 n^3: every rung and peer, the mma.sync target (and WGMMA_TARGET_SIZES)
PEAK_THREADS = 256      # tc_00_mma_peak's block (its __launch_bounds__)


def bench_bytes(n: int) -> int:
    """Bytes the benchmark holds at once at n^3: A, B and two outputs in bf16 (a head to head times two kernels into
    two outputs), and the float64 copy of B that the sampled-row check multiplies by."""
    return 4 * 2 * n * n + 8 * n * n


def peak_blocks(regs: int, gpu: device.DeviceInfo) -> int:
    """One full wave of tc_00_mma_peak (PEAK_THREADS a block): every SM holding as many blocks as its registers and
    thread slots allow (the occupancy calculator), so no SM idles in a tail wave while others still run."""
    return gpu.sms * max(1, occupancy.occupancy(gpu.arch, PEAK_THREADS, regs).blocks_per_sm)


def _triton_signature(dtype: str) -> dict:
    t = {"bfloat16": "*bf16", "float16": "*fp16"}[dtype]
    return {"a_ptr": t, "b_ptr": t, "c_ptr": t, "M": "i32", "N": "i32", "K": "i32", "lda": "i32", "ldb": "i32",
            "ldc": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
            "GROUP_M": "constexpr", "UPCAST": "constexpr"}


def triton_launch(variant: str, n: int, cfg: dict, dtype: str, case: str, source: str = "") -> plan.Launch:
    """The launch gemm_triton makes with `cfg` on an n x n x n problem (lab 4.4's plan lists its tiles with it)."""
    meta = {k: cfg[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")}
    return plan.Launch(variant, "tc_dot_kernel", "triton", fn=tc_dot_kernel, grid=triton_grid(n, n, meta),
                       signature=_triton_signature(dtype), defines=dict(meta, UPCAST=False),
                       num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case, config_source=source)


def mma_launch(variant: str, n: int, cfg: dict, dtype: str, case: str, source: str = "") -> plan.Launch:
    """The launch gemm_mma makes with `cfg` on an n x n x n problem (grid, block, dynamic shared memory, -D values
    from the functions _run uses; lab 4.4's plan lists its tiles with it)."""
    return plan.Launch(variant, "tc_02_mma_sync", "cuda", grid=mma_grid(n, n, cfg), threads=config_threads(cfg),
                       source=CU, dyn_smem=config_smem(cfg), defines=_defines(dtype, dtype, cfg), case=case,
                       config_source=source)


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    """Every kernel launch of the benchmark's bf16 cases on `gpu`: the rungs and the mma.sync ceiling kernel at
    BENCH_N^3, the Triton GEMM (each autotune candidate), and rung 03's builds at WGMMA_TARGET_SIZES (sm_90)."""
    dt = "bfloat16"
    n, _ = plan.fit(size or BENCH_N, bench_bytes, gpu)
    case = f"{n}^3 {dt}"
    out = []
    if lab.arch_matches(gpu.arch, TC_ARCHS):
        cu = dict(impl="cuda", source=CU, case=case)
        out.append(plan.Launch("cuda 01 wmma", "tc_01_wmma", grid=wmma_grid(n, n), threads=128,
                               defines=_defines(dt, dt, None), **cu))
        mres = mma_config(gpu)
        out.append(mma_launch(MMA, n, mres.values, dt, case, mres.source()))
        peak = _defines(dt, dt, None)
        regs, _ = cuda.resources(CU, "tc_00_mma_peak", gpu, peak)
        out.append(plan.Launch("", "tc_00_mma_peak", grid=peak_blocks(regs, gpu), threads=PEAK_THREADS,
                               defines=peak, **dict(cu, case=tr("{case}: the mma.sync ceiling, one full wave",
                                                                 case=case))))
    tres = None if triton_unavailable(gpu) else triton_config(gpu)
    if tres is not None and tres["TRITON_AUTOTUNE"] and n >= TRITON_TUNE_MIN:
        cands = triton_candidates(gpu)
        out += [triton_launch("triton tl.dot", n, c, dt, tr("{case}, autotune candidate {i} of {n}", case=case, i=i + 1,
                                                             n=len(cands)),
                              tr("autotuned ({source})", source=config.say_source(tres.source())))
                for i, c in enumerate(cands)]
    elif tres is not None:
        out.append(triton_launch("triton tl.dot", n, tres.values, dt, case, tres.source()))
    if wg.unavailable_reason(gpu) is None:
        for size_w in WGMMA_TARGET_SIZES:
            m, _ = plan.fit(size_w, bench_bytes, gpu)
            for name, ask in WGMMA_BUILDS.items():
                kmaj = ask.get("b_kmajor", wg.default_b_kmajor())
                build, note = wg.resolve_build(m, m, m, **dict(ask, b_kmajor=kmaj), gpu=gpu)
                cl = wg.launch_cluster(m, build["cluster"])
                grid, smem, defs = wg.launch_shape(m, m, dt, kmaj, cl, build["tma_store"], build["c_passes"],
                                                   gpu=gpu)
                out.append(plan.Launch(name, wg.KERNEL, "cuda", grid=grid, threads=wg.THREADS, source=wg.KERNEL_PATH,
                                       defines=defs, arch=wg.ARCH, dyn_smem=smem,
                                       case=f"{m}^3 {dt}, {wg.build_label(build)}",
                                       config_source=wg.say_note(note) if not ask else "fixed (the variant's build)"))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# What the compiler made of the rungs (here, not in bench.py: lab 4.4 builds its tile table on it)
# ---------------------------------------------------------------------------------------------------------------------
def compile_rows(arch: str, configs=None) -> list[dict]:
    """Registers, shared memory, spills and the tensor-core instruction census of both rungs, per config."""
    rows = []
    for i, cfg in enumerate(configs if configs is not None else [DEFAULT_CONFIG]):
        rep = cuda.compile_report(CU, arch, defines=cfg)
        names = ["tc_01_wmma", "tc_02_mma_sync"] if i == 0 else ["tc_02_mma_sync"]
        for name in names:
            k = rep.kernels[name]
            c = k.sass_counts
            ops = [cuda._opcode(ln) for ln in k.sass if not ln.startswith("@!PT")]   # drop never-executed slots
            rows.append({"kernel": name, "arch": rep.arch, "config": "64x64x32 (fixed)" if name == "tc_01_wmma"
                         else short(cfg), "regs": k.registers,
                         "smem": k.smem_bytes if name == "tc_01_wmma" else config_smem(cfg),
                         "spills": k.spills, "HMMA": c.get("HMMA", 0), "LDSM": c.get("LDSM", 0),
                         "LDGSTS": c.get("LDGSTS", 0), "LDS": sum(o.split(".")[0] == "LDS" for o in ops),
                         "LD generic": sum(o.split(".")[0] == "LD" for o in ops), "STS": cuda._total(c, "STS"),
                         "BAR": c.get("BAR", 0)})
    return rows


def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
