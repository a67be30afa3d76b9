"""Exercise 2.2.1 - predict the shared-memory passes of one warp load (lane strides, columns of padded tiles,
broadcasts, the XOR swizzle, transpose_04's tile) and pick the padding, checked against lab 2.2's bank model
(`passes` in phase2_cuda/lab02_bank_conflicts/lab.py: the most distinct words asked of one bank)."""
import math

from common.i18n import plural, tr

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
PATTERNS = {            # the words lane i reads, and why the passes are what they are
    "every lane reads word 0": (lambda i: 0, "one word for all 32 lanes is a broadcast: 1 pass"),
    "lane i reads word i // 2": (lambda i: i // 2, "16 distinct words in 16 different banks, each read by two lanes "
                                                   "(a broadcast within the pair): 1 pass"),
    "lane i reads word 32 * (i // 2)": (lambda i: 32 * (i // 2), "16 distinct words 0, 32, 64, ..., all in bank 0: "
                                                                 "16 passes (pairs of lanes share a word, so not 32)"),
    "lane i reads word 32 * i + (5 ^ i)": (lambda i: 32 * i + (5 ^ i), "bank (5 ^ i) % 32, and i -> 5 ^ i is a "
                                                                      "permutation of 0..31: 1 pass"),
    "lane i reads tile[i + 32][7] of float tile[64][65]": (
        lambda i: (i + 32) * 65 + 7, "word 65 i + 2087, bank (i + 7) % 32 since 65 = 2 x 32 + 1 and 2087 = 65 x 32 + "
                                     "7: 32 different banks, 1 pass"),
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


def _judge(wrong: list, case: str, said, got, why: str) -> None:
    """Add `case` to `wrong` unless `said` is `got` (a whole number); None is 'not answered yet'."""
    if said is None or (isinstance(said, (tuple, list)) and None in said):
        wrong.append(tr("{name}: no answer yet", name=case))
    elif said != got or not all(map(_whole, said if isinstance(said, (tuple, list)) else [said])):
        wrong.append(tr("{case}: you said {said}; it is {got} - {why}", case=case, said=said, got=got, why=why))


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
        g = math.gcd(s, 32)
        _judge(wrong, f"stride {s}", said, L.stride_passes(s),
               tr("lane i asks bank {s} i % 32, which takes {values} different values, each asked by {lanes} for "
                  "different words (gcd({s}, 32) = {g})", s=s, values=32 // g, g=g,
                  lanes=plural(g, "{n} lane", "{n} lanes")))
    for pitch, said in mod.COLUMN_PASSES.items():
        total += 1
        _judge(wrong, tr("column of tile[32][{pitch}]", pitch=pitch), said, _column(L, pitch),
               tr("lane i reads word {pitch} i + c, bank ({bank} i + c) % 32: the pitch acts as the lane stride, "
                  "gcd({pitch}, 32) = {g}", pitch=pitch, bank=pitch % 32, g=math.gcd(pitch, 32)))
    for name, said in mod.PATTERN_PASSES.items():
        total += 1
        words, why = PATTERNS[name]
        _judge(wrong, name, said, L.passes(words(i) for i in range(32)), tr(why))
    total += 2
    pad = next(p for p in range(33) if _column(L, 32 + p) == 1)
    _judge(wrong, "PAD", mod.PAD, pad, tr("a column read of tile[32][32 + p] takes gcd(32 + p, 32) passes, which is 1 "
                                          "for every odd pitch"))
    said = mod.ALIGNED_PAD
    _judge(wrong, "ALIGNED_PAD", tuple(said) if isinstance(said, (tuple, list)) else said, _aligned_pad(L),
           tr("a pitch that keeps rows 16-byte aligned is a multiple of 4, so gcd(pitch, 32) >= 4: no padding of an "
              "aligned tile gets under 4 passes, and pitch 36 is the first to reach 4 (40 gives 8, 48 gives 16)"))
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


# Realistic wrong answers (tests/test_exercise_attempts.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('pad of 32 (no change of bank)', [('PAD = 1 ', 'PAD = 32 ')], 'PAD'),
    ('stride 16 counted as 2-way', [('16: 16, 24: 8', '16: 2, 24: 8')], '16'),
]
