"""Lab 4.6's numbers on any machine: the FLOPs and the bytes each version must move at the benchmark shapes (flash
is compute-bound, naive is not), and what the lesson predicts for a GPU - the one at hand, or any profile --plan and
the GPU pages describe - from its description alone."""
from __future__ import annotations

import math

from common import cuda, device, report
from common.i18n import tr

from . import lab as L
from .cases import NAIVE_SHAPE, TARGETS


def explain(args) -> None:
    """FLOPs and the bytes each version must move at the benchmark shapes: flash is compute-bound, naive is not; then
    what the lesson predicts for this GPU (the one at hand, or --gpu / --arch's profile)."""
    rows = []
    for label, kind, (b, h, s, d), causal, _, _ in TARGETS + [("naive vs flash", "fwd", NAIVE_SHAPE, False, "", 0)]:
        fl = L.attn_flops(b, h, s, d, causal, backward=kind == "bwd")
        # the backward reads Q, K, V, O, dO and writes dQ, dK, dV (+ LSE and delta): 8 B H S D 16-bit values
        fb = L.flash_bytes(b, h, s, d, 2) if kind == "fwd" else 16 * b * h * s * d + 8 * b * h * s
        nb = L.naive_bytes(b, h, s, d, 2) if kind == "fwd" else None
        rows.append({"case": label, "shape": f"B{b} H{h} S{s} D{d}", "GFLOP": fl / 1e9, "flash MB": fb / 1e6,
                     "flash FLOP/B": fl / fb, "naive MB": nb / 1e6 if nb else None,
                     "naive FLOP/B": fl / nb if nb else None})
    gpu = device.current(args.arch)
    ridge = _ridge(gpu)
    report.print_table(rows, title=tr("the two numbers at the benchmark shapes (bf16; the {gpu}'s bf16 ridge point is "
                                      "{ridge:.0f} FLOP/B: above it compute wins)", gpu=gpu.name, ridge=ridge)
                       if ridge else tr("the two numbers at the benchmark shapes (bf16; the {gpu} has no bf16 tensor "
                                        "cores: above it compute wins)", gpu=gpu.name))
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("what the lesson predicts for {gpu}", gpu=gpu.label()))


def _ridge(gpu) -> float | None:
    """The bf16 ridge point of `gpu`: its datasheet bf16 tensor rate over its memory bandwidth (None: no bf16)."""
    peak = gpu.peak("bf16_tflops")
    return peak * 1e12 / (gpu.hbm_gbps * 1e9) if peak else None


def predict(gpu) -> dict:
    """The lesson's predictions for `gpu`, from its description alone: how far above its bf16 ridge point flash sits,
    the forward's floor at the main case (its FLOPs at the datasheet bf16 rate), what naive against flash should give
    (naive's bytes at the bandwidth against flash's FLOPs at the peak), the Triton forward's tile, programs per SM and
    waves, the CUDA C rung 02's CTAs per SM (the occupancy calculator with its registers), the Hopper persistent grid,
    and how many heads' K and V L2 holds."""
    from common import occupancy

    out = {}
    label, _kind, shape, causal, _peer, _goal = TARGETS[0]
    (b, h, s, d), _ = L.fit_shape(shape, L.target_bytes("fwd"), gpu, label)
    main = f"B{b} H{h} S{s} D{d}"
    fl, by = L.attn_flops(b, h, s, d, causal), L.flash_bytes(b, h, s, d, 2)
    ridge, peak = _ridge(gpu), gpu.peak("bf16_tflops")
    out[tr("flash forward at {shape}: FLOP per byte that must move", shape=main)] = f"{fl / by:.0f}"
    if ridge:
        out[tr("bf16 ridge point (datasheet bf16 rate / bandwidth)")] = \
            tr("{ridge:.0f} FLOP/B: flash is {times:.0f}x above it, compute-bound", ridge=ridge, times=fl / by / ridge)
        out[tr("flash forward floor at {shape} (FLOPs at the bf16 rate)", shape=main)] = \
            f"{fl / (peak * 1e12) * 1e3:.2f} ms"
        (nb_, nh, ns, nd), _ = L.fit_shape(NAIVE_SHAPE, L.naive_bench_bytes, gpu, "naive vs flash")
        naive_ms = max(L.naive_bytes(nb_, nh, ns, nd, 2) / (gpu.hbm_gbps * 1e9),
                       L.attn_flops(nb_, nh, ns, nd, False) / (peak * 1e12))
        flash_ms = L.attn_flops(nb_, nh, ns, nd, False) / (peak * 1e12)
        out[tr("naive / flash forward at S = {s} (floors: naive's bytes, flash's FLOPs)", s=ns)] = \
            tr("{x:.1f}x", x=naive_ms / flash_ms)
    else:
        out[tr("bf16 tensor cores")] = tr("none on {arch}: the flash kernels need sm_80 or newer", arch=gpu.arch)
    if not L.triton_unavailable(gpu):
        cfg = L.config_for("fwd", d, causal, "bfloat16", gpu)
        est = L.smem_estimate("fwd", cfg, d, arch=gpu.arch)
        per_sm = max(1, gpu.smem_per_sm // (est + gpu.smem_reserved_per_block))
        programs = math.prod(L.fwd_grid(b, h, s, cfg))
        out[tr("Triton forward tile at D = {d}", d=d)] = tr(
            "{bm} x {bn}, {stages} stages, <= {kib} KiB of {limit} KiB; {per_sm} program(s) per SM", bm=cfg['BLOCK_M'],
            bn=cfg['BLOCK_N'], stages=cfg['num_stages'], kib=est // 1024, limit=gpu.smem_per_block_optin // 1024,
            per_sm=per_sm)
        out[tr("Triton forward waves")] = tr("{programs} programs / ({sms} SMs x {per_sm}) = {waves:.1f}",
                                             programs=programs, sms=gpu.sms, per_sm=per_sm,
                                             waves=programs / (gpu.sms * per_sm))
    if gpu.cc >= 80 and d in L.HEAD_DIMS:
        defs, nw, smem = L.cuda_build("02", d, arch=gpu.arch)
        regs, static = cuda.resources(L.CU, L.KERNELS["02"], gpu, defs)
        occ = occupancy.occupancy(gpu.arch, 32 * nw, regs, static, smem, max_dynamic_smem=smem)
        out[tr("CUDA C rung 02 at D = {d} ({warps} warps, {kib} KiB a CTA)", d=d, warps=nw, kib=smem // 1024)] = \
            tr("{regs} registers, {ctas} CTA(s) per SM (limited by {limiter}); __launch_bounds__ asks for {min}",
               regs=regs, ctas=occ.blocks_per_sm, limiter=occ.limiter, min=defs['MIN_BLOCKS'])
    if gpu.cc == 90:
        out[tr("Hopper rung 07 (persistent) grid")] = tr("{sms} blocks, one per SM", sms=gpu.sms)
    kv = 2 * s * d * 2
    out[tr("a head's K and V ({kv:.0f} MiB) in L2 ({l2:.0f} MiB)", kv=kv / device.MiB,
           l2=gpu.l2_bytes / device.MiB)] = tr("{n} heads at a time", n=gpu.l2_bytes // kv)
    return out
