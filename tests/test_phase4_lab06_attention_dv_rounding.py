"""Lab 4.6, issue 33: the Triton backward's dV with multi-query attention and one key is rounded to bf16 once.

With Sk = 1 every query attends the one key with P = 1 exactly (P is rounded to bf16 before P^T dO, and exp2 of a
score minus its own LSE is 1 to within an fp32 ulp), so dV[b, 0, 0, :] is the plain sum of dO over the Hq query heads
and Sq queries. attn_bwd_dkdv_kernel keeps dV in one fp32 accumulator across the whole group of query heads and
converts it to bf16 once, at the store: no per-head rounding. What remains between it and another correct
implementation is the fp32 summation order (and, on tensor cores, how an MMA rounds its fp32 sums), which moves the
fp32 sum by a few fp32 ulps - one bf16 ulp is 2^16 of them, so the bf16 result changes only when the exact sum lies
within those few fp32 ulps of a bf16 rounding midpoint. The interpreter (the CPU tier) converts fp32 to bf16 by
truncation, where the GPU rounds to nearest: its dV is up to 1 ulp low in magnitude (0.4-0.8 % at the bottom of a
binade), on every element whose sum is not a bf16 value.

The numbers these tests pin (NumPy, seed 7, Hq 8 x Sq 256 = 2,048 standard-normal bf16 terms per column, the 2,627
of 8,000 columns whose exact sum lies in [32, 64), where a bf16 ulp is 0.25):
- fp32 sums in four orders (row by row, reversed, NumPy's pairwise, and k16 chunks each added with the sum truncated
  toward zero - a tensor-core-like accumulation) are 1.5 to 5 fp32 ulps from the exact sum at most; rounded to bf16,
  none of the 2,627 differs from the correctly rounded exact sum. An order changes the bf16 result only where the
  exact sum lies within those few fp32 ulps of a midpoint: at most about one element in several thousand;
- each head's sum rounded to bf16 first, then the heads added and rounded again (the double rounding the issue asked
  about), differs in 638 of them (24 %), by 1 ulp: a double rounding shows in about a quarter of the elements, not
  in one;
- two valid fp32 orders one bf16 ulp apart, built by hand: 40 + 0.125 + 3 x 2^-20 added large-first is 40.125 (each
  2^-20 is a quarter of fp32's ulp at 40 and is lost), which rounds to bf16 40.0 (the tie goes to the even value);
  the small terms first give 40.125 + 2^-18, which rounds to 40.25, the correctly rounded exact sum. A peer that
  matches the exact result bit for bit has one such order, not a better algorithm.
The kernel test plants sums whose per-head rounding provably fails: Hq 4, Hkv 1, Sq 2, Sk 1; in the odd columns the
heads' dO rows are (64, 0.375), (-56, -0.0859375), (16, 0.09375), (-16, 0.046875): exact sum 8.4296875 (bf16 ulp
0.0625), rounded to nearest 8.4375, truncated 8.375, both within 1 ulp; each head rounded to nearest first gives
64.5 - 56 + 16.125 - 15.9375 = 8.6875 (4.1 ulps off), each truncated first 8.0625 (5.9 ulps off). The even columns
(last dO 0 instead of 0.046875): exact 8.3828125, per-head 3.9 and 6.1 ulps off. The cancellation between heads is
what makes a per-head rounding large next to the final ulp.
"""
import ast
import inspect

import numpy as np
import pytest

from common import device, lab

gpu = pytest.mark.gpu


def _bf16(a, mode="rn"):
    """float64 -> the nearest bf16 value ("rn", ties to even) or the one toward zero ("rz"), as float64: one rounding
    to 8 significant bits, straight from float64 (no fp32 step in between)."""
    m, e = np.frexp(np.asarray(a, np.float64))            # a = m 2^e, 0.5 <= |m| < 1
    return np.ldexp(np.rint(m * 256) if mode == "rn" else np.trunc(m * 256), e - 8)


def _ulp(a):
    """One bf16 ulp at the magnitude of a (8 significant bits)."""
    return 2.0 ** (np.floor(np.log2(np.abs(a))) - 7)


def _rz32(a):
    """float64 -> fp32 toward zero."""
    f = a.astype(np.float32)
    return np.where(np.abs(f.astype(np.float64)) > np.abs(a), np.nextafter(f, np.float32(0)), f)


# ---------------------------------------------------------------------------------------------------------------------
# The kernel: one fp32 accumulator across the group, one conversion at the store
# ---------------------------------------------------------------------------------------------------------------------
def test_dkdv_kernel_keeps_dv_in_fp32_across_the_group_and_rounds_it_once():
    from phase4_optimization.lab06_attention.triton_kernels import attn_bwd_dkdv_kernel

    fn = next(n for n in ast.walk(ast.parse(inspect.getsource(attn_bwd_dkdv_kernel.fn)))
              if isinstance(n, ast.FunctionDef))
    body = fn.body
    loop = next(i for i, s in enumerate(body) if isinstance(s, ast.For) and ast.unparse(s.target) == "g")
    assert ast.unparse(body[loop].iter) == "range(0, group)", "the loop over the group's query heads"
    init = [ast.unparse(s) for s in body[:loop] if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "dv"]
    assert init == ["dv = tl.zeros([BLOCK_N, BLOCK_D], tl.float32)"], init
    for node in ast.walk(body[loop]):
        if isinstance(node, ast.Assign) and any(ast.unparse(t) == "dv" for t in node.targets):
            v = node.value      # inside the group loop dV only accumulates: dv = tl.dot(P^T, dO, dv), in fp32
            assert isinstance(v, ast.Call) and ast.unparse(v.func) == "tl.dot" and ast.unparse(v.args[-1]) == "dv", \
                ast.unparse(node)
        assert not (isinstance(node, ast.Attribute) and ast.unparse(node) == "dv.to"), "dV rounded inside the loop"
        assert not (isinstance(node, ast.Name) and node.id == "dv_ptr"), "dV stored inside the loop"
    conversions = [n for n in ast.walk(fn) if isinstance(n, ast.Attribute) and ast.unparse(n) == "dv.to"]
    assert len(conversions) == 1, "one conversion of dV to the output dtype, at its store"
    after = " ".join(ast.unparse(s) for s in body[loop + 1:])
    assert "dv.to(dv_ptr.dtype.element_ty)" in after


def _planted_do(d):
    """(Hq = 4, Sq = 2, d) dO whose per-column sum a per-head rounding gets wrong by more than 3 ulps (see the module
    docstring): even columns one pattern, odd ones another whose nearest and truncated bf16 differ; columns scaled by
    powers of two and alternating in sign, which keeps every rounding the same relative to the ulp."""
    pat = np.array([[[64, 0.375], [-56, -0.0859375], [16, 0.09375], [-16, 0.0]],
                    [[64, 0.375], [-56, -0.0859375], [16, 0.09375], [-16, 0.046875]]])
    scale = np.array([(-1.0) ** c * 2.0 ** (c % 4 - 2) for c in range(d)])
    return np.stack([pat[c % 2] * scale[c] for c in range(d)], axis=-1)      # (4, 2, d)


def test_mqa_one_key_dv_is_the_sum_rounded_once():
    """The kernel on the planted sum (interpreter on the CPU, the GPU on a GPU): within 1 ulp of the exact sum -
    truncated in the interpreter, rounded to nearest on the GPU - where either per-head rounding is more than 3 ulps
    off, so a kernel that rounded dV per head fails here."""
    import torch

    from phase4_optimization.lab06_attention import lab as att

    b, hq, sq, d = 1, 4, 2, 32
    where = lab.where()
    rng = np.random.default_rng(33)
    bf = lambda a: torch.as_tensor(np.asarray(a, np.float32)).to(torch.bfloat16).to(where)  # noqa: E731
    q, k, v = bf(rng.standard_normal((b, hq, sq, d))), bf(rng.standard_normal((b, 1, 1, d))), \
        bf(rng.standard_normal((b, 1, 1, d)))
    do64 = _planted_do(d)
    dv = att.attention_flash(q, k, v, bf(do64[None]), False)[4]
    got = dv.double().cpu().numpy()[0, 0, 0]
    exact = do64.sum(axis=(0, 1))
    u = _ulp(exact)
    want = _bf16(exact, "rn" if device.has_gpu() else "rz")
    assert np.array_equal(got, want), f"dV {got[:2]} != {want[:2]} (exact {exact[:2]})"
    assert np.all(np.abs(got - exact) < u)
    for mode in ("rn", "rz"):       # the double rounding: each head's fp32 sum to bf16, then the heads, then again
        twice = _bf16(_bf16(do64.sum(axis=1), mode).sum(axis=0), mode)
        assert np.all(np.abs(twice - exact) >= 3 * u), mode
    assert np.any(_bf16(exact, "rn") != _bf16(exact, "rz")), "some columns tell nearest from truncation"


# ---------------------------------------------------------------------------------------------------------------------
# What the fp32 summation order can do to a bf16 result, and what a per-head rounding would do
# ---------------------------------------------------------------------------------------------------------------------
def test_two_fp32_orders_one_bf16_ulp_apart():
    big, eighth, eps = np.float32(40.0), np.float32(0.125), np.float32(2.0 ** -20)
    large_first = ((big + eighth) + eps) + eps + eps
    small_first = big + (eighth + (eps + eps + eps))
    assert large_first == np.float32(40.125) and small_first == np.float32(40.125 + 2.0 ** -18)
    exact = 40.125 + 3 * 2.0 ** -20
    assert _bf16(large_first) == 40.0 and _bf16(small_first) == 40.25 == _bf16(exact)
    assert _bf16(small_first) - _bf16(large_first) == _ulp(exact)


def test_summation_order_rarely_moves_a_bf16_sum_and_per_head_rounding_often_does():
    import torch

    heads, sq, cols = 8, 256, 8000
    rng = np.random.default_rng(7)
    x = torch.from_numpy(rng.standard_normal((heads * sq, cols)).astype(np.float32)).to(torch.bfloat16)
    x = x.float().numpy()
    exact = x.astype(np.float64).sum(axis=0)
    band = (np.abs(exact) >= 32) & (np.abs(exact) < 64)
    u, right = _ulp(exact), _bf16(exact)
    chunked = np.zeros(cols, np.float32)
    for k0 in range(0, heads * sq, 16):
        chunked = _rz32(chunked.astype(np.float64) + x[k0:k0 + 16].astype(np.float64).sum(axis=0))
    orders = {"row by row": x.sum(axis=0), "reversed": x[::-1].sum(axis=0),
              "pairwise": np.ascontiguousarray(x.T).sum(axis=1), "k16 chunks, truncated": chunked}
    for name, s in orders.items():
        fp32_err = (np.abs(s.astype(np.float64) - exact) / (u * 2.0 ** -16))[band]
        off = (np.abs(_bf16(s) - right) / u)[band]
        assert fp32_err.max() <= 8, (name, fp32_err.max())
        assert off.max() <= 1 and (off > 0).sum() <= 2, (name, (off > 0).sum())     # 0 of 2,627 here
    per_head = _bf16(_bf16(x.reshape(heads, sq, cols).sum(axis=1)).sum(axis=0))
    off = (np.abs(per_head - right) / u)[band]
    assert band.sum() == 2627 and 0.15 < (off > 0).mean() < 0.35 and off.max() <= 2, ((off > 0).sum(), off.max())


@gpu
def test_gpu_mqa_one_key_dv_is_at_most_one_ulp_off_and_rarely_that():
    """Random inputs, B 4, Hq 8, Sq 256, Sk 1, D 128 on the GPU: every dV element within 1 ulp of the correctly
    rounded exact sum, and fewer than 2 % of the 512 off at all - summation order moves one in thousands, a
    per-head rounding about a quarter of them."""
    import torch

    from phase4_optimization.lab06_attention import lab as att

    b, hq, sq, d = 4, 8, 256, 128
    rng = np.random.default_rng(331)
    bf = lambda *s: torch.as_tensor(rng.standard_normal(s).astype(np.float32)).to(torch.bfloat16).cuda()  # noqa
    q, k, v, do = bf(b, hq, sq, d), bf(b, 1, 1, d), bf(b, 1, 1, d), bf(b, hq, sq, d)
    got = att.attention_flash(q, k, v, do, False)[4].double().cpu().numpy()[:, 0, 0]
    exact = do.double().sum(dim=(1, 2)).cpu().numpy()
    off = np.abs(got - _bf16(exact)) / _ulp(exact)
    assert off.max() <= 1 and (off > 0).mean() < 0.02, f"{int((off > 0).sum())} of {off.size} off, max {off.max()}"
