"""Lab 4.6 - attention (lab.py: contract, wrappers; triton_kernels.py; kernels.cu: CUDA C forward; bench.py)."""
