"""tools/sanitize.py: the log parser on sample compute-sanitizer reports, the plan, --dry-run, and the no-GPU exit.

The sample logs follow the report layout of the Compute Sanitizer manual (memcheck, racecheck analysis mode, initcheck,
synccheck), with the worker's marker lines interleaved as the sweep writes them.
"""
import subprocess
import sys

import pytest

from common import device
from tools import sanitize as S

M = S.MARK


def _begin(lab, var, impl="cuda"):
    return f"{M} BEGIN\t{lab}\t{var}\t{impl}\t(5, 7)\tfloat32"


def _end(lab, var, status="ok"):
    return f"{M} END\t{lab}\t{var}\t{status}"


MEMCHECK = "\n".join([
    "========= COMPUTE-SANITIZER",
    f"{M} START\tmemcheck\t3",
    _begin("p2.lab08", "cuda 01 naive"),
    "========= Invalid __global__ read of size 4 bytes",
    "=========     at sgemm_01_naive+0x1b0 in /w/phase2_cuda/lab08_sgemm.cu:41",
    "=========     by thread (5,0,0) in block (0,0,0)",
    "=========     Access at 0x7f2a00000214 is out of bounds",
    "=========     and is 1 bytes after the nearest allocation at 0x7f2a00000000 of size 532 bytes",
    "=========     Saved host backtrace up to driver entry point at kernel launch time",
    "=========         Host Frame: [0x2f1c1] in libcuda.so.1",
    "=========",
    "========= Invalid __global__ write of size 4 bytes",
    "=========     at sgemm_01_naive+0x2c0 in /w/phase2_cuda/lab08_sgemm.cu:45",
    "=========     by thread (6,0,0) in block (0,0,0)",
    "=========     Address 0x7f2a00000400 is out of bounds",
    "=========",
    _end("p2.lab08", "cuda 01 naive"),
    _begin("p2.lab08", "cuda 02 coalesced"),
    "========= Invalid __global__ read of size 16 bytes",
    "=========     at void at::native::vectorized_elementwise_kernel<4, float>(int, float*)+0x90",
    "=========     by thread (0,0,0) in block (0,0,0)",
    "=========",
    _end("p2.lab08", "cuda 02 coalesced"),
    _begin("p3.lab02", "triton matmul", "triton"),
    _end("p3.lab02", "triton matmul", "ValueError: a: bad"),
    # the sanitizer printed this one after the END marker: attributed by the kernel it names
    "========= Misaligned Shared or Local Address",
    "=========     at matmul_kernel+0x3f0 in /w/phase3_triton/lab02_matmul.py:120",
    "=========     by thread (0,0,0) in block (1,0,0)",
    "=========",
    f"{M} DONE\tmemcheck",
    "========= ERROR SUMMARY: 4 errors",
])

RACECHECK = "\n".join([
    "========= COMPUTE-SANITIZER",
    _begin("p2.lab06", "cuda 05 unrolled last warp"),
    "========= Error: Race reported between Write access at reduce_05_unroll_last_warp+0x2a0 in lab06_reduction.cu:88",
    "=========     and Read access at reduce_05_unroll_last_warp+0x2b0 in lab06_reduction.cu:88 [992 hazards]",
    "=========",
    "========= Warning: Race reported between Read access at reduce_05_unroll_last_warp+0x100 in lab06_reduction.cu:80",
    "=========     and Write access at reduce_05_unroll_last_warp+0x120 in lab06_reduction.cu:81 [4 hazards]",
    "=========",
    _end("p2.lab06", "cuda 05 unrolled last warp"),
    _begin("p2.lab06", "cuda 06 warp shuffle"),
    _end("p2.lab06", "cuda 06 warp shuffle"),
    "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)",
    "========= ERROR SUMMARY: 1 error",
])

INITCHECK = "\n".join([
    "========= COMPUTE-SANITIZER",
    "========= Uninitialized __global__ memory read of size 4 bytes",      # before any marker: outside
    "=========     at cupy_copy__float32_float32+0x70",
    "=========     by thread (0,0,0) in block (0,0,0)",
    "=========",
    _begin("p1.lab02", "cuda 03 float4"),
    "========= Uninitialized __global__ memory read of size 16 bytes",
    "=========     at add_03_float4+0x80 in lab02_vector_add.cu:30",
    "=========     by thread (1,0,0) in block (0,0,0)",
    "=========",
    _end("p1.lab02", "cuda 03 float4", "mismatch: 3 elements differ"),
    "========= ERROR SUMMARY: 2 errors",
])

SYNCCHECK = "\n".join([
    "========= COMPUTE-SANITIZER",
    _begin("p2.lab03", "cuda 02 shfl"),
    "========= Barrier error detected. Divergent thread(s) in warp",
    "=========     at scan_02_shfl+0x1c0 in lab03_warp_shuffle.cu:50",
    "=========     by thread (3,0,0) in block (0,0,0)",
    "=========",
    "========= Barrier error detected. Divergent thread(s) in warp",
    "=========     at 0x000001c0 in lab03_warp_shuffle.cu:50:scan_02_shfl",
    "=========     by thread (4,0,0) in block (0,0,0)",
    "=========",
    _end("p2.lab03", "cuda 02 shfl"),
    "========= ERROR SUMMARY: 2 errors",
])

CLEAN = "\n".join(["========= COMPUTE-SANITIZER", _begin("a", "v"), "hello from the worker", _end("a", "v"),
                   "========= ERROR SUMMARY: 0 errors"])

OURS = {"sgemm_01_naive", "matmul_kernel", "reduce_05_unroll_last_warp", "add_03_float4", "scan_02_shfl"}


def test_parse_memcheck_attributes_by_window_name_and_library():
    r = S.parse_log(MEMCHECK, OURS)
    v = r["variants"]
    assert v["p2.lab08:cuda 01 naive"]["errors"] == 2
    assert v["p2.lab08:cuda 01 naive"]["kernels"] == {"sgemm_01_naive": 2}
    assert v["p2.lab08:cuda 01 naive"]["launches"] == 1
    assert v["p2.lab08:cuda 02 coalesced"]["errors"] == 0          # a torch kernel: library, not ours
    assert sum(r["library"].values()) == 1
    assert "at::native::vectorized_elementwise_kernel<4, float>" in r["library"]
    # printed after the END marker, but it names our Triton kernel: it goes to the variant that ran last
    assert v["p3.lab02:triton matmul"]["errors"] == 1 and not r["outside"]
    assert v["p3.lab02:triton matmul"]["exceptions"] == ["ValueError: a: bad"]
    assert r["summary_errors"] == 4 and r["parsed_errors"] == 4


def test_parse_late_report_of_a_known_kernel_goes_to_its_variant():
    text = MEMCHECK.replace(_end("p3.lab02", "triton matmul", "ValueError: a: bad"),
                            "========= Invalid __global__ read of size 4 bytes\n"
                            "=========     at matmul_kernel+0x10 in x.py:1\n=========\n"
                            + _end("p3.lab02", "triton matmul", "ok"))
    r = S.parse_log(text, OURS)
    assert r["variants"]["p3.lab02:triton matmul"]["errors"] == 2   # one inside, one late but named
    assert not r["outside"]
    text = CLEAN.replace("hello from the worker", "") + "\n========= Invalid __global__ read of size 4 bytes\n" \
        "=========     at some_other_kernel+0x10\n========= ERROR SUMMARY: 1 error"
    r = S.parse_log(text, OURS)
    assert r["outside"] and "some_other_kernel" in r["outside"][0] and r["parsed_errors"] == 1


def test_parse_racecheck_counts_errors_not_warnings():
    r = S.parse_log(RACECHECK, OURS)
    row = r["variants"]["p2.lab06:cuda 05 unrolled last warp"]
    assert row["errors"] == 1 and row["warnings"] == 1
    assert row["kernels"] == {"reduce_05_unroll_last_warp": 1}
    assert r["variants"]["p2.lab06:cuda 06 warp shuffle"]["errors"] == 0
    assert r["summary_errors"] == 1 == r["parsed_errors"]


def test_parse_initcheck_and_synccheck():
    r = S.parse_log(INITCHECK, OURS)
    assert r["variants"]["p1.lab02:cuda 03 float4"]["errors"] == 1
    assert r["variants"]["p1.lab02:cuda 03 float4"]["checks_failed"] == 1
    assert r["library"] == {"cupy_copy__float32_float32": 1}
    r = S.parse_log(SYNCCHECK, OURS)
    row = r["variants"]["p2.lab03:cuda 02 shfl"]
    assert row["errors"] == 2 and row["kernels"] == {"scan_02_shfl": 2}     # new and old location formats


def test_parse_clean_log():
    r = S.parse_log(CLEAN)
    assert r["summary_errors"] == 0 and r["parsed_errors"] == 0
    assert r["variants"]["a:v"] == {"launches": 1, "errors": 0, "warnings": 0, "exceptions": [], "kernels": {},
                                    "impl": "cuda", "checks_failed": 0}


def test_table_and_results_files(tmp_path):
    items = [{"lab": "p2.lab08", "variant": "cuda 01 naive", "impl": "cuda", "size": 5, "dtype": "float32"},
             {"lab": "p2.lab08", "variant": "cuda 02 coalesced", "impl": "cuda", "size": 5, "dtype": "float32"}]
    results = {"memcheck": {"returncode": 0, "timed_out": False, "seconds": 1.0, "finished": True,
                            "parsed": S.parse_log(MEMCHECK, OURS)}}
    rows = S.table_rows(results, items, ["memcheck", "racecheck"])
    assert rows[0]["memcheck"] == "2 (1 runs)" and rows[0]["racecheck"] == "not run"
    assert rows[-2]["kernel"] == S.LIBRARY and rows[-2]["memcheck"] == "1"
    j, m = S.write_results(results, items, ["memcheck"], str(tmp_path), "python -m tools.sanitize")
    text = open(m).read()
    assert "python -m tools.sanitize" in text and "| lab08:cuda 01 naive | cuda | 2 (1 runs) |" in text
    assert S.our_errors(results) == 3      # two in sgemm_01, one late in matmul_kernel


def test_plan_covers_every_variant_that_is_ours_and_no_peer():
    labs = S.lab_modules()
    items = S.plan(labs)
    planned = {(i["lab"], i["variant"]) for i in items}
    for qual, mod in labs:
        for v in getattr(mod, "VARIANTS", []):
            assert (qual, v.name) in planned, f"{qual}: {v.name} is not sanitized"
        for p in getattr(mod, "PEERS", []):
            assert (qual, p.name) not in planned
    assert all(S._cost(i["size"]) <= S.MAX_COST for i in items)
    names = S.our_kernel_names(labs)
    assert {"matmul_kernel", "add_kernel"} <= names and any(n.startswith("sgemm_") for n in names)


def test_sanitize_cases_prefers_lab_attribute():
    class Lab:
        SANITIZE_CASES = [(3, "float32"), (5, "float16")]
        CHECK_CASES = [(1, "float32")]

    from common.lab import Variant

    v = Variant("x", lambda *a, out=None: out, "cuda", dtypes=("float16",))
    assert S.sanitize_cases(Lab, v) == [(5, "float16")]


def test_cli_dry_run_and_help():
    res = subprocess.run([sys.executable, "-m", "tools.sanitize", "--dry-run", "--labs", "vector_add",
                          "--tools", "memcheck,racecheck"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert "lab02_vector_add" in res.stdout and "--tool memcheck" in res.stdout and "--tool racecheck" in res.stdout
    assert "--tool initcheck" not in res.stdout
    res = subprocess.run([sys.executable, "-m", "tools.sanitize", "--help"], capture_output=True, text=True,
                         timeout=60)
    assert res.returncode == 0 and "--dry-run" in res.stdout


@pytest.mark.skipif(device.has_gpu(), reason="checks the no-GPU exit")
def test_cli_without_gpu_says_so_and_exits_2():
    res = subprocess.run([sys.executable, "-m", "tools.sanitize"], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    out = (res.stdout + res.stderr).strip()
    assert "needs a CUDA GPU" in out and "Traceback" not in out and len(out.splitlines()) == 1


def test_worker_markers_parse_end_to_end():
    """The worker without the sanitizer (on the CPU its Triton variants run in the interpreter, the CUDA C ones are
    skipped): its markers parse into one row per variant with the runs counted and nothing raised."""
    res = subprocess.run([sys.executable, "-m", "tools.sanitize", "--worker", "--tool", "memcheck", "--labs",
                          "lab02_vector_add"], capture_output=True, text=True, timeout=240)
    assert res.returncode == 0, res.stderr[-2000:]
    parsed = S.parse_log(res.stdout + "\n========= ERROR SUMMARY: 0 errors\n")
    key = "phase1_architecture.lab02_vector_add:triton"
    assert parsed["variants"][key]["launches"] >= 1, res.stdout[-2000:]
    assert parsed["variants"][key]["exceptions"] == [] and parsed["variants"][key]["checks_failed"] == 0
    assert parsed["summary_errors"] == 0 == parsed["parsed_errors"]
    if not device.has_gpu():
        assert f"{M} SKIP\tphase1_architecture.lab02_vector_add\tcuda 01" in res.stdout


def test_parse_racecheck_summary_line():
    """racecheck closes with 'RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)', not ERROR SUMMARY; on
    the H200 the first sweep's parser missed it (its racecheck total read None). Errors count, warnings do not."""
    clean = CLEAN.replace("========= ERROR SUMMARY: 0 errors",
                          "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)")
    assert S.parse_log(clean, OURS)["summary_errors"] == 0
    two = CLEAN.replace("========= ERROR SUMMARY: 0 errors",
                        "========= RACECHECK SUMMARY: 3 hazards displayed (2 errors, 1 warning)")
    assert S.parse_log(two, OURS)["summary_errors"] == 2


def test_a_labs_extras_are_planned_and_run_like_variants(monkeypatch, capsys):
    """Kernels that are not a lab's variants (lab 4.6's Hopper backward rungs) come from its sanitize_extras module:
    planned after the variants, each prepared outside the markers, run inside, judged after; one that cannot run here
    is a SKIP with its reason, a wrong one an END with its mismatch."""
    from phase4_optimization.lab06_attention import hopper_bwd as hb

    ex = S.extras("phase4_optimization.lab06_attention")
    assert [e.name.split()[3] for e in ex] == [*hb.RUNGS, "09", "11", "12"] and all(e.impl == "cuda" for e in ex)
    assert ex[-1].case[5] and ex[-1].name.endswith(", causal")
    items = S.plan(S.lab_modules(only=["lab06_attention"]))
    assert [i["variant"] for i in items if i.get("extra")] == [e.name for e in ex]
    assert S.extras("phase1_architecture.lab02_vector_add") == []

    calls = []

    class Fake:
        name, impl, size, dtype = "fake", "cuda", (3,), "float32"

        def __init__(self, ok, right):
            self.ok, self.right = ok, right

        def available(self):
            return self.ok, "" if self.ok else "no such GPU"

        def prepare(self, seed):
            calls.append("prepare")
            return {"seed": seed}

        def run(self, state):
            calls.append("run")

        def check(self, state):
            return self.right, "" if self.right else "dq: 3/10 wrong"

    it = {"lab": "lab", "size": (3,), "dtype": "float32"}
    for fake, want in ((Fake(False, True), "SKIP\tlab\tfake\tno such GPU"), (Fake(True, True), "END\tlab\tfake\tok"),
                       (Fake(True, False), "END\tlab\tfake\tmismatch: dq: 3/10 wrong")):
        S._run_item(S._ExtraTarget(fake), it, 0, 0.0)
        out = capsys.readouterr().out
        assert want in out, out
        assert ("BEGIN" in out) == fake.ok
    assert calls == ["prepare", "run", "prepare", "run"]


def test_variants_narrows_the_plan_and_reaches_the_workers():
    """--variants SUBSTR keeps the variants and extras whose name contains it - lab 4.6's Hopper backward rungs alone,
    say, for racecheck, which is slow on the forward's kernels - and the worker's command line carries it."""
    items = S.plan(S.lab_modules(only=["lab06_attention"]), ["lab06_attention"], ["hopper bwd"])
    assert items and all("hopper bwd" in i["variant"] and i.get("extra") for i in items)
    everything = S.plan(S.lab_modules(only=["lab06_attention"]), ["lab06_attention"])
    assert len(everything) > len(items)
    cmd = S.sanitizer_command("compute-sanitizer", "racecheck", ["attention"], ["hopper bwd"])
    assert cmd[-4:] == ["--labs", "attention", "--variants", "hopper bwd"]
