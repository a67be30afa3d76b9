"""Lab 2.1's measuring side: the sector and bank models (every machine), the probes' own check, the transposes against
a copy of the same bytes, transpose_04's alternative parameters, the strided copy against the sector model, what the
compiler made of each kernel, and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report, target
from common.i18n import in_english, tr

from . import lab as L

CPU_NOTE = ("\nCUDA C kernels were compiled, not run (no GPU); the Triton transpose ran in the interpreter. The sector "
            "and bank models printed first are what the GPU run measures.")
COPY_PEER = "device copy (the lab's HBM ceiling)"   # the faster of copy_tiled and cupy.copyto, same rounds
# the kernel behind each timed row, for the driver's resident-blocks figure
OCCUPANCY_OF = {"cuda 02 smem tiled": "transpose_02_smem_tiled", "cuda 03 padded": "transpose_03_padded",
                "cuda 04 padded ilp": "transpose_04_padded_ilp", "cuda 01 naive": "transpose_01_naive",
                "copy_tiled (probe)": "copy_tiled"}


def add_arguments(p) -> None:
    cli.add_size(p, tr("side of the square matrix benchmarked (default {side}, quick 4096)", side=L.MAIN_SIDE))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the models, and what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    """The sector model of each kernel's accesses, the bank passes of a tile, the strided copy's predicted cost."""
    report.print_table(L.access_table(), title="sectors per warp request (32 B each; 4 is ideal for 32 floats)")
    print(tr("shared-memory passes per 32 x 32 tile (32 row stores + 32 column loads): pitch 32 -> {p32}, "
             "pitch 33 -> {p33}", p32=L.smem_passes_per_tile(32), p33=L.smem_passes_per_tile(33)))
    rows = []
    for s in (1, 2, 3, 4, 6, 8, 16, 32):
        p = L.strided_prediction(s, 0)
        rows.append({"stride": s, "sectors/request": p["sectors_per_request"], "bytes requested/elem": 8,
                     "bytes moved/elem": p["moved_B"], "useful fraction": 8 / p["moved_B"]})
    report.print_table(rows, title="copy_strided: predicted cost per element (useful fraction = 8 / moved)")
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("predictions for {gpu} (its SMs, clock and bandwidth)", gpu=gpu.label()))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's predictions for `gpu`: the copy floor, whether 02's 1056 shared-memory passes per tile outlast
    the DRAM time (that depends on the GPU's bandwidth per SM clock), and the bytes of loads in flight per SM that
    Little's law asks for against what 03 and 04 offer."""
    side, n, _ = L.fit_sizes(gpu)
    hbm = gpu.hbm_gbps
    floor = 8 * side * side / (hbm * 1e6)
    tiles_per_sm = math.ceil(side / L.TILE) ** 2 / gpu.sms
    smem02 = tiles_per_sm * L.smem_passes_per_tile(L.TILE) / (gpu.sm_clock_mhz * 1e3)
    need = hbm / 2 * 1e9 * L.LATENCY_US * 1e-6 / gpu.sms
    t04 = L.t04_config().values
    per_thread04 = 4 * (t04["BIG_TILE"] // 32) * (t04["BIG_TILE"] // t04["ROWS"])
    b03 = L.resident("transpose_03_padded", gpu, 32 * L.ROWS)
    b04 = L.resident("transpose_04_padded_ilp", gpu, 32 * t04["ROWS"], L.t04_defines(t04))
    offer03 = b03 * 32 * L.ROWS * 4 * (L.TILE // L.ROWS)
    offer04 = b04 * 32 * t04["ROWS"] * per_thread04
    return {
        tr("copy floor at {side}^2 (8 M N B / {gbps:.0f} GB/s)", side=side, gbps=hbm): f"{floor:.3f} ms",
        tr("32 x 32 tiles per SM"): f"{tiles_per_sm:,.0f}",
        tr("cuda 02: 1056 shared-memory passes per tile, one per clock"):
            (tr("{ms:.3f} ms, {x:.2f}x the floor: shared memory is the bound", ms=smem02, x=smem02 / floor)
             if smem02 > floor else
             tr("{ms:.3f} ms, {x:.2f}x the floor: under the DRAM time", ms=smem02, x=smem02 / floor)),
        tr("loads in flight per SM Little's law asks (half of {gbps:.0f} GB/s x {us} us)", gbps=hbm,
           us=L.LATENCY_US): f"{need / 1024:.1f} KiB",
        tr("cuda 03 offers (blocks/SM x 256 threads x 16 B)"): tr("{blocks} blocks: {kib:.0f} KiB", blocks=b03,
                                                                   kib=offer03 / 1024),
        tr("cuda 04 offers (blocks/SM x {threads} threads x {bytes} B)", threads=32 * t04["ROWS"],
           bytes=per_thread04): tr("{blocks} blocks: {kib:.0f} KiB", blocks=b04, kib=offer04 / 1024),
        tr("strided copy from stride 8 on (8 / 36 of the bandwidth)"): f"{hbm * 8 / 36:.0f} GB/s",
    }


def compile_report(args) -> None:
    rep = cuda.print_compile_report(L.CU, args.arch, excerpt_of="transpose_03_padded")
    k2, k3, k4 = (rep.kernels.get(n) for n in ("transpose_02_smem_tiled", "transpose_03_padded",
                                                "transpose_04_padded_ilp"))
    if k2 and k3:
        print(tr("-> 02 and 03 differ only in the tile's pitch: shared memory {b2} vs {b3} bytes, the same "
                 "instructions; the difference is in which banks the addresses fall.", b2=k2.smem_bytes,
                 b3=k3.smem_bytes))
    if k4 and k4.sass:
        print(tr("-> 04 issues {n} loads per thread before its first shared store ({regs} registers: capped at 64 by "
                 "__launch_bounds__(256, 4), {spills} bytes spilled).", n=k4.sass_counts.get("LDG.32", 0),
                 regs=k4.registers, spills=k4.spills))


# ---------------------------------------------------------------------------------------------------------------------
# GPU: the probes' own check
# ---------------------------------------------------------------------------------------------------------------------
def check_probes() -> tuple[list[dict], bool]:
    """copy_tiled and copy_strided against NumPy (they are not transposes, so the generic check does not cover them)."""
    rows, ok_all = [], True
    rng = check.rng(101)
    x = arrays.from_numpy(rng.standard_normal(100_003), "float32", "cuda")
    xn = arrays.to_numpy(x).astype(np.float64)
    for s in (1, 2, 3, 8, 33, 100_003):
        c = check.compare(L.strided_copy(x, s, out=check.poisoned(((100_003 - 1) // s + 1,), "float32", x)),
                          xn[::s], "float32")
        ok_all &= c.ok
        rows.append({"variant": f"probe copy_strided s={s}", "impl": "cuda", "cases": 1, "result": c.message})
    for shape in ((33, 31), (2_100_000, 3)):
        (a,) = L.make_inputs(shape, "float32", rng, "cuda")
        c = check.compare(L.copy_tiled(a, out=check.poisoned(shape, "float32", a)), arrays.to_numpy(a), "float32")
        ok_all &= c.ok
        rows.append({"variant": f"probe copy_tiled {shape[0]}x{shape[1]}", "impl": "cuda", "cases": 1,
                     "result": c.message})
    return rows, ok_all


def extra_checks(args) -> bool:
    if not device.has_gpu():
        return True
    rows, ok = check_probes()
    report.print_table(rows, ["variant", "impl", "cases", "result"], title="the probes (copy_strided, copy_tiled)")
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# GPU: timing
# ---------------------------------------------------------------------------------------------------------------------
def _free_pool() -> None:
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()


def _occupancy(kernel_name: str, threads: int) -> int:
    """Resident blocks per SM for a kernel, as the driver computes it (registers and shared memory included)."""
    from cupy_backends.cuda.api import driver

    k = cuda.get_kernel(L.CU, kernel_name)
    return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, threads, 0))


def predictions(m: int, n: int, ceiling_gbps: float, sms: int, clock_mhz: float) -> dict:
    """Predicted ms per kernel from first principles: HBM time, and shared-memory passes where they exceed it."""
    hbm_ms = 8 * m * n / (ceiling_gbps * 1e6)
    tiles_per_sm = math.ceil(m / L.TILE) * math.ceil(n / L.TILE) / sms

    def smem_ms(pitch):
        return tiles_per_sm * L.smem_passes_per_tile(pitch) / (clock_mhz * 1e3)

    return {
        "copy_tiled (probe)": (hbm_ms, "HBM"),
        "cupy.copyto (flat copy)": (hbm_ms, "HBM"),
        "cuda 01 naive": (None, tr("32 sectors per store: L2 transactions")),
        "cuda 02 smem tiled": (max(hbm_ms, smem_ms(L.TILE)), tr("smem: {n} passes per tile",
                                                                n=L.smem_passes_per_tile(L.TILE))),
        "cuda 03 padded": (max(hbm_ms, smem_ms(L.TILE + 1)), tr("HBM (smem: 64 passes per tile)")),
        "cuda 04 padded ilp": (hbm_ms, "HBM"),
        "triton": (hbm_ms, "HBM"),
        "cupy copyto(a.T)": (None, tr("strided reads: 32 sectors per load")),
        "torch copy_(a.t())": (None, tr("library")),
    }


def bench_main(side: int, ceiling: dict, tune: bool = True) -> tuple[list[dict], list[dict], list[dict]]:
    """Every transpose, peer and copy at side x side; the target head-to-head in interleaved rounds; then (tune)
    transpose_04's alternative parameters against its default, also interleaved."""
    import cupy

    m = n = side
    a = cupy.random.standard_normal((m, n), dtype=cupy.float32)   # generated on the GPU: 2^28 values in no time
    out = cupy.empty((n, m), cupy.float32)
    same = cupy.empty((m, n), cupy.float32)
    nbytes = 8 * m * n
    hbm = ceiling["hbm_gbps"]
    d = device.info()
    pred = in_english(predictions, m, n, hbm, d.sms, d.sm_clock_mhz)
    fns = {"copy_tiled (probe)": ("cuda", lambda: L.copy_tiled(a, same)),
           "cupy.copyto (flat copy)": ("peer", lambda: cupy.copyto(same, a))}
    for v in L.VARIANTS + L.PEERS:
        fns[v.name] = (v.impl, (lambda f=v.fn: f(a, out=out)))
    rows = []
    for name in cli.progress(list(fns), tr("transpose {m}x{n}", m=m, n=n)):
        impl, f = fns[name]
        t = bench.bench(f)
        p_ms, p_why = pred.get(name, (None, ""))
        rows.append(report.row(L.LAB, name, impl, (m, n), "float32", t, nbytes=nbytes, flops=0, ceiling_gbps=hbm,
                               pred_ms=p_ms, pred_bound=p_why))
    copy_best = max(r["gbps"] for r in rows if r["variant"] in ("copy_tiled (probe)", "cupy.copyto (flat copy)"))
    for r in rows:
        r["vs_copy"] = r["gbps"] / copy_best
    # the target, measured head to head in steady rounds so that drift cannot favour one side
    ts, tries, steady = bench.steady({"copy_tiled (probe)": fns["copy_tiled (probe)"][1],
                                      "cupy.copyto (flat copy)": fns["cupy.copyto (flat copy)"][1],
                                      "cuda 03 padded": fns["cuda 03 padded"][1],
                                      "cuda 04 padded ilp": fns["cuda 04 padded ilp"][1]}, rounds=5)
    copy_gbps = max(ts["copy_tiled (probe)"].gbps(nbytes), ts["cupy.copyto (flat copy)"].gbps(nbytes))
    targets = []
    for name in ("cuda 03 padded", "cuda 04 padded ilp"):
        g = ts[name].gbps(nbytes)
        targets.append(target.versus(f"{m}x{n}", name, COPY_PEER, g / copy_gbps, steady=steady,
                                     at_least=L.TARGET,
                                     detail={"GB/s": g, "copy GB/s (best of 2)": copy_gbps, "spread": ts[name].spread,
                                             "rounds_run": tries}))
    # the lab's target: met when either padded kernel meets it
    targets.append(dataclasses.replace(max(targets, key=lambda t: t.ratio),
                                       ours="best padded transpose (the lab's target)"))
    tuned = []
    if tune:
        used = L.t04_config()
        alt = {"cupy.copyto (flat copy)": fns["cupy.copyto (flat copy)"][1],
               f"04 {L.config_name(used.values)} ({used.source()})": fns["cuda 04 padded ilp"][1]}
        for cfg in L.T04_ALTERNATIVES:
            alt[f"04 {L.config_name(cfg)}"] = (lambda c=cfg: L.transpose_cuda_04(a, out, config=c))
        timed = bench.interleaved(alt, rounds=3)
        L.transpose_cuda_04(a, out)                        # the default's result, to check every alternative against
        agree = {}
        for cfg in L.T04_ALTERNATIVES:
            other = cupy.full((n, m), cupy.nan, cupy.float32)
            agree[f"04 {L.config_name(cfg)}"] = bool(cupy.array_equal(L.transpose_cuda_04(a, other, config=cfg), out))
            del other
        for name, t in timed.items():
            tuned.append({"config": name, "ms": t.median_ms, "GB/s": t.gbps(nbytes),
                          "vs copy": t.gbps(nbytes) / copy_gbps, "spread": t.spread,
                          "same output as default": agree.get(name, "-")})
    return rows, targets, tuned


def bench_strided(n: int, strides, ceiling_gbps: float) -> list[dict]:
    """copy_strided at each stride: sectors per request, bytes requested vs moved, predicted vs measured GB/s."""
    import cupy

    x = cupy.random.random((n - 1) * max(strides) + 1, dtype=cupy.float32)
    out = cupy.empty(n, cupy.float32)
    rows = []
    for s in cli.progress(strides, "strided copy"):
        xs = x[: (n - 1) * s + 1]
        t = bench.bench(lambda: L.strided_copy(xs, s, out=out), rep_ms=30)
        p = L.strided_prediction(s, ceiling_gbps)
        useful = t.gbps(8 * n)
        rows.append(report.row(L.LAB + "_strided", f"stride {s}", "cuda", (n,), "float32", t, nbytes=8 * n,
                               ceiling_gbps=ceiling_gbps, stride=s, sectors_per_request=p["sectors_per_request"],
                               bytes_requested=8 * n, bytes_moved_pred=p["moved_B"] * n, pred_gbps=p["pred_gbps"],
                               moved_gbps=t.gbps(p["moved_B"] * n), measured_vs_pred=useful / p["pred_gbps"]))
    return rows


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    side, strided_n, notes = L.fit_sizes(device.info(), ctx.args.size or (4096 if ctx.quick else L.MAIN_SIDE),
                                         2**22 if ctx.quick else L.STRIDED_N)
    for note in notes:
        print(tr(note))
    rows, targets, tuned = bench_main(side, ceiling, tune=not ctx.quick)
    _free_pool()
    for r in rows:
        if r["variant"] in OCCUPANCY_OF:
            r["blocks_per_sm"] = _occupancy(OCCUPANCY_OF[r["variant"]], 32 * L.ROWS)
    strides = [1, 2, 4, 8, 16, 32] if ctx.quick else [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 32]
    strided = bench_strided(strided_n, strides, ceiling["hbm_gbps"])
    d = device.info()
    said = predictions(side, side, ceiling["hbm_gbps"], d.sms, d.sm_clock_mhz)
    tables = [(strided, ["variant", "sectors_per_request", "ms", "gbps", "pred_gbps", "measured_vs_pred", "moved_gbps"],
               "strided copy: useful GB/s (8 B per element) vs the sector model"),
              ([dict(r, pred_bound=said.get(r["variant"], (None, r["pred_bound"]))[1]) for r in rows],
               ["variant", "impl", "ms", "gbps", "vs_copy", "frac_ceiling", "pred_ms", "pred_bound", "blocks_per_sm",
                "spread"],
               tr("transpose {side}x{side} fp32: {gib:.2f} GiB moved, measured HBM ceiling {gbps:.0f} GB/s", side=side,
                  gib=8 * side * side / 2**30, gbps=ceiling["hbm_gbps"]))]
    if tuned:
        tables.append((tuned, None, "transpose_04's compile-time parameters vs the flat copy (interleaved rounds); "
                                    "the lab's default is T04 in lab.py"))
    tables.append((target.said(targets, translate=("ours",)), None,
                   tr("target: padded transpose >= {frac:.0%} of the copy bandwidth (interleaved rounds, same run)",
                      frac=L.TARGET)))
    return lab.Result(rows=rows + strided, tables=tables,
                      meta=dict(ceiling=ceiling, targets=target.records(targets), t04_alternatives=tuned,
                                device=device.info().as_dict()))


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    gpu = data.get("gpu", "GPU")
    rows = [r for r in data["rows"] if r["lab"] == L.LAB]
    strided = [r for r in data["rows"] if r["lab"] == L.LAB + "_strided"]
    copies = [r["gbps"] for r in rows if r["variant"] in ("copy_tiled (probe)", "cupy.copyto (flat copy)")]
    recorded = [t.detail["copy GB/s (best of 2)"] for t in target.recorded(data) if "copy GB/s (best of 2)" in t.detail]
    copy_gbps = recorded[-1] if recorded else max(copies)
    paths = []
    if rows:
        paths.append(report.plot_bars(
            os.path.join(out_dir, f"{L.LAB}.png"), [r["variant"] for r in rows], [r["gbps"] for r in rows],
            ylabel="GB/s (8 M N bytes / time)",
            title=tr("Transpose {m}x{n} fp32 on {gpu}", m=rows[0]["shape"][0], n=rows[0]["shape"][1], gpu=gpu),
            colors=[report.IMPL_COLORS.get(r["impl"], "tab:gray") for r in rows],
            hlines={tr("best copy {gbps:.0f}", gbps=copy_gbps): copy_gbps,
                    tr("{frac:.0%} of copy", frac=L.TARGET): L.TARGET * copy_gbps}))
    if strided:
        xs = [r["stride"] for r in strided]
        paths.append(report.plot_lines(
            os.path.join(out_dir, f"{L.LAB}_strided.png"), xs,
            {tr("measured useful GB/s (8 B per element)"): [r["gbps"] for r in strided],
             tr("predicted: ceiling x 8 / (4 + sectors)"): [r["pred_gbps"] for r in strided],
             tr("measured moved GB/s (sector model)"): [r["moved_gbps"] for r in strided]},
            xlabel="stride (floats)", ylabel="GB/s", logx=False,
            title=tr("Strided copy out[i] = in[i*s] on {gpu}: sectors per request decide", gpu=gpu),
            hlines={tr("HBM ceiling {gbps:.0f}", gbps=data["ceiling"]["hbm_gbps"]): data["ceiling"]["hbm_gbps"]},
            xticks=xs))
    return paths
