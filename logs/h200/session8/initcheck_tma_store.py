"""Session 8: is initcheck's report after lab 4.7's wgmma block a missed write or a TMA store the tool does not track?
Poison C with NaN, run gemm_wgmma with TMA-store on and off, check every element against float64, then read C in a
CuPy kernel (the read initcheck would flag). Run under `compute-sanitizer --tool initcheck` on the GPU."""
import sys

import cupy as cp
import numpy as np

from phase4_optimization.lab03_tensor_cores import wgmma as W

tma = sys.argv[1] == "tma"
m, n, k = 600, 256, 256
rng = np.random.default_rng(7)
a = cp.asarray(rng.standard_normal((m, k)).astype(np.float16))
b = cp.asarray(rng.standard_normal((k, n)).astype(np.float16))
fresh = cp.empty((m, n), dtype=cp.float16)      # never written before the GEMM: what initcheck tracks
out = W.gemm_wgmma(a, b, out=fresh, tma_store=tma)
ref = cp.asnumpy(a).astype(np.float64) @ cp.asnumpy(b).astype(np.float64)
got = cp.asnumpy(out).astype(np.float64)          # host copy
s = float((out.astype(cp.float32) * 1).sum())     # a device kernel reading every element of C
err = np.abs(got - ref).max() / np.abs(ref).max()
print(f"tma_store={tma}: finite {np.isfinite(got).all()}, max rel err {err:.2e}, device sum {s:.3f}")
