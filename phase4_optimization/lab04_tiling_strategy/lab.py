"""Lab 4.4 - Tiling strategy: tile shape, warps and pipeline stages for a tensor-core GEMM, and wave quantization.

You will learn
  * what a block tile buys and costs. Per k-step a BM x BN tile loads (BM + BN) x BK elements and does
    2 BM BN BK FLOPs: BM BN / (BM + BN) FLOP per byte of bf16 loaded (tile_intensity: 64x64 -> 32, 128x128 -> 64,
    128x256 -> 85, 256x256 -> 128). An H200's bf16 tensor cores need ~225 FLOP/B from HBM (their ridge), so reuse
    across tiles through L2 (grouped program order) and large tiles both matter; but a larger tile needs more
    registers (accumulators) and shared memory (stages x tile), so fewer blocks fit on an SM, and fewer tiles exist to
    spread over 132 SMs;
  * pipeline stages: each stage is a (BM + BN) x BK slab in shared memory that a load can fill while the tensor
    cores work on another; 2 stages hide little of the ~600-cycle HBM latency, 3-4 hide it, more only costs shared
    memory (and occupancy);
  * how to read a tiling sweep: a heat-map of TFLOP/s over (BM, BN), the best warps/stages for each cell, for the
    Triton tl.dot GEMM (lab 4.3's kernel) and the CUDA C mma.sync GEMM (lab 4.3's rung 02, tile shape set by -D
    defines, so every cell is a different compiled kernel);
  * wave quantization: tiles = ceil(M/BM) ceil(N/BN) are handed out to SMs in waves of (SMs x blocks per SM); a last
    wave that is only partly full leaves SMs idle. Predicted efficiency = tiles / (waves x slots). At 128x256 tiles
    and one block per SM: M = N = 4096 gives 32 x 16 = 512 tiles = 3.88 waves of 132 (97%), M = N = 4224 gives
    33 x 17 = 561 = 4.25 waves: the 5th wave is a quarter full, so 561 / 660 = 85% - a 12% drop for 6% more work.

The two numbers (sweep case 4096^3, bf16): 137.4 GFLOP; bytes 3 x 4096^2 x 2 B = 101 MB at least (each operand once,
the ideal a perfect L2 would give). At cuBLAS's rate and the HBM ceiling the FLOPs take ~8x longer than those bytes:
compute-bound - if the tiles give enough reuse. With 64x64 tiles and no L2 reuse the kernel would read
(4096/64) x 2 x 4096^2 x 2 B = 4.3 GB from L2/HBM, ~5x the GEMM's compute time at HBM speed: memory-bound. The tile
shape decides which bound the kernel lives under.

Predictions (H200): 128x256 and 256x128 tiles with 8 warps lead both sweeps (Triton within ~0.8-0.95x cuBLAS;
mma.sync below that, since mma.sync cannot issue at wgmma's rate on Hopper); 64x64 tiles run at well under half of the
best; stages 3-4 beat 2; the wave sweep's measured TFLOP/s tracks the predicted efficiency (dips right after each full
wave). Which held, which missed and why: README.md.

Run: python -m phase4_optimization.lab04_tiling_strategy [--quick] [--no-bench] [--dtype bfloat16] [--replot]
"""
from __future__ import annotations

import itertools
import math
import sys

import numpy as np

from common import lab
from common.triton_support import INTERPRETER

tc = lab.lab_module("phase4_optimization", "lab03_tensor_cores")     # lab 4.3: the two GEMMs this lab tiles

LAB = "phase4_lab04_tiling_strategy"
DTYPES = ("bfloat16", "float16")
SWEEP_SIZE = 4096
TILE_SIDES = (64, 128, 256)
WAVE_SIZES = tuple(range(3840, 4736 + 1, 128))      # M = N from 30 to 37 tiles of 128: several wave boundaries
WAVE_K = 4096

reference = tc.reference
make_inputs = tc.make_inputs
out_dtype = tc.out_dtype
tolerance = tc.tolerance


# ---------------------------------------------------------------------------------------------------------------------
# The models: reuse per tile, waves
# ---------------------------------------------------------------------------------------------------------------------
def tile_intensity(bm: int, bn: int, elt: int = 2) -> float:
    """FLOPs per byte a BM x BN tile does on what it loads (any BK): 2 BM BN BK / (elt (BM + BN) BK)."""
    if bm < 1 or bn < 1 or elt < 1:
        raise ValueError(f"bm, bn, elt: expected positive integers, got {bm}, {bn}, {elt}")
    return 2.0 * bm * bn / (elt * (bm + bn))


def waves(m: int, n: int, bm: int, bn: int, slots: int) -> dict:
    """How a grid of tiles lands on `slots` = SMs x blocks per SM: tiles, waves (fractional), efficiency."""
    for name, v in (("m", m), ("n", n), ("bm", bm), ("bn", bn), ("slots", slots)):
        if not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    full = math.ceil(tiles / slots)
    return {"tiles": tiles, "waves": tiles / slots, "wave_count": full, "efficiency": tiles / (full * slots),
            "last_wave_fill": (tiles - (full - 1) * slots) / slots}


def triton_smem(cfg: dict, elt: int = 2) -> int:
    """Shared memory a Triton tl.dot config asks for: num_stages slabs of (BM + BN) x BK (Triton's own estimate is
    close to this for Hopper; the compiled kernel's metadata.shared is what the sweep records)."""
    return cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elt


def triton_grid(bk: int = 64, warps=(4, 8), stages=(3, 4), sides=TILE_SIDES, smem_limit: int = 227 * 1024):
    """The Triton sweep: every (BM, BN) x warps x stages that fits in shared memory."""
    out = []
    for bm, bn, w, st in itertools.product(sides, sides, warps, stages):
        cfg = tc._tcfg(bm, bn, bk, w, st)
        if triton_smem(cfg) > smem_limit:
            continue
        if bm * bn // (w * 32) > 256:      # > 256 fp32 accumulators per thread: certain spills
            continue
        out.append(cfg)
    return out


def mma_grid(smem_limit: int = tc.SMEM_LIMIT) -> list[dict]:
    """The mma.sync sweep: block tiles from 64 to 256 a side, 64 x 64 warp tiles (32 x 64 for the 64-row tiles),
    BK 32, 3 or 4 stages; only configs the kernel accepts (lab 4.3's config_problems)."""
    out = []
    for bm, bn, st in itertools.product(TILE_SIDES, TILE_SIDES, (3, 4)):
        wm = 32 if bm == 64 else 64
        cfg = tc._cfg(bm, bn, 32, wm, 64, st)
        if not tc.config_problems(cfg, smem_limit):
            out.append(cfg)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Variants: the same two kernels at contrasting tile shapes (every tile shape must be correct on every size)
# ---------------------------------------------------------------------------------------------------------------------
def _triton_at(cfg):
    def fn(a, b, out=None):
        return tc.gemm_triton(a, b, out, config=cfg)
    return fn


def _mma_at(cfg):
    def fn(a, b, out=None):
        return tc.gemm_mma(a, b, out, config=cfg)
    return fn


# In the interpreter num_warps/num_stages are ignored and tiles are kept small (it runs each program in NumPy).
_T_SMALL = tc._tcfg(16, 32, 16, 4, 1, group=2) if INTERPRETER else tc._tcfg(64, 64, 32, 4, 3)
_T_LARGE = tc._tcfg(32, 64, 32, 4, 1, group=4) if INTERPRETER else tc._tcfg(128, 256, 64, 8, 3)
VARIANTS = [
    lab.Variant(f"triton tl.dot {_T_SMALL['BLOCK_M']}x{_T_SMALL['BLOCK_N']}x{_T_SMALL['BLOCK_K']}",
                _triton_at(_T_SMALL), "triton", dtypes=DTYPES),
    lab.Variant(f"triton tl.dot {_T_LARGE['BLOCK_M']}x{_T_LARGE['BLOCK_N']}x{_T_LARGE['BLOCK_K']}",
                _triton_at(_T_LARGE), "triton", dtypes=DTYPES),
    lab.Variant("cuda mma.sync 64x128x32, 4 stages", _mma_at(tc._cfg(64, 128, 32, 32, 64, 4)), "cuda",
                dtypes=DTYPES, archs=tc.TC_ARCHS),
    lab.Variant("cuda mma.sync 256x128x32, 3 stages", _mma_at(tc._cfg(256, 128, 32, 64, 64, 3)), "cuda",
                dtypes=DTYPES, archs=tc.TC_ARCHS),
]
PEERS = [lab.Variant("torch.matmul (cuBLAS)", tc.peer_torch, "peer", dtypes=DTYPES)]
CHECK_CASES = [((1, 1, 1), "bfloat16"), ((127, 129, 131), "bfloat16"), ((257, 300, 64), "float16"),
               ((1000, 1000, 1000), "bfloat16"), ((4224, 1, 77), "bfloat16"), ((33, 4097, 16), "float16")]
CPU_CHECK_CASES = [((1, 1, 1), "bfloat16"), ((37, 70, 19), "bfloat16"), ((65, 33, 48), "float16")]
# Under compute-sanitizer: one element, and an interior 64- or 128-row block with a K tail (lab 4.3's fast copy path
# next to its general one; the 256-row tile has no interior block at this size, kept under tools.sanitize.MAX_COST)
SANITIZE_CASES = [((1, 1, 1), "bfloat16"), ((136, 256, 40), "bfloat16")]
QUICK_CASES = 2


def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)


