// Exercise 2.4.2: y = alpha * x + beta over n fp32 values (4 bytes read, 4 written, 2 FLOPs per element: memory-bound).
// A grid-stride loop, as in lab 2.4: thread t of the grid handles elements t, t + T, t + 2T, ... (T = all threads of
// the grid), so the answer is right for ANY grid, any block size and any n.
// `#pragma unroll 1` keeps one iteration at a time, so each thread has exactly one load in flight - here 4 bytes.
// The task: make the loop's loads and stores 16 bytes wide (float4: LDG.E.128 / STG.E.128 in the SASS), still one
// iteration at a time, still right for every n. x and y start on 16-byte boundaries (cudaMalloc gives 256); n does
// not have to be a multiple of 4.
extern "C" __global__ void affine(const float* __restrict__ x, float* __restrict__ y, float alpha, float beta,
                                  long long n)
{
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long step = (long long)gridDim.x * blockDim.x;
#pragma unroll 1
    for (long long i = first; i < n; i += step) {
        y[i] = alpha * x[i] + beta;
    }
}
