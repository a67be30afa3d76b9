"""Exercise 2.4.1, a solution. Blocks per SM: the smallest of 2048 / threads, 32, and the registers (24 x 32 = 768 per
warp, a multiple of 256: 65536 / (768 x warps per block)). A wave: 132 x blocks per SM. Little's law: 2 x threads x
16 B / 0.557 us, capped at 4341 GB/s.
"""
BLOCKS_PER_SM = {32: 32, 128: 16, 256: 8, 1024: 2}        # 32: the 32-block limit (1024 threads, half the SM)

# waves of 32: 4224 blocks, of 128: 2112, of 256: 1056, of 1024: 264
WAVES = {(256, 1320): 1.25, (256, 528): 0.5, (128, 2112): 1.0, (1024, 330): 1.25, (32, 1048576): 248.24}

# 132 blocks = 33,792 threads: 2 x 33792 x 16 / 557 ns = 1942 GB/s; twice the threads, twice that; a full wave of
# 270,336 threads asks for 15,500 GB/s: capped at the ceiling
GBPS = {(256, 132): 1942, (256, 264): 3884, (256, 1056): 4341}

# Little's law: the partial wave has f x 270,336 threads, bandwidth f x 15,500 GB/s (latency-bound), so its f of the
# work takes f x 4341 / (f x 15,500) = 0.28 of a wave whatever f is - until f x 15,500 reaches the ceiling (f >= 0.28)
TAIL = {1.25: (2, 1.25, 1.28), 1.1: (2, 1.1, 1.28), 2.5: (3, 2.5, 2.5)}
