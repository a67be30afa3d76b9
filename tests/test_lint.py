"""The code's shape, checked on every `make test`: ruff (pyflakes and pycodestyle, the rules in pyproject.toml) is
clean, import-linter's contracts hold (common/ imports no lab; a lab imports only earlier labs; in every lab
__main__.py composes bench.py and lab.py and lab.py never imports bench.py; no import circles), and no .py file of the
course is over 600 lines."""
import glob
import os
import shutil
import subprocess
import sys

from tests.helpers import needs_setup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 600


def _tool(name: str) -> str:
    """The console script `name` of this Python's environment (make setup installs it)."""
    path = os.path.join(os.path.dirname(sys.executable), name)
    found = path if os.path.exists(path) else shutil.which(name)
    if not found:
        needs_setup(f"{name} (the test extra)")
    return found


def test_ruff_is_clean():
    r = subprocess.run([_tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_import_contracts_hold():
    r = subprocess.run([_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_no_python_file_is_over_600_lines():
    files = [p for pat in ("common/*.py", "course/**/*.py", "tools/*.py", "phase*/**/*.py", "tests/*.py")
             for p in glob.glob(os.path.join(ROOT, pat), recursive=True)]
    long = {os.path.relpath(p, ROOT): n for p in files if (n := sum(1 for _ in open(p, encoding="utf-8"))) > MAX_LINES}
    assert files and not long, f"over {MAX_LINES} lines (split by job): {long}"
