"""Exercise 1.2.1 - the tail: a Triton vector add that is only right when n is a multiple of its block."""
import numpy as np

from common.i18n import tr

ID = "1.2.1"
TITLE = "Fix the tail of a Triton vector add (any n, not only multiples of the block)"
TIER = "cpu"
FILE = "add.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase1.py.
HINTS = [
    "Look at grid(n) and at the tl.load and tl.store lines: for n = 1000 and BLOCK = 256, how many programs does n // "
    "BLOCK launch, and which elements does no program reach?",
    "Two things are wrong: the grid must round up, so that the partial last block gets a program too, and in that "
    "last program the lanes whose offset is n or more must neither load nor store: a mask.",
    "Build one boolean per lane, true where its offset is below n, and pass it as mask= to both loads and to the "
    "store; make grid() return the ceiling of n / BLOCK (triton.cdiv computes it).",
]
SIZES = (1, 255, 256, 257, 1000, 4097)
# the starting point: the solution without its mask and with a grid that rounds down, under this docstring
TASK = "Exercise 1.2.1: this Triton vector add is wrong for some sizes. Find out which, then fix it."
BREAK = [
    ("    ok = offs < n                          # the last program's lanes past the end do nothing\n", ""),
    ("a = tl.load(a_ptr + offs, mask=ok)", "a = tl.load(a_ptr + offs)"),
    ("b = tl.load(b_ptr + offs, mask=ok)", "b = tl.load(b_ptr + offs)"),
    ("a + b, mask=ok)", "a + b)"),
    ("(triton.cdiv(n, BLOCK),)        # ceil(n / BLOCK): a partial last block still gets a program", "(n // BLOCK,)"),
]
TASK_KO = "연습 문제 1.2.1: 이 Triton vector add는 어떤 크기에서 틀립니다. 어느 크기인지 찾은 다음 고칩니다."
BREAK_KO = [            # BREAK, as solution.ko/ words its comments
    ("    ok = offs < n                          # 마지막 program에서 끝을 넘은 lane은 아무것도 하지 않음\n", ""),
    ("a = tl.load(a_ptr + offs, mask=ok)", "a = tl.load(a_ptr + offs)"),
    ("b = tl.load(b_ptr + offs, mask=ok)", "b = tl.load(b_ptr + offs)"),
    ("a + b, mask=ok)", "a + b)"),
    ("(triton.cdiv(n, BLOCK),)        # ceil(n / BLOCK): 덜 찬 마지막 block도 program을 받음", "(n // BLOCK,)"),
]


def check(path):
    from common import arrays, lab
    from common.triton_support import launch
    from course.checks import guarded_output, load_module, run_cases
    from course.exercises.phase3_checks import padded
    from course.exercise import Verdict

    mod = load_module(path, "ex121")
    if isinstance(mod, Verdict):
        return mod
    rng = np.random.default_rng(121)

    def run(n):
        # the inputs are followed by 1.0s and the output lies between NaN guard bands: a lane past n that loads and
        # stores anyway is seen (and cannot corrupt the checker's memory)
        a, b = (padded(rng.standard_normal(n), "float32", lab.where(), fill=1.0) for _ in range(2))
        c = guarded_output((n,), "float32", a)
        launch(mod.add_kernel, mod.grid(n), a, b, c, n, BLOCK=mod.BLOCK)
        return c, (arrays.to_numpy(a), arrays.to_numpy(b))

    bad = run_cases(SIZES, run, lambda a, b: a + b, name="c")
    if bad is not None:
        return Verdict(False, tr("n = {why}. How many programs does grid(n) launch, and what does the last one do "
                                 "with its lanes past n?", why=bad.why))
    return Verdict(True, tr("right for n = {sizes}: every element written once, none past the end (a mask on the "
                            "loads and the store, and a grid of ceil(n / BLOCK) programs)",
                            sizes=", ".join(map(str, SIZES))))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the half-fix: grid rounded up, no mask yet',
     [('a = tl.load(a_ptr + offs, mask=ok)', 'a = tl.load(a_ptr + offs)'),
      ('b = tl.load(b_ptr + offs, mask=ok)', 'b = tl.load(b_ptr + offs)'),
      ('a + b, mask=ok)', 'a + b)')],
     'elements past the end of c'),
    ('masked, but the grid still rounds down', [('(triton.cdiv(n, BLOCK),)', '(n // BLOCK,)')], 'n = 1:'),
    ('the mask one too far (offs <= n)', [('ok = offs < n ', 'ok = offs <= n')], 'element past the end of c'),
]
