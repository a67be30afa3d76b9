"""Lab 4.4's measuring side: the reuse and wave models before any timing, what the mma.sync tile shapes compile to
(registers, shared memory, blocks per SM from the occupancy calculator), and on a GPU the two tiling sweeps at 4096^3
(every cell a compiled kernel, spot-checked against float64) and the wave sweep; the heat-maps and the wave plot are
drawn from the JSON, so --replot redraws them without a GPU."""
from __future__ import annotations

import os
import time

import numpy as np

from common import bench, cli, cuda, device, lab, occupancy, plan, report, table
from common.i18n import tr

from .lab import (LAB, MMA_LARGE, MMA_SMALL, SWEEP_SIZE, TILE_SIDES, WAVE_K, WAVE_SIZES, bench_bytes, mma_grid, tc,
                  tile_intensity, triton_grid, triton_smem, waves)

CPU_NOTE = ("\nSweeps need a GPU: each cell is a compiled kernel timed at 4096^3; the models and the compile table "
            "above are what to expect.")


def add_arguments(p) -> None:
    cli.add_dtype(p, ("bfloat16", "float16"))


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
    cfgs = triton_grid(gpu=device.info()) if kind == "triton" else mma_grid(gpu=device.info())
    cfgs = cfgs[:limit] if limit else cfgs
    fl = 2.0 * size ** 3
    rows = []
    for cfg in cli.progress(cfgs, tr("{kind} configs", kind=kind)):
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
    a = b = out = None
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
        a = b = out = None
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
        gpu = device.info()
        est = max(1, gpu.smem_per_sm // max(1, triton_smem(cfg) + gpu.smem_reserved_per_block))
        print(tr("  (blocks per SM from the shared-memory estimate, {est}: {error})", est=est,
                 error=f"{type(e).__name__}: {e}"))
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
                ax.text(j, i, tr("does not fit"), ha="center", va="center", fontsize=7, color="gray")
    ax.set_xticks(range(len(TILE_SIDES)), [str(s) for s in TILE_SIDES])
    ax.set_yticks(range(len(TILE_SIDES)), [str(s) for s in TILE_SIDES])
    ax.set_xlabel(tr("BN (tile columns)"))
    ax.set_ylabel(tr("BM (tile rows)"))
    name = "Triton tl.dot" if kind == "triton" else "CUDA C mma.sync"
    extra = f"; cuBLAS {peer_tflops:.0f}" if peer_tflops else ""
    ax.set_title(f"{name}, bf16 {SWEEP_SIZE}^3: TFLOP/s{extra}", fontsize=10)
    fig.colorbar(im, ax=ax, label="TFLOP/s")
    return report.save(fig, path, dpi=110)


def wave_plot(rows: list[dict], path: str) -> str:
    plt = report.pyplot()
    w = [r for r in rows if r.get("sweep") == "waves"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    xs = [r["M=N"] for r in w]
    ax.plot(xs, [r["measured_eff"] for r in w], "o-", label=tr("measured TFLOP/s / best"))
    ax.plot(xs, [r["predicted_eff"] for r in w], "s--", label=tr("predicted: tiles / (waves x slots)"))
    for r in w:
        ax.annotate(f"{r['waves']:.2f}", xy=(r["M=N"], r["predicted_eff"]), xytext=(0, 6), textcoords="offset points",
                    ha="center", fontsize=7)
    ax.set_xlabel(f"M = N (K = {WAVE_K})")
    ax.set_ylabel(tr("efficiency"))
    ax.set_ylim(0.5, 1.05)
    ax.set_title(tr("Wave quantization (numbers: waves of tiles per SM slot)"), fontsize=10)
    ax.legend()
    return report.save(fig, path, dpi=110)


def compile_table(arch: str, configs, gpu: device.DeviceInfo | None = None) -> list[dict]:
    """Without a GPU: what each mma.sync tile shape costs in registers and shared memory, and how many blocks fit on
    an SM (common.occupancy on the compiled kernel's resources) and how many waves that makes on `gpu` (default: the
    GPU every prediction uses for `arch`)."""
    gpu = gpu or device.current(arch)
    rows = []
    for cfg in cli.progress(configs, tr("compiling {n} mma.sync tile shapes for {arch}", n=len(configs), arch=arch)):
        r = tc.compile_rows(arch, [cfg])[-1]            # the mma.sync row (rung 02) for this config
        occ = occupancy.occupancy(arch, tc.config_threads(cfg), int(r["regs"]), 0, tc.config_smem(cfg),
                                  max_dynamic_smem=gpu.smem_per_block_optin)
        slots = gpu.sms * max(1, occ.blocks_per_sm)
        w = waves(SWEEP_SIZE, SWEEP_SIZE, cfg["BM"], cfg["BN"], slots)
        rows.append({"tile": f"{cfg['BM']}x{cfg['BN']}x{cfg['BK']}", "warp tile": f"{cfg['WM']}x{cfg['WN']}",
                     "stages": cfg["STAGES"], "warps": tc.config_threads(cfg) // 32, "regs": r["regs"],
                     "smem KiB": tc.config_smem(cfg) / 1024, "spills": r["spills"], "HMMA": r["HMMA"],
                     "blocks/SM": occ.blocks_per_sm, "limited by": "/".join(occ.limiters),
                     "waves at 4096": round(w["waves"], 2)})
    users = [plan.build_users(__package__, arch, "tc_02_mma_sync", tc.defines("bfloat16", "bfloat16", cfg))
             for cfg in configs]
    table.print_kernel_table(rows, title=tr("mma.sync tile shapes compiled for {arch} (NVRTC; occupancy from the "
                                            "calculator; waves on {gpu}'s {sms} SMs)", arch=arch, gpu=gpu.name,
                                            sms=gpu.sms),
                             used_by=users, study=tr("study point of the sweep: no variant launches this tile shape"))
    return rows


MODEL_TILES = ((64, 64), (128, 128), (128, 256), (256, 128), (256, 256))


def print_models(gpu: device.DeviceInfo | None = None) -> None:
    """Reuse per tile and the wave model at 4096 and 4224 on `gpu`'s SMs (default: device.current())."""
    gpu = gpu or device.current()
    sms = gpu.sms
    rows = [{"tile": f"{bm}x{bn}", "FLOP/B loaded": tile_intensity(bm, bn),
             "tiles at 4096^2": waves(4096, 4096, bm, bn, sms)["tiles"],
             "waves (1 block/SM)": waves(4096, 4096, bm, bn, sms)["waves"],
             "eff at 4096": waves(4096, 4096, bm, bn, sms)["efficiency"],
             "eff at 4224": waves(4224, 4224, bm, bn, sms)["efficiency"]} for bm, bn in MODEL_TILES]
    report.print_table(rows, title=tr("the models, before any timing ({gpu}: {sms} SMs, one block per SM)",
                                      gpu=gpu.label(), sms=sms))


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description: the reuse a tile buys against this GPU's bf16 ridge
    point, the wave model at 4096 and 4224 for 128 x 256 tiles on its SMs, the mma.sync variants' blocks per SM and
    waves (their registers compiled for its architecture), and how many cells of each sweep fit its shared memory."""
    sms = gpu.sms
    out = {}
    bf16 = gpu.peak("bf16_tflops")
    if bf16:
        ridge = bf16 * 1e12 / (gpu.hbm_gbps * 1e9)
        out[tr("bf16 ridge point (datasheet FLOP/s over bandwidth)")] = tr(
            "{ridge:.0f} FLOP/B; a tile gets 32 (64x64) to 128 (256x256) per byte it loads, so L2 reuse decides",
            ridge=ridge)
    for n in (4096, 4224):
        w = waves(n, n, 128, 256, sms)
        out[tr("128x256 tiles at M = N = {n}, one block per SM", n=n)] = tr(
            "{tiles} tiles = {waves:.2f} waves of {sms}: predicted efficiency {eff:.0%}", tiles=w['tiles'],
            waves=w['waves'], sms=sms, eff=w['efficiency'])
    if lab.arch_matches(gpu.arch, tc.TC_ARCHS):
        for cfg in (MMA_SMALL, MMA_LARGE):
            regs, _ = cuda.resources(tc.CU, "tc_02_mma_sync", gpu, tc._defines("bfloat16", "bfloat16", cfg))
            occ = occupancy.occupancy(gpu.arch, tc.config_threads(cfg), regs, 0, tc.config_smem(cfg),
                                      max_dynamic_smem=gpu.smem_per_block_optin)
            w = waves(SWEEP_SIZE, SWEEP_SIZE, cfg["BM"], cfg["BN"], sms * max(1, occ.blocks_per_sm))
            out[tr("mma.sync {bm}x{bn}x{bk}, {stages} stages", bm=cfg['BM'], bn=cfg['BN'], bk=cfg['BK'],
                   stages=cfg['STAGES'])] = tr(
                "{regs} registers, {blocks} block(s) per SM ({limiters}): {waves:.2f} waves at {n}^3, efficiency "
                "{eff:.0%}", regs=regs, blocks=occ.blocks_per_sm, limiters='/'.join(occ.limiters), waves=w['waves'],
                n=SWEEP_SIZE, eff=w['efficiency'])
        out[tr("sweep cells that fit this GPU")] = tr(
            "Triton {triton}, mma.sync {mma} (of {triton_all} and {mma_all})", triton=len(triton_grid(gpu=gpu)),
            mma=len(mma_grid(gpu=gpu)), triton_all=len(TILE_SIDES) ** 2 * 4, mma_all=len(TILE_SIDES) ** 2 * 2)
    else:
        out[tr("sweeps")] = tr("none on {arch}: both GEMMs need bf16 tensor cores (sm_80 or later)", arch=gpu.arch)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# The lab's run
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    print_models(device.current(args.arch))


def compile_report(args) -> None:
    """Without a GPU (or with --no-bench), what each mma.sync tile shape compiles to; a GPU that benchmarks compiles
    and times every cell in the sweep instead."""
    if device.has_gpu() and args.bench:
        return
    gpu = device.current(args.arch)
    arch = device.arch_info(args.arch).arch
    if not lab.arch_matches(arch, tc.TC_ARCHS):
        print(tr("mma.sync tile shapes: not compiled for {arch}: lab 4.3's kernels need bf16 mma.sync, ldmatrix and "
                 "cp.async (sm_80 or later)", arch=arch))
        return
    grid = mma_grid(gpu=gpu)
    variants = (MMA_SMALL, MMA_LARGE)            # --quick: the sweep's first shapes and the variants' own
    compile_table(arch, [c for i, c in enumerate(grid) if i < 3 or c in variants] if args.quick else grid, gpu)


def benchmark(ctx) -> lab.Result:
    """cuBLAS at 4096^3, the Triton and mma.sync tiling sweeps, then the wave sweep of the best Triton config."""
    import torch

    quick = ctx.quick
    size, note = plan.fit(SWEEP_SIZE, bench_bytes, device.info())
    if note:
        print(tr(note))
    a, b = _pair(size, size, size)
    t_peer = bench.bench(lambda: torch.matmul(a, b), rep_ms=60)
    peer = t_peer.tflops(2.0 * size ** 3)
    a = b = None
    print(f"cuBLAS (torch.matmul) bf16 {size}^3: {peer:.0f} TFLOP/s")
    rows = [{"lab": LAB, "sweep": "peer", "variant": "torch.matmul (cuBLAS)", "ms": t_peer.median_ms, "tflops": peer}]
    if lab.arch_matches(device.info().arch, tc.TC_ARCHS):         # both GEMMs need bf16 tensor cores
        rows += sweep("triton", size, limit=6 if quick else None)
        rows += sweep("mma", size, limit=3 if quick else None)
    best_t = max((r for r in rows if r.get("sweep") == "triton" and r.get("ok")), key=lambda r: r["tflops"],
                 default=None)
    if best_t:
        cfg = {k: best_t[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")}
        rows += wave_sweep(cfg, WAVE_SIZES[:3] if quick else WAVE_SIZES)
    ok, tables = True, []
    for kind in ("triton", "mma"):
        sr = sorted((r for r in rows if r.get("sweep") == kind and r.get("tflops")), key=lambda r: -r["tflops"])
        for r in sr:
            r["vs_cublas"] = r["tflops"] / peer
        cols = (["BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"] if kind == "triton" else
                ["BM", "BN", "BK", "WM", "WN", "STAGES"]) + ["tflops", "vs_cublas", "rel_err", "first_call_s"]
        tables.append((sr, cols, tr("{kind} sweep at {n}^3 bf16, fastest first", kind=kind, n=size)))
        bad = [r for r in rows if r.get("sweep") == kind and (r.get("error") or r.get("ok") is False)]
        if bad:
            print(tr("  {n} {kind} configs failed or were wrong: {first}", n=len(bad), kind=kind,
                     first="; ".join(str(r.get("error") or r.get("rel_err")) for r in bad[:3])))
            ok = ok and all(r.get("error") for r in bad)   # a wrong answer fails the lab; a rejected config does not
    tables.append(([r for r in rows if r.get("sweep") == "waves"],
                   ["M=N", "tiles", "waves", "blocks_per_sm", "predicted_eff", "measured_eff", "tflops"],
                   tr("wave quantization")))
    return lab.Result(rows=rows, meta=dict(cublas_tflops=peer), tables=tables, ok=ok)


def plot(data: dict, out_dir: str) -> list[str]:
    """The two heat-maps and, when the wave sweep ran, the wave plot, from the JSON's rows and cuBLAS's figure."""
    rows, peer = data["rows"], data.get("cublas_tflops")
    paths = [heatmap(rows, kind, os.path.join(out_dir, f"{LAB}_{kind}.png"), peer) for kind in ("triton", "mma")]
    if any(r.get("sweep") == "waves" for r in rows):
        paths.append(wave_plot(rows, os.path.join(out_dir, f"{LAB}_waves.png")))
    return paths
