"""Lab 4.6's diagnosis of the CUDA C forward: which heads, rows and columns of a wrong output are wrong (a fragment
layout bug shows as a regular pattern), and on a GPU the permutation probe - which key and which V column each output
of a rung actually took."""
from __future__ import annotations

import numpy as np

from common import arrays, check

from . import lab as L


def _ranges(idx) -> str:
    idx = sorted(int(i) for i in idx)
    if not idx:
        return "-"
    out, start, prev = [], idx[0], idx[0]
    for i in idx[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
        if i is not None:
            start = prev = i
    s = ", ".join(out)
    return s if len(s) < 160 else s[:157] + "..."


def mismatch_pattern(o, o_ref, lse=None, lse_ref=None, tol: check.Tol | None = None) -> list[str]:
    """Lines that say which heads, rows (and rows mod 16) and columns (and mod 16) are wrong: a fragment-layout bug
    shows as a regular pattern (every odd column pair, rows 8-15 of every 16, one head, the last tile...)."""
    tol = tol or check.tolerance("bfloat16")
    o = np.asarray(arrays.to_numpy(o), dtype=np.float64)
    r = np.asarray(o_ref, dtype=np.float64)
    scale = float(np.mean(np.abs(r))) if r.size else 0.0
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(o) | (np.abs(o - r) > tol.elem * (np.abs(r) + scale))
    lines = [f"o: {int(bad.sum())}/{bad.size} elements wrong ({int((~np.isfinite(o)).sum())} non-finite)"]
    for bi, hi in zip(*np.nonzero(bad.any(axis=(2, 3)))):
        hb = bad[bi, hi]
        rows = np.nonzero(hb.any(1))[0]
        cols = np.nonzero(hb.any(0))[0]
        lines.append(f"  b{bi} h{hi}: {int(hb.sum())} wrong; rows {_ranges(rows)}")
        lines.append(f"         rows mod 16: {_ranges(sorted(set(rows % 16)))}; cols {_ranges(cols)}; "
                     f"cols mod 16: {_ranges(sorted(set(cols % 16)))}")
        first = tuple(int(x) for x in np.argwhere(hb)[0])
        lines.append(f"         first wrong (row, col) {first}: got {o[bi, hi][first]:.5g}, "
                     f"want {r[bi, hi][first]:.5g}")
    if lse is not None and lse_ref is not None:
        lo = np.asarray(arrays.to_numpy(lse), dtype=np.float64)
        lr = np.asarray(lse_ref, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            lb = ~np.isfinite(lo) | (np.abs(lo - lr) > 1e-3 * (np.abs(lr) + 1.0))
        lines.append(f"lse: {int(lb.sum())}/{lb.size} wrong" + (
            f"; rows {_ranges(np.nonzero(lb.any(axis=(0, 1)))[0])}" if lb.any() else ""))
    return lines


def probe(kernel: str, d: int, fn=None, dev: str = "cuda") -> list[str]:
    """Which key and which V column each output actually took. q_i = k_i = e_i (one-hot, S = 64 <= D) with a huge
    sm_scale makes row i attend to key i alone; V = key index then gives O[i, :] = i, V = column index O[:, c] = c.
    A fragment or swizzle mistake shows as a permutation: "row 9 took key 1" (S = Q K^T side) or "col 3 took 5" (P V).
    fn/dev: another attention function and device (the tests run the probe's own logic on the CPU that way)."""
    import torch

    s = 64
    eye = torch.zeros(1, 1, s, d)
    eye[0, 0, torch.arange(s), torch.arange(s)] = 1.0
    fn = fn or (lambda q_, k_, v_, sm_scale: L.flash_attn_cuda(q_, k_, v_, sm_scale=sm_scale, kernel=kernel))
    q = eye.to(dev, torch.bfloat16).contiguous()
    v_key = torch.arange(s, dtype=torch.float32)[:, None].expand(s, d).reshape(1, 1, s, d)
    v_col = torch.arange(d, dtype=torch.float32)[None, :].expand(s, d).reshape(1, 1, s, d)
    out = []
    for what, v in (("key", v_key), ("col", v_col)):
        o, _ = fn(q, q, v.to(dev, torch.bfloat16).contiguous(), sm_scale=40.0)
        got = o.float().cpu().numpy()[0, 0]
        want = v.numpy()[0, 0]
        bad = np.argwhere(~np.isclose(got, want, atol=0.05))
        if what == "key":
            rows = sorted(set(int(r) for r, _ in bad))
            out.append(f"probe {L.KERNELS[kernel]} D={d}, keys: " + ("every row took its own key" if not rows else
                       f"{len(rows)} rows took other keys"))
            for r in rows[:16]:
                out.append(f"    row {r} took keys {sorted(set(np.round(got[r]).astype(int).tolist()))[:8]}")
        else:
            cols = sorted(set(int(c) for _, c in bad))
            out.append(f"probe {L.KERNELS[kernel]} D={d}, columns: " + ("every column in place" if not cols else
                       f"{len(cols)} columns hold others"))
            for c in cols[:16]:
                out.append(f"    col {c} holds {sorted(set(np.round(got[:, c]).astype(int).tolist()))[:8]}")
    return out


def probe_check() -> bool:
    """On a GPU: the permutation probe for every mma.sync rung and head dim (a fragment or swizzle bug names its
    rows)."""
    ok = True
    for kern in L.KERNELS:
        for d in L.HEAD_DIMS:
            lines = probe(kern, d)
            for ln in lines:
                print(ln)
            ok &= all("every" in ln for ln in lines if ln.startswith("probe"))
    return ok
