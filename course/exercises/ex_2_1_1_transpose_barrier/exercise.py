"""Exercise 2.1.1 - a tiled transpose with its barrier missing: the warps read tile entries other warps have not stored
yet. Checked on a GPU: the learner's transpose.cu compiled for this GPU, run on awkward shapes and, several times, on
large ones, every output filled with NaN first (inside NaN guard bands), compared element for element (a transpose is
exact)."""
import math

import numpy as np

from common.i18n import tr

ID = "2.1.1"
TITLE = "A tiled transpose that is sometimes wrong: find the race between its warps and fix it (GPU)"
TIER = "gpu"
FILE = "transpose.cu"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "Look between the loop that writes the tile into shared memory and the loop that reads it back transposed: what "
    "makes a warp wait until the other warps have written?",
    "Thread (tx, ty) reads row tx of the tile, which other warps of the block wrote. Warps run independently, so "
    "without a barrier a fast warp reads shared memory nobody has written yet: a race, different from run to run and "
    "likelier with many blocks.",
    "Put a block-wide barrier after the store loop and before the read loop, where every thread of the block reaches "
    "it (not inside a branch that only some threads take).",
]
KERNEL = "transpose_tiled"
SIGNATURE = ('extern "C" __global__ void transpose_tiled(const float* in, float* out, long long M, long long N) '
             "launched with (32, 8)-thread blocks")
# the starting point: the solution without its barrier
BREAK = [("    __syncthreads();\n", "")]
TILE, ROWS = 32, 8
SHAPES = ((1, 1), (33, 31), (31, 33), (1, 4097), (4097, 1), (100, 67), (2000, 3000), (4096, 4096))
REPEATS = 3                      # a race need not show on every run: the large shapes run three times


def _launch(kern, a, out, m: int, n: int):
    kern((math.ceil(n / TILE), math.ceil(m / TILE)), (TILE, ROWS), (a, out, np.int64(m), np.int64(n)))


def _diagnosis(got: np.ndarray, ref: np.ndarray) -> str:
    """Which elements are wrong, and what that says about the kernel."""
    bad = got != ref
    unwritten = int(np.isnan(got).sum())
    n_bad = int(bad.sum())
    tiles = {(int(r) // TILE, int(c) // TILE) for r, c in zip(*np.nonzero(bad))}
    words = tr("{bad:,} of {size:,} elements wrong, in {tiles:,} of {all_tiles:,} tiles", bad=n_bad, size=ref.size,
               tiles=len(tiles), all_tiles=math.ceil(ref.shape[0] / TILE) * math.ceil(ref.shape[1] / TILE))
    if unwritten == n_bad:
        return tr("{words}, all of them never written: does every element of out get a thread, at the edges too?",
                  words=words)
    return tr("{words}{unwritten}: values written, but not the right ones. A warp writes elements that other warps "
              "loaded into the tile - were they in the tile yet?", words=words,
              unwritten=tr(" ({n:,} never written)", n=unwritten) if unwritten else "")


def _judge(kern, case):
    """None when the transpose of this shape is exact (on this run), else a Verdict that says what is wrong."""
    from common import arrays
    from course.exercise import Verdict
    from course.exercises.phase2_checks import run_case

    m, n, run = case
    host = (np.random.default_rng(m * n + run).standard_normal((m, n)) * 3.0).astype(np.float32)
    what = f"{m} x {n}" + (tr(", run {i} of {n}", i=run + 1, n=REPEATS) if run else "")
    got, failed = run_case(what, lambda a, out: _launch(kern, a, out, m, n), arrays.from_numpy(host, "float32",
                                                                                                "cuda"), (n, m))
    if failed is not None:
        return failed
    return None if np.array_equal(got, host.T) else Verdict(False, f"{what}: {_diagnosis(got, host.T)}")


def check(path):
    from course.exercises.phase2_checks import gpu_check

    cases = [(m, n, run) for m, n in SHAPES for run in range(REPEATS if m * n > 10**6 else 1)]
    return gpu_check(path, KERNEL, SIGNATURE, cases, _judge, tr(
        "right on {shapes} shapes, the large ones {repeats} times: every warp now waits at __syncthreads() until the "
        "whole tile is in shared memory before it reads a column that other warps stored. Without it a warp whose "
        "loads returned early read elements its neighbours had not stored yet - left over from the previous tile or "
        "never written", shapes=len(SHAPES), repeats=REPEATS))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    # (a barrier moved INTO the load loop is still right: its last pass comes after every store, before any read)
    ('the barrier before the loads instead of between loads and reads',
     [('    __syncthreads();\n', ''),
      ('c0 = (long long)blockIdx.x * TILE;', 'c0 = (long long)blockIdx.x * TILE;\n    __syncthreads();')],
     ('not run', 'were they in the tile yet?')),
    ('__syncwarp() for __syncthreads()', [('__syncthreads();', '__syncwarp();')],
     ('not run', 'were they in the tile yet?')),
]
