"""Lab 4.3, rung 03's host side: a Hopper GEMM with wgmma fed by TMA (kernels_wgmma.cu), from tensor maps to launch.

A module of its own, not part of lab.py, because it is a whole subject: the wgmma shared-memory descriptor and the
128-byte swizzle mirrored in NumPy (so the layout logic is checked without a GPU), tensor maps encoded through the
driver API, loading an sm_90a cubin and launching with by-value tensor maps, and a debugging aid that says where a
layout bug is. lab.py's gemm_wgmma_tma variant calls gemm_wgmma; bench.py times it against cuBLAS.

What it shows
  * what Hopper adds over mma.sync: a warpgroup (4 warps) issues one asynchronous wgmma.m64n256k16 that reads A and B
    straight from shared memory through 64-bit *matrix descriptors* (start address, leading/stride byte offsets,
    swizzle mode), while the TMA engine copies whole 2-D tiles global -> shared, described once on the host by a
    128-byte *tensor map* (cuTensorMapEncodeTiled) and completing on an mbarrier with a byte count;
  * warp specialization: one producer warpgroup keeps a 4-stage ring full, two consumer warpgroups run the MMAs, and
    `setmaxnreg` moves registers from the producer (40) to the consumers (232), who hold 128 fp32 accumulators each;
  * the 128-byte swizzle, which TMA writes and wgmma reads with the same address-bit XOR, and how to walk K inside a
    swizzled tile by moving the descriptor's start address (smem_descriptor / simulate_operands mirror the device
    arithmetic in NumPy);
  * mbarrier phase parity: which parity each side waits for, and why one bit is enough.

The two numbers (bf16 8192 x 8192 x 8192): FLOPs = 2 M N K = 1.10 TFLOP; bytes that must move = (M K + K N + M N) x 2
= 403 MB. ~2730 FLOP/B, an order of magnitude above the bf16 ridge point of any GPU with wgmma (`--plan` prints
this GPU's): compute-bound.
Prediction: 0.85-0.95x cuBLAS (target >= 0.9x at 8192^3). The kernel's known shortfalls against cuBLAS: the epilogue
writes C from registers (32-bit stores, not overlapped with the tile's MMAs; ~3% of a tile's time at 8192^3) and no
2-CTA clusters with TMA multicast (each A/B tile is fetched from L2 by every block that needs it). The attempts at
both are builds of the same file: cluster=2 (-DCLUSTER=2) and tma_store=True (-DEPI_TMA=1: C through a swizzled
shared buffer and TMA stores, the consumers back on the next tile's MMAs while the TMA engine writes; 3 stages, as the
C buffer takes the fourth's room; epilogue_smem_addresses / epilogue_round_trip mirror its buffer in NumPy).
Which build runs is measured, not written here: lab 4.3's --tune times every build (builds()) at 4096^3 and 8192^3
and records this GPU's fastest correct one at each size in results/<gpu>/phase4_lab03_tensor_cores_wgmma_tuned.json;
gemm_wgmma runs that build (resolve_build: arguments first, then WGMMA_* environment variables, then --set of the same
names, then the record, then DEFAULT_BUILD - single blocks, C from registers - on a GPU without a record).

Layouts and what the wrapper does about them
  * A (M, K) and B (K, N) are row-major, as torch/CuPy hold them. A is "K-major" for wgmma (its default); B is
    N-major, which bf16/fp16 wgmma reads directly with imm-trans-b = 1 (SASS: HGMMA ... gdesc[..].tnspB), so no
    transpose pass is needed.
  * TMA needs the global base 16-byte aligned and every row stride a multiple of 16 bytes (8 elements). When K or N
    is not a multiple of 8 (or a base is misaligned) the wrapper copies that operand into a zero-padded buffer with an
    aligned row stride (one extra pass over that operand; the tensor map still describes only the logical K x N, so
    the padding is never read). Tails of M, N, K are handled by TMA's zero fill and the epilogue's bounds checks: any
    M, N, K >= 1 is correct.
  * Output: bf16 (fp16) C, rounded once from the fp32 accumulators.

Inputs: bf16 needs torch CUDA tensors (CuPy has no bf16); fp16 may be CuPy arrays or torch tensors. The kernel is
compiled with NVRTC for sm_90a by common.cuda.compile_report and loaded from the cubin (CuPy's RawModule would add
its own -arch for the device); the tensor maps go to the kernel by value as `const __grid_constant__` parameters via
cuLaunchKernel's argument-pointer array (cupy.cuda.driver.launchKernel).

Run: python -m phase4_optimization.lab03_tensor_cores (rung 03 is one of its variants; --wgmma-debug runs the
probes of debug() below on the GPU).
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np

from common import arrays, check, config, cuda, device, report, tuned
from common.i18n import tr

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_PATH = os.path.join(HERE, "kernels_wgmma.cu")
KERNEL = "gemm_wgmma_tma"
ARCH = "sm_90a"

# mirror of the .cu file's compile-time shape (tests check the two agree through the compile report)
BM, BN, BK, STAGES, CONSUMERS = 128, 256, 64, 4, 2
THREADS = 128 * (CONSUMERS + 1)
A_STAGE_BYTES = BM * BK * 2
B_BOX_BYTES = 64 * BK * 2
B_STAGE_BYTES = BN * BK * 2
SMEM_BYTES = 1024 + STAGES * (A_STAGE_BYTES + B_STAGE_BYTES) + 16 * STAGES
# -DEPI_TMA=1 (tma_store=True): C leaves through a shared buffer (4 boxes {64 N, 64 M} per consumer) and TMA stores;
# the buffer takes the fourth stage's room. -DC_PASSES=2 (c_passes=2): half the buffer, C in two passes, 4 stages
EPI_STAGES = 3
C_BOX_BYTES = 64 * 64 * 2
C_BYTES = CONSUMERS * 4 * C_BOX_BYTES
C_PASSES = (1, 2)
DTYPES = ("bfloat16", "float16")

# cuda.h enums (CUDA 12/13 driver API)
TMA_DTYPE = {"float16": 6, "bfloat16": 9}      # CU_TENSOR_MAP_DATA_TYPE_FLOAT16 / _BFLOAT16
TMA_SWIZZLE_128B = 3                           # CU_TENSOR_MAP_SWIZZLE_128B
TMA_L2_PROMOTION_256B = 3                      # CU_TENSOR_MAP_L2_PROMOTION_L2_256B
TMA_INTERLEAVE_NONE = 0
TMA_OOB_FILL_ZERO = 0                          # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: out-of-bounds elements read as 0


# ---------------------------------------------------------------------------------------------------------------------
# The wgmma shared-memory matrix descriptor, mirrored in Python (the .cu's smem_desc)
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


def stage_layout(stage: int = 0, base: int = 0) -> dict:
    """Shared-memory byte addresses of one ring stage (base = the 1024-aligned start of the ring)."""
    a = base + stage * A_STAGE_BYTES
    b = base + STAGES * A_STAGE_BYTES + stage * B_STAGE_BYTES
    return {"A": a, "B": b, "B_boxes": [b + j * B_BOX_BYTES for j in range(BN // 64)],
            "bars": base + STAGES * (A_STAGE_BYTES + B_STAGE_BYTES)}


def operand_descriptors(stage: int, consumer: int, kk: int, base: int = 0, b_kmajor: bool = False) -> tuple[int, int]:
    """(desc_a, desc_b) the consumer warpgroup `consumer` passes to its kk-th wgmma (K slice 16kk..16kk+15) of a
    stage, exactly as the kernel computes them (b_kmajor: the -DB_KMAJOR=1 fallback, B^T read like A)."""
    lay = stage_layout(stage, base)
    da = smem_descriptor(lay["A"] + consumer * 64 * 128 + 32 * kk, 16, 1024)
    if b_kmajor:
        db = smem_descriptor(lay["B"] + 32 * kk, 16, 1024)
    else:
        db = smem_descriptor(lay["B"] + 2048 * kk, B_BOX_BYTES, 1024)
    return da, db


def tma_write_a(smem: np.ndarray, addr: int, tile: np.ndarray) -> None:
    """Model of the TMA box {64 K, 128 M} with 128B swizzle: row r of the tile (128 bytes) at addr + 128 r,
    each element's byte address swizzled. smem holds one uint16 per 2 bytes."""
    rows, cols = tile.shape
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    smem[swizzle_128b(addr + r * 128 + c * 2) // 2] = tile


def tma_write_b_box(smem: np.ndarray, addr: int, box: np.ndarray) -> None:
    """Model of a B box {64 N, 64 K}: row k (64 N values, 128 bytes) at addr + 128 k, swizzled."""
    tma_write_a(smem, addr, box)


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


def simulate_operands(stage: int = 1, seed: int = 0, b_kmajor: bool = False) -> list[str]:
    """Fill one stage the way TMA would (A 128 x 64, B 64 x 256 as 4 boxes), read it back the way wgmma would for
    every consumer and K slice using the kernel's descriptors, and list every operand that comes out wrong
    (empty list = the descriptor arithmetic matches the swizzled layout, under the PTX canonical-layout model)."""
    rng = np.random.default_rng(seed)
    smem = np.zeros(SMEM_BYTES // 2, np.int64)
    a = rng.integers(0, 1 << 15, (BM, BK))
    b = rng.integers(0, 1 << 15, (BK, BN))
    lay = stage_layout(stage)
    tma_write_a(smem, lay["A"], a)
    if b_kmajor:
        tma_write_a(smem, lay["B"], b.T)          # one box {64 K, 256 N} of B^T
    else:
        for j, addr in enumerate(lay["B_boxes"]):
            tma_write_b_box(smem, addr, b[:, 64 * j:64 * (j + 1)])
    bad = []
    for cw in range(CONSUMERS):
        for kk in range(BK // 16):
            da, db = operand_descriptors(stage, cw, kk, b_kmajor=b_kmajor)
            got_a = wgmma_read_kmajor(smem, da)
            if not np.array_equal(got_a, a[64 * cw:64 * (cw + 1), 16 * kk:16 * (kk + 1)]):
                bad.append(f"A consumer {cw} k-slice {kk}")
            got_b = wgmma_read_kmajor(smem, db, rows=BN).T if b_kmajor else wgmma_read_mnmajor(smem, db)
            if not np.array_equal(got_b, b[16 * kk:16 * (kk + 1), :]):
                bad.append(f"B consumer {cw} k-slice {kk}")
    return bad


def epilogue_smem_addresses(consumer: int = 0, c_passes: int = 1) -> np.ndarray:
    """Byte addresses (relative to the C buffers' start) the EPI_TMA epilogue's st.shared.b32 write, exactly as the
    kernel computes them: [warp, lane, j, half] for warp 0..3 of consumer warpgroup `consumer`, lane 0..31, column
    group j 0..31 (pass j // (32 / c_passes); jj = j within its pass), half 0 (rows r0 = 16 warp + lane / 4, values
    d[4j], d[4j+1]) or 1 (row r0 + 8, d[4j+2], d[4j+3])."""
    warp, lane, j, half = np.meshgrid(np.arange(4), np.arange(32), np.arange(32), np.arange(2), indexing="ij")
    boxes = 4 // c_passes
    jj = j % (32 // c_passes)
    r = warp * 16 + lane // 4 + 8 * half
    swz = lane // 4
    return (consumer * boxes * C_BOX_BYTES + (jj // 8) * C_BOX_BYTES + (((j % 8) ^ swz) << 4) + 4 * (lane % 4)
            + r * 128)


def epilogue_round_trip(consumer: int = 0, c_passes: int = 1) -> np.ndarray:
    """What the TMA stores of the EPI_TMA epilogue write to global memory, as a 64 x 256 matrix of indices of the
    accumulator pair (warp, lane, j, half) each 2-column pair came from: in pass h, box jb of the buffer (global
    columns 64 (h boxes + jb)..) is read back through the 128B swizzle (row r of the box at 128 r, 16-byte chunk c
    at c ^ (r % 8)), the same model as tma_write_a's."""
    boxes = 4 // c_passes
    addr = epilogue_smem_addresses(consumer, c_passes) - consumer * boxes * C_BOX_BYTES
    per_pass = 32 // c_passes
    out = np.empty((64, 128), np.int64)                         # 64 rows x 128 column pairs
    rows, pairs = np.meshgrid(np.arange(64), np.arange(128), indexing="ij")
    for h in range(c_passes):
        smem = np.full(boxes * C_BOX_BYTES // 4, -1, np.int64)  # one slot per 32-bit word (a bf16 pair)
        mine = addr[:, :, h * per_pass:(h + 1) * per_pass]     # the stores of pass h
        ids = np.arange(addr.size).reshape(addr.shape)[:, :, h * per_pass:(h + 1) * per_pass]
        smem[mine.ravel() // 4] = ids.ravel()
        cols = slice(h * 128 // c_passes, (h + 1) * 128 // c_passes)
        p = pairs[:, cols] - h * 128 // c_passes
        logical = (p // 32) * C_BOX_BYTES + rows[:, cols] * 128 + (p % 32) * 4      # unswizzled box address
        out[:, cols] = smem[swizzle_128b(logical) // 4]
    return out


def descriptor_table() -> list[dict]:
    """The descriptors of stage 0 as the kernel builds them, decoded (for the lesson and the CPU report)."""
    rows = []
    for kk in range(BK // 16):
        da, db = operand_descriptors(0, 0, kk)
        for name, dsc in (("A (K-major)", da), ("B (N-major, tnspB)", db)):
            d = decode_descriptor(dsc)
            rows.append({"operand": name, "k-slice": kk, "desc": f"0x{dsc:016x}", "start": d["addr"],
                         "LBO": d["lbo"], "SBO": d["sbo"], "swizzle": d["swizzle"]})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Host side: tensor maps through the driver API
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _encode_fn():
    """cuTensorMapEncodeTiled from libcuda (None, why) when it cannot be had."""
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
    """The cuTensorMapEncodeTiled rules this kernel relies on; ValueError naming `name` when one is broken."""
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
    fn, why = _encode_fn()
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


# ---------------------------------------------------------------------------------------------------------------------
# Availability, compile, load
# ---------------------------------------------------------------------------------------------------------------------
def unavailable_reason(gpu: device.DeviceInfo | None = None) -> str | None:
    """Why gemm_wgmma cannot run on `gpu`, or None when it can. `gpu`: a common.device.DeviceInfo (a simulated
    profile in a plan is answered from its architecture alone); None: this machine (no GPU, not sm_90, no
    cuTensorMapEncodeTiled in the driver, no NVRTC)."""
    if gpu is None:
        if not device.has_gpu():
            return tr("no CUDA GPU ({why})", why=tr(device.no_gpu_reason()))
        gpu = device.info()
    if gpu.cc != 90:
        return hopper_only(gpu.arch)
    return None if gpu.simulated else _host_reason()


def hopper_only(arch: str) -> str:
    """The one-line reason off Hopper: wgmma, setmaxnreg and TMA multicast exist only in sm_90a."""
    return tr("wgmma is Hopper-only (sm_90a, compute capability 9.0); this GPU is {arch}", arch=arch)


@functools.lru_cache(maxsize=1)
def _host_reason() -> str | None:
    """What this machine's software lacks for the kernel (the driver's tensor-map encoder, NVRTC), or None."""
    fn, why = _encode_fn()
    if fn is None:
        return why
    if cuda.nvrtc_version() == "missing":
        return tr("NVRTC is not installed (pip install 'nvidia-cuda-nvrtc==13.0.*')")
    return None


def compile_report(dtype: str = "bfloat16", timeout: bool = True, b_kmajor: bool = False, cluster: int = 1,
                   tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> cuda.CompileReport:
    """NVRTC compile for sm_90a (no GPU needed): registers, spills, SASS (HGMMA, UTMALDG, SYNCS)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")
    _check_cluster(cluster, b_kmajor)
    _check_tma_store(tma_store, c_passes)
    if not 0 <= epi_ops <= EPI_BIAS | EPI_GELU | EPI_RES:
        raise ValueError(f"epi_ops: a mask of EPI_BIAS, EPI_GELU, EPI_RES, got {epi_ops!r}")
    return cuda.compile_report(KERNEL_PATH, ARCH,
                               defines=_defines(dtype, timeout, b_kmajor, cluster, tma_store, c_passes, epi_ops))


# The fused epilogue's bits (-DEPI_OPS): + bias[col], then the tanh GELU, then + residual[row, col] (lab 4.2's order)
EPI_BIAS, EPI_GELU, EPI_RES = 1, 2, 4
ACTIVATIONS = (None, "gelu_tanh")


def epi_mask(bias: bool, activation: str | None, residual: bool) -> int:
    return EPI_BIAS * bool(bias) | EPI_GELU * (activation == "gelu_tanh") | EPI_RES * bool(residual)


def _defines(dtype: str, timeout: bool = True, b_kmajor: bool = False, cluster: int = 1,
             tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> dict:
    d = {"GEMM_F16": int(dtype == "float16"), "MBAR_TIMEOUT": int(timeout), "B_KMAJOR": int(b_kmajor)}
    if cluster != 1:
        d["CLUSTER"] = int(cluster)
    if tma_store:
        d["EPI_TMA"] = 1
        if c_passes != 1:
            d["C_PASSES"] = int(c_passes)
    if epi_ops:
        d["EPI_OPS"] = int(epi_ops)
    return d


def stages(tma_store: bool = False, c_passes: int = 1) -> int:
    """The ring's stage count of a build: 4, or 3 when EPI_TMA stages the whole C tile (c_passes = 1)."""
    return EPI_STAGES if tma_store and c_passes == 1 else STAGES


def smem_bytes(tma_store: bool = False, c_passes: int = 1) -> int:
    """Dynamic shared memory of a build (the .cu's SMEM_BYTES): the ring and EPI_TMA's C buffer (C_BYTES / c_passes)."""
    st = stages(tma_store, c_passes)
    c = C_BYTES // c_passes if tma_store else 0
    return 1024 + st * (A_STAGE_BYTES + B_STAGE_BYTES) + c + 16 * st


def _check_tma_store(tma_store, c_passes: int = 1) -> None:
    if not isinstance(tma_store, bool):
        raise ValueError(f"tma_store: expected True or False, got {tma_store!r}")
    if c_passes not in C_PASSES or isinstance(c_passes, bool):
        raise ValueError(f"c_passes: expected one of {C_PASSES}, got {c_passes!r}")
    if c_passes != 1 and not tma_store:
        raise ValueError("c_passes: the C passes belong to the TMA-store epilogue; pass tma_store=True with it")


def _env_choice(var: str, allowed: tuple[str, ...]) -> str | None:
    """The environment variable `var` when set (one of `allowed`, else ValueError naming it), None when unset."""
    v = os.environ.get(var, "")
    if v == "":
        return None
    if v not in allowed:
        raise ValueError(f"{var}: expected {' or '.join(allowed)}, got {v!r}")
    return v


def default_tma_store() -> bool:
    """The epilogue the environment asks for: WGMMA_TMA_STORE=1 the shared-memory + TMA-store epilogue (-DEPI_TMA=1),
    0 C stored from registers; unset: DEFAULT_BUILD's (resolve_build puts this GPU's --tune record in between)."""
    v = _env_choice("WGMMA_TMA_STORE", ("0", "1"))
    return DEFAULT_BUILD["tma_store"] if v is None else v == "1"


CLUSTERS = (1, 2)


def _check_cluster(cluster, b_kmajor: bool) -> None:
    if cluster not in CLUSTERS or isinstance(cluster, bool):
        raise ValueError(f"cluster: expected one of {CLUSTERS}, got {cluster!r}")
    if cluster > 1 and b_kmajor:
        raise ValueError("cluster=2 multicasts B's N-major boxes; it does not combine with b_kmajor=True")


def default_cluster() -> int:
    """Blocks per cluster the environment asks for (WGMMA_CLUSTER=1 or 2); unset: DEFAULT_BUILD's (resolve_build puts
    this GPU's --tune record in between)."""
    v = _env_choice("WGMMA_CLUSTER", ("1", "2"))
    return DEFAULT_BUILD["cluster"] if v is None else int(v)


# ---------------------------------------------------------------------------------------------------------------------
# Which build runs: the --tune record for this GPU, the environment, the arguments
# ---------------------------------------------------------------------------------------------------------------------
# A build is (cluster, tma_store, c_passes). Lab 4.3's --tune (bench.tune_wgmma) times every one of builds() at the
# lab's sizes and records the fastest correct one at each size in results/<gpu>/<TUNED>.json as
#     "winner": [{"shape": [4096, 4096, 4096], "build": {"cluster": 1, "tma_store": true, "c_passes": 1}}, ...]
# gemm_wgmma reads it through common.tuned for the GPU it runs on; without a record it runs DEFAULT_BUILD (the kernel
# file's base build: single blocks, C stored from registers - no tensor map for C, no cluster launch; the other builds
# are the attempts beyond it, and which of them pays depends on the GPU, so only a measurement picks one).
TUNED = "phase4_lab03_tensor_cores_wgmma_tuned"
BUILD_KEYS = ("cluster", "tma_store", "c_passes")
DEFAULT_BUILD = {"cluster": 1, "tma_store": False, "c_passes": 1}
EPILOGUES = ((False, 1), (True, 1), (True, 2))          # (tma_store, c_passes): registers, TMA store, in two passes


def builds(b_kmajor: bool = False) -> list[dict]:
    """Every build of the kernel file for a B layout (cluster 2 needs N-major B): what the head to head times and
    --tune sweeps."""
    clusters = (1,) if b_kmajor else CLUSTERS
    return [{"cluster": cl, "tma_store": ep, "c_passes": cp} for ep, cp in EPILOGUES for cl in clusters]


def build_label(build: dict) -> str:
    """'cluster 2', 'cluster 1 tma-store', 'cluster 2 tma-store 2 passes' (the head to head's names)."""
    return (f"cluster {build['cluster']}" + (" tma-store" if build["tma_store"] else "")
            + (" 2 passes" if build["c_passes"] == 2 else ""))


def check_build(build, where: str = "build") -> dict:
    """A checked, normalized copy of one build {cluster, tma_store, c_passes}; ValueError / TypeError naming the
    field (`where` is its place in the record, e.g. 'winner[1].build')."""
    if not isinstance(build, dict):
        raise TypeError(f"{where}: expected a dict of {', '.join(BUILD_KEYS)}, got {type(build).__name__}")
    missing = [k for k in BUILD_KEYS if k not in build]
    extra = sorted(set(build) - set(BUILD_KEYS))
    if missing or extra:
        raise ValueError(f"{where}: " + "; ".join(([f"missing {', '.join(missing)}"] if missing else [])
                                                   + ([f"unknown {', '.join(extra)}"] if extra else [])))
    cl, epi, cp = build["cluster"], build["tma_store"], build["c_passes"]
    if isinstance(cl, bool) or cl not in CLUSTERS:
        raise ValueError(f"{where}.cluster: expected one of {CLUSTERS}, got {cl!r}")
    if not isinstance(epi, bool):
        raise ValueError(f"{where}.tma_store: expected true or false, got {epi!r}")
    if isinstance(cp, bool) or cp not in C_PASSES:
        raise ValueError(f"{where}.c_passes: expected one of {C_PASSES}, got {cp!r}")
    if cp != 1 and not epi:
        raise ValueError(f"{where}.c_passes: {cp} passes belong to the TMA-store epilogue, but tma_store is false")
    return {"cluster": int(cl), "tma_store": epi, "c_passes": int(cp)}


def check_winners(winners) -> list[dict]:
    """The record's "winner" checked: a non-empty list of {"shape": [M, N, K], "build": {...}}; ValueError /
    TypeError naming the field (common.tuned then refuses the record and says why)."""
    if not isinstance(winners, list) or not winners:
        raise ValueError(f"winner: expected a non-empty list of {{shape, build}} entries, got {winners!r}")
    out = []
    for i, e in enumerate(winners):
        where = f"winner[{i}]"
        if not isinstance(e, dict):
            raise TypeError(f"{where}: expected a dict with shape and build, got {type(e).__name__}")
        shape = e.get("shape")
        if not (isinstance(shape, list) and len(shape) == 3
                and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in shape)):
            raise ValueError(f"{where}.shape: expected [M, N, K] of positive integers, got {shape!r}")
        if "build" not in e:
            raise ValueError(f"{where}.build: missing")
        out.append({"shape": list(shape), "build": check_build(e["build"], where + ".build")})
    return out


def recorded_build(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> tuple[dict | None, str]:
    """(build, where it came from): the --tune winner for `gpu` (default: the GPU at hand) at the tuned size nearest
    m x n x k, or (None, why there is none)."""
    winners, source = tuned.record(TUNED, check_winners, gpu=gpu)
    if not winners:
        return None, source
    e = tuned.nearest(winners, (m, n, k))
    return dict(e["build"]), f"{source}, winner at {'x'.join(map(str, e['shape']))}"


# The names a learner passes to --set for each field of a build (the environment variables' names too)
BUILD_SETTINGS = {"cluster": "WGMMA_CLUSTER", "tma_store": "WGMMA_TMA_STORE", "c_passes": "WGMMA_C_PASSES"}


def build_config(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> tuple[config.Resolved, bool, str]:
    """The build of an m x n x k problem on `gpu` (default: the GPU at hand) as common.config resolves it:
    DEFAULT_BUILD, then this GPU's --tune record (the winner tuned nearest m n k), then --set WGMMA_CLUSTER=2,
    WGMMA_TMA_STORE=1, WGMMA_C_PASSES=2. Returns (the resolution, whether a record was applied, where it came from)."""
    rec, source = recorded_build(m, n, k, gpu)
    winner = source.rsplit(', ', 1)[-1]
    family = "wgmma + TMA build" + ((f" ({tr('winner at {shape}', shape=winner[len('winner at '):])})"
                                     if winner.startswith("winner at ") else f" ({winner})") if rec else "")
    return (config.resolve(family, {BUILD_SETTINGS[f]: v for f, v in DEFAULT_BUILD.items()},
                           tuned={BUILD_SETTINGS[f]: v for f, v in rec.items()} if rec else None,
                           tuned_source=tr("recorded build, {source}", source=_said_record(source)),
                           validate=_check_settings),
            rec is not None, source)


def _check_settings(v: dict) -> dict:
    if isinstance(v["WGMMA_CLUSTER"], bool) or v["WGMMA_CLUSTER"] not in CLUSTERS:
        raise ValueError(f"WGMMA_CLUSTER: expected one of {CLUSTERS}, got {v['WGMMA_CLUSTER']!r}")
    if isinstance(v["WGMMA_C_PASSES"], bool) or v["WGMMA_C_PASSES"] not in C_PASSES:
        raise ValueError(f"WGMMA_C_PASSES: expected one of {C_PASSES}, got {v['WGMMA_C_PASSES']!r}")
    return v


def _check_arguments(b_kmajor: bool, cluster, tma_store, c_passes) -> None:
    """The build arguments a caller gave (None: not given), each checked alone and against the others given."""
    if cluster is not None:
        _check_cluster(cluster, b_kmajor)
    if tma_store is not None:
        _check_tma_store(tma_store, 1 if c_passes is None else c_passes)
    elif c_passes is not None:
        _check_tma_store(True, c_passes)


def resolve_build(m: int, n: int, k: int, *, b_kmajor: bool = False, cluster: int | None = None,
                  tma_store: bool | None = None, c_passes: int | None = None,
                  gpu: device.DeviceInfo | None = None) -> tuple[dict, str]:
    """(build, a sentence on where it came from) that gemm_wgmma runs for an m x n x k problem on `gpu` (default: the
    GPU at hand). Precedence, field by field, first found: the argument (not None); the environment (WGMMA_CLUSTER,
    WGMMA_TMA_STORE, WGMMA_C_PASSES); --set of the same names; this GPU's --tune record (the winner at the tuned size
    nearest m n k); DEFAULT_BUILD (the last three: build_config). Two couplings: b_kmajor runs single blocks (cluster
    1 unless asked for 2, which is refused); c_passes applies to the TMA-store epilogue only - an explicit c_passes=2
    asks for it (tma_store None -> True), and with the register epilogue it is 1."""
    _check_arguments(b_kmajor, cluster, tma_store, c_passes)
    cfg, rec, source = build_config(m, n, k, gpu)
    base = {f: cfg[name] for f, name in BUILD_SETTINGS.items()}
    env_cl = _env_choice("WGMMA_CLUSTER", ("1", "2"))
    env_epi = _env_choice("WGMMA_TMA_STORE", ("0", "1"))
    env_cp = _env_choice("WGMMA_C_PASSES", ("1", "2"))
    changed = [f"{f} from {cfg.sources[name]}" for f, name in BUILD_SETTINGS.items()
               if cfg.sources[name].startswith("--set")]

    def pick(name, arg, env, env_var, fallback):
        if arg is not None:
            if arg != fallback:
                changed.append(f"{name} from the argument")
            return arg
        if env is not None:
            if env != fallback:
                changed.append(f"{name} from {env_var}")
            return env
        return fallback

    if b_kmajor and cluster is None:
        cl = 1
        if base["cluster"] != 1:
            changed.append("cluster 1 (B K-major)")
    else:
        cl = pick("cluster", cluster, None if env_cl is None else int(env_cl), "WGMMA_CLUSTER", base["cluster"])
    if tma_store is None and c_passes == 2:
        tma_store = True
    epi = pick("tma_store", tma_store, None if env_epi is None else env_epi == "1", "WGMMA_TMA_STORE",
               base["tma_store"])
    if epi:
        cp = pick("c_passes", c_passes, None if env_cp is None else int(env_cp), "WGMMA_C_PASSES",
                  base["c_passes"] if base["tma_store"] else 1)
    else:
        cp = 1 if c_passes is None else c_passes
    build = {"cluster": cl, "tma_store": epi, "c_passes": cp}
    _check_cluster(cl, b_kmajor)
    _check_tma_store(epi, cp)
    note = f"recorded build, {source}" if rec else source
    return build, note + (f"; {', '.join(changed)}" if changed else "")


def say_note(note: str) -> str:
    """resolve_build's sentence on where a build came from, in the chosen language (the JSON keeps the English)."""
    head, _, changed = note.partition("; ")
    if head.startswith("recorded build, "):
        head = tr("recorded build, {source}", source=_said_record(head[len("recorded build, "):]))
    else:
        head = config.say_source(head)
    if not changed:
        return head
    said = []
    for c in changed.split(", "):
        name, sep, rest = c.partition(" from ")
        said.append(tr("{name} from the argument", name=name) if rest == "the argument" else
                    tr("{name} from {source}", name=name, source=config.say_source(rest)) if sep else tr(c))
    return head + "; " + ", ".join(said)


def _said_record(source: str) -> str:
    """A tuning record's source ('tuned on GPU (file), winner at MxNxK') in the chosen language."""
    src, sep, shape = source.rpartition(", winner at ")
    if not sep:
        return config.say_source(source)
    return tr("{source}, winner at {shape}", source=config.say_source(src), shape=shape)


def default_b_kmajor() -> bool:
    """The B layout gemm_wgmma uses unless told: N-major (read in place, imm-trans-b = 1); WGMMA_B_KMAJOR=1 in the
    environment switches to the transposed-copy fallback."""
    return os.environ.get("WGMMA_B_KMAJOR", "0") == "1"


@functools.lru_cache(maxsize=None)
def _loaded(dtype: str, b_kmajor: bool = False, cluster: int = 1, tma_store: bool = False, c_passes: int = 1,
            epi_ops: int = 0):
    """(module, function) for the current device, from the sm_90a cubin."""
    from cupy.cuda import function as cfunc
    from cupy_backends.cuda.api import driver

    cubin = compile_report(dtype, b_kmajor=b_kmajor, cluster=cluster, tma_store=tma_store, c_passes=c_passes,
                           epi_ops=epi_ops).cubin
    mod = cfunc.Module()
    mod.load(bytes(cubin))
    fn = mod.get_function(KERNEL)
    driver.funcSetAttribute(fn.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            smem_bytes(tma_store, c_passes))
    _LOADED.add((dtype, b_kmajor, cluster, tma_store, c_passes, epi_ops))
    return mod, fn


class _LaunchConfig(ctypes.Structure):          # CUlaunchConfig (cuda.h)
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p), ("attrs", ctypes.c_void_p),
                ("numAttrs", ctypes.c_uint)]


@functools.lru_cache(maxsize=None)
def max_clusters(dtype: str, cluster: int, tma_store: bool = False, c_passes: int = 1, epi_ops: int = 0) -> int:
    """How many clusters of `cluster` blocks can be resident at once (cuOccupancyMaxActiveClusters): the persistent
    grid must not exceed it, or the clusters past it run as a second wave. Falls back to SMs // cluster."""
    sms = device.info().sms
    _, fn = _loaded(dtype, False, cluster, tma_store, c_passes, epi_ops)
    try:
        lib = ctypes.CDLL("libcuda.so.1")
        cfg = _LaunchConfig(sms // cluster * cluster, 1, 1, THREADS, 1, 1, smem_bytes(tma_store, c_passes), None,
                            None, 0)
        n = ctypes.c_int(0)
        rc = lib.cuOccupancyMaxActiveClusters(ctypes.byref(n), ctypes.c_void_p(fn.ptr), ctypes.byref(cfg))
        if rc == 0 and n.value > 0:
            return int(n.value)
    except (OSError, AttributeError):
        pass
    return sms // cluster


def hang_report(reset: bool = True) -> str | None:
    """None, or what the kernel's barrier-timeout record says (a wait that never completed, see the .cu)."""
    import cupy

    out = []
    for dtype, kmaj, cl, epi, passes, ops in sorted(_LOADED):
        mod, _ = _loaded(dtype, kmaj, cl, epi, passes, ops)
        ptr = mod.get_global_var("gemm_wgmma_hang")
        mem = cupy.cuda.UnownedMemory(ptr, 16, mod)
        arr = cupy.ndarray((4,), cupy.uint32, cupy.cuda.MemoryPointer(mem, 0))
        v = [int(x) for x in arr.get()]
        if v[0]:
            word = v[3]
            which = "empty (producer waiting for consumers)" if word & 2 else "full (consumer waiting for TMA)"
            out.append(f"{dtype}{' B_KMAJOR' if kmaj else ''}{' CLUSTER=2' if cl > 1 else ''}"
                       f"{' EPI_TMA' if epi else ''}{' C_PASSES=2' if passes > 1 else ''}"
                       f"{f' EPI_OPS={ops}' if ops else ''} kernel: block "
                       f"{v[1]} thread {v[2]} timed out on "
                       f"the {which} barrier at shared 0x{word >> 2:x}, parity {word & 1}")
            if reset:
                arr.fill(0)
    return "; ".join(out) or None


_LOADED: set[tuple[str, bool, int, bool, int, int]] = set()   # modules loaded (hang_report reads their timeout records)


# ---------------------------------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _padded(x, cols: int):
    """A zero-padded copy of 2-D x with `cols` columns (an aligned row stride for TMA)."""
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


def _needs_copy(x, cols: int) -> bool:
    return cols % 8 != 0 or arrays.ptr(x) % 16 != 0


def prepare(a, b, out=None):
    """Validate (everything that can be checked without a GPU first) and return (a, b, out, M, N, K, dtype)."""
    for name, x in (("a", a), ("b", b)):
        lib = arrays.library(x)
        if lib not in ("torch", "cupy", "numpy"):
            raise TypeError(f"{name}: expected a torch tensor or CuPy array, got {type(x).__name__}")
        dt = arrays.dtype_name(x)
        if dt not in DTYPES:
            raise TypeError(f"{name}: dtype {dt} is not supported here; expected one of {', '.join(DTYPES)}")
        if x.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D array, got {x.ndim}-D with shape {tuple(x.shape)}")
    dt_a, dt_b = arrays.dtype_name(a), arrays.dtype_name(b)
    if dt_a != dt_b:
        raise TypeError(f"a, b: dtypes must match, got {dt_a} and {dt_b}")
    m, n, k = arrays.matmul_dims(a, b)
    for name, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31 - BN:
            raise ValueError(f"{name} = {v}: the kernel indexes tiles with 32-bit integers (limit 2^31 - {BN})")
    arrays.check_array("a", a, dtypes=DTYPES, ndim=2, libs=("torch", "cupy"))
    arrays.check_array("b", b, dtypes=DTYPES, ndim=2, libs=("torch", "cupy"))
    if arrays.library(a) != arrays.library(b):
        raise TypeError(f"a, b: must come from the same library, got {arrays.library(a)} and {arrays.library(b)}")
    if arrays.library(a) == "torch" and a.device != b.device:
        raise ValueError(f"a, b: must be on the same GPU, got {a.device} and {b.device}")
    out = arrays.check_out(out, (m, n), dt_a, a)
    return a, b, out, m, n, k, dt_a


def gemm_wgmma(a, b, out=None, *, bias=None, activation: str | None = None, residual=None,
               b_kmajor: bool | None = None, cluster: int | None = None, tma_store: bool | None = None,
               c_passes: int | None = None):
    """C = A @ B (bf16 or fp16 in, fp32 accumulate, same dtype out) with the wgmma + TMA kernel; with bias= (N,),
    activation="gelu_tanh" and/or residual= (M, N), C = activation(A @ B + bias) + residual, fused into the
    epilogue (-DEPI_OPS) before the one rounding, as lab 4.2's linear() does (residual: rows contiguous, any row
    stride, not overlapping out; K = 0 with an epilogue is refused).

    a: (M, K), b: (K, N), row-major, contiguous, on the GPU (bf16: torch tensors; fp16: torch or CuPy). out: optional
    (M, N) of the same dtype and library. When K or N is not a multiple of 8 (or a base address is not 16-byte
    aligned) that operand is first copied into a zero-padded buffer with an aligned row stride (TMA's rule).
    b_kmajor=True (default: WGMMA_B_KMAJOR=1 in the environment, else False) runs the fallback kernel on a
    transposed copy of B (an extra pass over B; kept to separate an MN-major descriptor bug from anything else).

    The build - cluster, tma_store, c_passes - is resolve_build's: each argument left None comes from the
    environment (WGMMA_CLUSTER=1|2, WGMMA_TMA_STORE=0|1, WGMMA_C_PASSES=1|2), else from this GPU's --tune record
    (the winner at the tuned size nearest M N K), else DEFAULT_BUILD (cluster 1, C stored from registers).
    cluster=2 runs pairs of blocks that share each B tile by TMA multicast; it needs the N-major B layout, and a
    problem of one tile row runs with cluster=1 (the pair would have no partner). tma_store=True runs the -DEPI_TMA=1
    build: C leaves through shared memory and TMA stores, overlapped with the next tile's MMAs; when out's base is
    not 16-byte aligned or N is not a multiple of 8 (no legal tensor map for C) that build stores from registers
    instead. c_passes=2 (with tma_store) stages C in two halves of columns through a buffer half the size, which
    leaves room for the fourth stage.
    """
    if b_kmajor is None:
        b_kmajor = default_b_kmajor()
    _check_arguments(b_kmajor, cluster, tma_store, c_passes)         # before anything else, GPU or not
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation: expected one of {ACTIVATIONS}, got {activation!r}")
    a, b, out, m, n, k, dt = prepare(a, b, out)
    epi_ops = epi_mask(bias is not None, activation, residual is not None)
    ldr = _check_epilogue(bias, residual, out, a, m, n, k, dt)
    build, _ = resolve_build(m, n, k, b_kmajor=b_kmajor, cluster=cluster, tma_store=tma_store, c_passes=c_passes)
    cluster, tma_store, c_passes = build["cluster"], build["tma_store"], build["c_passes"]
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    why = unavailable_reason()
    if why:
        raise RuntimeError(f"gemm_wgmma cannot run here: {why}")
    if _needs_copy(a, k):
        a = _padded(a, -(-k // 8) * 8)
    if b_kmajor:
        bt = b.t() if arrays.library(b) == "torch" else b.T
        b = _padded(bt, -(-k // 8) * 8)                     # B^T, N x K, K contiguous
        map_b = _tensor_map(arrays.ptr(b), dt, n, k, int(b.shape[1]) * 2, BN, BK, "b")
    else:
        if _needs_copy(b, n):
            b = _padded(b, -(-n // 8) * 8)
        map_b = _tensor_map(arrays.ptr(b), dt, k, n, int(b.shape[1]) * 2, BK, 64, "b")
    map_a = _tensor_map(arrays.ptr(a), dt, m, k, int(a.shape[1]) * 2, BM, BK, "a")
    cluster = launch_cluster(m, cluster)
    map_c = None
    if tma_store and n % 8 == 0 and arrays.ptr(out) % 16 == 0:
        map_c = _tensor_map(arrays.ptr(out), dt, m, n, n * 2, 64, 64, "out")
    _launch(dt, map_a, map_b, out, m, n, k, b_kmajor, cluster, tma_store, map_c, c_passes, epi_ops, bias, residual,
            ldr)
    return out


def _check_epilogue(bias, residual, out, a, m: int, n: int, k: int, dt: str) -> int:
    """Validate the fused epilogue's operands (TypeError / ValueError naming them); returns the residual's row
    stride in elements (0 without one)."""
    lib = arrays.library(a)
    if bias is not None:
        arrays.check_array("bias", bias, dtypes=(dt,), ndim=1, libs=(lib,))
        if int(bias.shape[0]) != n:
            raise ValueError(f"bias: expected {n} values (b has {n} columns), got shape {tuple(bias.shape)}")
        arrays.check_same("a, bias", a, bias, shape=False)
        if arrays.overlap(bias, out):
            raise ValueError("bias: overlaps out (the kernel reads it through the read-only cache while C is stored)")
    ldr = 0
    if residual is not None:
        arrays.check_array("residual", residual, dtypes=(dt,), ndim=2, contiguous=False, libs=(lib,))
        if tuple(residual.shape) != (m, n):
            raise ValueError(f"residual: expected shape {(m, n)}, got {tuple(residual.shape)}")
        arrays.check_same("a, residual", a, residual, shape=False)
        st_bytes = arrays.byte_strides(residual)
        if any(v % 2 for v in st_bytes):
            raise ValueError(f"residual: byte strides {tuple(st_bytes)} are not whole elements")
        st = [v // 2 for v in st_bytes]
        if n > 1 and st[1] != 1 or m > 1 and st[0] < n:
            raise ValueError(f"residual: rows must be contiguous and not overlap each other (strides {tuple(st)}); "
                             "pass residual.contiguous()")
        ldr = st[0] if m > 1 else n
        if arrays.overlap(residual, out):
            raise ValueError("residual: overlaps out; the fused epilogue reads the residual while C is being stored "
                             "(pass a separate out)")
    if k == 0 and m and n and (bias is not None or residual is not None):
        raise ValueError("a, b: K = 0 with a fused epilogue (the kernel needs at least one K step); "
                         "compute activation(bias) + residual directly")
    return ldr


@functools.lru_cache(maxsize=256)
def _tensor_map(ptr, dtype, rows, cols, row_stride_bytes, box_rows, box_cols, name):
    """encode_tensor_map, remembered: a map holds only (address, shape, stride, box), so an equal key is an equal
    map; benchmark loops then pay the driver call once."""
    m = encode_tensor_map(ptr, dtype, rows, cols, row_stride_bytes, box_rows, box_cols, name=name)
    m.flags.writeable = False
    return m


def _stream_ptr(x) -> int:
    if arrays.library(x) == "torch":
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    import cupy

    return int(cupy.cuda.get_current_stream().ptr)


def grid_size(m: int, n: int, cluster: int = 1, resident: int | None = None,
              gpu: device.DeviceInfo | None = None) -> int:
    """Blocks of the persistent grid: one per unit of `cluster` tiles stacked along M, at most `resident` clusters
    (default: one block per SM of `gpu`, default the GPU every prediction uses here), times the cluster size."""
    units = -(-(-(-m // BM)) // cluster) * -(-n // BN)
    if resident is None:
        resident = (gpu or device.current()).sms // cluster
    return max(1, min(units, resident)) * cluster


def launch_cluster(m: int, cluster: int) -> int:
    """The cluster size a launch uses: a problem of one tile row runs single blocks (the pair would have no partner)."""
    return 1 if -(-m // BM) < 2 else cluster


def launch_shape(m: int, n: int, dtype: str, b_kmajor: bool, cluster: int, tma_store: bool, c_passes: int,
                 epi_ops: int = 0, resident: int | None = None, gpu: device.DeviceInfo | None = None):
    """(blocks, dynamic shared memory bytes, -D defines) of one launch of a build on an m x n output: what _launch
    launches and what lab 4.3's plan lists for a GPU (resident: clusters that fit at once, else one block per SM)."""
    return (grid_size(m, n, cluster, resident, gpu), smem_bytes(tma_store, c_passes),
            _defines(dtype, True, b_kmajor, cluster, tma_store, c_passes, epi_ops))


def _launch(dt, map_a, map_b, out, m, n, k, b_kmajor=False, cluster=1, tma_store=False, map_c=None, c_passes=1,
            epi_ops=0, bias=None, residual=None, ldr=0):
    from cupy_backends.cuda.api import driver

    _, fn = _loaded(dt, bool(b_kmajor), cluster, tma_store, c_passes, epi_ops)
    resident = max_clusters(dt, cluster, tma_store, c_passes, epi_ops) if cluster > 1 else None
    grid, smem, _ = launch_shape(m, n, dt, bool(b_kmajor), cluster, tma_store, c_passes, epi_ops, resident,
                                 device.info())
    c_ptr = arrays.ptr(out)
    pair = int(n % 2 == 0 and c_ptr % 4 == 0)
    args = [ctypes.c_void_p(c_ptr), ctypes.c_int32(m), ctypes.c_int32(n), ctypes.c_int32(k), ctypes.c_int32(n),
            ctypes.c_int32(pair)]
    maps = [map_a, map_b]
    if tma_store:      # the EPI_TMA build takes C's map after B's and a flag last (0: no legal map, register stores)
        maps.append(map_c if map_c is not None else map_a)      # map_a: a valid stand-in the kernel never reads
        args.append(ctypes.c_int32(int(map_c is not None)))
    if epi_ops:        # the EPI_OPS build: bias, residual (null where unused), its row stride, its pair-load flag
        r_ptr = arrays.ptr(residual) if residual is not None else 0
        args += [ctypes.c_void_p(arrays.ptr(bias) if bias is not None else 0), ctypes.c_void_p(r_ptr),
                 ctypes.c_int64(int(ldr)), ctypes.c_int32(int(r_ptr % 4 == 0 and ldr % 2 == 0))]
    ptrs = (ctypes.c_void_p * (len(maps) + len(args)))(*[mp.ctypes.data for mp in maps],
                                                         *[ctypes.addressof(x) for x in args])
    # cuLaunchKernel copies every argument (the 128-byte maps included) before it returns
    driver.launchKernel(fn.ptr, grid, 1, 1, THREADS, 1, 1, smem, _stream_ptr(out),
                        ctypes.addressof(ptrs), 0)


# ---------------------------------------------------------------------------------------------------------------------
# Checking
# ---------------------------------------------------------------------------------------------------------------------
CHECK_SHAPES = [(1, 1, 1), (127, 129, 136), (128, 256, 64), (1000, 1000, 1000), (8192, 8192, 64), (33, 70, 13),
                (302, 255, 517)]
QUICK_SHAPES = [(1, 1, 1), (127, 129, 136), (128, 256, 64), (33, 70, 13), (302, 255, 517)]


def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def tolerance(k: int, dtype: str) -> check.Tol:
    """fp32 accumulation over K terms grows like sqrt(K) * 2^-24 relative; the output rounding to bf16 (2^-9) or
    fp16 (2^-12) dominates: element error <= one output ulp plus the accumulation term."""
    ulp = check.UNIT_ROUNDOFF[dtype]
    acc = np.sqrt(max(k, 1)) * 2.0 ** -22
    return check.Tol(rel_norm=ulp + acc, elem=2 * ulp + 8 * acc)


def make_inputs(m, n, k, dtype: str, seed: int = 0):
    """A, B ~ N(0, 1) rounded to dtype, on the GPU, and their float64 host copies (the reference sees exactly the
    rounded values)."""
    rng = check.rng(seed)
    a = arrays.from_numpy(rng.standard_normal((m, k)), dtype, "cuda")
    b = arrays.from_numpy(rng.standard_normal((k, n)), dtype, "cuda")
    if dtype == "float16" and arrays.library(a) != "torch":   # keep one library per dtype for the peers
        import torch

        a, b = torch.from_dlpack(a), torch.from_dlpack(b)
    return a, b, arrays.to_numpy(a).astype(np.float64), arrays.to_numpy(b).astype(np.float64)


def check_shape(m, n, k, dtype: str = "bfloat16", seed: int = 0, b_kmajor: bool | None = None,
                cluster: int | None = None, tma_store: bool | None = None,
                c_passes: int | None = None) -> check.Comparison:
    """Poisoned output, float64 reference of the rounded inputs."""
    a, b, a_f64, b_f64 = make_inputs(m, n, k, dtype, seed)
    out = check.poisoned((m, n), dtype, a)
    gemm_wgmma(a, b, out=out, b_kmajor=b_kmajor, cluster=cluster, tma_store=tma_store, c_passes=c_passes)
    c = check.compare(out, reference(a_f64, b_f64), dtype, tolerance(k, dtype))
    hang = hang_report()
    if hang:
        c = check.Comparison(False, c.rel_norm_err, c.max_abs_err, c.n_bad, c.n, c.message + " | " + hang)
    return c


def verify_sample(out, a, b, dtype, n_rows: int = 64) -> check.Comparison:
    """Big products: sampled rows (and the last) against a float64 product on the GPU."""
    import torch

    m = int(a.shape[0])
    rows = torch.as_tensor(np.unique(np.concatenate([check.rng(7).integers(0, m, n_rows), [0, m - 1]])),
                           device=a.device)
    ref = a[rows].double() @ b.double()
    return check.compare(out[rows].double().cpu().numpy(), ref.cpu().numpy(), dtype,
                         tolerance(int(a.shape[1]), dtype))


# ---------------------------------------------------------------------------------------------------------------------
# Debugging aid: one GPU run that says where a layout bug is
# ---------------------------------------------------------------------------------------------------------------------
def _index_probe(kind: str, dtype: str = "bfloat16"):
    """Inputs whose product spells out which element of A or B each output read (all values exact in bf16).

    kind "b_row": A = per-row one-hot (A[i, k] = 1 iff k == i % 64), B[k, n] = k + 1   -> C[i, n] = i % 64 + 1
    kind "b_col": same A,                           B[k, n] = n + 1   -> C[i, n] = n + 1
    kind "a_row": B[k, n] = 1 iff n % 64 == k,      A[i, k] = i + 1   -> C[i, n] = i + 1
    kind "a_col": same B,                           A[i, k] = k + 1   -> C[i, n] = n % 64 + 1
    Returns (A, B, expected) as float64 NumPy, M = 128, N = 256, K = 64 (one tile, one stage).
    """
    m, n, k = BM, BN, BK
    i = np.arange(m)[:, None]
    kk = np.arange(k)
    nn = np.arange(n)[None, :]
    if kind.startswith("b_"):
        a = (kk[None, :] == (i % 64)).astype(np.float64)
        b = np.repeat((kk[:, None] + 1.0), n, 1) if kind == "b_row" else np.repeat(nn + 1.0, k, 0)
    else:
        b = ((nn % 64) == kk[:, None]).astype(np.float64)
        a = np.repeat(i + 1.0, k, 1) if kind == "a_row" else np.repeat(kk[None, :] + 1.0, m, 0)
    return a, b, a @ b


def _mismatch_summary(got: np.ndarray, exp: np.ndarray, label: str, index_coded: bool) -> list[str]:
    bad = ~np.isclose(got, exp, rtol=0, atol=1e-3) | ~np.isfinite(got)
    lines = [tr("[{label}] {bad}/{size} wrong", label=label, bad=int(bad.sum()), size=bad.size)]
    if not bad.any():
        return lines
    r, c = np.nonzero(bad)
    lines.append(tr("  first: {cells}", cells=", ".join(tr("({i},{j}) got {got:g} want {want:g}", i=i, j=j,
                                                            got=got[i, j], want=exp[i, j])
                                                         for i, j in list(zip(r, c))[:6])))
    lines.append(tr("  wrong rows mod 8: {mod}  rows by 16-row warp slab: {slabs}",
                    mod=np.bincount(r % 8, minlength=8).tolist(),
                    slabs=np.bincount(r // 16, minlength=max(1, got.shape[0] // 16)).tolist()))
    lines.append(tr("  wrong cols mod 8: {mod}  cols by 64-col block: {blocks}",
                    mod=np.bincount(c % 8, minlength=8).tolist(),
                    blocks=np.bincount(c // 64, minlength=max(1, -(-got.shape[1] // 64))).tolist()))
    if index_coded:
        g = np.where(np.isfinite(got), np.rint(got), -1).astype(np.int64) - 1
        e = np.rint(exp).astype(np.int64) - 1
        x = (g[bad] ^ e[bad])
        vals, cnt = np.unique(x, return_counts=True)
        top = sorted(zip(cnt, vals), reverse=True)[:8]
        lines.append(tr("  index read XOR index wanted (count): {top}   (8/16/32/48.. = swizzle chunk mix-up; 64 = "
                        "wrong consumer half or LBO)", top=", ".join(f"{v}:{n}" for n, v in top)))
        # an 8 x 32 map of 8x8 blocks of the first 64 rows: '.' right, 'X' wrong
        blocks = bad[:64, :256].reshape(8, 8, -1, 8).any(axis=(1, 3))
        lines.append(tr("  8x8 blocks of rows 0-63 ('.' ok, 'X' wrong):"))
        lines += ["    " + "".join("X" if v else "." for v in row) for row in blocks]
    return lines


def debug(dtype: str = "bfloat16") -> int:
    """Both B layouts (N-major in place, and the K-major fallback): index-coded probes and small random cases,
    printing where the first mismatches are. 0 when everything is right."""
    print(tr("debug: {kernel} ({dtype}), tile {bm}x{bn}x{bk}, {stages} stages, smem {smem} B, grid min(tiles, SMs)",
             kernel=KERNEL, dtype=dtype, bm=BM, bn=BN, bk=BK, stages=STAGES, smem=SMEM_BYTES))
    for kmaj in (False, True):
        bad_sim = simulate_operands(b_kmajor=kmaj)
        print(tr("descriptor model (CPU), B {major}-major: {result}", major='K' if kmaj else 'N',
                 result="ok" if not bad_sim else tr("WRONG: {bad}", bad=bad_sim)))
    report.print_table(descriptor_table()[:4], title="stage-0 descriptors (consumer 0, B N-major)")
    results = {}
    for kmaj in (False, True):
        print("\n=== B " + (tr("K-major (fallback: transposed copy, -DB_KMAJOR=1)") if kmaj
                           else tr("N-major (default, tnspB)")))
        results[kmaj] = _debug_one(dtype, kmaj)
    print("\n" + tr("debug summary: B N-major (default): {n_major} | B K-major (fallback): {k_major}",
                    n_major=tr("correct") if results[False] else tr("WRONG"),
                    k_major=tr("correct") if results[True] else tr("WRONG")))
    if results[True] and not results[False]:
        print(tr("-> the MN-major B descriptor (LBO/SBO/start step, tnspB) is the suspect; WGMMA_B_KMAJOR=1 makes "
                 "gemm_wgmma use the fallback meanwhile"))
    return 0 if all(results.values()) else 1


def _debug_one(dtype: str, b_kmajor: bool) -> bool:
    import torch

    ok = True
    tdt = getattr(torch, dtype)
    for kind in ("b_row", "b_col", "a_row", "a_col"):
        a_f64, b_f64, exp = _index_probe(kind)
        a = torch.tensor(a_f64, dtype=tdt, device="cuda")
        b = torch.tensor(b_f64, dtype=tdt, device="cuda")
        out = check.poisoned(exp.shape, dtype, a)
        try:
            gemm_wgmma(a, b, out=out, b_kmajor=b_kmajor)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a debug run reports and goes on
            print(tr("[{kind}] launch failed: {error}", kind=kind, error=f"{type(e).__name__}: {e}"))
            return False
        got = arrays.to_numpy(out).astype(np.float64)
        lines = _mismatch_summary(got, exp, tr("index probe {kind}", kind=kind), True)
        wrong = ~np.isclose(got, exp, rtol=0, atol=1e-3) | ~np.isfinite(got)
        ok &= not wrong.any() and wrong.size == 32768
        print("\n".join(lines))
        h = hang_report()
        if h:
            print(tr("  HANG RECORD: {record} (skipping this layout's remaining cases: each would wait out the timeout)",
                     record=h))
            return False
    for (m, n, k) in ((128, 256, 128), (256, 512, 256), (100, 302, 70), (129, 257, 1000)):
        a, b, a_f64, b_f64 = make_inputs(m, n, k, dtype, seed=m + n + k)
        out = check.poisoned((m, n), dtype, a)
        gemm_wgmma(a, b, out=out, b_kmajor=b_kmajor)
        torch.cuda.synchronize()
        exp = reference(a_f64, b_f64)
        got = arrays.to_numpy(out).astype(np.float64)
        cmp = check.compare(got, exp, dtype, tolerance(k, dtype))
        print(f"[random {m}x{n}x{k}] {cmp.message}")
        if not cmp.ok:
            ok = False
            tol = tolerance(k, dtype)
            badm = ~(np.abs(got - exp) <= tol.elem * (np.abs(exp) + np.mean(np.abs(exp))))
            r, c = np.nonzero(badm)
            print(tr("  wrong rows by 64: {rows}  cols by 64: {cols}  first: {first}",
                     rows=np.bincount(r // 64).tolist(), cols=np.bincount(c // 64).tolist(),
                     first=list(zip(r[:5].tolist(), c[:5].tolist()))))
        h = hang_report()
        if h:
            print(tr("  HANG RECORD: {record} (skipping this layout's remaining cases: each would wait out the timeout)",
                     record=h))
            return False
    print(tr("debug: {result}", result=tr("all correct") if ok else tr("MISMATCHES (see above)")))
    return ok


def _layout(kmajor: bool) -> str:
    return "K-major copy" if kmajor else "N-major (tnspB)"
