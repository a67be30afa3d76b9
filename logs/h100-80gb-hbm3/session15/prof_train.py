"""ncu target: one stage of lab 4.7's training step (argv[1]: a substring of the stage name; argv[2]: case index of
L.BENCH_CASES, default 1), inside an NVTX range "stage"."""
import sys

import torch

from common import check, lab
from phase4_optimization.lab07_transformer_block import backward as B
from phase4_optimization.lab07_transformer_block import lab as L

case = L.BENCH_CASES[int(sys.argv[2]) if len(sys.argv) > 2 else 1]
alt = len(sys.argv) > 3 and sys.argv[3] == "alt"          # the stage's alternative kernel (wgmma) instead
x, nh, *w = L.make_inputs(case, "bfloat16", check.rng(200), lab.where())
dy = torch.randn(x.shape, device=x.device, dtype=torch.float32).to(x.dtype)
tp = B.TrainPlan(x, dy, nh, *w)
tp.run()
torch.cuda.synchronize()
names = [n for n, _, _ in tp.bwd_stages if sys.argv[1] in n] + [n for n, _, _ in tp.stages if sys.argv[1] in n]
print("stages:", names, "attention bwd:", tp.attention_bwd, flush=True)
fns = [f for n, _, f in tp.bwd_stages + tp.stages if n == names[0]]
if alt:
    fns = [tp.gemm_alternatives[names[0]][1]]
    fns[0](); torch.cuda.synchronize()
torch.cuda.nvtx.range_push("stage")
fns[0]()
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
