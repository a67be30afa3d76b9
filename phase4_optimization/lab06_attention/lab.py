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
  * what Triton's tl.dot did for you, by hand (kernels.cu): the same forward in CUDA C with mma.sync m16n8k16, the
    fragment layouts, ldmatrix (plain and .trans) to fill them, the Q K^T accumulator reused as the A operand of P V
    without touching shared memory, an online softmax across the four threads of a quad, then cp.async double
    buffering and an XOR swizzle (rung 01 -> rung 02);
  * where the time goes: attention at long S is compute-bound, so the figure of merit is TFLOP/s against the tensor
    cores (and against cuDNN's and FlashAttention-2's kernels, behind torch's SDPA, in the same run).

The two numbers (main case: bf16, B 4, H 32, S 4096, D 128, non-causal):
  FLOPs = 4 B H S^2 D (two matmuls of 2 S^2 D each per head) = 1.10 TFLOP (halved for causal); the backward does 2.5x
  that (five matmuls instead of two, P recomputed). Bytes that must move = Q, K, V read + O written = 4 B H S D x 2 B
  = 537 MB (+ 2 MB of LSE): 2048 FLOP/B, an order of magnitude above the bf16 ridge point of any current GPU
  (`--plan` prints this GPU's), so compute wins by far: moving the bytes once costs a small fraction of the tensor
  cores' time. The naive version adds S and P, B H S^2 elements
  each, written and read back: 4 accesses x B H S^2 x 2 bytes = 17 GB at this shape, 32x the flash bytes, ~60 FLOP/B:
  below the ridge, memory-bound however fast its matmuls are. The benchmark shows it at S = 2048 next to flash.
Predictions: flash forward within ~0.85x of cuDNN at D = 128 (the kernel is a plain-pointer Triton kernel: its loads
are cp.async from every warp, where cuDNN's Hopper kernels use TMA and warp-specialized producers); the naive forward
~10x slower than flash at S = 2048; the backward below the forward in TFLOP/s (more registers per program, dS
rounded and re-read); the CUDA C rung 02 2-3x rung 01 and near SDPA's FlashAttention-2 backend (the same structure
with 16 query rows per warp where FA2 has 32). Targets, same run: forward bf16 (B, H, S, D) = (4, 32, 4096, 128)
>= 0.85x SDPA cuDNN, non-causal and causal; forward bf16 (8, 32, 2048, 64) non-causal >= 0.85x cuDNN; backward bf16
(4, 32, 4096, 128) non-causal >= 1.2x SDPA flash; CUDA C rung 02 >= 1.0x SDPA flash at the first shape. What was
measured, and what it taught: README.md. On a GPU whose memory cannot hold a shape, the benchmark halves B until it
fits (and says so); `--plan [--gpu NAME]` prints every launch of these cases on a GPU, its tiles and where they came
from.

Without a GPU the naive and flash kernels run in Triton's interpreter with small tiles (32 x 16 forward), so the
ragged, diagonal and multi-tile paths all run at S ~ 70; two interpreter faults are worked around there only (bf16
tiles go to tl.dot as fp32, and P and dS are rounded to bf16 to nearest, as the GPU does: see _upcast); the Triton
kernels are compiled ahead of time for --arch (default sm_90, with that GPU's tiles) and the CUDA C ones with NVRTC,
to show their registers, shared memory and tensor-core instructions, and the CUDA C forward's tiling and one warp's
fragments are modelled in NumPy.

API for other labs: flash_attention(q, k, v, causal=False, sm_scale=None) (differentiable, torch tensors),
flash_attn_fwd(q, k, v, causal, sm_scale, out=None) -> (o, lse), flash_attn_bwd(do, q, k, v, o, lse, causal, ...),
flash_attn_cuda(q, k, v, causal=False, sm_scale=None, out=None) -> (o, lse) (the CUDA C forward, GPU only). The
three Triton entry points also take grouped-query / multi-query k, v of shape (B, Hkv, Sk, D), Hkv dividing Hq, and
Sq != Sk, the causal mask aligned bottom-right (j <= i + Sk - Sq) as in reference(); the naive version and the CUDA C
forward take q, k, v of one shape. hopper.flash_attn_hopper(q, k, v, causal=False, sm_scale=None, out=None) -> (o, lse)
is the sm_90a forward (kernels_hopper.cu: wgmma + TMA, warp-specialized; grouped-query k, v, Sq == Sk), wrapped
below as HOPPER_VARIANT.

Run: python -m phase4_optimization.lab06_attention [--quick] [--no-bench] [--compile-report] [--arch sm_90] [--replot]
     [--plan [--gpu NAME]] [--set FWD_BLOCK_N=64] [--set NWARPS=8] [--set STAGES_06=2]
"""
from __future__ import annotations

import dataclasses
import functools
import math
import os
import sys

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import (attn_bwd_delta_kernel, attn_bwd_dkdv_kernel, attn_bwd_dq_kernel, attn_fwd_kernel,
                             naive_softmax_kernel)

LAB = "phase4_lab06_attention"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
DTYPES = ("bfloat16", "float16")
HEAD_DIMS = (64, 128)              # the CUDA C kernels' head dims, and the ones the benchmarks time
# The Triton flash kernels': a head dim that is not a power of two runs in a tile padded to the next one (BLOCK_D)
FLASH_HEAD_DIMS = (32, 64, 80, 96, 128, 256)


def block_d(d: int) -> int:
    """The head-dim tile of the Triton kernels: d rounded up to a power of two (at least 16, tl.dot's minimum)."""
    return max(16, 1 << (int(d) - 1).bit_length())
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453
MAX_GRID_Y = 65535                    # grid axis 1 carries batch x heads
NAIVE_MAX_S = 16384                   # the naive softmax keeps a whole row in registers
INT32_MAX = 2**31 - 1
NAIVE_BF16_ELEM_FACTOR = 2             # the naive version's bf16 element limit over the flash kernels' (tolerance())


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(q, k, v, do, causal: bool = False, sm_scale: float | None = None):
    """Float64 attention and its gradients: (O, LSE, dQ, dK, dV), LSE in natural log, (B, Hq, Sq).

    Shapes: q and do (B, Hq, Sq, D), k and v (B, Hkv, Sk, D), Hkv dividing Hq: grouped-query attention, query head h
    reading key/value head h // (Hq / Hkv) (multi-query when Hkv = 1; the usual case Hkv = Hq, Sq = Sk).
    Forward: S = scale Q K^T; causal masks key j for query i unless j <= i + (Sk - Sq) - the mask aligned to the
    bottom-right corner, as FlashAttention does, which is the ordinary lower triangle when Sq = Sk; P = softmax(S) by
    rows, LSE = log(sum(exp(S))), O = P V. A query row with no key left (causal, Sq > Sk) has O = 0, LSE = -inf and
    zero gradients. Backward, for an upstream gradient dO: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(P * dP)),
    dQ = scale dS K, dK = scale dS^T Q, dK and dV summed over the query heads that share a key/value head.
    """
    q, k, v, do = (np.asarray(a, np.float64) for a in (q, k, v, do))
    group = _group(q, k, v)
    kx, vx = (np.repeat(t, group, axis=1) for t in (k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    p, lse = _probabilities(q, kx, causal, scale)
    o = probabilities_times_values(p, vx, causal)
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(vx, -1, -2)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    dq = ds @ kx * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    b, hkv, sk, d = k.shape
    return o, lse, dq, dk.reshape(b, hkv, group, sk, d).sum(axis=2), dv.reshape(b, hkv, group, sk, d).sum(axis=2)


def _group(q, k, v) -> int:
    """Query heads per key/value head, after checking that the shapes fit together (ValueError naming the argument)."""
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"q, k, v: expected (B, H, S, D) arrays, got {q.shape}, {k.shape}, {v.shape}")
    if k.shape != v.shape:
        raise ValueError(f"v: shape {v.shape} must equal k's {k.shape}")
    if q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(f"k: batch and head dim {k.shape[0]}, {k.shape[3]} must match q's {q.shape[0]}, {q.shape[3]}")
    if k.shape[1] < 1 or q.shape[1] % k.shape[1]:
        raise ValueError(f"k: its {k.shape[1]} heads must divide q's {q.shape[1]} (grouped-query attention)")
    return q.shape[1] // k.shape[1]


def causal_mask(sq: int, sk: int) -> np.ndarray:
    """(Sq, Sk) booleans: query i attends key j when j <= i + (Sk - Sq) (bottom-right aligned)."""
    return np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)


def _probabilities(q, k, causal: bool, scale: float):
    """P = softmax(scale Q K^T [causal]) by rows and LSE (natural log), float64; k has q's heads here."""
    sq, sk = q.shape[-2], k.shape[-2]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    mask = causal_mask(sq, sk) if causal else None
    if causal:
        s = np.where(mask, s, -np.inf)
    with np.errstate(invalid="ignore"):
        m = s.max(axis=-1, keepdims=True) if sk else np.full(s.shape[:-1] + (1,), -np.inf)
        e = np.exp(s - m)
        l_ = e.sum(axis=-1, keepdims=True)
        p = e / l_
    lse = (m + np.log(l_))[..., 0] if sk else m[..., 0]
    if causal:
        # masked probabilities are exactly 0 even when the row's max or sum is NaN (exp(-inf - NaN) and 0 / NaN are
        # NaN): a NaN in query row i must not reach the keys it never attends to - as in the kernels. A row with no
        # key at all (Sq > Sk) has P = 0 and LSE = -inf.
        p = np.where(mask, p, 0.0)
        empty = ~mask.any(axis=-1)
        lse = np.where(empty, -np.inf, lse)
    return p, lse


def forward_reference(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """(O, LSE) of reference() without the gradients, for any arrays (torch GPU tensors too): the forward-only
    checks of the CUDA C kernels and of the NumPy model of their tiling."""
    q, k, v = (np.asarray(arrays.to_numpy(x), np.float64) for x in (q, k, v))
    group = _group(q, k, v)
    k, v = (np.repeat(t, group, axis=1) for t in (k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    p, lse = _probabilities(q, k, causal, scale)
    return probabilities_times_values(p, v, causal), lse


def probabilities_times_values(p, v, causal: bool):
    """O = P V in float64, where a key a row does not attend contributes nothing, even a non-finite value.

    A plain p @ v multiplies the masked zeros of P by every row of V, and 0 x NaN = NaN: a NaN value at key j would
    poison the rows that never attend it. Here the finite part is one matmul; each non-finite V[j, d] is then added,
    with IEEE rules (p x Inf, 0 x Inf = NaN), to the rows that attend key j (i >= j - (Sk - Sq) when causal, all when
    not).
    """
    p, v = np.asarray(p, np.float64), np.asarray(v, np.float64)
    bad = ~np.isfinite(v)
    o = p @ np.where(bad, 0.0, v)
    shift = v.shape[-2] - p.shape[-2]
    for idx in zip(*np.nonzero(bad)):
        *lead, j, d = idx
        rows = slice(max(j - shift, 0), None) if causal else slice(None)
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


def tolerance(size, dtype: str, variant=None) -> check.Tol:
    # The dtype's default norm limit, with wider per-element limits where 16-bit attention gradients are known to
    # stray (the lesson, README.md "The tolerance", has every case measured and the sweeps behind these numbers):
    #   * bf16: 3x the default element limit (0.15 x (|ref| + mean|ref|)), fp16 2x. A gradient row of an early causal
    #     query sums over a handful of keys, so the 16-bit roundings of O (inside delta = rowsum(dO * O)) and of dS are
    #     not averaged away; at long causal rows the Triton kernels, the CUDA C forward and torch's SDPA flash backend
    #     all put the same element of a bf16 gradient past 2x: a property of bf16 gradients, not of one kernel. The
    #     naive version stores S = QK^T in 16 bits before its softmax, which costs fp16 the same doubling.
    #   * short rows (S <= 16 keys): an absolute floor of 16 u (u = 2^-8 bf16, 2^-11 fp16; the inputs are standard
    #     normal, so gradients are of order 1). There dS = P (dP - delta) is a difference of a handful of dP values,
    #     and the roundings the algorithm makes on purpose are not small next to it: sweeps of seeds at S = 2, 3, 5
    #     found absolute errors of at most 8 u. A masking or indexing bug costs order 1, still 16x over the floor.
    #     Where dQ or dK is 0 in exact arithmetic (S = 1) the kernels leave ~1e-7 of fp32 rounding; compare() then
    #     judges the difference's norm in absolute terms, far below the limit.
    #   * the naive version in bf16 (variant: the lab.Variant under check, which the check driver passes where
    #     tolerance() takes it; None, or any other variant, gets the limits above): twice the flash kernels' element
    #     limit (0.3 x (|ref| + mean|ref|)). It rounds S to bf16 before the softmax, then P, where the flash kernels
    #     keep S in fp32: a logit is off by up to u times its size, so P's error grows with the score. A NumPy
    #     emulation of its roundings, and torch's own bf16 attention written the same way, reproduce the worst element
    #     seen to the bit; over a sweep of seeds the worst reached 1.37x the 3x limit at S = 4097, inside the 2x
    #     (forward) to 3x (gradients) FlashAttention's tests allow a kernel over a reference. A causal mask one key
    #     too wide still fails it (tests/test_phase4_lab06_attention_naive_tolerance.py). fp16 (u 8x smaller) keeps
    #     the limits above.
    t = check.tolerance(dtype)
    elem_factor = {"bfloat16": 3, "float16": 2}.get(dtype)
    if elem_factor is None:
        return t
    if dtype == "bfloat16" and getattr(variant, "fn", None) is attention_naive:
        elem_factor *= NAIVE_BF16_ELEM_FACTOR
    short = isinstance(size, (tuple, list)) and len(size) > 2 and int(size[2]) <= 16
    floor = 16 * check.UNIT_ROUNDOFF[dtype] if short else 0.0
    return check.Tol(t.rel_norm, elem_factor * t.elem, max(t.atol, floor))


# ---------------------------------------------------------------------------------------------------------------------
# Triton launch configurations: one resolution per kernel family (common.config), used by the wrappers and the plan
# ---------------------------------------------------------------------------------------------------------------------
# The names a learner passes to --set for each field (FWD_BLOCK_N=64, BWD_WARPS=4, FWD_TMA=1); the config dicts, the
# tuning candidates and the tuned record keep the kernels' own names (BLOCK_N, num_warps, TMA)
FWD_SETTINGS = {"BLOCK_M": "FWD_BLOCK_M", "BLOCK_N": "FWD_BLOCK_N", "num_warps": "FWD_WARPS",
                "num_stages": "FWD_STAGES", "TMA": "FWD_TMA", "WS": "FWD_WS", "PIPE": "FWD_PIPE"}
BWD_SETTINGS = {"BLOCK_M1": "BWD_BLOCK_M1", "BLOCK_N1": "BWD_BLOCK_N1", "BLOCK_M2": "BWD_BLOCK_M2",
                "BLOCK_N2": "BWD_BLOCK_N2", "num_warps": "BWD_WARPS", "num_stages": "BWD_STAGES"}
SETTINGS = {"fwd": FWD_SETTINGS, "bwd": BWD_SETTINGS}
# Without a GPU: small tiles, so the ragged, diagonal and multi-tile paths all run at S ~ 70 in the interpreter
INTERPRETER_TILES = {"fwd": {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1},
                     "bwd": {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4,
                             "num_stages": 1}}


def fwd_default(d: int, causal: bool = False, gpu: device.DeviceInfo | None = None) -> dict:
    """The forward's default tile: the interpreter's small one on this machine without a GPU, else fwd_default_gpu
    (for `gpu`, a simulated one in a plan, or the GPU at hand)."""
    if INTERPRETER and gpu is None:
        return dict(INTERPRETER_TILES["fwd"])
    return fwd_default_gpu(d, causal, gpu)


def bwd_default(d: int, gpu: device.DeviceInfo | None = None) -> dict:
    """The backward's default tiles (see fwd_default): dK/dV kernel BLOCK_N1 keys per program, BLOCK_M1 queries per
    step; dQ kernel BLOCK_M2 queries per program, BLOCK_N2 keys per step."""
    if INTERPRETER and gpu is None:
        return dict(INTERPRETER_TILES["bwd"])
    return bwd_default_gpu(d, gpu)


def fwd_preferred(d: int, causal: bool = False) -> dict:
    """The forward tile the lab prefers on a GPU whose shared memory holds it: 128 query rows per program, 8 warps,
    64 keys per step (128 at D = 128 non-causal), 3 stages. Shared memory at D = 128, bf16: Q 32 KiB + 3 x (K 16 KiB
    + V 16 KiB) = 128 KiB, so one program per SM; the accumulator (128 x 128 fp32) is 64 registers a thread over 8
    warps."""
    # 8 warps at D = 64 too: with 4, one warpgroup holds the 128 x 64 fp32 accumulator and the 128 x 64 score tile,
    # and the sm_90 compile report shows 255 registers a thread, the ceiling.
    # D = 128 without a mask: 128 keys per step, which the lab's tuning picked on the GPU of its committed results
    # (64 and 128 keys were within a few percent of each other: the lesson, README.md); causal keeps 64, whose
    # diagonal tiles waste less.
    # D = 256 (untuned): half the query rows and 32 keys a step, 2 stages - Q 32 KiB + 2 x (K + V) 32 KiB each,
    # and a 64 x 256 fp32 accumulator, 64 registers a thread over 8 warps.
    if d > 128:
        return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2}
    if d >= 128 and not causal:
        return {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}


def bwd_preferred(d: int) -> dict:
    """The backward tiles the lab prefers: 64-query steps over 128-key dK/dV programs, 128-query dQ programs over
    64-key steps, 8 warps, 2 stages."""
    # The lab's tuning (B 4, H 32, S 4096, D 128): 128 keys per dK/dV program and 128 queries per dQ program ran about
    # twice as fast as the all-64 tiles (twice the work per K/V, or Q, tile loaded); the lesson has the table. The
    # same tiles are the default at D = 64 (and below).
    # D = 256 (untuned): dK and dV of 64 keys x 256 fp32 are already 128 registers a thread over 8 warps, so 64-key
    # programs and 64-query dQ programs, 32 rows a step.
    if d > 128:
        return {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 8, "num_stages": 1}
    return {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8, "num_stages": 2}


# Where a GPU's shared memory per block cannot hold the preferred tile (the preferred D = 128 forward asks for about
# 224 KiB, which only the largest shared memories offer; the 99 KiB of sm_86/89/120 and sm_80's 163 KiB do not): the
# first of these that fits, largest first. Fewer stages first (the pipeline loses depth, the tile keeps its reuse),
# then narrower key steps, then fewer query rows.
FWD_FALLBACKS = [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
                 {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2},
                 {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
                 {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2},
                 {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1}]
BWD_FALLBACKS = [{"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "num_warps": 8, "num_stages": 2},
                 {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4, "num_stages": 2},
                 {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1}]
FALLBACKS = {"fwd": FWD_FALLBACKS, "bwd": BWD_FALLBACKS}
SMEM_SLACK = 2048          # barriers and scratch some targets add to the tiles (about 1 KiB on sm_100)


def smem_estimate(kind: str, cfg: dict, d: int, elt: int = 2, arch: str = "sm_90") -> int:
    """Bytes of shared memory a flash kernel with this tile asks for on `arch`, from above: the tiles it keeps on chip
    plus num_stages copies of each tile it streams (what Triton allocates for sm_90's asynchronous pipeline; the
    mma.sync architectures keep one copy fewer), plus SMEM_SLACK. Forward: Q (BLOCK_M x D) kept, K and V (BLOCK_N x
    D each) streamed. Backward: the larger of the dK/dV kernel (K and V of BLOCK_N1 keys kept; Q, dO of BLOCK_M1 rows
    and their LSE and delta streamed) and the dQ kernel (Q and dO of BLOCK_M2 rows kept, K and V of BLOCK_N2 keys
    streamed); on sm_100 the backward's score-sized tiles (P^T and dS^T, dS) pass through shared memory too. One
    stage is counted as two: without a pipeline the mma.sync path still stages a streamed tile twice (a layout
    conversion). tests/test_gpu_plans.py compiles the tiles it picks for every GPU of the table and checks them."""
    bd, st = block_d(d), max(2, cfg["num_stages"])
    if kind == "fwd":
        return elt * bd * (cfg["BLOCK_M"] + st * 2 * cfg["BLOCK_N"]) + SMEM_SLACK
    scores = device.arch_info(arch).cc // 10 == 10          # sm_100 / sm_103: tcgen05 reads them from shared memory
    dkdv = elt * bd * (2 * cfg["BLOCK_N1"] + st * 2 * cfg["BLOCK_M1"]) + st * cfg["BLOCK_M1"] * 8
    dkdv += 2 * elt * cfg["BLOCK_N1"] * cfg["BLOCK_M1"] if scores else 0
    dq = elt * bd * (2 * cfg["BLOCK_M2"] + st * 2 * cfg["BLOCK_N2"])
    dq += elt * cfg["BLOCK_M2"] * cfg["BLOCK_N2"] if scores else 0
    return max(dkdv, dq) + SMEM_SLACK


def _gpu(gpu: device.DeviceInfo | None) -> device.DeviceInfo:
    """`gpu`, else the GPU every prediction uses here (the one at hand, or the profile --gpu / --arch chose)."""
    return gpu if gpu is not None else device.current()


def gpu_of_arch(arch: str) -> device.DeviceInfo:
    """The GPU a compile for `arch` describes: the one at hand (or --gpu's) when it is of that architecture, else the
    table's example of it (common/gpu_specs.py)."""
    a = device.arch_info(arch)
    g = device.current(a.arch)
    if device.arch_info(g.arch).arch == a.arch or not a.example:
        return g
    return device.profile_info(a.example)


def fit_tile(kind: str, cfg: dict, d: int, gpu: device.DeviceInfo | None = None) -> dict:
    """`cfg` where the GPU's shared memory per block (its opt-in limit) holds it (smem_estimate), else the first of
    FALLBACKS[kind] that fits (the smallest where none does)."""
    g = _gpu(gpu)
    for c in [cfg] + FALLBACKS[kind]:
        if smem_estimate(kind, c, d, arch=g.arch) <= g.smem_per_block_optin:
            return dict(c)
    return dict(FALLBACKS[kind][-1])


def fwd_default_gpu(d: int, causal: bool = False, gpu: device.DeviceInfo | None = None) -> dict:
    """The forward tile on `gpu` (default: the GPU at hand, or the one --gpu / --arch describes): fwd_preferred where
    its shared memory holds it, else the first fallback that fits (fit_tile)."""
    return fit_tile("fwd", fwd_preferred(d, causal), d, gpu)


def bwd_default_gpu(d: int, gpu: device.DeviceInfo | None = None) -> dict:
    """The backward tiles on `gpu`: bwd_preferred where its shared memory holds them, else a fallback (fit_tile)."""
    return fit_tile("bwd", bwd_preferred(d), d, gpu)


# Configs picked by bench.tune_configs() at a shape in this process: {("fwd" | "bwd", D, causal, dtype): config};
# on the GPU at hand they come before the tuned record (and --set before them).
TUNED: dict = {}
THIS_RUN = "tuned in this run (the benchmark's tile sweep)"

# Tuning record: `--tune` (bench.tune) times FWD_CANDIDATES / BWD_CANDIDATES at the target shapes, checks each winner
# against float64 on sampled heads, and records them in results/<gpu>/phase4_lab06_attention_tuned.json as
# {"fwd D128 full bfloat16": config, "fwd D128 causal bfloat16": ..., "bwd ...": ...}. On that GPU the wrappers use
# a recorded winner for the same kind, head dim, mask and dtype (any B, H, S); elsewhere, and for anything not
# recorded, the defaults above. A config is the dict bench.FWD_CANDIDATES / BWD_CANDIDATES hold.
TUNED_RECORD = LAB + "_tuned"
_FWD_KEYS, _BWD_KEYS = {"BLOCK_M", "BLOCK_N"}, {"BLOCK_M1", "BLOCK_N1", "BLOCK_M2", "BLOCK_N2"}
_FWD_FLAGS = {"TMA", "WS", "PIPE"}


def record_key(kind: str, d: int, causal: bool, dtype: str) -> str:
    return f"{kind} D{int(d)} {'causal' if causal else 'full'} {dtype}"


def check_tuned_config(kind: str, cfg: dict) -> dict:
    """A valid forward / backward config (normalized: ints and bools), or ValueError / KeyError / TypeError."""
    if kind not in ("fwd", "bwd"):
        raise ValueError(f"kind must be 'fwd' or 'bwd', got {kind!r}")
    blocks = _FWD_KEYS if kind == "fwd" else _BWD_KEYS
    flags = _FWD_FLAGS if kind == "fwd" else set()
    extra = sorted(set(cfg) - blocks - flags - {"num_warps", "num_stages"})
    if extra:
        raise ValueError(f"unknown {kind} config keys {extra}")
    out = {}
    for key in sorted(blocks):
        v = int(cfg[key])
        if not 16 <= v <= 256 or v & (v - 1):
            raise ValueError(f"{key} must be a power of two in 16..256, got {v}")
        out[key] = v
    out["num_warps"] = int(cfg["num_warps"])
    out["num_stages"] = int(cfg["num_stages"])
    if out["num_warps"] not in (4, 8, 16) or not 1 <= out["num_stages"] <= 6:
        raise ValueError(f"num_warps {out['num_warps']} (4, 8 or 16) / num_stages {out['num_stages']} (1..6)")
    for f in sorted(flags & set(cfg)):
        if not isinstance(cfg[f], bool):
            raise TypeError(f"{f} must be true or false, got {cfg[f]!r}")
        if cfg[f]:
            out[f] = True
    _check_config(kind, out)
    return out


def _check_winners(w: dict) -> dict:
    return {str(k): check_tuned_config(str(k).split()[0], v) for k, v in w.items()}


def tuned_config(kind: str, d: int, causal: bool, dtype: str, gpu: device.DeviceInfo | None = None) -> dict | None:
    """The recorded winner of `gpu` (default: the GPU at hand) for the kind, head dim, mask and dtype, or None (the
    interpreter never uses one)."""
    if INTERPRETER and gpu is None:
        return None
    winners, _ = tuned.record(TUNED_RECORD, _check_winners, gpu=gpu)
    return (winners or {}).get(record_key(kind, d, causal, dtype))


def tuned_source(gpu: device.DeviceInfo | None = None) -> str:
    if INTERPRETER and gpu is None:
        return "interpreter tiles"
    return tuned.record(TUNED_RECORD, _check_winners, gpu=gpu)[1]


def _settings(kind: str, cfg: dict) -> dict:
    """A config in --set names, every field present (a forward flag the config lacks is False)."""
    return {name: cfg.get(key, False) for key, name in SETTINGS[kind].items()}


def _config_of(kind: str, values: dict) -> dict:
    """The --set names back to a config the wrappers and the kernels take (a forward flag only when it is on)."""
    out = {}
    for key, name in SETTINGS[kind].items():
        if key not in _FWD_FLAGS:
            out[key] = values[name]
        elif values[name]:
            out[key] = True
    return out


def _check_settings(kind: str, values: dict) -> dict:
    try:
        check_tuned_config(kind, _config_of(kind, values))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{'forward' if kind == 'fwd' else 'backward'} tile {config.fmt(values)}: {e}") from None
    return values


def resolved_config(kind: str, d: int, causal: bool, dtype: str,
                    gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The tile of one Triton kernel family (the forward, or the backward's dK/dV and dQ kernels) at one head dim, mask
    and dtype, in common.config's order: the default that fits the GPU (fit_tile), then a tuned config - this run's
    tile sweep (TUNED, the GPU at hand only) or the GPU's --tune record - then --set FWD_BLOCK_N=64 and the like.
    `gpu`: the GPU to resolve for (a simulated profile in a plan); None: the GPU at hand, or the interpreter."""
    if kind not in SETTINGS:
        raise ValueError(f"kind must be 'fwd' or 'bwd', got {kind!r}")
    d, causal = int(d), bool(causal)
    what = "attn_fwd_kernel" if kind == "fwd" else "attn_bwd_dkdv_kernel + attn_bwd_dq_kernel"
    family = f"triton {what} D{d} {'causal' if causal else 'full'} {dtype}"
    winner, source = None, ""
    if INTERPRETER and gpu is None:
        family += " (" + tr("interpreter tiles") + ")"
        default = INTERPRETER_TILES[kind]
    else:
        preferred = fwd_preferred(d, causal) if kind == "fwd" else bwd_preferred(d)
        default = fit_tile(kind, preferred, d, gpu)
        if default != preferred:
            family += tr(" (the preferred tile needs more than {kib} KiB a block)",
                         kib=_gpu(gpu).smem_per_block_optin // 1024)
        key = (kind, d, causal, dtype)
        if gpu is None and key in TUNED:
            winner, source = TUNED[key], THIS_RUN
        else:
            winner, source = tuned_config(kind, d, causal, dtype, gpu), tuned_source(gpu)
    return config.resolve(family, _settings(kind, default), tuned=_settings(kind, winner) if winner else None,
                          tuned_source=source, validate=functools.partial(_check_settings, kind))


def config_for(kind: str, d: int, causal: bool, dtype: str, gpu: device.DeviceInfo | None = None) -> dict:
    """The config a wrapper uses when none is passed (resolved_config, as the kernels take it)."""
    return _config_of(kind, resolved_config(kind, d, causal, dtype, gpu).values)


def _check_config(kind: str, cfg: dict) -> None:
    pairs = (("BLOCK_M", "BLOCK_N"),) if kind == "fwd" else (("BLOCK_N1", "BLOCK_M1"), ("BLOCK_M2", "BLOCK_N2"))
    for big, small in pairs:
        if cfg[big] % cfg[small]:
            raise ValueError(f"config: {big}={cfg[big]} must be a multiple of {small}={cfg[small]} (the causal "
                             "diagonal block is walked in whole tiles)")


# ---------------------------------------------------------------------------------------------------------------------
# Triton wrappers
# ---------------------------------------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class AttnDims:
    """The sizes the flash wrappers take from q (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D)."""

    b: int
    hq: int
    hkv: int
    sq: int
    sk: int
    d: int
    dtype: str
    scale: float

    @property
    def group(self) -> int:
        """Query heads per key/value head (1: ordinary multi-head attention; Hq: multi-query)."""
        return self.hq // self.hkv


def _check_attn(q, k, v, causal, sm_scale) -> AttnDims:
    """Validate q (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D) for the flash kernels: Hkv divides Hq (grouped-query
    attention), Sq and Sk free (the causal mask aligned bottom-right), everything else shared."""
    dev = not INTERPRETER
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=dev, contiguous=False, libs=("torch",))
    dts = {arrays.dtype_name(x) for x in (q, k, v)}
    if len(dts) != 1:
        raise TypeError(f"q, k, v: dtypes must match, got {arrays.dtype_name(q)}, {arrays.dtype_name(k)}, "
                        f"{arrays.dtype_name(v)}")
    if len({str(x.device) for x in (q, k, v)}) != 1:
        raise TypeError(f"q, k, v: must be on one device, got {q.device}, {k.device}, {v.device}")
    b, hq, sq, d, scale = _check_dims_and_flags(q, causal, sm_scale, FLASH_HEAD_DIMS)
    kb, hkv, sk, kd = (int(n) for n in k.shape)
    if tuple(v.shape) != tuple(k.shape):
        raise ValueError(f"v: shape {tuple(v.shape)} must equal k's {tuple(k.shape)} (q, k, v: shapes must match as "
                         "(B, Hq, Sq, D), (B, Hkv, Sk, D), (B, Hkv, Sk, D))")
    if kb != b:
        raise ValueError(f"k: batch {kb} must match q's {b} (shapes q {tuple(q.shape)}, k {tuple(k.shape)})")
    if kd != d:
        raise ValueError(f"k: head dim {kd} must match q's {d} (shapes q {tuple(q.shape)}, k {tuple(k.shape)})")
    if hkv < 1 or hq % hkv:
        raise ValueError(f"k: its {hkv} heads must divide q's {hq} (grouped-query attention: query head h reads "
                         f"key/value head h // (Hq / Hkv)); shapes q {tuple(q.shape)}, k {tuple(k.shape)}")
    if sk < 1:
        raise ValueError(f"k: empty key sequence, shape {tuple(k.shape)} (Sk must be at least 1)")
    for name, x in (("q", q), ("k", k), ("v", v)):
        st, s = x.stride(), int(x.shape[2])
        if st[3] != 1:
            raise ValueError(f"{name}: the last (head) dimension must be contiguous (stride 1), got strides {st}; "
                             "pass x.contiguous()")
        if min(st) < 0 or (s - 1) * st[2] + d > INT32_MAX:
            raise ValueError(f"{name}: strides {st} put one head's rows beyond 32-bit offsets (or are negative)")
    return AttnDims(b, hq, hkv, sq, sk, d, dts.pop(), scale)


def _check_qkv(q, k, v, causal, sm_scale):
    """Validate q, k, v of one shape (B, H, S, D) - the naive version's - and return (B, H, S, D, dtype, scale)."""
    a = _check_attn(q, k, v, causal, sm_scale)
    if (a.hkv, a.sk) != (a.hq, a.sq):
        raise ValueError(f"k: shape {tuple(k.shape)} must equal q's {tuple(q.shape)} here (q, k, v: shapes must "
                         "match; grouped-query k, v and Sq != Sk run on the flash kernels)")
    return a.b, a.hq, a.sq, a.d, a.dtype, a.scale


def _check_dims_and_flags(q, causal, sm_scale, head_dims=HEAD_DIMS):
    """What the Triton and CUDA C wrappers both ask of (B, H, S, D), causal and sm_scale: (B, H, S, D, scale)."""
    b, h, s, d = (int(n) for n in q.shape)
    if d not in head_dims:
        raise ValueError(f"q: head dimension {d} is not supported; expected one of {head_dims} (shape (B, H, S, D))")
    if b * h * s == 0:
        raise ValueError(f"q: empty input, shape {(b, h, s, d)} (B, H and S must be at least 1)")
    if b * h > MAX_GRID_Y:
        raise ValueError(f"q: B x H = {b * h} programs on grid axis 1, over its limit {MAX_GRID_Y}; launch in slices "
                         "of heads")
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal: expected a bool, got {type(causal).__name__}")
    scale = 1.0 / math.sqrt(d) if sm_scale is None else sm_scale
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating)) or not math.isfinite(scale) \
            or scale <= 0:
        raise ValueError(f"sm_scale: expected a positive finite number (or None for 1/sqrt(D)), got {sm_scale!r}")
    return b, h, s, d, float(scale)


def _upcast(dtype: str) -> bool:
    """Interpreter only: Triton 3.9's interpreter multiplies the raw bits of bf16 tiles in tl.dot, so bf16 tiles are
    converted to fp32 before each dot, and P and dS are rounded to bf16 values (to nearest, as the GPU does) held in
    fp32 (triton_kernels._bf16_rn_as_fp32). Never on a GPU."""
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
    """Flash attention forward on torch tensors: returns (o, lse).

    q: (B, Hq, Sq, D); k, v: (B, Hkv, Sk, D) with Hkv dividing Hq - grouped-query attention, query head h reading
    key/value head h // (Hq / Hkv) (multi-query when Hkv = 1; Hkv = Hq, Sq = Sk is the usual case). Causal masks key j
    for query i unless j <= i + (Sk - Sq): aligned to the bottom-right corner, as FlashAttention does; a query row
    with no key left (Sq > Sk) gets O = 0 and LSE = -inf. fp16 or bf16, D in FLASH_HEAD_DIMS (32, 64, 80, 96, 128,
    256), last dim contiguous (other strides free).
    o: (B, Hq, Sq, D), q's dtype, contiguous; lse: (B, Hq, Sq) fp32, natural log of sum_j exp(scale q_i . k_j) over
    the keys row i attends to. out: None or a tuple (o, lse) to write into: o any view with a contiguous last dim,
    lse contiguous. GPU: CUDA tensors; no GPU: CPU tensors, run in the interpreter.
    """
    a = _check_attn(q, k, v, causal, sm_scale)
    o_out, lse_out = (None, None) if out is None else out
    o = _out(o_out, (a.b, a.hq, a.sq, a.d), a.dtype, q, "out[0] (o)", strided=True)
    lse = _out(lse_out, (a.b, a.hq, a.sq), "float32", q, "out[1] (lse)")
    cfg = dict(config) if config else config_for("fwd", a.d, bool(causal), a.dtype)
    _check_config("fwd", cfg)
    # TMA descriptors are built on the device in scratch memory Triton asks torch for at launch; inside a CUDA graph
    # capture (lab 4.7 times its stages that way) that allocation would be recorded into the graph, so a capture
    # takes the pointer loads: the same result, without the copy engine
    tma = bool(cfg.get("TMA")) and fwd_tma_ok(k, v) and not _capturing()
    if tma:
        _tma_scratch_allocator()
    launch(attn_fwd_kernel, fwd_grid(a.b, a.hq, a.sq, cfg), q, k, v, o, lse, a.scale * LOG2E, a.hq, a.group, a.sq,
           a.sk, *_bhs(q), *_bhs(k), *_bhs(v), *_bhs(o), HEAD_DIM=a.d, BLOCK_D=block_d(a.d), BLOCK_M=cfg["BLOCK_M"],
           BLOCK_N=cfg["BLOCK_N"], CAUSAL=bool(causal), UPCAST=_upcast(a.dtype), TMA=tma, WS=bool(cfg.get("WS")),
           PIPE=bool(cfg.get("PIPE")), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return o, lse


def fwd_grid(b: int, hq: int, sq: int, cfg: dict) -> tuple[int, int]:
    """attn_fwd_kernel's programs: (query blocks of BLOCK_M rows, batch x query heads)."""
    return triton.cdiv(sq, cfg["BLOCK_M"]), b * hq


def bwd_grids(b: int, hq: int, hkv: int, sq: int, sk: int, cfg: dict) -> dict:
    """The backward's three grids: delta (query blocks of DELTA_BLOCK_M rows, B Hq), dK/dV (key blocks of BLOCK_N1,
    B Hkv), dQ (query blocks of BLOCK_M2, B Hq)."""
    return {"delta": (triton.cdiv(sq, delta_block_m()), b * hq), "dkdv": (triton.cdiv(sk, cfg["BLOCK_N1"]), b * hkv),
            "dq": (triton.cdiv(sq, cfg["BLOCK_M2"]), b * hq)}


DELTA_BLOCK_M, DELTA_WARPS = 128, 4       # attn_bwd_delta_kernel: rows per program (a row is D values of O and dO)


def delta_block_m(gpu: device.DeviceInfo | None = None) -> int:
    """Rows per program of the delta kernel: DELTA_BLOCK_M on a GPU, 32 in the interpreter (small tiles there)."""
    return 32 if INTERPRETER and gpu is None else DELTA_BLOCK_M


def fwd_tma_ok(k, v) -> bool:
    """Whether the forward's TMA attempt (config "TMA": True) can read these K and V: a TMA descriptor needs a
    16-byte aligned start and row strides of whole 16-byte units, for every head's base (so the batch and head strides
    too). Otherwise the forward quietly takes its pointer loads - the same result, without the copy engine."""
    if INTERPRETER or not str(k.device).startswith("cuda"):
        return True                   # the interpreter models the descriptor, alignment aside
    elt = k.element_size()
    return all(x.data_ptr() % 16 == 0 and all(st * elt % 16 == 0 for st in x.stride()[:3]) for x in (k, v))


def _capturing() -> bool:
    if INTERPRETER:
        return False
    import torch

    return bool(torch.cuda.is_current_stream_capturing())


@functools.cache
def _tma_scratch_allocator() -> None:
    # Descriptors built on the device (tl.make_tensor_descriptor) live in a little global scratch memory that Triton
    # asks the program's allocator for; set it once, to torch's caching allocator on the current device.
    import torch

    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))


def flash_attn_bwd(do, q, k, v, o, lse, causal: bool = False, sm_scale: float | None = None, out=None, *,
                   config: dict | None = None):
    """Gradients of flash_attn_fwd for an upstream dO: returns (dq, dk, dv), contiguous, q's dtype; dq has q's shape,
    dk and dv k's (B, Hkv, Sk, D), each summed over the Hq / Hkv query heads that share the key/value head.

    o and lse are what flash_attn_fwd returned (o may be any layout with a contiguous last dim, like dO).
    Three launches: delta = rowsum(dO * O); dK, dV (one program per key block and key/value head, walking the query
    blocks of every query head of its group); dQ (one program per query block and query head).
    """
    a = _check_attn(q, k, v, causal, sm_scale)
    b, h, s, d, dt = a.b, a.hq, a.sq, a.d, a.dtype
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
    dk = _out(dk_o, (b, a.hkv, a.sk, d), dt, q, "out[1] (dk)")
    dv = _out(dv_o, (b, a.hkv, a.sk, d), dt, q, "out[2] (dv)")
    cfg = dict(config) if config else config_for("bwd", d, bool(causal), dt)
    _check_config("bwd", cfg)
    delta = arrays.empty((b, h, s), "float32", q)
    grids = bwd_grids(b, h, a.hkv, s, a.sk, cfg)
    launch(attn_bwd_delta_kernel, grids["delta"], o, do, delta, h, s, *_bhs(o), *_bhs(do),
           HEAD_DIM=d, BLOCK_D=block_d(d), BLOCK_M=delta_block_m(), num_warps=DELTA_WARPS)
    common_args = (a.scale, a.scale * LOG2E, h, a.group, s, a.sk, *_bhs(q), *_bhs(k), *_bhs(v), *_bhs(do))
    launch(attn_bwd_dkdv_kernel, grids["dkdv"], q, k, v, do, lse, delta, dk, dv, *common_args, HEAD_DIM=d,
           BLOCK_D=block_d(d), BLOCK_M=cfg["BLOCK_M1"], BLOCK_N=cfg["BLOCK_N1"], CAUSAL=bool(causal),
           UPCAST=_upcast(dt), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    launch(attn_bwd_dq_kernel, grids["dq"], q, k, v, do, lse, delta, dq, *common_args, HEAD_DIM=d,
           BLOCK_D=block_d(d), BLOCK_M=cfg["BLOCK_M2"], BLOCK_N=cfg["BLOCK_N2"], CAUSAL=bool(causal),
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
    """Differentiable attention softmax(scale Q K^T [causal]) V on torch tensors, forward and backward by this lab's
    Triton kernels (for the transformer-block lab and for torch.autograd checks): q (B, Hq, Sq, D), k and v
    (B, Hkv, Sk, D) with Hkv dividing Hq, the causal mask aligned bottom-right (see flash_attn_fwd)."""
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
    P (a head whose key is NaN) leaked into the neighbouring rows of O = P V (oneDNN's bug report 5717, fixed after
    the oneDNN 3.12 that torch 2.13 ships). fp32 GEMMs take another path, and fp32 accumulation is what cuBLAS does."""
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
    block, warps = naive_softmax_config(s)
    launch(naive_softmax_kernel, (b * h * s,), sm, p, lse, s, scale * LOG2E, BLOCK=block, CAUSAL=bool(causal),
           num_warps=warps)
    o = library_matmul(p, v)
    return o, lse, p


def naive_softmax_config(s: int) -> tuple[int, int]:
    """(BLOCK, num_warps) of naive_softmax_kernel for rows of S: the whole row in one block (S rounded up to a power
    of two, at least 16), 4 warps up to 2048 columns, 8 up to 8192, 16 beyond (about 16 values a thread)."""
    block = max(16, triton.next_power_of_2(int(s)))
    return block, 4 if block <= 2048 else 8 if block <= 8192 else 16


def naive_attn_bwd(do, q, k, v, p, sm_scale: float | None = None):
    """The backward written the same way, with dP and dS (S x S each) in HBM: torch matmuls and elementwise ops."""
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
    """4 B H S^2 D for the forward (two GEMMs of 2 S^2 D each per head); causal counts half, as FlashAttention's
    figures do; the backward 2.5x the forward."""
    f = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
    return f * 2.5 if backward else f


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C: the mma.sync forward of kernels.cu (attn_01_mma, attn_02_mma_pipelined, attn_02w_mma_wide)
# ---------------------------------------------------------------------------------------------------------------------
KERNELS = {"01": "attn_01_mma", "02": "attn_02_mma_pipelined", "02w": "attn_02w_mma_wide"}
CUDA_BLOCK_N = 64                     # keys per K/V tile (kernels.cu's BLOCK_N)
CUDA_WIDE_BLOCK_N = 32                # rung 02w's (kernels.cu's WIDE_BLOCK_N)
WIDE_MAX_BLOCKS = {64: 3, 128: 2}     # rung 02w's register cap: more CTAs per SM than this spill (NVRTC report)
ROW_TILES = {"01": 1, "02": 1, "02w": 2}     # m16 row tiles per warp: a CTA takes 16 x this x NWARPS query rows
# Warps per CTA of rungs 01 and 02 (16 query rows each): the lab's default, `--set NWARPS=8` overrides it. Rung 02w
# always runs WIDE_NWARPS (32 rows a warp, ~244 registers a thread at D = 128). The benchmark runs rung 02 in three
# occupancy shapes (4 warps x 3 CTAs, 4 warps x 2 CTAs, 8 warps x 1 CTA on sm_90): which wins is measured.
CONFIG = {64: {"NWARPS": 4}, 128: {"NWARPS": 4}}
WIDE_NWARPS = 4
# __launch_bounds__' minimum CTAs per SM (MIN_BLOCKS, MIN_BLOCKS_WIDE), which caps registers at 65536 / (32 NWARPS
# MIN_BLOCKS), for CTAs of 4 warps: what each architecture's build was measured to take without a spill (the NVRTC
# compile report). sm_90: 3 CTAs at D = 128 (168 registers, where ptxas alone takes ~208 and allows only 2) and 4 at
# D = 64; the other architectures spill at those caps, so 2 and 3. Rung 02w (two row tiles a warp) 2 and 3 everywhere.
# min_blocks_default lowers them to what the GPU's shared memory per SM holds (one 64 KiB CTA where an SM has ~100
# KiB: a cap for three would only cost registers) and halves them for 8 warps.
MIN_BLOCKS_4W = {"sm_90": {64: 4, 128: 3}, "other": {64: 3, 128: 2}, "02w": {64: 3, 128: 2}}


def min_blocks_default(kernel: str, head_dim: int, nwarps: int, arch: str) -> int:
    """The __launch_bounds__ minimum of CTAs per SM for `kernel` (MIN_BLOCKS for rungs 01/02, from rung 02's shared
    memory; MIN_BLOCKS_WIDE for 02w) at this head dim and warp count, on architecture `arch` (MIN_BLOCKS_4W, no more
    CTAs than the SM's shared memory holds, halved for 8 warps)."""
    a = device.arch_info(arch)
    table = MIN_BLOCKS_4W["02w" if kernel == "02w" else "sm_90" if a.cc == 90 else "other"]
    per_cta = smem_bytes("02w" if kernel == "02w" else "02", head_dim, nwarps) + a.smem_reserved_per_block
    fit = max(1, a.smem_per_sm // per_cta) if a.smem_per_sm else table[head_dim]
    return max(1, min(table[head_dim], fit) * 4 // nwarps)


def _arch(arch: str | None) -> str:
    """`arch`, else the architecture of the GPU at hand (or of the one --gpu / --arch describes)."""
    return arch or device.current().arch


def cuda_config(head_dim: int, arch: str | None = None, nwarps: int | None = None) -> config.Resolved:
    """The CUDA C forward's build at one head dim for architecture `arch` (default: the GPU at hand): NWARPS (rungs 01,
    02), MIN_BLOCKS and MIN_BLOCKS_WIDE (the register caps, min_blocks_default for the warps the build has), in
    common.config's order: the lab's default, then --set NWARPS=8 / MIN_BLOCKS=2 (no tuned record: the benchmark
    times the shapes side by side). nwarps: a build of that many warps (the benchmark's other shapes; not recorded as
    the family's configuration)."""
    if head_dim not in CONFIG:
        raise ValueError(f"head_dim: expected one of {sorted(CONFIG)}, got {head_dim!r}")
    arch = _arch(arch)
    family = f"cuda kernels.cu D{head_dim} ({device.arch_info(arch).arch})"
    nw = nwarps or config.resolve(family, dict(CONFIG[head_dim]), remember=False).values["NWARPS"]
    default = {"NWARPS": CONFIG[head_dim]["NWARPS"], "MIN_BLOCKS": min_blocks_default("02", head_dim, nw, arch),
               "MIN_BLOCKS_WIDE": min_blocks_default("02w", head_dim, nw, arch)}
    return config.resolve(family, default, validate=_check_cuda_config, remember=nwarps is None)


def _check_cuda_config(v: dict) -> dict:
    if v["NWARPS"] not in (4, 8) or not 1 <= v["MIN_BLOCKS"] <= 4 or not 1 <= v["MIN_BLOCKS_WIDE"] <= 4:
        raise ValueError(f"kernels.cu: NWARPS 4 or 8, MIN_BLOCKS and MIN_BLOCKS_WIDE 1 to 4; got {config.fmt(v)}")
    return v


def defines(head_dim: int, dtype: str = "bfloat16", nwarps: int | None = None, min_blocks: int | None = None,
            arch: str | None = None) -> dict:
    """kernels.cu's compile-time defines for one head dim and dtype on architecture `arch` (default: the GPU at
    hand): cuda_config's build, or another occupancy shape (nwarps, min_blocks: both register caps)."""
    cfg = cuda_config(head_dim, arch, nwarps).values
    d = {"NWARPS": nwarps or cfg["NWARPS"], "MIN_BLOCKS": cfg["MIN_BLOCKS"], "MIN_BLOCKS_WIDE": cfg["MIN_BLOCKS_WIDE"]}
    if min_blocks is not None:
        d["MIN_BLOCKS"] = d["MIN_BLOCKS_WIDE"] = min_blocks
    d.update({"HEAD_DIM": head_dim, "BLOCK_N": CUDA_BLOCK_N, "WIDE_BLOCK_N": CUDA_WIDE_BLOCK_N,
              "ATTN_FP16": int(dtype == "float16")})
    return d


def cuda_warps(kernel: str, head_dim: int, nwarps: int | None = None, arch: str | None = None) -> int:
    """Warps per CTA a rung launches: nwarps when given, WIDE_NWARPS for 02w, else the resolved NWARPS."""
    if nwarps:
        return nwarps
    return WIDE_NWARPS if kernel == "02w" else cuda_config(head_dim, arch).values["NWARPS"]


def cuda_grid(kernel: str, s: int, bh: int, nwarps: int) -> tuple[int, int]:
    """A rung's grid: (query blocks of 16 ROW_TILES NWARPS rows, batch x heads)."""
    rows = 16 * ROW_TILES[kernel] * nwarps
    return (s + rows - 1) // rows, bh


def smem_bytes(kernel: str, head_dim: int, nwarps: int | None = None) -> int:
    """Dynamic shared memory: one K + one V tile (rung 01), two of each (rung 02), two of each of rung 02w's 32-key
    tiles plus its own Q area (32 rows per warp)."""
    if kernel == "02w":
        nw = nwarps or WIDE_NWARPS
        return 2 * 2 * CUDA_WIDE_BLOCK_N * head_dim * 2 + 32 * nw * head_dim * 2
    stages = 2 if kernel == "02" else 1
    return stages * 2 * CUDA_BLOCK_N * head_dim * 2


def unavailable_reason(gpu: device.DeviceInfo | None = None) -> str | None:
    """None when the CUDA kernels can run on `gpu` (a simulated profile in a plan is answered from its architecture),
    or here (None: this machine), else why not (no GPU, too old a GPU, no torch)."""
    if gpu is None:
        if not device.has_gpu():
            return tr("no CUDA GPU ({why}); the kernels are only compiled (NVRTC)", why=tr(device.no_gpu_reason()))
        gpu = device.info()
    if gpu.cc < 80:
        return tr("mma.sync bf16, ldmatrix and cp.async need sm_80 or newer; this GPU is {arch}", arch=gpu.arch)
    if gpu.simulated:
        return None
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return tr("torch is needed for bfloat16 tensors")
    return None


def _check_cuda_qkv(q, k, v, causal, sm_scale):
    """Validate the CUDA C forward's inputs (contiguous, 16-byte aligned, on the GPU) before any launch."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=None, contiguous=False, libs=("torch", "cupy"))
    # Grouped-query k, v and Sq != Sk are the Triton kernels' (flash_attn_fwd): kernels.cu indexes K and V with q's
    # head and takes one sequence length, so such shapes are refused here, by name, before check_same's generic
    # message.
    for name, x in (("k", k), ("v", v)):
        if int(x.shape[1]) != int(q.shape[1]):
            raise ValueError(f"{name}: {int(x.shape[1])} heads against q's {int(q.shape[1])}: the CUDA C kernels take "
                             "Hq == Hkv only (q, k, v: shapes must match); grouped-query attention runs on the "
                             "Triton kernels (flash_attn_fwd)")
        if int(x.shape[2]) != int(q.shape[2]):
            raise ValueError(f"{name}: Sk = {int(x.shape[2])} keys against q's Sq = {int(q.shape[2])}: the CUDA C "
                             "kernels take Sq == Sk only (q, k, v: shapes must match); Sq != Sk runs on the Triton "
                             "kernels (flash_attn_fwd)")
    arrays.check_same("q, k, v", q, k, v)
    dt = arrays.dtype_name(q)
    if dt == "bfloat16" and arrays.library(q) != "torch":
        raise TypeError("q: bfloat16 arrays must be torch tensors (CuPy has no bfloat16)")
    b, h, s, d, scale = _check_dims_and_flags(q, causal, sm_scale)
    check_qkv_placement(q, k, v, "cp.async copies 16 bytes")
    return b, h, s, d, dt, scale


def check_qkv_placement(q, k, v, why_aligned: str) -> None:
    """What the CUDA C forwards (kernels.cu, kernels_hopper.cu) ask of q, k, v's memory: contiguous, on the GPU, 16-byte
    aligned (why_aligned says which copy needs it); ValueError / TypeError naming the argument."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not arrays.is_contiguous(x):
            raise ValueError(f"{name}: expected a contiguous (B, H, S, D) array; pass x.contiguous()")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not arrays.on_device(x):
            raise TypeError(f"{name}: expected a GPU array, got a host array; move it first with x.cuda()")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not arrays.aligned(x, 16):
            raise ValueError(f"{name}: the data must start 16-byte aligned ({why_aligned})")


def _ptr(a):
    return np.uint64(a.data_ptr()) if arrays.library(a) == "torch" else np.uint64(a.data.ptr)


def cuda_build(kernel: str, head_dim: int, dtype: str = "bfloat16", nwarps: int | None = None,
               min_blocks: int | None = None, arch: str | None = None) -> tuple[dict, int, int]:
    """What one rung's launch needs on architecture `arch` (default: the GPU at hand): (kernels.cu's defines, warps
    per CTA, dynamic shared memory bytes). Rung 02w is built with WIDE_NWARPS whatever NWARPS says."""
    nw = cuda_warps(kernel, head_dim, nwarps, arch)
    build_nwarps = nwarps or (WIDE_NWARPS if kernel == "02w" else None)
    return defines(head_dim, dtype, build_nwarps, min_blocks, arch), nw, smem_bytes(kernel, head_dim, nw)


@functools.lru_cache(maxsize=None)
def _cuda_kernel(kernel: str, defs: tuple, smem: int):
    k = cuda.get_kernel(CU, KERNELS[kernel], defines=dict(defs))
    if smem > 48 * 1024:
        k.max_dynamic_shared_size_bytes = smem        # above 48 KiB a kernel must opt in
    return k


def flash_attn_cuda(q, k, v, causal=False, sm_scale=None, out=None, *, lse=None, kernel: str = "02",
                    nwarps: int | None = None, min_blocks: int | None = None):
    """Attention forward by the CUDA C kernels: (o, lse). q, k, v (B, H, S, D) contiguous bf16 (torch) or fp16,
    D in {64, 128}, all three of one shape (grouped-query k, v or Sq != Sk: ValueError naming k or v; the Triton
    flash_attn_fwd takes them).

    o has q's shape and dtype; lse (B, H, S) float32 holds log(sum(exp(sm_scale q.k))) per row (natural log).
    kernel: "02" (pipelined, default), "01" (single-buffered) or "02w" (32 rows a warp, 4 warps only); nwarps (4 or
    8) overrides the warps per CTA (16 rows each; 32 in 02w), min_blocks the __launch_bounds__ CTAs per SM (the
    register cap); lse=: a float32 (B, H, S) array to fill.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel: expected one of {sorted(KERNELS)}, got {kernel!r}")
    if nwarps is not None and nwarps not in (4, 8):
        raise ValueError(f"nwarps: expected 4 or 8, got {nwarps!r}")
    if kernel == "02w" and nwarps not in (None, 4):
        raise ValueError(f"nwarps: rung 02w (32 rows a warp, ~244 registers a thread at D = 128) runs 4 warps, got "
                         f"{nwarps!r}")
    if min_blocks is not None and min_blocks not in (1, 2, 3, 4):
        raise ValueError(f"min_blocks: expected 1 to 4, got {min_blocks!r}")
    d_in = int(q.shape[-1]) if len(getattr(q, "shape", ())) == 4 else None
    if kernel == "02w" and min_blocks is not None and min_blocks > WIDE_MAX_BLOCKS.get(d_in, 4):
        raise ValueError(f"min_blocks: rung 02w at D = {d_in} fits at most {WIDE_MAX_BLOCKS[d_in]} CTAs per SM "
                         f"without spilling (its two row tiles of S and O), got {min_blocks}")
    b, h, s, d, dt, scale = _check_cuda_qkv(q, k, v, causal, sm_scale)
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    out = arrays.check_out(out, (b, h, s, d), dt, q)
    lse = arrays.check_out(lse, (b, h, s), "float32", q, name="lse")
    for name, x in (("out", out), ("lse", lse)):
        if not arrays.is_contiguous(x) or not arrays.aligned(x, 16):
            raise ValueError(f"{name}: expected a contiguous array starting on a 16-byte boundary")
    defs, nw, smem = cuda_build(kernel, d, dt, nwarps, min_blocks)
    args = (_ptr(q), _ptr(k), _ptr(v), _ptr(out), _ptr(lse), np.int32(s), np.float32(scale * LOG2E),
            np.int32(bool(causal)))
    _cuda_kernel(kernel, tuple(sorted(defs.items())), smem)(cuda_grid(kernel, s, b * h, nw), (32 * nw,), args,
                                                            shared_mem=smem)
    return out, lse


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


def attention_cuda_fwd_triton_bwd(q, k, v, do, causal=False, out=None, *, kernel: str = "02"):
    """The CUDA C mma.sync forward (flash_attn_cuda, rung `kernel`); the Triton backward then runs from ITS O and
    LSE, so a wrong LSE shows in the gradients too."""
    outs = _outs(out)
    # the CUDA C kernels take contiguous (B, H, S, D) only: strided views (odd S in the checks) are copied first
    o, lse = flash_attn_cuda(q.contiguous(), k.contiguous(), v.contiguous(), causal=bool(causal), kernel=kernel)
    o, lse = _copy_into(outs[:2], (o, lse.reshape(tuple(q.shape[:3]))))
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


def attention_cuda01_fwd_triton_bwd(q, k, v, do, causal=False, out=None):
    """Rung 01 of the CUDA C forward (single-buffered, unswizzled), then the Triton backward from its O and LSE."""
    return attention_cuda_fwd_triton_bwd(q, k, v, do, causal, out, kernel="01")


def attention_cuda02w_fwd_triton_bwd(q, k, v, do, causal=False, out=None):
    """Rung 02w of the CUDA C forward (32 rows a warp), then the Triton backward from its O and LSE."""
    return attention_cuda_fwd_triton_bwd(q, k, v, do, causal, out, kernel="02w")


def attention_hopper_fwd_triton_bwd(q, k, v, do, causal=False, out=None, *, kernel: str = "03"):
    """The Hopper wgmma + TMA forward (hopper.flash_attn_hopper, kernels_hopper.cu rung `kernel`: 03 attn_03_wgmma, 04
    attn_04_wgmma_pingpong, 05 attn_05_wgmma_overlap, 06 attn_06_wgmma_overlap_pingpong, 07
    attn_07_wgmma_persistent; sm_90a); the Triton backward then runs from ITS O and LSE, so a wrong LSE shows in the
    gradients too."""
    from . import hopper

    outs = _outs(out)
    # TMA reads a view in place when its strides are whole 16-byte units; others (odd S in the checks) are copied
    o, lse = hopper.flash_attn_hopper(*(hopper.tma_ready(x) for x in (q, k, v)), causal=bool(causal), kernel=kernel)
    o, lse = _copy_into(outs[:2], (o, lse))
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


def _hopper_rung(kernel: str, what: str):
    """attention_hopper_fwd_triton_bwd fixed to one Hopper rung, as a variant's function (it takes no keyword)."""
    def fn(q, k, v, do, causal=False, out=None):
        return attention_hopper_fwd_triton_bwd(q, k, v, do, causal, out, kernel=kernel)

    fn.__name__ = fn.__qualname__ = f"attention_hopper{kernel}_fwd_triton_bwd"
    fn.__doc__ = f"Rung {kernel} of the Hopper forward ({what}), then the Triton backward from its O and LSE."
    return fn


def _hopper_unavailable(gpu: device.DeviceInfo | None = None) -> str | None:
    """Why the sm_90a kernels cannot run on `gpu` (None: here), or None: the Hopper variants' `unavailable`
    (hopper.unavailable_reason, imported late: hopper imports this module)."""
    from . import hopper

    return hopper.unavailable_reason(gpu)


class _HopperVariant(lab.Variant):
    """A Hopper rung (archs=("sm_90",), an sm_90a kernel): off Hopper its one-line reason is the kernel's own (wgmma and
    TMA tensor maps are Hopper-only) rather than the bare architecture mismatch."""

    def available(self, gpu: device.DeviceInfo | None = None) -> tuple[bool, str]:
        ok, why = super().available(gpu)
        here = gpu if gpu is not None else device.info() if device.has_gpu() else None
        if not ok and here is not None and not lab.arch_matches(here.arch, self.archs):
            why = _hopper_unavailable(here) or why
        return ok, why


def triton_unavailable(gpu: device.DeviceInfo | None = None) -> str | None:
    """Why the Triton flash kernels cannot run on `gpu` (None: here, where the interpreter runs them), or None: their
    bf16 tl.dot needs the tensor cores' bf16 MMA, which sm_80 brought."""
    if gpu is not None and gpu.cc < 80:
        return tr("the flash kernels' bf16 tl.dot needs sm_80 or newer (bf16 tensor cores); this GPU is {arch}",
                  arch=gpu.arch)
    return None


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
        return tr("needs a GPU")
    try:
        import torch

        q, k, v = (torch.randn(1, 2, 128, 64, device="cuda", dtype=torch.bfloat16, requires_grad=True)
                   for _ in range(3))
        sdpa_fwd(q, k, v, False, backend).sum().backward()
        torch.cuda.synchronize()
        return ""
    except Exception as e:  # noqa: BLE001 - any failure means: skip this peer, say why
        return tr("SDPA {backend} backend unavailable: {error}", backend=backend,
                  error=f"{type(e).__name__}: {str(e)[:120]}")


SDPA_NAMES = {"cudnn": "cuDNN", "flash": "FlashAttention-2"}


def sdpa_unavailable_on(backend: str, gpu: device.DeviceInfo) -> str:
    """'' when the SDPA backend can run on `gpu`, else why not: both backends' kernels need sm_80 or newer (bf16
    tensor cores); on the GPU at hand the backend is also tried (sdpa_unavailable), on a simulated one it is not."""
    if gpu.cc < 80:
        return tr("SDPA's {backend} backend needs sm_80 or newer; this GPU is {arch}", backend=SDPA_NAMES[backend],
                  arch=gpu.arch)
    return "" if gpu.simulated else sdpa_unavailable(backend)


@dataclasses.dataclass
class _PeerVariant(lab.Variant):
    """A torch SDPA backend; unavailable (with torch's reason) where the backend cannot run."""

    backend: str = "flash"

    def available(self, gpu: device.DeviceInfo | None = None) -> tuple[bool, str]:
        ok, why = super().available(gpu)
        if not ok:
            return ok, why
        reason = sdpa_unavailable_on(self.backend, gpu if gpu is not None else device.info())
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


def _cudnn_cannot_serve(size, dtype) -> str:
    """SDPA's cuDNN backend has no kernel for a sequence of one (torch answers "No available kernel")."""
    return tr("cuDNN's SDPA has no kernel for S = 1") if int(size[2]) == 1 else ""


HOPPER_NAME = "cuda 03 wgmma+TMA flash fwd (+ triton bwd)"
NAIVE_NAME = "naive (cuBLAS QK^T, Triton softmax, cuBLAS PV; S x S in HBM)"
FLASH_NAME = "triton flash fwd + bwd"
CUDA_ARCHS = ("sm_80+",)          # bf16 mma.sync, ldmatrix, cp.async: compute capability 8.0 and later
VARIANTS = [
    lab.Variant(NAIVE_NAME, attention_naive, "triton", dtypes=DTYPES),
    lab.Variant(FLASH_NAME, attention_flash, "triton", dtypes=DTYPES, unavailable=triton_unavailable),
    # the CUDA C rungs run where unavailable_reason(gpu) is empty: a GPU of sm_80 or newer
    lab.Variant("cuda 01 mma.sync flash fwd (+ triton bwd)", attention_cuda01_fwd_triton_bwd, "cuda", dtypes=DTYPES,
                archs=CUDA_ARCHS, unavailable=unavailable_reason,
                note="kernels.cu attn_01_mma: single-buffered, unswizzled"),
    lab.Variant("cuda 02 mma.sync pipelined flash fwd (+ triton bwd)", attention_cuda_fwd_triton_bwd, "cuda",
                dtypes=DTYPES, archs=CUDA_ARCHS, unavailable=unavailable_reason,
                note="kernels.cu attn_02_mma_pipelined: cp.async double buffering, XOR swizzle"),
    lab.Variant("cuda 02w mma.sync 32-row warps flash fwd (+ triton bwd)", attention_cuda02w_fwd_triton_bwd, "cuda",
                dtypes=DTYPES, archs=CUDA_ARCHS, unavailable=unavailable_reason,
                note="kernels.cu attn_02w_mma_wide: two row tiles a warp share each K/V fragment"),
]
# The Hopper rungs (sm_90a; available only on an sm_90 GPU, each saying why not elsewhere): (rung, variant name,
# its kernels_hopper.cu kernel, what the rung is)
HOPPER_RUNGS = [
    ("03", HOPPER_NAME, "attn_03_wgmma", "wgmma + TMA, producer / consumer warpgroups"),
    ("04", "cuda 04 wgmma+TMA ping-pong flash fwd (+ triton bwd)", "attn_04_wgmma_pingpong",
     "the consumers take turns"),
    ("05", "cuda 05 wgmma+TMA overlapped softmax flash fwd (+ triton bwd)", "attn_05_wgmma_overlap",
     "softmax_j under P_{j-1} V, 3 stages"),
    ("06", "cuda 06 wgmma+TMA overlapped softmax + ping-pong flash fwd (+ triton bwd)",
     "attn_06_wgmma_overlap_pingpong", "rung 05 + turns at issue"),
    ("07", "cuda 07 wgmma+TMA persistent overlapped-softmax flash fwd (+ triton bwd)", "attn_07_wgmma_persistent",
     "rung 05, one block per SM"),
]
HOPPER_VARIANTS = [_HopperVariant(name, attention_hopper_fwd_triton_bwd if rung == "03" else _hopper_rung(rung, what),
                                  "cuda", dtypes=DTYPES, archs=("sm_90",), unavailable=_hopper_unavailable,
                                  note=f"kernels_hopper.cu {kernel}: {what}")
                   for rung, name, kernel, what in HOPPER_RUNGS]
HOPPER_VARIANT = HOPPER_VARIANTS[0]
VARIANTS += HOPPER_VARIANTS
CUDA_VARIANT_NAMES = {"01": VARIANTS[2].name, "02": VARIANTS[3].name, "02w": VARIANTS[4].name}
PEERS = [_PeerVariant("torch SDPA cuDNN", _peer("cudnn"), "peer", dtypes=DTYPES, backend="cudnn",
                      cannot_serve=_cudnn_cannot_serve),
         _PeerVariant("torch SDPA flash", _peer("flash"), "peer", dtypes=DTYPES, backend="flash")]

# (B, H, S, D, causal): S = 1, primes and non-multiples of every tile (odd S also runs the strided-view path), and
# the CUDA C tiles' edges (64-key tiles, 64-row Q blocks: S = 17, 128, 129)
CHECK_CASES = [((1, 1, 1, 64, False), "bfloat16"), ((1, 1, 1, 128, True), "float16"),
               ((2, 3, 127, 64, True), "float16"), ((2, 2, 127, 128, False), "bfloat16"),
               ((1, 2, 1000, 128, False), "bfloat16"), ((1, 2, 1000, 128, True), "float16"),
               ((1, 2, 1000, 64, True), "bfloat16"), ((1, 1, 4097, 64, True), "bfloat16"),
               ((1, 2, 4097, 128, False), "float16"), ((1, 1, 4097, 128, True), "bfloat16"),
               ((1, 2, 17, 128, True), "bfloat16"), ((2, 1, 128, 64, False), "float16"),
               ((1, 2, 129, 128, True), "bfloat16")]
CPU_CHECK_CASES = [((1, 2, 1, 64, False), "bfloat16"), ((2, 1, 17, 64, True), "float16"),
                   ((1, 2, 67, 64, False), "bfloat16"), ((1, 2, 67, 64, True), "bfloat16")]
# --quick: S = 1 both ways and the two S = 127 cases (ragged tiles, causal and not, D 64 and 128)
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's cases on a given GPU (common.plan), from the functions the wrappers use
# ---------------------------------------------------------------------------------------------------------------------
_TY = {"bfloat16": "*bf16", "float16": "*fp16"}
_QKV_STRIDES = ("sq_b", "sq_h", "sq_s", "sk_b", "sk_h", "sk_s", "sv_b", "sv_h", "sv_s")


def triton_signature(kernel: str, dtype: str = "bfloat16") -> dict:
    """The Triton signature of one of this lab's kernels ("fwd", "bwd_delta", "bwd_dkdv", "bwd_dq", "naive_softmax"),
    as common.triton_support.compile_for and common.plan.Launch take it."""
    ty = _TY[dtype]
    ints = {n: "i32" for n in ("n_heads", "group", "seq_q", "seq_k") + _QKV_STRIDES}
    if kernel == "fwd":
        return {"q_ptr": ty, "k_ptr": ty, "v_ptr": ty, "o_ptr": ty, "lse_ptr": "*fp32", "qk_scale": "fp32", **ints,
                "so_b": "i32", "so_h": "i32", "so_s": "i32", "HEAD_DIM": "constexpr", "BLOCK_D": "constexpr",
                "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "CAUSAL": "constexpr", "UPCAST": "constexpr",
                "TMA": "constexpr", "WS": "constexpr", "PIPE": "constexpr"}
    if kernel == "bwd_delta":
        return {"o_ptr": ty, "do_ptr": ty, "delta_ptr": "*fp32", "n_heads": "i32", "seq": "i32", "so_b": "i32",
                "so_h": "i32", "so_s": "i32", "sdo_b": "i32", "sdo_h": "i32", "sdo_s": "i32",
                "HEAD_DIM": "constexpr", "BLOCK_D": "constexpr", "BLOCK_M": "constexpr"}
    if kernel in ("bwd_dkdv", "bwd_dq"):
        outs = {"dk_ptr": ty, "dv_ptr": ty} if kernel == "bwd_dkdv" else {"dq_ptr": ty}
        return {"q_ptr": ty, "k_ptr": ty, "v_ptr": ty, "do_ptr": ty, "lse_ptr": "*fp32", "delta_ptr": "*fp32",
                **outs, "sm_scale": "fp32", "qk_scale": "fp32", **ints, "sdo_b": "i32", "sdo_h": "i32",
                "sdo_s": "i32", "HEAD_DIM": "constexpr", "BLOCK_D": "constexpr", "BLOCK_M": "constexpr",
                "BLOCK_N": "constexpr", "CAUSAL": "constexpr", "UPCAST": "constexpr"}
    if kernel == "naive_softmax":
        return {"s_ptr": ty, "p_ptr": ty, "lse_ptr": "*fp32", "seq": "i32", "scale_log2": "fp32",
                "BLOCK": "constexpr", "CAUSAL": "constexpr"}
    raise ValueError(f"kernel: expected fwd, bwd_delta, bwd_dkdv, bwd_dq or naive_softmax, got {kernel!r}")


def fwd_constexprs(d: int, cfg: dict, causal: bool) -> dict:
    """attn_fwd_kernel's compile-time arguments on a GPU (UPCAST is the interpreter's)."""
    return {"HEAD_DIM": d, "BLOCK_D": block_d(d), "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"],
            "CAUSAL": bool(causal), "UPCAST": False, "TMA": bool(cfg.get("TMA")), "WS": bool(cfg.get("WS")),
            "PIPE": bool(cfg.get("PIPE"))}


def bwd_constexprs(kernel: str, d: int, cfg: dict, causal: bool) -> dict:
    """The backward kernels' compile-time arguments on a GPU: dK/dV walks BLOCK_M1 queries past BLOCK_N1 keys, dQ
    BLOCK_N2 keys past BLOCK_M2 queries."""
    bm, bn = (cfg["BLOCK_M1"], cfg["BLOCK_N1"]) if kernel == "bwd_dkdv" else (cfg["BLOCK_M2"], cfg["BLOCK_N2"])
    return {"HEAD_DIM": d, "BLOCK_D": block_d(d), "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": bool(causal),
            "UPCAST": False}


def fit_shape(shape, nbytes, gpu: device.DeviceInfo | None = None, what: str = "shape", batch_only: bool = False):
    """(shape, note): a benchmark shape (B, H, ...) that fits the GPU's memory (common.plan.fit): B halved first, then
    H (not with batch_only: grouped-query shapes keep their heads)."""
    def shrink(sh):
        b, h, *rest = sh
        if b > 1:
            return (b // 2, h, *rest)
        return (b, h // 2, *rest) if h > 1 and not batch_only else tuple(sh)

    return plan.fit(tuple(shape), nbytes, gpu, shrink=shrink, what=what)


def target_bytes(kind: str):
    """Bytes a Triton target of the benchmark holds at once, as a function of its (B, H, S, D): the forward's q, k, v,
    dO and O with an output per peer and Hopper build it times (16 tensors of B H S D, 2 bytes each); the backward's
    inputs, O and the three gradients of ours and of each peer, with what autograd keeps (20)."""
    n = 16 if kind == "fwd" else 20
    return lambda sh: n * 2 * math.prod(sh)


def gqa_bytes(sh) -> int:
    """The grouped-query target (B, Hq, Hkv, S, D): q, O and the peers' outputs (Hq heads, 4 tensors), k, v (Hkv) and
    their expanded copies (Hq), 2 bytes each."""
    b, hq, hkv, s, d = sh
    return 2 * b * s * d * (6 * hq + 2 * hkv)


def naive_bench_bytes(sh) -> int:
    """Naive against flash (B, H, S, D): q, k, v and both outputs, and the naive version's S and P (B H S^2 each)."""
    b, h, s, d = sh
    return 2 * (5 * b * h * s * d + 2 * b * h * s * s)


def cuda_bench_bytes(sh) -> int:
    """The CUDA C rungs' shapes (B, H, S, D): q, k, v, O and the SDPA peers' outputs."""
    return 6 * 2 * math.prod(sh)


def fwd_launch(variant: str, gpu: device.DeviceInfo, b: int, hq: int, hkv: int, sq: int, sk: int, d: int,
               causal: bool, dtype: str, case: str) -> plan.Launch:
    """attn_fwd_kernel's launch for q (B, Hq, Sq, D), k, v (B, Hkv, Sk, D) on `gpu` with its resolved tile."""
    res = resolved_config("fwd", d, causal, dtype, gpu)
    cfg = _config_of("fwd", res.values)
    return plan.Launch(variant, "attn_fwd_kernel", "triton", grid=fwd_grid(b, hq, sq, cfg), fn=attn_fwd_kernel,
                       signature=triton_signature("fwd", dtype), defines=fwd_constexprs(d, cfg, causal),
                       num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case,
                       config_source=res.source())


def bwd_launches(variant: str, gpu: device.DeviceInfo, b: int, hq: int, hkv: int, sq: int, sk: int, d: int,
                 causal: bool, dtype: str, case: str) -> list[plan.Launch]:
    """flash_attn_bwd's three launches (delta, dK/dV, dQ) on `gpu` with its resolved tiles."""
    res = resolved_config("bwd", d, causal, dtype, gpu)
    cfg = _config_of("bwd", res.values)
    grids = bwd_grids(b, hq, hkv, sq, sk, cfg)
    out = [plan.Launch(variant, "attn_bwd_delta_kernel", "triton", grid=grids["delta"], fn=attn_bwd_delta_kernel,
                       signature=triton_signature("bwd_delta", dtype), num_warps=DELTA_WARPS, num_stages=1,
                       defines={"HEAD_DIM": d, "BLOCK_D": block_d(d), "BLOCK_M": delta_block_m(gpu)}, case=case)]
    for kind, fn in (("bwd_dkdv", attn_bwd_dkdv_kernel), ("bwd_dq", attn_bwd_dq_kernel)):
        out.append(plan.Launch(variant, fn.__name__, "triton", grid=grids[kind[4:]], fn=fn,
                               signature=triton_signature(kind, dtype), defines=bwd_constexprs(kind, d, cfg, causal),
                               num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case,
                               config_source=res.source()))
    return out


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Every kernel launch of the benchmark's cases on `gpu` (each shape fitted to its memory): the Triton flash
    kernels at every target (the backward's three), the grouped-query forward, the naive version's softmax, the
    CUDA C rungs at their shape and each Hopper build the benchmark times. `size`: another (B, H, S, D) for every
    case."""
    from . import bench as B
    from . import hopper

    dt = "bfloat16"
    out = []
    runs = {v.name for v in VARIANTS if v.available(gpu)[0]}     # (no tile is resolved for a variant that cannot run)

    def shaped(shape, nbytes, label, batch_only=False):
        sh, _ = fit_shape(size or shape, nbytes, gpu, label, batch_only)
        return sh

    if NAIVE_NAME in runs:
        b, h, s, d = shaped(B.NAIVE_SHAPE, naive_bench_bytes, "naive vs flash")
        block, warps = naive_softmax_config(s)
        out.append(plan.Launch(NAIVE_NAME, "naive_softmax_kernel", "triton", grid=b * h * s, fn=naive_softmax_kernel,
                               signature=triton_signature("naive_softmax", dt),
                               defines={"BLOCK": block, "CAUSAL": False}, num_warps=warps, num_stages=1,
                               case=tr("naive vs flash, {shape}", shape=plan.fmt_size((b, h, s, d)))))
    for label, kind, shape, causal, _peer, _goal in B.TARGETS if FLASH_NAME in runs else ():
        b, h, s, d = shaped(shape, target_bytes(kind), label)
        case = f"{label}, {plan.fmt_size((b, h, s, d))}"
        if kind == "fwd":
            out.append(fwd_launch(FLASH_NAME, gpu, b, h, h, s, s, d, causal, dt, case))
        else:
            out += bwd_launches(FLASH_NAME, gpu, b, h, h, s, s, d, causal, dt, case)
    if FLASH_NAME in runs:
        label, gshape, causal, _goal = B.GQA_TARGET
        if size:
            gshape = (size[0], size[1], size[1], size[2], size[3])
        b, hq, hkv, s, d = shaped(gshape, gqa_bytes, label, batch_only=True)
        out.append(fwd_launch(FLASH_NAME, gpu, b, hq, hkv, s, s, d, causal, dt, f"{label}, B{b} S{s}"))
    cuda_variants = {k: v for k, v in CUDA_VARIANT_NAMES.items() if v in runs}
    b, h, s, d = shaped(B.CUDA_SHAPE, cuda_bench_bytes, "cuda shapes")
    src = cuda_config(d, gpu.arch).source() if cuda_variants else ""
    for kernel, variant in cuda_variants.items():
        defs, nw, smem = cuda_build(kernel, d, dt, arch=gpu.arch)
        out.append(plan.Launch(variant, KERNELS[kernel], "cuda", grid=cuda_grid(kernel, s, b * h, nw),
                               threads=32 * nw, source=CU, defines=defs, dyn_smem=smem,
                               case=tr("cuda shapes, {shape}, causal and not", shape=plan.fmt_size((b, h, s, d))),
                               config_source=src))
    b, h, s, d = shaped(B.TARGETS[0][2], target_bytes("fwd"), "Hopper rungs")
    by_rung = {rung: name for rung, name, _k, _w in HOPPER_RUNGS if name in runs}
    builds = [(rung, hopper.stages_config(rung)) for rung in hopper.KERNELS if rung in by_rung]
    builds = [(rung, r.values[f"STAGES_{rung}"], r.source()) for rung, r in builds]
    builds += [(rung, st, "fixed (a build the benchmark times)") for rung, st in hopper.BENCH_BUILDS
               if rung in by_rung and (rung, st) not in {(r, s_) for r, s_, _ in builds}]
    for rung, stages, source in builds:
        grid = (-(-s // hopper.BLOCK_M), b * h)
        if rung in hopper.PERSISTENT:
            grid = (hopper.persistent_grid(grid[0] * grid[1], gpu.sms),)
        out.append(plan.Launch(by_rung[rung], hopper.KERNELS[rung], "cuda", grid=grid, threads=hopper.THREADS,
                               source=hopper.KERNEL_PATH, defines=hopper.defines(d, dt, stages=stages),
                               arch=hopper.ARCH, dyn_smem=hopper.smem_bytes(d, stages),
                               case=tr("fwd D{d}, {shape}, {stages} stages, causal and not", d=d,
                                       shape=plan.fmt_size((b, h, s, d)), stages=stages),
                               config_source=source))
    return out


def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
