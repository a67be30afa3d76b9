"""Lab 2.3 - Warp shuffle: warp-level reduce and scan in registers, against the shared-memory versions.

You will learn
  * what a warp shuffle is: one instruction that moves a register between the 32 lanes of a warp, with no memory and
    no barrier; __shfl_down_sync (lane i reads lane i + d), __shfl_xor_sync (lanes i and i ^ m swap: a butterfly,
    every lane ends with the result) and __shfl_up_sync (lane i reads lane i - d: the scan);
  * what the mask means (the lanes that execute the call, all 32 here), why tail lanes must load 0 and stay in the
    loop instead of returning, and why no __syncthreads is needed (nothing leaves the warp), while the shared-memory
    versions still need __syncwarp between steps (since Volta, the lanes of a warp are not guaranteed to run in
    lockstep, so a store by one lane is not guaranteed visible to another without it);
  * the cost model: 11 shared-memory passes per 32-element segment for the tree in shared memory vs 5 shuffles, at
    one pass per clock per SM; where HBM delivers a segment to an SM in fewer than 11 clocks (5 to 10 on the GPUs with
    the most bandwidth per SM; `--plan` prints this GPU's), even streaming from HBM the shared-memory version should be
    the slower one, and on every GPU it is from L2;
  * how warp primitives compose into a scan of an array of any length: sum each segment of 32, scan the sums (the same
    two kernels on an array 32x shorter, recursively), then scan each segment and add its offset.

The two numbers, for n fp32 elements (main case n = 2^28, 1 GiB): per-warp sums read 4 n bytes and write n / 8 (about
1.1 GB), with 31 adds per 32 elements (0.26 GFLOP): 0.24 FLOP/B, memory wins. An inclusive scan must read 4 n and
write 4 n bytes (2.15 GB) and do n adds: memory wins again. The reduce-then-scan built here moves ~12.6 n bytes (x is
read twice), so it is bound at 8 / 12.6 = 63% of the speed of a one-pass scan running at the ceiling (torch.cumsum
uses CUB's single-pass decoupled look-back scan, which reads x once). The lesson, the predictions, what the
measurements taught and this GPU's measured figures: README.md.

Run: python -m phase2_cuda.lab03_warp_shuffle [--quick] [--size N] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set SEGS=4]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, config, cuda, device, lab, occupancy, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import segment_scan_kernel, segment_sum_kernel

LAB = "phase2_lab03_warp_shuffle"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
# The warp kernels' configuration (the lab's default; `--set SEGS=4` or `--set WARPS=4` override it): SEGS segments
# of 32 per warp, all loaded before any is reduced (SEGS loads in flight per thread), WARPS warps per block.
SHUFFLE = dict(SEGS=8, WARPS=8)
SEGS, WARPS = SHUFFLE["SEGS"], SHUFFLE["WARPS"]
MAIN_N = 2**28
# shared-memory passes / shuffles per 32-element segment (from the kernels' structure; see the kernel headers)
PASSES = {"reduce smem": 1 + 5 * 2, "reduce shfl": 5, "scan smem": 1 + 5 * 2, "scan shfl": 5}


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs: (per-warp sums, inclusive scan)
# ---------------------------------------------------------------------------------------------------------------------
def segment_count(n: int) -> int:
    return (int(n) + 31) // 32


def reference(x: np.ndarray):
    x = np.asarray(x, np.float64).ravel()
    w = segment_count(x.size)
    padded = np.zeros(w * 32)
    padded[: x.size] = x
    return padded.reshape(w, 32).sum(axis=1), np.cumsum(x)


def reduce_then_scan_bytes(n: int) -> int:
    """DRAM bytes of _scan_into: read x, write sums; read x and offsets, write y; then the sums' own scan."""
    w = segment_count(n)
    b = 4 * n + 4 * w + 4 * n + 4 * n + (4 * w if w > 1 else 0)
    return b + (reduce_then_scan_bytes(w) if w > 1 else 0)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """Zero-mean values: a scan's prefix sums then stay O(sqrt(i)), so an element that is off by one input value
    stands out against the tolerance (with a large mean, |prefix| grows like i and would hide it).

    The values are non-zero integers in [-8, 8], so every sum and prefix is exact in float32 in any order (they stay
    far below 2^24): with normal values a 32-element warp sum can cancel to near zero, where a correct kernel's
    last-bit rounding exceeds the relative tolerance.
    """
    x = rng.integers(1, 9, size=int(n)) * rng.choice([-1.0, 1.0], size=int(n))
    return (arrays.from_numpy(x, dtype, where),)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C: reduce-then-scan, driven from the host
# ---------------------------------------------------------------------------------------------------------------------
REDUCE = {"smem": "warp_reduce_01_smem", "down": "warp_reduce_02_shfl_down", "xor": "warp_reduce_03_shfl_xor"}
SCAN = {"smem": "warp_scan_01_smem", "up": "warp_scan_02_shfl_up"}


def shuffle_config() -> config.Resolved:
    return config.resolve("warp_reduce / warp_scan", SHUFFLE, validate=_check_shuffle)


def _check_shuffle(cfg: dict) -> dict:
    segs, warps = cfg["SEGS"], cfg["WARPS"]
    # the shared-memory kernels declare WARPS x SEGS x 32 floats: at most 48 KiB, what a kernel may declare statically
    if not 1 <= segs <= 32 or warps not in (1, 2, 4, 8, 16, 32) or warps * segs * 128 > 48 * 1024:
        raise ValueError(tr("warp kernels: SEGS in 1..32 (warp_reduce_03 stores segment k from lane k), WARPS a power "
                            "of two up to 32, WARPS x SEGS x 128 B <= 48 KiB; got {got}", got=config.fmt(cfg)))
    return cfg


def shuffle_defines(cfg: dict) -> dict:
    """-D values of the warp kernels: none at the default (kernels.cu's own)."""
    return {} if cfg == SHUFFLE else dict(cfg)


def blocks_for(n: int, segs: int, warps: int) -> int:
    """The warp kernels' grid for n elements: SEGS segments per warp, WARPS warps per block."""
    return max(1, math.ceil(segment_count(n) / (segs * warps)))


def _launch(name: str, n: int, args) -> None:
    cfg = shuffle_config().values
    k = cuda.get_kernel(CU, name, defines=shuffle_defines(cfg) or None)
    k((blocks_for(n, cfg["SEGS"], cfg["WARPS"]),), (32 * cfg["WARPS"],), args)


def levels(n: int) -> list[int]:
    """The lengths the reduce-then-scan works on: n, its segment sums, their segment sums, ... down to one segment."""
    out = [int(n)]
    while segment_count(out[-1]) > 1:
        out.append(segment_count(out[-1]))
    return out


def warp_sums(x, out=None, *, kind: str = "down"):
    """sums[g] = x[32 g] + ... + x[32 g + 31] with one of the warp_reduce kernels ('smem', 'down', 'xor')."""
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=("cupy",))
    if kind not in REDUCE:
        raise ValueError(f"kind: expected one of {sorted(REDUCE)}, got {kind!r}")
    n = arrays.size(x)
    out = arrays.check_out(out, (segment_count(n),), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    if n:
        _launch(REDUCE[kind], n, (x, out, np.int64(n)))
    return out


def _scan_into(x, y, sums, reduce_kind: str, scan_kind: str) -> None:
    """y = inclusive scan of x; sums (length ceil(n / 32)) receives the segment sums on the way."""
    import cupy

    n = arrays.size(x)
    warp_sums(x, sums, kind=reduce_kind)
    w = segment_count(n)
    if w > 1:
        offsets = cupy.empty(w, cupy.float32)                    # inclusive scan of the segment sums ...
        _scan_into(sums, offsets, cupy.empty(segment_count(w), cupy.float32), reduce_kind, scan_kind)
    else:
        offsets = sums                                           # ... not needed for one segment (never read)
    _launch(SCAN[scan_kind], n, (x, offsets, y, np.int64(n)))


def _split_out(out):
    """out is None or a (sums, scan) pair."""
    if out is None:
        return None, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"out: expected a (sums, scan) pair of arrays, got {type(out).__name__}")
    return out


def _prepare(x, out):
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=("cupy",))
    n = arrays.size(x)
    sums, y = _split_out(out)
    sums = arrays.check_out(sums, (segment_count(n),), "float32", x, name="out[0] (sums)")
    y = arrays.check_out(y, (n,), "float32", x, name="out[1] (scan)")
    for name, o in (("out[0] (sums)", sums), ("out[1] (scan)", y)):
        arrays.check_array(name, o, dtypes=("float32",), ndim=1, libs=("cupy",))
    if n and (arrays.ptr(y) == arrays.ptr(x)):
        raise ValueError("out[1] (scan): must not be x itself (x is read twice, after the scan starts writing)")
    return n, sums, y


def _variant(reduce_kind: str, scan_kind: str):
    def run(x, out=None):
        n, sums, y = _prepare(x, out)
        if n:
            _scan_into(x, y, sums, reduce_kind, scan_kind)
        return sums, y
    return run


scan_cuda_01 = _variant("smem", "smem")
scan_cuda_01.__doc__ = "Shared-memory tree reduce + Hillis-Steele scan (with __syncwarp)."
scan_cuda_02 = _variant("down", "up")
scan_cuda_02.__doc__ = "__shfl_down_sync reduce + __shfl_up_sync scan."
scan_cuda_03 = _variant("xor", "up")
scan_cuda_03.__doc__ = "__shfl_xor_sync (butterfly) reduce + __shfl_up_sync scan."


# ---------------------------------------------------------------------------------------------------------------------
# Triton: the same decomposition with the tl.sum / tl.cumsum kernels of triton_kernels.py
# ---------------------------------------------------------------------------------------------------------------------
TRITON = dict(SEGS_T=32, num_warps=4)     # 32 segments, 1024 elements, per program


def triton_config() -> config.Resolved:
    return config.resolve("triton segment_sum / segment_scan", TRITON, validate=_check_triton)


def _check_triton(cfg: dict) -> dict:
    if cfg["SEGS_T"] not in (1, 2, 4, 8, 16, 32, 64, 128) or cfg["num_warps"] not in (1, 2, 4, 8, 16):
        raise ValueError(tr("triton segment kernels: SEGS_T a power of two in 1..128, num_warps in 1, 2, 4, 8, 16; "
                            "got {got}", got=config.fmt(cfg)))
    return cfg


def triton_programs(n: int, segs_t: int) -> int:
    return max(1, triton.cdiv(segment_count(n), segs_t))


def triton_segment_sums(x, sums, n: int) -> None:
    """The Triton segment sums alone (the first half of the scan; the benchmark times it by itself)."""
    cfg = triton_config().values
    launch(segment_sum_kernel, (triton_programs(n, cfg["SEGS_T"]),), x, sums, n, SEGS_T=cfg["SEGS_T"],
           num_warps=cfg["num_warps"])


def _triton_scan_into(x, y, sums) -> None:
    n = arrays.size(x)
    w = segment_count(n)
    triton_segment_sums(x, sums, n)
    if w > 1:
        offsets = arrays.empty((w,), "float32", x)
        _triton_scan_into(sums, offsets, arrays.empty((segment_count(w),), "float32", x))
    else:
        offsets = sums
    cfg = triton_config().values
    launch(segment_scan_kernel, (triton_programs(n, cfg["SEGS_T"]),), x, offsets, y, n, SEGS_T=cfg["SEGS_T"],
           num_warps=cfg["num_warps"])


def scan_triton(x, out=None):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, device=dev)
    n = arrays.size(x)
    sums, y = _split_out(out)
    sums = arrays.check_out(sums, (segment_count(n),), "float32", x, name="out[0] (sums)")
    y = arrays.check_out(y, (n,), "float32", x, name="out[1] (scan)")
    for name, o in (("out[0] (sums)", sums), ("out[1] (scan)", y)):
        arrays.check_array(name, o, dtypes=("float32",), ndim=1, device=dev)
    if n:
        _triton_scan_into(x, y, sums)
    return sums, y


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _peer_out(x, out):
    n = arrays.size(x)
    sums, y = _split_out(out)
    return (arrays.check_out(sums, (segment_count(n),), "float32", x), arrays.check_out(y, (n,), "float32", x))


def peer_cupy(x, out=None):
    import cupy

    sums, y = _peer_out(x, out)
    n = arrays.size(x)
    padded = cupy.zeros(segment_count(n) * 32, cupy.float32)
    padded[:n] = x
    cupy.sum(padded.reshape(-1, 32), axis=1, out=sums)
    cupy.cumsum(x, out=y)
    return sums, y


def peer_torch(x, out=None):
    import torch

    sums, y = _peer_out(x, out)
    n = arrays.size(x)
    tx = torch.from_dlpack(x)
    padded = torch.nn.functional.pad(tx, (0, segment_count(n) * 32 - n))
    torch.sum(padded.view(-1, 32), dim=1, out=torch.from_dlpack(sums))
    torch.cumsum(tx, 0, out=torch.from_dlpack(y))
    return sums, y


VARIANTS = [
    lab.Variant("cuda 01 shared memory", scan_cuda_01, "cuda", note="tree + Hillis-Steele, __syncwarp"),
    lab.Variant("cuda 02 shfl_down + shfl_up", scan_cuda_02, "cuda"),
    lab.Variant("cuda 03 shfl_xor + shfl_up", scan_cuda_03, "cuda"),
    lab.Variant("triton tl.sum + tl.cumsum", scan_triton, "triton"),
]
PEERS = [
    lab.Variant("cupy sum + cumsum", peer_cupy, "peer"),
    lab.Variant("torch sum + cumsum", peer_torch, "peer"),
]
CHECK_CASES = [(n, "float32") for n in (1, 2, 31, 32, 33, 63, 1000, 1023, 2048, 2049, 4097, 65537, 1_000_003,
                                        2**22 + 3)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 33, 1000, 5000)]
QUICK_CASES = 9                # --quick checks the first nine (on the CPU: all four)


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's main case on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the scan benchmark holds: x, the scan, the segment sums and the levels below (the offsets)."""
    return 4 * n + 4 * n + sum(8 * m for m in levels(n)[1:])


def resident_threads(gpu: device.DeviceInfo, kernel: str = "warp_reduce_02_shfl_down") -> int:
    """Threads of a warp kernel that one SM holds at once on `gpu` (common.occupancy, its registers there)."""
    cfg = shuffle_config().values
    regs, smem = cuda.resources(CU, kernel, gpu, shuffle_defines(cfg) or None)
    return occupancy.occupancy(gpu.arch, 32 * cfg["WARPS"], regs, smem).active_threads


_VARIANT_KINDS = [("cuda 01 shared memory", "smem", "smem"), ("cuda 02 shfl_down + shfl_up", "down", "up"),
                  ("cuda 03 shfl_xor + shfl_up", "xor", "up")]
_TRITON_SIG = {"x_ptr": "*fp32", "sums_ptr": "*fp32", "n": "i32", "SEGS_T": "constexpr"}
_TRITON_SCAN_SIG = {"x_ptr": "*fp32", "offsets_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "SEGS_T": "constexpr"}


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    """Every level of every variant's reduce-then-scan: a segment-sum launch and a segment-scan launch per level."""
    n, _ = plan.fit(size or MAIN_N, bench_bytes, gpu)
    sh, tc = shuffle_config(), triton_config()
    out = []
    for variant, red, scan in _VARIANT_KINDS:
        for i, m in enumerate(levels(n)):
            kw = dict(impl="cuda", source=CU, grid=blocks_for(m, sh["SEGS"], sh["WARPS"]), threads=32 * sh["WARPS"],
                      defines=shuffle_defines(sh.values),
                      case=tr("level {i}: {n} float32", i=i, n=plan.fmt_size(m)), config_source=sh.source())
            out += [plan.Launch(variant, REDUCE[red], **kw), plan.Launch(variant, SCAN[scan], **kw)]
    for i, m in enumerate(levels(n)):
        kw = dict(impl="triton", grid=triton_programs(m, tc["SEGS_T"]), defines={"SEGS_T": tc["SEGS_T"]},
                  num_warps=tc["num_warps"], case=tr("level {i}: {n} float32", i=i, n=plan.fmt_size(m)),
                  config_source=tc.source())
        out += [plan.Launch("triton tl.sum + tl.cumsum", "segment_sum_kernel", fn=segment_sum_kernel,
                            signature=_TRITON_SIG, **kw),
                plan.Launch("triton tl.sum + tl.cumsum", "segment_scan_kernel", fn=segment_scan_kernel,
                            signature=_TRITON_SCAN_SIG, **kw)]
    return out
