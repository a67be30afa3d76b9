"""A checker never gives the answer away (issue 31): for every realistic wrong attempt of exercises 2.4.1, 4.3.1 and
4.4.1, the verdict says which way the wrong item is off and what to re-check, but holds neither the solution's value
for that item nor the intermediate number that gives it by one step - each written the way the old messages wrote it
('it is 32', '1,941 GB/s', 'Little's law is 1.28', 'fits in 242 registers, no spill', '4 of them fit')."""
import os
import re

import pytest

from common import i18n
from course.exercise import all_exercises

EXS = {x.id: x for x in all_exercises() if x.id in ("2.4.1", "4.3.1", "4.4.1")}


def _attempt_text(x, attempt) -> str:
    """The solution with the attempt's (good, bad) pairs applied (as tests/test_exercise_attempts.py makes it)."""
    text = open(x.solution, encoding="utf-8").read()
    for good, bad in attempt[1]:
        text = text.replace(good, bad)
    return text


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


# (exercise, attempt) -> (the wrong item's name in the English verdict, what the old message said of it: the right
# value and the number one step from it, formatted as it formatted them)
SECRETS = {
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
    Korean particle may follow it)."""
    return re.search(rf"(?<![0-9A-Za-z_.,]){re.escape(secret)}(?![0-9A-Za-z_]|[.,][0-9])", text) is not None


def test_every_attempt_has_its_secrets():
    assert {(x.id, a[0]) for x, a in ATTEMPTS} == set(SECRETS)


@pytest.mark.parametrize("x,attempt", ATTEMPTS, ids=[f"{x.id}-{a[0]}" for x, a in ATTEMPTS])
def test_a_wrong_attempt_is_told_the_direction_not_the_answer(x, attempt, tmp_path):
    item, secrets = SECRETS[(x.id, attempt[0])]
    path = os.path.join(tmp_path, x.file)
    with open(path, "w", encoding="utf-8") as f:
        f.write(_attempt_text(x, attempt))
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
    assert not said("4", "M = N = 4224, 0.4 and 227 KiB") and not said("5", "0.557 us") and not said("64", "64x64")
