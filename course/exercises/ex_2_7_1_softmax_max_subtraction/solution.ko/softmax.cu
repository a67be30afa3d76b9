// 연습 문제 2.7.1: rows x cols fp32 행렬(row-major)의 행마다 y = softmax(x): y[r, c] = exp(x[r, c]) / 그 행의
// exp(x[r, k]) 합. 랩 2.7의 rung 03처럼 행마다 warp 하나입니다. lane l은 열 l, l + 32, ...를 훑고, warp는 shuffle로
// reduction합니다(common/cuda/reduce.cuh). shared memory도 barrier도 없습니다. 행을 세 번 훑습니다: 최댓값, 지수의 합,
// 정규화한 출력.
// Launch: (32, 4) thread block(threadIdx.y가 행을 고르고 threadIdx.x가 lane), block은 ceil(rows / 4)개.
// -inf 원소는 0이 됩니다. 모두 -inf인 행은 torch.softmax와 NumPy처럼 NaN(0 / 0)이 됩니다.
#include "reduce.cuh"

// 행의 최댓값. warp의 모든 lane에 들어감.
__device__ __forceinline__ float row_max(const float* xr, int cols)
{
    float m = neg_inf();
    for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, xr[c]);
    return warp_allreduce<MaxOp>(m);
}

// 분모: 행의 지수 합. warp의 모든 lane에 들어감.
__device__ __forceinline__ float row_sum_exp(const float* xr, int cols, float m)
{
    float d = 0.0f;
    for (int c = threadIdx.x; c < cols; c += 32) d += expf(xr[c] - m);
    return warp_sum(d);
}

extern "C" __global__ void softmax_warp_rows(const float* __restrict__ x, float* __restrict__ y, long long rows,
                                             int cols)
{
    const long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (row >= rows) return;                  // warp 전체가 함께 나감: 모든 shuffle이 lane 32개를 다 봄
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const float m = row_max(xr, cols);
    const float inv = 1.0f / row_sum_exp(xr, cols, m);
    for (int c = threadIdx.x; c < cols; c += 32) yr[c] = expf(xr[c] - m) * inv;
}
