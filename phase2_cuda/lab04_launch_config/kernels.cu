// Lab 2.4 - one memory-bound kernel, y = alpha * x (fp32), written so that ANY grid and ANY block size compute the
// right answer: a grid-stride loop. That freedom is what the lab sweeps: block size 32..1024, grid from a fraction of
// one wave to one float4 per thread.
//
//   scale_grid_stride_float4   one 16-byte load in flight per thread per iteration (#pragma unroll 1), any grid
//   scale_grid_stride_scalar   the fallback for views that are not 16-byte aligned
// Run: python -m phase2_cuda.lab04_launch_config (the measured figures are in this lab's README, not here).
//
// Per element: 4 bytes read + 4 bytes written, 1 FLOP: 1/8 FLOP per byte, memory-bound on every GPU.
//
// Vocabulary. A WAVE is the number of blocks the GPU holds at once: SMs x resident blocks per SM, where the resident
// count is the smallest of four limits (threads per SM / block size, blocks per SM, registers, shared memory). On an
// SM that holds 2048 threads and 32 blocks, a 256-thread block gives 8 per SM (a wave of 8 x the SM count); a
// 32-thread block hits the 32-blocks limit first, so a wave of 32-thread blocks fills only half of each SM's threads.
// How fast a memory-bound kernel can go is Little's law: bandwidth = bytes in flight / latency. Each thread here has
// one 16-byte load in flight per loop iteration, so loads in flight = resident threads x 16 B (the stores are posted:
// the thread does not wait for them). Half of what HBM moves here is reads; that read rate x ~0.7 us (an assumed
// latency under load) / 16 B is the number of resident threads that saturates HBM, a fraction of what the GPU can
// hold. `--plan` prints this GPU's wave table and that number; the lesson works them out for one GPU.

// ---------------------------------------------------------------------------------------------------------------------
// scale_grid_stride_float4
// Launch: any grid, any block (a multiple of 32 is sensible). Thread t of the grid handles float4 t, t + T, t + 2T, ...
// (T = all threads of the grid): at every step the whole grid reads one contiguous stretch of T float4, so every warp
// load is 512 contiguous bytes (LDG.E.128, coalesced). The last n % 4 elements are done with scalar accesses by the
// first threads of the grid. Requires x and y 16-byte aligned (the wrapper checks and falls back to the scalar kernel).
// The loop is kept at one iteration at a time (#pragma unroll 1). Left alone, ptxas unrolls it by 4 (the __restrict__
// lets it issue four loads before the first store), so a thread with many iterations has 64 B in flight and a thread
// with one has 16 B: two knobs at once. With one load in flight per thread, the resident threads alone set the bytes
// in flight, which is the variable this lab sweeps. (Lab 1.2's vadd_04 and lab 2.5 are about loads in flight per
// thread.)
// Prediction: GB/s grows in proportion to the resident threads until enough are resident to saturate HBM (the
// number above), flat after that: small fractions of a wave fall short, larger grids saturate, and 32-thread blocks
// (half occupancy or less) still do if 0.7 us is right and half the GPU's threads are enough. The lab measures it and
// reports the latency that the latency-bound cells imply. The one-float4-per-thread grid (a hundred waves or more at
// 2^27 elements) should match one wave.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void scale_grid_stride_float4(const float* __restrict__ x, float* __restrict__ y, float alpha,
                                                    long long n)
{
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    const long long n4 = n >> 2;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll 1
    for (long long i = t; i < n4; i += stride) {    // not unrolled, on purpose: see below
        float4 v = x4[i];
        y4[i] = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    }
    if (t < (n & 3)) {                      // the tail: at most 3 elements
        long long i = (n4 << 2) + t;
        y[i] = alpha * x[i];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// scale_grid_stride_scalar
// The fallback for views that are not 16-byte aligned: the same loop, one float per step (LDG.E, 128 B per warp load).
// 4x the instructions and a quarter of the bytes in flight per thread; correct for any address. The benchmark's
// arrays are aligned, so it times the float4 kernel; this one is checked for correctness only.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void scale_grid_stride_scalar(const float* __restrict__ x, float* __restrict__ y, float alpha,
                                                    long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = alpha * x[i];
}
