"""Exercise 4.3.1 - predict the warps, the shared memory and whether ptxas spills for six configurations of lab 4.3's
mma.sync GEMM, checked against the NVRTC compile report of its kernels.cu built with those -D defines for sm_90 (no
GPU needed: NVRTC runs ptxas and reports registers and spills)."""
from common.i18n import tr

ID = "4.3.1"
TITLE = "Predict warps, shared memory and spills of six mma.sync tile configurations (NVRTC compile report)"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Three numbers per configuration: warps = (BM / WM) x (BN / WN); shared memory = STAGES x (BM x BK + BK x BN) "
    "bf16 elements; and whether ptxas spills, which depends on the register cap.",
    "The cap is 65536 / (threads per block x MIN_BLOCKS), and never more than 255. A 64 x 64 warp tile needs about "
    "240 registers (128 accumulators, its fragments, its addresses): ptxas spills when the cap is below what the warp "
    "tile needs.",
    "Threads = 32 x warps, so a 512-thread block caps a thread at 128 registers even with MIN_BLOCKS = 1; a 64 x 32 "
    "warp tile needs about half of 240 and fits that. Shared memory in KiB: the element count x 2 bytes / 1024.",
]
KEYS = ("BM", "BN", "BK", "WM", "WN", "STAGES", "MIN_BLOCKS")


def compiled(cfg: dict):
    """(registers, spilled bytes) of tc_02_mma_sync built for sm_90 with `cfg` as -D defines (the compile is cached
    per process: lab 4.3's kernels.cu, not the learner's file, is what gets compiled)."""
    from common import cuda
    from phase4_optimization.lab03_tensor_cores import lab as L

    k = cuda.compile_report(L.CU, "sm_90", defines=L.defines("bfloat16", "bfloat16", cfg))["tc_02_mma_sync"]
    return k.registers, k.spills


def check(path):
    from course.checks import off
    from course.exercise import Verdict
    from course.exercises.phase4_checks import answers, verdict
    from phase4_optimization.lab03_tensor_cores import lab as L

    got = answers(path, "ex431", __file__)
    if isinstance(got, Verdict):
        return got
    wrong = []
    for key, said in got.items():
        cfg = dict(zip(KEYS, key))
        name = f"{cfg['BM']}x{cfg['BN']}x{cfg['BK']}, warp {cfg['WM']}x{cfg['WN']}, MIN_BLOCKS {cfg['MIN_BLOCKS']}"
        if not isinstance(said, (tuple, list)) or len(said) != 3 or None in said:
            wrong.append(tr("{name}: not answered yet (warps, KiB, spills)", name=name))
            continue
        try:
            _, spills = compiled(cfg)
        except Exception as e:  # noqa: BLE001 - NVRTC, not the answer: say so plainly
            return Verdict(False, tr("could not compile lab {lab}'s kernels.cu here ({error}: {detail}); its compile "
                                     "report needs the same", lab="4.3", error=type(e).__name__, detail=str(e)[:200]))
        warps, kib = L.config_threads(cfg) // 32, L.config_smem(cfg) / 1024
        if said[0] != warps:
            wrong.append(tr("{name}: {said} warps is {off}: a block has one warp per warp tile - how many WM x WN warp "
                            "tiles cover its BM x BN block tile?", name=name, said=said[0], off=off(said[0], warps)))
        if not isinstance(said[1], (int, float)) or abs(said[1] - kib) > 0.5:
            wrong.append(tr("{name}: {said} KiB is {off}: each of the STAGES buffers holds a BM x BK tile of A and a "
                            "BK x BN tile of B, 2 bytes an element; a KiB is 1024 bytes", name=name, said=said[1],
                            off=off(said[1], kib)))
        if not isinstance(said[2], bool):
            wrong.append(tr("{name}: write whether ptxas spills as True or False, not {said!r}", name=name,
                            said=said[2]))
        elif said[2] != (spills > 0):
            wrong.append(tr("{name}: spills = {said} is not what ptxas does: __launch_bounds__(threads, MIN_BLOCKS) "
                            "caps a thread at 65536 / (threads x MIN_BLOCKS) registers, and never more than 255 - is "
                            "that cap under what a WM x WN warp tile needs for its fp32 accumulators, its fragments "
                            "and its addresses?", name=name, said=said[2]))
    return verdict(wrong, tr("all six as ptxas has them: a 64 x 64 warp tile (128 accumulators, ~240 registers) spills "
                             "whenever 65536 / (threads x MIN_BLOCKS) falls under that - 8 warps at 2 blocks, 4 warps "
                             "at 3, 16 warps at 1 - and a 64 x 32 warp tile (~128) fits 16 warps; shared memory never "
                             "decided it here, registers did"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('the cap from 255 forgotten',
     [('(128, 128, 32, 64, 64, 4, 2): (4, 64, False)', '(128, 128, 32, 64, 64, 4, 2): (4, 64, True)')],
     '128x128x32, warp 64x64, MIN_BLOCKS 2: spills = True is not what ptxas does'),
    ('accumulators per thread doubled',
     [('(128, 256, 32, 64, 64, 4, 1): (8, 96, False)', '(128, 256, 32, 64, 64, 4, 1): (16, 96, False)')],
     '128x256x32, warp 64x64, MIN_BLOCKS 1: 16 warps is too high'),
    ('shared memory of one stage, not of all of them',
     [('(128, 128, 32, 64, 64, 4, 3): (4, 64, True)', '(128, 128, 32, 64, 64, 4, 3): (4, 16, True)')],
     '128x128x32, warp 64x64, MIN_BLOCKS 3: 16 KiB is too low'),
]
