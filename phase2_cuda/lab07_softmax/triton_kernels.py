"""Lab 2.7's Triton kernel: online softmax, a program per row, the row streamed in tiles (any length).

It stands beside the CUDA C ladder as the reference point a learner can run anywhere (the interpreter on the CPU);
the tuned Triton fused softmax is phase 3's lab (phase3_triton/lab03_fused_softmax).
"""
from common.triton_support import tl, triton


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    xr = x_ptr + row * cols
    yr = y_ptr + row * cols
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)     # one (m, d) pair per lane of the tile
    d = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        idx = start + offs
        x = tl.load(xr + idx, mask=idx < cols, other=float("-inf")).to(tl.float32)
        mn = tl.maximum(m, x)
        safe = tl.where(mn == float("-inf"), 0.0, mn)   # keeps exp(-inf - -inf) = NaN out of the empty lanes
        d = d * tl.exp(m - safe) + tl.exp(x - safe)
        m = mn
    mrow = tl.max(m, axis=0)
    msafe = tl.where(mrow == float("-inf"), 0.0, mrow)
    # a lane that only ever saw NaN keeps m = -inf (tl.maximum drops NaN) but d = NaN: keep that NaN (d != d) so a
    # NaN input makes the whole row NaN, as the float64 reference and torch do
    drow = tl.sum(tl.where((m == float("-inf")) & (d == d), 0.0, d * tl.exp(m - msafe)), axis=0)
    for start in range(0, cols, BLOCK):
        idx = start + offs
        mask = idx < cols
        x = tl.load(xr + idx, mask=mask, other=float("-inf")).to(tl.float32)
        y = tl.exp(x - mrow) / drow                      # an all -inf row: exp(NaN) / 0 = NaN, by convention
        tl.store(yr + idx, y.to(y_ptr.dtype.element_ty), mask=mask)

