"""Lab 3.1 - the Triton programming model (lab.py: contract and wrappers; kernels.cu; triton_kernels.py; bench.py)."""
