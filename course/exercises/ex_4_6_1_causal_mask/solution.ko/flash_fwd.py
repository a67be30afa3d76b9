"""연습 문제 4.6.1의 풀이: causal mask는 j <= i일 때 query i에 key j를 남깁니다. 대각선도 포함입니다. j < i이면 모든
query가 자기 key를 잃었습니다. 0행은 아무것도 보지 못했고(m = -inf, 그다음 2^(-inf - -inf) = NaN, 0 / 0), 나머지
행은 모두 key 하나가 모자란 softmax였습니다. loop는 원래대로 맞았습니다. loop는 모든 key tile을 읽고, 어느 key를 셀지는
mask가 정합니다(연습 문제 4.6.2에서는 causal block이 대각선 tile 다음에서 멈추게 합니다).

q, k, v, o는 연속된 (B*H, S, D) fp16 tensor입니다. program 하나가 한 head의 query 행 BLOCK_M개를 맡고, 그 앞으로 key를
BLOCK_N개씩 tile로 흘려보내며 online softmax를 계산합니다(랩 4.6의 attn_fwd_kernel에서 mask 없는 빠른 경로를 뺀 것).
"""
from common.triton_support import INTERPRETER, launch, tl, triton

LOG2E = 1.4426950408889634
# (BLOCK_M, BLOCK_N, num_warps, num_stages): interpreter에서는 작은 tile을 써서 들쭉날쭉한 경로와
# 여러 tile 경로가 돌게 함
CONFIG = (16, 16, 4, 1) if INTERPRETER else (128, 64, 8, 3)


@triton.jit
def flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, seq, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * seq * HEAD_DIM            # 이 head의 (S, D) 조각
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)                # 누적 최댓값(밑 2, scale 적용)
    l_i = tl.zeros([BLOCK_M], tl.float32)                              # 2^(s - m_i)의 누적 합
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, seq, BLOCK_N):                              # causal이든 아니든 모든 key tile
        offs_kn = start_n + offs_n
        col_ok = offs_kn < seq
        kv_off = base + offs_kn[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_kn[None, :] <= offs_m[:, None])            # query i는 key 0 .. i를 봄
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(o_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], acc.to(tl.float16), mask=row_ok[:, None])


def flash_forward(q, k, v, out, causal: bool):
    """(B*H, S, D) fp16 torch tensor(interpreter에서는 CPU tensor)에 out = softmax(q k^T / sqrt(D) [causal]) v."""
    bh, seq, d = q.shape
    block_m, block_n, warps, stages = CONFIG
    launch(flash_fwd_kernel, (triton.cdiv(seq, block_m), bh), q, k, v, out, LOG2E / d ** 0.5, seq, HEAD_DIM=d,
           BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, num_warps=warps, num_stages=stages)
    return out
