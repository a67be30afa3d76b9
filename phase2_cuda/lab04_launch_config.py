"""Lab 2.4 - Launch configuration: block size, grid size, waves, and the tail of a partial last wave.

You will learn
  * what limits how many blocks an SM holds at once (threads, blocks, registers, shared memory per SM), what a wave
    is (SMs x resident blocks), and why 32-thread blocks cannot fill an H200 SM (32 blocks x 32 threads = half of it);
  * Little's law for a memory-bound kernel: bandwidth = bytes in flight / latency. With one 16-byte load in flight per
    thread, the number of resident threads sets the bandwidth: a heat map of GB/s over block size x grid size shows
    where it saturates, and the measured points give back the latency (an implied figure, not a guess);
  * the grid-stride loop: any grid computes the right answer, so the grid can be sized to the GPU (whole waves) rather
    than to the data;
  * the tail effect: a grid of 1.25 waves runs its last quarter-wave on a GPU a quarter full; how much that costs for
    a memory-bound kernel (less than a whole wave, more than nothing), predicted from the same Little's law fit;
  * how to choose: blocks of 128-512 threads, and either one element per thread or a grid-stride grid of whole waves.

The two numbers, for y = alpha * x on n fp32 elements (main case n = 2^27, 512 MiB per array): bytes = 8 n = 1.07 GB
(4 read + 4 written per element), FLOPs = n = 0.13 GFLOP: 1/8 FLOP per byte, memory wins on any GPU; at the ~4.3 TB/s
ceiling of an H200, 0.25 ms. Every configuration below moves the same bytes; only how many are in flight changes.

Measured on an H200 (results/h200/phase2_lab04_launch_config.json, n = 2^27, HBM ceiling 4,341 GB/s). Resident threads
are the variable, as the model says: at equal resident threads every block size gave the same GB/s within 2% (e.g.
1,905-1,945 GB/s at 33,792 threads, from 32- to 1024-thread blocks). Little's law with a constant latency held only at
the bottom: 33,792 threads gave ~1,940 GB/s where 0.7 us predicted 1,545, 67,584 gave ~3,055 where it predicted 3,090,
and the latency these latency-bound cells imply is 0.56 us (the fitted figure, below the assumed 0.7). Saturation did
not come at the predicted ~96,000 threads: 135,168 threads (half occupancy) reached ~3,786 GB/s (0.87 of the ceiling), a
full wave ~3,944 (0.91), 8 waves ~4,020 (0.93). The latency each cell implies grows with the load - 0.56, 0.71, 1.14,
2.2 us at 1/8, 1/4, 1/2 and full occupancy - most likely queueing in the memory system, the part a constant-latency
Little's law leaves out. So 32-thread blocks (half occupancy) did not "still saturate": they plateaued at 3,800 GB/s, 5%
under the best larger blocks. The one-float4-per-thread grid did not "match one wave": with 128-256 threads per block it
was the fastest cell of the sweep, 4,224 GB/s (0.973), 5% above the best grid-stride grid (4,021; why is not established
by this run, no profile was taken), while with 32-thread blocks (1,048,576 blocks of one warp) it collapsed to 1,685
GB/s and with 64 to 3,347 (most likely the rate at which blocks are launched and retired, not memory). The tail (64
float4 per thread, 256-thread blocks, 1 wave = 1,056 blocks): 1.1 waves took 1.18 wave-times (quantized model 2, fluid
1.10, Little's-law model 1.28) and 1.25 waves 1.33 (models 2, 1.25, 1.28): the partial wave cost ~0.08 of a wave beyond
the fluid model, 9-10% of the quantized model's penalty and close to the Little's-law model; from 1.5 waves on the fluid
model fits within 3% (1.5 -> 1.51, 2.1 -> 2.08, 3.1 -> 3.03), partly because a single wave itself streams slower (3,885
GB/s) than four (3,988). How to choose held: 128-512 threads per block, and one float4 per thread (best here) or a
grid-stride grid of several waves (within 5%).

Run: python -m phase2_cuda.lab04_launch_config [--quick] [--size N] [--no-bench]
"""
from __future__ import annotations

import math
import os
import statistics
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase2_lab04_launch_config"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab04_launch_config.cu")
ALPHA = 1.75
BLOCK_SIZES = (32, 64, 128, 256, 512, 1024)
WAVES = (1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8)          # grid-stride grids, in waves; plus one float4 per thread
TAIL_WAVES = (0.5, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.1, 2.5, 3, 3.1, 4)
TAIL_ITERS = 64                                   # float4 per thread in the tail experiment (fixed work per block)
BYTES_IN_FLIGHT_PER_THREAD = 16                   # one float4 load per loop iteration (the loop is not unrolled)
ASSUMED_LATENCY_US = 0.7                          # a-priori DRAM latency under load, for the predictions only
MAIN_N = 2**27


# ---------------------------------------------------------------------------------------------------------------------
# Occupancy: how many blocks an SM holds (the occupancy calculator's rules, from common.device.ARCHS)
# ---------------------------------------------------------------------------------------------------------------------
def resident_blocks(arch: str, threads: int, regs_per_thread: int, smem_per_block: int = 0) -> tuple[int, str]:
    """(resident blocks per SM, the limit that decides it) for a kernel on an architecture."""
    a = device.arch_info(arch)
    warps = math.ceil(threads / a.warp_size)
    if threads > a.max_threads_per_block:
        return 0, "threads per block"
    limits = {"threads per SM": a.max_threads_per_sm // (warps * a.warp_size),
              "blocks per SM": a.max_blocks_per_sm}
    if regs_per_thread:
        if regs_per_thread > a.max_regs_per_thread:
            return 0, "registers per thread"
        per_warp = math.ceil(regs_per_thread * a.warp_size / a.reg_alloc_unit) * a.reg_alloc_unit
        if per_warp * warps > a.max_regs_per_block:
            return 0, "registers per block"
        parts = a.warp_alloc_granularity                # register file split over the SM's partitions
        limits["registers"] = (a.regs_per_sm // parts // per_warp) * parts // warps
    if smem_per_block > a.smem_per_block_optin:
        return 0, "shared memory per block"
    per_block = math.ceil((smem_per_block + a.smem_reserved_per_block) / a.smem_alloc_unit) * a.smem_alloc_unit
    if per_block:
        limits["shared memory"] = a.smem_per_sm // per_block
    which = min(limits, key=limits.get)
    return limits[which], which


def _kernel(name: str):
    return cuda.get_kernel(CU, name)


def blocks_per_sm(threads: int, kernel: str = "scale_grid_stride_float4") -> int:
    """On a GPU, the driver's figure (cuOccupancyMaxActiveBlocksPerMultiprocessor); else the local calculator."""
    if device.has_gpu():
        from cupy_backends.cuda.api import driver

        return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(_kernel(kernel).kernel.ptr, threads, 0))
    regs = cuda.compile_report(CU, device.DEFAULT_ARCH)[kernel].registers
    return resident_blocks(device.DEFAULT_ARCH, threads, regs)[0]


def sm_count() -> int:
    return device.info().sms if device.has_gpu() else device.arch_info(device.DEFAULT_ARCH).example_sms


def wave(threads: int, kernel: str = "scale_grid_stride_float4") -> int:
    """Blocks of `threads` that the whole GPU holds at once."""
    return sm_count() * blocks_per_sm(threads, kernel)


# ---------------------------------------------------------------------------------------------------------------------
# Reference, inputs, wrappers
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    return ALPHA * np.asarray(x, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    x = rng.standard_normal(int(n)) * 2.0
    if n > 16:
        x[rng.integers(0, n, 4)] = -3e4
    return (arrays.from_numpy(x, dtype, where),)


MAX_GRID_X = 2**31 - 1


def scale(x, out=None, *, threads: int = 256, blocks=None, waves: float | None = None, kernel: str = "auto"):
    """out = ALPHA * x with a chosen launch: blocks=int, blocks='per_element' (one float4 per thread), or waves=w.

    kernel: 'auto' (float4 when x and out are 16-byte aligned, else scalar), 'float4', or 'scalar'.
    """
    arrays.check_array("x", x, dtypes=("float32",), libs=("cupy",))
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    if not isinstance(threads, (int, np.integer)) or not 32 <= threads <= 1024 or threads % 32:
        raise ValueError(f"threads: expected a multiple of 32 in 32..1024, got {threads!r}")
    if kernel not in ("auto", "float4", "scalar"):
        raise ValueError(f"kernel: expected 'auto', 'float4' or 'scalar', got {kernel!r}")
    aligned = arrays.aligned(x, 16) and arrays.aligned(out, 16)
    if kernel == "float4" and not aligned:
        raise ValueError("kernel='float4' needs x and out on 16-byte boundaries; use kernel='auto' to fall back")
    vec = kernel == "float4" or (kernel == "auto" and aligned)
    name = "scale_grid_stride_float4" if vec else "scale_grid_stride_scalar"
    n = arrays.size(x)
    if n == 0:
        return out
    if waves is not None:
        if not waves > 0:
            raise ValueError(f"waves: expected a positive number, got {waves!r}")
        grid = max(1, round(waves * wave(int(threads), name)))
    elif blocks is None or blocks == "per_element":
        grid = max(1, math.ceil((n // 4 if vec else n) / threads))
    elif isinstance(blocks, (int, np.integer)) and 1 <= blocks <= MAX_GRID_X:
        grid = int(blocks)
    else:
        raise ValueError(f"blocks: expected 1..{MAX_GRID_X}, 'per_element' or None, got {blocks!r}")
    _kernel(name)((grid,), (int(threads),), (x, out, np.float32(ALPHA), np.int64(n)))
    return out


@triton.jit
def scale_kernel(x_ptr, y_ptr, alpha, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, alpha * tl.load(x_ptr + offs, mask=mask), mask=mask)


def scale_triton(x, out=None, *, block: int = 1024, num_warps: int = 4):
    """Triton picks the launch differently: BLOCK elements per program (a 'block size' in elements) and num_warps."""
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), device=dev)
    out = arrays.check_out(out, x.shape, "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), device=dev)
    n = arrays.size(x)
    if n:
        launch(scale_kernel, (triton.cdiv(n, block),), x, out, ALPHA, n, BLOCK=block, num_warps=num_warps)
    return out


def peer_cupy(x, out=None):
    import cupy

    out = arrays.check_out(out, x.shape, "float32", x)
    return cupy.multiply(x, np.float32(ALPHA), out=out)


VARIANTS = [
    lab.Variant("cuda b256 x 1 wave (grid-stride)", lambda x, out=None: scale(x, out, threads=256, waves=1), "cuda"),
    lab.Variant("cuda b32 x 1/8 wave (grid-stride)", lambda x, out=None: scale(x, out, threads=32, waves=1 / 8),
                "cuda"),
    lab.Variant("cuda b1024 x one float4 per thread", lambda x, out=None: scale(x, out, threads=1024), "cuda"),
    lab.Variant("cuda b128 scalar kernel, 2 waves", lambda x, out=None: scale(x, out, threads=128, waves=2,
                                                                               kernel="scalar"), "cuda"),
    lab.Variant("triton BLOCK=1024", scale_triton, "triton"),
]
PEERS = [lab.Variant("cupy.multiply", peer_cupy, "peer")]
CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D]
CPU_CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D_SMALL]


# ---------------------------------------------------------------------------------------------------------------------
# The model: Little's law with one 16-byte load in flight per resident thread
# ---------------------------------------------------------------------------------------------------------------------
def little_gbps(resident_threads: float, latency_us: float, ceiling_gbps: float) -> float:
    """Bandwidth the kernel can draw: bytes in flight / latency, capped at the ceiling. Loads only: each 16 B read
    comes with a 16 B write, so the GB/s counting both is twice the read rate."""
    return min(ceiling_gbps, 2 * resident_threads * BYTES_IN_FLIGHT_PER_THREAD / (latency_us * 1e3))


def implied_latency_us(resident_threads: float, gbps: float) -> float:
    return 2 * resident_threads * BYTES_IN_FLIGHT_PER_THREAD / (gbps * 1e3)


def tail_model(w: float, wave_blocks: int, threads: int, latency_us: float, ceiling_gbps: float) -> float:
    """Predicted time of a w-wave grid relative to one full wave: full waves at the full-residency bandwidth, then
    the last partial wave with only its own blocks resident (spread over the SMs)."""
    full_bw = little_gbps(wave_blocks * threads, latency_us, ceiling_gbps)
    whole, frac = int(math.floor(w + 1e-9)), w - math.floor(w + 1e-9)
    t = whole * 1.0
    if frac > 1e-9:
        t += frac * full_bw / little_gbps(frac * wave_blocks * threads, latency_us, ceiling_gbps)
    return t


# ---------------------------------------------------------------------------------------------------------------------
# GPU: benchmarks
# ---------------------------------------------------------------------------------------------------------------------
def heat_map(n: int, ceiling_gbps: float) -> list[dict]:
    """GB/s for every block size x grid size (grid-stride grids in waves, and one float4 per thread)."""
    import cupy

    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    rows = []
    configs = [(b, w) for b in BLOCK_SIZES for w in list(WAVES) + ["per_element"]]
    for b, w in cli.progress(configs, "block x grid"):
        wb = wave(b)
        grid = max(1, math.ceil((n // 4) / b)) if w == "per_element" else max(1, round(w * wb))
        t = bench.bench(lambda: scale(x, y, threads=b, blocks=grid), rep_ms=30, warmup_ms=10)
        resident = min(grid, wb) * b
        g = t.gbps(8 * n)
        rows.append(report.row(LAB, f"b{b} {'1 float4/thread' if w == 'per_element' else f'{w:g} wave'}", "cuda",
                               (n,), "float32", t, nbytes=8 * n, flops=n, ceiling_gbps=ceiling_gbps, threads=b,
                               grid=grid, waves=grid / wb, resident_threads=resident,
                               pred_gbps=little_gbps(resident, ASSUMED_LATENCY_US, ceiling_gbps),
                               implied_latency_us=implied_latency_us(resident, g)))
    return rows


def fitted_latency(rows: list[dict], ceiling_gbps: float) -> float:
    """Median implied latency over the clearly latency-bound cells (< 60% of the ceiling, grid within one wave)."""
    pts = [r["implied_latency_us"] for r in rows if r["gbps"] < 0.6 * ceiling_gbps and r["waves"] <= 1.0]
    return statistics.median(pts) if pts else ASSUMED_LATENCY_US


def tail_effect(ceiling_gbps: float, latency_us: float, threads: int = 256, iters: int = TAIL_ITERS,
                waves_list=TAIL_WAVES) -> list[dict]:
    """Fixed work per block (iters float4 per thread); the grid grows by fractions of a wave."""
    import cupy

    wb = wave(threads)
    per_block = threads * iters * 4                   # floats per block
    grids = [max(1, round(w * wb)) for w in waves_list]
    nmax = max(grids) * per_block
    x = cupy.random.standard_normal(nmax, dtype=cupy.float32)
    y = cupy.empty_like(x)
    rows = []
    for w, grid in cli.progress(list(zip(waves_list, grids)), "tail"):
        n = grid * per_block
        xs, ys = x[:n], y[:n]
        t = bench.bench(lambda: scale(xs, ys, threads=threads, blocks=grid), rep_ms=30, warmup_ms=10)
        rows.append(report.row(LAB + "_tail", f"{grid / wb:.3g} waves", "cuda", (n,), "float32", t, nbytes=8 * n,
                               ceiling_gbps=ceiling_gbps, threads=threads, grid=grid, waves=grid / wb,
                               wave_blocks=wb))
    t1 = next(r["ms"] for r in rows if abs(r["waves"] - 1) < 1e-9)
    for r in rows:
        w = r["waves"]
        r["time_in_waves"] = r["ms"] / t1
        r["quantized_model"] = float(math.ceil(w - 1e-9))
        r["fluid_model"] = w
        r["little_model"] = tail_model(w, wb, threads, latency_us, ceiling_gbps)
        frac = w - math.floor(w + 1e-9)
        r["tail_cost"] = ((r["time_in_waves"] - w) / (math.ceil(w - 1e-9) - w)) if frac > 1e-9 and w > 1 else None
    return rows


def plot_heat(rows: list[dict], path: str, ceiling_gbps: float) -> str:
    plt = report.pyplot()
    cols = [f"{w:g}" for w in WAVES] + ["1 float4\n/thread"]
    grid = np.array([[r["gbps"] for r in rows if r["threads"] == b] for b in BLOCK_SIZES])
    fig, ax = plt.subplots(figsize=(9, 4.8))
    im = ax.imshow(grid, cmap="viridis", aspect="auto", vmin=0, vmax=ceiling_gbps)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            ax.text(j, i, f"{grid[i, j]:.0f}", ha="center", va="center", fontsize=8,
                    color="white" if grid[i, j] < 0.6 * ceiling_gbps else "black")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(cols, fontsize=8)
    ax.set_yticks(range(len(BLOCK_SIZES)))
    ax.set_yticklabels([str(b) for b in BLOCK_SIZES])
    ax.set_xlabel("grid size (waves of resident blocks; grid-stride loop)")
    ax.set_ylabel("threads per block")
    ax.set_title(f"y = a*x, {rows[0]['shape'][0]:,} fp32, GB/s on {device.info().name} (ceiling {ceiling_gbps:.0f})",
                 fontsize=10)
    fig.colorbar(im, ax=ax, label="GB/s")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_tail(rows: list[dict], path: str) -> str:
    xs = [r["waves"] for r in rows]
    return report.plot_lines(path, xs, {"measured time / time of 1 wave": [r["time_in_waves"] for r in rows],
                                        "quantized: ceil(waves)": [r["quantized_model"] for r in rows],
                                        "fluid: waves": [r["fluid_model"] for r in rows],
                                        "Little's law (fitted latency)": [r["little_model"] for r in rows]},
                             xlabel="grid size in waves (256 threads, fixed work per block)",
                             ylabel="time in units of one full wave", logx=False,
                             title=f"Tail effect on {device.info().name}", xticks=[0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4])


# ---------------------------------------------------------------------------------------------------------------------
# Without a GPU
# ---------------------------------------------------------------------------------------------------------------------
def show_occupancy(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="scale_grid_stride_float4")
    regs = rep["scale_grid_stride_float4"].registers
    a = device.arch_info(arch)
    rows = []
    for b in BLOCK_SIZES:
        nb, why = resident_blocks(arch, b, regs)
        threads = nb * b * a.example_sms
        rows.append({"threads/block": b, "blocks/SM": nb, "limited by": why, "occupancy": nb * b / a.max_threads_per_sm,
                     f"wave ({a.example_sms} SMs)": nb * a.example_sms, "resident threads": threads,
                     f"pred GB/s (L={ASSUMED_LATENCY_US} us)": little_gbps(threads, ASSUMED_LATENCY_US,
                                                                           a.example_hbm_gbps * 0.9)})
    report.print_table(rows, title=f"{a.arch} ({a.example_gpu}): one wave of scale_grid_stride_float4 ({regs} registers"
                                   f"), predicted with Little's law, capped at 90% of {a.example_hbm_gbps:.0f} GB/s")
    wb = rows[3][f"wave ({a.example_sms} SMs)"]
    tail = [{"waves": w, "quantized": math.ceil(w - 1e-9), "fluid": w,
             "Little's law": tail_model(w, wb, 256, ASSUMED_LATENCY_US, a.example_hbm_gbps * 0.9)}
            for w in (1, 1.1, 1.25, 1.5, 2, 2.1)]
    report.print_table(tail, title="tail effect, predicted time in units of one full wave (256-thread blocks)")


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True, size_help="n of the heat map (default 2^27, quick 2^24)")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:3] if args.quick else CPU_CHECK_CASES)
        show_occupancy(args.arch)
        print("\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter. The tables "
              "above are predictions: the GPU run measures the heat map and the tail.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[:6] if args.quick else CHECK_CASES)
    show_occupancy(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    ceiling = bench.ceilings()
    c = ceiling["hbm_gbps"]
    n = args.size or (2**24 if args.quick else MAIN_N)
    heat = heat_map(n, c)
    import cupy

    cupy.get_default_memory_pool().free_all_blocks()
    report.print_table(heat, ["variant", "threads", "grid", "waves", "resident_threads", "ms", "gbps",
                              "frac_ceiling", "pred_gbps", "implied_latency_us"],
                       title=f"heat map: y = a*x on {n:,} fp32, measured ceiling {c:.0f} GB/s; pred_gbps assumes "
                             f"{ASSUMED_LATENCY_US} us of latency")
    lat = fitted_latency(heat, c)
    print(f"-> latency implied by the latency-bound cells (median): {lat:.2f} us "
          f"(a priori assumption: {ASSUMED_LATENCY_US} us)")
    tail = tail_effect(c, lat, waves_list=(0.5, 1, 1.25, 1.5, 2, 2.1) if args.quick else TAIL_WAVES)
    report.print_table(tail, ["variant", "grid", "ms", "gbps", "time_in_waves", "quantized_model", "fluid_model",
                              "little_model", "tail_cost"],
                       title=f"tail effect: {TAIL_ITERS} float4 per thread, 256-thread blocks, 1 wave = "
                             f"{tail[0]['wave_blocks']} blocks (tail_cost: 0 = no tail penalty, 1 = a whole wave)")
    best = {}
    for r in heat:
        if r["threads"] not in best or r["gbps"] > best[r["threads"]]["gbps"]:
            best[r["threads"]] = r
    report.print_table([{"threads/block": b, "best grid": r["variant"], "GB/s": r["gbps"], "of ceiling": r["gbps"] / c}
                        for b, r in best.items()], title="how to choose: the best grid for each block size")
    if args.json:
        print("wrote", report.write_json(LAB, heat + tail, out_dir=out_dir, ceiling=ceiling, fitted_latency_us=lat,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot_heat(heat, os.path.join(out_dir, f"{LAB}.png"), c))
        print("wrote", plot_tail(tail, os.path.join(out_dir, f"{LAB}_tail.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
