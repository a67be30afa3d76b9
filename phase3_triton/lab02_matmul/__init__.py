"""Lab 3.2 - a fast Triton matmul (lab.py: contract, configs, wrapper; triton_kernels.py; bench.py)."""
