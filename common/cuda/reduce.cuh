// reduce.cuh - warp and block reductions, and the online-softmax pair that merges exactly.
//
// A reduction across a warp is a butterfly of register shuffles: __shfl_xor_sync(FULL, v, off) swaps v between lanes
// i and i ^ off (SHFL.BFLY in SASS). Five steps (off = 16, 8, 4, 2, 1) and every lane holds the result: no shared
// memory, no barrier. A block reduction adds one level: each warp reduces itself, lane 0 of each writes a 32-slot
// shared array, one barrier, then the warps reduce that array. Op is a struct with identity() and apply(a, b).
#pragma once
#include "half_bits.cuh"

#define FULL_MASK 0xffffffffu

struct SumOp {
    static __device__ __forceinline__ float identity() { return 0.0f; }
    static __device__ __forceinline__ float apply(float a, float b) { return a + b; }
};
struct MaxOp {
    static __device__ __forceinline__ float identity() { return neg_inf(); }
    static __device__ __forceinline__ float apply(float a, float b) { return fmaxf(a, b); }
};

// The warp's result in every lane.
template <class Op>
__device__ __forceinline__ float warp_allreduce(float v)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = Op::apply(v, __shfl_xor_sync(FULL_MASK, v, off));
    return v;
}
__device__ __forceinline__ float warp_sum(float v) { return warp_allreduce<SumOp>(v); }

// The block's result in every thread: one barrier. `red` is a 32-slot shared array owned by this call: a kernel that
// reduces twice gives each reduction its own array (then no second barrier is needed), or puts a barrier between.
// blockDim.x must be a multiple of 32 (every warp full: the shuffles name all 32 lanes).
template <class Op>
__device__ __forceinline__ float block_allreduce(float v, float* red)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    v = warp_allreduce<Op>(v);
    if (nwarps == 1) return v;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = (lane < nwarps) ? red[lane] : Op::identity();
    return warp_allreduce<Op>(v);   // every warp reduces the warp results itself: the broadcast is free
}
__device__ __forceinline__ float block_sum(float v, float* red) { return block_allreduce<SumOp>(v, red); }

// The same through a shared-memory tree (sequential addressing): log2(blockDim.x) rounds with a barrier after each.
// The teaching version the shuffles replace; blockDim.x must be a power of two and `s` hold blockDim.x floats.
template <class Op>
__device__ __forceinline__ float block_tree_allreduce(float v, float* s)
{
    const unsigned int tid = threadIdx.x;
    s[tid] = v;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] = Op::apply(s[tid], s[tid + stride]);
        __syncthreads();
    }
    float r = s[0];
    __syncthreads();   // everyone has read s[0] before the next reduction overwrites s
    return r;
}

// ---------------------------------------------------------------------------------------------------------------------
// Online softmax statistics (Milakov and Gimelshein, "Online normalizer calculation for softmax", 2018).
// A pair (m, d) stands for "d = sum of exp(x - m) over the values seen, m their max". Two pairs merge exactly:
//     m = max(m1, m2),  d = d1 exp(m1 - m) + d2 exp(m2 - m)
// so a row's max and sum come out of ONE read, in any order, split over any number of threads, warps or blocks.
// -inf needs care: (-inf, 0) is the empty pair, and exp(-inf - (-inf)) would be NaN, so a merge whose max is still
// -inf keeps d = 0. A row that is all -inf ends as (-inf, 0), and its output exp(x - m) / d is NaN, as documented.
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ void online_merge(float& m, float& d, float m2, float d2)
{
    const float mn = fmaxf(m, m2);
    if (mn != neg_inf()) {
        d = d * exp_shifted(m, mn) + d2 * exp_shifted(m2, mn);   // exp_shifted(-inf, finite) = 0
        m = mn;
    }
}

// Fold K values into (m, d): one max over the batch, then one rescale of d per batch (not per element).
template <int K>
__device__ __forceinline__ void online_fold(float& m, float& d, const float* v)
{
    float bm = v[0];
#pragma unroll
    for (int k = 1; k < K; ++k) bm = fmaxf(bm, v[k]);
    const float mn = fmaxf(m, bm);
    if (mn != neg_inf()) {
        float s = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) s += exp_shifted(v[k], mn);
        d = d * exp_shifted(m, mn) + s;
        m = mn;
    }
}

__device__ __forceinline__ void warp_online_allreduce(float& m, float& d)
{
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const float m2 = __shfl_xor_sync(FULL_MASK, m, off), d2 = __shfl_xor_sync(FULL_MASK, d, off);
        online_merge(m, d, m2, d2);
    }
}

// red_m, red_d: 32-slot shared arrays owned by this call (as block_allreduce's `red`).
__device__ __forceinline__ void block_online_allreduce(float& m, float& d, float* red_m, float* red_d)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    warp_online_allreduce(m, d);
    if (nwarps == 1) return;
    if (lane == 0) { red_m[warp] = m; red_d[warp] = d; }
    __syncthreads();
    m = (lane < nwarps) ? red_m[lane] : neg_inf();
    d = (lane < nwarps) ? red_d[lane] : 0.0f;
    warp_online_allreduce(m, d);
}
