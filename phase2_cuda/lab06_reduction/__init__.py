"""Lab 2.6 - reduction (lab.py: the contract and wrappers; kernels.cu: the CUDA C ladder; triton_kernels.py;
bench.py)."""
