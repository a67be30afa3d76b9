"""Lab 4.3 (tensor cores), rungs 01 and 02 on the CPU: what the compiler made of kernels.cu (no spills, the HMMA,
ldmatrix and cp.async counts of every config), the configurations (valid, fitting every GPU with mma.sync, bad ones
refused by name before any launch), the variants' listing, the plan on GPUs learners have and --set, the CLI, the
compile-report table and the plots. The rest of the lab's tests, by topic:
  test_phase4_lab03_tensor_cores_models.py       NumPy models of rung 02 (swizzle, ldmatrix, the XT pipeline, mma.sync)
  test_phase4_lab03_tensor_cores_triton.py       the Triton rung in the interpreter, argument validation, tolerance
  test_phase4_lab03_tensor_cores_gpu.py          GPU tier of rungs 01, 02 and Triton
  test_phase4_lab03_tensor_cores_wgmma*.py       rung 03 (wgmma + TMA): compile, layout, host side, builds, GPU
  test_phase4_lab03_tensor_cores_modules.py      the lab's modules: sizes, one-way imports, the names others use"""
import json
import os

import numpy as np
import pytest

from common import config, cuda, device, lab, plan
from phase4_optimization.lab03_tensor_cores import bench as tcb
from phase4_optimization.lab03_tensor_cores import lab as tc
from tests.helpers import H200, lab_main

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
    rep = cuda.compile_report(tc.CU, arch, defines=tc.defines("bfloat16", "bfloat16", cfg))
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
    rep = cuda.compile_report(tc.CU, "sm_90", defines=tc.defines("float16", "float32"))
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


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the variants
# ---------------------------------------------------------------------------------------------------------------------
def test_cuda_wrappers_refuse_to_run_without_a_gpu():
    if device.has_gpu():
        pytest.skip("a GPU is present")
    a = np.zeros((4, 4), np.float16)
    for fn in (tc.gemm_wmma, tc.gemm_mma):
        with pytest.raises(TypeError, match="expected a GPU array"):   # validation runs before the GPU check
            fn(a, a)


def test_the_tuning_record_is_named_after_the_lab():
    """mma_configs.py names the --tune record without importing lab.py: it must stay LAB + "_tuned"."""
    assert tc.TUNED == tc.LAB + "_tuned"


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
    assert cl2 and all(x.defines["CLUSTER"] == 2 and x.defines["EPI_TMA"] == 0 for x in cl2)


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
    assert lab_main(tc)(["--quick", "--no-bench"]) == 0
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
