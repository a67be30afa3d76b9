"""Exercise 3.1.1 - predict the width and number of the vector add's loads from BLOCK, num_warps and n % 16, checked
against what Triton compiles for sm_90 ahead of time (no GPU needed)."""
import os

from common.i18n import tr

ID = "3.1.1"
TITLE = "Predict the load width Triton generates (BLOCK, num_warps, n % 16), checked against the compiler"
TIER = "cpu"
FILE = "answers.py"
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
    wrong = []
    for (block, warps, div), said in sorted(answers.items()):
        try:
            got = compiled_loads(block, warps, div)
        except Exception as e:  # noqa: BLE001 - the compiler, not the answer: say so plainly
            return Verdict(False, tr("could not compile the vector add ahead of time here ({error}: {detail}); lab "
                                     "3.1's compile report needs the same", error=type(e).__name__,
                                     detail=str(e)[:200]))
        said = tuple(said) if isinstance(said, (tuple, list)) else (said,)
        if said != got:
            per_thread = block // (32 * warps)
            n_text = "n % 16 == 0" if div else tr("n odd")
            why = (tr("{block} / (32 x {warps}) = {n} floats a thread", block=block, warps=warps, n=per_thread)
                   if per_thread > 1 else
                   tr("{block} / (32 x {warps}) = {n} float a thread", block=block, warps=warps, n=per_thread))
            if per_thread > 1:
                why += (tr(", {n} per load (at most 16 bytes)", n=min(4, per_thread)) if div else
                        tr(", but with n odd no 4-float group is known to be all in or all out of the mask, so one "
                           "float at a time"))
            wrong.append(tr("BLOCK={block}, num_warps={warps}, {n_text}: you said {said}, the compiler made {count} x "
                            "{width}-byte loads per array ({why})", block=block, warps=warps, n_text=n_text,
                            said=tuple(said), count=got[1], width=got[0], why=why))
    if wrong:
        from course.checks import listed

        return Verdict(False, tr("{n} of {total} not yet right: {reasons}", n=len(wrong), total=len(answers),
                                 reasons=listed(wrong[:2])))
    return Verdict(True, tr("all five right: a thread loads its BLOCK / (32 x num_warps) consecutive floats up to 16 "
                            "bytes at a time, and only when n is known divisible by 16 - the mask of a 4-float vector "
                            "must be provably all-true or all-false. A GPU launch learns n % 16 and the pointers' "
                            "alignment from the actual arguments, so the same kernel can load 16 or 4 bytes at a "
                            "time"))
