"""Lab 4.6's Triton kernels: the naive version's row softmax, the flash forward, and the flash backward (delta, dK/dV,
dQ).

The three flash kernels walk the same kind of loop - one block of rows stays on chip while the other side's blocks
stream past, split into the blocks that need no mask and the few that do - and share what is truly the same in it
through the @triton.jit helpers below (the key ranges a query block walks, a tile load, the mask, the 16-bit
rounding of a tensor-core operand). What differs is said where it differs:
  * the forward and dQ walk KEY blocks for a query block (the same two ranges, _key_ranges); the forward keeps an
    online softmax (a running max and sum, the accumulator rescaled), dQ rebuilds P from the saved LSE instead;
  * dK/dV walks QUERY blocks for a key block, in three ranges (the causal diagonal block first), and works on the
    transposed tiles (P^T, dS^T) so that K_j and V_j stay the left operands of its dots.
Every exponential is a bare exp2: the softmax scale is folded into qk_scale = sm_scale x log2(e), and the LSE is kept
in natural log (the API's base) and converted once per row.
All three take q (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D) with group = Hq / Hkv query heads per key/value head
(grouped-query attention; the forward and dQ index K and V by h // group, dK/dV sums over the group in its own loop)
and Sq != Sk, the causal mask aligned bottom-right: query i attends key j when j <= i + shift, shift = Sk - Sq.
"""
from common.triton_support import tl, triton


@triton.jit
def naive_softmax_kernel(s_ptr, p_ptr, lse_ptr, seq, scale_log2, BLOCK: tl.constexpr, CAUSAL: tl.constexpr):
    # One program per row of the materialized S (B x H x S rows of S columns): read the row, mask, exp2, normalize,
    # write P and the row's LSE. 2 S elements of HBM traffic per row for ~5 S FLOPs: memory-bound by far.
    row = tl.program_id(0).to(tl.int64)
    i = row % seq                                           # the query index of this row
    cols = tl.arange(0, BLOCK)
    ok = cols < seq
    if CAUSAL:
        ok = ok & (cols <= i)
    x = tl.load(s_ptr + row * seq + cols, mask=ok, other=float("-inf")).to(tl.float32) * scale_log2
    m = tl.max(x, axis=0)
    e = tl.math.exp2(x - m)                                 # masked columns: exp2(-inf) = 0
    total = tl.sum(e, axis=0)
    p = tl.where(ok, e / total, 0.0)                       # masked: exactly 0, even in a row a NaN has poisoned
    tl.store(p_ptr + row * seq + cols, p.to(p_ptr.dtype.element_ty), mask=cols < seq)
    tl.store(lse_ptr + row, (m + tl.math.log2(total)) * 0.6931471805599453)


# ---------------------------------------------------------------------------------------------------------------------
# Helpers the three flash kernels share (inlined by the compiler: they cost nothing at run time)
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def _bf16_rn_as_fp32(x):
    # Interpreter only (UPCAST): fp32 -> the nearest bf16 (ties to even), kept in fp32. Triton 3.9's interpreter
    # truncates in x.to(tl.bfloat16), a biased rounding the GPU's cvt.rn.bf16 does not have.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + (0x7FFF + ((bits >> 16) & 1))) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _mma_operand(x, in_ty: tl.constexpr, UPCAST: tl.constexpr):
    # P and dS go to the tensor cores rounded to the input dtype (to nearest, as the GPU's cvt.rn does); in the
    # interpreter with bf16 (UPCAST) the same rounding by hand, the value kept in fp32 (see lab.py's _upcast)
    if UPCAST:
        y = _bf16_rn_as_fp32(x)
    else:
        y = x.to(in_ty)
    return y


@triton.jit
def _batch_head(n_heads):
    # grid axis 1 is batch x heads; the batch and head offsets are 64-bit (B x H x S x D may pass 2^31)
    bh = tl.program_id(1)
    b = (bh // n_heads).to(tl.int64)
    h = (bh % n_heads).to(tl.int64)
    return bh, b, h


@triton.jit
def _query_block(pid_m, seq_q, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # The query rows [m0, m0 + BLOCK_M) a program of the forward or dQ owns, the key and head-dim offsets of a tile
    # (BLOCK_D: the head dim rounded up to a power of two), and which of its rows lie inside Sq
    m0 = pid_m * BLOCK_M
    offs_m = m0 + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    row_ok = offs_m < seq_q
    return m0, offs_m, offs_n, offs_d, row_ok


@triton.jit
def _load_rows(base, rows, stride, cols, row_ok, MASKED: tl.constexpr, UPCAST: tl.constexpr,
               HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    # A (rows x BLOCK_D) tile of one head: row r at base + r x stride, its HEAD_DIM values contiguous. MASKED: rows
    # past S read as 0 (a whole tile inside S takes no mask at all). A head dim that is not a power of two (80, 96)
    # is padded to BLOCK_D with zero columns, which add nothing to any dot product. UPCAST: to fp32 for the
    # interpreter's tl.dot.
    ptrs = base + rows[:, None] * stride + cols[None, :]
    if BLOCK_D != HEAD_DIM:
        d_ok = cols[None, :] < HEAD_DIM
        if MASKED:
            x = tl.load(ptrs, mask=row_ok[:, None] & d_ok, other=0.0)
        else:
            x = tl.load(ptrs, mask=d_ok, other=0.0)
    elif MASKED:
        x = tl.load(ptrs, mask=row_ok[:, None], other=0.0)
    else:
        x = tl.load(ptrs)
    if UPCAST:
        x = x.to(tl.float32)
    return x


@triton.jit
def _key_ranges(m0, seq_k, shift, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    # The keys a query block [m0, m0 + BLOCK_M) walks (the forward's and dQ's loops), as two ranges:
    # [0, full_hi) needs no mask at all; [tail_lo, tail_hi) is masked. Causal, with the mask aligned bottom-right
    # (query i attends keys j <= i + shift, shift = Sk - Sq): the block's first row attends keys [0, m0 + shift], so
    # the whole tiles below m0 + shift + 1 are unmasked; the tiles up to the last row's key m0 + BLOCK_M - 1 + shift
    # are masked (BLOCK_M / BLOCK_N of them when shift is a multiple of BLOCK_N, one more otherwise); everything right
    # of them is skipped. A block whose rows attend no key at all (Sq > Sk) walks nothing. Both bounds are clamped at
    # 0 before dividing (// of a negative number is not floor division everywhere).
    # Non-causal: every whole tile is unmasked, only the ragged last one (Sk % BLOCK_N keys) is masked.
    if CAUSAL:
        full_hi = (tl.maximum(m0 + shift + 1, 0) // BLOCK_N) * BLOCK_N
        tail_lo = full_hi
        tail_hi = tl.minimum(m0 + BLOCK_M + shift, seq_k)
    else:
        full_hi = (seq_k // BLOCK_N) * BLOCK_N
        tail_lo = full_hi
        tail_hi = seq_k
    return full_hi, tail_lo, tail_hi


@triton.jit
def _phase_range(phase: tl.constexpr, full_hi, tail_lo, tail_hi):
    # [lo, hi) of the loop `phase` of a static_range(2): 0 the unmasked keys, 1 the masked ones (_key_ranges)
    if phase == 0:
        lo = 0
        hi = full_hi
    else:
        lo = tail_lo
        hi = tail_hi
    return lo, hi


@triton.jit
def _kv_tile(k_base, v_base, start_n, offs_n, offs_d, sk_s, sv_s, seq_k, MASKED: tl.constexpr, UPCAST: tl.constexpr,
             HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    # The K and V tiles of keys [start_n, start_n + BLOCK_N) (masked past Sk when MASKED), their key indices and mask
    offs_kn = start_n + offs_n
    col_ok = offs_kn < seq_k
    k = _load_rows(k_base, offs_kn, sk_s, offs_d, col_ok, MASKED, UPCAST, HEAD_DIM, BLOCK_D)
    v = _load_rows(v_base, offs_kn, sv_s, offs_d, col_ok, MASKED, UPCAST, HEAD_DIM, BLOCK_D)
    return offs_kn, col_ok, k, v


@triton.jit
def _kv_descriptors(k_base, v_base, sk_s, sv_s, seq_k, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_D: tl.constexpr):
    # TMA tensor descriptors of this program's K and V head: a (Sk x HEAD_DIM) matrix each, read in (BLOCK_N x
    # BLOCK_D) boxes. The copy engine fills a box's rows past Sk and columns past HEAD_DIM with zeros, so a descriptor
    # load needs no mask (the scores of keys past Sk are still masked to -inf in the last tile). Built on the device,
    # in a few bytes of global scratch the wrapper's allocator provides (triton.set_allocator).
    kd = tl.make_tensor_descriptor(k_base, shape=[seq_k, HEAD_DIM], strides=[sk_s, 1], block_shape=[BLOCK_N, BLOCK_D])
    vd = tl.make_tensor_descriptor(v_base, shape=[seq_k, HEAD_DIM], strides=[sv_s, 1], block_shape=[BLOCK_N, BLOCK_D])
    return kd, vd


@triton.jit
def _store_rows(base, rows, stride, cols, row_ok, x, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    # The rows of a (rows x BLOCK_D) tile that lie inside S, only their first HEAD_DIM columns
    mask = row_ok[:, None]
    if BLOCK_D != HEAD_DIM:
        mask = mask & (cols[None, :] < HEAD_DIM)
    tl.store(base + rows[:, None] * stride + cols[None, :], x, mask=mask)


@triton.jit
def _attends(q_idx, k_idx, in_bounds, shift, CAUSAL: tl.constexpr):
    # Which (query, key) pairs of a masked tile count: inside Sq x Sk, and (causal) key <= query + shift, the mask
    # aligned to the bottom-right corner (shift = Sk - Sq: the ordinary lower triangle when Sq = Sk). The broadcast
    # shapes of q_idx and k_idx decide the tile's orientation (queries down for the forward and dQ, across for dK/dV).
    keep = in_bounds
    if CAUSAL:
        keep = keep & (k_idx <= q_idx + shift)
    return keep


# ---------------------------------------------------------------------------------------------------------------------
# Flash forward
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def _fwd_kv(kd, vd, k_base, v_base, start_n, offs_n, offs_d, sk_s, sv_s, seq_k, MASKED: tl.constexpr,
            UPCAST: tl.constexpr, TMA: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr):
    # The forward's K and V tiles of keys [start_n, start_n + BLOCK_N): through the TMA descriptors (zero-filled past
    # Sk by the copy engine), or pointer loads (masked past Sk when MASKED)
    if TMA:
        k = kd.load([start_n, 0])
        v = vd.load([start_n, 0])
        if UPCAST:
            k = k.to(tl.float32)
            v = v.to(tl.float32)
    else:
        _, _, k, v = _kv_tile(k_base, v_base, start_n, offs_n, offs_d, sk_s, sv_s, seq_k, MASKED, UPCAST, HEAD_DIM,
                              BLOCK_D)
    return k, v


@triton.jit
def _fwd_step(qk, v, m_i, l_i, acc, qk_scale, offs_m, offs_kn, seq_k, shift, in_ty: tl.constexpr,
              MASKED: tl.constexpr, CAUSAL: tl.constexpr, UPCAST: tl.constexpr):
    # One key tile of the online softmax: fold the scores qk (and the tile's values v) of keys offs_kn into the running
    # maximum m_i, sum l_i and accumulator acc. MASKED: a tile that crosses the causal diagonal or Sk.
    if MASKED:
        keep = _attends(offs_m[:, None], offs_kn[None, :], (offs_kn < seq_k)[None, :], shift, CAUSAL)
        if CAUSAL:
            # Only here, not in the backward: 0 x NaN = NaN in the P V product, so a non-finite V row of
            # this diagonal tile would reach the rows before its key, which do not attend it. Zero it for the
            # product and carry it through the score instead (NaN for the rows that do attend it: those rows
            # come out NaN, as they must).
            v_bad = (v != v) | (tl.abs(v.to(tl.float32)) == float("inf"))
            row_bad = tl.max(v_bad.to(tl.int32), 1) > 0
            v = tl.where(v_bad, 0.0, v).to(v.dtype)
            qk = tl.where(keep & row_bad[None, :], float("nan"), qk)
        qk = tl.where(keep, qk, float("-inf"))
    # Every row that attends any key meets key 0 in the first tile it walks, so its m_new is finite from the
    # first step on. Only a causal row with no key at all (i + shift < 0, when Sq > Sk) sees -inf in every
    # (masked) tile: there m_new = -inf, and exp2(-inf - -inf) would be NaN, so such a row subtracts 0
    # instead - its p and alpha come out 0, and l_i, acc stay 0.
    m_new = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
    m_sub = m_new
    if CAUSAL:
        if MASKED:
            m_sub = tl.where(m_new == float("-inf"), 0.0, m_new)
    p = tl.math.exp2(qk * qk_scale - m_sub[:, None])
    alpha = tl.math.exp2(m_i - m_sub)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = tl.dot(_mma_operand(p, in_ty, UPCAST), v, acc)   # P rounded to the input dtype for the tensor cores
    return m_new, l_i, acc


@triton.jit
def attn_fwd_kernel(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr, qk_scale, n_heads, group, seq_q, seq_k,
                    sq_b, sq_h, sq_s, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s, so_b, so_h, so_s,
                    HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    CAUSAL: tl.constexpr, UPCAST: tl.constexpr, TMA: tl.constexpr = False, WS: tl.constexpr = False,
                    PIPE: tl.constexpr = False):
    # Flash attention forward. Program (i, bh): query rows [i BLOCK_M, (i+1) BLOCK_M) of query head bh (n_heads = Hq
    # of them), which reads key/value head h // group (grouped-query attention: group = Hq / Hkv query heads share
    # one K, V; the programs of a group read the same K/V tiles, which L2 serves after the first). qk_scale is the
    # softmax scale times log2(e), so every exponential is a bare exp2. The last dimension is contiguous; the batch,
    # head and sequence strides are arguments (strided views run without a copy); batch and head offsets are 64-bit.
    pid_m = tl.program_id(0)
    bh, b, h = _batch_head(n_heads)
    hk = h // group
    shift = seq_k - seq_q                                   # causal: query i attends keys j <= i + shift
    q_base = q_ptr + b * sq_b + h * sq_h
    k_base = k_ptr + b * sk_b + hk * sk_h
    v_base = v_ptr + b * sv_b + hk * sv_h
    m0, offs_m, offs_n, offs_d, row_ok = _query_block(pid_m, seq_q, BLOCK_M, BLOCK_N, BLOCK_D)
    q = _load_rows(q_base, offs_m, sq_s, offs_d, row_ok, True, UPCAST, HEAD_DIM, BLOCK_D)
    in_ty = q_ptr.dtype.element_ty
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)     # running row maximum (base-2 units, scaled)
    l_i = tl.zeros([BLOCK_M], tl.float32)                   # running row sum of 2^(s - m_i)
    acc = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # Two key ranges (_key_ranges): phase 0 without a mask, phase 1 masked; one loop body, unrolled twice at compile
    # time, so the unmasked tiles carry no compare-and-select at all.
    # Attempts at the Hopper gap to cuDNN, each a switch the tuner can pick (bench.py's FWD_CANDIDATES):
    #   TMA:  K and V tiles come through TMA descriptors (one thread issues a bulk copy of the whole box, zero-filled
    #         past the edges) instead of 256 threads' cp.async gathers: fewer issue slots and address registers.
    #   WS:   Triton's warp specialization of the key loop (tl.range(warp_specialize=True)): where the compiler
    #         applies it, the loop is split into a producer partition that only loads and consumer warps that only
    #         compute, as FlashAttention-3 does by hand. (Compile for sm_90 and look: Triton 3.6 marks the loop but
    #         does not partition it there - no ttg.warp_specialize op, no setmaxnreg - so on Hopper it is a no-op.)
    #   PIPE: the unmasked loop pipelined by hand, S of the next tile issued before the softmax of this one (below).
    full_hi, tail_lo, tail_hi = _key_ranges(m0, seq_k, shift, BLOCK_M, BLOCK_N, CAUSAL)
    kd = None
    vd = None
    if TMA:
        kd, vd = _kv_descriptors(k_base, v_base, sk_s, sv_s, seq_k, HEAD_DIM, BLOCK_N, BLOCK_D)
    for phase in tl.static_range(2):
        lo, hi = _phase_range(phase, full_hi, tail_lo, tail_hi)
        if PIPE and phase == 0:
            # PIPE: the unmasked tiles software-pipelined by hand - S_{j+1} = Q K_{j+1}^T is issued before the
            # softmax of S_j, so the tensor cores (wgmma runs asynchronously) work on the next tile while the exp2
            # units work on this one: the overlap FlashAttention-3 gets from its intra-warpgroup pipelining. Costs a
            # second score tile in registers.
            if hi > lo:
                k, v = _fwd_kv(kd, vd, k_base, v_base, lo, offs_n, offs_d, sk_s, sv_s, seq_k, False, UPCAST, TMA,
                               HEAD_DIM, BLOCK_D)
                qk = tl.dot(q, tl.trans(k))
                for start_n in range(lo + BLOCK_N, hi, BLOCK_N):
                    k_next, v_next = _fwd_kv(kd, vd, k_base, v_base, start_n, offs_n, offs_d, sk_s, sv_s, seq_k,
                                             False, UPCAST, TMA, HEAD_DIM, BLOCK_D)
                    qk_next = tl.dot(q, tl.trans(k_next))
                    m_i, l_i, acc = _fwd_step(qk, v, m_i, l_i, acc, qk_scale, offs_m, offs_n, seq_k, shift, in_ty,
                                              False, CAUSAL, UPCAST)
                    qk = qk_next
                    v = v_next
                m_i, l_i, acc = _fwd_step(qk, v, m_i, l_i, acc, qk_scale, offs_m, offs_n, seq_k, shift, in_ty,
                                          False, CAUSAL, UPCAST)
        else:
            for start_n in tl.range(lo, hi, BLOCK_N, warp_specialize=WS):
                k, v = _fwd_kv(kd, vd, k_base, v_base, start_n, offs_n, offs_d, sk_s, sv_s, seq_k, phase == 1,
                               UPCAST, TMA, HEAD_DIM, BLOCK_D)
                qk = tl.dot(q, tl.trans(k))
                m_i, l_i, acc = _fwd_step(qk, v, m_i, l_i, acc, qk_scale, offs_m, start_n + offs_n, seq_k, shift,
                                          in_ty, phase == 1, CAUSAL, UPCAST)
    if CAUSAL:
        # a row with no key (l_i = 0, acc = 0, m_i = -inf): O = 0 / 1 = 0 and LSE = -inf + log2(1) = -inf, as the
        # reference defines them. Every other row has l_i >= 1 (its maximum contributes 2^0).
        l_i = tl.where(l_i == 0.0, 1.0, l_i)
    acc = acc / l_i[:, None]
    _store_rows(o_ptr + b * so_b + h * so_h, offs_m, so_s, offs_d, row_ok, acc.to(o_ptr.dtype.element_ty), HEAD_DIM,
                BLOCK_D)
    tl.store(lse_ptr + bh.to(tl.int64) * seq_q + offs_m, (m_i + tl.math.log2(l_i)) * 0.6931471805599453,
             mask=row_ok)


# ---------------------------------------------------------------------------------------------------------------------
# Flash backward: delta, then dK/dV (a program per key block and key/value head), then dQ (a program per query block)
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def attn_bwd_delta_kernel(o_ptr, do_ptr, delta_ptr, n_heads, seq, so_b, so_h, so_s, sdo_b, sdo_h, sdo_s,
                          HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr):
    # delta_i = sum_d dO_id O_id = rowsum(P * dP) for row i: the term every dS element of the row subtracts (0 for a
    # row with no key: its O is 0).
    pid_m = tl.program_id(0)
    bh, b, h = _batch_head(n_heads)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    ok = offs_m < seq
    o = _load_rows(o_ptr + b * so_b + h * so_h, offs_m, so_s, offs_d, ok, True, False, HEAD_DIM, BLOCK_D)
    do = _load_rows(do_ptr + b * sdo_b + h * sdo_h, offs_m, sdo_s, offs_d, ok, True, False, HEAD_DIM, BLOCK_D)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(delta_ptr + bh.to(tl.int64) * seq + offs_m, delta, mask=offs_m < seq)


@triton.jit
def attn_bwd_dkdv_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr, sm_scale, qk_scale,
                         n_heads, group, seq_q, seq_k, sq_b, sq_h, sq_s, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s,
                         sdo_b, sdo_h, sdo_s,
                         HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         CAUSAL: tl.constexpr, UPCAST: tl.constexpr):
    # Program (j, bh) owns keys [j BLOCK_N, (j+1) BLOCK_N) of key/value head bh (n_heads / group = Hkv of them):
    # K_j and V_j stay on chip while the query blocks of each of the group's query heads stream past; P^T is rebuilt
    # from Q K_j^T and the saved LSE, dV_j += P^T dO, dS^T = P^T * (V_j dO^T - delta), dK_j += dS^T Q. Grouped-query
    # attention costs nothing extra here: dK_j and dV_j simply keep accumulating across the group's query heads (the
    # sum over the group that the chain rule asks for), with no atomics and nothing repeated in memory. Working on
    # the transposed tiles keeps K_j, V_j as the left operands. dK, dV are contiguous.
    pid_n = tl.program_id(0)
    n_kv_heads = n_heads // group
    bhk, b, hk = _batch_head(n_kv_heads)
    shift = seq_k - seq_q                                   # causal: query i attends keys j <= i + shift
    n0 = pid_n * BLOCK_N
    offs_n = n0 + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    col_ok = offs_n < seq_k
    k = _load_rows(k_ptr + b * sk_b + hk * sk_h, offs_n, sk_s, offs_d, col_ok, True, UPCAST, HEAD_DIM, BLOCK_D)
    v = _load_rows(v_ptr + b * sv_b + hk * sv_h, offs_n, sv_s, offs_d, col_ok, True, UPCAST, HEAD_DIM, BLOCK_D)
    in_ty = q_ptr.dtype.element_ty
    dk = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)
    # Unlike the forward and dQ (two key ranges for a query block), this loop walks QUERY blocks for a key block, in
    # three ranges: [diag_lo, diag_hi) the diagonal band (causal only, masked), [mid_lo, s_full) whole query blocks
    # that need no mask, [tail_lo, seq_q) the ragged last query block (masked). Causal, bottom-right aligned: the
    # first query that attends a key of the block is n0 - shift, the first that attends all of them
    # n0 + BLOCK_N - 1 - shift (rounded down and up to whole query blocks, clamped at 0 before dividing); the query
    # blocks before the band attend none of these keys and are skipped. BLOCK_N % BLOCK_M == 0. Keys past Sk (the
    # ragged last key block) need no mask of their own: a causal row never attends them, and in the unmasked tiles
    # they only fill rows of dK_j and dV_j that are never stored.
    s_full = (seq_q // BLOCK_M) * BLOCK_M
    if CAUSAL:
        diag_lo = (tl.maximum(n0 - shift, 0) // BLOCK_M) * BLOCK_M
        mid_lo = ((tl.maximum(n0 + BLOCK_N - 1 - shift, 0) + BLOCK_M - 1) // BLOCK_M) * BLOCK_M
        diag_hi = tl.minimum(mid_lo, seq_q)
    else:
        diag_lo = 0
        diag_hi = 0
        mid_lo = 0
    tail_lo = tl.maximum(s_full, mid_lo)
    offs_mb = tl.arange(0, BLOCK_M)
    for g in range(0, group):
        h = hk * group + g                                  # the query heads that read this key/value head
        q_base = q_ptr + b * sq_b + h * sq_h
        do_base = do_ptr + b * sdo_b + h * sdo_h
        row_base = (b * n_heads + h) * seq_q                # this query head's LSE and delta rows (64-bit)
        for phase in tl.static_range(3):
            if phase == 0:
                lo = diag_lo
                hi = diag_hi
            elif phase == 1:
                lo = mid_lo
                hi = s_full
            else:
                lo = tail_lo
                hi = seq_q
            for start_m in range(lo, hi, BLOCK_M):
                offs_m = start_m + offs_mb
                row_ok = offs_m < seq_q
                q = _load_rows(q_base, offs_m, sq_s, offs_d, row_ok, phase != 1, UPCAST, HEAD_DIM, BLOCK_D)
                do = _load_rows(do_base, offs_m, sdo_s, offs_d, row_ok, phase != 1, UPCAST, HEAD_DIM, BLOCK_D)
                if phase == 1:
                    lse2 = tl.load(lse_ptr + row_base + offs_m) * 1.4426950408889634
                    delta = tl.load(delta_ptr + row_base + offs_m)
                else:
                    lse2 = tl.load(lse_ptr + row_base + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
                    delta = tl.load(delta_ptr + row_base + offs_m, mask=row_ok, other=0.0)
                # P^T and dS^T: the transposes of dQ's P and dS (the LSE and delta broadcast across, not down). A
                # row with no key (LSE = -inf) appears only in a masked band tile: exp2 gives +inf there, and the
                # select below makes it 0 before anything multiplies it.
                p_t = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - lse2[None, :])
                if phase != 1:
                    keep = _attends(offs_m[None, :], offs_n[:, None], row_ok[None, :], shift, CAUSAL)
                    p_t = tl.where(keep, p_t, 0.0)          # a select, not a product: masked entries may be inf
                dv = tl.dot(_mma_operand(p_t, in_ty, UPCAST), do, dv)
                dp_t = tl.dot(v, tl.trans(do))
                ds_t = p_t * (dp_t - delta[None, :])
                dk = tl.dot(_mma_operand(ds_t, in_ty, UPCAST), q, dk)
    dk = dk * sm_scale
    head = bhk.to(tl.int64) * seq_k * HEAD_DIM
    _store_rows(dk_ptr + head, offs_n, HEAD_DIM, offs_d, col_ok, dk.to(dk_ptr.dtype.element_ty), HEAD_DIM, BLOCK_D)
    _store_rows(dv_ptr + head, offs_n, HEAD_DIM, offs_d, col_ok, dv.to(dv_ptr.dtype.element_ty), HEAD_DIM, BLOCK_D)


@triton.jit
def attn_bwd_dq_kernel(q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, sm_scale, qk_scale,
                       n_heads, group, seq_q, seq_k, sq_b, sq_h, sq_s, sk_b, sk_h, sk_s, sv_b, sv_h, sv_s,
                       sdo_b, sdo_h, sdo_s,
                       HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       CAUSAL: tl.constexpr, UPCAST: tl.constexpr):
    # Program (i, bh) owns query rows [i BLOCK_M, (i+1) BLOCK_M) of query head bh: Q_i, dO_i, LSE_i and delta_i stay
    # on chip while the K/V blocks of its key/value head h // group stream past (the forward's loop structure);
    # dQ_i += dS K. dQ is contiguous.
    pid_m = tl.program_id(0)
    bh, b, h = _batch_head(n_heads)
    hk = h // group
    shift = seq_k - seq_q
    k_base = k_ptr + b * sk_b + hk * sk_h
    v_base = v_ptr + b * sv_b + hk * sv_h
    row_base = bh.to(tl.int64) * seq_q
    m0, offs_m, offs_n, offs_d, row_ok = _query_block(pid_m, seq_q, BLOCK_M, BLOCK_N, BLOCK_D)
    q = _load_rows(q_ptr + b * sq_b + h * sq_h, offs_m, sq_s, offs_d, row_ok, True, UPCAST, HEAD_DIM, BLOCK_D)
    do = _load_rows(do_ptr + b * sdo_b + h * sdo_h, offs_m, sdo_s, offs_d, row_ok, True, UPCAST, HEAD_DIM, BLOCK_D)
    lse2 = tl.load(lse_ptr + row_base + offs_m, mask=row_ok, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + row_base + offs_m, mask=row_ok, other=0.0)
    in_ty = q_ptr.dtype.element_ty
    dq = tl.zeros([BLOCK_M, BLOCK_D], tl.float32)
    # The forward's two key ranges and masks; where the forward keeps a running max and rescales its accumulator,
    # dQ rebuilds P exactly from the saved LSE (no online softmax), and adds dP = dO V^T and dS to the loop body.
    # A row with no key (LSE = -inf) only ever meets masked tiles (or none): its exp2 is +inf there, selected to 0.
    full_hi, tail_lo, tail_hi = _key_ranges(m0, seq_k, shift, BLOCK_M, BLOCK_N, CAUSAL)
    for phase in tl.static_range(2):
        lo, hi = _phase_range(phase, full_hi, tail_lo, tail_hi)
        for start_n in range(lo, hi, BLOCK_N):
            offs_kn, col_ok, k, v = _kv_tile(k_base, v_base, start_n, offs_n, offs_d, sk_s, sv_s, seq_k, phase == 1,
                                             UPCAST, HEAD_DIM, BLOCK_D)
            p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - lse2[:, None])
            if phase == 1:
                p = tl.where(_attends(offs_m[:, None], offs_kn[None, :], col_ok[None, :], shift, CAUSAL), p, 0.0)
            dp = tl.dot(do, tl.trans(v))
            ds = p * (dp - delta[:, None])
            dq = tl.dot(_mma_operand(ds, in_ty, UPCAST), k, dq)    # dS rounded to the input dtype for the tensor cores
    dq = dq * sm_scale
    _store_rows(dq_ptr + row_base * HEAD_DIM, offs_m, HEAD_DIM, offs_d, row_ok, dq.to(dq_ptr.dtype.element_ty),
                HEAD_DIM, BLOCK_D)
