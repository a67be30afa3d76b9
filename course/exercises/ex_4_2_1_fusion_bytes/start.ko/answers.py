"""연습 문제 4.2.1: 랩 4.2가 시간을 재기 전에 fusion으로 줄어드는 바이트를 셉니다.

모든 chain은 16비트 dtype 하나로 된 M x N 행렬에서 돕니다. fusion하지 않으면 연산마다 커널이 따로 있어서, 입력을
하나하나 HBM에서 읽고 출력을 다시 씁니다. fusion하면 커널 하나가 chain의 입력을 한 번 읽고 호출한 쪽이 간직할 것만
씁니다. 랩 4.2의 바이트 모델처럼 M N개 원소의 배수로 셉니다(온전한 행렬만 셉니다. bias 행과 layernorm의 weight는
너무 작아서 세지 않습니다).
"""
# chain -> (unfused 커널들이 옮기는 원소 수, fused 커널이 옮기는 원소 수), 각각 M N의 배수
CHAINS = {
    # 랩 4.2 1부: unfused는 커널 두 개(t = x + b, y = gelu(t))
    "bias + GELU: y = gelu(x + b)": (None, None),
    # 랩 4.2 1부: unfused는 커널 두 개(t = x + b, y = t + r)
    "bias + residual: y = x + b + r": (None, None),
    # 랩 4.2 2부: unfused는 커널 두 개(h = x + r, y = layernorm(h)). 호출한 쪽이 h와 y를 모두 간직함
    "residual + layernorm, h kept: h = x + r, y = layernorm(h)": (None, None),
    # 랩에는 없음: unfused는 커널 세 개(t = x + b, g = gelu(t), y = g + r)
    "bias + GELU + residual: y = gelu(x + b) + r": (None, None),
    # 랩에는 없음: unfused는 커널 두 개(h = x + r, y = layernorm(h)). 호출한 쪽은 y만 간직함
    "residual + layernorm, h not kept: y = layernorm(x + r)": (None, None),
}
# 랩 4.2 3부, bf16 M = N = K = 4096: y = gelu(x W + b). unfused는 cuBLAS의 GEMM 다음에 bias 커널과 GELU 커널을 돌리고,
# fused는 store 한 번 전에 accumulator에 bias와 GELU를 적용합니다. GEMM을 700 TFLOP/s, elementwise 커널 두 개를
# 4.4 TB/s로 보면(랩 4.2의 가정) fused GEMM의 예측 속도 향상 (GEMM 시간 + elementwise 시간) / GEMM 시간은:
GEMM_EPILOGUE_SPEEDUP = None
