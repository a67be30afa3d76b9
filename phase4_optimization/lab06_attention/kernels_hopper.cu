// Lab 4.6, the Hopper rungs: the flash-attention forward on Hopper's own matrix path - wgmma (warpgroup MMA) fed by
// TMA (the bulk tensor copy engine), with warp specialization, as FlashAttention-3 describes it.
// archs: sm_90a
//
//   attn_03_wgmma            3 warpgroups (1 TMA producer, 2 wgmma consumers of 64 query rows each), 128-row Q
//                            tile, 128-key K/V tiles through a STAGES-deep (2) mbarrier ring; S = Q K^T, O += P V both
//                            wgmma, P from registers; each consumer: GEMM, wait, softmax, GEMM, wait
//   attn_04_wgmma_pingpong   rung 03 + the consumers take turns at the tensor cores (named barriers): one's
//                            softmax overlaps the other's GEMMs; P_{j-1} V and Q K_j^T issued as one GEMM phase
//   attn_05_wgmma_overlap    rung 03 + inside each consumer, softmax_j runs while P_{j-1} V_{j-1} is on the tensor
//                            cores (two commit groups, wait_group 1); a 3-stage K/V ring by default (-DSTAGES)
//   attn_06_wgmma_overlap_pingpong  rung 05 + rung 04's turn-taking, at the GEMM issue only (FlashAttention-3's
//                            full schedule)
//   attn_07_wgmma_persistent rung 05, persistent: one block per SM walks the (query tile, head) tiles, the K/V
//                            ring running on across them, Q handed back through a second barrier
//   attn_08_wgmma_persistent_pingpong  rung 07 + rung 06's turn-taking at the GEMM issue, tile by tile
// Run: python -m phase4_optimization.lab06_attention.hopper --check (on an sm_90 GPU; the host side is hopper.py; the
// measured figures are in this lab's README, not here).
//
// attn_03_wgmma
//   computes   per (batch b, query head h): O = softmax(sm_scale Q K^T [+ causal mask]) V and LSE = log(rowsum(exp(..)))
//              (natural log, fp32), Q, K, V, O (B, H, S, D) bf16 (fp16 with -DATTN_FP16=1) views with a
//              contiguous last dim - Q, K, V read through 4-D tensor maps (D, H, S, B) built from their strides, O
//              stored through its strides (o_sb, o_sh, o_ss), so lab 4.7 hands in views of its QKV projection's
//              (B, S, 3, H, D) output and gets O in (B, S, H, D), no copy either way; LSE (B, H, S) contiguous; fp32
//              accumulation; HEAD_DIM 64 or 128 at compile time, any S >= 1 at run time. Grouped-query K, V
//              (B, Hkv, S, D), Hkv dividing Hq: query head h reads key/value head h / (Hq / Hkv).
//   launch     grid (ceil(S / 128), B Hq), 384 threads (3 warpgroups), dynamic shared memory SMEM_BYTES (~161 KiB at
//              D = 128, ~81 KiB at D = 64); one block per SM either way (384 threads x 168 registers at launch fill
//              the register file). Causal: block x takes query tile (gridDim.x - 1 - x), so the longest rows start
//              first.
//   roles      warpgroup 0 = producer: one thread issues the TMA copies (Q once, then K and V tile by tile into the
//              ring), setmaxnreg.dec to 24 registers; warpgroups 1, 2 = consumers, setmaxnreg.inc to 240: each owns 64
//              query rows, holds S (64 x 128 fp32: 64 registers a thread), O (64 x D fp32: D/2 registers) and P
//              (64 x 128 as bf16 pairs: 32 registers).
//   bytes      Q, K, V read and O written once from DRAM: 4 B H S D x 2 bytes (537 MB at B=4 H=32 S=4096 D=128); every
//              128-row Q tile re-reads its head's K and V from L2: S / 128 x 2 S D x 2 bytes per head (8 GiB in all
//              at that shape, half of rung 02's 64-row tiles). FLOPs 4 B H S^2 D = 1.10 TFLOP (halved causal):
//              2048 FLOP/byte against HBM, compute-bound.
//   what changed since rung 02 (kernels.cu, mma.sync): no thread loads a tile (the TMA engine copies Q, K and V, and
//              zero-fills rows past S), no ldmatrix (wgmma reads Q, K and V from the swizzled shared memory through
//              descriptors), one warpgroup instruction does 64 x 128 x 16 where mma.sync did 16 x 8 x 16 per warp,
//              and the producer runs one tile ahead. The softmax is still serial with the GEMMs inside a warpgroup:
//              S_j = Q K_j^T, wait, softmax, O += P_j V_j, wait - the tensor cores idle during every softmax except
//              where the other consumer warpgroup happens to fill them.
//   prediction 0.75-0.9x SDPA cuDNN at B=4 H=32 S=4096 D=128 bf16 (cuDNN's Hopper kernels overlap the softmax with the
//              GEMMs; this rung does not, and the exp2 of a 128 x 128 tile is ~1/8 of the tile's MMA time at the
//              MUFU's 16 ops/clock/SM against the tensor cores' 1024 dense bf16 FMAs/clock/SM); above rung 02,
//              whose mma.sync tops out near 2/3 of the wgmma peak.
//
// attn_04_wgmma_pingpong
//   computes, launch, roles, bytes: as attn_03_wgmma (same producer, same shared memory, same registers per thread:
//              S, O and P are all live across a GEMM phase now, 160 of the consumers' 240 registers).
//   what changed since rung 03: the consumer loop is software-pipelined by one GEMM: step j issues O += P_{j-1}
//              V_{j-1} and S_j = Q K_j^T back to back (16 wgmmas at D = 128, one commit), then runs softmax_j - so a
//              warpgroup waits on the tensor cores once per tile instead of twice. And the two consumer
//              warpgroups take turns at their GEMM phases (FlashAttention-3's "ping-pong"): named barrier 1 + c
//              gates consumer c's phase, and each side opens the other's barrier once its wgmmas are issued.
//              While consumer 0 runs softmax_j (exp2, max, sum, packing: MUFU and FMA work the tensor cores cannot
//              help with), consumer 1's GEMMs run, and the other way round: the tensor cores idle only when one
//              side's softmax takes longer than the other's GEMM phase.
//   prediction 1.10-1.25x rung 03, which puts it at 0.9-1.05x SDPA cuDNN at B=4 H=32 S=4096 D=128 bf16 (the
//              FlashAttention-3 paper credits ping-pong scheduling with a gain of this order at D = 128).
//              Its costs: a stage is released one step later (after P V of the next step), so the producer's
//              lead over the consumers shrinks to about one softmax; and the 2-stage ring is the next suspect if
//              the tensor pipe shows gaps (ncu: tensor pipe active share, stall reasons "long scoreboard" on the
//              mbarrier waits).
//
// attn_05_wgmma_overlap
//   computes, launch, roles, bytes: as attn_03_wgmma; with the default 3 stages, 225 KiB of shared memory at D = 128
//              (one more K/V stage: 64 KiB), still one block per SM.
//   what changed since rung 03 (FlashAttention-3's "intra-warpgroup overlap"): step j issues S_j = Q K_j^T, rescales
//              O while it runs, issues O += P_{j-1} V_{j-1} as a second commit group, waits only for the first
//              (wgmma.wait_group 1), and runs softmax_j while P_{j-1} V_{j-1} is still on the tensor cores; then
//              waits for it, packs P_j and releases stage j-1. No turn-taking: rung 04's profile showed its named
//              barriers as the top stall, so the two consumers simply interleave.
//   why 3 stages: rungs 04 and 05 release stage j-1 only at the end of step j, so with 2 stages the load of tile
//              j+1 starts when step j ends and must land before step j+1 begins - the TMA latency (L2 -> shared, 64
//              KiB) sits on the critical path once per tile. A third stage gives the producer a whole step of lead.
//   the ptxas trap (read off the SASS, pinned by a test): a wgmma wait has no register operands, and ptxas's
//              scheduler hoisted wait_group 0 to just after the row max, above all 64 exp2s a thread does per tile -
//              the overlap was gone before the kernel ever ran. A shared-memory store of the row sums (which depend
//              on every exp2) just before the wait cannot move below it, so the softmax stays between the waits.
//   prediction 1.05-1.15x rung 03 (FlashAttention-3's ablation credits the GEMM-softmax pipelining with ~10-15% at
//              D = 128), 0.93-1.02x SDPA cuDNN non-causal; the 3-stage ring alone is worth a few % to rung 04 if the
//              2-stage ring's exposed TMA latency is what held it back (bench.py times each rung at both depths).
//
// attn_06_wgmma_overlap_pingpong
//   computes, launch, roles, bytes: as attn_05_wgmma_overlap (3 stages by default).
//   what changed since rung 05: the two consumers take turns issuing their step's GEMMs (rung 04's named-barrier
//              protocol), but wait and run their softmax outside the turn - FlashAttention-3's two overlaps together.
//              Rung 04 gated the waits too (its GEMM phase included wait_group 0), which made the barrier its top
//              stall in the profile; here a turn is only as long as issuing 16 wgmmas and rescaling O.
//   prediction 1.00-1.05x rung 05 (FlashAttention-3's ablation has the ping-pong adding a few percent on top of the
//              intra-warpgroup overlap at D = 128); if rung 05 already keeps the tensor pipe near cuDNN's activity,
//              the turn-taking can only cost.
//
// attn_07_wgmma_persistent
//   computes, roles, bytes: as attn_05_wgmma_overlap (3 stages by default); launch grid (min(#SMs, tiles)), the
//              head count an extra argument; q_empty (count 8) in the sink area.
//   what changed since rung 05: the grid. Rung 05 launches one block per 128-row query tile (4096 at B=4 H=32 S=4096)
//              and, at one block per SM, every block starts cold: the Q copy and the first K/V tile cross from L2/HBM
//              with the tensor cores idle, and the epilogue's O stores run with nothing behind them. Here a block
//              moves straight on to its next tile: the producer refills the ring with the next tile's first K/V
//              tiles as soon as slots free up and loads its Q once the consumers hand the buffer back (after their
//              tile's last wgmma), while the consumers normalize and store O. cuDNN's Hopper forward, profiled
//              beside rung 04, runs exactly this way: 132 blocks of 384 threads.
//   prediction 1.03-1.10x rung 05 non-causal (one tile is ~32 key tiles of work, and a cold start costs about one
//              of them plus the epilogue); causal gains less, since the static round-robin order does not balance
//              the triangle's unequal tiles (a longest-first queue would).
//
// attn_08_wgmma_persistent_pingpong
//   computes, launch, roles, bytes: as attn_07_wgmma_persistent.
//   what changed since rung 07: rung 06's turns (named barriers 1 and 2 around each side's GEMM issue, the waits
//              and the softmax outside them) inside rung 07's walk; each tile's turns balance on their own (consumer
//              1 opens consumer 0's first turn, consumer 0 opens consumer 1's last), so the protocol simply repeats
//              per tile. Rungs 06 and 07 were the two fastest non-causal rungs, level with each other, each from a
//              different overlap (06: a second warpgroup's GEMMs under a softmax; 07: the next tile's loads and
//              this tile's stores under the other warpgroup's work); this is the two together, FlashAttention-3's
//              full forward schedule. Causal, the walk goes by groups of WALK_HEADS heads, heaviest query tiles
//              first (walk_tile's lpt): rung 07's head-major walk hands some blocks only long rows.
//   prediction 1.00-1.04x rung 07 non-causal (06's gain over 05, on top of 07's); causal 1.05-1.10x rung 07 (the
//              walk's model: the last block ends 3% after the average instead of 12.5%), about rung 06.
//
// Shared memory (every tile 1024-byte aligned, as the 128B swizzle requires). A "box" is one TMA copy {64 elements,
// 128 rows}: 128 rows of 128 bytes, written with the 128B swizzle (16-byte chunk c of row r lands at chunk c ^ (r % 8)).
//   Q       HEAD_DIM / 64 boxes: box b holds d = 64b .. 64b+63 of the 128 query rows. wgmma A operand, K-major
//           (d contiguous), exactly lab 4.3's A: consumer c starts at row 64c (+ 8192 bytes), the k-th 16-wide slice
//           of d at + 32 (k % 4) bytes in box k / 4; SBO = 1024 (8-row groups), LBO unused (16).
//   K       the same boxes for 128 keys: the B operand of S = Q K^T is B[d][key] = K[key][d], d contiguous per key,
//           i.e. K-major like lab 4.3's B_KMAJOR fallback (imm-trans-b = 0), descriptor as for Q.
//   V       the same boxes for 128 keys: the B operand of O += P V is B[key][d] = V[key][d], d contiguous: MN-major,
//           like lab 4.3's B (imm-trans-b = 1): LBO = distance between 64-wide blocks of d = one box (16384 bytes),
//           SBO = 1024 (8 keys), the k-th 16-key slice 16 rows = 2048 bytes further.
//   -DV_KMAJOR=1 (debug fallback): the host passes V^T (B Hkv, D, S_pad) and V is read K-major like K: boxes
//           {64 keys, HEAD_DIM rows of d}, the k-th 16-key slice at + 32 (k % 4) bytes in box k / 4, imm-trans-b = 0.
//           One GPU run with and without it tells an MN-major descriptor mistake from anything else.
//   barriers q_full (count 1 + Q's bytes), full[s] (count 1 + K's and V's bytes of stage s) and empty[s] (count 8:
//           lane 0 of each consumer warp, once its wgmmas reading stage s retired).
//
// P V with P from registers: the m64nNk16 accumulator layout gives thread t of warp w (in its warpgroup) rows
// 16w + t/4 and 16w + t/4 + 8, columns 8j + 2(t%4) + {0,1} in registers 4j..4j+3 (j = 0 .. N/8-1); wgmma's A
// fragment (m64k16 from registers) is per warp the A fragment of mma.m16n8k16: a0 = (row t/4, cols 2(t%4) +{0,1}),
// a1 = (row t/4 + 8, same cols), a2 = (row t/4, cols 8 + 2(t%4) + {0,1}), a3 = (row t/4 + 8, those cols). So the
// A registers of key slice kk (keys 16kk .. 16kk+15) are the bf16 pairs of S's accumulators 8kk .. 8kk+7, in order:
// P never goes through shared memory. Each row lives in the quad of 4 lanes that share t/4: its max and sum are
// two xor-shuffles.
//
// Phase parity: Q is one phase of q_full (parity 0). Tile j uses slot s = j % STAGES in round r = j / STAGES:
// consumers wait full[s] for parity r & 1; the producer refills slot s for round r >= 1 after empty[s]'s phase
// r - 1, parity (r - 1) & 1. Neither side can get two phases ahead of the other, so one parity bit is enough.
//
// Ragged S and masks: the tensor maps are 4-D (D, H, S, B) with boxes {64, 1, 128, 1}, so a box reaching past S is
// zero-filled by TMA inside its own head (never the next head's rows); scores of keys >= S are set to -inf in the last
// tile, rows >= S are computed on zeros and never stored. Causal: key tiles wholly above the diagonal are never loaded
// (the producer and the consumers stop at the same n_tiles), only the diagonal tile is masked (BLOCK_M = BLOCK_N, so it
// is the last).

#include "hopper.cuh"
#include "half_bits.cuh"

// Every value below comes from hopper.py as -DNAME=VALUE on every compile (hopper.defines: CONFIG, and the build's
// head dim, dtype, V layout and ring depth); this file holds no value of its own, so a compile without one stops here.
#ifndef HEAD_DIM               // 64 or 128: the head dim of the build
#error "HEAD_DIM is set by hopper.defines(head_dim) in hopper.py (the build's head dim: 64 or 128)"
#endif
#ifndef ATTN_FP16              // 1: fp16 Q, K, V, O; 0: bf16
#error "ATTN_FP16 is set by hopper.defines(dtype) in hopper.py (the build's dtype)"
#endif
#ifndef V_KMAJOR               // 1: V arrives transposed (B Hkv, D, S_pad) and is read K-major (debug fallback)
#error "V_KMAJOR is set by hopper.defines(v_kmajor) in hopper.py (ATTN_V_KMAJOR=1 in the environment)"
#endif
#ifndef MBAR_TIMEOUT           // 0: plain barrier waits; 1: the debug build's bounded ones (WAIT, below)
#error "MBAR_TIMEOUT is set by CONFIG in hopper.py (hopper.defines(timeout=...), ATTN_MBAR_TIMEOUT=1 for the launches)"
#endif

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");

typedef hop_u32 u32;
typedef hop_u64 u64;
typedef unsigned short elem_t;

#ifndef BLOCK_M                // query rows per block: two consumer warpgroups of wgmma's M = 64 rows each
#error "BLOCK_M is set by CONFIG in hopper.py"
#endif
#ifndef BLOCK_N                // keys per K/V tile
#error "BLOCK_N is set by CONFIG in hopper.py"
#endif
#ifndef STAGES                 // K/V ring depth; 3 fits one block at D = 128 too (hopper.py: smem_bytes)
#error "STAGES is set by hopper.py (DEFAULT_STAGES per rung; python -m phase4_optimization.lab06_attention --set STAGES_06=...)"
#endif
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES must be 2, 3 or 4");
#ifndef CONSUMERS              // consumer warpgroups (the producer is one more)
#error "CONSUMERS is set by CONFIG in hopper.py"
#endif
#define THREADS (128 * (CONSUMERS + 1))
#ifndef PRODUCER_REGS          // setmaxnreg: the producer warpgroup's registers per thread
#error "PRODUCER_REGS is set by CONFIG in hopper.py"
#endif
#ifndef CONSUMER_REGS          // setmaxnreg: each consumer warpgroup's registers per thread
#error "CONSUMER_REGS is set by CONFIG in hopper.py"
#endif
#ifndef BOX_BYTES              // one TMA box: 128 rows of 64 16-bit elements
#error "BOX_BYTES is set by CONFIG in hopper.py"
#endif
#define D_BOXES (HEAD_DIM / 64)
#define Q_BYTES (BLOCK_M * HEAD_DIM * 2)
#define KV_BYTES (BLOCK_N * HEAD_DIM * 2)          // one K (or V) tile
#define STAGE_BYTES (2 * KV_BYTES)
#define VT_BOX_BYTES (HEAD_DIM * 128)              // V_KMAJOR: one box {64 keys, HEAD_DIM rows of d}
#ifndef SINK_BYTES             // rung 05's per-warp sink words (12 warps x 4 B)
#error "SINK_BYTES is set by CONFIG in hopper.py"
#endif
#ifndef WALK_HEADS             // rung 08, causal: the walk's groups of heads (walk_tile)
#error "WALK_HEADS is set by CONFIG in hopper.py"
#endif
#define SMEM_BYTES (1024 + Q_BYTES + STAGES * STAGE_BYTES + 8 * (1 + 2 * STAGES) + SINK_BYTES)
static_assert(SMEM_BYTES <= 232448, "more shared memory than one sm_90 block may opt in to (227 KiB)");

#if ATTN_FP16
#define WGMMA_TYPES "f16.f16"
typedef F16 pack_t;
#else
#define WGMMA_TYPES "bf16.bf16"
typedef BF16 pack_t;
#endif
#if V_KMAJOR
#define TNSP_V "0"
#else
#define TNSP_V "1"
#endif

// {64, 128 rows} boxes tile 128 x 128 K and V tiles: 64-wide slices of d (MN-major V) and of keys (V^T)
static_assert(BLOCK_N == 128 && BLOCK_M == 128, "the descriptors below assume 128-row boxes");
static_assert(CONSUMERS == 2 && BOX_BYTES == 128 * 128, "two consumers of 64 rows; a box is 128 rows of 128 bytes");

// ---------------------------------------------------------------------------------------------------------------------
// Barrier waits: WAIT(bar, parity) is every mbarrier wait in this file. The default build (MBAR_TIMEOUT = 0) waits
// until the phase completes. The debug build (-DMBAR_TIMEOUT=1: ATTN_MBAR_TIMEOUT=1 in the environment for the
// launches, hopper.compile_report(timeout=True) for the SASS) gives a wait ~4 s; the first one that runs out records
// who waited on what in attn_hopper_hang (hopper.py: hang_report prints it) and from then on every wait of the grid
// gives up at once, so a kernel that would hang runs out with garbage in O instead, and the host can read the record.
// ---------------------------------------------------------------------------------------------------------------------
__device__ u32 attn_hopper_hang[5];   // the first barrier wait that timed out (hopper.py: hang_report)

#if MBAR_TIMEOUT
// the record's `what` bit: 1 for the producer warpgroup (it waits on empty barriers), 0 for a consumer (full ones)
#define WAIT(bar, parity) mbar_wait_bounded((bar), (parity), threadIdx.x < 128, attn_hopper_hang, 8000000000LL)
#else
#define WAIT(bar, parity) mbar_wait_parity((bar), (parity))
#endif

// ---------------------------------------------------------------------------------------------------------------------
// The two wgmma shapes: S (64 x 128) = Q (64 x 16, shared, K-major) K^T (16 x 128, shared, K-major), and
// O (64 x HEAD_DIM) += P (64 x 16, registers) V (16 x HEAD_DIM, shared, MN-major; K-major with V_KMAJOR)
// ---------------------------------------------------------------------------------------------------------------------
// (ACC32 / REGS64: the accumulator operand lists, in hopper.cuh)

// scale_d = 0: D = A B (the first d-slice), 1: D += A B
__device__ __forceinline__ void wgmma_qk(float (&d)[64], u64 desc_q, u64 desc_k, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %66, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPES " {" REGS64 "}, %64, %65, p, 1, 1, 0, 0;\n\t}"
        : ACC32(d, 0), ACC32(d, 32)
        : "l"(desc_q), "l"(desc_k), "r"(scale_d));
}

#if HEAD_DIM == 128
__device__ __forceinline__ void wgmma_pv(float (&d)[64], const u32 (&a)[4], u64 desc_v)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %69, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPES " {" REGS64 "}, {%64, %65, %66, %67}, %68, p, 1, 1, "
        TNSP_V ";\n\t}"
        : ACC32(d, 0), ACC32(d, 32)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_v), "r"(1));
}
#else
__device__ __forceinline__ void wgmma_pv(float (&d)[32], const u32 (&a)[4], u64 desc_v)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %37, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPES " {" REGS32 "}, {%32, %33, %34, %35}, %36, p, 1, 1, "
        TNSP_V ";\n\t}"
        : ACC32(d, 0)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_v), "r"(1));
}
#endif

// descriptors (the Python model in hopper.py computes the same ones). Slice kk of Q or K (16 of d) starts
// kslice_bytes(kk) into the tile, slice kk of V (16 keys) vslice_bytes(kk); issue_qk and issue_pv build a tile's first
// descriptor once and move it by these offsets (desc_at), which is the same descriptor in fewer instructions.
__device__ __forceinline__ u32 kslice_bytes(int kk) { return (kk / 4) * BOX_BYTES + 32 * (kk % 4); }
__device__ __forceinline__ u32 vslice_bytes(int kk)
{
#if V_KMAJOR
    return (kk / 4) * VT_BOX_BYTES + 32 * (kk % 4);
#else
    return 2048 * kk;
#endif
}
__device__ __forceinline__ u64 desc_q(u32 sQ, int consumer, int kk)
{
    return wgmma_desc_128b(sQ + consumer * (64 * 128) + kslice_bytes(kk), 16, 1024);
}
__device__ __forceinline__ u64 desc_k(u32 sK, int kk) { return wgmma_desc_128b(sK + kslice_bytes(kk), 16, 1024); }
__device__ __forceinline__ u64 desc_v(u32 sV, int kk)
{
    return wgmma_desc_128b(sV + vslice_bytes(kk), V_KMAJOR ? 16 : BOX_BYTES, 1024);
}

// ---------------------------------------------------------------------------------------------------------------------
// One tile's softmax step on a consumer's 64 x 128 scores (fp32 accumulators, the m64nNk16 layout), in three pieces:
// softmax_scores (mask, online max and sum, P = exp2 in place of S, alpha = the rescale of O) touches neither O nor P's
// packed registers, so rung 05 runs it while P_{j-1} V_{j-1} still owns them; pack_p (P into the A fragments of the
// P V wgmmas) waits for that GEMM, and rescale_o (O *= alpha) runs before the next P V is issued. Rungs 03 and 04 run
// the three back to back.
// ---------------------------------------------------------------------------------------------------------------------
struct RowTile {
    int row0;            // first query row of this consumer warpgroup
    int row_a, row_b;    // this thread's two rows
    int quad_col;        // 2 (lane % 4): this thread's first column in every 8-wide block
    int S, causal;
    float scale_log2;    // sm_scale log2(e)
};

__device__ __forceinline__ void softmax_scores(float (&sc)[BLOCK_N / 2], float (&m_run)[2], float (&l_run)[2],
                                               float (&alpha)[2], const RowTile& rt, int n0)
{
    // ---- masks: keys past S (ragged last tile), keys past the row (causal: the diagonal tile) ----
    if (n0 + BLOCK_N > rt.S || (rt.causal && n0 + BLOCK_N - 1 > rt.row0)) {
#pragma unroll
        for (int jj = 0; jj < BLOCK_N / 8; ++jj) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = n0 + 8 * jj + rt.quad_col + (e & 1);
                const int row = e < 2 ? rt.row_a : rt.row_b;
                if (col >= rt.S || (rt.causal && col > row)) sc[4 * jj + e] = neg_inf();
            }
        }
    }

    // ---- online softmax: row max over the quad, rescale factor, exponentiate (exp2, scale folded in) ----
    float mx[2] = {m_run[0], m_run[1]};
#pragma unroll
    for (int jj = 0; jj < BLOCK_N / 8; ++jj) {
        mx[0] = fmaxf(mx[0], fmaxf(sc[4 * jj], sc[4 * jj + 1]));
        mx[1] = fmaxf(mx[1], fmaxf(sc[4 * jj + 2], sc[4 * jj + 3]));
    }
    float msc[2], rs[2] = {0.f, 0.f};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        // a row with every key so far masked keeps max -inf: shift by 0 so exp2(-inf - (-inf)) never makes a NaN
        msc[h] = (mx[h] == neg_inf() ? 0.f : mx[h]) * rt.scale_log2;
        alpha[h] = fast_exp2(m_run[h] * rt.scale_log2 - msc[h]);     // exp2(-inf) = 0 on the first tile
        m_run[h] = mx[h];
    }
#pragma unroll
    for (int jj = 0; jj < BLOCK_N / 8; ++jj) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const float p = fast_exp2(fmaf(sc[4 * jj + e], rt.scale_log2, -msc[e >> 1]));
            sc[4 * jj + e] = p;
            rs[e >> 1] += p;
        }
    }
    l_run[0] = l_run[0] * alpha[0] + rs[0];
    l_run[1] = l_run[1] * alpha[1] + rs[1];
}

__device__ __forceinline__ void pack_p(const float (&sc)[BLOCK_N / 2], u32 (&pa)[BLOCK_N / 16][4])
{
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {     // A fragment of key slice kk = S accumulators 8kk .. 8kk+7
        pa[kk][0] = pack2(pack_t(), sc[8 * kk + 0], sc[8 * kk + 1]);
        pa[kk][1] = pack2(pack_t(), sc[8 * kk + 2], sc[8 * kk + 3]);
        pa[kk][2] = pack2(pack_t(), sc[8 * kk + 4], sc[8 * kk + 5]);
        pa[kk][3] = pack2(pack_t(), sc[8 * kk + 6], sc[8 * kk + 7]);
    }
}

__device__ __forceinline__ void rescale_o(float (&o)[HEAD_DIM / 2], const float (&alpha)[2])
{
#pragma unroll
    for (int jj = 0; jj < HEAD_DIM / 8; ++jj) {
        o[4 * jj + 0] *= alpha[0];
        o[4 * jj + 1] *= alpha[0];
        o[4 * jj + 2] *= alpha[1];
        o[4 * jj + 3] *= alpha[1];
    }
}

// the three back to back (rung 03)
__device__ __forceinline__ void softmax_step(float (&sc)[BLOCK_N / 2], u32 (&pa)[BLOCK_N / 16][4],
                                             float (&o)[HEAD_DIM / 2], float (&m_run)[2], float (&l_run)[2],
                                             const RowTile& rt, int n0)
{
    float alpha[2];
    softmax_scores(sc, m_run, l_run, alpha, rt, n0);
    pack_p(sc, pa);
    rescale_o(o, alpha);
}

__device__ __forceinline__ void st_shared_f32(u32 addr, float x)
{
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(x) : "memory");
}

// Named barriers 1 and 2 (0 is __syncthreads'), 256 threads: both consumer warpgroups take part in each
__device__ __forceinline__ void named_bar_sync(int id) { asm volatile("bar.sync %0, 256;" ::"r"(id) : "memory"); }
__device__ __forceinline__ void named_bar_arrive(int id) { asm volatile("bar.arrive %0, 256;" ::"r"(id) : "memory"); }

// ---------------------------------------------------------------------------------------------------------------------
// Pieces every rung shares: where things lie in shared memory, the (query tile, head) a block works on, the setup, the
// producer, the GEMM issues, the release of a ring slot and the epilogue. The ring position g counts K/V tiles from the
// kernel's start (a Q tile's n_tiles in rungs 03-06; every key tile the block has walked so far in rung 07): slot
// g % STAGES, round g / STAGES.
// ---------------------------------------------------------------------------------------------------------------------
struct Smem {
    u32 sQ;      // Q: HEAD_DIM / 64 boxes
    u32 sKV;     // the K/V ring: stage s holds K at sKV + s STAGE_BYTES, V KV_BYTES further
    u32 bars;    // q_full, full[0 .. STAGES-1], empty[0 .. STAGES-1] (8 bytes each), then the sink area
};

__device__ __forceinline__ Smem carve_smem()
{
    extern __shared__ unsigned char smem_raw[];
    // the 128B swizzle repeats every 1024 bytes and both TMA and wgmma compute it from address bits
    const u32 base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    return {base, base + Q_BYTES, base + Q_BYTES + STAGES * STAGE_BYTES};
}

__device__ __forceinline__ u32 full_bar(u32 bars, int s) { return bars + 8 * (1 + s); }            // stage s loaded
__device__ __forceinline__ u32 empty_bar(u32 bars, int s) { return bars + 8 * (1 + STAGES + s); }  // stage s read
__device__ __forceinline__ u32 q_empty_bar(u32 bars) { return bars + 8 * (1 + 2 * STAGES) + 48; }  // rung 07's Q free
__device__ __forceinline__ u32 stage_k(u32 sKV, int s) { return sKV + s * STAGE_BYTES; }
__device__ __forceinline__ u32 stage_v(u32 sKV, int s) { return sKV + s * STAGE_BYTES + KV_BYTES; }
// rung 05's sink word of this warp, in the sink area (q_empty sits past the 12 warps' words)
__device__ __forceinline__ u32 sink_word(u32 bars) { return bars + 8 * (1 + 2 * STAGES) + 4 * (threadIdx.x / 32); }

// The kernels' arguments after the three tensor maps (one signature for every rung; rung 07 adds the count B Hq)
struct Args {
    elem_t* O;             // (B, Hq, S, D) through the strides o_sb, o_sh, o_ss (elements)
    float* LSE;            // (B, Hq, S) contiguous
    int S, Hq, group;      // group = Hq / Hkv (grouped-query heads)
    float scale_log2;      // sm_scale log2(e)
    int causal;
    long long o_sb, o_sh, o_ss;
};

// One item of work: query rows m0 .. m0 + BLOCK_M - 1 of head `head` of batch `batch`
struct Tile {
    int m0, bh, batch, head, kv_head;   // bh = batch Hq + head; kv_head = head / group
    int n_tiles;                        // the key tiles it attends to (causal: up to the diagonal one, which is last)
};

__device__ __forceinline__ Tile make_tile(int m_block, int bh, const Args& a)
{
    Tile t;
    t.m0 = m_block * BLOCK_M;
    t.bh = bh;
    t.batch = bh / a.Hq;
    t.head = bh % a.Hq;
    t.kv_head = t.head / a.group;
    t.n_tiles = ((a.causal ? min(a.S, t.m0 + BLOCK_M) : a.S) + BLOCK_N - 1) / BLOCK_N;
    return t;
}

// Thread 0 initializes the barriers (with_q_empty: rung 07's second Q barrier too), then the block's last block-wide
// barrier: after the role split each side syncs only through mbarriers
__device__ __forceinline__ void init_barriers(u32 bars, bool with_q_empty)
{
    if (threadIdx.x == 0) {
        mbar_init(bars, 1);                                               // q_full: the producer + Q's bytes
        if (with_q_empty) mbar_init(q_empty_bar(bars), CONSUMERS * 4);   // lane 0 of each consumer warp
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full_bar(bars, s), 1);                              // the producer + K's and V's bytes
            mbar_init(empty_bar(bars, s), CONSUMERS * 4);                 // lane 0 of each consumer warp
        }
        mbar_init_fence();
    }
    __syncthreads();
}

// Producer: Q of tile t, one phase of q_full
__device__ __forceinline__ void load_q(const Smem& sm, const Tile& t, const TmaMap& tma_q)
{
    mbar_arrive_expect_tx(sm.bars, Q_BYTES);
    for (int b = 0; b < D_BOXES; ++b)
        tma_load_4d(sm.sQ + b * BOX_BYTES, &tma_q, 64 * b, t.head, t.m0, t.batch, sm.bars);
}

// Producer: K and V of key tile j of tile t into ring position g, once the consumers released the slot's last round
__device__ __forceinline__ void load_kv_tile(const Smem& sm, int g, int j, const Tile& t, const TmaMap& tma_k,
                                             const TmaMap& tma_v)
{
    const int s = g % STAGES, r = g / STAGES;
    if (r > 0) WAIT(empty_bar(sm.bars, s), (r - 1) & 1);
    const u32 full = full_bar(sm.bars, s), sK = stage_k(sm.sKV, s), sV = stage_v(sm.sKV, s);
    mbar_arrive_expect_tx(full, STAGE_BYTES);
    for (int b = 0; b < D_BOXES; ++b)
        tma_load_4d(sK + b * BOX_BYTES, &tma_k, 64 * b, t.kv_head, j * BLOCK_N, t.batch, full);
#if V_KMAJOR
    for (int b = 0; b < BLOCK_N / 64; ++b)    // V^T: boxes of 64 keys x HEAD_DIM rows of d
        tma_load_4d(sV + b * VT_BOX_BYTES, &tma_v, j * BLOCK_N + 64 * b, 0, t.kv_head, t.batch, full);
#else
    for (int b = 0; b < D_BOXES; ++b)
        tma_load_4d(sV + b * BOX_BYTES, &tma_v, 64 * b, t.kv_head, j * BLOCK_N, t.batch, full);
#endif
}

// Producer of rungs 03-06 (one thread): Q, then the K/V tiles one by one as the ring's slots free up
__device__ __forceinline__ void producer(const Smem& sm, const Tile& t, const TmaMap& tma_q, const TmaMap& tma_k,
                                         const TmaMap& tma_v)
{
    load_q(sm, t, tma_q);
    for (int j = 0; j < t.n_tiles; ++j) load_kv_tile(sm, j, j, t, tma_k, tma_v);
}

// A consumer thread's rows: warpgroup 1 + cw holds rows 64 cw .. 64 cw + 63 of the Q tile, and there (m64nNk16
// layout) thread t of warp w rows 16w + t/4 and 16w + t/4 + 8, columns 2 (t % 4) + {0, 1} of every 8-wide block
__device__ __forceinline__ RowTile row_tile(int m0, int cw, const Args& a)
{
    const int warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int row_a = m0 + cw * 64 + warp * 16 + lane / 4;
    return {m0 + cw * 64, row_a, row_a + 8, 2 * (lane % 4), a.S, a.causal, a.scale_log2};
}

// A Q tile's start: O = 0 and S = 0 (the wgmmas' "+f" operands read them), running max -inf, running sum 0
__device__ __forceinline__ void start_tile(float (&o)[HEAD_DIM / 2], float (&sc)[BLOCK_N / 2], float (&m_run)[2],
                                           float (&l_run)[2])
{
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) o[i] = 0.f;
#pragma unroll
    for (int i = 0; i < BLOCK_N / 2; ++i) sc[i] = 0.f;
    m_run[0] = m_run[1] = neg_inf();     // of the raw scores, rows a and b
    l_run[0] = l_run[1] = 0.f;           // of exp over this thread's columns (the quad adds them up at the end)
}

// S = Q K^T for the warpgroup's 64 rows: HEAD_DIM / 16 wgmmas along the head dim (the first overwrites S)
__device__ __forceinline__ void issue_qk(float (&sc)[BLOCK_N / 2], u32 sQ, int cw, u32 sK)
{
    const u64 dq = desc_q(sQ, cw, 0), dk = desc_k(sK, 0);
#pragma unroll
    for (int kk = 0; kk < HEAD_DIM / 16; ++kk)
        wgmma_qk(sc, desc_at(dq, kslice_bytes(kk)), desc_at(dk, kslice_bytes(kk)), kk != 0);
}

// O += P V: BLOCK_N / 16 wgmmas along the tile's keys, P's A fragments from registers
__device__ __forceinline__ void issue_pv(float (&o)[HEAD_DIM / 2], const u32 (&pa)[BLOCK_N / 16][4], u32 sV)
{
    const u64 dv = desc_v(sV, 0);
#pragma unroll
    for (int kk = 0; kk < BLOCK_N / 16; ++kk) wgmma_pv(o, pa[kk], desc_at(dv, vslice_bytes(kk)));
}

// This warp is done with ring slot s (its wgmmas that read it have retired): lane 0 arrives on empty[s]
__device__ __forceinline__ void release_slot(u32 bars, int s)
{
    __syncwarp();
    if (threadIdx.x % 32 == 0) mbar_arrive(empty_bar(bars, s));
}

// Consumer epilogue: the quad's partial sums, O / l into O (through its strides), LSE = m sm_scale + ln l.
__device__ __forceinline__ void store_tile(const float (&o)[HEAD_DIM / 2], float (&l_run)[2], const float (&m_run)[2],
                                           const RowTile& rt, const Tile& t, const Args& a)
{
    const float ln2 = 0.6931471805599453f;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
        l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
    }
    const float inv[2] = {1.f / l_run[0], 1.f / l_run[1]};
    const int rows[2] = {rt.row_a, rt.row_b};
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        if (rows[h] >= a.S) continue;
        elem_t* out = a.O + t.batch * a.o_sb + t.head * a.o_sh + rows[h] * a.o_ss + rt.quad_col;
#pragma unroll
        for (int jj = 0; jj < HEAD_DIM / 8; ++jj)
            *reinterpret_cast<u32*>(out + 8 * jj) =
                pack2(pack_t(), o[4 * jj + 2 * h] * inv[h], o[4 * jj + 2 * h + 1] * inv[h]);
        if (threadIdx.x % 4 == 0)
            a.LSE[(size_t)t.bh * a.S + rows[h]] = (m_run[h] * a.scale_log2 + log2f(l_run[h])) * ln2;
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// The consumers, one per rung: each is the whole of what consumer warpgroup 1 + cw does with its 64 query rows (cw = 0:
// rows 0-63 of the Q tile, 1: rows 64-127), from its first barrier wait to its last store.
// ---------------------------------------------------------------------------------------------------------------------
// Rung 03: each key tile in turn - wait for its K and V, S_j = Q K_j^T, wait, softmax, O += P_j V_j, wait, release the
// slot. wgmma reads Q, K and V straight from the swizzled shared memory (descriptors) and P from registers (S's
// accumulators packed to 16 bits). The ring: WAIT on full[s] is for K_j and V_j to land, release_slot hands slot s back
// to the producer for tile j + STAGES; the producer stays up to STAGES tiles ahead. The tensor cores idle during every
// softmax, unless the other consumer warpgroup's GEMMs happen to fill them.
__device__ __forceinline__ void consumer_03(const Smem& sm, const Tile& t, const Args& a, int cw)
{
    const RowTile rt = row_tile(t.m0, cw, a);
    float o[HEAD_DIM / 2], sc[BLOCK_N / 2], m_run[2], l_run[2];
    u32 pa[BLOCK_N / 16][4];                             // P_j as the A fragments of the P V wgmmas
    start_tile(o, sc, m_run, l_run);

    WAIT(sm.bars, 0);                                    // q_full: Q has landed
    for (int j = 0; j < t.n_tiles; ++j) {
        const int s = j % STAGES;                        // key tile j's ring slot, in round j / STAGES
        WAIT(full_bar(sm.bars, s), (j / STAGES) & 1);
        __syncwarp();   // the lanes left the polling loop one by one; wgmma.* below are .sync.aligned

        // ---- S_j = Q K_j^T: 64 rows x 128 keys ----
        wgmma_fence();
        issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, s));
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(sc);

        // ---- softmax: mask, online max and sum, P_j = exp2(S_j - m_j) packed to 16 bits, O *= exp2(m_{j-1} - m_j)
        softmax_step(sc, pa, o, m_run, l_run, rt, j * BLOCK_N);   // softmax_scores, pack_p, rescale_o

        // ---- O += P_j V_j ----
        wgmma_fence();   // o and pa were written by the threads
        issue_pv(o, pa, stage_v(sm.sKV, s));
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(o);
        release_slot(sm.bars, s);                        // K_j and V_j are no longer read
    }
    store_tile(o, l_run, m_run, rt, t, a);
}

// Rung 04 = rung 03 software-pipelined by one GEMM, the two consumers taking turns at the tensor cores ("ping-pong").
// Step j issues O += P_{j-1} V_{j-1} and S_j = Q K_j^T as one commit group, waits, releases stage j-1 and runs
// softmax_j (step 0: S_0 alone; a last step: P V alone). The turns: named barrier `mine` gates this warpgroup's GEMM
// phase and it opens `other` once its wgmmas are issued (bar.sync on its own, bar.arrive on the other's, 256 threads
// each), so one's softmax runs while the other's GEMMs keep the tensor cores busy. Consumer 0 goes first (consumer 1
// arrives once up front); each side has n_tiles + 1 phases and consumer 1 skips its last arrive, so every barrier
// generation is complete when the block ends. The wgmmas sit on no branch (a conditional wgmma makes ptxas serialize
// them all, C7520).
__device__ __forceinline__ void consumer_04(const Smem& sm, const Tile& t, const Args& a, int cw)
{
    const int mine = 1 + cw, other = 2 - cw;             // named barriers 1 and 2
    const RowTile rt = row_tile(t.m0, cw, a);
    float o[HEAD_DIM / 2], sc[BLOCK_N / 2], m_run[2], l_run[2], alpha[2];
    u32 pa[BLOCK_N / 16][4];
    start_tile(o, sc, m_run, l_run);

    WAIT(sm.bars, 0);                                    // q_full
    if (cw == 1) named_bar_arrive(1);                    // consumer 0 takes the first turn
    WAIT(full_bar(sm.bars, 0), 0);                       // step 0: S_0 = Q K_0^T alone
    __syncwarp();
    named_bar_sync(mine);
    wgmma_fence();
    issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, 0));
    wgmma_commit();
    named_bar_arrive(other);
    wgmma_wait<0>();
    fence_regs(sc);
    softmax_scores(sc, m_run, l_run, alpha, rt, 0);
    pack_p(sc, pa);
    rescale_o(o, alpha);
    for (int j = 1; j < t.n_tiles; ++j) {
        const int s = j % STAGES, sp = (j - 1) % STAGES;
        WAIT(full_bar(sm.bars, s), (j / STAGES) & 1);
        __syncwarp();
        named_bar_sync(mine);                            // my turn: both GEMMs, one commit group
        wgmma_fence();   // o and pa were written by the threads
        issue_pv(o, pa, stage_v(sm.sKV, sp));            // O += P_{j-1} V_{j-1}
        issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, s));     // S_j = Q K_j^T
        wgmma_commit();
        named_bar_arrive(other);                         // the other side's turn
        wgmma_wait<0>();
        fence_regs(sc);
        fence_regs(o);
        release_slot(sm.bars, sp);                       // stage j-1 read by the P V that just retired
        softmax_scores(sc, m_run, l_run, alpha, rt, j * BLOCK_N);   // while the other side's GEMMs run
        pack_p(sc, pa);
        rescale_o(o, alpha);
    }
    const int sl = (t.n_tiles - 1) % STAGES;             // last step: O += P_{n-1} V_{n-1} alone
    named_bar_sync(mine);
    wgmma_fence();
    issue_pv(o, pa, stage_v(sm.sKV, sl));
    wgmma_commit();
    if (cw == 0) named_bar_arrive(2);                    // opens consumer 1's last turn (consumer 0 has none left)
    wgmma_wait<0>();
    fence_regs(o);
    release_slot(sm.bars, sl);
    store_tile(o, l_run, m_run, rt, t, a);
}

// Rung 05 = rung 03 with FlashAttention-3's intra-warpgroup overlap. Step j issues S_j = Q K_j^T (one commit group),
// rescales O by alpha_{j-1} while that runs, issues O += P_{j-1} V_{j-1} (a second group), waits for the first group
// only (wgmma.wait_group 1: groups retire in order) and runs softmax_scores on S_j while the tensor cores still work on
// P_{j-1} V_{j-1}; then it waits for that GEMM, packs P_j and releases stage j-1. Invariant: before step j, O holds
// sum_{i < j-1} P_i V_i scaled to the row max m_{j-2}; O *= alpha_{j-1} = exp2(m_{j-2} - m_{j-1}) moves it to m_{j-1},
// the max P_{j-1} was computed against. Registers a GEMM in flight owns (O, P's A fragments) are not touched between
// its issue and its wait. Step 0 is S_0 alone, the last step P V alone (peeled, like rung 04's). No named barriers.
// The sink store: ptxas schedules a wgmma wait like any instruction without operands, and it moved wait_group 0 up to
// just after the row max, ahead of every exp2 - no overlap left (seen in the SASS). A shared-memory store of a value
// that depends on the whole softmax (the row sums) must stay before the wait (wgmma reads shared memory), so the exp2s
// stay between the two waits. One store per warp (lane 0) to its own word: no thread reads it.
__device__ __forceinline__ void consumer_05(const Smem& sm, const Tile& t, const Args& a, int cw)
{
    const int lane = threadIdx.x % 32;
    const RowTile rt = row_tile(t.m0, cw, a);
    const u32 sink = sink_word(sm.bars);
    float o[HEAD_DIM / 2], sc[BLOCK_N / 2], m_run[2], l_run[2], alpha[2];
    u32 pa[BLOCK_N / 16][4];
    start_tile(o, sc, m_run, l_run);

    WAIT(sm.bars, 0);                                    // q_full
    WAIT(full_bar(sm.bars, 0), 0);                       // step 0: S_0 = Q K_0^T alone
    __syncwarp();
    wgmma_fence();
    issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, 0));
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(sc);
    softmax_scores(sc, m_run, l_run, alpha, rt, 0);
    pack_p(sc, pa);
    for (int j = 1; j < t.n_tiles; ++j) {
        const int s = j % STAGES, sp = (j - 1) % STAGES;
        WAIT(full_bar(sm.bars, s), (j / STAGES) & 1);
        __syncwarp();
        wgmma_fence();   // pa was written by the threads
        issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, s));     // group 1: S_j = Q K_j^T
        wgmma_commit();
        rescale_o(o, alpha);                             // O to the max P_{j-1} was computed against
        wgmma_fence();   // o was written by the threads
        issue_pv(o, pa, stage_v(sm.sKV, sp));            // group 2: O += P_{j-1} V_{j-1}
        wgmma_commit();
        wgmma_wait<1>();                                 // S_j is in; P_{j-1} V_{j-1} may still run
        fence_regs(sc);
        softmax_scores(sc, m_run, l_run, alpha, rt, j * BLOCK_N);
        if (lane == 0) st_shared_f32(sink, l_run[0] + l_run[1]);   // keeps the softmax above the next wait
        wgmma_wait<0>();                                 // P_{j-1} V_{j-1} retired: O and pa are free
        fence_regs(o);
        pack_p(sc, pa);
        release_slot(sm.bars, sp);
    }
    const int sl = (t.n_tiles - 1) % STAGES;             // last step: O += P_{n-1} V_{n-1} alone
    rescale_o(o, alpha);
    wgmma_fence();
    issue_pv(o, pa, stage_v(sm.sKV, sl));
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(o);
    release_slot(sm.bars, sl);
    store_tile(o, l_run, m_run, rt, t, a);
}

// Rung 06 = rung 05 + rung 04's turn-taking, at the GEMM issue only (FlashAttention-3 uses both overlaps): a step's
// GEMMs are issued inside this warpgroup's turn (the same named-barrier protocol as rung 04: consumer 1 lets consumer 0
// go first, n_tiles + 1 turns a side, consumer 1 skips its last arrive); the waits and the softmax are outside it, so
// one warpgroup's softmax runs under the other's GEMMs as well as under its own P V.
__device__ __forceinline__ void consumer_06(const Smem& sm, const Tile& t, const Args& a, int cw)
{
    const int lane = threadIdx.x % 32;
    const int mine = 1 + cw, other = 2 - cw;             // named barriers 1 and 2
    const RowTile rt = row_tile(t.m0, cw, a);
    const u32 sink = sink_word(sm.bars);
    float o[HEAD_DIM / 2], sc[BLOCK_N / 2], m_run[2], l_run[2], alpha[2];
    u32 pa[BLOCK_N / 16][4];
    start_tile(o, sc, m_run, l_run);

    WAIT(sm.bars, 0);                                    // q_full
    if (cw == 1) named_bar_arrive(1);                    // consumer 0 takes the first turn
    WAIT(full_bar(sm.bars, 0), 0);                       // step 0: S_0 = Q K_0^T alone
    __syncwarp();
    named_bar_sync(mine);
    wgmma_fence();
    issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, 0));
    wgmma_commit();
    named_bar_arrive(other);
    wgmma_wait<0>();
    fence_regs(sc);
    softmax_scores(sc, m_run, l_run, alpha, rt, 0);
    pack_p(sc, pa);
    for (int j = 1; j < t.n_tiles; ++j) {
        const int s = j % STAGES, sp = (j - 1) % STAGES;
        WAIT(full_bar(sm.bars, s), (j / STAGES) & 1);
        __syncwarp();
        named_bar_sync(mine);                            // my turn: issue both groups
        wgmma_fence();   // pa was written by the threads
        issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, s));     // group 1: S_j = Q K_j^T
        wgmma_commit();
        rescale_o(o, alpha);
        wgmma_fence();   // o was written by the threads
        issue_pv(o, pa, stage_v(sm.sKV, sp));            // group 2: O += P_{j-1} V_{j-1}
        wgmma_commit();
        named_bar_arrive(other);                         // the other side's turn; the waits are outside mine
        wgmma_wait<1>();                                 // S_j is in; P_{j-1} V_{j-1} may still run
        fence_regs(sc);
        softmax_scores(sc, m_run, l_run, alpha, rt, j * BLOCK_N);
        if (lane == 0) st_shared_f32(sink, l_run[0] + l_run[1]);   // rung 05's sink store
        wgmma_wait<0>();
        fence_regs(o);
        pack_p(sc, pa);
        release_slot(sm.bars, sp);
    }
    const int sl = (t.n_tiles - 1) % STAGES;             // last step: O += P_{n-1} V_{n-1} alone
    named_bar_sync(mine);
    rescale_o(o, alpha);
    wgmma_fence();
    issue_pv(o, pa, stage_v(sm.sKV, sl));
    wgmma_commit();
    if (cw == 0) named_bar_arrive(2);                    // consumer 1's last turn
    wgmma_wait<0>();
    fence_regs(o);
    release_slot(sm.bars, sl);
    store_tile(o, l_run, m_run, rt, t, a);
}

// ---------------------------------------------------------------------------------------------------------------------
// Rung 07: rung 05 made persistent. gridDim.x blocks (one per SM) walk the (query tile, head) work items
// w = blockIdx.x, blockIdx.x + gridDim.x, ... in head-major order (a head's query tiles next to each other, so the
// blocks running at once share a few heads' K and V in L2; causal: a head's longest rows first). The K/V ring runs on
// across tiles (ring position g counts every key tile the block has loaded), Q gets a second barrier: q_empty (one
// arrive per consumer warp, once its warpgroup's last wgmma of the tile has retired). The producer puts the next
// tile's first K/V tiles in the ring as slots free up, and its Q as soon as q_empty completes, while the consumers
// normalize and store this tile's O.
// ---------------------------------------------------------------------------------------------------------------------
// lpt (rung 08), causal: the walk in groups of WALK_HEADS heads, and inside a group by query tile, heaviest first,
// the group's heads side by side. Head-major, block x's tiles are those with m = x mod (gridDim.x mod n_m) and so on:
// at 132 blocks and 32 tiles a head, some blocks get only the longest rows of every fourth tile and the others the
// shortest - a model of the static walk has the last block ending 12.5% after the average, against 3% (the
// non-causal walk's own rounding) for the grouped one; the group of a few heads keeps the blocks running at once on
// a few heads' K and V in L2, as head-major did (tests/test_phase4_lab06_attention_hopper_walk.py has the model).
__device__ __forceinline__ Tile walk_tile(int w, int n_m, int n_work, const Args& a, bool lpt)
{
    if (lpt && a.causal) {
        const int per = WALK_HEADS * n_m, grp = w / per, r = w - grp * per;
        const int gh = min(WALK_HEADS, n_work / n_m - WALK_HEADS * grp);     // heads in this group (the last: fewer)
        return make_tile(n_m - 1 - r / gh, WALK_HEADS * grp + r % gh, a);
    }
    const int m = w % n_m;
    return make_tile(a.causal ? n_m - 1 - m : m, w / n_m, a);
}

// Rung 07's producer (one thread): per tile of the walk, its first K/V tiles as soon as ring slots free up (the
// previous tile's last steps release them), then Q once both consumers are done with the previous tile (q_empty), then
// the rest. At most STAGES K/V tiles may go ahead of Q: a further one would wait on a slot that only this tile's
// consumers, still waiting for Q, can free (FlashAttention-3's order; a model of every interleaving found no deadlock
// with STAGES and one with STAGES + 1)
__device__ __forceinline__ void producer_07(const Smem& sm, const Args& a, int n_m, int n_work, const TmaMap& tma_q,
                                            const TmaMap& tma_k, const TmaMap& tma_v, bool lpt)
{
    int g = 0;
    for (int w = blockIdx.x, it = 0; w < n_work; w += gridDim.x, ++it) {
        const Tile t = walk_tile(w, n_m, n_work, a, lpt);
        const int ahead = min(STAGES, t.n_tiles);
        for (int j = 0; j < ahead; ++j) load_kv_tile(sm, g + j, j, t, tma_k, tma_v);
        if (it > 0) WAIT(q_empty_bar(sm.bars), (it - 1) & 1);
        load_q(sm, t, tma_q);
        for (int j = ahead; j < t.n_tiles; ++j) load_kv_tile(sm, g + j, j, t, tma_k, tma_v);
        g += t.n_tiles;
    }
}

// Rung 07's consumer = rung 05's key loop once per tile of the walk, its ring positions starting at g; Q's phase is
// the tile's count `it`, and Q is handed back (q_empty) before the epilogue, so the next Q lands under the stores.
__device__ __forceinline__ void consumer_07(const Smem& sm, const Args& a, int n_m, int n_work, int cw, bool lpt)
{
    const int lane = threadIdx.x % 32;
    const u32 sink = sink_word(sm.bars);
    float o[HEAD_DIM / 2], sc[BLOCK_N / 2], m_run[2], l_run[2], alpha[2];
    u32 pa[BLOCK_N / 16][4];
    int g = 0;                                           // ring position of the tile's first key tile
    for (int w = blockIdx.x, it = 0; w < n_work; w += gridDim.x, ++it) {
        const Tile t = walk_tile(w, n_m, n_work, a, lpt);   // the producer's walk (its LPT flag too)
        const RowTile rt = row_tile(t.m0, cw, a);
        start_tile(o, sc, m_run, l_run);
        WAIT(sm.bars, it & 1);                           // q_full: this tile's Q
        WAIT(full_bar(sm.bars, g % STAGES), (g / STAGES) & 1);   // step 0: S_0 = Q K_0^T alone
        __syncwarp();
        wgmma_fence();
        issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, g % STAGES));
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(sc);
        softmax_scores(sc, m_run, l_run, alpha, rt, 0);
        pack_p(sc, pa);
        for (int j = 1; j < t.n_tiles; ++j) {
            const int s = (g + j) % STAGES, sp = (g + j - 1) % STAGES;
            WAIT(full_bar(sm.bars, s), ((g + j) / STAGES) & 1);
            __syncwarp();
            wgmma_fence();
            issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, s)); // group 1: S_j = Q K_j^T
            wgmma_commit();
            rescale_o(o, alpha);
            wgmma_fence();
            issue_pv(o, pa, stage_v(sm.sKV, sp));        // group 2: O += P_{j-1} V_{j-1}
            wgmma_commit();
            wgmma_wait<1>();
            fence_regs(sc);
            softmax_scores(sc, m_run, l_run, alpha, rt, j * BLOCK_N);
            if (lane == 0) st_shared_f32(sink, l_run[0] + l_run[1]);   // rung 05's sink store
            wgmma_wait<0>();
            fence_regs(o);
            pack_p(sc, pa);
            release_slot(sm.bars, sp);
        }
        const int sl = (g + t.n_tiles - 1) % STAGES;     // last step: P V alone
        rescale_o(o, alpha);
        wgmma_fence();
        issue_pv(o, pa, stage_v(sm.sKV, sl));
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(o);
        release_slot(sm.bars, sl);
        g += t.n_tiles;
        __syncwarp();   // this warpgroup's last wgmma of the tile has retired, every Q K^T before it: Q is free
        if (lane == 0) mbar_arrive(q_empty_bar(sm.bars));
        store_tile(o, l_run, m_run, rt, t, a);
    }
}

// Rung 08 = rung 07 + rung 06's turns: the same walk, ring and Q hand-back, and around each GEMM issue the
// named-barrier protocol of rung 06, whole per tile (consumer 0 opens consumer 1's last turn of a tile; consumer 1
// opens consumer 0's first turn of the next tile as soon as it has issued its own last GEMM of this one, so that its
// epilogue runs under consumer 0's first Q K^T instead of ahead of it), so that one warpgroup's softmax runs under
// the other's GEMMs within every tile, and one's epilogue under the other's GEMMs across tiles.
__device__ __forceinline__ void consumer_08(const Smem& sm, const Args& a, int n_m, int n_work, int cw, bool lpt)
{
    const int lane = threadIdx.x % 32;
    const int mine = 1 + cw, other = 2 - cw;             // named barriers 1 and 2
    const u32 sink = sink_word(sm.bars);
    float o[HEAD_DIM / 2], sc[BLOCK_N / 2], m_run[2], l_run[2], alpha[2];
    u32 pa[BLOCK_N / 16][4];
    int g = 0;                                           // ring position of the tile's first key tile
    for (int w = blockIdx.x, it = 0; w < n_work; w += gridDim.x, ++it) {
        const Tile t = walk_tile(w, n_m, n_work, a, lpt);    // rung 08's causal walk: grouped, heaviest first
        const RowTile rt = row_tile(t.m0, cw, a);
        start_tile(o, sc, m_run, l_run);
        WAIT(sm.bars, it & 1);                           // q_full: this tile's Q
        if (cw == 1 && it == 0) named_bar_arrive(1);     // consumer 0 takes the first tile's first turn
        WAIT(full_bar(sm.bars, g % STAGES), (g / STAGES) & 1);   // step 0: S_0 = Q K_0^T alone
        __syncwarp();
        named_bar_sync(mine);
        wgmma_fence();
        issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, g % STAGES));
        wgmma_commit();
        named_bar_arrive(other);
        wgmma_wait<0>();
        fence_regs(sc);
        softmax_scores(sc, m_run, l_run, alpha, rt, 0);
        pack_p(sc, pa);
        for (int j = 1; j < t.n_tiles; ++j) {
            const int s = (g + j) % STAGES, sp = (g + j - 1) % STAGES;
            WAIT(full_bar(sm.bars, s), ((g + j) / STAGES) & 1);
            __syncwarp();
            named_bar_sync(mine);                        // my turn: issue both groups
            wgmma_fence();
            issue_qk(sc, sm.sQ, cw, stage_k(sm.sKV, s)); // group 1: S_j = Q K_j^T
            wgmma_commit();
            rescale_o(o, alpha);
            wgmma_fence();
            issue_pv(o, pa, stage_v(sm.sKV, sp));        // group 2: O += P_{j-1} V_{j-1}
            wgmma_commit();
            named_bar_arrive(other);                     // the other side's turn; the waits are outside mine
            wgmma_wait<1>();
            fence_regs(sc);
            softmax_scores(sc, m_run, l_run, alpha, rt, j * BLOCK_N);
            if (lane == 0) st_shared_f32(sink, l_run[0] + l_run[1]);   // rung 05's sink store
            wgmma_wait<0>();
            fence_regs(o);
            pack_p(sc, pa);
            release_slot(sm.bars, sp);
        }
        const int sl = (g + t.n_tiles - 1) % STAGES;     // last step: P V alone
        named_bar_sync(mine);
        rescale_o(o, alpha);
        wgmma_fence();
        issue_pv(o, pa, stage_v(sm.sKV, sl));
        wgmma_commit();
        if (cw == 0) named_bar_arrive(2);                // consumer 1's last turn of the tile
        else if (w + (int)gridDim.x < n_work) named_bar_arrive(1);   // consumer 0's first turn of the next tile
        wgmma_wait<0>();
        fence_regs(o);
        release_slot(sm.bars, sl);
        g += t.n_tiles;
        __syncwarp();   // this warpgroup's last wgmma of the tile has retired, every Q K^T before it: Q is free
        if (lane == 0) mbar_arrive(q_empty_bar(sm.bars));
        store_tile(o, l_run, m_run, rt, t, a);
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// The kernels. Rungs 03-06: one block per (query tile, head) - the same setup and producer, the consumer is the rung.
// Causal: block x takes query tile gridDim.x - 1 - x, so the longest rows start first. The consumer index is passed
// broadcast from lane 0 (__shfl_sync): the same value, but one the compiler then knows is equal across the warp, so
// the wgmma descriptors built from it (desc_q) stay in uniform registers instead of being moved there (R2UR) before
// every wgmma - fewer instructions a step, the same descriptors (the CPU tier compares the SASS).
// ---------------------------------------------------------------------------------------------------------------------
#define HOPPER_RUNG(NAME, CONSUMER)                                                                                    \
    extern "C" __global__ void __launch_bounds__(THREADS, 1)                                                           \
    NAME(const __grid_constant__ TmaMap tma_q, const __grid_constant__ TmaMap tma_k,                                   \
         const __grid_constant__ TmaMap tma_v, elem_t* __restrict__ O, float* __restrict__ LSE, int S, int Hq,         \
         int group, float scale_log2, int causal, long long o_sb, long long o_sh, long long o_ss)                     \
    {                                                                                                                  \
        const Args a = {O, LSE, S, Hq, group, scale_log2, causal, o_sb, o_sh, o_ss};                                  \
        const Smem sm = carve_smem();                                                                                  \
        const Tile t = make_tile(causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x, blockIdx.y, a);        \
        const int wg = threadIdx.x / 128;                                                                              \
        init_barriers(sm.bars, false);                                                                                 \
        if (wg == 0) {                       /* warpgroup 0: the producer, one thread issuing every TMA copy */        \
            setmaxnreg_dec<PRODUCER_REGS>();                                                                           \
            if (threadIdx.x == 0) producer(sm, t, tma_q, tma_k, tma_v);                                                \
            return;                                                                                                    \
        }                                                                                                              \
        setmaxnreg_inc<CONSUMER_REGS>();     /* warpgroups 1 and 2: the consumers of Q rows 0-63 and 64-127 */         \
        CONSUMER(sm, t, a, __shfl_sync(0xffffffffu, wg - 1, 0));    /* the index, uniform (above) */               \
    }
HOPPER_RUNG(attn_03_wgmma, consumer_03)
HOPPER_RUNG(attn_04_wgmma_pingpong, consumer_04)
HOPPER_RUNG(attn_05_wgmma_overlap, consumer_05)
HOPPER_RUNG(attn_06_wgmma_overlap_pingpong, consumer_06)

// Rungs 07 and 08: one block per SM (the host's grid) walking the work items with rung 07's producer; the consumer
// is the rung, LPT its walk's causal order (walk_tile).
#define HOPPER_PERSISTENT(NAME, CONSUMER, LPT)                                                                         \
    extern "C" __global__ void __launch_bounds__(THREADS, 1)                                                           \
    NAME(const __grid_constant__ TmaMap tma_q, const __grid_constant__ TmaMap tma_k,                                   \
         const __grid_constant__ TmaMap tma_v, elem_t* __restrict__ O, float* __restrict__ LSE, int S, int Hq,         \
         int group, float scale_log2, int causal, long long o_sb, long long o_sh, long long o_ss, int n_bh)            \
    {                                                                                                                  \
        const Args a = {O, LSE, S, Hq, group, scale_log2, causal, o_sb, o_sh, o_ss};                                  \
        const Smem sm = carve_smem();                                                                                  \
        const int n_m = (S + BLOCK_M - 1) / BLOCK_M, n_work = n_m * n_bh;   /* query tiles per head; work items */   \
        const int wg = threadIdx.x / 128;                                                                              \
        init_barriers(sm.bars, true);                                                                                  \
        if (wg == 0) {                       /* warpgroup 0: the producer */                                           \
            setmaxnreg_dec<PRODUCER_REGS>();                                                                           \
            if (threadIdx.x == 0) producer_07(sm, a, n_m, n_work, tma_q, tma_k, tma_v, LPT);                       \
            return;                                                                                                    \
        }                                                                                                              \
        setmaxnreg_inc<CONSUMER_REGS>();                                                                               \
        CONSUMER(sm, a, n_m, n_work, __shfl_sync(0xffffffffu, wg - 1, 0), LPT);                                        \
    }
HOPPER_PERSISTENT(attn_07_wgmma_persistent, consumer_07, false)
HOPPER_PERSISTENT(attn_08_wgmma_persistent_pingpong, consumer_08, true)
