"""Phase 1 labs other than vector add and the device tour: occupancy, naive matmul.

CPU tier: what the compiler made of every kernel (NVRTC + SASS census), the Triton kernels in the interpreter on edge
cases the generic test does not cover, the references against brute force, the prediction helpers, bad input
rejected before any launch, and each lab's main(["--quick"]).
GPU tier (@gpu): the kernels' own outputs (records, pointer chase, shared memory, FMA), awkward sizes and views,
bad input on device, the occupancy forcing against the driver.
"""
import os

import numpy as np
import pytest

from common import check, cuda, device
from common import occupancy as oc
from phase1_architecture import lab05_occupancy as l5
from phase1_architecture import lab06_matmul_naive as l6

gpu = pytest.mark.gpu
cpu_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter-only test (a GPU is present)")
SASS = pytest.mark.skipif(cuda.find_cuobjdump() is None, reason="no cuobjdump to disassemble with")


def _ops(k, prefix):
    return sum(v for key, v in k.sass_counts.items() if key.startswith(prefix))


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


@cpu_only
def test_triton_hash_and_scale_small_cases():
    s = l5.scale_triton(np.array([1.0, -2.0, 3.0], np.float32), 2.5)
    assert np.array_equal(s, np.array([2.5, -5.0, 7.5], np.float32))


CUDA_WRAPPERS = [
    (l5.scale_cuda_01, lambda x: (x, 2.0)), (l5.scale_cuda_02, lambda x: (x, 2.0)),
    (l6.mm_cuda_01, lambda x: (x.reshape(2, 4), x.reshape(4, 2))),
    (l6.mm_cuda_02, lambda x: (x.reshape(2, 4), x.reshape(4, 2))),
    (l6.peer_cublas, lambda x: (x.reshape(2, 4), x.reshape(4, 2))),
]


@pytest.mark.parametrize("fn,args", CUDA_WRAPPERS, ids=[f.__name__ for f, _ in CUDA_WRAPPERS])
def test_cuda_wrappers_reject_host_arrays_before_launching(fn, args):
    x = np.ones(8, np.float32)
    with pytest.raises(TypeError, match="expected a GPU array"):
        fn(*args(x))


@pytest.mark.parametrize("lab", [l5, l6], ids=lambda m: m.__name__.split(".")[-1])
@cpu_only
def test_main_quick_on_the_cpu(lab, capsys, tmp_path):
    assert lab.main(["--quick", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "no GPU" in out or "No GPU" in out


def test_record_fixture_needs_a_gpu(capsys):
    if device.has_gpu():
        pytest.skip("a GPU is present")
    assert l5.main(["--record-fixture", "/tmp/never-written.json"]) == 2
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
        drv, _ = l5.driver_blocks(k, cfg["threads"], cfg["dyn"])
        assert drv == cfg["blocks_per_sm"], (name, w, cfg)


@gpu
def test_live_calculator_agreement():
    cases, bad = l5.live_agreement(quick=True)
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
