"""Lab 2.7 - softmax (lab.py: the contract and wrappers; kernels.cu: the CUDA C ladder; triton_kernels.py; bench.py)."""
