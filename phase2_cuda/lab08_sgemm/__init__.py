"""Lab 2.8 - SGEMM (lab.py: the contract and wrappers; kernels.cu and kernels_async.cu: the CUDA C ladder;
triton_kernels.py; bench.py)."""
