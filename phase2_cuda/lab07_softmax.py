"""Lab 2.7 - Softmax: from three kernels to one read and one write per byte, beyond torch.compile.

You will learn
  * why softmax is a reduction sandwich (a row max, a row sum of exponentials, a normalization) and why the max is
    subtracted (exp(89) overflows fp32; exp(x - max) <= 1 never does);
  * the ladder, one change per rung (phase2_cuda/lab07_softmax.cu, each kernel's header predicts its gain):
    three kernels (the input read three times); one fused kernel with a block per row staged in shared memory; a warp
    per row with shuffles (no shared memory, no barrier); online softmax after Milakov and Gimelshein (max and sum in
    ONE pass, mergeable across threads and blocks); the row held in registers with 16-byte loads (one read, one write:
    the minimum); the online form split over several blocks for rows too long for any SM (up to 262144 columns);
  * the number that decides a single-pass design: bytes in flight per SM (occupancy x bytes each thread loads before
    it needs them), against what Little's law asks of HBM;
  * fp16 and bf16 storage with fp32 arithmetic (half the bytes, the same instructions), and the edge cases: rows of
    length 1, rows with -inf (masked entries get 0), rows that are ALL -inf, large magnitudes.

The two numbers, for an R x C matrix of itemsize s bytes: bytes = 2 s R C (read the input once, write the output once:
the minimum); FLOPs ~ 5 R C (compare, subtract, exp, add, multiply). ~1 FLOP/B in fp32 (2 in bf16) is ~10x below an
H200's ridge point (~14 FLOP/B): memory wins. 32768 x 4096 fp32 moves 1 GiB: at the measured ceiling of ~4.4 TB/s,
~0.245 ms. The targets (same run): 32768 x 4096 fp32 >= 1.2x torch.compile, bf16 >= 2.0x torch.compile,
4096 x 32768 fp32 >= 1.4x torch eager.

Measured on an H200 (results/h200/phase2_lab07_softmax.json; HBM ceiling 4,341 GB/s). 32768 x 4096 fp32, the ladder:
three kernels 1,316 GB/s (0.30 of the ceiling) -> fused in shared memory 2,593 (0.60) -> warp per row 2,096 (0.48) ->
online, block per row 3,392 (0.78) -> row in registers 3,860 (0.89, 0.278 ms); the split-row rung 2,598 (0.60);
torch.softmax 2,581, torch.compile 3,071, the Triton online kernel here 3,356, phase 3's tuned Triton fused kernel
3,851. All three targets were met in the interleaved rounds: 32768 x 4096 fp32, rung 05 at 3,908 GB/s = 1.24x
torch.compile (>= 1.2; torch.compile was noisy in that round, 12% spread, and 1.26x in the ladder run); bf16, 3,805 GB/s
= 2.21x torch.compile's 1,721 (>= 2.0); 4096 x 32768 fp32, 3,776 GB/s = 1.43x torch.softmax's 2,642 (>= 1.4).
Predictions against measurements (each kernel's header has the detail): three kernels ~35-45% -> 30%, below the range
(its four streams moved 2,632 GB/s of real traffic, 0.61); fused ~2x over it -> 1.97x; warp per row "near 01-02" at 4096
columns -> in between (0.48) and the best CUDA rung on 128-column rows (3,471 GB/s, 0.80); online 60-75% -> 78%;
registers within ~10% of the ceiling -> 11% below in the ladder run, 10% in the interleaved one (0.278 / 0.275 ms
against the 0.26-0.27 predicted); bf16 at 75-85% and ~2x torch.compile -> 87% and 2.21x, better than predicted; split
rows ~2/3 of the ceiling on matrices far beyond L2 -> 0.50-0.60 in fp32 and only 0.37 in bf16, where halving the bytes
saved just 19% of the time (0.333 against 0.413 ms) - so most of its time at 4096 columns is likely per-block work (two
launches, block reductions, the merge) that does not shrink with the bytes; its "close to 05 when the matrix fits in L2"
was not tested (every matrix here is 128 MiB or more). Across row lengths (2^25 fp32 elements each) rung 05 held
0.83-0.85 of the ceiling from 1024 to 16384 columns but only 0.56 at 128, where torch.softmax (0.91) and rung 03 (0.80)
beat it: sized for 32 values per lane, a warp per 128-column row holds 4, and at 48 registers (40 warps per SM) likely
keeps too few bytes in flight; beyond 32768 columns it hands over to rung 06 (0.51 at 65536, 0.50 at 262144 columns,
still 1.17x and 1.28x torch.softmax). bf16 row in registers and phase 3's Triton fused kernel were equal (3,782 and
3,763 GB/s).

Conventions (every kernel and the reference): a row that is all -inf gives NaN, as torch.softmax and NumPy do (0/0:
no finite value to normalize by); a -inf entry in any other row gives 0; arithmetic is fp32 for every storage type;
output dtype = input dtype. Inputs: 2-D and C-contiguous; fp32 and fp16 as CuPy arrays, bf16 as torch CUDA tensors
(CuPy has no bf16; the kernels get the tensor's data_ptr()).

Run: python -m phase2_cuda.lab07_softmax [--quick] [--tune] [--compile-all] [--no-bench]
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase2_lab07_softmax"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab07_softmax.cu")
DTYPES = ("float32", "float16", "bfloat16")
SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
THREADS = 256                 # rungs 01, 02, 04, 06 (SM_THREADS in the .cu file)
# Rung 05/06 compile-time knobs (the .cu file's macros). EPT = 32 values per thread: a 4096-column fp32 row is a block
# of 128 threads, ~48 registers each, ~10 blocks (160 KiB of loads) in flight per SM; 32768 columns = 1024 threads.
KNOBS = dict(EPT=32, WARP_ROWS=4, ONLINE_UNROLL=4, STREAM_HINTS=1)
MAX_COLS = 2**30              # column indices are 32-bit in the kernels
TARGET_CASES = [((32768, 4096), "float32"), ((32768, 4096), "bfloat16"), ((4096, 32768), "float32")]


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    """float64 softmax over the last axis; an all -inf row gives NaN (exp(-inf - -inf) = exp(NaN))."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)


def make_inputs(shape, dtype: str, rng: np.random.Generator, where: str):
    """Normal values (std 3, so exp spans ~20 orders of magnitude), and with 4 rows or more the edge rows:
    row 0 has ~25% -inf entries (never all), row 1 sits at +1e4 (exp without the max shift overflows), row 2 is scaled
    by 1e4 (1e3 in fp16, whose largest value is 65504: nearly one-hot rows), and the middle row is all -inf (NaN)."""
    rows, cols = shape
    x = rng.standard_normal((rows, cols)) * 3.0
    if rows >= 2:
        mask = rng.random(cols) < 0.25
        mask[rng.integers(cols)] = False
        x[0, mask] = -np.inf
    if rows >= 4:
        x[1] += 1e4
        x[2] *= 1e3 if dtype == "float16" else 1e4
        x[rows // 2] = -np.inf
    return (arrays.from_numpy(x, dtype, where),)


def tolerance(shape, dtype: str) -> check.Tol:
    if dtype == "float16":
        # Outputs average 1/C; below 6.1e-5 fp16 is subnormal with a fixed spacing of 2^-24, so for long rows the
        # FORMAT limits the relative error to ~C x 2^-25 whatever the kernel does (0.8% at C = 262144).
        cols = shape[1]
        return check.Tol(max(2e-3, cols * 2.0**-24), max(1e-2, cols * 2.0**-24))
    return check.tolerance(dtype)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(x, out, dtypes=DTYPES):
    """Validate before any launch; returns (out, rows, cols, dtype)."""
    dt = arrays.dtype_name(x)
    if dt not in dtypes:
        raise TypeError(f"x: dtype {dt} is not supported here; expected one of {', '.join(dtypes)}")
    # bf16 lives in torch tensors (CuPy has no bf16 dtype); fp32/fp16 in CuPy arrays
    libs = ("torch",) if dt == "bfloat16" else ("cupy",)
    arrays.check_array("x", x, dtypes=dtypes, ndim=2, libs=libs)
    out = arrays.check_out(out, tuple(x.shape), dt, x)
    arrays.check_array("out", out, dtypes=(dt,), ndim=2, libs=libs)
    rows, cols = (int(s) for s in x.shape)
    if cols > MAX_COLS:
        raise ValueError(f"x: rows of {cols} columns are longer than these kernels index (2^30)")
    return out, rows, cols, dt


def _ptr(a):
    """Kernel argument for an array: CuPy arrays pass themselves; torch tensors (bf16) pass their device address."""
    return np.uint64(a.data_ptr()) if arrays.library(a) == "torch" else a


def _kernel(name: str, **knobs):
    d = dict(KNOBS)
    d.update({k: v for k, v in knobs.items() if k in KNOBS})
    return cuda.get_kernel(CU, name, defines=d)


def _check_grid(blocks: int, what: str):
    if blocks > 2**31 - 1:
        raise ValueError(f"x: {what} needs {blocks} blocks, more than a 1-D grid holds (2^31 - 1)")


def _vector_ok(x, out, cols: int, dt: str) -> bool:
    """16-byte loads need every row start on a 16-byte boundary: aligned bases and cols x itemsize % 16 == 0."""
    return (cols * arrays.ITEMSIZE[dt]) % 16 == 0 and arrays.aligned(x, 16) and arrays.aligned(out, 16)


def softmax_cuda_01(x, out=None):
    """Three kernels: row max, row sum of exp, normalize (fp32)."""
    import cupy

    out, rows, cols, _ = _prepare(x, out, ("float32",))
    if rows == 0 or cols == 0:
        return out
    _check_grid(rows, "a block per row")
    stats = cupy.empty(2 * rows, dtype=cupy.float32)
    a = (np.int64(rows), np.int32(cols))
    _kernel("softmax_01a_row_max")((rows,), (THREADS,), (x, stats) + a)
    _kernel("softmax_01b_row_sum_exp")((rows,), (THREADS,), (x, stats) + a)
    _kernel("softmax_01c_normalize")((rows,), (THREADS,), (x, stats, out) + a)
    return out


@functools.lru_cache(maxsize=None)
def _smem_row_limit() -> int:
    """Bytes of dynamic shared memory rung 02 may use (the opt-in limit, minus the kernel's static arrays)."""
    k = _kernel("softmax_02_fused_smem")
    limit = device.info().smem_per_block_optin - k.shared_size_bytes
    k.max_dynamic_shared_size_bytes = limit       # above 48 KiB a kernel must opt in
    return limit


def softmax_cuda_02(x, out=None):
    """One kernel, a block per row staged in shared memory (in the output row when too long) (fp32)."""
    out, rows, cols, _ = _prepare(x, out, ("float32",))
    if rows == 0 or cols == 0:
        return out
    _check_grid(rows, "a block per row")
    staged = 4 * cols <= _smem_row_limit()
    k = _kernel("softmax_02_fused_smem")
    k((rows,), (THREADS,), (x, out, np.int64(rows), np.int32(cols), np.int32(staged)),
      shared_mem=4 * cols if staged else 0)
    return out


def softmax_cuda_03(x, out=None):
    """A warp per row, shuffles, three sweeps over the row (fp32)."""
    out, rows, cols, _ = _prepare(x, out, ("float32",))
    if rows == 0 or cols == 0:
        return out
    blocks = math.ceil(rows / 4)
    _check_grid(blocks, "a warp per row")
    _kernel("softmax_03_warp_per_row")((blocks,), (128,), (x, out, np.int64(rows), np.int32(cols)))
    return out


def softmax_cuda_04(x, out=None):
    """Online softmax: max and sum in one pass, a second pass writes; a block per row (fp32)."""
    out, rows, cols, _ = _prepare(x, out, ("float32",))
    if rows == 0 or cols == 0:
        return out
    _check_grid(rows, "a block per row")
    _kernel("softmax_04_online")((rows,), (THREADS,), (x, out, np.int64(rows), np.int32(cols)))
    return out


def plan_05(rows: int, cols: int, dt: str, vec: bool, ept: int | None = None) -> dict | None:
    """Which rung-05 kernel and launch shape a row length gets; None when the row does not fit (then rung 06)."""
    ept = ept or KNOBS["EPT"]
    warp_rows = KNOBS["WARP_ROWS"]
    sfx = SUFFIX[dt] + ("" if vec else "_scalar")
    if cols <= 32 * ept:
        return {"kernel": f"softmax_05_warp_rows_{sfx}", "grid": math.ceil(rows / warp_rows),
                "block": 32 * warp_rows}
    max_threads = 1024 if vec else 512
    threads = 32 * math.ceil(math.ceil(cols / ept) / 32)
    if threads > max_threads:
        return None
    return {"kernel": f"softmax_05_block_row_{sfx}", "grid": rows, "block": threads}


def softmax_cuda_05(x, out=None, **knobs):
    """The row in registers, 16-byte loads, one read + one write; rows longer than fit on chip go to rung 06."""
    out, rows, cols, dt = _prepare(x, out)
    if rows == 0 or cols == 0:
        return out
    vec = _vector_ok(x, out, cols, dt)
    plan = plan_05(rows, cols, dt, vec, knobs.get("EPT"))
    if plan is None:
        return _online_split(x, out, rows, cols, dt, vec, knobs)
    _check_grid(plan["grid"], "rung 05")
    _kernel(plan["kernel"], **knobs)((plan["grid"],), (plan["block"],),
                                     (_ptr(x), _ptr(out), np.int64(rows), np.int32(cols)))
    return out


def plan_06(rows: int, cols: int, dt: str, vec: bool) -> dict:
    """Rung 06's split: enough (row, chunk) blocks to fill the GPU ~4 times, chunks of at least one sweep of a block."""
    w = 16 // arrays.ITEMSIZE[dt] if vec else 1
    sweep = THREADS * w * KNOBS["ONLINE_UNROLL"]
    sms = device.info().sms if device.has_gpu() else device.arch_info("sm_90").example_sms
    chunks = max(1, min(math.ceil(4 * sms / max(rows, 1)), math.ceil(cols / sweep)))
    chunk = w * math.ceil(math.ceil(cols / chunks) / w)
    chunks = math.ceil(cols / chunk)
    return {"chunks": chunks, "chunk": chunk, "grid": rows * chunks, "w": w}


def _online_split(x, out, rows, cols, dt, vec, knobs):
    import cupy

    plan = plan_06(rows, cols, dt, vec)
    _check_grid(plan["grid"], "rung 06")
    sfx = SUFFIX[dt] + ("" if vec else "_scalar")
    stats = cupy.empty(2 * plan["grid"], dtype=cupy.float32)
    a = (np.int64(rows), np.int32(cols), np.int32(plan["chunk"]), np.int32(plan["chunks"]))
    _kernel(f"softmax_06a_online_stats_{sfx}", **knobs)((plan["grid"],), (THREADS,), (_ptr(x), stats) + a)
    _kernel(f"softmax_06b_online_normalize_{sfx}", **knobs)((plan["grid"],), (THREADS,),
                                                           (_ptr(x), _ptr(out), stats) + a)
    return out


def softmax_cuda_06(x, out=None, **knobs):
    """Online softmax split over blocks: (m, d) per chunk, then merge and normalize; any length, 2 reads + 1 write."""
    out, rows, cols, dt = _prepare(x, out)
    if rows == 0 or cols == 0:
        return out
    return _online_split(x, out, rows, cols, dt, _vector_ok(x, out, cols, dt), knobs)


# ---------------------------------------------------------------------------------------------------------------------
# Triton: online softmax, a program per row, the row streamed in tiles (any length; for the interpreter and as a
# reference point - the tuned Triton fused softmax is phase 3's lab)
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * cols
    yr = y_ptr + row * cols
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)     # one (m, d) pair per lane of the tile
    d = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        idx = start + offs
        x = tl.load(xr + idx, mask=idx < cols, other=float("-inf")).to(tl.float32)
        mn = tl.maximum(m, x)
        safe = tl.where(mn == float("-inf"), 0.0, mn)   # keeps exp(-inf - -inf) = NaN out of the empty lanes
        d = d * tl.exp(m - safe) + tl.exp(x - safe)
        m = mn
    mrow = tl.max(m, axis=0)
    msafe = tl.where(mrow == float("-inf"), 0.0, mrow)
    # a lane that only ever saw NaN keeps m = -inf (tl.maximum drops NaN) but d = NaN: keep that NaN (d != d) so a
    # NaN input makes the whole row NaN, as the float64 reference and torch do
    drow = tl.sum(tl.where((m == float("-inf")) & (d == d), 0.0, d * tl.exp(m - msafe)), axis=0)
    for start in range(0, cols, BLOCK):
        idx = start + offs
        mask = idx < cols
        x = tl.load(xr + idx, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - mrow) / drow                      # an all -inf row: exp(NaN) / 0 = NaN, by convention
        tl.store(yr + idx, y.to(y_ptr.dtype.element_ty), mask=mask)


def softmax_triton(x, out=None, *, block=None, num_warps=None):
    """Triton online softmax: CuPy/torch arrays on a GPU (bf16: torch), NumPy / CPU torch in the interpreter."""
    dev = not INTERPRETER
    dt = arrays.check_array("x", x, dtypes=DTYPES, ndim=2, device=dev)
    out = arrays.check_out(out, tuple(x.shape), dt, x)
    rows, cols = (int(s) for s in x.shape)
    if rows == 0 or cols == 0:
        return out
    if rows > 2**31 - 1:
        raise ValueError(f"x: {rows} rows exceed the grid limit (2^31 - 1 programs)")
    block = block or min(triton.next_power_of_2(cols), 1024 if INTERPRETER else 4096)
    with np.errstate(invalid="ignore"):   # the interpreter computes in NumPy: an all -inf row's NaN is intended
        launch(softmax_online_kernel, (rows,), x, out, cols, BLOCK=block,
               num_warps=num_warps or (8 if block >= 2048 else 4))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _torch(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def peer_torch_softmax(x, out=None):
    import torch

    out = arrays.check_out(out, tuple(x.shape), arrays.dtype_name(x), x)
    _torch(out).copy_(torch.softmax(_torch(x), dim=-1))
    return out


@functools.lru_cache(maxsize=None)
def compiled_softmax():
    """torch.compile of torch.softmax, static shapes (one compilation per shape and dtype, on first call)."""
    import torch

    return torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)


PHASE3 = "phase3_triton.lab03_fused_softmax"


@functools.lru_cache(maxsize=None)
def phase3_softmax():
    """Phase 3's Triton fused softmax (softmax_triton(x, out=None)) when that lab exists, else None."""
    try:
        if importlib.util.find_spec(PHASE3) is None:
            return None
        fn = getattr(importlib.import_module(PHASE3), "softmax_triton", None)
        return fn if callable(fn) else None
    except Exception:  # noqa: BLE001 - a colleague's lab in progress must not break this one
        return None


def peer_phase3(x, out=None):
    out = arrays.check_out(out, tuple(x.shape), arrays.dtype_name(x), x)
    phase3_softmax()(x, out=out)
    return out


VARIANTS = [
    lab.Variant("cuda 01 three kernels", softmax_cuda_01, "cuda"),
    lab.Variant("cuda 02 fused, block per row, smem", softmax_cuda_02, "cuda"),
    lab.Variant("cuda 03 warp per row, shuffles", softmax_cuda_03, "cuda"),
    lab.Variant("cuda 04 online, block per row", softmax_cuda_04, "cuda"),
    lab.Variant("cuda 05 registers, 16-byte loads", softmax_cuda_05, "cuda", dtypes=DTYPES,
                note="rows > 32768 (16384 unaligned) go to 06"),
    lab.Variant("cuda 06 online, split rows", softmax_cuda_06, "cuda", dtypes=DTYPES),
    lab.Variant("triton online", softmax_triton, "triton", dtypes=DTYPES),
]
PEERS = [lab.Variant("torch.softmax", peer_torch_softmax, "peer", dtypes=DTYPES)]
# Phase 3's kernel is measured and checked at the benchmark shapes only (its limits are its own lab's business).
PHASE3_PEER = lab.Variant("phase 3 triton fused", peer_phase3, "peer", dtypes=DTYPES)
BEST = "cuda 05 registers, 16-byte loads"

_SHAPES32 = [(1, 1), (3, 1), (5, 2), (4, 31), (33, 127), (64, 1000), (9, 1024), (17, 1025), (33, 4096), (9, 4097),
             (5, 8191), (6, 16385), (3, 32768), (2, 32769), (1, 65537), (2, 262144), (1000, 33)]
CHECK_CASES = ([(s, "float32") for s in _SHAPES32]
               + [(s, dt) for dt in ("float16", "bfloat16")
                  for s in [(4, 7), (33, 127), (9, 4096), (5, 4097), (4, 32768), (2, 262144)]])
CPU_CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((4, 33), "float32"), ((5, 1000), "float32"),
                   ((4, 2500), "float32"), ((4, 129), "float16"), ((4, 65), "bfloat16")]


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------------------------------------------------
def _device_input(shape, dtype):
    import cupy
    import torch

    if dtype == "bfloat16":
        return torch.randn(shape, device="cuda", dtype=torch.bfloat16) * 3
    return (cupy.random.standard_normal(shape, dtype=cupy.float32) * 3).astype(dtype)


def _contenders(x, names, compiled: bool):
    """name -> zero-argument callable. Peers are called as a learner would (torch allocates its output)."""
    import torch

    out = arrays.empty(x.shape, arrays.dtype_name(x), x)
    tx = _torch(x)
    fns = {}
    dt = arrays.dtype_name(x)
    for v in VARIANTS:
        if dt in v.dtypes and (names is None or v.name in names):
            fns[v.name] = (lambda f=v.fn: f(x, out=out))
    fns["torch.softmax"] = lambda: torch.softmax(tx, dim=-1)
    if compiled:
        try:
            cf = compiled_softmax()
            cf(tx)                      # compile now (20-60 s the first time per shape and dtype), not in the timer
            fns["torch.compile"] = lambda: cf(tx)
        except Exception as e:  # noqa: BLE001 - report, keep measuring the rest
            print(f"torch.compile unavailable: {type(e).__name__}: {e}", file=sys.stderr)
    if phase3_softmax() is not None:
        try:
            peer_phase3(x, out=out)                           # compile (Triton JIT) before timing
            fns[PHASE3_PEER.name] = lambda: peer_phase3(x, out=out)
        except Exception as e:  # noqa: BLE001
            print(f"phase 3 softmax failed at {tuple(x.shape)} {dt}: {type(e).__name__}: {e}", file=sys.stderr)
    return fns, out


def _impl(name):
    return next((v.impl for v in VARIANTS if v.name == name), "peer")


def ladder(shape, dtype, ceiling_gbps: float, compiled: bool) -> list[dict]:
    """Every rung and peer once at one shape (L2 flushed before each call), ratios to torch eager and compile."""
    x = _device_input(shape, dtype)
    fns, _ = _contenders(x, None, compiled)
    nbytes = 2 * arrays.ITEMSIZE[dtype] * shape[0] * shape[1]
    ts = {name: bench.bench(f) for name, f in cli.progress(list(fns.items()), f"ladder {shape} {dtype}")}
    eager = ts["torch.softmax"].median_ms
    comp = ts["torch.compile"].median_ms if "torch.compile" in ts else None
    rows = []
    for name, t in ts.items():
        rows.append(report.row(LAB, name, _impl(name), shape, dtype, t, nbytes=nbytes, flops=5 * shape[0] * shape[1],
                               ceiling_gbps=ceiling_gbps, vs_eager=eager / t.median_ms,
                               vs_compile=comp / t.median_ms if comp else None))
    return rows


def head_to_head(cases, rounds: int, compiled: bool) -> list[dict]:
    """The issue's targets in interleaved rounds (best rung vs the peer the target names)."""
    out = []
    for shape, dtype in cases:
        x = _device_input(shape, dtype)
        want_compile = compiled and (shape, dtype) != ((4096, 32768), "float32")
        fns, _ = _contenders(x, [BEST, "cuda 06 online, split rows"], want_compile)
        ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
        nbytes = 2 * arrays.ITEMSIZE[dtype] * shape[0] * shape[1]
        peer, factor = ("torch.softmax", 1.4) if shape == (4096, 32768) else ("torch.compile", 2.0 if
                                                                              dtype == "bfloat16" else 1.2)
        for name, t in ts.items():
            r = {"case": f"{shape[0]}x{shape[1]} {dtype}", "variant": name, "ms": t.median_ms,
                 "GB/s": t.gbps(nbytes), "spread": t.spread, "vs_peer": None, "target": "", "met": None}
            if peer in ts:
                r["vs_peer"] = ts[peer].median_ms / t.median_ms
                if name == BEST:
                    r["target"] = f">= {factor:.1f} x {peer}"
                    r["met"] = r["vs_peer"] >= factor
            elif name == BEST:
                r["target"], r["met"] = f">= {factor:.1f} x {peer} (peer not measured)", None
            out.append(r)
        del x
    return out


SWEEP_COLS = (128, 1024, 4096, 16384, 65536, 262144)
SWEEP_NAMES = ["cuda 03 warp per row, shuffles", "cuda 04 online, block per row", BEST, "cuda 06 online, split rows",
               "triton online", "torch.softmax"]


def sweep(ceiling_gbps: float, elements: int = 2**25, cols_list=SWEEP_COLS) -> list[dict]:
    """GB/s over the row length at a fixed matrix size (fp32, 2 x 128 MiB): where each design wins."""
    import cupy

    rows_out = []
    for cols in cli.progress(cols_list, "row lengths"):
        shape = (max(1, elements // cols), cols)
        x = _device_input(shape, "float32")
        fns, _ = _contenders(x, SWEEP_NAMES, False)
        for name, f in fns.items():
            t = bench.bench(f)
            rows_out.append(report.row(LAB, name, _impl(name), shape, "float32", t, nbytes=8 * shape[0] * cols,
                                       ceiling_gbps=ceiling_gbps))
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    return rows_out


def tune(rounds: int = 3) -> list[dict]:
    """Rung 05's knobs (values per thread, streaming hints) at the two 4096-column targets, vs torch eager."""
    import torch

    rows = []
    for shape, dtype in cli.progress(TARGET_CASES[:2], "tuning cases"):
        x = _device_input(shape, dtype)
        out = arrays.empty(shape, dtype, x)
        fns = {"torch.softmax": (lambda t=_torch(x): torch.softmax(t, dim=-1))}
        for ept in (8, 16, 32):
            for hints in (0, 1, 2):
                fns[f"05 EPT={ept} STREAM_HINTS={hints}"] = \
                    (lambda e=ept, h=hints: softmax_cuda_05(x, out, EPT=e, STREAM_HINTS=h))
        for f in fns.values():
            f()
        ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
        nbytes = 2 * arrays.ITEMSIZE[dtype] * shape[0] * shape[1]
        for k, t in ts.items():
            rows.append({"case": f"{shape[0]}x{shape[1]} {dtype}", "config": k, "ms": t.median_ms,
                         "GB/s": t.gbps(nbytes), "vs eager": ts["torch.softmax"].median_ms / t.median_ms})
        del x, out
    return rows


def plot_ladders(rows: list[dict], ceiling: float, out_dir: str) -> list[str]:
    paths = []
    for shape, dtype in {(tuple(r["shape"]), r["dtype"]) for r in rows}:
        sel = [r for r in rows if tuple(r["shape"]) == shape and r["dtype"] == dtype]
        name = f"{LAB}_{shape[0]}x{shape[1]}_{dtype}.png"
        paths.append(report.plot_bars(os.path.join(out_dir, name), [r["variant"] for r in sel],
                                      [r["gbps"] for r in sel], ylabel="GB/s (input read + output written once)",
                                      title=f"Softmax {shape[0]} x {shape[1]} {dtype} on {device.info().name}",
                                      colors=[report.IMPL_COLORS[r["impl"]] for r in sel],
                                      hlines={f"measured HBM ceiling {ceiling:.0f} GB/s": ceiling}))
    return paths


def plot_sweep(rows: list[dict], ceiling: float, path: str) -> str:
    cols = sorted({r["shape"][1] for r in rows})
    names = list(dict.fromkeys(r["variant"] for r in rows))
    series = {n: [next((r["gbps"] for r in rows if r["variant"] == n and r["shape"][1] == c), None) for c in cols]
              for n in names}
    return report.plot_lines(path, cols, series, xlabel="row length (fp32 columns; 2^25 elements in all)",
                             ylabel="GB/s (read + write once)",
                             title=f"Softmax: which design wins at which row length ({device.info().name})",
                             hlines={f"measured HBM ceiling {ceiling:.0f} GB/s": ceiling},
                             vlines={"32 x EPT (warp in registers)": 32 * KNOBS["EPT"],
                                     "1024 x EPT (block in registers)": 1024 * KNOBS["EPT"]})


# ---------------------------------------------------------------------------------------------------------------------
# Without a GPU: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(arch: str) -> None:
    names = ["softmax_01a_row_max", "softmax_01b_row_sum_exp", "softmax_01c_normalize", "softmax_02_fused_smem",
             "softmax_03_warp_per_row", "softmax_04_online", "softmax_05_warp_rows_f32", "softmax_05_block_row_f32",
             "softmax_05_block_row_f32_scalar", "softmax_05_block_row_bf16", "softmax_06a_online_stats_f32",
             "softmax_06b_online_normalize_f32"]
    rep = cuda.print_compile_report(CU, arch, defines=KNOBS, kernels=names, excerpt_of="softmax_05_block_row_f32")
    k = rep.kernels["softmax_05_block_row_f32"]
    a = device.arch_info(arch)
    regs = max(k.registers, 1)
    alloc = 8 * math.ceil(regs / 8)               # registers are allocated per warp in 256-register chunks
    blocks = min(a.regs_per_sm // (alloc * 128), a.max_threads_per_sm // 128, a.max_blocks_per_sm)
    print(f"-> softmax_05_block_row_f32 at 4096 fp32 columns: 128 threads x {regs} registers -> {blocks} blocks per SM "
          f"on {arch} (by registers), each with 16 KiB of loads issued before the first use: ~{16 * blocks} KiB in "
          "flight per SM.")
    if k.sass:
        c = k.sass_counts
        first_use = next((i for i, s in enumerate(k.sass) if s.split()[0].startswith("FMNMX")), None)
        loads_before = sum(1 for s in k.sass[:first_use] if "LDG" in s) if first_use else 0
        print(f"-> its SASS: {c.get('LDG.128', 0)} x LDG.E.128 ({loads_before} of them before the first FMNMX: all "
              f"in flight at once), {c.get('BAR', 0)} barriers, {c.get('SHFL', 0)} SHFL, {c.get('MUFU', 0)} MUFU "
              f"(ex2), {c.get('STG.128', 0)} x STG.E.128.")
    print("-> the full table (every dtype and the *_scalar fallbacks) is what tests/test_kernels_compile.py checks: "
          "zero spills on sm_75, sm_80, sm_90.")


def show_plans() -> None:
    """Which rung-05/06 kernel each row length gets, and the bytes a single pass keeps on chip."""
    rows = []
    for cols in (100, 1024, 4096, 4097, 16384, 32768, 32769, 262144):
        for dt in ("float32", "bfloat16"):
            vec = (cols * arrays.ITEMSIZE[dt]) % 16 == 0
            p = plan_05(32768 if cols <= 4096 else 4096, cols, dt, vec)
            if p is None:
                q = plan_06(4096, cols, dt, vec)
                rows.append({"cols": cols, "dtype": dt, "16-byte loads": vec, "kernel": "06 online split",
                             "launch": f"{q['grid']} blocks x {THREADS} ({q['chunks']} per row)",
                             "HBM reads": "2 (1 if in L2)"})
            else:
                rows.append({"cols": cols, "dtype": dt, "16-byte loads": vec, "kernel": p["kernel"],
                             "launch": f"{p['grid']} blocks x {p['block']}", "HBM reads": "1"})
    report.print_table(rows, title="rung 05's dispatch by row length (R = 32768 rows up to 4096 columns, else 4096)")


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    p.add_argument("--tune", action="store_true", help="(GPU) sweep rung 05's EPT and cache hints at 4096 columns")
    p.add_argument("--compile-all", action="store_true",
                   help="(GPU) also torch.compile the 4096 x 32768 case (one more 20-60 s compilation)")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        cases = CPU_CHECK_CASES[:4] if args.quick else CPU_CHECK_CASES
        _, ok = lab.check_variants(this, [v for v in VARIANTS if v.runs_without_gpu], cases)
        show_plans()
        show_compile_reports(args.arch)
        print("\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    quick = args.quick
    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[::3] if quick else CHECK_CASES)
    if phase3_softmax() is not None:
        # phase 3's kernel: checked at moderate shapes only; a failure there is reported, not charged to this lab
        lab.check_variants(this, [PHASE3_PEER], [((33, 4096), "float32"), ((9, 4096), "bfloat16"),
                                                  ((4, 32768), "float32")])
    show_plans()
    show_compile_reports(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    if args.tune:
        rows = tune()
        report.print_table(rows, title="rung 05 knobs (interleaved rounds)")
        if args.json:
            print("wrote", report.write_json(LAB + "_tune", rows, out_dir=out_dir))
        return 0
    ceiling = device.ceilings()
    cases = [((8192, 4096), "float32"), ((8192, 4096), "bfloat16")] if quick else TARGET_CASES
    compiled = not quick
    lad = []
    for shape, dtype in cases:
        lad += ladder(shape, dtype, ceiling["hbm_gbps"], compiled and (args.compile_all or shape[1] == 4096))
    sw = sweep(ceiling["hbm_gbps"], cols_list=(1024, 4096, 65536) if quick else SWEEP_COLS)
    tg = head_to_head(cases, rounds=3 if quick else 5, compiled=compiled)
    if args.json:
        print("wrote", report.write_json(LAB, lad + sw, out_dir=out_dir, ceiling=ceiling, targets=tg, knobs=KNOBS,
                                         phase3_peer=phase3_softmax() is not None, device=device.info().as_dict()))
    if args.plot:
        for path in plot_ladders(lad, ceiling["hbm_gbps"], out_dir):
            print("wrote", path)
        print("wrote", plot_sweep(sw, ceiling["hbm_gbps"], os.path.join(out_dir, f"{LAB}_cols.png")))
    report.print_table(sw, ["variant", "shape", "ms", "gbps", "frac_ceiling"], title="row-length sweep (fp32)")
    report.print_table(lad, ["variant", "shape", "dtype", "ms", "gbps", "frac_ceiling", "vs_eager", "vs_compile"],
                       title=f"the ladder (L2 flushed; measured ceiling {ceiling['hbm_gbps']:.0f} GB/s)")
    report.print_table(tg, title="targets (interleaved rounds, same run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
