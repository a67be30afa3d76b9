"""Lab 4.3, rung 03: the wgmma + TMA GEMM (phase4_optimization/lab03_tensor_cores/wgmma.py, kernels_wgmma.cu).

CPU tier: NVRTC compile for sm_90a (no spills, no serialized wgmma, HGMMA with transposed B, TMA loads, mbarrier and
setmaxnreg instructions in the SASS), the shared-memory descriptor encoding and a NumPy model of the swizzled stage
read back through the kernel's descriptors (with mutations that must fail), TMA rule checks, argument validation,
the debugging aid's probes, and the CLI; the EPI_TMA build (C through shared memory and TMA stores): its compile
report, and a NumPy model of its swizzled C buffer (every value lands once, in the right place, without bank
conflicts). Which build runs (CPU): the --tune record for this GPU (a temporary record, never a tracked file), the
default without one, a malformed record refused naming its field, the precedence of arguments, environment variables
and --set over the record; the answer for a GPU off Hopper (a simulated profile); the --tune sweep times every build and records the fastest correct one (timing and kernels faked).
GPU tier (marked gpu): correctness on awkward shapes against float64 NumPy of the rounded inputs, outputs
poisoned first; the EPI_TMA build on the same shapes and bit for bit against the default build; a recorded build
runs through gemm_wgmma's defaults and matches float64.
"""
import dataclasses
import itertools
import re
from types import SimpleNamespace

import numpy as np
import pytest

from common import arrays, bench, check, config, cuda, device, tuned
from phase4_optimization.lab03_tensor_cores import bench as tcb
from phase4_optimization.lab03_tensor_cores import lab as tc
from phase4_optimization.lab03_tensor_cores import wgmma as wg

CU = open(wg.KERNEL_PATH).read()


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: compile
# ---------------------------------------------------------------------------------------------------------------------
VARIANTS = [("bfloat16", False, False, 1), ("float16", False, False, 1), ("bfloat16", True, False, 1),
            ("bfloat16", False, True, 1), ("float16", True, True, 1), ("bfloat16", False, True, 2)]


@pytest.fixture(scope="module", params=VARIANTS,
                ids=["bf16", "fp16", "bf16-Bkmajor", "bf16-tma-store", "fp16-Bkmajor-tma-store",
                     "bf16-tma-store-2-passes"])
def report(request):
    dtype, kmaj, epi, passes = request.param
    return dtype, kmaj, wg.compile_report(dtype, b_kmajor=kmaj, tma_store=epi, c_passes=passes)


def test_file_claims_sm90a_only():
    assert cuda.claimed_archs(wg.KERNEL_PATH) == ("sm_90a",)
    assert cuda.kernel_names(wg.KERNEL_PATH) == [wg.KERNEL]


def test_compiles_without_spills_or_serialization(report):
    dtype, _, rep = report
    k = rep.kernels[wg.KERNEL]
    assert k.registers > 0, "no register count parsed"
    assert k.spills == 0 and k.stack_bytes == 0, f"{dtype}: spills {k.spill_stores}/{k.spill_loads}, " \
                                                 f"stack {k.stack_bytes}"
    # C7510/C7515/C7517: ptxas serialized the wgmmas or inserted waits -- a silent 2x loss
    assert not re.search(r"C75\d\d|serializ|injected", rep.log), rep.log


def test_sass_has_hgmma_tma_mbarrier_setmaxnreg(report):
    dtype, kmaj, rep = report
    sass = rep.kernels[wg.KERNEL].sass
    if not sass:
        pytest.skip("no cuobjdump (it ships with the triton wheel)")
    hgmma = [s for s in sass if "HGMMA" in s]
    assert len(hgmma) == wg.BK // 16, hgmma                  # one per 16-deep K slice of a stage, unrolled
    assert all("64x256x16" in s for s in hgmma), hgmma
    assert all(("tnspB" in s) != kmaj for s in hgmma), hgmma     # B read N-major in place unless B_KMAJOR
    if dtype == "bfloat16":
        assert all(".BF16" in s for s in hgmma), hgmma
    assert any("UTMALDG.2D" in s for s in sass), "no TMA load (UTMALDG) in the SASS"
    assert any("SYNCS.ARRIVE.TRANS64" in s for s in sass), "no mbarrier arrive (SYNCS.ARRIVE) in the SASS"
    assert any("SYNCS.PHASECHK" in s for s in sass), "no mbarrier wait (SYNCS.PHASECHK) in the SASS"
    assert any("USETMAXREG.DEALLOC" in s for s in sass) and any("USETMAXREG.TRY_ALLOC" in s for s in sass)
    assert not any(s.split()[0].startswith(("LDL", "STL")) for s in sass if s and not s.startswith("@"))


@pytest.mark.parametrize("tma_store,c_passes", [(False, 1), (True, 1), (True, 2)])
def test_shared_memory_fits_one_block_per_sm(tma_store, c_passes):
    h = device.arch_info("sm_90")
    smem = wg.smem_bytes(tma_store, c_passes)
    assert smem <= h.smem_per_block_optin
    assert smem + h.smem_reserved_per_block > h.smem_per_sm // 2   # so exactly one block per SM
    # the C buffer does not fit next to 4 stages: that is why EPI_TMA runs 3
    assert (wg.smem_bytes(True) - wg.EPI_STAGES * (wg.A_STAGE_BYTES + wg.B_STAGE_BYTES)
            + wg.STAGES * (wg.A_STAGE_BYTES + wg.B_STAGE_BYTES)) > h.smem_per_block_optin


def test_python_constants_match_the_kernel_file():
    defs = dict(re.findall(r"^#define (\w+) (\d+)\b", CU, re.M))
    assert int(defs["BM"]) == wg.BM and int(defs["BN"]) == wg.BN and int(defs["BK"]) == wg.BK
    assert int(defs["STAGES"]) == wg.STAGES and int(defs["CONSUMERS"]) == wg.CONSUMERS
    # the descriptors the Python model checks are the ones the kernel builds
    assert "smem_desc(a0 + 32 * kk, 16, 1024)" in CU
    assert "smem_desc(b0 + 2048 * kk, B_BOX_BYTES, 1024)" in CU
    assert "cw * (64 * 128)" in CU
    assert '"%128, %129, p, 1, 1, 0, " TNSP_B' in CU      # scale-a, scale-b, tnsp-a = 0 (K-major A), tnsp-b
    assert '#define TNSP_B "1"' in CU and '#define TNSP_B "0"' in CU
    assert "smem_desc(b0 + 32 * kk, 16, 1024)" in CU                   # the B_KMAJOR fallback
    # EPI_TMA: its stage count, C boxes and the st.shared address the NumPy model mirrors
    assert re.search(r"#if EPI_TMA && C_PASSES == 1\n#define STAGES (\d+)", CU).group(1) == str(wg.EPI_STAGES)
    assert wg.stages(True, 1) == wg.EPI_STAGES and wg.stages(True, 2) == wg.stages() == wg.STAGES
    assert "#define C_BOX_BYTES (64 * 64 * 2)" in CU and wg.C_BOX_BYTES == 64 * 64 * 2
    assert "#define C_BOXES (4 / C_PASSES)" in CU
    assert "cbuf + (jj / 8) * C_BOX_BYTES + ((((u32)j % 8) ^ swz) << 4) + 4 * (lane % 4)" in CU
    assert "const int j = h * (32 / C_PASSES) + jj;" in CU
    assert "const u32 cbuf = sC + cw * (C_BOXES * C_BOX_BYTES);" in CU and "r0 = warp * 16 + lane / 4" in CU


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

    monkeypatch.setattr(wg, "operand_descriptors", bad)
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
# CPU tier: TMA rules and argument validation (all before any launch)
# ---------------------------------------------------------------------------------------------------------------------
def test_tma_rules():
    wg.tma_box_check(256, 64, 128, 128, 64, 128)
    with pytest.raises(ValueError, match="16-byte aligned"):
        wg.tma_box_check(8, 64, 128, 128, 64, 128, name="a")
    with pytest.raises(ValueError, match="multiple of 16"):
        wg.tma_box_check(0, 13, 5, 26, 64, 128)
    with pytest.raises(ValueError, match="shorter"):
        wg.tma_box_check(0, 64, 5, 64, 64, 128)
    with pytest.raises(ValueError, match="<= 128 bytes"):
        wg.tma_box_check(0, 256, 5, 512, 128, 64)
    with pytest.raises(ValueError):
        wg.tma_box_check(0, 64, 5, 128, 64, 512)


def test_validation_rejects_bad_arguments():
    torch = pytest.importorskip("torch")
    a = torch.zeros((4, 8), dtype=torch.bfloat16)
    b = torch.zeros((8, 16), dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="a: dtype float32"):
        wg.gemm_wgmma(a.float(), b)
    with pytest.raises(TypeError, match="b:"):
        wg.gemm_wgmma(a, [[1.0]])
    with pytest.raises(ValueError, match="2-D"):
        wg.gemm_wgmma(a[None], b)
    with pytest.raises(ValueError, match="inner dimensions"):
        wg.gemm_wgmma(a, b[:7])
    with pytest.raises(TypeError, match="dtypes must match"):
        wg.gemm_wgmma(a, b.half())
    if not device.has_gpu():
        with pytest.raises(TypeError, match="GPU array"):
            wg.gemm_wgmma(a, b)
    with pytest.raises(TypeError):
        wg.gemm_wgmma(np.zeros((4, 8), np.float16), np.zeros((8, 16), np.float16))


@pytest.mark.parametrize("m,n,k,b_kmajor,tma_store", [(33, 70, 13, False, False), (128, 256, 64, False, False),
                                                       (5, 9, 3, True, False), (300, 256, 520, True, False),
                                                       (300, 264, 520, False, True), (33, 70, 13, False, True),
                                                       (5, 8, 3, True, True)])
def test_host_path_tensor_maps(monkeypatch, tuning_record, m, n, k, b_kmajor, tma_store):
    """The wrapper's host logic without a GPU: padding to TMA-legal strides, the tensor-map dims/strides/boxes and
    the launch arguments (the driver calls are replaced by recorders; CPU torch tensors stand in for GPU ones; no
    tuning record, whatever results/ holds for this machine)."""
    torch = pytest.importorskip("torch")
    maps, launches = [], []

    def fake_encode(buf, dtype, rank, ptr, dims, strides, box, estr, inter, swz, l2, oob):
        maps.append(dict(dtype=dtype, rank=rank, ptr=ptr.value or 0, dims=(dims[0], dims[1]), stride=strides[0],
                         box=(box[0], box[1]), swizzle=swz, oob=oob))
        return 0

    wg._tensor_map.cache_clear()
    monkeypatch.setattr(wg.arrays, "on_device", lambda x: True)
    monkeypatch.setattr(wg, "unavailable_reason", lambda: None)
    monkeypatch.setattr(wg, "_encode_fn", lambda: (fake_encode, ""))
    monkeypatch.setattr(wg, "_launch", lambda *args: launches.append(args))
    a = torch.zeros((m, k), dtype=torch.bfloat16)
    b = torch.zeros((k, n), dtype=torch.bfloat16)
    out = wg.gemm_wgmma(a, b, b_kmajor=b_kmajor, tma_store=tma_store)
    assert tuple(out.shape) == (m, n) and out.dtype == torch.bfloat16
    c_map = tma_store and n % 8 == 0 and out.data_ptr() % 16 == 0    # else EPI_TMA stores from registers
    assert len(maps) == 2 + c_map
    map_b, map_a = maps[:2]                               # B's map is built first, C's (if any) last
    if c_map:
        map_c = maps[2]
        assert map_c["dims"] == (n, m) and map_c["box"] == (64, 64) and map_c["stride"] == 2 * n
        assert map_c["ptr"] == out.data_ptr()
    assert map_a["dims"] == (k, m) and map_a["box"] == (wg.BK, wg.BM)
    assert map_a["stride"] % 16 == 0 and map_a["stride"] >= 2 * k
    assert map_a["ptr"] == (a.data_ptr() if k % 8 == 0 else map_a["ptr"]) and map_a["ptr"] % 16 == 0
    if b_kmajor:
        assert map_b["dims"] == (k, n) and map_b["box"] == (wg.BK, wg.BN)
    else:
        assert map_b["dims"] == (n, k) and map_b["box"] == (64, wg.BK)
    assert map_b["stride"] % 16 == 0
    assert all(mp["dtype"] == wg.TMA_DTYPE["bfloat16"] and mp["swizzle"] == 3 and mp["oob"] == 0 and mp["rank"] == 2
               for mp in maps)
    wg._tensor_map.cache_clear()
    (dt, _, _, out_l, m_l, n_l, k_l, kmaj_l, cluster_l, epi_l, map_c_l, passes_l, ops_l, *_), = launches
    assert ops_l == 0                                     # no fused epilogue asked for
    assert (dt, m_l, n_l, k_l, kmaj_l, out_l is out) == ("bfloat16", m, n, k, b_kmajor, True)
    assert cluster_l == (1 if b_kmajor or -(-m // wg.BM) < 2 else wg.default_cluster())
    assert epi_l is tma_store and (map_c_l is not None) == c_map and passes_l == 1


def test_tma_store_argument_is_checked(monkeypatch):
    with pytest.raises(ValueError, match="tma_store"):
        wg.compile_report(tma_store=1)
    torch = pytest.importorskip("torch")
    a = torch.zeros((4, 8), dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="tma_store"):
        wg.gemm_wgmma(a, a.t().contiguous(), tma_store="yes")
    with pytest.raises(ValueError, match="c_passes"):
        wg.compile_report(tma_store=True, c_passes=4)
    with pytest.raises(ValueError, match="c_passes"):
        wg.gemm_wgmma(a, a.t().contiguous(), tma_store=False, c_passes=2)
    monkeypatch.setenv("WGMMA_TMA_STORE", "2")
    with pytest.raises(ValueError, match="WGMMA_TMA_STORE"):
        wg.default_tma_store()
    monkeypatch.setenv("WGMMA_TMA_STORE", "1")
    assert wg.default_tma_store() is True
    monkeypatch.delenv("WGMMA_TMA_STORE")
    assert wg.default_tma_store() is False


def test_tma_store_variants_are_listed_and_need_sm90():
    by_name = {v.name: v for v in tc.VARIANTS}
    for name in (tc.WGMMA_TMA_STORE_NAME, tc.WGMMA_CLUSTER_TMA_STORE_NAME):
        assert by_name[name].archs == ("sm_90",) and by_name[name].dtypes == tc.DTYPES
        if not device.has_gpu():
            assert by_name[name].available()[0] is False


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

    monkeypatch.setattr(wg, "epilogue_smem_addresses", unswizzled)
    src = wg.epilogue_round_trip()
    _, lane, j, _ = np.unravel_index(src, (4, 32, 32, 2))
    _, pairs = np.meshgrid(np.arange(64), np.arange(128), indexing="ij")
    assert not np.array_equal(8 * j + 2 * (lane % 4), 2 * pairs)


@pytest.mark.parametrize("dtype,cluster,c_passes", [("bfloat16", 1, 1), ("bfloat16", 2, 1), ("float16", 2, 1),
                                                     ("bfloat16", 1, 2), ("float16", 2, 2)])
def test_tma_store_build_compiles_with_stores_fences_and_named_barriers(dtype, cluster, c_passes):
    rep = wg.compile_report(dtype, cluster=cluster, tma_store=True, c_passes=c_passes)
    k = rep.kernels[wg.KERNEL]
    assert k.registers > 0 and k.spills == 0 and k.stack_bytes == 0, (k.spills, k.stack_bytes)
    assert not re.search(r"C75\d\d|serializ|injected", rep.log), rep.log
    sass = k.sass
    if not sass:
        pytest.skip("cuobjdump not found: no SASS to read")
    ops = [s.split()[1] if s.startswith("@") else s.split()[0] for s in sass if s]
    assert any(o.startswith("UTMASTG.2D") for o in ops), "no TMA store (UTMASTG) in the SASS"
    assert any(o.startswith("FENCE.VIEW.ASYNC.S") for o in ops), "no fence.proxy.async.shared::cta in the SASS"
    # two named barriers per consumer warpgroup (+ the __syncthreads of single blocks; clusters sync otherwise)
    assert sum(o.startswith("BAR.SYNC") for o in ops) >= 2 * c_passes + (cluster == 1), "named barriers missing"
    assert any(o.startswith("DEPBAR") for o in ops), "no bulk-group wait (DEPBAR) in the SASS"
    assert sum(o == "STS" for o in ops) == 64, "one 32-bit st.shared per accumulator pair"
    assert any(o.startswith("STG") for o in ops), "the register-store fallback (no legal C map) is missing"
    if cluster > 1:
        assert any("UTMALDG.2D.MULTICAST" in s for s in sass) and any("UCGABAR" in s for s in sass)


@pytest.mark.skipif(device.has_gpu(), reason="checks the no-GPU answer")
def test_unavailable_reason_without_gpu():
    why = wg.unavailable_reason()
    assert why and "GPU" in why


@pytest.mark.parametrize("slug", ["b200", "rtx-5090", "a100-sxm4-80gb", "t4"])
def test_unavailable_reason_for_a_gpu_off_hopper(slug):
    """Asked about a GPU (a simulated profile here: lab 4.3's and lab 4.7's plans), the answer comes from its
    architecture alone: Hopper-only, naming sm_90a and the GPU's own architecture."""
    g = device.profile_info(slug)
    why = wg.unavailable_reason(g)
    assert "Hopper-only" in why and "sm_90a" in why and why.endswith(g.arch) and "\n" not in why
    assert wg.unavailable_reason(device.profile_info("h100-pcie")) is None


def test_grid_is_one_block_per_sm_of_the_gpu_asked_about():
    for slug in ("h100-pcie", "h200"):
        g = device.profile_info(slug)
        assert wg.grid_size(8192, 8192, gpu=g) == g.sms
        blocks, smem, defs = wg.launch_shape(8192, 8192, "bfloat16", False, 2, True, 1, gpu=g)
        assert blocks == g.sms // 2 * 2 and smem == wg.smem_bytes(True, 1)
        assert defs == {"GEMM_F16": 0, "MBAR_TIMEOUT": 1, "B_KMAJOR": 0, "CLUSTER": 2, "EPI_TMA": 1}
    assert wg.launch_cluster(128, 2) == 1 and wg.launch_cluster(129, 2) == 2     # one tile row: no partner


def test_tolerance_scales_with_k_and_dtype():
    t1, t2 = wg.tolerance(64, "bfloat16"), wg.tolerance(8192, "bfloat16")
    assert t2.elem > t1.elem and t2.rel_norm > t1.rel_norm
    assert wg.tolerance(64, "float16").elem < t1.elem
    assert t2.rel_norm < 1e-2


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the debugging aid
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["b_row", "b_col", "a_row", "a_col"])
def test_index_probes_are_exact_and_spell_the_index(kind):
    a, b, exp = wg._index_probe(kind)
    assert a.shape == (wg.BM, wg.BK) and b.shape == (wg.BK, wg.BN)
    assert np.array_equal(exp, np.rint(exp)) and exp.max() <= 256     # every value exact in bf16
    i, n = np.meshgrid(np.arange(wg.BM), np.arange(wg.BN), indexing="ij")
    want = {"b_row": i % 64 + 1, "b_col": n + 1, "a_row": i + 1, "a_col": n % 64 + 1}[kind]
    assert np.array_equal(exp, want)


def test_mismatch_summary_names_a_swizzle_mixup():
    _, _, exp = wg._index_probe("b_col")
    got = exp.copy()
    got[8:16, :] = exp[8:16, np.arange(wg.BN) ^ 8]          # rows 8-15 read 16-byte chunks XOR 1 (8 columns)
    lines = wg._mismatch_summary(got, exp, "t", True)
    assert lines[0] == f"[t] {8 * wg.BN}/{exp.size} wrong"
    assert "8:" in lines[4]
    assert wg._mismatch_summary(exp, exp, "t", True) == [f"[t] 0/{exp.size} wrong"]


def test_compile_report_and_layout_model(capsys):
    rows = tcb.wgmma_compile_report()
    out = capsys.readouterr().out
    assert [(r["dtype"], r["B layout"], r["epilogue"], r["stages"]) for r in rows] == [
        ("bfloat16", "N-major (tnspB)", "registers", 4), ("float16", "N-major (tnspB)", "registers", 4),
        ("bfloat16", "K-major copy", "registers", 4), ("bfloat16", "N-major (tnspB)", "TMA store, 1 pass", 3),
        ("bfloat16", "N-major (tnspB)", "TMA store, 2 passes", 4)]
    assert all(r["UTMASTG"] > 0 for r in rows[3:]) and rows[-1]["smem (dynamic)"] == wg.smem_bytes(True, 2)
    assert all(r["spills"] == 0 and r["arch"] == "sm_90a" for r in rows)
    assert "kernels_wgmma.cu compiled with NVRTC" in out and "every A and B slice correct" in out


@pytest.mark.skipif(device.has_gpu(), reason="the CPU path of the CLI")
def test_cli_quick_on_cpu(capsys):
    """The lab's command shows rung 03's compile report and layout model without a GPU, and skips its checks."""
    assert tc.main(["--quick", "--no-json", "--no-plot", "--wgmma-debug"]) == 0
    out = capsys.readouterr().out
    assert "kernels_wgmma.cu compiled with NVRTC" in out and "every A and B slice correct" in out
    assert "cuda 03 wgmma+TMA" in out and "needs a GPU" in out
    assert "--wgmma-debug: the GPU probes need an sm_90 GPU" in out


def test_cli_rejects_bad_size():
    with pytest.raises(SystemExit):
        tc.main(["--size", "0"])


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: which build runs (the --tune record, the default, the environment, the arguments) and the sweep
# ---------------------------------------------------------------------------------------------------------------------
ENV_VARS = ("WGMMA_CLUSTER", "WGMMA_TMA_STORE", "WGMMA_C_PASSES", "WGMMA_B_KMAJOR")
TWO_SIZES = [{"shape": [4096, 4096, 4096], "build": {"cluster": 2, "tma_store": True, "c_passes": 2}},
             {"shape": [8192, 8192, 8192], "build": {"cluster": 1, "tma_store": True, "c_passes": 1}}]


@pytest.fixture
def no_env(monkeypatch):
    for v in ENV_VARS:
        monkeypatch.delenv(v, raising=False)


@pytest.fixture
def fake_host(monkeypatch):
    """gemm_wgmma's host path without a GPU: the tensor-map encoder and the launch replaced by recorders; returns
    the list of launches as (cluster, tma_store, c_passes)."""
    launches = []
    wg._tensor_map.cache_clear()
    monkeypatch.setattr(wg.arrays, "on_device", lambda x: True)
    monkeypatch.setattr(wg, "unavailable_reason", lambda: None)
    monkeypatch.setattr(wg, "_encode_fn", lambda: ((lambda *args: 0), ""))
    monkeypatch.setattr(wg, "_launch", lambda dt, ma, mb, out, m, n, k, kmaj, cl, epi, mc, cp, *ops:
                        launches.append((cl, epi, cp) + ((ops[0], ops[3]) if ops and ops[0] else ())))
    yield launches
    wg._tensor_map.cache_clear()


def _run_host(m, n, k, **kw):
    torch = pytest.importorskip("torch")
    return wg.gemm_wgmma(torch.zeros((m, k), dtype=torch.bfloat16), torch.zeros((k, n), dtype=torch.bfloat16), **kw)


def test_builds_cover_every_valid_combination():
    """The head to head and --tune time wg.builds(): it must hold every (cluster, tma_store, c_passes) the kernel
    file compiles, once each, and nothing check_build refuses."""
    valid = set()
    for cl, epi, cp in itertools.product(wg.CLUSTERS, (False, True), wg.C_PASSES):
        try:
            valid.add(tuple(wg.check_build({"cluster": cl, "tma_store": epi, "c_passes": cp}).values()))
        except ValueError:
            pass
    got = [tuple(b[k] for k in wg.BUILD_KEYS) for b in wg.builds()]
    assert len(got) == len(set(got)) == 6 and set(got) == valid
    assert [b for b in wg.builds(b_kmajor=True)] == [b for b in wg.builds() if b["cluster"] == 1]
    assert len({wg.build_label(b) for b in wg.builds()}) == 6
    assert wg.DEFAULT_BUILD in wg.builds()


def test_default_build_without_a_record(tuning_record, no_env, fake_host):
    build, source = wg.resolve_build(4096, 4096, 4096)
    assert build == wg.DEFAULT_BUILD and source == tuned.NO_RECORD
    _run_host(300, 264, 520)
    assert fake_host == [(1, False, 1)]


def test_dispatch_from_a_recorded_winner(tuning_record, no_env, fake_host):
    """A record with winners at two sizes: each problem runs the winner tuned nearest its size (in log M N K)."""
    tuning_record(wg.TUNED, TWO_SIZES)
    for shape, want, at in (((4096,) * 3, TWO_SIZES[0], "4096x4096x4096"), ((5000,) * 3, TWO_SIZES[0], "4096"),
                            ((8192,) * 3, TWO_SIZES[1], "8192x8192x8192"), ((300, 264, 520), TWO_SIZES[0], "4096"),
                            ((16384, 8192, 8192), TWO_SIZES[1], "8192")):
        build, source = wg.resolve_build(*shape)
        assert build == want["build"], shape
        assert "recorded build" in source and "tuned on test" in source and f"winner at {at}" in source
    _run_host(300, 264, 520)                       # 3 tile rows: the cluster pair is kept
    _run_host(8192, 8192, 8192 + 8)
    assert fake_host == [(2, True, 2), (1, True, 1)]


def test_arguments_and_environment_override_the_record(tuning_record, no_env, monkeypatch, fake_host):
    """Field by field: argument, then WGMMA_* environment variable, then the record, then the default."""
    tuning_record(wg.TUNED, TWO_SIZES)                 # 4096^3: cluster 2, TMA store, 2 passes
    rb = lambda **kw: wg.resolve_build(4096, 4096, 4096, **kw)     # noqa: E731
    build, source = rb(cluster=1)
    assert build == {"cluster": 1, "tma_store": True, "c_passes": 2} and "cluster from the argument" in source
    assert rb(tma_store=False)[0] == {"cluster": 2, "tma_store": False, "c_passes": 1}
    assert rb(b_kmajor=True)[0] == {"cluster": 1, "tma_store": True, "c_passes": 2}
    monkeypatch.setenv("WGMMA_TMA_STORE", "0")
    build, source = rb()
    assert build == {"cluster": 2, "tma_store": False, "c_passes": 1} and "tma_store from WGMMA_TMA_STORE" in source
    assert rb(tma_store=True)[0] == {"cluster": 2, "tma_store": True, "c_passes": 2}     # the argument wins
    monkeypatch.delenv("WGMMA_TMA_STORE")
    monkeypatch.setenv("WGMMA_C_PASSES", "1")
    monkeypatch.setenv("WGMMA_CLUSTER", "1")
    assert rb()[0] == {"cluster": 1, "tma_store": True, "c_passes": 1}
    assert rb(cluster=2, c_passes=2)[0] == {"cluster": 2, "tma_store": True, "c_passes": 2}
    monkeypatch.setenv("WGMMA_CLUSTER", "3")
    with pytest.raises(ValueError, match="WGMMA_CLUSTER"):
        rb()
    monkeypatch.delenv("WGMMA_CLUSTER")
    monkeypatch.delenv("WGMMA_C_PASSES")
    tuning_record(wg.TUNED, [{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": False, "c_passes": 1}}])
    assert rb(c_passes=2)[0] == {"cluster": 1, "tma_store": True, "c_passes": 2}      # 2 passes ask for TMA store
    with pytest.raises(ValueError, match="c_passes"):
        rb(tma_store=False, c_passes=2)
    with pytest.raises(ValueError, match="b_kmajor"):
        rb(b_kmajor=True, cluster=2)
    _run_host(300, 264, 520, cluster=2, tma_store=True)
    assert fake_host == [(2, True, 1)]


BAD_WINNERS = [
    ({"cluster": 1}, "winner: expected a non-empty list"),
    ([], "winner: expected a non-empty list"),
    ([{"shape": [4096, 4096], "build": wg.DEFAULT_BUILD}], r"winner\[0\]\.shape"),
    ([{"shape": [4096] * 3}], r"winner\[0\]\.build: missing"),
    ([TWO_SIZES[0], {"shape": [8192] * 3, "build": {"cluster": 3, "tma_store": False, "c_passes": 1}}],
     r"winner\[1\]\.build\.cluster"),
    ([{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": "yes", "c_passes": 1}}], r"build\.tma_store"),
    ([{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": False, "c_passes": 2}}], r"build\.c_passes"),
    ([{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": False}}], r"build: missing c_passes"),
    ([{"shape": [4096] * 3, "build": dict(wg.DEFAULT_BUILD, stages=3)}], r"build: unknown stages"),
]


@pytest.mark.parametrize("winner,field", BAD_WINNERS)
def test_malformed_record_is_refused_naming_the_field(tuning_record, no_env, fake_host, winner, field):
    with pytest.raises((ValueError, TypeError), match=field):
        wg.check_winners(winner)
    tuning_record(wg.TUNED, winner)
    with pytest.warns(UserWarning, match=field):
        build, source = wg.resolve_build(4096, 4096, 4096)
    assert build == wg.DEFAULT_BUILD and "unusable" in source and re.search(field, source)
    _run_host(300, 264, 520)
    assert fake_host == [(1, False, 1)]


def test_set_sits_between_the_environment_and_the_record(tuning_record, no_env, monkeypatch):
    """--set WGMMA_CLUSTER / WGMMA_TMA_STORE / WGMMA_C_PASSES (common.config) override the record and are named in
    the source; the environment and the arguments still win over them; a value no build has is refused."""
    tuning_record(wg.TUNED, TWO_SIZES)                 # 4096^3: cluster 2, TMA store, 2 passes
    try:
        config.set_overrides(["WGMMA_CLUSTER=1", "WGMMA_C_PASSES=1"])
        build, source = wg.resolve_build(4096, 4096, 4096)
        assert build == {"cluster": 1, "tma_store": True, "c_passes": 1}
        assert "recorded build" in source and "--set WGMMA_CLUSTER=1" in source and "--set WGMMA_C_PASSES=1" in source
        monkeypatch.setenv("WGMMA_CLUSTER", "2")
        assert wg.resolve_build(4096, 4096, 4096)[0]["cluster"] == 2
        assert wg.resolve_build(4096, 4096, 4096, cluster=1)[0]["cluster"] == 1
        monkeypatch.delenv("WGMMA_CLUSTER")
        config.set_overrides(["WGMMA_TMA_STORE=0"])
        assert wg.resolve_build(4096, 4096, 4096)[0] == {"cluster": 2, "tma_store": False, "c_passes": 1}
        config.set_overrides(["WGMMA_CLUSTER=3"])
        with pytest.raises(ValueError, match="WGMMA_CLUSTER"):
            wg.resolve_build(4096, 4096, 4096)
    finally:
        config.set_overrides([])


def test_unreadable_record_falls_back_to_the_default(tuning_record, no_env):
    tuning_record(wg.TUNED, text="{not json")
    with pytest.warns(UserWarning, match="unreadable"):
        build, source = wg.resolve_build(64, 64, 64)
    assert build == wg.DEFAULT_BUILD and "unreadable" in source


def test_tuned_nearest_picks_by_log_size():
    entries = [{"shape": [4096] * 3, "v": 1}, {"shape": [8192] * 3, "v": 2}]
    assert tuned.nearest(entries, (1, 1, 1))["v"] == 1
    assert tuned.nearest(entries, (5700,) * 3)["v"] == 1          # below 4096 sqrt(2): log-nearer 4096^3
    assert tuned.nearest(entries, (5900,) * 3)["v"] == 2
    assert tuned.nearest(entries, (0, 5, 5))["v"] == 1            # an empty product counts as 1
    with pytest.raises(ValueError, match="entries"):
        tuned.nearest([], (1, 1, 1))


# The fake sweep's timings: the fastest build fails its sampled-row check, the next fails the awkward shapes, so the
# third fastest must win
FAKE_MS = {"cluster 1 tma-store": 0.5, "cluster 2 tma-store": 0.6, "cluster 1 tma-store 2 passes": 0.7,
           "cluster 2 tma-store 2 passes": 0.8, "cluster 2": 0.9, "cluster 1": 1.0, "cublas": 0.65}


@pytest.fixture
def fake_sweep(monkeypatch, tuning_record, no_env):
    """tune_wgmma's GPU calls replaced: inputs on the CPU, gemm_wgmma and the checks recorders, steady rounds that
    run every contender once and hand back FAKE_MS."""
    torch = pytest.importorskip("torch")
    calls, state = [], {}

    def fake_gemm(a, b, out=None, *, b_kmajor=None, cluster=None, tma_store=None, c_passes=None):
        state["last"] = wg.build_label({"cluster": cluster, "tma_store": tma_store, "c_passes": c_passes})
        calls.append(state["last"])
        return out

    def fake_steady(fns, rounds, **kw):
        for f in fns.values():
            f()
        ms = {k: FAKE_MS[k.removeprefix("wgmma ")] for k in fns}
        return {k: bench.Timing(v, v, v, v, 1, "fake") for k, v in ms.items()}, rounds, True

    ok = check.Comparison(True, 0.0, 0.0, 0, 1, "ok")
    bad = check.Comparison(False, 1.0, 1.0, 1, 1, "1 wrong")
    monkeypatch.setattr(tcb.arrays, "device_randn", lambda shape, dtype, seed: torch.zeros(shape, dtype=torch.bfloat16))
    monkeypatch.setattr(tcb.wg, "gemm_wgmma", fake_gemm)
    monkeypatch.setattr(tcb.wg, "verify_sample", lambda *a, **k: bad if state["last"] == "cluster 1 tma-store" else ok)
    monkeypatch.setattr(tcb.bench, "steady", fake_steady)
    monkeypatch.setattr(tcb, "_wgmma_edge_check", lambda build: "33x70x13 bfloat16" if build["cluster"] == 2 else "")
    monkeypatch.setattr(tcb, "_free", lambda: None)
    return calls


def test_tune_sweep_times_every_build_and_keeps_the_fastest_correct(fake_sweep):
    rows, winners = tcb.tune_wgmma(sizes=(256, 512), rounds=1)
    labels = {wg.build_label(b) for b in wg.builds()}
    assert set(fake_sweep) == labels and len(fake_sweep) == 2 * 2 * len(labels)     # checked, then timed, per size
    for n in ("256^3", "512^3"):
        mine = [r for r in rows if r["size"] == n]
        assert {r["build"] for r in mine} == labels
        assert [r["build"] for r in mine if r.get("winner")] == ["cluster 1 tma-store 2 passes"]
        res = {r["build"]: r["result"] for r in mine}
        assert res["cluster 1 tma-store"].startswith("WRONG RESULT")
        assert res["cluster 2 tma-store"].startswith("fast but WRONG on 33x70x13")
    assert wg.check_winners(winners) == [
        {"shape": [n] * 3, "build": {"cluster": 1, "tma_store": True, "c_passes": 2}} for n in (256, 512)]


def test_tune_records_the_winner_where_gemm_wgmma_reads_it(fake_sweep, tmp_path, monkeypatch, capsys):
    """The wgmma half of --tune writes its record beside the mma.sync one; the next call of resolve_build (after
    tuned.forget) runs the winner. The record lands in the temporary root the tuning_record fixture set up."""
    monkeypatch.setattr(tcb.wg, "unavailable_reason", lambda: None)
    # on a GPU machine the real properties with the arch replaced (gpu_slug and the record's metadata read them)
    fake = dataclasses.replace(device.info(), arch="sm_90") if device.has_gpu() else SimpleNamespace(arch="sm_90")
    monkeypatch.setattr(tcb.device, "info", lambda *a: fake)
    out_dir = tmp_path / "results" / device.gpu_slug()
    ctx = SimpleNamespace(args=SimpleNamespace(json=True), out_dir=str(out_dir))
    tables = []
    assert tcb.wgmma_tune_and_record(ctx, tables, sizes=(256, 512), rounds=1) is True
    assert (out_dir / (wg.TUNED + ".json")).exists() and tables and "wgmma" in tables[0][2]
    assert "--tune wgmma winners: 256x256x256: cluster 1 tma-store 2 passes" in capsys.readouterr().out
    build, source = wg.resolve_build(300, 300, 300)
    assert build == {"cluster": 1, "tma_store": True, "c_passes": 2} and "winner at 256x256x256" in source


def test_lab_variants_name_their_builds_and_the_plain_one_follows_the_record(tuning_record, no_env, fake_host):
    """The lab's fixed-build variants measure the same build whatever the record says; 'cuda 03 wgmma+TMA' is the
    build a user gets by default (the record's)."""
    torch = pytest.importorskip("torch")
    tuning_record(wg.TUNED, TWO_SIZES)
    a, b = torch.zeros((300, 520), dtype=torch.bfloat16), torch.zeros((520, 264), dtype=torch.bfloat16)
    for fn in (tc.gemm_wgmma_tma, tc.gemm_wgmma_cluster, tc.gemm_wgmma_tma_store, tc.gemm_wgmma_cluster_tma_store):
        fn(a, b)
    assert fake_host == [(2, True, 2), (2, False, 1), (1, True, 1), (2, True, 1)]


def test_tune_skips_the_wgmma_sweep_off_hopper(monkeypatch, capsys):
    monkeypatch.setattr(tcb.wg, "unavailable_reason", lambda: "this GPU is sm_80")
    monkeypatch.setattr(tcb, "tune_wgmma", lambda *a, **k: pytest.fail("swept off sm_90"))
    tables = []
    assert tcb.wgmma_tune_and_record(SimpleNamespace(args=SimpleNamespace(json=True), out_dir="/nonexistent"),
                                     tables) is True
    assert tables == [] and "wgmma + TMA builds not swept: this GPU is sm_80" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------------------------
# The fused epilogue (-DEPI_OPS): bias, GELU, residual
# ---------------------------------------------------------------------------------------------------------------------
EPI_CASES = [wg.EPI_BIAS, wg.EPI_BIAS | wg.EPI_GELU, wg.EPI_BIAS | wg.EPI_RES, wg.EPI_GELU | wg.EPI_RES,
             wg.EPI_BIAS | wg.EPI_GELU | wg.EPI_RES]


@pytest.mark.parametrize("ops", EPI_CASES)
@pytest.mark.parametrize("dtype", wg.DTYPES)
def test_fused_epilogue_builds_compile(dtype, ops):
    """Every mask compiles for both epilogues; the TMA-store builds (the ones --tune picks on the H200, and lab
    4.7's) keep zero spills; the GELU is one MUFU.EX2 per element pair half, and only where asked for."""
    for tma_store in (False, True):
        rep = wg.compile_report(dtype, tma_store=tma_store, epi_ops=ops)
        k = rep.kernels[wg.KERNEL]
        assert k.registers > 0 and not re.search(r"C75\d\d|serializ|injected", rep.log), rep.log
        if tma_store:
            assert k.spills == 0 and k.stack_bytes == 0, (dtype, ops, k.spill_stores, k.stack_bytes)
        if k.sass:
            ex2 = sum("MUFU.EX2" in line for line in k.sass)
            assert (ex2 >= 64) == bool(ops & wg.EPI_GELU), f"{ex2} MUFU.EX2 for mask {ops}"
    with pytest.raises(ValueError, match="epi_ops"):
        wg.compile_report(dtype, epi_ops=8)


def test_fused_epilogue_arguments_are_checked_by_name(fake_host):
    torch = pytest.importorskip("torch")
    bf = torch.bfloat16
    a, b = torch.zeros((300, 520), dtype=bf), torch.zeros((520, 264), dtype=bf)
    bias, res = torch.zeros(264, dtype=bf), torch.zeros((300, 264), dtype=bf)
    wg.gemm_wgmma(a, b, bias=bias, activation="gelu_tanh")
    wg.gemm_wgmma(a, b, bias=bias, residual=res)
    wg.gemm_wgmma(a, b, residual=torch.zeros((300, 270), dtype=bf)[:, 3:267])        # a row stride of 270
    assert [x[3:] for x in fake_host] == [(wg.EPI_BIAS | wg.EPI_GELU, 0), (wg.EPI_BIAS | wg.EPI_RES, 264),
                                          (wg.EPI_RES, 270)]
    with pytest.raises(ValueError, match="activation"):
        wg.gemm_wgmma(a, b, bias=bias, activation="relu")
    with pytest.raises(ValueError, match="bias: expected 264"):
        wg.gemm_wgmma(a, b, bias=torch.zeros(263, dtype=bf))
    with pytest.raises(TypeError, match="bias"):
        wg.gemm_wgmma(a, b, bias=torch.zeros(264, dtype=torch.float32))
    with pytest.raises(ValueError, match="residual: expected shape"):
        wg.gemm_wgmma(a, b, residual=res.t())
    with pytest.raises(ValueError, match="residual: rows must be contiguous"):
        wg.gemm_wgmma(a, b, residual=torch.zeros((264, 300), dtype=bf).t())
    with pytest.raises(ValueError, match="residual: overlaps out"):
        wg.gemm_wgmma(a, b, residual=res, out=res)
    with pytest.raises(ValueError, match="K = 0"):
        wg.gemm_wgmma(torch.zeros((300, 0), dtype=bf), torch.zeros((0, 264), dtype=bf), bias=bias)
    assert len(fake_host) == 3


def epilogue_reference(a64, b64, bias64=None, gelu=False, res64=None):
    """float64: gelu_tanh(A B + bias) + residual (lab 4.2's order)."""
    c = a64 @ b64
    if bias64 is not None:
        c = c + bias64[None, :]
    if gelu:
        c = 0.5 * c * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (c + 0.044715 * c ** 3)))
    return c if res64 is None else c + res64


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def _needs_hopper():
    why = wg.unavailable_reason()
    if why:
        pytest.skip(why)


GPU_SHAPES = [(1, 1, 1), (127, 129, 136), (128, 256, 64), (1000, 1000, 1000), (8192, 8192, 64),
              (33, 70, 13), (64, 72, 1001), (300, 255, 517), (129, 257, 8), (2, 520, 3)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", GPU_SHAPES, ids=["x".join(map(str, s)) for s in GPU_SHAPES])
def test_gpu_bf16_awkward_shapes(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "bfloat16", seed=m * 7 + n * 3 + k)
    assert c.ok, f"{m}x{n}x{k}: {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(127, 129, 136), (256, 512, 1000), (33, 70, 13)])
def test_gpu_fp16(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "float16", seed=m + n + k)
    assert c.ok, f"{m}x{n}x{k}: {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (127, 129, 136), (300, 255, 517), (128, 256, 64)])
def test_gpu_fallback_b_kmajor(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "bfloat16", seed=m + 2 * n + k, b_kmajor=True)
    assert c.ok, f"{m}x{n}x{k} (B K-major fallback): {c.message} [seed {check.seed()}]"


# odd and even tile rows (a CLUSTER = 2 partner below M), one tile row (falls back to single blocks), K tails, N
# edges that leave some B boxes out (the multicast split of boxes 0, 2 / 1, 3), a product of more tiles than SMs
CLUSTER_SHAPES = [(1, 1, 1), (300, 255, 517), (257, 520, 64), (384, 130, 1001), (1000, 1000, 1000),
                  (4096, 4096, 256),
                  # more units than resident clusters, an odd number of tile rows (a clamped partner in the middle
                  # of the persistent, grouped walk), and a last tile column of 1 or 3 B boxes
                  (4224, 8192, 512), (4224, 4160, 200)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", CLUSTER_SHAPES, ids=["x".join(map(str, s)) for s in CLUSTER_SHAPES])
def test_gpu_cluster_multicast(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "bfloat16", seed=m + 5 * n + k, b_kmajor=False, cluster=2)
    assert c.ok, f"{m}x{n}x{k} (2-block clusters): {c.message} [seed {check.seed()}]"
    c = wg.check_shape(m, n, k, "float16", seed=m + 5 * n + k + 1, b_kmajor=False, cluster=2)
    assert c.ok, f"{m}x{n}x{k} fp16 (2-block clusters): {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
def test_gpu_cluster_matches_single_blocks_bit_for_bit():
    """Each output tile sees the same MMAs in the same order with or without clusters, so the two must agree to the
    bit, launch after launch: a difference is a race (a slot refilled while its partner still reads it)."""
    _needs_hopper()
    import torch

    a, b, _, _ = wg.make_inputs(4224, 4160, 200, "bfloat16", seed=9)
    ref = wg.gemm_wgmma(a, b, b_kmajor=False, cluster=1)
    for i in range(10):
        got = wg.gemm_wgmma(a, b, b_kmajor=False, cluster=2)
        assert torch.equal(got, ref), f"launch {i}: 2-block clusters differ from single blocks"


def test_cluster_argument_is_checked_and_grid_counts_units():
    with pytest.raises(ValueError, match="cluster"):
        wg.compile_report(cluster=3)
    with pytest.raises(ValueError, match="b_kmajor"):
        wg.compile_report(cluster=2, b_kmajor=True)
    # 300 rows = 3 tile rows -> 2 units of 2; 255 columns = 1 tile column: 2 clusters = 4 blocks
    assert wg.grid_size(300, 255, 2, resident=66) == 4
    assert wg.grid_size(8192, 8192, 2, resident=60) == 120          # capped at the resident clusters
    assert wg.grid_size(8192, 8192, 1, resident=132) == 132                 # 64 x 32 tiles, one block per SM
    assert wg.grid_size(300, 255, 1, resident=132) == 3                     # 3 tiles: 3 blocks


def test_cluster_kernel_compiles_with_multicast_and_cluster_barriers():
    rep = wg.compile_report("bfloat16", cluster=2)
    k = rep.kernels[wg.KERNEL]
    assert k.spills == 0, f"{k.spills} B spilled"
    sass = k.sass
    if not sass:
        pytest.skip("cuobjdump not found: no SASS to read")
    assert any("UTMALDG.2D.MULTICAST" in s for s in sass), "no multicast TMA load in the SASS"
    assert any("UCGABAR" in s for s in sass), "no cluster barrier in the SASS"


@pytest.mark.gpu
def test_gpu_cupy_fp16_and_out_argument():
    _needs_hopper()
    import cupy

    rng = check.rng(5)
    a64, b64 = rng.standard_normal((200, 96)), rng.standard_normal((96, 264))
    a, b = cupy.asarray(a64, cupy.float16), cupy.asarray(b64, cupy.float16)
    out = check.poisoned((200, 264), "float16", a)
    res = wg.gemm_wgmma(a, b, out=out)
    assert res is out
    ref = a.get().astype(np.float64) @ b.get().astype(np.float64)
    assert check.compare(out, ref, "float16", wg.tolerance(96, "float16")).ok
    assert wg.hang_report() is None


@pytest.mark.gpu
def test_gpu_degenerate_and_bad_layouts():
    _needs_hopper()
    import torch

    a = torch.ones((5, 0), dtype=torch.bfloat16, device="cuda")
    b = torch.ones((0, 7), dtype=torch.bfloat16, device="cuda")
    assert torch.count_nonzero(wg.gemm_wgmma(a, b)).item() == 0
    assert wg.gemm_wgmma(torch.ones((0, 4), dtype=torch.bfloat16, device="cuda"),
                         torch.ones((4, 3), dtype=torch.bfloat16, device="cuda")).shape == (0, 3)
    x = torch.ones((64, 64), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="contiguous"):
        wg.gemm_wgmma(x.t()[:, :32], x[:32])
    with pytest.raises(ValueError, match="out"):
        wg.gemm_wgmma(x, x, out=torch.empty((64, 63), dtype=torch.bfloat16, device="cuda"))


@pytest.mark.gpu
def test_gpu_misaligned_view_is_copied():
    _needs_hopper()
    import torch

    rng = check.rng(9)
    big = torch.tensor(rng.standard_normal(1 + 100 * 64), dtype=torch.bfloat16, device="cuda")
    a = big[1:].view(100, 64)                       # 2-byte offset: not 16-byte aligned
    b = torch.tensor(rng.standard_normal((64, 80)), dtype=torch.bfloat16, device="cuda")
    out = wg.gemm_wgmma(a, b)
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
    assert check.compare(out, ref, "bfloat16", wg.tolerance(64, "bfloat16")).ok


@pytest.mark.gpu
def test_gpu_debug_probes_pass(capsys):
    _needs_hopper()
    assert wg.debug() == 0, capsys.readouterr().out


# the EPI_TMA build: every tile edge (ragged M halves, N not a multiple of 64, K tails), N % 8 != 0 (no legal C map:
# the build's register stores), one tile, more tiles than SMs, and an odd tile-row count for the cluster partner
TMA_STORE_SHAPES = [(1, 1, 1), (1, 8, 1), (127, 129, 136), (128, 256, 64), (65, 72, 1001), (300, 255, 517),
                    (300, 264, 517), (129, 264, 8), (1000, 1000, 1000), (4224, 4160, 200)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", TMA_STORE_SHAPES, ids=["x".join(map(str, s)) for s in TMA_STORE_SHAPES])
@pytest.mark.parametrize("cluster,c_passes", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_gpu_tma_store_epilogue(m, n, k, cluster, c_passes):
    """Poisoned output inside poisoned guard bands: a TMA store box not clipped at M or N shows up in a band."""
    _needs_hopper()
    a, b, a64, b64 = wg.make_inputs(m, n, k, "bfloat16", seed=m + 3 * n + k)
    out = check.guarded((m, n), "bfloat16", a)
    wg.gemm_wgmma(a, b, out=out, b_kmajor=False, cluster=cluster, tma_store=True, c_passes=c_passes)
    c = check.compare(out, wg.reference(a64, b64), "bfloat16", wg.tolerance(k, "bfloat16"))
    assert c.ok, (f"{m}x{n}x{k} (TMA-store epilogue, cluster {cluster}, {c_passes} pass(es)): {c.message} "
                  f"[seed {check.seed()}]")
    assert check.guard_damage(out) == ""
    assert wg.hang_report() is None


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(127, 136, 136), (33, 70, 13), (256, 512, 1000)])
def test_gpu_tma_store_epilogue_fp16_and_b_kmajor(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "float16", seed=m + n + k + 5, tma_store=True)
    assert c.ok, f"{m}x{n}x{k} fp16 (TMA-store epilogue): {c.message} [seed {check.seed()}]"
    c = wg.check_shape(m, n, k, "bfloat16", seed=m + n + k + 6, b_kmajor=True, tma_store=True)
    assert c.ok, f"{m}x{n}x{k} B K-major (TMA-store epilogue): {c.message} [seed {check.seed()}]"
    c = wg.check_shape(m, n, k, "float16", seed=m + n + k + 7, tma_store=True, c_passes=2)
    assert c.ok, f"{m}x{n}x{k} fp16 (TMA-store epilogue, 2 passes): {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(300, 264, 517), (4224, 4160, 200), (1024, 1024, 4096)])
def test_gpu_tma_store_matches_register_epilogue_bit_for_bit(m, n, k):
    """Same MMAs in the same K order, the same cvt.rn rounding: only the way C leaves differs, so the two builds
    must agree to the bit, launch after launch (a difference is a race on the C buffer)."""
    _needs_hopper()
    import torch

    a, b, _, _ = wg.make_inputs(m, n, k, "bfloat16", seed=11)
    ref = wg.gemm_wgmma(a, b, b_kmajor=False, cluster=1, tma_store=False)
    for i in range(5):
        for cl in (1, 2):
            for passes in wg.C_PASSES:
                got = check.poisoned((m, n), "bfloat16", a)
                wg.gemm_wgmma(a, b, out=got, b_kmajor=False, cluster=cl, tma_store=True, c_passes=passes)
                assert torch.equal(got, ref), f"launch {i}, cluster {cl}, {passes} pass(es): the epilogues differ"
    assert wg.hang_report() is None


@pytest.mark.gpu
def test_gpu_tma_store_misaligned_out_falls_back_to_register_stores():
    """out 2 bytes past a 16-byte boundary has no legal C tensor map: the EPI_TMA build must store from registers,
    leave the element before out untouched, and still be right."""
    _needs_hopper()
    import torch

    m, n, k = 130, 264, 72
    a, b, a64, b64 = wg.make_inputs(m, n, k, "bfloat16", seed=4)
    buf = check.poisoned((1 + m * n,), "bfloat16", a)
    out = buf[1:].view(m, n)
    wg.gemm_wgmma(a, b, out=out, tma_store=True)
    assert check.compare(out, wg.reference(a64, b64), "bfloat16", wg.tolerance(k, "bfloat16")).ok
    assert torch.isnan(buf[:1].float()).all()


@pytest.mark.gpu
@pytest.mark.parametrize("build", wg.builds(), ids=[wg.build_label(b) for b in wg.builds()])
def test_gpu_recorded_build_runs_by_default(tuning_record, no_env, build):
    """A record naming each build in turn (a temporary file): gemm_wgmma with no build arguments loads and runs that
    build, and matches float64 on a ragged shape with several tile rows (poisoned output)."""
    _needs_hopper()
    tuning_record(wg.TUNED, [{"shape": [4096] * 3, "build": build}])
    assert wg.resolve_build(300, 264, 517)[0] == build
    c = wg.check_shape(300, 264, 517, "bfloat16", seed=21)
    assert c.ok, f"recorded {wg.build_label(build)}: {c.message} [seed {check.seed()}]"
    assert ("bfloat16", False, build["cluster"], build["tma_store"], build["c_passes"], 0) in wg._LOADED


@pytest.mark.gpu
@pytest.mark.parametrize("build", [{"cluster": 1, "tma_store": False, "c_passes": 1},
                                   {"cluster": 1, "tma_store": True, "c_passes": 1},
                                   {"cluster": 2, "tma_store": True, "c_passes": 2}],
                         ids=["registers", "tma-store", "cluster2-tma-store-2-passes"])
@pytest.mark.parametrize("ops", EPI_CASES)
@pytest.mark.parametrize("m,n,k,dtype", [(127, 129, 136, "bfloat16"), (33, 70, 13, "float16"),
                                         (300, 255, 517, "bfloat16"), (1000, 1000, 1000, "bfloat16"),
                                         (257, 520, 64, "float16")])
def test_gpu_fused_epilogue_matches_float64(m, n, k, dtype, ops, build):
    """C = gelu(A B + bias) + residual against float64 on awkward shapes, every build family, outputs poisoned
    first; the residual is a view with a row stride of N + 6, starting 2 elements in (4-byte aligned: the 32-bit pair
    loads where N is even) and 3 elements in (the single-element loads)."""
    _needs_hopper()
    a, b, a64, b64 = wg.make_inputs(m, n, k, dtype, seed=m + 3 * n + ops)
    rng = check.rng(ops + m)
    bias = arrays.from_numpy(rng.standard_normal(n), dtype, "cuda") if ops & wg.EPI_BIAS else None
    big = arrays.from_numpy(rng.standard_normal((m, n + 6)), dtype, "cuda") if ops & wg.EPI_RES else None
    if big is not None and arrays.library(big) != arrays.library(a):
        import torch

        big = torch.from_dlpack(big)
    if bias is not None and arrays.library(bias) != arrays.library(a):
        import torch

        bias = torch.from_dlpack(bias)
    for offset in (2, 3):
        res = big[:, offset:offset + n] if big is not None else None
        out = check.poisoned((m, n), dtype, a)
        wg.gemm_wgmma(a, b, out=out, bias=bias, activation="gelu_tanh" if ops & wg.EPI_GELU else None, residual=res,
                      **build)
        ref = epilogue_reference(a64, b64, None if bias is None else arrays.to_numpy(bias).astype(np.float64),
                                 bool(ops & wg.EPI_GELU),
                                 None if res is None else arrays.to_numpy(res).astype(np.float64))
        assert wg.hang_report() is None
        c = check.compare(out, ref, dtype, wg.tolerance(k, dtype))
        assert c.ok, f"{m}x{n}x{k} {dtype} mask {ops} {build} residual offset {offset}: {c.message} " \
                     f"[seed {check.seed()}]"
        if res is None:
            break
