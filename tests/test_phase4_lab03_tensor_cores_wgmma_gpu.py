"""Lab 4.3, rung 03 on an sm_90 GPU (marked gpu): gemm_wgmma against float64 NumPy of the rounded inputs on awkward
shapes, outputs poisoned first - bf16, fp16, the B K-major fallback, 2-block clusters (and bit for bit against single
blocks), CuPy fp16 with out=, degenerate and misaligned layouts, the debugging probes; the EPI_TMA build on the same
shapes inside poisoned guard bands and bit for bit against the register epilogue; a recorded build runs through
gemm_wgmma's defaults; every fused-epilogue mask on every build family."""
import numpy as np
import pytest

from common import arrays, check
from phase4_optimization.lab03_tensor_cores import wgmma as wg
from tests.helpers import builds_with

ENV_VARS = ("WGMMA_CLUSTER", "WGMMA_TMA_STORE", "WGMMA_C_PASSES", "WGMMA_B_KMAJOR")
EPI_CASES = [wg.EPI_BIAS, wg.EPI_BIAS | wg.EPI_GELU, wg.EPI_BIAS | wg.EPI_RES, wg.EPI_GELU | wg.EPI_RES,
             wg.EPI_BIAS | wg.EPI_GELU | wg.EPI_RES]


@pytest.fixture
def no_env(monkeypatch):
    for v in ENV_VARS:
        monkeypatch.delenv(v, raising=False)


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def _needs_hopper():
    why = wg.unavailable_reason()
    if why:
        pytest.skip(why)


GPU_SHAPES = [(1, 1, 1), (127, 129, 136), (128, 256, 64), (1000, 1000, 1000), (8192, 8192, 64),
              (33, 70, 13), (64, 72, 1001), (300, 255, 517), (129, 257, 8), (2, 520, 3)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", GPU_SHAPES, ids=["x".join(map(str, s)) for s in GPU_SHAPES])
def test_gpu_bf16_awkward_shapes(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "bfloat16", seed=m * 7 + n * 3 + k)
    assert c.ok, f"{m}x{n}x{k}: {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(127, 129, 136), (256, 512, 1000), (33, 70, 13)])
def test_gpu_fp16(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "float16", seed=m + n + k)
    assert c.ok, f"{m}x{n}x{k}: {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1, 1, 1), (127, 129, 136), (300, 255, 517), (128, 256, 64)])
def test_gpu_fallback_b_kmajor(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "bfloat16", seed=m + 2 * n + k, b_kmajor=True)
    assert c.ok, f"{m}x{n}x{k} (B K-major fallback): {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(1, 8, 8), (127, 129, 136), (33, 70, 13), (300, 1000, 520), (2048, 1024, 4096)])
def test_gpu_b_kmajor_on_a_transposed_weight(m, n, k):
    """B = W.t() read as it is (no copy; K = 13 takes the padded copy): dX = dY W^T, lab 4.7's input gradients."""
    _needs_hopper()
    for dtype in ("bfloat16", "float16"):
        c = wg.check_shape(m, n, k, dtype, seed=m + 3 * n + k, b_kmajor=True, b_view=True)
        assert c.ok, f"{m}x{n}x{k} {dtype} (B = W^T, K-major): {c.message} [seed {check.seed()}]"


# odd and even tile rows (a CLUSTER = 2 partner below M), one tile row (falls back to single blocks), K tails, N
# edges that leave some B boxes out (the multicast split of boxes 0, 2 / 1, 3), a product of more tiles than SMs
CLUSTER_SHAPES = [(1, 1, 1), (300, 255, 517), (257, 520, 64), (384, 130, 1001), (1000, 1000, 1000),
                  (4096, 4096, 256),
                  # more units than resident clusters, an odd number of tile rows (a clamped partner in the middle
                  # of the persistent, grouped walk), and a last tile column of 1 or 3 B boxes
                  (4224, 8192, 512), (4224, 4160, 200)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", CLUSTER_SHAPES, ids=["x".join(map(str, s)) for s in CLUSTER_SHAPES])
def test_gpu_cluster_multicast(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "bfloat16", seed=m + 5 * n + k, b_kmajor=False, cluster=2)
    assert c.ok, f"{m}x{n}x{k} (2-block clusters): {c.message} [seed {check.seed()}]"
    c = wg.check_shape(m, n, k, "float16", seed=m + 5 * n + k + 1, b_kmajor=False, cluster=2)
    assert c.ok, f"{m}x{n}x{k} fp16 (2-block clusters): {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
def test_gpu_cluster_matches_single_blocks_bit_for_bit():
    """Each output tile sees the same MMAs in the same order with or without clusters, so the two must agree to the
    bit, launch after launch: a difference is a race (a slot refilled while its partner still reads it)."""
    _needs_hopper()
    import torch

    a, b, _, _ = wg.make_inputs(4224, 4160, 200, "bfloat16", seed=9)
    ref = wg.gemm_wgmma(a, b, b_kmajor=False, cluster=1)
    for i in range(10):
        got = wg.gemm_wgmma(a, b, b_kmajor=False, cluster=2)
        assert torch.equal(got, ref), f"launch {i}: 2-block clusters differ from single blocks"


@pytest.mark.gpu
def test_gpu_cupy_fp16_and_out_argument():
    _needs_hopper()
    import cupy

    rng = check.rng(5)
    a64, b64 = rng.standard_normal((200, 96)), rng.standard_normal((96, 264))
    a, b = cupy.asarray(a64, cupy.float16), cupy.asarray(b64, cupy.float16)
    out = check.poisoned((200, 264), "float16", a)
    res = wg.gemm_wgmma(a, b, out=out)
    assert res is out
    ref = a.get().astype(np.float64) @ b.get().astype(np.float64)
    assert check.compare(out, ref, "float16", wg.tolerance(96, "float16")).ok
    assert wg.hang_report() is None


@pytest.mark.gpu
def test_gpu_degenerate_and_bad_layouts():
    _needs_hopper()
    import torch

    a = torch.ones((5, 0), dtype=torch.bfloat16, device="cuda")
    b = torch.ones((0, 7), dtype=torch.bfloat16, device="cuda")
    assert torch.count_nonzero(wg.gemm_wgmma(a, b)).item() == 0
    assert wg.gemm_wgmma(torch.ones((0, 4), dtype=torch.bfloat16, device="cuda"),
                         torch.ones((4, 3), dtype=torch.bfloat16, device="cuda")).shape == (0, 3)
    x = torch.ones((64, 64), dtype=torch.bfloat16, device="cuda")
    with pytest.raises(ValueError, match="contiguous"):
        wg.gemm_wgmma(x.t()[:, :32], x[:32])
    with pytest.raises(ValueError, match="out"):
        wg.gemm_wgmma(x, x, out=torch.empty((64, 63), dtype=torch.bfloat16, device="cuda"))


@pytest.mark.gpu
def test_gpu_misaligned_view_is_copied():
    _needs_hopper()
    import torch

    rng = check.rng(9)
    big = torch.tensor(rng.standard_normal(1 + 100 * 64), dtype=torch.bfloat16, device="cuda")
    a = big[1:].view(100, 64)                       # 2-byte offset: not 16-byte aligned
    b = torch.tensor(rng.standard_normal((64, 80)), dtype=torch.bfloat16, device="cuda")
    out = wg.gemm_wgmma(a, b)
    ref = a.double().cpu().numpy() @ b.double().cpu().numpy()
    assert check.compare(out, ref, "bfloat16", wg.tolerance(64, "bfloat16")).ok


@pytest.mark.gpu
def test_gpu_debug_probes_pass(capsys):
    _needs_hopper()
    assert wg.debug() == 0, capsys.readouterr().out


# the EPI_TMA build: every tile edge (ragged M halves, N not a multiple of 64, K tails), N % 8 != 0 (no legal C map:
# the build's register stores), one tile, more tiles than SMs, and an odd tile-row count for the cluster partner
TMA_STORE_SHAPES = [(1, 1, 1), (1, 8, 1), (127, 129, 136), (128, 256, 64), (65, 72, 1001), (300, 255, 517),
                    (300, 264, 517), (129, 264, 8), (1000, 1000, 1000), (4224, 4160, 200)]


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", TMA_STORE_SHAPES, ids=["x".join(map(str, s)) for s in TMA_STORE_SHAPES])
@pytest.mark.parametrize("cluster,c_passes", [(1, 1), (2, 1), (1, 2), (2, 2)])
def test_gpu_tma_store_epilogue(m, n, k, cluster, c_passes):
    """Poisoned output inside poisoned guard bands: a TMA store box not clipped at M or N shows up in a band."""
    _needs_hopper()
    a, b, a64, b64 = wg.make_inputs(m, n, k, "bfloat16", seed=m + 3 * n + k)
    out = check.guarded((m, n), "bfloat16", a)
    wg.gemm_wgmma(a, b, out=out, b_kmajor=False, cluster=cluster, tma_store=True, c_passes=c_passes)
    c = check.compare(out, wg.reference(a64, b64), "bfloat16", wg.tolerance(k, "bfloat16"))
    assert c.ok, (f"{m}x{n}x{k} (TMA-store epilogue, cluster {cluster}, {c_passes} pass(es)): {c.message} "
                  f"[seed {check.seed()}]")
    assert check.guard_damage(out) == ""
    assert wg.hang_report() is None


BUILD_FAMILIES = [{"cluster": 1, "tma_store": False, "c_passes": 1}, {"cluster": 1, "tma_store": True, "c_passes": 1},
                  {"cluster": 2, "tma_store": True, "c_passes": 2}]
BUILD_IDS = ["registers", "tma-store", "cluster2-tma-store-2-passes"]


def _like(x, a):
    """x (a GPU array) in a's array library."""
    if arrays.library(x) != arrays.library(a):
        import torch

        return torch.from_dlpack(x)
    return x


@pytest.mark.gpu
@pytest.mark.parametrize("build", BUILD_FAMILIES, ids=BUILD_IDS)
@pytest.mark.parametrize("m,n,k,dtype", [(127, 129, 136, "bfloat16"), (33, 70, 13, "float16"),
                                         (300, 255, 517, "bfloat16"), (17, 520, 64, "float16"),
                                         (300, 264, 136, "bfloat16")])
def test_gpu_backward_epilogue_matches_float64(m, n, k, dtype, build):
    """Lab 4.7's proj dX stage on this kernel: C = (A B) * gelu'(z) with z a view (row stride N + 6, offsets 2 and 3:
    the pair and the single loads; row stride N + 8 at offset 0: with N a multiple of 8, z's tiles by TMA in the
    TMA-store build, SRC_TMA), and the column sums of the stored C in 16-row blocks; then the sums after a bias alone
    (N = 264, 520: the TMA-store path, z by TMA, a last box of 8 columns; M = 300: a clamped cluster partner and
    zero-filled rows). C and the sums inside poisoned guard bands, against float64 (the sums against the stored C's,
    so only their fp32 additions differ)."""
    _needs_hopper()
    a, b, a64, b64 = wg.make_inputs(m, n, k, dtype, seed=m + n + k)
    rng = check.rng(m + 7 * n)
    big = _like(arrays.from_numpy(2 * rng.standard_normal((m, n + 6)), dtype, "cuda"), a)
    big8 = _like(arrays.from_numpy(2 * rng.standard_normal((m, n + 8)), dtype, "cuda"), a)
    blocks = -(-m // wg.COLSUM_ROWS)
    for z, offset in ((big[:, 2:2 + n], 2), (big[:, 3:3 + n], 3), (big8[:, :n], 0)):
        out, part = check.guarded((m, n), dtype, a), check.guarded((blocks, n), "float32", a)
        wg.gemm_wgmma(a, b, out=out, dgelu=z, colsums=part, **build)
        assert wg.hang_report() is None
        ref = (a64 @ b64) * wg.gelu_tanh_grad64(arrays.to_numpy(z).astype(np.float64))
        c = check.compare(out, ref, dtype, wg.tolerance(k, dtype))
        assert c.ok, f"{m}x{n}x{k} {dtype} {build} dgelu offset {offset}: {c.message} [seed {check.seed()}]"
        check.assert_close(part, wg.block_sums64(out, wg.COLSUM_ROWS), "float32", check.Tol(1e-5, 1e-5),
                           what=f"column sums, {build}")
        assert check.guard_damage(out) == "" and check.guard_damage(part) == ""
    bias = _like(arrays.from_numpy(rng.standard_normal(n), dtype, "cuda"), a)
    out, part = check.guarded((m, n), dtype, a), check.guarded((blocks, n), "float32", a)
    wg.gemm_wgmma(a, b, out=out, bias=bias, colsums=part, **build)
    c = check.compare(out, a64 @ b64 + arrays.to_numpy(bias).astype(np.float64)[None, :], dtype,
                      wg.tolerance(k, dtype))
    assert c.ok, f"{m}x{n}x{k} {dtype} {build} bias + sums: {c.message}"
    check.assert_close(part, wg.block_sums64(out, wg.COLSUM_ROWS), "float32", check.Tol(1e-5, 1e-5), what="sums")
    assert check.guard_damage(out) == "" and check.guard_damage(part) == ""


@pytest.mark.gpu
@pytest.mark.parametrize("cluster", [1, 2])
def test_gpu_source_by_tma_over_many_tiles_per_block(cluster):
    """SRC_TMA over more tiles than the GPU has blocks (1900 x 4232: 15 x 17 tiles; each block takes several, so the
    source barrier's phase alternates and each buffer is reused after its store has read it), a last tile column of
    136 (3 boxes, the last one 8 wide), an odd tile-row count (cluster 2: a clamped partner that loads and stores
    nothing): z with the column sums, then bias + GELU + residual, into guarded outputs against float64."""
    _needs_hopper()
    m, n, k, dtype = 1900, 4232, 136, "bfloat16"
    build = {"cluster": cluster, "tma_store": True, "c_passes": 1}
    assert wg.source_by_tma(True, 1, wg.EPI_DGELU) and wg.source_by_tma(True, 1, wg.EPI_RES)
    a, b, a64, b64 = wg.make_inputs(m, n, k, dtype, seed=cluster)
    src, src64 = wg.source_matrix(m, n, dtype, 41 + cluster, like=a)
    rng = check.rng(43 + cluster)
    ab = a64 @ b64
    blocks = -(-m // wg.COLSUM_ROWS)
    out, part = check.guarded((m, n), dtype, a), check.guarded((blocks, n), "float32", a)
    wg.gemm_wgmma(a, b, out=out, dgelu=src, colsums=part, **build)
    assert wg.hang_report() is None
    c = check.compare(out, ab * wg.gelu_tanh_grad64(src64), dtype, wg.tolerance(k, dtype))
    assert c.ok, f"dgelu, cluster {cluster}: {c.message} [seed {check.seed()}]"
    check.assert_close(part, wg.block_sums64(out, wg.COLSUM_ROWS), "float32", check.Tol(1e-5, 1e-5), what="sums")
    assert check.guard_damage(out) == "" and check.guard_damage(part) == ""
    bias = _like(arrays.from_numpy(rng.standard_normal(n), dtype, "cuda"), a)
    out = check.guarded((m, n), dtype, a)
    wg.gemm_wgmma(a, b, out=out, bias=bias, activation="gelu_tanh", residual=src, **build)
    assert wg.hang_report() is None
    ref = wg.epilogue_reference(a64, b64, arrays.to_numpy(bias).astype(np.float64), True, src64)
    c = check.compare(out, ref, dtype, wg.tolerance(k, dtype))
    assert c.ok, f"bias + GELU + residual, cluster {cluster}: {c.message} [seed {check.seed()}]"
    assert check.guard_damage(out) == ""


@pytest.mark.gpu
def test_gpu_backward_epilogue_refuses_what_it_cannot_do():
    _needs_hopper()
    m, n, k = 40, 48, 32
    a, b, _, _ = wg.make_inputs(m, n, k, "bfloat16", seed=3)
    z = check.poisoned((m, n), "bfloat16", a)
    part = check.poisoned((3, n), "float32", a)
    for kw in (dict(activation="gelu_tanh"), dict(bias=check.poisoned((n,), "bfloat16", a))):
        with pytest.raises(ValueError, match="dgelu: the GELU's derivative takes no bias"):
            wg.gemm_wgmma(a, b, dgelu=z, **kw)
    with pytest.raises(ValueError, match="dgelu: expected shape"):
        wg.gemm_wgmma(a, b, dgelu=z[:, :7])
    with pytest.raises(ValueError, match=r"colsums: expected shape \(3, 48\)"):
        wg.gemm_wgmma(a, b, colsums=part[:2])
    with pytest.raises(TypeError, match="colsums"):
        wg.gemm_wgmma(a, b, colsums=check.poisoned((3, n), "bfloat16", a))
    with pytest.raises(ValueError, match="colsums: K = 0"):
        wg.gemm_wgmma(a[:, :0], b[:0], colsums=part)


@pytest.fixture
def store_race(monkeypatch):
    """The builds loaded while CONFIG's STORE_RACE is raised, and unloaded again after the test."""
    from phase4_optimization.lab03_tensor_cores import wgmma_kernel as wk

    with builds_with(monkeypatch, wk.CONFIG, "STORE_RACE", 20000, wg._LOADED, wg._loaded, wg.max_clusters):
        yield


@pytest.mark.gpu
@pytest.mark.parametrize("cluster,c_passes", [(1, 1), (2, 2)])
def test_gpu_tma_store_waits_for_its_slowest_writer(store_race, cluster, c_passes):
    """Warps 1-3 of each consumer write C into the buffer ~20000 cycles late (STORE_RACE): the fence and the
    warpgroup's barrier before the store must hold the store back, or their rows leave unwritten (a race that an
    ordinary launch shows only now and then)."""
    _needs_hopper()
    m, n, k = 300, 520, 136
    a, b, a64, b64 = wg.make_inputs(m, n, k, "bfloat16", seed=m + n + c_passes)
    out = check.guarded((m, n), "bfloat16", a)
    wg.gemm_wgmma(a, b, out=out, b_kmajor=False, cluster=cluster, tma_store=True, c_passes=c_passes)
    c = check.compare(out, wg.reference(a64, b64), "bfloat16", wg.tolerance(k, "bfloat16"))
    assert c.ok, f"{m}x{n}x{k} (writers held back, cluster {cluster}, {c_passes} pass(es)): {c.message}"
    assert check.guard_damage(out) == ""
    assert wg.hang_report() is None


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(127, 136, 136), (33, 70, 13), (256, 512, 1000)])
def test_gpu_tma_store_epilogue_fp16_and_b_kmajor(m, n, k):
    _needs_hopper()
    c = wg.check_shape(m, n, k, "float16", seed=m + n + k + 5, tma_store=True)
    assert c.ok, f"{m}x{n}x{k} fp16 (TMA-store epilogue): {c.message} [seed {check.seed()}]"
    c = wg.check_shape(m, n, k, "bfloat16", seed=m + n + k + 6, b_kmajor=True, tma_store=True)
    assert c.ok, f"{m}x{n}x{k} B K-major (TMA-store epilogue): {c.message} [seed {check.seed()}]"
    c = wg.check_shape(m, n, k, "float16", seed=m + n + k + 7, tma_store=True, c_passes=2)
    assert c.ok, f"{m}x{n}x{k} fp16 (TMA-store epilogue, 2 passes): {c.message} [seed {check.seed()}]"


@pytest.mark.gpu
@pytest.mark.parametrize("m,n,k", [(300, 264, 517), (4224, 4160, 200), (1024, 1024, 4096)])
def test_gpu_tma_store_matches_register_epilogue_bit_for_bit(m, n, k):
    """Same MMAs in the same K order, the same cvt.rn rounding: only the way C leaves differs, so the two builds
    must agree to the bit, launch after launch (a difference is a race on the C buffer)."""
    _needs_hopper()
    import torch

    a, b, _, _ = wg.make_inputs(m, n, k, "bfloat16", seed=11)
    ref = wg.gemm_wgmma(a, b, b_kmajor=False, cluster=1, tma_store=False)
    for i in range(5):
        for cl in (1, 2):
            for passes in wg.C_PASSES:
                got = check.poisoned((m, n), "bfloat16", a)
                wg.gemm_wgmma(a, b, out=got, b_kmajor=False, cluster=cl, tma_store=True, c_passes=passes)
                assert torch.equal(got, ref), f"launch {i}, cluster {cl}, {passes} pass(es): the epilogues differ"
    assert wg.hang_report() is None


@pytest.mark.gpu
def test_gpu_tma_store_misaligned_out_falls_back_to_register_stores():
    """out 2 bytes past a 16-byte boundary has no legal C tensor map: the EPI_TMA build must store from registers,
    leave the element before out untouched, and still be right."""
    _needs_hopper()
    import torch

    m, n, k = 130, 264, 72
    a, b, a64, b64 = wg.make_inputs(m, n, k, "bfloat16", seed=4)
    buf = check.poisoned((1 + m * n,), "bfloat16", a)
    out = buf[1:].view(m, n)
    wg.gemm_wgmma(a, b, out=out, tma_store=True)
    assert check.compare(out, wg.reference(a64, b64), "bfloat16", wg.tolerance(k, "bfloat16")).ok
    assert torch.isnan(buf[:1].float()).all()


@pytest.mark.gpu
@pytest.mark.parametrize("build", wg.builds(), ids=[wg.build_label(b) for b in wg.builds()])
def test_gpu_recorded_build_runs_by_default(tuning_record, no_env, build):
    """A record naming each build in turn (a temporary file): gemm_wgmma with no build arguments loads and runs that
    build, and matches float64 on a ragged shape with several tile rows (poisoned output)."""
    _needs_hopper()
    tuning_record(wg.TUNED, [{"shape": [4096] * 3, "build": build}])
    assert wg.resolve_build(300, 264, 517)[0] == build
    c = wg.check_shape(300, 264, 517, "bfloat16", seed=21)
    assert c.ok, f"recorded {wg.build_label(build)}: {c.message} [seed {check.seed()}]"
    assert ("bfloat16", False, build["cluster"], build["tma_store"], build["c_passes"], 0) in wg._LOADED


@pytest.mark.gpu
@pytest.mark.parametrize("build", [{"cluster": 1, "tma_store": False, "c_passes": 1},
                                   {"cluster": 1, "tma_store": True, "c_passes": 1},
                                   {"cluster": 2, "tma_store": True, "c_passes": 2}],
                         ids=["registers", "tma-store", "cluster2-tma-store-2-passes"])
@pytest.mark.parametrize("ops", EPI_CASES)
@pytest.mark.parametrize("m,n,k,dtype", [(127, 129, 136, "bfloat16"), (33, 70, 13, "float16"),
                                         (300, 255, 517, "bfloat16"), (1000, 1000, 1000, "bfloat16"),
                                         (257, 520, 64, "float16")])
def test_gpu_fused_epilogue_matches_float64(m, n, k, dtype, ops, build):
    """C = gelu(A B + bias) + residual against float64 on awkward shapes, every build family, outputs poisoned
    first inside guard bands; the residual is a view with a row stride of N + 6, starting 2 elements in (4-byte
    aligned: the 32-bit pair loads where N is even) and 3 elements in (the single-element loads), and one with a row
    stride of N + 8 from its start (with N a multiple of 8, its tiles by TMA in the TMA-store build: SRC_TMA)."""
    _needs_hopper()
    a, b, a64, b64 = wg.make_inputs(m, n, k, dtype, seed=m + 3 * n + ops)
    rng = check.rng(ops + m)
    bias = arrays.from_numpy(rng.standard_normal(n), dtype, "cuda") if ops & wg.EPI_BIAS else None
    big = arrays.from_numpy(rng.standard_normal((m, n + 6)), dtype, "cuda") if ops & wg.EPI_RES else None
    big8 = arrays.from_numpy(rng.standard_normal((m, n + 8)), dtype, "cuda") if ops & wg.EPI_RES else None
    if big is not None and arrays.library(big) != arrays.library(a):
        import torch

        big, big8 = torch.from_dlpack(big), torch.from_dlpack(big8)
    if bias is not None and arrays.library(bias) != arrays.library(a):
        import torch

        bias = torch.from_dlpack(bias)
    for offset in (2, 3, 0):
        res = None if big is None else big8[:, :n] if offset == 0 else big[:, offset:offset + n]
        out = check.guarded((m, n), dtype, a)
        wg.gemm_wgmma(a, b, out=out, bias=bias, activation="gelu_tanh" if ops & wg.EPI_GELU else None, residual=res,
                      **build)
        ref = wg.epilogue_reference(a64, b64, None if bias is None else arrays.to_numpy(bias).astype(np.float64),
                                 bool(ops & wg.EPI_GELU),
                                 None if res is None else arrays.to_numpy(res).astype(np.float64))
        assert wg.hang_report() is None
        c = check.compare(out, ref, dtype, wg.tolerance(k, dtype))
        assert c.ok, f"{m}x{n}x{k} {dtype} mask {ops} {build} residual offset {offset}: {c.message} " \
                     f"[seed {check.seed()}]"
        assert check.guard_damage(out) == ""
        if res is None:
            break
