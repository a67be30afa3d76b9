"""Lab 2.6's Triton kernel: a sum (or max) of a chunk of BLOCK x ITERS elements per program, BLOCK running values per
program folded with tl.sum / tl.max at the end. lab.py launches it again on the partials until one value is left."""
from common.triton_support import tl, triton


@triton.jit
def reduce_chunk_kernel(x_ptr, part_ptr, n, IS_MAX: tl.constexpr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)          # 64-bit: pid * CHUNK passes 2^31 for arrays over 8 GiB
    base = pid * (BLOCK * ITERS)
    offs = tl.arange(0, BLOCK)
    if IS_MAX:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(ITERS):
        idx = base + i * BLOCK + offs
        mask = idx < n
        if IS_MAX:
            acc = tl.maximum(acc, tl.load(x_ptr + idx, mask=mask, other=float("-inf")))
        else:
            acc += tl.load(x_ptr + idx, mask=mask, other=0.0)
    if IS_MAX:
        tl.store(part_ptr + pid, tl.max(acc, axis=0))
    else:
        tl.store(part_ptr + pid, tl.sum(acc, axis=0))
