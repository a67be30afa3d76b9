"""Lab 4.2 - kernel fusion, three parts (lab.py: the contract; a module of wrappers per part; kernels.cu; bench.py)."""
