// Exercise 2.1.1: out = in^T for an M x N fp32 matrix (row-major; out is N x M), through a tile in shared memory, so
// that both the reads of `in` and the writes of `out` walk rows (coalesced).
// Launch: blocks of (32, 8) threads, grid (ceil(N / 32), ceil(M / 32)). Block (bx, by) moves the 32 x 32 tile whose
// top-left element is in[32 by][32 bx]: thread (tx, ty) reads rows ty, ty + 8, ty + 16, ty + 24 of it at column tx
// (a warp reads 32 consecutive floats of one row) and stores them in the tile; then it writes rows ty, ty + 8, ... of
// the transposed tile, taking column ty + j of the tile's row tx, so a warp writes 32 consecutive floats of `out`.
// The tile is 32 x 33: the extra column puts the 32 elements of a tile column in 32 different banks (lab 2.2).
#define TILE 32
#define ROWS 8

extern "C" __global__ void transpose_tiled(const float* __restrict__ in, float* __restrict__ out, long long M,
                                           long long N)
{
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long r0 = (long long)blockIdx.y * TILE, c0 = (long long)blockIdx.x * TILE;
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        const long long r = r0 + ty + j, c = c0 + tx;
        if (r < M && c < N) tile[ty + j][tx] = in[r * N + c];
    }
    __syncthreads();
#pragma unroll
    for (int j = 0; j < TILE; j += ROWS) {
        const long long orow = c0 + ty + j, ocol = r0 + tx;     // out is N x M: its row is a column index of in
        if (orow < N && ocol < M) out[orow * M + ocol] = tile[tx][ty + j];
    }
}
