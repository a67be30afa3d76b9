"""Lab 1.4's measuring side: the read sweep over working sets (three plateaus), the pointer chase (latency of each
level), shared memory and registers, each level against its published figure, what the compiler made of the read
kernel, and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

import numpy as np

from common import bench, cli, cuda, device, gpu_specs, lab, report, target
from common.device import GiB, KiB, MiB
from common.i18n import in_english, tr

from . import lab as L

CPU_NOTE = "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter."


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: what the GPU run would show, and what the compiler made of the read kernel
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    if device.has_gpu():
        return
    d = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(d).items()],
                       title=tr("What the GPU run would show on {gpu} (a profile of the course's table; --gpu "
                                "chooses another)", gpu=d.name))
    print(tr("(an L2 split in two halves ends its plateau earlier: past one half, loads are served partly by the far "
             "one)") + "\n")


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description alone: each level's plateau and where it ends, the
    bytes mem_02 keeps in flight against what Little's law asks, the on-chip ceilings, the latencies in ns."""
    w, _ = L.sweep_top(gpu)
    blocks, per_sm = L.resident_grid(gpu, "mem_02_read_sweep_float4")
    unroll = L.kernel_configs()[0]["UNROLL"]
    clock = gpu.sm_clock_mhz
    l1 = L.l1_bytes(gpu)
    l1_gbps = L.PUBLISHED["l1_bytes_per_clock_per_sm"][0] * gpu.sms * clock / 1e3
    lanes = device.arch_info(gpu.arch).fp32_lanes_per_sm
    bw = gpu.hbm_gbps
    out = {
        tr("L1 plateau (128 B/clock/SM x SMs x clock)"):
            tr("~{gbps:,.0f} GB/s while the working set fits the L1 (at most {kib} KiB per SM)", gbps=l1_gbps,
               kib=l1 // KiB),
        tr("L2 plateau"): tr("above the HBM ceiling, ending within {lo:.0f}-{hi:.0f} MiB (0.5x-1.5x the {l2:.0f} MiB "
                             "L2)", lo=0.5 * gpu.l2_bytes / MiB, hi=1.5 * gpu.l2_bytes / MiB, l2=gpu.l2_bytes / MiB),
        tr("HBM plateau"): tr("near the measured ceiling, below the datasheet's {gbps:,.0f} GB/s", gbps=bw),
        tr("the main case, {mib} MiB read once", mib=w // MiB): tr("{ms:.2f} ms at {gbps:,.0f} GB/s",
                                                                   ms=w / (bw * 1e9) * 1e3, gbps=bw),
        tr("mem_02's grid (the calculator on its registers)"): tr("{blocks} blocks = {sms} SMs x {per_sm}",
                                                                  blocks=blocks, sms=gpu.sms, per_sm=per_sm),
        tr("bytes in flight per SM (threads x UNROLL x 16 B)"):
            tr("{kib} KiB; Little's law asks ~{need:.0f} KiB (bandwidth x ~0.7 us / SMs)",
               kib=per_sm * L.THREADS * unroll * 16 // KiB, need=bw * 0.7e3 / gpu.sms / KiB),
        tr("shared memory (mem_04)"): tr("~{gbps:,.0f} GB/s (128 B/clock/SM)", gbps=l1_gbps),
        tr("registers (mem_05: 12 B of operands per FFMA)"):
            tr("~{gbps:,.0f} GB/s ({lanes} FFMA/clock/SM), at most 0.91 of it",
               gbps=12 * lanes * gpu.sms * clock / 1e3, lanes=lanes),
    }
    for key, level in (("l1_latency_cycles", "L1"), ("l2_latency_cycles", "L2"), ("hbm_latency_cycles", "HBM")):
        lo, hi, _ = L.PUBLISHED[key]
        out[tr("{level} latency (published range)", level=level)] = \
            tr("{lo}-{hi} cycles = {lo_ns:.0f}-{hi_ns:.0f} ns at {mhz:.0f} MHz", lo=lo, hi=hi,
               lo_ns=lo / clock * 1e3, hi_ns=hi / clock * 1e3, mhz=clock)
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (bw * 1e9)
        out[tr("0.25 FLOP/B against the ridge point")] = tr("{ridge:.1f} FLOP/B: {x:.0f}x below", ridge=ridge,
                                                            x=ridge / 0.25)
    return out


def show_compile_report(arch: str) -> None:
    rep = cuda.print_compile_report(L.CU, arch, defines=L.defines(), excerpt_of="mem_02_read_sweep_float4")
    c = rep.census("mem_02_read_sweep_float4")
    if c is not None:
        print(tr("-> mem_02 issues {n} x LDG.E.128 in its loop: {unroll} independent 16-byte loads before the first "
                 "add (Little's law: bytes in flight hide latency).", n=c.get("LDG.128", 0),
                 unroll=L.defines()["UNROLL"]))


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# The sweep, the chase and the on-chip levels (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def sweep_sizes(quick: bool, l2_bytes: int, top: int = L.SWEEP_TOP) -> list[int]:
    """Working sets in bytes: 8 KiB .. `top` (4 GiB, less where the GPU's memory cannot hold it) at two points per
    octave, plus extra points around the L2 size."""
    if quick:
        return [2**k for k in range(14, 29, 2) if 2**k <= top]
    sizes = {int(m * 2**k) for k in range(13, 32) for m in (1, 1.5)} | {L.SWEEP_TOP}
    sizes |= {int(f * l2_bytes) // 4096 * 4096 for f in (0.6, 0.7, 0.8, 0.9, 1.1, 1.25)}
    return sorted(s for s in sizes if s <= top)


def bandwidth_sweep(sizes: list[int], ceiling_gbps: float, with_triton: tuple[int, ...] = ()) -> list[dict]:
    import cupy

    blocks, _ = L.resident_grid(device.info(), "mem_02_read_sweep_float4")
    x_all = cupy.ones(max(sizes) // 4, dtype=cupy.float32)
    out = cupy.empty(blocks, dtype=cupy.float32)
    rows = []
    for w in cli.progress(sizes, "working sets"):
        n = w // 4
        x = x_all[:n]
        per_block = L.per_block_for(w, blocks)           # >= 2 GiB read per call: ~80 us even at L1 speed
        runs = [("cuda 02 float4 x4 in flight", "cuda", L.read_cuda_02)]
        if w in with_triton:
            runs.append(("triton", "triton", L.read_triton))
        for name, impl, fn in runs:
            t = bench.bench(lambda: fn(x, blocks, per_block, out=out), flush_l2=False, warmup_ms=5, rep_ms=20)
            rows.append(report.row(L.LAB, name, impl, (n,), "float32", t, nbytes=4 * blocks * per_block,
                                   flops=blocks * per_block, ceiling_gbps=ceiling_gbps, working_set_bytes=w,
                                   blocks=blocks, per_block=per_block))
    x = x_all = out = None
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def chase_sizes(quick: bool, l2_bytes: int, top: int = 2 * GiB) -> list[int]:
    """Working sets of the pointer chase: a few per level, none above `top`."""
    if quick:
        return [s for s in (16 * KiB, 1 * MiB, 256 * MiB) if s <= top]
    sizes = {16 * KiB, 64 * KiB, 128 * KiB, 1 * MiB, 8 * MiB, int(0.4 * l2_bytes) // MiB * MiB,
             int(0.75 * l2_bytes) // MiB * MiB, 128 * MiB, 512 * MiB, 2 * GiB}
    return sorted(s for s in sizes if 0 < s <= top)


def level_of(nbytes: int, l2_bytes: int, l1_bytes: int) -> str:
    """The level a pointer chase over `nbytes` runs in: L1 up to half the L1 (the rest of it holds other lines)."""
    if nbytes <= l1_bytes // 2:
        return "L1"
    if nbytes <= l2_bytes // 2:
        return "L2 (fits half)"
    if nbytes <= l2_bytes:
        return "L2 (full)"
    if nbytes <= 2 * l2_bytes:
        return "L2 edge"
    return "HBM"


def latency_sweep(sizes: list[int]) -> list[dict]:
    import cupy

    d = device.info()
    rows = []
    for w in cli.progress(sizes, "pointer chase"):
        nxt, order = L.build_chase(w, seed=w % 9973)
        lines = int(order.size)
        steps = 2**15 if w <= 64 * MiB else 2**14
        warm = 2 * lines if lines <= 2**16 else (lines if w <= 2 * d.l2_bytes else 0)
        start = int(order[0]) * (L.CHASE_STRIDE // 4)
        idx, cyc, ns = L.pointer_chase(nxt, start, warm, steps)
        expect = int(order[(warm + steps) % lines]) * (L.CHASE_STRIDE // 4)
        rows.append({"working_set_bytes": w, "level": level_of(w, d.l2_bytes, L.l1_bytes(d)), "steps": steps,
                     "warm": warm,
                     "cycles_per_load": cyc / steps, "ns_per_load": ns / steps,
                     "clock_mhz_seen": cyc / ns * 1e3 if ns else None, "chase_ok": idx == expect})
        del nxt, order
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def l2_window(l2_bytes: int, l1_bytes: int) -> tuple[int, int]:
    """Working sets that sit clearly inside the L2: from 8x the L1 (or an eighth of the L2, if smaller) to a quarter
    of the L2."""
    return min(8 * l1_bytes, l2_bytes // 8), l2_bytes // 4


def level_bandwidths(sweep: list[dict], l2_bytes: int, l1_bytes: int) -> dict:
    """The plateau of each level from the sweep (medians over working sets that sit clearly inside each level)."""
    cu = [r for r in sweep if r["variant"].startswith("cuda")]

    def med(lo, hi):
        v = [r["gbps"] for r in cu if lo <= r["working_set_bytes"] <= hi]
        return float(np.median(v)) if v else None

    return {"L1": med(16 * KiB, 3 * l1_bytes // 8), "L2": med(*l2_window(l2_bytes, l1_bytes)),
            "HBM": med(8 * l2_bytes, 2**40)}


def l2_edge(sweep: list[dict], levels: dict, l2_bytes: int, l1_bytes: int) -> float | None:
    """The smallest working set past the start of the L2 window whose bandwidth falls below the midpoint between the
    L2 and HBM levels."""
    if not levels.get("L2") or not levels.get("HBM"):
        return None
    mid = (levels["L2"] + levels["HBM"]) / 2
    start = l2_window(l2_bytes, l1_bytes)[0]
    for r in sorted((r for r in sweep if r["variant"].startswith("cuda")), key=lambda r: r["working_set_bytes"]):
        if r["working_set_bytes"] > start and r["gbps"] < mid:
            return float(r["working_set_bytes"])
    return None


def on_chip_bandwidths() -> list[dict]:
    """Shared memory (mem_04) and registers (mem_05), each filling the GPU."""
    import cupy

    d = device.info()
    rows = []
    blocks, _ = L.resident_grid(d, "mem_04_shared_read")
    x = cupy.ones(blocks * 4 * L.tile_float4(), dtype=cupy.float32)
    out = cupy.empty(blocks, dtype=cupy.float32)
    reps = 2048
    t = bench.bench(lambda: L.shared_read(x, reps, out=out), flush_l2=False, warmup_ms=5, rep_ms=30)
    rows.append(report.row(L.LAB, "shared memory (mem_04, LDS.128)", "cuda", (blocks,), "float32", t,
                           nbytes=blocks * reps * L.THREADS * 16, level="shared"))
    n = L.fma_elements(d)
    xr = cupy.ones(n, dtype=cupy.float32)
    yr = cupy.empty_like(xr)
    iters = 2048
    t = bench.bench(lambda: L.register_fma(xr, iters, 0.999, 0.001, out=yr), flush_l2=False, warmup_ms=5, rep_ms=30)
    ffma = n * L.defines()["NACC"] * iters
    rows.append(report.row(L.LAB, "registers (mem_05, FFMA operands)", "cuda", (n,), "float32", t,
                           nbytes=12 * ffma, flops=2 * ffma, level="registers"))
    x = out = xr = yr = None
    return rows


def _l1_published_gbps(dev: dict) -> float:
    return L.PUBLISHED["l1_bytes_per_clock_per_sm"][0] * dev["sms"] * dev["sm_clock_mhz"] / 1e3


def level_table(onchip: list[dict], levels: dict, dev: dict) -> list[dict]:
    """Each level's measured bandwidth next to the figure this GPU's description gives for it (none for the L2: no
    table holds a per-GPU L2 bandwidth; the lesson cites published ones)."""
    l1_pub = _l1_published_gbps(dev)
    pub = L.PUBLISHED
    lanes = device.arch_info(dev["arch"]).fp32_lanes_per_sm
    return [
        {"level": tr("registers (FFMA operands)"), "measured GB/s": onchip[1]["gbps"],
         "published GB/s": 12 * lanes * dev["sms"] * dev["sm_clock_mhz"] / 1e3,
         "source": tr("{lanes} FP32 lanes/SM ({arch}): 12 B of operands x {lanes} FFMA/clock/SM", lanes=lanes,
                      arch=dev["arch"])},
        {"level": "shared memory", "measured GB/s": onchip[0]["gbps"], "published GB/s": l1_pub,
         "source": tr(pub["l1_bytes_per_clock_per_sm"][1])},
        {"level": tr("L1 (global loads)"), "measured GB/s": levels["L1"], "published GB/s": l1_pub,
         "source": tr(pub["l1_bytes_per_clock_per_sm"][1])},
        {"level": "L2", "measured GB/s": levels["L2"], "published GB/s": None,
         "source": tr("no per-GPU figure (the lesson cites published L2 bandwidths)")},
        {"level": "HBM", "measured GB/s": levels["HBM"], "published GB/s": (dev.get("datasheet") or {}).get("hbm_gbps"),
         "source": tr("datasheet")},
    ]


def targets(lat: list[dict], edge: float | None, l2_bytes: int) -> list[target.Target]:
    """Latencies in their published ranges, the L2 plateau's end near the L2 size, every chase where it should end
    (predictions: no peer, the measured value against its range)."""
    out = []
    for names, key in ((("L1",), "l1_latency_cycles"), (("L2 (fits half)",), "l2_latency_cycles"),
                       (("HBM",), "hbm_latency_cycles")):
        v = [r["cycles_per_load"] for r in lat if r["level"] in names]
        lo, hi, src = L.PUBLISHED[key]
        if v:
            m = float(np.median(v))
            out.append(target.prediction(tr("{level} latency in the published range",
                                            level="/".join(tr(n) for n in names)), m, at_least=lo, at_most=hi,
                                         goal=tr("{lo}-{hi} cycles", lo=lo, hi=hi), note=tr(src)))
    if edge:
        out.append(target.prediction(tr("L2 plateau ends near the L2 size (0.5x .. 1.5x)"), edge / MiB,
                                     at_least=0.5 * l2_bytes / MiB, at_most=1.5 * l2_bytes / MiB,
                                     goal=f"{0.5 * l2_bytes / MiB:.0f}-{1.5 * l2_bytes / MiB:.0f} MiB",
                                     note=f"cudaDevAttrL2CacheSize = {l2_bytes / MiB:.0f} MiB"))
    out.append(target.prediction(tr("every pointer chase ended where the host's walk ends"),
                                 sum(bool(r["chase_ok"]) for r in lat), at_least=len(lat), at_most=len(lat),
                                 goal=tr("{n} of {total}", n=len(lat), total=len(lat))))
    return out


def benchmark(ctx) -> lab.Result:
    d = device.info()
    dev = d.as_dict()
    ceiling = ctx.ceiling()
    top, note = L.sweep_top(d)
    if note:
        print(tr(note))
    l1 = L.l1_bytes(d)
    sizes = sweep_sizes(ctx.quick, d.l2_bytes, top)
    tri = tuple(s for s in (64 * KiB, 16 * MiB, 1 * GiB) if s in sizes) if not ctx.quick else ()
    sweep = bandwidth_sweep(sizes, ceiling["hbm_gbps"], with_triton=tri)
    levels = level_bandwidths(sweep, d.l2_bytes, l1)
    edge = l2_edge(sweep, levels, d.l2_bytes, l1)
    lat = latency_sweep(chase_sizes(ctx.quick, d.l2_bytes, min(2 * GiB, top)))
    onchip = on_chip_bandwidths()
    tri_rows = []
    for r in (r for r in sweep if r["impl"] == "triton"):
        c = next(q for q in sweep if q["impl"] == "cuda" and q["working_set_bytes"] == r["working_set_bytes"])
        tri_rows.append({"working_set_bytes": r["working_set_bytes"], "GB/s cuda 02": c["gbps"],
                         "GB/s triton": r["gbps"], "triton / cuda": r["gbps"] / c["gbps"]})
    lvl_rows = in_english(level_table, onchip, levels, dev)
    tg = target.records(in_english(targets, lat, edge, d.l2_bytes))
    tables = [([r for r in sweep if r["variant"].startswith("cuda")],
               ["working_set_bytes", "ms", "gbps", "frac_ceiling", "per_block"],
               "Read bandwidth vs working set (cuda 02, float4)")]
    if tri_rows:
        tables.append((tri_rows, None, "The same sweep in Triton, at one working set per level"))
    tables += [([dict(r, level=tr(r["level"])) for r in lat], None, "Pointer-chase latency"),
               ([dict(r, variant=tr(r["variant"])) for r in onchip], ["variant", "ms", "gbps", "tflops"],
                "On-chip levels"),
               (level_table(onchip, levels, dev), None, "Each level against its published figure"),
               (target.said(targets(lat, edge, d.l2_bytes)), None, "Predictions and published ranges vs measurement")]
    return lab.Result(rows=sweep + onchip, tables=tables, ok=all(r["chase_ok"] for r in lat),
                      meta=dict(latency=lat, levels=levels, l2_edge_bytes=edge, level_table=lvl_rows, targets=tg,
                                published=L.PUBLISHED, ceiling=ceiling, device=dev))


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _size_ticks(lo, hi):
    ticks, labels = [], []
    for k in range(int(math.log2(lo)), int(math.log2(hi)) + 1, 2):
        ticks.append(2**k)
        v = 2**k
        labels.append(f"{v // GiB} GiB" if v >= GiB else f"{v // MiB} MiB" if v >= MiB else f"{v // KiB} KiB")
    return ticks, labels


def plot_bandwidth(sweep: list[dict], ceiling: dict, dev: dict, path: str) -> str:
    cu = [r for r in sweep if r["impl"] == "cuda"]          # Triton's three points are in the table, not the curve
    xs = sorted({r["working_set_bytes"] for r in cu})
    series = {}
    for name in dict.fromkeys(r["variant"] for r in cu):
        by = {r["working_set_bytes"]: r["gbps"] for r in cu if r["variant"] == name}
        series[name] = [by.get(x) for x in xs]
    l1_pub = _l1_published_gbps(dev)
    hl = {tr("L1/shared published: 128 B/clk/SM x {sms} x {mhz:.0f} MHz = {gbps:,.0f} GB/s", sms=dev["sms"],
             mhz=dev["sm_clock_mhz"], gbps=l1_pub): l1_pub,
          tr("measured HBM ceiling {gbps:,.0f} GB/s ({method})", gbps=ceiling["hbm_gbps"],
             method=ceiling["hbm_method"]): ceiling["hbm_gbps"]}
    datasheet = (dev.get("datasheet") or {}).get("hbm_gbps")
    if datasheet:
        hl[tr("datasheet HBM {gbps:,} GB/s", gbps=datasheet)] = datasheet
    ticks, labels = _size_ticks(xs[0], xs[-1])
    l2 = dev["l2_bytes"]
    l1_smem = gpu_specs.ARCH_LIMITS[device.arch_info(dev["arch"]).arch]["l1_smem_kib"]
    return report.plot_lines(
        path, xs, series, xlabel="working set (bytes, log scale)", ylabel="GB/s read", logy=True,
        title=tr("{gpu}: read bandwidth vs working set (L2 not flushed, every block re-reads its range)",
                 gpu=dev["name"]),
        hlines=hl, vlines={f"L1+shared {l1_smem} KiB/SM": l1_smem * KiB, f"L2 {l2 / MiB:.0f} MiB": l2,
                           tr("L2 half {mib:.0f} MiB", mib=l2 / 2 / MiB): l2 / 2},
        xticks=ticks, xticklabels=labels)


def plot_latency(lat: list[dict], dev: dict, path: str) -> str:
    xs = [r["working_set_bytes"] for r in lat]
    hl = {}
    for key, label in (("l1_latency_cycles", "L1"), ("l2_latency_cycles", "L2"), ("hbm_latency_cycles", "HBM")):
        lo, hi, _ = L.PUBLISHED[key]
        hl[tr("published {level}: {lo}-{hi} cycles", level=label, lo=lo, hi=hi)] = (lo + hi) / 2
    ticks, labels = _size_ticks(xs[0], xs[-1])
    return report.plot_lines(
        path, xs, {tr("cycles per dependent load"): [r["cycles_per_load"] for r in lat],
                   tr("ns per dependent load"): [r["ns_per_load"] for r in lat]},
        xlabel="working set of the pointer chase (bytes)", ylabel="latency per load", logy=True,
        title=tr("{gpu}: pointer-chase latency (one thread, random 128-byte lines)", gpu=dev["name"]), hlines=hl,
        vlines={f"L2 {dev['l2_bytes'] / MiB:.0f} MiB": dev["l2_bytes"]}, xticks=ticks, xticklabels=labels)


def plot_levels(lvl_rows: list[dict], path: str, gpu: str = "GPU") -> str:
    """Measured and published bandwidth of each level, log scale (the levels span two orders of magnitude)."""
    plt = report.pyplot()
    rows = [r for r in lvl_rows if r["measured GB/s"]]
    fig, ax = plt.subplots(figsize=(9, 0.6 * len(rows) + 1.8))
    ys = np.arange(len(rows))[::-1]
    ax.barh(ys + 0.2, [r["measured GB/s"] for r in rows], height=0.4, color="tab:blue", label=tr("measured"))
    pub = [(y, r["published GB/s"]) for y, r in zip(ys, rows) if r["published GB/s"]]
    ax.barh([y - 0.2 for y, _ in pub], [v for _, v in pub], height=0.4, color="tab:gray", label=tr("published"))
    for y, r in zip(ys, rows):
        ax.annotate(f"{r['measured GB/s']:,.0f}", xy=(r["measured GB/s"], y + 0.2), xytext=(3, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.set_xscale("log")
    ax.set_yticks(ys)
    ax.set_yticklabels([tr(r["level"]) for r in rows], fontsize=9)
    ax.set_xlabel(tr("GB/s (log scale)"))
    ax.set_title(tr("{gpu}: bandwidth of each level of the hierarchy", gpu=gpu), fontsize=11)
    ax.grid(True, axis="x", which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return report.save(fig, path)


def plot(data: dict, out_dir: str) -> list[str]:
    dev = dict(data["device"], name=data.get("gpu") or data["device"]["name"])
    sweep = [r for r in data["rows"] if r.get("working_set_bytes")]
    stem = os.path.join(out_dir, L.LAB)
    return [plot_bandwidth(sweep, data["ceiling"], dev, f"{stem}_bandwidth.png"),
            plot_latency(data["latency"], dev, f"{stem}_latency.png"),
            plot_levels(data["level_table"], f"{stem}_levels.png", dev["name"])]
