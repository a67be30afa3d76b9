"""연습 문제 3.1.2의 풀이: 2차원 tile에는 2차원 mask가 필요합니다. "이 행이 있다"와 "이 열이 있다"의 외적 AND이고,
행 flag의 열 하나를 열 flag의 행 하나에 broadcast해서 만듭니다."""
from common.triton_support import tl, triton

BLOCK_M, BLOCK_N = 16, 128


@triton.jit
def rowsum_tile_kernel(x_ptr, y_ptr, n_rows, n_cols, row_stride, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # program p는 행 p * BLOCK_M ... p * BLOCK_M + BLOCK_M - 1을 더하고, 열은 BLOCK_N씩 훑습니다. 부분합은 마지막
    # step까지 BLOCK_M x BLOCK_N register tile에 머뭅니다.
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N)
        ptrs = x_ptr + rows[:, None] * row_stride + cols[None, :]
        ok = row_ok[:, None] & (cols[None, :] < n_cols)      # (BLOCK_M, 1) & (1, BLOCK_N) -> (BLOCK_M, BLOCK_N)
        acc += tl.load(ptrs, mask=ok, other=0.0).to(tl.float32)
    tl.store(y_ptr + rows, tl.sum(acc, axis=1), mask=row_ok)
