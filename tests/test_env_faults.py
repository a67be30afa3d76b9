"""Environment faults give one clear sentence and what to do, never a traceback wall; the CPU mode goes on where it can.

  no GPU                 CPU mode: Triton in the interpreter, CUDA C compile reports; asking for a GPU anyway
                         (device.require_gpu) prints one sentence
  driver too old         (cudaErrorInsufficientDriver) treated as no GPU, the reason says so
  NVRTC missing          the interpreter checks still run, then one sentence naming the wheel to install
  Triton missing         one sentence naming the package to install
The faults are simulated: COURSE_FORCE_CPU=1, a monkeypatched CuPy runtime, and a sitecustomize.py on PYTHONPATH that
hides a module (sys.modules[name] = None) or makes NVRTC fail to load, for the real CLI entry points.
"""
import os
import subprocess
import sys
import textwrap

import pytest

from common import device

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SITECUSTOMIZE = textwrap.dedent('''
    import os, sys
    for m in filter(None, os.environ.get("BLOCK_MODULES", "").split(",")):
        sys.modules[m] = None
    if os.environ.get("BREAK_NVRTC") == "1":
        from cupy_backends.cuda.libs import nvrtc as _n

        def _gone(*a, **k):
            raise RuntimeError("CuPy failed to load libnvrtc.so.13: OSError: libnvrtc.so.13: cannot open shared "
                               "object file: No such file or directory")

        for _name in ("getVersion", "createProgram", "compileProgram"):
            setattr(_n, _name, _gone)
''')


@pytest.fixture(scope="module")
def faulty_env(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    (d / "sitecustomize.py").write_text(SITECUSTOMIZE)

    def env(**extra):
        e = dict(os.environ)
        e["PYTHONPATH"] = os.pathsep.join([str(d), ROOT] + ([e["PYTHONPATH"]] if e.get("PYTHONPATH") else []))
        e.pop("COURSE_TRACEBACK", None)
        e.update(extra)
        return e

    return env


def _run(args, env, timeout=240):
    return subprocess.run([sys.executable] + args, capture_output=True, text=True, timeout=timeout, cwd=ROOT, env=env)


def _one_sentence(stderr: str, *needles):
    err = stderr.strip()
    assert "Traceback" not in err, f"a traceback instead of one sentence:\n{err[-2000:]}"
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.lstrip().startswith(("warn", "Warn"))]
    assert 1 <= len(lines) <= 2, f"expected one sentence (and the COURSE_TRACEBACK hint), got:\n{err[-2000:]}"
    assert lines[0].startswith("error: ")
    for n in needles:
        assert n in lines[0], f"{n!r} missing from: {lines[0]}"


def test_no_gpu_require_gpu_is_one_sentence(faulty_env):
    res = _run(["-c", "from common import device; device.require_gpu('timing this kernel')"],
               faulty_env(COURSE_FORCE_CPU="1"), timeout=120)
    assert res.returncode == 1
    _one_sentence(res.stderr, "timing this kernel needs a CUDA GPU", "COURSE_FORCE_CPU=1", "interpreter")
    # and the traceback is there on request
    res = _run(["-c", "from common import device; device.require_gpu('x')"],
               faulty_env(COURSE_FORCE_CPU="1", COURSE_TRACEBACK="1"), timeout=120)
    assert "Traceback" in res.stderr and "GPUUnavailable" in res.stderr


def test_driver_too_old_is_no_gpu_with_the_reason(monkeypatch):
    import cupy
    from cupy_backends.cuda.api import runtime as rt

    def too_old():
        raise rt.CUDARuntimeError(35)    # cudaErrorInsufficientDriver

    monkeypatch.setattr(cupy.cuda.runtime, "getDeviceCount", too_old)
    monkeypatch.delenv("COURSE_FORCE_CPU", raising=False)
    device._probe.cache_clear()
    try:
        assert not device.has_gpu()
        why = device.no_gpu_reason()
        assert "InsufficientDriver" in why and "older than this CuPy wheel needs" in why
        with pytest.raises(device.GPUUnavailable) as e:
            device.require_gpu("this lab")
        assert "needs a CUDA GPU" in str(e.value) and "interpreter" in str(e.value)
    finally:
        device._probe.cache_clear()


def test_hook_leaves_other_exceptions_alone(faulty_env):
    res = _run(["-c", "from common import device; raise KeyError('boom')"], faulty_env(), timeout=120)
    assert res.returncode == 1 and "Traceback" in res.stderr and "KeyError" in res.stderr


@pytest.mark.skipif(device.has_gpu(), reason="the CPU mode's behaviour without NVRTC")
def test_nvrtc_missing_interpreter_still_runs_then_one_sentence(faulty_env):
    res = _run(["-m", "phase1_architecture.lab02_vector_add", "--quick"], faulty_env(BREAK_NVRTC="1"))
    assert res.returncode == 1
    assert "triton" in res.stdout and "ok (" in res.stdout, "the Triton checks should still run without NVRTC"
    _one_sentence(res.stderr, "NVRTC", "pip install 'nvidia-cuda-nvrtc")


def test_nvrtc_missing_compile_report_raises_tool_missing(monkeypatch):
    from cupy_backends.cuda.libs import nvrtc

    from common import cuda

    def gone(*a, **k):
        raise RuntimeError("CuPy failed to load libnvrtc.so.13")

    monkeypatch.setattr(nvrtc, "getVersion", gone)
    with pytest.raises(cuda.ToolMissing, match="nvidia-cuda-nvrtc"):
        cuda._nvrtc()
    assert cuda.nvrtc_version() == "missing"


def test_triton_missing_is_one_sentence(faulty_env):
    res = _run(["-m", "phase1_architecture.lab02_vector_add", "--quick"], faulty_env(BLOCK_MODULES="triton"),
               timeout=120)
    assert res.returncode == 1
    _one_sentence(res.stderr, "Triton could not be imported", "make setup", ".venv/bin/python", "pip install triton")


def test_numpy_missing_is_one_sentence_naming_the_venv(faulty_env):
    """Running the course with a Python that lacks its packages (a system python3 instead of .venv) says what to do."""
    res = _run(["-m", "phase1_architecture", "--quick"], faulty_env(BLOCK_MODULES="numpy"), timeout=120)
    assert res.returncode != 0
    _one_sentence(res.stderr, "NumPy is not installed", "make setup", ".venv/bin/python")


def test_sanitize_without_gpu_is_one_sentence(faulty_env):
    res = _run(["-m", "tools.sanitize"], faulty_env(COURSE_FORCE_CPU="1"), timeout=120)
    assert res.returncode == 2
    out = (res.stdout + res.stderr).strip()
    assert "Traceback" not in out and "needs a CUDA GPU" in out and "COURSE_FORCE_CPU=1" in out
