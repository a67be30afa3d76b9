"""Exercise 2.4.2 - make a grid-stride loop move 16 bytes per load and per store: checked by the NVRTC compile report of
the learner's affine.cu for sm_90 (LDG.E.128 and STG.E.128 in the SASS, a narrower access left for the tail, no spill);
on a machine with a GPU also run on awkward lengths and grids, its output between NaN guard bands."""
import re

import numpy as np

from common.i18n import tr

ID = "2.4.2"
TITLE = "Make a grid-stride loop's loads and stores 16 bytes wide (LDG.E.128 in the SASS; any n)"
TIER = "cpu"
FILE = "affine.cu"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "The loop moves one float per iteration. See the array as n / 4 whole float4 followed by at most 3 leftover "
    "floats, and ask which pointer type makes one load move 16 bytes.",
    "Reinterpret x and y as float4 pointers (they start on 16-byte boundaries), run the grid-stride loop over the n / "
    "4 whole quads computing .x .y .z .w, then let a second grid-stride loop do the last n % 4 elements as single "
    "floats.",
    "Both loops keep one iteration at a time (the unroll pragma stays); the quad loop stops at n / 4 in integer "
    "division, the tail loop starts at 4 x (n / 4) plus the thread's first index, with the same step. Build the "
    "result with make_float4 so that the store is a single STG.E.128.",
]
KERNEL = "affine"
SIGNATURE = ('extern "C" __global__ void affine(const float* x, float* y, float alpha, float beta, long long n)')
ALPHA, BETA = 1.75, -0.5
SIZES = (1, 3, 4, 5, 31, 1000, 1023, 4097, 65537, 1_000_003)
GRIDS = ((1, 32), (7, 64), (264, 256))           # (blocks, threads): a grid-stride loop must be right for any grid


def _census(k) -> dict:
    """The SASS census of the kernel; without cuobjdump, the same counts read from its PTX (.v4 = 16 bytes)."""
    if k.sass:
        return k.sass_counts
    ptx = k._report.ptx if k._report is not None else ""
    c = {}
    for op, width in re.findall(r"\b(ld|st)\.global[\w.]*?(\.v4)?\.[fbu]32\b", ptx):
        key = f"{'LDG' if op == 'ld' else 'STG'}.{128 if width else 32}"
        c[key] = c.get(key, 0) + 1
    return c


def _sass(k) -> str:
    c = _census(k)
    return (f"LDG {c.get('LDG.32', 0)} x 4 B, {c.get('LDG.64', 0)} x 8 B, {c.get('LDG.128', 0)} x 16 B; "
            f"STG {c.get('STG.32', 0)} x 4 B, {c.get('STG.64', 0)} x 8 B, {c.get('STG.128', 0)} x 16 B")


def _facts(k) -> str | None:
    """What the compile report says is still missing, or None."""
    c = _census(k)
    if c.get("LDG.128", 0) == 0 or c.get("STG.128", 0) == 0:
        why = tr("the loop still moves 4 bytes per access: read x as float4 (reinterpret_cast<const float4*>) and "
                 "write y as float4, one 16-byte load and one 16-byte store per iteration")
    elif c.get("LDG.32", 0) + c.get("LDG.64", 0) == 0:
        why = tr("every load is 16 bytes wide, so nothing reads the last n % 4 elements: a float4 cannot start past "
                 "the last whole group of 4, and those elements need single-float accesses")
    elif k.spills:
        why = tr("ptxas spills {n} bytes: nothing here needs more than a few registers", n=k.spills)
    else:
        return None
    return tr("{why} (the compile report for sm_90: {report})", why=why, report=_sass(k))


def _judge(kern, case):
    """None when the kernel is right for this (n, blocks, threads), else a Verdict that names the case."""
    from common import arrays, check as chk
    from course.checks import said
    from course.exercise import Verdict
    from course.exercises.phase2_checks import run_case

    n, blocks, threads = case
    host = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    what = tr("n = {n}, {blocks} blocks of {threads} threads", n=n, blocks=blocks, threads=threads)
    got, failed = run_case(what, lambda x, y: kern((blocks,), (threads,), (x, y, np.float32(ALPHA), np.float32(BETA),
                                                                           np.int64(n))),
                           arrays.from_numpy(host, "float32", "cuda"), (n,))
    if failed is not None:
        return failed
    c = chk.compare(got, ALPHA * host.astype(np.float64) + BETA, "float32")
    if c.ok:
        return None
    unwritten = np.flatnonzero(np.isnan(got))
    tail = (tr("; the last {k} element(s) (n % 4) stay unwritten: the tail", k=n % 4) if n % 4 and unwritten.size
            and unwritten.min() >= n - n % 4 else "")
    return Verdict(False, tr("{what}: {message}{tail}. Does every element belong to exactly one float4 or to the "
                             "scalar tail, for every grid?", what=what, message=said(c.message), tail=tail))


def check(path):
    from course.exercises.phase2_checks import compiled_then_run

    cases = [(n, blocks, threads) for n in SIZES for blocks, threads in GRIDS]
    return compiled_then_run(path, KERNEL, SIGNATURE, _facts, cases, _judge, lambda k: tr(
        "the compile report for sm_90 shows what was asked: {report}, {regs} registers, no spill - one 16-byte load "
        "in flight per thread where there were 4 bytes, and a quarter of the load and store instructions",
        report=_sass(k), regs=k.registers))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the off-by-one tail (i <= n)', [('i < n; i += step', 'i <= n; i += step')],
     ('not run', 'past its end')),
    ('float4 everywhere, no scalar tail',
     [('    for (long long i = 4 * quads + first; i < n; i += step) {     // the tail: at most 3 elements, single '
       'floats\n'
       '        y[i] = alpha * x[i] + beta;\n'
       '    }\n',
       '')],
     'nothing reads the last n % 4'),
]
