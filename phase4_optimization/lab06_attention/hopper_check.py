"""Lab 4.6's Hopper rungs checked, and their command line: the small awkward cases of each rung and ring depth
against float64 on an sm_90 GPU (outputs poisoned first), printing per case the error and, for a failing case, where
it fails (heads, consumer halves, warp slabs, columns) and whether the K-major V fallback clears it; before them the
NumPy models of the descriptors and fragments (any machine); and the sm_90a compile table.

Run: python -m phase4_optimization.lab06_attention.hopper --check   (or .hopper_check; --help for the options)
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from common import check, cli
from common.i18n import set_lang, tr

from . import lab as L
from .hopper import (BLOCK_M, BLOCK_N, DEFAULT_KERNEL, DEFAULT_STAGES, DTYPES, HEAD_DIMS, KERNELS, PERSISTENT,
                     STAGE_CHOICES, STAGES, check_stages, compile_rows, flash_attn_hopper, hang_report, smem_bytes,
                     unavailable_reason)
from .hopper_models import simulate_operands, simulate_p_fragment


CHECK_S = (1, 17, 127, 128, 129, 301, 1000)
LSE_TOL = check.Tol(1e-4, 1e-4)     # fp32 scores and sums; the MUFU exp2's ~2 ulp are far below it


def check_cases(quick: bool = False) -> list[tuple[tuple, str]]:
    """((B, Hq, Hkv, S, D, causal), dtype): every S of CHECK_S at D 128 and 64, causal and not, bf16 and fp16 in turn,
    plus grouped-query heads."""
    cases = []
    for i, s in enumerate(CHECK_S):
        for d in HEAD_DIMS:
            for causal in (False, True):
                dt = DTYPES[(i + d // 64 + causal) % 2]
                cases.append(((1 + (i % 2), 2 - (i % 2), 2 - (i % 2), s, d, causal), dt))
    cases += [((1, 4, 2, 301, 128, True), "bfloat16"), ((2, 4, 1, 129, 64, False), "float16")]
    if quick:
        cases = [c for c in cases if c[0][3] in (17, 129, 301)]
    return cases


def make_case(size, dtype: str, seed: int = 0):
    """q, k, v ~ N(0, 1) (a few large q entries) as contiguous GPU tensors, and their float64 host copies."""
    import torch

    b, hq, hkv, s, d, _ = size
    rng = check.rng(seed)
    tdt = getattr(torch, dtype)
    qn = rng.standard_normal((b, hq, s, d))
    if qn.size > 8:
        qn.flat[rng.integers(0, qn.size, 4)] = 4.0
    kn, vn = rng.standard_normal((b, hkv, s, d)), rng.standard_normal((b, hkv, s, d))
    q, k, v = (torch.from_numpy(x.astype(np.float32)).to(device="cuda", dtype=tdt) for x in (qn, kn, vn))
    return q, k, v, tuple(x.float().cpu().numpy().astype(np.float64) for x in (q, k, v))


def where_wrong(got: np.ndarray, ref: np.ndarray, tol: check.Tol) -> list[str]:
    """For O (B, H, S, D) or LSE (B, H, S): which heads, 64-row consumer halves, 16-row warp slabs, rows mod 16 and
    8-column blocks hold the wrong (or unwritten: NaN) elements."""
    scale = float(np.mean(np.abs(ref[np.isfinite(ref)]))) if np.isfinite(ref).any() else 0.0
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(got - ref) <= tol.atol + tol.elem * (np.abs(ref) + scale)) & np.isfinite(ref)
    if not bad.any():
        return []
    idx = np.nonzero(bad)
    rows = idx[2]
    lines = [tr("  {bad}/{size} wrong, {nan} NaN (unwritten or poisoned), heads {heads}", bad=int(bad.sum()),
                size=bad.size, nan=int((np.isnan(got) & np.isfinite(ref)).sum()),
                heads=np.unique(idx[0] * bad.shape[1] + idx[1]).tolist()[:8]),
             tr("  rows by 128-row Q tile: {tiles}", tiles=np.bincount(rows // 128).tolist()),
             tr("  rows by consumer half (row % 128 // 64): {halves}  by warp slab (row % 64 // 16): {slabs}  "
                "row % 16: {mod}", halves=np.bincount(rows % 128 // 64, minlength=2).tolist(),
                slabs=np.bincount(rows % 64 // 16, minlength=4).tolist(),
                mod=np.bincount(rows % 16, minlength=16).tolist())]
    if bad.ndim == 4:
        cols = idx[3]
        lines.append(tr("  cols by 8-wide block: {blocks}  col % 8: {mod}",
                        blocks=np.bincount(cols // 8, minlength=got.shape[3] // 8).tolist(),
                        mod=np.bincount(cols % 8, minlength=8).tolist()))
    first = list(zip(*[i[:4].tolist() for i in idx]))
    lines.append(tr("  first: {cells}", cells=", ".join(tr("{p} got {got:.4g} want {want:.4g}", p=p, got=got[p],
                                                            want=ref[p]) for p in first)))
    return lines


def check_case(size, dtype: str, v_kmajor: bool = False, seed: int = 0, verbose: bool = True,
               kernel: str = DEFAULT_KERNEL, stages: int | None = None, blocks: int | None = None):
    """One case, outputs poisoned first: (ok, printed lines). O against forward_reference with lab.tolerance, LSE
    against LSE_TOL."""
    import torch

    b, hq, hkv, s, d, causal = size
    q, k, v, (q64, k64, v64) = make_case(size, dtype, seed)
    o = check.poisoned((b, hq, s, d), dtype, q)
    lse = check.poisoned((b, hq, s), "float32", q)
    lines = []
    try:
        flash_attn_hopper(q, k, v, causal=causal, out=o, lse=lse, v_kmajor=v_kmajor, kernel=kernel, stages=stages,
                          blocks=blocks)
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - the check reports and goes on
        return False, [tr("  launch failed: {error}", error=f"{type(e).__name__}: {e}")]
    o_ref, lse_ref = L.forward_reference(q64, k64, v64, causal)
    o_np = o.float().cpu().numpy().astype(np.float64)
    l_np = lse.cpu().numpy().astype(np.float64)
    tol = L.tolerance((b, hq, s, d, causal), dtype)
    co, cl = check.compare(o_np, o_ref, dtype, tol), check.compare(l_np, lse_ref, "float32", LSE_TOL)
    ok = co.ok and cl.ok
    lines.append(f"  O: {co.message} | LSE: {cl.message}")
    if not co.ok and verbose:
        lines += [tr("  O wrong at:")] + where_wrong(o_np, o_ref, tol)
    if not cl.ok and verbose:
        lines += [tr("  LSE wrong at:")] + where_wrong(l_np, lse_ref, LSE_TOL)
    hang = hang_report()
    if hang:
        ok = False
        lines.append(tr("  HANG RECORD: {record}", record=hang))
    return ok, lines


def run_check(quick: bool = False, layouts=(False,), seed: int = 0, kernels=(DEFAULT_KERNEL,), stages=None) -> int:
    """Every case of check_cases for each rung, ring depth (stages: a tuple, or None for each rung's default) and V
    layout; prints progress, per-case errors and where failures are; when the default layout fails, the failing
    cases are rerun with the K-major V fallback to split the blame. 0 = all ok."""
    rc = 0
    for kern in kernels:
        for st in (stages or (DEFAULT_STAGES[kern],)):
            rc |= _run_check_one(kern, quick, layouts, seed, check_stages(st))
    return rc


def _run_check_one(kernel: str, quick: bool, layouts, seed: int, stages: int = STAGES) -> int:
    print("\n" + tr("{kernel} check: BLOCK_M {bm}, BLOCK_N {bn}, {stages} stages, smem {smem}", kernel=KERNELS[kernel],
                    bm=BLOCK_M, bn=BLOCK_N, stages=stages,
                    smem=', '.join(f'D{d} {smem_bytes(d, stages)} B' for d in HEAD_DIMS)), flush=True)
    for d in HEAD_DIMS:
        for vk in (False, True):
            bad = [f"stage {st}: {b}" for st in range(stages) for b in simulate_operands(d, vk, st, stages=stages)]
            print(tr("descriptor model (CPU) D{d} V {major}-major, stages 0..{last}: {result}", d=d,
                     major='K' if vk else 'MN', last=stages - 1,
                     result="ok" if not bad else tr("WRONG {bad}", bad=bad)))
    print(tr("P-from-registers fragment model (CPU): {result}", result="ok" if simulate_p_fragment() else tr("WRONG")),
          flush=True)
    why = unavailable_reason()
    if why:
        print(tr("GPU cases skipped: {why}", why=why))
        return 0
    failed = {}
    cases = check_cases(quick)
    for vk in layouts:
        for i, (size, dt) in enumerate(cases):
            b, hq, hkv, s, d, causal = size
            # a persistent rung gets every other case on 2 blocks, so each walks several tiles (a small case on a
            # full grid is one tile per block)
            blocks = 2 if kernel in PERSISTENT and i % 2 else None
            print(tr("[{i}/{n}] {kernel} ({stages} stages) V {major}-major B{b} Hq{hq} Hkv{hkv} S{s} D{d} {mask} "
                     "{dtype}{blocks}", i=i + 1, n=len(cases), kernel=KERNELS[kernel], stages=stages,
                     major='K' if vk else 'MN', b=b, hq=hq, hkv=hkv, s=s, d=d, mask='causal' if causal else 'full',
                     dtype=dt, blocks=tr(" on {n} blocks", n=blocks) if blocks else ''), flush=True)
            ok, lines = check_case(size, dt, v_kmajor=vk, seed=seed + i, kernel=kernel, stages=stages, blocks=blocks)
            print("\n".join(lines), flush=True)
            if not ok:
                failed.setdefault(vk, []).append((size, dt))
            if any("HANG" in x for x in lines):
                print(tr("  (a barrier timed out: the remaining cases of this layout would each wait it out; "
                         "stopping)"))
                break
    if False in failed and True not in layouts:
        print("\n" + tr("{n} case(s) failed with V MN-major; rerunning them with the K-major fallback (V transposed, "
                        "-DV_KMAJOR=1):", n=len(failed[False])), flush=True)
        n_ok = 0
        for size, dt in failed[False]:
            ok, lines = check_case(size, dt, v_kmajor=True, verbose=False, kernel=kernel, stages=stages)
            n_ok += ok
            print(f"  {size} {dt}: {'ok' if ok else tr('still wrong')}{'' if ok else ' ' + lines[0].strip()}",
                  flush=True)
        if n_ok == len(failed[False]):
            print(tr("-> every failure goes away with V K-major: the MN-major V descriptor (LBO/SBO/start step, tnspB) "
                     "is the suspect"))
        elif n_ok == 0:
            print(tr("-> the fallback fails too: the bug is not (only) V's descriptor"))
    print(tr("{kernel} ({stages} stages) check: {result}", kernel=KERNELS[kernel], stages=stages,
             result=tr("all correct") if not failed else
             "; ".join(tr("V {major}-major: {n} failed", major='K' if k else 'MN', n=len(v))
                       for k, v in failed.items())))
    return 0 if not failed else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m phase4_optimization.lab06_attention.hopper",
                                description=tr("Lab 4.6's Hopper attention forward (kernels_hopper.cu): the compile "
                                               "report for sm_90a (any machine) and, with --check, small cases against "
                                               "float64 on an sm_90 GPU."))
    p.add_argument("--check", action="store_true", help=tr("run the small awkward cases (O and LSE, outputs "
                                                           "poisoned) and print per case the error and where it "
                                                           "fails"))
    p.add_argument("--quick", action="store_true", help=tr("with --check: only S in {17, 129, 301}"))
    p.add_argument("--layout", choices=("mn", "k", "both"), default="mn",
                   help=tr("V's layout: mn (default, read in place), k (the transposed-copy fallback) or both"))
    p.add_argument("--seed", type=int, default=0, help=tr("first input seed (case i uses seed + i)"))
    p.add_argument("--kernel", choices=(*KERNELS, "all"), default="all",
                   help=tr("which rung: {rungs} or all (default)",
                           rungs=", ".join(f"{k} ({name})" for k, name in KERNELS.items())))
    p.add_argument("--stages", choices=("default", *map(str, STAGE_CHOICES), "all"), default="default",
                   help=tr("the K/V ring's depth: each rung's default ({defaults}), 2, 3, or all",
                           defaults=", ".join(f"{k}: {n}" for k, n in DEFAULT_STAGES.items())))
    p.add_argument("--no-compile-report", action="store_true", help=tr("skip the sm_90a compile table"))
    cli.add_lang(p)
    args = p.parse_args(argv)
    if args.lang:
        set_lang(args.lang)
    if not args.no_compile_report:
        from common import report

        report.print_table(compile_rows(), title="kernels_hopper.cu compiled for sm_90a (NVRTC)")
    if not args.check:
        return 0
    layouts = {"mn": (False,), "k": (True,), "both": (False, True)}[args.layout]
    kernels = tuple(KERNELS) if args.kernel == "all" else (args.kernel,)
    stages = None if args.stages == "default" else STAGE_CHOICES if args.stages == "all" else (int(args.stages),)
    return run_check(quick=args.quick, layouts=layouts, seed=args.seed, kernels=kernels, stages=stages)


if __name__ == "__main__":
    sys.exit(main())
