"""Lab 2.2 - Shared memory and bank conflicts: 1-way to 32-way, measured, and the padding and swizzle fixes.

You will learn
  * how shared memory is banked (32 banks of 4 bytes, word w in bank w mod 32) and how one warp instruction is served:
    in as many passes as the most-asked bank has distinct words; the same word for many lanes is a free broadcast;
  * to predict the degree of a conflict before running anything: lane stride s costs gcd(s, 32) passes (odd strides are
    free, 32 is the worst), with a 20-line simulator you can point at any access pattern;
  * to measure it: a micro-benchmark sweeps the stride from 0 to 33 and times every pass;
  * the two fixes for the classic case (a warp walking the rows of a 32 x 32 tile): pad each row to 33 words, or keep
    32 and XOR-swizzle the column (word r * 32 + (c ^ r)), and when each is the right one;
  * that a conflict matters in a real kernel when it makes shared memory slower than DRAM: row sums of a rows x 32
    matrix, memory-bound when conflict-free, ~4x slower with the 32-way conflict.

The two numbers, for the row sums of a rows x 32 fp32 matrix (main case rows = 2^23, 1 GiB): bytes = 132 per row
(128 read, 4 written) = 1.11 GB, FLOPs = 31 per row = 0.26 GFLOP: 0.23 FLOP/B, memory wins, ~0.27 ms at ~4.1 TB/s
if shared memory keeps up. With the 32-way conflict each 4 KiB tile costs 32 + 32 x 32 = 1056 shared-memory passes
(one per clock per SM): 132 SMs x 4096 B / 1056 clocks x ~1.98 GHz ~= 1.0 TB/s, so shared memory wins, ~4x slower.
The stride sweep moves no DRAM bytes to speak of: it requests 128 B of shared memory per warp load, and its FLOPs
(one add per load) hide under the loads.

Measured on an H200 (results/h200/phase2_lab02_bank_conflicts.json): the model held, within 3% in the sweep and 5% in
the row sums. The stride sweep took 1.03 SM clocks per warp load at every odd stride and at stride 0 (32,473 GB/s of
requested shared-memory bandwidth, against the ~33 TB/s of one pass per clock per SM), and 2.03, 4.03, 8.02, 16.02 and
32.02 clocks at 2-, 4-, 8-, 16- and 32-way strides: slowdowns of 1.97x, 3.91x, 7.79x, 15.55x and 31.08x, 0.97-0.98 of
gcd(s, 32), the shortfall being the ~0.03 clock per load of loop overhead that the conflict-free baseline also pays. The
XOR swizzle walked 32-word rows at stride-1 speed (0.999x). Row sums of 2^23 x 32: the conflicted kernel ran at 995 GB/s
(0.229 of the 4,341 GB/s ceiling; 1.11 ms where the model said 1.06), padded at 4,180 GB/s (0.963) and swizzled at 4,177
GB/s: the predicted ~4x is 4.20x, and both fixes come within 4% of the ceiling, as does Triton's tl.sum (4,184 GB/s).
The library calls a learner would reach for were far slower on this shape: cupy.sum(axis=1) 1,258 GB/s (0.30x the padded
kernel), torch.sum(dim=1) 636 GB/s (0.15x).

Run: python -m phase2_cuda.lab02_bank_conflicts [--quick] [--size ROWS] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase2_lab02_bank_conflicts"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab02_bank_conflicts.cu")
BANKS = 32
READS, MAX_STRIDE, WARPS = 32, 64, 8          # the .cu defaults
BUF_WORDS = 31 * MAX_STRIDE + READS           # words each sweep block stages in shared memory
SWEEP_THREADS = 256
MAIN_ROWS = 2**23


# ---------------------------------------------------------------------------------------------------------------------
# The bank model: a tiny simulator
# ---------------------------------------------------------------------------------------------------------------------
def passes(word_addresses) -> int:
    """Passes (wavefronts) one warp instruction of 4-byte accesses needs: the most distinct words asked of one bank."""
    per_bank: dict[int, set] = {}
    for w in word_addresses:
        per_bank.setdefault(int(w) % BANKS, set()).add(int(w))   # a set: the same word twice is a broadcast
    return max(len(s) for s in per_bank.values())


def stride_passes(stride: int) -> int:
    """Lane i reads word i * stride (bank_01_stride's access, for one j)."""
    return passes(lane * stride for lane in range(32))


def swizzle_passes() -> int:
    """Lane i reads word i * 32 + (j ^ i): the worst j over one row walk (bank_02_xor_swizzle)."""
    return max(passes(lane * 32 + (j ^ lane) for lane in range(32)) for j in range(32))


def tile_passes(layout: str) -> int:
    """Passes for one 32 x 32 tile of the row-sum kernels: 32 row stores (lane = column) + 32 loads (lane = row)."""
    def addr(r, c):
        return {"conflicted": r * 32 + c, "padded": r * 33 + c, "swizzled": r * 32 + (c ^ r)}[layout]
    stores = sum(passes(addr(r, lane) for lane in range(32)) for r in range(32))
    loads = sum(passes(addr(lane, c) for lane in range(32)) for c in range(32))
    return stores + loads


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs (the checked variants: row sums)
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float64).sum(axis=1)


def make_inputs(rows: int, dtype: str, rng: np.random.Generator, where: str):
    """A rows x 32 matrix of small integers (1..8) as floats, and a few large ones.

    Integer values make every row sum exact in float32 in any order, so the check cannot fail on rounding: with
    normal values a row can cancel to near zero and a correct kernel's last-bit error exceeds the relative tolerance
    (seen in CI: one row of 32 summed to ~0.007). A skipped or doubled element still changes the sum by >= 1.
    """
    x = rng.integers(1, 9, size=(int(rows), 32)).astype(np.float64)
    if x.size > 64:
        x.flat[rng.integers(0, x.size, 4)] = 1e4
    return (arrays.from_numpy(x, dtype, where),)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare_rows(x, out):
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, libs=("cupy",))
    if x.shape[1] != 32:
        raise ValueError(f"x: expected rows of 32 floats (one per bank), got shape {tuple(x.shape)}")
    rows = int(x.shape[0])
    out = arrays.check_out(out, (rows,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    return out, rows


def _rowsum(name: str, x, out):
    out, rows = _prepare_rows(x, out)
    if rows == 0:
        return out
    blocks = math.ceil(math.ceil(rows / 32) / WARPS)
    cuda.get_kernel(CU, name)((blocks,), (32 * WARPS,), (x, out, np.int64(rows)))
    return out


def rowsum_cuda_01(x, out=None):
    """tile[32][32]: lane i walks row i, 32-way conflicts."""
    return _rowsum("rowsum_01_conflicted", x, out)


def rowsum_cuda_02(x, out=None):
    """tile[32][33]: padding."""
    return _rowsum("rowsum_02_padded", x, out)


def rowsum_cuda_03(x, out=None):
    """tile[32][32] with word r * 32 + (c ^ r): XOR swizzle."""
    return _rowsum("rowsum_03_swizzled", x, out)


def _prepare_sweep(src, blocks: int, out):
    arrays.check_array("src", src, dtypes=("float32",), ndim=1, libs=("cupy",))
    if arrays.size(src) < BUF_WORDS:
        raise ValueError(f"src: needs at least {BUF_WORDS} floats (the shared buffer), got {arrays.size(src)}")
    if not isinstance(blocks, (int, np.integer)) or blocks < 1:
        raise ValueError(f"blocks: expected a positive integer, got {blocks!r}")
    out = arrays.check_out(out, (int(blocks) * SWEEP_THREADS,), "float32", src)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, libs=("cupy",))
    return out


def _check_reps(reps) -> int:
    if not isinstance(reps, (int, np.integer)) or not 1 <= reps <= 100_000:
        raise ValueError(f"reps: expected an integer in 1..100000, got {reps!r}")
    return int(reps)


def stride_read(src, stride: int, reps: int, blocks: int, out=None):
    """bank_01_stride: every thread sums words (lane * stride + j), j < 32, reps times."""
    if not isinstance(stride, (int, np.integer)) or not 0 <= stride <= MAX_STRIDE:
        raise ValueError(f"stride: expected an integer in 0..{MAX_STRIDE}, got {stride!r}")
    reps = _check_reps(reps)
    out = _prepare_sweep(src, blocks, out)
    cuda.get_kernel(CU, "bank_01_stride")((int(blocks),), (SWEEP_THREADS,), (src, out, np.int32(stride),
                                                                              np.int32(reps)))
    return out


def swizzle_read(src, reps: int, blocks: int, out=None):
    """bank_02_xor_swizzle: the stride-32 walk with word lane * 32 + (j ^ lane)."""
    reps = _check_reps(reps)
    out = _prepare_sweep(src, blocks, out)
    cuda.get_kernel(CU, "bank_02_xor_swizzle")((int(blocks),), (SWEEP_THREADS,), (src, out, np.int32(reps)))
    return out


def sweep_reference(src: np.ndarray, stride: int, reps: int, threads: int) -> np.ndarray:
    """What every thread of the sweep kernels sums (the swizzled walk equals stride 32)."""
    s = np.asarray(src, np.float64)
    per_lane = np.array([s[lane * stride: lane * stride + READS].sum() for lane in range(32)])
    return reps * np.tile(per_lane, threads // 32)


def sweep_source(rng: np.random.Generator, where: str = "cuda"):
    """Small integers (1..4) so that every sum is exact in fp32 and the check can demand equality."""
    return arrays.from_numpy(rng.integers(1, 5, BUF_WORDS).astype(np.float32), "float32", where)


# ---------------------------------------------------------------------------------------------------------------------
# Triton: the same row sums, where the compiler picks the layout (a reduction across a row is shuffles, no tile walk)
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def rowsum_kernel(x_ptr, out_ptr, rows, BLOCK_R: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    r = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    c = tl.arange(0, 32)
    x = tl.load(x_ptr + r[:, None] * 32 + c[None, :], mask=r[:, None] < rows, other=0.0)
    tl.store(out_ptr + r, tl.sum(x, axis=1), mask=r < rows)


TRITON_BLOCK_R = 128


def rowsum_triton(x, out=None):
    dev = not INTERPRETER
    arrays.check_array("x", x, dtypes=("float32",), ndim=2, device=dev)
    if x.shape[1] != 32:
        raise ValueError(f"x: expected rows of 32 floats, got shape {tuple(x.shape)}")
    rows = int(x.shape[0])
    out = arrays.check_out(out, (rows,), "float32", x)
    arrays.check_array("out", out, dtypes=("float32",), ndim=1, device=dev)
    if rows == 0:
        return out
    launch(rowsum_kernel, (triton.cdiv(rows, TRITON_BLOCK_R),), x, out, rows, BLOCK_R=TRITON_BLOCK_R, num_warps=4)
    return out


def peer_cupy(x, out=None):
    import cupy

    out = arrays.check_out(out, (x.shape[0],), "float32", x)
    return cupy.sum(x, axis=1, out=out)


def peer_torch(x, out=None):
    import torch

    out = arrays.check_out(out, (x.shape[0],), "float32", x)
    torch.sum(torch.from_dlpack(x), dim=1, out=torch.from_dlpack(out))
    return out


VARIANTS = [
    lab.Variant("cuda 01 conflicted", rowsum_cuda_01, "cuda", note="tile[32][32], 32-way"),
    lab.Variant("cuda 02 padded", rowsum_cuda_02, "cuda", note="tile[32][33]"),
    lab.Variant("cuda 03 xor swizzle", rowsum_cuda_03, "cuda", note="word r*32 + (c^r)"),
    lab.Variant("triton tl.sum", rowsum_triton, "triton"),
]
PEERS = [
    lab.Variant("cupy.sum(axis=1)", peer_cupy, "peer"),
    lab.Variant("torch.sum(dim=1)", peer_torch, "peer"),
]
CHECK_CASES = [(n, "float32") for n in (1, 2, 31, 32, 33, 255, 256, 257, 1000, 4097, 65537, 300_007)]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 33, 257, 1000)]


# ---------------------------------------------------------------------------------------------------------------------
# GPU: the sweep kernels' own check, benchmarks
# ---------------------------------------------------------------------------------------------------------------------
def check_sweep() -> tuple[list[dict], bool]:
    """bank_01_stride / bank_02_xor_swizzle outputs against NumPy (exact: integer data)."""
    src = sweep_source(check.rng(202))
    src_np = arrays.to_numpy(src)
    rows, ok = [], True
    for label, fn, stride in [(f"stride {s}", lambda o, s=s: stride_read(src, s, 3, 2, o), s)
                              for s in (0, 1, 2, 7, 32, 33, MAX_STRIDE)] + \
                             [("xor swizzle", lambda o: swizzle_read(src, 3, 2, o), 32)]:
        out = check.poisoned((2 * SWEEP_THREADS,), "float32", src)
        got = arrays.to_numpy(fn(out)).astype(np.float64)
        want = sweep_reference(src_np, stride, 3, 2 * SWEEP_THREADS)
        good = bool(np.array_equal(got, want))
        ok &= good
        rows.append({"variant": f"probe bank sweep {label}", "impl": "cuda", "cases": 1,
                     "result": "ok (exact)" if good else f"MISMATCH: {np.count_nonzero(got != want)} threads differ"})
    return rows, ok


def _blocks_per_sm(name: str) -> int:
    from cupy_backends.cuda.api import driver

    return int(driver.occupancyMaxActiveBlocksPerMultiprocessor(cuda.get_kernel(CU, name).kernel.ptr,
                                                                  SWEEP_THREADS, 0))


def bench_sweep(strides, reps: int) -> list[dict]:
    """Time bank_01_stride at every stride (and the swizzle); slowdown vs stride 1 against the predicted passes."""
    import cupy

    d = device.info()
    # one wave that both kernels fit in at once (the swizzled one holds 32 addresses in registers: fewer blocks fit)
    per_sm = min(_blocks_per_sm("bank_01_stride"), _blocks_per_sm("bank_02_xor_swizzle"))
    blocks = d.sms * per_sm
    src = sweep_source(check.rng(203))
    out = cupy.empty(blocks * SWEEP_THREADS, cupy.float32)
    warp_loads = blocks * (SWEEP_THREADS // 32) * reps * READS
    cases = [(f"stride {s}", s, stride_passes(s), lambda s=s: stride_read(src, s, reps, blocks, out)) for s in strides]
    cases.append(("xor swizzle (stride 32 walk)", 32, swizzle_passes(), lambda: swizzle_read(src, reps, blocks, out)))
    rows = []
    for label, s, pred, fn in cli.progress(cases, "bank stride sweep"):
        t = bench.bench(fn, flush_l2=False, rep_ms=20, warmup_ms=5)
        rows.append(report.row(LAB + "_sweep", label, "cuda", (blocks, SWEEP_THREADS), "float32", t,
                               stride=s, passes_pred=pred,
                               smem_gbps=warp_loads * 128 / (t.median_ms * 1e6),
                               cycles_per_load=t.median_ms * 1e-3 * d.sm_clock_mhz * 1e6 / (warp_loads / d.sms),
                               blocks_per_sm=per_sm, reps=reps))
    base = next(r["ms"] for r in rows if r["variant"] == "stride 1")
    for r in rows:
        r["slowdown"] = r["ms"] / base
        r["measured_vs_pred"] = r["slowdown"] / r["passes_pred"]
    return rows


def bench_rowsums(rows_n: int, ceiling: dict) -> list[dict]:
    import cupy

    d = device.info()
    x = cupy.random.standard_normal((rows_n, 32), dtype=cupy.float32)
    out = cupy.empty(rows_n, cupy.float32)
    nbytes = 132 * rows_n
    hbm_ms = nbytes / (ceiling["hbm_gbps"] * 1e6)
    tiles_per_sm = math.ceil(rows_n / 32) / d.sms
    pred = {name: max(hbm_ms, tiles_per_sm * tile_passes(layout) / (d.sm_clock_mhz * 1e3))
            for name, layout in (("cuda 01 conflicted", "conflicted"), ("cuda 02 padded", "padded"),
                                 ("cuda 03 xor swizzle", "swizzled"))}
    rows = []
    for v in cli.progress(VARIANTS + PEERS, f"row sums {rows_n}x32"):
        t = bench.bench(lambda f=v.fn: f(x, out=out))
        rows.append(report.row(LAB, v.name, v.impl, (rows_n, 32), "float32", t, nbytes=nbytes, flops=31 * rows_n,
                               ceiling_gbps=ceiling["hbm_gbps"], pred_ms=pred.get(v.name, hbm_ms)))
    best = min(r["ms"] for r in rows)
    for r in rows:
        r["vs_fastest"] = best / r["ms"]
    return rows


def plots(sweep: list[dict], rowsums: list[dict], out_dir: str) -> list[str]:
    d = device.info()
    paths = []
    pts = [r for r in sweep if r["variant"].startswith("stride")]
    xs = [r["stride"] for r in pts]
    paths.append(report.plot_lines(
        os.path.join(out_dir, f"{LAB}_sweep.png"), xs,
        {"measured slowdown vs stride 1": [r["slowdown"] for r in pts],
         "predicted: passes = gcd(stride, 32)": [r["passes_pred"] for r in pts]},
        xlabel="lane stride (4-byte words); 33 = a 32-word row padded by one", ylabel="time / time at stride 1",
        title=f"Shared-memory bank conflicts on {d.name}", logx=False, logy=True, xticks=xs[::2] + [xs[-1]],
        hlines={f"xor swizzle of the stride-32 walk: {r['slowdown']:.2f}x": r["slowdown"]
                for r in sweep if r["variant"].startswith("xor")}))
    paths.append(report.plot_bars(
        os.path.join(out_dir, f"{LAB}.png"), [r["variant"] for r in rowsums], [r["gbps"] for r in rowsums],
        ylabel="GB/s (132 bytes per row / time)", title=f"Row sums {rowsums[0]['shape'][0]}x32 fp32 on {d.name}",
        colors=[report.IMPL_COLORS.get(r["impl"], "tab:gray") for r in rowsums],
        hlines={f"HBM ceiling {rowsums[0]['ceiling_gbps']:.0f}": rowsums[0]["ceiling_gbps"]}))
    return paths


# ---------------------------------------------------------------------------------------------------------------------
# Without a GPU: the model and the compile report
# ---------------------------------------------------------------------------------------------------------------------
def show_models() -> None:
    rows = [{"stride": s, "gcd(s,32)": math.gcd(s, 32) if s else 1, "passes (simulated)": stride_passes(s),
             "banks used": len({lane * s % 32 for lane in range(32)})} for s in (0, 1, 2, 3, 4, 8, 16, 31, 32, 33)]
    rows.append({"stride": "32, xor swizzle", "gcd(s,32)": "-", "passes (simulated)": swizzle_passes(),
                 "banks used": 32})
    report.print_table(rows, title="lane i reads word i * stride: predicted passes per warp load (1 = conflict-free)")
    report.print_table([{"row-sum tile layout": k, "passes per 32x32 tile (32 stores + 32 loads)": tile_passes(k)}
                        for k in ("conflicted", "padded", "swizzled")],
                       title="row sums: shared-memory passes per tile")


def show_compile_reports(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="rowsum_01_conflicted")
    r1, r2, r3 = (rep.kernels.get(k) for k in ("rowsum_01_conflicted", "rowsum_02_padded", "rowsum_03_swizzled"))
    if r1 and r2 and r3 and r1.sass:
        c1, c2, c3 = r1.sass_counts, r2.sass_counts, r3.sass_counts
        print(f"-> the three row-sum kernels issue the same shared-memory instructions (LDS {c1.get('LDS.32', 0)}/"
              f"{c2.get('LDS.32', 0)}/{c3.get('LDS.32', 0)}, STS {c1.get('STS.32', 0)}/{c2.get('STS.32', 0)}/"
              f"{c3.get('STS.32', 0)}); only the addresses differ, and with them the number of passes per instruction.")


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True,
                   size_help=f"rows of the row-sum benchmark (default 2^23 = {MAIN_ROWS}, quick 2^20)")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:2] if args.quick else CPU_CHECK_CASES)
        show_models()
        show_compile_reports(args.arch)
        print("\nCUDA C kernels were compiled, not run (no GPU); the Triton row sum ran in the interpreter. The pass "
              "counts above are the predictions the GPU run measures.")
        return 0 if ok else 1

    rows_ok, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[:7] if args.quick else CHECK_CASES,
                                     verbose=False)
    sweep_rows, sweep_ok = check_sweep()
    report.print_table(rows_ok + sweep_rows, ["variant", "impl", "cases", "secs", "result"],
                       title=f"correctness against the float64 reference (seed {check.seed()})")
    ok &= sweep_ok
    show_models()
    show_compile_reports(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    ceiling = bench.ceilings()
    strides = [0, 1, 2, 3, 4, 8, 16, 31, 32, 33] if args.quick else list(range(0, 34))
    sweep = bench_sweep(strides, reps=80 if args.quick else 320)
    report.print_table(sweep, ["variant", "passes_pred", "ms", "slowdown", "measured_vs_pred", "cycles_per_load",
                               "smem_gbps", "spread"],
                       title="stride sweep: measured slowdown vs predicted passes (cycles per load: estimated with the "
                             "device's maximum SM clock)")
    rowsums = bench_rowsums(args.size or (2**20 if args.quick else MAIN_ROWS), ceiling)
    report.print_table(rowsums, ["variant", "impl", "ms", "pred_ms", "gbps", "frac_ceiling", "vs_fastest", "spread"],
                       title=f"row sums {rowsums[0]['shape'][0]}x32 fp32 (132 B per row), measured HBM ceiling "
                             f"{ceiling['hbm_gbps']:.0f} GB/s")
    if args.json:
        print("wrote", report.write_json(LAB, sweep + rowsums, out_dir=out_dir, ceiling=ceiling,
                                         device=device.info().as_dict()))
    if args.plot:
        for path in plots(sweep, rowsums, out_dir):
            print("wrote", path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
