// archs: sm_75 sm_80 sm_90
// Lab 4.2 - kernel fusion, the CUDA C side (parts 1 and 2 of the lab; part 3, the GEMM epilogue, is Triton only):
//
//   fusion_01_<op>_<dtype>[_scalar]   one kernel per op (add_bias, gelu_tanh, gelu_erf, add): an unfused chain
//                                     launches two of them, its intermediate t going through memory
//   fusion_02_<chain>_<dtype>[_scalar] the whole chain in one kernel (bias_gelu_tanh, bias_gelu_erf, bias_residual):
//                                     t never leaves registers
//   fusion_03_residual_layernorm_<dtype>[_scalar]  h = x + r (stored) and y = layernorm(h), a block per row
// <dtype> = f32 / f16 / bf16; _scalar = the fallback for unaligned pointers and ragged rows.
// Run: python -m phase4_optimization.lab02_fusion (the measured figures are in this lab's README, not here).
//
// The ops of parts 1 (bias is a row vector of N values, broadcast down the rows; c is a second (M, N) matrix):
//     add_bias          t = x + bias                         fusion_01 (unfused step)
//     gelu_tanh         y = 0.5 t (1 + tanh(sqrt(2/pi) (t + 0.044715 t^3)))      fusion_01
//     gelu_erf          y = 0.5 t (1 + erf(t / sqrt(2)))     fusion_01 (the exact GELU)
//     add               y = t + c                            fusion_01
//     bias_gelu_tanh    y = gelu_tanh(x + bias)              fusion_02 (= add_bias then gelu_tanh, in one pass)
//     bias_gelu_erf     y = gelu_erf(x + bias)               fusion_02
//     bias_residual     y = x + bias + c                     fusion_02 (= add_bias then add)
//
// Conventions shared by every kernel here:
//  * arithmetic is fp32 whatever the storage: fp16 and bf16 are widened on load and rounded (to nearest even) on
//    store, handled as raw 16-bit patterns (common/cuda/half_bits.cuh: no cuda_fp16.h / cuda_bf16.h needed, and no
//    16-bit arithmetic: that is why the file compiles for sm_75 as well; only the paired conversion instruction is
//    sm_80+, with a fallback);
//  * an unfused chain rounds its intermediate t to the storage dtype (it goes through memory); a fused kernel keeps
//    t in fp32 registers, so in 16 bits the two differ by one rounding of t (both are inside the bf16 tolerance);
//  * gelu_tanh uses the identity 0.5 (1 + tanh(u)) = 1 / (1 + exp(-2u)): one expf and one division instead of a
//    tanh; for t -> -inf exp overflows to inf and y -> -0, for t -> +inf y -> t, as the formula's limits say;
//  * the matrix is treated as a flat array of n = M N elements; the bias column of element e is e % N (64-bit
//    indices: n may pass 2^31).
//
// Two paths per kernel, chosen by the wrapper:
//  * vector (name without suffix): every access is 16 bytes (uint4: LDG.E.128 / STG.E.128 in SASS), 4 fp32 or
//    8 fp16/bf16 values. Legal when every pointer is 16-byte aligned and N is a multiple of the vector width V, so
//    a vector never straddles two rows and its bias values are one aligned 16-byte run; then n % V == 0 too and
//    there is no tail;
//  * scalar (suffix _scalar): one element per access, for any N and any (element-aligned) pointer.
// Each thread handles UNROLL vectors (or elements) a block-width apart: all UNROLL loads are issued before the
// first value is used, so each thread has UNROLL x (inputs) 16-byte requests in flight, the latency hiding a
// memory-bound kernel lives on (Little's law: bandwidth x latency / SMs in flight per SM; `--plan` prints what this
// GPU's resident threads keep in flight, and the README the figure Little's law asks of the GPU it was measured on).
//
// Launch shape (fusion_01/02): 1-D grid of ceil(n / (V x THREADS x UNROLL)) blocks of THREADS threads.
//
// Bytes and FLOPs (elt = bytes per element; the bias, N x elt, is read from L2 after its first use and ignored):
//   unfused bias + GELU = add_bias (read x, write t) + gelu (read t, write y)       = 4 M N elt
//   fused   bias + GELU = fusion_02_bias_gelu_*     (read x, write y)              = 2 M N elt     -> 2.0x predicted
//   unfused bias + residual = add_bias (2 M N) + add (read t, c, write y: 3 M N)   = 5 M N elt
//   fused   bias + residual = fusion_02_bias_residual (read x, c, write y)         = 3 M N elt     -> 1.67x predicted
// FLOPs: ~1 (add) to ~20 (GELU: polynomial, exp, division; erf is a longer polynomial) per element, at most
// ~10 FLOP/B in bf16: below the fp32 ridge of any current GPU (`--plan` prints this GPU's), so every kernel here is
// memory-bound, and the time should follow the bytes: the predicted speed-ups above are the byte ratios.

#include "half_bits.cuh"

#ifndef THREADS
#define THREADS 256
#endif
#ifndef UNROLL
#define UNROLL 2
#endif

enum Op { OP_ADD_BIAS, OP_GELU_TANH, OP_GELU_ERF, OP_ADD, OP_BIAS_GELU_TANH, OP_BIAS_GELU_ERF, OP_BIAS_RESIDUAL };

// which operands an op reads: x always; the bias row; the second matrix c
__host__ __device__ constexpr bool reads_bias(int op)
{
    return op == OP_ADD_BIAS || op == OP_BIAS_GELU_TANH || op == OP_BIAS_GELU_ERF || op == OP_BIAS_RESIDUAL;
}
__host__ __device__ constexpr bool reads_c(int op) { return op == OP_ADD || op == OP_BIAS_RESIDUAL; }

// Storage types (F32 / F16 / BF16, V = values per 16-byte vector), widen / narrow and pack2 come from half_bits.cuh.

// --- loading and storing V values at vector index i (V = T::V: one 16-byte access; V = 1: one element) -----------
__device__ __forceinline__ void unpack(F32, uint4 u, float* v)
{
    v[0] = __uint_as_float(u.x); v[1] = __uint_as_float(u.y); v[2] = __uint_as_float(u.z); v[3] = __uint_as_float(u.w);
}
template <class T>
__device__ __forceinline__ void unpack(T t, uint4 u, float* v)
{
    const unsigned int w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        v[2 * k] = widen(t, (unsigned short)(w[k] & 0xffffu));
        v[2 * k + 1] = widen(t, (unsigned short)(w[k] >> 16));
    }
}
__device__ __forceinline__ uint4 pack(F32, const float* v)
{
    return make_uint4(__float_as_uint(v[0]), __float_as_uint(v[1]), __float_as_uint(v[2]), __float_as_uint(v[3]));
}
template <class T>
__device__ __forceinline__ uint4 pack(T t, const float* v)
{
    return make_uint4(pack2(t, v[0], v[1]), pack2(t, v[2], v[3]), pack2(t, v[4], v[5]), pack2(t, v[6], v[7]));
}

// read-only loads through the non-coherent path (__ldg). Each element of x and c is read once, so caching buys
// nothing there, but it does not hurt either; the bias row is re-read by every row and stays in L1/L2.
template <class T, int V>
__device__ __forceinline__ void load(const typename T::raw* p, long long i, float* v)
{
    if constexpr (V == 1) {
        v[0] = widen(T(), __ldg(p + i));
    } else {
        unpack(T(), __ldg(reinterpret_cast<const uint4*>(p) + i), v);
    }
}
template <class T, int V>
__device__ __forceinline__ void store(typename T::raw* p, long long i, const float* v)
{
    if constexpr (V == 1) {
        p[i] = narrow(T(), v[0]);
    } else {
        reinterpret_cast<uint4*>(p)[i] = pack(T(), v);
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// The math, in fp32
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ float gelu_tanh(float t)
{
    const float u = 0.7978845608028654f * (t + 0.044715f * t * t * t);     // sqrt(2/pi) (t + 0.044715 t^3)
    return t / (1.0f + expf(-2.0f * u));                                   // = 0.5 t (1 + tanh(u))
}
__device__ __forceinline__ float gelu_erf(float t) { return 0.5f * t * (1.0f + erff(t * 0.7071067811865476f)); }

template <int OP>
__device__ __forceinline__ float apply(float x, float b, float c)
{
    switch (OP) {
        case OP_ADD_BIAS: return x + b;
        case OP_GELU_TANH: return gelu_tanh(x);
        case OP_GELU_ERF: return gelu_erf(x);
        case OP_ADD: return x + c;
        case OP_BIAS_GELU_TANH: return gelu_tanh(x + b);
        case OP_BIAS_GELU_ERF: return gelu_erf(x + b);
        default: return (x + b) + c;                                        // OP_BIAS_RESIDUAL
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// The one body behind every kernel: n elements (n / V vectors), bias of n_cols values, c of n elements.
// ---------------------------------------------------------------------------------------------------------------------
template <class T, int OP, int V>
__device__ __forceinline__ void elementwise(const typename T::raw* x, const typename T::raw* bias,
                                           const typename T::raw* c, typename T::raw* y, long long n, int n_cols)
{
    const long long nv = n / V;                                // the wrapper guarantees n % V == 0 when V > 1
    const long long base = (long long)blockIdx.x * (THREADS * UNROLL) + threadIdx.x;
    float xv[UNROLL][V], bv[UNROLL][V], cv[UNROLL][V];
    // every load of this thread first ...
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + (long long)u * THREADS;
        if (i < nv) {
            load<T, V>(x, i, xv[u]);
            // the bias vector of this element vector: (i V mod N) / V = i mod (N / V); unsigned: cheaper division
            if (reads_bias(OP)) load<T, V>(bias, (long long)((unsigned long long)i % (unsigned)(n_cols / V)), bv[u]);
            if (reads_c(OP)) load<T, V>(c, i, cv[u]);
        }
    }
    // ... then the math and the stores
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
        const long long i = base + (long long)u * THREADS;
        if (i < nv) {
            float out[V];
#pragma unroll
            for (int k = 0; k < V; ++k)
                out[k] = apply<OP>(xv[u][k], reads_bias(OP) ? bv[u][k] : 0.0f, reads_c(OP) ? cv[u][k] : 0.0f);
            store<T, V>(y, i, out);
        }
    }
}

// Every kernel takes the same arguments (unused pointers may be null): x, bias (N), c (M x N), y, n = M N, N.
// One kernel per (op, storage type, access width): `_scalar` takes the V = 1 path (any alignment, any N).
#define U16 unsigned short
#define EW_PARAMS(R) const R* x, const R* bias, const R* c, R* y, long long n, int n_cols
#define EW_ARGS x, bias, c, y, n, n_cols
#define EW_KERNELS(NAME, OP)                                                                                           \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                              \
    NAME##_f32(EW_PARAMS(float)) { elementwise<F32, OP, 4>(EW_ARGS); }                                                 \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                              \
    NAME##_f16(EW_PARAMS(U16)) { elementwise<F16, OP, 8>(EW_ARGS); }                                                   \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                              \
    NAME##_bf16(EW_PARAMS(U16)) { elementwise<BF16, OP, 8>(EW_ARGS); }                                                 \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                              \
    NAME##_f32_scalar(EW_PARAMS(float)) { elementwise<F32, OP, 1>(EW_ARGS); }                                          \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                              \
    NAME##_f16_scalar(EW_PARAMS(U16)) { elementwise<F16, OP, 1>(EW_ARGS); }                                            \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                              \
    NAME##_bf16_scalar(EW_PARAMS(U16)) { elementwise<BF16, OP, 1>(EW_ARGS); }

// =====================================================================================================================
// fusion_01: one kernel per op (the unfused chain launches two of them)
//   What: add_bias / gelu_tanh / gelu_erf / add, each a full pass over memory.
//   Bytes: add_bias, gelu = 2 M N elt each (read one matrix, write one); add = 3 M N elt.
//   Prediction: each runs near the HBM ceiling, so a chain of two costs the sum of its passes: 4 M N elt for
//   bias + GELU, 5 M N elt for bias + residual.
// =====================================================================================================================
EW_KERNELS(fusion_01_add_bias, OP_ADD_BIAS)
EW_KERNELS(fusion_01_gelu_tanh, OP_GELU_TANH)
EW_KERNELS(fusion_01_gelu_erf, OP_GELU_ERF)
EW_KERNELS(fusion_01_add, OP_ADD)

// =====================================================================================================================
// fusion_02: the whole chain in one kernel
//   What: bias_gelu_tanh / bias_gelu_erf / bias_residual; the intermediate t = x + bias never leaves registers.
//   Changed since fusion_01: one launch instead of two, and the write + re-read of t are gone.
//   Bytes: bias + GELU 2 M N elt (half of fusion_01's chain); bias + residual 3 M N elt (3/5 of it).
//   Prediction: the same bandwidth as fusion_01's kernels, so 2.0x (bias + GELU) and 1.67x (bias + residual) faster
//   than the unfused chain; the GELU math (~20 FLOP per element, one expf or erff) stays hidden under the memory
//   time in bf16 as in fp32. What the measurements showed (the README's lesson): the byte count held for bias +
//   residual and missed for the GELU chains, where this kernel adds the bias index math (a 64-bit modulo per vector)
//   to the GELU math of fusion_01's kernel on the same bytes - the likely cause is instruction throughput (not
//   profiled).
// =====================================================================================================================
EW_KERNELS(fusion_02_bias_gelu_tanh, OP_BIAS_GELU_TANH)
EW_KERNELS(fusion_02_bias_gelu_erf, OP_BIAS_GELU_ERF)
EW_KERNELS(fusion_02_bias_residual, OP_BIAS_RESIDUAL)

// =====================================================================================================================
// fusion_03: residual + layernorm in one kernel (a normalization epilogue), a block of LN_THREADS per row
//   What: h = x + r, rounded to the storage dtype and stored (the next residual stream); y = (h - mean) * rstd * w + b
//   with mean and the centred variance of the ROUNDED h over the row (what an unfused add + layernorm computes).
//   Launch: grid = rows, block = LN_THREADS; vector (16-byte) or _scalar accesses as above.
//   How: three sweeps over the row. Sweep 1 reads x and r once from memory, writes h, sums it; sweeps 2 and 3 read
//   h back - the block's own writes of a moment ago, a row of N x elt bytes (8 KiB for bf16 N = 4096), so from L2,
//   not DRAM. Those re-reads use plain loads, NOT __ldg: the read-only (non-coherent) path is only legal for data
//   that no thread writes while the kernel runs. Each thread re-reads exactly the elements it wrote itself, so no
//   barrier is needed between its store and its load (same thread, same address: program order).
//   Bytes (DRAM): read x, r + write h, y = 4 M N elt, as the Triton kernel; plus 2 M N elt of L2 reads.
//   Changed since an unfused add + layernorm: h is not read back from DRAM (5 M N -> 4 M N elt, 1.25x predicted).
//   Prediction: below the Triton kernel, which keeps the row in registers between its reductions (no L2
//   round trips, one fewer sweep); the lesson is the byte count, the gap is the price of the simplest code. The
//   measured runs missed this the other way (the README's lesson): the L2 re-reads of h did not show as lost time.
// =====================================================================================================================
#ifndef LN_THREADS
#define LN_THREADS 256
#endif

// plain (coherent) loads, for data this kernel wrote itself
template <class T, int V>
__device__ __forceinline__ void load_own(const typename T::raw* p, long long i, float* v)
{
    if constexpr (V == 1) {
        v[0] = widen(T(), p[i]);
    } else {
        unpack(T(), reinterpret_cast<const uint4*>(p)[i], v);
    }
}

// the sum over the block, returned to every thread: shuffles within each warp, one value per warp through shared
// memory, then every warp adds those up (no second broadcast needed). Kept here rather than reduce.cuh's block_sum:
// that one needs a shared array per call, and with two of them the f32 kernel spills (4 bytes) on sm_90.
__device__ __forceinline__ float row_block_sum(float v, float* red)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __syncthreads();                          // red[] may still be read by the previous call's warps
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float t = lane < LN_THREADS / 32 ? red[lane] : 0.0f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) t += __shfl_xor_sync(0xffffffffu, t, o);
    return t;
}

template <class T, int V>
__device__ __forceinline__ void residual_layernorm_row(const typename T::raw* x, const typename T::raw* r,
                                                       const typename T::raw* w, const typename T::raw* b,
                                                       typename T::raw* y, typename T::raw* h, int n, float eps)
{
    __shared__ float red[32];
    const long long base = (long long)blockIdx.x * n / V;   // the row's first vector (n % V == 0 when V > 1)
    const int nv = n / V;
    float s = 0.0f;
    for (int j = threadIdx.x; j < nv; j += LN_THREADS) {
        float xv[V], rv[V], hv[V];
        load<T, V>(x, base + j, xv);
        load<T, V>(r, base + j, rv);
#pragma unroll
        for (int k = 0; k < V; ++k) {
            hv[k] = widen(T(), narrow(T(), xv[k] + rv[k]));   // the stored value is the one normalized
            s += hv[k];
        }
        store<T, V>(h, base + j, hv);
    }
    const float mean = row_block_sum(s, red) / n;
    float q = 0.0f;
    for (int j = threadIdx.x; j < nv; j += LN_THREADS) {
        float hv[V];
        load_own<T, V>(h, base + j, hv);
#pragma unroll
        for (int k = 0; k < V; ++k) q += (hv[k] - mean) * (hv[k] - mean);
    }
    const float rstd = 1.0f / sqrtf(row_block_sum(q, red) / n + eps);
    for (int j = threadIdx.x; j < nv; j += LN_THREADS) {
        float hv[V], wv[V], bv[V], out[V];
        load_own<T, V>(h, base + j, hv);
        load<T, V>(w, j, wv);
        load<T, V>(b, j, bv);
#pragma unroll
        for (int k = 0; k < V; ++k) out[k] = (hv[k] - mean) * rstd * wv[k] + bv[k];
        store<T, V>(y, base + j, out);
    }
}

#define LN_PARAMS(R) const R* x, const R* r, const R* w, const R* b, R* y, R* h, int n, float eps
#define LN_ARGS x, r, w, b, y, h, n, eps
#define LN_KERNELS(NAME)                                                                                              \
    extern "C" __global__ void __launch_bounds__(LN_THREADS)                                                           \
    NAME##_f32(LN_PARAMS(float)) { residual_layernorm_row<F32, 4>(LN_ARGS); }                                          \
    extern "C" __global__ void __launch_bounds__(LN_THREADS)                                                           \
    NAME##_f16(LN_PARAMS(U16)) { residual_layernorm_row<F16, 8>(LN_ARGS); }                                            \
    extern "C" __global__ void __launch_bounds__(LN_THREADS)                                                           \
    NAME##_bf16(LN_PARAMS(U16)) { residual_layernorm_row<BF16, 8>(LN_ARGS); }                                          \
    extern "C" __global__ void __launch_bounds__(LN_THREADS)                                                           \
    NAME##_f32_scalar(LN_PARAMS(float)) { residual_layernorm_row<F32, 1>(LN_ARGS); }                                   \
    extern "C" __global__ void __launch_bounds__(LN_THREADS)                                                           \
    NAME##_f16_scalar(LN_PARAMS(U16)) { residual_layernorm_row<F16, 1>(LN_ARGS); }                                     \
    extern "C" __global__ void __launch_bounds__(LN_THREADS)                                                           \
    NAME##_bf16_scalar(LN_PARAMS(U16)) { residual_layernorm_row<BF16, 1>(LN_ARGS); }
LN_KERNELS(fusion_03_residual_layernorm)
