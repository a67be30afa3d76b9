"""Lab 3.2's persistent TMA kernel (triton_kernels.matmul_tma_kernel, Hopper-class GPUs and the interpreter), what it
needs and takes: its configurations (the lab's default, the interpreter's, the names --set takes, their checks), the
arrays a tensor descriptor accepts, the GPUs with TMA and the shared memory its tiles need, and its operands (the
tensor descriptors and the persistent grid). Which configuration a problem gets (tma_config), when matmul_triton
sends a problem here (uses_tma) and the wrapper (matmul_triton_tma) are in lab.py, beside the grid kernel's."""
from __future__ import annotations

from common import arrays, config, device
from common.i18n import tr
from common.triton_support import INTERPRETER, triton

TMA_DEFAULT = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3, EPI_SPLIT=0)
TMA_INTERPRETER = dict(BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, GROUP_M=2, num_warps=4, num_stages=1, EPI_SPLIT=1)
TMA_KEYS = dict(BLOCK_M="TMA_BLOCK_M", BLOCK_N="TMA_BLOCK_N", BLOCK_K="TMA_BLOCK_K", GROUP_M="TMA_GROUP_M",
                num_warps="TMA_WARPS", num_stages="TMA_STAGES", EPI_SPLIT="EPI_SPLIT")
TMA_DTYPES = ("float16", "bfloat16")
TMA_MIN_CC = 9


def check_tma_config(cfg: dict) -> dict:
    """A valid TMA kernel config (normalized), or ValueError / KeyError / TypeError."""
    out = {k: int(cfg[k]) for k in TMA_DEFAULT}
    for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps"):
        if out[k] < 1 or out[k] & (out[k] - 1):
            raise ValueError(f"{k} must be a power of two, got {out[k]}")
    if min(out["BLOCK_M"], out["BLOCK_N"], out["BLOCK_K"]) < 16 or not 1 <= out["num_stages"] <= 8:
        raise ValueError(f"tiles must be >= 16 and num_stages 1..8, got {out}")
    if out["EPI_SPLIT"] not in (0, 1):
        raise ValueError(f"EPI_SPLIT must be 0 or 1, got {out['EPI_SPLIT']}")
    return out


def _check_winners(w: list) -> list:
    return [{"shape": [int(v) for v in e["shape"]], "config": check_tma_config(e["config"])} for e in w]


def _tma_keyed(cfg: dict) -> dict:
    return {TMA_KEYS[k]: v for k, v in cfg.items()}


def _check_tma_keyed(v: dict) -> dict:
    back = {k: v[key] for k, key in TMA_KEYS.items()}
    try:
        return _tma_keyed(check_tma_config(back))
    except ValueError as e:
        raise ValueError(f"matmul_tma_kernel ({config.fmt(v)}): {e}") from None


def _elem_strides(x) -> tuple[int, ...]:
    if arrays.library(x) == "torch":
        return tuple(int(s) for s in x.stride())
    return tuple(int(s) // x.itemsize for s in x.strides)


def _as_torch(x):
    import torch

    lib = arrays.library(x)
    return x if lib == "torch" else torch.from_numpy(x) if lib == "numpy" else torch.from_dlpack(x)


def tma_problems(a, b, out) -> str:
    """'' when the TMA kernel can take these arrays, else why not. A tensor descriptor needs a 16-byte aligned base,
    unit stride in the last dimension and the other strides multiples of 16 bytes."""
    why = []
    for name, x in (("a", a), ("b", b), ("out", out)):
        st = _elem_strides(x)
        itemsize = arrays.ITEMSIZE[arrays.dtype_name(x)]
        if st[1] != 1:
            why.append(f"{name}: its rows are not contiguous (strides {st})")
        elif st[0] <= 0:
            why.append(f"{name}: its row stride ({st[0]} elements) is not positive (a tensor map walks rows forward)")
        elif (st[0] * itemsize) % 16:
            why.append(f"{name}: its row stride ({st[0]} elements) is not a multiple of 16 bytes")
        elif not arrays.aligned(x, 16):
            why.append(f"{name}: its base is not 16-byte aligned")
    return "; ".join(why)


TMA_MIN_SMEM = 210 * 1024       # the default tiles' ring + C tile (the compile report: ~208 KiB); sm_120 has 99 KiB


def tma_unavailable(gpu: device.DeviceInfo | None = None) -> str:
    """'' when `gpu` can run the persistent TMA kernel with its tiles, else why not, in one line (None: this machine
    without a GPU, where the interpreter runs it)."""
    if gpu is None:
        return ""
    if gpu.cc_major < TMA_MIN_CC:
        return tr("needs sm_90 or newer (TMA tensor descriptors), this GPU is {arch}", arch=gpu.arch)
    if gpu.smem_per_block_optin < TMA_MIN_SMEM:
        return tr("its tiles need ~{need} KiB of shared memory per block, this GPU's blocks get {have} KiB",
                  need=TMA_MIN_SMEM // 1024, have=gpu.smem_per_block_optin // 1024)
    return ""


def _hopper() -> bool:
    """A GPU with TMA (sm_90+) and the shared memory the default TMA tiles need (not the consumer Blackwell parts)."""
    return device.has_gpu() and not tma_unavailable(device.info())


def tma_operands(a, b, out, bm: int, bn: int, bk: int, c_cols: int):
    """The tensor descriptors of A's BM x BK tiles, B's BK x BN tiles and C's BM x c_cols tiles (a view per array,
    its own strides), and the persistent grid: one program per SM (4 in the interpreter), never more than tiles.
    Lab 4.2's fused GEMM launches its kernel with the same operands."""
    from triton.tools.tensor_descriptor import TensorDescriptor

    (m, k), n = (int(s) for s in a.shape), int(b.shape[1])
    descs = tuple(TensorDescriptor(_as_torch(x), shape, list(_elem_strides(x)), block)
                  for x, shape, block in ((a, [m, k], [bm, bk]), (b, [k, n], [bk, bn]), (out, [m, n], [bm, c_cols])))
    return (*descs, tma_programs(m, n, bm, bn, 4 if INTERPRETER else device.info().sms))


def tma_programs(m: int, n: int, bm: int, bn: int, sms: int) -> int:
    """The persistent grid: one program per SM, never more than there are tiles."""
    return min(triton.cdiv(m, bm) * triton.cdiv(n, bn), sms)
