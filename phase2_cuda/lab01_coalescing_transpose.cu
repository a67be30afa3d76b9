// Matrix transpose, out = in^T, fp32, and two copy probes: what coalescing is, and what it is worth.
//
// in is M x N, row-major (element (r, c) at in[r * N + c]); out is N x M, row-major (out[c * M + r] = in[r * N + c]).
// Every element is read once and written once: 8 M N bytes, 0 FLOPs. A transpose is a copy with a twist, so the
// ceiling is the copy's bandwidth, and every version below is judged by how close it gets to it.
//
// Why a transpose is hard: a warp's 32 lanes should touch 32 consecutive floats (one 128-byte line, four 32-byte
// sectors) in every load and every store instruction. Reading rows of `in` gives that; writing columns of `out` then
// sends the 32 lanes to 32 different rows, 4 M bytes apart: 32 sectors for 128 useful bytes. The cure is to stage a
// tile in shared memory and change which thread writes which element, so that both global sides walk rows.
//
// Launch shape shared by versions 01-03 and copy_tiled: blocks of (32, ROWS) threads, one 32 x 32 tile per block and
// per iteration, each thread moving 32 / ROWS elements (4 with ROWS = 8).
// Grid: (ceil(N / 32), min(ceil(M / 32), 65535)).
// gridDim.y is capped at 65535 by the hardware, so the kernels loop over tile rows (blockIdx.y, += gridDim.y): a
// 3,000,000 x 2 matrix still works. All indices are 64-bit: 16384 x 16384 = 2^28 elements is fine in 32 bits, but
// 65536 x 65536 (16 GiB) is not, and the multiplication r * N is where a 32-bit index would wrap.
//
// in and out are __restrict__: the wrapper refuses overlapping arrays (a transpose cannot be done in place this way),
// and the promise lets the compiler issue all of a thread's loads before its first store (loads in flight).
//
// Measured on an H200 at 16384 x 16384 (results/h200/phase2_lab01_coalescing_transpose.json): the flat copy
// (cupy.copyto) moves the 2 GiB at 4,229 GB/s (0.508 ms), 0.974 of the 4,341 GB/s HBM ceiling; 01 -> 04 climb from
// 0.13x to 0.94x of it, and 04 meets the lab's target (>= 0.85x the copy) at 0.943x in interleaved rounds.

#ifndef ROWS
#define ROWS 8          // threads per block in y: each thread moves 32 / ROWS elements of a 32 x 32 tile
#endif
#ifndef BIG_TILE
#define BIG_TILE 64     // transpose_04's tile edge: a multiple of 32
#endif
#ifndef T04_MIN_BLOCKS
#define T04_MIN_BLOCKS 4  // transpose_04's __launch_bounds__: resident blocks per SM to fit (caps the registers)
#endif
#ifndef COPY_ILP
#define COPY_ILP 8      // copy_strided: elements per thread, all loads issued before the first store
#endif

#define TILE 32         // versions 01-03: the tile edge is the warp width (and the number of shared-memory banks)

static_assert(TILE % ROWS == 0, "ROWS must divide 32");
static_assert(BIG_TILE % 32 == 0 && BIG_TILE % ROWS == 0, "BIG_TILE must be a multiple of 32 and of ROWS");

// ---------------------------------------------------------------------------------------------------------------------
// copy_tiled (probe: the ceiling for this launch shape)
// Same blocks, same tiles, same 4 elements per thread as 01-03, but out[r][c] = in[r][c]: both sides walk rows.
// Whatever gap separates it from a plain flat copy (cupy.copyto) is the cost of the launch shape, not of transposing.
// Measured on an H200 at 16384^2: 4,108 GB/s, 0.971x the flat copy's 4,229 (0.946 of the HBM ceiling): the launch
// shape costs 3%, so the transposes below are judged fairly against either copy.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void copy_tiled(const float* __restrict__ in, float* __restrict__ out, long long M, long long N)
{
    const long long tiles_y = (M + TILE - 1) / TILE;
    const long long c = (long long)blockIdx.x * TILE + threadIdx.x;
    for (long long by = blockIdx.y; by < tiles_y; by += gridDim.y) {
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            long long r = by * TILE + threadIdx.y + j;
            if (r < M && c < N) out[r * N + c] = in[r * N + c];
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// transpose_01_naive
// Read in[r][c] with lanes along c (coalesced: 4 sectors per warp request), write out[c][r] with lanes along c too,
// which is a column of out: 32 lanes -> 32 rows of out, 4 M bytes apart -> 32 sectors per warp store, 4 useful bytes
// in each 32-byte sector. The L2 merges the partial sectors of a block's 32 x 32 tile before they go to DRAM, so DRAM
// bytes barely grow; what grows 8x is the number of store transactions between the SMs and the L2 (32 instead of 4
// per warp store). Prediction: well below the copy, limited by the L2 transaction rate, not by DRAM bandwidth.
// Measured on an H200 at 16384^2: 555 GB/s (3.87 ms), 0.131x the flat copy: the prediction held - 7.6x slower than a
// copy of the same bytes, with every load coalesced (results/h200/phase2_lab01_coalescing_transpose.json).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void transpose_01_naive(const float* __restrict__ in, float* __restrict__ out, long long M,
                                              long long N)
{
    const long long tiles_y = (M + TILE - 1) / TILE;
    const long long c = (long long)blockIdx.x * TILE + threadIdx.x;
    for (long long by = blockIdx.y; by < tiles_y; by += gridDim.y) {
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            long long r = by * TILE + threadIdx.y + j;
            if (r < M && c < N) out[c * M + r] = in[r * N + c];
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// transpose_02_smem_tiled
// What changed: the block reads its 32 x 32 tile row by row into shared memory, waits (__syncthreads: every thread
// reads elements that other threads wrote), then writes the tile of out row by row, taking element tile[tx][ty + j].
// Both global sides are now coalesced: 4 sectors per request, like the copy. Each thread loads its 4 elements into
// registers before storing any to shared memory: written as `if (in range) tile[..] = in[..]`, ptxas paired every load
// with its shared store and kept one or two loads in flight (look at the SASS); staged, all 4 are in flight at once.
// The new cost is inside shared memory: tile[tx][k] for lanes tx = 0..31 sits at word tx * 32 + k, and the bank of a
// word is its index mod 32, so all 32 lanes hit bank k: a 32-way bank conflict, the read is split into 32 passes.
// Prediction: per tile, 32 conflict-free stores + 32 loads x 32 passes = 1056 shared-memory cycles for 4 KiB of data.
// On an H200 (132 SMs, ~1.98 GHz) a 16384^2 matrix is 262144 tiles, ~1986 per SM -> ~2.1 M cycles -> ~1.06 ms, about
// twice the copy's ~0.52 ms: shared memory, not DRAM, becomes the bound.
// Measured on an H200: 1,593 GB/s (1.35 ms), 0.377x the flat copy (0.508 ms) and 2.87x rung 01. The bound held in
// kind - 2.66x the copy's time - but the kernel ran 27% over the 1.06 ms model, likely because the conflicted
// passes do not overlap fully with the loads and stores in flight
// (results/h200/phase2_lab01_coalescing_transpose.json).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void transpose_02_smem_tiled(const float* __restrict__ in, float* __restrict__ out, long long M,
                                                   long long N)
{
    __shared__ float tile[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long tiles_y = (M + TILE - 1) / TILE;
    const long long c0 = (long long)blockIdx.x * TILE;
    for (long long by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const long long r0 = by * TILE;
        float v[TILE / ROWS];
#pragma unroll
        for (int j = 0; j < TILE / ROWS; ++j) {         // every load first: 4 independent loads in flight per thread
            long long r = r0 + ty + j * ROWS, c = c0 + tx;
            v[j] = (r < M && c < N) ? in[r * N + c] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < TILE / ROWS; ++j) tile[ty + j * ROWS][tx] = v[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            long long orow = c0 + ty + j, ocol = r0 + tx;   // out is N x M: its row is a column index of in
            if (orow < N && ocol < M) out[orow * M + ocol] = tile[tx][ty + j];
        }
        if (by + gridDim.y < tiles_y) __syncthreads();   // the next iteration overwrites the tile
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// transpose_03_padded
// What changed: one unused column, tile[32][33]. Word (tx, k) is now at tx * 33 + k, bank (tx + k) mod 32: the 32
// lanes of a column read land in 32 different banks, one pass instead of 32. The row writes stay conflict-free
// (consecutive words). Cost: 128 bytes of shared memory per block.
// Prediction: shared memory drops to ~64 cycles per tile, far under the DRAM time, so the kernel becomes a copy with
// the same launch shape: close to copy_tiled. What can still hold it below a flat copy: each thread has only 4 loads
// (16 B) in flight and the block stalls at the barrier between its load and store halves.
// Measured on an H200: 3,176 GB/s (0.676 ms), 1.99x rung 02 - the conflict is gone - but only 0.751x the flat copy
// and 0.773x copy_tiled, so "close to copy_tiled" did not hold: the second caveat above decided it. At 6 blocks
// (1536 threads) per SM x 16 B, and fewer while blocks wait at the barrier or store, too few bytes are in flight.
// Alone it would miss the lab's 0.85 target (0.750x in interleaved rounds) (phase2_lab01_coalescing_transpose.json).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void transpose_03_padded(const float* __restrict__ in, float* __restrict__ out, long long M,
                                               long long N)
{
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long tiles_y = (M + TILE - 1) / TILE;
    const long long c0 = (long long)blockIdx.x * TILE;
    for (long long by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const long long r0 = by * TILE;
        float v[TILE / ROWS];
#pragma unroll
        for (int j = 0; j < TILE / ROWS; ++j) {         // every load first: 4 independent loads in flight per thread
            long long r = r0 + ty + j * ROWS, c = c0 + tx;
            v[j] = (r < M && c < N) ? in[r * N + c] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < TILE / ROWS; ++j) tile[ty + j * ROWS][tx] = v[j];
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TILE; j += ROWS) {
            long long orow = c0 + ty + j, ocol = r0 + tx;
            if (orow < N && ocol < M) out[orow * M + ocol] = tile[tx][ty + j];
        }
        if (by + gridDim.y < tiles_y) __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// transpose_04_padded_ilp
// What changed: a 64 x 64 tile per block (still 32 x 8 threads), so each thread moves 2 columns x 8 rows = 16 elements,
// and it loads all 16 into registers before writing any to shared memory: 64 bytes of loads in flight per thread
// instead of 16, with one barrier per 16 KiB instead of per 4 KiB. Padding keeps both shared-memory phases
// conflict-free: word (y, x) is at y * 65 + x, bank (y + x) mod 32, and in either phase the 32 lanes vary x (or y)
// by one per lane. Shared memory: 64 x 65 x 4 = 16.6 KiB per block, 8 blocks (2048 threads) still fit on an SM.
// Registers: 16 values plus 16 precomputed 64-bit addresses; left alone ptxas takes 80 registers on sm_90, which fits
// only 3 blocks (768 threads) per SM. __launch_bounds__(256, 4) asks for 4 resident blocks, i.e. at most 64 registers
// per thread, and ptxas meets it without spilling (the compile report shows 64 and 0): 1024 threads x 64 B in flight.
// (T04_MIN_BLOCKS, ROWS and BIG_TILE are macros: the lab's default GPU run also times a few alternatives.)
// Prediction: Little's law, loads only: half of a copy's ~4.4 TB/s is reads, 2.2 TB/s x ~0.7 us of latency ~= 1.5 MB
// of loads in flight, ~12 KiB per SM. 03 (~40 registers, 6 blocks = 1536 threads per SM) offers 24 KiB at its peak,
// enough on paper, but only while every block is in its load phase: blocks also wait at the barrier and store, and
// the latency grows as the memory system fills. 04 offers 64 KiB per SM, a wide margin. Expected: 04 at >= 85% of
// the copy's bandwidth (the lab's target), 03 somewhat below it; by how much is what the run measures.
// Measured on an H200: 3,987 GB/s (0.539 ms), 0.943x the flat copy and 0.970x copy_tiled, +26% over 03; in the
// interleaved target rounds 3,991 vs 4,230 GB/s = 0.943x: target met. 03 was not "somewhat" below but 25% below.
// The alternatives (T04_MIN_BLOCKS 3, ROWS 16 or 4 with tile 64) landed at 0.937-0.940x, inside the spread; a 32 tile
// (32 B per thread) 0.871x, a 96 tile (2 blocks of 256 per SM, long barriers) 0.885x: the default was the best point
// by a hair (results/h200/phase2_lab01_coalescing_transpose.json, "t04_alternatives").
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(32 * ROWS, T04_MIN_BLOCKS)
    transpose_04_padded_ilp(const float* __restrict__ in, float* __restrict__ out, long long M, long long N)
{
    constexpr int CX = BIG_TILE / 32;     // columns per thread
    constexpr int RY = BIG_TILE / ROWS;   // rows per thread
    __shared__ float tile[BIG_TILE][BIG_TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long tiles_y = (M + BIG_TILE - 1) / BIG_TILE;
    const long long c0 = (long long)blockIdx.x * BIG_TILE;
    for (long long by = blockIdx.y; by < tiles_y; by += gridDim.y) {
        const long long r0 = by * BIG_TILE;
        float v[RY][CX];
#pragma unroll
        for (int i = 0; i < RY; ++i) {
#pragma unroll
            for (int j = 0; j < CX; ++j) {          // every load first: 16 independent loads in flight
                long long r = r0 + ty + i * ROWS, c = c0 + tx + j * 32;
                v[i][j] = (r < M && c < N) ? in[r * N + c] : 0.0f;
            }
        }
#pragma unroll
        for (int i = 0; i < RY; ++i) {
#pragma unroll
            for (int j = 0; j < CX; ++j) tile[ty + i * ROWS][tx + j * 32] = v[i][j];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < RY; ++i) {
#pragma unroll
            for (int j = 0; j < CX; ++j) {
                long long orow = c0 + ty + i * ROWS, ocol = r0 + tx + j * 32;
                if (orow < N && ocol < M) out[orow * M + ocol] = tile[tx + j * 32][ty + i * ROWS];
            }
        }
        if (by + gridDim.y < tiles_y) __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// copy_strided (probe: coalescing in one number)
// out[i] = in[i * stride] for i < n: writes are contiguous, reads skip `stride` floats. One warp load touches 32
// addresses 4 * stride bytes apart, so it needs min(32, 4 * stride) 32-byte sectors (stride 1: 4 sectors, the ideal;
// stride >= 8: one sector per lane, 28 of every 32 bytes fetched for nothing). Bytes requested per element: 4 read +
// 4 written; bytes moved: 4 written + 32 * sectors / 32 read. Prediction: useful GB/s = ceiling x 8 / (4 + sectors),
// i.e. 100% at stride 1, 2/3 at stride 2, ..., 22% from stride 8 on (flat, since a sector cannot get emptier).
// Launch: blocks of 256 threads, ceil(n / (256 * COPY_ILP)) blocks; COPY_ILP loads in flight per thread so that
// stride 1 is not latency-bound (8 x 4 B x 2048 threads = 64 KiB per SM).
// Measured on an H200 (n = 2^24, results/h200/phase2_lab01_coalescing_transpose.json, the _strided rows): 3,455 GB/s
// at stride 1, 2,475 at 2, 917 at 8: 0.80-0.95 of the prediction up to stride 8, the shortfall a fixed ~7-8 us per
// call (a 39-146 us call does not hide it). Past 8 the "flat from 8 on" prediction failed: 759 GB/s at stride 10,
// 645 at 12, 499 at 16, 422 at 32 (0.79, 0.67, 0.52, 0.44 of it). Likely reason: DRAM is read in 64-byte units, two
// sectors, so once lanes are >= 40 B apart each lane's sector drags its neighbour along; a 64-byte model predicts
// 0.82, 0.69 and 0.53 at strides 10, 12 and 16.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void copy_strided(const float* __restrict__ in, float* __restrict__ out, long long n,
                                        long long stride)
{
    const long long base = (long long)blockIdx.x * blockDim.x * COPY_ILP + threadIdx.x;
    float v[COPY_ILP];
#pragma unroll
    for (int u = 0; u < COPY_ILP; ++u) {
        long long i = base + (long long)u * blockDim.x;   // consecutive lanes, consecutive i: one warp, one request
        v[u] = (i < n) ? in[i * stride] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < COPY_ILP; ++u) {
        long long i = base + (long long)u * blockDim.x;
        if (i < n) out[i] = v[u];
    }
}
