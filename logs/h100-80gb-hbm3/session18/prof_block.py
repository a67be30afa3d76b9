"""ncu target: one stage of lab 4.7's block forward (BlockPlan), inside an NVTX range "stage".
argv[1]: a substring of the stage name (e.g. "out GEMM"); argv[2]: case index of L.BENCH_CASES (default 1);
argv[3] (optional): "alt" = the stage's alternative kernel (BlockPlan.gemm_alternatives: lab 4.3's wgmma GEMM with the
epilogue fused; a residual stage runs its TMA-store build, the residual's tiles by TMA since attempt 5)."""
import sys

import torch

from common import check, lab
from phase4_optimization.lab07_transformer_block import lab as L

case = L.BENCH_CASES[int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else 1]
mode = sys.argv[3] if len(sys.argv) > 3 else ""
x, nh, *w = L.make_inputs(case, "bfloat16", check.rng(200), lab.where())
bp = L.BlockPlan(x, nh, *w)
bp.run()
torch.cuda.synchronize()
name = [n for n, _, _ in bp.stages if sys.argv[1] in n][0]
fn = [f for n, _, f in bp.stages if n == name][0]
kernel = bp.gemm_kernels.get(name, "")
if mode == "alt":
    kernel, fn = bp.gemm_alternatives[name]
print("stage:", name, "| mode:", mode or "default", "| kernel:", kernel, flush=True)
fn()
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("stage")
fn()
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
