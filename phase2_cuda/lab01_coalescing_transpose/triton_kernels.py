"""Lab 2.1's Triton kernel: the transpose, a program per tile, where the compiler does the shared-memory staging.

It stands beside the CUDA C ladder (kernels.cu) as the version a learner can run anywhere (the interpreter on the CPU).
"""
from common.triton_support import tl, triton


@triton.jit
def transpose_kernel(x_ptr, y_ptr, M, N, tiles_n, BM: tl.constexpr, BN: tl.constexpr):
    # One program per BM x BN tile, on a 1-D grid (no 65535 limit to care about). The load is laid out along N
    # (coalesced reads of x); the store goes through tl.trans, and the compiler converts the register layout through
    # shared memory (swizzled, conflict-free) so that the writes of y are coalesced too: the CUDA tiling, automated.
    pid = tl.program_id(0)
    pid_m = pid // tiles_n
    pid_n = pid % tiles_n
    rm = pid_m.to(tl.int64) * BM + tl.arange(0, BM)          # 64-bit: rm * N passes 2^31 on big matrices
    rn = pid_n.to(tl.int64) * BN + tl.arange(0, BN)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :], mask=(rm[:, None] < M) & (rn[None, :] < N))
    tl.store(y_ptr + rn[:, None] * M + rm[None, :], tl.trans(x), mask=(rn[:, None] < N) & (rm[None, :] < M))
