"""Exercise 4.4.1, a solution. Waves: tiles = ceil(M / BM) ceil(N / BN), rounds = ceil(tiles / slots), efficiency =
tiles / (rounds x slots). Reuse: 2 BM BN BK / ((BM + BN) BK x 2 B) = BM BN / (BM + BN). Stages: 227 KiB over
(BM + BN) BK x 2 bytes, rounded down.
"""
WAVES = {
    (128, 256, 4096, 1): (512, 4, 0.970),     # 32 x 16 tiles = 3.88 waves of 132
    (128, 256, 4224, 1): (561, 5, 0.850),     # 33 x 17 = 4.25 waves: the 5th a quarter full, for 6% more work
    (256, 128, 3840, 1): (450, 4, 0.852),     # 15 x 30 = 3.41 waves
    (128, 128, 4224, 2): (1089, 5, 0.825),    # 33 x 33 on 264 slots = 4.13 waves: the 5th an eighth full
}
INTENSITY = {(64, 64): 32.0, (128, 128): 64.0, (128, 256): 85.3, (256, 256): 128.0}
MAX_STAGES = {
    (128, 256, 64): 4,     # 48 KiB a stage: 192 KiB (5 would be 240)
    (256, 256, 64): 3,     # 64 KiB a stage: 192 KiB
    (128, 128, 64): 7,     # 32 KiB a stage: 224 KiB
    (128, 128, 32): 14,    # 16 KiB a stage: 224 KiB
}
