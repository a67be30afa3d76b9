"""What phase 2's exercise checkers share: an answers file held to the cases of its starting point, numbers compared
with a relative tolerance; one kernel of a learner's .cu file, from its NVRTC compile report (no GPU) or compiled for
this GPU; and the GPU harness of the broken-kernel exercises (outputs inside NaN guard bands, a float64 reference, a
launch that faults or a file that does not compile said plainly)."""
from __future__ import annotations

import math
import os

import numpy as np

from common.i18n import tr


def answers(path: str, tag: str, exercise: str, names: tuple[str, ...], file: str = "answers.py"):
    """The learner's answers module, or a Verdict saying why it cannot be checked: it does not load, or one of the
    dicts `names` has other keys than the starting point next to `exercise` (the exercise.py) has: the cases are the
    exercise, the values the answer."""
    from course.checks import load_module
    from course.exercise import Verdict

    mod = load_module(path, tag)
    if isinstance(mod, Verdict):
        return mod
    start = load_module(os.path.join(os.path.dirname(os.path.abspath(exercise)), "start", file), tag + "_start")
    for name in names:
        got, want = getattr(mod, name, None), getattr(start, name)
        if isinstance(want, dict) and (not isinstance(got, dict) or set(got) != set(want)):
            return Verdict(False, tr("{file} must keep {name} as a dict with the starting point's cases as its keys: "
                                     "{keys}", file=os.path.basename(path), name=name, keys=sorted(want, key=str)))
        if not isinstance(want, dict) and got is None and not hasattr(mod, name):
            return Verdict(False, tr("{file} must define {name}, as the starting point does",
                                     file=os.path.basename(path), name=name))
    return mod


def close(said, want: float, rel: float = 0.02) -> bool:
    """`said` is a number within `rel` of `want` (a right answer rounded by hand passes; a wrong formula does not)."""
    if isinstance(said, bool) or not isinstance(said, (int, float, np.integer, np.floating)):
        return False
    return math.isfinite(float(said)) and abs(float(said) - want) <= rel * abs(want)


def not_yet(wrong: list[str], total: int, shown: int = 2) -> str:
    """'2 of 5 not yet right: ...; ...' - the first `shown` wrong answers, each with its reason."""
    from course.checks import listed

    return tr("{n} of {total} not yet right: {reasons}", n=len(wrong), total=total, reasons=listed(wrong[:shown]))


# ---------------------------------------------------------------------------------------------------------------------
# One kernel of the learner's .cu file
# ---------------------------------------------------------------------------------------------------------------------
def compiled(path: str, kernel: str, arch: str = "sm_90"):
    """The NVRTC compile report's entry for `kernel` of the file at `path` (KernelResources), or a Verdict: the file
    does not compile, or it has no such kernel."""
    from course.checks import compile_report
    from course.exercise import Verdict

    rep = compile_report(path, arch)
    if isinstance(rep, Verdict):
        return Verdict(False, f"{os.path.basename(path)}: {rep.why}")
    if kernel not in rep.kernels:
        return Verdict(False, tr("{file} must define extern \"C\" __global__ void {kernel}(...), as the starting "
                                 "point does; it defines {kernels}", file=os.path.basename(path), kernel=kernel,
                                 kernels=sorted(rep.kernels) or tr("no kernel")))
    return rep[kernel]


def gpu_kernel(path: str, kernel: str, signature: str):
    """`kernel` of the learner's file compiled for this GPU, or a Verdict (no GPU, or it does not compile, or the
    kernel is missing; `signature` is what the starting point declares, for the message)."""
    from common import device
    from course.checks import gpu_kernel as compile_for_gpu
    from course.exercise import Verdict

    if not device.has_gpu():
        return Verdict(False, tr("this exercise runs its kernel, which needs a GPU ({why})",
                                 why=tr(device.no_gpu_reason())))
    k = compile_for_gpu(path, kernel)
    if isinstance(k, Verdict):
        return Verdict(False, tr("{file} must compile and define {signature}: {why}", file=os.path.basename(path),
                                 signature=tr(signature), why=k.why))
    return k


def launched(what: str, run) -> "object | None":
    """None when run() launched and finished (the stream is synchronized, so a fault surfaces here), else a Verdict."""
    from course.exercise import Verdict

    try:
        run()
        import cupy

        cupy.cuda.get_current_stream().synchronize()
    except Exception as e:  # noqa: BLE001 - a kernel that faults is a wrong answer, said plainly
        return Verdict(False, tr("{what}: the kernel failed ({error}: {detail}); an index past the end of an array "
                                 "is the usual cause", what=what, error=type(e).__name__, detail=str(e)[:160]))
    return None


def guarded_out(shape, like):
    """An fp32 output of `shape` filled with NaN, inside NaN guard bands (a write past either end is seen)."""
    from common import check

    return check.guarded(shape, "float32", like)


def outside(out) -> str:
    """'' when nothing was written into the guard bands around `out`, else what was."""
    from common import check

    return check.guard_damage(out)


def run_case(what: str, launch, x, out_shape):
    """launch(x, out) with `out` a NaN-poisoned fp32 array of `out_shape` between guard bands: (the output as NumPy,
    None), or (None, a Verdict) when the kernel faulted or wrote outside its output."""
    from common import arrays
    from course.exercise import Verdict

    out = guarded_out(out_shape, x)
    failed = launched(what, lambda: launch(x, out))
    if failed is not None:
        return None, failed
    got = arrays.to_numpy(out)
    spill = outside(out)
    if spill:
        from course.checks import said

        return None, Verdict(False, f"{what}: {said(spill)}")
    return got, None


def _first_wrong(kern, cases, judge):
    """judge(kern, case) for every case: the first Verdict it returns, or None when every case is right."""
    for case in cases:
        bad = judge(kern, case)
        if bad is not None:
            return bad
    return None


def not_run(what: str) -> str:
    """What a CPU could not check, and why: 'not run: no GPU (...), so <what> is unchecked: run this again on one'."""
    from common import device

    return tr("not run: no GPU here ({why}), so {what} is unchecked: run this again on a machine with one",
              why=tr(device.no_gpu_reason()), what=what)


def compiles_only(path: str, kernel: str, what: str):
    """On a machine without a GPU: `kernel` of the learner's file compiled by NVRTC for sm_90 - a Verdict that says it
    does not compile, or one that says it does and that `what` was not checked (Verdict.not_run)."""
    from course.exercise import Verdict

    k = compiled(path, kernel)
    if isinstance(k, Verdict):
        return k
    return Verdict(True, tr("checked on this CPU: {file} compiles for sm_90 ({kernel}: {regs} registers, {spills} "
                            "bytes spilled)", file=os.path.basename(path), kernel=kernel, regs=k.registers,
                            spills=k.spills), not_run=not_run(what))


def gpu_check(path: str, kernel: str, signature: str, cases, judge, right: str):
    """A GPU-tier CUDA C exercise: `kernel` of the learner's file compiled for this GPU, then judge(kern, case) on every
    case (None when right, else a Verdict); `right` words a pass.
    Without a GPU: compiled for sm_90 only, and said so."""
    from common import device
    from course.exercise import Verdict

    if not device.has_gpu():
        return compiles_only(path, kernel, tr("whether the kernel is right on every case"))

    kern = gpu_kernel(path, kernel, signature)
    if isinstance(kern, Verdict):
        return kern
    bad = _first_wrong(kern, cases, judge)
    return bad if bad is not None else Verdict(True, right)


def compiled_then_run(path: str, kernel: str, signature: str, facts, cases, judge, right):
    """A CPU-tier CUDA C exercise: the compile report first - facts(k) says what is still wrong, or None - then, on a
    machine with a GPU, judge(kern, case) on every case, as gpu_check. `right(k)` words a pass."""
    from common import device
    from course.exercise import Verdict

    k = compiled(path, kernel)
    if isinstance(k, Verdict):
        return k
    wrong = facts(k)
    if wrong:
        return Verdict(False, wrong)
    if not device.has_gpu():
        return Verdict(True, tr("checked on this CPU: it compiles for sm_90, and {right}", right=right(k)),
                       not_run=not_run(tr("whether it is right on every length and grid (the tail, the last "
                                          "float4)")))
    return gpu_check(path, kernel, signature, cases, judge, tr("{right}, and right on every case on this GPU",
                                                               right=right(k)))


# ---------------------------------------------------------------------------------------------------------------------
# The H200's measurements, read from the committed JSON (the source of every measured figure a message quotes)
# ---------------------------------------------------------------------------------------------------------------------
def h200(lab: str) -> dict:
    """results/h200/<lab>.json as a dict, or {} when it is not there."""
    import json

    from course.exercise import ROOT

    p = os.path.join(ROOT, "results", "h200", f"{lab}.json")
    if not os.path.exists(p):
        return {}
    with open(p, encoding="utf-8") as f:
        return json.load(f)


def h200_row(lab: str, **match) -> dict:
    """The first row of results/h200/<lab>.json whose fields equal `match`, or {}."""
    for r in h200(lab).get("rows", []):
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return {}
