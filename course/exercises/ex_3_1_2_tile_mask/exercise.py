"""Exercise 3.1.2 - a 2-D tile with a 1-D mask: the row sums read past the end of each row."""
import numpy as np

from common.i18n import tr

ID = "3.1.2"
TITLE = "Fix the 2-D mask of a row-sum tile kernel (rows of any length)"
TIER = "cpu"
FILE = "rowsum_tile.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase3.py.
HINTS = [
    "Look at the mask of the tl.load in the column loop: it has a term for the rows only. What does the last BLOCK_N "
    "step load at columns n_cols and beyond?",
    "When n_cols is not a multiple of BLOCK_N, the last step's columns past the row's end are the next row's first "
    "elements (past the matrix, for the last row), and they are added in. The mask must be 2-D: the row in range and "
    "the column in range.",
    "Combine the row mask, broadcast along the columns, with the test cols < n_cols, broadcast along the rows, into "
    "one BLOCK_M x BLOCK_N mask with &, and load with it; the load's other= already keeps masked elements out of the "
    "sum.",
]
# (rows, cols): a row length that is a multiple of BLOCK_N = 128 first (the starting point is right there), then
# ragged ones; 37 and 40 rows leave the last program's tile partly empty
CASES = ((37, 128), (37, 100), (5, 300), (1, 1), (40, 129), (3, 5))
# the starting point: the solution with a 1-D mask (rows only) on its 2-D tile, under this docstring
TASK = """\
Exercise 3.1.2: row sums with a 2-D tile per program (BLOCK_M rows x BLOCK_N columns per step). It is right when
the row length is a multiple of BLOCK_N and wrong otherwise. Find which elements the tile reads that it should not,
then fix the mask."""
BREAK = [("ok = row_ok[:, None] & (cols[None, :] < n_cols)      # (BLOCK_M, 1) & (1, BLOCK_N) -> (BLOCK_M, BLOCK_N)\n"
          "        acc += tl.load(ptrs, mask=ok,",
          "acc += tl.load(ptrs, mask=row_ok[:, None],")]
TASK_KO = """\
연습 문제 3.1.2: program마다 2차원 tile(step마다 BLOCK_M행 x BLOCK_N열)로 행 합을 구합니다. 행 길이가 BLOCK_N의
배수이면 맞고, 아니면 틀립니다. tile이 읽지 말아야 할 원소를 찾은 다음 mask를 고칩니다."""


def _diagnose(x, out, ref, cols, block_n) -> str:
    over = -(-cols // block_n) * block_n - cols          # tile lanes past the row's end in the last column step
    extra = np.asarray(out, np.float64) - ref
    lines = []
    if x.shape[0] > 1 and np.isfinite(extra[0]) and abs(extra[0] - x[1, :over].sum()) < 0.5:
        lines.append(tr("row 0's sum is too large by exactly the first {over} values of row 1: in the last column "
                        "step {over} of the tile's {block_n} lanes lie past the end of the {cols}-column row, and the "
                        "addresses there belong to the next row", over=over, block_n=block_n, cols=cols))
    if not np.isfinite(extra[-1]):
        lines.append(tr("the last row's sum is NaN: its lanes past the end read past the end of the whole array (NaN "
                        "here; on a GPU whatever lies there, or an illegal-address fault)"))
    if not lines:
        lines.append(tr("the sums differ from the reference in a way the starting point's bug does not explain"))
    from course.checks import sentences

    return tr("{reasons}. The mask says which rows exist; what says which columns do?", reasons=sentences(lines))


def check(path):
    from common import arrays, check as chk, lab
    from common.triton_support import triton
    from course.checks import guarded_output, load_module, outside_verdict, release
    from course.exercise import Verdict
    from course.exercises.phase3_checks import bad_rows, launched, padded, rows_text

    mod = load_module(path, "ex312")
    if isinstance(mod, Verdict):
        return mod
    rng = np.random.default_rng(312)
    right = []
    for rows, cols in CASES:
        what = f"{rows} x {cols}"
        # small integers: every sum is exact in fp32 in any order, so a difference is an indexing error
        x_host = rng.integers(1, 9, size=(rows, cols)).astype(np.float64)
        x = padded(x_host, "float32", lab.where(), fill=1.0)   # the memory after the array holds 1.0s
        y = guarded_output((rows,), "float32", x)       # NaN between NaN guard bands: a sum never written shows
        failed = launched(what, mod.rowsum_tile_kernel, (triton.cdiv(rows, mod.BLOCK_M),), x, y, rows, cols, cols,
                          BLOCK_M=mod.BLOCK_M, BLOCK_N=mod.BLOCK_N)
        failed = failed if failed is not None else outside_verdict(what, {"out": y})
        if failed is not None:
            release(y)
            return failed
        ref = x_host.sum(axis=1)
        if chk.compare(y, ref, "float32").ok:
            right.append(what)
            continue
        out = arrays.to_numpy(y).astype(np.float64)
        ok_before = tr(" (right at {shapes})", shapes=", ".join(right)) if right else ""
        return Verdict(False, f"{what}: {rows_text(bad_rows(out, ref, 'float32'), rows)}{ok_before}. "
                              + _diagnose(x_host, out, ref, cols, mod.BLOCK_N))
    return Verdict(True, tr("right at {shapes}: every lane of the tile loads only where its row AND its column exist - "
                            "a (BLOCK_M, 1) row mask broadcast against a (1, BLOCK_N) column mask - and the store only "
                            "where the row exists", shapes=", ".join(right)))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the row mask only',
     [('ok = row_ok[:, None] & (cols[None, :] < n_cols)', 'ok = row_ok[:, None]')],
     'rows wrong'),
    ('no mask on the store',
     [('tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)', 'tl.store(y_ptr + rows, tl.sum(acc, axis=1))')],
     'elements past the end of out'),
]
