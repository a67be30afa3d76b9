// Naive matrix multiply, C = A @ B, fp32, row-major: A is M x K, B is K x N, C is M x N. The baseline phase 2 builds on.
//
// One thread per output element: C[row, col] = sum_k A[row, k] * B[k, col], a K-long dot product in one register.
// FLOPs: 2 M N K. Bytes that must move at least: 4 (M K + K N + M N) (each matrix once); at 4096^3 that is 192 MiB
// for 137 GFLOP, 683 FLOP/B, far above the ~14 FLOP/B ridge of an H200: a good matmul is compute-bound.
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
// measurement. Measured on an H200 at 4096^3: 8.97x (274.3 ms against 30.58 ms), 1.36x the sector prediction and
// inside the lab's 0.5-2x band, between the sector (6.6x) and line (~16x) models; at 2999 x 3001 x 2027 only 4.88x,
// both kernels being faster there (likely the 16 KiB power-of-two pitch of 4096 and its 64 MiB matrices, larger
// than the 60 MiB L2) (results/h200/phase1_lab06_matmul_naive.json).
//
// Both kernels: blocks of (32, 8) threads; a grid-stride loop over the second grid dimension keeps any size legal
// (gridDim.y <= 65535); indices into A, B and C are 64-bit (M K can pass 2^31). Any M, N, K >= 0 (K = 0 gives zeros).

// ---------------------------------------------------------------------------------------------------------------------
// mm_01_naive_uncoalesced
// threadIdx.x -> row: the 32 lanes of a warp are 32 consecutive ROWS of C, all in one column.
// Launch: block (32, 8), grid (ceil(M / 32), min(ceil(N / 8), 65535)).
// Measured on an H200: 274.3 ms, 501 GFLOP/s at 4096^3 (0.0098 of cuBLAS's 51,384, 0.0075 of the FP32 peak);
// 25.96 ms, 1,406 GFLOP/s at 2999 x 3001 x 2027 (0.032 of cuBLAS) (results/h200/phase1_lab06_matmul_naive.json).
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
// Measured on an H200: 30.58 ms, 4,494 GFLOP/s at 4096^3 (0.087 of cuBLAS's 51,384, 0.067 of the FP32 peak);
// 5.32 ms, 6,859 GFLOP/s at 2999 x 3001 x 2027 (0.157 of cuBLAS) (results/h200/phase1_lab06_matmul_naive.json).
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
