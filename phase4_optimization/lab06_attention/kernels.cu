// Lab 4.6 - attention, the CUDA C side: a flash-attention forward written with the tensor cores' warp-level
// instruction, mma.sync.m16n8k16 - what Triton's tl.dot did for you, by hand.
// archs: sm_80 sm_90
//
//   attn_01_mma             the simplest correct version: Q in registers, mma.sync for Q K^T and P V, ldmatrix for
//                           every operand, P reused from the accumulators, online softmax; one K/V stage, plain layout
//   attn_02_mma_pipelined   rung 01 + cp.async double buffering (tile j+1 in flight while j is computed) + XOR swizzle
//   attn_02w_mma_wide       rung 02 with 32 query rows per warp: each K / V fragment feeds two mma (FlashAttention-2's
//                           shape), Q re-read from its own shared-memory area, 32-key tiles
// Run: python -m phase4_optimization.lab06_attention (the measured figures are in this lab's README, not here).
//
// Computes, per (batch b, head h):  O = softmax(sm_scale * Q K^T  [+ causal mask]) V  and  LSE = log(rowsum(exp(..)))
// with Q, K, V, O of shape (B, H, S, D) contiguous, bf16 (fp16 with -DATTN_FP16=1), fp32 accumulation, LSE (B, H, S)
// fp32 in natural log. HEAD_DIM (64 or 128) is a compile-time define; S is a runtime argument (any S >= 1).
//
// The two numbers for B=4 H=32 S=4096 D=128 (non-causal): FLOPs = 4 B H S^2 D = 1.10 TFLOP (two GEMMs, Q K^T and
// P V, 2 S^2 D each per head); bytes that must move = 4 B H S D x 2 B = 537 MB (read Q, K, V, write O): 2048 FLOP
// per byte, an order of magnitude above any GPU's ridge point, so compute-bound - IF the S x S score matrix never goes
// to memory (it would be B H S^2 x 4 B = 8.6 GB each way). That is the flash algorithm: a CTA keeps a block of Q rows,
// streams K/V in BLOCK_N-key tiles through shared memory and keeps one tile's scores in registers, with an online
// softmax (running max m, running sum l, rescaled accumulator). The price is that every Q block re-reads its head's
// K and V (2 MiB per head here) from L2: S / BLOCK_M x 2 MiB per head, 16 GiB in all at BLOCK_M = 64, 8 GiB at
// BLOCK_M = 128 - about 30x the HBM bytes, in L2 -> SM traffic. That is why 8 warps (128-row blocks) are worth
// measuring against 4, although 4 warps let 3 CTAs share an SM.
//
// Fragment layouts of mma.sync.m16n8k16 (PTX ISA, "Matrix Fragments for mma.m16n8k16"), lane = 4 g + t
// (g = lane >> 2 is the "group", t = lane & 3 the thread in the group, a "quad" = the 4 lanes sharing g):
//   A (16 x 16, row major), 4 x 32-bit regs of 2 halves: a0 = A[g][2t..2t+1], a1 = A[g+8][2t..2t+1],
//                                                          a2 = A[g][2t+8..2t+9], a3 = A[g+8][2t+8..2t+9]
//   B (16 x 8, "col": k down, n across), 2 regs:          b0 = B[2t..2t+1][g],   b1 = B[2t+8..2t+9][g]
//   C/D (16 x 8, fp32), 4 regs:                             c0,c1 = C[g][2t..2t+1], c2,c3 = C[g+8][2t..2t+1]
// The trick that makes P V free of shared memory: take two neighbouring 16 x 8 score tiles n = 2kk and 2kk+1 (keys
// 16kk .. 16kk+15). Thread (g, t) holds S[g][16kk+2t..+1] (c0,c1 of tile 2kk), S[g+8][16kk+2t..+1] (c2,c3 of 2kk),
// S[g][16kk+8+2t..+1] (c0,c1 of 2kk+1), S[g+8][16kk+8+2t..+1] (c2,c3 of 2kk+1): exactly a0, a1, a2, a3 of the A
// fragment of P[:, 16kk .. 16kk+15]. So P = exp(S - m) is packed pairwise to bf16x2 (lower column in the low half)
// and fed to the P V mma straight from the registers that computed it.
//
// ldmatrix.x4 loads four 8 x 8 16-bit matrices; lanes 8i .. 8i+7 give the row addresses of matrix i and every lane
// receives, in register i, row (lane >> 2), columns 2 (lane & 3) .. +1 of matrix i (with .trans: of its transpose).
//   Q (A operand):  matrices (rows 0-7, d 0-7), (rows 8-15, d 0-7), (rows 0-7, d 8-15), (rows 8-15, d 8-15)
//                   -> a0..a3.  Lane l addresses row (l & 15), column 8 (l >> 4).
//   K (B operand of Q K^T, B[d][key] = K[key][d]): K is stored key-major, so a K row IS a B column and the plain
//                   (non-transposed) ldmatrix gives b0/b1: matrices (keys 0-7, d 0-7), (keys 0-7, d 8-15),
//                   (keys 8-15, d 0-7), (keys 8-15, d 8-15) -> b0,b1 of key tile 0 and b0,b1 of key tile 1.
//                   Lane l addresses key (l & 7) + 8 (l >> 4), column 8 ((l >> 3) & 1).
//   V (B operand of P V, B[key][d] = V[key][d]): b0 needs V[2t][g], V[2t+1][g], two rows of one column, so the
//                   .trans variant: matrices (keys 0-7, d 0-7), (keys 8-15, d 0-7), (keys 0-7, d 8-15),
//                   (keys 8-15, d 8-15) -> b0,b1 of d tile 0 and b0,b1 of d tile 1.
//                   Lane l addresses key (l & 7) + 8 ((l >> 3) & 1), column 8 (l >> 4).
//
// Shared-memory layout: a tile row of D bf16 is D/8 chunks of 16 bytes. Unswizzled (rung 01), the 8 row addresses
// of one ldmatrix matrix are D x 2 bytes apart (128 or 256 B), all in the same 4 banks: an 8-way conflict. Rung 02
// stores chunk c of row r at chunk position c ^ (r & 7): the 8 rows of a matrix land in 8 different 16-byte bank
// groups (conflict-free), and a 16-byte cp.async of a row chunk is still one contiguous 16-byte write.
//
// One CTA per (BLOCK_M = 16 NWARPS query rows, b*h); warp w owns rows 16w .. 16w+15 of the block and holds its Q
// fragments in registers for the whole loop (loaded once through shared memory); the Q staging area is reused for K/V
// afterwards (rung 02w: 32 rows per warp, Q kept in an area of its own and re-read per k16 step). grid = (ceil(S /
// BLOCK_M), B*H), blocks of 32 NWARPS threads. Causal: block x processes query block (gridDim.x - 1 - x) so the longest
// rows start first (less tail at the end of the grid), key tiles past the diagonal are skipped and only the tiles that
// straddle it are masked. Ragged S: loads past S are zero-filled (cp.async src-size 0 / zero stores), their scores set
// to -inf, rows past S never stored.
// Kernel arguments: (const T* Q, const T* K, const T* V, T* O, float* LSE, int S, float scale_log2, int causal)
// with scale_log2 = sm_scale * log2(e): exp2(x * scale_log2) == exp(x * sm_scale) and exp2 is one MUFU.EX2.

// 16-bit values are carried as raw bit patterns (unsigned short) and converted with one PTX cvt. The PTX wrappers come
// from common/cuda: ldmatrix_x4(_trans), mma_16816 and swizzle<CPR> (mma_sm80.cuh), cp_async_16 / commit / wait and
// smem_u32 (cp_async.cuh), fast_exp2, neg_inf and pack2 (half_bits.cuh).
#include "mma_sm80.cuh"
#include "half_bits.cuh"

// Every value below comes from cuda_rungs.py as -DNAME=VALUE on every compile (cuda_rungs.defines: CONFIG, the
// architecture's register caps and the build's head dim and dtype); this file holds no value of its own, so a compile
// without one stops here.
#ifndef HEAD_DIM                // 64 or 128: the head dim of the build
#error "HEAD_DIM is set by cuda_rungs.defines(head_dim) in cuda_rungs.py (the build's head dim: 64 or 128)"
#endif
#ifndef NWARPS                  // BLOCK_M = 16 * NWARPS rows per CTA in 01/02 (at most 8: Q staged in 2 x BLOCK_N rows)
#error "NWARPS is set by CONFIG in cuda_rungs.py (python -m phase4_optimization.lab06_attention --set NWARPS=...)"
#endif
#ifndef BLOCK_N                 // keys per K/V tile
#error "BLOCK_N is set by CONFIG in cuda_rungs.py (BLOCK_N)"
#endif
// __launch_bounds__ minimum CTAs per SM, which caps registers at 65536 / (32 NWARPS MIN_BLOCKS): rungs 01 and 02
// take MIN_BLOCKS, rung 02w (two row tiles per warp, 32-key tiles, Q in its own shared-memory area: 2 stages + Q =
// 64 KiB at D = 128, 32 KiB at D = 64) MIN_BLOCKS_WIDE. cuda_rungs.py's min_blocks_default derives both per
// architecture and head dim (the caps each architecture's build was measured to take without a spill, no more CTAs
// than the SM's shared memory holds, halved for 8 warps) and `--set MIN_BLOCKS=2` overrides them.
#ifndef MIN_BLOCKS
#error "MIN_BLOCKS is set by cuda_rungs.py's min_blocks_default (python -m phase4_optimization.lab06_attention --set MIN_BLOCKS=...)"
#endif
#ifndef WIDE_BLOCK_N            // rung 02w's keys per K/V tile: at 64 its two tiles of S and O spill at D = 128
#error "WIDE_BLOCK_N is set by CONFIG in cuda_rungs.py (WIDE_BLOCK_N)"
#endif
#ifndef MIN_BLOCKS_WIDE
#error "MIN_BLOCKS_WIDE is set by cuda_rungs.py's min_blocks_default (python -m phase4_optimization.lab06_attention --set MIN_BLOCKS_WIDE=...)"
#endif
#ifndef ATTN_FP16               // 1: fp16 Q, K, V, O; 0: bf16
#error "ATTN_FP16 is set by cuda_rungs.defines(dtype) in cuda_rungs.py (the build's dtype)"
#endif

typedef unsigned short elem_t;            // a bf16 (or fp16) bit pattern
#if ATTN_FP16
typedef __half mma_t;                      // picks mma_16816's f16 form
typedef F16 pack_t;                        // picks pack2's cvt.rn.f16x2
#else
typedef __nv_bfloat16 mma_t;
typedef BF16 pack_t;
#endif

#define BLOCK_M (16 * NWARPS)
#define THREADS (32 * NWARPS)
#define CHUNKS (HEAD_DIM / 8)            // 16-byte chunks per row
#define DK (HEAD_DIM / 16)               // k16 steps of Q K^T over the head dimension
#define NT (BLOCK_N / 8)                 // n8 score tiles per K/V tile
#define DT (HEAD_DIM / 8)                // n8 output tiles over the head dimension
#define TILE_CHUNKS (BLOCK_N * CHUNKS)   // 16-byte chunks in one K (or V) tile
#define ROW_BYTES (HEAD_DIM * 2)
#define ROWS_PER_PASS (THREADS / CHUNKS) // rows one pass of all threads copies (16 bytes each)

static_assert(HEAD_DIM == 64 || HEAD_DIM == 128, "HEAD_DIM must be 64 or 128");
static_assert(BLOCK_N % 16 == 0 && BLOCK_N >= 16, "BLOCK_N must be a multiple of 16");
static_assert((NWARPS == 4 || NWARPS == 8) && BLOCK_M <= 2 * BLOCK_N, "4 or 8 warps; Q is staged in one K + V tile");
static_assert(ROWS_PER_PASS % 8 == 0, "a copy pass must cover whole 8-row swizzle groups");
static_assert(TILE_CHUNKS % THREADS == 0 && (BLOCK_M * CHUNKS) % THREADS == 0, "loads split evenly over threads");

// Byte offset of 16-byte chunk c of row r in a tile of CHUNKS (8 or 16) chunks per row: swizzle<> XORs c with r & 7.
template <bool SWIZZLE>
__device__ __forceinline__ unsigned chunk_off(int r, int c)
{
    return (unsigned)(SWIZZLE ? swizzle<CHUNKS>(r, c) : r * CHUNKS + c) * 16u;
}

// rows [row0, row0 + NROWS) of one head (base = start of the head, S rows of HEAD_DIM) into shared memory at dst;
// rows >= S become zeros. ASYNC: cp.async (no registers, overlaps with compute); else a plain 16-byte load + store.
// Thread tid copies chunk (tid % CHUNKS) of rows (tid / CHUNKS) + i ROWS_PER_PASS. ROWS_PER_PASS is a multiple of 8,
// so (row & 7), and with it the swizzle, is the same on every pass: one address per thread plus immediate offsets.
// A tile entirely below S (all but the last) takes the branch without a single bounds test.
template <bool SWIZZLE, bool ASYNC, int NROWS>
__device__ __forceinline__ void load_rows(unsigned dst, const elem_t* __restrict__ base, int row0, int S)
{
    constexpr int PASSES = NROWS / ROWS_PER_PASS;
    const int rt = threadIdx.x / CHUNKS, c = threadIdx.x % CHUNKS;
    const unsigned d0 = dst + chunk_off<SWIZZLE>(rt, c);
    const elem_t* src0 = base + (size_t)(row0 + rt) * HEAD_DIM + c * 8;
    if (row0 + NROWS <= S) {
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            const unsigned d = d0 + i * ROWS_PER_PASS * ROW_BYTES;
            const elem_t* src = src0 + i * ROWS_PER_PASS * HEAD_DIM;
            if (ASYNC) {
                cp_async_16(d, src, 16);
            } else {
                const uint4 v = __ldg(reinterpret_cast<const uint4*>(src));
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" :: "r"(d), "r"(v.x), "r"(v.y), "r"(v.z),
                             "r"(v.w));
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < PASSES; ++i) {
            const unsigned d = d0 + i * ROWS_PER_PASS * ROW_BYTES;
            const bool in = row0 + rt + i * ROWS_PER_PASS < S;
            // a row past S reads nothing, but the address handed to cp.async must still be a valid one
            const elem_t* src = in ? src0 + i * ROWS_PER_PASS * HEAD_DIM : base;
            if (ASYNC) {
                cp_async_16(d, src, in ? 16 : 0);
            } else {
                uint4 v = make_uint4(0u, 0u, 0u, 0u);
                if (in) v = __ldg(reinterpret_cast<const uint4*>(src));
                asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" :: "r"(d), "r"(v.x), "r"(v.y), "r"(v.z),
                             "r"(v.w));
            }
        }
    }
}

// Byte offset, within a 16-row group of a tile, of the 16-byte chunk (2 j + hi) (j = 0..3) + 8 (kk >> 2) that an
// ldmatrix lane reads, for a lane whose row has (row & 7) == r7: ((2 j + hi) ^ r7) only touches the low 3 bits of the
// chunk index, so the chunks of k-steps kk and kk + 4 differ by exactly 8 chunks (128 B) and four per-thread offsets
// (j = kk & 3) plus immediates address every ldmatrix of the loop. (The XOR is swizzle<>'s, written on the chunk
// alone: the lane's row offset is added separately, k_lane / v_lane below.)
template <bool SWIZZLE>
__device__ __forceinline__ unsigned lane_chunk(int j, int hi, int r7)
{
    return (unsigned)(SWIZZLE ? ((2 * j + hi) ^ r7) : (2 * j + hi)) * 16u;
}

// ---------------------------------------------------------------------------------------------------------------------
// The body shared by the rungs. PIPELINED: two K/V stages, tile j+1 copied by cp.async while tile j is computed,
// XOR-swizzled shared memory. Otherwise: one stage, load -> wait -> compute -> wait, unswizzled, plain loads.
// MT: m16 row tiles per warp. MT = 1 (rungs 01, 02): 16 rows, Q fragments held in registers for the whole loop. MT = 2
// (rung 02w): 32 rows, so every K and V fragment one ldmatrix brings in feeds two mma instead of one; the registers
// that frees go to the second tile's S and O, and Q stays in its own shared-memory area, re-read per k16 step.
// ---------------------------------------------------------------------------------------------------------------------
template <bool PIPELINED, int MT, int BN>
__device__ __forceinline__ void attention_body(const elem_t* __restrict__ Q, const elem_t* __restrict__ K,
                                               const elem_t* __restrict__ V, elem_t* __restrict__ O,
                                               float* __restrict__ LSE, int S, float scale_log2, int causal)
{
    static_assert(MT == 1 || (MT == 2 && PIPELINED), "two row tiles per warp only in the pipelined body");
    static_assert(BN % 16 == 0 && (BN * CHUNKS) % THREADS == 0, "whole k16 key steps, loads split evenly");
    constexpr int NTB = BN / 8;                         // n8 score tiles per K/V tile
    constexpr bool SW = PIPELINED;
    constexpr int BM = 16 * MT * NWARPS;                // query rows per CTA
    constexpr bool Q_IN_REGS = MT == 1;
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned sbase = smem_u32(smem);
    constexpr unsigned TILE_BYTES = BN * CHUNKS * 16;   // one K or one V tile
    constexpr unsigned STAGE_BYTES = 2 * TILE_BYTES;    // K then V
    // stage s at sbase + s * STAGE_BYTES. Q in registers: staged where the last stage will be (stage 1, or 0 when
    // unpipelined) and overwritten later; Q in shared memory: its own area after the two stages, for the whole loop
    const unsigned q_stage = !Q_IN_REGS ? sbase + 2 * STAGE_BYTES : PIPELINED ? sbase + STAGE_BYTES : sbase;

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const int m_block = causal ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
    const int m0 = m_block * BM;
    const size_t head = (size_t)blockIdx.y * (size_t)S * HEAD_DIM;
    const elem_t* Qh = Q + head;
    const elem_t* Kh = K + head;
    const elem_t* Vh = V + head;

    // keys this block needs: all of them, or (causal) up to its last row
    const int kv_end = causal ? min(S, m0 + BM) : S;
    const int n_tiles = (kv_end + BN - 1) / BN;

    // ---- Q: global -> shared (-> registers, once, when MT = 1) ----
    load_rows<SW, PIPELINED, BM>(q_stage, Qh, m0, S);
    if (PIPELINED) {
        cp_async_commit();
        load_rows<SW, true, BN>(sbase, Kh, 0, S);              // tile 0's K and V: stage 0
        load_rows<SW, true, BN>(sbase + TILE_BYTES, Vh, 0, S);
        cp_async_commit();
        cp_async_wait_all();
    }
    __syncthreads();
    // Q fragment of row tile mt, k16 step kk: ldmatrix lane l reads row 16 (MT warp + mt) + (l & 15), chunk
    // 2 kk + (l >> 4)
    const unsigned q_lane = q_stage + (unsigned)((MT * warp) * 16 + (lane & 15)) * ROW_BYTES;
    unsigned qf[Q_IN_REGS ? DK : 1][4];
    if (Q_IN_REGS) {
        const int r = warp * 16 + (lane & 15);
#pragma unroll
        for (int kk = 0; kk < DK; ++kk)
            ldmatrix_x4(qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3], q_stage + chunk_off<SW>(r, 2 * kk + (lane >> 4)));
    }

    float acc_o[MT][DT][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int i = 0; i < DT; ++i) acc_o[mt][i][0] = acc_o[mt][i][1] = acc_o[mt][i][2] = acc_o[mt][i][3] = 0.0f;
    float m_run[MT][2], l_run[MT][2];   // running max of the raw scores (rows g, g+8 of each row tile) and the running
    int row_a[MT];                      // sum of exp over this thread's columns (the quad adds up at the end)
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
        m_run[mt][0] = m_run[mt][1] = neg_inf();
        l_run[mt][0] = l_run[mt][1] = 0.0f;
        row_a[mt] = m0 + (MT * warp + mt) * 16 + g;                  // row_b = row_a + 8
    }
    // ldmatrix lane addresses (see the header): K lane l reads key (l & 7) + 8 (l >> 4), chunk 2 kk + ((l >> 3) & 1);
    // V lane l reads key (l & 7) + 8 ((l >> 3) & 1), chunk 2 dp + (l >> 4). Both rows have (row & 7) == (l & 7).
    const unsigned k_lane = ((lane & 7) + ((lane >> 4) << 3)) * ROW_BYTES;
    const unsigned v_lane = ((lane & 7) + (((lane >> 3) & 1) << 3)) * ROW_BYTES;
    unsigned k_x[4], v_x[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        k_x[i] = lane_chunk<SW>(i, (lane >> 3) & 1, lane & 7);
        v_x[i] = lane_chunk<SW>(i, lane >> 4, lane & 7);
    }

    for (int j = 0; j < n_tiles; ++j) {
        const int n0 = j * BN;
        unsigned kst, vst;
        if (PIPELINED) {
            // tile j has landed (the only group in flight) and every warp is done with tile j-1's stage (and Q)
            cp_async_wait_all();
            __syncthreads();
            if (j + 1 < n_tiles) {
                const unsigned nxt = sbase + ((j + 1) & 1) * STAGE_BYTES;
                load_rows<SW, true, BN>(nxt, Kh, n0 + BN, S);
                load_rows<SW, true, BN>(nxt + TILE_BYTES, Vh, n0 + BN, S);
                cp_async_commit();
            }
            kst = sbase + (j & 1) * STAGE_BYTES;
        } else {
            __syncthreads();                     // every warp is done with the previous tile (or with Q)
            load_rows<false, false, BN>(sbase, Kh, n0, S);
            load_rows<false, false, BN>(sbase + TILE_BYTES, Vh, n0, S);
            __syncthreads();
            kst = sbase;
        }
        vst = kst + TILE_BYTES;
        unsigned k_addr[4], v_addr[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            k_addr[i] = kst + k_lane + k_x[i];
            v_addr[i] = vst + v_lane + v_x[i];
        }

        // ---- S = Q K^T for this warp's 16 MT rows x BN keys (fp32 in registers) ----
        float s[MT][NTB][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int i = 0; i < NTB; ++i) s[mt][i][0] = s[mt][i][1] = s[mt][i][2] = s[mt][i][3] = 0.0f;
#pragma unroll
        for (int kk = 0; kk < DK; ++kk) {
            unsigned qm[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                if (Q_IN_REGS) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) qm[mt][e] = qf[Q_IN_REGS ? kk : 0][e];
                } else {         // row tile mt is 16 rows (16 ROW_BYTES) further; the rows keep their (row & 7)
                    ldmatrix_x4(qm[mt][0], qm[mt][1], qm[mt][2], qm[mt][3],
                                q_lane + mt * 16 * ROW_BYTES + lane_chunk<SW>(kk & 3, lane >> 4, lane & 7) +
                                    (kk >> 2) * 128);
                }
            }
#pragma unroll
            for (int np = 0; np < NTB / 2; ++np) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4(b0, b1, b2, b3, k_addr[kk & 3] + (kk >> 2) * 128 + np * 16 * ROW_BYTES);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_16816(s[mt][2 * np], qm[mt], b0, b1, mma_t());
                    mma_16816(s[mt][2 * np + 1], qm[mt], b2, b3, mma_t());
                }
            }
        }

        // ---- masks: keys past S (ragged last tile), keys past the row (causal, tiles across the diagonal) ----
        const bool ragged = n0 + BN > S;
        const bool diag = causal && (n0 + BN - 1 > m0 + MT * warp * 16);
        if (ragged || diag) {
#pragma unroll
            for (int mt = 0; mt < MT; ++mt)
#pragma unroll
                for (int i = 0; i < NTB; ++i) {
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int key = n0 + i * 8 + 2 * t + (e & 1);
                        const int row = (e < 2) ? row_a[mt] : row_a[mt] + 8;   // (this form: no spill in 02)
                        if (key >= S || (causal && key > row)) s[mt][i][e] = neg_inf();
                    }
                }
        }

#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
            // ---- online softmax: new row max over the quad, rescale, exponentiate ----
            float mx[2] = {m_run[mt][0], m_run[mt][1]};
#pragma unroll
            for (int i = 0; i < NTB; ++i) {
                mx[0] = fmaxf(mx[0], fmaxf(s[mt][i][0], s[mt][i][1]));
                mx[1] = fmaxf(mx[1], fmaxf(s[mt][i][2], s[mt][i][3]));
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
                mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
            }
            float alpha[2], msc[2];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                // a row with every score so far at -inf keeps m = -inf; use 0 so (-inf) - (-inf) never makes a NaN
                const float m_safe = mx[h] == neg_inf() ? 0.0f : mx[h];
                msc[h] = m_safe * scale_log2;
                alpha[h] = fast_exp2(m_run[mt][h] * scale_log2 - msc[h]);     // exp2(-inf) = 0 on the first tile
                m_run[mt][h] = mx[h];
                l_run[mt][h] *= alpha[h];
            }
#pragma unroll
            for (int i = 0; i < DT; ++i) {
                acc_o[mt][i][0] *= alpha[0];
                acc_o[mt][i][1] *= alpha[0];
                acc_o[mt][i][2] *= alpha[1];
                acc_o[mt][i][3] *= alpha[1];
            }
#pragma unroll
            for (int i = 0; i < NTB; ++i) {
                s[mt][i][0] = fast_exp2(fmaf(s[mt][i][0], scale_log2, -msc[0]));
                s[mt][i][1] = fast_exp2(fmaf(s[mt][i][1], scale_log2, -msc[0]));
                s[mt][i][2] = fast_exp2(fmaf(s[mt][i][2], scale_log2, -msc[1]));
                s[mt][i][3] = fast_exp2(fmaf(s[mt][i][3], scale_log2, -msc[1]));
                l_run[mt][0] += s[mt][i][0] + s[mt][i][1];
                l_run[mt][1] += s[mt][i][2] + s[mt][i][3];
            }
        }

        // ---- O += P V: P packed from the score accumulators (see the header), V through ldmatrix.trans ----
#pragma unroll
        for (int kk = 0; kk < NTB / 2; ++kk) {
            unsigned pa[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) a_from_acc<pack_t>(pa[mt], s[mt][2 * kk], s[mt][2 * kk + 1]);
#pragma unroll
            for (int dp = 0; dp < DT / 2; ++dp) {
                unsigned b0, b1, b2, b3;
                ldmatrix_x4_trans(b0, b1, b2, b3, v_addr[dp & 3] + (dp >> 2) * 128 + kk * 16 * ROW_BYTES);
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    mma_16816(acc_o[mt][2 * dp], pa[mt], b0, b1, mma_t());
                    mma_16816(acc_o[mt][2 * dp + 1], pa[mt], b2, b3, mma_t());
                }
            }
        }
    }

    // ---- epilogue: the quad's partial sums, O / l, LSE = m sm_scale + ln l ----
    elem_t* Oh = O + head;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            l_run[mt][h] += __shfl_xor_sync(0xffffffffu, l_run[mt][h], 1);
            l_run[mt][h] += __shfl_xor_sync(0xffffffffu, l_run[mt][h], 2);
        }
        const float inv[2] = {l_run[mt][0] > 0.0f ? 1.0f / l_run[mt][0] : 0.0f,
                              l_run[mt][1] > 0.0f ? 1.0f / l_run[mt][1] : 0.0f};
        const int ra = row_a[mt], rb = ra + 8;
#pragma unroll
        for (int i = 0; i < DT; ++i) {
            const int col = i * 8 + 2 * t;
            if (ra < S)
                *reinterpret_cast<unsigned*>(Oh + (size_t)ra * HEAD_DIM + col) =
                    pack2(pack_t(), acc_o[mt][i][0] * inv[0], acc_o[mt][i][1] * inv[0]);
            if (rb < S)
                *reinterpret_cast<unsigned*>(Oh + (size_t)rb * HEAD_DIM + col) =
                    pack2(pack_t(), acc_o[mt][i][2] * inv[1], acc_o[mt][i][3] * inv[1]);
        }
        if (t == 0) {
            const float ln2 = 0.69314718055994531f;
            float* L = LSE + (size_t)blockIdx.y * S;
            if (ra < S) L[ra] = (m_run[mt][0] * scale_log2 + log2f(l_run[mt][0])) * ln2;
            if (rb < S) L[rb] = (m_run[mt][1] * scale_log2 + log2f(l_run[mt][1])) * ln2;
        }
    }
}

// =====================================================================================================================
// attn_01_mma: the simplest correct tensor-core version.
//   Launch: grid (ceil(S / BLOCK_M), B*H), 32 NWARPS threads, dynamic shared memory = one K + one V tile
//   (2 BLOCK_N HEAD_DIM x 2 B = 32 KiB at D = 128); Q staged there first.
//   Per CTA and K/V tile: 2 x BLOCK_N x D x 2 B from L2/HBM, 4 BLOCK_M BLOCK_N D FLOPs (NWARPS x 2 x NT x DK mma).
//   What it has: Q in registers, mma.sync m16n8k16 for both GEMMs, ldmatrix for every operand, P reused from the
//   accumulators, online softmax in registers. What it lacks: overlap (load, barrier, compute, barrier: the tensor
//   cores idle while a tile crosses from memory) and a conflict-free layout (ldmatrix rows 128/256 B apart: 8-way
//   bank conflicts). Loads are 16-byte LDG + STS through registers.
//   Prediction: well under half of rung 02 (each tile's load latency, ~1-2 us from L2/HBM, exposed every iteration,
//   and 8x the shared-memory wavefronts per ldmatrix).
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attn_01_mma(const elem_t* __restrict__ Q, const elem_t* __restrict__ K, const elem_t* __restrict__ V,
            elem_t* __restrict__ O, float* __restrict__ LSE, int S, float scale_log2, int causal)
{
    attention_body<false, 1, BLOCK_N>(Q, K, V, O, LSE, S, scale_log2, causal);
}

// =====================================================================================================================
// attn_02_mma_pipelined: rung 01 + cp.async double buffering + XOR swizzle.
//   Launch: as 01, dynamic shared memory = two stages of K + V (4 BLOCK_N HEAD_DIM x 2 B = 64 KiB at D = 128, above
//   the 48 KiB default: the wrapper opts in). Q is staged in stage 1 before the loop and copied to registers.
//   Changes: (1) cp.async.cg 16-byte copies (LDGSTS) go global -> shared without registers, and tile j+1's copy is
//   in flight while tile j is computed: one barrier per tile instead of two, the load latency hidden behind
//   128 (D=128) mma per warp; (2) chunk c of row r stored at c ^ (r & 7): every ldmatrix phase hits 32 distinct banks.
//   At 64 KiB per CTA three CTAs (12 warps) fit an sm_90 SM if registers allow (MIN_BLOCKS).
//   Prediction: 2-3x rung 01; >= 1.0x the SDPA flash backend (FlashAttention-2) at B=4 H=32 S=4096 D=128, which has the
//   same structure with 32 rows per warp (half the shared-memory reads per mma): that difference is what is left.
//   cuDNN's wgmma kernels are the ceiling this mma.sync design cannot reach.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
attn_02_mma_pipelined(const elem_t* __restrict__ Q, const elem_t* __restrict__ K, const elem_t* __restrict__ V,
                      elem_t* __restrict__ O, float* __restrict__ LSE, int S, float scale_log2, int causal)
{
    attention_body<true, 1, BLOCK_N>(Q, K, V, O, LSE, S, scale_log2, causal);
}

// =====================================================================================================================
// attn_02w_mma_wide: rung 02 with two m16 row tiles per warp (32 query rows; 128 per CTA of 4 warps).
//   Launch: grid (ceil(S / (32 NWARPS)), B*H), 32 NWARPS threads, dynamic shared memory = two stages of K + V
//   (WIDE_BLOCK_N = 32 keys each) and Q: (4 x 32 + 32 NWARPS) D x 2 B = 64 KiB at D = 128.
//   Changes: every K fragment (ldmatrix of Q K^T) and V fragment (ldmatrix.trans of P V) now feeds two mma, one per
//   row tile. The registers Q held in rung 02 now hold the second tile's S and O, so Q is re-read from shared memory
//   for every key tile, and the key tile is 32 wide (at 64 the two tiles of S spill at D = 128). Per 16 rows and 64
//   keys a warp issues 48 ldmatrix.x4 (16 of them Q) instead of 64, for the same 128 mma: rung 02 keeps the tensor
//   pipe (128 mma x 2 SM-clocks at mma.sync's rate) and the shared-memory pipe (64 x 512 B at 128 B a clock) equally
//   busy; this rung takes the shared-memory side to 3/4 of it. And half as many CTAs re-read each head's K and V
//   from L2 (128-row blocks).
//   Prediction: 1.03-1.10x rung 02, at or just above SDPA's FlashAttention-2 backend (4 warps, 128 rows, 32 per
//   warp like this rung). Costs: 8 warps per SM instead of 12 to hide latency, twice the barriers per key (32-key
//   tiles), and Q re-read per tile.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS_WIDE)
attn_02w_mma_wide(const elem_t* __restrict__ Q, const elem_t* __restrict__ K, const elem_t* __restrict__ V,
                 elem_t* __restrict__ O, float* __restrict__ LSE, int S, float scale_log2, int causal)
{
    attention_body<true, 2, WIDE_BLOCK_N>(Q, K, V, O, LSE, S, scale_log2, causal);
}
