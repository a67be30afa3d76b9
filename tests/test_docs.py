"""The READMEs: generated from the code and results/h200/, the Korean guide in step with the English one, every link
and image present, and every command they show parses as written (issue 10)."""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys

import pytest

from common import device
from tests.helpers import PHASES, parser_of
from tools import readme_tables as rt
from tools import regenerate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EN, KO = os.path.join(ROOT, "README.md"), os.path.join(ROOT, "README.ko.md")
PHASE_READMES = [os.path.join(ROOT, p, "README.md") for p in PHASES]
RESULTS_PAGE = os.path.join(ROOT, "results", rt.README_GPU, "README.md")
DOCS = [EN, KO] + PHASE_READMES


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _block(text: str, name: str) -> str:
    m = re.search(rf"<!-- {re.escape(name)}:start -->\n(.*?)<!-- {re.escape(name)}:end -->", text, re.S)
    assert m, f"no {name} block"
    return m.group(1)


# ---------------------------------------------------------------------------------------------------------------------
# Generated, not typed
# ---------------------------------------------------------------------------------------------------------------------
def test_generated_files_are_current(capsys):
    """README.md, README.ko.md, the phase guides and results/h200/README.md are what the generator writes now."""
    assert rt.main(["--check"]) == 0, capsys.readouterr().err


def test_every_lab_has_a_row_and_an_answer_block():
    labs = rt.labs()
    assert len(labs) >= 18
    en = _read(EN)
    for lab in labs:
        assert f"`python -m {lab['module']}`" in _block(en, "labs")
        guide = _read(os.path.join(ROOT, lab["phase"], "README.md"))
        assert f"<!-- answer-{lab['name']}:start -->" in guide, f"{lab['phase']}/README.md lacks {lab['name']}"
        assert f"python -m {lab['module']}" in guide


def test_headline_rows_come_from_the_results():
    """Each headline row's ratio is the one recorded in results/h200/<lab>.json (a target's ratio or a row pair)."""
    docs = rt.load_results(rt.README_GPU)
    table = _block(_read(EN), "headline")
    measured = [lab for lab in rt.labs() if lab["stem"] in docs]
    assert measured, "no committed H200 results"
    for lab in measured:
        h = rt.headline(docs[lab["stem"]], lab["stem"])
        if h is None:
            continue
        line = next(ln for ln in table.splitlines() if ln.startswith(f"| {lab['num']} |"))
        assert f"**{rt._fmt(h['ratio'])}**" in line
    # the 2.7 softmax headline is its issue target: cuda 05 vs torch.compile at 32768 x 4096 fp32
    sm = rt.headline(docs["phase2_lab07_softmax"], "phase2_lab07_softmax")
    assert sm["peer"] == "torch.compile" and sm["case"].startswith("32768x4096") and sm["ratio"] > 1.0
    assert rt.headline(docs["phase2_lab08_sgemm"], "phase2_lab08_sgemm")["case"] == "4096^3"


def test_results_page_matches_the_readme():
    """results/h200/README.md carries the same headline and targets rows as README.md."""
    page, en = _read(RESULTS_PAGE), _read(EN)
    for name in ("headline", "targets"):
        rows = [ln for ln in _block(en, name).splitlines() if ln.startswith("| ")]
        assert rows and all(r in page for r in rows), name


def test_headline_logic_on_synthetic_results():
    """Target-based, row-based, explicit and missing headlines; a page for another GPU says what is not measured."""
    by_target = {"targets": [
        {"case": "A", "variant": "peer itself", "ratio": 1.0, "met": None},
        {"case": "A", "variant": "slow", "ratio": 0.5, "target": ">= 0.4 x torch.foo", "met": True},
        {"case": "A", "variant": "fast", "ratio": 1.5, "target": ">= 1.2 x torch.foo", "met": True},
        {"case": "B", "variant": "other", "ratio": 9.0, "target": ">= 1", "met": True},
        {"target": "a prediction", "predicted": 2.0, "measured": 2.1, "met": True}]}
    h = rt.headline(by_target, "x")
    assert (h["case"], h["ours"], h["peer"], h["ratio"]) == ("A", "fast", "torch.foo", 1.5)
    rows = {"rows": [
        {"lab": "x", "variant": "k1", "impl": "cuda", "shape": [64], "dtype": "float32", "ms": 2.0},
        {"lab": "x", "variant": "lib", "impl": "peer", "shape": [64], "dtype": "float32", "ms": 1.0},
        {"lab": "x", "variant": "k1", "impl": "cuda", "shape": [4096], "dtype": "float32", "ms": 2.0},
        {"lab": "x", "variant": "k2", "impl": "triton", "shape": [4096], "dtype": "float32", "ms": 1.0},
        {"lab": "x", "variant": "lib", "impl": "peer", "shape": [4096], "dtype": "float32", "ms": 1.5},
        {"lab": "x", "variant": "phase 3 ours", "impl": "peer", "shape": [4096], "dtype": "float32", "ms": 0.1}]}
    h = rt.headline(rows, "x")
    assert (h["ours"], h["peer"], h["ratio"], h["case"]) == ("k2", "lib", 1.5, "2^12 float32")
    assert rt.headline({"rows": rows["rows"][:1]}, "x") is None
    explicit = dict(rows, headline={"case": "c", "ours": "o", "peer": "p", "ratio": 0.75})
    assert rt.headline(explicit, "x")["ratio"] == 0.75
    # a lab that records targets as rows (impl 'target'), and one whose target could not be measured
    as_rows = {"rows": [{"variant": "target vs torch.compile", "impl": "target", "shape": [4, 1024, 768],
                         "dtype": "bfloat16", "ratio": 1.1, "target": 1.05, "met": True}]}
    h = rt.headline(as_rows, "x")
    assert (h["peer"], h["case"], h["ratio"]) == ("torch.compile", "4x1024x768 bfloat16", 1.1)
    unmeasured = {"targets": [{"case": "c", "peer": "torch SDPA cuDNN", "target": ">= 0.9", "met": "not measured: x"}]}
    assert rt.headline(unmeasured, "x") is None
    assert rt.target_rows({"x": unmeasured})[0][6] == "not measured: x"
    first = rt.labs()[0]
    page = rt.results_page({first["stem"]: dict(rows, gpu="NVIDIA GeForce RTX 4090")}, "rtx-4090")
    assert page.startswith("# Results on NVIDIA GeForce RTX 4090")
    assert f"| {first['num']} | 2^12 float32 | k2 | lib | **1.5** |" in page
    assert "Not yet measured on this GPU:" in page and "Not measured yet" in page


def test_answer_block_prints_a_labs_facts():
    lab = rt.labs()[-1]
    doc = {"gpu": "G", "commit": "abc", "rows": [],
           "facts": [{"fact": "a ceiling", "value": 0.7472, "unit": "x"}, {"fact": "no number", "value": None}]}
    text = rt.answer_block(lab, {lab["stem"]: doc}, "h200", "../results/h200/")
    assert "- a ceiling: 0.747x." in text and "no number" not in text


def test_unmeasured_lab_says_so():
    lab = rt.labs()[-1]
    text = rt.answer_block(lab, {}, "h200", "../results/h200/")
    assert "Not yet measured" in text and f"python -m {lab['module']}" in text


# ---------------------------------------------------------------------------------------------------------------------
# The Korean guide follows the English one
# ---------------------------------------------------------------------------------------------------------------------
def _structure(text: str):
    anchors = re.findall(r'<a id="([\w-]+)"></a>', text)
    heads = [len(m) for m in re.findall(r"^(#{1,6}) ", text, re.M)]
    return anchors, heads, rt.block_names(text)


def test_korean_readme_has_the_same_sections():
    en, ko = _read(EN), _read(KO)
    assert _structure(ko) == _structure(en)
    assert re.search(r"[\uac00-\ud7a3]", ko), "README.ko.md has no Korean"
    for term in ("warp", "occupancy", "shared memory"):          # technical terms kept as engineers say them
        assert term in ko


def test_korean_tables_have_the_same_numbers():
    en, ko = _read(EN), _read(KO)
    for name in ("headline", "targets"):
        rows_en = [ln for ln in _block(en, name).splitlines() if ln.startswith("| ")][2:]
        rows_ko = [ln for ln in _block(ko, name).splitlines() if ln.startswith("| ")][2:]
        num = re.compile(r"[\d.,^e+-]*\d")
        assert [num.findall(r) for r in rows_en] == [num.findall(r) for r in rows_ko], name
    assert _block(en, "plots").count("![") == _block(ko, "plots").count("![")


# ---------------------------------------------------------------------------------------------------------------------
# Links, images, commands
# ---------------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", DOCS + [RESULTS_PAGE], ids=lambda p: os.path.relpath(p, ROOT))
def test_relative_links_and_images_exist(path):
    text, base = _read(path), os.path.dirname(path)
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+://", t) and not t.startswith("#")]
    missing = [t for t in local if t and not os.path.exists(os.path.normpath(os.path.join(base, t)))]
    assert not missing, missing


_CMD = re.compile(r"(?:^|`|\n|\$ )\s*((?:\.venv/bin/)?python3? (?:-m [\w.]+|tools/\w+\.py)[^`\n#]*|make \w+[^`\n#]*)")


def documented_commands() -> list[tuple[str, str]]:
    out = []
    for path in DOCS:
        for m in _CMD.finditer(_read(path)):
            out.append((os.path.relpath(path, ROOT), m.group(1).strip()))
    return sorted(set(out))


def _argv(cmd: str) -> list[str]:
    cmd = cmd.replace("<your-gpu>", "rtx-4090").replace("<gpu>", "h200")
    return shlex.split(cmd)


def _check_python(argv: list[str]) -> None:
    if argv[1] == "-m":
        module, args = argv[2], argv[3:]
        assert importlib.util.find_spec(module) is not None, f"no module {module}"
    else:
        script, args = argv[1], argv[2:]
        assert os.path.exists(os.path.join(ROOT, script)), f"no file {script}"
        module = script[:-3].replace("/", ".")
        if module == "tools.setup_env":        # installs packages: only check it takes the flags shown
            src = _read(os.path.join(ROOT, script))
            assert all(a in src for a in args if a.startswith("--"))
            return
    _parses(parser_of(module), args, " ".join(argv))


def _parses(p, args: list[str], cmd: str) -> None:
    try:
        p.parse_args(args)
    except SystemExit as e:                    # argparse exits 2 on a flag or value it does not accept
        pytest.fail(f"`{cmd}` does not parse (exit {e.code}): see the error above")


def _check_make(argv: list[str]) -> None:
    target = argv[1]
    mk = _read(os.path.join(ROOT, "Makefile"))
    assert re.search(rf"^{re.escape(target)}:", mk, re.M), f"no make target {target}"
    args = [a.split("=", 1)[1] for a in argv[2:] if a.startswith("ARGS=")]
    if args and target in ("run", "bench"):
        _parses(parser_of(PHASES[0]), shlex.split(args[0]), " ".join(argv))
    if args and target == "results":
        _parses(parser_of("tools.regenerate"), shlex.split(args[0]), " ".join(argv))


def test_commands_are_found():
    cmds = {c for _, c in documented_commands()}
    for must in ("make run", "make test", "python -m tools.regenerate --dry-run",
                 "python -m phase1_architecture.lab02_vector_add --quick --no-json --no-plot"):
        assert must in cmds, must


@pytest.mark.parametrize("where,cmd", documented_commands())
def test_documented_command_parses(where, cmd):
    argv = _argv(cmd)
    if argv[0] == "make":
        _check_make(argv)
    else:
        _check_python(argv)


def _run(*args, timeout=120):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_regenerate_dry_run_lists_every_lab():
    r = _run("-m", "tools.regenerate", "--dry-run")
    assert r.returncode == 0, r.stderr
    for lab in rt.labs():
        assert f"python -m {lab['module']} --bench --out results/" in r.stdout
    assert "tools/readme_tables.py --gpu" in r.stdout
    only = [lab["module"] for lab in regenerate.select(rt.labs(), ["2.7", "phase3"])]
    assert only[0] == "phase2_cuda.lab07_softmax" and all(m.startswith("phase3") for m in only[1:]) and len(only) > 1


@pytest.mark.skipif(device.has_gpu(), reason="checks the no-GPU path")
def test_regenerate_without_gpu_says_so_and_exits_2():
    r = _run("-m", "tools.regenerate", "--quick")
    assert r.returncode == 2
    assert "needs a CUDA GPU" in r.stderr and r.stderr.count("\n") == 1
