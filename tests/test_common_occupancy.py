"""The occupancy calculator (common/occupancy.py): NVIDIA's worked examples, each rule on its own, and the answers a
real GPU's driver gave (tests/data/occupancy_sm_XX.json, recorded with lab05's --record-fixture)."""
import dataclasses
import glob
import json
import os

import pytest

from common import device
from common import occupancy as oc
from common.device import KiB

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
FIXTURE_SM90 = os.path.join(DATA, "occupancy_sm_90.json")
RECORD_HINT = ("record it on a GPU: python -m phase1_architecture.lab05_occupancy --record-fixture "
               "tests/data/occupancy_sm_90.json")
ARCHS = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90")


def volta() -> device.Arch:
    """Compute capability 7.0 (the Best Practices Guide's example device): the CUDA programming guide's limits."""
    return dataclasses.replace(device.arch_info("sm_80"), arch="sm_70", family="Volta", example="",
                               max_threads_per_sm=2048, max_blocks_per_sm=32, smem_per_sm=96 * KiB,
                               smem_per_block_optin=96 * KiB, smem_reserved_per_block=0, smem_alloc_unit=256,
                               smem_carveouts_kib=(0, 8, 16, 32, 64, 96))


# ---------------------------------------------------------------------------------------------------------------------
# Worked examples from NVIDIA's documentation
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", [volta(), "sm_80", "sm_90"], ids=["cc7.0", "sm_80", "sm_90"])
def test_best_practices_guide_register_granularity_example(arch):
    """CUDA C++ Best Practices Guide, 'Calculating Occupancy' (compute capability 7.0): 37 registers per thread give
    75% occupancy (12 blocks) with 128-thread blocks, but 63% (4 blocks) with 320-thread blocks. sm_80 and sm_90
    have the same register file and thread limits, so the same answers."""
    o128 = oc.occupancy(arch, 128, 37)
    o320 = oc.occupancy(arch, 320, 37)
    assert (o128.blocks_per_sm, o128.occupancy, o128.limiter) == (12, 0.75, "registers")
    assert (o320.blocks_per_sm, o320.active_warps, o320.limiter) == (4, 40, "registers")
    assert o320.occupancy == 0.625                       # the guide prints it rounded: 63%
    # "for a multiprocessor to have 100% occupancy, each thread can use at most 32 registers"
    assert oc.occupancy(arch, 256, 32).occupancy == 1.0
    assert oc.occupancy(arch, 256, 33).occupancy < 1.0


@pytest.mark.parametrize("arch", ["sm_80", "sm_86", "sm_89", "sm_90"])
def test_programming_guide_one_more_register_example(arch):
    """CUDA C++ Programming Guide, 'Multiprocessor Level' (stated for compute capability 6.x, same 64K register file
    as every later architecture): 512-thread blocks at 64 registers fit two blocks (32 warps), since 2 x 512 x 64 is
    exactly the register file; at 65 registers only one (16 warps)."""
    o64 = oc.occupancy(arch, 512, 64)
    o65 = oc.occupancy(arch, 512, 65)
    assert (o64.blocks_per_sm, o64.active_warps) == (2, 32)
    assert (o65.blocks_per_sm, o65.active_warps, o65.limiter) == (1, 16, "registers")


# ---------------------------------------------------------------------------------------------------------------------
# The rules, one at a time
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch,blocks", [("sm_75", 16), ("sm_80", 32), ("sm_86", 16), ("sm_89", 24), ("sm_90", 32)])
def test_resident_block_limit(arch, blocks):
    o = oc.occupancy(arch, 32, 16)
    assert o.blocks_per_sm == blocks and o.limiter == "blocks"
    assert o.occupancy == blocks / device.arch_info(arch).max_warps_per_sm


@pytest.mark.parametrize("arch,occ", [("sm_75", 1.0), ("sm_80", 1.0), ("sm_86", 2 / 3), ("sm_89", 2 / 3),
                                      ("sm_90", 1.0)])
def test_warp_limit_with_1024_thread_blocks(arch, occ):
    """1536-thread SMs (sm_86, sm_89) hold one 1024-thread block: a third of their warp slots stay empty."""
    o = oc.occupancy(arch, 1024, 16)
    assert o.blocks_per_sm == (2 if arch in ("sm_80", "sm_90") else 1)
    assert o.occupancy == pytest.approx(occ) and "warps" in o.limiters


def test_partial_warps_cost_whole_warps():
    a = oc.occupancy("sm_90", 33, 16)     # 2 warps per block
    assert a.warps_per_block == 2 and a.limits["warps"] == 32


def test_registers_are_allocated_per_warp_in_256_register_units():
    # 40 registers x 32 = 1280 (a multiple of 256); 41 -> 1312 -> 1536
    assert oc.occupancy("sm_90", 128, 40).regs_per_warp == 1280
    assert oc.occupancy("sm_90", 128, 41).regs_per_warp == 1536
    # per sub-partition: 16384 // 1280 = 12 warps, // 1536 = 10 warps; x4 sub-partitions, // 4 warps per block
    assert oc.occupancy("sm_90", 128, 40).limits["registers"] == 12
    assert oc.occupancy("sm_90", 128, 41).limits["registers"] == 10


def test_registers_per_sub_partition_not_per_sm():
    """A warp's registers come from one of the SM's four sub-partitions (16K registers each). At 200 registers a warp
    holds 6400: the SM's 64K would hold 10 such warps, but each sub-partition holds only 2, so the SM holds 8."""
    o = oc.occupancy("sm_90", 32, 200)
    assert o.regs_per_warp == 6400 and o.limits["registers"] == 8
    o = oc.occupancy("sm_90", 96, 255)                   # 8192 per warp: 2 per sub-partition, 8 per SM, 3-warp blocks
    assert o.regs_per_warp == 8192 and o.limits["registers"] == 2


def test_block_register_limit_rounds_warps_to_sub_partitions():
    """255 x 1024 threads never launches; 255 x 256 threads (8 warps x 8192 = 65536) just does."""
    big = oc.occupancy("sm_90", 1024, 255)
    assert big.blocks_per_sm == 0 and "registers" in big.why_zero
    assert oc.occupancy("sm_90", 256, 255).blocks_per_sm == 1
    # 7 warps x 8192 = 57344 fits the block limit, but the hardware counts 8 warps (a multiple of 4): 65536, still ok
    assert oc.occupancy("sm_90", 224, 255).blocks_per_sm == 1
    # 128 registers: 4096/warp; 20 warps (640 threads) -> 81920 > 65536
    assert oc.occupancy("sm_90", 640, 128).blocks_per_sm == 0


def test_shared_memory_reserved_kib_per_block_from_sm80():
    """Two blocks of 114 KiB fit 228 KiB exactly, but each also holds the runtime's 1 KiB: only one fits."""
    half = 114 * KiB
    o = oc.occupancy("sm_90", 128, 32, 0, half, max_dynamic_smem=200 * KiB)
    assert o.blocks_per_sm == 1 and o.limiter == "shared memory"
    assert o.smem_per_block == half + 1024 and any("reserves" in n for n in o.notes)
    assert oc.occupancy("sm_90", 128, 32, 0, half - 1024, max_dynamic_smem=200 * KiB).blocks_per_sm == 2
    # Turing reserves nothing and allocates in 256-byte units
    t = oc.occupancy("sm_75", 128, 32, 0, 32 * KiB)
    assert t.smem_per_block == 32 * KiB and t.blocks_per_sm == 2
    assert oc.occupancy("sm_75", 128, 32, 0, 100).smem_per_block == 256


def test_shared_memory_allocation_unit():
    o = oc.occupancy("sm_90", 64, 16, 0, 1)
    assert o.smem_per_block == 1024 + 128         # 1 B + 1 KiB reserved -> rounded up to 128
    assert oc.occupancy("sm_80", 64, 16, 0, 129).smem_per_block == 1024 + 256


def test_dynamic_shared_memory_above_48k_needs_opt_in():
    no = oc.occupancy("sm_90", 128, 32, 0, 60_000)
    assert no.blocks_per_sm == 0 and "raise it first" in no.why_zero
    yes = oc.occupancy("sm_90", 128, 32, 0, 60_000, max_dynamic_smem=60_000)
    assert yes.blocks_per_sm == 3           # 61056 B per block: 233472 // 61056 = 3
    assert oc.occupancy("sm_90", 128, 32, 0, 227 * KiB, max_dynamic_smem=227 * KiB).blocks_per_sm == 1
    with pytest.raises(ValueError, match="max_dynamic_smem"):
        oc.occupancy("sm_90", 128, 32, 0, 0, max_dynamic_smem=228 * KiB)
    with pytest.raises(ValueError, match="smem_static"):
        oc.occupancy("sm_90", 128, 32, 49 * KiB)


def test_static_shared_memory_counts_against_the_dynamic_limit():
    # 16 KiB static: the default dynamic limit is 32 KiB
    assert oc.occupancy("sm_90", 128, 32, 16 * KiB, 32 * KiB).blocks_per_sm > 0
    assert oc.occupancy("sm_90", 128, 32, 16 * KiB, 32 * KiB + 1).blocks_per_sm == 0


def test_carveout_preference():
    a = device.arch_info("sm_90")
    assert oc.carveout_bytes(a) == 228 * KiB
    assert oc.carveout_bytes(a, 50) == 132 * KiB        # 114 KiB rounds up to the next configuration
    assert oc.carveout_bytes(a, 0) == 0
    assert oc.carveout_bytes(a, 0, needed=10 * KiB) == 16 * KiB
    assert oc.carveout_bytes("sm_75", 0) == 32 * KiB    # Turing: 32 or 64 KiB
    o = oc.occupancy("sm_90", 128, 32, 0, 20 * KiB, carveout_pct=25)   # 57 KiB -> 64 KiB config: 3 blocks of 21 KiB
    assert o.smem_per_sm == 64 * KiB and o.blocks_per_sm == 3


def test_barrier_limit_on_sm90():
    o = oc.occupancy("sm_90", 32, 16, barriers=16)      # 64 barriers per SM // 16
    assert o.limits["barriers"] == 4 and o.blocks_per_sm == 4 and o.limiter == "barriers"
    assert "barriers" not in oc.occupancy("sm_80", 32, 16, barriers=16).limits


def test_invalid_launches():
    assert oc.occupancy("sm_90", 1025, 16).blocks_per_sm == 0
    assert oc.occupancy("sm_90", 64, 256).blocks_per_sm == 0
    with pytest.raises(ValueError, match="threads_per_block"):
        oc.occupancy("sm_90", 0, 16)
    with pytest.raises(ValueError, match="regs_per_thread"):
        oc.occupancy("sm_90", 32, -1)
    with pytest.raises(ValueError, match="arch"):
        oc.occupancy("sm_61", 32, 16)


@pytest.mark.parametrize("arch", ARCHS)
def test_occupancy_never_increases_with_more_registers_or_shared_memory(arch):
    a = device.arch_info(arch)
    prev = 2.0
    for r in range(1, 256):
        o = oc.occupancy(arch, 256, r).occupancy
        assert o <= prev
        prev = o
    prev = 2.0
    for s in range(0, a.smem_per_block_optin, 1000):
        o = oc.occupancy(arch, 128, 32, 0, s, max_dynamic_smem=a.smem_per_block_optin).occupancy
        assert o <= prev
        prev = o


@pytest.mark.parametrize("arch", ARCHS)
def test_dynamic_smem_for_blocks_forces_exactly_that_many(arch):
    a = device.arch_info(arch)
    for k in range(1, a.max_blocks_per_sm + 1):
        dyn = oc.dynamic_smem_for_blocks(arch, k)
        o = oc.occupancy(arch, 32, 16, 0, dyn, max_dynamic_smem=max(dyn, a.smem_per_block_default))
        assert o.limits["shared memory"] == k, (k, dyn)


def test_max_regs_for_blocks():
    assert oc.max_regs_for_blocks("sm_90", 256, 8) == 32
    assert oc.max_regs_for_blocks("sm_90", 256, 4) == 64
    assert oc.max_regs_for_blocks("sm_90", 256, 1) == 255


def test_explain_names_the_limiter():
    text = oc.occupancy("sm_90", 256, 33).explain()
    assert "1280 per warp" in text and "limited by registers" in text and "75.0%" in text


# ---------------------------------------------------------------------------------------------------------------------
# The driver's answers, recorded on real GPUs
# ---------------------------------------------------------------------------------------------------------------------
def _fixtures():
    paths = sorted(set(glob.glob(os.path.join(DATA, "occupancy_sm_*.json"))) | {FIXTURE_SM90})
    return [pytest.param(p, id=os.path.basename(p)) for p in paths]


@pytest.mark.parametrize("path", _fixtures())
def test_calculator_matches_recorded_driver_answers(path):
    if not os.path.exists(path):
        pytest.skip(RECORD_HINT)
    with open(path) as f:
        doc = json.load(f)
    cases = doc["cases"]
    assert len(cases) >= 30, f"{path}: only {len(cases)} recorded cases"
    # the fixture must span the space it claims to test
    assert len({c["threads"] for c in cases}) >= 4 and len({c["regs"] for c in cases}) >= 4
    assert len({c["smem_static"] + c["smem_dynamic"] for c in cases}) >= 4
    assert any(c["blocks"] == 0 for c in cases) and any(c["blocks"] >= 8 for c in cases)
    bad, prop_bad = oc.compare_fixture(doc)
    assert not prop_bad, f"{doc['device']}: the ARCHS table disagrees with the device: {prop_bad}"
    assert not bad, (f"{len(bad)}/{len(cases)} cases differ from the driver on {doc['device']}, e.g. "
                     f"{bad[:3]}")


def test_compare_fixture_reports_a_wrong_answer():
    """The comparison really compares: a fixture built from the calculator agrees, one altered answer does not."""
    cases = [{"threads": t, "regs": r, "smem_static": 0, "smem_dynamic": s, "max_dynamic_smem": 49152,
              "barriers": 1, "blocks": oc.occupancy("sm_90", t, r, 0, s).blocks_per_sm}
             for t in (64, 256, 1024) for r in (32, 64, 128) for s in (0, 20000, 40000)]
    doc = {"arch": "sm_90", "device": "synthetic", "props": {"smem_per_sm": 233472}, "cases": cases}
    assert oc.compare_fixture(doc) == ([], [])
    cases[5] = dict(cases[5], blocks=cases[5]["blocks"] + 1)
    doc["props"]["smem_per_sm"] = 1
    bad, prop_bad = oc.compare_fixture(doc)
    assert len(bad) == 1 and bad[0]["calculator"] == cases[5]["blocks"] - 1 and prop_bad
