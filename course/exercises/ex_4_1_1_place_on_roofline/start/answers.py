"""Exercise 4.1.1: place six kernels of the course on the H200's roofline, by hand, before lab 4.1 does it.

The roofs measured on the H200 (results/h200/phase4_lab01_ceilings.json): HBM 4,340 GB/s; the fp32 CUDA cores
51.3 TFLOP/s; the bf16 tensor cores 680.0 TFLOP/s. For each kernel write
  bytes        the bytes that must move to and from HBM (each input read once, each output written once),
  flops        the floating-point operations (an FMA is 2),
  unit         the unit whose peak is its compute roof: "fp32" (CUDA cores) or "bf16" (tensor cores),
  bound        "memory" or "compute": which side of that unit's ridge point (peak / HBM bandwidth) it sits on,
  roof_tflops  the fastest it could run: min(the unit's peak, arithmetic intensity x HBM bandwidth), in TFLOP/s.
Numbers within 2% pass: write 6.4e9, not 6442450944, if you like.
"""
ANSWERS = {
    # lab 1.2: c = a + b, n = 2^29 fp32 elements (one add per element)
    "vector add, fp32, n = 2^29": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # phase 3 lab 3: y = softmax(x) by rows, counted as 5 FLOPs an element (max, subtract, exp, sum, divide)
    "softmax, fp32, 32768 x 4096": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # lab 4.1's own kernel: y = k chained FMAs of x, n = 2^26 fp32 elements, k = 64
    "k-FMA chain, fp32, n = 2^26, k = 64": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # lab 2.8: C = A B, all three 8192 x 8192 fp32, on the CUDA cores
    "SGEMM, fp32, 8192^3": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # lab 4.3: C = A B, all three 4096 x 4096 bf16, on the tensor cores
    "GEMM, bf16, 4096^3": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # lab 4.6's naive forward, bf16: S = Q K^T and O = P V on the tensor cores, S and P (B H S^2 each) written to HBM
    # and read back; Q, K, V read and O written once; count 4 B H S^2 D FLOPs and ignore the softmax's and the LSE
    "naive attention, bf16, B 4, H 32, S 2048, D 128": dict(bytes=None, flops=None, unit=None, bound=None,
                                                            roof_tflops=None),
}
