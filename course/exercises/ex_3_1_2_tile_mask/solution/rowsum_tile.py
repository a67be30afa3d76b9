"""Exercise 3.1.2, a solution: a 2-D tile needs a 2-D mask, the outer AND of "this row exists" and "this column
exists", built by broadcasting a column of row flags against a row of column flags."""
from common.triton_support import tl, triton

BLOCK_M, BLOCK_N = 16, 128


@triton.jit
def rowsum_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # Program p sums rows p * BLOCK_M ... p * BLOCK_M + BLOCK_M - 1, walking the columns in BLOCK_N steps; the
    # partial sums stay in a BLOCK_M x BLOCK_N register tile until the last step.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None] * row_stride + cols[None, :]
        ok = row_ok[:, None] & (cols[None, :] < n_cols)      # (BLOCK_M, 1) & (1, BLOCK_N) -> (BLOCK_M, BLOCK_N)
        acc += tl.load(ptrs, mask=ok, other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)
