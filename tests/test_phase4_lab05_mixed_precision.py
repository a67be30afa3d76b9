"""Lab 4.5 mixed precision.

CPU tier: the WMMA kernel compiles with NVRTC in both builds (fp32 / fp16 accumulator) with zero spills and the
matching HMMA opcode in SASS; the Triton tl.dot kernel (fp32 and fp16 accumulators) and the naive 16-bit softmax /
layernorm run in the interpreter against float64; the fp16 accumulator overflows where the fp32 one does not; the
overflow / rounding / underflow and loss-scaling tables hold the exact values a direct computation gives; wrappers
reject bad input before any launch; main(["--quick"]) exits 0; the plots redraw from the committed JSON.
GPU tier: every variant on awkward shapes, the accumulator comparison and overflow on the device, the naive bf16
kernels, the GEMM precision table (fp8 finite with error in range, or skipped with a reason).
"""
import math
import os

import numpy as np
import pytest

from common import arrays, check, config, cuda, device, lab, plan
from phase4_optimization.lab05_mixed_precision import bench as mpb
from phase4_optimization.lab05_mixed_precision import lab as mp
from tests.helpers import H200, lab_main

gpu = pytest.mark.gpu


def _host16(a):
    return np.ascontiguousarray(a, dtype=np.float16)


def _dev16(a):
    if device.has_gpu():
        import cupy

        return cupy.asarray(a, dtype=cupy.float16)
    return _host16(a)


# ---------------------------------------------------------------------------------------------------------------------
# NVRTC (no GPU needed)
# ---------------------------------------------------------------------------------------------------------------------
def test_claimed_archs():
    assert cuda.claimed_archs(mp.CU) == ("sm_80", "sm_90")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
@pytest.mark.parametrize("acc_half", [0, 1])
def test_wmma_compiles_without_spills_and_uses_hmma(arch, acc_half):
    k = cuda.compile_report(mp.CU, arch, defines={"ACC_HALF": acc_half})[mp.WMMA_KERNEL]
    assert k.registers > 0 and k.spills == 0, f"{k.registers} regs, {k.spills} B spilled"
    # static shared memory: A and B slices (bf16 64x40 + 32x72) + the C staging tile (fp32 or fp16, 64x72)
    assert k.smem_bytes == 2 * (64 * 40 + 32 * 72) + (2 if acc_half else 4) * 64 * 72
    if not cuda.find_cuobjdump():
        pytest.skip("no cuobjdump to disassemble with")
    ops = {ln.split()[0] for ln in k.sass if ln.split() and ln.split()[0].startswith("HMMA")}
    assert ops == {"HMMA.16816." + ("F16" if acc_half else "F32")}, ops
    # 2 k-substeps x 2 x 2 wmma 16x16x16, each two m16n8k16 HMMAs
    assert k.sass_counts.get("HMMA", 0) == 16
    assert k.sass_counts.get("LDL", 0) == 0 and k.sass_counts.get("STL", 0) == 0


# ---------------------------------------------------------------------------------------------------------------------
# The tolerance
# ---------------------------------------------------------------------------------------------------------------------
def test_fp16_accumulator_tolerance_scales_with_sqrt_k():
    t1, t4 = mp.tolerance((8, 8, 256), "f16acc"), mp.tolerance((8, 8, 1024), "f16acc")
    assert t4.rel_norm == pytest.approx(2 * t1.rel_norm) and t4.elem == pytest.approx(2 * t1.elem)
    # still meaningful at the largest checked K: a dropped 32-wide K slice (error sqrt(32/K)) would fail
    kmax = max(s[2] for s, d in mp.CHECK_CASES if d == "f16acc")
    assert mp.tolerance((1, 1, kmax), "f16acc").rel_norm < math.sqrt(32 / kmax) / 2
    assert mp.tolerance((8, 8, 64), "float16").rel_norm == 1e-5


# ---------------------------------------------------------------------------------------------------------------------
# Triton kernels in the interpreter (or on the GPU)
# ---------------------------------------------------------------------------------------------------------------------
def test_fp16_accumulator_error_is_real_and_bounded():
    rng = check.rng(51)
    m, n, k = 19, 23, 1000
    a, b = _host16(rng.standard_normal((m, k))), _host16(rng.standard_normal((k, n)))
    ref = mp.reference(a, b)
    da, db = _dev16(a), _dev16(b)
    e32 = check.compare(mp.dot_acc_f32(da, db), ref, tol=mp.tolerance((m, n, k), "float16"))
    e16 = check.compare(mp.dot_acc_f16(da, db), ref, tol=mp.tolerance((m, n, k), "f16acc"))
    assert e32.ok and e16.ok, (e32.message, e16.message)
    # the fp16 accumulator rounds to 11 bits at every K step: far above fp32's error, and of the modelled size
    assert e16.rel_norm_err > 30 * e32.rel_norm_err
    assert 0.02 * mp.U16 * math.sqrt(k) < e16.rel_norm_err < 0.41 * mp.U16 * math.sqrt(k) * 3


@pytest.mark.parametrize("signs", ["all +32", "+32 then -32"])
def test_fp16_accumulator_overflows_where_fp32_does_not(signs):
    k = 4096
    col = np.full(k, 32.0) if signs == "all +32" else np.concatenate([np.full(k // 2, 32.0), np.full(k // 2, -32.0)])
    a, b = _dev16(np.ones((2, k))), _dev16(np.tile(col[:, None], (1, 3)))
    r32 = np.asarray(arrays.to_numpy(mp.dot_acc_f32(a, b)))
    r16 = np.asarray(arrays.to_numpy(mp.dot_acc_f16(a, b)))
    assert np.all(r32 == col.sum())                 # 131072 and 0: exact in an fp32 accumulator
    assert np.all(np.isposinf(r16)), r16            # the running sum passed 65504 and stayed inf


def test_naive_fp16_softmax_and_layernorm_match_float64_loosely():
    sm = lab.lab_module("phase3_triton", "lab03_fused_softmax")
    ln = lab.lab_module("phase3_triton", "lab04_layernorm")
    where = lab.where()
    (x,) = sm.make_inputs((5, 333), "float16", check.rng(52), where)
    y = mp.softmax_lowp(x, chunk=32)
    ref = sm.reference(np.asarray(arrays.to_numpy(x), np.float64))
    c = check.compare(y, ref, tol=check.Tol(1e-2, 5e-2))
    assert c.ok, c.message
    xs, w, b, dy = ln.make_inputs((4, 257), "float16", check.rng(53), where)
    y = mp.layernorm_lowp(xs, w, b, ln.EPS, chunk=32)
    ref = ln.reference(*(np.asarray(arrays.to_numpy(t), np.float64) for t in (xs, w, b, dy)))[0]
    c = check.compare(y, ref, tol=check.Tol(2e-2, 1e-1))
    assert c.ok, c.message


def test_norm_ops_table_reports_the_rounding_floor():
    rows = mpb.norm_ops_table(4, 256, dtypes=("float16",))
    by = {(r["op"], r["impl"]): r for r in rows}
    for op, ours in (("softmax", "phase 3 Triton softmax (fp32 inside)"),
                     ("layernorm", "phase 3 Triton layernorm (fp32 inside)")):
        floor = by[(op, "rounding floor (exact, rounded to dtype)")]["rel err"]
        assert 0 < floor < 1e-3
        # fp32 inside: within a few roundings of the floor
        assert by[(op, ours)]["rel err"] <= 3 * floor + 1e-6
        assert by[(op, "naive Triton, float16 sums")]["non-finite"] == 0


# ---------------------------------------------------------------------------------------------------------------------
# Validation before launch
# ---------------------------------------------------------------------------------------------------------------------
def test_wrappers_reject_bad_input():
    """Validation before any launch, with the arrays each machine uses: device arrays on a GPU (CuPy fp16 / fp32),
    host arrays in the interpreter. Each wrapper names the argument and what was expected."""
    where = lab.where()

    def arr(shape, dtype="float16"):
        return arrays.from_numpy(np.ones(shape), dtype, where)

    a, b, b_ok = arr((4, 5)), arr((6, 3)), arr((5, 3))
    with pytest.raises(ValueError, match="inner dimensions"):
        mp.dot_gemm(a, b)
    with pytest.raises(ValueError, match="acc"):
        mp.dot_gemm(a, b_ok, acc="bfloat16")
    with pytest.raises(TypeError, match="a: dtype float32"):
        mp.dot_gemm(arr((4, 5), "float32"), b_ok)
    with pytest.raises(ValueError, match="acc"):
        mp.wmma_gemm(a, b, acc="half")
    if device.has_gpu():
        # the WMMA wrapper takes CuPy arrays: a torch tensor is refused by name, a shape mismatch before the launch
        import torch

        with pytest.raises(TypeError, match="a: expected a cupy array, got a torch array"):
            mp.wmma_gemm(torch.from_dlpack(a), torch.from_dlpack(b_ok))
        with pytest.raises(ValueError, match="inner dimensions"):
            mp.wmma_gemm(a, b)
        with pytest.raises(TypeError, match="a: expected a GPU array"):
            mp.dot_gemm(np.ones((4, 5), np.float16), np.ones((5, 3), np.float16))
    else:
        with pytest.raises(TypeError, match="a: expected a GPU array"):
            mp.wmma_gemm(a, b_ok)
    with pytest.raises(TypeError, match="x: dtype float32"):
        mp.softmax_lowp(arr((2, 3), "float32"))
    with pytest.raises(ValueError, match="chunk"):
        mp.softmax_lowp(arr((2, 3)), chunk=48)
    with pytest.raises(ValueError, match="w: expected shape"):
        mp.layernorm_lowp(arr((2, 3)), arr((4,)), arr((3,)))
    with pytest.raises(ValueError, match="dtype"):
        mp.make_inputs((2, 2, 2), "float32", check.rng(0), "cpu")


# ---------------------------------------------------------------------------------------------------------------------
# Tables computed on the CPU
# ---------------------------------------------------------------------------------------------------------------------
def test_overflow_table_values():
    by = {(r["case"], r["dtype"]): r["computed"] for r in mpb.overflow_table()}
    assert by[("65504 * 2", "float16")] == math.inf
    assert by[("65504 * 2", "bfloat16")] == 131072.0          # 65504 rounds to 65536 in bf16, then doubles
    assert by[("x * x, x = 256", "float16")] == math.inf
    assert by[("exp(11.09) computed in fp32, stored as fp16", "float16")] == 65504.0
    assert by[("exp(11.1) computed in fp32, stored as fp16", "float16")] == math.inf
    assert by[("sum of 4096 x 32, fp16 accumulator", "float16")] == math.inf
    assert by[("sum of 4096 x 32, fp32 accumulator", "float32")] == 131072.0
    assert by[("256 + 1", "bfloat16")] == 256.0
    assert by[("256 + 1", "float16")] == 257.0
    assert by[("2048 + 1", "float16")] == 2048.0
    assert by[("1e-8 stored as fp16", "float16")] == 0.0
    assert by[("5e-8 stored as fp16", "float16")] == 2.0 ** -24
    assert by[("1e-8 stored as bf16", "bfloat16")] == pytest.approx(1e-8, rel=2 ** -8)
    if ("448 stored as fp8 e4m3fn", "float8_e4m3fn") in by:
        assert by[("448 stored as fp8 e4m3fn", "float8_e4m3fn")] == 448.0
        assert by[("0.3 stored as fp8 e4m3fn", "float8_e4m3fn")] == 0.3125
        v = by[("500 stored as fp8 e4m3fn", "float8_e4m3fn")]
        assert v == 448.0 or math.isnan(v)


def test_fp16_sequential_sum_passes_65504_after_2047_terms():
    assert mpb.fp16_sequential_sum(np.full(2047, 32.0)) == 65504.0
    assert mpb.fp16_sequential_sum(np.full(2048, 32.0)) == math.inf


def test_format_table():
    by = {r["format"]: r for r in mpb.format_table()}
    assert by["float16"]["max"] == 65504.0 and by["float16"]["smallest subnormal"] == 2.0 ** -24
    assert by["bfloat16"]["mantissa bits"] == 7 and by["float16"]["mantissa bits"] == 10


def test_loss_scaling_fractions_match_a_direct_count():
    g = mpb.gradient_sample(100_000, seed=3)
    rows = {(r["dtype"], r["scale_value"]): r for r in mpb.loss_scaling_table(g)}
    g64 = np.abs(g.astype(np.float64))
    for s in mpb.LOSS_SCALES:
        r = rows[("float16", float(s))]
        with np.errstate(over="ignore"):
            q = (g * np.float32(s)).astype(np.float16)  # NumPy's own cast, independent of torch's
        assert r["flushed to 0"] == np.count_nonzero(q == 0) / g.size
        # scaling by a power of two is exact: flushed <=> |g| s <= 2^-25 (half the smallest subnormal, ties to 0)
        assert r["flushed to 0"] == np.count_nonzero(g64 * s <= 2.0 ** -25) / g.size
        # overflow <=> |g| s >= 65520 (the midpoint between 65504 and the next step, 65536)
        assert r["overflow (inf)"] == np.count_nonzero(g64 * s >= 65520.0) / g.size
    assert rows[("float16", 1.0)]["flushed to 0"] > 0.3            # the population's bulk lies below 3e-8
    assert rows[("float16", float(2**16))]["flushed to 0"] < 1e-3
    assert rows[("float16", float(2**32))]["overflow (inf)"] > 1e-3
    assert rows[("bfloat16", 1.0)]["flushed to 0"] == 0.0
    assert "2^16" in mpb.loss_scaling_story(mpb.loss_scaling_table(g))


# ---------------------------------------------------------------------------------------------------------------------
# The CLI
# ---------------------------------------------------------------------------------------------------------------------
def test_main_quick(capsys):
    assert lab_main(mp)(["--quick", "--no-bench", "--no-json", "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "Loss scaling" in out and "triton tl.dot, fp16 accumulator (out_dtype)" in out
    assert "HMMA.16816.F16" in out or "compile report skipped" in out or "no cuobjdump" in out


@pytest.mark.skipif(not os.path.exists(os.path.join(H200, mp.LAB + ".json")), reason="no committed H200 results")
def test_replot_redraws_the_committed_plots(tmp_path, capsys):
    """--replot draws both plots from the committed JSON alone (no GPU; fields older runs lack are tolerated)."""
    assert lab_main(mp)(["--replot", H200, "--out", str(tmp_path)]) == 0
    names = sorted(os.listdir(tmp_path))
    assert names == [mp.LAB + "_error_vs_k.png", mp.LAB + "_speed_vs_error.png"], names
    assert all(os.path.getsize(tmp_path / n) > 10_000 for n in names)
    assert capsys.readouterr().out.count("wrote") == 2


# ---------------------------------------------------------------------------------------------------------------------
# The plan on the GPUs learners have
# ---------------------------------------------------------------------------------------------------------------------
def test_plan_on_a_t4_and_an_h200():
    """Every variant runs on both (WMMA and fp16 tl.dot need no more than sm_75); the GEMM's grid is the same 4096^3
    tiling; the predictions come from each GPU's datasheet: no bf16, tf32 or fp8 unit on the T4 (its fp8 rows are
    skipped, with the reason), fp8 at twice the 16-bit rate on the H200."""
    config.set_overrides([])
    t4, h200 = device.profile_info("t4"), device.profile_info("h200")
    for gpu in (t4, h200):
        p = plan.make(mp, mpb, gpu)
        assert not p.skipped, [v.why for v in p.skipped]
        by = {(x.kernel, tuple(x.defines.items())): x for x in p.launches}
        assert by[(mp.WMMA_KERNEL, (("ACC_HALF", 1),))].grid == (64, 64, 1)
        dots = [x for x in p.launches if x.kernel == "dot_acc_kernel"]
        assert [x.defines["ACC_F16"] for x in dots] == [False, True] and all(x.grid == (32, 32) for x in dots)
        assert all(x.config_source == "default" for x in dots)
    pt, ph = mpb.predict(t4), mpb.predict(h200)
    assert "no such unit" in pt["bf16 floor"] and "no such unit" in pt["fp8 e4m3 floor"]
    assert pt["fp8 rows"] == "skipped: fp8 tensor cores need sm_89 or newer, this GPU is sm_75"
    assert "fp8 rows" not in ph and "2x the 16-bit rate" in ph["fp8 e4m3 floor"]
    assert pt["GEMM"].startswith("4096^3: 137.4 GFLOP, 1365 FLOP/B")


def test_set_changes_the_dot_tile_and_says_so():
    config.set_overrides(["BLOCK_K=32", "num_stages=4"])
    try:
        dots = [x for x in mp.launches(device.profile_info("rtx-4090")) if x.kernel == "dot_acc_kernel"]
        assert all(x.defines["BLOCK_K"] == 32 and x.num_stages == 4 for x in dots)
        assert all("--set BLOCK_K=32" in x.config_source and "--set num_stages=4" in x.config_source for x in dots)
        config.set_overrides(["BLOCK_K=48"])
        with pytest.raises(ValueError, match="BLOCK_K"):
            mp.dot_config()
    finally:
        config.set_overrides([])


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("fn,dtype", [(mp.wmma_acc_f32, "float16"), (mp.wmma_acc_f16, "f16acc"),
                                      (mp.dot_acc_f32, "float16"), (mp.dot_acc_f16, "f16acc")])
@pytest.mark.parametrize("size", [(1, 1, 1), (3, 130, 17), (129, 2, 65), (100, 200, 1500), (64, 64, 0)])
def test_variants_on_awkward_shapes_gpu(fn, dtype, size):
    a, b = mp.make_inputs(size, dtype, check.rng(60), "cuda")
    out = check.poisoned((size[0], size[1]), "float32", a)
    res = fn(a, b, out=out)
    c = check.compare(res, mp.reference(a.get(), b.get()), tol=mp.tolerance(size, dtype))
    assert c.ok, c.message


@gpu
def test_accumulator_error_and_overflow_on_gpu():
    rows = mpb.accumulator_overflow_gpu(4096)
    by = {(r["case"][:12], r["kernel"]): r for r in rows}
    for case in ("A = 1, B = 3", "A = 1, B = +"):
        assert by[(case, "WMMA fp32 acc")]["all equal exact"] and by[(case, "Triton fp32 acc")]["all equal exact"]
        assert math.isinf(by[(case, "WMMA fp16 acc")]["C[0,0]"])
        assert math.isinf(by[(case, "Triton fp16 acc")]["C[0,0]"])
    a, b = mp.make_inputs((256, 256, 4096), "float16", check.rng(61), "cuda")
    ref = mp.reference(a.get(), b.get())
    for f32, f16 in ((mp.wmma_acc_f32, mp.wmma_acc_f16), (mp.dot_acc_f32, mp.dot_acc_f16)):
        e32 = check.compare(f32(a, b), ref, tol=mp.tolerance((256, 256, 4096), "float16"))
        e16 = check.compare(f16(a, b), ref, tol=check.Tol(1.0, 10.0))
        assert e32.ok, e32.message
        assert e16.rel_norm_err > 10 * e32.rel_norm_err


@gpu
def test_naive_bf16_kernels_on_gpu():
    rows = mpb.norm_ops_table(256, 4096, dtypes=("bfloat16",))
    for r in rows:
        assert r.get("note") is None, r
        assert r["non-finite"] == 0 and r["rel err"] < 0.1, r


@gpu
def test_gemm_precision_table_gpu():
    rows, why8 = mpb.gemm_table(1024, rep_ms=5.0)
    by = {r["precision"]: r for r in rows}
    assert by["fp32 (TF32 off)"]["rel err"] < 1e-5
    assert 1e-5 < by["tf32"]["rel err"] < 5e-3
    assert by["fp16"]["rel err"] < 2e-3 and by["bf16"]["rel err"] < 1e-2
    fp8 = [r for name, r in by.items() if name.startswith("fp8")]
    if why8:
        assert not fp8
        pytest.skip(f"fp8: {why8}")
    for r in fp8:
        assert math.isfinite(r["rel err"]) and 5e-3 < r["rel err"] < 0.1, r
