"""Lab 2.1 - Memory coalescing: matrix transpose, and a strided copy that counts the sectors.

You will learn
  * what "coalesced" means in numbers: the 32 addresses of one warp instruction are served in 32-byte sectors, and the
    cost of an access is the number of sectors it touches, not the number of bytes you asked for;
  * why a transpose cannot be coalesced on both sides directly (rows in, columns out), and how a tile in shared memory
    fixes it: read rows, wait at a barrier, write rows;
  * the bank conflict that tiling creates (a column of a 32 x 32 float tile sits in one bank: 32-way), and the one-word
    padding that removes it;
  * why "conflict-free and coalesced" is still not "as fast as a copy": bytes in flight per SM (Little's law), and how
    more elements per thread (ILP) closes the gap;
  * the same transpose in Triton, where the compiler stages the tile through shared memory for you (tl.trans).

The two numbers, for an M x N fp32 matrix: bytes = 8 M N (each element read once and written once), FLOPs = 0. With
no arithmetic at all, memory wins outright, and the ceiling is a copy of the same bytes, measured in the same run.
Main case 16384 x 16384: 2^28 elements, 2 GiB moved. Target: the padded transpose at >= 85% of the copy bandwidth.

The strided copy out[i] = in[i * s] requests 8 bytes per element (4 read, 4 written) but moves 4 + min(32, 4 s) bytes:
a warp's 32 loads span 4 s bytes each and need min(32, 4 s) sectors of 32 B. Predicted useful bandwidth: ceiling x 8 /
(4 + sectors): 100% at stride 1, 67% at 2, 50% at 3, ..., 22% from stride 8 on (the sector model's floor). The lesson,
the predictions, what the measurements taught and this GPU's measured figures: README.md.

Run: python -m phase2_cuda.lab01_coalescing_transpose [--quick] [--size N] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set ROWS=16]
"""
from __future__ import annotations

import math
import os

import numpy as np

from common import arrays, config, cuda, device, lab, occupancy, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import transpose_kernel

LAB = "phase2_lab01_coalescing_transpose"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
TILE, ROWS, BIG_TILE = 32, 8, 64         # kernels.cu's defaults: 32 x 8 threads per block, tiles of 32 (01-03), 64 (04)
COPY_ILP, COPY_THREADS = 8, 256          # copy_strided: 8 elements per thread, 256 threads per block
MAX_GRID_Y = 65535                       # hardware limit of gridDim.y (and z)
SECTOR = 32                              # bytes: the unit the L1/L2 move
TARGET = 0.85                            # the lab's target: padded transpose >= 85% of the copy bandwidth
LATENCY_US = 0.7                         # a-priori DRAM latency under load, for the Little's-law prediction only
# transpose_04's compile-time parameters (the lab's default; `--set BIG_TILE=32`, `--set ROWS=16` or
# `--set T04_MIN_BLOCKS=3` override them): tile edge, threads in y (01-03 keep kernels.cu's 8), and the
# __launch_bounds__ min blocks. Picked from first principles: 64 B of loads in flight per thread, 4 blocks x 256
# threads per SM, 64 registers, no spill. The default GPU run also times the alternatives in T04_ALTERNATIVES in
# interleaved rounds; how they fared is in the README.
T04 = {"BIG_TILE": 64, "ROWS": 8, "T04_MIN_BLOCKS": 4}
T04_ALTERNATIVES = [{"BIG_TILE": 64, "ROWS": 8, "T04_MIN_BLOCKS": 3}, {"BIG_TILE": 64, "ROWS": 16, "T04_MIN_BLOCKS": 2},
                    {"BIG_TILE": 64, "ROWS": 4, "T04_MIN_BLOCKS": 6}, {"BIG_TILE": 32, "ROWS": 4, "T04_MIN_BLOCKS": 12},
                    {"BIG_TILE": 96, "ROWS": 8, "T04_MIN_BLOCKS": 2}]
MAIN_SIDE = 16384                        # the benchmark's matrix side (2 GiB moved)
STRIDED_N, STRIDED_MAX = 2**24, 32       # the strided copy's benchmark: n elements, strides up to 32


def t04_config() -> config.Resolved:
    """transpose_04's configuration: T04, then any --set of its keys (no tuned record: the default GPU run times the
    alternatives and the lesson says how they fared)."""
    return config.resolve("transpose_04_padded_ilp", T04, validate=check_t04)


def check_t04(cfg: dict) -> dict:
    """A configuration transpose_04 compiles to: a tile of 32, 64 or 96 (a 128-wide padded tile, 66 KiB, is more
    static shared memory than a kernel may declare), ROWS dividing 32 and the tile, 1..32 min blocks."""
    tile, rows, mb = cfg["BIG_TILE"], cfg["ROWS"], cfg["T04_MIN_BLOCKS"]
    if tile not in (32, 64, 96) or rows not in (1, 2, 4, 8, 16, 32) or tile % rows or not 1 <= mb <= 32:
        raise ValueError(tr("transpose_04: BIG_TILE in 32, 64, 96; ROWS a power of two dividing 32 and BIG_TILE; "
                            "T04_MIN_BLOCKS in 1..32; got {got}", got=config.fmt(cfg)))
    return cfg


def t04_defines(cfg: dict) -> dict:
    """The -D values of a transpose_04 configuration: none for the default (the same compilation as 01-03)."""
    return {} if cfg == T04 else dict(cfg)


def config_name(cfg: dict) -> str:
    """A transpose_04 configuration in words (the row names of the --tune table, the ids of its tests)."""
    return f"tile {cfg['BIG_TILE']}, {32 * cfg['ROWS']} threads, launch_bounds min {cfg['T04_MIN_BLOCKS']} blocks"


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, np.float64).T)


def _shape(size) -> tuple[int, int]:
    return (int(size), int(size)) if np.isscalar(size) else (int(size[0]), int(size[1]))


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """One M x N matrix (size = (M, N), or n for n x n) of distinct random values with a few large ones."""
    m, n = _shape(size)
    a = rng.standard_normal((m, n)) * 3.0
    if a.size > 16:
        a.flat[rng.integers(0, a.size, 4)] = 2.5e4    # a misplaced outlier cannot hide as a small error
    return (arrays.from_numpy(a, dtype, where),)


# ---------------------------------------------------------------------------------------------------------------------
# Sector arithmetic (the model every prediction here comes from)
# ---------------------------------------------------------------------------------------------------------------------
def sectors_per_request(byte_addresses) -> int:
    """Distinct 32-byte sectors touched by one warp instruction (one address per lane)."""
    return len({int(a) // SECTOR for a in byte_addresses})


def strided_sectors(stride: int, elem_bytes: int = 4, lanes: int = 32) -> int:
    """Sectors one warp load of copy_strided touches: lanes read elements 0, s, 2s, ... of an aligned array."""
    return sectors_per_request(lane * stride * elem_bytes for lane in range(lanes))


def strided_prediction(stride: int, ceiling_gbps: float) -> dict:
    """Bytes requested vs moved per element of copy_strided; useful GB/s if the moved bytes flow at the ceiling."""
    sec = strided_sectors(stride)
    moved = 4 + sec * SECTOR / 32              # 4 B written (coalesced) + the read sectors shared by 32 lanes
    return {"sectors_per_request": sec, "requested_B": 8, "moved_B": moved,
            "pred_gbps": ceiling_gbps * 8 / moved if ceiling_gbps else None}


def access_table() -> list[dict]:
    """Sectors per warp request on each side of each kernel (lane = threadIdx.x; M = 16384 rows)."""
    m = MAIN_SIDE
    row = [lane * 4 for lane in range(32)]                 # 32 consecutive floats
    col = [lane * 4 * m for lane in range(32)]             # 32 floats a row apart
    r, c = sectors_per_request(row), sectors_per_request(col)
    return [
        {"kernel": "copy_tiled / flat copy", "load sectors": r, "store sectors": r, "ideal": 4},
        {"kernel": "transpose_01_naive", "load sectors": r, "store sectors": c, "ideal": 4},
        {"kernel": "transpose_02..04 (tiled)", "load sectors": r, "store sectors": r, "ideal": 4},
    ]


def smem_passes_per_tile(pitch: int, tile: int = TILE) -> int:
    """Shared-memory passes for one tile: row stores + column loads (lane = row index); bank = word % 32."""
    def passes(words):
        banks: dict[int, set] = {}
        for w in words:
            banks.setdefault(w % 32, set()).add(w)
        return max(len(s) for s in banks.values())
    stores = sum(passes([r * pitch + lane for lane in range(32)]) for r in range(tile))
    loads = sum(passes([lane * pitch + k for lane in range(32)]) for k in range(tile))
    return stores + loads


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _no_overlap(a, out) -> None:
    if arrays.overlap(a, out):
        raise ValueError("out: must not overlap a (these kernels read and write different buffers; a transpose "
                         "cannot be done in place this way)")


def _prepare(a, out):
    """Validate before any launch; returns (out, M, N)."""
    arrays.check_array("a", a, dtypes=("float32",), ndim=2, libs=("cupy",))
    m, n = (int(s) for s in a.shape)
    out = arrays.check_out(out, (n, m), "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), ndim=2, libs=("cupy",))
    _no_overlap(a, out)
    return out, m, n


def grid_for(m: int, n: int, tile: int, max_grid_y: int = MAX_GRID_Y) -> tuple[int, int]:
    """(tiles along N, tile rows along M capped at gridDim.y's limit; the kernels loop over the rest)."""
    return max(1, math.ceil(n / tile)), max(1, min(math.ceil(m / tile), max_grid_y))


def _launch(name: str, tile: int, a, out, m: int, n: int, max_grid_y: int):
    if m == 0 or n == 0:
        return out
    k = cuda.get_kernel(CU, name)
    k(grid_for(m, n, tile, max_grid_y), (32, ROWS), (a, out, np.int64(m), np.int64(n)))
    return out


def transpose_cuda_01(a, out=None, *, max_grid_y: int = MAX_GRID_Y):
    """Naive: coalesced reads, column (strided) writes."""
    out, m, n = _prepare(a, out)
    return _launch("transpose_01_naive", TILE, a, out, m, n, max_grid_y)


def transpose_cuda_02(a, out=None, *, max_grid_y: int = MAX_GRID_Y):
    """Tiled through shared memory: coalesced both ways, 32-way bank conflicts on the column read."""
    out, m, n = _prepare(a, out)
    return _launch("transpose_02_smem_tiled", TILE, a, out, m, n, max_grid_y)


def transpose_cuda_03(a, out=None, *, max_grid_y: int = MAX_GRID_Y):
    """Tiled with a padded tile (32 x 33): conflict-free."""
    out, m, n = _prepare(a, out)
    return _launch("transpose_03_padded", TILE, a, out, m, n, max_grid_y)


def transpose_cuda_04(a, out=None, *, max_grid_y: int = MAX_GRID_Y, config: dict | None = None):
    """Padded 64 x 64 tiles, 16 elements per thread loaded before any is stored (config: overrides of T04)."""
    cfg = dict(t04_config().values, **(config or {}))
    if set(cfg) != set(T04):
        raise ValueError(f"config: expected keys among {sorted(T04)}, got {sorted(config)}")
    out, m, n = _prepare(a, out)
    if m == 0 or n == 0:
        return out
    k = cuda.get_kernel(CU, "transpose_04_padded_ilp", defines=t04_defines(cfg) or None)
    k(grid_for(m, n, cfg["BIG_TILE"], max_grid_y), (32, cfg["ROWS"]), (a, out, np.int64(m), np.int64(n)))
    return out


def copy_tiled(a, out=None, *, max_grid_y: int = MAX_GRID_Y):
    """Probe: out = a (same shape) with the transposes' launch shape; the ceiling for that shape."""
    arrays.check_array("a", a, dtypes=("float32",), ndim=2, libs=("cupy",))
    m, n = (int(s) for s in a.shape)
    out = arrays.check_out(out, (m, n), "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), ndim=2, libs=("cupy",))
    _no_overlap(a, out)
    return _launch("copy_tiled", TILE, a, out, m, n, max_grid_y)


def strided_copy(x, stride: int, out=None):
    """Probe: out = x[::stride] (x 1-D fp32 CuPy), through copy_strided."""
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=("cupy",))
    if not isinstance(stride, (int, np.integer)) or stride < 1:
        raise ValueError(f"stride: expected a positive integer, got {stride!r}")
    length = arrays.size(x)
    n = (length - 1) // int(stride) + 1 if length else 0
    out = arrays.check_out(out, (n,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    _no_overlap(x, out)
    if n == 0:
        return out
    k = cuda.get_kernel(CU, "copy_strided")
    k((strided_blocks(n),), (COPY_THREADS,), (x, out, np.int64(n), np.int64(stride)))
    return out


def strided_blocks(n: int) -> int:
    """copy_strided's grid: COPY_ILP elements per thread, COPY_THREADS threads per block."""
    return max(1, math.ceil(n / (COPY_THREADS * COPY_ILP)))


# ---------------------------------------------------------------------------------------------------------------------
# Triton: the transpose kernel of triton_kernels.py
# ---------------------------------------------------------------------------------------------------------------------
# 64 x 64 tiles with 4 warps: 32 elements per thread, a 16 KiB staging buffer (fits every GPU's shared memory).
TRITON = dict(BM=64, BN=64, num_warps=4)


def triton_config() -> config.Resolved:
    return config.resolve("triton transpose_kernel", TRITON, validate=_check_triton)


def _check_triton(cfg: dict) -> dict:
    if any(cfg[k] not in (16, 32, 64, 128) for k in ("BM", "BN")) or cfg["num_warps"] not in (1, 2, 4, 8, 16):
        raise ValueError(tr("triton transpose: BM and BN in 16, 32, 64, 128, num_warps in 1, 2, 4, 8, 16; got {got}",
                            got=config.fmt(cfg)))
    return cfg


def triton_grid(m: int, n: int, bm: int, bn: int) -> tuple[int, int]:
    """(programs, tiles along N): one program per BM x BN tile, on a 1-D grid."""
    tiles_n = triton.cdiv(n, bn)
    return triton.cdiv(m, bm) * tiles_n, tiles_n


def transpose_triton(a, out=None):
    """Triton transpose: CuPy/torch CUDA arrays on a GPU, NumPy / CPU torch in the interpreter."""
    dev = not INTERPRETER
    arrays.check_array("a", a, dtypes=("float32",), ndim=2, device=dev)
    m, n = (int(s) for s in a.shape)
    out = arrays.check_out(out, (n, m), "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), ndim=2, device=dev)
    _no_overlap(a, out)
    if m == 0 or n == 0:
        return out
    cfg = triton_config().values
    programs, tiles_n = triton_grid(m, n, cfg["BM"], cfg["BN"])
    launch(transpose_kernel, (programs,), a, out, m, n, tiles_n, BM=cfg["BM"], BN=cfg["BN"],
           num_warps=cfg["num_warps"])
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers: what a learner would call instead
# ---------------------------------------------------------------------------------------------------------------------
def peer_cupy(a, out=None):
    import cupy

    out = arrays.check_out(out, (a.shape[1], a.shape[0]), "float32", a)
    cupy.copyto(out, a.T)       # an elementwise copy from a strided view
    return out


def peer_torch(a, out=None):
    import torch

    out = arrays.check_out(out, (a.shape[1], a.shape[0]), "float32", a)
    torch.from_dlpack(out).copy_(torch.from_dlpack(a).t())
    return out


VARIANTS = [
    lab.Variant("cuda 01 naive", transpose_cuda_01, "cuda", note="coalesced read, strided write"),
    lab.Variant("cuda 02 smem tiled", transpose_cuda_02, "cuda", note="32-way bank conflicts"),
    lab.Variant("cuda 03 padded", transpose_cuda_03, "cuda", note="tile[32][33]"),
    lab.Variant("cuda 04 padded ilp", transpose_cuda_04, "cuda", note="64x64 tile, 16 loads in flight per thread"),
    lab.Variant("triton", transpose_triton, "triton", note="tl.trans"),
]
PEERS = [
    lab.Variant("cupy copyto(a.T)", peer_cupy, "peer"),
    lab.Variant("torch copy_(a.t())", peer_torch, "peer"),
]
_F = "float32"
CHECK_CASES = [((1000, 1003), _F), ((1, 1), _F), ((1, 4097), _F), ((4097, 1), _F), ((33, 31), _F), ((31, 33), _F),
               ((64, 64), _F), ((65, 129), _F), ((127, 1), _F), ((2, 100_003), _F), ((1024, 1024), _F),
               ((2_100_000, 3), _F)]   # the last: 65,625 tile rows > gridDim.y's 65,535, so the tile-row loop runs
CPU_CHECK_CASES = [((1, 1), _F), ((33, 31), _F), ((1, 130), _F), ((70, 3), _F), ((100, 67), _F)]
QUICK_CASES = 6                # --quick checks the first six (on the CPU: all five)


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's main case on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(side: int) -> int:
    """Bytes the transpose benchmark holds at once for a side x side matrix: the input, the transpose, the copy."""
    return 3 * 4 * side * side


def strided_bytes(n: int) -> int:
    """Bytes the strided-copy benchmark holds: the input, long enough for the largest stride, and the output."""
    return 4 * ((n - 1) * STRIDED_MAX + 1) + 4 * n


def fit_sizes(gpu: device.DeviceInfo, side: int | None = None, n: int | None = None):
    """(side, strided n, notes): the benchmark's sizes scaled down to what `gpu`'s memory holds."""
    side, n1 = plan.fit(side or MAIN_SIDE, bench_bytes, gpu, what="matrix side")
    n, n2 = plan.fit(n or STRIDED_N, strided_bytes, gpu, what="strided copy n")
    return side, n, [x for x in (n1, n2) if x]


def resident(kernel: str, gpu: device.DeviceInfo, threads: int, defines: dict | None = None) -> int:
    """Resident blocks per SM of a kernel on `gpu` (common.occupancy, with the kernel's registers and shared memory
    on that GPU)."""
    regs, smem = cuda.resources(CU, kernel, gpu, defines or None)
    return occupancy.occupancy(gpu.arch, threads, regs, smem).blocks_per_sm


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    side, n, _ = fit_sizes(gpu, size)
    case = f"{side}x{side} float32"
    t04, tcfg = t04_config(), triton_config()
    cu = dict(impl="cuda", source=CU, threads=32 * ROWS, case=case, grid=grid_for(side, side, TILE))
    programs, _ = triton_grid(side, side, tcfg["BM"], tcfg["BN"])
    return [
        plan.Launch("", "copy_tiled", **cu),
        plan.Launch("cuda 01 naive", "transpose_01_naive", **cu),
        plan.Launch("cuda 02 smem tiled", "transpose_02_smem_tiled", **cu),
        plan.Launch("cuda 03 padded", "transpose_03_padded", **cu),
        plan.Launch("cuda 04 padded ilp", "transpose_04_padded_ilp", "cuda", source=CU, case=case,
                    grid=grid_for(side, side, t04["BIG_TILE"]), threads=32 * t04["ROWS"],
                    defines=t04_defines(t04.values), config_source=t04.source()),
        plan.Launch("triton", "transpose_kernel", "triton", fn=transpose_kernel, grid=programs,
                    signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "M": "i32", "N": "i32", "tiles_n": "i32",
                               "BM": "constexpr", "BN": "constexpr"},
                    defines={"BM": tcfg["BM"], "BN": tcfg["BN"]}, num_warps=tcfg["num_warps"], case=case,
                    config_source=tcfg.source()),
        plan.Launch("", "copy_strided", "cuda", source=CU, grid=strided_blocks(n), threads=COPY_THREADS,
                    case=tr("strided copy, n = {n}, strides 1..{top}", n=plan.fmt_size(n), top=STRIDED_MAX)),
    ]
