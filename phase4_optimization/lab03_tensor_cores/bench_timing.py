"""Lab 4.3's timing of rungs 01, 02, Triton and the peers (GPU): the sweep over square sizes (L2 flushed, sampled rows
checked against float64), the mma.sync target head to head with cuBLAS in interleaved rounds, mma.sync's own ceiling
(tc_00_mma_peak), and the first sweep of --tune (every mma.sync config, the fastest that is right on awkward shapes
wins), with its rows' results said in the chosen language."""
from __future__ import annotations

import re
import time

import numpy as np

from common import arrays, bench, check, cli, device, lab, report, target
from common.i18n import tr

from . import lab as L


def _square(n: int, dtype: str, seed: int):
    a, b = arrays.device_randn((n, n), dtype, seed), arrays.device_randn((n, n), dtype, seed + 1)
    return a, b, arrays.empty((n, n), dtype, a)


def _sample_error(out, a, b, rows: int = 64) -> float:
    """Relative error of sampled rows of a big product against float64 on the GPU (torch DGEMM)."""
    import torch

    ta, tb, to = L._torch_view(a), L._torch_view(b), L._torch_view(out)
    idx = torch.as_tensor(np.unique(np.r_[check.rng(3).integers(0, ta.shape[0], rows), ta.shape[0] - 1]),
                          device=ta.device)
    ref = ta[idx].double() @ tb.double()
    return float(torch.linalg.norm(to[idx].double() - ref) / torch.linalg.norm(ref))


def _free():
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()


def tune_configs(n: int = 4096, dtype: str = "bfloat16", budget_s: float = 120.0) -> tuple[list[dict], dict | None]:
    """Time every config of CONFIGS at n^3 (each checked on sampled rows first); the fastest that is also right on
    awkward shapes wins."""
    a, b, c = _square(n, dtype, 21)
    flops = 2.0 * n ** 3
    t_ref = bench.bench(lambda: L.peer_torch(a, b, out=c), warmup_ms=10, rep_ms=30, min_reps=3)
    gpu = device.info()
    rows, t0 = [], time.perf_counter()
    for cfg in cli.progress(L.CONFIGS, tr("tuning {count} mma.sync configs at {n}^3 {dtype}", count=len(L.CONFIGS),
                                          n=n, dtype=dtype)):
        row = {"config": L.short(cfg), **cfg}
        if L.config_problems(cfg, gpu=gpu):
            row["result"] = "invalid here: " + "; ".join(L.config_problems(cfg, gpu=gpu))
        elif time.perf_counter() - t0 > budget_s:
            row["result"] = f"not tried: {budget_s:.0f} s budget spent"
        else:
            try:
                arrays.fill(c, float("nan"))
                L.gemm_mma(a, b, out=c, config=cfg)
                err = _sample_error(c, a, b)
                row["rel_err"] = err
                if not err < 1e-2:
                    row["result"] = "WRONG RESULT: excluded"
                else:
                    t = bench.bench(lambda cfg=cfg: L.gemm_mma(a, b, out=c, config=cfg), warmup_ms=5, rep_ms=30,
                                    min_reps=3)
                    row.update(ms=t.median_ms, tflops=t.tflops(flops), vs_cublas=t_ref.median_ms / t.median_ms,
                               spread=round(t.spread, 4), result="ok")
            except Exception as e:  # noqa: BLE001 - one bad config must not stop the search; it is reported
                row["result"] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:120]}"
        rows.append(row)
    a = b = c = None
    _free()
    good = sorted((r for r in rows if r.get("result") == "ok"), key=lambda r: r["ms"])
    for r in good:
        cfg = {k: r[k] for k in L.CONFIG_KEYS + ("MIN_BLOCKS", "DB", "XT") if k in r}
        bad = _edge_check(cfg)
        if bad:
            r["result"] = f"fast but WRONG on {bad}: excluded"
            continue
        r["winner"] = True
        return rows, cfg
    return rows, None


def _edge_check(cfg: dict) -> str:
    """'' when a config matches float64 on awkward shapes, else the first failing shape."""
    # the last shape has whole interior blocks for every config and K = 200 (six full 32-deep k-tiles, then 8):
    # tc_02's fast path and its general path in the same launch
    for i, shape in enumerate(((1, 1, 1), (127, 129, 131), (302, 1000, 13), (257, 130, 100), (302, 520, 200))):
        for dt in L.DTYPES:
            a, b = L.make_inputs(shape, dt, check.rng(900 + i), "cuda")
            out = check.poisoned((shape[0], shape[1]), dt, a)
            L.gemm_mma(a, b, out=out, config=cfg)
            ref = L.reference(arrays.to_numpy(a), arrays.to_numpy(b))
            if not check.compare(out, ref, dt, L.tolerance(shape, dt)).ok:
                return f"{'x'.join(map(str, shape))} {dt}"
    return ""


def _contenders(dtype: str) -> list[lab.Variant]:
    return [v for v in L.PEERS + L.VARIANTS if dtype in v.dtypes and v.available()[0]]


def sweep(sizes, dtype: str) -> list[dict]:
    """TFLOP/s of every variant and peer at each square size (L2 flushed before each call)."""
    rows = []
    peak = device.info().datasheet.get("bf16_tflops")
    for n in cli.progress(sizes, tr("{dtype} sizes", dtype=dtype)):
        a, b, c = _square(n, dtype, n)
        flops, nbytes = 2.0 * n ** 3, 2.0 * 3 * n * n
        ref_ms = None
        for v in _contenders(dtype):
            fn = (lambda v=v: v.fn(a, b, out=c))
            try:
                t = bench.bench(fn, warmup_ms=10, rep_ms=40, min_reps=5)
                err = _sample_error(c, a, b)
            except Exception as e:  # noqa: BLE001 - one failing variant must not cost the others their numbers
                rows.append(report.row(L.LAB, v.name, v.impl, (n, n, n), dtype, None,
                                       error=f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"))
                continue
            if v.name == L.CUBLAS:
                ref_ms = t.median_ms
            rows.append(report.row(L.LAB, v.name, v.impl, (n, n, n), dtype, t, nbytes=nbytes, flops=flops,
                                   vs_cublas=(ref_ms / t.median_ms) if ref_ms else None,
                                   frac_peak=(t.tflops(flops) / peak) if peak else None, sampled_rel_err=err))
        a = b = c = None
        _free()
    return rows


def head_to_head(n: int = 4096, dtype: str = "bfloat16", rounds: int = 5) -> target.Target:
    """The mma.sync target: mma.sync against cuBLAS (torch.matmul), interleaved rounds, same run."""
    a, b, c = _square(n, dtype, 7)
    c2 = arrays.empty((n, n), dtype, a)
    ts, tries, steady = bench.steady({L.CUBLAS: lambda: L.peer_torch(a, b, out=c2),
                                      L.MMA: lambda: L.gemm_mma(a, b, out=c)},
                                     rounds=rounds, warmup_ms=10, rep_ms=40, min_reps=5)
    flops = 2.0 * n ** 3
    ratio = ts[L.CUBLAS].median_ms / ts[L.MMA].median_ms
    a = b = c = c2 = None          # the closures above hold them; let the pool reclaim the memory
    _free()
    return target.versus(f"{n}^3 {dtype}", L.MMA, L.CUBLAS, ratio, steady=steady, at_least=L.TARGET,
                         detail={"tflops": ts[L.MMA].tflops(flops), "cublas_tflops": ts[L.CUBLAS].tflops(flops),
                                 "rounds_run": tries, "spread": max(ts[L.MMA].spread, ts[L.CUBLAS].spread)})


def ceiling_facts(c: dict) -> list[dict]:
    """The README lines of the mma.sync ceiling (tools/readme_tables.py prints a JSON's "facts")."""
    return [{"fact": "mma.sync's own ceiling (tc_00_mma_peak: register operands, no memory), bf16, as a fraction "
                     "of cuBLAS at 4096^3 in the same run", "value": c["ceiling_vs_cublas"], "unit": "x"},
            {"fact": f"rung 02's {L.TARGET}x target as a fraction of that ceiling",
             "value": c["target_fraction_of_ceiling"], "unit": ""}]


def mma_peak_launch(like, iters: int = 4096) -> tuple:
    """(a zero-argument launch of tc_00_mma_peak over one full wave, the FLOPs it does): the ceiling measurement
    here and tools/profile.py's mma_peak case run the same launch (L.peak_blocks: the plan lists it too). The chains
    per warp are the build's PEAK_CHAINS (mma_configs.CONFIG)."""
    defs = L._defines("bfloat16", "bfloat16", None)
    chains = defs["PEAK_CHAINS"]
    k = L._kernel("tc_00_mma_peak", tuple(sorted(defs.items())), 0)
    blocks = L.peak_blocks(int(k.attributes["num_regs"]), device.info())
    threads = L.PEAK_THREADS
    out = arrays.empty((blocks * threads,), "float32", like)
    # warps a block, chains MMAs a step, 16 x 8 x 16 MACs an MMA, 2 FLOP a MAC
    flops = blocks * (threads // 32) * iters * chains * 16 * 8 * 16 * 2
    return (lambda: k((blocks,), (threads,), (np.int32(iters), np.uint64(arrays.ptr(out))))), flops


def mma_ceiling(n: int = 4096, rounds: int = 3) -> dict:
    """How fast mma.sync can go on this GPU at all (tc_00_mma_peak: register operands, no memory) against cuBLAS's
    bf16 GEMM at n^3, interleaved in the same run: the ceiling rung 02's target has to fit under."""
    a, b, c = _square(n, "bfloat16", 5)
    peak, peak_flops = mma_peak_launch(a)
    ts, tries, steady = bench.steady({"cublas": lambda: L.peer_torch(a, b, out=c), "mma.sync peak": peak},
                                     rounds=rounds, warmup_ms=10, rep_ms=40, min_reps=5)
    peak_tflops = ts["mma.sync peak"].tflops(peak_flops)
    cub = ts["cublas"].tflops(2.0 * n ** 3)
    a = b = c = peak = None
    _free()
    return {"what": f"mma.sync m16n8k16 bf16 issue ceiling (tc_00_mma_peak, {L.CONFIG['PEAK_CHAINS']} chains/warp, "
                    f"{L.PEAK_THREADS // 32} warps/block)",
            "mma_peak_tflops": peak_tflops, "cublas_tflops": cub, "ceiling_vs_cublas": peak_tflops / cub,
            "target_fraction_of_ceiling": L.TARGET * cub / peak_tflops, "steady": steady, "rounds_run": tries}


RESULTS = ((r"invalid here: (.*)", "invalid here: {why}"), (r"not tried: (\d+) s budget spent",
                                                              "not tried: {why} s budget spent"),
           (r"fast but WRONG on (.*): excluded", "fast but WRONG on {why}: excluded"),
           (r"WRONG RESULT \((.*)\): excluded", "WRONG RESULT ({why}): excluded"), (r"failed: (.*)", "failed: {why}"))


def _said_result(r: dict) -> dict:
    """A --tune row as printed: its result in the chosen language (the JSON keeps the English)."""
    res = r.get("result")
    if not isinstance(res, str) or res == "ok":
        return r
    for pattern, template in RESULTS:
        m = re.fullmatch(pattern, res, re.S)
        if m:
            return dict(r, result=tr(template, why=m.group(1)))
    return dict(r, result=tr(res))
