"""Lab 1.2's measuring side: bandwidth against size for every version and peer (the three regimes), the target in
interleaved rounds, vadd_04's and Triton's launch parameters (--tune), what the compiler made of the kernels, and the
plot (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os

from common import bench, check, cli, cuda, device, lab, report
from common import triton_support as ts

from . import lab as L

CPU_NOTE = "\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter."
GRAPH_BELOW = 2**24   # sizes up to this are timed as CUDA graphs of GRAPH_CALLS launches (see sweep)
GRAPH_CALLS = 100


def add_arguments(p) -> None:
    cli.add_size(p, "largest n of the sweep (default 2^29, quick 2^22)")
    p.add_argument("--tune", action="store_true", help="(GPU) sweep the launch parameters of vadd_04 and Triton")


# ---------------------------------------------------------------------------------------------------------------------
# What the compiler made of the kernels (every machine)
# ---------------------------------------------------------------------------------------------------------------------
def show_compile_reports(arch: str) -> None:
    rep = cuda.print_compile_report(L.CU, arch, excerpt_of="vadd_03_float4")
    k3 = rep.kernels.get("vadd_03_float4")
    if k3 is not None and k3.sass:
        w = k3.sass_counts
        print(f"-> vadd_03_float4 issues {w.get('LDG.128', 0)} x 128-bit loads (LDG.E.128): the float4 path really is "
              f"16 bytes per load; vadd_01 issues {rep.kernels['vadd_01_one_thread_per_element'].sass_counts.get('LDG.32', 0)}"
              " x 32-bit loads.")
    cc = int(arch.split("_")[1].rstrip("a"))
    sig = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    print(f"\nTriton add_kernel compiled ahead of time for {arch} (BLOCK={L.TRITON_BLOCK}, "
          f"num_warps={L.TRITON_WARPS}):")
    for label, div in (("no alignment known", ()), ("pointers 16-byte aligned and n % 16 == 0",
                                                     ("a_ptr", "b_ptr", "c_ptr", "n"))):
        k = ts.compile_for(L.add_kernel, sig, {"BLOCK": L.TRITON_BLOCK}, cc=cc, num_warps=L.TRITON_WARPS,
                           divisible_by_16=div)
        print(f"  {label:42s} PTX global memory ops: {ts.ptx_memory_ops(k.asm['ptx'])}")
    print("  A GPU launch learns alignment from the actual arguments (addresses and n divisible by 16), so the fast\n"
          "  path is taken on aligned data and the scalar one on odd sizes or offset views.")


def compile_report(args) -> None:
    show_compile_reports(args.arch)


# ---------------------------------------------------------------------------------------------------------------------
# Timing (GPU)
# ---------------------------------------------------------------------------------------------------------------------
def sweep(sizes, ceiling_gbps: float) -> list[dict]:
    """GB/s of every variant and peer at every size, L2 NOT flushed (so the L2-resident regime can show).

    Up to GRAPH_BELOW elements each point is timed as a CUDA graph of GRAPH_CALLS launches: one Python call (argument
    checks, CuPy's launch path) costs tens of microseconds on the host, far more than the GPU needs for a few MB, so
    the plain timer would measure Python, not the memory system. Larger sizes use the plain timer.
    """
    import cupy

    rows = []
    for n in cli.progress(sizes, "vector add sizes"):
        rng = check.rng(n)
        a, b = L.make_inputs(n, "float32", rng, "cuda")
        out = cupy.empty_like(a)
        peer_ms = None
        for v in L.PEERS + L.VARIANTS:
            t = bench.bench(lambda: v.fn(a, b, out=out), flush_l2=False, graph=n <= GRAPH_BELOW, calls=GRAPH_CALLS)
            r = report.row(L.LAB, v.name, v.impl, (n,), "float32", t, nbytes=12 * n, flops=n,
                           ceiling_gbps=ceiling_gbps)
            if v.name == "torch.add":
                peer_ms = t.median_ms
            r["vs_torch_add"] = peer_ms / t.median_ms if peer_ms else None
            rows.append(r)
        del a, b, out
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def _fns(n: int, contenders: dict):
    import cupy

    a, b = L.make_inputs(n, "float32", check.rng(n), "cuda")
    out = cupy.empty_like(a)
    return {name: (lambda f=f: f(a, b, out=out)) for name, f in contenders.items()}, (a, b, out)


def head_to_head(sizes=(2**28, 2**29), rounds: int = 7) -> list[dict]:
    """The target: at 2^28 elements and above, the float4 CUDA kernels and Triton reach >= 1.0x torch.add.

    Measured in interleaved rounds (common.bench.interleaved) so slow drift cannot favour one contender.
    """
    out = []
    for n in cli.progress(sizes, "head-to-head sizes"):
        fns, keep = _fns(n, {"torch.add": L.peer_torch_add, "cuda 03 float4": L.add_cuda_03,
                             "cuda 04 float4 streaming store": L.add_cuda_04, "triton": L.add_triton})
        ts_ = bench.interleaved(fns, rounds=rounds, flush_l2=True)
        peer = ts_["torch.add"]
        for name, t in ts_.items():
            out.append({"n": n, "variant": name, "ms": t.median_ms, "GB/s": t.gbps(12 * n),
                        "vs torch.add": peer.median_ms / t.median_ms, "spread": t.spread,
                        "target": "" if name == "torch.add" else ">= 1.00",
                        "met": None if name == "torch.add" else peer.median_ms / t.median_ms >= 1.0})
        del keep
    return out


def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()
    top = ctx.args.size or (2**22 if ctx.quick else 2**29)
    step = 2 if ctx.quick else 1
    sizes = [2**k for k in range(10, int(math.log2(top)) + 1, step)]
    rows = sweep(sizes, ceiling["hbm_gbps"])
    big = [r for r in rows if r["shape"][0] == sizes[-1]]
    tg = head_to_head() if top >= 2**29 else []
    tables = [(big, ["variant", "impl", "ms", "gbps", "frac_ceiling", "vs_torch_add", "spread"],
               f"n = 2^{int(math.log2(sizes[-1]))} (12 n = {12 * sizes[-1] / 2**30:.2f} GiB moved), "
               f"measured ceiling {ceiling['hbm_gbps']:.0f} GB/s")]
    if tg:
        tables.append((tg, None, "target: >= 1.0x torch.add at 2^28 elements and above (interleaved rounds)"))
    return lab.Result(rows=rows, meta=dict(ceiling=ceiling, targets=tg, device=device.info().as_dict()),
                      tables=tables)


def tune_sweep(n: int = 2**28, rounds: int = 3) -> list[dict]:
    """Sweep vadd_04's (threads, unroll, streaming store) and Triton's (BLOCK, num_warps) against torch.add."""
    contenders = {"torch.add": L.peer_torch_add, "cuda 03 float4": L.add_cuda_03}
    for threads in (128, 256, 512):
        for unroll in (1, 2, 4):
            for stream in (0, 1):
                contenders[f"cuda 04 t{threads} u{unroll} s{stream}"] = \
                    (lambda a, b, out, t=threads, u=unroll, s=stream: L.add_cuda_04(a, b, out, threads=t, unroll=u,
                                                                                     stream=s))
    for block, warps in ((512, 4), (1024, 4), (512, 2), (2048, 4), (2048, 8), (4096, 8), (4096, 16), (8192, 16)):
        contenders[f"triton B{block} w{warps}"] = \
            (lambda a, b, out, bl=block, w=warps: L.add_triton(a, b, out, block=bl, num_warps=w))
    fns, keep = _fns(n, contenders)
    ts_ = bench.interleaved(fns, rounds=rounds, flush_l2=True)
    peer = ts_["torch.add"].median_ms
    rows = [{"config": k, "ms": t.median_ms, "GB/s": t.gbps(12 * n), "vs torch.add": peer / t.median_ms,
             "spread": t.spread} for k, t in ts_.items()]
    del keep
    return sorted(rows, key=lambda r: r["ms"])


def tune(ctx) -> lab.Result:
    rows = tune_sweep()
    return lab.Result(rows=rows, tables=[(rows, None, "vadd_04 / Triton launch parameters at n = 2^28 "
                                                      "(interleaved rounds)")])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
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


def plot(data: dict, out_dir: str) -> list[str]:
    rows, ceiling, dev = data["rows"], data["ceiling"], data.get("device") or {}
    ns = sorted({r["shape"][0] for r in rows})
    names = list(dict.fromkeys([v.name for v in L.VARIANTS + L.PEERS] + [r["variant"] for r in rows]))
    series = {}
    for name in names:
        by_n = {r["shape"][0]: r["gbps"] for r in rows if r["variant"] == name}
        if by_n:
            series[name] = [by_n.get(n) for n in ns]
    l2_bytes = dev.get("l2_bytes") or device.arch_info(dev.get("arch", "sm_90")).example_l2_bytes
    datasheet = (dev.get("datasheet") or ceiling.get("datasheet") or {}).get("hbm_gbps")
    hl = {f"measured HBM ceiling {ceiling['hbm_gbps']:.0f} GB/s ({ceiling['hbm_method']})": ceiling["hbm_gbps"]}
    if datasheet:
        hl[f"datasheet {datasheet} GB/s"] = datasheet
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_lines(
        path, ns, series, xlabel="elements n (fp32; 12 n bytes moved)", ylabel="GB/s (reads + writes)",
        title=f"Vector add on {data.get('gpu', 'GPU')}: bandwidth vs size (L2 not flushed; "
              f"n <= 2^{int(math.log2(GRAPH_BELOW))} timed as CUDA graphs)", hlines=hl,
        vlines={f"3 arrays = L2 ({l2_bytes / 2**20:.0f} MiB)": l2_bytes / 12},
        shade=regimes(rows, l2_bytes))]
