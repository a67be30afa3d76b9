"""Lab 4.4, tiling strategy: the reuse and wave models, the sweep grids, the compile table, the plots and their redraw
from the committed JSON (CPU tier); the sweeps' kernels on the GPU tier through tests/test_labs.py and the GPU test
below."""
import json
import os

import pytest

from common import config, cuda, device, plan
from phase4_optimization.lab04_tiling_strategy import bench as tsb
from phase4_optimization.lab04_tiling_strategy import lab as ts
from tests.helpers import H200, lab_main

tc = ts.tc          # lab 4.3, through common.lab.lab_module (the GEMMs this lab tiles)


@pytest.mark.parametrize("bm,bn,want", [(64, 64, 32.0), (128, 128, 64.0), (128, 256, 2 * 128 * 256 / (2 * 384)),
                                        (256, 256, 128.0), (1, 1, 0.5)])
def test_tile_intensity(bm, bn, want):
    assert ts.tile_intensity(bm, bn) == pytest.approx(want)


def test_waves_by_hand():
    # 4096^2 in 128 x 256 tiles: 32 x 16 = 512 tiles on 132 slots -> 4 waves, the last 116/132 full
    w = ts.waves(4096, 4096, 128, 256, 132)
    assert (w["tiles"], w["wave_count"]) == (512, 4)
    assert w["efficiency"] == pytest.approx(512 / 528)
    assert w["last_wave_fill"] == pytest.approx(116 / 132)
    # one more tile row and column: 33 x 17 = 561 tiles -> a 5th wave with 33 tiles
    w = ts.waves(4224, 4224, 128, 256, 132)
    assert (w["tiles"], w["wave_count"]) == (561, 5)
    assert w["efficiency"] == pytest.approx(561 / 660)
    # exactly full waves, and a grid smaller than one wave
    assert ts.waves(132 * 64, 64, 64, 64, 132)["efficiency"] == 1.0
    assert ts.waves(1, 1, 128, 128, 132) == {"tiles": 1, "waves": 1 / 132, "wave_count": 1,
                                             "efficiency": 1 / 132, "last_wave_fill": 1 / 132}


@pytest.mark.parametrize("bad", [dict(m=0), dict(bm=-1), dict(slots=0), dict(n=2.5)])
def test_waves_rejects_bad_arguments(bad):
    args = dict(m=10, n=10, bm=4, bn=4, slots=2)
    args.update(bad)
    with pytest.raises(ValueError, match=next(iter(bad))):
        ts.waves(**args)


def test_sweep_grids_only_hold_configs_that_fit():
    hopper = device.profile_info("h100-sxm")
    tri = ts.triton_grid(gpu=hopper)
    assert tri and all(ts.triton_smem(c) <= hopper.smem_per_block_optin for c in tri)
    assert {(c["BLOCK_M"], c["BLOCK_N"]) for c in tri} >= {(64, 64), (128, 256), (256, 128)}
    mma = ts.mma_grid(gpu=hopper)
    assert mma and all(tc.config_problems(c, gpu=hopper) == [] for c in mma)
    # a smaller shared memory (sm_80's 163 KiB) drops configs but never adds one
    assert len(ts.mma_grid(163 * 1024, gpu=hopper)) <= len(mma)


def test_sweep_grids_follow_the_gpus_shared_memory():
    """The grids of a GPU that gives a block 99 KiB (an RTX 4090) hold fewer cells, each within 99 KiB; the largest
    Triton tiles of the Hopper grid are not among them."""
    rtx, hopper = device.profile_info("rtx-4090"), device.profile_info("h200")
    small, big = ts.triton_grid(gpu=rtx), ts.triton_grid(gpu=hopper)
    assert small and len(small) < len(big) and all(ts.triton_smem(c) <= 99 * 1024 for c in small)
    assert not any(c["BLOCK_M"] == 256 and c["BLOCK_N"] == 256 for c in small)
    m_small, m_big = ts.mma_grid(gpu=rtx), ts.mma_grid(gpu=hopper)
    assert m_small and len(m_small) <= len(m_big) and all(tc.config_smem(c) <= 99 * 1024 for c in m_small)


def test_compile_table_on_cpu():
    """Registers and shared memory per tile shape from NVRTC, and blocks per SM from the occupancy calculator."""
    if cuda.find_cuobjdump() is None:
        pytest.skip("cuobjdump not found (it ships with the triton wheel)")
    rows = tsb.compile_table("sm_90", [tc._cfg(64, 128, 32, 32, 64, 4), tc._cfg(128, 256, 32, 64, 64, 4)],
                             device.profile_info("h100-sxm"))
    small, big = rows
    assert small["spills"] == big["spills"] == 0
    assert small["HMMA"] > 0 and big["HMMA"] > 0
    assert big["warps"] == 8 and small["warps"] == 4
    assert big["regs"] >= small["regs"]                     # 128 accumulators per thread vs 64
    assert small["blocks/SM"] >= big["blocks/SM"] >= 1


def _fake_rows():
    rows = [{"sweep": "triton", "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": 64, "num_warps": 8, "num_stages": 3,
             "tflops": 100.0 + bm + bn, "ok": True} for bm in ts.TILE_SIDES for bn in ts.TILE_SIDES if bm * bn < 65536]
    rows += [{"sweep": "mma", "BM": 128, "BN": 128, "BK": 32, "WM": 64, "WN": 64, "STAGES": 4, "tflops": 300.0,
              "ok": True}]
    rows += [{"sweep": "waves", "M=N": n, "waves": n / 1000, "predicted_eff": 0.9, "measured_eff": 0.88}
             for n in (3840, 3968)]
    return rows


def test_plots_from_recorded_rows(tmp_path):
    rows = _fake_rows()
    for kind in ("triton", "mma"):
        p = tsb.heatmap(rows, kind, str(tmp_path / f"{kind}.png"), peer_tflops=700.0)
        assert os.path.getsize(p) > 1000
    assert os.path.getsize(tsb.wave_plot(rows, str(tmp_path / "w.png"))) > 1000


def test_committed_results_are_consistent():
    """If the H200 results are committed: every timed config was spot-checked, and the wave table's prediction is
    the model's (recomputed here)."""
    path = os.path.join(H200, f"{ts.LAB}.json")
    if not os.path.exists(path):
        pytest.skip("no committed H200 results for lab 4.4 yet")
    rows = json.load(open(path))["rows"]
    timed = [r for r in rows if r.get("sweep") in ("triton", "mma") and r.get("tflops")]
    assert timed and all(r["rel_err"] < 1e-2 for r in timed)
    for r in (r for r in rows if r.get("sweep") == "waves"):
        w = ts.waves(r["M=N"], r["M=N"], r["BLOCK_M"], r["BLOCK_N"], r["slots"])
        assert r["predicted_eff"] == pytest.approx(w["efficiency"]) and r["tiles"] == w["tiles"]


def test_cli_quick(tmp_path, capsys):
    assert lab_main(ts)(["--quick", "--no-bench", "--out", str(tmp_path)]) == 0
    if cuda.find_cuobjdump() is not None:
        err = capsys.readouterr().err
        assert "compiling 5 mma.sync tile shapes for sm_90 [1/5]" in err       # the compile sweep shows progress


def test_replot_redraws_the_committed_plots(tmp_path):
    path = os.path.join(H200, f"{ts.LAB}.json")
    if not os.path.exists(path):
        pytest.skip("no committed H200 results for lab 4.4 yet")
    assert lab_main(ts)(["--replot", H200, "--out", str(tmp_path)]) == 0
    for kind in ("triton", "mma", "waves"):
        assert (tmp_path / f"{ts.LAB}_{kind}.png").stat().st_size > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# The plan on GPUs learners have (common.plan), and --set
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture
def no_overrides():
    config.set_overrides([])
    yield
    config.set_overrides([])


def test_plan_on_a_99_kib_gpu_keeps_the_large_tile_with_fewer_stages(no_overrides):
    """An RTX 4090 (sm_89, 99 KiB a block, 128 SMs): the large Triton tile keeps its shape with 2 stages (3 need
    144 KiB), both mma.sync tiles run as they are, and the wave model counts its 128 SMs."""
    g = device.profile_info("rtx-4090")
    p = plan.make(ts, tsb, g)
    assert p.running == [v.name for v in ts.VARIANTS] + ["torch.matmul (cuBLAS)"]
    large = next(x for x in p.launches if x.variant == "triton tl.dot 128x256x64")
    assert large.num_stages == 2 and large.config_source == "default" and large.grid == (32 * 16,)
    assert ts.triton_smem(dict(ts.T_LARGE, num_stages=3)) > g.smem_per_block_optin
    assert p.predictions["128x256 tiles at M = N = 4096, one block per SM"].startswith("512 tiles = 4.00 waves of 128")
    on_h200 = plan.make(ts, tsb, device.profile_info("h200"))
    assert next(x for x in on_h200.launches if x.variant == "triton tl.dot 128x256x64").num_stages == 3
    assert "3.88 waves of 132" in on_h200.predictions["128x256 tiles at M = N = 4096, one block per SM"]


def test_plan_on_a_t4_runs_only_cublas(no_overrides):
    p = plan.make(ts, tsb, device.profile_info("t4"))
    assert p.running == ["torch.matmul (cuBLAS)"] and p.launches == []
    assert all("sm_80" in v.why for v in p.skipped) and "none on sm_75" in p.predictions["sweeps"]


def test_set_large_stages_changes_the_launch_and_says_so(no_overrides):
    g = device.profile_info("l4")
    config.set_overrides(["LARGE_STAGES=1"])
    x = next(x for x in ts.launches(g) if x.variant == "triton tl.dot 128x256x64")
    assert x.num_stages == 1 and x.config_source == "--set LARGE_STAGES=1"
    config.set_overrides(["LARGE_STAGES=3"])                 # 144 KiB: more than the L4's 99 KiB a block
    with pytest.raises(ValueError, match="LARGE_STAGES"):
        ts.triton_large_config(g)
    assert ts.triton_large(device.profile_info("a100-sxm4-80gb"))["num_stages"] == 3


@pytest.mark.gpu
def test_sweep_runs_and_checks_on_gpu():
    rows = tsb.sweep("triton", size=512, rep_ms=5, limit=2) + tsb.sweep("mma", size=512, rep_ms=5, limit=2)
    assert len(rows) == 4
    assert all(r.get("ok") for r in rows), rows
    assert device.has_gpu()
