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
  * tile parameters as -D defines (BM, BN, BK, WM, WN, STAGES; every compile-time value of both .cu files is set
    in Python - mma_configs.CONFIG, wgmma_kernel.CONFIG - and reaches the kernel as -D), validated in Python
    (shared memory within this GPU's opt-in limit per block, warps tile the block, registers), and a small CONFIGS
    list that --tune times at 4096^3
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

The code, one job a module; lab.py is the lab's contract with the shared runner (common/lab.py: the variants, peers,
cases, reference, tolerance and the plan's launches) and re-exports the names of the others, so callers reach every
one of them as lab.X: mma_configs.py (rung 02's configurations), operands.py (the validation every wrapper shares),
cuda_rungs.py (rungs 01 and 02 of kernels.cu), triton_gemm.py (the tl.dot rung's host side; its kernel is in
triton_kernels.py) and wgmma.py (rung 03, itself split by job). bench.py and its modules measure; lab.py never
imports them.

Run: python -m phase4_optimization.lab03_tensor_cores [--quick] [--tune] [--size N] [--wgmma-debug] [--no-bench]
     [--arch sm_80] [--replot] [--plan [--gpu NAME]] [--set STAGES=3] [--set WGMMA_CLUSTER=2]
"""
from __future__ import annotations

import contextlib
import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, occupancy, plan
from common.i18n import tr
from common.arrays import mnk as _mnk             # (M, N, K) from an int or a 3-tuple
from common.triton_support import INTERPRETER

# The lab's modules. Each import names everything the module offers, used here or not: lab 4.4, tools/profile.py, the
# course's exercises, bench.py and the tests reach those names as lab.X (hence noqa: F401, re-exports).
from . import wgmma as wg
from .cuda_rungs import (BUILD_DEFINES, CU, HERE, TC_ARCHS, WMMA_TILE, _available, _defines, _kernel,  # noqa: F401
                         _run, compile_rows, defines, gemm_mma, gemm_wmma, mma_grid, mma_launch, wmma_grid)
from .mma_configs import (CONFIG, CONFIG_KEYS, CONFIGS, DEFAULT_CONFIG, OPTIONAL, OPTIONAL_KEYS, TILE_KEYS,  # noqa: F401
                          TUNED, _cfg, _check_winner, config_problems, config_smem, config_threads, ldmatrix_conflicts,
                          mma_config, short, swizzle, validate_config)
from .operands import (DTYPES, MAX_DIM, VEC_A, VEC_B, VEC_C, _elem_strides, _row_stride, prepare,  # noqa: F401
                       vec_flags)
from .triton_gemm import (TRITON_COMPACT, TRITON_CONFIGS, TRITON_INTERPRETER, TRITON_KEYS,  # noqa: F401
                          TRITON_SMALL, TRITON_TUNE_MIN, _autotuned, _tcfg, _triton_signature, gemm_triton,
                          tc_dot_kernel, triton_candidates, triton_config, triton_grid, triton_launch, triton_smem,
                          triton_unavailable)

LAB = "phase4_lab03_tensor_cores"
OUT_DTYPES = ("bfloat16", "float16", "float32")
TARGET = 0.65                   # the lab's target: mma.sync bf16 4096^3 >= 0.65x cuBLAS
WGMMA_TARGET = 0.97             # and wgmma + TMA bf16 4096^3 and 8192^3 >= 0.97x cuBLAS
WGMMA_TARGET_SIZES = (4096, 8192)
WGMMA_MODULE = wg.__name__
WGMMA_NAME = "cuda 03 wgmma+TMA"
WGMMA_CLUSTER_NAME = "cuda 03 wgmma+TMA, 2-block clusters"
WGMMA_TMA_STORE_NAME = "cuda 03 wgmma+TMA, TMA-store epilogue"
WGMMA_CLUSTER_TMA_STORE_NAME = "cuda 03 wgmma+TMA, 2-block clusters, TMA-store epilogue"


# ---------------------------------------------------------------------------------------------------------------------
# The -D values of a compile outside the wrappers
# ---------------------------------------------------------------------------------------------------------------------
def compile_defines(path: str = CU, arch: str | None = None) -> dict:
    """The -D values a compile of this lab's .cu file `path` needs (for tools and tests that compile it outside the
    wrappers; neither file has a value of its own): kernels.cu's build from CONFIG (bf16 in and out; no value of it
    depends on `arch`), kernels_wgmma.cu's default build (wgmma_kernel.defines: bf16, N-major B, single blocks, C from
    registers; sm_90a only)."""
    path = os.path.abspath(path)
    if path == os.path.abspath(wg.KERNEL_PATH):
        return wg.defines("bfloat16")
    if path != os.path.abspath(CU):
        raise ValueError(f"{path}: not a CUDA C file of this lab ({CU}, {wg.KERNEL_PATH})")
    return defines("bfloat16", "bfloat16")


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
