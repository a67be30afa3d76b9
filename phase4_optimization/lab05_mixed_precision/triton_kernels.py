"""Lab 4.5's Triton kernels: one tl.dot GEMM whose accumulator dtype is a constexpr, and a softmax and a layernorm
that keep their sums in the 16-bit input type (the naive way, for comparison with phase 3's fp32-inside kernels)."""
from common.triton_support import tl, triton


@triton.jit
def dot_acc_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                   BLOCK_K: tl.constexpr, ACC_F16: tl.constexpr):
    # one program per BLOCK_M x BLOCK_N tile of C; A, B, C contiguous row-major; ragged edges masked with zeros
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * K + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None].to(tl.int64) * N + offs_n[None, :]
    m_ok = offs_m[:, None] < M
    n_ok = offs_n[None, :] < N
    if ACC_F16:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)
    else:
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < K - k0), other=0.0)
        # the accumulator's dtype is the lesson: with out_dtype fp16 the tensor cores round the running sum to
        # 11 bits after every MMA (HMMA.F16 / wgmma .f16 instead of .f32)
        if ACC_F16:
            acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        else:
            acc = tl.dot(a, b, acc, out_dtype=tl.float32)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N
    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * N + offs_n[None, :]
    tl.store(c_ptrs, acc.to(tl.float32), mask=m_ok & n_ok)


@triton.jit
def softmax_lowp_kernel(x_ptr, y_ptr, n_cols, CHUNK: tl.constexpr):
    # One program per row, walked in CHUNK-wide pieces. Every intermediate has the input's type: x - max, exp(.)
    # rounded at once (Triton's exp runs in fp32), the running sums (CHUNK lanes, each adding n_cols / CHUNK terms
    # one after another), the final tree sum (dtype=) and the division.
    lo = x_ptr.dtype.element_ty
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, CHUNK)
    m = tl.full((CHUNK,), float("-inf"), lo)
    for start in range(0, n_cols, CHUNK):
        m = tl.maximum(m, tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))).to(lo)
    row_max = tl.max(m, axis=0)
    s = tl.zeros((CHUNK,), lo)
    for start in range(0, n_cols, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        # each add rounded back to 16 bits (Triton 3.6 on the GPU computes bf16 + bf16 in fp32: keep the loop type)
        s = (s + tl.exp((x - row_max).to(tl.float32)).to(lo)).to(lo)
    total = tl.sum(s, axis=0, dtype=lo)
    for start in range(0, n_cols, CHUNK):
        x = tl.load(x_row + start + cols, mask=start + cols < n_cols, other=float("-inf"))
        e = tl.exp((x - row_max).to(tl.float32)).to(lo)
        tl.store(y_row + start + cols, (e / total).to(lo), mask=start + cols < n_cols)


@triton.jit
def layernorm_lowp_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps, CHUNK: tl.constexpr):
    # The layernorm forward of phase 3 lab 4 with its fp32 accumulators replaced by the input's type: the sum for
    # the mean and the sum of centred squares run in CHUNK lanes of 16-bit values, then a 16-bit tree sum.
    lo = x_ptr.dtype.element_ty
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    cols = tl.arange(0, CHUNK)
    s = tl.zeros((CHUNK,), lo)
    for start in range(0, n_cols, CHUNK):
        s = (s + tl.load(x_row + start + cols, mask=start + cols < n_cols, other=0.0)).to(lo)
    mean = (tl.sum(s, axis=0, dtype=lo) / n_cols).to(lo)
    v = tl.zeros((CHUNK,), lo)
    for start in range(0, n_cols, CHUNK):
        ok = start + cols < n_cols
        xc = tl.where(ok, tl.load(x_row + start + cols, mask=ok, other=0.0) - mean, 0.0).to(lo)
        v = (v + (xc * xc).to(lo)).to(lo)
    var = (tl.sum(v, axis=0, dtype=lo) / n_cols).to(lo)
    rstd = (1.0 / tl.sqrt(var.to(tl.float32) + eps)).to(lo)
    for start in range(0, n_cols, CHUNK):
        ok = start + cols < n_cols
        x = tl.load(x_row + start + cols, mask=ok, other=0.0)
        w = tl.load(w_ptr + start + cols, mask=ok, other=0.0)
        b = tl.load(b_ptr + start + cols, mask=ok, other=0.0)
        y = ((x - mean) * rstd).to(lo) * w + b
        tl.store(y_row + start + cols, y.to(lo), mask=ok)
