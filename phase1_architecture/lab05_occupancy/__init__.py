"""Lab 1.5 - occupancy (lab.py: the contract and wrappers; kernels.cu: the CUDA C kernels; triton_kernels.py)."""
