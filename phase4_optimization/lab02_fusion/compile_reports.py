"""What the compilers make of lab 4.2's kernels, no GPU needed: kernels.cu's SASS census (registers, spills, load and
store widths) and the fused GEMM's resources (registers, local and shared memory, wgmma) compiled ahead of time."""
from __future__ import annotations

from common import cuda, device
from common.i18n import tr

from . import lab as L
from .lab import GEMM_N
from .triton_kernels import ACT_GELU_TANH, ACT_NONE, linear_kernel, linear_tma_kernel


# ---------------------------------------------------------------------------------------------------------------------
# Compile reports (no GPU needed): the CUDA C kernels' SASS census, and the fused GEMM's resources
# ---------------------------------------------------------------------------------------------------------------------
def cuda_compile_table(arch: str) -> list[dict]:
    rep = cuda.compile_report(L.CU, arch, defines={**L.cuda_ew_config().values, **L.cuda_ln_config().values})
    rows = []
    for name in ("fusion_01_add_bias_bf16", "fusion_01_gelu_tanh_bf16", "fusion_02_bias_gelu_tanh_bf16",
                 "fusion_02_bias_gelu_erf_bf16", "fusion_02_bias_residual_bf16", "fusion_02_bias_residual_bf16_scalar",
                 "fusion_02_bias_gelu_tanh_f32", "fusion_03_residual_layernorm_bf16"):
        k = rep.kernels[name]
        c = k.sass_counts
        rows.append({"kernel": name, "regs": k.registers, "spills": k.spills, "LDG": cuda.fmt_widths(c, "LDG"),
                     "STG": cuda.fmt_widths(c, "STG"), "MUFU": c.get("MUFU", 0)})
    return rows


def aot_linear(cc: int, cfg: dict, dtype: str = "bfloat16", act: int = ACT_GELU_TANH, has_res: bool = False):
    """The fused GEMM as a GPU launch at an aligned shape compiles it (bias on, EVEN_K, EVEN_MN)."""
    from common.triton_support import aot

    const = {"HAS_BIAS": True, "ACT": act, "HAS_RES": has_res, "EVEN_K": True, "EVEN_MN": True, "INDEX_64": False,
             "UPCAST": False}
    const.update({k: v for k, v in cfg.items() if k.isupper()})
    return aot(linear_kernel, L.linear_signature(dtype, const), const, cc=cc, num_warps=cfg["num_warps"],
               num_stages=cfg["num_stages"],
               divisible_by_16=("x_ptr", "w_ptr", "bias_ptr", "res_ptr", "y_ptr", "M", "N", "K"))


def aot_linear_tma(cc: int, cfg: dict, dtype: str = "bfloat16", act: int = ACT_GELU_TANH, programs: int = 1):
    """linear_tma_kernel as a launch with this config compiles it (tensor descriptors of its tiles, bias on;
    `programs`: the persistent grid, one per SM of the GPU)."""
    from common.triton_support import aot

    const = L.tma_constexprs(cfg, programs, act)
    return aot(linear_tma_kernel, L.linear_tma_signature(dtype, cfg, const), const, cc=cc, num_warps=cfg["num_warps"],
               num_stages=cfg["num_stages"])


def gpu_of(arch: str) -> device.DeviceInfo:
    """The GPU a compile report for `arch` describes: the one every prediction uses here where it has that
    architecture, else the architecture's example profile."""
    gpu = device.current(arch)
    if gpu.arch != device.arch_info(arch).arch:
        gpu = device.profile_info(device.arch_info(arch).example)
    return gpu


def linear_compile_table(arch: str, configs=None, dtype: str = "bfloat16") -> list[dict]:
    from common.triton_support import summarize

    cc = device.arch_info(arch).cc
    gpu = gpu_of(arch)

    def row(compiled, cfg, label):
        s = summarize(compiled)
        return {"tile": f"{cfg['BLOCK_M']}x{cfg['BLOCK_N']}x{cfg['BLOCK_K']}", "warps": cfg["num_warps"],
                "stages": cfg["num_stages"], "epilogue": label, "regs": s["regs"], "local B": s["local"],
                "shared KiB": s["shared"] / 1024, "wgmma": s["wgmma"], "HGMMA": s["sass"].get("HGMMA", 0),
                "MUFU": s["sass"].get("MUFU", 0)}

    rows = [row(aot_linear(cc, cfg, dtype, act=act), cfg, label)
            for cfg in (L.LINEAR_CONFIGS if configs is None else configs)
            for act, label in ((ACT_NONE, tr("bias only")), (ACT_GELU_TANH, "bias + gelu_tanh"))]
    if not L.tma_unavailable(gpu):      # the Hopper path: TMA tile copies, the tile fixed by shared memory
        rows += [row(aot_linear_tma(cc, L.LINEAR_TMA, dtype, act=act, programs=gpu.sms), L.LINEAR_TMA, label)
                 for act, label in ((ACT_NONE, tr("TMA persistent, bias only")),
                                    (ACT_GELU_TANH, "TMA persistent, bias + gelu"))]
    return rows


def _compile_tables(arch: str) -> tuple[list[dict], list[dict]]:
    # the benchmark's default tile on this architecture's GPU only: each ahead-of-time compile of the GEMM costs seconds
    gpu = gpu_of(arch)
    ltab = linear_compile_table(arch, [L.linear_default(GEMM_N, GEMM_N, GEMM_N, gpu)], L.gemm_dtype(gpu))
    return cuda_compile_table(arch), ltab
