"""Exercise 3.1.1: predict the global loads Triton generates for lab 1.2's vector add (add_kernel: c = a + b over a
BLOCK-element tile per program, fp32), compiled for sm_90, before you read the compile report.

For each (BLOCK, num_warps, whether n is known to be divisible by 16) write
  (bytes per load instruction, load instructions per thread for each input array).
The pointers are 16-byte aligned in every case. A load instruction moves 4, 8 or 16 bytes (ld.global.b32, .v2.b32,
.v4.b32). Two things decide it: how many consecutive floats each thread holds (the tile split over 32 x num_warps
threads), and whether the compiler can prove the mask `offs < n` is the same for every float one vector would load.
"""
# (BLOCK, num_warps, n % 16 == 0) -> (bytes per load, loads per thread per input array)
ANSWERS = {
    (1024, 4, True): (None, None),
    (1024, 16, True): (None, None),
    (1024, 4, False): (None, None),
    (256, 8, True): (None, None),
    (4096, 8, True): (None, None),
}
