"""Lab 4.6's shared pieces, which every other module of the folder builds on and which import nothing of the lab:
the results' name, the dtypes and head dims each kernel family takes, the kernels' limits and constants, the check of
(B, H, S, D), causal and sm_scale that every wrapper makes first, and the lesson's two numbers (the FLOPs, and the
bytes each version must move)."""
from __future__ import annotations

import math

import numpy as np


LAB = "phase4_lab06_attention"
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


# ---------------------------------------------------------------------------------------------------------------------
# The check every wrapper (Triton, CUDA C, Hopper) makes of (B, H, S, D), causal and sm_scale
# ---------------------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------------------
# The two numbers: the FLOPs, and the bytes each version must move
# ---------------------------------------------------------------------------------------------------------------------
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
