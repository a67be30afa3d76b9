"""Lab 4.2's three parts and their ops, and what the wrappers of every part share: the dtypes, the activation codes
and grid limits, this run's tunings, the argument checks."""
from __future__ import annotations

import math
import os

from common import arrays

from .triton_kernels import ACT_GELU_ERF, ACT_GELU_TANH, ACT_NONE

CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")
DTYPES = ("float32", "float16", "bfloat16")
GEMM_DTYPES = ("bfloat16", "float16")
EPS = 1e-5
EW_OPS = ("bias_gelu_tanh", "bias_gelu_erf", "bias_residual")
LN_OPS = ("residual_layernorm",)
LINEAR_OPS = ("linear_gelu_tanh", "linear_bias_residual", "linear_plain")
EW, LN, GEMM = "elementwise chains", "residual + layernorm", "GEMM + epilogue"     # the lab's three parts
PARTS = {EW: EW_OPS, LN: LN_OPS, GEMM: LINEAR_OPS}
ACTIVATIONS = (None, "gelu_tanh")
ACT_CODE = {None: ACT_NONE, "gelu_tanh": ACT_GELU_TANH, "gelu_erf": ACT_GELU_ERF}
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
MAX_GRID = 2**31 - 1
MAX_GRID_YZ = 65535


def part_of(op) -> str:
    """The part of the lab a case's op belongs to."""
    for part, ops in PARTS.items():
        if op in ops:
            return part
    raise ValueError(f"op: unknown op {op!r}; the lab's ops are {', '.join(o for ops in PARTS.values() for o in ops)}")


TUNED: dict = {}           # {("ln", N, dtype) | ("linear", M, N, K, dtype): config}, filled by bench.py's tuning
TUNED_HERE = "tuned in this run (the benchmark's sweep at its shape)"


# ---------------------------------------------------------------------------------------------------------------------
# Validation shared by the wrappers
# ---------------------------------------------------------------------------------------------------------------------
def _torch_view(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x)


def _check_matrix(name, x, dtypes, dev, libs=("cupy", "torch", "numpy")) -> str:
    return arrays.check_array(name, x, dtypes=dtypes, ndim=2, device=dev, libs=libs)


def _check_row(name, v, x, n: int, dev, libs=("cupy", "torch", "numpy")):
    arrays.check_array(name, v, dtypes=(arrays.dtype_name(x),), ndim=1, device=dev, libs=libs)
    if int(v.shape[0]) != n:
        raise ValueError(f"{name}: expected {n} values (x has {n} columns), got shape {tuple(v.shape)}")
    if arrays.library(v) != arrays.library(x):
        raise TypeError(f"{name}: expected a {arrays.library(x)} array like x, got {arrays.library(v)}")


def _check_like(name, v, x, dev, libs=("cupy", "torch", "numpy")):
    arrays.check_array(name, v, dtypes=(arrays.dtype_name(x),), ndim=x.ndim, device=dev, libs=libs)
    arrays.check_same(f"x, {name}", x, v)


def _ew_args(x, bias, residual, out, dev, libs=("cupy", "torch", "numpy")):
    """Validate an elementwise chain's arguments (before any launch); returns (out, M, N, dtype)."""
    dt = _check_matrix("x", x, DTYPES, dev, libs)
    m, n = (int(s) for s in x.shape)
    if bias is not None:
        _check_row("bias", bias, x, n, dev, libs)
    if residual is not None:
        _check_like("residual", residual, x, dev, libs)
    out = arrays.check_out(out, (m, n), dt, x)
    arrays.check_array("out", out, dtypes=(dt,), ndim=2, device=dev, libs=libs)
    return out, m, n, dt


def _need(op, want: tuple[str, ...]):
    if op not in want:
        raise ValueError(f"op: {op!r} is not one of this function's ops ({', '.join(want)})")
