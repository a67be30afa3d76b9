"""Lab 4.1's Triton kernel: y = k chained FMAs of x, an arithmetic intensity set at run time (k/4 FLOP/B in fp32), the
probe that measures both roofs - the HBM diagonal at small k, the fp32 FFMA peak at large k."""
from common.triton_support import tl, triton


@triton.jit
def fma_chain_kernel(x_ptr, y_ptr, n, k, a, b, BLOCK: tl.constexpr):
    """y[i] = f^k(x[i]) with f(v) = a v + b: one load, k FFMAs, one store per element.

    Launch: one program per BLOCK elements. Bytes: 8 n (fp32 in and out). FLOPs: 2 k n. k is a run-time argument,
    so the loop is a real loop (not unrolled away) and one compiled kernel serves the whole sweep; the chain is
    serial per element, so the compiler cannot fold it, and tl.fma makes each step exactly one FFMA. Each thread
    holds BLOCK / (32 x num_warps) = 8 elements: 8 independent chains, enough to hide the FFMA latency (~4 cycles)
    at one FFMA issued per cycle per SM sub-partition.
    """
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # four FMAs a trip: the loop's own counter, compare and branch take issue slots too, and at one FMA a trip
    # they would cap the kernel near 8 / 11 of the FFMA peak (8 elements a thread); at four, near 32 / 35
    for _ in range(k // 4):
        for _u in tl.static_range(4):
            y = tl.fma(y, a, b)
    for _ in range(k % 4):
        y = tl.fma(y, a, b)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
