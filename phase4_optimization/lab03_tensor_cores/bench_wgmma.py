"""Lab 4.3's measurements of rung 03, wgmma + TMA (sm_90): its checks through both B layouts (bench.extra_checks runs
the debugging probes when one fails), the head to head of every build against cuBLAS in interleaved rounds, and the
second sweep of --tune - every build at WGMMA_SIZES, the fastest correct one per size recorded where gemm_wgmma reads
it."""
from __future__ import annotations

from common import arrays, bench, cli, device, report, tuned
from common.i18n import tr

from . import lab as L
from . import wgmma as wg
from .bench_timing import _free, _said_result

WGMMA_SIZES = (4096, 8192)          # the wgmma head to head; its targets are at both


def wgmma_checks(quick: bool) -> tuple[list[dict], bool]:
    """rung 03 on the shapes of wgmma.CHECK_SHAPES in both dtypes, and in bf16 through the other B layout (the
    fallback that tells a descriptor bug from anything else): the same poisoned-output, float64 check as the lab's."""
    shapes = wg.QUICK_SHAPES if quick else wg.CHECK_SHAPES
    main_kmajor = wg.default_b_kmajor()
    rows, ok = [], True
    todo = [(s, dt, main_kmajor) for dt in L.DTYPES for s in (shapes if dt == "bfloat16" else shapes[:3])]
    todo += [(s, "bfloat16", not main_kmajor) for s in shapes[:3]]
    for s, dt, kmaj in cli.progress(todo, "wgmma checks"):
        c = wg.check_shape(*s, dtype=dt, seed=sum(s) + int(kmaj != main_kmajor), b_kmajor=kmaj)
        ok &= c.ok
        rows.append({"shape": "x".join(map(str, s)), "dtype": dt, "B layout": wg._layout(kmaj), "result": c.message})
    report.print_table(rows, title="rung 03 (wgmma + TMA): both B layouts (poisoned output, float64 reference)")
    return rows, ok


def wgmma_head_to_head(m, n, k, dtype="bfloat16", rounds=3, b_kmajor: bool = False) -> dict:
    """Rung 03 against cuBLAS (torch.matmul) at one shape, interleaved rounds: every build of wg.builds() (1- and
    2-block clusters; C from registers, by TMA store, by TMA store in two passes), each checked on sampled rows first.
    The row's headline figures (build, ratio, wgmma_tflops) are the build gemm_wgmma runs here when not told
    (wg.resolve_build: this GPU's --tune record, else the default build), timed in the same rounds; the fastest build
    of this run is reported next to it ("best build"), and every build's own figures are in "builds"."""
    import torch

    a = arrays.device_randn((m, k), dtype, m + k)
    b = arrays.device_randn((k, n), dtype, n + k + 1)
    if arrays.library(a) != "torch":
        a, b = torch.from_dlpack(a), torch.from_dlpack(b)
    c_w = torch.empty((m, n), dtype=a.dtype, device=a.device)
    c_t = torch.empty_like(c_w)
    builds = wg.builds(b_kmajor)
    labels = [wg.build_label(bd) for bd in builds]
    cmps = {}
    for bd, lb in zip(builds, labels):          # every build timed is first checked on sampled rows
        c_w.fill_(float("nan"))
        wg.gemm_wgmma(a, b, out=c_w, b_kmajor=b_kmajor, **bd)
        cmps[lb] = wg.verify_sample(c_w, a, b, dtype)
    fns = {"cublas": lambda: torch.matmul(a, b, out=c_t)}
    for bd, lb in zip(builds, labels):
        fns["wgmma " + lb] = lambda bd=bd: wg.gemm_wgmma(a, b, out=c_w, b_kmajor=b_kmajor, **bd)
    ts, tries, steady = bench.steady(fns, rounds=rounds, rep_ms=60)
    flops = 2.0 * m * n * k
    cub = ts["cublas"]
    per = [dict(bd, build=lb, ms=ts["wgmma " + lb].median_ms, tflops=ts["wgmma " + lb].tflops(flops),
                ratio=cub.median_ms / ts["wgmma " + lb].median_ms, spread=round(ts["wgmma " + lb].spread, 4),
                check=cmps[lb].message, ok=cmps[lb].ok) for bd, lb in zip(builds, labels)]
    best = min(per, key=lambda p: p["ms"])
    mine, source = wg.resolve_build(m, n, k, b_kmajor=b_kmajor)
    d = next(p for p in per if p["build"] == wg.build_label(mine))
    bad = [f"{p['build']}: {p['check']}" for p in per if not p["ok"]]
    row = {"shape": f"{m}x{n}x{k}", "dtype": dtype, "B layout": wg._layout(b_kmajor), "build": d["build"],
           "build source": source, "wgmma_tflops": d["tflops"], "cublas_tflops": cub.tflops(flops),
           "ratio": d["ratio"], "wgmma_ms": d["ms"], "cublas_ms": cub.median_ms, "best build": best["build"],
           "best ratio": best["ratio"], "spread": max(t.spread for t in ts.values()), "steady": steady,
           "rounds_run": tries, "check": "; ".join(bad) or "ok", "ok": not bad, "builds": per}
    for p in per:
        row[f"ratio {p['build']}"] = p["ratio"]
    return row


def _wgmma_edge_check(build: dict) -> str:
    """'' when a wgmma build matches float64 on awkward shapes (poisoned output), else the first failing case."""
    for dt in L.DTYPES:
        for s in (wg.QUICK_SHAPES if dt == "bfloat16" else wg.QUICK_SHAPES[:2]):
            c = wg.check_shape(*s, dtype=dt, seed=sum(s) + 3, b_kmajor=False, **build)
            if not c.ok:
                return f"{'x'.join(map(str, s))} {dt}: {c.message}"
    return ""


def tune_wgmma(sizes=WGMMA_SIZES, rounds: int = 3) -> tuple[list[dict], list[dict]]:
    """--tune's second sweep (sm_90): every build of wg.builds() at each size, bf16, checked on sampled rows and timed
    against cuBLAS in steady interleaved rounds (wgmma_head_to_head); at each size the fastest build that is also
    right on awkward shapes wins. Returns (rows, winners as wg.check_winners takes them)."""
    rows, winners, edge = [], [], {}
    for n in cli.progress(sizes, tr("tuning {count} wgmma builds", count=len(wg.builds()))):
        h = wgmma_head_to_head(n, n, n, rounds=rounds, b_kmajor=False)
        win = None
        for p in sorted(h["builds"], key=lambda p: p["ms"]):
            r = {"size": f"{n}^3", "build": p["build"], "ms": p["ms"], "tflops": p["tflops"], "vs_cublas": p["ratio"],
                 "spread": p["spread"], "steady": h["steady"]}
            if not p["ok"]:
                r["result"] = f"WRONG RESULT ({p['check']}): excluded"
            elif win is None:
                key = p["build"]
                if key not in edge:
                    edge[key] = _wgmma_edge_check({k: p[k] for k in wg.BUILD_KEYS})
                if edge[key]:
                    r["result"] = f"fast but WRONG on {edge[key]}: excluded"
                else:
                    win = {k: p[k] for k in wg.BUILD_KEYS}
                    r["result"], r["winner"] = "ok", True
            else:
                r["result"] = "ok"
            rows.append(r)
        if win is not None:
            winners.append({"shape": [n, n, n], "build": win})
    _free()
    return rows, winners


def wgmma_tune_and_record(ctx, tables: list, sizes=None, rounds: int = 3) -> bool:
    """The wgmma half of --tune: sweep (tune_wgmma at `sizes`, default WGMMA_SIZES), add its table, write its record
    (wg.TUNED, beside the mma.sync one; --no-json writes neither). False when no build won at some size."""
    why = wg.unavailable_reason()
    if why:
        print(tr("--tune: wgmma + TMA builds not swept: {why}", why=why))
        return True
    sizes = tuple(sizes or WGMMA_SIZES)
    rows, winners = tune_wgmma(sizes, rounds)
    tables.append(([_said_result(r) for r in rows], ["size", "build", "tflops", "vs_cublas", "spread", "steady",
                                                      "result"],
                   tr("--tune: wgmma + TMA builds, bf16, steady interleaved rounds with cuBLAS (vs_cublas = cuBLAS "
                      "time / this time)")))
    if winners:
        print(tr("--tune wgmma winners: {list}", list="; ".join(f"{'x'.join(map(str, w['shape']))}: "
                                                                f"{wg.build_label(w['build'])}" for w in winners)))
        if ctx.args.json:
            print(tr("wrote {path}", path=report.write_json(wg.TUNED, rows, out_dir=ctx.out_dir,
                                                            winner=wg.check_winners(winners), sizes=list(sizes),
                                                            arch=device.info().arch)))
        tuned.forget()
    else:
        print(tr("--tune: no wgmma build was both fast and right; nothing recorded for it"))
    return len(winners) == len(sizes)
