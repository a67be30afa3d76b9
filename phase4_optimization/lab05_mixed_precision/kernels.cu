// Lab 4.5 - Mixed precision: the same tensor-core GEMM with an fp32 or an fp16 accumulator.
// archs: sm_80 sm_90
//
//   mp_wmma_gemm   WMMA 16x16x16, 64 x 64 per block; -DACC_HALF=0: fp32 accumulator fragments, =1: fp16 ones
// Run: python -m phase4_optimization.lab05_mixed_precision (the measured figures are in this lab's README, not here).
//
// One kernel, two builds. ACC_HALF=0 (default) keeps the running sums in fp32 accumulator fragments; ACC_HALF=1 keeps
// them in fp16 fragments. Nothing else changes: same tiles, same loads, same mma_sync calls, same store. So any
// difference in the answer is the accumulator's doing.
//
// mp_wmma_gemm: C (M x N, fp32, row-major) = A (M x K, fp16, row-major) @ B (K x N, fp16, row-major)
//   launch: grid (ceil(N / 64), ceil(M / 64)), block 128 threads = 4 warps in a 2 x 2 layout, each warp owning a
//           32 x 32 piece of the 64 x 64 block tile = 2 x 2 WMMA 16 x 16 accumulator fragments.
//   K is walked in BK = 32 steps: the block copies a 64 x 32 slice of A and a 32 x 64 slice of B into shared memory
//   (zeros wherever the slice hangs over an edge of A or B, so any M, N, K works and the padding adds nothing to a
//   sum), then each warp does 2 k-substeps x 2 x 2 mma_sync (16 x 16 x 16 each).
//   bytes (minimum): 2 (M K + K N) + 4 M N; FLOPs: 2 M N K. This kernel re-reads A N/64 times and B M/64 times
//   (through L2) and uses scalar 2-byte loads: it is written to be obviously correct, not fast.
//
// What the accumulator changes (prediction):
//   * fp32: each 16 x 16 x 16 MMA adds its 16 exact products into an fp32 sum; the error is ~2^-24 per step and
//     stays near fp32 rounding (~1e-7 relative) for any K this lab tries. The only visible error left is none at all
//     once the output is fp32: the result is checked to fp32 tolerance.
//   * fp16: every MMA rounds the running sum to 11 significant bits (unit roundoff u = 2^-11 = 4.9e-4). With
//     K/16 roundings of a sum whose size grows like sqrt(k) for random inputs, the relative error grows like
//     u * sqrt(K / 16): about 1e-3 at K = 1024, 4e-3 at K = 16384 (4 K steps in 4). And a running sum above 65504
//     becomes +inf and stays inf, even when later terms would bring it back into range (the fp32 build gets it).
//   * speed: on Hopper and Ampere data-center parts the tensor cores run fp16 x fp16 -> fp16 and -> fp32 at the same
//     rate, so the fp16 accumulator buys nothing but error there (consumer cards halve the fp32-accumulate rate,
//     which is where fp16 accumulation came from).
//   What the measurement taught is in the README: the error predictions held; the speed one did not - the fp16
//   build was somewhat faster, most likely through the halved accumulator registers in an untuned kernel.
//
// Why shared memory at all: wmma::load_matrix_sync needs its tile in memory with a fixed leading dimension and
// 32-byte alignment; staging through shared memory lets the guarded (edge-aware) global loads pad with zeros, which
// a direct load_matrix_sync from global memory could not do at a ragged edge.
// The +8 half padding on each shared row keeps the leading dimension a multiple of 8 halves (16 bytes, WMMA's rule
// for 16-bit types), keeps every fragment pointer 32-byte aligned, and shifts consecutive rows by 16 bytes so the
// fragment loads do not all hit the same banks.
#include <cuda_fp16.h>
#include <mma.h>

#ifndef ACC_HALF
#define ACC_HALF 0
#endif

#define BM 64
#define BN 64
#define BK 32
#define PAD 8
#define THREADS 128

using namespace nvcuda;

#if ACC_HALF
typedef half acc_t;
#else
typedef float acc_t;
#endif

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half x) { return __half2float(x); }

extern "C" __global__ void __launch_bounds__(THREADS)
mp_wmma_gemm(const half* __restrict__ A, const half* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    __shared__ __align__(32) half As[BM][BK + PAD];
    __shared__ __align__(32) half Bs[BK][BN + PAD];
    __shared__ __align__(32) acc_t Cs[BM][BN + PAD];

    const int warp = threadIdx.x / 32;
    const int wm = warp / 2;                    // which 32-row half of the block tile
    const int wn = warp % 2;                    // which 32-column half
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    const half zero = __float2half(0.0f);

    wmma::fragment<wmma::accumulator, 16, 16, 16, acc_t> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::fill_fragment(acc[i][j], static_cast<acc_t>(0.0f));

    for (int k0 = 0; k0 < K; k0 += BK) {
        // consecutive threads take consecutive columns: the global reads of a warp are contiguous along a row
        for (int i = threadIdx.x; i < BM * BK; i += THREADS) {
            const int r = i / BK, c = i % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[r][c] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : zero;
        }
        for (int i = threadIdx.x; i < BK * BN; i += THREADS) {
            const int r = i / BN, c = i % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : zero;
        }
        __syncthreads();                        // the slices are complete before any warp reads a fragment
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a[2];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::row_major> b[2];
#pragma unroll
            for (int i = 0; i < 2; ++i)
                wmma::load_matrix_sync(a[i], &As[wm * 32 + i * 16][kk], BK + PAD);
#pragma unroll
            for (int j = 0; j < 2; ++j)
                wmma::load_matrix_sync(b[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j)
                    wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);   // the accumulator's type is the lesson
        }
        __syncthreads();                        // every warp is done with the slices before they are overwritten
    }

    // fragments have an opaque register layout: go through shared memory to write only the in-bounds elements
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
            wmma::store_matrix_sync(&Cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], BN + PAD,
                                    wmma::mem_row_major);
    __syncthreads();
    for (int i = threadIdx.x; i < BM * BN; i += THREADS) {
        const int r = i / BN, c = i % BN;
        const int gr = row0 + r, gc = col0 + c;
        if (gr < M && gc < N)
            C[(size_t)gr * N + gc] = to_float(Cs[r][c]);   // exact: every fp16 value is an fp32 value
    }
}
