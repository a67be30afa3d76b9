// 연습 문제 2.5.1: rows x cols fp32 행렬(row-major, rows <= 32)의 모든 열을 정규화합니다:
//     y[:, c] = x[:, c] / ||x[:, c]||
// thread 하나가 열 하나를 맡습니다. norm은 마지막 값을 읽어야 알 수 있으므로 열의 값을 register 배열에 담아 둡니다.
// 그래서 값 32개와 주소와 합이 한꺼번에 살아 있습니다.
// x와 y는 일부러 __restrict__가 아닙니다. y가 x 자신일 수 있으므로(in place) 컴파일러는 읽은 값을 모두 간직해야
// 합니다(y를 쓴 뒤에는 x를 다시 읽을 수 없습니다).
// Launch: 256-thread block, ceil(cols / 256)개.
// __launch_bounds__(256, 8)은 256-thread block 8개가 SM 하나에 들어간다고(100% occupancy) 약속합니다. 그래서 ptxas는
// thread에 register를 많아야 65536 / (256 x 8) = 32개 줄 수 있습니다. 그 비용은 compile report에 나옵니다. 먼저 읽습니다.
#define MAX_ROWS 32

extern "C" __global__ void __launch_bounds__(256, 8)
    colnorm(const float* x, float* y, int rows, long long cols)
{
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float v[MAX_ROWS];
#pragma unroll
    for (int k = 0; k < MAX_ROWS; ++k) v[k] = (k < rows) ? x[(long long)k * cols + c] : 0.0f;   // in-flight load 32개
    float sum_sq = 0.0f;
#pragma unroll
    for (int k = 0; k < MAX_ROWS; ++k) sum_sq = fmaf(v[k], v[k], sum_sq);
    const float inv = rsqrtf(sum_sq);
#pragma unroll
    for (int k = 0; k < MAX_ROWS; ++k) {
        if (k < rows) y[(long long)k * cols + c] = v[k] * inv;
    }
}
