// Lab 4.3 - Tensor cores: C = A @ B in bf16 / fp16 with fp32 accumulation, the CUDA C ladder.
// archs: sm_80 sm_90
//
//   tc_01_wmma       nvcuda::wmma 16x16x16 fragments on padded shared-memory tiles, 64 x 64 per block, synchronous
//   tc_02_mma_sync   mma.sync m16n8k16 + ldmatrix + XOR swizzle + a cp.async pipeline, BM x BN x BK from -D defines,
//                    with an interior fast path for the copies
//                    (-DXT=1: attempt 2, the cross-tile loop - k-loop unrolled by STAGES, fragments carried
//                    across k-tiles, one barrier in the middle of each tile's last MMAs; a --tune candidate)
//   (rung 03, wgmma + TMA, needs sm_90a: kernels_wgmma.cu)
// Run: python -m phase4_optimization.lab03_tensor_cores (the measured figures are in this lab's README, not here).
//
// A is M x K, B is K x N, C is M x N; every matrix has unit stride along its row and a row stride (lda, ldb, ldc)
// of at least its width, in elements. Inputs are IN_T (bf16 by default, fp16 with -DIN_FP16=1); C is IN_T, or fp32
// with -DOUT_F32=1. Accumulation is fp32 in both rungs. M, N, K, lda, ldb, ldc are int32; offsets are 64-bit.
//
// `flags` (chosen by the Python wrapper) says which operands allow 16-byte accesses: a row stride that is a multiple
// of 8 elements and a 16-byte aligned start. Without the flag a rung never issues a 16-byte access to that operand:
// it falls back to element-wise loads, so misaligned views are correct, only slower.
//
// Bytes and FLOPs (M = N = K = 4096, bf16 in, bf16 out): 2 M N K = 137.4 GFLOP; the minimum traffic is
// 2 (M K + K N + M N) = 100.7 MB: 1365 FLOP per byte, several times the bf16 ridge point of any current GPU
// (`--plan` prints this GPU's): compute-bound. Each rung's real traffic is larger (every block re-reads its A
// row-panel and B column-panel from L2), which is why the block tile matters: a BM x BN tile loads (BM + BN) BK
// elements per 2 BM BN BK FLOPs.
// cp.async, ldmatrix, mma.sync and the swizzle come from common/cuda (mma_sm80.cuh, which includes cp_async.cuh).

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include "mma_sm80.cuh"      // cp.async (cp_async.cuh), ldmatrix, mma_16816, the XOR swizzle

// Every compile-time value of this file comes from Python as -DNAME=VALUE: mma_configs.CONFIG (the tile knobs below)
// and the build's IN_FP16 / OUT_F32 (cuda_rungs.defines); none has a default here, a compile without one stops.
#ifndef IN_FP16
#error "IN_FP16 is set by defines(dtype) in cuda_rungs.py (the inputs' dtype: 0 bf16, 1 fp16)"
#endif
#ifndef OUT_F32
#error "OUT_F32 is set by defines(dtype, out_dtype) in cuda_rungs.py (1: fp32 output, 0: the inputs' dtype)"
#endif

#if IN_FP16
typedef __half in_t;             // also the tag that picks mma_16816's f16 form
#else
typedef __nv_bfloat16 in_t;
#endif
#if OUT_F32
typedef float out_t;
#else
typedef in_t out_t;
#endif

#define VEC_A 1
#define VEC_B 2
#define VEC_C 4      // C's row stride is even and C is 4-byte aligned (8-byte for fp32 output): pairs may be stored

__device__ __forceinline__ out_t to_out(float x) {
#if OUT_F32
    return x;
#elif IN_FP16
    return __float2half_rn(x);
#else
    return __float2bfloat16_rn(x);
#endif
}

// The pair (x, y) to p[0], p[1] in one 32-bit (fp32: 64-bit) store. Kept here, not epilogue.cuh's store_pair: the
// header rounds a lone bf16 value in software (f2bf), which made tc_02's bf16 epilogue longer, not the same.
__device__ __forceinline__ void store_pair(out_t* p, float x, float y) {
#if OUT_F32
    *reinterpret_cast<float2*>(p) = make_float2(x, y);
#elif IN_FP16
    *reinterpret_cast<__half2*>(p) = __floats2half2_rn(x, y);
#else
    *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(x, y);
#endif
}

// =====================================================================================================================
// tc_01_wmma - the simple tensor-core rung: nvcuda::wmma 16x16x16 fragments on shared-memory tiles
// =====================================================================================================================
// Computes: C = A @ B, one 64 x 64 tile of C per block, 4 warps in a 2 x 2 grid, each warp 32 x 32 = 2 x 2 fragments
//   of 16 x 16 fp32 accumulators; K walked in steps of WMMA_BK = 32 (two 16-deep mma steps per tile).
// Launch: grid (ceil(N / 64), ceil(M / 64)), block 128 threads, 25 KiB static shared memory.
// Bytes and FLOPs per block and k-step: loads (64 + 64) x 32 x 2 B = 8 KiB for 2 x 64 x 64 x 32 = 262 kFLOP:
//   32 FLOP per byte of L2 traffic, far below what a data-center GPU's tensor cores need from L2 to stay busy
//   (~90 FLOP per L2 byte on the GPU of this lab's README).
// What changed (against phase 2's SGEMM ladder): the 8 x 8 thread tile of FFMAs becomes a warp-wide 16 x 16 x 16
//   matrix product (wmma::mma_sync -> HMMA in SASS); the hardware decides which thread holds which element, so the
//   program only names fragments. Loads are synchronous (global -> registers -> shared), one barrier pair per k-step,
//   no pipelining; shared rows are padded by 8 elements (16 bytes) so that wmma's row accesses spread over the banks.
// Prediction (bf16 4096^3): <= 0.25x cuBLAS. The math is 16x denser per instruction than FFMA, but the small tile
//   (32 FLOP/B from L2), the exposed global latency (load, barrier, compute, barrier) and only 4 warps per block
//   leave the tensor cores idle most of the time. The SASS adds a reason: NVRTC 13.0 loads the fragments with
//   generic LD instructions (it does not prove the pointers shared), 32 of them for 16 HMMA per k-step, where
//   rung 02 needs 8 ldmatrix for 64.
#ifndef WMMA_BM
#error "WMMA_BM is set by CONFIG in mma_configs.py (edit it there)"
#endif
#ifndef WMMA_BN
#error "WMMA_BN is set by CONFIG in mma_configs.py (edit it there)"
#endif
static_assert(WMMA_BM == 64 && WMMA_BN == 64, "WMMA_BM, WMMA_BN: 64 (4 warps in a 2 x 2 grid of 32 x 32 warp tiles)");
#define WMMA_BK 32
#define WMMA_PAD 8

extern "C" __global__ void __launch_bounds__(128) tc_01_wmma(int M, int N, int K, const in_t* __restrict__ A, int lda,
                                                             const in_t* __restrict__ B, int ldb, out_t* __restrict__ C,
                                                             int ldc, int flags) {
    using namespace nvcuda;
    __shared__ __align__(128) in_t As[WMMA_BM][WMMA_BK + WMMA_PAD];
    __shared__ __align__(128) in_t Bs[WMMA_BK][WMMA_BN + WMMA_PAD];
    __shared__ __align__(128) float Cs[WMMA_BM][WMMA_BN + 4];

    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int wm = (warp >> 1) * 32, wn = (warp & 1) * 32;
    const int bm = blockIdx.y * WMMA_BM, bn = blockIdx.x * WMMA_BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    const in_t zero = in_t(0.0f);
    const bool va = flags & VEC_A, vb = flags & VEC_B;
    for (int k0 = 0; k0 < K; k0 += WMMA_BK) {
        // A tile: 64 rows x 32 columns = 256 chunks of 8 elements, 2 per thread
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int id = tid + i * 128, r = id >> 2, c = (id & 3) * 8;
            const int gr = bm + r, gc = k0 + c;
            const in_t* src = A + (size_t)gr * lda + gc;
            if (va && gr < M && gc + 8 <= K) {
                *reinterpret_cast<uint4*>(&As[r][c]) = *reinterpret_cast<const uint4*>(src);
            } else {
#pragma unroll
                for (int e = 0; e < 8; ++e) As[r][c + e] = (gr < M && gc + e < K) ? src[e] : zero;
            }
        }
        // B tile: 32 rows x 64 columns = 256 chunks, 2 per thread
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int id = tid + i * 128, r = id >> 3, c = (id & 7) * 8;
            const int gr = k0 + r, gc = bn + c;
            const in_t* src = B + (size_t)gr * ldb + gc;
            if (vb && gr < K && gc + 8 <= N) {
                *reinterpret_cast<uint4*>(&Bs[r][c]) = *reinterpret_cast<const uint4*>(src);
            } else {
#pragma unroll
                for (int e = 0; e < 8; ++e) Bs[r][c + e] = (gr < K && gc + e < N) ? src[e] : zero;
            }
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < WMMA_BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, in_t, wmma::row_major> fa[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, in_t, wmma::row_major> fb[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &As[wm + 16 * i][kk], WMMA_BK + WMMA_PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &Bs[kk][wn + 16 * j], WMMA_BN + WMMA_PAD);
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
        }
        __syncthreads();      // the next k-step overwrites the tiles this one read
    }
    // The accumulator's element-to-thread mapping is opaque: go through shared memory, then write C with bounds checks.
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&Cs[wm + 16 * i][wn + 16 * j], acc[i][j], WMMA_BN + 4, wmma::mem_row_major);
    __syncthreads();
    for (int id = tid; id < WMMA_BM * WMMA_BN; id += 128) {
        const int r = id / WMMA_BN, c = id % WMMA_BN;     // consecutive threads, consecutive columns: coalesced
        if (bm + r < M && bn + c < N) C[(size_t)(bm + r) * ldc + bn + c] = to_out(Cs[r][c]);
    }
}

// =====================================================================================================================
// tc_02_mma_sync - mma.sync m16n8k16 + ldmatrix + XOR-swizzled shared memory + a cp.async multi-stage pipeline
// =====================================================================================================================
// Computes: C = A @ B, one BM x BN tile of C per block; (BM / WM) x (BN / WN) warps, each owning a WM x WN warp tile
//   = (WM / 16) x (WN / 8) mma tiles of 16 x 8 fp32 accumulators (4 registers per thread each).
// Launch: 1-D grid of ceil(M / BM) x ceil(N / BN) blocks, renumbered in groups of GROUP_M tile-rows; block
//   (BM / WM) (BN / WN) x 32 threads; dynamic shared memory STAGES x (BM x BK + BK x BN) x 2 bytes (above 48 KiB the
//   wrapper opts in with cudaFuncAttributeMaxDynamicSharedMemorySize).
// Bytes and FLOPs per block and k-tile (default 128 x 256 x 32): (128 + 256) x 32 x 2 B = 24 KiB for
//   2 x 128 x 256 x 32 = 2.1 MFLOP: 85 FLOP per byte from L2, 2.7x rung 01's.
// What changed since tc_01_wmma, and why each piece is needed:
//   * mma.sync.aligned.m16n8k16 through inline PTX instead of wmma: the fragment layout is documented, so operands
//     can be fed with ldmatrix and the accumulators written straight from registers (no staging through shared);
//   * ldmatrix.x4: one instruction gives each thread its part of four 8 x 8 matrices (a whole 16 x 16 A fragment,
//     or two 16 x 8 B fragments) - 4x fewer shared-memory instructions than 32-bit loads; .trans transposes B on the
//     way, because B is stored k-major (row-major K x N) while the mma wants it "col" (n-major) per fragment;
//   * an XOR swizzle instead of padding: ldmatrix reads eight 16-byte rows at once, and with 64- or 128-byte rows
//     they would all fall on the same 4 banks (8-way conflict). Storing 16-byte chunk c of row r at c ^ f(r) spreads
//     the 8 rows over all 32 banks, keeps every chunk 16-byte aligned, and wastes no shared memory (a padded layout
//     breaks the 128-byte rows that cp.async and ldmatrix like, and costs STAGES x (BM + BK) x 16 bytes);
//   * cp.async.cg 16-byte copies, STAGES - 1 k-tiles in flight: global -> shared without passing through registers,
//     so the warps keep issuing mma while the next tiles arrive; the src-size operand zero-fills chunks past the
//     edges (src-size 0), so edge tiles need no separate code; a chunk of an operand without its VEC flag is
//     gathered element by element instead (synchronous, slower, never out of bounds or misaligned);
//   * a larger block tile and grouped block order (GROUP_M tile-rows per group) for L2 reuse;
//   * an interior fast path for the copies (load_tile_fast): a block wholly inside C, copying a k-tile wholly inside
//     K, needs no bounds checks, and chunk i of a thread sits a constant distance from its chunk 0 in shared memory
//     and i row steps from it in global memory, so two base addresses per operand replace ~25 integer instructions
//     per chunk. At two warps per scheduler every issued instruction costs HMMA time, so fewer of them is a
//     direct gain. Edge blocks, the last partial k-tile and gathered operands keep
//     load_tile.
// Prediction (bf16 4096^3, default config): 0.6-0.75x cuBLAS. mma.sync is the Ampere instruction: on Hopper it
//   reaches only about 60-65% of the wgmma peak, because each warp must issue its own small MMAs and feed them from
//   registers (ldmatrix), where wgmma lets a warpgroup read operands straight from shared memory. The lab's target is
//   >= 0.6x cuBLAS, in the same run. What the measurement taught (the README's lesson): the first version was
//   latency-bound on integer instructions, not on bandwidth - hence the interior fast path below - and what is left
//   is HMMA's own issue rate on sm_90.
// Attempt 2, the cross-tile loop (-DXT=1; a tuner candidate, not the default). What the profile of the DB = 1
//   winner (128 x 128 x 32, two blocks of 4 warps per SM, tools/profile.py's mma_db case) points at: two warps per
//   scheduler, the tensor pipe idle a good part of the time, and the top stall "wait" - the fixed gap the compiler
//   puts after every HMMA of a warp - followed by long and short scoreboard (cp.async data, ldmatrix results).
//   With only two warps per scheduler the pipe stays fed only if each warp's HMMAs come in long unbroken runs; the
//   SASS of that loop has more non-HMMA instructions than HMMAs (an address IMAD per ldmatrix, the stage offset
//   recomputed per k-tile, 64-bit address updates, loop and branch overhead), and at every k-tile boundary the warp
//   stops: barrier, then the first ldmatrix of the new tile, whose latency nothing covers. XT changes three things,
//   only in blocks that take the fast copies (edge blocks keep the loop above, so XT never holds load_tile's
//   registers next to two fragment sets):
//   * the k-loop is unrolled by STAGES, so the stage of each k-tile is a compile-time constant; with one register
//     per lane for each A step and each pair of B tiles, every ldmatrix is LDSM [R + immediate] and every cp.async
//     [R + immediate]: no per-ldmatrix address arithmetic;
//   * fragments cross k-tiles: the last 16-deep step of tile kt issues half of its MMAs, waits for tile kt + 1 and
//     meets the barrier, loads tile kt + 1's step-0 fragments, then issues the other half - the pipe has MMAs
//     queued while the warp waits, and the next tile's ldmatrix latency hides behind this tile's last MMAs;
//   * the barrier at the end of tile kt also retires stage kt % STAGES (all of its ldmatrix were issued before it),
//     so that stage is refilled at once with tile kt + STAGES, and the prologue fills all STAGES stages: the same
//     copies in flight as before with one barrier per k-tile, placed where the warp still has MMAs queued.
//   A partial last k-tile in these blocks takes load_tile_tail (the fast addresses plus cp.async's zero-fill).
//   BK = 64 with XT spills at 64 x 64 warp tiles (four A address registers on top of two fragment sets), so the
//   candidates are BK = 32. Prediction (bf16 4096^3): a few tenths of the tensor pipe's idle time back, not all of
//   it - the fixed gap after each HMMA stays, and two warps per scheduler remain; 0.55-0.65x cuBLAS, so the 0.65x
//   target is within reach only at the top of that range.
#ifndef BM
#error "BM is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set BM=...)"
#endif
#ifndef BN
#error "BN is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set BN=...)"
#endif
#ifndef BK
#error "BK is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set BK=...)"
#endif
#ifndef WM
#error "WM is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set WM=...)"
#endif
#ifndef WN
#error "WN is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set WN=...)"
#endif
#ifndef STAGES
#error "STAGES is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set STAGES=...)"
#endif
#ifndef GROUP_M
#error "GROUP_M is set by CONFIG in mma_configs.py (edit it there)"
#endif
// MIN_BLOCKS: __launch_bounds__'s blocks per SM: 2 caps registers at 65536 / (2 NTHREADS)
#ifndef MIN_BLOCKS
#error "MIN_BLOCKS is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set MIN_BLOCKS=...)"
#endif
// DB = 1: the fragments of 16-deep step kk + 1 are loaded (ldmatrix) before step kk's mma.sync, into a second set
//   of registers (an attempt; see the README)
#ifndef DB
#error "DB is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set DB=...)"
#endif
// XT = 1: the cross-tile main loop (attempt 2, "XT" below); fragments always double-buffered there, so DB must
//   stay 0
#ifndef XT
#error "XT is set by CONFIG in mma_configs.py (python -m phase4_optimization.lab03_tensor_cores --set XT=...)"
#endif

#define WARPS_M (BM / WM)
#define WARPS_N (BN / WN)
#define NTHREADS (WARPS_M * WARPS_N * 32)
#define MT (WM / 16)                 // mma tiles per warp along M
#define NT (WN / 8)                  // mma tiles per warp along N
#define A_CPR (BK / 8)               // 16-byte chunks per row of the A tile
#define B_CPR (BN / 8)               // 16-byte chunks per row of the B tile
#define A_STAGE (BM * BK)            // elements
#define B_STAGE (BK * BN)

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must tile the block tile");
static_assert(WM % 16 == 0 && WN % 16 == 0, "a warp tile is made of 16 x 16 pieces (ldmatrix.x4 loads two n8 tiles)");
static_assert(BK == 32 || BK == 64, "BK: 32 or 64 (the swizzle handles 64- and 128-byte rows)");
static_assert(BN % 64 == 0, "BN: a multiple of 64 (B rows of whole 128-byte lines for the swizzle)");
static_assert(NTHREADS >= 32 && NTHREADS <= 1024, "threads per block");
static_assert((BM * A_CPR) % NTHREADS == 0 && (BK * B_CPR) % NTHREADS == 0 && BM * A_CPR >= NTHREADS &&
              BK * B_CPR >= NTHREADS, "each thread copies a whole number (>= 1) of chunks of each tile");
static_assert(STAGES >= 2, "at least two stages");
static_assert(!(XT && DB), "XT double-buffers the fragments itself: leave DB at 0");
static_assert(!XT || (BK / 16) % 2 == 0, "XT: an even number of 16-deep steps per k-tile (the buffers alternate)");

// Interior fast path (see load_tile_fast): thread t copies chunks t, t + NTHREADS, ... of each tile, i.e. the same
// chunk column in rows r0, r0 + A_ROWS_STEP, ... When that row step is a multiple of 8 the swizzle pattern repeats,
// so chunk i's shared address is chunk 0's plus a compile-time constant, and its global address chunk 0's plus
// i row steps: two base addresses per operand, computed once, replace ~25 integer instructions per chunk.
#define A_ROWS_STEP (NTHREADS / A_CPR)
#define B_ROWS_STEP (NTHREADS / B_CPR)
#define FAST_OK (NTHREADS % A_CPR == 0 && NTHREADS % B_CPR == 0 && A_ROWS_STEP % 8 == 0 && B_ROWS_STEP % 8 == 0)

// One 16-byte chunk of a tile: cp.async (zero-filled past the edge) when the operand allows 16-byte accesses,
// else 8 guarded element loads and one 16-byte shared store.
__device__ __forceinline__ void load_chunk(in_t* dst, const in_t* base, const in_t* src, bool vec, int rows_ok,
                                           int cols_left) {
    if (vec) {
        // with the VEC flag the row stride is a multiple of 8 elements and the start 16-byte aligned, so every chunk
        // address is 16-byte aligned; a chunk that straddles the end of the row (K or N not a multiple of 8) copies
        // only the bytes inside and zero-fills the rest - it never reads past the last column
        const bool in = rows_ok && cols_left > 0;
        cp_async_16(smem_u32(dst), in ? src : base, in ? 2 * min(cols_left, 8) : 0);
    } else {
        union { uint4 u; in_t h[8]; } v;
#pragma unroll
        for (int e = 0; e < 8; ++e) v.h[e] = (rows_ok && e < cols_left) ? src[e] : in_t(0.0f);
        *reinterpret_cast<uint4*>(dst) = v.u;
    }
}

extern "C" __global__ void __launch_bounds__(NTHREADS, MIN_BLOCKS)
tc_02_mma_sync(int M, int N, int K, const in_t* __restrict__ A, int lda, const in_t* __restrict__ B, int ldb,
               out_t* __restrict__ C, int ldc, int flags) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    in_t* As = reinterpret_cast<in_t*>(smem_raw);                   // STAGES x [BM][BK], swizzled
    in_t* Bs = As + STAGES * A_STAGE;                                 // STAGES x [BK][BN], swizzled

    // --- which tile: groups of GROUP_M tile-rows, walked column by column, so the blocks resident at the same time
    // share a few A row-panels and B column-panels in L2
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int per_group = GROUP_M * grid_n;
    const int first_m = (pid / per_group) * GROUP_M;
    const int rows_here = min(grid_m - first_m, GROUP_M);
    const int bm = (first_m + (pid % per_group) % rows_here) * BM;
    const int bn = ((pid % per_group) / rows_here) * BN;

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    const bool va = flags & VEC_A, vb = flags & VEC_B;
    const int num_k_tiles = (K + BK - 1) / BK;

    auto load_tile = [&](int stage, int kt) {
        const int k0 = kt * BK;
        in_t* as = As + stage * A_STAGE;
        in_t* bs = Bs + stage * B_STAGE;
#pragma unroll
        for (int i = 0; i < BM * A_CPR / NTHREADS; ++i) {
            const int id = tid + i * NTHREADS, r = id / A_CPR, c = id % A_CPR;
            const int gr = bm + r, gc = k0 + c * 8;
            load_chunk(as + swizzle<A_CPR>(r, c) * 8, A, A + (size_t)gr * lda + gc, va, gr < M, K - gc);
        }
#pragma unroll
        for (int i = 0; i < BK * B_CPR / NTHREADS; ++i) {
            const int id = tid + i * NTHREADS, r = id / B_CPR, c = id % B_CPR;
            const int gr = k0 + r, gc = bn + c * 8;
            load_chunk(bs + swizzle<B_CPR>(r, c) * 8, B, B + (size_t)gr * ldb + gc, vb, gr < K, N - gc);
        }
    };

    // Interior blocks (the tile wholly inside C, both operands 16-byte capable) copy their full k-tiles through
    // load_tile_fast; edge blocks, the last partial k-tile and gathered operands take load_tile (the general path).
    const bool fast = FAST_OK && va && vb && bm + BM <= M && bn + BN <= N;
    const int full_k_tiles = fast ? K / BK : 0;
    const int ar0 = tid / A_CPR, ac0 = tid % A_CPR, br0 = tid / B_CPR, bc0 = tid % B_CPR;
    const in_t* ga = A + (size_t)(bm + ar0) * lda + ac0 * 8;          // this thread's first A chunk of k-tile 0
    const in_t* gb = B + (size_t)br0 * ldb + bn + bc0 * 8;            // and its first B chunk
    const unsigned sa = smem_u32(As + swizzle<A_CPR>(ar0, ac0) * 8);
    const unsigned sb = smem_u32(Bs + swizzle<B_CPR>(br0, bc0) * 8);
    auto load_tile_fast = [&](int stage, int kt) {
        const in_t* a = ga + (size_t)kt * BK;
        const in_t* b = gb + (size_t)kt * BK * ldb;
#pragma unroll
        for (int i = 0; i < BM * A_CPR / NTHREADS; ++i)
            cp_async_16_full(sa + (stage * A_STAGE + i * A_ROWS_STEP * BK) * 2, a + (size_t)i * A_ROWS_STEP * lda);
#pragma unroll
        for (int i = 0; i < BK * B_CPR / NTHREADS; ++i)
            cp_async_16_full(sb + (stage * B_STAGE + i * B_ROWS_STEP * BN) * 2, b + (size_t)i * B_ROWS_STEP * ldb);
    };

    float acc[MT][NT][4];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < NT; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

#if XT
    // Attempt 2 (XT) runs the blocks that take the fast copies (interior tile, both operands 16-byte capable);
    // edge blocks and gathered operands keep the loop below, so the XT loop never holds load_tile's registers.
    if (fast) {
        // The k-loop unrolled by STAGES, fragments carried across k-tiles, one barrier per k-tile in the middle of its
        // last 16-deep step. A partial last k-tile (K % BK != 0) keeps the fast addresses: a thread's A chunks share
        // one column (zero-filled past K through cp.async's src-size), its B chunks are whole rows (inside K or not).
        auto load_tile_tail = [&](int stage, int kt) {
            const int k0 = kt * BK, a_cols = K - (k0 + ac0 * 8);
            const int a_bytes = a_cols <= 0 ? 0 : 2 * min(a_cols, 8);
#pragma unroll
            for (int i = 0; i < BM * A_CPR / NTHREADS; ++i)
                cp_async_16(sa + (stage * A_STAGE + i * A_ROWS_STEP * BK) * 2,
                            a_bytes ? ga + (size_t)k0 + (size_t)i * A_ROWS_STEP * lda : A, a_bytes);
#pragma unroll
            for (int i = 0; i < BK * B_CPR / NTHREADS; ++i) {
                const bool in = k0 + br0 + i * B_ROWS_STEP < K;
                cp_async_16(sb + (stage * B_STAGE + i * B_ROWS_STEP * BN) * 2,
                            in ? gb + (size_t)(k0 + i * B_ROWS_STEP) * ldb : B, in ? 16 : 0);
            }
        };
        // Prologue: every stage in flight (nothing reads shared memory yet).
#pragma unroll
        for (int s = 0; s < STAGES; ++s) {
            if (s < full_k_tiles) load_tile_fast(s, s);
            else if (s < num_k_tiles) load_tile_tail(s, s);
            cp_async_commit();
        }
        constexpr int KSTEPS = BK / 16;
        // This lane's ldmatrix row address in stage 0: one per 16-deep step for A (the swizzle XORs the k-chunk with
        // row bits, so each step has its own), one per pair of n8 tiles for B. The swizzle repeats every 16 rows and
        // every stage, so mma tile i of A (16 rows), step kk of B (16 rows) and the stage are compile-time byte
        // offsets on top of these registers: LDSM [R + immediate], no address arithmetic in the loop.
        const int a_row = lane & 15, a_chunk = lane >> 4;
        const int b_row = (lane & 7) + ((lane >> 3) & 1) * 8, b_chunk = lane >> 4;
        unsigned a_addr[KSTEPS], b_addr[NT / 2];
#pragma unroll
        for (int kk = 0; kk < KSTEPS; ++kk)
            a_addr[kk] = smem_u32(As) + swizzle<A_CPR>(wm + a_row, kk * 2 + a_chunk) * 16;
#pragma unroll
        for (int jj = 0; jj < NT / 2; ++jj)
            b_addr[jj] = smem_u32(Bs) + swizzle<B_CPR>(b_row, wn / 8 + 2 * jj + b_chunk) * 16;

        unsigned af[2][MT][4], bf[2][NT][2];
        auto frags = [&](int buf, int stage, int kk) {           // stage and kk are constants after unrolling
#pragma unroll
            for (int i = 0; i < MT; ++i)
                ldmatrix_x4(af[buf][i][0], af[buf][i][1], af[buf][i][2], af[buf][i][3],
                            a_addr[kk] + (stage * A_STAGE + i * 16 * BK) * 2);
#pragma unroll
            for (int j = 0; j < NT; j += 2)
                ldmatrix_x4_trans(bf[buf][j][0], bf[buf][j][1], bf[buf][j + 1][0], bf[buf][j + 1][1],
                                  b_addr[j / 2] + (stage * B_STAGE + kk * 16 * BN) * 2);
        };
        auto mma_rows = [&](int buf, int i0, int i1) {           // the MMAs of A tiles i0 .. i1 - 1 of one step
#pragma unroll
            for (int i = i0; i < i1; ++i)
#pragma unroll
                for (int j = 0; j < NT; ++j) mma_16816(acc[i][j], af[buf][i], bf[buf][j][0], bf[buf][j][1], in_t());
        };

        cp_async_wait<STAGES - 1>();     // tile 0 has landed (this thread's copies) ...
        __syncthreads();                 // ... and everyone's
        frags(0, 0, 0);
        for (int kt0 = 0; kt0 < num_k_tiles; kt0 += STAGES) {
#pragma unroll
            for (int s = 0; s < STAGES; ++s) {                    // tile kt lives in stage s: a constant here
                const int kt = kt0 + s;
                if (kt >= num_k_tiles) break;
#pragma unroll
                for (int kk = 0; kk < KSTEPS; ++kk) {
                    const int buf = kk & 1;
                    if (kk + 1 < KSTEPS) {                       // the next step's fragments, then this step's MMAs
                        frags(buf ^ 1, s, kk + 1);
                        mma_rows(buf, 0, MT);
                    } else {
                        // Last step: its fragments are in registers, so every ldmatrix of stage s has been issued.
                        // Half of its MMAs go first and keep the tensor pipe busy while this warp waits at the barrier.
                        mma_rows(buf, 0, MT / 2);
                        cp_async_wait<STAGES - 2>();             // tile kt + 1 has landed ...
                        __syncthreads();                         // ... for everyone, and nobody reads stage s any more
                        if (kt + 1 < num_k_tiles) frags(0, (s + 1) % STAGES, 0);   // next tile, step 0 (buffer 0)
                        mma_rows(buf, MT / 2, MT);
                        const int next = kt + STAGES;            // stage s takes tile kt + STAGES
                        if (next < full_k_tiles) load_tile_fast(s, next);
                        else if (next < num_k_tiles) load_tile_tail(s, next);
                        cp_async_commit();
                    }
                }
            }
        }
    } else
#endif
    {
        // --- prologue: STAGES - 1 k-tiles in flight (an empty group where there is no tile keeps the count uniform)
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < full_k_tiles) load_tile_fast(s, s);
            else if (s < num_k_tiles) load_tile(s, s);
            cp_async_commit();
        }

        // ldmatrix lane roles. A (x4 = one 16 x 16 fragment): lane l points at row l % 16, k-chunk l / 16.
        // B (x4.trans = two 16 x 8 fragments): lane l points at k-row (l % 8) + 8 ((l / 8) % 2), n-chunk l / 16.
        const int a_row = lane & 15, a_chunk = lane >> 4;
        const int b_row = (lane & 7) + ((lane >> 3) & 1) * 8, b_chunk = lane >> 4;

        for (int kt = 0; kt < num_k_tiles; ++kt) {
            cp_async_wait<STAGES - 2>();     // this thread's copies of tile kt have landed ...
            __syncthreads();                 // ... and everyone's; and nobody still reads the stage refilled next
            const int next = kt + STAGES - 1;
            if (next < full_k_tiles) load_tile_fast(next % STAGES, next);
            else if (next < num_k_tiles) load_tile(next % STAGES, next);
            cp_async_commit();

            const in_t* as = As + (kt % STAGES) * A_STAGE;
            const in_t* bs = Bs + (kt % STAGES) * B_STAGE;
            const unsigned as_u = smem_u32(as), bs_u = smem_u32(bs);
            // the A and B fragments of 16-deep step kk of this k-tile into set `buf` of af / bf
            unsigned af[DB + 1][MT][4], bf[DB + 1][NT][2];
            auto load_frags = [&](int buf, int kk) {
#pragma unroll
                for (int i = 0; i < MT; ++i) {
                    const int r = wm + i * 16 + a_row, c = kk * 2 + a_chunk;
                    ldmatrix_x4(af[buf][i][0], af[buf][i][1], af[buf][i][2], af[buf][i][3],
                                as_u + swizzle<A_CPR>(r, c) * 16);
                }
#pragma unroll
                for (int j = 0; j < NT; j += 2) {
                    const int r = kk * 16 + b_row, c = (wn + j * 8) / 8 + b_chunk;
                    ldmatrix_x4_trans(bf[buf][j][0], bf[buf][j][1], bf[buf][j + 1][0], bf[buf][j + 1][1],
                                      bs_u + swizzle<B_CPR>(r, c) * 16);
                }
            };
#if DB
            load_frags(0, 0);
#endif
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk) {
#if DB
                const int buf = kk & 1;
                if (kk + 1 < BK / 16) load_frags(buf ^ 1, kk + 1);
#else
                const int buf = 0;
                load_frags(0, kk);
#endif
#pragma unroll
                for (int i = 0; i < MT; ++i)
#pragma unroll
                    for (int j = 0; j < NT; ++j) mma_16816(acc[i][j], af[buf][i], bf[buf][j][0], bf[buf][j][1], in_t());
            }
        }
    }
    cp_async_wait<0>();   // no copy may still be in flight when the block exits

    // --- epilogue: thread (g = lane / 4, t = lane % 4) holds rows g and g + 8, columns 2t and 2t + 1 of each tile
    const int g = lane >> 2, t = lane & 3;
    const bool vc = flags & VEC_C;
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            const int col = bn + wn + j * 8 + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = bm + wm + i * 16 + g + 8 * h;
                if (row >= M) continue;
                out_t* p = C + (size_t)row * ldc + col;
                const float x = acc[i][j][2 * h], y = acc[i][j][2 * h + 1];
                if (vc && col + 1 < N) {
                    store_pair(p, x, y);
                } else {
                    if (col < N) p[0] = to_out(x);
                    if (col + 1 < N) p[1] = to_out(y);
                }
            }
        }
    }
}

// =====================================================================================================================
// tc_00_mma_peak - the mma.sync ceiling of this GPU: no memory at all, only m16n8k16 MMAs on register operands
// =====================================================================================================================
// Computes: nothing useful. Each warp runs `iters` rounds of PEAK_CHAINS independent mma.sync.m16n8k16 (fp32
//   accumulators, separate chains so no MMA waits for the previous one's result), then folds its accumulators into
//   one float per thread so the compiler cannot drop the work.
// Launch: any grid, 256 threads per block (8 warps); FLOPs = blocks x 8 warps x iters x PEAK_CHAINS x 4096 (one
//   m16n8k16 is 16 x 8 x 16 = 2048 multiply-adds). The benchmark launches one full wave: SMs x the blocks that fit.
// Why it is here: rung 02's target is a fraction of cuBLAS, which on sm_90 runs wgmma. This kernel measures how many
//   TFLOP/s mma.sync itself can issue on the GPU at hand, so the README can say how far rung 02 is from the
//   instruction's own ceiling and whether a target is reachable with it at all.
// PEAK_CHAINS: independent mma.sync chains per warp (mma_configs.CONFIG)
#ifndef PEAK_CHAINS
#error "PEAK_CHAINS is set by CONFIG in mma_configs.py (edit it there)"
#endif
extern "C" __global__ void __launch_bounds__(256) tc_00_mma_peak(int iters, float* __restrict__ out) {
    const unsigned one = 0x3F803F80u ^ (threadIdx.x & 1u);   // a pair of 16-bit values near 1, per-thread different
    unsigned a[4] = {one, one, one, one};
    float acc[PEAK_CHAINS][4];
#pragma unroll
    for (int c = 0; c < PEAK_CHAINS; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[c][e] = 0.0f;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < PEAK_CHAINS; ++c) mma_16816(acc[c], a, one, one, in_t());
    }
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < PEAK_CHAINS; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
