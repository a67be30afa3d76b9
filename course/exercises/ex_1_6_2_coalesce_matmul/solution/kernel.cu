// Exercise 1.6.2: a naive matrix multiply, C = A @ B, fp32, row-major (A is M x K, B is K x N, C is M x N).
// One thread computes one C[row, col] as a K-long dot product, read straight from global memory, like lab 1.6's
// mm_02. Launch (the checker's): blocks of (16, 16) threads, grid (ceil(N / 16), ceil(M / 16)): block (bx, by) owns
// the 16 x 16 tile of C at rows 16 by .. 16 by + 15, columns 16 bx .. 16 bx + 15.
// A warp is 32 consecutive threads of the block, threadIdx.x fastest: threadIdx.x = 0 .. 15 at two values of
// threadIdx.y. The kernel is right for every M, N, K and several times slower than it should be.
extern "C" __global__ void mm_tile16(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                                     int M, int N, int K)
{
    int row = blockIdx.y * 16 + threadIdx.y;     // a warp: 2 rows ...
    int col = blockIdx.x * 16 + threadIdx.x;     // ... of 16 consecutive columns: threadIdx.x walks the row of C
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int k = 0; k < K; ++k) {
        acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    }
    C[(long long)row * N + col] = acc;
}
