"""Lab 2.1 - memory coalescing (lab.py: the contract, models, wrappers; kernels.cu; triton_kernels.py; bench.py)."""
