"""Exercise 4.5.1: what 16 bits cost a GEMM - in its inputs, and in its accumulator. Predict, then compare with the
tables lab 4.5 computed (the overflow cases on the CPU, the error-vs-K sweep measured on the H200).

fp16: 11 significant bits (unit roundoff u = 2^-11), largest finite value 65504 (from 65520 up, a sum rounds to inf).
bf16: 8 significant bits (u = 2^-8), fp32's range.
"""
# 1. An fp16 accumulator adds K products 1 x 32 one after another, rounding every partial sum to fp16 (what an MMA
#    with an fp16 accumulator does). The smallest K whose sum comes out inf:
FIRST_INF_K = None

# 2. The same, but the first K / 2 products are +32 and the rest -32: the exact answer is 0. The smallest even K for
#    which the fp16 accumulator still ends at inf:
CANCEL_INF_K = None

# 3. fp16 inputs, M = N = 1024, error measured against the exact product of the fp16 inputs (so only the accumulator
#    errs). By what factor does the relative error of an fp16 accumulator grow from K = 1024 to K = 16384?
FP16_ACC_GROWTH = None

# 4. A bf16 GEMM accumulated in fp32 (cuBLAS), error measured against the float64 product of the fp32 inputs, so the
#    rounding of the inputs to bf16 counts. By what factor does its relative error grow from K = 1024 to K = 16384?
BF16_GROWTH = None

# 5. ... and about how large is that error (relative, in norm) at K = 4096? Within 20% passes.
BF16_ERROR = None
