"""tools/diagrams.py: every conceptual figure draws in English and Korean, is shown by a lesson and its Korean twin, and
shows the numbers the labs' own models give (no GPU)."""
import glob
import os
import re

import numpy as np
import pytest

from tools import diagram_figures as figs
from tools import diagrams

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LESSONS = sorted(glob.glob(os.path.join(ROOT, "phase*", "lab*", "README.md")))


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


@pytest.mark.parametrize("name", sorted(diagrams.FIGURES))
def test_every_figure_draws_in_both_languages(name, tmp_path):
    for lang in diagrams.LANGS:
        path = diagrams.draw(name, lang, str(tmp_path))
        assert path == diagrams.path_of(str(tmp_path), name, lang)
        w, h = diagrams.png_size(path)
        assert w > 400 and h > 300, (name, lang, w, h)


@pytest.mark.parametrize("name", sorted(diagrams.FIGURES))
def test_both_languages_have_the_same_labels_and_placeholders(name):
    from common.i18n import placeholders

    labels = diagrams.FIGURES[name][1]
    assert set(labels) == set(diagrams.LANGS)
    assert set(labels["en"]) == set(labels["ko"]), name
    for key, text in labels["en"].items():
        assert placeholders(text) == placeholders(labels["ko"][key]), (name, key)
    assert any(re.search(r"[\uac00-\ud7a3]", t) for t in labels["ko"].values()), f"{name}: no Korean text"


@pytest.mark.parametrize("name", sorted(diagrams.FIGURES))
def test_every_figure_is_in_a_lesson_and_its_korean_twin(name):
    en_link = f"docs/diagrams/{name}.png"
    ko_link = f"docs/diagrams/ko/{name}.png"
    pages = [p for p in LESSONS if en_link in _read(p)]
    assert pages, f"{name}: no lesson shows {en_link}"
    for page in pages:
        ko = page[: -len(".md")] + ".ko.md"
        assert ko_link in _read(ko), f"{os.path.relpath(ko, ROOT)} does not show {ko_link}"
        for path, link in ((page, en_link), (ko, ko_link)):
            m = re.search(r"!\[[^\]]*\]\(([^)]*" + re.escape(link) + r")\)", _read(path))
            assert m, f"{path}: {link} is not an image link"
            assert os.path.exists(os.path.normpath(os.path.join(os.path.dirname(path), m.group(1))))


def test_committed_pngs_exist_for_every_figure():
    for name in diagrams.FIGURES:
        for lang in diagrams.LANGS:
            assert os.path.exists(diagrams.path_of(diagrams.OUT, name, lang)), (name, lang)


# ---------------------------------------------------------------------------------------------------------------------
# The numbers in the figures are the models'
# ---------------------------------------------------------------------------------------------------------------------
def test_bank_conflicts_of_a_column_read():
    from phase2_cuda.lab02_bank_conflicts import lab as l22

    d = diagrams.banks_data()
    assert d["conflicted"]["passes"] == 32
    assert d["padded"]["passes"] == 1
    assert d["swizzled"]["passes"] == 1
    assert d["conflicted"]["passes"] == l22.stride_passes(32) and d["padded"]["passes"] == l22.stride_passes(33)
    for lay in diagrams.LAYOUTS:           # the figure's addressing is the lab's: the tile's column loads agree
        col = sum(diagrams.banks_data(c)[lay]["passes"] for c in range(32))
        rows = sum(l22.passes(diagrams.bank_address(lay, r, lane) for lane in range(32)) for r in range(32))
        assert col + rows == l22.tile_passes(lay), lay


def test_sectors_per_stride():
    rows = {r["stride"]: r["sectors"] for r in diagrams.coalescing_data()}
    assert rows == {1: 4, 2: 8, 4: 16, 8: 32, 32: 32}


def test_thread_mapping_and_the_wave():
    from common import device, occupancy

    d = diagrams.threads_data()
    rec = d["records"]
    assert list(rec[:, 4]) == [tid // 32 for tid in rec[:, 3]]          # warp = tid // 32
    bx = d["block"][0]
    assert all(r[3] == r[1] + bx * r[2] for r in rec)                   # tid = tx + bx ty
    g = device.profile_info(diagrams.PROFILE)
    bps = occupancy.occupancy(g.arch, d["threads"], diagrams.THREADS_REGS).blocks_per_sm
    assert d["sms"] == g.sms and d["wave"] == g.sms * bps and bps >= 1


def test_matmul_tile_is_the_labs():
    from phase1_architecture.lab06_matmul_naive import lab as l16

    d = diagrams.matmul_data()
    assert (d["bm"], d["bn"], d["bk"]) == tuple(l16.TRITON_TILE[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    assert d["steps"] * d["bk"] >= d["k"] and d["fma"] == d["bm"] * d["bn"] * d["bk"]


def test_occupancy_limits_are_the_calculators():
    o = figs.occupancy_data()
    assert o.limits["registers"] < o.limits["shared memory"] < o.limits["warps"] <= o.limits["blocks"]
    assert o.limiters == ("registers",)
    assert o.blocks_per_sm == min(o.limits.values())


def test_online_softmax_ends_at_the_reference():
    d = figs.online_softmax_data()
    x = d["x"]
    assert d["m"] == x.max()
    assert np.isclose(d["l"], d["exact"], rtol=1e-12)
    assert d["err"] < 1e-12
    ms = [s["m"] for s in d["steps"]]
    assert ms == sorted(ms)                                  # the running max never goes down
    assert any(0 < s["alpha"] < 1 for s in d["steps"])       # the row rescales at least once (the figure shows it)


def test_flash_tiles_are_the_models(monkeypatch):
    """The tiles the figure marks computed are those tiled_model visits: count its exp2 calls (two per tile)."""
    from phase4_optimization.lab06_attention import models

    d = figs.flash_data(s=256)
    assert d["full"].all()
    nq = d["nq"]
    assert (d["causal"] > 0).sum() == nq * (nq + 1) // 2 and (d["causal"] == 2).sum() == nq
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 1, 256, 16)) for _ in range(3))
    calls = []
    real = np.exp2
    monkeypatch.setattr(models.np, "exp2", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    for causal in (False, True):
        calls.clear()
        models.tiled_model(q, k, v, causal=causal)
        assert len(calls) == 2 * int((d["causal" if causal else "full"] > 0).sum()), causal


def test_pipeline_respects_the_barriers():
    d = figs.pipeline_data()
    s = d["stages"]
    for n, (start, end, _) in enumerate(d["loads"]):
        if n >= s:
            assert start >= d["release"][n - s] - 1e-12            # empty barrier: the stage was released first
        for c in range(d["consumers"]):
            assert d["computes"][c][n][0] >= end - 1e-12          # full barrier: the load landed first
    for n in range(len(d["loads"])):                               # never more tiles in flight than stages
        in_flight = sum(1 for m, (a, _, _) in enumerate(d["loads"]) if a <= d["loads"][n][0] < d["release"][m])
        assert in_flight <= s


def test_no_datasheet_numbers_typed_in_the_figures():
    """GPU figures come from common.device.profile_info, not from the code: no SM counts, bandwidths or GPU names."""
    for mod in (diagrams, figs):
        src = _read(mod.__file__)
        assert not re.search(r"\b(132|108|114)\s*SMs?\b|GB/s|TB/s|TFLOP", src), mod.__file__
        assert "H100" not in src and "NVIDIA H" not in src


def test_cli_check_passes_and_help(capsys):
    assert diagrams.main(["--check", "--only", "banks"]) == 0
    with pytest.raises(SystemExit) as e:
        diagrams.main(["--help"])
    assert e.value.code == 0


def test_cli_check_fails_on_a_missing_png(tmp_path, capsys):
    assert diagrams.main(["--check", "--only", "coalescing", "--out", str(tmp_path)]) == 1
    assert "missing" in capsys.readouterr().out
