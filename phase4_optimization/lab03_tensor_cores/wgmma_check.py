"""Lab 4.3, rung 03: checking gemm_wgmma - the shapes it is checked on, the float64 reference of the rounded inputs,
the tolerance of fp32 accumulation and one output rounding, a poisoned-output check of one shape (with the kernel's
hang record), and sampled rows of a product too big to check whole."""
from __future__ import annotations

import numpy as np

from common import arrays, check

from .wgmma_launch import gemm_wgmma, hang_report


CHECK_SHAPES = [(1, 1, 1), (127, 129, 136), (128, 256, 64), (1000, 1000, 1000), (8192, 8192, 64), (33, 70, 13),
                (302, 255, 517)]
QUICK_SHAPES = [(1, 1, 1), (127, 129, 136), (128, 256, 64), (33, 70, 13), (302, 255, 517)]


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def tolerance(k: int, dtype: str) -> check.Tol:
    """fp32 accumulation over K terms grows like sqrt(K) * 2^-24 relative; the output rounding to bf16 (2^-9) or
    fp16 (2^-12) dominates: element error <= one output ulp plus the accumulation term."""
    ulp = check.UNIT_ROUNDOFF[dtype]
    acc = np.sqrt(max(k, 1)) * 2.0 ** -22
    return check.Tol(rel_norm=ulp + acc, elem=2 * ulp + 8 * acc)


def make_inputs(m, n, k, dtype: str, seed: int = 0):
    """A, B ~ N(0, 1) rounded to dtype, on the GPU, and their float64 host copies (the reference sees exactly the
    rounded values)."""
    rng = check.rng(seed)
    a = arrays.from_numpy(rng.standard_normal((m, k)), dtype, "cuda")
    b = arrays.from_numpy(rng.standard_normal((k, n)), dtype, "cuda")
    if dtype == "float16" and arrays.library(a) != "torch":   # keep one library per dtype for the peers
        import torch

        a, b = torch.from_dlpack(a), torch.from_dlpack(b)
    return a, b, arrays.to_numpy(a).astype(np.float64), arrays.to_numpy(b).astype(np.float64)


def check_shape(m, n, k, dtype: str = "bfloat16", seed: int = 0, b_kmajor: bool | None = None,
                cluster: int | None = None, tma_store: bool | None = None,
                c_passes: int | None = None, b_view: bool = False) -> check.Comparison:
    """Poisoned output, float64 reference of the rounded inputs. b_view: B passed as the transposed view of a
    contiguous (N, K) matrix (a weight W as W.t()), which the K-major B kernel reads without a copy."""
    a, b, a_f64, b_f64 = make_inputs(m, n, k, dtype, seed)
    if b_view:
        b = b.t().contiguous().t() if arrays.library(b) == "torch" else b.T.copy().T
    out = check.poisoned((m, n), dtype, a)
    gemm_wgmma(a, b, out=out, b_kmajor=b_kmajor, cluster=cluster, tma_store=tma_store, c_passes=c_passes)
    c = check.compare(out, reference(a_f64, b_f64), dtype, tolerance(k, dtype))
    hang = hang_report()
    if hang:
        c = check.Comparison(False, c.rel_norm_err, c.max_abs_err, c.n_bad, c.n, c.message + " | " + hang)
    return c


def verify_sample(out, a, b, dtype, n_rows: int = 64) -> check.Comparison:
    """Big products: sampled rows (and the last) against a float64 product on the GPU."""
    import torch

    m = int(a.shape[0])
    rows = torch.as_tensor(np.unique(np.concatenate([check.rng(7).integers(0, m, n_rows), [0, m - 1]])),
                           device=a.device)
    ref = a[rows].double() @ b.double()
    return check.compare(out[rows].double().cpu().numpy(), ref.cpu().numpy(), dtype,
                         tolerance(int(a.shape[1]), dtype))
