// epilogue.cuh - writing a GEMM's accumulators: bounds-checked stores that use the widest access alignment allows.
//
// The accumulator tile of a block may hang over the matrix edge (M, N not multiples of the tile); every store is
// guarded. Where the caller has established that the row stride and base allow it (`vec` / `pair`), a run of
// values is written with one wide store (STG.128 for four fp32, one 32-bit store for a pair of 16-bit values);
// otherwise element by element, so misaligned views are correct, only slower.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "half_bits.cuh"

// C(r, c .. c+3) = alpha * v + beta * C(r, c .. c+3) for a row-major fp32 C with row stride ldc, guarded. One 16-byte
// store when vec (ldc % 4 == 0, C 16-byte aligned, so c < N implies c + 3 < N when N % 4 == 0 is part of vec).
// beta == 0 never reads C (C may hold NaN poison or garbage).
__device__ __forceinline__ void store4(float* __restrict__ C, int M, int N, long long ldc, int r, int c, float4 v,
                                       float alpha, float beta, bool vec)
{
    if (r >= M) return;
    float* p = C + (long long)r * ldc + c;
    if (vec) {
        if (c < N) {
            float4 o = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
            if (beta != 0.0f) {
                const float4 old = *reinterpret_cast<const float4*>(p);
                o.x = fmaf(beta, old.x, o.x);
                o.y = fmaf(beta, old.y, o.y);
                o.z = fmaf(beta, old.z, o.z);
                o.w = fmaf(beta, old.w, o.w);
            }
            *reinterpret_cast<float4*>(p) = o;
        }
    } else {
        const float e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (c + j < N) p[j] = beta == 0.0f ? alpha * e[j] : fmaf(beta, p[j], alpha * e[j]);
    }
}

// The pair (x, y) to C(row, col) and C(row, col + 1), guarded; rounded to C's type (nearest even). `pair`: N even and
// C 4-byte aligned (8-byte for fp32), so one store carries both. The element type comes from the pointer's type.
__device__ __forceinline__ void store_pair(float* c, long long ldc, int row, int col, int M, int N, float x, float y,
                                           bool pair)
{
    if (row >= M || col >= N) return;
    float* p = c + (long long)row * ldc + col;
    if (pair) {
        *reinterpret_cast<float2*>(p) = make_float2(x, y);
    } else {
        p[0] = x;
        if (col + 1 < N) p[1] = y;
    }
}
template <class T, class Tag>
__device__ __forceinline__ void store_pair_16(T* c, long long ldc, int row, int col, int M, int N, float x, float y,
                                              bool pair, Tag tag)
{
    if (row >= M || col >= N) return;
    unsigned short* p = reinterpret_cast<unsigned short*>(c + (long long)row * ldc + col);
    if (pair) {
        *reinterpret_cast<unsigned int*>(p) = pack2(tag, x, y);     // x -> the low half (col), y -> the high half
    } else {
        p[0] = narrow(tag, x);
        if (col + 1 < N) p[1] = narrow(tag, y);
    }
}
__device__ __forceinline__ void store_pair(__nv_bfloat16* c, long long ldc, int row, int col, int M, int N, float x,
                                           float y, bool pair)
{
    store_pair_16(c, ldc, row, col, M, N, x, y, pair, BF16());
}
__device__ __forceinline__ void store_pair(__half* c, long long ldc, int row, int col, int M, int N, float x, float y,
                                           bool pair)
{
    store_pair_16(c, ldc, row, col, M, N, x, y, pair, F16());
}
