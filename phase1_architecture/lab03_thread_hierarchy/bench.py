"""Lab 1.3's measuring side: the warp rule checked on the hardware's own %laneid (GPU) or computed (CPU), what the
compiler made of the divergent branch, the block -> SM timeline, the divergence benchmark against its prediction, and
the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

import numpy as np

from common import bench, check, cli, cuda, device, lab, plan, report, target
from common.i18n import tr, yes_no

from . import lab as L

CPU_NOTE = "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter."


def add_arguments(p) -> None:
    cli.add_size(p, tr("elements of the divergence benchmark (default {n}, quick 2^20)", n=L.BENCH_N))
    p.add_argument("--rounds", type=int, default=L.BENCH_ROUNDS, help=tr("hash rounds per element in the benchmark"))


# ---------------------------------------------------------------------------------------------------------------------
# The warp rule (every machine) and what the compiler made of the branch
# ---------------------------------------------------------------------------------------------------------------------
def extra_checks(args) -> bool:
    """On a GPU: hier_01_whoami's %laneid against (tx + ty * bx) % 32 for every thread. Without one: what it would
    record, computed."""
    if not device.has_gpu():
        report.print_table(L.mapping_table(L.predicted_records()),
                           title=tr("What hier_01_whoami records for blocks of {block} threads (computed: no GPU)",
                                    block=L.MAP_BLOCK))
        print(tr("warp = (tx + ty * blockDim.x) // 32, lane = the same % 32: the first warp of a (16, 4) block is rows "
                 "ty = 0 and 1.\nOn a GPU the lab also records %smid and %globaltimer, draws the block -> SM timeline, "
                 "and times the two branches (predicted: divergent = 2.0x uniform)."))
        return True
    rec = L.whoami(L.MAP_BLOCKS * L.MAP_BLOCK[0] * L.MAP_BLOCK[1], L.MAP_BLOCK).get()
    rule_ok = bool(np.array_equal(rec[:, :6], L.predicted_records()[:, :6]))
    report.print_table(L.mapping_table(rec), title=tr("hier_01_whoami, {blocks} blocks of {block} threads "
                                                      "(selected rows)", blocks=L.MAP_BLOCKS, block=L.MAP_BLOCK))
    print(tr("%laneid and the formula (tx + ty * bx) % 32 agree for all {n} threads: {ok}", n=len(rec),
             ok=yes_no(rule_ok)))
    return rule_ok


def show_compile_report(arch: str) -> None:
    rep = cuda.print_compile_report(L.CU, arch, excerpt_of="div_01_branch_on_lane_parity")
    k1 = rep.kernels.get("div_01_branch_on_lane_parity")
    if k1 is not None and k1.sass:
        bssy = sum(1 for s in k1.sass if s.split()[0].startswith(("BSSY", "BSYNC")))
        print(tr("-> div_01 has {n} BSSY/BSYNC instructions: the compiler marks where the two sides of the branch "
                 "re-converge, because lanes of one warp may take different sides. The even and odd hash loops are two "
                 "separate loops in the SASS (multipliers 0x7feb352d and 0x846ca68b): a divergent warp runs both.",
                 n=bssy))


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# The timeline: blocks that spin for a fixed time, more of them than the GPU holds at once (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def timeline(spin_us: float = L.TIMELINE_SPIN_US, waves: float = L.TIMELINE_WAVES) -> dict:
    """Launch ~`waves` waves of blocks that each stay resident ~spin_us; return per-block SM, start, end (ns)."""
    d = device.info()
    launch = L.timeline_launch(d, waves)
    per_wave, blocks = launch["per_wave"], launch["blocks"]
    spin = int(spin_us * d.sm_clock_mhz)
    rec = L.whoami(blocks * L.THREADS, (L.THREADS, 1), spin).get().reshape(blocks, L.THREADS, L.NFIELDS)
    sm = rec[:, 0, 6]
    start = rec[:, :, 8].min(axis=1)
    end = rec[:, :, 9].max(axis=1)
    t0 = start.min()
    return {"blocks": blocks, "resident_per_sm_predicted": launch["blocks_per_sm"], "limiter": launch["limiter"],
            "sms": d.sms, "per_wave": per_wave, "spin_us": spin_us, "spin_cycles": spin,
            "sm": sm, "start_us": (start - t0) / 1e3, "end_us": (end - t0) / 1e3,
            "timer_step_ns": _timer_step(rec[:, :, 8].ravel())}


def _timer_step(ts: np.ndarray) -> float:
    """The smallest non-zero difference between %globaltimer readings: its resolution, as seen."""
    u = np.unique(ts)
    d = np.diff(u)
    return float(d[d > 0].min()) if d.size and (d > 0).any() else float("nan")


def timeline_stats(tl_: dict) -> dict:
    sm, s, e = tl_["sm"], tl_["start_us"], tl_["end_us"]
    # the most blocks any SM held at once: sweep its start/end events
    max_conc = 0
    for m in np.unique(sm):
        ev = sorted([(t, 1) for t in s[sm == m]] + [(t, -1) for t in e[sm == m]], key=lambda p: (p[0], p[1]))
        c = 0
        for _, dlt in ev:
            c += dlt
            max_conc = max(max_conc, c)
    order = np.sort(s)
    gaps = np.diff(order)
    waves = 1 + int((gaps > tl_["spin_us"] / 2).sum())
    return {"blocks": tl_["blocks"], "SMs used": int(len(np.unique(sm))), "SMs on the GPU": tl_["sms"],
            "most blocks on one SM at once": max_conc,
            "resident blocks/SM predicted (lab 1.5)": tl_["resident_per_sm_predicted"],
            "waves seen": waves, "waves predicted": math.ceil(tl_["blocks"] / tl_["per_wave"]),
            "kernel span us": float(e.max()), "span predicted us": math.ceil(tl_["blocks"] / tl_["per_wave"]) *
            tl_["spin_us"], "globaltimer step ns": tl_["timer_step_ns"]}


def timeline_record(tl_: dict) -> dict:
    """What the plot needs of a timeline, as JSON: the launch's figures and one (SM, start, end) per block."""
    keep = ("blocks", "resident_per_sm_predicted", "sms", "per_wave", "spin_us")
    return {k: tl_[k] for k in keep} | {"sm": [int(v) for v in tl_["sm"]],
                                        "start_us": [round(float(v), 3) for v in tl_["start_us"]],
                                        "end_us": [round(float(v), 3) for v in tl_["end_us"]]}


# ---------------------------------------------------------------------------------------------------------------------
# Divergence benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def divergence_bench(n: int, rounds: int) -> tuple[list[dict], list[target.Target]]:
    import cupy

    x, _ = L.make_inputs(n, "int32", check.rng(7), "cuda")
    out = cupy.empty_like(x)
    fns = {v.name: (lambda f=v.fn: f(x, rounds, out=out)) for v in L.VARIANTS}
    ts, _, steady = bench.steady(fns, rounds=3)
    uniform = ts[L.VARIANTS[1].name].median_ms
    int_ops = L.HASH_OPS_PER_ROUND * rounds * n
    predicted_uniform_ms = L.hash_ms(device.info(), n, rounds)
    rows, targets = [], []
    for v in L.VARIANTS:
        t = ts[v.name]
        r = report.row(L.LAB, v.name, v.impl, (n,), "int32", t, nbytes=8 * n)
        r["int_ops"] = int_ops * (2 if "triton" in v.name else 1)
        r["vs_uniform"] = t.median_ms / uniform
        r["predicted_ms"] = predicted_uniform_ms * (1 if "uniform" in v.name else 2)
        rows.append(r)
    ratio = ts[L.VARIANTS[0].name].median_ms / uniform
    targets.append(target.prediction("divergent / uniform time = (f + g) / max(f, g)", ratio, at_least=1.7,
                                     at_most=2.3, goal="2 (1.7 .. 2.3)", steady=steady))
    x = out = None
    return rows, targets


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description alone: the hash's time at ~64 integer operations per
    clock per SM against the time its bytes take, divergent / uniform, and the timeline's waves."""
    n, _ = plan.fit(L.BENCH_N, L.bench_bytes, gpu)
    rounds = L.BENCH_ROUNDS
    uniform = L.hash_ms(gpu, n, rounds)
    bytes_ms = L.bench_bytes(n) / (gpu.hbm_gbps * 1e9) * 1e3
    tl_ = L.timeline_launch(gpu)
    waves = math.ceil(tl_["blocks"] / tl_["per_wave"])
    return {tr("uniform (div_02) at n = {n}, {rounds} rounds", n=plan.fmt_size(n), rounds=rounds):
                f"{uniform:.3f} ms",
            tr("divergent (div_01) = (f + g) / max(f, g) x uniform"): tr("{ms:.3f} ms (ratio 2.0)", ms=2 * uniform),
            tr("the bytes alone (8 n B / {gbps:.0f} GB/s)", gbps=gpu.hbm_gbps):
                tr("{ms:.4f} ms: the hash takes {x:.0f}x longer", ms=bytes_ms, x=uniform / bytes_ms),
            tr("timeline: resident 256-thread blocks per SM (calculator)"):
                f"{tl_['blocks_per_sm']} ({tr(tl_['limiter'])})",
            tr("timeline: {waves} waves of {blocks} blocks", waves=L.TIMELINE_WAVES, blocks=tl_["per_wave"]):
                tr("{blocks} blocks in {waves} waves: {us:.0f} us at {per:.0f} us a block", blocks=tl_["blocks"],
                   waves=waves, us=waves * L.TIMELINE_SPIN_US, per=L.TIMELINE_SPIN_US)}


def benchmark(ctx) -> lab.Result:
    rec = L.whoami(L.MAP_BLOCKS * L.MAP_BLOCK[0] * L.MAP_BLOCK[1], L.MAP_BLOCK).get()
    tl_ = timeline(spin_us=10.0 if ctx.quick else L.TIMELINE_SPIN_US)
    stats = timeline_stats(tl_)
    n = ctx.args.size or (2**20 if ctx.quick else L.BENCH_N)
    n, note = plan.fit(n, L.bench_bytes, device.info())
    if note:
        print(tr(note))
    rows, targets = divergence_bench(n, ctx.args.rounds)
    return lab.Result(
        rows=rows,
        meta=dict(targets=target.records(targets), timeline=stats, mapping=L.mapping_table(rec),
                  timeline_blocks=timeline_record(tl_), device=device.info().as_dict()),
        tables=[([{"quantity": tr(k), "value": v} for k, v in stats.items()], None, "Blocks on SMs over time"),
                (rows, ["variant", "impl", "ms", "predicted_ms", "vs_uniform", "spread"],
                 tr("Warp divergence: n = {n}, {rounds} rounds (interleaved rounds)", n=n, rounds=ctx.args.rounds)),
                (target.said(targets, translate=("case",)), None, "Prediction vs measurement")])


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot_timeline(tl_: dict, path: str, gpu: str = "GPU") -> str:
    plt = report.pyplot()
    sm, s, e = (np.asarray(tl_[k]) for k in ("sm", "start_us", "end_us"))
    blocks = len(sm)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(14, 6), gridspec_kw={"width_ratios": [1, 2]})
    first = min(blocks, 3 * tl_["sms"])
    ax0.scatter(np.arange(first), sm[:first], s=6, c=np.arange(first), cmap="viridis")
    ax0.set_xlabel("blockIdx.x")
    ax0.set_ylabel("SM (%smid)")
    ax0.set_title(tr("which SM each block ran on (first {n} blocks)", n=first), fontsize=10)
    ax0.grid(alpha=0.3)
    # one horizontal segment per block, stacked within its SM's row by a greedy slot assignment
    slot = np.zeros(blocks)
    per = max(1, tl_["resident_per_sm_predicted"])
    for m in np.unique(sm):
        idx = np.where(sm == m)[0]
        idx = idx[np.argsort(s[idx])]
        free_at: list[float] = []
        for b in idx:
            for k, t in enumerate(free_at):
                if t <= s[b]:
                    free_at[k] = e[b]
                    slot[b] = k
                    break
            else:
                free_at.append(e[b])
                slot[b] = len(free_at) - 1
    y = sm + slot / (max(per, slot.max() + 1) + 1)
    cmap = plt.get_cmap("viridis")
    ax1.hlines(y, s, e, colors=cmap(np.arange(blocks) / max(1, blocks - 1)), lw=1.2)
    ax1.set_xlabel(tr("time since the first block started (us, %globaltimer)"))
    ax1.set_ylabel(tr("SM (%smid); one line per resident block"))
    ax1.set_title(tr("{blocks} blocks of {threads} threads, each spinning {us:.0f} us: {per_wave} fit at once "
                     "({per_sm}/SM)", blocks=blocks, threads=L.THREADS, us=tl_["spin_us"], per_wave=tl_["per_wave"],
                     per_sm=tl_["resident_per_sm_predicted"]), fontsize=10)
    ax1.grid(alpha=0.3)
    fig.suptitle(tr("{gpu}: blocks dealt to SMs in waves (color = blockIdx)", gpu=gpu), fontsize=11)
    return report.save(fig, path)


def plot_divergence(rows: list[dict], path: str, gpu: str = "GPU") -> str:
    return report.plot_bars(path, [r["variant"] for r in rows], [r["ms"] for r in rows], ylabel="ms (median)",
                            title=tr("Warp divergence on {gpu}: n = {n}, same work", gpu=gpu, n=rows[0]["shape"][0]),
                            colors=[report.IMPL_COLORS[r["impl"]] for r in rows],
                            hlines={"predicted uniform": rows[1]["predicted_ms"],
                                    "predicted divergent": rows[0]["predicted_ms"]}, annotate_fmt="{:.3f}")


def plot(data: dict, out_dir: str) -> list[str]:
    """The divergence bars, and the timeline when the JSON holds its blocks (results measured before the per-block
    record was kept have only its summary: that plot is then left as it is)."""
    gpu = data.get("gpu", "GPU")
    paths = [plot_divergence(data["rows"], os.path.join(out_dir, f"{L.LAB}_divergence.png"), gpu)]
    if data.get("timeline_blocks"):
        paths.append(plot_timeline(data["timeline_blocks"], os.path.join(out_dir, f"{L.LAB}_timeline.png"), gpu))
    else:
        print(tr("(the timeline plot needs the per-block record, which this JSON predates: {name}_timeline.png is "
                 "redrawn after the next GPU run)", name=L.LAB))
    return paths
