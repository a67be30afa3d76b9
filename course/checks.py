"""What exercise checkers share: load the learner's file, run a kernel on awkward sizes against a float64 reference,
read a CUDA C file's compile report, run a CUDA C kernel on the GPU. Every function returns a Verdict or raises
nothing the learner has to decode: a file that does not import or compile is an answer too, a wrong one.
"""
from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile

import numpy as np

from course.exercise import ROOT, Verdict

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from common.i18n import korean, tr  # noqa: E402 - after ROOT is on the path


def listed(parts: list[str]) -> str:
    """Several reasons in one verdict: '; '-separated in English; in Korean one a line, each after '  - ' (a Korean
    sentence does not go on after a semicolon)."""
    if korean():
        return "".join("\n  - " + p for p in parts)
    return "; ".join(parts)


def sentences(parts: list[str]) -> str:
    """Clauses of one reason: '; '-separated in English, as sentences ('. ') in Korean."""
    return (". " if korean() else "; ").join(parts)


def both(parts: list[str]) -> str:
    """Names of things that hold together ('registers and warps'): ' and ' in English, ', ' in Korean."""
    return (", " if korean() else " and ").join(parts)


# What common.check prints (Comparison.message, guard_damage), read back into its numbers to be said in Korean; the
# English stays exactly as common.check wrote it. A message of another shape is passed on as it is.
_MISMATCH = re.compile(r"MISMATCH: rel err (?P<rel>\S+) \(limit (?P<limit>\S+)\), (?P<bad>\d+)/(?P<n>\d+) finite "
                       r"elements outside (?P<elem>\S+), max abs (?P<abs>[^;]+)")
_NONFINITE = re.compile(r"; (?P<k>\d+) non-finite outputs \(first at flat index (?P<i>\d+): unwritten\?\)")
_SPECIAL = re.compile(r"; (?P<k>\d+) outputs differ where the reference is NaN/Inf \(first at flat index (?P<i>\d+): "
                      r"reference (?P<ref>\S+), output (?P<out>[^)]+)\)")
_SHAPE = re.compile(r"shape (?P<got>\(.*?\)) != reference shape (?P<want>\(.*?\))$")
_BEFORE = re.compile(r"(?P<k>\d+) element\(s\) before the output's start \(the nearest (?P<d>\d+) before it\)")
_PAST = re.compile(r"(?P<k>\d+) element\(s\) past its end \(the first (?P<d>\d+) after the last element\)")


def said(message: str) -> str:
    """A message of common.check (a comparison, a write outside the output) in the chosen language."""
    if not korean():
        return message
    m = _MISMATCH.match(message)
    if m:
        out = tr("MISMATCH: rel err {rel} (limit {limit}), {bad}/{n} finite elements outside {elem}, max abs {abs}",
                 **m.groupdict())
        for k in _NONFINITE.finditer(message):
            out += tr("; {k} non-finite outputs (first at flat index {i}: unwritten?)", **k.groupdict())
        for k in _SPECIAL.finditer(message):
            out += tr("; {k} outputs differ where the reference is NaN/Inf (first at flat index {i}: reference {ref}, "
                      "output {out})", **k.groupdict())
        return out
    m = _SHAPE.match(message)
    if m:
        return tr("shape {got} != reference shape {want}", **m.groupdict())
    if message.startswith("wrote outside the output: "):
        parts = [tr("{k} element(s) before the output's start (the nearest {d} before it)", **b.groupdict())
                 for b in _BEFORE.finditer(message)]
        parts += [tr("{k} element(s) past its end (the first {d} after the last element)", **a.groupdict())
                  for a in _PAST.finditer(message)]
        both = tr("{before} and {after}", before=parts[0], after=parts[1]) if len(parts) == 2 else "".join(parts)
        return tr("wrote outside the output: {parts}", parts=both)
    return message


def load_module(path: str, tag: str):
    """The learner's Python file as a module (a fresh one per path), or a Verdict saying why it would not load."""
    name = f"course_answer_{tag}_{abs(hash(os.path.abspath(path)))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    except Exception as e:  # noqa: BLE001 - a syntax error is a wrong answer, said plainly
        return Verdict(False, tr("{file} does not load: {error}: {detail}", file=os.path.basename(path),
                                 error=type(e).__name__, detail=str(e)[:200]))


def compare(out, ref, dtype: str, what: str, tol=None) -> Verdict | None:
    """None when `out` matches the float64 `ref` (common.check's rule), else a Verdict that names the case."""
    from common import check

    c = check.compare(out, ref, dtype, tol)
    if c.ok:
        return None
    hint = tr(" (elements left NaN were never written)") if "non-finite" in c.message else ""
    return Verdict(False, f"{what}: {said(c.message)}{hint}")


def run_cases(cases, run, reference, dtype: str = "float32", tol=None, name: str = "the output") -> Verdict | None:
    """For each case: run(case) -> (output, inputs as NumPy); compare with reference(*inputs). None when all match,
    else the first wrong case's Verdict. An exception in run() is a wrong answer with its message; so is a write into
    the guard bands of an output made by guarded_output() (`name` names it)."""
    for case in cases:
        try:
            out, host_inputs = run(case)
        except Exception as e:  # noqa: BLE001
            return Verdict(False, tr("{case}: the kernel failed ({error}: {detail}); in the interpreter an access "
                                     "past the end of an array raises - on a GPU it would read or write memory that is "
                                     "not the array's", case=case, error=type(e).__name__, detail=str(e)[:160]))
        bad = outside_verdict(str(case), {name: out})
        if bad is not None:
            return bad
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
        return does_not_compile(e)


def does_not_compile(e: Exception) -> Verdict:
    """A compile error, said the same way wherever it was found (the compile report, or the GPU's own compile): its
    first three error lines."""
    lines = [ln for ln in str(e).splitlines() if "error" in ln.lower()][:3]
    return Verdict(False, tr("it does not compile: {errors}", errors=" | ".join(lines) or str(e)[:300]))


def gpu_kernel(path: str, name: str, defines: dict | None = None):
    """One kernel of the learner's .cu file, compiled for this GPU, or a Verdict saying why not."""
    from common import cuda

    try:
        with _with_headers(path) as src:
            return cuda.get_kernel(src, name, defines=defines)
    except cuda.CompileError as e:
        return does_not_compile(e)
    except Exception as e:  # noqa: BLE001 - a missing kernel (or any other failure) is a wrong answer
        return Verdict(False, tr("kernel {name}: {error}: {detail}", name=name, error=type(e).__name__,
                                 detail=str(e)[:300]))


# ---------------------------------------------------------------------------------------------------------------------
# Guard bands: every output a checker hands a learner's kernel sits between poisoned bands (common.check.guarded), so
# a write past its end - a grid rounded up without a mask, a <= for a < - is seen and said, never a crash.
# ---------------------------------------------------------------------------------------------------------------------
def guarded_output(shape, dtype: str, like):
    """A poisoned `dtype` output of `shape` between two poisoned guard bands, from the library and place of `like`."""
    from common import check

    return check.guarded(tuple(shape), dtype, like)


def wrote_outside(out, name: str) -> str:
    """'' when nothing was written into the guard bands around the guarded output `out` (which lets go of them), else
    what was, in the learner's words: 'wrote 255 elements past the end of c'."""
    from common import check

    damage = check.guard_damage(out)
    if not damage:
        return ""
    parts = []
    for b in _BEFORE.finditer(damage):
        k = int(b["k"])
        parts.append(tr("wrote 1 element before the start of {name}", name=name) if k == 1 else
                     tr("wrote {k} elements before the start of {name}", k=k, name=name))
    for a in _PAST.finditer(damage):
        k = int(a["k"])
        parts.append(tr("wrote 1 element past the end of {name}", name=name) if k == 1 else
                     tr("wrote {k} elements past the end of {name}", k=k, name=name))
    return both(parts) if parts else said(damage)


def release(*outs) -> None:
    """Let go of the guard bands of guarded outputs that will not be checked (the kernel raised)."""
    from common import check

    for o in outs:
        check.guard_damage(o)


def outside_verdict(what: str, outs: dict) -> Verdict | None:
    """None when no output in `outs` ({name: guarded output}) was written outside, else a Verdict naming the case, what
    was written where, and why it matters (all the outputs' bands are let go)."""
    found = [w for w in (wrote_outside(o, name) for name, o in outs.items()) if w]
    if not found:
        return None
    wrote = listed(found) if len(found) > 1 else found[0]
    return Verdict(False, tr("{what}: {wrote}. A lane past the end stored anyway: on a GPU that memory belongs to "
                             "another array (or to nothing, and the launch faults)", what=what, wrote=wrote))


def off(said, want) -> str:
    """Which way a wrong number is off - 'too high' or 'too low' - without the right value; 'not a number' when
    `said` is none."""
    if isinstance(said, bool) or not isinstance(said, (int, float, np.integer, np.floating)) or said != said:
        return tr("not a number")
    return tr("too high") if float(said) > float(want) else tr("too low")
