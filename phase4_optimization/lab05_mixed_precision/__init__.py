"""Lab 4.5 - mixed precision (lab.py: the contract and wrappers; kernels.cu; triton_kernels.py; bench.py)."""
