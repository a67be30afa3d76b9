"""Lab 2.3 - Warp shuffle: warp-level reduce and scan in registers, against the shared-memory versions.

You will learn
  * what a warp shuffle is: one instruction that moves a register between the 32 lanes of a warp, with no memory and
    no barrier; __shfl_down_sync (lane i reads lane i + d), __shfl_xor_sync (lanes i and i ^ m swap: a butterfly,
    every lane ends with the result) and __shfl_up_sync (lane i reads lane i - d: the scan);
  * what the mask means (the lanes that execute the call, all 32 here), why tail lanes must load 0 and stay in the
    loop instead of returning, and why no __syncthreads is needed (nothing leaves the warp), while the shared-memory
    versions still need __syncwarp between steps (since Volta, the lanes of a warp are not guaranteed to run in
    lockstep, so a store by one lane is not guaranteed visible to another without it);
  * the cost model: 11 shared-memory passes per 32-element segment for the tree in shared memory vs 5 shuffles, at
    one pass per clock per SM; an H200 delivers a segment from HBM every ~8 SM clocks, so even streaming from HBM the
    shared-memory version should be the slower one (predicted ~70% of the ceiling; measured 54%), and more so from L2
    (a regime this lab's timer could not show on the H200: see the measurements below);
  * how warp primitives compose into a scan of an array of any length: sum each segment of 32, scan the sums (the same
    two kernels on an array 32x shorter, recursively), then scan each segment and add its offset.

The two numbers, for n fp32 elements (main case n = 2^28, 1 GiB): per-warp sums read 4 n bytes and write n / 8 (about
1.1 GB), with 31 adds per 32 elements (0.26 GFLOP): 0.24 FLOP/B, memory wins; ~0.25 ms at ~4.3 TB/s. An inclusive
scan must read 4 n and write 4 n bytes (2.15 GB) and do n adds: memory wins again, ~0.5 ms at the ceiling. The
reduce-then-scan built here moves ~12.6 n bytes (x is read twice), so it is bound at 8 / 12.6 = 63% of the speed of
a one-pass scan running at the ceiling (torch.cumsum uses CUB's single-pass decoupled look-back scan, which reads x
once; on the H200 it ran well below the ceiling, so the bound did not bite: see below).

Measured on an H200 (results/h200/phase2_lab03_warp_shuffle.json, n = 2^28, HBM ceiling 4,341 GB/s). Warp sums alone:
the shared-memory tree 2,349 GB/s (0.541 of the ceiling), shfl_down 3,531 (0.813), shfl_xor 3,897 (0.898), Triton's
tl.sum 4,189 (0.965). The tree lost, as predicted, but by more: 0.471 ms against the 0.353 ms of its 11-pass model,
~14.7 SM clocks per segment instead of 11 (likely because each of its 5 steps is a dependent load -> add -> store chain
closed by a __syncwarp, so the pipe does not stay full). The shuffle kernels fell short of "~the ceiling": 03 by 10%, 02
by 19% (also the noisiest row, 4% spread). 02 and 03 differ essentially only in how the sums are stored - eight
single-lane stores per warp against one coalesced store - so that is the likely cause of the gap between them; the same
~0.03 ms gap reappears in the full scans. The L2-resident rows (2^22 elements, L2 not flushed) measured the host, not
the kernels: all three CUDA kernels took 0.034 ms (~515 GB/s) and Triton 0.016 ms, most likely the cost of a launch from
Python (the CuPy wrappers validate their arguments on every call; common/bench.py warns that a call shorter on the GPU
than on the host times the host), far above the few microseconds 16 MiB take from L2; the shared-memory vs shuffle
contrast from L2 remains a prediction. Inclusive scan (GB/s counts the 8 n bytes that must move): shared memory 1,965
GB/s, shfl_down + shfl_up 2,457, shfl_xor + shfl_up 2,533 (0.98x torch.cumsum), Triton 2,617 (1.01x), torch.cumsum 2,584
(0.595 of the ceiling), cupy.cumsum 1,096. The 63% bound assumed a one-pass scan at the ceiling; torch.cumsum reached
only 60%, while our two-pass scan streamed its ~12.6 n bytes at 4.0 TB/s (0.92 of the ceiling): reading x twice at full
speed tied a one-pass scan that does not run at full speed.

Run: python -m phase2_cuda.lab03_warp_shuffle [--quick] [--size N] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase2_lab03_warp_shuffle"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab03_warp_shuffle.cu")
SEGS, WARPS = 8, 8                  # the .cu defaults: 8 segments of 32 per warp, 8 warps per block
SEGMENTS_PER_BLOCK = SEGS * WARPS
MAIN_N = 2**28
# shared-memory passes / shuffles per 32-element segment (from the kernels' structure; see the .cu headers)
PASSES = {"reduce smem": 1 + 5 * 2, "reduce shfl": 5, "scan smem": 1 + 5 * 2, "scan shfl": 5}


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs: (per-warp sums, inclusive scan)
# ---------------------------------------------------------------------------------------------------------------------
def segment_count(n: int) -> int:
    return (int(n) + 31) // 32


def reference(x: np.ndarray):
    x = np.asarray(x, np.float64).ravel()
    w = segment_count(x.size)
    padded = np.zeros(w * 32)
    padded[: x.size] = x
    return padded.reshape(w, 32).sum(axis=1), np.cumsum(x)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """Zero-mean values: a scan's prefix sums then stay O(sqrt(i)), so an element that is off by one input value
    stands out against the tolerance (with a large mean, |prefix| grows like i and would hide it).

    The values are non-zero integers in [-8, 8], so every sum and prefix is exact in float32 in any order (they stay
    far below 2^24): with normal values a 32-element warp sum can cancel to near zero, where a correct kernel's
    last-bit rounding exceeds the relative tolerance.
    """
    x = rng.integers(1, 9, size=int(n)) * rng.choice([-1.0, 1.0], size=int(n))
    return (arrays.from_numpy(x, dtype, where),)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C: reduce-then-scan, driven from the host
# ---------------------------------------------------------------------------------------------------------------------
REDUCE = {"smem": "warp_reduce_01_smem", "down": "warp_reduce_02_shfl_down", "xor": "warp_reduce_03_shfl_xor"}
SCAN = {"smem": "warp_scan_01_smem", "up": "warp_scan_02_shfl_up"}


def _blocks(n: int) -> int:
    return max(1, math.ceil(segment_count(n) / SEGMENTS_PER_BLOCK))


def warp_sums(x, out=None, *, kind: str = "down"):
    """sums[g] = x[32 g] + ... + x[32 g + 31] with one of the warp_reduce kernels ('smem', 'down', 'xor')."""
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=("cupy",))
    if kind not in REDUCE:
        raise ValueError(f"kind: expected one of {sorted(REDUCE)}, got {kind!r}")
    n = arrays.size(x)
    out = arrays.check_out(out, (segment_count(n),), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    if n:
        cuda.get_kernel(CU, REDUCE[kind])((_blocks(n),), (32 * WARPS,), (x, out, np.int64(n)))
    return out


def _scan_into(x, y, sums, reduce_kind: str, scan_kind: str) -> None:
    """y = inclusive scan of x; sums (length ceil(n / 32)) receives the segment sums on the way."""
    import cupy

    n = arrays.size(x)
    warp_sums(x, sums, kind=reduce_kind)
    w = segment_count(n)
    if w > 1:
        offsets = cupy.empty(w, cupy.float32)                    # inclusive scan of the segment sums ...
        _scan_into(sums, offsets, cupy.empty(segment_count(w), cupy.float32), reduce_kind, scan_kind)
    else:
        offsets = sums                                           # ... not needed for one segment (never read)
    cuda.get_kernel(CU, SCAN[scan_kind])((_blocks(n),), (32 * WARPS,), (x, offsets, y, np.int64(n)))


def _split_out(out):
    """out is None or a (sums, scan) pair."""
    if out is None:
        return None, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"out: expected a (sums, scan) pair of arrays, got {type(out).__name__}")
    return out


def _prepare(x, out):
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, libs=("cupy",))
    n = arrays.size(x)
    sums, y = _split_out(out)
    sums = arrays.check_out(sums, (segment_count(n),), "float32", x, name="out[0] (sums)")
    y = arrays.check_out(y, (n,), "float32", x, name="out[1] (scan)")
    for name, o in (("out[0] (sums)", sums), ("out[1] (scan)", y)):
        arrays.check_array(name, o, dtypes=("float32",), ndim=1, libs=("cupy",))
    if n and (arrays.ptr(y) == arrays.ptr(x)):
        raise ValueError("out[1] (scan): must not be x itself (x is read twice, after the scan starts writing)")
    return n, sums, y


def _variant(reduce_kind: str, scan_kind: str):
    def run(x, out=None):
        n, sums, y = _prepare(x, out)
        if n:
            _scan_into(x, y, sums, reduce_kind, scan_kind)
        return sums, y
    return run


scan_cuda_01 = _variant("smem", "smem")
scan_cuda_01.__doc__ = "Shared-memory tree reduce + Hillis-Steele scan (with __syncwarp)."
scan_cuda_02 = _variant("down", "up")
scan_cuda_02.__doc__ = "__shfl_down_sync reduce + __shfl_up_sync scan."
scan_cuda_03 = _variant("xor", "up")
scan_cuda_03.__doc__ = "__shfl_xor_sync (butterfly) reduce + __shfl_up_sync scan."


# ---------------------------------------------------------------------------------------------------------------------
# Triton: the same decomposition with tl.sum and tl.cumsum on [SEGS_T, 32] blocks
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def segment_sum_kernel(x_ptr, sums_ptr, n, SEGS_T: tl.constexpr):
    g = tl.program_id(0).to(tl.int64) * SEGS_T + tl.arange(0, SEGS_T)     # segment indices of this program
    i = g[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    tl.store(sums_ptr + g, tl.sum(x, axis=1), mask=g * 32 < n)


@triton.jit
def segment_scan_kernel(x_ptr, offsets_ptr, y_ptr, n, SEGS_T: tl.constexpr):
    g = tl.program_id(0).to(tl.int64) * SEGS_T + tl.arange(0, SEGS_T)
    i = g[:, None] * 32 + tl.arange(0, 32)[None, :]
    x = tl.load(x_ptr + i, mask=i < n, other=0.0)
    prev = tl.load(offsets_ptr + tl.maximum(g - 1, 0), mask=(g > 0) & (g * 32 < n), other=0.0)
    tl.store(y_ptr + i, tl.cumsum(x, axis=1) + prev[:, None], mask=i < n)


TRITON_SEGS = 32     # 1024 elements per program


def _triton_scan_into(x, y, sums) -> None:
    n = arrays.size(x)
    w = segment_count(n)
    grid = (triton.cdiv(w, TRITON_SEGS),)
    launch(segment_sum_kernel, grid, x, sums, n, SEGS_T=TRITON_SEGS, num_warps=4)
    if w > 1:
        offsets = arrays.empty((w,), "float32", x)
        _triton_scan_into(sums, offsets, arrays.empty((segment_count(w),), "float32", x))
    else:
        offsets = sums
    launch(segment_scan_kernel, grid, x, offsets, y, n, SEGS_T=TRITON_SEGS, num_warps=4)


def scan_triton(x, out=None):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=1, device=dev)
    n = arrays.size(x)
    sums, y = _split_out(out)
    sums = arrays.check_out(sums, (segment_count(n),), "float32", x, name="out[0] (sums)")
    y = arrays.check_out(y, (n,), "float32", x, name="out[1] (scan)")
    for name, o in (("out[0] (sums)", sums), ("out[1] (scan)", y)):
        arrays.check_array(name, o, dtypes=("float32",), ndim=1, device=dev)
    if n:
        _triton_scan_into(x, y, sums)
    return sums, y


# ---------------------------------------------------------------------------------------------------------------------
# Peers
# ---------------------------------------------------------------------------------------------------------------------
def _peer_out(x, out):
    n = arrays.size(x)
    sums, y = _split_out(out)
    return (arrays.check_out(sums, (segment_count(n),), "float32", x), arrays.check_out(y, (n,), "float32", x))


def peer_cupy(x, out=None):
    import cupy

    sums, y = _peer_out(x, out)
    n = arrays.size(x)
    padded = cupy.zeros(segment_count(n) * 32, cupy.float32)
    padded[:n] = x
    cupy.sum(padded.reshape(-1, 32), axis=1, out=sums)
    cupy.cumsum(x, out=y)
    return sums, y


def peer_torch(x, out=None):
    import torch

    sums, y = _peer_out(x, out)
    n = arrays.size(x)
    tx = torch.from_dlpack(x)
    padded = torch.nn.functional.pad(tx, (0, segment_count(n) * 32 - n))
    torch.sum(padded.view(-1, 32), dim=1, out=torch.from_dlpack(sums))
    torch.cumsum(tx, 0, out=torch.from_dlpack(y))
    return sums, y


VARIANTS = [
    lab.Variant("cuda 01 shared memory", scan_cuda_01, "cuda", note="tree + Hillis-Steele, __syncwarp"),
    lab.Variant("cuda 02 shfl_down + shfl_up", scan_cuda_02, "cuda"),
    lab.Variant("cuda 03 shfl_xor + shfl_up", scan_cuda_03, "cuda"),
    lab.Variant("triton tl.sum + tl.cumsum", scan_triton, "triton"),
]
PEERS = [
    lab.Variant("cupy sum + cumsum", peer_cupy, "peer"),
    lab.Variant("torch sum + cumsum", peer_torch, "peer"),
]
CHECK_CASES = [(n, "float32") for n in (1, 2, 31, 32, 33, 63, 1000, 1023, 2048, 2049, 4097, 65537, 1_000_003,
                                        2**22 + 3)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 33, 1000, 5000)]


# ---------------------------------------------------------------------------------------------------------------------
# GPU: benchmarks
# ---------------------------------------------------------------------------------------------------------------------
def reduce_then_scan_bytes(n: int) -> int:
    """DRAM bytes of _scan_into: read x, write sums; read x and offsets, write y; then the sums' own scan."""
    w = segment_count(n)
    b = 4 * n + 4 * w + 4 * n + 4 * n + (4 * w if w > 1 else 0)
    return b + (reduce_then_scan_bytes(w) if w > 1 else 0)


def _pred_ms(n: int, nbytes: float, ceiling_gbps: float, passes_per_segment: int) -> tuple[float, str]:
    """max(HBM time, shared-memory / shuffle time at one pass per clock per SM)."""
    d = device.info()
    hbm = nbytes / (ceiling_gbps * 1e6)
    pipe = segment_count(n) / d.sms * passes_per_segment / (d.sm_clock_mhz * 1e3)
    return max(hbm, pipe), ("HBM" if hbm >= pipe else f"{passes_per_segment} passes per segment")


def bench_reduce(n: int, ceiling_gbps: float, l2_warm: bool) -> list[dict]:
    """The three warp-sum kernels (and Triton's segment sum) alone."""
    import cupy

    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    sums = cupy.empty(segment_count(n), cupy.float32)
    nbytes = 4 * n + 4 * segment_count(n)
    where = "L2-resident (L2 not flushed)" if l2_warm else "HBM (L2 flushed)"
    cases = [("cuda 01 smem tree", "smem", PASSES["reduce smem"]), ("cuda 02 shfl_down", "down", PASSES["reduce shfl"]),
             ("cuda 03 shfl_xor", "xor", PASSES["reduce shfl"])]
    rows = []
    for name, kind, passes in cli.progress(cases, "reductions"):
        t = bench.bench(lambda k=kind: warp_sums(x, sums, kind=k), flush_l2=not l2_warm)
        p, why = _pred_ms(n, nbytes, ceiling_gbps, passes) if not l2_warm else (None, f"{passes} passes per segment")
        rows.append(report.row(LAB + "_reduce", name, "cuda", (n,), "float32", t, nbytes=nbytes, flops=31 * n / 32,
                               ceiling_gbps=ceiling_gbps, regime=where, pred_ms=p, pred_bound=why))
    tgrid = (triton.cdiv(segment_count(n), TRITON_SEGS),)
    t = bench.bench(lambda: launch(segment_sum_kernel, tgrid, x, sums, n, SEGS_T=TRITON_SEGS, num_warps=4),
                    flush_l2=not l2_warm)
    rows.append(report.row(LAB + "_reduce", "triton tl.sum", "triton", (n,), "float32", t, nbytes=nbytes,
                           flops=31 * n / 32, ceiling_gbps=ceiling_gbps, regime=where, pred_ms=None, pred_bound=""))
    return rows


def bench_scan(n: int, ceiling_gbps: float) -> list[dict]:
    """Full scans (our variants also produce the segment sums) against cupy.cumsum / torch.cumsum alone."""
    import cupy
    import torch

    x = cupy.random.standard_normal(n, dtype=cupy.float32)
    sums = cupy.empty(segment_count(n), cupy.float32)
    y = cupy.empty(n, cupy.float32)
    must = 8 * n                                   # read x once, write y once
    ours = reduce_then_scan_bytes(n)               # ~12.6 n: x twice, y once, the sums, and the levels below
    fns = {v.name: (v.impl, (lambda f=v.fn: f(x, out=(sums, y)))) for v in VARIANTS}
    tx, ty = torch.from_dlpack(x), torch.from_dlpack(y)
    fns["cupy.cumsum (scan only)"] = ("peer", lambda: cupy.cumsum(x, out=y))
    fns["torch.cumsum (scan only)"] = ("peer", lambda: torch.cumsum(tx, 0, out=ty))
    rows = []
    for name, (impl, f) in fns.items():
        t = bench.bench(f)
        moved = must if impl == "peer" else ours
        rows.append(report.row(LAB + "_scan", name, impl, (n,), "float32", t, nbytes=must, flops=n,
                               ceiling_gbps=ceiling_gbps, bytes_moved_model=moved,
                               pred_ms=moved / (ceiling_gbps * 1e6)))
    peer = min(r["ms"] for r in rows if r["variant"].startswith("torch"))
    for r in rows:
        r["vs_torch_cumsum"] = peer / r["ms"]
    return rows


def plot(reduce_rows: list[dict], scan_rows: list[dict], path: str) -> str:
    d = device.info()
    rows = reduce_rows + scan_rows
    labels = [f"{r['variant']} [{'sums, ' + r['regime'].split(' ')[0] if 'regime' in r else 'scan'}]" for r in rows]
    return report.plot_bars(path, labels, [r["gbps"] for r in rows], ylabel="GB/s (bytes that must move / time)",
                            title=f"Warp sums and scans, fp32, on {d.name}",
                            colors=[report.IMPL_COLORS.get(r["impl"], "tab:gray") for r in rows],
                            hlines={f"HBM ceiling {rows[0]['ceiling_gbps']:.0f}": rows[0]["ceiling_gbps"]})


# ---------------------------------------------------------------------------------------------------------------------
# Without a GPU
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="warp_reduce_02_shfl_down")
    if not any(k.sass for k in rep.kernels.values()):
        return
    rows = []
    for name, k in rep.kernels.items():
        c = k.sass_counts
        rows.append({"kernel": name, "SHFL": c.get("SHFL", 0), "LDS": sum(v for key, v in c.items()
                                                                          if key.startswith("LDS")),
                     "STS": sum(v for key, v in c.items() if key.startswith("STS")), "BAR (block barriers)":
                     c.get("BAR", 0), "per segment": f"{c.get('SHFL', 0) / SEGS:.0f} shuffles" if c.get("SHFL")
                     else "shared memory"})
    report.print_table(rows, title=f"what each kernel exchanges with (SASS, {SEGS} segments per warp)")
    print("-> no kernel has a block barrier (BAR): everything stays inside one warp. The shared-memory versions pay "
          "in LDS/STS and __syncwarp; the shuffle versions in SHFL only.")


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True, size_help="n of the benchmark (default 2^28, quick 2^24)")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:3] if args.quick else CPU_CHECK_CASES)
        show_compile_reports(args.arch)
        print("\nCUDA C kernels were compiled, not run (no GPU); the Triton sums and scan ran in the interpreter.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[:9] if args.quick else CHECK_CASES)
    show_compile_reports(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    ceiling = bench.ceilings()
    n = args.size or (2**24 if args.quick else MAIN_N)
    reduce_rows = bench_reduce(n, ceiling["hbm_gbps"], l2_warm=False)
    reduce_rows += bench_reduce(2**22, ceiling["hbm_gbps"], l2_warm=True)
    report.print_table(reduce_rows, ["variant", "regime", "shape", "ms", "pred_ms", "pred_bound", "gbps",
                                     "frac_ceiling", "spread"],
                       title="per-warp sums alone (GB/s counts 4 n + n / 8 bytes)")
    scan_rows = bench_scan(n, ceiling["hbm_gbps"])
    report.print_table(scan_rows, ["variant", "impl", "ms", "pred_ms", "gbps", "frac_ceiling", "vs_torch_cumsum",
                                   "spread"],
                       title=f"inclusive scan of n = {n:,} fp32 (GB/s counts the 8 n bytes that must move; our "
                             "variants also write the segment sums and move ~12.6 n)")
    if args.json:
        print("wrote", report.write_json(LAB, reduce_rows + scan_rows, out_dir=out_dir, ceiling=ceiling,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(reduce_rows, scan_rows, os.path.join(out_dir, f"{LAB}.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
