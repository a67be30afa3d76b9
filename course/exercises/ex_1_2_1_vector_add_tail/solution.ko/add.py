"""연습 문제 1.2.1의 풀이: program마다 load와 store에 mask를 걸고, grid는 올림으로 정합니다."""
from common.triton_support import tl, triton

BLOCK = 256


@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    ok = offs < n                          # 마지막 program에서 끝을 넘은 lane은 아무것도 하지 않음
    a = tl.load(a_ptr + offs, mask=ok)
    b = tl.load(b_ptr + offs, mask=ok)
    tl.store(c_ptr + offs, a + b, mask=ok)


def grid(n: int) -> tuple[int]:
    return (triton.cdiv(n, BLOCK),)        # ceil(n / BLOCK): 덜 찬 마지막 block도 program을 받음
