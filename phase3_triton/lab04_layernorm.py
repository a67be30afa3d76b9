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
  * tuning by measurement: rows per program and warps for the forward, programs and warps for the backward, picked
    by timing a few candidates at the benchmark shape (what triton.autotune does, done in the open).

The two numbers (main case: 32768 x 4096, N = 4096): forward bytes = read x + write y = 2 x M N x elt (+ w, b, and
8 B of mean/rstd per row) = 1.07 GB in fp32, 0.54 GB in bf16; FLOPs ~ 8 M N = 1.1 GFLOP (~1 FLOP/B): memory wins
(~14x below the H200's fp32 ridge); at the measured ~4.4 TB/s the forward takes ~0.24 ms in fp32. Backward bytes =
read x, dy + write dx = 3 M N x elt (+ the partial buffer, 2 x G x N x 4 B written and read once, ~2% at G = 4 x 132)
= 1.61 GB in fp32; FLOPs ~ 12 M N: memory-bound as well, ~0.37 ms at the ceiling. A backward that computes dw/db in
a separate pass over x and dy (what eager PyTorch does) moves 5 M N elements instead of 3: the fused one should be
up to ~1.6x faster at equal bandwidth. Targets: forward >= 1.0x torch.compile (fp32) and >= 1.3x (bf16); backward
>= 1.0x torch.compile.

Measured on an H200 (results/h200/phase3_lab04_layernorm.json; measured HBM ceiling 4,335 GB/s, so the floors are
0.248 ms forward and 0.372 ms backward in fp32): three of the four targets were met. Forward fp32: 0.266 ms (predicted
~0.24), 4,044 GB/s (0.933 of the ceiling), 1.32x eager but 0.954x torch.compile: missed. torch.compile's kernel
reached 4,241 GB/s, 0.978 of the ceiling, so matching it meant running at the ceiling (its timings spread 8% p20-p80
against Triton's 1.2%; the ratio compares medians). The tuned Triton forward stopped ~5% short, and none of the four
tuned configs closed the gap (best 0.267 ms, BLOCK_M 2 x 16 warps); the likely cost is the one lab 3.3's fused softmax
shows, a row's store waiting on two block reductions (here the mean, then the centred variance). What Inductor's
kernel does differently was not examined in this run. Forward bf16: 3,873 GB/s (0.893), 1.34x torch.compile (2,889
GB/s, 0.666): met (>= 1.3). Backward fp32: 0.394 ms (predicted ~0.37), 4,084 GB/s (0.942), 1.14x torch.compile
(3,584): met; bf16: 3,171 GB/s (0.732), 1.21x torch.compile (2,623): met. The fused backward was 2.24x eager in fp32
(1.89x in bf16), beyond the predicted ~1.6x: the prediction assumed equal bandwidth, and eager's backward, counted at
the 5 M N elements it moves, ran at 3,038 GB/s (0.70 of the ceiling) against the Triton kernel's 0.94.

Run: python -m phase3_triton.lab04_layernorm [--quick] [--no-bench] [--arch sm_80]
"""
from __future__ import annotations

import functools
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton
from common.arrays import device_randn
from common.triton_support import aot, summarize
from common.triton_support import load_summary as _loads

LAB = "phase3_lab04_layernorm"
DTYPES = ("float32", "bfloat16", "float16", "float64")
EPS = 1e-5
FWD_MAX_SINGLE = 16384     # longest row (rounded up to a power of two) the forward keeps in registers in one piece
BWD_MAX_SINGLE = 8192      # same for the backward, which holds x, dy, w and two accumulators per element
LOOP_BLOCK = 4096          # columns per step when a row is longer
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
    # exactly in exact arithmetic (dx, dw are 0 there); seen on an H200: 1.2e-5 where the reference has 0.
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
# Kernels. The accumulation dtype is read off the mean buffer's element type (fp32, or fp64 for fp64 data).
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_rows, n_cols, x_row_stride,
                         y_row_stride, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SINGLE: tl.constexpr):
    acc_ty = mean_ptr.dtype.element_ty
    cols = tl.arange(0, BLOCK_N)
    if SINGLE:
        # BLOCK_M whole rows per program, in registers from load to store; w and b loaded once per program
        rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < n_rows
        col_ok = cols < n_cols
        mask = row_ok[:, None] & col_ok[None, :]
        # every load is issued before the first reduction, so all of them are in flight together (a load placed
        # after a reduction would wait for its barriers). x is read once (evict first); w and b are re-read by every
        # program (keep them in L2). Measured on an H200 at 32768 x 4096: 0.933 of the HBM ceiling in fp32 (4,044
        # GB/s) and 0.893 in bf16, against 0.978 for torch.compile's fp32 kernel; the two reductions between a row's
        # loads and its store are the likely cost.
        x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_first").to(acc_ty)
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
        mean = tl.sum(x, axis=1) / n_cols
        xc = tl.where(mask, x - mean[:, None], 0.0)            # centred form: no cancellation for large means
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)
        y = xc * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(mean_ptr + rows, mean, mask=row_ok)
        tl.store(rstd_ptr + rows, rstd, mask=row_ok)
    else:
        # a row too long for registers: three passes over it in BLOCK_N chunks (sum; centred squares; normalize)
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * x_row_stride
        y_row = y_ptr + row * y_row_stride
        acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            acc += tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(acc_ty)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            xc = tl.where(offs < n_cols, tl.load(x_row + offs, mask=offs < n_cols, other=0.0).to(acc_ty) - mean, 0.0)
            acc += xc * xc
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            ok = offs < n_cols
            x = tl.load(x_row + offs, mask=ok, other=0.0).to(acc_ty)
            w = tl.load(w_ptr + offs, mask=ok, other=0.0).to(acc_ty)
            b = tl.load(b_ptr + offs, mask=ok, other=0.0).to(acc_ty)
            tl.store(y_row + offs, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=ok)
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def layernorm_bwd_kernel(x_ptr, w_ptr, dy_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr, n_rows,
                         n_cols, x_row_stride, dy_row_stride, dx_row_stride, BLOCK_N: tl.constexpr,
                         SINGLE: tl.constexpr):
    # Program g of G takes rows g, g + G, g + 2G, ...: dx for each row, and its own partial dw/db (row g of the
    # G x N partial buffers), which the dwdb kernel sums. No two programs write the same partial row: no atomics.
    # Measured on an H200 at 32768 x 4096 (G = 2 x 132, dwdb kernel included): 4,084 GB/s in fp32, 0.942 of the
    # ceiling counting x, dy read and dx written once, 1.14x torch.compile; bf16 3,171 GB/s (0.732), 1.21x.
    pid = tl.program_id(0)
    n_prog = tl.num_programs(0)
    acc_ty = mean_ptr.dtype.element_ty
    cols = tl.arange(0, BLOCK_N)
    part = pid.to(tl.int64) * n_cols
    # 64-bit strides, so row * stride cannot wrap past 2^31 elements (the loop variable itself stays 32-bit).
    # tl.cast, not .to(): an integer argument equal to 1 arrives as a compile-time constant, which has no .to()
    xs = tl.cast(x_row_stride, tl.int64)
    dys = tl.cast(dy_row_stride, tl.int64)
    dxs = tl.cast(dx_row_stride, tl.int64)
    if SINGLE:
        col_ok = cols < n_cols
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
        dw_acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        db_acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        for row in range(pid, n_rows, n_prog):
            x = tl.load(x_ptr + row * xs + cols, mask=col_ok, other=0.0).to(acc_ty)
            dy = tl.load(dy_ptr + row * dys + cols, mask=col_ok, other=0.0).to(acc_ty)
            mean = tl.load(mean_ptr + row)
            rstd = tl.load(rstd_ptr + row)
            xhat = tl.where(col_ok, (x - mean) * rstd, 0.0)
            wdy = w * dy                                        # 0 in masked lanes (w and dy loaded as 0)
            c1 = tl.sum(xhat * wdy, axis=0) / n_cols
            c2 = tl.sum(wdy, axis=0) / n_cols
            dx = (wdy - (xhat * c1 + c2)) * rstd
            tl.store(dx_ptr + row * dxs + cols, dx.to(dx_ptr.dtype.element_ty), mask=col_ok)
            dw_acc += dy * xhat
            db_acc += dy
        tl.store(dw_part_ptr + part + cols, dw_acc, mask=col_ok)
        tl.store(db_part_ptr + part + cols, db_acc, mask=col_ok)
    else:
        # long rows: c1, c2 need the whole row before any dx, so two passes per row; the partial sums live in this
        # program's own rows of the partial buffers (read-modify-write, never shared with another program)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            tl.store(dw_part_ptr + part + offs, tl.zeros((BLOCK_N,), dtype=acc_ty), mask=offs < n_cols)
            tl.store(db_part_ptr + part + offs, tl.zeros((BLOCK_N,), dtype=acc_ty), mask=offs < n_cols)
        for row in range(pid, n_rows, n_prog):
            mean = tl.load(mean_ptr + row)
            rstd = tl.load(rstd_ptr + row)
            s1 = tl.zeros((BLOCK_N,), dtype=acc_ty)
            s2 = tl.zeros((BLOCK_N,), dtype=acc_ty)
            for start in range(0, n_cols, BLOCK_N):
                offs = start + cols
                ok = offs < n_cols
                x = tl.load(x_ptr + row * xs + offs, mask=ok, other=0.0).to(acc_ty)
                dy = tl.load(dy_ptr + row * dys + offs, mask=ok, other=0.0).to(acc_ty)
                w = tl.load(w_ptr + offs, mask=ok, other=0.0).to(acc_ty)
                xhat = tl.where(ok, (x - mean) * rstd, 0.0)
                s1 += xhat * w * dy
                s2 += w * dy
            c1 = tl.sum(s1, axis=0) / n_cols
            c2 = tl.sum(s2, axis=0) / n_cols
            for start in range(0, n_cols, BLOCK_N):
                offs = start + cols
                ok = offs < n_cols
                x = tl.load(x_ptr + row * xs + offs, mask=ok, other=0.0).to(acc_ty)
                dy = tl.load(dy_ptr + row * dys + offs, mask=ok, other=0.0).to(acc_ty)
                w = tl.load(w_ptr + offs, mask=ok, other=0.0).to(acc_ty)
                xhat = tl.where(ok, (x - mean) * rstd, 0.0)
                dx = (w * dy - (xhat * c1 + c2)) * rstd
                tl.store(dx_ptr + row * dxs + offs, dx.to(dx_ptr.dtype.element_ty), mask=ok)
                dwp = tl.load(dw_part_ptr + part + offs, mask=ok, other=0.0)
                dbp = tl.load(db_part_ptr + part + offs, mask=ok, other=0.0)
                tl.store(dw_part_ptr + part + offs, dwp + dy * xhat, mask=ok)
                tl.store(db_part_ptr + part + offs, dbp + dy, mask=ok)


@triton.jit
def layernorm_dwdb_kernel(dw_part_ptr, db_part_ptr, dw_ptr, db_ptr, n_parts, n_cols,
                          BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # The second level of the column reduction: program j sums BLOCK_C columns over all G partial rows. Each step
    # loads a BLOCK_P x BLOCK_C tile whose rows are contiguous runs of BLOCK_C floats (coalesced), and the final
    # tl.sum along axis 0 folds the tile's rows together.
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < n_cols
    acc_ty = dw_part_ptr.dtype.element_ty
    dw = tl.zeros((BLOCK_P, BLOCK_C), dtype=acc_ty)
    db = tl.zeros((BLOCK_P, BLOCK_C), dtype=acc_ty)
    for p0 in range(0, n_parts, BLOCK_P):
        parts = p0 + tl.arange(0, BLOCK_P)
        offs = parts[:, None].to(tl.int64) * n_cols + cols[None, :]
        ok = (parts[:, None] < n_parts) & col_ok[None, :]
        dw += tl.load(dw_part_ptr + offs, mask=ok, other=0.0)
        db += tl.load(db_part_ptr + offs, mask=ok, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=col_ok)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=col_ok)


# ---------------------------------------------------------------------------------------------------------------------
# Launch configurations
# ---------------------------------------------------------------------------------------------------------------------
def fwd_default(cols: int) -> dict:
    """Rows per program and warps for the forward: ~16 values per thread, at least ~2048 elements per program.

    Measured on an H200 at 32768 x 4096: this default (1 row, 8 warps) took 0.277 ms in fp32, the tuned 2 rows x 16
    warps 0.267 ms; in bf16 0.143 against 2 rows x 8 warps' 0.141. 4 rows x 16 warps was the slowest fp32 candidate
    (0.323 ms)."""
    bn = triton.next_power_of_2(max(cols, 1))
    if bn > FWD_MAX_SINGLE:
        return {"BLOCK_M": 1, "num_warps": 8}
    bm = max(1, min(32, 2048 // bn))
    elems = bm * bn
    return {"BLOCK_M": bm, "num_warps": 4 if elems <= 2048 else 8 if elems <= 4096 else 16}


def bwd_default(cols: int) -> dict:
    """Warps for the backward and G as a multiple of the SM count (2 programs of this size fit an SM at a time).

    Measured on an H200 at 32768 x 4096: the compile report confirms 2 programs per SM (fp32, 8 warps, 117 registers),
    and tuning preferred G = 2 per SM to this default's 4 in both dtypes (fp32 0.394 against 0.417 ms; bf16 0.254
    against 0.279 ms); 1 per SM was slowest (0.509 and 0.384 ms)."""
    bn = triton.next_power_of_2(max(cols, 1))
    return {"num_warps": 4 if bn <= 1024 else 8 if bn <= 4096 else 16, "programs_per_sm": 4}


# Configs picked by tune() at a shape: {("fwd" | "bwd", cols, dtype): config}; the wrappers use them when present.
TUNED: dict = {}


def _sms() -> int:
    return device.info().sms if device.has_gpu() else 4


# ---------------------------------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _check_params(x, weight, bias, normalized_shape, dev):
    dt = arrays.check_array("x", x, dtypes=DTYPES, ndim=None, device=dev)
    if x.ndim < 1:
        raise ValueError("x: expected at least 1 dimension (normalized over the last one), got a 0-D array")
    n = int(x.shape[-1])
    if n == 0:
        raise ValueError(f"x: the normalized (last) dimension is empty, shape {tuple(x.shape)}")
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
    bn = triton.next_power_of_2(n)
    single = bn <= FWD_MAX_SINGLE
    cfg = dict(config or TUNED.get(("fwd", n, dt)) or fwd_default(n))
    bm = cfg["BLOCK_M"] if single else 1
    programs = triton.cdiv(rows, bm)
    if programs > MAX_GRID_X:
        raise ValueError(f"x: {rows} rows need {programs} programs, over the grid limit {MAX_GRID_X}")
    launch(layernorm_fwd_kernel, (programs,), x, weight, bias, y, mean, rstd, rows, n, n, n, float(eps),
                   BLOCK_M=bm, BLOCK_N=bn if single else LOOP_BLOCK, SINGLE=single, num_warps=cfg["num_warps"])
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
    bn = triton.next_power_of_2(n)
    single = bn <= BWD_MAX_SINGLE
    cfg = dict(config or TUNED.get(("bwd", n, dt)) or bwd_default(n))
    g = max(1, min(rows, cfg["programs_per_sm"] * _sms()))
    dw_part = arrays.empty((g, n), acc, x)
    db_part = arrays.empty((g, n), acc, x)
    launch(layernorm_bwd_kernel, (g,), x, weight, dy, mean, rstd, dx, dw_part, db_part, rows, n, n, n, n,
                   BLOCK_N=bn if single else LOOP_BLOCK, SINGLE=single, num_warps=cfg["num_warps"])
    # GPU: 64 columns per program (64 programs at N = 4096), 64 partial rows per step. Interpreter: few, wide
    # programs (each program costs it milliseconds), still 2+ steps over the partial rows when G > 8.
    block_c, block_p = (64, 64) if not INTERPRETER else (128, 8)
    launch(layernorm_dwdb_kernel, (triton.cdiv(n, block_c),), dw_part, db_part, dw, db, g, n,
                   BLOCK_P=block_p, BLOCK_C=block_c, num_warps=4)
    return dx, dw, db


def layernorm_triton(x, w, b, dy, out=None):
    """The lab's checked unit: forward, then backward from the saved statistics -> (y, mean, rstd, dx, dw, db)."""
    out = (None,) * 6 if out is None else tuple(out)
    if len(out) != 6:
        raise TypeError("out: expected a 6-tuple (y, mean, rstd, dx, dw, db) or None")
    y, mean, rstd = layernorm_fwd(x, w, b, EPS, out=out[:3])
    dx, dw, db = layernorm_bwd(dy, x, w, mean, rstd, out=out[3:])
    return y, mean, rstd, dx, dw, db


def layernorm_triton_looped(x, w, b, dy, out=None):
    """The same with the long-row (looped) paths forced on every row length, in ~4 chunks per row."""
    global FWD_MAX_SINGLE, BWD_MAX_SINGLE, LOOP_BLOCK
    saved = FWD_MAX_SINGLE, BWD_MAX_SINGLE, LOOP_BLOCK
    FWD_MAX_SINGLE = BWD_MAX_SINGLE = 0
    LOOP_BLOCK = min(saved[2], max(16, triton.next_power_of_2(int(x.shape[-1]) if x.ndim else 1) // 4))
    try:
        return layernorm_triton(x, w, b, dy, out=out)
    finally:
        FWD_MAX_SINGLE, BWD_MAX_SINGLE, LOOP_BLOCK = saved


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
]
PEERS = [lab.Variant("torch native_layer_norm (+ backward)", peer_torch_native, "peer",
                     dtypes=("float32", "bfloat16", "float16"))]
CHECK_CASES = [((1, 1), "float32"), ((3, 17), "float32"), ((37, 1000), "float32"), ((130, 4096), "float32"),
               ((64, 10000), "float32"), ((1000, 64), "bfloat16"), ((33, 4096), "bfloat16"), ((9, 20000), "float32"),
               ((17, 768), "float16"), ((5, 33), "float64")]
CPU_CHECK_CASES = [((1, 1), "float32"), ((4, 100), "bfloat16"), ((5, 33), "float64"), ((3, 17), "float32"),
                   ((6, 300), "float16"), ((37, 1000), "float32")]
QUICK_CASES = 3


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report
# ---------------------------------------------------------------------------------------------------------------------
_TY = {"float32": "*fp32", "bfloat16": "*bf16", "float16": "*fp16", "float64": "*fp64"}


def aot_fwd(cc: int, dtype: str = "float32", cols: int = 4096, cfg: dict | None = None):
    cfg = cfg or fwd_default(cols)
    ty, acc = _TY[dtype], _TY[acc_dtype(dtype)]
    sig = {"x_ptr": ty, "w_ptr": ty, "b_ptr": ty, "y_ptr": ty, "mean_ptr": acc, "rstd_ptr": acc, "n_rows": "i32",
           "n_cols": "i32", "x_row_stride": "i32", "y_row_stride": "i32", "eps": "fp32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "SINGLE": "constexpr"}
    bn = triton.next_power_of_2(cols)
    return aot(layernorm_fwd_kernel, sig, {"BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": bn, "SINGLE": True}, cc=cc,
               num_warps=cfg["num_warps"],
               divisible_by_16=("x_ptr", "w_ptr", "b_ptr", "y_ptr", "mean_ptr", "rstd_ptr", "n_cols", "x_row_stride",
                                "y_row_stride"))


def aot_bwd(cc: int, dtype: str = "float32", cols: int = 4096, num_warps: int | None = None):
    ty, acc = _TY[dtype], _TY[acc_dtype(dtype)]
    sig = {"x_ptr": ty, "w_ptr": ty, "dy_ptr": ty, "mean_ptr": acc, "rstd_ptr": acc, "dx_ptr": ty,
           "dw_part_ptr": acc, "db_part_ptr": acc, "n_rows": "i32", "n_cols": "i32", "x_row_stride": "i32",
           "dy_row_stride": "i32", "dx_row_stride": "i32", "BLOCK_N": "constexpr", "SINGLE": "constexpr"}
    return aot(layernorm_bwd_kernel, sig, {"BLOCK_N": triton.next_power_of_2(cols), "SINGLE": True}, cc=cc,
               num_warps=num_warps or bwd_default(cols)["num_warps"],
               divisible_by_16=("x_ptr", "w_ptr", "dy_ptr", "mean_ptr", "rstd_ptr", "dx_ptr", "dw_part_ptr",
                                "db_part_ptr", "n_cols", "x_row_stride", "dy_row_stride", "dx_row_stride"))


def compile_table(arch: str) -> list[dict]:
    from phase3_triton.lab03_fused_softmax import occupancy

    cc = device.arch_info(arch).cc
    rows = []
    for kind, dtype, extra in (("fwd", "float32", None), ("fwd", "bfloat16", None),
                               ("fwd", "float32", {"BLOCK_M": 4, "num_warps": 16}), ("bwd", "float32", None),
                               ("bwd", "bfloat16", None)):
        k = aot_fwd(cc, dtype, 4096, extra) if kind == "fwd" else aot_bwd(cc, dtype, 4096, extra)
        s = summarize(k)
        threads = 32 * s["num_warps"]
        bm = (extra or fwd_default(4096))["BLOCK_M"] if kind == "fwd" else 1
        rows.append({"kernel": kind, "dtype": dtype, "rows/program": bm if kind == "fwd" else "strided loop",
                     "warps": s["num_warps"], "regs": s["regs"], "local B": s["local"], "shared B": s["shared"],
                     "programs/SM": occupancy(s["regs"], threads, s["shared"], arch), "global loads": _loads(s)})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_SHAPE = (32768, 4096)
TARGETS = [("fwd", "float32", 1.0), ("fwd", "bfloat16", 1.3), ("bwd", "float32", 1.0), ("bwd", "bfloat16", 1.0)]
FWD_CANDIDATES = [{"BLOCK_M": bm, "num_warps": w} for bm, w in ((1, 8), (2, 8), (2, 16), (4, 16))]
BWD_CANDIDATES = [{"programs_per_sm": g, "num_warps": w} for g, w in ((1, 8), (2, 8), (4, 8), (2, 16))]


@functools.lru_cache(maxsize=None)
def compiled_peers():
    """torch.compile'd forward (F.layer_norm) and backward (aten.native_layer_norm_backward), dynamic=False."""
    import torch
    import torch.nn.functional as F

    fwd = torch.compile(lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, EPS), dynamic=False)
    bwd = torch.compile(lambda dy, x, mean, rstd, w, b: torch.ops.aten.native_layer_norm_backward(
        dy, x, [x.shape[-1]], mean, rstd, w, b, [True, True, True]), dynamic=False)
    return fwd, bwd


def tune(kind: str, x, w, b, dy, candidates) -> list[dict]:
    """Time each candidate config once at this shape, keep the fastest in TUNED, return the timings."""
    n, dt = int(x.shape[-1]), arrays.dtype_name(x)
    y, mean, rstd = layernorm_fwd(x, w, b)
    rows = []
    for cfg in cli.progress(candidates, f"{kind} configs"):
        if kind == "fwd":
            fn = (lambda c=cfg: layernorm_fwd(x, w, b, out=(y, mean, rstd), config=c))
        else:
            fn = (lambda c=cfg: layernorm_bwd(dy, x, w, mean, rstd, config=c))
        t = bench.bench(fn, rep_ms=40)
        rows.append({"kind": kind, "dtype": dt, "config": cfg, "ms": t.median_ms})
    best = min(rows, key=lambda r: r["ms"])
    TUNED[(kind, n, dt)] = best["config"]
    return rows


def check_big(x, w, b, dy, n_rows: int = 128) -> check.Comparison:
    """Forward and backward at a benchmark shape, against float64 torch on the GPU (rows sampled for y and dx; dw
    and db need every row and are compared whole)."""
    import torch

    dt = arrays.dtype_name(x)
    y, mean, rstd, dx, dw, db = layernorm_triton(x, w, b, dy)
    t64 = [(_torch_view(a)).double() for a in (x, w, b, dy)]
    xx, ww, bb, gg = t64
    mu = xx.mean(dim=1)
    xc = xx - mu[:, None]
    rs = 1.0 / torch.sqrt((xc * xc).mean(dim=1) + EPS)
    xhat = xc * rs[:, None]
    wdy = ww * gg
    m = int(x.shape[0])
    rows = torch.as_tensor(np.unique(np.concatenate([check.rng(13).integers(0, m, n_rows), [m - 1]])),
                           device=xx.device)
    c1 = (xhat[rows] * wdy[rows]).mean(dim=1)
    c2 = wdy[rows].mean(dim=1)
    ref = {"y": (xhat[rows] * ww + bb), "mean": mu[rows], "rstd": rs[rows],
           "dx": rs[rows][:, None] * (wdy[rows] - xhat[rows] * c1[:, None] - c2[:, None]),
           "dw": (gg * xhat).sum(dim=0), "db": gg.sum(dim=0)}
    got = {"y": _torch_view(y)[rows], "mean": _torch_view(mean)[rows], "rstd": _torch_view(rstd)[rows],
           "dx": _torch_view(dx)[rows], "dw": _torch_view(dw), "db": _torch_view(db)}
    worst = None
    for k in ref:
        c = check.compare(got[k].float().cpu().numpy(), ref[k].cpu().numpy(), dt)
        if not c.ok:
            return check.Comparison(False, c.rel_norm_err, c.max_abs_err, c.n_bad, c.n, f"{k}: {c.message}")
        worst = c if worst is None or c.rel_norm_err > worst.rel_norm_err else worst
    return worst


def bench_targets(ceiling: float, rounds: int = 3, do_tune: bool = True) -> tuple[list[dict], list[dict], list]:
    import torch
    import torch.nn.functional as F

    m, n = TARGET_SHAPE
    rows, targets, tuning = [], [], []
    fwd_c, bwd_c = compiled_peers()
    for dtype in ("float32", "bfloat16"):
        x = device_randn(TARGET_SHAPE, dtype, 21, scale=2.0, shift=3.0)
        w = device_randn((n,), dtype, 22, scale=0.2, shift=1.0)
        b = device_randn((n,), dtype, 23, scale=0.5)
        dy = device_randn(TARGET_SHAPE, dtype, 24)
        tx, tw, tb, tdy = (_torch_view(a) for a in (x, w, b, dy))
        elt = arrays.ITEMSIZE[dtype]
        if do_tune:
            tuning += tune("fwd", x, w, b, dy, FWD_CANDIDATES) + tune("bwd", x, w, b, dy, BWD_CANDIDATES)
        c = check_big(x, w, b, dy)
        y, mean, rstd = layernorm_fwd(x, w, b)
        _, tmean, trstd = torch.native_layer_norm(tx, [n], tw, tb, EPS)
        fwd_c(tx, tw, tb)
        bwd_c(tdy, tx, tmean, trstd, tw, tb)                     # compile both outside the timings
        fwd_fns = {"triton fwd": lambda: layernorm_fwd(x, w, b, out=(y, mean, rstd)),
                   "torch eager F.layer_norm": lambda: F.layer_norm(tx, (n,), tw, tb, EPS),
                   "torch.compile F.layer_norm": lambda: fwd_c(tx, tw, tb)}
        bwd_fns = {"triton bwd": lambda: layernorm_bwd(dy, x, w, mean, rstd),
                   "torch eager native_layer_norm_backward": lambda: torch.ops.aten.native_layer_norm_backward(
                       tdy, tx, [n], tmean, trstd, tw, tb, [True, True, True]),
                   "torch.compile backward": lambda: bwd_c(tdy, tx, tmean, trstd, tw, tb)}
        for kind, fns, nbytes in (("fwd", fwd_fns, 2 * m * n * elt + 2 * n * elt + 8 * m),
                                  ("bwd", bwd_fns, 3 * m * n * elt + 3 * n * elt + 8 * m)):
            ts_ = bench.interleaved(fns, rounds=rounds)
            comp = next(k for k in ts_ if "compile" in k)
            mine = next(k for k in ts_ if k.startswith("triton"))
            for name, t in ts_.items():
                impl = "triton" if name.startswith("triton") else "peer"
                rows.append(report.row(LAB, name, impl, TARGET_SHAPE, dtype, t, nbytes=nbytes, ceiling_gbps=ceiling,
                                       vs_compile=ts_[comp].median_ms / t.median_ms,
                                       config=str(TUNED.get((kind, n, dtype), "default")) if impl == "triton" else "",
                                       check=("ok" if c.ok else c.message) if impl == "triton" else ""))
            goal = next(g for k_, d_, g in TARGETS if k_ == kind and d_ == dtype)
            ratio = ts_[comp].median_ms / ts_[mine].median_ms
            eager = next(k for k in ts_ if "eager" in k)
            targets.append({"case": f"layernorm {kind} {m}x{n} {dtype}", "peer": "torch.compile",
                            "triton GB/s": ts_[mine].gbps(nbytes), "peer GB/s": ts_[comp].gbps(nbytes),
                            "ratio": ratio, "vs eager": ts_[eager].median_ms / ts_[mine].median_ms,
                            "target": f">= {goal:.1f}", "met": ratio >= goal and c.ok})
    return rows, targets, tuning


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    gpu = device.has_gpu()
    cases = CHECK_CASES if gpu else CPU_CHECK_CASES
    _, ok = lab.check_variants(this, VARIANTS + (PEERS if gpu else []), cases[:QUICK_CASES] if args.quick else cases)
    compile_rows = compile_table(args.arch)
    report.print_table(compile_rows, title=f"layernorm kernels compiled ahead of time for {args.arch}, N = 4096 "
                                           "(aligned, N % 16 == 0)")
    print("  The backward holds x, dy, w, xhat and two accumulators per element: more registers, fewer programs per "
          "SM;\n  G = programs_per_sm x SMs programs walk the rows, so the partial dw/db buffer has G rows.")
    if not gpu:
        print("\nThe Triton kernels ran in the interpreter (forward, backward and the column reduction, single-piece "
              "and looped paths,\nfp32 / bf16 / fp16 / fp64). Tuning, timing and the torch peers need a GPU.")
        return 0 if ok else 1
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    ceiling = bench.ceilings()["hbm_gbps"]
    rows, targets, tuning = bench_targets(ceiling, rounds=1 if args.quick else 3, do_tune=not args.quick)
    report.print_table(rows, ["variant", "dtype", "ms", "gbps", "frac_ceiling", "vs_compile", "config", "check"],
                       title=f"LayerNorm {TARGET_SHAPE[0]} x {TARGET_SHAPE[1]} (GB/s counts the bytes that must move: "
                             "fwd 2 MN, bwd 3 MN elements, for every contender)")
    if tuning:
        report.print_table([dict(r, config=str(r["config"])) for r in tuning], title="Tuning at the target shape "
                           "(one timing per candidate; the fastest is used above)")
    report.print_table(targets, title="Performance targets")
    out_dir = args.out or report.results_dir()
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, targets=targets, tuning=tuning,
                                         compile_report=compile_rows, ceiling_gbps=ceiling,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", report.plot_bars(os.path.join(out_dir, f"{LAB}.png"),
                                        [f"{r['variant']} {r['dtype']}" for r in rows], [r["gbps"] for r in rows],
                                        ylabel="GB/s (bytes that must move)",
                                        title=f"LayerNorm {TARGET_SHAPE[0]}x{TARGET_SHAPE[1]} on {device.info().name}",
                                        colors=[report.IMPL_COLORS.get(r["impl"], "gray") for r in rows],
                                        hlines={f"HBM ceiling {ceiling:.0f}": ceiling}))
    # exit status 1 = a correctness check failed (a missed performance target is reported, not an error)
    return 0 if all(r.get("check") in ("", "ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
