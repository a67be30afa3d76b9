"""연습 문제 3.4.1의 풀이: LayerNorm은 행의 모분산 sum((x - mean)^2) / N으로 정규화합니다(numpy.var의 기본값 ddof=0,
torch.nn.functional.layer_norm의 정의). N - 1로 나누는 표본 분산이 아닙니다."""
from common.triton_support import tl, triton


@triton.jit
def layernorm_fwd_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, row_stride, eps,
                         BLOCK_N: tl.constexpr):
    # 행마다 program 하나이고, 행 전체가 register에 있습니다(BLOCK_N: n_cols를 2의 거듭제곱으로 올림).
    # 연산은 fp32입니다.
    # backward를 위해 행마다 mean과 rstd = 1 / sqrt(var + eps)를 저장합니다.
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK_N)
    ok = cols < n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=ok, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(ok, x - mean, 0.0)                      # 중심화: 평균이 커도 cancellation이 없음
    var = tl.sum(xc * xc, axis=0) / n_cols                # 모분산(biased): LayerNorm의 정의
    rstd = 1.0 / tl.sqrt(var + eps)
    y = xc * rstd * w + b
    tl.store(y_ptr + row * row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=ok)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
