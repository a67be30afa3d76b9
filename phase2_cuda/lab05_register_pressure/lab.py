"""Lab 2.5 - Register pressure: work per thread, registers, occupancy, spills, and what the caps change.

You will learn
  * where registers go: a thread that keeps WORK values live needs about WORK + 16 registers (the compile report shows
    the exact count for your compiler and architecture), and the compiler's report (registers, stack frame, spill
    stores/loads) says so before anything runs;
  * how registers set occupancy: 65,536 registers per SM, allocated per warp in chunks of 256, so 32 registers per
    thread allow 2048 resident threads and 255 allow 256; the lab computes it with the allocation rules
    (common.occupancy), asks the driver, and measures the warps actually resident with a probe in the kernel;
  * that occupancy is a means, not the goal: more work per thread is also more loads in flight, and a kernel at 25%
    occupancy can stream nearly as fast as the best one at 100%, and faster than another at 100%;
  * what happens at the 255-register ceiling (spills to local memory: STL/LDL in the SASS), and what
    __launch_bounds__(threads, min_blocks) and -maxrregcount do: cap the registers, raise occupancy, and spill if the
    cap is below what the code needs; a __launch_bounds__ kernel ignores -maxrregcount;
  * the silent cousin of a spill: a register array indexed at run time lives in local memory (stack frame, STL/LDL,
    yet 0 bytes of "spills").

The two numbers, for normalizing the columns of a WORK x cols fp32 matrix (main case: 2^26 elements, so cols =
2^26 / WORK): bytes = 8 per element = 537 MB (4 read, 4 written), FLOPs = 3 per element (an FMA and a multiply) = 0.2
GFLOP, plus one rsqrt per column: 3/8 FLOP per byte, memory wins; the floor is the same whatever WORK is, if enough
loads are in flight. Spills and local memory add bytes that this count does not include. The lesson, the
predictions, what the measurements taught and this GPU's measured figures: README.md.

Run: python -m phase2_cuda.lab05_register_pressure [--quick] [--size N] [--no-bench] [--replot]
     [--plan [--gpu NAME]] [--set BLOCK_C=32]
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from common import arrays, config, cuda, device, lab, plan
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import colnorm_kernel

LAB = "phase2_lab05_register_pressure"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
THREADS = 256                    # kernels.cu's default (and what __launch_bounds__ promises)
DEFAULT_WORK, FIXED_WORK = 16, 32
PROBE_SLOTS = 1024
SWEEP_WORK = (1, 4, 16, 32, 64, 128, 160, 256)
QUICK_WORK = (4, 32, 160)
MAIN_ELEMENTS = 2**26


# ---------------------------------------------------------------------------------------------------------------------
# Settings: one compiled kernel each
# ---------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Setting:
    name: str
    kernel: str
    defines: dict = field(default_factory=dict)
    options: tuple[str, ...] = ()

    @property
    def capacity(self) -> int:
        """Rows a thread can hold: WORK for colnorm_01, FIXED_WORK for the others."""
        key = "WORK" if self.kernel == "colnorm_01_registers" else "FIXED_WORK"
        return int(self.defines.get(key, DEFAULT_WORK if key == "WORK" else FIXED_WORK))

    def __hash__(self):
        return hash((self.name, self.kernel, tuple(sorted(self.defines.items())), self.options))


def work_setting(work: int) -> Setting:
    return Setting(f"01 WORK={work}", "colnorm_01_registers", {"WORK": work})


CAP_SETTINGS = [
    Setting("01 WORK=32 -maxrregcount=32", "colnorm_01_registers", {"WORK": 32}, ("-maxrregcount=32",)),
    Setting("02 lb(256,1) FIXED_WORK=32", "colnorm_02_launch_bounds"),
    Setting("02 lb(256,4) FIXED_WORK=32", "colnorm_02_launch_bounds", {"MIN_BLOCKS": 4}),
    Setting("02 lb(256,8) FIXED_WORK=32", "colnorm_02_launch_bounds", {"MIN_BLOCKS": 8}),
    Setting("03 run-time index FIXED_WORK=32", "colnorm_03_runtime_index"),
]


def settings(quick: bool, variants: bool = False) -> list[Setting]:
    """The settings the benchmark times (quick: fewer); variants=True adds any setting checked as a variant that the
    sweep leaves out (the compile report shows every variant's build: WORK=16 in --quick)."""
    works = set(QUICK_WORK if quick else SWEEP_WORK)
    if variants:
        works |= {s.capacity for _, s in VARIANT_SETTINGS if s.kernel == "colnorm_01_registers" and not s.options}
    caps = [CAP_SETTINGS[0], CAP_SETTINGS[3], CAP_SETTINGS[4]] if quick else CAP_SETTINGS
    return [work_setting(w) for w in sorted(works)] + caps


# ---------------------------------------------------------------------------------------------------------------------
# Reference, inputs, wrappers
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):      # a zero, inf or NaN column: NaN / inf, as the kernels
        return x / np.sqrt((x * x).sum(axis=0, keepdims=True))


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """A rows x cols matrix (size = (rows, cols)) of normal values, a few columns with one large value."""
    rows, cols = (int(s) for s in size)
    x = rng.standard_normal((rows, cols))
    if x.size > 64:
        x.flat[rng.integers(0, x.size, 4)] = 5e3
    return (arrays.from_numpy(x, dtype, where),)


def colnorm(x, out=None, *, setting: Setting = None, probe=None):
    """y[:, c] = x[:, c] / ||x[:, c]|| with one compiled setting (default: colnorm_01 at WORK=16)."""
    setting = setting or work_setting(DEFAULT_WORK)
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, libs=("cupy",))
    rows, cols = (int(s) for s in x.shape)
    if rows > setting.capacity:
        raise ValueError(f"x: {rows} rows, but setting {setting.name!r} keeps at most {setting.capacity} per thread")
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=2, libs=("cupy",))
    if probe is not None:
        arrays.check_array("probe", probe, dtypes=("int32",), ndim=1, libs=("cupy",))
        if probe.size != 2 * PROBE_SLOTS:
            raise ValueError(f"probe: expected {2 * PROBE_SLOTS} int32 (zeroed), got {probe.size}")
    if rows == 0 or cols == 0:
        return out
    k = cuda.get_kernel(CU, setting.kernel, options=setting.options, defines=setting.defines)
    k((colnorm_blocks(cols),), (THREADS,), (x, out, np.int32(rows), np.int64(cols),
                                           probe if probe is not None else np.uint64(0)))
    return out


def colnorm_blocks(cols: int) -> int:
    """Every kernel's grid: one thread per column, THREADS per block."""
    return max(1, math.ceil(cols / THREADS))


def _variant(setting: Setting):
    def run(x, out=None):
        return colnorm(x, out, setting=setting)
    run.__doc__ = f"colnorm with setting {setting.name}"
    return run


TRITON_MAX_ROWS = 256
# 64 columns per program over 4 warps: a [rows, 64] tile, so a thread holds rows / 2 values (Triton's WORK)
TRITON = dict(BLOCK_C=64, num_warps=4)


def triton_config() -> config.Resolved:
    return config.resolve("triton colnorm_kernel", TRITON, validate=_check_triton)


def _check_triton(cfg: dict) -> dict:
    if cfg["BLOCK_C"] not in (16, 32, 64, 128, 256) or cfg["num_warps"] not in (1, 2, 4, 8, 16):
        raise ValueError(tr("triton colnorm: BLOCK_C a power of two in 16..256, num_warps in 1, 2, 4, 8, 16; got {got}",
                            got=config.fmt(cfg)))
    return cfg


def colnorm_triton(x, out=None):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, device=dev)
    rows, cols = (int(s) for s in x.shape)
    if rows > TRITON_MAX_ROWS:
        raise ValueError(f"x: at most {TRITON_MAX_ROWS} rows for the Triton kernel (one tile per column block)")
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=2, device=dev)
    if rows == 0 or cols == 0:
        return out
    cfg = triton_config().values
    launch(colnorm_kernel, (triton.cdiv(cols, cfg["BLOCK_C"]),), x, out, rows, cols,
           ROWS_P2=triton.next_power_of_2(rows), BLOCK_C=cfg["BLOCK_C"], num_warps=cfg["num_warps"])
    return out


def peer_cupy(x, out=None):
    import cupy

    out = arrays.check_out(out, x.shape, "float32", x)
    cupy.divide(x, cupy.sqrt(cupy.sum(x * x, axis=0, keepdims=True)), out=out)
    return out


# The settings checked as variants (the benchmark times every setting of settings()). Whether a setting spills is the
# compiler's answer for the GPU's architecture, not a property of the setting: the compile report says.
VARIANT_SETTINGS = [("cuda 01 WORK=16", work_setting(16)),
                    ("cuda 01 WORK=160", work_setting(160)),
                    ("cuda 01 WORK=32 -maxrregcount=32", CAP_SETTINGS[0]),
                    ("cuda 02 __launch_bounds__(256, 8)", CAP_SETTINGS[3]),
                    ("cuda 03 run-time index (local memory)", CAP_SETTINGS[4])]
VARIANTS = [lab.Variant(name, _variant(s), "cuda") for name, s in VARIANT_SETTINGS] + [
    lab.Variant("triton", colnorm_triton, "triton")]
PEERS = [lab.Variant("cupy (x / sqrt(sum(x*x)))", peer_cupy, "peer")]
_F = "float32"
CHECK_CASES = [((1, 1), _F), ((3, 1000), _F), ((16, 4097), _F), ((16, 1), _F), ((7, 65537), _F), ((2, 255), _F),
               ((11, 257), _F), ((16, 300_007), _F)]
CPU_CHECK_CASES = [((1, 1), _F), ((3, 70), _F), ((16, 129), _F)]
QUICK_CASES = 4                # --quick checks the first four (on the CPU: all three)


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every setting the benchmark times, on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the benchmark holds: n fp32 values in, n out (each setting views them as WORK x n / WORK)."""
    return 8 * n


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or MAIN_ELEMENTS, bench_bytes, gpu)
    names = {s: name for name, s in VARIANT_SETTINGS}
    out = []
    for s in settings(quick=False):
        cols = max(1, n // s.capacity)
        out.append(plan.Launch(names.get(s, ""), s.kernel, "cuda", source=CU, grid=colnorm_blocks(cols),
                               threads=THREADS, defines=dict(s.defines), options=s.options,
                               case=tr("setting {name}: {rows} x {cols} float32", name=s.name, rows=s.capacity,
                                       cols=cols)))
    t = triton_config()
    rows, cols = DEFAULT_WORK, n // DEFAULT_WORK
    out.append(plan.Launch("triton", "colnorm_kernel", "triton", fn=colnorm_kernel, grid=math.ceil(cols / t["BLOCK_C"]),
                           signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "rows": "i32", "cols": "i32",
                                      "ROWS_P2": "constexpr", "BLOCK_C": "constexpr"},
                           defines={"ROWS_P2": triton.next_power_of_2(rows), "BLOCK_C": t["BLOCK_C"]},
                           num_warps=t["num_warps"],
                           case=tr("{rows} x {cols} float32 (checked, not timed)", rows=rows, cols=cols),
                           config_source=t.source()))
    return out
