"""Lab 2.6 - Reduction: from a 2007 textbook ladder to a single-pass kernel at the HBM ceiling, and what fp32 sums lose.

You will learn
  * why a reduction is not an elementwise kernel: threads must combine their values, and HOW they combine them (shared
    memory trees, barriers, divergent warps, bank conflicts, shuffles) decides the speed long before memory does;
  * the classic ladder, one change per rung, each rung's gain predicted in its header (kernels.cu): interleaved
    addressing with a divergent branch, then with a strided index (bank conflicts), sequential addressing, the first
    add during the load, the last warp unrolled (and why that code needs __syncwarp since Volta), shuffles;
  * what a modern memory-bound reduction looks like: many elements per thread, 16-byte loads, a grid sized to the
    GPU, and a single-pass finish - atomics (one launch + a memset, not deterministic) or the last block done
    (__threadfence + a ticket counter that resets itself: one launch, deterministic) - against two passes;
  * the same in Triton (a program per chunk, tl.sum), and how close cupy.sum and torch.sum already are;
  * numerics: fp32 accumulation error against a float64 reference per version (tree order vs one running sum, which
    stalls completely on 2^28 values in [0, 1): 2^24 + x rounds back to 2^24), and a compensated (Kahan/TwoSum) kernel
    that computes a ~2x-fp32-precise sum at the same speed.

The two numbers, for n fp32 values: bytes = 4 n (each value read once; the result is 4 bytes), FLOPs = n - 1 additions.
0.25 FLOP/B is tens of times below the ridge point of any current GPU (`--plan` prints this GPU's): memory wins, and
the best any version can do is stream 4 n bytes at the measured HBM ceiling (n = 2^28 is 1 GiB). The lesson, the
predictions and this GPU's measured figures: README.md.
Sum of nothing is 0; max of nothing is a ValueError (NumPy's conventions).

Run: python -m phase2_cuda.lab06_reduction [--quick] [--size N] [--tune] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set UNROLL=8]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch

from .triton_kernels import reduce_chunk_kernel

LAB = "phase2_lab06_reduction"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256                # every CUDA rung: 256 threads per block (RED_THREADS in kernels.cu)
# Compile-time and launch parameters of rungs 07-10 (kernels.cu's UNROLL and LOAD_HINT macros; BLOCKS_PER_SM sets the
# grid, capped at what an SM's threads allow). The lab's default; `--set UNROLL=8` and the like override it. Reasoning,
# before any measurement: 8 blocks x 256 threads fill an SM of 2048 threads, and 4 float4 in flight per thread are
# 128 KiB per SM, several times what Little's law asks for (`--plan` prints this GPU's figure). `--tune` sweeps them
# against torch.sum.
FAST = dict(UNROLL=4, LOAD_HINT=0, BLOCKS_PER_SM=8)
LATENCY_US = 1.0             # a-priori DRAM latency under load, for the Little's-law prediction only
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
def _prepare(x, out, is_max=False, libs=("cupy",), device_=True):
    """Validate before any launch; returns (out, n). An empty x is answered here: its sum, 0, is written to out (the
    caller returns out when n == 0); its max is an error."""
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=libs, device=device_)
    out = arrays.check_out(out, (), "float32", x)
    n = arrays.size(x)
    if n == 0:
        if is_max:
            raise ValueError("x: max of an empty array is undefined (NumPy raises too); the sum of nothing is 0")
        arrays.fill(out, 0.0)
    return out, n


def fast_config() -> config.Resolved:
    return config.resolve("reduce_07..10 (float4 grid-stride)", FAST, validate=_check_fast)


def _check_fast(cfg: dict) -> dict:
    if cfg["UNROLL"] not in (1, 2, 4, 8, 16) or cfg["LOAD_HINT"] not in (0, 1, 2) or \
            not 1 <= cfg["BLOCKS_PER_SM"] <= 32:
        raise ValueError(tr("reduce_07..10: UNROLL in 1, 2, 4, 8, 16, LOAD_HINT 0, 1 or 2, BLOCKS_PER_SM in 1..32; got "
                            "{got}", got=config.fmt(cfg)))
    return cfg


def _defines(unroll=None, load_hint=None) -> dict:
    """The -D values every kernel of the file is compiled with: the knobs given, else the resolved configuration."""
    cfg = fast_config().values
    return {"UNROLL": int(unroll or cfg["UNROLL"]),
            "LOAD_HINT": int(cfg["LOAD_HINT"] if load_hint is None else load_hint), "RED_THREADS": THREADS}


def _kernel(name: str, **knobs):
    # every kernel of the file is taken from the same compilation (same defines): one NVRTC run per knob setting
    return cuda.get_kernel(CU, name, defines=_defines(**knobs))


def resident_blocks(gpu: device.DeviceInfo, blocks_per_sm=None) -> int:
    """Rungs 07-10's full grid on `gpu`: its SMs x BLOCKS_PER_SM, capped at the blocks of THREADS an SM's threads
    allow (4 on an SM of 1024 threads)."""
    per_sm = blocks_per_sm or fast_config()["BLOCKS_PER_SM"]
    return gpu.sms * max(1, min(per_sm, gpu.max_threads_per_sm // THREADS))


def fast_grid(n: int, gpu: device.DeviceInfo, unroll=None, blocks_per_sm=None) -> int:
    """Rungs 07-10's grid for n on `gpu`: enough blocks to fill the GPU once, fewer when n is small (each thread gets
    >= UNROLL float4). The wrappers and the plan both call this."""
    per_block = THREADS * 4 * int(unroll or fast_config()["UNROLL"])
    return max(1, min(resident_blocks(gpu, blocks_per_sm), math.ceil(n / per_block)))


def multipass_grids(n: int, per_block: int) -> list[int]:
    """Rungs 01-06 (and Triton's chunks): the grid of each pass, the first over n, each next over the partials of the
    one before, down to one block."""
    grids, m = [], int(n)
    while True:
        grids.append(max(1, math.ceil(m / per_block)))
        if grids[-1] == 1:
            return grids
        m = grids[-1]


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

    grids = multipass_grids(n, per_block)
    if grids[0] > 2**31 - 1:
        raise ValueError(f"x: {n} elements need {grids[0]} blocks, more than a 1-D grid holds (2^31 - 1)")
    k = _kernel(name)
    src, m = x, n
    for blocks in grids:
        dst = out if blocks == 1 else cupy.empty(blocks, dtype=cupy.float32)
        k((blocks,), (THREADS,), (src, dst, np.int64(m)))
        src, m = dst, blocks
    return out


def _ladder(name: str, per_block: int):
    def fn(x, out=None):
        out, n = _prepare(x, out)
        if n == 0:
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


def _grid_stride(name: str, n: int, knobs: dict):
    """Rungs 07-10: the kernel, compiled with the knobs that are defines (unroll, load_hint), and its grid for n."""
    defines = {k: v for k, v in knobs.items() if k in ("unroll", "load_hint")}
    return _kernel(name, **defines), fast_grid(n, device.info(), knobs.get("unroll"), knobs.get("blocks_per_sm"))


def sum_cuda_07(x, out=None, **knobs):
    """float4 grid-stride loop, two passes: partials, then one block over them."""
    out, n = _prepare(x, out)
    if n == 0:
        return out
    k, blocks = _grid_stride("reduce_07_float4_grid_stride", n, knobs)
    part, _ = _workspace(blocks)
    k((blocks,), (THREADS,), (x, part, np.int64(n)))
    k((1,), (THREADS,), (part, out, np.int64(blocks)))
    return out


def sum_cuda_08(x, out=None, **knobs):
    """float4 grid-stride loop, one launch: each block atomicAdds its partial into a zeroed *out."""
    import cupy

    out, n = _prepare(x, out)
    if n == 0:
        return out
    k, blocks = _grid_stride("reduce_08_atomic_finish", n, knobs)
    cupy.cuda.runtime.memsetAsync(out.data.ptr, 0, 4, cupy.cuda.get_current_stream().ptr)
    k((blocks,), (THREADS,), (x, out, np.int64(n)))
    return out


def _single_pass(name: str, x, out, n: int, floats_per_block: int, knobs: dict):
    k, blocks = _grid_stride(name, n, knobs)
    part, counter = _workspace(floats_per_block * blocks)
    k((blocks,), (THREADS,), (x, part, counter, out, np.int64(n)))
    return out


def sum_cuda_09(x, out=None, **knobs):
    """float4 grid-stride loop, one launch: the last block to finish sums the partials (deterministic)."""
    out, n = _prepare(x, out)
    if n == 0:
        return out
    return _single_pass("reduce_09_last_block", x, out, n, 1, knobs)


def sum_cuda_10(x, out=None, **knobs):
    """As 09 with compensated (TwoSum/Kahan) accumulation everywhere: ~2x fp32 precision, same traffic."""
    out, n = _prepare(x, out)
    if n == 0:
        return out
    return _single_pass("reduce_10_kahan", x, out, n, 2, knobs)


def max_cuda_09(x, out=None, **knobs):
    """Max with the single-pass last-block kernel (identity -inf, fmaxf)."""
    out, n = _prepare(x, out, is_max=True)
    return _single_pass("reduce_09_last_block_max", x, out, n, 1, knobs)




# ---------------------------------------------------------------------------------------------------------------------
# Triton (triton_kernels.py): a program per chunk of BLOCK x ITERS elements; the partials go through the same kernel
# again until one value is left (two launches up to 2^32 elements).
# ---------------------------------------------------------------------------------------------------------------------
# 4096 elements per step with 8 warps: 16 per thread, four 16-byte loads; 16 steps per program: a 256 KiB chunk, so
# n = 2^28 leaves 4096 partials for the second launch (a single program). `--set ITERS=8` and the like override it.
TRITON = dict(BLOCK=4096, ITERS=16, num_warps=8)


def triton_config() -> config.Resolved:
    return config.resolve("triton reduce_chunk_kernel", TRITON, validate=_check_triton)


def _check_triton(cfg: dict) -> dict:
    if cfg["BLOCK"] not in [2**k for k in range(6, 15)] or not 1 <= cfg["ITERS"] <= 256 or \
            cfg["num_warps"] not in (1, 2, 4, 8, 16, 32):
        raise ValueError(tr("triton reduce_chunk_kernel: BLOCK a power of two in 64..16384, ITERS in 1..256, "
                            "num_warps a power of two up to 32; got {got}", got=config.fmt(cfg)))
    return cfg


def _triton_reduce(x, out, is_max: bool, block=None, iters=None, num_warps=None):
    out, n = _prepare(x, out, is_max, libs=("cupy", "torch", "numpy"), device_=not INTERPRETER)
    if n == 0:
        return out
    cfg = triton_config().values
    block, iters = block or cfg["BLOCK"], iters or cfg["ITERS"]
    src, m = x, n
    for programs in multipass_grids(n, block * iters):
        dst = out if programs == 1 else arrays.empty((programs,), "float32", x)
        launch(reduce_chunk_kernel, (programs,), src, dst, m, IS_MAX=is_max, BLOCK=block, ITERS=iters,
               num_warps=num_warps or cfg["num_warps"])
        src, m = dst, programs
    return out


def sum_triton(x, out=None, **kw):
    """Triton sum: CuPy/torch arrays on a GPU, NumPy/torch CPU arrays in the interpreter."""
    return _triton_reduce(x, out, False, **kw)


def max_triton(x, out=None, **kw):
    return _triton_reduce(x, out, True, **kw)


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _peers(cupy_op: str, torch_op: str):
    """CuPy's and torch's call for one reduction (cupy.sum / torch.sum, ...), each writing its scalar into out."""
    def with_cupy(x, out=None):
        import cupy

        out = arrays.check_out(out, (), "float32", x)
        return getattr(cupy, cupy_op)(x, out=out)

    def with_torch(x, out=None):
        import torch

        out = arrays.check_out(out, (), "float32", x)
        torch.from_dlpack(out.reshape(1)).copy_(getattr(torch, torch_op)(torch.from_dlpack(x)).reshape(1))
        return out

    return with_cupy, with_torch


peer_cupy_sum, peer_torch_sum = _peers("sum", "sum")
peer_cupy_max, peer_torch_max = _peers("max", "amax")


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
# awkward lengths: 1, primes, one off a power of two, more than one grid of rungs 07-10 (2^22 + 3 > 1056 x 1024 x 4).
# --quick checks the first QUICK_CASES: on a GPU a spread from 1 element to more than one block per SM.
_QUICK_N = (1, 1000, 4097, 2**20 + 1)
CHECK_CASES = [(n, "float32") for n in _QUICK_N + tuple(n for n in check.AWKWARD_1D if n not in _QUICK_N)
               + (EXACT_UP_TO - 1, EXACT_UP_TO + 3)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 3, 31, 1000, 4097, 65537, 140_001)]
QUICK_CASES = 4


class MAX_LAB:  # noqa: N801 - a lab-shaped namespace so common.lab.check_variants can check the max variants too
    reference = staticmethod(reference_max)
    make_inputs = staticmethod(make_inputs_max)
    CHECK_CASES = CHECK_CASES
    CPU_CHECK_CASES = CPU_CHECK_CASES


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the sum of the benchmark's main size on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the benchmark holds: n fp32 values (the partials are small)."""
    return 4 * n


_LADDER = [("cuda 01 interleaved, divergent", "reduce_01_interleaved_divergent", THREADS),
           ("cuda 02 interleaved, strided index", "reduce_02_interleaved_strided_index", THREADS),
           ("cuda 03 sequential addressing", "reduce_03_sequential_addressing", THREADS),
           ("cuda 04 first add during load", "reduce_04_first_add_during_load", 2 * THREADS),
           ("cuda 05 unrolled last warp", "reduce_05_unroll_last_warp", 2 * THREADS),
           ("cuda 06 warp shuffle", "reduce_06_warp_shuffle", 2 * THREADS)]


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or N_MAIN, bench_bytes, gpu)
    case = tr("sum of {n} float32", n=plan.fmt_size(n))
    fast = fast_config()
    cu = dict(impl="cuda", source=CU, threads=THREADS, defines=_defines(), config_source=fast.source())
    out = []
    for variant, kernel, per_block in _LADDER:
        grids = multipass_grids(n, per_block)
        out += [plan.Launch(variant, kernel, grid=g, case=tr("{case}, pass {i} of {n}", case=case, i=i + 1,
                                                             n=len(grids)), **cu)
                for i, g in enumerate(grids)]
    g = fast_grid(n, gpu)
    out += [plan.Launch("cuda 07 float4 grid-stride, 2 passes", "reduce_07_float4_grid_stride", grid=g,
                        case=tr("{case}, pass 1: one partial per block", case=case), **cu),
            plan.Launch("cuda 07 float4 grid-stride, 2 passes", "reduce_07_float4_grid_stride", grid=1,
                        case=tr("{case}, pass 2: one block over {g} partials", case=case, g=g), **cu),
            plan.Launch("cuda 08 single pass, atomics", "reduce_08_atomic_finish", grid=g, case=case, **cu),
            plan.Launch("cuda 09 single pass, last block", "reduce_09_last_block", grid=g, case=case, **cu),
            plan.Launch("cuda 10 single pass, Kahan", "reduce_10_kahan", grid=g, case=case, **cu)]
    t = triton_config()
    grids = multipass_grids(n, t["BLOCK"] * t["ITERS"])
    out += [plan.Launch("triton chunked, 2 passes", "reduce_chunk_kernel", "triton", fn=reduce_chunk_kernel, grid=g,
                        signature={"x_ptr": "*fp32", "part_ptr": "*fp32", "n": "i32", "IS_MAX": "constexpr",
                                   "BLOCK": "constexpr", "ITERS": "constexpr"},
                        defines={"IS_MAX": False, "BLOCK": t["BLOCK"], "ITERS": t["ITERS"]},
                        num_warps=t["num_warps"], case=tr("{case}, pass {i} of {n}", case=case, i=i + 1, n=len(grids)),
                        config_source=t.source())
            for i, g in enumerate(grids)]
    return out
