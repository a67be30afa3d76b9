"""Lab 4.3's Triton kernel: the same GEMM with tl.dot (tensor cores: wgmma on sm_90, mma.sync on sm_80)."""
from common.triton_support import tile_offsets, tl, triton


@triton.jit
def tc_dot_kernel(a_ptr, b_ptr, c_ptr, M, N, K, lda, ldb, ldc,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  UPCAST: tl.constexpr):
    # grouped program order (the same L2 argument as the CUDA kernel's block order)
    rm, rn, rk = tile_offsets(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, False)
    a_rows = a_ptr + rm.to(tl.int64)[:, None] * lda           # 64-bit row offsets: M x lda may pass 2^31
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(a_rows + kk[None, :], mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk.to(tl.int64)[:, None] * ldb + rn[None, :], mask=(kk[:, None] < K) & (rn[None, :] < N),
                    other=0.0)
        if UPCAST:
            # interpreter only: Triton 3.9's interpreter multiplies the raw bits of bf16 tiles in tl.dot
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)          # 16-bit inputs: tensor cores (wgmma on sm_90, mma.sync on sm_80), fp32 acc
    c_off = rm.to(tl.int64)[:, None] * ldc + rn[None, :]
    tl.store(c_ptr + c_off, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))
