"""Lab 1.4's Triton kernel: the read sweep, one program per block over the same cyclic range as mem_01/mem_02.

Prediction: slower than mem_02 at every level, and most at the fast ones: its loads are 4 bytes wide (after the
tl.where wrap the compiler cannot prove four neighbouring addresses contiguous, so no 16-byte loads) and every tile
pays a 64-bit modulo, so it is bound by instructions rather than by a memory level (a compile for sm_90 shows
ld.global.b32 and a rem.s64 in the loop). The README shows what it measured.
"""
from common.triton_support import tl, triton


@triton.jit
def read_sweep_kernel(x_ptr, out_ptr, n, per_block, BLOCK: tl.constexpr, WRAP_MOD: tl.constexpr):
    b = tl.program_id(0).to(tl.int64)
    nb = tl.num_programs(0).to(tl.int64)
    s = (b * n // nb) // 4 * 4
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for j in range(0, per_block, BLOCK):
        offs = j + tl.arange(0, BLOCK)
        mask = offs < per_block
        if WRAP_MOD:                     # a working set smaller than BLOCK wraps several times within one tile
            k = (s + offs) % n
        else:                            # one scalar modulo per tile, then at most one wrap per element
            k = (s + j) % n + tl.arange(0, BLOCK)
            k = tl.where(k >= n, k - n, k)
        acc += tl.load(x_ptr + k, mask=mask, other=0.0)
    tl.store(out_ptr + b, tl.sum(acc, axis=0))
