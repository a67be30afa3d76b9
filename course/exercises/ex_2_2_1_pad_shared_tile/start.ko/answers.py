"""연습 문제 2.2.1: warp 하나의 shared memory load가 pass 몇 번에 처리되는지 예측하고, tile에 padding을 넣습니다.

shared memory에는 4바이트짜리 bank가 32개 있습니다. 4바이트 word w는 bank w % 32에 있습니다. warp load 하나는 가장
많이 요청받는 bank가 가진 서로 다른 word 수만큼의 pass로 처리됩니다(같은 word를 읽는 lane끼리는 그 word를 함께
받습니다: broadcast). 여기서 모든 접근은 4바이트 float이고, lane i는 warp의 lane 0 .. 31입니다. 경우마다 pass 수를
정수로 씁니다.
"""
# lane i가 word s * i를 읽음: lane stride s -> pass 수
STRIDE_PASSES = {3: None, 6: None, 16: None, 24: None, 33: None, 64: None}

# warp가 `float tile[32][P]`의 열 하나를 읽음: lane i가 tile[i][c](word P * i + c)를 읽음 -> pass 수, pitch P별로
COLUMN_PASSES = {32: None, 33: None, 34: None, 36: None, 40: None, 48: None}

# 다른 접근 패턴 -> pass 수
PATTERN_PASSES = {
    "every lane reads word 0": None,
    "lane i reads word i // 2": None,
    "lane i reads word 32 * (i // 2)": None,
    "lane i reads word 32 * i + (5 ^ i)": None,     # 랩 2.2의 XOR swizzle: padding 없는 32 x 32 tile의 5번 열
    "lane i reads tile[i + 32][7] of float tile[64][65]": None,   # 랩 2.1의 transpose_04가 열 하나를 읽음
}

# `float tile[32][32 + p]`의 열 읽기가 pass 1번이 되는 가장 작은 pad p >= 0
PAD = None

# tensor core 커널과 vector load 커널은 tile의 모든 행이 16바이트 경계에서 시작하기를 원합니다(32 + p가 float 4개의
# 배수). 그런 pad 중에서 열 읽기의 pass 수가 가장 적은 가장 작은 pad: (p, 그때의 pass 수)
ALIGNED_PAD = (None, None)
