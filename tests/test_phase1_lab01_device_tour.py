"""Lab 1.1 device tour: the known errors and their fixes, the version rules, every GPU profile's table and what follows
from it, the table against a device that agrees or not, what runs without a GPU, the copy in the interpreter, the
lab's plan on a T4 and on a GPU with little memory, --set on the copy's configuration, main(["--quick"]), the plot
redrawn from the committed JSON; on a GPU the smoke test of every layer and the course's table against the device."""
import dataclasses
import glob
import os

import numpy as np
import pytest

from common import config, device, plan, report
from phase1_architecture.lab01_device_tour import bench as l1b
from phase1_architecture.lab01_device_tour import lab as l1
from tests.helpers import lab_main, replot

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


@pytest.mark.parametrize("slug", device.profiles())
def test_device_tour_table_for_each_profile(slug):
    """SMs x FP32 lanes x 2 x clock reproduces every profile's datasheet FP32 figure."""
    g = device.profile_info(slug)
    rows = {r["property"]: r["value"] for r in l1.gpu_rows(g)}
    assert rows["peak TFLOP/s, FP32 (SMs x lanes x 2 x clock)"] == pytest.approx(g.datasheet["fp32_tflops"], rel=0.03)
    assert rows["registers per thread at full occupancy"] in (32, 42, 64)
    assert rows["FP32 lanes / SM"] == (64 if g.arch in ("sm_75", "sm_80") else 128)
    assert rows["SMs"] == g.sms and g.name in rows["name"]


@pytest.mark.parametrize("arch", sorted(device.ARCHS))
def test_arch_rows_describe_the_profile_that_stands_for_the_arch(arch):
    rows = {r["property"]: r["value"] for r in l1.arch_rows(arch)}
    g = device.current(arch)
    assert g.name in rows["name"]
    assert ("note" in rows) == (g.arch != arch)        # sm_103 has no profile of its own: the B200 stands for it


def _as_device(slug, **changes):
    """A profile as if read off a device (not simulated), with some figures changed."""
    return dataclasses.replace(device.profile_info(slug), simulated=False, **changes)


def test_table_mismatches_and_notes_against_a_device():
    assert l1.table_mismatches(_as_device("h200")) == [] and l1.profile_notes(_as_device("h200")) == []
    # a board that reports a narrower bus and another memory clock than the profile: notes, not mismatches
    d = _as_device("h200", mem_bus_bits=6016, mem_clock_mhz=3201.0)
    assert l1.table_mismatches(d) == []
    assert [n.split(":")[0] for n in l1.profile_notes(d)] == ["mem_clock_mhz", "mem_bus_bits"]
    # an SM count or L2 other than the profile's, or limits other than the architecture's: mismatches
    bad = l1.table_mismatches(_as_device("t4", sms=38, smem_per_sm=48 * 1024))
    assert [b.split(":")[0] for b in bad] == ["smem_per_sm", "sms"] and "profile t4" in bad[1]
    unknown = _as_device("rtx-4090", name="Some Unlisted GPU", datasheet={})
    assert l1.table_mismatches(unknown) == [] and "no profile" in l1.profile_notes(unknown)[0]


def test_what_runs_here_counts_the_kernel_files_in_lab_folders():
    rows = {r["what"]: r["here"] for r in l1.what_runs_here("sm_80")}
    claimed, total = (int(v) for v in rows["kernel files that target sm_80"].split(" of "))
    every = glob.glob(os.path.join(report.ROOT, "phase*", "**", "*.cu"), recursive=True)
    assert any(p.endswith(os.path.join("lab07_softmax", "kernels.cu")) for p in every)
    assert total == len(every) and 0 < claimed <= total


def test_plan_on_a_t4_and_on_a_gpu_with_little_memory():
    t4 = device.profile_info("t4")
    p = plan.make(l1, l1b, t4)
    (x,) = p.launches
    assert x.kernel == "copy_kernel" and x.grid == (2**28 // 2048,) and x.threads == 256
    assert x.config_source == "default"
    assert p.predictions["copy floor at n = 2^28 (8 n B / 320 GB/s)"] == f"{8 * 2**28 / 320e9 * 1e3:.3f} ms"
    # 2 GiB of n = 2^28 do not fit 60% of a 2 GiB card: the copy is halved until they do
    small = dataclasses.replace(t4, total_mem_bytes=2 * 2**30)
    (x,) = plan.make(l1, l1b, small).launches
    assert x.grid == (2**27 // 2048,) and x.case == "n = 2^27 float32"


def test_set_changes_the_copy_configuration_and_says_so():
    try:
        config.set_overrides(["COPY_BLOCK=4096", "COPY_WARPS=4"])
        (x,) = plan.make(l1, l1b, device.profile_info("rtx-5090")).launches
        assert x.defines == {"BLOCK": 4096} and x.num_warps == 4 and x.grid == (2**28 // 4096,)
        assert "--set COPY_BLOCK=4096" in x.config_source and "--set COPY_WARPS=4" in x.config_source
        config.set_overrides(["COPY_BLOCK=1000"])
        with pytest.raises(ValueError, match="COPY_BLOCK a power of two"):
            l1.copy_config()
    finally:
        config.set_overrides([])


@cpu_only
def test_copy_of_nothing_and_the_smoke_test_in_the_interpreter():
    assert l1.copy_triton(np.ones(0, np.float32)).shape == (0,)
    rows = l1.smoke_tests("sm_80")
    assert [r["result"] for r in rows if not r["check"].startswith("  ")] == ["ok", "ok"], rows
    assert "tour_add for sm_80" in rows[0]["detail"]


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert lab_main(l1)(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out or "No GPU" in out
    assert "One action per layer" in out and "What runs on this machine" in out


def test_replot_draws_the_committed_json(tmp_path):
    replot(lab_main(l1), tmp_path)
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
