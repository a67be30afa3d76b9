"""Lab 2.1 - memory coalescing (lab.py: the contract and wrappers; kernels.cu: the CUDA C ladder; triton_kernels.py; bench.py)."""
