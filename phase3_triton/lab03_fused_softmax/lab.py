"""Lab 3.3 - Fused softmax: read each row once, write it once.

You will learn
  * why softmax written as separate tensor operations (max, subtract, exp, sum, divide) is slow: each one reads and
    writes the whole matrix, ~8 passes over it instead of 2, while the arithmetic is almost free;
  * the fused kernel: one program per row (or per few short rows), the row loaded into registers once, max and sum
    reduced on chip, the result written once. The subtraction of the row maximum keeps exp() from overflowing
    (exp(89) is already inf in fp32) and is what the outliers in the inputs test;
  * what to do when a row does not fit in registers (here: more than 16384 columns, up to 262144 and beyond): the
    online softmax, one pass that keeps a running maximum m and a running sum s of exp(x - m), rescaling s by
    exp(m_old - m_new) whenever the maximum grows, then a second pass that writes exp(x - m) / s. Three passes over
    the row instead of two;
  * how -inf entries behave (masked positions, as in attention): they contribute exp(-inf) = 0. A row whose entries
    are ALL -inf has no defined softmax (0/0); these kernels return NaN for every element of such a row, as
    torch.softmax and the float64 reference do (attention kernels that want zeros there add a tl.where on the
    row maximum). The online kernel guards its rescaling so an all -inf chunk does not turn a normal row into NaN;
  * fp32 and 16-bit data (fp16, bf16: loaded, computed in fp32, stored back in 16 bits), so 16-bit rows move half
    the bytes and fit twice the columns per byte of register file.

The two numbers (main case: 32768 x 4096): bytes that must move = read + write of the matrix = 2 x 32768 x 4096 x 4 B =
1.07 GB in fp32 (0.54 GB in bf16); FLOPs ~ 5 per element (max, subtract, exp, sum, divide) = 0.67 GFLOP, i.e.
0.6 FLOP/B in fp32: far below the fp32 ridge point of any current GPU (`--plan` prints this GPU's), so memory wins,
and the best time is 1.07 GB over the measured HBM ceiling. The unfused torch sequence moves ~8 M N elements instead
of 2 M N: predicted ~4x slower than the fused kernel at the same bandwidth. torch.softmax and torch.compile also fuse;
the targets (>= 1.2x torch.compile in fp32, >= 2.0x in bf16) say how close to the HBM ceiling the single pass gets.
The lesson, the predictions and this GPU's measured figures: README.md.

Run: python -m phase3_triton.lab03_fused_softmax [--quick] [--no-bench] [--arch sm_80] [--replot] [--tune]
     [--plan [--gpu NAME]] [--set KERNEL=online] [--set WARPS=16]
"""
from __future__ import annotations

import functools

import numpy as np

from common import arrays, check, config, device, lab, plan, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import softmax_online_kernel, softmax_rows_kernel

LAB = "phase3_lab03_fused_softmax"
DTYPES = ("float32", "float16", "bfloat16")
MAX_FUSED = 16384        # longest row (in columns, rounded up to a power of two) kept in registers in one piece
ONLINE_BLOCK = 4096      # columns per step of the online kernel
MAX_GRID_X = 2**31 - 1


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis in float64. A row of all -inf gives NaN (0/0), like torch.softmax."""
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        m = x.max(axis=-1, keepdims=True)
        e = np.exp(x - m)
        return e / e.sum(axis=-1, keepdims=True)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """(rows, cols): normal values x 2, a few +80 outliers (exp overflows without the max subtraction) and some -inf
    entries (masked positions) in a quarter of the rows; never a whole row of -inf (tests cover that case)."""
    rows, cols = size
    x = rng.standard_normal((rows, cols)) * 2.0
    if x.size > 16:
        x.flat[rng.integers(0, x.size, 3)] = 80.0
    if cols >= 3:
        r = rng.integers(0, rows, max(1, rows // 4))
        c = rng.integers(1, cols, r.size)          # column 0 stays finite: no row becomes all -inf
        x[r, c] = -np.inf
    return (arrays.from_numpy(x, dtype, where),)


def tolerance(size, dtype: str) -> check.Tol:
    # fp32: exp via ex2.approx is within ~2 ulp after the max subtraction; the default fp32 tolerance holds.
    # fp16/bf16: the output rounding dominates (2^-11 / 2^-8 relative): the dtype defaults.
    return check.tolerance(dtype)


# ---------------------------------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------------------------------
def rows_config(cols: int) -> tuple[int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps) of the fused kernel by default: short rows are grouped so a program has >= 2048
    elements; warps grow with the tile so each thread holds 8-32 values (16 at 4096 columns: four 16-byte fp32
    loads). A GPU with a tuning record (--tune) uses the recorded winner at the tuned row length instead."""
    block_n = max(16, triton.next_power_of_2(cols))      # at least 16 columns: no degenerate [M, 1] tiles
    block_m = max(1, min(128, 2048 // block_n))
    elems = block_m * block_n
    warps = 4 if elems <= 2048 else 8 if elems <= 4096 else 16
    return block_m, block_n, warps


def _prepare(x, out):
    arrays.check_array("x", x, dtypes=DTYPES, ndim=None, device=not INTERPRETER)
    if x.ndim < 1:
        raise ValueError("x: expected at least 1 dimension (softmax runs over the last one), got a 0-D array")
    dt = arrays.dtype_name(x)
    out = arrays.check_out(out, tuple(x.shape), dt, x)
    cols = int(x.shape[-1])
    rows = arrays.size(x) // cols if cols else 0
    return out, rows, cols


# ---------------------------------------------------------------------------------------------------------------------
# The configuration softmax_triton uses for rows of a given length and dtype, from one place (common.config): the
# lab's default (the fused kernel with rows_config's tile; past MAX_FUSED columns the online kernel), then this GPU's
# tuning record, then --set. Its names: KERNEL (fused | online), ROWS (rows per program of the fused kernel), CHUNK
# (columns per step of the online kernel), WARPS.
#
# Tuning record: --tune (bench.tune) times both kernels' candidate configs at the target shape, per dtype, and
# records the winners in results/<gpu>/phase3_lab03_fused_softmax_tuned.json as {"<dtype> <cols>": config}, a config
# being {"kernel": "fused", "BLOCK_M": m, "num_warps": w} or {"kernel": "online", "BLOCK_N": n, "num_warps": w}.
# softmax_triton uses a winner for rows of the tuned length (rounded up to a power of two) and dtype.
# ---------------------------------------------------------------------------------------------------------------------
TUNED = LAB + "_tuned"


def check_config(cfg: dict) -> dict:
    """A valid config (normalized), or ValueError / KeyError / TypeError."""
    kind = cfg["kernel"]
    warps = int(cfg["num_warps"])
    if warps not in (1, 2, 4, 8, 16, 32):
        raise ValueError(f"num_warps must be a power of two up to 32, got {warps}")
    if kind == "fused":
        bm = int(cfg["BLOCK_M"])
        if bm < 1 or bm & (bm - 1):
            raise ValueError(f"BLOCK_M must be a power of two, got {bm}")
        return {"kernel": kind, "BLOCK_M": bm, "num_warps": warps}
    if kind == "online":
        bn = int(cfg["BLOCK_N"])
        if bn < 16 or bn & (bn - 1):
            raise ValueError(f"BLOCK_N must be a power of two >= 16, got {bn}")
        return {"kernel": kind, "BLOCK_N": bn, "num_warps": warps}
    raise ValueError(f"kernel must be 'fused' or 'online', got {kind!r}")


def _check_winners(w: dict) -> dict:
    return {str(k): check_config(v) for k, v in w.items()}


def tuned_config(cols: int, dtype: str, gpu: device.DeviceInfo | None = None) -> dict | None:
    """The recorded winner of `gpu` (default: this GPU) for rows of `cols` columns (power-of-two bucket) and `dtype`,
    or None."""
    winners, _ = tuned.record(TUNED, _check_winners, gpu=gpu)
    return (winners or {}).get(f"{dtype} {triton.next_power_of_2(max(cols, 1))}")


def tuned_source(gpu: device.DeviceInfo | None = None) -> str:
    return tuned.record(TUNED, _check_winners, gpu=gpu)[1]


def _named(cfg: dict | None) -> dict | None:
    """A record-style config ({"kernel", "BLOCK_M" | "BLOCK_N", "num_warps"}) under the names --set takes."""
    if cfg is None:
        return None
    out = {"KERNEL": cfg["kernel"], "WARPS": cfg["num_warps"]}
    out.update({"ROWS": cfg["BLOCK_M"]} if cfg["kernel"] == "fused" else {"CHUNK": cfg["BLOCK_N"]})
    return out


def _check_named(v: dict, fused_ok: bool, bucket: int) -> dict:
    try:
        check_config({"kernel": v["KERNEL"], "BLOCK_M": v["ROWS"], "BLOCK_N": v["CHUNK"], "num_warps": v["WARPS"]})
    except ValueError as e:
        raise ValueError(f"softmax ({config.fmt(v)}): {e}") from None
    if v["KERNEL"] == "fused" and not fused_ok:
        raise ValueError(f"KERNEL=fused: a row of {bucket} columns is longer than the fused kernel keeps in registers "
                         f"(MAX_FUSED = {MAX_FUSED}); only the online kernel takes it")
    return v


def softmax_config(cols: int, dtype: str, *, use_record: bool = True, max_fused: int | None = None,
                   gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The configuration softmax_triton uses for rows of `cols` columns of `dtype` on `gpu` (default: this GPU): the
    lab's default, this GPU's tuning record (use_record=False skips it), --set KERNEL=..., ROWS, CHUNK, WARPS."""
    limit = max_fused or MAX_FUSED
    bucket = triton.next_power_of_2(max(cols, 1))
    winner, source = None, ""
    if bucket <= limit:
        bm, _, nw = rows_config(cols)
        default = dict(KERNEL="fused", ROWS=bm, CHUNK=ONLINE_BLOCK, WARPS=nw)
        if use_record:
            winner, source = tuned_config(cols, dtype, gpu), tuned_source(gpu)
    else:
        chunk = min(ONLINE_BLOCK, triton.next_power_of_2(limit))
        default = dict(KERNEL="online", ROWS=1, CHUNK=chunk, WARPS=8 if chunk >= 2048 else 4)
    name = (tr("softmax_triton, rows of {n} ({dtype})", n=bucket, dtype=dtype) if use_record or bucket > limit else
            tr("softmax_triton, rows of {n} ({dtype}), no record", n=bucket, dtype=dtype))
    # a record names the kernel and its own settings; the other kernel's settings are moot, so the whole family is
    # the record's (it reads as one source)
    return config.resolve(name, default, tuned=dict(default, **_named(winner)) if winner else None,
                          tuned_source=source, validate=lambda v: _check_named(v, bucket <= limit, bucket))


def softmax_triton(x, out=None, *, max_fused: int | None = None, num_warps: int | None = None,
                   config: dict | None = None, use_record: bool = True):
    """Softmax over the last axis of a contiguous fp32/fp16/bf16 array (any number of leading dims), into `out`.

    Rows up to MAX_FUSED columns: the fused single-pass kernel, or the kernel and config this GPU's tuning record
    names for this row length and dtype (`config` overrides both; use_record=False ignores the record; --set
    overrides the record); longer rows: the online two-pass kernel.
    A row of all -inf gives NaN everywhere in that row (like torch.softmax). GPU: CuPy or torch CUDA arrays
    (bf16: torch); no GPU: NumPy or CPU torch arrays, run in the interpreter.
    """
    out, rows, cols = _prepare(x, out)
    if rows == 0 or cols == 0:
        return out
    kernel, grid, const, warps = launch_config(rows, cols, arrays.dtype_name(x), max_fused=max_fused, config=config,
                                               use_record=use_record)
    if kernel is softmax_online_kernel:
        return softmax_online(x, out=out, block_n=const["BLOCK_N"], num_warps=num_warps or warps)
    if grid > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows need {grid} programs, over the grid limit {MAX_GRID_X}")
    launch(softmax_rows_kernel, (grid,), x, out, rows, cols, cols, cols, **const, num_warps=num_warps or warps)
    return out


def launch_config(rows: int, cols: int, dtype: str, *, max_fused: int | None = None, config: dict | None = None,
                  use_record: bool = True, gpu: device.DeviceInfo | None = None):
    """(kernel, programs, constexprs, num_warps) softmax_triton launches for `rows` rows of `cols` columns (an explicit
    record-style `config` wins where the fused kernel could take the row)."""
    limit = max_fused or MAX_FUSED
    if config and triton.next_power_of_2(cols) <= limit:
        cfg = _named(check_config(config))
    else:
        cfg = softmax_config(cols, dtype, use_record=use_record, max_fused=max_fused, gpu=gpu).values
    if cfg["KERNEL"] == "online":
        return softmax_online_kernel, rows, {"BLOCK_N": cfg["CHUNK"]}, cfg["WARPS"]
    _, bn, _ = rows_config(cols)
    return softmax_rows_kernel, triton.cdiv(rows, cfg["ROWS"]), {"BLOCK_M": cfg["ROWS"], "BLOCK_N": bn}, cfg["WARPS"]


def softmax_online(x, out=None, *, block_n: int = ONLINE_BLOCK, num_warps: int | None = None):
    """The online (two-pass, chunked) kernel for any row length; block_n = columns per chunk (a power of two)."""
    out, rows, cols = _prepare(x, out)
    if rows == 0 or cols == 0:
        return out
    if block_n < 1 or block_n & (block_n - 1):
        raise ValueError(f"block_n: expected a power of two, got {block_n}")
    if rows > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows exceed the grid limit {MAX_GRID_X}")
    launch(softmax_online_kernel, (rows,), x, out, cols, cols, cols, BLOCK_N=block_n,
           num_warps=num_warps or online_warps(block_n))
    return out


def forced_online_chunk(cols: int) -> int:
    """The online-forced variant's chunk: a quarter of the row (rounded up to a power of two), so short rows also take
    several steps; at most ONLINE_BLOCK."""
    return min(ONLINE_BLOCK, max(16, triton.next_power_of_2(cols) // 4))


def online_warps(block_n: int) -> int:
    """softmax_online's warps when none are given: 8 for chunks of 2048 columns and more, else 4."""
    return 8 if block_n >= 2048 else 4


def softmax_triton_online(x, out=None):
    """The online kernel forced on every row length (with small chunks, so short rows also take several steps)."""
    cols = int(x.shape[-1]) if getattr(x, "ndim", 0) else 1
    return softmax_online(x, out=out, block_n=forced_online_chunk(cols))


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def torch_softmax(x):
    import torch

    return torch.softmax(_torch_view(x), dim=-1)


def torch_unfused(x):
    """What a learner writes first: five tensor operations, each a full pass over the matrix in memory."""
    t = _torch_view(x)
    row_max = t.amax(dim=-1, keepdim=True)     # read M N, write M
    shifted = t - row_max                      # read M N (+ M), write M N
    e = shifted.exp()                          # read M N, write M N
    total = e.sum(dim=-1, keepdim=True)        # read M N, write M
    return e / total                           # read M N (+ M), write M N   => ~8 M N elements moved


UNFUSED_PASSES = 8   # elements moved per matrix element by torch_unfused (5 reads + 3 writes), vs 2 when fused


@functools.lru_cache(maxsize=None)
def compiled_softmax():
    """One torch.compile'd softmax (dynamic=False: compiled once per shape and dtype; used only at target shapes)."""
    import torch

    return torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)


def _into(fn):
    def peer(x, out=None):
        out = arrays.check_out(out, tuple(x.shape), arrays.dtype_name(x), x)
        _torch_view(out).copy_(fn(x))
        return out

    peer.__name__ = f"peer_{fn.__name__}"
    return peer


def softmax_triton_fused(x, out=None):
    """The fused kernel whatever the tuning record says (online past MAX_FUSED columns)."""
    return softmax_triton(x, out=out, use_record=False)


VARIANTS = [
    lab.Variant("triton fused (row in registers; online past 16384 cols)", softmax_triton_fused, "triton",
                dtypes=DTYPES),
    lab.Variant("triton online (chunked, 2 passes)", softmax_triton_online, "triton", dtypes=DTYPES),
]
PEERS = [
    lab.Variant("torch.softmax", _into(torch_softmax), "peer", dtypes=DTYPES),
    lab.Variant("torch unfused ops", _into(torch_unfused), "peer", dtypes=("float32",),
                note="fp32 only: in 16 bits each intermediate is rounded"),
]
CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((7, 1000), "float32"), ((33, 4097), "float32"),
               ((200, 128), "float32"), ((3, 20000), "float32"), ((2, 262144), "float32"), ((17, 1000), "float16"),
               ((9, 4096), "bfloat16"), ((5, 50000), "bfloat16")]
CPU_CHECK_CASES = [((1, 1), "float32"), ((3, 5), "float32"), ((7, 1000), "float16"), ((3, 2100), "bfloat16"),
                   ((40, 33), "float32"), ((2, 20000), "float32")]
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's cases on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_SHAPE = (32768, 4096)                 # the benchmark's target shape, fp32 and bf16
BENCH_DTYPES = ("float32", "bfloat16")
LONGEST_SWEEP_ROW = 262144                   # the row-length sweep's longest row (fp32; 2^26 elements in all)
_TY = {"float32": "*fp32", "float16": "*fp16", "bfloat16": "*bf16"}


def rows_signature(dtype: str) -> dict:
    ty = _TY[dtype]
    return {"x_ptr": ty, "y_ptr": ty, "n_rows": "i32", "n_cols": "i32", "x_row_stride": "i32", "y_row_stride": "i32",
            "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


def online_signature(dtype: str) -> dict:
    ty = _TY[dtype]
    return {"x_ptr": ty, "y_ptr": ty, "n_cols": "i32", "x_row_stride": "i32", "y_row_stride": "i32",
            "BLOCK_N": "constexpr"}


def bench_bytes(shape, dtype: str = "float32") -> int:
    """Bytes the benchmark holds at once: x, the kernel's output, and up to four more matrices of the torch peers
    (the unfused sequence's intermediates)."""
    return 6 * shape[0] * shape[1] * arrays.ITEMSIZE[dtype]


def fit_shape(shape, dtype: str, gpu: device.DeviceInfo):
    """(shape, note): a benchmark shape with its rows halved until it fits the GPU's memory (common.plan.fit)."""
    return plan.fit(tuple(shape), lambda s: bench_bytes(s, dtype), gpu, shrink=lambda s: (max(1, s[0] // 2), s[1]),
                    what=f"{dtype} softmax shape")


def _launch(variant: str, dtype: str, case: str, kernel, grid, const: dict, warps: int, source: str) -> plan.Launch:
    fused = kernel is softmax_rows_kernel
    return plan.Launch(variant, "softmax_rows_kernel" if fused else "softmax_online_kernel", "triton", fn=kernel,
                       grid=grid, signature=rows_signature(dtype) if fused else online_signature(dtype),
                       defines=const, num_warps=warps, case=case, config_source=source)


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Each variant at the target shape (fp32 and bf16), the benchmark's softmax_triton there (this GPU's tuning
    record), and the sweep's extremes: the widest row kept in registers and the longest row (the online kernel)."""
    out = []
    fused, online = VARIANTS[0].name, VARIANTS[1].name
    for dtype in BENCH_DTYPES:
        (rows, cols), _ = fit_shape(size or TARGET_SHAPE, dtype, gpu)
        case = f"{rows} x {cols} {dtype}"
        for variant, use_record in ((fused, False), ("", True)):
            res = softmax_config(cols, dtype, use_record=use_record, gpu=gpu)
            k, grid, const, warps = launch_config(rows, cols, dtype, use_record=use_record, gpu=gpu)
            what = case if variant else tr("{case}: softmax_triton with this GPU's record (the benchmark's 'tuned')",
                                           case=case)
            out.append(_launch(variant, dtype, what, k, grid, const, warps, res.source()))
        chunk = forced_online_chunk(cols)
        out.append(_launch(online, dtype, case, softmax_online_kernel, rows, {"BLOCK_N": chunk}, online_warps(chunk),
                           "fixed (a quarter row a step)"))
    if size is None:
        for cols in (MAX_FUSED, LONGEST_SWEEP_ROW):      # the sweep's widest fused tile, and its longest row
            rows = 2**26 // cols
            res = softmax_config(cols, "float32", use_record=False, gpu=gpu)
            k, grid, const, warps = launch_config(rows, cols, "float32", use_record=False, gpu=gpu)
            out.append(_launch(fused, "float32", tr("{rows} x {cols} float32 (the row-length sweep)", rows=rows,
                                                    cols=cols), k, grid, const, warps, res.source()))
    return out
