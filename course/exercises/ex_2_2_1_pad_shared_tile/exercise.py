"""Exercise 2.2.1 - predict the shared-memory passes of one warp load (lane strides, columns of padded tiles,
broadcasts, the XOR swizzle, transpose_04's tile) and pick the padding, checked against lab 2.2's bank model
(`passes` in phase2_cuda/lab02_bank_conflicts/lab.py: the most distinct words asked of one bank)."""
from common.i18n import tr

ID = "2.2.1"
TITLE = "Pad a shared tile: predict the bank-conflict passes of 17 warp loads and choose the padding"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "Every case is one rule: bank = word % 32, and the passes are the most distinct words any one bank is asked for. "
    "For each case, list the words lanes 0 .. 31 read and tally them by bank.",
    "For word s x i the banks repeat every 32 / gcd(s, 32) lanes, so each bank gets gcd(s, 32) distinct words; a "
    "column of tile[32][P] is the same rule with the pitch P as the stride. Lanes that read the same word count once "
    "(a broadcast).",
    "PAD: the smallest p with gcd(32 + p, 32) = 1. ALIGNED_PAD: only pitches that are multiples of 4 qualify, so the "
    "gcd is at least 4 - find the first one that reaches it. For the XOR swizzle and tile[64][65], compute each "
    "lane's bank and see whether the 32 banks all differ.",
]
LAB = "phase2_lab02_bank_conflicts"
NAMES = ("STRIDE_PASSES", "COLUMN_PASSES", "PATTERN_PASSES", "PAD", "ALIGNED_PAD")
COLUMN = 0              # which column the COLUMN_PASSES read walks (any column gives the same passes)
PATTERNS = {            # the words lane i reads, and what to look at when the passes are wrong (never how many)
    "every lane reads word 0": (lambda i: 0, "all 32 lanes ask for one and the same word - how many distinct words is "
                                             "that, and does a bank serve a word many lanes want more than once?"),
    "lane i reads word i // 2": (lambda i: i // 2, "pairs of lanes ask for one word: which bank is each distinct word "
                                                   "in, and does a word two lanes share cost a second pass?"),
    "lane i reads word 32 * (i // 2)": (lambda i: 32 * (i // 2), "list the words the lanes read: which bank is each "
                                                                 "in, and how many of them are distinct? A word two "
                                                                 "lanes share counts once"),
    "lane i reads word 32 * i + (5 ^ i)": (lambda i: 32 * i + (5 ^ i), "32 i is a whole number of rows of banks, so "
                                                                      "the bank is (5 ^ i) % 32 - do two lanes ever "
                                                                      "land in the same bank?"),
    "lane i reads tile[i + 32][7] of float tile[64][65]": (
        lambda i: (i + 32) * 65 + 7, "lane i reads word 65 (i + 32) + 7, and 65 is two rows of banks and one bank "
                                     "more - which bank does each lane land in, and do two lanes ever share one?"),
}


def _column(lab, pitch: int) -> int:
    return lab.passes(pitch * i + COLUMN for i in range(32))


def _aligned_pad(lab) -> tuple[int, int]:
    """The smallest pad p with 32 + p a multiple of 4 whose column read takes the fewest passes."""
    best = None
    for p in range(0, 64, 4):
        n = _column(lab, 32 + p)
        if best is None or n < best[1]:
            best = (p, n)
    return best


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _off(said, got) -> str:
    """Which way a wrong whole number is off ('too high', 'too low'), or that it is not a whole number."""
    from course.checks import off

    return off(said, got) if _whole(said) else tr("not a whole number")


def _judge(wrong: list, case: str, said, got: int, why: str) -> None:
    """Add `case` to `wrong` unless `said` is `got` (a whole number): which way it is off and what to look at, never
    `got`. None is 'not answered yet'."""
    if said is None:
        wrong.append(tr("{name}: no answer yet", name=case))
    elif said != got or not _whole(said):
        wrong.append(tr("{case}: {said} is {off} - {why}", case=case, said=said if _whole(said) else repr(said),
                        off=_off(said, got), why=why))


def _judge_aligned(wrong: list, said, got: tuple[int, int]) -> None:
    """ALIGNED_PAD, a pair (pad, passes): each wrong half says which way it is off."""
    from course.checks import both

    if isinstance(said, (tuple, list)) and None in said:
        wrong.append(tr("{name}: no answer yet", name="ALIGNED_PAD"))
        return
    if not isinstance(said, (tuple, list)) or len(said) != 2:
        wrong.append(tr("ALIGNED_PAD: write a pair (pad, its passes), not {said!r}", said=said))
        return
    bad = [tr("{what} {said} is {off}", what=what, said=s if _whole(s) else repr(s), off=_off(s, g))
           for what, s, g in zip((tr("pad"), tr("passes")), said, got) if s != g or not _whole(s)]
    if bad:
        wrong.append(tr("ALIGNED_PAD: {bad} - a row stays 16-byte aligned only when the pitch is a whole number of "
                        "float4s: what does that force on the banks a column read's lanes can reach, and so on its "
                        "passes? Then take the smallest pad that gets there", bad=both(bad)))


def check(path):
    from course.exercise import Verdict
    from course.exercises.phase2_checks import answers, h200_row, not_yet
    from phase2_cuda.lab02_bank_conflicts import lab as L

    mod = answers(path, "ex221", __file__, NAMES)
    if isinstance(mod, Verdict):
        return mod
    wrong, total = [], 0
    for s, said in mod.STRIDE_PASSES.items():
        total += 1
        _judge(wrong, f"stride {s}", said, L.stride_passes(s),
               tr("lane i reads word s i, in bank (s i) % 32: how many different banks do the 32 lanes reach, and so "
                  "how many different words does the busiest bank get?"))
    for pitch, said in mod.COLUMN_PASSES.items():
        total += 1
        _judge(wrong, tr("column of tile[32][{pitch}]", pitch=pitch), said, _column(L, pitch),
               tr("lane i reads word P i + c, one row (the pitch P) after lane i - 1: the pitch acts as the lane "
                  "stride - how many different banks do the 32 lanes reach, and how many different words does the "
                  "busiest one get?"))
    for name, said in mod.PATTERN_PASSES.items():
        total += 1
        words, why = PATTERNS[name]
        _judge(wrong, name, said, L.passes(words(i) for i in range(32)), tr(why))
    total += 2
    pad = next(p for p in range(33) if _column(L, 32 + p) == 1)
    _judge(wrong, "PAD", mod.PAD, pad, tr("a column read of tile[32][32 + p] is a lane stride of 32 + p words: for "
                                          "which pitches does every lane of the column get a bank of its own, and "
                                          "which is the smallest pad that makes one?"))
    _judge_aligned(wrong, mod.ALIGNED_PAD, _aligned_pad(L))
    if wrong:
        return Verdict(False, not_yet(wrong, total))
    s16, s33 = (h200_row(LAB, variant=f"stride {s}").get("cycles_per_load") for s in (16, 33))
    seen = (tr(" Measured on the H200, stride 16 took {s16:.2f} SM clocks per warp load and stride 33 {s33:.2f} "
               "({lab}.json).", s16=s16, s33=s33, lab=LAB) if s16 and s33 else "")
    return Verdict(True, tr("all {total} right: passes = the most distinct words one bank is asked for, so a lane "
                            "stride (or a tile's pitch, for a column read) costs gcd(stride, 32), shared words are "
                            "free, and one word of padding makes a 32-wide column conflict-free - but an aligned pitch "
                            "cannot beat 4 passes, which is why tensor-core kernels swizzle (1 pass, no padding) "
                            "instead of padding.", total=total) + seen)


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('pad of 32 (no change of bank)', [('PAD = 1 ', 'PAD = 32 ')], 'PAD: 32 is too high'),
    ('stride 16 counted as 2-way', [('16: 16, 24: 8', '16: 2, 24: 8')], 'stride 16: 2 is too low'),
    ('lanes that share a word counted twice',
     [('"lane i reads word 32 * (i // 2)": 16,', '"lane i reads word 32 * (i // 2)": 32,')],
     'lane i reads word 32 * (i // 2): 32 is too high'),
]
