// Lab 1.3 - thread, warp, block, grid: kernels that report where and when they ran, and what a divergent branch
// costs. The kernels:
//
//   hier_01_whoami                 every thread records its block, thread, warp, %laneid, %smid and two clocks
//   div_01_branch_on_lane_parity   thread = element, a branch on the element's parity: every warp runs both sides
//   div_02_branch_on_warp_index    the same code, threads remapped so each warp takes one side: no divergence
// Run: python -m phase1_architecture.lab03_thread_hierarchy (the measured figures are in this lab's README, not here).
//
// The special registers below are this lab's subject, so it reads them itself (inline PTX); no shared header has them.
// Special registers read with inline PTX (all architectures from sm_75 on have them):
//   %laneid       0..31, the thread's position inside its warp (the hardware's answer, not a formula)
//   %smid         the SM the thread's block runs on (fixed for the block's lifetime; numbering may have gaps)
//   %globaltimer  a 64-bit nanosecond counter shared by the whole GPU: comparable across SMs, so it can draw a
//                 timeline; its resolution is coarser than a clock cycle (tens of ns to ~1 us depending on the GPU;
//                 the lab prints the step it sees)
//   clock64()     the SM's own cycle counter: cycle-exact, but each SM counts from its own origin, so two SMs'
//                 values cannot be compared; use it for durations measured inside one block only.

__device__ __forceinline__ unsigned int sm_id()
{
    unsigned int r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned int lane_id()
{
    unsigned int r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// ---------------------------------------------------------------------------------------------------------------------
// hier_01_whoami
// Every thread writes one record of NFIELDS 64-bit values:
//   [block, threadIdx.x, threadIdx.y, thread index in block, warp, lane (%laneid), SM (%smid),
//    clock64 at start, %globaltimer at start, %globaltimer at end]
// Launch: a 1-D grid of 1-D or 2-D blocks (blockDim.x * blockDim.y <= 1024), ceil(n / threads per block) blocks;
// record r = block * threads per block + thread index in block, written only for r < n.
// The warp of a thread is (threadIdx.x + threadIdx.y * blockDim.x) / 32: warps are cut from the LINEARIZED thread
// index, x fastest, so a (16, 16) block's warp 0 is rows y = 0 and 1. The kernel stores both that formula's lane and
// the hardware's %laneid, and the test checks they agree.
// spin_cycles > 0 keeps every block resident for that many SM cycles, so the timeline shows how blocks are dealt to
// SMs in waves: a block starts only when an earlier one on that SM has left and freed its resources.
// Bytes: 80 per thread written; FLOPs: none. This is an observation kernel, not a speed test.
// Prediction: %laneid equals the formula's lane for every thread; blocks are not dealt out in %smid order; an SM holds
// as many spinning blocks at once as the occupancy calculator says (on an SM of 64 warps: 64 / 8 = 8 blocks of 256
// threads; `--plan` prints this GPU's), and a grid of 2.5 waves takes 3 x the spin time. What the timeline showed
// instead is in the README.
// ---------------------------------------------------------------------------------------------------------------------
#define NFIELDS 10

extern "C" __global__ void hier_01_whoami(long long* rec, long long n, long long spin_cycles)
{
    long long c0 = clock64();
    unsigned long long g0 = global_ns();
    if (spin_cycles > 0) {
        // clock64() is volatile, so the loop cannot be removed; every thread spins, so the whole block stays busy
        while (clock64() - c0 < spin_cycles) { }
    }
    unsigned long long g1 = global_ns();
    unsigned int tid = threadIdx.x + threadIdx.y * blockDim.x;
    long long r = (long long)blockIdx.x * (blockDim.x * blockDim.y) + tid;
    if (r < n) {
        long long* out = rec + r * NFIELDS;
        out[0] = blockIdx.x;
        out[1] = threadIdx.x;
        out[2] = threadIdx.y;
        out[3] = tid;
        out[4] = tid / 32;
        out[5] = lane_id();
        out[6] = sm_id();
        out[7] = c0;
        out[8] = (long long)g0;
        out[9] = (long long)g1;
    }
}

// ---------------------------------------------------------------------------------------------------------------------
// Warp divergence.
// Element i of the output is  f(x[i]) for even i,  g(x[i]) for odd i,  where f and g are `rounds` rounds of two
// different 32-bit integer hashes (shift, xor, multiply: 5 dependent integer instructions a round, the same count in
// both). With hundreds of rounds the work is almost all arithmetic (8 bytes moved per ~2500 instructions), so the
// time measures how many instruction slots the warps spend, and nothing else.
//
// The two kernels below run the SAME code on the same data; only the mapping of threads to elements differs.
//   div_01: thread t handles element t. Lanes 0, 2, 4, ... take the f branch, lanes 1, 3, ... the g branch: every
//           warp holds both paths, and a warp executes one instruction stream at a time, so it runs f with the odd
//           lanes masked off, then g with the even lanes masked off. Cost per warp: f + g.
//   div_02: warp 2p handles the even elements of the 64-element group p, warp 2p+1 the odd ones. Every lane of a
//           warp takes the same branch: cost per warp f (or g). Same total work, no divergence.
// Prediction: div_01 takes (f + g) / max(f, g) = 2.0x as long as div_02 (f and g cost the same). The absolute time
// may beat a 64-integer-ops-per-clock estimate: the IMAD of each round issues to the FMA pipe, beside the four
// SHF/LOP3 that share the integer ALU.
// The price div_02 pays is its access pattern: a warp reads 32 floats at a stride of 2 (8 sectors instead of 4),
// which is irrelevant here (moving the bytes takes a small fraction of the hashing time on any GPU: `--plan` prints
// both) but would not be for a memory-bound kernel.
// Launch: blocks of 256 threads (any multiple of 32); div_01 ceil(n / 256) blocks; div_02 enough blocks for
// 64 * ceil(n / 64) threads. Bytes: 8 n. Integer operations: ~5 n rounds.
// ---------------------------------------------------------------------------------------------------------------------
#define HASH_F 0x7feb352du
#define HASH_G 0x846ca68bu

__device__ __forceinline__ unsigned int hash_even(unsigned int v, int rounds)
{
    for (int r = 0; r < rounds; ++r) {
        v ^= v >> 16;
        v *= HASH_F;
        v ^= v >> 13;
    }
    return v;
}

__device__ __forceinline__ unsigned int hash_odd(unsigned int v, int rounds)
{
    for (int r = 0; r < rounds; ++r) {
        v ^= v >> 15;
        v *= HASH_G;
        v ^= v >> 11;
    }
    return v;
}

__device__ __forceinline__ unsigned int both_paths(unsigned int v, long long i, int rounds)
{
    // The branch the lesson is about: its condition is the parity of the element index.
    if ((i & 1) == 0) {
        v = hash_even(v, rounds);
    } else {
        v = hash_odd(v, rounds);
    }
    return v;
}

extern "C" __global__ void div_01_branch_on_lane_parity(const unsigned int* __restrict__ x,
                                                        unsigned int* __restrict__ y, long long n, int rounds)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;   // element = thread: parity = lane parity
    if (i < n) {
        y[i] = both_paths(x[i], i, rounds);
    }
}

extern "C" __global__ void div_02_branch_on_warp_index(const unsigned int* __restrict__ x,
                                                       unsigned int* __restrict__ y, long long n, int rounds)
{
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long warp = t >> 5;                  // global warp index (blockDim.x is a multiple of 32)
    long long lane = t & 31;
    // warps 2p and 2p+1 share the 64 elements 64p .. 64p+63: the even warp takes the even ones, the odd warp the odd
    long long i = ((warp >> 1) << 6) + 2 * lane + (warp & 1);            // parity of i = parity of the warp index
    if (i < n) {
        y[i] = both_paths(x[i], i, rounds);
    }
}
