"""Exercise 1.6.1, a right answer (the task and the addresses each lane reads: start/answers.py and README.md)."""
# (mapping, M, N, K, k) -> (sectors of warp 0's A load, sectors of its B load)
SECTORS = {
    ("uncoalesced", 4096, 4096, 4096, 0): (32, 1),     # lanes 16 KiB apart; one B address
    ("coalesced", 4096, 4096, 4096, 0): (1, 4),       # one A address; 128 contiguous bytes
    ("uncoalesced", 4096, 4096, 2, 0): (8, 1),        # lanes 8 bytes apart: 256 bytes
    ("coalesced", 4096, 4100, 4096, 1): (1, 5),       # row 1 of B starts 16 bytes into a sector
    ("coalesced", 4096, 4100, 4096, 2): (1, 4),       # row 2 starts on a sector again
}

# The lab's prediction of time(mm_01) / time(mm_02): sectors per k step (A + B), uncoalesced over coalesced,
# averaged over the first 8 steps of the loop.
RATIO = {
    (4096, 4096, 4096): 33 / 5,
    (4096, 4100, 4096): 33 / 5.5,                     # B alternates 4 and 5 sectors
}
