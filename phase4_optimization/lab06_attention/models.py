"""Lab 4.6's CUDA C forward (kernels.cu) modelled in float64 NumPy, with no GPU: its tiling (Q blocks, K/V tiles,
the masks, the skipped tiles and the online softmax's update order, P rounded to bf16) against the reference, and one
warp of one K/V tile, lane by lane, with kernels.cu's own address formulas through ldmatrix and mma.m16n8k16 (the bank
conflicts of each layout counted)."""
from __future__ import annotations

import math

import numpy as np

from common import arrays, check, report
from common.i18n import tr

from . import lab as L


LSE_TOL = check.Tol(1e-4, 1e-4)   # fp32 scores and sums of bf16-exact products: ~1e-6, with room for exp2's MUFU


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
