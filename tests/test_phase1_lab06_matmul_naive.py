"""Lab 1.6 naive matmul: the two kernels differ only in their addresses (SASS census), the sector counts and the
prediction, the tolerance that fp32 passes and TF32 fails, the Triton tile kernel in the interpreter on edge shapes,
bad input before any launch, --size, main(["--quick"]), the plot redrawn from the committed JSON, the lab's plan and
predictions on a T4 and an RTX 4090, the shapes scaled to a GPU with little memory, --set on the Triton tile; on a
GPU bad input and empty shapes on device, grids past the y limit, and the cuBLAS peer refusing TF32."""
import dataclasses
import os

import numpy as np
import pytest

from common import check, config, cuda, device, plan
from phase1_architecture.lab06_matmul_naive import bench as l6b
from phase1_architecture.lab06_matmul_naive import lab as l6
from tests.helpers import lab_main, replot

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (a GPU is present)")
SASS = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


def _ops(k, prefix):
    return sum(v for key, v in k.sass_counts.items() if key.startswith(prefix))


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
@SASS
@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_naive_matmuls_differ_only_in_addresses(arch):
    rep = cuda.compile_report(l6.CU, arch)
    c1, c2 = rep["mm_01_naive_uncoalesced"].sass_counts, rep["mm_02_naive_coalesced"].sass_counts
    assert c1.get("FFMA", 0) == c2.get("FFMA", 0) > 0
    assert _ops(rep["mm_01_naive_uncoalesced"], "LDG") == _ops(rep["mm_02_naive_coalesced"], "LDG") > 0


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: references and prediction helpers
# ---------------------------------------------------------------------------------------------------------------------
def test_sector_counts_and_the_prediction():
    assert l6.warp_sectors("coalesced", 4096, 4096, 4096) == {"A": 1, "B": 4}
    assert l6.warp_sectors("uncoalesced", 4096, 4096, 4096) == {"A": 32, "B": 1}
    # a row of B that does not start on a 32-byte boundary spans 5 sectors
    assert l6.warp_sectors("coalesced", 64, 4097, 64, kk=1)["B"] == 5
    ratio, un, co = l6.predicted_ratio(4096, 4096, 4096)
    assert ratio == pytest.approx(33 / 5)
    assert l6.predicted_ratio(5, 7, 0)[0] > 0
    with pytest.raises(ValueError, match="mapping"):
        l6.warp_sectors("diagonal", 8, 8, 8)


@pytest.mark.parametrize("slug", ["t4", "rtx-4090"])
def test_plan_grids_and_predictions(slug):
    g = device.profile_info(slug)
    p = plan.make(l6, l6b, g)
    grids = [(x.kernel, x.case, x.grid) for x in p.launches]
    assert grids == [("mm_01_naive_uncoalesced", "4096x4096x4096 float32", (128, 512)),
                     ("mm_02_naive_coalesced", "4096x4096x4096 float32", (128, 512)),
                     ("matmul_tile_kernel", "4096x4096x4096 float32", (4096,)),
                     ("mm_01_naive_uncoalesced", "2999x3001x2027 float32", (94, 376)),
                     ("mm_02_naive_coalesced", "2999x3001x2027 float32", (94, 375)),
                     ("matmul_tile_kernel", "2999x3001x2027 float32", (47 * 47,))]
    assert p.predictions["sectors per k step, mm_01 / mm_02"] == "33 / 5: mm_01 6.6x slower"
    fp32 = g.datasheet["fp32_tflops"]
    want = 2 * 4096**3 / (0.75 * fp32 * 1e12) * 1e3
    assert p.predictions[f"cuBLAS at ~75% of {fp32:g} TFLOP/s FP32"] == f"~{want:.1f} ms"


def test_plan_scales_the_shapes_to_a_gpu_with_little_memory():
    g = dataclasses.replace(device.profile_info("t4"), total_mem_bytes=256 * 2**20)
    cases = {x.case for x in plan.make(l6, l6b, g).launches}
    # 192 MiB of A, B and C do not fit 60% of 256 MiB: every dimension is halved once (48 MiB)
    assert cases == {"2048x2048x2048 float32", "2999x3001x2027 float32"}


def test_set_changes_the_triton_tile_and_says_so():
    try:
        config.set_overrides(["BLOCK_M=128"])
        x = next(x for x in plan.make(l6, l6b, device.profile_info("l4")).launches if x.impl == "triton")
        assert x.defines == {"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32} and x.grid == (32 * 64,)
        assert "--set BLOCK_M=128" in x.config_source
        config.set_overrides(["BLOCK_K=8"])
        with pytest.raises(ValueError, match="powers of two in 16..256"):
            l6.triton_config()
    finally:
        config.set_overrides([])


def _tf32(a: np.ndarray) -> np.ndarray:
    """Round float32 values to TF32 (10 explicit mantissa bits), nearest."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x1000) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def test_matmul_tolerance_accepts_fp32_and_rejects_tf32():
    rng = check.rng(4)
    m, n, k = 48, 40, 4096
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    ref = a @ b
    tol = l6.tolerance((m, n, k), "float32")
    fp32 = a.astype(np.float32) @ b.astype(np.float32)
    tf32 = _tf32(a).astype(np.float64) @ _tf32(b).astype(np.float64)
    assert check.compare(fp32, ref, "float32", tol).ok
    assert not check.compare(tf32, ref, "float32", tol).ok


def test_tf32_state_sees_the_override(monkeypatch):
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "1")
    assert l6.tf32_state() != "off"
    monkeypatch.delenv("NVIDIA_TF32_OVERRIDE")
    monkeypatch.delenv("CUPY_TF32", raising=False)
    assert l6.tf32_state() == "off"


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: Triton in the interpreter, edge cases, and bad input
# ---------------------------------------------------------------------------------------------------------------------
@cpu_only
def test_triton_matmul_edge_shapes():
    for m, n, k in [(1, 1, 1), (1, 70, 33), (65, 1, 2), (3, 4, 0), (0, 4, 3), (5, 0, 3)]:
        a, b = l6.make_inputs((m, n, k), "float32", check.rng(m + n + k), "cpu")
        out = check.poisoned((m, n), "float32", a)
        res = l6.mm_triton(a, b, out=out)
        assert res.shape == (m, n)
        check.assert_close(res, l6.reference(a, b), "float32", l6.tolerance((m, n, k), "float32"),
                           what=f"{m}x{n}x{k}")


def test_triton_tile_never_reads_a_k_column_past_k():
    """The k-tile masks hold A's columns and B's rows to k < K on the last, partial k-tile: A here is a row-strided view
    whose 19 columns past K are NaN, and B's 13 rows past K are NaN too. A kernel that reads one of them gets
    NaN x 0 = NaN (the other operand's mask zeroes its side), so the output must stay finite and right."""
    from common import arrays, lab
    from common.triton_support import launch
    from phase1_architecture.lab06_matmul_naive.triton_kernels import matmul_tile_kernel

    m, n, k, pad_a, pad_b = 37, 29, 45, 19, 13                      # K = 45: a partial second k-tile of 32
    rng = np.random.default_rng(16)
    a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))
    a_wide = np.full((m, k + pad_a), np.nan)
    a_wide[:, :k] = a
    b_tall = np.full((k + pad_b, n), np.nan)
    b_tall[:k] = b
    where = lab.where()
    dev_a, dev_b = arrays.from_numpy(a_wide, "float32", where), arrays.from_numpy(b_tall, "float32", where)
    out = check.poisoned((m, n), "float32", dev_a)
    tile = l6.TRITON_TILE
    grid = (-(-m // tile["BLOCK_M"]) * -(-n // tile["BLOCK_N"]),)
    launch(matmul_tile_kernel, grid, dev_a, dev_b, out, m, n, k, k + pad_a, n, n, num_warps=l6.TRITON_WARPS, **tile)
    ref = a.astype(np.float32).astype(np.float64) @ b.astype(np.float32).astype(np.float64)
    check.assert_close(out, ref, "float32", l6.tolerance((m, n, k), "float32"), what="NaN past K in A and in B")


@cpu_only
def test_triton_matmul_rejects_bad_input():
    a = np.ones((4, 3), np.float32)
    with pytest.raises(ValueError, match="inner dimensions"):
        l6.mm_triton(a, np.ones((4, 5), np.float32))
    with pytest.raises(ValueError, match="2-D"):
        l6.mm_triton(np.ones(12, np.float32), np.ones((12, 1), np.float32))
    with pytest.raises(TypeError, match="dtype float64"):
        l6.mm_triton(a.astype(np.float64), np.ones((3, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        l6.mm_triton(np.ones((3, 4), np.float32).T, np.ones((3, 2), np.float32))
    with pytest.raises(ValueError, match="out: expected shape"):
        l6.mm_triton(a, np.ones((3, 2), np.float32), out=np.empty((4, 3), np.float32))


@pytest.mark.parametrize("fn", [l6.mm_cuda_01, l6.mm_cuda_02, l6.peer_cublas])
def test_cuda_wrappers_reject_host_arrays_before_launching(fn):
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError, match="expected a GPU array"):
        fn(x.reshape(2, 4), x.reshape(4, 2))


@cpu_only
def test_main_quick_on_the_cpu(capsys, tmp_path):
    assert lab_main(l6)(["--quick", "--out", str(tmp_path), "--size", "64,32,16"]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out and "64x32x16 (from the addresses)" in out and "same instruction mix" in out


def test_size_flag_takes_m_n_k_or_a_cube():
    assert l6b._parse_size("2999,3001,2027") == (2999, 3001, 2027) == l6b._parse_size("2999x3001x2027")
    assert l6b._parse_size("512") == (512, 512, 512)
    with pytest.raises(SystemExit) as e:
        lab_main(l6)(["--size", "3,0,2"])
    assert e.value.code == 2


def test_replot_draws_the_committed_json(tmp_path):
    replot(lab_main(l6), tmp_path)
    assert os.path.getsize(tmp_path / f"{l6.LAB}.png") > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("fn", [l6.mm_cuda_01, l6.mm_cuda_02, l6.mm_triton, l6.peer_cublas])
def test_matmul_bad_input_and_empty_on_device(fn):
    import cupy
    import torch

    a = cupy.ones((4, 3), cupy.float32)
    with pytest.raises(ValueError, match="inner dimensions"):
        fn(a, cupy.ones((4, 5), cupy.float32))
    with pytest.raises(ValueError, match="2-D"):
        fn(cupy.ones(12, cupy.float32), cupy.ones((12, 1), cupy.float32))
    with pytest.raises(TypeError, match="dtype"):
        fn(a.astype(cupy.float64), cupy.ones((3, 2)))
    with pytest.raises(ValueError, match="C-contiguous"):
        fn(cupy.ones((3, 4), cupy.float32).T, cupy.ones((3, 2), cupy.float32))
    if fn is not l6.mm_triton:
        with pytest.raises(TypeError, match="from_dlpack"):
            fn(torch.from_dlpack(a), torch.from_dlpack(cupy.ones((3, 2), cupy.float32)))
    assert fn(cupy.ones((0, 3), cupy.float32), cupy.ones((3, 2), cupy.float32)).shape == (0, 2)
    z = fn(cupy.ones((4, 0), cupy.float32), cupy.ones((0, 2), cupy.float32))
    assert z.shape == (4, 2) and not bool(z.any())


@gpu
@pytest.mark.parametrize("fn,shape", [(l6.mm_cuda_02, (524_300, 3, 2)), (l6.mm_cuda_01, (3, 524_300, 2))])
def test_matmul_beyond_the_grid_y_limit(fn, shape):
    """65535 blocks of 8 rows (or columns) is 524,280: past it the kernels' grid-stride loop must take over."""
    m, n, k = shape
    a, b = l6.make_inputs(shape, "float32", check.rng(9), "cuda")
    out = check.poisoned((m, n), "float32", a)
    fn(a, b, out=out)
    check.assert_close(out, l6.reference(a.get(), b.get()), "float32", l6.tolerance(shape, "float32"))


@gpu
def test_cublas_peer_refuses_tf32(monkeypatch):
    import cupy

    assert l6.tf32_state() == "off"
    monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", "1")
    a = cupy.ones((4, 4), cupy.float32)
    with pytest.raises(RuntimeError, match="TF32"):
        l6.peer_cublas(a, a)
