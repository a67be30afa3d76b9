"""The course notebooks, one per phase: phaseN.py (jupytext percent format) is the source, phaseN.ipynb is built from
it by `python -m notebooks` (build.py)."""
