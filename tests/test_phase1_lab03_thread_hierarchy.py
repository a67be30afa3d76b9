"""Lab 1.3 thread hierarchy: the special registers and the divergent branch in the compiled code, the hash reference,
the warp rule of the mapping table, the Triton select in the interpreter, bad input before any launch, the timeline's
arithmetic and plots (redrawn from JSON), the lab's plan on GPUs of 64 and 48 warps per SM and --set on the Triton
configuration; on a GPU the kernels' own records and the divergence kernels on device."""
import numpy as np
import pytest

from common import check, config, cuda, device, plan
from phase1_architecture.lab03_thread_hierarchy import bench as l3b
from phase1_architecture.lab03_thread_hierarchy import lab as l3
from tests.helpers import lab_main, replot

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (a GPU is present)")
SASS = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


def _ops(k, prefix):
    return sum(v for key, v in k.sass_counts.items() if key.startswith(prefix))

# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def test_whoami_reads_the_special_registers():
    rep = cuda.compile_report(l3.CU, "sm_90")
    ptx = rep.ptx
    for reg in ("%smid", "%laneid", "%globaltimer"):
        assert reg in ptx, f"{reg} is not read"
    assert rep["hier_01_whoami"].spills == 0


@SASS
def test_divergent_kernel_keeps_two_loops_and_a_reconvergence_point():
    rep = cuda.compile_report(l3.CU, "sm_90")
    k1, k2 = rep["div_01_branch_on_lane_parity"], rep["div_02_branch_on_warp_index"]
    text1 = "\n".join(k1.sass)
    # both hashes really are there (no select merged them: that would remove the divergence the lab measures)
    assert "0x7feb352d" in text1 and "-0x7b935975" in text1        # 0x846ca68b as a signed immediate
    assert any(s.startswith("BSSY") for s in k1.sass)
    # the two kernels differ only in the index mapping: the same hashing instructions
    assert _ops(k1, "IMAD") >= 2 and k1.sass_counts.get("LDG.32") == k2.sass_counts.get("LDG.32") == 1


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the reference, the mapping, the timeline's arithmetic
# ---------------------------------------------------------------------------------------------------------------------
def test_hash_reference_rounds_zero_is_identity_and_parity_selects():
    x = np.array([1, -2, 3, 2**31 - 1], np.int32)
    assert np.array_equal(l3.reference(x.astype(np.float64), 0), x.astype(np.float64))
    r = l3.reference(x.astype(np.float64), 3)
    even = l3._hash(x.view(np.uint32), 3, *l3.HASH_EVEN).view(np.int32)
    odd = l3._hash(x.view(np.uint32), 3, *l3.HASH_ODD).view(np.int32)
    assert r[0] == even[0] and r[2] == even[2] and r[1] == odd[1] and r[3] == odd[3] and r[1] != even[1]


def test_warp_rule_of_the_mapping_table():
    rec = l3.predicted_records((16, 4), 2)
    assert rec.shape == (128, 10)
    row = rec[32]                                   # tid 32 = (tx 0, ty 2): first thread of warp 1
    assert tuple(row[:6]) == (0, 0, 2, 32, 1, 0)
    assert tuple(rec[64][:6]) == (1, 0, 0, 0, 0, 0)


def _synthetic_timeline(blocks=40, sms=4, per_sm=2, spin=10.0):
    """Blocks dealt round-robin to SMs, per_sm at a time, each resident `spin` us: ideal waves."""
    b = np.arange(blocks)
    wave = b // (sms * per_sm)
    start = wave * spin + 0.01 * (b % 3)
    return {"blocks": blocks, "resident_per_sm_predicted": per_sm, "sms": sms, "per_wave": sms * per_sm,
            "spin_us": spin, "timer_step_ns": 32.0, "sm": b % sms, "start_us": start, "end_us": start + spin - 0.05}


def test_timeline_stats_of_ideal_waves():
    st = l3b.timeline_stats(_synthetic_timeline())
    assert st["most blocks on one SM at once"] == 2 and st["SMs used"] == 4
    assert st["waves seen"] == st["waves predicted"] == 5 and st["span predicted us"] == 50.0


def test_plots_redraw_from_json_with_and_without_the_block_record(tmp_path, capsys):
    rows = [{"variant": v.name, "impl": v.impl, "shape": [1024], "ms": ms, "predicted_ms": p}
            for v, ms, p in zip(l3.VARIANTS, (2.0, 1.0, 1.0), (2.2, 1.1, 2.2))]
    paths = l3b.plot({"gpu": "some GPU", "rows": rows}, str(tmp_path))
    assert [p.rsplit("_", 1)[-1] for p in paths] == ["divergence.png"] and "predates" in capsys.readouterr().out
    rec = l3b.timeline_record(_synthetic_timeline())
    paths = l3b.plot({"gpu": "some GPU", "rows": rows, "timeline_blocks": rec}, str(tmp_path))
    assert [p.rsplit("_", 1)[-1] for p in paths] == ["divergence.png", "timeline.png"]


def test_replot_draws_the_committed_json(tmp_path):
    import os

    replot(lab_main(l3), tmp_path)
    assert os.path.getsize(tmp_path / f"{l3.LAB}_divergence.png") > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: Triton in the interpreter, bad input
# ---------------------------------------------------------------------------------------------------------------------
@cpu_only
def test_triton_hash_rejects_bad_input():
    x = np.ones(8, np.float32)
    xi = np.ones(8, np.int32)
    with pytest.raises(ValueError, match="rounds"):
        l3.div_triton(xi, -1)
    with pytest.raises(TypeError, match="dtype"):
        l3.div_triton(x, 3)
    assert l3.div_triton(np.ones(0, np.int32), 3).shape == (0,)


@cpu_only
def test_triton_hash_small_cases():
    x = np.array([7, -7, 123456789], np.int32)
    out = check.poison(np.empty(3, np.int32))
    assert np.array_equal(l3.div_triton(x, 0, out=out), x)
    y = l3.div_triton(x, 5)
    assert np.array_equal(y.astype(np.float64), l3.reference(x.astype(np.float64), 5))


@pytest.mark.parametrize("fn", [l3.div_cuda_01, l3.div_cuda_02])
def test_cuda_wrappers_reject_host_arrays_before_launching(fn):
    with pytest.raises(TypeError, match="expected a GPU array"):
        fn(np.ones(8, np.int32), 3)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs learners have
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("slug,per_sm", [("t4", 4), ("rtx-5090", 6), ("h100-sxm", 8)])
def test_plan_timeline_fills_every_sm_of_the_gpu(slug, per_sm):
    """hier_01_whoami needs few registers: its 256-thread blocks are limited by the SM's warps (32, 48 or 64), so one
    wave is SMs x (threads per SM / 256) blocks, and the timeline launches 2.5 waves of it."""
    g = device.profile_info(slug)
    p = plan.make(l3, l3b, g)
    timeline = next(x for x in p.launches if x.case.startswith("the timeline"))
    assert g.max_threads_per_sm // l3.THREADS == per_sm
    assert timeline.grid == (int(2.5 * g.sms * per_sm),) and timeline.threads == 256
    assert p.predictions["timeline: resident 256-thread blocks per SM (calculator)"].startswith(f"{per_sm} (")
    uniform = 5 * 256 * 2**22 / (g.sms * 64 * g.sm_clock_mhz * 1e6) * 1e3
    assert p.predictions["uniform (div_02) at n = 2^22, 256 rounds"] == f"{uniform:.3f} ms"
    div = {x.kernel: x.grid for x in p.launches if x.variant}
    assert div["div_01_branch_on_lane_parity"] == div["div_02_branch_on_warp_index"] == (2**22 // 256,)


def test_set_changes_the_triton_configuration_and_says_so():
    try:
        config.set_overrides(["BLOCK=512", "num_warps=8"])
        x = next(x for x in plan.make(l3, l3b, device.profile_info("l4")).launches if x.impl == "triton")
        assert x.grid == (2**22 // 512,) and x.defines == {"BLOCK": 512} and x.num_warps == 8 and x.threads == 256
        assert "--set BLOCK=512" in x.config_source and "--set num_warps=8" in x.config_source
        config.set_overrides(["BLOCK=300"])
        with pytest.raises(ValueError, match="BLOCK a power of two"):
            l3.triton_config()
    finally:
        config.set_overrides([])


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert lab_main(l3)(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out and "BSSY" in out and "computed: no GPU" in out


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("block", [(256, 1), (16, 4), (7, 3), (32, 32), (1, 1)])
def test_whoami_records(block):
    n = 3 * block[0] * block[1] + 5                    # a partial last block
    rec = l3.whoami(n, block).get()
    d = device.info()
    bx, by = block
    per = bx * by
    r = np.arange(n)
    tid = r % per
    assert np.array_equal(rec[:, 0], r // per)
    assert np.array_equal(rec[:, 1], tid % bx) and np.array_equal(rec[:, 2], tid // bx)
    assert np.array_equal(rec[:, 3], tid) and np.array_equal(rec[:, 4], tid // 32)
    assert np.array_equal(rec[:, 5], tid % 32), "%laneid disagrees with (tx + ty * bx) % 32"
    assert (rec[:, 6] >= 0).all() and (rec[:, 6] < max(d.sms, 256)).all()
    assert (rec[:, 9] >= rec[:, 8]).all()
    # one block runs on one SM
    for b in range(int(rec[:, 0].max()) + 1):
        assert len(set(rec[rec[:, 0] == b, 6])) == 1


@gpu
def test_whoami_spin_keeps_blocks_resident():
    d = device.info()
    rec = l3.whoami(2 * 256, (256, 1), spin_cycles=int(5 * d.sm_clock_mhz)).get()   # ~5 us
    assert (rec[:, 9] - rec[:, 8] >= 1000).all()       # every thread saw at least ~1 us pass
    with pytest.raises(ValueError, match="block"):
        l3.whoami(10, (1024, 2))


@gpu
@pytest.mark.parametrize("fn", [l3.div_cuda_01, l3.div_cuda_02])
def test_divergence_kernels_on_device(fn):
    import cupy

    x, _ = l3.make_inputs(4097, "int32", check.rng(1), "cuda")
    assert bool((fn(x, 0) == x).all())                 # zero rounds: the identity
    u = cupy.asarray(x).view(cupy.uint32)
    want = l3.reference(x.get().astype(np.float64), 7)
    assert np.array_equal(fn(u, 7).view(cupy.int32).get().astype(np.float64), want)   # uint32 input works too
    with pytest.raises(TypeError, match="dtype"):
        fn(x.astype(cupy.float32), 3)
    with pytest.raises(ValueError, match="rounds"):
        fn(x, -1)
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(x[::2], 3)
    assert fn(cupy.empty(0, cupy.int32), 3).shape == (0,)
