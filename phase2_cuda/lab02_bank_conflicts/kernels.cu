// Lab 2.2 - shared memory and bank conflicts: a stride sweep that measures the cost, and three row-sum kernels that
// show it in a real (memory-bound) kernel, with the two classic fixes: padding and an XOR swizzle.
//
//   bank_01_stride          micro-benchmark: lane i reads word i * stride; time proportional to gcd(stride, 32)
//   bank_02_xor_swizzle     the stride-32 walk with word i * 32 + (j ^ i): one pass per load again
//   rowsum_01_conflicted    row sums through tile[32][32]: the row walk is a 32-way conflict
//   rowsum_02_padded        tile[32][33]: conflict-free
//   rowsum_03_swizzled      tile[32][32], element (r, c) at r * 32 + (c ^ r): conflict-free, no extra memory
// Run: python -m phase2_cuda.lab02_bank_conflicts (the measured figures are in this lab's README, not here).
//
// The model (every prediction below comes from it): shared memory is 32 banks, each 4 bytes wide; 32-bit word w lives
// in bank w mod 32. One warp instruction is served in as many passes ("wavefronts") as the largest number of DIFFERENT
// words any one bank is asked for; lanes reading the SAME word share it (broadcast). A conflict-free warp access is one
// pass: 32 lanes x 4 B = 128 B per clock per SM. An n-way conflict is n passes, n times the time.
// For a lane stride of s words (lane i reads word i * s), the degree is gcd(s, 32): odd strides are free, stride 2
// is 2-way, 4 is 4-way, ..., 32 is 32-way. Padding a row of 32 words to 33 turns stride 32 into stride 33: odd, free.
// An XOR swizzle keeps the row at 32 words but stores column c of row r at r * 32 + (c ^ r): lane r reading its row
// at column c now hits bank c ^ r, a different bank for every lane.

#ifndef READS
#define READS 32        // shared loads per repetition in the sweep kernels, unrolled (immediate address offsets)
#endif
#ifndef MAX_STRIDE
#define MAX_STRIDE 64   // largest lane stride (words) the sweep buffer is sized for
#endif
#ifndef WARPS
#define WARPS 8         // row-sum kernels: warps per block, each with its own 32 x 32 tile
#endif
#define BUF_WORDS (31 * MAX_STRIDE + READS)

// ---------------------------------------------------------------------------------------------------------------------
// bank_01_stride (micro-benchmark)
// Launch: blocks of 256 threads, one wave (as many blocks as fit on every SM at once). The block copies BUF_WORDS
// words of src into shared memory, then lane i of every warp reads words i * stride + j, j = 0..READS-1, `reps` times,
// and each thread writes its sum (so the loads cannot be optimized away and the result can be checked).
// The pointer is volatile so that every repetition really loads (otherwise the compiler would load once and reuse
// the registers); the j offsets are compile-time constants, so each load is one LDS with an immediate offset and no
// address arithmetic: the loop is limited by the shared-memory pipe, not by instruction issue.
// Global memory: BUF_WORDS * 4 bytes per block in, 4 bytes per thread out, negligible. Shared memory: 128 B requested
// per warp load. FLOPs: one add per load.
// Prediction: time proportional to gcd(stride, 32) (stride 0 = broadcast = 1 pass): one pass per clock per SM, i.e.
// 128 B of requested shared memory per clock per SM at stride 1, 1/32 of that at 32.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void bank_01_stride(const float* __restrict__ src, float* __restrict__ out, int stride, int reps)
{
    __shared__ float buf[BUF_WORDS];
    for (int i = threadIdx.x; i < BUF_WORDS; i += blockDim.x) buf[i] = src[i];
    __syncthreads();
    const volatile float* p = buf + (threadIdx.x & 31) * stride;
    float acc = 0.0f;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int j = 0; j < READS; ++j) acc += p[j];
    }
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ---------------------------------------------------------------------------------------------------------------------
// bank_02_xor_swizzle (micro-benchmark, the fix that keeps 32-word rows)
// Same launch and the same logical access as bank_01_stride at stride 32 (lane i walks the 32 words of row i), but
// word j of row i is read at i * 32 + (j ^ i). For a fixed j the 32 lanes hit banks j ^ 0, j ^ 1, ..., j ^ 31: all
// different, one pass. Each lane still reads all 32 words of its row (j ^ i runs over 0..31 as j does), so the sum,
// and the output, equal bank_01_stride's at stride 32 (exactly: the data are small integers).
// Cost of the fix: an XOR per address. Here ptxas computes the 32 swizzled addresses once, before the loop (32 LOP3,
// and 32 registers to hold them), so the loop itself is as lean as bank_01_stride's; no extra shared memory.
// Prediction: back to ~1 pass per load, the same time as stride 1 or stride 33.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void bank_02_xor_swizzle(const float* __restrict__ src, float* __restrict__ out, int reps)
{
    __shared__ float buf[BUF_WORDS];
    for (int i = threadIdx.x; i < BUF_WORDS; i += blockDim.x) buf[i] = src[i];
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const volatile float* row = buf + lane * 32;
    float acc = 0.0f;
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int j = 0; j < 32; ++j) acc += row[j ^ lane];
    }
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// ---------------------------------------------------------------------------------------------------------------------
// Row sums of a rows x 32 fp32 matrix: out[r] = sum_c x[r][c]. The layout is chosen to make the effect visible: each
// warp loads a 32 x 32 tile with lanes along c (coalesced: 128 B per load, 32 loads in flight per thread), puts it in
// shared memory, then lane i adds up row i of the tile: lane i reads word (i, c) for c = 0..31.
// Launch: blocks of 32 * WARPS threads, one tile of 32 rows per warp, ceil(ceil(rows / 32) / WARPS) blocks.
// Only lanes of one warp share a tile, so __syncwarp() (not __syncthreads) orders the writes before the reads; a warp
// with no tile returns early, which is safe because no block-wide barrier follows.
// The row is read through a volatile pointer, which keeps the 32 reads as 32 separate 4-byte loads in all three
// kernels. Left alone, ptxas fuses 01's reads of a contiguous row into 8 x LDS.128; a 16-byte shared load is served a
// quarter-warp (8 lanes) at a time, and 8 lanes 128 B apart still share 4 banks: 8 passes x 4 quarters = 32 per load,
// 256 per tile instead of 1024. Worth knowing (wider accesses change the conflict arithmetic), but here it would hide
// the effect this lab isolates, so all three kernels issue the same 32 LDS and differ only in their addresses.
// Bytes per row: 128 read + 4 written = 132; FLOPs: 31 adds. 0.23 FLOP/B: memory-bound, as long as shared memory
// keeps up: the tile must pass through it faster than HBM delivers bytes to each SM (bandwidth / SMs / SM clock;
// `--plan` prints this GPU's figure).
// ---------------------------------------------------------------------------------------------------------------------

// rowsum_01_conflicted: tile[32][32]. Lane i reading word (i, c) = i * 32 + c: every lane in bank c, 32-way.
// Prediction: per tile, 32 stores (1 pass each) + 32 loads x 32 passes = 1056 passes for 4 KiB: ~3.9 B per clock per
// SM. On a GPU whose HBM delivers several times that to each SM, the conflict, not memory, is the bound, and the
// kernel is that many times slower than the padded one; on one that delivers less, the conflict hides.
extern "C" __global__ void rowsum_01_conflicted(const float* __restrict__ x, float* __restrict__ out, long long rows)
{
    __shared__ float tiles[WARPS][32][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const long long row0 = ((long long)blockIdx.x * WARPS + w) * 32;
    if (row0 >= rows) return;
    float(*t)[32] = tiles[w];
    float v[32];
#pragma unroll
    for (int r = 0; r < 32; ++r) v[r] = (row0 + r < rows) ? x[(row0 + r) * 32 + lane] : 0.0f;
#pragma unroll
    for (int r = 0; r < 32; ++r) t[r][lane] = v[r];     // row r, lanes along c: banks 0..31, one pass
    __syncwarp();
    const volatile float* row = t[lane];
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < 32; ++c) s += row[c];           // column c of every lane's row: all in bank c, 32 passes
    if (row0 + lane < rows) out[row0 + lane] = s;
}

// rowsum_02_padded: what changed: tile[32][33]. Word (i, c) = i * 33 + c, bank (i + c) mod 32: one pass.
// Cost: 32 words of shared memory per tile (1 KiB per block). Prediction: HBM-bound, faster than 01 by as much as
// HBM outpaces 3.9 B per clock per SM.
extern "C" __global__ void rowsum_02_padded(const float* __restrict__ x, float* __restrict__ out, long long rows)
{
    __shared__ float tiles[WARPS][32][33];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const long long row0 = ((long long)blockIdx.x * WARPS + w) * 32;
    if (row0 >= rows) return;
    float(*t)[33] = tiles[w];
    float v[32];
#pragma unroll
    for (int r = 0; r < 32; ++r) v[r] = (row0 + r < rows) ? x[(row0 + r) * 32 + lane] : 0.0f;
#pragma unroll
    for (int r = 0; r < 32; ++r) t[r][lane] = v[r];
    __syncwarp();
    const volatile float* row = t[lane];
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < 32; ++c) s += row[c];
    if (row0 + lane < rows) out[row0 + lane] = s;
}

// rowsum_03_swizzled: what changed (from 01): element (r, c) is stored at word r * 32 + (c ^ r). Storing row r, lanes
// c = 0..31 hit banks c ^ r: all different. Reading, lane i takes column c of its row from word i * 32 + (c ^ i):
// banks c ^ i, all different. No extra memory; one XOR per address. This is the layout trick that tensor-core
// kernels (and the TMA's swizzle modes) use, where padding would break the alignment that 16-byte accesses need.
// Prediction: the same as 02.
extern "C" __global__ void rowsum_03_swizzled(const float* __restrict__ x, float* __restrict__ out, long long rows)
{
    __shared__ float tiles[WARPS][32][32];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const long long row0 = ((long long)blockIdx.x * WARPS + w) * 32;
    if (row0 >= rows) return;
    float(*t)[32] = tiles[w];
    float v[32];
#pragma unroll
    for (int r = 0; r < 32; ++r) v[r] = (row0 + r < rows) ? x[(row0 + r) * 32 + lane] : 0.0f;
#pragma unroll
    for (int r = 0; r < 32; ++r) t[r][lane ^ r] = v[r];
    __syncwarp();
    const volatile float* row = t[lane];
    float s = 0.0f;
#pragma unroll
    for (int c = 0; c < 32; ++c) s += row[c ^ lane];
    if (row0 + lane < rows) out[row0 + lane] = s;
}
