"""Lab 1.6's measuring side: the sector-count prediction (every machine), what the compiler made of the two kernels,
the naive kernels, Triton and cuBLAS timed at the target shapes with the prediction checked, and the plot (redrawn from
the JSON by --replot)."""
from __future__ import annotations

import argparse
import os

import numpy as np

from common import bench, check, cli, cuda, device, lab, report, target
from common.i18n import tr

from . import lab as L

CPU_NOTE = "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter."
SHAPES = L.BENCH_SHAPES
CUBLAS_FRACTION = 0.75          # of the FP32 peak: what a good SGEMM reaches (the lesson's prediction for cuBLAS)


def _parse_size(s: str):
    """--size: M,N,K (or MxNxK), or one number for a cube."""
    try:
        parts = [int(p) for p in s.replace("x", ",").split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(tr("expected M,N,K or one number, got {s!r}", s=s))
    return tuple(parts)


def add_arguments(p) -> None:
    p.add_argument("--size", type=_parse_size, default=None,
                   help=tr("M,N,K of the benchmark (default 4096,4096,4096 and 2999,3001,2027)"))


# ---------------------------------------------------------------------------------------------------------------------
# Every machine: the prediction, and what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def explain(args) -> None:
    main_shape = args.size or SHAPES[0]
    ratio, un, co = L.predicted_ratio(*main_shape)
    report.print_table([{"mapping": tr("mm_01 uncoalesced (lane -> row)"), "A sectors": un["A"], "B sectors": un["B"],
                         "total per k step": un["A"] + un["B"]},
                        {"mapping": tr("mm_02 coalesced (lane -> col)"), "A sectors": co["A"], "B sectors": co["B"],
                         "total per k step": co["A"] + co["B"]}],
                       title=tr("Sectors one warp's loads touch per k step, {shape} (from the addresses)",
                                shape="x".join(map(str, main_shape))))
    print(tr("prediction: mm_01 / mm_02 time = {ratio:.2f} (if the sectors moved through L1 are the limit)",
             ratio=ratio))
    if device.has_gpu():
        print(tr("cuBLAS peer: TF32 {state}", state=tr(L.tf32_state())))


def predict(gpu: device.DeviceInfo) -> dict:
    """What the lesson predicts for `gpu` from its description alone: the main case's arithmetic intensity against
    the ridge point, cuBLAS at ~3/4 of the FP32 peak, and the sector ratio of the two naive kernels (the same on any
    GPU: it is a property of the addresses)."""
    (m, n, k), _ = L.fit_shape(SHAPES[0], gpu)
    flops, nbytes = 2 * m * n * k, L.bench_bytes((m, n, k))
    ratio, un, co = L.predicted_ratio(m, n, k)
    out = {tr("{shape}: FLOPs, bytes", shape=f"{m}x{n}x{k}"):
               f"{flops / 1e9:.1f} GFLOP, {nbytes / 2**20:.0f} MiB: {flops / nbytes:.0f} FLOP/B",
           tr("sectors per k step, mm_01 / mm_02"): tr("{un:.0f} / {co:.0f}: mm_01 {ratio:.1f}x slower",
                                                      un=un["A"] + un["B"], co=co["A"] + co["B"], ratio=ratio)}
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (gpu.hbm_gbps * 1e9)
        out[tr("ridge point (FP32 peak / bandwidth)")] = \
            tr("{ridge:.1f} FLOP/B: the main case is {x:.0f}x above it, compute-bound", ridge=ridge,
               x=flops / nbytes / ridge)
        t = flops / (CUBLAS_FRACTION * fp32 * 1e12) * 1e3
        out[tr("cuBLAS at ~{frac:.0%} of {peak:g} TFLOP/s FP32", frac=CUBLAS_FRACTION, peak=fp32)] = f"~{t:.1f} ms"
    return out


def show_compile_report(arch: str) -> None:
    rep = cuda.print_compile_report(L.CU, arch, excerpt_of="mm_02_naive_coalesced")
    c1, c2 = (rep.kernels[k].sass_counts for k in ("mm_01_naive_uncoalesced", "mm_02_naive_coalesced"))
    if c1 and c2:
        print(tr("-> same instruction mix in both: LDG {ldg1} vs {ldg2}, FFMA {ffma1} vs {ffma2}. The difference is "
                 "only in the addresses the lanes of a warp produce.",
                 ldg1=sum(v for k, v in c1.items() if k.startswith("LDG")),
                 ldg2=sum(v for k, v in c2.items() if k.startswith("LDG")), ffma1=c1.get("FFMA", 0),
                 ffma2=c2.get("FFMA", 0)))


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def bench_shape(shape, slow_reps: int = 3) -> list[dict]:
    import cupy

    m, n, k = shape
    a, b = L.make_inputs(shape, "float32", check.rng(11), "cuda")
    out = cupy.empty((m, n), dtype=cupy.float32)
    flops = 2 * m * n * k
    nbytes = 4 * (m * k + k * n + m * n)
    rows = []
    times = {}
    for v in L.PEERS + L.VARIANTS:
        slow = v.fn is L.mm_cuda_01
        t = bench.bench(lambda: v.fn(a, b, out=out), min_reps=slow_reps if slow else 10,
                        warmup_ms=0 if slow else 25, rep_ms=50 if slow else 100)
        times[v.name] = t.median_ms
        ref_err = None
        if v.impl == "peer":
            # the peer's own error against float64, on a corner of the output (float64 on the host is slow)
            sub = (slice(0, min(m, 256)), slice(0, min(n, 256)))
            want = a.get()[sub[0]].astype(np.float64) @ b.get()[:, sub[1]].astype(np.float64)
            ref_err = check.compare(out[sub].get(), want, "float32", L.tolerance(shape, "float32")).rel_norm_err
        rows.append(report.row(L.LAB, v.name, v.impl, shape, "float32", t, nbytes=nbytes, flops=flops,
                               gflops=flops / (t.median_ms * 1e6), peer_rel_err=ref_err))
    peer = times[L.PEERS[0].name]
    for r in rows:
        r["frac_cublas"] = peer / r["ms"]
    a = b = out = None
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def benchmark(ctx) -> lab.Result:
    shapes = [(1024, 1024, 1024)] if ctx.quick else ([ctx.args.size] if ctx.args.size else SHAPES)
    fitted = []
    for s in shapes:
        s, note = L.fit_shape(s, device.info())
        if note:
            print(tr(note))
        fitted.append(s)
    shapes = fitted
    rows = []
    for s in cli.progress(shapes, "shapes"):
        rows += bench_shape(s)
    first = [r for r in rows if tuple(r["shape"]) == tuple(shapes[0])]
    t1 = next(r["ms"] for r in first if r["variant"].startswith("cuda 01"))
    t2 = next(r["ms"] for r in first if r["variant"].startswith("cuda 02"))
    ratio, un, co = L.predicted_ratio(*shapes[0])
    peer = next(r for r in first if r["impl"] == "peer")
    tol = L.tolerance(shapes[0], "float32").rel_norm
    # predictions (single timings and an error: no peer, no rounds)
    targets = [target.prediction("coalesced beats uncoalesced by the sector ratio (within 0.5x .. 2x)", t1 / t2,
                                 at_least=0.5 * ratio, at_most=2.0 * ratio,
                                 goal=f"{target.fmt(ratio)} (0.5x .. 2x)"),
               target.prediction("cuBLAS error is fp32-level (TF32 off)", peer["peer_rel_err"], at_most=tol,
                                 goal=f"<= {tol:.1e}")]
    said = target.said(targets, translate=("case",))
    return lab.Result(
        rows=rows,
        meta=dict(targets=target.records(targets), tf32=L.tf32_state(), sectors={"uncoalesced": un, "coalesced": co},
                  device=device.info().as_dict()),
        tables=[(rows, ["variant", "shape", "ms", "gflops", "frac_cublas", "peer_rel_err", "spread"],
                 "Naive matmul, fp32 (GFLOP/s and the fraction of cuBLAS; peer_rel_err: cuBLAS vs float64)"),
                (said, None, "Predictions vs measurement")])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    rows = data["rows"]
    labels = [f"{r['variant']}  [{'x'.join(map(str, r['shape']))}]" for r in rows]
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_bars(path, labels, [r["gflops"] for r in rows], ylabel="GFLOP/s (fp32)",
                             colors=[report.IMPL_COLORS[r["impl"]] for r in rows], annotate_fmt="{:,.0f}",
                             title=tr("Naive matmul vs cuBLAS on {gpu} (fp32, TF32 off)", gpu=data.get("gpu", "GPU")))]
