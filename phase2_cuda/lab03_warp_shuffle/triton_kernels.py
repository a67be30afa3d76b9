"""Lab 2.3's Triton kernels: the same reduce-then-scan decomposition with tl.sum and tl.cumsum on [SEGS_T, 32] blocks
(the compiler picks the shuffles), so the two CUDA C ladders have a neighbour a learner can run anywhere."""
from common.triton_support import tl, triton


@triton.jit
def segment_sum_kernel(x_ptr, sums_ptr, n, SEGS_T: tl.constexpr):
    g = tl.program_id(0).to(tl.int64) * SEGS_T + tl.arange(0, SEGS_T)     # segment indices of this program
    i = g[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.store(sums_ptr + g, tl.sum(x, axis=1), mask=g * 32 < n)


@triton.jit
def segment_scan_kernel(x_ptr, offsets_ptr, y_ptr, n, SEGS_T: tl.constexpr):
    g = tl.program_id(0).to(tl.int64) * SEGS_T + tl.arange(0, SEGS_T)
    i = g[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    prev = tl.load(offsets_ptr + tl.maximum(g - 1, 0), mask=(g > 0) & (g * 32 < n), other=0.0)
    tl.store(y_ptr + i, tl.cumsum(x, axis=1) + prev[:, None], mask=i < n)
