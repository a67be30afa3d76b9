"""Lab 2.3 - warp shuffle (lab.py: the contract, traffic model, wrappers; kernels.cu; triton_kernels.py; bench.py)."""
