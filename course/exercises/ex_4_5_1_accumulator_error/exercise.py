"""Exercise 4.5.1 - an error model of 16-bit GEMMs: when an fp16 accumulator overflows (checked by running lab 4.5's
fp16_sequential_sum on the CPU), how accumulator and input-rounding errors grow with K, and how large the bf16 error
is (checked against the error-vs-K table lab 4.5 measured on the H200: k_sweep in
results/h200/phase4_lab05_mixed_precision.json)."""
import json
import os

import numpy as np

from common.i18n import tr

ID = "4.5.1"
TITLE = "fp16 accumulation against fp32: when it overflows, how its error grows with K, what bf16 inputs cost"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Start with fp16's limits: the largest finite value is 65504 and a sum of 65520 or more rounds to inf, which then "
    "stays inf whatever is added. How many steps of +32 get there?",
    "With cancellation the running sum climbs through all K / 2 positive products before the first -32: it ends at "
    "inf exactly when that peak overflows. A long sum's rounding errors grow like a random walk, as the square root "
    "of K; with bf16 inputs and an fp32 sum, the inputs' rounding sets the error and does not grow with K.",
    "The fp16 growth is the square root of 16384 / 1024, the bf16 one about 1. For the bf16 error: each input's "
    "rounding errs by up to 2^-8 relative, about 2^-8 / sqrt(3) on average, and a product carries two of them.",
]
NAMES = ("FIRST_INF_K", "CANCEL_INF_K", "FP16_ACC_GROWTH", "BF16_GROWTH", "BF16_ERROR")


def _ends_inf(k: int, cancel: bool) -> bool:
    from phase4_optimization.lab05_mixed_precision import bench as B

    vals = np.full(k, 32.0)
    if cancel:
        vals[k // 2:] = -32.0
    return not np.isfinite(B.fp16_sequential_sum(vals, np.float16))


def _sweep() -> dict:
    """(precision, K) -> the relative error lab 4.5 measured on the H200 (the JSON's k_sweep)."""
    from course.exercise import ROOT

    with open(os.path.join(ROOT, "results", "h200", "phase4_lab05_mixed_precision.json")) as f:
        rows = json.load(f)["k_sweep"]
    return {(r["precision"], r["K"]): r for r in rows}


def _first(said, cancel: bool, step: int) -> str | None:
    """None when `said` is the first K (in steps of `step`) whose fp16 sum ends inf, else which way it is off and the
    run of the sum that shows it (never the first K)."""
    if not isinstance(said, (int, np.integer)) or isinstance(said, bool) or said < step:
        return tr("{said!r} is not an integer K >= {step}", said=said, step=step)
    if _ends_inf(said, cancel) and not _ends_inf(said - step, cancel):
        return None
    if not _ends_inf(said, cancel):
        return tr("{k} is {off}: K = {k} still ends finite in fp16", k=said, off=tr("too low"))
    return tr("{said} is {off}: K = {k} already ends at inf", said=said, k=said - step, off=tr("too high"))


def check(path):
    from course.checks import load_module, off
    from course.exercise import Verdict
    from course.exercises.phase4_checks import close, verdict

    mod = load_module(path, "ex451")
    if isinstance(mod, Verdict):
        return mod
    said = {n: getattr(mod, n, None) for n in NAMES}
    missing = [n for n, v in said.items() if v is None]
    if missing:
        return Verdict(False, tr("not answered yet: {names}", names=", ".join(missing)))
    sweep = _sweep()
    acc = [sweep[("our Triton dot, fp16 in, 16-bit acc", k)]["rel err vs fp16-input product"] for k in (1024, 16384)]
    bf = [sweep[("bf16", k)]["rel err"] for k in (1024, 4096, 16384)]
    wrong = []
    why = _first(said["FIRST_INF_K"], False, 1)
    if why:
        wrong.append(tr("FIRST_INF_K: {why} - the running sum climbs by 32 a product: which product first takes it to "
                        "65520 or more, from where fp16 rounds to inf (and inf + 32 stays inf)?", why=why))
    why = _first(said["CANCEL_INF_K"], True, 2)
    if why:
        wrong.append(tr("CANCEL_INF_K: {why} - the partial sums climb through all K / 2 of the +32s before the first "
                        "-32: for which K does that peak first round to inf, from where inf - 32 never comes back down "
                        "to the exact 0?", why=why))
    growth = said["FP16_ACC_GROWTH"]
    if not close(growth, acc[1] / acc[0], 0.2):
        wrong.append(tr("FP16_ACC_GROWTH: {said} is {off} (within 20% passes): each rounding of the running sum is a "
                        "random error of about u x |sum|, and independent errors add like a random walk - how does the "
                        "size of a random walk grow with its number of steps, when K grows 16x?", said=growth,
                        off=off(growth, acc[1] / acc[0])))
    growth = said["BF16_GROWTH"]
    if not close(growth, bf[2] / bf[0], 0.2):
        wrong.append(tr("BF16_GROWTH: {said} is {off} (within 20% passes): with an fp32 accumulator, which errors are "
                        "left - the sum's roundings, or each input's rounding to 8 bits - and does that one depend on "
                        "how many products are summed?", said=growth, off=off(growth, bf[2] / bf[0])))
    err = said["BF16_ERROR"]
    # within 20%: the model sqrt(2) u / sqrt(3) (u = 2^-8) is 1.11x the H200's measurement and passes; u itself (one
    # rounding at its worst, 1.36x) and u / sqrt(3) (one rounding, 0.78x) do not
    if isinstance(err, bool) or not isinstance(err, (int, float)) or not close(err, bf[1], 0.2):
        wrong.append(tr("BF16_ERROR: {said} is {off} (within 20% passes): how far off is one input rounded "
                        "to bf16's 8 significant bits, relative and on average (not at most), and how do the two "
                        "independent roundings a product carries add up?", said=err, off=off(err, bf[1])))
    return verdict(wrong, tr("all five right: an fp16 accumulator overflows at K = 2048 products of 32 - and at K = "
                             "4096 when the answer is 0 - and its error doubles for every 4x K ({ratio:.2f}x measured "
                             "over 16x); bf16 inputs with an fp32 accumulator cost their 8-bit rounding, {err:.1e}, "
                             "the same at every K: accumulation precision is what grows with K, storage precision is "
                             "not", ratio=acc[1] / acc[0], err=bf[1]), of=tr("of {n}", n=len(NAMES)))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the first inf a power of two too late', [('FIRST_INF_K = 2048', 'FIRST_INF_K = 4096')],
     'FIRST_INF_K: 4096 is too high'),
    ("bf16's error the fp16 one", [('BF16_ERROR = 3e-3', 'BF16_ERROR = 5e-4')], 'BF16_ERROR: 0.0005 is too low'),
    ("bf16's error u = 2^-8 itself: one rounding at its worst", [('BF16_ERROR = 3e-3', 'BF16_ERROR = 2 ** -8')],
     'BF16_ERROR: 0.00390625 is too high'),
    ("bf16's error one average rounding, u / sqrt(3): the product's second one forgotten",
     [('BF16_ERROR = 3e-3', 'BF16_ERROR = 2.26e-3')], 'BF16_ERROR: 0.00226 is too low'),
    ("the fp16 accumulator's error growing in proportion to K", [('FP16_ACC_GROWTH = 4', 'FP16_ACC_GROWTH = 16')],
     'FP16_ACC_GROWTH: 16 is too high'),
    ("bf16's error growing like the fp16 accumulator's", [('BF16_GROWTH = 1', 'BF16_GROWTH = 4')],
     'BF16_GROWTH: 4 is too high'),
]
