"""Lab 1.5's measuring side: the calculator explained (every machine), what the compiler made of the kernels and of
the register probe under -maxrregcount caps, the calculator against the driver (GPU; --record-fixture writes the
driver's answers for the CPU tests), bandwidth against forced occupancy with Little's law, and the plots (redrawn from
the JSON by --replot)."""
from __future__ import annotations

import datetime
import json
import os
import sys

from common import bench, cli, cuda, device, lab, occupancy, plan, report, target
from common.i18n import in_english, tr

from . import lab as L

CPU_NOTE = ("\nOn a GPU this lab also asks the driver for the same answers, and measures bandwidth from 1 warp/SM "
            "to full occupancy.\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the "
            "interpreter.")


def add_arguments(p) -> None:
    cli.add_size(p, tr("elements of the sweep (default {n}, quick 2^22; scaled down where the GPU's memory cannot "
                       "hold it)", n=plan.fmt_size(L.BENCH_N)))
    p.add_argument("--record-fixture", metavar="PATH", default=None,
                   help=tr("(GPU) record the driver's occupancy answers as JSON for tests/test_common_occupancy.py "
                           "and exit"))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the calculator explained
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    """--record-fixture does only that (exit 2 without a GPU); else the worked examples, the calculator on --arch, one
    case explained, and without a GPU the calculator's curves for --arch (not with --quick)."""
    if args.record_fixture:
        if not device.has_gpu():
            print(tr("--record-fixture needs a GPU ({why})", why=tr(device.no_gpu_reason())), file=sys.stderr)
            raise SystemExit(2)
        raise SystemExit(record_fixture(args.record_fixture))
    arch = args.arch
    report.print_table(L.worked_examples(), title="Worked examples from NVIDIA's documentation, recomputed")
    report.print_table(L.calculator_tables(arch), title=tr("The calculator on {arch}", arch=arch))
    print(occupancy.occupancy(arch, 256, 33).explain())
    if not device.has_gpu() and args.plot and not args.quick:
        out_dir = args.out or report.results_dir()
        os.makedirs(out_dir, exist_ok=True)
        print(tr("wrote {path}", path=plot_curves(arch, os.path.join(out_dir, f"{L.LAB}_calculator_{arch}.png"))))


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description alone: each kernel's natural occupancy (the calculator
    on its registers there), the sweep's points, and Little's law at a ~0.7 us round trip: the bandwidth of one warp
    per SM and the warps per SM the datasheet bandwidth needs."""
    n, _ = plan.fit(L.BENCH_N, L.bench_bytes, gpu)
    bw = gpu.hbm_gbps
    top = gpu.max_threads_per_sm // gpu.warp_size
    out = {tr("floor at n = {n} (8 n B / {bw:.0f} GB/s)", n=plan.fmt_size(n), bw=bw):
           f"{8 * n / (bw * 1e9) * 1e3:.3f} ms"}
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        res = L.resources(gpu, name)
        o = L.forced_config(None, res, gpu.arch)["occ"]
        per_warp = L.bytes_in_flight_per_warp(name)
        one = 2 * gpu.sms * per_warp / (L.LATENCY_NS * 1e-9) / 1e9      # reads in flight, writes alongside
        need = bw / one
        short = name.split("_scale")[0]
        out[tr("{kernel}: natural occupancy (256 threads, {regs} registers)", kernel=short, regs=o.regs_per_thread)] = \
            tr("{blocks} blocks/SM = {warps}/{top} warps ({limiter})", blocks=o.blocks_per_sm, warps=o.active_warps,
               top=top, limiter=tr(o.limiter))
        out[tr("{kernel}: the sweep's warps per SM", kernel=short)] = ", ".join(map(str, L.warp_points(gpu, res)))
        out[tr("{kernel}: {bytes} B in flight per warp, Little's law at 1 warp/SM", kernel=short, bytes=per_warp)] = \
            f"~{one:,.0f} GB/s"
        out[tr("{kernel}: warps/SM the datasheet bandwidth needs", kernel=short)] = \
            f"~{need:.1f}" + ("" if need <= top else
                              tr(": more than the SM's {top}, so it cannot saturate HBM", top=top))
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (bw * 1e9)
        out[tr("1/8 FLOP/B against the ridge point")] = tr("{ridge:.1f} FLOP/B: {x:.0f}x below it", ridge=ridge,
                                                           x=8 * ridge)
    return out


def show_compile_report(arch: str, quick: bool = False) -> None:
    rep = cuda.print_compile_report(L.CU, arch, defines=L.unroll_config().values,
                                    kernels=["occ_01_scale_scalar", "occ_02_scale_float4_ilp"],
                                    excerpt_of="occ_02_scale_float4_ilp")
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        k = rep.kernels[name]
        o = occupancy.occupancy(arch, L.FULL_THREADS, k.registers, k.smem_bytes)
        print(tr("-> {kernel}: {regs} registers, {threads}-thread blocks: {blocks} blocks/SM = {occ:.0%} occupancy "
                 "({limiter})", kernel=name, regs=k.registers, threads=L.FULL_THREADS, blocks=o.blocks_per_sm,
                 occ=o.occupancy, limiter=tr(o.limiter)))
    print(tr("Register counts of occ_probe_registers (NLIVE=240) under -maxrregcount caps, and what they allow:"))
    rows = []
    for cap in (32, 255) if quick else (32, 64, 128, 255):
        k = cuda.compile_report(L.CU, arch, options=(f"--maxrregcount={cap}",), defines={"NLIVE": 240})[
            "occ_probe_registers"]
        o = occupancy.occupancy(arch, L.FULL_THREADS, k.registers)
        rows.append({"maxrregcount": cap, "registers": k.registers, "spill bytes": k.spill_stores + k.spill_loads,
                     "blocks/SM at 256 threads": o.blocks_per_sm, "occupancy": f"{o.occupancy:.0%}"})
    report.print_table(rows)
    print(tr("   (fewer registers buy occupancy and cost spills: local-memory traffic the kernel did not have)"))


def compile_report(args) -> None:
    show_compile_report(args.arch, args.quick)


def extra_checks(args) -> bool:
    """On a GPU: the calculator against the driver on a small grid of cases (a mismatch is reported here and fails
    the run after the benchmark, as a missed target)."""
    if device.has_gpu():
        cases, bad = live_agreement(args.quick)
        print("\n" + tr("calculator vs driver on this GPU: {agree}/{n} cases agree", agree=len(cases) - len(bad),
                        n=len(cases)))
        for c in bad[:10]:
            print(tr("  MISMATCH {case}", case=c))
    return True


# ---------------------------------------------------------------------------------------------------------------------
# The benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def benchmark(ctx) -> lab.Result:
    cases, bad = live_agreement(ctx.quick)
    d = device.info()
    n = ctx.args.size or (2**22 if ctx.quick else L.BENCH_N)
    n, note = plan.fit(n, L.bench_bytes, d)
    if note:
        print(tr(note))
    rows = occupancy_sweep(n, ctx.quick)
    full = max(r["warps_per_sm"] for r in rows if r["variant"].startswith("cuda 02"))
    latency_ns, rows = littles_law(rows)

    def at(name, w):
        return next((r["gbps"] for r in rows if r["variant"].startswith(name) and r["warps_per_sm"] == w), None)

    def verdicts() -> list[target.Target]:
        """The predictions checked (counts and bandwidth ratios of single timings: no peer, no rounds)."""
        agree = sum(r["blocks_per_sm"] == r["driver_blocks_per_sm"] for r in rows)
        targets = [target.prediction(tr("calculator == driver for every live case"), len(cases) - len(bad),
                                     at_least=len(cases), at_most=len(cases)),
                   target.prediction(tr("forced blocks/SM == driver's blocks/SM at every sweep point"), agree,
                                     at_least=len(rows), at_most=len(rows))]
        s1, s16, f16, ffull = at("cuda 01", 1), at("cuda 01", 16), at("cuda 02", 16), at("cuda 02", full)
        if s1 and s16:
            targets.append(target.prediction(tr("scalar: 16 warps/SM carry ~16x the bandwidth of 1 (Little's law, "
                                                "below the ceiling)"), s16 / s1, at_least=10, goal="16 (>= 10)"))
        if f16 and ffull:
            targets.append(target.prediction(tr("float4 x4: >= 80% of its {full}-warp (full occupancy) bandwidth "
                                                "at 16 warps/SM", full=full), f16 / ffull, at_least=0.8))
        return targets

    targets = target.records(in_english(verdicts))
    return lab.Result(
        rows=rows, ok=not bad,
        meta=dict(targets=targets, latency_ns=latency_ns, live_cases=cases, live_mismatches=bad,
                  ceiling=ctx.ceiling(), device=device.info().as_dict()),
        tables=[(rows, ["variant", "warps_per_sm", "threads", "blocks_per_sm", "driver_blocks_per_sm", "dyn_smem", "ms",
                        "gbps", "predicted_gbps", "frac_ceiling"],
                 tr("Bandwidth vs resident warps per SM (latency fitted on the 1-warp point: {ns:.0f} ns)",
                    ns=latency_ns)),
                (target.said(verdicts()), None, "Predictions vs measurement")])


# ---------------------------------------------------------------------------------------------------------------------
# The driver's answers (GPU): live agreement, and the fixture for the CPU tests
# ---------------------------------------------------------------------------------------------------------------------
def _probe(cap: int | None, nlive: int, static: int):
    opts = (f"--maxrregcount={cap}",) if cap else ()
    return cuda.get_kernel(L.CU, "occ_probe_registers", options=opts, defines={"NLIVE": nlive, "STATIC_SMEM": static})


def driver_blocks(kernel, threads: int, dyn: int) -> tuple[int, int]:
    """(blocks/SM from the driver, the kernel's max dynamic shared memory attribute used).

    A launch the driver refuses outright (e.g. more threads than the kernel's register count allows in one block)
    counts as 0 blocks, which is what the calculator says of it.
    """
    from cupy.cuda import driver

    static = int(kernel.shared_size_bytes)
    default = device.info().smem_per_block - static
    attr = dyn if dyn > default else default
    kernel.max_dynamic_shared_size_bytes = attr
    try:
        return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dyn)), attr
    except driver.CUDADriverError as e:
        print(tr("  driver refused {threads} threads, {dyn} B dynamic shared memory: {error}", threads=threads, dyn=dyn,
                 error=e), file=sys.stderr)
        return 0, attr


def query_cases(caps, nlive: int, static: int, threads_list, dyn_list) -> list[dict]:
    d = device.info()
    cases = []
    for cap in caps:
        k = _probe(cap, nlive, static)
        regs, sstatic = int(k.num_regs), int(k.shared_size_bytes)
        for threads in threads_list:
            for dyn in dyn_list:
                if sstatic + dyn > d.smem_per_block_optin:
                    continue
                blocks, attr = driver_blocks(k, threads, dyn)
                cases.append({"threads": threads, "regs": regs, "smem_static": sstatic, "smem_dynamic": dyn,
                              "max_dynamic_smem": attr, "barriers": 1 if sstatic else 0, "blocks": blocks,
                              "maxrregcount": cap, "kernel_max_threads": int(k.max_threads_per_block)})
    return cases


def live_agreement(quick: bool) -> tuple[list[dict], list[dict]]:
    """Ask the driver about a small grid of cases and compare with the calculator."""
    caps = (32, 0) if quick else (24, 40, 0)
    threads_list = (64, 256, 1024) if quick else (32, 96, 128, 256, 640, 1024)
    dyn_list = (0, 30_000, 100_000) if quick else (0, 20_000, 49_152, 100_000, 200_000)
    cases = query_cases(caps, 64, 0, threads_list, dyn_list)
    arch = device.info().arch
    bad = [dict(c, calculator=occupancy.predict_case(arch, c)) for c in cases
           if occupancy.predict_case(arch, c) != c["blocks"]]
    return cases, bad


def device_props() -> dict:
    d = device.info()
    return {"max_threads_per_sm": d.max_threads_per_sm, "max_blocks_per_sm": d.max_blocks_per_sm,
            "regs_per_sm": d.regs_per_sm, "regs_per_block": d.regs_per_block, "smem_per_sm": d.smem_per_sm,
            "smem_per_block": d.smem_per_block, "smem_per_block_optin": d.smem_per_block_optin,
            "smem_reserved_per_block": d.smem_reserved_per_block, "max_threads_per_block": d.max_threads_per_block,
            "warp_size": d.warp_size}


def record_fixture(path: str) -> int:
    """Record the driver's answers for a grid of (block size, registers, static + dynamic shared memory) cases."""
    import cupy

    device.require_gpu("recording the occupancy fixture")
    d = device.info()
    print(tr("recording on {gpu} ({arch}): compiling occ_probe_registers with register caps ...", gpu=d.name,
             arch=d.arch), flush=True)
    threads_list = (32, 64, 96, 128, 256, 384, 640, 1024)
    dyn_list = (0, 1000, 8192, 20_000, 45_000, 60_000, 100_000, 200_000)
    cases = query_cases((24, 32, 40, 48, 64, 72, 96, 128, 168, 255), 240, 0, threads_list, dyn_list)
    cases += query_cases((32, 64, 128), 240, 16384, threads_list, dyn_list)
    doc = {"device": d.name, "arch": d.arch, "driver_cuda": d.driver_cuda, "runtime_cuda": d.runtime_cuda,
           "cupy": cupy.__version__, "nvrtc": cuda.nvrtc_version(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "method": "cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dynamic) "
                     "on occ_probe_registers (phase1_architecture/lab05_occupancy/kernels.cu, NLIVE=240) compiled with "
                     "--maxrregcount=<cap> and -DSTATIC_SMEM=<bytes>; max_dynamic_smem is the kernel attribute "
                     "cudaFuncAttributeMaxDynamicSharedMemorySize set before each query",
           "props": device_props(), "cases": cases}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    head = {k: v for k, v in doc.items() if k != "cases"}
    with open(path, "w") as f:            # the header indented, then one case per line (diff-friendly)
        text = json.dumps(head, indent=1)
        f.write(text[:-2] + ',\n "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in cases))
        f.write("\n ]\n}\n")
    bad, prop_bad = occupancy.compare_fixture(doc)
    regs = sorted({c["regs"] for c in cases})
    print(tr("wrote {path}: {n} cases, register counts {regs}", path=path, n=len(cases), regs=regs))
    print(tr("calculator vs driver: {agree}/{n} agree; ARCHS table vs device: {props}", agree=len(cases) - len(bad),
             n=len(cases), props=tr("agree") if not prop_bad else "; ".join(prop_bad)))
    for c in bad[:20]:
        print(tr("  MISMATCH {case}", case=c))
    return 0 if not bad and not prop_bad else 1


# ---------------------------------------------------------------------------------------------------------------------
# Bandwidth against occupancy
# ---------------------------------------------------------------------------------------------------------------------
def occupancy_sweep(n: int, quick: bool = False) -> list[dict]:
    """Both kernels at every point of their sweep (L.warp_points: up to the most warps each can have resident)."""
    import cupy

    d = device.info()
    ceiling = bench.ceilings()["hbm_gbps"]
    x = cupy.full(n, 1.25, dtype=cupy.float32)        # values do not change the speed; the checks ran already
    y = cupy.empty_like(x)
    rows = []
    u = L.unroll_config()["UNROLL"]
    kernels = (("cuda 01 scalar (128 B/warp in flight)", L.scale_cuda_01, "occ_01_scale_scalar"),
               (f"cuda 02 float4 x{u} ({u // 2} KiB/warp in flight)" if u >= 2 else "cuda 02 float4 x1 "
                "(512 B/warp in flight)", L.scale_cuda_02, "occ_02_scale_float4_ilp"))
    for name, fn, kname in kernels:
        per_warp = L.bytes_in_flight_per_warp(kname)
        k = L.kernel(kname)
        for w in cli.progress(L.warp_points(d, k, quick), name):
            cfg = L.forced_config(w, k, d.arch)
            drv, _ = driver_blocks(k, cfg["threads"], cfg["dyn"])
            t = bench.bench(lambda: fn(x, 1.5, out=y, warps_per_sm=w), rep_ms=40)
            rows.append(report.row(L.LAB, name, "cuda", (n,), "float32", t, nbytes=8 * n, flops=n,
                                   ceiling_gbps=ceiling, warps_per_sm=w, occupancy=w / (d.max_threads_per_sm // 32),
                                   threads=cfg["threads"], blocks_per_sm=cfg["blocks_per_sm"], dyn_smem=cfg["dyn"],
                                   driver_blocks_per_sm=drv, bytes_in_flight_per_sm=w * per_warp))
    x = y = None
    return rows


def littles_law(rows: list[dict]) -> tuple[float, list[dict]]:
    """Latency from the one-warp point of the scalar kernel, then the model's prediction for every other point."""
    d = device.info()
    one = next(r for r in rows if r["warps_per_sm"] == 1 and "scalar" in r["variant"])
    read_gbps = one["gbps"] / 2                       # half the counted bytes are reads, the ones in flight
    latency_ns = d.sms * one["bytes_in_flight_per_sm"] / read_gbps
    ceiling = max(r["gbps"] for r in rows)
    for r in rows:
        r["predicted_gbps"] = min(ceiling, 2 * d.sms * r["bytes_in_flight_per_sm"] / latency_ns)
    return latency_ns, rows


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def _driver_points(cases: list[dict], max_warps_per_sm: int) -> dict:
    """The driver's answers at 256 threads and no shared memory, as occupancy against registers (the first curve)."""
    by = [c for c in cases if c["smem_dynamic"] == 0 and c["threads"] == 256]
    if not by:
        return {}
    return {"registers (256 threads, no shared memory)": ([c["regs"] for c in by],
                                                          [c["blocks"] * 8 / max_warps_per_sm for c in by])}


def plot(data: dict, out_dir: str) -> list[str]:
    dev = data.get("device") or {}
    arch = dev.get("arch", "sm_90")
    gpu = data.get("gpu", dev.get("name", "GPU"))
    max_warps = dev.get("max_threads_per_sm", device.arch_info(arch).max_threads_per_sm) // 32
    return [plot_sweep(data["rows"], data["latency_ns"], os.path.join(out_dir, f"{L.LAB}.png"), gpu,
                       data.get("ceiling")),
            plot_curves(arch, os.path.join(out_dir, f"{L.LAB}_calculator_{arch}.png"),
                        _driver_points(data.get("live_cases") or [], max_warps))]


def plot_curves(arch: str, path: str, driver_points: dict | None = None) -> str:
    plt = report.pyplot()
    cs = L.curves(arch)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for ax, (title, (xs, ys)) in zip(axes, cs.items()):
        ax.step(xs, [100 * y for y in ys], where="post", lw=1.6, label=tr("calculator"))
        if driver_points and title in driver_points:
            px, py = driver_points[title]
            ax.plot(px, [100 * y for y in py], "o", ms=5, mfc="none", color="tab:red", label=tr("driver (this GPU)"))
        ax.set_xlabel(tr(title))
        ax.set_ylabel(tr("occupancy (% of max warps)"))
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(tr("Theoretical occupancy on {arch} ({family})", arch=arch, family=device.arch_info(arch).family),
                 fontsize=11)
    return report.save(fig, path)


def plot_sweep(rows: list[dict], latency_ns: float, path: str, gpu: str = "GPU",
               ceiling: dict | None = None) -> str:
    """Measured bandwidth (solid) and Little's law (dashed, same color) against resident warps per SM. `ceiling`
    defaults to the one each row was measured against (rows carry ceiling_gbps; no method known then)."""
    plt = report.pyplot()
    ceil = ceiling or {"hbm_gbps": max(r["ceiling_gbps"] for r in rows)}
    fig, ax = plt.subplots(figsize=(9, 5.2))
    for color, name in zip(("tab:blue", "tab:orange"), dict.fromkeys(r["variant"] for r in rows)):
        pts = sorted((r["warps_per_sm"], r["gbps"], r["predicted_gbps"]) for r in rows if r["variant"] == name)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, lw=1.8, ms=4, label=name)
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "--", color=color, lw=1.2,
                label=tr("Little's law: {name}", name=name.split(" (")[0]))
    ax.axhline(ceil["hbm_gbps"], ls=":", color="gray", lw=1)
    ax.annotate(tr("measured HBM ceiling {gbps:,.0f} GB/s", gbps=ceil["hbm_gbps"]), xy=(0.01, ceil["hbm_gbps"]),
                xycoords=("axes fraction", "data"), va="bottom", fontsize=8, color="dimgray")
    xs = sorted({r["warps_per_sm"] for r in rows})
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs], fontsize=8)
    ax.set_xlabel(tr("resident warps per SM (forced with dynamic shared memory)"))
    ax.set_ylabel(tr("GB/s (read + write)"))
    ax.set_title(tr("{gpu}: bandwidth vs occupancy, y = a x over {n:,} floats\n"
                    "dashed: Little's law, 2 x SMs x warps x bytes/warp in flight / {ns:.0f} ns (fitted on 1 warp/SM)",
                    gpu=gpu, n=rows[0]["shape"][0], ns=latency_ns), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return report.save(fig, path)
