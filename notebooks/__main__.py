"""python -m notebooks [--check] [--repo OWNER/NAME]: build every phaseN.ipynb from its phaseN.py (see build.py)."""
import sys

from notebooks.build import main

if __name__ == "__main__":
    sys.exit(main())
