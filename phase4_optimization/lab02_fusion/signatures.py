"""Lab 4.2's Triton kernels as Triton's ahead-of-time compiler takes them: each kernel's argument types and
constexprs (used by the plan's launches, bench.py's compile reports and lab 4.7's plan)."""
from __future__ import annotations

TY = {"float16": "*fp16", "bfloat16": "*bf16", "float32": "*fp32"}


def ew_signature(dt: str) -> dict:
    ty = TY[dt]
    return {"x_ptr": ty, "bias_ptr": ty, "c_ptr": ty, "y_ptr": ty, "M": "i32", "N": "i32", "HAS_BIAS": "constexpr",
            "ACT": "constexpr", "HAS_C": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}


def ln_signature(dt: str) -> dict:
    ty = TY[dt]
    return {"x_ptr": ty, "r_ptr": ty, "w_ptr": ty, "b_ptr": ty, "y_ptr": ty, "h_ptr": ty, "n_rows": "i32",
            "n_cols": "i32", "eps": "fp32", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "SINGLE": "constexpr"}


def linear_signature(dt: str, const: dict) -> dict:
    """linear_kernel's arguments as Triton's ahead-of-time compiler takes them, its constexprs `const` included."""
    ty = TY[dt]
    sig = {"x_ptr": ty, "w_ptr": ty, "bias_ptr": ty, "res_ptr": ty, "y_ptr": ty, "M": "i32", "N": "i32", "K": "i32"}
    sig.update({k: "constexpr" for k in const})
    return sig


def linear_tma_signature(dt: str, cfg: dict, const: dict) -> dict:
    """linear_tma_kernel's: the tensor descriptors of the x, W and y tiles of `cfg`, the bias, the sizes, `const`."""
    t = TY[dt][1:]
    bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
    sig = {"x_desc": f"tensordesc<{t}[{bm},{bk}]>", "w_desc": f"tensordesc<{t}[{bk},{bn}]>",
           "y_desc": f"tensordesc<{t}[{bm},{bn}]>", "res_desc": f"tensordesc<{t}[{bm},{bn}]>", "bias_ptr": TY[dt],
           "M": "i32", "N": "i32", "K": "i32"}
    sig.update({k: "constexpr" for k in const})
    return sig


def tma_constexprs(cfg: dict, programs: int, act: int, has_bias: bool = True) -> dict:
    return {"HAS_BIAS": has_bias, "ACT": act, "HAS_RES": False, "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"],
            "BLOCK_K": cfg["BLOCK_K"], "GROUP_M": cfg["GROUP_M"], "NUM_PROGRAMS": programs, "UPCAST": False}
