"""Exercise 2.2.1: predict how many passes one warp's shared-memory load takes, then pad a tile.

Shared memory has 32 banks of 4 bytes: 4-byte word w lives in bank w % 32. One warp load is served in as many passes
as its most-asked bank has DISTINCT words (lanes reading the same word share it: a broadcast). Every access here is a
4-byte float; lane i is lane 0 .. 31 of the warp. Write a whole number of passes for each case.
"""
# lane i reads word s * i: the lane stride s -> passes
STRIDE_PASSES = {3: None, 6: None, 16: None, 24: None, 33: None, 64: None}

# a warp reads one column of `float tile[32][P]`: lane i reads tile[i][c] (word P * i + c) -> passes, by the pitch P
COLUMN_PASSES = {32: None, 33: None, 34: None, 36: None, 40: None, 48: None}

# other patterns -> passes
PATTERN_PASSES = {
    "every lane reads word 0": None,
    "lane i reads word i // 2": None,
    "lane i reads word 32 * (i // 2)": None,
    "lane i reads word 32 * i + (5 ^ i)": None,     # lab 2.2's XOR swizzle: column 5 of a 32 x 32 tile, no padding
    "lane i reads tile[i + 32][7] of float tile[64][65]": None,   # lab 2.1's transpose_04 reading a column
}

# the smallest pad p >= 0 for which a column read of `float tile[32][32 + p]` takes one pass
PAD = None

# Tensor-core and vectorized kernels want every row of the tile to start on a 16-byte boundary (32 + p a multiple of
# 4 floats). Among those pads, the smallest one whose column read takes the fewest passes: (p, its passes)
ALIGNED_PAD = (None, None)
