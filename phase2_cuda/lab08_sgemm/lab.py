"""Lab 2.8 - The SGEMM ladder: from a naive kernel to >= 90% of cuBLAS, in fp32 on the CUDA cores.

You will learn
  * why a matrix product is compute-bound on paper yet runs at 1-2% of peak when written naively: every level of the
    memory hierarchy (L2, L1, shared memory, registers) has to be given reuse, on purpose, by tiling;
  * the ladder, one change per rung, each predicted before it is measured: coalescing (01 -> 02), shared-memory tiles
    (03), register blocking in 1-D and 2-D (04, 05), float4 loads and a transposed A tile (06), a bank-conflict-free
    shared layout (07), warp tiling (08), double buffering (09), a cp.async multi-stage pipeline (10), and tile
    parameters autotuned for the GPU at hand (11);
  * how to read a kernel's cost without a GPU: registers, shared memory, occupancy, LDG.128 / LDS.128 / LDGSTS / FFMA
    in the SASS, spills (there must be none);
  * how to make every rung correct on every shape (1x1x1, 1x4097x3, 127x129x131, tall/skinny, misaligned views):
    zero-filled edge tiles, 64-bit offsets, a scalar fallback wherever a 16-byte access is not allowed;
  * the same product in Triton (tl.dot with input_precision="ieee"), and the library peers (cuBLAS, torch);
  * how to test GPU kernels without a GPU: tests/test_phase2_lab08_sgemm_emulator.py compiles this lab's .cu files with
    g++ against a small shim and runs every CUDA thread as a coroutine, in the most hostile order between barriers, with
    cp.async copies landing as late (or as early) as the rules allow - a missing __syncthreads or a wrong wait depth
    fails there.

The two numbers, for M = N = K = 4096 (C = A @ B, fp32): FLOPs = 2 M N K = 137.4 GFLOP; bytes that must move =
4 (M K + K N + M N) = 201 MB. 683 FLOP/B, an order of magnitude and more above the fp32 ridge point of any current GPU
(tens of FLOP/B; `--plan` prints this GPU's): compute wins, and the job is to keep the FMA pipes busy; the floor is
2 M N K over the fp32 FMA peak. cuBLAS SGEMM reaches ~70-75% of that peak;
the target of this lab is >= 0.90x cuBLAS at 4096^3 and 8192^3 and >= 0.75x at 2048^3, measured in the same run. The
lesson, the predictions, what the measurements taught and this GPU's figures: README.md.

Why no TF32 or tensor cores here: TF32 rounds the inputs to a 10-bit mantissa (relative error ~1e-3 instead of
fp32's ~1e-6 for these sizes), so it computes a different function; and tensor cores (mma.sync, wgmma) are a
different programming model. Both peers are forced to true fp32 (CuPy's default compute type, torch with
allow_tf32 = False), and the lab checks it by their error against float64. Phase 4 takes up TF32, bf16 and the tensor
cores, where the same tiling ideas reappear one level up (warp-group MMA tiles instead of 8 x 8 thread tiles).

Run: python -m phase2_cuda.lab08_sgemm [--quick] [--tune] [--size N] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set STAGES=4] [--set BLOCK_K=16]
"""
from __future__ import annotations

import functools
import math
import os
import warnings
from dataclasses import asdict, dataclass

import numpy as np

from common import arrays, bench, check, config, cuda, device, lab, tuned
from common import plan as course_plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import sgemm_kernel

LAB = "phase2_lab08_sgemm"
TUNED = LAB + "_tuned"
HERE = os.path.dirname(os.path.abspath(__file__))
CU = os.path.join(HERE, "kernels.cu")
CU_ASYNC = os.path.join(HERE, "kernels_async.cu")
ASYNC_ARCHS = ("sm_80+",)   # cp.async (rungs 10-11): compute capability 8.0 and later
MAX_DIM = 2**31 - 2**16     # M, N, K are int32 in the kernels; tile edges (k0 + BK, bm + BM) must not wrap
VEC_A, VEC_B, VEC_C = 1, 2, 4


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C = A @ B in float64 (the variants compute it with alpha = 1, beta = 0)."""
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """A (M x K) and B (K x N), standard normal, with a few large entries so a misplaced element shows."""
    m, n, k = arrays.mnk(size)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    if a.size > 64:
        a.flat[rng.integers(0, a.size, 3)] = 25.0
    if b.size > 64:
        b.flat[rng.integers(0, b.size, 3)] = -25.0
    return arrays.from_numpy(a, dtype, where), arrays.from_numpy(b, dtype, where)


def tolerance(size, dtype: str) -> check.Tol:
    """fp32 dot products of length K: rounding error grows like sqrt(K), so the fp32 limits widen by sqrt(K / 512).
    TF32 (a 10-bit mantissa) lands near 1e-3 and still fails, which is the point of the peers' check."""
    _, _, k = arrays.mnk(size)
    base = check.tolerance(dtype)
    f = max(1.0, math.sqrt(k / 512))
    return check.Tol(base.rel_norm * f, base.elem * f)


# ---------------------------------------------------------------------------------------------------------------------
# The rungs: which kernel, which tile, which launch
# ---------------------------------------------------------------------------------------------------------------------
# CONFIG: the tile knobs of kernels.cu (rungs 01-09), in ONE place. Each entry reaches the kernels as -DNAME=VALUE on
# every compile (plan() puts them in every Launch: the wrappers, --plan, the compile report, the tests), and the launch
# shapes of rungs 01-03 and 08-09 are computed from the same values; kernels.cu holds no value of its own and a compile
# without one stops with an #error naming the knob. ladder_config() resolves it: CONFIG, then --set NAME=VALUE (no
# tuning record: --tune tunes rung 11 only); the run prints where each value came from.
#   NAIVE_BLOCK = 32     rungs 01-02: NAIVE_BLOCK x NAIVE_BLOCK threads per block (1024), one element of C each
#   TILE = 32            rung 03: TILE x TILE tiles of A and B in shared memory (8 KiB), TILE x TILE threads; the tile
#                        intensity from L2 grows with TILE (8 FLOP/B at 32)
#   WT_BM x WT_BN = 128 x 128   rungs 08-09: the block tile of C
#   WT_BK = 8            rungs 08-09: the k-depth of one shared-memory tile (a multiple of 4: float4 loads)
#   WT_WM x WT_WN = 64 x 32     rungs 08-09: the warp tile; with the fixed 8 x 8 thread tiles of kernels.cu a warp
#                        tile holds exactly 32 of them, and 128 x 128 blocks are 8 warps (256 threads) as 2 x 4
# Rung 10/11's tile (kernels_async.cu) is AsyncConfig below: its defaults are rung 10's configuration (ASYNC_DEFAULT)
# and rung 11's until --tune records a winner.
CONFIG = dict(NAIVE_BLOCK=32, TILE=32, WT_BM=128, WT_BN=128, WT_BK=8, WT_WM=64, WT_WN=32)
LADDER = "sgemm rungs 01-09 (kernels.cu CONFIG)"


def _ladder_problems(c: dict) -> list[str]:
    """Why a kernels.cu configuration cannot compile or launch (mirrors its static_asserts); [] when it can."""
    p = []
    if not 1 <= c["NAIVE_BLOCK"] <= 32:
        p.append("NAIVE_BLOCK from 1 to 32 (NAIVE_BLOCK^2 threads per block)")
    if not 1 <= c["TILE"] <= 32:
        p.append("TILE from 1 to 32 (TILE^2 threads per block)")
    bm, bn, bk, wm, wn = (c[k] for k in ("WT_BM", "WT_BN", "WT_BK", "WT_WM", "WT_WN"))
    if min(bm, bn, bk, wm, wn) <= 0 or bm % wm or bn % wn:
        p.append("WT_WM x WT_WN warp tiles must divide the WT_BM x WT_BN block tile")
        return p
    if wm % 8 or wn % 8 or (wm // 8) * (wn // 8) != 32:
        p.append("a WT_WM x WT_WN warp tile must hold exactly 32 thread tiles of 8 x 8")
    nt = (bm // wm) * (bn // wn) * 32
    if nt > 1024:
        p.append(f"{nt} threads per block (WT_BM / WT_WM x WT_BN / WT_WN warps)")
    if bk % 4 or bn % 4 or nt % max(1, bk // 4) or nt % max(1, bn // 4):
        p.append("WT_BK and WT_BN multiples of 4 whose float4 columns divide the threads")
    if (bm * bk) % (4 * nt) or (bk * bn) % (4 * nt):
        p.append("the A and B tiles must split evenly into float4s over the threads")
    if 2 * bk * (bm + 4 + bn) * 4 > 48 * 1024:
        p.append("rung 09's two shared stages exceed 48 KiB of static shared memory")
    return p


def _check_ladder(v: dict) -> dict:
    bad = _ladder_problems(v)
    if bad:
        raise ValueError(f"{LADDER}: {config.fmt(v)}: {'; '.join(bad)}")
    return v


def ladder_config() -> config.Resolved:
    """The tile knobs of kernels.cu (rungs 01-09) and where each came from: CONFIG, then --set NAME=VALUE."""
    return config.resolve(LADDER, CONFIG, validate=_check_ladder)


def compile_defines(path: str = CU) -> dict:
    """The -D values a compile of this lab's .cu file `path` needs (its .cu files hold no defaults): CONFIG (resolved)
    for kernels.cu, ASYNC_DEFAULT's for kernels_async.cu. For tools and tests that compile outside the wrappers."""
    path = os.path.abspath(path)
    if path == CU:
        return dict(ladder_config().values)
    if path == CU_ASYNC:
        return ASYNC_DEFAULT.defines
    raise ValueError(f"{path}: not a CUDA C file of this lab ({CU}, {CU_ASYNC})")


@dataclass(frozen=True)
class AsyncConfig:
    """Compile-time tile parameters of sgemm_10_cp_async (the -D macros of kernels_async.cu; the file has no defaults:
    these are the values, rung 10's and rung 11's until --tune records a winner)."""
    BM: int = 128
    BN: int = 128
    BK: int = 16
    WM: int = 64
    WN: int = 32
    TM: int = 8
    TN: int = 8
    STAGES: int = 3
    MINB: int = 2
    DB: int = 0                # 1: fragments double-buffered in registers (warp_tile_fma_db)

    @property
    def threads(self) -> int:
        return (self.BM // self.WM) * (self.BN // self.WN) * 32

    @property
    def smem_bytes(self) -> int:
        return self.STAGES * self.BK * (self.BM + 4 + self.BN) * 4

    @property
    def defines(self) -> dict:
        return asdict(self)

    def short(self) -> str:
        return (f"{self.BM}x{self.BN}x{self.BK} warp {self.WM}x{self.WN} thread {self.TM}x{self.TN} "
                f"{self.STAGES} stages minb {self.MINB}" + (" db" if self.DB else ""))

    def problems(self, smem_limit: int | None = None) -> list[str]:
        """Why this configuration cannot compile or launch (mirrors the kernel's static_asserts); [] when it can."""
        p = []
        if self.BM % self.WM or self.BN % self.WN:
            p.append(tr("warp tiles must divide the block tile"))
        if self.TM % 4 or self.TN % 4 or self.TM <= 0 or self.TN <= 0:
            p.append(tr("thread tiles are multiples of 4"))
        elif self.WM % self.TM or self.WN % self.TN or (self.WM // self.TM) * (self.WN // self.TN) != 32:
            p.append(tr("a warp tile must hold exactly 32 thread tiles"))
        nt = self.threads
        if nt > 1024 or nt < 32:
            p.append(tr("{n} threads per block", n=nt))
        if self.BK % 8 or (nt // 32) % max(1, self.BK // 8):
            p.append(tr("BK must be a multiple of 8 dividing the warps' k columns"))
        if (self.BM * self.BK) % nt or self.BM * self.BK < nt:
            p.append(tr("A stage must split evenly over the threads"))
        if self.BN % 4 or nt % max(1, self.BN // 4) or (self.BK * self.BN // 4) % nt or self.BK * self.BN // 4 < nt:
            p.append(tr("B stage must split evenly over the threads in float4s"))
        if self.STAGES < 2:
            p.append(tr("at least two stages"))
        if self.DB not in (0, 1):
            p.append(tr("DB is 0 or 1"))
        if self.MINB * nt > 2048 or self.MINB < 1:
            p.append(tr("MINB x threads exceeds 2048 threads per SM"))
        if smem_limit is not None and self.smem_bytes > smem_limit:
            p.append(tr("{b} B of shared memory > {limit} B per block", b=self.smem_bytes, limit=smem_limit))
        return p


def _naive_shape(c: dict) -> tuple[tuple[int, int, int], tuple[int, int]]:
    return (c["NAIVE_BLOCK"], c["NAIVE_BLOCK"], 1), (c["NAIVE_BLOCK"], c["NAIVE_BLOCK"])


def _tile_shape(c: dict) -> tuple[tuple[int, int, int], tuple[int, int]]:
    return (c["TILE"], c["TILE"], 1), (c["TILE"], c["TILE"])


def _warp_shape(c: dict) -> tuple[tuple[int, int, int], tuple[int, int]]:
    return ((c["WT_BM"] // c["WT_WM"]) * (c["WT_BN"] // c["WT_WN"]) * 32, 1, 1), (c["WT_BM"], c["WT_BN"])


@dataclass(frozen=True)
class Rung:
    number: int
    title: str
    kernel: str
    path: str
    threads: object                # (x, y, z) per block, or a function of the CONFIG values giving (threads, tile)
    tile: tuple[int, int] | None   # (rows of C, columns of C) per block (None: from the function above)
    x_walks_m: bool = False        # rung 01: blockIdx.x over rows (the uncoalesced mapping)
    max_bench: int = 8192          # largest square size the benchmark runs it at (slow rungs stay small)
    tile_flop_per_byte: float = 0.0
    fma_per_smem_word: float = 0.0

    @property
    def name(self) -> str:
        return f"cuda {self.number:02d} {self.title}"

    def shape(self, cfg: dict | None = None) -> tuple[tuple[int, int, int], tuple[int, int]]:
        """(threads per block, tile of C per block) with the kernels.cu configuration `cfg` (default: resolved)."""
        if callable(self.threads):
            return self.threads(cfg or ladder_config().values)
        return self.threads, self.tile


def _ai(bm: int, bn: int) -> float:
    """FLOP per byte a bm x bn block tile gets from L2: 2 bm bn BK FLOP per (bm + bn) BK 4-byte words."""
    return bm * bn / (2.0 * (bm + bn))


RUNGS: dict[int, Rung] = {r.number: r for r in [
    Rung(1, "naive", "sgemm_01_naive", CU, _naive_shape, None, x_walks_m=True, max_bench=2048,
         tile_flop_per_byte=0.25),
    Rung(2, "coalesced", "sgemm_02_coalesced", CU, _naive_shape, None, max_bench=2048, tile_flop_per_byte=0.25),
    Rung(3, "shared-memory tiling", "sgemm_03_smem_tiling", CU, _tile_shape, None, max_bench=2048,
         tile_flop_per_byte=_ai(CONFIG["TILE"], CONFIG["TILE"]), fma_per_smem_word=0.5),
    Rung(4, "1-D register blocking", "sgemm_04_1d_register_blocking", CU, (512, 1, 1), (64, 64), max_bench=4097,
         tile_flop_per_byte=_ai(64, 64), fma_per_smem_word=8 / 9),
    Rung(5, "2-D register blocking", "sgemm_05_2d_register_blocking", CU, (256, 1, 1), (128, 128), max_bench=4097,
         tile_flop_per_byte=_ai(128, 128), fma_per_smem_word=4.0),
    Rung(6, "float4 + transposed A", "sgemm_06_float4_transposed_a", CU, (256, 1, 1), (128, 128),
         tile_flop_per_byte=_ai(128, 128), fma_per_smem_word=4.0),
    Rung(7, "conflict-free shared", "sgemm_07_conflict_free_smem", CU, (256, 1, 1), (128, 128),
         tile_flop_per_byte=_ai(128, 128), fma_per_smem_word=4.0),
    Rung(8, "warp tiling", "sgemm_08_warp_tiling", CU, _warp_shape, None,
         tile_flop_per_byte=_ai(CONFIG["WT_BM"], CONFIG["WT_BN"]), fma_per_smem_word=4.0),
    Rung(9, "double buffering", "sgemm_09_double_buffering", CU, _warp_shape, None,
         tile_flop_per_byte=_ai(CONFIG["WT_BM"], CONFIG["WT_BN"]), fma_per_smem_word=4.0),
]}
# Rung 10's tile configuration, and rung 11's default until --tune has recorded a winner for the GPU at hand. Its
# 49,920 bytes of shared memory (3 stages) fit every sm_80+ GPU's opt-in limit, the smallest of which is 99 KiB.
ASYNC_DEFAULT = AsyncConfig()
RUNG11 = "sgemm_10_cp_async, rung 11"    # the kernel family --set BM=.. STAGES=.. configures (rung 10 stays fixed)
# The autotuner's declared search space (rung 11) is autotune.TUNE_SPACE; its timings are in the tuning record.


def _check_winner(w: dict) -> AsyncConfig:
    """A tuning record's winner as an AsyncConfig the kernel accepts (common.tuned falls back on the errors)."""
    cfg = AsyncConfig(**{k: int(v) for k, v in w.items()})
    if cfg.problems():
        raise ValueError(f"the recorded winner is invalid ({'; '.join(cfg.problems())})")
    return cfg


def rung11_config(gpu: device.DeviceInfo | None = None, slug: str | None = None) -> config.Resolved:
    """Rung 11's tile configuration on `gpu` (default: the GPU at hand), and where each value came from: the lab's
    default (ASYNC_DEFAULT), then the winner --tune recorded for that GPU (slug: another results folder), then --set
    BM=.. BN=.. BK=.. WM=.. WN=.. TM=.. TN=.. STAGES=.. MINB=.. DB=..; checked against the kernel's static_asserts and
    the GPU's shared memory per block."""
    winner, source = tuned.record(TUNED, _check_winner, slug, gpu=gpu)
    limits = gpu or (device.info() if device.has_gpu() else None)
    limit = limits.smem_per_block_optin if limits is not None else None

    def check_tile(v: dict) -> dict:
        bad = AsyncConfig(**v).problems(limit)
        if bad:
            raise ValueError(tr("{rung}: tile configuration {cfg}: {bad}", rung=RUNG11, cfg=config.fmt(v),
                                bad="; ".join(bad)))
        return v

    return config.resolve(RUNG11, ASYNC_DEFAULT.defines, tuned=winner.defines if winner else None,
                          tuned_source=source, validate=check_tile)


def tuned_config(slug: str | None = None, gpu: device.DeviceInfo | None = None) -> tuple[AsyncConfig, str]:
    """(configuration, where it came from) of rung 11 on `gpu` (default: the GPU at hand): rung11_config() as an
    AsyncConfig - the recorded winner for that GPU, else the lab's default, with any --set on top."""
    r = rung11_config(gpu, slug)
    return AsyncConfig(**r.values), r.source()


@dataclass(frozen=True)
class Launch:
    path: str
    kernel: str
    defines: tuple              # sorted (name, value) pairs, hashable
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    smem: int                   # dynamic shared memory, bytes


def _grid(tile_m: int, tile_n: int, m: int, n: int, x_walks_m: bool, what: str) -> tuple[int, int, int]:
    gm, gn = -(-m // tile_m), -(-n // tile_n)
    gx, gy = (gm, gn) if x_walks_m else (gn, gm)
    if gy > 65535:
        dim = "N" if x_walks_m else "M"
        raise ValueError(f"{what}: {dim} = {n if x_walks_m else m} needs gridDim.y = {gy} > 65535 blocks of "
                         f"{tile_n if x_walks_m else tile_m}; split the product into row panels")
    if gx > 2**31 - 1:
        raise ValueError(f"{what}: gridDim.x = {gx} exceeds 2^31 - 1")
    return (max(gx, 1), max(gy, 1), 1)


def plan(rung, m: int, n: int, k: int) -> Launch:
    """The launch of one rung (1-9), or of the cp.async kernel with an AsyncConfig (rungs 10-11), for M x N x K."""
    if isinstance(rung, AsyncConfig):
        cfg = rung
        bad = cfg.problems()
        if bad:
            raise ValueError(f"tile configuration {cfg.short()}: {'; '.join(bad)}")
        return Launch(CU_ASYNC, "sgemm_10_cp_async", tuple(sorted(cfg.defines.items())),
                      _grid(cfg.BM, cfg.BN, m, n, False, "sgemm_10_cp_async"), (cfg.threads, 1, 1), cfg.smem_bytes)
    r = RUNGS[rung]
    cfg = ladder_config().values
    threads, tile = r.shape(cfg)
    return Launch(r.path, r.kernel, tuple(sorted(cfg.items())), _grid(tile[0], tile[1], m, n, r.x_walks_m, r.kernel),
                  threads, 0)


def vec_flags(a, b, c, n: int, k: int) -> int:
    """Which operands allow 16-byte accesses: rows a multiple of 4 floats long and a 16-byte aligned start."""
    f = 0
    if k % 4 == 0 and arrays.aligned(a, 16):
        f |= VEC_A
    if n % 4 == 0 and arrays.aligned(b, 16):
        f |= VEC_B
    if n % 4 == 0 and arrays.aligned(c, 16):
        f |= VEC_C
    return f


def prepare(a, b, out, alpha, beta, *, device_arrays: bool = True, libs=("cupy",)):
    """Validate before any launch; returns (out, M, N, K, alpha, beta)."""
    arrays.check_array("a", a, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    arrays.check_array("b", b, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    arrays.check_same("a, b", a, b, shape=False)
    m, n, k = arrays.matmul_dims(a, b, max_dim=MAX_DIM)
    try:
        alpha, beta = float(alpha), float(beta)
    except (TypeError, ValueError):
        raise TypeError(f"alpha, beta: expected real numbers, got {alpha!r}, {beta!r}") from None
    if beta != 0.0 and out is None:
        raise ValueError("beta != 0 reads C: pass C as out= (it is updated in place)")
    out = arrays.check_out(out, (m, n), "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    if arrays.overlap(out, a) or arrays.overlap(out, b):
        raise ValueError("out: must not share memory with a or b (the kernels read A and B while writing C)")
    return out, m, n, k, alpha, beta


@functools.lru_cache(maxsize=None)
def _kernel(path: str, name: str, defines: tuple, smem: int):
    k = cuda.get_kernel(path, name, defines=dict(defines))
    if smem > 48 * 1024:
        k.max_dynamic_shared_size_bytes = smem     # opt in above the 48 KiB default (once per compiled kernel)
    return k


def run(rung, a, b, out=None, *, alpha: float = 1.0, beta: float = 0.0):
    """C = alpha * a @ b + beta * C with one rung (1-9) or an AsyncConfig. CuPy float32 arrays; C is `out`."""
    out, m, n, k, alpha, beta = prepare(a, b, out, alpha, beta)
    if m == 0 or n == 0:
        return out
    if isinstance(rung, AsyncConfig) or rung >= 10:
        ok, why = _async_available(device.info())
        if not ok:
            raise RuntimeError(why)
    p = plan(rung, m, n, k)
    kern = _kernel(p.path, p.kernel, p.defines, p.smem)
    kern(p.grid, p.block, (np.int32(m), np.int32(n), np.int32(k), np.float32(alpha), a, b, np.float32(beta), out,
                           np.int32(vec_flags(a, b, out, n, k))), shared_mem=p.smem)
    return out


def _async_available(gpu: device.DeviceInfo | None = None) -> tuple[bool, str]:
    arch = (gpu or device.info()).arch
    if not lab.arch_matches(arch, ASYNC_ARCHS):
        return False, tr("sgemm_10_cp_async needs cp.async (sm_80 or later); this GPU is {arch}", arch=arch)
    return True, ""


def _rung_fn(number: int):
    def fn(a, b, out=None, *, alpha: float = 1.0, beta: float = 0.0):
        return run(number, a, b, out, alpha=alpha, beta=beta)

    fn.__name__ = fn.__qualname__ = RUNGS[number].kernel
    fn.__doc__ = f"Rung {number:02d} ({RUNGS[number].title}): C = alpha * a @ b + beta * C on CuPy float32 arrays."
    return fn


sgemm_01 = _rung_fn(1)
sgemm_02 = _rung_fn(2)
sgemm_03 = _rung_fn(3)
sgemm_04 = _rung_fn(4)
sgemm_05 = _rung_fn(5)
sgemm_06 = _rung_fn(6)
sgemm_07 = _rung_fn(7)
sgemm_08 = _rung_fn(8)
sgemm_09 = _rung_fn(9)


def sgemm_10(a, b, out=None, *, alpha: float = 1.0, beta: float = 0.0):
    """Rung 10: the cp.async pipeline with the lab's default tile configuration (ASYNC_DEFAULT)."""
    return run(ASYNC_DEFAULT, a, b, out, alpha=alpha, beta=beta)


def sgemm_11(a, b, out=None, *, alpha: float = 1.0, beta: float = 0.0):
    """Rung 11: the cp.async kernel with the tile configuration --tune recorded for this GPU (else the default; --set
    overrides either)."""
    return run(tuned_config()[0], a, b, out, alpha=alpha, beta=beta)


# ---------------------------------------------------------------------------------------------------------------------
# Triton (triton_kernels.py): the same product, tiles chosen by the compiler, fp32 arithmetic forced with
# input_precision="ieee"
# ---------------------------------------------------------------------------------------------------------------------
# The default depends on the GPU's shared memory, decided here and nowhere else: 128 x 128 x 32 tiles in 3 stages take
# 96 KiB, which only GPUs with more than 99 KiB a block can hold (an RTX card or an sm_75 GPU cannot), so those get
# 128 x 128 x 16 tiles in 2 stages (32 KiB). --set BLOCK_K=.. num_stages=.. overrides either.
TRITON_WIDE = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32, GROUP_M=8, num_warps=8, num_stages=3)
TRITON_NARROW = dict(TRITON_WIDE, BLOCK_K=16, num_stages=2)
WIDE_SMEM = 100 * 1024      # bytes per block the wide tiles need (96 KiB, and room for the epilogue)


def triton_config(gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The Triton kernel's tiles, warps and stages on `gpu` (default: the GPU at hand; the interpreter: the wide ones),
    and where they came from (the default for this GPU's shared memory, or --set)."""
    if gpu is None and not INTERPRETER:
        gpu = device.info()
    wide = gpu is None or gpu.smem_per_block_optin >= WIDE_SMEM
    return config.resolve("triton sgemm_kernel", TRITON_WIDE if wide else TRITON_NARROW, validate=_check_triton)


def _check_triton(v: dict) -> dict:
    bad = [f"{k}={v[k]}" for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K") if v[k] < 16 or v[k] & (v[k] - 1)]
    bad += [f"{k}={v[k]}" for k in ("GROUP_M", "num_warps") if v[k] < 1 or v[k] & (v[k] - 1)]
    if v["num_stages"] < 1:
        bad.append(f"num_stages={v['num_stages']}")
    if bad:
        raise ValueError(f"triton sgemm_kernel: {', '.join(bad)}: tiles are powers of two from 16, GROUP_M and "
                         "num_warps powers of two, num_stages at least 1")
    return v


def triton_grid(m: int, n: int, meta: dict) -> int:
    """Programs of the Triton launch: one per BLOCK_M x BLOCK_N tile of C."""
    return triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"])


def sgemm_triton(a, b, out=None, *, alpha: float = 1.0, beta: float = 0.0):
    """Triton SGEMM: CuPy/torch CUDA arrays on a GPU, NumPy / CPU torch arrays in the interpreter."""
    out, m, n, k, alpha, beta = prepare(a, b, out, alpha, beta, device_arrays=not INTERPRETER,
                                        libs=("cupy", "torch", "numpy"))
    if m == 0 or n == 0:
        return out
    meta = triton_config().values
    launch(sgemm_kernel, (triton_grid(m, n, meta),), a, b, out, m, n, k, k, n, n, alpha, beta,
           BETA_ZERO=beta == 0.0, **meta)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _cupy_compute_type() -> str:
    from cupy._core import _routines_linalg as rl

    import cupy

    return rl.compute_type_to_str(rl.get_compute_type(cupy.float32))


def peer_cublas(a, b, out=None):
    """cuBLAS SGEMM through cupy.matmul. CuPy's default float32 compute type is plain fp32 (TF32 only with
    CUPY_TF32=1 in the environment); the lab prints the compute type and checks the error against float64."""
    import cupy

    out = arrays.check_out(out, (a.shape[0], b.shape[1]), "float32", a)
    return cupy.matmul(a, b, out=out)


def peer_torch(a, b, out=None):
    """torch.matmul with torch.backends.cuda.matmul.allow_tf32 = False (cuBLAS underneath), on CuPy memory."""
    import torch

    out = arrays.check_out(out, (a.shape[0], b.shape[1]), "float32", a)
    with bench.torch_tf32(False), warnings.catch_warnings():
        warnings.simplefilter("ignore")           # newer torch suggests its fp32_precision API; both mean "no TF32"
        torch.matmul(torch.from_dlpack(a), torch.from_dlpack(b), out=torch.from_dlpack(out))
    return out


VARIANTS = [lab.Variant(RUNGS[i].name, _rung_fn(i), "cuda") for i in range(1, 10)] + [
    lab.Variant("cuda 10 cp.async pipeline", sgemm_10, "cuda", archs=ASYNC_ARCHS,
                note="sm_80+: cp.async; default tile configuration"),
    lab.Variant("cuda 11 autotuned", sgemm_11, "cuda", archs=ASYNC_ARCHS,
                note="rung 10's kernel with the tile configuration --tune recorded for this GPU"),
    lab.Variant("triton (ieee fp32)", sgemm_triton, "triton"),
]
PEERS = [
    lab.Variant("cuBLAS (cupy)", peer_cublas, "peer"),
    lab.Variant("torch.matmul", peer_torch, "peer"),
]
BEST = "cuda 11 autotuned"
# awkward shapes (M, N, K): 1s, primes, one off a tile, tall/skinny, K % 4 != 0 (scalar path), K = 4 (vector path
# with every M/N edge), a long K, and one big-enough product to exercise interior tiles
CHECK_CASES = [((m, n, k), "float32") for m, n, k in (
    (1, 1, 1), (1, 4097, 3), (127, 129, 131), (128, 128, 128), (255, 257, 33), (4097, 2, 5), (3, 5000, 17),
    (64, 64, 1000), (513, 385, 259), (301, 200, 4), (2001, 33, 64), (1000, 1024, 1024))]
CPU_CHECK_CASES = [((m, n, k), "float32") for m, n, k in ((1, 1, 1), (5, 7, 3), (33, 65, 17), (130, 3, 70))]
QUICK_CASES = 3                # --quick checks the first three (on a GPU: 1x1x1, 1x4097x3, 127x129x131)


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's headline case on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
BENCH_N = 4096     # the headline size: the ladder plot, a target, the lesson's two numbers


def bench_bytes(n: int) -> int:
    """Bytes the benchmark holds at once at n^3: A, B, C and cuBLAS's C (fp32)."""
    return 16 * n * n


TRITON_SIGNATURE = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                    "lda": "i32", "ldb": "i32", "ldc": "i32", "alpha": "fp32", "beta": "fp32",
                    "BETA_ZERO": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
                    "GROUP_M": "constexpr"}


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[course_plan.Launch]:
    """Every kernel launch of the benchmark at its headline size (size: another square size) on `gpu`, from plan()
    and the configurations the wrappers resolve. The slow rungs appear at their largest benchmark size
    (Rung.max_bench)."""
    n, _ = course_plan.fit(size or BENCH_N, bench_bytes, gpu)
    out = []
    ladder = ladder_config()
    for num, r in RUNGS.items():
        m = min(n, r.max_bench)
        p = plan(num, m, m, m)
        out.append(course_plan.Launch(r.name, p.kernel, "cuda", p.grid, threads=math.prod(p.block), source=p.path,
                                      defines=dict(p.defines), case=f"{m}^3", config_source=ladder.source()))
    r11 = rung11_config(gpu)
    for name, cfg, source in (("cuda 10 cp.async pipeline", ASYNC_DEFAULT, ""),
                              ("cuda 11 autotuned", AsyncConfig(**r11.values), r11.source())):
        p = plan(cfg, n, n, n)
        out.append(course_plan.Launch(name, p.kernel, "cuda", p.grid, threads=cfg.threads, source=p.path,
                                      defines=dict(p.defines), dyn_smem=p.smem, case=f"{n}^3", config_source=source))
    tc = triton_config(gpu)
    meta = tc.values
    out.append(course_plan.Launch("triton (ieee fp32)", "sgemm_kernel", "triton", triton_grid(n, n, meta),
                                  fn=sgemm_kernel, signature=dict(TRITON_SIGNATURE),
                                  defines={"BETA_ZERO": True, **{k: meta[k] for k in meta if k.isupper()}},
                                  num_warps=meta["num_warps"], num_stages=meta["num_stages"], case=f"{n}^3",
                                  config_source=tc.source()))
    return out
