"""Exercise 1.6.1: count the 32-byte sectors one warp's loads touch in lab 1.6's naive matmul (C = A @ B, fp32,
row-major: A is M x K, B is K x N, both starting on a 256-byte boundary).

Warp 0 computes 32 outputs of C at step k of the dot-product loop. Its two load instructions read A[row, k] and
B[k, col], one address per lane (4 bytes each):
  "uncoalesced" (mm_01): threadIdx.x walks the rows    - lane l computes C[l, 0]: it reads A[l, k] and B[k, 0]
  "coalesced"   (mm_02): threadIdx.x walks the columns - lane l computes C[0, l]: it reads A[0, k] and B[k, l]
A sector is an aligned 32-byte piece of memory: count how many distinct sectors the 32 addresses of ONE load fall in.
"""
# (mapping, M, N, K, k) -> (sectors of warp 0's A load, sectors of its B load)
SECTORS = {
    ("uncoalesced", 4096, 4096, 4096, 0): (None, None),
    ("coalesced", 4096, 4096, 4096, 0): (None, None),
    ("uncoalesced", 4096, 4096, 2, 0): (None, None),
    ("coalesced", 4096, 4100, 4096, 1): (None, None),
    ("coalesced", 4096, 4100, 4096, 2): (None, None),
}

# The lab's prediction of time(mm_01) / time(mm_02): sectors per k step (A + B), uncoalesced over coalesced,
# averaged over the first 8 steps of the loop.
RATIO = {
    (4096, 4096, 4096): None,
    (4096, 4100, 4096): None,
}
