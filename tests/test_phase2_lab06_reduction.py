"""Lab 2.6 reduction: what the compiler made of each rung, the Triton kernel in the interpreter, bad input, empty
input, misaligned views, determinism, 64-bit indexing, the plots redrawn from the committed JSON."""
import json
import os

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from phase2_cuda.lab06_reduction import bench as redb
from phase2_cuda.lab06_reduction import lab as red
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu
CUDA_SUMS = [red.sum_cuda_01, red.sum_cuda_02, red.sum_cuda_03, red.sum_cuda_04, red.sum_cuda_05, red.sum_cuda_06,
             red.sum_cuda_07, red.sum_cuda_08, red.sum_cuda_09, red.sum_cuda_10]
CPU_ONLY = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test")


def _exact_ints(n, seed=0):
    (x,) = red.make_inputs(n, "float32", check.rng(seed), "cpu")
    return x


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the compiler's view of the ladder
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rep90():
    return cuda.compile_report(red.CU, "sm_90", defines=red._defines())


def _ops(k):
    return [s.split()[0] if not s.startswith("@") else s.split()[1] for s in k.sass]


def test_rung01_divides_and_rung03_does_not(rep90):
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")
    ops1 = _ops(rep90["reduce_01_interleaved_divergent"])
    ops3 = _ops(rep90["reduce_03_sequential_addressing"])
    assert any(o.startswith("MUFU.RCP") for o in ops1), "tid % (2*stride) should compile to a reciprocal division"
    assert not any(o.startswith("MUFU") for o in ops3)
    assert len(ops3) < len(ops1)


def test_barriers_fall_along_the_ladder(rep90):
    # 01-05: a block barrier per tree round in a loop (the census counts static BAR instructions), 06: one barrier
    assert rep90["reduce_06_warp_shuffle"].barriers >= 1
    c6 = rep90["reduce_06_warp_shuffle"].sass_counts
    c3 = rep90["reduce_03_sequential_addressing"].sass_counts
    if c6:
        assert c6.get("SHFL", 0) >= 10 and c3.get("SHFL", 0) == 0
        assert c6.get("BAR", 0) == 1


def test_vector_rungs_issue_unroll_128_bit_loads():
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")
    for unroll in (4, 8):
        rep = cuda.compile_report(red.CU, "sm_90", defines=red._defines(unroll=unroll))
        for name in ("reduce_07_float4_grid_stride", "reduce_08_atomic_finish", "reduce_09_last_block",
                     "reduce_10_kahan"):
            assert rep[name].sass_counts.get("LDG.128", 0) == unroll, name
            assert rep[name].spills == 0, f"{name} spills at UNROLL={unroll}"
        assert rep["reduce_06_warp_shuffle"].sass_counts.get("LDG.128", 0) == 0
    rep = cuda.compile_report(red.CU, "sm_90", defines=red._defines())
    assert rep["reduce_08_atomic_finish"].sass_counts.get("RED", 0) + \
        rep["reduce_08_atomic_finish"].sass_counts.get("ATOM", 0) >= 1
    assert rep["reduce_09_last_block"].sass_counts.get("ATOM", 0) >= 1      # the ticket: an atomic that returns
    assert rep["reduce_10_kahan"].sass_counts.get("FADD", 0) > rep["reduce_09_last_block"].sass_counts.get("FADD", 0)


def test_streaming_load_knob_changes_the_instruction():
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")
    def wide_loads(hint, arch="sm_90"):
        sass = cuda.compile_report(red.CU, arch, defines=red._defines(load_hint=hint))["reduce_09_last_block"].sass
        return [s for s in sass if "LDG" in s and ".128" in s]

    ld0, ld1, ld2 = wide_loads(0), wide_loads(1), wide_loads(2)
    assert all(len(x) == 4 for x in (ld0, ld1, ld2))
    assert all("CONSTANT" in s for s in ld0) and all(".EF" in s for s in ld1)
    assert all("256" in s for s in ld2) and not any("256" in s for s in ld0)
    assert not any("256" in s for s in wide_loads(2, "sm_75"))     # no such hint before sm_80: the plain load


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: inputs, tolerances, the Triton kernel in the interpreter
# ---------------------------------------------------------------------------------------------------------------------
def test_make_inputs_are_nonzero_integers_and_exact_in_fp32():
    x = _exact_ints(100_003, seed=3)
    assert x.dtype == np.float32 and np.all(x != 0) and np.all(x == np.round(x)) and np.abs(x).max() <= 4
    # any order is exact: sequential fp32 equals the float64 sum
    assert float(np.cumsum(x, dtype=np.float32)[-1]) == red.reference(x)
    assert red.tolerance(red.EXACT_UP_TO, "float32").rel_norm < 1e-8
    assert red.tolerance(red.EXACT_UP_TO + 1, "float32").rel_norm > 1e-6


def test_max_inputs_plant_the_maximum_at_head_tail_or_inside():
    seen = set()
    for s in range(40):
        (x,) = red.make_inputs_max(50, "float32", check.rng(s), "cpu")
        pos = int(np.argmax(x))
        assert x[pos] == -0.5 and np.sum(x == -0.5) == 1 and np.all(np.delete(x, pos) <= -1)
        seen.add("head" if pos == 0 else "tail" if pos == 49 else "inside")
    assert seen == {"head", "tail", "inside"}


@CPU_ONLY
@pytest.mark.parametrize("n", [1, 2, 5, 4095, 4096, 4097, 70_001])
def test_triton_sum_is_exact_in_the_interpreter(n):
    x = _exact_ints(n, seed=n)
    out = check.poison(np.empty((), np.float32))
    assert float(red.sum_triton(x, out=out)) == red.reference(x)


@CPU_ONLY
def test_triton_three_levels_and_odd_chunks():
    # chunk = 64 x 3 = 192 elements: 40_000 -> 209 partials -> 2 -> 1 (three launches)
    x = _exact_ints(40_000, seed=7)
    assert float(red.sum_triton(x, block=64, iters=3, num_warps=1)) == red.reference(x)
    assert float(red.max_triton(np.array([-3.0, -1.0, -2.0], np.float32), block=64, iters=1)) == -1.0


@CPU_ONLY
def test_triton_max_head_tail_and_infinities():
    for pos in (0, 999, 500):
        x = -np.ones(1000, np.float32) * 2
        x[pos] = -0.25
        assert float(red.max_triton(x)) == -0.25
    x = np.full(7, -np.inf, np.float32)
    assert float(red.max_triton(x)) == -np.inf
    x[3] = np.inf
    assert float(red.max_triton(x)) == np.inf


@CPU_ONLY
def test_empty_input_follows_numpy():
    e = np.empty(0, np.float32)
    out = check.poison(np.empty((), np.float32))
    assert float(red.sum_triton(e, out=out)) == 0.0
    with pytest.raises(ValueError, match="max of an empty array"):
        red.max_triton(e)


@CPU_ONLY
def test_triton_rejects_bad_input():
    with pytest.raises(TypeError, match="dtype int32"):
        red.sum_triton(np.ones(8, np.int32))
    with pytest.raises(TypeError, match="dtype float16"):
        red.sum_triton(np.ones(8, np.float16))
    with pytest.raises(ValueError, match="1-D"):
        red.sum_triton(np.ones((2, 4), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        red.sum_triton(np.ones(16, np.float32)[::2])
    with pytest.raises(ValueError, match="out: expected shape"):
        red.sum_triton(np.ones(8, np.float32), out=np.empty(1, np.float32))


@pytest.mark.parametrize("fn", CUDA_SUMS + [red.max_cuda_09])
def test_cuda_wrappers_reject_host_arrays_before_any_launch(fn):
    with pytest.raises(TypeError, match=r"x: expected a GPU array"):
        fn(np.ones(8, np.float32))


@CPU_ONLY
def test_numerics_table_shows_the_sequential_sum_losing_bits():
    rows = {r["variant"]: r for r in redb.numerics(2**16)}
    seq = rows["NumPy fp32, one running sum"]["rel_err"]
    pair = rows["NumPy fp32 np.sum"]["rel_err"]
    tri = rows["triton chunked, 2 passes (interpreter)"]["rel_err"]
    assert seq > 10 * pair and tri < 1e-6


@CPU_ONLY
def test_main_quick_on_cpu(capsys):
    assert lab_main(red)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "reduce_09_last_block" in out and "interpreter" in out and "numerics" in out


def test_quick_checks_a_spread_of_sizes():
    quick = [n for n, _ in red.CHECK_CASES[:red.QUICK_CASES]]
    assert min(quick) == 1 and max(quick) > red.THREADS * 2 * 1024      # more than one block's worth per SM
    assert len({n for n, _ in red.CHECK_CASES}) == len(red.CHECK_CASES)


def test_plot_rows_split_into_ladder_and_sweep():
    row = lambda v, n, part=None: dict({"variant": v, "shape": [n]}, **({"part": part} if part else {}))
    tagged = [row("a", 8, "ladder"), row("b", 8, "ladder"), row("a", 4, "sweep"), row("a", 8, "sweep")]
    assert [len(p) for p in redb.split_rows(tagged)] == [2, 2]
    legacy = [row("a", 8), row("b", 8), row("a", 4), row("b", 4), row("a", 8)]   # older JSON: no "part"
    lad, sw = redb.split_rows(legacy)
    assert [r["variant"] for r in lad] == ["a", "b"] and len(sw) == 3


def test_replot_redraws_the_committed_plots(tmp_path):
    path = os.path.join(H200, red.LAB + ".json")
    if not os.path.exists(path):
        pytest.skip("no committed results")
    with open(path) as f:
        data = json.load(f)
    lad, sw = redb.split_rows(data["rows"])
    assert len(lad) == len(red.VARIANTS + red.PEERS) and {r["variant"] for r in sw} <= set(redb.SWEEP_NAMES)
    assert lab_main(red)(["--replot", H200, "--out", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == [red.LAB + ".png", red.LAB + "_sizes.png"]


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on the GPUs learners have
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("slug,per_sm", [("t4", 4), ("rtx-4090", 6), ("h200", 8)])
def test_single_pass_grid_follows_the_sms(slug, per_sm):
    """Rungs 07-10 launch SMs x blocks per SM: 8 of 256 threads, fewer where an SM holds fewer threads (a T4: 1024,
    an RTX 4090: 1536). The wrappers and the plan compute it with the same function."""
    gpu = device.profile_info(slug)
    assert red.resident_blocks(gpu) == gpu.sms * per_sm
    got = plan.make(red, redb, gpu)
    single = [x for x in got.launches if x.kernel in ("reduce_08_atomic_finish", "reduce_09_last_block",
                                                      "reduce_10_kahan")]
    assert [x.grid for x in single] == [(gpu.sms * per_sm,)] * 3
    two = [x.grid for x in got.launches if x.kernel == "reduce_07_float4_grid_stride"]
    assert two == [(gpu.sms * per_sm,), (1,)]
    assert got.predictions["rungs 07-10: grid (SMs x blocks per SM)"].startswith(f"{gpu.sms * per_sm:,} blocks")
    assert red.fast_grid(1000, gpu) == 1                   # a small n needs fewer blocks than a wave


def test_plan_lists_every_pass_of_the_multipass_rungs():
    assert red.multipass_grids(2**28, 256) == [2**20, 2**12, 16, 1]
    assert red.multipass_grids(2**28, 512) == [2**19, 2**10, 2, 1]
    assert red.multipass_grids(1, 512) == [1]
    launches = red.launches(device.profile_info("a100"))
    assert [x.grid[0] for x in launches if x.variant == "cuda 04 first add during load"] == [2**19, 2**10, 2, 1]
    assert [x.grid[0] for x in launches if x.variant == "triton chunked, 2 passes"] == [2**28 // 2**16, 1]


def test_set_changes_the_single_pass_configuration_and_says_so():
    gpu = device.profile_info("h100-pcie")
    try:
        config.set_overrides(["UNROLL=8", "BLOCKS_PER_SM=4"])
        k09 = next(x for x in red.launches(gpu) if x.kernel == "reduce_09_last_block")
        assert k09.defines["UNROLL"] == 8 and k09.grid == (gpu.sms * 4,)
        assert k09.config_source == "UNROLL: --set UNROLL=8; BLOCKS_PER_SM: --set BLOCKS_PER_SM=4; the rest default"
        small = next(x for x in red.launches(gpu, size=2**16) if x.kernel == "reduce_09_last_block")
        assert small.grid == (2**16 // (256 * 4 * 8),)
        assert red._defines()["UNROLL"] == 8              # the wrappers compile with the same values
        config.set_overrides(["LOAD_HINT=3"])
        with pytest.raises(ValueError, match="LOAD_HINT 0, 1 or 2"):
            red.fast_config()
    finally:
        config.set_overrides([])
    assert red.fast_config().values == red.FAST


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def _dev(x):
    import cupy

    return cupy.asarray(x)


@gpu
@pytest.mark.parametrize("fn", CUDA_SUMS + [red.sum_triton])
@pytest.mark.parametrize("offset", [1, 2, 3])
def test_misaligned_views_are_exact(fn, offset):
    x = _dev(_exact_ints(300_007 + offset, seed=offset))
    v = x[offset:]
    out = check.poisoned((), "float32", v)
    assert float(fn(v, out=out)) == red.reference(arrays.to_numpy(v))


@gpu
@pytest.mark.parametrize("fn", [red.max_cuda_09, red.max_triton])
def test_max_edges_on_gpu(fn):
    import cupy

    for n in (1, 2, 1025, 1_000_003):
        for pos in (0, n - 1, n // 2):
            x = cupy.full(n, -3.0, cupy.float32)
            x[pos] = -1.5
            assert float(fn(x)) == -1.5
        assert float(fn(x[1:] if n > 1 else x)) in (-1.5, -3.0)
    x = cupy.full(33, -cupy.inf, cupy.float32)
    assert float(fn(x)) == -np.inf
    with pytest.raises(ValueError, match="max of an empty array"):
        fn(cupy.empty(0, cupy.float32))


@gpu
@pytest.mark.parametrize("fn", CUDA_SUMS + [red.sum_triton])
def test_bad_and_empty_input_on_gpu(fn):
    import cupy
    import torch

    assert float(fn(cupy.empty(0, cupy.float32))) == 0.0
    with pytest.raises(TypeError, match="dtype"):
        fn(cupy.ones(8, cupy.float16))
    with pytest.raises(ValueError, match="1-D"):
        fn(cupy.ones((2, 4), cupy.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(cupy.ones(16, cupy.float32)[::2])
    if fn is not red.sum_triton:
        with pytest.raises(TypeError, match="from_dlpack"):
            fn(torch.ones(8, device="cuda"))


@gpu
def test_single_pass_is_deterministic_and_leaves_the_counter_at_zero():
    import cupy

    x = cupy.random.random(2**24, dtype=cupy.float32)
    bits = {np.float32(red.sum_cuda_09(x).get()).tobytes() for _ in range(5)}
    assert len(bits) == 1
    for f in (red.sum_cuda_09, red.sum_cuda_10, red.max_cuda_09):
        f(x)
        cupy.cuda.Device().synchronize()
        assert int(red._workspace(1)[1][0]) == 0, f"{f.__name__} left the ticket counter non-zero"


@gpu
def test_kahan_is_more_accurate_than_plain_fp32():
    import cupy

    x = cupy.random.random(2**24, dtype=cupy.float32)
    exact = float(cupy.sum(x, dtype=cupy.float64))
    e9 = abs(float(red.sum_cuda_09(x)) - exact) / exact
    e10 = abs(float(red.sum_cuda_10(x)) - exact) / exact
    assert e10 <= e9 and e10 < 1e-7


@gpu
@pytest.mark.parametrize("fn", [red.sum_cuda_01, red.sum_cuda_06, red.sum_cuda_09, red.sum_cuda_10, red.sum_triton])
def test_beyond_2_to_the_31_elements(fn):
    """64-bit indexing: nonzeros at 0, 2^31 and n - 1 of n = 2^31 + 5 (8 GiB); any summation order is exact."""
    import cupy

    n = 2**31 + 5
    free, _ = cupy.cuda.runtime.memGetInfo()
    if free < 4 * n + 2**30:
        pytest.skip(f"needs {4 * n / 2**30:.0f} GiB free")
    x = cupy.zeros(n, cupy.float32)
    x[0], x[2**31], x[n - 1] = 1.0, 5.0, 3.0
    assert float(fn(x)) == 9.0
    if fn is red.sum_cuda_09:
        assert float(red.max_cuda_09(x)) == 5.0
    del x
    cupy.get_default_memory_pool().free_all_blocks()
