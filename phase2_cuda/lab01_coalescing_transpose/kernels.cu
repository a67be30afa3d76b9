// Lab 2.1 - matrix transpose, out = in^T, fp32, and two copy probes: what coalescing is, and what it is worth.
//
//   copy_tiled                the probe: the transposes' launch shape, but out = in (the ceiling for that shape)
//   transpose_01_naive        coalesced reads, column writes: 32 sectors per warp store
//   transpose_02_smem_tiled   a 32 x 32 tile through shared memory: coalesced both ways, 32-way bank conflicts
//   transpose_03_padded       tile[32][33]: conflict-free
//   transpose_04_padded_ilp   64 x 64 padded tiles, 16 loads in flight per thread before the first store
//   copy_strided              the probe: out[i] = in[i * stride], coalescing in one number (sectors per request)
// Run: python -m phase2_cuda.lab01_coalescing_transpose (the measured figures are in this lab's README, not here).
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
// The lab's target: the best padded transpose at >= 0.85x the copy bandwidth, measured in the same run.

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
// Prediction: within a few percent of the flat copy, so the transposes below can be judged against either copy.
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
// A 16384^2 matrix is 262144 tiles, spread over the SMs; whether 1056 cycles per tile outlast the DRAM time of the
// same 8 KiB depends on the GPU's bandwidth per SM per clock. On a GPU with a lot of it (the lesson works one out)
// shared memory, not DRAM, becomes the bound, at about twice the time of a copy; `--plan` prints this GPU's ratio.
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
// (16 B) in flight and the block stalls at the barrier between its load and store halves. At 6 blocks (1536
// threads) per SM x 16 B, and fewer while blocks wait at the barrier or store, that may be too few bytes in flight.
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
// Prediction: Little's law, loads only: half of what HBM streams in a copy is reads; that rate x ~0.7 us of latency,
// shared by the SMs, is the bytes of loads each SM must keep in flight (`--plan` prints this GPU's figure; the lesson
// works one out). 03 (~40 registers, up to 6 blocks = 1536 threads per SM) offers 16 B per thread, enough on paper,
// but only while every block is in its load phase: blocks also wait at the barrier and store, and the latency grows
// as the memory system fills. 04 offers 64 B per thread, a wide margin.
// Expected: 04 at >= 85% of the copy's bandwidth (the lab's target), 03 somewhat below it; by how much is what the
// run measures.
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
