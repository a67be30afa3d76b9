// Lab 2.3 - warp-level reduce and scan: shuffles (__shfl_down_sync, __shfl_xor_sync, __shfl_up_sync) against shared
// memory, and how the two compose into an inclusive scan of an array of any length.
//
//   warp_reduce_01_smem        per-segment sums through a tree in shared memory, __syncwarp between steps
//   warp_reduce_02_shfl_down   the same with __shfl_down_sync: lane 0 ends with the sum
//   warp_reduce_03_shfl_xor    a butterfly (__shfl_xor_sync): every lane ends with the sum, one coalesced store
//   warp_scan_01_smem          inclusive segment scan, Hillis-Steele in shared memory
//   warp_scan_02_shfl_up       the same with __shfl_up_sync
// Run: python -m phase2_cuda.lab03_warp_shuffle (the measured figures are in this lab's README, not here).
// This lab teaches the shuffles themselves, so it writes them out rather than taking common/cuda/reduce.cuh's.
//
// The unit of work is a SEGMENT of 32 consecutive elements, one per lane: element g * 32 + lane of segment g.
// A warp handles SEGS consecutive segments (SEGS * 32 elements, contiguous), loading all of them before reducing, so
// each thread has SEGS independent 4-byte loads in flight (8 x 4 B x 2048 threads = 64 KiB per SM on a GPU that holds
// 2048 threads per SM, enough to cover DRAM latency; `--plan` prints this GPU's figure); every load instruction is 32
// consecutive floats, one 128-byte line: coalesced.
// Launch (all kernels): blocks of 32 * WARPS threads; warp w of block b takes segments (b * WARPS + w) * SEGS + k,
// k < SEGS; ceil(ceil(n / 32) / (WARPS * SEGS)) blocks. Lanes past the end of the array load 0 and still take part.
//
// The mask: every *_sync intrinsic takes a 32-bit mask of the lanes that execute it, and the hardware waits for those
// lanes to reach it (on Volta and later, the lanes of a warp can be at different points of the program). Here all 32
// lanes always execute every shuffle (FULL = 0xffffffff): tail lanes are NOT allowed to skip the loop or return early,
// they load 0 instead. A lane that had returned would make FULL a lie, and the result undefined.
// Why no __syncthreads: a shuffle moves registers between the lanes of ONE warp inside one instruction; no other warp
// is involved and no memory is written, so nothing needs ordering across the block. The shared-memory versions do
// exchange through memory, but only within a warp, so __syncwarp() (a warp-level barrier AND memory fence) is enough
// between steps; it is still needed: without it, nothing guarantees that lane 5's store is visible to lane 4's load
// (the old "warp-synchronous" code that relied on lockstep execution is a race since Volta).
//
// Bytes and FLOPs: warp sums read 4 n bytes and write n / 8; the segment scan reads 4 n + n / 8 and writes 4 n.
// 31 adds per segment for a sum; 5 x 32 adds (Hillis-Steele) per segment for a scan. Memory-bound.

#ifndef SEGS
#define SEGS 8          // segments (of 32 elements) per warp
#endif
#ifndef WARPS
#define WARPS 8         // warps per block
#endif
#define FULL 0xffffffffu
static_assert(SEGS >= 1 && SEGS <= 32, "warp_reduce_03 stores segment k's sum from lane k");

// Load this warp's SEGS segments: v[k] = x[(first + k) * 32 + lane], 0 past the end. Returns the first segment index.
__device__ __forceinline__ long long load_segments(const float* __restrict__ x, long long n, float (&v)[SEGS])
{
    const int lane = threadIdx.x & 31;
    const long long first = ((long long)blockIdx.x * WARPS + (threadIdx.x >> 5)) * SEGS;
#pragma unroll
    for (int k = 0; k < SEGS; ++k) {
        long long i = (first + k) * 32 + lane;
        v[k] = (i < n) ? x[i] : 0.0f;
    }
    return first;
}

// ---------------------------------------------------------------------------------------------------------------------
// warp_reduce_01_smem: sums[g] = x[32 g] + ... + x[32 g + 31], through shared memory.
// Each lane stores its value; then, for offset 16, 8, 4, 2, 1, lanes below `offset` add the slot `offset` above them
// (the readers touch slots [offset, 2 offset), the writers [0, offset): no overlap inside a step) and __syncwarp()
// separates the steps. Lane 0 ends with the total.
// Cost per segment: 1 store + 5 x (1 load + 1 store) = 11 shared-memory passes, plus 5 warp barriers.
// Prediction: HBM streams 128 B (one segment) to an SM every 128 / (bandwidth / SMs / SM clock) clocks: 5 to 10 on
// the GPUs with the most bandwidth per SM, several times more on others (`--plan` prints this GPU's figure). Where
// that is fewer than 11 passes, shared memory, not HBM, bounds this kernel, at (clocks per segment) / 11 of the HBM
// ceiling at best (~70% at 8 clocks); where it is more, this kernel streams at the HBM rate like the shuffles.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void warp_reduce_01_smem(const float* __restrict__ x, float* __restrict__ sums, long long n)
{
    __shared__ float buf[WARPS][SEGS][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    float v[SEGS];
    const long long first = load_segments(x, n, v);
#pragma unroll
    for (int k = 0; k < SEGS; ++k) buf[w][k][lane] = v[k];
    __syncwarp();
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        if (lane < offset) {
#pragma unroll
            for (int k = 0; k < SEGS; ++k) {
                v[k] += buf[w][k][lane + offset];
                buf[w][k][lane] = v[k];
            }
        }
        __syncwarp();
    }
    const long long segs = (n + 31) / 32;
    if (lane == 0) {
#pragma unroll
        for (int k = 0; k < SEGS; ++k)
            if (first + k < segs) sums[first + k] = v[k];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// warp_reduce_02_shfl_down: what changed: the exchange is a register shuffle. __shfl_down_sync(FULL, v, offset) gives
// lane i the v of lane i + offset; lanes whose source would be past lane 31 get their own value back, so after
// offsets 16, 8, 4, 2, 1 only lane 0 holds the full sum (the other lanes hold partial sums, never used).
// Cost per segment: 5 SHFL + 5 FADD, no shared memory, no barrier.
// Prediction: 5 shuffles per segment, fewer than the clocks HBM takes to deliver it on any current GPU: HBM-bound,
// ~the ceiling.
// Note the store: lane 0 writes the SEGS sums one at a time (8 single-lane STG per warp); 03 changes that.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void warp_reduce_02_shfl_down(const float* __restrict__ x, float* __restrict__ sums,
                                                    long long n)
{
    const int lane = threadIdx.x & 31;
    float v[SEGS];
    const long long first = load_segments(x, n, v);
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
#pragma unroll
        for (int k = 0; k < SEGS; ++k) v[k] += __shfl_down_sync(FULL, v[k], offset);
    }
    const long long segs = (n + 31) / 32;
    if (lane == 0) {
#pragma unroll
        for (int k = 0; k < SEGS; ++k)
            if (first + k < segs) sums[first + k] = v[k];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// warp_reduce_03_shfl_xor: what changed: a butterfly. __shfl_xor_sync(FULL, v, m) swaps values between lanes i and
// i ^ m; after m = 16, 8, 4, 2, 1 EVERY lane holds the full sum (the same cost as 02). Use it when every lane needs
// the result (a softmax's max and sum, a layernorm's mean); here lane k writes segment k's sum, so the SEGS stores of
// a warp are one coalesced instruction instead of SEGS single-lane ones.
// Prediction: the same as 02 (HBM-bound).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void warp_reduce_03_shfl_xor(const float* __restrict__ x, float* __restrict__ sums, long long n)
{
    const int lane = threadIdx.x & 31;
    float v[SEGS];
    const long long first = load_segments(x, n, v);
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) {
#pragma unroll
        for (int k = 0; k < SEGS; ++k) v[k] += __shfl_xor_sync(FULL, v[k], m);
    }
    const long long segs = (n + 31) / 32;
    float mine = v[0];
#pragma unroll
    for (int k = 1; k < SEGS; ++k) mine = (lane == k) ? v[k] : mine;   // constant indices: v stays in registers
    if (lane < SEGS && first + lane < segs) sums[first + lane] = mine;
}

// ---------------------------------------------------------------------------------------------------------------------
// Inclusive segment scan: y[32 g + i] = offsets[g - 1] + x[32 g] + ... + x[32 g + i], where offsets[] is the inclusive
// scan of the segment sums (so offsets[g - 1] is the sum of everything before segment g; segment 0 adds nothing).
// With the warp sums and this kernel, a scan of any length is a recursion the host drives: sum the segments, scan the
// sums (the same two kernels on an array 32x shorter), then scan each segment and add its offset. Traffic: ~4 n + 8 n
// bytes (two passes over x, one over y), plus 1/32 of that for each level below.
// ---------------------------------------------------------------------------------------------------------------------

// warp_scan_01_smem: Hillis-Steele in shared memory. For offset 1, 2, 4, 8, 16, each lane reads the slot `offset`
// below it, waits for every lane to have read (__syncwarp), then adds and writes back, and waits again.
// Cost per segment: 1 + 5 x 2 = 11 passes and 10 warp barriers.
// Prediction: bound by shared memory like warp_reduce_01_smem; the whole scan the slowest of the three pairings.
extern "C" __global__ void warp_scan_01_smem(const float* __restrict__ x, const float* __restrict__ offsets,
                                             float* __restrict__ y, long long n)
{
    __shared__ float buf[WARPS][SEGS][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    float v[SEGS];
    const long long first = load_segments(x, n, v);
#pragma unroll
    for (int k = 0; k < SEGS; ++k) buf[w][k][lane] = v[k];
    __syncwarp();
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
        float t[SEGS];
#pragma unroll
        for (int k = 0; k < SEGS; ++k) t[k] = (lane >= offset) ? buf[w][k][lane - offset] : 0.0f;
        __syncwarp();                      // everyone has read before anyone overwrites
#pragma unroll
        for (int k = 0; k < SEGS; ++k) {
            v[k] += t[k];
            buf[w][k][lane] = v[k];
        }
        __syncwarp();                      // everyone has written before the next step reads
    }
#pragma unroll
    for (int k = 0; k < SEGS; ++k) {
        long long g = first + k, i = g * 32 + lane;
        if (i < n) y[i] = v[k] + (g > 0 ? offsets[g - 1] : 0.0f);
    }
}

// warp_scan_02_shfl_up: what changed: __shfl_up_sync(FULL, v, offset) gives lane i the v of lane i - offset; lanes
// below `offset` have no source (they get their own value back) and must not add it, hence the `lane >= offset` test.
// Cost per segment: 5 SHFL + 5 FADD (predicated), no shared memory, no barrier.
// Prediction: HBM-bound; with the ~12.6 n bytes the reduce-then-scan moves, at most 8 / 12.6 of a one-pass scan at
// the ceiling.
extern "C" __global__ void warp_scan_02_shfl_up(const float* __restrict__ x, const float* __restrict__ offsets,
                                                float* __restrict__ y, long long n)
{
    const int lane = threadIdx.x & 31;
    float v[SEGS];
    const long long first = load_segments(x, n, v);
#pragma unroll
    for (int offset = 1; offset < 32; offset <<= 1) {
#pragma unroll
        for (int k = 0; k < SEGS; ++k) {
            float t = __shfl_up_sync(FULL, v[k], offset);
            if (lane >= offset) v[k] += t;
        }
    }
#pragma unroll
    for (int k = 0; k < SEGS; ++k) {
        long long g = first + k, i = g * 32 + lane;
        if (i < n) y[i] = v[k] + (g > 0 ? offsets[g - 1] : 0.0f);
    }
}
