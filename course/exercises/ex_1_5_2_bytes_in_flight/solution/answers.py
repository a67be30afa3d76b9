"""Exercise 1.5.2, a right answer (the task: start/answers.py and README.md). The registers are what NVRTC 13.0 gives
for sm_90; the checker reads them from the compiler at hand."""
# Bytes of loads in flight on one SM: resident threads per SM x bytes of loads each thread has outstanding.
BYTES_IN_FLIGHT_PER_SM = {
    "vadd_01_one_thread_per_element": 2048 * 8,       # 12 registers: 8 blocks (threads limit), two 4-byte loads
    "vadd_03_float4": 2048 * 32,                      # 18 registers: 8 blocks, two 16-byte loads
    "mem_02_read_sweep_float4": 6 * 256 * 4 * 16,     # 40 registers: 6 blocks (registers limit), four 16-byte loads
    "occ_02_scale_float4_ilp": 2048 * 4 * 16,         # 32 registers: 8 blocks, four 16-byte loads
}

# Little's law: bytes in flight = bandwidth x latency. How many bytes must each of the 132 SMs keep in flight for
# 4.8 TB/s (the H200's datasheet) at a latency of 0.6 us (a loaded HBM round trip)?
NEEDED_PER_SM = 4.8e12 * 0.6e-6 / 132                 # ~21,800 bytes, ~21 KiB

# Which kernels keep at least NEEDED_PER_SM in flight? (True or False for each)
COVERS = {
    "vadd_01_one_thread_per_element": False,
    "vadd_03_float4": True,
    "mem_02_read_sweep_float4": True,
    "occ_02_scale_float4_ilp": True,
}
