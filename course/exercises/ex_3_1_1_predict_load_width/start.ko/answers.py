"""연습 문제 3.1.1: sm_90용으로 컴파일한 랩 1.2의 vector add(add_kernel: program마다 BLOCK개 원소 tile에서 c = a + b,
fp32)에 Triton이 만드는 global load를 compile report를 읽기 전에 예측합니다.

(BLOCK, num_warps, n이 16으로 나누어떨어진다고 알려졌는지)마다 다음을 씁니다:
  (load 명령 하나의 바이트, 입력 배열마다 thread당 load 명령 수).
pointer는 모든 경우에 16바이트로 정렬되어 있습니다. load 명령 하나는 4, 8, 16바이트를 옮깁니다(ld.global.b32, .v2.b32,
.v4.b32). 결정하는 것은 두 가지입니다. thread마다 연속된 float를 몇 개 맡는지(tile을 thread 32 x num_warps개에
나눔), 그리고 vector 하나가 load할 모든 float에서 mask `offs < n`이 같다는 것을 컴파일러가 증명할 수 있는지입니다.
"""
# (BLOCK, num_warps, n % 16 == 0) -> (load 하나의 바이트, 입력 배열마다 thread당 load 수)
ANSWERS = {
    (1024, 4, True): (None, None),
    (1024, 16, True): (None, None),
    (1024, 4, False): (None, None),
    (256, 8, True): (None, None),
    (4096, 8, True): (None, None),
}
