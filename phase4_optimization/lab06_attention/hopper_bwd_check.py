"""Lab 4.6's Hopper backward checked case by case on an sm_90 GPU, and where a failure is: the first thing to run when
a rung of kernels_hopper_bwd.cu is new. Per rung and small awkward case (ragged S, causal and not, GQA and MQA, D 64
and 128, fp16 and bf16), dQ, dK and dV go into poisoned outputs inside guard bands and are compared with the float64
reference (reference.reference) at the lab's tolerance; for a failing gradient it prints how many elements are wrong
or never written, and how they fall on the kernel's structure - 64-row tiles (dK, dV: key tiles, one block each; dQ:
query tiles), 16-row warp slabs (a warp's M = 16 in every rung), rows mod 16 (the fragment's g and g + 8), 8-column
blocks and columns mod 8 (the fragment's 2t, 2t + 1), the halves of d (rung 03's dQ wgmmas) - so that one run says
which piece to read. The pytest tier (tests/test_phase4_lab06_attention_hopper_bwd_gpu.py) judges by FlashAttention's
rule; this command diagnoses.

Run: python -m phase4_optimization.lab06_attention.hopper_bwd_check [--rung 01 .. 12|all] [--quick] [--seed N]
Anywhere else it prints why it cannot run (exit 0) - the compile report is hopper_bwd's own command. A rung that
hangs on a barrier: ATTN_MBAR_TIMEOUT=1 in front of the command builds the bounded waits, and the check prints who
waited on what (hopper_bwd.hang_report).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from common import check, cli, device
from common.i18n import set_lang, tr

from . import hopper
from . import hopper_bwd as hb
from . import lab as L
from .hopper_check import make_case
from .reference import reference

# (B, Hq, Hkv, S, D, causal, dtype): one 64-row tile and a bit, one exact tile, S = 1, several tiles ragged; GQA 4/2,
# MQA 4/1 and Hq = Hkv; both head dims and dtypes; causal over B Hkv = 6 (rung 09's block order: two groups of heads)
CASES = [(1, 2, 2, 1, 64, False, "bfloat16"), (1, 2, 2, 64, 128, True, "float16"), (1, 2, 2, 65, 64, True, "bfloat16"),
         (2, 4, 2, 130, 128, False, "bfloat16"), (1, 4, 1, 203, 64, True, "float16"),
         (1, 2, 2, 257, 128, True, "bfloat16"), (2, 4, 2, 300, 64, False, "float16"),
         (1, 8, 2, 517, 128, True, "float16"), (3, 2, 2, 200, 128, True, "bfloat16")]
QUICK = (1, 3, 5, 8)                   # indices of CASES run by --quick


def unavailable() -> str:
    """'' when the backward can run here, else why not."""
    if not device.has_gpu():
        return tr("no CUDA GPU")
    return hopper.unavailable_reason() or ""


def where_wrong(name: str, got: np.ndarray, ref: np.ndarray, tol: check.Tol) -> list[str]:
    """Lines saying where gradient `name` (B, H, S, D) is wrong or unwritten (NaN), by the kernel's structure."""
    scale = float(np.mean(np.abs(ref))) if ref.size else 0.0
    with np.errstate(invalid="ignore"):
        bad = ~(np.abs(got - ref) <= tol.atol + tol.elem * (np.abs(ref) + scale))
    if not bad.any():
        return []
    _, _, rows, cols = np.nonzero(bad)
    d = got.shape[3]
    what = tr("key") if name in ("dk", "dv") else tr("query")
    lines = [tr("  {name}: {bad}/{size} wrong, {nan} NaN (never written, or poisoned)", name=name,
                bad=int(bad.sum()), size=bad.size, nan=int(np.isnan(got).sum())),
             tr("    rows by 64-row {what} tile: {tiles}", what=what, tiles=np.bincount(rows // 64).tolist()),
             tr("    by warp slab (row % 64 // 16): {slabs}  row % 16: {mod}",
                slabs=np.bincount(rows % 64 // 16, minlength=4).tolist(),
                mod=np.bincount(rows % 16, minlength=16).tolist()),
             tr("    cols by half of d: {halves}  by 8-wide block: {blocks}  col % 8: {mod}",
                halves=np.bincount(cols // 64, minlength=max(1, d // 64)).tolist(),
                blocks=np.bincount(cols // 8, minlength=d // 8).tolist(),
                mod=np.bincount(cols % 8, minlength=8).tolist())]
    idx = np.nonzero(bad)
    first = list(zip(*[i[:3].tolist() for i in idx]))
    lines.append(tr("    first: {cells}", cells=", ".join(f"{p} {got[p]:.4g} / {ref[p]:.4g}" for p in first)))
    return lines


def prepare_case(case, seed: int = 0) -> dict:
    """One case's inputs and references, and its outputs poisoned inside guard bands: q, k, v as the forward's check
    draws them (hopper_check.make_case), dO standard normal; O and LSE come from the float64 reference (O rounded to
    the dtype)."""
    import torch

    b, hq, hkv, s, d, causal, dtype = case
    q, k, v, (q64, k64, v64) = make_case((b, hq, hkv, s, d, causal), dtype, seed)
    tdt = q.dtype
    do = torch.from_numpy(check.rng(seed + 1000).standard_normal((b, hq, s, d)).astype(np.float32)).to("cuda", tdt)
    do64 = do.float().cpu().numpy().astype(np.float64)
    o_ref, lse_ref, dq_ref, dk_ref, dv_ref = reference(q64, k64, v64, do64, causal)
    o = torch.from_numpy(o_ref.astype(np.float32)).to(device="cuda", dtype=tdt)
    lse = torch.from_numpy(lse_ref.astype(np.float32)).to("cuda")
    outs = (check.guarded((b, hq, s, d), dtype, q), check.guarded((b, hkv, s, d), dtype, q),
            check.guarded((b, hkv, s, d), dtype, q))
    return {"case": case, "args": (do, q, k, v, o, lse, causal), "outs": outs, "refs": (dq_ref, dk_ref, dv_ref)}


def launch(state: dict, rung: str) -> None:
    """The rung on a prepared case, into its guarded outputs, synchronized."""
    import torch

    hb.flash_attn_bwd_hopper(*state["args"], out=state["outs"], rung=rung)
    torch.cuda.synchronize()


def judge(state: dict) -> tuple[bool, list[str]]:
    """(ok, lines) of a launched case: guard bands intact, each gradient within the lab's tolerance of float64, and
    for a wrong one where it is wrong (where_wrong)."""
    b, hq, hkv, s, d, causal, dtype = state["case"]
    tol = L.tolerance((b, hq, s, d, causal), dtype)
    ok, lines, msgs = True, [], []
    for name, got, ref in zip(("dq", "dk", "dv"), state["outs"], state["refs"]):
        damage = check.guard_damage(got)
        if damage:
            ok = False
            lines.append(tr("  {name}: wrote outside its array: {damage}", name=name, damage=damage))
        g = got.float().cpu().numpy().astype(np.float64)
        c = check.compare(g, ref, dtype, tol)
        msgs.append(f"{name}: {c.message}")
        if not c.ok:
            ok = False
            lines += where_wrong(name, g, ref, tol)
    hang = hb.hang_report()
    if hang:
        ok = False
        lines.append(tr("  HANG RECORD: {record}", record=hang))
    return ok, ["  " + " | ".join(msgs)] + lines


def check_case(case, rung: str, seed: int = 0) -> tuple[bool, list[str]]:
    """One case, one rung: (ok, lines) - prepare_case, launch, judge."""
    state = prepare_case(case, seed)
    try:
        launch(state, rung)
    except Exception as e:  # noqa: BLE001 - reported, and the next case runs (a fault ends the process anyway)
        return False, [tr("  launch failed: {error}", error=f"{type(e).__name__}: {e}")]
    return judge(state)


def run(rungs=hb.RUNGS, quick: bool = False, seed: int = 0) -> int:
    """Every case for every rung; 0 when all are right."""
    cases = [c for i, c in enumerate(CASES) if not quick or i in QUICK]
    failed = {}
    for rung in rungs:
        for i, case in enumerate(cases):
            b, hq, hkv, s, d, causal, dtype = case
            print(tr("[{i}/{n}] rung {rung} ({kernel}) B{b} Hq{hq} Hkv{hkv} S{s} D{d} {mask} {dtype}", i=i + 1,
                     n=len(cases), rung=rung, kernel=hb.KERNELS[rung], b=b, hq=hq, hkv=hkv, s=s, d=d,
                     mask=tr("causal") if causal else tr("non-causal"), dtype=dtype), flush=True)
            ok, lines = check_case(case, rung, seed + i)
            print("\n".join(lines), flush=True)
            if not ok:
                failed.setdefault(rung, []).append(i + 1)
    for rung in rungs:
        print(tr("rung {rung}: {result}", rung=rung, result=tr("all correct") if rung not in failed else
                 tr("cases {cases} failed", cases=", ".join(map(str, failed[rung])))))
    return 1 if failed else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m phase4_optimization.lab06_attention.hopper_bwd_check",
                                description=tr("Lab 4.6's Hopper attention backward on small awkward cases against "
                                               "float64 on an sm_90 GPU: per case the error of dQ, dK and dV and, "
                                               "for a wrong one, where it is wrong (tiles, warp slabs, rows, "
                                               "columns)."))
    p.add_argument("--rung", choices=(*hb.RUNGS, "all"), default="all", help=tr("which rung (default all)"))
    p.add_argument("--quick", action="store_true", help=tr("three of the cases"))
    p.add_argument("--seed", type=int, default=0, help=tr("first input seed (case i uses seed + i)"))
    cli.add_lang(p)
    args = p.parse_args(argv)
    if args.lang:
        set_lang(args.lang)
    why = unavailable()
    if why:
        print(tr("not run: {why}", why=why))
        return 0
    return run(hb.RUNGS if args.rung == "all" else (args.rung,), quick=args.quick, seed=args.seed)


if __name__ == "__main__":
    sys.exit(main())
