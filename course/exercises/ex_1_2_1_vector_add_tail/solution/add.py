"""Exercise 1.2.1, a solution: every program masks its loads and its store, and the grid rounds up."""
from common.triton_support import tl, triton

BLOCK = 256


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n                          # the last program's lanes past the end do nothing
    a = tl.load(a_ptr + offs, mask=ok)
    b = tl.load(b_ptr + offs, mask=ok)
    tl.store(c_ptr + offs, a + b, mask=ok)


def grid(n: int) -> tuple[int]:
    return (triton.cdiv(n, BLOCK),)        # ceil(n / BLOCK): a partial last block still gets a program
