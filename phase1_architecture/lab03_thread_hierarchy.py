"""Lab 1.3 - Thread, warp, block, grid: where every thread runs, when, and what a divergent branch costs.

You will learn
  * how a launch is cut up: a grid of blocks, a block of threads (1-D or 2-D), and warps of 32 threads cut from the
    block's LINEARIZED thread index (x fastest): a (16, 4) block's warp 0 is rows y = 0 and 1;
  * that the hardware tells you where a thread is: %laneid, %smid, and two clocks - clock64() (per-SM cycles, not
    comparable across SMs) and %globaltimer (GPU-wide nanoseconds, good for a timeline);
  * how blocks are dealt to SMs: a block is resident on one SM until it finishes; an SM holds as many blocks as its
    resources allow (lab 1.5), and a grid larger than that runs in waves - the timeline plot shows them (on the H200
    only the first wave was clean; see below);
  * warp divergence, measured: a warp executes one instruction stream, so when its lanes disagree on a branch it runs
    both sides one after the other, with the other lanes masked off. The same code, branching on the parity of the
    element, costs 2x when consecutive lanes take different sides (div_01) and 1x when whole warps do (div_02).
    Triton has no per-thread branches: `tl.where` computes both sides as written - unless the compiler can prove
    which side each element takes, as it can here (see below).

The two numbers, for the divergence benchmark (n = 2^22 int32 elements, 256 rounds of a 5-instruction hash):
bytes = 8 n = 32 MiB, floating-point FLOPs = 0, integer operations = 5 x 256 n = 5.4 G. The prediction takes the
integer rate of an H200 as ~64 per clock per SM for all five instructions: 132 x 64 x 1.98 GHz = 16.7 T ops/s, so
the arithmetic takes ~0.32 ms against ~8 us for the bytes at 4.4 TB/s: compute-bound by 40x, and every extra
instruction slot a divergent warp spends shows up in full. Predicted: uniform ~0.32 ms, divergent ~0.64 ms (2.0x).

Measured on an H200 (results/h200/phase1_lab03_thread_hierarchy.json, commit 173e2d9, 3 interleaved rounds):
  * divergence: div_01 0.567 ms, div_02 0.288 ms, 1.97x - the 2.0x prediction held within 2%. Both ran ~12% faster
    than predicted (0.642 and 0.321 ms): the uniform kernel retired 18.6 T integer ops/s, 71 per clock per SM, not
    64. The likely reason is in the SASS: a round is SHF, LOP3, IMAD, SHF, LOP3, and IMAD issues to the FMA pipe,
    not the 64-lane integer ALU, so only four of the five (plus the loop's counter and compare, ~0.5 a round at
    4x unrolling) queue for the ALU: 5 / 4.5 x 64 = 71.
  * Triton's tl.where "over both sides" took 0.280 ms, 0.97x the uniform kernel, not the predicted 2x. Triton did
    not run both hashes: each thread holds its 8 elements in runs of 4 consecutive ones that start at a multiple of 4
    (the layout Triton picks for 16-byte-aligned data), so the parity of each is known at compile time, the select
    folds away and each element's unused hash is dead code (a compile for sm_90 shows 8 multiplies per round for the
    8 elements, and no select). The 10.7 G int_ops in the JSON count both sides as written; it ran half of them, as
    8 independent chains a thread. A condition the compiler cannot see through (a data-dependent one) would make
    Triton pay for both sides.
  * mapping: %laneid equalled (tx + ty * 16) % 32 for all 192 threads of 3 blocks of (16, 4); blocks 0, 1 and 2 ran
    on SMs 128, 124 and 126 (blocks are not dealt out in %smid order); %globaltimer advanced in 32 ns steps.
  * timeline (2,640 blocks of 256 threads, each spinning 20 us): at most 8 blocks were resident on one SM, as the
    calculator of lab 1.5 predicts, and all 132 SMs were used. The first 1,056 blocks (8 x 132) started together and
    ran 0-20 us; the other 1,584 did not follow as two clean waves: after a pause of a few us they were started
    gradually (over ~24-68 us in the timeline plot), so the SMs ran partly empty, the kernel spanned 88.1 us against
    the 60 us of 3 ideal waves, and the lab's gap counter saw 2 waves, not 3. The likely reason is that refilling
    1,056 freed slots is limited by how fast the block scheduler hands out blocks, which the ideal-waves model
    ignores; this run does not isolate it.

Run: python -m phase1_architecture.lab03_thread_hierarchy [--quick] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, occupancy, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase1_lab03_thread_hierarchy"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab03_thread_hierarchy.cu")
THREADS = 256
NFIELDS = 10
FIELDS = ("block", "tx", "ty", "tid", "warp", "lane", "sm", "clock0", "gtime0_ns", "gtime1_ns")
HASH_EVEN = (16, 0x7FEB352D, 13)     # shift, multiplier, shift: must match hash_even in the .cu file
HASH_ODD = (15, 0x846CA68B, 11)
ROUNDS_CHECK = 24                    # rounds in the correctness checks (the reference runs in NumPy)
BENCH_N, BENCH_ROUNDS = 2**22, 256


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs (the divergence kernels are the checkable part of this lab)
# ---------------------------------------------------------------------------------------------------------------------
def _hash(v: np.ndarray, rounds: int, s1: int, mul: int, s2: int) -> np.ndarray:
    v = v.copy()
    for _ in range(rounds):
        v ^= v >> np.uint32(s1)
        v *= np.uint32(mul)          # uint32 arithmetic wraps modulo 2^32, like the GPU's
        v ^= v >> np.uint32(s2)
    return v


def reference(x, rounds: int) -> np.ndarray:
    """out[i] = even-hash(x[i]) for even i, odd-hash(x[i]) for odd i; int32 bit patterns returned as float64."""
    u = np.asarray(x).astype(np.int64).astype(np.uint32).ravel()    # the int32 values' bits
    i = np.arange(u.size)
    out = np.where(i % 2 == 0, _hash(u, rounds, *HASH_EVEN), _hash(u, rounds, *HASH_ODD))
    return out.view(np.int32).astype(np.float64).reshape(np.shape(x))


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str, rounds: int = ROUNDS_CHECK):
    """Random 32-bit words (the whole range: every bit matters to a hash) and the round count."""
    x = rng.integers(-2**31, 2**31, size=n, dtype=np.int64).astype(np.int32)
    return arrays.from_numpy(x, "int32", where), rounds


def out_dtype(dtype: str) -> str:
    return "int32"


def tolerance(size, dtype) -> check.Tol:
    return check.Tol(0.0, 0.0)   # integer hashes: every bit must match


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(x, rounds, out):
    arrays.check_array("x", x, dtypes=("int32", "uint32"), libs=("cupy",))
    if not isinstance(rounds, (int, np.integer)) or isinstance(rounds, bool) or not 0 <= rounds < 2**31:
        raise ValueError(f"rounds: expected an integer in [0, 2^31), got {rounds!r}")
    out = arrays.check_out(out, x.shape, arrays.dtype_name(x), x)
    arrays.check_array("out", out, dtypes=("int32", "uint32"), libs=("cupy",))
    return out, arrays.size(x)


def div_cuda_01(x, rounds, out=None):
    """Branch on the element's parity with thread = element: every warp diverges."""
    out, n = _prepare(x, rounds, out)
    if n == 0:
        return out
    k = cuda.get_kernel(CU, "div_01_branch_on_lane_parity")
    k((math.ceil(n / THREADS),), (THREADS,), (x, out, np.int64(n), np.int32(rounds)))
    return out


def div_cuda_02(x, rounds, out=None):
    """Same branch, threads remapped so each warp holds only even or only odd elements: no divergence."""
    out, n = _prepare(x, rounds, out)
    if n == 0:
        return out
    threads_needed = 64 * math.ceil(n / 64)           # warps come in (even, odd) pairs of 64 elements
    k = cuda.get_kernel(CU, "div_02_branch_on_warp_index")
    k((math.ceil(threads_needed / THREADS),), (THREADS,), (x, out, np.int64(n), np.int32(rounds)))
    return out


def whoami(n: int, block=(THREADS, 1), spin_cycles: int = 0):
    """Launch hier_01_whoami over n threads; returns a (n, 10) int64 CuPy array of records (see FIELDS)."""
    import cupy

    bx, by = (block, 1) if isinstance(block, int) else tuple(block)
    if not (1 <= bx <= 1024 and 1 <= by <= 1024 and bx * by <= 1024):
        raise ValueError(f"block: expected (x, y) with 1 <= x * y <= 1024, got {block!r}")
    if n < 0 or spin_cycles < 0:
        raise ValueError(f"n and spin_cycles must be >= 0, got {n}, {spin_cycles}")
    blocks = math.ceil(n / (bx * by))
    if blocks > 2**31 - 1:
        raise ValueError(f"n: {n} threads need {blocks} blocks, more than gridDim.x allows (2^31 - 1)")
    rec = cupy.full((n, NFIELDS), -1, dtype=cupy.int64)
    if n:
        k = cuda.get_kernel(CU, "hier_01_whoami")
        k((blocks,), (bx, by), (rec, np.int64(n), np.int64(spin_cycles)))
    return rec


# ---------------------------------------------------------------------------------------------------------------------
# Triton: one program per BLOCK elements; no per-thread control flow, so both hashes are written for every element.
# Whether both are computed is the compiler's call: here each thread's elements come in aligned runs of 4, their
# parities are compile-time constants, the select folds and the unused hash is removed (measured on an H200: 0.280 ms,
# 0.97x the uniform CUDA kernel, not 2x; results/h200/phase1_lab03_thread_hierarchy.json).
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def both_hashes_kernel(x_ptr, y_ptr, n, rounds, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    a = v
    b = v
    for _ in range(rounds):
        a = a ^ (a >> 16)
        a = a * 0x7FEB352D
        a = a ^ (a >> 13)
        b = b ^ (b >> 15)
        b = b * 0x846CA68B
        b = b ^ (b >> 11)
    # the "branch": a select between two values that were both written (the compiler folds it when it can tell the
    # parity of each of a thread's elements, and then drops the hash the select never picks)
    out = tl.where((offs & 1) == 0, a, b)
    tl.store(y_ptr + offs, out.to(tl.int32, bitcast=True), mask=mask)


TRITON_BLOCK = 1024


def div_triton(x, rounds, out=None):
    """Triton: tl.where over both hashes. Written as the cost of the divergent version, but the parity of each of a
    thread's elements is known at compile time, so the select folds and only one hash runs per element (H200: 0.97x
    the uniform CUDA kernel)."""
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("int32",), device=dev)
    if not isinstance(rounds, (int, np.integer)) or isinstance(rounds, bool) or not 0 <= rounds < 2**31:
        raise ValueError(f"rounds: expected an integer in [0, 2^31), got {rounds!r}")
    out = arrays.check_out(out, x.shape, "int32", x)
    n = arrays.size(x)
    if n == 0:
        return out
    launch(both_hashes_kernel, (triton.cdiv(n, TRITON_BLOCK),), x, out, n, int(rounds), BLOCK=TRITON_BLOCK,
           num_warps=4)
    return out


VARIANTS = [
    lab.Variant("cuda 01 branch on lane parity (divergent)", div_cuda_01, "cuda", dtypes=("int32",)),
    lab.Variant("cuda 02 branch on warp index (uniform)", div_cuda_02, "cuda", dtypes=("int32",)),
    lab.Variant("triton tl.where (both sides)", div_triton, "triton", dtypes=("int32",)),
]
CHECK_CASES = [(n, "int32") for n in (1, 2, 31, 33, 63, 64, 65, 1000, 4097, 65537, 1_000_003)]
CPU_CHECK_CASES = [(n, "int32") for n in (1, 3, 64, 1025)]


# ---------------------------------------------------------------------------------------------------------------------
# The mapping: a table of a few threads, and a check of the warp rule over all of them
# ---------------------------------------------------------------------------------------------------------------------
MAP_BLOCK = (16, 4)       # a 2-D block: warps are cut from the linear index tx + ty * 16
MAP_BLOCKS = 3


def predicted_records(block=MAP_BLOCK, blocks=MAP_BLOCKS) -> np.ndarray:
    """What hier_01_whoami writes for the deterministic fields (block, tx, ty, tid, warp, lane); -1 for the rest."""
    bx, by = block
    rows = []
    for b in range(blocks):
        for ty in range(by):
            for tx in range(bx):
                tid = tx + ty * bx
                rows.append([b, tx, ty, tid, tid // 32, tid % 32, -1, -1, -1, -1])
    return np.array(rows, dtype=np.int64)


def mapping_table(rec: np.ndarray, block=MAP_BLOCK) -> list[dict]:
    """A few telling rows: both sides of the first warp boundary, the end of a block, the next block's start."""
    bx, by = block
    per = bx * by
    want = [0, 1, bx - 1, bx, 31, 32, per - 1, per, 2 * per]
    rows = []
    for r in want:
        if r < len(rec):
            d = dict(zip(FIELDS[:7], (int(v) for v in rec[r][:7])))
            if d["sm"] < 0:
                d["sm"] = "? (GPU only)"
            rows.append(d)
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# The timeline: blocks that spin for a fixed time, more of them than the GPU holds at once
# ---------------------------------------------------------------------------------------------------------------------
def timeline(spin_us: float = 20.0, waves: float = 2.5) -> dict:
    """Launch ~`waves` waves of blocks that each stay resident ~spin_us; return per-block SM, start, end (ns)."""
    d = device.info()
    k = cuda.get_kernel(CU, "hier_01_whoami")
    occ = occupancy.occupancy(d.arch, THREADS, int(k.num_regs), int(k.shared_size_bytes))
    per_wave = d.sms * occ.blocks_per_sm
    blocks = int(waves * per_wave)
    spin = int(spin_us * d.sm_clock_mhz)
    rec = whoami(blocks * THREADS, (THREADS, 1), spin).get().reshape(blocks, THREADS, NFIELDS)
    sm = rec[:, 0, 6]
    start = rec[:, :, 8].min(axis=1)
    end = rec[:, :, 9].max(axis=1)
    t0 = start.min()
    return {"blocks": blocks, "resident_per_sm_predicted": occ.blocks_per_sm, "limiter": occ.limiter,
            "sms": d.sms, "per_wave": per_wave, "spin_us": spin_us, "spin_cycles": spin,
            "sm": sm, "start_us": (start - t0) / 1e3, "end_us": (end - t0) / 1e3,
            "timer_step_ns": _timer_step(rec[:, :, 8].ravel())}


def _timer_step(ts: np.ndarray) -> float:
    """The smallest non-zero difference between %globaltimer readings: its resolution, as seen."""
    u = np.unique(ts)
    d = np.diff(u)
    return float(d[d > 0].min()) if d.size and (d > 0).any() else float("nan")


def timeline_stats(tl_: dict) -> dict:
    sm, s, e = tl_["sm"], tl_["start_us"], tl_["end_us"]
    # the most blocks any SM held at once: sweep its start/end events
    max_conc = 0
    for m in np.unique(sm):
        ev = sorted([(t, 1) for t in s[sm == m]] + [(t, -1) for t in e[sm == m]], key=lambda p: (p[0], p[1]))
        c = 0
        for _, dlt in ev:
            c += dlt
            max_conc = max(max_conc, c)
    order = np.sort(s)
    gaps = np.diff(order)
    waves = 1 + int((gaps > tl_["spin_us"] / 2).sum())
    return {"blocks": tl_["blocks"], "SMs used": int(len(np.unique(sm))), "SMs on the GPU": tl_["sms"],
            "most blocks on one SM at once": max_conc,
            "resident blocks/SM predicted (lab 1.5)": tl_["resident_per_sm_predicted"],
            "waves seen": waves, "waves predicted": math.ceil(tl_["blocks"] / tl_["per_wave"]),
            "kernel span us": float(e.max()), "span predicted us": math.ceil(tl_["blocks"] / tl_["per_wave"]) *
            tl_["spin_us"], "globaltimer step ns": tl_["timer_step_ns"]}


def plot_timeline(tl_: dict, path: str) -> str:
    plt = report.pyplot()
    sm, s, e = tl_["sm"], tl_["start_us"], tl_["end_us"]
    blocks = len(sm)
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(14, 6), gridspec_kw={"width_ratios": [1, 2]})
    first = min(blocks, 3 * tl_["sms"])
    ax0.scatter(np.arange(first), sm[:first], s=6, c=np.arange(first), cmap="viridis")
    ax0.set_xlabel("blockIdx.x")
    ax0.set_ylabel("SM (%smid)")
    ax0.set_title(f"which SM each block ran on (first {first} blocks)", fontsize=10)
    ax0.grid(alpha=0.3)
    # one horizontal segment per block, stacked within its SM's row by a greedy slot assignment
    slot = np.zeros(blocks)
    per = max(1, tl_["resident_per_sm_predicted"])
    for m in np.unique(sm):
        idx = np.where(sm == m)[0]
        idx = idx[np.argsort(s[idx])]
        free_at: list[float] = []
        for b in idx:
            for k, t in enumerate(free_at):
                if t <= s[b]:
                    free_at[k] = e[b]
                    slot[b] = k
                    break
            else:
                free_at.append(e[b])
                slot[b] = len(free_at) - 1
    y = sm + slot / (max(per, slot.max() + 1) + 1)
    cmap = plt.get_cmap("viridis")
    ax1.hlines(y, s, e, colors=cmap(np.arange(blocks) / max(1, blocks - 1)), lw=1.2)
    ax1.set_xlabel("time since the first block started (us, %globaltimer)")
    ax1.set_ylabel("SM (%smid); one line per resident block")
    ax1.set_title(f"{blocks} blocks of {THREADS} threads, each spinning {tl_['spin_us']:.0f} us: "
                  f"{tl_['per_wave']} fit at once ({tl_['resident_per_sm_predicted']}/SM)", fontsize=10)
    ax1.grid(alpha=0.3)
    fig.suptitle(f"{device.info().name}: blocks dealt to SMs in waves (color = blockIdx)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


# ---------------------------------------------------------------------------------------------------------------------
# Divergence benchmark
# ---------------------------------------------------------------------------------------------------------------------
def divergence_bench(n: int, rounds: int) -> tuple[list[dict], list[dict]]:
    import cupy

    x, _ = make_inputs(n, "int32", check.rng(7), "cuda")
    out = cupy.empty_like(x)
    fns = {v.name: (lambda f=v.fn: f(x, rounds, out=out)) for v in VARIANTS}
    ts = bench.interleaved(fns, rounds=3)
    uniform = ts[VARIANTS[1].name].median_ms
    d = device.info()
    int_ops = 5 * rounds * n
    predicted_uniform_ms = int_ops / (d.sms * 64 * d.sm_clock_mhz * 1e6) * 1e3
    rows, targets = [], []
    for v in VARIANTS:
        t = ts[v.name]
        r = report.row(LAB, v.name, v.impl, (n,), "int32", t, nbytes=8 * n)
        r["int_ops"] = int_ops * (2 if "triton" in v.name else 1)
        r["vs_uniform"] = t.median_ms / uniform
        r["predicted_ms"] = predicted_uniform_ms * (1 if "uniform" in v.name else 2)
        rows.append(r)
    ratio = ts[VARIANTS[0].name].median_ms / uniform
    targets.append({"target": "divergent / uniform time = (f + g) / max(f, g)", "predicted": 2.0,
                    "measured": ratio, "met": abs(ratio - 2.0) <= 0.3})
    x = out = None
    return rows, targets


def plot_divergence(rows: list[dict], path: str) -> str:
    return report.plot_bars(path, [r["variant"] for r in rows], [r["ms"] for r in rows], ylabel="ms (median)",
                            title=f"Warp divergence on {device.info().name}: n = {rows[0]['shape'][0]}, same work",
                            colors=[report.IMPL_COLORS[r["impl"]] for r in rows],
                            hlines={"predicted uniform": rows[1]["predicted_ms"],
                                    "predicted divergent": rows[0]["predicted_ms"]}, annotate_fmt="{:.3f}")


# ---------------------------------------------------------------------------------------------------------------------
def show_compile_report(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="div_01_branch_on_lane_parity")
    k1 = rep.kernels.get("div_01_branch_on_lane_parity")
    if k1 is not None and k1.sass:
        bssy = sum(1 for s in k1.sass if s.split()[0].startswith(("BSSY", "BSYNC")))
        print(f"-> div_01 has {bssy} BSSY/BSYNC instructions: the compiler marks where the two sides of the branch "
              "re-converge, because lanes of one warp may take different sides. The even and odd hash loops are two "
              "separate loops in the SASS (multipliers 0x7feb352d and 0x846ca68b): a divergent warp runs both.")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True, size_help=f"elements of the divergence benchmark "
                                                                  f"(default {BENCH_N})")
    p.add_argument("--rounds", type=int, default=BENCH_ROUNDS, help="hash rounds per element in the benchmark")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:2] if args.quick else CPU_CHECK_CASES)
        show_compile_report(args.arch)
        report.print_table(mapping_table(predicted_records()),
                           title=f"What hier_01_whoami records for blocks of {MAP_BLOCK} threads (computed: no GPU)")
        print("warp = (tx + ty * blockDim.x) // 32, lane = the same % 32: the first warp of a (16, 4) block is rows "
              "ty = 0 and 1.\nOn a GPU the lab also records %smid and %globaltimer, draws the block -> SM timeline, "
              "and times the two branches (predicted: divergent = 2.0x uniform).")
        print("\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS, CHECK_CASES[:6] if args.quick else CHECK_CASES)
    show_compile_report(args.arch)
    rec = whoami(MAP_BLOCKS * MAP_BLOCK[0] * MAP_BLOCK[1], MAP_BLOCK).get()
    want = predicted_records()
    rule_ok = bool(np.array_equal(rec[:, :6], want[:, :6]))
    ok &= rule_ok
    report.print_table(mapping_table(rec), title=f"hier_01_whoami, {MAP_BLOCKS} blocks of {MAP_BLOCK} threads "
                                                 "(selected rows)")
    print(f"%laneid and the formula (tx + ty * bx) % 32 agree for all {len(rec)} threads: {rule_ok}")
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    os.makedirs(out_dir, exist_ok=True)
    tl_ = timeline(spin_us=10.0 if args.quick else 20.0)
    stats = timeline_stats(tl_)
    report.print_table([{"quantity": k, "value": v} for k, v in stats.items()], title="Blocks on SMs over time")
    n = args.size or (2**20 if args.quick else BENCH_N)
    rows, targets = divergence_bench(n, args.rounds)
    report.print_table(rows, ["variant", "impl", "ms", "predicted_ms", "vs_uniform", "spread"],
                       title=f"Warp divergence: n = {n}, {args.rounds} rounds (interleaved rounds)")
    report.print_table(targets, title="Prediction vs measurement")
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, targets=targets, timeline=stats,
                                         mapping=mapping_table(rec), device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot_timeline(tl_, os.path.join(out_dir, f"{LAB}_timeline.png")))
        print("wrote", plot_divergence(rows, os.path.join(out_dir, f"{LAB}_divergence.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
