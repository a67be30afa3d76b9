// Every shared device header of common/cuda/, used once, so the CPU tier can compile them for each architecture and
// look at the instructions they become (tests/test_cuda_headers.py). Not a lab kernel: nothing launches these.
// archs: sm_80 sm_90
#include "reduce.cuh"
#include "cp_async.cuh"
#include "mma_sm80.cuh"
#include "epilogue.cuh"

extern "C" __global__ void probe_reduce(const float* x, float* out, int n)
{
    __shared__ float red[32], red_m[32], red_d[32];
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float v = i < n ? x[i] : 0.0f;
    float s = block_allreduce<SumOp>(v, red);
    float m = i < n ? v : neg_inf(), d = i < n ? 1.0f : 0.0f;
    block_online_allreduce(m, d, red_m, red_d);
    if (threadIdx.x == 0) { out[3 * blockIdx.x] = s; out[3 * blockIdx.x + 1] = m; out[3 * blockIdx.x + 2] = d; }
}

extern "C" __global__ void probe_bits(const unsigned short* x, unsigned int* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = pack2(BF16(), fast_exp2(widen(BF16(), x[i])), widen(F16(), x[i]));
}

extern "C" __global__ void probe_mma(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int M, int N)
{
    __shared__ __align__(128) __nv_bfloat16 as[16 * 16], bs[16 * 16];
    const int t = threadIdx.x;
    cp_async_16(&as[swizzle<2>(t >> 1, t & 1) * 8], a + t * 8, 16);
    cp_async_16_full(smem_u32(&bs[t * 8]), b + t * 8);
    cp_async_commit();
    cp_async_wait<0>();
    __syncthreads();
    unsigned fa[4], fb[4];
    ldmatrix_x4(fa[0], fa[1], fa[2], fa[3], smem_u32(&as[(t & 15) * 16 + (t >> 4) * 8]));
    ldmatrix_x4_trans(fb[0], fb[1], fb[2], fb[3], smem_u32(&bs[(t & 15) * 16 + (t >> 4) * 8]));
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    mma_16816(acc, fa, fb[0], fb[1], __nv_bfloat16());
    store_pair(c, N, t >> 2, (t & 3) * 2, M, N, acc[0], acc[1], (N % 2) == 0);
}

extern "C" __global__ void probe_store4(float* c, int M, int N, int ldc)
{
    const int t = threadIdx.x;
    store4(c, M, N, ldc, t >> 2, (t & 3) * 4, make_float4(1.0f, 2.0f, 3.0f, 4.0f), 1.0f, 0.5f, (ldc % 4) == 0);
}
