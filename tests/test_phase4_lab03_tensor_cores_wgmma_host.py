"""Lab 4.3, gemm_wgmma's host side on the CPU (wgmma_launch.py, common/hopper.py): TMA's rules, argument validation
before any launch, the tensor maps and launch arguments the wrapper builds (the driver calls replaced by recorders),
the build arguments and the fused epilogue's operands checked by name; where rung 03 runs (no GPU, GPUs off Hopper)
and its persistent grid; the debugging aid's probes and summary; the lab's CLI without a GPU."""

import numpy as np
import pytest

from common import device
from phase4_optimization.lab03_tensor_cores import bench_compile
from phase4_optimization.lab03_tensor_cores import lab as tc
from phase4_optimization.lab03_tensor_cores import wgmma as wg
from tests.helpers import lab_main
from tests.wgmma_fakes import fake_driver


@pytest.fixture
def fake_host(monkeypatch):
    return fake_driver(monkeypatch)


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: TMA rules and argument validation (all before any launch)
# ---------------------------------------------------------------------------------------------------------------------
def test_tma_rules():
    wg.tma_box_check(256, 64, 128, 128, 64, 128)
    with pytest.raises(ValueError, match="16-byte aligned"):
        wg.tma_box_check(8, 64, 128, 128, 64, 128, name="a")
    with pytest.raises(ValueError, match="multiple of 16"):
        wg.tma_box_check(0, 13, 5, 26, 64, 128)
    with pytest.raises(ValueError, match="shorter"):
        wg.tma_box_check(0, 64, 5, 64, 64, 128)
    with pytest.raises(ValueError, match="<= 128 bytes"):
        wg.tma_box_check(0, 256, 5, 512, 128, 64)
    with pytest.raises(ValueError):
        wg.tma_box_check(0, 64, 5, 128, 64, 512)


def test_validation_rejects_bad_arguments():
    torch = pytest.importorskip("torch")
    a = torch.zeros((4, 8), dtype=torch.bfloat16)
    b = torch.zeros((8, 16), dtype=torch.bfloat16)
    with pytest.raises(TypeError, match="a: dtype float32"):
        wg.gemm_wgmma(a.float(), b)
    with pytest.raises(TypeError, match="b:"):
        wg.gemm_wgmma(a, [[1.0]])
    with pytest.raises(ValueError, match="2-D"):
        wg.gemm_wgmma(a[None], b)
    with pytest.raises(ValueError, match="inner dimensions"):
        wg.gemm_wgmma(a, b[:7])
    with pytest.raises(TypeError, match="dtypes must match"):
        wg.gemm_wgmma(a, b.half())
    if not device.has_gpu():
        with pytest.raises(TypeError, match="GPU array"):
            wg.gemm_wgmma(a, b)
    with pytest.raises(TypeError):
        wg.gemm_wgmma(np.zeros((4, 8), np.float16), np.zeros((8, 16), np.float16))


@pytest.mark.parametrize("m,n,k,b_kmajor,tma_store", [(33, 70, 13, False, False), (128, 256, 64, False, False),
                                                       (5, 9, 3, True, False), (300, 256, 520, True, False),
                                                       (300, 264, 520, False, True), (33, 70, 13, False, True),
                                                       (5, 8, 3, True, True)])
def test_host_path_tensor_maps(monkeypatch, tuning_record, m, n, k, b_kmajor, tma_store):
    """The wrapper's host logic without a GPU: padding to TMA-legal strides, the tensor-map dims/strides/boxes and
    the launch arguments (the driver calls are replaced by recorders; CPU torch tensors stand in for GPU ones; no
    tuning record, whatever results/ holds for this machine)."""
    torch = pytest.importorskip("torch")
    maps, launches = [], []

    def fake_encode(buf, dtype, rank, ptr, dims, strides, box, estr, inter, swz, l2, oob):
        maps.append(dict(dtype=dtype, rank=rank, ptr=ptr.value or 0, dims=(dims[0], dims[1]), stride=strides[0],
                         box=(box[0], box[1]), swizzle=swz, oob=oob))
        return 0

    fake_driver(monkeypatch, encode=fake_encode, launch=lambda *args: launches.append(args))
    a = torch.zeros((m, k), dtype=torch.bfloat16)
    b = torch.zeros((k, n), dtype=torch.bfloat16)
    out = wg.gemm_wgmma(a, b, b_kmajor=b_kmajor, tma_store=tma_store)
    assert tuple(out.shape) == (m, n) and out.dtype == torch.bfloat16
    c_map = tma_store and n % 8 == 0 and out.data_ptr() % 16 == 0    # else EPI_TMA stores from registers
    assert len(maps) == 2 + c_map
    map_b, map_a = maps[:2]                               # B's map is built first, C's (if any) last
    if c_map:
        map_c = maps[2]
        assert map_c["dims"] == (n, m) and map_c["box"] == (64, 64) and map_c["stride"] == 2 * n
        assert map_c["ptr"] == out.data_ptr()
    assert map_a["dims"] == (k, m) and map_a["box"] == (wg.BK, wg.BM)
    assert map_a["stride"] % 16 == 0 and map_a["stride"] >= 2 * k
    assert map_a["ptr"] == (a.data_ptr() if k % 8 == 0 else map_a["ptr"]) and map_a["ptr"] % 16 == 0
    if b_kmajor:
        assert map_b["dims"] == (k, n) and map_b["box"] == (wg.BK, wg.BN)
    else:
        assert map_b["dims"] == (n, k) and map_b["box"] == (64, wg.BK)
    assert map_b["stride"] % 16 == 0
    assert all(mp["dtype"] == wg.TMA_DTYPE["bfloat16"] and mp["swizzle"] == 3 and mp["oob"] == 0 and mp["rank"] == 2
               for mp in maps)
    (dt, _, _, out_l, m_l, n_l, k_l, kmaj_l, cluster_l, epi_l, map_c_l, passes_l, ops_l, *_), = launches
    assert ops_l == 0                                     # no fused epilogue asked for
    assert (dt, m_l, n_l, k_l, kmaj_l, out_l is out) == ("bfloat16", m, n, k, b_kmajor, True)
    assert cluster_l == (1 if b_kmajor or -(-m // wg.BM) < 2 else wg.default_cluster())
    assert epi_l is tma_store and (map_c_l is not None) == c_map and passes_l == 1


@pytest.mark.parametrize("n, k, copied", [(264, 520, False), (70, 13, True), (8, 8, False)])
def test_b_kmajor_reads_a_transposed_weight_without_a_copy(monkeypatch, tuning_record, n, k, copied):
    """b_kmajor with B = W.t() (W (N, K) contiguous, as a layer's weight in dX = dY W^T): B's tensor map points at W
    itself unless K breaks TMA's stride rule (then a padded copy); a view is refused without b_kmajor, which would
    need a copy of its own."""
    torch = pytest.importorskip("torch")
    maps = []

    def fake_encode(buf, dtype, rank, ptr, dims, strides, box, estr, inter, swz, l2, oob):
        maps.append(dict(ptr=ptr.value or 0, dims=(dims[0], dims[1]), stride=strides[0]))
        return 0

    fake_driver(monkeypatch, encode=fake_encode, launch=lambda *args: None)
    a = torch.zeros((33, k), dtype=torch.bfloat16)
    w = torch.zeros((n, k), dtype=torch.bfloat16)
    wg.gemm_wgmma(a, w.t(), b_kmajor=True, tma_store=False)
    assert maps[0]["dims"] == (k, n) and (maps[0]["ptr"] == w.data_ptr()) is not copied
    assert maps[0]["stride"] == 2 * (-(-k // 8) * 8)
    with pytest.raises(ValueError, match="b: expected a C-contiguous"):
        wg.gemm_wgmma(a, w.t(), b_kmajor=False)


def test_tma_store_argument_is_checked(monkeypatch):
    with pytest.raises(ValueError, match="tma_store"):
        wg.compile_report(tma_store=1)
    torch = pytest.importorskip("torch")
    a = torch.zeros((4, 8), dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="tma_store"):
        wg.gemm_wgmma(a, a.t().contiguous(), tma_store="yes")
    with pytest.raises(ValueError, match="c_passes"):
        wg.compile_report(tma_store=True, c_passes=4)
    with pytest.raises(ValueError, match="c_passes"):
        wg.gemm_wgmma(a, a.t().contiguous(), tma_store=False, c_passes=2)
    monkeypatch.setenv("WGMMA_TMA_STORE", "2")
    with pytest.raises(ValueError, match="WGMMA_TMA_STORE"):
        wg.default_tma_store()
    monkeypatch.setenv("WGMMA_TMA_STORE", "1")
    assert wg.default_tma_store() is True
    monkeypatch.delenv("WGMMA_TMA_STORE")
    assert wg.default_tma_store() is False


def test_tma_store_variants_are_listed_and_need_sm90():
    by_name = {v.name: v for v in tc.VARIANTS}
    for name in (tc.WGMMA_TMA_STORE_NAME, tc.WGMMA_CLUSTER_TMA_STORE_NAME):
        assert by_name[name].archs == ("sm_90",) and by_name[name].dtypes == tc.DTYPES
        if not device.has_gpu():
            assert by_name[name].available()[0] is False


def test_cluster_argument_is_checked_and_grid_counts_units():
    with pytest.raises(ValueError, match="cluster"):
        wg.compile_report(cluster=3)
    with pytest.raises(ValueError, match="b_kmajor"):
        wg.compile_report(cluster=2, b_kmajor=True)
    # 300 rows = 3 tile rows -> 2 units of 2; 255 columns = 1 tile column: 2 clusters = 4 blocks
    assert wg.grid_size(300, 255, 2, resident=66) == 4
    assert wg.grid_size(8192, 8192, 2, resident=60) == 120          # capped at the resident clusters
    assert wg.grid_size(8192, 8192, 1, resident=132) == 132                 # 64 x 32 tiles, one block per SM
    assert wg.grid_size(300, 255, 1, resident=132) == 3                     # 3 tiles: 3 blocks


def test_fused_epilogue_arguments_are_checked_by_name(fake_host):
    torch = pytest.importorskip("torch")
    bf = torch.bfloat16
    a, b = torch.zeros((300, 520), dtype=bf), torch.zeros((520, 264), dtype=bf)
    bias, res = torch.zeros(264, dtype=bf), torch.zeros((300, 264), dtype=bf)
    wg.gemm_wgmma(a, b, bias=bias, activation="gelu_tanh")
    wg.gemm_wgmma(a, b, bias=bias, residual=res)
    wg.gemm_wgmma(a, b, residual=torch.zeros((300, 270), dtype=bf)[:, 3:267])        # a row stride of 270
    assert [x[3:] for x in fake_host] == [(wg.EPI_BIAS | wg.EPI_GELU, 0), (wg.EPI_BIAS | wg.EPI_RES, 264),
                                          (wg.EPI_RES, 270)]
    with pytest.raises(ValueError, match="activation"):
        wg.gemm_wgmma(a, b, bias=bias, activation="relu")
    with pytest.raises(ValueError, match="bias: expected 264"):
        wg.gemm_wgmma(a, b, bias=torch.zeros(263, dtype=bf))
    with pytest.raises(TypeError, match="bias"):
        wg.gemm_wgmma(a, b, bias=torch.zeros(264, dtype=torch.float32))
    with pytest.raises(ValueError, match="residual: expected shape"):
        wg.gemm_wgmma(a, b, residual=res.t())
    with pytest.raises(ValueError, match="residual: rows must be contiguous"):
        wg.gemm_wgmma(a, b, residual=torch.zeros((264, 300), dtype=bf).t())
    with pytest.raises(ValueError, match="residual: overlaps out"):
        wg.gemm_wgmma(a, b, residual=res, out=res)
    with pytest.raises(ValueError, match="K = 0"):
        wg.gemm_wgmma(torch.zeros((300, 0), dtype=bf), torch.zeros((0, 264), dtype=bf), bias=bias)
    assert len(fake_host) == 3


@pytest.mark.skipif(device.has_gpu(), reason="checks the no-GPU answer")
def test_unavailable_reason_without_gpu():
    why = wg.unavailable_reason()
    assert why and "GPU" in why


@pytest.mark.parametrize("slug", ["b200", "rtx-5090", "a100-sxm4-80gb", "t4"])
def test_unavailable_reason_for_a_gpu_off_hopper(slug):
    """Asked about a GPU (a simulated profile here: lab 4.3's and lab 4.7's plans), the answer comes from its
    architecture alone: Hopper-only, naming sm_90a and the GPU's own architecture."""
    g = device.profile_info(slug)
    why = wg.unavailable_reason(g)
    assert "Hopper-only" in why and "sm_90a" in why and why.endswith(g.arch) and "\n" not in why
    assert wg.unavailable_reason(device.profile_info("h100-pcie")) is None


def test_grid_is_one_block_per_sm_of_the_gpu_asked_about():
    for slug in ("h100-pcie", "h200"):
        g = device.profile_info(slug)
        assert wg.grid_size(8192, 8192, gpu=g) == g.sms
        blocks, smem, defs = wg.launch_shape(8192, 8192, "bfloat16", False, 2, True, 1, gpu=g)
        assert blocks == g.sms // 2 * 2 and smem == wg.smem_bytes(True, 1)
        assert defs == dict(wg.CONFIG, GEMM_F16=0, MBAR_TIMEOUT=1, B_KMAJOR=0, CLUSTER=2, EPI_TMA=1, C_PASSES=1,
                            EPI_OPS=0, STAGES=wg.EPI_STAGES)
    assert wg.launch_cluster(128, 2) == 1 and wg.launch_cluster(129, 2) == 2     # one tile row: no partner


def test_tolerance_scales_with_k_and_dtype():
    t1, t2 = wg.tolerance(64, "bfloat16"), wg.tolerance(8192, "bfloat16")
    assert t2.elem > t1.elem and t2.rel_norm > t1.rel_norm
    assert wg.tolerance(64, "float16").elem < t1.elem
    assert t2.rel_norm < 1e-2


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the debugging aid
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["b_row", "b_col", "a_row", "a_col"])
def test_index_probes_are_exact_and_spell_the_index(kind):
    a, b, exp = wg._index_probe(kind)
    assert a.shape == (wg.BM, wg.BK) and b.shape == (wg.BK, wg.BN)
    assert np.array_equal(exp, np.rint(exp)) and exp.max() <= 256     # every value exact in bf16
    i, n = np.meshgrid(np.arange(wg.BM), np.arange(wg.BN), indexing="ij")
    want = {"b_row": i % 64 + 1, "b_col": n + 1, "a_row": i + 1, "a_col": n % 64 + 1}[kind]
    assert np.array_equal(exp, want)


def test_mismatch_summary_names_a_swizzle_mixup():
    _, _, exp = wg._index_probe("b_col")
    got = exp.copy()
    got[8:16, :] = exp[8:16, np.arange(wg.BN) ^ 8]          # rows 8-15 read 16-byte chunks XOR 1 (8 columns)
    lines = wg._mismatch_summary(got, exp, "t", True)
    assert lines[0] == f"[t] {8 * wg.BN}/{exp.size} wrong"
    assert "8:" in lines[4]
    assert wg._mismatch_summary(exp, exp, "t", True) == [f"[t] 0/{exp.size} wrong"]


def test_compile_report_and_layout_model(capsys):
    rows = bench_compile.wgmma_compile_report()
    out = capsys.readouterr().out
    assert [(r["dtype"], r["B layout"], r["epilogue"], r["stages"]) for r in rows] == [
        ("bfloat16", "N-major (tnspB)", "registers", 4), ("float16", "N-major (tnspB)", "registers", 4),
        ("bfloat16", "K-major copy", "registers", 4), ("bfloat16", "N-major (tnspB)", "TMA store, 1 pass", 3),
        ("bfloat16", "N-major (tnspB)", "TMA store, 2 passes", 4)]
    assert all(r["UTMASTG"] > 0 for r in rows[3:]) and rows[-1]["smem (dynamic)"] == wg.smem_bytes(True, 2)
    assert all(r["spills"] == 0 and r["arch"] == "sm_90a" for r in rows)
    assert "kernels_wgmma.cu compiled with NVRTC" in out and "every A and B slice correct" in out


@pytest.mark.skipif(device.has_gpu(), reason="the CPU path of the CLI")
def test_cli_quick_on_cpu(capsys):
    """The lab's command shows rung 03's compile report and layout model without a GPU, and skips its checks."""
    assert lab_main(tc)(["--quick", "--no-json", "--no-plot", "--wgmma-debug"]) == 0
    out = capsys.readouterr().out
    assert "kernels_wgmma.cu compiled with NVRTC" in out and "every A and B slice correct" in out
    assert "cuda 03 wgmma+TMA" in out and "needs a GPU" in out
    assert "--wgmma-debug: the GPU probes need an sm_90 GPU" in out


def test_cli_rejects_bad_size():
    with pytest.raises(SystemExit):
        lab_main(tc)(["--size", "0"])
