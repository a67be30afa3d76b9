"""Lab 2.5's measuring side: what ptxas made of every setting (registers, stack, spills, and the occupancy that follows,
from common.occupancy; every machine), then on a GPU each setting timed with the driver's occupancy and the warps a
probe in the kernel saw resident, and the plot (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

from common import bench, cli, cuda, device, lab, plan, report, table
from common.i18n import tr
from common.occupancy import occupancy

from . import lab as L

CPU_NOTE = ("\nCUDA C kernels were compiled, not run (no GPU): the registers, spills and occupancy above are what the "
            "GPU run times; the Triton kernel ran in the interpreter.")


def add_arguments(p) -> None:
    cli.add_size(p, tr("elements of the timed matrix (default 2^26, quick 2^22); cols = size / WORK"))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: resources and occupancy of each setting
# ---------------------------------------------------------------------------------------------------------------------
def _resident(arch: str, regs: int) -> tuple[int, str]:
    occ = occupancy(arch, L.THREADS, regs)
    return occ.blocks_per_sm, ", ".join(tr(x) for x in occ.limiters) or occ.why_zero


def compile_row(s: L.Setting, arch: str) -> dict:
    """What ptxas made of one setting (NVRTC, no GPU needed) and the occupancy that follows from it."""
    k = cuda.compile_report(L.CU, arch, options=s.options, defines=s.defines)[s.kernel]
    c = k.sass_counts
    blocks, why = _resident(arch, k.registers)
    a = device.arch_info(arch)
    return {"setting": s.name, "work": s.capacity, "regs": k.registers, "stack": k.stack_bytes,
            "spill_st": k.spill_stores, "spill_ld": k.spill_loads, "ldl/stl": f"{c.get('LDL', 0)}/{c.get('STL', 0)}",
            "blocks/SM": blocks, "occupancy": blocks * L.THREADS / a.max_threads_per_sm, "limited by": why,
            "max loads in flight/SM (B)": blocks * L.THREADS * 4 * s.capacity}


def caps_summary(rows: list[dict]) -> list[str]:
    """One line per cap setting, against the uncapped kernel at the same work (CPU compile rows or GPU rows)."""
    def get(r, *keys):
        return next((r[k] for k in keys if k in r), None)

    by = {get(r, "setting", "variant"): r for r in rows}
    lines = []
    base = by.get("01 WORK=32")
    for name, r in by.items():
        occ = get(r, "occupancy", "occupancy_theory")
        spill = tr("{n} B spilled", n=r["spill_st"]) if r["spill_st"] else tr("no spill")
        if "maxrregcount" in name and base:
            lines.append(tr("-> {name}: {before} -> {after} registers, occupancy {occ0:.0%} -> {occ:.0%}, {spill}",
                            name=name, before=base["regs"], after=r["regs"],
                            occ0=get(base, "occupancy", "occupancy_theory"), occ=occ, spill=spill))
        elif name.startswith("02 "):
            lines.append(tr("-> {name}: {regs} registers, occupancy {occ:.0%}, {spill}", name=name, regs=r["regs"],
                            occ=occ, spill=spill))
        elif name.startswith("03 "):
            lines.append(tr("-> {name}: {b} B of local memory per thread, {spill}: the array lives in local memory "
                            "because it is indexed at run time", name=name, b=get(r, "stack", "local_bytes"),
                            spill=spill))
    return lines


def registers_rise_and_spills_appear(rows: list[dict]) -> tuple[bool, bool]:
    """From the WORK sweep rows: do registers never fall as WORK grows, and do spills appear at the largest WORK only
    after a spill-free start?"""
    sweep = sorted((r for r in rows if r["setting"].startswith("01 WORK=") and "maxrreg" not in r["setting"]),
                   key=lambda r: r["work"])
    regs = [r["regs"] for r in sweep]
    spills = [r["spill_st"] + r["spill_ld"] for r in sweep]
    return (all(a <= b for a, b in zip(regs, regs[1:])) and regs[-1] > regs[0],
            spills[0] == 0 and spills[-1] > 0)


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's predictions for `gpu`: the floor, and for each setting checked as a variant what ptxas makes of it
    for the GPU's architecture (registers, spills), the occupancy that follows and the loads in flight per SM against
    what Little's law asks at an assumed 0.7 us."""
    n, _ = plan.fit(L.MAIN_ELEMENTS, L.bench_bytes, gpu)
    need = gpu.hbm_gbps / 2 * 1e9 * 0.7e-6 / gpu.sms
    out = {tr("floor at {n} elements (8 B each / {gbps:.0f} GB/s)", n=plan.fmt_size(n), gbps=gpu.hbm_gbps):
               f"{8 * n / (gpu.hbm_gbps * 1e6):.3f} ms",
           tr("loads in flight per SM Little's law asks (half the bandwidth x 0.7 us)"): f"{need / 1024:.1f} KiB"}
    for name, s in L.VARIANT_SETTINGS:
        r = compile_row(s, gpu.arch)
        spill = tr("{n} B spilled", n=r["spill_st"]) if r["spill_st"] else tr("no spill")
        out[name] = tr("{regs} registers, {spill}, {blocks} blocks/SM ({occ:.0%}, {limit}), {kib:.0f} KiB in flight "
                       "per SM", regs=r["regs"], spill=spill, blocks=r["blocks/SM"], occ=r["occupancy"],
                       limit=r["limited by"], kib=r["max loads in flight/SM (B)"] / 1024)
    return out


def setting_users(sets: list[L.Setting], arch: str) -> list[list[str]]:
    """The correctness-table variants that launch each setting (the lab's plan for `arch`): [] for a study point."""
    return [plan.build_users(__package__, arch, s.kernel, s.defines, options=s.options) for s in sets]


def compile_report(args) -> None:
    sets = L.settings(args.quick, variants=True)
    rows = [compile_row(s, args.arch) for s in cli.progress(sets, tr("compiling for {arch}", arch=args.arch))]
    table.print_kernel_table(rows, title=tr("{file} compiled with NVRTC {version} for {arch}: one row per setting "
                                            "({threads} threads per block)", file=os.path.basename(L.CU),
                                            version=cuda.nvrtc_version(), arch=args.arch, threads=L.THREADS),
                             used_by=setting_users(sets, args.arch),
                             study=tr("study point: no variant launches this setting"))
    rise, spill = registers_rise_and_spills_appear(rows)
    print(tr("-> as WORK grows, registers {rise} and spills {appear} (values from the compile report above).",
             rise=tr("rise") if rise else tr("DO NOT rise"), appear=tr("appear") if spill else tr("DO NOT appear")))
    for line in caps_summary(rows):
        print(line)


# ---------------------------------------------------------------------------------------------------------------------
# GPU: time and measured residency
# ---------------------------------------------------------------------------------------------------------------------
def measure(s: L.Setting, x_flat, y_flat, ceiling_gbps: float, arch: str) -> dict:
    """One setting on a (WORK x n / WORK) view of the same n random values."""
    import cupy
    from cupy_backends.cuda.api import driver

    rows = s.capacity
    cols = max(1, x_flat.size // rows)
    x = x_flat[: rows * cols].reshape(rows, cols)
    y = y_flat[: rows * cols].reshape(rows, cols)
    k = cuda.get_kernel(L.CU, s.kernel, options=s.options, defines=s.defines)
    regs, local = int(k.num_regs), int(k.local_size_bytes)
    spills = (0, 0)
    if local:                                                 # only then can there be spills: ask ptxas
        rep = cuda.compile_report(L.CU, arch, options=s.options, defines=s.defines)[s.kernel]
        spills = (rep.spill_stores, rep.spill_loads)
    per_sm = int(driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, L.THREADS, 0))
    probe = cupy.zeros(2 * L.PROBE_SLOTS, cupy.int32)
    L.colnorm(x, y, setting=s, probe=probe)
    peak = probe[L.PROBE_SLOTS:].get()
    used = peak[peak > 0]
    t = bench.bench(lambda: L.colnorm(x, y, setting=s))
    nbytes = 8 * rows * cols
    d = device.info()
    row = report.row(L.LAB, s.name, "cuda", (rows, cols), "float32", t, nbytes=nbytes, flops=3 * rows * cols,
                     ceiling_gbps=ceiling_gbps, work=rows, regs=regs, local_bytes=local, spill_st=spills[0],
                     spill_ld=spills[1], blocks_per_sm_driver=per_sm,
                     occupancy_theory=per_sm * L.THREADS / d.max_threads_per_sm,
                     peak_warps_per_sm=int(used.max()) if used.size else 0,
                     mean_peak_warps_per_sm=float(used.mean()) if used.size else 0.0,
                     occupancy_measured=float(used.mean()) / (d.max_threads_per_sm // 32) if used.size else 0.0)
    return row


def benchmark(ctx) -> lab.Result:
    import cupy

    ceiling = ctx.ceiling()
    n, note = plan.fit(ctx.args.size or (2**22 if ctx.quick else L.MAIN_ELEMENTS), L.bench_bytes, device.info())
    if note:
        print(tr(note))
    arch = device.current_arch()
    x_flat = cupy.random.standard_normal(n, dtype=cupy.float32)
    y_flat = cupy.empty_like(x_flat)
    rows = [measure(s, x_flat, y_flat, ceiling["hbm_gbps"], arch)
            for s in cli.progress(L.settings(ctx.quick), "settings")]
    best = max(r["gbps"] for r in rows)
    for r in rows:
        r["vs_best"] = r["gbps"] / best
    caps = [{"cap": line[3:]} for line in caps_summary(rows)]
    return lab.Result(
        rows=rows, meta=dict(ceiling=ceiling, device=device.info().as_dict()),
        tables=[(rows, ["variant", "work", "regs", "local_bytes", "spill_st", "spill_ld", "blocks_per_sm_driver",
                        "occupancy_theory", "occupancy_measured", "ms", "gbps", "frac_ceiling", "vs_best", "spread"],
                 tr("column normalize, {n:,} fp32 elements per setting (rows = WORK): registers, spills, occupancy "
                    "(driver / measured by the probe), time; ceiling {gbps:.0f} GB/s", n=n, gbps=ceiling["hbm_gbps"])),
                (caps, None, "the caps, against colnorm_01 at the same work")])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    rows = [r for r in data["rows"] if r["lab"] == L.LAB]
    sweep = [r for r in rows if r["variant"].startswith("01 WORK=") and "maxrreg" not in r["variant"]]
    if not sweep:
        return []
    path = os.path.join(out_dir, f"{L.LAB}.png")
    plt = report.pyplot()
    xs = [r["work"] for r in sweep]
    fig, ax1 = plt.subplots(figsize=(9, 5))
    ax1.plot(xs, [r["gbps"] for r in sweep], "o-", label=tr("GB/s (left)"))
    ax1.axhline(rows[0]["ceiling_gbps"], ls="--", color="gray", lw=1)
    ax1.set_ylim(0, 1.1 * max([rows[0]["ceiling_gbps"]] + [r["gbps"] for r in sweep]))
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel(tr("WORK (values per thread, compile-time)"))
    ax1.set_ylabel("GB/s")
    ax2 = ax1.twinx()
    ax2.plot(xs, [r["regs"] for r in sweep], "s--", color="tab:red", label=tr("registers (right)"))
    ax2.plot(xs, [100 * r["occupancy_measured"] for r in sweep], "^:", color="tab:green",
             label=tr("measured occupancy % (right)"))
    ax2.set_ylabel(tr("registers / occupancy %"))
    for r in sweep:
        if r["spill_st"]:
            ax1.annotate(tr("spills: {n} B stored", n=r["spill_st"]), xy=(r["work"], r["gbps"]), fontsize=8,
                         rotation=90,
                         xytext=(-4, -70), textcoords="offset points")
    lines = ax1.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax1.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=8, loc="lower left")
    ax1.set_title(tr("Column normalize, 2^{log} fp32, on {gpu}",
                     log=int(math.log2(sweep[0]["shape"][0] * sweep[0]["shape"][1])), gpu=data.get("gpu", "GPU")),
                  fontsize=10)
    return [report.save(fig, path)]
