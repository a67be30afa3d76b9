"""Lab 3.4 - LayerNorm forward and backward (lab.py: the contract and wrappers; triton_kernels.py; bench.py)."""
