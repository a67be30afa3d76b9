"""Lab 4.2 - kernel fusion, three parts (lab.py: contract and wrappers; kernels.cu; triton_kernels.py; bench.py)."""
