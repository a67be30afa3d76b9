"""Exercise 4.1.1, a solution. The roofs measured on the H200: HBM 4,340 GB/s, fp32 51.3 TFLOP/s (ridge 51.3e3 /
4340 = 11.8 FLOP/B), bf16 680.0 TFLOP/s (ridge 156.7 FLOP/B). AI = flops / bytes; roof = min(peak, AI x 4.34 TB/s).
"""
ANSWERS = {
    # 12 bytes and 1 FLOP an element: AI 0.083, roof 0.083 x 4.34 = 0.36 TFLOP/s (= 4,340 GB/s of traffic)
    "vector add, fp32, n = 2^29": dict(bytes=12 * 2**29, flops=2**29, unit="fp32", bound="memory",
                                       roof_tflops=0.3617),
    # 8 bytes and 5 FLOPs an element: AI 0.625, roof 2.71 TFLOP/s
    "softmax, fp32, 32768 x 4096": dict(bytes=8 * 32768 * 4096, flops=5 * 32768 * 4096, unit="fp32",
                                        bound="memory", roof_tflops=2.713),
    # 8 bytes and 2 k = 128 FLOPs an element: AI = k / 4 = 16 > 11.8, just right of the ridge: the fp32 peak
    "k-FMA chain, fp32, n = 2^26, k = 64": dict(bytes=8 * 2**26, flops=128 * 2**26, unit="fp32", bound="compute",
                                                roof_tflops=51.31),
    # 3 x 8192^2 x 4 = 805 MB for 2 x 8192^3 = 1.10 TFLOP: AI 1365, far right of the fp32 ridge
    "SGEMM, fp32, 8192^3": dict(bytes=3 * 8192**2 * 4, flops=2 * 8192**3, unit="fp32", bound="compute",
                                roof_tflops=51.31),
    # 3 x 4096^2 x 2 = 101 MB for 137.4 GFLOP: AI 1365, far right of the bf16 ridge (157)
    "GEMM, bf16, 4096^3": dict(bytes=3 * 4096**2 * 2, flops=2 * 4096**3, unit="bf16", bound="compute",
                               roof_tflops=680.0),
    # 2 x (4 B H S D + 4 B H S^2) = 4.56 GB for 4 B H S^2 D = 275 GFLOP: AI 60, LEFT of the bf16 ridge:
    # memory-bound although it is two matmuls; roof 60.2 x 4.34 = 261 TFLOP/s
    "naive attention, bf16, B 4, H 32, S 2048, D 128": dict(bytes=2 * (4 * 128 * 2048 * 128 + 4 * 128 * 2048**2),
                                                            flops=4 * 128 * 2048**2 * 128, unit="bf16",
                                                            bound="memory", roof_tflops=261.4),
}
