"""Lab 4.6, the Hopper rungs' host side: the flash-attention forward with wgmma + TMA (kernels_hopper.cu): rung 03
(attn_03_wgmma), rung 04 (attn_04_wgmma_pingpong, the two consumer warpgroups taking turns at the tensor cores) and
rung 05 (attn_05_wgmma_overlap, each consumer's softmax running under its own previous P V), rung 06
(attn_06_wgmma_overlap_pingpong: both), rung 07 (attn_07_wgmma_persistent: rung 05 with one block per SM walking the
tiles) and rung 08 (attn_08_wgmma_persistent_pingpong: rung 07 with rung 06's turns), the K/V ring 2 or 3 stages deep
(a build option).

A module of its own, like lab 4.3's wgmma.py, on which it builds on purpose: the same 128-byte swizzle, the same
shared-memory matrix descriptors (K-major for Q and K, MN-major for V), the same tensor maps - here 4-D, (D, H, S, B),
built from the arrays' strides, so that a tile reaching past S is zero-filled inside its own head and a view into a
QKV projection's output is read in place. lab.py's HOPPER_VARIANT calls
flash_attn_hopper on rung 03 (flash_attn_hopper itself runs DEFAULT_KERNEL unless told, and prepare_hopper does its
work up to the launch once, for callers that attend the same buffers again); bench.py times each rung at its default
ring depth and some at the other (BENCH_BUILDS) against SDPA's cuDNN backend.

What it shows
  * warp specialization for attention: one producer warpgroup issues the TMA copies (Q once, K and V through a
    STAGES-deep ring), two consumer warpgroups of 64 query rows each run S = Q K^T and O += P V as wgmma,
    setmaxnreg moving registers from the producer (24) to the consumers (240);
  * rung 04: the softmax of one consumer warpgroup overlapped with the other's GEMMs, by taking turns through two
    named barriers (FlashAttention-3's ping-pong schedule), and P_{j-1} V issued together with Q K_j^T;
  * P fed to the second GEMM from registers: the accumulator fragment of S is, pair by pair, the A fragment of P V
    (hopper_models.simulate_p_fragment checks that correspondence in NumPy);
  * rung 05: two wgmma commit groups in flight and wait_group 1 between them, so the softmax of tile j runs while
    P_{j-1} V_{j-1} is on the tensor cores - and how ptxas can quietly undo that (the test reads it off the SASS);
  * the descriptors of the three operands checked against a NumPy model of the swizzled shared memory
    (hopper_models.simulate_operands), on any machine.

The two numbers (bf16, B 4, H 32, S 4096, D 128, non-causal): FLOPs = 4 B H S^2 D = 1.10 TFLOP; bytes that must move =
4 B H S D x 2 = 537 MB: 2048 FLOP/B, about ten times the bf16 ridge point of a Hopper GPU (`--plan` prints this GPU's):
compute-bound.
Predictions: 0.75-0.9x SDPA cuDNN for rung 03 (its softmax is not overlapped with the GEMMs), 1.10-1.25x rung 03
for rung 04, 1.05-1.15x rung 03 for rung 05, 1.00-1.05x rung 05 for rung 06, 1.03-1.10x rung 05 for rung 07,
1.00-1.04x rung 07 for rung 08; the header of kernels_hopper.cu has the reasoning. Target: >= 0.95x SDPA cuDNN,
causal and not.

Inputs: q (B, Hq, S, D), k and v (B, Hkv, S, D) with Hkv dividing Hq (grouped-query): any views with a contiguous
last dim whose start and other strides are whole 16-byte units (check_tma_view), bf16 (torch tensors) or fp16 (torch
or CuPy), D in {64, 128}; Sq == Sk (Sq != Sk runs on the Triton flash_attn_fwd). out: any (B, Hq, S, D) view with a
contiguous last dim (its strides go to the kernel).

This module is the launch code (constants, builds, availability, tensor maps, the wrapper); it imports nothing of the
lab but shared.py. The NumPy models of the kernel's layouts are in hopper_models.py, the check against float64 and the
command line in hopper_check.py.

Run: python -m phase4_optimization.lab06_attention.hopper --check   (small cases against float64 on an sm_90 GPU,
printing per case the max error and, for a failing case, where it fails; --help for the options; hopper_check.py
runs it). A kernel that hangs on a barrier: ATTN_MBAR_TIMEOUT=1 in front of the command builds the debug waits, and the
check prints who waited on what (hang_report).
"""
from __future__ import annotations

import ctypes
import functools
import os

import numpy as np

from common import arrays, config, cuda, device
from common import hopper as common_hopper
from common.i18n import tr
from phase4_optimization.lab03_tensor_cores import wgmma as wg

from .shared import LOG2E, _check_dims_and_flags


HERE = os.path.dirname(os.path.abspath(__file__))
KERNEL_PATH = os.path.join(HERE, "kernels_hopper.cu")
KERNELS = {"03": "attn_03_wgmma", "04": "attn_04_wgmma_pingpong", "05": "attn_05_wgmma_overlap",
           "06": "attn_06_wgmma_overlap_pingpong", "07": "attn_07_wgmma_persistent",
           "08": "attn_08_wgmma_persistent_pingpong"}
PERSISTENT = ("07", "08")        # one block per SM walking the (query tile, head) tiles; takes the head count too
# the rung flash_attn_hopper (and lab 4.7's block, causal) runs unless told: rung 06, the fastest causal in the lab's
# committed benchmark and level with rung 07 non-causal (the lesson, README.md, has the targets table)
DEFAULT_KERNEL = "06"
# The K/V ring's depth is a build option (-DSTAGES): 2 unless told. Rungs 04 and 05 release a stage one step later
# than rung 03 (after the next step's P V), so with 2 stages their producer's lead shrinks to about one softmax;
# rungs 05-08 default to 3 (one block still fits at D = 128: smem_bytes(128, 3) = 230520 B, within sm_90's
# opt-in shared memory per block). Each rung's depth is resolved by stages_config (--set STAGES_06=2 and the like).
STAGE_CHOICES = (2, 3)
DEFAULT_STAGES = {"03": 2, "04": 2, "05": 3, "06": 3, "07": 3, "08": 3}
# What bench.py times beside SDPA (rung, stages): each rung at its default, and the ring depth changed alone
BENCH_BUILDS = (("03", 2), ("04", 2), ("05", 3), ("06", 3), ("07", 3), ("08", 3), ("03", 3), ("04", 3), ("05", 2))
ARCH = "sm_90a"
DTYPES = ("bfloat16", "float16")
HEAD_DIMS = (64, 128)

# CONFIG: kernels_hopper.cu's compile-time constants, in ONE place. Every entry reaches the kernel as -DNAME=VALUE on
# every compile (defines(): the wrappers, the compile report, --plan, lab 4.7, the tests), beside the build's own
# HEAD_DIM, ATTN_FP16 and V_KMAJOR (BUILD_DEFINES); kernels_hopper.cu holds no value of its own and a compile without
# one stops with an #error naming it. The host side below (launch, shared memory, the models) reads the same values.
#   BLOCK_M = 128        query rows per block: two consumer warpgroups of wgmma's M = 64 rows each (the descriptors
#                        assume 128-row boxes: the .cu's static_assert keeps it at 128)
#   BLOCK_N = 128        keys per K/V tile (128 too: the same assert)
#   CONSUMERS = 2        consumer warpgroups; one producer warpgroup more: THREADS = 128 (CONSUMERS + 1)
#   PRODUCER_REGS = 24   setmaxnreg.dec: the TMA producer's registers per thread
#   CONSUMER_REGS = 240  setmaxnreg.inc: each consumer's (24 + 2 x 240 = 504 <= 512 per lane across the 3 groups)
#   BOX_BYTES = 16384    one TMA box {64 16-bit elements, 128 rows} with the 128-byte swizzle
#   SINK_BYTES = 64      rung 05's per-warp scratch words after the barriers (the sink store: 12 warps x 4 B)
#   MBAR_TIMEOUT = 0     0: plain barrier waits. 1, the debug build: a wait that spins ~4 s records who waited on what
#                        (hang_report prints it) and the kernel runs out instead of hanging; the launches build it
#                        with ATTN_MBAR_TIMEOUT=1 in the environment (debug_waits), compile_report with timeout=True
#   STAGES = 2           the K/V ring depth of a build that names none; each rung's own: DEFAULT_STAGES above
#   WALK_HEADS = 4       rung 08, causal: its walk goes by groups of this many heads, heaviest query tiles first
CONFIG = dict(BLOCK_M=128, BLOCK_N=128, CONSUMERS=2, PRODUCER_REGS=24, CONSUMER_REGS=240, BOX_BYTES=128 * 128,
              SINK_BYTES=64, MBAR_TIMEOUT=0, STAGES=2, WALK_HEADS=4)
BUILD_DEFINES = ("HEAD_DIM", "ATTN_FP16", "V_KMAJOR")      # chosen per build by defines()'s arguments
# module names of CONFIG's values (read at import: hopper_models, hopper_check and lab 4.7 use them)
BLOCK_M, BLOCK_N, STAGES, CONSUMERS = CONFIG["BLOCK_M"], CONFIG["BLOCK_N"], CONFIG["STAGES"], CONFIG["CONSUMERS"]
THREADS = 128 * (CONSUMERS + 1)
PRODUCER_REGS, CONSUMER_REGS = CONFIG["PRODUCER_REGS"], CONFIG["CONSUMER_REGS"]
BOX_BYTES, SINK_BYTES = CONFIG["BOX_BYTES"], CONFIG["SINK_BYTES"]


def smem_bytes(head_dim: int, stages: int | None = None) -> int:
    """Dynamic shared memory: 1024 for the alignment, Q, stages x (K + V), the 1 + 2 stages mbarriers, rung 05's
    SINK_BYTES (the .cu's SMEM_BYTES, from CONFIG)."""
    stages = CONFIG["STAGES"] if stages is None else stages
    q = CONFIG["BLOCK_M"] * head_dim * 2
    kv = CONFIG["BLOCK_N"] * head_dim * 2
    return 1024 + q + stages * 2 * kv + 8 * (1 + 2 * stages) + CONFIG["SINK_BYTES"]


# ---------------------------------------------------------------------------------------------------------------------
# Availability, compile, load
# ---------------------------------------------------------------------------------------------------------------------
def unavailable_reason(gpu=None) -> str | None:
    """Why the Hopper kernels cannot run on `gpu` (a common.device.DeviceInfo; a simulated profile in a plan is
    answered from its architecture alone), or here (None: no GPU, not sm_90, no tensor-map encoder, no NVRTC, no
    torch); None when they can."""
    if gpu is not None and gpu.cc != 90:
        return hopper_only(gpu.arch)
    if gpu is None and device.has_gpu() and device.info().cc != 90:
        return hopper_only(device.info().arch)
    why = wg.unavailable_reason(gpu)
    if why or (gpu is not None and gpu.simulated):
        return why or None
    import importlib.util

    if importlib.util.find_spec("torch") is None:
        return tr("torch is needed for bfloat16 tensors")
    return None


def hopper_only(arch: str) -> str:
    """The one-line reason off Hopper."""
    return tr("wgmma, setmaxnreg and TMA tensor maps are Hopper-only (sm_90a, compute capability 9.0); this GPU is "
              "{arch}", arch=arch)


def stages_config(kernel: str) -> config.Resolved:
    """The K/V ring depth of one rung: DEFAULT_STAGES, then --set STAGES_<rung>=2 (no tuned record: the benchmark
    times each rung at both depths)."""
    name = f"STAGES_{kernel}"
    return config.resolve(f"cuda {KERNELS[kernel]} (kernels_hopper.cu)", {name: DEFAULT_STAGES[kernel]},
                          validate=lambda v: {name: check_stages(v[name])})


def check_stages(stages) -> int:
    if isinstance(stages, bool) or not isinstance(stages, (int, np.integer)) or int(stages) not in STAGE_CHOICES:
        raise ValueError(f"stages: expected one of {STAGE_CHOICES} (the K/V ring's depth), got {stages!r}")
    return int(stages)


def defines(head_dim: int, dtype: str = "bfloat16", v_kmajor: bool = False, timeout: bool | None = None,
            stages: int | None = None) -> dict:
    """kernels_hopper.cu's -D values for one build: the whole CONFIG, the build's HEAD_DIM, ATTN_FP16 and V_KMAJOR,
    STAGES = stages (default CONFIG's) and MBAR_TIMEOUT = timeout (default CONFIG's)."""
    if head_dim not in HEAD_DIMS:
        raise ValueError(f"head_dim: expected one of {HEAD_DIMS}, got {head_dim!r}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype: expected one of {DTYPES}, got {dtype!r}")
    d = {k: int(v) for k, v in CONFIG.items()}
    d.update({"HEAD_DIM": int(head_dim), "ATTN_FP16": int(dtype == "float16"), "V_KMAJOR": int(bool(v_kmajor))})
    if timeout is not None:
        d["MBAR_TIMEOUT"] = int(bool(timeout))
    d["STAGES"] = check_stages(CONFIG["STAGES"] if stages is None else stages)
    return d


def compile_report(head_dim: int = 128, dtype: str = "bfloat16", v_kmajor: bool = False,
                   timeout: bool | None = None, stages: int | None = None) -> cuda.CompileReport:
    """NVRTC compile for sm_90a (no GPU needed): registers, spills, SASS (HGMMA, UTMALDG, SYNCS, USETMAXREG)."""
    return cuda.compile_report(KERNEL_PATH, ARCH, defines=defines(head_dim, dtype, v_kmajor, timeout, stages))


def compile_rows(head_dims=HEAD_DIMS, dtypes=("bfloat16",)) -> list[dict]:
    """One row per kernel and build (each rung at its default ring depth, V MN-major and the K-major fallback):
    registers at launch, the setmaxnreg split, spills, shared memory, HGMMA count and shapes, TMA loads and
    named-barrier instructions in the SASS."""
    rows = []
    for d in head_dims:
        for dt in dtypes:
            for vk in (False, True):
                for stages in sorted(set(DEFAULT_STAGES.values())):
                    rep = compile_report(d, dt, vk, stages=stages)
                    for rung, name in KERNELS.items():
                        if DEFAULT_STAGES[rung] == stages:
                            rows.append(_compile_row(rep.kernels[name], name, d, dt, vk, stages))
    return rows


def _compile_row(k, name: str, d: int, dt: str, vk: bool, stages: int = STAGES) -> dict:
    sass = k.sass or []
    hg = [s for s in sass if "HGMMA" in s]
    shapes = sorted({s.split()[0].split(".")[1] for s in hg})
    regs = f"{CONFIG['PRODUCER_REGS']}/{CONFIG['CONSUMER_REGS']}"
    return {"kernel": name, "D": d, "dtype": dt, "V": "K-major (debug)" if vk else "MN-major", "stages": stages,
            "regs at launch": k.registers, "setmaxnreg prod/cons": regs,
            "spill B": k.spill_stores + k.spill_loads, "stack B": k.stack_bytes, "smem B": smem_bytes(d, stages),
            "HGMMA": len(hg) if sass else None, "HGMMA shapes": " ".join(shapes) if sass else "(no cuobjdump)",
            "UTMALDG": sum("UTMALDG" in s for s in sass) if sass else None,
            "BAR.ARV": sum("BAR.ARV" in s for s in sass) if sass else None}


def debug_waits(config: dict | None = None) -> bool:
    """Whether the launches use the debug build's bounded barrier waits (MBAR_TIMEOUT=1: a wait that never completes
    leaves a record for hang_report instead of hanging the GPU): ATTN_MBAR_TIMEOUT=1 in the environment, else the
    config's MBAR_TIMEOUT (default this file's CONFIG; hopper_bwd passes its own), 0: plain waits."""
    return os.environ.get("ATTN_MBAR_TIMEOUT", str((config or CONFIG)["MBAR_TIMEOUT"])) == "1"


@functools.lru_cache(maxsize=None)
def _module(head_dim: int, dtype: str, v_kmajor: bool, stages: int = STAGES, timeout: bool = False):
    """The loaded sm_90a cubin (every rung of one build; CuPy's RawModule would add its own -arch)."""
    from cupy.cuda import function as cfunc

    cubin = compile_report(head_dim, dtype, v_kmajor, timeout=timeout, stages=stages).cubin
    mod = cfunc.Module()
    mod.load(bytes(cubin))
    _LOADED.add((head_dim, dtype, v_kmajor, stages, timeout))
    return mod


@functools.lru_cache(maxsize=None)
def _function(kernel: str, head_dim: int, dtype: str, v_kmajor: bool, stages: int = STAGES, timeout: bool = False):
    from cupy_backends.cuda.api import driver

    fn = _module(head_dim, dtype, v_kmajor, stages, timeout).get_function(KERNELS[kernel])
    driver.funcSetAttribute(fn.ptr, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                            smem_bytes(head_dim, stages))
    return fn


_LOADED: set[tuple[int, str, bool, int, bool]] = set()


def hang_report(reset: bool = True) -> str | None:
    """None, or what a loaded module's barrier-timeout record says (a wait that never completed, in a debug build:
    debug_waits; see the .cu's WAIT)."""
    out = []
    for key in sorted(_LOADED):
        r = common_hopper.bounded_wait_record(_module(*key), "attn_hopper_hang", reset)
        if r:
            which = "empty (producer waiting for the consumers)" if r["what"] else "full (consumer waiting for TMA)"
            out.append(f"D{key[0]} {key[1]}{' V_KMAJOR' if key[2] else ''} {key[3]} stages: block {r['block']} "
                       f"thread {r['thread']} timed out on the {which} barrier at shared 0x{r['bar']:x}, "
                       f"parity {r['parity']}")
    return "; ".join(out) or None


# ---------------------------------------------------------------------------------------------------------------------
# Tensor maps: 4-D (D, H, S, B) through cuTensorMapEncodeTiled
# ---------------------------------------------------------------------------------------------------------------------
def encode_tensor_map(ptr: int, dtype: str, dims: tuple[int, ...], strides_bytes: tuple[int, ...],
                      box: tuple[int, ...], name: str) -> np.ndarray:
    """A 128-byte CUtensorMap for an N-D array (N = len(dims), 2..5), dims innermost first, the byte strides of dims
    1 .. N-1 (in any order of size: a view's strides need not grow), the box per dim (the first 64 16-bit elements =
    128 bytes, the others <= 256), 128B swizzle, zero fill out of bounds."""
    rank = len(dims)
    if not 2 <= rank <= 5 or len(strides_bytes) != rank - 1 or len(box) != rank:
        raise ValueError(f"{name}: a rank-{rank} map needs {rank - 1} strides and {rank} box sizes, got "
                         f"{strides_bytes}, {box}")
    if ptr % 16:
        raise ValueError(f"{name}: TMA needs a 16-byte aligned base address, got 0x{ptr:x}")
    for s_ in strides_bytes:
        if s_ % 16 or not 0 < s_ < 1 << 40:
            raise ValueError(f"{name}: TMA strides must be multiples of 16 bytes in (0, 2^40), got {strides_bytes}")
    if box[0] * 2 != 128 or not all(1 <= b <= 256 for b in box[1:]):
        raise ValueError(f"{name}: box {box} breaks the kernel's layout (64 16-bit elements, <= 256 rows)")
    if not all(1 <= d_ <= 1 << 32 for d_ in dims):
        raise ValueError(f"{name}: dims {dims} must be in 1 .. 2^32")
    return wg.encode_tiled(ptr, dtype, dims, strides_bytes, box, name,
                           f"dims {dims}, strides {strides_bytes}, box {box}")


def map_geometry(shape, strides, elt: int, rows: int):
    """(dims, byte strides, box) of the kernel's 4-D map over a (B, H, S, D) view with these element strides: dims
    (D, H, S, B) innermost first, box {64, 1, rows, 1}: 128 bytes of `rows` consecutive rows of one head - in shared
    memory the same layout as a 2-D {64, rows} box. A contiguous tensor and a view into a QKV projection's (B, S, 3,
    H, D) output differ only in the strides."""
    b, h, s, d = (int(x) for x in shape)
    sb, sh, ss, sd = (int(x) for x in strides)
    if sd != 1:
        raise ValueError("the last dimension must be contiguous")
    return (d, h, s, b), (sh * elt, ss * elt, sb * elt), (64, 1, rows, 1)


def vt_map_geometry(b: int, h: int, d: int, s_pad: int, elt: int):
    """The same for V^T (B, H, D, S_pad), contiguous (the V_KMAJOR fallback): dims (S_pad, D, H, B), box {64 keys, D
    rows of d, 1, 1}."""
    return (s_pad, d, h, b), (s_pad * elt, d * s_pad * elt, h * d * s_pad * elt), (64, d, 1, 1)


# ---------------------------------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------------------------------
def default_v_kmajor() -> bool:
    """V's layout unless told: MN-major, read in place; ATTN_V_KMAJOR=1 switches to the transposed-copy fallback."""
    return os.environ.get("ATTN_V_KMAJOR", "0") == "1"


def check_inputs(q, k, v, causal, sm_scale):
    """Validate before any launch: (B, Hq, Hkv, S, D, dtype, scale); TypeError / ValueError naming the argument."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=None, contiguous=False, libs=("torch", "cupy"))
    if tuple(k.shape) != tuple(v.shape):
        raise ValueError(f"v: shape {tuple(v.shape)} must equal k's {tuple(k.shape)}")
    if int(k.shape[0]) != int(q.shape[0]) or int(k.shape[3]) != int(q.shape[3]):
        raise ValueError(f"k: batch and head dim {int(k.shape[0])}, {int(k.shape[3])} must match q's "
                         f"{int(q.shape[0])}, {int(q.shape[3])}")
    hq, hkv = int(q.shape[1]), int(k.shape[1])
    if hkv < 1 or hq % hkv:
        raise ValueError(f"k: its {hkv} heads must divide q's {hq} (grouped-query attention)")
    if int(k.shape[2]) != int(q.shape[2]):
        raise ValueError(f"k: Sk = {int(k.shape[2])} keys against q's Sq = {int(q.shape[2])}: the Hopper kernel takes "
                         "Sq == Sk only; Sq != Sk runs on the Triton kernels (flash_attn_fwd)")
    arrays.check_same("q, k, v", q, k, v, shape=False)
    dt = arrays.dtype_name(q)
    if dt == "bfloat16" and arrays.library(q) != "torch":
        raise TypeError("q: bfloat16 arrays must be torch tensors (CuPy has no bfloat16)")
    b, _, s, d, scale = _check_dims_and_flags(q, causal, sm_scale, head_dims=HEAD_DIMS)
    check_tma_view(q, k, v)
    return b, hq, hkv, s, d, dt, scale


def _strides(x) -> tuple[int, ...]:
    """Element strides of a torch or CuPy (B, H, S, D) array, with the stride of a dimension of size 1 (never
    stepped along, so any value: torch may report an odd one for a "contiguous" tensor) replaced by D."""
    if arrays.library(x) == "torch":
        st = [int(v_) for v_ in x.stride()]
    else:
        st = [int(v_) // x.itemsize for v_ in x.strides]
    shape = [int(n) for n in x.shape]
    return tuple(shape[-1] if n == 1 and i < len(shape) - 1 else v_ for i, (n, v_) in enumerate(zip(shape, st)))


def _tma_strides_ok(x) -> bool:
    st = _strides(x)
    return st[3] == 1 and all(v_ > 0 and v_ * 2 % 16 == 0 for v_ in st[:3])


def tma_ready(x):
    """x itself when a tensor map can read it in place (check_tma_view's stride rules), else a contiguous copy."""
    if _tma_strides_ok(x) and arrays.aligned(x, 16):
        return x
    if arrays.library(x) == "torch":
        return x.contiguous()
    import cupy

    return cupy.ascontiguousarray(x)


def check_tma_view(*named, names=("q", "k", "v")) -> None:
    """What a TMA tensor map asks of a (B, H, S, D) array: on the GPU, the last dimension contiguous, the start and the
    other three strides whole 16-byte units (so a view into a QKV projection's output is fine, a transpose of D is
    not); ValueError / TypeError naming the argument."""
    for name, x in zip(names, named):
        st = _strides(x)
        if st[3] != 1:
            raise ValueError(f"{name}: the last dimension must be contiguous (strides {st}); pass x.contiguous()")
        if not _tma_strides_ok(x):
            raise ValueError(f"{name}: strides {st} (elements) must be positive multiples of 8 (TMA's 16-byte "
                             "rule); pass x.contiguous()")
    for name, x in zip(names, named):
        if not arrays.on_device(x):
            raise TypeError(f"{name}: expected a GPU array, got a host array; move it first with x.cuda()")
    for name, x in zip(names, named):
        if not arrays.aligned(x, 16):
            raise ValueError(f"{name}: the data must start 16-byte aligned (TMA's rule for a tensor's base address)")


def _stream_ptr(x) -> int:
    if arrays.library(x) == "torch":
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    import cupy

    return int(cupy.cuda.get_current_stream().ptr)


def _transposed_v(v, b, hkv, s, d):
    """V^T as (B Hkv, D, S_pad), S_pad = S rounded up to 8 (TMA's 16-byte row stride), zero-padded."""
    s_pad = -(-s // 8) * 8
    if arrays.library(v) == "torch":
        import torch

        vt = torch.zeros((b * hkv, d, s_pad), dtype=v.dtype, device=v.device)
    else:
        import cupy

        vt = cupy.zeros((b * hkv, d, s_pad), dtype=v.dtype)
    _refill_transposed_v(vt, v, s)
    return vt, s_pad


def _refill_transposed_v(vt, v, s):
    """vt[:, :, :S] = V^T (the zero padding past S stays)."""
    bh, d = int(vt.shape[0]), int(vt.shape[1])
    vt[:, :, :s] = v.reshape(bh, s, d).swapaxes(1, 2)


def flash_attn_hopper(q, k, v, causal=False, sm_scale=None, out=None, *, lse=None, v_kmajor: bool | None = None,
                      kernel: str = DEFAULT_KERNEL, stages: int | None = None, blocks: int | None = None):
    """Attention forward by the Hopper kernels: (o, lse), o like q, lse (B, Hq, S) float32, natural log.

    q (B, Hq, S, D), k and v (B, Hkv, S, D), Hkv dividing Hq, views TMA can read in place (check_tma_view), bf16
    (torch) or fp16, D in {64, 128}. out= / lse=: arrays to fill (out any view with a contiguous last dim, lse
    contiguous). kernel: "03" (attn_03_wgmma), "04" (attn_04_wgmma_pingpong), "05" (attn_05_wgmma_overlap), "06"
    (attn_06_wgmma_overlap_pingpong), "07" (attn_07_wgmma_persistent) or "08" (attn_08_wgmma_persistent_pingpong);
    for 07 and 08 blocks= caps the grid, one block per SM unless told - a small cap makes each block walk many tiles,
    which the tests use. stages: the K/V ring's depth,
    2 or 3 (default DEFAULT_STAGES[kernel]).
    v_kmajor=True (default: ATTN_V_KMAJOR=1 in the environment) runs the debug fallback on a transposed, zero-padded
    copy of V.
    """
    return prepare_hopper(q, k, v, causal, sm_scale, out, lse=lse, v_kmajor=v_kmajor, kernel=kernel, stages=stages,
                          blocks=blocks)()


def prepare_hopper(q, k, v, causal=False, sm_scale=None, out=None, *, lse=None, v_kmajor: bool | None = None,
                   kernel: str = DEFAULT_KERNEL, stages: int | None = None,
                   blocks: int | None = None) -> "HopperLaunch":
    """flash_attn_hopper's work up to the launch, done once: the arguments checked, out and lse allocated, the tensor
    maps encoded and the kernel's arguments packed. Calling the result launches the kernel and returns (o, lse);
    call it again after changing the contents of q, k and v (not their addresses or shapes: the maps hold those) and
    it launches again with no checks and no driver calls but the launch. Lab 4.7's block runs its attention this
    way: at its smaller case the kernel is short enough that the Python of a full call (checks, three map encodings)
    would keep the GPU waiting (the lab's results compare the whole block with the sum of its stages)."""
    if kernel not in KERNELS:
        raise ValueError(f"kernel: expected one of {sorted(KERNELS)}, got {kernel!r}")
    stages = stages_config(kernel).values[f"STAGES_{kernel}"] if stages is None else check_stages(stages)
    if blocks is not None and (kernel not in PERSISTENT or isinstance(blocks, bool)
                               or not isinstance(blocks, (int, np.integer)) or blocks < 1):
        raise ValueError(f"blocks: a positive int for the persistent rung{'s' if len(PERSISTENT) > 1 else ''} "
                         f"{', '.join(PERSISTENT)} only, got {blocks!r} for kernel {kernel!r}")
    if v_kmajor is None:
        v_kmajor = default_v_kmajor()
    b, hq, hkv, s, d, dt, scale = check_inputs(q, k, v, causal, sm_scale)
    why = unavailable_reason()
    if why:
        raise RuntimeError(f"flash_attn_hopper cannot run here: {why}")
    if out is None:
        out = arrays.check_out(out, (b, hq, s, d), dt, q)
    else:                                   # any (B, H, S, D) view with a contiguous last dim: strides go to the kernel
        arrays.check_array("out", out, dtypes=(dt,), ndim=4, device=True, contiguous=False, libs=(arrays.library(q),))
        if tuple(out.shape) != (b, hq, s, d):
            raise ValueError(f"out: expected shape {(b, hq, s, d)}, got {tuple(out.shape)}")
    lse = arrays.check_out(lse, (b, hq, s), "float32", q, name="lse")
    if not arrays.is_contiguous(lse):
        raise ValueError("lse: expected a contiguous array")
    o_st = _strides(out)
    if o_st[3] != 1 or any(v_ % 2 or v_ <= 0 for v_ in o_st[:3]) or not arrays.aligned(out, 4):
        raise ValueError(f"out: the last dimension must be contiguous and the other strides {o_st} positive and even, "
                         "starting 4-byte aligned (the kernel stores pairs of elements; a zero stride would make "
                         "blocks store to the same elements)")
    if arrays.device_index(out) != arrays.device_index(q):
        raise ValueError(f"out: on GPU {arrays.device_index(out)}, q on GPU {arrays.device_index(q)}")
    maps, vt = [], None
    for name, x, rows in (("q", q, BLOCK_M), ("k", k, BLOCK_N), ("v", v, BLOCK_N)):
        if name == "v" and v_kmajor:
            # the transposed copy lives as long as the launch object; each launch refills it from v first
            vt, s_pad = _transposed_v(v, b, hkv, s, d)
            maps.append(encode_tensor_map(arrays.ptr(vt), dt, *vt_map_geometry(b, hkv, d, s_pad, 2), "v"))
        else:
            maps.append(encode_tensor_map(arrays.ptr(x), dt, *map_geometry(x.shape, _strides(x), 2, rows),
                                          name))
    return HopperLaunch(kernel, d, dt, maps, out, lse, s, hq, hq // hkv, scale, bool(causal), stages, o_st, blocks,
                        refill=(lambda: _refill_transposed_v(vt, v, s)) if vt is not None else None)


class HopperLaunch:
    """One prepared launch of a Hopper rung (prepare_hopper): call it to run the kernel; returns (o, lse)."""

    def __init__(self, kernel, d, dt, maps, out, lse, s, hq, group, scale, causal, stages, o_strides, blocks=None,
                 refill=None):
        self.out, self.lse, self.refill = out, lse, refill
        self.fn = _function(kernel, d, dt, refill is not None, stages, debug_waits())
        b_h = int(out.shape[0]) * hq
        self.maps = maps
        self.args = [ctypes.c_void_p(arrays.ptr(out)), ctypes.c_void_p(arrays.ptr(lse)), ctypes.c_int32(s),
                     ctypes.c_int32(hq), ctypes.c_int32(group), ctypes.c_float(scale * LOG2E),
                     ctypes.c_int32(int(causal)), *[ctypes.c_int64(int(x)) for x in o_strides[:3]]]
        self.grid = (-(-s // BLOCK_M), b_h, 1)
        if kernel in PERSISTENT:
            self.args.append(ctypes.c_int32(b_h))
            self.grid = (persistent_grid(-(-s // BLOCK_M) * b_h, blocks, arrays.device_index(out)), 1, 1)
        self.ptrs = (ctypes.c_void_p * (len(maps) + len(self.args)))(*[m.ctypes.data for m in maps],
                                                                      *[ctypes.addressof(x) for x in self.args])
        self.smem = smem_bytes(d, stages)

    def __call__(self):
        from cupy_backends.cuda.api import driver

        if self.refill is not None:
            self.refill()
        # cuLaunchKernel copies every argument (the three 128-byte maps included) before it returns
        driver.launchKernel(self.fn.ptr, *self.grid, THREADS, 1, 1, self.smem, _stream_ptr(self.out),
                            ctypes.addressof(self.ptrs), 0)
        return self.out, self.lse


def persistent_grid(n_work: int, sms: int | None = None, device_index: int = 0) -> int:
    """Rung 07's grid: one block per SM of the GPU (the kernel holds a whole SM's registers), fewer when there is less
    work (sms: the cap instead of the SM count)."""
    if sms is None:
        sms = _sm_count(device_index)
    return max(1, min(int(n_work), int(sms)))


@functools.lru_cache(maxsize=None)
def _sm_count(device_index: int) -> int:
    import cupy

    return int(cupy.cuda.runtime.getDeviceProperties(device_index)["multiProcessorCount"])


if __name__ == "__main__":
    # `python -m phase4_optimization.lab06_attention.hopper --check` (the command kernels_hopper.cu's header and the
    # lesson give): the check and its command line are hopper_check.py's, run here as the script; this module imports
    # nothing that imports it back
    import runpy

    runpy.run_module(f"{__package__}.hopper_check", run_name="__main__", alter_sys=True)
