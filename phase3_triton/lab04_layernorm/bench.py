"""Lab 3.4's measuring side: what the compiler made of the forward and backward kernels (ahead of time, no GPU needed,
with the programs per SM from common.occupancy), the configs tuned at the target shape, forward and backward against
torch eager and torch.compile in interleaved rounds with a check of the benchmarked result, and the plot (redrawn from
the JSON by --replot)."""
from __future__ import annotations

import functools
import os

import numpy as np

from common import arrays, bench, check, cli, device, lab, report
from common.arrays import device_randn
from common.occupancy import occupancy
from common.triton_support import aot, load_summary, summarize, triton

from . import lab as L
from .triton_kernels import layernorm_bwd_kernel, layernorm_fwd_kernel

CPU_NOTE = ("\nThe Triton kernels ran in the interpreter (forward, backward and the column reduction, single-piece and "
            "looped paths,\nfp32 / bf16 / fp16 / fp64). Tuning, timing and the torch peers need a GPU.")


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report
# ---------------------------------------------------------------------------------------------------------------------
_TY = {"float32": "*fp32", "bfloat16": "*bf16", "float16": "*fp16", "float64": "*fp64"}


def aot_fwd(cc: int, dtype: str = "float32", cols: int = 4096, cfg: dict | None = None):
    cfg = cfg or L.fwd_default(cols)
    ty, acc = _TY[dtype], _TY[L.acc_dtype(dtype)]
    sig = {"x_ptr": ty, "w_ptr": ty, "b_ptr": ty, "y_ptr": ty, "mean_ptr": acc, "rstd_ptr": acc, "n_rows": "i32",
           "n_cols": "i32", "x_row_stride": "i32", "y_row_stride": "i32", "eps": "fp32", "BLOCK_M": "constexpr",
           "BLOCK_N": "constexpr", "SINGLE": "constexpr"}
    bn = triton.next_power_of_2(cols)
    return aot(layernorm_fwd_kernel, sig, {"BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": bn, "SINGLE": True}, cc=cc,
               num_warps=cfg["num_warps"],
               divisible_by_16=("x_ptr", "w_ptr", "b_ptr", "y_ptr", "mean_ptr", "rstd_ptr", "n_cols", "x_row_stride",
                                "y_row_stride"))


def aot_bwd(cc: int, dtype: str = "float32", cols: int = 4096, num_warps: int | None = None):
    ty, acc = _TY[dtype], _TY[L.acc_dtype(dtype)]
    sig = {"x_ptr": ty, "w_ptr": ty, "dy_ptr": ty, "mean_ptr": acc, "rstd_ptr": acc, "dx_ptr": ty,
           "dw_part_ptr": acc, "db_part_ptr": acc, "n_rows": "i32", "n_cols": "i32", "x_row_stride": "i32",
           "dy_row_stride": "i32", "dx_row_stride": "i32", "BLOCK_N": "constexpr", "SINGLE": "constexpr"}
    return aot(layernorm_bwd_kernel, sig, {"BLOCK_N": triton.next_power_of_2(cols), "SINGLE": True}, cc=cc,
               num_warps=num_warps or L.bwd_default(cols)["num_warps"],
               divisible_by_16=("x_ptr", "w_ptr", "dy_ptr", "mean_ptr", "rstd_ptr", "dx_ptr", "dw_part_ptr",
                                "db_part_ptr", "n_cols", "x_row_stride", "dy_row_stride", "dx_row_stride"))


def compile_table(arch: str) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = []
    for kind, dtype, extra in (("fwd", "float32", None), ("fwd", "bfloat16", None),
                               ("fwd", "float32", {"BLOCK_M": 4, "num_warps": 16}), ("bwd", "float32", None),
                               ("bwd", "bfloat16", None)):
        k = aot_fwd(cc, dtype, 4096, extra) if kind == "fwd" else aot_bwd(cc, dtype, 4096, extra)
        s = summarize(k)
        threads = 32 * s["num_warps"]
        bm = (extra or L.fwd_default(4096))["BLOCK_M"] if kind == "fwd" else 1
        rows.append({"kernel": kind, "dtype": dtype, "rows/program": bm if kind == "fwd" else "strided loop",
                     "warps": s["num_warps"], "regs": s["regs"], "local B": s["local"], "shared B": s["shared"],
                     "programs/SM": (occupancy(arch, threads, s["regs"], smem_dynamic=s["shared"]).blocks_per_sm
                                     if s["regs"] else None),
                     "global loads": load_summary(s)})
    return rows


def compile_report(args) -> None:
    report.print_table(compile_table(args.arch), title=f"layernorm kernels compiled ahead of time for {args.arch}, "
                                                       "N = 4096 (aligned, N % 16 == 0)")
    print("  The backward holds x, dy, w, xhat and two accumulators per element: more registers, fewer programs per "
          "SM;\n  G = programs_per_sm x SMs programs walk the rows, so the partial dw/db buffer has G rows.")


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_SHAPE = (32768, 4096)
TARGETS = [("fwd", "float32", 1.0), ("fwd", "bfloat16", 1.3), ("bwd", "float32", 1.0), ("bwd", "bfloat16", 1.0)]
FWD_CANDIDATES = [{"BLOCK_M": bm, "num_warps": w} for bm, w in ((1, 8), (2, 8), (2, 16), (4, 16))]
BWD_CANDIDATES = [{"programs_per_sm": g, "num_warps": w} for g, w in ((1, 8), (2, 8), (4, 8), (2, 16))]


@functools.lru_cache(maxsize=None)
def compiled_peers():
    """torch.compile'd forward (F.layer_norm) and backward (aten.native_layer_norm_backward), dynamic=False."""
    import torch
    import torch.nn.functional as F

    fwd = torch.compile(lambda x, w, b: F.layer_norm(x, (x.shape[-1],), w, b, L.EPS), dynamic=False)
    bwd = torch.compile(lambda dy, x, mean, rstd, w, b: torch.ops.aten.native_layer_norm_backward(
        dy, x, [x.shape[-1]], mean, rstd, w, b, [True, True, True]), dynamic=False)
    return fwd, bwd


def tune_config(kind: str, x, w, b, dy, candidates) -> list[dict]:
    """Time each candidate config once at this shape, keep the fastest in TUNED, return the timings."""
    n, dt = int(x.shape[-1]), arrays.dtype_name(x)
    y, mean, rstd = L.layernorm_fwd(x, w, b)
    rows = []
    for cfg in cli.progress(candidates, f"{kind} configs"):
        if kind == "fwd":
            fn = (lambda c=cfg: L.layernorm_fwd(x, w, b, out=(y, mean, rstd), config=c))
        else:
            fn = (lambda c=cfg: L.layernorm_bwd(dy, x, w, mean, rstd, config=c))
        t = bench.bench(fn, rep_ms=40)
        rows.append({"kind": kind, "dtype": dt, "config": cfg, "ms": t.median_ms})
    best = min(rows, key=lambda r: r["ms"])
    L.TUNED[(kind, n, dt)] = best["config"]
    return rows


def check_big(x, w, b, dy, n_rows: int = 128) -> check.Comparison:
    """Forward and backward at a benchmark shape, against float64 torch on the GPU (rows sampled for y and dx; dw
    and db need every row and are compared whole)."""
    import torch

    dt = arrays.dtype_name(x)
    y, mean, rstd, dx, dw, db = L.layernorm_triton(x, w, b, dy)
    t64 = [(L._torch_view(a)).double() for a in (x, w, b, dy)]
    xx, ww, bb, gg = t64
    mu = xx.mean(dim=1)
    xc = xx - mu[:, None]
    rs = 1.0 / torch.sqrt((xc * xc).mean(dim=1) + L.EPS)
    xhat = xc * rs[:, None]
    wdy = ww * gg
    m = int(x.shape[0])
    rows = torch.as_tensor(np.unique(np.concatenate([check.rng(13).integers(0, m, n_rows), [m - 1]])),
                           device=xx.device)
    c1 = (xhat[rows] * wdy[rows]).mean(dim=1)
    c2 = wdy[rows].mean(dim=1)
    ref = {"y": (xhat[rows] * ww + bb), "mean": mu[rows], "rstd": rs[rows],
           "dx": rs[rows][:, None] * (wdy[rows] - xhat[rows] * c1[:, None] - c2[:, None]),
           "dw": (gg * xhat).sum(dim=0), "db": gg.sum(dim=0)}
    got = {"y": L._torch_view(y)[rows], "mean": L._torch_view(mean)[rows], "rstd": L._torch_view(rstd)[rows],
           "dx": L._torch_view(dx)[rows], "dw": L._torch_view(dw), "db": L._torch_view(db)}
    worst = None
    for k in ref:
        c = check.compare(got[k].float().cpu().numpy(), ref[k].cpu().numpy(), dt)
        if not c.ok:
            return check.Comparison(False, c.rel_norm_err, c.max_abs_err, c.n_bad, c.n, f"{k}: {c.message}")
        worst = c if worst is None or c.rel_norm_err > worst.rel_norm_err else worst
    return worst


def bench_targets(ceiling: float, rounds: int = 3, do_tune: bool = True) -> tuple[list[dict], list[dict], list]:
    import torch
    import torch.nn.functional as F

    m, n = TARGET_SHAPE
    rows, targets, tuning = [], [], []
    fwd_c, bwd_c = compiled_peers()
    for dtype in ("float32", "bfloat16"):
        x = device_randn(TARGET_SHAPE, dtype, 21, scale=2.0, shift=3.0)
        w = device_randn((n,), dtype, 22, scale=0.2, shift=1.0)
        b = device_randn((n,), dtype, 23, scale=0.5)
        dy = device_randn(TARGET_SHAPE, dtype, 24)
        tx, tw, tb, tdy = (L._torch_view(a) for a in (x, w, b, dy))
        elt = arrays.ITEMSIZE[dtype]
        if do_tune:
            tuning += (tune_config("fwd", x, w, b, dy, FWD_CANDIDATES)
                       + tune_config("bwd", x, w, b, dy, BWD_CANDIDATES))
        c = check_big(x, w, b, dy)
        y, mean, rstd = L.layernorm_fwd(x, w, b)
        _, tmean, trstd = torch.native_layer_norm(tx, [n], tw, tb, L.EPS)
        fwd_c(tx, tw, tb)
        bwd_c(tdy, tx, tmean, trstd, tw, tb)                     # compile both outside the timings
        fwd_fns = {"triton fwd": lambda: L.layernorm_fwd(x, w, b, out=(y, mean, rstd)),
                   "torch eager F.layer_norm": lambda: F.layer_norm(tx, (n,), tw, tb, L.EPS),
                   "torch.compile F.layer_norm": lambda: fwd_c(tx, tw, tb)}
        bwd_fns = {"triton bwd": lambda: L.layernorm_bwd(dy, x, w, mean, rstd),
                   "torch eager native_layer_norm_backward": lambda: torch.ops.aten.native_layer_norm_backward(
                       tdy, tx, [n], tmean, trstd, tw, tb, [True, True, True]),
                   "torch.compile backward": lambda: bwd_c(tdy, tx, tmean, trstd, tw, tb)}
        for kind, fns, nbytes in (("fwd", fwd_fns, 2 * m * n * elt + 2 * n * elt + 8 * m),
                                  ("bwd", bwd_fns, 3 * m * n * elt + 3 * n * elt + 8 * m)):
            ts_ = bench.interleaved(fns, rounds=rounds)
            comp = next(k for k in ts_ if "compile" in k)
            mine = next(k for k in ts_ if k.startswith("triton"))
            for name, t in ts_.items():
                impl = "triton" if name.startswith("triton") else "peer"
                rows.append(report.row(L.LAB, name, impl, TARGET_SHAPE, dtype, t, nbytes=nbytes, ceiling_gbps=ceiling,
                                       vs_compile=ts_[comp].median_ms / t.median_ms,
                                       config=str(L.TUNED.get((kind, n, dtype), "default")) if impl == "triton" else "",
                                       check=("ok" if c.ok else c.message) if impl == "triton" else ""))
            goal = next(g for k_, d_, g in TARGETS if k_ == kind and d_ == dtype)
            ratio = ts_[comp].median_ms / ts_[mine].median_ms
            eager = next(k for k in ts_ if "eager" in k)
            targets.append({"case": f"layernorm {kind} {m}x{n} {dtype}", "peer": "torch.compile",
                            "triton GB/s": ts_[mine].gbps(nbytes), "peer GB/s": ts_[comp].gbps(nbytes),
                            "ratio": ratio, "vs eager": ts_[eager].median_ms / ts_[mine].median_ms,
                            "target": f">= {goal:.1f}", "met": ratio >= goal and c.ok})
    return rows, targets, tuning


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()["hbm_gbps"]
    rows, targets, tuning = bench_targets(ceiling, rounds=1 if ctx.quick else 3, do_tune=not ctx.quick)
    tables = [(rows, ["variant", "dtype", "ms", "gbps", "frac_ceiling", "vs_compile", "config", "check"],
               f"LayerNorm {TARGET_SHAPE[0]} x {TARGET_SHAPE[1]} (GB/s counts the bytes that must move: fwd 2 MN, bwd "
               "3 MN elements, for every contender)")]
    if tuning:
        tables.append(([dict(r, config=str(r["config"])) for r in tuning], None,
                       "Tuning at the target shape (one timing per candidate; the fastest is used above)"))
    tables.append((targets, None, "Performance targets"))
    meta = dict(targets=targets, tuning=tuning, compile_report=compile_table(ctx.args.arch), ceiling_gbps=ceiling,
                device=device.info().as_dict())
    # exit status 1 = a correctness check failed (a missed performance target is reported, not an error)
    ok = all(r.get("check") in ("", "ok") for r in rows)
    return lab.Result(rows=rows, meta=meta, tables=tables, ok=ok)


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    """Every contender's GB/s (the bytes that must move), forward and backward, fp32 and bf16, against the ceiling."""
    rows, ceiling = data["rows"], data["ceiling_gbps"]
    shape = "x".join(str(s) for s in rows[0]["shape"]) if rows else ""
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_bars(path, [f"{r['variant']} {r['dtype']}" for r in rows], [r["gbps"] for r in rows],
                             ylabel="GB/s (bytes that must move)",
                             title=f"LayerNorm {shape} on {data.get('gpu', 'GPU')}",
                             colors=[report.IMPL_COLORS.get(r["impl"], "gray") for r in rows],
                             hlines={f"HBM ceiling {ceiling:.0f}": ceiling})]
