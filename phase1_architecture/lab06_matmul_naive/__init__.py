"""Lab 1.6 - naive matmul (lab.py: the contract and wrappers; kernels.cu: the CUDA C kernels; triton_kernels.py)."""
