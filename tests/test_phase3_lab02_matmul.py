"""Lab 3.2 (Triton matmul): program order, the AOT compile report, ragged shapes and strides, bad input."""
import numpy as np
import pytest

from common import arrays, check, config, cuda, device, plan
from common import triton_support as ts
from phase3_triton.lab02_matmul import bench as mmb
from phase3_triton.lab02_matmul import lab as mm
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu
interpreter_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter test (host arrays); the GPU tier covers "
                                                               "the same on device")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: program order
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("grid_m,grid_n,group", [(1, 1, 8), (7, 3, 4), (32, 16, 8), (5, 9, 1), (13, 2, 16)])
def test_program_order_covers_every_tile_once(grid_m, grid_n, group):
    coords = [mmb.program_coords(p, grid_m, grid_n, group) for p in range(grid_m * grid_n)]
    assert sorted(coords) == [(i, j) for i in range(grid_m) for j in range(grid_n)]
    if group == 1:
        assert coords == [(i, j) for i in range(grid_m) for j in range(grid_n)]   # row-major
    elif len(coords) > 1:
        # inside a group, consecutive programs walk down a column of GROUP_M tile-rows first
        assert coords[1] == ((1, 0) if grid_m > 1 else (0, 1))


def test_tile_load_model():
    big = {r["order"]: r for r in mmb.ordering_table(8192, 8192, 8192, wave=132)}
    small = {r["order"]: r for r in mmb.ordering_table(4096, 4096, 4096, wave=132)}
    rm, g8 = big["row-major"], big["grouped, GROUP_M=8"]
    assert g8["DRAM MiB (model)"] < 0.75 * rm["DRAM MiB (model)"]     # grouping pays at 8192^3 ...
    assert small["grouped, GROUP_M=8"]["DRAM MiB (model)"] >= 0.9 * small["row-major"]["DRAM MiB (model)"]  # not 4096
    for table in (big, small):
        floor = min(r["x minimum"] for r in table.values())
        assert floor >= 1.0                                         # nothing reads less than every tile once
        assert table["(no sharing at all: each program reads its own)"]["x minimum"] > 5 * floor
    t = mmb.tile_loads(256, 512, 128, 128, 256, 64, group_m=8, wave=1)
    assert t["a_tiles"] + t["b_tiles"] == t["no_reuse_tiles"]          # waves of one program share nothing
    assert mmb.ordering_prediction(list(big.values()), 8192, 132).startswith("GROUP_M=8 changes")


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: what the compiler makes of the kernel
# ---------------------------------------------------------------------------------------------------------------------
def test_aot_hopper_bf16_uses_wgmma_and_a_cp_async_ring():
    base = mm.CONFIGS_16[0]
    s3 = ts.summarize(mmb.aot_matmul(90, "bfloat16", "tf32", base))
    s1 = ts.summarize(mmb.aot_matmul(90, "bfloat16", "tf32", dict(base, num_stages=1)))
    k = mmb.aot_matmul(90, "bfloat16", "tf32", base)
    assert ".entry matmul_kernel" in k.asm["ptx"] and k.metadata.num_warps == base["num_warps"]
    assert s3["wgmma"] > 0 and s3["mma_sync"] == 0
    assert s3["cp_async"] > 0 and s1["cp_async"] == 0
    stage = (base["BLOCK_M"] + base["BLOCK_N"]) * base["BLOCK_K"] * 2
    assert s3["shared"] >= base["num_stages"] * stage > s1["shared"]
    assert "v4.b32" in "".join(s1["ptx_mem"])                     # 16-byte loads straight to registers
    if cuda.find_cuobjdump():
        assert s3["sass"].get("HGMMA", 0) > 0 and s3["sass"].get("LDGSTS", 0) > 0
        assert s3["local"] == 0, "the shipped config must not spill"


def test_aot_fp32_precisions_and_ampere():
    ieee = ts.summarize(mmb.aot_matmul(90, "float32", "ieee", mm.CONFIGS_IEEE[0]))
    tf32 = ts.summarize(mmb.aot_matmul(90, "float32", "tf32", mm.CONFIGS_TF32[0]))
    assert ieee["wgmma"] == 0 and ieee["mma_sync"] == 0           # true fp32: CUDA-core FMAs
    assert tf32["wgmma"] > 0 and "tf32" in mmb.aot_matmul(90, "float32", "tf32", mm.CONFIGS_TF32[0]).asm["ptx"]
    if cuda.find_cuobjdump():
        assert ieee["sass"].get("FFMA", 0) >= 1000
    ampere = ts.summarize(mmb.aot_matmul(80, "bfloat16", "tf32", mm.CONFIGS_16[4]))
    assert ampere["mma_sync"] > 0 and ampere["wgmma"] == 0


@pytest.mark.parametrize("dtype,prec,even_k,even_mn,index_64", [
    ("float16", "tf32", False, False, True), ("bfloat16", "tf32", True, False, False),
    ("float32", "ieee", False, True, False), ("float32", "tf32", False, False, True)])
def test_ragged_and_64_bit_variants_compile(dtype, prec, even_k, even_mn, index_64):
    """The specializations the checks launch on a GPU (masks, 64-bit offsets, non-unit strides) must compile."""
    ty = mmb._TY[dtype]
    sig = {"a_ptr": ty, "b_ptr": ty, "c_ptr": ty}
    sig.update({k: "i32" for k in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                                   "stride_cn")})
    const = dict(PRECISION=prec, EVEN_K=even_k, EVEN_MN=even_mn, INDEX_64=index_64, UPCAST=False,
                 **{k: v for k, v in mm.FIXED_GPU.items() if k.isupper()})
    sig.update({k: "constexpr" for k in const})
    k = ts.aot(mm.matmul_kernel, sig, const, cc=90, num_warps=4, num_stages=3)
    assert ".entry matmul_kernel" in k.asm["ptx"]


def test_kernel_compiles_when_every_integer_is_one():
    """A 1 x 1 x 1 product: a GPU launch passes M, N, K and every stride equal to 1 as compile-time constants."""
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": "*bf16"}
    ints = {k: 1 for k in ("M", "N", "K", "stride_am", "stride_ak", "stride_bk", "stride_bn", "stride_cm",
                           "stride_cn")}
    const = dict(ints, PRECISION="tf32", EVEN_K=False, EVEN_MN=False, INDEX_64=True, UPCAST=False,
                 **{k: v for k, v in mm.FIXED_GPU.items() if k.isupper()})
    sig.update({k: "constexpr" for k in const})
    k = ts.aot(mm.matmul_kernel, sig, const, cc=90, num_warps=4, num_stages=3)
    assert ".entry matmul_kernel" in k.asm["ptx"]


def test_config_spaces_fit_hopper_shared_memory():
    limit = device.arch_info("sm_90").smem_per_block_optin
    for cfgs, elt in ((mm.CONFIGS_16, 2), (mm.CONFIGS_TF32, 4), (mm.CONFIGS_IEEE, 4)):
        assert len(cfgs) <= 8
        for c in cfgs:
            assert c["num_stages"] * (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * elt <= limit, c


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the interpreter, bad input
# ---------------------------------------------------------------------------------------------------------------------
def _ref(a, b):
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


@interpreter_only
def test_interpreter_strides_and_empty_dims():
    rng = check.rng(40)
    a = rng.standard_normal((45, 70)).astype(np.float32)
    b = rng.standard_normal((33, 45)).astype(np.float32)          # used transposed: a non-contiguous view
    out = check.poison(np.empty((70, 33), np.float32))
    check.assert_close(mm.matmul_triton(a.T, b.T, out=out), _ref(a.T, b.T), "float32", what="transposed views")
    every_other = rng.standard_normal((40, 60)).astype(np.float16)[:, ::2]   # column stride 2
    bb = rng.standard_normal((30, 20)).astype(np.float16)
    check.assert_close(mm.matmul_triton(every_other, bb), _ref(every_other, bb), "float16", what="column stride 2")
    z = mm.matmul_triton(np.ones((3, 0), np.float32), np.ones((0, 4), np.float32),
                         out=check.poison(np.empty((3, 4), np.float32)))
    np.testing.assert_array_equal(z, 0)                            # K = 0: a sum of nothing
    assert mm.matmul_triton(np.ones((0, 5), np.float32), np.ones((5, 4), np.float32)).shape == (0, 4)


@interpreter_only
def test_interpreter_bf16_and_group_boundaries():
    import torch

    # 7 x 3 tiles of 32 with GROUP_M = 4: a full group and a short last one
    a = torch.randn(200, 50, dtype=torch.bfloat16)
    b = torch.randn(50, 70, dtype=torch.bfloat16)
    out = check.poisoned((200, 70), "bfloat16", a)
    check.assert_close(mm.matmul_triton(a, b, out=out), _ref(a.float(), b.float()), "bfloat16")


def test_bad_input_is_rejected_before_any_launch():
    if device.has_gpu():
        import cupy

        mk = (lambda s, dt=np.float32: cupy.ones(s, dt))
    else:
        mk = (lambda s, dt=np.float32: np.ones(s, dt))
    with pytest.raises(ValueError, match="inner dimensions differ"):
        mm.matmul_triton(mk((4, 5)), mk((6, 3)))
    with pytest.raises(ValueError, match="2-D"):
        mm.matmul_triton(mk((4,)), mk((4, 3)))
    with pytest.raises(TypeError, match="dtypes must match"):
        mm.matmul_triton(mk((4, 5)), mk((5, 3), np.float16))
    with pytest.raises(TypeError, match="dtype int32"):
        mm.matmul_triton(mk((4, 5), np.int32), mk((5, 3), np.int32))
    with pytest.raises(ValueError, match="precision"):
        mm.matmul_triton(mk((4, 5), np.float16), mk((5, 3), np.float16), precision="ieee")
    with pytest.raises(ValueError, match="precision"):
        mm.matmul_triton(mk((4, 5)), mk((5, 3)), precision="fp64")
    with pytest.raises(ValueError, match="negative strides"):
        mm.matmul_triton(mk((4, 5))[::-1], mk((5, 3)))
    with pytest.raises(ValueError, match="out: expected shape"):
        mm.matmul_triton(mk((4, 5)), mk((5, 3)), out=mk((3, 4)))


@interpreter_only
def test_verify_sample_catches_a_wrong_row():
    import torch

    a, b = torch.randn(50, 30), torch.randn(30, 20)
    out = mm.matmul_triton(a, b)
    assert mmb.verify_sample(out, a, b, "float32", n_rows=8).ok
    out[49, 0] += 0.1                                   # the last row is always in the sample
    assert not mmb.verify_sample(out, a, b, "float32", n_rows=8).ok


@interpreter_only
def test_main_quick_on_cpu(capsys):
    assert lab_main(mm)(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "wgmma" in out and "row-major" in out and "interpreter" in out


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def _dev(shape, dtype, seed):
    from common import arrays

    return arrays.from_numpy(check.rng(seed).standard_normal(shape), dtype, "cuda")


# every tile shape / warp count of the tuning space (stage counts share the same indexing and masks)
TILE_SHAPES = list({(c["BLOCK_M"], c["BLOCK_N"], c["num_warps"]): c for c in mm.CONFIGS_16}.values())


@gpu
@pytest.mark.parametrize("cfg", TILE_SHAPES, ids=mmb._cfg_str)
def test_gpu_every_16bit_tile_shape_is_correct_on_a_ragged_shape(cfg):
    a, b = _dev((300, 200), "bfloat16", 1), _dev((200, 260), "bfloat16", 2)
    out = check.poisoned((300, 260), "bfloat16", a)
    check.assert_close(mm.matmul_triton(a, b, out=out, config=cfg), _ref(a.float().cpu(), b.float().cpu()),
                       "bfloat16", what=mmb._cfg_str(cfg))


@gpu
@pytest.mark.parametrize("dtype,cfg", [("float32", mm.CONFIGS_IEEE[0]), ("tf32", mm.CONFIGS_TF32[0])])
def test_gpu_fp32_configs_ragged(dtype, cfg):
    a, b = _dev((130, 100), "float32", 3), _dev((100, 300), "float32", 4)
    prec = "tf32" if dtype == "tf32" else "ieee"
    got = mm.matmul_triton(a, b, precision=prec, config=cfg)
    check.assert_close(got, _ref(a.get(), b.get()), dtype, what=prec)


@gpu
def test_gpu_autotuned_path_and_transposed_inputs():
    import cupy

    a, b = _dev((512, 512), "float16", 5), _dev((512, 512), "float16", 6)
    out = cupy.full((512, 512), cupy.nan, cupy.float16)
    assert not mm.uses_tma(a, b, out)         # below TMA_MIN_MNK, and CuPy arrays: the autotuned grid-per-tile kernel
    check.assert_close(mm.matmul_triton(a, b, out=out), _ref(a.get(), b.get()), "float16", what="default path")
    check.assert_close(mm.matmul_triton(a, b, tma=False), _ref(a.get(), b.get()), "float16", what="autotuned")
    assert mm.best_config("float16") is not None
    # transposed views (unit stride along M for A, along K for B): one fixed config, not a second tuning run
    got = mm.matmul_triton(a.T, b, tune=False)
    check.assert_close(got, _ref(a.get().T, b.get()), "float16", what="A transposed")
    c = cupy.full((512, 512), cupy.nan, cupy.float16)
    mm.matmul_triton(a, b.T, out=c, tune=False)
    check.assert_close(c, _ref(a.get(), b.get().T), "float16", what="B transposed")


@gpu
def test_gpu_64_bit_offsets():
    """A has 2^31 + 1024 elements: offsets into it need 64 bits (INDEX_64)."""
    import cupy

    m, k, n = 2**21 + 1, 1024, 16
    free, _ = cupy.cuda.runtime.memGetInfo()
    if free < 3 * m * k * 2:
        pytest.skip("not enough GPU memory")
    a = cupy.random.standard_normal((m, k), dtype=cupy.float32).astype(cupy.float16)
    b = _dev((k, n), "float16", 7)
    out = mm.matmul_triton(a, b, tune=False)
    rows = np.array([0, 2**20, m - 2, m - 1])
    check.assert_close(out[cupy.asarray(rows)], _ref(a[cupy.asarray(rows)].get(), b.get()), "float16")
    del a, out
    cupy.get_default_memory_pool().free_all_blocks()


@gpu
def test_gpu_bad_input():
    import cupy
    import torch

    a = cupy.ones((4, 5), cupy.float32)
    with pytest.raises(TypeError, match="expected a GPU array"):
        mm.matmul_triton(a, np.ones((5, 3), np.float32))
    with pytest.raises(TypeError, match="same library"):
        mm.matmul_triton(a, torch.ones(5, 3, device="cuda"))


def test_replot_redraws_the_committed_plot(tmp_path):
    assert lab_main(mm)(["--replot", H200, "--out", str(tmp_path)]) == 0
    assert (tmp_path / f"{mm.LAB}.png").stat().st_size > 10_000


# ---------------------------------------------------------------------------------------------------------------------
# The persistent TMA kernel: what it refuses, and where its config comes from
# ---------------------------------------------------------------------------------------------------------------------
@interpreter_only
def test_tma_kernel_refuses_layouts_a_descriptor_cannot_take():
    rng = check.rng(31)
    a, b = mm.make_inputs((16, 24, 40), "float16", rng, "cpu")
    a35, b35 = mm.make_inputs((16, 24, 35), "float16", rng, "cpu")
    with pytest.raises(ValueError, match="row stride"):
        mm.matmul_triton_tma(a35, b35)                                 # contiguous K = 35: 70-byte rows of A
    out = check.poisoned((16, 24), "float16", a)
    mm.matmul_triton_tma(a[:, :32], b[:32], out=out)                   # a view with K = 32 of 40: strides decide
    check.assert_close(out, mm.reference(a[:, :32].astype(np.float64), b[:32].astype(np.float64)), "float16")
    with pytest.raises(ValueError, match="not contiguous"):
        mm.matmul_triton_tma(a, b.T.copy().T)                          # B column-major
    with pytest.raises(TypeError):
        mm.matmul_triton_tma(a.astype(np.float32), b.astype(np.float32))
    out = check.poisoned((16, 24), "float16", a)
    mm.matmul_triton_tma(a, b, out=out)                                # the layout it takes, checked
    check.assert_close(out, mm.reference(a.astype(np.float64), b.astype(np.float64)), "float16")


@pytest.mark.parametrize("cfg, match", [(dict(mm.TMA_DEFAULT, BLOCK_N=96), "power of two"),
                                        (dict(mm.TMA_DEFAULT, num_stages=0), "num_stages"),
                                        (dict(mm.TMA_DEFAULT, EPI_SPLIT=2), "EPI_SPLIT")])
def test_tma_config_validation(cfg, match):
    with pytest.raises(ValueError, match=match):
        mm.check_tma_config(cfg)


def test_tma_config_comes_from_the_nearest_tuned_size(tuning_record, monkeypatch):
    monkeypatch.setattr(mm, "INTERPRETER", False)
    small, big = dict(mm.TMA_DEFAULT, GROUP_M=4), dict(mm.TMA_DEFAULT, GROUP_M=16, EPI_SPLIT=1, num_stages=4)
    assert mm.tma_config(4096, 4096, 4096)[0] == mm.TMA_DEFAULT                 # no record: the default
    tuning_record(mm.TUNED_RECORD, [{"shape": [4096] * 3, "config": small}, {"shape": [8192] * 3, "config": big}])
    assert mm.tma_config(4096, 4096, 4096)[0] == small
    assert mm.tma_config(16384, 8192, 8192)[0] == big
    assert mm.tma_config(2048, 2048, 2048)[0] == small
    cfg, source = mm.tma_config(5000, 5000, 5000)
    assert cfg == small and f"tuned on {tuning_record.made_on}" in source   # log-nearest: 5000^3 is nearer 4096^3
    tuning_record(mm.TUNED_RECORD, [{"shape": [4096] * 3, "config": dict(small, BLOCK_K=48)}])
    with pytest.warns(UserWarning, match="unusable"):
        assert mm.tma_config(4096, 4096, 4096)[0] == mm.TMA_DEFAULT


def test_uses_tma_needs_a_large_torch_problem_on_hopper(monkeypatch):
    import torch

    monkeypatch.setattr(mm, "INTERPRETER", False)
    monkeypatch.setattr(mm, "_hopper", lambda: True)
    a = torch.empty((4096, 2048), dtype=torch.bfloat16)
    b = torch.empty((2048, 4096), dtype=torch.bfloat16)
    out = torch.empty((4096, 4096), dtype=torch.bfloat16)
    assert 4096 * 2048 * 4096 >= mm.TMA_MIN_MNK and mm.uses_tma(a, b, out)
    assert not mm.uses_tma(a, b, out, config=mm.TMA_DEFAULT)                        # an explicit config: grid kernel
    assert not mm.uses_tma(a, b, out, tune=False)
    assert not mm.uses_tma(a[:1024], b, out[:1024])                                 # too small
    assert not mm.uses_tma(a.float(), b.float(), out.float())                       # fp32
    a2, b2 = torch.empty((4096, 2052), dtype=torch.bfloat16), torch.empty((2052, 4096), dtype=torch.bfloat16)
    assert not mm.uses_tma(a2, b2, out)                                             # 4104-byte rows of A
    monkeypatch.setattr(mm, "_hopper", lambda: False)
    assert not mm.uses_tma(a, b, out)                                               # no TMA before sm_90


@interpreter_only
@pytest.mark.parametrize("split", [0, 1])
def test_tma_kernel_whole_and_split_epilogue(split):
    # EPI_SPLIT 0 stores the C tile whole (the default config), 1 in two halves (the interpreter config)
    rng = check.rng(32)
    a, b = mm.make_inputs((70, 72, 136), "bfloat16", rng, "cpu")
    out = check.poisoned((70, 72), "bfloat16", a)
    mm.matmul_triton_tma(a, b, out=out, config=dict(mm.TMA_INTERPRETER, EPI_SPLIT=split))
    check.assert_close(out, mm.reference(arrays.to_numpy(a).astype(np.float64), arrays.to_numpy(b).astype(np.float64)),
                       "bfloat16", mm.tolerance((70, 72, 136), "bfloat16"))


# ---------------------------------------------------------------------------------------------------------------------
# CPU tier: the plan on GPUs a learner may have (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def _plan(name: str):
    return plan.make(mm, mmb, device.profile_info(name))


def test_the_tma_variant_runs_only_where_its_tiles_fit():
    for name, why in (("t4", "needs sm_90+"), ("rtx-4090", "needs sm_90+"), ("a100", "needs sm_90+"),
                      ("rtx-5090", "KiB of shared memory per block")):
        p = _plan(name)
        skipped = {v.name: v.why for v in p.skipped}
        assert set(skipped) == {"triton persistent TMA"}, skipped
        assert why in skipped["triton persistent TMA"]
        assert not any(x.kernel == "matmul_tma_kernel" for x in p.launches)
    for name in ("h100-pcie", "h200", "b200"):
        p = _plan(name)
        assert not p.skipped
        tma = [x for x in p.launches if x.kernel == "matmul_tma_kernel"]
        assert tma and all(x.grid == (device.profile_info(name).sms,) for x in tma)   # persistent: one per SM
        assert all(x.defines["NUM_PROGRAMS"] == x.grid[0] for x in tma)


def test_the_autotuner_space_is_what_fits_the_gpus_shared_memory():
    sixteen = [c for c in mm.CONFIGS_16]
    # Hopper and the A100 keep every 16-bit config; a 99 KiB RTX card the ones whose ring (one stage fewer where the
    # MMA reads its operands from registers) fits; a 64 KiB T4 none, so the fixed config
    assert mm.autotune_space("16", device.profile_info("h200")) == sixteen
    assert mm.autotune_space("16", device.profile_info("a100")) == sixteen
    rtx = mm.autotune_space("16", device.profile_info("rtx-4090"))
    assert rtx == [c for c in sixteen if (c["num_stages"] - 1) * (c["BLOCK_M"] + c["BLOCK_N"]) * 64 * 2 <= 96 * 1024]
    assert mm.CONFIGS_16[0] in rtx and mm.CONFIGS_16[1] not in rtx          # 128 x 256: 3 stages fit, 4 do not
    assert mm.autotune_space("16", device.profile_info("t4")) == [mm.FIXED_GPU]
    p = _plan("rtx-4090")
    bf16 = [x for x in p.launches if x.case == "bfloat16 4096^3"]
    assert len(bf16) == len(rtx) and all("4 of 6 configs" in x.config_source for x in bf16)
    assert {x.grid[0] for x in bf16} == {(4096 // c["BLOCK_M"]) * (4096 // c["BLOCK_N"]) for c in rtx}
    t4 = _plan("t4")
    assert {x.defines["BLOCK_M"] for x in t4.launches} == {mm.FIXED_GPU["BLOCK_M"]}


def test_the_h200_plan_takes_its_tuned_record_and_other_gpus_the_default():
    h200 = [x for x in _plan("h200").launches if x.kernel == "matmul_tma_kernel" and x.variant == "triton matmul"]
    by_case = {x.case: x for x in h200}
    assert by_case["bfloat16 4096^3"].defines["GROUP_M"] == 16                    # the record's winner at 4096^3
    assert by_case["bfloat16 8192^3"].defines["EPI_SPLIT"] == 1                   # ... and at 8192^3
    assert all("tuned on NVIDIA H200" in x.config_source for x in h200)
    h100 = [x for x in _plan("h100-sxm").launches if x.kernel == "matmul_tma_kernel"]
    assert all(x.defines["GROUP_M"] == mm.TMA_DEFAULT["GROUP_M"] and "no tuning record" in x.config_source
               for x in h100)


def test_set_changes_the_tma_and_the_fixed_config():
    try:
        config.set_overrides(["TMA_GROUP_M=4", "BLOCK_M=128"])
        p = _plan("h100-sxm")
        tma = [x for x in p.launches if x.kernel == "matmul_tma_kernel"]
        assert tma and all(x.defines["GROUP_M"] == 4 and "--set TMA_GROUP_M=4" in x.config_source for x in tma)
        fixed = next(x for x in p.launches if "fixed config" in x.case)
        assert fixed.defines["BLOCK_M"] == 128 and fixed.config_source.startswith("BLOCK_M: --set BLOCK_M=128")
        assert fixed.grid == ((32768 // 128) * 1,)                             # 32768 x 32: one 64-wide column
        config.set_overrides(["BLOCK_K=8"])
        with pytest.raises(ValueError, match="BLOCK_K must be a power of two >= 16"):
            mm.fixed_config(interpreter=False)
    finally:
        config.set_overrides([])


def test_ordering_prediction_uses_the_gpus_rates():
    for name in ("h200", "t4"):
        g = device.profile_info(name)
        t = mmb.ordering_table(8192, 8192, 8192, wave=g.sms)
        text = mmb.ordering_prediction(t, 8192, g.sms, g)
        assert text.startswith("GROUP_M=8 changes") and f"{g.hbm_gbps / 1000:.2f} TB/s" in text
    assert "fp16" in mmb.ordering_prediction(t, 8192, 40, device.profile_info("t4"))   # a T4 has no bf16 unit
