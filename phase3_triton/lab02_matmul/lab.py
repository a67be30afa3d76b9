"""Lab 3.2 - Block tiling and tile-wise memory access: a fast Triton matmul.

You will learn
  * how one program computes one BLOCK_M x BLOCK_N tile of C by walking K in BLOCK_K steps: two tile loads and one
    `tl.dot` per step, the accumulator in registers, fp32 whatever the input dtype;
  * why the ORDER in which programs run matters even though each one computes the same tile: programs that run at
    the same time share A row-panels and B column-panels through L2; the grouped ("super-row") order of GROUP_M rows
    makes a wave of programs touch fewer distinct panels than row-major order. The lab counts the tiles each order
    loads from DRAM under a simple model, then measures both orders;
  * what `num_stages` buys: a ring of shared-memory buffers filled by cp.async (LDGSTS) several K-steps ahead, so
    the tensor cores (wgmma on Hopper, HGMMA in SASS) never wait for memory; shared memory grows by one A + B tile
    per stage (the compile report shows it, without a GPU);
  * autotuning: a small Hopper config space (BLOCK_M/N 128-256, BLOCK_K 64, 3-4 stages, 4-8 warps) benchmarked per
    (M, N, K, dtype) with `triton.autotune` on a GPU; one fixed config in the interpreter;
  * fp16/bf16 with fp32 accumulation, and fp32 in two labelled flavours: input_precision="ieee" (true fp32 FMAs,
    CUDA cores) and "tf32" (inputs rounded to 10-bit mantissas, tensor cores, ~1e-3 relative error) - the check
    holds each to its own tolerance ("tf32" is listed as its own dtype in the check cases);
  * any M, N, K: masks only where a tile is ragged (EVEN_K / EVEN_MN are compile-time flags, so the aligned
    benchmark shapes compile to mask-free loads), 64-bit offsets when a matrix passes 2^31 elements, any strides.

The two numbers (main case: bf16 4096 x 4096 x 4096): FLOPs = 2 M N K = 137.4 GFLOP; bytes that must move =
(M K + K N + M N) x 2 = 100.7 MB. 1365 FLOP/B, well above the dense-bf16 ridge point of current GPUs (`--plan` prints
this GPU's): compute wins, and moving the 100.7 MB once takes a small fraction of the math time. The real DRAM traffic
is larger than the minimum (tiles are re-read by different programs: see the ordering table), but stays well under the
compute time; the target is >= 0.95x cuBLAS in bf16 (4096^3 and 8192^3) and fp16 (4096^3). fp32 "ieee" runs on the
CUDA cores instead, whose ridge point is tens of FLOP/B: still compute-bound at 4096^3. The lesson, the predictions and
this GPU's measured figures: README.md.

Run: python -m phase3_triton.lab02_matmul [--quick] [--no-bench] [--arch sm_80] [--replot] [--tune]
     [--plan [--gpu NAME]] [--set BLOCK_M=128] [--set TMA_GROUP_M=16]
"""
from __future__ import annotations


import numpy as np

from common import arrays, check, config, device, lab, plan, tuned
from common.i18n import tr
from common.bench import torch_tf32
from common.triton_support import INTERPRETER, launch, triton

from .tma import (TMA_DEFAULT, TMA_DTYPES, TMA_INTERPRETER, TMA_KEYS, TMA_MIN_CC as TMA_MIN_CC,
                  TMA_MIN_SMEM as TMA_MIN_SMEM, _as_torch as _as_torch, _check_tma_keyed, _check_winners,
                  _elem_strides, _hopper, _tma_keyed, check_tma_config, tma_operands, tma_problems,
                  tma_programs, tma_unavailable)
from .triton_kernels import matmul_kernel, matmul_tma_kernel

LAB = "phase3_lab02_matmul"
DTYPES = ("float16", "bfloat16", "float32")
PRECISIONS = ("ieee", "tf32")


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs. size = (M, N, K). The dtype "tf32" means fp32 storage computed with input_precision="tf32".
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def storage_dtype(dtype: str) -> str:
    return "float32" if dtype == "tf32" else dtype


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """A (M x K) and B (K x N), standard normal: products of order sqrt(K), no overflow in fp16 up to K ~ 10^8."""
    m, n, k = size
    st = storage_dtype(dtype)
    return (arrays.from_numpy(rng.standard_normal((m, k)), st, where),
            arrays.from_numpy(rng.standard_normal((k, n)), st, where))


def out_dtype(dtype: str) -> str:
    return storage_dtype(dtype)


def tolerance(size, dtype: str) -> check.Tol:
    # fp16/bf16: fp32 accumulation, so the error is the final rounding to the output dtype (the default tolerance).
    # tf32: every input loses 13 mantissa bits (relative 2^-11), so about 5e-4 per product: its own, looser tolerance.
    # fp32 ieee: a K-term fp32 sum, ~1e-7 sqrt(K) relative: the fp32 default holds well past K = 10^4.
    return check.tolerance(dtype)


# ---------------------------------------------------------------------------------------------------------------------
# Configurations
# ---------------------------------------------------------------------------------------------------------------------
def _cfg(bm, bn, bk, warps, stages, group=8):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages)


# The autotuner's space, written for Hopper-class shared memory. 16-bit inputs: one A + B stage is (BM + BN) x 64 x 2 B
# = 48 KiB for 128 x 256, so 3-4 stages fit in the 227 KiB a Hopper block may use (144 KiB at 3 stages, 192 KiB at 4:
# the compile report shows it); 8 warps = two warpgroups, each issuing wgmma on half the tile (64 or 128 rows).
# 128 x 64 is there for the small problems, where 128 x 256 tiles would leave most SMs idle. A GPU with less shared
# memory per block autotunes over the configs whose ring fits it (autotune_space). Which config the tuner picked at
# each size: the README.
CONFIGS_16 = [_cfg(128, 256, 64, 8, 3), _cfg(128, 256, 64, 8, 4), _cfg(256, 128, 64, 8, 3), _cfg(256, 128, 64, 8, 4),
              _cfg(128, 128, 64, 4, 4), _cfg(128, 64, 64, 4, 4)]
# fp32: a 4-byte element doubles the bytes per stage, so BLOCK_K drops to 32.
CONFIGS_TF32 = [_cfg(128, 128, 32, 4, 4), _cfg(128, 256, 32, 8, 3), _cfg(256, 128, 32, 8, 3)]
CONFIGS_IEEE = [_cfg(128, 128, 32, 8, 3), _cfg(128, 64, 32, 4, 4), _cfg(64, 128, 32, 4, 4)]
SPACES = {"16": (CONFIGS_16, 2), "tf32": (CONFIGS_TF32, 4), "ieee": (CONFIGS_IEEE, 4)}   # (configs, element bytes)
# The fixed config: small and ragged problems (every check case), and any problem under TUNE_MIN. Its ring (3 x 128 x
# 32 x 2 B = 24 KiB, 48 KiB in fp32) fits every GPU of the course. `--set BLOCK_M=128` and the like override it.
FIXED_GPU = _cfg(64, 64, 32, 4, 3)
FIXED_INTERPRETER = _cfg(32, 32, 16, 4, 1, group=4)
TUNE_MIN = 512                              # autotune when M, N and K are all at least this
RING_SLACK = 1024                           # room for the pipeline's barriers beside the ring


ASYNC_MMA_CC = (90, 100, 103)     # wgmma (sm_90) and tcgen05 (sm_100/103): the MMA reads its operands in shared memory


def ring_bytes(cfg: dict, elt: int, cc: int = 90, tensor_cores: bool = True) -> int:
    """Shared memory of the K loop's ring: one A + B tile per buffer, as Triton allocates it (the compile report shows
    it for every architecture). Where the MMA reads its operands straight from shared memory (wgmma, tcgen05) every
    one of num_stages stages is a buffer; where they pass through registers (mma.sync on sm_80-sm_89 and sm_120, the
    FFMA loop of input_precision "ieee"), one stage fewer."""
    stage = (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elt
    return stage * (cfg["num_stages"] if tensor_cores and cc in ASYNC_MMA_CC else max(1, cfg["num_stages"] - 1))


def check_tile_config(v: dict) -> dict:
    """A grid-per-tile config that compiles (normalized), or ValueError naming the key."""
    out = {k: int(v[k]) for k in FIXED_GPU}
    for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps"):
        lo = 16 if k.startswith("BLOCK") else 1                # tl.dot takes tiles of 16 and more
        if out[k] < lo or out[k] & (out[k] - 1):
            raise ValueError(f"matmul_kernel: {k} must be a power of two >= {lo}, got {out[k]}")
    if not 1 <= out["num_stages"] <= 8 or out["num_warps"] > 32:
        raise ValueError(f"matmul_kernel: num_stages 1..8 and num_warps up to 32, got {config.fmt(out)}")
    return out


def fixed_config(interpreter: bool | None = None) -> config.Resolved:
    """The fixed config (FIXED_GPU; FIXED_INTERPRETER in the interpreter), with any --set override."""
    interp = INTERPRETER if interpreter is None else interpreter
    return config.resolve("matmul_kernel fixed config" + (" (interpreter)" if interp else ""),
                          FIXED_INTERPRETER if interp else FIXED_GPU, validate=check_tile_config)


def autotune_space(key: str, gpu: device.DeviceInfo | None = None) -> list[dict]:
    """The configs triton.autotune times for `key` ("16", "tf32", "ieee") on `gpu` (default: the GPU at hand): those
    of the space whose ring fits a block of this GPU (all of them where a block may use 160 KiB or more, fewer on a
    99 KiB part); the fixed config alone where none fits (a 64 KiB part keeps no 16-bit config)."""
    gpu = gpu or device.current()
    cfgs, elt = SPACES[key]
    fit = [dict(c) for c in cfgs
           if ring_bytes(c, elt, gpu.cc, key != "ieee") + RING_SLACK <= gpu.smem_per_block_optin]
    return fit or [fixed_config(interpreter=False).values]


def autotune_source(key: str, gpu: device.DeviceInfo | None = None) -> str:
    gpu = gpu or device.current()
    cfgs, _ = SPACES[key]
    fit = [c for c in cfgs if c in autotune_space(key, gpu)]
    if not fit:
        return tr("triton.autotune: none of the {n} configs fits {kib} KiB a block; the fixed config", n=len(cfgs),
                  kib=gpu.smem_per_block_optin // 1024)
    return tr("triton.autotune over {fit} of {n} configs (those fitting {kib} KiB)", fit=len(fit), n=len(cfgs),
              kib=gpu.smem_per_block_optin // 1024)


def _heuristics(args) -> dict:
    return {"EVEN_K": args["K"] % args["BLOCK_K"] == 0,
            "EVEN_MN": args["M"] % args["BLOCK_M"] == 0 and args["N"] % args["BLOCK_N"] == 0}


def _autotuned(configs):
    cfgs = [triton.Config({k: v for k, v in c.items() if k.isupper()}, num_warps=c["num_warps"],
                          num_stages=c["num_stages"]) for c in configs]
    heur = triton.heuristics({"EVEN_K": lambda a: _heuristics(a)["EVEN_K"],
                              "EVEN_MN": lambda a: _heuristics(a)["EVEN_MN"]})(matmul_kernel)
    return triton.autotune(configs=cfgs, key=["M", "N", "K"])(heur)


# triton.autotune needs a GPU (it times each config); the interpreter always runs the fixed config. One autotuner per
# space, built on first use for this GPU's space (and the --set overrides of the run, which the fixed config takes).
_AUTOTUNERS: dict = {}


def _space_id(key: str) -> tuple:
    return key, tuple(sorted(config.overrides().items()))


def autotuned_kernel(key: str):
    """The autotuned matmul_kernel for `key` on this GPU (built the first time)."""
    ident = _space_id(key)
    kernel = _AUTOTUNERS.get(ident)
    if kernel is None:
        kernel = _AUTOTUNERS[ident] = _autotuned(autotune_space(key))
    return kernel


def autotuner(key: str):
    """The autotuner of `key` if this process has built it (its best_config and timings), else None."""
    return None if INTERPRETER else _AUTOTUNERS.get(_space_id(key))


def _tuner_key(dtype: str, precision: str) -> str:
    return "16" if dtype in ("float16", "bfloat16") else precision


# ---------------------------------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _max_offset(shape, strides) -> int:
    return sum((int(d) - 1) * s for d, s in zip(shape, strides) if int(d) > 0)


# The TMA kernel's launch costs more host time than the grid kernel's (three tensor descriptors built per call), which
# a small problem cannot hide: it takes problems of at least TMA_MIN_MNK = M N K (the README has the measurements that
# set it), and torch tensors only - a CuPy array would cross into torch through DLPack, whose stream handshake can cost
# more than the kernel saves.
TMA_MIN_MNK = 2**35


def tma_takes(m: int, n: int, k: int, dtype: str, library: str) -> bool:
    """The size, dtype and array-library conditions under which matmul_triton prefers the TMA kernel."""
    return (min(m, n, k) >= TUNE_MIN and m * n * k >= TMA_MIN_MNK and library == "torch"
            and dtype in TMA_DTYPES)


def uses_tma(a, b, out, *, config: dict | None = None, tune: bool = True) -> bool:
    """Whether matmul_triton sends this problem to the persistent TMA kernel (the benchmark reports which ran)."""
    m, n, k = (int(a.shape[0]), int(b.shape[1]), int(a.shape[1]))
    return (config is None and tune and not INTERPRETER
            and tma_takes(m, n, k, arrays.dtype_name(a), arrays.library(a)) and _hopper()
            and not tma_problems(a, b, out))


def matmul_triton(a, b, out=None, *, precision: str | None = None, config: dict | None = None, tune: bool = True,
                  tma: bool = True):
    """C = A @ B with the Triton kernel.

    a (M x K), b (K x N): float16 / bfloat16 (fp32 accumulation, C in the same dtype) or float32 with
    precision="ieee" (default) or "tf32". Any strides >= 0 (transposed views work without a copy); `out` must be
    contiguous. On a Hopper-class GPU, 16-bit problems with M, N, K >= TUNE_MIN whose layout a tensor descriptor
    takes run the persistent TMA kernel (matmul_triton_tma; tma=False opts out). Otherwise, on a GPU, problems with
    M, N, K >= TUNE_MIN use the autotuned kernel (tune=False or an explicit
    config picks one config); in the interpreter, FIXED_INTERPRETER always. Arrays: CuPy or torch (bf16) on a GPU,
    NumPy or CPU torch in the interpreter.
    """
    dev = not INTERPRETER
    dt = arrays.check_array("a", a, dtypes=DTYPES, ndim=2, device=dev, contiguous=False)
    arrays.check_array("b", b, dtypes=DTYPES, ndim=2, device=dev, contiguous=False)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b)
    if dt == "float32":
        precision = precision or "ieee"
        if precision not in PRECISIONS:
            raise ValueError(f"precision: expected one of {PRECISIONS} for float32, got {precision!r}")
    elif precision not in (None, "tf32"):
        raise ValueError(f"precision: only float32 inputs take a precision ({dt} runs on the tensor cores with fp32 "
                         f"accumulation), got {precision!r}")
    out = arrays.check_out(out, (m, n), dt, a)
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    sa, sb, sc = _elem_strides(a), _elem_strides(b), _elem_strides(out)
    if min(sa + sb) < 0:
        raise ValueError("a, b: negative strides are not supported; pass a copy (e.g. cupy.ascontiguousarray)")
    if max(sa[1], sb[0]) * 128 >= 2**31:
        # the K loop advances its pointers by BLOCK_K x (K-stride) in 32-bit arithmetic
        raise ValueError(f"a, b: a K-stride of {max(sa[1], sb[0])} elements is too large for the K loop's 32-bit "
                         "pointer steps; pass a contiguous copy")
    index_64 = max(_max_offset(a.shape, sa), _max_offset(b.shape, sb), _max_offset(out.shape, sc)) >= 2**31 - 1
    prec = precision if dt == "float32" else "tf32"
    common = dict(PRECISION=prec, INDEX_64=index_64, UPCAST=bool(INTERPRETER and dt == "bfloat16"))
    args = (a, b, out, m, n, k, sa[0], sa[1], sb[0], sb[1], sc[0], sc[1])
    if uses_tma(a, b, out, config=config, tune=tune and tma):
        return matmul_triton_tma(a, b, out=out)          # Hopper: the persistent TMA kernel, this GPU's config
    if config is None and tune and not INTERPRETER and min(m, n, k) >= TUNE_MIN:
        tuned_kernel = autotuned_kernel(_tuner_key(dt, prec))

        def grid(meta):
            return (grid_programs(m, n, meta),)

        launch(tuned_kernel, grid, *args, **common)
        return out
    cfg = dict(config or fixed_config().values)
    meta = {k_: v for k_, v in cfg.items() if k_.isupper()}
    meta.update(_heuristics({"M": m, "N": n, "K": k, **meta}))
    programs = grid_programs(m, n, meta)
    if programs > 2**31 - 1:
        raise ValueError(f"a, b: {programs} tiles exceed the grid limit; use larger BLOCK_M / BLOCK_N")
    launch(matmul_kernel, (programs,), *args, **common, **meta, num_warps=cfg["num_warps"],
           num_stages=cfg["num_stages"])
    return out


def grid_programs(m: int, n: int, cfg: dict) -> int:
    """matmul_kernel's grid: one program per BLOCK_M x BLOCK_N tile of C."""
    return triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])


def matmul_triton_tf32(a, b, out=None):
    """fp32 inputs, tensor cores with tf32 inputs (the 'tf32' check dtype)."""
    return matmul_triton(a, b, out=out, precision="tf32")


# ---------------------------------------------------------------------------------------------------------------------
# Hopper (sm_90+): the persistent TMA kernel (triton_kernels.matmul_tma_kernel) for 16-bit inputs
# (its configurations, what it takes and its operands: tma.py; here the config a problem gets, and the wrapper)
# ---------------------------------------------------------------------------------------------------------------------
# Its config: the lab's default (TMA_DEFAULT), then this GPU's tuning record (--tune: bench.tune sweeps tile, group,
# stages and epilogue split at the benchmark sizes and records the winner at each,
# results/<gpu>/phase3_lab02_matmul_tuned.json; a problem uses the winner tuned at the size closest to its own, in
# log M N K), then --set TMA_GROUP_M=16 and the like (TMA_KEYS: the names --set takes).
TUNED_RECORD = LAB + "_tuned"


def tma_config(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> tuple[dict, str]:
    """(config, where it came from) for an m x n x k problem on `gpu` (default: this GPU; the interpreter's own
    config there)."""
    interp = INTERPRETER and gpu is None
    winners, source = (None, "interpreter config") if interp else tuned.record(TUNED_RECORD, _check_winners, gpu=gpu)
    best = None
    if winners:
        size = np.log(float(m) * n * k)
        best = min(winners, key=lambda e: abs(np.log(float(np.prod(e["shape"]))) - size))
        source += f", winner at {'x'.join(map(str, best['shape']))}"
    res = config.resolve("matmul_tma_kernel (persistent TMA)" + (" (interpreter)" if interp else ""),
                         _tma_keyed(TMA_INTERPRETER if interp else TMA_DEFAULT),
                         tuned=_tma_keyed(best["config"]) if best else None, tuned_source=source,
                         validate=_check_tma_keyed)
    cfg = {k: res.values[key] for k, key in TMA_KEYS.items()}
    overridden = any(v.startswith("--set") for v in res.sources.values())
    return cfg, (res.source() if overridden else source)


def matmul_triton_tma(a, b, out=None, *, config: dict | None = None):
    """C = A @ B with the persistent TMA kernel: fp16 / bf16 inputs, fp32 accumulation, C in the input dtype. Needs
    a Hopper-class GPU (sm_90+) or the interpreter, rows of A, B and C contiguous with row strides that are multiples
    of 16 bytes (a K or N that is a multiple of 8), 16-byte aligned bases; anything else is refused with the reason
    (matmul_triton takes any layout)."""
    dev = not INTERPRETER
    dt = arrays.check_array("a", a, dtypes=TMA_DTYPES, ndim=2, device=dev, contiguous=False)
    arrays.check_array("b", b, dtypes=TMA_DTYPES, ndim=2, device=dev, contiguous=False)
    arrays.check_same("a, b", a, b, shape=False)
    if dev and not _hopper():
        raise RuntimeError(f"the TMA kernel cannot run here: {tma_unavailable(device.info())}; use matmul_triton")
    m, n, k = arrays.matmul_dims(a, b)
    out = arrays.check_out(out, (m, n), dt, a)
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    why = tma_problems(a, b, out)
    if why:
        raise ValueError(f"the TMA kernel cannot take these arrays: {why}; use matmul_triton")
    cfg = check_tma_config(config) if config else tma_config(m, n, k)[0]
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    a_desc, b_desc, c_desc, programs = tma_operands(a, b, out, bm, bn, bk, bn // 2 if cfg["EPI_SPLIT"] else bn)
    launch(matmul_tma_kernel, (programs,), a_desc, b_desc, c_desc, m, n, k, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
           GROUP_M=cfg["GROUP_M"], NUM_PROGRAMS=programs, EPI_SPLIT=cfg["EPI_SPLIT"],
           UPCAST=bool(INTERPRETER and dt == "bfloat16"), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return out


def best_config(dtype: str, precision: str = "ieee") -> dict | None:
    """The config the autotuner picked last for this dtype/precision (GPU only)."""
    t = autotuner(_tuner_key(dtype, precision))
    c = getattr(t, "best_config", None)
    if c is None:
        return None
    return dict(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages)


# ---------------------------------------------------------------------------------------------------------------------
# Peers: cuBLAS through torch and CuPy
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def peer_torch_matmul(a, b, out=None):
    """torch.matmul = cuBLAS; fp32 with TF32 off (true SGEMM)."""
    import torch

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), arrays.dtype_name(a), a)
    if arrays.dtype_name(a) != "float32":
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
        return out
    with torch_tf32(False):
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
    return out


def peer_torch_matmul_tf32(a, b, out=None):
    import torch

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), "float32", a)
    with torch_tf32(True):
        torch.matmul(_torch_view(a), _torch_view(b), out=_torch_view(out))
    return out


def peer_cupy_matmul(a, b, out=None):
    import cupy

    out = arrays.check_out(out, (int(a.shape[0]), int(b.shape[1])), arrays.dtype_name(a), a)
    cupy.matmul(a, b, out=out)
    return out


def _tma_cannot_serve(size, dtype) -> str:
    m, n, k = size
    if (k * 2) % 16 or (n * 2) % 16:
        return tr("TMA needs row strides of 16 bytes: K and N multiples of 8")
    return ""


VARIANTS = [
    lab.Variant("triton matmul", matmul_triton, "triton", dtypes=("float16", "bfloat16", "float32"),
                note="fp32 = input_precision 'ieee'"),
    lab.Variant("triton persistent TMA", matmul_triton_tma, "triton", dtypes=TMA_DTYPES, archs=("sm_90+",),
                cannot_serve=_tma_cannot_serve, unavailable=tma_unavailable, note="sm_90+; K, N multiples of 8"),
    lab.Variant("triton matmul tf32", matmul_triton_tf32, "triton", dtypes=("tf32",),
                note="fp32 storage, input_precision 'tf32'"),
]
PEERS = [
    lab.Variant("torch.matmul (cuBLAS)", peer_torch_matmul, "peer", dtypes=("float16", "bfloat16", "float32")),
    lab.Variant("torch.matmul TF32 (cuBLAS)", peer_torch_matmul_tf32, "peer", dtypes=("tf32",)),
    lab.Variant("cupy.matmul (cuBLAS)", peer_cupy_matmul, "peer", dtypes=("float16", "float32")),
]
CHECK_CASES = [((1, 8, 8), "bfloat16"), ((17, 33, 65), "float16"), ((127, 255, 129), "float32"),
               ((130, 70, 301), "tf32"), ((256, 256, 256), "bfloat16"), ((301, 1000, 200), "bfloat16"),
               ((1000, 3, 257), "float32"), ((64, 1024, 96), "float16"), ((9, 17, 8193), "float16"),
               ((31, 40, 8200), "bfloat16"),
               # the TMA kernel's cases (K and N multiples of 8; edges and K tails left to the copy engine); the
               # sizes matmul_triton sends to it (uses_tma) are checked on sampled rows by the benchmark
               ((1, 1, 1), "bfloat16"), ((129, 136, 200), "float16"), ((301, 264, 8200), "bfloat16"),
               ((520, 1032, 776), "bfloat16")]
# The long-K cases (hundreds of k-tiles) are there for the accumulator: one that is rounded to 16 bits after every
# k-tile stays inside the tolerance over a few tiles, and leaves it by several times over 257.
CPU_CHECK_CASES = [((1, 1, 1), "float32"), ((5, 7, 3), "float16"), ((33, 40, 24), "bfloat16"), ((40, 50, 70), "tf32"),
                   ((200, 70, 50), "float32"), ((64, 64, 64), "float16"), ((9, 17, 4099), "float16"),
                   ((5, 33, 4111), "bfloat16"), ((1, 8, 8), "float16"), ((33, 65, 40), "bfloat16"),
                   ((70, 72, 136), "float16")]
# --quick: the first four of each list; every variant's dtype appears in them
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's cases on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
TARGET_CASES = [("bfloat16", 4096, 0.97), ("bfloat16", 8192, 0.97), ("float16", 4096, 0.95)]   # (dtype, n, target)
FP32_CASES = [("float32", 4096), ("tf32", 4096)]        # timed beside them (no target)
SMALL_CASE = ((32768, 32, 32), "bfloat16")              # an irregular shape of the benchmark, under TUNE_MIN
_TY = {"float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32"}


def bench_library(dtype: str) -> str:
    """The array library of the benchmark's inputs (common.arrays.device_randn): torch for bf16, CuPy else."""
    return "torch" if dtype == "bfloat16" else "cupy"


def bench_bytes(n: int, dtype: str = "bfloat16") -> int:
    """Bytes the benchmark holds at n^3: A, B and three C's (Triton, cuBLAS, the grid kernel timed beside TMA)."""
    return 5 * n * n * arrays.ITEMSIZE[storage_dtype(dtype)]


def fit_n(n: int, dtype: str, gpu: device.DeviceInfo):
    """(n, note): a benchmark size halved until its arrays fit the GPU's memory (common.plan.fit)."""
    return plan.fit(n, lambda s: bench_bytes(s, dtype), gpu, what=f"{dtype} {n}^3: n")


def matmul_signature(dtype: str, precision: str, cfg: dict, *, even_k: bool = True, even_mn: bool = True,
                     index_64: bool = False) -> tuple[dict, dict]:
    """(signature, constexprs) of matmul_kernel as a GPU launch on contiguous arrays compiles it: unit strides arrive
    as the constant 1 (Triton specializes an integer argument equal to 1); the tile and the flags are constexprs."""
    ty = _TY[dtype]
    sig = {"a_ptr": ty, "b_ptr": ty, "c_ptr": ty, "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
           "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr", "stride_cm": "i32",
           "stride_cn": "constexpr"}
    const = {k: v for k, v in cfg.items() if k.isupper()}
    const.update(PRECISION=precision, EVEN_K=even_k, EVEN_MN=even_mn, INDEX_64=index_64, UPCAST=False, stride_ak=1,
                 stride_bn=1, stride_cn=1)
    sig.update({k: "constexpr" for k in const if k not in sig})
    return sig, const


def tma_signature(dtype: str, cfg: dict, programs: int) -> tuple[dict, dict]:
    """(signature, constexprs) of matmul_tma_kernel: tensor descriptors of A's, B's and C's tiles."""
    t = _TY[dtype][1:]
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    sig = {"a_desc": f"tensordesc<{t}[{bm},{bk}]>", "b_desc": f"tensordesc<{t}[{bk},{bn}]>",
           "c_desc": f"tensordesc<{t}[{bm},{bn // 2 if cfg['EPI_SPLIT'] else bn}]>", "M": "i32", "N": "i32", "K": "i32"}
    const = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg["GROUP_M"], NUM_PROGRAMS=programs,
                 EPI_SPLIT=cfg["EPI_SPLIT"], UPCAST=False)
    sig.update({k: "constexpr" for k in const})
    return sig, const


def _tma_launch(variant: str, n: int, dtype: str, gpu: device.DeviceInfo, case: str) -> plan.Launch:
    cfg, source = tma_config(n, n, n, gpu)
    programs = tma_programs(n, n, cfg["BLOCK_M"], cfg["BLOCK_N"], gpu.sms)
    sig, const = tma_signature(dtype, cfg, programs)
    return plan.Launch(variant, "matmul_tma_kernel", "triton", fn=matmul_tma_kernel, grid=programs, signature=sig,
                       defines=const, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case,
                       config_source=source)


def _grid_launch(variant: str, shape, dtype: str, precision: str, cfg: dict, case: str, source: str) -> plan.Launch:
    m, n, k = shape
    sig, const = matmul_signature(dtype, precision, cfg, even_k=k % cfg["BLOCK_K"] == 0,
                                  even_mn=m % cfg["BLOCK_M"] == 0 and n % cfg["BLOCK_N"] == 0)
    return plan.Launch(variant, "matmul_kernel", "triton", fn=matmul_kernel, grid=grid_programs(m, n, cfg),
                       signature=sig, defines=const, num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
                       case=case, config_source=source)


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """The benchmark's cases on `gpu`: each one's TMA kernel (where matmul_triton takes it), the autotuner's configs
    (triton.autotune compiles and times every config of this GPU's space), the fixed config of a small problem, and
    the TMA variant's own launch."""
    out = []
    cases = [(d, n) for d, n, _ in TARGET_CASES] + FP32_CASES
    if size:
        cases = list(dict.fromkeys((d, int(size)) for d, _ in cases))
    for dtype, n0 in cases:
        n, _ = fit_n(n0, dtype, gpu)
        st = storage_dtype(dtype)
        prec = "ieee" if dtype == "float32" else "tf32"
        variant = VARIANTS[2].name if dtype == "tf32" else VARIANTS[0].name
        case = f"{dtype} {n}^3"
        if tma_takes(n, n, n, st, bench_library(dtype)) and not tma_unavailable(gpu):
            out.append(_tma_launch(variant, n, st, gpu, case))
            case = tr("{case}: the grid kernel timed beside it", case=case)
        if n >= TUNE_MIN:
            key = _tuner_key(st, prec)
            out += [_grid_launch(variant, (n, n, n), st, prec, cfg, case, autotune_source(key, gpu))
                    for cfg in autotune_space(key, gpu)]
        else:
            fixed = fixed_config(interpreter=False)
            out.append(_grid_launch(variant, (n, n, n), st, prec, fixed.values, case, fixed.source()))
    shape, dtype = SMALL_CASE
    fixed = fixed_config(interpreter=False)
    out.append(_grid_launch(VARIANTS[0].name, shape, dtype, "tf32", fixed.values,
                            tr("{dtype} {shape} (under TUNE_MIN: the fixed config)", dtype=dtype,
                               shape='x'.join(map(str, shape))), fixed.source()))
    if not tma_unavailable(gpu):
        n, _ = fit_n(int(size or TARGET_CASES[0][1]), "bfloat16", gpu)
        out.append(_tma_launch(VARIANTS[1].name, n, "bfloat16", gpu, f"bfloat16 {n}^3"))
    return out
