"""python -m phase3_triton.lab01_programming_model

The composition root: lab.py and bench.py handed to the runner (lab.py never imports bench.py)."""
from common.lab import entry_point

from . import bench, lab

main = entry_point(lab, bench, __name__)
