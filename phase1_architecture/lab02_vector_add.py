"""Lab 1.2 - Vector add: the first kernel, and what it says about memory bandwidth.

You will learn
  * how a grid of blocks of threads covers an array, why the last block needs a bounds check, and why the index must
    be 64-bit once arrays pass 2^31 elements;
  * what a grid-stride loop is for (a grid sized to the GPU, not to the data);
  * why 16-byte loads (float4, LDG.E.128 in SASS) and more bytes in flight per thread matter, and what they need
    (16-byte alignment: a misaligned view must fall back to the scalar path, never read past the end);
  * the same kernel in Triton: a program per block of elements, a mask instead of an if;
  * the three regimes of a bandwidth-bound kernel as the size grows: launch-bound (a few microseconds whatever the
    size), L2-resident (the three arrays fit in L2 and are re-read from it), and HBM-bound.

The two numbers, for n fp32 elements: bytes = 12 n (two 4-byte loads and one 4-byte store per element), FLOPs = n.
One FLOP per 12 bytes is ~180x below the ridge point of an H200 (67 TFLOP/s / 4.8 TB/s = 14 FLOP/B): memory wins, and
the best any version can do is move 12 n bytes at the measured HBM ceiling. On an H200, 2^28 elements (3 GiB) at
~4.4 TB/s take ~0.73 ms.

Measured on an H200 (results/h200/phase1_lab02_vector_add.json, commit 72d4173; measured HBM ceiling 4,342 GB/s,
the best of three streaming kernels, torch.add):
  * at 2^28 elements, head to head in 7 interleaved rounds: torch.add 4,344 GB/s; float4 (03) 4,357 GB/s = 1.003x;
    float4 + evict-first stores (04) 4,363 GB/s = 1.004x; Triton (512 elements x 4 warps) 4,361 GB/s = 1.004x; at
    2^29: 1.003x, 1.004x and 1.004x, all inside the 0.2-0.4% spread of the rounds. Earlier runs: commit 173e2d9 and
    11dacc8 had Triton at 1024 elements x 4 warps, a tie at 2^28 (0.99998x, then 0.9995x); the tuner (commit
    31784b5, 2^28, 3 interleaved rounds) put 512 x 4 - one 16-byte load per input per thread, vadd_04's best shape -
    at 1.0048x, vadd_04 (128 threads, 1 float4, streaming stores) at 1.0054x, vadd_03 at 1.0045x, so 512 x 4 became
    the default. 91% of the 4.8 TB/s datasheet figure is what HBM3e gives a read+write stream.
  * one float per thread (01) stalls at 3,475 GB/s (0.80 of torch.add at 2^29) and the grid-stride loop (02) at
    3,635: 8 bytes of loads in flight per thread is not enough to cover HBM latency; float4 quadruples it and closes
    the gap. cupy.add, a generic elementwise kernel, reaches 2,540 GB/s.
  * below ~2^23 elements the first run (plain timer) took 30-55 us per call whatever the size: the host's cost of one
    Python call (argument checks, CuPy's launch path, torch's from_dlpack), not the GPU's, so it showed no L2-resident
    plateau. The sweep now times sizes up to 2^24 as CUDA graphs of 100 launches (common.bench, graph=True), and the
    three regions appear: launch-bound below ~2^16 (2^10 elements: 12-14 GB/s, ~1 us per launch whatever the size;
    2^16: 523-644 GB/s); L2-resident from ~2^19 to 2^22, where the three arrays (12 n bytes) fit in the 60 MiB L2 and
    no flush runs between replays: float4 peaks at 6,741 GB/s at 2^21 (24 MiB), 1.55x the HBM ceiling (torch.add
    6,178, Triton 6,687); at 2^22 (48 MiB, most of the L2) only the evict-first stores of 04 and Triton keep 5,000+
    GB/s; HBM-bound from 2^23 (96 MiB > L2) on, rising to the ceiling (2^29: 4,386 / torch.add 4,372 GB/s).

Run: python -m phase1_architecture.lab02_vector_add [--quick] [--size N] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase1_lab02_vector_add"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab02_vector_add.cu")
THREADS = 256
# vadd_04's launch and compile-time parameters: threads per block, float4 per thread, streaming stores.
# Picked by `--tune` on an H200 (results/h200/phase1_lab02_vector_add_tune.json, n = 2^28): every configuration was
# within 1.5% of torch.add; one float4 per thread with evict-first stores was the fastest (1.01x), and more float4
# per thread (unroll 2, 4) did not help: 2048 resident threads x 32 B of loads already cover the latency.
V04 = dict(threads=256, unroll=1, stream=1)


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(a, np.float64) + np.asarray(b, np.float64)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """Two random vectors (normal, with a few large values so a wrong element cannot hide as a small error)."""
    a = rng.standard_normal(n) * 4.0
    b = rng.standard_normal(n)
    if n > 16:
        a[rng.integers(0, n, 4)] = 3e4
    return arrays.from_numpy(a, dtype, where), arrays.from_numpy(b, dtype, where)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _prepare(a, b, out):
    """Validate before any launch; returns (out, n)."""
    arrays.check_array("a", a, dtypes=("float32",), libs=("cupy",))
    arrays.check_array("b", b, dtypes=("float32",), libs=("cupy",))
    arrays.check_same("a, b", a, b)
    out = arrays.check_out(out, a.shape, "float32", a)
    arrays.check_array("out", out, dtypes=("float32",), libs=("cupy",))
    return out, arrays.size(a)


def _resident_blocks() -> int:
    """Blocks of THREADS threads that fill every SM once (one wave)."""
    d = device.info()
    return d.sms * max(1, d.max_threads_per_sm // THREADS)


def _run(name: str, blocks: int, a, b, out, n: int):
    k = cuda.get_kernel(CU, name)
    k((max(1, blocks),), (THREADS,), (a, b, out, np.int64(n)))
    return out


def add_cuda_01(a, b, out=None):
    """One thread per element."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    return _run("vadd_01_one_thread_per_element", math.ceil(n / THREADS), a, b, out, n)


def add_cuda_02(a, b, out=None):
    """Grid-stride loop over a grid that fills the GPU once."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)


def float4_ok(a, b, out) -> bool:
    """The float4 kernels need all three arrays on 16-byte boundaries (a view at an odd offset is not)."""
    return all(arrays.aligned(x, 16) for x in (a, b, out))


def add_cuda_03(a, b, out=None):
    """One float4 per thread; falls back to the grid-stride kernel for misaligned views."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    if not float4_ok(a, b, out):
        return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)
    return _run("vadd_03_float4", math.ceil((n // 4) / THREADS), a, b, out, n)


def add_cuda_04(a, b, out=None, *, threads=None, unroll=None, stream=None):
    """UNROLL float4 per thread, all loads issued first; falls back for misaligned views."""
    out, n = _prepare(a, b, out)
    if n == 0:
        return out
    if not float4_ok(a, b, out):
        return _run("vadd_02_grid_stride", min(math.ceil(n / THREADS), _resident_blocks()), a, b, out, n)
    threads = threads or V04["threads"]
    unroll = unroll or V04["unroll"]
    stream = V04["stream"] if stream is None else stream
    k = cuda.get_kernel(CU, "vadd_04_float4_ilp", defines={"UNROLL": unroll, "STREAM": stream})
    blocks = max(1, math.ceil((n // 4) / (threads * unroll)))
    k((blocks,), (threads,), (a, b, out, np.int64(n)))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Triton
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def add_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    # One program handles BLOCK consecutive elements; tl.arange(0, BLOCK) is the tile of offsets that CUDA C spreads
    # over threads by hand. The program id is widened to 64 bits so pid * BLOCK cannot overflow past 2^31 elements.
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n            # the bounds check, as a mask over the tile
    a = tl.load(a_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs, mask=mask)
    tl.store(c_ptr + offs, a + b, mask=mask, cache_modifier=".cs")   # streaming store: evict-first, like vadd_04


# 512 elements / 128 threads = 4 per thread: one 16-byte load per input, like vadd_04's best launch (128 threads,
# one float4 each, evict-first stores). The --tune sweep on an H200 (results/h200/phase1_lab02_vector_add_tune.json,
# n = 2^28, 3 interleaved rounds) ranked it first among the Triton configs at 1.0048x torch.add (1024 elements x
# 4 warps, the earlier default: 1.0016x; all within 0.5% of each other).
TRITON_BLOCK, TRITON_WARPS = 512, 4


def add_triton(a, b, out=None, *, block=None, num_warps=None):
    """Triton vector add: fp32 or fp16, CuPy/torch arrays on a GPU, NumPy/torch CPU arrays in the interpreter."""
    dev = not INTERPRETER
    dt = arrays.check_array("a", a, dtypes=("float32", "float16"), device=dev)
    arrays.check_array("b", b, dtypes=("float32", "float16"), device=dev)
    arrays.check_same("a, b", a, b)
    out = arrays.check_out(out, a.shape, dt, a)
    n = arrays.size(a)
    if n == 0:
        return out
    block = block or TRITON_BLOCK
    grid = (triton.cdiv(n, block),)
    launch(add_kernel, grid, a, b, out, n, BLOCK=block, num_warps=num_warps or TRITON_WARPS)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peers: what a learner would call instead
# ---------------------------------------------------------------------------------------------------------------------
def peer_cupy_add(a, b, out=None):
    import cupy

    out = arrays.check_out(out, a.shape, arrays.dtype_name(a), a)
    return cupy.add(a, b, out=out)


def peer_torch_add(a, b, out=None):
    import torch

    out = arrays.check_out(out, a.shape, arrays.dtype_name(a), a)
    torch.add(torch.from_dlpack(a), torch.from_dlpack(b), out=torch.from_dlpack(out))
    return out


VARIANTS = [
    lab.Variant("cuda 01 one thread per element", add_cuda_01, "cuda"),
    lab.Variant("cuda 02 grid-stride", add_cuda_02, "cuda"),
    lab.Variant("cuda 03 float4", add_cuda_03, "cuda"),
    lab.Variant("cuda 04 float4 streaming store", add_cuda_04, "cuda"),
    lab.Variant("triton", add_triton, "triton", dtypes=("float32", "float16")),
]
PEERS = [
    lab.Variant("cupy.add", peer_cupy_add, "peer", dtypes=("float32", "float16")),
    lab.Variant("torch.add", peer_torch_add, "peer", dtypes=("float32", "float16")),
]
CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D] + [(n, "float16") for n in (1, 1000, 65537)]
CPU_CHECK_CASES = [(n, "float32") for n in check.AWKWARD_1D_SMALL] + [(4097, "float16")]


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------------------------------------------------
GRAPH_BELOW = 2**24   # sizes up to this are timed as CUDA graphs of GRAPH_CALLS launches (see sweep)
GRAPH_CALLS = 100


def sweep(sizes, ceiling_gbps: float) -> list[dict]:
    """GB/s of every variant and peer at every size, L2 NOT flushed (so the L2-resident regime can show).

    Up to GRAPH_BELOW elements each point is timed as a CUDA graph of GRAPH_CALLS launches: a Python call costs
    30-55 us on the host (measured on an H200 with the plain timer, see the docstring), far more than the GPU needs
    for a few MB, so the plain timer would measure Python, not the memory system. Larger sizes use the plain timer.
    """
    import cupy

    rows = []
    for n in cli.progress(sizes, "vector add sizes"):
        rng = check.rng(n)
        a, b = make_inputs(n, "float32", rng, "cuda")
        out = cupy.empty_like(a)
        peer_ms = None
        for v in PEERS + VARIANTS:
            t = bench.bench(lambda: v.fn(a, b, out=out), flush_l2=False, graph=n <= GRAPH_BELOW, calls=GRAPH_CALLS)
            r = report.row(LAB, v.name, v.impl, (n,), "float32", t, nbytes=12 * n, flops=n, ceiling_gbps=ceiling_gbps)
            if v.name == "torch.add":
                peer_ms = t.median_ms
            r["vs_torch_add"] = peer_ms / t.median_ms if peer_ms else None
            rows.append(r)
        del a, b, out
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def regimes(rows: list[dict], l2_bytes: int) -> list[tuple[float, float, str]]:
    """Shaded regions for the plot: launch-bound (time within 2x of the smallest), L2-resident, HBM-bound."""
    ns = sorted({r["shape"][0] for r in rows})
    best = {n: min(r["ms"] for r in rows if r["shape"][0] == n) for n in ns}
    floor = min(best.values())
    launch_end = max([n for n in ns if best[n] < 2 * floor] or [ns[0]])
    n_l2 = l2_bytes / 12
    out = [(ns[0], launch_end, "launch-bound")]
    if n_l2 > launch_end:
        out.append((launch_end, n_l2, "L2-resident"))
    out.append((max(n_l2, launch_end), ns[-1], "HBM-bound"))
    return out


def plot(rows: list[dict], ceiling: dict, path: str) -> str:
    ns = sorted({r["shape"][0] for r in rows})
    names = [v.name for v in VARIANTS + PEERS]
    series = {}
    for name in names:
        by_n = {r["shape"][0]: r["gbps"] for r in rows if r["variant"] == name}
        series[name] = [by_n.get(n) for n in ns]
    d = device.info()
    hl = {f"measured HBM ceiling {ceiling['hbm_gbps']:.0f} GB/s ({ceiling['hbm_method']})": ceiling["hbm_gbps"]}
    if d.datasheet.get("hbm_gbps"):
        hl[f"datasheet {d.datasheet['hbm_gbps']} GB/s"] = d.datasheet["hbm_gbps"]
    return report.plot_lines(
        path, ns, series, xlabel="elements n (fp32; 12 n bytes moved)", ylabel="GB/s (reads + writes)",
        title=f"Vector add on {d.name}: bandwidth vs size (L2 not flushed; n <= 2^{int(math.log2(GRAPH_BELOW))} "
              f"timed as CUDA graphs)", hlines=hl,
        vlines={f"3 arrays = L2 ({d.l2_bytes / 2**20:.0f} MiB)": d.l2_bytes / 12},
        shade=regimes(rows, d.l2_bytes))


def _fns(n: int, contenders: dict):
    import cupy

    a, b = make_inputs(n, "float32", check.rng(n), "cuda")
    out = cupy.empty_like(a)
    return {name: (lambda f=f: f(a, b, out=out)) for name, f in contenders.items()}, (a, b, out)


def head_to_head(sizes=(2**28, 2**29), rounds: int = 7) -> list[dict]:
    """The issue's target: at 2^28 elements and above, the float4 CUDA kernels and Triton reach >= 1.0x torch.add.

    Measured in interleaved rounds (common.bench.interleaved) so slow drift cannot favour one contender.
    """
    out = []
    for n in cli.progress(sizes, "head-to-head sizes"):
        fns, keep = _fns(n, {"torch.add": peer_torch_add, "cuda 03 float4": add_cuda_03,
                             "cuda 04 float4 streaming store": add_cuda_04, "triton": add_triton})
        ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
        peer = ts["torch.add"]
        for name, t in ts.items():
            out.append({"n": n, "variant": name, "ms": t.median_ms, "GB/s": t.gbps(12 * n),
                        "vs torch.add": peer.median_ms / t.median_ms, "spread": t.spread,
                        "target": "" if name == "torch.add" else ">= 1.00",
                        "met": None if name == "torch.add" else peer.median_ms / t.median_ms >= 1.0})
        del keep
    return out


def tune(n: int = 2**28, rounds: int = 3) -> list[dict]:
    """Sweep vadd_04's (threads, unroll, streaming store) and Triton's (BLOCK, num_warps) against torch.add."""
    contenders = {"torch.add": peer_torch_add, "cuda 03 float4": add_cuda_03}
    for threads in (128, 256, 512):
        for unroll in (1, 2, 4):
            for stream in (0, 1):
                contenders[f"cuda 04 t{threads} u{unroll} s{stream}"] = \
                    (lambda a, b, out, t=threads, u=unroll, s=stream: add_cuda_04(a, b, out, threads=t, unroll=u,
                                                                                   stream=s))
    for block, warps in ((512, 4), (1024, 4), (512, 2), (2048, 4), (2048, 8), (4096, 8), (4096, 16), (8192, 16)):
        contenders[f"triton B{block} w{warps}"] = \
            (lambda a, b, out, bl=block, w=warps: add_triton(a, b, out, block=bl, num_warps=w))
    fns, keep = _fns(n, contenders)
    ts = bench.interleaved(fns, rounds=rounds, flush_l2=True)
    peer = ts["torch.add"].median_ms
    rows = [{"config": k, "ms": t.median_ms, "GB/s": t.gbps(12 * n), "vs torch.add": peer / t.median_ms,
             "spread": t.spread} for k, t in ts.items()]
    del keep
    return sorted(rows, key=lambda r: r["ms"])


# ---------------------------------------------------------------------------------------------------------------------
# Without a GPU: what the compiler made of the kernels
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="vadd_03_float4")
    k3 = rep.kernels.get("vadd_03_float4")
    if k3 is not None and k3.sass:
        w = k3.sass_counts
        print(f"-> vadd_03_float4 issues {w.get('LDG.128', 0)} x 128-bit loads (LDG.E.128): the float4 path really is "
              f"16 bytes per load; vadd_01 issues {rep.kernels['vadd_01_one_thread_per_element'].sass_counts.get('LDG.32', 0)}"
              " x 32-bit loads.")
    from common import triton_support as ts

    cc = int(arch.split("_")[1].rstrip("a"))
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    print(f"\nTriton add_kernel compiled ahead of time for {arch} (BLOCK={TRITON_BLOCK}, num_warps={TRITON_WARPS}):")
    for label, div in (("no alignment known", ()), ("pointers 16-byte aligned and n % 16 == 0",
                                                     ("a_ptr", "b_ptr", "c_ptr", "n"))):
        k = ts.compile_for(add_kernel, sig, {"BLOCK": TRITON_BLOCK}, cc=cc, num_warps=TRITON_WARPS,
                           divisible_by_16=div)
        print(f"  {label:42s} PTX global memory ops: {ts.ptx_memory_ops(k.asm['ptx'])}")
    print("  A GPU launch learns alignment from the actual arguments (addresses and n divisible by 16), so the fast\n"
          "  path is taken on aligned data and the scalar one on odd sizes or offset views.")


# ---------------------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], size=True, size_help="largest n of the sweep (default 2^29, quick 2^22)")
    p.add_argument("--tune", action="store_true", help="(GPU) sweep the launch parameters of vadd_04 and Triton")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:3] if args.quick else CPU_CHECK_CASES)
        show_compile_reports(args.arch)
        print("\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[:6] if args.quick else CHECK_CASES)
    show_compile_reports(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    if args.tune:
        rows = tune()
        report.print_table(rows, title="vadd_04 / Triton launch parameters at n = 2^28 (interleaved rounds)")
        if args.json:
            print("wrote", report.write_json(LAB + "_tune", rows, out_dir=out_dir))
        return 0
    ceiling = bench.ceilings()
    top = args.size or (2**22 if args.quick else 2**29)
    step = 2 if args.quick else 1
    sizes = [2**k for k in range(10, int(math.log2(top)) + 1, step)]
    rows = sweep(sizes, ceiling["hbm_gbps"])
    big = [r for r in rows if r["shape"][0] == sizes[-1]]
    report.print_table(big, ["variant", "impl", "ms", "gbps", "frac_ceiling", "vs_torch_add", "spread"],
                       title=f"n = 2^{int(math.log2(sizes[-1]))} (12 n = {12 * sizes[-1] / 2**30:.2f} GiB moved), "
                             f"measured ceiling {ceiling['hbm_gbps']:.0f} GB/s")
    tg = head_to_head() if top >= 2**29 else []
    if tg:
        report.print_table(tg, title="target: >= 1.0x torch.add at 2^28 elements and above (interleaved rounds)")
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, ceiling=ceiling, targets=tg,
                                         device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(rows, ceiling, os.path.join(out_dir, f"{LAB}.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
