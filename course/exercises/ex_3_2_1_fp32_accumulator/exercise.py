"""Exercise 3.2.1 - an fp16 matmul that accumulates in fp16: every K-step rounds the running sum to 11 bits."""
import numpy as np

from common.i18n import tr

ID = "3.2.1"
TITLE = "Accumulate an fp16 matmul in fp32 (the result as accurate as fp16 output allows)"
TIER = "cpu"
FILE = "matmul.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase3.py.
HINTS = [
    "Look at the accumulator's dtype in three places: the tl.zeros it starts from, the out_dtype of tl.dot, and what "
    "the store writes.",
    "At K = 4096 with BLOCK_K = 32 an fp16 accumulator is rounded 128 times to 11 bits, and those errors add up to "
    "much more than the one rounding of the output that fp16 cannot avoid. Accumulate in fp32 (24 bits) and round to "
    "fp16 once, at the end.",
    "Start the accumulator as fp32 zeros, let tl.dot add the fp16 x fp16 products into it in fp32 (no fp16 "
    "out_dtype), and convert to the output pointer's element type only in the store.",
]
# (M, N, K, inputs): long K first (where a 16-bit accumulator is rounded K / BLOCK_K times), then ragged tiles
CASES = ((16, 16, 4096, "normal"), (20, 12, 8192, "uniform"), (17, 9, 300, "normal"), (40, 33, 100, "uniform"))
U16 = 2.0**-11          # one rounding to fp16 (unit roundoff, common.check.UNIT_ROUNDOFF["float16"])
# the starting point: the solution with its accumulator switched to fp16, under this docstring
TASK = """\
Exercise 3.2.1: an fp16 matmul whose accumulator was switched to fp16 (on some GPUs the tensor cores run twice as
fast that way). Predict what that costs in accuracy at K = 4096, then make the result as accurate as fp16 output
allows."""
BREAK = [("dtype=tl.float32)     # 24 significant bits, whatever the input dtype", "dtype=tl.float16)"),
         ("acc = tl.dot(a, b, acc)                               # fp16 x fp16 -> fp32 on the tensor cores",
          "acc = tl.dot(a, b, acc, out_dtype=tl.float16)"),
         ("tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),", "tl.store(c_ptrs, acc,")]
TASK_KO = """\
연습 문제 3.2.1: accumulator를 fp16으로 바꾼 fp16 matmul입니다(어떤 GPU에서는 그렇게 하면 tensor core가 두 배 빠르게
돕니다). K = 4096에서 그 대가로 정확도를 얼마나 잃는지 예측한 다음, 결과를 fp16 출력이 허락하는 만큼 정확하게
만듭니다."""
BREAK_KO = [("dtype=tl.float32)     # 입력 dtype과 관계없이 유효 비트 24개", "dtype=tl.float16)"),
            ("acc = tl.dot(a, b, acc)                               # tensor core에서 fp16 x fp16 -> fp32",
             "acc = tl.dot(a, b, acc, out_dtype=tl.float16)"),
            ("tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty),", "tl.store(c_ptrs, acc,")]


def _tol():
    """All an fp16 result may lose: one rounding to fp16 at the store. fp16 x fp16 products are exact in fp32 and an
    fp32 sum of K = 8192 terms adds ~1e-7 sqrt(K) ~ 1e-5 relative, far under it."""
    from common import check

    return check.Tol(rel_norm=U16, elem=U16)


def check(path):
    from common import arrays, check as chk, lab
    from common.triton_support import triton
    from course.checks import load_module
    from course.exercise import Verdict
    from course.checks import guarded_output, outside_verdict, release
    from course.exercises.phase3_checks import launched, padded

    mod = load_module(path, "ex321")
    if isinstance(mod, Verdict):
        return mod
    rng = np.random.default_rng(321)
    for m, n, k, dist in CASES:
        what = tr("M, N, K = {m}, {n}, {k} ({dist} fp16 inputs)", m=m, n=n, k=k, dist=dist)
        draw = rng.standard_normal if dist == "normal" else rng.random
        a, b = (padded(draw(s), "float16", lab.where()) for s in ((m, k), (k, n)))
        c = guarded_output((m, n), "float16", a)        # NaN between NaN guard bands: an element never written shows
        failed = launched(what, mod.matmul_kernel, (triton.cdiv(m, mod.BLOCK_M), triton.cdiv(n, mod.BLOCK_N)), a, b,
                          c, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=mod.BLOCK_M, BLOCK_N=mod.BLOCK_N, BLOCK_K=mod.BLOCK_K)
        failed = failed if failed is not None else outside_verdict(what, {"C": c})
        if failed is not None:
            release(c)
            return failed
        ref = arrays.to_numpy(a).astype(np.float64) @ arrays.to_numpy(b).astype(np.float64)
        cmp = chk.compare(c, ref, "float16", _tol())
        if cmp.ok:
            continue
        if not np.isfinite(arrays.to_numpy(c).astype(np.float64)).all():
            from course.checks import said

            return Verdict(False, tr("{what}: NaN or inf in C ({message}): some elements were never written, or a "
                                     "mask lets values past the end of A or B in", what=what,
                                     message=said(cmp.message)))
        steps = -(-k // mod.BLOCK_K)
        return Verdict(False, tr("{what}: relative error {err:.1e}, {times:.1f}x one rounding to fp16 (2^-11 = "
                                 "{u:.1e}), which is all fp16 output must lose. A 16-bit accumulator is rounded to 11 "
                                 "significant bits after each of the {steps} K-steps, at the size of the running sum "
                                 "(near |C|, so each rounding costs as much as the final one), and those errors add "
                                 "up. Where should the sum live, and when should it become fp16?", what=what,
                                 err=cmp.rel_norm_err, times=cmp.rel_norm_err / U16, u=U16, steps=steps))
    return Verdict(True, tr("C within one fp16 rounding of the float64 product at K up to 8192 and on ragged tiles: "
                            "the products of fp16 inputs are exact in fp32, the sum stays in fp32 (24 bits) for all "
                            "{steps} K-steps, and C is rounded to fp16 once, at the store",
                            steps=-(-8192 // mod.BLOCK_K)))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('an fp16 accumulator',
     [('acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)',
       'acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float16)'),
      ('acc = tl.dot(a, b, acc)', 'acc = tl.dot(a, b, acc, out_dtype=tl.float16)')],
     'accumulator'),
    ('the store unmasked',
     [('acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))',
       'acc.to(c_ptr.dtype.element_ty))')],
     'past the end of C'),
]
