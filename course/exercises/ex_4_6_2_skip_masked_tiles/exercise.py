"""Exercise 4.6.2 - causal flash attention that does the causal work only: skip the key tiles no query of a block
attends (Triton; right on ragged sizes, then a NaN probe shows whether any tile past the diagonal is still read; on a
GPU the checker also times it, causal against non-causal, and prints the ratio)."""
from common.i18n import tr

ID = "4.6.2"
TITLE = "Causal attention at the causal price: skip the key tiles past the diagonal"
TIER = "cpu"
FILE = "flash_causal.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Look at the bound of the key loop: with causal on, how many key tiles does it visit for the first query block, "
    "and for the last?",
    "A query block holds queries m0 .. m0 + BLOCK_M - 1, and none of them attends a key at or past m0 + BLOCK_M: "
    "those tiles are fully masked, yet the loop still loads them, paying their bytes and FLOPs (and 0 x NaN is NaN if "
    "they hold NaN).",
    "When CAUSAL, end the loop at the smaller of (the program's query block index + 1) x BLOCK_M and seq; otherwise "
    "at seq. Keep the mask: the diagonal tile is only partly visible.",
]
# the starting point: exercise 4.6.1's solution (right, causal or not; every key tile read), under this docstring
START_FROM = "4.6.1"
TASK = """\
Exercise 4.6.2: a flash-attention forward that is right, causal or not, and takes as long causal as not.

q, k, v, o are (B*H, S, D) fp16 tensors, contiguous. One program owns BLOCK_M query rows of one head and streams the
keys past them in tiles of BLOCK_N with an online softmax: a running row max m_i and sum l_i, the accumulator
rescaled by 2^(m_old - m_new) whenever the max grows (lab 4.6's attn_fwd_kernel, without its unmasked fast path).
Causal attention: query i attends keys 0 .. i. Make the causal loop of a query block stop where its last query's
keys end, so causal attention costs about half of non-causal; `flash_forward` below is the wrapper the checker calls.
"""
TASK_KO = """\
연습 문제 4.6.2: causal이든 아니든 맞지만, causal에서도 non-causal만큼 오래 걸리는 flash-attention forward입니다.

q, k, v, o는 연속된 (B*H, S, D) fp16 tensor입니다. program 하나가 한 head의 query 행 BLOCK_M개를 맡고, 그 앞으로 key를
BLOCK_N개씩 tile로 흘려보내며 online softmax를 계산합니다. 행마다 누적 최댓값 m_i와 누적 합 l_i를 두고, 최댓값이
커질 때마다 accumulator에 2^(m_old - m_new)를 곱해 다시 맞춥니다(랩 4.6의 attn_fwd_kernel에서 mask 없는 빠른 경로를
뺀 것). causal attention: query i는 key 0 .. i를 봅니다. query block의 causal loop가 그 block의 마지막 query가 보는
key에서 멈추게 해서, causal attention의 비용이 non-causal의 절반쯤이 되게 합니다. 아래의 `flash_forward`는 검사기가
부르는 wrapper입니다.
"""
SHAPE = (64, 4096, 64)       # B*H, S, D of the timing on a GPU: 64 heads of 4096 tokens (B 4, H 16), fp16


def check(path, shape=SHAPE):
    from common import device, lab
    from course.exercise import Verdict
    from course.exercises.phase4_checks import check_attention, kernel_file, reads_past_the_diagonal, time_causal

    mod = kernel_file(path, "ex462")
    if isinstance(mod, Verdict):
        return mod
    where = lab.where()
    bad = check_attention(mod, where)
    if bad is not None:
        return Verdict(False, bad.why + tr(". Faster does not count until it is right: a causal query i attends keys "
                                           "0 .. i, and a tile you skip must hold no key any query of the block "
                                           "attends"))
    try:
        reads = reads_past_the_diagonal(mod, where)
    except Exception as e:  # noqa: BLE001 - a kernel that does not run is a wrong answer, said plainly
        return Verdict(False, tr("the NaN probe failed to run ({error}: {detail})", error=type(e).__name__,
                                 detail=str(e)[:200]))
    if reads:
        return Verdict(False, tr("right, but {reads}. A causal query block [m0, m0 + BLOCK_M) attends no key at or "
                                 "past m0 + BLOCK_M, so about half of the tiles your loop reads, multiplies and "
                                 "exponentiates are then masked to -inf in full: which tiles can the loop of a query "
                                 "block stop before?", reads=reads))
    said = tr("each query block stops after its diagonal block, so the loop runs (n + 1) / 2n of the non-causal tiles "
              "with n = S / BLOCK_M: about half")
    if not device.has_gpu():
        return Verdict(True, tr("right on every case, and no tile past the diagonal is read: {said}. On a GPU this "
                                "checker also times causal against non-causal", said=said))
    causal, full, spread = time_causal(mod, shape)
    bh, s, d = shape
    return Verdict(True, tr("right on every case, and no tile past the diagonal is read: {said}. Timed at B*H = {bh}, "
                            "S = {s}, D = {d}: causal {causal:.3f} ms, non-causal {full:.3f} ms, {ratio:.2f} of the "
                            "time (timing spread {spread:.0%}); the rest of the way to the tile count is the mask "
                            "still applied to every tile, and the programs of late query blocks running longest",
                            said=said, bh=bh, s=s, d=d, causal=causal, full=full, ratio=causal / full, spread=spread))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the loop stops one block early',
     [('hi = tl.minimum((pid_m + 1) * BLOCK_M, seq)', 'hi = tl.minimum(pid_m * BLOCK_M, seq)')],
     'causal'),
    ('the loop still runs to the end', [('hi = tl.minimum((pid_m + 1) * BLOCK_M, seq)', 'hi = seq')], 'right, but'),
]
