"""Lab 4.7's own Triton kernels, for the training step only (backward.py launches them): the fusions the backward
needs that the earlier labs' kernels do not offer. The forward still writes no kernel of its own.

  grad_gemm_kernel      C = A @ B with any strides (A^T and B^T are views, no copy): lab 3.2's K step (load_k_step,
                        the same main loop lab 4.2's fused GEMM runs) with the epilogues the training step needs -
                        EPI_GELU_KEEP (forward FC: z = A W + b stored AND gelu_tanh(z) stored, so the backward has
                        the pre-activation without recomputing a GEMM), EPI_DGELU (dZ = (dY W^T) * gelu_tanh'(z)),
                        COLSUM (each program's column sums of its C tile, the first level of a bias gradient), and
                        SPLIT_K (fp32 partial tiles summed by colsum_kernel: a weight gradient whose output has
                        fewer tiles than the GPU has SMs). Lab 4.2's linear() takes contiguous x and W only, and its
                        epilogue has no derivative, so these are new;
  ln_bwd_residual_kernel  lab 3.4's layernorm backward (the same G persistent programs over strided rows and partial
                        dw/db rows) with the residual stream's gradient added to dx and up to two more column sums (a
                        bias gradient of a neighbouring GEMM) taken while the rows are in registers;
  pack_qkv_grad_kernel  lab 4.6's dQ, dK, dV (contiguous (B, H, S, D) each, all its backward writes) into the (M, 3d)
                        matrix the QKV GEMMs read, with the bias gradient's column sums on the way;
  dgelu_colsum_kernel   dZ = dF * gelu_tanh'(z) as a pass of its own, with grad_gemm_kernel's COLSUM rows: the
                        second half of the proj dX stage when its GEMM runs on lab 4.3's wgmma kernel, which has no
                        derivative in its epilogue;
  colsum_kernel         the second level of every column sum above (and of split-K): sums P partial rows.
"""
from common.triton_support import fast_div, grouped_tile, tl, triton
# the GEMM's main loop is lab 3.2's K step (lab 4.2's fused GEMM walks K with it too)
from phase3_triton.lab02_matmul.triton_kernels import load_k_step
# gelu_tanh: lab 4.2's, so that the training forward's F is the inference forward's
from phase4_optimization.lab02_fusion.triton_kernels import gelu_tanh

EPI_NONE, EPI_GELU_KEEP, EPI_DGELU = 0, 1, 2       # grad_gemm_kernel's EPI


@triton.jit
def _gelu_tanh_grad(z):
    # d/dz of gelu_tanh (lab 4.2's, 0.5 z (1 + tanh(u)), u = c (z + a z^3)): with s = sigmoid(2u) = (1 + tanh u) / 2
    # (so 1 - tanh^2 u = 4 s (1 - s)), gelu'(z) = s + 2 z s (1 - s) c (1 + 3 a z^2) - no 1 + tanh cancellation. s
    # from gelu_tanh's exp2 (log2 e folded into its constants) and one approximate division; 2 c and 6 c a folded
    # too: per element 5 multiplies, 3 FMAs, 2 adds and 2 MUFU (ex2, rcp)
    z2 = z * z
    s = fast_div(1.0, 1.0 + tl.exp2(z * (-2.302208198144325 + -0.1029432395800235 * z2)))
    q = z * (1.5957691216057308 + 0.21406444881780076 * z2)     # 2 c z (1 + 3 a z^2)
    return tl.fma(q * s, 1.0 - s, s)


@triton.jit
def grad_gemm_kernel(a_ptr, b_ptr, c_ptr, z_ptr, bias_ptr, part_ptr, M, N, K,
                     stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                     EPI: tl.constexpr, HAS_BIAS: tl.constexpr, COLSUM: tl.constexpr, SPLIT_K: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                     EVEN_K: tl.constexpr, EVEN_MN: tl.constexpr, INDEX_64: tl.constexpr, UPCAST: tl.constexpr):
    # One program per (C tile, K slice), tiles in lab 3.2's grouped order. A is (M, K), B (K, N), each with its own
    # two strides: a weight gradient reads A = X^T (stride_am = 1: the tile's contiguous axis is M, which wgmma takes
    # as a transposed operand from shared memory), an input gradient reads B = W^T (stride_bk = 1). An integer
    # argument equal to 1 is specialized by Triton, so the unit stride is known at compile time and the loads stay
    # 16-byte vectors along it. C is row-major with row stride stride_cm (z, when used, has C's layout).
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    pid = tl.program_id(0)
    tile = pid % tiles
    split = pid // tiles
    pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INDEX_64:
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
        offs_k = offs_k.to(tl.int64)
    m_ok = offs_m < M
    n_ok = offs_n < N
    # the K slice [k_lo, k_lo + k_len): all of K (k_lo = 0 at compile time, so the loads' alignment is known), or
    # SPLIT_K slices of whole BLOCK_K steps (the last one shorter, or empty)
    if SPLIT_K > 1:
        chunk = tl.cdiv(tl.cdiv(K, SPLIT_K), BLOCK_K) * BLOCK_K
        k_lo = split * chunk
        k_len = tl.minimum(K - k_lo, chunk)
    else:
        k_lo = 0
        k_len = K
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + (k_lo + offs_k)[None, :] * stride_ak
    b_ptrs = b_ptr + (k_lo + offs_k)[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(k_len, BLOCK_K)):
        a, b = load_k_step(a_ptrs, b_ptrs, m_ok[:, None], n_ok[None, :], offs_k, k_len - kk * BLOCK_K, EVEN_K,
                           EVEN_MN, UPCAST)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    mask = m_ok[:, None] & n_ok[None, :]
    if SPLIT_K > 1:
        # an fp32 partial tile, row `split` of a (SPLIT_K, M N) buffer; colsum_kernel adds the slices and rounds once
        p_offs = tl.cast(split, tl.int64) * M * N + offs_m[:, None] * N + offs_n[None, :]
        tl.store(part_ptr + p_offs, acc, mask=mask)
    else:
        c_offs = offs_m[:, None] * stride_cm + offs_n[None, :]
        if HAS_BIAS:
            acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]
        if EPI == 1:
            # forward FC for training: the pre-activation z is kept (rounded, as every stored activation is) for
            # the backward's gelu'(z), and C = gelu_tanh(z) from the fp32 value, as lab 4.2's epilogue computes it
            tl.store(z_ptr + c_offs, acc.to(z_ptr.dtype.element_ty), mask=mask)
            acc = gelu_tanh(acc)
        if EPI == 2:
            # backward through the GELU: dZ = (dY W_proj^T) * gelu'(z), z read once, in the epilogue, where the
            # product is still in registers (unfused: dF written, then read with z and dZ written: 3 M 4d more)
            z = tl.load(z_ptr + c_offs, mask=mask, other=0.0).to(tl.float32)
            acc = acc * _gelu_tanh_grad(z)
        c = acc.to(c_ptr.dtype.element_ty)
        if EVEN_MN:
            tl.store(c_ptr + c_offs, c)
        else:
            tl.store(c_ptr + c_offs, c, mask=mask)
        if COLSUM:
            # the bias gradient's first level: this tile's column sums of the STORED (rounded) C, the values the
            # next GEMMs read, into row pid_m of a (cdiv(M, BLOCK_M), N) fp32 buffer. A reduction across the
            # tile's rows in the epilogue: no extra pass over C
            sums = tl.sum(tl.where(m_ok[:, None], c.to(tl.float32), 0.0), axis=0)
            tl.store(part_ptr + tl.cast(pid_m, tl.int64) * N + offs_n, sums, mask=n_ok)


@triton.jit
def ln_bwd_residual_kernel(x_ptr, w_ptr, dy_ptr, res_ptr, mean_ptr, rstd_ptr, dx_ptr, part_ptr, n_rows, n_cols,
                           BLOCK_N: tl.constexpr, SUM_RES: tl.constexpr, SUM_OUT: tl.constexpr,
                           N_SUMS: tl.constexpr):
    # Lab 3.4's layernorm_bwd_kernel (program g of G takes rows g, g + G, ...; dx from the row's two sums; its own
    # partial dw/db rows, summed by a second kernel) with three additions that save whole passes over (M, d):
    #   dx += res: the residual stream's gradient (the block's skip connections: dH = dY + LN2'(dG), dX = dH +
    #   LN1'(dA)), so dx leaves once, complete;
    #   SUM_RES: column sums of res; SUM_OUT: column sums of the stored dx - the bias gradients of the GEMMs whose
    #   output gradient these are (LN2's pass gives b_proj's from dY and b_o's from dH).
    # Partial rows: part[g] = [dw | db | (sum res) | (sum dx)], N_SUMS pieces of n_cols fp32 (N_SUMS = 2 + SUM_RES +
    # SUM_OUT, from the wrapper). Rows contiguous, one row a step.
    pid = tl.program_id(0)
    n_prog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < n_cols
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    dw = tl.zeros((BLOCK_N,), dtype=tl.float32)
    db = tl.zeros((BLOCK_N,), dtype=tl.float32)
    sr = tl.zeros((BLOCK_N,), dtype=tl.float32)
    so = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for row in range(pid, n_rows, n_prog):
        base = tl.cast(row, tl.int64) * n_cols
        x = tl.load(x_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        dy = tl.load(dy_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        r = tl.load(res_ptr + base + cols, mask=ok, other=0.0).to(tl.float32)
        mean = tl.load(mean_ptr + row)
        rstd = tl.load(rstd_ptr + row)
        xhat = tl.where(ok, (x - mean) * rstd, 0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / n_cols
        c2 = tl.sum(wdy, axis=0) / n_cols
        out = ((wdy - (xhat * c1 + c2)) * rstd + r).to(dx_ptr.dtype.element_ty)
        tl.store(dx_ptr + base + cols, out, mask=ok)
        dw += dy * xhat
        db += dy
        if SUM_RES:
            sr += r
        if SUM_OUT:
            so += tl.where(ok, out.to(tl.float32), 0.0)
    part = part_ptr + tl.cast(pid, tl.int64) * N_SUMS * n_cols
    tl.store(part + cols, dw, mask=ok)
    tl.store(part + n_cols + cols, db, mask=ok)
    if SUM_RES:
        tl.store(part + 2 * n_cols + cols, sr, mask=ok)
    if SUM_OUT:
        tl.store(part + (N_SUMS - 1) * n_cols + cols, so, mask=ok)


@triton.jit
def pack_qkv_grad_kernel(src_ptr, dst_ptr, part_ptr, seq, n_heads, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr,
                         BLOCK_S: tl.constexpr):
    # Program (i, b H + h, w) moves rows [i BLOCK_S, (i+1) BLOCK_S) of head h of batch b of dQ (w = 0), dK (1) or
    # dV (2) - src is (3, B, H, S, D), contiguous, what lab 4.6's backward writes - to dst, the (B S, 3 d) matrix laid
    # out as the forward's QKV output (B, S, 3, H, D); and stores the rows' column sums (b_qkv's gradient, first
    # level) in partial row b cdiv(S, BLOCK_S) + i of a (B cdiv(S, BLOCK_S), 3 d) fp32 buffer.
    pid_s = tl.program_id(0)
    bh = tl.program_id(1)
    w = tl.program_id(2)
    n_batch = tl.num_programs(1) // n_heads
    b = bh // n_heads
    h = bh % n_heads
    d_model = n_heads * HEAD_DIM
    rows = pid_s * BLOCK_S + tl.arange(0, BLOCK_S)
    cols = tl.arange(0, BLOCK_D)
    col_ok = cols < HEAD_DIM
    mask = (rows < seq)[:, None] & col_ok[None, :]
    src = src_ptr + tl.cast((w * n_batch + b) * n_heads + h, tl.int64) * seq * HEAD_DIM
    t = tl.load(src + rows[:, None] * HEAD_DIM + cols[None, :], mask=mask, other=0.0)
    dst_rows = tl.cast(b * seq + rows, tl.int64) * (3 * d_model)
    tl.store(dst_ptr + dst_rows[:, None] + (w * d_model + h * HEAD_DIM) + cols[None, :], t, mask=mask)
    sums = tl.sum(tl.where(mask, t.to(tl.float32), 0.0), axis=0)
    prow = tl.cast(b * tl.num_programs(0) + pid_s, tl.int64)
    tl.store(part_ptr + prow * (3 * d_model) + w * d_model + h * HEAD_DIM + cols, sums, mask=col_ok)


@triton.jit
def dgelu_colsum_kernel(df_ptr, z_ptr, dz_ptr, part_ptr, M, N, BLOCK_R: tl.constexpr, SUB_R: tl.constexpr,
                        BLOCK_C: tl.constexpr):
    # Program (i, j) takes rows [i BLOCK_R, (i+1) BLOCK_R) and columns [j BLOCK_C, (j+1) BLOCK_C) of the row-major
    # (M, N) dF, z and dZ, SUB_R rows a step: dZ = dF * gelu'(z) rounded once, and the column sums of the stored
    # (rounded) dZ into row i of a (cdiv(M, BLOCK_R), N) fp32 buffer - the layout grad_gemm_kernel's COLSUM writes
    # with BLOCK_R = its BLOCK_M, so one second-level colsum serves either kernel. dF's write and this read of it
    # are what the fused epilogue saves, paid here so that the GEMM itself runs on the faster kernel.
    cols = tl.cast(tl.program_id(1), tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < N
    sums = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for r0 in range(0, BLOCK_R, SUB_R):
        rows = tl.cast(tl.program_id(0), tl.int64) * BLOCK_R + r0 + tl.arange(0, SUB_R)
        mask = (rows < M)[:, None] & col_ok[None, :]
        offs = rows[:, None] * N + cols[None, :]
        df = tl.load(df_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        z = tl.load(z_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dz = (df * _gelu_tanh_grad(z)).to(dz_ptr.dtype.element_ty)
        tl.store(dz_ptr + offs, dz, mask=mask)
        sums += tl.sum(tl.where(mask, dz.to(tl.float32), 0.0), axis=0)
    tl.store(part_ptr + tl.cast(tl.program_id(0), tl.int64) * N + cols, sums, mask=col_ok)


@triton.jit
def colsum_kernel(part_ptr, out_ptr, n_parts, n_cols, BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # out[j] = sum_p part[p, j], rounded once to out's dtype: the second level of every column sum (lab 3.4's
    # layernorm_dwdb_kernel, for one buffer of any width). Each step a BLOCK_P x BLOCK_C tile of contiguous rows.
    cols = tl.cast(tl.program_id(0), tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < n_cols
    acc = tl.zeros((BLOCK_P, BLOCK_C), dtype=tl.float32)
    for p0 in range(0, n_parts, BLOCK_P):
        parts = p0 + tl.arange(0, BLOCK_P)
        offs = parts[:, None].to(tl.int64) * n_cols + cols[None, :]
        acc += tl.load(part_ptr + offs, mask=(parts[:, None] < n_parts) & col_ok[None, :], other=0.0)
    tl.store(out_ptr + cols, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty), mask=col_ok)
