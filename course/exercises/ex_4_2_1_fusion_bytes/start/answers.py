"""Exercise 4.2.1: count the bytes a fusion saves, before lab 4.2 times anything.

Every chain runs on M x N matrices of one 16-bit dtype. Unfused, every op is its own kernel: it reads each of its
inputs from HBM and writes its output back. Fused, one kernel reads the chain's inputs once and writes only what the
caller keeps. Count, as lab 4.2's byte model does, in multiples of M N elements (full matrices only: a bias row and
layernorm's weights are too small to count).
"""
# chain -> (elements the unfused kernels move, elements the fused kernel moves), each in multiples of M N
CHAINS = {
    # lab 4.2 part 1: two kernels unfused (t = x + b; y = gelu(t))
    "bias + GELU: y = gelu(x + b)": (None, None),
    # lab 4.2 part 1: two kernels unfused (t = x + b; y = t + r)
    "bias + residual: y = x + b + r": (None, None),
    # lab 4.2 part 2: two kernels unfused (h = x + r; y = layernorm(h)); the caller keeps both h and y
    "residual + layernorm, h kept: h = x + r, y = layernorm(h)": (None, None),
    # not in the lab: three kernels unfused (t = x + b; g = gelu(t); y = g + r)
    "bias + GELU + residual: y = gelu(x + b) + r": (None, None),
    # not in the lab: two kernels unfused (h = x + r; y = layernorm(h)); the caller keeps only y
    "residual + layernorm, h not kept: y = layernorm(x + r)": (None, None),
}
# Lab 4.2 part 3, bf16 M = N = K = 4096: y = gelu(x W + b). Unfused: cuBLAS's GEMM, then the bias kernel and the
# GELU kernel; fused: the bias and GELU applied to the accumulator before the one store. With the GEMM at 700 TFLOP/s
# and the two elementwise kernels at 4.4 TB/s (lab 4.2's assumptions), the predicted speed-up of the fused GEMM,
# (GEMM time + elementwise time) / GEMM time:
GEMM_EPILOGUE_SPEEDUP = None
