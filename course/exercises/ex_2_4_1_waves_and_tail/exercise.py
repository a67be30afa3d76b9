"""Exercise 2.4.1 - blocks per SM, waves, Little's-law bandwidth and the three models of a partial last wave for lab
2.4's scale_grid_stride_float4 on an H200, checked against common.occupancy (with the kernel's registers from its
NVRTC compile report for sm_90) and lab 2.4's own models (little_gbps, tail_model)."""
import math

from common.i18n import tr

ID = "2.4.1"
TITLE = "Waves and the tail: predict blocks per SM, waves, Little's-law GB/s and a partial wave's cost (lab 2.4)"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase2.py.
HINTS = [
    "Start with blocks per SM: the smallest of 2048 / threads per block, 32, and what the registers allow (24 a "
    "thread, allocated per warp in units of 256). A wave is 132 x that many blocks.",
    "Waves = the grid's blocks / a wave's blocks, a fraction. Little's law: GB/s = 2 x resident threads x 16 B / "
    "0.557 us, capped at 4341, with every block of the grid resident. For the tail, the quantized model rounds the "
    "waves up and the fluid model does not.",
    "Little's-law tail: the full waves run at the ceiling; a partial wave with a fraction f of the blocks has f of "
    "the threads, so f x the full wave's uncapped GB/s. Its time is its f of the work over that bandwidth, in "
    "wave-times: f cancels while that bandwidth stays under the ceiling.",
]
NAMES = ("BLOCKS_PER_SM", "WAVES", "GBPS", "TAIL")
KERNEL, ARCH, SMS = "scale_grid_stride_float4", "sm_90", 132
# The exercise's givens, as the starting point states them: the H200's fitted latency and HBM ceiling
# (results/h200/phase2_lab04_launch_config.json: fitted_latency_us, ceiling.hbm_gbps), rounded.
LATENCY_US, CEILING_GBPS = 0.557, 4341.0
TAIL_THREADS = 256
LAB = "phase2_lab04_launch_config"


def _blocks_per_sm(threads: int):
    from common import cuda
    from common.occupancy import occupancy
    from phase2_cuda.lab04_launch_config import lab as L

    regs = cuda.compile_report(L.CU, ARCH)[KERNEL].registers
    occ = occupancy(ARCH, threads, regs)
    return occ.blocks_per_sm, occ.limiters, regs


def _measured(L) -> str:
    """What the H200 measured for the same cases (from the committed JSON), or ''."""
    from course.exercises.phase2_checks import h200_row

    tail = [h200_row(LAB, variant=f"{w:g} waves").get("time_in_waves") for w in (1.1, 1.25, 2.5)]
    gbps = [h200_row(LAB, variant=f"b256 {w:g} wave").get("gbps") for w in (0.125, 0.25, 1)]
    if None in tail or None in gbps:
        return ""
    return tr(" Measured on the H200 ({lab}.json): {t0:.3f}, {t1:.3f} and {t2:.3f} wave-times at 1.1, 1.25 and 2.5 "
              "waves; {g0:,.0f}, {g1:,.0f} and {g2:,.0f} GB/s at 1/8, 1/4 and 1 wave of 256-thread blocks - the model "
              "holds where the kernel is latency-bound, and over-promises where queueing in the memory system raises "
              "the latency.", lab=LAB, t0=tail[0], t1=tail[1], t2=tail[2], g0=gbps[0], g1=gbps[1], g2=gbps[2])


def check(path):
    from course.checks import off, sentences
    from course.exercise import Verdict
    from course.exercises.phase2_checks import answers, close, not_yet
    from phase2_cuda.lab04_launch_config import lab as L

    mod = answers(path, "ex241", __file__, NAMES)
    if isinstance(mod, Verdict):
        return mod
    wrong, total = [], 0
    try:
        per_sm = {t: _blocks_per_sm(t) for t in {*mod.BLOCKS_PER_SM, *(t for t, _ in mod.WAVES), *(t for t, _ in
                                                                                                    mod.GBPS)}}
    except Exception as e:  # noqa: BLE001 - NVRTC, not the answer: say so plainly
        return Verdict(False, tr("could not compile lab {lab}'s kernels.cu here ({error}: {detail}); its compile "
                                 "report needs the same", lab="2.4", error=type(e).__name__, detail=str(e)[:200]))
    for t, said in mod.BLOCKS_PER_SM.items():
        total += 1
        bps, _, regs = per_sm[t]
        if said is None:
            wrong.append(tr("{name}: no answer yet", name=f"BLOCKS_PER_SM[{t}]"))
        elif said != bps:
            wrong.append(tr("BLOCKS_PER_SM[{t}]: {said} blocks is {off}: how many of these blocks does each limit of "
                            "the SM allow - its threads, its blocks, its registers ({regs} a thread, allocated per "
                            "warp in units of 256)? The SM holds as many as the scarcest allows", t=t, said=said,
                            off=off(said, bps), regs=regs))
    for (t, grid), said in mod.WAVES.items():
        total += 1
        wave = SMS * per_sm[t][0]
        if said is None:
            wrong.append(tr("{name}: no answer yet", name=f"WAVES[{t}, {grid}]"))
        elif not close(said, grid / wave):
            wrong.append(tr("WAVES[{t}, {grid}]: {said} is {off}: a wave is the blocks the whole GPU holds at once, "
                            "{sms} SMs x the blocks one SM holds; the grid's blocks over a wave's blocks is a "
                            "fraction, not rounded", t=t, grid=grid, said=said, off=off(said, grid / wave), sms=SMS))
    for (t, grid), said in mod.GBPS.items():
        total += 1
        resident = min(grid, SMS * per_sm[t][0]) * t
        want = L.little_gbps(resident, LATENCY_US, CEILING_GBPS)
        if said is None:
            wrong.append(tr("{name}: no answer yet", name=f"GBPS[{t}, {grid}]"))
        elif not close(said, want):
            wrong.append(tr("GBPS[{t}, {grid}]: {said} GB/s is {off}: by Little's law, how many threads are resident "
                            "(the grid's, but never more than a full wave), how many bytes of loads each keeps in "
                            "flight, over the {us} us latency - and twice that for the writes, up to the HBM ceiling?",
                            t=t, grid=grid, said=said, off=off(said, want), us=LATENCY_US))
    wave = SMS * per_sm[TAIL_THREADS][0]
    for w, said in mod.TAIL.items():
        total += 1
        want = (math.ceil(w - 1e-9), w, L.tail_model(w, wave, TAIL_THREADS, LATENCY_US, CEILING_GBPS))
        if not isinstance(said, (tuple, list)) or len(said) != 3 or None in said:
            wrong.append(tr("TAIL[{w}]: no answer yet (three numbers: quantized, fluid, Little's law)", w=w))
            continue
        why = {"quantized": tr("every wave that starts costs a whole wave's time, a partial one too"),
               "fluid": tr("time in proportion to the work, so a partial wave costs its fraction of a wave"),
               "Little's law": tr("the full waves run at the ceiling; in the partial wave only its own blocks are "
                                  "resident - what GB/s does Little's law give their threads, and how long does its "
                                  "share of the work take at that, in wave-times?")}
        bad = [tr("{name}: {s} is {off}: {why}", name=tr(name), s=s, off=off(s, v), why=why[name]) for name, s, v in
               zip(("quantized", "fluid", "Little's law"), said, want) if not close(s, v)]
        if bad:
            wrong.append(f"TAIL[{w}]: " + sentences(bad))
    if wrong:
        return Verdict(False, not_yet(wrong, total))
    return Verdict(True, tr("all {total} right: residency is the smallest of the SM's limits (32-thread blocks hit the "
                            "32-block limit at half the threads), a wave is 132 x that, and a memory-bound kernel's "
                            "bandwidth is bytes in flight over latency until the ceiling. A partial wave is "
                            "latency-bound, so its time does not shrink with its size: any last wave under ~0.28 costs "
                            "~0.28 of a wave, not a whole one.", total=total) + _measured(L))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('blocks per SM of 32-thread blocks from the thread limit',
     [('BLOCKS_PER_SM = {32: 32,', 'BLOCKS_PER_SM = {32: 64,')],
     'BLOCKS_PER_SM[32]: 64 blocks is too high'),
    ('waves rounded down', [('(256, 1320): 1.25', '(256, 1320): 1')], 'WAVES[256, 1320]: 1 is too low'),
    ("Little's law without the writes", [('(256, 132): 1942', '(256, 132): 971')],
     'GBPS[256, 132]: 971 GB/s is too low'),
    ("the partial wave at the full wave's bandwidth (the fluid model again)",
     [('1.25: (2, 1.25, 1.28)', '1.25: (2, 1.25, 1.25)')], "Little's law: 1.25 is too low"),
]
