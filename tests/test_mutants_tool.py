"""tools/mutants.py, the mutation check: its list is current with the code (every text to change is in its file
exactly once, every guard test file exists), it has at least 30 realistic mutants with both tiers and at least 20
CUDA C ones spread over the labs, every CUDA C mutant compiles with NVRTC to code different from the original (a
wrong program, not a compile error or an edit in code the build leaves out; one NVRTC program per mutant, PTX only
and unoptimized: about 5 s of compiling in all on the CPU machine, split by file over the workers), the compile
check itself fails on a mutant that does not compile or changes nothing, the tool lists them and explains its GPU
run without a GPU, and it judges a mutant end to end (a planted bug is killed by the tests that guard it)."""
import os
import subprocess
import sys

import pytest

from tools import mutants
from tools.mutant_list import MUTANTS, Mutant

CU_FILES = sorted({m.path for m in MUTANTS if m.tier == "gpu"})


def test_the_list_is_current_and_large_enough():
    assert mutants.check_mutants() == []
    assert len(MUTANTS) >= 30
    assert {m.tier for m in MUTANTS} == {"cpu", "gpu"}
    assert len({m.path.split("/")[1] for m in MUTANTS}) >= 12, "mutants spread over the labs"
    cuda = [m for m in MUTANTS if m.tier == "gpu"]
    assert len(cuda) >= 20 and all(m.path.endswith(".cu") for m in cuda)
    assert len({os.path.dirname(m.path) for m in cuda}) >= 12, "CUDA C mutants spread over the labs"
    assert all(m.name.startswith("CUDA ") for m in cuda), "--only CUDA picks the GPU half"


@pytest.mark.parametrize("path", CU_FILES)
def test_every_cuda_mutant_compiles_to_different_code(path):
    assert mutants.compile_problems([m for m in MUTANTS if m.path == path]) == []


def test_the_compile_check_can_fail():
    vadd = "phase1_architecture/lab02_vector_add/kernels.cu"
    broken = Mutant("CUDA broken", vadd, "    if (i < n) {", "    if (i < n {", (), tier="gpu")
    # STREAM defaults to 1: the plain store after #else is not compiled, so changing it changes no code
    dead = Mutant("CUDA dead", vadd, "            c4[k] = r;\n#endif", "            c4[k] = x[u];\n#endif", (),
                  tier="gpu")
    problems = mutants.compile_problems([broken, dead])
    assert len(problems) == 2
    assert "CUDA broken: the mutated" in problems[0] and "does not compile" in problems[0]
    assert "CUDA dead:" in problems[1] and "same code" in problems[1]


def test_list_help_and_usage_errors():
    r = subprocess.run([sys.executable, "-m", "tools.mutants", "--list"], capture_output=True, text=True)
    assert r.returncode == 0 and "causal mask off by one" in r.stdout and "CUDA wgmma" in r.stdout
    r = subprocess.run([sys.executable, "-m", "tools.mutants", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "--tier gpu --json results/" in r.stdout and "--shard" in r.stdout
    for bad in (["--only", "no such mutant"], ["--tier", "cpu", "--shard", "3/2"]):
        r = subprocess.run([sys.executable, "-m", "tools.mutants", *bad], capture_output=True, text=True)
        assert r.returncode == 2, bad


def test_a_planted_bug_is_killed():
    m = next(m for m in MUTANTS if m.name == "vector add: bound off by one")
    scratch = mutants._scratch()
    try:
        r = mutants.judge(m, scratch, timeout=600)
    finally:
        import shutil

        shutil.rmtree(os.path.dirname(scratch), ignore_errors=True)
    assert r["result"].startswith("killed"), r


def test_a_mutant_runs_its_tests_with_its_own_environment(monkeypatch, tmp_path):
    """extra["env"] reaches the tests' process (the Hopper backward's mutants: its bounded-wait build, so that a broken
    barrier phase fails in seconds instead of hanging the GPU), and the file is restored after."""
    import types

    seen = {}

    def fake_run(cmd, cwd, env, **kw):
        seen.update(cmd=cmd, env=env, text=open(os.path.join(cwd, "a.txt")).read())
        return types.SimpleNamespace(stdout="1 passed", stderr="", returncode=0)

    monkeypatch.setattr(mutants.subprocess, "run", fake_run)
    (tmp_path / "a.txt").write_text("x = 1\n")
    m = Mutant("CUDA env", "a.txt", "x = 1", "x = 2", ("t.py",), tier="gpu", extra={"env": {"ATTN_MBAR_TIMEOUT": "1"}})
    r = mutants.judge(m, str(tmp_path), timeout=5)
    assert seen["env"]["ATTN_MBAR_TIMEOUT"] == "1" and seen["text"] == "x = 2\n" and seen["cmd"][-1] == "t.py"
    assert r["result"] == "SURVIVED" and (tmp_path / "a.txt").read_text() == "x = 1\n"
    hb = [m for m in MUTANTS if m.path.endswith("kernels_hopper_bwd.cu")]
    assert len(hb) >= 10 and all(m.extra.get("env") == {"ATTN_MBAR_TIMEOUT": "1"} for m in hb)
