// Exercise 2.4.2, a solution: y = alpha * x + beta, with the body of the array moved as float4 (one LDG.E.128 and one
// STG.E.128 per iteration) and the last n % 4 elements as single floats.
// A grid-stride loop over float4 index q: thread t handles q = t, t + T, ... < n / 4, so every warp load is 512
// contiguous bytes. `#pragma unroll 1` still keeps one iteration (now 16 bytes) in flight per thread: 4x the bytes
// in flight for the same resident threads (Little's law, lab 2.4), and a quarter of the load/store instructions.
// Legal because x and y start on 16-byte boundaries: a float4 access at an address that is not a multiple of 16 is
// a fault, not a slow path (lab 2.4's wrapper falls back to a scalar kernel for such views).
extern "C" __global__ void affine(const float* __restrict__ x, float* __restrict__ y, float alpha, float beta,
                                  long long n)
{
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long step = (long long)gridDim.x * blockDim.x;
    const long long quads = n / 4;                         // whole float4 in the array
    const float4* __restrict__ x4 = reinterpret_cast<const float4*>(x);
    float4* __restrict__ y4 = reinterpret_cast<float4*>(y);
#pragma unroll 1
    for (long long q = first; q < quads; q += step) {
        const float4 v = x4[q];                            // LDG.E.128
        y4[q] = make_float4(alpha * v.x + beta, alpha * v.y + beta, alpha * v.z + beta, alpha * v.w + beta);
    }
#pragma unroll 1
    for (long long i = 4 * quads + first; i < n; i += step) {     // the tail: at most 3 elements, single floats
        y[i] = alpha * x[i] + beta;
    }
}
