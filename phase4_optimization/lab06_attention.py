"""Lab 4.6 - Attention, from naive to flash: the S x S matrix in memory, then never in memory.

You will learn
  * naive attention as three library-sized steps: S = Q K^T (cuBLAS batched matmul through torch), a row softmax
    (a small Triton kernel of this lab that also applies the scale and the causal mask and saves the log-sum-exp),
    O = P V (cuBLAS again). Each step is fast on its own, but S and P, B x H x S x S elements each, are written to
    HBM and read back: at S = 4096 that is 32 MiB per head and per matrix, against 1 MiB for each of Q, K, V, O;
  * flash attention (forward): one program per (BLOCK_M query rows, batch x head), grid (cdiv(S, BLOCK_M), B x H).
    Q's tile stays in registers; K and V stream through shared memory BLOCK_N rows at a time; the softmax is
    computed online: a running row maximum m and row sum l, and every time the maximum grows the accumulator and l
    are rescaled by exp(m_old - m_new). Nothing of size S x S ever leaves the chip. exp2 is used instead of exp
    (one MUFU.EX2 instruction), with the softmax scale folded into log2(e): p = 2^(s * scale * log2(e) - m);
  * masking only where it is needed: in causal mode the key tiles wholly above the diagonal are skipped (half the
    work), the tiles wholly below it run without a mask, and only the BLOCK_M / BLOCK_N tiles on the diagonal (and
    the ragged last tile of any length S) pay for the compare-and-select. The loop is split in two for that;
    both halves are one loop body, unrolled twice at compile time (tl.static_range);
  * the log-sum-exp of every row, LSE = m + log(l), saved in fp32 (stored in natural log, the API's base; the kernel
    works in base 2 and converts once per row): it is all the backward needs to rebuild P tile by tile;
  * the backward pass without S x S either (FlashAttention-2 style): delta = rowsum(dO * O) in a small kernel, then
    one kernel per K/V block that walks the query blocks (dK, dV accumulate in registers) and one per Q block that
    walks the K/V blocks (dQ). P is recomputed from Q, K and the LSE; no atomics, so the result is deterministic.
    Wrapped in a torch.autograd.Function (`flash_attention`) and checked against torch.autograd on the naive
    version and against analytical float64 gradients;
  * where the time goes: attention at long S is compute-bound, so the figure of merit is TFLOP/s against the tensor
    cores (and against cuDNN's and FlashAttention-2's kernels, behind torch's SDPA, in the same run).

The two numbers (main case: bf16, B 4, H 32, S 4096, D 128, non-causal):
  FLOPs = 4 B H S^2 D (two matmuls of 2 S^2 D each per head) = 275 GFLOP (halved for causal); the backward does 2.5x
  that (five matmuls instead of two, P recomputed). Bytes that must move = Q, K, V read + O written = 4 B H S D x 2 B
  = 537 MB (+ 2 MB of LSE): 512 FLOP/B, ~2.5x above the H200's ridge (~990 TFLOP/s / 4.8 TB/s ~ 206 FLOP/B), so
  compute wins; at ~600 TFLOP/s the forward takes ~0.46 ms, moving the 537 MB once ~0.12 ms.
  The naive version adds S and P: 4 B H S^2 x 2 B more (S written, S read, P written, P read) = 8.6 GB at this
  shape, 16x the flash bytes and ~2 ms at the measured ~4.4 TB/s on their own: the naive version is memory-bound
  (~32 FLOP/B), however fast its matmuls are. main() shows it at S = 2048 next to flash.
Predictions: flash forward within ~0.85x of cuDNN at D = 128 (the kernel is a plain-pointer Triton kernel: its loads
are cp.async from every warp, where cuDNN's Hopper kernels use TMA and warp-specialized producers); the naive forward
~10x slower than flash at S = 2048; the backward below the forward in TFLOP/s (more registers per program, dS
rounded and re-read).
Targets (issue 11, H200, same run): forward bf16 B4 H32 S4096 D128 >= 0.85x SDPA cuDNN, non-causal (cuDNN measured
603 TFLOP/s, SDPA flash 343) and causal (cuDNN 531); forward bf16 B8 H32 S2048 D64 non-causal >= 0.85x cuDNN (444);
backward bf16 B4 H32 S4096 D128 non-causal >= 1.2x SDPA flash (292 TFLOP/s; cuDNN's backward 515).

Measured on an H200 (results/h200/phase4_lab06_attention.json, commit 1328531; bf16, medians of 3 interleaved
rounds with L2 flushed): two of the four targets met, in both runs. Forward D128 non-causal: Triton 470.3 TFLOP/s
against cuDNN 591.1 = 0.796x: missed (target 0.85); SDPA flash 333.7, the CUDA C mma.sync kernel 320.4. Causal:
Triton 424.2 against cuDNN 523.1 = 0.811x: missed; flash 307.9, CUDA 304.6. D64 B8 H32 S2048 non-causal: Triton
402.3 against cuDNN 440.3 = 0.914x: met; flash 292.3, CUDA 279.7. Backward D128: Triton 366.2 against SDPA flash
289.9 = 1.263x: met (target 1.2); cuDNN's backward 506.1 stays ahead. The first run (commit 31784b5) gave 0.822x,
0.815x, 0.913x and 1.268x: the non-causal forward moves by ~3% between runs (cuDNN's own spread was 15% in this
one), and it missed both times. So "within ~0.85x of cuDNN at D = 128" missed by 3-6%, and Triton beat the
FA2-style SDPA flash backend by ~1.4x forward.
What the profile shows (ncu, results/h200/profile/, commit f2ffb1c, non-causal D128, one launch each): our kernel
keeps the tensor pipe busy 55% of its 2.13 ms, cuDNN's 76% of 1.61 ms. Ours runs one 8-warp program per SM (255
registers, 12.5% occupancy), issues an instruction in 31% of cycles, and its top stalls are the barrier (1.9 warps
per issue) and fixed-latency waits (1.4): every warp loads, multiplies and does its softmax in turn, and (our
reading of the barrier stalls) the two warpgroups wait for each other around each K/V tile's shared buffers. cuDNN's kernel is persistent (132 programs of 3 warpgroups, 168
registers), warp-specialized (producer warps feed TMA loads while two consumer warpgroups alternate softmax and
wgmma, so one's exp2 work hides behind the other's MMA) and issues in 44% of cycles. That structure is what the
remaining 20% is made of; a Triton kernel without warp specialization does not get it.
The tuning pass (the "tuning" table of the JSON, four candidates per case, timed alone) picked: D128 non-causal
BLOCK_M 128 x BLOCK_N 128, 8 warps, 3 stages (516.97 TFLOP/s there, against 499.05 for the default BLOCK_N 64);
D128 causal BLOCK_N 64, 8 warps, 3 stages (445.81; BLOCK_N 128 with 2 stages was last at 418.31); D64 BLOCK_N 64,
8 warps, 4 stages (426.89; BLOCK_N 128 lost, 342.09 / 368.98); backward BLOCK_M1 64, BLOCK_N1 128, BLOCK_M2 128,
BLOCK_N2 64, 8 warps, 2 stages (370.36, against 178.54 for the all-64 tiles that bwd_default_gpu returns at D128).
(That was the first run's tuning; this run's picked BLOCK_N 64 for D128 non-causal instead, 502.4 against 499.0 for
BLOCK_N 128: the two tiles are a tie, and fwd_default keeps 128.) The tuned forward figures are 4-7% above the same configs' head-to-head figures; only the interleaved
head-to-head is compared with cuDNN. The backward stayed below the forward in TFLOP/s, as predicted (366.2 against
470.3). Naive against flash at B4 H32 S2048 D128: naive 1.141 ms (241.0 TFLOP/s; 4.56 GB moved at ~4,000 GB/s,
~0.92 of the measured ceiling: memory-bound, as predicted), flash 0.631 ms (435.5 TFLOP/s): flash ~1.8x faster,
not the predicted ~10x. The prediction overestimated: the naive version's S and P traffic runs at the HBM ceiling,
and at S = 2048 its 4.56 GB cost about 1 ms against flash's 0.6 ms of compute.

Without a GPU the naive and flash kernels run in Triton's interpreter with small tiles (32 x 16 forward), so the
ragged, diagonal and multi-tile paths all run at S ~ 70; two interpreter faults are worked around there only (bf16
tiles go to tl.dot as fp32, and P and dS are rounded to bf16 to nearest, as the GPU does: see _upcast), and the
kernels are compiled for sm_90 ahead of time to show their registers, shared memory and wgmma count. If
phase4_optimization/attention_cuda.py is present, its CUDA C mma.sync forward is one more variant (GPU only).

API for other labs: flash_attention(q, k, v, causal=False, sm_scale=None) (differentiable, torch tensors),
flash_attn_fwd(q, k, v, causal, sm_scale, out=None) -> (o, lse), flash_attn_bwd(do, q, k, v, o, lse, causal, ...).

Run: python -m phase4_optimization.lab06_attention [--quick] [--no-bench] [--compile-report] [--arch sm_90]
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import math
import os
import sys
import time

import numpy as np

from common import arrays, bench, check, cli, device, lab, report
from common.triton_support import INTERPRETER, compile_for, launch, tl, triton

LAB = "phase4_lab06_attention"
DTYPES = ("bfloat16", "float16")
HEAD_DIMS = (64, 128)
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
MAX_GRID_Y = 65535                    # grid axis 1 carries batch x heads
NAIVE_MAX_S = 16384                   # the naive softmax keeps a whole row in registers
INT32_MAX = 2**31 - 1


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(q, k, v, do, causal: bool = False, sm_scale: float | None = None):
    """Float64 attention and its gradients: (O, LSE, dQ, dK, dV), LSE in natural log, (B, H, S).

    Forward: S = scale Q K^T (entries with key index > query index set to -inf when causal), P = softmax(S) by rows,
    LSE = log(sum(exp(S))) by rows, O = P V. Backward, for an upstream gradient dO: dV = P^T dO, dP = dO V^T,
    dS = P * (dP - rowsum(P * dP)), dQ = scale dS K, dK = scale dS^T Q.
    """
    q, k, v, do = (np.asarray(a, np.float64) for a in (q, k, v, do))
    s_len, d = q.shape[-2], q.shape[-1]
    scale = 1.0 / math.sqrt(d) if sm_scale is None else float(sm_scale)
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones((s_len, s_len), bool)), s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    l_ = e.sum(axis=-1, keepdims=True)
    p = e / l_
    if causal:
        # masked probabilities are exactly 0 even when the row's max or sum is NaN (exp(-inf - NaN) and 0 / NaN are
        # NaN): a NaN in query row i must not reach the keys j > i it never attends to - as in the kernels
        p = np.where(np.tril(np.ones((s_len, s_len), bool)), p, 0.0)
    lse = (m + np.log(l_))[..., 0]
    o = probabilities_times_values(p, v, causal)
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    dq = ds @ k * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    return o, lse, dq, dk, dv


def probabilities_times_values(p, v, causal: bool):
    """O = P V in float64, where a key a row does not attend contributes nothing, even a non-finite value.

    A plain p @ v multiplies the masked zeros of P by every row of V, and 0 x NaN = NaN: a NaN value at key j would
    poison the rows i < j that never attend it. Here the finite part is one matmul; each non-finite V[j, d] is then
    added, with IEEE rules (p x Inf, 0 x Inf = NaN), to the rows that attend key j (i >= j when causal, all when not).
    """
    p, v = np.asarray(p, np.float64), np.asarray(v, np.float64)
    bad = ~np.isfinite(v)
    o = p @ np.where(bad, 0.0, v)
    for idx in zip(*np.nonzero(bad)):
        *lead, j, d = idx
        rows = slice(j, None) if causal else slice(None)
        with np.errstate(invalid="ignore"):
            o[(*lead, rows, d)] += p[(*lead, rows, j)] * v[idx]
    return o


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """(q, k, v, do, causal) for size = (B, H, S, D, causal): torch tensors on `where`.

    q, k, v, dO ~ N(0, 1), with a few large entries in q (sharp rows: the running maximum must be rescaled late).
    For odd S, q, k and v are strided views of a (B, S, H, D) buffer (the layout a QKV projection produces), so the
    stride path is checked too; dO is always contiguous.
    """
    import torch

    b, h, s, d, causal = size
    dt = getattr(torch, dtype)
    strided = s % 2 == 1

    def one(spiky=False):
        a = rng.standard_normal((b, s, h, d) if strided else (b, h, s, d))
        if spiky and a.size > 8:
            a.flat[rng.integers(0, a.size, 4)] = 4.0
        t = torch.from_numpy(a.astype(np.float32)).to(device=where, dtype=dt)
        return t.transpose(1, 2) if strided else t

    q, k, v = one(spiky=True), one(), one()
    do = torch.from_numpy(rng.standard_normal((b, h, s, d)).astype(np.float32)).to(device=where, dtype=dt)
    return q, k, v, do, bool(causal)


def out_dtype(dtype: str):
    return (dtype, "float32", dtype, dtype, dtype)


def tolerance(size, dtype: str) -> check.Tol:
    # The dtype's default norm limit. bf16: the per-element limit is doubled (0.1 x (|ref| + mean|ref|)): a gradient
    # row of an early causal query sums over a handful of keys, so the bf16 rounding of O (inside delta =
    # rowsum(dO * O)) and of dS is not averaged away; seen in the interpreter at S = 67: 1.4x the default limit for
    # one dQ element of 8,576 (the naive version, cuBLAS matmuls and a bf16 S, reached 0.94x on the same inputs),
    # while the norm error stayed below 5e-3. Where dQ or dK is 0 in exact arithmetic (S = 1) the kernels leave
    # ~1e-7 of fp32 rounding; compare() then judges the difference's norm in absolute terms, far below the limit.
    # fp16: the same doubling, for the naive version, which stores S = QK^T in fp16 before the softmax: on the H200,
    # (1, 2, 1000, 128, causal) had one element of 256,000 at 1.1x the default limit (rel err 5.8e-4, far inside the
    # norm limit); both flash kernels keep S in fp32 and stayed within the default.
    # Measured on the H200 with another seed: (1, 1, 4097, 128, causal) bf16 had one element of 524,416 at 1.4x the
    # doubled bf16 limit in all three - the Triton kernels, the CUDA C forward AND torch's SDPA flash backend (the same
    # element, max abs 7.2e-3): a property of bf16 gradients at long causal rows, not of one kernel. So bf16 gets 3x
    # the default element limit (0.15 x (|ref| + mean|ref|)) and fp16 2x.
    # Short rows (S <= 16 keys) get an absolute floor of 16 u (u = 2^-8 bf16, 2^-11 fp16; the inputs are standard
    # normal, so gradients are of order 1). There dS = P (dP - delta) is a difference of a handful of dP values, and
    # the 16-bit roundings the algorithm makes on purpose - delta from the stored 16-bit O, P rounded for the PV and
    # dS K products - are not small next to it: in the CPU tier, seed 1376001856 (1, 1, 2, 64, causal) fp16 gave the
    # naive dQ 2.69e-3 against the 2e-3 norm limit, seed 9 (1, 1, 3, 64, causal) bf16 the flash dQ 3.5e-2 against 1e-2
    # (its delta 0.039 off, from the bf16 O the forward stored); a sweep of 40 seeds at S = 2, 3, 5 found relative errors up to 0.7 on
    # tiny exact gradients but absolute errors of at most 8 u (bf16 3.2e-2, fp16 2.9e-3). A masking or indexing bug
    # costs order 1, still 16x over the floor; long rows keep the limits above (they held at S = 67, 1000, 4097).
    t = check.tolerance(dtype)
    elem_factor = {"bfloat16": 3, "float16": 2}.get(dtype)
    if elem_factor is None:
        return t
    short = isinstance(size, (tuple, list)) and len(size) > 2 and int(size[2]) <= 16
    floor = 16 * check.UNIT_ROUNDOFF[dtype] if short else 0.0
    return check.Tol(t.rel_norm, elem_factor * t.elem, max(t.atol, floor))


# ---------------------------------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def naive_softmax_kernel(s_ptr, p_ptr, lse_ptr, seq, scale_log2, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
    # One program per row of the materialized S (B x H x S rows of S columns): read the row, mask, exp2, normalize,
    # write P and the row's LSE. 2 S elements of HBM traffic per row for ~5 S FLOPs: memory-bound by far.
    row = tl.program_id(0).to(tl.int64)
    i = row % seq                                           # the query index of this row
    cols = tl.arange(0, BLOCK)
    ok = cols < seq
    if CAUSAL:
        ok = ok & (cols <= i)
    x = tl.load(s_ptr + row * seq + cols, mask=ok, other=float("-inf")).to(tl.float32) * scale_log2
    m = tl.max(x, axis=0)
    e = tl.math.exp2(x - m)                                 # masked columns: exp2(-inf) = 0
    total = tl.sum(e, axis=0)
    p = tl.where(ok, e / total, 0.0)                       # masked: exactly 0, even in a row a NaN has poisoned
    tl.store(p_ptr + row * seq + cols, p.to(p_ptr.dtype.element_ty), mask=cols < seq)
    tl.store(lse_ptr + row, (m + tl.math.log2(total)) * 0.6931471805599453)


@triton.jit
def _bf16_rn_as_fp32(x):
    # Interpreter only (UPCAST): fp32 -> the nearest bf16 (ties to even), kept in fp32. Triton 3.9's interpreter
    # truncates in x.to(tl.bfloat16), a biased rounding the GPU's cvt.rn.bf16 does not have.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, qk_scale, n_heads, seq,
                    sq_b, sq_h, sq_s, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s, so_b, so_h, so_s,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                    UPCAST: tl.constexpr):
    # Flash attention forward. Program (i, bh): query rows [i BLOCK_M, (i+1) BLOCK_M) of head bh. qk_scale is the
    # softmax scale times log2(e), so every exponential is a bare exp2. The last dimension is contiguous; the batch,
    # head and sequence strides are arguments (strided views run without a copy); batch and head offsets are 64-bit.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // n_heads).to(tl.int64)
    h = (bh % n_heads).to(tl.int64)
    q_base = q_ptr + b * sq_b + h * sq_h
    k_base = k_ptr + b * sk_b + h * sk_h
    v_base = v_ptr + b * sv_b + h * sv_h
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq
    q = tl.load(q_base + offs_m[:, None] * sq_s + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    in_ty = q_ptr.dtype.element_ty
    if UPCAST:
        q = q.to(tl.float32)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)     # running row maximum (base-2 units, scaled)
    l_i = tl.zeros([BLOCK_M], tl.float32)                   # running row sum of 2^(s - m_i)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    # Two key ranges: [0, full_hi) needs no mask at all; [tail_lo, tail_hi) is masked. Causal: the tiles left of
    # the diagonal block are unmasked, the diagonal block (BLOCK_M / BLOCK_N tiles) is masked, everything right of
    # it is skipped. Non-causal: every whole tile is unmasked, only the ragged last one (S % BLOCK_N) is masked.
    if CAUSAL:
        full_hi = m0
        tail_lo = m0
        tail_hi = tl.minimum(m0 + BLOCK_M, seq)
    else:
        full_hi = (seq // BLOCK_N) * BLOCK_N
        tail_lo = full_hi
        tail_hi = seq
    for phase in tl.static_range(2):
        if phase == 0:
            lo = 0
            hi = full_hi
        else:
            lo = tail_lo
            hi = tail_hi
        for start_n in range(lo, hi, BLOCK_N):
            offs_kn = start_n + offs_n
            col_ok = offs_kn < seq
            if phase == 0:
                k = tl.load(k_base + offs_kn[:, None] * sk_s + offs_d[None, :])
                v = tl.load(v_base + offs_kn[:, None] * sv_s + offs_d[None, :])
            else:
                k = tl.load(k_base + offs_kn[:, None] * sk_s + offs_d[None, :], mask=col_ok[:, None], other=0.0)
                v = tl.load(v_base + offs_kn[:, None] * sv_s + offs_d[None, :], mask=col_ok[:, None], other=0.0)
            if UPCAST:
                k = k.to(tl.float32)
                v = v.to(tl.float32)
            qk = tl.dot(q, tl.trans(k))
            if phase == 1:
                keep = col_ok[None, :]
                if CAUSAL:
                    keep = keep & (offs_kn[None, :] <= offs_m[:, None])
                    # 0 x NaN = NaN in the P V product: a non-finite V row of this diagonal tile would reach the
                    # rows before its key, which do not attend it. Zero it for the product and carry it through the
                    # score instead (NaN for the rows that do attend it: those rows come out NaN, as they must).
                    v_bad = (v != v) | (tl.abs(v.to(tl.float32)) == float("inf"))
                    row_bad = tl.max(v_bad.to(tl.int32), 1) > 0
                    v = tl.where(v_bad, 0.0, v).to(v.dtype)
                    qk = tl.where(keep & row_bad[None, :], float("nan"), qk)
                qk = tl.where(keep, qk, float("-inf"))
            # the first tile of every row has at least one unmasked key (key 0, or key == row on the diagonal),
            # so m_new is finite from the first step on and exp2(m_i - m_new) never sees -inf - -inf
            m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            p = tl.math.exp2(qk * qk_scale - m_new[:, None])
            alpha = tl.math.exp2(m_i - m_new)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = acc * alpha[:, None]
            if UPCAST:
                p_in = _bf16_rn_as_fp32(p)
            else:
                p_in = p.to(in_ty)                          # P is rounded to the input dtype for the tensor cores
            acc = tl.dot(p_in, v, acc)
            m_i = m_new
    acc = acc / l_i[:, None]
    o_base = o_ptr + b * so_b + h * so_h
    tl.store(o_base + offs_m[:, None] * so_s + offs_d[None, :], acc.to(o_ptr.dtype.element_ty),
             mask=row_ok[:, None])
    tl.store(lse_ptr + bh.to(tl.int64) * seq + offs_m, (m_i + tl.math.log2(l_i)) * 0.6931471805599453, mask=row_ok)


@triton.jit
def attn_bwd_delta_kernel(o_ptr, do_ptr, delta_ptr, n_heads, seq, so_b, so_h, so_s, sdo_b, sdo_h, sdo_s,
                          HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    # delta_i = sum_d dO_id O_id = rowsum(P * dP) for row i: the term every dS element of the row subtracts.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // n_heads).to(tl.int64)
    h = (bh % n_heads).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    ok = (offs_m < seq)[:, None]
    o = tl.load(o_ptr + b * so_b + h * so_h + offs_m[:, None] * so_s + offs_d[None, :], mask=ok, other=0.0)
    do = tl.load(do_ptr + b * sdo_b + h * sdo_h + offs_m[:, None] * sdo_s + offs_d[None, :], mask=ok, other=0.0)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(delta_ptr + bh.to(tl.int64) * seq + offs_m, delta, mask=offs_m < seq)


@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, sm_scale, qk_scale,
                         n_heads, seq, sq_b, sq_h, sq_s, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s, sdo_b, sdo_h, sdo_s,
                         HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         CAUSAL: tl.constexpr, UPCAST: tl.constexpr):
    # Program (j, bh) owns keys [j BLOCK_N, (j+1) BLOCK_N): K_j and V_j stay on chip while the query blocks stream
    # past; P^T is rebuilt from Q K_j^T and the saved LSE, dV_j += P^T dO, dS^T = P^T * (V_j dO^T - delta),
    # dK_j += dS^T Q. Working on the transposed tiles keeps K_j, V_j as the left operands. dK, dV are contiguous.
    pid_n = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // n_heads).to(tl.int64)
    h = (bh % n_heads).to(tl.int64)
    q_base = q_ptr + b * sq_b + h * sq_h
    do_base = do_ptr + b * sdo_b + h * sdo_h
    row_base = bh.to(tl.int64) * seq
    n0 = pid_n * BLOCK_N
    offs_n = n0 + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    col_ok = offs_n < seq
    k = tl.load(k_ptr + b * sk_b + h * sk_h + offs_n[:, None] * sk_s + offs_d[None, :], mask=col_ok[:, None],
                other=0.0)
    v = tl.load(v_ptr + b * sv_b + h * sv_h + offs_n[:, None] * sv_s + offs_d[None, :], mask=col_ok[:, None],
                other=0.0)
    in_ty = q_ptr.dtype.element_ty
    if UPCAST:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    # Three query ranges: [diag_lo, diag_hi) the diagonal block (causal only, masked), [mid_lo, s_full) whole query
    # blocks that need no mask, [tail_lo, seq) the ragged last query block (masked). BLOCK_N % BLOCK_M == 0.
    s_full = (seq // BLOCK_M) * BLOCK_M
    if CAUSAL:
        diag_lo = n0
        diag_hi = tl.minimum(n0 + BLOCK_N, seq)
        mid_lo = n0 + BLOCK_N
    else:
        diag_lo = 0
        diag_hi = 0
        mid_lo = 0
    tail_lo = tl.maximum(s_full, mid_lo)
    offs_mb = tl.arange(0, BLOCK_M)
    for phase in tl.static_range(3):
        if phase == 0:
            lo = diag_lo
            hi = diag_hi
        elif phase == 1:
            lo = mid_lo
            hi = s_full
        else:
            lo = tail_lo
            hi = seq
        for start_m in range(lo, hi, BLOCK_M):
            offs_m = start_m + offs_mb
            row_ok = offs_m < seq
            if phase == 1:
                q = tl.load(q_base + offs_m[:, None] * sq_s + offs_d[None, :])
                do = tl.load(do_base + offs_m[:, None] * sdo_s + offs_d[None, :])
                lse2 = tl.load(lse_ptr + row_base + offs_m) * 1.4426950408889634
                delta = tl.load(delta_ptr + row_base + offs_m)
            else:
                q = tl.load(q_base + offs_m[:, None] * sq_s + offs_d[None, :], mask=row_ok[:, None], other=0.0)
                do = tl.load(do_base + offs_m[:, None] * sdo_s + offs_d[None, :], mask=row_ok[:, None], other=0.0)
                lse2 = tl.load(lse_ptr + row_base + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
                delta = tl.load(delta_ptr + row_base + offs_m, mask=row_ok, other=0.0)
            if UPCAST:
                q = q.to(tl.float32)
                do = do.to(tl.float32)
            p_t = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse2[None, :])
            if phase != 1:
                keep = row_ok[None, :]
                if CAUSAL:
                    keep = keep & (offs_m[None, :] >= offs_n[:, None])
                p_t = tl.where(keep, p_t, 0.0)              # a select, not a product: masked entries may be inf
            if UPCAST:
                dv = tl.dot(_bf16_rn_as_fp32(p_t), do, dv)
            else:
                dv = tl.dot(p_t.to(in_ty), do, dv)
            dp_t = tl.dot(v, tl.trans(do))
            ds_t = p_t * (dp_t - delta[None, :])
            if UPCAST:
                dk = tl.dot(_bf16_rn_as_fp32(ds_t), q, dk)
            else:
                dk = tl.dot(ds_t.to(in_ty), q, dk)
    dk = dk * sm_scale
    out = row_base * HEAD_DIM + offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    tl.store(dk_ptr + out, dk.to(dk_ptr.dtype.element_ty), mask=col_ok[:, None])
    tl.store(dv_ptr + out, dv.to(dv_ptr.dtype.element_ty), mask=col_ok[:, None])


@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, sm_scale, qk_scale,
                       n_heads, seq, sq_b, sq_h, sq_s, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s, sdo_b, sdo_h, sdo_s,
                       HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr,
                       UPCAST: tl.constexpr):
    # Program (i, bh) owns query rows [i BLOCK_M, (i+1) BLOCK_M): Q_i, dO_i, LSE_i and delta_i stay on chip while the
    # K/V blocks stream past (the forward's loop structure); dQ_i += dS K. dQ is contiguous.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = (bh // n_heads).to(tl.int64)
    h = (bh % n_heads).to(tl.int64)
    k_base = k_ptr + b * sk_b + h * sk_h
    v_base = v_ptr + b * sv_b + h * sv_h
    row_base = bh.to(tl.int64) * seq
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq
    q = tl.load(q_ptr + b * sq_b + h * sq_h + offs_m[:, None] * sq_s + offs_d[None, :], mask=row_ok[:, None],
                other=0.0)
    do = tl.load(do_ptr + b * sdo_b + h * sdo_h + offs_m[:, None] * sdo_s + offs_d[None, :], mask=row_ok[:, None],
                 other=0.0)
    lse2 = tl.load(lse_ptr + row_base + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + row_base + offs_m, mask=row_ok, other=0.0)
    in_ty = q_ptr.dtype.element_ty
    if UPCAST:
        q = q.to(tl.float32)
        do = do.to(tl.float32)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    if CAUSAL:
        full_hi = m0
        tail_lo = m0
        tail_hi = tl.minimum(m0 + BLOCK_M, seq)
    else:
        full_hi = (seq // BLOCK_N) * BLOCK_N
        tail_lo = full_hi
        tail_hi = seq
    for phase in tl.static_range(2):
        if phase == 0:
            lo = 0
            hi = full_hi
        else:
            lo = tail_lo
            hi = tail_hi
        for start_n in range(lo, hi, BLOCK_N):
            offs_kn = start_n + offs_n
            col_ok = offs_kn < seq
            if phase == 0:
                k = tl.load(k_base + offs_kn[:, None] * sk_s + offs_d[None, :])
                v = tl.load(v_base + offs_kn[:, None] * sv_s + offs_d[None, :])
            else:
                k = tl.load(k_base + offs_kn[:, None] * sk_s + offs_d[None, :], mask=col_ok[:, None], other=0.0)
                v = tl.load(v_base + offs_kn[:, None] * sv_s + offs_d[None, :], mask=col_ok[:, None], other=0.0)
            if UPCAST:
                k = k.to(tl.float32)
                v = v.to(tl.float32)
            p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse2[:, None])
            if phase == 1:
                keep = col_ok[None, :]
                if CAUSAL:
                    keep = keep & (offs_kn[None, :] <= offs_m[:, None])
                p = tl.where(keep, p, 0.0)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            if UPCAST:
                dq = tl.dot(_bf16_rn_as_fp32(ds), k, dq)
            else:
                dq = tl.dot(ds.to(in_ty), k, dq)            # dS rounded to the input dtype for the tensor cores
    dq = dq * sm_scale
    tl.store(dq_ptr + row_base * HEAD_DIM + offs_m[:, None] * HEAD_DIM + offs_d[None, :],
             dq.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])


# ---------------------------------------------------------------------------------------------------------------------
# Launch configurations
# ---------------------------------------------------------------------------------------------------------------------
def fwd_default(d: int, causal: bool = False) -> dict:
    """Forward tile: 128 query rows per program, 8 warps, 64 keys per step, 3 stages.

    Shared memory at D = 128, bf16: Q 32 KiB + 3 x (K 16 KiB + V 16 KiB) = 128 KiB, so one program per SM; the
    accumulator (128 x 128 fp32) is 64 registers a thread over 8 warps."""
    if INTERPRETER:       # small tiles: the ragged, diagonal and multi-tile paths all run at S ~ 70
        return {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1}
    return fwd_default_gpu(d, causal)


def bwd_default(d: int) -> dict:
    """Backward tiles: dK/dV kernel BLOCK_N1 keys per program, BLOCK_M1 queries per step; dQ kernel BLOCK_M2 queries
    per program, BLOCK_N2 keys per step. At D = 128 dK and dV (64 x 128 fp32 each) hold 64 registers a thread."""
    if INTERPRETER:
        return {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1}
    return bwd_default_gpu(d)


# Configs picked by tune() at a shape: {("fwd" | "bwd", D, causal, dtype): config}; the wrappers use them.
TUNED: dict = {}


def _check_config(kind: str, cfg: dict) -> None:
    pairs = (("BLOCK_M", "BLOCK_N"),) if kind == "fwd" else (("BLOCK_N1", "BLOCK_M1"), ("BLOCK_M2", "BLOCK_N2"))
    for big, small in pairs:
        if cfg[big] % cfg[small]:
            raise ValueError(f"config: {big}={cfg[big]} must be a multiple of {small}={cfg[small]} (the causal "
                             "diagonal block is walked in whole tiles)")


# ---------------------------------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _check_qkv(q, k, v, causal, sm_scale):
    """Validate q, k, v (B, H, S, D) and return (B, H, S, D, dtype, scale)."""
    dev = not INTERPRETER
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=dev, contiguous=False, libs=("torch",))
    if not (tuple(q.shape) == tuple(k.shape) == tuple(v.shape)):
        raise ValueError(f"q, k, v: shapes must match (B, H, S, D), got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    dts = {arrays.dtype_name(x) for x in (q, k, v)}
    if len(dts) != 1:
        raise TypeError(f"q, k, v: dtypes must match, got {arrays.dtype_name(q)}, {arrays.dtype_name(k)}, "
                        f"{arrays.dtype_name(v)}")
    if len({str(x.device) for x in (q, k, v)}) != 1:
        raise TypeError(f"q, k, v: must be on one device, got {q.device}, {k.device}, {v.device}")
    b, h, s, d = (int(n) for n in q.shape)
    if d not in HEAD_DIMS:
        raise ValueError(f"q: head dim D = {d} is not supported; expected one of {HEAD_DIMS}")
    if b * h * s == 0:
        raise ValueError(f"q: empty input, shape {tuple(q.shape)} (B, H and S must be at least 1)")
    if b * h > MAX_GRID_Y:
        raise ValueError(f"q: B x H = {b * h} programs on grid axis 1, over its limit {MAX_GRID_Y}")
    for name, x in (("q", q), ("k", k), ("v", v)):
        st = x.stride()
        if st[3] != 1:
            raise ValueError(f"{name}: the last (head) dimension must be contiguous (stride 1), got strides {st}; "
                             "pass x.contiguous()")
        if min(st) < 0 or (s - 1) * st[2] + d > INT32_MAX:
            raise ValueError(f"{name}: strides {st} put one head's rows beyond 32-bit offsets (or are negative)")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal: expected a bool, got {type(causal).__name__}")
    scale = 1.0 / math.sqrt(d) if sm_scale is None else sm_scale
    if not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"sm_scale: expected a positive finite number, got {sm_scale!r}")
    return b, h, s, d, dts.pop(), float(scale)


def _upcast(dtype: str) -> bool:
    """Interpreter only: Triton 3.9's interpreter multiplies the raw bits of bf16 tiles in tl.dot, so bf16 tiles are
    converted to fp32 before each dot, and P and dS are rounded to bf16 values (to nearest, as the GPU does) held in
    fp32 (_bf16_rn_as_fp32). Never on a GPU."""
    return INTERPRETER and dtype == "bfloat16"


def _bhs(x):
    st = x.stride()
    return int(st[0]), int(st[1]), int(st[2])


def _out(o, shape, dtype, like, name, strided: bool = False):
    """A checked output (a fresh contiguous one for None). strided=True accepts any view whose last dim is
    contiguous (the kernel takes its batch, head and sequence strides), e.g. a (B, H, S, D) view of a (B, S, H, D)
    buffer that the next GEMM reads as a plain matrix."""
    if o is None or not strided:
        o = arrays.check_out(o, shape, dtype, like, name=name)
    else:
        arrays.check_array(name, o, dtypes=(dtype,), ndim=len(shape), device=not INTERPRETER, contiguous=False,
                           libs=("torch",))
        if tuple(o.shape) != tuple(shape):
            raise ValueError(f"{name}: expected shape {tuple(shape)}, got {tuple(o.shape)}")
        if o.stride()[-1] != 1 or min(o.stride()) < 0 or (shape[2] - 1) * o.stride()[2] + shape[3] > INT32_MAX:
            raise ValueError(f"{name}: the last dimension must be contiguous (stride 1), got strides {o.stride()}")
    if str(o.device) != str(like.device):
        raise TypeError(f"{name}: expected an array on {like.device}, got {o.device}")
    return o


def flash_attn_fwd(q, k, v, causal: bool = False, sm_scale: float | None = None, out=None, *,
                   config: dict | None = None):
    """Flash attention forward on torch tensors (B, H, S, D): returns (o, lse).

    o: (B, H, S, D), q's dtype, contiguous; lse: (B, H, S) fp32, natural log of sum_j exp(scale q_i . k_j) over the
    keys row i attends to. q, k, v: fp16 or bf16, D in (64, 128), last dim contiguous (other strides free).
    out: None or a tuple (o, lse) to write into: o any view with a contiguous last dim, lse contiguous.
    GPU: CUDA tensors; no GPU: CPU tensors, run in the interpreter.
    """
    b, h, s, d, dt, scale = _check_qkv(q, k, v, causal, sm_scale)
    o_out, lse_out = (None, None) if out is None else out
    o = _out(o_out, (b, h, s, d), dt, q, "out[0] (o)", strided=True)
    lse = _out(lse_out, (b, h, s), "float32", q, "out[1] (lse)")
    cfg = dict(config or TUNED.get(("fwd", d, bool(causal), dt)) or fwd_default(d, bool(causal)))
    _check_config("fwd", cfg)
    grid = (triton.cdiv(s, cfg["BLOCK_M"]), b * h)
    launch(attn_fwd_kernel, grid, q, k, v, o, lse, scale * LOG2E, h, s, *_bhs(q), *_bhs(k), *_bhs(v), *_bhs(o),
           HEAD_DIM=d, BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"], CAUSAL=bool(causal), UPCAST=_upcast(dt),
           num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return o, lse


def flash_attn_bwd(do, q, k, v, o, lse, causal: bool = False, sm_scale: float | None = None, out=None, *,
                   config: dict | None = None):
    """Gradients of flash_attn_fwd for an upstream dO: returns (dq, dk, dv), contiguous, q's dtype.

    o and lse are what flash_attn_fwd returned (o may be any layout with a contiguous last dim, like dO).
    Three launches: delta = rowsum(dO * O); dK, dV (one program per key block); dQ (one program per query block).
    """
    b, h, s, d, dt, scale = _check_qkv(q, k, v, causal, sm_scale)
    for name, x in (("do", do), ("o", o)):
        arrays.check_array(name, x, dtypes=(dt,), ndim=4, device=not INTERPRETER, contiguous=False, libs=("torch",))
        if tuple(x.shape) != (b, h, s, d):
            raise ValueError(f"{name}: expected shape {(b, h, s, d)} like q, got {tuple(x.shape)}")
        if x.stride()[3] != 1 or (s - 1) * x.stride()[2] + d > INT32_MAX:
            raise ValueError(f"{name}: the last dimension must be contiguous, got strides {x.stride()}")
    arrays.check_array("lse", lse, dtypes=("float32",), ndim=3, device=not INTERPRETER, libs=("torch",))
    if tuple(lse.shape) != (b, h, s):
        raise ValueError(f"lse: expected shape {(b, h, s)}, got {tuple(lse.shape)}")
    dq_o, dk_o, dv_o = (None, None, None) if out is None else out
    dq = _out(dq_o, (b, h, s, d), dt, q, "out[0] (dq)")
    dk = _out(dk_o, (b, h, s, d), dt, q, "out[1] (dk)")
    dv = _out(dv_o, (b, h, s, d), dt, q, "out[2] (dv)")
    cfg = dict(config or TUNED.get(("bwd", d, bool(causal), dt)) or bwd_default(d))
    _check_config("bwd", cfg)
    delta = arrays.empty((b, h, s), "float32", q)
    pre_m = 128 if not INTERPRETER else 32
    launch(attn_bwd_delta_kernel, (triton.cdiv(s, pre_m), b * h), o, do, delta, h, s, *_bhs(o), *_bhs(do),
           HEAD_DIM=d, BLOCK_M=pre_m, num_warps=4)
    common_args = (scale, scale * LOG2E, h, s, *_bhs(q), *_bhs(k), *_bhs(v), *_bhs(do))
    launch(attn_bwd_dkdv_kernel, (triton.cdiv(s, cfg["BLOCK_N1"]), b * h), q, k, v, do, lse, delta, dk, dv,
           *common_args, HEAD_DIM=d, BLOCK_M=cfg["BLOCK_M1"], BLOCK_N=cfg["BLOCK_N1"], CAUSAL=bool(causal),
           UPCAST=_upcast(dt), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    launch(attn_bwd_dq_kernel, (triton.cdiv(s, cfg["BLOCK_M2"]), b * h), q, k, v, do, lse, delta, dq,
           *common_args, HEAD_DIM=d, BLOCK_M=cfg["BLOCK_M2"], BLOCK_N=cfg["BLOCK_N2"], CAUSAL=bool(causal),
           UPCAST=_upcast(dt), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return dq, dk, dv


@functools.lru_cache(maxsize=1)
def _function_class():
    import torch

    class FlashAttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, sm_scale):
            q, k, v = (t.detach() for t in (q, k, v))
            o, lse = flash_attn_fwd(q, k, v, causal, sm_scale)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.causal, ctx.sm_scale = causal, sm_scale
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            do = do if do.stride()[-1] == 1 else do.contiguous()
            dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, ctx.causal, ctx.sm_scale)
            return dq, dk, dv, None, None

    return FlashAttentionFunction


def flash_attention(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """Differentiable attention softmax(scale Q K^T [causal]) V on torch tensors (B, H, S, D), forward and backward
    by this lab's Triton kernels (for the transformer-block lab and for torch.autograd checks)."""
    return _function_class().apply(q, k, v, bool(causal), sm_scale)


# ---------------------------------------------------------------------------------------------------------------------
# Naive attention: S and P materialized in HBM
# ---------------------------------------------------------------------------------------------------------------------
def library_matmul(a, b):
    """The naive version's library GEMM: torch.matmul, which is cuBLAS on a GPU (16-bit operands, fp32 accumulation,
    the product rounded once to the operands' dtype).

    On the CPU the same semantics are computed from exact fp32 copies: torch's CPU bf16/fp16 matmul goes to oneDNN,
    whose AMX kernels (Intel CPUs with AMX-BF16, such as CI's) read the K tail of each row of `a` past its end when K
    is over 32 and not a multiple of 32, counting on zero padding in `b` to cancel it. NaN x 0 is NaN, so a NaN row of
    P (a head whose key is NaN) leaked into the neighbouring rows of O = P V (oneDNN issue 5717, fixed after the
    oneDNN 3.12 that torch 2.13 ships). fp32 GEMMs take another path, and fp32 accumulation is what cuBLAS does."""
    import torch

    if a.is_cuda or a.dtype == torch.float32:
        return torch.matmul(a, b)
    return torch.matmul(a.float(), b.float()).to(a.dtype)


def naive_attn_fwd(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """Three kernels: S = Q K^T (cuBLAS via torch.matmul, q's dtype), P = softmax(scale S) with the causal mask and
    the LSE (naive_softmax_kernel), O = P V (cuBLAS). Returns (o, lse, p); p is the S x S matrix it wrote."""
    import torch

    b, h, s, d, dt, scale = _check_qkv(q, k, v, causal, sm_scale)
    if s > NAIVE_MAX_S:
        raise ValueError(f"q: S = {s} is beyond the naive softmax's one-row-in-registers limit {NAIVE_MAX_S}")
    sm = library_matmul(q, k.transpose(-1, -2)).contiguous()   # (B, H, S, S): written to HBM
    p = torch.empty_like(sm)
    lse = torch.empty((b, h, s), dtype=torch.float32, device=q.device)
    block = max(16, triton.next_power_of_2(s))
    launch(naive_softmax_kernel, (b * h * s,), sm, p, lse, s, scale * LOG2E, BLOCK=block, CAUSAL=bool(causal),
           num_warps=4 if block <= 2048 else 8 if block <= 8192 else 16)
    o = library_matmul(p, v)
    return o, lse, p


def naive_attn_bwd(do, q, k, v, p, sm_scale: float | None = None):
    """The backward written the same way, with dP and dS (S x S each) in HBM: torch matmuls and elementwise ops."""
    import torch

    arrays.check_array("do", do, dtypes=(arrays.dtype_name(q),), ndim=4, device=not INTERPRETER, contiguous=False,
                       libs=("torch",))
    if tuple(do.shape) != tuple(q.shape):
        raise ValueError(f"do: expected shape {tuple(q.shape)} like q, got {tuple(do.shape)}")
    scale = 1.0 / math.sqrt(int(q.shape[-1])) if sm_scale is None else sm_scale
    dv = library_matmul(p.transpose(-1, -2), do)
    dp = library_matmul(do, v.transpose(-1, -2)).float()
    pf = p.float()
    ds = (pf * (dp - (pf * dp).sum(dim=-1, keepdim=True))).to(q.dtype)
    dq = library_matmul(ds, k) * scale
    dk = library_matmul(ds.transpose(-1, -2), q) * scale
    return dq, dk, dv


def naive_bytes(b, h, s, d, elt: int) -> int:
    """HBM bytes of naive_attn_fwd: read Q, K; write S; read S, write P; read P, V; write O; write LSE."""
    return elt * (4 * b * h * s * d + 4 * b * h * s * s) + 4 * b * h * s


def flash_bytes(b, h, s, d, elt: int) -> int:
    """Bytes the flash forward must move: read Q, K, V once, write O and the LSE (K/V re-reads hit L2)."""
    return elt * 4 * b * h * s * d + 4 * b * h * s


def attn_flops(b, h, s, d, causal: bool, backward: bool = False) -> float:
    f = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    return f * 2.5 if backward else f


# ---------------------------------------------------------------------------------------------------------------------
# Variants: each takes (q, k, v, do, causal) and returns (o, lse, dq, dk, dv) - forward, then backward for dO
# ---------------------------------------------------------------------------------------------------------------------
def _outs(out):
    out = (None,) * 5 if out is None else tuple(out)
    if len(out) != 5:
        raise TypeError("out: expected a 5-tuple (o, lse, dq, dk, dv) or None")
    return out


def _copy_into(outs, results):
    res = []
    for o, r in zip(outs, results):
        if o is None:
            res.append(r)
        else:
            if tuple(o.shape) != tuple(r.shape):
                raise ValueError(f"out: expected shape {tuple(r.shape)}, got {tuple(o.shape)}")
            o.copy_(r)
            res.append(o)
    return tuple(res)


def attention_naive(q, k, v, do, causal=False, out=None):
    """Naive forward (S, P in HBM) and naive backward (dP, dS in HBM)."""
    outs = _outs(out)
    o, lse, p = naive_attn_fwd(q, k, v, causal)
    grads = naive_attn_bwd(do, q, k, v, p)
    return _copy_into(outs, (o, lse) + grads)


def attention_flash(q, k, v, do, causal=False, out=None):
    """Triton flash forward, then the Triton backward from its O and LSE."""
    outs = _outs(out)
    o, lse = flash_attn_fwd(q, k, v, causal, out=outs[:2] if outs[0] is not None else None)
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


def _cuda_module():
    """phase4_optimization.attention_cuda (another part of this lab: CUDA C mma.sync forward), if it exists."""
    try:
        if importlib.util.find_spec("phase4_optimization.attention_cuda") is None:
            return None
    except (ImportError, ValueError):
        return None
    return importlib.import_module("phase4_optimization.attention_cuda")


def attention_cuda_fwd_triton_bwd(q, k, v, do, causal=False, out=None):
    """The CUDA C mma.sync forward (attention_cuda.flash_attn_cuda); the Triton backward then runs from ITS O and
    LSE, so a wrong LSE shows in the gradients too."""
    mod = _cuda_module()
    outs = _outs(out)
    # the CUDA C kernels take contiguous (B, H, S, D) only: strided views (odd S in the checks) are copied first
    o, lse = mod.flash_attn_cuda(q.contiguous(), k.contiguous(), v.contiguous(), causal=bool(causal))
    o, lse = _copy_into(outs[:2], (o, lse.reshape(tuple(q.shape[:3]))))
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


class _CudaVariant(lab.Variant):
    """Available only where attention_cuda says it can run (its unavailable_reason() is empty)."""

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if not ok:
            return ok, why
        reason = _cuda_module().unavailable_reason()
        return (not reason, reason or "")


# ---------------------------------------------------------------------------------------------------------------------
# Peers: torch SDPA with a chosen backend
# ---------------------------------------------------------------------------------------------------------------------
def _sdpa_backend(name: str):
    from torch.nn.attention import SDPBackend

    return {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[name]


def sdpa_fwd(q, k, v, causal: bool, backend: str):
    import torch.nn.functional as F
    from torch.nn.attention import sdpa_kernel

    with sdpa_kernel([_sdpa_backend(backend)]):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def sdpa_lse(q, k, v, causal: bool, backend: str):
    """(o, lse) from the backend's own aten op (the public SDPA does not return the LSE), lse as (B, H, S)."""
    import torch

    q, k, v = (t.contiguous() for t in (q, k, v))
    if backend == "cudnn":
        res = torch.ops.aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, causal, False)
    else:
        res = torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False)
    return res[0], res[1].float().reshape(tuple(q.shape[:3]))


@functools.lru_cache(maxsize=None)
def sdpa_unavailable(backend: str) -> str:
    """'' when the SDPA backend runs here (one small bf16 forward and backward is tried), else why not."""
    if not device.has_gpu():
        return "needs a GPU"
    try:
        import torch

        q, k, v = (torch.randn(1, 2, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        sdpa_fwd(q, k, v, False, backend).sum().backward()
        torch.cuda.synchronize()
        return ""
    except Exception as e:  # noqa: BLE001 - any failure means: skip this peer, say why
        return f"SDPA {backend} backend unavailable: {type(e).__name__}: {str(e)[:120]}"


@dataclasses.dataclass
class _PeerVariant(lab.Variant):
    """A torch SDPA backend; unavailable (with torch's reason) where the backend cannot run."""

    backend: str = "flash"

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if not ok:
            return ok, why
        reason = sdpa_unavailable(self.backend)
        return (not reason, reason)


def _peer(backend: str):
    def fn(q, k, v, do, causal=False, out=None):
        import torch

        outs = _outs(out)
        o, lse = sdpa_lse(q, k, v, causal, backend)
        qq, kk, vv = (t.detach().requires_grad_(True) for t in (q, k, v))
        o2 = sdpa_fwd(qq, kk, vv, causal, backend)
        dq, dk, dv = torch.autograd.grad(o2, (qq, kk, vv), do)
        return _copy_into(outs, (o, lse, dq, dk, dv))

    fn.__name__ = f"peer_sdpa_{backend}"
    fn.__doc__ = f"torch SDPA, {backend} backend: o and lse from its aten op, gradients through torch.autograd."
    return fn


VARIANTS = [
    lab.Variant("naive (cuBLAS QK^T, Triton softmax, cuBLAS PV; S x S in HBM)", attention_naive, "triton",
                dtypes=DTYPES),
    lab.Variant("triton flash fwd + bwd", attention_flash, "triton", dtypes=DTYPES),
]
if _cuda_module() is not None:
    VARIANTS.append(_CudaVariant("cuda mma.sync flash fwd (+ triton bwd)", attention_cuda_fwd_triton_bwd, "cuda",
                                 dtypes=DTYPES, note="phase4_optimization/lab06_attention.cu"))
def _cudnn_cannot_serve(size, dtype) -> str:
    """SDPA's cuDNN backend has no kernel for a sequence of one ("No available kernel" on the H200)."""
    return "cuDNN's SDPA has no kernel for S = 1" if int(size[2]) == 1 else ""


PEERS = [_PeerVariant("torch SDPA cuDNN", _peer("cudnn"), "peer", dtypes=DTYPES, backend="cudnn",
                      cannot_serve=_cudnn_cannot_serve),
         _PeerVariant("torch SDPA flash", _peer("flash"), "peer", dtypes=DTYPES, backend="flash")]

# (B, H, S, D, causal): S = 1, primes and non-multiples of every tile; odd S also runs the strided-view path
CHECK_CASES = [((1, 1, 1, 64, False), "bfloat16"), ((1, 1, 1, 128, True), "float16"),
               ((2, 3, 127, 64, True), "float16"), ((2, 2, 127, 128, False), "bfloat16"),
               ((1, 2, 1000, 128, False), "bfloat16"), ((1, 2, 1000, 128, True), "float16"),
               ((1, 2, 1000, 64, True), "bfloat16"), ((1, 1, 4097, 64, True), "bfloat16"),
               ((1, 2, 4097, 128, False), "float16"), ((1, 1, 4097, 128, True), "bfloat16")]
CPU_CHECK_CASES = [((1, 2, 1, 64, False), "bfloat16"), ((2, 1, 17, 64, True), "float16"),
                   ((1, 2, 67, 64, False), "bfloat16"), ((1, 2, 67, 64, True), "bfloat16")]
QUICK_CASES = 2


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report (no GPU needed)
# ---------------------------------------------------------------------------------------------------------------------
_TY = {"bfloat16": "*bf16", "float16": "*fp16"}
_STRIDES = ("sq_b", "sq_h", "sq_s", "sk_b", "sk_h", "sk_s", "sv_b", "sv_h", "sv_s")


@contextlib.contextmanager
def _helper_for_compiler():
    """In the interpreter, @triton.jit makes _bf16_rn_as_fp32 an interpreter function, which the compiler refuses to
    reference (even from a branch UPCAST=False never takes): swap in a compiler JITFunction while compiling."""
    if not INTERPRETER:
        yield
        return
    from triton.runtime.jit import JITFunction

    g = globals()
    saved = g["_bf16_rn_as_fp32"]
    g["_bf16_rn_as_fp32"] = JITFunction(getattr(saved, "fn", saved))
    try:
        yield
    finally:
        g["_bf16_rn_as_fp32"] = saved


def aot_kernel(kind: str, d: int = 128, causal: bool = False, dtype: str = "bfloat16", cc: int = 90,
               cfg: dict | None = None):
    """Compile one of the flash kernels for compute capability `cc` without a GPU (the GPU-size default config)."""
    ty = _TY[dtype]
    if cfg is None:
        cfg = (fwd_default_gpu(d, causal) if kind == "fwd" else bwd_default_gpu(d))
    ints = {n: "i32" for n in ("n_heads", "seq") + _STRIDES}
    div16 = ("q_ptr", "k_ptr", "v_ptr") + tuple(n for n in _STRIDES)
    if kind == "fwd":
        sig = {"q_ptr": ty, "k_ptr": ty, "v_ptr": ty, "o_ptr": ty, "lse_ptr": "*fp32", "qk_scale": "fp32", **ints,
               "so_b": "i32", "so_h": "i32", "so_s": "i32", "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr",
               "BLOCK_N": "constexpr", "CAUSAL": "constexpr", "UPCAST": "constexpr"}
        const = {"HEAD_DIM": d, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"], "CAUSAL": causal,
                 "UPCAST": False}
        with _helper_for_compiler():
            return compile_for(attn_fwd_kernel, sig, const, cc=cc, num_warps=cfg["num_warps"],
                               num_stages=cfg["num_stages"],
                               divisible_by_16=div16 + ("o_ptr", "lse_ptr", "so_b", "so_h", "so_s", "seq"))
    kern = attn_bwd_dkdv_kernel if kind == "bwd_dkdv" else attn_bwd_dq_kernel
    bm, bn = (cfg["BLOCK_M1"], cfg["BLOCK_N1"]) if kind == "bwd_dkdv" else (cfg["BLOCK_M2"], cfg["BLOCK_N2"])
    outs = {"dk_ptr": ty, "dv_ptr": ty} if kind == "bwd_dkdv" else {"dq_ptr": ty}
    sig = {"q_ptr": ty, "k_ptr": ty, "v_ptr": ty, "do_ptr": ty, "lse_ptr": "*fp32", "delta_ptr": "*fp32", **outs,
           "sm_scale": "fp32", "qk_scale": "fp32", **ints, "sdo_b": "i32", "sdo_h": "i32", "sdo_s": "i32",
           "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "CAUSAL": "constexpr",
           "UPCAST": "constexpr"}
    const = {"HEAD_DIM": d, "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": causal, "UPCAST": False}
    with _helper_for_compiler():
        return compile_for(kern, sig, const, cc=cc, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
                           divisible_by_16=div16 + tuple(outs) + ("do_ptr", "lse_ptr", "delta_ptr", "sdo_b",
                                                                  "sdo_h", "sdo_s", "seq"))


def fwd_default_gpu(d: int, causal: bool = False) -> dict:
    # 8 warps at D = 64 too: with 4, one warpgroup holds the 128 x 64 fp32 accumulator and the 128 x 64 score tile,
    # and the sm_90 compile report shows 255 registers a thread, the ceiling.
    # D = 128 without a mask: 128 keys per step, which the H200 tuning picked (results/h200/phase4_lab06_attention.json,
    # 'tuning': 517 vs 499 TFLOP/s for 64 keys); causal keeps 64 (446 vs 442), whose diagonal tiles waste less.
    if d >= 128 and not causal:
        return {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}


def bwd_default_gpu(d: int) -> dict:
    # The H200 tuning at B4 H32 S4096 D128 (results/h200/phase4_lab06_attention.json, 'tuning'): 128 keys per dK/dV
    # program and 128 queries per dQ program ran at 370 TFLOP/s, the all-64 tiles (the earlier D = 128 default) at
    # 179: twice the work per K/V (or Q) tile loaded. The same tiles are the default at D = 64.
    return {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8, "num_stages": 2}


def compile_summary(k) -> dict:
    """Resources of a compiled kernel: registers, spills (local memory), shared memory, tensor-core instructions."""
    from common.triton_support import summarize

    s = summarize(k)
    return {"kernel": s["kernel"], "warps": s["num_warps"], "stages": s["num_stages"], "regs": s["regs"],
            "local B": s["local"], "shared B": s["shared"], "wgmma": s["wgmma"], "mma.sync": s["mma_sync"],
            "cp.async": s["cp_async"]}


def compile_table(arch: str, kinds=(("fwd", 128, False), ("fwd", 128, True), ("fwd", 64, False),
                                    ("bwd_dkdv", 128, False), ("bwd_dq", 128, False))) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = []
    for kind, d, causal in kinds:
        t0 = time.perf_counter()
        try:
            r = compile_summary(aot_kernel(kind, d, causal, cc=cc))
        except Exception as e:  # noqa: BLE001 - a kernel that does not compile for this arch is reported, not fatal
            r = {"kernel": kind, "error": f"{type(e).__name__}: {str(e)[:120]}"}
        r.update({"part": kind, "D": d, "causal": causal, "compile s": round(time.perf_counter() - t0, 1)})
        rows.append(r)
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
# (label, kind, (B, H, S, D), causal, peer the target is against, goal)
TARGETS = [("fwd D128 non-causal", "fwd", (4, 32, 4096, 128), False, "torch SDPA cuDNN", 0.85),
           ("fwd D128 causal", "fwd", (4, 32, 4096, 128), True, "torch SDPA cuDNN", 0.85),
           ("fwd D64 non-causal", "fwd", (8, 32, 2048, 64), False, "torch SDPA cuDNN", 0.85),
           ("bwd D128 non-causal", "bwd", (4, 32, 4096, 128), False, "torch SDPA flash", 1.2)]
NAIVE_SHAPE = (4, 32, 2048, 128)
FWD_CANDIDATES = {128: [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}],
                  64: [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
                       {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
                       {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
                       {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 3}]}
BWD_CANDIDATES = {128: [bwd_default_gpu(128),
                        {"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "num_warps": 8,
                         "num_stages": 2},
                        {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8,
                         "num_stages": 2},
                        {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4,
                         "num_stages": 3}]}


def _randn(shape, dtype: str, seed: int):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(getattr(torch, dtype))


def tune(kind: str, shape, causal: bool, dtype: str, tensors, candidates) -> list[dict]:
    """Time each candidate once at this shape (what triton.autotune does, in the open); keep the fastest in TUNED.
    A candidate that does not compile (too much shared memory, say) is reported and skipped."""
    q, k, v, do, o, lse = tensors
    d = shape[3]
    rows = []
    for cfg in candidates:
        if kind == "fwd":
            fn = (lambda c=cfg: flash_attn_fwd(q, k, v, causal, out=(o, lse), config=c))
        else:
            fn = (lambda c=cfg: flash_attn_bwd(do, q, k, v, o, lse, causal, config=c))
        try:
            t = bench.bench(fn, rep_ms=30, warmup_ms=10)
            rows.append({"kind": kind, "shape": shape, "causal": causal, "config": cfg, "ms": t.median_ms,
                         "tflops": t.tflops(attn_flops(*shape, causal, backward=kind == "bwd"))})
        except Exception as e:  # noqa: BLE001 - out of resources etc.: report, try the next
            rows.append({"kind": kind, "shape": shape, "causal": causal, "config": cfg, "ms": None,
                         "error": f"{type(e).__name__}: {str(e)[:100]}"})
    timed = [r for r in rows if r["ms"] is not None]
    if timed:
        TUNED[(kind, d, causal, dtype)] = min(timed, key=lambda r: r["ms"])["config"]
    return rows


def _naive_torch_heads(q, k, v, causal, do=None, heads: int = 2):
    """Float64 attention on the GPU for the first `heads` heads of batch 0 (torch ops, S x S materialized): O, or with
    dO the gradients (dQ, dK, dV) by torch.autograd. A benchmark-sized problem is too big for NumPy on the host."""
    import torch

    qq, kk, vv = (t[:1, :heads].detach().double().requires_grad_(do is not None) for t in (q, k, v))
    s = qq.shape[-2]
    sc = torch.matmul(qq, kk.transpose(-1, -2)) / math.sqrt(qq.shape[-1])
    if causal:
        sc = sc.masked_fill(~torch.ones(s, s, dtype=torch.bool, device=sc.device).tril(), float("-inf"))
    o = torch.matmul(torch.softmax(sc, dim=-1), vv)
    if do is None:
        return o.detach()
    return torch.autograd.grad(o, (qq, kk, vv), do[:1, :heads].double())


def _sample_compare(got, ref, dtype: str, heads: int = 2) -> check.Comparison:
    """Compare the first `heads` heads of batch 0 with the float64 result for them (on the host)."""
    return check.compare(got[:1, :heads].float().cpu().numpy(), ref.double().cpu().numpy(), dtype,
                         tolerance(None, dtype))


def bench_targets(rounds: int = 3, do_tune: bool = True) -> tuple[list[dict], list[dict], list[dict]]:
    import torch

    rows, targets, tuning = [], [], []
    cuda_mod = _cuda_module()
    cuda_ok = cuda_mod is not None and not cuda_mod.unavailable_reason()
    for label, kind, shape, causal, peer, goal in TARGETS:
        b, h, s, d = shape
        dtype = "bfloat16"
        q, k, v, do = (_randn(shape, dtype, 100 + i) for i in range(4))
        o, lse = flash_attn_fwd(q, k, v, causal)
        if do_tune:
            cands = FWD_CANDIDATES.get(d, []) if kind == "fwd" else BWD_CANDIDATES.get(d, [])
            tuning += tune(kind, shape, causal, dtype, (q, k, v, do, o, lse), cands)
        flops = attn_flops(b, h, s, d, causal, backward=kind == "bwd")
        # correctness at the benchmark shape, against cuDNN's output / SDPA flash's gradients (sampled heads)
        if kind == "fwd":
            flash_attn_fwd(q, k, v, causal, out=(o, lse))
            c = _sample_compare(o, _naive_torch_heads(q, k, v, causal), dtype)
            fns = {"triton flash": lambda: flash_attn_fwd(q, k, v, causal, out=(o, lse))}
            for name, backend in (("torch SDPA cuDNN", "cudnn"), ("torch SDPA flash", "flash")):
                if not sdpa_unavailable(backend):
                    fns[name] = (lambda b_=backend: sdpa_fwd(q, k, v, causal, b_))
            if cuda_ok:
                fns["cuda mma.sync flash"] = lambda: cuda_mod.flash_attn_cuda(q, k, v, causal=causal)
        else:
            dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal)
            fns = {"triton flash": lambda: flash_attn_bwd(do, q, k, v, o, lse, causal)}
            for name, backend in (("torch SDPA cuDNN", "cudnn"), ("torch SDPA flash", "flash")):
                if sdpa_unavailable(backend):
                    continue
                qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
                out_ = sdpa_fwd(qq, kk, vv, causal, backend)
                fns[name] = (lambda o_=out_, i_=(qq, kk, vv): torch.autograd.grad(o_, i_, do, retain_graph=True))
            ref = _naive_torch_heads(q, k, v, causal, do)
            cs = [_sample_compare(g, r, dtype) for g, r in zip((dq, dk, dv), ref)]
            c = next((x for x in cs if not x.ok), cs[0])
        ts = bench.interleaved(fns, rounds=rounds, rep_ms=60, warmup_ms=20)
        for name, t in ts.items():
            impl = "triton" if name.startswith("triton") else "cuda" if name.startswith("cuda") else "peer"
            rows.append(report.row(LAB, f"{name} {kind}", impl, shape, dtype, t, flops=flops,
                                   nbytes=flash_bytes(b, h, s, d, 2), case=label, causal=causal,
                                   vs_peer=ts[peer].median_ms / t.median_ms if peer in ts else None,
                                   config=str(TUNED.get((kind, d, causal, dtype), "default"))
                                   if impl == "triton" else "",
                                   check=("ok" if c.ok else c.message) if impl == "triton" else ""))
        if peer in ts:
            ratio = ts[peer].median_ms / ts["triton flash"].median_ms
            targets.append({"case": f"{label} B{b} H{h} S{s} bf16", "peer": peer,
                            "triton TFLOP/s": ts["triton flash"].tflops(flops), "peer TFLOP/s": ts[peer].tflops(flops),
                            "ratio": ratio, "target": f">= {goal:.2f}", "met": bool(ratio >= goal and c.ok)})
        else:
            targets.append({"case": f"{label} B{b} H{h} S{s} bf16", "peer": peer, "target": f">= {goal:.2f}",
                            "met": f"not measured: {sdpa_unavailable('cudnn' if 'cuDNN' in peer else 'flash')}"})
    return rows, targets, tuning


def bench_naive(rounds: int = 3) -> list[dict]:
    """Naive against flash at a shape where S x S still fits comfortably: the bytes each moves, and the time."""
    b, h, s, d = NAIVE_SHAPE
    q, k, v = (_randn(NAIVE_SHAPE, "bfloat16", 200 + i) for i in range(3))
    o, lse = flash_attn_fwd(q, k, v, False)
    o_n, lse_n, p = naive_attn_fwd(q, k, v, False)
    c = _sample_compare(o_n, _naive_torch_heads(q, k, v, False), "bfloat16")
    del p
    ts = bench.interleaved({"naive": lambda: naive_attn_fwd(q, k, v, False),
                            "triton flash": lambda: flash_attn_fwd(q, k, v, False, out=(o, lse))},
                           rounds=rounds, rep_ms=60, warmup_ms=20)
    rows = []
    for name, nbytes in (("naive", naive_bytes(b, h, s, d, 2)), ("triton flash", flash_bytes(b, h, s, d, 2))):
        rows.append(report.row(LAB, f"{name} fwd", "triton", NAIVE_SHAPE, "bfloat16", ts[name], nbytes=nbytes,
                               flops=attn_flops(b, h, s, d, False), ceiling_gbps=bench.ceilings()["hbm_gbps"],
                               case="naive vs flash", GB=nbytes / 1e9,
                               check="ok" if c.ok else f"naive o vs float64: {c.message}"))
    return rows


def plot(rows: list[dict], path: str) -> str:
    labels = [f"{r['case']}: {r['variant']}" for r in rows]
    return report.plot_bars(path, labels, [r["tflops"] or 0.0 for r in rows], ylabel="TFLOP/s (4 B H S^2 D fwd, "
                            "halved causal; bwd 2.5x)", title=f"Attention bf16 on {device.info().name}",
                            colors=[report.IMPL_COLORS.get(r["impl"], "gray") for r in rows])


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    p.add_argument("--compile-report", action=argparse.BooleanOptionalAction, default=None,
                   help="compile the flash kernels for --arch ahead of time and show their resources (default: on "
                        "without a GPU unless --quick)")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    gpu = device.has_gpu()
    cases = CHECK_CASES if gpu else CPU_CHECK_CASES
    todo = cases[:QUICK_CASES] if args.quick else cases
    _, ok = lab.check_variants(this, VARIANTS, todo)
    peers_ok = True
    if gpu:
        # a peer that refuses or misses a case (say cuDNN at S = 1) is reported, and does not stop our benchmark
        _, peers_ok = lab.check_variants(this, PEERS, todo)
    want_report = args.compile_report if args.compile_report is not None else (not gpu and not args.quick)
    compile_rows = []
    if want_report:
        compile_rows = compile_table(args.arch)
        report.print_table(compile_rows, ["part", "D", "causal", "warps", "stages", "regs", "local B", "shared B",
                                          "wgmma", "mma.sync", "cp.async", "compile s", "error"],
                           title=f"flash kernels compiled ahead of time for {args.arch} (bf16, GPU default tiles)")
    if not gpu:
        cuda_note = ("the CUDA C forward (attention_cuda) needs a GPU and was not run"
                     if _cuda_module() is not None else "no CUDA C forward module (attention_cuda) is present")
        print("\nRan in the interpreter: the naive attention (torch matmuls + the Triton softmax kernel) and the flash "
              "forward and backward\n(small tiles, S up to 67, causal and not, ragged tails, strided views), against "
              f"float64 NumPy; {cuda_note}.\nTiming, tuning and the SDPA peers need a GPU.")
        return 0 if ok else 1
    if not ok:
        print("correctness failed: not benchmarking")
        return 1
    if not peers_ok:
        print("a library peer failed a check case (see the table above); benchmarking anyway, ours passed")
    if not args.bench:
        return 0
    rows, targets, tuning = bench_targets(rounds=1 if args.quick else 3, do_tune=not args.quick)
    naive_rows = bench_naive(rounds=1 if args.quick else 2)
    report.print_table(rows, ["case", "variant", "shape", "ms", "tflops", "vs_peer", "config", "check"],
                       title="Attention, bf16 (TFLOP/s: 4 B H S^2 D forward, halved for causal, backward 2.5x)")
    report.print_table(naive_rows, ["variant", "shape", "ms", "GB", "gbps", "frac_ceiling", "tflops", "check"],
                       title=f"Naive (S and P in HBM) against flash, forward, {NAIVE_SHAPE} non-causal "
                             "(GB: bytes each must move)")
    if tuning:
        report.print_table([dict(r, config=str(r["config"])) for r in tuning],
                           ["kind", "shape", "causal", "config", "ms", "tflops", "error"],
                           title="Tuning at the target shapes (one timing per candidate; the fastest is used above)")
    report.print_table(targets, title="Performance targets (issue 11)")
    out_dir = args.out or report.results_dir()
    all_rows = rows + naive_rows
    if args.json:
        print("wrote", report.write_json(LAB, all_rows, out_dir=out_dir, targets=targets, tuning=tuning,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(all_rows, os.path.join(out_dir, f"{LAB}.png")))
    return 0 if all(r.get("check") in ("", "ok") for r in all_rows) else 1


if __name__ == "__main__":
    sys.exit(main())
