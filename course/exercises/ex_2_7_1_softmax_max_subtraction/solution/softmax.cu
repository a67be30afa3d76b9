// Exercise 2.7.1: y = softmax(x) over each row of a rows x cols fp32 matrix (row-major): y[r, c] = exp(x[r, c]) /
// sum over the row of exp(x[r, k]). One warp per row, as lab 2.7's rung 03: lane l walks columns l, l + 32, ..., and
// the warp reduces with shuffles (common/cuda/reduce.cuh), no shared memory, no barrier. Three sweeps over the row:
// its max, the sum of exponentials, the normalized outputs.
// Launch: blocks of (32, 4) threads - threadIdx.y picks the row, threadIdx.x is the lane - and ceil(rows / 4) blocks.
// A -inf entry gives 0; a row that is all -inf gives NaN (0 / 0), as torch.softmax and NumPy do.
#include "reduce.cuh"

// The largest value of the row, in every lane of the warp.
__device__ __forceinline__ float row_max(const float* xr, int cols)
{
    float m = neg_inf();
    for (int c = threadIdx.x; c < cols; c += 32) m = fmaxf(m, xr[c]);
    return warp_allreduce<MaxOp>(m);
}

// The denominator: the row's sum of exponentials, in every lane of the warp.
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
    if (row >= rows) return;                  // the whole warp leaves together: every shuffle sees its 32 lanes
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const float m = row_max(xr, cols);
    const float inv = 1.0f / row_sum_exp(xr, cols, m);
    for (int c = threadIdx.x; c < cols; c += 32) yr[c] = expf(xr[c] - m) * inv;
}
