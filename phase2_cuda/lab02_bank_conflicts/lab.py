"""Lab 2.2 - Shared memory and bank conflicts: 1-way to 32-way, measured, and the padding and swizzle fixes.

You will learn
  * how shared memory is banked (32 banks of 4 bytes, word w in bank w mod 32) and how one warp instruction is served:
    in as many passes as the most-asked bank has distinct words; the same word for many lanes is a free broadcast;
  * to predict the degree of a conflict before running anything: lane stride s costs gcd(s, 32) passes (odd strides are
    free, 32 is the worst), with a 20-line simulator you can point at any access pattern;
  * to measure it: a micro-benchmark sweeps the stride from 0 to 33 and times every pass;
  * the two fixes for the classic case (a warp walking the rows of a 32 x 32 tile): pad each row to 33 words, or keep
    32 and XOR-swizzle the column (word r * 32 + (c ^ r)), and when each is the right one;
  * that a conflict matters in a real kernel when it makes shared memory slower than DRAM: row sums of a rows x 32
    matrix, memory-bound when conflict-free, several times slower with the 32-way conflict on a GPU whose HBM
    outpaces it (and no slower on one whose HBM does not).

The two numbers, for the row sums of a rows x 32 fp32 matrix (main case rows = 2^23, 1 GiB): bytes = 132 per row
(128 read, 4 written) = 1.11 GB, FLOPs = 31 per row = 0.26 GFLOP: 0.23 FLOP/B, memory wins if shared memory keeps up.
With the 32-way conflict each 4 KiB tile costs 32 + 32 x 32 = 1056 shared-memory passes (one per clock per SM): 4096 B
per 1056 clocks, ~3.9 B per clock per SM. Where HBM delivers several times that to each SM (the GPUs of the table span
~2.5 to ~26 B per clock; `--plan` prints this GPU's), shared memory wins and the conflicted kernel is that many times
slower; where it delivers less, the conflict hides under the DRAM time.
The stride sweep moves no DRAM bytes to speak of: it requests 128 B of shared memory per warp load, and its FLOPs
(one add per load) hide under the loads. The lesson, the predictions, what the measurements taught and this GPU's
measured figures: README.md.

Run: python -m phase2_cuda.lab02_bank_conflicts [--quick] [--size ROWS] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set WARPS=4]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, config, cuda, device, lab, occupancy, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import rowsum_kernel

LAB = "phase2_lab02_bank_conflicts"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
BANKS = 32
READS, MAX_STRIDE = 32, 64                    # kernels.cu's defaults
BUF_WORDS = 31 * MAX_STRIDE + READS           # words each sweep block stages in shared memory
SWEEP_THREADS = 256
SWEEP_REPS = 80                               # repetitions of the 32 loads per thread in --quick (4x in a full run)
MAIN_ROWS = 2**23
# The row-sum kernels' warps per block (`--set WARPS=4` overrides it): every warp owns one 32 x 32 tile, so a block
# of 8 warps declares 8 x 32 x 33 x 4 B = 33 KiB of shared memory (within the 48 KiB a kernel may declare statically
# on every GPU; 11 warps would be the most).
ROWSUM = dict(WARPS=8)


def rowsum_config() -> config.Resolved:
    return config.resolve("rowsum_01..03", ROWSUM, validate=_check_rowsum)


def _check_rowsum(cfg: dict) -> dict:
    if cfg["WARPS"] not in (1, 2, 4, 8):
        raise ValueError(tr("rowsum_01..03: WARPS in 1, 2, 4, 8 (a 33 KiB tile array at 8), got {got}",
                            got=config.fmt(cfg)))
    return cfg


def rowsum_blocks(rows: int, warps: int) -> int:
    """The row-sum grid: one 32-row tile per warp, `warps` warps per block."""
    return max(1, math.ceil(math.ceil(rows / 32) / warps))


# ---------------------------------------------------------------------------------------------------------------------
# The bank model: a tiny simulator
# ---------------------------------------------------------------------------------------------------------------------
def passes(word_addresses) -> int:
    """Passes (wavefronts) one warp instruction of 4-byte accesses needs: the most distinct words asked of one bank."""
    per_bank: dict[int, set] = {}
    for w in word_addresses:
        per_bank.setdefault(int(w) % BANKS, set()).add(int(w))   # a set: the same word twice is a broadcast
    return max(len(s) for s in per_bank.values())


def stride_passes(stride: int) -> int:
    """Lane i reads word i * stride (bank_01_stride's access, for one j)."""
    return passes(lane * stride for lane in range(32))


def swizzle_passes() -> int:
    """Lane i reads word i * 32 + (j ^ i): the worst j over one row walk (bank_02_xor_swizzle)."""
    return max(passes(lane * 32 + (j ^ lane) for lane in range(32)) for j in range(32))


def tile_passes(layout: str) -> int:
    """Passes for one 32 x 32 tile of the row-sum kernels: 32 row stores (lane = column) + 32 loads (lane = row)."""
    def addr(r, c):
        return {"conflicted": r * 32 + c, "padded": r * 33 + c, "swizzled": r * 32 + (c ^ r)}[layout]
    stores = sum(passes(addr(r, lane) for lane in range(32)) for r in range(32))
    loads = sum(passes(addr(lane, c) for lane in range(32)) for c in range(32))
    return stores + loads


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs (the checked variants: row sums)
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64).sum(axis=1)


def make_inputs(rows: int, dtype: str, rng: np.random.Generator, where: str):
    """A rows x 32 matrix of small integers (1..8) as floats, and a few large ones.

    Integer values make every row sum exact in float32 in any order, so the check cannot fail on rounding: with
    normal values a row can cancel to near zero and a correct kernel's last-bit error exceeds the relative tolerance
    (seen in CI: one row of 32 summed to ~0.007). A skipped or doubled element still changes the sum by >= 1.
    """
    x = rng.integers(1, 9, size=(int(rows), 32)).astype(np.float64)
    if x.size > 64:
        x.flat[rng.integers(0, x.size, 4)] = 1e4
    return (arrays.from_numpy(x, dtype, where),)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare_rows(x, out):
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, libs=("cupy",))
    if x.shape[1] != 32:
        raise ValueError(f"x: expected rows of 32 floats (one per bank), got shape {tuple(x.shape)}")
    rows = int(x.shape[0])
    out = arrays.check_out(out, (rows,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    return out, rows


def _rowsum(name: str, x, out):
    out, rows = _prepare_rows(x, out)
    if rows == 0:
        return out
    warps = rowsum_config()["WARPS"]
    k = cuda.get_kernel(CU, name, defines=rowsum_defines(warps))
    k((rowsum_blocks(rows, warps),), (32 * warps,), (x, out, np.int64(rows)))
    return out


def rowsum_defines(warps: int) -> dict | None:
    """-D values of the row-sum kernels: none at the default (kernels.cu's own 8)."""
    return None if warps == ROWSUM["WARPS"] else {"WARPS": warps}


def rowsum_cuda_01(x, out=None):
    """tile[32][32]: lane i walks row i, 32-way conflicts."""
    return _rowsum("rowsum_01_conflicted", x, out)


def rowsum_cuda_02(x, out=None):
    """tile[32][33]: padding."""
    return _rowsum("rowsum_02_padded", x, out)


def rowsum_cuda_03(x, out=None):
    """tile[32][32] with word r * 32 + (c ^ r): XOR swizzle."""
    return _rowsum("rowsum_03_swizzled", x, out)


def _prepare_sweep(src, blocks: int, out):
    arrays.check_array("src", src, dtypes=("float32",), ndim=1, libs=("cupy",))
    if arrays.size(src) < BUF_WORDS:
        raise ValueError(f"src: needs at least {BUF_WORDS} floats (the shared buffer), got {arrays.size(src)}")
    if not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise ValueError(f"blocks: expected a positive integer, got {blocks!r}")
    out = arrays.check_out(out, (int(blocks) * SWEEP_THREADS,), "float32", src)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    return out


def _check_reps(reps) -> int:
    if not isinstance(reps, (int, np.integer)) or not 1 <= reps <= 100_000:
        raise ValueError(f"reps: expected an integer in 1..100000, got {reps!r}")
    return int(reps)


def stride_read(src, stride: int, reps: int, blocks: int, out=None):
    """bank_01_stride: every thread sums words (lane * stride + j), j < 32, reps times."""
    if not isinstance(stride, (int, np.integer)) or not 0 <= stride <= MAX_STRIDE:
        raise ValueError(f"stride: expected an integer in 0..{MAX_STRIDE}, got {stride!r}")
    reps = _check_reps(reps)
    out = _prepare_sweep(src, blocks, out)
    cuda.get_kernel(CU, "bank_01_stride")((int(blocks),), (SWEEP_THREADS,), (src, out, np.int32(stride),
                                                                              np.int32(reps)))
    return out


def swizzle_read(src, reps: int, blocks: int, out=None):
    """bank_02_xor_swizzle: the stride-32 walk with word lane * 32 + (j ^ lane)."""
    reps = _check_reps(reps)
    out = _prepare_sweep(src, blocks, out)
    cuda.get_kernel(CU, "bank_02_xor_swizzle")((int(blocks),), (SWEEP_THREADS,), (src, out, np.int32(reps)))
    return out


def blocks_per_sm(kernel: str, threads: int, gpu: device.DeviceInfo) -> int:
    """Resident blocks per SM of a kernel of kernels.cu: the driver's figure on the GPU at hand, common.occupancy's
    with the kernel's registers and shared memory on a simulated one."""
    if not gpu.simulated and device.has_gpu():
        from cupy_backends.cuda.api import driver

        return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(cuda.get_kernel(CU, kernel).kernel.ptr, threads,
                                                                      0))
    regs, smem = cuda.resources(CU, kernel, gpu)
    return occupancy.occupancy(gpu.arch, threads, regs, smem).blocks_per_sm


def sweep_wave(gpu: device.DeviceInfo) -> tuple[int, int]:
    """(blocks, blocks per SM): one wave that both sweep kernels fit in at once (the swizzled one holds 32 addresses
    in registers: fewer of its blocks may fit)."""
    per_sm = min(blocks_per_sm(k, SWEEP_THREADS, gpu) for k in ("bank_01_stride", "bank_02_xor_swizzle"))
    return gpu.sms * per_sm, per_sm


def sweep_reference(src: np.ndarray, stride: int, reps: int, threads: int) -> np.ndarray:
    """What every thread of the sweep kernels sums (the swizzled walk equals stride 32)."""
    s = np.asarray(src, np.float64)
    per_lane = np.array([s[lane * stride: lane * stride + READS].sum() for lane in range(32)])
    return reps * np.tile(per_lane, threads // 32)


def sweep_source(rng: np.random.Generator, where: str = "cuda"):
    """Small integers (1..4) so that every sum is exact in fp32 and the check can demand equality."""
    return arrays.from_numpy(rng.integers(1, 5, BUF_WORDS).astype(np.float32), "float32", where)


# ---------------------------------------------------------------------------------------------------------------------
# Triton: the row sums of triton_kernels.py, where the compiler picks the layout (shuffles, no tile walk)
# ---------------------------------------------------------------------------------------------------------------------
TRITON = dict(BLOCK_R=128, num_warps=4)      # 128 rows of 32 per program: a 16 KiB tile over 4 warps


def triton_config() -> config.Resolved:
    return config.resolve("triton rowsum_kernel", TRITON, validate=_check_triton)


def _check_triton(cfg: dict) -> dict:
    if cfg["BLOCK_R"] not in (16, 32, 64, 128, 256, 512) or cfg["num_warps"] not in (1, 2, 4, 8, 16):
        raise ValueError(tr("triton rowsum: BLOCK_R a power of two in 16..512, num_warps in 1, 2, 4, 8, 16; got {got}",
                            got=config.fmt(cfg)))
    return cfg


def rowsum_triton(x, out=None):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, device=dev)
    if x.shape[1] != 32:
        raise ValueError(f"x: expected rows of 32 floats, got shape {tuple(x.shape)}")
    rows = int(x.shape[0])
    out = arrays.check_out(out, (rows,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, device=dev)
    if rows == 0:
        return out
    cfg = triton_config().values
    launch(rowsum_kernel, (triton.cdiv(rows, cfg["BLOCK_R"]),), x, out, rows, BLOCK_R=cfg["BLOCK_R"],
           num_warps=cfg["num_warps"])
    return out


def peer_cupy(x, out=None):
    import cupy

    out = arrays.check_out(out, (x.shape[0],), "float32", x)
    return cupy.sum(x, axis=1, out=out)


def peer_torch(x, out=None):
    import torch

    out = arrays.check_out(out, (x.shape[0],), "float32", x)
    torch.sum(torch.from_dlpack(x), dim=1, out=torch.from_dlpack(out))
    return out


VARIANTS = [
    lab.Variant("cuda 01 conflicted", rowsum_cuda_01, "cuda", note="tile[32][32], 32-way"),
    lab.Variant("cuda 02 padded", rowsum_cuda_02, "cuda", note="tile[32][33]"),
    lab.Variant("cuda 03 xor swizzle", rowsum_cuda_03, "cuda", note="word r*32 + (c^r)"),
    lab.Variant("triton tl.sum", rowsum_triton, "triton"),
]
PEERS = [
    lab.Variant("cupy.sum(axis=1)", peer_cupy, "peer"),
    lab.Variant("torch.sum(dim=1)", peer_torch, "peer"),
]
CHECK_CASES = [(n, "float32") for n in (1, 2, 31, 32, 33, 255, 256, 257, 1000, 4097, 65537, 300_007)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 33, 257, 1000)]
QUICK_CASES = 7                # --quick checks the first seven (on the CPU: all four)


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(rows: int) -> int:
    """Bytes the row-sum benchmark holds: the rows x 32 matrix and the sums."""
    return 132 * rows


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    rows, _ = plan.fit(size or MAIN_ROWS, bench_bytes, gpu, what="rows")
    case = f"{plan.fmt_size(rows)} x 32 float32"
    rs, tcfg = rowsum_config(), triton_config()
    warps = rs["WARPS"]
    cu = dict(impl="cuda", source=CU, grid=rowsum_blocks(rows, warps), threads=32 * warps, case=case,
              defines=rowsum_defines(warps) or {}, config_source=rs.source())
    blocks, per_sm = sweep_wave(gpu)
    sweep = dict(impl="cuda", source=CU, grid=blocks, threads=SWEEP_THREADS,
                 case=tr("stride sweep: one wave, {per_sm} blocks per SM", per_sm=per_sm))
    return [
        plan.Launch("", "bank_01_stride", **sweep),
        plan.Launch("", "bank_02_xor_swizzle", **sweep),
        plan.Launch("cuda 01 conflicted", "rowsum_01_conflicted", **cu),
        plan.Launch("cuda 02 padded", "rowsum_02_padded", **cu),
        plan.Launch("cuda 03 xor swizzle", "rowsum_03_swizzled", **cu),
        plan.Launch("triton tl.sum", "rowsum_kernel", "triton", fn=rowsum_kernel,
                    grid=math.ceil(rows / tcfg["BLOCK_R"]),
                    signature={"x_ptr": "*fp32", "out_ptr": "*fp32", "rows": "i32", "BLOCK_R": "constexpr"},
                    defines={"BLOCK_R": tcfg["BLOCK_R"]}, num_warps=tcfg["num_warps"], case=case,
                    config_source=tcfg.source()),
    ]
