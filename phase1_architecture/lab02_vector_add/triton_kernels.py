"""Lab 1.2's Triton kernel: the vector add, one program per BLOCK elements, a mask instead of an if.

Phase 3's lab 3.1 compiles this kernel ahead of time to show how Triton picks its load width (it imports this lab's
lab.py and finds add_kernel there).
"""
from common.triton_support import tl, triton


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    # One program handles BLOCK consecutive elements; tl.arange(0, BLOCK) is the tile of offsets that CUDA C spreads
    # over threads by hand. The program id is widened to 64 bits so pid * BLOCK cannot overflow past 2^31 elements.
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n            # the bounds check, as a mask over the tile
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a + b, mask=mask, cache_modifier=".cs")   # streaming store: evict-first, like vadd_04
