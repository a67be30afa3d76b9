"""Lab 4.6, the tuning record: `--tune` records this GPU's Triton forward / backward winners in
results/<gpu>/phase4_lab06_attention_tuned.json, and flash_attn_fwd / flash_attn_bwd use them when no config is passed.

CPU tier: every candidate the sweep times is a config the record accepts; malformed configs are refused by name; the
order of precedence (a config passed > this process's tuning > this GPU's record > the default) with a record written
to a temporary results folder; a malformed record falls back to the default; the interpreter never takes a record;
--tune is offered. GPU tier: a TMA config inside a CUDA graph capture takes the pointer loads and still gives the
right answer.
"""
import numpy as np
import pytest

from common import check
from phase4_optimization.lab06_attention import bench as ab
from phase4_optimization.lab06_attention import lab as L
from phase4_optimization.lab06_attention import tiles
from tests.helpers import lab_main

KEY = ("fwd", 128, False, "bfloat16")


def test_every_candidate_is_a_valid_record():
    for d, cands in ab.FWD_CANDIDATES.items():
        for c in cands:
            assert L.check_tuned_config("fwd", c) == {k: v for k, v in c.items() if v is not False}, c
    for d, cands in ab.BWD_CANDIDATES.items():
        for c in cands:
            assert L.check_tuned_config("bwd", c) == c


@pytest.mark.parametrize("kind,cfg,what", [
    ("fwd", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8}, "num_stages"),
    ("fwd", {"BLOCK_M": 96, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}, "BLOCK_M"),
    ("fwd", {"BLOCK_M": 64, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}, "multiple"),
    ("fwd", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": "yes"}, "TMA"),
    ("fwd", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "SPLIT": 2}, "SPLIT"),
    ("fwd", {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 6, "num_stages": 3}, "num_warps"),
    ("bwd", {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8, "num_stages": 2,
             "TMA": True}, "TMA"),
    ("both", {}, "kind"),
])
def test_bad_configs_are_refused_by_name(kind, cfg, what):
    with pytest.raises((ValueError, KeyError, TypeError), match=what):
        L.check_tuned_config(kind, cfg)


@pytest.fixture
def compiled_mode(monkeypatch):
    """The wrappers as they behave on a GPU (the interpreter never reads a record)."""
    monkeypatch.setattr(tiles, "INTERPRETER", False)         # tiles.py resolves the configs the wrappers use
    monkeypatch.setattr(tiles, "TUNED", {})


def test_record_is_used_when_no_config_is_passed(tuning_record, compiled_mode):
    rec = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 4, "TMA": True}
    tuning_record(L.TUNED_RECORD, {L.record_key(*KEY): rec, "bwd D128 full bfloat16": ab.BWD_CANDIDATES[128][1]})
    assert L.config_for(*KEY) == rec
    assert L.config_for("bwd", 128, False, "bfloat16") == ab.BWD_CANDIDATES[128][1]
    assert f"tuned on {tuning_record.made_on}" in L.tuned_source()
    # what is not recorded (another mask, head dim or dtype) gets the default
    assert L.config_for("fwd", 128, True, "bfloat16") == L.fwd_default_gpu(128, True)
    assert L.config_for("fwd", 64, False, "bfloat16") == L.fwd_default_gpu(64, False)
    assert L.config_for("fwd", 128, False, "float16") == L.fwd_default_gpu(128, False)
    # this process's tuning comes first
    tiles.TUNED[KEY] = ab.FWD_CANDIDATES[128][0]
    assert L.config_for(*KEY) == ab.FWD_CANDIDATES[128][0]
    assert ab._config_label(*KEY).startswith("tuned in this run")
    del tiles.TUNED[KEY]
    assert ab._config_label(*KEY).startswith("recorded")


def test_no_record_means_the_default(tuning_record, compiled_mode):
    assert L.config_for(*KEY) == L.fwd_default_gpu(128, False)
    assert "no tuning record" in L.tuned_source()
    assert ab._config_label(*KEY).startswith("default")


def test_a_malformed_record_falls_back_to_the_default(tuning_record, compiled_mode):
    tuning_record(L.TUNED_RECORD, {L.record_key(*KEY): {"BLOCK_M": 100, "BLOCK_N": 64, "num_warps": 8,
                                                          "num_stages": 3}})
    with pytest.warns(UserWarning, match="unusable tuning record"):
        assert L.config_for(*KEY) == L.fwd_default_gpu(128, False)
    tuning_record(L.TUNED_RECORD, text="{not json")
    with pytest.warns(UserWarning, match="unreadable"):
        assert L.config_for(*KEY) == L.fwd_default_gpu(128, False)


def test_the_interpreter_never_takes_a_record(tuning_record):
    if not tiles.INTERPRETER:
        pytest.skip("a GPU machine: the wrappers run compiled")
    tuning_record(L.TUNED_RECORD, {L.record_key(*KEY): ab.FWD_CANDIDATES[128][0]})
    assert L.tuned_config(*KEY) is None and L.config_for(*KEY) == L.fwd_default(128, False)
    assert not L._capturing()


def test_tune_flag_is_offered(capsys):
    with pytest.raises(SystemExit) as e:
        lab_main(L)(["--help"])
    assert e.value.code == 0
    assert "--tune" in capsys.readouterr().out


@pytest.mark.gpu
def test_gpu_tma_config_under_graph_capture():
    """A CUDA graph of the forward with a TMA config: the capture takes the pointer loads (no device-side scratch
    allocation recorded into the graph), and the replayed graph's O and LSE (poisoned first) match float64."""
    torch = pytest.importorskip("torch")
    from common import device

    if not device.has_gpu():
        pytest.skip("needs a GPU")
    g = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn((1, 4, 300, 128), generator=g, device="cuda").to(torch.bfloat16) for _ in range(3))
    cfg = {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3, "TMA": True}
    o_eager, lse_eager = L.flash_attn_fwd(q, k, v, True, config=cfg)
    o, lse = torch.full_like(o_eager, float("nan")), torch.full_like(lse_eager, float("nan"))
    L.flash_attn_fwd(q, k, v, True, out=(o, lse), config=cfg)          # compile outside the capture
    o.fill_(float("nan"))
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        L.flash_attn_fwd(q, k, v, True, out=(o, lse), config=cfg)
    torch.cuda.current_stream().wait_stream(stream)
    graph.replay()
    torch.cuda.synchronize()
    q64, k64, v64 = (x.float().cpu().numpy().astype(np.float64) for x in (q, k, v))
    o_ref, lse_ref = L.forward_reference(q64, k64, v64, True)
    tol = L.tolerance((1, 4, 300, 128, True), "bfloat16")
    for got in (o, o_eager):
        c = check.compare(got.float().cpu().numpy(), o_ref, "bfloat16", tol)
        assert c.ok, c.message
    c = check.compare(lse.cpu().numpy(), lse_ref, "float32", ab.LSE_TOL)
    assert c.ok, c.message
