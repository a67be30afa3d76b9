"""연습 문제 4.4.1: 랩 4.4의 sweep이 시간을 재기 전에 GEMM tile의 재사용, SM 132개에서의 wave 수, 들어가는 pipeline
stage 수를 구합니다.
"""
# 1. Wave. C는 M x N(여기서는 M = N)이고 BM x BN tile로 나뉘며 tile마다 block 하나입니다. H200은 SM 132개에서 저마다
#    `SM당 block 수`만큼의 block을 한 번에 돌리므로(slot 132 x SM당 block 수개) tile은 여러 번(wave)에 나뉘어 나가고
#    마지막 wave는 일부가 빌 수 있습니다. launch마다 (tile 수, 정수 횟수로 센 wave 수, 효율 = tile 수 / (wave 수 x
#    slot 수))를 씁니다. 효율은 0.01 안이면 됩니다.
WAVES = {
    # (BM, BN, M = N, SM당 block 수)
    (128, 256, 4096, 1): (None, None, None),
    (128, 256, 4224, 1): (None, None, None),
    (256, 128, 3840, 1): (None, None, None),
    (128, 128, 4224, 2): (None, None, None),
}
# 2. 재사용. k-step마다 BM x BN tile은 bf16 원소 (BM + BN) x BK개를 load하고 2 BM BN BK FLOP을 계산합니다. load한
#    바이트당 FLOP을 1% 안으로 씁니다.
INTENSITY = {(64, 64): None, (128, 128): None, (128, 256): None, (256, 256): None}
# 3. Stage. Triton tl.dot GEMM의 pipeline stage 하나는 A tile 하나와 B tile 하나, 곧 bf16 원소 (BM + BN) x BK개를
#    담습니다. block 하나는 shared memory를 227 KiB까지 쓸 수 있습니다. (BM, BN, BK)마다 들어가는 최대 stage 수:
MAX_STAGES = {(128, 256, 64): None, (256, 256, 64): None, (128, 128, 64): None, (128, 128, 32): None}
