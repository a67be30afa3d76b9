"""ncu target: one stage of lab 4.7's training step, inside an NVTX range "stage".
argv[1]: a substring of the stage name; argv[2]: case index of L.BENCH_CASES (default 1); argv[3] (optional):
"alt" = the stage's alternative kernel (plan.gemm_alternatives: lab 4.3's wgmma for a dX GEMM; for proj dX, since
73ec3b0, the wgmma GEMM then the GELU' pass, two kernels in the range; for a forward GEMM stage such as "out GEMM",
the forward's BlockPlan.gemm_alternatives: lab 4.3's wgmma with the epilogue fused), "big" = a grad GEMM
at lab 4.2's default tile (in session 16's run the proj dX stage's default was a capped tile; since 9cfe380 it is this
one), "small" = the first of lab 4.2's LINEAR_CONFIGS with 64 accumulator elements a thread (the tile that does not
spill with the dGELU epilogue), "cand" (session 21) = the stage's first further candidate (gemm_candidates)."""
import sys

import torch

from common import check, lab
from phase4_optimization.lab07_transformer_block import backward as B
from phase4_optimization.lab07_transformer_block import lab as L

case = L.BENCH_CASES[int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else 1]
mode = sys.argv[3] if len(sys.argv) > 3 else ""
x, nh, *w = L.make_inputs(case, "bfloat16", check.rng(200), lab.where())
dy = torch.randn(x.shape, device=x.device, dtype=torch.float32).to(x.dtype)
tp = B.TrainPlan(x, dy, nh, *w)
tp.run()
torch.cuda.synchronize()
names = [n for n, _, _ in tp.bwd_stages if sys.argv[1] in n] + [n for n, _, _ in tp.stages if sys.argv[1] in n]
name = names[0]
fn = [f for n, _, f in tp.bwd_stages + tp.stages if n == name][0]
if mode == "alt":       # a backward stage's alternative, or a forward stage's (the BlockPlan inside the step)
    kernel, fn = {**tp.fwd.gemm_alternatives, **tp.gemm_alternatives}[name]
elif mode == "cand":    # session 21: the stage's first further candidate (TrainPlan.gemm_candidates: proj dX's
    kernel, fn = tp.gemm_candidates[name][0]         # ping-pong build of lab 4.3's kernel)
elif mode == "big":
    g = tp.gemms[name]
    fu = L._kernels()[1]
    g.config = fu.tile_of(fu.linear_config(g.m, g.n, g.k, g.dt).values, "GEMM_")
    kernel = f"grad GEMM at lab 4.2's default tile {g.config}"
elif mode == "small":
    g = tp.gemms[name]
    fu = L._kernels()[1]
    g.config = dict(next(c for c in fu.LINEAR_CONFIGS if c["BLOCK_M"] * c["BLOCK_N"] // (32 * c["num_warps"]) == 64))
    kernel = f"grad GEMM at the small tile {g.config}"
else:
    kernel = tp.gemm_kernels.get(name, "")
    if name in tp.gemms:
        kernel += f" tile {tp.gemms[name].tile()}"
print("stage:", name, "| mode:", mode or "default", "| kernel:", kernel, "| attention bwd:", tp.attention_bwd,
      flush=True)
fn()
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("stage")
fn()
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
