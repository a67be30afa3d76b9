"""Exercise 3.4.1, a solution: LayerNorm normalizes by the population variance of the row, sum((x - mean)^2) / N
(numpy.var's default ddof=0, torch.nn.functional.layer_norm's definition), not the sample variance over N - 1."""
from common.triton_support import tl, triton


@triton.jit
def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, row_stride, eps,
                         BLOCK_N: tl.constexpr):
    # One program per row, the whole row in registers (BLOCK_N: n_cols rounded up to a power of two), fp32 arithmetic.
    # Saves mean and rstd = 1 / sqrt(var + eps) per row for the backward.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=ok, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(ok, x - mean, 0.0)                      # centred: no cancellation when the mean is large
    var = tl.sum(xc * xc, axis=0) / n_cols                # the population (biased) variance: LayerNorm's definition
    rstd = 1.0 / tl.sqrt(var + eps)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=ok)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
