"""Lab 4.3, rung 03 (wgmma + TMA, phase4_optimization/lab03_tensor_cores/wgmma.py and its modules, kernels_wgmma.cu):
what NVRTC makes of the kernel file for sm_90a, no GPU needed - no spills, no serialized wgmma, HGMMA with transposed
B, TMA loads, mbarrier and setmaxnreg instructions in the SASS; the shared memory of each build; the Python mirror of
the file's shape and of the descriptor arithmetic it must agree with; the TMA-store epilogue (stores, fences, named
barriers), the cluster build (multicast, cluster barriers) and every fused-epilogue mask. Rung 03's other tests:
  test_phase4_lab03_tensor_cores_wgmma_layout.py  the shared-memory layout modelled in NumPy (descriptors, C buffer)
  test_phase4_lab03_tensor_cores_wgmma_host.py    gemm_wgmma's host side without a GPU (TMA rules, arguments, maps)
  test_phase4_lab03_tensor_cores_wgmma_builds.py  which build runs (the --tune record, environment, --set, sweep)
  test_phase4_lab03_tensor_cores_wgmma_gpu.py     GPU tier: correctness of every build against float64"""
import os
import re

import numpy as np
import pytest

from common import cuda, device
from phase4_optimization.lab03_tensor_cores import wgmma as wg

CU = open(wg.KERNEL_PATH).read()
EPI_CASES = [wg.EPI_BIAS, wg.EPI_BIAS | wg.EPI_GELU, wg.EPI_BIAS | wg.EPI_RES, wg.EPI_GELU | wg.EPI_RES,
             wg.EPI_BIAS | wg.EPI_GELU | wg.EPI_RES]


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


SHARED = ("mbar_init", "mbar_init_fence", "mbar_arrive_expect_tx", "mbar_arrive", "mbar_try_wait", "wgmma_desc_128b",
          "wgmma_fence", "wgmma_commit", "wgmma_wait", "fence_regs", "setmaxnreg_dec", "setmaxnreg_inc")


def test_the_shared_primitives_come_from_hopper_cuh():
    """kernels_wgmma.cu includes common/cuda/hopper.cuh and keeps no copy of what it defines (the mbarrier, wgmma and
    setmaxnreg wrappers, the tensor map type); its own wait (with this kernel's hang record), its 2-D TMA and cluster
    helpers stay in the file. (Switching the copies for the header changed no SASS instruction of any build.)"""
    header = open(os.path.join(cuda.HEADER_DIR, "hopper.cuh")).read()
    assert '#include "hopper.cuh"' in CU and "struct __align__(64) TmaMap" in header
    for name in SHARED:
        assert re.search(rf"__device__ __forceinline__ \w+ {name}\(", header), f"hopper.cuh lost {name}"
        assert not re.search(rf"__device__ __forceinline__ \w+ {name}\(", CU), f"kernels_wgmma.cu redefines {name}"
        assert re.search(rf"\b{name}(<\d+>)?\(", CU), f"kernels_wgmma.cu no longer uses {name}"
    assert "TmaDesc" not in CU and "const __grid_constant__ TmaMap tma_a" in CU
    assert "__device__ __forceinline__ bool mbar_wait(" in CU and "gemm_wgmma_hang[4]" in CU


def test_python_constants_match_the_kernel_file():
    # the shape has one home, wgmma_kernel.CONFIG; the .cu's static_asserts accept exactly those values
    fixed = dict(re.findall(r"static_assert\((\w+) == (\d+),", CU))
    assert {k: int(v) for k, v in fixed.items()} == {k: wg.CONFIG[k] for k in ("BM", "BN", "BK", "CONSUMERS")}
    assert (wg.BM, wg.BN, wg.BK, wg.STAGES, wg.CONSUMERS) == tuple(wg.CONFIG[k] for k in
                                                                  ("BM", "BN", "BK", "STAGES", "CONSUMERS"))
    # the descriptors the Python model checks are the ones the kernel builds
    assert "wgmma_desc_128b(a0 + 32 * kk, 16, 1024)" in CU
    assert "wgmma_desc_128b(b0 + 2048 * kk, B_BOX_BYTES, 1024)" in CU
    assert "cw * (64 * 128)" in CU
    assert '"%128, %129, p, 1, 1, 0, " TNSP_B' in CU      # scale-a, scale-b, tnsp-a = 0 (K-major A), tnsp-b
    assert '#define TNSP_B "1"' in CU and '#define TNSP_B "0"' in CU
    assert "wgmma_desc_128b(b0 + 32 * kk, 16, 1024)" in CU             # the B_KMAJOR fallback
    # EPI_TMA: its stage count, C boxes and the st.shared address the NumPy model mirrors
    assert wg.defines(tma_store=True)["STAGES"] == wg.EPI_STAGES and wg.defines()["STAGES"] == wg.CONFIG["STAGES"]
    assert wg.stages(True, 1) == wg.EPI_STAGES and wg.stages(True, 2) == wg.stages() == wg.STAGES
    assert "#define C_BOX_BYTES (64 * 64 * 2)" in CU and wg.C_BOX_BYTES == 64 * 64 * 2
    assert "#define C_BOXES (4 / C_PASSES)" in CU
    assert "cbuf + (jj / 8) * C_BOX_BYTES + ((((u32)j % 8) ^ swz) << 4) + 4 * (lane % 4)" in CU
    assert "const int j = h * (32 / C_PASSES) + jj;" in CU
    assert "const u32 cbuf = sC + cw * (C_BOXES * C_BOX_BYTES);" in CU and "r0 = warp * 16 + lane / 4" in CU


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


def test_cluster_kernel_compiles_with_multicast_and_cluster_barriers():
    rep = wg.compile_report("bfloat16", cluster=2)
    k = rep.kernels[wg.KERNEL]
    assert k.spills == 0, f"{k.spills} B spilled"
    sass = k.sass
    if not sass:
        pytest.skip("cuobjdump not found: no SASS to read")
    assert any("UTMALDG.2D.MULTICAST" in s for s in sass), "no multicast TMA load in the SASS"
    assert any("UCGABAR" in s for s in sass), "no cluster barrier in the SASS"


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
        wg.compile_report(dtype, epi_ops=32)
    for ops in (wg.EPI_DGELU | wg.EPI_RES, wg.EPI_DGELU | wg.EPI_BIAS):
        with pytest.raises(ValueError, match="EPI_DGELU"):
            wg.compile_report(dtype, epi_ops=ops)


BWD_CASES = [wg.EPI_DGELU, wg.EPI_COLSUM, wg.EPI_DGELU | wg.EPI_COLSUM, wg.EPI_BIAS | wg.EPI_COLSUM]


@pytest.mark.parametrize("ops", BWD_CASES)
@pytest.mark.parametrize("dtype", wg.DTYPES)
def test_backward_epilogue_builds_compile(dtype, ops):
    """The backward's masks (lab 4.7's proj dX stage: * gelu'(z), the column sums) compile for both epilogues: one
    MUFU.EX2 and one MUFU.RCP an element for the derivative, the sums' reduce-scatter 4 + 2 + 1 shuffles for each of
    8 column groups, and only where asked for; no serialized wgmma (ptxas's C75xx warnings). With the TMA-store
    epilogue the derivative's build is SRC_TMA: z's boxes come by TMA (UTMALDG beyond the operands'), are read from
    shared memory (64 LDS a thread's tile), and nothing spills (the global-z path stays there for a z with no legal
    tensor map). The register-store build's spills are read, not
    limited: with both bits the 128 accumulators, a group's z loads and sums outgrow the 168 registers (printed)."""
    for tma_store in (False, True):
        rep = wg.compile_report(dtype, tma_store=tma_store, epi_ops=ops)
        k = rep.kernels[wg.KERNEL]
        assert k.registers > 0 and not re.search(r"C75\d\d|serializ|injected", rep.log), rep.log
        z_tma = wg.source_by_tma(tma_store, 1, ops)
        assert z_tma == (tma_store and bool(ops & wg.EPI_DGELU))
        if not ops & wg.EPI_DGELU or not ops & wg.EPI_COLSUM or z_tma:
            assert k.spills == 0 and k.stack_bytes == 0, (dtype, ops, tma_store, k.spill_stores, k.stack_bytes)
        else:
            print(f"{dtype} mask {ops} tma_store {tma_store}: {k.spill_stores} B spilled, {k.stack_bytes} B stack")
        if not k.sass:
            continue
        count = (lambda op: sum(op in line for line in k.sass))
        assert (count("MUFU.EX2") >= 128) == bool(ops & wg.EPI_DGELU), count("MUFU.EX2")
        assert (count("MUFU.RCP") >= 128) == bool(ops & wg.EPI_DGELU), count("MUFU.RCP")
        # SRC_TMA: ptxas may compile the sums once for each z path (shared memory; global, where c_tma = 0)
        shfl = count("SHFL.BFLY")
        assert (shfl in (56, 112) if z_tma else shfl == 56) if ops & wg.EPI_COLSUM else shfl == 0, shfl
        if z_tma:
            plain = wg.compile_report(dtype, tma_store=True).kernels[wg.KERNEL].sass
            assert count("UTMALDG") > sum("UTMALDG" in line for line in plain), count("UTMALDG")
            assert sum(1 for line in k.sass if line.split() and line.split()[0].startswith("LDS")) >= 64


@pytest.mark.parametrize("ops", [wg.EPI_RES, wg.EPI_BIAS | wg.EPI_RES, wg.EPI_BIAS | wg.EPI_GELU | wg.EPI_RES])
def test_residual_builds_read_their_source_through_tma(ops):
    """The forward's residual epilogues (lab 4.7's out and proj GEMMs) with the TMA-store epilogue are SRC_TMA builds:
    the residual's boxes by TMA (more UTMALDG than the plain TMA-store build), read back from shared memory (LDS),
    nothing spilled; with C_PASSES = 2 or register stores they read it from global memory (no extra UTMALDG)."""
    plain = wg.compile_report("bfloat16", tma_store=True).kernels[wg.KERNEL]
    for tma_store, c_passes in ((True, 1), (True, 2), (False, 1)):
        k = wg.compile_report("bfloat16", tma_store=tma_store, c_passes=c_passes, epi_ops=ops).kernels[wg.KERNEL]
        src = wg.source_by_tma(tma_store, c_passes, ops)
        assert src == (tma_store and c_passes == 1)
        assert k.spills == 0 and k.stack_bytes == 0, (ops, tma_store, c_passes, k.spill_stores)
        if not k.sass or not plain.sass:
            pytest.skip("no cuobjdump (it ships with the triton wheel)")
        tma = (lambda sass: sum("UTMALDG" in line for line in sass))
        lds = sum(1 for line in k.sass if line.split() and line.split()[0].startswith("LDS"))
        assert (tma(k.sass) > tma(plain.sass)) == src and (lds >= 64) == src, (tma(k.sass), lds)


def test_the_kernel_refuses_a_derivative_with_a_residual_or_a_gelu():
    """EPI_DGELU reads z through the residual's pointer: the .cu stops a build that asks for both (or for the GELU
    and its derivative in one epilogue), whatever the Python side lets through."""
    for ops in (wg.EPI_DGELU | wg.EPI_RES, wg.EPI_DGELU | wg.EPI_GELU, wg.EPI_DGELU | wg.EPI_BIAS):
        with pytest.raises(cuda.CompileError, match="GELU derivative"):
            cuda.compile_report(wg.KERNEL_PATH, wg.ARCH, defines=wg.defines(epi_ops=ops))


def test_the_sanitizer_sweep_runs_the_fused_epilogues_in_both_builds():
    """tools/sanitize.py plans lab 4.3's sanitize_extras: the backward's and the forward's fused epilogue, each in the
    register-store build and in the one that reads its source by TMA (SRC_TMA); off a Hopper GPU each says why not."""
    from tools import sanitize

    qual = "phase4_optimization.lab03_tensor_cores"
    names = [e.name for e in sanitize.extras(qual)]
    assert names == [f"cuda wgmma {k} epilogue, {b}" for k in ("backward", "forward")
                     for b in ("registers", "source by TMA")]
    planned = [it["variant"] for it in sanitize.plan(only=["lab03_tensor_cores"]) if it.get("extra")]
    assert planned == names
    from phase4_optimization.lab03_tensor_cores import sanitize_extras as se

    assert se.BUILDS["source by TMA"] == {"tma_store": True, "c_passes": 1}
    assert wg.source_by_tma(True, 1, wg.EPI_DGELU | wg.EPI_COLSUM) and wg.source_by_tma(True, 1, wg.epi_mask(
        True, "gelu_tanh", True))
    for e in sanitize.extras(qual):
        ok, why = e.available()
        assert ok == (not wg.unavailable_reason()) and (ok or why)


def test_hang_report_names_the_barrier_kind(monkeypatch):
    """The hang record's word is (bar << 3) | (what << 1) | parity, what 0 full, 1 empty, 2 the source barrier
    (SRC_TMA): hang_report names each (the device words stand in as a NumPy array: no GPU needed)."""
    from common import hopper
    from phase4_optimization.lab03_tensor_cores import wgmma_launch as wl

    class Words(np.ndarray):
        def get(self):
            return np.asarray(self)

    words = {}
    monkeypatch.setattr(wl, "_loaded", lambda *key: (key, None))
    monkeypatch.setattr(hopper, "device_words", lambda mod, symbol, count: words[mod])
    for what, kind in ((0, "full"), (1, "empty"), (2, "source")):
        key = ("bfloat16", False, 1, True, 1, wg.EPI_DGELU)
        words[key] = np.array([1, 5, 200, (0x3c8 << 3) | (what << 1) | 1], np.uint32).view(Words)
        monkeypatch.setattr(wl, "_LOADED", {key})
        text = wl.hang_report()
        assert f"block 5 thread 200 timed out on the {kind} " in text and "at shared 0x3c8, parity 1" in text, text
        assert not words[key].any() and wl.hang_report() is None
