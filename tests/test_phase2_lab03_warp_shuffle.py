"""Lab 2.3 warp shuffle: compiler facts read from NVRTC (the kernels stay inside the warp: shuffles or shared memory,
never a block barrier), the reduce-then-scan traffic model, the Triton sums and scan in the interpreter, input
validation, the lab's --quick run on the CPU, --replot from the committed JSON; on a GPU every warp-sum kind and the
scans' deep recursion."""
import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from phase2_cuda.lab03_warp_shuffle import bench as wsb
from phase2_cuda.lab03_warp_shuffle import lab as ws
from tests.helpers import cp, lab_main, needs_sass, quick_output, rand, replot

gpu = pytest.mark.gpu


# =====================================================================================================================
# CPU tier
# =====================================================================================================================
@needs_sass
def test_warp_kernels_stay_inside_the_warp():
    rep = cuda.compile_report(ws.CU, "sm_90")
    for name, k in rep.kernels.items():
        c = k.sass_counts
        assert c.get("BAR", 0) == 0, f"{name} has a block barrier"
        lds = sum(v for key, v in c.items() if key.startswith("LDS"))
        if "shfl" in name:
            assert c.get("SHFL", 0) == 5 * ws.SEGS and lds == 0, name
        else:
            assert c.get("SHFL", 0) == 0 and lds > 0, name


def test_reduce_then_scan_traffic_model():
    n = 2**28
    assert ws.reduce_then_scan_bytes(n) / n == pytest.approx(12 * 32 / 31 + 8 * 32 / 31 / 32, rel=1e-3)
    assert ws.reduce_then_scan_bytes(32) == 4 * 32 * 3 + 4      # one segment: no level below, no offsets read
    sums, scan = ws.reference(np.arange(1, 34, dtype=np.float64))
    assert sums.tolist() == [sum(range(1, 33)), 33.0] and scan[-1] == 33 * 34 / 2


def test_plan_lists_every_level_of_the_recursion():
    assert ws.levels(2**28) == [2**28, 2**23, 2**18, 2**13, 2**8, 8] and ws.levels(5) == [5]
    p = plan.make(ws, wsb, device.profile_info("t4"))
    red = [x for x in p.launches if x.kernel == "warp_reduce_02_shfl_down"]
    assert [x.grid[0] for x in red] == [2**23 // 64, 2**18 // 64, 2**13 // 64, 2**8 // 64, 1, 1]
    assert all(x.threads == 256 and x.config_source == "default" for x in red)
    assert {x.variant for x in p.launches} == {v.name for v in ws.VARIANTS}


def test_plan_predicts_the_bound_from_the_gpus_bandwidth_per_sm():
    """11 passes per segment lose to HBM where it delivers a segment in fewer clocks (an H200: ~7), and hide under
    it where it takes more (a T4: ~25); the loads in flight follow the threads an SM holds."""
    key = "warp sums through shared memory (11 passes per segment)"
    fast, slow = (plan.make(ws, wsb, device.profile_info(g)).predictions for g in ("h200", "t4"))
    assert "shared memory is the bound" in fast[key] and "HBM is the bound" in slow[key]
    assert any(k.startswith("loads in flight per SM (1024 resident threads") for k in slow)
    assert ws.resident_threads(device.profile_info("h200")) == 2048


def test_set_changes_the_warp_kernels_and_says_so():
    gpu = device.profile_info("rtx-3090")
    try:
        config.set_overrides(["SEGS=4"])
        top = next(x for x in ws.launches(gpu) if x.kernel == "warp_scan_01_smem")
        assert top.grid == (2**23 // 32,) and top.defines == {"SEGS": 4, "WARPS": 8}
        assert top.config_source == "SEGS: --set SEGS=4; the rest default"
        config.set_overrides(["SEGS=64"])                  # lane k stores segment k: at most 32 segments per warp
        with pytest.raises(ValueError, match="SEGS in 1..32"):
            ws.launches(gpu)
    finally:
        config.set_overrides([])


@pytest.mark.cpu_only
@pytest.mark.parametrize("n", [1, 31, 32, 33, 1025, 33_000])   # 33,000: three levels of recursion
def test_triton_scan_in_the_interpreter(n):
    x = rand(n, n)
    ref_sums, ref_scan = ws.reference(x)
    out = (check.poison(np.empty(ws.segment_count(n), np.float32)), check.poison(np.empty(n, np.float32)))
    sums, scan = ws.scan_triton(x, out=out)
    check.assert_close(sums, ref_sums, "float32", what="sums")
    check.assert_close(scan, ref_scan, "float32", what="scan")


@pytest.mark.cpu_only
def test_scan_rejects_bad_input():
    with pytest.raises(ValueError, match="1-D"):
        ws.scan_triton(rand((4, 4)))
    with pytest.raises(ValueError, match=r"out\[0\] \(sums\): expected shape"):
        ws.scan_triton(rand(100), out=(np.empty(3, np.float32), np.empty(100, np.float32)))
    with pytest.raises(TypeError, match=r"\(sums, scan\) pair"):
        ws.scan_triton(rand(100), out=np.empty(100, np.float32))
    with pytest.raises(TypeError, match="GPU array"):
        ws.scan_cuda_02(rand(100))
    s, y = ws.scan_triton(np.empty(0, np.float32))
    assert s.shape == (0,) and y.shape == (0,)


@pytest.mark.cpu_only
def test_main_quick_on_the_cpu(capsys):
    out = quick_output(lab_main(ws), capsys)
    assert "warp_scan_02_shfl_up" in out                                      # the compile report
    if cuda.find_cuobjdump():
        assert "what each kernel exchanges with" in out                       # the exchange table, from the SASS


def test_replot_draws_the_committed_json(tmp_path):
    assert replot(lab_main(ws), tmp_path) == [f"{ws.LAB}.png"]


# =====================================================================================================================
# GPU tier
# =====================================================================================================================


@gpu
@pytest.mark.parametrize("kind", ["smem", "down", "xor"])
@pytest.mark.parametrize("n", [1, 31, 33, 255, 257, 2049, 2**20 + 7])
def test_warp_sums_every_kind(kind, n):
    x = cp(rand(n, n))
    got = ws.warp_sums(x, kind=kind)
    check.assert_close(got, ws.reference(arrays.to_numpy(x))[0], "float32")


@gpu
@pytest.mark.parametrize("fn", [ws.scan_cuda_01, ws.scan_cuda_02, ws.scan_cuda_03, ws.scan_triton])
def test_scan_deep_recursion_and_bad_input(fn):
    import cupy

    n = 2**24 + 5                                       # five levels of segments
    x = cp(rand(n, 11))
    sums, y = fn(x)
    ref_sums, ref_scan = ws.reference(arrays.to_numpy(x))
    check.assert_close(sums, ref_sums, "float32", what="sums")
    check.assert_close(y, ref_scan, "float32", what="scan")
    if fn is not ws.scan_triton:
        with pytest.raises(ValueError, match="must not be x"):
            fn(x, out=(cupy.empty(ws.segment_count(n), cupy.float32), x))
    with pytest.raises(ValueError, match="1-D"):
        fn(x[: 64].reshape(8, 8))
    e_s, e_y = fn(cupy.empty(0, cupy.float32))
    assert e_s.shape == (0,) and e_y.shape == (0,)
