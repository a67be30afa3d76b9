"""Exercise 3.4.1 - a LayerNorm forward with the sample variance (N - 1) where LayerNorm uses the population one (N)."""
import numpy as np

from common.i18n import tr

ID = "3.4.1"
TITLE = "Fix the variance of a LayerNorm forward (biased, over N, not N - 1)"
TIER = "cpu"
FILE = "layernorm.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase3.py.
HINTS = [
    "Look at the line that computes var: what does it divide the sum of squared deviations by?",
    "LayerNorm (torch.nn.functional.layer_norm) uses the population variance, over N, not the sample variance over N "
    "- 1. The variance is then off by N / (N - 1) and rstd by its square root: about 1.2e-4 at N = 4096, more than "
    "fp32's 1e-5 tolerance; at N = 1 it divides by zero.",
    "Divide the centred sum of squares by n_cols instead of n_cols - 1; nothing else changes (the mean already "
    "divides by n_cols).",
]
# (rows, N, dtype): a mid-sized row first (the error is N-dependent, so it shows as one factor), then a long fp32 row
# (a small factor, still far outside fp32's tolerance), one column (where N - 1 = 0), and fp16 storage
CASES = ((4, 37, "float32"), (3, 4096, "float32"), (2, 1, "float32"), (4, 300, "float16"), (5, 2, "float32"))
ROW_MEANS = (3.0, 1000.0, -50.0, 0.0)    # row means: 1000 is where a one-pass E[x^2] - E[x]^2 loses its digits
# the starting point: the solution with the sample variance, over N - 1, under this docstring
TASK = """\
Exercise 3.4.1: this LayerNorm forward agrees with a textbook's variance and not with LayerNorm's. Find the
difference, predict how big it is for a row of N values, then fix it."""
BREAK = [("/ n_cols                # the population (biased) variance: LayerNorm's definition",
          "/ (n_cols - 1)          # the sample variance, as numpy.var(ddof=1) and torch.var")]
TASK_KO = """\
연습 문제 3.4.1: 이 LayerNorm forward는 교과서의 분산과는 맞지만 LayerNorm의 분산과는 맞지 않습니다. 차이를 찾고,
값이 N개인 행에서 그 차이가 얼마나 큰지 예측한 다음 고칩니다."""
BREAK_KO = [("/ n_cols                # 모분산(biased): LayerNorm의 정의",
             "/ (n_cols - 1)          # 표본 분산(numpy.var(ddof=1), torch.var와 같음)")]


def _inputs(rows, cols, rng):
    x = 2.0 * rng.standard_normal((rows, cols)) + np.resize(np.asarray(ROW_MEANS), rows)[:, None]
    w = 1.0 + 0.2 * rng.standard_normal(cols)
    b = 0.5 * rng.standard_normal(cols)
    return x, w, b


def _why(n, rstd, rstd_ref) -> str:
    with np.errstate(all="ignore"):
        ratio = np.asarray(rstd, np.float64) / rstd_ref
    if not np.isfinite(ratio).all():
        return tr("rstd is NaN or inf at N = {n}: a row of one value has variance 0, and 0 / (N - 1) = 0 / 0. Which N "
                  "does LayerNorm divide by?", n=n)
    if np.ptp(ratio) < 1e-3 * abs(ratio.mean()) and abs(ratio.mean() - 1) > 1e-6:
        return tr("rstd is {ratio:.5f}x the reference's in every row - the same factor whatever the row's values, so "
                  "it depends on N = {n} alone (compare sqrt((N - 1) / N) = {factor:.5f}): your variance is the sample "
                  "variance, N / (N - 1) times LayerNorm's. Even at N = 4096 that is 1.2e-4 relative, over ten times "
                  "fp32's tolerance", ratio=ratio.mean(), n=n, factor=np.sqrt((n - 1) / n))
    return tr("rstd differs from the reference's by a factor that changes from row to row ({lo:.4f} to {hi:.4f}): look "
              "at how the variance is computed (the rows have means up to 1000: a one-pass E[x^2] - E[x]^2 cancels "
              "catastrophically there in fp32; the centred sum does not)", lo=ratio.min(), hi=ratio.max())


def _detail(message: str) -> str:
    """common.check's message after its 'MISMATCH:' word, in the chosen language."""
    from course.checks import said

    return said(message).split(":", 1)[1].strip()


def check(path):
    from common import arrays, check as chk, lab
    from common.triton_support import triton
    from course.checks import load_module
    from course.exercise import Verdict
    from course.checks import guarded_output, outside_verdict, release
    from course.exercises.phase3_checks import launched, padded
    from phase3_triton.lab04_layernorm import lab as L

    mod = load_module(path, "ex341")
    if isinstance(mod, Verdict):
        return mod
    rng = np.random.default_rng(341)
    for rows, n, dtype in CASES:
        what = tr("{rows} rows x N = {n} {dtype}", rows=rows, n=n, dtype=dtype)
        x, w, b = (padded(a, dtype, lab.where()) for a in _inputs(rows, n, rng))
        y = guarded_output((rows, n), dtype, x)         # outputs of NaN between NaN guard bands
        mean, rstd = (guarded_output((rows,), "float32", x) for _ in range(2))
        failed = launched(what, mod.layernorm_fwd_kernel, (rows,), x, w, b, y, mean, rstd, n, n, L.EPS,
                          BLOCK_N=max(16, triton.next_power_of_2(n)))
        failed = failed if failed is not None else outside_verdict(what, {"y": y, "mean": mean, "rstd": rstd})
        if failed is not None:
            release(y, mean, rstd)
            return failed
        seen = [arrays.to_numpy(a).astype(np.float64) for a in (x, w, b)]     # what the kernel saw (fp16: rounded)
        ref_mean = L.reference(*seen, np.zeros_like(seen[0]))[1]
        tol = L.tolerance((rows, n), dtype)
        c = chk.compare(mean, ref_mean, "float32", tol)
        if not c.ok:
            return Verdict(False, tr("{what}: mean wrong ({message}): the mean is the sum of the row's N values over N",
                                     what=what, message=_detail(c.message)))
        # The variance and y about the kernel's own mean: an fp32 mean of values near 1000 is off by ~1e-4 absolute
        # (the sum's rounding), which moves y by ~1e-4 / std, more than fp32's 1e-5 allows, though nothing is wrong.
        # Given that mean, the centred sum of squares is exact to fp32's rounding; this exercise is about that sum.
        m_k = arrays.to_numpy(mean).astype(np.float64)[:, None]
        xc = seen[0] - m_k
        ref_rstd = 1.0 / np.sqrt((xc * xc).mean(axis=1) + L.EPS)
        ref_y = xc * ref_rstd[:, None] * seen[1] + seen[2]
        for name, out, ref in (("rstd", rstd, ref_rstd), ("y", y, ref_y)):
            c = chk.compare(out, ref, "float32" if name != "y" else dtype, tol)
            if not c.ok:
                return Verdict(False, tr("{what}: {name} wrong ({message}). ", what=what, name=name,
                                         message=_detail(c.message)) + _why(n, arrays.to_numpy(rstd), ref_rstd))
    return Verdict(True, tr("y, mean and rstd right for N = 1, 2, 37, 300 and 4096 (fp32 and fp16, row means up to "
                            "1000): LayerNorm divides the centred sum of squares by N - the population variance of the "
                            "row, the statistic it normalizes by - and the centred form keeps it exact for large "
                            "means"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the sample variance (N - 1)',
     [('var = tl.sum(xc * xc, axis=0) / n_cols ', 'var = tl.sum(xc * xc, axis=0) / (n_cols - 1)')],
     'rstd wrong'),
    ('the masked lanes left in the centred sum',
     [('xc = tl.where(ok, x - mean, 0.0)', 'xc = x - mean')],
     'rstd wrong'),
]
