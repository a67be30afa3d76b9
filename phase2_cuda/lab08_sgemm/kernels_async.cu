// archs: sm_80 sm_90
// Lab 2.8 - SGEMM rungs 10 and 11: C = alpha * A @ B + beta * C, fp32 on the CUDA cores, row-major, with a cp.async
// multi-stage pipeline. cp.async (LDGSTS in SASS) copies global memory straight into shared memory without passing
// through registers; it exists from sm_80 (Ampere) on, hence the `archs` line above.
//
//   sgemm_10_cp_async   rung 10 with the default tile configuration below; rung 11 is the same kernel compiled with
//                       the -D values the autotuner recorded for the GPU at hand
// Run: python -m phase2_cuda.lab08_sgemm [--tune] (the measured figures are in this lab's README, not here).
//
// Same argument list as every kernel of kernels.cu: (M, N, K, alpha, A, B, beta, C, vec) with
// vec = VEC_A | VEC_B | VEC_C as computed by the wrapper (here only VEC_B and VEC_C matter: A is copied 4 bytes at a
// time, which any float array allows). The copies are cp_async_4 / cp_async_16 of common/cuda/cp_async.cuh, the
// epilogue is store4 of common/cuda/epilogue.cuh (ldc = N). Without __CUDA_ARCH__ (a host compiler) cp_async.cuh
// defines no copies: tests/test_phase2_lab08_sgemm.py supplies emulations of them to run this kernel on the CPU with
// adversarial timing; the GPU build never sees that.
//
// Every tile parameter is a compile-time macro with NO default in this file: its value is set in lab.py (the defaults
// of AsyncConfig, i.e. ASYNC_DEFAULT, chosen on a Hopper GPU; the lesson says which) and reaches this file as
// -DNAME=VALUE on every compile; a compile without it stops with an #error naming it. The lab's autotuner (--tune)
// compiles this file with other -D values from a declared space, times each on the GPU at hand, and records the
// winner in results/<gpu>/phase2_lab08_sgemm_tuned.json, which rung 11 then uses (`--set STAGES=4` and the like
// override it).
//   BM x BN   block tile of C            BK       k-depth of one pipeline stage
//   WM x WN   warp tile                  TM x TN  thread tile (multiples of 4: read as float4 from shared memory)
//   STAGES    shared-memory stages       MINB     blocks per SM promised to ptxas (__launch_bounds__)
//   DB        1: the k-step's fragments are read one step ahead into a second set of registers
// Threads per block = (BM / WM) * (BN / WN) * 32.

#ifndef BM
#error "BM is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set BM=...)"
#endif
#ifndef BN
#error "BN is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set BN=...)"
#endif
#ifndef BK
#error "BK is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set BK=...)"
#endif
#ifndef WM
#error "WM is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set WM=...)"
#endif
#ifndef WN
#error "WN is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set WN=...)"
#endif
#ifndef TM
#error "TM is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set TM=...)"
#endif
#ifndef TN
#error "TN is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set TN=...)"
#endif
#ifndef STAGES
#error "STAGES is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set STAGES=...)"
#endif
#ifndef MINB
#error "MINB is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set MINB=...)"
#endif
#ifndef DB
#error "DB is set by AsyncConfig in lab.py (python -m phase2_cuda.lab08_sgemm --set DB=...)"
#endif

#define NT ((BM / WM) * (BN / WN) * 32)      // threads per block
#define APAD 4                               // As row padding (words): keeps LDS.128 aligned, spreads the banks
#define AS_STRIDE (BM + APAD)
#define A_STAGE (BK * AS_STRIDE)             // floats per stage of A (transposed: As[k][m])
#define B_STAGE (BK * BN)                    // floats per stage of B (Bs[k][n])
#define WSUB_M (WM / (TM / 4))               // rows between a thread's 4-row blocks
#define WSUB_N (WN / (TN / 4))               // columns between a thread's 4-column blocks
#define LN (WN / TN)                         // lanes along N in a warp (LM = WM / TM along M)
#define A_COPIES (BM * BK / NT)              // 4-byte copies of A per thread per stage
#define A_ROW_STEP (NT / BK)                 // rows between them
#define B_COPIES (BK * BN / 4 / NT)          // 16-byte copies of B per thread per stage
#define B_ROW_STEP (NT / (BN / 4))           // rows between them

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must cover the block tile");
static_assert(TM % 4 == 0 && TN % 4 == 0, "thread tiles are read as float4");
static_assert((WM / TM) * (WN / TN) == 32, "a warp tile must hold exactly 32 thread tiles");
static_assert(BK % 8 == 0, "A copies walk 8 consecutive k per lane group");
static_assert((NT / 32) % (BK / 8) == 0, "each thread keeps one k column of A in every stage");
static_assert(A_COPIES >= 1 && A_COPIES * NT == BM * BK, "A stage must split evenly over the threads");
static_assert(BN % 4 == 0 && NT % (BN / 4) == 0, "each thread keeps one float4 column of B");
static_assert(B_COPIES >= 1 && B_COPIES * 4 * NT == BK * BN, "B stage must split evenly over the threads");
static_assert(STAGES >= 2, "a pipeline needs at least two stages");

#include "cp_async.cuh"
#include "epilogue.cuh"
#include "warp_tile.cuh"        // warp_tile_fma and warp_tile_store, rung 08's compute loop and epilogue (kernels.cu)

#define VEC_A 1
#define VEC_B 2
#define VEC_C 4

// =====================================================================================================================
// sgemm_10_cp_async
// Launch: NT = 256 threads (8 warps of 64 x 32) per 128 x 128 block tile, grid (ceil(N/BN), ceil(M/BM)), dynamic
// shared memory STAGES * BK * (BM + 4 + BN) * 4 bytes = 3 * 16 * 260 * 4 = 49,920 B (48.75 KiB; the wrapper raises
// the 48 KiB default limit when a configuration needs more).
// What changed since rung 09:
//  * tiles go global -> shared with cp.async, no staging registers. Rung 09 held its prefetch in 8 registers, which
//    capped it at 2 stages and at 128 registers; here STAGES - 1 tiles are in flight while one is computed, and a
//    deeper K step (BK = 16) halves the barriers per FMA;
//  * A is still transposed on the way in, now by 4-byte copies: lane groups of 8 copy 8 consecutive k of 4 rows
//    (4 full 32-byte sectors per warp instruction) into As[k][m], whose padded rows (stride 132 = 4 mod 32 banks)
//    put the 32 stores of a warp in 32 distinct banks. B is copied 16 bytes at a time (4-byte copies when N % 4 or
//    B's alignment forbids);
//  * zero-fill (src_bytes 0) pads the K tail and the M/N edges, so the compute loop has no bounds checks at all.
// Pipeline (one barrier per k-tile): wait until tile kt has landed (cp.async.wait_group STAGES-2: at most the
// STAGES-2 youngest groups still in flight), __syncthreads (everyone's copies of tile kt are visible AND everyone
// has finished computing tile kt-1), issue the copies of tile kt+STAGES-1 into the stage tile kt-1 used, commit (an
// empty group near the end keeps the count uniform), compute tile kt.
// Tile intensity: 2*128*128*16 FLOP / ((128+128)*16*4 B) = 32 FLOP/B from L2; 4 FMAs per shared word; per k-step a
// thread issues 4 LDS.128 and 64 FFMA: the FFMA share of the issue slots is 64/68 = 94% before loop overhead.
// Registers: <= 128 (__launch_bounds__(NT, MINB = 2)), so 2 blocks = 16 warps per SM; shared 2 x 48.75 KiB of 228.
// Prediction: +10-20% over rung 09, 60-70% of the fp32 peak at 4096^3 (cuBLAS SGEMM: ~70-75%).
// In the SASS the compute loop is 64 LDS.128 + 1,024 FFMA + 9 other instructions per k-tile (93% FFMA, close to the
// 94% above); the copies, the barrier and the address and predicate work bring an interior k-tile to 1,184
// instructions, 86.5% FFMA (static count).
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(NT, MINB)
sgemm_10_cp_async(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                  float beta, float* __restrict__ C, int vec)
{
    extern __shared__ float4 dyn_smem[];
    float* As = reinterpret_cast<float*>(dyn_smem);          // [STAGES][BK][AS_STRIDE]
    float* Bs = As + STAGES * A_STAGE;                      // [STAGES][BK][BN]

    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int num_k_tiles = (K + BK - 1) / BK;

    // A copies: this thread's k column inside a stage, and its first row (rows a_m0 + i * A_ROW_STEP).
    const int a_k = (warp % (BK / 8)) * 8 + lane % 8;
    const int a_m0 = (warp / (BK / 8)) * 4 + lane / 8;
    const float* a_src = A + (size_t)(bm + a_m0) * K + a_k;  // walked along K by BK per tile
    const size_t a_row_step = (size_t)A_ROW_STEP * K;
    unsigned a_rows_ok = 0;                                  // bit i: row a_m0 + i * A_ROW_STEP is inside A
#pragma unroll
    for (int i = 0; i < A_COPIES; ++i)
        if (bm + a_m0 + i * A_ROW_STEP < M) a_rows_ok |= 1u << i;

    // B copies: this thread's float4 column, and its first row (rows b_k0 + i * B_ROW_STEP).
    const int b_k0 = tid / (BN / 4), b_n = (tid % (BN / 4)) * 4;
    const float* b_src = B + (size_t)b_k0 * N + bn + b_n;   // walked along K by BK rows per tile
    const size_t b_row_step = (size_t)B_ROW_STEP * N;
    const int b_cols_left = N - (bn + b_n);                 // > 0: how many of the 4 columns exist
    const bool vb = vec & VEC_B;

    // Interior blocks (every row of the A panel inside M) copy full k-tiles without any predicate: one address
    // computation and one LDGSTS per copy. Only edge blocks and the last, partial k-tile take the guarded path.
    const bool a_rows_all = bm + BM <= M;
    auto load_tile = [&](int stage, int kt) {
        float* as = As + stage * A_STAGE + a_k * AS_STRIDE + a_m0;
        const float* a = a_src + (size_t)kt * BK;
        if (a_rows_all && (kt + 1) * BK <= K) {
#pragma unroll
            for (int i = 0; i < A_COPIES; ++i) cp_async_4(as + i * A_ROW_STEP, a + i * a_row_step, 4);
        } else {
            const bool k_ok = kt * BK + a_k < K;
#pragma unroll
            for (int i = 0; i < A_COPIES; ++i) {
                const bool ok = k_ok && ((a_rows_ok >> i) & 1u);
                cp_async_4(as + i * A_ROW_STEP, ok ? a + i * a_row_step : A, ok ? 4 : 0);
            }
        }
        float* bs = Bs + stage * B_STAGE + b_k0 * BN + b_n;
        const float* b = b_src + (size_t)kt * BK * N;
        const int ncols = b_cols_left < 4 ? (b_cols_left < 0 ? 0 : b_cols_left) : 4;
#pragma unroll
        for (int i = 0; i < B_COPIES; ++i) {
            const int n = kt * BK + b_k0 + i * B_ROW_STEP < K ? ncols : 0;
            const float* src = b + i * b_row_step;
            float* dst = bs + i * B_ROW_STEP * BN;
            if (vb) {
                cp_async_16(dst, n > 0 ? src : B, n * 4);    // N % 4 == 0 here: n is 0 or 4
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) cp_async_4(dst + j, j < n ? src + j : B, j < n ? 4 : 0);
            }
        }
    };

    // Warp tile and thread tile (as in rungs 08-09: warp_tile.cuh).
    const int wm = (warp / (BN / WN)) * WM, wn = (warp % (BN / WN)) * WN;
    const int a_off = wm + (lane / LN) * 4, b_off = wn + (lane % LN) * 4;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    // Prologue: STAGES - 1 tiles in flight.
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < num_k_tiles) load_tile(s, s);
        cp_async_commit();
    }

    for (int kt = 0; kt < num_k_tiles; ++kt) {
        cp_async_wait<STAGES - 2>();     // this thread's copies of tile kt have landed ...
        __syncthreads();                 // ... and everyone's; and nobody still reads the stage refilled next
        const int next = kt + STAGES - 1;
        if (next < num_k_tiles) load_tile(next % STAGES, next);
        cp_async_commit();

#if DB
        warp_tile_fma_db<BK, AS_STRIDE, BN, WSUB_M, WSUB_N, TM, TN>(As + (kt % STAGES) * A_STAGE,
                                                                    Bs + (kt % STAGES) * B_STAGE, a_off, b_off, acc);
#else
        warp_tile_fma<BK, AS_STRIDE, BN, WSUB_M, WSUB_N, TM, TN>(As + (kt % STAGES) * A_STAGE,
                                                                 Bs + (kt % STAGES) * B_STAGE, a_off, b_off, acc);
#endif
    }
    warp_tile_store<WSUB_M, WSUB_N, TM, TN>(C, M, N, bm + a_off, bn + b_off, acc, alpha, beta, vec & VEC_C);
}

// =====================================================================================================================
// Rung 11: the same kernel, autotuned (no new source).
// What changes: only the -D values above. `python -m phase2_cuda.lab08_sgemm --tune` compiles sgemm_10_cp_async for
// every configuration of the declared space (TUNE_SPACE in bench.py: block tiles 64x64 .. 256x128, BK 8/16/32,
// warp tiles 64x32 / 32x64 / 32x32, thread tiles 8x8 / 8x4 / 4x8, 2-4 stages, 1-4 blocks per SM), checks each
// against cuBLAS at 4096^3 (and the fastest also on awkward shapes), times it, and records the fastest correct one
// in results/<gpu>/phase2_lab08_sgemm_tuned.json.
// Why it can pay: the best point trades things no formula weighs exactly - a bigger tile (128 x 256: 43 FLOP/B from
// L2, 1 block of 16 warps per SM) against more blocks in flight (2 x 8 warps), deeper pipelines against shared memory,
// the last partial wave of blocks (4096^2 / (128 x 128) = 1024 tiles on 132 SMs x 2 = 3.9 waves).
// Prediction: within a few percent of rung 10 on the GPU its defaults were chosen on, more on other GPUs.
// What stands in the way of cuBLAS, by a static reading of the SASS (no profile): per 16-deep k-tile an interior
// thread issues 1,184 instructions of which 1,024 FFMA (86.5%: with one instruction per clock per scheduler, the
// issue ceiling is 86.5% of the FFMA peak); 4 LDS.128 per 64 FFMA, one warp-wide LDS.128 per 4 clocks per SM at full
// rate, which is the whole shared-memory bandwidth if an LDS.128 takes four quarter-warp wavefronts; and 128
// registers, exactly the __launch_bounds__(256, 2) cap, so 16 warps per SM to hide LDS latency and the k-tile barrier.
// =====================================================================================================================
