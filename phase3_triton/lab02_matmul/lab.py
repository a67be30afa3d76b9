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
(M K + K N + M N) x 2 = 100.7 MB. 1365 FLOP/B, far above the ridge point of an H200 in dense bf16 (~206 FLOP/B):
compute wins by ~7x, and moving the 100.7 MB once takes about a tenth of the math time. The real DRAM traffic is
larger than the minimum (tiles are re-read by different programs: see the ordering table), but stays well under the
compute time; the target is >= 0.95x cuBLAS in bf16 (4096^3 and 8192^3) and fp16 (4096^3). fp32 "ieee" runs on the
CUDA cores instead (ridge ~14 FLOP/B on an H200): still compute-bound at 4096^3. The lesson, the predictions and this
GPU's measured figures: README.md.

Run: python -m phase3_triton.lab02_matmul [--quick] [--no-bench] [--arch sm_80] [--replot]
"""
from __future__ import annotations

import sys

import numpy as np

from common import arrays, check, lab
from common.bench import torch_tf32
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import matmul_kernel

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


# Hopper, 16-bit inputs: one A + B stage is (BM + BN) x 64 x 2 B = 48 KiB for 128 x 256, so 3-4 stages fit in the
# 227 KiB a block may use (144 KiB at 3 stages, 192 KiB at 4: the compile report shows it); 8 warps = two
# warpgroups, each issuing wgmma on half the tile (64 or 128 rows). 128 x 64 is there for the small problems, where
# 128 x 256 tiles would leave most of the 132 SMs idle. Which config the tuner picks at each size: the README.
CONFIGS_16 = [_cfg(128, 256, 64, 8, 3), _cfg(128, 256, 64, 8, 4), _cfg(256, 128, 64, 8, 3), _cfg(256, 128, 64, 8, 4),
              _cfg(128, 128, 64, 4, 4), _cfg(128, 64, 64, 4, 4)]
# fp32: a 4-byte element doubles the bytes per stage, so BLOCK_K drops to 32.
CONFIGS_TF32 = [_cfg(128, 128, 32, 4, 4), _cfg(128, 256, 32, 8, 3), _cfg(256, 128, 32, 8, 3)]
CONFIGS_IEEE = [_cfg(128, 128, 32, 8, 3), _cfg(128, 64, 32, 4, 4), _cfg(64, 128, 32, 4, 4)]
FIXED_GPU = _cfg(64, 64, 32, 4, 3)          # small and ragged problems (and every check case)
FIXED_INTERPRETER = _cfg(32, 32, 16, 4, 1, group=4)
TUNE_MIN = 512                              # autotune when M, N and K are all at least this


def _heuristics(args) -> dict:
    return {"EVEN_K": args["K"] % args["BLOCK_K"] == 0,
            "EVEN_MN": args["M"] % args["BLOCK_M"] == 0 and args["N"] % args["BLOCK_N"] == 0}


def _autotuned(configs):
    cfgs = [triton.Config({k: v for k, v in c.items() if k.isupper()}, num_warps=c["num_warps"],
                          num_stages=c["num_stages"]) for c in configs]
    heur = triton.heuristics({"EVEN_K": lambda a: _heuristics(a)["EVEN_K"],
                              "EVEN_MN": lambda a: _heuristics(a)["EVEN_MN"]})(matmul_kernel)
    return triton.autotune(configs=cfgs, key=["M", "N", "K"])(heur)


# triton.autotune needs a GPU (it times each config); the interpreter always runs FIXED_INTERPRETER.
TUNED = {} if INTERPRETER else {"16": _autotuned(CONFIGS_16), "tf32": _autotuned(CONFIGS_TF32),
                                "ieee": _autotuned(CONFIGS_IEEE)}


def _tuner_key(dtype: str, precision: str) -> str:
    return "16" if dtype in ("float16", "bfloat16") else precision


# ---------------------------------------------------------------------------------------------------------------------
# The wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _elem_strides(x) -> tuple[int, ...]:
    if arrays.library(x) == "torch":
        return tuple(int(s) for s in x.stride())
    return tuple(int(s) // x.itemsize for s in x.strides)


def _max_offset(shape, strides) -> int:
    return sum((int(d) - 1) * s for d, s in zip(shape, strides) if int(d) > 0)


def matmul_triton(a, b, out=None, *, precision: str | None = None, config: dict | None = None, tune: bool = True):
    """C = A @ B with the Triton kernel.

    a (M x K), b (K x N): float16 / bfloat16 (fp32 accumulation, C in the same dtype) or float32 with
    precision="ieee" (default) or "tf32". Any strides >= 0 (transposed views work without a copy); `out` must be
    contiguous. On a GPU, problems with M, N, K >= TUNE_MIN use the autotuned kernel (tune=False or an explicit
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
    if config is None and tune and not INTERPRETER and min(m, n, k) >= TUNE_MIN:
        tuned = TUNED[_tuner_key(dt, prec)]

        def grid(meta):
            return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)

        launch(tuned, grid, *args, **common)
        return out
    cfg = dict(config or (FIXED_INTERPRETER if INTERPRETER else FIXED_GPU))
    meta = {k_: v for k_, v in cfg.items() if k_.isupper()}
    meta.update(_heuristics({"M": m, "N": n, "K": k, **meta}))
    programs = triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])
    if programs > 2**31 - 1:
        raise ValueError(f"a, b: {programs} tiles exceed the grid limit; use larger BLOCK_M / BLOCK_N")
    launch(matmul_kernel, (programs,), *args, **common, **meta, num_warps=cfg["num_warps"],
           num_stages=cfg["num_stages"])
    return out


def matmul_triton_tf32(a, b, out=None):
    """fp32 inputs, tensor cores with tf32 inputs (the 'tf32' check dtype)."""
    return matmul_triton(a, b, out=out, precision="tf32")


def best_config(dtype: str, precision: str = "ieee") -> dict | None:
    """The config the autotuner picked last for this dtype/precision (GPU only)."""
    t = TUNED.get(_tuner_key(dtype, precision))
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


VARIANTS = [
    lab.Variant("triton matmul", matmul_triton, "triton", dtypes=("float16", "bfloat16", "float32"),
                note="fp32 = input_precision 'ieee'"),
    lab.Variant("triton matmul tf32", matmul_triton_tf32, "triton", dtypes=("tf32",),
                note="fp32 storage, input_precision 'tf32'"),
]
PEERS = [
    lab.Variant("torch.matmul (cuBLAS)", peer_torch_matmul, "peer", dtypes=("float16", "bfloat16", "float32")),
    lab.Variant("torch.matmul TF32 (cuBLAS)", peer_torch_matmul_tf32, "peer", dtypes=("tf32",)),
    lab.Variant("cupy.matmul (cuBLAS)", peer_cupy_matmul, "peer", dtypes=("float16", "float32")),
]
CHECK_CASES = [((1, 1, 1), "bfloat16"), ((17, 33, 65), "float16"), ((127, 255, 129), "float32"),
               ((130, 70, 300), "tf32"), ((256, 256, 256), "bfloat16"), ((300, 1000, 200), "bfloat16"),
               ((1000, 3, 257), "float32"), ((64, 1024, 96), "float16"), ((9, 17, 8193), "float16"),
               ((31, 40, 8200), "bfloat16")]
# The long-K cases (hundreds of k-tiles) are there for the accumulator: one that is rounded to 16 bits after every
# k-tile stays inside the tolerance over a few tiles, and leaves it by several times over 257.
CPU_CHECK_CASES = [((1, 1, 1), "float32"), ((5, 7, 3), "float16"), ((33, 65, 40), "bfloat16"), ((40, 50, 70), "tf32"),
                   ((200, 70, 50), "float32"), ((64, 64, 64), "float16"), ((9, 17, 4099), "float16"),
                   ((5, 33, 4111), "bfloat16")]
# --quick: the first four of each list; every variant's dtype appears in them
QUICK_CASES = 4


def main(argv=None) -> int:
    from . import bench

    return lab.run(sys.modules[__name__], bench, argv)
