"""Lab 2.1 coalescing: the sector and bank models every prediction comes from, compiler facts read from NVRTC (never
hard-coded where the compiler decides), the Triton transpose in the interpreter, input validation, the lab's --quick run
on the CPU, --replot from the committed JSON; on a GPU the tile-row loop past gridDim.y, transpose_04's alternative
parameters, the strided copy and bad input on the device."""
import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from phase2_cuda.lab01_coalescing_transpose import bench as trb
from phase2_cuda.lab01_coalescing_transpose import lab as tr
from tests.helpers import cp, lab_main, needs_sass, quick_output, rand, replot

gpu = pytest.mark.gpu


# =====================================================================================================================
# CPU tier
# =====================================================================================================================
def test_sector_model_counts_sectors_by_enumeration():
    # lane i reads element i * s of an aligned fp32 array: 4 s bytes apart, 32-byte sectors
    for s in range(1, 41):
        assert tr.strided_sectors(s) == min(32, 4 * s), s
    assert tr.strided_prediction(1, 1000.0)["pred_gbps"] == pytest.approx(1000.0)
    assert tr.strided_prediction(8, 1000.0)["pred_gbps"] == pytest.approx(1000.0 * 8 / 36)
    table = {r["kernel"]: r for r in tr.access_table()}
    assert table["transpose_01_naive"]["store sectors"] == 32 and table["transpose_01_naive"]["load sectors"] == 4


def test_padding_removes_the_tile_conflict():
    assert tr.smem_passes_per_tile(32) == 32 + 32 * 32
    assert tr.smem_passes_per_tile(33) == 64


def test_predictions_follow_the_models():
    p = trb.predictions(16384, 16384, 4000.0, 132, 1980.0)
    hbm = p["cuda 04 padded ilp"][0]
    assert hbm == pytest.approx(8 * 16384**2 / 4e9)
    assert p["cuda 02 smem tiled"][0] > 1.5 * hbm          # 1056 passes per tile: shared memory is the bound
    assert p["cuda 03 padded"][0] == pytest.approx(hbm)     # 64 passes: back under the DRAM time


def test_grid_caps_y_and_the_kernels_loop_over_the_rest():
    assert tr.grid_for(2_100_000, 3, 32) == (1, 65535)          # 65,625 tile rows: the loop does the last 90
    assert tr.grid_for(1, 1, 32) == (1, 1)
    assert tr.grid_for(1000, 1003, 32, max_grid_y=3) == (32, 3)
    assert tr.grid_for(0, 5, 32) == (1, 1)


@needs_sass
def test_transpose_compile_facts():
    rep = cuda.compile_report(tr.CU, "sm_90")
    k = rep.kernels
    assert k["transpose_01_naive"].sass_counts.get("BAR", 0) == 0
    for name in ("transpose_02_smem_tiled", "transpose_03_padded", "transpose_04_padded_ilp"):
        assert k[name].sass_counts.get("BAR", 0) >= 1, name
    # 02 and 03: the same instructions, 128 bytes more shared memory for the pad
    c2, c3 = k["transpose_02_smem_tiled"].sass_counts, k["transpose_03_padded"].sass_counts
    assert {o: c2.get(o) for o in ("LDS.32", "STS.32", "LDG.32", "STG.32")} == \
           {o: c3.get(o) for o in ("LDS.32", "STS.32", "LDG.32", "STG.32")}
    assert k["transpose_03_padded"].smem_bytes - k["transpose_02_smem_tiled"].smem_bytes == 32 * 4
    # 04: all 16 loads issued before the first shared store, within the 64-register launch bound, no spill
    sass = [ln for ln in k["transpose_04_padded_ilp"].sass if "LDG" in ln or "STS" in ln]
    first_sts = next(i for i, ln in enumerate(sass) if "STS" in ln)
    assert sum("LDG" in ln for ln in sass[:first_sts]) == (tr.BIG_TILE // 32) * (tr.BIG_TILE // tr.ROWS)
    assert k["transpose_04_padded_ilp"].registers <= 64 and k["transpose_04_padded_ilp"].spills == 0
    # 03 stages its 4 loads before its shared stores too
    sass3 = [ln for ln in k["transpose_03_padded"].sass if "LDG" in ln or "STS" in ln]
    first_sts3 = next(i for i, ln in enumerate(sass3) if "STS" in ln)
    assert sum("LDG" in ln for ln in sass3[:first_sts3]) == tr.TILE // tr.ROWS


def test_transpose_04_alternatives_compile_without_spills():
    for cfg in [tr.T04] + tr.T04_ALTERNATIVES:
        k = cuda.compile_report(tr.CU, "sm_90", defines=None if cfg == tr.T04 else cfg)["transpose_04_padded_ilp"]
        assert k.spills == 0, cfg
        assert k.registers <= 65536 // (32 * cfg["ROWS"] * cfg["T04_MIN_BLOCKS"]), cfg


@pytest.mark.cpu_only
@pytest.mark.parametrize("shape", [(1, 1), (33, 31), (2, 70), (65, 1)])
def test_triton_transpose_in_the_interpreter(shape):
    a = rand(shape, 1)
    out = check.poison(np.empty(shape[::-1], np.float32))
    got = tr.transpose_triton(a, out=out)
    assert got is out and np.array_equal(out, a.T)


@pytest.mark.cpu_only
def test_triton_transpose_rejects_bad_input():
    a = rand((4, 6))
    with pytest.raises(ValueError, match="2-D"):
        tr.transpose_triton(a.ravel())
    with pytest.raises(TypeError, match="dtype float16"):
        tr.transpose_triton(a.astype(np.float16))
    with pytest.raises(ValueError, match="out: expected shape"):
        tr.transpose_triton(a, out=np.empty((4, 6), np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        tr.transpose_triton(np.asfortranarray(a))
    sq = rand((5, 5))
    with pytest.raises(ValueError, match="overlap"):
        tr.transpose_triton(sq, out=sq)
    assert tr.transpose_triton(np.empty((0, 3), np.float32)).shape == (3, 0)


@pytest.mark.parametrize("fn", [tr.transpose_cuda_01, tr.transpose_cuda_02, tr.transpose_cuda_03,
                                tr.transpose_cuda_04, tr.copy_tiled])
def test_cuda_transposes_reject_host_arrays(fn):
    with pytest.raises(TypeError, match=r"a: expected a GPU array.*cupy.asarray"):
        fn(np.ones((4, 4), np.float32))


def _plan(slug):
    return plan.make(tr, trb, device.profile_info(slug))


def test_plan_on_two_gpus_follows_their_bandwidth_and_shared_memory():
    """The same 1056 passes per tile are the bound where bandwidth per SM clock is high and hide under the DRAM time
    where it is low; 04's padded 64 x 64 tile (16.6 KiB) fits four blocks in 228 KiB of shared memory per SM but
    only three in 64 KiB."""
    big, small = _plan("h200"), _plan("t4")
    for p in (big, small):
        assert not p.skipped and [x.kernel for x in p.launches if x.variant == "cuda 04 padded ilp"] == \
            ["transpose_04_padded_ilp"]
        t04 = next(x for x in p.launches if x.kernel == "transpose_04_padded_ilp")
        assert t04.grid == (256, 256) and t04.threads == 256 and t04.config_source == "default"
    key = "cuda 02: 1056 shared-memory passes per tile, one per clock"
    assert "shared memory is the bound" in big.predictions[key]
    assert "under the DRAM time" in small.predictions[key]
    offers = {p.gpu.arch: next(v for k, v in p.predictions.items() if k.startswith("cuda 04 offers"))
              for p in (big, small)}
    assert offers["sm_90"].startswith("4 blocks") and offers["sm_75"].startswith("3 blocks")


def test_set_changes_transpose_04_and_says_so():
    gpu = device.profile_info("rtx-4090")
    try:
        config.set_overrides(["ROWS=16", "BM=32"])
        got = {x.kernel: x for x in tr.launches(gpu)}
        t04, tri = got["transpose_04_padded_ilp"], got["transpose_kernel"]
        assert t04.threads == 512 and t04.defines["ROWS"] == 16 and "--set ROWS=16" in t04.config_source
        assert tri.defines["BM"] == 32 and tri.grid == (512 * 256,) and "--set BM=32" in tri.config_source
        config.set_overrides(["BIG_TILE=128"])             # 128 x 129 floats: more than a kernel may declare
        with pytest.raises(ValueError, match="BIG_TILE in 32, 64, 96"):
            tr.t04_config()
    finally:
        config.set_overrides([])
    assert tr.t04_config().values == tr.T04


def test_benchmark_sizes_fit_the_gpus_memory():
    side, n, notes = tr.fit_sizes(device.profile_info("t4"))
    assert (side, n, notes) == (tr.MAIN_SIDE, tr.STRIDED_N, [])
    small = device.profile_info("t4")
    small.total_mem_bytes = 2**31                         # a 2 GiB card: 1.2 GiB for the benchmark
    side, _, notes = tr.fit_sizes(small)
    assert side == 8192 and tr.bench_bytes(side) <= 0.6 * 2**31 and "scaled down" in notes[0]


@pytest.mark.cpu_only
def test_main_quick_on_the_cpu(capsys):
    out = quick_output(lab_main(tr), capsys)
    assert "sectors per warp request" in out and "pitch 33 -> 64" in out      # the models (bench.explain)
    assert "transpose_04_padded_ilp" in out                                   # the compile report
    assert "predictions for NVIDIA H100" in out                                # sm_90's example GPU, not a fixed one


def test_replot_draws_the_committed_json(tmp_path):
    assert replot(lab_main(tr), tmp_path) == [f"{tr.LAB}.png", f"{tr.LAB}_strided.png"]


# =====================================================================================================================
# GPU tier
# =====================================================================================================================


@gpu
@pytest.mark.parametrize("fn,tile", [(tr.transpose_cuda_01, 32), (tr.transpose_cuda_02, 32),
                                     (tr.transpose_cuda_03, 32), (tr.transpose_cuda_04, 64)])
@pytest.mark.parametrize("shape", [(1000, 1003), (4097, 65), (33, 31), (1, 1)])
def test_transpose_tile_row_loop(fn, tile, shape):
    """max_grid_y=3 forces every block to walk several tile rows: the loop past gridDim.y's limit, on small shapes."""
    a = cp(rand(shape, 5))
    out = check.poisoned(shape[::-1], "float32", a)
    fn(a, out=out, max_grid_y=3)
    assert np.array_equal(arrays.to_numpy(out), arrays.to_numpy(a).T)


@gpu
@pytest.mark.parametrize("cfg", tr.T04_ALTERNATIVES, ids=tr.config_name)
def test_transpose_04_alternatives(cfg):
    for shape in ((1000, 1003), (97, 65), (1, 300)):
        a = cp(rand(shape, 9))
        out = check.poisoned(shape[::-1], "float32", a)
        tr.transpose_cuda_04(a, out=out, max_grid_y=2, config=cfg)
        assert np.array_equal(arrays.to_numpy(out), arrays.to_numpy(a).T), shape
    with pytest.raises(ValueError, match="config"):
        tr.transpose_cuda_04(a, config={"TILE": 16})


@gpu
def test_transpose_04_past_the_grid_y_limit():
    a = cp(rand((4_200_000, 2), 6))                     # 65,625 tiles of 64 rows > 65,535
    assert np.array_equal(arrays.to_numpy(tr.transpose_cuda_04(a)), arrays.to_numpy(a).T)


@gpu
@pytest.mark.parametrize("fn", [tr.transpose_cuda_01, tr.transpose_cuda_03, tr.transpose_cuda_04,
                                tr.transpose_triton])
def test_transpose_bad_input_on_gpu(fn):
    import cupy

    a = cp(rand((8, 8)))
    with pytest.raises(ValueError, match="overlap"):
        fn(a, out=a)
    with pytest.raises(ValueError, match="overlap"):
        fn(a[:4], out=a.reshape(-1)[8:40].reshape(8, 4))    # out shares elements 8..31 with the input
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(a.T)
    with pytest.raises(TypeError, match="dtype"):
        fn(a.astype(cupy.float64))
    with pytest.raises(ValueError, match="out: expected shape"):
        fn(a[:4], out=cupy.empty((4, 8), cupy.float32))
    assert fn(cupy.empty((0, 7), cupy.float32)).shape == (7, 0)


@gpu
@pytest.mark.parametrize("stride", [1, 2, 3, 7, 8, 33, 1000])
def test_strided_copy(stride):
    x = cp(rand(100_001, stride))
    for view in (x, x[1:]):                              # a misaligned view is fine: scalar loads only
        want = arrays.to_numpy(view)[::stride]
        assert np.array_equal(arrays.to_numpy(tr.strided_copy(view, stride)), want)
    with pytest.raises(ValueError, match="stride"):
        tr.strided_copy(x, 0)


@gpu
def test_the_probes_check_passes():
    rows, ok = trb.check_probes()
    assert ok and len(rows) == 8, rows
