"""Lab 4.6's kernels as the compilers made them, on any machine: the Triton flash kernels compiled ahead of time for
an architecture (registers, local and shared memory, tensor-core instructions), kernels.cu through NVRTC (registers,
spills, the SASS census of HMMA, LDSM, LDGSTS and MUFU) and, for sm_90, the table of kernels_hopper.cu's rungs."""
from __future__ import annotations

import time

from common import config, cuda, device, report
from common.i18n import tr
from common.triton_support import aot, summarize

from . import lab as L
from .triton_kernels import attn_bwd_dkdv_kernel, attn_bwd_dq_kernel, attn_fwd_kernel


def aot_kernel(kind: str, d: int = 128, causal: bool = False, dtype: str = "bfloat16", cc: int = 90,
               cfg: dict | None = None):
    """Compile one of the flash kernels ("fwd", "bwd_dkdv", "bwd_dq") for compute capability `cc` without a GPU (the
    default config of that architecture's GPU: the one at hand or --gpu's when it is of that architecture, else the
    table's example of it); cached."""
    if cfg is None:
        gpu = L.gpu_of_arch(f"sm_{cc}")
        cfg = L.fwd_default_gpu(d, causal, gpu) if kind == "fwd" else L.bwd_default_gpu(d, gpu)
    div16 = ("q_ptr", "k_ptr", "v_ptr") + L._QKV_STRIDES
    if kind == "fwd":
        return aot(attn_fwd_kernel, L.triton_signature("fwd", dtype), L.fwd_constexprs(d, cfg, causal), cc=cc,
                   num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
                   divisible_by_16=div16 + ("o_ptr", "lse_ptr", "so_b", "so_h", "so_s", "seq_q", "seq_k"))
    kern = attn_bwd_dkdv_kernel if kind == "bwd_dkdv" else attn_bwd_dq_kernel
    outs = ("dk_ptr", "dv_ptr") if kind == "bwd_dkdv" else ("dq_ptr",)
    return aot(kern, L.triton_signature(kind, dtype), L.bwd_constexprs(kind, d, cfg, causal), cc=cc,
               num_warps=cfg["num_warps"], num_stages=cfg["num_stages"],
               divisible_by_16=div16 + outs + ("do_ptr", "lse_ptr", "delta_ptr", "sdo_b", "sdo_h", "sdo_s",
                                                "seq_q", "seq_k"))


def compile_summary(k) -> dict:
    """Resources of a compiled kernel: registers, spills (local memory), shared memory, tensor-core instructions."""
    s = summarize(k)
    return {"kernel": s["kernel"], "warps": s["num_warps"], "stages": s["num_stages"], "regs": s["regs"],
            "local B": s["local"], "shared B": s["shared"], "wgmma": s["wgmma"], "mma.sync": s["mma_sync"],
            "cp.async": s["cp_async"]}


def compile_table(arch: str, kinds=(("fwd", 128, False), ("fwd", 128, True), ("fwd", 64, False),
                                    ("bwd_dkdv", 128, False), ("bwd_dq", 128, False))) -> list[dict]:
    cc = device.arch_info(arch).cc
    rows = []
    for kind, d, causal in kinds:
        t0 = time.perf_counter()
        try:
            r = compile_summary(aot_kernel(kind, d, causal, cc=cc))
        except Exception as e:  # noqa: BLE001 - a kernel that does not compile for this arch is reported, not fatal
            r = {"kernel": kind, "error": f"{type(e).__name__}: {str(e)[:120]}"}
        r.update({"part": kind, "D": d, "causal": causal, "compile s": round(time.perf_counter() - t0, 1)})
        rows.append(r)
    return rows


def compile_rows(archs=("sm_80", "sm_90")) -> list[dict]:
    """kernels.cu compiled with NVRTC per architecture and head dim (the build the wrapper launches on that
    architecture: L.defines): registers, spills, and the SASS census of the instructions that matter here (HMMA =
    mma.sync, LDSM = ldmatrix, LDGSTS = cp.async, MUFU = ex2)."""
    rows = []
    for arch in archs:
        for d in L.HEAD_DIMS:
            for name, kr in cuda.compile_report(L.CU, arch, defines=L.defines(d, arch=arch)).kernels.items():
                c = kr.sass_counts
                kern = next(k_ for k_, n_ in L.KERNELS.items() if n_ == name)
                rows.append({"kernel": name, "arch": arch, "D": d, "regs": kr.registers,
                             "dyn_smem": L.smem_bytes(kern, d), "spill": kr.spills, "HMMA": c.get("HMMA", 0),
                             "LDSM": c.get("LDSM", 0), "LDGSTS": c.get("LDGSTS", 0), "MUFU": c.get("MUFU", 0),
                             "BAR": c.get("BAR", 0), "LDL/STL": f"{c.get('LDL', 0)}/{c.get('STL', 0)}"})
    return rows


def compile_report(args) -> None:
    """What the compilers made of the kernels for --arch (any machine); a file that cannot target it is named, with
    the one-line reason, instead of compiled."""
    from . import hopper

    gpu = L.gpu_of_arch(args.arch)
    want = args.compile_report if args.compile_report is not None else (not device.has_gpu() and not args.quick)
    if want:
        why = L.triton_unavailable(gpu)
        if why:
            print(tr("Triton flash kernels: not compiled for {arch} ({why})", arch=args.arch, why=why))
        else:
            report.print_table(compile_table(args.arch),
                               ["part", "D", "causal", "warps", "stages", "regs", "local B", "shared B", "wgmma",
                                "mma.sync", "cp.async", "compile s", "error"],
                               title=tr("Triton flash kernels compiled ahead of time for {arch} (bf16, the default "
                                        "tiles of {gpu})", arch=args.arch, gpu=gpu.name))
    if gpu.cc < 80:
        print(tr("kernels.cu: not compiled for {arch} (mma.sync bf16, ldmatrix and cp.async need sm_80 or newer)",
                 arch=args.arch))
    else:
        builds = "; ".join(f"D{d}: {config.fmt(L.cuda_config(d, args.arch).values)}" for d in L.HEAD_DIMS)
        report.print_table(compile_rows((args.arch,)),
                           title=tr("kernels.cu compiled with NVRTC {version} ({builds}; BLOCK_N={block_n})",
                                    version=cuda.nvrtc_version(), builds=builds, block_n=L.CUDA_BLOCK_N))
    if device.arch_info(args.arch).cc == 90:
        report.print_table(hopper.compile_rows(),
                           title=tr("kernels_hopper.cu (rungs {rungs}) compiled with NVRTC for sm_90a: registers at "
                                    "launch, the setmaxnreg split, wgmma (HGMMA), TMA (UTMALDG) and named barriers "
                                    "(BAR.ARV) in the SASS", rungs=f"{min(hopper.KERNELS)}-{max(hopper.KERNELS)}"))
    else:
        print(tr("kernels_hopper.cu: not compiled for {arch} ({why})", arch=args.arch,
                 why=hopper.hopper_only(args.arch)))
