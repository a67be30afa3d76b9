"""Lab 2.6's measuring side: the numerics table (every summation order against float64), the ladder at one size, a
size sweep, the targets in interleaved rounds, rung 09's and Triton's knobs (--tune), what the compiler made of each
rung, and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

import numpy as np

from common import bench, cli, cuda, device, lab, plan, report, target
from common.i18n import korean, tr

from . import lab as L

CPU_NOTE = "\nCUDA C variants were compiled, not run (no GPU); the Triton kernels ran in the interpreter."
SWEEP_NAMES = ["cuda 06 warp shuffle", "cuda 07 float4 grid-stride, 2 passes", "cuda 08 single pass, atomics",
               L.BEST, "triton chunked, 2 passes", "cupy.sum", "torch.sum"]


def add_arguments(p) -> None:
    cli.add_size(p, tr("n of the ladder (default 2^28, quick 2^24; without a GPU: of the numerics table, 2^22 / "
                       "2^16)"))
    p.add_argument("--tune", action="store_true", help=tr("(GPU) sweep rung 09's and Triton's parameters vs torch.sum"))


# ---------------------------------------------------------------------------------------------------------------------
# Checks beyond VARIANTS: the max kernels; numerics without a GPU
# ---------------------------------------------------------------------------------------------------------------------
def extra_checks(args) -> bool:
    """The max variants (and peers, on a GPU) on the same cases; without a GPU also the numerics table (on a GPU it
    is part of the benchmark, with every CUDA rung and peer in it)."""
    gpu = device.has_gpu()
    _, ok = lab.check_variants(L.MAX_LAB, L.MAX_VARIANTS + (L.MAX_PEERS if gpu else []),
                               lab.check_cases(L, args.quick))
    if not gpu:
        n = args.size or (2**16 if args.quick else 2**22)
        report.print_table(said_numerics(numerics(n)),
                           title=tr("numerics: sum of {n:,} uniform [0, 1) fp32 values vs float64 (on a GPU every "
                                    "CUDA rung and peer joins this table)", n=n))
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the predictions for this GPU
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("predictions for {gpu} (its SMs, bandwidth and datasheet peaks)", gpu=gpu.label()))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's predictions for `gpu`: the floor of the main sum, the single-pass rungs' grid (sized to its SMs)
    and the elements each thread folds, their loads in flight per SM against Little's law, where 4 n bytes stop
    fitting in L2, and how far 0.25 FLOP/B sits below the fp32 ridge point."""
    n, _ = plan.fit(L.N_MAIN, L.bench_bytes, gpu)
    hbm = gpu.hbm_gbps
    cfg = L.fast_config().values
    grid = L.fast_grid(n, gpu)
    per_sm = grid // gpu.sms
    offer = per_sm * L.THREADS * cfg["UNROLL"] * 16
    need = hbm * 1e9 * L.LATENCY_US * 1e-6 / gpu.sms
    out = {tr("floor at n = {n} (4 n B / {bw:.0f} GB/s)", n=plan.fmt_size(n), bw=hbm): f"{4 * n / (hbm * 1e6):.3f} ms",
           tr("rungs 07-10: grid (SMs x blocks per SM)"): tr("{grid:,} blocks of {threads} ({per_sm} per SM)",
                                                             grid=grid, threads=L.THREADS, per_sm=per_sm),
           tr("rungs 07-10: elements per thread"): f"~{n / (grid * L.THREADS):,.0f}",
           tr("loads in flight per SM: {per_sm} blocks x {threads} threads x {unroll} x 16 B", per_sm=per_sm,
              threads=L.THREADS, unroll=cfg["UNROLL"]):
               tr("{kib:.0f} KiB (Little's law asks {need:.0f} KiB at {us:g} us)", kib=offer / 1024, need=need / 1024,
                  us=L.LATENCY_US),
           tr("rungs 01-03 / 04-06: launches per sum (one per pass)"):
               f"{len(L.multipass_grids(n, L.THREADS))} / {len(L.multipass_grids(n, 2 * L.THREADS))}",
           tr("largest n whose 4 n bytes fit in L2"): f"{gpu.l2_bytes // 4:,} ({gpu.l2_bytes / device.MiB:.0f} MiB L2)"}
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (hbm * 1e9)
        out[tr("fp32 ridge point (datasheet FLOP/s over bandwidth)")] = \
            tr("{ridge:.1f} FLOP/B: 0.25 FLOP/B is {x:.0f}x below", ridge=ridge, x=ridge / 0.25)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Numerics: how far each summation order lands from the float64 sum on real-valued data
# ---------------------------------------------------------------------------------------------------------------------
ORDERS = {
    "cuda 01 interleaved, divergent": "tree of 256 per block, tree of partials",
    "cuda 06 warp shuffle": "tree of 512 per block (shuffles), tree of partials",
    "cuda 07 float4 grid-stride, 2 passes": "a running sum per thread (~1000 values at 2^28), then trees",
    "cuda 08 single pass, atomics": "running sums, trees, partials added in arrival order",
    "cuda 09 single pass, last block": "running sums, trees, partials in a fixed tree",
    "cuda 10 single pass, Kahan": "compensated running sums and trees (TwoSum)",
    "triton chunked, 2 passes": "4096 running sums per program, tl.sum tree",
    "cupy.sum": "CUB device reduction",
    "torch.sum": "torch's reduce kernel (vectorized, tree)",
}


def numerics(n: int) -> list[dict]:
    """Relative error of every sum against float64 on n uniform [0, 1) fp32 values (+ NumPy's orders on the host).

    A demonstration, not a check: the values are the same every run (a fixed generator, not the process seed), so
    the table a learner reads, and the test that reads it, show the typical gap between orders, not a lucky draw."""
    rng = np.random.default_rng(12345)
    host = rng.random(n, dtype=np.float32)
    exact = float(np.sum(host, dtype=np.float64))
    rows = []

    def add(name, got, order, runs=None):
        r = {"variant": name, "order": order, "sum": float(got), "rel_err": abs(float(got) - exact) / exact}
        if runs is not None:
            r["bitwise same over 3 runs"] = runs
        rows.append(r)

    add("NumPy fp32, one running sum", np.cumsum(host, dtype=np.float32)[-1], "sequential (np.cumsum)")
    add("NumPy fp32 np.sum", np.sum(host, dtype=np.float32), "pairwise blocks of 128")
    if device.has_gpu():
        import cupy

        x = cupy.asarray(host)
        out = cupy.empty((), dtype=cupy.float32)
        for v in L.VARIANTS + L.PEERS:
            if v.name not in ORDERS:
                continue
            vals = []
            for _ in range(3):
                vals.append(float(v.fn(x, out=out)))
            add(v.name, vals[0], ORDERS[v.name], runs=len({np.float32(a).tobytes() for a in vals}) == 1)
        del x
    else:
        v = next(v for v in L.VARIANTS if v.impl == "triton")
        add(v.name + " (interpreter)", float(v.fn(host)), ORDERS[v.name])
    return rows


def said_numerics(rows: list[dict]) -> list[dict]:
    """The numerics table as printed: each summation order (and the host's two sums) in the chosen language; the
    JSON keeps the English."""
    if not korean():
        return rows
    out = []
    for r in rows:
        name = r["variant"]
        if name.endswith(" (interpreter)"):
            name = name[: -len(" (interpreter)")] + tr(" (interpreter)")
        out.append(dict(r, variant=tr(name), order=tr(r["order"])))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# What the compiler made of the kernels (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def compile_report(args) -> None:
    rep = cuda.print_compile_report(L.CU, args.arch, defines=L._defines(), excerpt_of="reduce_09_last_block")
    ks = rep.kernels
    if ks["reduce_01_interleaved_divergent"].sass:
        s1, s3 = ks["reduce_01_interleaved_divergent"].sass, ks["reduce_03_sequential_addressing"].sass
        div = [s for s in s1 if any(op in s for op in ("I2F", "MUFU.RCP", "F2I", "IMAD.HI"))]
        c9 = ks["reduce_09_last_block"].sass_counts
        c8 = ks["reduce_08_atomic_finish"].sass_counts
        unroll = L._defines()["UNROLL"]
        more = tr("; this compiler emits more copies of the loop body: read the SASS") \
            if c9.get("LDG.128", 0) > unroll else ""
        how = (tr("computes the run-time `tid % (2*stride)` as an integer division by reciprocal ({ops} and their "
                  "helpers) in every round", ops=", ".join(sorted({d.split()[0].split(".")[0] for d in div})))
               if div else tr("has no division: the compiler for {arch} proves 2*stride a power of two and turns "
                              "`tid % (2*stride)` into a bit mask", arch=args.arch))
        print(tr("-> reduce_01: {n1} SASS instructions; its loop {how}; reduce_03: {n3} instructions, no division.",
                 n1=len(s1), how=how, n3=len(s3)))
        print(tr("-> reduce_09: {ldg} x LDG.E.128 (UNROLL = {unroll} float4 in flight{more}), {shfl} SHFL, {bar} "
                 "barriers, {atom} ATOM (the ticket); reduce_08 finishes with {red} RED (an atomic add that returns "
                 "nothing, done in L2).", ldg=c9.get("LDG.128", 0), unroll=unroll, more=more, shfl=c9.get("SHFL", 0),
                 bar=c9.get("BAR", 0), atom=c9.get("ATOM", 0), red=c8.get("RED", 0)))


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _device_input(n: int):
    """Benchmark input made on the GPU (no host round trip for a GiB)."""
    import cupy

    return cupy.random.random(n, dtype=cupy.float32)


def _bench_fns(x, names=None):
    """name -> zero-argument callable, outputs preallocated; peers timed as a learner would call them."""
    import cupy
    import torch

    out = cupy.empty((), dtype=cupy.float32)
    tx = torch.from_dlpack(x)
    fns = {v.name: (lambda f=v.fn: f(x, out=out)) for v in L.VARIANTS}
    fns["cupy.sum"] = lambda: cupy.sum(x)
    fns["torch.sum"] = lambda: torch.sum(tx)
    if names is not None:
        fns = {k: fns[k] for k in names}
    return fns, out


def _impl() -> dict:
    return {v.name: v.impl for v in L.VARIANTS + L.PEERS}


def ladder(n: int, ceiling_gbps: float) -> list[dict]:
    """Every rung and peer once at size n (L2 flushed before each call), with the ratio to torch.sum."""
    x = _device_input(n)
    fns, _ = _bench_fns(x)
    ts = {name: bench.bench(fns[name]) for name in cli.progress(list(fns), tr("ladder n={n}", n=n))}
    impl = _impl()
    rows = [report.row(L.LAB, name, impl[name], (n,), "float32", t, nbytes=4 * n, flops=n - 1,
                       ceiling_gbps=ceiling_gbps, vs_torch_sum=ts["torch.sum"].median_ms / t.median_ms,
                       part="ladder")
            for name, t in ts.items()]
    del x
    return rows


def sweep(sizes, ceiling_gbps: float) -> list[dict]:
    """A few contenders over sizes: launch-bound small sums (where one launch beats two) up to HBM-bound."""
    import cupy

    rows = []
    impl = _impl()
    for n in cli.progress(sizes, "sizes"):
        x = _device_input(n)
        fns, _ = _bench_fns(x, SWEEP_NAMES)
        ts = {k: bench.bench(f) for k, f in fns.items()}
        for k, t in ts.items():
            rows.append(report.row(L.LAB, k, impl[k], (n,), "float32", t, nbytes=4 * n, flops=n - 1,
                                   ceiling_gbps=ceiling_gbps, vs_torch_sum=ts["torch.sum"].median_ms / t.median_ms,
                                   part="sweep"))
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def head_to_head(n: int = L.N_MAIN, rounds: int = 7) -> list[target.Target]:
    """The lab's targets, in steady interleaved rounds: the best rung >= 1.0x torch.sum; rung 01 at most 0.15x (the
    other contenders are reference lines, no goal)."""
    x = _device_input(n)
    names = ["torch.sum", "cupy.sum", L.BEST, "cuda 10 single pass, Kahan", "triton chunked, 2 passes",
             "cuda 01 interleaved, divergent"]
    fns, _ = _bench_fns(x, names)
    ts, tries, steady = bench.steady(fns, rounds=rounds, flush_l2=True)
    peer = ts["torch.sum"].median_ms
    goals = {L.BEST: {"at_least": 1.0}, "cuda 01 interleaved, divergent": {"at_most": 0.15}}
    rows = []
    for name, t in ts.items():
        rows.append(target.versus(f"sum 2^{int(math.log2(n))} fp32" if n & (n - 1) == 0 else f"sum {n} fp32", name,
                                  "torch.sum", peer / t.median_ms, steady=steady, **goals.get(name, {}),
                                  detail={"ms": t.median_ms, "GB/s": t.gbps(4 * n), "spread": t.spread,
                                          "rounds_run": tries}))
    del x
    return rows


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    hbm = ceiling["hbm_gbps"]
    n, note = plan.fit(ctx.args.size or (2**24 if ctx.quick else L.N_MAIN), L.bench_bytes, device.info())
    if note:
        print(tr(note))
    num = numerics(n)
    lad = ladder(n, hbm)
    sizes = [2**k for k in ((12, 18, 24) if ctx.quick else (12, 16, 20, 24, 28))]
    sw = sweep([m for m in sizes if plan.fit(m, L.bench_bytes, device.info())[0] == m], hbm)   # those that fit
    tg = head_to_head(n, rounds=3 if ctx.quick else 7)
    return lab.Result(
        rows=lad + sw,
        meta=dict(ceiling=ceiling, targets=target.records(tg), numerics=num, knobs=L.fast_config().values,
                  device=device.info().as_dict()),
        tables=[(said_numerics(num), None, tr("numerics: sum of {n:,} uniform [0, 1) fp32 values vs float64", n=n)),
                (sw, ["variant", "shape", "ms", "gbps", "frac_ceiling", "vs_torch_sum"],
                 "size sweep (L2 flushed before each call)"),
                (lad, ["variant", "impl", "ms", "gbps", "frac_ceiling", "vs_torch_sum", "spread"],
                 tr("the ladder at n = {n:,} ({gib:.2f} GiB read), measured ceiling {hbm:.0f} GB/s", n=n,
                    gib=4 * n / 2**30, hbm=hbm)),
                (target.said(tg), None, "targets (interleaved rounds, same run)")])


def tune_sweep(n: int = L.N_MAIN, rounds: int = 3) -> list[dict]:
    """Sweep rung 09's UNROLL, load cache hint and blocks per SM, and Triton's tile, against torch.sum (interleaved
    rounds); fastest first."""
    import cupy
    import torch

    x = _device_input(n)
    out = cupy.empty((), dtype=cupy.float32)
    tx = torch.from_dlpack(x)
    fns = {"torch.sum": lambda: torch.sum(tx)}
    for unroll in (2, 4, 8):
        for hint in (0, 1, 2):
            for bps in (4, 8):
                fns[f"09 unroll={unroll} load_hint={hint} blocks/SM={bps}"] = \
                    (lambda u=unroll, h=hint, b=bps: L.sum_cuda_09(x, out, unroll=u, load_hint=h, blocks_per_sm=b))
    for block, iters, warps in ((4096, 16, 8), (4096, 8, 8), (8192, 8, 16), (2048, 32, 4)):
        fns[f"triton BLOCK={block} ITERS={iters} warps={warps}"] = \
            (lambda b=block, i=iters, w=warps: L.sum_triton(x, out, block=b, iters=i, num_warps=w))
    for f in fns.values():   # compile everything before timing
        f()
    ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
    peer = ts["torch.sum"].median_ms
    rows = [{"config": k, "ms": t.median_ms, "GB/s": t.gbps(4 * n), "vs torch.sum": peer / t.median_ms,
             "spread": t.spread} for k, t in ts.items()]
    return sorted(rows, key=lambda r: r["ms"])


def tune(ctx) -> lab.Result:
    n, note = plan.fit(L.N_MAIN, L.bench_bytes, device.info())
    if note:
        print(tr(note))
    rows = tune_sweep(n)
    return lab.Result(rows=rows, tables=[(rows, None, tr("rung 09 / Triton parameters at n = {n} (interleaved rounds "
                                                         "vs torch.sum)", n=plan.fmt_size(n)))])


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def split_rows(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """(ladder rows, sweep rows). Rows carry part = "ladder" / "sweep"; older JSON has none, and lists the ladder
    first: every variant once, so the first repeated variant name starts the sweep."""
    lad, sw, seen, in_ladder = [], [], set(), True
    for r in rows:
        if "part" in r:
            (lad if r["part"] == "ladder" else sw).append(r)
            continue
        in_ladder = in_ladder and r["variant"] not in seen
        seen.add(r["variant"])
        (lad if in_ladder else sw).append(r)
    return lad, sw


# what each bar colour of the ladder means (report.IMPL_COLORS), in the legend under the axes
LADDER_LEGEND = {"cuda": "CUDA C (ours: the ladder's rungs)", "triton": "Triton (ours)",
                 "peer": "library peer (cupy, torch)"}


def plot_ladder(rows: list[dict], ceiling: float, path: str, gpu: str = "GPU") -> str:
    """Every rung's GB/s as a bar, coloured by what wrote it (a legend under the axes says which colour is which),
    the measured HBM ceiling dashed."""
    impls = dict.fromkeys(r["impl"] for r in rows)
    return report.plot_bars(path, [r["variant"] for r in rows], [r["gbps"] for r in rows],
                            ylabel="GB/s (4 n bytes read)",
                            title=tr("Sum of {n:,} fp32 on {gpu}: the ladder", n=rows[0]["shape"][0], gpu=gpu),
                            colors=[report.IMPL_COLORS[r["impl"]] for r in rows],
                            hlines={tr("measured HBM ceiling {gbps:.0f} GB/s", gbps=ceiling): ceiling},
                            legend={LADDER_LEGEND.get(i, i): report.IMPL_COLORS[i] for i in impls})


def plot_sweep(rows: list[dict], ceiling: float, path: str, gpu: str = "GPU", l2_bytes: int | None = None) -> str:
    ns = sorted({r["shape"][0] for r in rows})
    names = list(dict.fromkeys(r["variant"] for r in rows))
    series = {name: [next((r["gbps"] for r in rows if r["variant"] == name and r["shape"][0] == n), None)
                     for n in ns] for name in names}
    return report.plot_lines(path, ns, series, xlabel="n (fp32 elements; 4 n bytes read)", ylabel="GB/s",
                             title=tr("Sum: bandwidth vs size on {gpu} (L2 flushed)", gpu=gpu),
                             hlines={tr("measured HBM ceiling {gbps:.0f} GB/s", gbps=ceiling): ceiling},
                             vlines={f"4 n = L2 ({l2_bytes / 2**20:.0f} MiB)": l2_bytes / 4} if l2_bytes else None)


def plot(data: dict, out_dir: str) -> list[str]:
    ceiling, gpu = data["ceiling"]["hbm_gbps"], data.get("gpu", "GPU")
    lad, sw = split_rows(data["rows"])
    paths = []
    if lad:
        paths.append(plot_ladder(lad, ceiling, os.path.join(out_dir, f"{L.LAB}.png"), gpu))
    if sw:
        paths.append(plot_sweep(sw, ceiling, os.path.join(out_dir, f"{L.LAB}_sizes.png"), gpu,
                                data.get("device", {}).get("l2_bytes")))
    return paths
