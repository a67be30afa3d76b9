// Exercise 2.6.1: the sum of n fp32 values, lab 2.6's rung-07 design - a grid sized to the GPU, each thread folding
// a share of the array into one register with 16-byte loads - in two launches of the same kernel: the first writes
// one partial per block, the second (one block) sums the partials into the result.
// Launch: blocks of 256 threads (a multiple of 32: block_allreduce's shuffles name all 32 lanes of every warp);
// grid: at most the blocks the GPU holds at once, fewer when n is small.
// The array as 16-byte loads: a float4 must start on a 16-byte boundary, so the first `head` floats (0 to 3: a view
// may start anywhere on a 4-byte boundary) come before the first float4, then `quads` whole float4, then what is
// left after the last whole float4.
#include "reduce.cuh"

extern "C" __global__ void sum_float4(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    __shared__ float red[32];
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long threads = (long long)gridDim.x * blockDim.x;
    const unsigned misalign = (unsigned)((size_t)x & 15u);           // bytes past the last 16-byte boundary
    const long long head = min(n, (long long)(((16u - misalign) & 15u) / 4u));
    const long long quads = (n - head) / 4;
    const float4* __restrict__ body = reinterpret_cast<const float4*>(x + head);
    float acc = 0.0f;
    for (long long q = t; q < quads; q += threads) {
        const float4 v = __ldg(body + q);                             // LDG.E.128
        acc += (v.x + v.y) + (v.z + v.w);
    }
    if (t < head) acc += x[t];
    const long long done = head + 4 * quads;
    if (t < n - done) acc += x[done + t];
    acc = block_allreduce<SumOp>(acc, red);
    if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
