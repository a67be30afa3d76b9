// Lab 2.6 - reduction: s = x[0] + x[1] + ... + x[n-1] (and m = max x[i]) over n fp32 values, the ladder of versions.
//
//   reduce_01_interleaved_divergent      shared-memory tree, `tid % (2*stride)`: divergent warps, a division per round
//   reduce_02_interleaved_strided_index  the active threads are the first ones; shared-memory bank conflicts
//   reduce_03_sequential_addressing      upper half onto lower half: no conflicts, whole warps retire
//   reduce_04_first_add_during_load      two elements per thread, added before the tree
//   reduce_05_unroll_last_warp           the last 6 rounds in warp 0, separated by __syncwarp (not lockstep)
//   reduce_06_warp_shuffle               the tree in registers with shuffles (common/cuda/reduce.cuh): one barrier
//   reduce_07_float4_grid_stride         a grid sized to the GPU, 16-byte loads, UNROLL in flight; two launches
//   reduce_08_atomic_finish              one launch: each block atomicAdds its partial (not deterministic)
//   reduce_09_last_block[_max]           one launch: the last block to finish sums the partials (deterministic)
//   reduce_10_kahan                      as 09 with compensated (TwoSum) accumulation everywhere
// Run: python -m phase2_cuda.lab06_reduction (the measured figures are in this lab's README, not here).
//
// The two numbers: 4 n bytes must be read (nothing else: the output is one float), n - 1 additions must happen.
// 0.25 FLOP per byte is tens of times below the ridge point of any current GPU (`--plan` prints this GPU's): memory
// wins, and the best any version can do is stream 4 n bytes at the measured HBM ceiling (2^28 floats = 1 GiB).
// What separates the rungs is everything else: instructions per element, barriers, idle threads, bank conflicts,
// bytes in flight, kernel launches. Rungs 01-05 follow the classic sequence of Mark Harris's "Optimizing Parallel
// Reduction in CUDA" (written for a 2007 GPU), rewritten for today's hardware rules, and write their trees out - they
// are what this lab teaches; 06-10 take the warp and block reductions from common/cuda/reduce.cuh and show what a
// modern memory-bound reduction looks like.
//
// Rungs 01-06 are multi-pass: each launch turns n values into one partial per block, and the host launches again on
// the partials until one value is left (n = 2^28: 4 to 5 launches). Rungs 07-10 read the input once with a grid sized
// to the GPU, so only a few hundred to a few thousand partials remain for the finish.
//
// Every kernel takes a 64-bit count and uses 64-bit element indices (2^31 floats = 8 GiB is a real size).
// All rungs before 07 launch exactly RED_THREADS threads per block (the static shared array has that many slots).

#include "reduce.cuh"

#ifndef RED_THREADS
#define RED_THREADS 256
#endif
#ifndef UNROLL          // float4 loads issued back to back by each thread of rungs 07-10 before the first add
#define UNROLL 4
#endif
#ifndef LOAD_HINT       // rungs 07-10's 16-byte loads: 0 = read-only path (__ldg, LDG.E.128.CONSTANT),
#define LOAD_HINT 0     // 1 = evict-first (__ldcs, LDG.E.EF.128), 2 = read-only, no L1 allocation, and a hint to
#endif                  // fetch 256-byte L2 blocks (sm_80+; falls back to 0 on older GPUs)

// ---------------------------------------------------------------------------------------------------------------------
// reduce_01_interleaved_divergent
// Launch: ceil(n / 256) blocks of 256 threads; out gets one partial per block.
// Each thread loads one element into shared memory; then log2(256) = 8 rounds, each followed by a barrier. In round
// `stride` the threads whose index is a multiple of 2*stride add the neighbour `stride` slots away.
// Why it is slow: (1) `tid % (2 * stride)` is an integer division by a run-time value, a dozen instructions;
// (2) the active threads are spread over ALL warps (tid 0, 2, 4, ... then 0, 4, 8, ...), so every warp keeps issuing
// the round's instructions while most of its lanes sit idle (divergence); (3) one element per thread means one block
// per 1 KiB and 8 barriers per 256 elements. Memory is not the limit: instruction issue and barrier waits are.
// Prediction (n = 2^28): around 10x below the HBM ceiling on a GPU with a lot of bandwidth per SM (the lesson has one
// GPU's figures); the lab's target is below 15% of torch.sum.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_01_interleaved_divergent(const float* __restrict__ x, float* __restrict__ out,
                                                           long long n)
{
    __shared__ float s[RED_THREADS];
    unsigned int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + tid;
    s[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    // blockDim.x (a run-time value) keeps the compiler from unrolling the loop and turning % into a mask, as it
    // would for a compile-time constant: that is the code the 2007 tutorial measured.
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_02_interleaved_strided_index
// Launch: as 01. What changed: the active threads are the FIRST ones (index = 2 * stride * tid), so whole warps
// retire from each round instead of every warp carrying a few active lanes, and the modulo is gone.
// What it costs: shared-memory bank conflicts. Shared memory has 32 banks of 4 bytes; a warp's 32 accesses run in
// one pass only when they fall in different banks (or on the same word). Here lane t touches word 2*stride*t: at
// stride 1, two lanes share each bank (2-way conflict), at stride 2, 4-way, ... at stride 16, all active lanes hit
// bank 0 (up to 32-way; 8 lanes remain active in a 256-thread block): the warp's access replays once per lane.
// Prediction: about 2x faster than 01 (fewer instructions, no divergent warps); the conflicts cap the gain.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_02_interleaved_strided_index(const float* __restrict__ x, float* __restrict__ out,
                                                               long long n)
{
    __shared__ float s[RED_THREADS];
    unsigned int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + tid;
    s[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        unsigned int index = 2 * stride * tid;
        if (index < blockDim.x) {
            s[index] += s[index + stride];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_03_sequential_addressing
// Launch: as 01. What changed: round k adds the upper half of the live slots onto the lower half
// (s[tid] += s[tid + stride], stride = 128, 64, ..., 1). Consecutive lanes touch consecutive words: no bank
// conflicts, and the active threads are always a prefix (whole warps idle, not scattered lanes).
// Prediction: ~2x over 02. Still: half the threads are idle from the first round on, and the 8 barriers per
// 256 elements remain.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_03_sequential_addressing(const float* __restrict__ x, float* __restrict__ out,
                                                           long long n)
{
    __shared__ float s[RED_THREADS];
    unsigned int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * blockDim.x + tid;
    s[tid] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_04_first_add_during_load
// Launch: ceil(n / 512) blocks of 256 threads. What changed: each thread loads TWO elements (blockDim.x apart, so
// each load instruction stays coalesced) and adds them before the tree: the first round happens in registers, half
// as many blocks run, and each thread has two loads in flight instead of one.
// Prediction: ~1.5-2x over 03 (half the blocks, barriers and tree work per element).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_04_first_add_during_load(const float* __restrict__ x, float* __restrict__ out,
                                                           long long n)
{
    __shared__ float s[RED_THREADS];
    unsigned int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * (2 * blockDim.x) + tid;
    float a = (i < n) ? x[i] : 0.0f;
    float b = (i + blockDim.x < n) ? x[i + blockDim.x] : 0.0f;
    s[tid] = a + b;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = s[0];
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_05_unroll_last_warp
// Launch: as 04. What changed: once 64 values are left, only the first warp works, and a warp needs no block-wide
// barrier: the last 6 rounds run in warp 0 alone, separated by __syncwarp() instead of __syncthreads().
// The 2007 version relied on the 32 lanes of a warp running in lockstep (a `volatile` pointer and no barrier at all).
// Since Volta, lanes of a warp may be scheduled independently, and that code is a data race; __syncwarp() is the
// cheap, correct warp-level barrier (it also orders the shared-memory accesses). Each round reads the partner value,
// waits, then writes, so no lane overwrites a slot another lane has not read yet. Lanes past the live range add
// stale values into slots nobody reads again.
// Prediction: a modest gain over 04 (5 fewer block barriers per block); the tree is a small part of the work now.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_05_unroll_last_warp(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    __shared__ float s[RED_THREADS];
    unsigned int tid = threadIdx.x;
    long long i = (long long)blockIdx.x * (2 * blockDim.x) + tid;
    float a = (i < n) ? x[i] : 0.0f;
    float b = (i + blockDim.x < n) ? x[i + blockDim.x] : 0.0f;
    s[tid] = a + b;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
        }
        __syncthreads();
    }
    if (tid < 32) {
        float v = s[tid] + s[tid + 32];   // blockDim.x >= 64: slots 32..63 hold live values
        for (int off = 16; off > 0; off >>= 1) {
            __syncwarp();
            s[tid] = v;
            __syncwarp();
            v += s[tid + off];
        }
        if (tid == 0) out[blockIdx.x] = v;
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_06_warp_shuffle
// Launch: as 04 (two elements per thread, first add during load). What changed: the whole tree runs in registers
// with shuffles; shared memory only carries the 8 warp results, and there is ONE block barrier instead of 8.
// The reduction is block_allreduce<SumOp> of common/cuda/reduce.cuh (read it: a dozen lines). __shfl_xor_sync
// exchanges registers between the lanes of a warp directly (SHFL.BFLY in SASS): no shared memory, no barrier, 5 steps
// for 32 lanes, and after the butterfly every lane holds the result; lane 0 of each warp writes its warp's value to
// a 32-slot shared array, one barrier, and the warps reduce that array the same way. Rungs 07-10 use it too.
// Prediction: the tree is no longer a cost; what remains is per-element overhead (one block per 2 KiB of input,
// index arithmetic and a bounds check per element, 4-byte loads, 2 loads in flight per thread) and the extra
// launches of the multi-pass finish. Expected within ~1.5x of the HBM ceiling at n = 2^28.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_06_warp_shuffle(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    __shared__ float red[32];
    long long i = (long long)blockIdx.x * (2 * blockDim.x) + threadIdx.x;
    float a = (i < n) ? x[i] : 0.0f;
    float b = (i + blockDim.x < n) ? x[i + blockDim.x] : 0.0f;
    float v = block_allreduce<SumOp>(a + b, red);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---------------------------------------------------------------------------------------------------------------------
// The streaming part of rungs 07-10: each thread folds a share of the array into one register.
// The grid is sized to the GPU (SMs x resident blocks), not to n, and walks the array with a grid stride, so each
// thread handles n / (grid threads) elements: at n = 2^28, about 1000 each on a GPU of ~130 SMs x 2048 threads
// (`--plan` prints this GPU's grid and count).
// 16-byte loads: x + head is the first 16-byte boundary inside the array (a view at an odd offset has head 1..3),
// the body is read as float4 (LDG.E.128), UNROLL of them issued before the first add so that UNROLL x 16 B per thread
// are in flight; the head and the tail (fewer than 4 elements each) are read by the first threads of the grid.
// fp32 arrays are always 4-byte aligned, so no view needs a scalar fallback.
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ float4 load4(const float4* p)
{
#if LOAD_HINT == 1
    return __ldcs(p);
#elif LOAD_HINT == 2 && __CUDA_ARCH__ >= 800
    float4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
#else
    return __ldg(p);
#endif
}

template <class Op>
__device__ __forceinline__ float thread_fold(const float* __restrict__ x, long long n)
{
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    long long head = (long long)(((16u - ((unsigned)(size_t)x & 15u)) & 15u) >> 2);
    if (head > n) head = n;
    const long long n4 = (n - head) >> 2;
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x + head);
    float acc = Op::identity();
    for (long long base = gid; base < n4; base += nthreads * UNROLL) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {           // issue every load first ...
            long long k = base + (long long)u * nthreads;
            v[u] = (k < n4) ? load4(x4 + k)
                            : make_float4(Op::identity(), Op::identity(), Op::identity(), Op::identity());
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {           // ... then fold them (a small tree per float4)
            acc = Op::apply(acc, Op::apply(Op::apply(v[u].x, v[u].y), Op::apply(v[u].z, v[u].w)));
        }
    }
    const long long tail0 = head + 4 * n4;
    if (gid < head) acc = Op::apply(acc, x[gid]);
    if (gid < n - tail0) acc = Op::apply(acc, x[tail0 + gid]);
    return acc;
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_07_float4_grid_stride  (two passes)
// Launch: min(SMs x blocks per SM, what n needs) blocks of 256 threads -> one partial per block (about 1000 on a GPU
// of ~130 SMs);
// then the same kernel again with ONE block over the partials, writing the result.
// What changed: many elements per thread (the block count no longer grows with n, so per-block overhead - the tree,
// the barrier, the partial's store - is paid ~1000 times instead of 500k times), 16-byte loads (4x fewer load
// instructions), UNROLL x 16 B in flight per thread (2048 threads x 64 B = 128 KiB per SM, enough by Little's law:
// the HBM bandwidth x ~1 us of latency, shared by the SMs, is a few tens of KiB per SM on the fastest GPUs; `--plan`
// prints this GPU's figure).
// Prediction: within a few % of the HBM ceiling at n = 2^28 (the second launch adds ~2-3 us, ~1%). At small n the
// two launches dominate: that is what the single-pass rungs fix.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_07_float4_grid_stride(const float* __restrict__ x, float* __restrict__ out,
                                                        long long n)
{
    __shared__ float red[32];
    float v = block_allreduce<SumOp>(thread_fold<SumOp>(x, n), red);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_08_atomic_finish  (one kernel; *out must be zeroed first)
// Launch: as 07. What changed: each block adds its partial straight into *out with atomicAdd (RED.E.ADD.F32 in
// SASS, executed in L2): no second pass. Costs: *out must be 0 before the launch (the wrapper issues a 4-byte
// memset, one more operation in the stream); ~1000 atomics on one address serialize in L2, but take only a few us
// in all and overlap with blocks still streaming. The order of the additions depends on which block finishes first,
// so the last bits of the result can change from run to run: not deterministic.
// Prediction: same bandwidth as 07 at large n, faster than 07 at small n (one launch + a memset instead of two).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void reduce_08_atomic_finish(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    __shared__ float red[32];
    float v = block_allreduce<SumOp>(thread_fold<SumOp>(x, n), red);
    if (threadIdx.x == 0) atomicAdd(out, v);
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_09_last_block  (one kernel, deterministic)
// Launch: as 07; workspace: `partial` (one float per block) and `counter` (one unsigned int, 0 before the first
// launch, and left at 0 by every launch: the last block resets it).
// What changed: each block stores its partial, makes it visible to the whole GPU (__threadfence: the store reaches
// L2 before what follows), then takes a ticket from the counter. The block that draws the last ticket knows every
// other partial is visible, sums them in a fixed order and writes the result. One launch, no memset, and the same
// bits every run (the partials are combined in index order, whatever order the blocks finished in).
// The finishing block reads the partials with ld.global.cg (L2, not its possibly stale L1).
// Concurrency caveat: two launches sharing one counter must not overlap (two streams need two workspaces).
// Prediction: same as 08 at large n; at small n, one launch instead of 08's memset + launch.
// ---------------------------------------------------------------------------------------------------------------------
template <class Op>
__device__ __forceinline__ void last_block_finish(float v, float* __restrict__ partial, unsigned int* counter,
                                                  float* __restrict__ out, float* red)
{
    __shared__ bool am_last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = v;
        __threadfence();
        unsigned int ticket = atomicAdd(counter, 1u);
        am_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();                  // also separates block_allreduce's first use of `red` from the second
    if (am_last) {
        __threadfence();
        float w = Op::identity();
        for (unsigned int i = threadIdx.x; i < gridDim.x; i += blockDim.x) w = Op::apply(w, __ldcg(partial + i));
        w = block_allreduce<Op>(w, red);
        if (threadIdx.x == 0) {
            *out = w;
            *counter = 0u;            // ready for the next launch (stream order makes it visible to it)
        }
    }
}

extern "C" __global__ void reduce_09_last_block(const float* __restrict__ x, float* partial, unsigned int* counter,
                                                float* out, long long n)
{
    __shared__ float red[32];
    float v = block_allreduce<SumOp>(thread_fold<SumOp>(x, n), red);
    last_block_finish<SumOp>(v, partial, counter, out, red);
}

// The same kernel with max instead of +: identity -infinity, fmaxf (which returns the other operand when one is NaN:
// unlike NumPy's max, NaN does not propagate).
extern "C" __global__ void reduce_09_last_block_max(const float* __restrict__ x, float* partial,
                                                    unsigned int* counter, float* out, long long n)
{
    __shared__ float red[32];
    float v = block_allreduce<MaxOp>(thread_fold<MaxOp>(x, n), red);
    last_block_finish<MaxOp>(v, partial, counter, out, red);
}

// ---------------------------------------------------------------------------------------------------------------------
// reduce_10_kahan  (one kernel, deterministic, compensated)
// Launch and workspace as 09, with two floats per partial. What changed: the numerics. Each thread's running sum of
// ~1000 values loses the low bits of every addend once the sum is large; here each addition is an error-free
// transformation (TwoSum: s + e == a + b exactly, e recovered with 5 more additions), the errors are accumulated in
// a second register c, and the (s, c) pairs are combined the same way through the shuffles and the finish.
// The result is the fp32 rounding of a ~2x-fp32-precise sum: error ~1e-8 relative instead of ~1e-6 (see the
// numerics table). Cost: 6 additions per element instead of 1; 1.5 FLOP/B is still far below the ridge point, so
// the prediction is the same bandwidth as 09 (within a few %).
// No fast-math here: the compiler must not simplify (a + b) - a to b, and NVRTC keeps IEEE semantics by default.
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ void two_sum(float a, float b, float& s, float& e)
{
    s = a + b;
    float bv = s - a;
    e = (a - (s - bv)) + (b - bv);
}

__device__ __forceinline__ void kahan_add(float& s, float& c, float x)
{
    float t, e;
    two_sum(s, x, t, e);
    s = t;
    c += e;
}

__device__ __forceinline__ void pair_add(float& s, float& c, float s2, float c2)
{
    float t, e;
    two_sum(s, s2, t, e);
    s = t;
    c = c + c2 + e;
}

__device__ __forceinline__ void block_reduce_pair(float& s, float& c, float* red_s, float* red_c)
{
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        float s2 = __shfl_xor_sync(0xffffffffu, s, off), c2 = __shfl_xor_sync(0xffffffffu, c, off);
        pair_add(s, c, s2, c2);
    }
    if (lane == 0) { red_s[warp] = s; red_c[warp] = c; }
    __syncthreads();
    if (warp == 0) {
        s = (lane < nwarps) ? red_s[lane] : 0.0f;
        c = (lane < nwarps) ? red_c[lane] : 0.0f;
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            float s2 = __shfl_xor_sync(0xffffffffu, s, off), c2 = __shfl_xor_sync(0xffffffffu, c, off);
            pair_add(s, c, s2, c2);
        }
    }
}

extern "C" __global__ void reduce_10_kahan(const float* __restrict__ x, float* partial, unsigned int* counter,
                                           float* out, long long n)
{
    __shared__ float red_s[32], red_c[32];
    __shared__ bool am_last;
    const long long gid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long nthreads = (long long)gridDim.x * blockDim.x;
    long long head = (long long)(((16u - ((unsigned)(size_t)x & 15u)) & 15u) >> 2);
    if (head > n) head = n;
    const long long n4 = (n - head) >> 2;
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x + head);
    float s = 0.0f, c = 0.0f;
    for (long long base = gid; base < n4; base += nthreads * UNROLL) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            long long k = base + (long long)u * nthreads;
            v[u] = (k < n4) ? load4(x4 + k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            kahan_add(s, c, v[u].x);
            kahan_add(s, c, v[u].y);
            kahan_add(s, c, v[u].z);
            kahan_add(s, c, v[u].w);
        }
    }
    const long long tail0 = head + 4 * n4;
    if (gid < head) kahan_add(s, c, x[gid]);
    if (gid < n - tail0) kahan_add(s, c, x[tail0 + gid]);
    block_reduce_pair(s, c, red_s, red_c);
    if (threadIdx.x == 0) {
        partial[2 * blockIdx.x] = s;
        partial[2 * blockIdx.x + 1] = c;
        __threadfence();
        unsigned int ticket = atomicAdd(counter, 1u);
        am_last = (ticket == gridDim.x - 1);
    }
    __syncthreads();
    if (am_last) {
        __threadfence();
        s = 0.0f;
        c = 0.0f;
        for (unsigned int i = threadIdx.x; i < gridDim.x; i += blockDim.x) {
            pair_add(s, c, __ldcg(partial + 2 * i), __ldcg(partial + 2 * i + 1));
        }
        block_reduce_pair(s, c, red_s, red_c);
        if (threadIdx.x == 0) {
            *out = s + c;
            *counter = 0u;
        }
    }
}
