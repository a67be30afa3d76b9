// Lab 4.3, rung 03: C = A @ B on Hopper's own matrix path -- wgmma (warpgroup MMA) fed by TMA (the bulk tensor copy
// engine) through a 4-stage shared-memory ring, with warp specialization.
// archs: sm_90a
//
//   gemm_wgmma_tma   persistent, 3 warpgroups (1 TMA producer, 2 wgmma consumers), 128 x 256 x 64 tiles, 4 stages;
//                    -DGEMM_F16=1 for fp16, -DB_KMAJOR=1 for the transposed-B fallback, -DCLUSTER=2 for pairs of
//                    blocks that share B tiles by TMA multicast (below), -DEPI_TMA=1 for the epilogue through
//                    shared memory and TMA stores (below; 3 stages)
// Run: python -m phase4_optimization.lab03_tensor_cores (on an sm_90 GPU; the host side is wgmma.py; the measured
// figures are in this lab's README, not here).
//
// gemm_wgmma_tma
//   computes   C[M,N] = A[M,K] @ B[K,N]; A and B bf16 (or fp16 with -DGEMM_F16=1), both row-major; fp32 accumulation;
//              C rounded to bf16 (fp16), row-major with row stride ldc elements.
//   launch     persistent: grid = min(#tiles, #SMs) blocks of 384 threads (3 warpgroups), dynamic shared memory
//              SMEM_BYTES (~193 KiB, so one block per SM). Each block walks the 128x256 output tiles
//              blockIdx.x, blockIdx.x + gridDim.x, ... in a grouped order (GROUP_M tile rows at a time, so the
//              one tile per SM in flight share A rows and B columns through L2).
//   roles      warpgroup 0 = producer: one thread issues the TMA copies (setmaxnreg.dec -> 40 registers);
//              warpgroups 1, 2 = consumers: each owns 64 rows of the 128x256 tile, 128 fp32 accumulators per thread
//              (setmaxnreg.inc -> 232 registers), and issues wgmma.m64n256k16 (4 per 64-wide K step).
//   bytes      A and B are read once per tile row/column of tiles: M*K*2*ceil(N/256) + K*N*2*ceil(M/128) from L2,
//              about (M*K + K*N)*2 + M*N*2 from DRAM when the grouped order keeps the wave's panels in L2.
//              8192^3: 2*8192^3 = 1.10 TFLOP against ~0.4 GB of DRAM traffic: ~2800 FLOP/byte, an order of
//              magnitude above the bf16 ridge point of any Hopper GPU (`--plan` prints this GPU's) ->
//              compute-bound; the tensor cores are the whole story.
//   what changed since the mma.sync rung (kernels.cu): no thread loads a tile any more (TMA does it,
//              asynchronously, zero-filling the ragged edges), no ldmatrix (wgmma reads A and B straight from the
//              swizzled shared memory through 64-bit descriptors), and one warpgroup-wide instruction does
//              64x256x16 where mma.sync did 16x8x16 per warp: the issue slots the older rungs spent on loads and
//              MMAs are free, and the producer runs ahead by up to 4 stages.
//   prediction 0.85-0.95x cuBLAS at bf16 8192^3 (the lab's target: >= 0.9x). The known gaps to cuBLAS: the epilogue
//              stores straight from registers (not overlapped with the next tile's MMAs, ~3% of a tile's time at
//              8192^3), no 2-CTA cluster multicast of the A/B tiles. (-DCLUSTER=2 and -DEPI_TMA=1 below are the
//              attempts at those two.)
//
// Shared memory layout (one stage; 4 stages; every tile 1024-byte aligned, as the 128B swizzle requires):
//   A stage: 128 rows (M) x 64 bf16 (K) = 128 rows of 128 bytes, written by one TMA box {64, 128} with 128B swizzle:
//            the 16-byte chunk c of row r lands at chunk c ^ (r % 8). That is the "K-major, 128B swizzle" layout
//            wgmma expects: core matrices of 8 rows x 16 bytes, 8-row groups 1024 bytes apart (SBO = 1024),
//            leading offset unused (LBO field = 1). Consumer w uses rows 64w..64w+63 (start + w*8192 bytes); the
//            k-th 16-wide K slice starts 32*k bytes into the row (the swizzle is a function of the address bits, so
//            advancing the start address inside the 128-byte row is how one walks K).
//   B stage: 4 boxes {64 (N), 64 (K)}, 8 KiB each: box j holds B[k0:k0+64, n0+64j : n0+64j+64], one 128-byte row
//            per k (N contiguous = "MN-major"; wgmma is told with imm-trans-b = 1). Canonical MN-major 128B-swizzle
//            layout ((8 el, 8 chunks, m), (8 rows, k)) : ((1, 8 el, LBO), (64 el, SBO)): LBO = distance between
//            64-column blocks of N = 8192 bytes, SBO = distance between 8-row groups of K = 1024 bytes. The k-th
//            16-deep K slice starts 16 rows = 2048 bytes further (whole swizzle atoms, so no base offset).
//   barriers: full[s] (count 1: the producer's arrive.expect_tx; the TMA engine completes the bytes) and
//             empty[s] (count 8: lane 0 of each of the 8 consumer warps, after its wgmmas reading stage s retired).
//
// Cluster multicast (-DCLUSTER=2): two blocks of a thread-block cluster take two vertically adjacent tiles (same 256
// columns of B, different 128 rows of A). Each stage, each block copies its own A tile and HALF the B boxes (ranks
// 0 / 1: boxes 0, 2 / 1, 3), multicast into both blocks' shared memory. Per block and stage the L2 reads fall from
// 16 + 32 KiB to 16 + 16 KiB, a third less L2 traffic for the same MMAs (the hypothesis: L2 bandwidth, not the
// tensor cores, sets part of the pace; cuBLAS runs 2-block clusters too). Costs: a slot is free only when
// both blocks' consumers released it (empty[s] counts 16 arrivals: 8 local, 8 from the partner through mapa), the
// two blocks walk in step, and the kernel starts and ends with a cluster-wide barrier. The README has what it gained.
//
// Epilogue through shared memory + TMA store (-DEPI_TMA=1; composes with CLUSTER=2 and B_KMAJOR):
//   what changed  the default epilogue stores C from registers: each consumer thread issues 64 32-bit global stores
//              (8 rows x 16 bytes per warp instruction, bounds-checked) while neither consumer issues a wgmma, so the
//              tensor cores idle for the whole store burst of every tile. Here each consumer warpgroup writes its
//              64 x 256 half of C, rounded, into its own 32 KiB shared buffer (4 boxes of 64 rows x 64 columns, the
//              same 128B swizzle as the operand tiles: the 8 rows one warp instruction writes land in 8 different
//              16-byte chunks, so the st.shared are free of bank conflicts), makes the writes visible to the async
//              proxy (fence.proxy.async.shared::cta), meets its three other warps at a named barrier, and one thread
//              hands the 4 boxes to the TMA engine (cp.async.bulk.tensor ... .global.shared::cta, one bulk group).
//              The warpgroup goes straight on to the next tile's MMAs while the TMA engine writes C; out-of-range
//              rows and columns are clipped by the tensor map (no bounds checks in the kernel). Before the buffer is
//              written again (one tile later) the issuing thread waits until the store has READ it
//              (cp.async.bulk.wait_group.read 0; by then long done) and a named barrier passes that on.
//   room       C staging is 128 x 256 x 2 = 64 KiB: with 4 stages the block would need 256 KiB (> 227 KiB), so this
//              build runs 3 stages (1024 + 3 x 48 KiB + 64 KiB + barriers ~ 209 KiB). -DC_PASSES=2 keeps 4 stages
//              instead: each consumer's buffer holds half its columns (2 boxes, 16 KiB; 1024 + 192 KiB + 32 KiB +
//              barriers ~ 225 KiB) and C leaves in two passes, the second waiting until the first store has read
//              the buffer (a TMA read of 16 KiB of shared memory: short, but on the consumers' path).
//   when not   C's tensor map needs a 16-byte aligned base and a row stride that is a multiple of 16 bytes (N % 8
//              == 0); otherwise the wrapper passes c_tma = 0 and this build stores from registers like the default.
//   prediction the tensor cores' idle time per tile falls from a burst of bounds-checked global stores to 64
//              conflict-free st.shared per thread and two named barriers, against one stage less of look-ahead
//              (3 stages of ~0.5 us of MMAs each, still above L2's latency). Expect the tensor pipe's busy share
//              to rise by a few points and the ratio to cuBLAS with it, most at 4096^3 (a tile is 64 k-steps there,
//              so the epilogue is a larger share than at 8192^3). If it does not rise, the stage count is the next
//              suspect: C_PASSES=2 trades the second pass's wait for the fourth stage; the head to head times both.
//
// Fused epilogue (-DEPI_OPS, a bit mask; 0 = plain C = A @ B): before C is rounded, the fp32 accumulators get
//   + bias[col] (bit 1), then the tanh GELU (bit 2), then + residual[row, col] (bit 4) -- lab 4.2's linear()
//   epilogues, in its order, with its GELU formula (x / (1 + exp(-2u)), u = sqrt(2/pi)(x + 0.044715 x^3)), one
//   rounding at the end. Lab 4.7's block needs bias + GELU (the MLP's first GEMM) and bias + residual (the two
//   projections). Each consumer thread reads the bias and residual values of exactly the C elements it holds
//   (rows l/4 and l/4 + 8 of its warp's 16, columns 8j + 2(l%4) + {0,1}): pairs of 16-bit values, one 32-bit load
//   each when the residual's rows are 4-byte aligned (res_pair), straight from global memory (L2: the bias is
//   shared by every row, a residual element is read once). The residual must not overlap C (c is __restrict__, and
//   the TMA store writes C behind the threads' backs): the wrapper refuses it.
//   prediction the epilogue work is a few hundred FLOPs and 64 loads a thread per 128 x 256 tile against >= 2 x
//              128 x 256 x K FLOPs of MMAs (K >= 1024 in the block): a few percent of a tile's time with the
//              register stores, less with EPI_TMA (the TMA store overlaps the next tile); lab 4.7 times it against
//              cuBLAS + torch's separate epilogue kernels (what torch.compile runs) and against the Triton linear().
//
// The epilogue's source tile through TMA (EPI_TMA with bit 4 or 8 and C_PASSES = 1, the build SRC_TMA below):
//   what changed  bits 4 and 8 read residual[row, col] (or z) for each accumulator from global memory in the
//              accumulator's layout (a warp's load covers 8 rows x 16 bytes, half of each 32-byte sector) after the
//              tile's last MMA, so the loads' latency is the tensor cores' idle time: ncu of lab 4.7's proj dX stage
//              showed the consumers stalled on L1TEX half the time, and the block's residual GEMMs ran well below
//              this kernel's bias-only epilogue against their cuBLAS floors (the lesson has the figures and where
//              they were measured). Here one thread of each consumer warpgroup, once the tile's
//              first MMAs are issued, waits until the last tile's C store has read the warpgroup's C buffer and
//              copies the source's 64 x 256 half tile into that buffer by TMA (4 boxes, on an mbarrier of its own);
//              the load runs under the main loop. The epilogue waits for that barrier and reads the source from the
//              buffer at exactly the addresses where it then writes C (each thread its own elements: no other
//              thread's reads to wait for), so the C store is unchanged.
//   prediction the residual GEMMs and the proj dX stage move towards this kernel's plain GEMM (~0.95x the cuBLAS
//              floor): the source's 2 M N bytes read by TMA under the main loop, C's written by TMA under the next.
//
// Fallback layout (-DB_KMAJOR=1): the wrapper passes B^T (N x K, a transposed copy, one extra pass over B) and
// B is read K-major exactly like A (one TMA box {64 K, 256 N} per stage, descriptor start + 32 B per 16 K,
// imm-trans-b = 0). It exists so that one GPU run can tell an MN-major descriptor mistake from anything else.
//
// Phase parity: the i-th use (round r = i / STAGES) of slot s = i % STAGES. Consumers wait full[s] for the phase
// with parity r & 1. The producer refills slot s for round r >= 1 after empty[s]'s phase r-1 completed, i.e. waits
// parity (r - 1) & 1; round 0 needs no wait (the ring starts empty). Neither side can get two phases ahead of
// the other, so one parity bit is enough.

// Every compile-time value of this file comes from Python as -DNAME=VALUE: wgmma_kernel.CONFIG (the shape, the ring
// depth, GROUP_M, MBAR_TIMEOUT, STORE_RACE) and the build's GEMM_F16, B_KMAJOR, CLUSTER, EPI_TMA, C_PASSES, EPI_OPS
// (wgmma_kernel.defines); none has a default here, and a compile without one stops with an #error naming it.
#ifndef GEMM_F16              // 0: bf16 inputs/outputs, 1: fp16
#error "GEMM_F16 is set by defines(dtype) in wgmma_kernel.py (the build's dtype)"
#endif
#ifndef EPI_TMA               // 1: C leaves through a shared-memory buffer and TMA stores (below), 3 stages
#error "EPI_TMA is set by defines(tma_store) in wgmma_kernel.py (the build's epilogue; --set WGMMA_TMA_STORE=1)"
#endif
#ifndef C_PASSES              // EPI_TMA: 1 = the whole 128 x 256 C tile staged at once, 2 = in two halves of columns
#error "C_PASSES is set by defines(c_passes) in wgmma_kernel.py (the build's C passes; --set WGMMA_C_PASSES=2)"
#endif
#if C_PASSES != 1 && C_PASSES != 2
#error "C_PASSES: 1 or 2"
#endif
#ifndef STAGES                // the ring's depth: CONFIG's STAGES (4); EPI_TMA with C_PASSES = 1 takes EPI_STAGES (3):
#error "STAGES is set by CONFIG in wgmma_kernel.py (STAGES, or EPI_STAGES for the TMA-store build; edit them there)"
#endif                        // the C buffer (64 KiB) takes the fourth stage's room
#ifndef GROUP_M               // tile rows per group of the persistent order (L2 reuse)
#error "GROUP_M is set by CONFIG in wgmma_kernel.py (edit it there)"
#endif
#ifndef B_KMAJOR              // 1: B arrives transposed (N x K, K contiguous) -- the fallback layout, see below
#error "B_KMAJOR is set by defines(b_kmajor) in wgmma_kernel.py (the build's B layout; WGMMA_B_KMAJOR=1 in the environment)"
#endif
#ifndef CLUSTER               // 2: pairs of blocks (a thread-block cluster) share each B tile by TMA multicast, below
#error "CLUSTER is set by defines(cluster) in wgmma_kernel.py (the build's cluster size; --set WGMMA_CLUSTER=2)"
#endif
// EPI_OPS, the fused epilogue's bits: 1 = + bias[col], 2 = tanh GELU, 4 = + residual[row, col],
// 8 = * gelu_tanh'(z[row, col]), 16 = column sums of the stored C (below)
#ifndef EPI_OPS
#error "EPI_OPS is set by defines(epi_ops) in wgmma_kernel.py (the build's fused epilogue, from gemm_wgmma's arguments)"
#endif
#if EPI_OPS < 0 || EPI_OPS > 31
#error "EPI_OPS: a mask of 1 (bias), 2 (GELU), 4 (residual), 8 (GELU's derivative), 16 (column sums)"
#endif
#if (EPI_OPS & 8) && (EPI_OPS & 7)
#error "EPI_OPS: the GELU derivative (8) multiplies A B alone: z is read where the residual (4) would be, no bias or GELU"
#endif
// the source's tile (the residual, or z) through TMA into the C buffer (above): the TMA-store build with bit 4 or 8,
// whole tiles staged
#define SRC_TMA (EPI_TMA && (EPI_OPS & 12) && C_PASSES == 1)
#ifndef MBAR_TIMEOUT          // 1: a barrier wait that spins ~4 s prints who waited on what, then traps (no hang)
#error "MBAR_TIMEOUT is set by CONFIG in wgmma_kernel.py (edit it there)"
#endif
#ifndef STORE_RACE            // > 0, a test's build only: see the TMA-store epilogue below (0: compiled out)
#error "STORE_RACE is set by CONFIG in wgmma_kernel.py (0; a test raises it)"
#endif
// The compile-time shape (CONFIG's BM, BN, BK, CONSUMERS): fixed by the instructions and the layouts built on them,
// so a value other than these is refused here rather than compiled into a kernel whose descriptors no longer fit.
#ifndef BM
#error "BM is set by CONFIG in wgmma_kernel.py (128: fixed, see the static_assert below)"
#endif
#ifndef BN
#error "BN is set by CONFIG in wgmma_kernel.py (256: fixed, see the static_assert below)"
#endif
#ifndef BK
#error "BK is set by CONFIG in wgmma_kernel.py (64: fixed, see the static_assert below)"
#endif
#ifndef CONSUMERS
#error "CONSUMERS is set by CONFIG in wgmma_kernel.py (2: fixed, see the static_assert below)"
#endif
static_assert(BM == 128, "BM: 128 rows, two consumer warpgroups of wgmma's M = 64 (the A box and C boxes assume it)");
static_assert(BN == 256, "BN: 256, one wgmma.m64n256k16 per 16-deep step (its 128 accumulators, four 64-wide B boxes)");
static_assert(BK == 64, "BK: 64 16-bit elements = one 128-byte swizzled row (the descriptors' +32 B per 16 K)");
static_assert(CONSUMERS == 2, "CONSUMERS: 2 warpgroups of 64 rows make BM = 128 (setmaxnreg's split assumes 3 groups)");
#if CLUSTER != 1 && CLUSTER != 2
#error "CLUSTER: 1 or 2"
#endif
#if CLUSTER == 2 && B_KMAJOR
#error "CLUSTER=2 multicasts B's N-major boxes; the B_KMAJOR fallback has one box per stage"
#endif
#if CLUSTER > 1
#define CLUSTER_ATTR __cluster_dims__(CLUSTER, 1, 1)
#else
#define CLUSTER_ATTR
#endif
#define THREADS (128 * (CONSUMERS + 1))
#define A_STAGE_BYTES (BM * BK * 2)          // 16 KiB
#define B_BOX_BYTES (64 * BK * 2)            // 8 KiB: one {64 N, 64 K} box
#define B_STAGE_BYTES (BN * BK * 2)          // 32 KiB
#define C_BOX_BYTES (64 * 64 * 2)            // 8 KiB: one {64 N, 64 M} box of C, 128-byte rows
#if EPI_TMA
#define C_BOXES (4 / C_PASSES)                // boxes in one consumer's buffer (4: all 256 columns of its rows)
#define C_BYTES (CONSUMERS * C_BOXES * C_BOX_BYTES)  // 64 KiB (32 KiB with C_PASSES = 2)
#define SRC_BAR_BYTES (8 * CONSUMERS)                // SRC_TMA's barriers (reserved in every EPI_TMA build)
#define EPI_FLAG_PARAM , int c_tma
#if SRC_TMA
#define EPI_C_PARAM , const __grid_constant__ TmaMap tma_c, const __grid_constant__ TmaMap tma_src
#else
#define EPI_C_PARAM , const __grid_constant__ TmaMap tma_c
#endif
#else
#define C_BYTES 0
#define SRC_BAR_BYTES 0
#define EPI_C_PARAM
#define EPI_FLAG_PARAM
#endif
#if EPI_OPS
#define EPI_OPS_PARAM , const unsigned short* __restrict__ bias, const unsigned short* res, long long ldr, \
                      int res_pair, float* __restrict__ part
#else
#define EPI_OPS_PARAM
#endif
#define SMEM_BYTES (1024 + STAGES * (A_STAGE_BYTES + B_STAGE_BYTES) + C_BYTES + 16 * STAGES + SRC_BAR_BYTES)
#if SMEM_BYTES > 227 * 1024
#error "SMEM_BYTES: more than the 227 KiB of shared memory a block may opt into on sm_90 (fewer STAGES)"
#endif

#if GEMM_F16
#define WGMMA_TYPES "f16.f16"
#define CVT_PAIR "cvt.rn.f16x2.f32"
#define CVT_ONE "cvt.rn.f16.f32"
#else
#define WGMMA_TYPES "bf16.bf16"
#define CVT_PAIR "cvt.rn.bf16x2.f32"
#define CVT_ONE "cvt.rn.bf16.f32"
#endif
#if B_KMAJOR
#define TNSP_B "0"
#else
#define TNSP_B "1"
#endif

typedef unsigned int u32;
typedef unsigned long long u64;

// The sm_90a primitives this kernel shares with lab 4.6's (mbar_init, mbar_init_fence, mbar_arrive_expect_tx,
// mbar_arrive, mbar_try_wait; the driver's CUtensorMap as TmaMap; the wgmma descriptor wgmma_desc_128b, wgmma_fence /
// commit / wait, fence_regs; setmaxnreg_dec / _inc) come from the shared header; smem_u32 through its cp_async.cuh.
#include "hopper.cuh"

// ---------------------------------------------------------------------------------------------------------------------
// This kernel's own mbarrier wait, TMA and cluster primitives (PTX ISA 8.x, sm_90a)
// ---------------------------------------------------------------------------------------------------------------------
// Set (first writer wins) when a barrier wait timed out: {1, block, thread, (bar << 3) | (what << 1) | parity}, what
// 0: a consumer on a full barrier, 1: the producer on an empty one, 2: a consumer on its source barrier (SRC_TMA).
// The host reads it after the launch (wgmma_launch.py: hang_report). A timed-out thread leaves the kernel instead
// of trapping, so the context survives and the report can be read; the result is then wrong, and says so.
__device__ u32 gemm_wgmma_hang[4];

// Wait until the phase of `bar` with parity `parity` has completed; false after ~4 s (a lost arrival or a
// byte count that never completes, not a slow load). try_wait already suspends the thread for a while in
// hardware, so the loop is cheap; the clock is read only once the first try failed. No printf here: a function
// call anywhere in the kernel makes ptxas serialize the wgmmas (warning C7510).
__device__ __forceinline__ bool mbar_wait(u32 bar, u32 parity, u32 what) {
    if (mbar_try_wait(bar, parity)) return true;
#if MBAR_TIMEOUT
    const long long t0 = clock64();
#endif
    while (!mbar_try_wait(bar, parity)) {
#if MBAR_TIMEOUT
        if (clock64() - t0 > 8000000000LL) {
            if (atomicCAS(&gemm_wgmma_hang[0], 0u, 1u) == 0u) {
                gemm_wgmma_hang[1] = blockIdx.x;
                gemm_wgmma_hang[2] = threadIdx.x;
                gemm_wgmma_hang[3] = (bar << 3) | (what << 1) | (parity & 1u);
            }
            return false;
        }
#endif
    }
    return true;
}

// 2-D tile copy global -> shared through a tensor map: coordinates are (innermost = column, row) in elements;
// out-of-bounds parts of the box are zero-filled and still count toward the transaction bytes.
__device__ __forceinline__ void tma_load_2d(u32 dst, const TmaMap* map, int c0, int c1, u32 bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(dst), "l"((u64)map), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

// The same copy delivered to every block of the cluster named in `mask` (bit i = cluster rank i), at the same
// shared-memory offset, each block's mbarrier at `bar`'s offset counting the bytes that land in that block.
__device__ __forceinline__ void tma_load_2d_multicast(u32 dst, const TmaMap* map, int c0, int c1, u32 bar,
                                                      unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%2, %3}], [%4], %5;"
        ::"r"(dst), "l"((u64)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}

// Thread-block cluster helpers (sm_90): this block's rank in its cluster, the cluster's index and count, an arrive
// on the mbarrier at the same offset in block `rank`'s shared memory, and a barrier across the whole cluster.
__device__ __forceinline__ u32 cluster_ctarank() {
    u32 r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
__device__ __forceinline__ u32 cluster_index() {
    u32 r;
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
    return r;
}
__device__ __forceinline__ u32 cluster_count() {
    u32 r;
    asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
    return r;
}
__device__ __forceinline__ void mbar_arrive_cluster(u32 bar, u32 rank) {
    asm volatile(
        "{\n\t.reg .b32 ra;\n\t"
        "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
        "mbarrier.arrive.shared::cluster.b64 _, [ra];\n\t}"
        ::"r"(bar), "r"(rank)
        : "memory");
}
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;" ::: "memory");
}

// The store side of TMA (EPI_TMA): a 2-D box shared -> global through a tensor map (coordinates innermost first;
// parts of the box outside the tensor are not written), tracked per issuing thread in bulk groups.
__device__ __forceinline__ void tma_store_2d(const TmaMap* map, u32 src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 ::"l"((u64)map), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void st_shared_u32(u32 addr, u32 v) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ u32 pack_pair(float x, float y) {
    u32 v;
    asm("" CVT_PAIR " %0, %1, %2;" : "=r"(v) : "f"(y), "f"(x));   // x -> low half (the lower column), y -> high
    return v;
}

// The operands' shared-memory matrix descriptors are hopper.cuh's wgmma_desc_128b (start address, LBO, SBO, 128-byte
// swizzle, base offset 0: every tile is 1024-byte aligned); common/hopper.py mirrors it in smem_descriptor() and
// wgmma_layout.py's operand_descriptors() builds this kernel's, which the tests read back through the NumPy model.

// D[64x256] (+)= A[64x16] (K-major, from shared) * B[16x256] (N-major, from shared: imm-trans-b = 1; or K-major
// with B_KMAJOR=1, imm-trans-b = 0).
// scale_d = 0 ignores the old D (the first K step of a tile), 1 accumulates.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], u64 desc_a, u64 desc_b, int scale_d) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %130, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32." WGMMA_TYPES " "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
        "%128, %129, p, 1, 1, 0, " TNSP_B ";\n\t}"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]),
          "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]),
          "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]),
          "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The tile a block works on at step t of its walk: GROUP_M tile rows at a time, column-major inside a group, so
// the blocks of one wave share a few A row panels and B column panels.
__device__ __forceinline__ void tile_coords(int t, int tiles_m, int tiles_n, int& tm, int& tn) {
    int per_group = GROUP_M * tiles_n;
    int first_m = (t / per_group) * GROUP_M;
    int rows = min(tiles_m - first_m, GROUP_M);
    int r = t % per_group;
    tm = first_m + r % rows;
    tn = r / rows;
}

// Kept here, not epilogue.cuh's store_pair: that one takes typed pointers and rounds a lone bf16 value in software (f2bf);
// this one rounds with one cvt per value, as the pair does.
__device__ __forceinline__ void store_pair(unsigned short* c, long long ldc, int row, int col, int M, int N,
                                           float x, float y, int pair) {
    if (row >= M) return;
    unsigned short* p = c + (long long)row * ldc + col;
    if (pair) {                      // N even and c 4-byte aligned: one 32-bit store for (col, col+1)
        if (col < N) {
            u32 v;
            asm("" CVT_PAIR " %0, %1, %2;" : "=r"(v) : "f"(y), "f"(x));   // x -> low half (col), y -> high half
            *reinterpret_cast<u32*>(p) = v;
        }
    } else {
        unsigned short h;
        if (col < N) {
            asm("" CVT_ONE " %0, %1;" : "=h"(h) : "f"(x));
            p[0] = h;
        }
        if (col + 1 < N) {
            asm("" CVT_ONE " %0, %1;" : "=h"(h) : "f"(y));
            p[1] = h;
        }
    }
}

#if EPI_OPS
__device__ __forceinline__ float half_to_f32(unsigned short h) {
#if GEMM_F16
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
#else
    return __uint_as_float((u32)h << 16);       // bf16 is the top half of an fp32
#endif
}

// gelu_tanh(t) = t / (1 + exp(-2u)), u = sqrt(2/pi) (t + 0.044715 t^3), as lab 4.2's kernels write it; exp(-2u) =
// 2^(-2u log2 e) by one ex2.approx; a large negative t gives -0 (the exponential overflows to inf), a large
// positive t gives t; t = -inf itself gives NaN (-inf / inf), as in lab 4.2's kernels and the float64 formula
__device__ __forceinline__ float gelu_tanh(float t) {
    float e;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(-2.f * 0.7978845608028654f * 1.4426950408889634f *
                                                    (t + 0.044715f * t * t * t)));
    return __fdividef(t, 1.f + e);
}

// d/dt gelu_tanh(t) for the backward (EPI_OPS & 8): with s = sigmoid(2u) = 1 / (1 + exp(-2u)), u as above,
// gelu'(t) = s + 2 t s (1 - s) c (1 + 3 a t^2) - lab 4.7's _gelu_tanh_grad, its constants folded the same way
// (-2 c log2 e, its 0.044715 multiple; 2 c, 6 c a): one ex2, one approximate division, no 1 + tanh cancellation
__device__ __forceinline__ float gelu_tanh_grad(float t) {
    const float t2 = t * t;
    float e;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(t * (-2.302208198144325f + -0.1029432395800235f * t2)));
    const float s = __fdividef(1.f, 1.f + e);
    return fmaf(t * (1.5957691216057308f + 0.21406444881780076f * t2) * s, 1.f - s, s);
}

// Two 16-bit values of row r at columns col, col + 1 of a row-major operand with row stride ld (the residual, or z):
// one 4-byte load when `pair` (col is even and the rows 4-byte aligned), else one or two 2-byte loads inside N.
__device__ __forceinline__ void load_pair(const unsigned short* base, long long ld, int pair, int r, int col, int N,
                                          float& x, float& y) {
    const unsigned short* p = base + (long long)r * ld + col;
    if (pair && col + 1 < N) {
        const u32 v = *reinterpret_cast<const u32*>(p);
        x = half_to_f32((unsigned short)(v & 0xffffu));
        y = half_to_f32((unsigned short)(v >> 16));
    } else {
        x = col < N ? half_to_f32(p[0]) : 0.f;
        y = col + 1 < N ? half_to_f32(p[1]) : 0.f;
    }
}

// The fused epilogue on this thread's accumulators of columns group g (the m64nNk16 layout: d[4j + e] is row
// `row` + 8 (e / 2), column col0 + 8j + (e % 2); group g is j = 4g .. 4g + 3, 32 columns of the tile); elements
// outside C are left alone (they are never stored). A group at a time, with its column sums right after: what is
// live at once stays one group's loads, not the whole tile's (the sums need the 128 accumulators kept as well).
__device__ __forceinline__ void epilogue_ops(float* d, const unsigned short* __restrict__ bias,
                                             const unsigned short* res, long long ldr, int res_pair,
                                             int row, int col0, int M, int N, int g) {
#pragma unroll
    for (int j = 4 * g; j < 4 * g + 4; ++j) {
        const int col = col0 + 8 * j;
#pragma unroll
        for (int h = 0; h < 2; ++h) {           // h: rows `row` and `row` + 8
            const int r = row + 8 * h;
            float x = d[4 * j + 2 * h], y = d[4 * j + 2 * h + 1];
#if EPI_OPS & 1
            if (col < N) x += half_to_f32(__ldg(bias + col));
            if (col + 1 < N) y += half_to_f32(__ldg(bias + col + 1));
#endif
#if EPI_OPS & 2
            x = gelu_tanh(x);
            y = gelu_tanh(y);
#endif
#if EPI_OPS & 4
            if (r < M) {
                float rx, ry;
                load_pair(res, ldr, res_pair, r, col, N, rx, ry);
                x += rx;
                y += ry;
            }
#endif
#if EPI_OPS & 8
            // the backward through a GELU: dZ = (dY W^T) * gelu'(z), z read where a residual would be
            if (r < M) {
                float zx, zy;
                load_pair(res, ldr, res_pair, r, col, N, zx, zy);
                x *= gelu_tanh_grad(zx);
                y *= gelu_tanh_grad(zy);
            }
#endif
            d[4 * j + 2 * h] = x;
            d[4 * j + 2 * h + 1] = y;
        }
    }
}

#if SRC_TMA
// epilogue_ops with the source (the residual, or z) in the C buffer (SRC_TMA): read from shared memory where this
// thread will write the C pair of the same row and columns (the TMA-store layout below: box j / 8, chunk
// (j % 8) ^ (r % 8), 4 bytes per lane % 4). Rows below M and columns right of N hold TMA's zeros; they are never
// stored. The bias, when there is one, still comes from global memory (one value per column, shared by every row).
// Kept apart from epilogue_ops on purpose: one body for both reads (the source's address derived from row and col,
// chosen per load at run time or by a template argument) left ptxas spilling 88-232 bytes in the build with bits 8
// and 16, where this one, its bias hoisted out of the row pair and its swizzle taken from the lane, spills none.
__device__ __forceinline__ u32 ld_shared_u32(u32 addr) {
    u32 v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
__device__ __forceinline__ void epilogue_ops_shared(float* d, const unsigned short* __restrict__ bias, u32 cbuf,
                                                    int r0, int lane, int col0, int N, int g) {
    const u32 swz = (u32)(lane / 4);            // = r0 % 8 = (r0 + 8) % 8
#pragma unroll
    for (int j = 4 * g; j < 4 * g + 4; ++j) {
        const u32 at = cbuf + (j / 8) * C_BOX_BYTES + ((((u32)j % 8) ^ swz) << 4) + 4 * (lane % 4);
#if EPI_OPS & 1
        const int col = col0 + 8 * j;
        const float bx = col < N ? half_to_f32(__ldg(bias + col)) : 0.f;
        const float by = col + 1 < N ? half_to_f32(__ldg(bias + col + 1)) : 0.f;
#endif
#pragma unroll
        for (int h = 0; h < 2; ++h) {           // h: rows r0 and r0 + 8
            float x = d[4 * j + 2 * h], y = d[4 * j + 2 * h + 1];
#if EPI_OPS & 1
            x += bx;
            y += by;
#endif
#if EPI_OPS & 2
            x = gelu_tanh(x);
            y = gelu_tanh(y);
#endif
            const u32 v = ld_shared_u32(at + (r0 + 8 * h) * 128);
            const float sx = half_to_f32((unsigned short)(v & 0xffffu)), sy = half_to_f32((unsigned short)(v >> 16));
#if EPI_OPS & 4
            x += sx;
            y += sy;
#else
            x *= gelu_tanh_grad(sx);                // bit 8: the backward through a GELU
            y *= gelu_tanh_grad(sy);
#endif
            d[4 * j + 2 * h] = x;
            d[4 * j + 2 * h + 1] = y;
        }
    }
}
#endif

#if EPI_OPS & 16
// The first level of a bias gradient (EPI_OPS & 16): this warp's 16 rows of C summed per column, of the values as
// they are stored (each rounded to 16 bits first), into row (first row) / 16 of part, a (cdiv(M, 16), N) fp32
// matrix; rows past M count 0. Lane l holds rows l/4 and l/4 + 8 of columns 8j + 2(l%4) + {0, 1}, so the 8 lanes of
// one l % 4 (bits 2-4 of l) share columns. 32 columns at a time (8 values a lane), a reduce-scatter over those bits:
// at lanes 16, 8 and 4 apart, each lane keeps the half of its values its bit names and adds its partner's copy of
// that half - 4 + 2 + 1 shuffles, after which every lane holds one finished sum (no lane idle at the store). A fixed
// order, so the sums are the same on every run; lab 4.7's colsum_kernel adds the cdiv(M, 16) rows.
// One step of column_sums's reduce-scatter: of v[0 .. 2 HALF), the lane keeps the half its bit O names (the upper
// half when set) in v[0 .. HALF), plus the partner's (lane ^ O) copy of that half.
template <int HALF, int O>
__device__ __forceinline__ void reduce_scatter_step(float* v, int lane) {
    const bool upper = lane & O;
#pragma unroll
    for (int i = 0; i < HALF; ++i) {
        const float send = upper ? v[i] : v[i + HALF];
        const float keep = upper ? v[i + HALF] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
    }
}

__device__ __forceinline__ void column_sums(const float* d, float* __restrict__ part, int row, int col0, int M,
                                            int N, int g) {
    const int lane = threadIdx.x % 32;
    const int first = row - lane / 4;           // the warp's first row (a multiple of 16)
    {                                           // the thread's columns j = 4g .. 4g + 3
        float v[8];                             // v[2 jj + e]: column 8 (4g + jj) + 2 (l % 4) + e, both rows
#pragma unroll
        for (int jj = 0; jj < 4; ++jj) {
            const int j = 4 * g + jj;
            const u32 p0 = pack_pair(d[4 * j + 0], d[4 * j + 1]), p1 = pack_pair(d[4 * j + 2], d[4 * j + 3]);
            const bool r0 = row < M, r1 = row + 8 < M;        // the stores' rounding, then rows inside C only
            v[2 * jj] = (r0 ? half_to_f32((unsigned short)(p0 & 0xffffu)) : 0.f)
                      + (r1 ? half_to_f32((unsigned short)(p1 & 0xffffu)) : 0.f);
            v[2 * jj + 1] = (r0 ? half_to_f32((unsigned short)(p0 >> 16)) : 0.f)
                          + (r1 ? half_to_f32((unsigned short)(p1 >> 16)) : 0.f);
        }
        reduce_scatter_step<4, 16>(v, lane);
        reduce_scatter_step<2, 8>(v, lane);
        reduce_scatter_step<1, 4>(v, lane);
        // v[0]: column 8j + 2(l % 4) + b2 with jj = 2 b4 + b3 (the lane's bits 4, 3, 2)
        const int col = col0 + 8 * (4 * g + 2 * ((lane >> 4) & 1) + ((lane >> 3) & 1)) + ((lane >> 2) & 1);
        if (first < M && col < N)
            part[(long long)(first / 16) * N + col] = v[0];
    }
}
#endif
#endif

// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(THREADS, 1) CLUSTER_ATTR
gemm_wgmma_tma(const __grid_constant__ TmaMap tma_a, const __grid_constant__ TmaMap tma_b EPI_C_PARAM,
               unsigned short* __restrict__ c, int M, int N, int K, int ldc, int pair_store EPI_FLAG_PARAM
               EPI_OPS_PARAM) {
    extern __shared__ unsigned char smem_raw[];
    // the 128B swizzle pattern repeats every 1024 bytes and both TMA and wgmma compute it from address bits:
    // every tile must start on a 1024-byte boundary
    const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const u32 sA = base;
    const u32 sB = base + STAGES * A_STAGE_BYTES;
    const u32 sC = sB + STAGES * B_STAGE_BYTES;     // EPI_TMA: consumer w's C boxes at sC + w * C_BOXES * C_BOX_BYTES
    const u32 bars = sC + C_BYTES;                  // full[s] at bars + 8s, empty[s] at bars + 8(STAGES + s)
                                                    // (SRC_TMA: consumer w's source barrier at bars + 8(2 STAGES + w))

    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int k_tiles = (K + BK - 1) / BK;
    const int wg = threadIdx.x / 128;
    // The walk is over units of CLUSTER tiles stacked along M (one tile when CLUSTER = 1): the blocks of a cluster
    // take the unit's tiles by rank and share its B column panel. A rank whose tile lies below M still loads (a
    // clamped, valid A tile) and computes, so that its share of B reaches its partner; it stores nothing.
#if CLUSTER > 1
    const int rank = cluster_ctarank(), first = cluster_index(), step = cluster_count();
#else
    const int rank = 0, first = blockIdx.x, step = gridDim.x;
#endif
    const int units_m = (tiles_m + CLUSTER - 1) / CLUSTER;
    const int units = units_m * tiles_n;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(bars + 8 * s, 1);
            // every consumer warp of every block in the cluster releases a slot: a block's producer may refill
            // it only when no block still reads it (its multicast writes into all of them)
            mbar_init(bars + 8 * (STAGES + s), CONSUMERS * 4 * CLUSTER);
        }
#if SRC_TMA
        for (int w = 0; w < CONSUMERS; ++w) mbar_init(bars + 8 * (2 * STAGES + w), 1);   // the source in buffer w
#endif
        // make the initialised barriers visible to the async proxy (the TMA engine completes on them)
        mbar_init_fence();
    }
#if CLUSTER > 1
    cluster_sync();    // the partner's barriers are initialised before anyone multicasts into them
#else
    __syncthreads();   // the last block-wide barrier: after the role split each side syncs only through mbarriers
#endif

    if (wg == 0) {
        // ------------------------------------------------------------------ producer warpgroup
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int it = 0;
            for (int t = first; t < units; t += step) {
                int um, tn;
                tile_coords(t, units_m, tiles_n, um, tn);
                const int m0 = min(um * CLUSTER + rank, tiles_m - 1) * BM, n0 = tn * BN;
#if B_KMAJOR
                const u32 bytes = A_STAGE_BYTES + B_STAGE_BYTES;
#else
                // B boxes that lie wholly right of N are skipped: the columns they would fill are never stored
                const int n_boxes = min(4, (N - n0 + 63) / 64);
                const u32 bytes = A_STAGE_BYTES + n_boxes * B_BOX_BYTES;
#endif
                for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                    const int s = it % STAGES, r = it / STAGES;
                    if (r > 0 && !mbar_wait(bars + 8 * (STAGES + s), (r - 1) & 1, 1)) goto done;
                    const u32 full = bars + 8 * s;
                    mbar_arrive_expect_tx(full, bytes);
                    tma_load_2d(sA + s * A_STAGE_BYTES, &tma_a, kt * BK, m0, full);
#if B_KMAJOR
                    // B^T (N x K): one box {64 K, 256 N}, laid out exactly like the A tile
                    tma_load_2d(sB + s * B_STAGE_BYTES, &tma_b, kt * BK, n0, full);
#elif CLUSTER > 1
                    // this block copies every CLUSTER-th B box, into every block of the cluster
                    for (int j = rank; j < n_boxes; j += CLUSTER)
                        tma_load_2d_multicast(sB + s * B_STAGE_BYTES + j * B_BOX_BYTES, &tma_b, n0 + 64 * j,
                                              kt * BK, full, (unsigned short)((1u << CLUSTER) - 1));
#else
                    for (int j = 0; j < n_boxes; ++j)
                        tma_load_2d(sB + s * B_STAGE_BYTES + j * B_BOX_BYTES, &tma_b, n0 + 64 * j, kt * BK, full);
#endif
                }
            }
        }
    } else {
        // ------------------------------------------------------------------ consumer warpgroups
        setmaxnreg_inc<232>();
        const int cw = wg - 1;                        // which 64-row half of the tile
        // a slot is free again for this block's producer and (CLUSTER = 2) the partner's, whose multicast fills it
        auto release_slot = [&](u32 bar) {
            mbar_arrive(bar);
#if CLUSTER > 1
            mbar_arrive_cluster(bar, rank ^ 1);
#endif
        };
        const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = 0.f;
        int it = 0;
#if SRC_TMA
        const u32 sbar = bars + 8 * (2 * STAGES + cw), sbuf = sC + cw * (C_BOXES * C_BOX_BYTES);
        int src_loads = 0;                            // source tiles this warpgroup has waited for: the barrier's phase
#endif
        for (int t = first; t < units; t += step) {
            int um, tn;
            tile_coords(t, units_m, tiles_n, um, tn);
            const int tm = um * CLUSTER + rank;      // may be tiles_m (a CLUSTER = 2 partner below M): no stores
#if SRC_TMA
            // this half tile's source boxes (none for a clamped partner or a half below M, none right of N): the
            // same condition as its C store's, the same for all 128 threads
            const int src_boxes = (c_tma && tm < tiles_m && tm * BM + cw * 64 < M) ? min(4, (N - tn * BN + 63) / 64)
                                                                                   : 0;
#endif
            int prev = -1;
            for (int kt = 0; kt < k_tiles; ++kt, ++it) {
                const int s = it % STAGES;
                if (!mbar_wait(bars + 8 * s, (it / STAGES) & 1, 0)) {
                    wgmma_wait<0>();   // leave with no MMA in flight (ptxas would insert this wait itself)
                    goto done;
                }
                __syncwarp();   // the lanes left the polling loop one by one; wgmma.* below are .sync.aligned
                const u32 a0 = sA + s * A_STAGE_BYTES + cw * (64 * 128);
                const u32 b0 = sB + s * B_STAGE_BYTES;
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk) {
                    const u64 da = wgmma_desc_128b(a0 + 32 * kk, 16, 1024);      // K-major: +32 B per 16 K
#if B_KMAJOR
                    const u64 db = wgmma_desc_128b(b0 + 32 * kk, 16, 1024);       // K-major, like A
#else
                    const u64 db = wgmma_desc_128b(b0 + 2048 * kk, B_BOX_BYTES, 1024);  // N-major: +16 rows per 16 K
#endif
                    wgmma_m64n256k16(d, da, db, (kt | kk) != 0);
                }
                wgmma_commit();
#if SRC_TMA
                if (kt == 0 && src_boxes > 0 && (threadIdx.x % 128) == 0) {
                    // the tile's first MMAs are on the tensor cores: bring the source's half tile into the C buffer
                    // once the last tile's C store has read it (by now it has, or nearly)
                    bulk_wait_read<0>();
                    mbar_arrive_expect_tx(sbar, src_boxes * C_BOX_BYTES);
                    for (int jb = 0; jb < src_boxes; ++jb)
                        tma_load_2d(sbuf + jb * C_BOX_BYTES, &tma_src, tn * BN + 64 * jb, tm * BM + cw * 64, sbar);
                }
                __syncwarp();   // warp 0's lanes together again before wgmma.wait_group (.sync.aligned)
#endif
                // keep this step's MMAs in flight; the previous step's are retired now, so its slot can be refilled
                wgmma_wait<1>();
                if (prev >= 0) {
                    __syncwarp();
                    if (lane == 0) release_slot(bars + 8 * (STAGES + prev));
                }
                prev = s;
            }
            wgmma_wait<0>();
            fence_regs(d);
            __syncwarp();
            if (lane == 0) release_slot(bars + 8 * (STAGES + prev));
#if SRC_TMA
            if (src_boxes > 0 && !mbar_wait(sbar, (src_loads++) & 1, 2)) goto done;
#endif
#if EPI_OPS
#pragma unroll
            for (int g = 0; g < 8; ++g) {     // 32 columns at a time
#if SRC_TMA
                if (c_tma) {
                    if (src_boxes > 0)
                        epilogue_ops_shared(d, bias, sbuf, warp * 16 + lane / 4, lane, tn * BN + 2 * (lane % 4), N, g);
                } else
#endif
#if EPI_OPS & 15
                epilogue_ops(d, bias, res, ldr, res_pair, tm * BM + cw * 64 + warp * 16 + lane / 4,
                             tn * BN + 2 * (lane % 4), M, N, g);
#endif
#if EPI_OPS & 16
                column_sums(d, part, tm * BM + cw * 64 + warp * 16 + lane / 4, tn * BN + 2 * (lane % 4), M, N, g);
#endif
            }
#endif

#if EPI_TMA
            if (c_tma) {
                // C through this warpgroup's shared buffer, C_PASSES passes of C_BOXES boxes: in pass h, box
                // j / 8 - h * C_BOXES holds columns 64(j/8)..+63 of its 64 rows, one 128-byte row each, 16-byte chunk
                // (j % 8) of row r at chunk (j % 8) ^ (r % 8) (the 128B swizzle the tensor map undoes). A warp's
                // store instruction covers rows r0..r0+7 (r0 % 8 = lane / 4), each row a different chunk: 32 banks.
                const u32 cbuf = sC + cw * (C_BOXES * C_BOX_BYTES);
                const bool issuer = (threadIdx.x % 128) == 0;
                const int r0 = warp * 16 + lane / 4;  // this lane's rows r0 and r0 + 8 of the half tile
                const u32 swz = (u32)(lane / 4);      // = r0 % 8 = (r0 + 8) % 8
                const int row0 = tm * BM + cw * 64, n0 = tn * BN;
                // a clamped cluster partner, or a half below M, stores nothing; boxes right of N are skipped
                const int n_boxes = (tm < tiles_m && row0 < M) ? min(4, (N - n0 + 63) / 64) : 0;
#pragma unroll
                for (int h = 0; h < C_PASSES; ++h) {
                    if (issuer) bulk_wait_read<0>();  // the previous store (last tile's, or pass h-1) read the buffer
                    named_bar_sync(1 + cw, 128);      // ... and every thread of the warpgroup knows it
#if STORE_RACE > 0
                    // a test's build: warps 1-3 start writing STORE_RACE cycles late, so a store issued before the
                    // barrier below would read their rows unwritten on every launch, not only on an unlucky one
                    if (warp != 0)
                        for (const long long t0 = clock64(); clock64() - t0 < STORE_RACE;) {}
#endif
#pragma unroll
                    for (int jj = 0; jj < 32 / C_PASSES; ++jj) {
                        const int j = h * (32 / C_PASSES) + jj;
                        const u32 at = cbuf + (jj / 8) * C_BOX_BYTES + ((((u32)j % 8) ^ swz) << 4) + 4 * (lane % 4);
                        st_shared_u32(at + r0 * 128, pack_pair(d[4 * j + 0], d[4 * j + 1]));
                        st_shared_u32(at + (r0 + 8) * 128, pack_pair(d[4 * j + 2], d[4 * j + 3]));
                    }
                    fence_proxy_async_smem();         // each writer: its st.shared before the async proxy's reads
                    named_bar_sync(1 + cw, 128);      // all 128 writers done before the one thread issues the store
                    if (issuer) {
                        for (int jb = 0; jb < C_BOXES && h * C_BOXES + jb < n_boxes; ++jb)
                            tma_store_2d(&tma_c, cbuf + jb * C_BOX_BYTES, n0 + 64 * (h * C_BOXES + jb), row0);
                        bulk_commit();
                    }
                }
                continue;                             // to the next tile's MMAs while the TMA engine writes C
            }
#endif
            // epilogue: the m64nNk16 accumulator layout -- warp w of the warpgroup owns rows 16w..16w+15; lane l
            // holds rows l/4 and l/4 + 8, columns 8j + 2(l%4) + {0,1} in d[4j..4j+3]
            const int row = tm * BM + cw * 64 + warp * 16 + lane / 4;
            const int col0 = tn * BN + 2 * (lane % 4);
#pragma unroll
            for (int j = 0; j < 32; ++j) {
                store_pair(c, ldc, row, col0 + 8 * j, M, N, d[4 * j + 0], d[4 * j + 1], pair_store);
                store_pair(c, ldc, row + 8, col0 + 8 * j, M, N, d[4 * j + 2], d[4 * j + 3], pair_store);
            }
        }
    }
done:
#if EPI_TMA
    // the C buffers must outlive the stores reading them (and the writes are complete when the kernel ends)
    if (wg > 0 && threadIdx.x % 128 == 0) bulk_wait<0>();
#endif
#if CLUSTER > 1
    // no block may leave while its partner can still multicast into its shared memory or arrive on its barriers
    cluster_sync();
#endif
    return;
}
