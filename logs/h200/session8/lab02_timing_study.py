"""Session 8: why lab 4.2's steady rounds never come out steady. Times lab 4.2's four target contenders (bf16 4096^3)
with five timing methods, three interleaved rounds each, and prints each round's per-contender spread, while
nvidia-smi samples the SM clock and power every 100 ms (logged beside). Run from the repository root on the GPU."""
import json
import math
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

from common import bench
from phase4_optimization.lab02_fusion import bench as B
from phase4_optimization.lab02_fusion import lab as L

out = sys.argv[1] if len(sys.argv) > 1 else "lab02_timing_study.json"
n = B.GEMM_N
x = B._randn((n, n), "bfloat16", 51)
w = B._randn((n, n), "bfloat16", 52, scale=1.0 / math.sqrt(n))
bias = B._randn((n,), "bfloat16", 53, scale=0.5)
tx, tw, tb = (L._torch_view(a) for a in (x, w, bias))
y = torch.empty((n, n), dtype=torch.bfloat16, device=tx.device)
yg = torch.empty_like(y)
fns = {"fused": lambda: L.linear(x, w, bias, activation="gelu_tanh", out=y),
       "pair": lambda: F.gelu(torch.matmul(tx, tw) + tb, approximate="tanh"),
       "main loop": lambda: L.linear(x, w, out=yg),
       "cublas": lambda: torch.matmul(tx, tw)}
methods = {"graph20_flush": dict(graph=True, calls=20),
           "events_flush_rep60": dict(rep_ms=60),
           "graph1_flush": dict(graph=True, calls=1),
           "graph5_flush": dict(graph=True, calls=5),
           "graph20_warm": dict(graph=True, calls=20, flush_l2=False),
           "events_warm": dict(flush_l2=False)}
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active",
                        "--format=csv,noheader", "-lms", "100"], stdout=open(out + ".smi.csv", "w"))
res = {}
try:
    for f in fns.values():
        f()
    torch.cuda.synchronize()
    for m, kw in methods.items():
        t0 = time.time()
        rounds = []
        for r in range(3):
            this = {k: bench.bench(f, **kw) for k, f in fns.items()}
            rounds.append({k: {"median_ms": t.median_ms, "spread": t.spread, "n": t.n} for k, t in this.items()})
        res[m] = {"t0": t0, "t1": time.time(), "rounds": rounds}
        sp = [max(v["spread"] for v in rd.values()) for rd in rounds]
        med = {k: [rd[k]["median_ms"] for rd in rounds] for k in fns}
        ratio = [rd["pair"]["median_ms"] / rd["fused"]["median_ms"] for rd in rounds]
        ml = [rd["cublas"]["median_ms"] / rd["main loop"]["median_ms"] for rd in rounds]
        print(f"{m:20s} worst spread per round {[f'{s:.3f}' for s in sp]}  fused/pair {[f'{q:.3f}' for q in ratio]}"
              f"  mainloop/cublas {[f'{q:.3f}' for q in ml]}", flush=True)
        for k in fns:
            print(f"    {k:10s} " + "  ".join(f"{rd[k]['median_ms']:.4f} ms sp {rd[k]['spread']:.3f}" for rd in rounds),
                  flush=True)
finally:
    smi.terminate()
json.dump(res, open(out, "w"), indent=1)
