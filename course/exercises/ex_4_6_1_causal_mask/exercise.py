"""Exercise 4.6.1 - a flash-attention forward whose causal mask is one key off: find it and fix it (Triton, run in
the interpreter without a GPU, against a float64 reference on ragged sizes)."""
ID = "4.6.1"
TITLE = "Fix the causal mask of a flash-attention forward (one key off)"
TIER = "cpu"
FILE = "flash_fwd.py"
# the starting point: the solution with the mask one key off (j < i), under this docstring; exercise 4.6.2 starts
# from the solution
TASK = """\
Exercise 4.6.1: a flash-attention forward whose causal output is wrong; the non-causal output is right.

q, k, v, o are (B*H, S, D) fp16 tensors, contiguous. One program owns BLOCK_M query rows of one head and streams the
keys past them in tiles of BLOCK_N with an online softmax: a running row max m_i and sum l_i, the accumulator
rescaled by 2^(m_old - m_new) whenever the max grows (lab 4.6's attn_fwd_kernel, without its unmasked fast path).
Causal attention: query i attends keys 0 .. i. Find the bug and fix it; `flash_forward` below is the wrapper the
checker calls.
"""
BREAK = [("<= offs_m[:, None])            # query i attends keys 0 .. i", "< offs_m[:, None])")]


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
                              "the mask is the one place that says so")
    return Verdict(True, f"right on all {len(CASES)} cases, causal and not: query i keeps keys j <= i (its own key "
                         "too, so row 0 always has one key and never divides 0 by 0), and the ragged last tile is "
                         "masked by S")
