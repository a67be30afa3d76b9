"""ncu target (run with PYTHONPATH at the repository root): lab 4.6's Hopper forward, argv[1] the rung, argv[2] causal
or noncausal, B4 H32 S4096 D128 bf16, the second call inside an NVTX range "fwd"."""
import sys

import torch

from phase4_optimization.lab06_attention import hopper

c = sys.argv[2] == "causal"
q, k, v = (torch.randn(4, 32, 4096, 128, device='cuda', dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
lse = torch.empty((4, 32, 4096), device='cuda', dtype=torch.float32)
hopper.flash_attn_hopper(q, k, v, causal=c, out=o, lse=lse, kernel=sys.argv[1])
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("fwd")
hopper.flash_attn_hopper(q, k, v, causal=c, out=o, lse=lse, kernel=sys.argv[1])
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
