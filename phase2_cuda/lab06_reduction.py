"""Lab 2.6 - Reduction: from a 2007 textbook ladder to a single-pass kernel at the HBM ceiling, and what fp32 sums lose.

You will learn
  * why a reduction is not an elementwise kernel: threads must combine their values, and HOW they combine them (shared
    memory trees, barriers, divergent warps, bank conflicts, shuffles) decides the speed long before memory does;
  * the classic ladder, one change per rung, each rung's gain predicted in its header (phase2_cuda/lab06_reduction.cu):
    interleaved addressing with a divergent branch, then with a strided index (bank conflicts), sequential addressing,
    the first add during the load, the last warp unrolled (and why that code needs __syncwarp since Volta), shuffles;
  * what a modern memory-bound reduction looks like: many elements per thread, 16-byte loads, a grid sized to the
    GPU, and a single-pass finish - atomics (one launch + a memset, not deterministic) or the last block done
    (__threadfence + a ticket counter that resets itself: one launch, deterministic) - against two passes;
  * the same in Triton (a program per chunk, tl.sum), and how close cupy.sum and torch.sum already are;
  * numerics: fp32 accumulation error against a float64 reference per version (tree order vs one running sum, which
    stalls completely on 2^28 values in [0, 1): 2^24 + x rounds back to 2^24), and a compensated (Kahan/TwoSum) kernel
    that computes a ~2x-fp32-precise sum at the same speed (on this lab's numerics input the plain tree rungs already
    return the correctly rounded fp32 sum, so its gain does not show there: see the measurements).

The two numbers, for n fp32 values: bytes = 4 n (each value read once; the result is 4 bytes), FLOPs = n - 1 additions.
0.25 FLOP/B is ~60x below the ridge point of an H200 (67 TFLOP/s / 4.8 TB/s = 14 FLOP/B): memory wins, and the best
any version can do is stream 4 n bytes at the measured HBM ceiling: n = 2^28 (1 GiB) at ~4.4 TB/s is ~0.245 ms.
Sum of nothing is 0; max of nothing is a ValueError (NumPy's conventions).

Measured on an H200 (results/h200/phase2_lab06_reduction.json, n = 2^28, HBM ceiling 4,341 GB/s): the ladder climbs 410
GB/s (01, 0.095 of the ceiling) -> 679 (02, 1.65x) -> 861 (03, 1.27x) -> 1,596 (04, 1.85x) -> 2,234 (05, 1.40x) -> 2,267
(06, 1.01x) -> 4,243 (07, 1.87x, 0.977 of the ceiling); the single-pass 08, 09 and 10 stay there (4,279, 4,222, 4,203
GB/s); Triton 3,885 (0.94x torch.sum), cupy.sum 4,268 (1.03x), torch.sum 4,128 (0.951). Targets, in interleaved rounds:
rung 09 at 4,212 GB/s = 1.018x torch.sum (4,137): met (>= 1.00x), by a margin of about twice the ~1% spread; rung 01 at
0.099x torch.sum: met (< 0.15x). Predictions: 01 ~10x below the ceiling held (10.6x); 02's ~2x gave 1.65x; 03's ~2x gave
only 1.27x - the bank conflicts were likely a smaller share of 02's time than the barriers and the one element per
thread that 03 keeps; 04's 1.5-2x gave 1.85x; 05's "modest gain" was 1.40x, so the 5 block barriers it removes were
likely a large share of the time; 06's "within ~1.5x of the ceiling" missed at 1.9x (0.522): with the tree gone (+1%
over 05) what is left is bytes in flight - two 4-byte loads per thread, 16 KiB per SM against the ~33 KiB Little's law
asks - and 07's 64 B per thread fixed it; 07 "within a few %" held (2.3%); 08-10 "the same bandwidth" held (within
1.5%). At small n (2^12-2^24) every CUDA rung was launch-bound, 22-66 us per call against cupy.sum's 4-28 us (most
likely the Python wrappers' cost per call, not the GPU's), with 19-114% spreads, so the single-pass rungs' predicted
gain at small n is lost in host overhead here. Numerics on 2^28 uniform [0, 1) values: one running sum stalled at
16,777,216 (relative error 0.875), as predicted; CUDA rungs 01, 06, 07, 09 and the Kahan rung 10, Triton and torch.sum
all returned 134,219,392, the correctly rounded fp32 value (2.1e-8 relative, under half an ulp, 6e-8); cupy.sum was 1
ulp off (9.8e-8) and the atomics rung 4 ulps off (4.6e-7) and not bitwise reproducible over 3 runs, while all the others
were. The ~1e-6 error expected of ~1000-value running sums did not reach the result, most likely because the rounding
errors of ~270,000 independent thread sums average out; Kahan's advantage needs harder data (cancellation, a wide
dynamic range) to show.

Run: python -m phase2_cuda.lab06_reduction [--quick] [--size N] [--tune] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase2_lab06_reduction"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab06_reduction.cu")
THREADS = 256                # every CUDA rung: 256 threads per block (RED_THREADS in the .cu file)
# Compile-time and launch parameters of rungs 07-10 (the .cu file's UNROLL and LOAD_HINT macros; blocks per SM sets the
# grid). Reasoning, before any measurement: 8 blocks x 256 threads fill an SM (2048 threads), and 4 float4 in flight
# per thread are 128 KiB per SM, ~4x what Little's law asks for. `--tune` sweeps them against torch.sum.
FAST = dict(unroll=4, load_hint=0, blocks_per_sm=8)
EXACT_UP_TO = 2**22          # make_inputs' integers stay exact in fp32 in any summation order up to this length
N_MAIN = 2**28


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.float64:
    """The exact-enough sum: float64 accumulation (NumPy's pairwise sum, ~1e-16 relative)."""
    return np.float64(np.sum(np.asarray(x, np.float64)))


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """n small nonzero integers (+-1..4, mostly positive) stored as fp32.

    Why integers: every partial sum stays below 2^24 in magnitude while n <= 2^22, so ANY summation order is exact in
    fp32, and the check can demand the exact answer: one element dropped or counted twice changes the sum by >= 1 and
    fails, however long the array. (Accuracy on real-valued data is the numerics table's job, not the check's.)
    """
    mag = rng.integers(1, 5, size=n).astype(np.float64)
    sign = np.where(rng.random(n) < 0.8, 1.0, -1.0)
    return (arrays.from_numpy(mag * sign, dtype, where),)


def tolerance(n, dtype):
    if n <= EXACT_UP_TO:
        return check.Tol(1e-9, 1e-9)          # exact (see make_inputs); the slack only absorbs float64 printing noise
    # beyond 2^22 the integers' partial sums round too: fp32 tree sums stay within ~log2(n) * 6e-8, one running sum
    # per thread (rungs 07-10: ~1000 values each) within ~1e-6 relative
    return check.Tol(2e-5, 2e-5)


# max: its own reference and inputs (see MAX_LAB below)
def reference_max(x: np.ndarray) -> np.float64:
    return np.float64(np.max(np.asarray(x, np.float64)))


def make_inputs_max(n: int, dtype: str, rng: np.random.Generator, where: str):
    """All values <= -1 (a kernel that starts from 0 instead of -inf returns 0 and fails), and one -0.5 planted at the
    first element, the last element or a random one (tails and heads are where bounds bugs hide)."""
    x = -np.abs(rng.standard_normal(n)) - 1.0
    pos = [0, n - 1, int(rng.integers(0, n))][int(rng.integers(0, 3))]
    x[pos] = -0.5
    return (arrays.from_numpy(x, dtype, where),)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(x, out, lib=("cupy",), device_=True):
    """Validate before any launch; returns (out, n)."""
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=lib, device=device_)
    out = arrays.check_out(out, (), "float32", x)
    return out, arrays.size(x)


def _defines(unroll=None, load_hint=None) -> dict:
    return {"UNROLL": int(unroll or FAST["unroll"]),
            "LOAD_HINT": int(FAST["load_hint"] if load_hint is None else load_hint), "RED_THREADS": THREADS}


def _kernel(name: str, **knobs):
    # every kernel of the file is taken from the same compilation (same defines): one NVRTC run per knob setting
    return cuda.get_kernel(CU, name, defines=_defines(**knobs))


def _resident_blocks(blocks_per_sm=None) -> int:
    d = device.info()
    per_sm = blocks_per_sm or FAST["blocks_per_sm"]
    return d.sms * max(1, min(per_sm, d.max_threads_per_sm // THREADS))


def _grid(n: int, unroll=None, blocks_per_sm=None) -> int:
    """Rungs 07-10: enough blocks to fill the GPU once, fewer when n is small (each thread gets >= UNROLL float4)."""
    per_block = THREADS * 4 * int(unroll or FAST["unroll"])
    return max(1, min(_resident_blocks(blocks_per_sm), math.ceil(n / per_block)))


_WS: dict = {}


def _workspace(floats: int):
    """(partials, counter) for the single-pass rungs: grown on demand, the counter zeroed once (kernels leave it 0)."""
    import cupy

    dev = cupy.cuda.Device().id
    part, counter = _WS.get(dev, (None, None))
    if part is None or part.size < floats:
        part = cupy.empty(max(floats, 4096), dtype=cupy.float32)
        counter = counter if counter is not None else cupy.zeros(1, dtype=cupy.uint32)
        _WS[dev] = (part, counter)
    return part, counter


def _multipass(name: str, x, out, n: int, per_block: int):
    """Rungs 01-06: launch on the input, then on the partials, until one block's worth is left."""
    import cupy

    k = _kernel(name)
    src, m = x, n
    while True:
        blocks = math.ceil(m / per_block)
        if blocks > 2**31 - 1:
            raise ValueError(f"x: {n} elements need {blocks} blocks, more than a 1-D grid holds (2^31 - 1)")
        dst = out if blocks == 1 else cupy.empty(blocks, dtype=cupy.float32)
        k((blocks,), (THREADS,), (src, dst, np.int64(m)))
        if blocks == 1:
            return out
        src, m = dst, blocks


def _ladder(name: str, per_block: int):
    def fn(x, out=None):
        out, n = _prepare(x, out)
        if n == 0:
            arrays.fill(out, 0.0)
            return out
        return _multipass(name, x, out, n, per_block)

    fn.__name__ = "sum_" + name
    fn.__doc__ = f"Sum with {name} (multi-pass: the kernel runs again on its own partials)."
    return fn


sum_cuda_01 = _ladder("reduce_01_interleaved_divergent", THREADS)
sum_cuda_02 = _ladder("reduce_02_interleaved_strided_index", THREADS)
sum_cuda_03 = _ladder("reduce_03_sequential_addressing", THREADS)
sum_cuda_04 = _ladder("reduce_04_first_add_during_load", 2 * THREADS)
sum_cuda_05 = _ladder("reduce_05_unroll_last_warp", 2 * THREADS)
sum_cuda_06 = _ladder("reduce_06_warp_shuffle", 2 * THREADS)


def sum_cuda_07(x, out=None, **knobs):
    """float4 grid-stride loop, two passes: partials, then one block over them."""
    out, n = _prepare(x, out)
    if n == 0:
        arrays.fill(out, 0.0)
        return out
    k = _kernel("reduce_07_float4_grid_stride", **_k(knobs))
    blocks = _grid(n, knobs.get("unroll"), knobs.get("blocks_per_sm"))
    part, _ = _workspace(blocks)
    k((blocks,), (THREADS,), (x, part, np.int64(n)))
    k((1,), (THREADS,), (part, out, np.int64(blocks)))
    return out


def sum_cuda_08(x, out=None, **knobs):
    """float4 grid-stride loop, one launch: each block atomicAdds its partial into a zeroed *out."""
    import cupy

    out, n = _prepare(x, out)
    if n == 0:
        arrays.fill(out, 0.0)
        return out
    k = _kernel("reduce_08_atomic_finish", **_k(knobs))
    blocks = _grid(n, knobs.get("unroll"), knobs.get("blocks_per_sm"))
    cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, 4, cupy.cuda.get_current_stream().ptr)
    k((blocks,), (THREADS,), (x, out, np.int64(n)))
    return out


def _single_pass(name: str, x, out, n: int, floats_per_block: int, knobs: dict):
    k = _kernel(name, **_k(knobs))
    blocks = _grid(n, knobs.get("unroll"), knobs.get("blocks_per_sm"))
    part, counter = _workspace(floats_per_block * blocks)
    k((blocks,), (THREADS,), (x, part, counter, out, np.int64(n)))
    return out


def sum_cuda_09(x, out=None, **knobs):
    """float4 grid-stride loop, one launch: the last block to finish sums the partials (deterministic)."""
    out, n = _prepare(x, out)
    if n == 0:
        arrays.fill(out, 0.0)
        return out
    return _single_pass("reduce_09_last_block", x, out, n, 1, knobs)


def sum_cuda_10(x, out=None, **knobs):
    """As 09 with compensated (TwoSum/Kahan) accumulation everywhere: ~2x fp32 precision, same traffic."""
    out, n = _prepare(x, out)
    if n == 0:
        arrays.fill(out, 0.0)
        return out
    return _single_pass("reduce_10_kahan", x, out, n, 2, knobs)


def max_cuda_09(x, out=None, **knobs):
    """Max with the single-pass last-block kernel (identity -inf, fmaxf)."""
    out, n = _prepare(x, out)
    if n == 0:
        raise ValueError("x: max of an empty array is undefined (NumPy raises too); the sum of nothing is 0")
    return _single_pass("reduce_09_last_block_max", x, out, n, 1, knobs)


def _k(knobs: dict) -> dict:
    return {k: v for k, v in knobs.items() if k in ("unroll", "load_hint")}


# ---------------------------------------------------------------------------------------------------------------------
# Triton: a program per chunk of BLOCK x ITERS elements, BLOCK running sums per program, tl.sum at the end; the
# partials go through the same kernel again until one value is left (two launches up to 2^32 elements).
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def reduce_chunk_kernel(x_ptr, part_ptr, n, IS_MAX: tl.constexpr, BLOCK: tl.constexpr, ITERS: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)          # 64-bit: pid * CHUNK passes 2^31 for arrays over 8 GiB
    base = pid * (BLOCK * ITERS)
    offs = tl.arange(0, BLOCK)
    if IS_MAX:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in range(ITERS):
        idx = base + i * BLOCK + offs
        mask = idx < n
        if IS_MAX:
            acc = tl.maximum(acc, tl.load(x_ptr + idx, mask=mask, other=float("-inf")))
        else:
            acc += tl.load(x_ptr + idx, mask=mask, other=0.0)
    if IS_MAX:
        tl.store(part_ptr + pid, tl.max(acc, axis=0))
    else:
        tl.store(part_ptr + pid, tl.sum(acc, axis=0))


# 4096 elements per step with 8 warps: 16 per thread, four 16-byte loads; 16 steps per program: a 256 KiB chunk, so
# n = 2^28 leaves 4096 partials for the second launch (a single program).
TRITON_BLOCK, TRITON_ITERS, TRITON_WARPS = 4096, 16, 8


def _triton_reduce(x, out, is_max: bool, block=None, iters=None, num_warps=None):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, device=dev)
    out = arrays.check_out(out, (), "float32", x)
    n = arrays.size(x)
    if n == 0:
        if is_max:
            raise ValueError("x: max of an empty array is undefined (NumPy raises too); the sum of nothing is 0")
        arrays.fill(out, 0.0)
        return out
    block, iters = block or TRITON_BLOCK, iters or TRITON_ITERS
    chunk = block * iters
    src, m = x, n
    while True:
        programs = triton.cdiv(m, chunk)
        dst = out if programs == 1 else arrays.empty((programs,), "float32", x)
        launch(reduce_chunk_kernel, (programs,), src, dst, m, IS_MAX=is_max, BLOCK=block, ITERS=iters,
               num_warps=num_warps or TRITON_WARPS)
        if programs == 1:
            return out
        src, m = dst, programs


def sum_triton(x, out=None, **kw):
    """Triton sum: CuPy/torch arrays on a GPU, NumPy/torch CPU arrays in the interpreter."""
    return _triton_reduce(x, out, False, **kw)


def max_triton(x, out=None, **kw):
    return _triton_reduce(x, out, True, **kw)


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def peer_cupy_sum(x, out=None):
    import cupy

    out = arrays.check_out(out, (), "float32", x)
    return cupy.sum(x, out=out)


def peer_torch_sum(x, out=None):
    import torch

    out = arrays.check_out(out, (), "float32", x)
    torch.from_dlpack(out.reshape(1)).copy_(torch.sum(torch.from_dlpack(x)).reshape(1))
    return out


def peer_cupy_max(x, out=None):
    import cupy

    out = arrays.check_out(out, (), "float32", x)
    return cupy.max(x, out=out)


def peer_torch_max(x, out=None):
    import torch

    out = arrays.check_out(out, (), "float32", x)
    torch.from_dlpack(out.reshape(1)).copy_(torch.amax(torch.from_dlpack(x)).reshape(1))
    return out


VARIANTS = [
    lab.Variant("cuda 01 interleaved, divergent", sum_cuda_01, "cuda"),
    lab.Variant("cuda 02 interleaved, strided index", sum_cuda_02, "cuda"),
    lab.Variant("cuda 03 sequential addressing", sum_cuda_03, "cuda"),
    lab.Variant("cuda 04 first add during load", sum_cuda_04, "cuda"),
    lab.Variant("cuda 05 unrolled last warp", sum_cuda_05, "cuda"),
    lab.Variant("cuda 06 warp shuffle", sum_cuda_06, "cuda"),
    lab.Variant("cuda 07 float4 grid-stride, 2 passes", sum_cuda_07, "cuda"),
    lab.Variant("cuda 08 single pass, atomics", sum_cuda_08, "cuda", note="not deterministic"),
    lab.Variant("cuda 09 single pass, last block", sum_cuda_09, "cuda"),
    lab.Variant("cuda 10 single pass, Kahan", sum_cuda_10, "cuda", note="compensated"),
    lab.Variant("triton chunked, 2 passes", sum_triton, "triton"),
]
PEERS = [
    lab.Variant("cupy.sum", peer_cupy_sum, "peer"),
    lab.Variant("torch.sum", peer_torch_sum, "peer"),
]
MAX_VARIANTS = [
    lab.Variant("cuda 09 max, last block", max_cuda_09, "cuda"),
    lab.Variant("triton max", max_triton, "triton"),
]
MAX_PEERS = [
    lab.Variant("cupy.max", peer_cupy_max, "peer"),
    lab.Variant("torch.amax", peer_torch_max, "peer"),
]
BEST = "cuda 09 single pass, last block"
# awkward lengths: 1, primes, one off a power of two, more than one grid of rungs 07-10 (2^22 + 3 > 1056 x 1024 x 4)
CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D + (2**20 + 1, EXACT_UP_TO - 1, EXACT_UP_TO + 3)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 3, 31, 1000, 4097, 65537, 140_001)]


class MAX_LAB:  # noqa: N801 - a lab-shaped namespace so common.lab.check_variants can check the max variants too
    reference = staticmethod(reference_max)
    make_inputs = staticmethod(make_inputs_max)
    CHECK_CASES = CHECK_CASES
    CPU_CHECK_CASES = CPU_CHECK_CASES


# ---------------------------------------------------------------------------------------------------------------------
# Numerics: how far each summation order lands from the float64 sum on real-valued data
# ---------------------------------------------------------------------------------------------------------------------
ORDERS = {
    "cuda 01 interleaved, divergent": "tree of 256 per block, tree of partials",
    "cuda 06 warp shuffle": "tree of 512 per block (shuffles), tree of partials",
    "cuda 07 float4 grid-stride, 2 passes": "a running sum per thread (~1000 values at 2^28), then trees",
    "cuda 08 single pass, atomics": "running sums, trees, partials added in arrival order",
    "cuda 09 single pass, last block": "running sums, trees, partials in a fixed tree",
    "cuda 10 single pass, Kahan": "compensated running sums and trees (TwoSum)",
    "triton chunked, 2 passes": "4096 running sums per program, tl.sum tree",
    "cupy.sum": "CUB device reduction",
    "torch.sum": "torch's reduce kernel (vectorized, tree)",
}


def numerics(n: int) -> list[dict]:
    """Relative error of every sum against float64 on n uniform [0, 1) fp32 values (+ NumPy's orders on the host).

    A demonstration, not a check: the values are the same every run (a fixed generator, not the process seed), so
    the table a learner reads, and the test that reads it, show the typical gap between orders, not a lucky draw."""
    rng = np.random.default_rng(12345)
    host = rng.random(n, dtype=np.float32)
    exact = float(np.sum(host, dtype=np.float64))
    rows = []

    def add(name, got, order, runs=None):
        r = {"variant": name, "order": order, "sum": float(got), "rel_err": abs(float(got) - exact) / exact}
        if runs is not None:
            r["bitwise same over 3 runs"] = runs
        rows.append(r)

    add("NumPy fp32, one running sum", np.cumsum(host, dtype=np.float32)[-1], "sequential (np.cumsum)")
    add("NumPy fp32 np.sum", np.sum(host, dtype=np.float32), "pairwise blocks of 128")
    if device.has_gpu():
        import cupy

        x = cupy.asarray(host)
        out = cupy.empty((), dtype=cupy.float32)
        for v in VARIANTS + PEERS:
            if v.name not in ORDERS:
                continue
            vals = []
            for _ in range(3):
                vals.append(float(v.fn(x, out=out)))
            add(v.name, vals[0], ORDERS[v.name], runs=len({np.float32(a).tobytes() for a in vals}) == 1)
        del x
    else:
        v = next(v for v in VARIANTS if v.impl == "triton")
        add(v.name + " (interpreter)", float(v.fn(host)), ORDERS[v.name])
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------------------------------------------------
def _device_input(n: int):
    """Benchmark input made on the GPU (no host round trip for a GiB)."""
    import cupy

    return cupy.random.random(n, dtype=cupy.float32)


def _bench_fns(x, names=None):
    """name -> zero-argument callable, outputs preallocated; peers timed as a learner would call them."""
    import cupy
    import torch

    out = cupy.empty((), dtype=cupy.float32)
    tx = torch.from_dlpack(x)
    fns = {v.name: (lambda f=v.fn: f(x, out=out)) for v in VARIANTS}
    fns["cupy.sum"] = lambda: cupy.sum(x)
    fns["torch.sum"] = lambda: torch.sum(tx)
    if names is not None:
        fns = {k: fns[k] for k in names}
    return fns, out


def ladder(n: int, ceiling_gbps: float) -> list[dict]:
    """Every rung and peer once at size n (L2 flushed before each call), with the ratio to torch.sum."""
    x = _device_input(n)
    fns, _ = _bench_fns(x)
    rows, ts = [], {}
    for name in cli.progress(list(fns), f"ladder n={n}"):
        ts[name] = bench.bench(fns[name])
    impl = {v.name: v.impl for v in VARIANTS + PEERS}
    for name, t in ts.items():
        rows.append(report.row(LAB, name, impl[name], (n,), "float32", t, nbytes=4 * n, flops=n - 1,
                               ceiling_gbps=ceiling_gbps, vs_torch_sum=ts["torch.sum"].median_ms / t.median_ms))
    del x
    return rows


SWEEP_NAMES = ["cuda 06 warp shuffle", "cuda 07 float4 grid-stride, 2 passes", "cuda 08 single pass, atomics",
               BEST, "triton chunked, 2 passes", "cupy.sum", "torch.sum"]


def sweep(sizes, ceiling_gbps: float) -> list[dict]:
    """A few contenders over sizes: launch-bound small sums (where one launch beats two) up to HBM-bound."""
    import cupy

    rows = []
    for n in cli.progress(sizes, "sizes"):
        x = _device_input(n)
        fns, _ = _bench_fns(x, SWEEP_NAMES)
        ts = {k: bench.bench(f) for k, f in fns.items()}
        impl = {v.name: v.impl for v in VARIANTS + PEERS}
        for k, t in ts.items():
            rows.append(report.row(LAB, k, impl[k], (n,), "float32", t, nbytes=4 * n, flops=n - 1,
                                   ceiling_gbps=ceiling_gbps, vs_torch_sum=ts["torch.sum"].median_ms / t.median_ms))
        del x
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def head_to_head(n: int = N_MAIN, rounds: int = 7) -> list[dict]:
    """The issue's targets, in interleaved rounds: the best rung >= 1.0x torch.sum; rung 01 below 0.15x."""
    x = _device_input(n)
    names = ["torch.sum", "cupy.sum", BEST, "cuda 10 single pass, Kahan", "triton chunked, 2 passes",
             "cuda 01 interleaved, divergent"]
    fns, _ = _bench_fns(x, names)
    ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
    peer = ts["torch.sum"].median_ms
    rows = []
    for name, t in ts.items():
        ratio = peer / t.median_ms
        target, met = "", None
        if name == BEST:
            target, met = ">= 1.00 x torch.sum", ratio >= 1.0
        elif name == "cuda 01 interleaved, divergent":
            target, met = "< 0.15 x torch.sum", ratio < 0.15
        rows.append({"case": f"sum 2^{int(math.log2(n))} fp32" if n & (n - 1) == 0 else f"sum {n} fp32",
                     "variant": name, "ms": t.median_ms, "GB/s": t.gbps(4 * n), "vs torch.sum": ratio,
                     "spread": t.spread, "target": target, "met": met})
    del x
    return rows


def tune(n: int = N_MAIN, rounds: int = 3) -> list[dict]:
    """Sweep rung 09's UNROLL, load cache hint and blocks per SM against torch.sum (interleaved rounds)."""
    import cupy
    import torch

    x = _device_input(n)
    out = cupy.empty((), dtype=cupy.float32)
    tx = torch.from_dlpack(x)
    fns = {"torch.sum": lambda: torch.sum(tx)}
    for unroll in (2, 4, 8):
        for hint in (0, 1, 2):
            for bps in (4, 8):
                fns[f"09 unroll={unroll} load_hint={hint} blocks/SM={bps}"] = \
                    (lambda u=unroll, h=hint, b=bps: sum_cuda_09(x, out, unroll=u, load_hint=h, blocks_per_sm=b))
    for block, iters, warps in ((4096, 16, 8), (4096, 8, 8), (8192, 8, 16), (2048, 32, 4)):
        fns[f"triton BLOCK={block} ITERS={iters} warps={warps}"] = \
            (lambda b=block, i=iters, w=warps: sum_triton(x, out, block=b, iters=i, num_warps=w))
    for f in fns.values():   # compile everything before timing
        f()
    ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
    peer = ts["torch.sum"].median_ms
    rows = [{"config": k, "ms": t.median_ms, "GB/s": t.gbps(4 * n), "vs torch.sum": peer / t.median_ms,
             "spread": t.spread} for k, t in ts.items()]
    return sorted(rows, key=lambda r: r["ms"])


def plot_ladder(rows: list[dict], ceiling: float, path: str) -> str:
    labels = [r["variant"] for r in rows]
    return report.plot_bars(path, labels, [r["gbps"] for r in rows], ylabel="GB/s (4 n bytes read)",
                            title=f"Sum of {rows[0]['shape'][0]:,} fp32 on {device.info().name}: the ladder",
                            colors=[report.IMPL_COLORS[r["impl"]] for r in rows],
                            hlines={f"measured HBM ceiling {ceiling:.0f} GB/s": ceiling})


def plot_sweep(rows: list[dict], ceiling: float, path: str) -> str:
    ns = sorted({r["shape"][0] for r in rows})
    series = {name: [next((r["gbps"] for r in rows if r["variant"] == name and r["shape"][0] == n), None)
                     for n in ns] for name in SWEEP_NAMES}
    return report.plot_lines(path, ns, series, xlabel="n (fp32 elements; 4 n bytes read)", ylabel="GB/s",
                             title=f"Sum: bandwidth vs size on {device.info().name} (L2 flushed)",
                             hlines={f"measured HBM ceiling {ceiling:.0f} GB/s": ceiling},
                             vlines={f"4 n = L2 ({device.info().l2_bytes / 2**20:.0f} MiB)":
                                     device.info().l2_bytes / 4})


# ---------------------------------------------------------------------------------------------------------------------
# Without a GPU: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, defines=_defines(), excerpt_of="reduce_09_last_block")
    ks = rep.kernels
    if ks["reduce_01_interleaved_divergent"].sass:
        s1, s3 = ks["reduce_01_interleaved_divergent"].sass, ks["reduce_03_sequential_addressing"].sass
        div = [s for s in s1 if any(op in s for op in ("I2F", "MUFU.RCP", "F2I", "IMAD.HI"))]
        c9 = ks["reduce_09_last_block"].sass_counts
        c8 = ks["reduce_08_atomic_finish"].sass_counts
        print(f"-> reduce_01: {len(s1)} SASS instructions; its loop computes the run-time `tid % (2*stride)` as an "
              f"integer division by reciprocal ({', '.join(sorted({d.split()[0].split('.')[0] for d in div}))} and "
              f"their helpers) in every round; reduce_03: {len(s3)} instructions, no division.\n"
              f"-> reduce_09: {c9.get('LDG.128', 0)} x LDG.E.128 (UNROLL float4 in flight), {c9.get('SHFL', 0)} SHFL, "
              f"{c9.get('BAR', 0)} barriers, {c9.get('ATOM', 0)} ATOM (the ticket); reduce_08 finishes with "
              f"{c8.get('RED', 0)} RED (an atomic add that returns nothing, done in L2).")


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True, size_help="n of the ladder (default 2^28, quick 2^24)")
    p.add_argument("--tune", action="store_true", help="(GPU) sweep rung 09's and Triton's parameters vs torch.sum")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        cases = CPU_CHECK_CASES[:4] if args.quick else CPU_CHECK_CASES
        tv = [v for v in VARIANTS if v.runs_without_gpu]
        _, ok = lab.check_variants(this, tv, cases)
        _, ok_max = lab.check_variants(MAX_LAB, [v for v in MAX_VARIANTS if v.runs_without_gpu], cases)
        n = args.size or (2**16 if args.quick else 2**22)
        report.print_table(numerics(n), title=f"numerics: sum of {n:,} uniform [0, 1) fp32 values vs float64 "
                                              "(on a GPU every CUDA rung and peer joins this table)")
        show_compile_reports(args.arch)
        print("\nCUDA C variants were compiled, not run (no GPU); the Triton kernels ran in the interpreter.")
        return 0 if (ok and ok_max) else 1

    quick = args.quick
    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[::3] if quick else CHECK_CASES)
    _, ok_max = lab.check_variants(MAX_LAB, MAX_VARIANTS + MAX_PEERS, CHECK_CASES[::3] if quick else CHECK_CASES)
    show_compile_reports(args.arch)
    if not (ok and ok_max):
        print("correctness failed: not benchmarking")
        return 1
    if not args.bench:
        return 0
    out_dir = args.out or report.results_dir()
    if args.tune:
        rows = tune()
        report.print_table(rows, title="rung 09 / Triton parameters at n = 2^28 (interleaved rounds vs torch.sum)")
        if args.json:
            print("wrote", report.write_json(LAB + "_tune", rows, out_dir=out_dir))
        return 0
    ceiling = bench.ceilings()
    n = args.size or (2**24 if quick else N_MAIN)
    num = numerics(n)
    lad = ladder(n, ceiling["hbm_gbps"])
    sizes = [2**k for k in ((12, 18, 24) if quick else (12, 16, 20, 24, 28))]
    sw = sweep(sizes, ceiling["hbm_gbps"])
    tg = head_to_head(n, rounds=3 if quick else 7)
    if args.json:
        print("wrote", report.write_json(LAB, lad + sw, out_dir=out_dir, ceiling=ceiling, targets=tg, numerics=num,
                                         knobs=FAST, device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot_ladder(lad, ceiling["hbm_gbps"], os.path.join(out_dir, f"{LAB}.png")))
        print("wrote", plot_sweep(sw, ceiling["hbm_gbps"], os.path.join(out_dir, f"{LAB}_sizes.png")))
    report.print_table(num, title=f"numerics: sum of {n:,} uniform [0, 1) fp32 values vs float64")
    report.print_table(sw, ["variant", "shape", "ms", "gbps", "frac_ceiling", "vs_torch_sum"],
                       title="size sweep (L2 flushed before each call)")
    report.print_table(lad, ["variant", "impl", "ms", "gbps", "frac_ceiling", "vs_torch_sum", "spread"],
                       title=f"the ladder at n = {n:,} ({4 * n / 2**30:.2f} GiB read), measured ceiling "
                             f"{ceiling['hbm_gbps']:.0f} GB/s")
    report.print_table(tg, title="targets (interleaved rounds, same run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
