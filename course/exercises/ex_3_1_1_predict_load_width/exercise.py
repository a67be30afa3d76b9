"""Exercise 3.1.1 - predict the width and number of the vector add's loads from BLOCK, num_warps and n % 16, checked
against what Triton compiles for sm_90 ahead of time (no GPU needed)."""
import os

from common.i18n import tr

ID = "3.1.1"
TITLE = "Predict the load width Triton generates (BLOCK, num_warps, n % 16), checked against the compiler"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase3.py.
HINTS = [
    "First find how many consecutive floats each thread holds: BLOCK / (32 x num_warps). That caps the width of one "
    "load: 1 float is 4 bytes, 2 are 8, 4 or more allow 16.",
    "A vector load is all or nothing under its mask, so Triton widens a load only where it can prove offs < n is the "
    "same for every float of the vector. n known divisible by 16 proves it; with an odd n each float gets its own "
    "4-byte load and its own mask bit.",
    "Per case: bytes per load = 4 x min(4, floats per thread) when n is known divisible by 16, else 4; loads per "
    "thread per array = floats per thread x 4 / bytes per load.",
]
WIDTH = {"b32": 4, "v2.b32": 8, "v4.b32": 16}     # PTX ld.global.<...> -> bytes per load instruction


def compiled_loads(block: int, num_warps: int, n_div16: bool) -> tuple[int, int]:
    """(bytes per load, loads per thread per input array) of lab 1.2's add_kernel as a launch with 16-byte aligned
    pointers (and n divisible by 16, or not) compiles it for sm_90: read off the PTX."""
    from common.triton_support import aot, ptx_memory_ops
    from phase3_triton.lab01_programming_model import bench as lab31

    k = aot(lab31.va.add_kernel, lab31.ADD_SIG, {"BLOCK": block}, cc=90, num_warps=num_warps,
            divisible_by_16=("a_ptr", "b_ptr", "c_ptr") + (("n",) if n_div16 else ()))
    loads = {op[len("ld.global."):]: n for op, n in ptx_memory_ops(k.asm["ptx"]).items() if op.startswith("ld.")}
    if len(loads) != 1 or next(iter(loads)) not in WIDTH:
        raise RuntimeError(f"unexpected loads in the PTX: {loads}")   # a change in Triton, not the learner's fault
    op, count = next(iter(loads.items()))
    return WIDTH[op], count // 2                    # two input arrays, a and b, loaded alike


def check(path):
    from course.checks import load_module
    from course.exercise import Verdict

    mod = load_module(path, "ex311")
    if isinstance(mod, Verdict):
        return mod
    answers = getattr(mod, "ANSWERS", None)
    start = load_module(os.path.join(os.path.dirname(os.path.abspath(__file__)), "start", FILE), "ex311s").ANSWERS
    if not isinstance(answers, dict) or set(answers) != set(start):
        return Verdict(False, tr("keep the five cases of the starting point as keys of ANSWERS: {keys}",
                                 keys=sorted(start)))
    from course.checks import off

    wrong = []
    for (block, warps, div), said in sorted(answers.items()):
        n_text = "n % 16 == 0" if div else tr("n odd")
        what = tr("BLOCK={block}, num_warps={warps}, {n_text}", block=block, warps=warps, n_text=n_text)
        said = tuple(said) if isinstance(said, (tuple, list)) else (said,)
        if len(said) != 2 or None in said:
            wrong.append(tr("{what}: not answered yet (bytes per load, loads per array per thread)", what=what))
            continue
        try:
            got = compiled_loads(block, warps, div)
        except Exception as e:  # noqa: BLE001 - the compiler, not the answer: say so plainly
            return Verdict(False, tr("could not compile the vector add ahead of time here ({error}: {detail}); lab "
                                     "3.1's compile report needs the same", error=type(e).__name__,
                                     detail=str(e)[:200]))
        if said[0] != got[0]:
            why = (tr("a thread holds BLOCK / (32 x num_warps) consecutive floats, and one load moves at most 16 "
                      "bytes of them") if div else
                   tr("with n odd, can any group of 4 floats be known to be all in or all out of the mask?"))
            wrong.append(tr("{what}: {width}-byte loads is {off}: {why}", what=what, width=said[0],
                            off=off(said[0], got[0]), why=why))
        elif said[1] != got[1]:
            wrong.append(tr("{what}: {count} loads per array is {off}: the floats a thread holds, over the floats one "
                            "load of that width moves", what=what, count=said[1], off=off(said[1], got[1])))
    if wrong:
        from course.checks import listed

        return Verdict(False, tr("{n} of {total} not yet right: {reasons}", n=len(wrong), total=len(answers),
                                 reasons=listed(wrong[:2])))
    return Verdict(True, tr("all five right: a thread loads its BLOCK / (32 x num_warps) consecutive floats up to 16 "
                            "bytes at a time, and only when n is known divisible by 16 - the mask of a 4-float vector "
                            "must be provably all-true or all-false. A GPU launch learns n % 16 and the pointers' "
                            "alignment from the actual arguments, so the same kernel can load 16 or 4 bytes at a "
                            "time"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('16-byte loads with n odd', [('(1024, 4, False): (4, 8)', '(1024, 4, False): (16, 2)')], 'too high'),
    ('load count per thread, not per array', [('(4096, 8, True): (16, 4)', '(4096, 8, True): (16, 8)')], 'too high'),
]
