"""What every lab shares: device facts, kernel loading, Triton set-up, timing, correctness checks, reports.

Modules: device, cuda, triton_support, arrays, bench, check, report, cli, lab (the lab contract and phase runner).
Importing `common` imports nothing heavy; each module pulls in CuPy / Triton / torch only when it needs them.
"""
import importlib.util as _util
import sys as _sys

# The one package every module of the course needs before anything else: without it, say what to do in one sentence
# (the usual cause is running a system Python instead of the course's .venv).
if _util.find_spec("numpy") is None:
    raise SystemExit(f"error: NumPy is not installed in this Python ({_sys.executable}). Run `make setup` and use "
                     ".venv/bin/python (or run the course through `make run` / `make test`, which do both).")
