"""Exercise 1.5.1 - predict occupancy by hand, checked against the course's occupancy calculator."""
import importlib.util
import os
import sys

from common.i18n import tr

ID = "1.5.1"
TITLE = "Predict the occupancy of four kernels on sm_90, and what limits each"
TIER = "cpu"
FILE = "answers.py"
# the answer's words -> the calculator's names of the limits (threads per SM are counted in warps)
NAMES = {"threads": "warps", "warps": "warps", "blocks": "blocks", "registers": "registers",
         "shared memory": "shared memory"}


def _load(path):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if root not in sys.path:
        sys.path.insert(0, root)
    spec = importlib.util.spec_from_file_location(f"ex151_{abs(hash(os.path.abspath(path)))}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check(path):
    from course.exercise import Verdict
    from common.occupancy import occupancy

    answers = _load(path).ANSWERS
    wrong = []
    for (threads, regs, smem), (blocks, limit) in answers.items():
        occ = occupancy("sm_90", threads, regs, smem_dynamic=smem, max_dynamic_smem=max(smem, 1))
        limiters = {lim for lim in occ.limiters}
        ok_limit = NAMES.get(limit) in limiters         # with a tie, either limiting resource is right
        if blocks != occ.blocks_per_sm or not ok_limit:
            wrong.append(tr("{threads} threads x {regs} registers + {kib} KiB: you said {blocks} ({limit}); the "
                            "calculator says {right} ({limits})", threads=threads, regs=regs, kib=smem // 1024,
                            blocks=blocks, limit=limit, right=occ.blocks_per_sm,
                            limits=" = ".join(sorted("threads" if x == "warps" else x for x in limiters))))
    if len(answers) != 4:
        return Verdict(False, tr("keep the four kernels of the starting point"))
    if wrong:
        from course.checks import listed

        return Verdict(False, tr("{n} of 4 not yet right: {reasons}", n=len(wrong), reasons=listed(wrong[:2])))
    return Verdict(True, tr("all four right: you counted threads, blocks, registers (per warp, in units of 256) and "
                            "shared memory (with the runtime's 1 KiB per block) the way the hardware does"))
