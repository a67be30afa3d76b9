// half_bits.cuh - 16-bit storage and the one fast exponential, for kernels that keep fp16/bf16 as raw bits.
//
// Kernels that load 8 fp16/bf16 values with one 16-byte load (uint4) hold them as unsigned shorts; these helpers widen
// them to fp32 for the arithmetic and narrow the results back, with the same rounding the hardware converts use
// (round to nearest even, NaN stays NaN). A type tag (F32 / F16 / BF16) picks the format at compile time, so one
// kernel template serves all three storage types.
#pragma once

struct F32  { typedef float raw; enum { V = 4 }; };            // V: values per 16-byte load
struct F16  { typedef unsigned short raw; enum { V = 8 }; };
struct BF16 { typedef unsigned short raw; enum { V = 8 }; };

#define COURSE_LOG2E 1.4426950408889634f

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

// 2^x in one MUFU.EX2 instruction (ex2.approx.ftz: ~2 ulp; results below 2^-126 flush to +0, and ex2(-inf) = +0).
// The library exp2f wraps the same instruction in a range fix-up for denormal results (4 more FMULs and a compare per
// element in SASS); softmax and attention probabilities below 1e-38 are 0 to any tolerance, and on a memory-bound
// 16-bit row the per-element instructions show in the time.
__device__ __forceinline__ float fast_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// exp(x - m) as one FFMA-able multiply and one MUFU.EX2
__device__ __forceinline__ float exp_shifted(float x, float m) { return fast_exp2((x - m) * COURSE_LOG2E); }

__device__ __forceinline__ float h2f(unsigned short h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ unsigned short f2h(float f)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ float bf2f(unsigned short b) { return __uint_as_float(((unsigned int)b) << 16); }
__device__ __forceinline__ unsigned short f2bf(float f)   // round to nearest even, NaN stays NaN
{
#if __CUDA_ARCH__ >= 800
    unsigned short h;                                     // sm_80+: one F2FP instruction
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
#else
    unsigned int u = __float_as_uint(f);                  // older GPUs have no bf16 convert: the same rounding by hand
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (unsigned short)(u >> 16);
#endif
}

// Two fp32 values -> one 32-bit word of two 16-bit values, lo in the low half (the lower column: what a 32-bit store
// of a pair and mma's operand fragments both want). sm_80+ does it in one instruction (F2FP.PACK_AB in SASS; PTX's
// cvt puts its FIRST source in the UPPER half); older GPUs convert one value at a time.
__device__ __forceinline__ unsigned int pack2(F16, float lo, float hi)
{
#if __CUDA_ARCH__ >= 800
    unsigned int w;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    return w;
#else
    return (unsigned int)f2h(lo) | ((unsigned int)f2h(hi) << 16);
#endif
}
__device__ __forceinline__ unsigned int pack2(BF16, float lo, float hi)
{
#if __CUDA_ARCH__ >= 800
    unsigned int w;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(w) : "f"(hi), "f"(lo));
    return w;
#else
    return (unsigned int)f2bf(lo) | ((unsigned int)f2bf(hi) << 16);
#endif
}

__device__ __forceinline__ float widen(F32, float r) { return r; }
__device__ __forceinline__ float widen(F16, unsigned short r) { return h2f(r); }
__device__ __forceinline__ float widen(BF16, unsigned short r) { return bf2f(r); }
__device__ __forceinline__ float narrow(F32, float f) { return f; }
__device__ __forceinline__ unsigned short narrow(F16, float f) { return f2h(f); }
__device__ __forceinline__ unsigned short narrow(BF16, float f) { return f2bf(f); }
