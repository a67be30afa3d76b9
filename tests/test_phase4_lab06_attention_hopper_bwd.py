"""Lab 4.6, the Hopper attention backward's rungs 01-08 (kernels_hopper_bwd.cu, host side hopper_bwd.py).

CPU tier: every build the host uses (D 64 and 128, bf16 and fp16; causal and the GQA group are run-time arguments, so
each build serves both) compiles with NVRTC for sm_90a, spills nothing, keeps its registers within the launch bounds,
and issues the tensor-core instructions each rung should (HMMA, HGMMA) and dQ's reductions (RED), with its wgmma
chains not serialized by ptxas; the shared-memory mirror; the refusals name their argument; the bench and check
commands off an sm_90 GPU. The NumPy models of the rungs' addressing and loops are in
tests/test_phase4_lab06_attention_hopper_bwd_models.py, the GPU tier in test_phase4_lab06_attention_hopper_bwd_gpu.py.
"""
import functools
import re

import numpy as np
import pytest

from common import check, device
from phase4_optimization.lab06_attention import hopper_bwd as hb
from tests.helpers import assert_waits_go_through_WAIT, builds_with

gpu = pytest.mark.gpu
BUILDS = [(d, dt) for d in hb.HEAD_DIMS for dt in hb.DTYPES]
MAX_REGS = 255                      # __launch_bounds__(128, 1): 65536 / 128 capped at the ISA's 255


@pytest.fixture(scope="module", params=BUILDS, ids=[f"d{d}-{dt}" for d, dt in BUILDS])
def build(request):
    d, dt = request.param
    return d, dt, hb.compile_report(d, dt)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: compile
# ---------------------------------------------------------------------------------------------------------------------
def test_builds_compile_without_spills_within_launch_bounds(build):
    d, dt, rep = build
    assert rep.arch == "sm_90a"
    for name in hb.KERNELS.values():
        k = rep.kernels[name]
        assert k.spills == 0 and k.stack_bytes == 0, f"{name} D{d} {dt}: spills {k.spills} B, stack {k.stack_bytes} B"
        assert 0 < k.registers <= MAX_REGS, f"{name} D{d} {dt}: {k.registers} registers"


@pytest.mark.parametrize("rung", hb.RUNGS)
def test_backward_uses_tensor_cores_and_red_for_dq(build, rung):
    """The PTX always: mma.sync m16n8k16 of the build's dtype, ldmatrix (plain and .trans), cp.async, and dQ's
    atomics as reductions (atomicAdd with the result unused). The SASS when cuobjdump is there: HMMA, RED, and the
    count of HMMAs the loops imply (5 GEMMs per step: S^T, dP^T, dV, dK, dQ); rung 02 issues S^T and dP^T as HGMMA
    (m64n64k16, D / 16 each) and the other three as HMMA."""
    d, dt, rep = build
    ptx = rep.ptx
    kind = "f16.f16" if dt == "float16" else "bf16.bf16"
    assert len(re.findall(rf"mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.{kind}\.f32", ptx)) > 0
    assert "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16" in ptx and "cp.async.cg.shared.global" in ptx
    assert re.search(r"red(\.relaxed\.gpu)?\.global\.add\.f32|atom\.global\.add\.f32", ptx)
    if rung == "05":
        assert "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx
        assert "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes" in ptx, "LSE / Delta: a bulk copy"
    if rung == "04":
        assert "cp.async.wait_group 1;" in ptx, "rung 04 waits for all but the next step's copies"
    if rung == "02":
        assert len(re.findall(rf"wgmma\.mma_async\.sync\.aligned\.m64n64k16\.f32\.{kind}", ptx)) > 0
        assert "fence.proxy.async.shared::cta" in ptx, "cp.async's copies must be fenced before wgmma reads them"
    sass = rep.kernels[hb.KERNELS[rung]].sass
    if not sass:
        pytest.skip("no cuobjdump (it ships with the triton wheel): the SASS counts are not checked")
    hmma = sum("HMMA" in s for s in sass)
    hgmma = sum("HGMMA" in s for s in sass)
    # per step: S^T, dP^T 2 x (D/16) x 8 HMMA (rung 01) or 2 x (D/16) HGMMA m64n64k16 (rung 02); dV, dK 2 x 4 x (D/8);
    # dQ (D/8) x 4
    # rung 03: every GEMM an HGMMA - S^T, dP^T 2 x (D/16); dV, dK 2 x 4 (m64n{D}k16 over 64 queries); dQ (D/64) x 4
    st_dp = 2 * (d // 16) * 8 if rung == "01" else 0
    # the warp-specialized rungs hand registers from the producer to the consumers as CONFIG says; the others do not
    want = f"{hb.CONFIG['PRODUCER_REGS']}/{hb.CONFIG['CONSUMER_REGS']}" if rung in hb.WS_RUNGS else ""
    assert hb.setmaxnreg(sass) == want, hb.setmaxnreg(sass)
    if rung == "08":
        assert hb.setmaxnreg(rep.kernels[hb.KERNELS["dq08"]].sass) == want
        # the dK, dV pass: no dQ (its own pass: S, dP 2 x D / 16 and dQ 4 over a key tile's 4 k-slices, no RED)
        assert hmma == 0 and hgmma == 2 * (d // 16) + 2 * 4, (hmma, hgmma)
        dq = rep.kernels[hb.KERNELS["dq08"]].sass
        assert sum("HGMMA" in s for s in dq) == 2 * (d // 16) + 4 and sum("UTMALDG" in s for s in dq) == 6 * (d // 64)
        assert not any(any(tok.startswith(("RED", "ATOM")) for tok in s.split()[:2]) for s in dq)
    elif rung in hb.WS_RUNGS:
        # dQ: at D = 128 a consumer's 64-wide half over the block's 128 keys (8 k-slices), at D = 64 its own 64 keys
        assert hmma == 0 and hgmma == 2 * (d // 16) + 2 * 4 + (8 if d == 128 else 4), (hmma, hgmma)
    elif rung in ("03", "04", "05"):
        assert hmma == 0 and not any(s.startswith("LDSM") for s in sass), "rung 03 has no mma.sync / ldmatrix left"
        assert hgmma == 2 * (d // 16) + 2 * 4 + (d // 64) * 4, hgmma
    else:
        assert hmma == st_dp + 2 * 4 * (d // 8) + (d // 8) * 4, hmma
        assert hgmma == (0 if rung == "01" else 2 * (d // 16)), hgmma
    # rung 05: no thread copies with cp.async; one thread's TMA copies - K, V once and Q, dO of the first step (D / 64
    # boxes each), Q, dO of every next step - and the LSE / Delta bulk copy of the first and of every next step
    # rung 06: the producer's - K, V of both consumers (4 D / 64), Q, dO per step (2 D / 64), LSE / Delta (1)
    copies = sum(any(tok.startswith("LDGSTS") for tok in s.split()[:2]) for s in sass)
    assert (copies == 0) == (rung in hb.TMA_RUNGS), copies
    if rung in hb.TMA_RUNGS:
        assert sum("UTMALDG" in s for s in sass) == 6 * (d // 64), sum("UTMALDG" in s for s in sass)
        assert sum("UBLKCP" in s for s in sass) == (2 if rung == "05" else 1)
    # dQ's reductions: a 64-wide block of d per accumulator pass (rung 06: one pass, its consumer's half or all of D 64;
    # rung 07: none per element, one bulk reduction of the block)
    red = sum(any(tok.startswith("RED") for tok in s.split()[:2]) for s in sass)
    assert red == {"06": 32, "07": 0, "08": 0, "09": 0, "10": 0, "11": 0, "12": 0}.get(rung, 4 * (d // 8)), red
    assert sum("UBLKRED" in s for s in sass) == (1 if rung in hb.BULK_DQ_RUNGS else 0)


@pytest.mark.parametrize("rung", ["02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12"])
def test_wgmma_chains_are_not_serialized_and_start_from_zero(build, rung):
    """ptxas serializes wgmmas (info C7510-C7519 in its log, a WARPGROUP.DEPBAR after every HGMMA) when the code
    touches registers an in-flight wgmma owns: the log has none, and the SASS waits exactly once per commit group (S^T
    and dP^T: 1; rungs 03-05 add dV + dK + dQ half 0, then dQ half 1 at D = 128). The first HGMMA of every chain
    zeroes its accumulator (scale-d 0 folded: RZ, !UPT), which is what makes passing st, dpt, dqh uninitialized safe."""
    d, dt, rep = build
    assert "C751" not in rep.log, [line for line in rep.log.splitlines() if "C751" in line]
    sass = rep.kernels[hb.KERNELS[rung]].sass
    if not sass:
        pytest.skip("no cuobjdump (it ships with the triton wheel): the SASS is not checked")
    waits = sum(s.startswith("WARPGROUP.DEPBAR") for s in sass)
    zero_starts = sum("HGMMA" in s and "RZ, !UPT" in s for s in sass)
    # S^T, dP^T, then one dQ chain per 64-wide half of d (rung 06: one, its consumer's half)
    halves = {"02": 0, "08": 0}.get(rung, 1 if rung in hb.WS_RUNGS else d // 64)
    assert zero_starts == 2 + halves, zero_starts
    # 08: S^T, dP^T; dV, dK. 09-12: S^T (dP^T may run), dP^T; dV and dQ (dK may run), dK
    assert waits == {"02": 1, "08": 2, "09": 4, "10": 4, "11": 4, "12": 4}.get(rung, 1 + halves), waits


def test_rung09_has_an_unmasked_path_paired_loads_and_uniform_descriptors(build):
    """Rung 09 against rung 07 in the SASS: P^T's exp2 twice (the masked path for the diagonal and ragged steps, the
    plain one for every other step; rung 07 masks every step), LSE and Delta read as pairs (LDS.64), and the wgmma
    descriptors built in uniform registers (the consumer index broadcast by a shuffle; rung 07 moves each descriptor
    from per-thread registers, R2UR, before every wgmma)."""
    d, dt, rep = build
    s9, s7 = rep.kernels[hb.KERNELS["09"]].sass, rep.kernels[hb.KERNELS["07"]].sass
    if not s9:
        pytest.skip("no cuobjdump (it ships with the triton wheel): the SASS is not checked")
    exp2 = [sum(line.startswith("MUFU.EX2") for line in s) for s in (s9, s7)]
    assert exp2 == [64, 32], exp2                         # 64 queries x 64 keys over 128 threads: 32 a path
    assert any(line.startswith("LDS.64") for line in s9) and not any(line.startswith("LDS.64") for line in s7)
    r2ur = [sum(line.startswith("R2UR") for line in s) for s in (s9, s7)]
    assert r2ur[0] * 3 < r2ur[1], r2ur


def test_rung10_is_rung09_with_a_rotated_walk(build):
    """Rung 10 changes only where a non-causal block's walk over the query tiles starts: its SASS has rung 09's
    tensor-core, copy, reduction, exp2 and barrier instructions, count for count, and a few more integer ones (the
    start tile once per block, the wrap once per step in the producer and in the consumers)."""
    d, dt, rep = build
    s10, s9 = rep.kernels[hb.KERNELS["10"]].sass, rep.kernels[hb.KERNELS["09"]].sass
    if not s10:
        pytest.skip("no cuobjdump (it ships with the triton wheel): the SASS is not checked")
    for op in ("HGMMA", "UTMALDG", "UBLKCP", "UBLKRED", "MUFU.EX2", "BAR", "SYNCS", "WARPGROUP", "LDS", "STS"):
        n = [sum(line.startswith(op) for line in s) for s in (s10, s9)]
        assert n[0] == n[1], (op, n)
    assert 0 < len(s10) - len(s9) <= 64, (len(s10), len(s9))


def _fused_like_rung10(build, rung):
    """The SASS of a rung that converts dQ itself (11, 12), after checking that it has rung 10's tensor-core, copy,
    reduction, exp2 and wgmma-wait instructions, count for count."""
    d, dt, rep = build
    sf, s10 = rep.kernels[hb.KERNELS[rung]].sass, rep.kernels[hb.KERNELS["10"]].sass
    if not sf:
        pytest.skip("no cuobjdump (it ships with the triton wheel): the SASS is not checked")
    for op in ("HGMMA", "UTMALDG", "UBLKCP", "UBLKRED", "MUFU.EX2", "WARPGROUP.DEPBAR"):
        n = [sum(line.startswith(op) for line in s) for s in (sf, s10)]
        assert n[0] == n[1], (op, n)
    return sf


def test_rung11_counts_and_converts_while_dq_and_dk_run(build):
    """Rung 11 is rung 10 plus dQ's conversion: the same tensor-core, copy and reduction instructions; two counts (one
    a step, one after the walk: an atomic add at GPU scope) and the block conversions' 16-byte loads through L2; and
    in the step, the count and the conversion sit between the dK wgmmas' issue and the wait for dV and dQ
    (WARPGROUP.DEPBAR 1), not before the consumers' barrier and not after a wait ptxas might have hoisted."""
    s11 = _fused_like_rung10(build, "11")
    atoms = [i for i, line in enumerate(s11) if "ATOM.E.ADD" in line]
    assert len(atoms) == 2, atoms
    assert any(line.startswith("LDG.E.128.STRONG.GPU") for line in s11)
    first = atoms[0]
    before = [i for i, line in enumerate(s11[:first]) if line.startswith(("HGMMA", "WARPGROUP.DEPBAR", "BAR.SYNC"))]
    after = next(line for line in s11[first:] if line.startswith(("HGMMA", "WARPGROUP.DEPBAR", "BAR.SYNC")))
    assert s11[before[-1]].startswith("HGMMA"), s11[before[-1]]          # dK's wgmmas issued just before
    assert after.startswith("WARPGROUP.DEPBAR.LE gsb0, 0x1"), after        # then the wait for dV and dQ


def test_rung12_counts_once_per_head_after_the_walk(build):
    """Rung 12 is rung 10 plus one count per query head after the walk: the same tensor-core, copy and reduction
    instructions; one atomic add at GPU scope (in the loop over the group's heads, after the last HGMMA) and the
    conversion's 16-byte loads through L2 after it - nothing of it inside the steps."""
    s12 = _fused_like_rung10(build, "12")
    atoms = [i for i, line in enumerate(s12) if "ATOM.E.ADD" in line]
    loads = [i for i, line in enumerate(s12) if line.startswith("LDG.E.128.STRONG.GPU")]
    last_mma = max(i for i, line in enumerate(s12) if line.startswith("HGMMA"))
    assert len(atoms) == 1 and atoms[0] > last_mma and loads and min(loads) > atoms[0], (atoms, last_mma, loads[:1])


def test_shared_memory_mirror_and_budget():
    """hopper_bwd.smem_bytes mirrors the .cu's SMEM_BYTES (1024 bytes of it to align the tiles), and 3 blocks fit an
    sm_90 SM at D = 128."""
    src = open(hb.KERNEL_PATH).read()
    assert "#define SMEM_BYTES (1024 + 4 * TILE_BYTES + DS_BYTES + 2 * BLOCK_M * 4)" in src
    assert "// archs: sm_90a" in src
    assert hb.smem_bytes(128) == 1024 + 4 * 64 * 128 * 2 + 64 * 64 * 2 + 2 * 64 * 4 == 75264
    assert hb.smem_bytes(64) == 42496
    # rung 04: a second stage of Q, dO (2 tiles), LSE and Delta at the next 1024-byte boundary; 2 blocks still fit
    assert "#define SMEM_BYTES_2STAGE (1024 + STAGE1_OFF + 2 * TILE_BYTES + 2 * BLOCK_M * 4)" in src
    assert hb.smem_bytes(128, "04") == 1024 + 74752 + 2 * 64 * 128 * 2 + 2 * 64 * 4 == 109056
    assert 2 * (hb.smem_bytes(128, "04") + 1024) <= device.arch_info("sm_90").smem_per_sm
    # rung 05: rung 04's layout and three mbarriers after it
    assert "#define BAR_OFF (STAGE1_OFF + 2 * TILE_BYTES + 2 * BLOCK_M * 4)" in src
    assert "#define SMEM_BYTES_TMA (1024 + BAR_OFF + 3 * 8)" in src
    assert hb.smem_bytes(128, "05") == hb.smem_bytes(128, "04") + 24
    assert 2 * (hb.smem_bytes(128, "05") + 1024) <= device.arch_info("sm_90").smem_per_sm
    assert 3 * (hb.smem_bytes(128) + 1024) <= device.arch_info("sm_90").smem_per_sm


def test_defines_carry_config_and_refuse_other_builds():
    dd = hb.defines(64, "float16")
    assert dd == {**hb.CONFIG, "HEAD_DIM": 64, "ATTN_FP16": 1}
    with pytest.raises(ValueError, match="head_dim"):
        hb.defines(96)
    with pytest.raises(ValueError, match="dtype"):
        hb.defines(64, "float32")


def test_every_barrier_wait_goes_through_WAIT_and_the_bounded_one_is_opt_in(monkeypatch):
    assert_waits_go_through_WAIT(open(hb.KERNEL_PATH, encoding="utf-8").read())
    assert hb.CONFIG["MBAR_TIMEOUT"] == 0 and hb.defines(64)["MBAR_TIMEOUT"] == 0
    assert hb.defines(64, timeout=True)["MBAR_TIMEOUT"] == 1 and hb.defines(64, timeout=False)["MBAR_TIMEOUT"] == 0
    monkeypatch.delenv("ATTN_MBAR_TIMEOUT", raising=False)
    assert hb.debug_waits() is False
    monkeypatch.setenv("ATTN_MBAR_TIMEOUT", "1")
    assert hb.debug_waits() is True


def test_the_debug_build_bounds_every_wait_and_the_default_has_none_of_it():
    """Where a kernel waits on an mbarrier (SYNCS.PHASECHK: rungs 05-12 and rung 08's dQ pass), the debug build reads
    the clock and CASes the hang record (CS2R SR_CLOCKLO, ATOMG); the default build never reads the clock. Neither
    spills, and the bounded wait does not make ptxas serialize the wgmmas."""
    plain, debug = hb.compile_report(64, "bfloat16"), hb.compile_report(64, "bfloat16", timeout=True)
    waiting = []
    for key, name in hb.KERNELS.items():
        p, d = plain.kernels[name].sass, debug.kernels[name].sass
        if not p:
            pytest.skip("no cuobjdump (it ships with the triton wheel)")
        waits = any("SYNCS.PHASECHK" in x for x in p)
        waiting += [key] if waits else []
        assert not any("SR_CLOCK" in x for x in p), name
        assert any("SR_CLOCK" in x for x in d) == waits and (not waits or any("ATOMG" in x for x in d)), name
        assert plain.kernels[name].spills == 0 and debug.kernels[name].spills == 0, name
    assert set(waiting) == {*hb.TMA_RUNGS, "dq08"}
    assert not re.search(r"C75\d\d|serializ", debug.log), debug.log


def test_load_race_holds_back_only_the_producers_copies(monkeypatch):
    """CONFIG's LOAD_RACE (test_gpu_every_stage_wait_holds_for_late_copies' knob) reaches the kernels: raised, every
    producer (rungs 06-12, rung 08's dQ pass) reads the clock before a stage's copies and nothing else does (rung 05
    moves its copies instead); at 0 it is compiled out (the test above: the default build never reads the clock)."""
    assert hb.CONFIG["LOAD_RACE"] == 0 and hb.defines(64)["LOAD_RACE"] == 0
    monkeypatch.setitem(hb.CONFIG, "LOAD_RACE", 20000)
    assert hb.defines(64)["LOAD_RACE"] == 20000
    raced = hb.compile_report(64, "bfloat16")
    clocked = []
    for key, name in hb.KERNELS.items():
        sass = raced.kernels[name].sass
        if not sass:
            pytest.skip("no cuobjdump (it ships with the triton wheel)")
        clocked += [key] if any("SR_CLOCK" in x for x in sass) else []
        assert raced.kernels[name].spills == 0, name
    assert set(clocked) == {*hb.WS_RUNGS, "dq08"}


def test_builds_with_raises_the_knob_only_inside_and_restores_the_loaded_builds(monkeypatch):
    """tests.helpers.builds_with, the GPU tests' LOAD_RACE / STORE_RACE fixtures: the knob raised inside, the build
    caches emptied on the way in and out, the loaded builds (hang_report's) only the new ones inside, the old after."""
    hits = []

    @functools.lru_cache(maxsize=None)
    def build(key):
        hits.append((key, hb.CONFIG["LOAD_RACE"]))
        return key

    loaded = {("old build",)}
    build(64)
    with builds_with(monkeypatch, hb.CONFIG, "LOAD_RACE", 20000, loaded, build):
        assert hb.CONFIG["LOAD_RACE"] == 20000 and loaded == set()
        build(64)
        loaded.add(("raced build",))
    build(64)
    assert hb.CONFIG["LOAD_RACE"] == 0 and loaded == {("old build",)}
    assert hits == [(64, 0), (64, 20000), (64, 0)]


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: refusals (host tensors: every one of these is refused before the device is asked for)
# ---------------------------------------------------------------------------------------------------------------------
def _t(shape, dtype="bfloat16"):
    import torch

    return torch.zeros(shape, dtype=getattr(torch, dtype))


def _call(q=None, k_shape=(1, 2, 8), causal=False, sm_scale=None, d=64, dtype="bfloat16"):
    q = _t((1, 4, 8, d), dtype) if q is None else q
    k = _t((*k_shape, d), dtype)
    v = _t(tuple(k.shape), dtype)
    return hb.flash_attn_bwd_hopper(_t(tuple(q.shape), dtype), q, k, v, _t(tuple(q.shape), dtype),
                                    _t(tuple(q.shape[:3]), "float32"), causal, sm_scale)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(d=96), ValueError, "q: head dimension 96"),
    (dict(dtype="float32"), TypeError, "q: dtype float32"),
    (dict(k_shape=(1, 2, 16)), ValueError, "k: Sk = 16"),
    (dict(k_shape=(1, 3, 8)), ValueError, "k: its 3 heads"),
    (dict(causal=1), TypeError, "causal"),
    (dict(sm_scale=-1.0), ValueError, "sm_scale"),
])
def test_refusals_name_the_argument(kwargs, exc, match):
    pytest.importorskip("torch")
    with pytest.raises(exc, match=match):
        _call(**kwargs)


def test_refuses_an_unknown_rung_first():
    with pytest.raises(ValueError, match="rung: expected one of"):
        hb.flash_attn_bwd_hopper(None, None, None, None, None, None, rung="99")


def test_refuses_a_transposed_head_dim_and_host_arrays():
    pytest.importorskip("torch")
    q = _t((1, 4, 64, 8)).transpose(2, 3)              # (1, 4, 8, 64) with D strided
    with pytest.raises(ValueError, match="q: the last dimension must be contiguous"):
        _call(q=q)
    with pytest.raises(TypeError, match="q: expected a GPU array"):
        _call()


def test_compile_rows_report_every_build():
    """compile_rows (the report the lead reads): one row per build and kernel, none spilling."""
    rows = hb.compile_rows()
    assert len(rows) == len(BUILDS) * len(hb.KERNELS)
    assert all(r["spill B"] == 0 for r in rows)
    assert {r["kernel"] for r in rows} == set(hb.KERNELS.values())



def test_bench_cli_without_an_sm90_gpu_shows_the_compile_report_and_why_not(capsys):
    """python -m ...hopper_bwd_bench: the compile report anywhere; off an sm_90 GPU 'not run: <why>', exit 0; bad
    --rounds refused by argparse."""
    from phase4_optimization.lab06_attention import hopper_bwd_bench as hbb

    if not hbb.unavailable():
        pytest.skip("an sm_90 GPU with cuDNN is here: the bench would run (the GPU session runs it)")
    assert hbb.main([]) == 0
    out = capsys.readouterr().out
    assert "attn_bwd_02_wgmma" in out and "not run:" in out
    with pytest.raises(SystemExit):
        hbb.main(["--rounds", "0"])
    assert set(hbb.ROWS) == set(hb.RUNGS)



def test_check_command_says_where_a_gradient_is_wrong_and_why_it_cannot_run_here(capsys):
    """hopper_bwd_check: where_wrong on a gradient with one warp slab's odd columns wrong and a NaN names that slab,
    those columns and the NaN; off an sm_90 GPU the command says why it did not run (exit 0); its cases are awkward
    (S = 1, 64, 65 and past several tiles; GQA, MQA; both head dims and dtypes)."""
    from phase4_optimization.lab06_attention import hopper_bwd_check as hc

    ref = np.random.default_rng(5).standard_normal((1, 2, 130, 128))
    got = ref.copy()
    got[0, 1, 64 + 16: 64 + 32, 1::8] += 1.0               # key tile 1, warp slab 1, column 1 of every 8-wide block
    got[0, 0, 3, 5] = np.nan
    lines = hc.where_wrong("dk", got, ref, check.Tol(1e-2, 1e-2, 1e-3))
    text = "\n".join(lines)
    assert "257/33280 wrong, 1 NaN" in text, text
    assert "rows by 64-row key tile: [1, 256]" in text and "by warp slab (row % 64 // 16): [1, 256, 0, 0]" in text
    assert "col % 8: [0, 256, 0, 0, 0, 1, 0, 0]" in text and "cols by half of d: [129, 128]" in text
    assert hc.where_wrong("dq", ref, ref, check.Tol(1e-2, 1e-2, 1e-3)) == []
    if hc.unavailable():
        assert hc.main([]) == 0 and "not run:" in capsys.readouterr().out
    sizes = {c[3] for c in hc.CASES}
    assert {1, 64, 65} <= sizes and max(sizes) > 4 * 64 and {c[4] for c in hc.CASES} == set(hb.HEAD_DIMS)
    assert any(c[2] == 1 and c[1] > 1 for c in hc.CASES) and any(1 < c[2] < c[1] for c in hc.CASES)
    assert {c[6] for c in hc.CASES} == set(hb.DTYPES) and all(c[5] in (True, False) for c in hc.CASES)
