"""연습 문제 1.5.1: H100/H200(sm_90)에서 커널 네 개의 occupancy를 손으로 예측합니다.

커널마다 SM 하나가 그 커널의 block을 한 번에 몇 개 담는지, 그리고 어느 자원이 먼저 동나는지 씁니다. 자원은
"threads", "blocks", "registers", "shared memory" 중 하나입니다. sm_90의 한도를 씁니다(랩 1.5의 본문에 있습니다. SM마다
thread 2048개, block 32개, register 65536개, shared memory 228 KiB입니다. register는 warp 단위로 256개씩 나누어 주고,
block마다 runtime이 예약하는 shared memory 1 KiB가 더 듭니다).
"""
# (block당 thread 수, thread당 register 수, block당 shared memory 바이트) -> (SM당 block 수, 제한하는 자원)
ANSWERS = {
    (256, 32, 0): (None, None),
    (128, 128, 0): (None, None),
    (1024, 40, 0): (None, None),
    (128, 64, 48 * 1024): (None, None),
}
