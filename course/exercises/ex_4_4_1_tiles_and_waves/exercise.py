"""Exercise 4.4.1 - a tile's reuse, its waves on 132 SMs and the pipeline stages that fit, checked against lab 4.4's
own models (waves, tile_intensity, triton_smem)."""
from common.i18n import tr

ID = "4.4.1"
TITLE = "Predict a GEMM tile's waves, reuse and the pipeline stages that fit (lab 4.4's models)"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Three small models, one per dictionary: waves, reuse and stages. For the waves, count the tiles first: ceil(M / "
    "BM) x ceil(N / BN).",
    "Slots = 132 x blocks per SM; waves = tiles / slots, rounded up; efficiency = tiles / (waves x slots). Reuse: 2 "
    "BM BN BK FLOPs per k-step over (BM + BN) x BK elements of 2 bytes. A stage holds one A tile and one B tile, the "
    "same (BM + BN) x BK x 2 bytes.",
    "At M = N = 4224 a 128-row tile needs 33 tiles a side instead of 32: about 6% more tiles, and they spill into an "
    "extra wave that is mostly empty. For stages, divide 227 KiB by one stage's bytes and round down.",
]
SMS = 132
SMEM = 227 * 1024


def _max_stages(bm, bn, bk) -> int:
    from phase4_optimization.lab04_tiling_strategy import lab as L

    s = 0
    while L.triton_smem({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "num_stages": s + 1}) <= SMEM:
        s += 1
    return s


def _waves(got) -> list[str]:
    from course.checks import off, sentences
    from course.exercises.phase4_checks import close
    from phase4_optimization.lab04_tiling_strategy import lab as L

    wrong = []
    for (bm, bn, mn, per_sm), said in got.items():
        w = L.waves(mn, mn, bm, bn, SMS * per_sm)
        name = tr("{bm}x{bn} tiles at M = N = {mn}, {per_sm} block(s) per SM", bm=bm, bn=bn, mn=mn, per_sm=per_sm)
        if not isinstance(said, (tuple, list)) or len(said) != 3 or None in said:
            wrong.append(tr("{name}: not answered yet (tiles, waves, efficiency)", name=name))
        else:
            bad = []
            if said[0] != w["tiles"]:
                bad.append(tr("{said} tiles is {off}: one block per BM x BN tile of the M x N output, and a partial "
                              "tile at an edge is still a whole block - count the tiles a side, rounded up",
                              said=said[0], off=off(said[0], w["tiles"])))
            if said[1] != w["wave_count"]:
                bad.append(tr("{said} waves is {off}: a wave puts one tile on every slot, {sms} SMs x the blocks per "
                              "SM, and a last wave that is only partly full still counts as one", said=said[1],
                              off=off(said[1], w["wave_count"]), sms=SMS))
            if not close(said[2], w["efficiency"], 0.01):
                bad.append(tr("efficiency {said} is {off}: the tiles over the slots the waves offer, tiles / (waves x "
                              "slots)", said=said[2], off=off(said[2], w["efficiency"])))
            if bad:
                wrong.append(f"{name}: " + sentences(bad))
    return wrong


def check(path):
    from course.checks import off
    from course.exercise import Verdict
    from course.exercises.phase4_checks import answers, close, verdict
    from phase4_optimization.lab04_tiling_strategy import lab as L

    parts = {}
    for name in ("WAVES", "INTENSITY", "MAX_STAGES"):
        parts[name] = answers(path, "ex441", __file__, name=name)
        if isinstance(parts[name], Verdict):
            return parts[name]
    wrong = _waves(parts["WAVES"])
    for (bm, bn), said in parts["INTENSITY"].items():
        want = L.tile_intensity(bm, bn)
        if said is None:
            wrong.append(tr("{bm}x{bn} reuse: not answered yet", bm=bm, bn=bn))
        elif not close(said, want, 0.01):
            wrong.append(tr("{bm}x{bn} reuse: {said} FLOP/B is {off}: per k-step the tile does 2 BM BN BK FLOPs and "
                            "loads (BM + BN) x BK elements of 2 bytes - divide, and BK cancels", bm=bm, bn=bn,
                            said=said, off=off(said, want)))
    for (bm, bn, bk), said in parts["MAX_STAGES"].items():
        want = _max_stages(bm, bn, bk)
        if said is None:
            wrong.append(tr("{bm}x{bn}x{bk} stages: not answered yet", bm=bm, bn=bn, bk=bk))
        elif said != want:
            wrong.append(tr("{bm}x{bn}x{bk} stages: {said} is {off}: one stage holds a BM x BK tile of A and a BK x BN "
                            "tile of B, 2 bytes an element - how many whole stages fit in 227 KiB?", bm=bm, bn=bn,
                            bk=bk, said=said, off=off(said, want)))
    return verdict(wrong, tr("all right: 6% more work at 4224 costs a 5th wave a quarter full (0.97 to 0.85 "
                             "efficiency); two blocks per SM halve the waves but not the quantization; reuse grows "
                             "with the tile (BM BN / (BM + BN) FLOP/B) while the stages it can afford shrink - 4 for "
                             "128 x 256 x 64, 3 for 256 x 256 x 64. Lab 4.4's wave sweep measured 0.868 at 4224 "
                             "against this 0.85"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('waves rounded down',
     [('(128, 256, 4224, 1): (561, 5, 0.850)', '(128, 256, 4224, 1): (561, 4, 0.850)')],
     '128x256 tiles at M = N = 4224, 1 block(s) per SM: 4 waves is too low'),
    ('stages from 256 KiB', [('(128, 256, 64): 4,', '(128, 256, 64): 5,')], '128x256x64 stages: 5 is too high'),
    ('reuse without the 2 bytes an element', [('(128, 128): 64.0', '(128, 128): 128.0')],
     '128x128 reuse: 128.0 FLOP/B is too high'),
]
