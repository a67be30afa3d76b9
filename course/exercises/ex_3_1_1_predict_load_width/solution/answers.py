"""Exercise 3.1.1, a solution. A thread holds BLOCK / (32 x num_warps) consecutive floats; with n known divisible by
16 they are loaded up to 4 at a time (16 bytes), else one at a time, because a vector load is all or nothing and only
n % 16 == 0 proves the mask `offs < n` is the same for all 4 floats of a vector.
"""
# (BLOCK, num_warps, n % 16 == 0) -> (bytes per load, loads per thread per input array)
ANSWERS = {
    (1024, 4, True): (16, 2),     # 8 floats a thread: two 16-byte loads (ld.global.v4.b32)
    (1024, 16, True): (8, 1),     # 2 floats a thread: one 8-byte load (ld.global.v2.b32)
    (1024, 4, False): (4, 8),     # 8 floats a thread, n odd: eight 4-byte loads, each with its own mask bit
    (256, 8, True): (4, 1),       # 1 float a thread: one 4-byte load, whatever n is
    (4096, 8, True): (16, 4),     # 16 floats a thread: four 16-byte loads
}
