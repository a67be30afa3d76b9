"""Lab 4.3, rung 03: the debugging aid - one GPU run that says where a layout bug is. Index-coded probes (inputs whose
product spells out which element of A or B each output read) and small random cases, through both B layouts, with a
summary of where the mismatches sit (rows mod 8, 16-row warp slabs, 64-column blocks, the XOR of the index read and
the index wanted); the NumPy layout model runs first (python -m phase4_optimization.lab03_tensor_cores
--wgmma-debug)."""
from __future__ import annotations

import numpy as np

from common import arrays, check, report
from common.i18n import tr

from .wgmma_check import make_inputs, reference, tolerance
from .wgmma_kernel import BK, BM, BN, KERNEL, SMEM_BYTES, STAGES
from .wgmma_launch import gemm_wgmma, hang_report
from .wgmma_layout import descriptor_table, simulate_operands


def _index_probe(kind: str, dtype: str = "bfloat16"):
    """Inputs whose product spells out which element of A or B each output read (all values exact in bf16).

    kind "b_row": A = per-row one-hot (A[i, k] = 1 iff k == i % 64), B[k, n] = k + 1   -> C[i, n] = i % 64 + 1
    kind "b_col": same A,                           B[k, n] = n + 1   -> C[i, n] = n + 1
    kind "a_row": B[k, n] = 1 iff n % 64 == k,      A[i, k] = i + 1   -> C[i, n] = i + 1
    kind "a_col": same B,                           A[i, k] = k + 1   -> C[i, n] = n % 64 + 1
    Returns (A, B, expected) as float64 NumPy, M = 128, N = 256, K = 64 (one tile, one stage).
    """
    m, n, k = BM, BN, BK
    i = np.arange(m)[:, None]
    kk = np.arange(k)
    nn = np.arange(n)[None, :]
    if kind.startswith("b_"):
        a = (kk[None, :] == (i % 64)).astype(np.float64)
        b = np.repeat((kk[:, None] + 1.0), n, 1) if kind == "b_row" else np.repeat(nn + 1.0, k, 0)
    else:
        b = ((nn % 64) == kk[:, None]).astype(np.float64)
        a = np.repeat(i + 1.0, k, 1) if kind == "a_row" else np.repeat(kk[None, :] + 1.0, m, 0)
    return a, b, a @ b


def _mismatch_summary(got: np.ndarray, exp: np.ndarray, label: str, index_coded: bool) -> list[str]:
    bad = ~np.isclose(got, exp, rtol=0, atol=1e-3) | ~np.isfinite(got)
    lines = [tr("[{label}] {bad}/{size} wrong", label=label, bad=int(bad.sum()), size=bad.size)]
    if not bad.any():
        return lines
    r, c = np.nonzero(bad)
    lines.append(tr("  first: {cells}", cells=", ".join(tr("({i},{j}) got {got:g} want {want:g}", i=i, j=j,
                                                            got=got[i, j], want=exp[i, j])
                                                         for i, j in list(zip(r, c))[:6])))
    lines.append(tr("  wrong rows mod 8: {mod}  rows by 16-row warp slab: {slabs}",
                    mod=np.bincount(r % 8, minlength=8).tolist(),
                    slabs=np.bincount(r // 16, minlength=max(1, got.shape[0] // 16)).tolist()))
    lines.append(tr("  wrong cols mod 8: {mod}  cols by 64-col block: {blocks}",
                    mod=np.bincount(c % 8, minlength=8).tolist(),
                    blocks=np.bincount(c // 64, minlength=max(1, -(-got.shape[1] // 64))).tolist()))
    if index_coded:
        g = np.where(np.isfinite(got), np.rint(got), -1).astype(np.int64) - 1
        e = np.rint(exp).astype(np.int64) - 1
        x = (g[bad] ^ e[bad])
        vals, cnt = np.unique(x, return_counts=True)
        top = sorted(zip(cnt, vals), reverse=True)[:8]
        lines.append(tr("  index read XOR index wanted (count): {top}   (8/16/32/48.. = swizzle chunk mix-up; 64 = "
                        "wrong consumer half or LBO)", top=", ".join(f"{v}:{n}" for n, v in top)))
        # an 8 x 32 map of 8x8 blocks of the first 64 rows: '.' right, 'X' wrong
        blocks = bad[:64, :256].reshape(8, 8, -1, 8).any(axis=(1, 3))
        lines.append(tr("  8x8 blocks of rows 0-63 ('.' ok, 'X' wrong):"))
        lines += ["    " + "".join("X" if v else "." for v in row) for row in blocks]
    return lines


def debug(dtype: str = "bfloat16") -> int:
    """Both B layouts (N-major in place, and the K-major fallback): index-coded probes and small random cases,
    printing where the first mismatches are. 0 when everything is right."""
    print(tr("debug: {kernel} ({dtype}), tile {bm}x{bn}x{bk}, {stages} stages, smem {smem} B, grid min(tiles, SMs)",
             kernel=KERNEL, dtype=dtype, bm=BM, bn=BN, bk=BK, stages=STAGES, smem=SMEM_BYTES))
    for kmaj in (False, True):
        bad_sim = simulate_operands(b_kmajor=kmaj)
        print(tr("descriptor model (CPU), B {major}-major: {result}", major='K' if kmaj else 'N',
                 result="ok" if not bad_sim else tr("WRONG: {bad}", bad=bad_sim)))
    report.print_table(descriptor_table()[:4], title="stage-0 descriptors (consumer 0, B N-major)")
    results = {}
    for kmaj in (False, True):
        print("\n=== B " + (tr("K-major (fallback: transposed copy, -DB_KMAJOR=1)") if kmaj
                           else tr("N-major (default, tnspB)")))
        results[kmaj] = _debug_one(dtype, kmaj)
    print("\n" + tr("debug summary: B N-major (default): {n_major} | B K-major (fallback): {k_major}",
                    n_major=tr("correct") if results[False] else tr("WRONG"),
                    k_major=tr("correct") if results[True] else tr("WRONG")))
    if results[True] and not results[False]:
        print(tr("-> the MN-major B descriptor (LBO/SBO/start step, tnspB) is the suspect; WGMMA_B_KMAJOR=1 makes "
                 "gemm_wgmma use the fallback meanwhile"))
    return 0 if all(results.values()) else 1


def _debug_one(dtype: str, b_kmajor: bool) -> bool:
    import torch

    ok = True
    tdt = getattr(torch, dtype)
    for kind in ("b_row", "b_col", "a_row", "a_col"):
        a_f64, b_f64, exp = _index_probe(kind)
        a = torch.tensor(a_f64, dtype=tdt, device="cuda")
        b = torch.tensor(b_f64, dtype=tdt, device="cuda")
        out = check.poisoned(exp.shape, dtype, a)
        try:
            gemm_wgmma(a, b, out=out, b_kmajor=b_kmajor)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a debug run reports and goes on
            print(tr("[{kind}] launch failed: {error}", kind=kind, error=f"{type(e).__name__}: {e}"))
            return False
        got = arrays.to_numpy(out).astype(np.float64)
        lines = _mismatch_summary(got, exp, tr("index probe {kind}", kind=kind), True)
        wrong = ~np.isclose(got, exp, rtol=0, atol=1e-3) | ~np.isfinite(got)
        ok &= not wrong.any() and wrong.size == 32768
        print("\n".join(lines))
        h = hang_report()
        if h:
            print(tr("  HANG RECORD: {record} (skipping this layout's remaining cases: each would wait out the "
                     "timeout)", record=h))
            return False
    for (m, n, k) in ((128, 256, 128), (256, 512, 256), (100, 302, 70), (129, 257, 1000)):
        a, b, a_f64, b_f64 = make_inputs(m, n, k, dtype, seed=m + n + k)
        out = check.poisoned((m, n), dtype, a)
        gemm_wgmma(a, b, out=out, b_kmajor=b_kmajor)
        torch.cuda.synchronize()
        exp = reference(a_f64, b_f64)
        got = arrays.to_numpy(out).astype(np.float64)
        cmp = check.compare(got, exp, dtype, tolerance(k, dtype))
        print(f"[random {m}x{n}x{k}] {cmp.message}")
        if not cmp.ok:
            ok = False
            tol = tolerance(k, dtype)
            badm = ~(np.abs(got - exp) <= tol.elem * (np.abs(exp) + np.mean(np.abs(exp))))
            r, c = np.nonzero(badm)
            print(tr("  wrong rows by 64: {rows}  cols by 64: {cols}  first: {first}",
                     rows=np.bincount(r // 64).tolist(), cols=np.bincount(c // 64).tolist(),
                     first=list(zip(r[:5].tolist(), c[:5].tolist()))))
        h = hang_report()
        if h:
            print(tr("  HANG RECORD: {record} (skipping this layout's remaining cases: each would wait out the "
                     "timeout)", record=h))
            return False
    print(tr("debug: {result}", result=tr("all correct") if ok else tr("MISMATCHES (see above)")))
    return ok
