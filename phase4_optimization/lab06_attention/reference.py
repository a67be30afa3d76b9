"""Lab 4.6's float64 reference and inputs: attention and its gradients in NumPy (grouped-query k and v, Sq != Sk,
the causal mask aligned to the bottom-right corner), the forward alone for any arrays, O = P V keeping a non-finite
value out of the rows that never attend its key, and the random inputs of the checks. Imports nothing of the lab's
kernels."""
from __future__ import annotations

import math

import numpy as np

from common import arrays


def reference(q, k, v, do, causal: bool = False, sm_scale: float | None = None):
    """Float64 attention and its gradients: (O, LSE, dQ, dK, dV), LSE in natural log, (B, Hq, Sq).

    Shapes: q and do (B, Hq, Sq, D), k and v (B, Hkv, Sk, D), Hkv dividing Hq: grouped-query attention, query head h
    reading key/value head h // (Hq / Hkv) (multi-query when Hkv = 1; the usual case Hkv = Hq, Sq = Sk).
    Forward: S = scale Q K^T; causal masks key j for query i unless j <= i + (Sk - Sq) - the mask aligned to the
    bottom-right corner, as FlashAttention does, which is the ordinary lower triangle when Sq = Sk; P = softmax(S) by
    rows, LSE = log(sum(exp(S))), O = P V. A query row with no key left (causal, Sq > Sk) has O = 0, LSE = -inf and
    zero gradients. Backward, for an upstream gradient dO: dV = P^T dO, dP = dO V^T, dS = P * (dP - rowsum(P * dP)),
    dQ = scale dS K, dK = scale dS^T Q, dK and dV summed over the query heads that share a key/value head.
    """
    q, k, v, do = (np.asarray(a, np.float64) for a in (q, k, v, do))
    group = _group(q, k, v)
    kx, vx = (np.repeat(t, group, axis=1) for t in (k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    p, lse = _probabilities(q, kx, causal, scale)
    o = probabilities_times_values(p, vx, causal)
    dv = np.swapaxes(p, -1, -2) @ do
    dp = do @ np.swapaxes(vx, -1, -2)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))
    dq = ds @ kx * scale
    dk = np.swapaxes(ds, -1, -2) @ q * scale
    b, hkv, sk, d = k.shape
    return o, lse, dq, dk.reshape(b, hkv, group, sk, d).sum(axis=2), dv.reshape(b, hkv, group, sk, d).sum(axis=2)


def _group(q, k, v) -> int:
    """Query heads per key/value head, after checking that the shapes fit together (ValueError naming the argument)."""
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"q, k, v: expected (B, H, S, D) arrays, got {q.shape}, {k.shape}, {v.shape}")
    if k.shape != v.shape:
        raise ValueError(f"v: shape {v.shape} must equal k's {k.shape}")
    if q.shape[0] != k.shape[0] or q.shape[3] != k.shape[3]:
        raise ValueError(f"k: batch and head dim {k.shape[0]}, {k.shape[3]} must match q's {q.shape[0]}, {q.shape[3]}")
    if k.shape[1] < 1 or q.shape[1] % k.shape[1]:
        raise ValueError(f"k: its {k.shape[1]} heads must divide q's {q.shape[1]} (grouped-query attention)")
    return q.shape[1] // k.shape[1]


def causal_mask(sq: int, sk: int) -> np.ndarray:
    """(Sq, Sk) booleans: query i attends key j when j <= i + (Sk - Sq) (bottom-right aligned)."""
    return np.arange(sk)[None, :] <= np.arange(sq)[:, None] + (sk - sq)


def _probabilities(q, k, causal: bool, scale: float):
    """P = softmax(scale Q K^T [causal]) by rows and LSE (natural log), float64; k has q's heads here."""
    sq, sk = q.shape[-2], k.shape[-2]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * scale
    mask = causal_mask(sq, sk) if causal else None
    if causal:
        s = np.where(mask, s, -np.inf)
    with np.errstate(invalid="ignore"):
        m = s.max(axis=-1, keepdims=True) if sk else np.full(s.shape[:-1] + (1,), -np.inf)
        e = np.exp(s - m)
        l_ = e.sum(axis=-1, keepdims=True)
        p = e / l_
    lse = (m + np.log(l_))[..., 0] if sk else m[..., 0]
    if causal:
        # masked probabilities are exactly 0 even when the row's max or sum is NaN (exp(-inf - NaN) and 0 / NaN are
        # NaN): a NaN in query row i must not reach the keys it never attends to - as in the kernels. A row with no
        # key at all (Sq > Sk) has P = 0 and LSE = -inf.
        p = np.where(mask, p, 0.0)
        empty = ~mask.any(axis=-1)
        lse = np.where(empty, -np.inf, lse)
    return p, lse


def forward_reference(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """(O, LSE) of reference() without the gradients, for any arrays (torch GPU tensors too): the forward-only
    checks of the CUDA C kernels and of the NumPy model of their tiling."""
    q, k, v = (np.asarray(arrays.to_numpy(x), np.float64) for x in (q, k, v))
    group = _group(q, k, v)
    k, v = (np.repeat(t, group, axis=1) for t in (k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if sm_scale is None else float(sm_scale)
    p, lse = _probabilities(q, k, causal, scale)
    return probabilities_times_values(p, v, causal), lse


def probabilities_times_values(p, v, causal: bool):
    """O = P V in float64, where a key a row does not attend contributes nothing, even a non-finite value.

    A plain p @ v multiplies the masked zeros of P by every row of V, and 0 x NaN = NaN: a NaN value at key j would
    poison the rows that never attend it. Here the finite part is one matmul; each non-finite V[j, d] is then added,
    with IEEE rules (p x Inf, 0 x Inf = NaN), to the rows that attend key j (i >= j - (Sk - Sq) when causal, all when
    not).
    """
    p, v = np.asarray(p, np.float64), np.asarray(v, np.float64)
    bad = ~np.isfinite(v)
    o = p @ np.where(bad, 0.0, v)
    shift = v.shape[-2] - p.shape[-2]
    for idx in zip(*np.nonzero(bad)):
        *lead, j, d = idx
        rows = slice(max(j - shift, 0), None) if causal else slice(None)
        with np.errstate(invalid="ignore"):
            o[(*lead, rows, d)] += p[(*lead, rows, j)] * v[idx]
    return o


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """(q, k, v, do, causal) for size = (B, H, S, D, causal): torch tensors on `where`.

    q, k, v, dO ~ N(0, 1), with a few large entries in q (sharp rows: the running maximum must be rescaled late).
    For odd S, q, k and v are strided views of a (B, S, H, D) buffer (the layout a QKV projection produces), so the
    stride path is checked too; dO is always contiguous.
    """
    import torch

    b, h, s, d, causal = size
    dt = getattr(torch, dtype)
    strided = s % 2 == 1

    def one(spiky=False):
        a = rng.standard_normal((b, s, h, d) if strided else (b, h, s, d))
        if spiky and a.size > 8:
            a.flat[rng.integers(0, a.size, 4)] = 4.0
        t = torch.from_numpy(a.astype(np.float32)).to(device=where, dtype=dt)
        return t.transpose(1, 2) if strided else t

    q, k, v = one(spiky=True), one(), one()
    do = torch.from_numpy(rng.standard_normal((b, h, s, d)).astype(np.float32)).to(device=where, dtype=dt)
    return q, k, v, do, bool(causal)


def out_dtype(dtype: str):
    return (dtype, "float32", dtype, dtype, dtype)
