"""Bad input for phase 4: the categories of tests/bad_input.py, for every variant of every phase 4 lab, plus the
public wrappers that no variant reaches directly.

1. Per variant (tests/bad_input.py's rules, run on phase 4's labs): host arrays for the CUDA C variants
   (CPU tier), and wrong_dtype / wrong_rank / wrong_out / strided / neg_stride / misaligned / empty / nan_inf
   wherever the variant runs (Triton in the interpreter on the CPU; everything on a GPU).
2. Per public wrapper, called directly (lab02 linear / residual_layernorm / bias_gelu / bias_residual /
   residual_layernorm_cuda; lab03 gemm_wmma / gemm_mma / gemm_triton; lab03_tensor_cores.wgmma.gemm_wgmma; lab05
   wmma_gemm / dot_gemm; lab06 flash_attn_fwd / flash_attn_bwd / flash_attention; lab06 flash_attn_cuda; lab07
   BlockPlan / block_ours; lab01 fma_chain): host arrays where device arrays are needed, mismatched shapes, wrong
   dtypes, wrong ranks, bad scalars -> TypeError/ValueError naming the argument, before any launch.
3. NaN/Inf, with the result each wrapper documents, always checked against the float64 reference too:
     GEMM (lab03/04/05): a NaN in A[i, p] makes row i of C NaN (it meets every column); an Inf makes row i
       non-finite (Inf, or NaN where +Inf and -Inf meet); other rows exact-finite.
     elementwise (lab02): NaN/Inf stay in their own element (gelu(+Inf) = +Inf, gelu(-Inf) = -0).
     attention (lab06): a NaN in K[b, h, j] poisons every query row of head (b, h) that attends to key j (all rows
       when not causal; rows i >= j when causal); a NaN in the last query row poisons o and dq of that row, and dk,
       dv of every key of its head (the last row attends to every key, causal or not).
     layer norm / block (lab02, lab07): a NaN in a row poisons that row only (the block: that row's token through
       LN and the MLP; through attention, every later token of its sequence when causal).
4. More than 2^31 elements (GPU, memory allowing; names contain "2_31" so they run last, separately) for the
   wrappers whose kernels index in 64 bits: lab01 fma_chain (Triton, int64 offsets), lab02 bias_gelu (Triton, int64
   row offsets) and lab02's CUDA C fused chain (64-bit flat index).
"""
import numpy as np
import pytest

from common import arrays, check, lab
from tests import bad_input as B
from tests.helpers import lab_modules
from tests.helpers import skip_unless_available

GPU = B.GPU
WHERE = B.WHERE
PHASE = "phase4_optimization"
LABS = [(q, m) for q, m in lab_modules() if q.split(".")[0] == PHASE]


def _mods():
    return dict(LABS)


def _lab(name):
    mod = _mods().get(f"{PHASE}.{name}")
    if mod is None:
        pytest.skip(f"{PHASE}.{name} does not exist yet")
    return mod


def _ours():
    for qual, mod in LABS:
        for v in getattr(mod, "VARIANTS", []):
            if v.impl in ("cuda", "triton"):
                yield qual, mod, v


def _vid(qual, v, cat=None):
    return f"{qual.split('.')[-1]}:{v.name}" + (f":{cat}" if cat else "")


# ---------------------------------------------------------------------------------------------------------------------
# 1. Every variant of every phase 4 lab, through tests/bad_input.py's categories
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mod,v", [
    pytest.param(mod, v, id=_vid(q, v), marks=[pytest.mark.gpu] if v.runs_without_gpu else [])
    for q, mod, v in _ours()])
def test_host_arrays_are_refused_with_a_hint(mod, v):
    B.check_host_arrays_are_refused_with_a_hint(mod, v)


@pytest.mark.parametrize("mod,v,cat", [
    pytest.param(mod, v, cat, id=_vid(q, v, cat), marks=[] if v.runs_without_gpu else [pytest.mark.gpu])
    for q, mod, v in _ours() for cat in B.CATEGORIES])
def test_bad_input(mod, v, cat):
    # (lab06's reference zeroes masked probabilities explicitly, so a NaN in query row i stays out of keys j > i, as in
    # the kernels; the generic NaN placement is meaningful there too)
    if cat == "nan_inf" and hasattr(mod, "BlockPlan"):
        return _block_nan_inf(mod, v)
    B.check_bad_input(mod, v, cat)


def _block_nan_inf(mod, v):
    """test_bad_input.py's nan_inf case for lab 4.7's block, against the pattern its README documents: the float64
    reference's, where the block runs the Triton attention; with lab 4.6's Hopper forward, also every earlier row of
    a non-finite token's 128-row diagonal query tile (the masked zeros of P meet the token's V row inside the P V
    wgmma, as in FlashAttention-3 and cuDNN) - and nothing more."""
    skip_unless_available(v)
    size, dtype = B.medium_case(mod, v)
    inputs = list(mod.make_inputs(size, dtype, check.rng(1), WHERE))
    x = inputs[0]
    flat = x.reshape(-1)
    flat[0] = float("nan")
    flat[arrays.size(x) - 1] = float("inf")
    ref = B.reference(mod, inputs)
    expected = ref.copy()
    attention = "triton" if v.fn is mod.block_ours_triton_attention else mod.BlockPlan(*inputs).attention
    if attention == "hopper":
        tile = mod._hopper().BLOCK_M
        for b, bad in enumerate(~np.isfinite(lab._np64(x)).all(axis=-1)):
            if bad.any():
                t = int(np.flatnonzero(bad)[0])
                expected[b, t // tile * tile:t] = np.nan
        assert np.isnan(expected).sum() > np.isnan(ref).sum(), "no non-finite token past the start of its tile"
    res = v.fn(*inputs, out=B.out_for(mod, ref, dtype, x))
    B.assert_right(mod, res, expected, size, dtype, f"{v.name} [nan_inf, {size} {dtype}]")


# ---------------------------------------------------------------------------------------------------------------------
# 3. NaN/Inf through attention, placed where the reference's semantics are the kernels' semantics
# ---------------------------------------------------------------------------------------------------------------------
def _attn_params():
    out = []
    for q, mod, v in _ours():
        if not q.endswith("lab06_attention"):
            continue
        for where in ("k_any_row", "q_last_row"):
            marks = [] if v.runs_without_gpu else [pytest.mark.gpu]
            out.append(pytest.param(mod, v, where, id=_vid(q, v, where), marks=marks))
    return out


@pytest.mark.parametrize("mod,v,where", _attn_params())
def test_attention_nan_inf(mod, v, where):
    skip_unless_available(v)
    cases = [c for c in B.cases(mod) if c[1] in v.dtypes]
    if where == "k_any_row":      # not causal: a key every query attends to
        cases = [c for c in cases if not c[0][4] and c[0][2] >= 3] or [c for c in cases if not c[0][4]]
    else:
        cases = [c for c in cases if c[0][4] and c[0][2] >= 3] or cases
    size, dtype = min(cases, key=lambda c: B.cost(c[0]))
    inputs = list(mod.make_inputs(size, dtype, check.rng(5), WHERE))
    q, k = inputs[0], inputs[1]
    b, h, s, d = (int(n) for n in q.shape)
    if where == "k_any_row":
        j = s // 2
        k[0, 0, j, 0] = float("nan")
        k[b - 1, h - 1, j, d - 1] = float("inf") if (b, h) != (1, 1) else k[b - 1, h - 1, j, d - 1]
    else:
        q[0, 0, s - 1, 0] = float("nan")
        q[b - 1, h - 1, s - 1, d - 1] = float("inf") if (b, h) != (1, 1) else q[b - 1, h - 1, s - 1, d - 1]
    ref = B.reference(mod, inputs)
    # the documented pattern, read off the reference (so the reference is checked against the claim too)
    o_ref = ref[0]
    if where == "k_any_row":
        assert np.isnan(o_ref[0, 0]).all(), "reference: a NaN key must poison every query row of its head"
    else:
        assert np.isnan(o_ref[0, 0, s - 1]).all() and np.isnan(ref[3][0, 0]).all(), \
            "reference: a NaN in the last query row must poison that row's o and every key's dk"
    clean = [(i, j) for i in range(b) for j in range(h) if (i, j) not in ((0, 0), (b - 1, h - 1))]
    for i, j in clean:
        assert np.isfinite(o_ref[i, j]).all(), "reference: a NaN must stay in its head"
    res = v.fn(*inputs, out=B.out_for(mod, ref, dtype, q))
    B.assert_right(mod, res, ref, size, dtype, f"{v.name} [NaN/Inf in {where}, {size} {dtype}]")


# ---------------------------------------------------------------------------------------------------------------------
# 2. The public wrappers, called directly
# ---------------------------------------------------------------------------------------------------------------------
def _t(shape, dtype="bfloat16", where=None, fill=None):
    """A torch tensor of small random values on `where` (WHERE by default)."""
    import torch

    g = np.random.default_rng(7).standard_normal(shape) * 0.5 if fill is None else np.full(shape, fill)
    return torch.from_numpy(np.asarray(g, np.float32)).to(device=where or WHERE, dtype=getattr(torch, dtype))


def _c(shape, dtype="float16"):
    """A CuPy array on the GPU (the CuPy-only CUDA wrappers)."""
    import cupy

    return cupy.asarray(np.random.default_rng(7).standard_normal(shape).astype(dtype))


def _attr(lab_name, fn_name):
    # "lab06_attention" is a lab's lab.py; "lab06_attention.hopper" a module of its folder
    return getattr(_lab(lab_name) if lab_name.startswith("lab") and "." not in lab_name else _module(lab_name),
                   fn_name)


def _module(name):
    """A lab's lab.py by the lab's name ("lab02_fusion"), or a module of a lab folder ("lab03_tensor_cores.wgmma")."""
    import importlib
    import os

    lab_py = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), PHASE, name, "lab.py")
    return importlib.import_module(f"{PHASE}.{name}.lab" if os.path.exists(lab_py) else f"{PHASE}.{name}")


def _block_args(where=None, d=64, n_heads=1, dtype="bfloat16", s=5):
    mod = _lab("lab07_transformer_block")
    x, nh, *w = mod.make_inputs((1, s, d, n_heads), dtype, check.rng(3), where or WHERE)
    return mod, x, nh, w


# (id, lab/module, function name, args builder, kwargs, argument the message must name)
# Triton wrappers: on the CPU they take CPU torch tensors, so every case here runs in the interpreter's tier.
TRITON_CASES = [
    ("linear:inner_mismatch", "lab02_fusion", "linear", lambda: (_t((5, 8)), _t((7, 4))), {}, "x, w"),
    ("linear:bias_len", "lab02_fusion", "linear", lambda: (_t((5, 8)), _t((8, 4)), _t((3,))), {}, "bias"),
    ("linear:residual_shape", "lab02_fusion", "linear", lambda: (_t((5, 8)), _t((8, 4))),
     {"residual": "R54"}, "residual"),
    ("linear:activation", "lab02_fusion", "linear", lambda: (_t((5, 8)), _t((8, 4))), {"activation": "relu"},
     "activation"),
    ("linear:dtype_f64", "lab02_fusion", "linear", lambda: (_t((5, 8), "float64"), _t((8, 4), "float64")), {}, "x"),
    ("linear:dtype_mixed", "lab02_fusion", "linear", lambda: (_t((5, 8), "float16"), _t((8, 4))), {}, "w"),
    ("linear:rank3", "lab02_fusion", "linear", lambda: (_t((2, 5, 8)), _t((8, 4))), {}, "x"),
    ("residual_layernorm:residual_shape", "lab02_fusion", "residual_layernorm",
     lambda: (_t((4, 32)), _t((4, 31)), _t((32,)), _t((32,))), {}, "residual"),
    ("residual_layernorm:weight_len", "lab02_fusion", "residual_layernorm",
     lambda: (_t((4, 32)), _t((4, 32)), _t((16,)), _t((32,))), {}, "weight"),
    ("residual_layernorm:eps", "lab02_fusion", "residual_layernorm",
     lambda: (_t((4, 32)), _t((4, 32)), _t((32,)), _t((32,))), {"eps": -1.0}, "eps"),
    ("residual_layernorm:out_not_tuple", "lab02_fusion", "residual_layernorm",
     lambda: (_t((4, 32)), _t((4, 32)), _t((32,)), _t((32,))), {"out": "T432"}, "out"),
    ("residual_layernorm:dtype_int", "lab02_fusion", "residual_layernorm",
     lambda: (_t((4, 32), "int32"), _t((4, 32), "int32"), _t((32,), "int32"), _t((32,), "int32")), {}, "x"),
    ("bias_gelu:bias_len", "lab02_fusion", "bias_gelu", lambda: (_t((4, 32)), _t((31,))), {}, "bias"),
    ("bias_gelu:approximate", "lab02_fusion", "bias_gelu", lambda: (_t((4, 32)), _t((32,))),
     {"approximate": "fast"}, "approximate"),
    ("bias_gelu:rank1", "lab02_fusion", "bias_gelu", lambda: (_t((32,)), _t((32,))), {}, "x"),
    ("bias_gelu:dtype_mixed", "lab02_fusion", "bias_gelu", lambda: (_t((4, 32)), _t((32,), "float16")), {}, "bias"),
    ("bias_residual:residual_shape", "lab02_fusion", "bias_residual",
     lambda: (_t((4, 32)), _t((32,)), _t((5, 32))), {}, "residual"),
    ("gemm_triton:inner_mismatch", "lab03_tensor_cores", "gemm_triton", lambda: (_t((5, 8)), _t((7, 4))), {}, "a, b"),
    ("gemm_triton:dtype_mixed", "lab03_tensor_cores", "gemm_triton",
     lambda: (_t((5, 8)), _t((8, 4), "float16")), {}, "a, b"),
    ("gemm_triton:dtype_f32", "lab03_tensor_cores", "gemm_triton",
     lambda: (_t((5, 8), "float32"), _t((8, 4), "float32")), {}, "a"),
    ("gemm_triton:out_dtype", "lab03_tensor_cores", "gemm_triton", lambda: (_t((5, 8)), _t((8, 4))),
     {"out_dtype": "float64"}, "out_dtype"),
    ("gemm_triton:rank3", "lab03_tensor_cores", "gemm_triton", lambda: (_t((1, 5, 8)), _t((8, 4))), {}, "a"),
    ("dot_gemm:acc", "lab05_mixed_precision", "dot_gemm", lambda: (_t((5, 8), "float16"), _t((8, 4), "float16")),
     {"acc": "bfloat16"}, "acc"),
    ("dot_gemm:inner_mismatch", "lab05_mixed_precision", "dot_gemm",
     lambda: (_t((5, 8), "float16"), _t((7, 4), "float16")), {}, "a, b"),
    ("dot_gemm:dtype_bf16", "lab05_mixed_precision", "dot_gemm", lambda: (_t((5, 8)), _t((8, 4))), {}, "a"),
    ("flash_attn_fwd:k_shape", "lab06_attention", "flash_attn_fwd",
     lambda: (_t((1, 2, 9, 64)), _t((1, 2, 8, 64)), _t((1, 2, 9, 64))), {}, "q, k, v"),
    ("flash_attn_fwd:head_dim", "lab06_attention", "flash_attn_fwd",
     lambda: (_t((1, 2, 9, 48)),) * 3, {}, "q"),
    ("flash_attn_fwd:dtype_mixed", "lab06_attention", "flash_attn_fwd",
     lambda: (_t((1, 2, 9, 64)), _t((1, 2, 9, 64), "float16"), _t((1, 2, 9, 64))), {}, "q, k, v"),
    ("flash_attn_fwd:dtype_f32", "lab06_attention", "flash_attn_fwd",
     lambda: (_t((1, 2, 9, 64), "float32"),) * 3, {}, "q"),
    ("flash_attn_fwd:rank3", "lab06_attention", "flash_attn_fwd", lambda: (_t((2, 9, 64)),) * 3, {}, "q"),
    ("flash_attn_fwd:empty", "lab06_attention", "flash_attn_fwd", lambda: (_t((1, 2, 0, 64)),) * 3, {}, "q"),
    ("flash_attn_fwd:causal", "lab06_attention", "flash_attn_fwd", lambda: (_t((1, 2, 9, 64)),) * 3,
     {"causal": "yes"}, "causal"),
    ("flash_attn_fwd:sm_scale", "lab06_attention", "flash_attn_fwd", lambda: (_t((1, 2, 9, 64)),) * 3,
     {"sm_scale": -1.0}, "sm_scale"),
    ("flash_attn_fwd:last_dim_strided", "lab06_attention", "flash_attn_fwd",
     lambda: (_t((1, 2, 9, 128))[..., ::2],) * 3, {}, "q"),
    ("flash_attn_bwd:do_shape", "lab06_attention", "flash_attn_bwd",
     lambda: (_t((1, 2, 8, 64)),) + (_t((1, 2, 9, 64)),) * 4 + (_t((1, 2, 9), "float32"),), {}, "do"),
    ("flash_attn_bwd:lse_shape", "lab06_attention", "flash_attn_bwd",
     lambda: (_t((1, 2, 9, 64)),) * 5 + (_t((1, 2, 8), "float32"),), {}, "lse"),
    ("flash_attn_bwd:lse_dtype", "lab06_attention", "flash_attn_bwd",
     lambda: (_t((1, 2, 9, 64)),) * 5 + (_t((1, 2, 9)),), {}, "lse"),
    ("flash_attention:v_shape", "lab06_attention", "flash_attention",
     lambda: (_t((1, 2, 9, 64)), _t((1, 2, 9, 64)), _t((1, 1, 9, 64))), {}, "q, k, v"),
    ("fma_chain:k_negative", "lab01_roofline", "fma_chain", lambda: (_t((100,), "float32"), -1), {}, "k"),
    ("fma_chain:k_float", "lab01_roofline", "fma_chain", lambda: (_t((100,), "float32"), 1.5), {}, "k"),
    ("fma_chain:rank2", "lab01_roofline", "fma_chain", lambda: (_t((10, 10), "float32"), 4), {}, "x"),
    ("fma_chain:dtype_f16", "lab01_roofline", "fma_chain", lambda: (_t((100,), "float16"), 4), {}, "x"),
    ("fma_chain:empty", "lab01_roofline", "fma_chain", lambda: (_t((0,), "float32"), 4), {}, "x"),
]


def _materialize(kw, args):
    """Keyword placeholders that need tensors: 'R54' a (5, 4) residual, 'T432' a bare tensor for out."""
    kw = dict(kw)
    for key, val in kw.items():
        if val == "R54":
            kw[key] = _t((5, 5), arrays.dtype_name(args[0]))
        elif val == "T432":
            kw[key] = _t((4, 32))
    return kw


def _wrapper_params(cases):
    """The (lab, wrapper, inputs, keywords, argument named) cases as parameters, each with its id."""
    return [pytest.param(lab_name, fn_name, build, kw, name, id=cid)
            for cid, lab_name, fn_name, build, kw, name in cases]


def _expect_refusal(fn, args, kw, name, what):
    e = B.refused(fn, what, *args, **kw)
    msg = str(e)
    assert name.split(",")[0].strip() in msg, f"{what}: the message does not name {name!r}: {msg}"
    assert "Traceback" not in msg and len(msg) < 500
    return e


@pytest.mark.parametrize("lab_name,fn_name,build,kw,name", _wrapper_params(TRITON_CASES))
def test_triton_wrapper_refuses_bad_arguments(lab_name, fn_name, build, kw, name):
    fn = _attr(lab_name, fn_name)
    args = build()
    _expect_refusal(fn, args, _materialize(kw, args), name, f"{lab_name}.{fn_name}")


def _block_case(kind):
    mod, x, nh, w = _block_args()
    if kind == "weights_count":
        return mod, (x, nh, *w[:-1]), "weights", TypeError
    if kind == "n_heads_divides":
        return mod, (x, 3, *w), "n_heads", ValueError
    if kind == "n_heads_type":
        return mod, (x, 1.0, *w), "n_heads", TypeError
    if kind == "x_rank2":
        return mod, (x[0], nh, *w), "x", ValueError
    raise AssertionError(kind)


@pytest.mark.parametrize("entry", ["BlockPlan", "block_ours"])
@pytest.mark.parametrize("kind", ["weights_count", "n_heads_divides", "n_heads_type", "x_rank2"])
def test_transformer_block_refuses_bad_arguments(entry, kind):
    mod, args, name, etype = _block_case(kind)
    e = _expect_refusal(getattr(mod, entry), args, {}, name, f"lab07.{entry} [{kind}]")
    assert isinstance(e, etype), f"lab07.{entry} [{kind}]: {type(e).__name__}, expected {etype.__name__}: {e}"


def test_transformer_block_refuses_mismatched_weight():
    mod, x, nh, w = _block_args()
    i = list(mod.PARAM_NAMES).index("w_fc") if "w_fc" in mod.PARAM_NAMES else 4
    bad = list(w)
    bad[i] = bad[i][:-1]          # one row short: the GEMM's inner dimension no longer matches
    B.refused(mod.block_ours, "lab07.block_ours with a weight one row short", x, nh, *bad)


# Host arrays where the GPU is needed: the CUDA C wrappers always (CPU tier: they validate before they look for a
# GPU); the Triton wrappers only on a GPU (on the CPU, host tensors are what the interpreter takes).
HOST_CASES = [
    ("gemm_wmma", "lab03_tensor_cores", "gemm_wmma", lambda: (_t((5, 8), where="cpu"), _t((8, 4), where="cpu")), True),
    ("gemm_mma", "lab03_tensor_cores", "gemm_mma", lambda: (_t((5, 8), where="cpu"), _t((8, 4), where="cpu")), True),
    ("gemm_wmma:numpy", "lab03_tensor_cores", "gemm_wmma",
     lambda: (np.ones((5, 8), np.float16), np.ones((8, 4), np.float16)), True),
    ("gemm_wgmma", "lab03_tensor_cores", "gemm_wgmma_tma",
     lambda: (_t((5, 8), where="cpu"), _t((8, 4), where="cpu")), True),
    ("gemm_wgmma:numpy", "lab03_tensor_cores", "gemm_wgmma_tma",
     lambda: (np.ones((5, 8), np.float16), np.ones((8, 4), np.float16)), True),
    ("wmma_gemm", "lab05_mixed_precision", "wmma_gemm",
     lambda: (np.ones((5, 8), np.float16), np.ones((8, 4), np.float16)), True),
    ("residual_layernorm_cuda", "lab02_fusion", "residual_layernorm_cuda",
     lambda: (_t((4, 32), where="cpu"), _t((4, 32), where="cpu"), _t((32,), where="cpu"), _t((32,), where="cpu")),
     True),
    ("flash_attn_cuda", "lab06_attention", "flash_attn_cuda", lambda: (_t((1, 2, 16, 64), where="cpu"),) * 3, True),
    ("flash_attn_hopper", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 2, 16, 64), where="cpu"),) * 3, True),
    ("linear", "lab02_fusion", "linear", lambda: (_t((5, 8), where="cpu"), _t((8, 4), where="cpu")), False),
    ("bias_gelu", "lab02_fusion", "bias_gelu", lambda: (_t((4, 32), where="cpu"), _t((32,), where="cpu")), False),
    ("residual_layernorm", "lab02_fusion", "residual_layernorm",
     lambda: (_t((4, 32), where="cpu"), _t((4, 32), where="cpu"), _t((32,), where="cpu"), _t((32,), where="cpu")),
     False),
    ("flash_attn_fwd", "lab06_attention", "flash_attn_fwd", lambda: (_t((1, 2, 16, 64), where="cpu"),) * 3, False),
    ("flash_attention", "lab06_attention", "flash_attention", lambda: (_t((1, 2, 16, 64), where="cpu"),) * 3, False),
    ("fma_chain", "lab01_roofline", "fma_chain", lambda: (np.ones(100, np.float32), 4), False),
]


@pytest.mark.parametrize("lab_name,fn_name,build", [
    pytest.param(lab_name, fn_name, build, id=cid, marks=[] if cuda_c else [pytest.mark.gpu])
    for cid, lab_name, fn_name, build, cuda_c in HOST_CASES])
def test_public_wrapper_refuses_host_arrays(lab_name, fn_name, build):
    fn = _attr(lab_name, fn_name)
    e = B.refused(fn, f"{fn_name} with host arrays", *build())
    assert isinstance(e, TypeError), f"{fn_name}: host arrays raised {type(e).__name__}, expected TypeError: {e}"
    msg = str(e)
    assert "cupy.asarray" in msg or ".cuda()" in msg or "GPU" in msg, f"{fn_name}: the message says no fix: {msg}"


# The CUDA C wrappers' shape/dtype/layout checks, on device arrays (GPU tier)
CUDA_CASES = [
    ("gemm_wmma:inner_mismatch", "lab03_tensor_cores", "gemm_wmma", lambda: (_t((5, 8)), _t((7, 4))), {}, "a, b"),
    ("gemm_mma:inner_mismatch", "lab03_tensor_cores", "gemm_mma", lambda: (_t((5, 8)), _t((7, 4))), {}, "a, b"),
    ("gemm_mma:dtype_f32", "lab03_tensor_cores", "gemm_mma",
     lambda: (_t((5, 8), "float32"), _t((8, 4), "float32")), {}, "a"),
    ("gemm_wmma:out_shape", "lab03_tensor_cores", "gemm_wmma", lambda: (_t((5, 8)), _t((8, 4))),
     {"out": "OUT64"}, "out"),
    ("gemm_wgmma:inner_mismatch", "lab03_tensor_cores", "gemm_wgmma_tma", lambda: (_t((5, 8)), _t((7, 4))), {}, "a, b"),
    ("gemm_wgmma:dtype_mixed", "lab03_tensor_cores", "gemm_wgmma_tma",
     lambda: (_t((5, 8)), _t((8, 4), "float16")), {}, "a, b"),
    ("gemm_wgmma:rank3", "lab03_tensor_cores", "gemm_wgmma_tma", lambda: (_t((1, 5, 8)), _t((8, 4))), {}, "a"),
    ("wmma_gemm:inner_mismatch", "lab05_mixed_precision", "wmma_gemm", lambda: (_c((5, 8)), _c((7, 4))), {}, "a, b"),
    ("wmma_gemm:acc", "lab05_mixed_precision", "wmma_gemm", lambda: (_c((5, 8)), _c((8, 4))), {"acc": "x"}, "acc"),
    ("wmma_gemm:torch", "lab05_mixed_precision", "wmma_gemm",
     lambda: (_t((5, 8), "float16"), _t((8, 4), "float16")), {}, "a"),
    ("residual_layernorm_cuda:weight_len", "lab02_fusion", "residual_layernorm_cuda",
     lambda: (_t((4, 32)), _t((4, 32)), _t((31,)), _t((32,))), {}, "weight"),
    ("flash_attn_cuda:head_dim", "lab06_attention", "flash_attn_cuda", lambda: (_t((1, 2, 16, 48)),) * 3, {}, "q"),
    ("flash_attn_cuda:k_shape", "lab06_attention", "flash_attn_cuda",
     lambda: (_t((1, 2, 16, 64)), _t((1, 2, 15, 64)), _t((1, 2, 16, 64))), {}, "q, k, v"),
    ("flash_attn_cuda:non_contiguous", "lab06_attention", "flash_attn_cuda",
     lambda: (_t((1, 16, 2, 64)).transpose(1, 2),) * 3, {}, "q"),
    ("flash_attn_cuda:misaligned", "lab06_attention", "flash_attn_cuda",
     lambda: (B.offset(_t((1, 2, 16, 64))),) * 3, {}, "q"),
    ("flash_attn_cuda:empty", "lab06_attention", "flash_attn_cuda", lambda: (_t((1, 2, 0, 64)),) * 3, {}, "q"),
    ("flash_attn_cuda:causal", "lab06_attention", "flash_attn_cuda", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"causal": 1}, "causal"),
    ("flash_attn_cuda:kernel", "lab06_attention", "flash_attn_cuda", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"kernel": "99"}, "kernel"),
    ("flash_attn_hopper:stages", "lab06_attention.hopper", "flash_attn_hopper", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"kernel": "05", "stages": 5}, "stages"),
    ("flash_attn_cuda:out_shape", "lab06_attention", "flash_attn_cuda", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"out": "OUT_ATTN"}, "out"),
    # the Hopper rungs (lab06_attention.hopper): refused before any sm_90 check, so on every GPU
    ("flash_attn_hopper:dtype_f32", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 2, 16, 64), "float32"),) * 3, {}, "q"),
    ("flash_attn_hopper:head_dim", "lab06_attention.hopper", "flash_attn_hopper", lambda: (_t((1, 2, 16, 96)),) * 3,
     {}, "q"),
    ("flash_attn_hopper:k_heads", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 4, 16, 64)), _t((1, 3, 16, 64)), _t((1, 3, 16, 64))), {}, "k"),
    ("flash_attn_hopper:sk_ne_sq", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 2, 16, 64)), _t((1, 2, 17, 64)), _t((1, 2, 17, 64))), {}, "k"),
    ("flash_attn_hopper:v_shape", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 2, 16, 64)), _t((1, 2, 16, 64)), _t((1, 2, 15, 64))), {}, "v"),
    ("flash_attn_hopper:last_dim_strided", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 2, 64, 16)).transpose(2, 3),) * 3, {}, "q"),
    ("flash_attn_hopper:stride_not_16_bytes", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (_t((1, 2, 16, 68))[..., :64],) * 3, {}, "q"),
    ("flash_attn_hopper:misaligned", "lab06_attention.hopper", "flash_attn_hopper",
     lambda: (B.offset(_t((1, 2, 16, 64))),) * 3, {}, "q"),
    ("flash_attn_hopper:kernel", "lab06_attention.hopper", "flash_attn_hopper", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"kernel": "99"}, "kernel"),
    ("flash_attn_hopper:stages", "lab06_attention.hopper", "flash_attn_hopper", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"kernel": "05", "stages": 5}, "stages"),
    ("flash_attn_hopper:out_shape", "lab06_attention.hopper", "flash_attn_hopper", lambda: (_t((1, 2, 16, 64)),) * 3,
     {"out": "OUT_ATTN"}, "out"),
]


@pytest.mark.gpu
@pytest.mark.parametrize("lab_name,fn_name,build,kw,name", _wrapper_params(CUDA_CASES))
def test_cuda_wrapper_refuses_bad_arguments(lab_name, fn_name, build, kw, name):
    fn = _attr(lab_name, fn_name)
    args = build()
    made = {"OUT64": lambda: _t((6, 4), arrays.dtype_name(args[0])), "OUT_ATTN": lambda: _t((1, 2, 15, 64))}
    kw = {k: (made[v]() if isinstance(v, str) and v in made else v) for k, v in kw.items()}
    _expect_refusal(fn, args, kw, name, f"{lab_name}.{fn_name}")


@pytest.mark.gpu
@pytest.mark.parametrize("layout", ["misaligned_a", "misaligned_out", "odd_k", "strided_a"])
def test_gemm_wgmma_odd_layouts_are_right_or_refused(layout):
    """TMA needs 16-byte aligned bases and row strides: the wrapper pads a copy, so these are right (or refused)."""
    mod = _module("lab03_tensor_cores.wgmma")
    why = mod.unavailable_reason()
    if why:
        pytest.skip(why)
    m, k, n = 70, 40 if layout != "odd_k" else 37, 72
    a, b = _t((m, k)), _t((k, n))
    out = None
    if layout == "misaligned_a":
        a = B.offset(a)
    elif layout == "strided_a":
        a = B.strided(a)
    elif layout == "misaligned_out":
        out = B.offset(check.poisoned((m, n), "bfloat16", a))
    ref = mod.reference(arrays.to_numpy(a).astype(np.float64), arrays.to_numpy(b).astype(np.float64))
    try:
        res = mod.gemm_wgmma(a, b, out=out)
    except (TypeError, ValueError) as e:
        assert str(e)
        return
    c = check.compare(res, ref, "bfloat16", mod.tolerance(k, "bfloat16"))
    assert c.ok, f"gemm_wgmma {layout}: {c.message}"


# ---------------------------------------------------------------------------------------------------------------------
# 4. More than 2^31 elements: the wrappers whose kernels index in 64 bits (GPU, memory allowing)
# ---------------------------------------------------------------------------------------------------------------------
HUGE = (1 << 31) + 37
COLS = 4096


def _free_bytes():
    import torch

    return torch.cuda.mem_get_info()[0]


def _free_all():
    import torch

    torch.cuda.empty_cache()
    try:
        import cupy

        cupy.get_default_memory_pool().free_all_blocks()
    except ImportError:
        pass


@pytest.mark.gpu
def test_fma_chain_2_31_elements():
    """lab01 fma_chain: offsets in int64; x = 0 everywhere but four marked elements around 2^31."""
    import torch

    mod = _lab("lab01_roofline")
    if _free_bytes() < 2 * 4 * HUGE + (1 << 30):
        pytest.skip("not enough GPU memory for two 2^31-element float32 arrays (18 GB)")
    try:
        x = torch.zeros(HUGE, dtype=torch.float32, device="cuda")
        idx = torch.tensor([0, (1 << 31) - 1, 1 << 31, HUGE - 1], device="cuda")
        vals = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
        x[idx] = torch.from_numpy(vals).cuda()
        out = torch.full((HUGE,), float("nan"), dtype=torch.float32, device="cuda")
        k = 8
        try:
            mod.fma_chain(x, k, out=out)
        except ValueError as e:
            assert str(e)
            return
        torch.cuda.synchronize()
        assert not bool(torch.isnan(out).any()), "fma_chain: elements left unwritten past 2^31"
        got = out[idx].cpu().numpy().astype(np.float64)
        want = mod.reference(vals.astype(np.float64), k)
        assert np.allclose(got, want, rtol=1e-5), (got, want)
        zero = float(mod.reference(np.zeros(1), k)[0])
        for start in ((1 << 31) - 1000, HUGE - 1000):      # windows below 2^31 and at the end, marks left out
            win = out[start:start + 999].cpu().numpy().astype(np.float64)
            marked = [i - start for i in ((1 << 31) - 1, 1 << 31, HUGE - 1) if start <= i < start + 999]
            win[marked] = zero
            bad = np.flatnonzero(~np.isclose(win, zero, rtol=1e-5, atol=0.0))
            assert bad.size == 0, (f"fma_chain: {bad.size} of elements {start}..{start + 998} wrong, first at "
                                   f"{start + bad[:5]}: {win[bad[:5]]} (want {zero})")
    finally:
        _free_all()


@pytest.mark.gpu
@pytest.mark.parametrize("which", ["triton bias_gelu", "cuda fused"])
def test_bias_gelu_2_31_elements(which):
    """lab02 y = gelu_tanh(x + bias) on an fp16 (rows, 4096) matrix of more than 2^31 elements: the Triton kernel's
    row offsets and the CUDA C kernel's flat index are 64-bit. Rows around the 2^31 boundary checked against the
    float64 reference (the op is row-wise, so the reference of those rows alone is the truth)."""
    import torch

    mod = _lab("lab02_fusion")
    rows = HUGE // COLS + 4          # rows edge - 1 .. edge + 2 and a distinct last row all exist
    if _free_bytes() < 2 * 2 * rows * COLS + (1 << 30):
        pytest.skip("not enough GPU memory for two 2^31-element fp16 matrices (9 GB)")
    try:
        g = np.random.default_rng(11)
        x = torch.zeros((rows, COLS), dtype=torch.float16, device="cuda")
        bias_np = g.standard_normal(COLS).astype(np.float16)
        bias = torch.from_numpy(bias_np).cuda()
        edge = (1 << 31) // COLS
        check_rows = [0, edge - 1, edge, edge + 1, rows - 1]
        xs = g.standard_normal((len(check_rows), COLS)).astype(np.float16)
        x[check_rows] = torch.from_numpy(xs).cuda()
        out = torch.full((rows, COLS), float("nan"), dtype=torch.float16, device="cuda")
        try:
            if which == "cuda fused":
                mod.ew_cuda_fused("bias_gelu_tanh", x, bias, out=out)
            else:
                mod.bias_gelu(x, bias, out=out, approximate="tanh")
        except ValueError as e:
            assert str(e)
            return
        torch.cuda.synchronize()
        assert not bool(torch.isnan(out).any()), f"{which}: elements left unwritten past 2^31"
        got = out[check_rows].cpu().numpy()
        ref = mod.reference("bias_gelu_tanh", xs.astype(np.float64), bias_np.astype(np.float64))
        c = check.compare(got, ref, "float16", mod.tolerance(("bias_gelu_tanh", len(check_rows), COLS), "float16"))
        assert c.ok, f"{which} past 2^31: {c.message}"
        # a zero row: gelu(bias) everywhere (rows between the marked ones)
        mid = out[edge + 2].cpu().numpy()
        ref0 = mod.reference("bias_gelu_tanh", np.zeros((1, COLS)), bias_np.astype(np.float64))[0]
        c = check.compare(mid, ref0, "float16", mod.tolerance(("bias_gelu_tanh", 1, COLS), "float16"))
        assert c.ok, f"{which}, row {edge + 2}: {c.message}"
    finally:
        _free_all()
