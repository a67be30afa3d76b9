"""연습 문제 3.2.1의 풀이: fp32로 누적하고, tile을 store할 때 한 번만 fp16으로 반올림합니다. fp16 값 두 개의 곱은
fp32에서 정확합니다(유효 비트 11 + 11개가 24개에 들어감). 그래서 남는 오차는 fp16 출력이 피할 수 없는 마지막 반올림
하나뿐입니다."""
from common.triton_support import tl, triton

BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # C의 BLOCK_M x BLOCK_N tile마다 program 하나(2차원 grid)이고, K는 BLOCK_K씩 훑습니다. 랩 3.2의 커널에서 grouped
    # 순서, pipelining flag, 64비트 offset을 뺀 것입니다.
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)     # 입력 dtype과 관계없이 유효 비트 24개
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K                              # K의 끝 너머의 0은 내적에 아무것도 더하지 않음
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)                               # tensor core에서 fp16 x fp16 -> fp32
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))
