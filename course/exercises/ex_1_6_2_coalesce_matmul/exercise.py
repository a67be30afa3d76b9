"""Exercise 1.6.2 - coalesce a naive matmul: its warps walk the rows of C, so each A load touches 16 sectors; fix the
index so they walk the columns. Checked on a GPU: right on awkward shapes (output poisoned with NaN first), then
timed against the starting kernel in interleaved rounds at 2048^3."""
import math

import numpy as np

from common.i18n import tr

ID = "1.6.2"
TITLE = "Coalesce a naive matmul: fix the index so each warp's loads touch 4 sectors, not 17 (timed on a GPU)"
TIER = "gpu"
FILE = "kernel.cu"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase1.py.
HINTS = [
    "Look at the two lines that compute row and col from threadIdx: which one does threadIdx.x - the index that "
    "changes fastest within a warp - feed?",
    "A warp is 16 consecutive threadIdx.x at two threadIdx.y. With threadIdx.x on the row, its lanes read A from 16 "
    "rows K floats apart (16 sectors) and B at two addresses. With threadIdx.x on the column, each half-warp reads "
    "one A address and 16 consecutive floats of B: 4 sectors in all.",
    "Swap the two roles: threadIdx.y picks the row of C and threadIdx.x the column, with the blockIdx offsets, the "
    "bounds check and the launch left as they are.",
]
KERNEL = "mm_tile16"
TILE = 16
CASES = ((1, 1, 1), (17, 33, 9), (65, 31, 100), (100, 257, 64), (300, 1, 500), (6, 5, 0))   # (M, N, K)
BENCH = (2048, 2048, 2048)
NEEDED = 2.0     # speed-up over the starting kernel (the sector model predicts 17 / 4 = 4.25x)
# the starting point: the solution with threadIdx.x on the row (its comments, which give the answer away, dropped)
BREAK = [("threadIdx.y;     // a warp: 2 rows ...", "threadIdx.x;"),
         ("threadIdx.x;     // ... of 16 consecutive columns: threadIdx.x walks the row of C", "threadIdx.y;")]
BREAK_KO = [("threadIdx.y;     // warp 하나: 2행 ...", "threadIdx.x;"),
            ("threadIdx.x;     // ... 의 연속된 16열. threadIdx.x가 C의 행을 따라감", "threadIdx.y;")]


def _run(kern, a, b, c, m: int, n: int, k: int):
    """The launch the task fixes: (16, 16) blocks, one per 16 x 16 tile of C."""
    kern((math.ceil(n / TILE), math.ceil(m / TILE)), (TILE, TILE), (a, b, c, np.int32(m), np.int32(n), np.int32(k)))


def _correct(kern):
    """None when the kernel is right on CASES, else a Verdict naming the case."""
    from common import arrays, check as chk
    from course.checks import compare
    from course.exercise import Verdict
    from phase1_architecture.lab06_matmul_naive import lab as L

    rng = np.random.default_rng(162)
    for m, n, k in CASES:
        a_h, b_h = rng.standard_normal((m, k)), rng.standard_normal((k, n))
        a, b = arrays.from_numpy(a_h, "float32", "cuda"), arrays.from_numpy(b_h, "float32", "cuda")
        c = chk.poisoned((m, n), "float32", a)            # NaN everywhere: an output nobody writes shows
        try:
            _run(kern, a, b, c, m, n, k)
            arrays.to_numpy(c)                            # waits for the kernel: a fault surfaces here
        except Exception as e:  # noqa: BLE001 - a kernel that faults is a wrong answer, said plainly
            return Verdict(False, tr("{m} x {n} x {k}: the kernel failed ({error}: {detail}); an index past the end "
                                     "of A, B or C is the usual cause", m=m, n=n, k=k, error=type(e).__name__,
                                     detail=str(e)[:160]))
        ref = np.asarray(a_h, np.float32).astype(np.float64) @ np.asarray(b_h, np.float32).astype(np.float64)
        bad = compare(c, ref, "float32", f"{m} x {n} x {k}", L.tolerance((m, n, k), "float32"))
        if bad is not None:
            return Verdict(False, tr("{why}. Faster does not count until it is right: does every (row, col) of C get "
                                     "exactly one thread, and does each thread still check row < M and col < N?",
                                     why=bad.why))
    return None


def check(path):
    from common import arrays, bench, device
    from common.arrays import device_randn
    from course.checks import gpu_kernel
    from course.exercise import Verdict, find

    if not device.has_gpu():
        from course.exercises.phase2_checks import compiles_only

        return compiles_only(path, KERNEL, tr("whether it is right on every shape, and its speed-up over the "
                                              "starting kernel,"))
    kern = gpu_kernel(path, KERNEL)
    if isinstance(kern, Verdict):
        return Verdict(False, tr("{file} must define extern \"C\" __global__ void {kernel}(A, B, C, M, N, K) and "
                                 "compile: {why}", file=FILE, kernel=KERNEL, why=kern.why))
    bad = _correct(kern)
    if bad is not None:
        return bad
    start = gpu_kernel(find(ID).start, KERNEL)
    if isinstance(start, Verdict):
        return Verdict(False, tr("the starting kernel does not compile here, so there is nothing to time against: "
                                 "{why}", why=start.why))
    m, n, k = BENCH
    a, b = device_randn((m, k), "float32", 1621), device_randn((k, n), "float32", 1622)
    mine, theirs = (arrays.empty((m, n), "float32", a) for _ in range(2))
    t = bench.interleaved({"yours": lambda: _run(kern, a, b, mine, m, n, k),
                           "start": lambda: _run(start, a, b, theirs, m, n, k)}, rounds=3)
    flops = 2 * m * n * k
    yours, first = t["yours"].tflops(flops), t["start"].tflops(flops)
    ratio = yours / first
    if ratio < NEEDED:
        return Verdict(False, tr("right, but at {m}^3 yours ran at {yours:.2f} TFLOP/s and the starting kernel at "
                                 "{first:.2f} ({ratio:.2f}x, {needed:.0f}x needed). A warp is threadIdx.x = 0 .. 15 at "
                                 "two values of threadIdx.y: which of row and col should the 16 fast lanes walk so "
                                 "that one A load is a broadcast and one B load reads consecutive floats?", m=m,
                                 yours=yours, first=first, ratio=ratio, needed=NEEDED))
    return Verdict(True, tr("right on every shape, and at {m}^3 {yours:.2f} TFLOP/s against {first:.2f} for the "
                            "starting kernel ({ratio:.1f}x; the sector model says 17 / 4 = 4.25x): with threadIdx.x on "
                            "the column a warp's A load touches 2 sectors (two rows) and its B load 2 (64 consecutive "
                            "bytes), where threadIdx.x on the row made A touch 16 and B 1", m=m, yours=yours,
                            first=first, ratio=ratio))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('rows and columns swapped the wrong way back',
     [('int row = blockIdx.y * 16 + threadIdx.y;', 'int row = blockIdx.y * 16 + threadIdx.x;'),
      ('int col = blockIdx.x * 16 + threadIdx.x;', 'int col = blockIdx.x * 16 + threadIdx.y;')],
     ('not run', 'which of row and col should the 16 fast lanes walk')),
    ('a typo: it does not compile', [('float acc = 0.f;', 'float acc = 0.f')], 'does not compile'),
]
