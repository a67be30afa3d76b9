"""Lab 4.3, rungs 01, 02 and Triton on a GPU (marked gpu): every variant against float64 of the rounded inputs on
awkward shapes, misaligned and strided views (pad columns poisoned), fp32 output and empty arrays; every config of
CONFIGS on edge shapes and the XT configs on interior blocks with K tails; bad input on the GPU; rung 03's plain
variant when this GPU has it."""
import numpy as np
import pytest

from common import arrays, check, device
from phase4_optimization.lab03_tensor_cores import bench as tcb
from phase4_optimization.lab03_tensor_cores import lab as tc
from tests.helpers import skip_unless_available

gpu = pytest.mark.gpu
XT_CONFIGS = [c for c in tc.CONFIGS if c.get("XT", 0)]


CUDA_FNS = [tc.gemm_wmma, tc.gemm_mma]
ALL_FNS = CUDA_FNS + [tc.gemm_triton]


def _dev(shape, dtype, seed, *, offset=0, pad=0, fill=np.nan):
    """A GPU matrix (CuPy fp16 / torch bf16), `offset` elements into its buffer, `pad` poisoned columns per row."""
    rows, cols = shape
    host = np.full(offset + rows * (cols + pad) + 8, fill)
    v = host[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)
    v[:, :cols] = check.rng(seed).standard_normal((rows, cols))
    full = arrays.from_numpy(host, dtype, "cuda")
    return full[offset: offset + rows * (cols + pad)].reshape(rows, cols + pad)[:, :cols]


def _check(fn, a, b, out, dtype, od=None, **kw):
    m, k = (int(s) for s in a.shape)
    n = int(b.shape[1])
    res = fn(a, b, out=out, **kw) if od is None else fn(a, b, out=out, out_dtype=od, **kw)
    ref = tc.reference(arrays.to_numpy(a), arrays.to_numpy(b))
    check.assert_close(res, ref, tol=tc.tolerance((m, n, k), dtype, od), what=f"{fn.__name__} {m}x{n}x{k} {dtype}")


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", tc.DTYPES)
@pytest.mark.parametrize("mnk", [(1, 1, 1), (127, 129, 131), (1000, 1000, 8), (33, 65, 13), (300, 257, 1000),
                                 (2, 4100, 40), (4100, 3, 70), (256, 512, 520)])
def test_awkward_shapes(fn, dtype, mnk):
    m, n, k = mnk
    a, b = _dev((m, k), dtype, 1), _dev((k, n), dtype, 2)
    _check(fn, a, b, check.poisoned((m, n), dtype, a), dtype)


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", tc.DTYPES)
@pytest.mark.parametrize("offset,pad", [(1, 0), (3, 0), (0, 3), (0, None), (1, 5)],
                         ids=["start+1", "start+3", "stride+3", "stride-multiple-of-8", "both"])
def test_misaligned_and_strided_views(fn, dtype, offset, pad):
    """Odd starts and row strides that are not a multiple of 8 take the element-wise path; row strides rounded up to
    a multiple of 8 with K = 70 and N = 130 (not multiples of 8) take the zero-filling partial cp.async path. Pad
    columns hold NaN: a kernel that read past a row's end would put NaN into C."""
    m, n, k = 150, 130, 70
    pa, pb = ((-k) % 8, (-n) % 8) if pad is None else (pad, pad)
    a, b = _dev((m, k), dtype, 3, offset=offset, pad=pa), _dev((k, n), dtype, 4, offset=offset, pad=pb)
    flags = tc.vec_flags(a, b, a, *(tc._row_stride(x, y) for x, y in (("a", a), ("b", b), ("a", a))))
    if offset or (k + pa) % 8 or (n + pb) % 8:     # a row stride (in elements) that is not a multiple of 8
        assert flags & (tc.VEC_A | tc.VEC_B) == 0
    else:
        assert flags & (tc.VEC_A | tc.VEC_B) == (tc.VEC_A | tc.VEC_B)
    out_full = check.poisoned((m, n + 1), dtype, a)
    out = out_full[:, 1:] if offset else out_full[:, :n]             # a C view: odd start, row stride N + 1
    _check(fn, a, b, out, dtype)
    spare = arrays.to_numpy(out_full[:, 0] if offset else out_full[:, n])
    assert np.isnan(spare).all(), "wrote outside C"


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", tc.DTYPES)
def test_fp32_output(fn, dtype):
    a, b = _dev((200, 300), dtype, 5), _dev((300, 170), dtype, 6)
    _check(fn, a, b, check.poisoned((200, 170), "float32", a), dtype, "float32")


@gpu
@pytest.mark.parametrize("fn", ALL_FNS, ids=lambda f: f.__name__)
def test_empty_arrays(fn):
    for dtype in tc.DTYPES:
        a, b = _dev((0, 7), dtype, 1), _dev((7, 5), dtype, 2)
        assert tuple(fn(a, b).shape) == (0, 5)
        assert tuple(fn(_dev((4, 7), dtype, 1), _dev((7, 0), dtype, 2)).shape) == (4, 0)
        z = fn(_dev((3, 0), dtype, 1), _dev((0, 4), dtype, 2))
        assert float(np.abs(arrays.to_numpy(z)).max()) == 0.0


@gpu
@pytest.mark.parametrize("cfg", tc.CONFIGS, ids=tc.short)
def test_every_config_on_edge_shapes(cfg):
    if tc.config_problems(cfg, device.info().smem_per_block_optin):
        pytest.skip("does not fit this GPU's shared memory")
    assert tcb._edge_check(cfg) == ""


@gpu
@pytest.mark.parametrize("cfg", XT_CONFIGS, ids=tc.short)
@pytest.mark.parametrize("mnk", [(259, 517, 1000), (384, 640, 70), (130, 1030, 13), (515, 260, 4 * 32 * 7 + 5)])
def test_xt_configs_on_interior_blocks_with_k_tails(cfg, mnk):
    """XT runs only the blocks that take the fast copies (interior tiles, 16-byte capable operands): row strides
    rounded up to a multiple of 8 (pad columns NaN) keep the VEC flags on while K is not a multiple of 8 or of BK,
    so the partial last k-tile goes through load_tile_tail; several rounds of STAGES k-tiles; C poisoned."""
    if tc.config_problems(cfg, device.info().smem_per_block_optin):
        pytest.skip("does not fit this GPU's shared memory")
    m, n, k = mnk
    for dtype in tc.DTYPES:
        a = _dev((m, k), dtype, 11, pad=(-k) % 8)
        b = _dev((k, n), dtype, 12, pad=(-n) % 8)
        flags = tc.vec_flags(a, b, a, tc._row_stride("a", a), tc._row_stride("b", b), tc._row_stride("a", a))
        assert flags & (tc.VEC_A | tc.VEC_B) == (tc.VEC_A | tc.VEC_B)
        _check(tc.gemm_mma, a, b, check.poisoned((m, n), dtype, a), dtype, config=cfg)


@gpu
def test_bad_input_on_gpu():
    import cupy
    import torch

    a16 = _dev((8, 5), "float16", 1)
    abf = _dev((8, 5), "bfloat16", 1)
    for fn in ALL_FNS:
        with pytest.raises(TypeError, match="dtype float32"):
            fn(a16.astype(cupy.float32), a16.astype(cupy.float32).T.copy())
        with pytest.raises(TypeError, match="dtypes must match|same library"):
            fn(abf, torch.from_dlpack(a16.T.copy()))
        with pytest.raises(TypeError, match="expected a GPU array"):
            fn(np.zeros((8, 5), np.float16), np.zeros((5, 3), np.float16))
        with pytest.raises(ValueError, match="inner dimensions"):
            fn(a16, a16)
    # torch fp16 tensors work too (same pointer path as bf16)
    t = torch.from_dlpack(_dev((33, 40), "float16", 2))
    u = torch.from_dlpack(_dev((40, 17), "float16", 3))
    _check(tc.gemm_mma, t, u, None, "float16")


@gpu
def test_wgmma_variant_when_present():
    v = next(v for v in tc.VARIANTS if v.name == "cuda 03 wgmma+TMA")
    skip_unless_available(v)
    for dtype in v.dtypes:
        a, b = _dev((300, 520), dtype, 7), _dev((520, 260), dtype, 8)
        _check(v.fn, a, b, check.poisoned((300, 260), dtype, a), dtype)
