"""Lab 1.5 occupancy: what the compiler made of the scale kernels and the register probe, occupancy forced with
dynamic shared memory, the documents' worked examples, the Triton kernel in the interpreter, bad input before any
launch, --record-fixture without a GPU, the calculator plot and the plots redrawn from the committed JSON; on a GPU the
forcing and the calculator against the driver, and the scale kernels on views and at every occupancy.
(The calculator itself, common/occupancy.py, is tested in tests/test_common_occupancy.py.)"""
import argparse
import os

import numpy as np
import pytest

from common import check, cuda, device
from common import occupancy as oc
from phase1_architecture.lab05_occupancy import bench as l5b
from phase1_architecture.lab05_occupancy import lab as l5
from tests.helpers import replot

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


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"])
def test_forced_occupancy_gives_exactly_the_warps_asked_for(arch):
    a = device.arch_info(arch)
    for w in (1, 2, 4, 8, 16):
        cfg = l5.forced_config(w, _Kernel, arch)
        assert cfg["blocks_per_sm"] * cfg["threads"] // 32 == w
        o = oc.occupancy(arch, cfg["threads"], 14, 0, cfg["dyn"], max_dynamic_smem=max(cfg["dyn"],
                                                                                         a.smem_per_block_default))
        assert o.blocks_per_sm == cfg["blocks_per_sm"] and o.limiter in ("shared memory", "blocks")
    with pytest.raises(ValueError, match="warps_per_sm"):
        l5.forced_config(3, _Kernel, arch)
    with pytest.raises(ValueError, match="warps_per_sm"):
        l5.forced_config(a.max_warps_per_sm + 2, _Kernel, arch)


def test_worked_examples_table_agrees_with_the_documents():
    rows = l5.worked_examples()
    assert rows[0]["calculator"].startswith("2 blocks (32 warps)") and rows[1]["calculator"].startswith("1 block (16 warps)")
    assert rows[2]["calculator"] == "12 blocks, 75.0%" and rows[3]["calculator"] == "4 blocks, 62.5%"


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert l5.main(["--quick", "--out", str(tmp_path)]) == 0
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
    replot(l5.main, tmp_path)
    for name in (f"{l5.LAB}.png", f"{l5.LAB}_calculator_sm_90.png"):
        assert os.path.getsize(tmp_path / name) > 10_000


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
        l5.main(["--record-fixture", "/tmp/never-written.json"])
    assert e.value.code == 2 and "needs a GPU" in capsys.readouterr().err
    assert not os.path.exists("/tmp/never-written.json")


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("w", list(l5.WARP_POINTS) + [None])
def test_forced_occupancy_matches_the_driver(w):
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        k = cuda.get_kernel(l5.CU, name)
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
