"""Exercise 4.6.1 - a flash-attention forward whose causal mask is one key off: find it and fix it (Triton, run in
the interpreter without a GPU, against a float64 reference on ragged sizes)."""
from common.i18n import tr

ID = "4.6.1"
TITLE = "Fix the causal mask of a flash-attention forward (one key off)"
TIER = "cpu"
FILE = "flash_fwd.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Look at the causal mask inside the key loop, where a key's index is compared with a query's: which keys does it "
    "let query i attend?",
    "Causal attention lets query i attend keys 0 .. i, its own included. A strict comparison drops the diagonal: row "
    "0 attends no key at all (0 / 0 in the softmax) and every other row misses its own key.",
    "Make the comparison keep the key whose index equals the query's: keep key j for query i when j is not greater "
    "than i.",
]
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
TASK_KO = """\
연습 문제 4.6.1: causal 출력은 틀리고 non-causal 출력은 맞는 flash-attention forward입니다.

q, k, v, o는 연속된 (B*H, S, D) fp16 tensor입니다. program 하나가 한 head의 query 행 BLOCK_M개를 맡고, 그 앞으로 key를
BLOCK_N개씩 tile로 흘려보내며 online softmax를 계산합니다. 행마다 누적 최댓값 m_i와 누적 합 l_i를 두고, 최댓값이
커질 때마다 accumulator에 2^(m_old - m_new)를 곱해 다시 맞춥니다(랩 4.6의 attn_fwd_kernel에서 mask 없는 빠른 경로를
뺀 것). causal attention: query i는 key 0 .. i를 봅니다. 버그를 찾아 고칩니다. 아래의 `flash_forward`는 검사기가
부르는 wrapper입니다.
"""
BREAK_KO = [("<= offs_m[:, None])            # query i는 key 0 .. i를 봄", "< offs_m[:, None])")]


def check(path):
    from common import lab
    from course.exercise import Verdict
    from course.exercises.phase4_checks import CASES, check_attention, kernel_file

    mod = kernel_file(path, "ex461")
    if isinstance(mod, Verdict):
        return mod
    bad = check_attention(mod, lab.where())
    if bad is not None:
        return Verdict(False, bad.why + tr(". A causal query i attends keys 0 .. i - itself included - and no later "
                                           "one; the mask is the one place that says so"))
    return Verdict(True, tr("right on all {n} cases, causal and not: query i keeps keys j <= i (its own key too, so "
                            "row 0 always has one key and never divides 0 by 0), and the ragged last tile is masked by "
                            "S", n=len(CASES)))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the diagonal dropped (j < i)',
     [('(offs_kn[None, :] <= offs_m[:, None])', '(offs_kn[None, :] < offs_m[:, None])')],
     'drops the diagonal'),
    ('one key of the future (j <= i + 1)',
     [('(offs_kn[None, :] <= offs_m[:, None])', '(offs_kn[None, :] <= offs_m[:, None] + 1)')],
     'one key of its future'),
]
