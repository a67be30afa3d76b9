"""Lab 4.3, kernels.cu's configuration: CONFIG, every compile-time knob of the file in one place (rung 02's tile BM,
BN, BK, WM, WN, STAGES and its optional MIN_BLOCKS, DB, XT, GROUP_M; tc_00's PEAK_CHAINS; tc_01's fixed tile), the
short list --tune times (CONFIGS), what makes one valid on a GPU (config_problems, mirroring the kernel's
static_asserts; the XOR swizzle and ldmatrix's bank conflicts on it), and which one runs here (mma_config: CONFIG, this
GPU's --tune record, --set)."""
from __future__ import annotations

import numpy as np

from common import config, device, tuned

TUNED = "phase4_lab03_tensor_cores_tuned"     # the --tune record of the winner (lab.py: LAB + "_tuned")

# CONFIG: kernels.cu's compile-time knobs, in ONE place. Every entry reaches the kernel as -DNAME=VALUE on every compile
# (cuda_rungs.defines: the wrappers, the compile report, --plan, lab 4.4, the tests), beside the build's IN_FP16 and
# OUT_F32 (cuda_rungs.BUILD_DEFINES); kernels.cu holds no value of its own, and a compile without one stops with an
# #error naming it. Rung 02's tile (the first nine) is what mma_config resolves: this GPU's --tune record and --set
# BM=.. (and the others of those nine) override it for a run; a config passed to gemm_mma replaces them.
#   BM, BN, BK = 128, 256, 32   rung 02's block tile (the reasoning: DEFAULT_CONFIG below)
#   WM, WN = 64, 64             its warp tile: eight warps of 64 x 64
#   STAGES = 4                  cp.async pipeline depth (k-tiles in shared memory)
#   MIN_BLOCKS = 1              __launch_bounds__' blocks per SM (2 caps registers at 65536 / (2 x threads))
#   DB = 0                      1: fragments double-buffered in registers (an attempt; README)
#   XT = 0                      1: the cross-tile main loop (attempt 2; kernels.cu's header); needs DB = 0
#   GROUP_M = 8                 tile rows per group of rung 02's block order (L2 reuse)
#   PEAK_CHAINS = 8             tc_00_mma_peak: independent mma.sync chains per warp
#   WMMA_BM, WMMA_BN = 64, 64   tc_01_wmma's block tile: fixed by its 2 x 2 warps of 32 x 32 (the .cu's static_assert
#                               refuses another value); wmma_grid reads it
CONFIG = dict(BM=128, BN=256, BK=32, WM=64, WN=64, STAGES=4, MIN_BLOCKS=1, DB=0, XT=0, GROUP_M=8, PEAK_CHAINS=8,
              WMMA_BM=64, WMMA_BN=64)
CONFIG_KEYS = ("BM", "BN", "BK", "WM", "WN", "STAGES")
OPTIONAL_KEYS = ("MIN_BLOCKS", "DB", "XT")    # a config may leave these out: CONFIG's values apply
TILE_KEYS = CONFIG_KEYS + OPTIONAL_KEYS       # what mma_config resolves (--set, the --tune record)


def _cfg(bm, bn, bk, wm, wn, stages) -> dict:
    return dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, STAGES=stages)


# 128 x 256 x 32 with eight 64 x 64 warp tiles: each warp holds 128 fp32 accumulators per thread (~240 registers, no
# spill) and issues 8 ldmatrix.x4 per 32 mma.sync per 16-deep step; 4 stages = 96 KiB of shared memory, one block per
# SM (register-limited), 3 tiles in flight to cover the global latency. 96 KiB fits every GPU that has mma.sync: the
# smallest opt-in limit among them is 99 KiB a block (sm_86, sm_89, sm_120), so the default needs no GPU-dependent
# fallback (tests/test_phase4_lab03_tensor_cores.py checks it against every profile).
DEFAULT_CONFIG = {k: CONFIG[k] for k in CONFIG_KEYS}
# The optional keys of a config and what the kernel gets without them (CONFIG's values): a resolved config
# (mma_config) carries all of them, so --set XT=1 and a tuned record's XT reach the kernel and the run lists them.
OPTIONAL = {k: CONFIG[k] for k in OPTIONAL_KEYS}
CONFIGS: list[dict] = [
    DEFAULT_CONFIG,
    _cfg(128, 256, 64, 64, 64, 3),      # 64-deep k-tiles: half the barriers, 144 KiB
    _cfg(256, 128, 32, 64, 64, 4),      # the transposed block shape
    _cfg(128, 128, 32, 64, 64, 4),      # 4 warps, 64 KiB: two blocks per SM, barriers no longer SM-wide
    _cfg(64, 128, 32, 32, 64, 4),       # small tiles for small problems (4 warps of 32 x 64)
    # Four warps per scheduler instead of two (the profile of the default showed two warps per scheduler and the
    # tensor pipe idle more than half the time; README): 64 x 32 warp tiles hold 64 accumulators, ~128 registers
    _cfg(128, 256, 32, 64, 32, 4),                      # 16 warps in one block
    dict(_cfg(128, 128, 32, 64, 32, 4), MIN_BLOCKS=2),  # 8 warps, two blocks per SM
    # Fragments double-buffered in registers (DB = 1): step kk + 1's ldmatrix issued before step kk's mma.sync, so
    # the shared-memory latency hides behind this warp's own 32 MMAs (the profile: two warps per scheduler)
    dict(_cfg(128, 128, 32, 64, 64, 4), DB=1),
    dict(_cfg(128, 256, 64, 64, 64, 3), DB=1),
    # Attempt 2, the cross-tile loop (XT = 1; kernels.cu's header): the k-loop unrolled by STAGES so every ldmatrix and
    # cp.async address is a register plus a constant, the next k-tile's first fragments loaded while the last step's
    # MMAs issue, the barrier between two halves of those MMAs. BK = 64 spills with XT at 64 x 64 warp tiles: not listed
    dict(_cfg(128, 128, 32, 64, 64, 4), XT=1),
    dict(_cfg(128, 128, 32, 64, 64, 6), XT=1),          # 96 KiB: still two blocks on an SM with 192 KiB or more
    dict(_cfg(128, 256, 32, 64, 64, 4), XT=1),
]
# Kept short on purpose: the CPU tier compiles every entry for sm_80 and sm_90 (~5 s each). Other candidates worth a
# sweep (lab 4.4): 128x256x32 with 3 stages (72 KiB), 128x128x64 with 3 stages (4 warps, 96 KiB, 2 blocks per SM).


def config_problems(cfg: dict, smem_limit: int | None = None, gpu: device.DeviceInfo | None = None) -> list[str]:
    """Why a config cannot compile or launch on `gpu` ([] when it can); mirrors the kernel's static_asserts. gpu:
    default the GPU every prediction uses here (device.current()); smem_limit: default its opt-in shared memory per
    block."""
    gpu = gpu or device.current()
    smem_limit = gpu.smem_per_block_optin if smem_limit is None else smem_limit
    missing = [k for k in CONFIG_KEYS if k not in cfg]
    if missing:
        return [f"missing keys {missing} (a config is a dict of {', '.join(CONFIG_KEYS)})"]
    extra = sorted(set(cfg) - set(TILE_KEYS) - {"GROUP_M"})
    if extra:
        return [f"unknown keys {extra}"]
    if not all(isinstance(cfg[k], (int, np.integer)) and not isinstance(cfg[k], bool)
               and cfg[k] >= (0 if k in ("DB", "XT") else 1) for k in cfg):
        return ["every value must be a positive integer (DB, XT: 0 or 1)"]
    bm, bn, bk, wm, wn, st = (int(cfg[k]) for k in CONFIG_KEYS)
    p = []
    if bm % wm or bn % wn:
        p.append("warp tiles must tile the block tile (BM % WM == 0 and BN % WN == 0)")
    if wm % 16 or wn % 16:
        p.append("WM and WN must be multiples of 16 (16 x 16 pieces: ldmatrix.x4 loads two 8-wide B tiles)")
    if bk not in (32, 64):
        p.append("BK must be 32 or 64 (the swizzle handles 64- and 128-byte rows)")
    if bn % 64:
        p.append("BN must be a multiple of 64")
    threads = config_threads(cfg) if not (bm % wm or bn % wn) else 0
    if not 32 <= threads <= 1024:
        p.append(f"{threads} threads per block (1-32 warps)")
    else:
        a_chunks, b_chunks = bm * bk // 8, bk * bn // 8
        if a_chunks % threads or b_chunks % threads or a_chunks < threads or b_chunks < threads:
            p.append("each thread must copy a whole number (>= 1) of 16-byte chunks of each tile")
    if wm * wn > 64 * 64:
        p.append(f"warp tile {wm}x{wn}: more than 128 fp32 accumulators per thread would spill")
    if st < 2:
        p.append("STAGES must be >= 2")
    if config_smem(cfg) > smem_limit:
        p.append(f"{config_smem(cfg)} B of shared memory > {smem_limit} B per block")
    db, xt = int(cfg.get("DB", CONFIG["DB"])), int(cfg.get("XT", CONFIG["XT"]))
    if db > 1:
        p.append("DB must be 0 or 1")
    if xt > 1:
        p.append("XT must be 0 or 1")
    elif xt and db:
        p.append("XT double-buffers the fragments itself: DB must be 0 with XT = 1")
    if int(cfg.get("GROUP_M", CONFIG["GROUP_M"])) < 1:
        p.append("GROUP_M must be >= 1")
    mb, per_sm = int(cfg.get("MIN_BLOCKS", CONFIG["MIN_BLOCKS"])), gpu.max_threads_per_sm
    if threads and not 1 <= mb <= per_sm // threads:
        p.append(f"MIN_BLOCKS must be 1..{per_sm // threads} ({threads} threads per block, {per_sm} per SM)")
    return p


def config_threads(cfg: dict) -> int:
    return (cfg["BM"] // cfg["WM"]) * (cfg["BN"] // cfg["WN"]) * 32


def config_smem(cfg: dict) -> int:
    return cfg["STAGES"] * (cfg["BM"] * cfg["BK"] + cfg["BK"] * cfg["BN"]) * 2


def validate_config(cfg: dict | None, smem_limit: int | None = None, gpu: device.DeviceInfo | None = None) -> dict:
    """A checked copy of a config (the default when None); ValueError naming every problem otherwise (on `gpu`,
    default device.current(), as config_problems)."""
    if cfg is None:
        return {k: int(CONFIG[k]) for k in CONFIG_KEYS}
    if not isinstance(cfg, dict):
        raise TypeError(f"config: expected a dict with keys {CONFIG_KEYS}, got {type(cfg).__name__}")
    bad = config_problems(cfg, smem_limit, gpu)
    if bad:
        raise ValueError(f"config {cfg}: {'; '.join(bad)}")
    return {k: int(v) for k, v in cfg.items()}


def short(cfg: dict) -> str:
    return (f"{cfg['BM']}x{cfg['BN']}x{cfg['BK']} warp {cfg['WM']}x{cfg['WN']} {cfg['STAGES']} stages "
            f"({config_threads(cfg) // 32} warps, {config_smem(cfg) // 1024} KiB"
            + (f", >= {cfg['MIN_BLOCKS']} blocks/SM" if cfg.get("MIN_BLOCKS", 1) > 1 else "")
            + (", fragments double-buffered" if cfg.get("DB", 0) else "")
            + (", cross-tile loop XT" if cfg.get("XT", 0) else "") + ")")


def swizzle(r: int, c: int, cpr: int) -> int:
    """The kernel's swz<CPR>: the 16-byte chunk slot of logical chunk c of row r in a tile of cpr chunks per row."""
    if cpr >= 8:
        return r * cpr + (c ^ (r & 7))
    return r * cpr + (c ^ ((r >> 1) & 3))


def ldmatrix_conflicts(cpr: int, rows: int) -> int:
    """Worst bank-conflict degree of one ldmatrix phase (8 rows, one chunk column) over a swizzled tile: 1 = none.
    Banks are 4 bytes wide, 32 of them: a 16-byte chunk slot s covers banks 4 (s mod 8) .. 4 (s mod 8) + 3."""
    worst = 1
    for r0 in range(0, rows, 8):
        for c in range(cpr):
            groups = [swizzle(r0 + i, c, cpr) % 8 for i in range(8)]
            worst = max(worst, max(groups.count(g) for g in set(groups)))
    return worst


def _check_winner(w: dict) -> dict:
    """A recorded winner's shape (keys, tiling, values); its shared memory is checked against the GPU it is applied
    to, by mma_config."""
    return validate_config({k: int(v) for k, v in w.items()}, smem_limit=2**31)


def mma_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The mma.sync configuration gemm_mma runs on `gpu` (default: the GPU every prediction uses here), the one place
    it is decided: CONFIG's tile (TILE_KEYS), then the --tune winner recorded for this GPU
    (results/<gpu>/<TUNED>.json), then --set BM=.. BN=.. BK=.. WM=.. WN=.. STAGES=.. MIN_BLOCKS=.. DB=.. XT=..; the
    result is checked against this GPU's limits (its opt-in shared memory per block, threads per SM) and refused with
    a ValueError naming what is wrong."""
    gpu = gpu or device.current()
    winner, source = tuned.record(TUNED, _check_winner, gpu=gpu)

    def check(v: dict) -> dict:
        return validate_config(v, gpu=gpu)

    base = {k: int(CONFIG[k]) for k in TILE_KEYS}
    optional = {k: base[k] for k in OPTIONAL_KEYS}
    return config.resolve("tc_02_mma_sync", base, tuned=dict(optional, **winner) if winner else None,
                          tuned_source=source, validate=check)
