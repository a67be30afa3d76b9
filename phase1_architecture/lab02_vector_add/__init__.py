"""Lab 1.2 - vector add (lab.py: the contract and wrappers; kernels.cu: the CUDA C versions; triton_kernels.py)."""
