"""Lab 3.3's measuring side: the bytes each implementation moves, what the compiler made of the kernels (ahead of
time, no GPU needed, with the programs per SM from common.occupancy), the fused kernel's rows-per-program and warps
tuned at the target shape, the targets against torch.compile in interleaved rounds (with phase 2's CUDA C softmax
beside them), a row-length sweep, and the plot (redrawn from the JSON by --replot)."""
from __future__ import annotations

import os

import numpy as np

from common import arrays, bench, check, cli, config, device, lab, plan, report, table, target, tuned
from common.i18n import tr
from common.arrays import device_randn
from common.bench import runs
from common.occupancy import occupancy
from common.triton_support import aot, load_summary, summarize, triton

from . import lab as L
from .triton_kernels import softmax_online_kernel, softmax_rows_kernel

CPU_NOTE = ("\nThe Triton kernels ran in the interpreter (small shapes, -inf entries and outliers included); timing "
            "and the torch peers need a GPU.")


def bytes_table(shape=None) -> list[dict]:
    """Bytes each implementation moves at the target shape (a pass = every element read or written once)."""
    m, n = shape or TARGET_SHAPE
    return [{"implementation": "torch unfused ops (max, sub, exp, sum, div)", "passes": L.UNFUSED_PASSES,
             "fp32 GB": L.UNFUSED_PASSES * m * n * 4 / 1e9, "bf16 GB": L.UNFUSED_PASSES * m * n * 2 / 1e9},
            {"implementation": "fused (one read, one write)", "passes": 2, "fp32 GB": 2 * m * n * 4 / 1e9,
             "bf16 GB": 2 * m * n * 2 / 1e9},
            {"implementation": "online (two reads, one write)", "passes": 3, "fp32 GB": 3 * m * n * 4 / 1e9,
             "bf16 GB": 3 * m * n * 2 / 1e9}]


def explain(args) -> None:
    m, n = TARGET_SHAPE
    report.print_table([dict(r, implementation=tr(r["implementation"])) for r in bytes_table()],
                       title=tr("Bytes each implementation moves at {m} x {n} (a pass = every element read or written "
                                "once)", m=m, n=n))
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("What the lesson predicts for {gpu}", gpu=gpu.label()))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's models for `gpu`: the floor of each target (two passes over the matrix at the datasheet
    bandwidth) and of the unfused sequence, how far below the fp32 ridge point softmax sits, whether the rows the
    online kernel's resident programs hold fit in L2 (its second read is then an L2 hit), and which kernel
    softmax_triton runs at the target row length here."""
    bw = gpu.hbm_gbps
    out = {}
    for dtype in L.BENCH_DTYPES:
        (m, n), _ = L.fit_shape(TARGET_SHAPE, dtype, gpu)
        elt = arrays.ITEMSIZE[dtype]
        fused, unfused = 2 * m * n * elt, L.UNFUSED_PASSES * m * n * elt
        out[tr("floor at {m} x {n} {dtype}: fused (2 passes) / unfused torch ({passes} passes)", m=m, n=n,
               dtype=dtype, passes=L.UNFUSED_PASSES)] = \
            tr("{fused:.3f} ms / {unfused:.3f} ms at {bw:.0f} GB/s", fused=fused / (bw * 1e9) * 1e3,
               unfused=unfused / (bw * 1e9) * 1e3, bw=bw)
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (bw * 1e9)
        out[tr("fp32 ridge point (datasheet)")] = tr("{ridge:.0f} FLOP/B: softmax's ~0.6 FLOP/B is {times:.0f}x below",
                                                     ridge=ridge, times=ridge / 0.6)
    m, n = TARGET_SHAPE
    warps = L.online_warps(L.ONLINE_BLOCK)
    resident = gpu.sms * (gpu.max_threads_per_sm // (32 * warps))
    held = resident * n * 4
    out[tr("rows held by the online kernel's resident programs ({resident} = {sms} SMs x {per_sm}, fp32 rows of "
           "{n})", resident=resident, sms=gpu.sms, per_sm=gpu.max_threads_per_sm // (32 * warps), n=n)] = \
        (tr("{held:.1f} MiB against {l2:.0f} MiB of L2: ", held=held / 2**20, l2=gpu.l2_bytes / 2**20)
         + (tr("its second read should hit L2") if held <= gpu.l2_bytes / 2 else tr("its second read may miss L2")))
    for dtype in L.BENCH_DTYPES:
        res = L.softmax_config(n, dtype, gpu=gpu)
        out[tr("softmax_triton at {n} columns, {dtype}", n=n, dtype=dtype)] = \
            f"{config_str(res.values, said=True)} ({config.say_source(res.source())})"
    return out


def config_str(v: dict, said: bool = False) -> str:
    """One resolved softmax configuration in words (said: in the chosen language; the JSON keeps the English)."""
    say = tr if said else str.format
    if v["KERNEL"] == "online":
        return say("online, chunks of {chunk}, {warps} warps", chunk=v['CHUNK'], warps=v['WARPS'])
    return say("fused, {rows} row(s) a program, {warps} warps", rows=v['ROWS'], warps=v['WARPS'])


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compile report
# ---------------------------------------------------------------------------------------------------------------------
_TY = L._TY


def aot_rows(cc: int, dtype: str = "float32", cols: int = 4096, num_warps: int | None = None):
    """The fused kernel as a launch on a contiguous (rows, cols) array with cols % 16 == 0 compiles it."""
    bm, bn, nw = L.rows_config(cols)
    return aot(softmax_rows_kernel, L.rows_signature(dtype), {"BLOCK_M": bm, "BLOCK_N": bn}, cc=cc,
               num_warps=num_warps or nw, divisible_by_16=("x_ptr", "y_ptr", "n_cols", "x_row_stride", "y_row_stride"))


def aot_online(cc: int, dtype: str = "float32", block_n: int = L.ONLINE_BLOCK, num_warps: int = 8):
    return aot(softmax_online_kernel, L.online_signature(dtype), {"BLOCK_N": block_n}, cc=cc, num_warps=num_warps,
               divisible_by_16=("x_ptr", "y_ptr", "n_cols", "x_row_stride", "y_row_stride"))


def programs_per_sm(s: dict, arch: str) -> int | None:
    """Programs of a compiled kernel (a summarize() result) one SM holds at once (common.occupancy; Triton's shared
    memory is dynamic); None without a register count (no cuobjdump)."""
    if not s["regs"]:
        return None
    return occupancy(arch, 32 * s["num_warps"], s["regs"], smem_dynamic=s["shared"]).blocks_per_sm


# The compile table's builds: (kernel, dtype, columns (the online kernel: its chunk), warps (None: the default)); the
# last is the online variant's own at 4096 columns (a quarter row a step)
COMPILE_CASES = [("fused", "float32", 4096, None), ("fused", "bfloat16", 4096, None), ("fused", "float32", 4096, 4),
                 ("fused", "float32", 4096, 16), ("fused", "float32", 16384, None), ("fused", "float32", 128, None),
                 ("online", "float32", L.ONLINE_BLOCK, 8),
                 ("online", "float32", L.forced_online_chunk(4096), L.online_warps(L.forced_online_chunk(4096)))]


def case_users(arch: str) -> list[list[str]]:
    """The correctness-table variants that launch each build of compile_table (the lab's plan for `arch`: the same
    kernel, dtype, tile and warps); [] for a build no variant launches (a study point)."""
    out = []
    for kind, dtype, cols, warps in COMPILE_CASES:
        if kind == "fused":
            bm, bn, nw = L.rows_config(cols)
            out.append(plan.build_users(__package__, arch, "softmax_rows_kernel", {"BLOCK_M": bm, "BLOCK_N": bn},
                                        signature=L.rows_signature(dtype), num_warps=warps or nw))
        else:
            out.append(plan.build_users(__package__, arch, "softmax_online_kernel", {"BLOCK_N": cols},
                                        signature=L.online_signature(dtype), num_warps=warps))
    return out


def compile_table(arch: str) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = []
    for kind, dtype, cols, warps in COMPILE_CASES:
        k = aot_rows(cc, dtype, cols, warps) if kind == "fused" else aot_online(cc, dtype, cols, warps)
        s = summarize(k)
        bm, bn, _ = L.rows_config(cols) if kind == "fused" else (1, cols, warps)
        threads = 32 * s["num_warps"]
        rows.append({"kernel": kind, "dtype": dtype, "tile": f"{bm}x{bn}", "warps": s["num_warps"],
                     "values/thread": bm * bn // threads, "regs": s["regs"], "local B": s["local"],
                     "shared B": s["shared"], "programs/SM": programs_per_sm(s, arch),
                     "global loads": load_summary(s)})
    return rows


def show_compile_report(arch: str) -> list[dict]:
    rows = compile_table(arch)
    table.print_kernel_table(rows, title=tr("softmax kernels compiled ahead of time for {arch} (cols % 16 == 0, "
                                            "aligned)", arch=arch),
                             used_by=case_users(arch), study=tr("study point: no variant launches this build"))
    print(tr("  One 16-byte load moves 4 fp32 or 8 bf16 values; a thread holding 16 values issues four (fp32) or two "
             "(bf16)\n  loads up front. programs/SM x row bytes = bytes in flight per SM, what hides HBM latency."))
    return rows


def compile_report(args) -> None:
    show_compile_report(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_SHAPE = L.TARGET_SHAPE
TARGETS = [("float32", 1.2), ("bfloat16", 2.0)]
PHASE2_SOFTMAX = "cuda 05"     # the name prefix of lab 2.7's CUDA C softmax this lab's kernel is timed beside


def _softmax_lab():
    """Lab 2.7 (imported when the benchmark runs, to keep this lab's import light)."""
    from phase2_cuda.lab07_softmax import lab as softmax_lab

    return softmax_lab
SWEEP_ELEMS = 2**26
SWEEP_COLS = [256, 1024, 4096, 16384, 32768, 65536, L.LONGEST_SWEEP_ROW]


def check_sample(out, x, dtype: str, n_rows: int = 256) -> check.Comparison:
    """Compare sampled rows (and the last one) of a big result with the float64 reference."""
    m = int(x.shape[0])
    rows = np.unique(np.concatenate([check.rng(12).integers(0, m, n_rows), [m - 1]]))
    if arrays.library(x) == "torch":
        def take(a):
            return arrays.to_numpy(a[rows.tolist()])
    else:
        import cupy

        def take(a):
            return arrays.to_numpy(a[cupy.asarray(rows)])
    return check.compare(take(out), L.reference(take(x)), dtype)


def bench_targets(ceiling: float, rounds: int = 3) -> tuple[list[dict], list[target.Target]]:
    rows, targets = [], []
    for dtype, goal in TARGETS:
        shape, note = L.fit_shape(TARGET_SHAPE, dtype, device.info())
        if note:
            print(tr(note))
        m, n = shape
        x = device_randn(shape, dtype, 5, scale=2.0)
        out = arrays.empty(shape, dtype, x)
        comp = L.compiled_softmax()
        tx = L._torch_view(x)
        comp(tx)                                     # compile outside the timing
        c = check_sample(L.softmax_triton(x, out=out), x, dtype)
        fns = {"triton (tuned)": lambda: L.softmax_triton(x, out=out), "torch.softmax": lambda: L.torch_softmax(x),
               "torch.compile": lambda: comp(tx), "torch unfused ops": lambda: L.torch_unfused(x)}
        # the same job in CUDA C: phase 2's best softmax rung, when that lab runs here
        cuda_c = lab.earlier_cuda_variant(_softmax_lab(), PHASE2_SOFTMAX, dtype)
        if cuda_c is not None:
            out_c = arrays.empty(shape, dtype, x)
            if runs(lambda: cuda_c.fn(x, out=out_c), f"phase 2 {cuda_c.name}"):
                fns[f"cuda C, phase 2 ({cuda_c.name})"] = lambda: cuda_c.fn(x, out=out_c)
        ts_, tries, steady = bench.steady(fns, rounds=rounds)
        elt = arrays.ITEMSIZE[dtype]
        nbytes = 2 * m * n * elt
        for name, t in ts_.items():
            impl = "triton" if name.startswith("triton") else ("cuda" if name.startswith("cuda") else "peer")
            rows.append(report.row(L.LAB, name, impl, shape, dtype, t, nbytes=nbytes, flops=5 * m * n,
                                   ceiling_gbps=ceiling, vs_compile=ts_["torch.compile"].median_ms / t.median_ms,
                                   moved_bytes=(L.UNFUSED_PASSES if "unfused" in name else 2) * m * n * elt,
                                   check=("ok" if c.ok else c.message) if impl == "triton" else "",
                                   config=config_str(L.softmax_config(n, dtype).values) if impl == "triton" else "",
                                   rounds_run=tries, steady=steady))
        ratio = ts_["torch.compile"].median_ms / ts_["triton (tuned)"].median_ms
        targets.append(target.versus(f"softmax {m}x{n} {dtype}", "triton (tuned)", "torch.compile", ratio,
                                     steady=steady, at_least=goal, checked=c.ok,
                                     detail={"triton GB/s": ts_["triton (tuned)"].gbps(nbytes),
                                             "peer GB/s": ts_["torch.compile"].gbps(nbytes), "rounds_run": tries,
                                             "vs unfused": ts_["torch unfused ops"].median_ms
                                             / ts_["triton (tuned)"].median_ms}))
    return rows, targets


def _kernel_of(cols: int, dtype: str = "float32") -> str:
    """Which kernel softmax_triton runs for rows of `cols` columns on this GPU (its configuration: the default, the
    tuning record, --set)."""
    return L.softmax_config(cols, dtype).values["KERNEL"]


def bench_sweep(ceiling: float, cols_list=SWEEP_COLS) -> list[dict]:
    rows = []
    for cols in cli.progress(cols_list, "row lengths"):
        shape = (SWEEP_ELEMS // cols, cols)
        x = device_randn(shape, "float32", cols, scale=2.0)
        out = arrays.empty(shape, "float32", x)
        for name, fn in (("triton", lambda: L.softmax_triton(x, out=out)),
                         ("torch.softmax", lambda: L.torch_softmax(x))):
            t = bench.bench(fn)
            rows.append(report.row(L.LAB, name, "triton" if name == "triton" else "peer", shape, "float32", t,
                                   nbytes=2 * x.size * 4, ceiling_gbps=ceiling, cols=cols,
                                   kernel=_kernel_of(cols) if name == "triton" else ""))
    return rows


CANDIDATES = ([{"kernel": "fused", "BLOCK_M": bm, "num_warps": w} for bm, w in ((1, 4), (1, 8), (1, 16), (2, 8),
                                                                                 (2, 16))]
              + [{"kernel": "online", "BLOCK_N": bn, "num_warps": w} for bn in (1024, 2048, 4096) for w in (4, 8, 16)])


def _label(cfg: dict) -> str:
    if cfg["kernel"] == "fused":
        return f"fused rows={cfg['BLOCK_M']} warps={cfg['num_warps']}"
    return f"online chunk={cfg['BLOCK_N']} warps={cfg['num_warps']}"


def add_arguments(p) -> None:
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) time both kernels' configs at the target shape and record this GPU's winners"))


def tune(ctx) -> lab.Result:
    """--tune: every candidate (the fused kernel's rows per program and warps, the online kernel's chunk and warps) at
    the target shape, per dtype, checked against float64 on sampled rows, then timed in interleaved rounds; the
    fastest per dtype is recorded in results/<gpu>/phase3_lab03_fused_softmax_tuned.json, which softmax_triton reads.
    What triton.autotune would do, in the open, and kept: the next run (and every test) uses the recorded winner."""
    ceiling = ctx.ceiling()["hbm_gbps"]
    rows, winners = [], {}
    m, n = TARGET_SHAPE
    for dtype, _ in TARGETS:
        x = device_randn(TARGET_SHAPE, dtype, 6, scale=2.0)
        out = arrays.empty(TARGET_SHAPE, dtype, x)
        comp = L.compiled_softmax()
        tx = L._torch_view(x)
        fns = {"torch.compile": lambda: comp(tx)}
        for cfg in cli.progress(CANDIDATES, tr("{dtype} configs (checked)", dtype=dtype)):
            fn = (lambda c=cfg: L.softmax_triton(x, out=out, config=c))
            arrays.fill(out, float("nan"))
            c = check_sample(fn(), x, dtype)
            if not c.ok:
                rows.append({"variant": f"triton {_label(cfg)}", "dtype": dtype, "config": dict(cfg),
                             "result": f"check failed: {c.message}"})
                continue
            fns[_label(cfg)] = fn
        ts_ = bench.interleaved(fns, rounds=3, rep_ms=40)
        timed = [(ts_[_label(c)].median_ms, c) for c in CANDIDATES if _label(c) in ts_]
        best = min(timed, key=lambda p: p[0])[1] if timed else None
        if best is not None:
            winners[f"{dtype} {triton.next_power_of_2(n)}"] = best
        for name, t in ts_.items():
            cfg = next((c for c in CANDIDATES if _label(c) == name), None)
            rows.append(report.row(L.LAB, name if cfg is None else f"triton {name}", "peer" if cfg is None else
                                   "triton", TARGET_SHAPE, dtype, t, nbytes=2 * arrays.nbytes(x), ceiling_gbps=ceiling,
                                   vs_compile=ts_["torch.compile"].median_ms / t.median_ms,
                                   config=dict(cfg) if cfg else "", result="ok", winner=cfg == best))
        x = out = None
    if not winners:
        print(tr("--tune: no configuration passed its check; nothing recorded"))
        return lab.Result(rows=rows, name=L.TUNED + "_failed", ok=False)
    tuned.forget()
    print(tr("winners: {list} (recorded; used from now on)",
             list="; ".join(f"{k}: {_label(v)}" for k, v in winners.items())))
    return lab.Result(rows=rows, name=L.TUNED, meta=dict(winner=winners, shape=list(TARGET_SHAPE)),
                      tables=[(said_results(rows), ["variant", "dtype", "ms", "gbps", "frac_ceiling", "vs_compile",
                                                    "spread", "winner", "result"],
                               tr("Tuning at {m} x {n} (interleaved rounds with torch.compile; each config checked "
                                  "first)", m=m, n=n))])


def said_results(rows: list[dict]) -> list[dict]:
    """--tune rows as printed: a failed check's result in the chosen language (the JSON keeps the English)."""
    return [dict(r, result=tr("check failed: {message}", message=r["result"][len("check failed: "):]))
            if str(r.get("result", "")).startswith("check failed: ") else r for r in rows]


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()["hbm_gbps"]
    rows, targets = bench_targets(ceiling, rounds=1 if ctx.quick else 5)
    sweep = bench_sweep(ceiling, SWEEP_COLS[2:4] if ctx.quick else SWEEP_COLS)
    m, n = TARGET_SHAPE
    tables = [(rows, ["variant", "dtype", "ms", "gbps", "frac_ceiling", "vs_compile", "moved_bytes", "spread",
                      "config", "check"],
               tr("Softmax {m} x {n} (GB/s counts one read + one write; measured ceiling {ceiling:.0f}; Triton "
                  "config: {source})", m=m, n=n, ceiling=ceiling, source=config.say_source(L.tuned_source()))),
              (sweep, ["variant", "kernel", "shape", "ms", "gbps", "frac_ceiling", "spread"],
               tr("Row length sweep, fp32 (past {max_fused} columns the online kernel reads each row twice)",
                  max_fused=L.MAX_FUSED))]
    tables.append((target.said(targets), None, tr("Performance targets")))
    meta = dict(targets=target.records(targets), bytes_moved=bytes_table(), compile_report=compile_table(ctx.args.arch),
                ceiling_gbps=ceiling, device=device.info().as_dict(), tuned_source=L.tuned_source())
    ok = all("MISMATCH" not in str(r.get("check", "")) for r in rows)
    return lab.Result(rows=rows + sweep, meta=meta, tables=tables, ok=ok)


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    """The row-length sweep: GB/s of the Triton kernel and torch.softmax over columns per row, fp32."""
    sweep = [r for r in data["rows"] if r.get("cols")]
    ceiling = data["ceiling_gbps"]
    cols = sorted({r["cols"] for r in sweep})
    series = {}
    for name in ("triton", "torch.softmax"):
        by = {r["cols"]: r["gbps"] for r in sweep if r["variant"] == name}
        series[name] = [by.get(c) for c in cols]
    xlabel = tr("columns per row (rows x cols = 2^{exp}, fp32)", exp=SWEEP_ELEMS.bit_length() - 1)
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_lines(path, cols, series, xlabel=xlabel, ylabel="GB/s (read + write once)",
                              title=tr("Softmax bandwidth vs row length on {gpu}", gpu=data.get('gpu', 'GPU')),
                              hlines={tr("measured HBM ceiling {gbps:.0f} GB/s", gbps=ceiling): ceiling,
                                      tr("2/3 of it (3 passes instead of 2)"): ceiling * 2 / 3},
                              vlines={f"MAX_FUSED = {L.MAX_FUSED}": L.MAX_FUSED})]
