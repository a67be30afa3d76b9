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
+ 128 KiB written; FLOPs = 32768 x 4095 = 134 M adds. 0.25 FLOP/B against an H200 ridge of ~14 FLOP/B (67 TFLOP/s
fp32 / 4.8 TB/s): memory wins by ~60x, so the best any version can do is 512 MiB at the measured HBM ceiling
(~4.4 TB/s: ~0.12 ms). The vector add (n = 2^26 fp32): 12 n = 768 MiB for n FLOPs, memory-bound the same way.

Measured on an H200 (results/h200/phase3_lab01_programming_model.json; measured HBM ceiling 4,341 GB/s, so the floor
for the main case is 0.124 ms): the prediction held. At 32768 x 4096 the Triton row-per-program kernel took 0.130 ms
(4,127 GB/s, 0.951 of the ceiling), level with the CUDA C block-per-row kernels (01: 4,132 GB/s, 0.952; 02: 4,122,
0.950), 1.07x torch.sum(dim=1) (3,868 GB/s) and ahead of cupy.sum (4,021). The vector add put Triton, CUDA C float4
and torch.add within 0.7% of each other (4,216-4,243 GB/s, 0.97-0.98 of the ceiling). Short rows (262144 x 128) are
where the mapping matters: one program per row reached only 830 GB/s (0.19) and the block-per-row CUDA C kernels
456-623 GB/s, while several rows per program (the 2-D tile: 3,072 GB/s, 0.71) and a warp per row (CUDA C 03: 2,958)
beat torch.sum (1,950) by ~1.5x. num_warps at 32768 x 4096: 4, 8 and 16 warps within 1.2% (4,081-4,129 GB/s), 1 warp
(166 registers a thread, no spills) 3,990, and 2 warps a dip to 3,087 GB/s that the register counts (80) do not
explain. There are no performance targets in this lab.

Run: python -m phase3_triton.lab01_programming_model [--quick] [--no-bench] [--arch sm_80] [--dump-ir DIR]
"""
from __future__ import annotations

import math
import os
import re
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common import triton_support as ts
from common.triton_support import INTERPRETER, launch, tl, triton
va = lab.lab_module("phase1_architecture", "lab02_vector_add")

LAB = "phase3_lab01_programming_model"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab01_programming_model.cu")
THREADS = 256          # the CUDA C kernels' block size (the file's THREADS default)
WARPS_PER_BLOCK = THREADS // 32
MAX_GRID_X = 2**31 - 1




def device_randn(shape, dtype: str, seed: int, scale: float = 1.0, shift: float = 0.0):
    """shift + scale * N(0, 1) generated on the GPU (benchmark-sized inputs: no host round trip of gigabytes).
    fp32/fp16 come back as CuPy arrays, bf16 as a torch tensor (CuPy has no bf16)."""
    import cupy

    x = cupy.random.RandomState(seed).standard_normal(tuple(shape), dtype=cupy.float32)
    if scale != 1.0 or shift != 0.0:
        x = x * np.float32(scale) + np.float32(shift)
    if dtype == "bfloat16":
        import torch

        return torch.from_dlpack(x).to(torch.bfloat16)
    return x if dtype == "float32" else x.astype(dtype)


def earlier_cuda_variant(module: str, prefix: str, dtype: str):
    """A CUDA C variant of an earlier phase's lab (lab contract: fn(*inputs, out=None)), picked by name prefix (else
    the last CUDA variant that runs here); None when that lab or a suitable variant is missing. For putting a Triton
    kernel next to the CUDA C kernel that does the same job."""
    import importlib

    try:
        mod = importlib.import_module(module)
    except Exception:  # noqa: BLE001 - an earlier lab that is absent or broken must not stop this one
        return None
    found = [v for v in getattr(mod, "VARIANTS", []) if v.impl == "cuda" and dtype in v.dtypes and v.available()[0]]
    pick = [v for v in found if v.name.startswith(prefix)] or found[-1:]
    return pick[0] if pick else None


def runs(fn, what: str) -> bool:
    """Call fn once; False (with a note) when it raises: an optional contender must not stop a benchmark."""
    try:
        fn()
        return True
    except Exception as e:  # noqa: BLE001
        print(f"  ({what} skipped: {type(e).__name__}: {str(e)[:160]})")
        return False


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
    cuda.get_kernel(CU, "rowsum_01_block_per_row")((rows,), (THREADS,), (x, out, np.int32(cols)))
    return out


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
    cuda.get_kernel(CU, "rowsum_02_float4_shuffle")((rows,), (THREADS,), (x, out, np.int32(cols)))
    return out


def rowsum_cuda_03(x, out=None):
    """One warp per row (WARPS_PER_BLOCK rows per block)."""
    out, rows, cols = _prepare_cuda(x, out)
    if rows == 0 or cols == 0:
        return _zero_rows(out, rows, cols)
    blocks = math.ceil(rows / WARPS_PER_BLOCK)
    if blocks > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows need {blocks} blocks, over the grid limit of {MAX_GRID_X}")
    cuda.get_kernel(CU, "rowsum_03_warp_per_row")((blocks,), (THREADS,), (x, out, np.int64(rows), np.int32(cols)))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Triton kernels
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def rowsum_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_N: tl.constexpr):
    # One program per row (grid = rows), like rowsum_01/02's block per row. The tile `cols` is the set of columns
    # the whole program touches in one step; which thread loads which columns is the compiler's choice (for fp32 and
    # 16-aligned data: 4 consecutive floats per thread, one 16-byte load, warps side by side: coalesced).
    # Measured on an H200: the launched kernel at BLOCK_N = 4096, 8 warps issued 4x 128-bit LDG per thread and
    # reached 4,127 GB/s (0.951 of the ceiling) at 32768 x 4096, level with the hand-written float4 kernel (4,122).
    row = tl.program_id(0).to(tl.int64)            # 64-bit before multiplying: rows x cols may pass 2^31
    base = x_ptr + row * row_stride
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)   # one partial sum per tile element, kept in registers
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        acc += tl.load(base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    # the block-wide reduction: warp shuffles, then shared memory across warps, generated by the compiler
    tl.store(y_ptr + row, tl.sum(acc, axis=0))


@triton.jit
def rowsum_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # BLOCK_M rows per program, like rowsum_03's warp per row: for short rows one program still gets a useful
    # amount of work. The tile is 2-D; the mask is the outer AND of "row exists" and "column exists".
    # Measured on an H200: at 262144 x 128 this kernel (32 rows x 128 columns per program) reached 3,072 GB/s, 3.7x
    # rowsum_kernel's 830 and 1.58x torch.sum; at 32768 x 4096 (16 rows x 256 columns per step) it was the slowest
    # Triton version, 3,774 GB/s (0.869 of the ceiling), against 4,127 for rowsum_kernel.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None] * row_stride + cols[None, :]
        acc += tl.load(ptrs, mask=row_ok[:, None] & (cols[None, :] < n_cols), other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)


ROW_BLOCK_MAX = 4096      # columns per step of rowsum_kernel (a 4096-column row is one step)
TILE_ELEMS = 4096         # elements per step of rowsum_tile_kernel (BLOCK_M x BLOCK_N)


def row_config(cols: int) -> tuple[int, int]:
    """(BLOCK_N, num_warps) for rowsum_kernel: the row (or a 4096-column step of it) across 4 or 8 warps; at least
    16 columns per step, so no tile is narrower than a 16-byte load per thread would need."""
    block = min(max(16, triton.next_power_of_2(cols)), ROW_BLOCK_MAX)
    return block, (8 if block >= 2048 else 4)


def tile_config(cols: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps) for rowsum_tile_kernel: at most 256 columns per step, rows to fill the tile."""
    block_n = min(max(16, triton.next_power_of_2(cols)), 256)
    return max(1, TILE_ELEMS // block_n), block_n, 4


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
    launch(rowsum_tile_kernel, (triton.cdiv(rows, bm),), x, out, rows, cols, cols, BLOCK_M=bm, BLOCK_N=bn,
                   num_warps=nw)
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
CPU_CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((7, 1000), "float32"), ((33, 300), "float16"),
                   ((5, 4097), "float32"), ((4, 100), "bfloat16")]

VECTOR_ADD = [v for v in va.VARIANTS if v.name in ("cuda 03 float4", "cuda 04 float4 streaming store", "triton")]
VECTOR_ADD_CASES = [(n, "float32") for n in (1, 1000, 1025, 65537)]


# ---------------------------------------------------------------------------------------------------------------------
# The concept map
# ---------------------------------------------------------------------------------------------------------------------
CONCEPTS = [
    ("which block am I", "blockIdx.x", "tl.program_id(0)"),
    ("the elements I touch", "threadIdx.x + blockIdx.x * blockDim.x (one per thread)",
     "pid * BLOCK + tl.arange(0, BLOCK) (a tile per program)"),
    ("bounds check", "if (i < n)", "mask = offs < n; tl.load(p, mask=mask, other=0)"),
    ("threads per block", "blockDim.x (launch argument)", "num_warps * 32 (launch option)"),
    ("who holds which element", "you decide (i = threadIdx.x ...)", "the compiler's layout (TTGIR #blocked)"),
    ("16-byte loads", "float4 casts + an alignment check in the wrapper",
     "automatic when pointers and sizes are known divisible by 16"),
    ("block reduction", "shared-memory tree / __shfl_xor_sync + __syncthreads",
     "tl.sum(tile, axis) (shuffles + shared memory, generated)"),
    ("shared memory", "__shared__ arrays, sized by you", "allocated by the compiler (reductions, tl.dot staging)"),
    ("software pipelining", "cp.async + hand-written stages (phase 2/4)", "num_stages (for loads that feed tl.dot)"),
    ("64-bit indexing", "(long long)blockIdx.x * blockDim.x", "tl.program_id(0).to(tl.int64) * BLOCK"),
]


def print_concepts() -> None:
    report.print_table([{"idea": a, "CUDA C": b, "Triton": c} for a, b, c in CONCEPTS],
                       title="CUDA C -> Triton: the same ideas, a different interface")


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compilation: what Triton generates, without a GPU
# ---------------------------------------------------------------------------------------------------------------------
_AOT_CACHE: dict = {}


def aot(kernel, signature: dict, constexprs: dict | None = None, *, cc: int = 90, num_warps: int = 4,
        num_stages: int = 3, divisible_by_16: tuple[str, ...] = ()):
    """common.triton_support.compile_for, cached per argument set."""
    key = (id(kernel), tuple(sorted(signature.items())),
           tuple(sorted((constexprs or {}).items(), key=lambda kv: kv[0])), cc, num_warps, num_stages,
           tuple(sorted(divisible_by_16)))
    if key not in _AOT_CACHE:
        _AOT_CACHE[key] = ts.compile_for(kernel, signature, constexprs, cc=cc, num_warps=num_warps,
                                         num_stages=num_stages, divisible_by_16=divisible_by_16)
    return _AOT_CACHE[key]


def cubin_resources(cubin: bytes) -> dict[str, dict[str, int]]:
    """{kernel: {'REG': .., 'SHARED': .., 'LOCAL': .., 'STACK': ..}} from `cuobjdump --dump-resource-usage`."""
    text = cuda.cuobjdump(cubin, "--dump-resource-usage", timeout=60)
    if text is None:
        return {}
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function\s+(\S+?):\s*$", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        if cur is not None:
            for k, v in re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", line):
                cur[k] = int(v)
    return out


def ptx_memory_ops(ptx: str) -> dict[str, int]:
    """Global loads/stores in PTX by width, cache hints dropped: {'ld.global.v4.b32': 4, 'st.global.cs.b32': 1}.

    (common.triton_support.ptx_memory_ops stops at a hint such as `.L1::evict_first`, which Triton emits for
    eviction_policy=..., and reports a bare 'ld.global'.)
    """
    out: dict[str, int] = {}
    for m in re.finditer(r"\b((?:ld|st)\.global(?:\.[A-Za-z0-9_:]+)*)", ptx):
        op = re.sub(r"\.(L1::[a-z_]+|L2::[a-z_0-9]+|nc|relaxed|gpu|weak)(?=\.|$)", "", m.group(1))
        out[op] = out.get(op, 0) + 1
    return out


def _count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


_SUMMARIES: dict = {}


def summarize(k) -> dict:
    """The facts a kernel engineer reads first off a compiled Triton kernel (AOT or launched); cached per kernel."""
    key = getattr(k, "hash", None) or id(k)
    if key not in _SUMMARIES:
        _SUMMARIES[key] = _summarize(k)
    s = _SUMMARIES[key]
    if getattr(k, "n_regs", None):              # a launched kernel: the driver's register count is authoritative
        s = dict(s, regs=k.n_regs)
    return s


def _summarize(k) -> dict:
    ptx, ttgir = k.asm.get("ptx", ""), k.asm.get("ttgir", "")
    cubin = k.asm.get("cubin", b"")
    name = k.metadata.name
    sass = cuda.disassemble(cubin).get(name, []) if cubin else []
    res = cubin_resources(cubin).get(name, {}) if cubin else {}
    layout = re.search(r"#blocked\d*\s*=\s*#ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", ttgir)
    regs = getattr(k, "n_regs", None) or res.get("REG")
    return {
        "kernel": name,
        "num_warps": k.metadata.num_warps,
        "num_stages": getattr(k.metadata, "num_stages", None),
        "shared": k.metadata.shared,
        "regs": regs,
        "local": res.get("LOCAL"),                  # local memory per thread (spills, run-time indexed arrays)
        "size_per_thread": layout.group(1).replace(" ", "") if layout else "-",
        "ptx_mem": ptx_memory_ops(ptx),
        "sass": cuda.sass_census(sass),
        "sass_lines": sass,
        "wgmma": _count(r"wgmma\.mma_async", ptx),
        "mma_sync": _count(r"\bmma\.sync", ptx),
        "cp_async": _count(r"cp\.async\.(?:ca|cg)", ptx),
        "shfl": _count(r"shfl\.sync", ptx),
        "bar": _count(r"bar\.sync|barrier\.sync", ptx),
    }


def _loads(s: dict) -> str:
    """'2x v4.b32' style summary of the global loads in the PTX."""
    parts = [f"{n}x {op.replace('ld.global.', '')}" for op, n in sorted(s["ptx_mem"].items()) if op.startswith("ld.")]
    return ", ".join(parts) or "-"


ADD_SIG = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
ROWSUM_SIG = {"x_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "row_stride": "i32", "BLOCK_N": "constexpr"}
DIVISIBILITY_CASES = [
    ("nothing known (odd n, any pointer)", ()),
    ("pointers 16-byte aligned, n odd", ("a_ptr", "b_ptr", "c_ptr")),
    ("pointers aligned and n % 16 == 0", ("a_ptr", "b_ptr", "c_ptr", "n")),
]


def add_alignment_table(cc: int = 90, block: int = va.TRITON_BLOCK, num_warps: int = va.TRITON_WARPS) -> list[dict]:
    """Load width of the vector-add kernel under each divisibility promise."""
    rows = []
    for label, div in DIVISIBILITY_CASES:
        s = summarize(aot(va.add_kernel, ADD_SIG, {"BLOCK": block}, cc=cc, num_warps=num_warps,
                          divisible_by_16=div))
        rows.append({"what the launch knows": label, "PTX global loads": _loads(s),
                     "SASS LDG": cuda.fmt_widths(s["sass"], "LDG"), "regs": s["regs"]})
    return rows


def add_num_warps_table(cc: int = 90, block: int = 1024, warps=(1, 2, 4, 8, 16, 32)) -> list[dict]:
    """What num_warps does to a 1024-element tile: elements per thread, load width, registers."""
    rows = []
    for w in warps:
        s = summarize(aot(va.add_kernel, ADD_SIG, {"BLOCK": block}, cc=cc, num_warps=w,
                          divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "n")))
        rows.append({"num_warps": s["num_warps"], "threads": 32 * s["num_warps"],
                     "elements/thread": block // (32 * w), "sizePerThread": s["size_per_thread"],
                     "PTX global loads": _loads(s), "regs": s["regs"]})
    return rows


def rowsum_stage_table(cc: int = 90, stages=(1, 3)) -> list[dict]:
    """The row-sum loop at different num_stages: the reduction's shuffles and barriers, and shared memory."""
    rows = []
    for st in stages:
        s = summarize(aot(rowsum_kernel, ROWSUM_SIG, {"BLOCK_N": 1024}, cc=cc, num_warps=4, num_stages=st,
                          divisible_by_16=("x_ptr", "y_ptr", "n_cols", "row_stride")))
        rows.append({"num_stages": st, "shared bytes": s["shared"], "cp.async": s["cp_async"],
                     "PTX global loads": _loads(s), "shfl.sync": s["shfl"], "bar.sync": s["bar"],
                     "regs": s["regs"]})
    return rows


def ir_excerpts(k, n: int = 6) -> dict[str, list[str]]:
    """A few telling lines of each stage: loads/stores and layouts."""
    pick = {
        "ttir": r"tt\.(load|store|make_range|get_program_id|reduce)\b",
        "ttgir": r"#blocked\d* =|tt\.load|tt\.store|ttg\.",
        "ptx": r"ld\.global|st\.global|shfl\.sync|bar\.sync|cp\.async|wgmma|mma\.sync",
    }
    out = {}
    for stage, pat in pick.items():
        lines = [ln.strip() for ln in k.asm.get(stage, "").splitlines() if re.search(pat, ln)]
        out[stage] = [re.sub(r"\s+loc\(.*$", "", ln)[:150] for ln in lines[:n]]
    return out


def dump_ir(k, directory: str, stem: str) -> list[str]:
    """Write every stage of a compiled kernel to DIRECTORY/STEM.{ttir,ttgir,llir,ptx} (for reading in an editor)."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        if stage in k.asm:
            p = os.path.join(directory, f"{stem}.{stage}")
            with open(p, "w") as f:
                f.write(k.asm[stage])
            paths.append(p)
    return paths


def show_triton_reports(arch: str, dump_dir: str | None = None) -> None:
    cc = device.arch_info(arch).cc
    k = aot(va.add_kernel, ADD_SIG, {"BLOCK": va.TRITON_BLOCK}, cc=cc, num_warps=va.TRITON_WARPS,
            divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "n"))
    print(f"\nTriton vector add (lab 1.2's add_kernel, BLOCK={va.TRITON_BLOCK}, num_warps={va.TRITON_WARPS}) compiled "
          f"ahead of time for {arch} with Triton {ts.VERSION}, stage by stage:")
    for stage, lines in ir_excerpts(k).items():
        print(f"  {stage}:")
        for ln in lines:
            print(f"      {ln}")
    s = summarize(k)
    sass = cuda.sass_excerpt(s["sass_lines"], limit=6)
    if sass:
        print("  sass (cuobjdump of the cubin):")
        for ln in sass:
            print(f"      {ln}")
    print(f"  -> sizePerThread [{s['size_per_thread']}]: each of the {32 * s['num_warps']} threads holds "
          f"{s['size_per_thread']} consecutive floats per layout repetition; {s['regs']} registers, "
          f"{s['shared']} B shared memory.")
    report.print_table(add_alignment_table(cc), title="Alignment and divisibility decide the load width "
                       "(same kernel, same BLOCK; only the promise about the arguments changes)")
    print("  The mask `offs < n` must be constant across a vector's 4 lanes; Triton can prove that only when n is\n"
          "  known divisible by 16. A GPU launch makes these promises itself, from the actual arguments: data_ptr()\n"
          "  % 16 and n % 16 (try n = 2^20 and 2^20 + 1 on a GPU, or a view starting one element in).")
    report.print_table(add_num_warps_table(cc), title="num_warps splits the 1024-element tile across threads: "
                       "fewer elements per thread, narrower loads")
    rs = rowsum_stage_table(cc)
    report.print_table(rs, title="rowsum_kernel (a loop of loads feeding a sum) at num_stages 1 and 3: what the "
                       "pipeliner did")
    same = rs[0]["shared bytes"] == rs[-1]["shared bytes"] and rs[0]["cp.async"] == rs[-1]["cp.async"]
    print("  -> " + ("num_stages changed nothing here: these loads feed a reduction, not tl.dot, so no shared-memory "
                     "ring was built; lab 3.2 shows num_stages at work (shared memory grows by one A+B tile per stage)."
                     if same else "num_stages changed the generated code here (shared memory / cp.async above)."))
    print(f"  The tl.sum became {rs[0]['shfl.sync']} shuffles and {rs[0]['bar.sync']} barrier(s) in PTX: the tree of "
          "rowsum_02, generated.")
    if dump_dir:
        paths = dump_ir(k, dump_dir, f"add_kernel_{arch}")
        k2 = aot(rowsum_kernel, ROWSUM_SIG, {"BLOCK_N": 1024}, cc=cc, num_warps=4,
                 divisible_by_16=("x_ptr", "y_ptr", "n_cols", "row_stride"))
        paths += dump_ir(k2, dump_dir, f"rowsum_kernel_{arch}")
        print(f"  full IR written: {', '.join(os.path.basename(p) for p in paths)} in {dump_dir}")


def show_cuda_report(arch: str) -> cuda.CompileReport:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="rowsum_02_float4_shuffle")
    k1, k2 = rep.kernels.get("rowsum_01_block_per_row"), rep.kernels.get("rowsum_02_float4_shuffle")
    if k1 is not None and k2 is not None and k2.sass:
        c1, c2 = k1.sass_counts, k2.sass_counts
        print(f"-> SASS: rowsum_01 has {c1.get('BAR', 0)} BAR and {cuda.fmt_widths(c1, 'LDG')} loads; rowsum_02 has "
              f"{c2.get('BAR', 0)} BAR, {c2.get('SHFL', 0)} SHFL and {cuda.fmt_widths(c2, 'LDG')} loads (float4).")
    return rep


# ---------------------------------------------------------------------------------------------------------------------
# On a GPU: what the launches really compiled
# ---------------------------------------------------------------------------------------------------------------------
def launched_kernels_report(show_sass: bool = False) -> list[dict]:
    """Launch the Triton kernels on real arrays and read registers, spills, shared memory and loads off them
    (CompiledKernel.n_regs / n_spills / metadata.shared / asm); optionally print the row-sum kernel's SASS."""
    import cupy

    rows = []
    n = 2**20
    a, b = va.make_inputs(n + 16, "float32", check.rng(1), "cuda")
    out = cupy.empty_like(a)
    cases = [("add_kernel, n = 2^20, aligned", a[:n], b[:n], out[:n]),
             ("add_kernel, n = 2^20 + 1 (odd n)", a[:n + 1], b[:n + 1], out[:n + 1]),
             ("add_kernel, views starting 1 element in", a[1:n + 1], b[1:n + 1], out[1:n + 1])]
    for label, x, y, o in cases:
        k = launch(va.add_kernel, (triton.cdiv(int(x.size), va.TRITON_BLOCK),), x, y, o, int(x.size),
                   BLOCK=va.TRITON_BLOCK, num_warps=va.TRITON_WARPS)
        rows.append(_launched_row(label, k))
    xs = make_inputs((4096, 4096), "float32", check.rng(2), "cuda")[0]
    ys = cupy.empty(4096, cupy.float32)
    bn, nw = row_config(4096)
    k = _launch_row(xs, ys, 4096, 4096, bn, nw)[1]
    rows.append(_launched_row(f"rowsum_kernel, 4096 x 4096, BLOCK_N={bn}", k))
    cupy.cuda.Device().synchronize()
    if show_sass:
        lines = cuda.sass_excerpt(summarize(k)["sass_lines"], limit=14)
        print(f"SASS of the launched rowsum_kernel ({len(summarize(k)['sass_lines'])} instructions; memory, shuffles "
              "and barriers):")
        for ln in lines:
            print("   ", ln)
    return rows


def _launched_row(label: str, k) -> dict:
    s = summarize(k)
    return {"launch": label, "num_warps": s["num_warps"], "regs": getattr(k, "n_regs", None),
            "spills": getattr(k, "n_spills", None), "shared": s["shared"], "PTX global loads": _loads(s),
            "SASS LDG": cuda.fmt_widths(s["sass"], "LDG")}


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
ROWSUM_SHAPES = [(32768, 4096), (262144, 128)]
VADD_N = 2**26


def bench_vector_add(ceiling_gbps: float, rounds: int = 3) -> list[dict]:
    import cupy

    n = VADD_N
    a, b = device_randn((n,), "float32", 3), device_randn((n,), "float32", 4)
    out = cupy.empty_like(a)
    fns = {"torch.add": va.peer_torch_add, "cuda 03 float4": va.add_cuda_03,
           "cuda 04 float4 streaming store": va.add_cuda_04, "triton": va.add_triton}
    ts_ = bench.interleaved({k: (lambda f=f: f(a, b, out=out)) for k, f in fns.items()}, rounds=rounds)
    peer = ts_["torch.add"].median_ms
    rows = []
    for name, t in ts_.items():
        impl = "peer" if name.startswith("torch") else ("triton" if name == "triton" else "cuda")
        rows.append(report.row(LAB, f"vector add: {name}", impl, (n,), "float32", t, nbytes=12 * n, flops=n,
                               ceiling_gbps=ceiling_gbps, vs_peer=peer / t.median_ms, peer="torch.add"))
    return rows


def bench_rowsum(shapes, ceiling_gbps: float) -> list[dict]:
    import cupy

    rows = []
    for shape in cli.progress(shapes, "row-sum shapes"):
        x = device_randn(shape, "float32", shape[1], shift=0.25)
        out = cupy.empty(shape[0], cupy.float32)
        nbytes = 4 * shape[0] * shape[1] + 4 * shape[0]
        timed = {}
        for v in PEERS + VARIANTS:
            timed[v.name] = (v, bench.bench(lambda f=v.fn: f(x, out=out)))
        peer = timed["torch.sum(dim=1)"][1].median_ms
        for name, (v, t) in timed.items():
            rows.append(report.row(LAB, f"row sum: {name}", v.impl, shape, "float32", t, nbytes=nbytes,
                                   flops=shape[0] * (shape[1] - 1), ceiling_gbps=ceiling_gbps,
                                   vs_peer=peer / t.median_ms, peer="torch.sum(dim=1)"))
    return rows


def bench_num_warps(shape=(32768, 4096), warps=(1, 2, 4, 8, 16), ceiling_gbps: float | None = None) -> list[dict]:
    """The same rowsum_kernel tile at different num_warps: registers and bandwidth."""
    import cupy

    x = device_randn(shape, "float32", 7, shift=0.25)
    out = cupy.empty(shape[0], cupy.float32)
    bn, _ = row_config(shape[1])
    rows = []
    for w in warps:
        _, k = _launch_row(x, out, shape[0], shape[1], bn, w)
        t = bench.bench(lambda w=w: _launch_row(x, out, shape[0], shape[1], bn, w))
        rows.append(report.row(LAB, f"rowsum_kernel num_warps={w}", "triton", shape, "float32", t,
                               nbytes=4 * shape[0] * shape[1], ceiling_gbps=ceiling_gbps, num_warps=w,
                               elements_per_thread=bn // (32 * w), regs=getattr(k, "n_regs", None),
                               spills=getattr(k, "n_spills", None)))
    return rows


def plot(rows: list[dict], path: str) -> str:
    sel = [r for r in rows if r["variant"].startswith("row sum") and r["shape"] == list(ROWSUM_SHAPES[0])]
    sel += [r for r in rows if r["variant"].startswith("vector add")]
    labels = [f"{r['variant']} {'x'.join(map(str, r['shape']))}" for r in sel]
    return report.plot_bars(path, labels, [r["gbps"] for r in sel], ylabel="GB/s (bytes read + written once)",
                            title=f"Lab 3.1 on {device.info().name}: CUDA C and Triton side by side",
                            colors=[report.IMPL_COLORS.get(r["impl"], "gray") for r in sel],
                            hlines={f"HBM ceiling {sel[0]['ceiling_gbps']:.0f}": sel[0]["ceiling_gbps"]}
                            if sel and sel[0].get("ceiling_gbps") else None)


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    p.add_argument("--dump-ir", default=None, metavar="DIR",
                   help="write the full TTIR/TTGIR/LLIR/PTX of the vector-add and row-sum kernels to DIR")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    gpu = device.has_gpu()
    cases = CHECK_CASES if gpu else CPU_CHECK_CASES
    if args.quick:
        cases = cases[:4]
    print("\nRow sums: CUDA C and Triton, one reference")
    _, ok = lab.check_variants(this, VARIANTS + (PEERS if gpu else []), cases)
    print("\nVector add (lab 1.2's kernels, imported): CUDA C and Triton, one reference")
    _, ok_va = lab.check_variants(va, VECTOR_ADD + (va.PEERS if gpu else []),
                                  VECTOR_ADD_CASES[:2] if args.quick else VECTOR_ADD_CASES)
    ok = ok and ok_va
    print_concepts()
    show_triton_reports(args.arch, args.dump_ir)
    show_cuda_report(args.arch)
    if not gpu:
        print("\nCUDA C kernels were compiled (NVRTC), not run: no GPU. The Triton kernels ran in the interpreter "
              "(correctness only; num_warps and num_stages are ignored there) and were compiled ahead of time for "
              f"{args.arch} to show registers, layouts and load widths.")
        return 0 if ok else 1
    report.print_table(launched_kernels_report(show_sass=True),
                       title="What the GPU launches compiled (Triton specializes on the actual arguments: alignment "
                             "and n % 16)")
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    ceiling = bench.ceilings()["hbm_gbps"]
    rows = bench_vector_add(ceiling, rounds=1 if args.quick else 3)
    rows += bench_rowsum(ROWSUM_SHAPES[:1] if args.quick else ROWSUM_SHAPES, ceiling)
    warps = bench_num_warps(ceiling_gbps=ceiling, warps=(4, 8) if args.quick else (1, 2, 4, 8, 16))
    cols = ["variant", "impl", "shape", "ms", "gbps", "frac_ceiling", "vs_peer", "spread"]
    report.print_table(rows, cols, title=f"Lab 3.1: bandwidth (measured HBM ceiling {ceiling:.0f} GB/s)")
    report.print_table(warps, ["variant", "elements_per_thread", "regs", "spills", "ms", "gbps", "frac_ceiling"],
                       title="num_warps for rowsum_kernel at 32768 x 4096 fp32 (BLOCK_N = 4096)")
    out_dir = args.out or report.results_dir()
    if args.json:
        print("wrote", report.write_json(LAB, rows + warps, out_dir=out_dir, ceiling_gbps=ceiling,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(rows, os.path.join(out_dir, f"{LAB}.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
