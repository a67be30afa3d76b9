"""Lab 3.2's Triton kernel: C = A @ B, one program per BLOCK_M x BLOCK_N tile of C, K walked in BLOCK_K steps.

Launch: a 1-D grid of cdiv(M, BLOCK_M) x cdiv(N, BLOCK_N) programs, numbered in grouped order (GROUP_M tile-rows per
group). Per program: 2 x BLOCK_M x BLOCK_N x K FLOPs, (BLOCK_M + BLOCK_N) x K elements loaded (from L2 when a
neighbour in the same wave loaded them first). The wrapper (lab.py: matmul_triton) picks the config, the
compile-time flags (EVEN_K, EVEN_MN, INDEX_64) and, on a GPU, autotunes.
"""
from common.triton_support import grouped_tile, tile_offsets, tl, triton


@triton.jit
def load_k_step(a_ptrs, b_ptrs, m_ok, n_ok, offs_k, k_left, EVEN_K: tl.constexpr, EVEN_MN: tl.constexpr,
                UPCAST: tl.constexpr):
    # One K step's A tile (BLOCK_M x BLOCK_K) and B tile (BLOCK_K x BLOCK_N), masked only where a tile can be ragged:
    # m_ok (BLOCK_M, 1) and n_ok (1, BLOCK_N) say which rows of A and columns of B exist, k_left how many of the K
    # step's columns of A / rows of B do. EVEN_K and EVEN_MN are compile-time (the wrapper checks the shape), so an
    # aligned shape compiles with no mask at all. Lab 4.2's fused GEMM walks K with the same step.
    if EVEN_K:
        if EVEN_MN:
            a = tl.load(a_ptrs)
            b = tl.load(b_ptrs)
        else:
            a = tl.load(a_ptrs, mask=m_ok, other=0.0)
            b = tl.load(b_ptrs, mask=n_ok, other=0.0)
    else:
        a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < k_left), other=0.0)   # zeros past K add nothing
        b = tl.load(b_ptrs, mask=n_ok & (offs_k[:, None] < k_left), other=0.0)
    if UPCAST:
        # interpreter only: Triton 3.9's interpreter multiplies the raw bits of bf16 tiles in tl.dot
        a = a.to(tl.float32)
        b = b.to(tl.float32)
    return a, b


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                  PRECISION: tl.constexpr, EVEN_K: tl.constexpr, EVEN_MN: tl.constexpr, INDEX_64: tl.constexpr,
                  UPCAST: tl.constexpr):
    # --- which tile of C: grouped order (common.triton_support.grouped_tile). Programs are numbered down a column of
    # GROUP_M tile-rows, then across, so consecutive programs (which run at the same time) share B column-panels and
    # reuse a few A row-panels through L2; the last group may have fewer tile-rows. GROUP_M = 1 is plain row-major
    # order. The lab's model (bench.py: tile_loads) counts the tiles each order reads from DRAM: at bf16 8192^3 with
    # 128x256 tiles, GROUP_M = 8 halves the modelled traffic; the prediction is that the time hardly moves, because
    # even the row-major traffic stays under the math time at this size (the README has what was measured).
    # tile_offsets (common.triton_support) turns that tile into its row, column and first-K offsets: pid_m * BLOCK_M
    # + arange(BLOCK_M), and so on; 64-bit when a matrix has 2^31 elements or more (INDEX_64, chosen by the wrapper).
    offs_m, offs_n, offs_k = tile_offsets(tl.program_id(0), M, N, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, INDEX_64)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    m_ok = offs_m[:, None] < M
    n_ok = offs_n[None, :] < N

    # --- walk K. With num_stages > 1 the compiler turns these loads into cp.async copies into a ring of shared-memory
    # buffers, issued num_stages - 1 steps ahead; tl.dot becomes wgmma (sm_90) or mma.sync (sm_80) on those buffers.
    # Each stage costs one A + B tile of shared memory; the prediction: a 4th stage helps at 4096^3 bf16 (more loads
    # in flight per wgmma) as long as it fits in the shared memory a block may use (227 KiB on Hopper).
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a, b = load_k_step(a_ptrs, b_ptrs, m_ok, n_ok, offs_k, K - k * BLOCK_K, EVEN_K, EVEN_MN, UPCAST)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # --- write the tile (rounded to C's dtype) where it lies inside C
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    if EVEN_MN:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty))
    else:
        tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_ok & n_ok)


@triton.jit
def tma_tile_product(a_desc, b_desc, row, col, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     BLOCK_K: tl.constexpr, UPCAST: tl.constexpr):
    # The fp32 BLOCK_M x BLOCK_N tile of A @ B at (row, col), K walked in BLOCK_K steps of TMA tile copies (a K tail
    # past the matrix reads zeros). Lab 4.2's fused GEMM uses the same main loop.
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(tl.cdiv(K, BLOCK_K)):
        a = a_desc.load([row, k * BLOCK_K])
        b = b_desc.load([k * BLOCK_K, col])
        if UPCAST:
            # interpreter only (as in load_k_step): its tl.dot multiplies the raw bits of bf16 tiles
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def matmul_tma_kernel(a_desc, b_desc, c_desc, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, NUM_PROGRAMS: tl.constexpr,
                      EPI_SPLIT: tl.constexpr, UPCAST: tl.constexpr):
    # Hopper's way (sm_90+), the same arithmetic as matmul_kernel with three changes:
    # * TMA: a_desc, b_desc, c_desc are tensor descriptors (built on the host: base, shape, strides, tile shape).
    #   desc.load([row, col]) is one bulk copy of a whole tile into shared memory, issued by one thread and tracked
    #   by a barrier, instead of BLOCK_M x BLOCK_K / (threads x 8) cp.async per thread with their address arithmetic
    #   in registers. Reads past the matrix's edge come back as zeros and stores past it are dropped by the copy
    #   engine itself: no masks anywhere in this kernel, whatever M, N and K are.
    # * persistent: NUM_PROGRAMS programs (one per SM), each walking tiles pid, pid + NUM_PROGRAMS, ... in the
    #   grouped order (common.triton_support.grouped_tile), instead of one program per tile.
    # * flatten=True: the compiler software-pipelines the two loops as one, so the first K steps of a program's next
    #   tile are already loading while it computes and stores the current one; the grid-per-tile kernel starts each
    #   tile with an empty pipeline. EPI_SPLIT stores the C tile in two halves (less shared memory for the epilogue,
    #   which frees room for a deeper ring at the same tile size).
    # Prediction at bf16 4096^3 / 8192^3: a few percent over matmul_kernel, i.e. level with cuBLAS, which does the
    # same things (TMA, persistence, an overlapped epilogue) in its Hopper kernels. Measured: README.md.
    for tile in tl.range(tl.program_id(0), tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N), NUM_PROGRAMS, flatten=True):
        pid_m, pid_n = grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        row = pid_m * BLOCK_M
        col = pid_n * BLOCK_N
        acc = tma_tile_product(a_desc, b_desc, row, col, K, BLOCK_M, BLOCK_N, BLOCK_K, UPCAST)
        if EPI_SPLIT:
            halves = tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1))
            left, right = tl.split(halves)
            c_desc.store([row, col], left.to(c_desc.dtype))
            c_desc.store([row, col + BLOCK_N // 2], right.to(c_desc.dtype))
        else:
            c_desc.store([row, col], acc.to(c_desc.dtype))
