"""Lab 4.3, the Triton rung: how gemm_triton runs tc_dot_kernel (triton_kernels.py) - its fixed tiles and the
autotuner's candidates for this GPU's shared memory (triton_config, triton_candidates), the grid, the wrapper itself
(on a GPU, or in the interpreter on host arrays), why it does not run before sm_80, and the launch a plan lists for a
config (triton_launch)."""
from __future__ import annotations

import functools

from common import arrays, config, device, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .operands import prepare
from .triton_kernels import tc_dot_kernel


def _tcfg(bm, bn, bk, warps, stages, group=8) -> dict:
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages)


# A few configs for GPUs with 144 KiB or more of shared memory a block (lab 3.2's tuner picked 128 x 256 x 64, 8 warps,
# 4 stages at 4096^3 bf16 on Hopper), and a compact set for GPUs that give a block 99 KiB, where none of the first
# fits (triton_candidates picks); 64 x 64 for small problems.
TRITON_CONFIGS = [_tcfg(128, 256, 64, 8, 3), _tcfg(128, 256, 64, 8, 4), _tcfg(256, 128, 64, 8, 3),
                  _tcfg(128, 128, 64, 4, 4)]
TRITON_COMPACT = [_tcfg(128, 256, 32, 8, 3), _tcfg(128, 128, 32, 4, 4), _tcfg(64, 128, 64, 4, 3)]
TRITON_SMALL = _tcfg(64, 64, 32, 4, 3)
TRITON_INTERPRETER = _tcfg(32, 32, 16, 4, 1, group=4)
TRITON_TUNE_MIN = 512
TRITON_KEYS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "num_warps", "num_stages")


def triton_smem(cfg: dict, elt: int = 2) -> int:
    """Shared memory a tl.dot config asks for when Triton pipelines its loads: num_stages slabs of (BM + BN) x BK
    elements. That is what a launch on 16-byte aligned operands gets; a compile that cannot assume the alignment (the
    plan's ahead-of-time check) does not pipeline and needs less, so this estimate, not the plan, decides what fits."""
    return cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elt


def triton_candidates(gpu: device.DeviceInfo | None = None) -> list[dict]:
    """The configs the autotuner times on `gpu` (default: device.current()): those of TRITON_CONFIGS that fit its
    shared memory per block, or TRITON_COMPACT where none does (a config that does not fit fails to launch)."""
    limit = (gpu or device.current()).smem_per_block_optin
    return [c for c in TRITON_CONFIGS if triton_smem(c) <= limit] or \
        [c for c in TRITON_COMPACT if triton_smem(c) <= limit]


def triton_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """How gemm_triton runs on `gpu` (default: here, device.current()), decided here: with TRITON_AUTOTUNE=1 (the
    default) triton.autotune chooses among triton_candidates(gpu) for problems of at least TRITON_TUNE_MIN a side, and
    smaller ones run the fixed config; TRITON_AUTOTUNE=0 runs the fixed config at every size. The fixed config is
    TRITON_SMALL (here in the interpreter: TRITON_INTERPRETER), then --set BLOCK_M=.. BLOCK_N=.. BLOCK_K=.. GROUP_M=..
    num_warps=.. num_stages=.. (so `--set TRITON_AUTOTUNE=0 --set BLOCK_M=128` runs 128-row tiles everywhere)."""
    interpreter = INTERPRETER and gpu is None
    gpu = gpu or device.current()

    def check(v: dict) -> dict:
        pow2 = all(v[k] >= 16 and v[k] & (v[k] - 1) == 0 for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        if not pow2 or v["GROUP_M"] < 1 or v["num_warps"] not in (1, 2, 4, 8, 16) or v["num_stages"] < 1 \
                or v["TRITON_AUTOTUNE"] not in (0, 1):
            raise ValueError(f"triton tc_dot_kernel: BLOCK_M, BLOCK_N, BLOCK_K powers of two >= 16, GROUP_M >= 1, "
                             f"num_warps 1..16 (a power of two), num_stages >= 1, TRITON_AUTOTUNE 0 or 1; got "
                             f"{config.fmt(v)}")
        if not interpreter and triton_smem(v) > gpu.smem_per_block_optin:
            raise ValueError(f"triton tc_dot_kernel: {config.fmt(v)} needs {triton_smem(v)} B of shared memory, "
                             f"more than the {gpu.smem_per_block_optin} B a block may have on {gpu.name}")
        return v

    fixed = TRITON_INTERPRETER if interpreter else TRITON_SMALL
    return config.resolve("triton tc_dot_kernel", dict(fixed, TRITON_AUTOTUNE=1), validate=check)


@functools.lru_cache(maxsize=None)
def _autotuned(candidates: tuple):
    """triton.autotune over `candidates` (tuples of a config's items), one autotuner per candidate list."""
    cfgs = [triton.Config({k: v for k, v in c if k.isupper()}, num_warps=dict(c)["num_warps"],
                          num_stages=dict(c)["num_stages"]) for c in candidates]
    return triton.autotune(configs=cfgs, key=["M", "N", "K"])(tc_dot_kernel)


def triton_grid(m: int, n: int, meta: dict) -> tuple[int]:
    """Programs of tc_dot_kernel: one per BLOCK_M x BLOCK_N tile of C."""
    return (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)


def gemm_triton(a, b, out=None, *, config: dict | None = None, out_dtype: str | None = None):
    """Triton tl.dot: C = a @ b, fp32 accumulation. On a GPU: CuPy/torch arrays, as triton_config says (autotuned over
    the candidates that fit this GPU when M, N, K >= 512, else one fixed config), or one explicit config; in the
    interpreter: NumPy / CPU torch arrays, TRITON_INTERPRETER."""
    out, m, n, k, lda, ldb, ldc, dt = prepare(a, b, out, out_dtype, device_arrays=not INTERPRETER)
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    args = (a, b, out, m, n, k, lda, ldb, ldc)
    upcast = bool(INTERPRETER and dt == "bfloat16")
    resolved = triton_config().values if config is None else None
    if resolved is not None and resolved["TRITON_AUTOTUNE"] and not INTERPRETER and min(m, n, k) >= TRITON_TUNE_MIN:
        cands = tuple(tuple(c.items()) for c in triton_candidates(device.info()))
        launch(_autotuned(cands), lambda meta: triton_grid(m, n, meta), *args, UPCAST=upcast)
        return out
    cfg = dict(config or {k_: resolved[k_] for k_ in TRITON_KEYS})
    meta = {k_: v for k_, v in cfg.items() if k_.isupper()}
    launch(tc_dot_kernel, triton_grid(m, n, meta), *args, UPCAST=upcast, **meta, num_warps=cfg["num_warps"],
           num_stages=cfg["num_stages"])
    return out


def triton_unavailable(gpu=None) -> str:
    """bf16 tl.dot has no tensor-core path before sm_80 (Triton refuses to compile it for sm_75)."""
    if gpu is not None and gpu.cc < 80:
        return tr("bf16 tl.dot needs sm_80 or later (no bf16 tensor cores before Ampere); this GPU is {arch}",
                  arch=gpu.arch)
    return ""


def _triton_signature(dtype: str) -> dict:
    t = {"bfloat16": "*bf16", "float16": "*fp16"}[dtype]
    return {"a_ptr": t, "b_ptr": t, "c_ptr": t, "M": "i32", "N": "i32", "K": "i32", "lda": "i32", "ldb": "i32",
            "ldc": "i32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
            "GROUP_M": "constexpr", "UPCAST": "constexpr"}


def triton_launch(variant: str, n: int, cfg: dict, dtype: str, case: str, source: str = "") -> plan.Launch:
    """The launch gemm_triton makes with `cfg` on an n x n x n problem (lab 4.4's plan lists its tiles with it)."""
    meta = {k: cfg[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")}
    return plan.Launch(variant, "tc_dot_kernel", "triton", fn=tc_dot_kernel, grid=triton_grid(n, n, meta),
                       signature=_triton_signature(dtype), defines=dict(meta, UPCAST=False),
                       num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case, config_source=source)
