"""Exercise 4.6.1 - a flash-attention forward whose causal mask is one key off: find it and fix it (Triton, run in
the interpreter without a GPU, against a float64 reference on ragged sizes)."""
ID = "4.6.1"
TITLE = "Fix the causal mask of a flash-attention forward (one key off)"
TIER = "cpu"
FILE = "flash_fwd.py"


def check(path):
    from common import lab
    from course.exercise import Verdict
    from course.exercises.phase4_checks import CASES, check_attention, kernel_file

    mod = kernel_file(path, "ex461")
    if isinstance(mod, Verdict):
        return mod
    bad = check_attention(mod, lab.where())
    if bad is not None:
        return Verdict(False, bad.why + ". A causal query i attends keys 0 .. i - itself included - and no later one; "
                              "the mask is the one place that says so, for the tiles of the diagonal block")
    return Verdict(True, f"right on all {len(CASES)} cases, causal and not: query i keeps keys j <= i (its own key "
                         "too, so row 0 always has one key and never divides 0 by 0), the loop stops after the "
                         "diagonal block, and ragged tiles are masked by S")
