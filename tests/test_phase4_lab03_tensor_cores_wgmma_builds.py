"""Lab 4.3, which build of rung 03 runs (wgmma_builds.py), on the CPU: every build the kernel file compiles is in
builds(); the --tune record for this GPU (a temporary record, never a tracked file) picks the build nearest the
problem's size; the default without one; a malformed or unreadable record refused naming its field; arguments, WGMMA_*
environment variables and --set over the record, field by field; the lab's fixed-build variants; the --tune sweep
times every build and records the fastest correct one (timing and kernels faked), and is skipped off Hopper."""
import dataclasses
import itertools
import re
from types import SimpleNamespace

import pytest

from common import arrays, bench, check, config, device, tuned
from phase4_optimization.lab03_tensor_cores import bench_wgmma
from phase4_optimization.lab03_tensor_cores import lab as tc
from phase4_optimization.lab03_tensor_cores import wgmma as wg
from tests.wgmma_fakes import fake_driver

ENV_VARS = ("WGMMA_CLUSTER", "WGMMA_TMA_STORE", "WGMMA_C_PASSES", "WGMMA_B_KMAJOR")
TWO_SIZES = [{"shape": [4096, 4096, 4096], "build": {"cluster": 2, "tma_store": True, "c_passes": 2}},
             {"shape": [8192, 8192, 8192], "build": {"cluster": 1, "tma_store": True, "c_passes": 1}}]


@pytest.fixture
def no_env(monkeypatch):
    for v in ENV_VARS:
        monkeypatch.delenv(v, raising=False)


@pytest.fixture
def fake_host(monkeypatch):
    return fake_driver(monkeypatch)


def _run_host(m, n, k, **kw):
    torch = pytest.importorskip("torch")
    return wg.gemm_wgmma(torch.zeros((m, k), dtype=torch.bfloat16), torch.zeros((k, n), dtype=torch.bfloat16), **kw)


def test_builds_cover_every_valid_combination():
    """The head to head and --tune time wg.builds(): it must hold every (cluster, tma_store, c_passes) the kernel
    file compiles, once each, and nothing check_build refuses."""
    valid = set()
    for cl, epi, cp in itertools.product(wg.CLUSTERS, (False, True), wg.C_PASSES):
        try:
            valid.add(tuple(wg.check_build({"cluster": cl, "tma_store": epi, "c_passes": cp}).values()))
        except ValueError:
            pass
    got = [tuple(b[k] for k in wg.BUILD_KEYS) for b in wg.builds()]
    assert len(got) == len(set(got)) == 6 and set(got) == valid
    assert [b for b in wg.builds(b_kmajor=True)] == [b for b in wg.builds() if b["cluster"] == 1]
    assert len({wg.build_label(b) for b in wg.builds()}) == 6
    assert wg.DEFAULT_BUILD in wg.builds()


def test_default_build_without_a_record(tuning_record, no_env, fake_host):
    build, source = wg.resolve_build(4096, 4096, 4096)
    assert build == wg.DEFAULT_BUILD and source == tuned.NO_RECORD
    _run_host(300, 264, 520)
    assert fake_host == [(1, False, 1)]


def test_dispatch_from_a_recorded_winner(tuning_record, no_env, fake_host):
    """A record with winners at two sizes: each problem runs the winner tuned nearest its size (in log M N K)."""
    tuning_record(wg.TUNED, TWO_SIZES)
    for shape, want, at in (((4096,) * 3, TWO_SIZES[0], "4096x4096x4096"), ((5000,) * 3, TWO_SIZES[0], "4096"),
                            ((8192,) * 3, TWO_SIZES[1], "8192x8192x8192"), ((300, 264, 520), TWO_SIZES[0], "4096"),
                            ((16384, 8192, 8192), TWO_SIZES[1], "8192")):
        build, source = wg.resolve_build(*shape)
        assert build == want["build"], shape
        assert "recorded build" in source and f"tuned on {tuning_record.made_on}" in source
        assert f"winner at {at}" in source
    _run_host(300, 264, 520)                       # 3 tile rows: the cluster pair is kept
    _run_host(8192, 8192, 8192 + 8)
    assert fake_host == [(2, True, 2), (1, True, 1)]


def test_arguments_and_environment_override_the_record(tuning_record, no_env, monkeypatch, fake_host):
    """Field by field: argument, then WGMMA_* environment variable, then the record, then the default."""
    tuning_record(wg.TUNED, TWO_SIZES)                 # 4096^3: cluster 2, TMA store, 2 passes
    rb = lambda **kw: wg.resolve_build(4096, 4096, 4096, **kw)     # noqa: E731
    build, source = rb(cluster=1)
    assert build == {"cluster": 1, "tma_store": True, "c_passes": 2} and "cluster from the argument" in source
    assert rb(tma_store=False)[0] == {"cluster": 2, "tma_store": False, "c_passes": 1}
    assert rb(b_kmajor=True)[0] == {"cluster": 1, "tma_store": True, "c_passes": 2}
    monkeypatch.setenv("WGMMA_TMA_STORE", "0")
    build, source = rb()
    assert build == {"cluster": 2, "tma_store": False, "c_passes": 1} and "tma_store from WGMMA_TMA_STORE" in source
    assert rb(tma_store=True)[0] == {"cluster": 2, "tma_store": True, "c_passes": 2}     # the argument wins
    monkeypatch.delenv("WGMMA_TMA_STORE")
    monkeypatch.setenv("WGMMA_C_PASSES", "1")
    monkeypatch.setenv("WGMMA_CLUSTER", "1")
    assert rb()[0] == {"cluster": 1, "tma_store": True, "c_passes": 1}
    assert rb(cluster=2, c_passes=2)[0] == {"cluster": 2, "tma_store": True, "c_passes": 2}
    monkeypatch.setenv("WGMMA_CLUSTER", "3")
    with pytest.raises(ValueError, match="WGMMA_CLUSTER"):
        rb()
    monkeypatch.delenv("WGMMA_CLUSTER")
    monkeypatch.delenv("WGMMA_C_PASSES")
    tuning_record(wg.TUNED, [{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": False, "c_passes": 1}}])
    assert rb(c_passes=2)[0] == {"cluster": 1, "tma_store": True, "c_passes": 2}      # 2 passes ask for TMA store
    with pytest.raises(ValueError, match="c_passes"):
        rb(tma_store=False, c_passes=2)
    with pytest.raises(ValueError, match="b_kmajor"):
        rb(b_kmajor=True, cluster=2)
    _run_host(300, 264, 520, cluster=2, tma_store=True)
    assert fake_host == [(2, True, 1)]


BAD_WINNERS = [
    ({"cluster": 1}, "winner: expected a non-empty list"),
    ([], "winner: expected a non-empty list"),
    ([{"shape": [4096, 4096], "build": wg.DEFAULT_BUILD}], r"winner\[0\]\.shape"),
    ([{"shape": [4096] * 3}], r"winner\[0\]\.build: missing"),
    ([TWO_SIZES[0], {"shape": [8192] * 3, "build": {"cluster": 3, "tma_store": False, "c_passes": 1}}],
     r"winner\[1\]\.build\.cluster"),
    ([{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": "yes", "c_passes": 1}}], r"build\.tma_store"),
    ([{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": False, "c_passes": 2}}], r"build\.c_passes"),
    ([{"shape": [4096] * 3, "build": {"cluster": 1, "tma_store": False}}], r"build: missing c_passes"),
    ([{"shape": [4096] * 3, "build": dict(wg.DEFAULT_BUILD, stages=3)}], r"build: unknown stages"),
]


@pytest.mark.parametrize("winner,field", BAD_WINNERS)
def test_malformed_record_is_refused_naming_the_field(tuning_record, no_env, fake_host, winner, field):
    with pytest.raises((ValueError, TypeError), match=field):
        wg.check_winners(winner)
    tuning_record(wg.TUNED, winner)
    with pytest.warns(UserWarning, match=field):
        build, source = wg.resolve_build(4096, 4096, 4096)
    assert build == wg.DEFAULT_BUILD and "unusable" in source and re.search(field, source)
    _run_host(300, 264, 520)
    assert fake_host == [(1, False, 1)]


def test_set_sits_between_the_environment_and_the_record(tuning_record, no_env, monkeypatch):
    """--set WGMMA_CLUSTER / WGMMA_TMA_STORE / WGMMA_C_PASSES (common.config) override the record and are named in
    the source; the environment and the arguments still win over them; a value no build has is refused."""
    tuning_record(wg.TUNED, TWO_SIZES)                 # 4096^3: cluster 2, TMA store, 2 passes
    try:
        config.set_overrides(["WGMMA_CLUSTER=1", "WGMMA_C_PASSES=1"])
        build, source = wg.resolve_build(4096, 4096, 4096)
        assert build == {"cluster": 1, "tma_store": True, "c_passes": 1}
        assert "recorded build" in source and "--set WGMMA_CLUSTER=1" in source and "--set WGMMA_C_PASSES=1" in source
        monkeypatch.setenv("WGMMA_CLUSTER", "2")
        assert wg.resolve_build(4096, 4096, 4096)[0]["cluster"] == 2
        assert wg.resolve_build(4096, 4096, 4096, cluster=1)[0]["cluster"] == 1
        monkeypatch.delenv("WGMMA_CLUSTER")
        config.set_overrides(["WGMMA_TMA_STORE=0"])
        assert wg.resolve_build(4096, 4096, 4096)[0] == {"cluster": 2, "tma_store": False, "c_passes": 1}
        config.set_overrides(["WGMMA_CLUSTER=3"])
        with pytest.raises(ValueError, match="WGMMA_CLUSTER"):
            wg.resolve_build(4096, 4096, 4096)
    finally:
        config.set_overrides([])


def test_unreadable_record_falls_back_to_the_default(tuning_record, no_env):
    tuning_record(wg.TUNED, text="{not json")
    with pytest.warns(UserWarning, match="unreadable"):
        build, source = wg.resolve_build(64, 64, 64)
    assert build == wg.DEFAULT_BUILD and "unreadable" in source


def test_tuned_nearest_picks_by_log_size():
    entries = [{"shape": [4096] * 3, "v": 1}, {"shape": [8192] * 3, "v": 2}]
    assert tuned.nearest(entries, (1, 1, 1))["v"] == 1
    assert tuned.nearest(entries, (5700,) * 3)["v"] == 1          # below 4096 sqrt(2): log-nearer 4096^3
    assert tuned.nearest(entries, (5900,) * 3)["v"] == 2
    assert tuned.nearest(entries, (0, 5, 5))["v"] == 1            # an empty product counts as 1
    with pytest.raises(ValueError, match="entries"):
        tuned.nearest([], (1, 1, 1))


# The fake sweep's timings: the fastest build fails its sampled-row check, the next fails the awkward shapes, so the
# third fastest must win
FAKE_MS = {"cluster 1 tma-store": 0.5, "cluster 2 tma-store": 0.6, "cluster 1 tma-store 2 passes": 0.7,
           "cluster 2 tma-store 2 passes": 0.8, "cluster 2": 0.9, "cluster 1": 1.0, "cublas": 0.65}


@pytest.fixture
def fake_sweep(monkeypatch, tuning_record, no_env):
    """tune_wgmma's GPU calls replaced: inputs on the CPU, gemm_wgmma and the checks recorders, steady rounds that
    run every contender once and hand back FAKE_MS."""
    torch = pytest.importorskip("torch")
    calls, state = [], {}

    def fake_gemm(a, b, out=None, *, b_kmajor=None, cluster=None, tma_store=None, c_passes=None):
        state["last"] = wg.build_label({"cluster": cluster, "tma_store": tma_store, "c_passes": c_passes})
        calls.append(state["last"])
        return out

    def fake_steady(fns, rounds, **kw):
        for f in fns.values():
            f()
        ms = {k: FAKE_MS[k.removeprefix("wgmma ")] for k in fns}
        return {k: bench.Timing(v, v, v, v, 1, "fake") for k, v in ms.items()}, rounds, True

    ok = check.Comparison(True, 0.0, 0.0, 0, 1, "ok")
    bad = check.Comparison(False, 1.0, 1.0, 1, 1, "1 wrong")
    monkeypatch.setattr(arrays, "device_randn", lambda shape, dtype, seed: torch.zeros(shape, dtype=torch.bfloat16))
    monkeypatch.setattr(wg, "gemm_wgmma", fake_gemm)
    monkeypatch.setattr(wg, "verify_sample", lambda *a, **k: bad if state["last"] == "cluster 1 tma-store" else ok)
    monkeypatch.setattr(bench, "steady", fake_steady)
    monkeypatch.setattr(bench_wgmma, "_wgmma_edge_check",
                        lambda build: "33x70x13 bfloat16" if build["cluster"] == 2 else "")
    monkeypatch.setattr(bench_wgmma, "_free", lambda: None)
    return calls


def test_tune_sweep_times_every_build_and_keeps_the_fastest_correct(fake_sweep):
    rows, winners = bench_wgmma.tune_wgmma(sizes=(256, 512), rounds=1)
    labels = {wg.build_label(b) for b in wg.builds()}
    assert set(fake_sweep) == labels and len(fake_sweep) == 2 * 2 * len(labels)     # checked, then timed, per size
    for n in ("256^3", "512^3"):
        mine = [r for r in rows if r["size"] == n]
        assert {r["build"] for r in mine} == labels
        assert [r["build"] for r in mine if r.get("winner")] == ["cluster 1 tma-store 2 passes"]
        res = {r["build"]: r["result"] for r in mine}
        assert res["cluster 1 tma-store"].startswith("WRONG RESULT")
        assert res["cluster 2 tma-store"].startswith("fast but WRONG on 33x70x13")
    assert wg.check_winners(winners) == [
        {"shape": [n] * 3, "build": {"cluster": 1, "tma_store": True, "c_passes": 2}} for n in (256, 512)]


def test_tune_records_the_winner_where_gemm_wgmma_reads_it(fake_sweep, tmp_path, monkeypatch, capsys):
    """The wgmma half of --tune writes its record beside the mma.sync one; the next call of resolve_build (after
    tuned.forget) runs the winner. The record lands in the temporary root the tuning_record fixture set up."""
    monkeypatch.setattr(wg, "unavailable_reason", lambda: None)
    # on a GPU machine the real properties with the arch replaced (gpu_slug and the record's metadata read them)
    fake = dataclasses.replace(device.info(), arch="sm_90") if device.has_gpu() else SimpleNamespace(arch="sm_90")
    monkeypatch.setattr(device, "info", lambda *a: fake)
    out_dir = tmp_path / "results" / device.gpu_slug()
    ctx = SimpleNamespace(args=SimpleNamespace(json=True), out_dir=str(out_dir))
    tables = []
    assert bench_wgmma.wgmma_tune_and_record(ctx, tables, sizes=(256, 512), rounds=1) is True
    assert (out_dir / (wg.TUNED + ".json")).exists() and tables and "wgmma" in tables[0][2]
    assert "--tune wgmma winners: 256x256x256: cluster 1 tma-store 2 passes" in capsys.readouterr().out
    build, source = wg.resolve_build(300, 300, 300)
    assert build == {"cluster": 1, "tma_store": True, "c_passes": 2} and "winner at 256x256x256" in source


def test_lab_variants_name_their_builds_and_the_plain_one_follows_the_record(tuning_record, no_env, fake_host):
    """The lab's fixed-build variants measure the same build whatever the record says; 'cuda 03 wgmma+TMA' is the
    build a user gets by default (the record's)."""
    torch = pytest.importorskip("torch")
    tuning_record(wg.TUNED, TWO_SIZES)
    a, b = torch.zeros((300, 520), dtype=torch.bfloat16), torch.zeros((520, 264), dtype=torch.bfloat16)
    for fn in (tc.gemm_wgmma_tma, tc.gemm_wgmma_cluster, tc.gemm_wgmma_tma_store, tc.gemm_wgmma_cluster_tma_store):
        fn(a, b)
    assert fake_host == [(2, True, 2), (2, False, 1), (1, True, 1), (2, True, 1)]


def test_tune_skips_the_wgmma_sweep_off_hopper(monkeypatch, capsys):
    monkeypatch.setattr(wg, "unavailable_reason", lambda: "this GPU is sm_80")
    monkeypatch.setattr(bench_wgmma, "tune_wgmma", lambda *a, **k: pytest.fail("swept off sm_90"))
    tables = []
    ctx = SimpleNamespace(args=SimpleNamespace(json=True), out_dir="/nonexistent")
    assert bench_wgmma.wgmma_tune_and_record(ctx, tables) is True
    assert tables == [] and "wgmma + TMA builds not swept: this GPU is sm_80" in capsys.readouterr().out
