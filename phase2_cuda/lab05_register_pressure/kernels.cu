// Lab 2.5 - register pressure: one kernel whose work per thread is a compile-time parameter (WORK), so that
// registers, occupancy, spills and time can be read off one setting at a time.
//
//   colnorm_01_registers       WORK rows per thread in a register array (compile-time indices): registers follow WORK
//   colnorm_02_launch_bounds   FIXED_WORK rows under __launch_bounds__(THREADS, MIN_BLOCKS): a register cap
//   colnorm_03_runtime_index   the same array indexed at run time: it lives in local memory, yet "0 bytes spilled"
// Run: python -m phase2_cuda.lab05_register_pressure (the measured figures are in this lab's README, not here).
//
// The operation: normalize every column of a rows x cols fp32 matrix (row-major), y[:, c] = x[:, c] / ||x[:, c]||.
// One thread owns one column and holds its rows (up to WORK) in a register array: it must keep all of them live,
// because the norm is known only after the last one is read. Consecutive threads own consecutive columns, so every
// load x[k * cols + c] of a warp is 32 consecutive floats (coalesced), whatever WORK is.
// Per element: 4 bytes read + 4 written, 3 FLOPs (an FMA for the sum of squares, a multiply); plus one rsqrt per
// column. 3/8 FLOP per byte: memory-bound, as long as enough loads are in flight.
//
// What WORK changes: each thread issues WORK independent loads before it can do anything else, so WORK x 4 bytes are
// in flight per thread (instruction-level parallelism), and it needs about WORK + 15 registers. Registers per SM are
// fixed (65,536), so more registers per thread means fewer resident threads (occupancy). Past 255 registers (the
// per-thread maximum), or past a cap you set, ptxas spills: it keeps some values in "local" memory (per-thread, in
// DRAM, cached in L1/L2), which costs extra loads and stores (STL/LDL in the SASS; "spill stores" in ptxas -v).
// Two ways to cap registers: __launch_bounds__(THREADS, MIN_BLOCKS) on one kernel (at most 65536 / (THREADS x
// MIN_BLOCKS) registers, so that MIN_BLOCKS blocks fit) and -maxrregcount=N for every kernel of a compilation.
//
// Launch (every kernel): blocks of THREADS threads, ceil(cols / THREADS) blocks. `probe` is null for timed runs; a
// non-null probe (2 x 1024 ints, zeroed) records, per SM, the largest number of warps that were resident at once:
// the measured occupancy of the very binary that was timed.

#ifndef WORK
#define WORK 16         // colnorm_01: rows a thread keeps in registers (the wrapper requires rows <= WORK)
#endif
#ifndef FIXED_WORK
#define FIXED_WORK 32   // colnorm_02 and _03: the same, held fixed while their own knob changes
#endif
#ifndef THREADS
#define THREADS 256     // threads per block; __launch_bounds__ promises the kernel is never launched with more
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1    // colnorm_02: resident blocks per SM to guarantee (1 = no register cap beyond 255)
#endif
#define PROBE_SLOTS 1024

// ---------------------------------------------------------------------------------------------------------------------
// Occupancy probe (instrumentation, not part of the lesson's arithmetic): warps entering and leaving each SM.
// %smid is the SM the block runs on. A block adds its warps to its SM's counter on entry and keeps the running
// maximum; it subtracts them after its last thread is done (the __syncthreads), before the slot is released.
// ---------------------------------------------------------------------------------------------------------------------
__device__ __forceinline__ unsigned sm_id()
{
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id % PROBE_SLOTS;
}

__device__ __forceinline__ void probe_enter(int* probe)
{
    if (probe != nullptr && threadIdx.x == 0) {
        int warps = (blockDim.x + 31) / 32;
        unsigned s = sm_id();
        atomicMax(&probe[PROBE_SLOTS + s], atomicAdd(&probe[s], warps) + warps);
    }
}

__device__ __forceinline__ void probe_leave(int* probe)
{
    if (probe != nullptr) {              // the same value for every thread of the block: the barrier is reached by all
        __syncthreads();
        if (threadIdx.x == 0) atomicSub(&probe[sm_id()], (int)((blockDim.x + 31) / 32));
    }
}

// The column normalization with the rows in a register array: every index into v is a compile-time constant (the
// loops are fully unrolled), which is what lets v live in registers.
template <int W>
__device__ __forceinline__ void colnorm_registers(const float* x, float* y, int rows, long long cols, long long c)
{
    float v[W];
#pragma unroll
    for (int k = 0; k < W; ++k) v[k] = (k < rows) ? x[(long long)k * cols + c] : 0.0f;   // W loads in flight
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < W; ++k) s = fmaf(v[k], v[k], s);
    const float r = rsqrtf(s);
#pragma unroll
    for (int k = 0; k < W; ++k)
        if (k < rows) y[(long long)k * cols + c] = v[k] * r;
}

// ---------------------------------------------------------------------------------------------------------------------
// colnorm_01_registers
// x and y are deliberately not __restrict__: y may alias x, so after the first store the compiler may not re-read x
// and must keep every v[k] in a register (or spill it): the register count is an honest function of WORK.
// Prediction, from the compile report (NVRTC 13.0, sm_90; the lab prints it for any arch): registers climb with WORK
// (about 32 at WORK = 8, 88 at 64, 180 at 128) until the 255 ceiling, and from WORK = 160 on ptxas spills. Occupancy
// follows the registers down (the lab computes it from the allocation rules and asks the driver on a GPU).
// Time: the bytes in flight per SM are resident threads x WORK x 4 B, which grows with WORK faster than occupancy
// falls (2048 threads x 4 B = 8 KiB at WORK = 1, 512 x 256 B = 128 KiB at WORK = 64), so past WORK = 1 or 2 every
// setting should sit near the HBM ceiling: lower occupancy is not slower when each thread has more loads in flight.
// Spills add local-memory traffic (about 100-250 B stored and loaded per thread, vs 8 x WORK B of real traffic): a
// small cost while it stays in L1, a large one if it reaches DRAM.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void colnorm_01_registers(const float* x, float* y, int rows, long long cols, int* probe)
{
    probe_enter(probe);
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) colnorm_registers<WORK>(x, y, rows, cols, c);   // no early return: probe_leave has a barrier
    probe_leave(probe);
}

// ---------------------------------------------------------------------------------------------------------------------
// colnorm_02_launch_bounds
// What changed: __launch_bounds__(THREADS, MIN_BLOCKS), at a fixed FIXED_WORK = 32 rows per thread. The bound is a
// promise (never more than THREADS threads per block) and a request (fit MIN_BLOCKS blocks per SM, i.e. at most
// 65536 / (THREADS x MIN_BLOCKS) registers). With (256, 1), ptxas may use up to 255 registers and takes more than
// colnorm_01 does for the same work (80 vs 55 on sm_90 with NVRTC 13.0): the promise changes its register budget.
// The lab compiles it with MIN_BLOCKS = 4 (at most 64 registers) and 8 (at most 32: 100% occupancy), on an SM of
// 2048 threads; where an SM holds fewer, 8 blocks of 256 cannot be resident and ptxas settles for what fits (the
// compile report for that architecture shows what it chose).
// A __launch_bounds__ kernel ignores -maxrregcount; a plain kernel (01) obeys it.
// Prediction: with a cap of 32, ptxas spills (~100 B per thread); occupancy rises to 100% and the time does not
// improve, because occupancy was never the bottleneck and the spills add traffic.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
    colnorm_02_launch_bounds(const float* x, float* y, int rows, long long cols, int* probe)
{
    probe_enter(probe);
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) colnorm_registers<FIXED_WORK>(x, y, rows, cols, c);
    probe_leave(probe);
}

// ---------------------------------------------------------------------------------------------------------------------
// colnorm_03_runtime_index
// What changed: the loops run to the run-time `rows` instead of the compile-time WORK, so they cannot be fully
// unrolled and v[k] is indexed by a run-time k. Registers cannot be indexed at run time, so the whole array moves to
// local memory: a stack frame of 4 x FIXED_WORK bytes and an STL and an LDL per element at run time, yet ptxas
// reports 0 bytes of spills (it is not a spill: the array was never in registers). A common, silent mistake.
// Prediction: every element makes an extra round trip through local memory (a store and a load, L1-cached): slower
// than 01 at WORK = FIXED_WORK, by an amount the measurement shows.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void colnorm_03_runtime_index(const float* x, float* y, int rows, long long cols, int* probe)
{
    probe_enter(probe);
    const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float v[FIXED_WORK];
        for (int k = 0; k < rows; ++k) v[k] = x[(long long)k * cols + c];
        float s = 0.0f;
        for (int k = 0; k < rows; ++k) s = fmaf(v[k], v[k], s);
        const float r = rsqrtf(s);
        for (int k = 0; k < rows; ++k) y[(long long)k * cols + c] = v[k] * r;
    }
    probe_leave(probe);
}
