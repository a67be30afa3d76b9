"""Lab 1.2 - Vector add: the first kernel, and what it says about memory bandwidth.

You will learn
  * how a grid of blocks of threads covers an array, why the last block needs a bounds check, and why the index must
    be 64-bit once arrays pass 2^31 elements;
  * what a grid-stride loop is for (a grid sized to the GPU, not to the data);
  * why 16-byte loads (float4, LDG.E.128 in SASS) and more bytes in flight per thread matter, and what they need
    (16-byte alignment: a misaligned view must fall back to the scalar path, never read past the end);
  * the same kernel in Triton: a program per block of elements, a mask instead of an if;
  * the three regimes of a bandwidth-bound kernel as the size grows: launch-bound (a few microseconds whatever the
    size), L2-resident (the three arrays fit in L2 and are re-read from it), and HBM-bound.

The two numbers, for n fp32 elements: bytes = 12 n (two 4-byte loads and one 4-byte store per element), FLOPs = n.
One FLOP per 12 bytes is two orders of magnitude below the ridge point of any current GPU (`--plan` prints this
GPU's): memory wins, and the best any version can do is move 12 n bytes at the measured HBM ceiling (2^28 elements
move 3 GiB). The target:
at 2^28 elements and above, the float4 kernels and Triton reach >= 1.0x torch.add. The lesson, the predictions and
this GPU's measured figures: README.md.

Run: python -m phase1_architecture.lab02_vector_add [--quick] [--size N] [--tune] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set UNROLL=2]
"""
from __future__ import annotations

import functools
import math
import os

import numpy as np

from common import arrays, check, config, cuda, device, lab, occupancy, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import add_kernel

LAB = "phase1_lab02_vector_add"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256                # threads per block of vadd_01 .. vadd_03
# vadd_04's launch and compile-time parameters (the lab's default; `--set UNROLL=2` and the like override them): threads
# per block, float4 per thread (UNROLL), streaming stores (STREAM). The lab's --tune sweep times the alternatives
# against torch.add; the lesson (README.md) says what it found: every configuration lands within a few percent,
# because enough resident threads x 16 bytes of loads each already cover the memory latency.
V04 = dict(THREADS_04=256, UNROLL=1, STREAM=1)
BENCH_N = 2**29              # the benchmark's largest size (12 n bytes = 6 GiB)


def v04_config() -> config.Resolved:
    return config.resolve("vadd_04_float4_ilp", V04, validate=_check_v04)


def _check_v04(v: dict) -> dict:
    if v["THREADS_04"] not in (32, 64, 128, 256, 512, 1024) or v["UNROLL"] not in (1, 2, 4, 8) or \
            v["STREAM"] not in (0, 1):
        raise ValueError(tr("vadd_04: THREADS_04 in 32..1024 (a power of two), UNROLL in 1, 2, 4, 8, STREAM 0 or 1; "
                            "got {got}", got=config.fmt(v)))
    return v


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) + np.asarray(b, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """Two random vectors (normal, with a few large values so a wrong element cannot hide as a small error)."""
    a = rng.standard_normal(n) * 4.0
    b = rng.standard_normal(n)
    if n > 16:
        a[rng.integers(0, n, 4)] = 3e4
    return arrays.from_numpy(a, dtype, where), arrays.from_numpy(b, dtype, where)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(a, b, out):
    """Validate before any launch; returns (out, n)."""
    arrays.check_array("a", a, dtypes=("float32",), libs=("cupy",))
    arrays.check_array("b", b, dtypes=("float32",), libs=("cupy",))
    arrays.check_same("a, b", a, b)
    out = arrays.check_out(out, a.shape, "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    return out, arrays.size(a)


def resident_blocks(gpu: device.DeviceInfo | None = None) -> int:
    """Blocks of THREADS threads that fill every SM once (one wave): the occupancy calculator on vadd_02, with its
    registers on this GPU (or on `gpu`, a simulated one)."""
    gpu = gpu or device.current()
    regs, smem = cuda.resources(CU, "vadd_02_grid_stride", gpu)
    occ = occupancy.occupancy(gpu.arch, THREADS, regs, smem)
    return gpu.sms * max(1, occ.blocks_per_sm)


@functools.lru_cache(maxsize=None)
def _resident_blocks() -> int:
    return resident_blocks(device.info())


def _run(name: str, blocks: int, a, b, out, n: int):
    k = cuda.get_kernel(CU, name)
    k((max(1, blocks),), (THREADS,), (a, b, out, np.int64(n)))
    return out


def add_cuda_01(a, b, out=None):
    """One thread per element."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    return _run("vadd_01_one_thread_per_element", math.ceil(n / THREADS), a, b, out, n)


def add_cuda_02(a, b, out=None):
    """Grid-stride loop over a grid that fills the GPU once."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)


def float4_ok(a, b, out) -> bool:
    """The float4 kernels need all three arrays on 16-byte boundaries (a view at an odd offset is not)."""
    return all(arrays.aligned(x, 16) for x in (a, b, out))


def add_cuda_03(a, b, out=None):
    """One float4 per thread; falls back to the grid-stride kernel for misaligned views."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    if not float4_ok(a, b, out):
        return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)
    return _run("vadd_03_float4", math.ceil((n // 4) / THREADS), a, b, out, n)


def add_cuda_04(a, b, out=None, *, threads=None, unroll=None, stream=None):
    """UNROLL float4 per thread, all loads issued first; falls back for misaligned views."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    if not float4_ok(a, b, out):
        return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)
    cfg = v04_config().values
    threads = threads or cfg["THREADS_04"]
    unroll = unroll or cfg["UNROLL"]
    stream = cfg["STREAM"] if stream is None else stream
    k = cuda.get_kernel(CU, "vadd_04_float4_ilp", defines={"UNROLL": unroll, "STREAM": stream})
    k((v04_blocks(n, threads, unroll),), (threads,), (a, b, out, np.int64(n)))
    return out


def v04_blocks(n: int, threads: int, unroll: int) -> int:
    return max(1, math.ceil((n // 4) / (threads * unroll)))


# ---------------------------------------------------------------------------------------------------------------------
# Triton: add_kernel of triton_kernels.py
# ---------------------------------------------------------------------------------------------------------------------
# 512 elements / 128 threads = 4 per thread: one 16-byte load per input, like vadd_04 with one float4 per thread and
# evict-first stores. The lab's --tune sweep ranks the alternatives (the lesson has the result: all within noise).
# Phase 3's lab 3.1 reads these two names.
TRITON = dict(BLOCK=512, num_warps=4)
TRITON_BLOCK, TRITON_WARPS = TRITON["BLOCK"], TRITON["num_warps"]


def triton_config() -> config.Resolved:
    return config.resolve("triton add_kernel", TRITON)


def add_triton(a, b, out=None, *, block=None, num_warps=None):
    """Triton vector add: fp32 or fp16, CuPy/torch arrays on a GPU, NumPy/torch CPU arrays in the interpreter."""
    dev = not INTERPRETER
    dt = arrays.check_array("a", a, dtypes=("float32", "float16"), device=dev)
    arrays.check_array("b", b, dtypes=("float32", "float16"), device=dev)
    arrays.check_same("a, b", a, b)
    out = arrays.check_out(out, a.shape, dt, a)
    n = arrays.size(a)
    if n == 0:
        return out
    cfg = triton_config().values
    block = block or cfg["BLOCK"]
    grid = (triton.cdiv(n, block),)
    launch(add_kernel, grid, a, b, out, n, BLOCK=block, num_warps=num_warps or cfg["num_warps"])
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers: what a learner would call instead
# ---------------------------------------------------------------------------------------------------------------------
def peer_cupy_add(a, b, out=None):
    import cupy

    out = arrays.check_out(out, a.shape, arrays.dtype_name(a), a)
    return cupy.add(a, b, out=out)


def peer_torch_add(a, b, out=None):
    import torch

    out = arrays.check_out(out, a.shape, arrays.dtype_name(a), a)
    torch.add(torch.from_dlpack(a), torch.from_dlpack(b), out=torch.from_dlpack(out))
    return out


VARIANTS = [
    lab.Variant("cuda 01 one thread per element", add_cuda_01, "cuda"),
    lab.Variant("cuda 02 grid-stride", add_cuda_02, "cuda"),
    lab.Variant("cuda 03 float4", add_cuda_03, "cuda"),
    lab.Variant("cuda 04 float4 streaming store", add_cuda_04, "cuda"),
    lab.Variant("triton", add_triton, "triton", dtypes=("float32", "float16")),
]
PEERS = [
    lab.Variant("cupy.add", peer_cupy_add, "peer", dtypes=("float32", "float16")),
    lab.Variant("torch.add", peer_torch_add, "peer", dtypes=("float32", "float16")),
]
CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D] + [(n, "float16") for n in (1, 1000, 65537)]
CPU_CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D_SMALL] + [(4097, "float16")]




# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's largest case on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or BENCH_N, bench_bytes, gpu)
    case = f"n = {plan.fmt_size(n)} float32"
    v04 = v04_config().values
    tcfg = triton_config()
    cu = dict(impl="cuda", source=CU, threads=THREADS, case=case)
    return [
        plan.Launch("cuda 01 one thread per element", "vadd_01_one_thread_per_element", grid=math.ceil(n / THREADS),
                    **cu),
        plan.Launch("cuda 02 grid-stride", "vadd_02_grid_stride", grid=min(math.ceil(n / THREADS),
                                                                           resident_blocks(gpu)), **cu),
        plan.Launch("cuda 03 float4", "vadd_03_float4", grid=math.ceil((n // 4) / THREADS), **cu),
        plan.Launch("cuda 04 float4 streaming store", "vadd_04_float4_ilp", "cuda", source=CU,
                    grid=v04_blocks(n, v04["THREADS_04"], v04["UNROLL"]), threads=v04["THREADS_04"],
                    defines={"UNROLL": v04["UNROLL"], "STREAM": v04["STREAM"]}, case=case,
                    config_source=v04_config().source()),
        plan.Launch("triton", "add_kernel", "triton", fn=add_kernel, grid=math.ceil(n / tcfg["BLOCK"]),
                    signature={"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32",
                               "BLOCK": "constexpr"},
                    defines={"BLOCK": tcfg["BLOCK"]}, num_warps=tcfg["num_warps"], case=case,
                    config_source=tcfg.source()),
    ]


def bench_bytes(n: int) -> int:
    """Bytes the benchmark holds at once at size n: three fp32 arrays."""
    return 12 * n
