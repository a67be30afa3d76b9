"""Exercise 2.4.1: waves, Little's law and the tail of a partial last wave, by hand.

The kernel is lab 2.4's scale_grid_stride_float4 (y = alpha x, one 16-byte load in flight per thread) on an H200:
sm_90, 132 SMs, and per SM 2048 threads, 32 blocks and 65536 registers (allocated per warp in units of 256). The
compile report gives the kernel 24 registers per thread on sm_90 (python -m phase2_cuda.lab04_launch_config --quick).
A wave is the number of blocks the whole GPU holds at once.

Little's law as lab 2.4 writes it: loads in flight = resident threads x 16 B, and reads are half of the bytes a scale
moves, so   GB/s = min(ceiling, 2 x resident threads x 16 B / latency).
Use the H200's fitted latency, 0.557 us, and its HBM ceiling, 4341 GB/s (phase2_lab04_launch_config.json).
"""
# threads per block -> resident blocks per SM
BLOCKS_PER_SM = {32: None, 128: None, 256: None, 1024: None}

# (threads per block, blocks in the grid) -> the grid in waves (a fraction: 0.5 means half a wave)
WAVES = {(256, 1320): None, (256, 528): None, (128, 2112): None, (1024, 330): None, (32, 1048576): None}

# (threads per block, blocks in the grid) -> the GB/s Little's law predicts (every block of the grid resident at once)
GBPS = {(256, 132): None, (256, 264): None, (256, 1056): None}

# A grid of w waves of 256-thread blocks, each block the same fixed work. The time of the whole grid, in units of the
# time one full wave takes, by three models: (quantized: every wave, even a partial one, costs a full wave's time;
# fluid: time proportional to the work; Little's law: full waves at the full wave's bandwidth, then the partial wave
# with only its own blocks resident, at the bandwidth Little's law gives their threads)
TAIL = {1.25: (None, None, None), 1.1: (None, None, None), 2.5: (None, None, None)}
