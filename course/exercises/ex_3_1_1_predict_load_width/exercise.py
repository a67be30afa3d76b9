"""Exercise 3.1.1 - predict the width and number of the vector add's loads from BLOCK, num_warps and n % 16, checked
against what Triton compiles for sm_90 ahead of time (no GPU needed)."""
import os

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
        return Verdict(False, f"keep the five cases of the starting point as keys of ANSWERS: {sorted(start)}")
    wrong = []
    for (block, warps, div), said in sorted(answers.items()):
        try:
            got = compiled_loads(block, warps, div)
        except Exception as e:  # noqa: BLE001 - the compiler, not the answer: say so plainly
            return Verdict(False, f"could not compile the vector add ahead of time here ({type(e).__name__}: "
                                  f"{str(e)[:200]}); lab 3.1's compile report needs the same")
        said = tuple(said) if isinstance(said, (tuple, list)) else (said,)
        if said != got:
            per_thread = block // (32 * warps)
            n_text = "n % 16 == 0" if div else "n odd"
            why = f"{block} / (32 x {warps}) = {per_thread} float{'s' if per_thread > 1 else ''} a thread"
            if per_thread > 1:
                why += (f", {min(4, per_thread)} per load (at most 16 bytes)" if div else
                        ", but with n odd no 4-float group is known to be all in or all out of the mask, so one "
                        "float at a time")
            wrong.append(f"BLOCK={block}, num_warps={warps}, {n_text}: you said {tuple(said)}, the compiler made "
                         f"{got[1]} x {got[0]}-byte loads per array ({why})")
    if wrong:
        return Verdict(False, f"{len(wrong)} of {len(answers)} not yet right: " + "; ".join(wrong[:2]))
    return Verdict(True, "all five right: a thread loads its BLOCK / (32 x num_warps) consecutive floats up to 16 "
                         "bytes at a time, and only when n is known divisible by 16 - the mask of a 4-float vector "
                         "must be provably all-true or all-false. A GPU launch learns n % 16 and the pointers' "
                         "alignment from the actual arguments, so the same kernel can load 16 or 4 bytes at a time")
