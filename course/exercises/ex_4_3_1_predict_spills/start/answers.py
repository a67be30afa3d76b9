"""Exercise 4.3.1: will ptxas spill lab 4.3's mma.sync GEMM (tc_02_mma_sync) in these six configurations?

Each key is the kernel's -D defines (BM, BN, BK, WM, WN, STAGES, MIN_BLOCKS): a BM x BN block tile walked in
BK-deep steps through STAGES shared-memory buffers, cut into WM x WN warp tiles (one warp each), with
__launch_bounds__(threads, MIN_BLOCKS). For each write
  (warps per block, shared memory per block in KiB, whether ptxas spills: True or False).
Shared memory is STAGES x (BM x BK + BK x BN) bf16 elements. Registers: __launch_bounds__(T, B) makes ptxas fit B
blocks of T threads in the SM's 65536 registers, so a thread gets at most 65536 / (T x B) of them (and never more
than 255). A 64 x 64 warp tile keeps 128 fp32 accumulators per thread, and with its fragments and addresses needs
about 240 registers; a 64 x 32 warp tile about half that.
"""
# (BM, BN, BK, WM, WN, STAGES, MIN_BLOCKS) -> (warps per block, shared KiB, spills)
ANSWERS = {
    (128, 256, 32, 64, 64, 4, 1): (None, None, None),      # the lab's default
    (128, 256, 32, 64, 64, 4, 2): (None, None, None),      # ... asked to fit two blocks per SM
    (128, 128, 32, 64, 64, 4, 2): (None, None, None),      # the tile --tune picked on the H200, two blocks per SM
    (128, 128, 32, 64, 64, 4, 3): (None, None, None),      # ... three
    (256, 256, 32, 64, 64, 3, 1): (None, None, None),      # the largest tile of lab 4.4's sweep
    (128, 256, 32, 64, 32, 4, 1): (None, None, None),      # the default's block tile with half-width warp tiles
}
