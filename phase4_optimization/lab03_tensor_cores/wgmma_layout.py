"""Lab 4.3, rung 03: the kernel's shared-memory layout mirrored in NumPy, so the layout logic is checked without a GPU -
the addresses of a ring stage, the wgmma descriptors each consumer builds for each K slice (the .cu's calls of
hopper.cuh's wgmma_desc_128b), a stage filled the way TMA writes it and read back the way wgmma reads it, and the
EPI_TMA epilogue's swizzled C buffer. The generic pieces (the descriptor encoding, the 128-byte swizzle, the
canonical-layout reads) are common/hopper.py's."""
from __future__ import annotations

import numpy as np

from common import hopper
from common.hopper import decode_descriptor, smem_descriptor, swizzle_128b, wgmma_read_kmajor, wgmma_read_mnmajor

from .wgmma_kernel import (A_STAGE_BYTES, B_BOX_BYTES, B_STAGE_BYTES, BK, BM, BN, C_BOX_BYTES, CONSUMERS, SMEM_BYTES,
                           STAGES)


def stage_layout(stage: int = 0, base: int = 0) -> dict:
    """Shared-memory byte addresses of one ring stage (base = the 1024-aligned start of the ring)."""
    a = base + stage * A_STAGE_BYTES
    b = base + STAGES * A_STAGE_BYTES + stage * B_STAGE_BYTES
    return {"A": a, "B": b, "B_boxes": [b + j * B_BOX_BYTES for j in range(BN // 64)],
            "bars": base + STAGES * (A_STAGE_BYTES + B_STAGE_BYTES)}


def operand_descriptors(stage: int, consumer: int, kk: int, base: int = 0, b_kmajor: bool = False) -> tuple[int, int]:
    """(desc_a, desc_b) the consumer warpgroup `consumer` passes to its kk-th wgmma (K slice 16kk..16kk+15) of a
    stage, exactly as the kernel computes them (b_kmajor: the -DB_KMAJOR=1 fallback, B^T read like A)."""
    lay = stage_layout(stage, base)
    da = smem_descriptor(lay["A"] + consumer * 64 * 128 + 32 * kk, 16, 1024)
    if b_kmajor:
        db = smem_descriptor(lay["B"] + 32 * kk, 16, 1024)
    else:
        db = smem_descriptor(lay["B"] + 2048 * kk, B_BOX_BYTES, 1024)
    return da, db


# Model of the TMA box {64 K, 128 M} with 128B swizzle: row r of the tile (128 bytes) at addr + 128 r, each element's
# byte address swizzled (common.hopper.tma_write_box). smem holds one uint16 per 2 bytes.
tma_write_a = hopper.tma_write_box


def tma_write_b_box(smem: np.ndarray, addr: int, box: np.ndarray) -> None:
    """Model of a B box {64 N, 64 K}: row k (64 N values, 128 bytes) at addr + 128 k, swizzled."""
    tma_write_a(smem, addr, box)


def simulate_operands(stage: int = 1, seed: int = 0, b_kmajor: bool = False) -> list[str]:
    """Fill one stage the way TMA would (A 128 x 64, B 64 x 256 as 4 boxes), read it back the way wgmma would for
    every consumer and K slice using the kernel's descriptors, and list every operand that comes out wrong
    (empty list = the descriptor arithmetic matches the swizzled layout, under the PTX canonical-layout model)."""
    rng = np.random.default_rng(seed)
    smem = np.zeros(SMEM_BYTES // 2, np.int64)
    a = rng.integers(0, 1 << 15, (BM, BK))
    b = rng.integers(0, 1 << 15, (BK, BN))
    lay = stage_layout(stage)
    tma_write_a(smem, lay["A"], a)
    if b_kmajor:
        tma_write_a(smem, lay["B"], b.T)          # one box {64 K, 256 N} of B^T
    else:
        for j, addr in enumerate(lay["B_boxes"]):
            tma_write_b_box(smem, addr, b[:, 64 * j:64 * (j + 1)])
    bad = []
    for cw in range(CONSUMERS):
        for kk in range(BK // 16):
            da, db = operand_descriptors(stage, cw, kk, b_kmajor=b_kmajor)
            got_a = wgmma_read_kmajor(smem, da)
            if not np.array_equal(got_a, a[64 * cw:64 * (cw + 1), 16 * kk:16 * (kk + 1)]):
                bad.append(f"A consumer {cw} k-slice {kk}")
            got_b = wgmma_read_kmajor(smem, db, rows=BN).T if b_kmajor else wgmma_read_mnmajor(smem, db)
            if not np.array_equal(got_b, b[16 * kk:16 * (kk + 1), :]):
                bad.append(f"B consumer {cw} k-slice {kk}")
    return bad


def epilogue_smem_addresses(consumer: int = 0, c_passes: int = 1) -> np.ndarray:
    """Byte addresses (relative to the C buffers' start) the EPI_TMA epilogue's st.shared.b32 write, exactly as the
    kernel computes them: [warp, lane, j, half] for warp 0..3 of consumer warpgroup `consumer`, lane 0..31, column
    group j 0..31 (pass j // (32 / c_passes); jj = j within its pass), half 0 (rows r0 = 16 warp + lane / 4, values
    d[4j], d[4j+1]) or 1 (row r0 + 8, d[4j+2], d[4j+3])."""
    warp, lane, j, half = np.meshgrid(np.arange(4), np.arange(32), np.arange(32), np.arange(2), indexing="ij")
    boxes = 4 // c_passes
    jj = j % (32 // c_passes)
    r = warp * 16 + lane // 4 + 8 * half
    swz = lane // 4
    return (consumer * boxes * C_BOX_BYTES + (jj // 8) * C_BOX_BYTES + (((j % 8) ^ swz) << 4) + 4 * (lane % 4)
            + r * 128)


def epilogue_round_trip(consumer: int = 0, c_passes: int = 1) -> np.ndarray:
    """What the TMA stores of the EPI_TMA epilogue write to global memory, as a 64 x 256 matrix of indices of the
    accumulator pair (warp, lane, j, half) each 2-column pair came from: in pass h, box jb of the buffer (global
    columns 64 (h boxes + jb)..) is read back through the 128B swizzle (row r of the box at 128 r, 16-byte chunk c
    at c ^ (r % 8)), the same model as tma_write_a's."""
    boxes = 4 // c_passes
    addr = epilogue_smem_addresses(consumer, c_passes) - consumer * boxes * C_BOX_BYTES
    per_pass = 32 // c_passes
    out = np.empty((64, 128), np.int64)                         # 64 rows x 128 column pairs
    rows, pairs = np.meshgrid(np.arange(64), np.arange(128), indexing="ij")
    for h in range(c_passes):
        smem = np.full(boxes * C_BOX_BYTES // 4, -1, np.int64)  # one slot per 32-bit word (a bf16 pair)
        mine = addr[:, :, h * per_pass:(h + 1) * per_pass]     # the stores of pass h
        ids = np.arange(addr.size).reshape(addr.shape)[:, :, h * per_pass:(h + 1) * per_pass]
        smem[mine.ravel() // 4] = ids.ravel()
        cols = slice(h * 128 // c_passes, (h + 1) * 128 // c_passes)
        p = pairs[:, cols] - h * 128 // c_passes
        logical = (p // 32) * C_BOX_BYTES + rows[:, cols] * 128 + (p % 32) * 4      # unswizzled box address
        out[:, cols] = smem[swizzle_128b(logical) // 4]
    return out


def descriptor_table() -> list[dict]:
    """The descriptors of stage 0 as the kernel builds them, decoded (for the lesson and the CPU report)."""
    rows = []
    for kk in range(BK // 16):
        da, db = operand_descriptors(0, 0, kk)
        for name, dsc in (("A (K-major)", da), ("B (N-major, tnspB)", db)):
            d = decode_descriptor(dsc)
            rows.append({"operand": name, "k-slice": kk, "desc": f"0x{dsc:016x}", "start": d["addr"],
                         "LBO": d["lbo"], "SBO": d["sbo"], "swizzle": d["swizzle"]})
    return rows
