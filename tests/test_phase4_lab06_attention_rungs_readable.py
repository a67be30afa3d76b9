"""Lab 4.6's Hopper rungs read one at a time (kernels_hopper.cu): each of rungs 03-08 is a consumer function of its own,
short enough to read top to bottom, that its kernel calls; every mbarrier wait goes through the one WAIT macro, with
no flag threaded through the calls; and the default build has plain waits, the bounded wait that records a hang
being the opt-in debug build (MBAR_TIMEOUT=1: hopper.defines(timeout=True), ATTN_MBAR_TIMEOUT=1 for the launches).
CPU tier: the source, and two NVRTC compiles at D = 64."""
import re

import pytest

from phase4_optimization.lab06_attention import hopper as hp
from tests.helpers import assert_waits_go_through_WAIT

CU = open(hp.KERNEL_PATH, encoding="utf-8").read()
LINES = CU.splitlines()
RUNGS = tuple(hp.KERNELS)


def _function(name: str) -> tuple[int, int]:
    """(lines of the function with the comment block just above it, lines of the function alone)."""
    start = [i for i, x in enumerate(LINES) if re.match(rf"__device__ __forceinline__ void {name}\(", x)]
    assert len(start) == 1, f"{name}: {len(start)} definitions"
    end = next(i for i in range(start[0], len(LINES)) if LINES[i] == "}")
    top = start[0]
    while LINES[top - 1].startswith("//") and not LINES[top - 1].startswith("// ---"):
        top -= 1
    return end - top + 1, end - start[0] + 1


@pytest.mark.parametrize("rung", RUNGS)
def test_each_rung_is_one_consumer_function_of_readable_length(rung):
    with_comment, body = _function(f"consumer_{rung}")
    assert 35 <= with_comment <= 80 and body <= 70, (with_comment, body)
    # the rung's kernel calls it
    kernel = hp.KERNELS[rung]
    if rung in hp.PERSISTENT:
        assert f"HOPPER_PERSISTENT({kernel}, consumer_{rung}, " in CU
    else:
        assert f"HOPPER_RUNG({kernel}, consumer_{rung})" in CU
    # each says what it changed since the previous rung
    if rung != "03":
        assert re.search(rf"^// Rung {rung} = rung 0\d", CU, re.M) or f"Rung {rung}: rung 05 made persistent" in CU


def test_no_schedule_template_and_no_ok_flag():
    assert "SCHED" not in CU and "template" not in CU and "overlap_tile" not in CU
    assert not re.search(r"\bbool ok\b|\bok &&|\bok = ", CU)
    assert "__all_sync" not in CU


def test_every_barrier_wait_goes_through_WAIT():
    assert_waits_go_through_WAIT(CU)


def test_bounded_wait_is_opt_in(monkeypatch):
    assert hp.CONFIG["MBAR_TIMEOUT"] == 0 and hp.defines(64)["MBAR_TIMEOUT"] == 0
    assert hp.defines(64, timeout=True)["MBAR_TIMEOUT"] == 1
    monkeypatch.delenv("ATTN_MBAR_TIMEOUT", raising=False)
    assert hp.debug_waits() is False
    monkeypatch.setenv("ATTN_MBAR_TIMEOUT", "1")
    assert hp.debug_waits() is True


def test_default_build_has_no_bounded_wait_code():
    """The debug build's wait reads the clock, polls the hang record and CASes it (CS2R SR_CLOCKLO, LDG, ATOMG); the
    default build has none of it, only the try-wait loops."""
    plain, debug = hp.compile_report(64), hp.compile_report(64, timeout=True)
    for rung, name in hp.KERNELS.items():
        p, d = plain.kernels[name].sass, debug.kernels[name].sass
        if not p:
            pytest.skip("no cuobjdump (it ships with the triton wheel)")
        assert any("SYNCS.PHASECHK" in x for x in p)
        assert not any("SR_CLOCK" in x or "ATOMG" in x or x.split()[0].startswith("LDG") for x in p if x.strip()), name
        assert any("SR_CLOCK" in x for x in d) and any("ATOMG" in x for x in d), name
        assert plain.kernels[name].spills == 0 and debug.kernels[name].spills == 0
    assert not re.search(r"C75\d\d|serializ", debug.log), debug.log


def test_hang_reports_decode_the_bounded_waits_record(monkeypatch):
    """common.hopper.bounded_wait_record decodes mbar_wait_bounded's 5 words ({1, block x, block y, thread,
    bar << 2 | what << 1 | parity}) and clears them; both of lab 4.6's hang reports name the block, thread, barrier
    and parity from it (the device memory stands in as a NumPy array: no GPU needed)."""
    import numpy as np

    from common import hopper as common_hopper
    from phase4_optimization.lab06_attention import hopper_bwd as hb

    words = {}

    class Words(np.ndarray):
        def get(self):
            return np.asarray(self)

    def fake_words(mod, symbol, count):
        return words.setdefault(symbol, np.array([1, 3, 7, 130, (0x4a8 << 2) | (1 << 1) | 1], np.uint32).view(Words))

    monkeypatch.setattr(common_hopper, "device_words", fake_words)
    r = common_hopper.bounded_wait_record(None, "attn_hopper_hang", reset=False)
    assert r == {"block": (3, 7), "thread": 130, "bar": 0x4a8, "what": 1, "parity": 1}
    monkeypatch.setattr(hb, "_functions", lambda *key: (None, {}))
    monkeypatch.setattr(hb, "_LOADED", {(64, "bfloat16", True), (128, "float16", False)})
    text = hb.hang_report()
    assert text == ("D64 bfloat16: block (3, 7) thread 130, warpgroup 0 (the producer from rung 06), timed out on the "
                    "barrier at shared 0x4a8, parity 1")
    assert not words["attn_hopper_bwd_hang"].any() and hb.hang_report() is None      # read once, then cleared
    monkeypatch.setattr(hp, "_module", lambda *key: None)
    monkeypatch.setattr(hp, "_LOADED", {(128, "bfloat16", False, 2, True)})
    assert "D128 bfloat16 2 stages: block (3, 7) thread 130 timed out on the empty" in hp.hang_report(reset=False)
