"""Lab 4.3, the Triton rung on the CPU: tl.dot in the interpreter against float64 on awkward shapes, misaligned
starts and row strides, fp32 output, empty arrays and K = 0; bad arguments refused naming the argument; the tolerance
of fp32 accumulation and one output rounding."""
import numpy as np
import pytest

from common import arrays, check
from phase4_optimization.lab03_tensor_cores import lab as tc


def _host(shape, dtype, seed, *, offset=0, pad=0):
    """A host matrix (NumPy fp16 / CPU torch bf16) of standard-normal values, optionally `offset` elements into a
    buffer and with `pad` NaN columns after each row (a row-stride view)."""
    rows, cols = shape
    buf = np.full(offset + rows * (cols + pad) + 1, np.nan)
    view = buf[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)
    view[:, :cols] = check.rng(seed).standard_normal((rows, cols))
    full = arrays.from_numpy(buf, dtype, "cpu")
    return full[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)[:, :cols]


@pytest.mark.cpu_only
@pytest.mark.parametrize("mnk,dtype,offset,pad", [
    ((1, 1, 1), "bfloat16", 0, 0), ((127, 33, 19), "float16", 0, 0), ((17, 9, 13), "bfloat16", 1, 3),
    ((40, 24, 50), "float16", 3, 0), ((33, 18, 21), "bfloat16", 0, 11)])
def test_triton_interpreter_matches_float64(mnk, dtype, offset, pad):
    m, n, k = mnk
    a, b = _host((m, k), dtype, 1, offset=offset, pad=pad), _host((k, n), dtype, 2, offset=offset, pad=pad)
    out = check.poisoned((m, n), dtype, a)
    tc.gemm_triton(a, b, out=out)
    ref = tc.reference(arrays.to_numpy(a), arrays.to_numpy(b))
    check.assert_close(out, ref, tol=tc.tolerance(mnk, dtype), what=f"triton {mnk} {dtype}")


@pytest.mark.cpu_only
def test_triton_interpreter_fp32_output():
    a, b = _host((20, 30), "bfloat16", 3), _host((30, 12), "bfloat16", 4)
    out = tc.gemm_triton(a, b, out_dtype="float32")
    assert arrays.dtype_name(out) == "float32"
    ref = tc.reference(arrays.to_numpy(a), arrays.to_numpy(b))
    check.assert_close(out, ref, tol=tc.tolerance((20, 12, 30), "bfloat16", "float32"))


def test_tolerance_scales_with_k_and_dtype():
    small, big = tc.tolerance((8, 8, 64), "float16"), tc.tolerance((8, 8, 65536), "float16")
    assert big.elem > small.elem and big.rel_norm > small.rel_norm
    assert tc.tolerance((8, 8, 64), "float16", "float32").elem < 1e-4 < small.elem
    # a result off by one bf16 ulp everywhere would still pass; one off by a whole product must not
    assert tc.tolerance((8, 8, 4096), "bfloat16").elem < 0.02


@pytest.mark.cpu_only
def test_empty_and_k_zero():
    a = _host((0, 5), "float16", 1)
    b = _host((5, 3), "float16", 2)
    assert tuple(tc.gemm_triton(a, b).shape) == (0, 3)
    z = tc.gemm_triton(_host((3, 0), "bfloat16", 1), _host((0, 4), "bfloat16", 2))
    assert tuple(z.shape) == (3, 4) and float(np.abs(arrays.to_numpy(z)).max()) == 0.0


@pytest.mark.cpu_only
def test_bad_input_is_rejected_with_the_argument_named():
    a, b = _host((8, 5), "float16", 1), _host((5, 6), "float16", 2)
    with pytest.raises(ValueError, match="inner dimensions differ"):
        tc.gemm_triton(a, a)
    with pytest.raises(TypeError, match="a: dtype float32"):
        tc.gemm_triton(a.astype(np.float32), b)
    with pytest.raises(TypeError, match="dtypes must match"):
        tc.gemm_triton(a, _host((5, 6), "bfloat16", 2))
    with pytest.raises(ValueError, match="a: expected a 2-D"):
        tc.gemm_triton(a.reshape(2, 4, 5), b)
    with pytest.raises(ValueError, match="a: rows must be contiguous"):
        tc.gemm_triton(np.ascontiguousarray(a.T).T, b)
    with pytest.raises(ValueError, match="out: expected shape"):
        tc.gemm_triton(a, b, out=np.empty((8, 7), np.float16))
    with pytest.raises(TypeError, match="out: dtype float16"):
        tc.gemm_triton(a, b, out=np.empty((8, 6), np.float16), out_dtype="float32")
    with pytest.raises(ValueError, match="out_dtype"):
        tc.gemm_triton(a, b, out_dtype="float64")
    buf = np.zeros(200, np.float16)
    with pytest.raises(ValueError, match="share memory"):
        tc.gemm_triton(buf[:40].reshape(8, 5), buf[40:70].reshape(5, 6), out=buf[60:108].reshape(8, 6))
    with pytest.raises(TypeError, match="a: expected an array"):
        tc.gemm_triton([[1.0]], b)
