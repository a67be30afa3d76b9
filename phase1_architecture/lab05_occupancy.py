"""Lab 1.5 - Occupancy: how many warps an SM holds, which resource limits it, and what occupancy buys.

You will learn
  * the occupancy calculator's rules (common/occupancy.py): a block is resident only when its warps, registers
    (handed out per warp in 256-register chunks, from four sub-partitions), shared memory (static + dynamic + 1 KiB
    reserved per block from sm_80 on, in 128-byte units) and a block slot are all available; the scarcest resource
    is the limiter, and it is the knob to turn (__launch_bounds__ / -maxrregcount, smaller tiles, other block sizes);
  * to check the calculator against the driver (cudaOccupancyMaxActiveBlocksPerMultiprocessor, through CuPy) - and
    to record those answers (--record-fixture) so that the CPU tests check the calculator against real hardware;
  * Little's law, measured: bandwidth = bytes in flight / latency. The same memory-bound kernel, forced to 1 .. 64
    resident warps per SM with dynamic shared memory, gains bandwidth in proportion to its warps at first, then
    less, because latency rises as the memory system fills; a version with 16x the bytes in flight per warp (4 float4
    loads) needs far fewer warps (on an H200 it beat the scalar kernel's 64-warp bandwidth with 8), though not 16x
    fewer. Occupancy is a means (bytes in flight, latency hiding), not a goal.

The two numbers, for the measured kernel (y = alpha x over n = 2^26 fp32, 256 MiB each way): bytes = 8 n = 512 MiB,
FLOPs = n = 67 M: 1/8 FLOP/B, ~110x below an H200's ridge point (14 FLOP/B), so memory wins at every occupancy and
time = bytes / (bytes in flight per second). At full speed (~4.3 TB/s) a call would take ~0.12 ms; at one warp per
SM with 128 B in flight per warp, 132 x 128 B / latency: ~24 GB/s of reads (~10 ms) at the ~0.7 us of a loaded HBM
round trip, about twice that at the ~0.37 us an idle memory system answers in (measured below).

Measured on an H200 (results/h200/phase1_lab05_occupancy.json, commit 173e2d9; HBM ceiling 4,341 GB/s):
  * the calculator agreed with the driver in all 90 live cases and at all 18 forced sweep points, and reproduced
    the Programming Guide's and Best Practices Guide's worked examples (2 and 1 blocks at 64 and 65 registers; 75%
    and 62.5%).
  * scalar, 128 B a warp: 91.8 GB/s (5.85 ms) at 1 warp/SM, which puts the unloaded latency at 368 ns, half the
    0.7 us assumed (the pointer chase of lab 1.4 saw 336-340 ns). Bandwidth then grew almost in proportion to the
    warps up to 8 per SM (1.97x, 3.84x, 7.34x at 2, 4, 8), then less: 13.5x at 16 (target ~16x, met at >= 10x) and
    32.9x at 64, where it reached 3,023 GB/s, 0.70 of the ceiling - it never saturated HBM, as predicted. Little's
    law with the measured bandwidth says why: the latency a warp sees rises with the load, from 368 ns at 1 warp/SM
    to 436 ns at 16 and 715 ns at 64 (most likely queueing in the memory system), the loaded ~0.7 us assumed above.
  * float4 x4, 2 KiB a warp: 905 GB/s at 1 warp/SM (0.62 of Little's law at 368 ns; likely because the 2 KiB is a
    peak: while a warp multiplies, stores and computes addresses it has nothing in flight), 2,558 at 4, 3,379 at 8,
    3,803 at 16 (1.01 of its 64-warp figure: the target >= 0.8 met), a best of 3,871 GB/s (0.139 ms, 0.89 of the
    ceiling) at 24, and 3,756-3,778 from 32 to 64. It beat the scalar kernel's 64-warp figure with 8 warps. It
    saturated later than the ~4-8 warps predicted in the .cu file (59% and 78% of the ceiling there): besides the
    peak, the latency at that load is well above the idle 368 ns (the scalar kernel saw 715 ns at a similar
    ~1.5 TB/s of reads). Its plateau stays ~11% under the ceiling; this run does not say why (a 1:1 read/write
    stream reached 4,230 GB/s in the ceiling probe's copy).

Run: python -m phase1_architecture.lab05_occupancy [--quick] [--no-bench] [--arch sm_86]
     python -m phase1_architecture.lab05_occupancy --record-fixture tests/data/occupancy_sm_90.json   (GPU)
"""
from __future__ import annotations

import datetime
import json
import os
import sys

import numpy as np

from common import arrays, bench, cli, cuda, device, lab, occupancy, report
from common.device import KiB
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase1_lab05_occupancy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab05_occupancy.cu")
FULL_THREADS = 256
UNROLL = 4                                   # occ_02's default
WARP_POINTS = (1, 2, 4, 8, 16, 24, 32, 48, 64)
BENCH_N = 2**26


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(x, alpha: float) -> np.ndarray:
    return float(alpha) * np.asarray(x, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    x = rng.standard_normal(n) * 2.0
    if n > 16:
        x[rng.integers(0, n, 4)] = -5.0e4
    return arrays.from_numpy(x, dtype, where), 1.7


# ---------------------------------------------------------------------------------------------------------------------
# Forcing an occupancy: claim shared memory so that only the wanted number of blocks fits on an SM
# ---------------------------------------------------------------------------------------------------------------------
def forced_config(warps_per_sm: int | None, kernel, arch: str) -> dict:
    """threads per block, blocks per SM and dynamic shared memory that make exactly `warps_per_sm` warps resident.

    None: the kernel's natural full occupancy (256-thread blocks, no shared memory). Else blocks of 32 threads for one
    warp per SM, 64 threads above (an SM holds at most 32 blocks: 32 x 64 threads = 2048, the whole SM).
    """
    regs, static = int(kernel.num_regs), int(kernel.shared_size_bytes)
    if warps_per_sm is None:
        occ = occupancy.occupancy(arch, FULL_THREADS, regs, static)
        return dict(threads=FULL_THREADS, blocks_per_sm=occ.blocks_per_sm, dyn=0, occ=occ)
    a = device.arch_info(arch)
    if warps_per_sm < 1 or warps_per_sm > a.max_warps_per_sm or (warps_per_sm > 1 and warps_per_sm % 2):
        raise ValueError(f"warps_per_sm: expected 1 or an even number up to {a.max_warps_per_sm}, got {warps_per_sm}")
    threads = 32 if warps_per_sm == 1 else 64
    per_sm = warps_per_sm // (threads // 32)
    if per_sm > a.max_blocks_per_sm:
        raise ValueError(f"warps_per_sm: {per_sm} blocks of {threads} threads is more than the {a.max_blocks_per_sm} "
                         f"blocks an {arch} SM holds")
    dyn = occupancy.dynamic_smem_for_blocks(arch, per_sm, static)
    occ = occupancy.occupancy(arch, threads, regs, static, dyn, max_dynamic_smem=max(dyn, a.smem_per_block_default
                                                                                         - static))
    if occ.blocks_per_sm != per_sm:
        raise RuntimeError(f"calculator: {dyn} B of dynamic shared memory gives {occ.blocks_per_sm} blocks/SM, wanted "
                           f"{per_sm} ({occ.limiter})")
    return dict(threads=threads, blocks_per_sm=per_sm, dyn=dyn, occ=occ)


def _launch_scale(kernel, x, out, n, alpha, warps_per_sm):
    d = device.info()
    cfg = forced_config(warps_per_sm, kernel, d.arch)
    if cfg["dyn"] > d.smem_per_block - int(kernel.shared_size_bytes):
        kernel.max_dynamic_shared_size_bytes = cfg["dyn"]       # opt in before a launch above 48 KiB
    kernel((d.sms * cfg["blocks_per_sm"],), (cfg["threads"],), (x, out, np.int64(n), np.float32(alpha)),
           shared_mem=cfg["dyn"])
    return out


def _prepare(x, alpha, out):
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    if not isinstance(alpha, (int, float, np.floating, np.integer)) or isinstance(alpha, bool):
        raise TypeError(f"alpha: expected a real scalar, got {type(alpha).__name__}")
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    return out, arrays.size(x)


def scale_cuda_01(x, alpha, out=None, *, warps_per_sm: int | None = None):
    """y = alpha x, one 4-byte load in flight per thread; warps_per_sm forces the occupancy (None: full)."""
    out, n = _prepare(x, alpha, out)
    if n == 0:
        return out
    return _launch_scale(cuda.get_kernel(CU, "occ_01_scale_scalar"), x, out, n, alpha, warps_per_sm)


def scale_cuda_02(x, alpha, out=None, *, warps_per_sm: int | None = None):
    """y = alpha x, UNROLL float4 loads in flight per thread; falls back to occ_01 for misaligned views."""
    out, n = _prepare(x, alpha, out)
    if n == 0:
        return out
    name = "occ_02_scale_float4_ilp" if arrays.aligned(x, 16) and arrays.aligned(out, 16) else "occ_01_scale_scalar"
    return _launch_scale(cuda.get_kernel(CU, name), x, out, n, alpha, warps_per_sm)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


def scale_triton(x, alpha, out=None):
    arrays.check_array("x", x, dtypes=("float32",), device=not INTERPRETER)
    out = arrays.check_out(out, x.shape, "float32", x)
    n = arrays.size(x)
    if n == 0:
        return out
    launch(scale_kernel, (triton.cdiv(n, 1024),), x, out, n, float(alpha), BLOCK=1024, num_warps=4)
    return out


VARIANTS = [
    lab.Variant("cuda 01 scalar, full occupancy", scale_cuda_01, "cuda"),
    lab.Variant("cuda 01 scalar, 1 warp/SM", lambda x, a, out=None: scale_cuda_01(x, a, out, warps_per_sm=1), "cuda"),
    lab.Variant("cuda 02 float4 x4, full occupancy", scale_cuda_02, "cuda"),
    lab.Variant("cuda 02 float4 x4, 6 warps/SM", lambda x, a, out=None: scale_cuda_02(x, a, out, warps_per_sm=6),
                "cuda"),
    lab.Variant("triton", scale_triton, "triton"),
]
CHECK_CASES = [(n, "float32") for n in (1, 3, 4, 5, 127, 4099, 65537, 1_000_003)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 1025, 4099)]


# ---------------------------------------------------------------------------------------------------------------------
# The calculator, explained (CPU and GPU)
# ---------------------------------------------------------------------------------------------------------------------
def worked_examples() -> list[dict]:
    """The documentation's worked examples, recomputed (tests/test_occupancy.py checks the same numbers)."""
    rows = []
    for regs in (64, 65):
        o = occupancy.occupancy("sm_80", 512, regs)
        rows.append({"source": "CUDA C++ Programming Guide, 'Multiprocessor Level' (64K registers, 2048 threads/SM)",
                     "case": f"512 threads x {regs} registers", "expected": "2 blocks (32 warps)" if regs == 64 else
                     "1 block (16 warps)", "calculator": f"{o.blocks_per_sm} block{'s' if o.blocks_per_sm != 1 else ''}"
                                                           f" ({o.active_warps} warps), limiter {o.limiter}"})
    for threads, exp in ((128, "12 blocks, 75%"), (320, "4 blocks, 63%")):
        o = occupancy.occupancy("sm_80", threads, 37)
        rows.append({"source": "CUDA C++ Best Practices Guide, 'Calculating Occupancy' (compute capability 7.0; sm_80"
                               " has the same register file and thread limits)",
                     "case": f"{threads} threads x 37 registers", "expected": exp,
                     "calculator": f"{o.blocks_per_sm} blocks, {o.occupancy:.1%}"})
    return rows


def curves(arch: str) -> dict:
    """Occupancy against registers, shared memory per block and block size (the three classic calculator plots)."""
    a = device.arch_info(arch)
    regs = list(range(16, 256, 1))
    smem = list(range(0, a.smem_per_block_optin + 1, 1024))
    threads = list(range(32, 1025, 32))
    return {
        "registers (256 threads, no shared memory)": (regs, [occupancy.occupancy(arch, 256, r).occupancy
                                                            for r in regs]),
        "shared memory/block in KiB (128 threads, 32 registers)": (
            [s / KiB for s in smem], [occupancy.occupancy(arch, 128, 32, 0, s, max_dynamic_smem=a.smem_per_block_optin)
                                      .occupancy for s in smem]),
        "threads/block (32 registers, no shared memory)": (threads, [occupancy.occupancy(arch, t, 32).occupancy
                                                                     for t in threads]),
    }


def calculator_tables(arch: str) -> list[dict]:
    """A few telling cases for one architecture."""
    a = device.arch_info(arch)
    cases = [(256, 32, 0, 0), (256, 33, 0, 0), (256, 64, 0, 0), (256, 128, 0, 0), (1024, 64, 0, 0),
             (128, 32, 0, 48 * KiB), (128, 32, 0, a.smem_per_sm // 2 - 1024), (128, 32, 0, a.smem_per_sm // 2),
             (32, 16, 0, 0), (96, 32, 0, 0), (1024, 255, 0, 0)]
    rows = []
    for t, r, s, dyn in cases:
        o = occupancy.occupancy(arch, t, r, s, dyn, max_dynamic_smem=max(dyn, a.smem_per_block_default - s))
        rows.append(o.row() | {"note": o.notes[0] if o.notes else ""})
    return rows


def plot_curves(arch: str, path: str, driver_points: dict | None = None) -> str:
    plt = report.pyplot()
    cs = curves(arch)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for ax, (title, (xs, ys)) in zip(axes, cs.items()):
        ax.step(xs, [100 * y for y in ys], where="post", lw=1.6, label="calculator")
        if driver_points and title in driver_points:
            px, py = driver_points[title]
            ax.plot(px, [100 * y for y in py], "o", ms=5, mfc="none", color="tab:red", label="driver (this GPU)")
        ax.set_xlabel(title)
        ax.set_ylabel("occupancy (% of max warps)")
        ax.set_ylim(0, 105)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(f"Theoretical occupancy on {arch} ({device.arch_info(arch).family})", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
# The driver's answers (GPU): live agreement, and the fixture for the CPU tests
# ---------------------------------------------------------------------------------------------------------------------
def _probe(cap: int | None, nlive: int, static: int):
    opts = (f"--maxrregcount={cap}",) if cap else ()
    return cuda.get_kernel(CU, "occ_probe_registers", options=opts, defines={"NLIVE": nlive, "STATIC_SMEM": static})


def driver_blocks(kernel, threads: int, dyn: int) -> tuple[int, int]:
    """(blocks/SM from the driver, the kernel's max dynamic shared memory attribute used).

    A launch the driver refuses outright (e.g. more threads than the kernel's register count allows in one block)
    counts as 0 blocks, which is what the calculator says of it.
    """
    from cupy.cuda import driver

    static = int(kernel.shared_size_bytes)
    default = device.info().smem_per_block - static
    attr = dyn if dyn > default else default
    kernel.max_dynamic_shared_size_bytes = attr
    try:
        return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dyn)), attr
    except driver.CUDADriverError as e:
        print(f"  driver refused {threads} threads, {dyn} B dynamic shared memory: {e}", file=sys.stderr)
        return 0, attr


def query_cases(caps, nlive: int, static: int, threads_list, dyn_list) -> list[dict]:
    d = device.info()
    cases = []
    for cap in caps:
        k = _probe(cap, nlive, static)
        regs, sstatic = int(k.num_regs), int(k.shared_size_bytes)
        for threads in threads_list:
            for dyn in dyn_list:
                if sstatic + dyn > d.smem_per_block_optin:
                    continue
                blocks, attr = driver_blocks(k, threads, dyn)
                cases.append({"threads": threads, "regs": regs, "smem_static": sstatic, "smem_dynamic": dyn,
                              "max_dynamic_smem": attr, "barriers": 1 if sstatic else 0, "blocks": blocks,
                              "maxrregcount": cap, "kernel_max_threads": int(k.max_threads_per_block)})
    return cases


def live_agreement(quick: bool) -> tuple[list[dict], list[dict]]:
    """Ask the driver about a small grid of cases and compare with the calculator."""
    caps = (32, 0) if quick else (24, 40, 0)
    threads_list = (64, 256, 1024) if quick else (32, 96, 128, 256, 640, 1024)
    dyn_list = (0, 30_000, 100_000) if quick else (0, 20_000, 49_152, 100_000, 200_000)
    cases = query_cases(caps, 64, 0, threads_list, dyn_list)
    arch = device.info().arch
    bad = [dict(c, calculator=occupancy.predict_case(arch, c)) for c in cases
           if occupancy.predict_case(arch, c) != c["blocks"]]
    return cases, bad


def device_props() -> dict:
    d = device.info()
    return {"max_threads_per_sm": d.max_threads_per_sm, "max_blocks_per_sm": d.max_blocks_per_sm,
            "regs_per_sm": d.regs_per_sm, "regs_per_block": d.regs_per_block, "smem_per_sm": d.smem_per_sm,
            "smem_per_block": d.smem_per_block, "smem_per_block_optin": d.smem_per_block_optin,
            "smem_reserved_per_block": d.smem_reserved_per_block, "max_threads_per_block": d.max_threads_per_block,
            "warp_size": d.warp_size}


def record_fixture(path: str) -> int:
    """Record the driver's answers for a grid of (block size, registers, static + dynamic shared memory) cases."""
    import cupy

    device.require_gpu("recording the occupancy fixture")
    d = device.info()
    print(f"recording on {d.name} ({d.arch}): compiling occ_probe_registers with register caps ...", flush=True)
    threads_list = (32, 64, 96, 128, 256, 384, 640, 1024)
    dyn_list = (0, 1000, 8192, 20_000, 45_000, 60_000, 100_000, 200_000)
    cases = query_cases((24, 32, 40, 48, 64, 72, 96, 128, 168, 255), 240, 0, threads_list, dyn_list)
    cases += query_cases((32, 64, 128), 240, 16384, threads_list, dyn_list)
    doc = {"device": d.name, "arch": d.arch, "driver_cuda": d.driver_cuda, "runtime_cuda": d.runtime_cuda,
           "cupy": cupy.__version__, "nvrtc": cuda.nvrtc_version(),
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "method": "cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kernel.kernel.ptr, threads, dynamic) "
                     "on occ_probe_registers (phase1_architecture/lab05_occupancy.cu, NLIVE=240) compiled with "
                     "--maxrregcount=<cap> and -DSTATIC_SMEM=<bytes>; max_dynamic_smem is the kernel attribute "
                     "cudaFuncAttributeMaxDynamicSharedMemorySize set before each query",
           "props": device_props(), "cases": cases}
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    head = {k: v for k, v in doc.items() if k != "cases"}
    with open(path, "w") as f:            # the header indented, then one case per line (diff-friendly)
        text = json.dumps(head, indent=1)
        f.write(text[:-2] + ',\n "cases": [\n')
        f.write(",\n".join("  " + json.dumps(c) for c in cases))
        f.write("\n ]\n}\n")
    bad, prop_bad = occupancy.compare_fixture(doc)
    regs = sorted({c["regs"] for c in cases})
    print(f"wrote {path}: {len(cases)} cases, register counts {regs}")
    print(f"calculator vs driver: {len(cases) - len(bad)}/{len(cases)} agree; ARCHS table vs device: "
          f"{'agree' if not prop_bad else '; '.join(prop_bad)}")
    for c in bad[:20]:
        print("  MISMATCH", c)
    return 0 if not bad and not prop_bad else 1


# ---------------------------------------------------------------------------------------------------------------------
# Bandwidth against occupancy
# ---------------------------------------------------------------------------------------------------------------------
def occupancy_sweep(n: int, points) -> list[dict]:
    import cupy

    d = device.info()
    ceiling = bench.ceilings()["hbm_gbps"]
    x = cupy.full(n, 1.25, dtype=cupy.float32)        # values do not change the speed; the checks ran already
    y = cupy.empty_like(x)
    rows = []
    kernels = (("cuda 01 scalar (128 B/warp in flight)", scale_cuda_01, "occ_01_scale_scalar", 128),
               ("cuda 02 float4 x4 (2 KiB/warp in flight)", scale_cuda_02, "occ_02_scale_float4_ilp",
                32 * 16 * UNROLL))
    for name, fn, kname, per_warp in kernels:
        k = cuda.get_kernel(CU, kname)
        for w in cli.progress(points, name):
            cfg = forced_config(w, k, d.arch)
            drv, _ = driver_blocks(k, cfg["threads"], cfg["dyn"])
            t = bench.bench(lambda: fn(x, 1.5, out=y, warps_per_sm=w), rep_ms=40)
            rows.append(report.row(LAB, name, "cuda", (n,), "float32", t, nbytes=8 * n, flops=n,
                                   ceiling_gbps=ceiling, warps_per_sm=w, occupancy=w / (d.max_threads_per_sm // 32),
                                   threads=cfg["threads"], blocks_per_sm=cfg["blocks_per_sm"], dyn_smem=cfg["dyn"],
                                   driver_blocks_per_sm=drv, bytes_in_flight_per_sm=w * per_warp))
    x = y = None
    return rows


def littles_law(rows: list[dict]) -> tuple[float, list[dict]]:
    """Latency from the one-warp point of the scalar kernel, then the model's prediction for every other point."""
    d = device.info()
    one = next(r for r in rows if r["warps_per_sm"] == 1 and "scalar" in r["variant"])
    read_gbps = one["gbps"] / 2                       # half the counted bytes are reads, the ones in flight
    latency_ns = d.sms * one["bytes_in_flight_per_sm"] / read_gbps
    ceiling = max(r["gbps"] for r in rows)
    for r in rows:
        r["predicted_gbps"] = min(ceiling, 2 * d.sms * r["bytes_in_flight_per_sm"] / latency_ns)
    return latency_ns, rows


def plot_sweep(rows: list[dict], latency_ns: float, path: str) -> str:
    """Measured bandwidth (solid) and Little's law (dashed, same color) against resident warps per SM."""
    plt = report.pyplot()
    d = device.info()
    ceil = bench.ceilings()
    fig, ax = plt.subplots(figsize=(9, 5.2))
    for color, name in zip(("tab:blue", "tab:orange"), dict.fromkeys(r["variant"] for r in rows)):
        pts = sorted((r["warps_per_sm"], r["gbps"], r["predicted_gbps"]) for r in rows if r["variant"] == name)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, lw=1.8, ms=4, label=name)
        ax.plot([p[0] for p in pts], [p[2] for p in pts], "--", color=color, lw=1.2,
                label=f"Little's law: {name.split(' (')[0]}")
    ax.axhline(ceil["hbm_gbps"], ls=":", color="gray", lw=1)
    ax.annotate(f"measured HBM ceiling {ceil['hbm_gbps']:,.0f} GB/s", xy=(0.01, ceil["hbm_gbps"]),
                xycoords=("axes fraction", "data"), va="bottom", fontsize=8, color="dimgray")
    xs = sorted({r["warps_per_sm"] for r in rows})
    ax.set_xscale("log", base=2)
    ax.set_xticks(xs)
    ax.set_xticklabels([str(x) for x in xs], fontsize=8)
    ax.set_xlabel("resident warps per SM (forced with dynamic shared memory)")
    ax.set_ylabel("GB/s (read + write)")
    ax.set_title(f"{d.name}: bandwidth vs occupancy, y = a x over {rows[0]['shape'][0]:,} floats\n"
                 f"dashed: Little's law, 2 x SMs x warps x bytes/warp in flight / {latency_ns:.0f} ns "
                 "(fitted on 1 warp/SM)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
def show_compile_report(arch: str, quick: bool = False) -> None:
    rep = cuda.print_compile_report(CU, arch, kernels=["occ_01_scale_scalar", "occ_02_scale_float4_ilp"],
                                    excerpt_of="occ_02_scale_float4_ilp")
    for name in ("occ_01_scale_scalar", "occ_02_scale_float4_ilp"):
        k = rep.kernels[name]
        o = occupancy.occupancy(arch, FULL_THREADS, k.registers, k.smem_bytes)
        print(f"-> {name}: {k.registers} registers, {FULL_THREADS}-thread blocks: {o.blocks_per_sm} blocks/SM = "
              f"{o.occupancy:.0%} occupancy ({o.limiter})")
    print("Register counts of occ_probe_registers (NLIVE=240) under -maxrregcount caps, and what they allow:")
    rows = []
    for cap in (32, 255) if quick else (32, 64, 128, 255):
        k = cuda.compile_report(CU, arch, options=(f"--maxrregcount={cap}",), defines={"NLIVE": 240})[
            "occ_probe_registers"]
        o = occupancy.occupancy(arch, FULL_THREADS, k.registers)
        rows.append({"maxrregcount": cap, "registers": k.registers, "spill bytes": k.spill_stores + k.spill_loads,
                     "blocks/SM at 256 threads": o.blocks_per_sm, "occupancy": f"{o.occupancy:.0%}"})
    report.print_table(rows)
    print("   (fewer registers buy occupancy and cost spills: local-memory traffic the kernel did not have)")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True, size_help=f"elements of the sweep (default {BENCH_N})")
    p.add_argument("--record-fixture", metavar="PATH", default=None,
                   help="(GPU) record the driver's occupancy answers as JSON for tests/test_occupancy.py and exit")
    args = cli.finish_args(p.parse_args(argv))
    if args.record_fixture:
        if not device.has_gpu():
            print(f"--record-fixture needs a GPU ({device.no_gpu_reason()})", file=sys.stderr)
            return 2
        return record_fixture(args.record_fixture)
    print(cli.mode_line())
    this = sys.modules[__name__]
    arch = args.arch
    report.print_table(worked_examples(), title="Worked examples from NVIDIA's documentation, recomputed")
    report.print_table(calculator_tables(arch), title=f"The calculator on {arch}")
    print(occupancy.occupancy(arch, 256, 33).explain())
    out_dir = args.out or report.results_dir()
    os.makedirs(out_dir, exist_ok=True)
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:1] if args.quick else CPU_CHECK_CASES)
        show_compile_report(arch, args.quick)
        if args.plot and not args.quick:
            print("wrote", plot_curves(arch, os.path.join(out_dir, f"{LAB}_calculator_{arch}.png")))
        print("\nOn a GPU this lab also asks the driver for the same answers, and measures bandwidth from 1 to 64 "
              "warps/SM.\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS, CHECK_CASES[:5] if args.quick else CHECK_CASES)
    show_compile_report(arch, args.quick)
    cases, bad = live_agreement(args.quick)
    print(f"\ncalculator vs driver on this GPU: {len(cases) - len(bad)}/{len(cases)} cases agree")
    for c in bad[:10]:
        print("  MISMATCH", c)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    n = args.size or (2**22 if args.quick else BENCH_N)
    points = (1, 4, 16, 64) if args.quick else WARP_POINTS
    rows = occupancy_sweep(n, points)
    latency_ns, rows = littles_law(rows)
    report.print_table(rows, ["variant", "warps_per_sm", "threads", "blocks_per_sm", "driver_blocks_per_sm",
                              "dyn_smem", "ms", "gbps", "predicted_gbps", "frac_ceiling"],
                       title=f"Bandwidth vs resident warps per SM (latency fitted on the 1-warp point: "
                             f"{latency_ns:.0f} ns)")

    def at(name, w):
        return next((r["gbps"] for r in rows if r["variant"].startswith(name) and r["warps_per_sm"] == w), None)

    targets = [{"target": "calculator == driver for every live case", "predicted": len(cases),
                "measured": len(cases) - len(bad), "met": not bad},
               {"target": "forced blocks/SM == driver's blocks/SM at every sweep point", "predicted": len(rows),
                "measured": sum(r["blocks_per_sm"] == r["driver_blocks_per_sm"] for r in rows),
                "met": all(r["blocks_per_sm"] == r["driver_blocks_per_sm"] for r in rows)}]
    s1, s16, f16, f64 = at("cuda 01", 1), at("cuda 01", 16), at("cuda 02", 16), at("cuda 02", 64)
    if s1 and s16:
        targets.append({"target": "scalar: 16 warps/SM carry ~16x the bandwidth of 1 (Little's law, below the "
                                  "ceiling)", "predicted": 16.0, "measured": s16 / s1, "met": s16 / s1 >= 10})
    if f16 and f64:
        targets.append({"target": "float4 x4: >= 80% of its 64-warp bandwidth at 16 warps/SM", "predicted": ">= 0.8",
                        "measured": f16 / f64, "met": f16 / f64 >= 0.8})
    report.print_table(targets, title="Predictions vs measurement")
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, targets=targets, latency_ns=latency_ns,
                                         live_cases=cases, live_mismatches=bad, device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot_sweep(rows, latency_ns, os.path.join(out_dir, f"{LAB}.png")))
        pts = {}
        by = [c for c in cases if c["smem_dynamic"] == 0 and c["threads"] == 256]
        if by:
            pts["registers (256 threads, no shared memory)"] = (
                [c["regs"] for c in by], [c["blocks"] * 8 / (device.info().max_threads_per_sm // 32) for c in by])
        print("wrote", plot_curves(arch, os.path.join(out_dir, f"{LAB}_calculator_{arch}.png"), pts))
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
