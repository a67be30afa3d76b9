// Lab 1.2 - vector add, c[i] = a[i] + b[i], fp32: the first kernel, and a bandwidth probe. The versions:
//
//   vadd_01_one_thread_per_element   a thread per element, 4-byte loads, a bounds check for the last block
//   vadd_02_grid_stride              a grid sized to the GPU (one wave), each thread striding over the array
//   vadd_03_float4                   a float4 per thread: 16-byte loads (LDG.E.128), a scalar tail
//   vadd_04_float4_ilp               UNROLL float4 per thread, all loads issued first; evict-first stores (STREAM)
// Run: python -m phase1_architecture.lab02_vector_add (the measured figures are in this lab's README, not here).
//
// Per element: 2 loads (8 B) + 1 store (4 B) = 12 B moved for 1 FLOP. Arithmetic intensity 1/12 FLOP/B, far below any
// GPU's ridge point (a current GPU needs over 10 FLOP/B to be fp32-bound; `--plan` prints this GPU's), so the only
// question is how close each version gets to the memory system's bandwidth. Every version takes a 64-bit element
// count and uses 64-bit indices: 2^31 fp32 elements (8 GiB) is a real size on today's GPUs, and a 32-bit index would
// silently wrap.
//
// The output is not declared __restrict__: c may be a or b (an in-place add), which is legal for an elementwise op
// that reads an element before writing it, but would break a no-alias promise.

// ---------------------------------------------------------------------------------------------------------------------
// vadd_01_one_thread_per_element
// Launch: blocks of 256 threads, ceil(n / 256) blocks. One element per thread, a bounds check for the last block.
// Loads are 4 bytes wide (LDG.E); a warp touches 32 consecutive floats = 128 B = four 32-byte sectors: coalesced.
// Cost: each thread has 8 bytes of loads in flight; 2048 resident threads per SM => 16 KiB per SM in flight.
// Little's law: a GPU needs its memory bandwidth x the latency under load (~0.6 us) in flight; on a fast HBM GPU that
// is ~20 KiB per SM, so this version may not quite saturate it (`--plan` prints the figure for this GPU). Launch
// overhead dominates below ~1M elements.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void vadd_01_one_thread_per_element(const float* a, const float* b, float* c, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // widen before multiplying: 64-bit index
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// vadd_02_grid_stride
// Launch: a fixed grid that exactly fills the GPU once (SMs x resident blocks per SM); each thread walks the array with
// a stride of the whole grid. Same bytes, same instruction mix per element as 01; what changes is that the grid no
// longer grows with n: block scheduling overhead is paid once, and the kernel works for any n with any grid.
// Prediction: about as fast as 01 (the memory system, not scheduling, is the limit): the pattern matters because
// later kernels (reductions) need a grid sized to the GPU, not to the data.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void vadd_02_grid_stride(const float* a, const float* b, float* c, long long n)
{
    long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// vadd_03_float4
// Launch: blocks of 256 threads, ceil(n / 4 / 256) blocks. Each thread adds one float4: the loads become 16 bytes wide
// (LDG.E.128 in SASS), a warp moves 512 B per instruction, and the instruction count per byte falls by 4x.
// Bytes in flight per SM quadruple (64 KiB), enough to cover HBM latency.
// Requirement: a, b and c 16-byte aligned (the wrapper checks the three addresses and falls back to 02 otherwise:
// a float4 load from a misaligned address is an error, not a slow path). Tail: the last n % 4 elements are done
// with scalar loads by the first threads of the grid.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void vadd_03_float4(const float* a, const float* b, float* c, long long n)
{
    long long n4 = n >> 2;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 x = reinterpret_cast<const float4*>(a)[i];
        float4 y = reinterpret_cast<const float4*>(b)[i];
        reinterpret_cast<float4*>(c)[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    long long t = (n4 << 2) + i;  // the scalar tail: at most 3 elements
    if (i < (n & 3)) {
        c[t] = a[t] + b[t];
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// vadd_04_float4_ilp
// Launch: blocks of any size, ceil(n / 4 / (blockDim.x * UNROLL)) blocks. Each thread handles UNROLL float4, and
// issues all 2 x UNROLL loads before the first add: UNROLL x 32 B of loads in flight per thread (instruction-level
// parallelism instead of more threads), which is what hides DRAM latency when fewer warps are resident.
// The float4 index inside a block's group is strided by blockDim.x, so each load instruction is still contiguous
// across the warp (coalescing is about what the 32 lanes of ONE instruction touch, not what one thread touches over
// time). STREAM=1 stores with st.global.cs (evict-first): the output is never re-read, so it should not displace
// anything in L2. UNROLL and STREAM are compile-time (-D) parameters; the wrapper uses the values the lab's --tune
// sweep picked (lab.py's V04).
// Prediction: more bytes in flight per thread should help. The --tune sweep says it does not at full occupancy
// (every UNROLL and block size within ~1.5% of torch.add: 2048 resident threads x 32 B already cover HBM latency);
// the evict-first store is worth a fraction of a percent. ILP pays when occupancy is low (phase 2's
// launch-configuration and register-pressure labs show that case).
// ---------------------------------------------------------------------------------------------------------------------
#ifndef UNROLL
#define UNROLL 1
#endif
#ifndef STREAM
#define STREAM 1
#endif
extern "C" __global__ void vadd_04_float4_ilp(const float* a, const float* b, float* c, long long n)
{
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    long long n4 = n >> 2;
    long long base = (long long)blockIdx.x * blockDim.x * UNROLL + threadIdx.x;
    float4 x[UNROLL], y[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {                          // issue every load first ...
        long long k = base + (long long)u * blockDim.x;
        if (k < n4) { x[u] = a4[k]; y[u] = b4[k]; }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {                          // ... then use them
        long long k = base + (long long)u * blockDim.x;
        if (k < n4) {
            float4 r = make_float4(x[u].x + y[u].x, x[u].y + y[u].y, x[u].z + y[u].z, x[u].w + y[u].w);
#if STREAM
            __stcs(&c4[k], r);
#else
            c4[k] = r;
#endif
        }
    }
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long t = (n4 << 2) + i;                                // scalar tail: at most 3 elements
    if (i < (n & 3)) {
        c[t] = a[t] + b[t];
    }
}
