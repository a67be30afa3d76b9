"""Exercise 1.5.2 - Little's law: the bytes of loads four of phase 1's streaming kernels keep in flight per SM, at the
occupancy their registers allow (NVRTC's compile report for sm_90 and the course's occupancy calculator), against
the bytes in flight HBM latency asks for."""
import os

from common.i18n import tr

ID = "1.5.2"
TITLE = "Little's law: predict the bytes in flight per SM of four streaming kernels, and which cover HBM latency"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase1.py.
HINTS = [
    "Each answer is the resident threads per SM x the bytes one thread has in flight. Start from the registers: the "
    "labs' compile reports (python -m phase1_architecture.lab04_memory_hierarchy --quick, and labs 1.2 and 1.5) list "
    "each kernel's.",
    "Resident threads come from the occupancy rules of lab 1.5 for 256-thread blocks: 2048 per SM, unless the "
    "registers allow fewer blocks. A thread's bytes in flight are the loads it issues before its first wait: two "
    "4-byte loads, two float4, or UNROLL = 4 float4. The need per SM is bandwidth x latency / SMs.",
    "For each kernel multiply blocks per SM x 256 x its bytes per thread; a kernel with more than 32 registers a "
    "thread fits fewer than 8 blocks. The need is 4.8e12 x 0.6e-6 / 132, about 21 KB; COVERS is True exactly for the "
    "kernels that reach it.",
]
ARCH, THREADS = "sm_90", 256
BANDWIDTH, LATENCY, SMS = 4.8e12, 0.6e-6, 132       # the task's numbers: datasheet bytes/s, a loaded HBM round trip
NAMES = ("BYTES_IN_FLIGHT_PER_SM", "COVERS")


def kernels() -> dict:
    """kernel -> (its lab module, bytes of loads one thread has outstanding when it first waits). The unrolled kernels'
    bytes come from the labs' own UNROLL (kernels.cu's default, mirrored in lab.py)."""
    from common.lab import lab_module

    l2 = lab_module("phase1_architecture", "lab02_vector_add")
    l4 = lab_module("phase1_architecture", "lab04_memory_hierarchy")
    l5 = lab_module("phase1_architecture", "lab05_occupancy")
    return {
        "vadd_01_one_thread_per_element": (l2, 2 * 4),      # two 4-byte loads, a[i] and b[i]
        "vadd_03_float4": (l2, 2 * 16),                     # two 16-byte loads, a float4 of a and one of b
        "mem_02_read_sweep_float4": (l4, l4.UNROLL * 16),   # UNROLL independent float4 loads before the first add
        "occ_02_scale_float4_ilp": (l5, l5.UNROLL * 16),    # UNROLL independent float4 loads before the first multiply
    }


def in_flight(name: str, lab, per_thread: int) -> tuple[int, int]:
    """(bytes of loads in flight per SM, the kernel's registers) for the kernel as compiled."""
    from common import cuda, occupancy

    k = cuda.compile_report(lab.CU, ARCH)[name]
    occ = occupancy.occupancy(ARCH, THREADS, k.registers, k.smem_bytes)
    return occ.blocks_per_sm * THREADS * per_thread, k.registers


def _close(said, want: float, rel: float) -> bool:
    return isinstance(said, (int, float)) and not isinstance(said, bool) and abs(said - want) <= rel * want


def check(path):
    from course.checks import off
    from course.exercise import Verdict
    from course.exercises.phase1_checks import answers, not_yet

    start = os.path.join(os.path.dirname(os.path.abspath(__file__)), "start", FILE)
    mod = answers(path, "ex152", start, NAMES)
    if isinstance(mod, Verdict):
        return mod
    needed = BANDWIDTH * LATENCY / SMS
    try:
        truth = {name: in_flight(name, lab, b) for name, (lab, b) in kernels().items()}
    except Exception as e:  # noqa: BLE001 - the compiler, not the answer: say so plainly
        return Verdict(False, tr("could not compile the labs' kernels here ({error}: {detail}); the labs' compile "
                                 "reports need the same NVRTC", error=type(e).__name__, detail=str(e)[:200]))
    wrong = []
    for name, (nbytes, regs) in truth.items():
        said = mod.BYTES_IN_FLIGHT_PER_SM[name]
        if said is None:
            wrong.append(tr("{name}: no answer yet", name=name))
        elif not _close(said, nbytes, 0.02):
            wrong.append(tr("{name}: {said} bytes is {off}: NVRTC gives it {regs} registers a thread - how many "
                            "{size}-thread blocks does that let an SM hold, so how many threads are resident? And "
                            "which loads, how wide each, does one thread issue before its first wait?", name=name,
                            said=said, off=off(said, nbytes), regs=regs, size=THREADS))
    said = getattr(mod, "NEEDED_PER_SM", None)
    if said is None:
        wrong.append(tr("{name}: no answer yet", name="NEEDED_PER_SM"))
    elif not _close(said, needed, 0.05):
        wrong.append(tr("NEEDED_PER_SM: {said} bytes is {off}: by Little's law the whole GPU keeps bandwidth x latency "
                        "bytes in flight - at {tbps:.1f} TB/s and {us:.1f} us, in bytes/s and seconds - and its {sms} "
                        "SMs share them", said=said, off=off(said, needed), tbps=BANDWIDTH / 1e12, us=LATENCY * 1e6,
                        sms=SMS))
    for name, (nbytes, _) in truth.items():
        covers = nbytes >= needed
        if mod.COVERS[name] is None:
            wrong.append(tr("{name}: no answer yet", name=f"COVERS[{name}]"))
        elif mod.COVERS[name] is not covers:
            wrong.append(tr("COVERS[{name}]: {said!r} is not what the model says: compare the bytes this kernel keeps "
                            "in flight per SM with the bytes per SM Little's law asks for - it covers the latency when "
                            "they are at least as many", name=name, said=mod.COVERS[name]))
    if wrong:
        return Verdict(False, not_yet(wrong, 2 * len(truth) + 1))
    return Verdict(True, tr("all right: bytes in flight per SM = resident threads (from registers and the occupancy "
                            "rules) x the bytes each thread has outstanding, against bandwidth x latency / SMs. One "
                            "float per thread leaves HBM waiting even at full occupancy; 16-byte loads, or several of "
                            "them per thread, cover it with room to spare - even at the 75% occupancy mem_02's "
                            "registers allow"))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('float4 loads counted as 4 bytes',
     [('"vadd_03_float4": 2048 * 32,', '"vadd_03_float4": 2048 * 8,')],
     'vadd_03_float4: 16384 bytes is too low'),
    ("the wrong Little's law latency",
     [('NEEDED_PER_SM = 4.8e12 * 0.6e-6 / 132', 'NEEDED_PER_SM = 4.8e12 * 0.6e-9 / 132')],
     'NEEDED_PER_SM: 21.8'),
    ('one float a thread taken to cover the latency at full occupancy',
     [('"vadd_01_one_thread_per_element": False,', '"vadd_01_one_thread_per_element": True,')],
     'COVERS[vadd_01_one_thread_per_element]: True is not what the model says'),
]
