"""Lab 4.3, rung 02 modelled in NumPy on the CPU, with the kernel's own index arithmetic: the XOR swizzle (a
permutation, ldmatrix and cp.async free of bank conflicts), the XT cross-tile loop (compile-time ldmatrix offsets, a
pipeline that reads only landed tiles and refills only finished stages, the tail copy), and the whole mma.sync data
path of a block - swizzled stores, ldmatrix lane roles, m16n8k16 fragments, the epilogue - giving A @ B exactly;
each model also shown to fail on a plausible bug."""
import numpy as np
import pytest

from common import check
from phase4_optimization.lab03_tensor_cores import lab as tc


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the swizzle and the XT loop
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cfg", tc.CONFIGS, ids=tc.short)
def test_swizzle_is_a_permutation_and_ldmatrix_is_conflict_free(cfg):
    for cpr, rows in ((cfg["BK"] // 8, cfg["BM"]), (cfg["BN"] // 8, cfg["BK"])):
        slots = sorted(tc.swizzle(r, c, cpr) for r in range(rows) for c in range(cpr))
        assert slots == list(range(rows * cpr))
        assert tc.ldmatrix_conflicts(cpr, rows) == 1
        # cp.async stores: 8 consecutive threads write 8 consecutive logical chunks -> 8 different bank groups
        for first in range(0, rows * cpr, 8):
            groups = {tc.swizzle(i // cpr, i % cpr, cpr) % 8 for i in range(first, first + 8)}
            assert len(groups) == 8


XT_CONFIGS = [c for c in tc.CONFIGS if c.get("XT", 0)]


def test_xt_is_a_tuner_candidate_and_the_default_is_unchanged():
    assert XT_CONFIGS and not tc.DEFAULT_CONFIG.get("XT", 0)


@pytest.mark.parametrize("cfg", tc.CONFIGS, ids=tc.short)
def test_xt_ldmatrix_offsets_are_compile_time_constants(cfg):
    """XT keeps one register per 16-deep step (A) and per pair of n8 tiles (B) and adds everything else as a constant:
    that is only right if the swizzle of row r + 16 i (A's mma tile i, B's step kk) is the swizzle of row r moved by
    16 i rows. Checked for every lane, warp, tile and step of each config."""
    acpr, bcpr = cfg["BK"] // 8, cfg["BN"] // 8
    for lane in range(32):
        a_row, a_chunk = lane & 15, lane >> 4
        b_row, b_chunk = (lane & 7) + ((lane >> 3) & 1) * 8, lane >> 4
        for kk in range(cfg["BK"] // 16):
            for wm in range(0, cfg["BM"], cfg["WM"]):
                base = tc.swizzle(wm + a_row, kk * 2 + a_chunk, acpr)
                for i in range(cfg["WM"] // 16):
                    assert tc.swizzle(wm + i * 16 + a_row, kk * 2 + a_chunk, acpr) == base + i * 16 * acpr
            for wn in range(0, cfg["BN"], cfg["WN"]):
                for j in range(0, cfg["WN"] // 8, 2):
                    c = (wn + j * 8) // 8 + b_chunk
                    assert tc.swizzle(kk * 16 + b_row, c, bcpr) == tc.swizzle(b_row, c, bcpr) + kk * 16 * bcpr


def _xt_schedule(stages: int, k_tiles: int) -> list[tuple]:
    """The XT loop's shared-memory events, in the order one thread issues them (kernels.cu, the `if (fast)` branch):
    ("copy", stage, tile), ("commit",), ("wait", n), ("bar",), ("read", stage, tile, step), ("mma", tile, step)."""
    steps, ev = 2, []                                     # BK = 32: two 16-deep steps
    for s in range(stages):                               # prologue: every stage
        if s < k_tiles:
            ev.append(("copy", s, s))
        ev.append(("commit",))
    ev += [("wait", stages - 1), ("bar",), ("read", 0, 0, 0)]
    for kt0 in range(0, k_tiles, stages):
        for s in range(stages):
            kt = kt0 + s
            if kt >= k_tiles:
                break
            for kk in range(steps):
                if kk + 1 < steps:
                    ev += [("read", s, kt, kk + 1), ("mma", kt, kk)]
                else:
                    ev += [("mma", kt, kk), ("wait", stages - 2), ("bar",)]
                    if kt + 1 < k_tiles:
                        ev.append(("read", (s + 1) % stages, kt + 1, 0))
                    ev.append(("mma", kt, kk))
                    if kt + stages < k_tiles:
                        ev.append(("copy", s, kt + stages))
                    ev.append(("commit",))
    return ev


def _run_xt_model(events) -> list[tuple]:
    """Replays _xt_schedule's events. cp.async groups complete in order; wait n leaves at most n of this thread's
    groups in flight, and the barrier after it makes every thread's landed copies visible. Asserts that a read finds
    its tile landed before the last barrier and that a copy into a stage comes after a barrier that followed every
    read of the tile it replaces; returns the (tile, step) reads in order."""
    groups, landed, visible, content, last_read_bar, bars, reads = [[]], set(), set(), {}, {}, 0, []
    for e in events:
        if e[0] == "copy":
            _, st, tile = e
            if st in content:
                assert last_read_bar.get(content[st], -1) < bars, \
                    f"stage {st} refilled while tile {content[st]} is read"
            content[st] = tile
            groups[-1].append(tile)
        elif e[0] == "commit":
            groups.append([])
        elif e[0] == "wait":
            landed |= {t for g in groups[:-1][:max(len(groups) - 1 - e[1], 0)] for t in g}
        elif e[0] == "bar":
            bars += 1
            visible = set(landed)
        elif e[0] == "read":
            _, st, tile, step = e
            assert content.get(st) == tile and tile in visible, f"tile {tile} read before it landed"
            last_read_bar[tile] = bars
            reads.append((tile, step))
    return reads


@pytest.mark.parametrize("stages", [2, 3, 4, 6])
@pytest.mark.parametrize("k_tiles", [1, 2, 3, 5, 8, 13])
def test_xt_pipeline_reads_only_landed_tiles_and_refills_only_finished_stages(stages, k_tiles):
    """Every tile is read at every step, in order, never before it landed, and no stage is refilled under a reader."""
    assert _run_xt_model(_xt_schedule(stages, k_tiles)) == [(t, kk) for t in range(k_tiles) for kk in range(2)]


def test_xt_pipeline_model_catches_a_short_wait_and_an_early_refill():
    """The model can fail: wait<STAGES - 1> at the barrier (one group too many in flight), or a refill issued before
    the barrier that ends the reads of the stage."""
    ev = _xt_schedule(3, 6)
    with pytest.raises(AssertionError, match="before it landed"):
        _run_xt_model([("wait", 2) if e == ("wait", 1) else e for e in ev])
    early = list(ev)
    i = next(i for i, e in enumerate(early) if e[0] == "copy" and e[2] == 3)    # tile 3 into stage 0
    bar = max(j for j in range(i) if early[j] == ("bar",))
    early.insert(bar, early.pop(i))
    with pytest.raises(AssertionError, match="refilled while"):
        _run_xt_model(early)


def _tile_from_copies(cfg, which, src, k0, chunks):
    """Shared tile (in 8-element chunk slots) that a list of (slot, row, col8) copies produces from src; zero-fill
    past K (A's columns, B's rows) as cp.async's src-size does."""
    k = src.shape[1] if which == "A" else src.shape[0]
    cpr = cfg["BK"] // 8 if which == "A" else cfg["BN"] // 8
    rows = cfg["BM"] if which == "A" else cfg["BK"]
    tile = np.full((rows * cpr, 8), np.nan)
    for slot, r, c8 in chunks:
        if which == "A":
            tile[slot] = [src[r, k0 + c8 * 8 + e] if k0 + c8 * 8 + e < k else 0.0 for e in range(8)]
        else:
            tile[slot] = src[k0 + r, c8 * 8: c8 * 8 + 8] if k0 + r < k else 0.0
    return tile


@pytest.mark.parametrize("cfg", XT_CONFIGS, ids=tc.short)
@pytest.mark.parametrize("k", [13, 70, 200])
def test_xt_tail_copy_fills_the_tile_the_general_copy_fills(cfg, k):
    """XT's partial last k-tile (load_tile_tail: thread t's chunk i at a constant distance from its chunk 0, A chunks
    of one column, B chunks of whole rows) against load_tile's per-chunk indexing, on an interior block."""
    nt = tc.config_threads(cfg)
    acpr, bcpr = cfg["BK"] // 8, cfg["BN"] // 8
    a_step, b_step = nt // acpr, nt // bcpr
    rng = check.rng(41)
    a = rng.integers(-4, 5, (cfg["BM"], k)).astype(np.float64)
    b = rng.integers(-4, 5, (k, cfg["BN"])).astype(np.float64)
    k0 = ((k - 1) // cfg["BK"]) * cfg["BK"]
    for which, src, cpr, rows, step in (("A", a, acpr, cfg["BM"], a_step), ("B", b, bcpr, cfg["BK"], b_step)):
        general = [(tc.swizzle(i // cpr, i % cpr, cpr), i // cpr, i % cpr) for i in range(rows * cpr)]
        tail = [(tc.swizzle(t // cpr, t % cpr, cpr) + i * step * cpr, t // cpr + i * step, t % cpr)
                for t in range(nt) for i in range(rows * cpr // nt)]
        want = _tile_from_copies(cfg, which, src, k0, general)
        got = _tile_from_copies(cfg, which, src, k0, tail)
        assert not np.isnan(got).any(), f"{which}: a chunk slot was never written"
        np.testing.assert_array_equal(got, want)


def test_an_unswizzled_layout_would_conflict():
    """The check can fail: without the XOR, 8 rows of 128 bytes put the same chunk on the same 4 banks."""
    rows = [(r * 8 + 3) % 8 for r in range(8)]               # chunk 3 of rows 0..7, 8 chunks per row, no swizzle
    assert max(rows.count(g) for g in set(rows)) == 8


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: a NumPy model of tc_02's data path, instruction by instruction, using the PTX ISA's fragment layouts
# ---------------------------------------------------------------------------------------------------------------------
def _ldmatrix(smem, addrs, trans):
    """ldmatrix.x4: lanes 8q..8q+7 give the row addresses of matrix q; returns regs[q][lane] = (lo, hi)."""
    regs = []
    for q in range(4):
        mat = np.stack([smem[addrs[8 * q + rr]] for rr in range(8)])      # 8 rows x 8 elements
        if trans:
            regs.append([(mat[2 * (l % 4), l // 4], mat[2 * (l % 4) + 1, l // 4]) for l in range(32)])
        else:
            regs.append([(mat[l // 4, 2 * (l % 4)], mat[l // 4, 2 * (l % 4) + 1]) for l in range(32)])
    return regs


def _mma_16816(acc, a, b):
    """mma.sync m16n8k16 .row.col: a = 4 regs x 32 lanes, b = 2 regs x 32 lanes, acc[lane] = (d0, d1, d2, d3)."""
    A = np.full((16, 16), np.nan)
    B = np.full((16, 8), np.nan)
    for l in range(32):
        g, t = l // 4, l % 4
        for reg, (r0, c0) in enumerate(((0, 0), (8, 0), (0, 8), (8, 8))):
            A[g + r0, c0 + 2 * t: c0 + 2 * t + 2] = a[reg][l]
        for reg, k0 in enumerate((0, 8)):
            B[k0 + 2 * t: k0 + 2 * t + 2, g] = b[reg][l]
    assert not np.isnan(A).any() and not np.isnan(B).any(), "a fragment element was never loaded"
    D = A @ B
    for l in range(32):
        g, t = l // 4, l % 4
        acc[l] += np.array([D[g, 2 * t], D[g, 2 * t + 1], D[g + 8, 2 * t], D[g + 8, 2 * t + 1]])


def _model_block(cfg, a_tile, b_tile):
    """C tile of one block for one k-tile, following tc_02_mma_sync's index arithmetic."""
    bm, bn, bk, wm_, wn_ = (cfg[k] for k in ("BM", "BN", "BK", "WM", "WN"))
    acpr, bcpr, nthreads = bk // 8, bn // 8, tc.config_threads(cfg)
    As = np.full((bm * acpr, 8), np.nan)
    Bs = np.full((bk * bcpr, 8), np.nan)
    for tid in range(nthreads):                                            # load_tile
        for i in range(bm * acpr // nthreads):
            r, c = divmod(tid + i * nthreads, acpr)
            As[tc.swizzle(r, c, acpr)] = a_tile[r, 8 * c: 8 * c + 8]
        for i in range(bk * bcpr // nthreads):
            r, c = divmod(tid + i * nthreads, bcpr)
            Bs[tc.swizzle(r, c, bcpr)] = b_tile[r, 8 * c: 8 * c + 8]
    assert not np.isnan(As).any() and not np.isnan(Bs).any(), "a shared-memory chunk was never written"
    warps_n, mt, nt = bn // wn_, wm_ // 16, wn_ // 8
    C = np.full((bm, bn), np.nan)
    for warp in range(nthreads // 32):
        wm, wn = (warp // warps_n) * wm_, (warp % warps_n) * wn_
        acc = np.zeros((mt, nt, 32, 4))
        for kk in range(bk // 16):
            af = [_ldmatrix(As, [tc.swizzle(wm + i * 16 + (l & 15), kk * 2 + (l >> 4), acpr) for l in range(32)],
                            False) for i in range(mt)]
            bf = [None] * nt
            for j in range(0, nt, 2):
                regs = _ldmatrix(Bs, [tc.swizzle(kk * 16 + (l & 7) + ((l >> 3) & 1) * 8,
                                                 (wn + j * 8) // 8 + (l >> 4), bcpr) for l in range(32)], True)
                bf[j], bf[j + 1] = (regs[0], regs[1]), (regs[2], regs[3])
            for i in range(mt):
                for j in range(nt):
                    _mma_16816(acc[i, j], af[i], bf[j])
        for l in range(32):                                                # epilogue
            g, t = l // 4, l % 4
            for i in range(mt):
                for j in range(nt):
                    for h in range(2):
                        C[wm + i * 16 + g + 8 * h, wn + j * 8 + 2 * t: wn + j * 8 + 2 * t + 2] = \
                            acc[i, j, l, 2 * h: 2 * h + 2]
    return C


@pytest.mark.parametrize("cfg", [tc._cfg(64, 64, 32, 32, 32, 2), tc._cfg(32, 64, 64, 32, 32, 2),
                                 tc._cfg(64, 128, 32, 32, 64, 2)], ids=tc.short)
def test_numpy_model_of_the_mma_sync_data_path(cfg):
    """Swizzled stores, ldmatrix lane roles (.trans for B), m16n8k16 fragment layouts and the epilogue mapping,
    composed, give A @ B exactly - on small block tiles with the kernel's arithmetic (BK 32 and 64, 64- and 128-byte
    rows, warp tiles 32 wide and 64 wide). Integer inputs make the products exact."""
    rng = check.rng(31)
    a = rng.integers(-4, 5, (cfg["BM"], cfg["BK"])).astype(np.float64)
    b = rng.integers(-4, 5, (cfg["BK"], cfg["BN"])).astype(np.float64)
    c = _model_block(cfg, a, b)
    assert not np.isnan(c).any(), "an element of C was never written"
    np.testing.assert_array_equal(c, a @ b)


def test_numpy_model_catches_a_wrong_lane_role():
    """The model can fail: B loaded without .trans gives the wrong product."""
    cfg = tc._cfg(32, 64, 32, 32, 32, 2)
    global _ldmatrix
    real = _ldmatrix
    try:
        _ldmatrix = lambda smem, addrs, trans: real(smem, addrs, False)    # noqa: E731
        rng = check.rng(2)
        a = rng.integers(-4, 5, (32, 32)).astype(np.float64)
        b = rng.integers(-4, 5, (32, 64)).astype(np.float64)
        assert not np.array_equal(_model_block(cfg, a, b), a @ b)
    finally:
        _ldmatrix = real
