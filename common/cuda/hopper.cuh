// hopper.cuh - the sm_90a primitives a warp-specialized kernel is built from: mbarriers (a plain wait, and for debug
// builds a bounded one that records who hung instead of hanging), TMA tensor copies that complete on an mbarrier, the
// wgmma shared-memory matrix descriptor and the wgmma fence / commit / wait, and setmaxnreg. PTX ISA 8.x; compile with
// -arch=sm_90a.
//
// Users: lab 4.6's kernels_hopper.cu (attention forward), kernels_hopper_bwd.cu (the backward's wgmma rungs) and lab
// 4.3's kernels_wgmma.cu (GEMM), which keeps only its own bounded wait (a 4-word hang record), its 2-D TMA load and
// store, multicast and cluster helpers. The host twin of this header, tensor maps, descriptors and launches, is
// common/hopper.py.
#pragma once

#include "cp_async.cuh"       // smem_u32

typedef unsigned int hop_u32;
typedef unsigned long long hop_u64;

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value as a __grid_constant__ parameter; device
// code only ever takes its address.
struct __align__(64) TmaMap {
    hop_u64 opaque[16];
};

// ---------------------------------------------------------------------------------------------------------------------
// mbarrier: a 64-bit shared-memory object with an arrival count and a transaction (byte) count. A phase completes
// when every expected arrival came AND every expected byte landed; waiters name the phase by its parity (0, 1, 0, ..).
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(hop_u32 bar, hop_u32 count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// make initialised barriers visible to the async proxy (the TMA engine completes transactions on them)
__device__ __forceinline__ void mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// one arrival that also announces `bytes` more to come from the TMA engine
__device__ __forceinline__ void mbar_arrive_expect_tx(hop_u32 bar, hop_u32 bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(hop_u32 bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ hop_u32 mbar_try_wait(hop_u32 bar, hop_u32 parity)
{
    hop_u32 ok;
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(ok)
        : "r"(bar), "r"(parity)
        : "memory");
    return ok;
}

// Wait for the phase of `bar` with parity `parity` to complete. try_wait itself suspends the thread for a while (a
// hardware time limit) before it answers "not yet", so the loop is no busy spin. The first try is apart from the loop:
// in the steady state the phase has completed by the time a thread asks, and the loop stays out of the hot path.
__device__ __forceinline__ void mbar_wait_parity(hop_u32 bar, hop_u32 parity)
{
    if (mbar_try_wait(bar, parity)) return;
    while (!mbar_try_wait(bar, parity)) {
    }
}

// The debug twin of mbar_wait_parity: it stops waiting, and returns false, after spin_cycles clock cycles - or at once
// once another thread of the grid has timed out (record[0] != 0), so that one lost phase ends the whole grid's waits
// quickly instead of each wait spinning its own time out. The first thread to time out writes {1, block x, block y,
// thread, (bar << 2) | (what << 1) | parity} into `record` (a __device__ array of 5 words the host reads after the
// launch). The caller carries on as if the phase had completed (its results are garbage): the kernel runs out instead
// of trapping, so the context survives and the record can be read. No printf here: a function call in a wgmma kernel
// makes ptxas serialize the wgmmas (warning C7510).
__device__ __forceinline__ bool mbar_wait_bounded(hop_u32 bar, hop_u32 parity, hop_u32 what, hop_u32* record,
                                                  long long spin_cycles)
{
    if (mbar_try_wait(bar, parity)) return true;
    const long long t0 = clock64();
    while (!mbar_try_wait(bar, parity)) {
        if (*(volatile hop_u32*)record != 0u) return false;
        if (clock64() - t0 > spin_cycles) {
            if (atomicCAS(&record[0], 0u, 1u) == 0u) {
                record[1] = blockIdx.x;
                record[2] = blockIdx.y;
                record[3] = threadIdx.x;
                record[4] = (bar << 2) | (what << 1) | (parity & 1u);
            }
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------------------------------------
// TMA: a box of a 3-D tensor (coordinates innermost first, in elements) copied global -> shared; the parts of the box
// outside the tensor are zero-filled and still count toward the transaction bytes.
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ void tma_load_3d(hop_u32 dst, const TmaMap* map, int c0, int c1, int c2, hop_u32 bar)
{
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
        ::"r"(dst), "l"((hop_u64)map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// The same for a 4-D tensor (lab 4.6: (D, heads, S, batch), whose strides need not grow from dim to dim)
__device__ __forceinline__ void tma_load_4d(hop_u32 dst, const TmaMap* map, int c0, int c1, int c2, int c3,
                                            hop_u32 bar)
{
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
        "[%6];"
        ::"r"(dst), "l"((hop_u64)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
        : "memory");
}

// A plain bulk copy (no tensor map): `bytes` contiguous bytes global -> shared, completing on an mbarrier like a TMA
// box; both addresses 16-byte aligned, bytes a multiple of 16 (lab 4.6's backward: a query tile's LSE and Delta).
__device__ __forceinline__ void bulk_load(hop_u32 dst, const void* src, hop_u32 bytes, hop_u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// The reverse direction with a reduction: `bytes` contiguous fp32 values of shared memory added into global memory
// (element-wise, atomically with respect to other reductions) by the copy engine - one instruction for what would be
// bytes / 4 red.global.add.f32. Completion through bulk groups (below). Addresses 16-byte aligned, bytes a multiple of
// 16.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, hop_u32 src, hop_u32 bytes)
{
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;"
                 ::"l"(dst), "r"(src), "r"(bytes)
                 : "memory");
}
// bulk groups of this thread's bulk copies and reductions (a TMA store too): commit the ones issued since the last
// commit; wait until at most N groups still READ their shared source (it may be rewritten), or are incomplete at all
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait()
{
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// a barrier among `count` threads only (whole warps; e.g. one or two consumer warpgroups), id 1..15 (0 is
// __syncthreads')
__device__ __forceinline__ void named_bar_sync(hop_u32 id, hop_u32 count)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// ---------------------------------------------------------------------------------------------------------------------
// wgmma
// ---------------------------------------------------------------------------------------------------------------------
// Shared-memory matrix descriptor (PTX "matrix descriptor format"): bits 0-13 start address >> 4, 16-29 leading byte
// offset >> 4, 32-45 stride byte offset >> 4, 49-51 base offset (0: every tile 1024-byte aligned), 62-63 swizzle
// mode (1 = 128-byte swizzle).
__device__ __forceinline__ hop_u64 wgmma_desc_128b(hop_u32 addr, hop_u32 lbo, hop_u32 sbo)
{
    return (hop_u64)((addr & 0x3FFFF) >> 4) | ((hop_u64)((lbo >> 4) & 0x3FFF) << 16) |
           ((hop_u64)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// Descriptor d moved by `bytes` (a multiple of 16) inside shared memory. Only the start-address field (bits 0-13,
// address >> 4) changes, and it cannot carry out (shared memory lies below 256 KiB): a 32-bit add on the low word,
// where building each descriptor from its address again (wgmma_desc_128b) costs a handful of instructions.
__device__ __forceinline__ hop_u64 desc_at(hop_u64 d, hop_u32 bytes)
{
    return (d & 0xFFFFFFFF00000000ull) | (hop_u32)((hop_u32)d + (bytes >> 4));
}

// before the first wgmma that reads registers (accumulators, A fragments) the threads wrote
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// Tell the compiler the registers are read and written here, so it neither moves their uses across a wgmma
// fence / wait nor copies them while an asynchronous MMA owns them. Emits no instruction.
template <int N>
__device__ __forceinline__ void fence_regs(float (&d)[N])
{
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Order this thread's generic-proxy shared-memory writes (st.shared, cp.async) before later reads by the async proxy
// (wgmma's shared operands, a TMA store): each writer fences, then the threads meet at a barrier.
__device__ __forceinline__ void fence_proxy_async_smem()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The accumulator operand lists of a wgmma's inline asm: ACC32(d, i) binds d[i .. i+31] read-write, REGS32 / REGS64
// name the first 32 / 64 operands ({%0, ..} in the instruction's accumulator list).
#define ACC8(d, i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
                   "+f"(d[i + 6]), "+f"(d[i + 7])
#define ACC32(d, i) ACC8(d, i), ACC8(d, i + 8), ACC8(d, i + 16), ACC8(d, i + 24)
#define REGS32 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define REGS64 REGS32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
               "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"

// Hand registers from one warpgroup to another: the count is per thread, a multiple of 8 in [24, 256].
template <int R>
__device__ __forceinline__ void setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}
