"""Lab 3.1 - The Triton programming model: a program is a block, a tile is what you load.

You will learn
  * how the CUDA C ideas of phases 1-2 map onto Triton: `tl.program_id` is `blockIdx`, a `tl.arange` tile replaces
    `threadIdx` arithmetic, a mask replaces the `if (i < n)` bounds check, and `num_warps` sets how many threads
    share one tile (the compiler decides which thread holds which elements: the "layout");
  * the vector add of lab 1.2 and a row reduction (row sums) written in both languages, side by side, checked
    against the same float64 reference and timed in the same run;
  * what Triton generates, stage by stage (TTIR -> TTGIR -> PTX -> SASS), shown ahead of time for any target
    without a GPU: the layout (`sizePerThread`), the width of every global load, registers, shared memory;
  * why pointer alignment AND the divisibility of sizes decide the load width: Triton specializes a kernel on
    "divisible by 16" for each pointer and integer argument; a mask over `offs < n` is only known to be constant over
    4 lanes when n % 16 == 0, so an odd n gives scalar loads even on aligned data;
  * what `num_warps` and `num_stages` control: threads per program (and so elements, registers and load width per
    thread), and how many loop iterations of loads the compiler keeps in flight through a shared-memory ring (it
    does so for loads that feed `tl.dot`, lab 3.2; the lab shows what it did, or did not do, for the row-sum loop).

The two numbers (main case: row sums of a 32768 x 4096 fp32 matrix): bytes = 32768 x 4096 x 4 = 512 MiB read
+ 128 KiB written; FLOPs = 32768 x 4095 = 134 M adds. 0.25 FLOP/B, far below the fp32 ridge point of any current
GPU (`--plan` prints this GPU's): memory wins, so the best any version can do is 512 MiB at the measured HBM ceiling.
The vector add (n = 2^26 fp32): 12 n = 768 MiB for n FLOPs, memory-bound the same way. There are no performance
targets in this lab; the lesson, the predictions and this GPU's measured figures: README.md.

Run: python -m phase3_triton.lab01_programming_model [--quick] [--no-bench] [--arch sm_80] [--dump-ir DIR] [--replot]
     [--plan [--gpu NAME]] [--set THREADS=128] [--set ROW_WARPS=4]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import rowsum_kernel, rowsum_tile_kernel

LAB = "phase3_lab01_programming_model"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
# The CUDA C kernels' block size, a -D THREADS of kernels.cu (the lab's default; `--set THREADS=128` overrides it).
CUDA_ROWSUM = dict(THREADS=256)
THREADS = CUDA_ROWSUM["THREADS"]
WARPS_PER_BLOCK = THREADS // 32
MAX_GRID_X = 2**31 - 1
ROWSUM_SHAPES = [(32768, 4096), (262144, 128)]   # the benchmark's row-sum shapes (rows, cols), fp32
VADD_N = 2**26                                   # the benchmark's vector add (lab 1.2's kernels)


def cuda_config() -> config.Resolved:
    """The CUDA C row sums' block size: the default, or --set THREADS=N."""
    return config.resolve("rowsum CUDA C (01, 02, 03)", CUDA_ROWSUM, validate=_check_cuda)


def _check_cuda(v: dict) -> dict:
    t = v["THREADS"]
    if t not in (64, 128, 256, 512, 1024):
        raise ValueError(f"rowsum CUDA C: THREADS must be a power of two from 64 to 1024 (the tree halves it, the "
                         f"shuffle kernels give each warp a row or a slot), got {t}")
    return v


def warp_per_row_blocks(rows: int, threads: int) -> int:
    """rowsum_03's grid: one warp per row, threads / 32 rows per block."""
    return math.ceil(rows / (threads // 32))


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs: row sums
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64).sum(axis=1)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """One (rows, cols) matrix of small integers (1..8) as floats, and a few large ones.

    Integer values keep every row sum exact in float32 in any order (up to 2^24), so the check tests indexing, not
    rounding: normal values around a small mean can cancel to near zero, where a correct sum's last-bit error
    exceeds the relative tolerance. A skipped or doubled element still changes a sum by >= 1.
    """
    rows, cols = size
    x = rng.integers(1, 9, size=(rows, cols)).astype(np.float64)
    if x.size > 64:
        x.flat[rng.integers(0, x.size, 4)] = 1000.0
    return (arrays.from_numpy(x, dtype, where),)


def out_dtype(dtype: str) -> str:
    return "float32"   # every variant accumulates and returns fp32, whatever the input


def tolerance(size, dtype: str) -> check.Tol:
    # fp16/bf16 inputs are exact in fp32 and the sums are done in fp32: the fp32 tolerance applies to every dtype
    return check.tolerance("float32")


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare_cuda(x, out):
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, libs=("cupy",))
    rows, cols = (int(s) for s in x.shape)
    out = arrays.check_out(out, (rows,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    if cols >= 2**31:
        raise ValueError(f"x: {cols} columns; the kernels index a row with 32-bit column numbers (< 2^31)")
    return out, rows, cols


def _zero_rows(out, rows, cols):
    """Nothing to launch: no rows, or rows with no columns (their sum is 0)."""
    if rows and not cols:
        arrays.fill(out, 0.0)
    return out


def rowsum_cuda_01(x, out=None):
    """One block per row, strided loads, shared-memory tree."""
    out, rows, cols = _prepare_cuda(x, out)
    if rows == 0 or cols == 0:
        return _zero_rows(out, rows, cols)
    if rows > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows exceed the grid limit of {MAX_GRID_X} blocks")
    _cuda_run("rowsum_01_block_per_row", rows, (x, out, np.int32(cols)))
    return out


def _cuda_run(name: str, blocks: int, args) -> None:
    threads = cuda_config()["THREADS"]
    cuda.get_kernel(CU, name, defines={"THREADS": threads})((blocks,), (threads,), args)


def float4_rows_ok(x) -> bool:
    """Every row starts on a 16-byte boundary: the base is aligned and a row is a multiple of 4 floats."""
    return arrays.aligned(x, 16) and int(x.shape[1]) % 4 == 0


def rowsum_cuda_02(x, out=None):
    """float4 loads and warp shuffles; rows not on 16-byte boundaries fall back to 01."""
    out, rows, cols = _prepare_cuda(x, out)
    if rows == 0 or cols == 0:
        return _zero_rows(out, rows, cols)
    if not float4_rows_ok(x):
        return rowsum_cuda_01(x, out=out)
    if rows > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows exceed the grid limit of {MAX_GRID_X} blocks")
    _cuda_run("rowsum_02_float4_shuffle", rows, (x, out, np.int32(cols)))
    return out


def rowsum_cuda_03(x, out=None):
    """One warp per row (WARPS_PER_BLOCK rows per block)."""
    out, rows, cols = _prepare_cuda(x, out)
    if rows == 0 or cols == 0:
        return _zero_rows(out, rows, cols)
    blocks = warp_per_row_blocks(rows, cuda_config()["THREADS"])
    if blocks > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows need {blocks} blocks, over the grid limit of {MAX_GRID_X}")
    _cuda_run("rowsum_03_warp_per_row", blocks, (x, out, np.int64(rows), np.int32(cols)))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Triton wrappers (the kernels are in triton_kernels.py)
# ---------------------------------------------------------------------------------------------------------------------
# rowsum_kernel: at most ROW_BLOCK_MAX columns a step (a 4096-column row is one step), over ROW_WARPS warps, 0 meaning
# "by the step's width": 8 warps from 2048 columns, else 4. rowsum_tile_kernel: TILE_ELEMS elements a step (BLOCK_M
# rows x BLOCK_N columns), at most TILE_BLOCK_N columns, TILE_WARPS warps. The lab's defaults; `--set ROW_WARPS=4`
# and the like override them (the bench's num_warps table shows what the warps change).
TRITON_ROW = dict(ROW_BLOCK_MAX=4096, ROW_WARPS=0)
TRITON_TILE = dict(TILE_ELEMS=4096, TILE_BLOCK_N=256, TILE_WARPS=4)
ROW_BLOCK_MAX, TILE_ELEMS = TRITON_ROW["ROW_BLOCK_MAX"], TRITON_TILE["TILE_ELEMS"]


def row_family() -> config.Resolved:
    return config.resolve("triton rowsum_kernel", TRITON_ROW, validate=_check_triton)


def tile_family() -> config.Resolved:
    return config.resolve("triton rowsum_tile_kernel", TRITON_TILE, validate=_check_triton)


def _check_triton(v: dict) -> dict:
    for k, x in v.items():
        lo = 0 if k == "ROW_WARPS" else 1 if k.endswith("WARPS") else 16
        if x < lo or (x and x & (x - 1)) or (k.endswith("WARPS") and x > 32):
            raise ValueError(f"{k}: expected a power of two (warps 1..32{', or 0: by width' if lo == 0 else ''}; "
                             f"columns and elements >= 16), got {x}")
    return v


def row_config(cols: int) -> tuple[int, int]:
    """(BLOCK_N, num_warps) for rowsum_kernel: the row (or a ROW_BLOCK_MAX-column step of it) across 4 or 8 warps; at
    least 16 columns per step, so no tile is narrower than a 16-byte load per thread would need."""
    v = row_family().values
    block = min(max(16, triton.next_power_of_2(cols)), v["ROW_BLOCK_MAX"])
    return block, v["ROW_WARPS"] or (8 if block >= 2048 else 4)


def tile_config(cols: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps) for rowsum_tile_kernel: at most TILE_BLOCK_N columns per step, rows to fill the
    tile."""
    v = tile_family().values
    block_n = min(max(16, triton.next_power_of_2(cols)), v["TILE_BLOCK_N"])
    return max(1, v["TILE_ELEMS"] // block_n), block_n, v["TILE_WARPS"]


def _prepare_triton(x, out):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32", "float16", "bfloat16"), ndim=2, device=dev)
    rows, cols = (int(s) for s in x.shape)
    out = arrays.check_out(out, (rows,), "float32", x)
    return out, rows, cols


def rowsum_triton(x, out=None, *, block_n=None, num_warps=None):
    """Row sums with rowsum_kernel (one program per row); fp32/fp16/bf16 in, fp32 out."""
    out, rows, cols = _prepare_triton(x, out)
    if rows == 0 or cols == 0:
        return _zero_rows(out, rows, cols)
    if rows > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows exceed the grid limit of {MAX_GRID_X} programs")
    bn, nw = row_config(cols)
    return _launch_row(x, out, rows, cols, block_n or bn, num_warps or nw)[0]


def _launch_row(x, out, rows, cols, block_n, num_warps):
    k = launch(rowsum_kernel, (rows,), x, out, cols, cols, BLOCK_N=block_n, num_warps=num_warps)
    return out, k


def rowsum_triton_tile(x, out=None):
    """Row sums with rowsum_tile_kernel (BLOCK_M rows per program)."""
    out, rows, cols = _prepare_triton(x, out)
    if rows == 0 or cols == 0:
        return _zero_rows(out, rows, cols)
    bm, bn, nw = tile_config(cols)
    programs = triton.cdiv(rows, bm)
    if programs > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows need {programs} programs, over the grid limit of {MAX_GRID_X}")
    launch(rowsum_tile_kernel, (programs,), x, out, rows, cols, cols, BLOCK_M=bm, BLOCK_N=bn, num_warps=nw)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def peer_torch_sum(x, out=None):
    import torch

    out = arrays.check_out(out, (int(x.shape[0]),), "float32", x)
    torch.sum(_torch_view(x), dim=1, dtype=torch.float32, out=_torch_view(out))
    return out


def peer_cupy_sum(x, out=None):
    import cupy

    out = arrays.check_out(out, (int(x.shape[0]),), "float32", x)
    cupy.sum(x, axis=1, dtype=cupy.float32, out=out)
    return out


VARIANTS = [
    lab.Variant("cuda 01 block per row, shared-memory tree", rowsum_cuda_01, "cuda"),
    lab.Variant("cuda 02 float4 + warp shuffles", rowsum_cuda_02, "cuda"),
    lab.Variant("cuda 03 warp per row", rowsum_cuda_03, "cuda"),
    lab.Variant("triton row per program", rowsum_triton, "triton", dtypes=("float32", "float16", "bfloat16")),
    lab.Variant("triton 2-D tile (rows x cols)", rowsum_triton_tile, "triton",
                dtypes=("float32", "float16", "bfloat16")),
]
PEERS = [
    lab.Variant("torch.sum(dim=1)", peer_torch_sum, "peer", dtypes=("float32", "float16", "bfloat16")),
    lab.Variant("cupy.sum(axis=1)", peer_cupy_sum, "peer", dtypes=("float32", "float16")),
]
CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((7, 1000), "float32"), ((33, 4097), "float32"),
               ((1000, 64), "float32"), ((5, 100_003), "float32"), ((130, 4096), "float32"), ((17, 1000), "float16"),
               ((9, 2050), "bfloat16")]
CPU_CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((7, 1000), "float32"), ((33, 301), "float16"),
                   ((5, 4097), "float32"), ((4, 100), "bfloat16")]
QUICK_CASES = 4                # --quick checks the first four


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's row sums (and of lab 1.2's vector add it times beside them) on a given GPU
# ---------------------------------------------------------------------------------------------------------------------
ROWSUM_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "row_stride": "i32", "BLOCK_N": "constexpr"}
TILE_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_rows": "i32", "n_cols": "i32", "row_stride": "i32",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


def bench_bytes(shape) -> int:
    """Bytes the row-sum benchmark holds at once for a (rows, cols) fp32 matrix: the matrix and the row sums."""
    rows, cols = shape
    return 4 * rows * cols + 4 * rows


def fit_shape(shape, gpu: device.DeviceInfo):
    """(shape, note): a benchmark shape with its rows halved until it fits the GPU's memory (common.plan.fit)."""
    return plan.fit(tuple(shape), bench_bytes, gpu, shrink=lambda s: (max(1, s[0] // 2), s[1]), what="row-sum shape")


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    out = []
    cu = cuda_config()
    threads = cu["THREADS"]
    row, tile = row_family(), tile_family()
    for shape in ([tuple(size)] if size else ROWSUM_SHAPES):
        (rows, cols), _ = fit_shape(shape, gpu)
        case = tr("row sums {rows} x {cols} float32", rows=rows, cols=cols)
        c = dict(impl="cuda", source=CU, threads=threads, defines={"THREADS": threads}, case=case,
                 config_source=cu.source())
        # the benchmark's matrices are aligned and cols % 4 == 0 there, so rowsum_02 takes its float4 path
        out += [plan.Launch(VARIANTS[0].name, "rowsum_01_block_per_row", grid=rows, **c),
                plan.Launch(VARIANTS[1].name, "rowsum_02_float4_shuffle", grid=rows, **c),
                plan.Launch(VARIANTS[2].name, "rowsum_03_warp_per_row", grid=warp_per_row_blocks(rows, threads), **c)]
        bn, nw = row_config(cols)
        out.append(plan.Launch(VARIANTS[3].name, "rowsum_kernel", "triton", fn=rowsum_kernel, grid=rows,
                               signature=ROWSUM_SIG, defines={"BLOCK_N": bn}, num_warps=nw, case=case,
                               config_source=row.source()))
        bm, bn, nw = tile_config(cols)
        out.append(plan.Launch(VARIANTS[4].name, "rowsum_tile_kernel", "triton", fn=rowsum_tile_kernel,
                               grid=triton.cdiv(rows, bm), signature=TILE_SIG, defines={"BLOCK_M": bm, "BLOCK_N": bn},
                               num_warps=nw, case=case, config_source=tile.source()))
    if size is None:
        # lab 1.2's kernels, timed beside the row sums (its own plan has them all): helpers of this lab here
        from phase1_architecture.lab02_vector_add import lab as va

        timed = ("cuda 03 float4", "cuda 04 float4 streaming store", "triton")
        for x in va.launches(gpu, VADD_N):
            if x.variant in timed:
                x.case = tr("vector add (lab 1.2's {variant}), {case}", variant=x.variant, case=tr(x.case))
                x.variant = ""
                out.append(x)
    return out
