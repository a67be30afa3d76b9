"""Exercise 4.1.1 - place six kernels on the H200's roofline by hand: bytes, FLOPs, the unit, the bound and the roof,
checked against lab 4.1's own model (its byte/FLOP models, unit_for and place(), with the roofs the lab measured)."""
import json
import os

from common.i18n import tr

ID = "4.1.1"
TITLE = "Place six kernels on the roofline by hand: bytes, FLOPs, unit, bound, roof"
TIER = "cpu"
FILE = "answers.py"
# `--hint` shows these one at a time: where to look, the mechanism, nearly the fix (never the code). Their
# Korean lines are in course/ko_phase4.py.
HINTS = [
    "Fill one column at a time for all six: first the bytes (each input read once and each output written once, at "
    "the dtype's size), then the FLOPs (an FMA is 2); only then the unit, the bound and the roof.",
    "Arithmetic intensity is FLOPs / bytes, and a unit's ridge is its peak / HBM bandwidth (51.3 / 4.34 for fp32, 680 "
    "/ 4.34 for bf16, in FLOP/B). Left of the ridge a kernel is memory-bound and its roof is AI x 4.34 TB/s; right of "
    "it, the unit's peak.",
    "Vector add: 12 bytes and 1 FLOP an element; softmax: 8 bytes and 5 FLOPs; the k-FMA chain: 8 bytes and 2k FLOPs. "
    "A GEMM moves its three matrices once for 2 M N K FLOPs. Naive attention moves S and P twice each (written, then "
    "read back) at 2 bytes, plus Q, K, V and O: it falls left of the bf16 ridge.",
]
REL = 0.02


def _ceilings():
    """The roofs lab 4.1 measured on the H200, as its Ceilings."""
    from course.exercise import ROOT
    from phase4_optimization.lab01_roofline import lab as R

    with open(os.path.join(ROOT, "results", "h200", R.CEILINGS_FILE)) as f:
        c = json.load(f)["ceilings"]
    return R.Ceilings(hbm_gbps=c["hbm_gbps"], peaks=dict(c["tflops"]))


def _truth() -> dict:
    """key -> (bytes, FLOPs, (lab, variant, dtype) of the result row, then a question on what moves the bytes and one
    on what makes the FLOPs, for a wrong answer: they point at the mechanism and hold no count, not even a count an
    element, which leaves the answer one multiplication away)."""
    from phase4_optimization.lab01_roofline import lab as R
    from phase4_optimization.lab06_attention import lab as A

    n, (m, c) = 2**29, (32768, 4096)
    gemm_bytes = tr("only the compulsory traffic counts: A, B and C each cross HBM once - how many elements has each "
                    "of the three, and how many bytes is one element of the kernel's dtype?")
    gemm_flops = tr("how many multiply-adds does one element of C take, how many FLOPs is a multiply-add, and how "
                    "many elements has C?")
    return {
        "vector add, fp32, n = 2^29": (12.0 * n, float(n), ("phase1_lab02_vector_add", "cuda 03 float4", "float32"),
                                       tr("which arrays of n elements does c = a + b read from HBM, which does it "
                                          "write, and how many bytes is one fp32 element?"),
                                       tr("how many floating-point operations does c = a + b do on one element, and "
                                          "on how many elements?")),
        "softmax, fp32, 32768 x 4096": (2.0 * m * c * 4, R._softmax_model({"shape": [m, c]})[1],
                                        ("phase3_lab03_fused_softmax", "triton fused", "float32"),
                                        tr("the fused kernel keeps a row on chip between its passes: which whole "
                                           "arrays cross HBM then, and how many bytes is one fp32 element?"),
                                        tr("which operations does a numerically stable softmax do on one element, pass "
                                           "by pass (lab 4.1 counts each as one FLOP), and on how many elements?")),
        "k-FMA chain, fp32, n = 2^26, k = 64": (*R.sweep_counts(2**26, 64),
                                                ("phase4_lab01_roofline", "triton fma chain k=64", "float32"),
                                                tr("the k FMAs run in registers: how many bytes does one element cost "
                                                   "in HBM, read and written, and does k change that?"),
                                                tr("how many FMAs does the chain do on one element, how many FLOPs is "
                                                   "an FMA, and on how many elements?")),
        "SGEMM, fp32, 8192^3": (*R._gemm_model({"shape": [8192] * 3, "dtype": "float32"}),
                                ("phase2_lab08_sgemm", "cuda 11 autotuned", "float32"), gemm_bytes, gemm_flops),
        "GEMM, bf16, 4096^3": (*R._gemm_model({"shape": [4096] * 3, "dtype": "bfloat16"}),
                               ("phase4_lab03_tensor_cores", "cuda 02 mma.sync", "bfloat16"), gemm_bytes, gemm_flops),
        "naive attention, bf16, B 4, H 32, S 2048, D 128": (
            float(A.naive_bytes(4, 32, 2048, 128, 2)), A.attn_flops(4, 32, 2048, 128, False),
            ("phase4_lab06_attention", "naive fwd", "bfloat16"),
            tr("besides reading Q, K and V and writing O, the naive kernel puts the scores S and the probabilities P "
               "through HBM: how many times does each of them cross it, how many elements has each per head, and how "
               "many bytes is one bf16 element?"),
            tr("which matmuls does attention do per head, of which shapes (the softmax between them is small beside "
               "them and not counted), and how many heads are there in all?")),
    }


def _wrong(key, said, truth, ceil) -> list[str]:
    from course.exercises.phase4_checks import close
    from phase4_optimization.lab01_roofline import lab as R

    nbytes, flops, (lab, variant, dtype), bytes_why, flops_why = truth
    unit = R.unit_for(lab, variant, dtype)
    p = R.place(nbytes, flops, 1.0, unit, ceil)
    missing = [f for f in ("bytes", "flops", "unit", "bound", "roof_tflops") if said.get(f) is None]
    if missing:
        return [tr("{key}: {fields} not answered yet", key=key, fields=", ".join(missing))]
    from course.checks import off

    bad = []
    if not close(said.get("bytes"), nbytes, REL):
        bad.append(tr("bytes: you said {said}, {off}: {why}", said=said.get("bytes"),
                      off=off(said.get("bytes"), nbytes), why=bytes_why))
    if not close(said.get("flops"), flops, REL):
        bad.append(tr("FLOPs: you said {said}, {off}: {why}", said=said.get("flops"),
                      off=off(said.get("flops"), flops), why=flops_why))
    if said.get("unit") != unit:
        bad.append(tr("unit: not {said!r}: which units run 16-bit matmuls, and which run fp32 arithmetic, whatever "
                      "the kernel is?", said=said.get("unit")))
    if said.get("bound") != p["bound"]:
        bad.append(tr("bound: {said!r} is not what the model says: compare the arithmetic intensity, FLOPs / bytes, "
                      "with the ridge of its unit, peak TFLOP/s / HBM TB/s", said=said.get("bound")))
    if not close(said.get("roof_tflops"), p["roof_tflops"], REL):
        bad.append(tr("roof: you said {said} TFLOP/s, {off}: the roof is min(the unit's peak, AI x HBM bandwidth)",
                      said=said.get("roof_tflops"), off=off(said.get("roof_tflops"), p["roof_tflops"])))
    return [f"{key}: {b}" for b in bad]


def check(path):
    from course.exercise import Verdict
    from course.exercises.phase4_checks import answers, verdict

    got = answers(path, "ex411", __file__)
    if isinstance(got, Verdict):
        return got
    ceil, truth = _ceilings(), _truth()
    wrong = []
    for key, said in got.items():
        if not isinstance(said, dict):
            wrong.append(tr("{key}: write a dict(bytes=..., flops=..., unit=..., bound=..., roof_tflops=...)",
                            key=key))
            continue
        wrong += _wrong(key, said, truth[key], ceil)
    kernels = len({w.split(":")[0] for w in wrong})
    return verdict(wrong, tr("all six placed as lab 4.1 places them: the vector add (0.083 FLOP/B) and the softmax "
                             "(0.625) far left of every ridge, the k = 64 chain (16 FLOP/B) just right of the fp32 "
                             "ridge (11.8), both GEMMs at 1365 FLOP/B far right of theirs, and naive attention - two "
                             "matmuls - left of the bf16 ridge (60 against 157 FLOP/B) because S and P go through HBM: "
                             "memory-bound"),
                   of=tr("of {n} kernels", n=len(got)), count=kernels)


# Realistic wrong answers (tests/test_exercise_attempts*.py): (what the learner did, [(text of the solution, what
# it became), ...], words the verdict must hold[, "start": made from the starting point instead]); a tuple of
# words is (without a GPU: the kernel compiled, not run; with one: None = any NOT YET).
ATTEMPTS = [
    ("the vector add's bytes without the write", [('bytes=12 * 2**29', 'bytes=8 * 2**29')], 'too low'),
    ('naive attention called compute-bound',
     [('flops=4 * 128 * 2048**2 * 128, unit="bf16",\n'
       '                                                            bound="memory"',
       'flops=4 * 128 * 2048**2 * 128, unit="bf16",\n'
       '                                                            bound="compute"')],
     "bound: 'compute' is not what"),
    ("naive attention's bytes counted as a flash kernel's: Q, K, V and O only",
     [('bytes=2 * (4 * 128 * 2048 * 128 + 4 * 128 * 2048**2)', 'bytes=2 * 4 * 128 * 2048 * 128')], 'too low'),
]
