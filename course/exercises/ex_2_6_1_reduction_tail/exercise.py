"""Exercise 2.6.1 - a float4 grid-stride reduction (lab 2.6's rung 07, two launches) that drops the elements after the
last whole float4. Checked on a GPU: the learner's reduce.cu compiled for this GPU and run on lengths that are and are
not multiples of 4, from arrays at 16-byte boundaries and from views that start 4, 8 and 12 bytes past one, against
the exact sum (small integers: any order of additions is exact in fp32), partials and result filled with NaN first."""
import math

import numpy as np

from common.i18n import tr

ID = "2.6.1"
TITLE = "A float4 reduction that is right only for some lengths: find what it drops and fix it (GPU)"
TIER = "gpu"
FILE = "reduce.cu"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "Count what the kernel reads: head single floats before the first 16-byte boundary, then quads whole float4. "
    "Compare head + 4 x quads with n for n = 1001, or for a view that starts 4 bytes past a boundary.",
    "Up to 3 elements after the last whole float4 are never read: the tail. The second launch, the same kernel over "
    "the partials, loses its own tail the same way whenever the partials do not end on a whole float4.",
    "After the float4 loop and the head, let thread t of the grid add one more element, the one at head + 4 x quads + "
    "t, when t is below the number of elements left; the block reduction then sums it with the rest.",
]
KERNEL = "sum_float4"
SIGNATURE = 'extern "C" __global__ void sum_float4(const float* x, float* out, long long n)'
# the starting point: the solution without the elements after the last whole float4
BREAK = [("    if (t < n - done) acc += x[done + t];\n", "")]
THREADS, MAX_BLOCKS, UNROLL = 256, 132 * 8, 4
SIZES = (1, 2, 3, 4, 5, 7, 8, 1000, 1001, 1023, 4097, 65537, 1_000_003, 2_097_155)
OFFSETS = (0, 1, 2, 3)             # floats past a 16-byte boundary where the view starts


def _grid(n: int) -> int:
    """The checker's launch: the blocks an H200 holds at once (8 x 132), fewer when n is small."""
    return max(1, min(MAX_BLOCKS, math.ceil(n / (THREADS * UNROLL))))


def _sum(kern, x, n: int):
    """Two launches: one partial per block, then one block over the partials. Returns (result, partials)."""
    from course.exercises.phase2_checks import guarded_out

    blocks = _grid(n)
    partial = guarded_out((blocks,), x)
    out = guarded_out((1,), x)
    kern((blocks,), (THREADS,), (x, partial, np.int64(n)))
    kern((1,), (THREADS,), (partial, out, np.int64(blocks)))
    return out, partial


def _why(host: np.ndarray, offset: int, got: float, want: float, blocks: int) -> str:
    """What the difference between the result and the exact sum is made of."""
    head = min(len(host), (4 - offset) % 4)
    quads = (len(host) - head) // 4
    rest = host[head + 4 * quads:]
    from course.checks import sentences

    parts = [tr("the result is {got:g}, the exact sum {want:g}", got=got, want=want)]
    if math.isnan(got):
        return tr("{result}: NaN - a partial or the result was never written, or a NaN was read past the end",
                  result=parts[0])
    if rest.size:
        parts.append(tr("the {n} elements after the last whole float4 sum {total:g}", n=rest.size, total=rest.sum())
                     if rest.size > 1 else
                     tr("the {n} element after the last whole float4 is {total:g}", n=rest.size, total=rest.sum()))
    if head:
        parts.append(tr("the {n} elements before the first float4 (the view starts {b} bytes past a 16-byte boundary) "
                        "sum {total:g}", n=head, b=4 * offset, total=host[:head].sum()) if head > 1 else
                     tr("the {n} element before the first float4 (the view starts {b} bytes past a 16-byte boundary) "
                        "is {total:g}", n=head, b=4 * offset, total=host[:head].sum()))
    if blocks % 4:
        parts.append(tr("and the second launch sums {n} partials, {k} of them after its last whole float4", n=blocks,
                        k=blocks % 4) if blocks > 1 else
                     tr("and the second launch sums {n} partial, {k} of them after its last whole float4", n=blocks,
                        k=blocks % 4))
    return sentences(parts)


def _judge(kern, case):
    """None when the two launches give the exact sum of this (n, offset) case, else a Verdict that says what is
    missing from it."""
    from common import arrays
    from course.exercise import Verdict
    from course.exercises.phase2_checks import launched, outside

    n, off = case
    rng = np.random.default_rng(n + off)
    host = (rng.integers(1, 5, n + 3) * np.where(rng.random(n + 3) < 0.8, 1, -1)).astype(np.float32)
    x = arrays.from_numpy(host, "float32", "cuda")[off: off + n]     # a fresh allocation is 256-byte aligned
    what = f"n = {n}" + (tr(", a view {b} bytes past a 16-byte boundary", b=4 * off) if off else "")
    res = {}
    failed = launched(what, lambda: res.update(zip(("out", "partial"), _sum(kern, x, n))))
    if failed is not None:
        return failed
    spill = outside(res["partial"]) or outside(res["out"])
    if spill:
        from course.checks import said

        return Verdict(False, f"{what}: {said(spill)}")
    got, want = float(arrays.to_numpy(res["out"])[0]), float(host[off: off + n].astype(np.float64).sum())
    if got == want:
        return None
    return Verdict(False, tr("{what}: {why}. Every element belongs to exactly one of: the head, a whole float4, what "
                             "comes after them", what=what, why=_why(host[off: off + n], off, got, want, _grid(n))))


def check(path):
    from course.exercises.phase2_checks import gpu_check

    cases = [(n, off) for n in SIZES for off in (OFFSETS if n < 10**6 else (0, 1))]
    return gpu_check(path, KERNEL, SIGNATURE, cases, _judge, tr(
        "exact for {n} lengths from 1 to {last:,} and views at every 4-byte offset: the body is read as float4 "
        "(16-byte loads, 16 bytes in flight per thread per step), the up to 3 floats before the first 16-byte boundary "
        "and the up to 3 after the last whole float4 one float each, by the first threads of the grid "
        "- in both launches",
        n=len(SIZES), last=SIZES[-1]))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the off-by-one tail (t <= n - done)', [('if (t < n - done)', 'if (t <= n - done)')],
     ('not run', 'read past the end')),
    ('the misaligned head dropped', [('    if (t < head) acc += x[t];\n', '')],
     ('not run', 'before the first float4')),
]
