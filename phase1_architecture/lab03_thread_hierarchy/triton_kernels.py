"""Lab 1.3's Triton kernel: both hashes written for every element, then a select (Triton has no per-thread branch).

Whether both are computed is the compiler's call: here each thread's elements come in aligned runs of 4, their
parities are compile-time constants, the select folds and the unused hash is dead code - so it costs the uniform
CUDA kernel's time, not the divergent one's (the README shows the measurement). A data-dependent condition would make
Triton pay for both sides.
"""
from common.triton_support import tl, triton


@triton.jit
def both_hashes_kernel(x_ptr, y_ptr, n, rounds, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    a = v
    b = v
    for _ in range(rounds):
        a = a ^ (a >> 16)
        a = a * 0x7FEB352D
        a = a ^ (a >> 13)
        b = b ^ (b >> 15)
        b = b * 0x846CA68B
        b = b ^ (b >> 11)
    # the "branch": a select between two values that were both written (the compiler folds it when it can tell the
    # parity of each of a thread's elements, and then drops the hash the select never picks)
    out = tl.where((offs & 1) == 0, a, b)
    tl.store(y_ptr + offs, out.to(tl.int32, bitcast=True), mask=mask)
