"""Lab 4.3: the validation every GEMM wrapper of the lab shares (rungs 01 and 02, Triton) - dtypes, shapes, the row
stride of a matrix whose rows are contiguous, an out that must not overlap the inputs - and which operands may take
16-byte accesses (vec_flags), before any launch."""
from __future__ import annotations

from common import arrays

DTYPES = ("bfloat16", "float16")
MAX_DIM = 2**31 - 2**16         # M, N, K and row strides are int32 in the kernels
VEC_A, VEC_B, VEC_C = 1, 2, 4


def _elem_strides(x) -> tuple[int, ...]:
    if arrays.library(x) == "torch":
        return tuple(int(s) for s in x.stride())
    return tuple(int(s) // x.itemsize for s in x.strides)


def _row_stride(name: str, x) -> int:
    """The row stride (elements) of a matrix whose rows are contiguous; ValueError for any other layout."""
    rows, cols = (int(s) for s in x.shape)
    if rows == 0 or cols == 0:
        return max(cols, 1)                                    # no element: the stride is never used
    s0, s1 = _elem_strides(x)
    if cols > 1 and s1 != 1:
        raise ValueError(f"{name}: rows must be contiguous (unit column stride), got strides {(s0, s1)} elements; "
                         "pass a contiguous copy (a transposed view is not supported by the CUDA kernels)")
    ld = s0 if rows > 1 else cols                              # one row: the stride is never used
    if ld < cols or ld < 1:
        raise ValueError(f"{name}: row stride {s0} is smaller than the row length {cols}")
    if ld > MAX_DIM:
        raise ValueError(f"{name}: row stride {ld} exceeds {MAX_DIM} (the kernels take 32-bit strides)")
    return ld


def prepare(a, b, out, out_dtype_: str | None, *, device_arrays: bool = True):
    """Validate before any launch; returns (out, M, N, K, lda, ldb, ldc, input dtype)."""
    dt = arrays.check_array("a", a, dtypes=DTYPES, ndim=2, device=device_arrays, contiguous=False)
    arrays.check_array("b", b, dtypes=DTYPES, ndim=2, device=device_arrays, contiguous=False)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b, max_dim=MAX_DIM)
    od = out_dtype_ or dt
    if od not in (dt, "float32"):
        raise ValueError(f"out_dtype: expected {dt!r} (the input dtype) or 'float32', got {od!r}")
    if out is None:
        out = arrays.empty((m, n), od, a)
    else:
        arrays.check_array("out", out, dtypes=(od,), ndim=2, device=device_arrays, contiguous=False)
        if tuple(int(s) for s in out.shape) != (m, n):
            raise ValueError(f"out: expected shape {(m, n)}, got {tuple(out.shape)}")
        if arrays.library(out) != arrays.library(a):
            raise TypeError(f"out: expected a {arrays.library(a)} array like the inputs, got {arrays.library(out)}")
        if arrays.overlap(out, a) or arrays.overlap(out, b):
            raise ValueError("out: must not share memory with a or b (the kernels read A and B while writing C)")
    lda, ldb, ldc = _row_stride("a", a), _row_stride("b", b), _row_stride("out", out)
    return out, m, n, k, lda, ldb, ldc, dt


def vec_flags(a, b, out, lda: int, ldb: int, ldc: int) -> int:
    """Which operands may take 16-byte accesses: row stride a multiple of 8 elements and a 16-byte aligned start
    (then every 8-element chunk of every row is aligned). C stores pairs: even row stride, pair-aligned start."""
    f = 0
    if lda % 8 == 0 and arrays.aligned(a, 16):
        f |= VEC_A
    if ldb % 8 == 0 and arrays.aligned(b, 16):
        f |= VEC_B
    pair = 2 * arrays.ITEMSIZE[arrays.dtype_name(out)]
    if ldc % 2 == 0 and arrays.aligned(out, pair):
        f |= VEC_C
    return f
