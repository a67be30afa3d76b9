"""common/target.py: one Target record for every performance target and prediction, one rule for 'met' (steady
rounds, a passed check, the value inside its band), the legacy reader of the committed results, and every lab that
records targets building them through it."""
import ast
import dataclasses
import glob
import json
import math
import os

import numpy as np
import pytest

from common import bench, headline, i18n, target
from common.target import Target, decide, prediction, recorded, versus

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = sorted(glob.glob(os.path.join(ROOT, "results", "*", "*.json")))


def _doc(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return doc if isinstance(doc, dict) else {}


# ---------------------------------------------------------------------------------------------------------------------
# The rule
# ---------------------------------------------------------------------------------------------------------------------
def test_the_met_rule():
    assert decide(1.1, at_least=1.0, steady=True) is True
    assert decide(0.9, at_least=1.0, steady=True) is False
    assert decide(0.1, at_most=0.15, steady=True) is True and decide(0.2, at_most=0.15, steady=True) is False
    assert decide(2.0, at_least=1.7, at_most=2.3) is True and decide(2.4, at_least=1.7, at_most=2.3) is False
    # rounds that were not steady: no verdict either way (a ratio within noise of the goal is quoted as neither)
    assert decide(1.5, at_least=1.0, steady=False) is None and decide(0.5, at_least=1.0, steady=False) is None
    # nothing measured, no goal: no verdict; a wrong kernel meets nothing, steady or not
    assert decide(None, at_least=1.0, steady=True) is None and decide(float("nan"), at_least=1.0) is None
    assert decide(1.5, steady=True) is None
    assert decide(1.5, at_least=1.0, steady=True, checked=False) is False
    assert decide(1.5, at_least=1.0, steady=False, checked=False) is False
    # a prediction that is not a head-to-head timing (steady None) is judged on its band alone
    assert decide(13.5, at_least=10) is True


def test_versus_and_prediction_build_the_record_and_its_verdict():
    t = versus("softmax 32768x4096 float32", "triton", "torch.compile", np.float64(1.25), steady=True, at_least=1.2,
               detail={"rounds_run": 5})
    assert (t.goal, t.met, t.steady, type(t.ratio)) == (">= 1.2", True, True, float)
    assert t.is_target and t.detail == {"rounds_run": 5}
    assert versus("c", "o", "p", 1.25, steady=False, at_least=1.2).met is None
    assert versus("c", "o", "p", 1.25, steady=True, at_least=1.2, checked=False).met is False
    ref = versus("c", "peer itself", "p", 1.0, steady=True)               # a reference line: no goal, no verdict
    assert (ref.goal, ref.met, ref.is_target) == ("", None, False)
    gone = versus("c", "o", "p", None, steady=True, at_least=0.9, note="not measured: no cuDNN")
    assert gone.met is None and gone.ratio is None and gone.is_target
    with pytest.raises(TypeError):
        versus("c", "o", "p", 1.0, steady=None, at_least=1.0)              # a peer target says whether it was steady
    assert versus("c", "o", "p", 0.1, steady=True, at_most=0.15).goal == "<= 0.15"
    p = prediction("divergent / uniform", 1.96, at_least=1.7, at_most=2.3, goal="2 (1.7 .. 2.3)")
    assert (p.peer, p.ours, p.goal, p.met, p.steady) == ("", "", "2 (1.7 .. 2.3)", True, None)
    count = prediction("calculator == driver", np.int64(88), at_least=90, at_most=90)
    assert (count.ratio, type(count.ratio), count.goal, count.met) == (88, int, "= 90", False)
    assert prediction("x", 1.0, at_least=0.5, at_most=2.0).goal == "0.5 .. 2"


def test_the_record_round_trips_and_refuses_what_it_is_not():
    t = versus("4096^3", "cuda 11 autotuned", "cuBLAS (cupy)", 0.93, steady=True, at_least=0.92,
               detail={"tflops": 45.1, "rounds_run": 5})
    d = t.as_dict()
    assert list(d) == ["case", "ours", "peer", "ratio", "goal", "steady", "met", "note", "detail"]
    assert Target.from_dict(json.loads(json.dumps(d))) == t
    assert target.records([t]) == [d] and recorded({"targets": [d]}) == [t]
    with pytest.raises(ValueError):
        Target.from_dict(dict(d, vs_cublas=0.93))
    with pytest.raises(TypeError):
        Target("c", met="yes")
    with pytest.raises(TypeError):
        Target("c", ratio=float("inf"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.met = False


def test_a_table_prints_the_records_in_the_readers_language():
    rows = [versus("c", "ours", "peer", 1.3, steady=True, at_least=1.2, detail={"ms": 0.5}),
            versus("c", "the peer", "peer", 1.0, steady=True)]
    shown = target.said(rows)
    assert list(shown[0]) == ["case", "ours", "peer", "ratio", "goal", "steady", "met", "ms"]   # 'note': empty
    assert shown[0]["met"] is True and shown[1]["met"] is None
    pred = target.said([prediction("calculator == driver for every live case", 90, at_least=90, at_most=90)],
                       translate=("case",))
    assert "measured" in pred[0] and "peer" not in pred[0] and "steady" not in pred[0]
    i18n.set_lang("ko")
    try:
        ko = target.said(rows)[0]
        assert ko["met"] == "예" and ko["steady"] == "예"
        assert target.said([prediction("calculator == driver for every live case", 90, at_least=90, at_most=90)],
                           translate=("case",))[0]["case"] != "calculator == driver for every live case"
    finally:
        i18n.set_lang(None)


# ---------------------------------------------------------------------------------------------------------------------
# The legacy reader, on the committed results
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", RESULTS, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_committed_target_reads_as_a_record(path):
    doc = _doc(path)
    for t in recorded(doc):
        assert isinstance(t, Target) and isinstance(t.case, str) and t.case
        assert t.met in (True, False, None)
        assert Target.from_dict(json.loads(json.dumps(t.as_dict()))) == t
    legacy = [d for k in ("targets", "target") for d in ([doc[k]] if isinstance(doc.get(k), dict) else
                                                         doc.get(k) or []) if isinstance(d, dict) and "goal" not in d]
    for d, t in zip(legacy, recorded(doc)):
        if isinstance(d.get("met"), bool):             # the verdict as it was written, never re-judged
            assert t.met is d["met"] and t.is_target
        if "measured" in d and isinstance(d.get("measured"), (int, float)):
            assert t.ratio == d["measured"] and t.peer == ""


def test_the_legacy_shapes_each_read_right():
    read = Target.from_legacy
    assert read({"n": 2**28, "variant": "triton", "vs torch.add": 1.004, "target": ">= 1.00", "met": True}) == \
        Target("2^28", "triton", "torch.add", 1.004, ">= 1.00", None, True, "", {})
    sg = read({"size": "4096^3", "variant": "cuda 11", "vs_cublas": 0.88, "target": ">= 0.92", "met": False,
               "steady": True, "tflops": 45.0})
    assert (sg.case, sg.peer, sg.ratio, sg.steady, sg.detail) == ("4096^3", "cuBLAS", 0.88, True, {"tflops": 45.0})
    row = read({"lab": "x", "variant": "target vs torch eager", "impl": "target", "shape": [16, 1024, 1024, 16],
                "dtype": "bfloat16", "ratio": 1.005, "target": 1.3, "met": False, "ours": "ours"})
    assert (row.case, row.ours, row.peer, row.goal) == ("16x1024x1024x16 bfloat16", "ours", "torch eager", "1.3")
    tri = read({"case": "softmax", "peer": "torch.compile", "triton GB/s": 4220.0, "ratio": 1.25, "target": ">= 1.2",
                "met": True, "vs unfused": 5.2})
    assert tri.ours == "triton" and tri.detail == {"triton GB/s": 4220.0, "vs unfused": 5.2}
    gone = read({"case": "c", "peer": "torch SDPA cuDNN", "target": ">= 0.9", "met": "not measured: no cuDNN"})
    assert (gone.met, gone.note, gone.ratio) == (None, "not measured: no cuDNN", None)
    lat = read({"target": "L1 latency in the published range", "measured": 39.6, "range": "28-45 cycles",
                "source": "a paper", "met": True})
    assert (lat.case, lat.ratio, lat.goal, lat.note, lat.peer) == ("L1 latency in the published range", 39.6,
                                                                    "28-45 cycles", "a paper", "")
    copy = read({"variant": "cuda 04", "shape": "16384x16384", "copy GB/s (best of 2)": 4229.7, "ratio": 0.94,
                 "target": ">= 0.85", "met": True})
    assert copy.peer == "device copy (the lab's HBM ceiling)" and copy.case == "16384x16384"


def test_the_headlines_are_the_ones_the_committed_roofline_recorded():
    """The roofline (lab 4.1) recorded each lab's headline (case, ratio) with the rule as it stood before the record
    existed: the legacy reader gives the same case and ratio for every one."""
    h200 = os.path.join(ROOT, "results", "h200")
    roof = _doc(os.path.join(h200, "phase4_lab01_roofline.json"))
    if not roof.get("headlines"):
        pytest.skip("no committed roofline")
    for h in roof["headlines"]:
        now = headline.choose(_doc(os.path.join(h200, f"{h['lab']}.json")), h["lab"])
        assert now is not None and now["case"] == h["case"] and math.isclose(now["ratio"], h["ratio"]), h["lab"]


def test_a_headline_takes_a_new_record_with_a_goal_never_a_reference_line():
    doc = {"targets": target.records([
        versus("A", "phase 3 triton", "torch.compile", 1.4, steady=True),                 # faster, but no goal
        versus("A", "cuda 05", "torch.compile", 1.2, steady=True, at_least=1.2),
        versus("A", "cuda 06", "torch.compile", 0.8, steady=False, at_least=0.5),
        prediction("a prediction", 3.0, at_least=1.0)])}
    h = headline.choose(doc, "x")
    assert (h["case"], h["ours"], h["peer"], h["ratio"], h["target"], h["met"]) == \
        ("A", "cuda 05", "torch.compile", 1.2, ">= 1.2", True)


# ---------------------------------------------------------------------------------------------------------------------
# Every lab builds its targets through the record
# ---------------------------------------------------------------------------------------------------------------------
LAB_SOURCES = sorted(p for p in glob.glob(os.path.join(ROOT, "phase*", "lab*", "*.py"))
                     if os.path.basename(p) != "ko.py")


def _is_records_call(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "records"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "target")


def _writes(tree):
    """(value, line) of every place a module hands the JSON header its "targets": targets=... in a call,
    meta["targets"] = ..."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            yield from ((k.value, node.lineno) for k in node.keywords if k.arg == "targets")
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and \
                        t.slice.value in ("targets", "target"):
                    yield node.value, node.lineno


def test_every_lab_writes_its_targets_as_records():
    """No lab builds a free-form target dict ('met' set by hand); what goes under "targets" is target.records(...)
    (or a name bound to it); every target against a peer says whether its rounds were steady."""
    writers = set()
    for path in LAB_SOURCES:
        tree = ast.parse(open(path, encoding="utf-8").read(), path)
        where = os.path.relpath(path, ROOT)
        bound = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and _is_records_call(n.value)
                 for t in n.targets if isinstance(t, ast.Name)}
        for value, line in _writes(tree):
            assert _is_records_call(value) or (isinstance(value, ast.Name) and value.id in bound), \
                f"{where}:{line}: targets written without common.target.records"
            writers.add(os.path.dirname(where))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                assert "met" not in keys, f"{where}:{node.lineno}: a target dict with 'met' set by hand"
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "versus":
                assert any(k.arg == "steady" for k in node.keywords), f"{where}:{node.lineno}: versus without steady"
    # the labs that compare with a peer or check a prediction (their results JSONs carry "targets")
    for lab in ("lab02_vector_add", "lab03_thread_hierarchy", "lab04_memory_hierarchy", "lab05_occupancy",
                "lab06_matmul_naive", "lab01_coalescing_transpose", "lab06_reduction", "lab07_softmax", "lab08_sgemm",
                "lab02_matmul", "lab03_fused_softmax", "lab04_layernorm", "lab01_roofline", "lab02_fusion",
                "lab03_tensor_cores", "lab06_attention", "lab07_transformer_block"):
        assert any(w.endswith(lab) for w in writers), f"{lab} writes no targets through common.target"


def test_a_hopper_target_of_lab_4_6_from_fake_timings():
    """The one lab target builder that needs no GPU to call: fake timings in, a record out (verdict by the rule)."""
    from phase4_optimization.lab06_attention import timing

    def t(ms):
        return bench.Timing(ms, ms * 0.99, ms * 1.01, ms * 0.98, 10, "fake")

    class Ok:
        ok = True

    ts = {"torch SDPA cuDNN": t(1.0), "rung": t(0.97)}
    rec = timing.hopper_target("fwd", (4, 32, 4096, 128), ts, "torch SDPA cuDNN", 1e12, Ok(), None, "rung",
                               steady=True)
    assert (rec.ours, rec.peer, rec.met, rec.goal) == ("rung", "torch SDPA cuDNN", True, f">= {timing.HOPPER_GOAL:g}")
    assert timing.hopper_target("fwd", (4, 32, 4096, 128), ts, "torch SDPA cuDNN", 1e12, Ok(), None, "rung",
                                steady=False).met is None
    gone = timing.hopper_target("fwd", (4, 32, 4096, 128), ts, "torch SDPA cuDNN", 1e12, None, "no sm_90", "rung",
                                steady=True)
    assert gone.met is None and gone.note == "not measured: no sm_90"
