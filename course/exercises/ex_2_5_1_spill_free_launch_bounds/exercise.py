"""Exercise 2.5.1 - a column normalization that spills under __launch_bounds__(256, 8): make it spill-free without
giving up the 8 blocks per SM, checked by the NVRTC compile report of the learner's colnorm.cu for sm_90 (registers,
spill bytes, stack frame, LDL/STL, and common.occupancy's blocks per SM); on a machine with a GPU also run against a
float64 reference on awkward shapes, its output between NaN guard bands."""
import numpy as np

from common.i18n import tr

ID = "2.5.1"
TITLE = "Remove the spill of a kernel under __launch_bounds__(256, 8) without losing its occupancy (compile report)"
TIER = "cpu"
FILE = "colnorm.cu"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "Read the compile report of the start: registers, spill bytes, stack frame. The register array v[MAX_ROWS] keeps "
    "32 values of a thread alive at once; with the addresses and the sum that is more than the 32 registers the "
    "promise leaves.",
    "__launch_bounds__(256, 8) stays, so the kernel must need fewer registers: the values only have to live until the "
    "norm is known. Read the column twice instead of keeping it - once for the sum of squares, once to scale and "
    "write.",
    "Drop the array: a first loop over the rows adds the squares of x into one float; a second loop reads x again, "
    "multiplies by the inverse norm and writes y. Only the running sum lives across a loop, and although y may be x, "
    "each value is read before it is overwritten.",
]
KERNEL = "colnorm"
SIGNATURE = 'extern "C" __global__ void colnorm(const float* x, float* y, int rows, long long cols)'
THREADS, BLOCKS = 256, 8            # the launch the task keeps: 8 blocks of 256 threads per SM, 100% occupancy
SHAPES = ((1, 1), (3, 1000), (16, 4097), (32, 255), (32, 65537), (7, 300_007))     # (rows, cols); rows <= 32


def _report(k) -> str:
    c = k.sass_counts
    return tr("{regs} registers, {stores} B spill stores / {loads} B spill loads, {stack} B stack frame, {stl} STL / "
              "{ldl} LDL, {smem} B shared", regs=k.registers, stores=k.spill_stores, loads=k.spill_loads,
              stack=k.stack_bytes, stl=c.get("STL", 0), ldl=c.get("LDL", 0), smem=k.smem_bytes)


def _facts(k) -> str | None:
    """What the compile report says is still wrong, or None."""
    from common.occupancy import occupancy
    from course.checks import both

    occ = occupancy("sm_90", THREADS, k.registers, smem_static=k.smem_bytes)
    c = k.sass_counts
    if occ.blocks_per_sm < BLOCKS:
        why = tr("{blocks} blocks of {threads} threads fit on an SM, limited by {limits}; the task keeps {keep} (100% "
                 "occupancy): at most 65536 / ({threads} x {keep}) = 32 registers a thread, and no shared memory to "
                 "speak of", blocks=occ.blocks_per_sm, threads=THREADS, limits=both(occ.limiters), keep=BLOCKS)
    elif k.spills:
        why = tr("ptxas spills: 32 registers cannot hold 32 column values plus the addresses and the sum, so some go "
                 "to local memory (STL/LDL). The cap is fixed; what the thread keeps live is not - does it need every "
                 "value of its column at once?")
    elif k.stack_bytes or c.get("STL", 0) or c.get("LDL", 0):
        why = tr("0 bytes spilled, but a stack frame (local memory: LDL/STL in the SASS) - an array indexed at run "
                 "time lives there, the silent cousin of a spill (lab 2.5's colnorm_03)")
    else:
        return None
    return tr("{why} (the compile report for sm_90: {report})", why=why, report=_report(k))


def _judge(kern, shape):
    """None when colnorm matches the float64 reference on this (rows, cols), else a Verdict naming it."""
    import math

    from common import arrays, check as chk
    from course.exercise import Verdict
    from course.exercises.phase2_checks import run_case

    rows, cols = shape
    host = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(np.float32)
    host[0, : min(cols, 3)] += 40.0                   # a few columns dominated by one large value
    got, failed = run_case(f"{rows} x {cols}", lambda x, y: kern((math.ceil(cols / THREADS),), (THREADS,),
                                                                 (x, y, np.int32(rows), np.int64(cols))),
                           arrays.from_numpy(host, "float32", "cuda"), (rows, cols))
    if failed is not None:
        return failed
    h = host.astype(np.float64)
    c = chk.compare(got, h / np.sqrt((h * h).sum(axis=0, keepdims=True)), "float32")
    if c.ok:
        return None
    from course.checks import said

    return Verdict(False, tr("{rows} x {cols}: {message}. Spill-free does not count until it is right: every column's "
                             "norm over all its rows, every element of y written once", rows=rows, cols=cols,
                             message=said(c.message)))


def check(path):
    from course.exercises.phase2_checks import compiled_then_run

    return compiled_then_run(path, KERNEL, SIGNATURE, _facts, SHAPES, _judge, lambda k: tr(
        "the compile report for sm_90: {report}, {blocks} blocks of {threads} per SM - the promise kept, nothing in "
        "local memory: a thread that holds one running sum instead of its whole column fits 32 registers; the price "
        "is a second read of x, mostly from L2, where the spill paid local-memory stores and loads",
        report=_report(k), blocks=BLOCKS, threads=THREADS))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the occupancy given away: __launch_bounds__(256) on the starting point',
     [('__launch_bounds__(256, 8)\n', '__launch_bounds__(256)\n')],
     'blocks of 256 threads fit',
     'start'),
    ('the off-by-one pass (k <= rows)',
     [('for (int k = 0; k < rows; ++k) {                       // pass 2',
       'for (int k = 0; k <= rows; ++k) {                       // pass 2')],
     ('not run', 'past its end')),
]
