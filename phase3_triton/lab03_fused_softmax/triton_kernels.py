"""Lab 3.3's Triton kernels: the fused softmax (whole rows in registers) and the online softmax (rows of any length).

Both compute exp in fp32 (16-bit data is widened on load and rounded on store) and subtract the row maximum first:
exp(x - max) <= 1 never overflows, where exp(89) is already inf in fp32.
"""
from common.triton_support import tl, triton


@triton.jit
def softmax_rows_kernel(x_ptr, y_ptr, n_rows, n_cols, x_row_stride, y_row_stride,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # BLOCK_M whole rows per program (1 for long rows), each held in registers from load to store: one read and one
    # write per element, the minimum. Masked lanes read -inf: they do not change the max and add exp(-inf) = 0 to the
    # sum. Prediction at 32768 x 4096: within ~10% of the HBM ceiling, like phase 2's hand-written single-pass kernel;
    # what is left is the pattern itself (a program's store waits for two block reductions after its loads).
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    # the input is read exactly once: ask L2 to evict it first, keeping room for data that is reused
    x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=float("-inf"),
                eviction_policy="evict_first").to(tl.float32)
    row_max = tl.max(x, axis=1)
    e = tl.exp(x - row_max[:, None])     # all -inf row: -inf - (-inf) = NaN, and the row stays NaN (documented)
    total = tl.sum(e, axis=1)
    y = e / total[:, None]
    tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask,
             cache_modifier=".cs")        # streaming store: the output is not re-read by this kernel


@triton.jit
def softmax_online_kernel(x_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, BLOCK_N: tl.constexpr):
    # One program per row, the row walked in BLOCK_N-column chunks. Pass 1 keeps the running max m and the running
    # sum s of exp(x - m); when a chunk raises the max, s is rescaled by exp(m_old - m_new). Pass 2 re-reads the row
    # and writes exp(x - m) / s. 3 row-passes of traffic (2 reads, 1 write) instead of the fused 2, but not 3 passes
    # of HBM traffic: pass 1 asks L2 to keep the row (evict_last), and the rows of the programs in flight (~132 SMs x
    # a few programs x one row) fit in L2 many times over, so pass 2's read is an L2 hit. Prediction: on long rows
    # (past what registers hold) close to the fused kernel; at 4096 columns it may even win, because its loads are
    # spread over a loop (the next chunk in flight while one is reduced) where the fused kernel's program waits for
    # its whole row before the first reduction. Too few rows (one program per row) leave SMs idle. Measured: the
    # tuning table (--tune) and README.md.
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK_N)
    x = tl.load(x_row + cols, mask=cols < n_cols, other=float("-inf"), eviction_policy="evict_last").to(tl.float32)
    m = tl.max(x, axis=0)
    # While every value so far is -inf, m = -inf and exp(x - m) would be exp(NaN): shift by 0 instead, which gives
    # exp(-inf) = 0 for those values and keeps s = 0 until a finite value arrives.
    m_shift = tl.where(m == float("-inf"), 0.0, m)
    s = tl.sum(tl.exp(x - m_shift), axis=0)
    for start in range(BLOCK_N, n_cols, BLOCK_N):
        offs = start + cols
        x = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf"), eviction_policy="evict_last").to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        m_shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        s = s * tl.exp(m - m_shift) + tl.sum(tl.exp(x - m_shift), axis=0)
        m = m_new
    inv = 1.0 / s                       # all -inf row: s = 0, m = -inf, and pass 2 writes NaN (0/0), as documented
    for start in range(0, n_cols, BLOCK_N):
        offs = start + cols
        # a new name: `x` is fp32 above, and a loop may not change a variable's type (a bf16 load would)
        xr = tl.load(x_row + offs, mask=offs < n_cols, other=float("-inf"), eviction_policy="evict_first")
        y = tl.exp(xr.to(tl.float32) - m) * inv
        tl.store(y_row + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n_cols, cache_modifier=".cs")
