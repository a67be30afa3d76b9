"""Lab 4.7's measuring side: the stage plan with each stage's FLOPs and bytes (every machine); on a GPU the whole
block against torch eager and torch.compile in interleaved rounds, each GEMM stage's tile picked by timing, each stage
timed alone (as a CUDA graph) next to its floor, and the plot (redrawn from the JSON by --replot)."""
from __future__ import annotations

import os
import re
import textwrap
import time

import numpy as np

from common import bench, check, cli, device, lab, report, target
from common.i18n import korean, tr

from . import lab as L
from .stage_picks import pick_gemm_kernels

BENCH_CASES = L.BENCH_CASES
TARGETS = {(8, 2048, 2048, 16): {"torch.compile": 1.08}, (16, 1024, 1024, 16): {"torch eager": 1.3,
                                                                                 "torch.compile": 1.05}}
CPU_NOTE = ("\nThe block ran its Triton kernels (lab 3.4's layernorm, lab 4.2's fused GEMMs, lab 4.6's flash "
            "attention) in the interpreter at tiny sizes;\nthe torch peers, the stage breakdown and the timing need a "
            "GPU.")


def add_arguments(p) -> None:
    cli.add_dtype(p, L.DTYPES)
    p.add_argument("--train", action="store_true",
                   help="time the training step (forward + backward, train_bench.py) against torch.compile of the "
                        "module's forward + backward, instead of the forward; writes <LAB>_train.json")


def explain(args) -> None:
    """The stage plan of the main case before any timing: what each stage must compute and move; then what the lesson
    predicts for this GPU (the one at hand, or --gpu / --arch's profile)."""
    print_plan()
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("what the lesson predicts for {gpu}", gpu=gpu.label()))


def stage_work(case) -> list[tuple[str, str, float, float]]:
    """(stage, kind, FLOPs, bytes that must move) of each stage of the block at case (B, S, d, H), bf16: a GEMM's
    operands and output once, attention's Q, K, V and O once, a layernorm's row read and written."""
    bsz, s, d, n_heads = case
    m = bsz * s
    out = []
    for name, (mm, nn_, kk) in (("QKV GEMM + bias", (m, 3 * d, d)), ("out GEMM + bias + residual", (m, d, d)),
                                ("FC GEMM + bias + GELU", (m, 4 * d, d)),
                                ("proj GEMM + bias + residual", (m, d, 4 * d))):
        out.append((name, "gemm", 2.0 * mm * nn_ * kk, 2.0 * (mm * kk + kk * nn_ + mm * nn_)))
    out.append(("attention (causal)", "attention", 4.0 * bsz * n_heads * s * s * (d // n_heads) / 2, 2.0 * 4 * m * d))
    out += [(n, "memory", 8.0 * m * d, 2.0 * 2 * m * d) for n in ("LN1", "LN2")]
    return out


def predict(gpu) -> dict:
    """The lesson's model of the block on `gpu`, from its description alone: each stage's floor (the larger of its
    FLOPs at the datasheet bf16 rate and its bytes at the memory bandwidth), the whole block's floor, and which share
    of it the GEMMs, attention and the memory-bound rest take - for each benchmark case (fitted to the GPU's
    memory)."""
    out = {}
    peak, bw = gpu.peak("bf16_tflops"), gpu.hbm_gbps * 1e9
    if not peak:
        out[tr("bf16 tensor cores")] = tr("none on {arch}: the block's kernels need sm_80 or newer", arch=gpu.arch)
        return out
    for case in BENCH_CASES:
        (bsz, s, d, n_heads), note = L.fit_case(case, gpu)
        label = f"B{bsz} S{s} d{d} H{n_heads}"
        floors = {}
        for name, kind, fl, by in stage_work((bsz, s, d, n_heads)):
            t = max(fl / (peak * 1e12), by / bw)
            floors[kind] = floors.get(kind, 0.0) + t
        total = sum(floors.values())
        out[tr("{label}: the block's floor (bf16 rate {peak:.0f} TFLOP/s, {gbps:.0f} GB/s)", label=label, peak=peak,
               gbps=gpu.hbm_gbps)] = f"{total * 1e3:.2f} ms"
        out[tr("{label}: share of the floor, GEMMs / attention / layernorms", label=label)] = \
            " / ".join(f"{floors[k] / total:.0%}" for k in ("gemm", "attention", "memory"))
        if note:
            out[tr("{label}: scaled to this GPU's memory", label=label)] = note
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU): whole block vs peers, per-stage breakdown vs floors
# ---------------------------------------------------------------------------------------------------------------------
# how every stage and every library floor is timed: back to back, as in the block (and without the host in the way)
STAGE_TIMING = dict(rep_ms=60, graph=True, calls=20)
FLOOR_TIMING = STAGE_TIMING


def stage_floors(plan: L.BlockPlan, ceiling_gbps: float) -> dict[str, dict]:
    """Each stage's floor on this GPU: GEMMs at cuBLAS's time for the same shape, attention at the best SDPA
    backend's time, memory-bound stages at the measured HBM bandwidth. The library calls are timed the way the stages
    are (FLOOR_TIMING: a CUDA graph of 20 back-to-back calls): a plain timer flushes L2 between calls, and those idle
    gaps let a 1 ms GEMM run faster than it does back to back, so a plain-timed floor under a graph-timed stage made
    the stage look slower than it is (the README's caution)."""
    import torch

    from phase4_optimization.lab06_attention import lab as at

    floors = {}
    x = plan.buffers["a"]
    for name, (kind, what) in plan.floor_of.items():
        if kind == "memory":
            floors[name] = {"ms": what / (ceiling_gbps * 1e6),
                            "how": f"{what / 1e6:.0f} MB at {ceiling_gbps:,.0f} GB/s"}
        elif kind == "gemm":
            m, n, k = what
            a = torch.randn(m, k, device=x.device, dtype=x.dtype)
            b = torch.randn(k, n, device=x.device, dtype=x.dtype)
            t = bench.bench(lambda: torch.matmul(a, b), **FLOOR_TIMING)
            floors[name] = {"ms": t.median_ms, "how": f"cuBLAS {m}x{n}x{k}: {t.tflops(2.0 * m * n * k):.0f} TFLOP/s",
                            "clock": t.clock}
            a = b = None
        else:
            bsz, h, s, dh = what
            q, k, v = (torch.randn(bsz, h, s, dh, device=x.device, dtype=x.dtype) for _ in range(3))
            best = None
            for backend in ("cudnn", "flash"):
                # sdpa_fwd runs the attention and returns its output: bench needs a callable
                fn = (lambda b_=backend: at.sdpa_fwd(q, k, v, True, b_))
                try:
                    fn()
                except Exception as e:  # noqa: BLE001 - a backend this build lacks is skipped, named below
                    first = (str(e).splitlines() or [""])[0][:80]
                    print(tr("  SDPA {backend}: unavailable ({error})", backend=backend,
                             error=f"{type(e).__name__}: {first}"))
                    continue
                t = bench.bench(fn, **FLOOR_TIMING)
                if best is None or t.median_ms < best[1]:
                    best = (backend, t.median_ms, t.clock)
            fl = at.attn_flops(bsz, h, s, dh, True)
            floors[name] = {"ms": best[1] if best else float("nan"), "clock": best[2] if best else "",
                            "how": f"SDPA {best[0]}: {fl / best[1] / 1e9:.0f} TFLOP/s" if best else "no SDPA backend"}
            q = k = v = None
    return floors


OURS_WGMMA = "ours, wgmma GEMMs"
GEMM_NAMES = {"triton": "lab 4.2 Triton linear()", "wgmma": "lab 4.3 wgmma + TMA (CUDA C), fused epilogue"}
ATTENTION_NAMES = {"hopper": "lab 4.6 Hopper CUDA C forward (wgmma + TMA)", "triton": "lab 4.6 Triton flash forward"}


def bench_case(case, dtype: str, ceiling_gbps: float,
               rounds: int = 5) -> tuple[list[dict], list[dict], list[dict], list[target.Target]]:
    """Whole block: ours vs eager vs torch.compile (interleaved); then each of our stages vs its floor. A case the
    GPU's memory cannot hold runs with B halved (L.fit_case), and its targets are then not judged (they are set
    for the full case)."""
    import torch

    case, note = L.fit_case(case, device.info())
    if note:
        print(f"  {note}")
    bsz, s, d, n_heads = case
    rng = check.rng(100)
    x, nh, *weights = L.make_inputs(case, dtype, rng, "cuda")
    plan = L.BlockPlan(x, nh, *weights)
    from phase4_optimization.lab02_fusion import lab as fu

    print(tr("  attention: {kernel}", kernel=tr(ATTENTION_NAMES[plan.attention])))

    # each GEMM stage's tile, timed among lab 4.2's candidates whose operand ring fits this GPU's shared memory
    cands = [c for c in fu.LINEAR_CONFIGS[:4] if fu.ring_bytes(c) <= device.info().smem_per_block_optin]
    tuning = plan.tune_gemms(cands) if cands else []
    for r in tuning:
        r["case"] = list(case)
    print(tr("  GEMM configs picked: {list}", list="; ".join(
        f"{k}: {c and (c['BLOCK_M'], c['BLOCK_N'], c['BLOCK_K'], c['num_warps'], c['num_stages'])}"
        for k, c in plan.gemm_configs.items())))
    # then each GEMM stage's kernel: the tuned Triton linear() or lab 4.3's wgmma GEMM, whichever is faster there
    picks = pick_gemm_kernels(plan)
    for r in picks:
        r["case"] = list(case)
    tuning += picks
    if picks:
        print(tr("  GEMM kernels picked: {list}", list="; ".join(f"{r['stage']}: {r['picked']}" for r in picks)))
    module = L.torch_module(x, nh, *weights)
    t0 = time.perf_counter()
    compiled = torch.compile(module)
    with torch.no_grad():
        compiled(x)
        torch.cuda.synchronize()
    print(tr("  torch.compile of the block took {secs:.1f} s (first call)", secs=time.perf_counter() - t0))
    # same answer? (the check tier compares with float64; here: ours vs the module at the benchmark size)
    with torch.no_grad():
        y_eager = module(x)
    y_ours = plan.run()
    rel = float((y_ours.float() - y_eager.float()).norm() / y_eager.float().norm())
    print(tr("  ours vs the eager module at this size: relative difference {rel:.2e}", rel=rel))

    def eager():
        with torch.no_grad():
            module(x)

    def comp():
        with torch.no_grad():
            compiled(x)

    contenders = {"ours": plan.run}
    if plan.gemm_alternatives:
        # the same block with lab 4.3's wgmma + TMA GEMMs (fused epilogues), checked against the eager module first
        plan_w = L.BlockPlan(x, nh, *weights, gemm="wgmma")
        y_w = plan_w.run()
        rel_w = float((y_w.float() - y_eager.float()).norm() / y_eager.float().norm())
        print(tr("  ours with the wgmma GEMMs vs the eager module: relative difference {rel:.2e}", rel=rel_w))
        if rel_w <= 4 * max(rel, 1e-3):
            contenders[OURS_WGMMA] = plan_w.run
        else:
            print(tr("  (left out of the timing: {rel_w:.2e} is far from the Triton GEMMs' {rel:.2e})", rel_w=rel_w,
                     rel=rel))
    ts, tries, steady = bench.steady({**contenders, "torch eager": eager, "torch.compile": comp}, rounds=rounds,
                                     rep_ms=80)
    fl = L.flops(*case)
    rows = []
    for name, t in ts.items():
        rows.append(report.row(L.LAB, name, "triton" if name in contenders else "peer", case, dtype, t, flops=fl,
                               vs_eager=ts["torch eager"].median_ms / t.median_ms,
                               vs_compile=ts["torch.compile"].median_ms / t.median_ms,
                               rel_diff_vs_eager=rel_w if name == OURS_WGMMA else rel))
    # the target is read off the faster of our blocks in these rounds (it says which)
    best = min(contenders, key=lambda k: ts[k].median_ms)
    targets = [target.versus(target.shape_text(list(case), dtype), best, peer, ts[peer].median_ms / ts[best].median_ms,
                             steady=steady, at_least=need, detail={"rounds_run": tries})
               for peer, need in TARGETS.get(tuple(case), {}).items()]
    floors = stage_floors(plan, ceiling_gbps)

    def timed(stage, kind, fn, floor, kernel):
        # Each stage alone, as a CUDA graph of 20 calls: a layernorm moves its 67 MB in ~15 us, less than one Python
        # call of its wrapper, so the plain timer measured the host there (an earlier run had LN at 0.18 of its
        # floor, and the stages summed to more than the whole block); the graph takes the host out (lab 1.2).
        t = bench.bench(fn, **STAGE_TIMING)
        f = floors[floor]
        return {"lab": L.LAB, "case": list(case), "dtype": dtype, "stage": stage, "kind": kind, "ms": t.median_ms,
                "floor_ms": f["ms"], "frac_of_floor": f["ms"] / t.median_ms, "floor": f["how"], "clock": t.clock,
                "floor_clock": f.get("clock", ""), "kernel": kernel}

    stage_rows = [timed(name, kind, fn, name, ATTENTION_NAMES[plan.attention] if kind == "attention" else
                        GEMM_NAMES[plan.gemm_kernels[name]] if kind == "gemm" else "")
                  for name, kind, fn in plan.stages]
    total = sum(r["ms"] for r in stage_rows)
    floor_total = sum(r["floor_ms"] for r in stage_rows)
    # the kernels the block did not pick, timed the same way: the evidence for each pick (kind "alternative", not in
    # the sums): the other attention kernel, and each GEMM stage by lab 4.3's wgmma kernel, its epilogue fused
    if plan.attention_alternative is not None:
        alt, fn = plan.attention_alternative
        stage_rows.append(timed("attention (causal), not used", "alternative", fn, "attention (causal)",
                                ATTENTION_NAMES[alt]))
    for name, (alt, fn) in plan.gemm_alternatives.items():
        stage_rows.append(timed(f"{name}, by {alt}", "alternative", fn, name, GEMM_NAMES[alt]))
    stage_rows.append({"lab": L.LAB, "case": list(case), "dtype": dtype, "stage": "sum of stages", "kind": "",
                       "ms": total, "floor_ms": floor_total, "frac_of_floor": floor_total / total,
                       "floor": "sum of the floors"})
    plan = module = compiled = None
    torch.cuda.empty_cache()
    return rows, stage_rows, tuning, targets


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()["hbm_gbps"]
    if getattr(ctx.args, "train", False):
        from . import train_bench as T   # the training step's own bench (it never imports this module)

        rows, stage_rows, targets, tuning = T.benchmark_train(ceiling, quick=ctx.quick)
        return lab.Result(rows=rows + stage_rows, name=f"{L.LAB}_train", tables=T.tables(rows, stage_rows, targets),
                          meta=dict(kind="train", ceiling_gbps=ceiling, gemm_tuning=tuning,
                                    targets=target.records(targets)),
                          ok=all(t.detail["largest rel diff vs eager"] <= T.SAME_ANSWER for t in targets))
    rows, stage_rows, tuning, targets = [], [], [], []
    todo = BENCH_CASES[1:] if ctx.quick else BENCH_CASES
    for case in cli.progress(todo, "block cases"):
        r, s, t, g = bench_case(case, "bfloat16", ceiling)
        rows += r
        stage_rows += s
        tuning += t
        targets += g
    return lab.Result(
        rows=rows + stage_rows, meta=dict(ceiling_gbps=ceiling, gemm_tuning=tuning, targets=target.records(targets)),
        tables=[(rows, ["variant", "shape", "ms", "tflops", "vs_eager", "vs_compile"],
                 tr("whole block forward, bf16 (interleaved rounds)")),
                (target.said(targets), None, tr("targets (ours: the faster of our blocks in the same rounds)")),
                (stage_rows, ["case", "stage", "kernel", "ms", "floor_ms", "frac_of_floor", "floor"],
                 tr("our stages vs their floors (each stage timed alone; floor/time = how close to the roof)"))])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
# one distinct colour per stage (the whole-block bars are grays: ours dark, the peers light)
STAGE_COLORS = {"LN1": "#bcbd22", "QKV GEMM + bias": "#1f77b4", "attention (causal)": "#d62728",
                "out GEMM + bias + residual": "#9467bd", "LN2": "#17becf", "FC GEMM + bias + GELU": "#2ca02c",
                "proj GEMM + bias + residual": "#ff7f0e"}
EXTRA_STAGE_COLORS = ["#8c564b", "#e377c2", "#7f7f7f"]
WHOLE_COLORS = {"ours": "#404040", OURS_WGMMA: "#707070", "torch eager": "#a6a6a6", "torch.compile": "#c8c8c8"}
WHOLE_TICKS = {"ours": "ours\n(whole)", OURS_WGMMA: "ours,\nwgmma\nGEMMs", "torch eager": "torch\neager",
               "torch.compile": "torch.\ncompile"}


def stage_colors(stages: list[str]) -> dict[str, str]:
    """stage -> colour: the block's seven stages by name, any other stage a colour no stage above uses."""
    extra = iter(EXTRA_STAGE_COLORS * 3)
    return {s: STAGE_COLORS.get(s) or next(extra) for s in stages}


def floor_note(stage_rows: list[dict], ceiling_gbps: float | None) -> str:
    """What 'floor' means, for the kinds of stage in the rows: a stage's floor is the time the best library code
    (or the memory system) needs for the same work on this GPU."""
    kinds = {r.get("kind") for r in stage_rows}
    parts = []
    if "gemm" in kinds:
        parts.append(tr("GEMM stages: cuBLAS (torch.matmul) at the stage's M x N x K"))
    if "attention" in kinds:
        backends = sorted({m.group(1) for r in stage_rows if r.get("kind") == "attention"
                           for m in [re.match(r"SDPA (\w+)", str(r.get("floor", "")))] if m})
        parts.append(tr("attention: the fastest torch SDPA backend, causal, same B H S D")
                     + (tr(" ({backends} here)", backends=', '.join(backends)) if backends else ""))
    if "memory" in kinds:
        hbm = f" ({ceiling_gbps:,.0f} GB/s)" if ceiling_gbps else ""
        parts.append(tr("LayerNorms (memory-bound): their bytes at the measured HBM ceiling{hbm}", hbm=hbm))
    return tr("floor of a stage = the fastest that stage can run on this GPU: {parts}. The numbers inside our stages: "
              "floor / our time (1.00 = at the floor). Each stage is timed alone (a CUDA graph of 20 calls), the whole "
              "block in interleaved rounds.", parts=(". " if korean() else "; ").join(parts))


def plot(data: dict, out_dir: str) -> list[str]:
    """Per case: stacked bars of our stage times next to their floors, and the whole block (ours, torch eager,
    torch.compile) (<LAB>.png). One legend for both panels, outside them; a note says what the floors are. The
    training step's JSON (--train) has no plot yet: its tables are the result."""
    if data.get("kind") == "train":
        return []
    rows = [r for r in data["rows"] if "stage" not in r]
    # the stages the block ran (the attention kernel it did not pick is a row of its own, kind "alternative")
    stage_rows = [r for r in data["rows"] if "stage" in r and r.get("kind") != "alternative"]
    plt = report.pyplot()
    from matplotlib.patches import Patch

    cases = []
    for r in stage_rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    stages = list(dict.fromkeys(r["stage"] for r in stage_rows if r["stage"] != "sum of stages"))
    colors = stage_colors(stages)
    n = max(len(cases), 1)
    shown = set()                                     # the whole-block bars drawn in any panel (for the legend)
    fig, axes = plt.subplots(1, n, figsize=(6.2 * n + 2.6, 6.2), squeeze=False)
    for ax, case in zip(axes[0], cases):
        srows = [r for r in stage_rows if r["case"] == case and r["stage"] != "sum of stages"]
        totals = []
        for col, key in ((0, "ms"), (1, "floor_ms")):
            bottom = 0.0
            for r in srows:
                ax.bar(col, r[key], bottom=bottom, color=colors[r["stage"]], edgecolor="white", lw=0.5, width=0.75)
                bottom += r[key]
            totals.append(bottom)
        peers = {r["variant"]: r["ms"] for r in rows if r.get("shape") == case and r.get("impl") in ("peer", "triton")
                 and r.get("ms")}
        heights = totals[:]
        whole = [k for k in WHOLE_COLORS if k in peers]
        shown.update(whole)
        for i, name in enumerate(whole):
            ax.bar(2 + i, peers[name], color=WHOLE_COLORS[name], width=0.75)
            heights.append(peers[name])
        top = max(heights or [1.0])
        for r, y0 in zip(srows, np.cumsum([0.0] + [r["ms"] for r in srows])):     # floor / ours, stage by stage
            if r.get("frac_of_floor") is not None and r["ms"] >= 0.045 * top:
                ax.annotate(f"{r['frac_of_floor']:.2f}", xy=(0, y0 + r["ms"] / 2), ha="center", va="center",
                            fontsize=7.5, color="white", fontweight="bold")
        for x, h in enumerate(totals):
            extra = "\n" + tr("({x:.2f}x ours)", x=totals[1] / totals[0]) if x == 1 and totals[0] else ""
            ax.annotate(f"{h:.2f}{extra}", xy=(x, h), xytext=(0, 2), textcoords="offset points", ha="center",
                        va="bottom", fontsize=8)
        for i, name in enumerate(whole):
            ax.annotate(f"{peers[name]:.2f}", xy=(2 + i, peers[name]), xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=8)
        ax.set_ylim(0, top * 1.16)
        ax.set_xticks(range(2 + len(whole)),
                      [tr("ours,\nby stage"), tr("floor,\nby stage")] + [tr(WHOLE_TICKS[k]) for k in whole])
        ax.set_ylabel(tr("ms (lower is better)"))
        ax.grid(True, axis="y", alpha=0.3)
        ax.set_title(f"B{case[0]} S{case[1]} d{case[2]} H{case[3]}", fontsize=10)
    handles = [Patch(color=colors[s], label=s) for s in stages[::-1]]       # top of the stack first
    handles += [Patch(color=WHOLE_COLORS[k], label=tr("whole block: {name}", name=k)) for k in WHOLE_COLORS
                if k in shown]
    fig.legend(handles=handles, loc="center left", bbox_to_anchor=(1 - 2.55 / fig.get_figwidth(), 0.55), fontsize=8,
               title=tr("stages (top of the stack first)"), title_fontsize=8, frameon=False)
    fig.suptitle(tr("Transformer block forward (bf16) on {gpu}: each stage against its floor, and the whole block "
                    "against PyTorch", gpu=data.get('gpu', 'GPU')), fontsize=11)
    note = floor_note(stage_rows, data.get("ceiling_gbps"))
    fig.text(0.01, 0.01, textwrap.fill(note, 120 if korean() else 190), ha="left", va="bottom", fontsize=8,
             color="#333333")
    fig.tight_layout(rect=(0, 0.09, 1 - 2.6 / fig.get_figwidth(), 1))
    path = os.path.join(out_dir, f"{L.LAB}.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return [path]


# ---------------------------------------------------------------------------------------------------------------------
# The plan (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def print_plan(case=(8, 2048, 2048, 16)) -> None:
    """The stage list with each stage's FLOPs and bytes: what the learner should expect before any timing."""
    bsz, s, d, n_heads = case
    rows = [{"stage": name, "GFLOP": fl / 1e9, "MB": by / 1e6} for name, _kind, fl, by in stage_work(case)]
    report.print_table(rows, ["stage", "GFLOP", "MB"], title=tr("the block at B{b} S{s} d{d} H{h} (bf16)", b=bsz, s=s,
                                                                 d=d, h=n_heads))
