// cp_async.cuh - asynchronous global -> shared copies (sm_80+): cp.async and its commit / wait groups.
//
// cp.async moves 4, 8 or 16 bytes from global to shared memory without passing through registers (LDGSTS in SASS),
// so a thread can start the copies of the next tiles and go on computing on the current one. Copies are grouped:
// commit closes the group of copies issued since the last commit; wait<N> blocks until at most N groups are still in
// flight. A barrier after the wait makes every thread's copies visible to the whole block.
// src_bytes below the copy size zero-fills the rest of the destination (src_bytes = 0 reads nothing): tiles are padded
// with zeros past the edges of a matrix without a branch around the copy. The source address must still be a valid
// address; callers clamp it to the matrix base for chunks wholly outside.
// The copies and commit carry no "memory" clobber (the compiler may schedule address arithmetic around them, which
// the fast GEMM paths rely on); the wait does, and the barrier that follows every wait orders the shared-memory reads.
// Host builds (no __CUDA_ARCH__: tests that emulate a kernel's pipeline on the CPU) define their own versions.
#pragma once

__device__ __forceinline__ unsigned smem_u32(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

#ifdef __CUDA_ARCH__
// 16 bytes, cached in L2 only (.cg): a tile is read once by this block; other blocks find it in L2, not in this L1
__device__ __forceinline__ void cp_async_16(unsigned smem, const void* gmem, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes)
{
    cp_async_16(smem_u32(smem), gmem, src_bytes);
}
// 16 bytes with no src-size operand: the interior fast path, where no chunk can cross an edge
__device__ __forceinline__ void cp_async_16_full(unsigned smem, const void* gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem), "l"(gmem));
}
// 4 bytes (.ca: 4- and 8-byte copies may only go through L1): for operands whose alignment forbids 16
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, int src_bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_u32(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N_PENDING>
__device__ __forceinline__ void cp_async_wait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N_PENDING) : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() { cp_async_wait<0>(); }
#endif
