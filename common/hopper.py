"""The host side of the sm_90a primitives, twin of the device header common/cuda/hopper.cuh: TMA tensor maps encoded
through the driver (cuTensorMapEncodeTiled) and the rules they keep, the wgmma shared-memory matrix descriptor and the
128-byte swizzle mirrored in NumPy (so a kernel's layout arithmetic is checked without a GPU), loading an sm_90a cubin
and launching it with tensor maps passed by value, the cluster occupancy query, and TMA-legal copies of operands.

Nothing here knows a lab's tile shapes: a kernel's own layout (its stages, boxes, descriptors per K slice) lives with
its lab. First user: lab 4.3's rung 03 (phase4_optimization/lab03_tensor_cores/wgmma.py re-exports these names, and
lab 4.6's Hopper rungs reach them through it).

What it mirrors
  * the wgmma matrix descriptor (hopper.cuh: wgmma_desc_128b): 64 bits of start address, leading and stride byte
    offsets, base offset and swizzle mode (smem_descriptor / decode_descriptor);
  * the 128-byte swizzle TMA applies when it writes a box and wgmma undoes when it reads (swizzle_128b), a box copy
    through it (tma_write_box), and what wgmma reads through a descriptor in the K-major and MN-major canonical
    layouts (wgmma_read_kmajor / wgmma_read_mnmajor);
  * the driver's CUtensorMap (hopper.cuh: TmaMap, 128 opaque bytes): encode_tiled for any rank, encode_tensor_map for
    a row-major 2-D array, with the 128B swizzle and zero fill out of bounds.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from common import arrays, cuda
from common.i18n import tr

# cuda.h enums (CUDA 12/13 driver API)
TMA_DTYPE = {"float16": 6, "bfloat16": 9}      # CU_TENSOR_MAP_DATA_TYPE_FLOAT16 / _BFLOAT16
TMA_SWIZZLE_128B = 3                           # CU_TENSOR_MAP_SWIZZLE_128B
TMA_L2_PROMOTION_256B = 3                      # CU_TENSOR_MAP_L2_PROMOTION_L2_256B
TMA_INTERLEAVE_NONE = 0
TMA_OOB_FILL_ZERO = 0                          # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as 0


# ---------------------------------------------------------------------------------------------------------------------
# The wgmma shared-memory matrix descriptor and the 128-byte swizzle, mirrored in NumPy
# ---------------------------------------------------------------------------------------------------------------------
SWIZZLE_MODE = {"none": 0, "128B": 1, "64B": 2, "32B": 3}   # descriptor bits 62-63


def smem_descriptor(addr: int, lbo: int, sbo: int, swizzle: str = "128B", base_offset: int = 0) -> int:
    """The 64-bit wgmma matrix descriptor: bits 0-13 start address >> 4, 16-29 leading byte offset >> 4,
    32-45 stride byte offset >> 4, 49-51 base offset, 62-63 swizzle mode. Byte values must be multiples of 16."""
    for name, v in (("addr", addr), ("lbo", lbo), ("sbo", sbo)):
        if v < 0 or v % 16:
            raise ValueError(f"{name}: must be a non-negative multiple of 16 bytes, got {v}")
        if (v >> 4) >= 1 << 14 and name != "addr":
            raise ValueError(f"{name}: {v} bytes does not fit the 14-bit field (max {((1 << 14) - 1) << 4})")
    if addr >= 1 << 18:
        raise ValueError(f"addr: shared-memory addresses are below 256 KiB, got {addr}")
    if not 0 <= base_offset < 8:
        raise ValueError(f"base_offset: 3-bit field, got {base_offset}")
    if swizzle not in SWIZZLE_MODE:
        raise ValueError(f"swizzle: expected one of {sorted(SWIZZLE_MODE)}, got {swizzle!r}")
    return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) & 0x3FFF) << 16 | ((sbo >> 4) & 0x3FFF) << 32 | \
        (base_offset & 7) << 49 | SWIZZLE_MODE[swizzle] << 62


def decode_descriptor(desc: int) -> dict:
    """Inverse of smem_descriptor (byte values)."""
    sw = {v: k for k, v in SWIZZLE_MODE.items()}[(desc >> 62) & 3]
    return {"addr": (desc & 0x3FFF) << 4, "lbo": ((desc >> 16) & 0x3FFF) << 4, "sbo": ((desc >> 32) & 0x3FFF) << 4,
            "base_offset": (desc >> 49) & 7, "swizzle": sw}


def swizzle_128b(addr):
    """The 128-byte swizzle TMA applies when writing and wgmma when reading (on a 1024-byte aligned tile): the
    16-byte chunk index (address bits 4-6) is XORed with the row within an 8-row group (bits 7-9)."""
    return addr ^ (((addr >> 7) & 7) << 4)


def tma_write_box(smem: np.ndarray, addr: int, tile: np.ndarray) -> None:
    """Model of one TMA box copy with the 128B swizzle (a box of 64 16-bit elements per row, e.g. {64 K, 128 M}):
    row r of the tile (128 bytes) at addr + 128 r, each element's byte address swizzled. smem holds one uint16 per 2
    bytes."""
    rows, cols = tile.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    smem[swizzle_128b(addr + r * 128 + c * 2) // 2] = tile


def wgmma_read_kmajor(smem: np.ndarray, desc: int, rows: int = 64, k: int = 16) -> np.ndarray:
    """What wgmma reads for a K-major, 128B-swizzled operand (A): the canonical layout
    ((8, m), (8 el, 2)) : ((128 B, SBO), (2 B, 16 B)) -- rows of 128 bytes, 8-row groups SBO apart."""
    d = decode_descriptor(desc)
    assert d["swizzle"] == "128B"
    r, kk = np.meshgrid(np.arange(rows), np.arange(k), indexing="ij")
    off = d["addr"] + (r % 8) * 128 + (r // 8) * d["sbo"] + (kk % 8) * 2 + (kk // 8) * 16
    return smem[swizzle_128b(off) // 2]


def wgmma_read_mnmajor(smem: np.ndarray, desc: int, n: int = 256, k: int = 16) -> np.ndarray:
    """What wgmma reads (as a K x N matrix) for an MN-major, 128B-swizzled operand (B with imm-trans-b = 1): the
    canonical layout ((8 el, 8, n/64), (8, k/8)) : ((2 B, 16 B, LBO), (128 B, SBO)) -- 64 contiguous N values per
    128-byte row, 64-column blocks LBO apart, 8-row groups of K SBO apart."""
    dd = decode_descriptor(desc)
    assert dd["swizzle"] == "128B"
    kk, nn = np.meshgrid(np.arange(k), np.arange(n), indexing="ij")
    off = dd["addr"] + (nn % 64) * 2 + (nn // 64) * dd["lbo"] + (kk % 8) * 128 + (kk // 8) * dd["sbo"]
    return smem[swizzle_128b(off) // 2]


# ---------------------------------------------------------------------------------------------------------------------
# Tensor maps through the driver API
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def encoder():
    """cuTensorMapEncodeTiled from libcuda: (the function, ''), or (None, why) when it cannot be had."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return None, tr("libcuda.so.1 cannot be loaded ({error})", error=e)
    try:
        fn = lib.cuTensorMapEncodeTiled
    except AttributeError:
        return None, "this driver's libcuda has no cuTensorMapEncodeTiled (needs CUDA 12.0+ drivers)"
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p,
                   ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64),
                   ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                   ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return fn, ""


def tma_box_check(ptr: int, cols: int, rows: int, row_stride_bytes: int, box_cols: int, box_rows: int,
                  elem_bytes: int = 2, name: str = "tensor") -> None:
    """The cuTensorMapEncodeTiled rules a 2-D map with the 128B swizzle must keep; ValueError naming `name` when one
    is broken."""
    if ptr % 16:
        raise ValueError(f"{name}: TMA needs a 16-byte aligned base address, got 0x{ptr:x}")
    if row_stride_bytes % 16 or row_stride_bytes >= 1 << 40:
        raise ValueError(f"{name}: TMA row stride must be a multiple of 16 bytes below 2^40, got {row_stride_bytes}")
    if row_stride_bytes < cols * elem_bytes:
        raise ValueError(f"{name}: row stride {row_stride_bytes} B is shorter than a row ({cols * elem_bytes} B)")
    if not (1 <= cols <= 1 << 32 and 1 <= rows <= 1 << 32):
        raise ValueError(f"{name}: TMA dimensions must be in [1, 2^32], got {rows} x {cols}")
    if not (1 <= box_cols <= 256 and 1 <= box_rows <= 256) or (box_cols * elem_bytes) % 16:
        raise ValueError(f"{name}: box {box_rows} x {box_cols} breaks TMA's rules (<= 256 per side, inner side a "
                         "multiple of 16 bytes)")
    if box_cols * elem_bytes > 128:
        raise ValueError(f"{name}: with the 128B swizzle the box's inner side must be <= 128 bytes")


def encode_tiled(ptr: int, dtype: str, dims, strides_bytes, box, name: str, detail: str) -> np.ndarray:
    """The driver call behind every tensor map here: a 128-byte CUtensorMap (in a 64-byte aligned NumPy buffer) for
    an N-D array, dims and box innermost first, the byte strides of dims 1 .. N-1, 128B swizzle, zero fill out of
    bounds. The callers check their own shape rules first; `detail` says what was asked for in the error."""
    fn, why = encoder()
    if fn is None:
        raise RuntimeError(why)
    rank = len(dims)
    raw = np.zeros(128 + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    buf = raw[off:off + 128]
    cdims = (ctypes.c_uint64 * rank)(*dims)
    cstrides = (ctypes.c_uint64 * (rank - 1))(*strides_bytes)
    cbox = (ctypes.c_uint32 * rank)(*box)
    estr = (ctypes.c_uint32 * rank)(*([1] * rank))
    res = fn(buf.ctypes.data, TMA_DTYPE[dtype], rank, ctypes.c_void_p(ptr), cdims, cstrides, cbox, estr,
             TMA_INTERLEAVE_NONE, TMA_SWIZZLE_128B, TMA_L2_PROMOTION_256B, TMA_OOB_FILL_ZERO)
    if res != 0:
        raise RuntimeError(f"{name}: cuTensorMapEncodeTiled failed with CUresult {res} ({detail})")
    return buf


def encode_tensor_map(ptr: int, dtype: str, rows: int, cols: int, row_stride_bytes: int, box_rows: int,
                      box_cols: int, name: str = "tensor") -> np.ndarray:
    """A 128-byte CUtensorMap (in a 64-byte aligned NumPy buffer) for a row-major 2-D array: dims {cols, rows}
    innermost first, 128B swizzle, zero fill out of bounds."""
    tma_box_check(ptr, cols, rows, row_stride_bytes, box_cols, box_rows, name=name)
    return encode_tiled(ptr, dtype, (cols, rows), (row_stride_bytes,), (box_cols, box_rows), name,
                        f"dims {rows}x{cols}, stride {row_stride_bytes} B, box {box_rows}x{box_cols}")


def needs_padding(x, cols: int) -> bool:
    """Whether a 2-D 16-bit operand with `cols` columns breaks TMA's rules as it is: a row stride that is not a
    multiple of 16 bytes (8 elements) or a base address that is not 16-byte aligned."""
    return cols % 8 != 0 or arrays.ptr(x) % 16 != 0


def padded(x, cols: int):
    """A zero-padded copy of 2-D x with `cols` columns (an aligned row stride for TMA), in x's library."""
    lib = arrays.library(x)
    rows, c = int(x.shape[0]), int(x.shape[1])
    if lib == "torch":
        import torch

        y = torch.zeros((rows, cols), dtype=x.dtype, device=x.device)
    else:
        import cupy

        y = cupy.zeros((rows, cols), dtype=x.dtype)
    y[:, :c] = x
    return y


# ---------------------------------------------------------------------------------------------------------------------
# What this machine lacks, loading, launching
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def host_reason() -> str | None:
    """What this machine's software lacks for an sm_90a kernel with tensor maps (the driver's tensor-map encoder,
    NVRTC), or None."""
    fn, why = encoder()
    if fn is None:
        return why
    if cuda.nvrtc_version() == "missing":
        return tr("NVRTC is not installed (pip install 'nvidia-cuda-nvrtc==13.0.*')")
    return None


def stream_ptr(x) -> int:
    """The handle of the current stream of x's library (torch: x's device's current stream; CuPy: the current one)."""
    if arrays.library(x) == "torch":
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    import cupy

    return int(cupy.cuda.get_current_stream().ptr)


def load_function(cubin: bytes, name: str, dyn_smem: int):
    """(module, function) of kernel `name` from a cubin, loaded on the current device (CuPy's RawModule would
    compile for the device's own -arch, not sm_90a), opted in to `dyn_smem` bytes of dynamic shared memory."""
    from cupy.cuda import function as cfunc
    from cupy_backends.cuda.api import driver

    mod = cfunc.Module()
    mod.load(bytes(cubin))
    fn = mod.get_function(name)
    driver.funcSetAttribute(fn.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dyn_smem)
    return mod, fn


def device_words(mod, symbol: str, count: int):
    """A module's __device__ array of `count` 32-bit words (a kernel's hang record, say) as a CuPy array over the
    same memory: .get() reads it, .fill(0) clears it."""
    import cupy

    mem = cupy.cuda.UnownedMemory(mod.get_global_var(symbol), 4 * count, mod)
    return cupy.ndarray((count,), cupy.uint32, cupy.cuda.MemoryPointer(mem, 0))


def bounded_wait_record(mod, symbol: str, reset: bool = True) -> dict | None:
    """What mbar_wait_bounded (cuda/hopper.cuh) left in a module's 5-word __device__ array `symbol` when a wait of a
    debug build timed out: {"block": (x, y), "thread", "bar" (its shared address), "what" (the kernel's own bit),
    "parity"}, or None when no wait did; reset clears the record for the next launch."""
    arr = device_words(mod, symbol, 5)
    v = [int(x) for x in arr.get()]
    if not v[0]:
        return None
    if reset:
        arr.fill(0)
    return {"block": (v[1], v[2]), "thread": v[3], "bar": v[4] >> 2, "what": (v[4] >> 1) & 1, "parity": v[4] & 1}


class LaunchConfig(ctypes.Structure):           # CUlaunchConfig (cuda.h)
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


def max_active_clusters(fn_ptr: int, blocks: int, threads: int, smem: int) -> int | None:
    """cuOccupancyMaxActiveClusters for a kernel compiled with __cluster_dims__: how many of its clusters can be
    resident at once for a launch of `blocks` x `threads` with `smem` bytes of dynamic shared memory; None when the
    driver cannot say (no libcuda, no such entry point, an error, or 0)."""
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        cfg = LaunchConfig(blocks, 1, 1, threads, 1, 1, smem, None, None, 0)
        n = ctypes.c_int(0)
        rc = lib.cuOccupancyMaxActiveClusters(ctypes.byref(n), ctypes.c_void_p(fn_ptr), ctypes.byref(cfg))
        if rc == 0 and n.value > 0:
            return int(n.value)
    except (OSError, AttributeError):
        pass
    return None


def launch(fn_ptr: int, grid: int, threads: int, smem: int, stream: int, maps, args) -> None:
    """cuLaunchKernel of a 1-D grid with the tensor maps first, by value (a kernel's `const __grid_constant__`
    parameters), then `args` (ctypes values), through the argument-pointer array. cuLaunchKernel copies every
    argument (the 128-byte maps included) before it returns."""
    from cupy_backends.cuda.api import driver

    ptrs = (ctypes.c_void_p * (len(maps) + len(args)))(*[mp.ctypes.data for mp in maps],
                                                         *[ctypes.addressof(x) for x in args])
    driver.launchKernel(fn_ptr, grid, 1, 1, threads, 1, 1, smem, stream, ctypes.addressof(ptrs), 0)
