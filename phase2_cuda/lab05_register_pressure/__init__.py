"""Lab 2.5 - register pressure (lab.py: the contract, settings, wrappers; kernels.cu; triton_kernels.py; bench.py)."""
