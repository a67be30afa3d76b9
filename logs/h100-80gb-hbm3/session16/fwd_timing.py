"""The forward timing of session 16's H100 call (run from the repository root): rungs 06-08 of lab 4.6's Hopper forward
and SDPA cuDNN at B4 H32 S4096 D128 bf16, interleaved steady rounds (common.bench.steady); argv[1] rounds. The call
ran it inline with 5 rounds, both modes (fwd_mha.log's first two blocks), then the causal mode alone with 9 rounds
(its third block)."""
import sys

import torch

from common import bench
from phase4_optimization.lab06_attention import hopper, lab as L

q, k, v = (torch.randn(4, 32, 4096, 128, device='cuda', dtype=torch.bfloat16) for _ in range(3))
o = torch.empty_like(q)
lse = torch.empty((4, 32, 4096), device='cuda', dtype=torch.float32)
for c in (False, True):
    fns = {'cudnn': (lambda c=c: L.sdpa_fwd(q, k, v, c, 'cudnn'))}
    for r in ('06', '07', '08'):
        fns[r] = (lambda r=r, c=c: hopper.flash_attn_hopper(q, k, v, causal=c, out=o, lse=lse, kernel=r))
    ts, tries, steady = bench.steady(fns, rounds=int(sys.argv[1]) if len(sys.argv) > 1 else 5, rep_ms=60, warmup_ms=20)
    fl = L.attn_flops(4, 32, 4096, 128, c)
    print('causal' if c else 'non-causal', 'steady', steady, 'rounds', tries)
    for n, t in ts.items():
        ratio = ts["cudnn"].median_ms / t.median_ms
        print(f'  {n:6s} {t.median_ms:.3f} ms {t.tflops(fl):.1f} TFLOP/s vs cudnn {ratio:.3f} spread {t.spread:.3f}')
