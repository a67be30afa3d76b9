// warp_tile.cuh - lab 2.8's warp-tiled fp32 outer products: the compute loop of a k-tile from shared memory into a
// thread's TM x TN accumulators, and their epilogue. Rungs 08-09 (kernels.cu) and rungs 10-11 (kernels_async.cu) all
// run it; kernels.cu's "Warp tiling" block says why it is laid out this way.
//
// A lane owns a TM x TN thread tile made of (TM/4) x (TN/4) blocks of 4 x 4, WSUB_M_ rows and WSUB_N_ columns apart.
// As is A transposed (As[k][m], rows AS_STRIDE_ floats apart), Bs is B as it is (Bs[k][n], rows BN_ floats apart);
// a_off / b_off: the lane's first row / column inside the block tile. Every read is one LDS.128.
#pragma once
#include "epilogue.cuh"

template <int BK_, int AS_STRIDE_, int BN_, int WSUB_M_, int WSUB_N_, int TM_, int TN_>
__device__ __forceinline__ void warp_tile_fma(const float* __restrict__ As, const float* __restrict__ Bs, int a_off,
                                              int b_off, float (&acc)[TM_][TN_])
{
#pragma unroll
    for (int kk = 0; kk < BK_; ++kk) {
        float a[TM_], b[TN_];
#pragma unroll
        for (int s = 0; s < TM_ / 4; ++s) {
            const float4 v = *reinterpret_cast<const float4*>(As + kk * AS_STRIDE_ + a_off + s * WSUB_M_);
            a[4 * s + 0] = v.x; a[4 * s + 1] = v.y; a[4 * s + 2] = v.z; a[4 * s + 3] = v.w;
        }
#pragma unroll
        for (int s = 0; s < TN_ / 4; ++s) {
            const float4 v = *reinterpret_cast<const float4*>(Bs + kk * BN_ + b_off + s * WSUB_N_);
            b[4 * s + 0] = v.x; b[4 * s + 1] = v.y; b[4 * s + 2] = v.z; b[4 * s + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < TM_; ++i)
#pragma unroll
            for (int j = 0; j < TN_; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// The same k-tile with the fragments double-buffered in registers: step kk + 1's LDS.128s are issued before step
// kk's FFMAs, so their latency is covered by this warp's own 64 (or 128) FMAs rather than by other warps. Costs
// TM + TN more registers. Tried by the tuner (its DB = 1 entries); what it measured is in the lesson (README.md) and
// in the lab's tuning record.
template <int BK_, int AS_STRIDE_, int BN_, int WSUB_M_, int WSUB_N_, int TM_, int TN_>
__device__ __forceinline__ void warp_tile_fma_db(const float* __restrict__ As, const float* __restrict__ Bs,
                                                 int a_off, int b_off, float (&acc)[TM_][TN_])
{
    float a[2][TM_], b[2][TN_];
    auto load = [&](int buf, int kk) {
#pragma unroll
        for (int s = 0; s < TM_ / 4; ++s) {
            const float4 v = *reinterpret_cast<const float4*>(As + kk * AS_STRIDE_ + a_off + s * WSUB_M_);
            a[buf][4 * s + 0] = v.x; a[buf][4 * s + 1] = v.y; a[buf][4 * s + 2] = v.z; a[buf][4 * s + 3] = v.w;
        }
#pragma unroll
        for (int s = 0; s < TN_ / 4; ++s) {
            const float4 v = *reinterpret_cast<const float4*>(Bs + kk * BN_ + b_off + s * WSUB_N_);
            b[buf][4 * s + 0] = v.x; b[buf][4 * s + 1] = v.y; b[buf][4 * s + 2] = v.z; b[buf][4 * s + 3] = v.w;
        }
    };
    load(0, 0);
#pragma unroll
    for (int kk = 0; kk < BK_; ++kk) {
        if (kk + 1 < BK_) load((kk + 1) & 1, kk + 1);
#pragma unroll
        for (int i = 0; i < TM_; ++i)
#pragma unroll
            for (int j = 0; j < TN_; ++j) acc[i][j] = fmaf(a[kk & 1][i], b[kk & 1][j], acc[i][j]);
    }
}

template <int WSUB_M_, int WSUB_N_, int TM_, int TN_>
__device__ __forceinline__ void warp_tile_store(float* __restrict__ C, int M, int N, int row0, int col0,
                                                const float (&acc)[TM_][TN_], float alpha, float beta, bool vc)
{
#pragma unroll
    for (int i = 0; i < TM_; ++i) {
        const int row = row0 + (i / 4) * WSUB_M_ + (i % 4);
#pragma unroll
        for (int s = 0; s < TN_ / 4; ++s)
            store4(C, M, N, N, row, col0 + s * WSUB_N_,
                   make_float4(acc[i][4 * s], acc[i][4 * s + 1], acc[i][4 * s + 2], acc[i][4 * s + 3]), alpha, beta,
                   vc);
    }
}
