"""Lab 2.3's measuring side: what each kernel exchanges through (SASS, every machine), the per-warp sums alone (from HBM
and L2-resident) against their pass model, the full scans against cupy.cumsum / torch.cumsum, and the plot (redrawn
from the JSON by --replot)."""
from __future__ import annotations

import os

from common import bench, cli, cuda, device, lab, plan, report
from common.i18n import tr

from . import lab as L

CPU_NOTE = "\nCUDA C kernels were compiled, not run (no GPU); the Triton sums and scan ran in the interpreter."


def add_arguments(p) -> None:
    cli.add_size(p, tr("n of the benchmark (default 2^28, quick 2^24)"))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the predictions for this GPU, what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("predictions for {gpu} (its SMs, clock and bandwidth)", gpu=gpu.label()))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's predictions for `gpu`: how many SM clocks HBM takes to deliver one 32-element segment to an SM,
    against the 11 shared-memory passes and 5 shuffles a segment costs; the loads in flight per SM; the scan's bytes."""
    n, _ = plan.fit(L.MAIN_N, L.bench_bytes, gpu)
    hbm = gpu.hbm_gbps
    clocks = 128 / (hbm * 1e9 / gpu.sms / (gpu.sm_clock_mhz * 1e6))
    smem = L.PASSES["reduce smem"]
    segs = L.shuffle_config()["SEGS"]
    threads = L.resident_threads(gpu)
    return {
        tr("SM clocks HBM takes to deliver one 128-byte segment to an SM"): f"{clocks:.1f}",
        tr("warp sums through shared memory ({passes} passes per segment)", passes=smem):
            tr("{frac:.0%} of the HBM ceiling at best", frac=min(1.0, clocks / smem))
            + (tr(": shared memory is the bound") if clocks < smem else tr(": HBM is the bound")),
        tr("warp sums with shuffles ({passes} per segment)", passes=L.PASSES["reduce shfl"]):
            tr("{frac:.0%} of the HBM ceiling at best", frac=min(1.0, clocks / L.PASSES["reduce shfl"])),
        tr("loads in flight per SM ({threads} resident threads x {segs} x 4 B)", threads=threads, segs=segs):
            f"{threads * segs * 4 / 1024:.0f} KiB",
        tr("scan floor at n = {n} (our ~12.6 n B / {gbps:.0f} GB/s)", n=plan.fmt_size(n), gbps=hbm):
            f"{L.reduce_then_scan_bytes(n) / (hbm * 1e6):.3f} ms",
        tr("a one-pass scan's floor (8 n B)"): f"{8 * n / (hbm * 1e6):.3f} ms",
    }


def compile_report(args) -> None:
    cfg = L.shuffle_config().values
    rep = cuda.print_compile_report(L.CU, args.arch, defines=L.shuffle_defines(cfg) or None,
                                    excerpt_of="warp_reduce_02_shfl_down")
    if not any(k.sass for k in rep.kernels.values()):
        return
    rows = []
    for name, k in rep.kernels.items():
        c = k.sass_counts
        rows.append({"kernel": name, "SHFL": c.get("SHFL", 0), "LDS": sum(v for key, v in c.items()
                                                                          if key.startswith("LDS")),
                     "STS": sum(v for key, v in c.items() if key.startswith("STS")), "BAR (block barriers)":
                     c.get("BAR", 0), "per segment": tr("{n:.0f} shuffles", n=c.get("SHFL", 0) / cfg["SEGS"])
                     if c.get("SHFL") else "shared memory"})
    report.print_table(rows, title=tr("what each kernel exchanges with (SASS, {segs} segments per warp)",
                                      segs=cfg["SEGS"]))
    print(tr("-> no kernel has a block barrier (BAR): everything stays inside one warp. The shared-memory versions pay "
             "in LDS/STS and __syncwarp; the shuffle versions in SHFL only."))


# ---------------------------------------------------------------------------------------------------------------------
# GPU: timing
# ---------------------------------------------------------------------------------------------------------------------
def _pred_ms(n: int, nbytes: float, ceiling_gbps: float, passes_per_segment: int) -> tuple[float, str]:
    """max(HBM time, shared-memory / shuffle time at one pass per clock per SM)."""
    d = device.info()
    hbm = nbytes / (ceiling_gbps * 1e6)
    pipe = L.segment_count(n) / d.sms * passes_per_segment / (d.sm_clock_mhz * 1e3)
    return max(hbm, pipe), ("HBM" if hbm >= pipe else tr("{n} passes per segment", n=passes_per_segment))


def bench_reduce(n: int, ceiling_gbps: float, l2_warm: bool) -> list[dict]:
    """The three warp-sum kernels (and Triton's segment sum) alone."""
    import cupy

    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    sums = cupy.empty(L.segment_count(n), cupy.float32)
    nbytes = 4 * n + 4 * L.segment_count(n)
    where = "L2-resident (L2 not flushed)" if l2_warm else "HBM (L2 flushed)"
    cases = [("cuda 01 smem tree", "smem", L.PASSES["reduce smem"]),
             ("cuda 02 shfl_down", "down", L.PASSES["reduce shfl"]),
             ("cuda 03 shfl_xor", "xor", L.PASSES["reduce shfl"])]
    rows = []
    for name, kind, passes in cli.progress(cases, "reductions"):
        t = bench.bench(lambda k=kind: L.warp_sums(x, sums, kind=k), flush_l2=not l2_warm)
        p, why = _pred_ms(n, nbytes, ceiling_gbps, passes) if not l2_warm else \
            (None, tr("{n} passes per segment", n=passes))
        rows.append(report.row(L.LAB + "_reduce", name, "cuda", (n,), "float32", t, nbytes=nbytes, flops=31 * n / 32,
                               ceiling_gbps=ceiling_gbps, regime=where, pred_ms=p, pred_bound=why))
    t = bench.bench(lambda: L.triton_segment_sums(x, sums, n), flush_l2=not l2_warm)
    rows.append(report.row(L.LAB + "_reduce", "triton tl.sum", "triton", (n,), "float32", t, nbytes=nbytes,
                           flops=31 * n / 32, ceiling_gbps=ceiling_gbps, regime=where, pred_ms=None, pred_bound=""))
    return rows


def bench_scan(n: int, ceiling_gbps: float) -> list[dict]:
    """Full scans (our variants also produce the segment sums) against cupy.cumsum / torch.cumsum alone."""
    import cupy
    import torch

    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    sums = cupy.empty(L.segment_count(n), cupy.float32)
    y = cupy.empty(n, cupy.float32)
    must = 8 * n                                   # read x once, write y once
    ours = L.reduce_then_scan_bytes(n)             # ~12.6 n: x twice, y once, the sums, and the levels below
    fns = {v.name: (v.impl, (lambda f=v.fn: f(x, out=(sums, y)))) for v in L.VARIANTS}
    tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
    fns["cupy.cumsum (scan only)"] = ("peer", lambda: cupy.cumsum(x, out=y))
    fns["torch.cumsum (scan only)"] = ("peer", lambda: torch.cumsum(tx, 0, out=ty))
    rows = []
    for name, (impl, f) in fns.items():
        t = bench.bench(f)
        moved = must if impl == "peer" else ours
        rows.append(report.row(L.LAB + "_scan", name, impl, (n,), "float32", t, nbytes=must, flops=n,
                               ceiling_gbps=ceiling_gbps, bytes_moved_model=moved,
                               pred_ms=moved / (ceiling_gbps * 1e6)))
    peer = min(r["ms"] for r in rows if r["variant"].startswith("torch"))
    for r in rows:
        r["vs_torch_cumsum"] = peer / r["ms"]
    return rows


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    n, note = plan.fit(ctx.args.size or (2**24 if ctx.quick else L.MAIN_N), L.bench_bytes, device.info())
    if note:
        print(tr(note))
    reduce_rows = bench_reduce(n, ceiling["hbm_gbps"], l2_warm=False)
    reduce_rows += bench_reduce(2**22, ceiling["hbm_gbps"], l2_warm=True)
    scan_rows = bench_scan(n, ceiling["hbm_gbps"])
    return lab.Result(
        rows=reduce_rows + scan_rows, meta=dict(ceiling=ceiling, device=device.info().as_dict()),
        tables=[([dict(r, regime=tr(r["regime"])) for r in reduce_rows],
                 ["variant", "regime", "shape", "ms", "pred_ms", "pred_bound", "gbps", "frac_ceiling", "spread"],
                 "per-warp sums alone (GB/s counts 4 n + n / 8 bytes)"),
                (scan_rows, ["variant", "impl", "ms", "pred_ms", "gbps", "frac_ceiling", "vs_torch_cumsum", "spread"],
                 tr("inclusive scan of n = {n:,} fp32 (GB/s counts the 8 n bytes that must move; our variants also "
                    "write the segment sums and move ~12.6 n)", n=n))])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    rows = [r for r in data["rows"] if r["lab"] in (L.LAB + "_reduce", L.LAB + "_scan")]
    if not rows:
        return []
    labels = [f"{r['variant']} [" + (tr("sums, {where}", where=tr(r["regime"].split(" ")[0])) if "regime" in r
                                     else tr("scan")) + "]" for r in rows]
    return [report.plot_bars(os.path.join(out_dir, f"{L.LAB}.png"), labels, [r["gbps"] for r in rows],
                             ylabel="GB/s (bytes that must move / time)",
                             title=tr("Warp sums and scans, fp32, on {gpu}", gpu=data.get("gpu", "GPU")),
                             colors=[report.IMPL_COLORS.get(r["impl"], "tab:gray") for r in rows],
                             hlines={tr("HBM ceiling {gbps:.0f}", gbps=rows[0]["ceiling_gbps"]):
                                     rows[0]["ceiling_gbps"]})]
