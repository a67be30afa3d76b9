// Exercise 2.5.1: normalize every column of a rows x cols fp32 matrix (row-major, rows <= 32):
//     y[:, c] = x[:, c] / ||x[:, c]||
// One thread owns one column. It keeps the column's values in a register array, because the norm is known only
// after the last one is read: 32 values live at once, plus addresses and the sum.
// x and y are deliberately not __restrict__: y may be x itself (in place), so the compiler must keep every value
// it has read (it cannot read x again after writing y).
// Launch: blocks of 256 threads, ceil(cols / 256) blocks.
// __launch_bounds__(256, 8) promises that 8 blocks of 256 threads fit on an SM - 100% occupancy - so ptxas may give
// a thread at most 65536 / (256 x 8) = 32 registers. The compile report says what that costs: read it first.
#define MAX_ROWS 32

extern "C" __global__ void __launch_bounds__(256, 8)
    colnorm(const float* x, float* y, int rows, long long cols)
{
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float v[MAX_ROWS];
#pragma unroll
    for (int k = 0; k < MAX_ROWS; ++k) v[k] = (k < rows) ? x[(long long)k * cols + c] : 0.0f;   // 32 loads in flight
    float sum_sq = 0.0f;
#pragma unroll
    for (int k = 0; k < MAX_ROWS; ++k) sum_sq = fmaf(v[k], v[k], sum_sq);
    const float inv = rsqrtf(sum_sq);
#pragma unroll
    for (int k = 0; k < MAX_ROWS; ++k) {
        if (k < rows) y[(long long)k * cols + c] = v[k] * inv;
    }
}
