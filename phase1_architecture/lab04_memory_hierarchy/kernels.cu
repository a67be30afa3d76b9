// Lab 1.4 - the memory hierarchy, measured: bandwidth against working-set size (L1, L2, HBM), the latency of each
// level with a dependent pointer chase, and shared memory and registers for comparison. The kernels:
//
//   mem_01_read_sweep_scalar   the read sweep with 4-byte loads: any n, any alignment (the reference and fallback)
//   mem_02_read_sweep_float4   the same sweep, 16-byte loads, UNROLL in flight per thread (what the sweep measures)
//   mem_03_pointer_chase       one thread, idx = next[idx]: the load-to-use latency of wherever next[] lives
//   mem_04_shared_read         a 32 KiB tile in shared memory, read over and over with 16-byte loads
//   mem_05_register_fma        NACC independent FFMA chains per thread: the register file's operand bandwidth
// Run: python -m phase1_architecture.lab04_memory_hierarchy (the measured figures are in this lab's README).
//
// The read sweep (mem_01, mem_02) has a simple contract that a float64 reference can check exactly:
//   a grid of `blocks` blocks reads a working set x[0 .. n); block b starts at s_b = (b * n / blocks) rounded down to a
//   multiple of 4, and reads `per_block` consecutive elements from there, wrapping around the end of x; it writes the
//   sum of what it read to out[b].
// Why this shape: when per_block > n every byte is re-read per_block * blocks / n times, and the distance between two
// reads of the same byte (other bytes touched in between, by the whole GPU) is about n bytes. So the working set n
// alone decides where the data lives: n below the L1 (every block on an SM reads the same n bytes), n below the L2,
// or HBM (`--plan` prints this GPU's L1 and L2 sizes). When per_block < n each block reads its own slice once: a
// plain streaming read. The kernels only read (plus one float per block): bytes moved = blocks * per_block * 4.

#include "reduce.cuh"

// Sum of v over the block, written by thread 0 to *dst. blockDim.x must be a multiple of 32, at most 1024.
// Kept here rather than reduce.cuh's block_sum (an all-reduce: every warp does the second level) because that
// version reschedules these kernels' main loops: only warp 0 reduces the partial sums, and only thread 0 writes.
__device__ __forceinline__ void block_sum_to(float v, float* dst)
{
    __shared__ float partial[32];
    v = warp_sum(v);
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? partial[lane] : 0.f;
        v = warp_sum(v);
        if (lane == 0) *dst = v;
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// mem_01_read_sweep_scalar
// The reference version: 4-byte loads, any n >= 1, any per_block >= 0, any alignment. Thread t reads elements
// t, t + blockDim, ... of its block's range; the wrapped index is kept as a running value (one 64-bit modulo per
// thread at the start, then additions with a conditional subtract), because a 64-bit division per load would cost
// more than the load. One 4-byte load per thread in flight: latency-bound at large n (the float4 version is faster).
// Used for correctness on any input and as mem_02's fallback; the sweep measures mem_02 (mem_01 is not timed).
// Launch: blocks of 256 threads (any multiple of 32), `blocks` blocks (<= 2^31 - 1).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void mem_01_read_sweep_scalar(const float* __restrict__ x, long long n, long long per_block,
                                                    float* __restrict__ out)
{
    long long s = ((long long)blockIdx.x * n / gridDim.x) & ~3LL;
    long long k = (s + threadIdx.x) % n;
    long long step = blockDim.x % n;          // blockDim.x may exceed a tiny n
    float acc = 0.f;
    for (long long j = threadIdx.x; j < per_block; j += blockDim.x) {
        acc += x[k];
        k += step;
        if (k >= n) k -= n;
    }
    block_sum_to(acc, out + blockIdx.x);
}

// ---------------------------------------------------------------------------------------------------------------------
// mem_02_read_sweep_float4
// Same contract, 16-byte loads (LDG.E.128) and UNROLL independent loads in flight per thread, each into its own
// accumulator: a warp instruction moves 512 B. The sweep launches as many blocks as fit every SM at once (the
// occupancy calculator on this kernel's registers), so resident threads x UNROLL x 16 B are in flight per SM: several
// times what Little's law asks to cover HBM latency (bandwidth x ~0.7 us / SMs; `--plan` prints both for this GPU).
// Preconditions (the wrapper checks them, else it uses mem_01): x 16-byte aligned, n % 4 == 0,
// per_block % 4 == 0, n / 4 >= blockDim.x (so one conditional subtract wraps an index), n / 4 <= 2^31 and
// per_block / 4 <= 2^31 (32-bit float4 indices that cannot overflow: cheaper address arithmetic, which matters when
// loads hit in L1 at ~100 B/clk/SM).
// Prediction: an L1 plateau near 128 B/clock/SM while n fits the L1, an L2 plateau above the HBM ceiling until n
// nears the L2 size (earlier where the L2 is split in two halves), then HBM near its measured ceiling; the L2 plateau
// ends within 0.5x-1.5x of the L2 size.
// ---------------------------------------------------------------------------------------------------------------------
#ifndef UNROLL
#define UNROLL 4
#endif

extern "C" __global__ void mem_02_read_sweep_float4(const float4* __restrict__ x4, long long n, long long per_block,
                                                    float* __restrict__ out)
{
    unsigned int n4 = (unsigned int)(n >> 2);
    long long s = ((long long)blockIdx.x * n / gridDim.x) & ~3LL;
    unsigned int len4 = (unsigned int)(per_block >> 2);         // float4 this block reads
    unsigned int stride = blockDim.x * UNROLL;
    unsigned int k = (unsigned int)(s >> 2) + threadIdx.x;       // < 2 n4: one subtract wraps it
    if (k >= n4) k -= n4;
    float4 acc[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = make_float4(0.f, 0.f, 0.f, 0.f);
    unsigned int j = threadIdx.x;
    // Full rounds: all UNROLL loads are in range, so they are unconditional and independent; the compiler issues them
    // back to back and only then waits (a bounds check per load would let it interleave loads and adds instead).
    for (; j + (UNROLL - 1) * blockDim.x < len4; j += stride) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            v[u] = x4[k];
            k += blockDim.x;
            if (k >= n4) k -= n4;
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            acc[u].x += v[u].x; acc[u].y += v[u].y; acc[u].z += v[u].z; acc[u].w += v[u].w;
        }
    }
    for (; j < len4; j += blockDim.x) {                             // the last partial round, one load at a time
        float4 v = x4[k];
        acc[0].x += v.x; acc[0].y += v.y; acc[0].z += v.z; acc[0].w += v.w;
        k += blockDim.x;
        if (k >= n4) k -= n4;
    }
    float total = 0.f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) total += (acc[u].x + acc[u].y) + (acc[u].z + acc[u].w);
    block_sum_to(total, out + blockIdx.x);
}

// ---------------------------------------------------------------------------------------------------------------------
// mem_03_pointer_chase
// Latency, not bandwidth: one thread follows idx = next[idx] `steps` times. Every load's address comes from the
// previous load, so nothing overlaps and the time per step is the load-to-use latency of wherever next[] lives.
// The host lays next[] out as one random cycle over 128-byte lines of an n-element array (so neither the hardware's
// spatial prefetching nor a line shared by two steps helps), first walks `warm` steps untimed (to load the cache
// level under test), then times `steps` steps with clock64() (SM cycles) and %globaltimer (ns).
// out[0] = the final index (the host checks it against the same walk in NumPy: the chase really ran),
// out[1] = cycles, out[2] = nanoseconds for the timed steps.
// Launch: 1 block of 1 thread. Published figures for recent GPUs (the lesson, README.md, cites them): L1 a few tens
// of cycles, L2 a few hundred (more for the far half of a split L2), HBM more again.
// Prediction: each level's latency falls in the published range. A step is one IMAD.WIDE (index -> address) plus
// the LDG, so the figures include a few cycles of address arithmetic on top of the load-to-use latency.
// ---------------------------------------------------------------------------------------------------------------------
// %globaltimer, read here as lab 1.3 reads it (a timing probe of this lab; no shared header has one).
__device__ __forceinline__ long long global_ns()
{
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void mem_03_pointer_chase(const unsigned int* next, unsigned int start, long long warm,
                                                long long steps, long long* out)
{
    // Plain loads (LDG.E): on sm_70 and later they are cached in L1 by default, so a small cycle is served from L1.
    unsigned int idx = start;
    for (long long i = 0; i < warm; ++i) idx = next[idx];
    long long c0 = clock64();
    long long g0 = global_ns();
    for (long long i = 0; i < steps; ++i) idx = next[idx];
    // The clock reads do not wait for an outstanding load (only an instruction that reads idx does), so the timed
    // window may start one load early and end one load early: an error of at most one step in `steps` (>= 4096).
    long long c1 = clock64();
    long long g1 = global_ns();
    out[0] = idx;
    out[1] = c1 - c0;
    out[2] = g1 - g0;
}

// ---------------------------------------------------------------------------------------------------------------------
// mem_04_shared_read
// Shared-memory bandwidth: each block copies its TILE_FLOAT4 x 16 B tile of x into shared memory, then every thread
// reads float4s of it `reps` times (reps * blockDim.x float4 per block), four independent accumulators deep.
// A warp's float4 read covers 512 consecutive bytes: four 128-byte wavefronts with no bank conflict, the most
// shared memory can deliver (128 B per clock per SM: SMs x 128 B x the SM clock; `--plan` prints this GPU's).
// out[b] = sum of everything block b read = (reps * blockDim.x / TILE_FLOAT4) * sum(tile b) when reps * blockDim.x
// is a multiple of TILE_FLOAT4 (the wrapper ensures it). Bytes read from shared memory: blocks * reps * blockDim.x
// * 16; from global: blocks * TILE_FLOAT4 * 16 (once).
// Launch: blocks of 256 threads, TILE_FLOAT4 * 16 B of static shared memory per block (32 KiB at the default 2048).
// Prediction: close to 128 B/clock/SM, a little above global loads that hit L1 (no tag lookups, no address
// translation).
// ---------------------------------------------------------------------------------------------------------------------
#ifndef TILE_FLOAT4
#define TILE_FLOAT4 2048
#endif

extern "C" __global__ void mem_04_shared_read(const float4* __restrict__ x4, int reps, float* __restrict__ out)
{
    __shared__ float4 tile[TILE_FLOAT4];
    const float4* src = x4 + (long long)blockIdx.x * TILE_FLOAT4;
    for (int i = threadIdx.x; i < TILE_FLOAT4; i += blockDim.x) tile[i] = src[i];
    __syncthreads();
    float4 a0 = make_float4(0.f, 0.f, 0.f, 0.f), a1 = a0, a2 = a0, a3 = a0;
    unsigned int k = threadIdx.x;
    int r = 0;
    for (; r + 4 <= reps; r += 4) {
        float4 v0 = tile[k & (TILE_FLOAT4 - 1)];
        float4 v1 = tile[(k + blockDim.x) & (TILE_FLOAT4 - 1)];
        float4 v2 = tile[(k + 2 * blockDim.x) & (TILE_FLOAT4 - 1)];
        float4 v3 = tile[(k + 3 * blockDim.x) & (TILE_FLOAT4 - 1)];
        a0.x += v0.x; a0.y += v0.y; a0.z += v0.z; a0.w += v0.w;
        a1.x += v1.x; a1.y += v1.y; a1.z += v1.z; a1.w += v1.w;
        a2.x += v2.x; a2.y += v2.y; a2.z += v2.z; a2.w += v2.w;
        a3.x += v3.x; a3.y += v3.y; a3.z += v3.z; a3.w += v3.w;
        k = (k + 4 * blockDim.x) & (TILE_FLOAT4 - 1);
    }
    for (; r < reps; ++r) {
        float4 v0 = tile[k & (TILE_FLOAT4 - 1)];
        a0.x += v0.x; a0.y += v0.y; a0.z += v0.z; a0.w += v0.w;
        k = (k + blockDim.x) & (TILE_FLOAT4 - 1);
    }
    float total = ((a0.x + a0.y) + (a0.z + a0.w)) + ((a1.x + a1.y) + (a1.z + a1.w)) +
                  ((a2.x + a2.y) + (a2.z + a2.w)) + ((a3.x + a3.y) + (a3.z + a3.w));
    block_sum_to(total, out + blockIdx.x);
}

// ---------------------------------------------------------------------------------------------------------------------
// mem_05_register_fma
// Registers: the operands of an FFMA come from the register file, 3 reads of 4 B each per FFMA, and an SM issues one
// FFMA per FP32 lane per clock (128 lanes on most GPUs, 64 on sm_75 and sm_80): 1.5 KiB/clock/SM of register reads
// at 128 lanes, 12x shared memory's 128 B/clock - one more order of magnitude.
// Each thread runs NACC independent chains a = a * m + c for `iters` iterations (enough chains that the 4-cycle
// FFMA latency is hidden: NACC in flight per thread, 16+ warps per scheduler) and writes the sum.
// y[t] = sum over the NACC chains of the chain started from x[t] + j * 2^-10 (j = 0 .. NACC - 1).
// FLOPs: 2 * NACC * iters per thread; bytes from global memory: 8 per thread (negligible).
// Launch: blocks of 256 threads, one thread per element of x.
// Prediction: at most 0.91 of the FFMA peak: the SASS loop is 32 FFMA + IADD3, ISETP, BRA, so 3 issue slots in 35
// go to the loop. "Operand bytes" is a model: the SASS takes m from a uniform register and c through the
// operand-reuse cache, so the register file itself is read less than 12 B/FFMA.
// ---------------------------------------------------------------------------------------------------------------------
#ifndef NACC
#define NACC 8
#endif

extern "C" __global__ void mem_05_register_fma(const float* __restrict__ x, float* __restrict__ y, long long n,
                                               int iters, float m, float c)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    float a[NACC];
    float x0 = x[t];
#pragma unroll
    for (int j = 0; j < NACC; ++j) a[j] = x0 + j * 0.0009765625f;
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < NACC; ++j) a[j] = fmaf(a[j], m, c);
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < NACC; ++j) s += a[j];
    y[t] = s;
}
