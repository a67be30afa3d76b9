"""Lab 3.4 - LayerNorm forward and backward: row statistics, saved for later, and a two-level column reduction.

You will learn
  * the forward pass as a fused row kernel: mean and variance from one read of the row (the centred form
    sum((x - mean)^2), which stays accurate when the mean is large; the inputs here have mean 3), then
    y = (x - mean) * rstd * w + b, with mean and rstd = 1/sqrt(var + eps) saved per row for the backward;
  * the backward pass, two reductions in different directions:
      dx = rstd * (w dy - mean_row(w dy) - xhat * mean_row(w dy xhat))     a reduction along each row (like softmax),
      dw = sum_rows(dy xhat), db = sum_rows(dy)                             a reduction down each column;
    the column sums are done in two levels without atomics or locks: G programs each walk a strided set of rows,
    keep their own partial dw/db in registers and write one row of a (G x N) buffer; a second small kernel sums the
    G partial rows. Deterministic, and x and dy are read once for dx, dw and db together;
  * checking a backward pass: against the float64 reference formulas, against torch.autograd, and (in the tests) with
    torch.autograd.gradcheck's finite differences through a torch.autograd.Function that wraps these kernels
    (the kernels also take float64, for exactly that);
  * a forward that trades registers for a second read of the row: running (mean, M2) per vector lane over column
    chunks (Welford), merged once per row (Chan), on x - x[row, 0] so a large mean costs no accuracy; then the row
    re-read from L1 to normalize. Few registers a thread, many warps per SM: the occupancy side of Little's law;
  * tuning by measurement: rows per program and warps for the forward, programs and warps for the backward, picked
    by timing a few candidates at the benchmark shape (what triton.autotune does, done in the open).

The two numbers (main case: 32768 x 4096, N = 4096): forward bytes = read x + write y = 2 x M N x elt (+ w, b, and
8 B of mean/rstd per row) = 1.07 GB in fp32, 0.54 GB in bf16; FLOPs ~ 8 M N = 1.1 GFLOP (~1 FLOP/B): memory wins
(far below the fp32 ridge point of any current GPU; `--plan` prints this GPU's), the floor is the bytes over the
measured HBM ceiling. Backward bytes = read x, dy + write dx = 3 M N x elt (+ the partial buffer, 2 x G x N x 4 B
written and read once, a few percent at G = a few programs per SM) = 1.61 GB in fp32; FLOPs ~ 12 M N: memory-bound as
well. A backward that computes dw/db in a separate pass over x and dy (what eager PyTorch does) moves 5 M N elements
instead of 3: the fused one should be up to ~1.6x faster at equal bandwidth. Targets: forward >= 1.0x torch.compile
(fp32) and >= 1.3x (bf16); backward >= 1.0x torch.compile. The lesson, the predictions and this GPU's measured
figures: README.md.

Run: python -m phase3_triton.lab04_layernorm [--quick] [--no-bench] [--arch sm_80] [--replot] [--tune]
     [--plan [--gpu NAME]] [--set FWD_FORM=welford] [--set BWD_PER_SM=2]
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from common import arrays, check, config, device, lab, plan, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .backward import DWDB as DWDB, DWDB_INTERPRETER as DWDB_INTERPRETER, bwd_default, dwdb_config, dwdb_launch
from .triton_kernels import (layernorm_bwd_kernel, layernorm_dwdb_kernel, layernorm_fwd_kernel,
                             layernorm_fwd_welford_kernel)

LAB = "phase3_lab04_layernorm"
DTYPES = ("float32", "bfloat16", "float16", "float64")
EPS = 1e-5
FWD_MAX_SINGLE = 16384     # longest row (rounded up to a power of two) the forward keeps in registers in one piece
BWD_MAX_SINGLE = 8192      # same for the backward, which holds x, dy, w and two accumulators per element
LOOP_BLOCK = 4096          # columns per step when a row is longer
MAX_LOOP_BLOCK = LOOP_BLOCK  # the largest chunk a config may ask for
MAX_GRID_X = 2**31 - 1


def acc_dtype(dtype: str) -> str:
    """Accumulation (and mean/rstd) dtype: fp32, or fp64 for fp64 inputs."""
    return "float64" if dtype == "float64" else "float32"


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(x, w, b, dy, eps: float = EPS):
    """Forward (y, mean, rstd) and backward (dx, dw, db) in float64, over the last axis."""
    x, w, b, dy = (np.asarray(a, np.float64) for a in (x, w, b, dy))
    n = x.shape[-1]
    x2, dy2 = x.reshape(-1, n), dy.reshape(-1, n)
    mean = x2.mean(axis=1)
    xc = x2 - mean[:, None]
    var = (xc * xc).mean(axis=1)
    rstd = 1.0 / np.sqrt(var + eps)
    xhat = xc * rstd[:, None]
    y = xhat * w + b
    wdy = w * dy2
    c1 = (xhat * wdy).mean(axis=1)
    c2 = wdy.mean(axis=1)
    dx = rstd[:, None] * (wdy - xhat * c1[:, None] - c2[:, None])
    dw = (dy2 * xhat).sum(axis=0)
    db = dy2.sum(axis=0)
    lead = x.shape[:-1]
    return y.reshape(x.shape), mean.reshape(lead), rstd.reshape(lead), dx.reshape(x.shape), dw, db


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """x (rows, cols) with mean 3 and a few outliers, weight ~ 1 +- 0.2, bias, and an upstream gradient dy."""
    rows, cols = size
    x = 3.0 + 2.0 * rng.standard_normal((rows, cols))
    if x.size > 16:
        x.flat[rng.integers(0, x.size, 3)] = 40.0
    w = 1.0 + 0.2 * rng.standard_normal(cols)
    b = 0.5 * rng.standard_normal(cols)
    dy = rng.standard_normal((rows, cols))
    return tuple(arrays.from_numpy(a, dtype, where) for a in (x, w, b, dy))


def out_dtype(dtype: str):
    acc = acc_dtype(dtype)
    return (dtype, acc, acc, dtype, dtype, dtype)


def tolerance(size, dtype: str) -> check.Tol:
    # fp32: rows and columns are reduced in fp32 (dw, db over up to ~10^3 rows here: ~1e-7 sqrt(rows)): the default
    # holds. 16-bit: outputs are rounded to 16 bits (mean/rstd stay fp32): the dtype's default.
    # One column: the variance is 0, so rstd = 1/sqrt(eps) ~ 316 multiplies fp32 rounding of terms that cancel
    # exactly in exact arithmetic (dx, dw are 0 there); the README has the error a GPU run showed where the reference
    # has 0.
    # Two columns: xhat = +-sqrt(var / (var + eps)) ~ +-1, so dx = rstd (1 - xhat^2) (w dy0 - w dy1) / 2 is a
    # difference of nearly equal terms, ill-conditioned when the two values are close (rstd large): tests/
    # test_properties.py drew (6, 2) (1.7e-6 absolute where the reference is ~1e-7) and (19, 2) (rel err 3.6e-5).
    t = check.tolerance(dtype)
    if size[1] == 2:
        return check.Tol(max(t.rel_norm, 1e-3), t.elem, atol=1e-4 if dtype != "float64" else 1e-10)
    if size[1] == 1:
        return check.Tol(t.rel_norm, t.elem, atol=1e-4 if dtype != "float64" else 1e-10)
    return t


# ---------------------------------------------------------------------------------------------------------------------
# Launch configurations
# ---------------------------------------------------------------------------------------------------------------------
def fwd_default(cols: int) -> dict:
    """Rows per program and warps for the forward: ~16 values per thread, at least ~2048 elements per program.
    A GPU with a tuning record (--tune) uses the recorded winner at the tuned row length instead."""
    bn = triton.next_power_of_2(max(cols, 1))
    if bn > FWD_MAX_SINGLE:
        return {"BLOCK_M": 1, "num_warps": 8}
    bm = max(1, min(32, 2048 // bn))
    elems = bm * bn
    return {"BLOCK_M": bm, "num_warps": 4 if elems <= 2048 else 8 if elems <= 4096 else 16}


# The backward's defaults (bwd_default) and its second level's configuration and launch (dwdb_config, dwdb_launch):
# backward.py.
# Tuning record: --tune (bench.tune) times the candidates at the target shape and records the winners in
# results/<gpu>/phase3_lab04_layernorm_tuned.json as {"fwd float32 4096": config, "bwd ...": config, ...}. A forward
# config is {"BLOCK_M": m, "num_warps": w} (rows in registers; with "PERSIST": p, p persistent programs per SM that
# prefetch their next row), {"SINGLE": False, "BLOCK_N": n, "num_warps": w} (the chunked three-pass loop, n columns
# a step) or {"WELFORD": True, "BLOCK_N": n, "num_warps": w} (layernorm_fwd_welford_kernel: Welford statistics in one
# chunk loop, then a re-read of the row); a backward config {"programs_per_sm": g, "num_warps": w}. The wrappers
# use a winner for rows of the tuned length (rounded up to a power of two) and dtype.
TUNED = LAB + "_tuned"


def check_config(kind: str, cfg: dict) -> dict:
    """A valid forward / backward config (normalized), or ValueError / KeyError / TypeError."""
    def pow2(name, v, lo=1):
        v = int(v)
        if v < lo or v & (v - 1):
            raise ValueError(f"{name} must be a power of two >= {lo}, got {v}")
        return v

    out = {"num_warps": pow2("num_warps", cfg["num_warps"])}
    if kind == "bwd":
        out["programs_per_sm"] = int(cfg["programs_per_sm"])
        if not 1 <= out["programs_per_sm"] <= 64:
            raise ValueError(f"programs_per_sm must be 1..64, got {out['programs_per_sm']}")
        return out
    if kind != "fwd":
        raise ValueError(f"kind must be 'fwd' or 'bwd', got {kind!r}")
    if cfg.get("WELFORD"):
        extra = sorted(set(cfg) & {"SINGLE", "BLOCK_M", "PERSIST"})
        if extra:
            raise ValueError(f"{', '.join(extra)}: not used by a WELFORD config (one row a program, a chunk loop)")
        out.update(WELFORD=True, BLOCK_N=pow2("BLOCK_N", cfg["BLOCK_N"], 16))
        if out["BLOCK_N"] > MAX_LOOP_BLOCK:
            raise ValueError(f"BLOCK_N must be at most {MAX_LOOP_BLOCK}, got {out['BLOCK_N']}")
        return out
    if cfg.get("SINGLE", True):
        out["BLOCK_M"] = pow2("BLOCK_M", cfg["BLOCK_M"])
        if cfg.get("PERSIST"):
            out["PERSIST"] = pow2("PERSIST (programs per SM)", cfg["PERSIST"])
            if out["BLOCK_M"] != 1 or out["PERSIST"] > 64:
                raise ValueError("PERSIST: one row per program (BLOCK_M 1) and at most 64 programs per SM")
    else:
        out.update(SINGLE=False, BLOCK_N=pow2("BLOCK_N", cfg["BLOCK_N"], 16))
        if out["BLOCK_N"] > MAX_LOOP_BLOCK:
            raise ValueError(f"BLOCK_N must be at most {MAX_LOOP_BLOCK}, got {out['BLOCK_N']}")
    return out


def _check_winners(w: dict) -> dict:
    return {str(k): check_config(str(k).split()[0], v) for k, v in w.items()}


def tuned_config(kind: str, cols: int, dtype: str, gpu: device.DeviceInfo | None = None) -> dict | None:
    """The recorded winner of `gpu` (default: this GPU) for `kind` at rows of `cols` columns (power-of-two bucket) and
    `dtype`, or None."""
    winners, _ = tuned.record(TUNED, _check_winners, gpu=gpu)
    return (winners or {}).get(f"{kind} {dtype} {triton.next_power_of_2(max(cols, 1))}")


def tuned_source(gpu: device.DeviceInfo | None = None) -> str:
    return tuned.record(TUNED, _check_winners, gpu=gpu)[1]


def _sms() -> int:
    return device.info().sms if device.has_gpu() else 4


# ---------------------------------------------------------------------------------------------------------------------
# The configuration each kernel uses, from one place (common.config): the lab's default (fwd_default, bwd_default),
# this GPU's tuning record, then --set. The forward's names: FWD_FORM (rows: FWD_ROWS rows in registers a program;
# persistent: FWD_PERSIST programs per SM, one row at a time, the next one prefetched; chunked: the three-pass loop,
# FWD_CHUNK columns a step; welford: the two-pass Welford kernel, FWD_CHUNK columns a step) and FWD_WARPS; the
# backward's: BWD_PER_SM (programs per SM, so G = BWD_PER_SM x SMs) and BWD_WARPS; the second level's: DWDB_BLOCK_C
# (columns a program) and DWDB_BLOCK_P (partial rows a step).
# ---------------------------------------------------------------------------------------------------------------------
FWD_FORMS = ("rows", "persistent", "chunked", "welford")
FWD_BASE = dict(FWD_FORM="rows", FWD_ROWS=1, FWD_PERSIST=2, FWD_CHUNK=LOOP_BLOCK, FWD_WARPS=4)


def _fwd_named(cfg: dict, base: dict = FWD_BASE) -> dict:
    """A forward config (check_config's form) under the names --set takes; names it does not use keep `base`'s."""
    out = dict(base, FWD_WARPS=cfg["num_warps"])
    if cfg.get("WELFORD"):
        out.update(FWD_FORM="welford", FWD_CHUNK=cfg["BLOCK_N"])
    elif not cfg.get("SINGLE", True):
        out.update(FWD_FORM="chunked", FWD_CHUNK=cfg["BLOCK_N"])
    elif cfg.get("PERSIST"):
        out.update(FWD_FORM="persistent", FWD_ROWS=cfg.get("BLOCK_M", 1), FWD_PERSIST=cfg["PERSIST"])
    else:
        out.update(FWD_FORM="rows", FWD_ROWS=cfg["BLOCK_M"])
    return out


def _fwd_dict(v: dict) -> dict:
    """The named forward config back in check_config's form (validated)."""
    form = v["FWD_FORM"]
    cfg = {"rows": {"BLOCK_M": v["FWD_ROWS"]}, "persistent": {"BLOCK_M": 1, "PERSIST": v["FWD_PERSIST"]},
           "chunked": {"SINGLE": False, "BLOCK_N": v["FWD_CHUNK"]},
           "welford": {"WELFORD": True, "BLOCK_N": v["FWD_CHUNK"]}}.get(form)
    if cfg is None:
        raise ValueError(f"FWD_FORM: expected one of {', '.join(FWD_FORMS)}, got {form!r}")
    try:
        return check_config("fwd", dict(cfg, num_warps=v["FWD_WARPS"]))
    except ValueError as e:
        raise ValueError(f"layernorm forward ({config.fmt(v)}): {e}") from None


def fwd_config(n: int, dtype: str, gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The forward's configuration for rows of n columns of `dtype` on `gpu` (default: this GPU)."""
    default = _fwd_named(fwd_default(n), dict(FWD_BASE, FWD_ROWS=fwd_default(n)["BLOCK_M"]))
    winner = tuned_config("fwd", n, dtype, gpu)
    return config.resolve(tr("layernorm forward, rows of {n} ({dtype})", n=triton.next_power_of_2(max(n, 1)),
                             dtype=dtype), default,
                          tuned=_fwd_named(winner, default) if winner else None, tuned_source=tuned_source(gpu),
                          validate=lambda v: _fwd_dict(v) and v)


def bwd_config(n: int, dtype: str, gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The backward's configuration for rows of n columns of `dtype` on `gpu` (default: this GPU)."""
    d = bwd_default(n)
    winner = tuned_config("bwd", n, dtype, gpu)
    return config.resolve(tr("layernorm backward, rows of {n} ({dtype})", n=triton.next_power_of_2(max(n, 1)),
                             dtype=dtype),
                          {"BWD_PER_SM": d["programs_per_sm"], "BWD_WARPS": d["num_warps"]},
                          tuned={"BWD_PER_SM": winner["programs_per_sm"], "BWD_WARPS": winner["num_warps"]}
                          if winner else None, tuned_source=tuned_source(gpu), validate=_check_bwd_named)


def _check_bwd_named(v: dict) -> dict:
    try:
        check_config("bwd", {"programs_per_sm": v["BWD_PER_SM"], "num_warps": v["BWD_WARPS"]})
    except ValueError as e:
        raise ValueError(f"layernorm backward ({config.fmt(v)}): {e}") from None
    return v


def fwd_launch(rows: int, n: int, cfg: dict, sms: int):
    """(kernel, programs, constexprs, num_warps) of the forward for `rows` rows of n columns with config `cfg`
    (check_config's form) on a GPU of `sms` SMs: what layernorm_fwd launches."""
    bn = triton.next_power_of_2(n)
    if cfg.get("WELFORD"):
        chunk = min(cfg["BLOCK_N"], max(16, bn))        # no wider than the row (rounded up to a power of two)
        return layernorm_fwd_welford_kernel, rows, {"BLOCK_N": chunk, "EVEN_N": n % chunk == 0}, cfg["num_warps"]
    single = bn <= FWD_MAX_SINGLE and cfg.get("SINGLE", True)
    persist = single and int(cfg.get("PERSIST", 0))
    bm = cfg.get("BLOCK_M", 1) if single else 1
    programs = min(rows, persist * sms) if persist else triton.cdiv(rows, bm)
    const = {"BLOCK_M": bm, "BLOCK_N": bn if single else min(cfg.get("BLOCK_N", LOOP_BLOCK), LOOP_BLOCK),
             "SINGLE": single, "PERSIST": bool(persist)}
    return layernorm_fwd_kernel, programs, const, cfg["num_warps"]


def bwd_launch(rows: int, n: int, cfg: dict, sms: int):
    """(programs G, constexprs, num_warps) of layernorm_bwd_kernel: G = programs_per_sm x SMs, at most one per row."""
    bn = triton.next_power_of_2(n)
    single = bn <= BWD_MAX_SINGLE
    g = max(1, min(rows, cfg["programs_per_sm"] * sms))
    return g, {"BLOCK_N": bn if single else LOOP_BLOCK, "SINGLE": single}, cfg["num_warps"]


# ---------------------------------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _check_params(x, weight, bias, normalized_shape, dev):
    dt, n = arrays.check_rows("x", x, dtypes=DTYPES, device=dev)
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        arrays.check_array(name, p, dtypes=DTYPES, ndim=None, device=dev)
        if arrays.dtype_name(p) != dt:
            raise TypeError(f"{name}: dtype {arrays.dtype_name(p)} does not match x's {dt}")
        if p.ndim != 1:
            raise ValueError(f"{name}: expected a 1-D array (the normalized shape), got shape {tuple(p.shape)}; only "
                             "normalization over the last dimension is supported")
        if int(p.shape[0]) != n:
            raise ValueError(f"{name}: normalized shape {tuple(p.shape)} does not match x.shape[-1] = {n} "
                             f"(x has shape {tuple(x.shape)})")
        if arrays.library(p) != arrays.library(x):
            raise TypeError(f"{name}: expected a {arrays.library(x)} array like x, got {arrays.library(p)}")
    if normalized_shape is not None:
        ns = (int(normalized_shape),) if np.isscalar(normalized_shape) else tuple(int(s) for s in normalized_shape)
        if len(ns) != 1:
            raise ValueError(f"normalized_shape: only the last dimension can be normalized here, got {ns}")
        if ns != tuple(weight.shape):
            raise ValueError(f"normalized_shape {ns} does not match weight's shape {tuple(weight.shape)}")
        if ns[0] != n:
            raise ValueError(f"normalized_shape {ns} does not match x.shape[-1] = {n}")
    return dt, n


def _outs(out, names, shapes, dtypes, like):
    if out is None:
        out = (None,) * len(names)
    if not isinstance(out, (tuple, list)) or len(out) != len(names):
        raise TypeError(f"out: expected a tuple ({', '.join(names)}) or None")
    return tuple(arrays.check_out(o, s, d, like, name=f"out[{i}] ({nm})")
                 for i, (o, nm, s, d) in enumerate(zip(out, names, shapes, dtypes)))


def layernorm_fwd(x, weight, bias, eps: float = EPS, out=None, *, normalized_shape=None, config: dict | None = None):
    """y = (x - mean) / sqrt(var + eps) * weight + bias over the last axis; returns (y, mean, rstd).

    x: contiguous fp32 / bf16 / fp16 / fp64 (any leading dims); weight, bias: (N,) of the same dtype. mean and rstd
    have x's leading shape and the accumulation dtype (fp32; fp64 for fp64). GPU: CuPy or torch CUDA (bf16: torch);
    no GPU: NumPy or CPU torch, run in the interpreter.
    """
    dev = not INTERPRETER
    if weight is None or bias is None:
        raise TypeError("weight, bias: both are required (this kernel always applies the affine transform)")
    dt, n = _check_params(x, weight, bias, normalized_shape, dev)
    if not (eps > 0):
        raise ValueError(f"eps: expected a positive number, got {eps!r}")
    lead = tuple(x.shape[:-1])
    acc = acc_dtype(dt)
    y, mean, rstd = _outs(out, ("y", "mean", "rstd"), (tuple(x.shape), lead, lead), (dt, acc, acc), x)
    rows = arrays.size(x) // n
    if rows == 0:
        return y, mean, rstd
    cfg = check_config("fwd", config) if config else _fwd_dict(fwd_config(n, dt).values)
    kernel, programs, const, warps = fwd_launch(rows, n, cfg, _sms())
    if programs > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows need {programs} programs, over the grid limit {MAX_GRID_X}")
    if kernel is layernorm_fwd_welford_kernel:
        launch(kernel, (programs,), x, weight, bias, y, mean, rstd, n, n, n, float(eps), **const, num_warps=warps)
    else:
        launch(kernel, (programs,), x, weight, bias, y, mean, rstd, rows, n, n, n, float(eps), **const,
               num_warps=warps)
    return y, mean, rstd


def layernorm_bwd(dy, x, weight, mean, rstd, out=None, *, config: dict | None = None):
    """Gradients of layernorm_fwd: returns (dx, dw, db) given the upstream dy and the saved mean and rstd."""
    dev = not INTERPRETER
    dt, n = _check_params(x, weight, None, None, dev)
    arrays.check_array("dy", dy, dtypes=(dt,), ndim=None, device=dev)
    arrays.check_same("x, dy", x, dy)
    acc = acc_dtype(dt)
    lead = tuple(x.shape[:-1])
    for name, s in (("mean", mean), ("rstd", rstd)):
        arrays.check_array(name, s, dtypes=(acc,), ndim=None, device=dev)
        if tuple(s.shape) != lead:
            raise ValueError(f"{name}: expected shape {lead} (x's leading dims), got {tuple(s.shape)}")
    dx, dw, db = _outs(out, ("dx", "dw", "db"), (tuple(x.shape), (n,), (n,)), (dt, dt, dt), x)
    rows = arrays.size(x) // n
    if rows == 0:
        arrays.fill(dw, 0.0)
        arrays.fill(db, 0.0)
        return dx, dw, db
    if config:
        cfg = check_config("bwd", config)
    else:
        v = bwd_config(n, dt).values
        cfg = {"programs_per_sm": v["BWD_PER_SM"], "num_warps": v["BWD_WARPS"]}
    g, const, warps = bwd_launch(rows, n, cfg, _sms())
    dw_part = arrays.empty((g, n), acc, x)
    db_part = arrays.empty((g, n), acc, x)
    launch(layernorm_bwd_kernel, (g,), x, weight, dy, mean, rstd, dx, dw_part, db_part, rows, n, n, n, n, **const,
           num_warps=warps)
    programs, const, warps = dwdb_launch(n, dwdb_config().values)
    launch(layernorm_dwdb_kernel, (programs,), dw_part, db_part, dw, db, g, n, **const, num_warps=warps)
    return dx, dw, db


def layernorm_triton(x, w, b, dy, out=None, *, fwd_config: dict | None = None):
    """The lab's checked unit: forward, then backward from the saved statistics -> (y, mean, rstd, dx, dw, db)."""
    out = (None,) * 6 if out is None else tuple(out)
    if len(out) != 6:
        raise TypeError("out: expected a 6-tuple (y, mean, rstd, dx, dw, db) or None")
    y, mean, rstd = layernorm_fwd(x, w, b, EPS, out=out[:3], config=fwd_config)
    dx, dw, db = layernorm_bwd(dy, x, w, mean, rstd, out=out[3:])
    return y, mean, rstd, dx, dw, db


@contextlib.contextmanager
def long_rows_forced(n: int):
    """Within: the long-row (looped) paths taken at every row length, in ~4 chunks per row of n columns."""
    global FWD_MAX_SINGLE, BWD_MAX_SINGLE, LOOP_BLOCK
    saved = FWD_MAX_SINGLE, BWD_MAX_SINGLE, LOOP_BLOCK
    FWD_MAX_SINGLE = BWD_MAX_SINGLE = 0
    LOOP_BLOCK = min(saved[2], max(16, triton.next_power_of_2(n) // 4))
    try:
        yield
    finally:
        FWD_MAX_SINGLE, BWD_MAX_SINGLE, LOOP_BLOCK = saved


def layernorm_triton_looped(x, w, b, dy, out=None):
    """The same with the long-row (looped) paths forced on every row length, in ~4 chunks per row."""
    with long_rows_forced(int(x.shape[-1]) if x.ndim else 1):
        return layernorm_triton(x, w, b, dy, out=out)


def welford_forced_config(n: int) -> dict:
    """The Welford variant's forward: ~4 chunks per row of n columns (the last one ragged unless the width is a
    multiple of the chunk), 4 warps."""
    return {"WELFORD": True, "BLOCK_N": min(MAX_LOOP_BLOCK, max(16, triton.next_power_of_2(n) // 4)), "num_warps": 4}


def layernorm_triton_welford(x, w, b, dy, out=None):
    """The same with the forward by layernorm_fwd_welford_kernel, in ~4 chunks per row, whatever this GPU's tuning
    record says."""
    n = int(x.shape[-1]) if x.ndim else 1
    return layernorm_triton(x, w, b, dy, out=out, fwd_config=welford_forced_config(n))


# ---------------------------------------------------------------------------------------------------------------------
# torch.autograd: the kernels as a differentiable function (torch tensors: CUDA on a GPU, CPU in the interpreter)
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _function_class():
    import torch

    class LayerNormFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, eps):
            x, weight, bias = (t.detach().contiguous() for t in (x, weight, bias))
            y, mean, rstd = layernorm_fwd(x, weight, bias, eps)
            ctx.save_for_backward(x, weight, mean, rstd)
            return y

        @staticmethod
        def backward(ctx, dy):
            x, weight, mean, rstd = ctx.saved_tensors
            dx, dw, db = layernorm_bwd(dy.detach().contiguous(), x, weight, mean, rstd)
            return dx, dw, db, None

    return LayerNormFunction


def layernorm(x, weight, bias, eps: float = EPS):
    """Differentiable layer norm on torch tensors, forward and backward by the Triton kernels."""
    return _function_class().apply(x, weight, bias, eps)


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def peer_torch_native(x, w, b, dy, out=None):
    """torch's own kernels: aten.native_layer_norm and aten.native_layer_norm_backward (what F.layer_norm calls)."""
    import torch

    tx, tw, tb, tdy = (_torch_view(a) for a in (x, w, b, dy))
    n = int(x.shape[-1])
    y, mean, rstd = torch.native_layer_norm(tx, [n], tw, tb, EPS)
    dx, dw, db = torch.ops.aten.native_layer_norm_backward(tdy, tx, [n], mean, rstd, tw, tb, [True, True, True])
    res = (y, mean.reshape(x.shape[:-1]), rstd.reshape(x.shape[:-1]), dx, dw, db)
    dt = arrays.dtype_name(x)
    outs = _outs(out, ("y", "mean", "rstd", "dx", "dw", "db"),
                 (tuple(x.shape), tuple(x.shape[:-1]), tuple(x.shape[:-1]), tuple(x.shape), (n,), (n,)),
                 out_dtype(dt), x)
    for o, r in zip(outs, res):
        _torch_view(o).copy_(r)
    return outs


VARIANTS = [
    lab.Variant("triton fwd + bwd", layernorm_triton, "triton", dtypes=DTYPES),
    lab.Variant("triton fwd + bwd, long-row paths forced", layernorm_triton_looped, "triton", dtypes=DTYPES),
    lab.Variant("triton fwd (two-pass Welford) + bwd", layernorm_triton_welford, "triton", dtypes=DTYPES),
]
PEERS = [lab.Variant("torch native_layer_norm (+ backward)", peer_torch_native, "peer",
                     dtypes=("float32", "bfloat16", "float16"))]
CHECK_CASES = [((1, 1), "float32"), ((3, 17), "float32"), ((37, 1000), "float32"), ((130, 4096), "float32"),
               ((64, 10000), "float32"), ((1000, 64), "bfloat16"), ((33, 4096), "bfloat16"), ((9, 20000), "float32"),
               ((17, 768), "float16"), ((5, 33), "float64")]
CPU_CHECK_CASES = [((1, 1), "float32"), ((4, 100), "bfloat16"), ((5, 33), "float64"), ((3, 17), "float32"),
                   ((6, 301), "float16"), ((37, 1000), "float32")]
QUICK_CASES = 3


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's cases on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_SHAPE = (32768, 4096)                 # the benchmark's shape, fp32 and bf16
BENCH_DTYPES = ("float32", "bfloat16")
_TY = {"float32": "*fp32", "bfloat16": "*bf16", "float16": "*fp16", "float64": "*fp64"}


def fwd_signature(dtype: str, welford: bool = False) -> dict:
    ty, acc = _TY[dtype], _TY[acc_dtype(dtype)]
    sig = {"x_ptr": ty, "w_ptr": ty, "b_ptr": ty, "y_ptr": ty, "mean_ptr": acc, "rstd_ptr": acc}
    if welford:
        return dict(sig, n_cols="i32", x_row_stride="i32", y_row_stride="i32", eps="fp32", BLOCK_N="constexpr",
                    EVEN_N="constexpr")
    return dict(sig, n_rows="i32", n_cols="i32", x_row_stride="i32", y_row_stride="i32", eps="fp32",
                BLOCK_M="constexpr", BLOCK_N="constexpr", SINGLE="constexpr", PERSIST="constexpr")


def bwd_signature(dtype: str) -> dict:
    ty, acc = _TY[dtype], _TY[acc_dtype(dtype)]
    return {"x_ptr": ty, "w_ptr": ty, "dy_ptr": ty, "mean_ptr": acc, "rstd_ptr": acc, "dx_ptr": ty,
            "dw_part_ptr": acc, "db_part_ptr": acc, "n_rows": "i32", "n_cols": "i32", "x_row_stride": "i32",
            "dy_row_stride": "i32", "dx_row_stride": "i32", "BLOCK_N": "constexpr", "SINGLE": "constexpr"}


def dwdb_signature(dtype: str) -> dict:
    acc, out = _TY[acc_dtype(dtype)], _TY[dtype]
    return {"dw_part_ptr": acc, "db_part_ptr": acc, "dw_ptr": out, "db_ptr": out, "n_parts": "i32", "n_cols": "i32",
            "BLOCK_P": "constexpr", "BLOCK_C": "constexpr"}


def bench_bytes(shape, dtype: str = "float32") -> int:
    """Bytes the benchmark holds at once: x, dy, y, dx, the torch peers' y and dx (six matrices), the partial dw/db."""
    return 7 * shape[0] * shape[1] * arrays.ITEMSIZE[dtype]


def fit_shape(shape, dtype: str, gpu: device.DeviceInfo):
    """(shape, note): a benchmark shape with its rows halved until it fits the GPU's memory (common.plan.fit)."""
    return plan.fit(tuple(shape), lambda s: bench_bytes(s, dtype), gpu, shrink=lambda s: (max(1, s[0] // 2), s[1]),
                    what=f"{dtype} layernorm shape")


def _unit_launches(variant: str, rows: int, n: int, dtype: str, gpu: device.DeviceInfo, fwd_cfg: dict | None,
                   case: str) -> list[plan.Launch]:
    """The three launches of layernorm_triton (forward, backward, second level) as the wrappers compute them."""
    fwd = fwd_config(n, dtype, gpu)
    cfg = fwd_cfg or _fwd_dict(fwd.values)
    kernel, programs, const, warps = fwd_launch(rows, n, cfg, gpu.sms)
    welford = kernel is layernorm_fwd_welford_kernel
    out = [plan.Launch(variant, "layernorm_fwd_welford_kernel" if welford else "layernorm_fwd_kernel", "triton",
                       fn=kernel, grid=programs, signature=fwd_signature(dtype, welford), defines=const,
                       num_warps=warps, case=case, config_source="fixed (the variant's own)" if fwd_cfg else
                       fwd.source())]
    bwd = bwd_config(n, dtype, gpu)
    g, const, warps = bwd_launch(rows, n, {"programs_per_sm": bwd["BWD_PER_SM"], "num_warps": bwd["BWD_WARPS"]},
                                 gpu.sms)
    out.append(plan.Launch(variant, "layernorm_bwd_kernel", "triton", fn=layernorm_bwd_kernel, grid=g,
                           signature=bwd_signature(dtype), defines=const, num_warps=warps, case=case,
                           config_source=bwd.source()))
    dwdb = dwdb_config(interpreter=False)
    programs, const, warps = dwdb_launch(n, dwdb.values)
    out.append(plan.Launch(variant, "layernorm_dwdb_kernel", "triton", fn=layernorm_dwdb_kernel, grid=programs,
                           signature=dwdb_signature(dtype), defines=const, num_warps=warps,
                           case=tr("{case}, over G = {g} partial rows", case=case, g=g), config_source=dwdb.source()))
    return out


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Each variant's forward, backward and second level at the benchmark shape, fp32 and bf16."""
    out = []
    for dtype in BENCH_DTYPES:
        (rows, n), _ = fit_shape(size or TARGET_SHAPE, dtype, gpu)
        case = f"{rows} x {n} {dtype}"
        out += _unit_launches(VARIANTS[0].name, rows, n, dtype, gpu, None, case)
        with long_rows_forced(n):
            out += _unit_launches(VARIANTS[1].name, rows, n, dtype, gpu, None, case)
        out += _unit_launches(VARIANTS[2].name, rows, n, dtype, gpu, welford_forced_config(n), case)
    return out
