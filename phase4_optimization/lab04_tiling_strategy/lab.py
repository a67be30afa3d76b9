"""Lab 4.4 - Tiling strategy: tile shape, warps and pipeline stages for a tensor-core GEMM, and wave quantization.

You will learn
  * what a block tile buys and costs. Per k-step a BM x BN tile loads (BM + BN) x BK elements and does
    2 BM BN BK FLOPs: BM BN / (BM + BN) FLOP per byte of bf16 loaded (tile_intensity: 64x64 -> 32, 128x128 -> 64,
    128x256 -> 85, 256x256 -> 128). A data-center GPU's bf16 tensor cores need a few hundred FLOP per byte from HBM
    (their ridge point; `--plan` prints this GPU's), so reuse across tiles through L2 (grouped program order) and
    large tiles both matter; but a larger tile needs more registers (accumulators) and shared memory (stages x tile),
    so fewer blocks fit on an SM, and fewer tiles exist to spread over the GPU's SMs;
  * pipeline stages: each stage is a (BM + BN) x BK slab in shared memory that a load can fill while the tensor
    cores work on another; 2 stages hide little of the ~600-cycle HBM latency, 3-4 hide it, more only costs shared
    memory (and occupancy);
  * how to read a tiling sweep: a heat-map of TFLOP/s over (BM, BN), the best warps/stages for each cell, for the
    Triton tl.dot GEMM (lab 4.3's kernel) and the CUDA C mma.sync GEMM (lab 4.3's rung 02, tile shape set by -D
    defines, so every cell is a different compiled kernel);
  * wave quantization: tiles = ceil(M/BM) ceil(N/BN) are handed out to SMs in waves of (SMs x blocks per SM); a last
    wave that is only partly full leaves SMs idle. Predicted efficiency = tiles / (waves x slots). At 128x256 tiles
    and one block per SM on a GPU of 132 SMs: M = N = 4096 gives 32 x 16 = 512 tiles = 3.88 waves (97%), M = N = 4224
    gives 33 x 17 = 561 = 4.25 waves: the 5th wave is a quarter full, so 561 / 660 = 85% - a 12% drop for 6% more
    work. The same sizes on another SM count land elsewhere: `--plan` works them out for this GPU.

The two numbers (sweep case 4096^3, bf16): 137.4 GFLOP; bytes 3 x 4096^2 x 2 B = 101 MB at least (each operand once,
the ideal a perfect L2 would give). At cuBLAS's rate and the HBM ceiling the FLOPs take ~8x longer than those bytes:
compute-bound - if the tiles give enough reuse. With 64x64 tiles and no L2 reuse the kernel would read
(4096/64) x 2 x 4096^2 x 2 B = 4.3 GB from L2/HBM, ~5x the GEMM's compute time at HBM speed: memory-bound. The tile
shape decides which bound the kernel lives under.

Predictions (a Hopper GPU, where the lesson was measured): 128x256 and 256x128 tiles with 8 warps lead both sweeps
(Triton within ~0.8-0.95x cuBLAS; mma.sync below that, since mma.sync cannot issue at wgmma's rate on Hopper); 64x64
tiles run at well under half of the best; stages 3-4 beat 2; the wave sweep's measured TFLOP/s tracks the predicted
efficiency (dips right after each full wave). Which held, which missed and why: README.md. The sweeps keep only the
tiles that fit this GPU's shared memory, and the wave model counts its SMs.

Run: python -m phase4_optimization.lab04_tiling_strategy [--quick] [--no-bench] [--dtype bfloat16] [--replot]
     [--plan [--gpu NAME]]
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from common import config, device, lab, plan
from common.triton_support import INTERPRETER
from phase4_optimization.lab03_tensor_cores import lab as tc      # lab 4.3: the two GEMMs this lab tiles

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


triton_smem = tc.triton_smem      # num_stages slabs of (BM + BN) x BK: what a pipelined tl.dot config asks for


def triton_grid(bk: int = 64, warps=(4, 8), stages=(3, 4), sides=TILE_SIDES, smem_limit: int | None = None,
                gpu: device.DeviceInfo | None = None):
    """The Triton sweep: every (BM, BN) x warps x stages that fits the shared memory a block may have on `gpu`
    (default: the GPU every prediction uses here; smem_limit overrides it)."""
    if smem_limit is None:
        smem_limit = (gpu or device.current()).smem_per_block_optin
    out = []
    for bm, bn, w, st in itertools.product(sides, sides, warps, stages):
        cfg = tc._tcfg(bm, bn, bk, w, st)
        if triton_smem(cfg) > smem_limit:
            continue
        if bm * bn // (w * 32) > 256:      # > 256 fp32 accumulators per thread: certain spills
            continue
        out.append(cfg)
    return out


def mma_grid(smem_limit: int | None = None, gpu: device.DeviceInfo | None = None) -> list[dict]:
    """The mma.sync sweep: block tiles from 64 to 256 a side, 64 x 64 warp tiles (32 x 64 for the 64-row tiles),
    BK 32, 3 or 4 stages; only configs the kernel accepts on `gpu` (lab 4.3's config_problems: its shared memory per
    block, default the GPU every prediction uses here; smem_limit overrides it)."""
    out = []
    for bm, bn, st in itertools.product(TILE_SIDES, TILE_SIDES, (3, 4)):
        wm = 32 if bm == 64 else 64
        cfg = tc._cfg(bm, bn, 32, wm, 64, st)
        if not tc.config_problems(cfg, smem_limit, gpu):
            out.append(cfg)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Variants: the same two kernels at contrasting tile shapes (every tile shape must be correct on every size)
# ---------------------------------------------------------------------------------------------------------------------
# The two Triton tiles on a GPU, and what the interpreter runs in their place (it ignores num_warps/num_stages and runs
# each program in NumPy, so its tiles are kept small); the variants are named for the GPU's tiles.
T_SMALL, T_LARGE = tc._tcfg(64, 64, 32, 4, 3), tc._tcfg(128, 256, 64, 8, 3)
_T_SMALL = tc._tcfg(16, 32, 16, 4, 1, group=2) if INTERPRETER else T_SMALL
_T_LARGE = tc._tcfg(32, 64, 32, 4, 1, group=4) if INTERPRETER else T_LARGE
MMA_SMALL = tc._cfg(64, 128, 32, 32, 64, 4)           # 48 KiB
MMA_LARGE = tc._cfg(256, 128, 32, 64, 64, 3)          # 72 KiB


def triton_large_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The pipeline depth of the large Triton tile on `gpu` (default: the GPU at hand, else the one every prediction
    uses), decided here: LARGE_STAGES, then --set LARGE_STAGES=N. The default is derived from the GPU: 3 stages of
    128 x 256 x 64 need 144 KiB of shared memory, more than a block may have on GPUs that give it 99 KiB (sm_86, sm_89,
    sm_120), so there it is the most stages that fit (2, 96 KiB): the variant keeps its tile shape on every GPU."""
    interpreter = INTERPRETER and gpu is None           # the interpreter runs a small stand-in (_T_LARGE)
    gpu = gpu or (device.info() if device.has_gpu() else device.current())
    limit = gpu.smem_per_block_optin
    fits = [st for st in range(T_LARGE["num_stages"], 0, -1) if triton_smem(dict(T_LARGE, num_stages=st)) <= limit]

    def check(v: dict) -> dict:
        need = triton_smem(dict(T_LARGE, num_stages=v["LARGE_STAGES"]))
        if v["LARGE_STAGES"] < 1 or (need > limit and not interpreter):
            raise ValueError(f"LARGE_STAGES: 1 or more, and {v['LARGE_STAGES']} stages of 128 x 256 x 64 need {need} B "
                             f"of shared memory, more than the {limit} B a block may have on {gpu.name}")
        return v

    return config.resolve("triton tl.dot 128x256x64", {"LARGE_STAGES": fits[0] if fits else 1}, validate=check)


def triton_large(gpu: device.DeviceInfo | None = None) -> dict:
    """The large Triton tile as the variant runs it on `gpu`: T_LARGE with triton_large_config's stages (the
    interpreter runs its small stand-in)."""
    stages = triton_large_config(gpu)["LARGE_STAGES"]
    return _T_LARGE if INTERPRETER and gpu is None else dict(T_LARGE, num_stages=stages)


def _triton_at(cfg):
    def fn(a, b, out=None):
        return tc.gemm_triton(a, b, out, config=cfg() if callable(cfg) else cfg)
    return fn


def _mma_at(cfg):
    def fn(a, b, out=None):
        return tc.gemm_mma(a, b, out, config=cfg)
    return fn


def _name(kind: str, cfg: dict) -> str:
    if kind == "triton":
        return f"triton tl.dot {cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']}"
    return f"cuda mma.sync {cfg['BM']}x{cfg['BN']}x{cfg['BK']}, {cfg['STAGES']} stages"


VARIANTS = [
    lab.Variant(_name("triton", T_SMALL), _triton_at(_T_SMALL), "triton", dtypes=DTYPES,
                unavailable=tc.triton_unavailable, note="the interpreter runs 16x32x16 tiles"),
    lab.Variant(_name("triton", T_LARGE), _triton_at(triton_large), "triton", dtypes=DTYPES,
                unavailable=tc.triton_unavailable,
                note="3 stages, or as many as fit this GPU's shared memory (triton_large); the interpreter runs "
                     "32x64x32 tiles"),
    lab.Variant(_name("mma", MMA_SMALL), _mma_at(MMA_SMALL), "cuda", dtypes=DTYPES, archs=tc.TC_ARCHS),
    lab.Variant(_name("mma", MMA_LARGE), _mma_at(MMA_LARGE), "cuda", dtypes=DTYPES, archs=tc.TC_ARCHS),
]
PEERS = [lab.Variant("torch.matmul (cuBLAS)", tc.peer_torch, "peer", dtypes=DTYPES)]
CHECK_CASES = [((1, 1, 1), "bfloat16"), ((127, 129, 131), "bfloat16"), ((257, 302, 64), "float16"),
               ((1000, 1000, 1000), "bfloat16"), ((4224, 1, 77), "bfloat16"), ((33, 4097, 16), "float16")]
CPU_CHECK_CASES = [((1, 1, 1), "bfloat16"), ((37, 70, 19), "bfloat16"), ((65, 33, 48), "float16")]
# Under compute-sanitizer: one element, and an interior 64- or 128-row block with a K tail (lab 4.3's fast copy path
# next to its general one; the 256-row tile has no interior block at this size, kept under tools.sanitize.MAX_COST)
SANITIZE_CASES = [((1, 1, 1), "bfloat16"), ((136, 256, 40), "bfloat16")]
QUICK_CASES = 2


# ---------------------------------------------------------------------------------------------------------------------
# The plan: the variants' launches at the sweep size on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the sweep holds at n^3: A, B and C in bf16, and the float64 copy of B the spot check multiplies by."""
    return 3 * 2 * n * n + 8 * n * n


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    """The four variants at the sweep's size, bf16, on `gpu` (the sweeps themselves time every cell of triton_grid
    and mma_grid that fits the GPU; --plan lists those counts among the predictions)."""
    if not lab.arch_matches(gpu.arch, tc.TC_ARCHS):
        return []                           # both GEMMs need bf16 tensor cores: no variant runs there
    n, _ = plan.fit(size or SWEEP_SIZE, bench_bytes, gpu)
    dt, case = "bfloat16", f"{n}^3 bfloat16"
    large = triton_large_config(gpu)
    return [tc.triton_launch(VARIANTS[0].name, n, T_SMALL, dt, case),
            tc.triton_launch(VARIANTS[1].name, n, triton_large(gpu), dt, case, large.source()),
            tc.mma_launch(VARIANTS[2].name, n, MMA_SMALL, dt, case),
            tc.mma_launch(VARIANTS[3].name, n, MMA_LARGE, dt, case)]

