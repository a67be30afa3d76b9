"""The bad-input rules every wrapper is held to, for the test files that apply them (tests/test_bad_input_phase*.py,
one per phase, so a GPU run spreads them over its workers; tests/test_bad_input_huge.py for 2^31 elements).

Bad input never crashes a wrapper, hangs, or returns garbage: it raises a TypeError/ValueError naming the argument,
or gives the right answer. Every public wrapper is reached through the lab contract (the Variant.fn of every variant of
every lab), one test per (category, variant):
  host_array     NumPy/CPU-torch arrays where device arrays are needed -> TypeError saying how to move them
                 (CPU tier for the CUDA C wrappers: validation runs before any launch; GPU tier for all)
  wrong_dtype    the first array in a dtype the variant does not take -> TypeError/ValueError
  wrong_rank     the first array with an extra leading axis -> an error, or the reference's answer for that input
  wrong_out      `out` one row too long -> ValueError; and, with two arrays or more, the second one a row short
  strided        a non-contiguous view (every other column) -> an error, or the right answer
  neg_stride     a negative-stride view (NumPy/CuPy) -> an error, or the right answer
  misaligned     every array (inputs and out) one element past an aligned address: contiguous, so it must be
                 accepted and right (vector-load paths fall back) or refused with ValueError; never read past the end
  empty          a zero-length first dimension -> an empty answer or ValueError
  nan_inf        NaN and +Inf in the first array -> no crash; non-finite results where the float64 reference has
                 them, finite and close elsewhere (check.compare's rule)
  huge           (GPU, memory allowing) more than 2^31 elements for the 1-D and row-wise labs: 64-bit indexing
CPU tier: Triton variants in the interpreter, plus host_array for the CUDA C wrappers. GPU tier: everything else.
"""
import numpy as np
import pytest

from common import arrays, check, device, lab
from tests.helpers import lab_modules
from tests.helpers import skip_unless_available

GPU = device.has_gpu()
WHERE = "cuda" if GPU else "cpu"
LABS = lab_modules()
CATEGORIES = ["wrong_dtype", "wrong_rank", "wrong_out", "strided", "neg_stride", "misaligned", "empty", "nan_inf"]


def ours(phases):
    """(qualified lab name, lab module, variant) of every variant of ours in the labs of `phases`."""
    for qual, mod in LABS:
        if qual.split(".")[0] not in phases:
            continue
        for v in getattr(mod, "VARIANTS", []):
            if v.impl in ("cuda", "triton"):
                yield qual, mod, v


def cost(size):
    dims = size if isinstance(size, (tuple, list)) else (size,)
    # phase 4 sizes may carry non-numeric fields (lab02's op name, lab06's causal flag): only the dimensions count
    return int(np.prod([max(int(d), 1) for d in numeric(dims)]))


def numeric(dims):
    return [d for d in dims if isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))]


def cases(mod):
    return mod.CHECK_CASES if GPU else mod.CPU_CHECK_CASES


def _serves(v, case) -> bool:
    """The variant takes this case's dtype and has a kernel for the case (lab 4.2's implementations cover some of
    its three parts only)."""
    return case[1] in v.dtypes and not (v.cannot_serve and v.cannot_serve(case[0], case[1]))


def small_case(mod, v):
    """A small case with more than two elements (so views and offsets mean something), in a dtype the variant takes."""
    mine = [c for c in cases(mod) if _serves(v, c)] or [(c[0], v.dtypes[0]) for c in cases(mod)]
    big = [c for c in mine if cost(c[0]) >= 3 and 0 not in numeric(c[0] if isinstance(c[0], tuple) else (c[0],))]
    return min(big or mine, key=lambda c: cost(c[0]))


def medium_case(mod, v):
    """The largest case under a cap (the interpreter is slow): what a vector-load path and its tail both see."""
    cap = 1 << 20 if GPU else 6000
    mine = [c for c in cases(mod) if _serves(v, c) and cost(c[0]) <= cap]
    return max(mine, key=lambda c: cost(c[0])) if mine else small_case(mod, v)


def params(categories, phases):
    """pytest params (mod, v, category) for every variant of ours in `phases`, marked gpu where it needs one."""
    out = []
    for qual, mod, v in ours(phases):
        for cat in categories:
            marks = [] if v.runs_without_gpu else [pytest.mark.gpu]
            out.append(pytest.param(mod, v, cat, id=f"{qual.split('.')[-1]}:{v.name}:{cat}", marks=marks))
    return out


def is_array(x):
    return arrays.library(x) in ("cupy", "numpy", "torch")


def array_positions(inputs):
    return [i for i, x in enumerate(inputs) if is_array(x)]


def out_for(mod, ref, dtype, like, shape_fn=lambda s: s):
    out_dt = getattr(mod, "out_dtype", lambda d: d)(dtype)
    if isinstance(ref, tuple):
        dts = out_dt if isinstance(out_dt, tuple) else (out_dt,) * len(ref)
        return tuple(check.poisoned(shape_fn(r.shape) if i == 0 else r.shape, d, like)
                     for i, (r, d) in enumerate(zip(ref, dts)))
    return check.poisoned(shape_fn(ref.shape), out_dt, like)


def reference(mod, inputs):
    return lab.reference_of(mod, inputs)


def _tol(mod, size, dtype):
    fn = getattr(mod, "tolerance", None)
    return fn(size, dtype) if fn else None


def assert_right(mod, res, ref, size, dtype, what):
    pairs = zip(res, ref) if isinstance(ref, tuple) else [(res, ref)]
    for i, (o, r) in enumerate(pairs):
        c = check.compare(o, r, dtype, _tol(mod, size, dtype))
        assert c.ok, f"{what}: output {i} is wrong, not refused: {c.message} [seed {check.seed()}]"


def error_or_right(mod, v, inputs, size, dtype, what):
    """The wrapper either refuses with TypeError/ValueError, or its answer matches the reference on these inputs."""
    try:
        ref = reference(mod, inputs)
    except Exception:  # noqa: BLE001 - the reference cannot make sense of it: the wrapper must refuse
        ref = None
    like = inputs[array_positions(inputs)[0]]
    try:
        out = out_for(mod, ref, dtype, like) if ref is not None else None
        res = v.fn(*inputs, out=out)
    except (TypeError, ValueError) as e:
        assert str(e), f"{what}: {type(e).__name__} without a message"
        return "refused"
    assert ref is not None, f"{what}: accepted input the float64 reference cannot make sense of"
    assert_right(mod, res, ref, size, dtype, what)
    return "right"


def refused(fn, what, *args, **kw):
    try:
        fn(*args, **kw)
    except (TypeError, ValueError) as e:
        assert str(e), f"{what}: {type(e).__name__} without a message"
        return e
    pytest.fail(f"{what}: accepted (expected TypeError or ValueError)")


# ---------------------------------------------------------------------------------------------------------------------
# Array surgery that works for NumPy, CuPy and torch alike
# ---------------------------------------------------------------------------------------------------------------------
def cast(x, dtype):
    if arrays.library(x) == "torch":
        import torch

        return x.to(getattr(torch, dtype))
    return x.astype(dtype)


def strided(x):
    shape = tuple(x.shape)
    base = arrays.empty(shape[:-1] + (2 * shape[-1],), arrays.dtype_name(x), x)
    base[..., ::2] = x
    view = base[..., ::2]
    assert not arrays.is_contiguous(view) or shape[-1] == 1
    return view


def offset(x, k=1):
    """The same values, contiguous, starting k elements past an allocation (so never 16-byte aligned for k=1)."""
    n = arrays.size(x)
    flat = arrays.empty((n + k,), arrays.dtype_name(x), x)
    arrays.fill(flat, 0)
    view = flat[k:]
    view[...] = x.reshape(-1)
    return view.reshape(tuple(x.shape))


def neg_stride(x):
    base = x[::-1].copy()
    return base[::-1]


def resize(size, first):
    if isinstance(size, (tuple, list)):
        i = next(j for j, d in enumerate(size) if d in numeric([d]))     # the first dimension, past an op name
        return tuple(size[:i]) + (first,) + tuple(size[i + 1:])
    return first


# ---------------------------------------------------------------------------------------------------------------------
# Host arrays where device arrays are needed
# ---------------------------------------------------------------------------------------------------------------------
def host_params(phases):
    out = []
    for qual, mod, v in ours(phases):
        # on the CPU, host arrays are what Triton variants (the interpreter) take: nothing to refuse there
        marks = [pytest.mark.gpu] if v.runs_without_gpu else []
        out.append(pytest.param(mod, v, id=f"{qual.split('.')[-1]}:{v.name}", marks=marks))
    return out


def check_host_arrays_are_refused_with_a_hint(mod, v):
    size, dtype = small_case(mod, v)
    inputs = mod.make_inputs(size, dtype, check.rng(0), "cpu")
    e = refused(v.fn, f"{v.name} with host arrays", *inputs)
    assert isinstance(e, TypeError), f"{v.name}: host arrays raised {type(e).__name__}, expected TypeError: {e}"
    msg = str(e)
    assert "cupy.asarray" in msg or ".cuda()" in msg or "GPU" in msg, f"{v.name}: the message says no fix: {msg}"
    assert "Traceback" not in msg and len(msg) < 400


# ---------------------------------------------------------------------------------------------------------------------
# The other categories, wherever the variant can run
# ---------------------------------------------------------------------------------------------------------------------
def check_bad_input(mod, v, cat):
    skip_unless_available(v)
    size, dtype = medium_case(mod, v) if cat in ("misaligned", "nan_inf") else small_case(mod, v)
    inputs = list(mod.make_inputs(size, dtype, check.rng(1), WHERE))
    pos = array_positions(inputs)
    first = pos[0]
    what = f"{v.name} [{cat}, {size} {dtype}]"

    if cat == "wrong_dtype":
        bad = "float64" if "float64" not in v.dtypes else "int8"
        inputs[first] = cast(inputs[first], bad)
        refused(v.fn, what, *inputs)

    elif cat == "wrong_rank":
        inputs[first] = inputs[first].reshape((1,) + tuple(inputs[first].shape))
        error_or_right(mod, v, inputs, size, dtype, what)

    elif cat == "wrong_out":
        ref = reference(mod, inputs)
        out = out_for(mod, ref, dtype, inputs[first], lambda s: (s[0] + 1,) + tuple(s[1:]) if len(s) else (2,))
        refused(v.fn, what + " (out too long)", *inputs, out=out)
        if len(pos) >= 2 and inputs[pos[1]].shape[0] > 1:
            short = list(inputs)
            short[pos[1]] = inputs[pos[1]][:-1]
            refused(v.fn, what + " (second array short)", *short)

    elif cat == "strided":
        inputs[first] = strided(inputs[first])
        error_or_right(mod, v, inputs, size, dtype, what)

    elif cat == "neg_stride":
        if arrays.library(inputs[first]) == "torch":
            pytest.skip("torch tensors have no negative strides")
        inputs[first] = neg_stride(inputs[first])
        error_or_right(mod, v, inputs, size, dtype, what)

    elif cat == "misaligned":
        ref = reference(mod, inputs)
        shifted = [offset(x) if is_array(x) else x for x in inputs]
        out = out_for(mod, ref, dtype, inputs[first])
        out = tuple(offset(o) for o in out) if isinstance(out, tuple) else offset(out)
        try:
            res = v.fn(*shifted, out=out)
        except ValueError as e:
            assert "align" in str(e).lower(), f"{what}: refused without saying why: {e}"
            return
        assert_right(mod, res, ref, size, dtype, what)

    elif cat == "empty":
        try:
            empty_inputs = mod.make_inputs(resize(size, 0), dtype, check.rng(2), WHERE)
        except (ValueError, TypeError, IndexError, ZeroDivisionError):
            pytest.skip("the lab makes no inputs of that size")
        try:
            ref = reference(mod, empty_inputs)
        except Exception:  # noqa: BLE001
            ref = None
        like = empty_inputs[array_positions(empty_inputs)[0]]
        try:
            res = v.fn(*empty_inputs, out=out_for(mod, ref, dtype, like) if ref is not None else None)
        except ValueError as e:
            assert str(e)
            return
        if ref is not None:
            assert_right(mod, res, ref, resize(size, 0), dtype, what)

    elif cat == "nan_inf":
        x = inputs[first]
        if arrays.dtype_name(x) not in arrays.FLOAT_DTYPES:
            pytest.skip("integer inputs hold no NaN")
        flat = x.reshape(-1)
        flat[0] = float("nan")
        if arrays.size(x) > 2:
            flat[arrays.size(x) - 1] = float("inf")
        ref = reference(mod, inputs)
        res = v.fn(*inputs, out=out_for(mod, ref, dtype, x))
        assert_right(mod, res, ref, size, dtype, what)


# ---------------------------------------------------------------------------------------------------------------------
# More than 2^31 elements (GPU, memory allowing)
# ---------------------------------------------------------------------------------------------------------------------
HUGE = (1 << 31) + 37


def _free_bytes():
    import cupy

    return cupy.cuda.runtime.memGetInfo()[0]


def _mod(name):
    return dict(LABS).get(name)


def huge_params():
    out = []
    for name in ("phase1_architecture.lab02_vector_add", "phase2_cuda.lab06_reduction", "phase2_cuda.lab07_softmax",
                 "phase3_triton.lab03_fused_softmax"):
        mod = _mod(name)
        for v in getattr(mod, "VARIANTS", []) if mod else []:
            out.append(pytest.param(name, v, id=f"{name.split('.')[-1]}:{v.name}", marks=[pytest.mark.gpu]))
    return out


def check_more_than_2_31_elements(name, v):
    skip_unless_available(v)
    import cupy

    if _free_bytes() < 4 * 4 * HUGE:
        pytest.skip("not enough GPU memory for three 2^31-element float32 arrays")
    what = f"{v.name} with {HUGE} elements"
    try:
        if name.endswith("vector_add"):
            a = cupy.zeros(HUGE, cupy.float32)
            b = cupy.zeros(HUGE, cupy.float32)
            idx = cupy.asarray([0, (1 << 31) - 1, 1 << 31, HUGE - 1])
            a[idx] = cupy.asarray([1, 2, 3, 4], cupy.float32)
            b[idx] = cupy.asarray([10, 20, 30, 40], cupy.float32)
            out = cupy.full(HUGE, cupy.nan, cupy.float32)
            try:
                v.fn(a, b, out=out)
            except ValueError as e:
                assert "2^31" in str(e) or "large" in str(e).lower() or "int32" in str(e)
                return
            assert float(cupy.abs(out).sum()) == 110.0, what          # NaN anywhere (unwritten) fails this too
            assert out[idx].get().tolist() == [11, 22, 33, 44], what
        elif name.endswith("reduction"):
            x = cupy.zeros(HUGE, cupy.float32)
            x[cupy.asarray([0, (1 << 31) - 1, 1 << 31, HUGE - 1])] = 1.0
            try:
                res = v.fn(x)
            except ValueError as e:
                assert str(e)
                return
            assert float(arrays.to_numpy(res).reshape(-1)[0]) == 4.0, what
        else:   # softmax over rows of a (rows, cols) array with rows * cols > 2^31
            cols = 4096
            rows = HUGE // cols + 1
            x = cupy.zeros((rows, cols), cupy.float32)
            x[-1, -1] = 1.0
            out = cupy.full((rows, cols), cupy.nan, cupy.float32)
            try:
                v.fn(x, out=out)
            except ValueError as e:
                assert str(e)
                return
            assert not bool(cupy.isnan(out).any()), f"{what}: unwritten elements"
            last = out[-1].get().astype(np.float64)
            ref = np.exp(np.r_[np.zeros(cols - 1), 1.0] - 1.0)
            ref /= ref.sum()
            assert np.allclose(last, ref, rtol=1e-5), what
            assert np.allclose(out[0].get(), 1.0 / cols, rtol=1e-5), what
    finally:
        cupy.get_default_memory_pool().free_all_blocks()
