// Kernels with known resource behaviour, for the tests of common/cuda.py.

// 32 independent accumulators live across the loop: plenty of registers; with -maxrregcount=16 some must spill.
extern "C" __global__ void many_live_values(const float* x, float* y, int n)
{
    float acc[32];
#pragma unroll
    for (int j = 0; j < 32; ++j) acc[j] = x[(threadIdx.x + j) % n];
    for (int i = 0; i < n; ++i) {
#pragma unroll
        for (int j = 0; j < 32; ++j) acc[j] = acc[j] * x[i] + acc[(j + 1) & 31];
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < 32; ++j) s += acc[j];
    y[threadIdx.x] = s;
}

// static shared memory, a barrier and a warp shuffle
extern "C" __global__ void __launch_bounds__(256) shared_and_shuffle(const float* x, float* y)
{
    __shared__ float tile[256];
    tile[threadIdx.x] = x[blockIdx.x * 256 + threadIdx.x];
    __syncthreads();
    float v = tile[255 - threadIdx.x];
    v += __shfl_xor_sync(0xffffffffu, v, 16);
    y[blockIdx.x * 256 + threadIdx.x] = v;
}
