"""연습 문제 4.5.1: 16비트가 GEMM의 입력과 accumulator에서 치르는 비용. 예측한 다음 랩 4.5가 계산한 표(overflow
경우는 CPU에서, K에 따른 오차 sweep은 H200에서 측정)와 비교합니다.

fp16: 유효 비트 11개(unit roundoff u = 2^-11), 가장 큰 유한값 65504(65520부터는 합이 inf로 반올림됩니다).
bf16: 유효 비트 8개(u = 2^-8), 범위는 fp32와 같습니다.
"""
# 1. fp16 accumulator가 곱 1 x 32를 K개 차례로 더하고, 부분합마다 fp16으로 반올림합니다(fp16 accumulator를 쓰는 MMA가
#    하는 일). 합이 inf가 되는 가장 작은 K:
FIRST_INF_K = None

# 2. 같지만 처음 K / 2개의 곱은 +32이고 나머지는 -32입니다. 정확한 답은 0입니다. 그래도 fp16 accumulator가 inf로
#    끝나는 가장 작은 짝수 K:
CANCEL_INF_K = None

# 3. fp16 입력, M = N = 1024, 오차는 fp16 입력의 정확한 곱과 비교해 잽니다(그래서 accumulator만 오차를 냅니다).
#    K = 1024에서 K = 16384로 가면 fp16 accumulator의 상대 오차는 몇 배가 됩니까?
FP16_ACC_GROWTH = None

# 4. fp32로 누적하는 bf16 GEMM(cuBLAS), 오차는 fp32 입력의 float64 곱과 비교해 잽니다. 그래서 입력을 bf16으로
#    반올림한 것이 오차에 들어갑니다. K = 1024에서 K = 16384로 가면 상대 오차는 몇 배가 됩니까?
BF16_GROWTH = None

# 5. ... 그리고 K = 4096에서 그 오차(norm으로 잰 상대 오차)는 대략 얼마입니까? 20% 안이면 통과합니다.
BF16_ERROR = None
