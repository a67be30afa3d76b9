"""Exercise 4.3.1, a solution. Warps: (BM / WM) x (BN / WN). Shared memory: STAGES x (BM BK + BK BN) x 2 bytes.
Spills: the register cap is min(255, 65536 / (threads x MIN_BLOCKS)); a 64 x 64 warp tile needs ~240 registers (128
accumulators, the A and B fragments, the addresses), a 64 x 32 one ~128.
"""
ANSWERS = {
    (128, 256, 32, 64, 64, 4, 1): (8, 96, False),     # cap 255: fits (242 registers)
    (128, 256, 32, 64, 64, 4, 2): (8, 96, True),      # cap 65536 / 512 = 128: the accumulators alone fill it
    (128, 128, 32, 64, 64, 4, 2): (4, 64, False),     # cap 65536 / 256 = 256 -> 255: fits
    (128, 128, 32, 64, 64, 4, 3): (4, 64, True),      # cap 65536 / 384 = 170: spills
    (256, 256, 32, 64, 64, 3, 1): (16, 96, True),     # 512 threads: cap 128 with no MIN_BLOCKS at all
    (128, 256, 32, 64, 32, 4, 1): (16, 96, False),    # 512 threads, cap 128, but 64 accumulators: fits
}
