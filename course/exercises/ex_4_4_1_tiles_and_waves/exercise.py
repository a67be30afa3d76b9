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
    from course.exercises.phase4_checks import close
    from phase4_optimization.lab04_tiling_strategy import lab as L

    wrong = []
    for (bm, bn, mn, per_sm), said in got.items():
        w = L.waves(mn, mn, bm, bn, SMS * per_sm)
        name = tr("{bm}x{bn} tiles at M = N = {mn}, {per_sm} block(s) per SM", bm=bm, bn=bn, mn=mn, per_sm=per_sm)
        if not isinstance(said, (tuple, list)) or len(said) != 3 or None in said:
            wrong.append(tr("{name}: not answered yet (tiles, waves, efficiency)", name=name))
        elif said[0] != w["tiles"] or said[1] != w["wave_count"] or not close(said[2], w["efficiency"], 0.01):
            wrong.append(tr("{name}: {rows} x {cols} = {tiles} tiles on {slots} slots = {waves:.2f} waves, so {rounds} "
                            "rounds, the last {fill:.0%} full: efficiency {tiles} / ({rounds} x {slots}) = "
                            "{efficiency:.3f}; you said {said}", name=name, rows=-(-mn // bm), cols=-(-mn // bn),
                            tiles=w["tiles"], slots=SMS * per_sm, waves=w["waves"], rounds=w["wave_count"],
                            fill=w["last_wave_fill"], efficiency=w["efficiency"], said=tuple(said)))
    return wrong


def check(path):
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
            wrong.append(tr("{bm}x{bn} reuse: 2 x {bm} x {bn} x BK FLOPs / (({bm} + {bn}) x BK x 2 bytes) = {bm} x "
                            "{bn} / {sum} = {want:.1f} FLOP/B, not {said}", bm=bm, bn=bn, sum=bm + bn, want=want,
                            said=said))
    for (bm, bn, bk), said in parts["MAX_STAGES"].items():
        want = _max_stages(bm, bn, bk)
        if said is None:
            wrong.append(tr("{bm}x{bn}x{bk} stages: not answered yet", bm=bm, bn=bn, bk=bk))
        elif said != want:
            stage = (bm + bn) * bk * 2
            wrong.append(tr("{bm}x{bn}x{bk} stages: one stage is ({bm} + {bn}) x {bk} x 2 B = {kib} KiB, {want} of "
                            "them fit in 227 KiB ({total} KiB), {more} would not; you said {said}", bm=bm, bn=bn, bk=bk,
                            kib=stage // 1024, want=want, total=want * stage // 1024, more=want + 1, said=said))
    return verdict(wrong, tr("all right: 6% more work at 4224 costs a 5th wave a quarter full (0.97 to 0.85 "
                             "efficiency); two blocks per SM halve the waves but not the quantization; reuse grows "
                             "with the tile (BM BN / (BM + BN) FLOP/B) while the stages it can afford shrink - 4 for "
                             "128 x 256 x 64, 3 for 256 x 256 x 64. Lab 4.4's wave sweep measured 0.868 at 4224 "
                             "against this 0.85"))


# Realistic wrong answers (tests/test_exercise_attempts.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('waves rounded down',
     [('(128, 256, 4224, 1): (561, 5, 0.850)', '(128, 256, 4224, 1): (561, 4, 0.850)')],
     '4224'),
    ('stages from 256 KiB', [('(128, 256, 64): 4,', '(128, 256, 64): 5,')], '128x256x64 stages'),
]
