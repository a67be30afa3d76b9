"""Lab 2.2's measuring side: the bank model's predictions (every machine), the sweep kernels' own check, the stride
sweep against the predicted passes, the row sums against HBM, what the compiler made of each kernel, and the plots
(redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, plan, report
from common.i18n import tr

from . import lab as L

CPU_NOTE = ("\nCUDA C kernels were compiled, not run (no GPU); the Triton row sum ran in the interpreter. The pass "
            "counts printed first are the predictions the GPU run measures.")


def add_arguments(p) -> None:
    cli.add_size(p, tr("rows of the row-sum benchmark (default 2^23 = {rows}, quick 2^20)", rows=L.MAIN_ROWS))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the model, and what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    """The simulator's passes per warp load by lane stride, and per tile of each row-sum layout."""
    rows = [{"stride": s, "gcd(s,32)": math.gcd(s, 32) if s else 1, "passes (simulated)": L.stride_passes(s),
             "banks used": len({lane * s % 32 for lane in range(32)})} for s in (0, 1, 2, 3, 4, 8, 16, 31, 32, 33)]
    rows.append({"stride": tr("32, xor swizzle"), "gcd(s,32)": "-", "passes (simulated)": L.swizzle_passes(),
                 "banks used": 32})
    report.print_table(rows, title="lane i reads word i * stride: predicted passes per warp load (1 = conflict-free)")
    report.print_table([{"row-sum tile layout": tr(k), "passes per 32x32 tile (32 stores + 32 loads)": L.tile_passes(k)}
                        for k in ("conflicted", "padded", "swizzled")],
                       title="row sums: shared-memory passes per tile")
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("predictions for {gpu} (its SMs, clock and bandwidth)", gpu=gpu.label()))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's predictions for `gpu`: what HBM delivers to an SM per clock against the ~3.9 B per clock the
    conflicted tile walk sustains, the row sums' times, and the sweep's wave."""
    rows, _ = plan.fit(L.MAIN_ROWS, L.bench_bytes, gpu)
    hbm = gpu.hbm_gbps
    per_clock = hbm * 1e9 / gpu.sms / (gpu.sm_clock_mhz * 1e6)
    conflicted = 4096 / L.tile_passes("conflicted")
    floor = L.bench_bytes(rows) / (hbm * 1e6)
    tiles_per_sm = math.ceil(rows / 32) / gpu.sms
    smem = {k: tiles_per_sm * L.tile_passes(k) / (gpu.sm_clock_mhz * 1e3) for k in ("conflicted", "padded")}
    blocks, per_sm = L.sweep_wave(gpu)
    return {
        tr("HBM bytes per clock per SM (bandwidth / SMs / clock)"): f"{per_clock:.1f} B",
        tr("the conflicted tile walk (4096 B per 1056 passes)"): tr("{b:.1f} B per clock per SM", b=conflicted),
        tr("row sums floor at {rows} rows (132 B a row / {gbps:.0f} GB/s)", rows=plan.fmt_size(rows), gbps=hbm):
            f"{floor:.3f} ms",
        tr("cuda 01 conflicted (1056 passes per tile)"): f"{max(floor, smem['conflicted']):.3f} ms, "
        + (tr("{x:.1f}x the floor: shared memory is the bound", x=smem["conflicted"] / floor)
           if smem["conflicted"] > floor else tr("the conflict hides under the DRAM time")),
        tr("cuda 02 / 03 (64 passes per tile)"): f"{max(floor, smem['padded']):.3f} ms",
        tr("stride sweep: one wave of both kernels"): tr("{blocks} blocks ({per_sm} per SM)", blocks=blocks,
                                                         per_sm=per_sm),
    }


def compile_report(args) -> None:
    rep = cuda.print_compile_report(L.CU, args.arch, excerpt_of="rowsum_01_conflicted")
    r1, r2, r3 = (rep.kernels.get(k) for k in ("rowsum_01_conflicted", "rowsum_02_padded", "rowsum_03_swizzled"))
    if r1 and r2 and r3 and r1.sass:
        c1, c2, c3 = r1.sass_counts, r2.sass_counts, r3.sass_counts
        print(tr("-> the three row-sum kernels issue the same shared-memory instructions (LDS {lds}, STS {sts}); only "
                 "the addresses differ, and with them the number of passes per instruction.",
                 lds=f"{c1.get('LDS.32', 0)}/{c2.get('LDS.32', 0)}/{c3.get('LDS.32', 0)}",
                 sts=f"{c1.get('STS.32', 0)}/{c2.get('STS.32', 0)}/{c3.get('STS.32', 0)}"))


# ---------------------------------------------------------------------------------------------------------------------
# GPU: the sweep kernels' own check
# ---------------------------------------------------------------------------------------------------------------------
def check_sweep() -> tuple[list[dict], bool]:
    """bank_01_stride / bank_02_xor_swizzle outputs against NumPy (exact: integer data)."""
    src = L.sweep_source(check.rng(202))
    src_np = arrays.to_numpy(src)
    rows, ok = [], True
    for label, fn, stride in [(f"stride {s}", lambda o, s=s: L.stride_read(src, s, 3, 2, o), s)
                              for s in (0, 1, 2, 7, 32, 33, L.MAX_STRIDE)] + \
                             [("xor swizzle", lambda o: L.swizzle_read(src, 3, 2, o), 32)]:
        out = check.poisoned((2 * L.SWEEP_THREADS,), "float32", src)
        got = arrays.to_numpy(fn(out)).astype(np.float64)
        want = L.sweep_reference(src_np, stride, 3, 2 * L.SWEEP_THREADS)
        good = bool(np.array_equal(got, want))
        ok &= good
        rows.append({"variant": f"probe bank sweep {label}", "impl": "cuda", "cases": 1,
                     "result": tr("ok (exact)") if good else tr("MISMATCH: {n} threads differ",
                                                               n=np.count_nonzero(got != want))})
    return rows, ok


def extra_checks(args) -> bool:
    if not device.has_gpu():
        return True
    rows, ok = check_sweep()
    report.print_table(rows, ["variant", "impl", "cases", "result"], title="the sweep kernels (exact sums)")
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# GPU: timing
# ---------------------------------------------------------------------------------------------------------------------
def bench_sweep(strides, reps: int) -> list[dict]:
    """Time bank_01_stride at every stride (and the swizzle); slowdown vs stride 1 against the predicted passes."""
    import cupy

    d = device.info()
    blocks, per_sm = L.sweep_wave(d)
    src = L.sweep_source(check.rng(203))
    out = cupy.empty(blocks * L.SWEEP_THREADS, cupy.float32)
    warp_loads = blocks * (L.SWEEP_THREADS // 32) * reps * L.READS
    cases = [(f"stride {s}", s, L.stride_passes(s), lambda s=s: L.stride_read(src, s, reps, blocks, out))
             for s in strides]
    cases.append(("xor swizzle (stride 32 walk)", 32, L.swizzle_passes(),
                  lambda: L.swizzle_read(src, reps, blocks, out)))
    rows = []
    for label, s, pred, fn in cli.progress(cases, "bank stride sweep"):
        t = bench.bench(fn, flush_l2=False, rep_ms=20, warmup_ms=5)
        rows.append(report.row(L.LAB + "_sweep", label, "cuda", (blocks, L.SWEEP_THREADS), "float32", t,
                               stride=s, passes_pred=pred,
                               smem_gbps=warp_loads * 128 / (t.median_ms * 1e6),
                               cycles_per_load=t.median_ms * 1e-3 * d.sm_clock_mhz * 1e6 / (warp_loads / d.sms),
                               blocks_per_sm=per_sm, reps=reps))
    base = next(r["ms"] for r in rows if r["variant"] == "stride 1")
    for r in rows:
        r["slowdown"] = r["ms"] / base
        r["measured_vs_pred"] = r["slowdown"] / r["passes_pred"]
    return rows


def bench_rowsums(rows_n: int, ceiling: dict) -> list[dict]:
    import cupy

    d = device.info()
    x = cupy.random.standard_normal((rows_n, 32), dtype=cupy.float32)
    out = cupy.empty(rows_n, cupy.float32)
    nbytes = 132 * rows_n
    hbm_ms = nbytes / (ceiling["hbm_gbps"] * 1e6)
    tiles_per_sm = math.ceil(rows_n / 32) / d.sms
    pred = {name: max(hbm_ms, tiles_per_sm * L.tile_passes(layout) / (d.sm_clock_mhz * 1e3))
            for name, layout in (("cuda 01 conflicted", "conflicted"), ("cuda 02 padded", "padded"),
                                 ("cuda 03 xor swizzle", "swizzled"))}
    rows = []
    for v in cli.progress(L.VARIANTS + L.PEERS, tr("row sums {rows}x32", rows=rows_n)):
        t = bench.bench(lambda f=v.fn: f(x, out=out))
        rows.append(report.row(L.LAB, v.name, v.impl, (rows_n, 32), "float32", t, nbytes=nbytes, flops=31 * rows_n,
                               ceiling_gbps=ceiling["hbm_gbps"], pred_ms=pred.get(v.name, hbm_ms)))
    best = min(r["ms"] for r in rows)
    for r in rows:
        r["vs_fastest"] = best / r["ms"]
    return rows


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    strides = [0, 1, 2, 3, 4, 8, 16, 31, 32, 33] if ctx.quick else list(range(0, 34))
    sweep = bench_sweep(strides, reps=L.SWEEP_REPS * (1 if ctx.quick else 4))
    rows, note = plan.fit(ctx.args.size or (2**20 if ctx.quick else L.MAIN_ROWS), L.bench_bytes, device.info(),
                          what="rows")
    if note:
        print(tr(note))
    rowsums = bench_rowsums(rows, ceiling)
    return lab.Result(
        rows=sweep + rowsums, meta=dict(ceiling=ceiling, device=device.info().as_dict()),
        tables=[(sweep, ["variant", "passes_pred", "ms", "slowdown", "measured_vs_pred", "cycles_per_load",
                         "smem_gbps", "spread"],
                 "stride sweep: measured slowdown vs predicted passes (cycles per load: estimated with the device's "
                 "maximum SM clock)"),
                (rowsums, ["variant", "impl", "ms", "pred_ms", "gbps", "frac_ceiling", "vs_fastest", "spread"],
                 tr("row sums {rows}x32 fp32 (132 B per row), measured HBM ceiling {gbps:.0f} GB/s",
                    rows=rowsums[0]["shape"][0], gbps=ceiling["hbm_gbps"]))])


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    gpu = data.get("gpu", "GPU")
    sweep = [r for r in data["rows"] if r["lab"] == L.LAB + "_sweep"]
    rowsums = [r for r in data["rows"] if r["lab"] == L.LAB]
    paths = []
    pts = [r for r in sweep if r["variant"].startswith("stride")]
    if pts:
        xs = [r["stride"] for r in pts]
        paths.append(report.plot_lines(
            os.path.join(out_dir, f"{L.LAB}_sweep.png"), xs,
            {tr("measured slowdown vs stride 1"): [r["slowdown"] for r in pts],
             tr("predicted: passes = gcd(stride, 32)"): [r["passes_pred"] for r in pts]},
            xlabel="lane stride (4-byte words); 33 = a 32-word row padded by one", ylabel="time / time at stride 1",
            title=tr("Shared-memory bank conflicts on {gpu}", gpu=gpu), logx=False, logy=True,
            xticks=xs[::2] + [xs[-1]],
            hlines={tr("xor swizzle of the stride-32 walk: {x:.2f}x", x=r["slowdown"]): r["slowdown"]
                    for r in sweep if r["variant"].startswith("xor")}))
    if rowsums:
        paths.append(report.plot_bars(
            os.path.join(out_dir, f"{L.LAB}.png"), [r["variant"] for r in rowsums], [r["gbps"] for r in rowsums],
            ylabel="GB/s (132 bytes per row / time)",
            title=tr("Row sums {rows}x32 fp32 on {gpu}", rows=rowsums[0]["shape"][0], gpu=gpu),
            colors=[report.IMPL_COLORS.get(r["impl"], "tab:gray") for r in rowsums],
            hlines={tr("HBM ceiling {gbps:.0f}", gbps=rowsums[0]["ceiling_gbps"]): rowsums[0]["ceiling_gbps"]}))
    return paths
