"""Exercise 1.5.2: Little's law - how many bytes of loads four of phase 1's streaming kernels keep in flight per SM,
and which of them keep enough to cover HBM latency.

Every kernel is launched in blocks of 256 threads on sm_90 (an H200: 132 SMs, 2,048 threads and 65,536 registers per
SM). As many blocks are resident on an SM as the occupancy rules allow (lab 1.5); their registers per thread are in
each lab's compile report (`python -m phase1_architecture.lab02_vector_add` and so on; no GPU needed). Count the bytes
of global LOADS one thread has issued and not yet received when it first waits (its stores do not make it wait).
"""
# Bytes of loads in flight on one SM: resident threads per SM x bytes of loads each thread has outstanding.
BYTES_IN_FLIGHT_PER_SM = {
    "vadd_01_one_thread_per_element": None,   # lab 1.2: c[i] = a[i] + b[i], one element per thread
    "vadd_03_float4": None,                   # lab 1.2: one float4 of a and one of b per thread
    "mem_02_read_sweep_float4": None,         # lab 1.4: UNROLL = 4 float4 loads issued before the first add
    "occ_02_scale_float4_ilp": None,          # lab 1.5: UNROLL = 4 float4 loads issued before the first multiply
}

# Little's law: bytes in flight = bandwidth x latency. How many bytes must each of the 132 SMs keep in flight for
# 4.8 TB/s (the H200's datasheet) at a latency of 0.6 us (a loaded HBM round trip)?
NEEDED_PER_SM = None

# Which kernels keep at least NEEDED_PER_SM in flight? (True or False for each)
COVERS = {
    "vadd_01_one_thread_per_element": None,
    "vadd_03_float4": None,
    "mem_02_read_sweep_float4": None,
    "occ_02_scale_float4_ilp": None,
}
