"""Lab 3.4's Triton kernels: the LayerNorm forward (row statistics, saved for the backward), the backward (dx per row
and partial dw/db per program), and the second level of the column reduction (the partial rows summed). A second
forward, layernorm_fwd_welford_kernel (at the end), reads the row twice with few registers per thread; --tune
decides which forward a GPU uses.

The accumulation dtype is read off the mean buffer's element type: fp32, or fp64 for fp64 data.
"""
from common.triton_support import tl, triton


@triton.jit
def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_rows, n_cols, x_row_stride,
                         y_row_stride, eps, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SINGLE: tl.constexpr,
                         PERSIST: tl.constexpr):
    acc_ty = mean_ptr.dtype.element_ty
    cols = tl.arange(0, BLOCK_N)
    if SINGLE and PERSIST:
        # Rows in registers, persistent: a fixed grid of programs, each walking rows pid, pid + grid, ... with the
        # NEXT row's load issued before this row's two reductions, so a load is in flight while the program reduces
        # (the plain single-pass program has nothing in flight between its load and its store). Costs a second
        # row's registers. w and b are loaded once per program.
        pid = tl.program_id(0)
        step = tl.num_programs(0)
        col_ok = cols < n_cols
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0).to(acc_ty)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0).to(acc_ty)
        # (row masks are built as vectors, cols * 0 + row: the interpreter does not broadcast a scalar predicate)
        x_next = tl.load(x_ptr + pid.to(tl.int64) * x_row_stride + cols, mask=col_ok & (cols * 0 + pid < n_rows),
                         other=0.0, eviction_policy="evict_first")
        for row in range(pid, n_rows, step):
            x = x_next.to(acc_ty)
            nxt = row + step
            x_next = tl.load(x_ptr + tl.cast(nxt, tl.int64) * x_row_stride + cols,
                             mask=col_ok & (cols * 0 + nxt < n_rows), other=0.0, eviction_policy="evict_first")
            mean = tl.sum(x, axis=0) / n_cols
            xc = tl.where(col_ok, x - mean, 0.0)
            rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=0) / n_cols + eps)
            r64 = tl.cast(row, tl.int64)
            tl.store(y_ptr + r64 * y_row_stride + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=col_ok)
            tl.store(mean_ptr + r64, mean)
            tl.store(rstd_ptr + r64, rstd)
    elif SINGLE:
        # BLOCK_M whole rows per program, in registers from load to store; w and b loaded once per program
        rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
        row_ok = rows < n_rows
        col_ok = cols < n_cols
        mask = row_ok[:, None] & col_ok[None, :]
        # every load is issued before the first reduction, so all of them are in flight together (a load placed
        # after a reduction would wait for its barriers). x is read once (evict first); w and b are re-read by every
        # program (keep them in L2). Prediction at 32768 x 4096: within ~10% of the HBM ceiling; the two reductions
        # between a row's loads and its store (the mean, then the centred variance) are what stands between it and
        # the ceiling, the cost lab 3.3's fused softmax shows too.
        x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask, other=0.0,
                    eviction_policy="evict_first").to(acc_ty)
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
        b = tl.load(b_ptr + cols, mask=col_ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
        mean = tl.sum(x, axis=1) / n_cols
        xc = tl.where(mask, x - mean[:, None], 0.0)            # centred form: no cancellation for large means
        rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)
        y = xc * rstd[:, None] * w[None, :] + b[None, :]
        tl.store(y_ptr + rows[:, None] * y_row_stride + cols[None, :], y.to(y_ptr.dtype.element_ty), mask=mask)
        tl.store(mean_ptr + rows, mean, mask=row_ok)
        tl.store(rstd_ptr + rows, rstd, mask=row_ok)
    else:
        # The row walked in BLOCK_N chunks, in three passes: the sum (for the mean), the centred squares (for the
        # variance: no cancellation however large the mean), then y. Only pass 1 reads HBM: it asks L2 to keep the
        # row (evict_last), and the rows of the programs in flight fit in L2 many times over, so passes 2 and 3 are L2
        # hits. Used for rows past FWD_MAX_SINGLE, and wherever this GPU's tuning record says it wins: its loads are
        # spread over loops (one chunk in flight while another is reduced), where the single-pass program waits for
        # its whole row before the first reduction. (A two-pass version that merged per-chunk (mean, M2) pairs as it
        # went was slower where it was measured: two dependent reductions and a scalar merge per chunk; README.md.)
        row = tl.program_id(0).to(tl.int64)
        x_row = x_ptr + row * x_row_stride
        y_row = y_ptr + row * y_row_stride
        acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            acc += tl.load(x_row + offs, mask=offs < n_cols, other=0.0, eviction_policy="evict_last").to(acc_ty)
        mean = tl.sum(acc, axis=0) / n_cols
        acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            ok = offs < n_cols
            xc = tl.where(ok, tl.load(x_row + offs, mask=ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
                          - mean, 0.0)
            acc += xc * xc
        rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            ok = offs < n_cols
            x = tl.load(x_row + offs, mask=ok, other=0.0, eviction_policy="evict_first").to(acc_ty)
            w = tl.load(w_ptr + offs, mask=ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
            b = tl.load(b_ptr + offs, mask=ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
            tl.store(y_row + offs, ((x - mean) * rstd * w + b).to(y_ptr.dtype.element_ty), mask=ok)
        tl.store(mean_ptr + row, mean)
        tl.store(rstd_ptr + row, rstd)


@triton.jit
def _bwd_chunk(x_row, dy_row, w_ptr, offs, ok, mean, rstd, acc_ty: tl.constexpr):
    # One BLOCK_N chunk of a long row, for both of its passes: x-hat (0 in masked lanes), dy and w, in acc_ty
    x = tl.load(x_row + offs, mask=ok, other=0.0).to(acc_ty)
    dy = tl.load(dy_row + offs, mask=ok, other=0.0).to(acc_ty)
    w = tl.load(w_ptr + offs, mask=ok, other=0.0).to(acc_ty)
    return tl.where(ok, (x - mean) * rstd, 0.0), dy, w


@triton.jit
def layernorm_bwd_kernel(x_ptr, w_ptr, dy_ptr, mean_ptr, rstd_ptr, dx_ptr, dw_part_ptr, db_part_ptr, n_rows,
                         n_cols, x_row_stride, dy_row_stride, dx_row_stride, BLOCK_N: tl.constexpr,
                         SINGLE: tl.constexpr):
    # Program g of G takes rows g, g + G, g + 2G, ...: dx for each row, and its own partial dw/db (row g of the
    # G x N partial buffers), which the dwdb kernel sums. No two programs write the same partial row: no atomics.
    # x and dy are read once for dx, dw and db together (3 M N elements moved, where a separate dw/db pass over x and
    # dy moves 5 M N): prediction up to ~1.6x an eager backward at equal bandwidth, close to the ceiling itself.
    pid = tl.program_id(0)
    n_prog = tl.num_programs(0)
    acc_ty = mean_ptr.dtype.element_ty
    cols = tl.arange(0, BLOCK_N)
    part = pid.to(tl.int64) * n_cols
    # 64-bit strides, so row * stride cannot wrap past 2^31 elements (the loop variable itself stays 32-bit).
    # tl.cast, not .to(): an integer argument equal to 1 arrives as a compile-time constant, which has no .to()
    xs = tl.cast(x_row_stride, tl.int64)
    dys = tl.cast(dy_row_stride, tl.int64)
    dxs = tl.cast(dx_row_stride, tl.int64)
    if SINGLE:
        col_ok = cols < n_cols
        w = tl.load(w_ptr + cols, mask=col_ok, other=0.0, eviction_policy="evict_last").to(acc_ty)
        dw_acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        db_acc = tl.zeros((BLOCK_N,), dtype=acc_ty)
        for row in range(pid, n_rows, n_prog):
            x = tl.load(x_ptr + row * xs + cols, mask=col_ok, other=0.0).to(acc_ty)
            dy = tl.load(dy_ptr + row * dys + cols, mask=col_ok, other=0.0).to(acc_ty)
            mean = tl.load(mean_ptr + row)
            rstd = tl.load(rstd_ptr + row)
            xhat = tl.where(col_ok, (x - mean) * rstd, 0.0)
            wdy = w * dy                                        # 0 in masked lanes (w and dy loaded as 0)
            c1 = tl.sum(xhat * wdy, axis=0) / n_cols
            c2 = tl.sum(wdy, axis=0) / n_cols
            dx = (wdy - (xhat * c1 + c2)) * rstd
            tl.store(dx_ptr + row * dxs + cols, dx.to(dx_ptr.dtype.element_ty), mask=col_ok)
            dw_acc += dy * xhat
            db_acc += dy
        tl.store(dw_part_ptr + part + cols, dw_acc, mask=col_ok)
        tl.store(db_part_ptr + part + cols, db_acc, mask=col_ok)
    else:
        # long rows: c1, c2 need the whole row before any dx, so two passes per row; the partial sums live in this
        # program's own rows of the partial buffers (read-modify-write, never shared with another program)
        for start in range(0, n_cols, BLOCK_N):
            offs = start + cols
            tl.store(dw_part_ptr + part + offs, tl.zeros((BLOCK_N,), dtype=acc_ty), mask=offs < n_cols)
            tl.store(db_part_ptr + part + offs, tl.zeros((BLOCK_N,), dtype=acc_ty), mask=offs < n_cols)
        for row in range(pid, n_rows, n_prog):
            mean = tl.load(mean_ptr + row)
            rstd = tl.load(rstd_ptr + row)
            s1 = tl.zeros((BLOCK_N,), dtype=acc_ty)
            s2 = tl.zeros((BLOCK_N,), dtype=acc_ty)
            for start in range(0, n_cols, BLOCK_N):
                offs = start + cols
                ok = offs < n_cols
                xhat, dy, w = _bwd_chunk(x_ptr + row * xs, dy_ptr + row * dys, w_ptr, offs, ok, mean, rstd, acc_ty)
                s1 += xhat * w * dy
                s2 += w * dy
            c1 = tl.sum(s1, axis=0) / n_cols
            c2 = tl.sum(s2, axis=0) / n_cols
            for start in range(0, n_cols, BLOCK_N):
                offs = start + cols
                ok = offs < n_cols
                xhat, dy, w = _bwd_chunk(x_ptr + row * xs, dy_ptr + row * dys, w_ptr, offs, ok, mean, rstd, acc_ty)
                dx = (w * dy - (xhat * c1 + c2)) * rstd
                tl.store(dx_ptr + row * dxs + offs, dx.to(dx_ptr.dtype.element_ty), mask=ok)
                dwp = tl.load(dw_part_ptr + part + offs, mask=ok, other=0.0)
                dbp = tl.load(db_part_ptr + part + offs, mask=ok, other=0.0)
                tl.store(dw_part_ptr + part + offs, dwp + dy * xhat, mask=ok)
                tl.store(db_part_ptr + part + offs, dbp + dy, mask=ok)


@triton.jit
def layernorm_dwdb_kernel(dw_part_ptr, db_part_ptr, dw_ptr, db_ptr, n_parts, n_cols,
                          BLOCK_P: tl.constexpr, BLOCK_C: tl.constexpr):
    # The second level of the column reduction: program j sums BLOCK_C columns over all G partial rows. Each step
    # loads a BLOCK_P x BLOCK_C tile whose rows are contiguous runs of BLOCK_C floats (coalesced), and the final
    # tl.sum along axis 0 folds the tile's rows together.
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < n_cols
    acc_ty = dw_part_ptr.dtype.element_ty
    dw = tl.zeros((BLOCK_P, BLOCK_C), dtype=acc_ty)
    db = tl.zeros((BLOCK_P, BLOCK_C), dtype=acc_ty)
    for p0 in range(0, n_parts, BLOCK_P):
        parts = p0 + tl.arange(0, BLOCK_P)
        offs = parts[:, None].to(tl.int64) * n_cols + cols[None, :]
        ok = (parts[:, None] < n_parts) & col_ok[None, :]
        dw += tl.load(dw_part_ptr + offs, mask=ok, other=0.0)
        db += tl.load(db_part_ptr + offs, mask=ok, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0).to(dw_ptr.dtype.element_ty), mask=col_ok)
    tl.store(db_ptr + cols, tl.sum(db, axis=0).to(db_ptr.dtype.element_ty), mask=col_ok)



@triton.jit
def _load_chunk(ptr, offs, n_cols, EVEN_N: tl.constexpr, POLICY: tl.constexpr):
    # A chunk of a row. Unmasked where every chunk is full: no predicate, zero fill or select per element, and ptxas
    # then unrolls the chunk loop (the sm_90 SASS at V = 4 issues two chunks' 16-byte loads before the first one's
    # math; the masked loop issues one chunk at a time)
    if EVEN_N:
        return tl.load(ptr + offs, eviction_policy=POLICY)
    else:
        return tl.load(ptr + offs, mask=offs < n_cols, other=0.0, eviction_policy=POLICY)


# ---------------------------------------------------------------------------------------------------------------------
# layernorm_fwd_welford_kernel: the forward in two passes over a row with few registers per thread
#
# Computes: y, mean, rstd as layernorm_fwd_kernel does, for any row length.
# Launch: one program per row (grid = rows), BLOCK_N columns a chunk, num_warps from the tuning record; a thread
# holds V = BLOCK_N / (32 num_warps) values of a chunk (V = 4 at BLOCK_N 2048 and 16 warps). EVEN_N: n_cols is a
# multiple of BLOCK_N (the wrapper decides), so no chunk needs a mask.
# Bytes: x read from HBM once (pass 1) and y written once: 2 M N x elt, like every forward here; pass 2 re-reads the
# row from L1 (or L2), w and b from L1. FLOPs: ~5 per element in pass 1, ~4 in pass 2.
#
# Changed since the chunked three-pass loop (layernorm_fwd_kernel, SINGLE=False): one statistics pass instead of two,
# and no cross-warp reduction inside it. Each vector lane keeps a running (mean, M2) over the values it meets in
# successive chunks (Welford's update, elementwise; every live lane has seen the same count, so one reciprocal per
# chunk serves them all); the lanes' summaries are merged once per row with Chan's formula: two block reductions,
# the weighted mean of the lane means, then sum(M2_i + n_i (mean_i - mean)^2), every term non-negative.
# The statistics are of x - x[row, 0]: near 0 instead of near the row's mean, where fp32 resolves them finer by
# ~|mean| / std, and y = ((x - shift) - mean_s) rstd w + b never subtracts an fp32-rounded large mean. No sum of
# squares minus a squared sum anywhere: accurate at any mean (tests: mean 1e3, std 1, against float64).
#
# Why (Little's law; the datasheet bandwidth and the course's working latency, lab 1.5, not measurements here):
# HBM bandwidth x a ~0.7 us loaded round trip, spread over the SMs, is what each SM must keep in flight (`--plan`
# prints it for this GPU; ~25 KiB per SM on the fastest HBM parts), half of it reads (stores drain without holding a
# register), so ~12.5 KiB of loads in flight per SM there, plus margin for the time a program spends reducing and in
# pass 2, when it has no HBM read in flight. Loads in flight are bounded by the registers waiting for them. The
# rows-in-registers config of the second tuning round (BLOCK_M 2, 16 warps; README.md) asks for a whole 32 KiB tile at
# once, then holds it through two block reductions with nothing in flight, and its registers leave room for two
# programs (32 warps) per SM. Here pass 1 holds 3 V registers of data per thread (x, mean, M2) plus addressing: the
# lab's compile report gives the count (40 or fewer at V = 4 and 8: 65536 / (40 x 32) -> 48 warps per SM; 32 or
# fewer would be all 64). Bytes in flight per SM = resident warps x 32 threads x the 16-byte loads a thread has
# issued: at 48 warps and two loads a thread (V = 8, or V = 4 with two chunks unrolled), 48 KiB each time the
# programs issue a chunk - ~4x what the reads need, margin for the reductions and pass 2.
# Inductor's kernel for this op is also a chunk loop with Welford statistics (16 warps, one row a program), but it
# divides per element and keeps a count per lane (4 V registers).
# Prediction at fp32 32768 x 4096: HBM throughput at Inductor's level or a few percent above (fewer instructions
# per element at the same occupancy); which V and warps win is the tuner's call.
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def layernorm_fwd_welford_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, x_row_stride, y_row_stride,
                                 eps, BLOCK_N: tl.constexpr, EVEN_N: tl.constexpr):
    acc_ty = mean_ptr.dtype.element_ty
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    cols = tl.arange(0, BLOCK_N)
    shift = tl.load(x_row).to(acc_ty)
    mean = tl.zeros((BLOCK_N,), dtype=acc_ty)
    m2 = tl.zeros((BLOCK_N,), dtype=acc_ty)
    # pass 1: the row from HBM, asked to stay in L1 for pass 2 (evict_last). A lane live in chunk k was live in every
    # earlier chunk, so it has now seen k + 1 values.
    for start in range(0, n_cols, BLOCK_N):
        offs = start + cols
        x = _load_chunk(x_row, offs, n_cols, EVEN_N, "evict_last").to(acc_ty) - shift
        if not EVEN_N:
            x = tl.where(offs < n_cols, x, mean)         # a lane past the end meets its own mean: d = 0, no change
        d = x - mean
        mean += d * (1.0 / tl.cast(start // BLOCK_N + 1, acc_ty))
        m2 += d * (x - mean)
    # lane c saw cdiv(n_cols - c, BLOCK_N) values; none if c is past the end of a row shorter than a chunk
    count = tl.where(cols < n_cols, (n_cols - cols + BLOCK_N - 1) // BLOCK_N, 0).to(acc_ty)
    mean_s = tl.sum(count * mean, axis=0) / n_cols
    dev = mean - mean_s
    rstd = 1.0 / tl.sqrt(tl.sum(m2 + count * dev * dev, axis=0) / n_cols + eps)
    # pass 2: the row again (L1 hits; evict_first: its last use), w and b (read by every program: evict_last)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + cols
        x = _load_chunk(x_row, offs, n_cols, EVEN_N, "evict_first").to(acc_ty)
        w = _load_chunk(w_ptr, offs, n_cols, EVEN_N, "evict_last").to(acc_ty)
        b = _load_chunk(b_ptr, offs, n_cols, EVEN_N, "evict_last").to(acc_ty)
        y = (((x - shift) - mean_s) * rstd * w + b).to(y_ptr.dtype.element_ty)
        if EVEN_N:
            tl.store(y_row + offs, y)
        else:
            tl.store(y_row + offs, y, mask=offs < n_cols)
    tl.store(mean_ptr + row, shift + mean_s)
    tl.store(rstd_ptr + row, rstd)
