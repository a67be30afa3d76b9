"""Lab 4.3, rung 03's shared-memory layout modelled in NumPy on the CPU (wgmma_layout.py over common/hopper.py):
the wgmma descriptor encoding, the 128-byte swizzle, a stage written the way TMA writes it and read back through the
kernel's own descriptors (with mutations that must fail), and the EPI_TMA epilogue's swizzled C buffer (every value
lands once, in the right place, without bank conflicts; a missing swizzle is caught)."""
import numpy as np
import pytest

from phase4_optimization.lab03_tensor_cores import wgmma as wg
from phase4_optimization.lab03_tensor_cores import wgmma_layout


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: descriptor encoding and the swizzled-layout model
# ---------------------------------------------------------------------------------------------------------------------
def test_descriptor_bit_layout():
    d = wg.smem_descriptor(0x1230, 16, 1024)
    assert d & 0x3FFF == 0x123                       # start address >> 4
    assert (d >> 16) & 0x3FFF == 1                   # LBO >> 4
    assert (d >> 32) & 0x3FFF == 64                  # SBO >> 4
    assert (d >> 49) & 7 == 0
    assert d >> 62 == 1                              # 128-byte swizzle
    assert wg.smem_descriptor(0, 0, 0, "none") == 0
    assert wg.smem_descriptor(0, 0, 0, "32B") >> 62 == 3
    assert wg.smem_descriptor(0, 0, 0, "64B") >> 62 == 2


@pytest.mark.parametrize("addr,lbo,sbo", [(0, 16, 1024), (0x30000, 8192, 1024), (65536 + 2048, 8192, 1024)])
def test_descriptor_roundtrip(addr, lbo, sbo):
    d = wg.decode_descriptor(wg.smem_descriptor(addr, lbo, sbo))
    assert (d["addr"], d["lbo"], d["sbo"], d["swizzle"]) == (addr, lbo, sbo, "128B")


@pytest.mark.parametrize("kw", [dict(addr=8, lbo=16, sbo=1024), dict(addr=0, lbo=1 << 18, sbo=16),
                                dict(addr=1 << 18, lbo=16, sbo=16), dict(addr=0, lbo=16, sbo=16, swizzle="16B"),
                                dict(addr=0, lbo=16, sbo=16, base_offset=8)])
def test_descriptor_rejects_bad_fields(kw):
    with pytest.raises(ValueError):
        wg.smem_descriptor(**kw)


def test_swizzle_permutes_chunks_within_each_row():
    addr = np.arange(0, 4096, 2)
    s = wg.swizzle_128b(addr)
    assert sorted(s.tolist()) == addr.tolist()              # a permutation
    assert np.array_equal(s // 128, addr // 128)             # stays in its 128-byte row
    assert np.array_equal(s[:64], addr[:64])                 # row 0 of each 8-row group is unswizzled
    assert wg.swizzle_128b(128 * 3 + 16 * 2) == 128 * 3 + 16 * (2 ^ 3)


def test_stage_read_back_through_the_kernels_descriptors():
    assert wg.simulate_operands(stage=0) == []
    assert wg.simulate_operands(stage=wg.STAGES - 1, seed=3) == []
    assert wg.simulate_operands(stage=2, b_kmajor=True) == []


@pytest.mark.parametrize("mutation", ["swap_lbo_sbo_b", "k_step_16_bytes", "b_k_step_one_row", "no_consumer_offset"])
def test_layout_model_catches_descriptor_bugs(monkeypatch, mutation):
    """The model is not vacuous: each plausible descriptor mistake makes some operand come out wrong."""
    def bad(stage, consumer, kk, base=0, b_kmajor=False):
        lay = wg.stage_layout(stage, base)
        a_off = consumer * 64 * 128 + (16 if mutation == "k_step_16_bytes" else 32) * kk
        if mutation == "no_consumer_offset":
            a_off = 32 * kk
        b_off = (128 if mutation == "b_k_step_one_row" else 2048) * kk
        lbo, sbo = (1024, wg.B_BOX_BYTES) if mutation == "swap_lbo_sbo_b" else (wg.B_BOX_BYTES, 1024)
        return (wg.smem_descriptor(lay["A"] + a_off, 16, 1024), wg.smem_descriptor(lay["B"] + b_off, lbo, sbo))

    monkeypatch.setattr(wgmma_layout, "operand_descriptors", bad)
    assert wg.simulate_operands() != []


def test_descriptor_table_is_consistent():
    rows = wg.descriptor_table()
    assert len(rows) == 2 * wg.BK // 16
    a = [r for r in rows if r["operand"].startswith("A")]
    assert [r["start"] for r in a] == [0, 32, 64, 96]
    b = [r for r in rows if r["operand"].startswith("B")]
    assert all(r["LBO"] == 8192 and r["SBO"] == 1024 for r in b)
    assert all(r["start"] % 1024 == 0 for r in b)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the EPI_TMA epilogue's shared C buffer, modelled with the kernel's own address arithmetic
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("consumer", [0, 1])
@pytest.mark.parametrize("c_passes", wg.C_PASSES)
def test_epilogue_buffer_every_word_once_in_its_own_half(consumer, c_passes):
    addr = wg.epilogue_smem_addresses(consumer, c_passes)
    assert addr.size == 64 * 256 // 2                        # one 32-bit word (a bf16 pair) per store
    per_pass = 32 // c_passes
    for h in range(c_passes):                                # no word written twice within a pass
        mine = addr[:, :, h * per_pass:(h + 1) * per_pass]
        assert np.unique(mine).size == mine.size
    boxes = 4 // c_passes
    lo, hi = consumer * boxes * wg.C_BOX_BYTES, (consumer + 1) * boxes * wg.C_BOX_BYTES
    assert addr.min() == lo and addr.max() == hi - 4 and np.all(addr % 4 == 0)
    assert wg.C_BYTES == 2 * 4 * wg.C_BOX_BYTES == wg.BM * wg.BN * 2


@pytest.mark.parametrize("c_passes", wg.C_PASSES)
def test_epilogue_buffer_reads_back_as_the_tile(c_passes):
    """Through the TMA store's 128B-swizzle read, row r / column pair p of the 64 x 256 half tile is exactly the
    accumulator pair the m64n256k16 layout puts there (warp r // 16, lane 4 (r % 8) + p % 4, j = p // 4)."""
    src = wg.epilogue_round_trip(0, c_passes)
    assert np.all(src >= 0), "a word of the buffer was read before any thread wrote it"
    warp, lane, j, half = np.unravel_index(src, (4, 32, 32, 2))
    rows, pairs = np.meshgrid(np.arange(64), np.arange(128), indexing="ij")
    assert np.array_equal(warp * 16 + lane // 4 + 8 * half, rows)
    assert np.array_equal(8 * j + 2 * (lane % 4), 2 * pairs)


@pytest.mark.parametrize("c_passes", wg.C_PASSES)
def test_epilogue_stores_are_free_of_bank_conflicts(c_passes):
    addr = wg.epilogue_smem_addresses(0, c_passes)
    banks = (addr // 4) % 32                                 # [warp, lane, j, half]: one instruction = fixed w, j, h
    per_instruction = np.sort(banks.transpose(0, 2, 3, 1), axis=-1)
    assert np.all(per_instruction == np.arange(32)), "some st.shared instruction hits a bank twice"


def test_epilogue_model_catches_a_missing_swizzle(monkeypatch):
    """Not vacuous: the same writes without the XOR leave the read-back wrong (and conflict 8-way)."""
    real = wg.epilogue_smem_addresses

    def unswizzled(consumer=0, c_passes=1):
        a = real(consumer, c_passes)
        lane = np.arange(32)[None, :, None, None]
        j = np.arange(32)[None, None, :, None]
        return a - ((((j % 8) ^ (lane // 4)) - (j % 8)) << 4)

    monkeypatch.setattr(wgmma_layout, "epilogue_smem_addresses", unswizzled)
    src = wg.epilogue_round_trip()
    _, lane, j, _ = np.unravel_index(src, (4, 32, 32, 2))
    _, pairs = np.meshgrid(np.arange(64), np.arange(128), indexing="ij")
    assert not np.array_equal(8 * j + 2 * (lane % 4), 2 * pairs)
