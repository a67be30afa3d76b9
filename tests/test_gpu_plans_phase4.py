"""Phase 4's labs on every GPU profile: every launch of each lab's plan compiles for that GPU's architecture and fits
its limits (tests/test_gpu_plans.py says how; this phase has a file of its own because its compiles are the longest,
and --dist loadfile gives a file to one worker)."""
import pytest

from common import lab
from tests.helpers import every_launch_fits

LABS = lab.lab_names(["phase4_optimization"])


@pytest.mark.parametrize("phase,name", LABS, ids=[name for _, name in LABS])
def test_every_launch_compiles_and_fits_every_gpu(phase, name):
    every_launch_fits(phase, name)
