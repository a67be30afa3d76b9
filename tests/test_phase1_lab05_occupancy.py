"""Lab 1.5 occupancy: what the compiler made of the scale kernels and the register probe, occupancy forced with
dynamic shared memory, the documents' worked examples, the Triton kernel in the interpreter, bad input before any
launch, --record-fixture without a GPU, the calculator plot and the plots redrawn from the committed JSON; on a GPU the
forcing and the calculator against the driver, and the scale kernels on views and at every occupancy. Also the lab's
plan on GPUs of 32, 48 and 64 warps per SM (the sweep's points follow the SM and the kernels' registers), --set on
occ_02's UNROLL, and the calculator plot of every architecture, sm_100 and sm_120 included.
(The calculator itself, common/occupancy.py, is tested in tests/test_common_occupancy.py.)"""
import argparse
import os

import numpy as np
import pytest

from common import check, config, cuda, device, plan
from common import occupancy as oc
from phase1_architecture.lab05_occupancy import bench as l5b
from phase1_architecture.lab05_occupancy import lab as l5
from tests.helpers import lab_main, replot

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (a GPU is present)")
SASS = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def test_probe_registers_follow_nlive_and_the_cap():
    free64 = cuda.compile_report(l5.CU, "sm_90")["occ_probe_registers"]
    free128 = cuda.compile_report(l5.CU, "sm_90", defines={"NLIVE": 128})["occ_probe_registers"]
    capped = cuda.compile_report(l5.CU, "sm_90", options=("--maxrregcount=32",),
                                 defines={"NLIVE": 128})["occ_probe_registers"]
    assert free64.spills == 0 and free64.registers >= 64
    assert free128.registers > free64.registers
    assert capped.registers <= 32 and capped.spill_stores > 0
    static = cuda.compile_report(l5.CU, "sm_90", defines={"STATIC_SMEM": 16384})["occ_probe_registers"]
    assert static.smem_bytes == 16384 and static.barriers == 1


@SASS
def test_ilp_scale_kernel_uses_128_bit_accesses():
    rep = cuda.compile_report(l5.CU, "sm_90")
    k2 = rep["occ_02_scale_float4_ilp"]
    assert k2.sass_counts.get("LDG.128", 0) >= l5.UNROLL and k2.sass_counts.get("STG.128", 0) >= l5.UNROLL
    assert rep["occ_01_scale_scalar"].sass_counts.get("LDG.128", 0) == 0


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: forcing an occupancy, the worked examples, the plots
# ---------------------------------------------------------------------------------------------------------------------
class _Kernel:
    """What forced_config reads of a RawKernel."""
    num_regs = 14
    shared_size_bytes = 0


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120"])
def test_forced_occupancy_gives_exactly_the_warps_asked_for(arch):
    a = device.arch_info(arch)
    for w in (1, 2, 4, 8, 16, 24, 32, 48, 64):
        if w > a.max_warps_per_sm:
            continue
        cfg = l5.forced_config(w, _Kernel, arch)
        assert cfg["blocks_per_sm"] * cfg["threads"] // 32 == w and cfg["blocks_per_sm"] <= a.max_blocks_per_sm
        o = oc.occupancy(arch, cfg["threads"], 14, 0, cfg["dyn"], max_dynamic_smem=max(cfg["dyn"],
                                                                                         a.smem_per_block_default))
        assert o.blocks_per_sm == cfg["blocks_per_sm"] and o.limiter in ("shared memory", "blocks")
    assert l5.max_forced_warps(_Kernel, arch) == a.max_warps_per_sm
    with pytest.raises(ValueError, match="warps_per_sm"):
        l5.forced_config(3, _Kernel, arch)
    with pytest.raises(ValueError, match="warps_per_sm"):
        l5.forced_config(a.max_warps_per_sm + 2, _Kernel, arch)


def test_forced_occupancy_picks_bigger_blocks_where_the_sm_holds_few():
    """48 warps on an sm_86 SM (16 blocks at most): 12 blocks of 128 threads, not 24 of 64."""
    cfg = l5.forced_config(48, _Kernel, "sm_86")
    assert (cfg["threads"], cfg["blocks_per_sm"]) == (128, 12)
    assert (l5.forced_config(48, _Kernel, "sm_89")["threads"], l5.forced_config(64, _Kernel, "sm_90")["threads"]) == \
        (64, 64)


class _Heavy:
    """A kernel of 64 registers: 8 warps per SM sub-partition, 32 warps per SM."""
    num_regs = 64
    shared_size_bytes = 0


def test_sweep_points_follow_the_sm_and_the_registers():
    assert l5.warp_points(device.profile_info("h200"), _Kernel) == list(l5.WARP_POINTS)
    assert l5.warp_points(device.profile_info("rtx-4090"), _Kernel) == [1, 2, 4, 8, 16, 24, 32, 48]
    assert l5.warp_points(device.profile_info("t4"), _Kernel, quick=True) == [1, 4, 16, 32]
    assert l5.warp_points(device.profile_info("rtx-5090"), _Heavy) == [1, 2, 4, 8, 16, 24, 32]


@pytest.mark.parametrize("slug", ["t4", "rtx-5090", "h100-sxm"])
def test_plan_launches_every_point_the_gpu_holds(slug):
    g = device.profile_info(slug)
    p = plan.make(l5, l5b, g)
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        sweep = [x for x in p.launches if x.kernel == name and x.case.startswith("the sweep")]
        top = l5.max_forced_warps(l5.resources(g, name), g.arch)
        assert len(sweep) == len(l5.warp_points(g, l5.resources(g, name))) and top <= g.max_threads_per_sm // 32
        for x in sweep:
            w = int(x.case.split(": ")[1].split(" ")[0])
            assert x.grid[0] * x.threads // 32 == g.sms * w        # one wave of exactly w warps on every SM
            assert x.dyn_smem + l5.resources(g, name).shared_size_bytes <= g.smem_per_block_optin
    one = next(x for x in p.launches if x.variant == "cuda 01 scalar, 1 warp/SM")
    assert one.grid == (g.sms,) and one.threads == 32 and one.dyn_smem > 0
    assert p.predictions["occ_02: the sweep's warps per SM"].endswith(
        str(l5.max_forced_warps(l5.resources(g, "occ_02_scale_float4_ilp"), g.arch)))


def test_set_unroll_changes_occ_02_and_says_so():
    try:
        config.set_overrides(["UNROLL=8"])
        x = next(x for x in plan.make(l5, l5b, device.profile_info("a100")).launches
                 if x.variant == "cuda 02 float4 x4, full occupancy")
        assert x.defines == {"UNROLL": 8} and x.config_source == "--set UNROLL=8"
        assert l5.bytes_in_flight_per_warp("occ_02_scale_float4_ilp") == 32 * 16 * 8
        config.set_overrides(["UNROLL=3"])
        with pytest.raises(ValueError, match="UNROLL in 1, 2, 4, 8, 16"):
            l5.unroll_config()
    finally:
        config.set_overrides([])


def test_worked_examples_table_agrees_with_the_documents():
    rows = l5.worked_examples()
    assert (rows[0]["calculator"].startswith("2 blocks (32 warps)")
            and rows[1]["calculator"].startswith("1 block (16 warps)"))
    assert rows[2]["calculator"] == "12 blocks, 75.0%" and rows[3]["calculator"] == "4 blocks, 62.5%"


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert lab_main(l5)(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out and "Worked examples" in out and "maxrregcount" in out


def test_calculator_plot_without_a_gpu(tmp_path, capsys):
    if device.has_gpu():
        pytest.skip("the calculator plot is drawn by explain() only without a GPU")
    args = argparse.Namespace(record_fixture=None, arch="sm_86", plot=True, quick=False, out=str(tmp_path))
    l5b.explain(args)
    assert "limited by registers" in capsys.readouterr().out
    assert os.path.getsize(tmp_path / f"{l5.LAB}_calculator_sm_86.png") > 10_000


def test_replot_draws_the_committed_json(tmp_path):
    replot(lab_main(l5), tmp_path)
    for name in (f"{l5.LAB}.png", f"{l5.LAB}_calculator_sm_90.png"):
        assert os.path.getsize(tmp_path / name) > 10_000


@pytest.mark.parametrize("arch", ["sm_75", "sm_100", "sm_103", "sm_120"])
def test_calculator_plot_of_every_architecture(arch, tmp_path):
    path = l5b.plot_curves(arch, str(tmp_path / f"calc_{arch}.png"))
    assert os.path.getsize(path) > 10_000
    regs, occ = l5.curves(arch)["registers (256 threads, no shared memory)"]
    assert occ[0] == 1.0 and 0 < occ[-1] < 0.5


def test_plots_from_a_document_of_an_sm_120_gpu(tmp_path):
    """A GPU of 48 warps per SM: the sweep to 48 and the driver's points are drawn against 48 warps."""
    rows = [{"variant": v, "warps_per_sm": w, "gbps": 40.0 * w, "predicted_gbps": 42.0 * w, "ceiling_gbps": 1700.0,
             "shape": [2**26]} for v in ("cuda 01 scalar (128 B/warp in flight)", "cuda 02 float4 x4 (2 KiB/warp "
                                         "in flight)") for w in (1, 2, 4, 8, 16, 24, 32, 48)]
    cases = [{"threads": 256, "smem_dynamic": 0, "regs": r, "blocks": b} for r, b in ((32, 6), (64, 4))]
    data = {"gpu": "some sm_120 GPU", "rows": rows, "latency_ns": 400.0, "live_cases": cases,
            "device": {"arch": "sm_120", "max_threads_per_sm": 1536}}
    assert l5b._driver_points(cases, 48)["registers (256 threads, no shared memory)"] == ([32, 64], [1.0, 32 / 48])
    paths = l5b.plot(data, str(tmp_path))
    assert [os.path.basename(p) for p in paths] == [f"{l5.LAB}.png", f"{l5.LAB}_calculator_sm_120.png"]


def test_driver_points_are_the_256_thread_cases():
    cases = [{"threads": 256, "smem_dynamic": 0, "regs": 32, "blocks": 8},
             {"threads": 256, "smem_dynamic": 100, "regs": 32, "blocks": 1},
             {"threads": 64, "smem_dynamic": 0, "regs": 64, "blocks": 8}]
    assert l5b._driver_points(cases, 64) == {"registers (256 threads, no shared memory)": ([32], [1.0])}
    assert l5b._driver_points([], 64) == {}


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: Triton in the interpreter, bad input
# ---------------------------------------------------------------------------------------------------------------------
@cpu_only
def test_triton_scale_small_cases():
    s = l5.scale_triton(np.array([1.0, -2.0, 3.0], np.float32), 2.5)
    assert np.array_equal(s, np.array([2.5, -5.0, 7.5], np.float32))


def test_cuda_wrappers_reject_host_arrays_before_launching():
    for fn in (l5.scale_cuda_01, l5.scale_cuda_02):
        with pytest.raises(TypeError, match="expected a GPU array"):
            fn(np.ones(8, np.float32), 2.0)


def test_record_fixture_needs_a_gpu(capsys):
    if device.has_gpu():
        pytest.skip("a GPU is present")
    with pytest.raises(SystemExit) as e:
        lab_main(l5)(["--record-fixture", "/tmp/never-written.json"])
    assert e.value.code == 2 and "needs a GPU" in capsys.readouterr().err
    assert not os.path.exists("/tmp/never-written.json")


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("w", list(l5.WARP_POINTS) + [None])
def test_forced_occupancy_matches_the_driver(w):
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        k = l5.kernel(name)
        if w is not None and w > l5.max_forced_warps(k, device.info().arch):
            continue                          # more warps than this GPU's SM (or the kernel's registers) allow
        cfg = l5.forced_config(w, k, device.info().arch)
        drv, _ = l5b.driver_blocks(k, cfg["threads"], cfg["dyn"])
        assert drv == cfg["blocks_per_sm"], (name, w, cfg)


@gpu
def test_live_calculator_agreement():
    cases, bad = l5b.live_agreement(quick=True)
    assert len(cases) >= 12 and not bad, bad[:5]


@gpu
@pytest.mark.parametrize("w", [None, 1, 6])
@pytest.mark.parametrize("offset", [0, 1])
def test_scale_kernels_views_and_occupancies(w, offset):
    x, alpha = l5.make_inputs(100_003, "float32", check.rng(3), "cuda")
    v = x[offset:]
    for fn in (l5.scale_cuda_01, l5.scale_cuda_02):
        out = check.poisoned(v.shape, "float32", v)
        fn(v, alpha, out=out, warps_per_sm=w)
        check.assert_close(out, l5.reference(v.get(), alpha), "float32")


@gpu
def test_scale_bad_input_on_device():
    import cupy

    x = cupy.ones(16, cupy.float32)
    for fn in (l5.scale_cuda_01, l5.scale_cuda_02):
        with pytest.raises(TypeError, match="alpha"):
            fn(x, "2")
        with pytest.raises(ValueError, match="C-contiguous"):
            fn(x[::2], 2.0)
        with pytest.raises(ValueError, match="warps_per_sm"):
            fn(x, 2.0, warps_per_sm=3)
        assert fn(cupy.empty(0, cupy.float32), 2.0).shape == (0,)
