"""A checker never gives the answer away (issue 31): for every realistic wrong attempt of exercises 1.5.2, 1.6.1,
2.2.1, 2.4.1, 4.1.1, 4.2.1, 4.3.1, 4.4.1 and 4.5.1, the verdict says which way the wrong item is off and what to
re-check, but holds neither the solution's value for that item nor the intermediate number that gives it by one step -
each written the way the old messages wrote it ('it is 32', '1,941 GB/s', '3 x 4 bytes an element', 'Little's law is
1.28', 'fits in 242 registers, no spill', '4 of them fit', '= 65,536 bytes', 'the model predicts 6.00x', 'the byte
model says (4, 2)', 'the H200 measured 2.88e-03')."""
import os
import re

import pytest

from common import i18n
from course.exercise import all_exercises
from tests.attempts import attempt_text

EXS = {x.id: x for x in all_exercises() if x.id in ("1.5.2", "1.6.1", "2.2.1", "2.4.1", "4.1.1", "4.2.1", "4.3.1",
                                                      "4.4.1", "4.5.1")}


def _gbps(threads: int) -> float:
    from course.exercises.ex_2_4_1_waves_and_tail import exercise as E
    from phase2_cuda.lab04_launch_config import lab as L

    return L.little_gbps(threads, E.LATENCY_US, E.CEILING_GBPS)


def _tail(w: float) -> float:
    from course.exercises.ex_2_4_1_waves_and_tail import exercise as E
    from phase2_cuda.lab04_launch_config import lab as L

    return L.tail_model(w, 132 * 8, 256, E.LATENCY_US, E.CEILING_GBPS)


def _registers(key) -> int:
    from course.exercises.ex_4_3_1_predict_spills import exercise as E

    return E.compiled(dict(zip(E.KEYS, key)))[0]


def _in_flight(kernel: str) -> tuple[int, int, int]:
    """(bytes in flight per SM, resident threads, bytes a thread) of a kernel of exercise 1.5.2, as compiled here."""
    from course.exercises.ex_1_5_2_bytes_in_flight import exercise as E

    lab, per_thread = E.kernels()[kernel][:2]
    nbytes = E.in_flight(kernel, lab, per_thread)[0]
    return nbytes, nbytes // per_thread, per_thread


def _needed() -> float:
    from course.exercises.ex_1_5_2_bytes_in_flight import exercise as E

    return E.BANDWIDTH * E.LATENCY / E.SMS


def _bytes_secrets(kernel: str) -> list[str]:
    """'... so 8 blocks of 256 fit an SM (threads limit): 2048 threads x 32 B ... = 65,536 bytes'."""
    nbytes, threads, per_thread = _in_flight(kernel)
    return [f"{nbytes:,}", str(nbytes), str(threads), f"{per_thread} B", f"{threads // 256} blocks"]


def _ratio(n: int) -> list[str]:
    """'... touches 32 + 1 sectors and the coalesced one 1 + 4.5 ..., so the model predicts 6.00x'."""
    from phase1_architecture.lab06_matmul_naive import lab as L

    ratio, un, co = L.predicted_ratio(4096, n, 4096)
    return [f"{ratio:.2f}", f"{ratio:g}", f"{un['A'] + un['B']:g}", f"{co['A'] + co['B']:g}", f"{co['B']:g}"]


def _roofline(key: str, what: str) -> list[str]:
    """'count read a and b, write c: 3 x 4 bytes an element' (and 'S written, S read, P written, P read'): the right
    bytes or FLOPs of a kernel of exercise 4.1.1, as a number and in the counts an element or a pass that give it."""
    from course.exercises.ex_4_1_1_place_on_roofline import exercise as E

    nbytes, flops = E._truth()[key][:2]
    want = nbytes if what == "bytes" else flops
    counts = {"vector add, fp32, n = 2^29": ["3 x 4", "12", "12 bytes", "1 FLOP", "one add"],
              "naive attention, bf16, B 4, H 32, S 2048, D 128":
                  ["4 B H S^2", "4 B H S D", "S written", "P read", "twice", "2 bytes each"]}[key]
    return [str(int(want)), f"{want:,.0f}", f"{want:.3g}", f"{want:.3e}"] + counts


def _speedup() -> list[str]:
    """'lab 4.2 predicts 1.155: ... take 0.196 ms ..., 4 M N x 2 B = 134 MB, 0.0305 ms at 4.4 TB/s'."""
    from course.exercises.ex_4_2_1_fusion_bytes import exercise as E
    from phase4_optimization.lab02_fusion import bench as B

    rows = B.byte_table(*B.EW_SHAPE, *B.LN_SHAPE, B.GEMM_N, gemm_tflops=E.TASK_GEMM_TFLOPS, hbm_gbps=E.TASK_HBM_GBPS)
    want = next(r for r in rows if r["case"] == "linear_gelu_tanh")["predicted speed-up"]
    gemm_ms = 2 * B.GEMM_N**3 / (E.TASK_GEMM_TFLOPS * 1e12) * 1e3
    tail_ms = 4 * B.GEMM_N**2 * 2 / (E.TASK_HBM_GBPS * 1e9) * 1e3
    return [f"{want:.3f}", f"{want:.2f}", f"{gemm_ms:.3f}", f"{tail_ms:.4f}", "134 MB"]


def _measured(what: str) -> list[str]:
    """'the H200 measured 1.18e-03 at K = 1024 and 4.69e-03 at 16384, 3.97x' (and the bf16 error at K = 4096)."""
    from course.exercises.ex_4_5_1_accumulator_error import exercise as E

    sweep = E._sweep()
    if what == "fp16":
        lo, hi = (sweep[("our Triton dot, fp16 in, 16-bit acc", k)]["rel err vs fp16-input product"]
                  for k in (1024, 16384))
    else:
        lo, hi = (sweep[("bf16", k)]["rel err"] for k in (1024, 16384))
    err = sweep[("bf16", 4096)]["rel err"]
    return [f"{lo:.2e}", f"{hi:.2e}", f"{hi / lo:.2f}"] + ([f"{err:.2e}"] if what == "bf16" else [])


# (exercise, attempt) -> (the wrong item's name in the English verdict, what the old message said of it: the right
# value and the number one step from it, formatted as it formatted them)
SECRETS = {
    ("1.5.2", "float4 loads counted as 4 bytes"): ("vadd_03_float4", lambda: _bytes_secrets("vadd_03_float4")),
    ("1.5.2", "the wrong Little's law latency"):
        ("NEEDED_PER_SM", lambda: [f"{_needed():,.0f}", f"{_needed():.0f}", f"{_needed() * 132 / 1e6:.2f}"]),
    ("1.5.2", "one float a thread taken to cover the latency at full occupancy"):
        ("COVERS[vadd_01_one_thread_per_element]",
         lambda: [f"{_in_flight('vadd_01_one_thread_per_element')[0]:,}", f"{_needed():,.0f}"]),
    ("1.6.1", "coalesced B counted as one sector"): ("coalesced 4096x4096x4096, k = 0, B", lambda: ["4", "128"]),
    ("1.6.1", "the misaligned row counted as aligned"):
        ("coalesced 4096x4100x4096, k = 1, B", lambda: ["5", f"{4 * 4100:,}", str(4 * 4100), "16"]),
    ("1.6.1", "the ratio at N = 4100 as at 4096 (B's misaligned rows forgotten)"):
        ("RATIO at 4096x4100x4096", lambda: _ratio(4100)),
    ("2.2.1", "pad of 32 (no change of bank)"): ("PAD", lambda: ["1"]),
    ("2.2.1", "stride 16 counted as 2-way"): ("stride 16", lambda: ["16"]),
    ("2.2.1", "lanes that share a word counted twice"): ("lane i reads word 32 * (i // 2)", lambda: ["16"]),
    ("4.1.1", "the vector add's bytes without the write"):
        ("vector add, fp32, n = 2^29", lambda: _roofline("vector add, fp32, n = 2^29", "bytes")),
    ("4.1.1", "naive attention called compute-bound"):
        ("naive attention, bf16, B 4, H 32, S 2048, D 128", lambda: ["memory", "60", "156.7", "157"]),
    ("4.1.1", "naive attention's bytes counted as a flash kernel's: Q, K, V and O only"):
        ("naive attention, bf16, B 4, H 32, S 2048, D 128",
         lambda: _roofline("naive attention, bf16, B 4, H 32, S 2048, D 128", "bytes")),
    ("4.2.1", "bias + GELU counted unfused as 3 passes"):
        ("bias + GELU: y = gelu(x + b)", lambda: ["4", "(4, 2)", "2.00", "x in, t out"]),
    ("4.2.1", "h not kept counted as kept"):
        ("residual + layernorm, h not kept: y = layernorm(x + r)", lambda: ["3", "(5, 3)", "1.67"]),
    ("4.2.1", "the epilogue's bytes counted one way only (read, not written)"):
        ("GEMM_EPILOGUE_SPEEDUP", _speedup),
    ("4.5.1", "the first inf a power of two too late"): ("FIRST_INF_K", lambda: ["2048", "2047", "65536", "65504"]),
    ("4.5.1", "bf16's error the fp16 one"): ("BF16_ERROR", lambda: _measured("bf16")[-1:] + ["3.9e-3", "2^-8"]),
    ("4.5.1", "bf16's error u = 2^-8 itself: one rounding at its worst"):
        ("BF16_ERROR", lambda: _measured("bf16")[-1:] + ["3.2e-3", "3.19e-3"]),
    ("4.5.1", "bf16's error one average rounding, u / sqrt(3): the product's second one forgotten"):
        ("BF16_ERROR", lambda: _measured("bf16")[-1:] + ["3.2e-3", "3.19e-3", "sqrt(2)"]),
    ("4.5.1", "the fp16 accumulator's error growing in proportion to K"):
        ("FP16_ACC_GROWTH", lambda: _measured("fp16") + ["4", "sqrt(16)"]),
    ("4.5.1", "bf16's error growing like the fp16 accumulator's"):
        ("BF16_GROWTH", lambda: _measured("bf16")[:3] + ["1", "does not grow"]),
    ("2.4.1", "blocks per SM of 32-thread blocks from the thread limit"): ("BLOCKS_PER_SM[32]", lambda: ["32"]),
    ("2.4.1", "waves rounded down"): ("WAVES[256, 1320]", lambda: [f"{1320 / 1056:.4g}", "1056"]),
    ("2.4.1", "Little's law without the writes"):
        ("GBPS[256, 132]", lambda: [f"{_gbps(132 * 256):,.0f}", f"{_gbps(132 * 256):.0f}", "1942", "1,942"]),
    ("2.4.1", "the partial wave at the full wave's bandwidth (the fluid model again)"):
        ("TAIL[1.25]", lambda: [f"{_tail(1.25):.3g}"]),
    ("4.3.1", "the cap from 255 forgotten"):
        ("128x128x32, warp 64x64, MIN_BLOCKS 2",
         lambda: ["no spill", "False", str(_registers((128, 128, 32, 64, 64, 4, 2)))]),
    ("4.3.1", "accumulators per thread doubled"): ("128x256x32, warp 64x64, MIN_BLOCKS 1", lambda: ["8"]),
    ("4.3.1", "shared memory of one stage, not of all of them"):
        ("128x128x32, warp 64x64, MIN_BLOCKS 3", lambda: ["64"]),
    ("4.4.1", "waves rounded down"): ("128x256 tiles at M = N = 4224, 1 block(s) per SM", lambda: ["5", "4.25"]),
    ("4.4.1", "stages from 256 KiB"): ("128x256x64 stages", lambda: ["4", "48", "192"]),
    ("4.4.1", "reuse without the 2 bytes an element"): ("128x128 reuse", lambda: ["64.0", "64"]),
}
ATTEMPTS = [(x, a) for x in EXS.values() for a in x.module.ATTEMPTS]


def said(secret: str, text: str) -> bool:
    """`secret` stands in `text` as a number or phrase of its own (not a digit of 4224, 64x64, 0.557 or 1,941; a
    Korean particle, or the x of a ratio, may follow it)."""
    return re.search(rf"(?<![0-9A-Za-z_.,]){re.escape(secret)}(?![0-9A-WYZa-wyz_]|x[0-9A-Za-z_]|[.,][0-9])",
                     text) is not None


def test_every_attempt_has_its_secrets():
    assert {(x.id, a[0]) for x, a in ATTEMPTS} == set(SECRETS)


@pytest.mark.parametrize("x,attempt", ATTEMPTS, ids=[f"{x.id}-{a[0]}" for x, a in ATTEMPTS])
def test_a_wrong_attempt_is_told_the_direction_not_the_answer(x, attempt, tmp_path):
    item, secrets = SECRETS[(x.id, attempt[0])]
    path = os.path.join(tmp_path, x.file)
    with open(path, "w", encoding="utf-8") as f:
        f.write(attempt_text(x, attempt))
    v = x.check(path)
    assert not v.ok and item in v.why, v.why
    told = v.why.split(item, 1)[1]
    assert "too high" in told or "too low" in told or "is not what" in told, told
    given = [s for s in secrets() if said(s, told)]
    assert not given, f"{x.id}, {attempt[0]}: the verdict gives away {given}: {told}"
    i18n.set_lang("ko")
    try:
        ko = x.check(path).why
    finally:
        i18n.set_lang(None)
    told = ko.split("\n  - ", 1)[1].split(": ", 1)[1]          # past the count and the item's (Korean) name
    given = [s for s in secrets() if said(s, told)]
    assert not given, f"{x.id}, {attempt[0]}: the Korean verdict gives away {given}: {told}"


def test_the_rule_sees_a_number_only_as_itself():
    assert said("32", "it is 32, limited by") and said("1,941", "x 2 for the writes: 1,941 GB/s")
    assert said("32", "정답은 32입니다") and said("1.28", "정답은 1.28입니다(")
    assert said("3.97", "3.97x (you said 16)") and said("6.00", "predicts 6.00x") and said("4", "4배입니다")
    assert not said("4", "M = N = 4224, 0.4 and 227 KiB") and not said("5", "0.557 us") and not said("64", "64x64")
    assert not said("16", "16xK") and not said("2", "x2") and not said("1", "fp16")
