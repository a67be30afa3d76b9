"""Lab 1.2 vector add: bad input, edge cases, the float4 fallback, 64-bit indexing, the regimes of the plot and the
plot redrawn from the committed JSON."""
import os

import numpy as np
import pytest

from common import arrays, check, device, report
from phase1_architecture.lab02_vector_add import bench as vab
from phase1_architecture.lab02_vector_add import lab as va
from tests.helpers import lab_main, replot

CUDA_FNS = [va.add_cuda_01, va.add_cuda_02, va.add_cuda_03, va.add_cuda_04]
gpu = pytest.mark.gpu


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: validation happens before any launch
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", CUDA_FNS)
def test_cuda_wrappers_reject_host_arrays_with_a_hint(fn):
    a = np.ones(8, np.float32)
    with pytest.raises(TypeError, match=r"a: expected a GPU array.*cupy.asarray"):
        fn(a, a)


def test_triton_in_interpreter_rejects_bad_input():
    if device.has_gpu():
        pytest.skip("interpreter-only test")
    a = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="shapes must match"):
        va.add_triton(a, np.ones(9, np.float32))
    with pytest.raises(TypeError, match="dtype int32"):
        va.add_triton(a.astype(np.int32), a.astype(np.int32))
    with pytest.raises(TypeError, match="dtypes must match"):
        va.add_triton(a, a.astype(np.float16))
    with pytest.raises(ValueError, match="C-contiguous"):
        va.add_triton(np.ones(16, np.float32)[::2], a)
    with pytest.raises(ValueError, match="out: expected shape"):
        va.add_triton(a, a, out=np.empty(7, np.float32))


def test_triton_in_interpreter_edge_cases():
    if device.has_gpu():
        pytest.skip("interpreter-only test")
    # first, before any plain output: 15 elements inside guard bands (4096 poisoned floats past the end, more than a
    # BLOCK of 512), so a store past the end is seen deterministically, not as whatever heap memory it would hit
    x15 = check.rng(2).standard_normal(15).astype(np.float32)
    g = check.guarded((15,), "float32", x15)
    check.assert_close(va.add_triton(x15, x15, out=g), 2 * x15.astype(np.float64), "float32")
    assert check.guard_damage(g) == "", "the last program stored past the end of out"
    e = np.empty(0, np.float32)
    assert va.add_triton(e, e).shape == (0,)
    a = check.rng(0).standard_normal((3, 5)).astype(np.float32)   # any shape: the kernel sees the flat array
    check.assert_close(va.add_triton(a, a), 2 * a.astype(np.float64), "float32")
    # one program boundary: n = BLOCK + 1 writes the last element from a second program
    n = va.TRITON_BLOCK + 1
    x = check.rng(1).standard_normal(n).astype(np.float32)
    out = check.poison(np.empty(n, np.float32))
    check.assert_close(va.add_triton(x, x, out=out), 2 * x.astype(np.float64), "float32")
    # in place: out is a
    y = x.copy()
    va.add_triton(y, x, out=y)
    check.assert_close(y, 2 * x.astype(np.float64), "float32")


def test_cpu_main_runs_and_reports(capsys):
    if device.has_gpu():
        pytest.skip("the GPU run is exercised by the GPU tier")
    assert lab_main(va)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "interpreter" in out and "LDG" not in out or "128" in out
    assert "vadd_03_float4" in out and "ld.global.v4.b32" in out


def test_float4_kernel_really_uses_128_bit_loads():
    from common import cuda

    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")
    rep = cuda.compile_report(va.CU, "sm_90")
    assert rep["vadd_03_float4"].sass_counts.get("LDG.128", 0) == 2
    assert rep["vadd_04_float4_ilp"].sass_counts.get("LDG.128", 0) == 2
    rep4 = cuda.compile_report(va.CU, "sm_90", defines={"UNROLL": 4})
    assert rep4["vadd_04_float4_ilp"].sass_counts.get("LDG.128", 0) >= 2 * 4
    assert rep["vadd_01_one_thread_per_element"].sass_counts.get("LDG.128", 0) == 0


def test_regimes_from_a_synthetic_sweep():
    """launch-bound while the time stays within 2x of the smallest, L2-resident up to 3 arrays = L2, HBM-bound after."""
    rows = [{"shape": [2**k], "ms": max(0.002, 2**k * 12 / 4e9)} for k in range(10, 30)]
    got = vab.regimes(rows, 60 * 2**20)
    assert [g[2] for g in got] == ["launch-bound", "L2-resident", "HBM-bound"]
    assert got[0][1] < got[1][1] == pytest.approx(60 * 2**20 / 12) and got[2][1] == 2**29


def test_replot_draws_the_committed_json(tmp_path):
    replot(lab_main(va), tmp_path)
    assert os.path.getsize(tmp_path / f"{va.LAB}.png") > 10_000


def test_plot_has_a_log_panel_for_the_launch_bound_region(tmp_path, monkeypatch):
    """Drawn from the committed JSON: a linear panel and a log-y panel over the same n, both with the three regions
    shaded and named, and on the log one the fixed-cost-per-call line that the small-n bandwidth follows."""
    import json

    import matplotlib.pyplot as plt

    with open(os.path.join(report.ROOT, "results", "h200", f"{va.LAB}.json")) as f:
        data = json.load(f)
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    vab.plot(data, str(tmp_path))
    lin, log = figs[0].axes[:2]
    assert (lin.get_yscale(), log.get_yscale()) == ("linear", "log") and lin.get_xlim() == log.get_xlim()
    for ax in (lin, log):
        names = [t.get_text() for t in ax.texts]
        assert all(n in names for n in ("launch-bound", "L2-resident", "HBM-bound"))
        assert len([p for p in ax.patches if p.get_alpha()]) >= 3              # the shaded regions
    t_min, _ = vab.launch_floor(data["rows"])
    assert any("12 n bytes" in t.get_text() and f"{t_min * 1e3:.2f}" in t.get_text() for t in log.texts)
    small = [r for r in data["rows"] if r["shape"][0] == 1024]
    lo, hi = log.get_ylim()
    assert lo < min(r["gbps"] for r in small)                 # the smallest n is on the log axis, not squashed at 0
    assert min(r["gbps"] for r in small) < 0.01 * hi


def test_launch_floor_is_the_fastest_call():
    rows = [{"shape": [2**k], "ms": 0.001 * (1 + k % 3)} for k in range(10, 14)]
    assert vab.launch_floor(rows) == (0.001, 2**12)


def test_phase_3_reads_the_triton_launch_names():
    """Lab 3.1 compiles add_kernel with TRITON_BLOCK / TRITON_WARPS through lab_module: the names stay in lab.py."""
    from common import lab

    mod = lab.lab_module("phase1_architecture", "lab02_vector_add")
    assert mod is va and mod.add_kernel is not None and (mod.TRITON_BLOCK, mod.TRITON_WARPS) == (512, 4)


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def _pair(n, seed=0):
    import cupy

    rng = check.rng(seed)
    return (cupy.asarray(rng.standard_normal(n), dtype=cupy.float32),
            cupy.asarray(rng.standard_normal(n), dtype=cupy.float32))


@gpu
@pytest.mark.parametrize("fn", CUDA_FNS + [va.add_triton])
@pytest.mark.parametrize("offset", [1, 2, 3])
def test_misaligned_views_are_correct(fn, offset):
    a, b = _pair(4099)
    av, bv = a[offset:], b[offset:offset + a.size - offset]
    out = check.poisoned((a.size - offset,), "float32", a)
    fn(av, bv, out=out)
    check.assert_close(out, arrays.to_numpy(av).astype(np.float64) + arrays.to_numpy(bv), "float32")


@gpu
def test_float4_path_falls_back_when_misaligned():
    a, b = _pair(1024)
    assert va.float4_ok(a, b, a)
    assert not va.float4_ok(a[1:], b[1:], a[1:])


@gpu
@pytest.mark.parametrize("fn", CUDA_FNS + [va.add_triton])
def test_bad_input_on_gpu(fn):
    import cupy

    a, b = _pair(64)
    with pytest.raises(ValueError, match="shapes must match"):
        fn(a, b[:63])
    with pytest.raises(TypeError, match="dtype"):
        fn(a.astype(cupy.int32), b.astype(cupy.int32))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(a[::2], b[::2])
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(a[::-1], b[::-1])
    e = cupy.empty(0, cupy.float32)
    assert fn(e, e).shape == (0,)


@gpu
@pytest.mark.parametrize("fn", CUDA_FNS)
def test_cuda_wrappers_reject_float16_and_torch(fn):
    import cupy
    import torch

    a, b = _pair(64)
    with pytest.raises(TypeError, match="float16"):
        fn(a.astype(cupy.float16), b.astype(cupy.float16))
    with pytest.raises(TypeError, match="from_dlpack"):
        fn(torch.from_dlpack(a), torch.from_dlpack(b))


@gpu
@pytest.mark.parametrize("fn", CUDA_FNS + [va.add_triton])
def test_in_place(fn):
    a, b = _pair(100_003, seed=3)
    want = arrays.to_numpy(a).astype(np.float64) + arrays.to_numpy(b)
    fn(a, b, out=a)
    check.assert_close(a, want, "float32")


@gpu
@pytest.mark.parametrize("fn", [va.add_cuda_01, va.add_cuda_03, va.add_cuda_04, va.add_triton])
def test_beyond_2_to_the_31_elements(fn):
    """64-bit indexing: 2^31 + 7 elements (3 x 8 GiB). Checked around the 2^31 boundary, at the end, at random."""
    import cupy

    n = 2**31 + 7
    free, _ = cupy.cuda.runtime.memGetInfo()
    if free < 3 * 4 * n + 2**30:
        pytest.skip(f"needs {3 * 4 * n / 2**30:.0f} GiB free, the GPU has {free / 2**30:.0f} GiB")
    a = cupy.random.standard_normal(n, dtype=cupy.float32)
    b = cupy.random.standard_normal(n, dtype=cupy.float32)
    out = cupy.full(n, cupy.nan, dtype=cupy.float32)
    fn(a, b, out=out)
    cupy.cuda.Device().synchronize()
    assert not bool(cupy.isnan(out).any()), "some elements were never written"
    idx = np.concatenate([np.arange(2**31 - 64, 2**31 + 7), np.arange(n - 64, n),
                          check.rng(9).integers(0, n, 4096)])
    gi = cupy.asarray(idx)
    ref = a[gi].get().astype(np.float64) + b[gi].get()
    check.assert_close(out[gi], ref, "float32")
    del a, b, out
    cupy.get_default_memory_pool().free_all_blocks()


@gpu
@pytest.mark.parametrize("fn", CUDA_FNS + [va.add_triton, va.peer_cupy_add, va.peer_torch_add])
def test_graph_timer_captures_every_contender(fn):
    """The sweep's small sizes are timed as CUDA graphs: each contender must be captured (not fall back to the
    plain timer), and the output is still the sum after the replays."""
    from common import bench

    a, b = _pair(65_537, seed=4)
    out = check.poisoned((a.size,), "float32", a)
    t = bench.bench(lambda: fn(a, b, out=out), flush_l2=False, graph=True, calls=20, rep_ms=5)
    assert t.clock.startswith("cuda graph of 20 calls"), t.clock
    check.assert_close(out, arrays.to_numpy(a).astype(np.float64) + arrays.to_numpy(b), "float32")
