// Exercise 2.5.1, a solution: keep the promise of __launch_bounds__(256, 8) (32 registers, 8 blocks of 256 threads
// per SM) and spill nothing, by holding fewer values: the first pass reads the column for its sum of squares only,
// the second pass reads it again and writes y. Nothing but the running sum lives across the loop.
// The cost moves from local memory to a second read of x: the same bytes again, this time mostly from L2 (the columns
// the resident blocks walk are a few tens of MiB on an H200, inside its 60 MiB L2), where the spill paid a store and a
// load of local memory per value. Which costs less is for the GPU to say; the compile report says only that the
// kernel now fits its budget. In place (y == x) is still right: each value is read before it is overwritten.
// Launch: blocks of 256 threads, ceil(cols / 256) blocks. Any rows (no array to overflow).
extern "C" __global__ void __launch_bounds__(256, 8)
    colnorm(const float* x, float* y, int rows, long long cols)
{
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float sum_sq = 0.0f;
    for (int k = 0; k < rows; ++k) {                       // pass 1: the norm, one running sum
        const float v = x[(long long)k * cols + c];
        sum_sq = fmaf(v, v, sum_sq);
    }
    const float inv = rsqrtf(sum_sq);
    for (int k = 0; k < rows; ++k) {                       // pass 2: read again, scale, write
        const long long i = (long long)k * cols + c;
        y[i] = x[i] * inv;
    }
}
