"""Exercise 4.2.1, a solution. Unfused, every kernel reads its inputs and writes its output; fused, the chain's
inputs are read once and only what the caller keeps is written. The speed-up at equal bandwidth is the ratio.
"""
CHAINS = {
    # x in, t out; t in, y out = 4 | x in, y out = 2: 2.0x
    "bias + GELU: y = gelu(x + b)": (4, 2),
    # x in, t out; t and r in, y out = 5 | x and r in, y out = 3: 1.67x
    "bias + residual: y = x + b + r": (5, 3),
    # x and r in, h out; h in, y out = 5 | x and r in, h and y out = 4: 1.25x (h must still be written)
    "residual + layernorm, h kept: h = x + r, y = layernorm(h)": (5, 4),
    # x in, t out; t in, g out; g and r in, y out = 7 | x and r in, y out = 3: 2.33x
    "bias + GELU + residual: y = gelu(x + b) + r": (7, 3),
    # the same two kernels = 5 | x and r in, y out = 3: 1.67x - not writing h is worth as much as the fusion
    "residual + layernorm, h not kept: y = layernorm(x + r)": (5, 3),
}
# GEMM: 2 x 4096^3 / 700e12 = 0.196 ms; tail: 4 x 4096^2 x 2 B / 4.4e12 B/s = 0.031 ms; (0.196 + 0.031) / 0.196
GEMM_EPILOGUE_SPEEDUP = 1.155
