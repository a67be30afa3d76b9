"""Lab 1.1 device tour: the known errors and their fixes, the version rules, the architecture table, what runs without
a GPU, the copy in the interpreter, main(["--quick"]), the plot redrawn from the committed JSON; on a GPU the smoke
test of every layer and the ARCHS table against the device."""
import glob
import os

import numpy as np
import pytest

from common import device, report
from phase1_architecture.lab01_device_tour import bench as l1b
from phase1_architecture.lab01_device_tour import lab as l1
from tests.helpers import replot

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (a GPU is present)")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier
# ---------------------------------------------------------------------------------------------------------------------
def test_known_errors_are_explained():
    msgs = ["cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an unsupported toolchain.",
            "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for execution on the device",
            "nvrtc: error: invalid value for --gpu-architecture (-arch)",
            'DynamicLibNotFoundError: Failure finding "libnvrtc.so.13"']
    for m in msgs:
        got = l1.explain_error(m)
        assert got is not None and got[0] and got[1], m
    assert l1.explain_error("a perfectly ordinary message") is None


def test_version_rules():
    ok = l1.version_checks({"driver supports CUDA": "13.0", "CUDA runtime (CuPy's)": "13.2", "nvrtc": "13.0",
                            "torch built for CUDA": "13.0"})
    assert ok and all(r["ok"] for r in ok)
    old = l1.version_checks({"driver supports CUDA": "12.4", "CUDA runtime (CuPy's)": "13.0", "nvrtc": "13.0",
                             "torch built for CUDA": "12.8"})
    assert [r["ok"] for r in old] == [False, False, True]


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"])
def test_device_tour_table_for_each_arch(arch):
    rows = {r["property"]: r["value"] for r in l1.arch_rows(arch)}
    peak = rows["peak TFLOP/s, FP32 (SMs x lanes x 2 x clock)"]
    ds = device.datasheet(device.arch_info(arch).example_gpu)
    if ds:
        assert peak == pytest.approx(ds["fp32_tflops"], rel=0.03)
    assert rows["registers per thread at full occupancy"] in (32, 42, 64)


def test_what_runs_here_counts_the_kernel_files_in_lab_folders():
    rows = {r["what"]: r["here"] for r in l1.what_runs_here("sm_80")}
    claimed, total = (int(v) for v in rows["kernel files that target sm_80"].split(" of "))
    every = glob.glob(os.path.join(report.ROOT, "phase*", "**", "*.cu"), recursive=True)
    assert any(p.endswith(os.path.join("lab07_softmax", "kernels.cu")) for p in every)
    assert total == len(every) and 0 < claimed <= total


@cpu_only
def test_copy_of_nothing_and_the_smoke_test_in_the_interpreter():
    assert l1.copy_triton(np.ones(0, np.float32)).shape == (0,)
    rows = l1.smoke_tests("sm_80")
    assert [r["result"] for r in rows if not r["check"].startswith("  ")] == ["ok", "ok"], rows
    assert "vadd_01 for sm_80" in rows[0]["detail"]


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert l1.main(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out or "No GPU" in out
    assert "One action per layer" in out and "What runs on this machine" in out


def test_replot_draws_the_committed_json(tmp_path):
    replot(l1.main, tmp_path)
    assert os.path.getsize(tmp_path / f"{l1.LAB}.png") > 10_000
    # and from a minimal document of the same shape (no datasheet figure, no ceiling probe)
    data = {"gpu": "some GPU", "bandwidth": {"theoretical_gbps": 1000.0},
            "rows": [{"variant": "triton copy", "shape": [2**20], "gbps": 800.0}]}
    assert [os.path.basename(p) for p in l1b.plot(data, str(tmp_path))] == [f"{l1.LAB}.png"]


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
def test_device_tour_smoke_and_table():
    rows = l1.smoke_tests(device.info().arch)
    assert all(r["result"] != "FAILED" for r in rows), rows
    assert l1.table_mismatches() == []
    assert all(r["ok"] for r in l1.version_checks(l1.versions()))
