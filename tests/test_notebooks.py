"""The course notebooks (notebooks/): one per phase, each phaseN.py (jupytext percent format, the source) paired with
the phaseN.ipynb built from it (`python -m notebooks`), each with its "Open in Colab" badge, running every lab of its
phase and showing a committed H200 plot; and each one executes top to bottom in CPU mode (marked slow: about a minute
a notebook on two cores, most of it lab 4.6's compiles)."""
import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import PHASES

jupytext = pytest.importorskip("jupytext", reason="jupytext is not installed: run `make setup`")
nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed: run `make setup`")

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SOURCES = sorted(NOTEBOOKS.glob("phase*.py"))
CELL_TIMEOUT_S = 600  # one lab on a loaded two-core machine; lab 4.6 takes about a minute


def _code_cells(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _calls(source: str, name: str) -> list[list]:
    """The literal arguments of every call to `name` in the notebook's code."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name:
            out.append([ast.literal_eval(a) for a in node.args])
    return out


def _status_of(*paths) -> str:
    """`git status` of these folders only (other folders may be edited while a notebook runs)."""
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", *paths], cwd=ROOT,
                          capture_output=True, text=True, timeout=60).stdout


def test_one_notebook_per_phase():
    assert [p.name for p in SOURCES] == [f"phase{i}.py" for i in range(1, len(PHASES) + 1)]


@pytest.mark.parametrize("py", SOURCES, ids=lambda p: p.stem)
def test_ipynb_pairs_with_its_source(py):
    """jupytext's reading of the .py and the committed .ipynb have the same cells, the code cells letter for letter."""
    ipynb = py.with_suffix(".ipynb")
    assert ipynb.exists(), f"{ipynb.name} is missing: run python -m notebooks"
    src, built = jupytext.read(py), nbformat.read(ipynb, as_version=4)
    nbformat.validate(built)
    assert _code_cells(built) == _code_cells(src), f"{ipynb.name}'s code differs from {py.name}: python -m notebooks"
    assert [c.cell_type for c in built.cells] == [c.cell_type for c in src.cells]
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in built.cells if c.cell_type == "code"), f"{ipynb.name} is committed with outputs"


def test_build_check_passes_and_writes_nothing():
    before = {p: p.stat().st_mtime_ns for p in NOTEBOOKS.iterdir()}
    r = subprocess.run([sys.executable, "-m", "notebooks", "--check"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert {p: p.stat().st_mtime_ns for p in NOTEBOOKS.iterdir()} == before


def test_build_check_finds_a_stale_notebook(tmp_path, monkeypatch):
    from notebooks import build

    for py in SOURCES:
        (tmp_path / py.name).write_text(py.read_text(encoding="utf-8"), encoding="utf-8")
        (tmp_path / py.with_suffix(".ipynb").name).write_bytes(py.with_suffix(".ipynb").read_bytes())
    monkeypatch.setattr(build, "HERE", tmp_path)
    monkeypatch.setattr(build, "ROOT", tmp_path)
    assert build.main(["--check"]) == 0
    edited = tmp_path / "phase2.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# %%\nprint(1)\n", encoding="utf-8")
    assert build.main(["--check"]) == 1
    (tmp_path / "phase3.ipynb").unlink()
    assert build.main(["--check"]) == 1
    assert build.main(["--repo", "someone/gpu-course"]) == 0  # rebuilds, and names the repository everywhere
    assert build.main(["--check"]) == 0
    for py in sorted(tmp_path.glob("phase*.py")):
        assert build.repos_in(py.read_text(encoding="utf-8")) == {"someone/gpu-course"}


def test_every_notebook_names_one_repository_and_its_own_colab_address():
    repos = set()
    for py in SOURCES:
        text = py.read_text(encoding="utf-8")
        m = re.search(r'^GITHUB_REPO = "([^"]+)"', text, re.M)
        assert m, f"{py.name}: no GITHUB_REPO constant"
        repos.add(m.group(1))
        first = jupytext.read(py).cells[0]
        assert first.cell_type == "markdown"
        assert f"https://colab.research.google.com/github/{m.group(1)}/blob/main/notebooks/{py.stem}.ipynb" in \
            first.source, f"{py.name}: the first cell has no Open in Colab badge for {py.stem}.ipynb"
    assert len(repos) == 1, f"the notebooks name different repositories: {sorted(repos)}"


def test_the_set_up_cell_is_the_same_in_every_notebook():
    setups = {py.name: _code_cells(jupytext.read(py))[0] for py in SOURCES}
    assert len(set(setups.values())) == 1, "the first code cells differ: keep them identical (copy phase1's)"
    setup = next(iter(setups.values()))
    assert '"google.colab" in sys.modules' in setup and "from notebooks.helpers import run_lab, show" in setup
    assert len(setup.splitlines()) <= 20, "the set-up cell clones and imports; the rest belongs in notebooks/helpers.py"
    helpers = (NOTEBOOKS / "helpers.py").read_text(encoding="utf-8")
    assert 'ROOT / "requirements" / "cuda12.txt"' in helpers and '"--no-json", "--no-plot"' in helpers


@pytest.mark.parametrize("phase", PHASES)
def test_a_notebook_runs_every_lab_of_its_phase_and_shows_a_committed_plot(phase):
    import importlib

    py = SOURCES[PHASES.index(phase)]
    source = "\n".join(_code_cells(jupytext.read(py)))
    labs = [f"{phase}.{name}" for name in importlib.import_module(phase).LABS]
    assert [args[0] for args in _calls(source, "run_lab")] == labs, f"{py.name} must run {phase}'s labs in order"
    plots = [args[0] for args in _calls(source, "show")]
    assert plots, f"{py.name} shows no plot"
    for png in plots:
        assert (ROOT / "results" / "h200" / png).is_file(), f"{py.name}: results/h200/{png} is not committed"


@pytest.mark.slow
@pytest.mark.parametrize("py", SOURCES, ids=lambda p: p.stem)
def test_notebook_executes_on_the_cpu(py, tmp_path):
    """python -m notebooks.execute --cpu, one notebook: every cell runs, in CPU mode, and nothing is written into
    the repository."""
    pytest.importorskip("nbclient", reason="nbclient is not installed: run `make setup`")
    pytest.importorskip("ipykernel", reason="ipykernel is not installed: run `make setup`")
    from notebooks import execute

    before = _status_of("notebooks", "results")
    run = execute.run(py.stem, tmp_path, cpu=True, timeout=CELL_TIMEOUT_S)
    assert run["error"] is None, run["error"]
    assert [c["ok"] for c in run["cells"]] and all(c["ok"] for c in run["cells"])
    nb = nbformat.read(tmp_path / f"{py.stem}.ipynb", as_version=4)
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "COURSE_FORCE_CPU=1 is set" in outputs, "the labs did not run in CPU mode"
    assert any("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs), \
        "the H200 plot was not displayed"
    assert _status_of("notebooks", "results") == before, "the notebook wrote into the repository"


def test_execute_cli_refuses_what_it_cannot_run(capsys):
    from notebooks import execute

    with pytest.raises(SystemExit) as e:
        execute.main(["phase9"])
    assert e.value.code == 2 and "no notebook phase9" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        execute.main(["--timeout", "0"])
    assert e.value.code == 2
