"""연습 문제 4.3.1: 이 여섯 가지 설정에서 ptxas가 랩 4.3의 mma.sync GEMM(tc_02_mma_sync)을 spill할까요?

key는 커널의 -D define(BM, BN, BK, WM, WN, STAGES, MIN_BLOCKS)입니다. BM x BN block tile을 shared memory buffer
STAGES개를 거쳐 BK 깊이씩 훑고, WM x WN warp tile(각각 warp 하나)로 나누며, __launch_bounds__(threads, MIN_BLOCKS)를
붙입니다. 설정마다 다음을 씁니다:
  (block당 warp 수, block당 shared memory KiB, ptxas가 spill하는지: True 또는 False).
shared memory는 bf16 원소 STAGES x (BM x BK + BK x BN)개입니다. register: __launch_bounds__(T, B)는 ptxas가 thread
T개짜리 block B개를 SM의 register 65536개에 맞추게 하므로 thread는 register를 많아야 65536 / (T x B)개 받습니다(그리고
255개를 넘지 않습니다). 64 x 64 warp tile은 thread마다 fp32 accumulator 128개를 들고, fragment와 주소까지 합치면
register가 약 240개 필요합니다. 64 x 32 warp tile은 그 절반쯤입니다.
"""
# (BM, BN, BK, WM, WN, STAGES, MIN_BLOCKS) -> (block당 warp 수, shared KiB, spill 여부)
ANSWERS = {
    (128, 256, 32, 64, 64, 4, 1): (None, None, None),      # 랩의 기본값
    (128, 256, 32, 64, 64, 4, 2): (None, None, None),      # ... SM당 block 두 개를 요구함
    (128, 128, 32, 64, 64, 4, 2): (None, None, None),      # H200에서 --tune이 고른 tile, SM당 block 두 개
    (128, 128, 32, 64, 64, 4, 3): (None, None, None),      # ... 세 개
    (256, 256, 32, 64, 64, 3, 1): (None, None, None),      # 랩 4.4 sweep의 가장 큰 tile
    (128, 256, 32, 64, 32, 4, 1): (None, None, None),      # 기본값의 block tile에 폭이 절반인 warp tile
}
