"""Lab 1.6 - Naive matrix multiply: one thread per output, coalesced or not, and the baseline phase 2 improves on.

You will learn
  * the simplest correct GEMM (C = A @ B, fp32, row-major, any M, N, K): one thread computes one C[row, col] as a
    K-long dot product, reading a row of A and a column of B straight from global memory;
  * coalescing, quantified: what matters is how many 32-byte sectors the 32 lanes of ONE load instruction touch.
    Mapping threadIdx.x to the row (mm_01) makes every A load touch 32 sectors; mapping it to the column (mm_02)
    makes A a broadcast (1 sector) and B one contiguous 128-byte line (4 sectors). Per k step: 33 sectors against 5,
    so mm_01 should be ~6.6x slower - the lab counts the sectors from the actual addresses and checks the ratio;
  * the same output-stationary idea in Triton, one program per BLOCK_M x BLOCK_N tile: tl.dot on tiles that Triton
    stages through shared memory and registers for you (phase 2 builds that by hand in CUDA C);
  * how far naive is from the library: cuBLAS SGEMM through cupy.matmul with TF32 off (CuPy uses TF32 only when
    CUPY_TF32=1; the lab refuses to run the peer otherwise, and shows its error is fp32-level).

The two numbers, for the main case M = N = K = 4096: FLOPs = 2 M N K = 137.4 G; bytes that must move = 4 (M K + K N
+ M N) = 192 MiB. 137.4 GFLOP / 192 MiB = 683 FLOP/B, well above the ridge point of any current GPU (`--plan`
prints this GPU's): a good GEMM is compute-bound (cuBLAS should reach ~3/4 of the FP32 peak). The naive kernels are
not: each thread re-reads 2K floats (8 K bytes per 2 K FLOPs = 4 B/FLOP from L1/L2), so they are bound by the load
path, far below either ceiling - that gap is phase 2. The lesson, the predictions and this GPU's measured figures:
README.md.

Run: python -m phase1_architecture.lab06_matmul_naive [--quick] [--size M,N,K] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set BLOCK_M=128]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import matmul_tile_kernel

LAB = "phase1_lab06_matmul_naive"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
BLOCK = (32, 8)
GRID_Y_MAX = 65535
SECTOR = 32
BENCH_SHAPES = [(4096, 4096, 4096), (2999, 3001, 2027)]     # the benchmark's shapes: a power of two and an odd one


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a, b) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """size = (M, N, K): A (M, K) and B (K, N), standard normal (zero mean, so sums cancel and a dropped term shows)."""
    m, n, k = size
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    return arrays.from_numpy(a, dtype, where), arrays.from_numpy(b, dtype, where)


def tolerance(size, dtype) -> check.Tol:
    """fp32 dot products of length K: rounding error grows ~sqrt(K) x 6e-8 relative. The bound below sits ~15x under
    what TF32 (10-bit mantissa inputs, ~4e-4 relative) would give at K = 4096, so TF32 cannot pass for fp32."""
    k = size[2]
    rel = max(1e-5, 4e-7 * math.sqrt(max(k, 1)))
    return check.Tol(rel, 50 * rel)


# ---------------------------------------------------------------------------------------------------------------------
# Validation shared by every wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _shapes(a, b, out, *, device_arrays: bool | None, libs=("cupy", "torch", "numpy")):
    arrays.check_array("a", a, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    arrays.check_array("b", b, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b, max_dim=2**31 - 1)       # int kernel arguments
    out = arrays.check_out(out, (m, n), "float32", a)
    return out, m, n, k


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _launch(name: str, a, b, out, x_walks_rows: bool):
    """Validate, then launch: BLOCK threads per block, blockIdx.x over the rows of C (x_walks_rows) or its columns,
    blockIdx.y over the other dimension, capped at GRID_Y_MAX (the kernels loop past it)."""
    out, m, n, k = _shapes(a, b, out, device_arrays=True, libs=("cupy",))
    if m == 0 or n == 0:
        return out
    cuda.get_kernel(CU, name)(naive_grid(m, n, x_walks_rows), BLOCK,
                              (a, b, out, np.int32(m), np.int32(n), np.int32(k)))
    return out


def naive_grid(m: int, n: int, x_walks_rows: bool) -> tuple[int, int]:
    """blockIdx.x over the rows of C (x_walks_rows) or its columns, blockIdx.y over the other, capped at GRID_Y_MAX."""
    along_x, along_y = (m, n) if x_walks_rows else (n, m)
    return math.ceil(along_x / BLOCK[0]), min(math.ceil(along_y / BLOCK[1]), GRID_Y_MAX)


def mm_cuda_01(a, b, out=None):
    """Uncoalesced: threadIdx.x -> row."""
    return _launch("mm_01_naive_uncoalesced", a, b, out, x_walks_rows=True)


def mm_cuda_02(a, b, out=None):
    """Coalesced: threadIdx.x -> column."""
    return _launch("mm_02_naive_coalesced", a, b, out, x_walks_rows=False)


# ---------------------------------------------------------------------------------------------------------------------
# Triton: matmul_tile_kernel of triton_kernels.py, one program per output tile
# ---------------------------------------------------------------------------------------------------------------------
# The tile and its launch (the lab's default; `--set BLOCK_M=128` and the like override them). 64 x 64 x 32 in fp32
# over 3 stages stages 48 KiB of A and B tiles in shared memory: within the opt-in limit of every GPU of the course's
# table (the smallest, 64 KiB, is the sm_75's).
TRITON_TILE = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
TRITON_WARPS, TRITON_STAGES = 4, 3


def triton_config() -> config.Resolved:
    return config.resolve("triton matmul_tile_kernel", dict(TRITON_TILE, num_warps=TRITON_WARPS,
                                                            num_stages=TRITON_STAGES), validate=_check_triton)


def _check_triton(v: dict) -> dict:
    tiles = [v[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")]
    if any(t < 16 or t > 256 or t & (t - 1) for t in tiles) or v["num_warps"] not in (1, 2, 4, 8, 16) or \
            not 1 <= v["num_stages"] <= 8:
        raise ValueError(tr("triton matmul: BLOCK_M, BLOCK_N, BLOCK_K powers of two in 16..256 (tl.dot's smallest "
                            "tile is 16), num_warps in 1, 2, 4, 8, 16, num_stages in 1..8; got {got}",
                            got=config.fmt(v)))
    return v


def triton_grid(m: int, n: int, cfg: dict) -> int:
    """Programs: one per BLOCK_M x BLOCK_N tile of C."""
    return triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])


def mm_triton(a, b, out=None):
    out, m, n, k = _shapes(a, b, out, device_arrays=not INTERPRETER)
    if m == 0 or n == 0:
        return out
    cfg = triton_config().values
    launch(matmul_tile_kernel, (triton_grid(m, n, cfg),), a, b, out, m, n, k, k, n, n, num_warps=cfg["num_warps"],
           num_stages=cfg["num_stages"], BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], BLOCK_K=cfg["BLOCK_K"])
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peer: cuBLAS through CuPy, TF32 off
# ---------------------------------------------------------------------------------------------------------------------
def tf32_state() -> str:
    """'off' when cupy.matmul on float32 uses true fp32 (CUBLAS_COMPUTE_32F), else why not."""
    if os.environ.get("NVIDIA_TF32_OVERRIDE") not in (None, "0"):
        return f"NVIDIA_TF32_OVERRIDE={os.environ['NVIDIA_TF32_OVERRIDE']} is set"
    try:
        from cupy._core import _routines_linalg as rl

        if rl.get_compute_type(np.float32) == rl.COMPUTE_TYPE_TF32:
            return "CuPy's fp32 compute type is TF32 (CUPY_TF32=1)"
    except (ImportError, AttributeError):
        if int(os.environ.get("CUPY_TF32", "0") or 0) > 0:
            return "CUPY_TF32 is set"
    return "off"


def peer_cublas(a, b, out=None):
    """cuBLAS SGEMM (cupy.matmul) with TF32 off."""
    import cupy

    out, m, n, k = _shapes(a, b, out, device_arrays=True, libs=("cupy",))
    state = tf32_state()
    if state != "off":
        raise RuntimeError(tr("the cuBLAS peer must run in fp32, but TF32 is on: {state}; unset it", state=tr(state)))
    if m == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    cupy.matmul(a, b, out=out)
    return out


VARIANTS = [
    lab.Variant("cuda 01 naive, uncoalesced (x -> row)", mm_cuda_01, "cuda"),
    lab.Variant("cuda 02 naive, coalesced (x -> col)", mm_cuda_02, "cuda"),
    lab.Variant("triton, one program per 64x64 tile", mm_triton, "triton"),
]
PEERS = [lab.Variant("cuBLAS (cupy.matmul, TF32 off)", peer_cublas, "peer")]
CHECK_CASES = [(s, "float32") for s in [(1, 1, 1), (1, 7, 3), (5, 1, 9), (33, 65, 17), (127, 129, 255), (64, 64, 64),
                                        (301, 1, 500), (1000, 1001, 999), (0, 5, 3), (4, 0, 3), (6, 5, 0),
                                        (2048, 2048, 1)]]
CPU_CHECK_CASES = [(s, "float32") for s in [(1, 1, 1), (17, 33, 9), (65, 31, 100), (0, 5, 3), (6, 5, 0)]]


# ---------------------------------------------------------------------------------------------------------------------
# The prediction: sectors per request, from the actual addresses
# ---------------------------------------------------------------------------------------------------------------------
def sectors(addresses) -> int:
    """Distinct 32-byte sectors touched by one warp's addresses (bytes)."""
    return len({int(x) // SECTOR for x in addresses})


def warp_sectors(mapping: str, m: int, n: int, k: int, row0: int = 0, col0: int = 0, kk: int = 0) -> dict:
    """Sectors that ONE warp's A and B loads touch at step kk, for the kernel's thread-to-element mapping.

    mapping 'uncoalesced': lane l computes C[row0 + l, col0]; 'coalesced': C[row0, col0 + l]. Base addresses 0 (A)
    and 0 (B): cudaMalloc aligns to 256 B, and sector counts depend only on offsets.
    """
    lanes = range(32)
    if mapping == "uncoalesced":
        rows, cols = [min(row0 + l, m - 1) for l in lanes], [col0] * 32
    elif mapping == "coalesced":
        rows, cols = [row0] * 32, [min(col0 + l, n - 1) for l in lanes]
    else:
        raise ValueError(f"mapping: expected 'uncoalesced' or 'coalesced', got {mapping!r}")
    a_addr = [4 * (r * k + kk) for r in rows]
    b_addr = [4 * (kk * n + c) for c in cols]
    return {"A": sectors(a_addr), "B": sectors(b_addr)}


def predicted_ratio(m: int, n: int, k: int) -> tuple[float, dict, dict]:
    """(sectors per k step uncoalesced / coalesced, both counts), averaged over the first 8 k steps of warp 0."""
    un = {"A": 0, "B": 0}
    co = {"A": 0, "B": 0}
    steps = max(1, min(8, k))    # K = 0 has no loads; count one step's addresses anyway
    for kk in range(steps):
        for dct, mp in ((un, "uncoalesced"), (co, "coalesced")):
            s = warp_sectors(mp, m, n, k, kk=kk)
            dct["A"] += s["A"] / steps
            dct["B"] += s["B"] / steps
    return (un["A"] + un["B"]) / (co["A"] + co["B"]), un, co


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's shapes on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(shape) -> int:
    """Bytes the benchmark holds at once for (M, N, K): A, B and C in fp32."""
    m, n, k = shape
    return 4 * (m * k + k * n + m * n)


def fit_shape(shape, gpu: device.DeviceInfo):
    """(shape, note): `shape`, or each dimension halved until A, B and C fit the GPU's memory."""
    return plan.fit(tuple(shape), bench_bytes, gpu, shrink=lambda s: tuple(max(1, d // 2) for d in s),
                    what="M x N x K")


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    tcfg = triton_config()
    out = []
    for shape in ([tuple(size)] if size else BENCH_SHAPES):
        (m, n, k), _ = fit_shape(shape, gpu)
        case = f"{m}x{n}x{k} float32"
        out += [
            plan.Launch(VARIANTS[0].name, "mm_01_naive_uncoalesced", "cuda", source=CU, grid=naive_grid(m, n, True),
                        threads=BLOCK[0] * BLOCK[1], case=case),
            plan.Launch(VARIANTS[1].name, "mm_02_naive_coalesced", "cuda", source=CU, grid=naive_grid(m, n, False),
                        threads=BLOCK[0] * BLOCK[1], case=case),
            plan.Launch(VARIANTS[2].name, "matmul_tile_kernel", "triton", fn=matmul_tile_kernel,
                        grid=triton_grid(m, n, tcfg.values),
                        signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32",
                                   "K": "i32", "stride_am": "i32", "stride_bk": "i32", "stride_cm": "i32",
                                   "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr"},
                        defines={k_: tcfg[k_] for k_ in ("BLOCK_M", "BLOCK_N", "BLOCK_K")},
                        num_warps=tcfg["num_warps"], num_stages=tcfg["num_stages"], case=case,
                        config_source=tcfg.source()),
        ]
    return out
