"""Lab 3.1's measuring side: the CUDA C -> Triton concept map, lab 1.2's vector add checked next to the row sums, what
Triton and NVRTC made of the kernels (ahead of time, no GPU needed; on a GPU also what the launches compiled), the
bandwidth of every version in one run, num_warps at work, and the plot (redrawn from the JSON by --replot)."""
from __future__ import annotations

import os
import re

from common import bench, check, cli, cuda, device, lab, occupancy, plan, report
from common.i18n import tr
from common import triton_support as ts
from common.arrays import device_randn
from common.triton_support import aot, launch, load_summary, summarize, triton

from phase1_architecture.lab02_vector_add import lab as va

from . import lab as L
from .triton_kernels import rowsum_kernel


CPU_NOTE = ("\nCUDA C kernels were compiled (NVRTC), not run: no GPU. The Triton kernels ran in the interpreter "
            "(correctness only; num_warps and num_stages are ignored there) and were compiled ahead of time for the "
            "--arch target to show registers, layouts and load widths.")
VECTOR_ADD = [v for v in va.VARIANTS if v.name in ("cuda 03 float4", "cuda 04 float4 streaming store", "triton")]
VECTOR_ADD_CASES = [(n, "float32") for n in (1, 1000, 1025, 65537)]


def add_arguments(p) -> None:
    p.add_argument("--dump-ir", default=None, metavar="DIR",
                   help=tr("write the full TTIR/TTGIR/LLIR/PTX of the vector-add and row-sum kernels to DIR"))


def explain(args) -> None:
    print_concepts()
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("What the lesson predicts for {gpu} (from its description: bandwidth, SMs, "
                                "the kernels' registers)", gpu=gpu.label()))
    print("\n" + tr("Row sums: CUDA C and Triton, one reference"))


def predict(gpu: device.DeviceInfo) -> dict:
    """The lesson's models for `gpu`: the floor of each benchmark case (bytes over the datasheet bandwidth), how far
    below the fp32 ridge point a row sum sits, and how many waves of rowsum_01's blocks the main case makes (the
    occupancy calculator on its registers for this GPU)."""
    bw = gpu.hbm_gbps
    out = {}
    for shape in L.ROWSUM_SHAPES:
        (rows, cols), _ = L.fit_shape(shape, gpu)
        out[tr("floor of row sums {rows} x {cols} fp32 ({mib:.0f} MiB / {bw:.0f} GB/s)", rows=rows, cols=cols,
               mib=L.bench_bytes((rows, cols)) / 2**20, bw=bw)] \
            = f"{L.bench_bytes((rows, cols)) / (bw * 1e9) * 1e3:.3f} ms"
    out[tr("floor of the vector add at n = {n} (12 n B)", n=plan.fmt_size(L.VADD_N))] = \
        f"{12 * L.VADD_N / (bw * 1e9) * 1e3:.3f} ms"
    fp32 = gpu.peak("fp32_tflops")
    if fp32:
        ridge = fp32 * 1e12 / (bw * 1e9)
        out[tr("fp32 ridge point (datasheet FLOP/s over bandwidth)")] = \
            tr("{ridge:.1f} FLOP/B: a row sum's 0.25 FLOP/B is {times:.0f}x below", ridge=ridge, times=ridge / 0.25)
    threads = L.cuda_config()["THREADS"]
    regs, smem = cuda.resources(L.CU, "rowsum_01_block_per_row", gpu, {"THREADS": threads})
    per_sm = occupancy.occupancy(gpu.arch, threads, regs, smem).blocks_per_sm
    (rows, cols), _ = L.fit_shape(L.ROWSUM_SHAPES[0], gpu)
    if per_sm:
        out[tr("rowsum_01 at {rows} x {cols}: blocks of {threads} resident per SM ({regs} registers)", rows=rows,
               cols=cols, threads=threads, regs=regs)] = \
            tr("{per_sm} ({waves:.0f} waves over {sms} SMs; {kib:.0f} KiB of 4-byte loads in flight per SM)",
               per_sm=per_sm, waves=rows / (per_sm * gpu.sms), sms=gpu.sms, kib=per_sm * threads * 4 / 1024)
    return out


def extra_checks(args) -> bool:
    """Lab 1.2's vector add kernels (imported), CUDA C and Triton, against the same reference."""
    print("\n" + tr("Vector add (lab 1.2's kernels, imported): CUDA C and Triton, one reference"))
    _, ok = lab.check_variants(va, VECTOR_ADD + (va.PEERS if device.has_gpu() else []),
                               VECTOR_ADD_CASES[:2] if args.quick else VECTOR_ADD_CASES)
    return ok


# ---------------------------------------------------------------------------------------------------------------------
# The concept map
# ---------------------------------------------------------------------------------------------------------------------
CONCEPTS = [
    ("which block am I", "blockIdx.x", "tl.program_id(0)"),
    ("the elements I touch", "threadIdx.x + blockIdx.x * blockDim.x (one per thread)",
     "pid * BLOCK + tl.arange(0, BLOCK) (a tile per program)"),
    ("bounds check", "if (i < n)", "mask = offs < n; tl.load(p, mask=mask, other=0)"),
    ("threads per block", "blockDim.x (launch argument)", "num_warps * 32 (launch option)"),
    ("who holds which element", "you decide (i = threadIdx.x ...)", "the compiler's layout (TTGIR #blocked)"),
    ("16-byte loads", "float4 casts + an alignment check in the wrapper",
     "automatic when pointers and sizes are known divisible by 16"),
    ("block reduction", "shared-memory tree / __shfl_xor_sync + __syncthreads",
     "tl.sum(tile, axis) (shuffles + shared memory, generated)"),
    ("shared memory", "__shared__ arrays, sized by you", "allocated by the compiler (reductions, tl.dot staging)"),
    ("software pipelining", "cp.async + hand-written stages (phase 2/4)", "num_stages (for loads that feed tl.dot)"),
    ("64-bit indexing", "(long long)blockIdx.x * blockDim.x", "tl.program_id(0).to(tl.int64) * BLOCK"),
]


def print_concepts() -> None:
    report.print_table([{"idea": tr(a), "CUDA C": tr(b), "Triton": tr(c)} for a, b, c in CONCEPTS],
                       title="CUDA C -> Triton: the same ideas, a different interface")


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compilation: what Triton generates, without a GPU
# ---------------------------------------------------------------------------------------------------------------------
ADD_SIG = {"a_ptr": "*fp32", "b_ptr": "*fp32", "c_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
ROWSUM_SIG = L.ROWSUM_SIG
DIVISIBILITY_CASES = [
    ("nothing known (odd n, any pointer)", ()),
    ("pointers 16-byte aligned, n odd", ("a_ptr", "b_ptr", "c_ptr")),
    ("pointers aligned and n % 16 == 0", ("a_ptr", "b_ptr", "c_ptr", "n")),
]


def add_config() -> tuple[int, int]:
    """(BLOCK, num_warps) of lab 1.2's add_kernel: its configuration (its default, or --set BLOCK=...)."""
    v = va.triton_config().values
    return v["BLOCK"], v["num_warps"]


def add_alignment_table(cc: int = 90, block: int | None = None, num_warps: int | None = None) -> list[dict]:
    """Load width of the vector-add kernel under each divisibility promise."""
    block, num_warps = block or add_config()[0], num_warps or add_config()[1]
    rows = []
    for label, div in DIVISIBILITY_CASES:
        s = summarize(aot(va.add_kernel, ADD_SIG, {"BLOCK": block}, cc=cc, num_warps=num_warps,
                          divisible_by_16=div))
        rows.append({"what the launch knows": tr(label), "PTX global loads": load_summary(s),
                     "SASS LDG": cuda.fmt_widths(s["sass"], "LDG"), "regs": s["regs"]})
    return rows


def add_num_warps_table(cc: int = 90, block: int = 1024, warps=(1, 2, 4, 8, 16, 32)) -> list[dict]:
    """What num_warps does to a 1024-element tile: elements per thread, load width, registers."""
    rows = []
    for w in warps:
        s = summarize(aot(va.add_kernel, ADD_SIG, {"BLOCK": block}, cc=cc, num_warps=w,
                          divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "n")))
        rows.append({"num_warps": s["num_warps"], "threads": 32 * s["num_warps"],
                     "elements/thread": block // (32 * w), "sizePerThread": s["size_per_thread"],
                     "PTX global loads": load_summary(s), "regs": s["regs"]})
    return rows


def rowsum_stage_table(cc: int = 90, stages=(1, 3)) -> list[dict]:
    """The row-sum loop at different num_stages: the reduction's shuffles and barriers, and shared memory."""
    rows = []
    for st in stages:
        s = summarize(aot(rowsum_kernel, ROWSUM_SIG, {"BLOCK_N": 1024}, cc=cc, num_warps=4, num_stages=st,
                          divisible_by_16=("x_ptr", "y_ptr", "n_cols", "row_stride")))
        rows.append({"num_stages": st, "shared bytes": s["shared"], "cp.async": s["cp_async"],
                     "PTX global loads": load_summary(s), "shfl.sync": s["shfl"], "bar.sync": s["bar"],
                     "regs": s["regs"]})
    return rows


def ir_excerpts(k, n: int = 6) -> dict[str, list[str]]:
    """A few telling lines of each stage: loads/stores and layouts."""
    pick = {
        "ttir": r"tt\.(load|store|make_range|get_program_id|reduce)\b",
        "ttgir": r"#blocked\d* =|tt\.load|tt\.store|ttg\.",
        "ptx": r"ld\.global|st\.global|shfl\.sync|bar\.sync|cp\.async|wgmma|mma\.sync",
    }
    out = {}
    for stage, pat in pick.items():
        lines = [ln.strip() for ln in k.asm.get(stage, "").splitlines() if re.search(pat, ln)]
        out[stage] = [re.sub(r"\s+loc\(.*$", "", ln)[:150] for ln in lines[:n]]
    return out


def dump_ir(k, directory: str, stem: str) -> list[str]:
    """Write every stage of a compiled kernel to DIRECTORY/STEM.{ttir,ttgir,llir,ptx} (for reading in an editor)."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for stage in ("ttir", "ttgir", "llir", "ptx"):
        if stage in k.asm:
            p = os.path.join(directory, f"{stem}.{stage}")
            with open(p, "w") as f:
                f.write(k.asm[stage])
            paths.append(p)
    return paths


def show_triton_reports(arch: str, dump_dir: str | None = None) -> None:
    cc = device.arch_info(arch).cc
    block, warps = add_config()
    k = aot(va.add_kernel, ADD_SIG, {"BLOCK": block}, cc=cc, num_warps=warps,
            divisible_by_16=("a_ptr", "b_ptr", "c_ptr", "n"))
    print("\n" + tr("Triton vector add (lab 1.2's add_kernel, BLOCK={block}, num_warps={warps}) compiled ahead of "
                    "time for {arch} with Triton {version}, stage by stage:", block=block, warps=warps, arch=arch,
                    version=ts.VERSION))
    for stage, lines in ir_excerpts(k).items():
        print(f"  {stage}:")
        for ln in lines:
            print(f"      {ln}")
    s = summarize(k)
    sass = cuda.sass_excerpt(s["sass_lines"], limit=6)
    if sass:
        print(tr("  sass (cuobjdump of the cubin):"))
        for ln in sass:
            print(f"      {ln}")
    print(tr("  -> sizePerThread [{spt}]: each of the {threads} threads holds {spt} consecutive floats per layout "
             "repetition; {regs} registers, {shared} B shared memory.", spt=s['size_per_thread'],
             threads=32 * s['num_warps'], regs=s['regs'], shared=s['shared']))
    report.print_table(add_alignment_table(cc), title="Alignment and divisibility decide the load width "
                       "(same kernel, same BLOCK; only the promise about the arguments changes)")
    print(tr("  The mask `offs < n` must be constant across a vector's 4 lanes; Triton can prove that only when n is\n"
             "  known divisible by 16. A GPU launch makes these promises itself, from the actual arguments: "
             "data_ptr()\n"
             "  % 16 and n % 16 (try n = 2^20 and 2^20 + 1 on a GPU, or a view starting one element in)."))
    report.print_table(add_num_warps_table(cc), title="num_warps splits the 1024-element tile across threads: "
                       "fewer elements per thread, narrower loads")
    rs = rowsum_stage_table(cc)
    report.print_table(rs, title="rowsum_kernel (a loop of loads feeding a sum) at num_stages 1 and 3: what the "
                       "pipeliner did")
    same = rs[0]["shared bytes"] == rs[-1]["shared bytes"] and rs[0]["cp.async"] == rs[-1]["cp.async"]
    print("  -> " + (tr("num_stages changed nothing here: these loads feed a reduction, not tl.dot, so no "
                        "shared-memory ring was built; lab 3.2 shows num_stages at work (shared memory grows by one "
                        "A+B tile per stage).")
                     if same else tr("num_stages changed the generated code here (shared memory / cp.async above).")))
    print(tr("  The tl.sum became {shfl} shuffles and {bar} barrier(s) in PTX: the tree of rowsum_02, generated.",
             shfl=rs[0]['shfl.sync'], bar=rs[0]['bar.sync']))
    if dump_dir:
        paths = dump_ir(k, dump_dir, f"add_kernel_{arch}")
        k2 = aot(rowsum_kernel, ROWSUM_SIG, {"BLOCK_N": 1024}, cc=cc, num_warps=4,
                 divisible_by_16=("x_ptr", "y_ptr", "n_cols", "row_stride"))
        paths += dump_ir(k2, dump_dir, f"rowsum_kernel_{arch}")
        print(tr("  full IR written: {names} in {dir}", names=', '.join(os.path.basename(p) for p in paths),
                 dir=dump_dir))


def show_cuda_report(arch: str) -> cuda.CompileReport:
    rep = cuda.print_compile_report(L.CU, arch, excerpt_of="rowsum_02_float4_shuffle")
    k1, k2 = rep.kernels.get("rowsum_01_block_per_row"), rep.kernels.get("rowsum_02_float4_shuffle")
    if k1 is not None and k2 is not None and k2.sass:
        c1, c2 = k1.sass_counts, k2.sass_counts
        print(tr("-> SASS: rowsum_01 has {bar1} BAR and {ldg1} loads; rowsum_02 has {bar2} BAR, {shfl} SHFL and "
                 "{ldg2} loads (float4).", bar1=c1.get('BAR', 0), ldg1=cuda.fmt_widths(c1, 'LDG'),
                 bar2=c2.get('BAR', 0), shfl=c2.get('SHFL', 0), ldg2=cuda.fmt_widths(c2, 'LDG')))
    return rep


# ---------------------------------------------------------------------------------------------------------------------
# On a GPU: what the launches really compiled
# ---------------------------------------------------------------------------------------------------------------------
def launched_kernels_report(show_sass: bool = False) -> list[dict]:
    """Launch the Triton kernels on real arrays and read registers, spills, shared memory and loads off them
    (CompiledKernel.n_regs / n_spills / metadata.shared / asm); optionally print the row-sum kernel's SASS."""
    import cupy

    rows = []
    n = 2**20
    a, b = va.make_inputs(n + 16, "float32", check.rng(1), "cuda")
    out = cupy.empty_like(a)
    cases = [(tr("add_kernel, n = 2^20, aligned"), a[:n], b[:n], out[:n]),
             (tr("add_kernel, n = 2^20 + 1 (odd n)"), a[:n + 1], b[:n + 1], out[:n + 1]),
             (tr("add_kernel, views starting 1 element in"), a[1:n + 1], b[1:n + 1], out[1:n + 1])]
    block, warps = add_config()
    for label, x, y, o in cases:
        k = launch(va.add_kernel, (triton.cdiv(int(x.size), block),), x, y, o, int(x.size), BLOCK=block,
                   num_warps=warps)
        rows.append(_launched_row(label, k))
    xs = L.make_inputs((4096, 4096), "float32", check.rng(2), "cuda")[0]
    ys = cupy.empty(4096, cupy.float32)
    bn, nw = L.row_config(4096)
    k = L._launch_row(xs, ys, 4096, 4096, bn, nw)[1]
    rows.append(_launched_row(f"rowsum_kernel, 4096 x 4096, BLOCK_N={bn}", k))
    cupy.cuda.Device().synchronize()
    if show_sass:
        lines = cuda.sass_excerpt(summarize(k)["sass_lines"], limit=14)
        print(tr("SASS of the launched rowsum_kernel ({n} instructions; memory, shuffles and barriers):",
                 n=len(summarize(k)['sass_lines'])))
        for ln in lines:
            print("   ", ln)
    return rows


def _launched_row(label: str, k) -> dict:
    s = summarize(k)
    return {"launch": label, "num_warps": s["num_warps"], "regs": getattr(k, "n_regs", None),
            "spills": getattr(k, "n_spills", None), "shared": s["shared"], "PTX global loads": load_summary(s),
            "SASS LDG": cuda.fmt_widths(s["sass"], "LDG")}




def compile_report(args) -> None:
    show_triton_reports(args.arch, args.dump_ir)
    show_cuda_report(args.arch)
    if device.has_gpu():
        report.print_table(launched_kernels_report(show_sass=True),
                           title="What the GPU launches compiled (Triton specializes on the actual arguments: "
                                 "alignment and n % 16)")


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark (GPU)
# ---------------------------------------------------------------------------------------------------------------------
ROWSUM_SHAPES = L.ROWSUM_SHAPES
VADD_N = L.VADD_N


def bench_vector_add(ceiling_gbps: float, rounds: int = 3) -> list[dict]:
    import cupy

    n, note = plan.fit(VADD_N, va.bench_bytes, device.info())
    if note:
        print(tr(note))
    a, b = device_randn((n,), "float32", 3), device_randn((n,), "float32", 4)
    out = cupy.empty_like(a)
    fns = {"torch.add": va.peer_torch_add, "cuda 03 float4": va.add_cuda_03,
           "cuda 04 float4 streaming store": va.add_cuda_04, "triton": va.add_triton}
    ts_ = bench.interleaved({k: (lambda f=f: f(a, b, out=out)) for k, f in fns.items()}, rounds=rounds)
    peer = ts_["torch.add"].median_ms
    rows = []
    for name, t in ts_.items():
        impl = "peer" if name.startswith("torch") else ("triton" if name == "triton" else "cuda")
        rows.append(report.row(L.LAB, f"vector add: {name}", impl, (n,), "float32", t, nbytes=12 * n, flops=n,
                               ceiling_gbps=ceiling_gbps, vs_peer=peer / t.median_ms, peer="torch.add"))
    return rows


def bench_rowsum(shapes, ceiling_gbps: float) -> list[dict]:
    import cupy

    rows = []
    for shape in cli.progress(shapes, "row-sum shapes"):
        x = device_randn(shape, "float32", shape[1], shift=0.25)
        out = cupy.empty(shape[0], cupy.float32)
        nbytes = 4 * shape[0] * shape[1] + 4 * shape[0]
        timed = {}
        for v in L.PEERS + L.VARIANTS:
            timed[v.name] = (v, bench.bench(lambda f=v.fn: f(x, out=out)))
        peer = timed["torch.sum(dim=1)"][1].median_ms
        for name, (v, t) in timed.items():
            rows.append(report.row(L.LAB, f"row sum: {name}", v.impl, shape, "float32", t, nbytes=nbytes,
                                   flops=shape[0] * (shape[1] - 1), ceiling_gbps=ceiling_gbps,
                                   vs_peer=peer / t.median_ms, peer="torch.sum(dim=1)"))
    return rows


def bench_num_warps(shape=ROWSUM_SHAPES[0], warps=(1, 2, 4, 8, 16), ceiling_gbps: float | None = None) -> list[dict]:
    """The same rowsum_kernel tile at different num_warps: registers and bandwidth."""
    import cupy

    shape, _ = L.fit_shape(shape, device.info())
    x = device_randn(shape, "float32", 7, shift=0.25)
    out = cupy.empty(shape[0], cupy.float32)
    bn, _ = L.row_config(shape[1])
    rows = []
    for w in warps:
        _, k = L._launch_row(x, out, shape[0], shape[1], bn, w)
        t = bench.bench(lambda w=w: L._launch_row(x, out, shape[0], shape[1], bn, w))
        rows.append(report.row(L.LAB, f"rowsum_kernel num_warps={w}", "triton", shape, "float32", t,
                               nbytes=4 * shape[0] * shape[1], ceiling_gbps=ceiling_gbps, num_warps=w,
                               elements_per_thread=bn // (32 * w), regs=getattr(k, "n_regs", None),
                               spills=getattr(k, "n_spills", None)))
    return rows



def benchmark(ctx) -> lab.Result:
    ceiling = ctx.ceiling()["hbm_gbps"]
    rows = bench_vector_add(ceiling, rounds=1 if ctx.quick else 3)
    shapes = []
    for shape in ROWSUM_SHAPES[:1] if ctx.quick else ROWSUM_SHAPES:
        shape, note = L.fit_shape(shape, device.info())
        if note:
            print(tr(note))
        shapes.append(shape)
    rows += bench_rowsum(shapes, ceiling)
    warps = bench_num_warps(ceiling_gbps=ceiling, warps=(4, 8) if ctx.quick else (1, 2, 4, 8, 16))
    cols = ["variant", "impl", "shape", "ms", "gbps", "frac_ceiling", "vs_peer", "spread"]
    main = "x".join(map(str, warps[0]["shape"])) if warps else ""
    return lab.Result(
        rows=rows + warps, meta=dict(ceiling_gbps=ceiling, device=device.info().as_dict()),
        tables=[(rows, cols, tr("Lab 3.1: bandwidth (measured HBM ceiling {ceiling:.0f} GB/s)", ceiling=ceiling)),
                (warps, ["variant", "elements_per_thread", "regs", "spills", "ms", "gbps", "frac_ceiling"],
                 tr("num_warps for rowsum_kernel at {shape} fp32 (BLOCK_N = {bn})", shape=main,
                    bn=L.row_config(ROWSUM_SHAPES[0][1])[0]))])


# ---------------------------------------------------------------------------------------------------------------------
# The plot, from the JSON (so `--replot` redraws it without a GPU)
# ---------------------------------------------------------------------------------------------------------------------
def plot(data: dict, out_dir: str) -> list[str]:
    """Bandwidth of every row-sum version at the main shape and of every vector add, against the HBM ceiling."""
    rows = data["rows"]
    # the main shape (its rows may have been scaled down to fit a GPU's memory: the one with the main shape's columns)
    sel = [r for r in rows if r["variant"].startswith("row sum") and r["shape"][1] == ROWSUM_SHAPES[0][1]]
    sel += [r for r in rows if r["variant"].startswith("vector add")]
    ceiling = data.get("ceiling_gbps") or (sel[0].get("ceiling_gbps") if sel else None)
    labels = [f"{r['variant']} {'x'.join(map(str, r['shape']))}" for r in sel]
    path = os.path.join(out_dir, f"{L.LAB}.png")
    return [report.plot_bars(path, labels, [r["gbps"] for r in sel], ylabel="GB/s (bytes read + written once)",
                             title=tr("Lab 3.1 on {gpu}: CUDA C and Triton side by side", gpu=data.get('gpu', 'GPU')),
                             colors=[report.IMPL_COLORS.get(r["impl"], "gray") for r in sel],
                             hlines={tr("HBM ceiling {gbps:.0f}", gbps=ceiling): ceiling} if ceiling else None)]
