"""Lab 2.2 - bank conflicts (lab.py: the contract, bank model, wrappers; kernels.cu; triton_kernels.py; bench.py)."""
