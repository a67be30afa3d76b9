// Lab 2.8 - SGEMM, C = alpha * A @ B + beta * C, in fp32 on the CUDA cores: rungs 01-09 of the ladder. Rung 10
// (cp.async, sm_80+) and the autotuned rung 11 are in kernels_async.cu.
//
//   sgemm_01_naive                  a thread per element of C; threadIdx.x walks the ROWS (uncoalesced)
//   sgemm_02_coalesced              threadIdx.x walks the columns: coalesced B and C, A broadcast
//   sgemm_03_smem_tiling            32 x 32 tiles of A and B staged in shared memory
//   sgemm_04_1d_register_blocking   8 elements of a column of C per thread, in registers
//   sgemm_05_2d_register_blocking   an 8 x 8 tile of C per thread: an outer product per k
//   sgemm_06_float4_transposed_a    float4 global loads; A transposed in shared memory (LDS.128 by construction)
//   sgemm_07_conflict_free_smem     padded A rows, 4 x 4 sub-tiles: no shared-memory bank conflicts
//   sgemm_08_warp_tiling            block tile -> warp tile -> thread tile
//   sgemm_09_double_buffering       two shared stages and a register prefetch: one barrier per k-tile
// Run: python -m phase2_cuda.lab08_sgemm (the measured figures are in this lab's README, not here).
//
// Row-major: A is M x K (lda = K), B is K x N (ldb = N), C is M x N (ldc = N).
// The two numbers for M = N = K = 4096: FLOPs = 2 M N K = 137.4 GFLOP; the fewest bytes = 4 (M K + K N + M N) =
// 201 MB (read A and B once, write C once; + 67 MB to read C when beta != 0): an intensity of 683 FLOP/B, an order of
// magnitude and more above the fp32 ridge point of any current GPU (tens of FLOP/B; `--plan` prints this GPU's).
// Compute-bound, so the whole ladder is about one question: how many of the SM's fp32 lanes (64 or 128, by
// architecture) do a useful FFMA on every clock? Each rung removes the thing that stops them. What stops them is that
// a kernel does NOT get the minimal traffic for free: every tile of C re-reads a panel of A and a panel of B, and how
// big that tile is (and where it is kept: L1, shared memory, registers) sets the traffic each level of the memory
// system sees.
//
// Every kernel takes the same arguments, so one Python launcher drives them all:
//   (int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C, int vec)
// `vec` is a bit mask computed by the wrapper: VEC_A when K % 4 == 0 and A is 16-byte aligned (float4 loads of A rows
// are legal), VEC_B likewise for B (N % 4 == 0), VEC_C for C (N % 4 == 0). Rungs 01-05 ignore it. A kernel that may
// use a float4 path keeps a scalar, bounds-checked path for every other case: a float4 access at a misaligned address
// is an error, not a slow path.
//
// Every kernel handles any M, N, K >= 0 (tails, 1, primes): tiles are zero-filled past the edges, stores are guarded.
// Offsets are 64-bit (size_t) wherever a row index is multiplied by a leading dimension: 50000 x 50000 has 2.5e9
// elements. beta == 0 never reads C (BLAS semantics: C may hold garbage, even NaN, which 0 * NaN would keep).
// The float4 epilogue of rungs 06-09 is store4 of common/cuda/epilogue.cuh (ldc = N here).
//
// Launch shapes, registers and predictions are in each kernel's header; "regs" are NVRTC 13.0's figures for sm_90
// (python -m phase2_cuda.lab08_sgemm prints them for any arch).
//
// The tile knobs (NAIVE_BLOCK, TILE, WT_BM, WT_BN, WT_BK, WT_WM, WT_WN) have NO default here: their values are CONFIG
// in lab.py, in one place, and reach this file as -DNAME=VALUE on every compile (the launch shapes are computed from
// the same values; `--set TILE=16` overrides one, and the run prints where each came from). A compile without them
// stops with an #error naming the knob. The fixed shapes of rungs 04-07 (R4_*, ..., R7_*) are part of those rungs'
// lesson, not knobs.

#include "epilogue.cuh"

#define VEC_A 1
#define VEC_B 2
#define VEC_C 4

// C element update: beta == 0 must not read C.
__device__ __forceinline__ float axpby(float acc, float alpha, float beta, const float* c)
{
    return beta == 0.0f ? alpha * acc : fmaf(beta, *c, alpha * acc);
}

// Four consecutive elements (r, c .. c+3) of a rows x cols row-major matrix, zeros outside it.
// vec: cols % 4 == 0 and P 16-byte aligned, so c (a multiple of 4) is either a whole float4 inside the row or past it.
__device__ __forceinline__ float4 load4(const float* __restrict__ P, int rows, int cols, int r, int c, bool vec)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (r < rows) {
        const float* p = P + (size_t)r * cols + c;
        if (vec) {
            if (c < cols) v = *reinterpret_cast<const float4*>(p);
        } else {
            if (c < cols) v.x = p[0];
            if (c + 1 < cols) v.y = p[1];
            if (c + 2 < cols) v.z = p[2];
            if (c + 3 < cols) v.w = p[3];
        }
    }
    return v;
}

// =====================================================================================================================
// sgemm_01_naive
// One thread per element of C, 32 x 32 threads per block, grid (ceil(M/32), ceil(N/32)). threadIdx.x picks the ROW.
// A warp is 32 consecutive threadIdx.x: 32 rows, one column. Per k it loads A(row, k) for 32 rows K floats apart: 32
// separate 32-byte sectors for 128 useful bytes, and B(k, col) at one address (a broadcast). The store of C is
// uncoalesced the same way. Tile intensity: each FMA reads 2 floats, 0.25 FLOP/B, served by L1 at best.
// Registers: ~30; smem 0; occupancy 2 blocks x 1024 threads = 100% (occupancy is not the problem here).
// Prediction: about 1-2% of the fp32 peak (L1 throughput spent on sectors the warp mostly discards).
// =====================================================================================================================
#ifndef NAIVE_BLOCK       // rungs 01-02: the block is NAIVE_BLOCK x NAIVE_BLOCK threads, one element of C each
#error "NAIVE_BLOCK is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set NAIVE_BLOCK=...)"
#endif
extern "C" __global__ void sgemm_01_naive(int M, int N, int K, float alpha, const float* __restrict__ A,
                                          const float* __restrict__ B, float beta, float* __restrict__ C, int vec)
{
    (void)vec;
    const int row = blockIdx.x * NAIVE_BLOCK + threadIdx.x;
    const int col = blockIdx.y * NAIVE_BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    const float* a = A + (size_t)row * K;
    const float* b = B + col;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc = fmaf(a[k], *b, acc);
        b += N;
    }
    float* c = C + (size_t)row * N + col;
    *c = axpby(acc, alpha, beta, c);
}

// =====================================================================================================================
// sgemm_02_coalesced
// Same work, same launch shape (grid (ceil(N/32), ceil(M/32)) now), but threadIdx.x picks the COLUMN. A warp now
// reads 32 consecutive floats of a row of B (one 128-byte line, four sectors, all used) and one float of A that all
// 32 lanes share (a broadcast), and stores 128 contiguous bytes of C. What changed: which index the fastest-varying
// thread coordinate walks. Same FLOPs, same instructions; ~8x fewer sectors per load of A and per store.
// Still 2 loads per FMA through L1: bound by L1/LSU throughput, far from the FMA pipes.
// Prediction: several times rung 01.
// =====================================================================================================================
extern "C" __global__ void sgemm_02_coalesced(int M, int N, int K, float alpha, const float* __restrict__ A,
                                              const float* __restrict__ B, float beta, float* __restrict__ C, int vec)
{
    (void)vec;
    const int col = blockIdx.x * NAIVE_BLOCK + threadIdx.x;
    const int row = blockIdx.y * NAIVE_BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    const float* a = A + (size_t)row * K;
    const float* b = B + col;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) {
        acc = fmaf(a[k], *b, acc);
        b += N;
    }
    float* c = C + (size_t)row * N + col;
    *c = axpby(acc, alpha, beta, c);
}

// =====================================================================================================================
// sgemm_03_smem_tiling
// TILE x TILE threads per block (32 x 32 = 1024), one element of C each; grid (ceil(N/TILE), ceil(M/TILE)).
// What changed: the block stages a TILE x TILE tile of A and of B in shared memory (each thread loads one element of
// each, coalesced), synchronises, and every thread then reads TILE values of each from shared memory. Global (L2)
// traffic per block per k-step falls by TILE: tile intensity 2*32*32 FLOP / (2*32*32*4 B) = 8 FLOP/B from L2
// (rungs 01-02 relied on L1 hits for that reuse). Bank use: As[ty][kk] is one address per warp (broadcast),
// Bs[kk][tx] is 32 consecutive words: conflict-free, so no padding.
// What the compiler adds: a row of As is contiguous in kk, so ptxas reads As[ty][kk..kk+3] with one LDS.128 (see
// the report: 8 LDS.128 + 32 LDS.32 per tile). Per 4 FMAs a thread still issues 5 shared loads.
// Limit now: the shared-memory pipe. It serves about one 128-byte wavefront per clock per SM, while the SM's four
// schedulers could issue four warp-FFMAs per clock; at ~1.25 wavefronts per warp-FFMA the FMA pipes are at most
// ~20% busy, before latency. Registers ~32; smem 8 KiB; 2 blocks x 1024 threads per SM.
// Prediction: ~8-15% of the fp32 peak (below the ~20% shared-memory bound above).
// =====================================================================================================================
#ifndef TILE              // rung 03: the TILE x TILE tile of A and B in shared memory, TILE x TILE threads
#error "TILE is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set TILE=...)"
#endif
#define TILE_THREADS (TILE * TILE)
extern "C" __global__ void __launch_bounds__(TILE_THREADS)
sgemm_03_smem_tiling(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                     float beta, float* __restrict__ C, int vec)
{
    (void)vec;
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.0f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.0f;
        __syncthreads();                    // the tile is complete before anyone reads it
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc = fmaf(As[ty][kk], Bs[kk][tx], acc);
        __syncthreads();                    // everyone is done reading before the next tile overwrites it
    }
    if (row < M && col < N) {
        float* c = C + (size_t)row * N + col;
        *c = axpby(acc, alpha, beta, c);
    }
}

// =====================================================================================================================
// sgemm_04_1d_register_blocking
// Block tile 64 x 64, BK = 8, 512 threads; each thread computes TM = 8 elements of one column of C, kept in
// registers. Grid (ceil(N/64), ceil(M/64)).
// What changed: one value of B read from shared memory now feeds 8 FMAs (against the 8 values of A in a column of the
// A tile), and the tile grows (64 x 64: 16 FLOP/B from L2).
// Bank use: a warp is 32 columns of one row group: Bs[kk][tx] consecutive, As[ty*8+i][kk] one address (broadcast).
// In the SASS: each 8-float row of As is read with two LDS.128 per k-tile (rows are contiguous in k), so a k-tile
// costs 8 LDS.32 (B) + 16 LDS.128 (A) per 64 FFMA: ~2.7 FFMA per shared instruction instead of 0.8 in rung 03.
// Registers ~49; smem 4 KiB; 2 blocks x 512 threads per SM (register-limited at 49).
// Prediction: ~2x rung 03 (shared traffic per FMA falls ~3x, but 8 accumulators per thread give little ILP).
// =====================================================================================================================
#define R4_BM 64
#define R4_BN 64
#define R4_BK 8
#define R4_TM 8
#define R4_THREADS (R4_BM * R4_BN / R4_TM)
extern "C" __global__ void __launch_bounds__(R4_THREADS)
sgemm_04_1d_register_blocking(int M, int N, int K, float alpha, const float* __restrict__ A,
                              const float* __restrict__ B, float beta, float* __restrict__ C, int vec)
{
    (void)vec;
    static_assert(R4_BM * R4_BK == R4_THREADS && R4_BK * R4_BN == R4_THREADS, "one element of A and B per thread");
    __shared__ float As[R4_BM][R4_BK];
    __shared__ float Bs[R4_BK][R4_BN];
    const int tid = threadIdx.x;
    const int tx = tid % R4_BN, ty = tid / R4_BN;         // column of C, group of TM rows
    const int bm = blockIdx.y * R4_BM, bn = blockIdx.x * R4_BN;
    const int a_m = tid / R4_BK, a_k = tid % R4_BK;       // loader coordinates: 4 rows x 8 k per warp
    const int b_k = tid / R4_BN, b_n = tid % R4_BN;       // 32 consecutive columns per warp
    float acc[R4_TM];
#pragma unroll
    for (int i = 0; i < R4_TM; ++i) acc[i] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += R4_BK) {
        As[a_m][a_k] = (bm + a_m < M && k0 + a_k < K) ? A[(size_t)(bm + a_m) * K + k0 + a_k] : 0.0f;
        Bs[b_k][b_n] = (k0 + b_k < K && bn + b_n < N) ? B[(size_t)(k0 + b_k) * N + bn + b_n] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < R4_BK; ++kk) {
            const float b = Bs[kk][tx];
#pragma unroll
            for (int i = 0; i < R4_TM; ++i) acc[i] = fmaf(As[ty * R4_TM + i][kk], b, acc[i]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < R4_TM; ++i) {
        const int row = bm + ty * R4_TM + i, col = bn + tx;
        if (row < M && col < N) {
            float* c = C + (size_t)row * N + col;
            *c = axpby(acc[i], alpha, beta, c);
        }
    }
}

// =====================================================================================================================
// sgemm_05_2d_register_blocking
// Block tile 128 x 128, BK = 8, 256 threads (16 x 16); each thread computes an 8 x 8 tile of C: 64 accumulators in
// registers. Grid (ceil(N/128), ceil(M/128)).
// What changed: an outer product per k. 8 values of A and 8 of B feed 64 FMAs: 4 FMAs per shared word instead of
// 8/9, and the block tile doubles (128 x 128: 32 FLOP/B from L2).
// In the SASS: ptxas reads each thread's 8 consecutive B values with two LDS.128, and each 8-float row of As (k is
// contiguous there because BK = 8) with two LDS.128: 32 LDS.128 per 512 FFMA, with no change to the source.
// What is left: (1) 4 + 4 scalar global loads per thread per k-tile, each with its own 64-bit address and bounds
// check (see LDG in the report); (2) a bank conflict on B: the 8 lanes of a quarter-warp (tx = 0..7) read 16-byte
// chunks 32 bytes apart, so tx and tx+4 hit the same four banks: 2-way, twice the wavefronts per LDS.128;
// (3) one shared stage: load -> barrier -> compute -> barrier, global latency exposed once per 8 k.
// Registers 127; smem 8 KiB; 2 blocks x 256 threads per SM (register-limited: 16 warps).
// Prediction: ~1.5-2x rung 04.
// =====================================================================================================================
#define R5_BM 128
#define R5_BN 128
#define R5_BK 8
#define R5_TM 8
#define R5_TN 8
#define R5_THREADS ((R5_BM / R5_TM) * (R5_BN / R5_TN))
extern "C" __global__ void __launch_bounds__(R5_THREADS)
sgemm_05_2d_register_blocking(int M, int N, int K, float alpha, const float* __restrict__ A,
                              const float* __restrict__ B, float beta, float* __restrict__ C, int vec)
{
    (void)vec;
    constexpr int A_PER_THREAD = R5_BM * R5_BK / R5_THREADS;      // 4
    constexpr int B_PER_THREAD = R5_BK * R5_BN / R5_THREADS;      // 4
    constexpr int A_ROW_STEP = R5_THREADS / R5_BK;                // 32 rows per pass
    constexpr int B_ROW_STEP = R5_THREADS / R5_BN;                // 2 rows per pass
    __shared__ float As[R5_BM * R5_BK];                           // As[m * BK + k]
    __shared__ float Bs[R5_BK * R5_BN];                           // Bs[k * BN + n]
    const int tid = threadIdx.x;
    const int tx = tid % (R5_BN / R5_TN), ty = tid / (R5_BN / R5_TN);
    const int bm = blockIdx.y * R5_BM, bn = blockIdx.x * R5_BN;
    const int a_m = tid / R5_BK, a_k = tid % R5_BK;
    const int b_k = tid / R5_BN, b_n = tid % R5_BN;
    float acc[R5_TM][R5_TN];
#pragma unroll
    for (int i = 0; i < R5_TM; ++i)
#pragma unroll
        for (int j = 0; j < R5_TN; ++j) acc[i][j] = 0.0f;
    float a[R5_TM], b[R5_TN];
    for (int k0 = 0; k0 < K; k0 += R5_BK) {
#pragma unroll
        for (int p = 0; p < A_PER_THREAD; ++p) {
            const int m = a_m + p * A_ROW_STEP;
            As[m * R5_BK + a_k] = (bm + m < M && k0 + a_k < K) ? A[(size_t)(bm + m) * K + k0 + a_k] : 0.0f;
        }
#pragma unroll
        for (int p = 0; p < B_PER_THREAD; ++p) {
            const int k = b_k + p * B_ROW_STEP;
            Bs[k * R5_BN + b_n] = (k0 + k < K && bn + b_n < N) ? B[(size_t)(k0 + k) * N + bn + b_n] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < R5_BK; ++kk) {
#pragma unroll
            for (int i = 0; i < R5_TM; ++i) a[i] = As[(ty * R5_TM + i) * R5_BK + kk];
#pragma unroll
            for (int j = 0; j < R5_TN; ++j) b[j] = Bs[kk * R5_BN + tx * R5_TN + j];
#pragma unroll
            for (int i = 0; i < R5_TM; ++i)
#pragma unroll
                for (int j = 0; j < R5_TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < R5_TM; ++i) {
        const int row = bm + ty * R5_TM + i;
#pragma unroll
        for (int j = 0; j < R5_TN; ++j) {
            const int col = bn + tx * R5_TN + j;
            if (row < M && col < N) {
                float* c = C + (size_t)row * N + col;
                *c = axpby(acc[i][j], alpha, beta, c);
            }
        }
    }
}

// =====================================================================================================================
// sgemm_06_float4_transposed_a
// Same tiles as rung 05 (128 x 128 x 8, 256 threads, 8 x 8 per thread). Two changes:
//  * global loads are float4 (LDG.E.128): each thread fetches one float4 of A and one of B per k-tile instead of
//    4 + 4 scalars, when the rows allow it (vec bits; otherwise the same guarded scalar loads, element by element);
//  * A is stored TRANSPOSED in shared memory, As[k][m], so the 8 values of A a thread needs at one k are contiguous
//    and come in two LDS.128 by construction. (Rung 05 got LDS.128 on A only because its As rows happened to be
//    BK = 8 contiguous floats; with As[k][m] the vector read holds for any BK, which rungs 08-11 rely on.)
// The transposing store costs 4 scalar STS per float4 of A, once per k-tile (against 8 k-steps of compute).
// What is left: the thread tile is still 8 contiguous columns, so B keeps rung 05's 2-way conflict (lanes tx and
// tx+4 of a quarter-warp); and the transposed store collides too: As[k][m] rows are 128 words long, so the two lanes
// that store rows k and k+4 of one m hit one bank.
// Registers 107; smem 8 KiB; 2 blocks per SM (16 warps).
// Prediction: +5-15% over rung 05 (global load instructions per k-tile 8 -> 2, fewer address computations; the
// shared side was already vectorized by the compiler).
// =====================================================================================================================
#define R6_BM 128
#define R6_BN 128
#define R6_BK 8
#define R6_THREADS 256
extern "C" __global__ void __launch_bounds__(R6_THREADS)
sgemm_06_float4_transposed_a(int M, int N, int K, float alpha, const float* __restrict__ A,
                             const float* __restrict__ B, float beta, float* __restrict__ C, int vec)
{
    __shared__ __align__(16) float As[R6_BK][R6_BM];
    __shared__ __align__(16) float Bs[R6_BK][R6_BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;                       // thread tile: rows ty*8.., cols tx*8..
    const int bm = blockIdx.y * R6_BM, bn = blockIdx.x * R6_BN;
    const int a_m = tid / 2, a_k = (tid % 2) * 4;                 // one float4 of A: row a_m, k a_k..a_k+3
    const int b_k = tid / 32, b_n = (tid % 32) * 4;               // one float4 of B: row b_k, n b_n..b_n+3
    const bool va = vec & VEC_A, vb = vec & VEC_B, vc = vec & VEC_C;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += R6_BK) {
        const float4 av = load4(A, M, K, bm + a_m, k0 + a_k, va);
        As[a_k + 0][a_m] = av.x;
        As[a_k + 1][a_m] = av.y;
        As[a_k + 2][a_m] = av.z;
        As[a_k + 3][a_m] = av.w;
        *reinterpret_cast<float4*>(&Bs[b_k][b_n]) = load4(B, K, N, k0 + b_k, bn + b_n, vb);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < R6_BK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][ty * 8]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][ty * 8 + 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tx * 8]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][tx * 8 + 4]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = bm + ty * 8 + i;
        store4(C, M, N, N, row, bn + tx * 8, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), alpha, beta, vc);
        store4(C, M, N, N, row, bn + tx * 8 + 4, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]), alpha, beta,
               vc);
    }
}

// =====================================================================================================================
// sgemm_07_conflict_free_smem
// Same tiles and loads as rung 06. What changed is only WHERE things sit in shared memory and WHICH elements a
// thread owns:
//  * As rows are padded to BM + 4 words: row k starts 4k banks further on, so the transposing store of the lanes
//    (m, k) and (m, k+4) lands 16 banks apart: every STS of a warp hits 32 distinct banks;
//  * the 8 x 8 thread tile is split into 2 x 2 blocks of 4 x 4, 64 rows / 64 columns apart: rows ty*4.. and
//    64+ty*4.., columns tx*4.. and 64+tx*4... The 8 lanes of a quarter-warp now read 8 consecutive float4 of B
//    (128 contiguous bytes = 32 distinct banks), the minimum of one wavefront each; A is one address per half-warp.
// The padding costs 4 words per row (3%); the split tile costs nothing (same loads, same FMAs).
// Registers 107; smem 8.3 KiB; 2 blocks per SM.
// Prediction: +5-15% over rung 06 (the LDS.128 of B stop taking twice the wavefronts; stores stop colliding).
// =====================================================================================================================
#define R7_BM 128
#define R7_BN 128
#define R7_BK 8
#define R7_THREADS 256
#define R7_APAD 4
extern "C" __global__ void __launch_bounds__(R7_THREADS)
sgemm_07_conflict_free_smem(int M, int N, int K, float alpha, const float* __restrict__ A,
                            const float* __restrict__ B, float beta, float* __restrict__ C, int vec)
{
    __shared__ __align__(16) float As[R7_BK][R7_BM + R7_APAD];
    __shared__ __align__(16) float Bs[R7_BK][R7_BN];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int bm = blockIdx.y * R7_BM, bn = blockIdx.x * R7_BN;
    const int a_m = tid / 2, a_k = (tid % 2) * 4;
    const int b_k = tid / 32, b_n = (tid % 32) * 4;
    const bool va = vec & VEC_A, vb = vec & VEC_B, vc = vec & VEC_C;
    float acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < K; k0 += R7_BK) {
        const float4 av = load4(A, M, K, bm + a_m, k0 + a_k, va);
        As[a_k + 0][a_m] = av.x;
        As[a_k + 1][a_m] = av.y;
        As[a_k + 2][a_m] = av.z;
        As[a_k + 3][a_m] = av.w;
        *reinterpret_cast<float4*>(&Bs[b_k][b_n]) = load4(B, K, N, k0 + b_k, bn + b_n, vb);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < R7_BK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(&As[kk][ty * 4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&As[kk][R7_BM / 2 + ty * 4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&Bs[kk][tx * 4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&Bs[kk][R7_BN / 2 + tx * 4]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row = bm + (i < 4 ? ty * 4 + i : R7_BM / 2 + ty * 4 + i - 4);
        store4(C, M, N, N, row, bn + tx * 4, make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]), alpha, beta, vc);
        store4(C, M, N, N, row, bn + R7_BN / 2 + tx * 4, make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]), alpha,
               beta, vc);
    }
}

// =====================================================================================================================
// Warp tiling, shared by rungs 08 and 09.
// The block tile (BM x BN) is cut into warp tiles (WM x WN); a warp's 32 lanes are arranged LM x LN with
// LM = WM / TM and LN = WN / TN, and each lane owns a TM x TN thread tile made of (TM/4) x (TN/4) blocks of 4 x 4,
// WSUB_M = WM / (TM/4) rows and WSUB_N = WN / (TN/4) columns apart. For 128 x 128 blocks, 64 x 32 warp tiles and
// 8 x 8 thread tiles: 8 warps as 2 x 4, lanes as 8 x 4, sub-tiles 32 rows and 16 columns apart.
// Why: per k a warp reads WM + WN = 96 distinct words of shared memory for its 2048 FMAs, against 16 + 128 = 144 for
// the 16 x 16 arrangement of rung 07 (a warp there is 2 rows x 16 columns of thread tiles), and each LDS.128 of a
// quarter-warp covers at most 8 consecutive float4: conflict-free for any lane order.
// =====================================================================================================================
#include "warp_tile.cuh"          // warp_tile_fma and warp_tile_store: a k-tile's FMAs and the epilogue, rungs 08-11

#ifndef WT_BM             // rungs 08-09: block tile of C, WT_BM x WT_BN
#error "WT_BM is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set WT_BM=...)"
#endif
#ifndef WT_BN
#error "WT_BN is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set WT_BN=...)"
#endif
#ifndef WT_BK             // k-depth of one shared-memory tile
#error "WT_BK is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set WT_BK=...)"
#endif
#ifndef WT_WM             // warp tile, WT_WM x WT_WN (thread tiles are WT_TM x WT_TN = 8 x 8, fixed below)
#error "WT_WM is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set WT_WM=...)"
#endif
#ifndef WT_WN
#error "WT_WN is set by CONFIG in lab.py (python -m phase2_cuda.lab08_sgemm --set WT_WN=...)"
#endif
#define WT_TM 8
#define WT_TN 8
#define WT_THREADS ((WT_BM / WT_WM) * (WT_BN / WT_WN) * 32)
#define WT_APAD 4
#define WT_AS_STRIDE (WT_BM + WT_APAD)
#define WT_WSUB_M (WT_WM / (WT_TM / 4))
#define WT_WSUB_N (WT_WN / (WT_TN / 4))
#define WT_LN (WT_WN / WT_TN)
#define WT_A_F4 (WT_BM * WT_BK / 4 / WT_THREADS)          // float4 of A per thread per k-tile
#define WT_B_F4 (WT_BK * WT_BN / 4 / WT_THREADS)          // float4 of B per thread per k-tile

static_assert((WT_WM / WT_TM) * (WT_WN / WT_TN) == 32, "a warp tile must hold exactly 32 thread tiles");
static_assert(WT_A_F4 >= 1 && WT_A_F4 * 4 * WT_THREADS == WT_BM * WT_BK, "A tile must split evenly into float4s");
static_assert(WT_B_F4 >= 1 && WT_B_F4 * 4 * WT_THREADS == WT_BK * WT_BN, "B tile must split evenly into float4s");
static_assert(WT_BK % 4 == 0 && WT_BN % 4 == 0, "float4 granularity");

// Global -> registers. Each thread owns the same positions in every k-tile: WT_A_F4 float4s of A (rows
// a_m0 + p * WT_A_ROW_STEP, columns k0 + a_k .. +3) and WT_B_F4 float4s of B (rows k0 + b_k0 + p * WT_B_ROW_STEP,
// columns b_n .. +3). So the 64-bit addresses are computed once and walked along K (A by BK floats, B by BK rows):
// registers are the scarce resource in these kernels, and a 64-bit multiply per load per tile would cost both
// registers and issue slots.
#define WT_A_ROW_STEP (WT_THREADS / (WT_BK / 4))
#define WT_B_ROW_STEP (WT_THREADS / (WT_BN / 4))
static_assert(WT_THREADS % (WT_BK / 4) == 0 && WT_THREADS % (WT_BN / 4) == 0, "fixed column per thread");

struct WtLoader {
    const float* a;        // A(bm + a_m0, k0 + a_k)
    const float* b;        // B(k0 + b_k0, bn + b_n)
    size_t a_step, b_step; // WT_A_ROW_STEP rows of A, WT_B_ROW_STEP rows of B, in floats
    int a_rows_left;       // M - (bm + a_m0): row p is inside A when p * WT_A_ROW_STEP < a_rows_left
    int a_k, b_k0, b_cols_left;
};

__device__ __forceinline__ WtLoader wt_loader(const float* A, const float* B, int M, int N, int K, int bm, int bn,
                                              int tid)
{
    WtLoader L;
    const int a_m0 = tid / (WT_BK / 4);
    L.a_k = (tid % (WT_BK / 4)) * 4;
    L.b_k0 = tid / (WT_BN / 4);
    const int b_n = (tid % (WT_BN / 4)) * 4;
    L.a = A + (size_t)(bm + a_m0) * K + L.a_k;
    L.b = B + (size_t)L.b_k0 * N + bn + b_n;
    L.a_step = (size_t)WT_A_ROW_STEP * K;
    L.b_step = (size_t)WT_B_ROW_STEP * N;
    L.a_rows_left = M - (bm + a_m0);
    L.b_cols_left = N - (bn + b_n);
    return L;
}

// p[0..3] where elements j < n exist (n may be <= 0 or >= 4), zeros elsewhere; vec: one 16-byte load, all or none.
__device__ __forceinline__ float4 load4_n(const float* p, int n, bool vec)
{
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (vec) {
        if (n > 0) v = *reinterpret_cast<const float4*>(p);
    } else {
        if (n > 0) v.x = p[0];
        if (n > 1) v.y = p[1];
        if (n > 2) v.z = p[2];
        if (n > 3) v.w = p[3];
    }
    return v;
}

// The k-tile at k0 (L.a and L.b point at it).
__device__ __forceinline__ void wt_load_global(const WtLoader& L, int K, int k0, int vec, float4 (&a)[WT_A_F4],
                                               float4 (&b)[WT_B_F4])
{
    const int a_n = K - (k0 + L.a_k);                  // elements of this float4 inside row's K
#pragma unroll
    for (int p = 0; p < WT_A_F4; ++p)
        a[p] = load4_n(L.a + p * L.a_step, p * WT_A_ROW_STEP < L.a_rows_left ? a_n : 0, vec & VEC_A);
#pragma unroll
    for (int p = 0; p < WT_B_F4; ++p)
        b[p] = load4_n(L.b + p * L.b_step, k0 + L.b_k0 + p * WT_B_ROW_STEP < K ? L.b_cols_left : 0, vec & VEC_B);
}

__device__ __forceinline__ void wt_advance(WtLoader& L, int N)
{
    L.a += WT_BK;
    L.b += (size_t)WT_BK * N;
}

// Registers -> shared: A transposed into As[k][m] (padded rows), B as it is.
__device__ __forceinline__ void wt_store_shared(float* As, float* Bs, int tid, const float4 (&a)[WT_A_F4],
                                                const float4 (&b)[WT_B_F4])
{
#pragma unroll
    for (int p = 0; p < WT_A_F4; ++p) {
        const int e = p * WT_THREADS + tid;
        const int m = e / (WT_BK / 4), k = (e % (WT_BK / 4)) * 4;
        As[(k + 0) * WT_AS_STRIDE + m] = a[p].x;
        As[(k + 1) * WT_AS_STRIDE + m] = a[p].y;
        As[(k + 2) * WT_AS_STRIDE + m] = a[p].z;
        As[(k + 3) * WT_AS_STRIDE + m] = a[p].w;
    }
#pragma unroll
    for (int p = 0; p < WT_B_F4; ++p) {
        const int e = p * WT_THREADS + tid;
        *reinterpret_cast<float4*>(Bs + (e / (WT_BN / 4)) * WT_BN + (e % (WT_BN / 4)) * 4) = b[p];
    }
}

// =====================================================================================================================
// sgemm_08_warp_tiling
// Block tile 128 x 128 x 8, 256 threads = 8 warps of 64 x 32, 8 x 8 per thread (as 2 x 2 blocks of 4 x 4).
// Grid (ceil(N/128), ceil(M/128)). Loads and the padded transposed A as in rung 07.
// What changed: the hierarchy block tile -> warp tile -> thread tile (see above). Each warp works on a compact 64 x 32
// patch, so the shared-memory words it needs per k fall from 144 to 96, and the code is written in the terms the
// hardware schedules (warps), which rungs 10-11 and every tensor-core kernel of phase 4 keep.
// Tile intensity 32 FLOP/B from L2; 4 FMAs per shared word; registers 116 (__launch_bounds__(256, 2) caps them at
// 128 so 2 blocks = 16 warps fit on an SM); smem 8.3 KiB.
// What is left: one shared stage: load -> barrier -> compute -> barrier. While the global loads of the next tile are
// in flight nothing computes except the other block on the SM.
// Prediction: +5-15% over rung 07.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(WT_THREADS, 2)
sgemm_08_warp_tiling(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                     float beta, float* __restrict__ C, int vec)
{
    __shared__ __align__(16) float As[WT_BK * WT_AS_STRIDE];
    __shared__ __align__(16) float Bs[WT_BK * WT_BN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * WT_BM, bn = blockIdx.x * WT_BN;
    const int wm = (warp / (WT_BN / WT_WN)) * WT_WM, wn = (warp % (WT_BN / WT_WN)) * WT_WN;
    const int a_off = wm + (lane / WT_LN) * 4, b_off = wn + (lane % WT_LN) * 4;
    float acc[WT_TM][WT_TN];
#pragma unroll
    for (int i = 0; i < WT_TM; ++i)
#pragma unroll
        for (int j = 0; j < WT_TN; ++j) acc[i][j] = 0.0f;
    float4 a_reg[WT_A_F4], b_reg[WT_B_F4];
    WtLoader L = wt_loader(A, B, M, N, K, bm, bn, tid);
    for (int k0 = 0; k0 < K; k0 += WT_BK) {
        wt_load_global(L, K, k0, vec, a_reg, b_reg);
        wt_advance(L, N);
        wt_store_shared(As, Bs, tid, a_reg, b_reg);
        __syncthreads();
        warp_tile_fma<WT_BK, WT_AS_STRIDE, WT_BN, WT_WSUB_M, WT_WSUB_N, WT_TM, WT_TN>(As, Bs, a_off, b_off, acc);
        __syncthreads();
    }
    warp_tile_store<WT_WSUB_M, WT_WSUB_N, WT_TM, WT_TN>(C, M, N, bm + a_off, bn + b_off, acc, alpha, beta,
                                                        vec & VEC_C);
}

// =====================================================================================================================
// sgemm_09_double_buffering
// Rung 08's tiles with two shared stages and a register prefetch. Iteration kt: issue the global loads of tile kt+1
// into registers (they fly while this tile computes), compute tile kt from stage kt & 1, then write the prefetched
// registers into the OTHER stage and synchronise. One barrier per k-tile instead of two, and the global latency of
// tile kt+1 hides behind the 8 x 64 FMAs of tile kt. Correctness rests on that single barrier: the stage written in
// iteration kt was last read in iteration kt-1, and every thread passed the barrier at the end of kt-1 after
// finishing that read.
// Cost: 8 more registers per thread for the prefetched float4s (128, exactly the cap of __launch_bounds__(256, 2):
// the loads walk precomputed pointers so that it fits without spilling), 2x the shared memory
// (16.6 KiB per block). Runs on every architecture (no cp.async): the best kernel for sm_75 in this file.
// Prediction: +10-25% over rung 08.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(WT_THREADS, 2)
sgemm_09_double_buffering(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                          float beta, float* __restrict__ C, int vec)
{
    __shared__ __align__(16) float As[2][WT_BK * WT_AS_STRIDE];
    __shared__ __align__(16) float Bs[2][WT_BK * WT_BN];
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * WT_BM, bn = blockIdx.x * WT_BN;
    const int wm = (warp / (WT_BN / WT_WN)) * WT_WM, wn = (warp % (WT_BN / WT_WN)) * WT_WN;
    const int a_off = wm + (lane / WT_LN) * 4, b_off = wn + (lane % WT_LN) * 4;
    const int num_k_tiles = (K + WT_BK - 1) / WT_BK;
    float acc[WT_TM][WT_TN];
#pragma unroll
    for (int i = 0; i < WT_TM; ++i)
#pragma unroll
        for (int j = 0; j < WT_TN; ++j) acc[i][j] = 0.0f;
    float4 a_reg[WT_A_F4], b_reg[WT_B_F4];
    WtLoader L = wt_loader(A, B, M, N, K, bm, bn, tid);
    wt_load_global(L, K, 0, vec, a_reg, b_reg);
    wt_store_shared(As[0], Bs[0], tid, a_reg, b_reg);
    __syncthreads();
    for (int kt = 0; kt < num_k_tiles; ++kt) {
        const int cur = kt & 1;
        const bool more = kt + 1 < num_k_tiles;
        if (more) {
            wt_advance(L, N);
            wt_load_global(L, K, (kt + 1) * WT_BK, vec, a_reg, b_reg);
        }
        warp_tile_fma<WT_BK, WT_AS_STRIDE, WT_BN, WT_WSUB_M, WT_WSUB_N, WT_TM, WT_TN>(As[cur], Bs[cur], a_off, b_off,
                                                                                     acc);
        if (more) wt_store_shared(As[cur ^ 1], Bs[cur ^ 1], tid, a_reg, b_reg);
        __syncthreads();
    }
    warp_tile_store<WT_WSUB_M, WT_WSUB_N, WT_TM, WT_TN>(C, M, N, bm + a_off, bn + b_off, acc, alpha, beta,
                                                        vec & VEC_C);
}
