"""Exercise 4.6.2 - causal flash attention that does the causal work only: skip the key tiles no query of a block
attends (Triton; right on ragged sizes, then timed on a GPU, causal against non-causal, in interleaved rounds)."""
ID = "4.6.2"
TITLE = "Causal attention in at most 0.7 of the non-causal time: skip the tiles past the diagonal"
TIER = "gpu"
FILE = "flash_causal.py"
# the starting point: exercise 4.6.1's solution (right, causal or not; every key tile read), under this docstring
START_FROM = "4.6.1"
TASK = """\
Exercise 4.6.2: a flash-attention forward that is right, causal or not, and takes as long causal as not.

q, k, v, o are (B*H, S, D) fp16 tensors, contiguous. One program owns BLOCK_M query rows of one head and streams the
keys past them in tiles of BLOCK_N with an online softmax: a running row max m_i and sum l_i, the accumulator
rescaled by 2^(m_old - m_new) whenever the max grows (lab 4.6's attn_fwd_kernel, without its unmasked fast path).
Causal attention: query i attends keys 0 .. i. Make the causal forward take at most 0.7 of the non-causal time at
B*H = 64, S = 4096, D = 64 (measured on a GPU); `flash_forward` below is the wrapper the checker calls.
"""
SHAPE = (64, 4096, 64)       # B*H, S, D: 64 heads of 4096 tokens (B 4, H 16), fp16
NEEDED = 0.7                 # causal time / non-causal time; (n + 1) / 2n of the tiles is 0.52 at S = 4096, BLOCK_M 128


def check(path, shape=SHAPE):
    from course.exercise import Verdict
    from course.exercises.phase4_checks import check_attention, kernel_file, time_causal

    mod = kernel_file(path, "ex462", timed=True)
    if isinstance(mod, Verdict):
        return mod
    bad = check_attention(mod, "cuda")
    if bad is not None:
        return Verdict(False, bad.why + ". Faster does not count until it is right: a causal query i attends keys "
                                        "0 .. i, and a tile you skip must hold no key any query of the block attends")
    causal, full, spread = time_causal(mod, shape)
    ratio = causal / full
    bh, s, d = shape
    where = f"B*H = {bh}, S = {s}, D = {d}: causal {causal:.3f} ms, non-causal {full:.3f} ms ({ratio:.2f} of the time"
    if ratio > NEEDED:
        return Verdict(False, f"right, but at {where}; {NEEDED} or less needed). A causal query block "
                              "[m0, m0 + BLOCK_M) attends no key at or past m0 + BLOCK_M, so about half of the tiles "
                              "your loop reads, multiplies and exponentiates are then masked to -inf in full: which "
                              "tiles can the loop of a query block stop before?")
    return Verdict(True, f"right on every case, and at {where}, timing spread {spread:.0%}): each query block stops "
                         "after its diagonal block, so the loop runs (n + 1) / 2n of the non-causal tiles with "
                         f"n = S / BLOCK_M - about half at S = {s}")
