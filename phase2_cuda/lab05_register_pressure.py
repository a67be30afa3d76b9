"""Lab 2.5 - Register pressure: work per thread, registers, occupancy, spills, and what the caps change.

You will learn
  * where registers go: a thread that keeps WORK values live needs about WORK + 16 registers (NVRTC 13.0, sm_90:
    WORK + 15 to + 24 up to WORK = 64, then 178 at 128), and the compiler's report (registers, stack frame, spill
    stores/loads) says so before anything runs;
  * how registers set occupancy: 65,536 registers per SM, allocated per warp in chunks of 256, so 32 registers per
    thread allow 2048 resident threads and 255 allow 256; the lab computes it from the allocation rules, asks the
    driver, and measures the warps actually resident with a probe in the kernel;
  * that occupancy is a means, not the goal: more work per thread is also more loads in flight, and a kernel at 25%
    occupancy can stream nearly as fast as the best one at 100% (on the H200: 0.94x), and 1.5x faster than another;
  * what happens at the 255-register ceiling (spills to local memory: STL/LDL in the SASS), and what
    __launch_bounds__(threads, min_blocks) and -maxrregcount do: cap the registers, raise occupancy, and spill if the
    cap is below what the code needs; a __launch_bounds__ kernel ignores -maxrregcount;
  * the silent cousin of a spill: a register array indexed at run time lives in local memory (stack frame, STL/LDL,
    yet 0 bytes of "spills").

The two numbers, for normalizing the columns of a WORK x cols fp32 matrix (main case: 2^26 elements, so cols =
2^26 / WORK): bytes = 8 per element = 537 MB (4 read, 4 written), FLOPs = 3 per element (an FMA and a multiply) = 0.2
GFLOP, plus one rsqrt per column: 3/8 FLOP per byte, memory wins; ~0.13 ms at ~4.2 TB/s whatever WORK is, if enough
loads are in flight. Spills and local memory add bytes that this count does not include.

Measured on an H200 (results/h200/phase2_lab05_register_pressure.json, 2^26 elements, HBM ceiling 4,341 GB/s; the
probe's occupancy matched the allocation rules and the driver in every setting). colnorm_01 by WORK (registers,
occupancy, GB/s, fraction of the ceiling): 1 (16, 100%, 2,494, 0.57), 4 (24, 100%, 3,955, 0.91, the best: 0.136 ms), 16
(38, 75%, 3,852, 0.89), 32 (55, 50%, 3,780, 0.87), 64 (88, 25%, 3,707, 0.85), 128 (178, 12.5%, 3,062, 0.71), 160 (255 +
100 B spilled, 12.5%, 1,957, 0.45), 256 (255 + 64/96 B spilled/reloaded, 12.5%, 3,094, 0.71). The register predictions
held (88 at WORK = 64 and 178 at 128 against ~88 and ~180; spills from 160 on). "Near the ceiling past WORK = 1 or 2"
held from 4 to 64 only, and with a slow slide (0.91 -> 0.85): WORK = 1 is latency-bound as predicted (8 KiB in flight
per SM), and at 128 a single 256-thread block per SM has nothing to overlap its load, reduce and store phases with
(likely), so 128 KiB in flight is not enough. Spills were not "a small cost": WORK = 160 lost 36% against 128 for 100 B
per thread (the 256 setting, with similar spill bytes, lost nothing against 128; the spill bytes alone do not explain
the difference, and no profile was taken). The caps: -maxrregcount=32 and __launch_bounds__(256, 8) both held WORK = 32
to 32 registers (uncapped: 55), 100% occupancy and 72 B spilled (104 B reloaded) - 2,655 and 2,662 GB/s, 0.70x the
uncapped kernel at 50% occupancy: twice the occupancy and slower, worse than the predicted "no improvement".
__launch_bounds__(256, 1) took 80 registers (37.5%, 3,817 GB/s) and (256, 4) 64 registers with 8 B spilled (50%, 3,707):
within 2% of the uncapped 01. The run-time-indexed array (128 B of local memory, "0 bytes spilled") ran at 2,184 GB/s,
0.58x colnorm_01 at the same WORK = 32: the silent cousin of a spill costs more than the loud one.

Run: python -m phase2_cuda.lab05_register_pressure [--quick] [--size N] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field

import numpy as np

from common import arrays, bench, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase2_lab05_register_pressure"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab05_register_pressure.cu")
THREADS = 256                    # the .cu default (and what __launch_bounds__ promises)
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


def settings(quick: bool) -> list[Setting]:
    works = QUICK_WORK if quick else SWEEP_WORK
    caps = [CAP_SETTINGS[0], CAP_SETTINGS[3], CAP_SETTINGS[4]] if quick else CAP_SETTINGS
    return [work_setting(w) for w in works] + caps


# ---------------------------------------------------------------------------------------------------------------------
# Reference, inputs, wrappers
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
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
    blocks = math.ceil(cols / THREADS)
    k((blocks,), (THREADS,), (x, out, np.int32(rows), np.int64(cols), probe if probe is not None else np.uint64(0)))
    return out


def _variant(setting: Setting):
    def run(x, out=None):
        return colnorm(x, out, setting=setting)
    run.__doc__ = f"colnorm with setting {setting.name}"
    return run


@triton.jit
def colnorm_kernel(x_ptr, y_ptr, rows, cols, ROWS_P2: tl.constexpr, BLOCK_C: tl.constexpr):
    # Triton decides the registers itself: a [ROWS_P2, BLOCK_C] tile spread over num_warps warps, so the per-thread
    # work is ROWS_P2 * BLOCK_C / (32 * num_warps) values, the same trade-off as WORK, chosen by the block shape.
    c = tl.program_id(0).to(tl.int64) * BLOCK_C + tl.arange(0, BLOCK_C)
    r = tl.arange(0, ROWS_P2)
    mask = (r[:, None] < rows) & (c[None, :] < cols)
    offs = r[:, None].to(tl.int64) * cols + c[None, :]
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    s = tl.sum(x * x, axis=0)
    inv = 1.0 / tl.sqrt(tl.where(c < cols, s, 1.0))        # columns past the end: no 0/0 in the interpreter
    tl.store(y_ptr + offs, x * inv[None, :], mask=mask)


TRITON_BLOCK_C, TRITON_MAX_ROWS = 64, 256


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
    launch(colnorm_kernel, (triton.cdiv(cols, TRITON_BLOCK_C),), x, out, rows, cols,
           ROWS_P2=triton.next_power_of_2(rows), BLOCK_C=TRITON_BLOCK_C, num_warps=4)
    return out


def peer_cupy(x, out=None):
    import cupy

    out = arrays.check_out(out, x.shape, "float32", x)
    cupy.divide(x, cupy.sqrt(cupy.sum(x * x, axis=0, keepdims=True)), out=out)
    return out


VARIANTS = [
    lab.Variant("cuda 01 WORK=16", _variant(work_setting(16)), "cuda"),
    lab.Variant("cuda 01 WORK=160 (spills)", _variant(work_setting(160)), "cuda"),
    lab.Variant("cuda 01 WORK=32 -maxrregcount=32 (spills)", _variant(CAP_SETTINGS[0]), "cuda"),
    lab.Variant("cuda 02 __launch_bounds__(256, 8) (spills)", _variant(CAP_SETTINGS[3]), "cuda"),
    lab.Variant("cuda 03 run-time index (local memory)", _variant(CAP_SETTINGS[4]), "cuda"),
    lab.Variant("triton", colnorm_triton, "triton"),
]
PEERS = [lab.Variant("cupy (x / sqrt(sum(x*x)))", peer_cupy, "peer")]
_F = "float32"
CHECK_CASES = [((1, 1), _F), ((3, 1000), _F), ((16, 4097), _F), ((16, 1), _F), ((7, 65537), _F), ((2, 255), _F),
               ((11, 257), _F), ((16, 300_007), _F)]
CPU_CHECK_CASES = [((1, 1), _F), ((3, 70), _F), ((16, 129), _F)]


# ---------------------------------------------------------------------------------------------------------------------
# Resources and occupancy of each setting
# ---------------------------------------------------------------------------------------------------------------------
def _resident(arch: str, regs: int) -> tuple[int, str]:
    from common.occupancy import occupancy

    occ = occupancy(arch, THREADS, regs)
    return occ.blocks_per_sm, ", ".join(occ.limiters) or occ.why_zero


def compile_row(s: Setting, arch: str) -> dict:
    """What ptxas made of one setting (NVRTC, no GPU needed) and the occupancy that follows from it."""
    k = cuda.compile_report(CU, arch, options=s.options, defines=s.defines)[s.kernel]
    c = k.sass_counts
    blocks, why = _resident(arch, k.registers)
    a = device.arch_info(arch)
    return {"setting": s.name, "work": s.capacity, "regs": k.registers, "stack": k.stack_bytes,
            "spill_st": k.spill_stores, "spill_ld": k.spill_loads, "ldl/stl": f"{c.get('LDL', 0)}/{c.get('STL', 0)}",
            "blocks/SM": blocks, "occupancy": blocks * THREADS / a.max_threads_per_sm, "limited by": why,
            "max loads in flight/SM (B)": blocks * THREADS * 4 * s.capacity}


def caps_summary(rows: list[dict]) -> list[str]:
    """One line per cap setting, against the uncapped kernel at the same work (CPU compile rows or GPU rows)."""
    def get(r, *keys):
        return next((r[k] for k in keys if k in r), None)

    by = {get(r, "setting", "variant"): r for r in rows}
    lines = []
    base = by.get("01 WORK=32")
    for name, r in by.items():
        occ = get(r, "occupancy", "occupancy_theory")
        spill = f"{r['spill_st']} B spilled" if r["spill_st"] else "no spill"
        if "maxrregcount" in name and base:
            lines.append(f"-> {name}: {base['regs']} -> {r['regs']} registers, occupancy "
                         f"{get(base, 'occupancy', 'occupancy_theory'):.0%} -> {occ:.0%}, {spill}")
        elif name.startswith("02 "):
            lines.append(f"-> {name}: {r['regs']} registers, occupancy {occ:.0%}, {spill}")
        elif name.startswith("03 "):
            lines.append(f"-> {name}: {get(r, 'stack', 'local_bytes')} B of local memory per thread, {spill}: the "
                         "array lives in local memory because it is indexed at run time")
    return lines


def registers_rise_and_spills_appear(rows: list[dict]) -> tuple[bool, bool]:
    """From the WORK sweep rows: do registers never fall as WORK grows, and do spills appear at the largest WORK only
    after a spill-free start?"""
    sweep = sorted((r for r in rows if r["setting"].startswith("01 WORK=") and "maxrreg" not in r["setting"]),
                   key=lambda r: r["work"])
    regs = [r["regs"] for r in sweep]
    spills = [r["spill_st"] + r["spill_ld"] for r in sweep]
    return (all(a <= b for a, b in zip(regs, regs[1:])) and regs[-1] > regs[0],
            spills[0] == 0 and spills[-1] > 0)


# ---------------------------------------------------------------------------------------------------------------------
# GPU: time and measured residency
# ---------------------------------------------------------------------------------------------------------------------
def measure(s: Setting, x_flat, y_flat, ceiling_gbps: float, arch: str) -> dict:
    """One setting on a (WORK x n / WORK) view of the same n random values."""
    import cupy
    from cupy_backends.cuda.api import driver

    rows = s.capacity
    cols = max(1, x_flat.size // rows)
    x = x_flat[: rows * cols].reshape(rows, cols)
    y = y_flat[: rows * cols].reshape(rows, cols)
    k = cuda.get_kernel(CU, s.kernel, options=s.options, defines=s.defines)
    regs, local = int(k.num_regs), int(k.local_size_bytes)
    spills = (0, 0)
    if local:                                                 # only then can there be spills: ask ptxas
        rep = cuda.compile_report(CU, arch, options=s.options, defines=s.defines)[s.kernel]
        spills = (rep.spill_stores, rep.spill_loads)
    per_sm = int(driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, THREADS, 0))
    probe = cupy.zeros(2 * PROBE_SLOTS, cupy.int32)
    colnorm(x, y, setting=s, probe=probe)
    peak = probe[PROBE_SLOTS:].get()
    used = peak[peak > 0]
    t = bench.bench(lambda: colnorm(x, y, setting=s))
    nbytes = 8 * rows * cols
    d = device.info()
    row = report.row(LAB, s.name, "cuda", (rows, cols), "float32", t, nbytes=nbytes, flops=3 * rows * cols,
                     ceiling_gbps=ceiling_gbps, work=rows, regs=regs, local_bytes=local, spill_st=spills[0],
                     spill_ld=spills[1], blocks_per_sm_driver=per_sm,
                     occupancy_theory=per_sm * THREADS / d.max_threads_per_sm,
                     peak_warps_per_sm=int(used.max()) if used.size else 0,
                     mean_peak_warps_per_sm=float(used.mean()) if used.size else 0.0,
                     occupancy_measured=float(used.mean()) / (d.max_threads_per_sm // 32) if used.size else 0.0)
    return row


def plot(rows: list[dict], path: str) -> str:
    plt = report.pyplot()
    sweep = [r for r in rows if r["variant"].startswith("01 WORK=") and "maxrreg" not in r["variant"]]
    xs = [r["work"] for r in sweep]
    fig, ax1 = plt.subplots(figsize=(9, 5))
    ax1.plot(xs, [r["gbps"] for r in sweep], "o-", label="GB/s (left)")
    ax1.axhline(rows[0]["ceiling_gbps"], ls="--", color="gray", lw=1)
    ax1.set_ylim(0, 1.1 * max([rows[0]["ceiling_gbps"]] + [r["gbps"] for r in sweep]))
    ax1.set_xscale("log", base=2)
    ax1.set_xlabel("WORK (values per thread, compile-time)")
    ax1.set_ylabel("GB/s")
    ax2 = ax1.twinx()
    ax2.plot(xs, [r["regs"] for r in sweep], "s--", color="tab:red", label="registers (right)")
    ax2.plot(xs, [100 * r["occupancy_measured"] for r in sweep], "^:", color="tab:green",
             label="measured occupancy % (right)")
    ax2.set_ylabel("registers / occupancy %")
    for r in sweep:
        if r["spill_st"]:
            ax1.annotate(f"spills: {r['spill_st']} B stored", xy=(r["work"], r["gbps"]), fontsize=8, rotation=90,
                         xytext=(-4, -70), textcoords="offset points")
    lines = ax1.get_legend_handles_labels()
    lines2 = ax2.get_legend_handles_labels()
    ax1.legend(lines[0] + lines2[0], lines[1] + lines2[1], fontsize=8, loc="lower left")
    ax1.set_title(f"Column normalize, 2^{int(math.log2(sweep[0]['shape'][0] * sweep[0]['shape'][1]))} fp32, "
                  f"on {device.info().name}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True,
                   size_help="elements of the timed matrix (default 2^26, quick 2^22); cols = size / WORK")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    sets = settings(args.quick)
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:2] if args.quick else CPU_CHECK_CASES)
        rows = [compile_row(s, args.arch) for s in cli.progress(sets, f"compiling for {args.arch}")]
        report.print_table(rows, title=f"{CU.split(os.sep)[-1]} compiled with NVRTC {cuda.nvrtc_version()} for "
                                       f"{args.arch}: one row per setting ({THREADS} threads per block)")
        rise, spill = registers_rise_and_spills_appear(rows)
        print(f"-> as WORK grows, registers {'rise' if rise else 'DO NOT rise'} and spills "
              f"{'appear' if spill else 'DO NOT appear'} (values from the compile report above).")
        for line in caps_summary(rows):
            print(line)
        print("\nCUDA C kernels were compiled, not run (no GPU): the registers, spills and occupancy above are what "
              "the GPU run times; the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[:4] if args.quick else CHECK_CASES)
    if not ok:
        print("correctness failed: not benchmarking")
        return 1
    if not args.bench:
        rows = [compile_row(s, args.arch) for s in sets]
        report.print_table(rows, title=f"compile report for {args.arch}")
        return 0
    out_dir = args.out or report.results_dir()
    ceiling = bench.ceilings()
    n = args.size or (2**22 if args.quick else MAIN_ELEMENTS)
    arch = device.current_arch()
    import cupy

    x_flat = cupy.random.standard_normal(n, dtype=cupy.float32)
    y_flat = cupy.empty_like(x_flat)
    rows = [measure(s, x_flat, y_flat, ceiling["hbm_gbps"], arch) for s in cli.progress(sets, "settings")]
    report.print_table(rows, ["variant", "work", "regs", "local_bytes", "spill_st", "spill_ld", "blocks_per_sm_driver",
                              "occupancy_theory", "occupancy_measured", "ms", "gbps", "frac_ceiling", "spread"],
                       title=f"column normalize, {n:,} fp32 elements per setting (rows = WORK): registers, spills, "
                             "occupancy (driver / measured by the probe), time; ceiling "
                             f"{ceiling['hbm_gbps']:.0f} GB/s")
    for line in caps_summary(rows):
        print(line)
    best = max(r["gbps"] for r in rows)
    for r in rows:
        r["vs_best"] = r["gbps"] / best
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, ceiling=ceiling, device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(rows, os.path.join(out_dir, f"{LAB}.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
