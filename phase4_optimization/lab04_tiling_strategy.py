"""Lab 4.4 - Tiling strategy: tile shape, warps and pipeline stages for a tensor-core GEMM, and wave quantization.

You will learn
  * what a block tile buys and costs. Per k-step a BM x BN tile loads (BM + BN) x BK elements and does
    2 BM BN BK FLOPs: BM BN / (BM + BN) FLOP per byte of bf16 loaded (tile_intensity: 64x64 -> 32, 128x128 -> 64,
    128x256 -> 85, 256x256 -> 128). The H200's
    bf16 tensor cores need ~990 TFLOP/s / 4.4 TB/s = ~225 FLOP/B from HBM, so reuse across tiles through L2 (grouped
    program order) and large tiles both matter; but a larger tile needs more registers (accumulators) and shared
    memory (stages x tile), so fewer blocks fit on an SM, and fewer tiles exist to spread over 132 SMs;
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
the ideal a perfect L2 would give). At ~700 TFLOP/s: 0.2 ms; 101 MB at 4.4 TB/s: 0.023 ms. Compute-bound by ~8x - if
the tiles give enough reuse: with 64x64 tiles and no L2 reuse the kernel would read (4096/64) x 2 x 4096^2 x 2 B =
4.3 GB from L2/HBM, 0.98 ms at HBM speed - memory-bound. The tile shape decides which bound the kernel lives under.

Predictions (H200): 128x256 and 256x128 tiles with 8 warps lead both sweeps (Triton: ~600-700 TFLOP/s; mma.sync:
below that, since mma.sync cannot issue at wgmma's rate on Hopper); 64x64 tiles run at well under half of the best;
stages 3-4 beat 2; the wave sweep's measured TFLOP/s tracks the predicted efficiency (dips right after each full
wave).
Measured on an H200 (results/h200/phase4_lab04_tiling_strategy.json; bf16 4096^3, cuBLAS 732 TFLOP/s in the same
run): some predictions held, some missed.
  * Triton sweep (33 configs): the ranking held, the rate came in ~2% under the predicted ~600-700. The best was
    128 x 256 x 64, 8 warps, 3 stages: 586.1 TFLOP/s = 0.801x cuBLAS; 256 x 128 with 8 warps came next (574.0 with
    4 stages, 573.0 with 3), then 128 x 256 with 8 warps and 4 stages (563.5) and 128 x 128 (556.2). Three configs
    collapsed: 128 x 256 with 4 warps (87.5-87.8), 256 x 128 with 4 warps (153.5-153.9) and 256 x 256 with 8 warps
    (94.5). All three give each thread 256 fp32 accumulators, more than the 255 registers a thread can have, so the
    likely cause is spilling (an inference: the JSON records no register counts for the Triton configs and no ncu
    profile was taken).
  * mma.sync sweep (18 configs, 113.9-288.7 TFLOP/s): missed. The leader was 128 x 128 x 32, 4 stages: 288.7 =
    0.394x cuBLAS, ahead of 128 x 256 (256.2-258.9) and 256 x 128 (253.9-255.6), both level with 256 x 64
    (256.8-258.4). Part of it may be occupancy (inference): NVRTC 13.0 gives the 64 x 64 warp tile
    238-242 registers per thread, so the 8-warp 128 x 256 and 256 x 128 blocks run one per SM while the 4-warp
    128 x 128 block fits two; but 256 x 64, also 4 warps and two blocks per SM, ran at the 128 x 256 rate, so
    occupancy is not the whole story. 256 x 256 (16 warps, capped at 128 registers) spills (496 bytes of spill stores
    in the compile report) and ran at 113.9-122.2. This sweep ran the kernel as it was at commit 31784b5. A profile
    taken afterwards (lab 4.3's docstring, results/h200/profile/) found most of the gap outside the tile shape: each
    cp.async chunk cost ~25 integer instructions, so HMMA was 22% of the issued instructions. With the interior fast
    path lab 4.3 added, its --tune (7 of these shapes, results/h200/phase4_lab03_tensor_cores_tuned.json) measured
    128 x 128 x 32 at 377.3 TFLOP/s = 0.48x, still first, 128 x 256 x 64 365.0, 128 x 256 x 32 339.6, 256 x 128 x 32
    327.0: every shape gained 28-42%, the order barely moved. This heat-map was not re-run with the new kernel.
    Over all of it sits HMMA's own rate on sm_90 (~610-635 TFLOP/s at a fully busy pipe, lab 4.3).
  * 64 x 64 "well under half of the best": missed. Triton 64 x 64 ran at 329.5-370.2 TFLOP/s (0.56-0.63 of the
    best), mma.sync at 189.3-192.0 (0.66 of its best). The 4.3 GB of re-reads counted above took 0.371-0.417 ms in
    Triton, not the 0.98 ms HBM would need: consistent with the re-reads coming from L2 at ~10-12 TB/s (inference).
  * Stages: the sweep held no 2-stage config, so "3-4 beat 2" was not tested; 3 against 4 had no consistent winner
    (Triton 128 x 128, 4 warps: 538.5 with 3, 423.3 with 4; 64 x 64, 4 warps: 347.0 with 3, 370.2 with 4).
  * Wave sweep (the best Triton config, K = 4096, one block per SM, 132 slots; measured efficiency = TFLOP/s / the
    sweep's best, 566.5 at M = N = 4096 - the same config ran at 586.1 in the tile sweep, ~3% run to run): held where
    the last wave is a quarter to a third full, missed where it is ~40% full. Predicted vs measured: 3840 (3.41
    waves) 0.852 vs 0.937; 3968 0.939 vs 0.958; 4096 0.970 vs 1.00; 4224 (4.25 waves) 0.850 vs 0.868, a 13% drop in
    TFLOP/s (491.8 against 566.5) for 6% more work, as predicted; 4352 (4.38 waves) 0.876 vs 0.951; 4480 0.955 vs
    0.950; 4608 0.982 vs 0.993; 4736 (5.33 waves) 0.888 vs 0.896. The model overstates the loss at 3840 and 4352.
    Possible reasons (inference, not profiled): the blocks of a partly filled last wave share L2 and HBM bandwidth
    and the power budget with fewer neighbours, so they may finish faster than a full wave's (a higher clock, less
    contention); and blocks do not run in lockstep waves - a slot refills as soon as its block ends - so the tail is
    shorter than one whole tile time.

Run: python -m phase4_optimization.lab04_tiling_strategy [--quick] [--no-bench]
"""
from __future__ import annotations

import itertools
import math
import os
import sys
import time

import numpy as np

from common import bench, check, cli, device, lab, report
from common.triton_support import INTERPRETER
tc = lab.lab_module("phase4_optimization", "lab03_tensor_cores")

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


# ---------------------------------------------------------------------------------------------------------------------
# Sweeps (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _pair(m, n, k, dtype="bfloat16"):
    import torch

    g = torch.Generator(device="cuda").manual_seed(m * 7 + n)
    a = torch.randn(m, k, device="cuda", dtype=getattr(torch, dtype), generator=g)
    b = torch.randn(k, n, device="cuda", dtype=getattr(torch, dtype), generator=g)
    return a, b


def _spot_check(out, a, b) -> float:
    """Relative error of a sample of output rows against a float64 product (every swept kernel is checked)."""
    import torch

    rows = torch.arange(0, a.shape[0], max(1, a.shape[0] // 16), device=a.device)
    ref = a[rows].double() @ b.double()
    return float((out[rows].double() - ref).norm() / ref.norm())


def sweep(kind: str, size: int = SWEEP_SIZE, rep_ms: float = 40.0, limit: int | None = None) -> list[dict]:
    """Time every config of one kernel at size^3 bf16; each result spot-checked against float64."""
    import torch

    a, b = _pair(size, size, size)
    out = torch.empty(size, size, device="cuda", dtype=torch.bfloat16)
    cfgs = triton_grid() if kind == "triton" else mma_grid(device.info().smem_per_block_optin)
    cfgs = cfgs[:limit] if limit else cfgs
    fl = 2.0 * size ** 3
    rows = []
    for cfg in cli.progress(cfgs, f"{kind} configs"):
        fn = (lambda c=cfg: tc.gemm_triton(a, b, out, config=c)) if kind == "triton" else \
             (lambda c=cfg: tc.gemm_mma(a, b, out, config=c))
        t0 = time.perf_counter()
        try:
            out.fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a config the compiler or the GPU rejects is a result, recorded
            rows.append({"lab": LAB, "sweep": kind, **cfg, "error": f"{type(e).__name__}: {str(e)[:120]}"})
            continue
        err = _spot_check(out, a, b)
        compile_s = time.perf_counter() - t0
        t = bench.bench(fn, rep_ms=rep_ms)
        bm = cfg.get("BLOCK_M", cfg.get("BM"))
        bn = cfg.get("BLOCK_N", cfg.get("BN"))
        rows.append({"lab": LAB, "sweep": kind, **cfg, "BMxBN": f"{bm}x{bn}", "ms": t.median_ms,
                     "tflops": t.tflops(fl), "spread": t.spread, "rel_err": err, "ok": err < 1e-2,
                     "first_call_s": round(compile_s, 2), "tile_flop_per_byte": tile_intensity(bm, bn)})
    del a, b, out
    return rows


def wave_sweep(cfg: dict, sizes=WAVE_SIZES, k: int = WAVE_K, rep_ms: float = 40.0) -> list[dict]:
    """One Triton config over M = N sizes that cross wave boundaries; measured vs predicted efficiency."""
    import torch

    kern_probe = None
    rows = []
    sms = device.info().sms
    for n in cli.progress(sizes, "wave sizes"):
        a, b = _pair(n, n, k)
        out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        tc.gemm_triton(a, b, out, config=cfg)
        if kern_probe is None:
            kern_probe = _blocks_per_sm(cfg)
        t = bench.bench(lambda: tc.gemm_triton(a, b, out, config=cfg), rep_ms=rep_ms)
        w = waves(n, n, cfg["BLOCK_M"], cfg["BLOCK_N"], sms * kern_probe)
        rows.append({"lab": LAB, "sweep": "waves", "M=N": n, "K": k, "tiles": w["tiles"], "waves": w["waves"],
                     "predicted_eff": w["efficiency"], "ms": t.median_ms, "tflops": t.tflops(2.0 * n * n * k),
                     "blocks_per_sm": kern_probe, "slots": sms * kern_probe, "BLOCK_M": cfg["BLOCK_M"],
                     "BLOCK_N": cfg["BLOCK_N"], "rel_err": _spot_check(out, a, b)})
        del a, b, out
    best = max(r["tflops"] for r in rows)
    for r in rows:
        r["measured_eff"] = r["tflops"] / best
    return rows


def _compiled_constants(ck) -> dict:
    """{constexpr name: value} of a Triton CompiledKernel (its ASTSource keys them by argument index tuples, or by
    name in some versions); {} when this Triton keeps them elsewhere."""
    src = getattr(ck, "src", None)
    consts = getattr(src, "constants", None) or {}
    names = list(getattr(getattr(src, "fn", None), "arg_names", []) or [])
    out = {}
    for key, v in consts.items():
        if isinstance(key, str):
            out[key] = v
        elif isinstance(key, tuple) and len(key) == 1 and isinstance(key[0], int) and key[0] < len(names):
            out[names[key[0]]] = v
    return out


def _find_compiled(kern, cfg: dict):
    """The compiled kernel of this config in Triton's JIT cache (Triton 3.x: device_caches[device][0] is the
    {key: CompiledKernel} dict). Every config of a sweep lands in the same cache with the same num_warps /
    num_stages, so the tile sizes (constexprs) must match too; the last match is the most recent compile."""
    caches = getattr(kern, "device_caches", None) or getattr(kern, "cache", None) or {}
    found = None
    for per_device in list(caches.values()):
        entries = per_device[0] if isinstance(per_device, tuple) else per_device
        if not isinstance(entries, dict):
            continue
        for ck in list(entries.values()):
            md = getattr(ck, "metadata", None)
            if getattr(md, "num_warps", None) != cfg["num_warps"] or \
                    getattr(md, "num_stages", cfg["num_stages"]) != cfg["num_stages"]:
                continue
            consts = _compiled_constants(ck)
            if all(consts.get(k) == cfg[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K")):
                found = ck
    return found


def _blocks_per_sm(cfg: dict) -> int:
    """Blocks of this Triton config that fit on one SM, from the compiled kernel's registers and shared memory."""
    from common import occupancy

    try:
        compiled = _find_compiled(tc.tc_dot_kernel, cfg)
        if compiled is None:
            raise LookupError("compiled kernel of this config not found in Triton's cache")
        if getattr(compiled, "n_regs", None) is None:      # registers are known once the binary is loaded
            compiled._init_handles()
        occ = occupancy.occupancy(device.info().arch, cfg["num_warps"] * 32, int(compiled.n_regs), 0,
                                  int(compiled.metadata.shared), max_dynamic_smem=device.info().smem_per_block_optin)
        return max(1, occ.blocks_per_sm)
    except Exception as e:  # noqa: BLE001 - fall back to the shared-memory estimate, and say so
        est = max(1, (228 * 1024) // max(1, triton_smem(cfg) + 1024))
        print(f"  (blocks per SM from the shared-memory estimate, {est}: {type(e).__name__}: {e})")
        return est


# ---------------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------------
def heatmap(rows: list[dict], kind: str, path: str, peer_tflops: float | None = None) -> str:
    """TFLOP/s over (BM, BN), each cell the best over warps/stages, annotated with which won."""
    plt = report.pyplot()
    good = [r for r in rows if r.get("sweep") == kind and r.get("tflops") and r.get("ok", True)]
    bmk, bnk = ("BLOCK_M", "BLOCK_N") if kind == "triton" else ("BM", "BN")
    grid = np.full((len(TILE_SIDES), len(TILE_SIDES)), np.nan)
    notes = {}
    for r in good:
        i, j = TILE_SIDES.index(r[bmk]), TILE_SIDES.index(r[bnk])
        if np.isnan(grid[i, j]) or r["tflops"] > grid[i, j]:
            grid[i, j] = r["tflops"]
            notes[(i, j)] = (f"{r['num_warps']}w {r['num_stages']}st" if kind == "triton" else
                             f"{r['BK']}k {r['STAGES']}st")
    fig, ax = plt.subplots(figsize=(6, 5))
    im = ax.imshow(grid, cmap="viridis", origin="lower")
    for (i, j), note in notes.items():
        ax.text(j, i, f"{grid[i, j]:.0f}\n{note}", ha="center", va="center", fontsize=8,
                color="white" if grid[i, j] < np.nanmax(grid) * 0.7 else "black")
    for i in range(len(TILE_SIDES)):
        for j in range(len(TILE_SIDES)):
            if np.isnan(grid[i, j]):
                ax.text(j, i, "does not fit", ha="center", va="center", fontsize=7, color="gray")
    ax.set_xticks(range(len(TILE_SIDES)), [str(s) for s in TILE_SIDES])
    ax.set_yticks(range(len(TILE_SIDES)), [str(s) for s in TILE_SIDES])
    ax.set_xlabel("BN (tile columns)")
    ax.set_ylabel("BM (tile rows)")
    name = "Triton tl.dot" if kind == "triton" else "CUDA C mma.sync"
    extra = f"; cuBLAS {peer_tflops:.0f}" if peer_tflops else ""
    ax.set_title(f"{name}, bf16 {SWEEP_SIZE}^3: TFLOP/s{extra}", fontsize=10)
    fig.colorbar(im, ax=ax, label="TFLOP/s")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def wave_plot(rows: list[dict], path: str) -> str:
    plt = report.pyplot()
    w = [r for r in rows if r.get("sweep") == "waves"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    xs = [r["M=N"] for r in w]
    ax.plot(xs, [r["measured_eff"] for r in w], "o-", label="measured TFLOP/s / best")
    ax.plot(xs, [r["predicted_eff"] for r in w], "s--", label="predicted: tiles / (waves x slots)")
    for r in w:
        ax.annotate(f"{r['waves']:.2f}", xy=(r["M=N"], r["predicted_eff"]), xytext=(0, 6), textcoords="offset points",
                    ha="center", fontsize=7)
    ax.set_xlabel(f"M = N (K = {WAVE_K})")
    ax.set_ylabel("efficiency")
    ax.set_ylim(0.5, 1.05)
    ax.set_title("Wave quantization (numbers: waves of tiles per SM slot)", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def compile_table(arch: str, configs) -> list[dict]:
    """Without a GPU: what each mma.sync tile shape costs in registers and shared memory, and how many blocks fit on
    an SM (the occupancy calculator of lab 1.5 on the compiled kernel's resources)."""
    from common import occupancy

    rows = []
    for cfg in configs:
        r = tc.compile_rows(arch, [cfg])[-1]            # the mma.sync row (rung 02) for this config
        occ = occupancy.occupancy(arch, tc.config_threads(cfg), int(r["regs"]), 0, tc.config_smem(cfg),
                                  max_dynamic_smem=device.arch_info(arch).smem_per_block_optin)
        w = waves(SWEEP_SIZE, SWEEP_SIZE, cfg["BM"], cfg["BN"], device.arch_info(arch).example_sms * max(1, occ.blocks_per_sm))
        rows.append({"tile": f"{cfg['BM']}x{cfg['BN']}x{cfg['BK']}", "warp tile": f"{cfg['WM']}x{cfg['WN']}",
                     "stages": cfg["STAGES"], "warps": tc.config_threads(cfg) // 32, "regs": r["regs"],
                     "smem KiB": tc.config_smem(cfg) / 1024, "spills": r["spills"], "HMMA": r["HMMA"],
                     "blocks/SM": occ.blocks_per_sm, "limited by": "/".join(occ.limiters),
                     "waves at 4096": round(w["waves"], 2)})
    report.print_table(rows, title=f"mma.sync tile shapes compiled for {arch} (NVRTC; occupancy from the calculator)")
    return rows


def print_models() -> None:
    rows = [{"tile": f"{bm}x{bn}", "FLOP/B loaded": tile_intensity(bm, bn),
             "tiles at 4096^2": waves(4096, 4096, bm, bn, 132)["tiles"],
             "waves (1 block/SM)": waves(4096, 4096, bm, bn, 132)["waves"],
             "eff at 4096": waves(4096, 4096, bm, bn, 132)["efficiency"],
             "eff at 4224": waves(4224, 4224, bm, bn, 132)["efficiency"]}
            for bm, bn in ((64, 64), (128, 128), (128, 256), (256, 128), (256, 256))]
    report.print_table(rows, title="the models, before any timing (132 SMs, one block per SM)")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], dtype=DTYPES)
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    print_models()
    dts = (args.dtype,) if args.dtype else DTYPES
    mod = sys.modules[__name__]
    if device.has_gpu():
        cases = [c for c in CHECK_CASES if c[1] in dts]
        _, ok = lab.check_variants(mod, VARIANTS + PEERS, cases[:3] if args.quick else cases)
    else:
        cases = [c for c in CPU_CHECK_CASES if c[1] in dts][: 2 if args.quick else None]
        _, ok = lab.check_variants(mod, VARIANTS, cases)
        grid = mma_grid(device.arch_info(args.arch).smem_per_block_optin)
        compile_table(args.arch, grid[:3] if args.quick else grid)
        print("sweeps need a GPU: each cell is a compiled kernel timed at 4096^3; the models above are what to expect")
    if not args.bench:
        return 0 if ok else 1
    import torch

    a, b = _pair(SWEEP_SIZE, SWEEP_SIZE, SWEEP_SIZE)
    t_peer = bench.bench(lambda: torch.matmul(a, b), rep_ms=60)
    peer = t_peer.tflops(2.0 * SWEEP_SIZE ** 3)
    del a, b
    print(f"cuBLAS (torch.matmul) bf16 {SWEEP_SIZE}^3: {peer:.0f} TFLOP/s")
    rows = [{"lab": LAB, "sweep": "peer", "variant": "torch.matmul (cuBLAS)", "ms": t_peer.median_ms, "tflops": peer}]
    rows += sweep("triton", limit=6 if args.quick else None)
    rows += sweep("mma", limit=3 if args.quick else None)
    best_t = max((r for r in rows if r.get("sweep") == "triton" and r.get("ok")), key=lambda r: r["tflops"], default=None)
    if best_t:
        cfg = {k: best_t[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")}
        rows += wave_sweep(cfg, WAVE_SIZES[:3] if args.quick else WAVE_SIZES)
    for kind in ("triton", "mma"):
        sr = sorted((r for r in rows if r.get("sweep") == kind and r.get("tflops")), key=lambda r: -r["tflops"])
        for r in sr:
            r["vs_cublas"] = r["tflops"] / peer
        cols = (["BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"] if kind == "triton" else
                ["BM", "BN", "BK", "WM", "WN", "STAGES"]) + ["tflops", "vs_cublas", "rel_err", "first_call_s"]
        report.print_table(sr, cols, title=f"{kind} sweep at {SWEEP_SIZE}^3 bf16, fastest first")
        bad = [r for r in rows if r.get("sweep") == kind and (r.get("error") or r.get("ok") is False)]
        if bad:
            print(f"  {len(bad)} {kind} configs failed or were wrong: " +
                  "; ".join(str(r.get("error") or r.get("rel_err")) for r in bad[:3]))
            ok = ok and all(r.get("error") for r in bad)   # a wrong answer fails the lab; a rejected config does not
    report.print_table([r for r in rows if r.get("sweep") == "waves"],
                       ["M=N", "tiles", "waves", "blocks_per_sm", "predicted_eff", "measured_eff", "tflops"],
                       title="wave quantization")
    out_dir = args.out or report.results_dir()
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, cublas_tflops=peer))
    if args.plot:
        for kind in ("triton", "mma"):
            print("wrote", heatmap(rows, kind, os.path.join(out_dir, f"{LAB}_{kind}.png"), peer))
        if any(r.get("sweep") == "waves" for r in rows):
            print("wrote", wave_plot(rows, os.path.join(out_dir, f"{LAB}_waves.png")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
