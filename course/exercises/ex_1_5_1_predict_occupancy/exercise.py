"""Exercise 1.5.1 - predict occupancy by hand, checked against the course's occupancy calculator."""
from common.i18n import tr

ID = "1.5.1"
TITLE = "Predict the occupancy of four kernels on sm_90, and what limits each"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase1.py.
HINTS = [
    "For each kernel count the blocks per SM four times, once per limit: threads (2048 / block size), blocks (32), "
    "registers and shared memory. The answer is the smallest count, and its limit is the one that gives it.",
    "Registers are handed out per warp in units of 256: a block needs (registers per thread x 32, rounded up to a "
    "multiple of 256) x its warps, out of 65536. Shared memory per block is what the kernel asks for plus the 1 KiB "
    "the runtime reserves, out of 228 KiB.",
    "Take the 1024-thread kernel: 40 x 32 = 1280 registers a warp (already a multiple of 256), times its 32 warps, "
    "against 65536 - how many whole blocks fit? For the last kernel: 48 KiB + 1 KiB per block against 228 KiB, "
    "rounded down.",
]
# the answer's words -> the calculator's names of the limits (threads per SM are counted in warps)
NAMES = {"threads": "warps", "warps": "warps", "blocks": "blocks", "registers": "registers",
         "shared memory": "shared memory"}


def check(path):
    from course.exercise import Verdict
    from common.occupancy import occupancy

    from course.checks import load_module, off

    mod = load_module(path, "ex151")
    if isinstance(mod, Verdict):
        return mod
    answers = getattr(mod, "ANSWERS", None)
    if not isinstance(answers, dict):
        return Verdict(False, tr("keep the four kernels of the starting point"))
    wrong = []
    for key, said in answers.items():
        try:
            (threads, regs, smem), (blocks, limit) = key, said
        except (TypeError, ValueError):
            return Verdict(False, tr("keep the four kernels of the starting point"))
        what = tr("{threads} threads x {regs} registers + {kib} KiB", threads=threads, regs=regs, kib=smem // 1024)
        if blocks is None or limit is None:
            wrong.append(tr("{what}: not answered yet", what=what))
            continue
        occ = occupancy("sm_90", threads, regs, smem_dynamic=smem, max_dynamic_smem=max(smem, 1))
        limiters = {lim for lim in occ.limiters}
        ok_limit = NAMES.get(limit) in limiters         # with a tie, either limiting resource is right
        if blocks != occ.blocks_per_sm:
            wrong.append(tr("{what}: {blocks} blocks is {off}: for each resource, how many of these blocks fit in what "
                            "one SM has of it? The SM holds as many as the scarcest allows", what=what,
                            blocks=blocks, off=off(blocks, occ.blocks_per_sm)))
        elif not ok_limit:
            wrong.append(tr("{what}: {blocks} blocks is right, but {limit!r} is not what runs out first: which "
                            "resource allows exactly that many blocks?", what=what, blocks=blocks, limit=limit))
    if len(answers) != 4:
        return Verdict(False, tr("keep the four kernels of the starting point"))
    if wrong:
        from course.checks import listed

        return Verdict(False, tr("{n} of 4 not yet right: {reasons}", n=len(wrong), reasons=listed(wrong[:2])))
    return Verdict(True, tr("all four right: you counted threads, blocks, registers (per warp, in units of 256) and "
                            "shared memory (with the runtime's 1 KiB per block) the way the hardware does"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('registers counted per thread, not per warp in units of 256',
     [('(1024, 40, 0): (1, "registers")', '(1024, 40, 0): (2, "threads")')],
     'too high'),
    ("the runtime's 1 KiB per block forgotten",
     [('(128, 64, 48 * 1024): (4, "shared memory")', '(128, 64, 48 * 1024): (3, "shared memory")')],
     'too low'),
]
