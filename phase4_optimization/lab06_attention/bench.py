"""Lab 4.6's measuring side: the Triton kernels compiled ahead of time and the CUDA C ones with NVRTC (what the
compiler made of them, on any machine), the CUDA C forward modelled in NumPy (its tiling, and one warp's ldmatrix /
mma fragments lane by lane), and on a GPU: the targets against torch SDPA's cuDNN and FlashAttention-2 backends with
the tile tuning, naive against flash, the CUDA C forward's rungs and occupancy shapes, and the plots (redrawn from the
JSON by --replot)."""
from __future__ import annotations

import argparse
import math
import os
import re
import time

import numpy as np

from common import arrays, bench, check, config, cuda, device, lab, report
from common.i18n import tr
from common.triton_support import aot, summarize

from . import lab as L
from .triton_kernels import attn_bwd_dkdv_kernel, attn_bwd_dq_kernel, attn_fwd_kernel

CPU_NOTE = ("\nRan in the interpreter: the naive attention (torch matmuls + the Triton softmax kernel) and the flash "
            "forward and backward\n(small tiles, S up to 67, causal and not, ragged tails, strided views), against "
            "float64 NumPy; the CUDA C forward\nneeds a GPU: it was compiled, and its tiling and fragments were "
            "modelled in NumPy. Timing, tuning and the SDPA peers need a GPU.")
LSE_TOL = check.Tol(1e-4, 1e-4)   # fp32 scores and sums of bf16-exact products: ~1e-6, with room for exp2's MUFU


def add_arguments(p) -> None:
    p.add_argument("--compile-report", action=argparse.BooleanOptionalAction, default=None,
                   help=tr("compile the Triton flash kernels for --arch ahead of time and show their resources "
                           "(default: on without a GPU unless --quick; the CUDA C table is always shown)"))
    p.add_argument("--tune", action="store_true",
                   help=tr("(GPU) time the Triton forward and backward candidates at the target shapes, check each "
                           "winner against float64, and record this GPU's winners (results/<gpu>/"
                           "phase4_lab06_attention_tuned.json), which the wrappers then use"))


# ---------------------------------------------------------------------------------------------------------------------
# The two numbers of the benchmark shapes (every machine)
# ---------------------------------------------------------------------------------------------------------------------
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
    out[tr("a head's K and V ({kv:.0f} MiB) in L2 ({l2:.0f} MiB)", kv=kv / device.MiB, l2=gpu.l2_bytes / device.MiB)] = \
        tr("{n} heads at a time", n=gpu.l2_bytes // kv)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# What the compilers made of the kernels (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def aot_kernel(kind: str, d: int = 128, causal: bool = False, dtype: str = "bfloat16", cc: int = 90,
               cfg: dict | None = None):
    """Compile one of the flash kernels ("fwd", "bwd_dkdv", "bwd_dq") for compute capability `cc` without a GPU (the
    default config of that architecture's GPU: the one at hand or --gpu's when it is of that architecture, else the
    table's example of it); cached."""
    if cfg is None:
        gpu = L.gpu_of_arch(f"sm_{cc}")
        cfg = L.fwd_default_gpu(d, causal, gpu) if kind == "fwd" else L.bwd_default_gpu(d, gpu)
    div16 = ("q_ptr", "k_ptr", "v_ptr") + L._QKV_STRIDES
    if kind == "fwd":
        return aot(attn_fwd_kernel, L.triton_signature("fwd", dtype), L.fwd_constexprs(d, cfg, causal), cc=cc,
                   num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
                   divisible_by_16=div16 + ("o_ptr", "lse_ptr", "so_b", "so_h", "so_s", "seq_q", "seq_k"))
    kern = attn_bwd_dkdv_kernel if kind == "bwd_dkdv" else attn_bwd_dq_kernel
    outs = ("dk_ptr", "dv_ptr") if kind == "bwd_dkdv" else ("dq_ptr",)
    return aot(kern, L.triton_signature(kind, dtype), L.bwd_constexprs(kind, d, cfg, causal), cc=cc,
               num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
               divisible_by_16=div16 + outs + ("do_ptr", "lse_ptr", "delta_ptr", "sdo_b", "sdo_h", "sdo_s",
                                                "seq_q", "seq_k"))


def compile_summary(k) -> dict:
    """Resources of a compiled kernel: registers, spills (local memory), shared memory, tensor-core instructions."""
    s = summarize(k)
    return {"kernel": s["kernel"], "warps": s["num_warps"], "stages": s["num_stages"], "regs": s["regs"],
            "local B": s["local"], "shared B": s["shared"], "wgmma": s["wgmma"], "mma.sync": s["mma_sync"],
            "cp.async": s["cp_async"]}


def compile_table(arch: str, kinds=(("fwd", 128, False), ("fwd", 128, True), ("fwd", 64, False),
                                    ("bwd_dkdv", 128, False), ("bwd_dq", 128, False))) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = []
    for kind, d, causal in kinds:
        t0 = time.perf_counter()
        try:
            r = compile_summary(aot_kernel(kind, d, causal, cc=cc))
        except Exception as e:  # noqa: BLE001 - a kernel that does not compile for this arch is reported, not fatal
            r = {"kernel": kind, "error": f"{type(e).__name__}: {str(e)[:120]}"}
        r.update({"part": kind, "D": d, "causal": causal, "compile s": round(time.perf_counter() - t0, 1)})
        rows.append(r)
    return rows


def compile_rows(archs=("sm_80", "sm_90")) -> list[dict]:
    """kernels.cu compiled with NVRTC per architecture and head dim (the build the wrapper launches on that
    architecture: L.defines): registers, spills, and the SASS census of the instructions that matter here (HMMA =
    mma.sync, LDSM = ldmatrix, LDGSTS = cp.async, MUFU = ex2)."""
    rows = []
    for arch in archs:
        for d in L.HEAD_DIMS:
            for name, kr in cuda.compile_report(L.CU, arch, defines=L.defines(d, arch=arch)).kernels.items():
                c = kr.sass_counts
                kern = next(k_ for k_, n_ in L.KERNELS.items() if n_ == name)
                rows.append({"kernel": name, "arch": arch, "D": d, "regs": kr.registers,
                             "dyn_smem": L.smem_bytes(kern, d), "spill": kr.spills, "HMMA": c.get("HMMA", 0),
                             "LDSM": c.get("LDSM", 0), "LDGSTS": c.get("LDGSTS", 0), "MUFU": c.get("MUFU", 0),
                             "BAR": c.get("BAR", 0), "LDL/STL": f"{c.get('LDL', 0)}/{c.get('STL', 0)}"})
    return rows


def compile_report(args) -> None:
    """What the compilers made of the kernels for --arch (any machine); a file that cannot target it is named, with
    the one-line reason, instead of compiled."""
    from . import hopper

    gpu = L.gpu_of_arch(args.arch)
    want = args.compile_report if args.compile_report is not None else (not device.has_gpu() and not args.quick)
    if want:
        why = L.triton_unavailable(gpu)
        if why:
            print(tr("Triton flash kernels: not compiled for {arch} ({why})", arch=args.arch, why=why))
        else:
            report.print_table(compile_table(args.arch),
                               ["part", "D", "causal", "warps", "stages", "regs", "local B", "shared B", "wgmma",
                                "mma.sync", "cp.async", "compile s", "error"],
                               title=tr("Triton flash kernels compiled ahead of time for {arch} (bf16, the default "
                                        "tiles of {gpu})", arch=args.arch, gpu=gpu.name))
    if gpu.cc < 80:
        print(tr("kernels.cu: not compiled for {arch} (mma.sync bf16, ldmatrix and cp.async need sm_80 or newer)",
                 arch=args.arch))
    else:
        builds = "; ".join(f"D{d}: {config.fmt(L.cuda_config(d, args.arch).values)}" for d in L.HEAD_DIMS)
        report.print_table(compile_rows((args.arch,)),
                           title=tr("kernels.cu compiled with NVRTC {version} ({builds}; BLOCK_N={block_n})",
                                    version=cuda.nvrtc_version(), builds=builds, block_n=L.CUDA_BLOCK_N))
    if device.arch_info(args.arch).cc == 90:
        report.print_table(hopper.compile_rows(),
                           title="kernels_hopper.cu (rungs 03-07) compiled with NVRTC for sm_90a: registers at "
                                 "launch, the setmaxnreg split, wgmma (HGMMA), TMA (UTMALDG) and named barriers "
                                 "(BAR.ARV) in the SASS")
    else:
        print(tr("kernels_hopper.cu: not compiled for {arch} ({why})", arch=args.arch, why=hopper.hopper_only(args.arch)))


# ---------------------------------------------------------------------------------------------------------------------
# The CUDA C forward in float64 NumPy: its tiling, and one warp's registers (no GPU needed)
# ---------------------------------------------------------------------------------------------------------------------
def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round to the nearest bf16 (ties to even), returned as float64: what pack2() does to P in the kernel."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return u.view(np.float32).astype(np.float64)


def tiled_model(q, k, v, causal=False, sm_scale=None, block_m=64, block_n=L.CUDA_BLOCK_N, round_p=True):
    """The kernel's algorithm in float64 NumPy: Q blocks of block_m rows, K/V tiles of block_n keys zero-padded past
    S, the same masks (-inf past S, -inf above the diagonal), the same skipped tiles, the same update order
    (max -> alpha -> l = alpha l + sum p -> O = alpha O + P V), P rounded to bf16 before P V as in the kernel,
    O / l and lse = m scale + ln l at the end. Catches algorithmic mistakes without a GPU."""
    q, k, v = (np.asarray(arrays.to_numpy(x), dtype=np.float64) for x in (q, k, v))
    bsz, nh, s, d = q.shape
    scale = 1.0 / math.sqrt(d) if sm_scale is None else sm_scale
    sl2 = scale * L.LOG2E
    o = np.full(q.shape, np.nan)
    lse = np.full(q.shape[:-1], np.nan)
    n_pad = -(-s // block_n) * block_n
    kp = np.zeros((bsz, nh, n_pad, d))
    vp = np.zeros((bsz, nh, n_pad, d))
    kp[:, :, :s], vp[:, :, :s] = k, v
    for m0 in range(0, s, block_m):
        rows = np.arange(m0, min(m0 + block_m, s))
        qb = q[:, :, rows]
        m = np.full(qb.shape[:-1], -np.inf)
        l_ = np.zeros(qb.shape[:-1])
        acc = np.zeros(qb.shape)
        kv_end = min(s, m0 + block_m) if causal else s
        for n0 in range(0, kv_end, block_n):
            keys = np.arange(n0, n0 + block_n)
            sc = qb @ np.swapaxes(kp[:, :, keys], -1, -2)
            mask = keys[None, :] >= s
            if causal:
                mask = mask | (keys[None, :] > rows[:, None])
            sc = np.where(mask, -np.inf, sc)
            mx = np.maximum(m, sc.max(-1))
            m_safe = np.where(mx == -np.inf, 0.0, mx)
            with np.errstate(invalid="ignore"):
                alpha = np.exp2(m * sl2 - m_safe * sl2)
            p = np.exp2(sc * sl2 - m_safe[..., None] * sl2)
            l_ = l_ * alpha + p.sum(-1)
            pq = round_bf16(p) if round_p else p
            acc = acc * alpha[..., None] + pq @ vp[:, :, keys]
            m = mx
        o[:, :, rows] = acc / l_[..., None]
        lse[:, :, rows] = (m * sl2 + np.log2(l_)) * math.log(2.0)
    return o, lse


def _ldmatrix(chunks: np.ndarray, addr: list[int], trans: bool, stats: dict | None = None) -> np.ndarray:
    """ldmatrix.x4 on a shared memory of 16-byte chunks (chunks[i] = 8 values): lanes 8i..8i+7 give the byte
    addresses of the 8 rows of matrix i; returns regs[lane, i, 2], lane l getting row l>>2, cols 2(l&3)..+1 of matrix
    i (of its transpose with .trans)."""
    regs = np.zeros((32, 4, 2))
    for i in range(4):
        if stats is not None:   # one matrix = one shared-memory phase: 8 rows of 16 B over 8 groups of 4 banks
            groups = [(addr[8 * i + r] // 16) % 8 for r in range(8)]
            stats["ways"] = max(stats.get("ways", 1), max(groups.count(x) for x in groups))
        mat = np.stack([chunks[addr[8 * i + r] // 16] for r in range(8)])     # 8 x 8, row r from lane 8i + r
        assert all(addr[8 * i + r] % 16 == 0 for r in range(8))
        if trans:
            mat = mat.T
        for lane in range(32):
            regs[lane, i] = mat[lane >> 2, 2 * (lane & 3): 2 * (lane & 3) + 2]
    return regs


def _mma(c: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mma.m16n8k16 from per-lane fragments: a[lane, 4, 2], b[lane, 2, 2], c[lane, 4] -> d[lane, 4]."""
    A, B, C = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        A[g, 2 * t: 2 * t + 2], A[g + 8, 2 * t: 2 * t + 2] = a[lane, 0], a[lane, 1]
        A[g, 2 * t + 8: 2 * t + 10], A[g + 8, 2 * t + 8: 2 * t + 10] = a[lane, 2], a[lane, 3]
        B[2 * t: 2 * t + 2, g], B[2 * t + 8: 2 * t + 10, g] = b[lane, 0], b[lane, 1]
        C[g, 2 * t: 2 * t + 2], C[g + 8, 2 * t: 2 * t + 2] = c[lane, 0:2], c[lane, 2:4]
    D = A @ B + C
    d = np.zeros((32, 4))
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        d[lane, 0:2], d[lane, 2:4] = D[g, 2 * t: 2 * t + 2], D[g + 8, 2 * t: 2 * t + 2]
    return d


def warp_fragment_model(head_dim: int = 128, swizzle: bool = True, nwarps: int = 4, warp: int = 1, seed: int = 0,
                        stats: dict | None = None, m_tiles: int = 1):
    """One warp of the kernel, one K/V tile, modelled lane by lane with kernels.cu's own index formulas: the tiles
    are written to shared memory the way load_rows writes them (row r, chunk c at r CHUNKS + (c ^ (r & 7))), read with
    the lane addresses of the Q, K and V ldmatrix calls, multiplied with mma's fragment layouts, P repacked from the
    accumulators. m_tiles = 2 is rung 02w: the warp's 32 rows as two m16 tiles, Q read per k16 step from its own area
    at row 16 (2 warp + mt) + (lane & 15) (lane_chunk's XOR on the chunk, the row offset added), every K and V
    fragment used for both tiles, 32-key tiles. Returns (S from the fragments, Q K^T, O from the fragments, P V) for
    the warp's 16 m_tiles rows; stats["ways"] gets the worst bank conflict of any ldmatrix phase (1 = conflict-free, 8
    = all 8 rows in the same 4 banks)."""
    g_ = np.random.default_rng(seed)
    block_n = L.CUDA_BLOCK_N if m_tiles == 1 else L.CUDA_WIDE_BLOCK_N
    chunks_per_row, row_bytes, threads = head_dim // 8, head_dim * 2, 32 * nwarps
    rpp = threads // chunks_per_row
    q = g_.standard_normal((16 * m_tiles * nwarps, head_dim))
    k = g_.standard_normal((block_n, head_dim))
    v = g_.standard_normal((block_n, head_dim))

    def chunk_off(r, c):
        return (r * chunks_per_row + ((c ^ (r & 7)) if swizzle else c)) * 16

    def store(tile):                                   # load_rows: thread tid, pass i
        mem = np.full((tile.shape[0] * chunks_per_row, 8), np.nan)
        for tid in range(threads):
            rt, c = tid // chunks_per_row, tid % chunks_per_row
            for i in range(tile.shape[0] // rpp):
                off = chunk_off(rt, c) + i * rpp * row_bytes
                mem[off // 16] = tile[rt + i * rpp, 8 * c: 8 * c + 8]
        assert not np.isnan(mem).any(), "load_rows left a chunk unwritten"
        return mem

    def lane_chunk(j, hi, r7):
        return (((2 * j + hi) ^ r7) if swizzle else (2 * j + hi)) * 16

    qm, km, vm = store(q), store(k), store(v)
    lanes = range(32)
    if m_tiles == 1:        # rungs 01, 02: Q fragments loaded once, chunk_off on the lane's row
        qf = [[_ldmatrix(qm, [chunk_off(warp * 16 + (ln & 15), 2 * kk + (ln >> 4)) for ln in lanes], False, stats)
               for kk in range(head_dim // 16)]]
    else:                   # rung 02w: q_lane + mt 16 rows + lane_chunk(kk & 3, lane >> 4, lane & 7) + (kk >> 2) 128
        q_lane = [(m_tiles * warp * 16 + (ln & 15)) * row_bytes for ln in lanes]
        qf = [[_ldmatrix(qm, [q_lane[ln] + mt * 16 * row_bytes + lane_chunk(kk & 3, ln >> 4, ln & 7) + (kk >> 2) * 128
                              for ln in lanes], False, stats) for kk in range(head_dim // 16)]
              for mt in range(m_tiles)]
    k_lane = [((ln & 7) + ((ln >> 4) << 3)) * row_bytes for ln in lanes]
    v_lane = [((ln & 7) + (((ln >> 3) & 1) << 3)) * row_bytes for ln in lanes]
    k_x = [[lane_chunk(j, (ln >> 3) & 1, ln & 7) for j in range(4)] for ln in lanes]
    v_x = [[lane_chunk(j, ln >> 4, ln & 7) for j in range(4)] for ln in lanes]
    s = np.zeros((m_tiles, block_n // 8, 32, 4))
    for kk in range(head_dim // 16):
        for np_ in range(block_n // 16):
            b = _ldmatrix(km, [k_lane[ln] + k_x[ln][kk & 3] + (kk >> 2) * 128 + np_ * 16 * row_bytes
                               for ln in lanes], False, stats)
            for mt in range(m_tiles):               # one K fragment, every row tile
                s[mt, 2 * np_] = _mma(s[mt, 2 * np_], qf[mt][kk], b[:, 0:2])
                s[mt, 2 * np_ + 1] = _mma(s[mt, 2 * np_ + 1], qf[mt][kk], b[:, 2:4])
    o = np.zeros((m_tiles, head_dim // 8, 32, 4))
    for kk in range(block_n // 16):
        pa = [np.stack([s[mt, 2 * kk][:, 0:2], s[mt, 2 * kk][:, 2:4], s[mt, 2 * kk + 1][:, 0:2],
                        s[mt, 2 * kk + 1][:, 2:4]], axis=1) for mt in range(m_tiles)]
        for dp in range(head_dim // 16):
            b = _ldmatrix(vm, [v_lane[ln] + v_x[ln][dp & 3] + (dp >> 2) * 128 + kk * 16 * row_bytes
                               for ln in lanes], True, stats)
            for mt in range(m_tiles):               # one V fragment, every row tile
                o[mt, 2 * dp] = _mma(o[mt, 2 * dp], pa[mt], b[:, 0:2])
                o[mt, 2 * dp + 1] = _mma(o[mt, 2 * dp + 1], pa[mt], b[:, 2:4])

    def gather(acc, ncols):                            # accumulators back to a (16 m_tiles) x ncols matrix
        m = np.zeros((16 * m_tiles, ncols))
        for mt in range(m_tiles):
            for n in range(acc.shape[1]):
                for ln in lanes:
                    g, t = ln >> 2, ln & 3
                    m[16 * mt + g, 8 * n + 2 * t: 8 * n + 2 * t + 2] = acc[mt, n, ln, 0:2]
                    m[16 * mt + g + 8, 8 * n + 2 * t: 8 * n + 2 * t + 2] = acc[mt, n, ln, 2:4]
        return m

    rows = slice(16 * m_tiles * warp, 16 * m_tiles * (warp + 1))
    s_ref = q[rows] @ k.T
    s_frag = gather(s, block_n)
    return s_frag, s_ref, gather(o, head_dim), s_ref @ v


def model_check(quick: bool) -> bool:
    """The NumPy model of the kernel's tiling against the reference, on awkward S (no GPU needed)."""
    g = check.rng(1)
    rows = []
    # (block rows, key tile): rungs 01/02 with 4 warps, and rung 02w (128-row blocks, 32-key tiles)
    tilings = ((64, L.CUDA_BLOCK_N), (128, L.CUDA_WIDE_BLOCK_N))
    for s in ((1, 17, 129) if quick else (1, 17, 63, 64, 65, 129, 200)):
        for d in L.HEAD_DIMS:
            for causal in (False, True):
                q, k, v = (g.standard_normal((1, 2, s, d)) for _ in range(3))
                o_ref, l_ref = L.forward_reference(q, k, v, causal)
                for bm, bn in tilings:
                    o, l_ = tiled_model(q, k, v, causal, block_m=bm, block_n=bn)
                    c1 = check.compare(o, o_ref, "bfloat16")
                    c2 = check.compare(l_, l_ref, "float32", LSE_TOL)
                    rows.append({"S": s, "D": d, "causal": causal, "tiles": f"{bm} x {bn}", "o": c1.message,
                                 "lse": c2.message, "ok": c1.ok and c2.ok})
    report.print_table(rows, ["S", "D", "causal", "tiles", "o", "lse"],
                       title="NumPy model of the CUDA C kernel's tiling (Q block rows x key tile: 64 x 64 for 01/02, "
                             "128 x 32 for 02w; P in bf16) vs float64")
    return all(r["ok"] for r in rows)


def fragment_check() -> bool:
    """One warp, one K/V tile, lane by lane, for both layouts and head dims: S = Q K^T and O = P V come out right,
    and the swizzle leaves no ldmatrix bank conflict (the unswizzled layout has 8-way ones)."""
    rows, ok = [], True
    for d in L.HEAD_DIMS:
        for sw, mt in ((False, 1), (True, 1), (True, 2)):
            st: dict = {}
            s_f, s_r, o_f, o_r = warp_fragment_model(d, sw, stats=st, m_tiles=mt)
            good = bool(np.allclose(s_f, s_r, atol=1e-9) and np.allclose(o_f, o_r, atol=1e-9))
            ok &= good
            rows.append({"D": d, "layout": tr("plain (01)") if not sw else tr("swizzled (02)") if mt == 1 else
                         tr("swizzled, 2 row tiles a warp (02w)"),
                         "S = Q K^T": tr("max err {err:.1e}", err=np.abs(s_f - s_r).max()),
                         "O = P V": tr("max err {err:.1e}", err=np.abs(o_f - o_r).max()),
                         "ldmatrix bank conflict": f"{st['ways']}-way", "ok": good})
    report.print_table(rows, title="one warp, one K/V tile, modelled lane by lane (kernels.cu's address formulas "
                                   "through ldmatrix/mma semantics)")
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# Diagnosis of the CUDA C forward: where a wrong output is wrong, and which key / column each output took
# ---------------------------------------------------------------------------------------------------------------------
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


def extra_checks(args) -> bool:
    """The CUDA C forward beyond the checks of VARIANTS: its tiling and one warp's fragments modelled in NumPy (every
    machine), and on a GPU the permutation probe of the real kernels."""
    ok = model_check(args.quick)
    ok = fragment_check() and ok
    if not L.unavailable_reason():
        ok = probe_check() and ok
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU): the targets with the tile tuning, naive against flash, the CUDA C rungs and occupancy shapes
# ---------------------------------------------------------------------------------------------------------------------
# (label, kind, (B, H, S, D), causal, peer the target is against, goal)
TARGETS = [("fwd D128 non-causal", "fwd", (4, 32, 4096, 128), False, "torch SDPA cuDNN", 0.85),
           ("fwd D128 causal", "fwd", (4, 32, 4096, 128), True, "torch SDPA cuDNN", 0.85),
           ("fwd D64 non-causal", "fwd", (8, 32, 2048, 64), False, "torch SDPA cuDNN", 0.85),
           ("bwd D128 non-causal", "bwd", (4, 32, 4096, 128), False, "torch SDPA flash", 1.2)]
# The grouped-query forward target: q (B, Hq, S, D), k and v with Hkv heads; the peer is SDPA's fastest
# backend on k, v expanded to Hq heads beforehand (the expansion not timed), and native enable_gqa where it runs
GQA_TARGET = ("fwd GQA 32 q / 8 kv heads, D128 non-causal", (4, 32, 8, 4096, 128), False, 0.85)
NAIVE_SHAPE = (4, 32, 2048, 128)
CUDA_SHAPE = (4, 32, 4096, 128)          # the CUDA C rungs' target shape (B, H, S, D)
CUDA_GOAL = 1.0                          # rung 02 against SDPA's FlashAttention-2 backend, non-causal
# The Hopper rung (kernels_hopper.cu, sm_90a) beside the Triton forward in the D128 forward targets' rounds, against
# SDPA cuDNN, causal and not
HOPPER_ROW = "cuda 03 wgmma+TMA flash"
# (rung, K/V ring depth) -> row name; each rung at its default depth keeps the plain name (hopper.BENCH_BUILDS lists
# what is timed: the other depth too, to separate the schedule's effect from the ring's)
HOPPER_ROWS = {("03", 2): HOPPER_ROW, ("04", 2): "cuda 04 wgmma+TMA ping-pong flash",
               ("04", 3): "cuda 04 wgmma+TMA ping-pong flash, 3 stages",
               ("05", 3): "cuda 05 wgmma+TMA overlapped-softmax flash",
               ("05", 2): "cuda 05 wgmma+TMA overlapped-softmax flash, 2 stages",
               ("03", 3): "cuda 03 wgmma+TMA flash, 3 stages",
               ("06", 3): "cuda 06 wgmma+TMA overlapped-softmax ping-pong flash",
               ("07", 3): "cuda 07 wgmma+TMA persistent overlapped-softmax flash"}
HOPPER_CASES = ("fwd D128 non-causal", "fwd D128 causal")
HOPPER_GOAL = 0.95
FWD_CANDIDATES = {128: [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
                        # the attempts at the gap to cuDNN (attn_fwd_kernel's comments): K/V through TMA
                        # descriptors; the key loop warp-specialized by Triton (a no-op on sm_90 in Triton 3.6,
                        # timed to show it); the unmasked loop software-pipelined by hand (PIPE), with and without TMA
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "TMA": True},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": True},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3, "TMA": True, "WS": True},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "PIPE": True},
                        {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": True, "PIPE": True},
                        {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 2, "TMA": True, "PIPE": True}],
                  64: [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
                       {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4},
                       {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3},
                       {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 4, "num_stages": 3}]}
BWD_CANDIDATES = {128: [L.bwd_preferred(128),
                        {"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "num_warps": 8,
                         "num_stages": 2},
                        {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8,
                         "num_stages": 2},
                        {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4,
                         "num_stages": 3}]}
# The CUDA C forward's rungs and shapes timed against SDPA: (kernel, nwarps, min_blocks) - rungs 01 and 02 at their
# defaults, rung 02 in the two other occupancy shapes (4 warps x 2 CTAs per SM, 8 warps x 1), and rung 02w
CUDA_CONFIGS = (("01", None, None), ("02", None, None), ("02", None, 2), ("02", 8, None), ("02w", None, None))


def _randn(shape, dtype: str, seed: int):
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(getattr(torch, dtype))


def tune_configs(kind: str, shape, causal: bool, dtype: str, tensors, candidates) -> list[dict]:
    """Time each candidate once at this shape (what triton.autotune does, in the open); keep the fastest in L.TUNED.
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
        L.TUNED[(kind, d, causal, dtype)] = min(timed, key=lambda r: r["ms"])["config"]
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
        L.TUNED.pop((kind, d, causal, dtype), None)     # the record, not this process's pick, is what is used now
        del q, k, v, do, o, lse
    tuned.forget()
    print(tr("winners: {list} (recorded; used from now on)", list="; ".join(f"{k_}: {v_}" for k_, v_ in winners.items())))
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


def bench_targets(rounds: int = 3, do_tune: bool = True) -> tuple[list[dict], list[dict], list[dict]]:
    """The four targets: the Triton flash kernels (tuned first unless --quick), the SDPA backends and the CUDA C
    forward in interleaved rounds, each checked at the benchmark shape on sampled heads."""
    import torch

    from . import hopper

    rows, targets, tuning = [], [], []
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
        ts = bench.interleaved(fns, rounds=rounds, rep_ms=60, warmup_ms=20)
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
            targets.append({"case": f"{label} B{b} H{h} S{s} bf16", "peer": peer,
                            "triton TFLOP/s": ts["triton flash"].tflops(flops), "peer TFLOP/s": ts[peer].tflops(flops),
                            "ratio": ratio, "target": f">= {goal:.2f}", "met": bool(ratio >= goal and c.ok)})
        else:
            targets.append({"case": f"{label} B{b} H{h} S{s} bf16", "peer": peer, "target": f">= {goal:.2f}",
                            "met": f"not measured: {L.sdpa_unavailable('cudnn' if 'cuDNN' in peer else 'flash')}"})
        if label in HOPPER_CASES:
            for build in hopper.BENCH_BUILDS:
                row_name = HOPPER_ROWS[build]
                targets.append(hopper_target(label, shape, ts, peer, flops, (hc or {}).get(row_name),
                                             hopper.unavailable_reason(), row_name))
    return rows, targets, tuning


def hopper_target(label: str, shape, ts: dict, peer: str, flops: float, hc, why: str | None,
                  row_name: str = HOPPER_ROW) -> dict:
    """A Hopper rung's target row: row_name against `peer` (SDPA cuDNN) in the same rounds, >= HOPPER_GOAL."""
    b, h, s, _ = shape
    row = {"case": f"{label} B{b} H{h} S{s} bf16, {row_name}", "peer": peer, "target": f">= {HOPPER_GOAL:.2f}"}
    if why or row_name not in ts or peer not in ts:
        return dict(row, met=f"not measured: {why or L.sdpa_unavailable('cudnn')}")
    ratio = ts[peer].median_ms / ts[row_name].median_ms
    return dict(row, ratio=ratio, **{"peer TFLOP/s": ts[peer].tflops(flops)},
                met=bool(ratio >= HOPPER_GOAL and hc is not None and hc.ok))


def bench_gqa(rounds: int = 3) -> tuple[list[dict], dict]:
    """The grouped-query forward against SDPA, interleaved rounds, checked on sampled heads against float64 (the
    sampled query heads read key/value head 0, whose expanded copy the float64 check uses)."""
    import torch
    import torch.nn.functional as F

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
    fns = {"triton flash (GQA)": lambda: L.flash_attn_fwd(q, k, v, causal, out=(o, lse))}
    for name, backend in (("torch SDPA cuDNN", "cudnn"), ("torch SDPA flash", "flash")):
        if not L.sdpa_unavailable(backend):
            fns[f"{name}, k/v expanded"] = (lambda b_=backend: L.sdpa_fwd(q, ke, ve, causal, b_))
    try:                                      # native grouped-query SDPA (whichever backend torch picks)
        F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
        fns["torch SDPA enable_gqa"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                              enable_gqa=True)
    except (TypeError, RuntimeError):
        pass
    ts = bench.interleaved(fns, rounds=rounds, rep_ms=60, warmup_ms=20)
    peers = {n: t for n, t in ts.items() if not n.startswith("triton")}
    rows = [report.row(L.LAB, f"{name} fwd", "triton" if name.startswith("triton") else "peer", (b, hq, s, d), dtype,
                       t, flops=flops, part=label, case=label, causal=causal, kv_heads=hkv,
                       check=("ok" if c.ok else c.message) if name.startswith("triton") else "")
            for name, t in ts.items()]
    if not peers:
        return rows, {"case": label, "peer": "torch SDPA", "target": f">= {goal:.2f}",
                      "met": "not measured: no SDPA backend ran"}
    best = min(peers, key=lambda n: peers[n].median_ms)
    ratio = peers[best].median_ms / ts["triton flash (GQA)"].median_ms
    target = {"case": f"{label} B{b} S{s} bf16", "peer": f"{best} (SDPA's fastest here)",
              "triton TFLOP/s": ts["triton flash (GQA)"].tflops(flops), "peer TFLOP/s": peers[best].tflops(flops),
              "ratio": ratio, "target": f">= {goal:.2f}", "met": bool(ratio >= goal and c.ok)}
    q = k = v = ke = ve = o = lse = None      # the closures above hold them; let the allocator have them back
    torch.cuda.empty_cache()
    return rows, target


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


def bench_cuda_shapes(quick: bool) -> tuple[list[dict], dict]:
    """The CUDA C rungs and rung 02's occupancy shapes against SDPA's flash and cuDNN backends (interleaved rounds),
    causal and not, at CUDA_SHAPE (S = 1024 with --quick): rows, and the rung-02 target against SDPA flash."""
    import torch

    b, h, s, d = _fitted((4, 32, 1024, 128) if quick else CUDA_SHAPE, L.cuda_bench_bytes, "cuda shapes")
    rows = []
    q, k, v = (_randn((b, h, s, d), "bfloat16", 400 + i) for i in range(3))
    o = torch.empty_like(q)
    lse = torch.empty((b, h, s), device="cuda", dtype=torch.float32)
    for causal in (False, True):
        fns = {config_name(kern, nw, mb): (lambda c=causal, kern=kern, nw=nw, mb=mb: L.flash_attn_cuda(
            q, k, v, c, out=o, lse=lse, kernel=kern, nwarps=nw, min_blocks=mb)) for kern, nw, mb in CUDA_CONFIGS}
        for name, backend in (("torch SDPA flash", "flash"), ("torch SDPA cuDNN", "cudnn")):
            if not L.sdpa_unavailable(backend):
                fns[name] = (lambda c=causal, be=backend: L.sdpa_fwd(q, k, v, c, be))
        ts = bench.interleaved(fns, rounds=3 if quick else 5, rep_ms=30 if quick else 60)
        fl = L.attn_flops(b, h, s, d, causal)
        flash_ms = ts["torch SDPA flash"].median_ms if "torch SDPA flash" in ts else None
        for name, t in ts.items():
            rows.append(report.row(L.LAB, name, "peer" if name.startswith("torch") else "cuda", (b, h, s, d),
                                   "bfloat16", t, flops=fl, part="cuda shapes", causal=causal,
                                   vs_flash=flash_ms / t.median_ms if flash_ms else None))
    cand = [r for r in rows if not r["causal"] and r["variant"].startswith((L.KERNELS["02"], L.KERNELS["02w"]))]
    best = max(cand, key=lambda r: r["tflops"])
    target = {"case": f"cuda fwd D{d} non-causal B{b} H{h} S{s} bf16", "peer": "torch SDPA flash",
              "variant": best["variant"], "ratio": best["vs_flash"], "target": f">= {CUDA_GOAL:.2f}",
              "met": (bool(best["vs_flash"] >= CUDA_GOAL) if best["vs_flash"] is not None else "not measured")
              if not quick else "--quick: not the target size"}
    return rows, target


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
    tables.append((targets, None, tr("Performance targets (same run)")))
    all_rows = rows + naive_rows
    return lab.Result(rows=all_rows + cuda_rows, meta=dict(targets=targets, tuning=tuning,
                                                           device=device.info().as_dict()),
                      tables=tables, ok=all(r.get("check") in ("", "ok") for r in all_rows))


# ---------------------------------------------------------------------------------------------------------------------
# Plots, from the JSON (so `--replot` redraws them without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
# what each colour means (ours in colour, the library's backends in grays), matched on the variant's start
CONTENDERS = [("triton flash", "ours: Triton flash attention", "tab:orange"),
              ("naive", "ours: naive (S and P through HBM)", "#fdbf6f"),
              (HOPPER_ROWS[("03", 3)], "ours: CUDA C wgmma + TMA flash, 3 stages (sm_90a)", "mediumpurple"),
              (HOPPER_ROW, "ours: CUDA C wgmma + TMA flash (sm_90a)", "tab:purple"),
              (HOPPER_ROWS[("04", 3)], "ours: CUDA C wgmma + TMA ping-pong flash, 3 stages (sm_90a)", "hotpink"),
              (HOPPER_ROWS[("04", 2)], "ours: CUDA C wgmma + TMA ping-pong flash (sm_90a)", "tab:pink"),
              (HOPPER_ROWS[("05", 2)], "ours: CUDA C wgmma + TMA overlapped softmax, 2 stages (sm_90a)", "salmon"),
              (HOPPER_ROWS[("05", 3)], "ours: CUDA C wgmma + TMA overlapped softmax (sm_90a)", "tab:red"),
              (HOPPER_ROWS[("06", 3)], "ours: CUDA C wgmma + TMA overlapped softmax + ping-pong (sm_90a)", "darkred"),
              (HOPPER_ROWS[("07", 3)], "ours: CUDA C wgmma + TMA persistent, overlapped softmax (sm_90a)", "maroon"),
              ("cuda", "ours: CUDA C mma.sync flash", "tab:blue"),
              ("attn_", "ours: CUDA C mma.sync flash", "tab:blue"),
              ("torch SDPA cuDNN", "torch SDPA, cuDNN backend", "dimgray"),
              ("torch SDPA flash", "torch SDPA, FlashAttention-2 backend", "silver")]


def contender(variant: str, impl: str = "") -> tuple[str, str]:
    """(legend entry, colour) of a row's variant."""
    for start, name, color in CONTENDERS:
        if variant.startswith(start):
            return name, color
    return ("library peer", "gray") if impl == "peer" else (f"ours: {impl or variant}", "tab:green")


def _causal(r: dict):
    """The row's causal flag; the naive-vs-flash rows written before the field existed ran non-causal."""
    if r.get("causal") is None and r.get("case") == "naive vs flash":
        return False
    return r.get("causal")


def shape_text(shape, dtype: str | None = None, causal=None) -> str:
    """'B<b> H<h> S<s> D<d> bf16 causal', e.g. B 4, H 32 ... written as the plots' titles write them (the parts that
    are known)."""
    parts = []
    if shape and len(shape) == 4:
        parts.append(" ".join(f"{k}{v}" for k, v in zip("BHSD", shape)))
    if dtype:
        parts.append({"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}.get(dtype, dtype))
    if causal is not None:
        parts.append("causal" if causal else "non-causal")
    return " ".join(parts)


def shapes_in_title(rows: list[dict]) -> list[str]:
    """One line per shape measured: '<shape_text>: fwd non-causal, fwd causal, ...' (the case names say
    fwd/bwd and causal or not, less the D the shape gives; a case without 'causal' in its name gets it added)."""
    by_shape: dict = {}
    for r in rows:
        key = (tuple(r.get("shape") or ()), r.get("dtype"))
        case = r.get("case") or r.get("variant")
        if len(key[0]) == 4:
            case = re.sub(rf"\s+D{key[0][3]}\b", "", case)
        if "causal" not in case and _causal(r) is not None:
            case += " (causal)" if _causal(r) else " (non-causal)"
        by_shape.setdefault(key, [])
        if case not in by_shape[key]:
            by_shape[key].append(case)
    return [f"{shape_text(list(k[0]), k[1]) or tr('shape not recorded')}: {', '.join(v)}" for k, v in by_shape.items()]


def plot(data: dict, out_dir: str) -> list[str]:
    """The targets' and naive rows as TFLOP/s bars grouped by case (<LAB>.png); the CUDA C rungs and shapes, when
    measured (<LAB>_cuda.png). A legend says what each colour is, the title which shapes (B, H, S, D, dtype, causal)
    were measured."""
    rows, gpu = data["rows"], data.get("gpu", "GPU")
    if not rows:                        # a GPU the flash kernels do not run on measured nothing
        return []
    xlabel = "TFLOP/s (4 B H S^2 D forward, halved when causal; backward 2.5x; higher is better)"
    main = [r for r in rows if r.get("part") != "cuda shapes"]
    groups, legend = [], {}
    order = {name: i for i, (_, name, _) in enumerate(CONTENDERS)}
    for case in dict.fromkeys(r.get("case") or "" for r in main):
        rs = [r for r in main if (r.get("case") or "") == case]
        bars = []
        for r in sorted(rs, key=lambda r: order.get(contender(r["variant"], r.get("impl", ""))[0], 99)):
            name, color = contender(r["variant"], r.get("impl", ""))
            legend.setdefault(name, color)
            bars.append((r["variant"], r.get("tflops") or 0.0, color))
        head = case or "(no case)"
        shape = shape_text(rs[0].get("shape"), None, None if "causal" in head else _causal(rs[0]))
        groups.append((f"{head}  [{shape}]" if shape else head, bars))
    lines = shapes_in_title(main)
    title = tr("Attention on {gpu}: ours against torch SDPA, TFLOP/s by case", gpu=gpu) + "\n" + "\n".join(lines)
    legend = dict(sorted(legend.items(), key=lambda kv: order.get(kv[0], 99)))
    paths = [report.plot_grouped_bars(os.path.join(out_dir, f"{L.LAB}.png"), groups, xlabel=xlabel, title=title,
                                      legend=legend)]
    cuda_rows = [r for r in rows if r.get("part") == "cuda shapes"]
    if cuda_rows:
        groups, legend = [], {}
        for causal in dict.fromkeys(bool(r.get("causal")) for r in cuda_rows):
            bars = []
            for r in sorted((r for r in cuda_rows if bool(r.get("causal")) == causal),
                            key=lambda r: order.get(contender(r["variant"], r.get("impl", ""))[0], 99)):
                name, color = contender(r["variant"], r.get("impl", ""))
                legend.setdefault(name, color)
                bars.append((r["variant"], r.get("tflops") or 0.0, color))
            groups.append(("causal" if causal else "non-causal", bars))
        shape = cuda_rows[0].get("shape")
        causals = sorted({bool(r.get("causal")) for r in cuda_rows})
        how = "causal and non-causal" if len(causals) == 2 else ("causal" if causals[0] else "non-causal")
        paths.append(report.plot_grouped_bars(
            os.path.join(out_dir, f"{L.LAB}_cuda.png"), groups, xlabel=xlabel,
            title=tr("CUDA C mma.sync forward: rungs and occupancy shapes against torch SDPA, on {gpu}", gpu=gpu)
            + f"\n{shape_text(shape, cuda_rows[0].get('dtype') or 'bfloat16')}, {how}",
            legend=dict(sorted(legend.items(), key=lambda kv: order.get(kv[0], 99)))))
    return paths
