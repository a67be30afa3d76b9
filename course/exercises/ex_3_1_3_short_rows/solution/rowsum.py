"""Exercise 3.1.3, a solution: several rows per program (a BLOCK_M x BLOCK_N tile of 4096 elements), so a program
gets 16 KiB to load instead of one 512-byte row, each thread keeps 32 floats in flight instead of 4 bytes, and one
program's reduction and bookkeeping serve 32 rows. Long rows keep one row per program (BLOCK_M = 1 at 4096 columns):
the same kernel, the same speed there."""
from common.triton_support import launch, tl, triton

TILE = 4096              # elements per program and step: BLOCK_M rows x BLOCK_N columns


@triton.jit
def rowsum_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None] * row_stride + cols[None, :]
        acc += tl.load(ptrs, mask=row_ok[:, None] & (cols[None, :] < n_cols), other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)


def rowsum(x, out):
    """out[i] = the sum of row i of x: a C-contiguous 2-D fp32 array (CuPy on a GPU), out of length x.shape[0]."""
    rows, cols = (int(s) for s in x.shape)
    block_n = min(max(16, triton.next_power_of_2(cols)), TILE)
    block_m = max(1, min(TILE // block_n, triton.next_power_of_2(rows)))
    launch(rowsum_tile_kernel, (triton.cdiv(rows, block_m),), x, out, rows, cols, cols, BLOCK_M=block_m,
           BLOCK_N=block_n, num_warps=8 if block_n >= 2048 else 4)
    return out
