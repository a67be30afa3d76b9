"""Lab 4.3's compile reports (every machine, no GPU needed): what NVRTC made of kernels.cu's rungs 01 and 02 per
config and architecture (registers, shared memory, spills, the tensor-core instruction census), of kernels_wgmma.cu's
builds for sm_90a (HGMMA, UTMALDG, SYNCS, setmaxnreg), the stage-0 wgmma descriptors and the NumPy layout model read
back through them; compile_report is bench.py's hook that picks what to show for --arch."""
from __future__ import annotations

from common import cli, cuda, device, lab, report
from common.i18n import plural, tr

from . import lab as L
from . import wgmma as wg


def show_compile_reports(archs, configs=None) -> list[dict]:
    """tc_01 and tc_02 compiled for each arch (tc_02 once per config), one table."""
    rows = []
    todo = [(arch, cfg) for arch in archs for cfg in (configs if configs is not None else [L.DEFAULT_CONFIG])]
    for i, (arch, cfg) in enumerate(cli.progress(todo, "compiling kernels.cu")):
        first = i == 0 or todo[i - 1][0] != arch
        got = L.compile_rows(arch, [cfg])
        rows += got if first else got[-1:]
    report.print_table(rows, title=tr("kernels.cu compiled with NVRTC {version} (static SASS counts; smem of tc_02 = "
                                      "dynamic, STAGES x (BM BK + BK BN) x 2 B)", version=cuda.nvrtc_version()))
    print(tr("  Read it as: HMMA = tensor-core MMAs (wmma and mma.sync both become HMMA.16816.F32.BF16/F16); LDSM ="
             "\n  ldmatrix (rung 02: 4 plain + 4 .trans per 16-deep step for 32 HMMA per 64x64 warp tile); LDGSTS ="
             "\n  cp.async copies, global -> shared. Rung 01's wmma fragments come in through generic loads (LD, not "
             "LDS:\n  NVRTC 13.0 did not prove the address shared), 2 per HMMA. STS in rung 02 = the element-wise "
             "fallback for\n  misaligned operands. LDS counts leave out ptxas's never-executed '@!PT LDS' slots. "
             "Spills must be 0."))
    if find_cuobjdump_missing():
        print(tr("  (no cuobjdump: SASS columns are 0; it ships with the triton wheel)"))
    return rows


def find_cuobjdump_missing() -> bool:
    return cuda.find_cuobjdump() is None


def wgmma_compile_report(quick: bool = False) -> list[dict]:
    """kernels_wgmma.cu for sm_90a: registers, spills and the Hopper instructions (HGMMA, UTMALDG, SYNCS, ...), the
    descriptors of stage 0, and the NumPy layout model read back through them."""
    rows = []
    builds = ((("bfloat16", False, False, 1), ("bfloat16", False, True, 1)) if quick else
              (("bfloat16", False, False, 1), ("float16", False, False, 1), ("bfloat16", True, False, 1),
               ("bfloat16", False, True, 1), ("bfloat16", False, True, 2)))
    for dt, kmaj, epi, cp in cli.progress(builds, "compiling kernels_wgmma.cu"):
        rep = wg.compile_report(dt, b_kmajor=kmaj, tma_store=epi, c_passes=cp)
        k = rep.kernels[wg.KERNEL]
        ops: dict[str, int] = {}
        for ins in k.sass:
            op = ins.split()[0] if not ins.startswith("@") else ins.split()[1]
            for key in ("HGMMA", "UTMALDG", "UTMASTG", "SYNCS", "USETMAXREG", "WARPGROUP"):
                if op.startswith(key):
                    ops[key] = ops.get(key, 0) + 1
        rows.append({"dtype": dt, "B layout": wg._layout(kmaj),
                     "epilogue": (plural(cp, "TMA store, {n} pass", "TMA store, {n} passes") if epi
                                  else tr("registers")),
                     "stages": wg.stages(epi, cp), "arch": rep.arch, "regs": k.registers,
                     "spills": k.spills, "stack": k.stack_bytes, "smem (dynamic)": wg.smem_bytes(epi, cp),
                     "HGMMA": ops.get("HGMMA", 0), "UTMALDG": ops.get("UTMALDG", 0),
                     "UTMASTG": ops.get("UTMASTG", 0), "SYNCS": ops.get("SYNCS", 0),
                     "USETMAXREG": ops.get("USETMAXREG", 0), "stg": cuda.fmt_widths(k.sass_counts, "STG")})
    report.print_table(rows, title=tr("kernels_wgmma.cu compiled with NVRTC {version} for {arch} (regs = the "
                                      "launch-bound cap; setmaxnreg moves them at run time)",
                                      version=cuda.nvrtc_version(), arch=wg.ARCH))
    report.print_table(wg.descriptor_table(), title="wgmma shared-memory descriptors of stage 0, consumer 0")
    bad = wg.simulate_operands() + wg.simulate_operands(b_kmajor=True)
    print(tr("descriptor/swizzle model: TMA-written stage read back through the kernel's descriptors (both B layouts) "
             "-> {result}", result=tr("every A and B slice correct") if not bad else tr("WRONG: {bad}", bad=bad)))
    return rows


_RESOURCES: list[dict] = []         # the compile rows of this run, for the JSON


def compile_report(args) -> None:
    """On a GPU: its arch and the configuration it runs. Without one: --arch (default sm_90) with the configuration
    it would run (mma_config: the default, a record for --gpu's GPU, --set), and two more of CONFIGS unless --quick;
    the wgmma kernel when the arch is sm_90. An arch a file cannot be built for is skipped with the reason."""
    gpu = device.current(args.arch)
    arch = device.arch_info(args.arch).arch
    if not lab.arch_matches(arch, L.TC_ARCHS):
        print(tr("kernels.cu, kernels_wgmma.cu: not compiled for {arch}: the rungs need bf16 mma.sync, ldmatrix and "
                 "cp.async (sm_80 or later)", arch=arch))
        return
    mine = L.mma_config(gpu).values
    configs = [mine] if args.quick or device.has_gpu() else \
        [mine] + [c for c in L.CONFIGS[1:3] if dict(L.OPTIONAL, **c) != mine]
    try:
        _RESOURCES[:] = show_compile_reports((arch,), configs)
        if arch == "sm_90":
            wgmma_compile_report(args.quick)
        else:
            print(tr("kernels_wgmma.cu: not compiled for {arch}: {why}", arch=arch, why=wg.hopper_only(arch)))
    except (cuda.CompileError, cuda.ToolMissing) as e:     # the report is a lesson, not a check: say why, go on
        print(tr("compile report unavailable: {error}", error=str(e).splitlines()[0]))
