"""Lab 4.6, the Hopper backward's measurement: every rung of kernels_hopper_bwd.cu against SDPA cuDNN's backward (the
target: >= 1.0x) and the lab's Triton backward, at the D128 backward shape, causal and not.

Per mask: q, k, v, dO drawn, O and LSE from the lab's Triton forward (what a training step hands the backward); each
rung's dQ, dK, dV checked on sampled heads against float64 (torch autograd in float64 on the GPU) before any timing;
then the rungs and cuDNN in steady interleaved rounds (common.bench.steady, L2 flushed), the Triton backward and
SDPA's FlashAttention-2 backend in plain interleaved rounds beside them (context, not quoted against the target). A
rung whose check fails is timed but its target is not met.

Kept out of the lab's benchmark (timing.py) until the rungs have run on a GPU: a first run that faults would take
the whole lab's measurements with it. Run on an sm_90 GPU:
  python -m phase4_optimization.lab06_attention.hopper_bwd_bench [--quick] [--json out.json]
Anywhere else it prints the rungs' compile report and says why nothing was run.
"""
from __future__ import annotations

import argparse
import json
import sys

from common import bench, cli, device, report, target
from common.i18n import set_lang, tr

from . import hopper
from . import hopper_bwd as hb
from .cases import HOPPER_BWD_GOAL
from . import lab as L
from .timing import _fitted, _naive_torch_heads, _randn, _sample_compare

SHAPE = (4, 32, 4096, 128)             # (B, H, S, D): the backward target's shape (cases.TARGETS)
PEER = "torch SDPA cuDNN"
GOAL = HOPPER_BWD_GOAL                 # the Hopper backward against SDPA cuDNN's (cases.py)
ROWS = hb.ROW_NAMES                     # each rung's row


def unavailable() -> str:
    """'' when the rungs and the peer can run here, else why not."""
    if not device.has_gpu():
        return tr("no CUDA GPU")
    return hopper.unavailable_reason() or L.sdpa_unavailable("cudnn") or ""


def measure(shape=SHAPE, causals=(False, True), rungs=hb.RUNGS, rounds: int = 3) -> tuple[list[dict], list]:
    """(rows, targets) of one run: a row per contender and mask, a target per rung and mask."""
    import torch

    rows, targets = [], []
    shape = _fitted(shape, L.target_bytes("bwd"), "hopper bwd")
    b, h, s, d = shape
    for causal in causals:
        case = f"bwd D{d} {'causal' if causal else 'non-causal'} B{b} H{h} S{s} bf16"
        q, k, v, do = (_randn(shape, "bfloat16", 300 + i) for i in range(4))
        o, lse = L.flash_attn_fwd(q, k, v, causal)
        ref = _naive_torch_heads(q, k, v, causal, do)
        flops = L.attn_flops(b, h, s, d, causal, backward=True)
        fns, checks = {}, {}
        for rung in rungs:
            print(tr("{case}: checking rung {rung} against float64 on sampled heads", case=case, rung=rung))
            outs = hb.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal, rung=rung)
            torch.cuda.synchronize()
            cs = [_sample_compare(g, r, "bfloat16") for g, r in zip(outs, ref)]
            checks[ROWS[rung]] = next((c for c in cs if not c.ok), cs[0])
            fns[ROWS[rung]] = (lambda r_=rung, o_=outs:
                               hb.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal, out=o_, rung=r_))
        qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
        peer_out = L.sdpa_fwd(qq, kk, vv, causal, "cudnn")
        fns[PEER] = lambda: torch.autograd.grad(peer_out, (qq, kk, vv), do, retain_graph=True)
        print(tr("{case}: timing {n} contenders in steady interleaved rounds", case=case, n=len(fns)))
        ts, tries, steady = bench.steady(fns, rounds=rounds, rep_ms=60, warmup_ms=20)
        context = {"triton flash": lambda: L.flash_attn_bwd(do, q, k, v, o, lse, causal)}
        if not L.sdpa_unavailable("flash"):
            qf, kf, vf = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
            flash_out = L.sdpa_fwd(qf, kf, vf, causal, "flash")
            context["torch SDPA flash"] = lambda: torch.autograd.grad(flash_out, (qf, kf, vf), do, retain_graph=True)
        ts.update(bench.interleaved(context, rounds=rounds, rep_ms=60, warmup_ms=20))
        for name, t in ts.items():
            impl = "cuda" if name.startswith("cuda") else "triton" if name.startswith("triton") else "peer"
            c = checks.get(name)
            rows.append(report.row(L.LAB, f"{name} bwd", impl, shape, "bfloat16", t, flops=flops, case=case,
                                   causal=causal, vs_peer=ts[PEER].median_ms / t.median_ms,
                                   check="" if c is None else "ok" if c.ok else c.message))
        for rung in rungs:
            row = ROWS[rung]
            targets.append(target.versus(f"{case}, {row}", row, PEER, ts[PEER].median_ms / ts[row].median_ms,
                                         steady=steady, at_least=GOAL, checked=checks[row].ok,
                                         detail={"TFLOP/s": ts[row].tflops(flops),
                                                 "peer TFLOP/s": ts[PEER].tflops(flops), "rounds_run": tries}))
    return rows, targets


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m phase4_optimization.lab06_attention.hopper_bwd_bench",
                                description=tr("The Hopper attention backward's rungs against SDPA cuDNN's backward "
                                               "(and the Triton backward) at (B, H, S, D) = {shape}, bf16, causal and "
                                               "not: checked against float64 on sampled heads, then timed in steady "
                                               "interleaved rounds. Needs an sm_90 GPU; anywhere else the compile "
                                               "report.", shape=SHAPE))
    p.add_argument("--quick", action="store_true", help=tr("one round and a quarter of the sequence length"))
    p.add_argument("--rounds", type=int, default=3, help=tr("steady interleaved rounds (default 3)"))
    p.add_argument("--causal", choices=("both", "no", "yes"), default="both", help=tr("which masks (default both)"))
    p.add_argument("--rung", choices=(*hb.RUNGS, "all"), default="all", help=tr("which rung (default all)"))
    p.add_argument("--json", metavar="PATH", help=tr("also write the rows and targets to this JSON file"))
    cli.add_lang(p)
    args = p.parse_args(argv)
    if args.lang:
        set_lang(args.lang)
    if args.rounds < 1:
        p.error(tr("--rounds must be at least 1, got {n}", n=args.rounds))
    report.print_table(hb.compile_rows(), title="kernels_hopper_bwd.cu compiled for sm_90a (NVRTC)")
    why = unavailable()
    if why:
        print(tr("not run: {why}", why=why))
        return 0
    shape = (SHAPE[0], SHAPE[1], SHAPE[2] // 4, SHAPE[3]) if args.quick else SHAPE
    causals = {"both": (False, True), "no": (False,), "yes": (True,)}[args.causal]
    rungs = hb.RUNGS if args.rung == "all" else (args.rung,)
    rows, targets = measure(shape, causals, rungs, rounds=1 if args.quick else args.rounds)
    report.print_table(rows, ["case", "variant", "ms", "tflops", "vs_peer", "spread", "check"],
                       title=tr("The Hopper backward against SDPA cuDNN (vs_peer = cuDNN time / this time)"))
    report.print_table(target.said(targets), title=tr("Performance targets (same run)"))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"device": device.info().as_dict(), "rows": rows, "targets": target.records(targets)}, f,
                      indent=1, default=str)
    return 0 if all(r.get("check") in ("", "ok") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
