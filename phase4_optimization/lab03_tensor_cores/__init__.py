"""Lab 4.3 - tensor cores (lab.py: the contract; kernels.cu, kernels_wgmma.cu: the CUDA C rungs; wgmma.py; bench.py)."""
