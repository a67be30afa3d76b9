"""Lab 2.7 - Softmax: from three kernels to one read and one write per byte, beyond torch.compile.

You will learn
  * why softmax is a reduction sandwich (a row max, a row sum of exponentials, a normalization) and why the max is
    subtracted (exp(89) overflows fp32; exp(x - max) <= 1 never does);
  * the ladder, one change per rung (kernels.cu; each kernel's header predicts its gain): three kernels (the input
    read three times); one fused kernel with a block per row staged in shared memory; a warp per row with shuffles
    (no shared memory, no barrier); online softmax after Milakov and Gimelshein (max and sum in ONE pass, mergeable
    across threads and blocks); the row held in registers with 16-byte loads (one read, one write: the minimum); the
    online form split over several blocks for rows too long for any SM (up to 262144 columns);
  * the number that decides a single-pass design: bytes in flight per SM (occupancy x bytes each thread loads before
    it needs them), against what Little's law asks of HBM;
  * fp16 and bf16 storage with fp32 arithmetic (half the bytes, the same instructions), and the edge cases: rows of
    length 1, rows with -inf (masked entries get 0), rows that are ALL -inf, large magnitudes.

The two numbers, for an R x C matrix of itemsize s bytes: bytes = 2 s R C (read the input once, write the output once:
the minimum); FLOPs ~ 5 R C (compare, subtract, exp, add, multiply). ~1 FLOP/B in fp32 (2 in bf16), an order of
magnitude below the ridge point of any current GPU: memory wins, and the floor is 2 s R C over the measured HBM
ceiling. 32768 x 4096 fp32 moves 1 GiB. The lesson, the predictions and this GPU's measured figures: README.md;
`--plan` prints this GPU's floor, ridge point and every launch of the benchmark.

Conventions (every kernel and the reference): a row that is all -inf gives NaN, as torch.softmax and NumPy do (0/0:
no finite value to normalize by); a -inf entry in any other row gives 0; arithmetic is fp32 for every storage type;
output dtype = input dtype. Inputs: 2-D and C-contiguous; fp32 and fp16 as CuPy arrays, bf16 as torch CUDA tensors
(CuPy has no bf16; the kernels get the tensor's data_ptr()).

Run: python -m phase2_cuda.lab07_softmax [--quick] [--tune] [--compile-all] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set EPT=16]
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import softmax_online_kernel

LAB = "phase2_lab07_softmax"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
DTYPES = ("float32", "float16", "bfloat16")
SUFFIX = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
ROWS_03 = 4                   # rung 03: rows (= warps) per block of 32 x ROWS_03 threads (a launch shape, not a macro)
# CONFIG: every compile-time knob of kernels.cu, in ONE place. Each entry reaches the kernel as -DNAME=VALUE on every
# compile (the wrappers, --plan, the compile report, --tune, the tests); kernels.cu holds no value of its own and a
# compile without one stops with an #error naming the knob. Resolved by knob_config(): CONFIG, then this GPU's tuning
# record (results/<gpu>/phase2_lab07_softmax_tuned.json: EPT and STREAM_HINTS, the values --tune sweeps, measured on
# that GPU only), then --set NAME=VALUE; the run prints where each value came from.
#   SM_THREADS = 256     threads per block of rungs 01, 02, 04 and 06 (a power of two: the shared-memory trees)
#   EPT = 32             rung 05: values per thread, held in registers. A 4096-column fp32 row is a block of 128
#                        threads, ~48 registers each, ~10 blocks (160 KiB of loads) in flight per SM; 32768 columns =
#                        1024 threads. A multiple of 8 (one 16-byte vector of a 16-bit type).
#   WARP_ROWS = 4        rung 05, rows up to 32 x EPT columns: rows (= warps) per block of 32 x WARP_ROWS threads
#   BLOCK_MAX_THREADS = 1024         rung 05, longer rows: the largest block (rows up to 1024 x 32 = 32768 columns);
#                                    caps registers at 65536 / 1024 = 64 per thread
#   SCALAR_BLOCK_MAX_THREADS = 512   the same for rows that take 4-byte / 2-byte loads: 32 loads of their own address
#                                    need more registers than 8 vector loads, and 1024 threads would spill
#   ONLINE_UNROLL = 4    rung 06: 16-byte loads issued back to back per thread before they are used
#   STREAM_HINTS = 0     rungs 05-06: 0 plain loads and stores; 1 evict-first; 2 as 1 and L1 skipped with 256-byte L2
#                        prefetch. Whether the hints help is a measurement: the tuning table has it.
CONFIG = dict(SM_THREADS=256, EPT=32, WARP_ROWS=4, BLOCK_MAX_THREADS=1024, SCALAR_BLOCK_MAX_THREADS=512,
              ONLINE_UNROLL=4, STREAM_HINTS=0)
FAMILY = "softmax kernels.cu (CONFIG)"
TUNED = LAB + "_tuned"
TUNABLE = {"EPT": (8, 16, 32), "STREAM_HINTS": (0, 1, 2)}
MAX_COLS = 2**30              # column indices are 32-bit in the kernels
# The benchmark's headline cases (bench.py times them, the plan lists their launches): the three targets
BENCH_CASES = [((32768, 4096), "float32"), ((32768, 4096), "bfloat16"), ((4096, 32768), "float32")]


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
def _prepare(x, out, dtypes=DTYPES, block_per_row=False):
    """Validate before any launch; returns (out, rows, cols, dtype). block_per_row: the rung launches a block per row,
    so rows must fit a 1-D grid (checked when there is work)."""
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
    if block_per_row and rows and cols:
        _check_grid(rows, "a block per row")
    return out, rows, cols, dt


def _ptr(a):
    """Kernel argument for an array: CuPy arrays pass themselves; torch tensors (bf16) pass their device address."""
    return np.uint64(a.data_ptr()) if arrays.library(a) == "torch" else a


def _check_winner(w: dict) -> dict:
    """A tuning record's winner: {"EPT": e, "STREAM_HINTS": h} with values from TUNABLE."""
    w = {k: int(w[k]) for k in TUNABLE}
    bad = [f"{k}={v}" for k, v in w.items() if v not in TUNABLE[k]]
    if bad:
        raise ValueError(f"not a tunable value: {', '.join(bad)}")
    return w


def _check_knobs(v: dict) -> dict:
    """The knobs the kernels can be compiled with (what --set may choose; the .cu file's static_asserts agree)."""
    bad = []
    if v["SM_THREADS"] & (v["SM_THREADS"] - 1) or not 32 <= v["SM_THREADS"] <= 1024:
        bad.append(tr("SM_THREADS a power of two from 32 to 1024 (the shared-memory trees)"))
    for name in ("BLOCK_MAX_THREADS", "SCALAR_BLOCK_MAX_THREADS"):
        if v[name] % 32 or not 32 <= v[name] <= 1024:
            bad.append(tr("{name} a multiple of 32 from 32 to 1024", name=name))
    if v["EPT"] % 8 or not 8 <= v["EPT"] <= 64:
        bad.append(tr("EPT a multiple of 8 from 8 to 64 (one 16-byte vector of a 16-bit type per 8)"))
    if not 1 <= v["WARP_ROWS"] <= 32:
        bad.append(tr("WARP_ROWS from 1 to 32 (blocks of 32 x WARP_ROWS threads)"))
    if not 1 <= v["ONLINE_UNROLL"] <= 16:
        bad.append(tr("ONLINE_UNROLL from 1 to 16"))
    if v["STREAM_HINTS"] not in (0, 1, 2):
        bad.append(tr("STREAM_HINTS 0, 1 or 2"))
    if bad:
        raise ValueError(tr("{family}: {bad}; got {got}", family=FAMILY, bad="; ".join(bad), got=config.fmt(v)))
    return v


def knob_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The compile-time knobs of kernels.cu on `gpu` (default: the GPU at hand), and where each came from: CONFIG,
    then the EPT and STREAM_HINTS that --tune recorded for that GPU, then --set NAME=VALUE."""
    winner, source = tuned.record(TUNED, _check_winner, gpu=gpu)
    return config.resolve(FAMILY, CONFIG, tuned=winner, tuned_source=source, validate=_check_knobs)


def knobs(gpu: device.DeviceInfo | None = None) -> dict:
    """The compile-time knobs in use on `gpu` (default: the GPU at hand): knob_config()'s values."""
    return dict(knob_config(gpu).values)


def knobs_source(gpu: device.DeviceInfo | None = None) -> str:
    """Where knobs() came from, for the report: 'default', 'tuned on <GPU> (<file>)', '--set EPT=16' or a mix."""
    return knob_config(gpu).source()


def _with(overrides: dict) -> dict:
    """knobs() with a --tune sweep's explicit values (EPT=16, ...) on top."""
    k = knobs()
    k.update({n: v for n, v in overrides.items() if n in CONFIG})
    return k


def compile_defines(path: str = CU, gpu: device.DeviceInfo | None = None) -> dict:
    """The -D values a compile of this lab's .cu file `path` needs on `gpu` (default: the GPU at hand): knobs(). For
    tools and tests that compile the file outside the wrappers; kernels.cu has no default of its own."""
    if os.path.abspath(path) != CU:
        raise ValueError(f"{path}: not a CUDA C file of this lab ({CU})")
    return knobs(gpu)


def _kernel(name: str, k: dict | None = None):
    return cuda.get_kernel(CU, name, defines=k or knobs())


def _check_grid(blocks: int, what: str):
    if blocks > 2**31 - 1:
        raise ValueError(f"x: {what} needs {blocks} blocks, more than a 1-D grid holds (2^31 - 1)")


def _vector_ok(x, out, cols: int, dt: str) -> bool:
    """16-byte loads need every row start on a 16-byte boundary: aligned bases and cols x itemsize % 16 == 0."""
    return (cols * arrays.ITEMSIZE[dt]) % 16 == 0 and arrays.aligned(x, 16) and arrays.aligned(out, 16)


def softmax_cuda_01(x, out=None):
    """Three kernels: row max, row sum of exp, normalize (fp32)."""
    import cupy

    out, rows, cols, _ = _prepare(x, out, ("float32",), block_per_row=True)
    if rows == 0 or cols == 0:
        return out
    stats = cupy.empty(2 * rows, dtype=cupy.float32)
    a = (np.int64(rows), np.int32(cols))
    k = knobs()
    p = plan_01(rows, k)
    k1, k2, k3 = (_kernel(name, k) for name in p["kernels"])
    k1((p["grid"],), (p["block"],), (x, stats) + a)
    k2((p["grid"],), (p["block"],), (x, stats) + a)
    k3((p["grid"],), (p["block"],), (x, stats, out) + a)
    return out


# Launch shapes: one function per rung, called by its wrapper and by launches() (the plan), so the two cannot differ.
def plan_01(rows: int, cfg: dict | None = None) -> dict:
    """Rung 01: three kernels, a block of SM_THREADS per row each. cfg: the knobs (default knobs())."""
    return {"kernels": ["softmax_01a_row_max", "softmax_01b_row_sum_exp", "softmax_01c_normalize"], "grid": rows,
            "block": (cfg or knobs())["SM_THREADS"]}


def plan_02(rows: int, cols: int, limit: int, cfg: dict | None = None) -> dict:
    """Rung 02: a block of SM_THREADS per row, the row staged in `limit` bytes of dynamic shared memory when it fits
    (else in the output row, smem 0)."""
    staged = 4 * cols <= limit
    return {"kernel": "softmax_02_fused_smem", "grid": rows, "block": (cfg or knobs())["SM_THREADS"], "staged": staged,
            "smem": 4 * cols if staged else 0}


def plan_03(rows: int) -> dict:
    """Rung 03: a warp per row, ROWS_03 rows per block."""
    return {"kernel": "softmax_03_warp_per_row", "grid": math.ceil(rows / ROWS_03), "block": 32 * ROWS_03}


def plan_04(rows: int, cfg: dict | None = None) -> dict:
    """Rung 04: a block of SM_THREADS per row."""
    return {"kernel": "softmax_04_online", "grid": rows, "block": (cfg or knobs())["SM_THREADS"]}


def smem_row_limit(gpu: device.DeviceInfo | None = None) -> int:
    """Bytes of dynamic shared memory rung 02 may stage a row in on `gpu` (default: the GPU at hand): the GPU's
    opt-in limit per block minus the kernel's static arrays (its registers and static bytes compiled for that GPU)."""
    if device.has_gpu() and (gpu is None or not gpu.simulated):
        return _smem_row_limit()
    gpu = gpu or device.current()
    _, static = cuda.resources(CU, "softmax_02_fused_smem", gpu, defines=knobs(gpu))
    return gpu.smem_per_block_optin - static


def _smem_row_limit() -> int:
    """On the GPU at hand: smem_row_limit(), with rung 02's kernel opted in to it."""
    return _opt_in_02(tuple(sorted(knobs().items())))


@functools.lru_cache(maxsize=None)
def _opt_in_02(defines: tuple) -> int:
    k = _kernel("softmax_02_fused_smem", dict(defines))
    limit = device.info().smem_per_block_optin - int(k.shared_size_bytes)
    k.max_dynamic_shared_size_bytes = limit       # above 48 KiB a kernel must opt in (once per compiled kernel)
    return limit


def softmax_cuda_02(x, out=None):
    """One kernel, a block per row staged in shared memory (in the output row when too long) (fp32)."""
    out, rows, cols, _ = _prepare(x, out, ("float32",), block_per_row=True)
    if rows == 0 or cols == 0:
        return out
    k = knobs()
    p = plan_02(rows, cols, _smem_row_limit(), k)
    args = (x, out, np.int64(rows), np.int32(cols), np.int32(p["staged"]))
    _kernel(p["kernel"], k)((p["grid"],), (p["block"],), args, shared_mem=p["smem"])
    return out


def softmax_cuda_03(x, out=None):
    """A warp per row, shuffles, three sweeps over the row (fp32)."""
    out, rows, cols, _ = _prepare(x, out, ("float32",))
    if rows == 0 or cols == 0:
        return out
    p = plan_03(rows)
    _check_grid(p["grid"], "a warp per row")
    _kernel(p["kernel"])((p["grid"],), (p["block"],), (x, out, np.int64(rows), np.int32(cols)))
    return out


def softmax_cuda_04(x, out=None):
    """Online softmax: max and sum in one pass, a second pass writes; a block per row (fp32)."""
    out, rows, cols, _ = _prepare(x, out, ("float32",), block_per_row=True)
    if rows == 0 or cols == 0:
        return out
    k = knobs()
    p = plan_04(rows, k)
    _kernel(p["kernel"], k)((p["grid"],), (p["block"],), (x, out, np.int64(rows), np.int32(cols)))
    return out


def plan_05(rows: int, cols: int, dt: str, vec: bool, ept: int | None = None, cfg: dict | None = None) -> dict | None:
    """Which rung-05 kernel and launch shape a row length gets; None when the row does not fit (then rung 06).
    cfg: the knobs (default knobs(), the GPU at hand's); ept overrides its EPT."""
    cfg = cfg or knobs()
    ept = ept or cfg["EPT"]
    warp_rows = cfg["WARP_ROWS"]
    sfx = SUFFIX[dt] + ("" if vec else "_scalar")
    if cols <= 32 * ept:
        return {"kernel": f"softmax_05_warp_rows_{sfx}", "grid": math.ceil(rows / warp_rows),
                "block": 32 * warp_rows}
    max_threads = cfg["BLOCK_MAX_THREADS"] if vec else cfg["SCALAR_BLOCK_MAX_THREADS"]
    threads = 32 * math.ceil(math.ceil(cols / ept) / 32)
    if threads > max_threads:
        return None
    return {"kernel": f"softmax_05_block_row_{sfx}", "grid": rows, "block": threads}


def softmax_cuda_05(x, out=None, **overrides):
    """The row in registers, 16-byte loads, one read + one write; rows longer than fit on chip go to rung 06.
    overrides: knobs for this call (EPT=16, STREAM_HINTS=1: the --tune sweep)."""
    out, rows, cols, dt = _prepare(x, out)
    if rows == 0 or cols == 0:
        return out
    k = _with(overrides)
    vec = _vector_ok(x, out, cols, dt)
    p = plan_05(rows, cols, dt, vec, cfg=k)
    if p is None:
        return _online_split(x, out, rows, cols, dt, vec, k)
    _check_grid(p["grid"], "rung 05")
    _kernel(p["kernel"], k)((p["grid"],), (p["block"],), (_ptr(x), _ptr(out), np.int64(rows), np.int32(cols)))
    return out


def plan_06(rows: int, cols: int, dt: str, vec: bool, gpu: device.DeviceInfo | None = None,
            cfg: dict | None = None) -> dict:
    """Rung 06's split on `gpu` (default: the GPU at hand): enough (row, chunk) blocks to fill its SMs ~4 times,
    chunks of at least one sweep of a block. cfg: the knobs (default knobs(gpu))."""
    cfg = cfg or knobs(gpu)
    w = 16 // arrays.ITEMSIZE[dt] if vec else 1
    sweep = cfg["SM_THREADS"] * w * cfg["ONLINE_UNROLL"]
    sms = (gpu or device.current()).sms
    chunks = max(1, min(math.ceil(4 * sms / max(rows, 1)), math.ceil(cols / sweep)))
    chunk = w * math.ceil(math.ceil(cols / chunks) / w)
    chunks = math.ceil(cols / chunk)
    sfx = SUFFIX[dt] + ("" if vec else "_scalar")
    return {"kernels": [f"softmax_06a_online_stats_{sfx}", f"softmax_06b_online_normalize_{sfx}"], "chunks": chunks,
            "chunk": chunk, "grid": rows * chunks, "block": cfg["SM_THREADS"], "w": w}


def _online_split(x, out, rows, cols, dt, vec, k: dict):
    import cupy

    p = plan_06(rows, cols, dt, vec, cfg=k)
    _check_grid(p["grid"], "rung 06")
    stats = cupy.empty(2 * p["grid"], dtype=cupy.float32)
    a = (np.int64(rows), np.int32(cols), np.int32(p["chunk"]), np.int32(p["chunks"]))
    stats_kernel, normalize_kernel = (_kernel(name, k) for name in p["kernels"])
    stats_kernel((p["grid"],), (p["block"],), (_ptr(x), stats) + a)
    normalize_kernel((p["grid"],), (p["block"],), (_ptr(x), _ptr(out), stats) + a)
    return out


def softmax_cuda_06(x, out=None, **overrides):
    """Online softmax split over blocks: (m, d) per chunk, then merge and normalize; any length, 2 reads + 1 write."""
    out, rows, cols, dt = _prepare(x, out)
    if rows == 0 or cols == 0:
        return out
    return _online_split(x, out, rows, cols, dt, _vector_ok(x, out, cols, dt), _with(overrides))


# ---------------------------------------------------------------------------------------------------------------------
# Triton: the online softmax kernel of triton_kernels.py
# ---------------------------------------------------------------------------------------------------------------------
# The widest tile a program streams its row in (--set TRITON_MAX_BLOCK=2048 to try another): a row up to this long is
# one tile, read once from HBM, the second sweep from L1/L2. The interpreter caps it at 1024 (NumPy is slow on wide
# tiles).
TRITON = dict(TRITON_MAX_BLOCK=4096)


def _check_triton(v: dict) -> dict:
    b = v["TRITON_MAX_BLOCK"]
    if b < 16 or b > 16384 or b & (b - 1):
        raise ValueError(f"triton softmax_online_kernel: TRITON_MAX_BLOCK a power of two from 16 to 16384, got {b}")
    return v


def triton_config() -> config.Resolved:
    return config.resolve("triton softmax_online_kernel", TRITON, validate=_check_triton)


def triton_launch(cols: int, interpreter: bool = False) -> dict:
    """The Triton kernel's tile (BLOCK) and warps for rows of `cols` columns: the whole row up to TRITON_MAX_BLOCK,
    8 warps from 2048 elements on."""
    cap = triton_config()["TRITON_MAX_BLOCK"]
    block = min(triton.next_power_of_2(cols), min(cap, 1024) if interpreter else cap)
    return {"BLOCK": block, "num_warps": 8 if block >= 2048 else 4}


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
    meta = triton_launch(cols, INTERPRETER)
    block = block or meta["BLOCK"]
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
BEST = "cuda 05 registers, 16-byte loads"

_SHAPES32 = [(1, 1), (3, 1), (5, 2), (4, 31), (33, 127), (64, 1000), (9, 1024), (17, 1025), (33, 4096), (9, 4097),
             (5, 8191), (6, 16385), (3, 32768), (2, 32769), (1, 65537), (2, 262144), (1000, 33)]
CHECK_CASES = ([(s, "float32") for s in _SHAPES32]
               + [(s, dt) for dt in ("float16", "bfloat16")
                  for s in [(4, 7), (33, 127), (9, 4096), (5, 4097), (4, 32768), (2, 262144)]])
CPU_CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((4, 33), "float32"), ((5, 1000), "float32"),
                   ((4, 2500), "float32"), ((4, 129), "float16"), ((4, 65), "bfloat16")]
QUICK_CASES = 4                # --quick checks the first four


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's headline cases on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
TRITON_TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def bench_bytes(shape, dtype: str) -> int:
    """Bytes the benchmark holds at once for one case: the input, our output and a peer's output."""
    return 3 * arrays.ITEMSIZE[dtype] * shape[0] * shape[1]


def bench_cases(gpu: device.DeviceInfo, cases=None) -> tuple[list, list[str]]:
    """The benchmark's (shape, dtype) cases on `gpu` (default BENCH_CASES), rows halved where a case does not fit its
    memory (common.plan.fit), and a note for each case scaled down."""
    out, notes = [], []
    for shape, dt in cases or BENCH_CASES:
        shape, note = plan.fit(tuple(shape), lambda s, dt=dt: bench_bytes(s, dt), gpu,
                               shrink=lambda s: (max(1, s[0] // 2), s[1]), what=f"{dt} matrix")
        out.append((shape, dt))
        if note:
            notes.append(note)
    return out, notes


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Every kernel launch of the benchmark's headline cases on `gpu` (size: one (rows, cols) shape instead, fp32 and
    bf16), from the functions the wrappers launch with (plan_01 .. plan_06, triton_launch)."""
    cases = [(tuple(size), dt) for dt in ("float32", "bfloat16")] if size else BENCH_CASES
    cases, _ = bench_cases(gpu, cases)
    kc, tc = knob_config(gpu), triton_config()
    k, src = kc.values, kc.source()
    out = []
    for (rows, cols), dt in cases:
        case = f"{rows} x {cols} {dt}"
        cu = dict(impl="cuda", source=CU, defines=k, case=case, config_source=src)
        if dt == "float32":
            p = plan_01(rows, k)
            out += [plan.Launch("cuda 01 three kernels", name, grid=p["grid"], threads=p["block"], **cu)
                    for name in p["kernels"]]
            p = plan_02(rows, cols, smem_row_limit(gpu), k)
            out.append(plan.Launch("cuda 02 fused, block per row, smem", p["kernel"], grid=p["grid"],
                                   threads=p["block"], dyn_smem=p["smem"], **cu))
            p = plan_03(rows)
            out.append(plan.Launch("cuda 03 warp per row, shuffles", p["kernel"], grid=p["grid"], threads=p["block"],
                                   **cu))
            p = plan_04(rows, k)
            out.append(plan.Launch("cuda 04 online, block per row", p["kernel"], grid=p["grid"], threads=p["block"],
                                   **cu))
        vec = (cols * arrays.ITEMSIZE[dt]) % 16 == 0      # the benchmark's arrays start 16-byte aligned
        p = plan_05(rows, cols, dt, vec, cfg=k)
        p6 = plan_06(rows, cols, dt, vec, gpu, cfg=k)
        if p is not None:
            out.append(plan.Launch(BEST, p["kernel"], grid=p["grid"], threads=p["block"], **cu))
        else:                                              # too long for registers: rung 05 hands the row to 06
            out += [plan.Launch(BEST, name, grid=p6["grid"], threads=p6["block"], **cu)
                    for name in p6["kernels"]]
        out += [plan.Launch("cuda 06 online, split rows", name, grid=p6["grid"], threads=p6["block"],
                            **cu) for name in p6["kernels"]]
        t = triton_launch(cols)
        ty = "*" + TRITON_TYPES[dt]
        out.append(plan.Launch("triton online", "softmax_online_kernel", "triton", fn=softmax_online_kernel,
                               grid=rows, signature={"x_ptr": ty, "y_ptr": ty, "cols": "i32", "BLOCK": "constexpr"},
                               defines={"BLOCK": t["BLOCK"]}, num_warps=t["num_warps"], case=case,
                               config_source=tc.source()))
    return out
