"""Exercise 3.1.2: row sums with a 2-D tile per program (BLOCK_M rows x BLOCK_N columns per step). It is right when
the row length is a multiple of BLOCK_N and wrong otherwise. Find which elements the tile reads that it should not,
then fix the mask."""
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
        acc += tl.load(ptrs, mask=row_ok[:, None], other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)
