"""Lab 1.6 - Naive matrix multiply: one thread per output, coalesced or not, and the baseline phase 2 improves on.

You will learn
  * the simplest correct GEMM (C = A @ B, fp32, row-major, any M, N, K): one thread computes one C[row, col] as a
    K-long dot product, reading a row of A and a column of B straight from global memory;
  * coalescing, quantified: what matters is how many 32-byte sectors the 32 lanes of ONE load instruction touch.
    Mapping threadIdx.x to the row (mm_01) makes every A load touch 32 sectors; mapping it to the column (mm_02)
    makes A a broadcast (1 sector) and B one contiguous 128-byte line (4 sectors). Per k step: 33 sectors against 5,
    so mm_01 should be ~6.6x slower - the lab counts the sectors from the actual addresses and checks the ratio
    (on an H200: 8.97x at 4096^3, 4.88x at 2999 x 3001 x 2027; see below);
  * the same output-stationary idea in Triton, one program per BLOCK_M x BLOCK_N tile: tl.dot on tiles that Triton
    stages through shared memory and registers for you (phase 2 builds that by hand in CUDA C);
  * how far naive is from the library: cuBLAS SGEMM through cupy.matmul with TF32 off (CuPy uses TF32 only when
    CUPY_TF32=1; the lab refuses to run the peer otherwise, and shows its error is fp32-level).

The two numbers, for the main case M = N = K = 4096: FLOPs = 2 M N K = 137.4 G; bytes that must move = 4 (M K + K N
+ M N) = 192 MiB. 137.4 GFLOP / 192 MiB = 683 FLOP/B, ~50x above an H200's ridge point (67 TFLOP/s / 4.8 TB/s = 14
FLOP/B): a good GEMM is compute-bound (cuBLAS: ~50 TFLOP/s fp32, ~2.7 ms). The naive kernels are not: each thread
re-reads 2K floats (8 K bytes per 2 K FLOPs = 4 B/FLOP from L1/L2), so they are bound by the load path, far below
either ceiling - that gap is phase 2.

Measured on an H200 (results/h200/phase1_lab06_matmul_naive.json, commit 173e2d9; fp32, TF32 off):
  * cuBLAS at 4096^3: 2.67 ms, 51,384 GFLOP/s, 0.77 of the 66.9 TFLOP/s FP32 peak - the ~50 TFLOP/s, ~2.7 ms
    predicted; its error against float64 was 1.1e-6 (fp32-level; TF32 inputs would give ~4e-4). At
    2999 x 3001 x 2027: 43,613 GFLOP/s.
  * the naive kernels at 4096^3: mm_01 (uncoalesced) 274.3 ms, 501 GFLOP/s, 0.0098 of cuBLAS; mm_02 (coalesced)
    30.58 ms, 4,494 GFLOP/s, 0.087 of cuBLAS. mm_01 / mm_02 = 8.97 against the predicted 6.6: 1.36x more than the
    sector count, inside the 0.5-2x target, and between the sector model (6.6) and the line model (33 / 2 ~ 16),
    so neither sectors nor 128-byte lines alone set the time. At 2999 x 3001 x 2027 the ratio was 4.88 (mm_01
    1,406 GFLOP/s, mm_02 6,859): both kernels ran faster per FLOP there, mm_01 by 2.8x and mm_02 by 1.5x. The
    likely reasons are the power-of-two pitch of 4096 (the rows mm_01's lanes read, and the k steps of both
    kernels, are exactly 16 KiB apart, so their lines compete for the same cache sets) and A and B of 64 MiB each,
    past the 60 MiB L2, where the odd shape's two 23 MiB inputs fit together; this run does not separate the two.
  * Triton, one program per 64 x 64 tile with tl.dot in true fp32 ("ieee"): 43,032 GFLOP/s at 4096^3, 0.84 of
    cuBLAS and 9.6x mm_02; 27,820 GFLOP/s (0.64 of cuBLAS) at the odd shape, where no dimension is a multiple of
    its tile and every edge tile is partly masked.

Run: python -m phase1_architecture.lab06_matmul_naive [--quick] [--size M,N,K] [--no-bench]
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

from common import arrays, bench, check, cli, cuda, device, lab, report
from common.triton_support import INTERPRETER, launch, tl, triton

LAB = "phase1_lab06_matmul_naive"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lab06_matmul_naive.cu")
BLOCK = (32, 8)
GRID_Y_MAX = 65535
SECTOR = 32


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def reference(a, b) -> np.ndarray:
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """size = (M, N, K): A (M, K) and B (K, N), standard normal (zero mean, so sums cancel and a dropped term shows)."""
    m, n, k = size
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    return arrays.from_numpy(a, dtype, where), arrays.from_numpy(b, dtype, where)


def tolerance(size, dtype) -> check.Tol:
    """fp32 dot products of length K: rounding error grows ~sqrt(K) x 6e-8 relative. The bound below sits ~15x under
    what TF32 (10-bit mantissa inputs, ~4e-4 relative) would give at K = 4096, so TF32 cannot pass for fp32."""
    k = size[2]
    rel = max(1e-5, 4e-7 * math.sqrt(max(k, 1)))
    return check.Tol(rel, 50 * rel)


# ---------------------------------------------------------------------------------------------------------------------
# Validation shared by every wrapper
# ---------------------------------------------------------------------------------------------------------------------
def _shapes(a, b, out, *, device_arrays: bool | None, libs=("cupy", "torch", "numpy")):
    arrays.check_array("a", a, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    arrays.check_array("b", b, dtypes=("float32",), ndim=2, device=device_arrays, libs=libs)
    arrays.check_same("a, b", a, b, shape=False)
    m, k = a.shape
    k2, n = b.shape
    if k != k2:
        raise ValueError(f"a, b: inner dimensions must match for a @ b, got a {tuple(a.shape)} and b {tuple(b.shape)}")
    for name, v in (("M", m), ("N", n), ("K", k)):
        if v >= 2**31:
            raise ValueError(f"{name} = {v}: dimensions must be below 2^31 (int kernel arguments)")
    out = arrays.check_out(out, (m, n), "float32", a)
    return out, int(m), int(n), int(k)


# ---------------------------------------------------------------------------------------------------------------------
# CUDA C wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _launch(name: str, a, b, out, m, n, k, grid):
    kern = cuda.get_kernel(CU, name)
    kern(grid, BLOCK, (a, b, out, np.int32(m), np.int32(n), np.int32(k)))
    return out


def mm_cuda_01(a, b, out=None):
    """Uncoalesced: threadIdx.x -> row."""
    out, m, n, k = _shapes(a, b, out, device_arrays=True, libs=("cupy",))
    if m == 0 or n == 0:
        return out
    grid = (math.ceil(m / BLOCK[0]), min(math.ceil(n / BLOCK[1]), GRID_Y_MAX))
    return _launch("mm_01_naive_uncoalesced", a, b, out, m, n, k, grid)


def mm_cuda_02(a, b, out=None):
    """Coalesced: threadIdx.x -> column."""
    out, m, n, k = _shapes(a, b, out, device_arrays=True, libs=("cupy",))
    if m == 0 or n == 0:
        return out
    grid = (math.ceil(n / BLOCK[0]), min(math.ceil(m / BLOCK[1]), GRID_Y_MAX))
    return _launch("mm_02_naive_coalesced", a, b, out, m, n, k, grid)


# ---------------------------------------------------------------------------------------------------------------------
# Triton: one program per output tile
# ---------------------------------------------------------------------------------------------------------------------
@triton.jit
def matmul_tile_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # A 1-D grid over tiles (row-major order): no grid-dimension limit, any M and N.
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    rm = pid_m.to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)      # 64-bit: row * stride can pass 2^31
    rn = pid_n.to(tl.int64) * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :]
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # masks make any M, N, K legal: out-of-range rows/columns/k read as 0 and add nothing
        a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k0), other=0.0)
        b = tl.load(b_ptrs, mask=(rk[:, None] < K - k0) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")             # "ieee": true fp32 FMAs, no TF32
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + rm[:, None] * stride_cm + rn[None, :]
    tl.store(c_ptrs, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


TRITON_TILE = dict(BLOCK_M=64, BLOCK_N=64, BLOCK_K=32)
TRITON_WARPS, TRITON_STAGES = 4, 3


def mm_triton(a, b, out=None):
    out, m, n, k = _shapes(a, b, out, device_arrays=not INTERPRETER)
    if m == 0 or n == 0:
        return out
    grid = (triton.cdiv(m, TRITON_TILE["BLOCK_M"]) * triton.cdiv(n, TRITON_TILE["BLOCK_N"]),)
    launch(matmul_tile_kernel, grid, a, b, out, m, n, k, k, n, n, num_warps=TRITON_WARPS, num_stages=TRITON_STAGES,
           **TRITON_TILE)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Peer: cuBLAS through CuPy, TF32 off
# ---------------------------------------------------------------------------------------------------------------------
def tf32_state() -> str:
    """'off' when cupy.matmul on float32 uses true fp32 (CUBLAS_COMPUTE_32F), else why not."""
    if os.environ.get("NVIDIA_TF32_OVERRIDE") not in (None, "0"):
        return f"NVIDIA_TF32_OVERRIDE={os.environ['NVIDIA_TF32_OVERRIDE']} is set"
    try:
        from cupy._core import _routines_linalg as rl

        if rl.get_compute_type(np.float32) == rl.COMPUTE_TYPE_TF32:
            return "CuPy's fp32 compute type is TF32 (CUPY_TF32=1)"
    except (ImportError, AttributeError):
        if int(os.environ.get("CUPY_TF32", "0") or 0) > 0:
            return "CUPY_TF32 is set"
    return "off"


def peer_cublas(a, b, out=None):
    """cuBLAS SGEMM (cupy.matmul) with TF32 off."""
    import cupy

    out, m, n, k = _shapes(a, b, out, device_arrays=True, libs=("cupy",))
    state = tf32_state()
    if state != "off":
        raise RuntimeError(f"the cuBLAS peer must run in fp32, but TF32 is on: {state}; unset it")
    if m == 0 or n == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    cupy.matmul(a, b, out=out)
    return out


VARIANTS = [
    lab.Variant("cuda 01 naive, uncoalesced (x -> row)", mm_cuda_01, "cuda"),
    lab.Variant("cuda 02 naive, coalesced (x -> col)", mm_cuda_02, "cuda"),
    lab.Variant("triton, one program per 64x64 tile", mm_triton, "triton"),
]
PEERS = [lab.Variant("cuBLAS (cupy.matmul, TF32 off)", peer_cublas, "peer")]
CHECK_CASES = [(s, "float32") for s in [(1, 1, 1), (1, 7, 3), (5, 1, 9), (33, 65, 17), (127, 129, 255), (64, 64, 64),
                                        (300, 1, 500), (1000, 1001, 999), (0, 5, 3), (4, 0, 3), (6, 5, 0),
                                        (2048, 2048, 1)]]
CPU_CHECK_CASES = [(s, "float32") for s in [(1, 1, 1), (17, 33, 9), (65, 31, 100), (0, 5, 3), (6, 5, 0)]]


# ---------------------------------------------------------------------------------------------------------------------
# The prediction: sectors per request, from the actual addresses
# ---------------------------------------------------------------------------------------------------------------------
def sectors(addresses) -> int:
    """Distinct 32-byte sectors touched by one warp's addresses (bytes)."""
    return len({int(x) // SECTOR for x in addresses})


def warp_sectors(mapping: str, m: int, n: int, k: int, row0: int = 0, col0: int = 0, kk: int = 0) -> dict:
    """Sectors that ONE warp's A and B loads touch at step kk, for the kernel's thread-to-element mapping.

    mapping 'uncoalesced': lane l computes C[row0 + l, col0]; 'coalesced': C[row0, col0 + l]. Base addresses 0 (A)
    and 0 (B): cudaMalloc aligns to 256 B, and sector counts depend only on offsets.
    """
    lanes = range(32)
    if mapping == "uncoalesced":
        rows, cols = [min(row0 + l, m - 1) for l in lanes], [col0] * 32
    elif mapping == "coalesced":
        rows, cols = [row0] * 32, [min(col0 + l, n - 1) for l in lanes]
    else:
        raise ValueError(f"mapping: expected 'uncoalesced' or 'coalesced', got {mapping!r}")
    a_addr = [4 * (r * k + kk) for r in rows]
    b_addr = [4 * (kk * n + c) for c in cols]
    return {"A": sectors(a_addr), "B": sectors(b_addr)}


def predicted_ratio(m: int, n: int, k: int) -> tuple[float, dict, dict]:
    """(sectors per k step uncoalesced / coalesced, both counts), averaged over the first 8 k steps of warp 0."""
    un = {"A": 0, "B": 0}
    co = {"A": 0, "B": 0}
    steps = max(1, min(8, k))    # K = 0 has no loads; count one step's addresses anyway
    for kk in range(steps):
        for dct, mp in ((un, "uncoalesced"), (co, "coalesced")):
            s = warp_sectors(mp, m, n, k, kk=kk)
            dct["A"] += s["A"] / steps
            dct["B"] += s["B"] / steps
    return (un["A"] + un["B"]) / (co["A"] + co["B"]), un, co


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark
# ---------------------------------------------------------------------------------------------------------------------
def bench_shape(shape, slow_reps: int = 3) -> list[dict]:
    import cupy

    m, n, k = shape
    a, b = make_inputs(shape, "float32", check.rng(11), "cuda")
    out = cupy.empty((m, n), dtype=cupy.float32)
    flops = 2 * m * n * k
    nbytes = 4 * (m * k + k * n + m * n)
    rows = []
    times = {}
    for v in PEERS + VARIANTS:
        slow = v.fn is mm_cuda_01
        t = bench.bench(lambda: v.fn(a, b, out=out), min_reps=slow_reps if slow else 10,
                        warmup_ms=0 if slow else 25, rep_ms=50 if slow else 100)
        times[v.name] = t.median_ms
        ref_err = None
        if v.impl == "peer":
            # the peer's own error against float64, on a corner of the output (float64 on the host is slow)
            sub = (slice(0, min(m, 256)), slice(0, min(n, 256)))
            want = a.get()[sub[0]].astype(np.float64) @ b.get()[:, sub[1]].astype(np.float64)
            ref_err = check.compare(out[sub].get(), want, "float32", tolerance(shape, "float32")).rel_norm_err
        rows.append(report.row(LAB, v.name, v.impl, shape, "float32", t, nbytes=nbytes, flops=flops,
                               gflops=flops / (t.median_ms * 1e6), peer_rel_err=ref_err))
    peer = times[PEERS[0].name]
    for r in rows:
        r["frac_cublas"] = peer / r["ms"]
    a = b = out = None
    cupy.get_default_memory_pool().free_all_blocks()
    return rows


def plot(rows: list[dict], path: str) -> str:
    labels = [f"{r['variant']}  [{'x'.join(map(str, r['shape']))}]" for r in rows]
    return report.plot_bars(path, labels, [r["gflops"] for r in rows], ylabel="GFLOP/s (fp32)",
                            colors=[report.IMPL_COLORS[r["impl"]] for r in rows], annotate_fmt="{:,.0f}",
                            title=f"Naive matmul vs cuBLAS on {device.info().name} (fp32, TF32 off)")


def _parse_size(s: str):
    parts = [int(p) for p in s.replace("x", ",").split(",")]
    if len(parts) == 1:
        parts *= 3
    if len(parts) != 3 or min(parts) < 1:
        raise SystemExit(f"--size: expected M,N,K or one number, got {s!r}")
    return tuple(parts)


def show_compile_report(arch: str) -> None:
    rep = cuda.print_compile_report(CU, arch, excerpt_of="mm_02_naive_coalesced")
    c1, c2 = (rep.kernels[k].sass_counts for k in ("mm_01_naive_uncoalesced", "mm_02_naive_coalesced"))
    if c1 and c2:
        print(f"-> same instruction mix in both: LDG {sum(v for k, v in c1.items() if k.startswith('LDG'))} vs "
              f"{sum(v for k, v in c2.items() if k.startswith('LDG'))}, FFMA {c1.get('FFMA', 0)} vs "
              f"{c2.get('FFMA', 0)}. The difference is only in the addresses the lanes of a warp produce.")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0])
    p.add_argument("--size", default=None, help="M,N,K of the benchmark (default 4096,4096,4096 and 2999,3001,2027)")
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    this = sys.modules[__name__]
    main_shape = _parse_size(args.size) if args.size else (4096, 4096, 4096)
    ratio, un, co = predicted_ratio(*main_shape)
    report.print_table([{"mapping": "mm_01 uncoalesced (lane -> row)", "A sectors": un["A"], "B sectors": un["B"],
                         "total per k step": un["A"] + un["B"]},
                        {"mapping": "mm_02 coalesced (lane -> col)", "A sectors": co["A"], "B sectors": co["B"],
                         "total per k step": co["A"] + co["B"]}],
                       title=f"Sectors one warp's loads touch per k step, {'x'.join(map(str, main_shape))} "
                             f"(from the addresses)")
    print(f"prediction: mm_01 / mm_02 time = {ratio:.2f} (if the sectors moved through L1 are the limit)")
    if not device.has_gpu():
        _, ok = lab.check_variants(this, VARIANTS, CPU_CHECK_CASES[:3] if args.quick else CPU_CHECK_CASES)
        show_compile_report(args.arch)
        print("\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.")
        return 0 if ok else 1

    print(f"cuBLAS peer: TF32 {tf32_state()}")
    _, ok = lab.check_variants(this, VARIANTS + PEERS, CHECK_CASES[:6] if args.quick else CHECK_CASES)
    show_compile_report(args.arch)
    if (stop := lab.stop_before_bench(ok, args)) is not None:
        return stop
    out_dir = args.out or report.results_dir()
    os.makedirs(out_dir, exist_ok=True)
    shapes = [(1024, 1024, 1024)] if args.quick else ([main_shape] if args.size else
                                                       [(4096, 4096, 4096), (2999, 3001, 2027)])
    rows = []
    for s in cli.progress(shapes, "shapes"):
        rows += bench_shape(s)
    report.print_table(rows, ["variant", "shape", "ms", "gflops", "frac_cublas", "peer_rel_err", "spread"],
                       title="Naive matmul, fp32 (GFLOP/s and the fraction of cuBLAS; peer_rel_err: cuBLAS vs float64)")
    first = [r for r in rows if tuple(r["shape"]) == tuple(shapes[0])]
    t1 = next(r["ms"] for r in first if r["variant"].startswith("cuda 01"))
    t2 = next(r["ms"] for r in first if r["variant"].startswith("cuda 02"))
    ratio_s, _, _ = predicted_ratio(*shapes[0])
    peer = next(r for r in first if r["impl"] == "peer")
    targets = [{"target": "coalesced beats uncoalesced by the sector ratio (within 0.5x .. 2x)",
                "predicted": ratio_s, "measured": t1 / t2, "met": 0.5 <= (t1 / t2) / ratio_s <= 2.0},
               {"target": "cuBLAS error is fp32-level (TF32 off)", "predicted": f"<= {tolerance(shapes[0], '').rel_norm:.1e}",
                "measured": peer["peer_rel_err"], "met": peer["peer_rel_err"] <= tolerance(shapes[0], "").rel_norm}]
    report.print_table(targets, title="Predictions vs measurement")
    if args.json:
        print("wrote", report.write_json(LAB, rows, out_dir=out_dir, targets=targets, tf32=tf32_state(),
                                         sectors={"uncoalesced": un, "coalesced": co}, device=device.info().as_dict()))
    if args.plot:
        print("wrote", plot(rows, os.path.join(out_dir, f"{LAB}.png")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
