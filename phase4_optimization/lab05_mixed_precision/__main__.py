"""python -m phase4_optimization.lab05_mixed_precision

The composition root: lab.py and bench.py handed to the runner (lab.py never imports bench.py)."""
from common.lab import entry_point

from . import bench, lab

main = entry_point(lab, bench, __name__)
