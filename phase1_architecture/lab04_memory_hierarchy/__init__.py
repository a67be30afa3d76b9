"""Lab 1.4 - memory hierarchy (lab.py: the contract and wrappers; kernels.cu: the CUDA C kernels; triton_kernels.py)."""
