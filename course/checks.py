"""What exercise checkers share: load the learner's file, run a kernel on awkward sizes against a float64 reference,
read a CUDA C file's compile report, run a CUDA C kernel on the GPU. Every function returns a Verdict or raises
nothing the learner has to decode: a file that does not import or compile is an answer too, a wrong one.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import sys
import tempfile

import numpy as np

from course.exercise import ROOT, Verdict

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def load_module(path: str, tag: str):
    """The learner's Python file as a module (a fresh one per path), or a Verdict saying why it would not load."""
    name = f"course_answer_{tag}_{abs(hash(os.path.abspath(path)))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except Exception as e:  # noqa: BLE001 - a syntax error is a wrong answer, said plainly
        return Verdict(False, f"{os.path.basename(path)} does not load: {type(e).__name__}: {str(e)[:200]}")


def compare(out, ref, dtype: str, what: str, tol=None) -> Verdict | None:
    """None when `out` matches the float64 `ref` (common.check's rule), else a Verdict that names the case."""
    from common import check

    c = check.compare(out, ref, dtype, tol)
    if c.ok:
        return None
    hint = " (elements left NaN were never written)" if "non-finite" in c.message else ""
    return Verdict(False, f"{what}: {c.message}{hint}")


def run_cases(cases, run, reference, dtype: str = "float32", tol=None) -> Verdict | None:
    """For each case: run(case) -> (output, inputs as NumPy); compare with reference(*inputs). None when all match,
    else the first wrong case's Verdict. An exception in run() is a wrong answer with its message."""
    for case in cases:
        try:
            out, host_inputs = run(case)
        except Exception as e:  # noqa: BLE001
            return Verdict(False, f"{case}: the kernel failed ({type(e).__name__}: {str(e)[:160]}); in the "
                                  "interpreter an access past the end of an array raises - on a GPU it would read or "
                                  "write memory that is not the array's")
        bad = compare(out, reference(*[np.asarray(x, np.float64) for x in host_inputs]), dtype, str(case), tol)
        if bad is not None:
            return bad
    return None


@contextlib.contextmanager
def _with_headers(path: str):
    """A temporary copy of a learner's .cu file (it may #include the course's headers: common/cuda is on the
    include path of every compile), removed once compiled."""
    d = tempfile.mkdtemp(prefix="course-ex-")
    try:
        dst = os.path.join(d, os.path.basename(path))
        shutil.copyfile(path, dst)
        yield dst
    finally:
        shutil.rmtree(d, ignore_errors=True)


def compile_report(path: str, arch: str = "sm_90", defines: dict | None = None):
    """The NVRTC compile report of the learner's .cu file, or a Verdict saying why it did not compile."""
    from common import cuda

    try:
        with _with_headers(path) as src:
            return cuda.compile_report(src, arch, defines=defines)
    except cuda.CompileError as e:
        lines = [ln for ln in str(e).splitlines() if "error" in ln.lower()][:3]
        return Verdict(False, "it does not compile: " + (" | ".join(lines) or str(e)[:300]))


def gpu_kernel(path: str, name: str, defines: dict | None = None):
    """One kernel of the learner's .cu file, compiled for this GPU, or a Verdict saying why not."""
    from common import cuda

    try:
        with _with_headers(path) as src:
            return cuda.get_kernel(src, name, defines=defines)
    except Exception as e:  # noqa: BLE001 - a compile error or a missing kernel is a wrong answer
        return Verdict(False, f"kernel {name}: {type(e).__name__}: {str(e)[:300]}")
