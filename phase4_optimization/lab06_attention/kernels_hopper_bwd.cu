// Lab 4.6, the Hopper backward: the flash-attention backward in CUDA C for sm_90a, rungs 01 to 12.
// archs: sm_90a
//
//   attn_bwd_delta           preprocessing: Delta_i = rowsum(dO_i * O_i) (fp32), and zeroes dQ's fp32 accumulator
//   attn_bwd_01_mma          the backward proper, one block per (64-key tile, batch, key/value head): dK, dV of its
//                            keys (registers, summed over the group's query heads and all query tiles), dQ added
//                            into the fp32 accumulator with red.global.add.f32
//   attn_bwd_02_wgmma        rung 01 with S^T = K Q^T and dP^T = V dO^T as wgmma (one warpgroup, operands read from
//                            shared memory through descriptors); everything else as rung 01 (RUNG 02, below)
//   attn_bwd_03_wgmma_all    every GEMM on wgmma: dV, dK with A (P^T, dS^T) from registers, dQ with dS^T read
//                            transposed from shared memory (RUNG 03, below)
//   attn_bwd_04_wgmma_2stage rung 03 with the next query tile's loads issued before this one's work (RUNG 04)
//   attn_bwd_prep            rung 05's preprocessing: attn_bwd_delta's work, with LSE log2e and Delta packed per tile
//   attn_bwd_05_tma          rung 04's schedule with every copy a TMA one, issued by one thread (RUNG 05)
//   attn_bwd_06_ws           a TMA producer warpgroup and 2 consumer warpgroups of 64 keys each (RUNG 06)
//   attn_bwd_07_ws_bulk_dq   rung 06 with dQ added by bulk reductions from shared memory (RUNG 07)
//   attn_bwd_08_dkdv         rung 06 without dQ; attn_bwd_08_dq: dQ by a pass of its own, no reductions (RUNG 08)
//   attn_bwd_09_ws_overlap   rung 07's step re-ordered: softmax and dQ's staging under the GEMMs (RUNG 09)
//   attn_bwd_10_ws_rotate    rung 09 with each non-causal block's query tiles in an order of its own (RUNG 10)
//   attn_bwd_11_ws_fused_dq  rung 10 with dQ converted by the last consumer to add into each block (RUNG 11)
//   attn_bwd_12_ws_head_dq   rung 10 with dQ converted by each head's last key block (RUNG 12)
//   attn_bwd_dq_convert      dQ = sm_scale x accumulator, rounded to the output dtype (_tiled: from rung 07's layout)
// Host side: hopper_bwd.py (flash_attn_bwd_hopper(..., rung="01" .. "12"), flash.flash_attn_bwd's API).
// The CPU tests check that every rung compiles for sm_90a with no spill and model its shared-memory addressing
// (ldmatrix lane by lane, the wgmma descriptors through a model of the swizzle);
// tests/test_phase4_lab06_attention_hopper_bwd_gpu.py checks dQ, dK, dV of each rung against float64 on an sm_90
// GPU. Rungs 01-08 were written before any of them ran, then checked and timed on an sm_90 GPU (every case of
// hopper_bwd_check right; the measured ratios to cuDNN are in the session logs under logs/); rung 09 was written
// from that run's profile, then checked and timed the same way, and so were rungs 10-12 (right the first time;
// slower than rung 09: the README's lessons say by how much and why).
//
// What it computes (per batch b, query head h, key/value head h / group; Sq == Sk = S; scores unscaled S = Q K^T):
//   P    = exp2(S sm_scale log2e - LSE log2e)          (LSE: the forward's natural-log row logsumexp)
//   dV  += P^T dO                  dP = dO V^T          dS = P * (dP - Delta)       (Delta from attn_bwd_delta)
//   dK  += dS^T Q                  dQ += dS K
// and sm_scale is applied exactly once to each of dK and dQ: dK in this kernel's epilogue (fp32 x sm_scale before the
// rounding), dQ in attn_bwd_dq_convert (the accumulator holds dS K unscaled). dV needs none.
//
// RUNG 01 (attn_bwd_01_mma): mma.sync m16n8k16 (HMMA), not wgmma. The design below is the one the wgmma rungs keep
// (key tile per block, K and V resident, the query tiles walked, dK and dV in registers, dQ by atomics); what changes
// in rungs 02-04 is how the operands reach the tensor cores and when the next tile's loads are issued. Rung 01 comes
// first because nothing could be run before the GPU session, and the mma.sync fragment algebra is the one lab 4.6's
// rungs 01/02 (kernels.cu) already verified on hardware:
//   block      4 warps (128 threads), BLOCK_N = 64 keys, warp w owns keys 16w .. 16w+15 (the M = 16 of every mma it
//              issues for dK, dV, S^T and dP^T). BLOCK_M = 64 query rows per step.
//   per step   (one query tile of one query head of the group)
//              1. all threads copy Q, dO (64 x D each, cp.async, zero past S), LSE log2e and Delta (64 floats each)
//              2. S^T = K Q^T and dP^T = V dO^T per warp (16 keys x 64 queries each: A = K / V by ldmatrix, B = Q / dO
//                 by ldmatrix, both K-major: no transpose), P^T and dS^T in fp32 registers, masks applied
//              3. dV += P^T dO and dK += dS^T Q: P^T and dS^T go from the accumulator registers straight into A
//                 fragments (the forward's "P from registers" trick, transposed), B = dO / Q by ldmatrix.trans
//              4. dS^T (16-bit) to shared memory; barrier; dQ (64 queries x D) = dS (64 x 64 keys) K (64 x D): warp w
//                 takes queries 16w .. 16w+15, A = dS by ldmatrix.trans, B = K by ldmatrix.trans, then one
//                 red.global.add.f32 per accumulator element into dQ_acc (B, Hq, S, D) fp32
//   GQA        the block loops over the group's query heads itself (h = hkv group .. hkv group + group - 1), so dK, dV
//              stay in its registers across the group and are written once, no atomics for them
//   causal     Sq == Sk and BLOCK_M == BLOCK_N, so key tile n0 meets query tiles m0 >= n0 only: the walk starts at
//              m0 = n0 (tiles above the diagonal are skipped entirely) and only m0 == n0 is masked (query < key).
//              Block x takes key tile x: the lowest key tiles have the most query tiles and start first.
//   ragged S   rows past S are copied as zeros; their LSE is set to +inf (so P = 0), Delta is 0; keys past S get P = 0;
//              dK, dV rows past S and dQ rows past S are never stored.
//   smem       K, V, Q, dO: 4 x 64 D 2 bytes (64 KiB at D = 128, 32 KiB at D = 64) + dS^T 64 x 64 x 2 = 8 KiB + LSE,
//              Delta 2 x 256 B + 1024 B to align the tiles = 75264 B at D = 128 (42496 B at D = 64): 3 blocks would
//              fit an SM's 228 KiB at D = 128, but the registers allow 2 (below).
//   registers  per thread: dK, dV accumulators 2 x (16 x D / 32) = D floats (128 at D = 128), S^T and dP^T 2 x 32;
//              __launch_bounds__(128, 1). NVRTC for sm_90a (hopper_bwd.compile_rows): 255 registers at D = 128 for
//              both rungs, about 240 at D = 64, bf16 and fp16 alike, no spill, no stack: 2 blocks (8 warps) per SM
//              at D = 128. It fits only because the tile addresses are made opaque once per query tile (the asm
//              statement at step 1): left visible, the compiler hoists every per-lane ldmatrix address of the
//              unrolled steps out of the query loop and keeps them all in registers, and D = 128 spilled 24-40 B.
//   why 64 keys: the block holds dK and dV for its keys in registers, 2 BLOCK_N D floats spread over its threads,
//              and mma.sync gives each warp M = 16 keys: 64 keys = 4 warps at 128 floats a thread (D = 128). A
//              128-key tile would take 8 warps (same registers a thread, smem K, V 64 KiB + Q, dO 32 KiB + dS^T 16
//              KiB = 112 KiB) and halve the L2 re-reads of Q and dO and the dQ atomics per key; it is the wgmma
//              rungs' tile (2 consumer warpgroups x 64 keys, FlashAttention-3's choice at D = 128), not this one's.
//   FLOPs      5 GEMMs of 2 S^2 D per head (S^T, dP^T, dV, dK, dQ): 10 B Hq S^2 D = 2.75 TFLOP at B=4 H=32 S=4096
//              D=128 non-causal (2.5x the forward), halved causal. Bytes: Q, dO re-read per key tile from L2 (S / 64
//              x 2 S D 2 bytes per head), dQ_acc's atomics S / 64 x S D 4 bytes per head - 32 GiB of L2 atomics at
//              that shape, the largest traffic of this rung (FlashAttention-2/3 do the same at 128-key tiles).
//   prediction 0.3-0.45x SDPA cuDNN's backward at B=4 H=32 S=4096 D=128 bf16: mma.sync tops out near 2/3 of the
//              wgmma peak on Hopper (lab 4.3), this rung does no copy/compute overlap (a barrier-separated load per
//              query tile), reloads every K/V fragment from shared memory for each step, and pays the dQ atomics in
//              line. cuDNN's Hopper backward (wgmma, TMA, warp-specialized) runs near 0.5 of the dense bf16 peak.
//
// RUNG 02 (attn_bwd_02_wgmma): the two GEMMs whose operands both sit in shared memory go to wgmma.
//   what changed  step 2 only: the block's 4 warps are one warpgroup, and S^T (64 keys x 64 queries) = K Q^T is
//                 D / 16 wgmma.m64n64k16 with A = K and B = Q^T read by descriptors (both K-major: d contiguous per
//                 key and per query, the forward's S = Q K^T with the roles swapped), dP^T = V dO^T the same; one
//                 commit, one wait. wgmma's m64nNk16 accumulator gives warp w of the warpgroup rows 16w .. 16w+15
//                 with each n8 block laid out as mma.m16n8k16's C fragment (kernels_hopper.cu's header), so st / dpt
//                 hold exactly rung 01's values in the same registers and steps 3 and 4 are unchanged.
//   why it is legal  the tiles are laid out as wgmma's 128-byte swizzle wants (off_d below: both rungs use it), each
//                 1024-byte aligned; cp.async writes them through the generic proxy, so every thread fences
//                 (fence.proxy.async) after its copies land and before the barrier that precedes the wgmmas.
//   prediction    1.10-1.25x rung 01: S^T and dP^T are 2 of the step's 5 GEMMs (40% of its FLOPs); wgmma runs them
//                 near 1.5x mma.sync's rate and needs no ldmatrix of K, V, Q, dO for them (rung 01 re-reads K and V
//                 fragments every step). Steps 3 and 4 (dV, dK, dQ: 60% of the FLOPs) and the serial loads bound it.
//
// RUNG 03 (attn_bwd_03_wgmma_all): the other three GEMMs go to wgmma too - no mma.sync and no ldmatrix left.
//   what changed  step 3: P^T and dS^T are packed once into 4 A fragments each (the registers mma.sync used, and
//                 exactly wgmma's A-from-registers layout: per warp, mma.m16n8k16's A); dV += P^T dO and dK += dS^T Q
//                 are 4 + 4 wgmma.m64n{D}k16 with B = dO / Q read MN-major (B[query][d] = X[query][d], d contiguous:
//                 the forward's V descriptor, desc_mnmajor), committed and left running while dS^T goes to shared
//                 memory. Step 4: dQ = dS K as wgmma.m64n64k16 per 64-wide half of d, both operands MN-major
//                 (imm-trans-a: A[query][key] = dS^T[key][query], the 64 queries of a dS^T row contiguous; B = K),
//                 waited, then the same red.global.add.f32 per element; the first wait also retires dV and dK.
//                 The accumulators of dV and dK are wgmma's m64n{D} layout = rung 01's C fragments: same epilogue.
//   why halves    dQ's accumulator for all of d would be 64 more registers at D = 128 beside dV, dK (128) and the
//                 A fragments that wgmma may still be reading (32); halves keep 32 (254 registers, no spill).
//   prediction    1.3-1.6x rung 02: the 60% of the FLOPs rung 02 left on mma.sync move to wgmma (near 1.5x the rate)
//                 and 2 x 4 x D / 8 + D / 8 x 4 ldmatrix.x4 per step go away. Still serial inside a step (load, S^T
//                 and dP^T, softmax-like work, dV dK dQ) with one warpgroup per block and 2 blocks per SM: 0.5-0.7x
//                 SDPA cuDNN's backward at B=4 H=32 S=4096 D=128 bf16.
//
// RUNG 04 (attn_bwd_04_wgmma_2stage): rung 03 with its loads under the previous step's work.
//   what changed  two stages of Q, dO, LSE and Delta (SMEM_BYTES_2STAGE: 106.5 KiB at D = 128, still 2 blocks an
//                 SM): after the step's opening barrier, its threads issue the NEXT step's copies (this head's next
//                 query tile, else the next head's first; Q, dO, and LSE, Delta by 4-byte cp.async too, so that no
//                 thread waits for them) into the other stage and wait only for this step's (cp.async.wait_group
//                 1): a step no longer starts with the L2 -> shared round trip of 32 KiB.
//                 Only the stage index is carried (both stages' addresses held at once spilled 40 B at D = 128).
//   prediction    1.15-1.35x rung 03: a step's 5 GEMMs of 64 x 64 x D are ~0.7 us of an SM's tensor cores at
//                 D = 128, the same order as the copy's latency that rung 03 waits out every step (the other block
//                 on the SM hides part of it); what remains serial is the softmax-like work and dQ's atomics.
//
// RUNG 05 (attn_bwd_05_tma): rung 04's schedule, and no thread copies anything but thread 0, through TMA.
//   what changed  Q and dO arrive as TMA boxes (4-D tensor maps (D, H, S, B) built by hopper_bwd.py, the forward's
//                 geometry: boxes of 64 d x 64 rows with the 128-byte swizzle, which is off_d's layout, rows past S
//                 zero-filled by the copy engine), K and V the same once per block; LSE and Delta as one 512-byte bulk
//                 copy per step from attn_bwd_prep's packed array (LSE already x log2e and +inf past S, Delta 0 there:
//                 the per-row fix-up of lse_to_log2 is gone). Thread 0 issues a step's copies and arrives on the
//                 stage's mbarrier with the bytes to expect (full[s]); every thread waits on full[s] for the parity
//                 of its use of the stage ((step / 2) & 1). The barrier that opens a step still guards the stage
//                 being refilled (its last reader was the previous step) and dS^T. No cp.async, no wait_group, no
//                 fence.proxy.async after copies (TMA writes through the async proxy, which wgmma reads).
//   what it saves  per step and thread, rung 04 issues 16 16-byte cp.async at D = 128 (address arithmetic, predicates)
//                 and 1 LSE / Delta pair; here one thread issues 2 D / 64 + 1 instructions. Registers: 254 at D = 128
//                 (rung 04: 255), 184 at D = 64 (211).
//   prediction    1.0-1.1x rung 04: the copies were already under the previous step's work; what is saved is issue
//                 slots of the 4 warps that also run the softmax-like work. The rest of the gap to cuDNN is the
//                 single warpgroup's serial chain (GEMMs, P / dS, atomics) - the next rung's target.
//
// RUNG 06 (attn_bwd_06_ws): warp specialization, FlashAttention-3's backward layout.
//   what changed  a block is 3 warpgroups and 128 keys: warpgroup 0 is the producer (setmaxnreg down to
//                 PRODUCER_REGS; its thread 0 issues every copy: K, V of both consumers once, then each step's Q, dO,
//                 LSE / Delta into a 2-stage ring), warpgroups 1 and 2 are consumers (setmaxnreg up to CONSUMER_REGS),
//                 consumer c owning keys n0 + 64 c .. + 63 and running rung 05's steps on them. The ring has both
//                 directions now: full[s] (the producer's bytes landed) and empty[s] (every consumer thread
//                 arrives once its step's last wgmma that reads stage s has retired), so no block-wide barrier is
//                 left after the setup. Every thread, not lane 0 of each warp after __syncwarp: the threads read
//                 the stage's LSE / Delta with plain loads, an mbarrier arrive releases only its own thread's
//                 reads, and compute-sanitizer's racecheck (which reported the lane-0 version's loads against
//                 the producer's next bulk copy) sees each thread's read ordered before the copy that overwrites it.
//                 dQ at D = 128: consumer c computes the 64-wide half c of dQ over all 128 keys (8 k-slices of
//                 dS K), reading both consumers' dS^T - they meet at named barrier 1 (256 threads) between the
//                 dS^T stores and the dQ wgmmas; dS^T is double-buffered by step parity so that no second barrier
//                 guards its reuse. Each dQ element gets one red.global.add per block and step: half the atomics per
//                 key of rungs 01-05 (and half the L2 re-reads of Q and dO: a query tile now serves 128 keys).
//                 At D = 64 (one 64-wide block of d) each consumer adds its own 64 keys' dQ, as rung 05.
//   smem          D = 128: K, V 64 KiB + dS^T 2 x 2 x 8 KiB + 2 stages of (Q, dO 32 KiB + 1 KiB) = 163 KiB: one
//                 block (12 warps) per SM, against rung 05's 2 blocks of 4 warps.
//   prediction    1.3-1.6x rung 05: the consumers' softmax-like work and atomics run while the other consumer's
//                 wgmmas use the tensor cores (the two are not synchronized but at the dQ barrier), no thread but
//                 the producer's waits on a copy, and half the atomics. cuDNN's backward is this design (with dQ
//                 through shared memory and a bulk reduction); 0.8-1.0x SDPA cuDNN.
//
// RUNG 07 (attn_bwd_07_ws_bulk_dq): rung 06 with dQ added by the copy engine instead of per-element atomics.
//   what changed  after its dQ wgmmas a consumer stores its 64 x 64 fp32 block into its own staging block in shared
//                 memory (16 KiB, the pairs of a row swizzled by row % 8 so that a warp's 8 rows fall in different
//                 banks), fences, meets its own warpgroup at a named barrier, and one thread adds the whole block into
//                 dQ's accumulator with one cp.reduce.async.bulk .add.f32 (bulk_reduce_add_f32) - where rung 06
//                 issued 32 red.global.add.f32 per thread. For that the accumulator is tiled (dq_index): each
//                 (head, query tile, 64 columns) block contiguous in the staging layout, which
//                 attn_bwd_dq_convert_tiled reads back into (B, Hq, S, D). Before the next step overwrites the staging
//                 block, the issuing thread waits for the reduction to have read it (bulk_wait_read) ahead of the
//                 named barrier that every consumer thread passes before its next dQ; the kernel's end waits for the
//                 additions themselves.
//   smem          + 2 x 16 KiB of staging: 195 KiB at D = 128, still one block per SM.
//   prediction    1.05-1.2x rung 06 where the atomics are the bottleneck (L2 atomic throughput: 1 x 4 bytes per
//                 red, 32 per thread per step), less where they already hide under the next step's GEMMs.
//
// RUNG 08 (attn_bwd_08_dkdv, then attn_bwd_08_dq): dQ by a pass of its own, with no reduction at all.
//   what changed  the dK, dV kernel is rung 06 with its dQ removed (no dS^T to shared memory, no named barriers:
//                 each step waits for its dV, dK wgmmas and releases the stage). A second kernel, one block per 128
//                 query rows and query head, walks the key tiles the rows need (causal: up to the diagonal, the
//                 longest rows first) with K and V through a 2-stage ring: per tile it recomputes S = Q K^T and
//                 dP = dO V^T, P and dS (rows = queries: p_and_ds_rows, LSE and Delta of its two rows from lsd), and
//                 adds dQ += dS K in registers; its epilogue writes dQ x sm_scale in the dtype.
//   the trade     2 more GEMMs (S and dP again: 7 instead of 5, +40% FLOPs) for no dQ traffic at all: rung 06 adds
//                 64 x D fp32 per consumer and step into L2 (rung 07 the same by bulk reductions), and the dQ
//                 accumulator (4 bytes x B Hq S D) is written, re-read and converted; here dQ is written once, 2 bytes
//                 per element, and the two kernels run one after the other.
//   prediction    0.85-1.0x rung 07: at D = 128 the atomics of rung 06/07 are a small share of a step once they are
//                 bulk reductions, and 40% more tensor-core work does not pay for them; where rung 06's red.global
//                 traffic is what limits it (many query heads per key/value head, small D), the pass wins.
//
// RUNG 09 (attn_bwd_09_ws_overlap): rung 07's block, producer, shared memory and dQ path; its consumer (consumer_09)
// orders and slims the step, from an sm_90 profile of rung 07 against cuDNN's backward (ncu, at the backward
// target's shape: the tensor pipe did the same work in both, but ours issued more instructions and left the tensor
// pipe idle while the two consumers - in step with each other through the dQ barrier - ran their softmax-like work
// and dQ staging).
//   what changed  1. S^T and dP^T are two commit groups: P^T = exp2(..) is computed once S^T retires (wait_group 1),
//                    while dP^T still runs; dS^T after it.
//                 2. dV += P^T dO is issued as soon as P^T is packed, before dS^T is stored and the consumers meet.
//                 3. After the barrier, dQ's wgmmas go first and dK's after them; waiting for all but the last group
//                    retires dV and dQ, so dQ's staging and bulk reduction run while dK is on the tensor cores.
//                 4. Fewer instructions a step: the mask only on the steps that need one (the block's diagonal
//                    tiles, a block with keys past S; a uniform branch between two copies of P's loop), LSE and
//                    Delta read as pairs, and the wgmma descriptors built once per block or stage and moved by a
//                    32-bit add (desc_at) in uniform registers - the consumer index broadcast by a shuffle so the
//                    compiler knows it is the same across a warp (the CPU tier compares the SASS with rung 07's).
//                 5. Causal: the grid read heaviest key block first in groups of LPT_HEADS heads (longest_first), so
//                    that the grid does not end waiting on the heaviest blocks of its last heads.
//   registers     the same split (24 / 240) and no spill: dQ's 32 accumulators are live while dK runs, P^T's packed
//                 fragments are dead by then.
//   prediction    1.05-1.15x rung 07 non-causal (the softmax's exp2 half under dP^T, the staging under dK, fewer issue
//                 slots on the critical path), and a few % more causal from the block order (the models' in-order
//                 dispatch to 132 SMs ends sooner at the target's grid); about 1.0x SDPA cuDNN.
//
//
// RUNG 10 (attn_bwd_10_ws_rotate): rung 09 with the query tiles of a non-causal block walked from a tile of its own.
//   what changed  Non-causal, the blocks of one (batch, head) run at the same time (they are neighbours in the grid)
//                 and every one of them walks the query tiles 0, 1, 2, ...: at each step all of them bulk-add their
//                 dQ blocks into the same tile of dq_acc, and the L2 serializes reductions into the same addresses.
//                 Block n (of N key blocks) now starts at query tile n T / N (T tiles) and wraps around
//                 (rotate_tile), so the concurrent blocks of a head add into N different tiles; the producer and the
//                 consumers walk the same order. Causal blocks keep rung 09's order (they start at their own
//                 diagonal tile already, and longest_first spreads them), so causal rung 10 is rung 09.
//   registers     as rung 09 (one more add and compare per step, in uniform registers).
//   prediction    non-causal 1.0-1.05x rung 09 (if the same-tile reductions cost time; the L2 read of Q and dO per
//                 step is then spread over more tiles, which the 50 MB L2 holds at the target's 4 concurrent heads).
//
// RUNG 11 (attn_bwd_11_ws_fused_dq): rung 10 with dQ's conversion inside the kernel.
//   what changed  Rungs 07-10 end with attn_bwd_dq_convert_tiled, a pass over dq_acc (4 B and 2 B a dQ element: at
//                 the target 0.4 GB, about 3% of the non-causal backward's time and 5% of the causal one's) that runs
//                 after the last block. Here a counter per dq_acc block (zeroed by the host) counts its reductions;
//                 the issuing thread waits for its reduction to complete (cp.async.bulk.wait_group 0, not only the
//                 read of the staging block), and counts it with a release-acquire atomic after a proxy fence; the
//                 consumer whose count is the block's last (dq_block_adds: every key block non-causal, those at or
//                 below the tile causal; both consumers at D = 64) reads the block back through L2 and writes it
//                 into dq, scaled and rounded. Off the barriers' path: step j counts step j-1's reduction and
//                 converts step j-2's block while its own dQ and dK wgmmas run (two flag words a consumer, by step
//                 parity, carry the count's answer to its 128 threads across the barriers between).
//   registers     as rung 10 (the conversion: 8 floats a thread at a time).
//   prediction    1.02-1.05x rung 10 (the convert kernel's time, less what the counts and conversions cost inside
//                 the steps: one GPU-scope fence and atomic per consumer and step, on one thread).
//
// RUNG 12 (attn_bwd_12_ws_head_dq): rung 10 with dQ converted per query head, by the head's last key block.
//   what changed  Rung 11's alternative, with nothing in the steps: at the end of its walk a block waits for its
//                 reductions, counts itself once per query head of its group (one counter per head, gridDim.x key
//                 blocks each), and the block whose count is a head's last converts the whole head (S x D floats,
//                 both consumers, block by block) before it exits. The conversion's time moves from a kernel of its
//                 own onto one SM per head, under the other SMs' work, except for the grid's last heads.
//   prediction    1.01-1.04x rung 10; above rung 11 if rung 11's fence and atomic a step cost more than the heads'
//                 conversions that end the grid.
//
// NEXT (each measured against the previous on the same GPU): the two consumers out of step (dQ's halves exchanged
// through the staging blocks instead of a barrier), and 2-CTA clusters sharing Q and dO by TMA multicast.

#include "mma_sm80.cuh"
#include "half_bits.cuh"
#include "hopper.cuh"

// Every value comes from hopper_bwd.py as -DNAME=VALUE (hopper_bwd.defines); none is defaulted here.
#ifndef HEAD_DIM
#error "HEAD_DIM is set by hopper_bwd.defines(head_dim) (64 or 128)"
#endif
#ifndef ATTN_FP16
#error "ATTN_FP16 is set by hopper_bwd.defines(dtype)"
#endif
#ifndef BLOCK_N
#error "BLOCK_N is set by CONFIG in hopper_bwd.py"
#endif
#ifndef BLOCK_M
#error "BLOCK_M is set by CONFIG in hopper_bwd.py"
#endif
#ifndef NWARPS
#error "NWARPS is set by CONFIG in hopper_bwd.py"
#endif
#ifndef DELTA_ROWS
#error "DELTA_ROWS is set by CONFIG in hopper_bwd.py"
#endif
#ifndef CONSUMERS
#error "CONSUMERS is set by CONFIG in hopper_bwd.py"
#endif
#ifndef PRODUCER_REGS
#error "PRODUCER_REGS is set by CONFIG in hopper_bwd.py"
#endif
#ifndef CONSUMER_REGS
#error "CONSUMER_REGS is set by CONFIG in hopper_bwd.py"
#endif
#ifndef LPT_HEADS
#error "LPT_HEADS is set by CONFIG in hopper_bwd.py"
#endif
#ifndef MBAR_TIMEOUT           // 0: plain barrier waits; 1: the debug build's bounded ones (WAIT, below)
#error "MBAR_TIMEOUT is set by CONFIG in hopper_bwd.py (defines(timeout=...), ATTN_MBAR_TIMEOUT=1 for the launches)"
#endif
#ifndef LOAD_RACE              // > 0, a test's build only: the copies of every step held back (load_race); 0: none
#error "LOAD_RACE is set by CONFIG in hopper_bwd.py (0; a test raises it)"
#endif

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");
static_assert(BLOCK_N == 16 * NWARPS && BLOCK_M == 64 && BLOCK_N == BLOCK_M,
              "warp w owns 16 keys; causal skipping assumes BLOCK_M == BLOCK_N; dQ splits 64 queries over 4 warps");

// Barrier waits (rungs 05-12). The debug build (MBAR_TIMEOUT=1) gives each wait ~4 s; the first that runs out records
// who waited on what in attn_hopper_bwd_hang (hopper_bwd.hang_report prints it), and from then on every wait of the
// grid gives up at once: a kernel that would hang runs out with garbage in dQ, dK, dV, and the host reads the record.
__device__ hop_u32 attn_hopper_bwd_hang[5];   // the first barrier wait that timed out

#if MBAR_TIMEOUT
// the record's `what` bit: 1 for a thread of warpgroup 0 (rungs 06-12: the producer, waiting on empty barriers)
#define WAIT(bar, parity) mbar_wait_bounded((bar), (parity), threadIdx.x < 128, attn_hopper_bwd_hang, 8000000000LL)
#else
#define WAIT(bar, parity) mbar_wait_parity((bar), (parity))
#endif

// A test's build (CONFIG's LOAD_RACE > 0; compiled out at 0): a producer waits this many cycles before each stage's
// copies, and rung 05 issues a step's copies just before the step instead of a step ahead, so that a consumer that
// does not wait for its stage's phase reads the stage before the copy lands - every launch, not now and then.
__device__ __forceinline__ void load_race()
{
#if LOAD_RACE > 0
    for (const long long t0 = clock64(); clock64() - t0 < LOAD_RACE;) {}
#endif
}

typedef unsigned short elem_t;
#if ATTN_FP16
typedef __half mma_t;
typedef F16 pack_t;
#define WGMMA_TYPES "f16.f16"
#else
typedef __nv_bfloat16 mma_t;
typedef BF16 pack_t;
#define WGMMA_TYPES "bf16.bf16"
#endif

#define THREADS (32 * NWARPS)
#define CHUNKS (HEAD_DIM / 8)             // 16-byte chunks per row of Q, K, V, dO
#define DK (HEAD_DIM / 16)                // k16 steps over d
#define DT (HEAD_DIM / 8)                 // n8 tiles over d
#define QT (BLOCK_M / 8)                  // n8 tiles over the query tile
#define TILE_BYTES (64 * HEAD_DIM * 2)
#define DS_BYTES (BLOCK_N * BLOCK_M * 2)
#define BOX_BYTES (64 * 128)             // one 64-row box of 64 16-bit columns
#define SMEM_BYTES (1024 + 4 * TILE_BYTES + DS_BYTES + 2 * BLOCK_M * 4)   // + 1024: the tiles' alignment
// rung 04's second stage of Q, dO, LSE and Delta, after the above at the next 1024-byte boundary
#define STAGE1_OFF (((4 * TILE_BYTES + DS_BYTES + 2 * BLOCK_M * 4) + 1023) / 1024 * 1024)
#define SMEM_BYTES_2STAGE (1024 + STAGE1_OFF + 2 * TILE_BYTES + 2 * BLOCK_M * 4)
// rung 05: rung 04's layout, then three mbarriers (full[0], full[1]: a stage's copies have landed; kv: K and V have)
#define BAR_OFF (STAGE1_OFF + 2 * TILE_BYTES + 2 * BLOCK_M * 4)
#define SMEM_BYTES_TMA (1024 + BAR_OFF + 3 * 8)
// rung 06 (one block of CONSUMERS x BLOCK_N keys): K, V tiles of every consumer, dS^T boxes per (step parity,
// consumer), two stages of Q, dO and LSE / Delta (a stage 1024-byte aligned), then five mbarriers (full[2], empty[2],
// kv)
#define KEYS6 (CONSUMERS * BLOCK_N)
#define THREADS6 (128 * (CONSUMERS + 1))
#define DS6_OFF (2 * CONSUMERS * TILE_BYTES)
#define STAGE6_BYTES (2 * TILE_BYTES + 1024)
#define STAGE6_OFF (DS6_OFF + 2 * CONSUMERS * DS_BYTES)
#define BAR6_OFF (STAGE6_OFF + 2 * STAGE6_BYTES)
#define SMEM_BYTES_6 (1024 + BAR6_OFF + 5 * 8)
// rung 07: rung 06's layout with each consumer's dQ staging block (64 rows x 64 fp32, DQ_BLOCK_BYTES) before the
// mbarriers; dq_acc tiled as dq_index below
#define DQ_BLOCK_BYTES (64 * 64 * 4)
#define BAR7_OFF (BAR6_OFF + CONSUMERS * DQ_BLOCK_BYTES)
#define SMEM_BYTES_7 (1024 + BAR7_OFF + 5 * 8)
// rung 11: rung 07's layout and, after the mbarriers, two flag words per consumer (a dQ block whole, by step parity)
#define FLAG11_OFF (BAR7_OFF + 5 * 8)
#define SMEM_BYTES_11 (SMEM_BYTES_7 + 16)
// rung 08's dQ pass (one block of CONSUMERS x 64 query rows): Q, dO of its rows, a 2-stage ring of (K, V) tiles, then
// five mbarriers (full[2], empty[2], q_full)
#define RING8_OFF (2 * CONSUMERS * TILE_BYTES)
#define BAR8_OFF (RING8_OFF + 2 * 2 * TILE_BYTES)
#define SMEM_BYTES_8DQ (1024 + BAR8_OFF + 5 * 8)
#define LOG2E_F 1.4426950408889634f

// chunk c (8 elements, d = 8c ..) of row r of a K, V, Q or dO tile: box c / 8, row r, chunk (c % 8) ^ (r % 8)
__device__ __forceinline__ unsigned off_d(int r, int c)
{
    return (unsigned)((c >> 3) * BOX_BYTES + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}
__device__ __forceinline__ unsigned off_s(int r, int c) { return (unsigned)swizzle<8>(r, c) * 16u; }

// 64 rows [row0, row0 + 64) of one head (base: its row 0, row stride ss elements) into a swizzled tile; rows >= S
// are zero-filled (cp.async src-size 0, the address clamped to the base)
__device__ __forceinline__ void load_tile(unsigned dst, const elem_t* base, long long ss, int row0, int S)
{
    for (int i = threadIdx.x; i < 64 * CHUNKS; i += THREADS) {
        const int r = i / CHUNKS, c = i % CHUNKS;
        const bool in = row0 + r < S;
        const elem_t* src = in ? base + (long long)(row0 + r) * ss + 8 * c : base;
        cp_async_16(dst + off_d(r, c), src, in ? 16 : 0);
    }
}

// two floats to a shared-memory address (8-byte aligned)
__device__ __forceinline__ void st_shared_f2(unsigned addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// dS^T (16-bit) to shared memory at ds (a 64 x 64 box, off_s): this thread's A fragment of query slice kq (keys kr and
// kr + 8, queries 16 kq + 2t + {0, 1} and + 8), rows = keys, 8-query chunks at off_s, a pair per 32-bit store
__device__ __forceinline__ void store_ds_t(unsigned char* ds, int kr, int kq, int t, const unsigned (&sa)[4])
{
    *reinterpret_cast<unsigned*>(ds + off_s(kr, 2 * kq) + 4 * t) = sa[0];
    *reinterpret_cast<unsigned*>(ds + off_s(kr + 8, 2 * kq) + 4 * t) = sa[1];
    *reinterpret_cast<unsigned*>(ds + off_s(kr, 2 * kq + 1) + 4 * t) = sa[2];
    *reinterpret_cast<unsigned*>(ds + off_s(kr + 8, 2 * kq + 1) + 4 * t) = sa[3];
}

// One query tile's Q, dO, LSE and Delta into a stage, all by cp.async in one commit group (rows past S zero-filled),
// so that nothing here waits for memory - rung 04 issues it for the next step and moves on. Thread i copies LSE row
// i; once its copy has landed the same thread turns it into LSE log2e, +inf past S (lse_to_log2). rows: (b Hq + h) S,
// the head's first row in lse / delta.
__device__ __forceinline__ void load_step(unsigned dst_q, unsigned dst_do, float* dst_lse, float* dst_delta,
                                          const elem_t* qh, long long q_ss, const elem_t* doh, long long do_ss,
                                          const float* lse, const float* delta, long long rows, int m0, int S)
{
    load_tile(dst_q, qh, q_ss, m0, S);
    load_tile(dst_do, doh, do_ss, m0, S);
    for (int i = threadIdx.x; i < BLOCK_M; i += THREADS) {
        const bool in = m0 + i < S;
        const long long r = in ? rows + m0 + i : rows;           // past S: any valid address, 0 bytes copied
        cp_async_4(dst_lse + i, lse + r, in ? 4 : 0);
        cp_async_4(dst_delta + i, delta + r, in ? 4 : 0);
    }
    cp_async_commit();
}

// After the wait for a stage's copies: each thread's own LSE rows (the ones it copied in load_step, so they are
// visible to it without a barrier) to LSE log2e, and +inf for rows past S, so that P = exp2(.. - LSE log2e) = 0 there
__device__ __forceinline__ void lse_to_log2(float* s_lse, int m0, int S)
{
    for (int i = threadIdx.x; i < BLOCK_M; i += THREADS)
        s_lse[i] = m0 + i < S ? s_lse[i] * LOG2E_F : __int_as_float(0x7f800000);
}

// the dynamic shared memory of the backward kernels (aligned to 1024 bytes inside each kernel)
extern __shared__ unsigned char smem_raw[];

// rowsum(dO * O) of one row (op, dp: its first element), by one warp: lane l takes the element pairs 2l, 2l + 64
__device__ __forceinline__ float row_delta(const elem_t* op, const elem_t* dp, int lane)
{
    float acc = 0.f;
#pragma unroll
    for (int d = 2 * lane; d < HEAD_DIM; d += 64) {
        const unsigned ow = *reinterpret_cast<const unsigned*>(op + d);
        const unsigned dw = *reinterpret_cast<const unsigned*>(dp + d);
        acc += widen(pack_t(), (elem_t)(ow & 0xffff)) * widen(pack_t(), (elem_t)(dw & 0xffff));
        acc += widen(pack_t(), (elem_t)(ow >> 16)) * widen(pack_t(), (elem_t)(dw >> 16));
    }
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, m);
    return acc;
}

// one row of dQ's fp32 accumulator zeroed by one warp
__device__ __forceinline__ void zero_row(float* row, int lane)
{
    float2* z = reinterpret_cast<float2*>(row);
    for (int d = lane; d < HEAD_DIM / 2; d += 32) z[d] = make_float2(0.f, 0.f);
}

// 64 floats zeroed by one warp (a row of one of rung 07's 64-wide dQ blocks, from its start: dq_row64)
__device__ __forceinline__ void zero_row64(float* row, int lane)
{
    reinterpret_cast<float2*>(row)[lane] = make_float2(0.f, 0.f);
}

// attn_bwd_prep's packed LSE log2e / Delta (rungs 05-08): the offset in lsd of the 64-row tile holding row `row` of
// head bh (b Hq + h) - its 64 LSE log2e values, then its 64 Delta
__device__ __forceinline__ long long lsd_offset(long long bh, int n_tiles, int row)
{
    return (bh * n_tiles + row / BLOCK_M) * (2 * BLOCK_M);
}

// Rung 07's dQ accumulator: tiled so that what one consumer adds per step - 64 query rows x 64 columns of d - is one
// contiguous 16 KiB block, added by one bulk reduction from a shared-memory block of the same layout. Block (head bh,
// query tile row / 64, columns col / 64 .. + 63): row r = row % 64 at r x 64 floats, the float pair p = (col % 64) / 2
// at pair p ^ 4 (r % 8) of its row (the swizzle spreads the 8 rows g of a warp's stores over the banks).
// dq_row64: where row `row`'s part of 64-wide block c starts (its 64 floats, in swizzled order, follow); dq_index:
// the float of (row, col) - not dq_index(.., 64 c) for the row's start, which the swizzle moves 8 (row % 8) floats in.
__device__ __forceinline__ long long dq_row64(long long bh, int n_tiles, int row, int c)
{
    return ((bh * n_tiles + row / 64) * (HEAD_DIM / 64) + c) * 4096 + (row % 64) * 64;
}
__device__ __forceinline__ long long dq_index(long long bh, int n_tiles, int row, int col)
{
    const int r = row % 64, p = (col % 64) / 2;
    return dq_row64(bh, n_tiles, row, col / 64) + 2 * (p ^ ((r & 7) << 2)) + (col & 1);
}

// ---------------------------------------------------------------------------------------------------------------------
// Delta = rowsum(dO * O) per (b, h, row), one warp per row; the same warp zeroes the row's dQ accumulator.
// grid (ceil(S / DELTA_ROWS), B Hq), DELTA_ROWS warps per block.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(32 * DELTA_ROWS) attn_bwd_delta(
    const elem_t* __restrict__ o, const elem_t* __restrict__ dout, float* __restrict__ delta,
    float* __restrict__ dq_acc, int S, int Hq, long long o_sb, long long o_sh, long long o_ss, long long do_sb,
    long long do_sh, long long do_ss)
{
    const int row = blockIdx.x * DELTA_ROWS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (row >= S) return;
    const int b = blockIdx.y / Hq, h = blockIdx.y % Hq;
    const float acc = row_delta(o + b * o_sb + h * o_sh + row * o_ss, dout + b * do_sb + h * do_sh + row * do_ss, lane);
    const long long r = (long long)blockIdx.y * S + row;
    if (lane == 0) delta[r] = acc;
    zero_row(dq_acc + r * HEAD_DIM, lane);
}

// ---------------------------------------------------------------------------------------------------------------------
// Rung 05's preprocessing: attn_bwd_delta's work, and the forward's LSE in log2 units beside Delta, packed per 64-row
// query tile as [LSE log2e x 64 | Delta x 64] - 512 bytes, one bulk copy per step - with the rows past S as LSE = +inf
// (so P = 0 there) and Delta = 0. lsd (B Hq, ceil(S / 64), 2, 64) fp32; grid (ceil(S / 64) 64 / DELTA_ROWS, B Hq).
// dq_layout: 0 dq_acc row by row (zeroed as attn_bwd_delta does), 1 in rung 07's tiled layout (dq_index), 2 none.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(32 * DELTA_ROWS) attn_bwd_prep(
    const elem_t* __restrict__ o, const elem_t* __restrict__ dout, const float* __restrict__ lse,
    float* __restrict__ lsd, float* __restrict__ dq_acc, int S, int Hq, long long o_sb, long long o_sh,
    long long o_ss, long long do_sb, long long do_sh, long long do_ss, int dq_layout)
{
    const int row = blockIdx.x * DELTA_ROWS + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    const int n_tiles = (S + BLOCK_M - 1) / BLOCK_M;
    float* tile = lsd + lsd_offset(blockIdx.y, n_tiles, row);
    if (row >= S) {                                       // the last tile's rows past S
        if (lane == 0) {
            tile[row % BLOCK_M] = __int_as_float(0x7f800000);
            tile[BLOCK_M + row % BLOCK_M] = 0.f;
        }
        return;
    }
    const int b = blockIdx.y / Hq, h = blockIdx.y % Hq;
    const float acc = row_delta(o + b * o_sb + h * o_sh + row * o_ss, dout + b * do_sb + h * do_sh + row * do_ss, lane);
    const long long r = (long long)blockIdx.y * S + row;
    if (lane == 0) {
        tile[row % BLOCK_M] = lse[r] * LOG2E_F;
        tile[BLOCK_M + row % BLOCK_M] = acc;
    }
    if (dq_layout == 0) {                                 // rungs 05, 06: row by row
        zero_row(dq_acc + r * HEAD_DIM, lane);
        return;
    }
    if (dq_layout == 2) return;                           // rung 08: no accumulator
    for (int c = 0; c < HEAD_DIM / 64; ++c)               // rung 07's layout: the row's 64-wide blocks
        zero_row64(dq_acc + dq_row64(blockIdx.y, n_tiles, row, c), lane);
}

// dQ's only scaling: two accumulator values x sm_scale, rounded to the dtype as a packed pair
__device__ __forceinline__ unsigned scaled_pair(float2 a, float sm_scale)
{
    return pack2(pack_t(), a.x * sm_scale, a.y * sm_scale);
}

// ---------------------------------------------------------------------------------------------------------------------
// dQ = sm_scale x dQ_acc in the output dtype; dq contiguous (B, Hq, S, D) like dQ_acc; n2 = element pairs in all.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(256) attn_bwd_dq_convert(const float* __restrict__ dq_acc,
                                                                       elem_t* __restrict__ dq, long long n2,
                                                                       float sm_scale)
{
    for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n2; i += (long long)gridDim.x * 256) {
        reinterpret_cast<unsigned*>(dq)[i] = scaled_pair(reinterpret_cast<const float2*>(dq_acc)[i], sm_scale);
    }
}

// The same from rung 07's tiled accumulator (dq_index); dq contiguous (B, Hq, S, D), n2 = B Hq S D / 2 pairs.
extern "C" __global__ void __launch_bounds__(256) attn_bwd_dq_convert_tiled(const float* __restrict__ dq_acc,
                                                                             elem_t* __restrict__ dq, long long n2,
                                                                             int S, float sm_scale)
{
    const int n_tiles = (S + 63) / 64;
    for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n2; i += (long long)gridDim.x * 256) {
        const long long e = 2 * i, rows = e / HEAD_DIM;             // element e: (head bh, row, col)
        const int col = (int)(e % HEAD_DIM), row = (int)(rows % S);
        const float2 a = *reinterpret_cast<const float2*>(dq_acc + dq_index(rows / S, n_tiles, row, col));
        reinterpret_cast<unsigned*>(dq)[i] = scaled_pair(a, sm_scale);
    }
}

// Rung 11: how many bulk reductions add into one dq_acc block (query tile m0, one 64-wide block of columns): one per
// key block that visits the tile - every one non-causal, causal those with n0 <= m0 - and per consumer adding into it
// (D = 128: consumer c alone adds into column block c; D = 64: both consumers into the one block).
__device__ __forceinline__ int dq_block_adds(int m0, int causal)
{
    return (causal ? m0 / KEYS6 + 1 : (int)gridDim.x) * (HEAD_DIM == 64 ? CONSUMERS : 1);
}

// Rung 11, the issuing thread once its reduction into a dq_acc block has completed (bulk_wait, not only its read of
// the staging block): count it in the block's counter; true when it was the block's last, so that its consumer
// converts the block. The proxy fence orders the bulk reduction's writes (async proxy) before this thread's generic
// accesses, the release half of the atomic publishes them with the count, and its acquire half makes every earlier
// count's block adds visible here - and, through the named barrier that follows, to the consumer's other threads.
__device__ __forceinline__ bool count_dq_add(int* count, int expected)
{
    asm volatile("fence.proxy.async.global;" ::: "memory");
    int old;
    asm volatile("atom.add.acq_rel.gpu.s32 %0, [%1], 1;" : "=r"(old) : "l"(count) : "memory");
    return old == expected - 1;
}

// Rung 11: dq_acc's block (head bh, query tile m0, columns col0 .. + 63) x sm_scale into dq (contiguous (B, Hq, S,
// D)), by a consumer's 128 threads: thread i takes half i % 2 of row i / 2 - 4 runs of 4 float pairs (the swizzle
// moves a run of 4 pairs as a whole: two 16-byte loads) each rounded into one 16-byte store; rows past S skipped. The
// loads go through L2 (ld.global.cg): the block's adds came from other SMs. All eight loads are issued before the
// first store, so a block costs one L2 round trip, not four (the loads are volatile asm: the compiler keeps them in
// program order and would not move them above a store).
__device__ __forceinline__ void convert_dq_block(const float* __restrict__ dq_acc, elem_t* __restrict__ dq,
                                                 long long bh, int n_tiles, int m0, int col0, int S, float sm_scale,
                                                 int i)
{
    const int r = i >> 1, half = i & 1;
    if (m0 + r >= S) return;
    const float* row = dq_acc + dq_row64(bh, n_tiles, m0 + r, col0 / 64);
    elem_t* out = dq + (bh * S + m0 + r) * HEAD_DIM + col0;
    float4 lo[4], hi[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int p = 16 * half + 4 * j;                  // the run's first pair: columns 2 p .. 2 p + 7
        const float4* src = reinterpret_cast<const float4*>(row + 2 * (p ^ ((r & 7) << 2)));
        lo[j] = __ldcg(src);
        hi[j] = __ldcg(src + 1);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int p = 16 * half + 4 * j;
        const uint4 v = make_uint4(scaled_pair(make_float2(lo[j].x, lo[j].y), sm_scale),
                                   scaled_pair(make_float2(lo[j].z, lo[j].w), sm_scale),
                                   scaled_pair(make_float2(hi[j].x, hi[j].y), sm_scale),
                                   scaled_pair(make_float2(hi[j].z, hi[j].w), sm_scale));
        *reinterpret_cast<uint4*>(out + 2 * p) = v;
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// S^T (64 keys x 64 queries) += A (64 x 16, K or V) B (16 x 64, Q^T or dO^T): one wgmma for the warpgroup, both
// operands K-major in shared memory (descriptors: desc_kmajor). scale_d = 0: D = A B (the first d-slice).
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ void wgmma_ss_64x64(float (&d)[32], hop_u64 desc_a, hop_u64 desc_b, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPES " {" REGS32 "}, %32, %33, p, 1, 1, 0, 0;\n\t}"
        : ACC32(d, 0)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// The k-th 16-wide slice of d of a 64-row tile (K, V, Q, dO): box kk / 4, + 32 bytes per slice inside the box; rows
// 128 bytes apart, 8-row groups SBO = 1024 apart (LBO unused for a K-major swizzled operand: 16)
__device__ __forceinline__ hop_u64 desc_kmajor(unsigned tile, int kk)
{
    return wgmma_desc_128b(tile + (kk / 4) * BOX_BYTES + 32 * (kk % 4), 16, 1024);
}

// Rung 03: the same tiles read MN-major, the k-th 16-ROW slice (rows 16 kk .. 16 kk + 15: queries of Q / dO, keys of
// K / dS^T) as a 16 x N operand whose N runs along the row: start + 16 rows x 128 bytes, 64-wide column blocks one
// box apart (LBO = BOX_BYTES), 8-row groups SBO = 1024 apart (the forward's V descriptor, for 64-row boxes)
__device__ __forceinline__ hop_u64 desc_mnmajor(unsigned tile, int kk)
{
    return wgmma_desc_128b(tile + 2048 * kk, BOX_BYTES, 1024);
}

// acc (64 keys x HEAD_DIM) += A (64 keys x 16 queries: P^T or dS^T, registers, mma's A fragment per warp) B (16
// queries x HEAD_DIM: dO or Q, shared, MN-major): dV and dK in rung 03
#if HEAD_DIM == 128
__device__ __forceinline__ void wgmma_rs_acc(float (&d)[64], const unsigned (&a)[4], hop_u64 desc_b)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %69, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32." WGMMA_TYPES " {" REGS64 "}, {%64, %65, %66, %67}, %68, p, 1, 1, "
        "1;\n\t}"
        : ACC32(d, 0), ACC32(d, 32)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
#else
__device__ __forceinline__ void wgmma_rs_acc(float (&d)[32], const unsigned (&a)[4], hop_u64 desc_b)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %37, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPES " {" REGS32 "}, {%32, %33, %34, %35}, %36, p, 1, 1, "
        "1;\n\t}"
        : ACC32(d, 0)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}
#endif

// dQ half (64 queries x 64 of d) (+)= dS (64 queries x 16 keys: dS^T in shared memory, read transposed) K (16 keys x
// 64 of d, MN-major): both operands MN-major (imm-trans-a = imm-trans-b = 1); scale_d = 0 for the first key slice
__device__ __forceinline__ void wgmma_ss_tt_64x64(float (&d)[32], hop_u64 desc_a, hop_u64 desc_b, int scale_d)
{
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.b32 p, %34, 0;\n\t"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32." WGMMA_TYPES " {" REGS32 "}, %32, %33, p, 1, 1, 1, 1;\n\t}"
        : ACC32(d, 0)
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

// ---------------------------------------------------------------------------------------------------------------------
// The steps of one query tile, shared by the rungs that run them the same way (each rung's kernel below says which).
// warp: the warp within its warpgroup (its 16 keys), g = lane / 4, t = lane % 4 (the fragment coordinates).
// ---------------------------------------------------------------------------------------------------------------------
// Step 2 on wgmma (rungs 02-05): S^T = K Q^T and dP^T = V dO^T, 64 keys x 64 queries each, both operands K-major in
// shared memory; waited, so st and dpt hold mma.m16n8k16's C fragments (n8 tile nt in [4 nt ..]) on return.
__device__ __forceinline__ void sdp_t_wgmma(float (&st)[4 * QT], float (&dpt)[4 * QT], unsigned sK, unsigned sV,
                                            unsigned sQ, unsigned sdO)
{
    wgmma_fence();                                        // st, dpt were written by the previous step's threads
#pragma unroll
    for (int kk = 0; kk < DK; ++kk) wgmma_ss_64x64(st, desc_kmajor(sK, kk), desc_kmajor(sQ, kk), kk > 0);
#pragma unroll
    for (int kk = 0; kk < DK; ++kk) wgmma_ss_64x64(dpt, desc_kmajor(sV, kk), desc_kmajor(sdO, kk), kk > 0);
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(st);
    fence_regs(dpt);
}

// P^T = exp2(S^T scale log2e - LSE log2e), masked (keys past S; on the causal diagonal tile, query < key), and
// dS^T = P^T (dP^T - Delta), in place: st becomes P^T, dpt dS^T. s_lse holds LSE log2e (+inf past S).
__device__ __forceinline__ void p_and_ds(float (&st)[4 * QT], float (&dpt)[4 * QT], const float* s_lse,
                                         const float* s_delta, float scale_log2, int key_a, int key_b, int S,
                                         bool diag, int m0, int t)
{
#pragma unroll
    for (int nt = 0; nt < QT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int qi = 8 * nt + 2 * t + (e & 1);
            const int key = e < 2 ? key_a : key_b;
            float p = fast_exp2(st[4 * nt + e] * scale_log2 - s_lse[qi]);
            if (key >= S || (diag && m0 + qi < key)) p = 0.f;
            st[4 * nt + e] = p;
            dpt[4 * nt + e] = p * (dpt[4 * nt + e] - s_delta[qi]);
        }
    }
}

// A 64-wide block of dQ (wgmma's m64n64 accumulator: this thread's rows a, b, columns col + 8 j + {0, 1}) added into
// dq_acc's rows rowa, rowb (red.global.add.f32, the result unused); rows past S (in_a / in_b false) not touched
__device__ __forceinline__ void add_dq(float* rowa, float* rowb, const float (&dqh)[32], int col, bool in_a, bool in_b)
{
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        if (in_a) {
            atomicAdd(rowa + col + 8 * j, dqh[4 * j]);
            atomicAdd(rowa + col + 8 * j + 1, dqh[4 * j + 1]);
        }
        if (in_b) {
            atomicAdd(rowb + col + 8 * j, dqh[4 * j + 2]);
            atomicAdd(rowb + col + 8 * j + 1, dqh[4 * j + 3]);
        }
    }
}

// Steps 3 and 4 on wgmma (rungs 03-05): dV += P^T dO, dK += dS^T Q, then dQ = dS K added into dq_acc (the tile's
// queries m0 .., rows bh_rows + query of dq_acc). st, dpt: P^T and dS^T from p_and_ds.
__device__ __forceinline__ void dvdk_dq_wgmma(float (&acc_dv)[HEAD_DIM / 2], float (&acc_dk)[HEAD_DIM / 2],
                                              float (&st)[4 * QT], float (&dpt)[4 * QT], unsigned char* smem,
                                              unsigned sQ, unsigned sdO, unsigned sdS, unsigned sK,
                                              float* dq_acc, long long bh_rows, int m0, int S, int warp,
                                              int g, int t)
{
    // ---- 3. P^T, dS^T packed into wgmma A fragments; dS^T to shared memory; dV += P^T dO and
    // dK += dS^T Q as 2 x 4 wgmmas (A from registers, B = dO / Q MN-major), left running ----
    unsigned pa[BLOCK_M / 16][4], sa[BLOCK_M / 16][4];
    const int kr = 16 * warp + g;
#pragma unroll
    for (int kq = 0; kq < BLOCK_M / 16; ++kq) {
        a_from_acc<pack_t>(pa[kq], st + 8 * kq, st + 8 * kq + 4);
        a_from_acc<pack_t>(sa[kq], dpt + 8 * kq, dpt + 8 * kq + 4);
        store_ds_t(smem + 4 * TILE_BYTES, kr, kq, t, sa[kq]);
    }
    wgmma_fence();                            // pa, sa, acc_dv, acc_dk were written by the threads
#pragma unroll
    for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dv, pa[kq], desc_mnmajor(sdO, kq));
#pragma unroll
    for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dk, sa[kq], desc_mnmajor(sQ, kq));
    wgmma_commit();
    fence_proxy_async_smem();                 // this thread's dS^T stores, before wgmma reads them
    __syncthreads();                          // every warp's dS^T is in sdS

    // ---- 4. dQ = dS K in 64-wide halves of d (wgmma, both operands MN-major), each added
    // into dq_acc; the first wait also retires step 3's dV, dK ----
    const int qa = m0 + 16 * warp + g, qb = qa + 8;
    float* rowa = dq_acc + (bh_rows + qa) * HEAD_DIM;
    float* rowb = dq_acc + (bh_rows + qb) * HEAD_DIM;
#pragma unroll
    for (int half = 0; half < HEAD_DIM / 64; ++half) {
        float dqh[32];
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BLOCK_N / 16; ++kk)
            wgmma_ss_tt_64x64(dqh, desc_mnmajor(sdS, kk), desc_mnmajor(sK + half * BOX_BYTES, kk),
                              kk > 0);
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(dqh);
        add_dq(rowa, rowb, dqh, 64 * half + 2 * t, qa < S, qb < S);
    }
    fence_regs(acc_dv);
    fence_regs(acc_dk);
}

// The epilogue: dV, and dK x sm_scale (dK's only scaling), rounded to the dtype; rows past S not stored. kv_rows: the
// (batch, key/value head)'s row 0 in dk, dv.
__device__ __forceinline__ void store_dv_dk(elem_t* __restrict__ dv, elem_t* __restrict__ dk,
                                            const float (&acc_dv)[HEAD_DIM / 2], const float (&acc_dk)[HEAD_DIM / 2],
                                            long long kv_rows, int key_a, int key_b, int S, float sm_scale, int t)
{
#pragma unroll
    for (int dt = 0; dt < DT; ++dt) {
        const int col = 8 * dt + 2 * t;
        if (key_a < S) {
            reinterpret_cast<unsigned*>(dv + (kv_rows + key_a) * HEAD_DIM + col)[0] =
                pack2(pack_t(), acc_dv[4 * dt], acc_dv[4 * dt + 1]);
            reinterpret_cast<unsigned*>(dk + (kv_rows + key_a) * HEAD_DIM + col)[0] =
                pack2(pack_t(), acc_dk[4 * dt] * sm_scale, acc_dk[4 * dt + 1] * sm_scale);
        }
        if (key_b < S) {
            reinterpret_cast<unsigned*>(dv + (kv_rows + key_b) * HEAD_DIM + col)[0] =
                pack2(pack_t(), acc_dv[4 * dt + 2], acc_dv[4 * dt + 3]);
            reinterpret_cast<unsigned*>(dk + (kv_rows + key_b) * HEAD_DIM + col)[0] =
                pack2(pack_t(), acc_dk[4 * dt + 2] * sm_scale, acc_dk[4 * dt + 3] * sm_scale);
        }
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// The backward proper. grid (ceil(S / BLOCK_N), B Hkv), THREADS threads, SMEM_BYTES dynamic shared memory.
// q, dout (B, Hq, S, D) and k, v (B, Hkv, S, D): element strides (sb, sh, ss), last dim contiguous, rows 16-byte
// aligned; lse, delta (B, Hq, S) fp32 contiguous; dq_acc (B, Hq, S, D) fp32 zeroed; dk, dv (B, Hkv, S, D) contiguous.
// RUNG 1: mma.sync throughout; 2: step 2 by wgmma; 3: every GEMM by wgmma; 4: rung 3 with the next step's Q, dO,
// LSE and Delta loaded while this step computes (two stages).
// ---------------------------------------------------------------------------------------------------------------------
#define BWD_PARAMS                                                                                                     \
    const elem_t* __restrict__ q, const elem_t* __restrict__ k, const elem_t* __restrict__ v,                         \
        const elem_t* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,              \
        float* __restrict__ dq_acc, elem_t* __restrict__ dk, elem_t* __restrict__ dv, int S, int Hq, int group,      \
        float sm_scale, int causal, long long q_sb, long long q_sh, long long q_ss, long long k_sb, long long k_sh,   \
        long long k_ss, long long v_sb, long long v_sh, long long v_ss, long long do_sb, long long do_sh,            \
        long long do_ss
#define BWD_ARGS q, k, v, dout, lse, delta, dq_acc, dk, dv, S, Hq, group, sm_scale, causal, q_sb, q_sh, q_ss, k_sb, \
                 k_sh, k_ss, v_sb, v_sh, v_ss, do_sb, do_sh, do_ss

template <int RUNG>
__device__ __forceinline__ void bwd_body(
    const elem_t* __restrict__ q, const elem_t* __restrict__ k, const elem_t* __restrict__ v,
    const elem_t* __restrict__ dout, const float* __restrict__ lse, const float* __restrict__ delta,
    float* __restrict__ dq_acc, elem_t* __restrict__ dk, elem_t* __restrict__ dv, int S, int Hq, int group,
    float sm_scale, int causal, long long q_sb, long long q_sh, long long q_ss, long long k_sb, long long k_sh,
    long long k_ss, long long v_sb, long long v_sh, long long v_ss, long long do_sb, long long do_sh,
    long long do_ss)
{
    unsigned char* smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);   // tiles 1024-byte aligned
    unsigned sK = smem_u32(smem), sV = sK + TILE_BYTES, sQ = sV + TILE_BYTES, sdO = sQ + TILE_BYTES;
    unsigned sdS = sdO + TILE_BYTES;
    float* s_lse = reinterpret_cast<float*>(smem + 4 * TILE_BYTES + DS_BYTES);   // LSE log2e per query row
    float* s_delta = s_lse + BLOCK_M;
    // rung 04: two stages (SMEM_BYTES_2STAGE) - stage 1's Q, dO, LSE and Delta at STAGE1_OFF; only the index of the
    // stage in use is carried from step to step (addresses held for both stages cost registers D = 128 lacks)
    int stage = 0;
    auto stage_q = [&](int s_) { return sK + (s_ ? STAGE1_OFF : 2 * TILE_BYTES); };
    auto stage_lse = [&](int s_) {
        return reinterpret_cast<float*>(smem + (s_ ? STAGE1_OFF + 2 * TILE_BYTES : 4 * TILE_BYTES + DS_BYTES));
    };

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int Hkv = Hq / group, b = blockIdx.y / Hkv, hkv = blockIdx.y % Hkv;
    const int n0 = blockIdx.x * BLOCK_N;
    const float scale_log2 = sm_scale * LOG2E_F;

    // ---- K and V of this block's keys: loaded once ----
    load_tile(sK, k + b * k_sb + hkv * k_sh, k_ss, n0, S);
    load_tile(sV, v + b * v_sb + hkv * v_sh, v_ss, n0, S);
    cp_async_commit();

    constexpr bool WG = RUNG >= 2;                        // step 2 (S^T, dP^T) on wgmma
    float acc_dk[HEAD_DIM / 2], acc_dv[HEAD_DIM / 2];     // n8 tile j of d in [4 j .. 4 j + 3]: mma's C fragment
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) acc_dk[i] = acc_dv[i] = 0.f;

    // per-lane ldmatrix row / chunk-parity choices (see the header)
    const int a_row = 16 * warp + (lane & 15), a_hi = lane >> 4;                  // K, V as A (this warp's keys)
    const int bn_row = (lane & 7) + 8 * (lane >> 4), bn_hi = (lane >> 3) & 1;     // Q, dO as B (non-trans)
    const int bt_row = (lane & 7) + 8 * ((lane >> 3) & 1), bt_hi = lane >> 4;     // dO, Q, K as B (.trans)
    const int key_a = n0 + 16 * warp + g, key_b = key_a + 8;                       // this thread's two keys

    const int m_start = causal ? n0 : 0;
    if constexpr (RUNG == 4) {                            // the first step's loads (stage 0)
        const int h = hkv * group;
        load_step(sQ, sdO, s_lse, s_delta, q + b * q_sb + h * q_sh, q_ss, dout + b * do_sb + h * do_sh, do_ss, lse,
                  delta, ((long long)b * Hq + h) * S, m_start, S);
    }
    for (int hh = 0; hh < group; ++hh) {
        const int h = hkv * group + hh;
        const elem_t* qh = q + b * q_sb + h * q_sh;
        const elem_t* doh = dout + b * do_sb + h * do_sh;
        const long long bh_rows = ((long long)b * Hq + h) * S;
        for (int m0 = m_start; m0 < S; m0 += BLOCK_M) {
            // ---- 1. Q, dO, LSE, Delta of this query tile ----
            // the tile addresses made opaque once per step: otherwise the compiler hoists every per-lane ldmatrix
            // address of steps 2-4 out of this loop and holds them all in registers, and D = 128 spills
            asm volatile("" : "+r"(sK), "+r"(sV), "+r"(sQ), "+r"(sdO), "+r"(sdS));
            __syncthreads();                              // the previous step's reads of sQ, sdO, sdS are done
            if constexpr (RUNG == 4) {
                // the next step (this head's next tile, else the next head's first) into the other stage, whose
                // last reader was the previous step; then wait for every commit group but that newest one
                const bool last_tile = m0 + BLOCK_M >= S;
                sQ = stage_q(stage), sdO = sQ + TILE_BYTES;
                s_lse = stage_lse(stage), s_delta = s_lse + BLOCK_M;
                if (!last_tile || hh + 1 < group) {
                    const int hn = last_tile ? 1 : 0;     // 1: the next head
                    float* nl = stage_lse(stage ^ 1);
                    load_step(stage_q(stage ^ 1), stage_q(stage ^ 1) + TILE_BYTES, nl, nl + BLOCK_M, qh + hn * q_sh,
                              q_ss, doh + hn * do_sh, do_ss, lse, delta, bh_rows + hn * S,
                              last_tile ? m_start : m0 + BLOCK_M, S);
                    cp_async_wait<1>();
                } else {
                    cp_async_wait_all();
                }
            } else {
                load_step(sQ, sdO, s_lse, s_delta, qh, q_ss, doh, do_ss, lse, delta, bh_rows, m0, S);
                cp_async_wait_all();
            }
            lse_to_log2(s_lse, m0, S);
            if constexpr (WG) fence_proxy_async_smem();   // the generic proxy's copies, before wgmma reads them
            __syncthreads();

            // ---- 2. S^T = K Q^T, dP^T = V dO^T (16 keys x 64 queries per warp; n8 tile nt in st[4 nt ..]) ----
            float st[4 * QT], dpt[4 * QT];
            if constexpr (WG) {
                sdp_t_wgmma(st, dpt, sK, sV, sQ, sdO);
            } else {
#pragma unroll
                for (int i = 0; i < 4 * QT; ++i) st[i] = dpt[i] = 0.f;
#pragma unroll
                for (int kk = 0; kk < DK; ++kk) {
                    unsigned ka[4], va[4];
                    ldmatrix_x4(ka[0], ka[1], ka[2], ka[3], sK + off_d(a_row, 2 * kk + a_hi));
                    ldmatrix_x4(va[0], va[1], va[2], va[3], sV + off_d(a_row, 2 * kk + a_hi));
#pragma unroll
                    for (int np = 0; np < QT / 2; ++np) {
                        unsigned b0, b1, b2, b3;
                        ldmatrix_x4(b0, b1, b2, b3, sQ + off_d(16 * np + bn_row, 2 * kk + bn_hi));
                        mma_16816(st + 8 * np, ka, b0, b1, mma_t());
                        mma_16816(st + 8 * np + 4, ka, b2, b3, mma_t());
                        ldmatrix_x4(b0, b1, b2, b3, sdO + off_d(16 * np + bn_row, 2 * kk + bn_hi));
                        mma_16816(dpt + 8 * np, va, b0, b1, mma_t());
                        mma_16816(dpt + 8 * np + 4, va, b2, b3, mma_t());
                    }
                }
            }

            // ---- P^T = exp2(S^T scale log2e - LSE log2e), masked; dS^T = P^T (dP^T - Delta), into st / dpt ----
            p_and_ds(st, dpt, s_lse, s_delta, scale_log2, key_a, key_b, S, causal && m0 == n0, m0, t);

            if constexpr (RUNG >= 3) {
                // (steps 3 and 4 are dvdk_dq_wgmma's, kept in line here: calling it changes rung 04's register
                // allocation, 20 B of spill at D = 128 with NVRTC 13)
                // ---- 3. (rung 03) P^T, dS^T packed into wgmma A fragments; dS^T to shared memory; dV += P^T dO and
                // dK += dS^T Q as 2 x 4 wgmmas (A from registers, B = dO / Q MN-major), left running ----
                unsigned pa[BLOCK_M / 16][4], sa[BLOCK_M / 16][4];
                const int kr = 16 * warp + g;
#pragma unroll
                for (int kq = 0; kq < BLOCK_M / 16; ++kq) {
                    a_from_acc<pack_t>(pa[kq], st + 8 * kq, st + 8 * kq + 4);
                    a_from_acc<pack_t>(sa[kq], dpt + 8 * kq, dpt + 8 * kq + 4);
                    store_ds_t(smem + 4 * TILE_BYTES, kr, kq, t, sa[kq]);
                }
                wgmma_fence();                            // pa, sa, acc_dv, acc_dk were written by the threads
#pragma unroll
                for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dv, pa[kq], desc_mnmajor(sdO, kq));
#pragma unroll
                for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dk, sa[kq], desc_mnmajor(sQ, kq));
                wgmma_commit();
                fence_proxy_async_smem();                 // this thread's dS^T stores, before wgmma reads them
                __syncthreads();                          // every warp's dS^T is in sdS

                // ---- 4. (rung 03) dQ = dS K in 64-wide halves of d (wgmma, both operands MN-major), each added
                // into dq_acc; the first wait also retires step 3's dV, dK ----
                const int qa = m0 + 16 * warp + g, qb = qa + 8;
                float* rowa = dq_acc + (bh_rows + qa) * HEAD_DIM;
                float* rowb = dq_acc + (bh_rows + qb) * HEAD_DIM;
#pragma unroll
                for (int half = 0; half < HEAD_DIM / 64; ++half) {
                    float dqh[32];
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < BLOCK_N / 16; ++kk)
                        wgmma_ss_tt_64x64(dqh, desc_mnmajor(sdS, kk), desc_mnmajor(sK + half * BOX_BYTES, kk),
                                          kk > 0);
                    wgmma_commit();
                    wgmma_wait<0>();
                    fence_regs(dqh);
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        const int col = 64 * half + 8 * j + 2 * t;
                        if (qa < S) {
                            atomicAdd(rowa + col, dqh[4 * j]);
                            atomicAdd(rowa + col + 1, dqh[4 * j + 1]);
                        }
                        if (qb < S) {
                            atomicAdd(rowb + col, dqh[4 * j + 2]);
                            atomicAdd(rowb + col + 1, dqh[4 * j + 3]);
                        }
                    }
                }
                fence_regs(acc_dv);
                fence_regs(acc_dk);
                if constexpr (RUNG == 4) stage ^= 1;     // the stage just loaded is the next step's
            } else {
                // ---- 3. dV += P^T dO, dK += dS^T Q (A from the registers above, B by ldmatrix.trans) ----
#pragma unroll
                for (int kq = 0; kq < BLOCK_M / 16; ++kq) {
                    unsigned pa[4], sa[4];
                    a_from_acc<pack_t>(pa, st + 8 * kq, st + 8 * kq + 4);
                    a_from_acc<pack_t>(sa, dpt + 8 * kq, dpt + 8 * kq + 4);
                    store_ds_t(smem + 4 * TILE_BYTES, 16 * warp + g, kq, t, sa);       // dS^T for step 4
#pragma unroll
                    for (int dp = 0; dp < DT / 2; ++dp) {
                        unsigned b0, b1, b2, b3;
                        ldmatrix_x4_trans(b0, b1, b2, b3, sdO + off_d(16 * kq + bt_row, 2 * dp + bt_hi));
                        mma_16816(acc_dv + 8 * dp, pa, b0, b1, mma_t());
                        mma_16816(acc_dv + 8 * dp + 4, pa, b2, b3, mma_t());
                        ldmatrix_x4_trans(b0, b1, b2, b3, sQ + off_d(16 * kq + bt_row, 2 * dp + bt_hi));
                        mma_16816(acc_dk + 8 * dp, sa, b0, b1, mma_t());
                        mma_16816(acc_dk + 8 * dp + 4, sa, b2, b3, mma_t());
                    }
                }
                __syncthreads();                              // every warp's dS^T is in sdS

                // ---- 4. dQ (queries 16 warp .. +15 of the tile) += dS K, added into dq_acc ----
                unsigned da[BLOCK_N / 16][4];
#pragma unroll
                for (int kk = 0; kk < BLOCK_N / 16; ++kk)
                    ldmatrix_x4_trans(
                        da[kk][0], da[kk][1], da[kk][2], da[kk][3],
                        sdS + off_s(16 * kk + (lane & 7) + 8 * (lane >> 4), 2 * warp + ((lane >> 3) & 1)));
                const int qa = m0 + 16 * warp + g, qb = qa + 8;
                float* rowa = dq_acc + (bh_rows + qa) * HEAD_DIM;
                float* rowb = dq_acc + (bh_rows + qb) * HEAD_DIM;
#pragma unroll
                for (int dp = 0; dp < DT / 2; ++dp) {
                    float c[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
#pragma unroll
                    for (int kk = 0; kk < BLOCK_N / 16; ++kk) {
                        unsigned b0, b1, b2, b3;
                        ldmatrix_x4_trans(b0, b1, b2, b3, sK + off_d(16 * kk + bt_row, 2 * dp + bt_hi));
                        mma_16816(c[0], da[kk], b0, b1, mma_t());
                        mma_16816(c[1], da[kk], b2, b3, mma_t());
                    }
#pragma unroll
                    for (int j = 0; j < 2; ++j) {
                        const int col = 8 * (2 * dp + j) + 2 * t;
                        if (qa < S) {
                            atomicAdd(rowa + col, c[j][0]);
                            atomicAdd(rowa + col + 1, c[j][1]);
                        }
                        if (qb < S) {
                            atomicAdd(rowb + col, c[j][2]);
                            atomicAdd(rowb + col + 1, c[j][3]);
                        }
                    }
                }
            }
        }
    }

    store_dv_dk(dv, dk, acc_dv, acc_dk, ((long long)b * Hkv + hkv) * S, key_a, key_b, S, sm_scale, t);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_bwd_01_mma(BWD_PARAMS) { bwd_body<1>(BWD_ARGS); }
extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_bwd_02_wgmma(BWD_PARAMS) { bwd_body<2>(BWD_ARGS); }
extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_bwd_03_wgmma_all(BWD_PARAMS) { bwd_body<3>(BWD_ARGS); }
extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_bwd_04_wgmma_2stage(BWD_PARAMS) { bwd_body<4>(BWD_ARGS); }

// ---------------------------------------------------------------------------------------------------------------------
// Rung 05: rung 04's schedule with every copy a TMA one, issued by one thread, awaited on mbarriers (the header's RUNG
// 05). grid (ceil(S / BLOCK_N), B Hkv), THREADS threads, SMEM_BYTES_TMA. tma_q, tma_do over q, dout and tma_k, tma_v
// over k, v: hopper_bwd.py's 4-D maps (D, H, S, B), boxes of 64 d x 64 rows, 128-byte swizzle (= off_d's layout).
// lsd: attn_bwd_prep's LSE log2e and Delta. dq_acc, dk, dv, S, Hq, group, sm_scale, causal: as BWD_PARAMS.
// ---------------------------------------------------------------------------------------------------------------------
// One step's copies into a stage (Q at dst_q, dO a tile after it, LSE / Delta at dst_lsd): Q and dO of query tile m0
// of head h, HEAD_DIM / 64 boxes each (rows past S zero-filled by TMA and counted in the bytes), and the tile's 512
// bytes of lsd; all complete on `bar`, which this thread arrives on with the bytes to expect.
__device__ __forceinline__ void tma_step(unsigned dst_q, unsigned dst_lsd, const TmaMap* tq, const TmaMap* tdo,
                                         const float* lsd_tile, int h, int m0, int b, unsigned bar)
{
    mbar_arrive_expect_tx(bar, 2 * TILE_BYTES + 2 * BLOCK_M * 4);
#pragma unroll
    for (int c = 0; c < HEAD_DIM / 64; ++c) {
        tma_load_4d(dst_q + c * BOX_BYTES, tq, 64 * c, h, m0, b, bar);
        tma_load_4d(dst_q + TILE_BYTES + c * BOX_BYTES, tdo, 64 * c, h, m0, b, bar);
    }
    bulk_load(dst_lsd, lsd_tile, 2 * BLOCK_M * 4, bar);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) attn_bwd_05_tma(
    const __grid_constant__ TmaMap tma_q, const __grid_constant__ TmaMap tma_k, const __grid_constant__ TmaMap tma_v,
    const __grid_constant__ TmaMap tma_do, const float* __restrict__ lsd, float* __restrict__ dq_acc,
    elem_t* __restrict__ dk, elem_t* __restrict__ dv, int S, int Hq, int group, float sm_scale, int causal)
{
    unsigned char* smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);   // tiles 1024-byte aligned
    unsigned sK = smem_u32(smem), sV = sK + TILE_BYTES, sdS = sK + 4 * TILE_BYTES;
    const unsigned full0 = sK + BAR_OFF, kv_full = full0 + 16;                 // full[s] = full0 + 8 s
    // stage s: Q, dO at byte q_off(s) of smem, LSE log2e and Delta (2 x 64 floats) at lsd_off(s) - rung 04's places
    auto q_off = [](int s_) { return s_ ? STAGE1_OFF : 2 * TILE_BYTES; };
    auto lsd_off = [](int s_) { return s_ ? STAGE1_OFF + 2 * TILE_BYTES : 4 * TILE_BYTES + DS_BYTES; };

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int Hkv = Hq / group, b = blockIdx.y / Hkv, hkv = blockIdx.y % Hkv;
    const int n0 = blockIdx.x * BLOCK_N, n_tiles = (S + BLOCK_M - 1) / BLOCK_M;
    const float scale_log2 = sm_scale * LOG2E_F;
    const int m_start = causal ? n0 : 0;
    auto lsd_tile = [&](int h, int m0) { return lsd + lsd_offset((long long)b * Hq + h, n_tiles, m0); };

    if (threadIdx.x == 0) {                               // the barriers, then K, V and the first step's copies
        mbar_init(full0, 1);
        mbar_init(full0 + 8, 1);
        mbar_init(kv_full, 1);
        mbar_init_fence();
        mbar_arrive_expect_tx(kv_full, 2 * TILE_BYTES);
#pragma unroll
        for (int c = 0; c < HEAD_DIM / 64; ++c) {
            tma_load_4d(sK + c * BOX_BYTES, &tma_k, 64 * c, hkv, n0, b, kv_full);
            tma_load_4d(sV + c * BOX_BYTES, &tma_v, 64 * c, hkv, n0, b, kv_full);
        }
        const int h = hkv * group;
        tma_step(sK + q_off(0), sK + lsd_off(0), &tma_q, &tma_do, lsd_tile(h, m_start), h, m_start, b, full0);
    }
    __syncthreads();                                      // no thread waits on a barrier before it is initialised

    float acc_dk[HEAD_DIM / 2], acc_dv[HEAD_DIM / 2];     // n8 tile j of d in [4 j .. 4 j + 3]: mma's C fragment
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) acc_dk[i] = acc_dv[i] = 0.f;
    const int key_a = n0 + 16 * warp + g, key_b = key_a + 8;                   // this thread's two keys
    WAIT(kv_full, 0);

    int step = 0;                                         // steps so far: this one's stage is step & 1
    for (int h = hkv * group; h < (hkv + 1) * group; ++h) {       // the group's query heads
        const long long bh_rows = ((long long)b * Hq + h) * S;
        for (int m0 = m_start; m0 < S; m0 += BLOCK_M, ++step) {
            const int s = step & 1;
            asm volatile("" : "+r"(sK), "+r"(sV), "+r"(sdS));   // as rungs 01-04: no per-lane addresses hoisted
            __syncthreads();                              // the previous step's reads of its stage and of sdS are done
            auto issue_next = [&]() {                     // the next step (this head's next tile, else the next
                const bool last_tile = m0 + BLOCK_M >= S; // head's first) into the other stage
                const int hn = h + (last_tile ? 1 : 0), mn = last_tile ? m_start : m0 + BLOCK_M;
                if (hn < (hkv + 1) * group)
                    tma_step(sK + q_off(s ^ 1), sK + lsd_off(s ^ 1), &tma_q, &tma_do, lsd_tile(hn, mn), hn, mn, b,
                             full0 + 8 * (s ^ 1));
            };
            if (threadIdx.x == 0 && LOAD_RACE == 0) issue_next();  // a step ahead of its use
            WAIT(full0 + 8 * s, (step >> 1) & 1);    // this step's Q, dO, LSE, Delta have landed
            const unsigned sQ = sK + q_off(s), sdO = sQ + TILE_BYTES;
            const float* s_lse = reinterpret_cast<const float*>(smem + lsd_off(s));

            float st[4 * QT], dpt[4 * QT];
            sdp_t_wgmma(st, dpt, sK, sV, sQ, sdO);
            p_and_ds(st, dpt, s_lse, s_lse + BLOCK_M, scale_log2, key_a, key_b, S, causal && m0 == n0, m0, t);
            dvdk_dq_wgmma(acc_dv, acc_dk, st, dpt, smem, sQ, sdO, sdS, sK, dq_acc, bh_rows, m0, S, warp, g, t);
            if (threadIdx.x == 0 && LOAD_RACE > 0) issue_next();   // a test's build: just before its use (load_race)
        }
    }
    store_dv_dk(dv, dk, acc_dv, acc_dk, ((long long)b * Hkv + hkv) * S, key_a, key_b, S, sm_scale, t);
}

// ---------------------------------------------------------------------------------------------------------------------
// Rung 06: warp-specialized, FlashAttention-3's backward layout (the header's RUNG 06). grid (ceil(S / KEYS6), B Hkv),
// THREADS6 threads, SMEM_BYTES_6; the arguments of rung 05. Warpgroup 0 is the producer (thread 0 issues every copy);
// warpgroup 1 + c, c < CONSUMERS, owns keys n0 + 64 c .. + 63 and runs rung 05's steps on them.
// ---------------------------------------------------------------------------------------------------------------------

// Rung 10's order: the query tile of position j (m_start, m_start + BLOCK_M, ...) moved rot tiles on, modulo the
// T = n_tiles tiles - a block that starts at 0 then walks rot, rot + 1, .., T - 1, 0, .., rot - 1.
__device__ __forceinline__ int rotate_tile(int j, int rot, int n_tiles)
{
    const int m = j + rot * BLOCK_M;
    return m >= n_tiles * BLOCK_M ? m - n_tiles * BLOCK_M : m;
}

// The producer: K and V of every consumer once (on kv), then each step's Q, dO, LSE and Delta into stage step & 1 once
// the consumers released that stage's previous use (empty[s], CONSUMERS x 128 thread arrivals). ROT (rung 10): the
// query tiles in rotate_tile's order.
template <bool ROT = false>
__device__ __forceinline__ void producer_06(unsigned base, unsigned full0, const TmaMap* tq, const TmaMap* tk,
                                           const TmaMap* tv, const TmaMap* tdo, const float* lsd, int b, int hkv,
                                           int n0, int S, int Hq, int group, int m_start, int rot = 0)
{
    const unsigned empty0 = full0 + 16, kv_full = full0 + 32;     // the mbarriers at full0: full[2], empty[2], kv
    const int n_tiles = (S + BLOCK_M - 1) / BLOCK_M;
    mbar_arrive_expect_tx(kv_full, 2 * CONSUMERS * TILE_BYTES);
    for (int c = 0; c < CONSUMERS; ++c)
        for (int x = 0; x < HEAD_DIM / 64; ++x) {
            tma_load_4d(base + c * TILE_BYTES + x * BOX_BYTES, tk, 64 * x, hkv, n0 + 64 * c, b, kv_full);
            tma_load_4d(base + (CONSUMERS + c) * TILE_BYTES + x * BOX_BYTES, tv, 64 * x, hkv, n0 + 64 * c, b,
                        kv_full);
        }
    int step = 0;
    for (int h = hkv * group; h < (hkv + 1) * group; ++h)
        for (int j = m_start; j < S; j += BLOCK_M, ++step) {
            const int m0 = ROT ? rotate_tile(j, rot, n_tiles) : j;
            const int s = step & 1;
            if (step >= 2) WAIT(empty0 + 8 * s, ((step >> 1) - 1) & 1);
            load_race();
            const unsigned q = base + STAGE6_OFF + s * STAGE6_BYTES;
            tma_step(q, q + 2 * TILE_BYTES, tq, tdo, lsd + lsd_offset((long long)b * Hq + h, n_tiles, m0), h, m0, b,
                     full0 + 8 * s);
        }
}

// Rungs 07, 09-12: consumer c's 64 x 64 block of dQ (wgmma's accumulator dqh) into its staging block in shared memory
// in dq_index's layout (rows 16 warp + g and + 8; the pair 4 j + t of a row at p ^ ((row % 8) << 2), so that a warp's
// 8 rows fall in different banks), then one thread adds all of it into dq_acc's block for (bh, m0, col0) with one
// bulk reduction (rows past S add zeros: dS is 0 there). The caller has made sure the previous reduction has read the
// staging block.
__device__ __forceinline__ void reduce_dq_block(float* __restrict__ dq_acc, long long bh, int n_tiles, int m0,
                                                int col0, unsigned stage_dq, const float (&dqh)[32], int warp, int g,
                                                int t, int c, bool issuer)
{
    const int ra = 16 * warp + g, rb = ra + 8;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const int p = 4 * j + t;
        st_shared_f2(stage_dq + ra * 256 + 8 * (p ^ ((ra & 7) << 2)), dqh[4 * j], dqh[4 * j + 1]);
        st_shared_f2(stage_dq + rb * 256 + 8 * (p ^ ((rb & 7) << 2)), dqh[4 * j + 2], dqh[4 * j + 3]);
    }
    fence_proxy_async_smem();                             // generic stores, read by the bulk copy's async proxy
    named_bar_sync(3 + c, 128);                           // this consumer's block is complete
    if (issuer) {
        bulk_reduce_add_f32(dq_acc + dq_index(bh, n_tiles, m0, col0), stage_dq, DQ_BLOCK_BYTES);
        bulk_commit();
    }
}

// Consumer c: per step, wait for its stage; S^T, dP^T; P^T, dS^T; dS^T into this step's box; dV, dK; then (D = 128)
// dQ's 64-wide half c over all KEYS6 keys - both consumers' dS^T, so the two meet at named barrier 1 first - or
// (D = 64) dQ over its own 64 keys; the stage released once the step's last wgmma that reads it has retired. dQ's
// block goes into dq_acc by red.global.add per element (DQ_RED, rung 06) or (DQ_BULK, rung 07) through this
// consumer's staging block in shared memory and one bulk reduction (dq_acc tiled: dq_index); DQ_NONE (rung 08's dK,
// dV pass) computes no dQ at all, and no dS^T goes to shared memory.
enum { DQ_RED = 0, DQ_BULK = 1, DQ_NONE = 2, DQ_SCHED = 3 };   // DQ_SCHED: rungs 09, 10 (consumer_09)
template <int DQ>
__device__ __forceinline__ void consumer_ws(unsigned char* smem, unsigned full0, int c, float* __restrict__ dq_acc,
                                           elem_t* __restrict__ dk, elem_t* __restrict__ dv, int b, int hkv, int n0,
                                           int S, int Hq, int group, float sm_scale, int causal, int m_start)
{
    const unsigned base = smem_u32(smem), empty0 = full0 + 16, kv_full = full0 + 32;
    const unsigned stage_dq = base + BAR6_OFF + c * DQ_BLOCK_BYTES;   // rung 07: this consumer's dQ block
    const bool issuer = (threadIdx.x & 127) == 0;                      // rung 07: issues its bulk reductions
    const int n_tiles = (S + BLOCK_M - 1) / BLOCK_M;
    unsigned sK = base + c * TILE_BYTES, sV = base + (CONSUMERS + c) * TILE_BYTES;
    const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int key_a = n0 + 64 * c + 16 * warp + g, key_b = key_a + 8;   // this thread's two keys
    const float scale_log2 = sm_scale * LOG2E_F;
    float acc_dk[HEAD_DIM / 2], acc_dv[HEAD_DIM / 2];
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) acc_dk[i] = acc_dv[i] = 0.f;
    WAIT(kv_full, 0);

    int step = 0;
    for (int h = hkv * group; h < (hkv + 1) * group; ++h) {
        const long long bh_rows = ((long long)b * Hq + h) * S;
        for (int m0 = m_start; m0 < S; m0 += BLOCK_M, ++step) {
            const int s = step & 1;
            asm volatile("" : "+r"(sK), "+r"(sV));       // as rungs 01-05: no per-lane addresses hoisted
            WAIT(full0 + 8 * s, (step / 2) & 1);     // this step's stage has landed
            const unsigned sQ = base + STAGE6_OFF + s * STAGE6_BYTES, sdO = sQ + TILE_BYTES;
            const float* s_lse = reinterpret_cast<const float*>(smem + STAGE6_OFF + s * STAGE6_BYTES + 2 * TILE_BYTES);
            // dS^T boxes of this step: consumer x's at ds0 + x DS_BYTES (step parity s: the box a consumer writes was
            // last read two steps ago, before both passed named barrier 1 of the step in between)
            const unsigned ds0 = base + DS6_OFF + s * CONSUMERS * DS_BYTES;

            float st[4 * QT], dpt[4 * QT];
            sdp_t_wgmma(st, dpt, sK, sV, sQ, sdO);
            p_and_ds(st, dpt, s_lse, s_lse + BLOCK_M, scale_log2, key_a, key_b, S, causal && m0 < n0 + KEYS6, m0, t);

            // ---- 3. P^T, dS^T as A fragments; dS^T to this consumer's box; dV += P^T dO, dK += dS^T Q ----
            unsigned pa[BLOCK_M / 16][4], sa[BLOCK_M / 16][4];
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) {
                a_from_acc<pack_t>(pa[kq], st + 8 * kq, st + 8 * kq + 4);
                a_from_acc<pack_t>(sa[kq], dpt + 8 * kq, dpt + 8 * kq + 4);
                if constexpr (DQ != DQ_NONE)
                    store_ds_t(smem + (ds0 - base) + c * DS_BYTES, 16 * warp + g, kq, t, sa[kq]);
            }
            wgmma_fence();
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dv, pa[kq], desc_mnmajor(sdO, kq));
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dk, sa[kq], desc_mnmajor(sQ, kq));
            wgmma_commit();
            if constexpr (DQ == DQ_NONE) {                // rung 08: dQ is the other pass's; the stage is free once
                wgmma_wait<0>();                          // dV, dK have read it
                mbar_arrive(empty0 + 8 * s);              // every thread: its own LSE / Delta loads released
                fence_regs(acc_dv);
                fence_regs(acc_dk);
                continue;
            }
            fence_proxy_async_smem();                     // this thread's dS^T stores, before wgmma reads them

            // ---- 4. dQ, added into dq_acc ----
            const int qa = m0 + 16 * warp + g, qb = qa + 8;
            float* rowa = dq_acc + (bh_rows + qa) * HEAD_DIM;
            float* rowb = dq_acc + (bh_rows + qb) * HEAD_DIM;
            float dqh[32];
            // rung 07: the previous step's reduction has read this consumer's dQ block before anyone writes it again
            if (DQ == DQ_BULK && issuer) bulk_wait_read<0>();
#if HEAD_DIM == 128
            named_bar_sync(1, 256);                       // both consumers' dS^T are in their boxes
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < KEYS6 / 16; ++kk)        // dQ[:, 64 c ..] = sum over the block's keys of dS K
                wgmma_ss_tt_64x64(dqh, desc_mnmajor(ds0 + (kk / 4) * DS_BYTES, kk % 4),
                                  desc_mnmajor(base + (kk / 4) * TILE_BYTES + c * BOX_BYTES, kk % 4), kk > 0);
            const int col0 = 64 * c;
#else
            named_bar_sync(1 + c, 128);                   // this warpgroup's dS^T is in its box
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BLOCK_N / 16; ++kk)     // dQ over this consumer's 64 keys
                wgmma_ss_tt_64x64(dqh, desc_mnmajor(ds0 + c * DS_BYTES, kk), desc_mnmajor(sK, kk), kk > 0);
            const int col0 = 0;
#endif
            wgmma_commit();
            wgmma_wait<0>();                              // also retires step 3's dV, dK: the stage is free
            fence_regs(dqh);
            mbar_arrive(empty0 + 8 * s);                  // every thread (see empty[s] in RUNG 06)
            if constexpr (DQ == DQ_BULK) {
                reduce_dq_block(dq_acc, (long long)b * Hq + h, n_tiles, m0, col0, stage_dq, dqh, warp, g, t, c,
                                issuer);
            } else {
                add_dq(rowa, rowb, dqh, col0 + 2 * t, qa < S, qb < S);
            }
            fence_regs(acc_dv);
            fence_regs(acc_dk);
        }
    }
    if (DQ == DQ_BULK && issuer) bulk_wait<0>();         // the last reduction done before the block exits
    store_dv_dk(dv, dk, acc_dv, acc_dk, ((long long)b * (Hq / group) + hkv) * S, key_a, key_b, S, sm_scale, t);
}

// ---------------------------------------------------------------------------------------------------------------------
// Rung 09 (attn_bwd_09_ws_overlap): rung 07's block, producer and dQ path, with a consumer that orders its step so
// that the tensor cores have work while its threads compute (the header's RUNG 09).
// ---------------------------------------------------------------------------------------------------------------------

// P^T = exp2(S^T scale log2e - LSE log2e) in place (st), MASK: keys past S and, with diag, query < key set to 0 - the
// steps that need no mask (every key of the block in range, the tile below the diagonal) skip its compares. lse:
// the stage's LSE log2e (+inf past S), read as pairs (a thread's queries 8 nt + 2 t and + 1 are adjacent).
template <bool MASK>
__device__ __forceinline__ void p_from_s(float (&st)[4 * QT], const float* lse, float scale_log2, int key_a,
                                         int key_b, int S, bool diag, int m0, int t)
{
#pragma unroll
    for (int nt = 0; nt < QT; ++nt) {
        const float2 l = *reinterpret_cast<const float2*>(lse + 8 * nt + 2 * t);
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            float p = fast_exp2(st[4 * nt + e] * scale_log2 - ((e & 1) ? l.y : l.x));
            if (MASK) {
                const int qi = 8 * nt + 2 * t + (e & 1), key = e < 2 ? key_a : key_b;
                p = key >= S || (diag && m0 + qi < key) ? 0.f : p;
            }
            st[4 * nt + e] = p;
        }
    }
}

// dS^T = P^T (dP^T - Delta) in place (dpt), Delta read as pairs like p_from_s's LSE
__device__ __forceinline__ void ds_from_p(const float (&pt)[4 * QT], float (&dpt)[4 * QT], const float* delta, int t)
{
#pragma unroll
    for (int nt = 0; nt < QT; ++nt) {
        const float2 dl = *reinterpret_cast<const float2*>(delta + 8 * nt + 2 * t);
#pragma unroll
        for (int e = 0; e < 4; ++e) dpt[4 * nt + e] = pt[4 * nt + e] * (dpt[4 * nt + e] - ((e & 1) ? dl.y : dl.x));
    }
}

// Consumer c of rung 09. The step of rung 07 (same smem, same named barriers, same dQ staging), in this order:
//   2. S^T and dP^T as two commit groups; P^T computed once S^T has retired, while dP^T is still on the tensor cores
//   3. dV += P^T dO issued as soon as P^T is packed (it needs no other warpgroup); dS^T packed and stored meanwhile
//   4. at the named barrier, dQ (half c of d over the block's keys at D = 128) issued, then dK += dS^T Q; dQ retires
//      first, so its staging and bulk reduction run while dK is still on the tensor cores; the stage is released
//      once dK (the step's last reader of Q) has retired
// ROT (rung 10): the query tiles in rotate_tile's order, as the producer loads them. FUSE (rung 11): dQ's conversion
// here, off the barriers' path - while step j's dQ and dK run on the tensor cores, the issuing thread waits for step
// j-1's reduction to complete and counts it (its flag word for that step's parity), and the consumer converts step
// j-2's block into dq if its count was the block's last; the walk's last two blocks after the loop. No convert kernel.
// FUSE = 2 (rung 12): no count in the steps; at the end of its walk the block counts itself once per query head of its
// group, and the block whose count is a head's last (of gridDim.x key blocks) converts that whole head.
template <bool ROT = false, int FUSE = 0>
__device__ __forceinline__ void consumer_09(unsigned char* smem, unsigned full0, int c, float* __restrict__ dq_acc,
                                            elem_t* __restrict__ dk, elem_t* __restrict__ dv, int b, int hkv, int n0,
                                            int S, int Hq, int group, float sm_scale, int causal, int m_start,
                                            int rot = 0, elem_t* __restrict__ dq = nullptr,
                                            int* __restrict__ dq_count = nullptr)
{
    const unsigned base = smem_u32(smem), empty0 = full0 + 16, kv_full = full0 + 32;
    const unsigned stage_dq = base + BAR6_OFF + c * DQ_BLOCK_BYTES;   // this consumer's dQ block
    const bool issuer = (threadIdx.x & 127) == 0;                      // issues its bulk reductions
    const int n_tiles = (S + BLOCK_M - 1) / BLOCK_M;
    int* const flags = reinterpret_cast<int*>(smem + FLAG11_OFF) + 2 * c;   // rung 11: "whole", by step parity
    const int cb0 = HEAD_DIM == 128 ? 64 * c : 0;                       // rung 11: this consumer's column block
    long long bh1 = 0, bh2 = 0;                                         // rung 11: the blocks of steps j-1, j-2
    int m1 = -1, m2 = -1;
    const unsigned sK = base + c * TILE_BYTES, sV = base + (CONSUMERS + c) * TILE_BYTES;
    // descriptors built once: K and V K-major (S^T, dP^T's A), the block's K tiles MN-major (dQ's B)
    const hop_u64 dK = desc_kmajor(sK, 0), dV = desc_kmajor(sV, 0), dKmn = desc_mnmajor(base, 0);
    const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int key_a = n0 + 64 * c + 16 * warp + g, key_b = key_a + 8;   // this thread's two keys
    const float scale_log2 = sm_scale * LOG2E_F;
    const bool ragged = n0 + KEYS6 > S;                                 // the block has keys past S: every step masks
    float acc_dk[HEAD_DIM / 2], acc_dv[HEAD_DIM / 2];
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) acc_dk[i] = acc_dv[i] = 0.f;
    WAIT(kv_full, 0);

    int step = 0;
    for (int h = hkv * group; h < (hkv + 1) * group; ++h) {
        for (int j = m_start; j < S; j += BLOCK_M, ++step) {
            const int m0 = ROT ? rotate_tile(j, rot, n_tiles) : j;
            const int s = step & 1;
            WAIT(full0 + 8 * s, (step / 2) & 1);     // this step's stage has landed
            const unsigned sQ = base + STAGE6_OFF + s * STAGE6_BYTES, sdO = sQ + TILE_BYTES;
            const float* s_lse = reinterpret_cast<const float*>(smem + STAGE6_OFF + s * STAGE6_BYTES + 2 * TILE_BYTES);
            const unsigned ds0 = base + DS6_OFF + s * CONSUMERS * DS_BYTES;   // dS^T boxes, as rung 07
            // this stage's descriptors: Q, dO K-major (S^T, dP^T's B) and MN-major (dK's, dV's B); dS^T MN-major
            const hop_u64 dQk = desc_kmajor(sQ, 0), ddOk = desc_kmajor(sdO, 0);
            const hop_u64 dQmn = desc_mnmajor(sQ, 0), ddOmn = desc_mnmajor(sdO, 0), dSmn = desc_mnmajor(ds0, 0);

            // ---- 2. S^T, then dP^T, each its own group; P^T while dP^T runs; then dS^T ----
            float st[4 * QT], dpt[4 * QT];
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < DK; ++kk) {             // slice kk of d: box kk / 4, + 32 bytes a slice inside it
                const unsigned off = (kk / 4) * BOX_BYTES + 32 * (kk % 4);
                wgmma_ss_64x64(st, desc_at(dK, off), desc_at(dQk, off), kk > 0);
            }
            wgmma_commit();
#pragma unroll
            for (int kk = 0; kk < DK; ++kk) {
                const unsigned off = (kk / 4) * BOX_BYTES + 32 * (kk % 4);
                wgmma_ss_64x64(dpt, desc_at(dV, off), desc_at(ddOk, off), kk > 0);
            }
            wgmma_commit();
            wgmma_wait<1>();                              // S^T has retired (dP^T may still run)
            fence_regs(st);
            const bool diag = causal && m0 < n0 + KEYS6;
            if (ragged || diag)
                p_from_s<true>(st, s_lse, scale_log2, key_a, key_b, S, diag, m0, t);
            else
                p_from_s<false>(st, s_lse, scale_log2, key_a, key_b, S, false, m0, t);
            wgmma_wait<0>();
            fence_regs(dpt);
            ds_from_p(st, dpt, s_lse + BLOCK_M, t);

            // ---- 3. dV += P^T dO issued first; dS^T packed and into this consumer's box meanwhile ----
            unsigned pa[BLOCK_M / 16][4], sa[BLOCK_M / 16][4];
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) a_from_acc<pack_t>(pa[kq], st + 8 * kq, st + 8 * kq + 4);
            wgmma_fence();
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dv, pa[kq], desc_at(ddOmn, 2048 * kq));
            wgmma_commit();
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) {
                a_from_acc<pack_t>(sa[kq], dpt + 8 * kq, dpt + 8 * kq + 4);
                store_ds_t(smem + (ds0 - base) + c * DS_BYTES, 16 * warp + g, kq, t, sa[kq]);
            }
            fence_proxy_async_smem();                     // this thread's dS^T stores, before wgmma reads them
            if (issuer) bulk_wait_read<0>();              // the previous reduction has read the staging block

            // ---- 4. dQ, then dK += dS^T Q; dQ staged and reduced while dK runs ----
            float dqh[32];
#if HEAD_DIM == 128
            named_bar_sync(1, 256);                       // both consumers' dS^T are in their boxes
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < KEYS6 / 16; ++kk)        // dQ[:, 64 c ..] = sum over the block's keys of dS K
                wgmma_ss_tt_64x64(dqh, desc_at(dSmn, (kk / 4) * DS_BYTES + 2048 * (kk % 4)),
                                  desc_at(dKmn, (kk / 4) * TILE_BYTES + c * BOX_BYTES + 2048 * (kk % 4)), kk > 0);
            const int col0 = 64 * c;
#else
            named_bar_sync(1 + c, 128);                   // this warpgroup's dS^T is in its box
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BLOCK_N / 16; ++kk)     // dQ over this consumer's 64 keys
                wgmma_ss_tt_64x64(dqh, desc_at(dSmn, c * DS_BYTES + 2048 * kk),
                                  desc_at(dKmn, c * TILE_BYTES + 2048 * kk), kk > 0);
            const int col0 = 0;
#endif
            wgmma_commit();
#pragma unroll
            for (int kq = 0; kq < BLOCK_M / 16; ++kq) wgmma_rs_acc(acc_dk, sa[kq], desc_at(dQmn, 2048 * kq));
            wgmma_commit();
            if (FUSE == 1) {                              // rung 11, while dQ and dK run: step j-2's block into dq if
                if (m2 >= 0 && flags[step & 1])           // whole (its count, a step ago, was the last); then step
                    convert_dq_block(dq_acc, dq, bh2, n_tiles, m2, cb0, S, sm_scale, threadIdx.x & 127);
                if (issuer && m1 >= 0) {                  // j-1's reduction completed and counted
                    bulk_wait<0>();
                    flags[(step + 1) & 1] = count_dq_add(dq_count + (dq_index(bh1, n_tiles, m1, cb0) >> 12),
                                                         dq_block_adds(m1, causal));
                }
            }
            wgmma_wait<1>();                              // dV and dQ have retired; dK may still run
            fence_regs(dqh);
            reduce_dq_block(dq_acc, (long long)b * Hq + h, n_tiles, m0, col0, stage_dq, dqh, warp, g, t, c, issuer);
            if (FUSE == 1) {
                bh2 = bh1, m2 = m1;
                bh1 = (long long)b * Hq + h, m1 = m0;
            }
            wgmma_wait<0>();                              // dK has retired: nothing reads the stage any more
            mbar_arrive(empty0 + 8 * s);                  // every thread (see empty[s] in RUNG 06)
            fence_regs(acc_dv);
            fence_regs(acc_dk);
        }
    }
    if (FUSE == 1) {                                      // rung 11: the walk's last two blocks (steps N-2, N-1)
        if (issuer) {
            bulk_wait<0>();
            flags[(step + 1) & 1] = count_dq_add(dq_count + (dq_index(bh1, n_tiles, m1, cb0) >> 12),
                                                 dq_block_adds(m1, causal));
        }
        named_bar_sync(3 + c, 128);
        if (m2 >= 0 && flags[step & 1])
            convert_dq_block(dq_acc, dq, bh2, n_tiles, m2, cb0, S, sm_scale, threadIdx.x & 127);
        if (flags[(step + 1) & 1])
            convert_dq_block(dq_acc, dq, bh1, n_tiles, m1, cb0, S, sm_scale, threadIdx.x & 127);
    } else if (FUSE == 2) {                               // rung 12: the block counts itself once per head
        if (issuer) {
            bulk_wait<0>();                               // its consumer's reductions have completed
            asm volatile("fence.proxy.async.global;" ::: "memory");
        }
        int* const last = reinterpret_cast<int*>(smem + FLAG11_OFF);
        for (int h = hkv * group; h < (hkv + 1) * group; ++h) {
            const long long bh = (long long)b * Hq + h;
            named_bar_sync(5, 256);                       // both consumers done (and the previous head's flag read)
            if (threadIdx.x == 128) *last = count_dq_add(dq_count + bh, (int)gridDim.x);
            named_bar_sync(5, 256);
            if (*last)                                    // every key block has added into head bh: convert all of it
                for (int blk = c; blk < n_tiles * (HEAD_DIM / 64); blk += CONSUMERS)
                    convert_dq_block(dq_acc, dq, bh, n_tiles, 64 * (blk / (HEAD_DIM / 64)),
                                     64 * (blk % (HEAD_DIM / 64)), S, sm_scale, threadIdx.x & 127);
        }
    } else if (issuer) {
        bulk_wait<0>();                                   // the last reduction done before the block exits
    }
    store_dv_dk(dv, dk, acc_dv, acc_dk, ((long long)b * (Hq / group) + hkv) * S, key_a, key_b, S, sm_scale, t);
}

// Rung 09's block order when causal: the key blocks of a (batch, key/value head) differ in work (block n0 walks the
// query tiles from n0 on), and blockIdx.x = key block puts the heaviest block of the last heads among the grid's last
// blocks, so the GPU ends waiting on a few long ones. Here the grid is read in groups of LPT_HEADS heads, and inside a
// group key block first: every group's heaviest blocks start before its lightest ones, and the grid ends on light
// blocks (longest processing time first). Returns (key block, batch x key/value head).
__device__ __forceinline__ int2 longest_first(void)
{
    const int nb = gridDim.x, heads = gridDim.y, L = blockIdx.x + nb * blockIdx.y;
    const int grp = L / (LPT_HEADS * nb), r = L - grp * LPT_HEADS * nb;   // the group, the block inside it
    const int gh = min(LPT_HEADS, heads - LPT_HEADS * grp);                 // the group's heads (the last: fewer)
    return make_int2(r / gh, LPT_HEADS * grp + r % gh);
}

// Rungs 06, 07, 09-12 and 08's dK, dV pass: one setup, the producer, and the consumers (DQ: how dQ is added, if any).
// grid (ceil(S / KEYS6), B Hkv), THREADS6 threads, SMEM_BYTES_6 (SMEM_BYTES_7: DQ_BULK, DQ_SCHED); rung 05's arguments.
#define WS_PARAMS                                                                                                      \
    const __grid_constant__ TmaMap tma_q, const __grid_constant__ TmaMap tma_k, const __grid_constant__ TmaMap tma_v, \
        const __grid_constant__ TmaMap tma_do, const float* __restrict__ lsd, float* __restrict__ dq_acc,             \
        elem_t* __restrict__ dk, elem_t* __restrict__ dv, int S, int Hq, int group, float sm_scale, int causal
template <int DQ, bool ROT = false, int FUSE = 0>   // with DQ_SCHED: ROT rungs 10-12; FUSE 1 rung 11, 2 rung 12
__device__ __forceinline__ void ws_body(const TmaMap& tma_q, const TmaMap& tma_k, const TmaMap& tma_v,
                                        const TmaMap& tma_do, const float* __restrict__ lsd,
                                        float* __restrict__ dq_acc, elem_t* __restrict__ dk, elem_t* __restrict__ dv,
                                        int S, int Hq, int group, float sm_scale, int causal,
                                        elem_t* __restrict__ dq = nullptr, int* __restrict__ dq_count = nullptr)
{
    unsigned char* smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);   // tiles 1024-byte aligned
    const unsigned base = smem_u32(smem), full0 = base + (DQ == DQ_BULK || DQ == DQ_SCHED ? BAR7_OFF : BAR6_OFF);
    const int2 blk = DQ == DQ_SCHED && causal ? longest_first() : make_int2(blockIdx.x, blockIdx.y);
    const int Hkv = Hq / group, b = blk.y / Hkv, hkv = blk.y % Hkv;
    const int n0 = blk.x * KEYS6, m_start = causal ? n0 : 0;
    // rung 10, non-causal: key block blk.x of gridDim.x starts at query tile blk.x T / gridDim.x (T query tiles)
    const int rot = ROT && !causal ? blk.x * ((S + BLOCK_M - 1) / BLOCK_M) / (int)gridDim.x : 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; ++s) {
            mbar_init(full0 + 8 * s, 1);                  // the producer's arrival + the stage's bytes
            mbar_init(full0 + 16 + 8 * s, CONSUMERS * 128);   // every consumer thread
        }
        mbar_init(full0 + 32, 1);                         // kv: the producer + K's and V's bytes
        mbar_init_fence();
    }
    __syncthreads();                                      // the last block-wide barrier: then mbarriers only
    const int wg = threadIdx.x / 128;
    if (wg == 0) {                                        // warpgroup 0: the producer, one thread issuing every copy
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0)
            producer_06<ROT>(base, full0, &tma_q, &tma_k, &tma_v, &tma_do, lsd, b, hkv, n0, S, Hq, group, m_start,
                             rot);
        return;
    }
    setmaxnreg_inc<CONSUMER_REGS>();
    if constexpr (DQ == DQ_SCHED)    // the consumer index broadcast from lane 0: the compiler then knows it is the
        consumer_09<ROT, FUSE>(smem, full0, __shfl_sync(0xffffffffu, wg - 1, 0), dq_acc, dk, dv, b, hkv, n0, S, Hq,
                               group, sm_scale, causal, m_start, rot, dq, dq_count);   // same across a warp
    else
        consumer_ws<DQ>(smem, full0, wg - 1, dq_acc, dk, dv, b, hkv, n0, S, Hq, group, sm_scale, causal, m_start);
}
#define WS_ARGS tma_q, tma_k, tma_v, tma_do, lsd, dq_acc, dk, dv, S, Hq, group, sm_scale, causal
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_06_ws(WS_PARAMS) { ws_body<DQ_RED>(WS_ARGS); }
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_07_ws_bulk_dq(WS_PARAMS)
{
    ws_body<DQ_BULK>(WS_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_08_dkdv(WS_PARAMS) { ws_body<DQ_NONE>(WS_ARGS); }
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_09_ws_overlap(WS_PARAMS)
{
    ws_body<DQ_SCHED>(WS_ARGS);
}
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_10_ws_rotate(WS_PARAMS)
{
    ws_body<DQ_SCHED, true>(WS_ARGS);
}
// rung 11: SMEM_BYTES_11; dq (contiguous (B, Hq, S, D)) written here, dq_count (one int per dq_acc block) zeroed
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_11_ws_fused_dq(WS_PARAMS, elem_t* __restrict__ dq,
                                                                                   int* __restrict__ dq_count)
{
    ws_body<DQ_SCHED, true, 1>(WS_ARGS, dq, dq_count);
}
// rung 12: as rung 11, dq_count one int per query head (B Hq)
extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_12_ws_head_dq(WS_PARAMS, elem_t* __restrict__ dq,
                                                                                  int* __restrict__ dq_count)
{
    ws_body<DQ_SCHED, true, 2>(WS_ARGS, dq, dq_count);
}

// ---------------------------------------------------------------------------------------------------------------------
// Rung 08's dQ pass (attn_bwd_08_dq): dQ with no reduction at all - one block per (CONSUMERS x 64 query rows, batch,
// query head) walks the key tiles and recomputes what it needs. grid (ceil(S / (64 CONSUMERS)), B Hq), THREADS6
// threads, SMEM_BYTES_8DQ. Warpgroup 0 is the producer (Q and dO of the block's rows once, then K, V tile by tile
// through the ring); consumer c owns rows m0 + 64 c .. + 63 and per key tile of 64 computes S = Q K^T and dP = dO V^T
// (sdp_t_wgmma with the operands of rungs 02-07 in the other roles), P and dS with rows = queries (p_and_ds_rows),
// and dQ += dS K (A = dS from registers, B = K MN-major). Its epilogue writes dQ x sm_scale in the dtype: no
// accumulator in memory, no convert kernel, no zeroing. Runs after attn_bwd_08_dkdv (DQ_NONE), and both read
// attn_bwd_prep's lsd.
// ---------------------------------------------------------------------------------------------------------------------
// P = exp2(S scale log2e - LSE log2e) and dS = P (dP - Delta), rows = queries: this thread's rows a and b (lse2,
// delta per row), keys k0 + 8 nt + 2 t + {0, 1}; masked past S and, causal, where key > query
__device__ __forceinline__ void p_and_ds_rows(float (&sc)[4 * QT], float (&dp)[4 * QT], const float (&lse2)[2],
                                              const float (&delta)[2], float scale_log2, int row_a, int k0, int S,
                                              bool causal, int t)
{
#pragma unroll
    for (int nt = 0; nt < QT; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int key = k0 + 8 * nt + 2 * t + (e & 1), row = row_a + (e < 2 ? 0 : 8);
            float p = fast_exp2(sc[4 * nt + e] * scale_log2 - lse2[e >> 1]);
            if (key >= S || (causal && key > row)) p = 0.f;
            dp[4 * nt + e] = p * (dp[4 * nt + e] - delta[e >> 1]);
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS6, 1) attn_bwd_08_dq(
    const __grid_constant__ TmaMap tma_q, const __grid_constant__ TmaMap tma_k, const __grid_constant__ TmaMap tma_v,
    const __grid_constant__ TmaMap tma_do, const float* __restrict__ lsd, elem_t* __restrict__ dq, int S, int Hq,
    int group, float sm_scale, int causal)
{
    unsigned char* smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);   // tiles 1024-byte aligned
    const unsigned base = smem_u32(smem), full0 = base + BAR8_OFF, empty0 = full0 + 16, q_full = full0 + 32;
    const int rows = 64 * CONSUMERS, n_blk = (S + rows - 1) / rows;
    const int m0 = (causal ? n_blk - 1 - (int)blockIdx.x : (int)blockIdx.x) * rows;   // causal: longest rows first
    const int b = blockIdx.y / Hq, h = blockIdx.y % Hq, hkv = h / group;
    const int n_kt = ((causal ? min(S, m0 + rows) : S) + 63) / 64;                     // key tiles this block needs
    if (threadIdx.x == 0) {
        for (int s = 0; s < 2; ++s) {
            mbar_init(full0 + 8 * s, 1);                  // the producer + a stage's K and V bytes
            mbar_init(empty0 + 8 * s, CONSUMERS * 4);     // lane 0 of every consumer warp
        }
        mbar_init(q_full, 1);                             // the producer + Q's and dO's bytes
        mbar_init_fence();
    }
    __syncthreads();                                      // the last block-wide barrier: then mbarriers only
    const int wg = threadIdx.x / 128;
    if (wg == 0) {                                        // the producer: one thread
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x != 0) return;
        mbar_arrive_expect_tx(q_full, 2 * CONSUMERS * TILE_BYTES);
        for (int c = 0; c < CONSUMERS; ++c)
            for (int x = 0; x < HEAD_DIM / 64; ++x) {
                tma_load_4d(base + c * TILE_BYTES + x * BOX_BYTES, &tma_q, 64 * x, h, m0 + 64 * c, b, q_full);
                tma_load_4d(base + (CONSUMERS + c) * TILE_BYTES + x * BOX_BYTES, &tma_do, 64 * x, h, m0 + 64 * c, b,
                            q_full);
            }
        for (int j = 0; j < n_kt; ++j) {
            const int s = j & 1;
            if (j >= 2) WAIT(empty0 + 8 * s, ((j >> 1) - 1) & 1);
            const unsigned k_dst = base + RING8_OFF + s * 2 * TILE_BYTES;
            load_race();
            mbar_arrive_expect_tx(full0 + 8 * s, 2 * TILE_BYTES);
            for (int x = 0; x < HEAD_DIM / 64; ++x) {
                tma_load_4d(k_dst + x * BOX_BYTES, &tma_k, 64 * x, hkv, 64 * j, b, full0 + 8 * s);
                tma_load_4d(k_dst + TILE_BYTES + x * BOX_BYTES, &tma_v, 64 * x, hkv, 64 * j, b, full0 + 8 * s);
            }
        }
        return;
    }
    setmaxnreg_inc<CONSUMER_REGS>();

    // ---- consumer c: rows r0 .. r0 + 63; this thread's rows row_a = r0 + 16 warp + g and row_a + 8 ----
    const int c = wg - 1, r0 = m0 + 64 * c;
    const int warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int row_a = r0 + 16 * warp + g;
    const unsigned sQ = base + c * TILE_BYTES, sdO = base + (CONSUMERS + c) * TILE_BYTES;
    const float scale_log2 = sm_scale * LOG2E_F;
    float lse2[2] = {__int_as_float(0x7f800000), __int_as_float(0x7f800000)}, delta[2] = {0.f, 0.f};
    const int n_tiles = (S + 63) / 64;
    if (r0 < S) {                                         // rows past the last tile: P = 0 (lse2 = +inf)
        const float* tile = lsd + lsd_offset(blockIdx.y, n_tiles, r0);
        lse2[0] = tile[16 * warp + g], lse2[1] = tile[16 * warp + g + 8];
        delta[0] = tile[64 + 16 * warp + g], delta[1] = tile[64 + 16 * warp + g + 8];
    }
    float acc_dq[HEAD_DIM / 2];
#pragma unroll
    for (int i = 0; i < HEAD_DIM / 2; ++i) acc_dq[i] = 0.f;
    WAIT(q_full, 0);
    for (int j = 0; j < n_kt; ++j) {
        const int s = j & 1;
        WAIT(full0 + 8 * s, (j >> 1) & 1);
        if (causal && 64 * j > r0 + 63) {                 // consumer 0's last tile, above its diagonal: all masked -
            __syncwarp();                                 // released at once, its tensor-core time left to the other
            if (lane == 0) mbar_arrive(empty0 + 8 * s);
            continue;
        }
        const unsigned sK = base + RING8_OFF + s * 2 * TILE_BYTES, sV = sK + TILE_BYTES;
        float sc[4 * QT], dp[4 * QT];
        sdp_t_wgmma(sc, dp, sQ, sdO, sK, sV);            // S = Q K^T, dP = dO V^T (64 rows x 64 keys)
        p_and_ds_rows(sc, dp, lse2, delta, scale_log2, row_a, 64 * j, S, causal, t);
        unsigned sa[4][4];                                // dS as 4 A fragments of 16 keys
#pragma unroll
        for (int kq = 0; kq < 4; ++kq) a_from_acc<pack_t>(sa[kq], dp + 8 * kq, dp + 8 * kq + 4);
        wgmma_fence();
#pragma unroll
        for (int kq = 0; kq < 4; ++kq) wgmma_rs_acc(acc_dq, sa[kq], desc_mnmajor(sK, kq));   // dQ += dS K
        wgmma_commit();
        wgmma_wait<0>();
        fence_regs(acc_dq);
        __syncwarp();
        if (lane == 0) mbar_arrive(empty0 + 8 * s);       // K and V of this stage are read
    }
    // ---- dQ x sm_scale, rounded; rows past S not stored ----
    elem_t* out = dq + (long long)blockIdx.y * S * HEAD_DIM;
#pragma unroll
    for (int dt = 0; dt < DT; ++dt) {
        const int col = 8 * dt + 2 * t;
        if (row_a < S)
            reinterpret_cast<unsigned*>(out + (long long)row_a * HEAD_DIM + col)[0] =
                scaled_pair(make_float2(acc_dq[4 * dt], acc_dq[4 * dt + 1]), sm_scale);
        if (row_a + 8 < S)
            reinterpret_cast<unsigned*>(out + (long long)(row_a + 8) * HEAD_DIM + col)[0] =
                scaled_pair(make_float2(acc_dq[4 * dt + 2], acc_dq[4 * dt + 3]), sm_scale);
    }
}
