"""Lab 1.1 - device tour (lab.py: the contract, the device and stack reports; triton_kernels.py; bench.py)."""
