"""Lab 3.2 - Block tiling and tile-wise memory access: a fast Triton matmul.

You will learn
  * how one program computes one BLOCK_M x BLOCK_N tile of C by walking K in BLOCK_K steps: two tile loads and one
    `tl.dot` per step, the accumulator in registers, fp32 whatever the input dtype;
  * why the ORDER in which programs run matters even though each one computes the same tile: programs that run at
    the same time share A row-panels and B column-panels through L2; the grouped ("super-row") order of GROUP_M rows
    makes a wave of programs touch fewer distinct panels than row-major order. The lab counts the tiles each order
    loads from DRAM under a simple model, then measures both orders;
  * what `num_stages` buys: a ring of shared-memory buffers filled by cp.async (LDGSTS) several K-steps ahead, so
    the tensor cores (wgmma on Hopper, HGMMA in SASS) never wait for memory; shared memory grows by one A + B tile
    per stage (the compile report shows it, without a GPU);
  * autotuning: a small Hopper config space (BLOCK_M/N 128-256, BLOCK_K 64, 3-4 stages, 4-8 warps) benchmarked per
    (M, N, K, dtype) with `triton.autotune` on a GPU; one fixed config in the interpreter;
  * fp16/bf16 with fp32 accumulation, and fp32 in two labelled flavours: input_precision="ieee" (true fp32 FMAs,
    CUDA cores) and "tf32" (inputs rounded to 10-bit mantissas, tensor cores, ~1e-3 relative error) - the check
    holds each to its own tolerance ("tf32" is listed as its own dtype in the check cases);
  * any M, N, K: masks only where a tile is ragged (EVEN_K / EVEN_MN are compile-time flags, so the aligned
    benchmark shapes compile to mask-free loads), 64-bit offsets when a matrix passes 2^31 elements, any strides.

The two numbers (main case: bf16 4096 x 4096 x 4096): FLOPs = 2 M N K = 137.4 GFLOP; bytes that must move =
(M K + K N + M N) x 2 = 100.7 MB. 1365 FLOP/B, far above the H200 ridge point (~990 TFLOP/s dense bf16 / 4.8 TB/s
~ 206 FLOP/B): compute wins by ~7x. At cuBLAS's measured 733 TFLOP/s the product takes ~0.19 ms, while moving the
100.7 MB once would take ~23 us. The real DRAM traffic is larger than the minimum (tiles are re-read by different
programs: see the ordering table), but stays well under the compute time; the target is >= 0.95x cuBLAS.
fp32 ieee runs on the CUDA cores instead (67 TFLOP/s peak, ridge ~14 FLOP/B): still compute-bound at 4096^3.

Measured on an H200 (results/h200/phase3_lab02_matmul.json; Triton and cuBLAS timed in interleaved rounds): two of
the three targets were missed. bf16 4096^3: 666.6 TFLOP/s against cuBLAS's 702.9 (0.196 ms; not the 733 quoted
above), 0.948x: missed by 0.002, well inside the run's 12% spread (p20-p80), and the same kernel and tile (128x256x64,
8 warps, 4 stages) met the target in fp16 (622.7 against 650.6, 0.957x). bf16 8192^3: 623.3 against 679.5, 0.917x:
missed by 3 points, and the separate ordering run of the same tile (627.1 TFLOP/s) says it is no accident. The data
rule out program order (row-major and GROUP_M=8 within 0.4%, though the model gives row-major 2x the DRAM traffic),
and the tile space is flat at the top (the tuner's best four configs at 4096^3 within 8%). The likely cause is the
kernel's structure: the warps that run wgmma also issue every load as per-thread cp.async copies (the compile report:
48 cp.async, no other global loads), one tile per program and one program per SM (192 KiB of shared memory), where
cuBLAS's Hopper kernels load with TMA from dedicated producer warps. From 4096^3 to 8192^3 cuBLAS itself lost 3.3%,
Triton 6.5%. Smaller sizes: 392.4 TFLOP/s at 2048^3 (0.63x cuBLAS); 512^3, 1024^3 and 2048^3 all took 39-46 us for
64x different work, most likely a fixed per-call cost of the autotuned Python launch rather than the kernel (cuBLAS:
7, 9 and 28 us). fp32 ieee: 45.4 TFLOP/s (0.68 of the 67 TFLOP/s datasheet), 0.89x cuBLAS SGEMM (51.0), level with
phase 2's autotuned CUDA C SGEMM (45.3). tf32 (no target): 137.1 TFLOP/s, only 0.35x cuBLAS with TF32 on (397.1),
the weakest result in the lab and not explained by this run.

Run: python -m phase3_triton.lab02_matmul [--quick] [--no-bench] [--arch sm_80]
"""
from __future__ import annotations

import contextlib
import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton
from common.triton_support import load_summary as _loads
from common.triton_support import aot
from common.arrays import device_randn
from common.bench import runs
from common.triton_support import summarize

LAB = "phase3_lab02_matmul"
DTYPES = ("float16", "bfloat16", "float32")
PRECISIONS = ("ieee", "tf32")


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs. size = (M, N, K). The dtype "tf32" means fp32 storage computed with input_precision="tf32".
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def storage_dtype(dtype: str) -> str:
    return "float32" if dtype == "tf32" else dtype


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """A (M x K) and B (K x N), standard normal: products of order sqrt(K), no overflow in fp16 up to K ~ 10^8."""
    m, n, k = size
    st = storage_dtype(dtype)
    return (arrays.from_numpy(rng.standard_normal((m, k)), st, where),
            arrays.from_numpy(rng.standard_normal((k, n)), st, where))


def out_dtype(dtype: str) -> str:
    return storage_dtype(dtype)


def tolerance(size, dtype: str) -> check.Tol:
    # fp16/bf16: fp32 accumulation, so the error is the final rounding to the output dtype (the default tolerance).
    # tf32: every input loses 13 mantissa bits (relative 2^-11), so about 5e-4 per product: its own, looser tolerance.
    # fp32 ieee: a K-term fp32 sum, ~1e-7 sqrt(K) relative: the fp32 default holds well past K = 10^4.
    return check.tolerance(dtype)


# ---------------------------------------------------------------------------------------------------------------------
# The kernel
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr, EVEN_K: tl.constexpr, EVEN_MN: tl.constexpr, INDEX_64: tl.constexpr,
                  UPCAST: tl.constexpr):
    # --- which tile of C: grouped order. Programs are numbered down a column of GROUP_M tile-rows, then across, so
    # consecutive programs (which run at the same time) share B column-panels and reuse a few A row-panels through
    # L2. GROUP_M = 1 is plain row-major order. Measured on an H200 at bf16 8192^3 (tile 256x128x64): 627.1 TFLOP/s
    # grouped against 624.7 row-major, +0.4%, although the model halves the DRAM traffic (1136 against 2236 MiB):
    # at this size the math time hides the traffic either way, as the ordering prediction said.
    pid = tl.program_id(0)
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(grid_m - first_m, GROUP_M)       # the last group may have fewer tile-rows
    pid_m = first_m + (pid % per_group) % rows_here
    pid_n = (pid % per_group) // rows_here

    # --- the tiles' coordinates; 64-bit when a matrix has 2^31 elements or more (INDEX_64, chosen by the wrapper)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INDEX_64:
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    m_ok = offs_m[:, None] < M
    n_ok = offs_n[None, :] < N

    # --- walk K. With num_stages > 1 the compiler turns these loads into cp.async copies into a ring of shared-memory
    # buffers, issued num_stages - 1 steps ahead; tl.dot becomes wgmma (sm_90) or mma.sync (sm_80) on those buffers.
    # Measured on an H200 (bf16 4096^3, 128x256x64, 8 warps): 4 stages 0.200 ms, 3 stages 0.216 ms; the autotuner
    # picked 4 stages at every 16-bit size it tuned (512^3 to 8192^3).
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        if EVEN_K:
            if EVEN_MN:
                a = tl.load(a_ptrs)
                b = tl.load(b_ptrs)
            else:
                a = tl.load(a_ptrs, mask=m_ok, other=0.0)
                b = tl.load(b_ptrs, mask=n_ok, other=0.0)
        else:
            k_left = K - k * BLOCK_K                          # zeros past the end of K add nothing to the dot
            a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < k_left), other=0.0)
            b = tl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < k_left), other=0.0)
        if UPCAST:
            # interpreter only: Triton 3.9's interpreter multiplies the raw bits of bf16 tiles in tl.dot
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # --- write the tile (rounded to C's dtype) where it lies inside C
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    if EVEN_MN:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))
    else:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_ok & n_ok)


def program_coords(pid: int, grid_m: int, grid_n: int, group_m: int) -> tuple[int, int]:
    """The kernel's (pid_m, pid_n) for program `pid`, in Python (for the tile-load count and the tests)."""
    per_group = group_m * grid_n
    first_m = (pid // per_group) * group_m
    rows_here = min(grid_m - first_m, group_m)
    return first_m + (pid % per_group) % rows_here, (pid % per_group) // rows_here


# ---------------------------------------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, warps, stages, group=8):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages)


# Hopper, 16-bit inputs: one A + B stage is (BM + BN) x 64 x 2 B = 48 KiB for 128 x 256, so 3-4 stages fit in the
# 227 KiB a block may use; 8 warps = two warpgroups, each issuing wgmma on half the tile (64 or 128 rows).
# 128 x 64 is there for the small problems, where 128 x 256 tiles would leave most of the 132 SMs idle.
# Measured on an H200: the compile report gives 144 KiB of shared memory at 3 stages and 192 KiB at 4; the tuner
# picked 128 x 64 at 512^3 and 1024^3, 128 x 256 at 2048^3 and 4096^3, 256 x 128 at 8192^3 (all GROUP_M 8, 4 stages),
# and at 4096^3 128 x 64 was the slowest candidate (0.303 ms against 0.200 ms for 128 x 256).
CONFIGS_16 = [_cfg(128, 256, 64, 8, 3), _cfg(128, 256, 64, 8, 4), _cfg(256, 128, 64, 8, 3), _cfg(256, 128, 64, 8, 4),
              _cfg(128, 128, 64, 4, 4), _cfg(128, 64, 64, 4, 4)]
# fp32: a 4-byte element doubles the bytes per stage, so BLOCK_K drops to 32.
CONFIGS_TF32 = [_cfg(128, 128, 32, 4, 4), _cfg(128, 256, 32, 8, 3), _cfg(256, 128, 32, 8, 3)]
CONFIGS_IEEE = [_cfg(128, 128, 32, 8, 3), _cfg(128, 64, 32, 4, 4), _cfg(64, 128, 32, 4, 4)]
FIXED_GPU = _cfg(64, 64, 32, 4, 3)          # small and ragged problems (and every check case)
FIXED_INTERPRETER = _cfg(32, 32, 16, 4, 1, group=4)
TUNE_MIN = 512                              # autotune when M, N and K are all at least this


def _heuristics(args) -> dict:
    return {"EVEN_K": args["K"] % args["BLOCK_K"] == 0,
            "EVEN_MN": args["M"] % args["BLOCK_M"] == 0 and args["N"] % args["BLOCK_N"] == 0}


def _autotuned(configs):
    cfgs = [triton.Config({k: v for k, v in c.items() if k.isupper()}, num_warps=c["num_warps"],
                          num_stages=c["num_stages"]) for c in configs]
    heur = triton.heuristics({"EVEN_K": lambda a: _heuristics(a)["EVEN_K"],
                              "EVEN_MN": lambda a: _heuristics(a)["EVEN_MN"]})(matmul_kernel)
    return triton.autotune(configs=cfgs, key=["M", "N", "K"])(heur)


# triton.autotune needs a GPU (it times each config); the interpreter always runs FIXED_INTERPRETER.
TUNED = {} if INTERPRETER else {"16": _autotuned(CONFIGS_16), "tf32": _autotuned(CONFIGS_TF32),
                                "ieee": _autotuned(CONFIGS_IEEE)}


def _tuner_key(dtype: str, precision: str) -> str:
    return "16" if dtype in ("float16", "bfloat16") else precision


# ---------------------------------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _elem_strides(x) -> tuple[int, ...]:
    if arrays.library(x) == "torch":
        return tuple(int(s) for s in x.stride())
    return tuple(int(s) // x.itemsize for s in x.strides)


def _max_offset(shape, strides) -> int:
    return sum((int(d) - 1) * s for d, s in zip(shape, strides) if int(d) > 0)


def matmul_triton(a, b, out=None, *, precision: str | None = None, config: dict | None = None, tune: bool = True):
    """C = A @ B with the Triton kernel.

    a (M x K), b (K x N): float16 / bfloat16 (fp32 accumulation, C in the same dtype) or float32 with
    precision="ieee" (default) or "tf32". Any strides >= 0 (transposed views work without a copy); `out` must be
    contiguous. On a GPU, problems with M, N, K >= TUNE_MIN use the autotuned kernel (tune=False or an explicit
    config picks one config); in the interpreter, FIXED_INTERPRETER always. Arrays: CuPy or torch (bf16) on a GPU,
    NumPy or CPU torch in the interpreter.
    """
    dev = not INTERPRETER
    dt = arrays.check_array("a", a, dtypes=DTYPES, ndim=2, device=dev, contiguous=False)
    arrays.check_array("b", b, dtypes=DTYPES, ndim=2, device=dev, contiguous=False)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b)
    if dt == "float32":
        precision = precision or "ieee"
        if precision not in PRECISIONS:
            raise ValueError(f"precision: expected one of {PRECISIONS} for float32, got {precision!r}")
    elif precision not in (None, "tf32"):
        raise ValueError(f"precision: only float32 inputs take a precision ({dt} runs on the tensor cores with fp32 "
                         f"accumulation), got {precision!r}")
    out = arrays.check_out(out, (m, n), dt, a)
    if m == 0 or n == 0:
        return out
    if k == 0:
        arrays.fill(out, 0.0)
        return out
    sa, sb, sc = _elem_strides(a), _elem_strides(b), _elem_strides(out)
    if min(sa + sb) < 0:
        raise ValueError("a, b: negative strides are not supported; pass a copy (e.g. cupy.ascontiguousarray)")
    if max(sa[1], sb[0]) * 128 >= 2**31:
        # the K loop advances its pointers by BLOCK_K x (K-stride) in 32-bit arithmetic
        raise ValueError(f"a, b: a K-stride of {max(sa[1], sb[0])} elements is too large for the K loop's 32-bit "
                         "pointer steps; pass a contiguous copy")
    index_64 = max(_max_offset(a.shape, sa), _max_offset(b.shape, sb), _max_offset(out.shape, sc)) >= 2**31 - 1
    prec = precision if dt == "float32" else "tf32"
    common = dict(PRECISION=prec, INDEX_64=index_64, UPCAST=bool(INTERPRETER and dt == "bfloat16"))
    args = (a, b, out, m, n, k, sa[0], sa[1], sb[0], sb[1], sc[0], sc[1])
    if config is None and tune and not INTERPRETER and min(m, n, k) >= TUNE_MIN:
        tuned = TUNED[_tuner_key(dt, prec)]

        def grid(meta):
            return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)

        launch(tuned, grid, *args, **common)
        return out
    cfg = dict(config or (FIXED_INTERPRETER if INTERPRETER else FIXED_GPU))
    meta = {k_: v for k_, v in cfg.items() if k_.isupper()}
    meta.update(_heuristics({"M": m, "N": n, "K": k, **meta}))
    programs = triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])
    if programs > 2**31 - 1:
        raise ValueError(f"a, b: {programs} tiles exceed the grid limit; use larger BLOCK_M / BLOCK_N")
    launch(matmul_kernel, (programs,), *args, **common, **meta, num_warps=cfg["num_warps"],
                   num_stages=cfg["num_stages"])
    return out


def matmul_triton_tf32(a, b, out=None):
    """fp32 inputs, tensor cores with tf32 inputs (the 'tf32' check dtype)."""
    return matmul_triton(a, b, out=out, precision="tf32")


def best_config(dtype: str, precision: str = "ieee") -> dict | None:
    """The config the autotuner picked last for this dtype/precision (GPU only)."""
    t = TUNED.get(_tuner_key(dtype, precision))
    c = getattr(t, "best_config", None)
    if c is None:
        return None
    return dict(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)


# ---------------------------------------------------------------------------------------------------------------------
# Peers: cuBLAS through torch and CuPy
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


@contextlib.contextmanager
def _tf32(allowed: bool):
    import torch

    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def peer_torch_matmul(a, b, out=None):
    """torch.matmul = cuBLAS; fp32 with TF32 off (true SGEMM)."""
    import torch

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), arrays.dtype_name(a), a)
    if arrays.dtype_name(a) != "float32":
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
        return out
    with _tf32(False):
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
    return out


def peer_torch_matmul_tf32(a, b, out=None):
    import torch

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), "float32", a)
    with _tf32(True):
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
    return out


def peer_cupy_matmul(a, b, out=None):
    import cupy

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), arrays.dtype_name(a), a)
    cupy.matmul(a, b, out=out)
    return out


VARIANTS = [
    lab.Variant("triton matmul", matmul_triton, "triton", dtypes=("float16", "bfloat16", "float32"),
                note="fp32 = input_precision 'ieee'"),
    lab.Variant("triton matmul tf32", matmul_triton_tf32, "triton", dtypes=("tf32",),
                note="fp32 storage, input_precision 'tf32'"),
]
PEERS = [
    lab.Variant("torch.matmul (cuBLAS)", peer_torch_matmul, "peer", dtypes=("float16", "bfloat16", "float32")),
    lab.Variant("torch.matmul TF32 (cuBLAS)", peer_torch_matmul_tf32, "peer", dtypes=("tf32",)),
    lab.Variant("cupy.matmul (cuBLAS)", peer_cupy_matmul, "peer", dtypes=("float16", "float32")),
]
CHECK_CASES = [((1, 1, 1), "bfloat16"), ((17, 33, 65), "float16"), ((127, 255, 129), "float32"),
               ((130, 70, 300), "tf32"), ((256, 256, 256), "bfloat16"), ((300, 1000, 200), "bfloat16"),
               ((1000, 3, 257), "float32"), ((64, 1024, 96), "float16")]
CPU_CHECK_CASES = [((1, 1, 1), "float32"), ((5, 7, 3), "float16"), ((33, 65, 40), "bfloat16"), ((40, 50, 70), "tf32"),
                   ((200, 70, 50), "float32"), ((64, 64, 64), "float16")]
# --quick: the first four of each list; every variant's dtype appears in them
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# Program order: a count of the tiles each order loads
# ---------------------------------------------------------------------------------------------------------------------
def tile_loads(m: int, n: int, k: int, bm: int, bn: int, bk: int, group_m: int, wave: int) -> dict:
    """Tiles read from DRAM under a simple model of L2.

    Model: the programs of one wave (as many as the GPU runs at once) walk K in step, so at each K-step every A tile
    and B tile that the wave needs is read from DRAM once and served from L2 to every other program of the wave that
    needs it; nothing survives from one wave to the next. A wave then costs (distinct A row-panels + distinct B
    column-panels) x K/BLOCK_K tile loads.
    """
    gm, gn, kt = math.ceil(m / bm), math.ceil(n / bn), math.ceil(k / bk)
    programs = gm * gn
    a_tiles = b_tiles = 0
    for start in range(0, programs, wave):
        rows, cols = set(), set()
        for pid in range(start, min(start + wave, programs)):
            pm, pn = program_coords(pid, gm, gn, group_m)
            rows.add(pm)
            cols.add(pn)
        a_tiles += len(rows) * kt
        b_tiles += len(cols) * kt
    return {"a_tiles": a_tiles, "b_tiles": b_tiles, "programs": programs, "waves": math.ceil(programs / wave),
            "no_reuse_tiles": 2 * programs * kt, "once_tiles": (gm + gn) * kt}


def ordering_table(m, n, k, bm=128, bn=256, bk=64, elt=2, wave=132, groups=(1, 4, 8, 16)) -> list[dict]:
    rows = []
    a_tile, b_tile = bm * bk * elt, bk * bn * elt
    for g in groups:
        t = tile_loads(m, n, k, bm, bn, bk, g, wave)
        dram = t["a_tiles"] * a_tile + t["b_tiles"] * b_tile
        rows.append({"order": "row-major" if g == 1 else f"grouped, GROUP_M={g}", "A tiles": t["a_tiles"],
                     "B tiles": t["b_tiles"], "DRAM MiB (model)": dram / 2**20,
                     "x minimum": dram / ((m * k + k * n) * elt)})
    t = tile_loads(m, n, k, bm, bn, bk, 1, wave)
    rows.append({"order": "(no sharing at all: each program reads its own)", "A tiles": t["no_reuse_tiles"] // 2,
                 "B tiles": t["no_reuse_tiles"] // 2,
                 "DRAM MiB (model)": t["no_reuse_tiles"] // 2 * (a_tile + b_tile) / 2**20,
                 "x minimum": t["no_reuse_tiles"] // 2 * (a_tile + b_tile) / ((m * k + k * n) * elt)})
    return rows


def ordering_prediction(table: list[dict], n: int, wave: int) -> str:
    """One sentence read off an ordering_table: what grouping should buy at this size, and why."""
    rm = next(r for r in table if r["order"] == "row-major")
    g8 = next(r for r in table if r["order"] == "grouped, GROUP_M=8")
    change = g8["DRAM MiB (model)"] / rm["DRAM MiB (model)"] - 1
    grid_n = math.ceil(n / 256)
    bound_ms = rm["DRAM MiB (model)"] * 2**20 / 4.4e12 * 1e3
    math_ms = 2.0 * n ** 3 / 700e12 * 1e3
    why = (f"a row-major wave of {wave} programs already spans every one of the {grid_n} B column-panels and reuses "
           f"each of them ~{wave / grid_n:.0f}x, so there is little left to gain" if change > -0.1 else
           f"a row-major wave needs all {grid_n} B column-panels, a GROUP_M=8 wave about half of them")
    return (f"GROUP_M=8 changes the modelled DRAM traffic by {change:+.0%} at {n}^3 ({why}). Even row-major traffic "
            f"({rm['DRAM MiB (model)']:.0f} MiB, ~{bound_ms:.2f} ms at 4.4 TB/s) is under the math time (~{math_ms:.2f}"
            f" ms at 700 TFLOP/s), so the measured difference should be small, a few percent at most.")


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report
# ---------------------------------------------------------------------------------------------------------------------
_TY = {"float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32"}


def aot_matmul(cc: int, dtype: str = "bfloat16", precision: str = "tf32", cfg: dict | None = None):
    """The kernel as a GPU launch on contiguous, 16-divisible M, N, K would compile it (unit strides as constants)."""
    cfg = cfg or CONFIGS_16[0]
    ty = _TY[dtype]
    sig = {"a_ptr": ty, "b_ptr": ty, "c_ptr": ty, "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
           "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
           "stride_cn": "constexpr"}
    const = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "PRECISION": precision, "EVEN_K": True, "EVEN_MN": True,
             "INDEX_64": False, "UPCAST": False}
    const.update({k: v for k, v in cfg.items() if k.isupper()})
    sig.update({k: "constexpr" for k in const if k not in sig})
    return aot(matmul_kernel, sig, const, cc=cc, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
               divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"))


def compile_table(cc: int) -> list[dict]:
    rows = []
    base = CONFIGS_16[0]
    cases = [("bfloat16", "tf32", dict(base, num_stages=s)) for s in (1, 3, 4)]
    cases += [("float32", "tf32", CONFIGS_TF32[0]), ("float32", "ieee", CONFIGS_IEEE[0])]
    for dtype, prec, cfg in cases:
        s = summarize(aot_matmul(cc, dtype, prec, cfg))
        c = s["sass"]
        rows.append({"dtype": dtype if dtype != "float32" else f"fp32 {prec}",
                     "tile": f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']}", "warps": s["num_warps"],
                     "stages": cfg["num_stages"], "shared KiB": s["shared"] / 1024, "regs": s["regs"],
                     "local B": s["local"],
                     "cp.async": s["cp_async"], "wgmma": s["wgmma"], "mma.sync": s["mma_sync"],
                     "SASS HGMMA/HMMA/FFMA": f"{c.get('HGMMA', 0)}/{c.get('HMMA', 0)}/{c.get('FFMA', 0)}",
                     "global loads": _loads(s)})
    return rows


def show_compile_report(arch: str) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = compile_table(cc)
    report.print_table(rows, title=f"matmul_kernel compiled ahead of time for {arch}: what num_stages, the dtype and "
                                   "input_precision turn into")
    base = CONFIGS_16[0]
    stage_bytes = (base["BLOCK_M"] + base["BLOCK_N"]) * base["BLOCK_K"] * 2
    print(f"  one stage of A + B tiles = ({base['BLOCK_M']} + {base['BLOCK_N']}) x {base['BLOCK_K']} x 2 B = "
          f"{stage_bytes // 1024} KiB: shared memory grows by that per stage; with 1 stage the loads go straight to "
          "registers (no cp.async ring). 'ieee' runs on FFMA (CUDA cores), 'tf32' on the tensor cores.")
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
TARGETS = [("bfloat16", 4096, 0.95), ("bfloat16", 8192, 0.95), ("float16", 4096, 0.95)]
PHASE2_SGEMM = ("phase2_cuda.lab08_sgemm", "cuda 11")     # (module, variant name prefix) of the CUDA C SGEMM
SMALL_SIZES = [512, 1024, 2048]


def verify_sample(out, a, b, label: str, n_rows: int = 128) -> check.Comparison:
    """Check a big product on sampled rows (and the last one) against a float64 product computed on the arrays'
    device (cuBLAS DGEMM on a GPU)."""
    import torch

    ta, tb, to = (_torch_view(t) for t in (a, b, out))
    m = int(ta.shape[0])
    rows = torch.as_tensor(np.unique(np.concatenate([check.rng(11).integers(0, m, n_rows), [m - 1]])),
                           device=ta.device)
    ref = ta[rows].double() @ tb.double()
    return check.compare(to[rows].double().cpu().numpy(), ref.cpu().numpy(), label)


def _fns(dtype, size):
    m, n, k = size
    a, b = device_randn((m, k), storage_dtype(dtype), m + k), device_randn((k, n), storage_dtype(dtype), n + k + 1)
    c_t = arrays.empty((size[0], size[1]), storage_dtype(dtype), a)
    c_p = arrays.empty((size[0], size[1]), storage_dtype(dtype), a)
    return a, b, c_t, c_p


def bench_case(dtype: str, n: int, *, rounds: int = 3) -> dict:
    """Triton (autotuned) vs cuBLAS at n^3, interleaved; Triton's result is checked on sampled rows first.

    dtype "tf32" = fp32 inputs with input_precision "tf32" (peer: cuBLAS with TF32 on); "float32" = ieee (peer:
    cuBLAS SGEMM with TF32 off).
    """
    st = storage_dtype(dtype)
    prec = "tf32" if dtype == "tf32" else ("ieee" if dtype == "float32" else None)
    a, b, c_t, c_p = _fns(dtype, (n, n, n))
    tri = (lambda: matmul_triton(a, b, out=c_t, precision=prec))
    peer = peer_torch_matmul_tf32 if dtype == "tf32" else peer_torch_matmul
    tri()                                      # first call: autotunes this (M, N, K, dtype)
    cfg = best_config(st, prec or "tf32") if n >= TUNE_MIN else FIXED_GPU
    tuning = tuning_table(st, prec or "tf32")
    cmp = verify_sample(c_t, a, b, dtype)
    fns = {"cublas": lambda: peer(a, b, out=c_p), "triton": tri}
    # fp32 ieee: the CUDA C SGEMM of phase 2 (lab 2.8's best rung) doing the same job, when that lab is here
    cuda_c = lab.earlier_cuda_variant(*PHASE2_SGEMM[0].split("."), PHASE2_SGEMM[1], "float32") if dtype == "float32" else None
    if cuda_c is not None and runs(lambda: cuda_c.fn(a, b, out=c_p), f"phase 2 {cuda_c.name}"):
        fns["cuda C"] = lambda: cuda_c.fn(a, b, out=c_p)
    else:
        cuda_c = None
    ts_ = bench.interleaved(fns, rounds=rounds)
    flops = 2.0 * n ** 3
    res = {"dtype": dtype, "n": n, "triton_tflops": ts_["triton"].tflops(flops),
           "cublas_tflops": ts_["cublas"].tflops(flops), "ratio": ts_["cublas"].median_ms / ts_["triton"].median_ms,
           "triton_ms": ts_["triton"].median_ms, "cublas_ms": ts_["cublas"].median_ms,
           "spread": max(ts_["triton"].spread, ts_["cublas"].spread), "check": "ok" if cmp.ok else cmp.message,
           "config": _cfg_str(cfg), "cfg": cfg, "tuning": tuning, "ok": cmp.ok}
    if cuda_c is not None:
        res["cuda_c"] = f"{cuda_c.name}: {ts_['cuda C'].tflops(flops):.1f} TFLOP/s"
    return res


def _cfg_str(cfg) -> str:
    if not cfg:
        return "-"
    return (f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} G{cfg['GROUP_M']} w{cfg['num_warps']} "
            f"s{cfg['num_stages']}")


def tuning_table(dtype: str = "bfloat16", precision: str = "tf32") -> list[dict]:
    """Every config's time at the last tuned key (Autotuner.configs_timings, where this Triton has it)."""
    t = TUNED.get(_tuner_key(dtype, precision))
    timings = getattr(t, "configs_timings", None) or {}
    rows = []
    for c, ms in timings.items():
        med = ms[0] if isinstance(ms, (list, tuple)) else ms
        cfg = dict(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
        rows.append({"config": _cfg_str(cfg), "ms": float(med)})
    return sorted(rows, key=lambda r: r["ms"])


def bench_ordering(cfg: dict | None, n: int = 8192, dtype: str = "bfloat16", rounds: int = 3) -> list[dict]:
    """The tuned tile shape (cfg) with GROUP_M = 1 (row-major) and GROUP_M = 8, same everything else."""
    cfg = cfg or CONFIGS_16[0]
    a, b, c1, c8 = _fns(dtype, (n, n, n))
    fns = {f"GROUP_M={g}": (lambda g=g, c=c: matmul_triton(a, b, out=c, config=dict(cfg, GROUP_M=g)))
           for g, c in ((1, c1), (8, c8))}
    ts_ = bench.interleaved(fns, rounds=rounds)
    wave = device.info().sms
    model = {r["order"]: r for r in ordering_table(n, n, n, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"],
                                                   wave=wave, groups=(1, 8))}
    rows = []
    for g in (1, 8):
        t = ts_[f"GROUP_M={g}"]
        m = model["row-major" if g == 1 else "grouped, GROUP_M=8"]
        rows.append({"order": "row-major (GROUP_M=1)" if g == 1 else "grouped (GROUP_M=8)", "n": n,
                     "tile": _cfg_str(dict(cfg, GROUP_M=g)), "ms": t.median_ms, "tflops": t.tflops(2.0 * n ** 3),
                     "model DRAM MiB": m["DRAM MiB (model)"], "spread": t.spread})
    return rows


def plot(size_rows: list[dict], path: str) -> str:
    ns = sorted({r["n"] for r in size_rows if r["dtype"] == "bfloat16"})
    by = {(r["dtype"], r["n"]): r for r in size_rows}
    series = {"triton bf16 (autotuned)": [by.get(("bfloat16", n), {}).get("triton_tflops") for n in ns],
              "cuBLAS bf16 (torch.matmul)": [by.get(("bfloat16", n), {}).get("cublas_tflops") for n in ns]}
    d = device.info()
    hl = {}
    if d.datasheet.get("bf16_tflops"):
        hl[f"datasheet dense bf16 {d.datasheet['bf16_tflops']} TFLOP/s"] = d.datasheet["bf16_tflops"]
    return report.plot_lines(path, ns, series, xlabel="M = N = K", ylabel="TFLOP/s",
                             title=f"Triton matmul vs cuBLAS on {d.name} (bf16 in, fp32 accumulate)", hlines=hl,
                             xticks=ns, xticklabels=[str(n) for n in ns])


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    gpu = device.has_gpu()
    cases = CHECK_CASES if gpu else CPU_CHECK_CASES
    _, ok = lab.check_variants(this, VARIANTS + (PEERS if gpu else []), cases[:QUICK_CASES] if args.quick else cases)
    wave = device.info().sms if gpu else device.arch_info(args.arch).example_sms or 132
    for n in ((4096,) if args.quick else (4096, 8192)):
        t = ordering_table(n, n, n, wave=wave)
        report.print_table(t, title=f"Tiles each program order reads from DRAM, bf16 {n}^3, 128x256x64 tiles, waves "
                                    f"of {wave} programs (model: a wave shares tiles through L2, waves share nothing)")
        print(f"  -> {ordering_prediction(t, n, wave)}")
    compile_rows = show_compile_report(args.arch)
    if not gpu:
        print("\nThe kernel ran in the interpreter on small ragged shapes (tl.dot ignores input_precision there, "
              "and bf16 tiles are\nconverted to fp32 first: Triton 3.9's interpreter mishandles bf16 in tl.dot). "
              "Autotuning, cuBLAS and timing need a GPU.")
        return 0 if ok else 1
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    rounds = 1 if args.quick else 3
    targets = TARGETS[:1] if args.quick else TARGETS
    size_rows = []
    for dtype, n, _ in cli.progress(targets, "target shapes"):
        size_rows.append(bench_case(dtype, n, rounds=rounds))
    small = [bench_case("bfloat16", n, rounds=1) for n in cli.progress(SMALL_SIZES[-1:] if args.quick
                                                                        else SMALL_SIZES, "small sizes")]
    fp32 = [] if args.quick else [bench_case("float32", 4096, rounds=1), bench_case("tf32", 4096, rounds=1)]
    tuning = size_rows[0]["tuning"]           # bf16 4096^3: every config's time
    big = [r for r in size_rows if r["dtype"] == "bfloat16" and r["n"] == 8192]
    order = [] if args.quick or not big else bench_ordering(big[0]["cfg"], rounds=rounds)
    targets_out = []
    for (dtype, n, goal), r in zip(targets, size_rows):
        targets_out.append({"case": f"matmul {dtype} {n}^3", "peer": "cuBLAS (torch.matmul)",
                            "triton TFLOP/s": r["triton_tflops"], "peer TFLOP/s": r["cublas_tflops"],
                            "ratio": r["ratio"], "target": f">= {goal:.2f}", "met": r["ratio"] >= goal})
    cols = ["dtype", "n", "config", "triton_tflops", "cublas_tflops", "ratio", "spread", "check"]
    report.print_table(size_rows, cols, title="Targets: Triton (autotuned) vs cuBLAS, interleaved rounds")
    report.print_table(small, cols, title="Sizes <= 2048, bf16 (reported separately: few tiles per SM, and "
                                          "launch and tail effects weigh more)")
    if fp32:
        report.print_table(fp32, cols + ["cuda_c"], title="fp32 at 4096^3: 'float32' = input_precision ieee vs cuBLAS "
                                                          "SGEMM (TF32 off) and phase 2's CUDA C; 'tf32' vs cuBLAS "
                                                          "with TF32 on")
    if tuning:
        report.print_table(tuning, title="The autotuner's timings at bf16 4096^3 (best first)")
    if order:
        report.print_table(order, title="Program order measured at 8192^3 bf16 (same tile config)")
    report.print_table(targets_out, title="Performance targets")
    all_checked = all(r["ok"] for r in size_rows + small + fp32)
    out_dir = args.out or report.results_dir()
    if args.json:
        rows = []
        for r in size_rows + small + fp32:
            rows.append(dict(lab=LAB, variant="triton matmul", impl="triton", shape=[r["n"]] * 3, dtype=r["dtype"],
                             ms=r["triton_ms"], tflops=r["triton_tflops"], vs_peer=r["ratio"], config=r["config"],
                             spread=r["spread"], check=r["check"], cuda_c=r.get("cuda_c")))
            rows.append(dict(lab=LAB, variant="cuBLAS", impl="peer", shape=[r["n"]] * 3, dtype=r["dtype"],
                             ms=r["cublas_ms"], tflops=r["cublas_tflops"], spread=r["spread"]))
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, targets=targets_out, ordering=order,
                                         configs_picked={f"{r['dtype']} {r['n']}": r["config"]
                                                         for r in size_rows + small + fp32},
                                         tuning=tuning, compile_report=compile_rows,
                                         configs_16=CONFIGS_16, device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(size_rows + small, os.path.join(out_dir, f"{LAB}.png")))
    if not all_checked:
        print("a benchmarked result failed its sampled check (see the 'check' column)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
