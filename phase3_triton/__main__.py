"""Run phase 3's labs in order: python -m phase3_triton [--quick] [--only NAME] [--list] [--help]."""
import sys

from common.phase import run_phase

from . import LABS, TITLE

if __name__ == "__main__":
    sys.exit(run_phase(__package__, TITLE, LABS))
