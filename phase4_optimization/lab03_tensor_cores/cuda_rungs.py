"""Lab 4.3, the CUDA C rungs 01 (tc_01_wmma) and 02 (tc_02_mma_sync) of kernels.cu: their grids and -D defines
(defines: mma_configs.CONFIG, the config asked for, the build's dtypes - every compile of kernels.cu takes them),
compiling and launching them (gemm_wmma, gemm_mma), the launch a plan lists for rung 02 (mma_launch), and what the
compiler made of both (compile_rows: lab 4.4 builds its tile table on it)."""
from __future__ import annotations

import functools
import os

import numpy as np

from common import arrays, cuda, device, lab, plan

from .mma_configs import CONFIG, DEFAULT_CONFIG, config_smem, config_threads, mma_config, short, validate_config
from .operands import prepare, vec_flags

HERE = os.path.dirname(os.path.abspath(__file__))
CU = os.path.join(HERE, "kernels.cu")
TC_ARCHS = ("sm_80+",)          # bf16 mma.sync, cp.async, ldmatrix: compute capability 8.0 and later
WMMA_TILE = (CONFIG["WMMA_BM"], CONFIG["WMMA_BN"])     # tc_01's block tile (CONFIG; fixed by its warp layout)
BUILD_DEFINES = ("IN_FP16", "OUT_F32")                 # chosen per build by defines()'s dtype arguments
DTYPE_NAMES = ("bfloat16", "float16")


def _available() -> tuple[bool, str]:
    if not device.has_gpu():
        return False, "needs a GPU"
    arch = device.info().arch
    if not lab.arch_matches(arch, TC_ARCHS):
        return False, f"needs bf16 mma.sync and cp.async (sm_80 or later); this GPU is {arch}"
    return True, ""


def wmma_grid(m: int, n: int) -> tuple[int, int, int]:
    """tc_01_wmma's grid: one block of 128 threads per 64 x 64 tile of C, (column tiles, row tiles)."""
    bm, bn = CONFIG["WMMA_BM"], CONFIG["WMMA_BN"]
    grid_n, grid_m = -(-n // bn), -(-m // bm)
    if grid_m > 65535:
        raise ValueError(f"a: M = {m} needs {grid_m} > 65535 row blocks of {bm}")
    return grid_n, grid_m, 1


def mma_grid(m: int, n: int, cfg: dict) -> tuple[int, int, int]:
    """tc_02_mma_sync's grid: one block per BM x BN tile of C, in one dimension (the kernel orders them in groups)."""
    tiles = -(-m // cfg["BM"]) * -(-n // cfg["BN"])
    if tiles > 2**31 - 1:
        raise ValueError(f"a, b: {tiles} tiles exceed the grid limit")
    return tiles, 1, 1


def defines(dtype: str = "bfloat16", out_dt: str | None = None, cfg: dict | None = None) -> dict:
    """kernels.cu's -D values for one build: the whole mma_configs.CONFIG, with rung 02's tile keys replaced by `cfg`'s
    (a config as validate_config takes it: keys it leaves out keep CONFIG's values), and the build's IN_FP16
    (dtype: bfloat16 or float16) and OUT_F32 (out_dt float32; default: the inputs' dtype). Every path that compiles
    kernels.cu passes this whole set; the file has no value of its own."""
    if dtype not in DTYPE_NAMES:
        raise ValueError(f"dtype: expected one of {DTYPE_NAMES}, got {dtype!r}")
    unknown = sorted(set(cfg or {}) - set(CONFIG))
    if unknown:
        raise ValueError(f"config: unknown keys {unknown} (kernels.cu's knobs: {', '.join(CONFIG)})")
    d = {k: int(v) for k, v in CONFIG.items()}
    d.update({k: int(v) for k, v in (cfg or {}).items()})
    d.update({"IN_FP16": int(dtype == "float16"), "OUT_F32": int((out_dt or dtype) == "float32")})
    return d


def _defines(dtype: str, out_dt: str, cfg: dict | None) -> dict:
    """defines() under its older name (bench.py, bench_timing.py, lab 4.4 reach it as lab._defines)."""
    return defines(dtype, out_dt, cfg)


@functools.lru_cache(maxsize=None)
def _kernel(name: str, defines: tuple, smem: int):
    k = cuda.get_kernel(CU, name, defines=dict(defines))
    if smem > 48 * 1024:
        k.max_dynamic_shared_size_bytes = smem      # opt in above the 48 KiB default, once per compiled kernel
    return k


def _run(name: str, a, b, out, out_dtype_, cfg):
    out, m, n, k, lda, ldb, ldc, dt = prepare(a, b, out, out_dtype_)     # validate first: host arrays -> TypeError
    ok, why = _available()
    if not ok:
        raise RuntimeError(f"{name}: {why}")
    if arrays.gemm_is_trivial(out, m, n, k):
        return out
    od = arrays.dtype_name(out)
    if name == "tc_01_wmma":
        grid, block, smem, defs = wmma_grid(m, n), (128, 1, 1), 0, _defines(dt, od, None)
    else:
        gpu = device.info()
        cfg = validate_config(cfg, gpu=gpu) if cfg is not None else mma_config(gpu).values
        grid, block, smem, defs = mma_grid(m, n, cfg), (config_threads(cfg), 1, 1), config_smem(cfg), \
            _defines(dt, od, cfg)
    kern = _kernel(name, tuple(sorted(defs.items())), smem)
    # pointers go as 64-bit integers: bf16 arrays are torch tensors, which CuPy's launcher does not take
    args = (np.int32(m), np.int32(n), np.int32(k), np.uint64(arrays.ptr(a)), np.int32(lda), np.uint64(arrays.ptr(b)),
            np.int32(ldb), np.uint64(arrays.ptr(out)), np.int32(ldc), np.int32(vec_flags(a, b, out, lda, ldb, ldc)))
    kern(grid, block, args, shared_mem=smem)
    return out


def gemm_wmma(a, b, out=None, *, out_dtype: str | None = None):
    """Rung 01: C = a @ b with nvcuda::wmma. a, b: CuPy fp16 or torch CUDA bf16/fp16 matrices with contiguous rows
    (any row stride, any alignment); out: same dtype as the inputs, or float32 (out_dtype='float32')."""
    return _run("tc_01_wmma", a, b, out, out_dtype, None)


def gemm_mma(a, b, out=None, *, config: dict | None = None, out_dtype: str | None = None):
    """Rung 02: C = a @ b with mma.sync + ldmatrix + swizzle + cp.async. config: a dict of BM, BN, BK, WM, WN, STAGES
    (validated; default: mma_config - the --tune record for this GPU, else DEFAULT_CONFIG, then --set). Arrays as for
    gemm_wmma."""
    if config is not None:
        validate_config(config)        # before anything else, GPU or not
    return _run("tc_02_mma_sync", a, b, out, out_dtype, config)


def mma_launch(variant: str, n: int, cfg: dict, dtype: str, case: str, source: str = "") -> plan.Launch:
    """The launch gemm_mma makes with `cfg` on an n x n x n problem (grid, block, dynamic shared memory, -D values
    from the functions _run uses; lab 4.4's plan lists its tiles with it)."""
    return plan.Launch(variant, "tc_02_mma_sync", "cuda", grid=mma_grid(n, n, cfg), threads=config_threads(cfg),
                       source=CU, dyn_smem=config_smem(cfg), defines=_defines(dtype, dtype, cfg), case=case,
                       config_source=source)


def compile_rows(arch: str, configs=None) -> list[dict]:
    """Registers, shared memory, spills and the tensor-core instruction census of both rungs, per config."""
    rows = []
    for i, cfg in enumerate(configs if configs is not None else [DEFAULT_CONFIG]):
        rep = cuda.compile_report(CU, arch, defines=defines("bfloat16", "bfloat16", cfg))
        names = ["tc_01_wmma", "tc_02_mma_sync"] if i == 0 else ["tc_02_mma_sync"]
        for name in names:
            k = rep.kernels[name]
            c = k.sass_counts
            ops = [cuda._opcode(ln) for ln in k.sass if not ln.startswith("@!PT")]   # drop never-executed slots
            rows.append({"kernel": name, "arch": rep.arch, "config": "64x64x32 (fixed)" if name == "tc_01_wmma"
                         else short(cfg), "regs": k.registers,
                         "smem": k.smem_bytes if name == "tc_01_wmma" else config_smem(cfg),
                         "spills": k.spills, "HMMA": c.get("HMMA", 0), "LDSM": c.get("LDSM", 0),
                         "LDGSTS": c.get("LDGSTS", 0), "LDS": sum(o.split(".")[0] == "LDS" for o in ops),
                         "LD generic": sum(o.split(".")[0] == "LD" for o in ops), "STS": cuda._total(c, "STS"),
                         "BAR": c.get("BAR", 0)})
    return rows
