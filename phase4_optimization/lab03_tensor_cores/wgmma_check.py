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


def gelu_tanh_grad64(z: np.ndarray) -> np.ndarray:
    """d/dz of gelu_tanh in float64 (the derivative EPI_OPS bit 8 applies)."""
    c = np.sqrt(2.0 / np.pi)
    t = np.tanh(c * (z + 0.044715 * z ** 3))
    return 0.5 * (1 + t) + 0.5 * z * (1 - t * t) * c * (1 + 3 * 0.044715 * z * z)


def epilogue_reference(a, b, bias=None, gelu: bool = False, res=None, z=None) -> np.ndarray:
    """float64 of the fused epilogues on float64 host arrays: gelu_tanh(A B + bias) + residual (lab 4.2's order), or
    (A B) * gelu_tanh'(z)."""
    c = a @ b
    if bias is not None:
        c = c + bias[None, :]
    if gelu:
        c = 0.5 * c * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (c + 0.044715 * c ** 3)))
    if z is not None:
        c = c * gelu_tanh_grad64(z)
    return c if res is None else c + res


def block_sums64(c, rows: int) -> np.ndarray:
    """Column sums of c (float64 of the stored values) in blocks of `rows` rows, the last one short: what the column
    sums (EPI_OPS bit 16) should hold, up to their fp32 additions."""
    c = arrays.to_numpy(c).astype(np.float64)
    blocks = -(-c.shape[0] // rows)
    return np.pad(c, ((0, blocks * rows - c.shape[0]), (0, 0))).reshape(blocks, rows, -1).sum(axis=1)


def source_matrix(m: int, n: int, dtype: str, seed: int, pad: int = 8, like=None):
    """An (m, n) epilogue source (a residual or z, ~ 2 N(0, 1)) as a view of an (m, n + pad) GPU matrix in `like`'s
    library (default torch): row stride n + pad, so with pad 8 and N a multiple of 8 its tensor map is legal and the
    TMA-store build reads it by TMA (SRC_TMA); and its float64 host copy."""
    big = arrays.from_numpy(2 * check.rng(seed).standard_normal((m, n + pad)), dtype, "cuda")
    if arrays.library(big) != (arrays.library(like) if like is not None else "torch"):
        import torch

        big = torch.from_dlpack(big)
    src = big[:, :n]
    return src, arrays.to_numpy(src).astype(np.float64)


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
