// mma_sm80.cuh - the Ampere tensor-core path (sm_80+, and what sm_89 and below have): ldmatrix, mma.sync m16n8k16,
// and the XOR swizzle that keeps ldmatrix free of bank conflicts.
//
// mma.sync.m16n8k16 multiplies a 16 x 16 A fragment by a 16 x 8 B fragment into a 16 x 8 fp32 accumulator, one warp
// at a time (HMMA in SASS). Its fragment layout is documented (PTX ISA, "Matrix fragments for mma.m16n8k16"): each
// thread holds 4 registers of A (8 16-bit values), 2 of B, 4 fp32 of C. ldmatrix.x4 hands every thread its part of
// four 8 x 8 16-bit matrices in one instruction (LDSM): a whole A fragment, or two B fragments; .trans transposes on
// the way, for a B stored k-major (row-major K x N) where the mma wants it n-major.
// On Hopper this is not the fast path (wgmma reads operands from shared memory for a whole warpgroup); it is the
// tensor-core path of sm_80-sm_89, and a readable one.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include "cp_async.cuh"      // smem_u32
#include "half_bits.cuh"     // pack2

__device__ __forceinline__ void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3, unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                                  unsigned addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
}

// D (16 x 8, fp32) += A (16 x 16) B (16 x 8); the element type is picked by the last argument's type (a tag value)
__device__ __forceinline__ void mma_16816(float* d, const unsigned* a, unsigned b0, unsigned b1, __nv_bfloat16)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void mma_16816(float* d, const unsigned* a, unsigned b0, unsigned b1, __half)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// The A fragment of the next mma from two accumulators side by side (n-tiles 2k and 2k+1 of a 16-row strip): an
// m16n8k16 accumulator is laid out as the A operand of the next one, once each pair is rounded to 16 bits (P into
// P V, dS into dS K). T (F16 / BF16 of half_bits.cuh) picks pack2's rounding.
template <typename T>
__device__ __forceinline__ void a_from_acc(unsigned* a, const float* lo, const float* hi)
{
    a[0] = pack2(T(), lo[0], lo[1]);
    a[1] = pack2(T(), lo[2], lo[3]);
    a[2] = pack2(T(), hi[0], hi[1]);
    a[3] = pack2(T(), hi[2], hi[3]);
}

// The XOR swizzle: 16-byte chunk c of row r of a tile with CPR chunks per row lives at chunk index swizzle<CPR>(r, c).
// ldmatrix reads eight 16-byte rows at once; with 64- or 128-byte rows they would all start in the same 4 banks
// (an 8-way conflict). XOR-ing the chunk with the row's low bits spreads the 8 rows over all 32 banks, keeps every
// chunk 16-byte aligned, and costs no padding. 128-byte rows (CPR >= 8) XOR with r & 7; 64-byte rows (CPR = 4)
// pair rows up and XOR with (r >> 1) & 3.
template <int CPR>
__device__ __forceinline__ int swizzle(int r, int c)
{
    if (CPR >= 8) return r * CPR + (c ^ (r & 7));
    return r * CPR + (c ^ ((r >> 1) & 3));
}
