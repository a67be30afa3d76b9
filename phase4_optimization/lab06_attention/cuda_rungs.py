"""Lab 4.6's CUDA C forward (kernels.cu, mma.sync: rungs 01, 02 and 02w): each rung's build per architecture and
head dim (warps, the register caps of __launch_bounds__, shared memory, grid), where the rungs can run, the checks of
their inputs, and the wrapper flash_attn_cuda."""
from __future__ import annotations

import functools
import os

import numpy as np

from common import arrays, config, cuda, device
from common.i18n import tr

from .shared import DTYPES, LOG2E, _check_dims_and_flags


CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
KERNELS = {"01": "attn_01_mma", "02": "attn_02_mma_pipelined", "02w": "attn_02w_mma_wide"}
# kernels.cu holds no value of its own: every compile gets defines()'s whole set as -DNAME=VALUE (HEAD_DIM, ATTN_FP16,
# NWARPS, MIN_BLOCKS, MIN_BLOCKS_WIDE and these two tile sizes); a compile without one stops with an #error naming it
CUDA_BLOCK_N = 64                     # keys per K/V tile (-DBLOCK_N: its only value)
CUDA_WIDE_BLOCK_N = 32                # rung 02w's (-DWIDE_BLOCK_N)
DEFINES = ("HEAD_DIM", "NWARPS", "BLOCK_N", "MIN_BLOCKS", "WIDE_BLOCK_N", "MIN_BLOCKS_WIDE", "ATTN_FP16")
WIDE_MAX_BLOCKS = {64: 3, 128: 2}     # rung 02w's register cap: more CTAs per SM than this spill (NVRTC report)
ROW_TILES = {"01": 1, "02": 1, "02w": 2}     # m16 row tiles per warp: a CTA takes 16 x this x NWARPS query rows
# Warps per CTA of rungs 01 and 02 (16 query rows each): the lab's default, `--set NWARPS=8` overrides it. Rung 02w
# always runs WIDE_NWARPS (32 rows a warp, ~244 registers a thread at D = 128). The benchmark runs rung 02 in three
# occupancy shapes (4 warps x 3 CTAs, 4 warps x 2 CTAs, 8 warps x 1 CTA on sm_90): which wins is measured.
CONFIG = {64: {"NWARPS": 4}, 128: {"NWARPS": 4}}
WIDE_NWARPS = 4
# __launch_bounds__' minimum CTAs per SM (MIN_BLOCKS, MIN_BLOCKS_WIDE), which caps registers at 65536 / (32 NWARPS
# MIN_BLOCKS), for CTAs of 4 warps: what each architecture's build was measured to take without a spill (the NVRTC
# compile report). sm_90: 3 CTAs at D = 128 (168 registers, where ptxas alone takes ~208 and allows only 2) and 4 at
# D = 64; the other architectures spill at those caps, so 2 and 3. Rung 02w (two row tiles a warp) 2 and 3 everywhere.
# min_blocks_default lowers them to what the GPU's shared memory per SM holds (one 64 KiB CTA where an SM has ~100
# KiB: a cap for three would only cost registers) and halves them for 8 warps.
MIN_BLOCKS_4W = {"sm_90": {64: 4, 128: 3}, "other": {64: 3, 128: 2}, "02w": {64: 3, 128: 2}}


def min_blocks_default(kernel: str, head_dim: int, nwarps: int, arch: str) -> int:
    """The __launch_bounds__ minimum of CTAs per SM for `kernel` (MIN_BLOCKS for rungs 01/02, from rung 02's shared
    memory; MIN_BLOCKS_WIDE for 02w) at this head dim and warp count, on architecture `arch` (MIN_BLOCKS_4W, no more
    CTAs than the SM's shared memory holds, halved for 8 warps)."""
    a = device.arch_info(arch)
    table = MIN_BLOCKS_4W["02w" if kernel == "02w" else "sm_90" if a.cc == 90 else "other"]
    per_cta = smem_bytes("02w" if kernel == "02w" else "02", head_dim, nwarps) + a.smem_reserved_per_block
    fit = max(1, a.smem_per_sm // per_cta) if a.smem_per_sm else table[head_dim]
    return max(1, min(table[head_dim], fit) * 4 // nwarps)


def _arch(arch: str | None) -> str:
    """`arch`, else the architecture of the GPU at hand (or of the one --gpu / --arch describes)."""
    return arch or device.current().arch


def cuda_config(head_dim: int, arch: str | None = None, nwarps: int | None = None) -> config.Resolved:
    """The CUDA C forward's build at one head dim for architecture `arch` (default: the GPU at hand): NWARPS (rungs 01,
    02), MIN_BLOCKS and MIN_BLOCKS_WIDE (the register caps, min_blocks_default for the warps the build has), in
    common.config's order: the lab's default, then --set NWARPS=8 / MIN_BLOCKS=2 (no tuned record: the benchmark
    times the shapes side by side). nwarps: a build of that many warps (the benchmark's other shapes; not recorded as
    the family's configuration)."""
    if head_dim not in CONFIG:
        raise ValueError(f"head_dim: expected one of {sorted(CONFIG)}, got {head_dim!r}")
    arch = _arch(arch)
    family = f"cuda kernels.cu D{head_dim} ({device.arch_info(arch).arch})"
    nw = nwarps or config.resolve(family, dict(CONFIG[head_dim]), remember=False).values["NWARPS"]
    default = {"NWARPS": CONFIG[head_dim]["NWARPS"], "MIN_BLOCKS": min_blocks_default("02", head_dim, nw, arch),
               "MIN_BLOCKS_WIDE": min_blocks_default("02w", head_dim, nw, arch)}
    return config.resolve(family, default, validate=_check_cuda_config, remember=nwarps is None)


def _check_cuda_config(v: dict) -> dict:
    if v["NWARPS"] not in (4, 8) or not 1 <= v["MIN_BLOCKS"] <= 4 or not 1 <= v["MIN_BLOCKS_WIDE"] <= 4:
        raise ValueError(f"kernels.cu: NWARPS 4 or 8, MIN_BLOCKS and MIN_BLOCKS_WIDE 1 to 4; got {config.fmt(v)}")
    return v


def defines(head_dim: int, dtype: str = "bfloat16", nwarps: int | None = None, min_blocks: int | None = None,
            arch: str | None = None) -> dict:
    """kernels.cu's compile-time defines for one head dim and dtype on architecture `arch` (default: the GPU at
    hand): cuda_config's build, or another occupancy shape (nwarps, min_blocks: both register caps)."""
    cfg = cuda_config(head_dim, arch, nwarps).values
    d = {"NWARPS": nwarps or cfg["NWARPS"], "MIN_BLOCKS": cfg["MIN_BLOCKS"], "MIN_BLOCKS_WIDE": cfg["MIN_BLOCKS_WIDE"]}
    if min_blocks is not None:
        d["MIN_BLOCKS"] = d["MIN_BLOCKS_WIDE"] = min_blocks
    d.update({"HEAD_DIM": head_dim, "BLOCK_N": CUDA_BLOCK_N, "WIDE_BLOCK_N": CUDA_WIDE_BLOCK_N,
              "ATTN_FP16": int(dtype == "float16")})
    return d


def cuda_warps(kernel: str, head_dim: int, nwarps: int | None = None, arch: str | None = None) -> int:
    """Warps per CTA a rung launches: nwarps when given, WIDE_NWARPS for 02w, else the resolved NWARPS."""
    if nwarps:
        return nwarps
    return WIDE_NWARPS if kernel == "02w" else cuda_config(head_dim, arch).values["NWARPS"]


def cuda_grid(kernel: str, s: int, bh: int, nwarps: int) -> tuple[int, int]:
    """A rung's grid: (query blocks of 16 ROW_TILES NWARPS rows, batch x heads)."""
    rows = 16 * ROW_TILES[kernel] * nwarps
    return (s + rows - 1) // rows, bh


def smem_bytes(kernel: str, head_dim: int, nwarps: int | None = None) -> int:
    """Dynamic shared memory: one K + one V tile (rung 01), two of each (rung 02), two of each of rung 02w's 32-key
    tiles plus its own Q area (32 rows per warp)."""
    if kernel == "02w":
        nw = nwarps or WIDE_NWARPS
        return 2 * 2 * CUDA_WIDE_BLOCK_N * head_dim * 2 + 32 * nw * head_dim * 2
    stages = 2 if kernel == "02" else 1
    return stages * 2 * CUDA_BLOCK_N * head_dim * 2


def unavailable_reason(gpu: device.DeviceInfo | None = None) -> str | None:
    """None when the CUDA kernels can run on `gpu` (a simulated profile in a plan is answered from its architecture),
    or here (None: this machine), else why not (no GPU, too old a GPU, no torch)."""
    if gpu is None:
        if not device.has_gpu():
            return tr("no CUDA GPU ({why}); the kernels are only compiled (NVRTC)", why=tr(device.no_gpu_reason()))
        gpu = device.info()
    if gpu.cc < 80:
        return tr("mma.sync bf16, ldmatrix and cp.async need sm_80 or newer; this GPU is {arch}", arch=gpu.arch)
    if gpu.simulated:
        return None
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return tr("torch is needed for bfloat16 tensors")
    return None


def _check_cuda_qkv(q, k, v, causal, sm_scale):
    """Validate the CUDA C forward's inputs (contiguous, 16-byte aligned, on the GPU) before any launch."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=None, contiguous=False, libs=("torch", "cupy"))
    # Grouped-query k, v and Sq != Sk are the Triton kernels' (flash_attn_fwd): kernels.cu indexes K and V with q's
    # head and takes one sequence length, so such shapes are refused here, by name, before check_same's generic
    # message.
    for name, x in (("k", k), ("v", v)):
        if int(x.shape[1]) != int(q.shape[1]):
            raise ValueError(f"{name}: {int(x.shape[1])} heads against q's {int(q.shape[1])}: the CUDA C kernels take "
                             "Hq == Hkv only (q, k, v: shapes must match); grouped-query attention runs on the "
                             "Triton kernels (flash_attn_fwd)")
        if int(x.shape[2]) != int(q.shape[2]):
            raise ValueError(f"{name}: Sk = {int(x.shape[2])} keys against q's Sq = {int(q.shape[2])}: the CUDA C "
                             "kernels take Sq == Sk only (q, k, v: shapes must match); Sq != Sk runs on the Triton "
                             "kernels (flash_attn_fwd)")
    arrays.check_same("q, k, v", q, k, v)
    dt = arrays.dtype_name(q)
    if dt == "bfloat16" and arrays.library(q) != "torch":
        raise TypeError("q: bfloat16 arrays must be torch tensors (CuPy has no bfloat16)")
    b, h, s, d, scale = _check_dims_and_flags(q, causal, sm_scale)
    check_qkv_placement(q, k, v, "cp.async copies 16 bytes")
    return b, h, s, d, dt, scale


def check_qkv_placement(q, k, v, why_aligned: str) -> None:
    """What the CUDA C forwards (kernels.cu, kernels_hopper.cu) ask of q, k, v's memory: contiguous, on the GPU, 16-byte
    aligned (why_aligned says which copy needs it); ValueError / TypeError naming the argument."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not arrays.is_contiguous(x):
            raise ValueError(f"{name}: expected a contiguous (B, H, S, D) array; pass x.contiguous()")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not arrays.on_device(x):
            raise TypeError(f"{name}: expected a GPU array, got a host array; move it first with x.cuda()")
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not arrays.aligned(x, 16):
            raise ValueError(f"{name}: the data must start 16-byte aligned ({why_aligned})")


def _ptr(a):
    return np.uint64(a.data_ptr()) if arrays.library(a) == "torch" else np.uint64(a.data.ptr)


def cuda_build(kernel: str, head_dim: int, dtype: str = "bfloat16", nwarps: int | None = None,
               min_blocks: int | None = None, arch: str | None = None) -> tuple[dict, int, int]:
    """What one rung's launch needs on architecture `arch` (default: the GPU at hand): (kernels.cu's defines, warps
    per CTA, dynamic shared memory bytes). Rung 02w is built with WIDE_NWARPS whatever NWARPS says."""
    nw = cuda_warps(kernel, head_dim, nwarps, arch)
    build_nwarps = nwarps or (WIDE_NWARPS if kernel == "02w" else None)
    return defines(head_dim, dtype, build_nwarps, min_blocks, arch), nw, smem_bytes(kernel, head_dim, nw)


@functools.lru_cache(maxsize=None)
def _cuda_kernel(kernel: str, defs: tuple, smem: int):
    k = cuda.get_kernel(CU, KERNELS[kernel], defines=dict(defs))
    if smem > 48 * 1024:
        k.max_dynamic_shared_size_bytes = smem        # above 48 KiB a kernel must opt in
    return k


def flash_attn_cuda(q, k, v, causal=False, sm_scale=None, out=None, *, lse=None, kernel: str = "02",
                    nwarps: int | None = None, min_blocks: int | None = None):
    """Attention forward by the CUDA C kernels: (o, lse). q, k, v (B, H, S, D) contiguous bf16 (torch) or fp16,
    D in {64, 128}, all three of one shape (grouped-query k, v or Sq != Sk: ValueError naming k or v; the Triton
    flash_attn_fwd takes them).

    o has q's shape and dtype; lse (B, H, S) float32 holds log(sum(exp(sm_scale q.k))) per row (natural log).
    kernel: "02" (pipelined, default), "01" (single-buffered) or "02w" (32 rows a warp, 4 warps only); nwarps (4 or
    8) overrides the warps per CTA (16 rows each; 32 in 02w), min_blocks the __launch_bounds__ CTAs per SM (the
    register cap); lse=: a float32 (B, H, S) array to fill.
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel: expected one of {sorted(KERNELS)}, got {kernel!r}")
    if nwarps is not None and nwarps not in (4, 8):
        raise ValueError(f"nwarps: expected 4 or 8, got {nwarps!r}")
    if kernel == "02w" and nwarps not in (None, 4):
        raise ValueError(f"nwarps: rung 02w (32 rows a warp, ~244 registers a thread at D = 128) runs 4 warps, got "
                         f"{nwarps!r}")
    if min_blocks is not None and min_blocks not in (1, 2, 3, 4):
        raise ValueError(f"min_blocks: expected 1 to 4, got {min_blocks!r}")
    d_in = int(q.shape[-1]) if len(getattr(q, "shape", ())) == 4 else None
    if kernel == "02w" and min_blocks is not None and min_blocks > WIDE_MAX_BLOCKS.get(d_in, 4):
        raise ValueError(f"min_blocks: rung 02w at D = {d_in} fits at most {WIDE_MAX_BLOCKS[d_in]} CTAs per SM "
                         f"without spilling (its two row tiles of S and O), got {min_blocks}")
    b, h, s, d, dt, scale = _check_cuda_qkv(q, k, v, causal, sm_scale)
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    out = arrays.check_out(out, (b, h, s, d), dt, q)
    lse = arrays.check_out(lse, (b, h, s), "float32", q, name="lse")
    for name, x in (("out", out), ("lse", lse)):
        if not arrays.is_contiguous(x) or not arrays.aligned(x, 16):
            raise ValueError(f"{name}: expected a contiguous array starting on a 16-byte boundary")
    defs, nw, smem = cuda_build(kernel, d, dt, nwarps, min_blocks)
    args = (_ptr(q), _ptr(k), _ptr(v), _ptr(out), _ptr(lse), np.int32(s), np.float32(scale * LOG2E),
            np.int32(bool(causal)))
    _cuda_kernel(kernel, tuple(sorted(defs.items())), smem)(cuda_grid(kernel, s, b * h, nw), (32 * nw,), args,
                                                            shared_mem=smem)
    return out, lse
