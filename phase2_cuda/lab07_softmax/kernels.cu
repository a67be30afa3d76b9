// Lab 2.7 - softmax over the last axis of a row-major (rows, cols) matrix, the ladder of versions:
//     y[r, j] = exp(x[r, j] - m_r) / sum_k exp(x[r, k] - m_r),    m_r = max_k x[r, k]
// Subtracting the row max changes nothing mathematically and keeps exp() from overflowing (exp(89) is inf in fp32).
//
//   softmax_01{a,b,c}   three kernels: row max, row sum of exp, normalize (the input read three times)
//   softmax_02          one kernel, a block per row, the row staged in shared memory (one read, one write)
//   softmax_03          a warp per row, shuffles only, no barrier (three sweeps over the row)
//   softmax_04          online softmax: max and sum in ONE pass, a second pass writes
//   softmax_05_*        the row in registers, 16-byte loads: one read, one write, all loads in flight (fp32/16/bf16)
//   softmax_06{a,b}_*   online softmax with a row split over several blocks, for rows too long for one SM
// Run: python -m phase2_cuda.lab07_softmax (the measured figures are in this lab's README, not here).
//
// The two numbers: the input must be read once and the output written once, 2 x itemsize x rows x cols bytes;
// about 5 operations per element (max, subtract, exp, add, multiply). ~1 FLOP per byte in fp32 (2 in bf16) is far
// below any GPU's ridge point (tens of FLOP per byte): memory wins. 32768 x 4096 fp32 moves 1 GiB.
// Every version that reads the input more than once (or round-trips an intermediate through memory) pays for it in
// time, unless the second read hits a cache; what separates the rest is how many bytes each SM keeps in flight.
//
// Conventions shared by every kernel here (and stated in the lab's docstring):
//  * a row that is ALL -inf gives NaN (0/0), as in torch.softmax and NumPy; -inf elements in other rows give 0;
//    +inf anywhere in a row gives NaN for that row (inf - inf);
//  * arithmetic is fp32 whatever the storage: fp16 and bf16 are widened on load and rounded on store;
//  * exp(x - m) is computed as 2^((x - m) * log2(e)): x - m first (exact when x is near m), then the scale. The
//    fused form 2^(x * log2e - m * log2e) saves one instruction but rounds m * log2e: at |m| ~ 1e4 that is an
//    error of ~1e-3 in the exponent, 0.06% in every output - larger than fp32's tolerance;
//  * rows are indexed with 64-bit offsets (rows x cols may pass 2^31); a column index fits in an int.
// fp16 and bf16 are handled as raw 16-bit patterns with explicit conversions (common/cuda/half_bits.cuh); the warp
// and block reductions and the online-softmax merge come from common/cuda/reduce.cuh.

#include "reduce.cuh"

// The compile-time knobs below have NO default here: every value is set in ONE place, CONFIG in lab.py, and reaches
// this file as -DNAME=VALUE on every compile (the wrappers, --plan, the compile report, --tune, the tests). On a GPU
// with a tuning record (results/<gpu>/phase2_lab07_softmax_tuned.json) its EPT and STREAM_HINTS replace CONFIG's;
// `--set NAME=VALUE` overrides both, and every run prints where each value came from. Editing a #define here would
// change nothing, so a compile without the -D stops with the knob's name instead.
#ifndef SM_THREADS        // threads per block of rungs 01, 02, 04 and 06 (a power of two: the shared-memory trees)
#error "SM_THREADS is set by CONFIG in lab.py (python -m phase2_cuda.lab07_softmax --set SM_THREADS=...)"
#endif
#ifndef EPT               // rung 05: elements of the row each thread holds in registers (a multiple of 8)
#error "EPT is set by CONFIG in lab.py (python -m phase2_cuda.lab07_softmax --set EPT=...)"
#endif
#ifndef WARP_ROWS         // rung 05, short rows: rows (= warps) per block
#error "WARP_ROWS is set by CONFIG in lab.py (python -m phase2_cuda.lab07_softmax --set WARP_ROWS=...)"
#endif
#ifndef BLOCK_MAX_THREADS // rung 05, long rows: the largest block; caps registers at 65536 / BLOCK_MAX_THREADS
#error "BLOCK_MAX_THREADS is set by CONFIG in lab.py (--set BLOCK_MAX_THREADS=... overrides it)"
#endif
#ifndef SCALAR_BLOCK_MAX_THREADS  // the same for rows that take 4-byte / 2-byte loads (32 loads of their own address
#error "SCALAR_BLOCK_MAX_THREADS is set by CONFIG in lab.py (--set SCALAR_BLOCK_MAX_THREADS=... overrides it)"
#endif                            // each need more registers than 8 vector loads: fewer threads than the vector path)
#ifndef ONLINE_UNROLL     // rung 06: 16-byte loads issued back to back per thread before they are used
#error "ONLINE_UNROLL is set by CONFIG in lab.py (python -m phase2_cuda.lab07_softmax --set ONLINE_UNROLL=...)"
#endif
#ifndef STREAM_HINTS      // rungs 05-06: 0 = plain; 1 = evict-first loads and stores (each byte is touched once);
#error "STREAM_HINTS is set by CONFIG in lab.py (python -m phase2_cuda.lab07_softmax --set STREAM_HINTS=...)"
#endif                    // 2 = as 1, and 16-byte loads skip L1 with a hint to fetch 256-byte L2 blocks (sm_80+).
                          // A knob, not a rule: --tune times all three and records this GPU's winner

// =====================================================================================================================
// softmax_01: three kernels (a row max, a row sum of exp, a normalization), fp32
// Launch: each a block of SM_THREADS (256) threads per row, grid = rows; stats = 2 floats per row in memory.
// Each kernel strides over its row with 4-byte loads (coalesced: consecutive threads, consecutive floats) and
// reduces through a shared-memory tree (8 barriers).
// Bytes: the input is read THREE times (the matrix is far larger than L2, so each read comes from HBM) and the output
// written once: 4 x 4 x rows x cols bytes where 2 x 4 x rows x cols must move. Three launches.
// Prediction: at best half of the useful bandwidth (4 streams where 2 suffice), less with the tree's barriers;
// ~35-45% of the HBM ceiling at 32768 x 4096.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_01a_row_max(const float* __restrict__ x, float* __restrict__ stats, long long rows, int cols)
{
    __shared__ float s[SM_THREADS];
    const long long row = blockIdx.x;
    const float* xr = x + row * cols;
    float m = neg_inf();
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_tree_allreduce<MaxOp>(m, s);
    if (threadIdx.x == 0) stats[2 * row] = m;
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_01b_row_sum_exp(const float* __restrict__ x, float* __restrict__ stats, long long rows, int cols)
{
    __shared__ float s[SM_THREADS];
    const long long row = blockIdx.x;
    const float* xr = x + row * cols;
    const float m = stats[2 * row];
    float d = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) d += exp_shifted(xr[j], m);
    d = block_tree_allreduce<SumOp>(d, s);
    if (threadIdx.x == 0) stats[2 * row + 1] = d;
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_01c_normalize(const float* __restrict__ x, const float* __restrict__ stats, float* __restrict__ y,
                      long long rows, int cols)
{
    const long long row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    const float m = stats[2 * row], inv = 1.0f / stats[2 * row + 1];
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = exp_shifted(xr[j], m) * inv;
}

// =====================================================================================================================
// softmax_02_fused_smem: one kernel, a block per row, the row staged in shared memory, fp32
// Launch: SM_THREADS threads per row, grid = rows, dynamic shared memory = 4 x cols bytes (the wrapper raises the
// kernel's limit above 48 KiB, to the GPU's opt-in maximum per block: `--plan` prints the longest row that fits).
// What changed: fused. Pass 1 copies the row into shared memory while taking the max, pass 2 turns it into
// exp(x - m) in place while summing, pass 3 writes exp * (1/sum). Global traffic: one read, one write - the minimum.
// Each thread only touches its own slots of the staged row, so the staging needs no barrier; the two reductions are
// the same shared-memory trees as 01 (8 barriers each).
// Rows too long for shared memory stage in the OUTPUT row instead (global memory, same code; 2 more passes over y,
// mostly from L2): still correct at any length, and slow, which is what the later rungs fix.
// Prediction: ~2x over 01 (half the traffic, one launch); held back by 4-byte loads, the trees' barriers and
// occupancy (16 KiB of shared memory per block at 4096 columns: 13 blocks per SM by shared memory, 8 by threads).
// =====================================================================================================================
template <class Stage>
__device__ __forceinline__ void fused_row(const float* __restrict__ xr, float* __restrict__ yr, Stage stage, int cols,
                                          float* s)
{
    float m = neg_inf();
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = xr[j];
        stage[j] = v;
        m = fmaxf(m, v);
    }
    m = block_tree_allreduce<MaxOp>(m, s);
    float d = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float e = exp_shifted(stage[j], m);
        stage[j] = e;
        d += e;
    }
    d = block_tree_allreduce<SumOp>(d, s);
    const float inv = 1.0f / d;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = stage[j] * inv;
}

extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_02_fused_smem(const float* __restrict__ x, float* __restrict__ y, long long rows, int cols, int staged)
{
    extern __shared__ float row_smem[];
    __shared__ float s[SM_THREADS];
    const long long row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    if (staged) fused_row(xr, yr, row_smem, cols, s);   // the compiler knows row_smem is shared: LDS/STS
    else        fused_row(xr, yr, yr, cols, s);         // too long for shared memory: stage in y itself
}

// =====================================================================================================================
// softmax_03_warp_per_row: a warp per row, shuffles only, fp32
// Launch: blocks of 128 threads = 4 warps = 4 rows; grid = ceil(rows / 4).
// What changed: no shared memory, no barrier at all - a row's reductions are 5 shuffles each. But the row is read
// three times (max, sum, write): from L1 when the row is short, from L2 or HBM when it is long. 32 threads per row is
// also few: a 16 KiB row takes 128 dependent-ish loads per lane.
// Prediction: the best rung so far for short rows (hundreds of columns); at 4096 columns the re-reads mostly miss L1
// (64 warps x 16 KiB per SM >> 256 KiB) and the rung lands near 01-02.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(128)
softmax_03_warp_per_row(const float* __restrict__ x, float* __restrict__ y, long long rows, int cols)
{
    const long long row = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (row >= rows) return;                 // whole warps leave; there is no block barrier to miss
    const int lane = threadIdx.x & 31;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float m = neg_inf();
    for (int j = lane; j < cols; j += 32) m = fmaxf(m, xr[j]);
    m = warp_allreduce<MaxOp>(m);
    float d = 0.0f;
    for (int j = lane; j < cols; j += 32) d += exp_shifted(xr[j], m);
    d = warp_allreduce<SumOp>(d);
    const float inv = 1.0f / d;
    for (int j = lane; j < cols; j += 32) yr[j] = exp_shifted(xr[j], m) * inv;
}

// =====================================================================================================================
// softmax_04_online: online softmax, a block per row, fp32
// Launch: SM_THREADS threads per row, grid = rows.
// What changed: the max and the sum come out of ONE pass (the (m, d) pairs above), merged across the block with
// shuffles (one barrier); a second pass writes. Two reads instead of three, no shared-memory staging, any length.
// Each thread folds ONLINE_UNROLL loads at a time, so the rescale exp(m_old - m_new) costs one exp per batch,
// not per element (the paper's per-element form would double the exps).
// Prediction: the second read of a row follows the first within microseconds; with ~8 rows of 16 KiB in flight per
// SM (~17 MiB on 132 SMs, inside a large GPU's L2; `--plan` prints this GPU's), it mostly hits L2, so HBM sees
// ~1 read + 1 write:
// ~60-75% of the ceiling at 4096 columns, better than 02 (no tree barriers), below the single-read rung 05.
// =====================================================================================================================
extern "C" __global__ void __launch_bounds__(SM_THREADS)
softmax_04_online(const float* __restrict__ x, float* __restrict__ y, long long rows, int cols)
{
    __shared__ float red_m[32], red_d[32];
    const long long row = blockIdx.x;
    const float* xr = x + row * cols;
    float* yr = y + row * cols;
    float m = neg_inf(), d = 0.0f;
    for (int j0 = threadIdx.x; j0 < cols; j0 += blockDim.x * ONLINE_UNROLL) {
        float v[ONLINE_UNROLL];
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; ++u) {
            int j = j0 + u * blockDim.x;
            v[u] = (j < cols) ? xr[j] : neg_inf();
        }
        online_fold<ONLINE_UNROLL>(m, d, v);
    }
    block_online_allreduce(m, d, red_m, red_d);
    const float inv = 1.0f / d;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = exp_shifted(xr[j], m) * inv;
}

// =====================================================================================================================
// Storage types for rungs 05-06: fp32, fp16 and bf16 rows, widened to fp32 in registers.
// A 16-byte load (uint4, LDG.E.128) carries 4 fp32 or 8 fp16/bf16 values.
// =====================================================================================================================
// (F32 / F16 / BF16 tags, widen, narrow and pack2 come from half_bits.cuh)

template <class R>
__device__ __forceinline__ R ld_stream(const R* p)
{
#if STREAM_HINTS
    return __ldcs(p);
#else
    return __ldg(p);
#endif
}
__device__ __forceinline__ uint4 ld_stream(const uint4* p)
{
#if STREAM_HINTS == 2 && __CUDA_ARCH__ >= 800
    uint4 u;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w) : "l"(p));
    return u;
#elif STREAM_HINTS
    return __ldcs(p);
#else
    return __ldg(p);
#endif
}
template <class R>
__device__ __forceinline__ void st_stream(R* p, R v)
{
#if STREAM_HINTS
    __stcs(p, v);
#else
    *p = v;
#endif
}

// Load W consecutive values (W = T::V: one 16-byte vector; W = 1: one scalar) starting at p, widened into f[0..W).
template <class T, int W>
__device__ __forceinline__ void load_w(const typename T::raw* p, float* f)
{
    if constexpr (W == 1) {
        f[0] = widen(T(), ld_stream(p));
    } else {
        const uint4 u = ld_stream(reinterpret_cast<const uint4*>(p));
        const unsigned int w[4] = {u.x, u.y, u.z, u.w};
        if constexpr (T::V == 4) {
#pragma unroll
            for (int k = 0; k < 4; ++k) f[k] = __uint_as_float(w[k]);
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                f[2 * k] = widen(T(), (typename T::raw)(w[k] & 0xffffu));
                f[2 * k + 1] = widen(T(), (typename T::raw)(w[k] >> 16));
            }
        }
    }
}

template <class T, int W>
__device__ __forceinline__ void store_w(typename T::raw* p, const float* f)
{
    if constexpr (W == 1) {
        st_stream(p, narrow(T(), f[0]));
    } else {
        unsigned int w[4];
        if constexpr (T::V == 4) {
#pragma unroll
            for (int k = 0; k < 4; ++k) w[k] = __float_as_uint(f[k]);
        } else {
#pragma unroll
            for (int k = 0; k < 4; ++k) w[k] = pack2(T(), f[2 * k], f[2 * k + 1]);
        }
        st_stream(reinterpret_cast<uint4*>(p), make_uint4(w[0], w[1], w[2], w[3]));
    }
}

// =====================================================================================================================
// softmax_05: the row in registers, 16-byte loads, ONE read and ONE write (fp32, fp16, bf16)
// Each thread holds EPT (32) values of its row in registers. Thread t's j-th load covers elements
// (j * threads_per_row + t) * W ... + W - 1: each load instruction of a warp reads 32 consecutive 16-byte chunks
// (512 B, coalesced), and all EPT / W loads are issued before the first use (bytes in flight).
//   * short rows (cols <= 32 x EPT = 1024): a WARP per row (softmax_05_warp_rows_*), WARP_ROWS rows per block,
//     reductions are 5 shuffles, no barrier;
//   * long rows (cols <= BLOCK_MAX_THREADS x EPT = 32768): a BLOCK per row (softmax_05_block_row_*), as many
//     threads as the row needs (a multiple of 32), two block reductions (one barrier each); rows that need the
//     scalar path stop at SCALAR_BLOCK_MAX_THREADS x EPT = 16384 (their 32 separate addresses need more registers);
//   * longer rows do not fit on chip: softmax_06.
// What changed since 04: one read instead of two (the row never leaves the registers), 16-byte loads (4x fewer load
// instructions for fp32, 8x for 16-bit types), all loads in flight at once. The cache hints (STREAM_HINTS) are a knob:
// evict-first sounds right for bytes touched once, yet whether it helps is measured (--tune), not assumed.
// Bytes in flight, the number that decides it: at 4096 fp32 columns a block is 128 threads holding 16 KiB; at 48
// registers per thread (sm_90), 10 blocks fit per SM (65536 registers), so up to 160 KiB of loads can be in flight
// per SM, several times what Little's law needs to keep HBM busy (bandwidth x ~1 us of latency / SMs: a few tens of
// KiB on a large GPU; `--plan` prints this GPU's figure and rung 05's blocks per SM on it). A bf16 row of 4096 is
// 8 KiB and its kernel needs 64 registers (raw and widened values overlap while converting): 8 blocks, 64 KiB per
// SM - the thinnest margin of the three targets. At 32768 fp32 columns one 1024-thread block per SM holds
// the whole 128 KiB row; while it reduces, the other SMs' loads keep HBM busy.
// Instructions matter too for 16-bit rows (2 bytes per element, the same ~8 instructions per element as fp32), hence
// the single-instruction exp (fast_exp2) and the packed conversions (pack2).
// The alignment rule: the 16-byte path needs the row start on a 16-byte boundary (base aligned and cols x itemsize a
// multiple of 16); otherwise the wrapper picks the *_scalar kernels (same code, W = 1, still coalesced).
// Prediction: within ~10% of the HBM ceiling at 32768 x 4096 fp32, i.e. >= 1.2x torch.compile; 16-bit rows carry half
// the bytes for the same instruction count, so bf16 lands further from the ceiling (~75-85%), yet ~2x torch.compile,
// whose bf16 softmax runs at about half the ceiling.
// =====================================================================================================================
template <class T, int W, bool BLOCK>
__device__ __forceinline__ void row_in_registers(const typename T::raw* __restrict__ xr, typename T::raw* __restrict__ yr,
                                                 int cols, int t, int nt, float* red_max, float* red_sum)
{
    static_assert(EPT % 8 == 0, "EPT must be a multiple of 8 (one 16-byte vector of a 16-bit type)");
    constexpr int NL = EPT / W;
    float v[EPT];
#pragma unroll
    for (int j = 0; j < NL; ++j) {
        const int e = (j * nt + t) * W;
        if (e < cols) {
            load_w<T, W>(xr + e, v + j * W);
        } else {
#pragma unroll
            for (int k = 0; k < W; ++k) v[j * W + k] = neg_inf();   // padding: max ignores it, exp makes it 0
        }
    }
    float m = v[0];
#pragma unroll
    for (int k = 1; k < EPT; ++k) m = fmaxf(m, v[k]);
    m = BLOCK ? block_allreduce<MaxOp>(m, red_max) : warp_allreduce<MaxOp>(m);
    float d = 0.0f;
#pragma unroll
    for (int k = 0; k < EPT; ++k) {
        v[k] = exp_shifted(v[k], m);
        d += v[k];
    }
    d = BLOCK ? block_allreduce<SumOp>(d, red_sum) : warp_allreduce<SumOp>(d);
    const float inv = 1.0f / d;
#pragma unroll
    for (int j = 0; j < NL; ++j) {
        const int e = (j * nt + t) * W;
        if (e < cols) {
            float o[W];
#pragma unroll
            for (int k = 0; k < W; ++k) o[k] = v[j * W + k] * inv;
            store_w<T, W>(yr + e, o);
        }
    }
}

template <class T, int W>
__device__ __forceinline__ void warp_rows(const typename T::raw* __restrict__ x, typename T::raw* __restrict__ y,
                                          long long rows, int cols)
{
    const long long row = (long long)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5);
    if (row >= rows) return;
    row_in_registers<T, W, false>(x + row * cols, y + row * cols, cols, threadIdx.x & 31, 32, nullptr, nullptr);
}

template <class T, int W>
__device__ __forceinline__ void block_row(const typename T::raw* __restrict__ x, typename T::raw* __restrict__ y,
                                          long long rows, int cols)
{
    __shared__ float red_max[32], red_sum[32];
    const long long row = blockIdx.x;
    row_in_registers<T, W, true>(x + row * cols, y + row * cols, cols, threadIdx.x, blockDim.x, red_max, red_sum);
}

// One kernel per (storage type, load width): `_scalar` takes the W = 1 path for rows a 16-byte load cannot start on.
#define U16 unsigned short
#define WARP_ROWS_KERNEL(SFX, R, T, W)                                                                                 \
    extern "C" __global__ void __launch_bounds__(32 * WARP_ROWS)                                                       \
    softmax_05_warp_rows_##SFX(const R* x, R* y, long long rows, int cols) { warp_rows<T, W>(x, y, rows, cols); }
#define BLOCK_ROW_KERNEL(SFX, R, T, W, MAXT)                                                                          \
    extern "C" __global__ void __launch_bounds__(MAXT)                                                                 \
    softmax_05_block_row_##SFX(const R* x, R* y, long long rows, int cols) { block_row<T, W>(x, y, rows, cols); }
WARP_ROWS_KERNEL(f32, float, F32, 4)
WARP_ROWS_KERNEL(f32_scalar, float, F32, 1)
WARP_ROWS_KERNEL(f16, U16, F16, 8)
WARP_ROWS_KERNEL(f16_scalar, U16, F16, 1)
WARP_ROWS_KERNEL(bf16, U16, BF16, 8)
WARP_ROWS_KERNEL(bf16_scalar, U16, BF16, 1)
BLOCK_ROW_KERNEL(f32, float, F32, 4, BLOCK_MAX_THREADS)
BLOCK_ROW_KERNEL(f32_scalar, float, F32, 1, SCALAR_BLOCK_MAX_THREADS)
BLOCK_ROW_KERNEL(f16, U16, F16, 8, BLOCK_MAX_THREADS)
BLOCK_ROW_KERNEL(f16_scalar, U16, F16, 1, SCALAR_BLOCK_MAX_THREADS)
BLOCK_ROW_KERNEL(bf16, U16, BF16, 8, BLOCK_MAX_THREADS)
BLOCK_ROW_KERNEL(bf16_scalar, U16, BF16, 1, SCALAR_BLOCK_MAX_THREADS)

// =====================================================================================================================
// softmax_06: online softmax for rows longer than fit on chip, a row split over several blocks (fp32, fp16, bf16)
// Launch: grid = rows x chunks blocks of SM_THREADS threads (block b: row b / chunks, chunk b % chunks; `chunk`
// columns each, a multiple of the vector width); two kernels:
//   06a: each block folds its chunk into one (m, d) pair (16-byte loads, ONLINE_UNROLL in flight per thread), stored
//        in `stats` (2 floats per block);
//   06b: each block merges its row's pairs (exact: the merge rule above), then rereads its chunk and writes
//        exp(x - m) / d.
// Why split: a row of 262144 fp32 (1 MiB) fits in no SM, and a block per row would leave most SMs idle when rows are
// few; chunks let rows x chunks blocks fill the GPU. Bytes: two reads and one write, 1.5x the minimum - unless the
// whole matrix fits in L2 (tens of MiB on a large GPU), where 06b's reread comes from L2.
// Prediction: ~2/3 of the ceiling on matrices far larger than L2 (1.5x the bytes), close to 05's speed when the
// matrix fits in L2; for 262144-column rows it is the only single-launch-pair design that fills the GPU.
// =====================================================================================================================
template <class T, int W>
__device__ __forceinline__ void online_stats(const typename T::raw* __restrict__ x, float* __restrict__ stats,
                                             long long rows, int cols, int chunk, int chunks)
{
    __shared__ float red_m[32], red_d[32];
    const long long b = blockIdx.x;
    const long long row = b / chunks;
    const int c0 = (int)(b - row * chunks) * chunk;
    const int c1 = min(cols, c0 + chunk);
    const typename T::raw* xr = x + row * cols;
    float m = neg_inf(), d = 0.0f;
    for (int e0 = c0 + threadIdx.x * W; e0 < c1; e0 += blockDim.x * W * ONLINE_UNROLL) {
        float v[W * ONLINE_UNROLL];
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; ++u) {
            const int e = e0 + u * blockDim.x * W;
            if (e < c1) {
                load_w<T, W>(xr + e, v + u * W);
            } else {
#pragma unroll
                for (int k = 0; k < W; ++k) v[u * W + k] = neg_inf();
            }
        }
        online_fold<W * ONLINE_UNROLL>(m, d, v);
    }
    block_online_allreduce(m, d, red_m, red_d);
    if (threadIdx.x == 0) {
        stats[2 * b] = m;
        stats[2 * b + 1] = d;
    }
}

template <class T, int W>
__device__ __forceinline__ void online_normalize(const typename T::raw* __restrict__ x, typename T::raw* __restrict__ y,
                                                 const float* __restrict__ stats, long long rows, int cols, int chunk,
                                                 int chunks)
{
    __shared__ float red_m[32], red_d[32];
    const long long b = blockIdx.x;
    const long long row = b / chunks;
    const int c0 = (int)(b - row * chunks) * chunk;
    const int c1 = min(cols, c0 + chunk);
    float m = neg_inf(), d = 0.0f;
    for (int i = threadIdx.x; i < chunks; i += blockDim.x) {
        online_merge(m, d, stats[2 * (row * chunks + i)], stats[2 * (row * chunks + i) + 1]);
    }
    block_online_allreduce(m, d, red_m, red_d);
    const float inv = 1.0f / d;
    const typename T::raw* xr = x + row * cols;
    typename T::raw* yr = y + row * cols;
    for (int e0 = c0 + threadIdx.x * W; e0 < c1; e0 += blockDim.x * W * ONLINE_UNROLL) {
        float v[W * ONLINE_UNROLL];
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; ++u) {
            const int e = e0 + u * blockDim.x * W;
            if (e < c1) load_w<T, W>(xr + e, v + u * W);
        }
#pragma unroll
        for (int u = 0; u < ONLINE_UNROLL; ++u) {
            const int e = e0 + u * blockDim.x * W;
            if (e < c1) {
                float o[W];
#pragma unroll
                for (int k = 0; k < W; ++k) o[k] = exp_shifted(v[u * W + k], m) * inv;
                store_w<T, W>(yr + e, o);
            }
        }
    }
}

#define ONLINE_SPLIT_KERNELS(SFX, R, T, W)                                                                           \
    extern "C" __global__ void __launch_bounds__(SM_THREADS)                                                           \
    softmax_06a_online_stats_##SFX(const R* x, float* stats, long long rows, int cols, int chunk, int chunks)       \
    { online_stats<T, W>(x, stats, rows, cols, chunk, chunks); }                                                      \
    extern "C" __global__ void __launch_bounds__(SM_THREADS)                                                           \
    softmax_06b_online_normalize_##SFX(const R* x, R* y, const float* stats, long long rows, int cols, int chunk,    \
                                       int chunks)                                                                     \
    { online_normalize<T, W>(x, y, stats, rows, cols, chunk, chunks); }
ONLINE_SPLIT_KERNELS(f32, float, F32, 4)
ONLINE_SPLIT_KERNELS(f32_scalar, float, F32, 1)
ONLINE_SPLIT_KERNELS(f16, U16, F16, 8)
ONLINE_SPLIT_KERNELS(f16_scalar, U16, F16, 1)
ONLINE_SPLIT_KERNELS(bf16, U16, BF16, 8)
ONLINE_SPLIT_KERNELS(bf16_scalar, U16, BF16, 1)
