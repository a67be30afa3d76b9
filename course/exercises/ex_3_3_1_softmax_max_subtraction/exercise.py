"""Exercise 3.3.1 - a fused softmax without the max subtraction: right on small values, NaN on large ones."""
import numpy as np

from common.i18n import tr

ID = "3.3.1"
TITLE = "Make a fused softmax survive rows of large magnitude (the max subtraction)"
TIER = "cpu"
FILE = "softmax.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase3.py.
HINTS = [
    "Look at tl.exp(x): what is exp(100) in fp32, and exp(-120)? Then look at what the masked lanes load, and what "
    "that would do to a maximum of the row.",
    "Softmax is unchanged when a constant is subtracted from the whole row; subtracting the row max makes the largest "
    "exponent 0, so nothing overflows and the sum is at least 1. The row is already in registers, so a max reduction "
    "costs no pass over memory, and lanes that load -inf leave the max alone.",
    "Reduce the loaded row with tl.max along axis 0 and exponentiate x minus that max; the single load, the sum and "
    "the division stay as they are.",
]
# (rows, cols, dtype); every case has rows at each of the offsets below
CASES = ((6, 1, "float32"), (6, 5, "float32"), (12, 1000, "float32"), (6, 33, "float16"), (6, 2100, "float32"))
# each row is offset + 2 N(0, 1): 0 and 30 are harmless, 100 and 89 overflow exp in fp32, -120 and -90 underflow it
OFFSETS = (0.0, 100.0, -120.0, 30.0, 89.0, -90.0)
EXP_MAX = float(np.log(np.finfo(np.float32).max))     # 88.72: exp of anything larger is inf in fp32
# the starting point: the solution without the max subtraction, under this docstring
TASK = """\
Exercise 3.3.1: this fused softmax passes on small inputs and fails in a real model. Find the rows it gets wrong,
then fix it without giving up the single pass."""
BREAK = [("Masked lanes read -inf: they do not change the max and add", "Masked lanes read -inf, which adds"),
         ("    row_max = tl.max(x, axis=0)            # a second reduction, on registers: no extra pass over memory\n"
          "    e = tl.exp(x - row_max)",
          "    e = tl.exp(x)")]
TASK_KO = """\
연습 문제 3.3.1: 이 fused softmax는 작은 입력에서는 통과하지만 실제 모델에서는 실패합니다. 틀리는 행을 찾은 다음,
메모리를 한 번만 훑는 구조를 지키면서 고칩니다."""
BREAK_KO = [("mask된 lane은 -inf를 읽습니다. 최댓값을 바꾸지 않고 합에는", "mask된 lane은 -inf를 읽고, 합에"),
            ("    row_max = tl.max(x, axis=0)            "
             "# register 위의 두 번째 reduction: 메모리를 한 번 더 훑지 않음\n"
             "    e = tl.exp(x - row_max)",
             "    e = tl.exp(x)")]
EXP_TINY = float(np.log(np.finfo(np.float32).tiny))   # -87.34: exp of anything smaller is subnormal (or flushed to 0)


def _inputs(rows, cols, rng):
    x = OFFSETS[0] + 2.0 * rng.standard_normal((rows, cols))
    x += np.resize(np.asarray(OFFSETS), rows)[:, None]
    if cols >= 3:                                       # masked positions, as in attention; column 0 stays finite
        r = rng.integers(0, rows, rows)
        x[r, rng.integers(1, cols, rows)] = -np.inf
    return x


def _why(x, rows):
    """What the wrong rows have in common, in terms of exp's range in fp32."""
    top = np.max(x[rows], axis=1)
    big = [r for r, t in zip(rows, top) if t > EXP_MAX]
    small = [r for r, t in zip(rows, top) if t < EXP_TINY]
    parts = []
    if big:
        parts.append(tr("row {r}'s largest value is {top:.0f}: exp(x) is inf above {limit:.1f} in fp32 (the largest "
                        "fp32 is 3.4e38 = e^88.7), and inf / inf is NaN", r=big[0], top=np.max(x[big[0]]),
                        limit=EXP_MAX))
    if small:
        parts.append(tr("row {r}'s largest value is {top:.0f}: every exp(x) falls under the smallest normal fp32 "
                        "(e^{limit:.1f}) - subnormal with few bits left, or 0 - so the sum is inexact or 0, and 0 / 0 "
                        "is NaN", r=small[0], top=np.max(x[small[0]]), limit=EXP_TINY))
    if not parts:
        return tr("the wrong rows are not the large or small ones: compare your kernel with the starting point")
    from course.checks import sentences

    return tr("{reasons}. Softmax does not change when every value of a row moves by the same amount: which amount "
              "keeps every exp(x) in range, and costs no extra pass over memory?", reasons=sentences(parts))


def check(path):
    from common import arrays, check as chk, lab
    from common.triton_support import triton
    from course.checks import load_module, said
    from course.exercise import Verdict
    from course.checks import guarded_output, outside_verdict, release
    from course.exercises.phase3_checks import bad_rows, launched, padded, rows_text
    from phase3_triton.lab03_fused_softmax.lab import reference

    mod = load_module(path, "ex331")
    if isinstance(mod, Verdict):
        return mod
    rng = np.random.default_rng(331)
    for rows, cols, dtype in CASES:
        what = f"{rows} x {cols} {dtype}"
        x = padded(_inputs(rows, cols, rng), dtype, lab.where())
        y = guarded_output((rows, cols), dtype, x)      # NaN between NaN guard bands: an element never written shows
        failed = launched(what, mod.softmax_kernel, (rows,), x, y, cols, cols,
                          BLOCK_N=max(16, triton.next_power_of_2(cols)))
        failed = failed if failed is not None else outside_verdict(what, {"y": y})
        if failed is not None:
            release(y)
            return failed
        seen = arrays.to_numpy(x).astype(np.float64)     # the values the kernel saw (fp16 inputs are rounded)
        ref = reference(seen)
        c = chk.compare(y, ref, dtype)
        if not c.ok:
            wrong = bad_rows(y, ref, dtype)
            got = arrays.to_numpy(y)[wrong].astype(np.float64)
            how = tr("NaN or inf where the reference is finite") if not np.isfinite(got).all() else said(c.message)
            return Verdict(False, f"{what}: {rows_text(wrong, rows)}: {how}. " + _why(seen, wrong))
    return Verdict(True, tr("right on rows near 0, +30, +89, +100, -90 and -120 (fp32 and fp16, -inf entries too): "
                            "with the row maximum subtracted every exponent is <= 0, so exp never overflows, and the "
                            "largest term is exactly 1, so the sum never underflows - one more reduction on registers, "
                            "no extra pass over memory"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the max subtracted, but the masked lanes read 0',
     [('mask=ok, other=float("-inf")', 'mask=ok, other=0.0')],
     'rows wrong'),
    ('the store unmasked',
     [('y.to(y_ptr.dtype.element_ty), mask=ok)', 'y.to(y_ptr.dtype.element_ty))')],
     'past the end of y'),
]
