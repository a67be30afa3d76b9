"""The commands the README documents: phase runners and make targets."""
import os
import subprocess
import sys

import pytest

from common import device
from tests.helpers import PHASES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXISTING = [p for p in PHASES if os.path.exists(os.path.join(ROOT, p, "__main__.py"))]


def _run(*args, timeout=600):
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("phase", EXISTING)
def test_phase_runner_help_and_list(phase):
    r = _run("-m", phase, "--help")
    assert r.returncode == 0 and "--quick" in r.stdout and "--only" in r.stdout
    r = _run("-m", phase, "--list")
    assert r.returncode == 0 and r.stdout.strip(), r.stderr


def test_phase1_quick_runs_end_to_end():
    r = _run("-m", "phase1_architecture", "--quick", "--no-json", "--no-plot")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "summary" in r.stdout
    if not device.has_gpu():
        assert "interpreter" in r.stdout and "compiled" in r.stdout


def test_device_info_flag():
    r = _run("-m", "phase1_architecture.lab02_vector_add", "--device-info", "--arch", "sm_80")
    assert r.returncode == 0
    assert ("sm_80" in r.stdout) or device.has_gpu()


def test_makefile_targets_are_documented():
    r = subprocess.run(["make", "-n", "help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0
    mk = open(os.path.join(ROOT, "Makefile")).read()
    for target in ("run:", "test:", "bench:"):
        assert target in mk


def test_readme_generated_blocks_are_current():
    """The README's lab map and results table come from the code and results/h200/*.json, never typed by hand."""
    r = _run(os.path.join("tools", "readme_tables.py"), "--check")
    assert r.returncode == 0, r.stderr + r.stdout
