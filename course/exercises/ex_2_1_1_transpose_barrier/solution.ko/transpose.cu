// 연습 문제 2.1.1: M x N fp32 행렬(row-major, out은 N x M)에 out = in^T를 shared memory의 tile을 거쳐 계산합니다.
// 그래서 `in`의 읽기와 `out`의 쓰기가 모두 행을 따라갑니다(coalescing).
// Launch: (32, 8) thread block, grid (ceil(N / 32), ceil(M / 32)). block (bx, by)는 왼쪽 위 원소가 in[32 by][32 bx]인
// 32 x 32 tile을 옮깁니다. thread (tx, ty)는 그 tile의 행 ty, ty + 8, ty + 16, ty + 24를 열 tx에서 읽어(warp 하나가 한
// 행의 연속된 float 32개를 읽음) tile에 저장합니다. 그다음 전치한 tile의 행 ty, ty + 8, ...을 쓰는데, tile의 행 tx에서
// 열 ty + j를 가져오므로 warp 하나가 `out`의 연속된 float 32개를 씁니다.
// tile은 32 x 33입니다. 여분의 열 하나가 tile 열의 원소 32개를 서로 다른 bank 32개에 놓습니다(랩 2.2).
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
        const long long orow = c0 + ty + j, ocol = r0 + tx;     // out은 N x M: out의 행은 in의 열 index
        if (orow < N && ocol < M) out[orow * M + ocol] = tile[tx][ty + j];
    }
}
