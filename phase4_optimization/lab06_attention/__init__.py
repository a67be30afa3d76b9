"""Lab 4.6 - attention, from naive to flash (lab.py: the runner's contract and the API other labs use, its pieces in
their own modules; bench.py: the measuring side; triton_kernels.py, kernels.cu, kernels_hopper.cu: the kernels)."""
