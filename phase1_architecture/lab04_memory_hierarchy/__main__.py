"""python -m phase1_architecture.lab04_memory_hierarchy

The composition root: the lab's kernels and checks (lab.py) and its measurements (bench.py) are handed to the
shared runner here. lab.py never imports bench.py."""
import sys

from common import lab as runner

from . import bench, lab


def main(argv=None) -> int:
    """Run the lab with these command-line arguments (None: the ones it was started with)."""
    return runner.run(lab, bench, argv)


if __name__ == "__main__":
    sys.exit(main())
