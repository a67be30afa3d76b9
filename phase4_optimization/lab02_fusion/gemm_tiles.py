"""Part 3 of lab 4.2, the tiles of its GEMM: linear_kernel's candidate tiles, the default a problem gets on a GPU
(the first whose operand ring fits its shared memory), this run's tuning and --set over it, one launch's arithmetic,
and the 16-bit type the GEMM runs in on a GPU."""
from __future__ import annotations

from common import config, device
from common.i18n import tr
from common.triton_support import INTERPRETER, triton

from .parts import TUNED, TUNED_HERE


# =====================================================================================================================
# Part 3 - a GEMM with its epilogue fused: linear_kernel (triton_kernels.py); its tiles
# =====================================================================================================================
def _gcfg(bm, bn, bk, warps, stages, group=8):
    return dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, num_warps=warps, num_stages=stages)


# 16-bit inputs. One stage of x + W tiles is (BM + BN) x BK x 2 B: 48 KiB for 128 x 256 x 64, so 4 stages need
# 192 KiB and fit the 227 KiB a block may use on Hopper; 8 warps = two warpgroups of wgmma. 128 x 256 x 64, 8 warps,
# 4 stages is lab 3.2's best tile at bf16 4096^3; the epilogue adds registers (bias, GELU temporaries), which is why
# smaller tiles are candidates too. The tuning (bench.py) times each at the benchmark shape.
LINEAR_CONFIGS = [_gcfg(128, 256, 64, 8, 4), _gcfg(128, 256, 64, 8, 3), _gcfg(256, 128, 64, 8, 3),
                  _gcfg(128, 128, 64, 8, 4), _gcfg(128, 128, 64, 4, 4)]
LINEAR_BIG = LINEAR_CONFIGS[0]          # the default for M, N, K >= LINEAR_BIG_MIN where its ring fits (linear_default)
LINEAR_BIG_MIN = 512
# The big-problem default of a GPU whose shared memory per block holds the ring of none of LINEAR_CONFIGS (99 KiB on
# consumer cards, 64 KiB on the oldest architecture the course supports): 4 stages of 128 x 128 x 32 = 64 KiB.
LINEAR_FIT = _gcfg(128, 128, 32, 4, 4)
LINEAR_SMALL = _gcfg(64, 64, 32, 4, 3)  # small and ragged problems
LINEAR_INTERPRETER = _gcfg(32, 32, 16, 4, 1, group=4)
# a tile's names on the command line (--set GEMM_STAGES=3): one prefix per kernel, so the two GEMMs never share a name
_KNOB = {"BLOCK_M": "BLOCK_M", "BLOCK_N": "BLOCK_N", "BLOCK_K": "BLOCK_K", "GROUP_M": "GROUP_M", "num_warps": "WARPS",
         "num_stages": "STAGES"}


def knobs(cfg: dict, prefix: str) -> dict:
    """A GEMM tile in --set names: {'BLOCK_M': 128, 'num_warps': 8} -> {'GEMM_BLOCK_M': 128, 'GEMM_WARPS': 8}."""
    return {prefix + _KNOB[k]: v for k, v in cfg.items() if k in _KNOB}


def tile_of(values: dict, prefix: str) -> dict:
    """The inverse of knobs(): the tile as the kernel takes it."""
    return {k: values[prefix + name] for k, name in _KNOB.items() if prefix + name in values}


def _tile_validator(kernel: str, prefix: str):
    def validate(v: dict) -> dict:
        t = tile_of(v, prefix)
        bad = [k for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M") if t[k] < 1 or t[k] & (t[k] - 1)]
        if bad or min(t["BLOCK_M"], t["BLOCK_N"], t["BLOCK_K"]) < 16 or t["num_warps"] not in (1, 2, 4, 8, 16) \
                or not 1 <= t["num_stages"] <= 8:
            raise ValueError(f"{kernel}: {prefix}BLOCK_M/N/K powers of two >= 16, {prefix}GROUP_M a power of two, "
                             f"{prefix}WARPS in 1..16 (a power of two), {prefix}STAGES in 1..8; got {config.fmt(v)}")
        return v
    return validate


def ring_bytes(cfg: dict, elt: int = 2) -> int:
    """Shared memory of a GEMM tile's operand ring, counted as num_stages (x, W) tile pairs of 16-bit values: what
    Hopper's pipeline keeps (earlier architectures keep one stage fewer, so this errs on the safe side)."""
    return cfg["num_stages"] * (cfg["BLOCK_M"] + cfg["BLOCK_N"]) * cfg["BLOCK_K"] * elt


def linear_default(m: int, n: int, k: int, gpu: device.DeviceInfo) -> dict:
    """The lab's default tile for an M x N x K problem on `gpu`: LINEAR_SMALL below LINEAR_BIG_MIN in any dimension;
    else the first of LINEAR_CONFIGS (LINEAR_BIG first) whose ring fits the GPU's shared memory per block, else
    LINEAR_FIT. Derived from the GPU's limits here, so that the default fits every GPU (tests/test_gpu_plans.py)."""
    if min(m, n, k) < LINEAR_BIG_MIN:
        return dict(LINEAR_SMALL)
    return dict(next((c for c in LINEAR_CONFIGS if ring_bytes(c) <= gpu.smem_per_block_optin), LINEAR_FIT))


def linear_config(m: int, n: int, k: int, dt: str, gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """linear_kernel's tile: linear_default on this GPU (or `gpu`), then the benchmark's tuning of this run at this
    shape, then --set GEMM_BLOCK_M=... (the interpreter: LINEAR_INTERPRETER, then --set)."""
    check = _tile_validator("linear_kernel", "GEMM_")
    if INTERPRETER and gpu is None:
        return config.resolve("triton linear_kernel (interpreter tile)", knobs(LINEAR_INTERPRETER, "GEMM_"),
                              validate=check)
    t = TUNED.get(("linear", m, n, k, dt))
    return config.resolve("triton linear_kernel", knobs(linear_default(m, n, k, gpu or device.current()), "GEMM_"),
                          tuned=knobs(t, "GEMM_") if t else None, tuned_source=TUNED_HERE, validate=check)


def linear_meta(m: int, n: int, k: int, cfg: dict) -> tuple[int, dict]:
    """(programs, constexprs) of one linear_kernel launch with tile `cfg`: one program per output tile, and the
    compile-time flags that drop the masks where the shape is even and switch to 64-bit offsets past 2^31."""
    meta = {key: v for key, v in cfg.items() if key.isupper()}
    meta.update(EVEN_K=k % meta["BLOCK_K"] == 0, EVEN_MN=m % meta["BLOCK_M"] == 0 and n % meta["BLOCK_N"] == 0,
                INDEX_64=max(m * k, k * n, m * n) >= 2**31 - 1)
    return triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]), meta


def gemm_dtype(gpu: device.DeviceInfo) -> str:
    """The 16-bit type of part 3's benchmark on `gpu`: bf16, where the tensor cores take it (sm_80 and newer: Triton's
    bf16 tl.dot needs them); fp16 before that."""
    return "bfloat16" if gpu.cc >= 80 else "float16"


def _no_bf16_dot_here() -> str:
    """Why this machine's GPU cannot run a bf16 tl.dot ('' when it can, or without a GPU: the interpreter can)."""
    if device.has_gpu() and gemm_dtype(device.info()) != "bfloat16":
        return tr("bf16 tl.dot needs sm_80 or newer; this GPU is {arch} (its fp16 GEMM cases run)",
                  arch=device.info().arch)
    return ""
