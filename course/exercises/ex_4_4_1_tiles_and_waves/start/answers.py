"""Exercise 4.4.1: a GEMM tile's reuse, its waves on 132 SMs, and the pipeline stages that fit - before lab 4.4's
sweeps time any of them.
"""
# 1. Waves. C is M x N (M = N here), cut into BM x BN tiles, one block per tile; an H200 runs `blocks per SM` blocks on
#    each of its 132 SMs at once (132 x blocks per SM slots), so the tiles go out in rounds (waves) and the last one may
#    be partly empty. For each launch write (tiles, waves as a whole number of rounds, efficiency = tiles / (waves x
#    slots)); the efficiency within 0.01.
WAVES = {
    # (BM, BN, M = N, blocks per SM)
    (128, 256, 4096, 1): (None, None, None),
    (128, 256, 4224, 1): (None, None, None),
    (256, 128, 3840, 1): (None, None, None),
    (128, 128, 4224, 2): (None, None, None),
}
# 2. Reuse. Per k-step a BM x BN tile loads (BM + BN) x BK bf16 elements and does 2 BM BN BK FLOPs: its FLOPs per
#    byte loaded, within 1%.
INTENSITY = {(64, 64): None, (128, 128): None, (128, 256): None, (256, 256): None}
# 3. Stages. Each pipeline stage of a Triton tl.dot GEMM holds one A tile and one B tile, (BM + BN) x BK bf16
#    elements; a block may use 227 KiB of shared memory. The most stages that fit, for each (BM, BN, BK):
MAX_STAGES = {(128, 256, 64): None, (256, 256, 64): None, (128, 128, 64): None, (128, 128, 32): None}
