"""Lab 1.2's measuring side: bandwidth against size for every version and peer (the three regimes), the target in
interleaved rounds, vadd_04's and Triton's launch parameters (--tune), what the compiler made of the kernels, and the
plot (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

from common import bench, check, cli, cuda, device, lab, plan, report, table, target
from common import triton_support as ts
from common.i18n import tr

from . import lab as L

CPU_NOTE = "\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter."
GRAPH_BELOW = 2**24   # sizes up to this are timed as CUDA graphs of GRAPH_CALLS launches (see sweep)
GRAPH_CALLS = 100


def add_arguments(p) -> None:
    cli.add_size(p, tr("largest n of the sweep (default 2^29, quick 2^22)"))
    p.add_argument("--tune", action="store_true", help=tr("(GPU) sweep the launch parameters of vadd_04 and Triton"))


# ---------------------------------------------------------------------------------------------------------------------
# What the compiler made of the kernels (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(arch: str) -> None:
    rep = cuda.print_compile_report(L.CU, arch, excerpt_of="vadd_03_float4")
    w = rep.census("vadd_03_float4")
    if w is not None:
        print(tr("-> vadd_03_float4 issues {n128} x 128-bit loads (LDG.E.128): the float4 path really is 16 bytes per "
                 "load; vadd_01 issues {n32} x 32-bit loads.", n128=w.get("LDG.128", 0),
                 n32=rep.kernels["vadd_01_one_thread_per_element"].sass_counts.get("LDG.32", 0)))
    cc = int(arch.split("_")[1].rstrip("a"))
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    print("\n" + tr("Triton add_kernel compiled ahead of time for {arch} (BLOCK={block}, num_warps={warps}):",
                    arch=arch, block=L.TRITON_BLOCK, warps=L.TRITON_WARPS))
    cases = ((tr("no alignment known"), ()), (tr("pointers 16-byte aligned and n % 16 == 0"),
                                               ("a_ptr", "b_ptr", "c_ptr", "n")))
    w = max(42, *(table.width(label) for label, _ in cases))
    for label, div in cases:
        k = ts.compile_for(L.add_kernel, sig, {"BLOCK": L.TRITON_BLOCK}, cc=cc, num_warps=L.TRITON_WARPS,
                           divisible_by_16=div)
        print(f"  {label}{' ' * (w - table.width(label))} " +
              tr("PTX global memory ops: {ops}", ops=ts.ptx_memory_ops(k.asm["ptx"])))
    print(tr("  A GPU launch learns alignment from the actual arguments (addresses and n divisible by 16), so the "
             "fast\n  path is taken on aligned data and the scalar one on odd sizes or offset views."))


def compile_report(args) -> None:
    show_compile_reports(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def sweep(sizes, ceiling_gbps: float) -> list[dict]:
    """GB/s of every variant and peer at every size, L2 NOT flushed (so the L2-resident regime can show).

    Up to GRAPH_BELOW elements each point is timed as a CUDA graph of GRAPH_CALLS launches: one Python call (argument
    checks, CuPy's launch path) costs tens of microseconds on the host, far more than the GPU needs for a few MB, so
    the plain timer would measure Python, not the memory system. Larger sizes use the plain timer.
    """
    import cupy

    rows = []
    for n in cli.progress(sizes, "vector add sizes"):
        rng = check.rng(n)
        a, b = L.make_inputs(n, "float32", rng, "cuda")
        out = cupy.empty_like(a)
        peer_ms = None
        for v in L.PEERS + L.VARIANTS:
            t = bench.bench(lambda: v.fn(a, b, out=out), flush_l2=False, graph=n <= GRAPH_BELOW, calls=GRAPH_CALLS)
            r = report.row(L.LAB, v.name, v.impl, (n,), "float32", t, nbytes=12 * n, flops=n,
                           ceiling_gbps=ceiling_gbps)
            if v.name == "torch.add":
                peer_ms = t.median_ms
            r["vs_torch_add"] = peer_ms / t.median_ms if peer_ms else None
            rows.append(r)
        a = b = out = None
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def _fns(n: int, contenders: dict):
    import cupy

    a, b = L.make_inputs(n, "float32", check.rng(n), "cuda")
    out = cupy.empty_like(a)
    return {name: (lambda f=f: f(a, b, out=out)) for name, f in contenders.items()}, (a, b, out)


def head_to_head(sizes=(2**28, 2**29), rounds: int = 7) -> list[target.Target]:
    """The target: at 2^28 elements and above, the float4 CUDA kernels and Triton reach >= 1.0x torch.add.

    Measured in steady interleaved rounds (common.bench.steady) so slow drift cannot favour one contender, and a
    round too noisy to compare is rerun; torch.add's own line is a reference (no goal)."""
    out = []
    for n in cli.progress(sizes, "head-to-head sizes"):
        fns, keep = _fns(n, {"torch.add": L.peer_torch_add, "cuda 03 float4": L.add_cuda_03,
                             "cuda 04 float4 streaming store": L.add_cuda_04, "triton": L.add_triton})
        ts_, tries, steady = bench.steady(fns, rounds=rounds, flush_l2=True)
        peer = ts_["torch.add"]
        for name, t in ts_.items():
            out.append(target.versus(target.fmt(n), name, "torch.add",
                                     peer.median_ms / t.median_ms, steady=steady,
                                     at_least=None if name == "torch.add" else 1.0,
                                     detail={"ms": t.median_ms, "GB/s": t.gbps(12 * n), "spread": t.spread,
                                             "rounds_run": tries}))
        del keep
    return out


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu`, from its description alone: the floor of the largest case (12 n bytes over
    the datasheet bandwidth), where the three arrays stop fitting in L2, and how far below the ridge point one FLOP
    per 12 bytes is."""
    n, _ = plan.fit(L.BENCH_N, L.bench_bytes, gpu)
    bw = gpu.hbm_gbps
    out = {tr("floor at n = {n} (12 n B / {bw:.0f} GB/s)", n=plan.fmt_size(n), bw=bw):
               f"{12 * n / (bw * 1e9) * 1e3:.3f} ms",
           tr("largest n whose three arrays fit in L2"):
               f"{gpu.l2_bytes // 12:,} ({gpu.l2_bytes / device.MiB:.0f} MiB L2)",
           tr("one wave of vadd_02 (blocks of 256 on every SM)"): L.resident_blocks(gpu)}
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (bw * 1e9)
        out[tr("fp32 ridge point (datasheet FLOP/s over bandwidth)")] = \
            tr("{ridge:.1f} FLOP/B: 1/12 FLOP/B is {below:.0f}x below", ridge=ridge, below=12 * ridge)
    return out


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    top = ctx.args.size or (2**22 if ctx.quick else L.BENCH_N)
    top, note = plan.fit(top, L.bench_bytes, device.info())
    if note:
        print(tr(note))
    step = 2 if ctx.quick else 1
    sizes = [2**k for k in range(10, int(math.log2(top)) + 1, step)]
    rows = sweep(sizes, ceiling["hbm_gbps"])
    big = [r for r in rows if r["shape"][0] == sizes[-1]]
    tg = head_to_head() if top >= L.BENCH_N else []
    tables = [(big, ["variant", "impl", "ms", "gbps", "frac_ceiling", "vs_torch_add", "spread"],
               tr("n = 2^{log} (12 n = {gib:.2f} GiB moved), measured ceiling {ceiling:.0f} GB/s",
                  log=int(math.log2(sizes[-1])), gib=12 * sizes[-1] / 2**30, ceiling=ceiling["hbm_gbps"]))]
    if tg:
        tables.append((target.said(tg), None,
                       "target: >= 1.0x torch.add at 2^28 elements and above (interleaved rounds)"))
    return lab.Result(rows=rows, meta=dict(ceiling=ceiling, targets=target.records(tg), device=device.info().as_dict()),
                      tables=tables)


def tune_sweep(n: int = 2**28, rounds: int = 3) -> list[dict]:
    """Sweep vadd_04's (threads, unroll, streaming store) and Triton's (BLOCK, num_warps) against torch.add."""
    contenders = {"torch.add": L.peer_torch_add, "cuda 03 float4": L.add_cuda_03}
    for threads in (128, 256, 512):
        for unroll in (1, 2, 4):
            for stream in (0, 1):
                contenders[f"cuda 04 t{threads} u{unroll} s{stream}"] = \
                    (lambda a, b, out, t=threads, u=unroll, s=stream: L.add_cuda_04(a, b, out, threads=t, unroll=u,
                                                                                     stream=s))
    for block, warps in ((512, 4), (1024, 4), (512, 2), (2048, 4), (2048, 8), (4096, 8), (4096, 16), (8192, 16)):
        contenders[f"triton B{block} w{warps}"] = \
            (lambda a, b, out, bl=block, w=warps: L.add_triton(a, b, out, block=bl, num_warps=w))
    fns, keep = _fns(n, contenders)
    ts_ = bench.interleaved(fns, rounds=rounds, flush_l2=True)
    peer = ts_["torch.add"].median_ms
    rows = [{"config": k, "ms": t.median_ms, "GB/s": t.gbps(12 * n), "vs torch.add": peer / t.median_ms,
             "spread": t.spread} for k, t in ts_.items()]
    del keep
    return sorted(rows, key=lambda r: r["ms"])


def tune(ctx) -> lab.Result:
    rows = tune_sweep()
    return lab.Result(rows=rows, tables=[(rows, None, tr("vadd_04 / Triton launch parameters at n = 2^28 "
                                                         "(interleaved rounds)"))])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def regimes(rows: list[dict], l2_bytes: int) -> list[tuple[float, float, str]]:
    """Shaded regions for the plot: launch-bound (time within 2x of the smallest), L2-resident, HBM-bound."""
    ns = sorted({r["shape"][0] for r in rows})
    best = {n: min(r["ms"] for r in rows if r["shape"][0] == n) for n in ns}
    floor = min(best.values())
    launch_end = max([n for n in ns if best[n] < 2 * floor] or [ns[0]])
    n_l2 = l2_bytes / 12
    out = [(ns[0], launch_end, "launch-bound")]
    if n_l2 > launch_end:
        out.append((launch_end, n_l2, "L2-resident"))
    out.append((max(n_l2, launch_end), ns[-1], "HBM-bound"))
    return out


REGION_COLORS = {"launch-bound": "#fdd9b5", "L2-resident": "#c7e9c0", "HBM-bound": "#c6dbef"}


def launch_floor(rows: list[dict]) -> tuple[float, int]:
    """The fastest time any call took (ms) and the n it was measured at: the fixed cost of one call, which is all a
    launch-bound call pays."""
    r = min((r for r in rows if r.get("ms")), key=lambda r: r["ms"])
    return r["ms"], r["shape"][0]


def covered_by(series: dict, close: float = 0.04, share: float = 0.8) -> dict[str, int]:
    """{name: how many of the lines drawn after it lie on it}: within `close` (relative) of it at `share` or more of
    the sizes both measured. vadd_03, vadd_04 and Triton reach the same GB/s at nearly every n, so the line drawn last
    would hide the others."""
    names = list(series)
    out = {}
    for i, a in enumerate(names):
        out[a] = 0
        for b in names[i + 1:]:
            both = [(x, y) for x, y in zip(series[a], series[b]) if x and y]
            if both and sum(abs(x / y - 1) < close for x, y in both) >= share * len(both):
                out[a] += 1
    return out


def line_style(i: int, covered: int, peer: bool) -> dict:
    """The plot keywords of the i-th line drawn, `covered` of the lines drawn after it lying on it: such a line is
    drawn wider (a band 2.4 pt wider per line over it), so each line over it shows as a narrower band inside it and
    every colour stays visible."""
    return dict(color=f"C{i % 10}", marker="o", ms=3 + 1.5 * covered, lw=1.5 + 2.4 * covered,
                ls="--" if peer else "-", zorder=3 + 0.1 * i)


def plot(data: dict, out_dir: str) -> list[str]:
    """Bandwidth against n, twice: a linear GB/s axis (top: the L2 peak and the HBM plateau) and a logarithmic one
    (bottom: the launch-bound region, where a call costs a fixed time and GB/s grows in proportion to n), the three
    regions shaded and named in both, one legend for both."""
    rows, ceiling, dev = data["rows"], data["ceiling"], data.get("device") or {}
    ns = sorted({r["shape"][0] for r in rows})
    names = list(dict.fromkeys([v.name for v in L.VARIANTS + L.PEERS] + [r["variant"] for r in rows]))
    series = {}
    for name in names:
        by_n = {r["shape"][0]: r["gbps"] for r in rows if r["variant"] == name}
        if by_n:
            series[name] = [by_n.get(n) for n in ns]
    impl = {r["variant"]: r.get("impl") for r in rows}
    l2_bytes = dev.get("l2_bytes") or device.current(dev.get("arch")).l2_bytes
    datasheet = (dev.get("datasheet") or ceiling.get("datasheet") or {}).get("hbm_gbps")
    hbm = ceiling["hbm_gbps"]
    hl = {tr("measured HBM ceiling {gbps:.0f} GB/s ({method})", gbps=hbm, method=ceiling["hbm_method"]): (hbm, "--")}
    if datasheet:
        hl[tr("datasheet {gbps} GB/s", gbps=datasheet)] = (datasheet, ":")
    # on the log axis the two lines are too close for two labels: one says both
    hl_log = tr("HBM: measured {gbps:.0f} GB/s (dashed)", gbps=hbm) + \
        (tr(", datasheet {gbps} (dotted)", gbps=datasheet) if datasheet else "")
    regions = regimes(rows, l2_bytes)
    t_min, n_min = launch_floor(rows)
    covered = covered_by(series)
    # the lines that lie on the first line others cover: named under the legend, drawn as nested bands
    first = next((n for n in series if covered[n]), None)
    stacked = [first] + [n for n in list(series)[list(series).index(first) + 1:]
                         if covered_by({first: series[first], n: series[n]})[first]] if first else []
    launch_end = regions[0][1]

    plt = report.pyplot()
    fig, (ax, axl) = plt.subplots(2, 1, figsize=(10.5, 9.2), sharex=True, gridspec_kw={"height_ratios": [1, 1.15]})
    for a, logy in ((ax, False), (axl, True)):
        for x0, x1, label in regions:
            a.axvspan(x0, x1, color=REGION_COLORS.get(label, "#eeeeee"), alpha=0.55, lw=0, zorder=0)
            a.annotate(tr(label), xy=((x0 * x1) ** 0.5, 0.98), xycoords=("data", "axes fraction"), ha="center",
                       va="top", fontsize=9, fontweight="bold", color="#444444")
        for i, (name, ys) in enumerate(series.items()):
            pts = [(n, y) for n, y in zip(ns, ys) if y]
            peer = impl.get(name) == "peer"
            a.plot([p[0] for p in pts], [p[1] for p in pts], label=name + (tr(" (peer)") if peer else ""),
                   **line_style(i, covered[name], peer))
        for label, (y, ls) in hl.items():
            a.axhline(y, ls=ls, color="gray", lw=1, zorder=1)
            if not logy:
                a.annotate(label, xy=(0.01, y), xycoords=("axes fraction", "data"), va="bottom", fontsize=8,
                           color="dimgray")
        if logy:
            a.annotate(hl_log, xy=(0.01, max(y for y, _ in hl.values())), xycoords=("axes fraction", "data"),
                       xytext=(0, 3), textcoords="offset points", va="bottom", fontsize=8, color="dimgray")
        a.axvline(l2_bytes / 12, ls=":", color="tab:gray", lw=1)
        a.set_xscale("log", base=2)
        a.grid(True, which="major", alpha=0.3)
        a.set_ylabel(tr("GB/s (reads + writes)") + (tr(", log scale") if logy else ""))
    axl.annotate(tr("3 arrays = L2 ({mib:.0f} MiB)", mib=l2_bytes / 2**20), xy=(l2_bytes / 12, 0.03),
                 xycoords=("data", "axes fraction"), rotation=90, va="bottom", ha="right", fontsize=8, color="dimgray")
    # the log panel: what a fixed cost per call predicts for GB/s (12 n bytes / the fastest call), up to where the
    # launch-bound region ends
    axl.set_yscale("log")
    xs = [n for n in ns if n <= launch_end]
    axl.plot(xs, [12 * n / (t_min * 1e6) for n in xs], color="black", lw=1.2, ls="-.", zorder=2)
    mid = xs[len(xs) * 2 // 3]
    us = t_min * 1e3
    axl.annotate(tr("if every call took a fixed {us:.2f} \u00b5s\n(the fastest call measured):\n"
                    "GB/s = 12 n bytes / {us:.2f} \u00b5s,\ndoubling with n", us=us),
                 xy=(mid, 12 * mid / (t_min * 1e6)),
                 xytext=(0.03, 0.74), textcoords="axes fraction", fontsize=8.5, ha="left", va="top",
                 arrowprops=dict(arrowstyle="->", color="black", lw=0.8, shrinkB=2))
    ys_all = [y for ys in series.values() for y in ys if y]
    axl.set_ylim(min(ys_all) / 2, max(ys_all) * 3)
    axl.set_xlabel(tr("elements n (fp32; 12 n bytes moved)"))
    ax.set_title(tr("linear axis: the L2 peak and the HBM plateau"), fontsize=9.5)
    axl.set_title(tr("log axis: the launch-bound region, where bandwidth grows with n"), fontsize=9.5)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", bbox_to_anchor=(0.5, 0.02 if stacked else 0), ncol=4,
               fontsize=8, frameon=False)
    if stacked:
        fig.text(0.5, 0.008, tr("{names} lie on one another: each is drawn as a band, the one drawn first widest, "
                                "so every colour shows", names=", ".join(stacked)),
                 ha="center", va="bottom", fontsize=8, color="dimgray")
    fig.suptitle(tr("Vector add on {gpu}: bandwidth vs size (L2 not flushed; n <= 2^{log} timed as CUDA graphs)",
                    gpu=data.get("gpu", "GPU"), log=int(math.log2(GRAPH_BELOW))), fontsize=11)
    fig.tight_layout(rect=(0, 0.08 if stacked else 0.06, 1, 1))
    path = os.path.join(out_dir, f"{L.LAB}.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return [path]
