"""Lab 1.3 - thread hierarchy (lab.py: contract and wrappers; kernels.cu: the CUDA C kernels; triton_kernels.py)."""
