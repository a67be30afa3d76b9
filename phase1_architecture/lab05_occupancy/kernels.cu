// Lab 1.5 - occupancy: the same memory-bound kernel at occupancies from one warp per SM to full, and a kernel whose
// register count is chosen at compile time, for checking the occupancy calculator against the driver. The kernels:
//
//   occ_01_scale_scalar       y = alpha x, one 4-byte load in flight per thread (128 B per warp)
//   occ_02_scale_float4_ilp   the same, UNROLL independent 16-byte loads in flight per thread (16x the bytes per warp)
//   occ_probe_registers       NLIVE values live across a loop, STATIC_SMEM bytes of shared memory: a register and
//                             shared-memory footprint to ask the driver about (never timed)
// Run: python -m phase1_architecture.lab05_occupancy (the measured figures are in this lab's README, not here).
//
// y[i] = alpha * x[i], fp32: 8 bytes moved per element (4 read, 4 written), 1 FLOP. Memory-bound on every GPU.
// Bandwidth then follows Little's law: bytes in flight = bandwidth x latency. One SM keeps
//   (resident warps) x (bytes each warp has requested and not yet received)
// in flight; the memory system delivers them after ~0.6-0.8 us (a loaded HBM round trip; an idle memory system
// answers in about half that). The kernels below keep a known number of bytes in flight per warp, and the lab sets
// the resident warps per SM with dynamic shared memory (a block that claims most of an SM's shared memory leaves room
// for no other block, whatever it computes).

// ---------------------------------------------------------------------------------------------------------------------
// occ_01_scale_scalar
// Grid-stride loop with one 4-byte load per thread per iteration, and `#pragma unroll 1` so the compiler cannot batch
// several iterations' loads: exactly 128 B in flight per warp. Prediction: bandwidth ~ warps/SM x SMs x 128 B /
// latency, i.e. it grows linearly with occupancy, and on a GPU with much bandwidth per SM it cannot saturate HBM even
// at full occupancy (`--plan` prints the warps per SM this GPU's bandwidth would need; the lesson has a worked case).
// Launch: any block size, any grid (the loop covers n); the lab uses 32 or 64 threads and SMs x blocks-per-SM blocks.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void occ_01_scale_scalar(const float* __restrict__ x, float* __restrict__ y, long long n,
                                               float alpha)
{
    long long stride = (long long)gridDim.x * blockDim.x;
#pragma unroll 1
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = alpha * x[i];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// occ_02_scale_float4_ilp
// Same operation, UNROLL independent 16-byte loads in flight per thread (UNROLL x 512 B per warp: 16x the bytes of
// occ_01 at UNROLL = 4). Changed since occ_01: instruction-level parallelism instead of thread-level parallelism.
// Prediction: the same warps/SM carry 16x the bytes, so the curve reaches the HBM ceiling at ~1/16 of the occupancy
// occ_01 would need: ~4-8 warps per SM instead of "more than the SM can hold". (Two things push the knee later: the
// 4 loads are outstanding for only part of each iteration, and the latency under load is about twice the idle one.)
// Preconditions (the wrapper checks them and falls back to occ_01): x and y 16-byte aligned. The n % 4 tail is done
// with scalar accesses by the first threads of the grid.
// ---------------------------------------------------------------------------------------------------------------------
#ifndef UNROLL
#define UNROLL 4
#endif

extern "C" __global__ void occ_02_scale_float4_ilp(const float4* __restrict__ x4, float4* __restrict__ y4, long long n,
                                                   float alpha)
{
    long long n4 = n >> 2;
    long long total = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    // full rounds: UNROLL unconditional loads issued back to back, then the multiplies and stores
    for (; i + (UNROLL - 1) * total < n4; i += UNROLL * total) {
        float4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = x4[i + u * total];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            y4[i + u * total] = make_float4(alpha * v[u].x, alpha * v[u].y, alpha * v[u].z, alpha * v[u].w);
        }
    }
    for (; i < n4; i += total) {                                   // the last partial round
        float4 v = x4[i];
        y4[i] = make_float4(alpha * v.x, alpha * v.y, alpha * v.z, alpha * v.w);
    }
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < (n & 3)) {                                             // scalar tail: at most 3 elements
        const float* x = reinterpret_cast<const float*>(x4);
        float* y = reinterpret_cast<float*>(y4);
        y[(n4 << 2) + t] = alpha * x[(n4 << 2) + t];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// occ_probe_registers
// Not a benchmark: a kernel with NLIVE values live across a loop (so it needs about NLIVE + 10 registers) and
// STATIC_SMEM bytes of static shared memory. `--record-fixture` compiles it with -maxrregcount caps and asks the
// driver how many blocks fit, to test the occupancy calculator against real answers. At the default NLIVE = 64 it
// needs no spill; with a cap below its need it spills (never launched that way, only queried).
// ---------------------------------------------------------------------------------------------------------------------
#ifndef NLIVE
#define NLIVE 64
#endif
#ifndef STATIC_SMEM
#define STATIC_SMEM 0
#endif

extern "C" __global__ void occ_probe_registers(const float* __restrict__ x, float* __restrict__ y, int iters)
{
    float v[NLIVE];
#pragma unroll
    for (int j = 0; j < NLIVE; ++j) v[j] = x[threadIdx.x + 32 * j];
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < NLIVE; ++j) v[j] = fmaf(v[j], v[(j + 1) % NLIVE], 1.0f);
    }
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < NLIVE; ++j) s += v[j];
#if STATIC_SMEM >= 4
    __shared__ float pad[STATIC_SMEM / 4];
    pad[threadIdx.x % (STATIC_SMEM / 4)] = s;
    __syncthreads();
    s += pad[(threadIdx.x + 1) % (STATIC_SMEM / 4)];
#endif
    y[(long long)blockIdx.x * blockDim.x + threadIdx.x] = s;
}
