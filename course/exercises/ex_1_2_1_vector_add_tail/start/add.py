"""Exercise 1.2.1: this Triton vector add is wrong for some sizes. Find out which, then fix it."""
from common.triton_support import tl, triton

BLOCK = 256


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(c_ptr + offs, a + b)


def grid(n: int) -> tuple[int]:
    return (n // BLOCK,)
