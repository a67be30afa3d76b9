"""Lab 3.3 - fused softmax (lab.py: the contract, launch configuration and wrappers; triton_kernels.py; bench.py)."""
