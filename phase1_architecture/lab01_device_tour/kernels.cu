// Lab 1.1 - the smoke test's CUDA C kernel: c[i] = a[i] + b[i], fp32, one thread per element. It exists to show that
// every layer works (NVRTC compiles it, CuPy loads the cubin, the GPU runs it), not to be fast: lab 1.2 takes the same
// operation up a ladder of versions and measures each one.
// Run: python -m phase1_architecture.lab01_device_tour (on a CPU the kernel is compiled, its registers and SASS shown).

// ---------------------------------------------------------------------------------------------------------------------
// tour_add
// Launch: blocks of 256 threads, ceil(n / 256) blocks. The bounds check keeps the last block's extra threads from
// writing past the end; the 64-bit index keeps the offset right past 2^31 elements.
// ---------------------------------------------------------------------------------------------------------------------
extern "C" __global__ void tour_add(const float* a, const float* b, float* c, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;  // widen before multiplying: 64-bit index
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
