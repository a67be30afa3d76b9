"""Exercise 4.2.1 - count the bytes a fusion saves: three chains of lab 4.2 (checked against its byte model,
bench.predicted_elements), two chains it does not run (counted with the same rule), and the GEMM epilogue's predicted
speed-up (lab 4.2's byte_table)."""
from common.i18n import tr

ID = "4.2.1"
TITLE = "Count the bytes a fusion saves, and the speed-up they predict"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Write each chain as the separate kernels it is unfused, and list for each kernel the full M x N matrices it "
    "reads and writes; then do the same for the single fused kernel.",
    "Unfused, every intermediate is written by one kernel and read back by the next: 2 M N more per intermediate. "
    "Fused, only the chain's inputs are read and only what the caller keeps is written - a kept h is still written "
    "once. Bias rows and layernorm weights are too small to count.",
    "GEMM epilogue: the GEMM takes 2 x 4096^3 FLOPs / 700 TFLOP/s; unfused, the bias kernel and the GELU kernel each "
    "read and write one 4096 x 4096 bf16 matrix at 4.4 TB/s; the speed-up is (GEMM time + those two kernels' time) / "
    "GEMM time.",
]
# Each chain as its unfused kernels, (matrices read, matrices written) each, and what the fused kernel reads and
# writes; the three of lab 4.2 name its byte model's case, to be checked against it.
CHAINS = {
    "bias + GELU: y = gelu(x + b)": ("bias_gelu_tanh", [("x", "t"), ("t", "y")], ("x", "y")),
    "bias + residual: y = x + b + r": ("bias_residual", [("x", "t"), ("t r", "y")], ("x r", "y")),
    "residual + layernorm, h kept: h = x + r, y = layernorm(h)": ("residual_layernorm", [("x r", "h"), ("h", "y")],
                                                                  ("x r", "h y")),
    "bias + GELU + residual: y = gelu(x + b) + r": (None, [("x", "t"), ("t", "g"), ("g r", "y")], ("x r", "y")),
    "residual + layernorm, h not kept: y = layernorm(x + r)": (None, [("x r", "h"), ("h", "y")], ("x r", "y")),
}


# The rates the task gives (its README: "the GEMM at 700 TFLOP/s and the elementwise kernels at 4.4 TB/s"): round
# figures of a recent data-center GPU, so every learner computes the same answer whatever GPU they have.
TASK_GEMM_TFLOPS, TASK_HBM_GBPS = 700.0, 4400.0


def _count(reads_writes) -> int:
    return sum(len(r.split()) + len(w.split()) for r, w in reads_writes)


def check(path):
    from course.checks import load_module, off, sentences
    from course.exercise import Verdict
    from course.exercises.phase4_checks import answers, close, verdict
    from phase4_optimization.lab02_fusion import bench as B

    got = answers(path, "ex421", __file__, name="CHAINS")
    if isinstance(got, Verdict):
        return got
    wrong = []
    for key, (case, kernels, fused) in CHAINS.items():
        unf, fu = _count(kernels), _count([fused])
        if case is not None and (unf, fu) != (B.predicted_elements(case, False), B.predicted_elements(case, True)):
            raise RuntimeError(f"{case}: this exercise's count and lab 4.2's byte model differ")   # a course bug
        said = got[key]
        if not isinstance(said, (tuple, list)) or len(said) != 2 or None in said:
            wrong.append(tr("{key}: not answered yet (two numbers: unfused, fused)", key=key))
        elif tuple(said) != (unf, fu):
            bad = []
            if said[0] != unf:
                bad.append(tr("unfused {said} M N is {off}: each of its kernels reads every full M x N matrix it "
                              "takes and writes the one it makes, so an intermediate is written once and read back "
                              "once - count kernel by kernel", said=said[0], off=off(said[0], unf)))
            if said[1] != fu:
                bad.append(tr("fused {said} M N is {off}: the one kernel reads each full-size input of the chain once "
                              "and writes only the matrices the caller keeps", said=said[1], off=off(said[1], fu)))
            wrong.append(f"{key}: " + sentences(bad))
    mod = load_module(path, "ex421")
    rows = B.byte_table(*B.EW_SHAPE, *B.LN_SHAPE, B.GEMM_N, gemm_tflops=TASK_GEMM_TFLOPS, hbm_gbps=TASK_HBM_GBPS)
    row = next(r for r in rows if r["case"] == "linear_gelu_tanh")
    want = row["predicted speed-up"]
    said = getattr(mod, "GEMM_EPILOGUE_SPEEDUP", None)
    if said is None:
        wrong.append(tr("{key}: not answered yet", key="GEMM_EPILOGUE_SPEEDUP"))
    elif not close(said, want, 0.01):
        wrong.append(tr("GEMM_EPILOGUE_SPEEDUP: {said} is {off}: the GEMM's 2 M N K FLOPs at 700 TFLOP/s take the same "
                        "time fused or not (it is compute-bound, and fusing changes none of its bytes); what goes is "
                        "the elementwise tail - how many bytes do the bias kernel and the GELU kernel move between "
                        "them, and how long do those take at 4.4 TB/s? The speed-up is (GEMM time + tail time) / GEMM "
                        "time", said=said, off=off(said, want)))
    return verdict(wrong, tr("all right: a chain costs its memory passes - every unfused kernel reads its inputs and "
                             "writes its output, the fused one moves each input once and writes only what the caller "
                             "keeps (2.0x for bias + GELU, 2.33x once a residual joins it, 1.25x for residual + "
                             "layernorm while h is kept, 1.67x when it is not) - and a compute-bound GEMM gains only "
                             "its elementwise tail ({want:.3f}x)", want=want), of=tr("of {n}", n=len(CHAINS) + 1))


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ('bias + GELU counted unfused as 3 passes',
     [('"bias + GELU: y = gelu(x + b)": (4, 2)', '"bias + GELU: y = gelu(x + b)": (3, 2)')],
     'bias + GELU: y = gelu(x + b): unfused 3 M N is too low'),
    ('h not kept counted as kept',
     [('"residual + layernorm, h not kept: y = layernorm(x + r)": (5, 3)',
       '"residual + layernorm, h not kept: y = layernorm(x + r)": (5, 4)')],
     'h not kept: y = layernorm(x + r): fused 4 M N is too high'),
    ("the epilogue's bytes counted one way only (read, not written)",
     [('GEMM_EPILOGUE_SPEEDUP = 1.155', 'GEMM_EPILOGUE_SPEEDUP = 1.078')],
     'GEMM_EPILOGUE_SPEEDUP: 1.078 is too low'),
]
