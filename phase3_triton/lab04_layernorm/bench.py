"""Lab 3.4's measuring side: what the compiler made of the forward and backward kernels (ahead of time, no GPU needed,
with the programs per SM from common.occupancy), the configs tuned at the target shape, forward and backward against
torch eager and torch.compile in interleaved rounds with a check of the benchmarked result, and the plot (redrawn from
the JSON by --replot)."""
from __future__ import annotations

import contextlib
import functools
import os

import numpy as np

from common import arrays, bench, check, cli, device, lab, plan, report, table, target, tuned
from common.i18n import tr
from common import config as cfgmod
from common.arrays import device_randn
from common.occupancy import occupancy
from common.triton_support import aot, load_summary, summarize, triton

from . import lab as L
from .triton_kernels import layernorm_bwd_kernel, layernorm_fwd_kernel, layernorm_fwd_welford_kernel

CPU_NOTE = ("\nThe Triton kernels ran in the interpreter (forward, backward and the column reduction, single-piece and "
            "looped paths,\nthe two-pass Welford forward; fp32 / bf16 / fp16 / fp64). Tuning, timing and the torch "
            "peers need a GPU.")


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report
# ---------------------------------------------------------------------------------------------------------------------
_TY = L._TY
_DIVISIBLE = ("x_ptr", "w_ptr", "b_ptr", "y_ptr", "mean_ptr", "rstd_ptr", "n_cols", "x_row_stride", "y_row_stride")
_BWD_DIVISIBLE = ("x_ptr", "w_ptr", "dy_ptr", "mean_ptr", "rstd_ptr", "dx_ptr", "dw_part_ptr", "db_part_ptr", "n_cols",
                  "x_row_stride", "dy_row_stride", "dx_row_stride")


def aot_fwd(cc: int, dtype: str = "float32", cols: int = 4096, cfg: dict | None = None):
    cfg = cfg or L.fwd_default(cols)
    bn = triton.next_power_of_2(cols)
    return aot(layernorm_fwd_kernel, L.fwd_signature(dtype), {"BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": bn, "SINGLE": True,
                                                              "PERSIST": bool(cfg.get("PERSIST"))}, cc=cc,
               num_warps=cfg["num_warps"], divisible_by_16=_DIVISIBLE)


def aot_fwd_welford(cc: int, dtype: str = "float32", cols: int = 4096, block_n: int = 2048, num_warps: int = 8):
    """layernorm_fwd_welford_kernel as the wrapper launches it at this width (EVEN_N when the chunk divides it)."""
    chunk = min(block_n, max(16, triton.next_power_of_2(cols)))
    return aot(layernorm_fwd_welford_kernel, L.fwd_signature(dtype, welford=True),
               {"BLOCK_N": chunk, "EVEN_N": cols % chunk == 0}, cc=cc, num_warps=num_warps, divisible_by_16=_DIVISIBLE)


def aot_bwd(cc: int, dtype: str = "float32", cols: int = 4096, num_warps: int | None = None):
    return aot(layernorm_bwd_kernel, L.bwd_signature(dtype), {"BLOCK_N": triton.next_power_of_2(cols), "SINGLE": True},
               cc=cc, num_warps=num_warps or L.bwd_default(cols)["num_warps"], divisible_by_16=_BWD_DIVISIBLE)


COMPILE_N = 4096


def compile_cases() -> list[tuple[str, str, object, dict, int, object]]:
    """The compile table's builds at N = COMPILE_N, as the wrappers launch them (lab.fwd_launch, lab.bwd_launch):
    (kernel column, dtype, kernel, constexprs, warps, rows/program). The forward's default, in bf16, with 4 rows a
    program, with the long-row path forced (the looped variant's: chunks of a quarter row) and the two-pass Welford
    variant's; the backward's default, in bf16 and with its long-row path forced."""
    n, out = COMPILE_N, []
    fwd_cases = [("float32", None, False), ("bfloat16", None, False),
                 ("float32", {"BLOCK_M": 4, "num_warps": 16}, False), ("float32", None, True),
                 ("float32", L.welford_forced_config(n), False)]
    for dtype, cfg, looped in fwd_cases:
        with L.long_rows_forced(n) if looped else contextlib.nullcontext():
            kernel, _, const, warps = L.fwd_launch(1, n, cfg or L.fwd_default(n), 1)
        welford = kernel is layernorm_fwd_welford_kernel
        label = "fwd welford" if welford else "fwd" if const["SINGLE"] else "fwd chunked"
        out.append((label, dtype, kernel, const, warps,
                    f"1, chunks of {const['BLOCK_N']}" if welford or not const["SINGLE"] else const["BLOCK_M"]))
    for dtype, looped in (("float32", False), ("bfloat16", False), ("float32", True)):
        with L.long_rows_forced(n) if looped else contextlib.nullcontext():
            _, const, warps = L.bwd_launch(1, n, L.bwd_default(n), 1)
        out.append(("bwd" if const["SINGLE"] else "bwd chunked", dtype, layernorm_bwd_kernel, const, warps,
                    "strided loop"))
    return out


def _signature(kernel, dtype: str) -> dict:
    if kernel is layernorm_bwd_kernel:
        return L.bwd_signature(dtype)
    return L.fwd_signature(dtype, welford=kernel is layernorm_fwd_welford_kernel)


def case_users(arch: str) -> list[list[str]]:
    """The correctness-table variants that launch each build of compile_table (the lab's plan for `arch`: the same
    kernel, dtype, constexprs and warps); [] for a build no variant launches (a study point)."""
    return [plan.build_users(__package__, arch, kernel.__name__, const, signature=_signature(kernel, dtype),
                             num_warps=warps) for _, dtype, kernel, const, warps, _ in compile_cases()]


def compile_table(arch: str) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = []
    for label, dtype, kernel, const, warps, rpp in compile_cases():
        k = aot(kernel, _signature(kernel, dtype), const, cc=cc, num_warps=warps,
                divisible_by_16=_BWD_DIVISIBLE if kernel is layernorm_bwd_kernel else _DIVISIBLE)
        s = summarize(k)
        threads = 32 * s["num_warps"]
        rows.append({"kernel": label, "dtype": dtype, "rows/program": rpp,
                     "warps": s["num_warps"], "regs": s["regs"], "local B": s["local"], "shared B": s["shared"],
                     "programs/SM": (occupancy(arch, threads, s["regs"], smem_dynamic=s["shared"]).blocks_per_sm
                                     if s["regs"] else None),
                     "global loads": load_summary(s)})
    return rows


def compile_report(args) -> None:
    table.print_kernel_table([dict(r, **{"rows/program": _say_rows(r["rows/program"])})
                              for r in compile_table(args.arch)],
                             title=tr("layernorm kernels compiled ahead of time for {arch}, N = 4096 (aligned, N % 16 "
                                      "== 0)", arch=args.arch),
                             used_by=case_users(args.arch), study=tr("study point: no variant launches this build"))
    print(tr("  The backward holds x, dy, w, xhat and two accumulators per element: more registers, fewer programs "
             "per SM;\n  G = programs_per_sm x SMs programs walk the rows, so the partial dw/db buffer has G rows."))


def _say_rows(v):
    """compile_table's rows/program cell as printed (the JSON keeps the English)."""
    if v == "strided loop":
        return tr("strided loop")
    if isinstance(v, str) and v.startswith("1, chunks of "):
        return tr("1, chunks of {chunk}", chunk=v.rsplit(" ", 1)[1])
    return v


LATENCY_US = 0.7        # the course's working loaded round trip to HBM (lab 1.5), for Little's law


def explain(args) -> None:
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("What the lesson predicts for {gpu}", gpu=gpu.label()))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's models for `gpu`: the floors of the forward and backward at the datasheet bandwidth, how far
    below the fp32 ridge point they sit, the bytes each SM must keep in flight (Little's law), the backward's G and its
    partial buffer, and the configuration each kernel gets here (default, tuning record or --set)."""
    bw = gpu.hbm_gbps
    out = {}
    for dtype in L.BENCH_DTYPES:
        (m, n), _ = L.fit_shape(TARGET_SHAPE, dtype, gpu)
        elt = arrays.ITEMSIZE[dtype]
        fwd, bwd = 2 * m * n * elt, 3 * m * n * elt
        out[tr("floors at {m} x {n} {dtype}: forward (2 M N) / backward (3 M N)", m=m, n=n, dtype=dtype)] = \
            tr("{fused:.3f} ms / {unfused:.3f} ms at {bw:.0f} GB/s", fused=fwd / (bw * 1e9) * 1e3,
               unfused=bwd / (bw * 1e9) * 1e3, bw=bw)
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (bw * 1e9)
        out[tr("fp32 ridge point (datasheet)")] = tr("{ridge:.0f} FLOP/B: the forward's ~1 FLOP/B is "
                                                     "{times:.0f}x below", ridge=ridge, times=ridge)
    per_sm = bw * 1e9 * LATENCY_US * 1e-6 / gpu.sms
    out[tr("bytes in flight per SM to cover a {us} us round trip ({bw:.0f} GB/s over {sms} SMs)", us=LATENCY_US, bw=bw,
           sms=gpu.sms)] = \
        tr("{kib:.0f} KiB (half of it loads: {half:.0f} KiB)", kib=per_sm / 1024, half=per_sm / 2048)
    m, n = TARGET_SHAPE
    for dtype in L.BENCH_DTYPES:
        f, b = L.fwd_config(n, dtype, gpu), L.bwd_config(n, dtype, gpu)
        g = b["BWD_PER_SM"] * gpu.sms
        out[tr("forward at {n} columns, {dtype}", n=n, dtype=dtype)] = \
            f"{config_str(f.values, said=True)} ({cfgmod.say_source(f.source())})"
        out[tr("backward at {n} columns, {dtype}: G = {per_sm} x {sms} SMs = {g}", n=n, dtype=dtype,
               per_sm=b['BWD_PER_SM'], sms=gpu.sms, g=g)] = \
            tr("{warps} warps; partial dw/db {mib:.0f} MiB, {share:.1%} of the backward's bytes ({source})",
               warps=b['BWD_WARPS'], mib=2 * g * n * 4 / 2**20,
               share=2 * g * n * 4 / (3 * m * n * arrays.ITEMSIZE[dtype]), source=cfgmod.say_source(b.source()))
    return out


def config_str(v: dict, said: bool = False) -> str:
    """A resolved forward configuration in words (said: in the chosen language; the JSON keeps the English)."""
    say = tr if said else str.format
    form = v["FWD_FORM"]
    what = {"rows": say("{rows} row(s) in registers a program", rows=v['FWD_ROWS']),
            "persistent": say("{n} persistent programs per SM", n=v['FWD_PERSIST']),
            "chunked": say("three passes, chunks of {chunk}", chunk=v['FWD_CHUNK']),
            "welford": say("two-pass Welford, chunks of {chunk}", chunk=v['FWD_CHUNK'])}.get(form, form)
    return say("{what}, {warps} warps", what=what, warps=v['FWD_WARPS'])


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_SHAPE = L.TARGET_SHAPE
TARGETS = [("fwd", "float32", 1.02), ("fwd", "bfloat16", 1.3), ("bwd", "float32", 1.0), ("bwd", "bfloat16", 1.0)]
FWD_CANDIDATES = ([{"BLOCK_M": bm, "num_warps": w} for bm, w in ((1, 8), (1, 16), (2, 8), (2, 16), (4, 16))]
                  + [{"SINGLE": False, "BLOCK_N": bn, "num_warps": w} for bn in (1024, 2048, 4096) for w in (4, 8, 16)]
                  # persistent rows-in-registers programs that prefetch their next row
                  + [{"BLOCK_M": 1, "PERSIST": p, "num_warps": w} for p, w in ((2, 8), (4, 8), (2, 16), (4, 4), (8, 4))]
                  # two passes with Welford statistics (few registers, high occupancy): 4 values a thread per chunk
                  # (512/4, 1024/8, 2048/16), then 8 (1024/4, 2048/8, 4096/16)
                  + [{"WELFORD": True, "BLOCK_N": bn, "num_warps": w}
                     for bn, w in ((512, 4), (1024, 8), (2048, 16), (1024, 4), (2048, 8), (4096, 16))])
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


def tune_config(kind: str, x, w, b, dy, candidates, peer=None, rounds: int = 3) -> tuple[list[dict], dict | None]:
    """Each candidate config at this shape, checked against float64 (check_big), then all of them timed in
    interleaved rounds (with `peer`, a {name: fn} of the torch.compile contender, when given). Returns (rows, the
    fastest config that passed its check, or None)."""
    dt = arrays.dtype_name(x)
    y, mean, rstd = L.layernorm_fwd(x, w, b)
    rows, fns = [], dict(peer or {})
    for cfg in cli.progress(candidates, tr("{kind} configs (checked)", kind=kind)):
        c = check_big(x, w, b, dy, n_rows=16, **{f"{kind}_config": cfg})
        if not c.ok:
            rows.append({"kind": kind, "dtype": dt, "config": cfg, "ms": None, "result": f"check failed: {c.message}"})
            continue
        if kind == "fwd":
            fns[str(cfg)] = (lambda c_=cfg: L.layernorm_fwd(x, w, b, out=(y, mean, rstd), config=c_))
        else:
            fns[str(cfg)] = (lambda c_=cfg: L.layernorm_bwd(dy, x, w, mean, rstd, config=c_))
    ts_ = bench.interleaved(fns, rounds=rounds, rep_ms=40)
    base = next((t for k_, t in ts_.items() if k_ in (peer or {})), None)
    for k_, t in ts_.items():
        cfg = next((c for c in candidates if str(c) == k_), None)
        rows.append({"kind": kind, "dtype": dt, "config": cfg if cfg else k_, "ms": t.median_ms,
                     "spread": round(t.spread, 4), "vs_compile": base.median_ms / t.median_ms if base else None,
                     "result": "ok"})
    timed = [r for r in rows if r["ms"] is not None and isinstance(r["config"], dict)]
    best = min(timed, key=lambda r: r["ms"])["config"] if timed else None
    for r in rows:
        r["winner"] = r["config"] == best
    return rows, best


def tune(ctx) -> lab.Result:
    """--tune: the forward's candidates (rows in registers: rows per program and warps; the chunked loop and the
    two-pass Welford kernel: chunk and warps) and the backward's (programs per SM, warps) at the target shape, per
    dtype, each checked and then timed in interleaved rounds with torch.compile; the winners go to
    results/<gpu>/phase3_lab04_layernorm_tuned.json, which the wrappers read."""
    m, n = TARGET_SHAPE
    fwd_c, bwd_c = compiled_peers()
    rows, winners = [], {}
    for dtype in ("float32", "bfloat16"):
        x = device_randn(TARGET_SHAPE, dtype, 21, scale=2.0, shift=3.0)
        w = device_randn((n,), dtype, 22, scale=0.2, shift=1.0)
        b = device_randn((n,), dtype, 23, scale=0.5)
        dy = device_randn(TARGET_SHAPE, dtype, 24)
        tx, tw, tb = (L._torch_view(a) for a in (x, w, b))
        fwd_c(tx, tw, tb)
        for kind, cands, peer in (("fwd", FWD_CANDIDATES, {"torch.compile": lambda: fwd_c(tx, tw, tb)}),
                                  ("bwd", BWD_CANDIDATES, None)):
            r, best = tune_config(kind, x, w, b, dy, cands, peer=peer)
            rows += r
            if best is not None:
                winners[f"{kind} {dtype} {triton.next_power_of_2(n)}"] = best
        del x, w, b, dy
    tuned.forget()
    print(tr("winners: {list} (recorded; used from now on)", list="; ".join(f"{k}: {v}" for k, v in winners.items())))
    return lab.Result(rows=rows, name=L.TUNED, meta=dict(winner=winners, shape=list(TARGET_SHAPE)),
                      tables=[([dict(r, config=str(r["config"])) for r in said_results(rows)], None,
                               tr("Tuning at {m} x {n} (each config checked, then interleaved rounds)", m=m, n=n))])


def said_results(rows: list[dict]) -> list[dict]:
    """--tune rows as printed: a failed check's result in the chosen language (the JSON keeps the English)."""
    return [dict(r, result=tr("check failed: {message}", message=r["result"][len("check failed: "):]))
            if str(r.get("result", "")).startswith("check failed: ") else r for r in rows]


def check_big(x, w, b, dy, n_rows: int = 128, fwd_config: dict | None = None,
              bwd_config: dict | None = None) -> check.Comparison:
    """Forward and backward at a benchmark shape (with the given configs, else the ones in use), against float64
    torch on the GPU (rows sampled for y and dx; dw and db need every row and are compared whole)."""
    import torch

    dt = arrays.dtype_name(x)
    y, mean, rstd = L.layernorm_fwd(x, w, b, config=fwd_config)
    dx, dw, db = L.layernorm_bwd(dy, x, w, mean, rstd, config=bwd_config)
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


def bench_targets(ceiling: float, rounds: int = 5) -> tuple[list[dict], list[target.Target]]:
    import torch
    import torch.nn.functional as F

    rows, targets = [], []
    fwd_c, bwd_c = compiled_peers()
    for dtype in L.BENCH_DTYPES:
        shape, note = L.fit_shape(TARGET_SHAPE, dtype, device.info())
        if note:
            print(tr(note))
        m, n = shape
        x = device_randn(shape, dtype, 21, scale=2.0, shift=3.0)
        w = device_randn((n,), dtype, 22, scale=0.2, shift=1.0)
        b = device_randn((n,), dtype, 23, scale=0.5)
        dy = device_randn(shape, dtype, 24)
        tx, tw, tb, tdy = (L._torch_view(a) for a in (x, w, b, dy))
        elt = arrays.ITEMSIZE[dtype]
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
            ts_, tries, steady = bench.steady(fns, rounds=rounds)
            comp = next(k for k in ts_ if "compile" in k)
            mine = next(k for k in ts_ if k.startswith("triton"))
            for name, t in ts_.items():
                impl = "triton" if name.startswith("triton") else "peer"
                rows.append(report.row(L.LAB, name, impl, shape, dtype, t, nbytes=nbytes, ceiling_gbps=ceiling,
                                       vs_compile=ts_[comp].median_ms / t.median_ms,
                                       config=(config_str(L.fwd_config(n, dtype).values) if kind == "fwd" else
                                               cfgmod.fmt(L.bwd_config(n, dtype).values)) if impl == "triton" else "",
                                       check=("ok" if c.ok else c.message) if impl == "triton" else "",
                                       rounds_run=tries, steady=steady))
            goal = next(g for k_, d_, g in TARGETS if k_ == kind and d_ == dtype)
            ratio = ts_[comp].median_ms / ts_[mine].median_ms
            eager = next(k for k in ts_ if "eager" in k)
            targets.append(target.versus(f"layernorm {kind} {m}x{n} {dtype}", mine, "torch.compile", ratio,
                                         steady=steady, at_least=goal, checked=c.ok,
                                         detail={"triton GB/s": ts_[mine].gbps(nbytes),
                                                 "peer GB/s": ts_[comp].gbps(nbytes),
                                                 "vs eager": ts_[eager].median_ms / ts_[mine].median_ms,
                                                 "rounds_run": tries}))
    return rows, targets


def add_arguments(p) -> None:
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) time the forward and backward configs at the target shape and record this GPU's "
                           "winners"))


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()["hbm_gbps"]
    rows, targets = bench_targets(ceiling, rounds=1 if ctx.quick else 5)
    tables = [(rows, ["variant", "dtype", "ms", "gbps", "frac_ceiling", "vs_compile", "spread", "config", "check"],
               tr("LayerNorm {m} x {n} (GB/s counts the bytes that must move: fwd 2 MN, bwd 3 MN elements, for every "
                  "contender; Triton configs: {source})", m=TARGET_SHAPE[0], n=TARGET_SHAPE[1],
                  source=cfgmod.say_source(L.tuned_source())))]
    tables.append((target.said(targets), None, tr("Performance targets")))
    meta = dict(targets=target.records(targets), compile_report=compile_table(ctx.args.arch), ceiling_gbps=ceiling,
                device=device.info().as_dict(), tuned_source=L.tuned_source())
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
                             title=tr("LayerNorm {shape} on {gpu}", shape=shape, gpu=data.get('gpu', 'GPU')),
                             colors=[report.IMPL_COLORS.get(r["impl"], "gray") for r in rows],
                             hlines={tr("HBM ceiling {gbps:.0f}", gbps=ceiling): ceiling})]
