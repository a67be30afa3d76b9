"""Lab 4.6's benchmark cases: each target's shape, mask, peer and goal, the grouped-query, naive and CUDA C shapes,
the Hopper rows, what the tile sweep and the CUDA C comparison time, and the bytes each case holds at once, so that a
shape is fitted to a GPU's memory. The plan (lab.launches) and the measurements (timing.py) read them here."""
from __future__ import annotations

import math

from common import device, plan

from .tiles import bwd_preferred


# (label, kind, (B, H, S, D), causal, peer the target is against, goal)
TARGETS = [("fwd D128 non-causal", "fwd", (4, 32, 4096, 128), False, "torch SDPA cuDNN", 0.85),
           ("fwd D128 causal", "fwd", (4, 32, 4096, 128), True, "torch SDPA cuDNN", 0.85),
           ("fwd D64 non-causal", "fwd", (8, 32, 2048, 64), False, "torch SDPA cuDNN", 0.85),
           ("bwd D128 non-causal", "bwd", (4, 32, 4096, 128), False, "torch SDPA flash", 1.2)]
# The grouped-query forward target: q (B, Hq, S, D), k and v with Hkv heads; the peer is SDPA's fastest
# backend on k, v expanded to Hq heads beforehand (the expansion not timed), and native enable_gqa where it runs
GQA_TARGET = ("fwd GQA 32 q / 8 kv heads, D128 non-causal", (4, 32, 8, 4096, 128), False, 0.85)
NAIVE_SHAPE = (4, 32, 2048, 128)
CUDA_SHAPE = (4, 32, 4096, 128)          # the CUDA C rungs' target shape (B, H, S, D)
CUDA_GOAL = 1.0                          # rung 02 against SDPA's FlashAttention-2 backend, non-causal
# The Hopper rung (kernels_hopper.cu, sm_90a) beside the Triton forward in the D128 forward targets' rounds, against
# SDPA cuDNN, causal and not
HOPPER_ROW = "cuda 03 wgmma+TMA flash"
# (rung, K/V ring depth) -> row name; each rung at its default depth keeps the plain name (hopper.BENCH_BUILDS lists
# what is timed: the other depth too, to separate the schedule's effect from the ring's)
HOPPER_ROWS = {("03", 2): HOPPER_ROW, ("04", 2): "cuda 04 wgmma+TMA ping-pong flash",
               ("04", 3): "cuda 04 wgmma+TMA ping-pong flash, 3 stages",
               ("05", 3): "cuda 05 wgmma+TMA overlapped-softmax flash",
               ("05", 2): "cuda 05 wgmma+TMA overlapped-softmax flash, 2 stages",
               ("03", 3): "cuda 03 wgmma+TMA flash, 3 stages",
               ("06", 3): "cuda 06 wgmma+TMA overlapped-softmax ping-pong flash",
               ("07", 3): "cuda 07 wgmma+TMA persistent overlapped-softmax flash",
               ("08", 3): "cuda 08 wgmma+TMA persistent overlapped-softmax ping-pong flash"}
HOPPER_CASES = ("fwd D128 non-causal", "fwd D128 causal")
HOPPER_GOAL = 1.02                       # the Hopper forward's rungs against SDPA cuDNN: past it, MHA and GQA
# The Hopper forward's grouped-query cases, causal and not: (label, (B, Hq, Hkv, S, D)), against SDPA's fastest
# grouped-query forward (cuDNN on k, v expanded, or native enable_gqa); the rungs timed there, each at its default
# K/V ring depth (the default kernel and the persistent ones)
HOPPER_GQA = ("fwd GQA 32 q / 8 kv heads, D128", (4, 32, 8, 4096, 128))
HOPPER_GQA_RUNGS = ("06", "07", "08")
HOPPER_BWD_GOAL = 1.0                    # the CUDA C backward's default rung against SDPA cuDNN's backward
FWD_CANDIDATES = {128: [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
                        # the attempts at the gap to cuDNN (attn_fwd_kernel's comments): K/V through TMA
                        # descriptors; the key loop warp-specialized by Triton (a no-op on sm_90 in Triton 3.6,
                        # timed to show it); the unmasked loop software-pipelined by hand (PIPE), with and without TMA
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "TMA": True},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": True},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "TMA": True, "WS": True},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "PIPE": True},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": True, "PIPE": True},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2, "TMA": True, "PIPE": True}],
                  64: [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
                       {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
                       {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
                       {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 3}]}
BWD_CANDIDATES = {128: [bwd_preferred(128),
                        {"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "num_warps": 8,
                         "num_stages": 2},
                        {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8,
                         "num_stages": 2},
                        {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4,
                         "num_stages": 3}]}
# The CUDA C forward's rungs and shapes timed against SDPA: (kernel, nwarps, min_blocks) - rungs 01 and 02 at their
# defaults, rung 02 in the two other occupancy shapes (4 warps x 2 CTAs per SM, 8 warps x 1), and rung 02w
CUDA_CONFIGS = (("01", None, None), ("02", None, None), ("02", None, 2), ("02", 8, None), ("02w", None, None))


# ---------------------------------------------------------------------------------------------------------------------
# What a case holds in memory, and its shape fitted to a GPU
# ---------------------------------------------------------------------------------------------------------------------
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
