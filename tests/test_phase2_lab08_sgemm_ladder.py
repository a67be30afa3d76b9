"""Lab 2.8 SGEMM ladder: compiler facts, the autotuner's space, the plan, validation, and the kernels on a GPU. The
CUDA C source run on the CPU by an emulator has its own file: tests/test_phase2_lab08_sgemm_emulator.py.

CPU tier
  * NVRTC facts: every rung compiles for its architectures with zero spills (resource figures printed), every
    configuration of the autotuner's space compiles spill-free for sm_90, the float4 / LDS.128 / LDGSTS paths exist
    where the headers say;
  * the plan on GPUs learners have (common.plan): rungs 10-11 skipped without cp.async, the Triton tiles and rung 11's
    configuration by the GPU's shared memory and tuning record, --set, every planned launch spill-free;
  * wrappers reject bad input before any launch; the Triton kernel in the interpreter, with alpha/beta;
  * main(["--quick"]) without a GPU.
GPU tier: alpha/beta with a real C, misaligned views (scalar fallbacks), bad input on the device, 64-bit offsets,
the peers' error against float64 (no TF32).
"""
import json
import os

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan, report, tuned
from common import lab as course_lab
from phase2_cuda.lab08_sgemm import bench as sgb
from phase2_cuda.lab08_sgemm import lab as sg
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu
CUDA_FNS = [sg.sgemm_01, sg.sgemm_02, sg.sgemm_03, sg.sgemm_04, sg.sgemm_05, sg.sgemm_06, sg.sgemm_07, sg.sgemm_08,
            sg.sgemm_09, sg.sgemm_10, sg.sgemm_11]
MAIN_KERNELS = [sg.RUNGS[i].kernel for i in range(1, 10)]


# ---------------------------------------------------------------------------------------------------------------------
# Compiler facts (NVRTC, no GPU)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_90"])
def test_rungs_01_09_compile_without_spills(arch, capsys):
    rep = cuda.compile_report(sg.CU, arch, defines=sg.compile_defines(sg.CU))
    with capsys.disabled():
        print(f"\nkernels.cu on {arch}: " + ", ".join(
            f"{k[:8]} {rep[k].registers} regs {rep[k].smem_bytes} B smem" for k in MAIN_KERNELS))
    for name in MAIN_KERNELS:
        k = rep[name]
        assert k.registers > 0 and k.spills == 0, f"{name} on {arch}: {k.registers} regs, {k.spills} B spilled"
    # the kernels declared with __launch_bounds__(256, 2) must fit 2 blocks: <= 128 registers
    for name in ("sgemm_08_warp_tiling", "sgemm_09_double_buffering"):
        assert rep[name].registers <= 128


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_rung_10_default_compiles_without_spills(arch):
    rep = cuda.compile_report(sg.CU_ASYNC, arch, defines=sg.ASYNC_DEFAULT.defines)
    k = rep["sgemm_10_cp_async"]
    assert k.spills == 0 and 0 < k.registers <= 128
    assert cuda.claimed_archs(sg.CU_ASYNC) == ("sm_80", "sm_90")


def test_sass_shows_each_rungs_change():
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with (it ships with the triton wheel)")
    rep = cuda.compile_report(sg.CU, "sm_90", defines=sg.compile_defines(sg.CU))
    census = {k: sgb._executed_census(rep[k].sass) for k in MAIN_KERNELS}
    assert census["sgemm_01_naive"].get("LDS.32", 0) + census["sgemm_01_naive"].get("LDS.128", 0) == 0
    assert census["sgemm_03_smem_tiling"].get("BAR", 0) == 2
    for k in MAIN_KERNELS[:5]:          # scalar global loads only before rung 06
        assert census[k].get("LDG.128", 0) == 0, k
    for k in MAIN_KERNELS[5:]:          # the float4 path exists from rung 06 on
        assert census[k].get("LDG.128", 0) >= 2, k
    for k in MAIN_KERNELS[5:]:          # 8 k-steps x (2 + 2) LDS.128 per k-tile, and 8 x 64 FFMA
        assert census[k].get("LDS.128", 0) == 32, k
        assert census[k].get("FFMA", 0) >= 512, k
    r10 = cuda.compile_report(sg.CU_ASYNC, "sm_90", defines=sg.ASYNC_DEFAULT.defines)["sgemm_10_cp_async"]
    c10 = sgb._executed_census(r10.sass)
    assert c10.get("LDGSTS", 0) > 0 and c10.get("LDS.128", 0) == 16 * 4 and c10.get("FFMA", 0) >= 16 * 64
    assert c10.get("BAR", 0) == 1, "one barrier per k-tile"


def _nvrtc_resources(path, arch, defines):
    """ptxas figures per kernel (compile_report disassembles only when SASS is asked for)."""
    return cuda.compile_report(path, arch, defines=defines).kernels


def test_tune_space_is_valid():
    limit = device.arch_info("sm_90").smem_per_block_optin
    assert len(set(sgb.TUNE_SPACE)) == len(sgb.TUNE_SPACE) >= 12
    assert sg.ASYNC_DEFAULT in sgb.TUNE_SPACE
    for cfg in sgb.TUNE_SPACE:
        assert cfg.problems(limit) == [], cfg.short()


# The extremes of the space for register pressure: the deepest k-tile, 512 threads, the most stages, the smallest
# tiles. (All 16 compile spill-free for sm_90 - checked when the space was declared; 1.5 s each is too long for
# every CPU run. --tune reports each configuration's spill bytes from the driver on the GPU.)
SPILL_CHECKED = [sg.AsyncConfig(128, 128, 32, 64, 32, 8, 8, 3, 2), sg.AsyncConfig(128, 256, 16, 64, 32, 8, 8, 3, 1),
                 sg.AsyncConfig(128, 128, 16, 64, 32, 8, 8, 4, 2), sg.AsyncConfig(64, 64, 16, 32, 32, 8, 4, 4, 4),
                 sg.AsyncConfig(256, 128, 16, 64, 64, 16, 8, 3, 1, 1)]


@pytest.mark.parametrize("cfg", SPILL_CHECKED, ids=lambda c: c.short())
def test_tune_space_extremes_compile_without_spills_on_sm90(cfg):
    assert cfg in sgb.TUNE_SPACE
    k = _nvrtc_resources(sg.CU_ASYNC, "sm_90", cfg.defines)["sgemm_10_cp_async"]
    cap = min(255, 65536 // (cfg.MINB * cfg.threads) // 8 * 8)
    assert k.spills == 0 and 0 < k.registers <= cap, f"{cfg.short()}: {k.registers} regs, {k.spills} B spilled"


def test_recorded_winners_compile_without_spills():
    """Every tuning record shipped under results/ names a valid configuration that compiles spill-free."""
    root = os.path.dirname(H200)
    paths = [os.path.join(root, d, sg.TUNED + ".json") for d in (os.listdir(root) if os.path.isdir(root) else [])]
    paths = [p for p in paths if os.path.exists(p)]
    if not paths:
        pytest.skip("no tuning record shipped yet (written by --tune on a GPU)")
    for p in paths:
        with open(p) as f:
            cfg = sg.AsyncConfig(**json.load(f)["winner"])
        assert cfg.problems() == []
        k = _nvrtc_resources(sg.CU_ASYNC, "sm_90", cfg.defines)["sgemm_10_cp_async"]
        assert k.spills == 0, f"{p}: winner {cfg.short()} spills"


@pytest.mark.parametrize("cfg", [
    sg.AsyncConfig(128, 128, 16, 64, 64, 8, 8, 3, 2),      # 64 thread tiles in a warp tile
    sg.AsyncConfig(128, 128, 12, 64, 32, 8, 8, 3, 2),      # BK not a multiple of 8
    sg.AsyncConfig(128, 128, 16, 64, 32, 8, 8, 1, 2),      # one stage is not a pipeline
    sg.AsyncConfig(64, 32, 8, 32, 16, 4, 4, 3, 2),         # 128 threads, but an 8 x 32 B stage has 64 float4s
], ids=lambda c: c.short())
def test_config_problems_mirror_the_static_asserts(cfg):
    assert cfg.problems(), f"{cfg.short()} should be rejected"
    with pytest.raises(cuda.CompileError, match="static assertion"):
        _nvrtc_resources(sg.CU_ASYNC, "sm_90", cfg.defines)
    with pytest.raises(ValueError, match="tile configuration"):
        sg.plan(cfg, 100, 100, 100)


def test_occupancy_figures():
    assert sgb.occupancy("sm_90", 256, 128, 49920) == (2, "registers")
    assert sgb.occupancy("sm_90", 1024, 32, 8192)[0] == 2
    assert sgb.occupancy("sm_75", 1024, 32, 8192)[0] == 1
    assert sgb.occupancy("sm_90", 256, 64, 120 * 1024) == (1, "shared memory")


def test_resource_table_shows_every_rung(capsys):
    rows = sgb.show_compile_reports("sm_90")
    assert [r["rung"] for r in rows] == [v.name for v in sg.VARIANTS if v.impl == "cuda"]
    assert all(r["spills"] == 0 and r["regs"] > 0 for r in rows)
    assert all(r["blocks/SM"] >= 1 for r in rows)
    rows75 = sgb.resource_rows("sm_75")
    assert sum("needs sm_80+" in r.get("note", "") for r in rows75) == 2
    assert "LDGSTS" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------------------------------
# The plan on GPUs learners have (common.plan), configurations and where they come from
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture
def fresh_config():
    """--set overrides and a simulated GPU do not outlive the test."""
    config.set_overrides([])
    yield
    config.set_overrides([])
    config.forget()
    device.simulate(None)


def _by_variant(launches):
    return {x.variant: x for x in launches}


def test_plan_on_a_t4_skips_the_cp_async_rungs_and_narrows_the_triton_tiles(fresh_config, capsys):
    t4 = device.profile_info("t4")
    p = plan.make(sg, sgb, t4)
    skipped = {v.name: v.why for v in p.skipped}
    assert skipped == {"cuda 10 cp.async pipeline": "needs sm_80+, this GPU is sm_75",
                       "cuda 11 autotuned": "needs sm_80+, this GPU is sm_75"}
    got = _by_variant(p.launches)
    assert "cuda 11 autotuned" not in got and got["cuda 09 double buffering"].grid == (32, 32, 1)
    assert got["cuda 01 naive"].case == "2048^3" and got["cuda 09 double buffering"].case == "4096^3"
    tri = got["triton (ieee fp32)"]
    assert (tri.defines["BLOCK_K"], tri.num_stages, tri.grid) == (16, 2, (1024,))
    assert "cuda 10-11 (cp.async)" in p.predictions
    assert lab_main(sg)(["--plan", "--gpu", "t4"]) == 0
    assert "needs sm_80+, this GPU is sm_75" in capsys.readouterr().out


@pytest.mark.parametrize("slug,block_k,stages", [("rtx-4090", 16, 2), ("rtx-5090", 16, 2), ("a100-sxm4-80gb", 32, 3),
                                                 ("h100-sxm", 32, 3)])
def test_triton_tiles_follow_shared_memory(fresh_config, slug, block_k, stages):
    gpu = device.profile_info(slug)
    tri = _by_variant(sg.launches(gpu))["triton (ieee fp32)"]
    assert (tri.defines["BLOCK_K"], tri.num_stages, tri.config_source) == (block_k, stages, "default")
    assert (gpu.smem_per_block_optin >= sg.WIDE_SMEM) == (block_k == 32)


def test_rung_11_takes_the_tuned_record_of_its_own_gpu_only(fresh_config):
    if not os.path.exists(os.path.join(H200, sg.TUNED + ".json")):
        pytest.skip("no committed tuning record")
    h200, h100 = device.profile_info("h200"), device.profile_info("h100-sxm")
    r11 = _by_variant(sg.launches(h200))["cuda 11 autotuned"]
    assert "tuned on NVIDIA H200" in r11.config_source
    cfg, src = sg.tuned_config(gpu=h200)
    assert r11.dyn_smem == cfg.smem_bytes and r11.defines == cfg.defines and "tuned on NVIDIA H200" in src
    other = _by_variant(sg.launches(h100))
    assert other["cuda 11 autotuned"].config_source == "default"
    assert other["cuda 11 autotuned"].defines == other["cuda 10 cp.async pipeline"].defines == sg.ASYNC_DEFAULT.defines
    assert other["cuda 10 cp.async pipeline"].config_source == ""           # rung 10 keeps the lab's default


def test_set_changes_rung_11_within_the_gpus_shared_memory(fresh_config):
    rtx, h100 = device.profile_info("rtx-4090"), device.profile_info("h100-sxm")
    config.set_overrides(["STAGES=4"])
    r11 = _by_variant(sg.launches(rtx))["cuda 11 autotuned"]
    assert r11.defines["STAGES"] == 4 and r11.dyn_smem == 4 * 16 * (128 + 4 + 128) * 4
    assert r11.config_source == "STAGES: --set STAGES=4; the rest default"
    assert _by_variant(sg.launches(rtx))["cuda 10 cp.async pipeline"].defines["STAGES"] == 3
    assert not any(f.problems for f in plan.verify(plan.make(sg, sgb, rtx)) if f.launch.variant == "cuda 11 autotuned")
    # 8 stages of 128 x 128 x 16 tiles need 130 KiB: more than the 99 KiB a block has on an RTX card
    config.set_overrides(["STAGES=8"])
    assert sg.tuned_config(gpu=h100)[0].STAGES == 8
    with pytest.raises(ValueError, match="shared memory"):
        sg.launches(rtx)
    config.set_overrides(["BLOCK_K=16", "num_stages=4"])
    tri = _by_variant(sg.launches(h100))["triton (ieee fp32)"]
    assert (tri.defines["BLOCK_K"], tri.num_stages) == (16, 4) and "--set BLOCK_K=16" in tri.config_source


def test_tune_space_fits_every_gpu_with_cp_async():
    """Every entry of the autotuner's space fits the shared memory of every profile that has cp.async (sm_80+)."""
    for slug in device.profiles():
        gpu = device.profile_info(slug)
        if course_lab.arch_matches(gpu.arch, sg.ASYNC_ARCHS):
            assert [c.short() for c in sgb.TUNE_SPACE if c.problems(gpu.smem_per_block_optin)] == [], slug


@pytest.mark.parametrize("slug", ["t4", "rtx-3060", "rtx-4090", "h200", "b200", "rtx-5090"])
def test_every_planned_launch_compiles_without_spills(fresh_config, slug):
    """The configurations a learner's GPU gets (the defaults, or the H200's own tuned record) never spill there."""
    fits = plan.verify(plan.make(sg, sgb, device.profile_info(slug)))
    assert fits and [(f.launch.kernel, f.spills) for f in fits if f.launch.impl == "cuda" and f.spills] == []
    assert not any(f.problems for f in fits)


@pytest.mark.skipif(device.has_gpu(), reason="without a GPU only: on a GPU explain() describes the GPU at hand")
def test_explain_shows_the_simulated_gpus_rung_11(fresh_config, capsys):
    sgb.explain(type("Args", (), {"arch": "sm_75"})())
    out = capsys.readouterr().out
    assert "rung 11 would use" in out and "Tesla T4" in out and "needs cp.async" in out


# ---------------------------------------------------------------------------------------------------------------------
# Launch planning and validation (pure Python, before any launch)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("rung", list(range(1, 10)) + [sg.ASYNC_DEFAULT] + [c for c in sgb.TUNE_SPACE[-4:]])
@pytest.mark.parametrize("mnk", [(1, 1, 1), (1, 4097, 3), (127, 129, 131), (4097, 2, 5), (256, 256, 7)])
def test_plan_covers_c_exactly_once(rung, mnk):
    m, n, k = mnk
    p = sg.plan(rung, m, n, k)
    tm, tn = (rung.BM, rung.BN) if isinstance(rung, sg.AsyncConfig) else sg.RUNGS[rung].shape()[1]
    gm, gn = (p.grid[0], p.grid[1]) if (not isinstance(rung, sg.AsyncConfig) and sg.RUNGS[rung].x_walks_m) \
        else (p.grid[1], p.grid[0])
    assert gm * tm >= m > (gm - 1) * tm and gn * tn >= n > (gn - 1) * tn
    threads = p.block[0] * p.block[1] * p.block[2]
    assert threads == (rung.threads if isinstance(rung, sg.AsyncConfig) else int(np.prod(sg.RUNGS[rung].shape()[0])))


def test_plan_rejects_grids_past_the_limits():
    with pytest.raises(ValueError, match="gridDim.y"):
        sg.plan(1, 10, 32 * 65535 + 1, 4)          # naive: N walks gridDim.y
    sg.plan(1, 32 * 65535 + 1, 10, 4)              # ... and M walks gridDim.x, which is large
    with pytest.raises(ValueError, match="gridDim.y"):
        sg.plan(9, 128 * 65535 + 1, 10, 4)
    with pytest.raises(ValueError, match="gridDim.y"):
        sg.plan(sg.ASYNC_DEFAULT, 128 * 65535 + 1, 10, 4)


def test_vec_flags_follow_alignment_and_pitch():
    buf = np.zeros(4096 + 8, np.float32)
    base = buf[(-buf.ctypes.data % 16) // 4:]              # a 16-byte aligned start
    a = base[:64 * 8].reshape(64, 8)
    assert sg.vec_flags(a, a, a, 8, 8) == sg.VEC_A | sg.VEC_B | sg.VEC_C
    assert sg.vec_flags(a, a, a, 8, 6) == sg.VEC_B | sg.VEC_C          # K % 4 != 0: A rows not float4-aligned
    assert sg.vec_flags(a, a, a, 6, 8) == sg.VEC_A                     # N % 4 != 0: B and C rows
    off = base[1:1 + 64 * 8].reshape(64, 8)                             # a view one float in: misaligned
    assert sg.vec_flags(off, a, off, 8, 8) == sg.VEC_B


def test_cuda_wrappers_reject_host_arrays_before_launching():
    a = np.ones((4, 4), np.float32)
    for fn in CUDA_FNS:
        with pytest.raises(TypeError, match=r"a: expected a GPU array.*cupy.asarray"):
            fn(a, a)


def test_triton_wrapper_rejects_bad_input():
    if device.has_gpu():
        pytest.skip("interpreter-only test (the GPU tier checks device arrays)")
    a = np.ones((4, 5), np.float32)
    b = np.ones((5, 3), np.float32)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        sg.sgemm_triton(a, a)
    with pytest.raises(TypeError, match="dtype float64"):
        sg.sgemm_triton(a.astype(np.float64), b.astype(np.float64))
    with pytest.raises(TypeError, match="b: dtype float16"):
        sg.sgemm_triton(a, b.astype(np.float16))
    with pytest.raises(ValueError, match="2-D"):
        sg.sgemm_triton(a.ravel(), b)
    with pytest.raises(ValueError, match="C-contiguous"):
        sg.sgemm_triton(np.ones((5, 4), np.float32).T, b)
    with pytest.raises(ValueError, match="beta != 0"):
        sg.sgemm_triton(a, b, beta=1.0)
    with pytest.raises(ValueError, match="out: expected shape"):
        sg.sgemm_triton(a, b, out=np.empty((3, 4), np.float32))
    big = np.ones((5, 5), np.float32)
    with pytest.raises(ValueError, match="share memory"):
        sg.sgemm_triton(big, big, out=big)
    with pytest.raises(TypeError, match="alpha, beta"):
        sg.sgemm_triton(a, b, alpha="two")


def test_triton_in_interpreter_alpha_beta_and_edges():
    if device.has_gpu():
        pytest.skip("interpreter-only test")
    rng = check.rng(3)
    a = rng.standard_normal((37, 19)).astype(np.float32)
    b = rng.standard_normal((19, 130)).astype(np.float32)
    c0 = rng.standard_normal((37, 130)).astype(np.float32)
    c = c0.copy()
    sg.sgemm_triton(a, b, out=c, alpha=-1.5, beta=0.25)
    ref = -1.5 * (a.astype(np.float64) @ b) + 0.25 * c0
    check.assert_close(c, ref, tol=sg.tolerance((37, 130, 19), "float32"))
    # beta = 0 never reads C: NaN in C must not survive
    out = check.poison(np.empty((37, 130), np.float32))
    check.assert_close(sg.sgemm_triton(a, b, out=out, alpha=2.0), 2.0 * (a.astype(np.float64) @ b), "float32")
    # K = 0: C = beta * C;  M = 0: nothing to do
    z = sg.sgemm_triton(np.empty((3, 0), np.float32), np.empty((0, 4), np.float32))
    assert np.array_equal(z, np.zeros((3, 4), np.float32))
    assert sg.sgemm_triton(np.empty((0, 3), np.float32), b[:3]).shape == (0, 130)


def test_tuned_config_falls_back_on_a_bad_record(tuning_record):
    assert sg.tuned_config("x")[0] == sg.ASYNC_DEFAULT                     # no record
    good = sg.AsyncConfig(128, 256, 16, 64, 32, 8, 8, 3, 1)
    tuning_record(sg.TUNED, good.defines, "x")
    cfg, src = sg.tuned_config("x")
    assert cfg == good and f"tuned on {tuning_record.made_on}" in src
    tuning_record(sg.TUNED, dict(good.defines, WN=48), "x")              # violates the kernel's asserts
    with pytest.warns(UserWarning, match="invalid"):
        assert sg.tuned_config("x")[0] == sg.ASYNC_DEFAULT
    tuning_record(sg.TUNED, slug="x", text="{not json")
    with pytest.warns(UserWarning, match="unreadable"):
        assert sg.tuned_config("x")[0] == sg.ASYNC_DEFAULT


def test_cpu_main_runs_and_reports(capsys):
    if device.has_gpu():
        pytest.skip("the GPU run is exercised by the GPU tier")
    assert lab_main(sg)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "triton (ieee fp32)" in out and f"ok ({min(sg.QUICK_CASES, len(sg.CPU_CHECK_CASES))} cases" in out
    assert "cuda 10 cp.async pipeline" in out and "rung 11 would use" in out
    assert "compiled, not run" in out and "LDGSTS" in out


def test_replot_redraws_the_committed_plots(tmp_path):
    path = os.path.join(H200, sg.LAB + ".json")
    if not os.path.exists(path):
        pytest.skip("no committed results")
    assert lab_main(sg)(["--replot", H200, "--out", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == [sg.LAB + ".png", sg.LAB + "_ladder.png"]


def test_sgemm_plots_say_which_rungs_were_left_out_and_keep_4096_and_4097_apart(tmp_path, monkeypatch):
    """Drawn from the committed JSON: the footnote of the size plot names the rungs not run at each size (read from
    the rows), the ladder marks the rungs not run at 4096^3, and the 4096 / 4097 tick labels do not overlap."""
    import matplotlib.pyplot as plt

    path = os.path.join(H200, sg.LAB + ".json")
    if not os.path.exists(path):
        pytest.skip("no committed results")
    data = report.read_json(path)
    gaps = sgb.left_out(data["rows"])
    assert gaps == [(["cuda 01 naive", "cuda 02 coalesced", "cuda 03 shared-memory tiling"], [3000, 4096, 4097, 8192]),
                    (["cuda 04 1-D register blocking", "cuda 05 2-D register blocking"], [8192])]
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    sgb.plot(data, str(tmp_path))
    sizes_fig, ladder_fig = figs
    foot = " ".join(t.get_text() for t in sizes_fig.texts)
    assert ("left out at 3000, 4096, 4097 and 8192 (too slow there): cuda 01-03 (naive, coalesced, shared-memory "
            "tiling)") in foot and "left out at 8192 (too slow there): cuda 04-05" in foot
    ax = sizes_fig.axes[0]
    r = sizes_fig.canvas.get_renderer()
    ticks = {t.get_text().rstrip("*"): t.get_window_extent(r) for t in ax.get_xticklabels() if t.get_text()}
    assert not ticks["4096"].overlaps(ticks["4097"])
    names = {v.name for v in sg.VARIANTS + sg.PEERS}
    series = [line for line in ax.get_lines() if line.get_label() in names]
    assert len(series) == 14 and len({str(line.get_color()) for line in series}) == 14     # no colour twice
    lax = ladder_fig.axes[0]
    assert [t.get_text() for t in lax.get_yticklabels()][:3] == ["cuda 01 naive", "cuda 02 coalesced",
                                                                 "cuda 03 shared-memory tiling"]
    assert sum("not run at 4096^3" in t.get_text() for t in lax.texts) == 3
    assert "cuda 01 naive: not run at 4096^3" in " ".join(t.get_text() for t in ladder_fig.texts)


def test_triton_kernel_takes_the_shared_grouped_order():
    from common import triton_support

    from phase2_cuda.lab08_sgemm import triton_kernels

    assert triton_kernels.grouped_tile is triton_support.grouped_tile
    assert "grouped_tile(" in open(triton_kernels.__file__).read()


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
ALL_FNS = CUDA_FNS + [sg.sgemm_triton]


def _available(fn) -> bool:
    if fn in (sg.sgemm_10, sg.sgemm_11):
        return sg._async_available()[0]
    return True


def _dev(shape, seed, offset=0):
    """A CuPy float32 matrix of standard-normal values, optionally `offset` floats into a larger buffer."""
    import cupy

    n = int(np.prod(shape))
    buf = cupy.asarray(check.rng(seed).standard_normal(n + offset), dtype=cupy.float32)
    return buf[offset:].reshape(shape)


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mnk", [(127, 129, 131), (1, 4097, 3), (300, 200, 4), (513, 64, 1000)])
def test_alpha_beta_with_a_real_c(fn, mnk):
    if not _available(fn):
        pytest.skip("needs sm_80+")
    m, n, k = mnk
    a, b, c = _dev((m, k), 1), _dev((k, n), 2), _dev((m, n), 3)
    c0 = arrays.to_numpy(c).astype(np.float64)
    want = 1.25 * (arrays.to_numpy(a).astype(np.float64) @ arrays.to_numpy(b)) - 0.5 * c0
    fn(a, b, out=c, alpha=1.25, beta=-0.5)
    check.assert_close(c, want, tol=sg.tolerance(mnk, "float32"), what=fn.__name__)
    # alpha = 0, beta = 1 leaves C as it was (and still reads it)
    c2 = c.copy()
    fn(a, b, out=c2, alpha=0.0, beta=1.0)
    check.assert_close(c2, arrays.to_numpy(c).astype(np.float64), what=fn.__name__)


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("offset", [1, 2, 3])
def test_misaligned_views_take_the_scalar_path(fn, offset):
    if not _available(fn):
        pytest.skip("needs sm_80+")
    m, n, k = 130, 132, 68                    # N and K multiples of 4: only the offset breaks 16-byte alignment
    a, b = _dev((m, k), 4, offset), _dev((k, n), 5, offset)
    out = check.poisoned((m, n + 1), "float32", a)[:, 1:]          # not contiguous: rejected
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(a, b, out=out)
    out = _dev((m, n), 6, offset)
    out.fill(float("nan"))
    assert sg.vec_flags(a, b, out, n, k) == 0
    fn(a, b, out=out)
    want = arrays.to_numpy(a).astype(np.float64) @ arrays.to_numpy(b)
    check.assert_close(out, want, tol=sg.tolerance((m, n, k), "float32"), what=fn.__name__)


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
def test_bad_input_on_gpu(fn):
    import cupy
    import torch

    if not _available(fn):
        pytest.skip("needs sm_80+")
    a, b = _dev((8, 5), 1), _dev((5, 6), 2)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        fn(a, a)
    with pytest.raises(TypeError, match="dtype float64"):
        fn(a.astype(cupy.float64), b.astype(cupy.float64))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(_dev((5, 8), 3).T, b)
    with pytest.raises(ValueError, match="beta != 0"):
        fn(a, b, beta=2.0)
    sq = _dev((6, 6), 4)
    with pytest.raises(ValueError, match="share memory"):
        fn(sq, sq, out=sq)
    if fn is not sg.sgemm_triton:
        with pytest.raises(TypeError, match="from_dlpack"):
            fn(torch.from_dlpack(a), torch.from_dlpack(b))
    assert fn(cupy.empty((0, 5), cupy.float32), b).shape == (0, 6)
    z = fn(cupy.empty((3, 0), cupy.float32), cupy.empty((0, 4), cupy.float32))
    assert float(cupy.abs(z).max()) == 0.0                     # K = 0: C = alpha * 0


@gpu
@pytest.mark.parametrize("fn", [sg.sgemm_03, sg.sgemm_06, sg.sgemm_09, sg.sgemm_10, sg.sgemm_11, sg.sgemm_triton],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("side", ["A", "B"])
def test_offsets_past_2_to_the_31(fn, side):
    """64-bit offsets: A with M x K > 2^31 elements (row * K wraps in 32 bits), or B with K x N > 2^31."""
    import cupy

    if not _available(fn):
        pytest.skip("needs sm_80+")
    big, small, k = (65600, 8, 32768) if side == "A" else (8, 65600, 32768)
    need = 4 * (big * k + k * small + big * small) + 2**30
    if cupy.cuda.runtime.memGetInfo()[0] < need:
        pytest.skip(f"needs {need / 2**30:.0f} GiB free")
    cupy.random.seed(3)
    if side == "A":
        a = cupy.random.standard_normal((big, k), dtype=cupy.float32)
        b = cupy.random.standard_normal((k, small), dtype=cupy.float32)
    else:
        a = cupy.random.standard_normal((small, k), dtype=cupy.float32)
        b = cupy.random.standard_normal((k, big), dtype=cupy.float32)
    out = fn(a, b)
    cupy.cuda.Device().synchronize()
    if side == "A":   # the last rows are where row * K passes 2^31
        rows = np.r_[0, big - 64:big]
        want = cupy.asnumpy(a[cupy.asarray(rows)]).astype(np.float64) @ cupy.asnumpy(b).astype(np.float64)
        got = cupy.asnumpy(out[cupy.asarray(rows)])
    else:             # the last columns: k * N passes 2^31 for the late k
        cols = np.r_[0, big - 64:big]
        want = cupy.asnumpy(a).astype(np.float64) @ cupy.asnumpy(b[:, cupy.asarray(cols)]).astype(np.float64)
        got = cupy.asnumpy(out[:, cupy.asarray(cols)])
    del a, b, out
    cupy.get_default_memory_pool().free_all_blocks()
    check.assert_close(got, want, tol=sg.tolerance((1, 1, k), "float32"), what=f"{fn.__name__} {side}")


@gpu
def test_peers_compute_true_fp32():
    rows = sgb.peer_precision(512)
    peers = {r["variant"]: r for r in rows}
    for name in ("cuBLAS (cupy)", "torch.matmul"):
        assert peers[name]["rel_err_vs_fp64"] < 1e-5, f"{name} is not fp32 (TF32?): {peers[name]}"
    assert "TF32" not in sg._cupy_compute_type().upper()


@gpu
def test_rung_11_uses_the_recorded_configuration():
    cfg, src = sg.tuned_config()
    assert cfg.problems() == []
    if os.path.exists(tuned.path(sg.TUNED)):
        assert "tuned on" in src
    else:
        assert cfg == sg.ASYNC_DEFAULT
