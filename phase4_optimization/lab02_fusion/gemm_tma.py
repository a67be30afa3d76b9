"""Part 3 of lab 4.2 on Hopper: when the persistent TMA GEMM (linear_tma_kernel) can run on a GPU and which calls
linear() sends to it, its tile (GROUP_M from lab 3.2's tuning record) and its persistent grid."""
from __future__ import annotations

from common import arrays, config, device, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER, triton

from .gemm_tiles import LINEAR_BIG_MIN, _tile_validator, knobs


# Hopper (sm_90+): the persistent TMA GEMM (triton_kernels.linear_tma_kernel) with the bias + activation epilogue.
# The tile is fixed by shared memory: a 3-stage ring of 128 x 64 + 64 x 256 bf16 tiles (144 KiB) plus the 64 KiB C tile
# of the TMA store fit in the 227 KiB a block may use, a 4th stage would not (the compile report shows 208 KiB); the
# group size comes from lab 3.2's tuning record for this GPU (its persistent kernel has the same main loop). A GPU with
# TMA but less shared memory per block (the consumer Blackwell cards) runs linear_kernel instead (tma_unavailable).
LINEAR_TMA = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
LINEAR_TMA_INTERPRETER = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2, num_warps=4, num_stages=1)
TMA_PROGRAMS_INTERPRETER = 4     # persistent programs in the interpreter (on a GPU: one per SM)


def _matmul_lab():
    """Lab 3.2 (phase 3's matmul): where its TMA GEMM runs, its tensor descriptors and its tuning record."""
    from phase3_triton.lab02_matmul import lab as matmul_lab

    return matmul_lab


def tma_unavailable(gpu: device.DeviceInfo) -> str:
    """Why the persistent TMA GEMM cannot run on `gpu` ('' when it can): tensor descriptors need sm_90 or newer, and
    the tile needs lab 3.2's TMA_MIN_SMEM of shared memory per block."""
    mm = _matmul_lab()
    if gpu.cc < mm.TMA_MIN_CC * 10:
        return tr("tensor descriptors (TMA) need sm_90 or newer; this GPU is {arch}", arch=gpu.arch)
    if gpu.smem_per_block_optin < mm.TMA_MIN_SMEM:
        return tr("the persistent TMA tile (ring + C tile) needs {need} KiB of shared memory per block; this GPU has "
                  "{have} KiB", need=mm.TMA_MIN_SMEM // 1024, have=gpu.smem_per_block_optin // 1024)
    return ""


def _tma_here() -> bool:
    """The GPU at hand can run the persistent TMA GEMM."""
    return device.has_gpu() and not tma_unavailable(device.info())


def _variant_tma_unavailable(gpu) -> str:
    return tma_unavailable(gpu) if gpu is not None else ""      # None: the interpreter, which runs it


def _tma_group(m: int, n: int, k: int, gpu: device.DeviceInfo) -> tuple[int | None, str]:
    """GROUP_M from lab 3.2's tuning record for `gpu` (its winner tuned nearest to M N K), and where it came from;
    (None, why not) without one."""
    mm = _matmul_lab()
    winners, source = tuned.record(mm.TUNED_RECORD, mm._check_winners, gpu=gpu)
    if not winners:
        return None, source
    best = tuned.nearest(winners, (m, n, k))
    return best["config"]["GROUP_M"], f"{source}, lab 3.2's winner at {'x'.join(map(str, best['shape']))}"


def tma_programs(m: int, n: int, cfg: dict, gpu: device.DeviceInfo | None) -> int:
    """The persistent grid: one program per SM of `gpu` (None, the interpreter: TMA_PROGRAMS_INTERPRETER), never more
    than tiles."""
    tiles = triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])
    return min(tiles, TMA_PROGRAMS_INTERPRETER if gpu is None else gpu.sms)


def linear_tma_config(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """linear_tma_kernel's tile: LINEAR_TMA with GROUP_M from lab 3.2's tuning record for this GPU (or `gpu`), then
    --set TMA_GROUP_M=... (the interpreter: LINEAR_TMA_INTERPRETER, then --set)."""
    check = _tile_validator("linear_tma_kernel", "TMA_")
    if INTERPRETER and gpu is None:
        return config.resolve("triton linear_tma_kernel (interpreter tile)", knobs(LINEAR_TMA_INTERPRETER, "TMA_"),
                              validate=check)
    group, source = _tma_group(m, n, k, gpu or device.current())
    return config.resolve("triton linear_tma_kernel", knobs(LINEAR_TMA, "TMA_"),
                          tuned={"TMA_GROUP_M": group} if group else None, tuned_source=source, validate=check)


def linear_uses_tma(x, w, out, residual=None, config: dict | None = None) -> bool:
    """Whether linear() sends this call to the persistent TMA kernel: a Hopper-class GPU, no residual (its tile would
    not fit in shared memory beside the ring), no explicit config, M, N, K >= LINEAR_BIG_MIN and lab 3.2's size and
    array-library conditions (uses_tma), layouts a tensor descriptor takes."""
    mm = _matmul_lab()
    if INTERPRETER or config is not None or residual is not None or not _tma_here():
        return False
    m, k = (int(v) for v in x.shape)
    n = int(w.shape[1])
    return (min(m, n, k) >= LINEAR_BIG_MIN and m * n * k >= mm.TMA_MIN_MNK and arrays.library(x) == "torch"
            and not mm.tma_problems(x, w, out))
