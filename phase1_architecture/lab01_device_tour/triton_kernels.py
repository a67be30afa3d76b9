"""Lab 1.1's Triton kernel: a copy, the bandwidth probe (zero FLOPs per byte: its time is bytes / bandwidth)."""
from common.triton_support import tl, triton


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    # One program copies BLOCK consecutive elements; the 64-bit program id keeps offsets right past 2^31 elements.
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
