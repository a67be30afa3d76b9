"""Lab 1.4 memory hierarchy: what the compiler made of the read, shared-memory and FMA kernels, the references
against brute force, the sweep's sizes, levels and L2 edge on GPUs with large and small caches, the L1 of each
architecture, the lab's plan and predictions on a T4, an H100 and a GPU with little memory, --set on the kernels'
configurations, the Triton sweep in the interpreter, bad input before any launch, the plots redrawn from the committed
JSON; on a GPU the kernels on misaligned views, the pointer chase, and the shared-memory and register kernels against
their references."""
import dataclasses
import os

import numpy as np
import pytest

from common import check, config, cuda, device, plan
from phase1_architecture.lab04_memory_hierarchy import bench as l4b
from phase1_architecture.lab04_memory_hierarchy import lab as l4
from tests.helpers import lab_main, replot

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (a GPU is present)")
SASS = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
@SASS
def test_read_sweep_issues_its_float4_loads_back_to_back():
    k = cuda.compile_report(l4.CU, "sm_90")["mem_02_read_sweep_float4"]
    assert k.sass_counts.get("LDG.128", 0) >= l4.UNROLL
    # in the main loop, UNROLL 128-bit loads come before the first add that uses any of them
    ops = [s.split()[0] for s in k.sass]
    first = next(i for i, o in enumerate(ops) if o.startswith("LDG.E.128"))
    first_add = next(i for i in range(first, len(ops)) if ops[i] == "FADD")
    assert sum(o.startswith("LDG.E.128") for o in ops[first:first_add]) == l4.UNROLL
    assert cuda.compile_report(l4.CU, "sm_90")["mem_01_read_sweep_scalar"].sass_counts.get("LDG.128", 0) == 0


@SASS
def test_on_chip_kernels_use_shared_memory_and_ffma():
    rep = cuda.compile_report(l4.CU, "sm_90")
    assert rep["mem_04_shared_read"].smem_bytes >= 4 * l4.TILE_FLOAT4 * 4
    assert rep["mem_04_shared_read"].sass_counts.get("LDS.128", 0) >= 4
    assert rep["mem_05_register_fma"].sass_counts.get("FFMA", 0) >= l4.NACC
    assert all(k.spills == 0 for k in rep.kernels.values())


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: references and the sweep's helpers
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,blocks,per_block", [(1, 1, 5), (7, 3, 20), (10, 4, 3), (64, 5, 64), (1000, 7, 2500),
                                                (16, 16, 1)])
def test_sweep_reference_matches_brute_force(n, blocks, per_block):
    x = check.rng(n).integers(1, 9, n).astype(np.float64)
    want = np.array([sum(x[(l4.block_start(b, n, blocks) + j) % n] for j in range(per_block)) for b in range(blocks)])
    assert np.array_equal(l4.reference(x, blocks, per_block), want)
    assert all(l4.block_start(b, n, blocks) % 4 == 0 for b in range(blocks))


def test_sweep_sizes_and_levels():
    l2, l1 = 60 * 2**20, 256 * 2**10
    sizes = l4b.sweep_sizes(False, l2)
    assert sizes == sorted(set(sizes)) and sizes[0] <= 16 * 2**10 and sizes[-1] >= 4 * 2**30
    assert 24 <= len(sizes) <= 60                   # "a few dozen sizes"
    assert sum(0.5 * l2 <= s <= 1.5 * l2 for s in sizes) >= 4       # resolution around the L2 edge
    assert all(s % 4096 == 0 for s in sizes)
    assert [l4b.level_of(s, l2, l1) for s in (16 << 10, 1 << 20, 50 << 20, 100 << 20, 1 << 30)] == \
        ["L1", "L2 (fits half)", "L2 (full)", "L2 edge", "HBM"]
    # a GPU of 64 KiB L1 and 4 MiB L2, whose memory holds 2 GiB of working set: the sweep stops there
    small = l4b.sweep_sizes(False, 4 << 20, top=2 << 30)
    assert small[-1] == 2 << 30 and sum(2 << 20 <= s <= 6 << 20 for s in small) >= 4
    assert [l4b.level_of(s, 4 << 20, 64 << 10) for s in (16 << 10, 64 << 10, 1 << 20, 3 << 20)] == \
        ["L1", "L2 (fits half)", "L2 (fits half)", "L2 (full)"]
    assert l4b.chase_sizes(True, l2, top=64 << 20) == [16 << 10, 1 << 20]


@pytest.mark.parametrize("l2,l1,fast,edge", [(60 << 20, 256 << 10, 44 << 20, (44 << 20, 50 << 20)),
                                             (4 << 20, 64 << 10, 3 << 20, (3 << 20, 4 << 20))])
def test_l2_edge_and_levels_from_synthetic_sweep(l2, l1, fast, edge):
    rows = []
    for w in l4b.sweep_sizes(False, l2):
        g = 25000 if w <= l1 // 2 else 9700 if w <= fast else 4000
        rows.append({"variant": "cuda 02", "working_set_bytes": w, "gbps": g})
    lv = l4b.level_bandwidths(rows, l2, l1)
    assert lv == {"L1": 25000, "L2": 9700, "HBM": 4000}
    assert edge[0] < l4b.l2_edge(rows, lv, l2, l1) <= edge[1]


def test_l1_of_each_architecture():
    """The unified L1/shared array less the smallest shared-memory carve-out: what a kernel without shared memory
    gets as L1."""
    want = {"sm_75": 64, "sm_80": 192, "sm_86": 128, "sm_89": 128, "sm_90": 256, "sm_100": 256, "sm_120": 128}
    for arch, kib in want.items():
        assert l4.l1_bytes(device.profile_info(device.arch_info(arch).example)) == kib * 1024, arch  # any machine


@pytest.mark.parametrize("slug,per_sm", [("t4", 4), ("h100-sxm", 6)])
def test_plan_fills_every_sm_from_the_kernels_registers(slug, per_sm):
    """mem_02 needs ~40 registers: 4 blocks of 256 fill a T4's 1024 threads, 6 blocks a Hopper SM (registers)."""
    g = device.profile_info(slug)
    p = plan.make(l4, l4b, g)
    by = {x.kernel: x for x in p.launches}
    assert by["mem_02_read_sweep_float4"].grid == (g.sms * per_sm,) == by["read_sweep_kernel"].grid
    assert by["mem_02_read_sweep_float4"].defines == {"UNROLL": 4}
    assert by["mem_04_shared_read"].defines == {"TILE_FLOAT4": 2048} and by["mem_03_pointer_chase"].grid == (1,)
    assert by["mem_05_register_fma"].grid == (g.sms * g.max_threads_per_sm * 4 // 256,)
    assert p.predictions["mem_02's grid (the calculator on its registers)"] == f"{g.sms * per_sm} blocks = " \
                                                                               f"{g.sms} SMs x {per_sm}"
    l2 = g.l2_bytes / 2**20
    assert f"{0.5 * l2:.0f}-{1.5 * l2:.0f} MiB" in p.predictions["L2 plateau"]
    lanes = 64 if slug == "t4" else 128
    assert f"({lanes} FFMA/clock/SM)" in p.predictions["registers (mem_05: 12 B of operands per FFMA)"]


def test_plan_on_a_gpu_with_little_memory():
    g = dataclasses.replace(device.profile_info("rtx-3060"), total_mem_bytes=4 * 2**30)
    p = plan.make(l4, l4b, g)
    x = next(x for x in p.launches if x.kernel == "mem_02_read_sweep_float4")
    assert x.case == "a 2048 MiB working set read once"          # 4 GiB do not fit 60% of 4 GiB: halved once
    assert "the main case, 2048 MiB read once" in p.predictions


def test_set_changes_the_kernels_configuration_and_says_so():
    try:
        config.set_overrides(["UNROLL=8", "TILE_FLOAT4=1024"])
        by = {x.kernel: x for x in plan.make(l4, l4b, device.profile_info("rtx-4090")).launches}
        assert by["mem_02_read_sweep_float4"].defines == {"UNROLL": 8}
        assert by["mem_02_read_sweep_float4"].config_source == "--set UNROLL=8"
        assert by["mem_04_shared_read"].defines == {"TILE_FLOAT4": 1024}
        assert by["mem_05_register_fma"].config_source == "default"
        assert l4.defines() == {"UNROLL": 8, "TILE_FLOAT4": 1024, "NACC": 8}
        config.set_overrides(["TILE_FLOAT4=4096"])               # 64 KiB: more static shared memory than allowed
        with pytest.raises(ValueError, match="TILE_FLOAT4 a power of two"):
            l4.defines()
    finally:
        config.set_overrides([])


def test_shared_and_fma_references():
    x = np.arange(2 * 4 * l4.TILE_FLOAT4, dtype=np.float64) % 5
    r = l4.shared_read_reference(x, 16)
    assert r.shape == (2,) and r[0] == x[:4 * l4.TILE_FLOAT4].sum() * 2
    f = l4.register_fma_reference(np.array([1.0]), 3, 0.5, 1.0)
    a = [1.0 + j / 1024 for j in range(l4.NACC)]
    for _ in range(3):
        a = [v * 0.5 + 1.0 for v in a]
    assert f[0] == pytest.approx(sum(a), rel=1e-12)


def test_targets_from_synthetic_latencies():
    mib = 2**20
    lat = [{"level": "L1", "cycles_per_load": 40.0, "chase_ok": True},
           {"level": "L2 (fits half)", "cycles_per_load": 290.0, "chase_ok": True},
           {"level": "HBM", "cycles_per_load": 2000.0, "chase_ok": False}]
    tg = l4b.targets(lat, 75 * mib, 60 * mib)
    assert [t.met for t in tg] == [True, True, False, True, False]     # L1, L2, HBM, L2 edge, every chase
    assert tg[1].goal == "180-550 cycles" and tg[3].goal == "30-90 MiB" and tg[4].ratio == 2
    assert [t.met for t in l4b.targets(lat, 100 * mib, 60 * mib) if "plateau" in t.case] == [False]


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert lab_main(l4)(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out and "What the GPU run would show" in out and "LDG.E.128" in out


def test_replot_draws_the_committed_json(tmp_path):
    replot(lab_main(l4), tmp_path)
    for part in ("bandwidth", "latency", "levels"):
        assert os.path.getsize(tmp_path / f"{l4.LAB}_{part}.png") > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: Triton in the interpreter, bad input
# ---------------------------------------------------------------------------------------------------------------------
@cpu_only
def test_triton_read_sweep_both_wrap_paths():
    for n, blocks, per_block in [(3, 2, 50), (2000, 3, 5000), (1024, 1, 1024), (5, 4, 0)]:
        x, bl, pb = l4.make_inputs((n, blocks, per_block), "float32", check.rng(n), "cpu")
        out = check.poisoned((bl,), "float32", x)
        check.assert_close(l4.read_triton(x, bl, pb, out=out), l4.reference(x, bl, pb), "float32",
                           check.Tol(0, 0), what=f"{n} {blocks} {per_block}")


@cpu_only
def test_triton_sweep_rejects_bad_input():
    x = np.ones(8, np.float32)
    with pytest.raises(ValueError, match="blocks"):
        l4.read_triton(x, 0, 4)
    with pytest.raises(ValueError, match="per_block"):
        l4.read_triton(x, 1, -1)
    with pytest.raises(ValueError, match="empty"):
        l4.read_triton(np.ones(0, np.float32), 1, 4)
    with pytest.raises(TypeError, match="dtype"):
        l4.read_triton(x.astype(np.float64), 1, 4)


def test_cuda_wrappers_reject_host_arrays_before_launching():
    for fn in (l4.read_cuda_01, l4.read_cuda_02):
        with pytest.raises(TypeError, match="expected a GPU array"):
            fn(np.ones(8, np.float32), 2, 8)


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("offset", [1, 2, 3])
def test_read_sweep_misaligned_and_odd_views(offset):
    x, blocks, per_block = l4.make_inputs((70_000, 9, 40_000), "float32", check.rng(offset), "cuda")
    view = x[offset:]
    want = l4.reference(view.get(), blocks, per_block)
    for fn in (l4.read_cuda_01, l4.read_cuda_02, l4.read_triton):
        check.assert_close(fn(view, blocks, per_block), want, "float32", check.Tol(0, 0), what=fn.__name__)


@gpu
def test_read_sweep_bad_input_on_device():
    import cupy

    x = cupy.ones(64, cupy.float32)
    for fn in (l4.read_cuda_01, l4.read_cuda_02, l4.read_triton):
        with pytest.raises(ValueError, match="blocks"):
            fn(x, 0, 4)
        with pytest.raises(ValueError, match="empty"):
            fn(cupy.ones(0, cupy.float32), 1, 4)
        with pytest.raises(TypeError, match="dtype"):
            fn(x.astype(cupy.float64), 1, 4)


@gpu
@pytest.mark.parametrize("nbytes", [16 << 10, 4 << 20])
def test_pointer_chase_follows_the_cycle(nbytes):
    nxt, order = l4.build_chase(nbytes, seed=5)
    lines = int(order.size)
    start = int(order[0]) * (l4.CHASE_STRIDE // 4)
    idx, cyc, ns = l4.pointer_chase(nxt, start, lines, 4096)
    assert idx == int(order[(lines + 4096) % lines]) * (l4.CHASE_STRIDE // 4)
    assert cyc > 4096 * 10 and ns > 0                   # at least ~10 cycles per dependent load
    with pytest.raises(ValueError, match="steps"):
        l4.pointer_chase(nxt, start, 0, 0)


@gpu
def test_shared_and_register_kernels_match_their_references():
    import cupy

    rng = check.rng(2)
    x = cupy.asarray(rng.integers(1, 5, 3 * 4 * l4.TILE_FLOAT4).astype(np.float32))
    check.assert_close(l4.shared_read(x, 64), l4.shared_read_reference(x.get(), 64), "float32", check.Tol(0, 0))
    check.assert_close(l4.shared_read(x, 8), l4.shared_read_reference(x.get(), 8), "float32", check.Tol(0, 0))
    with pytest.raises(ValueError, match="reps"):
        l4.shared_read(x, 3)
    with pytest.raises(ValueError, match="multiple"):
        l4.shared_read(x[:100], 8)
    xr = cupy.asarray(rng.standard_normal(1000).astype(np.float32))
    check.assert_close(l4.register_fma(xr, 64, 0.99, 0.01), l4.register_fma_reference(xr.get(), 64, 0.99, 0.01),
                       "float32", check.Tol(1e-5, 1e-4))
