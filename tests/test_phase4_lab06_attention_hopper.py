"""Lab 4.6, the Hopper attention forward (phase4_optimization/lab06_attention/kernels_hopper.cu, host side hopper.py).

CPU tier: NVRTC compile for sm_90a (no spills or stack, no serialized wgmma, the HGMMA count and forms - Q K^T from
shared memory, P V with A from registers and V transposed in place - TMA loads, mbarrier waits, setmaxnreg both ways),
shared memory within one block's opt-in limit, the Python mirror of the kernel's constants, the descriptors read back
through a NumPy model of the swizzled shared memory (with mutations that must fail), the accumulator -> A-fragment
correspondence behind P-from-registers, the kernel's algorithm (128 x 128 tiles, online softmax, skipped and masked
tiles) in float64, argument validation, and the --check CLI without a GPU. The GPU tier: test_phase4_lab06_attention_
hopper_gpu.py.
"""
import os
import re

import numpy as np
import pytest

from common import check, cuda, device
from phase4_optimization.lab06_attention import bench as ab
from phase4_optimization.lab06_attention import hopper as hp
from phase4_optimization.lab06_attention import hopper_check as hc
from phase4_optimization.lab06_attention import hopper_models as hm
from phase4_optimization.lab06_attention import lab as att

CU = open(hp.KERNEL_PATH).read()

BUILDS = [(128, "bfloat16", False, 2), (128, "float16", False, 2), (64, "bfloat16", False, 2),
          (128, "bfloat16", True, 2), (64, "float16", True, 2), (128, "bfloat16", False, 3), (64, "float16", True, 3)]


@pytest.fixture(scope="module", params=BUILDS, ids=["d128-bf16", "d128-fp16", "d64-bf16", "d128-bf16-Vk",
                                                    "d64-fp16-Vk", "d128-bf16-3st", "d64-fp16-Vk-3st"])
def build(request):
    d, dt, vk, st = request.param
    return d, dt, vk, hp.compile_report(d, dt, vk, stages=st)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: compile
# ---------------------------------------------------------------------------------------------------------------------
def test_file_claims_sm90a_only():
    assert cuda.claimed_archs(hp.KERNEL_PATH) == ("sm_90a",)
    assert cuda.kernel_names(hp.KERNEL_PATH) == list(hp.KERNELS.values())


@pytest.mark.parametrize("kernel", sorted(hp.KERNELS))
def test_compiles_without_spills_or_serialization(build, kernel):
    d, dt, vk, rep = build
    k = rep.kernels[hp.KERNELS[kernel]]
    assert 0 < k.registers <= 65536 // hp.THREADS, k.registers       # 384 threads must fit the register file
    assert k.spills == 0 and k.stack_bytes == 0, f"D{d} {dt}: spills {k.spill_stores}/{k.spill_loads}, " \
                                                 f"stack {k.stack_bytes}"
    # C7510/C7515/C7517: ptxas serialized the wgmmas or inserted waits
    assert not re.search(r"C75\d\d|serializ|injected", rep.log), rep.log
    # the register budget the setmaxnreg values hand out is the one the launch holds
    assert hp.PRODUCER_REGS * 128 + hp.CONSUMER_REGS * 128 * hp.CONSUMERS <= k.registers * hp.THREADS


@pytest.mark.parametrize("kernel", sorted(hp.KERNELS))
def test_sass_has_hgmma_tma_mbarrier_setmaxnreg(build, kernel):
    d, dt, vk, rep = build
    sass = rep.kernels[hp.KERNELS[kernel]].sass
    if not sass:
        pytest.skip("no cuobjdump (it ships with the triton wheel)")
    hgmma = [s for s in sass if "HGMMA" in s]
    qk = [s for s in hgmma if "64x128x16" in s and "gdesc" in s.split(",")[1]]          # A from shared memory
    pv = [s for s in hgmma if f"64x{d}x16" in s and re.match(r"\s*R\d+", s.split(",")[1])]   # A from registers
    # one per 16-wide slice of the head dim / per 16-key slice of the tile, unrolled; rung 04's loop is peeled (a
    # first Q K^T alone, the steady loop with both, a last P V alone): each twice
    copies = 1 if kernel == "03" else 2
    assert len(qk) == copies * d // 16, hgmma
    assert len(pv) == copies * hp.BLOCK_N // 16, hgmma
    assert len(hgmma) == copies * (d // 16 + hp.BLOCK_N // 16), hgmma
    if kernel in ("04", "06"):   # the turn-taking: bar.arrive on the other side's named barrier, bar.sync on its own
        assert sum("BAR.ARV" in s for s in sass) >= 3 and sum("BAR.SYNC" in s for s in sass) >= 3
    assert all("tnspB" not in s for s in qk), qk           # K read K-major
    assert all(("tnspB" in s) != vk for s in pv), pv       # V read MN-major in place unless V_KMAJOR
    if dt == "bfloat16":
        assert all(".BF16" in s for s in hgmma), hgmma
    assert sum("UTMALDG.4D" in s for s in sass) >= 3, "no 4-D TMA loads (UTMALDG.4D) in the SASS"
    assert any("SYNCS.ARRIVE.TRANS64" in s for s in sass), "no mbarrier arrive in the SASS"
    assert any("SYNCS.PHASECHK" in s for s in sass), "no mbarrier wait in the SASS"
    assert any("USETMAXREG.DEALLOC" in s and hex(hp.PRODUCER_REGS) in s for s in sass), "no setmaxnreg.dec"
    assert any("USETMAXREG.TRY_ALLOC" in s and hex(hp.CONSUMER_REGS) in s for s in sass), "no setmaxnreg.inc"
    assert not any(s.split()[0].startswith(("LDL", "STL")) for s in sass if s and not s.startswith("@"))


def test_shared_memory_fits_one_block():
    h = device.arch_info("sm_90")
    for d in hp.HEAD_DIMS:
        for st in hp.STAGE_CHOICES:
            assert hp.smem_bytes(d, st) <= h.smem_per_block_optin, (d, st)
    assert set(hp.DEFAULT_STAGES) == set(hp.KERNELS) and set(hp.DEFAULT_STAGES.values()) <= set(hp.STAGE_CHOICES)
    assert {b for b in hp.BENCH_BUILDS} >= {(k, s) for k, s in hp.DEFAULT_STAGES.items()}


def test_gqa_targets_time_the_default_and_persistent_rungs():
    """The Hopper forward's grouped-query targets time the default kernel and the persistent rungs at their default
    ring depths (rows the benchmark names), at a real grouping; without sm_90 both cases say why, nothing timed."""
    from phase4_optimization.lab06_attention import cases, timing

    assert hp.DEFAULT_KERNEL in cases.HOPPER_GQA_RUNGS and set(hp.PERSISTENT) <= set(cases.HOPPER_GQA_RUNGS)
    assert all((r, hp.DEFAULT_STAGES[r]) in cases.HOPPER_ROWS for r in cases.HOPPER_GQA_RUNGS)
    _b, hq, hkv, _s, d = cases.HOPPER_GQA[1]
    assert hq % hkv == 0 and hq > hkv > 1 and d in hp.HEAD_DIMS
    if hp.unavailable_reason() is None:
        pytest.skip("sm_90 here: the GPU tier's benchmark run times these targets")
    rows, targets = timing.bench_hopper_gqa(rounds=1)
    assert rows == [] and [t.goal for t in targets] == [f">= {cases.HOPPER_GOAL:g}"] * 2
    assert all(t.ratio is None and t.note.startswith("not measured: ") for t in targets)


def test_ring_depth_is_a_build_option():
    """-DSTAGES changes the kernel's shared memory by exactly one K + V stage (the ptxas report counts only static
    shared memory, so the check is on the define list and smem_bytes), and bad depths are refused."""
    assert hp.defines(128)["STAGES"] == hp.CONFIG["STAGES"] == 2 and hp.defines(128, stages=3)["STAGES"] == 3
    assert hp.smem_bytes(128, 3) - hp.smem_bytes(128, 2) == 2 * hp.BLOCK_N * 128 * 2 + 16
    for bad in (1, 4, 2.0, "3", True):
        with pytest.raises(ValueError, match="stages"):
            hp.check_stages(bad)


@pytest.mark.parametrize("stages", hp.STAGE_CHOICES)
@pytest.mark.parametrize("kernel", ["05", "06", "07"])
def test_rung05_softmax_runs_between_the_two_waits(stages, kernel):
    """Rung 05's point, read off the SASS: inside the key loop, every exp2 of the tile's softmax (BLOCK_N / 2 per
    thread) sits between WARPGROUP.DEPBAR.LE gsb0, 0x1 (S_j has landed) and WARPGROUP.DEPBAR.LE gsb0, 0x0 (P_{j-1} V
    has retired) - i.e. it can run while the tensor cores do P_{j-1} V. Without the sink store ptxas hoists the second
    wait above the exp2s (the kernel's comment), which this would catch."""
    sass = hp.compile_report(128, "bfloat16", False, stages=stages).kernels[hp.KERNELS[kernel]].sass
    if not sass:
        pytest.skip("no cuobjdump (it ships with the triton wheel)")
    waits = [i for i, x in enumerate(sass) if "WARPGROUP.DEPBAR.LE" in x]
    ones = [i for i in waits if x_is(sass[i], "0x1")]
    assert len(ones) == 1, [sass[i] for i in waits]
    nxt = min(i for i in waits if i > ones[0])
    assert x_is(sass[nxt], "0x0")
    between = sum("MUFU.EX2" in x for x in sass[ones[0]:nxt])
    assert between >= hp.BLOCK_N // 2, f"only {between} exp2s between the waits"
    assert any("STS" in x for x in sass[ones[0]:nxt]), "the sink store is missing"


def x_is(line: str, count: str) -> bool:
    return line.replace(",", " ").split()[-1] == count


def test_kernel_constants_come_from_config():
    """The .cu holds no value of its own (hopper.CONFIG is the only one: tests/test_phase4_lab06_attention_config.py);
    its shared-memory formula is the one smem_bytes computes, and the module names are CONFIG's values."""
    assert not re.findall(r"^#define (BLOCK_M|BLOCK_N|STAGES|CONSUMERS|\w+_REGS|SINK_BYTES|BOX_BYTES) ", CU, re.M)
    assert "#define SMEM_BYTES (1024 + Q_BYTES + STAGES * STAGE_BYTES + 8 * (1 + 2 * STAGES) + SINK_BYTES)" in CU
    assert (hp.BLOCK_M, hp.BLOCK_N, hp.CONSUMERS, hp.STAGES) == tuple(hp.CONFIG[k] for k in
                                                                      ("BLOCK_M", "BLOCK_N", "CONSUMERS", "STAGES"))
    assert (hp.PRODUCER_REGS, hp.CONSUMER_REGS, hp.SINK_BYTES, hp.BOX_BYTES) == tuple(
        hp.CONFIG[k] for k in ("PRODUCER_REGS", "CONSUMER_REGS", "SINK_BYTES", "BOX_BYTES"))
    # the descriptors the Python model checks are the ones the kernel builds: slice kk of Q / K at kslice_bytes(kk),
    # of V at vslice_bytes(kk) (MN-major: 2048 kk; K-major: the K layout in VT boxes), and every wgmma's descriptor the
    # slice-0 one moved by desc_at (its identity: tests/test_phase4_lab06_attention_hopper_bwd_models.py)
    assert "u32 kslice_bytes(int kk) { return (kk / 4) * BOX_BYTES + 32 * (kk % 4); }" in CU
    assert "return wgmma_desc_128b(sQ + consumer * (64 * 128) + kslice_bytes(kk), 16, 1024);" in CU
    assert "return wgmma_desc_128b(sK + kslice_bytes(kk), 16, 1024);" in CU
    assert "return wgmma_desc_128b(sV + vslice_bytes(kk), V_KMAJOR ? 16 : BOX_BYTES, 1024);" in CU
    assert "return 2048 * kk;" in CU and "return (kk / 4) * VT_BOX_BYTES + 32 * (kk % 4);" in CU
    assert "wgmma_qk(sc, desc_at(dq, kslice_bytes(kk)), desc_at(dk, kslice_bytes(kk)), kk != 0);" in CU
    assert "wgmma_pv(o, pa[kk], desc_at(dv, vslice_bytes(kk)));" in CU
    assert '}, %64, %65, p, 1, 1, 0, 0;' in CU                  # Q K^T: neither operand transposed
    assert '#define TNSP_V "1"' in CU and '#define TNSP_V "0"' in CU


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the layout models
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", hp.HEAD_DIMS)
@pytest.mark.parametrize("v_kmajor", [False, True])
def test_operands_read_back_through_the_kernels_descriptors(d, v_kmajor):
    assert hm.simulate_operands(d, v_kmajor) == []
    assert hm.simulate_operands(d, v_kmajor, stage=0, seed=3) == []
    assert hm.simulate_operands(d, v_kmajor, stage=2, seed=5, stages=3) == []       # the third stage of rung 05's ring


MUTATIONS = {
    "V LBO one 64-block off": ("desc_v", lambda s_v, kk, d, vk=False: hp.wg.smem_descriptor(s_v + 2048 * kk, 8192,
                                                                                             1024)),
    "V step of 8 keys": ("desc_v", lambda s_v, kk, d, vk=False: hp.wg.smem_descriptor(s_v + 1024 * kk,
                                                                                       hp.BOX_BYTES, 1024)),
    "K step of 16 bytes": ("desc_k", lambda s_k, kk: hp.wg.smem_descriptor(s_k + (kk // 4) * hp.BOX_BYTES +
                                                                            16 * (kk % 4), 16, 1024)),
    "Q consumer offset missing": ("desc_q", lambda s_q, cw, kk: hp.wg.smem_descriptor(
        s_q + (kk // 4) * hp.BOX_BYTES + 32 * (kk % 4), 16, 1024)),
}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_layout_model_catches_descriptor_bugs(monkeypatch, mutation):
    name, fn = MUTATIONS[mutation]
    monkeypatch.setattr(hm, name, fn)
    assert hm.simulate_operands(128, False) != []


@pytest.mark.parametrize("rows", [hp.BLOCK_M])
def test_tensor_map_geometry_reads_a_qkv_view(rows):
    """The 4-D map the host encodes, applied by a NumPy model of TMA's box copy: over q, k, v as views into one
    (B, S, 3, H, D) buffer (lab 4.7's QKV projection output), a box at (d0, head, s0, batch) is exactly that head's
    rows s0 .. s0 + rows - 1, columns d0 .. d0 + 63, zero past S - and the same for a contiguous (B, H, S, D) tensor."""
    b, s, h, d = 2, 200, 3, 128
    buf = np.arange(b * s * 3 * h * d, dtype=np.int64).reshape(b, s, 3, h, d) + 1
    for which in range(3):
        view = buf[:, :, which].transpose(0, 2, 1, 3)                         # (B, H, S, D)
        st = tuple(x // buf.itemsize for x in view.strides)
        dims, sbytes, box = hp.map_geometry(view.shape, st, 2, rows)
        assert dims == (d, h, s, b) and box == (64, 1, rows, 1)
        offset = which * h * d
        for d0, head, s0, bat in ((0, 0, 0, 0), (64, 2, 128, 1), (0, 1, 128, 0)):
            got = hm.model_box(buf.ravel(), offset, dims, tuple(x // 2 for x in sbytes), box, (d0, head, s0, bat))
            want = np.zeros((rows, 64), np.int64)
            part = view[bat, head, s0:s0 + rows, d0:d0 + 64]
            want[:part.shape[0]] = part
            assert np.array_equal(got.reshape(rows, 64), want), (which, d0, head, s0, bat)
    contiguous = np.ascontiguousarray(buf[:, :, 0].transpose(0, 2, 1, 3))
    dims, sbytes, box = hp.map_geometry(contiguous.shape, tuple(x // 8 for x in contiguous.strides), 2, rows)
    assert sbytes == (s * d * 2, d * 2, h * s * d * 2)
    got = hm.model_box(contiguous.ravel(), 0, dims, tuple(x // 2 for x in sbytes), box, (64, 1, 0, 1))
    assert np.array_equal(got.reshape(rows, 64), contiguous[1, 1, :rows, 64:])
    with pytest.raises(ValueError, match="last dimension"):
        hp.map_geometry((1, 1, 4, 64), (256, 256, 1, 4), 2, rows)


def test_accumulator_layout_covers_the_tile_once():
    for n in (64, 128):
        row, col = hm.accumulator_owner(n)
        assert row.max() == 63 and col.max() == n - 1
        assert len(set(zip(row.ravel().tolist(), col.ravel().tolist()))) == 64 * n
    row, col = hm.a_fragment_owner()
    assert len(set(zip(row.ravel().tolist(), col.ravel().tolist()))) == 64 * 16


def test_p_fragment_is_the_score_accumulator():
    assert hm.simulate_p_fragment()


def test_p_fragment_model_sees_a_swapped_pair(monkeypatch):
    real = hm.a_fragment_owner

    def swapped():
        row, col = real()
        return row[:, [0, 1, 4, 5, 2, 3, 6, 7]], col[:, [0, 1, 4, 5, 2, 3, 6, 7]]

    monkeypatch.setattr(hm, "a_fragment_owner", swapped)
    assert not hm.simulate_p_fragment()


@pytest.mark.parametrize("s,causal", [(1, False), (17, True), (129, False), (129, True), (300, True)])
def test_kernel_algorithm_in_float64(s, causal):
    """bench.tiled_model with the Hopper kernel's 128 x 128 tiles: the same skipped tiles, masks and update order."""
    rng = np.random.default_rng(s)
    q, k, v = (rng.standard_normal((1, 2, s, 64)) for _ in range(3))
    o, lse = ab.tiled_model(q, k, v, causal, block_m=hp.BLOCK_M, block_n=hp.BLOCK_N, round_p=False)
    o_ref, lse_ref = att.forward_reference(q, k, v, causal)
    assert np.allclose(o, o_ref, atol=1e-10) and np.allclose(lse, lse_ref, atol=1e-10)


def test_check_cases_cover_the_awkward_sizes():
    cases = hc.check_cases()
    sizes = {c[0][3] for c in cases}
    assert set(hc.CHECK_S) <= sizes
    assert {c[0][4] for c in cases} == set(hp.HEAD_DIMS)
    assert {c[0][5] for c in cases} == {False, True}
    assert {c[1] for c in cases} == set(hp.DTYPES)
    assert any(c[0][1] != c[0][2] for c in cases)                 # grouped-query heads
    for (b, hq, hkv, s, d, causal), dt in cases:
        assert hq % hkv == 0


def test_where_wrong_names_the_rows_and_columns():
    ref = np.ones((1, 1, 200, 128))
    got = ref.copy()
    got[0, 0, 64:128, 8:16] = 5.0                                   # consumer half 1 of tile 0, one 8-column block
    lines = hc.where_wrong(got, ref, check.Tol(1e-2, 1e-2))
    text = "\n".join(lines)
    assert "512/25600 wrong" in text
    assert "consumer half (row % 128 // 64): [0, 512]" in text
    assert "cols by 8-wide block: [0, 512, 0" in text
    assert hc.where_wrong(ref, ref, check.Tol(1e-2, 1e-2)) == []


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: validation, availability, CLI
# ---------------------------------------------------------------------------------------------------------------------
def _cpu(shape, dtype="bfloat16"):
    torch = pytest.importorskip("torch")
    return torch.zeros(shape, dtype=getattr(torch, dtype))


def test_validation_names_the_argument():
    torch = pytest.importorskip("torch")
    q = _cpu((1, 4, 16, 128))
    with pytest.raises(TypeError, match="q: dtype float32"):
        hp.flash_attn_hopper(q.float(), q, q)
    with pytest.raises(ValueError, match="q: head dimension 96"):
        hp.flash_attn_hopper(*(_cpu((1, 4, 16, 96)),) * 3)
    with pytest.raises(ValueError, match="k: its 3 heads must divide"):
        hp.flash_attn_hopper(q, _cpu((1, 3, 16, 128)), _cpu((1, 3, 16, 128)))
    with pytest.raises(ValueError, match="k: Sk = 8"):
        hp.flash_attn_hopper(q, _cpu((1, 4, 8, 128)), _cpu((1, 4, 8, 128)))
    with pytest.raises(ValueError, match="v: shape"):
        hp.flash_attn_hopper(q, q, _cpu((1, 2, 16, 128)))
    with pytest.raises(ValueError, match="q: empty input"):
        hp.flash_attn_hopper(*(_cpu((1, 4, 0, 128)),) * 3)
    with pytest.raises(TypeError, match="causal"):
        hp.flash_attn_hopper(q, q, q, causal=1)
    with pytest.raises(ValueError, match="sm_scale"):
        hp.flash_attn_hopper(q, q, q, sm_scale=-1.0)
    view = torch.zeros((1, 16, 4, 128), dtype=torch.bfloat16).transpose(1, 2)     # a (B, S, H, D) buffer: fine,
    with pytest.raises(TypeError, match="q: expected a GPU array"):                # only not on the GPU
        hp.flash_attn_hopper(view, q, q)
    with pytest.raises(ValueError, match="q: the last dimension must be contiguous"):
        hp.flash_attn_hopper(torch.zeros((1, 4, 128, 16), dtype=torch.bfloat16).transpose(2, 3), q, q)
    with pytest.raises(ValueError, match="k: strides .* multiples of 8"):
        hp.flash_attn_hopper(q, torch.zeros((1, 4, 16, 132), dtype=torch.bfloat16)[..., :128], q)
    with pytest.raises(TypeError, match="q: expected a GPU array"):
        hp.flash_attn_hopper(q, q, q)
    with pytest.raises(TypeError, match="q: expected a torch or cupy array"):
        hp.flash_attn_hopper(np.zeros((1, 4, 16, 128), np.float16), q, q)
    with pytest.raises(ValueError, match="head_dim"):
        hp.defines(96)
    with pytest.raises(ValueError, match="dtype"):
        hp.defines(128, "float32")
    with pytest.raises(ValueError, match="kernel"):
        hp.flash_attn_hopper(q, q, q, kernel="09")
    with pytest.raises(ValueError, match="blocks: a positive int for the persistent"):
        hp.flash_attn_hopper(q, q, q, kernel="05", blocks=4)
    with pytest.raises(ValueError, match="blocks"):
        hp.flash_attn_hopper(q, q, q, kernel="07", blocks=0)
    with pytest.raises(ValueError, match="stages"):
        hp.flash_attn_hopper(q, q, q, kernel="05", stages=4)


@pytest.mark.skipif(device.has_gpu(), reason="checks the no-GPU answer")
def test_unavailable_without_gpu():
    assert hp.unavailable_reason()
    ok, why = att.HOPPER_VARIANT.available()
    assert not ok and why


def test_variant_is_a_cuda_variant_for_sm90():
    v = att.HOPPER_VARIANT
    assert v.impl == "cuda" and v.archs == ("sm_90",) and set(v.dtypes) == set(hp.DTYPES)
    assert v.name.split()[1] == "03"
    # one variant per rung, named after it, its note naming the rung's kernel
    assert [(x.name.split()[1], x.note.split()[1].rstrip(":")) for x in att.HOPPER_VARIANTS] == list(hp.KERNELS.items())


def test_cli_help_and_compile_table(capsys):
    with pytest.raises(SystemExit) as e:
        hc.main(["--help"])
    assert e.value.code == 0
    assert "--check" in capsys.readouterr().out
    assert hc.main([]) == 0
    out = capsys.readouterr().out
    assert "kernels_hopper.cu compiled for sm_90a" in out and "24/240" in out and "attn_04_wgmma_pingpong" in out
    assert "attn_05_wgmma_overlap" in out and "attn_06_wgmma_overlap_pingpong" in out
    assert "attn_07_wgmma_persistent" in out


def test_the_command_in_the_kernels_header_still_runs_the_check():
    """`python -m phase4_optimization.lab06_attention.hopper --check` (kernels_hopper.cu's header and the lesson give
    it): hopper.py, the launch code, hands its command line to hopper_check.py without importing it."""
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    r = subprocess.run([sys.executable, "-m", "phase4_optimization.lab06_attention.hopper", "--help"], cwd=root,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "--check" in r.stdout and "--no-compile-report" in r.stdout


@pytest.mark.skipif(device.has_gpu(), reason="the CPU path of --check")
def test_cli_check_on_cpu(capsys):
    assert hc.main(["--check", "--no-compile-report"]) == 0
    out = capsys.readouterr().out
    assert "descriptor model (CPU) D128 V MN-major, stages 0..1: ok" in out
    assert "descriptor model (CPU) D128 V MN-major, stages 0..2: ok" in out
    assert "P-from-registers fragment model (CPU): ok" in out
    assert "GPU cases skipped" in out
