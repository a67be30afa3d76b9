"""Exercise 4.5.1, a solution."""
# 2047 x 32 = 65504 (fp16's largest value, exact); + 32 = 65536 >= 65520 rounds to inf, and inf stays inf
FIRST_INF_K = 2048
# the partial sums reach 32 x K / 2 before any -32 is added: 65536 at K / 2 = 2048 (65504 at K / 2 = 2047, which then
# comes back down to exactly 0)
CANCEL_INF_K = 4096
# a random walk of roundings: sqrt(16384 / 1024) = 4
FP16_ACC_GROWTH = 4
# flat: the input roundings, not the fp32 sum, set the error
BF16_GROWTH = 1
# two 8-bit roundings per product: sqrt(2) x 2^-8 / sqrt(3) = 3.2e-3
BF16_ERROR = 3e-3
