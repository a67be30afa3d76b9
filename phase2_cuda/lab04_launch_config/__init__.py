"""Lab 2.4 - launch configuration (lab.py: the contract, models, wrappers; kernels.cu; triton_kernels.py; bench.py)."""
