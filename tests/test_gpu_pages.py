"""The generated pages about GPUs: "what runs on your GPU" (GPUS.md, GPUS.ko.md, from the labs' plans) is current, and
the READMEs show the committed results of every GPU side by side (tools/readme_tables.py's gpus block)."""
import json
import os

from tools import gpu_matrix
from tools import readme_tables as rt

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_plan_on_every_gpu_and_the_page_it_writes():
    """Every lab's plan on every profile (worked out once): every variant accounted for (it runs, or a one-line
    reason), every launch belongs to a variant that runs and has a grid and a block; and GPUS.md / GPUS.ko.md are what
    `python -m tools.gpu_matrix` writes from these plans now (like readme_tables --check)."""
    from common import lab

    profs, labs, table = gpu_matrix.plans()
    for lb in labs:
        mod = lab.lab_module(lb["phase"], lb["name"])
        for slug in profs:
            p = table[(lb["module"], slug)]
            assert len(p.variants) == len(getattr(mod, "VARIANTS", [])) + len(getattr(mod, "PEERS", []))
            for v in p.skipped:
                assert v.why and "\n" not in v.why, f"{slug}: {lb['num']} {v.name} is skipped without a one-line reason"
            for x in p.launches:
                assert x.variant in p.running or not x.variant, f"{slug}: a launch of {x.variant}, which does not run"
                assert x.grid and x.threads, f"{slug}: {x.kernel} has no grid or block"
    for lang, name in gpu_matrix.PAGES.items():
        want = gpu_matrix.page(lang, profs, labs, table)
        have = open(os.path.join(ROOT, name), encoding="utf-8").read()
        assert have == want, f"{name} is out of date: run python -m tools.gpu_matrix"


def test_the_gpu_page_names_every_profile_and_lab():
    from common import device

    text = open(os.path.join(ROOT, "GPUS.md"), encoding="utf-8").read()
    ko = open(os.path.join(ROOT, "GPUS.ko.md"), encoding="utf-8").read()
    for slug in device.profiles():
        assert f"`{slug}`" in text and f"`{slug}`" in ko
    for lab in rt.labs():
        assert f"| {lab['num']} |" in text and f"| {lab['num']} |" in ko
    # the Hopper-only rungs cannot run on Blackwell, and the page says why
    assert "### NVIDIA B200" in text and "sm_90a" in text.split("### NVIDIA B200")[1].split("###")[0]


def _fake_results(root, gpu: str, name: str, ratio: float, case: str = "4096^3"):
    d = os.path.join(root, "results", gpu)
    os.makedirs(d, exist_ok=True)
    doc = {"gpu": name, "rows": [], "headline": {"case": case, "ours": "ours", "peer": "cuBLAS", "ratio": ratio}}
    with open(os.path.join(d, "phase2_lab08_sgemm.json"), "w") as f:
        json.dump(doc, f)


def test_the_readme_shows_every_gpu_side_by_side(tmp_path, monkeypatch):
    monkeypatch.setattr(rt, "ROOT", str(tmp_path))
    monkeypatch.setattr(rt, "labs", lambda: [{"num": "2.8", "stem": "phase2_lab08_sgemm", "name": "lab08_sgemm"}])
    _fake_results(tmp_path, "h200", "NVIDIA H200", 0.88)
    assert "Only one GPU" in rt.gpus_block("en")
    _fake_results(tmp_path, "h100-80gb-hbm3", "NVIDIA H100 80GB HBM3", 0.91, case="2048^3")
    _fake_results(tmp_path, "h200-quick", "NVIDIA H200", 0.5)          # quick runs are never shown
    text = rt.gpus_block("en")
    head = text.splitlines()[0]
    assert head.index("NVIDIA H200") < head.index("NVIDIA H100 80GB HBM3")   # the README's GPU first
    row = next(ln for ln in text.splitlines() if ln.startswith("| 2.8 |"))
    assert "**0.88**" in row and "**0.91** (2048^3)" in row and "0.5" not in row
    # header, separator and rows have the same cells (the header once ran 'headline case' into the first GPU's name)
    assert head.startswith("| lab | headline case | NVIDIA H200 |")
    assert {ln.count("|") for ln in text.splitlines()[:3]} == {5}
    assert "GPUS.ko.md" in rt.gpus_block("ko")
    # a GPU whose folder holds no lab's headline (only a training-step file, say) gets no column of dashes
    d = os.path.join(tmp_path, "results", "a100-sxm4-80gb")
    os.makedirs(d)
    with open(os.path.join(d, "phase4_lab07_transformer_block_train.json"), "w") as f:
        json.dump({"gpu": "NVIDIA A100-SXM4-80GB", "rows": []}, f)
    head = rt.gpus_block("en").splitlines()[0]
    assert head.startswith("| lab |") and "A100" not in head
