"""Lab 4.6's Hopper rungs modelled in NumPy, on any machine: where Q and the K/V ring sit in shared memory, the wgmma
descriptors as kernels_hopper.cu builds them and what wgmma reads through them from the 128-byte-swizzled tiles TMA
wrote (under the PTX canonical-layout model of lab 4.3's wgmma.py), the accumulator and A fragments behind P fed from
registers, and TMA's box copy over a 4-D map. hopper_check.py and the tests run them."""
from __future__ import annotations

import numpy as np

from phase4_optimization.lab03_tensor_cores import wgmma as wg

from .hopper import BLOCK_M, BLOCK_N, BOX_BYTES, CONSUMERS, STAGES, smem_bytes


def layout(head_dim: int, stage: int = 0, base: int = 0, stages: int = STAGES) -> dict:
    """Shared-memory byte addresses (base = the 1024-aligned start) of Q and of one stage's K and V."""
    q = BLOCK_M * head_dim * 2
    kv = BLOCK_N * head_dim * 2
    k = base + q + stage * 2 * kv
    return {"Q": base, "K": k, "V": k + kv, "bars": base + q + stages * 2 * kv}


# ---------------------------------------------------------------------------------------------------------------------
# The descriptors, as the kernel builds them, and a NumPy model of what wgmma reads through them
# ---------------------------------------------------------------------------------------------------------------------
def desc_q(s_q: int, consumer: int, kk: int) -> int:
    return wg.smem_descriptor(s_q + (kk // 4) * BOX_BYTES + consumer * 64 * 128 + 32 * (kk % 4), 16, 1024)


def desc_k(s_k: int, kk: int) -> int:
    return wg.smem_descriptor(s_k + (kk // 4) * BOX_BYTES + 32 * (kk % 4), 16, 1024)


def desc_v(s_v: int, kk: int, head_dim: int, v_kmajor: bool = False) -> int:
    if v_kmajor:
        return wg.smem_descriptor(s_v + (kk // 4) * head_dim * 128 + 32 * (kk % 4), 16, 1024)
    return wg.smem_descriptor(s_v + 2048 * kk, BOX_BYTES, 1024)


def _tma_boxes(smem, addr: int, tile: np.ndarray, box_bytes: int) -> None:
    """A tile (rows x cols, cols a multiple of 64) written as boxes of 64 columns, box b at addr + b box_bytes: the
    producer's TMA copies with the 128B swizzle."""
    for b in range(tile.shape[1] // 64):
        wg.tma_write_a(smem, addr + b * box_bytes, tile[:, 64 * b:64 * (b + 1)])


def simulate_operands(head_dim: int = 128, v_kmajor: bool = False, stage: int = 1, seed: int = 0,
                      stages: int = STAGES) -> list[str]:
    """Fill Q and one stage the way TMA would, read every wgmma operand back through the kernel's descriptors, and
    list each one that comes out wrong (empty: the descriptor arithmetic matches the swizzled layout, under the PTX
    canonical-layout model that lab 4.3's wgmma.py implements and its GPU tests confirmed)."""
    rng = np.random.default_rng(seed)
    if not 0 <= stage < stages:
        raise ValueError(f"stage: expected 0 .. {stages - 1}, got {stage}")
    smem = np.zeros(smem_bytes(head_dim, stages) // 2, np.int64)
    q = rng.integers(0, 1 << 15, (BLOCK_M, head_dim))
    k = rng.integers(0, 1 << 15, (BLOCK_N, head_dim))
    v = rng.integers(0, 1 << 15, (BLOCK_N, head_dim))
    lay = layout(head_dim, stage, stages=stages)
    _tma_boxes(smem, lay["Q"], q, BOX_BYTES)
    _tma_boxes(smem, lay["K"], k, BOX_BYTES)
    if v_kmajor:
        _tma_boxes(smem, lay["V"], v.T, head_dim * 128)       # V^T: boxes {64 keys, head_dim rows}
    else:
        _tma_boxes(smem, lay["V"], v, BOX_BYTES)
    bad = []
    for kk in range(head_dim // 16):
        for cw in range(CONSUMERS):
            got = wg.wgmma_read_kmajor(smem, desc_q(lay["Q"], cw, kk), rows=64)
            if not np.array_equal(got, q[64 * cw:64 * (cw + 1), 16 * kk:16 * (kk + 1)]):
                bad.append(f"Q consumer {cw} d-slice {kk}")
        got = wg.wgmma_read_kmajor(smem, desc_k(lay["K"], kk), rows=BLOCK_N)      # B^T = K[keys, d-slice]
        if not np.array_equal(got, k[:, 16 * kk:16 * (kk + 1)]):
            bad.append(f"K d-slice {kk}")
    for kk in range(BLOCK_N // 16):
        d = desc_v(lay["V"], kk, head_dim, v_kmajor)
        got = wg.wgmma_read_kmajor(smem, d, rows=head_dim).T if v_kmajor else \
            wg.wgmma_read_mnmajor(smem, d, n=head_dim)
        if not np.array_equal(got, v[16 * kk:16 * (kk + 1), :]):
            bad.append(f"V key-slice {kk}")
    return bad


def accumulator_owner(n: int):
    """(row, col) of every accumulator register of wgmma m64nNk16 (fp32): arrays [thread 0..127, register 0..N/2-1].
    Warp w = thread / 32, lane l: rows 16w + l/4 (+8 for registers 4j+2, 4j+3), columns 8j + 2(l%4) + {0, 1}."""
    t = np.arange(128)[:, None]
    r = np.arange(n // 2)[None, :]
    w, lane = t // 32, t % 32
    j, e = r // 4, r % 4
    row = 16 * w + lane // 4 + 8 * (e // 2)
    col = 8 * j + 2 * (lane % 4) + (e % 2)
    return row + 0 * col, col + 0 * row


def a_fragment_owner():
    """(row, col) of the 8 16-bit A elements (4 registers, low half first) each thread holds for wgmma m64nNk16 with
    A from registers: per warp the mma.m16n8k16 A fragment: a0 (l/4, 2(l%4)+{0,1}), a1 (l/4+8, ..), a2 (l/4,
    8+2(l%4)+{0,1}), a3 (l/4+8, 8+..)."""
    t = np.arange(128)[:, None]
    x = np.arange(8)[None, :]
    w, lane = t // 32, t % 32
    reg, half = x // 2, x % 2
    row = 16 * w + lane // 4 + 8 * (reg % 2)
    col = 8 * (reg // 2) + 2 * (lane % 4) + half
    return row + 0 * col, col + 0 * row


def simulate_p_fragment() -> bool:
    """The kernel packs S accumulator registers 8kk .. 8kk+7 into the A registers of key slice kk. True when every
    element then sits where the A fragment wants element (row, 16kk + col)."""
    srow, scol = accumulator_owner(BLOCK_N)
    arow, acol = a_fragment_owner()
    for kk in range(BLOCK_N // 16):
        regs = slice(8 * kk, 8 * kk + 8)
        if not (np.array_equal(srow[:, regs], arow) and np.array_equal(scol[:, regs], acol + 16 * kk)):
            return False
    return True


# ---------------------------------------------------------------------------------------------------------------------
# TMA's box copy, in NumPy (the 4-D maps of hopper.map_geometry)
# ---------------------------------------------------------------------------------------------------------------------
def model_box(base: np.ndarray, offset: int, dims, strides_elems, box, coords) -> np.ndarray:
    """What TMA copies for one box, in NumPy: the elements of a flat buffer `base` at `offset` + sum(coord_i
    stride_i) over the box, dims innermost first, zero where a coordinate falls outside its dim; returned with the
    outermost box dim first (the order the rows land in shared memory)."""
    idx = np.zeros((), np.int64)
    ok = np.ones((), bool)
    for i, (n, st, bx, c) in enumerate(zip(dims, (1,) + tuple(strides_elems), box, coords)):
        r = c + np.arange(bx)
        shape = [1] * len(dims)
        shape[len(dims) - 1 - i] = bx
        idx = idx + (np.minimum(r, n - 1) * st).reshape(shape)
        ok = ok & (r < n).reshape(shape)
    out = np.where(ok, base[offset + idx], 0)
    return out.reshape([x for x in reversed(box)])
