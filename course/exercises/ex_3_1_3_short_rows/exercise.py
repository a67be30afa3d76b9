"""Exercise 3.1.3 - short rows: make row sums of 262144 x 128 fp32 at least twice as fast as one program per row,
right for every row length (timed on a GPU against lab 3.1's rowsum_kernel in interleaved rounds)."""
import numpy as np

from common.i18n import tr

ID = "3.1.3"
TITLE = "Short rows: row sums of 262144 x 128 at least 2x faster than one program per row"
TIER = "gpu"
FILE = "rowsum.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase3.py.
HINTS = [
    "At 128 columns a program loads one 512-byte row: 4 bytes per thread of its 4 warps, then a reduction and one "
    "store. Count what each of the 262144 programs pays besides its loads, and how little each thread has in flight.",
    "Give a program several rows: a BLOCK_M x BLOCK_N tile, so that it loads kilobytes and one reduction along axis 1 "
    "serves BLOCK_M rows. Lab 3.1's rowsum_tile_kernel, and exercise 3.1.2's fix, show the 2-D mask it needs.",
    "Choose BLOCK_N as the row length's next power of 2 (capped) and BLOCK_M so that the tile holds about 4096 "
    "elements; launch ceil(rows / BLOCK_M) programs; mask rows and columns on the load and rows on the store. Long "
    "rows then get BLOCK_M = 1 and keep their speed.",
]
CASES = ((1, 1), (37, 100), (5, 300), (1000, 128), (3, 5000), (33, 4096))    # every row length stays right
BENCH_SHAPE = (262144, 128)
NEEDED = 2.0             # speed-up over one program per row (lab 3.1 measured several times that with a 2-D tile)


def _correct(mod, where: str):
    """None when mod.rowsum is right on CASES, else a Verdict (integer-valued inputs: every fp32 sum is exact)."""
    from common import check as chk
    from course.exercise import Verdict
    from course.checks import guarded_output, outside_verdict, release
    from course.exercises.phase3_checks import bad_rows, padded, rows_text

    rng = np.random.default_rng(313)
    for rows, cols in CASES:
        x_host = rng.integers(1, 9, size=(rows, cols)).astype(np.float64)
        x = padded(x_host, "float32", where, fill=1.0)  # the memory after the array holds 1.0s
        y = guarded_output((rows,), "float32", x)       # NaN, between NaN guard bands
        try:
            mod.rowsum(x, y)
        except Exception as e:  # noqa: BLE001 - a kernel that does not run is a wrong answer, said plainly
            release(y)
            return Verdict(False, tr("{rows} x {cols}: rowsum failed ({error}: {detail})", rows=rows, cols=cols,
                                     error=type(e).__name__, detail=str(e)[:200]))
        bad = outside_verdict(f"{rows} x {cols}", {"out": y})
        if bad is not None:
            return bad
        ref = x_host.sum(axis=1)
        if not chk.compare(y, ref, "float32").ok:
            return Verdict(False, tr("{rows} x {cols}: {wrong}. Faster does not count until it is right: check the "
                                     "masks of a multi-row tile (row AND column) and the grid (every row in exactly "
                                     "one program)", rows=rows, cols=cols,
                                     wrong=rows_text(bad_rows(y, ref, "float32"), rows)))
    return None


def _timed(mod, shape):
    """(your GB/s, one-program-per-row GB/s, Verdict or None) at `shape`, in interleaved rounds."""
    from common import arrays, bench, check as chk
    from common.arrays import device_randn
    from course.exercise import Verdict
    from phase3_triton.lab01_programming_model import lab as lab31

    x = device_randn(shape, "float32", 313, shift=0.25)
    mine, theirs = (arrays.empty((shape[0],), "float32", x) for _ in range(2))
    mod.rowsum(x, mine)
    ref = arrays.to_numpy(x).astype(np.float64).sum(axis=1)
    c = chk.compare(mine, ref, "float32")
    if not c.ok:
        from course.checks import said

        return None, None, Verdict(False, f"{shape[0]} x {shape[1]}: {said(c.message)}")
    t = bench.interleaved({"yours": lambda: mod.rowsum(x, mine),
                           "row per program": lambda: lab31.rowsum_triton(x, out=theirs)}, rounds=3)
    nbytes = 4 * shape[0] * shape[1] + 4 * shape[0]
    return t["yours"].gbps(nbytes), t["row per program"].gbps(nbytes), None


def check(path, shape=BENCH_SHAPE):
    from common import device, lab
    from course.checks import load_module
    from course.exercise import Verdict

    mod = load_module(path, "ex313")
    if isinstance(mod, Verdict):
        return mod
    if not callable(getattr(mod, "rowsum", None)):
        return Verdict(False, tr("{file} must define rowsum(x, out), as the starting point does", file=FILE))
    bad = _correct(mod, lab.where())
    if bad is not None:
        return bad
    if not device.has_gpu():
        from course.exercises.phase2_checks import not_run

        return Verdict(True, tr("checked on this CPU: rowsum is right for every row length in the Triton interpreter"),
                       not_run=not_run(tr("its speed against one program per row")))
    mine, theirs, bad = _timed(mod, shape)
    if bad is not None:
        return bad
    ratio = mine / theirs
    rows, cols = shape
    if ratio < NEEDED:
        return Verdict(False, tr("right, but {rows} x {cols}: yours {mine:,.0f} GB/s, one program per row "
                                 "{theirs:,.0f} GB/s ({ratio:.2f}x, {needed:.0f}x needed). A program of one "
                                 "{row_bytes}-byte row gives each of its threads a single float to load and pays a "
                                 "whole block reduction (shuffles, shared memory, a barrier) and its own start and end "
                                 "for {row_bytes} bytes, {rows} times: what does a program that owns several rows "
                                 "change?", rows=rows,
                                 cols=cols, mine=mine, theirs=theirs, ratio=ratio, needed=NEEDED, row_bytes=4 * cols))
    return Verdict(True, tr("right for every row length, and {rows} x {cols}: yours {mine:,.0f} GB/s against "
                            "{theirs:,.0f} GB/s for one program per row ({ratio:.1f}x): with several rows per program "
                            "each thread has many floats in flight and one program's reduction and bookkeeping serve "
                            "many rows", rows=rows, cols=cols, mine=mine, theirs=theirs, ratio=ratio))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the column mask dropped',
     [('mask=row_ok[:, None] & (cols[None, :] < n_cols)', 'mask=row_ok[:, None]')],
     'rows wrong'),
    ('the store unmasked',
     [('tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)', 'tl.store(y_ptr + rows, tl.sum(acc, axis=1))')],
     'past the end of out'),
]
