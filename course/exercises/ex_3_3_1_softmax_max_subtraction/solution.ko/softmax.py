"""연습 문제 3.3.1의 풀이: exp 전에 행의 최댓값을 뺍니다. 어떤 c에서든 softmax(x) = softmax(x - c)이고, c = max(x)면
모든 지수가 <= 0입니다. 그래서 exp가 overflow하지 않고, 가장 큰 항이 정확히 1이라 합도 0으로 underflow하지 않습니다."""
from common.triton_support import tl, triton


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, row_stride, BLOCK_N: tl.constexpr):
    # 행마다 program 하나이고, 행 전체가 register에 있습니다(BLOCK_N: n_cols를 2의 거듭제곱으로 올림). 저장 dtype과
    # 관계없이 fp32로 계산합니다. mask된 lane은 -inf를 읽습니다. 최댓값을 바꾸지 않고 합에는 exp(-inf) = 0을 더합니다.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=ok, other=float("-inf")).to(tl.float32)
    row_max = tl.max(x, axis=0)            # register 위의 두 번째 reduction: 메모리를 한 번 더 훑지 않음
    e = tl.exp(x - row_max)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=ok)
