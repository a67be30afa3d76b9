"""Lab 2.5's Triton kernel: the column normalization, where Triton decides the registers itself - the per-thread work is
set by the tile shape and num_warps rather than by a WORK macro."""
from common.triton_support import tl, triton


@triton.jit
def colnorm_kernel(x_ptr, y_ptr, rows, cols, ROWS_P2: tl.constexpr, BLOCK_C: tl.constexpr):
    # Triton decides the registers itself: a [ROWS_P2, BLOCK_C] tile spread over num_warps warps, so the per-thread
    # work is ROWS_P2 * BLOCK_C / (32 * num_warps) values, the same trade-off as WORK, chosen by the block shape.
    c = tl.program_id(0).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    r = tl.arange(0, ROWS_P2)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None].to(tl.int64) * cols + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    s = tl.sum(x * x, axis=0)
    inv = 1.0 / tl.sqrt(tl.where(c < cols, s, 1.0))        # columns past the end: no 0/0 in the interpreter
    tl.store(y_ptr + offs, x * inv[None, :], mask=mask)
