// Lab 1.6 - naive matrix multiply, C = A @ B, fp32, row-major: A is M x K, B is K x N, C is M x N. The baseline
// phase 2 builds on. The kernels:
//
//   mm_01_naive_uncoalesced   a thread per output, threadIdx.x -> row: a warp's A loads touch 32 sectors
//   mm_02_naive_coalesced     a thread per output, threadIdx.x -> column: a broadcast of A, 4 sectors of B
// Run: python -m phase1_architecture.lab06_matmul_naive (the measured figures are in this lab's README, not here).
//
// One thread per output element: C[row, col] = sum_k A[row, k] * B[k, col], a K-long dot product in one register.
// FLOPs: 2 M N K. Bytes that must move at least: 4 (M K + K N + M N) (each matrix once); at 4096^3 that is 192 MiB
// for 137 GFLOP, 683 FLOP/B, far above the ridge point of any current GPU: a good matmul is compute-bound.
// These kernels are not: every thread reads 2 K floats from global memory (through L1/L2) for 2 K FLOPs, and the
// only thing that differs between the two versions is which thread computes which element.
//
// Coalescing is about ONE warp-wide load instruction: the 32 lanes' addresses are served in 32-byte sectors, and the
// fewer distinct sectors they touch, the fewer the memory system moves. Per k step, one warp issues two loads:
//
//                      A[row, k]                          B[k, col]
//   mm_01 uncoalesced  32 rows, 1 column:  32 sectors     1 column, same for all lanes: 1 sector (broadcast)
//   mm_02 coalesced    1 row, same for all lanes: 1       32 consecutive columns (128 B): 4 sectors
//
// 33 sectors against 5 per step: the prediction is that mm_01 is ~33 / 5 = 6.6x slower than mm_02, if the sectors
// moved between L1 and the SM are what limits both. (If the limit were the L1's tag lookups, one per distinct 128-byte
// line: 33 against 2, ~16x.) The lab computes these counts from the actual addresses and compares with the
// measurement (the lab's target: within 0.5x-2x of the sector ratio).
//
// Both kernels: blocks of (32, 8) threads; a grid-stride loop over the second grid dimension keeps any size legal
// (gridDim.y <= 65535); indices into A, B and C are 64-bit (M K can pass 2^31). Any M, N, K >= 0 (K = 0 gives zeros).

// ---------------------------------------------------------------------------------------------------------------------
// mm_01_naive_uncoalesced
// threadIdx.x -> row: the 32 lanes of a warp are 32 consecutive ROWS of C, all in one column.
// Launch: block (32, 8), grid (ceil(M / 32), min(ceil(N / 8), 65535)).
// Prediction: ~6.6x slower than mm_02 (the sector ratio, if the sectors moved through L1 are the limit).
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void mm_01_naive_uncoalesced(const float* __restrict__ A, const float* __restrict__ B,
                                                   float* __restrict__ C, int M, int N, int K)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    for (int col = blockIdx.y * blockDim.y + threadIdx.y; col < N; col += gridDim.y * blockDim.y) {
        const float* a = A + (long long)row * K;     // this lane's row: lanes are K floats apart
        const float* b = B + col;                    // the warp's one column
        float acc = 0.f;
        for (int k = 0; k < K; ++k) {
            acc += a[k] * b[(long long)k * N];
        }
        C[(long long)row * N + col] = acc;           // the store is uncoalesced too (once per thread: minor)
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// mm_02_naive_coalesced
// threadIdx.x -> column: the 32 lanes of a warp are 32 consecutive COLUMNS of C, all in one row. Same instructions,
// same FLOPs, same bytes requested per thread; only the sectors per warp request change (see the table above).
// Launch: block (32, 8), grid (ceil(N / 32), min(ceil(M / 8), 65535)).
// Prediction: still a small fraction of cuBLAS (each thread re-reads 2 K floats through L1/L2: bound by the load
// path, far below the compute ceiling) - the gap phase 2 closes with tiles in shared memory and registers.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void mm_02_naive_coalesced(const float* __restrict__ A, const float* __restrict__ B,
                                                 float* __restrict__ C, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int row = blockIdx.y * blockDim.y + threadIdx.y; row < M; row += gridDim.y * blockDim.y) {
        const float* a = A + (long long)row * K;     // the warp's one row: a broadcast
        const float* b = B + col;                    // consecutive lanes, consecutive floats
        float acc = 0.f;
        for (int k = 0; k < K; ++k) {
            acc += a[k] * b[(long long)k * N];
        }
        C[(long long)row * N + col] = acc;
    }
}
