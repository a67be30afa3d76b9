"""Lab 4.7: each GEMM stage of a block on the faster of the kernels the repository has for it (the benchmark's and the
training step's forward, and tools/headline, call it after tuning the tiles)."""
from __future__ import annotations

from common import bench


def pick_gemm_kernels(plan, stages: list | None = None, rep_ms: float = 25.0) -> list[dict]:
    """Each GEMM stage in `stages` of `plan` (default plan.stages, a lab.BlockPlan's; or a backward.TrainPlan's
    bwd_stages) that has an alternative kernel - lab 4.3's wgmma + TMA GEMM beside lab 4.2's Triton linear() at its
    tuned tile, or the backward's Triton grad GEMM - runs the faster of the two on its own shape and epilogue from
    now on: the block made of the fastest kernels the repository has, stage by stage; the slower becomes the stage's
    alternative. Both compute the same stage (the lab's variants and the training step's gradient check test each).
    Returns one row per stage: both times and the pick."""
    rows = []
    steps = plan.stages if stages is None else stages     # changed in place
    for i, (name, kind, fn) in enumerate(steps):
        if name not in plan.gemm_alternatives:
            continue
        alt, alt_fn = plan.gemm_alternatives[name]
        cur = plan.gemm_kernels[name]
        t_cur, t_alt = (bench.bench(f, rep_ms=rep_ms).median_ms for f in (fn, alt_fn))
        if t_alt < t_cur:
            steps[i] = (name, kind, alt_fn)
            plan.gemm_alternatives[name] = (cur, fn)
            plan.gemm_kernels[name] = alt
        rows.append({"stage": name, f"{cur} ms": t_cur, f"{alt} ms": t_alt, "picked": plan.gemm_kernels[name]})
    return rows
