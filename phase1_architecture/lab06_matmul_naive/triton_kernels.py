"""Lab 1.6's Triton kernel: one program per BLOCK_M x BLOCK_N output tile, tl.dot on tiles that Triton stages through
shared memory and registers for you (phase 2 builds that by hand in CUDA C), in true fp32 ("ieee": no TF32)."""
from common.triton_support import tl, triton


@triton.jit
def matmul_tile_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A 1-D grid over tiles (row-major order): no grid-dimension limit, any M and N.
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)      # 64-bit: row * stride can pass 2^31
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # masks make any M, N, K legal: out-of-range rows/columns/k read as 0 and add nothing
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")             # "ieee": true fp32 FMAs, no TF32
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
