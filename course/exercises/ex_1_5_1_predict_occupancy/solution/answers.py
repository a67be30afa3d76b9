"""Exercise 1.5.1, a solution (worked in the README's folded answer)."""
ANSWERS = {
    (256, 32, 0): (8, "threads"),            # 2048 / 256 = 8 blocks; registers would allow 8 too (65536 / 8192)
    (128, 128, 0): (4, "registers"),         # 128 x 128 = 16384 registers per block: 65536 / 16384 = 4
    (1024, 40, 0): (1, "registers"),         # 40 x 32 = 1280 per warp, x 32 warps = 40960: one block (threads: 2)
    (128, 64, 48 * 1024): (4, "shared memory"),   # 49 KiB per block (48 + 1 reserved): 228 / 49 = 4
}
