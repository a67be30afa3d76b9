"""Exercise 4.6.1, a solution: the causal mask keeps key j for query i when j <= i - the diagonal included. With
j < i every query lost its own key: row 0 attended nothing (m = -inf, then 2^(-inf - -inf) = NaN, 0 / 0), and every
other row was the softmax over one key too few. The loop was right as it was: it reads every key tile and the mask
decides which keys count (exercise 4.6.2 makes a causal block stop after its diagonal tile).

q, k, v, o are (B*H, S, D) fp16 tensors, contiguous; one program owns BLOCK_M query rows of one head and streams the
keys past them in tiles of BLOCK_N with an online softmax (lab 4.6's attn_fwd_kernel, without its unmasked fast path).
"""
from common.triton_support import INTERPRETER, launch, tl, triton

LOG2E = 1.4426950408889634
# (BLOCK_M, BLOCK_N, num_warps, num_stages): small tiles in the interpreter, so the ragged and multi-tile paths run
CONFIG = (16, 16, 4, 1) if INTERPRETER else (128, 64, 8, 3)


@triton.jit
def flash_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, qk_scale, seq, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    pid_m = tl.program_id(0)
    base = tl.program_id(1).to(tl.int64) * seq * HEAD_DIM            # this head's (S, D) slab
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < seq
    q = tl.load(q_ptr + base + offs_m[:, None] * HEAD_DIM + offs_d[None, :], mask=row_ok[:, None], other=0.0)
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)                # running max (base 2, scaled)
    l_i = tl.zeros([BLOCK_M], tl.float32)                              # running sum of 2^(s - m_i)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    for start_n in range(0, seq, BLOCK_N):                              # every key tile, causal or not
        offs_kn = start_n + offs_n
        col_ok = offs_kn < seq
        kv_off = base + offs_kn[:, None] * HEAD_DIM + offs_d[None, :]
        k = tl.load(k_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + kv_off, mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * qk_scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (offs_kn[None, :] <= offs_m[:, None])            # query i attends keys 0 .. i
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
    """out = softmax(q k^T / sqrt(D) [causal]) v for (B*H, S, D) fp16 torch tensors (CPU ones in the interpreter)."""
    bh, seq, d = q.shape
    block_m, block_n, warps, stages = CONFIG
    launch(flash_fwd_kernel, (triton.cdiv(seq, block_m), bh), q, k, v, out, LOG2E / d ** 0.5, seq, HEAD_DIM=d,
           BLOCK_M=block_m, BLOCK_N=block_n, CAUSAL=causal, num_warps=warps, num_stages=stages)
    return out
