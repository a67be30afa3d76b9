"""Exercise 1.5.1: predict the occupancy of four kernels on an H100/H200 (sm_90), by hand.

For each kernel, write how many blocks of it one SM holds at once, and which resource runs out first: one of
"threads", "blocks", "registers", "shared memory". Use the limits of sm_90 (lab 1.5's lesson lists them: 2048
threads, 32 blocks, 65536 registers and 228 KiB of shared memory per SM; registers are handed out per warp in units
of 256; each block also costs 1 KiB of shared memory reserved by the runtime).
"""
# (threads per block, registers per thread, shared memory per block in bytes) -> (blocks per SM, the limit)
ANSWERS = {
    (256, 32, 0): (None, None),
    (128, 128, 0): (None, None),
    (1024, 40, 0): (None, None),
    (128, 64, 48 * 1024): (None, None),
}
