"""Lab 4.3 (tensor cores): compile reports, config validation, a NumPy model of the mma.sync data path, the Triton
variant in the interpreter, argument validation, the CLI and the plots on the CPU; every variant on awkward shapes,
misaligned views, fp32 output and empty arrays on a GPU. Rung 03 (wgmma + TMA) has its own file:
test_phase4_lab03_tensor_cores_wgmma.py."""
import json
import os

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, lab, plan
from phase4_optimization.lab03_tensor_cores import bench as tcb
from phase4_optimization.lab03_tensor_cores import lab as tc
from tests.helpers import H200, skip_unless_available

gpu = pytest.mark.gpu
ARCHS = ("sm_80", "sm_90")
KiB = 1024
HOPPER = device.profile_info("h200")         # the GPU the CONFIGS list was written for (227 KiB a block)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler made of both rungs
# ---------------------------------------------------------------------------------------------------------------------
def test_file_claims_sm80_and_sm90():
    assert set(cuda.claimed_archs(tc.CU)) == set(ARCHS)
    assert cuda.kernel_names(tc.CU) == ["tc_01_wmma", "tc_02_mma_sync", "tc_00_mma_peak"]


def _expected_hmma(cfg) -> int:
    """m16n8k16 MMAs per k-tile per warp: (WM / 16) (WN / 8) (BK / 16); the loop body is fully unrolled."""
    return (cfg["WM"] // 16) * (cfg["WN"] // 8) * (cfg["BK"] // 16)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("cfg", tc.CONFIGS, ids=tc.short)
def test_every_config_compiles_without_spills_with_hmma_ldsm_ldgsts(cfg, arch):
    rep = cuda.compile_report(tc.CU, arch, defines=cfg)
    k = rep.kernels["tc_02_mma_sync"]
    assert k.registers > 0 and k.spills == 0, f"tc_02 spills on {arch}: {k.spill_stores}/{k.spill_loads} B"
    assert k.registers <= 255
    c = k.sass_counts
    if cuda.find_cuobjdump() is None:
        pytest.skip("no cuobjdump: SASS census unavailable")
    # ldmatrix: WM/16 A loads + WN/16 B loads per 16-deep step
    per_step, steps = cfg["WM"] // 16 + cfg["WN"] // 16, cfg["BK"] // 16
    if cfg.get("XT", 0):
        # the XT loop is unrolled STAGES times (one k-tile per stage) and loads step 0 of the first tile before it;
        # edge blocks run the ordinary loop (one k-tile per iteration), compiled alongside
        assert c.get("HMMA", 0) == (cfg["STAGES"] + 1) * _expected_hmma(cfg), c
        assert c.get("LDSM", 0) == per_step * (steps + cfg["STAGES"] * steps + 1), c
    else:
        assert c.get("HMMA", 0) == _expected_hmma(cfg), c
        assert c.get("LDSM", 0) == per_step * steps, c
    assert c.get("LDGSTS", 0) > 0, "no cp.async in the SASS"
    assert c.get("LDL", 0) == 0 and c.get("STL", 0) == 0
    w = rep.kernels["tc_01_wmma"]
    assert w.spills == 0 and w.sass_counts.get("HMMA", 0) > 0


def test_fp16_inputs_and_fp32_output_compile():
    """The other branches of the dtype macros (bf16 in / bf16 out is the default, compiled above)."""
    defines = {"IN_FP16": 1, "OUT_F32": 1}
    rep = cuda.compile_report(tc.CU, "sm_90", defines=dict(tc.DEFAULT_CONFIG, **defines))
    for name in ("tc_01_wmma", "tc_02_mma_sync"):
        assert rep.kernels[name].spills == 0
    mma = [ln for ln in rep.ptx.splitlines() if "mma.sync.aligned.m16n8k16" in ln]
    assert mma and all(".f32.f16.f16.f32" in ln for ln in mma), mma[:2]
    assert "st.global.v2.f32" in rep.ptx          # fp32 pairs in the epilogue


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: configurations
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("cfg", tc.CONFIGS, ids=tc.short)
def test_configs_are_valid_and_fit(cfg):
    assert tc.config_problems(cfg, gpu=HOPPER) == []
    assert tc.config_smem(cfg) <= HOPPER.smem_per_block_optin
    warps = tc.config_threads(cfg) // 32
    assert warps * cfg["WM"] * cfg["WN"] == cfg["BM"] * cfg["BN"]          # the warps tile the block exactly
    assert tc.validate_config(cfg, gpu=HOPPER) == cfg


def test_default_config_is_in_configs_and_is_a_large_tile():
    assert tc.DEFAULT_CONFIG in tc.CONFIGS
    d = tc.DEFAULT_CONFIG
    assert d["WM"] * d["WN"] >= 64 * 64 and tc.config_threads(d) >= 128 and d["STAGES"] >= 3
    assert tc.validate_config(None) == tc.DEFAULT_CONFIG


TC_PROFILES = [s for s in device.profiles() if lab.arch_matches(device.profile_info(s).arch, tc.TC_ARCHS)]


def test_the_default_config_fits_every_gpu_with_mma_sync():
    """The default needs no GPU-dependent fallback: its 96 KiB fit the smallest opt-in limit among GPUs with bf16
    mma.sync (99 KiB a block on sm_86, sm_89, sm_120); a T4 (sm_75) has no such GPU path at all."""
    assert {"rtx-3060", "rtx-4090", "rtx-5090", "a100-sxm4-80gb", "b200"} <= set(TC_PROFILES)
    assert "t4" not in TC_PROFILES
    for slug in TC_PROFILES:
        g = device.profile_info(slug)
        assert tc.config_problems(tc.DEFAULT_CONFIG, gpu=g) == [], slug
        assert tc.config_smem(tc.DEFAULT_CONFIG) <= 99 * KiB <= g.smem_per_block_optin


@pytest.mark.parametrize("bad,match", [
    (dict(tc.DEFAULT_CONFIG, BK=16), "BK must be 32 or 64"),
    (dict(tc.DEFAULT_CONFIG, WM=48), "warp tiles must tile"),
    (dict(tc.DEFAULT_CONFIG, BN=96, WN=32), "multiple of 64"),
    (dict(tc.DEFAULT_CONFIG, BK=64, STAGES=6), "shared memory"),
    (dict(tc.DEFAULT_CONFIG, WM=128, WN=64), "accumulators"),
    (dict(tc.DEFAULT_CONFIG, STAGES=1), "STAGES"),
    (dict(BM=128, BN=128, BK=32, WM=16, WN=16, STAGES=3), "threads per block"),
    ({k: v for k, v in tc.DEFAULT_CONFIG.items() if k != "STAGES"}, "missing keys"),
    (dict(tc.DEFAULT_CONFIG, TM=8), "unknown keys"),
    (dict(tc.DEFAULT_CONFIG, BM=128.0), "positive integer"),
    (dict(tc.DEFAULT_CONFIG, BM=0), "positive integer"),
    (dict(tc.DEFAULT_CONFIG, XT=2), "XT must be 0 or 1"),
    (dict(tc.DEFAULT_CONFIG, XT=1, DB=1), "DB must be 0 with XT"),
])
def test_bad_configs_are_rejected_before_any_launch(bad, match):
    assert tc.config_problems(bad)
    with pytest.raises(ValueError, match=match):
        tc.validate_config(bad)
    a = np.zeros((4, 4), np.float16)
    with pytest.raises(ValueError, match=match):            # no GPU needed: the config is checked first
        tc.gemm_mma(a, a, config=bad)


def test_the_gpus_shared_memory_limit_is_applied():
    big = dict(tc.DEFAULT_CONFIG, BK=64, STAGES=4)           # 192 KiB: fits sm_90's 227 KiB, not sm_80's 163 KiB
    assert tc.config_problems(big, gpu=HOPPER) == []
    a100 = device.profile_info("a100-sxm4-80gb")
    assert any("shared memory" in p for p in tc.config_problems(big, gpu=a100))
    assert any("shared memory" in p for p in tc.config_problems(big, smem_limit=163 * KiB))
    # threads per SM come from the GPU too: 1536 on sm_89 allow 6 blocks of 256 threads, sm_90's 2048 allow 8
    eight = dict(tc.DEFAULT_CONFIG, BM=128, BN=128, WM=64, WN=32, MIN_BLOCKS=8)
    assert tc.config_problems(eight, gpu=HOPPER) == []
    assert any("MIN_BLOCKS must be 1..6" in p for p in tc.config_problems(eight, gpu=device.profile_info("l4")))


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
                assert last_read_bar.get(content[st], -1) < bars, f"stage {st} refilled while tile {content[st]} is read"
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


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the Triton variant in the interpreter, argument validation, the CLI
# ---------------------------------------------------------------------------------------------------------------------
def _host(shape, dtype, seed, *, offset=0, pad=0):
    """A host matrix (NumPy fp16 / CPU torch bf16) of standard-normal values, optionally `offset` elements into a
    buffer and with `pad` NaN columns after each row (a row-stride view)."""
    rows, cols = shape
    buf = np.full(offset + rows * (cols + pad) + 1, np.nan)
    view = buf[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)
    view[:, :cols] = check.rng(seed).standard_normal((rows, cols))
    full = arrays.from_numpy(buf, dtype, "cpu")
    return full[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)[:, :cols]


@pytest.mark.cpu_only
@pytest.mark.parametrize("mnk,dtype,offset,pad", [
    ((1, 1, 1), "bfloat16", 0, 0), ((127, 33, 19), "float16", 0, 0), ((17, 9, 13), "bfloat16", 1, 3),
    ((40, 24, 50), "float16", 3, 0), ((33, 18, 21), "bfloat16", 0, 11)])
def test_triton_interpreter_matches_float64(mnk, dtype, offset, pad):
    m, n, k = mnk
    a, b = _host((m, k), dtype, 1, offset=offset, pad=pad), _host((k, n), dtype, 2, offset=offset, pad=pad)
    out = check.poisoned((m, n), dtype, a)
    tc.gemm_triton(a, b, out=out)
    ref = tc.reference(arrays.to_numpy(a), arrays.to_numpy(b))
    check.assert_close(out, ref, tol=tc.tolerance(mnk, dtype), what=f"triton {mnk} {dtype}")


@pytest.mark.cpu_only
def test_triton_interpreter_fp32_output():
    a, b = _host((20, 30), "bfloat16", 3), _host((30, 12), "bfloat16", 4)
    out = tc.gemm_triton(a, b, out_dtype="float32")
    assert arrays.dtype_name(out) == "float32"
    ref = tc.reference(arrays.to_numpy(a), arrays.to_numpy(b))
    check.assert_close(out, ref, tol=tc.tolerance((20, 12, 30), "bfloat16", "float32"))


def test_tolerance_scales_with_k_and_dtype():
    small, big = tc.tolerance((8, 8, 64), "float16"), tc.tolerance((8, 8, 65536), "float16")
    assert big.elem > small.elem and big.rel_norm > small.rel_norm
    assert tc.tolerance((8, 8, 64), "float16", "float32").elem < 1e-4 < small.elem
    # a result off by one bf16 ulp everywhere would still pass; one off by a whole product must not
    assert tc.tolerance((8, 8, 4096), "bfloat16").elem < 0.02


@pytest.mark.cpu_only
def test_empty_and_k_zero():
    a = _host((0, 5), "float16", 1)
    b = _host((5, 3), "float16", 2)
    assert tuple(tc.gemm_triton(a, b).shape) == (0, 3)
    z = tc.gemm_triton(_host((3, 0), "bfloat16", 1), _host((0, 4), "bfloat16", 2))
    assert tuple(z.shape) == (3, 4) and float(np.abs(arrays.to_numpy(z)).max()) == 0.0


@pytest.mark.cpu_only
def test_bad_input_is_rejected_with_the_argument_named():
    a, b = _host((8, 5), "float16", 1), _host((5, 6), "float16", 2)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        tc.gemm_triton(a, a)
    with pytest.raises(TypeError, match="a: dtype float32"):
        tc.gemm_triton(a.astype(np.float32), b)
    with pytest.raises(TypeError, match="dtypes must match"):
        tc.gemm_triton(a, _host((5, 6), "bfloat16", 2))
    with pytest.raises(ValueError, match="a: expected a 2-D"):
        tc.gemm_triton(a.reshape(2, 4, 5), b)
    with pytest.raises(ValueError, match="a: rows must be contiguous"):
        tc.gemm_triton(np.ascontiguousarray(a.T).T, b)
    with pytest.raises(ValueError, match="out: expected shape"):
        tc.gemm_triton(a, b, out=np.empty((8, 7), np.float16))
    with pytest.raises(TypeError, match="out: dtype float16"):
        tc.gemm_triton(a, b, out=np.empty((8, 6), np.float16), out_dtype="float32")
    with pytest.raises(ValueError, match="out_dtype"):
        tc.gemm_triton(a, b, out_dtype="float64")
    buf = np.zeros(200, np.float16)
    with pytest.raises(ValueError, match="share memory"):
        tc.gemm_triton(buf[:40].reshape(8, 5), buf[40:70].reshape(5, 6), out=buf[60:108].reshape(8, 6))
    with pytest.raises(TypeError, match="a: expected an array"):
        tc.gemm_triton([[1.0]], b)


def test_cuda_wrappers_refuse_to_run_without_a_gpu():
    if device.has_gpu():
        pytest.skip("a GPU is present")
    a = np.zeros((4, 4), np.float16)
    for fn in (tc.gemm_wmma, tc.gemm_mma):
        with pytest.raises(TypeError, match="expected a GPU array"):   # validation runs before the GPU check
            fn(a, a)


def test_wgmma_variant_is_listed_and_needs_sm90():
    names = [v.name for v in tc.VARIANTS]
    assert "cuda 03 wgmma+TMA" in names and tc.WGMMA_MODULE == "phase4_optimization.lab03_tensor_cores.wgmma"
    assert tc.WGMMA_CLUSTER_NAME in names
    for v in tc.VARIANTS:
        if v.name in ("cuda 03 wgmma+TMA", tc.WGMMA_CLUSTER_NAME):
            assert v.archs == ("sm_90",)
            if not device.has_gpu():
                assert v.available()[0] is False


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs learners have (common.plan), and --set
# ---------------------------------------------------------------------------------------------------------------------
WGMMA_NAMES = [tc.WGMMA_NAME, tc.WGMMA_CLUSTER_NAME, tc.WGMMA_TMA_STORE_NAME, tc.WGMMA_CLUSTER_TMA_STORE_NAME]


def _plan(slug):
    return plan.make(tc, tcb, device.profile_info(slug))


@pytest.fixture
def no_overrides():
    config.set_overrides([])
    yield
    config.set_overrides([])


@pytest.mark.parametrize("slug", ["b200", "rtx-5090"])
def test_plan_off_hopper_skips_wgmma_saying_it_is_hopper_only(no_overrides, slug):
    p = _plan(slug)
    skipped = {v.name: v.why for v in p.skipped}
    assert set(skipped) == set(WGMMA_NAMES), skipped
    assert all("Hopper-only" in why and "sm_90a" in why and p.gpu.arch in why for why in skipped.values())
    assert {"cuda 01 wmma", tc.MMA, "triton tl.dot"} <= set(p.running)
    assert not any(x.kernel == "gemm_wgmma_tma" for x in p.launches)
    assert "does not run here: wgmma is Hopper-only" in p.predictions["rung 03 (wgmma + TMA)"]


def test_plan_on_a_99_kib_gpu(no_overrides):
    """An RTX 4090 (sm_89, 128 SMs, 99 KiB a block): the default mma.sync tile (96 KiB) runs there as it is; the
    Triton autotuner's candidates are the compact set (none of TRITON_CONFIGS fits 99 KiB pipelined); the mma.sync
    ceiling kernel fills one wave of its 128 SMs."""
    g = device.profile_info("rtx-4090")
    p = plan.make(tc, tcb, g)
    by = {}
    for x in p.launches:
        by.setdefault((x.variant, x.kernel), []).append(x)
    (mma,) = by[(tc.MMA, "tc_02_mma_sync")]
    assert mma.defines["BM"] == 128 and mma.defines["STAGES"] == 4 and mma.config_source == "default"
    assert mma.dyn_smem == 96 * KiB <= g.smem_per_block_optin and mma.grid == (32 * 16, 1, 1)
    assert mma.threads == 256
    tri = by[("triton tl.dot", "tc_dot_kernel")]
    assert [x.defines["BLOCK_K"] for x in tri] == [c["BLOCK_K"] for c in tc.TRITON_COMPACT]
    assert all(tc.triton_smem(c) > g.smem_per_block_optin for c in tc.TRITON_CONFIGS)
    (peak,) = by[("", "tc_00_mma_peak")]
    assert peak.grid[0] % g.sms == 0 and peak.grid[0] >= g.sms
    assert p.predictions["mma.sync blocks per SM, waves"].endswith(f"{512 / (g.sms * 1):.2f} waves of {g.sms}")


def test_plan_on_a_t4_runs_only_the_library():
    p = _plan("t4")
    assert p.running == ["torch.matmul (cuBLAS)", "cupy.matmul (cuBLAS)"] and p.launches == []
    why = {v.name: v.why for v in p.skipped}
    assert "sm_80" in why["cuda 02 mma.sync"] and "bf16 tl.dot needs sm_80" in why["triton tl.dot"]


def test_plan_on_hopper_lists_every_wgmma_build_with_one_block_per_sm(no_overrides):
    g = device.profile_info("h100-sxm")
    p = plan.make(tc, tcb, g)
    assert set(WGMMA_NAMES) <= set(p.running)
    w = [x for x in p.launches if x.kernel == "gemm_wgmma_tma"]
    assert {x.variant for x in w} == set(WGMMA_NAMES) and all(x.arch == "sm_90a" for x in w)
    assert all(x.grid == (g.sms,) and x.dyn_smem <= g.smem_per_block_optin for x in w)
    cl2 = [x for x in w if x.variant == tc.WGMMA_CLUSTER_NAME]
    assert cl2 and all(x.defines.get("CLUSTER") == 2 and "EPI_TMA" not in x.defines for x in cl2)


@pytest.mark.skipif(not os.path.exists(os.path.join(H200, tc.TUNED + ".json")), reason="no committed H200 record")
def test_plan_for_the_h200_applies_its_tuning_records_and_no_other_gpu_does(no_overrides):
    """The H200 profile reads results/h200's records (the mma.sync winner, the wgmma build); the H100's plan, the same
    architecture, gets the defaults: a record made on another GPU is never applied."""
    ph, p100 = _plan("h200"), _plan("h100-sxm")
    mma_h = next(x for x in ph.launches if x.variant == tc.MMA)
    mma_100 = next(x for x in p100.launches if x.variant == tc.MMA)
    assert "tuned on NVIDIA H200" in mma_h.config_source and mma_100.config_source == "default"
    assert {k: mma_100.defines[k] for k in tc.CONFIG_KEYS} == tc.DEFAULT_CONFIG
    assert {k: mma_100.defines[k] for k in tc.OPTIONAL} == tc.OPTIONAL
    plain = [x for x in ph.launches if x.variant == tc.WGMMA_NAME]
    assert plain and all("recorded build, tuned on NVIDIA H200" in x.config_source for x in plain)
    assert all("recorded build" not in x.config_source for x in p100.launches if x.variant == tc.WGMMA_NAME)


def test_set_changes_the_mma_sync_tile_and_says_so(no_overrides):
    """--set STAGES=3 (and any config key) reaches tc_02's -D list and the launch's shared memory, and the plan says
    where it came from; a value this GPU cannot hold is refused naming the problem; --set WGMMA_CLUSTER=2 moves the
    plain wgmma variant to 2-block clusters."""
    g = device.profile_info("rtx-3090")
    config.set_overrides(["STAGES=3", "XT=1"])
    res = tc.mma_config(g)
    assert res.values["STAGES"] == 3 and res.values["XT"] == 1 and res.values["DB"] == 0
    assert res.sources["STAGES"] == "--set STAGES=3"
    (x,) = [x for x in tc.launches(g) if x.variant == tc.MMA]
    assert x.defines["STAGES"] == 3 and x.defines["XT"] == 1 and x.dyn_smem == 3 * (128 * 32 + 32 * 256) * 2
    assert "--set STAGES=3" in x.config_source and "--set XT=1" in x.config_source
    config.set_overrides(["STAGES=5"])                           # 120 KiB: more than the 99 KiB a block may have
    with pytest.raises(ValueError, match="shared memory"):
        tc.mma_config(g)
    assert tc.mma_config(HOPPER)["STAGES"] == 5                  # fits 227 KiB
    config.set_overrides(["WGMMA_CLUSTER=2"])
    h = device.profile_info("h100-pcie")
    (w,) = [x for x in tc.launches(h) if x.variant == tc.WGMMA_NAME and x.case.startswith("4096")]
    assert w.defines.get("CLUSTER") == 2 and "--set WGMMA_CLUSTER=2" in w.config_source


def test_set_triton_autotune_off_runs_one_fixed_tile(no_overrides):
    g = device.profile_info("a100-sxm4-80gb")
    auto = [x for x in tc.launches(g) if x.variant == "triton tl.dot"]
    assert len(auto) == len(tc.triton_candidates(g)) >= 2 and all("autotuned" in x.config_source for x in auto)
    config.set_overrides(["TRITON_AUTOTUNE=0", "BLOCK_M=128"])
    (x,) = [x for x in tc.launches(g) if x.variant == "triton tl.dot"]
    assert x.defines["BLOCK_M"] == 128 and x.defines["BLOCK_N"] == tc.TRITON_SMALL["BLOCK_N"]
    assert x.grid == (4096 // 128 * 4096 // tc.TRITON_SMALL["BLOCK_N"],) and "--set BLOCK_M=128" in x.config_source


def test_main_quick_exits_zero(capsys):
    assert tc.main(["--quick", "--no-bench"]) == 0
    text = capsys.readouterr().out
    assert "tc_02_mma_sync" in text and ("interpreter" in text or device.has_gpu())


def test_compile_report_covers_several_configs_and_archs(capsys):
    rows = tcb.show_compile_reports(("sm_80", "sm_90"), tc.CONFIGS[:2])
    out = capsys.readouterr()
    assert [(r["kernel"], r["arch"]) for r in rows] == [("tc_01_wmma", "sm_80"), ("tc_02_mma_sync", "sm_80"),
                                                        ("tc_02_mma_sync", "sm_80"), ("tc_01_wmma", "sm_90"),
                                                        ("tc_02_mma_sync", "sm_90"), ("tc_02_mma_sync", "sm_90")]
    assert all(r["spills"] == 0 for r in rows)
    assert "compiling kernels.cu [1/4]" in out.err            # the sweep shows its progress


COMMITTED = os.path.join(H200, tc.LAB + ".json")


@pytest.mark.skipif(not os.path.exists(COMMITTED), reason="no committed H200 results")
def test_plot_redraws_from_the_committed_json(tmp_path):
    with open(COMMITTED) as f:
        data = json.load(f)
    paths = tcb.plot(data, str(tmp_path))
    assert [os.path.basename(p) for p in paths][:1] == [tc.LAB + ".png"]
    assert all(os.path.getsize(p) > 10_000 for p in paths)
    # a newer run also records rung 03's head to head: its plot is drawn from the JSON too
    data["wgmma"] = [{"shape": "8192x8192x8192", "wgmma_tflops": 2.0, "cublas_tflops": 2.1}]
    assert os.path.basename(tcb.plot(data, str(tmp_path))[-1]) == tc.LAB + "_wgmma.png"


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
CUDA_FNS = [tc.gemm_wmma, tc.gemm_mma]
ALL_FNS = CUDA_FNS + [tc.gemm_triton]


def _dev(shape, dtype, seed, *, offset=0, pad=0, fill=np.nan):
    """A GPU matrix (CuPy fp16 / torch bf16), `offset` elements into its buffer, `pad` poisoned columns per row."""
    rows, cols = shape
    host = np.full(offset + rows * (cols + pad) + 8, fill)
    v = host[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)
    v[:, :cols] = check.rng(seed).standard_normal((rows, cols))
    full = arrays.from_numpy(host, dtype, "cuda")
    return full[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)[:, :cols]


def _check(fn, a, b, out, dtype, od=None, **kw):
    m, k = (int(s) for s in a.shape)
    n = int(b.shape[1])
    res = fn(a, b, out=out, **kw) if od is None else fn(a, b, out=out, out_dtype=od, **kw)
    ref = tc.reference(arrays.to_numpy(a), arrays.to_numpy(b))
    check.assert_close(res, ref, tol=tc.tolerance((m, n, k), dtype, od), what=f"{fn.__name__} {m}x{n}x{k} {dtype}")


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", tc.DTYPES)
@pytest.mark.parametrize("mnk", [(1, 1, 1), (127, 129, 131), (1000, 1000, 8), (33, 65, 13), (300, 257, 1000),
                                 (2, 4100, 40), (4100, 3, 70), (256, 512, 520)])
def test_awkward_shapes(fn, dtype, mnk):
    m, n, k = mnk
    a, b = _dev((m, k), dtype, 1), _dev((k, n), dtype, 2)
    _check(fn, a, b, check.poisoned((m, n), dtype, a), dtype)


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", tc.DTYPES)
@pytest.mark.parametrize("offset,pad", [(1, 0), (3, 0), (0, 3), (0, None), (1, 5)],
                         ids=["start+1", "start+3", "stride+3", "stride-multiple-of-8", "both"])
def test_misaligned_and_strided_views(fn, dtype, offset, pad):
    """Odd starts and row strides that are not a multiple of 8 take the element-wise path; row strides rounded up to
    a multiple of 8 with K = 70 and N = 130 (not multiples of 8) take the zero-filling partial cp.async path. Pad
    columns hold NaN: a kernel that read past a row's end would put NaN into C."""
    m, n, k = 150, 130, 70
    pa, pb = ((-k) % 8, (-n) % 8) if pad is None else (pad, pad)
    a, b = _dev((m, k), dtype, 3, offset=offset, pad=pa), _dev((k, n), dtype, 4, offset=offset, pad=pb)
    flags = tc.vec_flags(a, b, a, *(tc._row_stride(x, y) for x, y in (("a", a), ("b", b), ("a", a))))
    if offset or (k + pa) % 8 or (n + pb) % 8:     # a row stride (in elements) that is not a multiple of 8
        assert flags & (tc.VEC_A | tc.VEC_B) == 0
    else:
        assert flags & (tc.VEC_A | tc.VEC_B) == (tc.VEC_A | tc.VEC_B)
    out_full = check.poisoned((m, n + 1), dtype, a)
    out = out_full[:, 1:] if offset else out_full[:, :n]             # a C view: odd start, row stride N + 1
    _check(fn, a, b, out, dtype)
    spare = arrays.to_numpy(out_full[:, 0] if offset else out_full[:, n])
    assert np.isnan(spare).all(), "wrote outside C"


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", tc.DTYPES)
def test_fp32_output(fn, dtype):
    a, b = _dev((200, 300), dtype, 5), _dev((300, 170), dtype, 6)
    _check(fn, a, b, check.poisoned((200, 170), "float32", a), dtype, "float32")


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
def test_empty_arrays(fn):
    for dtype in tc.DTYPES:
        a, b = _dev((0, 7), dtype, 1), _dev((7, 5), dtype, 2)
        assert tuple(fn(a, b).shape) == (0, 5)
        assert tuple(fn(_dev((4, 7), dtype, 1), _dev((7, 0), dtype, 2)).shape) == (4, 0)
        z = fn(_dev((3, 0), dtype, 1), _dev((0, 4), dtype, 2))
        assert float(np.abs(arrays.to_numpy(z)).max()) == 0.0


@gpu
@pytest.mark.parametrize("cfg", tc.CONFIGS, ids=tc.short)
def test_every_config_on_edge_shapes(cfg):
    if tc.config_problems(cfg, device.info().smem_per_block_optin):
        pytest.skip("does not fit this GPU's shared memory")
    assert tcb._edge_check(cfg) == ""


@gpu
@pytest.mark.parametrize("cfg", XT_CONFIGS, ids=tc.short)
@pytest.mark.parametrize("mnk", [(259, 517, 1000), (384, 640, 70), (130, 1030, 13), (515, 260, 4 * 32 * 7 + 5)])
def test_xt_configs_on_interior_blocks_with_k_tails(cfg, mnk):
    """XT runs only the blocks that take the fast copies (interior tiles, 16-byte capable operands): row strides
    rounded up to a multiple of 8 (pad columns NaN) keep the VEC flags on while K is not a multiple of 8 or of BK,
    so the partial last k-tile goes through load_tile_tail; several rounds of STAGES k-tiles; C poisoned."""
    if tc.config_problems(cfg, device.info().smem_per_block_optin):
        pytest.skip("does not fit this GPU's shared memory")
    m, n, k = mnk
    for dtype in tc.DTYPES:
        a = _dev((m, k), dtype, 11, pad=(-k) % 8)
        b = _dev((k, n), dtype, 12, pad=(-n) % 8)
        flags = tc.vec_flags(a, b, a, tc._row_stride("a", a), tc._row_stride("b", b), tc._row_stride("a", a))
        assert flags & (tc.VEC_A | tc.VEC_B) == (tc.VEC_A | tc.VEC_B)
        _check(tc.gemm_mma, a, b, check.poisoned((m, n), dtype, a), dtype, config=cfg)


@gpu
def test_bad_input_on_gpu():
    import cupy
    import torch

    a16 = _dev((8, 5), "float16", 1)
    abf = _dev((8, 5), "bfloat16", 1)
    for fn in ALL_FNS:
        with pytest.raises(TypeError, match="dtype float32"):
            fn(a16.astype(cupy.float32), a16.astype(cupy.float32).T.copy())
        with pytest.raises(TypeError, match="dtypes must match|same library"):
            fn(abf, torch.from_dlpack(a16.T.copy()))
        with pytest.raises(TypeError, match="expected a GPU array"):
            fn(np.zeros((8, 5), np.float16), np.zeros((5, 3), np.float16))
        with pytest.raises(ValueError, match="inner dimensions"):
            fn(a16, a16)
    # torch fp16 tensors work too (same pointer path as bf16)
    t = torch.from_dlpack(_dev((33, 40), "float16", 2))
    u = torch.from_dlpack(_dev((40, 17), "float16", 3))
    _check(tc.gemm_mma, t, u, None, "float16")


@gpu
def test_wgmma_variant_when_present():
    v = next(v for v in tc.VARIANTS if v.name == "cuda 03 wgmma+TMA")
    skip_unless_available(v)
    for dtype in v.dtypes:
        a, b = _dev((300, 520), dtype, 7), _dev((520, 260), dtype, 8)
        _check(v.fn, a, b, check.poisoned((300, 260), dtype, a), dtype)
