"""연습 문제 4.1.1: 이 과정의 커널 여섯 개를 랩 4.1보다 먼저 손으로 H200의 roofline에 놓습니다.

H200에서 측정한 roof(results/h200/phase4_lab01_ceilings.json): HBM 4,340 GB/s, fp32 CUDA core 51.3 TFLOP/s, bf16
tensor core 680.0 TFLOP/s. 커널마다 다음을 씁니다:
  bytes        HBM과 주고받아야 하는 바이트(입력은 한 번씩 읽고 출력은 한 번씩 씀)
  flops        부동소수점 연산 수(FMA 하나는 2)
  unit         peak가 연산 roof가 되는 장치: "fp32"(CUDA core) 또는 "bf16"(tensor core)
  bound        "memory" 또는 "compute": 그 장치의 ridge point(peak / HBM 대역폭)의 어느 쪽에 있는지
  roof_tflops  낼 수 있는 가장 빠른 속도: min(장치의 peak, arithmetic intensity x HBM 대역폭), TFLOP/s 단위
2% 안의 숫자는 통과합니다. 원하면 6442450944 대신 6.4e9로 써도 됩니다.
"""
ANSWERS = {
    # 랩 1.2: c = a + b, fp32 원소 n = 2^29개(원소마다 덧셈 하나)
    "vector add, fp32, n = 2^29": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # phase 3 랩 3: 행마다 y = softmax(x), 원소마다 5 FLOP으로 셈(max, 빼기, exp, 합, 나누기)
    "softmax, fp32, 32768 x 4096": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # 랩 4.1의 커널: x에 FMA k개를 이어 붙인 y, fp32 원소 n = 2^26개, k = 64
    "k-FMA chain, fp32, n = 2^26, k = 64": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # 랩 2.8: C = A B, 셋 다 8192 x 8192 fp32, CUDA core에서
    "SGEMM, fp32, 8192^3": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # 랩 4.3: C = A B, 셋 다 4096 x 4096 bf16, tensor core에서
    "GEMM, bf16, 4096^3": dict(bytes=None, flops=None, unit=None, bound=None, roof_tflops=None),
    # 랩 4.6의 naive forward, bf16: S = Q K^T와 O = P V를 tensor core에서 계산하고, S와 P(각각 B H S^2)를 HBM에 썼다가
    # 다시 읽음. Q, K, V는 한 번 읽고 O는 한 번 씀. FLOP은 4 B H S^2 D로 세고 softmax와 LSE의 연산은 무시함
    "naive attention, bf16, B 4, H 32, S 2048, D 128": dict(bytes=None, flops=None, unit=None, bound=None,
                                                            roof_tflops=None),
}
