"""Lab 2.4's measuring side: the resident blocks of each block size (common.occupancy's calculator, its limits printed)
and the Little's-law predictions (every machine), the heat map of block size x grid size, the latency it implies, the
tail of a partial last wave, and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os
import statistics

import numpy as np

from common import bench, cli, cuda, device, lab, plan, report
from common.i18n import korean, tr
from common.occupancy import occupancy

from . import lab as L

CPU_NOTE = ("\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter. The tables "
            "above are predictions: the GPU run measures the heat map and the tail.")
EXPLAINED_BLOCKS = (32, 256)          # the block sizes whose occupancy arithmetic is printed line by line


def add_arguments(p) -> None:
    cli.add_size(p, tr("n of the heat map (default 2^27, quick 2^24)"))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the compile report, one wave of each block size, the predictions
# ---------------------------------------------------------------------------------------------------------------------
def wave_table(gpu: device.DeviceInfo, regs: int) -> list[dict]:
    """One wave of scale_grid_stride_float4 for each block size on `gpu` (common.occupancy, with `regs` registers per
    thread), with the bandwidth Little's law predicts for it at the assumed latency, capped at 90% of the GPU's HBM
    rate (its datasheet figure, else the one its memory clock gives)."""
    rows = []
    for b in L.BLOCK_SIZES:
        occ = occupancy(gpu.arch, b, regs)
        threads = occ.blocks_per_sm * b * gpu.sms
        rows.append({"threads/block": b, "blocks/SM": occ.blocks_per_sm,
                     "limited by": "+".join(occ.limiters) or occ.why_zero, "occupancy": occ.occupancy,
                     f"wave ({gpu.sms} SMs)": occ.blocks_per_sm * gpu.sms, "resident threads": threads,
                     f"pred GB/s (L={L.ASSUMED_LATENCY_US} us)": L.little_gbps(threads, L.ASSUMED_LATENCY_US,
                                                                                cap_gbps(gpu))})
    return rows


def cap_gbps(gpu: device.DeviceInfo) -> float:
    """What the predictions cap the bandwidth at before anything is measured: 90% of the GPU's HBM rate."""
    return 0.9 * gpu.hbm_gbps


def saturating_threads(gpu: device.DeviceInfo, latency_us: float = L.ASSUMED_LATENCY_US) -> int:
    """Resident threads whose 16-byte loads in flight reach the cap (Little's law, loads only: half of the bytes)."""
    return math.ceil(cap_gbps(gpu) / 2 * 1e9 * latency_us * 1e-6 / L.BYTES_IN_FLIGHT_PER_THREAD)


def report_gpu(arch: str) -> device.DeviceInfo:
    """The GPU whose tables the compile report prints: the one every prediction uses here, unless --arch names
    another architecture (then that architecture's example profile)."""
    gpu = device.current(arch)
    if device.arch_info(gpu.arch).arch != device.arch_info(arch).arch:
        gpu = device.profile_info(device.arch_info(arch).example)
    return gpu


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's predictions for `gpu`: the floor, the wave of each block size and the bandwidth Little's law gives
    it, the resident threads that saturate HBM, the one-float4-per-thread grid in waves, and the tail."""
    n, _ = plan.fit(L.MAIN_N, L.bench_bytes, gpu)
    regs, _ = cuda.resources(L.CU, "scale_grid_stride_float4", gpu)
    floor = 8 * n / (gpu.hbm_gbps * 1e6)
    out = {tr("floor at n = {n} (8 n B / {bw:.0f} GB/s)", n=plan.fmt_size(n), bw=gpu.hbm_gbps): f"{floor:.3f} ms",
           tr("resident threads that saturate {gbps:.0f} GB/s at {us} us", gbps=cap_gbps(gpu),
              us=L.ASSUMED_LATENCY_US):
               tr("{n:,} of {total:,}", n=saturating_threads(gpu), total=gpu.sms * gpu.max_threads_per_sm)}
    rows = {r["threads/block"]: r for r in wave_table(gpu, regs)}
    for b, r in rows.items():
        out[tr("{b}-thread blocks: one wave", b=b)] = \
            tr("{blocks:,} blocks ({per_sm}/SM, {limit}), {threads:,} threads, {gbps:.0f} GB/s",
               blocks=r[f"wave ({gpu.sms} SMs)"], per_sm=r["blocks/SM"], limit=_limits(r["limited by"]),
               threads=r["resident threads"], gbps=r[f"pred GB/s (L={L.ASSUMED_LATENCY_US} us)"])
    wb = rows[256][f"wave ({gpu.sms} SMs)"]
    out[tr("one float4 per thread, 256-thread blocks")] = tr("{n:.0f} waves", n=L.per_element_grid(n, 256) / wb)
    for w in (1.1, 1.25):
        out[tr("tail: {w:g} waves (in wave-times; fluid {w:g}, quantized {q})", w=w, q=math.ceil(w))] = \
            f"{L.tail_model(w, wb, 256, L.ASSUMED_LATENCY_US, cap_gbps(gpu)):.3f}"
    return out


def compile_report(args) -> None:
    rep = cuda.print_compile_report(L.CU, args.arch, excerpt_of="scale_grid_stride_float4")
    regs = rep["scale_grid_stride_float4"].registers
    gpu = report_gpu(args.arch)
    for b in EXPLAINED_BLOCKS:
        print(occupancy(args.arch, b, regs).explain())
    rows = wave_table(gpu, regs)
    report.print_table(_said_waves(rows, gpu),
                       title=tr("{gpu}: one wave of scale_grid_stride_float4 ({regs} registers), predicted with "
                                "Little's law, capped at 90% of {gbps:.0f} GB/s", gpu=gpu.label(), regs=regs,
                                gbps=gpu.hbm_gbps))
    wb = next(r for r in rows if r["threads/block"] == 256)[f"wave ({gpu.sms} SMs)"]
    print(tr("-> Little's law: {n:,} resident threads x 16 B in flight reach the cap at {us} us; this GPU holds "
             "{total:,}.", n=saturating_threads(gpu), us=L.ASSUMED_LATENCY_US,
             total=gpu.sms * gpu.max_threads_per_sm))
    tail = [{"waves": w, "quantized": math.ceil(w - 1e-9), "fluid": w,
             "Little's law": L.tail_model(w, wb, 256, L.ASSUMED_LATENCY_US, cap_gbps(gpu))}
            for w in (1, 1.1, 1.25, 1.5, 2, 2.1)]
    report.print_table(tail, title="tail effect, predicted time in units of one full wave (256-thread blocks)")


def _limits(limited_by: str) -> str:
    """The limiters of a wave_table row ("registers+warps"), each in the chosen language."""
    return "+".join(tr(x) for x in limited_by.split("+"))


def _said_waves(rows: list[dict], gpu: device.DeviceInfo) -> list[dict]:
    """wave_table's rows as printed: in Korean, the two columns whose names carry a number, and the limiters,
    translated (wave_table's keys stay as they are: predict() reads them)."""
    if not korean():
        return rows
    wave, pred = f"wave ({gpu.sms} SMs)", f"pred GB/s (L={L.ASSUMED_LATENCY_US} us)"
    names = {wave: tr("wave ({sms} SMs)", sms=gpu.sms), pred: tr("pred GB/s (L={us} us)", us=L.ASSUMED_LATENCY_US)}
    return [{names.get(k, k): (_limits(v) if k == "limited by" else v) for k, v in r.items()} for r in rows]


# ---------------------------------------------------------------------------------------------------------------------
# GPU: timing
# ---------------------------------------------------------------------------------------------------------------------
def heat_map(n: int, ceiling_gbps: float) -> list[dict]:
    """GB/s for every block size x grid size (grid-stride grids in waves, and one float4 per thread)."""
    import cupy

    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    rows = []
    configs = [(b, w) for b in L.BLOCK_SIZES for w in list(L.WAVES) + ["per_element"]]
    for b, w in cli.progress(configs, "block x grid"):
        wb = L.wave(b)
        grid = L.per_element_grid(n, b) if w == "per_element" else L.wave_grid(w, b)
        t = bench.bench(lambda: L.scale(x, y, threads=b, blocks=grid), rep_ms=30, warmup_ms=10)
        resident = min(grid, wb) * b
        g = t.gbps(8 * n)
        rows.append(report.row(L.LAB, f"b{b} {'1 float4/thread' if w == 'per_element' else f'{w:g} wave'}", "cuda",
                               (n,), "float32", t, nbytes=8 * n, flops=n, ceiling_gbps=ceiling_gbps, threads=b,
                               grid=grid, waves=grid / wb, resident_threads=resident,
                               pred_gbps=L.little_gbps(resident, L.ASSUMED_LATENCY_US, ceiling_gbps),
                               implied_latency_us=L.implied_latency_us(resident, g)))
    return rows


def fitted_latency(rows: list[dict], ceiling_gbps: float) -> float:
    """Median implied latency over the clearly latency-bound cells (< 60% of the ceiling, grid within one wave)."""
    pts = [r["implied_latency_us"] for r in rows if r["gbps"] < 0.6 * ceiling_gbps and r["waves"] <= 1.0]
    return statistics.median(pts) if pts else L.ASSUMED_LATENCY_US


def tail_effect(ceiling_gbps: float, latency_us: float, threads: int = 256, iters: int = L.TAIL_ITERS,
                waves_list=L.TAIL_WAVES) -> list[dict]:
    """Fixed work per block (iters float4 per thread); the grid grows by fractions of a wave."""
    import cupy

    wb = L.wave(threads)
    per_block = threads * iters * 4                   # floats per block
    grids = [L.wave_grid(w, threads) for w in waves_list]
    nmax = max(grids) * per_block
    x = cupy.random.standard_normal(nmax, dtype=cupy.float32)
    y = cupy.empty_like(x)
    rows = []
    for w, grid in cli.progress(list(zip(waves_list, grids)), "tail"):
        n = grid * per_block
        xs, ys = x[:n], y[:n]
        t = bench.bench(lambda: L.scale(xs, ys, threads=threads, blocks=grid), rep_ms=30, warmup_ms=10)
        rows.append(report.row(L.LAB + "_tail", f"{grid / wb:.3g} waves", "cuda", (n,), "float32", t, nbytes=8 * n,
                               ceiling_gbps=ceiling_gbps, threads=threads, grid=grid, waves=grid / wb,
                               wave_blocks=wb))
    t1 = next(r["ms"] for r in rows if abs(r["waves"] - 1) < 1e-9)
    for r in rows:
        w = r["waves"]
        r["time_in_waves"] = r["ms"] / t1
        r["quantized_model"] = float(math.ceil(w - 1e-9))
        r["fluid_model"] = w
        r["little_model"] = L.tail_model(w, wb, threads, latency_us, ceiling_gbps)
        frac = w - math.floor(w + 1e-9)
        r["tail_cost"] = ((r["time_in_waves"] - w) / (math.ceil(w - 1e-9) - w)) if frac > 1e-9 and w > 1 else None
    return rows


def benchmark(ctx) -> lab.Result:
    import cupy

    ceiling = ctx.ceiling()
    c = ceiling["hbm_gbps"]
    n, note = plan.fit(ctx.args.size or (2**24 if ctx.quick else L.MAIN_N), L.bench_bytes, device.info())
    if note:
        print(tr(note))
    heat = heat_map(n, c)
    cupy.get_default_memory_pool().free_all_blocks()
    lat = fitted_latency(heat, c)
    print(tr("-> latency implied by the latency-bound cells (median): {lat:.2f} us (a priori assumption: {us} us)",
             lat=lat, us=L.ASSUMED_LATENCY_US))
    tail = tail_effect(c, lat, waves_list=(0.5, 1, 1.25, 1.5, 2, 2.1) if ctx.quick else L.TAIL_WAVES)
    best = {}
    for r in heat:
        if r["threads"] not in best or r["gbps"] > best[r["threads"]]["gbps"]:
            best[r["threads"]] = r
    choose = [{"threads/block": b, "best grid": r["variant"], "GB/s": r["gbps"], "of ceiling": r["gbps"] / c}
              for b, r in best.items()]
    return lab.Result(
        rows=heat + tail, meta=dict(ceiling=ceiling, fitted_latency_us=lat, device=device.info().as_dict()),
        tables=[(heat, ["variant", "threads", "grid", "waves", "resident_threads", "ms", "gbps", "frac_ceiling",
                        "pred_gbps", "implied_latency_us"],
                 tr("heat map: y = a*x on {n:,} fp32, measured ceiling {c:.0f} GB/s; pred_gbps assumes {us} us of "
                    "latency", n=n, c=c, us=L.ASSUMED_LATENCY_US)),
                (tail, ["variant", "grid", "ms", "gbps", "time_in_waves", "quantized_model", "fluid_model",
                        "little_model", "tail_cost"],
                 tr("tail effect: {iters} float4 per thread, 256-thread blocks, 1 wave = {blocks} blocks (tail_cost: "
                    "0 = no tail penalty, 1 = a whole wave)", iters=L.TAIL_ITERS, blocks=tail[0]["wave_blocks"])),
                (choose, None, "how to choose: the best grid for each block size")])


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _grid_label(variant: str) -> str:
    """A heat-map row's grid, the column it goes in: 'b' + threads + ' 0.125 wave' -> '0.125', 'b' + threads +
    ' 1 float4/thread' -> '1 float4\\n/thread'."""
    rest = variant.split(" ", 1)[1]
    return "1 float4\n/thread" if rest == "1 float4/thread" else rest.replace(" wave", "")


def plot_heat(rows: list[dict], path: str, ceiling_gbps: float, gpu: str = "GPU") -> str:
    plt = report.pyplot()
    blocks = list(dict.fromkeys(r["threads"] for r in rows))
    cols = [_grid_label(r["variant"]) for r in rows if r["threads"] == blocks[0]]
    grid = np.array([[r["gbps"] for r in rows if r["threads"] == b] for b in blocks])
    fig, ax = plt.subplots(figsize=(9, 4.8))
    im = ax.imshow(grid, cmap="viridis", aspect="auto", vmin=0, vmax=ceiling_gbps)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=8,
                    color="white" if grid[i, j] < 0.6 * ceiling_gbps else "black")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, fontsize=8)
    ax.set_yticks(range(len(blocks)))
    ax.set_yticklabels([str(b) for b in blocks])
    ax.set_xlabel(tr("grid size (waves of resident blocks; grid-stride loop)"))
    ax.set_ylabel(tr("threads per block"))
    ax.set_title(tr("y = a*x, {n:,} fp32: GB/s on {gpu} (ceiling {c:.0f})", n=rows[0]["shape"][0], gpu=gpu,
                    c=ceiling_gbps), fontsize=10)
    fig.colorbar(im, ax=ax, label="GB/s")
    return report.save(fig, path)


def plot_tail(rows: list[dict], path: str, gpu: str = "GPU") -> str:
    xs = [r["waves"] for r in rows]
    return report.plot_lines(path, xs, {tr("measured time / time of 1 wave"): [r["time_in_waves"] for r in rows],
                                        tr("quantized: ceil(waves)"): [r["quantized_model"] for r in rows],
                                        tr("fluid: waves"): [r["fluid_model"] for r in rows],
                                        tr("Little's law (fitted latency)"): [r["little_model"] for r in rows]},
                             xlabel="grid size in waves (256 threads, fixed work per block)",
                             ylabel="time in units of one full wave", logx=False,
                             title=tr("Tail effect on {gpu}", gpu=gpu), xticks=[0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])


def plot(data: dict, out_dir: str) -> list[str]:
    gpu = data.get("gpu", "GPU")
    heat = [r for r in data["rows"] if r["lab"] == L.LAB]
    tail = [r for r in data["rows"] if r["lab"] == L.LAB + "_tail"]
    paths = []
    if heat:
        paths.append(plot_heat(heat, os.path.join(out_dir, f"{L.LAB}.png"), data["ceiling"]["hbm_gbps"], gpu))
    if tail:
        paths.append(plot_tail(tail, os.path.join(out_dir, f"{L.LAB}_tail.png"), gpu))
    return paths
