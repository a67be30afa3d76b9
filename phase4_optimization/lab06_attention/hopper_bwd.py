"""Lab 4.6, the Hopper backward's host side: kernels_hopper_bwd.cu compiled for sm_90a through
common.cuda, and flash_attn_bwd_hopper, with the API of the Triton backward (flash.flash_attn_bwd) so that the two can
be compared call for call.

Three launches (the .cu's header has the design, the shared-memory budget, the FLOPs and the prediction):
  attn_bwd_delta       Delta = rowsum(dO * O) (fp32, B Hq S), and dQ's fp32 accumulator zeroed row by row
  attn_bwd_01_mma      one block per (64-key tile, batch, key/value head): dK, dV (summed over the group's query heads
                       inside the block), dQ added into the accumulator with red.global.add.f32
    or attn_bwd_02_wgmma  the same with S^T = K Q^T and dP^T = V dO^T as wgmma (rung="02")
    or attn_bwd_03_wgmma_all  every GEMM as wgmma (rung="03")
    or attn_bwd_04_wgmma_2stage  rung 03 with the next step's loads under this step's work (rung="04")
    or attn_bwd_05_tma   rung 04 with every copy a TMA one, issued by one thread (rung="05"; attn_bwd_prep instead of
                         attn_bwd_delta before it, packing each query tile's LSE log2e and Delta into one bulk copy)
    or attn_bwd_06_ws    warp-specialized: a producer warpgroup issuing the copies through a 2-stage mbarrier ring
                         and 2 consumer warpgroups of 64 keys each, 128 keys a block (rung="06")
    or attn_bwd_07_ws_bulk_dq  rung 06 with each consumer's dQ block staged in shared memory and added into a tiled
                         accumulator by one bulk reduction (rung="07"; attn_bwd_dq_convert_tiled reads it)
    or attn_bwd_08_dkdv + attn_bwd_08_dq  rung 06 without dQ, then a dQ pass (one block per 128 query rows walking
                         the key tiles, recomputing S and dP): no reductions, no accumulator, no convert (rung="08")
    or attn_bwd_09_ws_overlap  rung 07 with its step re-ordered and slimmed: P from S while dP is on the tensor
                         cores, dV issued before the dQ barrier, dQ's staging under dK, no mask where no element
                         needs one, descriptors moved in place; causal blocks heaviest first (rung="09")
    or attn_bwd_10_ws_rotate  rung 09 with each non-causal block walking the query tiles from a tile of its own, so
                         that the blocks of a head running together add dQ into different tiles (rung="10")
    or attn_bwd_11_ws_fused_dq  rung 10 with dQ converted by the kernel itself: the consumer whose reduction is a
                         dq_acc block's last (a counter per block) writes that block into dq (rung="11"; no convert)
    or attn_bwd_12_ws_head_dq  rung 10 with dQ converted by the last key block of each query head, at the end of its
                         walk (a counter per head; rung="12"; no convert)
  attn_bwd_dq_convert  dQ = sm_scale x accumulator in the inputs' dtype (where dQ's softmax scale is applied; dK's is
                       applied in the backward kernel's epilogue)

Rung 01 runs mma.sync (HMMA) with cp.async loads, rung 02 moves two of its five GEMMs to wgmma (HGMMA), rung 03 all
five, rung 04 double-buffers the loads, rung 05 makes them TMA copies, rung 06 specializes warpgroups (a producer, two
consumers) over 128-key blocks, rung 07 adds dQ by bulk reductions instead of per-element atomics, rung 08 computes
dQ in a pass of its own instead, rung 09 orders rung 07's step so that the tensor cores have work while the threads
compute, rung 10 rotates rung 09's query-tile order per key block, rungs 11 and 12 convert dQ inside the kernel
(per block as it completes, or per head by its last key block). The CPU tests compile every build and read its
registers, spills and HMMA / HGMMA counts, and model the shared-memory addressing of every rung; the GPU tier,
tests/test_phase4_lab06_attention_hopper_bwd_gpu.py, checks dQ, dK, dV of each rung against float64 on an sm_90 GPU.
Rungs 01-12 have been checked and timed on an sm_90 GPU (the session logs under logs/). DEFAULT_RUNG is the fastest
rung measured.

Run on an sm_90 GPU: python -m pytest -q tests/test_phase4_lab06_attention_hopper_bwd_gpu.py, and for where a rung is
wrong python -m phase4_optimization.lab06_attention.hopper_bwd_check (its speed: .hopper_bwd_bench)
The compile report (any machine): python -m phase4_optimization.lab06_attention.hopper_bwd
"""
from __future__ import annotations

import ctypes
import functools
import os

from common import arrays, cuda
from common import hopper as common_hopper

from . import hopper as hp

HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_PATH = os.path.join(HERE, "kernels_hopper_bwd.cu")
KERNELS = {"delta": "attn_bwd_delta", "prep": "attn_bwd_prep", "01": "attn_bwd_01_mma", "02": "attn_bwd_02_wgmma",
           "03": "attn_bwd_03_wgmma_all", "04": "attn_bwd_04_wgmma_2stage", "05": "attn_bwd_05_tma",
           "06": "attn_bwd_06_ws", "07": "attn_bwd_07_ws_bulk_dq", "08": "attn_bwd_08_dkdv", "dq08": "attn_bwd_08_dq",
           "09": "attn_bwd_09_ws_overlap", "10": "attn_bwd_10_ws_rotate", "11": "attn_bwd_11_ws_fused_dq",
           "12": "attn_bwd_12_ws_head_dq", "convert": "attn_bwd_dq_convert",
           "convert_tiled": "attn_bwd_dq_convert_tiled"}
RUNGS = ("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12")   # the backward's rungs (KERNELS)
TMA_RUNGS = RUNGS[4:]               # copies by TMA: tensor maps, and attn_bwd_prep's packed LSE / Delta
WS_RUNGS = RUNGS[5:]                # warp-specialized: THREADS_WS threads, CONSUMERS x BLOCK_N keys a block
BULK_DQ_RUNGS = ("07", "09", "10", "11", "12")   # dQ by bulk reductions into the tiled accumulator (dq_index)
FUSED_DQ_RUNGS = ("11", "12")       # dQ converted by the backward kernel itself (no convert_tiled; dq_count)
DEFAULT_RUNG = "09"                 # the fastest rung hopper_bwd_bench has measured
# each rung's name in the benchmarks' tables (hopper_bwd_bench, the lab's backward targets in timing.py)
ROW_NAMES = {"01": "cuda hopper bwd 01 mma.sync", "02": "cuda hopper bwd 02 wgmma S^T, dP^T",
             "03": "cuda hopper bwd 03 wgmma every GEMM", "04": "cuda hopper bwd 04 wgmma, loads double-buffered",
             "05": "cuda hopper bwd 05 wgmma, TMA loads", "06": "cuda hopper bwd 06 warp-specialized, 128 keys",
             "07": "cuda hopper bwd 07 warp-specialized, dQ by bulk reduction",
             "08": "cuda hopper bwd 08 warp-specialized, dQ pass of its own",
             "09": "cuda hopper bwd 09 warp-specialized, softmax and dQ under the GEMMs",
             "10": "cuda hopper bwd 10 rung 09, query tiles rotated per key block",
             "11": "cuda hopper bwd 11 rung 10, dQ converted in the kernel",
             "12": "cuda hopper bwd 12 rung 10, dQ converted by each head's last block"}
ARCH = "sm_90a"
DTYPES = ("bfloat16", "float16")
HEAD_DIMS = (64, 128)
# CONFIG: kernels_hopper_bwd.cu's compile-time constants, in one place; each reaches the kernel as -DNAME=VALUE beside
# the build's HEAD_DIM and ATTN_FP16, and the .cu holds no value of its own.
#   BLOCK_N = 64      keys per block (warp w owns keys 16w .. 16w+15)      NWARPS = 4   (128 threads, BLOCK_N / 16)
#   BLOCK_M = 64      query rows per step (== BLOCK_N: causal skipping)   DELTA_ROWS = 4  rows (warps) per delta block
#   CONSUMERS = 2     rung 06: consumer warpgroups, BLOCK_N keys each (a block: CONSUMERS x BLOCK_N keys)
#   PRODUCER_REGS = 24, CONSUMER_REGS = 240   rung 06's setmaxnreg split (24 + 2 x 240 <= 512 per lane, as the forward)
#   LPT_HEADS = 4     rung 09, causal: the grid read in groups of this many heads, key block first in a group
#                     (longest_first: the heaviest blocks start first, the grid ends on light ones)
#   MBAR_TIMEOUT = 0  0: plain barrier waits. 1, the debug build: a wait that spins ~4 s records who waited on what
#                     (hang_report prints it) and the kernel runs out instead of hanging; the launches build it with
#                     ATTN_MBAR_TIMEOUT=1 in the environment (debug_waits; the forward's switch too)
#   LOAD_RACE = 0     for a test only: > 0 holds every step's copies back - the producers (rungs 06-12, rung 08's dQ
#                     pass) wait this many cycles before each stage's copies, rung 05 issues a step's copies just
#                     before the step instead of a step ahead - so a wait at the wrong parity reads a stage before it
#                     lands on every launch (0: compiled out)
CONFIG = dict(BLOCK_N=64, BLOCK_M=64, NWARPS=4, DELTA_ROWS=4, CONSUMERS=2, PRODUCER_REGS=24, CONSUMER_REGS=240,
              LPT_HEADS=4, MBAR_TIMEOUT=0, LOAD_RACE=0)
THREADS = 32 * CONFIG["NWARPS"]
THREADS_WS = 128 * (CONFIG["CONSUMERS"] + 1)    # rung 06: a producer warpgroup and the consumers
CONVERT_THREADS = 256


def smem_bytes(head_dim: int, rung: str = "01") -> int:
    """The backward kernel's dynamic shared memory (the .cu's SMEM_BYTES, rungs 01-03): 1024 bytes to align the tiles
    for the 128-byte swizzle, K, V, Q, dO tiles of 64 rows, dS^T (BLOCK_N x BLOCK_M 16-bit), LSE and Delta (BLOCK_M
    floats each); rung 04 (SMEM_BYTES_2STAGE) adds a second stage of Q, dO, LSE and Delta at the next 1024-byte
    boundary; rung 05 (SMEM_BYTES_TMA) the same and three 8-byte mbarriers; rungs 06 and 07 their own layout
    (SMEM_BYTES_6, SMEM_BYTES_7)."""
    tile, m = 64 * head_dim * 2, CONFIG["BLOCK_M"]
    one = 4 * tile + CONFIG["BLOCK_N"] * m * 2 + 2 * m * 4
    if rung in WS_RUNGS:            # K, V of every consumer, dS^T per (step parity, consumer), 2 stages, 5 mbarriers
        c = CONFIG["CONSUMERS"]     # (BULK_DQ_RUNGS: and a 64 x 64 fp32 dQ block each)
        stages = 2 * c * tile + 2 * c * CONFIG["BLOCK_N"] * m * 2
        return (1024 + stages + 2 * (2 * tile + 1024) + (c * 64 * 64 * 4 if rung in BULK_DQ_RUNGS else 0) + 5 * 8
                + (16 if rung in FUSED_DQ_RUNGS else 0))      # rungs 11, 12: flag words (SMEM_BYTES_11)
    if rung in ("04", "05"):
        two = -(-one // 1024) * 1024 + 2 * tile + 2 * m * 4
        return 1024 + two + (3 * 8 if rung == "05" else 0)     # rung 05: + its three mbarriers (SMEM_BYTES_TMA)
    return 1024 + one


def smem_bytes_dq_pass(head_dim: int) -> int:
    """Rung 08's dQ pass (the .cu's SMEM_BYTES_8DQ): Q and dO of CONSUMERS x 64 rows, two stages of (K, V) tiles, five
    mbarriers, and 1024 bytes to align the tiles."""
    tile = 64 * head_dim * 2
    return 1024 + 2 * CONFIG["CONSUMERS"] * tile + 4 * tile + 5 * 8


def defines(head_dim: int, dtype: str = "bfloat16", timeout: bool | None = None) -> dict:
    """-D values of one build: CONFIG, HEAD_DIM and ATTN_FP16; MBAR_TIMEOUT = timeout (default CONFIG's)."""
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim: expected one of {HEAD_DIMS}, got {head_dim!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")
    d = {**{k: int(v) for k, v in CONFIG.items()}, "HEAD_DIM": int(head_dim), "ATTN_FP16": int(dtype == "float16")}
    if timeout is not None:
        d["MBAR_TIMEOUT"] = int(bool(timeout))
    return d


def compile_report(head_dim: int = 128, dtype: str = "bfloat16", timeout: bool | None = None) -> cuda.CompileReport:
    """NVRTC compile for sm_90a (no GPU needed): registers, spills, SASS of the three kernels."""
    return cuda.compile_report(KERNEL_PATH, ARCH, defines=defines(head_dim, dtype, timeout))


def debug_waits() -> bool:
    """Whether the backward's launches use its bounded-wait debug build: the forward's switch (hopper.debug_waits,
    ATTN_MBAR_TIMEOUT=1 in the environment) over this file's CONFIG."""
    return hp.debug_waits(CONFIG)


def compile_rows(head_dims=HEAD_DIMS, dtypes=DTYPES) -> list[dict]:
    """One row per build and kernel: registers, spills, stack, shared memory, tensor-core instructions in the SASS."""
    rows = []
    for d in head_dims:
        for dt in dtypes:
            rep = compile_report(d, dt)
            for name in KERNELS.values():
                k = rep.kernels[name]
                sass = k.sass
                rows.append({"kernel": name, "D": d, "dtype": dt, "regs": k.registers, "spill B": k.spills,
                             "stack B": k.stack_bytes,
                             "smem B": (smem_bytes_dq_pass(d) if name == KERNELS["dq08"] else
                                        next((smem_bytes(d, r) for r in RUNGS if KERNELS[r] == name), 0)),
                             "HMMA": sum("HMMA" in s for s in sass) if sass else None,
                             "HGMMA": sum("HGMMA" in s for s in sass) if sass else None,
                             "TMA": sum("UTMALDG" in s or "UBLKCP" in s for s in sass) if sass else None,
                             "setmaxnreg": setmaxnreg(sass),
                             "RED": sum(s.startswith("RED") for s in sass) if sass else None})
    return rows


def setmaxnreg(sass) -> str:
    """The register split a kernel's SASS asks for, "dec/inc" per thread (USETMAXREG .DEALLOC / .TRY_ALLOC: the
    producer's and the consumers'), "" where it has none, None without SASS."""
    if not sass:
        return None
    got = {kind: int(line.rsplit(",", 1)[-1].split()[-1], 16) for line in sass if "USETMAXREG" in line
           for kind in ("DEALLOC", "TRY_ALLOC") if f".{kind}" in line}
    return f"{got['DEALLOC']}/{got['TRY_ALLOC']}" if len(got) == 2 else ""


@functools.lru_cache(maxsize=None)
def _functions(head_dim: int, dtype: str, timeout: bool = False):
    """The loaded cubin's kernels (the backward's dynamic shared memory opted in); timeout: the debug build."""
    from cupy.cuda import function as cfunc
    from cupy_backends.cuda.api import driver

    mod = cfunc.Module()
    mod.load(bytes(compile_report(head_dim, dtype, timeout).cubin))
    _LOADED.add((head_dim, dtype, timeout))
    fns = {key: mod.get_function(name) for key, name in KERNELS.items()}
    for rung in RUNGS:
        driver.funcSetAttribute(fns[rung].ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                smem_bytes(head_dim, rung))
    driver.funcSetAttribute(fns["dq08"].ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            smem_bytes_dq_pass(head_dim))
    return mod, fns


_LOADED: set[tuple[int, str, bool]] = set()     # builds loaded (hang_report reads the debug ones' records)


def hang_report(reset: bool = True) -> str | None:
    """None, or what a loaded debug build's barrier-timeout record says (a wait that never completed: debug_waits;
    the .cu's WAIT): which block and thread gave up on which barrier, at which parity."""
    out = []
    for key in sorted(k for k in _LOADED if k[2]):
        r = common_hopper.bounded_wait_record(_functions(*key)[0], "attn_hopper_bwd_hang", reset)
        if r:
            who = "warpgroup 0 (the producer from rung 06)" if r["what"] else "a consumer warpgroup"
            out.append(f"D{key[0]} {key[1]}: block {r['block']} thread {r['thread']}, {who}, timed out on the "
                       f"barrier at shared 0x{r['bar']:x}, parity {r['parity']}")
    return "; ".join(out) or None


def _launch(fn, grid, block, smem, stream, *args):
    from cupy_backends.cuda.api import driver

    ptrs = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    driver.launchKernel(fn.ptr, *grid, block, 1, 1, smem, stream, ctypes.addressof(ptrs), 0)


def _launch_with_maps(fn, grid, block, smem, stream, maps, *args):
    """_launch with the tensor maps first, by value (the kernel's `const __grid_constant__ TmaMap` parameters);
    cuLaunchKernel copies them before it returns."""
    from cupy_backends.cuda.api import driver

    ptrs = (ctypes.c_void_p * (len(maps) + len(args)))(*[mp.ctypes.data for mp in maps],
                                                        *[ctypes.addressof(a) for a in args])
    driver.launchKernel(fn.ptr, *grid, block, 1, 1, smem, stream, ctypes.addressof(ptrs), 0)


def _check_rows_view(name, x, shape, dt):
    """do / o: (B, Hq, S, D) like q, the last dim contiguous, other strides 16-byte units (cp.async's rule)."""
    arrays.check_array(name, x, dtypes=(dt,), ndim=4, device=None, contiguous=False, libs=("torch", "cupy"))
    if tuple(int(n) for n in x.shape) != shape:
        raise ValueError(f"{name}: expected shape {shape} like q, got {tuple(x.shape)}")
    hp.check_tma_view(x, names=(name,))


def check_inputs(do, q, k, v, o, lse, causal, sm_scale, out):
    """Every refusal before any launch: (b, hq, hkv, s, d, dtype, scale, (dq, dk, dv) or None); TypeError /
    ValueError naming the argument."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=None, contiguous=False, libs=("torch", "cupy"))
    b, hq, hkv, s, d, dt, scale = hp.check_inputs(q, k, v, causal, sm_scale)
    _check_rows_view("do", do, (b, hq, s, d), dt)
    _check_rows_view("o", o, (b, hq, s, d), dt)
    arrays.check_array("lse", lse, dtypes=("float32",), ndim=3, device=True, libs=(arrays.library(q),))
    if tuple(int(n) for n in lse.shape) != (b, hq, s):
        raise ValueError(f"lse: expected shape {(b, hq, s)}, got {tuple(lse.shape)}")
    if out is None:
        return b, hq, hkv, s, d, dt, scale, None
    if not isinstance(out, (tuple, list)) or len(out) != 3:
        raise ValueError("out: expected a tuple (dq, dk, dv) of arrays (or None for fresh ones)")
    outs = []
    for name, x, shape in (("out[0] (dq)", out[0], (b, hq, s, d)), ("out[1] (dk)", out[1], (b, hkv, s, d)),
                           ("out[2] (dv)", out[2], (b, hkv, s, d))):
        if x is not None:
            arrays.check_array(name, x, dtypes=(dt,), ndim=4, device=True, contiguous=True,
                               libs=(arrays.library(q),))
            if tuple(int(n) for n in x.shape) != shape:
                raise ValueError(f"{name}: expected shape {shape}, got {tuple(x.shape)}")
            if not arrays.aligned(x, 4):
                raise ValueError(f"{name}: the data must start 4-byte aligned (the kernels store element pairs)")
        outs.append(x)
    return b, hq, hkv, s, d, dt, scale, tuple(outs)


def flash_attn_bwd_hopper(do, q, k, v, o, lse, causal: bool = False, sm_scale: float | None = None, out=None,
                          rung: str = DEFAULT_RUNG):
    """Gradients of attention for an upstream dO, by the Hopper backward: (dq, dk, dv) in q's dtype, dq like q
    (B, Hq, S, D), dk and dv (B, Hkv, S, D) summed over each group's Hq / Hkv query heads - flash.flash_attn_bwd's
    arguments and results (o and lse: the forward's; lse natural log, fp32, (B, Hq, S) contiguous).

    q, k, v, do, o: views with a contiguous last dim and 16-byte strides (hopper.check_tma_view), bf16 (torch) or fp16,
    D in {64, 128}, Sq == Sk. out=(dq, dk, dv): contiguous arrays to fill (None entries are allocated). rung: "01"
    (mma.sync), "02" (S^T and dP^T by wgmma), "03" (every GEMM by wgmma), "04" (03, loads double-buffered) or
    "05" (04's schedule, every copy a TMA one), "06" (warp-specialized: a TMA producer and 2 consumer warpgroups
    of 64 keys each), "07" (06 with dQ added by bulk reductions from shared memory), "08" (06 without dQ, and dQ by
    a pass of its own with no reductions), "09" (07 with the step re-ordered: softmax and dQ's staging under the
    GEMMs; the default), "10" (09 with each non-causal block's query tiles rotated), "11" (10 with dQ converted in
    the kernel, block by block) or "12" (10 with dQ converted by each head's last key block).
    Raises TypeError / ValueError naming the argument; RuntimeError off an sm_90 GPU (hopper.unavailable_reason)."""
    if rung not in RUNGS:
        raise ValueError(f"rung: expected one of {RUNGS}, got {rung!r}")
    b, hq, hkv, s, d, dt, scale, outs = check_inputs(do, q, k, v, o, lse, causal, sm_scale, out)
    if rung in FUSED_DQ_RUNGS and outs and outs[0] is not None and not arrays.aligned(outs[0], 16):
        raise ValueError(f"out[0] (dq): rung {rung} stores 16-byte vectors; the data must start 16-byte aligned")
    if not arrays.is_contiguous(lse):
        raise ValueError("lse: expected a contiguous array")
    why = hp.unavailable_reason()
    if why:
        raise RuntimeError(f"flash_attn_bwd_hopper cannot run here: {why}")
    outs = outs or (None, None, None)
    dq = outs[0] if outs[0] is not None else arrays.empty((b, hq, s, d), dt, q)
    dk = outs[1] if outs[1] is not None else arrays.empty((b, hkv, s, d), dt, q)
    dv = outs[2] if outs[2] is not None else arrays.empty((b, hkv, s, d), dt, q)
    delta = arrays.empty((b, hq, s), "float32", q) if rung not in TMA_RUNGS else None
    m = CONFIG["BLOCK_M"]
    n_tiles = -(-s // m)
    # zeroed by attn_bwd_delta (attn_bwd_prep); BULK_DQ_RUNGS tile it by 64 query rows x 64 columns (dq_index)
    dq_acc = (None if rung == "08" else
              arrays.empty((b * hq * n_tiles * m * d,) if rung in BULK_DQ_RUNGS else (b, hq, s, d), "float32", q))
    _, fns = _functions(d, dt, debug_waits())
    stream = hp._stream_ptr(q)
    P, I32, I64, F = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_float
    st = {name: [I64(x_) for x_ in hp._strides(x)[:3]] for name, x in (("q", q), ("k", k), ("v", v), ("do", do),
                                                                       ("o", o))}
    acc = P(arrays.ptr(dq_acc) if dq_acc is not None else 0)
    keys = CONFIG["BLOCK_N"] * (CONFIG["CONSUMERS"] if rung in WS_RUNGS else 1)     # per block
    rows, grid = CONFIG["DELTA_ROWS"], (-(-s // keys), b * hkv, 1)
    if rung in TMA_RUNGS:
        # attn_bwd_prep packs each query tile's LSE log2e and Delta into 512 bytes (rows past S: +inf, 0); the
        # backward reads q, k, v, do through 4-D tensor maps (the forward's geometry: boxes of 64 d x 64 rows)
        lsd = arrays.empty((b * hq, n_tiles, 2, m), "float32", q)
        _launch(fns["prep"], (n_tiles * m // rows, b * hq, 1), 32 * rows, 0, stream, P(arrays.ptr(o)),
                P(arrays.ptr(do)), P(arrays.ptr(lse)), P(arrays.ptr(lsd)), acc, I32(s), I32(hq),
                *st["o"], *st["do"], I32(1 if rung in BULK_DQ_RUNGS else 2 if rung == "08" else 0))
        maps = [hp.encode_tensor_map(arrays.ptr(x), dt, *hp.map_geometry(x.shape, hp._strides(x), 2, m), name)
                for name, x in (("q", q), ("k", k), ("v", v), ("do", do))]
        threads = THREADS_WS if rung in WS_RUNGS else THREADS
        fused = []
        if rung in FUSED_DQ_RUNGS:  # they write dq themselves; a count per dq_acc block (11) or query head (12)
            count = arrays.empty((b * hq * (n_tiles * (d // 64) if rung == "11" else 1),), "int32", q)
            arrays.fill(count, 0)
            fused = [P(arrays.ptr(dq)), P(arrays.ptr(count))]
        _launch_with_maps(fns[rung], grid, threads, smem_bytes(d, rung), stream, maps, P(arrays.ptr(lsd)), acc,
                          P(arrays.ptr(dk)), P(arrays.ptr(dv)), I32(s), I32(hq), I32(hq // hkv), F(scale),
                          I32(int(bool(causal))), *fused)
        if rung in FUSED_DQ_RUNGS:
            return dq, dk, dv
        if rung == "08":            # the dQ pass: one block per CONSUMERS x 64 query rows and query head, dq written
            rows8 = 64 * CONFIG["CONSUMERS"]
            _launch_with_maps(fns["dq08"], (-(-s // rows8), b * hq, 1), THREADS_WS, smem_bytes_dq_pass(d), stream,
                              maps, P(arrays.ptr(lsd)), P(arrays.ptr(dq)), I32(s), I32(hq), I32(hq // hkv), F(scale),
                              I32(int(bool(causal))))
            return dq, dk, dv
    else:
        _launch(fns["delta"], (-(-s // rows), b * hq, 1), 32 * rows, 0, stream, P(arrays.ptr(o)), P(arrays.ptr(do)),
                P(arrays.ptr(delta)), acc, I32(s), I32(hq), *st["o"], *st["do"])
        _launch(fns[rung], grid, THREADS, smem_bytes(d, rung), stream,
                *[P(arrays.ptr(x)) for x in (q, k, v, do, lse, delta)], acc, P(arrays.ptr(dk)), P(arrays.ptr(dv)),
                I32(s), I32(hq),
                I32(hq // hkv), F(scale), I32(int(bool(causal))), *st["q"], *st["k"], *st["v"], *st["do"])
    n2 = b * hq * s * d // 2
    cgrid = (min(-(-n2 // CONVERT_THREADS), 65535), 1, 1)
    if rung in BULK_DQ_RUNGS:
        _launch(fns["convert_tiled"], cgrid, CONVERT_THREADS, 0, stream, acc, P(arrays.ptr(dq)), I64(n2), I32(s),
                F(scale))
    else:
        _launch(fns["convert"], cgrid, CONVERT_THREADS, 0, stream, acc, P(arrays.ptr(dq)), I64(n2), F(scale))
    # the temporaries must outlive the launches on the stream: torch's caching allocator reuses a freed block only
    # for work queued later on the same stream, so dropping them here is safe
    return dq, dk, dv


if __name__ == "__main__":
    for row in compile_rows():
        print("  ".join(f"{k_} {v_}" for k_, v_ in row.items()))
