"""Lab 4.6's measurements on a GPU: the targets (the Triton flash kernels, tuned first, against SDPA's cuDNN and
FlashAttention-2 backends, the CUDA C and Hopper rungs in the same interleaved rounds), the grouped-query forward,
naive against flash, the CUDA C rungs and occupancy shapes, and --tune (the tile sweep, its winners recorded for this
GPU); every timed kernel checked against float64 on sampled heads."""
from __future__ import annotations

import math

from common import bench, check, device, lab, report, target
from common.i18n import tr

from . import lab as L
from . import tiles
from .cases import (BWD_CANDIDATES, CUDA_CONFIGS, CUDA_GOAL, CUDA_SHAPE, FWD_CANDIDATES, GQA_TARGET, HOPPER_BWD_GOAL,
                    HOPPER_CASES, HOPPER_GOAL, HOPPER_GQA, HOPPER_GQA_RUNGS, HOPPER_ROW, HOPPER_ROWS, NAIVE_SHAPE,
                    TARGETS)


def _randn(shape, dtype: str, seed: int):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(getattr(torch, dtype))


def tune_configs(kind: str, shape, causal: bool, dtype: str, tensors, candidates) -> list[dict]:
    """Time each candidate once at this shape (what triton.autotune does, in the open); keep the fastest in tiles.TUNED.
    A candidate that does not compile (too much shared memory, say) is reported and skipped."""
    q, k, v, do, o, lse = tensors
    d = shape[3]
    rows = []
    for cfg in candidates:
        if kind == "fwd":
            fn = (lambda c=cfg: L.flash_attn_fwd(q, k, v, causal, out=(o, lse), config=c))
        else:
            fn = (lambda c=cfg: L.flash_attn_bwd(do, q, k, v, o, lse, causal, config=c))
        try:
            t = bench.bench(fn, rep_ms=30, warmup_ms=10)
            rows.append({"kind": kind, "shape": shape, "causal": causal, "config": cfg, "ms": t.median_ms,
                         "tflops": t.tflops(L.attn_flops(*shape, causal, backward=kind == "bwd"))})
        except Exception as e:  # noqa: BLE001 - out of resources etc.: report, try the next
            rows.append({"kind": kind, "shape": shape, "causal": causal, "config": cfg, "ms": None,
                         "error": f"{type(e).__name__}: {str(e)[:100]}"})
    timed = [r for r in rows if r["ms"] is not None]
    if timed:
        tiles.TUNED[(kind, d, causal, dtype)] = min(timed, key=lambda r: r["ms"])["config"]
    return rows


def _naive_torch_heads(q, k, v, causal, do=None, heads: int = 2):
    """Float64 attention on the GPU for the first `heads` heads of batch 0 (torch ops, S x S materialized): O, or with
    dO the gradients (dQ, dK, dV) by torch.autograd. A benchmark-sized problem is too big for NumPy on the host."""
    import torch

    qq, kk, vv = (t[:1, :heads].detach().double().requires_grad_(do is not None) for t in (q, k, v))
    s = qq.shape[-2]
    sc = torch.matmul(qq, kk.transpose(-1, -2)) / math.sqrt(qq.shape[-1])
    if causal:
        sc = sc.masked_fill(~torch.ones(s, s, dtype=torch.bool, device=sc.device).tril(), float("-inf"))
    o = torch.matmul(torch.softmax(sc, dim=-1), vv)
    if do is None:
        return o.detach()
    return torch.autograd.grad(o, (qq, kk, vv), do[:1, :heads].double())


def _sample_compare(got, ref, dtype: str, heads: int = 2) -> check.Comparison:
    """Compare the first `heads` heads of batch 0 with the float64 result for them (on the host)."""
    return check.compare(got[:1, :heads].float().cpu().numpy(), ref.double().cpu().numpy(), dtype,
                         L.tolerance(None, dtype))


def _config_label(kind: str, d: int, causal: bool, dtype: str) -> str:
    """What the wrappers used: this run's tuning, this GPU's record, the default (or --set) - and the config."""
    res = L.resolved_config(kind, d, causal, dtype)
    src = res.source()
    tag = "tuned in this run" if src == L.THIS_RUN else "recorded" if src.startswith("tuned on") else src
    return f"{tag}: {L._config_of(kind, res.values)}"


def tune(ctx) -> lab.Result:
    """--tune: FWD_CANDIDATES / BWD_CANDIDATES timed at each Triton target's shape (one timing per candidate, as the
    benchmark's own tuning does), the fastest checked against float64 on sampled heads (a wrong one is dropped and
    the next fastest checked), and the winners recorded for this GPU in results/<gpu>/phase4_lab06_attention_tuned
    .json, which flash_attn_fwd / flash_attn_bwd read when no config is passed."""
    from common import tuned

    rows, winners, checks = [], {}, []
    for label, kind, shape, causal, _peer, _goal in TARGETS:
        shape = _fitted(shape, L.target_bytes(kind), label)
        b, h, s, d = shape
        dtype = "bfloat16"
        cands = FWD_CANDIDATES.get(d, []) if kind == "fwd" else BWD_CANDIDATES.get(d, [])
        print(tr("tuning {label} B{b} H{h} S{s} D{d}: {n} candidates", label=label, b=b, h=h, s=s, d=d, n=len(cands)),
              flush=True)
        q, k, v, do = (_randn(shape, dtype, 100 + i) for i in range(4))
        o, lse = L.flash_attn_fwd(q, k, v, causal, config=L.fwd_default_gpu(d, causal))
        r = tune_configs(kind, shape, causal, dtype, (q, k, v, do, o, lse), cands)
        rows += r
        ref = _naive_torch_heads(q, k, v, causal, do if kind == "bwd" else None)
        for cand in sorted((x for x in r if x["ms"] is not None), key=lambda x: x["ms"]):
            cfg = cand["config"]
            if kind == "fwd":
                got, _ = L.flash_attn_fwd(q, k, v, causal, config=cfg)
                c = _sample_compare(got, ref, dtype)
            else:
                cs = [_sample_compare(g, rr, dtype) for g, rr in
                      zip(L.flash_attn_bwd(do, q, k, v, o, lse, causal, config=cfg), ref)]
                c = next((x for x in cs if not x.ok), cs[0])
            checks.append({"case": label, "config": str(cfg), "ms": cand["ms"], "check": "ok" if c.ok else c.message})
            if c.ok:
                winners[L.record_key(kind, d, causal, dtype)] = L.check_tuned_config(kind, cfg)
                break
        tiles.TUNED.pop((kind, d, causal, dtype), None)     # the record, not this process's pick, is what is used now
        del q, k, v, do, o, lse
    tuned.forget()
    print(tr("winners: {list} (recorded; used from now on)",
             list="; ".join(f"{k_}: {v_}" for k_, v_ in winners.items())))
    return lab.Result(rows=rows, name=L.TUNED_RECORD,
                      meta=dict(winner=winners, checks=checks, device=device.info().as_dict(),
                                shapes={t[0]: list(t[2]) for t in TARGETS}),
                      tables=[([dict(r_, config=str(r_["config"])) for r_ in rows],
                               ["kind", "shape", "causal", "config", "ms", "tflops", "error"],
                               tr("Tuning at the target shapes (one timing per candidate)")),
                              (checks, None, tr("The winners, fastest first, checked against float64 on sampled heads "
                                                "until one passed"))],
                      ok=len(winners) == len(TARGETS))


def _fitted(shape, nbytes, label: str, batch_only: bool = False) -> tuple:
    """A benchmark shape scaled to this GPU's memory (L.fit_shape), saying so when it was."""
    shape, note = L.fit_shape(shape, nbytes, device.info(), label, batch_only)
    if note:
        print(f"{label}: {note}")
    return shape


def bench_targets(rounds: int = 3, do_tune: bool = True) -> tuple[list[dict], list[target.Target], list[dict]]:
    """The four targets: the Triton flash kernels (tuned first unless --quick), the SDPA backends and the CUDA C
    forward in interleaved rounds, each checked at the benchmark shape on sampled heads. The targets' contenders
    (Triton, the peer, the Hopper rungs) are timed in steady rounds; the others, context only, in plain interleaved
    rounds afterwards (one noisy bystander would make every round unsteady)."""
    import torch

    from . import hopper, hopper_bwd

    rows, targets, tuning = [], [], []
    bwd_row = hopper_bwd.ROW_NAMES[hopper_bwd.DEFAULT_RUNG]       # the CUDA C backward's row and target
    cuda_ok = not L.unavailable_reason()
    hopper_ok = hopper.unavailable_reason() is None
    for label, kind, shape, causal, peer, goal in TARGETS:
        shape = _fitted(shape, L.target_bytes(kind), label)
        b, h, s, d = shape
        dtype = "bfloat16"
        q, k, v, do = (_randn(shape, dtype, 100 + i) for i in range(4))
        o, lse = L.flash_attn_fwd(q, k, v, causal)
        if do_tune:
            cands = FWD_CANDIDATES.get(d, []) if kind == "fwd" else BWD_CANDIDATES.get(d, [])
            tuning += tune_configs(kind, shape, causal, dtype, (q, k, v, do, o, lse), cands)
        flops = L.attn_flops(b, h, s, d, causal, backward=kind == "bwd")
        # correctness at the benchmark shape, against float64 on sampled heads
        hc = None
        if kind == "fwd":
            L.flash_attn_fwd(q, k, v, causal, out=(o, lse))
            ref = _naive_torch_heads(q, k, v, causal)
            c = _sample_compare(o, ref, dtype)
            fns = {"triton flash": lambda: L.flash_attn_fwd(q, k, v, causal, out=(o, lse))}
            for name, backend in (("torch SDPA cuDNN", "cudnn"), ("torch SDPA flash", "flash")):
                if not L.sdpa_unavailable(backend):
                    fns[name] = (lambda b_=backend: L.sdpa_fwd(q, k, v, causal, b_))
            if cuda_ok:
                fns["cuda mma.sync flash"] = lambda: L.flash_attn_cuda(q, k, v, causal=causal)
            if hopper_ok and label in HOPPER_CASES:
                hc = {}
                for rung, st in hopper.BENCH_BUILDS:
                    row_name = HOPPER_ROWS[(rung, st)]
                    ho, hl = hopper.flash_attn_hopper(q, k, v, causal=causal, kernel=rung, stages=st)
                    hc[row_name] = _sample_compare(ho, ref, dtype)
                    fns[row_name] = (lambda r_=rung, s_=st, o_=ho, l_=hl:
                                     hopper.flash_attn_hopper(q, k, v, causal=causal, out=o_, lse=l_, kernel=r_,
                                                              stages=s_))
        else:
            dq, dk, dv = L.flash_attn_bwd(do, q, k, v, o, lse, causal)
            fns = {"triton flash": lambda: L.flash_attn_bwd(do, q, k, v, o, lse, causal)}
            for name, backend in (("torch SDPA cuDNN", "cudnn"), ("torch SDPA flash", "flash")):
                if L.sdpa_unavailable(backend):
                    continue
                qq, kk, vv = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
                out_ = L.sdpa_fwd(qq, kk, vv, causal, backend)
                fns[name] = (lambda o_=out_, i_=(qq, kk, vv): torch.autograd.grad(o_, i_, do, retain_graph=True))
            ref = _naive_torch_heads(q, k, v, causal, do)
            cs = [_sample_compare(g, r, dtype) for g, r in zip((dq, dk, dv), ref)]
            c = next((x for x in cs if not x.ok), cs[0])
            if hopper_ok and d in hopper_bwd.HEAD_DIMS:     # the CUDA C backward's default rung, checked the same way
                hg = hopper_bwd.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal)
                hcs = [_sample_compare(g, r, dtype) for g, r in zip(hg, ref)]
                hc = {bwd_row: next((x for x in hcs if not x.ok), hcs[0])}
                fns[bwd_row] = (lambda o_=hg: hopper_bwd.flash_attn_bwd_hopper(do, q, k, v, o, lse, causal, out=o_))
        quoted = {"triton flash", peer, *(hc or {})}
        ts, tries, steady = bench.steady({k: f for k, f in fns.items() if k in quoted}, rounds=rounds, rep_ms=60,
                                         warmup_ms=20)
        context = {k: f for k, f in fns.items() if k not in quoted}
        if context:
            ts.update(bench.interleaved(context, rounds=rounds, rep_ms=60, warmup_ms=20))
        for name, t in ts.items():
            impl = "triton" if name.startswith("triton") else "cuda" if name.startswith("cuda") else "peer"
            # compute-bound: TFLOP/s is the figure of merit (no GB/s column); one table per case (part)
            rows.append(report.row(L.LAB, f"{name} {kind}", impl, shape, dtype, t, flops=flops, part=label,
                                   case=label, causal=causal,
                                   vs_peer=ts[peer].median_ms / t.median_ms if peer in ts else None,
                                   config=_config_label(kind, d, causal, dtype)
                                   if impl == "triton" else "",
                                   check=("ok" if c.ok else c.message) if impl == "triton" else
                                   ("ok" if hc[name].ok else hc[name].message) if name in (hc or {}) else ""))
        if peer in ts:
            ratio = ts[peer].median_ms / ts["triton flash"].median_ms
            targets.append(target.versus(f"{label} B{b} H{h} S{s} bf16", "triton flash", peer, ratio, steady=steady,
                                         at_least=goal, checked=c.ok,
                                         detail={"triton TFLOP/s": ts["triton flash"].tflops(flops),
                                                 "peer TFLOP/s": ts[peer].tflops(flops), "rounds_run": tries}))
        else:
            why = L.sdpa_unavailable('cudnn' if 'cuDNN' in peer else 'flash')
            targets.append(target.versus(f"{label} B{b} H{h} S{s} bf16", "triton flash", peer, None, steady=steady,
                                         at_least=goal, note=f"not measured: {why}"))
        if label in HOPPER_CASES:
            for build in hopper.BENCH_BUILDS:
                row_name = HOPPER_ROWS[build]
                targets.append(hopper_target(label, shape, ts, peer, flops, (hc or {}).get(row_name),
                                             hopper.unavailable_reason(), row_name, steady=steady))
        if kind == "bwd" and d in hopper_bwd.HEAD_DIMS:
            targets.append(hopper_target(label, shape, ts, peer, flops, (hc or {}).get(bwd_row),
                                         hopper.unavailable_reason(), bwd_row, steady=steady, goal=HOPPER_BWD_GOAL))
    return rows, targets, tuning


def hopper_target(label: str, shape, ts: dict, peer: str, flops: float, hc, why: str | None,
                  row_name: str = HOPPER_ROW, *, steady: bool, goal: float = HOPPER_GOAL) -> target.Target:
    """A Hopper rung's target: row_name against `peer` (SDPA cuDNN) in the same rounds, >= goal (HOPPER_GOAL for the
    forward's rungs, HOPPER_BWD_GOAL for the backward's; its case names the rung, so the lab's headline stays the
    Triton kernel's)."""
    b, h, s, _ = shape
    case = f"{label} B{b} H{h} S{s} bf16, {row_name}"
    if why or row_name not in ts or peer not in ts:
        return target.versus(case, row_name, peer, None, steady=steady, at_least=goal,
                             note=f"not measured: {why or L.sdpa_unavailable('cudnn')}")
    return target.versus(case, row_name, peer, ts[peer].median_ms / ts[row_name].median_ms, steady=steady,
                         at_least=goal, checked=hc is not None and hc.ok,
                         detail={"peer TFLOP/s": ts[peer].tflops(flops)})


def bench_gqa(rounds: int = 3) -> tuple[list[dict], target.Target]:
    """The grouped-query forward against SDPA, interleaved rounds, checked on sampled heads against float64 (the
    sampled query heads read key/value head 0, whose expanded copy the float64 check uses)."""
    import torch

    label, shape, causal, goal = GQA_TARGET
    b, hq, hkv, s, d = _fitted(shape, L.gqa_bytes, label, batch_only=True)
    dtype = "bfloat16"
    q = _randn((b, hq, s, d), dtype, 200)
    k, v = (_randn((b, hkv, s, d), dtype, 201 + i) for i in range(2))
    o, lse = L.flash_attn_fwd(q, k, v, causal)
    group = hq // hkv
    ke, ve = (t.repeat_interleave(group, dim=1).contiguous() for t in (k, v))
    c = _sample_compare(o, _naive_torch_heads(q, ke, ve, causal), dtype)
    flops = L.attn_flops(b, hq, s, d, causal)
    fns = {"triton flash (GQA)": lambda: L.flash_attn_fwd(q, k, v, causal, out=(o, lse)),
           **_gqa_peers(q, k, v, ke, ve, causal)}
    ts, tries, steady = bench.steady(fns, rounds=rounds, rep_ms=60, warmup_ms=20)
    peers = {n: t for n, t in ts.items() if not n.startswith("triton")}
    rows = [report.row(L.LAB, f"{name} fwd", "triton" if name.startswith("triton") else "peer", (b, hq, s, d), dtype,
                       t, flops=flops, part=label, case=label, causal=causal, kv_heads=hkv,
                       check=("ok" if c.ok else c.message) if name.startswith("triton") else "")
            for name, t in ts.items()]
    if not peers:
        return rows, target.versus(label, "triton flash (GQA)", "torch SDPA", None, steady=steady, at_least=goal,
                                   note="not measured: no SDPA backend ran")
    best = min(peers, key=lambda n: peers[n].median_ms)
    ratio = peers[best].median_ms / ts["triton flash (GQA)"].median_ms
    gqa = target.versus(f"{label} B{b} S{s} bf16", "triton flash (GQA)", f"{best} (SDPA's fastest here)", ratio,
                        steady=steady, at_least=goal, checked=c.ok,
                        detail={"triton TFLOP/s": ts["triton flash (GQA)"].tflops(flops),
                                "peer TFLOP/s": peers[best].tflops(flops), "rounds_run": tries})
    q = k = v = ke = ve = o = lse = None      # the closures above hold them; let the allocator have them back
    torch.cuda.empty_cache()
    return rows, gqa


def _gqa_peers(q, k, v, ke, ve, causal: bool) -> dict:
    """SDPA's ways to a grouped-query forward here: its cuDNN and FlashAttention-2 backends on k, v expanded to every
    query head beforehand, and native enable_gqa (whichever backend torch picks); those this torch can run."""
    import torch.nn.functional as F

    fns = {}
    for name, backend in (("torch SDPA cuDNN", "cudnn"), ("torch SDPA flash", "flash")):
        if not L.sdpa_unavailable(backend):
            fns[f"{name}, k/v expanded"] = (lambda b_=backend: L.sdpa_fwd(q, ke, ve, causal, b_))
    try:
        F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        fns["torch SDPA enable_gqa"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                              enable_gqa=True)
    except (TypeError, RuntimeError):
        pass
    return fns


def bench_hopper_gqa(rounds: int = 3) -> tuple[list[dict], list[target.Target]]:
    """The Hopper forward's grouped-query targets, causal and not: HOPPER_GQA_RUNGS (each at its default ring depth)
    against SDPA's fastest grouped-query forward in the same steady rounds, >= HOPPER_GOAL; each rung checked first
    against float64 on sampled heads (query heads 0 and `group`, which read key/value heads 0 and 1)."""
    import torch

    from . import hopper

    label, shape = HOPPER_GQA
    why = hopper.unavailable_reason()
    if why:
        return [], [target.versus(f"{label} {c}", "cuda", "torch SDPA", None, steady=False, at_least=HOPPER_GOAL,
                                  note=f"not measured: {why}") for c in ("non-causal", "causal")]
    b, hq, hkv, s, d = _fitted(shape, L.gqa_bytes, label, batch_only=True)
    dtype, group = "bfloat16", hq // hkv
    q = _randn((b, hq, s, d), dtype, 300)
    k, v = (_randn((b, hkv, s, d), dtype, 301 + i) for i in range(2))
    ke, ve = (t.repeat_interleave(group, dim=1).contiguous() for t in (k, v))
    heads = [0, group] if group < hq else [0]
    o = torch.empty_like(q)
    lse = torch.empty((b, hq, s), device="cuda", dtype=torch.float32)
    rows, targets = [], []
    for causal in (False, True):
        case = f"{label} {'causal' if causal else 'non-causal'}"
        flops = L.attn_flops(b, hq, s, d, causal)
        ref = _naive_torch_heads(q[:, heads], ke[:, heads], ve[:, heads], causal, heads=len(heads))
        fns, checks = _gqa_peers(q, k, v, ke, ve, causal), {}
        for rung in HOPPER_GQA_RUNGS:
            row_name = HOPPER_ROWS[(rung, hopper.DEFAULT_STAGES[rung])]
            o.fill_(float("nan"))
            hopper.flash_attn_hopper(q, k, v, causal=causal, out=o, lse=lse, kernel=rung)
            checks[row_name] = _sample_compare(o[:, heads], ref, dtype, heads=len(heads))
            fns[row_name] = (lambda r_=rung, c_=causal: hopper.flash_attn_hopper(q, k, v, causal=c_, out=o, lse=lse,
                                                                               kernel=r_))
        ts, tries, steady = bench.steady(fns, rounds=rounds, rep_ms=60, warmup_ms=20)
        peers = {n: t for n, t in ts.items() if n not in checks}
        best = min(peers, key=lambda n: peers[n].median_ms) if peers else None
        for name, t in ts.items():
            rows.append(report.row(L.LAB, f"{name} fwd", "peer" if name in peers else "cuda", (b, hq, s, d), dtype, t,
                                   flops=flops, part=case, case=case, causal=causal, kv_heads=hkv,
                                   vs_peer=peers[best].median_ms / t.median_ms if best else None,
                                   check=("ok" if checks[name].ok else checks[name].message) if name in checks
                                   else ""))
        for name, c in checks.items():
            full = f"{case} B{b} S{s} bf16, {name}"
            if best is None:
                targets.append(target.versus(full, name, "torch SDPA", None, steady=steady, at_least=HOPPER_GOAL,
                                             note="not measured: no SDPA backend ran"))
                continue
            targets.append(target.versus(full, name, f"{best} (SDPA's fastest here)",
                                         peers[best].median_ms / ts[name].median_ms, steady=steady,
                                         at_least=HOPPER_GOAL, checked=c.ok,
                                         detail={"TFLOP/s": ts[name].tflops(flops),
                                                 "peer TFLOP/s": peers[best].tflops(flops), "rounds_run": tries}))
    q = k = v = ke = ve = o = lse = None      # the closures above hold them; let the allocator have them back
    torch.cuda.empty_cache()
    return rows, targets


def bench_naive(rounds: int = 3) -> list[dict]:
    """Naive against flash at a shape where S x S still fits comfortably: the bytes each moves, and the time."""
    shape = _fitted(NAIVE_SHAPE, L.naive_bench_bytes, "naive vs flash")
    b, h, s, d = shape
    q, k, v = (_randn(shape, "bfloat16", 200 + i) for i in range(3))
    o, lse = L.flash_attn_fwd(q, k, v, False)
    o_n, lse_n, p = L.naive_attn_fwd(q, k, v, False)
    c = _sample_compare(o_n, _naive_torch_heads(q, k, v, False), "bfloat16")
    del p
    ts = bench.interleaved({"naive": lambda: L.naive_attn_fwd(q, k, v, False),
                            "triton flash": lambda: L.flash_attn_fwd(q, k, v, False, out=(o, lse))},
                           rounds=rounds, rep_ms=60, warmup_ms=20)
    rows = []
    for name, nbytes in (("naive", L.naive_bytes(b, h, s, d, 2)), ("triton flash", L.flash_bytes(b, h, s, d, 2))):
        rows.append(report.row(L.LAB, f"{name} fwd", "triton", shape, "bfloat16", ts[name], nbytes=nbytes,
                               flops=L.attn_flops(b, h, s, d, False), ceiling_gbps=bench.ceilings()["hbm_gbps"],
                               case="naive vs flash", part="naive vs flash", causal=False, GB=nbytes / 1e9,
                               check="ok" if c.ok else f"naive o vs float64: {c.message}"))
    return rows


def config_name(kernel, nwarps=None, min_blocks=None) -> str:
    extra = ", ".join(x for x in (f"{nwarps} warps" if nwarps else "", f"min_blocks {min_blocks}" if min_blocks else "")
                      if x)
    return L.KERNELS[kernel] + (f" ({extra})" if extra else "")


def bench_cuda_shapes(quick: bool) -> tuple[list[dict], target.Target]:
    """The CUDA C rungs and rung 02's occupancy shapes against SDPA's flash and cuDNN backends (interleaved rounds),
    causal and not, at CUDA_SHAPE (S = 1024 with --quick): rows, and the rung-02 target against SDPA flash."""
    import torch

    b, h, s, d = _fitted((4, 32, 1024, 128) if quick else CUDA_SHAPE, L.cuda_bench_bytes, "cuda shapes")
    rows = []
    q, k, v = (_randn((b, h, s, d), "bfloat16", 400 + i) for i in range(3))
    o = torch.empty_like(q)
    lse = torch.empty((b, h, s), device="cuda", dtype=torch.float32)
    steadiness = {}
    for causal in (False, True):
        fns = {config_name(kern, nw, mb): (lambda c=causal, kern=kern, nw=nw, mb=mb: L.flash_attn_cuda(
            q, k, v, c, out=o, lse=lse, kernel=kern, nwarps=nw, min_blocks=mb)) for kern, nw, mb in CUDA_CONFIGS}
        for name, backend in (("torch SDPA flash", "flash"), ("torch SDPA cuDNN", "cudnn")):
            if not L.sdpa_unavailable(backend):
                fns[name] = (lambda c=causal, be=backend: L.sdpa_fwd(q, k, v, c, be))
        ts, _, steadiness[causal] = bench.steady(fns, rounds=3 if quick else 5, rep_ms=30 if quick else 60)
        fl = L.attn_flops(b, h, s, d, causal)
        flash_ms = ts["torch SDPA flash"].median_ms if "torch SDPA flash" in ts else None
        for name, t in ts.items():
            rows.append(report.row(L.LAB, name, "peer" if name.startswith("torch") else "cuda", (b, h, s, d),
                                   "bfloat16", t, flops=fl, part="cuda shapes", causal=causal,
                                   vs_flash=flash_ms / t.median_ms if flash_ms else None))
    cand = [r for r in rows if not r["causal"] and r["variant"].startswith((L.KERNELS["02"], L.KERNELS["02w"]))]
    best = max(cand, key=lambda r: r["tflops"])
    # --quick times a smaller S: a reference line there, not the target
    note = "--quick: not the target size" if quick else "" if best["vs_flash"] is not None else "not measured"
    return rows, target.versus(f"cuda fwd D{d} non-causal B{b} H{h} S{s} bf16", best["variant"], "torch SDPA flash",
                               best["vs_flash"], steady=steadiness[False], at_least=None if quick else CUDA_GOAL,
                               note=note)


def benchmark(ctx) -> lab.Result:
    why = L.triton_unavailable(device.info())
    if why:         # every target, the naive comparison and the peers' checks run the Triton flash kernels
        print(tr("benchmark skipped: {why}", why=why))
        return lab.Result(rows=[], meta=dict(device=device.info().as_dict(), skipped=why))
    quick = ctx.quick
    rows, targets, tuning = bench_targets(rounds=1 if quick else 3, do_tune=not quick)
    gqa_rows, gqa_target = bench_gqa(rounds=1 if quick else 3)
    rows += gqa_rows
    targets.append(gqa_target)
    hgqa_rows, hgqa_targets = bench_hopper_gqa(rounds=1 if quick else 3)
    rows += hgqa_rows
    targets += hgqa_targets
    naive_rows = bench_naive(rounds=1 if quick else 2)
    cuda_rows = []
    if not L.unavailable_reason():
        cuda_rows, cuda_target = bench_cuda_shapes(quick)
        targets.append(cuda_target)
    tables = [(rows, ["case", "variant", "shape", "ms", "tflops", "vs_peer", "config", "check"],
               tr("Attention, bf16 (TFLOP/s: 4 B H S^2 D forward, halved for causal, backward 2.5x)")),
              (naive_rows, ["variant", "shape", "ms", "GB", "gbps", "frac_ceiling", "tflops", "check"],
               tr("Naive (S and P in HBM) against flash, forward, {shape} non-causal (GB: bytes each must move)",
                  shape=tuple(naive_rows[0]['shape'])))]
    if cuda_rows:
        tables.append((cuda_rows, ["variant", "shape", "causal", "ms", "tflops", "vs_flash", "spread"],
                       tr("the CUDA C forward's rungs and occupancy shapes (vs_flash = SDPA flash time / this time)")))
    if tuning:
        tables.append(([dict(r, config=str(r["config"])) for r in tuning],
                       ["kind", "shape", "causal", "config", "ms", "tflops", "error"],
                       tr("Tuning at the target shapes (one timing per candidate; the fastest is used above)")))
    tables.append((target.said(targets), None, tr("Performance targets (same run)")))
    all_rows = rows + naive_rows
    return lab.Result(rows=all_rows + cuda_rows, meta=dict(targets=target.records(targets), tuning=tuning,
                                                           device=device.info().as_dict()),
                      tables=tables, ok=all(r.get("check") in ("", "ok") for r in all_rows))
