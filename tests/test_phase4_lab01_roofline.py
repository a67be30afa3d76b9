"""Lab 4.1 (roofline): placement with exact known answers, the recorded H200 results, the k-FMA kernel, the CLI, the
plot redrawn from the committed JSON."""
import argparse
import dataclasses
import json
import os
import shutil

import numpy as np
import pytest

from common import arrays, bench, check, config, device, lab, plan, report
from phase4_optimization.lab01_roofline import bench as rlb
from phase4_optimization.lab01_roofline import lab as rl
from tests.helpers import H200, lab_main

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
interpreter_only = pytest.mark.skipif(device.has_gpu(), reason="interpreter test (host arrays); the GPU tier covers "
                                                               "the same on device")


@pytest.fixture()
def synthetic(tmp_path):
    """A results folder holding only the hand-made fixtures (a copy: the tool must never write into its input)."""
    folder = tmp_path / "results"
    folder.mkdir()
    for name in ("roofline_synthetic.json", "roofline_tuner.json"):
        shutil.copy(os.path.join(DATA, name), folder / name)
    return str(folder)


def _analyze(folder):
    rows, headers, gpu = rlb.load_rows(folder)
    ceil = rlb.resolve_ceilings(rows, headers, gpu, folder)
    placed, left = rlb.analyze(rows, ceil)
    return ceil, placed, left


def _find(placed, lab, variant, dtype="float32"):
    hits = [p for p in placed if p["lab"] == lab and p["variant"] == variant and p["dtype"] == dtype]
    assert len(hits) == 1, f"{lab} / {variant} / {dtype}: {len(hits)} placed rows"
    return hits[0]


# ---------------------------------------------------------------------------------------------------------------------
# Pure placement
# ---------------------------------------------------------------------------------------------------------------------
CEIL = rl.Ceilings(hbm_gbps=4000.0, peaks={"fp32": 50.0, "bf16": 800.0},
                   datasheet={"hbm_gbps": 5000.0, "fp32": 100.0, "bf16": 1000.0})


def test_place_memory_bound_exact():
    p = rl.place(4e9, 1e10, 2.0, "fp32", CEIL)
    assert p["ai"] == pytest.approx(2.5)
    assert p["achieved_gbps"] == pytest.approx(2000.0)
    assert p["achieved_tflops"] == pytest.approx(5.0)
    assert p["roof_tflops"] == pytest.approx(10.0)          # 2.5 FLOP/B x 4000 GB/s
    assert p["ridge"] == pytest.approx(12.5)                # 50 TFLOP/s / 4 TB/s
    assert p["bound"] == "memory"
    assert p["frac_roof"] == pytest.approx(0.5)
    assert p["frac_datasheet_roof"] == pytest.approx(5.0 / 12.5)   # min(100, 2.5 x 5000 GB/s)


def test_place_compute_bound_exact_and_ridge_edges():
    p = rl.place(1e8, 1e10, 1.0, "fp32", CEIL)
    assert (p["ai"], p["roof_tflops"], p["bound"]) == (pytest.approx(100.0), pytest.approx(50.0), "compute")
    assert p["frac_roof"] == pytest.approx(0.2)
    # the tensor-core ridge is 200 FLOP/B: the same AI is memory-bound on that unit
    q = rl.place(1e8, 1e10, 1.0, "bf16", CEIL)
    assert q["bound"] == "memory" and q["roof_tflops"] == pytest.approx(400.0)
    # exactly at the ridge: both roofs agree
    r = rl.place(1e9, 12.5e9, 1.0, "fp32", CEIL)
    assert r["roof_tflops"] == pytest.approx(50.0) and r["bound"] == "compute"


def test_place_without_flops_uses_hbm_and_rejects_bad_time():
    p = rl.place(3e9, None, 1.0, "fp32", CEIL)
    assert p["bound"] == "memory (no FLOPs)" and p["frac_roof"] == pytest.approx(0.75) and p["ai"] is None
    assert rl.place(3e9, 0.0, 1.0, "fp32", CEIL)["ai"] == 0.0
    with pytest.raises(ValueError, match="ms"):
        rl.place(1e9, 1e9, 0.0, "fp32", CEIL)


def test_units_follow_dtype_and_lab():
    assert rl.unit_for("phase3_lab02_matmul", "triton matmul", "bfloat16") == "bf16"
    assert rl.unit_for("phase3_lab02_matmul", "cuBLAS", "tf32") == "tf32"
    assert rl.unit_for("phase3_lab02_matmul", "triton matmul", "float32") == "fp32"
    assert rl.unit_for("phase2_lab07_softmax", "triton online", "bfloat16") == "fp32"   # CUDA-core math
    assert rl.unit_for("phase4_lab03_tensor_cores", "cuda 01 wmma", "float16") == "fp16"


# ---------------------------------------------------------------------------------------------------------------------
# The synthetic results folder: every kind of row, exact answers
# ---------------------------------------------------------------------------------------------------------------------
def test_synthetic_ceilings_come_from_the_rows(synthetic):
    ceil, _, _ = _analyze(synthetic)
    assert ceil.hbm_gbps == 4000.0                       # highest ceiling_gbps recorded
    assert ceil.peaks["fp32"] == 50.0 and "cuBLAS" in ceil.sources["fp32"]
    assert ceil.peaks["bf16"] == 800.0
    assert ceil.peaks["fp16"] == 989 and "datasheet" in ceil.sources["fp16"]   # no measurement: named fallback
    assert ceil.peaks["fp8"] == 1979


def test_synthetic_placement_exact(synthetic):
    _, placed, left = _analyze(synthetic)
    lab = "phase9_lab01_synthetic"
    a = _find(placed, lab, "cuda 01 stream")
    assert a["shape"] == [1000000]                                       # the largest shape is the headline
    assert (a["ai"], a["roof_tflops"], a["bound"], a["frac_roof"]) == (
        pytest.approx(2.5), pytest.approx(10.0), "memory", pytest.approx(0.5))
    b = _find(placed, lab, "cuda 02 heavy")
    assert (b["ai"], b["roof_tflops"], b["bound"], b["frac_roof"]) == (
        pytest.approx(100.0), pytest.approx(50.0), "compute", pytest.approx(0.2))
    c = _find(placed, lab, "triton copy")
    assert c["bound"] == "memory (no FLOPs)" and c["frac_roof"] == pytest.approx(0.75)
    assert "FLOPs unknown" in c["counts"]
    m = _find(placed, "phase9_lab02_matmul", "triton matmul", "bfloat16")
    assert m["bytes"] == pytest.approx(2.2e7) and m["flops"] == pytest.approx(1.2e10)
    assert m["ai"] == pytest.approx(1.2e10 / 2.2e7) and m["unit"] == "bf16" and m["bound"] == "compute"
    assert m["frac_roof"] == pytest.approx(12.0 / 800.0) and "GEMM model" in m["counts"]
    s = _find(placed, lab + "_sweep", "stride 1")
    assert "best of 3" in s["note"]
    names = {(p["lab"], p["variant"]) for p in placed}
    assert ("phase9_lab03_other", "cuda C, phase 9 (cuda 01 stream)") not in names     # re-measurement dropped
    assert not any(p["variant"] in ("cuda 03 untimed", "shared memory probe", "stride 2", "stride 4")
                   for p in placed)
    whys = {r["variant"]: r["why"] for r in left if r.get("variant")}
    assert whys["cuda 03 untimed"] == "no time" and "shared" in whys["shared memory probe"]
    assert "sweep point" in whys["stride 4"] and "re-measures" in whys["cuda C, phase 9 (cuda 01 stream)"]
    assert _find(placed, lab, "torch.add")["impl"] == "peer"
    assert len(placed) == 8


def test_main_on_synthetic_folder(synthetic, tmp_path):
    out = tmp_path / "out"
    assert lab_main(rl)(["--quick", "--results", synthetic, "--out", str(out)]) == 0
    doc = json.loads((out / f"{rl.LAB}.json").read_text())
    # the synthetic folder's 8 points; on a GPU the lab also places its own k-FMA sweep, measured here
    placed = [r for r in doc["rows"] if r.get("kind") == "placed" and r.get("lab") != rl.LAB]
    assert len(placed) == 8 and doc["ceilings"]["hbm_gbps"] == 4000.0
    assert (out / f"{rl.LAB}.png").stat().st_size > 10_000
    assert sorted(os.listdir(synthetic)) == ["roofline_synthetic.json", "roofline_tuner.json"]   # input untouched


# ---------------------------------------------------------------------------------------------------------------------
# The recorded H200 results (read-only)
# ---------------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def h200():
    if not os.path.isdir(H200):
        pytest.skip("no results/h200 in this checkout")
    rows, headers, gpu = rlb.load_rows(H200)
    ceil = rlb.resolve_ceilings(rows, headers, gpu, H200)
    placed, left = rlb.analyze(rows, ceil, headers)
    return rows, ceil, placed, left


def test_h200_ceilings_match_the_files(h200):
    rows, ceil, _, _ = h200
    recorded = []
    for path in os.listdir(H200):
        if path.endswith(".json") and not path.startswith(rl.LAB):
            with open(os.path.join(H200, path)) as f:
                doc = json.load(f)
            recorded += [r["ceiling_gbps"] for r in doc.get("rows", []) if isinstance(r, dict)
                         and isinstance(r.get("ceiling_gbps"), (int, float))]
    if not os.path.exists(os.path.join(H200, rl.CEILINGS_FILE)):
        assert ceil.hbm_gbps == pytest.approx(max(recorded))
        with open(os.path.join(H200, "phase2_lab08_sgemm.json")) as f:
            sgemm = json.load(f)["rows"]
        cublas = max(r["tflops"] for r in sgemm if r.get("variant") == "cuBLAS (cupy)")
        assert ceil.peaks["fp32"] == pytest.approx(cublas)
    assert 3000 < ceil.hbm_gbps < 5000 and 30 < ceil.peaks["fp32"] < 70 and 500 < ceil.peaks["bf16"] < 1000


def test_h200_every_kernel_is_placed_once_and_labelled(h200):
    _, _, placed, _ = h200
    keys = [(p["lab"], p["variant"], p["dtype"], p["impl"]) for p in placed]
    assert len(keys) == len(set(keys))
    for p in placed:
        assert p["bound"] and p["frac_roof"] is not None and p["frac_roof"] > 0, p
        if p["sweep"]:   # the k-FMA chain may beat cuBLAS SGEMM (the measured fp32 roof), never the datasheet FFMA peak
            assert p["frac_datasheet_roof"] <= 1.05, p
        else:
            assert p["frac_roof"] < 1.2, p      # nobody runs far above a measured roof
    labs = {p["lab"].split("_")[0] + "_" + p["lab"].split("_")[1] for p in placed}
    assert {"phase1_lab02", "phase2_lab06", "phase2_lab08", "phase3_lab02", "phase3_lab04"} <= labs


def test_h200_known_kernels_land_where_their_counts_say(h200):
    _, ceil, placed, _ = h200
    g = _find(placed, "phase2_lab08_sgemm", "cuda 11 autotuned")
    n = g["shape"][0]
    assert g["ai"] == pytest.approx(n / 6)                     # 2 n^3 / (3 n^2 x 4 B)
    assert g["unit"] == "fp32" and g["bound"] == "compute" and g["roof_tflops"] == pytest.approx(ceil.peaks["fp32"])
    r = _find(placed, "phase2_lab06_reduction", "cuda 07 float4 grid-stride, 2 passes")
    assert r["ai"] == pytest.approx(0.25, rel=1e-6) and r["bound"] == "memory"   # (n - 1) adds over 4 n bytes
    assert r["roof_tflops"] == pytest.approx(r["ai"] * ceil.hbm_gbps / 1e3)
    t = _find(placed, "phase3_lab02_matmul", "triton matmul", "bfloat16")
    assert t["unit"] == "bf16" and t["bound"] == "compute" and "GEMM model" in t["counts"]
    s = _find(placed, "phase2_lab07_softmax", "cuda 05 registers, 16-byte loads", "bfloat16")
    assert s["unit"] == "fp32" and s["bound"] == "memory"
    lay = _find(placed, "phase3_lab04_layernorm", "triton fwd")
    assert "layernorm model" in lay["counts"] and lay["bound"] == "memory"
    assert not any(p["variant"].startswith("registers") or p["variant"].startswith("shared memory") for p in placed)


# ---------------------------------------------------------------------------------------------------------------------
# The k-FMA kernel
# ---------------------------------------------------------------------------------------------------------------------
@interpreter_only
@pytest.mark.parametrize("n,k", [(1, 0), (1, 5), (1025, 2), (3001, 17)])
def test_fma_chain_matches_reference(n, k):
    (x, kk) = rl.make_inputs((n, k), "float32", check.rng(400 + n + k), "cpu")
    out = check.poisoned((n,), "float32", x)
    res = rl.fma_chain(x, kk, out=out)
    check.assert_close(res, rl.reference(arrays.to_numpy(x), kk), "float32", what=f"n={n} k={k}")


def test_fma_chain_counts_and_reference():
    assert rl.sweep_counts(1000, 64) == (8000.0, 128000.0)      # AI = k / 4
    x = np.array([0.0, 1.0, -2.0])
    np.testing.assert_allclose(rl.reference(x, 0), x)
    np.testing.assert_allclose(rl.reference(x, 2), (x * 0.9375 + 0.0625) * 0.9375 + 0.0625)


@interpreter_only
def test_fma_chain_validates_before_launch():
    x = np.zeros(8, np.float32)
    with pytest.raises(TypeError, match="k"):
        rl.fma_chain(x, 2.0)
    with pytest.raises(ValueError, match="k"):
        rl.fma_chain(x, -1)
    with pytest.raises(TypeError, match="x"):
        rl.fma_chain(x.astype(np.float64), 1)
    with pytest.raises(ValueError, match="x"):
        rl.fma_chain(np.zeros((2, 4), np.float32), 1)
    with pytest.raises(ValueError, match="x"):
        rl.fma_chain(np.zeros(0, np.float32), 1)
    with pytest.raises(ValueError, match="out"):
        rl.fma_chain(x, 1, out=np.zeros(7, np.float32))


# ---------------------------------------------------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------------------------------------------------
def test_help(capsys):
    with pytest.raises(SystemExit) as e:
        lab_main(rl)(["--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "--quick" in out and "--results" in out and "--measure" in out


def test_main_quick_writes_png_and_json(tmp_path):
    assert lab_main(rl)(["--quick", "--results", H200, "--out", str(tmp_path)]) == 0
    png = tmp_path / f"{rl.LAB}.png"
    assert png.stat().st_size > 20_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    doc = json.loads((tmp_path / f"{rl.LAB}.json").read_text())
    assert len([r for r in doc["rows"] if r.get("kind") == "placed"]) > 50
    assert doc["left_out"]


# ---------------------------------------------------------------------------------------------------------------------
# GPU tier
# ---------------------------------------------------------------------------------------------------------------------
def test_ceilings_round_trip_through_the_json():
    back = rl.Ceilings.from_dict(CEIL.as_dict())
    assert (back.hbm_gbps, back.peaks, back.datasheet) == (CEIL.hbm_gbps, CEIL.peaks, CEIL.datasheet)
    assert back.ridge("fp32") == CEIL.ridge("fp32") and back.ridge("bf16", datasheet=True) == pytest.approx(200.0)


def test_lab_sources_are_found_in_folders_and_flat():
    """roofline_counts hooks are looked up in a lab's folder (lab.py, bench.py) or its flat module."""
    files = rl._lab_module_files("phase4_lab01_roofline")
    assert [os.path.basename(f) for f in files] == ["lab.py", "bench.py"]
    assert rl._lab_module_files("phase9_lab01_synthetic") == [] and rl._lab_module_files("no lab") == []
    assert rl._lab_hook("phase4_lab01_roofline") is None      # this lab defines none


def test_replot_redraws_the_committed_plot(tmp_path):
    """--replot draws from the committed JSON alone: the same placement, the same figure."""
    if not os.path.exists(os.path.join(H200, f"{rl.LAB}.json")):
        pytest.skip("no committed roofline JSON")
    assert lab_main(rl)(["--replot", H200, "--out", str(tmp_path)]) == 0
    png = tmp_path / f"{rl.LAB}.png"
    assert png.stat().st_size > 100_000 and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(H200, f"{rl.LAB}.json")) as f:
        data = json.load(f)
    assert data.get("roof", "measured") == "measured"          # JSON written before the field existed: the default
    assert [p["variant"] for p in data["rows"] if p.get("kind") == "placed"]


def _committed_roofline() -> dict:
    path = os.path.join(H200, f"{rl.LAB}.json")
    if not os.path.exists(path):
        pytest.skip("no committed roofline JSON")
    with open(path) as f:
        return json.load(f)


def test_roofline_names_each_labs_headline_pair_only():
    """The plot names one pair per lab - its headline kernel and its library peer, the README's choice - and nothing
    else; every other kernel is in the table and the JSON."""
    placed = [r for r in _committed_roofline()["rows"] if r.get("kind") == "placed"]
    named = rlb.named_points(placed)
    assert 10 <= len(named) and len({n["lab"] for n in named}) == len(named)
    for n in named:
        assert n["best"]["impl"] != "peer" and n["best"]["lab"] == n["lab"]
        assert n["peer"] is None or (n["peer"]["impl"] == "peer" and n["peer"]["lab"] == n["lab"])
    by_lab = {n["lab"]: n for n in named}
    assert by_lab["phase2_lab08_sgemm"]["best"]["variant"] == "cuda 11 autotuned"
    assert "cuBLAS" in by_lab["phase2_lab08_sgemm"]["peer"]["variant"]
    att = by_lab["phase4_lab06_attention"]                 # the flash kernel at the headline case, not the naive one
    assert att["best"]["variant"] == "triton flash fwd" and att["best"]["shape"] == [4, 32, 4096, 128]
    assert att["on_roofline"] and att["peer"]["variant"] == "torch SDPA cuDNN fwd"
    on_plot = [r["on_plot"] for r in rlb.table_rows(placed)]
    assert on_plot.count("named") + on_plot.count("listed") == sum(1 + (n["peer"] is not None) for n in named)
    assert set(on_plot) <= {"named", "listed", "sweep line", "table only"}


def test_roof_labels_merge_roofs_that_would_print_on_top_of_each_other():
    ceil = rl.Ceilings(hbm_gbps=4340.0, peaks={"fp32": 51.0, "tf32": 360.0, "bf16": 680.0, "fp16": 672.0,
                                                "fp8": 1305.0})
    assert rlb.roof_label_groups(ceil) == [["fp32"], ["tf32"], ["bf16", "fp16"], ["fp8"]]
    assert rlb.roof_label_groups(CEIL) == [["fp32"], ["bf16"]]


def test_roofline_plot_labels_overlap_nothing(tmp_path, monkeypatch):
    """Drawn from the committed JSON, the figure's names (one per named pair), roof labels, HBM label and legend do
    not overlap one another, the names stay inside the roofline's axes and the roof labels clear the right panel."""
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    data = _committed_roofline()
    figs = []
    monkeypatch.setattr(plt, "close", lambda fig=None: figs.append(fig))
    rlb.plot(data, str(tmp_path))
    fig = figs[-1]
    ax, axs = fig.axes[:2]
    r = fig.canvas.get_renderer()

    def box(t):                                  # the text alone (an annotation's own extent includes its leader)
        t.update_positions(r)
        return Text.get_window_extent(t, r)

    texts = [t for t in ax.texts if t.get_text()]
    placed = [p for p in data["rows"] if p.get("kind") == "placed"]
    labels = {rlb.point_label(n) for n in rlb.named_points(placed) if n["on_roofline"]}
    names = [t for t in texts if t.get_text() in labels]
    roofs = [t for t in texts if "TFLOP/s, ridge" in t.get_text()]
    assert len(names) == len(labels) and len(roofs) == 4          # one label a lab; bf16 / fp16 share one
    boxes = [box(t) for t in texts] + [ax.get_legend().get_window_extent(r)]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
    inside = ax.get_window_extent(r)
    assert all(inside.contains(*box(t).p0) and inside.contains(*box(t).p1) for t in names)
    panel_left = min(t.get_window_extent(r).x0 for t in axs.texts)
    assert max(box(t).x1 for t in roofs) < panel_left
    right = fig.bbox.x1                                    # the list of pairs stays inside the figure
    assert all(t.get_window_extent(r).x1 <= right for t in axs.texts)


@pytest.mark.gpu
def test_sweep_rows_on_gpu_are_placed():
    rows = rlb.run_sweep(ks=(1, 64), n=1 << 22, hbm_gbps=4000.0)
    assert [r["k"] for r in rows] == [1, 64] and all(r["kind"] == "sweep" and r["gbps"] > 0 for r in rows)
    placed, _ = rlb.analyze([dict(r, _file="x", _index=i) for i, r in enumerate(rows)], CEIL)
    assert len(placed) == 2 and sorted(p["ai"] for p in placed) == pytest.approx([0.25, 16.0])
    assert all(p["bound"] in ("memory", "compute") and p["frac_roof"] > 0 for p in placed)


# ---------------------------------------------------------------------------------------------------------------------
# Any GPU: the datasheet roofs from the GPU's description, a GPU without recorded results, the plan
# ---------------------------------------------------------------------------------------------------------------------
def test_datasheet_roofs_come_from_the_gpu_description():
    """The roofs before any measurement are the table's figures of the GPU named (fp8 included where it has one); a
    unit the GPU lacks is left out, and a card the table does not know has none."""
    for slug in device.profiles():
        gpu = device.profile_info(slug)
        ds, src = rl.datasheet_of(gpu)
        assert ds["hbm_gbps"] == gpu.peak("hbm_gbps") and ds["fp32"] == gpu.peak("fp32_tflops"), slug
        assert ds.get("fp8") == gpu.peak("fp8_tflops") and ds.get("bf16") == gpu.peak("bf16_tflops"), slug
        assert rl.datasheet_for(gpu.name) == (ds, src) and gpu.name in src
    t4, _ = rl.datasheet_of(device.profile_info("t4"))
    assert "bf16" not in t4 and "fp8" not in t4 and t4["fp16"] > 0
    assert rl.datasheet_for("NVIDIA Imaginary GPU") == ({}, "")


def _sweep_rows(hbm_gbps: float, n: int = 1 << 24) -> list[dict]:
    """k-FMA sweep rows as a GPU run writes them (report.row), with made-up times: memory-bound at small k."""
    out = []
    for k in (1, 4, 16, 64, 256, 1024):
        nbytes, flops = rl.sweep_counts(n, k)
        ms = max(nbytes / (0.9 * hbm_gbps * 1e6), flops / 20e9)
        out.append(report.row(rl.LAB, f"triton fma chain k={k}", "triton", (n,), "float32", None, ceiling_gbps=hbm_gbps,
                              kind="sweep", k=k, ai=flops / nbytes, ms=ms, gbps=nbytes / (ms * 1e6),
                              tflops=flops / (ms * 1e9)))
    return out


def test_quick_benchmark_on_a_gpu_without_recorded_results_plots(tmp_path, monkeypatch):
    """The quick benchmark on a GPU that has no results/<gpu>/ folder (any learner's GPU before its other labs ran):
    its own k-FMA sweep is placed on its own roofs (this run's HBM ceiling, the datasheet's compute peaks), the meta has
    the roofs, and the plot is drawn and says what is missing - where it once raised KeyError: 'ceilings'."""
    gpu = dataclasses.replace(device.profile_info("rtx-4090"), simulated=False)     # as if read off the device
    assert not os.path.isdir(os.path.join(report.ROOT, "results", gpu.slug))
    monkeypatch.setattr(device, "has_gpu", lambda: True)
    monkeypatch.setattr(device, "info", lambda device_id=0: gpu)
    monkeypatch.setattr(bench, "ceilings", lambda refresh=False: {"hbm_gbps": 900.0, "hbm_method": "test copy"})
    monkeypatch.setattr(rlb, "run_sweep", lambda ks, n, hbm: _sweep_rows(hbm, n))
    args = argparse.Namespace(quick=True, measure=False, sweep=True, results=None, roof="measured", json=False,
                              plot=True, arch=gpu.arch, out=str(tmp_path))
    res = rlb.benchmark(lab.Context(args=args, out_dir=str(tmp_path)))
    ceil = res.meta["ceilings"]
    assert ceil["hbm_gbps"] == 900.0 and "measured in this run" in ceil["sources"]["hbm"]
    assert ceil["peaks_tflops"]["fp32"] == gpu.peak("fp32_tflops") and "datasheet" in ceil["sources"]["fp32"]
    assert res.meta["results_dir"] is None and any(gpu.slug in m for m in res.meta["missing"])
    placed = [r for r in res.rows if r.get("kind") == "placed"]
    assert len(placed) == 6 and all(p["lab"] == rl.LAB and p["sweep"] for p in placed)
    assert {t["case"][:22] for t in res.meta["targets"]} == {"k-FMA sweep, k <= 8 (A", "k-FMA sweep, k >= 512 "}
    paths = rlb.plot(dict(res.meta, rows=res.rows, gpu=gpu.name), str(tmp_path))       # what run() then does
    assert paths and os.path.getsize(paths[0]) > 20_000


def test_plot_without_roofs_in_the_json_rebuilds_them(tmp_path, capsys):
    """A JSON with rows and no 'ceilings' (no measured roofs recorded): the roofs are rebuilt from the rows' measured
    HBM ceiling and the datasheet of the GPU it names; with neither, the lab says why it draws nothing."""
    rows = _sweep_rows(1000.0)
    paths = rlb.plot({"rows": rows, "gpu": device.profile_info("l4").name}, str(tmp_path))
    assert len(paths) == 1 and os.path.getsize(paths[0]) > 20_000
    bare = [dict(r, ceiling_gbps=None) for r in rows]
    assert rlb.plot({"rows": bare, "gpu": "NVIDIA Imaginary GPU"}, str(tmp_path)) == []
    assert "no roofline drawn" in capsys.readouterr().out


def test_ceilings_without_results_fall_back_to_the_gpu_description():
    """No results, no measurement: the datasheet's roofs; a card not in the table: HBM from its clock and bus, no
    compute roof, and a note that says so."""
    gpu = device.profile_info("a100")
    ceil = rlb.resolve_ceilings([], [], gpu.name, None, gpu=gpu)
    assert ceil.hbm_gbps == gpu.peak("hbm_gbps") and ceil.peaks["tf32"] == gpu.peak("tf32_tflops")
    assert "fp8" not in ceil.peaks                           # the A100 has no fp8 tensor cores
    odd = dataclasses.replace(gpu, name="NVIDIA Imaginary GPU", datasheet={})
    ceil = rlb.resolve_ceilings([], [], odd.name, None, gpu=odd)
    assert ceil.hbm_gbps == pytest.approx(odd.theoretical_gbps) and not ceil.peaks
    assert "clock" in ceil.sources["hbm"] and any("no datasheet entry" in n for n in ceil.notes)


def test_plan_on_two_gpus():
    """The sweep's one kernel on a T4 and an H200: the same tile, the grid of the same n (it fits both), and the
    predictions from each GPU's description (the fp32 ridge decides where the sweep leaves the memory roof)."""
    config.set_overrides([])
    t4, h200 = device.profile_info("t4"), device.profile_info("h200")
    for gpu in (t4, h200):
        p = plan.make(rl, rlb, gpu)
        (x,) = p.launches
        assert x.kernel == "fma_chain_kernel" and x.grid == (rl.SWEEP_N // rl.BLOCK,) and x.threads == 128
        assert x.config_source == "default" and p.running == ["triton fma chain"]
    pt, ph = rlb.predict(t4), rlb.predict(h200)
    assert "ridge point, bf16 tensor cores" not in pt and "ridge point, fp16 tensor cores" in pt
    assert ph["ridge point, fp8 tensor cores"].startswith(f"{1979e3 / 4800:.1f} FLOP/B")
    assert pt["k-FMA sweep leaves the HBM roof near (k = 4 x fp32 ridge)"] == f"k ~ {4 * 8.1e3 / 320:.0f}"


def test_set_changes_the_kernel_tile_and_says_so():
    config.set_overrides(["BLOCK=2048", "num_warps=8"])
    try:
        (x,) = rl.launches(device.profile_info("l4"))
        assert x.defines == {"BLOCK": 2048} and x.num_warps == 8 and x.grid == (rl.SWEEP_N // 2048,)
        assert "--set BLOCK=2048" in x.config_source and "--set num_warps=8" in x.config_source
        config.set_overrides(["BLOCK=1000"])
        with pytest.raises(ValueError, match="BLOCK"):
            rl.fma_config()
    finally:
        config.set_overrides([])

