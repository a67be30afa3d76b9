"""Lab 4.2's measuring side: the byte prediction before any timing, what the compilers made of the kernels (the CUDA C
SASS census, the fused GEMM's resources), the three parts timed at their benchmark shapes against torch eager and
torch.compile (tuning the Triton layernorm and GEMM configs first), the targets, and the plot (redrawn from the JSON by
--replot). The byte model is prediction.py's and the compile reports are compile_reports.py's; bench.py times the
parts and holds the runner's hooks."""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from common import arrays, bench, check, cuda, device, lab, occupancy, report, target
from common.i18n import tr

from . import lab as L
from .compile_reports import (  # noqa: F401 - re-exported: the tests read them here
    _compile_tables, aot_linear, aot_linear_tma, cuda_compile_table, gpu_of, linear_compile_table)
from .lab import EW_SHAPE, GEMM_N, LN_SHAPE
from .prediction import (  # noqa: F401 - re-exported: the tests and exercise 4.2.1 read them here
    LAB01_CEILINGS, byte_table, predicted_elements, prediction_rates)

TARGETS = {"linear_gelu_tanh": ("unfused pair: torch.matmul + bias + F.gelu", 1.15),
           "residual_layernorm": ("torch.compile", 1.0)}
MAIN_LOOP_TARGET = 0.95      # the fused GEMM without its epilogue, against cuBLAS: the fusion must not cost GEMM speed
LN_CANDIDATES = [{"BLOCK_M": bm, "num_warps": w} for bm, w in ((1, 8), (2, 8), (1, 16), (2, 16))]
CPU_NOTE = ("\nRan in the interpreter: every Triton kernel (elementwise chains fused and unfused, residual + layernorm "
            "single-piece and\nlong-row paths, the GEMM with bias / GELU / residual epilogues). The CUDA C kernels "
            "were only compiled (above);\ntiming, tuning and the torch peers need a GPU.")


def predict(gpu: device.DeviceInfo) -> dict:
    """The lab's predictions for `gpu`: each part's speed-up from its byte count (the GEMM's from the rates of
    prediction_rates), the floor time of each fused chain at the bandwidth, where parts 1-2 and 3 sit against the
    ridge points, and what a thread of fusion_02 keeps in flight per SM (Little's law's side of the bargain)."""
    (m, n), (lm, ln_), g, notes = L.bench_shapes(gpu)
    rates = prediction_rates(gpu)
    out = {}
    for r in byte_table(m, n, lm, ln_, g, gemm_tflops=rates["gemm_tflops"], hbm_gbps=rates["hbm_gbps"]):
        sp = r["predicted speed-up"]
        out[tr("{case} {shape}: speed-up of fusing", case=r['case'], shape=r['shape'])] = \
            tr("{sp:.2f}x", sp=sp) if sp else "-"
    bw = rates["hbm_gbps"]
    out[tr("fused bias + GELU floor ({m} x {n} bf16, 2 M N x 2 B)", m=m, n=n)] = \
        f"{4 * m * n / (bw * 1e9) * 1e3:.3f} ms"
    out[tr("fused residual + layernorm floor ({m} x {n}, 4 M N x 2 B)", m=lm, n=ln_)] = \
        f"{8 * lm * ln_ / (bw * 1e9) * 1e3:.3f} ms"
    out[tr("rates of the GEMM row")] = (f"{rates['gemm_tflops']:.0f} TFLOP/s ({rates['gemm_from']}), "
                                        if rates["gemm_tflops"] else rates["gemm_from"] + ", ") + \
        f"{bw:.0f} GB/s ({rates['hbm_from']})"
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        out[tr("fp32 ridge (parts 1-2 sit at <= 10 FLOP/B)")] = f"{fp32 * 1e3 / gpu.hbm_gbps:.1f} FLOP/B"
    if rates["gemm_tflops"]:
        out[tr("16-bit tensor-core ridge (part 3 sits at ~1365 FLOP/B)")] = \
            f"{rates['gemm_tflops'] * 1e3 / bw:.0f} FLOP/B"
    cfg = L.cuda_ew_config().values
    regs, smem = cuda.resources(L.CU, "fusion_02_bias_gelu_tanh_bf16", gpu, cfg)
    occ = occupancy.occupancy(gpu.arch, cfg["THREADS"], regs, smem)
    per_sm = occ.blocks_per_sm * cfg["THREADS"] * cfg["UNROLL"] * 16
    out[tr("fusion_02 bytes in flight per SM (resident threads x UNROLL x 16 B)")] = \
        tr("{kib:.0f} KiB ({blocks} blocks of {threads}, {regs} registers)", kib=per_sm / 1024,
           blocks=occ.blocks_per_sm, threads=cfg['THREADS'], regs=regs)
    out[tr("part 3's GEMM")] = (f"{L.gemm_dtype(gpu)}, " + (tr("the persistent TMA kernel")
                                                            if not L.tma_unavailable(gpu)
                                                            else f"linear_kernel ({L.tma_unavailable(gpu)})"))
    for i, note in enumerate(notes):
        out[tr("note {i}", i=i + 1)] = note
    return out


def explain(args) -> None:
    gpu = device.current(args.arch)
    rates = prediction_rates(gpu)
    report.print_table(byte_table(*EW_SHAPE, *LN_SHAPE, GEMM_N, gemm_tflops=rates["gemm_tflops"],
                                  hbm_gbps=rates["hbm_gbps"]),
                       title=tr("The prediction: bytes each chain moves (bf16; M N = elements of one matrix) and the "
                                "speed-up the byte ratio implies; the GEMM row on {gpu} at {gemm} and {gbps:.0f} GB/s "
                                "({hbm_from})", gpu=gpu.name,
                                gemm=(f"{rates['gemm_tflops']:.0f} TFLOP/s ({rates['gemm_from']})"
                                      if rates["gemm_tflops"] else rates["gemm_from"]),
                                gbps=rates['hbm_gbps'], hbm_from=rates['hbm_from']))


def compile_report(args) -> None:
    ctab, ltab = _compile_tables(args.arch)
    gpu = gpu_of(args.arch)
    report.print_table(ctab, title=tr("kernels.cu compiled with NVRTC for {arch} (bf16 unless named): 128b = 16-byte "
                                      "accesses; the _scalar fallback uses 16-bit ones", arch=args.arch))
    if ltab:
        report.print_table(ltab, title=tr("linear_kernel compiled ahead of time for {arch} ({dtype}, aligned shape): "
                                          "what the epilogue costs in registers and shared memory", arch=args.arch,
                                          dtype=L.gemm_dtype(gpu)))
    why = L.tma_unavailable(gpu)
    if why:
        print(tr("the persistent TMA GEMM is not compiled for {gpu}: {why}", gpu=gpu.name, why=why))


# ---------------------------------------------------------------------------------------------------------------------
# Benchmarks (GPU)
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def compiled(kind: str):
    """torch.compile'd peers (dynamic=False), one per kind of case."""
    import torch
    import torch.nn.functional as F

    if kind == "bias_gelu_tanh":
        return torch.compile(lambda x, b: F.gelu(x + b, approximate="tanh"), dynamic=False)
    if kind == "bias_gelu_erf":
        return torch.compile(lambda x, b: F.gelu(x + b), dynamic=False)
    if kind == "bias_residual":
        return torch.compile(lambda x, b, r: x + b + r, dynamic=False)
    if kind == "residual_layernorm":
        def f(x, r, w, b):
            h = x + r
            return F.layer_norm(h, (h.shape[-1],), w, b, L.EPS), h
        return torch.compile(f, dynamic=False)
    if kind == "linear_gelu_tanh":
        return torch.compile(lambda x, w, b: F.gelu(torch.matmul(x, w) + b, approximate="tanh"), dynamic=False)
    raise ValueError(kind)


def _randn(shape, dtype, seed, scale=1.0, shift=0.0):
    return arrays.device_randn(shape, dtype, seed, scale=scale, shift=shift)


def _sampled_check(got, ref64, dtype: str) -> check.Comparison:
    return check.compare(L._torch_view(got).float().cpu().numpy(), ref64.cpu().numpy(), dtype)


def _row_sample(m: int, like, n_rows: int = 64):
    """Row indices to check a benchmark-sized result on (random ones, the first and the last), on like's device."""
    import torch

    return torch.as_tensor(np.unique(np.concatenate([check.rng(17).integers(0, m, n_rows), [0, m - 1]])),
                           device=like.device)


def gelu_tanh_ref_t(t):
    import torch

    return 0.5 * t * (1.0 + torch.tanh(L.SQRT_2_OVER_PI * (t + 0.044715 * t ** 3)))


def eager_fn(op, tx, tb, tr):
    """torch eager as a user writes it (one kernel per op, each allocating its result; no copy into an out)."""
    import torch.nn.functional as F

    if op == "bias_residual":
        return lambda: tx + tb + tr
    return lambda: F.gelu(tx + tb, approximate="tanh" if op == "bias_gelu_tanh" else "none")


def bench_elementwise(ceiling: float, rounds: int, shape=EW_SHAPE) -> tuple[list[dict], list[dict]]:
    """Part 1: every contender of each chain at `shape` (EW_SHAPE, fitted to the GPU's memory) in bf16, interleaved;
    CUDA C and Triton results checked first."""
    import torch

    m, n = shape
    dt = "bfloat16"
    x = _randn(shape, dt, 31, scale=1.5)
    bias = _randn((n,), dt, 32, scale=0.5)
    res = _randn(shape, dt, 33)
    tx, tb, tr = (L._torch_view(a) for a in (x, bias, res))
    outs = {k: torch.empty_like(tx) for k in ("cu", "cf", "tu", "tf")}
    rows, summary = [], []
    rws = _row_sample(m, tx)
    for op in L.EW_OPS:
        args = (x, bias, res) if op == "bias_residual" else (x, bias)
        comp = compiled(op)
        targs = (tx, tb, tr) if op == "bias_residual" else (tx, tb)
        comp(*targs)
        fns = {"cuda 01 unfused": lambda: L.ew_cuda_unfused(op, *args, out=outs["cu"]),
               "cuda 02 fused": lambda: L.ew_cuda_fused(op, *args, out=outs["cf"]),
               "triton unfused": lambda: L.ew_triton_unfused(op, *args, out=outs["tu"]),
               "triton fused": lambda: L.ew_triton_fused(op, *args, out=outs["tf"]),
               "torch eager": eager_fn(op, tx, tb, tr),
               "torch.compile": lambda: comp(*targs)}
        for f in fns.values():
            f()
        t64 = tx[rws].double() + tb.double()
        ref = (gelu_tanh_ref_t(t64) if op == "bias_gelu_tanh" else
               0.5 * t64 * (1 + torch.erf(t64 / math.sqrt(2))) if op == "bias_gelu_erf" else t64 + tr[rws].double())
        checks = {k: _sampled_check(outs[o][rws], ref, dt) for k, o in (("cuda 01 unfused", "cu"),
                                                                         ("cuda 02 fused", "cf"),
                                                                         ("triton unfused", "tu"),
                                                                         ("triton fused", "tf"))}
        ts_ = bench.interleaved(fns, rounds=rounds)
        mn = m * n
        for name, t in ts_.items():
            fused = name.endswith("fused") and "unfused" not in name or name == "torch.compile"
            elems = predicted_elements(op, fused)
            impl = "cuda" if name.startswith("cuda") else "triton" if name.startswith("triton") else "peer"
            c = checks.get(name)
            rows.append(report.row(L.LAB, f"{op}: {name}", impl, shape, dt, t, nbytes=elems * mn * 2,
                                   ceiling_gbps=ceiling, case=op, contender=name, moved=f"{elems} MN",
                                   vs_eager=ts_["torch eager"].median_ms / t.median_ms,
                                   vs_compile=ts_["torch.compile"].median_ms / t.median_ms,
                                   check=("ok" if c.ok else c.message) if c is not None else ""))
        pred = predicted_elements(op, False) / predicted_elements(op, True)
        summary.append({"case": op, "shape": f"{m}x{n} {dt}", "predicted speed-up": pred,
                        "cuda measured": ts_["cuda 01 unfused"].median_ms / ts_["cuda 02 fused"].median_ms,
                        "triton measured": ts_["triton unfused"].median_ms / ts_["triton fused"].median_ms,
                        "torch eager -> compile": ts_["torch eager"].median_ms / ts_["torch.compile"].median_ms,
                        "best fused vs compile": ts_["torch.compile"].median_ms /
                        min(ts_["cuda 02 fused"].median_ms, ts_["triton fused"].median_ms),
                        "fused vs eager": ts_["torch eager"].median_ms /
                        min(ts_["cuda 02 fused"].median_ms, ts_["triton fused"].median_ms)})
    return rows, summary


def tune_ln(x, r, w, b) -> list[dict]:
    y, h = L.residual_layernorm(x, r, w, b)
    out = []
    for cfg in LN_CANDIDATES:
        t = bench.bench(lambda c=cfg: L.residual_layernorm(x, r, w, b, out=(y, h), config=c), rep_ms=30)
        out.append({"kernel": "residual_layernorm", "config": str(cfg), "ms": t.median_ms, "cfg": cfg})
    best = min(out, key=lambda q: q["ms"])
    L.TUNED[("ln", int(x.shape[-1]), arrays.dtype_name(x))] = best["cfg"]
    return [{k: v for k, v in q.items() if k != "cfg"} for q in out]


def bench_layernorm(ceiling: float, rounds: int, do_tune: bool, shape=LN_SHAPE) -> tuple[list[dict], dict, list[dict]]:
    """Part 2: residual + layernorm at `shape` (LN_SHAPE, fitted to the GPU's memory) in bf16, the Triton and CUDA C
    fused kernels against the unfused pair, torch eager and torch.compile."""
    import torch

    m, n = shape
    dt = "bfloat16"
    x = _randn(shape, dt, 41, scale=2.0, shift=3.0)
    r = _randn(shape, dt, 42)
    w = _randn((n,), dt, 43, scale=0.2, shift=1.0)
    b = _randn((n,), dt, 44, scale=0.5)
    tx, tr, tw, tb = (L._torch_view(a) for a in (x, r, w, b))
    tuning = tune_ln(x, r, w, b) if do_tune else []
    y, h = L.residual_layernorm(x, r, w, b)
    yu, hu = torch.empty_like(tx), torch.empty_like(tx)
    rws = _row_sample(m, tx)
    h_f64 = (tx[rws].float() + tr[rws].float()).to(torch.bfloat16).double()    # the stored (rounded) h
    mu = h_f64.mean(dim=1, keepdim=True)
    hc = h_f64 - mu
    ref_y = hc / torch.sqrt((hc * hc).mean(dim=1, keepdim=True) + L.EPS) * tw.double() + tb.double()
    L.ln_triton_unfused("residual_layernorm", x, r, w, b, out=(yu, hu))
    yc, hc_ = torch.empty_like(tx), torch.empty_like(tx)
    L.residual_layernorm_cuda(x, r, w, b, out=(yc, hc_))
    checks = {"triton fused": (_sampled_check(y[rws], ref_y, dt), _sampled_check(h[rws], h_f64, dt)),
              "triton unfused": (_sampled_check(yu[rws], ref_y, dt), _sampled_check(hu[rws], h_f64, dt)),
              "cuda 03 fused": (_sampled_check(yc[rws], ref_y, dt), _sampled_check(hc_[rws], h_f64, dt))}
    comp = compiled("residual_layernorm")
    comp(tx, tr, tw, tb)
    fns = {"triton fused": lambda: L.residual_layernorm(x, r, w, b, out=(y, h)),
           "triton unfused": lambda: L.ln_triton_unfused("residual_layernorm", x, r, w, b, out=(yu, hu)),
           "cuda 03 fused": lambda: L.residual_layernorm_cuda(x, r, w, b, out=(yc, hc_)),
           "torch eager": lambda: torch.nn.functional.layer_norm(tx + tr, (n,), tw, tb, L.EPS),
           "torch.compile": lambda: comp(tx, tr, tw, tb)}
    # the target's contenders in steady rounds (a round where any spreads more than 3% is repeated)
    ts_, tries, steady = bench.steady(fns, rounds=rounds)
    rows = []
    for name, t in ts_.items():
        fused = name in ("triton fused", "cuda 03 fused", "torch.compile")
        elems = predicted_elements("residual_layernorm", fused)
        c = checks.get(name)
        impl = "triton" if name.startswith("triton") else "cuda" if name.startswith("cuda") else "peer"
        rows.append(report.row(L.LAB, f"residual_layernorm: {name}", impl,
                               shape, dt, t, nbytes=elems * m * n * 2, ceiling_gbps=ceiling,
                               case="residual_layernorm", contender=name, moved=f"{elems} MN",
                               vs_eager=ts_["torch eager"].median_ms / t.median_ms,
                               vs_compile=ts_["torch.compile"].median_ms / t.median_ms,
                               config=ln_config_str(n, dt) if name == "triton fused" else "",
                               check=("ok" if c[0].ok and c[1].ok else (c[0] if not c[0].ok else c[1]).message)
                               if c else ""))
    summ = {"case": "residual_layernorm", "shape": f"{m}x{n} {dt}", "predicted speed-up": 5 / 4,
            "triton measured": ts_["triton unfused"].median_ms / ts_["triton fused"].median_ms,
            "cuda 03 vs triton fused": ts_["triton fused"].median_ms / ts_["cuda 03 fused"].median_ms,
            "torch eager -> compile": ts_["torch eager"].median_ms / ts_["torch.compile"].median_ms,
            "steady": steady, "rounds_run": tries, "_ok": all(c[0].ok and c[1].ok for c in checks.values())}
    # the target is about the fused kernel, either implementation: the faster of the Triton and the CUDA C one
    best = min(("triton fused", "cuda 03 fused"), key=lambda k: ts_[k].median_ms)
    summ.update({"best fused": best, "best fused vs compile": ts_["torch.compile"].median_ms / ts_[best].median_ms,
                 "fused vs eager": ts_["torch eager"].median_ms / ts_[best].median_ms})
    return rows, summ, tuning


def tune_linear(x, w, bias, y) -> list[dict]:
    m, k = (int(s) for s in x.shape)
    n = int(w.shape[1])
    out = []
    smem = device.info().smem_per_block_optin
    fitting = any(L.ring_bytes(c) <= smem for c in L.LINEAR_CONFIGS)   # else this GPU's default, LINEAR_FIT, too
    for cfg in L.LINEAR_CONFIGS + ([] if fitting else [L.LINEAR_FIT]):
        try:
            t = bench.bench(lambda c=cfg: L.linear(x, w, bias, activation="gelu_tanh", out=y, config=c), rep_ms=30)
        except Exception as e:  # noqa: BLE001 - a config that does not compile (out of resources) is skipped, said so
            out.append({"kernel": "linear gelu_tanh", "config": str(cfg), "ms": None,
                        "note": f"{type(e).__name__}: {str(e)[:80]}"})
            continue
        out.append({"kernel": "linear gelu_tanh", "config": str(cfg), "ms": t.median_ms,
                    "tflops": t.tflops(2.0 * m * n * k), "cfg": cfg})
    timed = [q for q in out if q["ms"] is not None]
    if timed:
        L.TUNED[("linear", m, n, k, arrays.dtype_name(x))] = min(timed, key=lambda q: q["ms"])["cfg"]
    return [{kk: v for kk, v in q.items() if kk != "cfg"} for q in out]


def rates_of(gpu: device.DeviceInfo, hbm_measured: float | None = None) -> dict:
    r = prediction_rates(gpu, hbm_measured)
    return {"gemm_tflops": r["gemm_tflops"], "hbm_gbps": r["hbm_gbps"]}


def ln_config_str(n: int, dt: str) -> str:
    v = L.ln_config(n, dt).values
    return str({"BLOCK_M": v["LN_BLOCK_M"], "num_warps": v["LN_WARPS"]})


def bench_linear(rounds: int, do_tune: bool, n: int = GEMM_N, dt: str = "bfloat16",
                 hbm_gbps: float | None = None) -> tuple[list[dict], dict, list[dict]]:
    """Part 3: the fused GEMM epilogue at n^3 in `dt` (bf16; fp16 on a GPU without bf16 tensor cores) against the
    unfused pair (cuBLAS + torch bias + torch GELU), the same Triton GEMM unfused, cuBLAS alone and torch.compile.
    hbm_gbps: the measured HBM ceiling the predicted speed-up's unfused tail moves at."""
    import torch
    import torch.nn.functional as F

    x = L._torch_view(_randn((n, n), dt, 51))
    w = L._torch_view(_randn((n, n), dt, 52, scale=1.0 / math.sqrt(n)))
    bias = L._torch_view(_randn((n,), dt, 53, scale=0.5))
    tx, tw, tb = x, w, bias
    y = torch.empty((n, n), dtype=tx.dtype, device=tx.device)
    yu = torch.empty_like(y)
    tuning = tune_linear(x, w, bias, y) if do_tune else []
    L.linear(x, w, bias, activation="gelu_tanh", out=y)
    L.linear_triton_unfused("linear_gelu_tanh", x, w, bias, out=yu)
    rws = _row_sample(n, tx)
    ref = gelu_tanh_ref_t(tx[rws].double() @ tw.double() + tb.double())
    checks = {"triton fused epilogue": _sampled_check(y[rws], ref, dt),
              "triton unfused (3 kernels)": _sampled_check(yu[rws], ref, dt)}
    comp = compiled("linear_gelu_tanh")
    comp(tx, tw, tb)
    yg, yp = torch.empty_like(y), torch.empty_like(y)
    L.linear(x, w, out=yg)
    L.linear(x, w, bias, activation="gelu_tanh", out=yp, tma=False)
    checks["triton GEMM alone (main loop, no epilogue)"] = _sampled_check(yg[rws], tx[rws].double() @ tw.double(), dt)
    checks["triton fused epilogue, grid per tile"] = _sampled_check(yp[rws], ref, dt)
    # The two targets' four contenders are timed by themselves in steady rounds (a round where any of them spreads
    # more than 3% is repeated); the other contenders, context only, in plain interleaved rounds afterwards. With
    # all seven in one steady run a single noisy bystander made every round unsteady. Each timed call is one CUDA
    # graph replay of a single call, with the L2 flushed before it: with plain launches the host's work (the TMA
    # kernel builds three tensor descriptors per call) showed up as gaps, and graphs of 20 back-to-back GEMMs gave
    # no steady round in three whole runs. A study that timed the four contenders six ways (the README's lesson says
    # where it is) found one call per replay the only way whose rounds came out steady.
    fns = {"triton fused epilogue": lambda: L.linear(x, w, bias, activation="gelu_tanh", out=y),
           "unfused pair (torch.matmul + bias + gelu)": lambda: F.gelu(torch.matmul(tx, tw) + tb, approximate="tanh"),
           "triton GEMM alone (main loop, no epilogue)": lambda: L.linear(x, w, out=yg),
           "cuBLAS GEMM alone (torch.matmul)": lambda: torch.matmul(tx, tw)}
    context = {"triton fused epilogue, grid per tile": lambda: L.linear(x, w, bias, activation="gelu_tanh", out=yp,
                                                                        tma=False),
               "triton unfused (3 kernels)": lambda: L.linear_triton_unfused("linear_gelu_tanh", x, w, bias, out=yu),
               "torch.compile": lambda: comp(tx, tw, tb)}
    ts_, tries, steady = bench.steady(fns, rounds=rounds, graph=True, calls=1)
    ts_.update(bench.interleaved(context, rounds=rounds))
    tma = L.linear_uses_tma(x, w, y)
    pair = ts_["unfused pair (torch.matmul + bias + gelu)"].median_ms
    flops = 2.0 * n ** 3
    rows = []
    for name, t in ts_.items():
        c = checks.get(name)
        rows.append(report.row(L.LAB, f"linear_gelu_tanh: {name}", "triton" if name.startswith("triton") else "peer",
                               (n, n, n), dt, t, flops=flops, case="linear_gelu_tanh", contender=name,
                               vs_pair=pair / t.median_ms,
                               vs_compile=ts_["torch.compile"].median_ms / t.median_ms,
                               config=str(L.tile_of(L.linear_tma_config(n, n, n).values, "TMA_")
                                          if tma and "grid per tile" not in name
                                          else L.tile_of(L.linear_config(n, n, n, dt).values, "GEMM_"))
                               if name.startswith("triton") else "",
                               check=("ok" if c.ok else c.message) if c is not None else ""))
    gemm_ms = ts_["cuBLAS GEMM alone (torch.matmul)"].median_ms
    summ = {"case": "linear_gelu_tanh", "shape": f"{n}^3 {dt}",
            "predicted speed-up": (gemm_ms + 4 * n * n * 2 / ((hbm_gbps or device.info().hbm_gbps) * 1e9) * 1e3)
            / gemm_ms,
            "triton measured": ts_["triton unfused (3 kernels)"].median_ms / ts_["triton fused epilogue"].median_ms,
            "fused vs pair": pair / ts_["triton fused epilogue"].median_ms,
            "main loop vs cuBLAS": gemm_ms / ts_["triton GEMM alone (main loop, no epilogue)"].median_ms,
            "kernel": "persistent TMA" if tma else "grid per tile",
            "grid per tile vs pair": pair / ts_["triton fused epilogue, grid per tile"].median_ms,
            "best fused vs compile": ts_["torch.compile"].median_ms / ts_["triton fused epilogue"].median_ms,
            "steady": steady, "rounds_run": tries,
            "_ok": all(c.ok for c in checks.values())}
    return rows, summ, tuning


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()["hbm_gbps"]
    rounds = 1 if ctx.quick else 3
    gpu = device.info()
    ew_shape, ln_shape, gn, notes = L.bench_shapes(gpu)
    gdt = L.gemm_dtype(gpu)
    gname = "bf16" if gdt == "bfloat16" else "fp16"
    for note in notes:
        print(tr(note))
    ew_rows, ew_summ = bench_elementwise(ceiling, rounds, ew_shape)
    ln_rows, ln_summ, ln_tune = bench_layernorm(ceiling, rounds, do_tune=not ctx.quick, shape=ln_shape)
    lin_rows, lin_summ, lin_tune = bench_linear(rounds, do_tune=not ctx.quick, n=gn, dt=gdt, hbm_gbps=ceiling)
    summary = ew_summ + [ln_summ, lin_summ]
    targets = [target.versus(f"GEMM + bias + gelu_tanh {gname} {gn}^3", lin_summ["kernel"],
                             TARGETS["linear_gelu_tanh"][0], lin_summ["fused vs pair"], steady=lin_summ["steady"],
                             at_least=TARGETS["linear_gelu_tanh"][1], checked=lin_summ["_ok"],
                             detail={"rounds_run": lin_summ["rounds_run"]}),
               target.versus(f"the fused GEMM's main loop, {gname} {gn}^3 (no epilogue)", lin_summ["kernel"],
                             "cuBLAS GEMM alone", lin_summ["main loop vs cuBLAS"], steady=lin_summ["steady"],
                             at_least=MAIN_LOOP_TARGET, checked=lin_summ["_ok"],
                             detail={"rounds_run": lin_summ["rounds_run"]}),
               target.versus(f"residual + layernorm bf16 {ln_shape[0]}x{ln_shape[1]}", ln_summ["best fused"],
                             "torch.compile", ln_summ["best fused vs compile"], steady=ln_summ["steady"],
                             at_least=TARGETS["residual_layernorm"][1], checked=ln_summ["_ok"],
                             detail={"vs eager": ln_summ["fused vs eager"], "rounds_run": ln_summ["rounds_run"]})]
    rows = ew_rows + ln_rows + lin_rows
    bad = [r for r in rows if r.get("check") not in ("", "ok")]
    if bad:
        print(tr("{n} benchmarked result(s) failed their sampled check (see the 'check' column)", n=len(bad)))
    ctab, ltab = _compile_tables(ctx.args.arch)
    tables = [(ew_rows, ["case", "contender", "moved", "ms", "gbps", "frac_ceiling", "vs_eager", "vs_compile",
                         "check"],
               tr("Part 1 - elementwise chains, {m} x {n} bf16 (GB/s counts the bytes each contender must move: "
                  "unfused chains more)", m=ew_shape[0], n=ew_shape[1])),
              (ln_rows, ["contender", "moved", "ms", "gbps", "frac_ceiling", "vs_eager", "vs_compile", "config",
                         "check"], tr("Part 2 - residual + layernorm, {m} x {n} bf16", m=ln_shape[0], n=ln_shape[1])),
              (lin_rows, ["contender", "ms", "tflops", "vs_pair", "vs_compile", "config", "check"],
               tr("Part 3 - GEMM + bias + gelu_tanh, {dtype} {n}^3", dtype=gname, n=gn))]
    if ln_tune or lin_tune:
        tables.append((ln_tune + lin_tune, None, tr("Tuning at the benchmark shapes (one timing per candidate; the "
                                                    "fastest is used above)")))
    tables += [(summary, ["case", "shape", "predicted speed-up", "cuda measured", "triton measured",
                          "cuda 03 vs triton fused", "torch eager -> compile", "fused vs eager", "fused vs pair",
                          "best fused vs compile"],
                tr("Predicted (byte ratio) vs measured speed-up of fusing, and ratios vs the peers")),
               (target.said(targets), None, tr("Performance targets"))]
    return lab.Result(rows=rows, tables=tables, ok=not bad,
                      meta=dict(targets=target.records(targets), summary=summary, tuning=ln_tune + lin_tune,
                                cuda_compile_report=ctab, linear_compile_report=ltab, ceiling_gbps=ceiling,
                                bytes_prediction=byte_table(*ew_shape, *ln_shape, gn, **rates_of(gpu, ceiling)),
                                device=device.info().as_dict()))


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    """Each contender's speed-up over torch eager (the unfused library chain) per case; for the GEMM, over the
    unfused pair (cuBLAS, then torch's bias and GELU)."""
    labels, values, colors = [], [], []
    for r in data["rows"]:
        ratio = r.get("vs_eager", r.get("vs_pair"))
        if ratio is None:
            continue
        labels.append(f"{r['case']}: {r['contender']}")
        values.append(ratio)
        colors.append(report.IMPL_COLORS.get(r["impl"], "gray"))
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_bars(path, labels, values, ylabel="speed-up over the unfused torch eager chain (x)",
                             title=tr("Kernel fusion on {gpu}", gpu=data.get('gpu', tr('the GPU'))), colors=colors,
                             hlines={"1.0 = torch eager": 1.0}, annotate_fmt=tr("{:.2f}x"))]
