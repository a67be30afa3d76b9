"""Lab 2.8's Triton kernel: the same SGEMM, tiles chosen by the compiler, fp32 FMAs forced with input_precision="ieee"
(not TF32 tensor cores), beside the CUDA C ladder as the point a learner can run anywhere (the interpreter on the CPU).
The tuned Triton matmul is phase 3's lab (phase3_triton/lab02_matmul)."""
from common.triton_support import grouped_tile, tl, triton


@triton.jit(do_not_specialize=["M", "N", "K"])
def sgemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc, alpha, beta, BETA_ZERO: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # Programs are numbered so that GROUP_M consecutive ones walk down a column of C tiles: they share the panel of B
    # they read while it is still in L2 (the launch-order swizzle of Triton's matmul tutorial).
    pid_m, pid_n = grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, GROUP_M)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_rows = rm.to(tl.int64)[:, None] * lda                # 64-bit offsets: M * K can pass 2^31
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_ptr + a_rows + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk.to(tl.int64)[:, None] * ldb + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")   # fp32 FMAs, not TF32 tensor cores
    c_off = rm.to(tl.int64)[:, None] * ldc + rn[None, :]
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    c = acc * alpha
    if not BETA_ZERO:                                      # beta == 0 never reads C
        c += beta * tl.load(c_ptr + c_off, mask=mask, other=0.0)
    tl.store(c_ptr + c_off, c, mask=mask)
