"""Lab 4.6, the Hopper attention backward's NumPy models (CPU tier; kernels_hopper_bwd.cu, host side hopper_bwd.py):
a lane-by-lane model of ldmatrix / mma.m16n8k16 running one step of the kernel with its own lane addresses (pinned to
the .cu's lines) against the step's matrices; rung 02's and rung 03's wgmma operands read from that shared memory
through the .cu's descriptors (common.hopper's model of the 128-byte swizzle); a float64 model of the kernels' loops
(grid, GQA group loop, causal skipping and masking, ragged S, where sm_scale goes) against attention's backward; and
rung 04's prefetch rule against the walk. The compile and refusal tiers are in
tests/test_phase4_lab06_attention_hopper_bwd.py, the GPU tier in tests/test_phase4_lab06_attention_hopper_bwd_gpu.py.
"""
import os

import numpy as np
import pytest

from phase4_optimization.lab06_attention import hopper_bwd as hb

# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the kernel's fragment algebra, lane by lane. A NumPy model of ldmatrix (.x4, plain and .trans), of
# mma.m16n8k16's A / B / C fragments and of the swizzled tiles runs one step of attn_bwd_01_mma (all 4 warps) with the
# .cu's own lane-address formulas, and must give S^T, P, dP, dS, dV, dK and dQ of the step exactly as the matrices do.
# A wrong row / chunk choice in any ldmatrix, a mis-packed fragment or a wrong dS^T store address fails here, before
# any GPU.
# ---------------------------------------------------------------------------------------------------------------------
def _pinned(*lines):
    """The models below are the .cu's formulas: each of `lines` stands in kernels_hopper_bwd.cu as written (a change
    to one must be made to the other)."""
    src = open(hb.KERNEL_PATH).read()
    for line in lines:
        assert line in src, line


def _swz(cpr, r, c):
    """The chunk index of chunk c of row r in a 64-row tile with cpr 16-byte chunks a row: the .cu's off_d (and off_s),
    64-column boxes of 64 rows with the 128-byte swizzle inside each."""
    return (c >> 3) * 64 * 8 + r * 8 + ((c & 7) ^ (r & 7))


def _tile(x):
    """A (rows, 8 cpr) matrix as the kernel's swizzled shared tile: a flat array, 16-byte chunk c of row r at chunk
    _swz(cpr, r, c); addresses below are element offsets (the kernel's byte offsets / 2)."""
    rows, cols = x.shape
    cpr = cols // 8
    flat = np.zeros(rows * cols)
    for r in range(rows):
        for c in range(cpr):
            flat[_swz(cpr, r, c) * 8: _swz(cpr, r, c) * 8 + 8] = x[r, 8 * c: 8 * c + 8]
    return flat, cpr


_LANE = np.arange(32)
_G, _T = _LANE >> 2, _LANE & 3


def _ldsm(tile, rows, chunks, trans=False):
    """ldmatrix.x4: lane l gives the address of row l & 7 of matrix l >> 3; returns regs (4, 32 lanes, 2 values)."""
    flat, cpr = tile
    addr = np.array([_swz(cpr, int(r), int(c)) * 8 for r, c in zip(rows, chunks)])
    out = np.zeros((4, 32, 2))
    for i in range(4):
        m = np.stack([flat[addr[8 * i + r]: addr[8 * i + r] + 8] for r in range(8)])
        out[i] = np.stack([m[_G, 2 * _T], m[_G, 2 * _T + 1]], 1) if not trans else \
            np.stack([m[2 * _T, _G], m[2 * _T + 1, _G]], 1)
    return out


def _mma(c, a, b0, b1):
    """c (32, 4) += A (16 x 16, from a (4, 32, 2)) B (16 x 8, from b0, b1 (32, 2)), mma.m16n8k16's fragments."""
    am, bm, cm = np.zeros((16, 16)), np.zeros((16, 8)), np.zeros((16, 8))
    for e in range(2):
        am[_G, 2 * _T + e], am[_G + 8, 2 * _T + e] = a[0][:, e], a[1][:, e]
        am[_G, 2 * _T + 8 + e], am[_G + 8, 2 * _T + 8 + e] = a[2][:, e], a[3][:, e]
        bm[2 * _T + e, _G], bm[2 * _T + 8 + e, _G] = b0[:, e], b1[:, e]
        cm[_G, 2 * _T + e], cm[_G + 8, 2 * _T + e] = c[:, e], c[:, 2 + e]
    cm = cm + am @ bm
    return np.stack([cm[_G, 2 * _T], cm[_G, 2 * _T + 1], cm[_G + 8, 2 * _T], cm[_G + 8, 2 * _T + 1]], 1)


def _simulate_step(k, v, q, do, lse2, delta, scale2, key0, s, diag):
    """One query-tile step of attn_bwd_01_mma, warp by warp, with the .cu's addresses. k, v, q, do (64, D) tiles,
    lse2 (64,) = LSE log2e, delta (64,); key0 = n0 (keys are n0 + row); diag: mask query < key (m0 == n0).
    Returns dV, dK (unscaled), dQ (64 x D each) of the step."""
    d = k.shape[1]
    sk, sv, sq, sdo = _tile(k), _tile(v), _tile(q), _tile(do)
    ds_t = np.zeros(64 * 64)                      # dS^T: rows = keys, 8 chunks of 8 queries
    dv, dk, dq = np.zeros((64, d)), np.zeros((64, d)), np.zeros((64, d))
    for w in range(4):
        a_row, a_hi = 16 * w + (_LANE & 15), _LANE >> 4
        bn_row, bn_hi = (_LANE & 7) + 8 * (_LANE >> 4), (_LANE >> 3) & 1
        st, dpt = [np.zeros((32, 4)) for _ in range(8)], [np.zeros((32, 4)) for _ in range(8)]
        for kk in range(d // 16):
            ka, va = _ldsm(sk, a_row, 2 * kk + a_hi), _ldsm(sv, a_row, 2 * kk + a_hi)
            for np_ in range(4):
                b = _ldsm(sq, 16 * np_ + bn_row, 2 * kk + bn_hi)
                st[2 * np_], st[2 * np_ + 1] = _mma(st[2 * np_], ka, b[0], b[1]), _mma(st[2 * np_ + 1], ka, b[2], b[3])
                b = _ldsm(sdo, 16 * np_ + bn_row, 2 * kk + bn_hi)
                dpt[2 * np_], dpt[2 * np_ + 1] = (_mma(dpt[2 * np_], va, b[0], b[1]),
                                                  _mma(dpt[2 * np_ + 1], va, b[2], b[3]))
        for nt in range(8):
            for e in range(4):
                qi = 8 * nt + 2 * _T + (e & 1)
                key = key0 + 16 * w + _G + 8 * (e >> 1)
                p = np.exp2(st[nt][:, e] * scale2 - lse2[qi])
                p = np.where((key >= s) | (diag & (qi + key0 < key)), 0.0, p)
                st[nt][:, e], dpt[nt][:, e] = p, p * (dpt[nt][:, e] - delta[qi])
        for kq in range(4):
            pa = np.stack([st[2 * kq][:, 0:2], st[2 * kq][:, 2:4], st[2 * kq + 1][:, 0:2], st[2 * kq + 1][:, 2:4]])
            sa = np.stack([dpt[2 * kq][:, 0:2], dpt[2 * kq][:, 2:4], dpt[2 * kq + 1][:, 0:2],
                           dpt[2 * kq + 1][:, 2:4]])
            kr = 16 * w + _G
            for i, (r, c) in enumerate(((kr, 2 * kq), (kr + 8, 2 * kq), (kr, 2 * kq + 1), (kr + 8, 2 * kq + 1))):
                at = np.array([_swz(8, int(r_), int(c_)) * 8 for r_, c_ in zip(r, np.broadcast_to(c, 32))]) + 2 * _T
                ds_t[at], ds_t[at + 1] = sa[i][:, 0], sa[i][:, 1]
            bt_row, bt_hi = (_LANE & 7) + 8 * ((_LANE >> 3) & 1), _LANE >> 4
            for dp in range(d // 16):
                for tile, acc, af in ((sdo, dv, pa), (sq, dk, sa)):
                    b = _ldsm(tile, 16 * kq + bt_row, 2 * dp + bt_hi, trans=True)
                    for j in range(2):
                        c = _mma(np.zeros((32, 4)), af, b[2 * j], b[2 * j + 1])
                        col = 8 * (2 * dp + j) + 2 * _T
                        for e in range(4):
                            acc[16 * w + _G + 8 * (e >> 1), col + (e & 1)] += c[:, e]
    sds = (ds_t, 8)
    for w in range(4):                              # step 4, after the barrier: dQ rows 16 w .. 16 w + 15
        da = [_ldsm(sds, 16 * kk + (_LANE & 7) + 8 * (_LANE >> 4), 2 * w + ((_LANE >> 3) & 1), trans=True)
              for kk in range(4)]
        bt_row, bt_hi = (_LANE & 7) + 8 * ((_LANE >> 3) & 1), _LANE >> 4
        for dp in range(d // 16):
            c = [np.zeros((32, 4)), np.zeros((32, 4))]
            for kk in range(4):
                b = _ldsm(sk, 16 * kk + bt_row, 2 * dp + bt_hi, trans=True)
                c[0], c[1] = _mma(c[0], da[kk], b[0], b[1]), _mma(c[1], da[kk], b[2], b[3])
            for j in range(2):
                col = 8 * (2 * dp + j) + 2 * _T
                for e in range(4):
                    dq[16 * w + _G + 8 * (e >> 1), col + (e & 1)] += c[j][:, e]
    return dv, dk, dq


@pytest.mark.parametrize("d, key0, s, diag", [(64, 0, 64, False), (128, 64, 100, True), (64, 128, 150, False)])
def test_fragment_model_of_one_step_matches_the_matrices(d, key0, s, diag):
    """The model above against the step's matrices in float64 (keys key0 + row, queries key0 + row when diag: the
    diagonal tile; a ragged S masks the keys past it)."""
    rng = np.random.default_rng(d + key0 + s)
    k, v, q, do = (rng.standard_normal((64, d)) for _ in range(4))
    scale2 = d ** -0.5 * 1.4426950408889634
    lse2, delta = rng.standard_normal(64) + 3.0, rng.standard_normal(64)
    dv, dk, dq = _simulate_step(k, v, q, do, lse2, delta, scale2, key0, s, diag)
    p = np.exp2(q @ k.T * scale2 - lse2[:, None])               # (queries, keys)
    keys, queries = key0 + np.arange(64), key0 + np.arange(64)
    p[:, keys >= s] = 0.0
    if diag:
        p[queries[:, None] < keys[None, :]] = 0.0
    ds = p * (do @ v.T - delta[:, None])
    np.testing.assert_allclose(dv, p.T @ do, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dk, ds.T @ q, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dq, ds @ k, rtol=1e-10, atol=1e-10)


def _shared_tiles(**tiles):
    """The block's shared memory as the .cu lays it out: sK, sV, sQ, sdO (64 x D tiles, TILE_BYTES apart from the
    aligned base 0), then sdS (64 x 64) - each written by the model's _tile (off_d / off_s). (smem as float64 per
    16-bit element, {name: byte address})."""
    tile_bytes = 64 * tiles["k"].shape[1] * 2
    smem = np.zeros((4 * tile_bytes + 64 * 64 * 2) // 2)
    base = {}
    for i, name in enumerate(("k", "v", "q", "do", "ds")):
        if name in tiles:
            base[name] = i * tile_bytes
            smem[base[name] // 2: base[name] // 2 + tiles[name].size] = _tile(tiles[name])[0]
    return smem, base


@pytest.mark.parametrize("d", hb.HEAD_DIMS)
def test_rung02_wgmma_reads_the_tiles_the_copies_wrote(d):
    """Rung 02's step 2: the K, Q, V, dO tiles as the .cu's off_d lays them out (the model's _tile), read back through
    the .cu's desc_kmajor descriptors by common.hopper's model of what wgmma reads for a K-major, 128B-swizzled
    operand, give S^T = K Q^T and dP^T = V dO^T exactly - the cp.async layout and the descriptors agree."""
    from common import hopper as ch

    rng = np.random.default_rng(d)
    k, q, v, do = (rng.standard_normal((64, d)) for _ in range(4))
    smem, base = _shared_tiles(k=k, v=v, q=q, do=do)

    def desc_kmajor(tile, kk):                                      # the .cu's desc_kmajor
        return ch.smem_descriptor(tile + (kk // 4) * (64 * 128) + 32 * (kk % 4), 16, 1024)

    for a, b_, want in (("k", "q", k @ q.T), ("v", "do", v @ do.T)):
        got = sum(ch.wgmma_read_kmajor(smem, desc_kmajor(base[a], kk), 64, 16)
                  @ ch.wgmma_read_kmajor(smem, desc_kmajor(base[b_], kk), 64, 16).T for kk in range(d // 16))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    _pinned("return wgmma_desc_128b(tile + (kk / 4) * BOX_BYTES + 32 * (kk % 4), 16, 1024);",
            "return (unsigned)((c >> 3) * BOX_BYTES + r * 128 + (((c & 7) ^ (r & 7)) << 4));",
            "#define BOX_BYTES (64 * 128)",
            "wgmma_ss_64x64(st, desc_kmajor(sK, kk), desc_kmajor(sQ, kk), kk > 0);",
            "wgmma_ss_64x64(dpt, desc_kmajor(sV, kk), desc_kmajor(sdO, kk), kk > 0);")


@pytest.mark.parametrize("d", hb.HEAD_DIMS)
def test_rung03_wgmma_reads_mn_major_slices_and_the_transposed_ds(d):
    """Rung 03's steps 3 and 4: through the .cu's desc_mnmajor, common.hopper's model of an MN-major 128B-swizzled
    read gives the k-th 16-row slice of dO and Q (B of dV, dK: all of d at once, the second 64 columns one box on),
    of K per 64-wide half of d (B of dQ), and of dS^T (dQ's A, read transposed) - so the three GEMMs are P^T dO,
    dS^T Q and dS K."""
    from common import hopper as ch

    rng = np.random.default_rng(100 + d)
    k, v, q, do = (rng.standard_normal((64, d)) for _ in range(4))
    ds_t = rng.standard_normal((64, 64))
    p_t = rng.standard_normal((64, 64))                              # P^T, S^T's layout: keys x queries
    smem, base = _shared_tiles(k=k, v=v, q=q, do=do, ds=ds_t)

    def desc_mnmajor(tile, kk):                                       # the .cu's desc_mnmajor
        return ch.smem_descriptor(tile + 2048 * kk, 64 * 128, 1024)

    def read(name, kk, n, col0=0):
        return ch.wgmma_read_mnmajor(smem, desc_mnmajor(base[name] + col0 * 128, kk), n, 16)

    dv = sum(p_t[:, 16 * kq: 16 * kq + 16] @ read("do", kq, d) for kq in range(4))
    dk = sum(ds_t[:, 16 * kq: 16 * kq + 16] @ read("q", kq, d) for kq in range(4))
    dq = np.concatenate([sum(read("ds", kk, 64).T @ read("k", kk, 64, col0=64 * half) for kk in range(4))
                         for half in range(d // 64)], axis=1)
    np.testing.assert_allclose(dv, p_t @ do, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dk, ds_t @ q, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dq, ds_t.T @ k, rtol=1e-12, atol=1e-12)
    _pinned("return wgmma_desc_128b(tile + 2048 * kk, BOX_BYTES, 1024);",
            "wgmma_rs_acc(acc_dv, pa[kq], desc_mnmajor(sdO, kq));",
            "wgmma_rs_acc(acc_dk, sa[kq], desc_mnmajor(sQ, kq));",
            "wgmma_ss_tt_64x64(dqh, desc_mnmajor(sdS, kk), desc_mnmajor(sK + half * BOX_BYTES, kk),",
            "unsigned sdS = sdO + TILE_BYTES;",
            "const int col = 64 * half + 8 * j + 2 * t;")


def test_fragment_model_uses_the_kernels_own_addresses():
    """The model's lane formulas are the .cu's, line for line (a change to one must be made to the other)."""
    _pinned("const int a_row = 16 * warp + (lane & 15), a_hi = lane >> 4;",
            "const int bn_row = (lane & 7) + 8 * (lane >> 4), bn_hi = (lane >> 3) & 1;",
            "const int bt_row = (lane & 7) + 8 * ((lane >> 3) & 1), bt_hi = lane >> 4;",
            "sdS + off_s(16 * kk + (lane & 7) + 8 * (lane >> 4), 2 * warp + ((lane >> 3) & 1))",
            "ds + off_s(kr, 2 * kq) + 4 * t) = sa[0];",
            "ds + off_s(kr + 8, 2 * kq + 1) + 4 * t) = sa[3];",
            "sK + off_d(16 * kk + bt_row, 2 * dp + bt_hi)",
            "sdO + off_d(16 * kq + bt_row, 2 * dp + bt_hi)",
            "sQ + off_d(16 * np + bn_row, 2 * kk + bn_hi)",
            "if (key >= S || (diag && m0 + qi < key)) p = 0.f;")


def _model_backward(q, k, v, do, o, lse, causal, scale):
    """The three kernels' loops in float64 (one step as matrices; the step's fragments are checked above): blocks
    per (key tile, b, kv head), the group's heads and the query tiles from m_start walked in order, rows past S zero
    with LSE +inf and Delta 0, keys past S masked, dK x scale in the epilogue, dQ = scale x the accumulated dS K."""
    b_, hq, s, d = q.shape
    hkv = k.shape[1]
    group = hq // hkv
    delta = (do * o).sum(-1)                                      # attn_bwd_delta
    dq_acc, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(k.shape)

    def rows(x, r0):
        t = np.zeros((64,) + x.shape[1:])
        t[: max(0, min(64, s - r0))] = x[r0: r0 + 64]
        return t

    for b in range(b_):
        for g in range(hkv):
            for n0 in range(0, s, 64):
                kt, vt = rows(k[b, g], n0), rows(v[b, g], n0)
                adk, adv = np.zeros((64, d)), np.zeros((64, d))
                keys = n0 + np.arange(64)
                for h in range(g * group, (g + 1) * group):
                    for m0 in range(n0 if causal else 0, s, 64):
                        qt, dot = rows(q[b, h], m0), rows(do[b, h], m0)
                        n = max(0, min(64, s - m0))
                        lse2 = np.full(64, np.inf)                       # rows past S: +inf, so P = 0
                        lse2[:n] = lse[b, h, m0: m0 + n] * 1.4426950408889634
                        dl = rows(delta[b, h], m0)
                        p = np.exp2(qt @ kt.T * scale * 1.4426950408889634 - lse2[:, None])
                        p[:, keys >= s] = 0.0
                        if causal and m0 == n0:
                            p[(m0 + np.arange(64))[:, None] < keys[None, :]] = 0.0
                        ds = p * (dot @ vt.T - dl[:, None])
                        adv += p.T @ dot
                        adk += ds.T @ qt
                        dq_acc[b, h, m0: m0 + n] += (ds @ kt)[:n]
                n = min(64, s - n0)
                dk[b, g, n0: n0 + n], dv[b, g, n0: n0 + n] = (adk * scale)[:n], adv[:n]
    return dq_acc * scale, dk, dv


@pytest.mark.parametrize("hq, hkv, s, causal", [(2, 2, 150, False), (4, 2, 150, True), (3, 1, 64, True),
                                                (2, 1, 1, True), (2, 2, 129, True)])
def test_loop_model_matches_float64_attention_backward(hq, hkv, s, causal):
    """_model_backward (the grid, the group loop, causal skipping and masking, ragged S, where sm_scale goes) against
    attention's backward computed directly in float64."""
    rng = np.random.default_rng(hq + 10 * s + int(causal))
    d, scale = 64, 64 ** -0.5
    q, do = rng.standard_normal((2, hq, s, d)), rng.standard_normal((2, hq, s, d))
    k, v = rng.standard_normal((2, hkv, s, d)), rng.standard_normal((2, hkv, s, d))
    kx, vx = np.repeat(k, hq // hkv, 1), np.repeat(v, hq // hkv, 1)
    sc = q @ kx.swapaxes(-1, -2) * scale
    if causal:
        sc = np.where(np.tril(np.ones((s, s), bool)), sc, -np.inf)
    lse = np.log(np.exp(sc - sc.max(-1, keepdims=True)).sum(-1)) + sc.max(-1)
    p = np.exp(sc - lse[..., None])
    o = p @ vx
    dp = do @ vx.swapaxes(-1, -2)
    ds = p * (dp - (do * o).sum(-1)[..., None])
    dq_ref = ds @ kx * scale
    dk_ref = (ds.swapaxes(-1, -2) @ q * scale).reshape(2, hkv, hq // hkv, s, d).sum(2)
    dv_ref = (p.swapaxes(-1, -2) @ do).reshape(2, hkv, hq // hkv, s, d).sum(2)
    for got, ref in zip(_model_backward(q, k, v, do, o, lse, causal, scale), (dq_ref, dk_ref, dv_ref)):
        np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("s, causal, group, n0", [(1, False, 1, 0), (64, True, 2, 0), (130, False, 3, 64),
                                                   (257, True, 2, 192), (300, True, 4, 256)])
def test_rung04_prefetches_exactly_the_walks_next_step(s, causal, group, n0):
    """Rung 04 loads step i + 1 while step i computes: its rule (this head's next tile, else the next head's first
    at m_start, nothing after the last) - mirrored from the .cu's lines - names every step of the walk once, in
    order, and the first step is the prologue's."""
    m_start = n0 if causal else 0
    walk = [(hh, m0) for hh in range(group) for m0 in range(m_start, s, 64)]
    got = [(0, m_start)]                                  # the prologue: head hkv * group, tile m_start
    for hh, m0 in walk:
        last_tile = m0 + 64 >= s
        if not last_tile or hh + 1 < group:
            hn = 1 if last_tile else 0
            got.append((hh + hn, m_start if last_tile else m0 + 64))
    assert got == walk
    _pinned("const bool last_tile = m0 + BLOCK_M >= S;", "if (!last_tile || hh + 1 < group) {",
            "const int hn = last_tile ? 1 : 0;     // 1: the next head",
            "last_tile ? m_start : m0 + BLOCK_M, S);",
            "q_ss, doh + hn * do_sh, do_ss, lse, delta, bh_rows + hn * S,",
            "if constexpr (RUNG == 4) stage ^= 1;")


def _passes(completed: int, parity: int) -> bool:
    """mbarrier.try_wait.parity: the wait passes once the phase of that parity has completed - that is, when the
    barrier's current phase (its count of completed phases) has the other parity."""
    return completed % 2 != parity


@pytest.mark.parametrize("s, causal, group, n0", [(1, False, 1, 0), (130, True, 2, 64), (300, True, 3, 256),
                                                   (257, False, 2, 0)])
def test_rung05_ring_walks_every_step_and_waits_for_exactly_its_copies(s, causal, group, n0):
    """Rung 05's thread 0 issues step i + 1's copies (this head's next tile, else the next head's first) into stage
    (i + 1) % 2 at the top of step i; every thread waits on full[i % 2] for parity (i / 2) % 2. Modelled: the issues
    name the walk's steps once, in order; and the wait of step i passes when step i's copies have landed and not
    before - whatever the earlier steps' copies did - which a parity of i % 2 would not do (it passes at once on
    stage 1's first use)."""
    m_start = n0 if causal else 0
    walk = [(h, m0) for h in range(group) for m0 in range(m_start, s, 64)]
    issued = [(0, m_start)]                               # the setup's: head hkv * group, tile m_start
    for h, m0 in walk:
        last_tile = m0 + 64 >= s
        hn, mn = h + (1 if last_tile else 0), m_start if last_tile else m0 + 64
        if hn < group:
            issued.append((hn, mn))
    assert issued == walk
    for i in range(len(walk)):
        k = i // 2                                        # stage i % 2's completed phases before step i's copies
        assert _passes(k + 1, (i >> 1) & 1) and not _passes(k, (i >> 1) & 1)
    assert any(_passes(i // 2, i & 1) for i in range(1, len(walk))) or len(walk) < 2
    _pinned("const int hn = h + (last_tile ? 1 : 0), mn = last_tile ? m_start : m0 + BLOCK_M;",
            "if (hn < (hkv + 1) * group)", "WAIT(full0 + 8 * s, (step >> 1) & 1);",
            "for (int m0 = m_start; m0 < S; m0 += BLOCK_M, ++step) {")


def _dq_index(bh, n_tiles, row, col, d):
    """The .cu's dq_index: rung 07's tiled dQ accumulator."""
    r, p = row % 64, (col % 64) // 2
    return ((bh * n_tiles + row // 64) * (d // 64) + col // 64) * 4096 + r * 64 + 2 * (p ^ ((r & 7) << 2)) + (col & 1)


@pytest.mark.parametrize("d", [64, 128])
def test_rung07_staging_block_is_the_accumulators_block_and_spreads_the_banks(d):
    """dq_index maps every (head, row, column) of the padded accumulator to its own float; a consumer's staging
    store (row ra, pair p at ra x 256 + 8 (p ^ 4 (ra % 8)) bytes) puts each value where dq_index puts it inside the
    block that one bulk reduction adds (so the copy engine needs no layout of its own); and among the 8-byte stores of
    one j by a half-warp's 16 lanes (g, t: rows 16 w + g, pairs 4 j + t) no bank is hit more than twice."""
    n_tiles, heads = 3, 2
    idx = np.array([[[_dq_index(bh, n_tiles, r, c, d) for c in range(d)] for r in range(64 * n_tiles)]
                    for bh in range(heads)])
    assert sorted(idx.ravel().tolist()) == list(range(heads * n_tiles * 64 * d))
    # attn_bwd_prep zeroes a row's part of each block from dq_row64 on: exactly the row's own floats
    for bh in range(heads):
        for row in range(64 * n_tiles):
            for c in range(d // 64):
                start = ((bh * n_tiles + row // 64) * (d // 64) + c) * 4096 + (row % 64) * 64
                assert set(range(start, start + 64)) == set(idx[bh, row, 64 * c:64 * c + 64].tolist())
    for row in (0, 7, 13, 64 + 9, 191):
        for col in range(0, d, 2):
            blk = _dq_index(1, n_tiles, row - row % 64, col - col % 64, d)     # the block's first float
            ra, p = row % 64, (col % 64) // 2
            assert (ra * 256 + 8 * (p ^ ((ra & 7) << 2))) // 4 == _dq_index(1, n_tiles, row, col, d) - blk
    for w in range(4):
        for j in range(8):
            for half in (range(0, 16), range(16, 32)):
                banks = [((16 * w + lane // 4) * 256 + 8 * ((4 * j + lane % 4) ^ (((16 * w + lane // 4) & 7) << 2)))
                         // 4 % 32 for lane in half]
                assert max(np.bincount(banks, minlength=32)) <= 2, banks
    _pinned("const int r = row % 64, p = (col % 64) / 2;",
            "return dq_row64(bh, n_tiles, row, col / 64) + 2 * (p ^ ((r & 7) << 2)) + (col & 1);",
            "st_shared_f2(stage_dq + ra * 256 + 8 * (p ^ ((ra & 7) << 2)), dqh[4 * j], dqh[4 * j + 1]);",
            "st_shared_f2(stage_dq + rb * 256 + 8 * (p ^ ((rb & 7) << 2)), dqh[4 * j + 2], dqh[4 * j + 3]);",
            "const int p = 4 * j + t;",
            "return ((bh * n_tiles + row / 64) * (HEAD_DIM / 64) + c) * 4096 + (row % 64) * 64;",
            "zero_row64(dq_acc + dq_row64(blockIdx.y, n_tiles, row, c), lane);")


# ---------------------------------------------------------------------------------------------------------------------
# Rung 09: descriptors moved in place, the unmasked path, and the causal block order (the .cu's formulas, pinned).
# ---------------------------------------------------------------------------------------------------------------------
def _desc_at(desc, nbytes):
    """The .cu's desc_at: the low word + bytes / 16, the high word kept."""
    return (desc & 0xFFFFFFFF00000000) | ((desc + (nbytes >> 4)) & 0xFFFFFFFF)


@pytest.mark.parametrize("d", hb.HEAD_DIMS)
def test_rung09_descriptors_moved_in_place_are_the_ones_built_again(d):
    """Every descriptor rung 09 moves with desc_at (common/cuda/hopper.cuh: K-major slices of K, V, Q, dO; MN-major
    slices of Q, dO, dS^T and of the block's K tiles) equals the one desc_kmajor / desc_mnmajor builds from the moved
    address, for tile bases anywhere in an SM's shared memory: the start-address field never carries into the next.
    The forward's slices (kernels_hopper.cu's kslice_bytes, vslice_bytes: 128-row boxes, V K-major or not) too."""
    from common import hopper as ch

    box, tile, ds = 64 * 128, 64 * d * 2, 64 * 64 * 2
    kmajor = [(kk // 4) * box + 32 * (kk % 4) for kk in range(d // 16)]
    mnmajor = ([2048 * kq for kq in range(4)] + [(kk // 4) * ds + 2048 * (kk % 4) for kk in range(8)]
               + [(kk // 4) * tile + c * box + 2048 * (kk % 4) for kk in range(8) for c in range(2)])
    top = hb.smem_bytes(d, "09")
    vt_box = d * 128                                               # the forward's V^T box (V_KMAJOR)
    kmajor += [(kk // 4) * box + 32 * (kk % 4) for kk in range(8)] + [(kk // 4) * vt_box + 32 * (kk % 4)
                                                                      for kk in range(8)]
    mnmajor += [2048 * kk for kk in range(8)]
    for base in range(0, top, 1024):
        for offs, lbo in ((kmajor, 16), (mnmajor, box)):
            for off in offs:
                if base + off + 1024 > top:
                    continue
                assert _desc_at(ch.smem_descriptor(base, lbo, 1024), off) == ch.smem_descriptor(base + off, lbo, 1024)
    header = open(os.path.join(os.path.dirname(hb.HERE), "..", "common", "cuda", "hopper.cuh")).read()
    assert "return (d & 0xFFFFFFFF00000000ull) | (hop_u32)((hop_u32)d + (bytes >> 4));" in header
    fwd = open(os.path.join(hb.HERE, "kernels_hopper.cu")).read()
    for line in ("__device__ __forceinline__ u32 kslice_bytes(int kk) { return (kk / 4) * BOX_BYTES + 32 * (kk % 4); }",
                 "return (kk / 4) * VT_BOX_BYTES + 32 * (kk % 4);", "return 2048 * kk;",
                 "#define VT_BOX_BYTES (HEAD_DIM * 128)"):
        assert line in fwd, line
    _pinned("const unsigned off = (kk / 4) * BOX_BYTES + 32 * (kk % 4);",
            "wgmma_ss_tt_64x64(dqh, desc_at(dSmn, (kk / 4) * DS_BYTES + 2048 * (kk % 4)),",
            "desc_at(dKmn, (kk / 4) * TILE_BYTES + c * BOX_BYTES + 2048 * (kk % 4)), kk > 0);",
            "wgmma_rs_acc(acc_dk, sa[kq], desc_at(dQmn, 2048 * kq));")


@pytest.mark.parametrize("causal", [False, True])
def test_rung09_unmasked_steps_need_no_mask(causal):
    """A step takes rung 09's unmasked path only when no key of the block is past S and the query tile lies below the
    block's diagonal: then the mask (key >= S, or causal and query < key) zeroes nothing, for any S, block and tile."""
    keys = hb.CONFIG["CONSUMERS"] * hb.CONFIG["BLOCK_N"]
    for s in (1, 63, 64, 65, 127, 128, 129, 200, 256, 257, 384, 517):
        for n0 in range(0, s, keys):
            for m0 in range(n0 if causal else 0, s, 64):
                ragged, diag = n0 + keys > s, causal and m0 < n0 + keys
                if ragged or diag:
                    continue
                key, q = np.arange(n0, n0 + keys)[:, None], np.arange(m0, m0 + 64)[None, :]
                assert not ((key >= s) | (causal & (q < key))).any(), (s, n0, m0)
    _pinned("const bool ragged = n0 + KEYS6 > S;", "const bool diag = causal && m0 < n0 + KEYS6;",
            "if (ragged || diag)", "p = key >= S || (diag && m0 + qi < key) ? 0.f : p;")


def _longest_first(bx, by, nb, heads, lpt):
    """The .cu's longest_first: (key block, batch x key/value head) of block (bx, by)."""
    lin = bx + nb * by
    grp = lin // (lpt * nb)
    r, gh = lin - grp * lpt * nb, min(lpt, heads - lpt * grp)
    return r // gh, lpt * grp + r % gh


def _makespan(work, sms):
    """Blocks handed out in launch order to the first free SM (one block per SM, as rung 09's shared memory allows):
    when the last one ends."""
    import heapq

    free = [0.0] * sms
    for w in work:
        heapq.heappush(free, heapq.heappop(free) + w)
    return max(free)


@pytest.mark.parametrize("nb,heads", [(1, 1), (3, 5), (7, 2), (5, 9), (32, 128)])
def test_rung09_longest_first_visits_every_block_once_heaviest_first(nb, heads):
    """longest_first maps the causal grid onto every (key block, head) once; in each group of LPT_HEADS heads the key
    blocks come in order (block n walks nb - n query-tile pairs: the heaviest first); and at the backward target's
    grid (32 key blocks x 128 heads) on 132 SMs, in-order dispatch ends sooner than with blockIdx taken as it is."""
    lpt = hb.CONFIG["LPT_HEADS"]
    order = [_longest_first(bx, by, nb, heads, lpt) for by in range(heads) for bx in range(nb)]
    assert sorted(order) == sorted((n, h) for n in range(nb) for h in range(heads))
    for g0 in range(0, heads, lpt):
        seq = [n for n, h in order if g0 <= h < g0 + lpt]
        assert seq == sorted(seq), seq
    if (nb, heads) == (32, 128):
        plain = [nb - bx for by in range(heads) for bx in range(nb)]
        assert _makespan([nb - n for n, _ in order], 132) < _makespan(plain, 132)
    _pinned("const int nb = gridDim.x, heads = gridDim.y, L = blockIdx.x + nb * blockIdx.y;",
            "const int grp = L / (LPT_HEADS * nb), r = L - grp * LPT_HEADS * nb;",
            "const int gh = min(LPT_HEADS, heads - LPT_HEADS * grp);",
            "return make_int2(r / gh, LPT_HEADS * grp + r % gh);",
            "const int2 blk = DQ == DQ_SCHED && causal ? longest_first() : make_int2(blockIdx.x, blockIdx.y);")


# ---------------------------------------------------------------------------------------------------------------------
# Rung 10: the query tiles of a non-causal block in an order of its own (the .cu's formulas, pinned).
# ---------------------------------------------------------------------------------------------------------------------
def _rotate_tile(j, rot, n_tiles, bm=64):
    """The .cu's rotate_tile: position j's query row moved rot tiles on, modulo n_tiles tiles."""
    m = j + rot * bm
    return m - n_tiles * bm if m >= n_tiles * bm else m


@pytest.mark.parametrize("s", [1, 63, 64, 65, 127, 128, 129, 130, 200, 300, 517, 4096])
def test_rung10_rotated_order_visits_every_query_tile_once_from_a_start_of_its_own(s):
    """Non-causal, key block n of N starts at query tile n T / N (T tiles) and walks every tile once, wrapping
    around; the producer and the consumers compute the same order from the same formula; and the blocks of one head
    start at N different tiles when T >= N (T = 2 N at the target: 128-key blocks, 64-row tiles), so at each step
    they add their dQ blocks into different tiles of dq_acc. Causal blocks keep rung 09's order (rot = 0)."""
    bm, keys = hb.CONFIG["BLOCK_M"], hb.CONFIG["CONSUMERS"] * hb.CONFIG["BLOCK_N"]
    n_tiles, nb = -(-s // bm), -(-s // keys)
    starts = []
    for n in range(nb):
        rot = n * n_tiles // nb
        assert 0 <= rot < n_tiles
        order = [_rotate_tile(j, rot, n_tiles, bm) for j in range(0, s, bm)]
        assert sorted(order) == list(range(0, n_tiles * bm, bm)), (s, n, order)
        starts.append(order[0])
    assert len(set(starts)) == nb or n_tiles < nb
    for step in range(n_tiles):
        at = [_rotate_tile(step * bm, n * n_tiles // nb, n_tiles, bm) for n in range(nb)]
        assert len(set(at)) == min(nb, n_tiles), (s, step, at)
    _pinned("const int m = j + rot * BLOCK_M;", "return m >= n_tiles * BLOCK_M ? m - n_tiles * BLOCK_M : m;",
            "const int rot = ROT && !causal ? blk.x * ((S + BLOCK_M - 1) / BLOCK_M) / (int)gridDim.x : 0;")
    src = open(os.path.join(hb.HERE, "kernels_hopper_bwd.cu")).read()
    assert src.count("const int m0 = ROT ? rotate_tile(j, rot, n_tiles) : j;") == 2     # producer and consumer


# ---------------------------------------------------------------------------------------------------------------------
# Rung 11: dQ converted by the consumer whose reduction is a block's last (the .cu's count, pinned).
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", hb.HEAD_DIMS)
@pytest.mark.parametrize("causal", [False, True])
def test_rung11_expected_adds_are_the_walks_reductions(d, causal):
    """Every dq_acc block (query head, 64-row tile, 64-wide column block) gets exactly dq_block_adds(m0) reductions
    from the walk - each (key block, consumer) that visits the tile adds once into its column block (D = 128: consumer
    c into block c; D = 64: both into the one block) - for ragged S, GQA groups and causal, so the count that reaches
    it is the last one and the block is converted exactly once, after every add (one short: never converted; one
    over: converted early, missing adds)."""
    keys, bm, cons = hb.CONFIG["CONSUMERS"] * hb.CONFIG["BLOCK_N"], hb.CONFIG["BLOCK_M"], hb.CONFIG["CONSUMERS"]
    for s in (1, 63, 64, 65, 127, 128, 129, 200, 257, 300, 517):
        n_tiles, nb = -(-s // bm), -(-s // keys)
        for group in (1, 3):
            adds = {}
            for n in range(nb):                             # key block n of one (batch, key/value head)
                for h in range(group):                      # the group's query heads, in the block's walk
                    for m0 in range(n * keys if causal else 0, s, bm):
                        for c in range(cons):
                            blk = (h, m0 // bm, c if d == 128 else 0)
                            adds[blk] = adds.get(blk, 0) + 1
            assert len(adds) == group * n_tiles * (d // 64), (s, group)
            for (h, tile, cb), got in adds.items():
                m0 = tile * bm
                expected = (m0 // keys + 1 if causal else nb) * (1 if d == 128 else cons)
                assert got == expected, (s, group, h, tile, cb, got, expected)
    _pinned("return (causal ? m0 / KEYS6 + 1 : (int)gridDim.x) * (HEAD_DIM == 64 ? CONSUMERS : 1);",
            "return old == expected - 1;",
            "flags[(step + 1) & 1] = count_dq_add(dq_count + (dq_index(bh1, n_tiles, m1, cb0) >> 12),",
            "if (m2 >= 0 && flags[step & 1])")
    assert hb.smem_bytes(d, "11") == hb.smem_bytes(d, "10") + 16 == hb.smem_bytes(d, "12")
    # rung 12: every key block of a (batch, key/value head) walks each query head of its group (causal too: block n's
    # walk starts at its own diagonal tile, inside S), so a head's count ends at gridDim.x
    _pinned("if (threadIdx.x == 128) *last = count_dq_add(dq_count + bh, (int)gridDim.x);")
