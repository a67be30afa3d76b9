"""Exercise 1.6.1 - count the 32-byte sectors one warp's A and B loads touch in the naive matmul, for both
thread-to-element mappings and for shapes that break the pattern, checked against lab 1.6's own sector model
(warp_sectors and predicted_ratio in phase1_architecture/lab06_matmul_naive/lab.py)."""
import os

from common.i18n import tr

ID = "1.6.1"
TITLE = "Count the 32-byte sectors a warp's loads touch in the naive matmul (both mappings, awkward shapes)"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase1.py.
HINTS = [
    "Write down the byte address each lane reads for A[row, k] and for B[k, col] (the docstring says which element): "
    "element (r, c) of a row-major matrix with C columns is at 4 x (r x C + c). Then count the distinct 32-byte "
    "sectors, address // 32.",
    "Lanes that read one address share its sector; lanes 4 bytes apart fill a sector 8 at a time; lanes a whole row "
    "apart (4 x K bytes) need a sector each unless a row is shorter than 32 bytes. A row of B that does not start on "
    "a 32-byte boundary spreads its 128 bytes over one more sector.",
    "For the ratio, add the A and B sectors per step of each mapping and divide the row-walking one by the "
    "column-walking one. At N = 4100, row k of B starts at 4 x 4100 x k bytes: take that mod 32 for k = 1 and 2, and "
    "average B's sectors over the two kinds of rows.",
]
NAMES = ("SECTORS", "RATIO")


def _why(mapping: str, matrix: str) -> str:
    """What to look at in the addresses behind a sector count (never the count)."""
    if (matrix == "A") == (mapping == "coalesced"):      # A of mm_02, B of mm_01
        return tr("which element of {matrix} does each lane read in this mapping - how many different addresses is "
                  "that? Lanes that read one address share its sector", matrix=matrix)
    if matrix == "A":       # uncoalesced: lane l reads A[l, kk], K floats apart
        return tr("lane l reads A[l, k], one row of A (K floats) after lane l - 1: how far apart are the lanes in "
                  "bytes, and how many distinct 32-byte sectors do the 32 addresses fall in?")
    return tr("the lanes read 32 consecutive floats of row k of B, which starts k x N floats after B's first one: "
              "does that put it on a 32-byte boundary, and how many 32-byte sectors do those bytes overlap from there?")


def check(path):
    from course.checks import off
    from course.exercise import Verdict
    from course.exercises.phase1_checks import answers, not_yet
    from phase1_architecture.lab06_matmul_naive import lab as L

    start = os.path.join(os.path.dirname(os.path.abspath(__file__)), "start", FILE)
    mod = answers(path, "ex161", start, NAMES)
    if isinstance(mod, Verdict):
        return mod
    wrong = []
    for (mapping, m, n, k, kk), said in mod.SECTORS.items():
        case = f"{mapping} {m}x{n}x{k}, k = {kk}"
        got = L.warp_sectors(mapping, m, n, k, kk=kk)
        if said is None or not isinstance(said, (tuple, list)) or len(said) != 2:
            wrong.append(tr("{case}: no answer yet (write a pair: A sectors, B sectors)", case=case))
            continue
        for matrix, s in zip("AB", said):
            if s is None:
                wrong.append(tr("{name}: no answer yet", name=f"{case}, {matrix}"))
            elif s != got[matrix]:
                wrong.append(tr("{case}, {matrix}: {said} is {off} - {why}", case=case, matrix=matrix, said=s,
                                off=off(s, got[matrix]), why=_why(mapping, matrix)))
    for (m, n, k), said in mod.RATIO.items():
        ratio, _, _ = L.predicted_ratio(m, n, k)
        shape = f"{m}x{n}x{k}"
        if said is None:
            wrong.append(tr("RATIO at {shape}: no answer yet", shape=shape))
        elif not isinstance(said, (int, float)) or abs(said - ratio) > 0.02 * ratio:
            wrong.append(tr("RATIO at {shape}: {said} is {off} - add A's and B's sectors per k step for each mapping, "
                            "B's averaged over the first 8 steps where its rows differ, and divide the uncoalesced "
                            "warp's sum by the coalesced one's", shape=shape, said=said, off=off(said, ratio)))
    if wrong:
        return Verdict(False, not_yet(wrong, 2 * len(mod.SECTORS) + len(mod.RATIO)))
    return Verdict(True, tr("all right: a load costs the distinct 32-byte sectors its 32 addresses fall in - one for a "
                            "broadcast, four for 128 aligned contiguous bytes, a fifth when the row starts mid-sector, "
                            "and one per lane once lanes are 32 bytes or more apart. The same instructions, another "
                            "mapping: 33 sectors against 5 per step, the 6.6x lab 1.6 predicts (the H200 measured "
                            "~9x)"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('coalesced B counted as one sector',
     [('("coalesced", 4096, 4096, 4096, 0): (1, 4)', '("coalesced", 4096, 4096, 4096, 0): (1, 1)')],
     'coalesced 4096x4096x4096, k = 0, B: 1 is too low'),
    ('the misaligned row counted as aligned',
     [('("coalesced", 4096, 4100, 4096, 1): (1, 5)', '("coalesced", 4096, 4100, 4096, 1): (1, 4)')],
     'coalesced 4096x4100x4096, k = 1, B: 4 is too low'),
    ("the ratio at N = 4100 as at 4096 (B's misaligned rows forgotten)",
     [('(4096, 4100, 4096): 33 / 5.5,', '(4096, 4100, 4096): 33 / 5,')],
     'RATIO at 4096x4100x4096: 6.6 is too high'),
]
