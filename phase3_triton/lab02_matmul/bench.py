"""Lab 3.2's measuring side: the program-order model (tiles each order reads from DRAM), what the compiler made of
the kernel for each stage count and precision (ahead of time, no GPU needed), the targets against cuBLAS in
interleaved rounds, small sizes, fp32 and tf32, the autotuner's timings, the two orders measured, and the plot
(redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os
import re

import numpy as np

from common import arrays, bench, check, cli, device, lab, plan, report, table, target, tuned
from common.i18n import tr
from common.arrays import device_randn
from common.bench import runs
from common.triton_support import aot, load_summary, summarize

from . import lab as L
from .triton_kernels import matmul_kernel, matmul_tma_kernel

CPU_NOTE = ("\nThe kernel ran in the interpreter on small ragged shapes (tl.dot ignores input_precision there, and "
            "bf16 tiles are\nconverted to fp32 first: Triton 3.9's interpreter mishandles bf16 in tl.dot). Autotuning, "
            "cuBLAS and timing need a GPU.")
# The ordering model's rates are the GPU's datasheet figures (common.device: its memory bandwidth and dense bf16 rate,
# fp16 where it has no bf16 unit). The prediction needs only their ratio, within a factor of two: is the row-major
# traffic under the math time?


def model_rates(gpu: device.DeviceInfo) -> tuple[float, float, str]:
    """(GB/s, TFLOP/s, which unit) the ordering model divides by on `gpu`."""
    for unit in ("bf16", "fp16", "fp32"):
        tflops = gpu.peak(f"{unit}_tflops")
        if tflops:
            return gpu.hbm_gbps, float(tflops), unit
    return gpu.hbm_gbps, 1.0, "fp32"


# ---------------------------------------------------------------------------------------------------------------------
# Program order: a count of the tiles each order loads
# ---------------------------------------------------------------------------------------------------------------------
def program_coords(pid: int, grid_m: int, grid_n: int, group_m: int) -> tuple[int, int]:
    """The kernel's (pid_m, pid_n) for program `pid` (common.triton_support.grouped_tile), in Python: for the
    tile-load count and the tests."""
    per_group = group_m * grid_n
    first_m = (pid // per_group) * group_m
    rows_here = min(grid_m - first_m, group_m)
    return first_m + (pid % per_group) % rows_here, (pid % per_group) // rows_here


def tile_loads(m: int, n: int, k: int, bm: int, bn: int, bk: int, group_m: int, wave: int) -> dict:
    """Tiles read from DRAM under a simple model of L2.

    Model: the programs of one wave (as many as the GPU runs at once) walk K in step, so at each K-step every A tile
    and B tile that the wave needs is read from DRAM once and served from L2 to every other program of the wave that
    needs it; nothing survives from one wave to the next. A wave then costs (distinct A row-panels + distinct B
    column-panels) x K/BLOCK_K tile loads.
    """
    gm, gn, kt = math.ceil(m / bm), math.ceil(n / bn), math.ceil(k / bk)
    programs = gm * gn
    a_tiles = b_tiles = 0
    for start in range(0, programs, wave):
        rows, cols = set(), set()
        for pid in range(start, min(start + wave, programs)):
            pm, pn = program_coords(pid, gm, gn, group_m)
            rows.add(pm)
            cols.add(pn)
        a_tiles += len(rows) * kt
        b_tiles += len(cols) * kt
    return {"a_tiles": a_tiles, "b_tiles": b_tiles, "programs": programs, "waves": math.ceil(programs / wave),
            "no_reuse_tiles": 2 * programs * kt, "once_tiles": (gm + gn) * kt}


def ordering_table(m, n, k, bm=128, bn=256, bk=64, elt=2, wave=None, groups=(1, 4, 8, 16)) -> list[dict]:
    """The tile-load model of each program order; `wave` programs run at once (default: one per SM of the GPU every
    prediction uses here, common.device.current())."""
    wave = wave or device.current().sms
    rows = []
    a_tile, b_tile = bm * bk * elt, bk * bn * elt
    for g in groups:
        t = tile_loads(m, n, k, bm, bn, bk, g, wave)
        dram = t["a_tiles"] * a_tile + t["b_tiles"] * b_tile
        rows.append({"order": "row-major" if g == 1 else f"grouped, GROUP_M={g}", "A tiles": t["a_tiles"],
                     "B tiles": t["b_tiles"], "DRAM MiB (model)": dram / 2**20,
                     "x minimum": dram / ((m * k + k * n) * elt)})
    t = tile_loads(m, n, k, bm, bn, bk, 1, wave)
    rows.append({"order": tr("(no sharing at all: each program reads its own)"), "A tiles": t["no_reuse_tiles"] // 2,
                 "B tiles": t["no_reuse_tiles"] // 2,
                 "DRAM MiB (model)": t["no_reuse_tiles"] // 2 * (a_tile + b_tile) / 2**20,
                 "x minimum": t["no_reuse_tiles"] // 2 * (a_tile + b_tile) / ((m * k + k * n) * elt)})
    return rows


def ordering_prediction(table: list[dict], n: int, wave: int, gpu: device.DeviceInfo | None = None) -> str:
    """One sentence read off an ordering_table: what grouping should buy at this size, and why (rates of `gpu`,
    default the GPU every prediction uses here)."""
    gbps, tflops, unit = model_rates(gpu or device.current())
    rm = next(r for r in table if r["order"] == "row-major")
    g8 = next(r for r in table if r["order"] == "grouped, GROUP_M=8")
    change = g8["DRAM MiB (model)"] / rm["DRAM MiB (model)"] - 1
    grid_n = math.ceil(n / 256)
    bound_ms = rm["DRAM MiB (model)"] * 2**20 / (gbps * 1e9) * 1e3
    math_ms = 2.0 * n ** 3 / (tflops * 1e12) * 1e3
    under = bound_ms < math_ms
    why = (tr("a row-major wave of {wave} programs already spans every one of the {grid_n} B column-panels and "
              "reuses each of them ~{reuse:.0f}x, so there is little left to gain", wave=wave, grid_n=grid_n,
              reuse=wave / grid_n) if change > -0.1 else
           tr("a row-major wave needs all {grid_n} B column-panels, a GROUP_M=8 wave about half of them",
              grid_n=grid_n))
    said = dict(mib=rm['DRAM MiB (model)'], ms=bound_ms, tbps=gbps / 1000, math_ms=math_ms, tflops=tflops, unit=unit)
    return (tr("GROUP_M=8 changes the modelled DRAM traffic by {change:+.0%} at {n}^3 ({why}).", change=change, n=n,
               why=why) + " "
            + (tr("Even row-major traffic ({mib:.0f} MiB, ~{ms:.2f} ms at {tbps:.2f} TB/s) is under the math time "
                  "(~{math_ms:.2f} ms at {tflops:g} TFLOP/s, the datasheet's dense {unit}), so the measured difference "
                  "should be small, a few percent at most.", **said) if under else
               tr("The row-major traffic ({mib:.0f} MiB, ~{ms:.2f} ms at {tbps:.2f} TB/s) is over the math time "
                  "(~{math_ms:.2f} ms at {tflops:g} TFLOP/s, the datasheet's dense {unit}), so grouping should show in "
                  "the time here.", **said)))


def explain(args) -> None:
    """The lesson's predictions for the GPU at hand (or the one --gpu / --arch describes), and the tile-load model of
    both program orders with what it predicts (every machine)."""
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("What the lesson predicts for {gpu}", gpu=gpu.label()))
    wave = gpu.sms
    for n in ((4096,) if args.quick else (4096, 8192)):
        t = ordering_table(n, n, n, wave=wave)
        report.print_table(t, title=tr("Tiles each program order reads from DRAM, bf16 {n}^3, 128x256x64 tiles, "
                                       "waves of {wave} programs (model: a wave shares tiles through L2, waves share "
                                       "nothing)", n=n, wave=wave))
        print(f"  -> {ordering_prediction(t, n, wave, gpu)}")


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's models for `gpu`: the main case's arithmetic intensity against the ridge point, its math and
    memory floors at the datasheet rates, the waves of 128 x 256 tiles, what GROUP_M = 8 does to the modelled DRAM
    traffic, which autotuning configs fit the GPU's shared memory, and whether the TMA kernel runs."""
    gbps, tflops, unit = model_rates(gpu)
    n = L.TARGET_CASES[0][1]
    flops, nbytes = 2.0 * n ** 3, 3 * n * n * 2
    ridge = tflops * 1e12 / (gbps * 1e9)
    out = {tr("bf16 {n}^3: {ai:.0f} FLOP/B against the {unit} ridge point ({tflops:g} TFLOP/s over {gbps:.0f} GB/s)",
              n=n, ai=flops / nbytes, unit=unit, tflops=tflops, gbps=gbps):
           tr("{ridge:.0f} FLOP/B: compute-bound by {times:.1f}x", ridge=ridge, times=flops / nbytes / ridge),
           tr("bf16 {n}^3 floors: math at {tflops:g} TFLOP/s, {mb:.1f} MB once at {gbps:.0f} GB/s", n=n,
              tflops=tflops, mb=nbytes / 1e6, gbps=gbps):
           f"{flops / (tflops * 1e12) * 1e3:.3f} ms, {nbytes / (gbps * 1e9) * 1e3:.3f} ms"}
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        out[tr("fp32 'ieee' ridge point (CUDA cores)")] = f"{fp32 * 1e12 / (gbps * 1e9):.0f} FLOP/B"
    tiles = (n // 128) * (n // 256)
    out[tr("128 x 256 tiles at {n}^2 over {sms} SMs", n=n, sms=gpu.sms)] = \
        tr("{tiles} tiles = {waves:.2f} waves", tiles=tiles, waves=tiles / gpu.sms)
    big = L.TARGET_CASES[1][1]
    t = {r["order"]: r for r in ordering_table(big, big, big, wave=gpu.sms, groups=(1, 8))}
    change = t["grouped, GROUP_M=8"]["DRAM MiB (model)"] / t["row-major"]["DRAM MiB (model)"] - 1
    out[tr("GROUP_M=8 against row-major at {n}^3 (modelled DRAM traffic, waves of {sms})", n=big, sms=gpu.sms)] = \
        f"{change:+.0%}"
    for key, what in (("16", "fp16/bf16"), ("tf32", "tf32"), ("ieee", "fp32 ieee")):
        out[tr("autotuning space, {what}", what=what)] = L.autotune_source(key, gpu)
    why = L.tma_unavailable(gpu)
    out[tr("persistent TMA kernel")] = (tr("runs: {programs} programs at {n}^3 (one per SM)",
                                           programs=L.tma_programs(n, n, 128, 256, gpu.sms), n=n)
                                        if not why else tr("does not run: {why}", why=why))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report
# ---------------------------------------------------------------------------------------------------------------------
_TY = L._TY


def aot_matmul(cc: int, dtype: str = "bfloat16", precision: str = "tf32", cfg: dict | None = None):
    """The kernel as a GPU launch on contiguous, 16-divisible M, N, K would compile it (unit strides as constants)."""
    cfg = cfg or L.CONFIGS_16[0]
    sig, const = L.matmul_signature(dtype, precision, cfg)
    return aot(matmul_kernel, sig, const, cc=cc, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
               divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "M", "N", "K", "stride_am", "stride_bk", "stride_cm"))


def aot_tma(cc: int, dtype: str = "bfloat16", cfg: dict | None = None, programs: int | None = None):
    """The persistent TMA kernel as a launch with this config would compile it (tensor descriptors of its tiles), on
    `programs` programs (default: one per SM of the GPU every prediction uses for this architecture)."""
    cfg = dict(cfg or L.TMA_DEFAULT)
    sig, const = L.tma_signature(dtype, cfg, programs or device.current(f"sm_{cc}").sms)
    return aot(matmul_tma_kernel, sig, const, cc=cc, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])


def compile_cases(cc: int) -> list[tuple[str, str, str, dict]]:
    """The builds of the compile table for compute capability `cc`, (kernel, dtype, precision, config) each: the grid
    kernel's, then (sm_90+) the persistent TMA kernel's."""
    base = L.CONFIGS_16[0]
    cases = [("matmul_kernel", "bfloat16", "tf32", dict(base, num_stages=s)) for s in (1, 3, 4)]
    cases += [("matmul_kernel", "float32", "tf32", L.CONFIGS_TF32[0]),
              ("matmul_kernel", "float32", "ieee", L.CONFIGS_IEEE[0])]
    if cc >= L.TMA_MIN_CC * 10:
        cases += [("matmul_tma_kernel", "bfloat16", "tf32", cfg)
                  for cfg in (L.TMA_DEFAULT, dict(L.TMA_DEFAULT, num_stages=4, EPI_SPLIT=1))]
    return cases


def case_users(arch: str) -> list[list[str]]:
    """The correctness-table variants that launch each build of compile_table (the lab's plan for `arch`: the same
    signature, constexprs, warps and stages); [] for a build no variant launches (a study point)."""
    cc = device.arch_info(arch).cc
    out = []
    for kernel, dtype, prec, cfg in compile_cases(cc):
        sig, const = (L.tma_signature(dtype, cfg, device.current(f"sm_{cc}").sms) if kernel == "matmul_tma_kernel"
                      else L.matmul_signature(dtype, prec, cfg))
        out.append(plan.build_users(__package__, arch, kernel, const, signature=sig, num_warps=cfg["num_warps"],
                                    num_stages=cfg["num_stages"]))
    return out


def compile_table(cc: int, gpu: device.DeviceInfo | None = None) -> list[dict]:
    """What the compiler made of the kernel for compute capability `cc`, and whether each build's shared memory fits a
    block of `gpu` (default: the GPU every prediction uses for that architecture)."""
    limit = (gpu or device.current(f"sm_{cc}")).smem_per_block_optin
    rows = []
    for kernel, dtype, prec, cfg in compile_cases(cc):
        tma = kernel == "matmul_tma_kernel"
        s = summarize(aot_tma(cc, dtype, cfg) if tma else aot_matmul(cc, dtype, prec, cfg))
        c = s["sass"]
        label = ("bfloat16 TMA persistent" + (" split" if cfg["EPI_SPLIT"] else "") if tma
                 else dtype if dtype != "float32" else f"fp32 {prec}")
        rows.append({"dtype": label, "tile": f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']}",
                     "warps": s["num_warps"], "stages": cfg["num_stages"], "shared KiB": s["shared"] / 1024,
                     f"fits {limit // 1024} KiB": "yes" if s["shared"] <= limit else "no", "regs": s["regs"],
                     "local B": s["local"], "cp.async": s["cp_async"], "wgmma": s["wgmma"], "mma.sync": s["mma_sync"],
                     "SASS HGMMA/HMMA/FFMA": f"{c.get('HGMMA', 0)}/{c.get('HMMA', 0)}/{c.get('FFMA', 0)}",
                     "global loads": f"{c.get('UTMALDG', 0)} x UTMALDG (TMA tile copies)" if tma
                     else load_summary(s)})
    return rows


def show_compile_report(arch: str) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = compile_table(cc)
    table.print_kernel_table(_shown(rows), title=tr("matmul_kernel compiled ahead of time for {arch}: what num_stages, "
                                                    "the dtype and input_precision turn into", arch=arch),
                             used_by=case_users(arch), study=tr("study point: no variant launches this build"))
    base = L.CONFIGS_16[0]
    stage_bytes = (base["BLOCK_M"] + base["BLOCK_N"]) * base["BLOCK_K"] * 2
    print(tr("  one stage of A + B tiles = ({bm} + {bn}) x {bk} x 2 B = {kib} KiB: shared memory grows by that per "
             "stage; with 1 stage the loads go straight to registers (no cp.async ring). 'ieee' runs on FFMA (CUDA "
             "cores), 'tf32' on the tensor cores.", bm=base['BLOCK_M'], bn=base['BLOCK_N'], bk=base['BLOCK_K'],
             kib=stage_bytes // 1024))
    gpu = device.current(arch)
    print(tr("  A block of {gpu} may use {kib} KiB; its 16-bit autotuning: {source}.", gpu=gpu.name,
             kib=gpu.smem_per_block_optin // 1024, source=L.autotune_source('16', gpu)))
    return rows


def _shown(rows: list[dict]) -> list[dict]:
    """compile_table's rows as printed: the column 'fits N KiB' and its yes/no in the chosen language (the JSON keeps
    the English rows)."""
    out = []
    for r in rows:
        shown = {}
        for k, v in r.items():
            m = re.fullmatch(r"fits (\d+) KiB", k)
            if m:
                k, v = tr("fits {kib} KiB", kib=m.group(1)), tr(v)
            elif k == "global loads" and isinstance(v, str) and v.endswith(" x UTMALDG (TMA tile copies)"):
                v = tr("{n} x UTMALDG (TMA tile copies)", n=v.split(" ")[0])
            shown[k] = v
        out.append(shown)
    return out


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
TARGETS = L.TARGET_CASES
def _sgemm_lab():
    """Lab 2.8 (imported when the benchmark runs: it compiles nothing at import, but keeps this lab's import light)."""
    from phase2_cuda.lab08_sgemm import lab as sgemm_lab

    return sgemm_lab


PHASE2_SGEMM = "cuda 11"       # the name prefix of lab 2.8's CUDA C SGEMM this lab's kernel is timed beside
SMALL_SIZES = [512, 1024, 2048]


def verify_sample(out, a, b, label: str, n_rows: int = 128) -> check.Comparison:
    """Check a big product on sampled rows (and the last one) against a float64 product computed on the arrays'
    device (cuBLAS DGEMM on a GPU)."""
    import torch

    ta, tb, to = (L._torch_view(t) for t in (a, b, out))
    m = int(ta.shape[0])
    rows = torch.as_tensor(np.unique(np.concatenate([check.rng(11).integers(0, m, n_rows), [m - 1]])),
                           device=ta.device)
    ref = ta[rows].double() @ tb.double()
    return check.compare(to[rows].double().cpu().numpy(), ref.cpu().numpy(), label)


def _fns(dtype, size):
    m, n, k = size
    a, b = device_randn((m, k), L.storage_dtype(dtype), m + k), device_randn((k, n), L.storage_dtype(dtype), n + k + 1)
    c_t = arrays.empty((size[0], size[1]), L.storage_dtype(dtype), a)
    c_p = arrays.empty((size[0], size[1]), L.storage_dtype(dtype), a)
    return a, b, c_t, c_p


def bench_case(dtype: str, n: int, *, rounds: int = 3) -> dict:
    """Triton (autotuned) vs cuBLAS at n^3, interleaved; Triton's result is checked on sampled rows first.

    dtype "tf32" = fp32 inputs with input_precision "tf32" (peer: cuBLAS with TF32 on); "float32" = ieee (peer:
    cuBLAS SGEMM with TF32 off).
    """
    st = L.storage_dtype(dtype)
    prec = "tf32" if dtype == "tf32" else ("ieee" if dtype == "float32" else None)
    n, note = L.fit_n(n, dtype, device.info())
    if note:
        print(tr(note))
    a, b, c_t, c_p = _fns(dtype, (n, n, n))
    tri = (lambda: L.matmul_triton(a, b, out=c_t, precision=prec))
    peer = L.peer_torch_matmul_tf32 if dtype == "tf32" else L.peer_torch_matmul
    arrays.fill(c_t, float("nan"))
    tri()                                      # first call: autotunes this (M, N, K, dtype) where it autotunes
    tma = L.uses_tma(a, b, c_t)
    if tma:
        cfg, source = L.tma_config(n, n, n)
        kernel = f"persistent TMA ({source})"
    else:
        cfg = L.best_config(st, prec or "tf32") if n >= L.TUNE_MIN else L.fixed_config().values
        kernel = "grid per tile (triton.autotune)" if n >= L.TUNE_MIN else "grid per tile (fixed config)"
    tuning = tuning_table(st, prec or "tf32")
    cmp = verify_sample(c_t, a, b, dtype)
    fns = {"cublas": lambda: peer(a, b, out=c_p), "triton": tri}
    if tma:
        # the grid-per-tile kernel (autotuned) beside it: what the TMA kernel adds, in the same rounds
        c_g = arrays.empty((n, n), st, a)
        L.matmul_triton(a, b, out=c_g, tma=False)
        fns["triton grid per tile"] = lambda: L.matmul_triton(a, b, out=c_g, tma=False)
    # fp32 ieee: the CUDA C SGEMM of phase 2 (lab 2.8's best rung) doing the same job, when that lab is here
    cuda_c = (lab.earlier_cuda_variant(_sgemm_lab(), PHASE2_SGEMM, "float32")
              if dtype == "float32" else None)
    if cuda_c is not None and runs(lambda: cuda_c.fn(a, b, out=c_p), f"phase 2 {cuda_c.name}"):
        fns["cuda C"] = lambda: cuda_c.fn(a, b, out=c_p)
    else:
        cuda_c = None
    ts_, tries, steady = bench.steady(fns, rounds=rounds)
    flops = 2.0 * n ** 3
    res = {"dtype": dtype, "n": n, "kernel": kernel, "rounds_run": tries, "steady": steady,
           "triton_tflops": ts_["triton"].tflops(flops),
           "cublas_tflops": ts_["cublas"].tflops(flops), "ratio": ts_["cublas"].median_ms / ts_["triton"].median_ms,
           "triton_ms": ts_["triton"].median_ms, "cublas_ms": ts_["cublas"].median_ms,
           "spread": max(t.spread for t in ts_.values()), "check": "ok" if cmp.ok else cmp.message,
           "config": _cfg_str(cfg), "cfg": cfg, "tuning": tuning, "ok": cmp.ok}
    if cuda_c is not None:
        res["cuda_c"] = f"{cuda_c.name}: {ts_['cuda C'].tflops(flops):.1f} TFLOP/s"
    if "triton grid per tile" in ts_:
        res["grid_per_tile_ratio"] = ts_["cublas"].median_ms / ts_["triton grid per tile"].median_ms
    return res


# the shapes a user hits beyond squares: ragged everywhere (K not a multiple of 8, so no
# TMA), tall-skinny, a long K with a tiny output, and a single row (a matrix-vector product)
IRREGULAR = [(8205, 2949, 5921), (32768, 32, 32), (256, 256, 65536), (1, 4096, 4096)]


def bench_irregular(dtype: str = "bfloat16", rounds: int = 3) -> list[dict]:
    """Each irregular shape: checked on sampled rows against float64, then timed against cuBLAS (a ratio, no target)."""
    rows = []
    for m, n, k in cli.progress(IRREGULAR, tr("irregular shapes ({dtype})", dtype=dtype)):
        a, b, c_t, c_p = _fns(dtype, (m, n, k))
        prec = "ieee" if dtype == "float32" else None
        arrays.fill(c_t, float("nan"))
        L.matmul_triton(a, b, out=c_t, precision=prec)
        cmp = verify_sample(c_t, a, b, dtype, n_rows=64)
        ts_, tries, steady = bench.steady({"cublas": lambda: L.peer_torch_matmul(a, b, out=c_p),
                                           "triton": lambda: L.matmul_triton(a, b, out=c_t, precision=prec)},
                                          rounds=rounds)
        flops = 2.0 * m * n * k
        rows.append({"shape": f"{m}x{n}x{k}", "dtype": dtype,
                     "kernel": "persistent TMA" if L.uses_tma(a, b, c_t) else
                     "grid per tile (autotuned)" if min(m, n, k) >= L.TUNE_MIN else "grid per tile (fixed config)",
                     "triton_ms": ts_["triton"].median_ms, "cublas_ms": ts_["cublas"].median_ms,
                     "triton_tflops": ts_["triton"].tflops(flops), "cublas_tflops": ts_["cublas"].tflops(flops),
                     "ratio": ts_["cublas"].median_ms / ts_["triton"].median_ms,
                     "spread": max(t.spread for t in ts_.values()), "steady": steady,
                     "check": "ok" if cmp.ok else cmp.message, "ok": cmp.ok})
        a = b = c_t = c_p = None
    return rows


TMA_CANDIDATES = ([dict(L.TMA_DEFAULT, GROUP_M=g, num_stages=st, EPI_SPLIT=sp)
                   for g in (4, 8, 16) for st, sp in ((3, 0), (3, 1), (4, 1))]
                  + [dict(L.TMA_DEFAULT, BLOCK_M=256, BLOCK_N=128), dict(L.TMA_DEFAULT, BLOCK_N=128, num_stages=4)])
TUNE_SIZES = (4096, 8192)


def add_arguments(p) -> None:
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU, sm_90+) sweep the persistent TMA kernel's configs at 4096^3 and 8192^3 bf16 and "
                           "record this GPU's winners"))


def tune(ctx) -> lab.Result:
    """--tune: every TMA_CANDIDATES config at each TUNE_SIZES bf16 cube, checked on sampled rows, then timed in
    interleaved rounds with cuBLAS; the winner at each size goes to results/<gpu>/phase3_lab02_matmul_tuned.json,
    where matmul_triton_tma reads it (a problem uses the winner tuned at the size closest to its own)."""
    device.require_gpu("tuning the TMA kernel")
    if not L._hopper():
        raise SystemExit(tr("--tune: the TMA kernel cannot run here: {why}", why=L.tma_unavailable(device.info())))
    rows, winners = [], []
    for n in TUNE_SIZES:
        a, b, c_t, c_p = _fns("bfloat16", (n, n, n))
        fns = {"cublas": lambda: L.peer_torch_matmul(a, b, out=c_p)}
        for cfg in cli.progress(TMA_CANDIDATES, tr("{n}^3 configs (checked)", n=n)):
            arrays.fill(c_t, float("nan"))
            try:
                L.matmul_triton_tma(a, b, out=c_t, config=cfg)
                cmp = verify_sample(c_t, a, b, "bfloat16", n_rows=32)
                why = "" if cmp.ok else cmp.message
            except Exception as e:  # noqa: BLE001 - a config that does not compile (shared memory) is a row, not a stop
                why = f"{type(e).__name__}: {str(e)[:120]}"
            if why:
                rows.append({"n": n, "config": _tma_str(cfg), "result": why})
                continue
            fns[_tma_str(cfg)] = (lambda c=cfg: L.matmul_triton_tma(a, b, out=c_t, config=c))
        ts_ = bench.interleaved(fns, rounds=3, rep_ms=60)
        flops = 2.0 * n ** 3
        timed = [(ts_[_tma_str(c)].median_ms, c) for c in TMA_CANDIDATES if _tma_str(c) in ts_]
        best = min(timed, key=lambda p: p[0])[1] if timed else None
        if best is not None:
            winners.append({"shape": [n, n, n], "config": best})
        for name, t in ts_.items():
            rows.append({"n": n, "config": name, "ms": t.median_ms, "tflops": t.tflops(flops),
                         "vs_cublas": ts_["cublas"].median_ms / t.median_ms, "spread": round(t.spread, 4),
                         "winner": best is not None and name == _tma_str(best), "result": "ok"})
        a = b = c_t = c_p = None
    if not winners:
        print(tr("--tune: no configuration passed its check; nothing recorded"))
        return lab.Result(rows=rows, name=L.TUNED_RECORD + "_failed", ok=False)
    tuned.forget()
    print(tr("winners: {list} (recorded; used from now on)",
             list="; ".join(f"{w['shape'][0]}^3: {_tma_str(w['config'])}" for w in winners)))
    return lab.Result(rows=rows, name=L.TUNED_RECORD, meta=dict(winner=winners),
                      tables=[(rows, ["n", "config", "ms", "tflops", "vs_cublas", "spread", "winner", "result"],
                               tr("Tuning the persistent TMA kernel (bf16; interleaved rounds with cuBLAS)"))])


def _tma_str(cfg: dict) -> str:
    return (f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} G{cfg['GROUP_M']} w{cfg['num_warps']} "
            f"s{cfg['num_stages']}{' split' if cfg['EPI_SPLIT'] else ''}")


def _cfg_str(cfg) -> str:
    if not cfg:
        return "-"
    if "EPI_SPLIT" in cfg:
        return _tma_str(cfg)
    return (f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']} G{cfg['GROUP_M']} w{cfg['num_warps']} "
            f"s{cfg['num_stages']}")


def tuning_table(dtype: str = "bfloat16", precision: str = "tf32") -> list[dict]:
    """Every config's time at the last tuned key (Autotuner.configs_timings, where this Triton has it)."""
    t = L.autotuner(L._tuner_key(dtype, precision))
    timings = getattr(t, "configs_timings", None) or {}
    rows = []
    for c, ms in timings.items():
        med = ms[0] if isinstance(ms, (list, tuple)) else ms
        cfg = dict(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)
        rows.append({"config": _cfg_str(cfg), "ms": float(med)})
    return sorted(rows, key=lambda r: r["ms"])


def bench_ordering(cfg: dict | None, n: int = 8192, dtype: str = "bfloat16", rounds: int = 3) -> list[dict]:
    """The tuned tile shape (cfg) of the grid-per-tile kernel with GROUP_M = 1 (row-major) and GROUP_M = 8, same
    everything else (a TMA kernel config gives its tile to the grid-per-tile kernel)."""
    cfg = {k: v for k, v in (cfg or L.CONFIGS_16[0]).items() if k != "EPI_SPLIT"}
    a, b, c1, c8 = _fns(dtype, (n, n, n))
    fns = {f"GROUP_M={g}": (lambda g=g, c=c: L.matmul_triton(a, b, out=c, config=dict(cfg, GROUP_M=g)))
           for g, c in ((1, c1), (8, c8))}
    ts_ = bench.interleaved(fns, rounds=rounds)
    wave = device.info().sms
    model = {r["order"]: r for r in ordering_table(n, n, n, cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"],
                                                   wave=wave, groups=(1, 8))}
    rows = []
    for g in (1, 8):
        t = ts_[f"GROUP_M={g}"]
        m = model["row-major" if g == 1 else "grouped, GROUP_M=8"]
        rows.append({"order": "row-major (GROUP_M=1)" if g == 1 else "grouped (GROUP_M=8)", "n": n,
                     "tile": _cfg_str(dict(cfg, GROUP_M=g)), "ms": t.median_ms, "tflops": t.tflops(2.0 * n ** 3),
                     "model DRAM MiB": m["DRAM MiB (model)"], "spread": t.spread})
    return rows


def benchmark(ctx) -> lab.Result:
    rounds = 1 if ctx.quick else 3
    targets = TARGETS[:1] if ctx.quick else TARGETS
    size_rows = [bench_case(dtype, n, rounds=rounds) for dtype, n, _ in cli.progress(targets, "target shapes")]
    small = [bench_case("bfloat16", n, rounds=1) for n in cli.progress(SMALL_SIZES[-1:] if ctx.quick
                                                                        else SMALL_SIZES, "small sizes")]
    fp32 = [] if ctx.quick else [bench_case(dtype, n, rounds=1) for dtype, n in L.FP32_CASES]
    tuning = size_rows[0]["tuning"]           # bf16 4096^3: every config's time
    big = [r for r in size_rows if r["dtype"] == "bfloat16" and r["n"] == 8192]
    order = [] if ctx.quick or not big else bench_ordering(big[0]["cfg"], rounds=rounds)
    irregular = [] if ctx.quick else bench_irregular()
    targets_out = []
    for (dtype, n, goal), r in zip(targets, size_rows):
        targets_out.append(target.versus(f"matmul {dtype} {n}^3", "triton matmul", "cuBLAS (torch.matmul)", r["ratio"],
                                         steady=r["steady"], at_least=goal, checked=r["ok"],
                                         detail={"kernel": r["kernel"], "triton TFLOP/s": r["triton_tflops"],
                                                 "peer TFLOP/s": r["cublas_tflops"], "rounds_run": r["rounds_run"],
                                                 "grid per tile vs cuBLAS": r.get("grid_per_tile_ratio")}))
    cols = ["dtype", "n", "kernel", "config", "triton_tflops", "cublas_tflops", "ratio", "grid_per_tile_ratio",
            "spread", "check"]
    tables = [(size_rows, cols, tr("Targets: Triton vs cuBLAS, interleaved rounds (grid_per_tile_ratio: the "
                                   "autotuned grid-per-tile kernel in the same rounds)")),
              (small, cols, tr("Sizes <= 2048, bf16 (reported separately: few tiles per SM, and launch and tail "
                               "effects weigh more)"))]
    if fp32:
        tables.append((fp32, cols + ["cuda_c"], tr("fp32 at 4096^3: 'float32' = input_precision ieee vs cuBLAS SGEMM "
                                                   "(TF32 off) and phase 2's CUDA C; 'tf32' vs cuBLAS with TF32 on")))
    if irregular:
        tables.append((irregular, ["shape", "dtype", "kernel", "triton_ms", "cublas_ms", "ratio", "spread", "check"],
                       tr("Irregular and skinny shapes (bf16; checked on sampled rows; a ratio, no target)")))
    if tuning:
        tables.append((tuning, None, tr("The autotuner's timings at bf16 4096^3 (best first)")))
    if order:
        tables.append((order, None, tr("Program order measured at 8192^3 bf16 (same tile config)")))
    tables.append((target.said(targets_out), None, tr("Performance targets")))
    all_checked = all(r["ok"] for r in size_rows + small + fp32 + irregular)
    if not all_checked:
        print(tr("a benchmarked result failed its sampled check (see the 'check' column)"))
    rows = []
    for r in size_rows + small + fp32:
        rows.append(dict(lab=L.LAB, variant="triton matmul", impl="triton", shape=[r["n"]] * 3, dtype=r["dtype"],
                         ms=r["triton_ms"], tflops=r["triton_tflops"], vs_peer=r["ratio"], config=r["config"],
                         spread=r["spread"], check=r["check"], cuda_c=r.get("cuda_c")))
        rows.append(dict(lab=L.LAB, variant="cuBLAS", impl="peer", shape=[r["n"]] * 3, dtype=r["dtype"],
                         ms=r["cublas_ms"], tflops=r["cublas_tflops"], spread=r["spread"]))
    meta = dict(targets=target.records(targets_out), ordering=order, irregular=irregular,
                tma_source=L.tma_config(4096, 4096, 4096)[1],
                configs_picked={f"{r['dtype']} {r['n']}": r["config"] for r in size_rows + small + fp32},
                tuning=tuning, compile_report=compile_table(device.arch_info(ctx.args.arch).cc),
                configs_16=L.CONFIGS_16, device=device.info().as_dict())
    return lab.Result(rows=rows, meta=meta, tables=tables, ok=all_checked)


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    """TFLOP/s of the autotuned Triton kernel and of cuBLAS over M = N = K, bf16, against the datasheet peak."""
    bf16 = [r for r in data["rows"] if r["dtype"] == "bfloat16"]
    ns = sorted({r["shape"][0] for r in bf16})

    def series(variant):
        by = {r["shape"][0]: r["tflops"] for r in bf16 if r["variant"] == variant}
        return [by.get(n) for n in ns]

    peak = (data.get("device") or {}).get("datasheet", {}).get("bf16_tflops")
    hl = {tr("datasheet dense bf16 {peak} TFLOP/s", peak=peak): peak} if peak else {}
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_lines(path, ns, {tr("triton bf16 (autotuned)"): series("triton matmul"),
                                         tr("cuBLAS bf16 (torch.matmul)"): series("cuBLAS")},
                              xlabel="M = N = K", ylabel="TFLOP/s", hlines=hl, xticks=ns,
                              xticklabels=[str(n) for n in ns],
                              title=tr("Triton matmul vs cuBLAS on {gpu} (bf16 in, fp32 accumulate)",
                                       gpu=data.get('gpu', 'GPU')))]
