"""Exercise 2.7.1 - a warp-per-row CUDA C softmax that computes the row max and then does not use it: right on rows
near 0, NaN or badly wrong on rows of large magnitude. Checked on a GPU: the learner's softmax.cu compiled for this GPU
and run on rows offset by 0, +30, +89, +100, -90 and -120 (with -inf entries), the output filled with NaN first
(inside NaN guard bands), against a float64 reference."""
import math

import numpy as np

from common.i18n import tr

ID = "2.7.1"
TITLE = "A CUDA C softmax that breaks on large-magnitude rows: find the rows and fix it (GPU)"
TIER = "gpu"
FILE = "softmax.cu"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "Look at the two expf calls, in the sum and in the output, and at what the kernel computes before them and then "
    "never uses.",
    "expf overflows fp32 past about 88.7 and underflows below about -87.3: rows near +100 give inf / inf = NaN, rows "
    "near -120 give 0 / 0. Softmax does not change when the same constant is subtracted from every element of a row: "
    "subtract the row's max.",
    "Give both expf calls the element minus m, the row max the kernel already has: the largest exponent becomes 0, "
    "the sum is at least 1, and nothing overflows or divides 0 by 0.",
]
KERNEL = "softmax_warp_rows"
SIGNATURE = ('extern "C" __global__ void softmax_warp_rows(const float* x, float* y, long long rows, int cols) '
             "launched with (32, 4)-thread blocks (a warp per row)")
# the starting point: the solution with the max left out of both exponentials
BREAK = [("d += expf(xr[c] - m);", "d += expf(xr[c]);"),
         ("yr[c] = expf(xr[c] - m) * inv;", "yr[c] = expf(xr[c]) * inv;")]
ROWS_PER_BLOCK = 4              # blocks of (32, 4) threads: one warp per row
SHAPES = ((6, 1), (6, 5), (12, 1000), (7, 33), (6, 2100), (1000, 128))     # (rows, cols)
OFFSETS = (0.0, 100.0, -120.0, 30.0, 89.0, -90.0)     # 0 and 30 harmless; 89 and 100 overflow exp; -90, -120 underflow
EXP_MAX = float(np.log(np.finfo(np.float32).max))     # 88.72: exp of anything larger is inf in fp32
EXP_TINY = float(np.log(np.finfo(np.float32).tiny))   # -87.34: exp of anything smaller is subnormal or 0


def _inputs(rows: int, cols: int, rng) -> np.ndarray:
    x = 2.0 * rng.standard_normal((rows, cols)) + np.resize(np.asarray(OFFSETS), rows)[:, None]
    if cols >= 3:                                      # some masked entries (-inf gives 0); column 0 stays finite
        r = rng.integers(0, rows, rows)
        x[r, rng.integers(1, cols, rows)] = -np.inf
    return x.astype(np.float32)


def _reference(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _why(x: np.ndarray, rows: list[int]) -> str:
    """What exp does to the first wrong row's largest value in fp32, and the way out."""
    r = rows[0]
    top = float(np.max(x[r]))
    if top > EXP_MAX:
        fate = tr("exp({top:.0f}) is inf in fp32, whose largest value is 3.4e38 = e^{limit:.1f}: the row's sum is inf, "
                  "and inf / inf is NaN", top=top, limit=EXP_MAX)
    elif top < EXP_TINY:
        fate = tr("exp({top:.0f}) is below the smallest normal fp32, e^{limit:.1f}: every term is a subnormal with few "
                  "bits left, or 0, so the sum is inexact or 0, and 0 / 0 is NaN", top=top, limit=EXP_TINY)
    else:
        return tr("row {r} is neither large nor small (its max is {top:.0f}): compare your kernel with the starting "
                  "point", r=r, top=top)
    return tr("Row {r}'s largest value is {top:.0f}, and {fate}. Softmax does not change when every value of a row "
              "moves by the same amount: which amount keeps every exp in range - and does the kernel already have it?",
              r=r, top=top, fate=fate)


def _judge(kern, shape):
    """None when every row of this (rows, cols) case matches the reference, else a Verdict naming the rows."""
    from common import arrays, check as chk
    from course.exercise import Verdict
    from course.exercises.phase2_checks import run_case

    rows, cols = shape
    host = _inputs(rows, cols, np.random.default_rng(rows * cols))
    got, failed = run_case(f"{rows} x {cols}", lambda x, y: kern((math.ceil(rows / ROWS_PER_BLOCK),),
                                                                 (32, ROWS_PER_BLOCK),
                                                                 (x, y, np.int64(rows), np.int32(cols))),
                           arrays.from_numpy(host, "float32", "cuda"), (rows, cols))
    if failed is not None:
        return failed
    ref = _reference(host)
    wrong = [r for r in range(rows) if not chk.compare(got[r], ref[r], "float32").ok]
    if not wrong:
        return None
    from course.checks import said

    how = (tr("NaN or inf where the reference is finite") if not np.isfinite(got[wrong]).all() else
           said(chk.compare(got[wrong], ref[wrong], "float32").message))
    shown = ", ".join(map(str, wrong[:6])) + (" ..." if len(wrong) > 6 else "")
    return Verdict(False, tr("{rows} x {cols}: rows {shown} wrong ({how}). ", rows=rows, cols=cols, shown=shown,
                             how=how) + _why(host, wrong))


def check(path):
    from course.exercises.phase2_checks import gpu_check

    return gpu_check(path, KERNEL, SIGNATURE, SHAPES, _judge, tr(
        "right on rows near 0, +30, +89, +100, -90 and -120 (with -inf entries): with the row max subtracted every "
        "exponent is <= 0, so exp never overflows, and the largest term is exactly 1, so the sum never underflows. The "
        "max was already computed - the bug was one subtraction in two places, and it cost no extra pass over memory"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the max subtracted in the sum only',
     [('yr[c] = expf(xr[c] - m) * inv;', 'yr[c] = expf(xr[c]) * inv;')],
     ('not run', 'NaN or inf where the reference is finite')),
    ('a typo: it does not compile', [('float d = 0.0f;', 'float d = 0.0f')], 'does not compile'),
]
