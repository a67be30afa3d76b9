"""Lab 4.5's measuring side, the hooks the runner calls: the predictions for a GPU and the tables shown before the
checks, the softmax / layernorm error table when nothing is benchmarked, what NVRTC made of the WMMA kernel, the
benchmark and the plots. The work is done beside it, one job a module: formats.py (the tables computed on the CPU),
norm_errors.py (the softmax / layernorm error table), gemm_precision.py (the GEMMs in each precision on the GPU) and
plots.py (the plots, redrawn from the JSON by --replot)."""
from __future__ import annotations

import os

from common import cuda, device, lab, plan, report, table
from common.i18n import tr

from . import lab as L
from .formats import (LOSS_SCALES as LOSS_SCALES, cpu_tables, format_table as format_table,
                      fp16_sequential_sum as fp16_sequential_sum, gradient_sample as gradient_sample,
                      loss_scaling_story, loss_scaling_table as loss_scaling_table, overflow_table as overflow_table)
from .gemm_precision import K_SWEEP, accumulator_overflow_gpu, fp8_available, gemm_table, k_sweep
from .norm_errors import norm_ops_table as norm_ops_table, norm_shape, show_norm_ops
from .plots import plot as plot

CPU_NOTE = ("\nRan on the CPU: the tables above, the Triton kernels in the interpreter (tl.dot with an fp16 "
            "accumulator, the naive 16-bit softmax/layernorm, phase 3's kernels). The WMMA kernel was only compiled. "
            "GEMM precisions, fp8 and timings need a GPU.")


def show_compile_report(arch: str) -> list[dict]:
    rows = []
    for acc, d in (("fp32", 0), ("fp16", 1)):
        try:
            rep = cuda.compile_report(L.CU, arch, defines={"ACC_HALF": d})
        except (cuda.ToolMissing, cuda.CompileError) as e:
            print(tr("compile report skipped: {error}", error=e))
            return rows
        k = rep[L.WMMA_KERNEL]
        hmma = sorted({ln.split()[0] for ln in k.sass if ln.split() and ln.split()[0].startswith("HMMA")})
        rows.append({"build": f"ACC_HALF={d} ({acc} accumulator)", "arch": arch, "regs": k.registers,
                     "smem B": k.smem_bytes, "spills B": k.spills, "HMMA": k.sass_counts.get("HMMA", 0),
                     "HMMA opcode": " ".join(hmma) or "(no cuobjdump)"})
    builds = (("fp32", 0), ("fp16", 1))
    table.print_kernel_table([dict(r, build=tr("ACC_HALF={d} ({acc} accumulator)", d=d, acc=acc))
                              for r, (acc, d) in zip(rows, builds)],
                             title=tr("{file} compiled with NVRTC for {arch}: the one define changes the accumulator "
                                      "(HMMA .F32 vs .F16) and halves the accumulator staging",
                                      file=os.path.basename(L.CU), arch=arch),
                             used_by=[plan.build_users(__package__, arch, L.WMMA_KERNEL, {"ACC_HALF": d})
                                      for _, d in builds])
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Predictions from the GPU's description
# ---------------------------------------------------------------------------------------------------------------------
PRECISION_PEAKS = (("fp32 (TF32 off)", "fp32_tflops"), ("tf32", "tf32_tflops"), ("bf16", "bf16_tflops"),
                   ("fp16", "fp16_tflops"), ("fp8 e4m3", "fp8_tflops"))


def predict(gpu: device.DeviceInfo) -> dict:
    """The GEMM table's predictions for `gpu`: its n (fitted to the GPU's memory), the arithmetic intensity against
    the bf16 (else fp16) and fp32 ridge points, and each precision's floor time and rate relative to 16-bit, from the
    datasheet peaks (a precision the GPU has no unit for says so)."""
    n, _ = plan.fit(L.GEMM_N, L.bench_bytes, gpu)
    flops = 2.0 * n ** 3
    ai16 = flops / (3 * n * n * 2)             # compulsory bytes in 16-bit: A and B read, C written
    out = {"GEMM": tr("{n}^3: {gflop:.1f} GFLOP, {ai:.0f} FLOP/B with 16-bit inputs", n=n, gflop=flops / 1e9,
                      ai=ai16)}
    bw = gpu.hbm_gbps
    ref = gpu.peak("bf16_tflops") or gpu.peak("fp16_tflops")
    for name, key in (("bf16 (else fp16) tensor cores", "bf16_tflops" if gpu.peak("bf16_tflops") else "fp16_tflops"),
                      ("fp32 CUDA cores", "fp32_tflops")):
        if gpu.peak(key):
            out[tr("ridge point, {unit}", unit=tr(name))] = tr(
                "{ridge:.0f} FLOP/B: compute-bound by {times:.0f}x", ridge=gpu.peak(key) * 1e3 / bw,
                times=ai16 / (gpu.peak(key) * 1e3 / bw))
    for name, key in PRECISION_PEAKS:
        pk = gpu.peak(key)
        if not pk:
            out[tr("{name} floor", name=name)] = tr("no such unit on this GPU (skipped, or run by emulation)")
            continue
        rel = tr(", {times:.2g}x the 16-bit rate", times=pk / ref) if ref and key not in ("bf16_tflops",
                                                                                        "fp16_tflops") else ""
        out[tr("{name} floor", name=name)] = tr("{ms:.3f} ms at {tflops:g} TFLOP/s{rel}",
                                                ms=flops / (pk * 1e12) * 1e3, tflops=pk, rel=rel)
    ok8, why8 = fp8_available(gpu)
    if not ok8:
        out[tr("fp8 rows")] = tr("skipped: {why}", why=why8)
    return out


def explain(args) -> None:
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("GEMM {n}^3 per precision on {gpu}: datasheet peaks (leads, not measurements)",
                                n=L.GEMM_N, gpu=gpu.label()))
    t = cpu_tables(args.quick, said=True)
    report.print_table(t["formats"], title="Formats (torch.finfo): range and precision")
    report.print_table(t["overflow"], ["case", "dtype", "computed", "exact", "rel err", "why"],
                       title="Overflow, rounding and underflow, computed on the CPU (torch / NumPy)")
    report.print_table(t["loss_scaling"], ["dtype", "scale", "flushed to 0", "subnormal", "overflow (inf)",
                                           "median rel err (finite, nonzero)", "n"],
                       title="Loss scaling: a log-normal gradient population cast to fp16 after scaling by s")
    print("  -> " + loss_scaling_story(t["loss_scaling"]))


def extra_checks(args) -> bool:
    """The softmax / layernorm error table, here when nothing is benchmarked (the benchmark makes it otherwise)."""
    if not args.bench:
        show_norm_ops(norm_shape(args.quick))
    return True


_COMPILE_ROWS: list[dict] = []      # this run's compile report, for the JSON


def compile_report(args) -> None:
    _COMPILE_ROWS[:] = show_compile_report(args.arch)


def benchmark(ctx) -> lab.Result:
    quick = ctx.quick
    norm = show_norm_ops(norm_shape(quick))
    n, note = plan.fit(2048 if quick else L.GEMM_N, L.bench_bytes, device.info(), what="the GEMM table's n")
    if note:
        print(tr(note))
    gemm, why8 = gemm_table(n, rep_ms=20.0 if quick else 40.0)
    if why8:
        print(tr("fp8 skipped: {why}", why=why8))
    fp16_row = next(r for r in gemm if r["precision"] == "fp16")
    for r in gemm:
        r["vs cuBLAS fp16"] = r["tflops"] / fp16_row["tflops"] if r["tflops"] and fp16_row["tflops"] else None
    sweep = k_sweep(K_SWEEP[:2] if quick else K_SWEEP)
    ovf_gpu = accumulator_overflow_gpu()
    rows = [report.row(L.LAB, r["precision"], "peer" if not r["precision"].startswith("our") else "ours",
                       [r["n"]] * 3, r["precision"], None, ms=r["ms"], tflops=r["tflops"], rel_err=r["rel err"],
                       max_err_rms=r["max err / rms(ref)"], spread=r["spread"], note=r["note"]) for r in gemm]
    meta = dict(k_sweep=sweep, accumulator_overflow=ovf_gpu, norm_ops=norm, **cpu_tables(quick), fp8_skipped=why8,
                compile_report=_COMPILE_ROWS, device=device.info().as_dict())
    return lab.Result(rows=rows, meta=meta, tables=[
        ([dict(r, note=tr(r["note"])) for r in gemm],
         ["precision", "n", "rel err", "max err / rms(ref)", "ms", "tflops", "vs cuBLAS fp16", "spread", "note"],
         tr("GEMM {n}^3 per precision: error against the float64 product of the fp32 inputs, speed", n=n)),
        (sweep, None, tr("GEMM error vs K (M = N = 1024); model fp16 acc = 0.41 u sqrt(K), one rounding per product "
                         "(the hardware rounds less often)")),
        ([dict(r, case=tr(r["case"])) for r in ovf_gpu], None, tr("Accumulator overflow on the GPU (K = 4096)"))])
