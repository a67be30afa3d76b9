"""The common toolkit, on the CPU: checks, arrays, reports, CLI, device facts, the NVRTC compile report."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from common import arrays, bench, check, cli, cuda, device, report

HERE = os.path.dirname(os.path.abspath(__file__))
RES_CU = os.path.join(HERE, "data", "resources.cu")


# ---------------------------------------------------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------------------------------------------------
def test_compare_accepts_fp32_rounding():
    r = check.rng(1).standard_normal(10_000)
    assert check.compare(r.astype(np.float32), r, "float32").ok


def test_compare_catches_one_unwritten_element():
    r = check.rng(2).standard_normal(1000)
    out = check.poison(np.empty(1000, np.float32))
    out[:-1] = r[:-1]
    c = check.compare(out, r, "float32")
    assert not c.ok and "non-finite" in c.message


def test_compare_catches_small_relative_error_in_one_element():
    r = check.rng(3).standard_normal(1000)
    out = r.astype(np.float32).copy()
    out[500] += 0.01 * (abs(r[500]) + 1)
    assert not check.compare(out, r, "float32").ok


def test_compare_nonfinite_reference_must_match():
    ref = np.array([1.0, np.inf, -np.inf, np.nan])
    assert check.compare(np.array([1.0, np.inf, -np.inf, np.nan], np.float32), ref).ok
    assert not check.compare(np.array([1.0, np.inf, np.inf, np.nan], np.float32), ref).ok
    assert not check.compare(np.array([1.0, np.inf, -np.inf, 0.0], np.float32), ref).ok


def test_compare_shape_mismatch_and_empty():
    assert not check.compare(np.zeros(3), np.zeros(4)).ok
    assert check.compare(np.zeros(0, np.float32), np.zeros(0)).ok


def test_tolerances_order_and_unknown_dtype():
    t = [check.tolerance(d).rel_norm for d in ("float64", "float32", "float16", "bfloat16")]
    assert t == sorted(t)
    with pytest.raises(ValueError):
        check.tolerance("int7")


def test_assert_close_message_names_the_seed():
    with pytest.raises(AssertionError, match="seed"):
        check.assert_close(np.ones(4, np.float32), np.zeros(4) + 2, "float32", what="demo")


def test_poison_ints_and_floats():
    assert np.isnan(check.poison(np.zeros(4, np.float16))).all()
    assert (check.poison(np.zeros(4, np.int32)) == np.iinfo(np.int32).max).all()


def test_seeded_rng_is_reproducible_per_offset():
    a = check.rng(5).standard_normal(4)
    b = check.rng(5).standard_normal(4)
    c = check.rng(6).standard_normal(4)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


# ---------------------------------------------------------------------------------------------------------------------
# arrays
# ---------------------------------------------------------------------------------------------------------------------
def test_check_array_messages_name_the_argument():
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match=r"x: expected a GPU array.*cupy.asarray"):
        arrays.check_array("x", x, device=True)
    with pytest.raises(TypeError, match=r"x: dtype int32"):
        arrays.check_array("x", x.astype(np.int32), dtypes=("float32",), device=False)
    with pytest.raises(ValueError, match=r"x: expected a 1-D array, got 2-D"):
        arrays.check_array("x", x, ndim=1, device=False)
    with pytest.raises(ValueError, match=r"x: expected a C-contiguous"):
        arrays.check_array("x", x.T, device=False)
    with pytest.raises(TypeError, match=r"x: expected an array"):
        arrays.check_array("x", [1.0, 2.0], device=None)
    assert arrays.check_array("x", x, dtypes=("float32",), ndim=2, device=False) == "float32"


def test_check_same_and_check_out():
    a, b = np.zeros(4, np.float32), np.zeros(5, np.float32)
    with pytest.raises(ValueError, match="shapes must match"):
        arrays.check_same("a, b", a, b)
    with pytest.raises(TypeError, match="dtypes must match"):
        arrays.check_same("a, b", a, a.astype(np.float16))
    with pytest.raises(ValueError, match="out: expected shape"):
        arrays.check_out(np.zeros(3, np.float32), (4,), "float32", a)
    assert arrays.check_out(None, (4,), "float32", a).shape == (4,)


def test_overlap_counts_a_strided_views_gaps():
    import torch

    buf = np.zeros((8, 10), np.float32)
    left, right = buf[:, :4], buf[:, 6:]          # interleaved rows: their spans intersect though no element is shared
    assert arrays.overlap(left, right) and arrays.overlap(right, left)
    assert not arrays.overlap(buf[:4], buf[4:])   # adjacent halves touch, do not overlap
    assert arrays.overlap(buf[:5], buf[4:])
    assert not arrays.overlap(buf[:0], buf)       # an empty array overlaps nothing
    t = torch.zeros(6, 4)
    assert arrays.overlap(t[:, 1], t[5]) and not arrays.overlap(t[:, 1], t[5:, 2:])  # torch strides count elements


def test_dtype_names_across_libraries():
    import torch

    assert arrays.dtype_name(np.zeros(1, np.float16)) == "float16"
    assert arrays.dtype_name(torch.zeros(1, dtype=torch.bfloat16)) == "bfloat16"
    assert arrays.dtype_name(torch.zeros(1, dtype=torch.float32)) == "float32"
    t = torch.tensor([1.5, -2.25], dtype=torch.bfloat16)
    assert np.array_equal(arrays.to_numpy(t), np.array([1.5, -2.25], np.float32))


# ---------------------------------------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------------------------------------
def _timing(ms=2.0):
    return bench.Timing(median_ms=ms, p20_ms=ms * 0.9, p80_ms=ms * 1.1, min_ms=ms * 0.8, n=10, clock="test")


def test_row_derives_bandwidth_flops_and_fraction():
    r = report.row("lab", "v", "cuda", (1000,), "float32", _timing(2.0), nbytes=8e9, flops=4e9, ceiling_gbps=8000)
    assert r["gbps"] == pytest.approx(4000) and r["tflops"] == pytest.approx(2.0)
    assert r["frac_ceiling"] == pytest.approx(0.5) and r["spread"] == pytest.approx(0.2)


def test_write_json_has_required_fields(tmp_path):
    rows = [report.row("lab", "v", "triton", (7, 3), "float16", _timing(), nbytes=1e6, ceiling_gbps=1000)]
    path = report.write_json("demo", rows, out_dir=str(tmp_path), extra="x")
    doc = json.load(open(path))
    for k in ("gpu", "date", "commit", "versions", "command", "rows", "extra"):
        assert k in doc
    for k in ("lab", "variant", "impl", "shape", "dtype", "ms", "gbps", "tflops", "ceiling_gbps"):
        assert k in doc["rows"][0]
    assert doc["versions"]["numpy"] == np.__version__


def test_print_table_aligns(capsys):
    report.print_table([{"a": 1.23456, "b": "x"}, {"a": 12345.6, "b": None}], title="t")
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "t" and out[2].startswith("a ") and set(out[3]) == {"-", " "}
    assert "12,346" in out[-1] and out[-1].rstrip().endswith("-") and len(out[-1].rstrip()) == len(out[2].rstrip())


def test_plots_write_png(tmp_path):
    p1 = report.plot_lines(str(tmp_path / "l.png"), [1, 2, 4], {"s": [1, None, 3]}, xlabel="x", ylabel="y",
                           title="t", hlines={"h": 2}, vlines={"v": 2}, shade=[(1, 2, "r")])
    p2 = report.plot_bars(str(tmp_path / "b.png"), ["a", "b"], [1.0, 2.0], ylabel="y", title="t", hlines={"h": 1.5})
    for p in (p1, p2):
        assert open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------------------------------
# device, bench, cli
# ---------------------------------------------------------------------------------------------------------------------
def test_gpu_slug():
    assert device.gpu_slug("NVIDIA H200") == "h200"
    assert device.gpu_slug("NVIDIA GeForce RTX 4090") == "rtx-4090"
    assert device.gpu_slug("Tesla T4") == "t4"


def test_arch_table_and_datasheet():
    for a in ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90"):
        info = device.arch_info(a)
        assert info.max_warps_per_sm * 32 == info.max_threads_per_sm
        assert info.smem_per_block_optin <= info.smem_per_sm
    assert device.arch_info("90").arch == device.arch_info("sm_90a").arch == "sm_90"
    with pytest.raises(ValueError):
        device.arch_info("sm_61")
    assert device.datasheet("NVIDIA H200")["hbm_gbps"] == 4800
    assert device.datasheet("NVIDIA H100 80GB HBM3")["hbm_gbps"] == 3350
    assert device.datasheet("Some Future GPU") == {}


def test_describe_without_gpu_uses_the_table():
    if device.has_gpu():
        pytest.skip("a GPU is present: describe() reads the device")
    assert "sm_80" in device.describe("sm_80") and "no GPU" in device.describe("sm_80")
    with pytest.raises(device.GPUUnavailable, match="needs a CUDA GPU"):
        device.require_gpu("this test")


def test_bench_without_gpu_uses_the_wall_clock():
    if device.has_gpu():
        pytest.skip("a GPU is present: bench uses CUDA events")
    calls = []
    t = bench.bench(lambda: calls.append(1), rep_ms=5)
    assert t.clock.startswith("wall") and t.n >= 3 and len(calls) >= 4 and t.median_ms >= 0


def test_cli_parser_flags():
    p = cli.parser("demo", size=True, dtype=("float32", "bfloat16"))
    a = p.parse_args(["--quick", "--size", "4097", "--dtype", "bfloat16", "--no-plot"])
    assert a.quick and a.size == 4097 and a.dtype == "bfloat16" and not a.plot and a.json
    assert p.parse_args(["--size", "1e6"]).size == 1_000_000
    with pytest.raises(SystemExit):
        p.parse_args(["--size", "0"])


def test_progress_yields_everything(capsys):
    assert list(cli.progress(range(5), "x")) == [0, 1, 2, 3, 4]


# ---------------------------------------------------------------------------------------------------------------------
# cuda: the NVRTC compile report (no GPU needed)
# ---------------------------------------------------------------------------------------------------------------------
PTXAS_LOG = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k1' for 'sm_90'
ptxas info    : Function properties for k1
ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'k2' for 'sm_90'
ptxas info    : Function properties for k2
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers
"""


def test_parse_ptxas_log():
    ks = cuda.parse_ptxas_log(PTXAS_LOG, "sm_90")
    k1, k2 = ks["k1"], ks["k2"]
    assert (k1.registers, k1.smem_bytes, k1.stack_bytes, k1.spill_stores, k1.spill_loads, k1.barriers) == \
        (40, 4096, 16, 8, 12, 1)
    assert (k2.registers, k2.smem_bytes, k2.spills) == (12, 0, 0)


def test_sass_census_widths_and_predicates():
    lines = ["LDG.E.128 R4, desc[UR4][R4.64]", "@P0 LDG.E R2, desc[UR4][R2.64]", "STG.E.64 desc[UR4][R6.64], R8",
             "BAR.SYNC.DEFER_BLOCKING 0x0", "SHFL.BFLY PT, R3, R2, 0x10, 0x1f", "FFMA R1, R2, R3, R4",
             "@!P1 LDS.128 R8, [R2]", "HMMA.16816.F32.BF16 R4, R8, R12, R4", "LDL R1, [R1+0x4]"]
    c = cuda.sass_census(lines)
    assert c["LDG.128"] == 1 and c["LDG.32"] == 1 and c["STG.64"] == 1 and c["LDS.128"] == 1
    assert c["BAR"] == c["SHFL"] == c["FFMA"] == c["HMMA"] == c["LDL"] == 1


@pytest.mark.parametrize("arch", cuda.ALL_ARCHS)
def test_compile_report_reads_resources(arch):
    rep = cuda.compile_report(RES_CU, arch)
    assert list(rep.kernels) == ["many_live_values", "shared_and_shuffle"]
    k = rep["shared_and_shuffle"]
    assert k.smem_bytes == 1024 and k.barriers == 1 and k.registers > 0 and k.spills == 0
    assert ".entry shared_and_shuffle" in rep.ptx
    if cuda.find_cuobjdump():
        c = k.sass_counts
        assert c.get("BAR", 0) >= 1 and c.get("SHFL", 0) >= 1 and c.get("STS.32", 0) >= 1


def test_register_cap_makes_spills_appear():
    free = cuda.compile_report(RES_CU, "sm_90")["many_live_values"]
    capped = cuda.compile_report(RES_CU, "sm_90", options=("-maxrregcount=16",))["many_live_values"]
    assert free.spills == 0 and free.registers > 32
    assert capped.registers < free.registers and capped.spill_stores > 0 and capped.spill_loads > 0
    if cuda.find_cuobjdump():
        assert capped.sass_counts.get("STL", 0) > 0


def test_compile_error_carries_the_log(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text('extern "C" __global__ void k(float* x) { x[0] = undefined_name; }\n')
    with pytest.raises(cuda.CompileError, match="undefined_name"):
        cuda.compile_report(str(bad), "sm_90")


def test_defines_change_the_compiled_code(tmp_path):
    src = tmp_path / "d.cu"
    src.write_text('#ifndef N\n#define N 4\n#endif\nextern "C" __global__ void k(float* x) '
                   '{ __shared__ float s[N * 256]; s[threadIdx.x] = x[threadIdx.x]; __syncthreads(); '
                   'x[threadIdx.x] = s[(threadIdx.x * 7) % (N * 256)]; }\n')
    assert cuda.compile_report(str(src), "sm_90")["k"].smem_bytes == 4 * 256 * 4
    assert cuda.compile_report(str(src), "sm_90", defines={"N": 8})["k"].smem_bytes == 8 * 256 * 4


def test_claimed_archs_and_kernel_names(tmp_path):
    src = tmp_path / "c.cu"
    src.write_text('// archs: sm_80 sm_90\nextern "C" __global__ void __launch_bounds__(128) a(float* x) {}\n'
                   'extern "C" __global__ void b(float* x) {}\n')
    assert cuda.claimed_archs(str(src)) == ("sm_80", "sm_90")
    assert cuda.kernel_names(str(src)) == ["a", "b"]
    assert cuda.claimed_archs(RES_CU) == cuda.ALL_ARCHS


def test_no_gpu_load_gives_a_clear_error():
    if device.has_gpu():
        pytest.skip("a GPU is present")
    with pytest.raises(device.GPUUnavailable, match="needs a CUDA GPU"):
        cuda.get_kernel(RES_CU, "shared_and_shuffle")


def test_setup_env_picks_a_pinned_set_per_machine():
    """setup_env: no driver -> the CPU set, CUDA 12/13 drivers -> their sets, each through its constraints file; every
    constraints file pins the packages the course is tested with; --unpinned drops the file but keeps the CPU torch."""
    tools = os.path.join(os.path.dirname(HERE), "tools")
    sys.path.insert(0, tools)
    try:
        import setup_env
    finally:
        sys.path.remove(tools)
    assert setup_env.choose(None) == "cpu" and setup_env.choose(12) == "cuda12" and setup_env.choose(13) == "cuda13"
    with pytest.raises(SystemExit, match="CUDA 11"):
        setup_env.choose(11)
    for name, (extra, path, _) in setup_env.SETUPS.items():
        for pkg in ("torch", "triton", "numpy", "matplotlib", "pytest", "pytest-xdist",
                    "cupy-cuda12x" if extra == "cuda12" else "cupy-cuda13x"):
            assert setup_env.pinned(path, pkg), f"{path} does not pin {pkg}"
        cmds = [" ".join(c) for c in setup_env.commands(name, unpinned=False)]
        assert all("-c " + os.path.join(setup_env.ROOT, path) in c for c in cmds[1:]), cmds
        assert f"[{extra},test,docs]" in cmds[-1]
    loose = [" ".join(c) for c in setup_env.commands("cpu", unpinned=True)]
    assert not any(" -c " in c for c in loose) and f"torch=={setup_env.pinned('requirements/cpu.txt', 'torch')}" \
        in loose[1]
    out = subprocess.run([sys.executable, os.path.join(tools, "setup_env.py"), "--dry-run"], capture_output=True,
                         text=True, check=True).stdout
    assert "install" in out and " -e " in out and "requirements/" in out


def test_all_zero_reference_uses_an_absolute_norm():
    zero = np.zeros(3)
    assert check.compare(np.full(3, 1e-7, np.float32), zero, "float32").ok
    assert not check.compare(np.full(3, 1e-3, np.float32), zero, "float32").ok
    assert not check.compare(np.array([0, np.nan, 0], np.float32), zero, "float32").ok


def test_absolute_floor_for_exact_zeros():
    zero = np.zeros(4)
    assert not check.compare(np.full(4, 2e-5, np.float32), zero, "float32").ok
    assert check.compare(np.full(4, 2e-5, np.float32), zero, tol=check.Tol(1e-5, 1e-4, atol=1e-4)).ok
    assert not check.compare(np.full(4, 2e-3, np.float32), zero, tol=check.Tol(1e-5, 1e-4, atol=1e-4)).ok


def test_stop_before_bench(capsys):
    """The gate every lab's main() passes after its checks: a failed check stops with 1 and says why; --no-bench
    stops with 0; otherwise the benchmark runs (None)."""
    from types import SimpleNamespace

    from common import lab

    assert lab.stop_before_bench(False, SimpleNamespace(bench=True)) == 1
    assert "correctness failed" in capsys.readouterr().out
    assert lab.stop_before_bench(False, SimpleNamespace(bench=False)) == 1
    assert lab.stop_before_bench(True, SimpleNamespace(bench=False)) == 0
    assert lab.stop_before_bench(True, SimpleNamespace(bench=True)) is None


def test_matmul_dims():
    a, b = np.zeros((3, 5), np.float32), np.zeros((5, 7), np.float32)
    assert arrays.matmul_dims(a, b) == (3, 7, 5)
    with pytest.raises(ValueError, match=r"x, w: inner dimensions differ: x is 3x5, w is 7x5"):
        arrays.matmul_dims(a, b.T, ("x", "w"))
    with pytest.raises(ValueError, match=r"N = 7 exceeds 6 \(the kernels take 32-bit dimensions\)"):
        arrays.matmul_dims(a, b, max_dim=6)


def test_tree_guard_sees_a_changed_and_a_new_file(tmp_path):
    """The session hook in conftest.py that fails a test run which changed the working tree: it must see a modified
    tracked file and a new untracked one, and nothing when the tree is as it was."""
    import subprocess

    from tests.helpers import changed_entries, git_status

    def git(*a):
        subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a.json").write_text("{}")
    git("add", "a.json")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "a")
    before = git_status(str(tmp_path))
    assert before == "" and changed_entries(before, git_status(str(tmp_path))) == []
    (tmp_path / "a.json").write_text('{"ms": 1}')
    (tmp_path / "b.png").write_bytes(b"x")
    assert changed_entries(before, git_status(str(tmp_path))) == [" M a.json", "?? b.png"]


def test_grouped_tile_is_a_permutation_and_compiles_ahead_of_time(tmp_path):
    """common.triton_support.grouped_tile (the grouped program order every tiled Triton kernel shares): every
    (pid_m, pid_n) exactly once, GROUP_M tile-rows per group, and a kernel that calls it still compiles ahead of time
    with the interpreter on (compiler_mode swaps the helper for a compiler function)."""
    import importlib.util

    src = tmp_path / "order_kernel.py"
    src.write_text(
        "from common.triton_support import tl, triton, grouped_tile\n\n\n"
        "@triton.jit\n"
        "def order_kernel(out_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):\n"
        "    pid = tl.program_id(0)\n"
        "    pm, pn = grouped_tile(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)\n"
        "    tl.store(out_ptr + 2 * pid, pm)\n"
        "    tl.store(out_ptr + 2 * pid + 1, pn)\n")
    spec = importlib.util.spec_from_file_location("order_kernel", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from common import device
    from common.triton_support import aot, launch

    if not device.has_gpu():
        for gm in (1, 2, 3):
            out = np.zeros(2 * 35, np.int32)
            launch(mod.order_kernel, (35,), out, 5 * 16 - 3, 7 * 16, BLOCK_M=16, BLOCK_N=16, GROUP_M=gm)
            pairs = [tuple(p) for p in out.reshape(-1, 2).tolist()]
            assert sorted(pairs) == [(i, j) for i in range(5) for j in range(7)]
            assert pairs[:gm] == [(i, 0) for i in range(gm)]          # down a column of GROUP_M tile-rows first
    k = aot(mod.order_kernel, {"out_ptr": "*i32", "M": "i32", "N": "i32", "BLOCK_M": "constexpr",
                               "BLOCK_N": "constexpr", "GROUP_M": "constexpr"},
            {"BLOCK_M": 16, "BLOCK_N": 16, "GROUP_M": 2})
    assert "ptx" in k.asm and k.metadata.name == "order_kernel"


def test_benchmark_context_reaches_the_ceiling_measurement(monkeypatch):
    """common.lab.Context.ceiling() is what every lab's benchmark calls first on a GPU: it must reach
    common.bench.ceilings (a NameError here once crashed three labs on the H200 only)."""
    from common import bench, lab

    monkeypatch.setattr(bench, "ceilings", lambda: {"hbm_gbps": 1.0, "hbm_method": "test"})
    ctx = lab.Context(args=None, out_dir=".")
    assert ctx.ceiling()["hbm_method"] == "test"


def test_a_variant_says_why_it_cannot_run_here(monkeypatch):
    """Variant.unavailable: asked after the GPU and arch checks; its reason is the variant's, None or "" lets it run."""
    from common import lab as contract

    monkeypatch.setattr(contract.device, "has_gpu", lambda: False)
    v = contract.Variant("t", None, "triton", unavailable=lambda: "no such engine here")
    assert v.available() == (False, "no such engine here")
    assert contract.Variant("t", None, "triton", unavailable=lambda: None).available() == (True, "")
    assert contract.Variant("t", None, "triton", unavailable=lambda: "").available() == (True, "")
    called = []
    cu = contract.Variant("c", None, "cuda", unavailable=lambda: called.append(1) or "x")
    assert cu.available() == (False, "needs a GPU (compile report shown)") and not called   # the GPU check first


def test_a_peer_that_cannot_serve_any_case_is_passed_over_but_our_own_variant_is_not(monkeypatch):
    """cuDNN's SDPA has no kernel for S = 1: a --quick run whose cases are all like that must not fail on the peer;
    a variant of ours that runs no case is a defect and fails."""
    from common import lab as contract

    monkeypatch.setattr(contract.Variant, "available", lambda self: (True, ""))
    never = lambda size, dtype: "no kernel for this size"                               # noqa: E731
    cases = [(1, "float32"), (3, "float32")]
    rows, ok = contract.check_variants(None, [contract.Variant("peer x", None, "peer", cannot_serve=never)], cases,
                                       verbose=False)
    assert ok and rows[0]["cases"] == 0 and "cannot serve" in rows[0]["result"]
    rows, ok = contract.check_variants(None, [contract.Variant("ours", None, "triton", cannot_serve=never)], cases,
                                       verbose=False)
    assert not ok and rows[0]["result"].startswith("no case ran")


def test_device_attributes_name_real_fields_and_runtime_constants():
    """device.info() reads these off the GPU; here (no GPU needed) each must be a DeviceInfo field and a constant of
    CuPy's runtime, so a typo fails on a CPU rather than on a learner's GPU."""
    import dataclasses

    from cupy_backends.cuda.api import runtime as rt

    fields = {f.name for f in dataclasses.fields(device.DeviceInfo)}
    for field, attr in device._ATTRIBUTES.items():
        assert field in fields, field
        assert isinstance(getattr(rt, "cudaDevAttr" + attr, None), int), attr


def test_round_to_nearest_and_toward_zero():
    """bf16 keeps 7 bits after the point: 1 + 0.75/128 lies between 1 and 1 + 1/128, nearer the second. Nearest rounds
    up to it; truncation (the interpreter's conversion) drops to 1, on either sign."""
    x = np.array([1 + 0.75 / 128, -(1 + 0.75 / 128), 2.0**-30])
    assert arrays.round_to(x, "bfloat16").tolist() == [1 + 1 / 128, -(1 + 1 / 128), 2.0**-30]
    assert arrays.round_to(x, "bfloat16", toward_zero=True).tolist() == [1.0, -1.0, 2.0**-30]
    assert arrays.round_to(np.array([1 + 2.0**-12]), "float16").tolist() == [1.0]
    with pytest.raises(ValueError, match="toward_zero"):
        arrays.round_to(x, "float16", toward_zero=True)


def test_steady_repeats_unsteady_rounds_and_says_when_too_few_were_steady(monkeypatch):
    """bench.steady: a round where any contender's own spread is over 3% is run again, not counted; the pooled
    result comes from the steady rounds; with too few of them every round is pooled and steady is False."""
    from common import bench

    def timing(ms, spread):
        return bench.Timing(median_ms=ms, p20_ms=ms * (1 - spread / 2), p80_ms=ms * (1 + spread / 2), min_ms=ms, n=10,
                            clock="scripted")

    script = iter([0.01, 0.01,     # round 1: steady
                   0.01, 0.10,     # round 2: b unsteady -> repeated
                   0.02, 0.02,     # round 3: steady
                   0.02, 0.01])    # round 4: steady
    calls = []

    def fake_bench(fn, **kw):
        calls.append(fn())
        return timing(2.0 if calls[-1] == "b" else 1.0, next(script))

    monkeypatch.setattr(bench, "bench", fake_bench)
    ts, run, ok = bench.steady({"a": lambda: "a", "b": lambda: "b"}, rounds=3)
    assert ok and run == 4 and calls == ["a", "b"] * 4
    assert ts["b"].median_ms == 2.0 and "3 steady interleaved rounds of 4" in ts["b"].clock
    assert ts["b"].p80_ms == 2.0 * 1.01                 # the unsteady round (spread 0.10) is not pooled
    script = iter([0.05] * 12)
    calls.clear()
    ts, run, ok = bench.steady({"a": lambda: "a", "b": lambda: "b"}, rounds=2)
    assert not ok and run == 6 and "only 0 steady" in ts["a"].clock
