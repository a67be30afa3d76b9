"""Triton for the course: launch kernels on CuPy arrays on a GPU, or run the same kernels in the interpreter on the CPU.

Import Triton through this module in every lab:

    from common.triton_support import triton, tl, INTERPRETER

The choice between the real compiler and the interpreter is made here, once, before Triton is imported:
  * with a usable GPU, TRITON_INTERPRET is removed from the environment (the interpreter is never on when a GPU is
    used: it would silently copy every array to the host and run at a thousandth of the speed);
  * without one, TRITON_INTERPRET=1 is set, and kernels run on NumPy / torch CPU arrays, one program after another.
If Triton was already imported in the other mode, importing this module raises RuntimeError: import `common` first.

`compile_for(...)` compiles a kernel ahead of time for a chosen target (no GPU needed) and returns TTIR, TTGIR,
LLVM IR, PTX and the cubin, so a learner can see what Triton made of a kernel on any machine.
"""
from __future__ import annotations

import os
import re
import sys
import warnings

from . import arrays, device

_GPU = device.has_gpu()
if _GPU:
    if os.environ.pop("TRITON_INTERPRET", None) not in (None, "0", ""):
        warnings.warn("TRITON_INTERPRET was set but a GPU is present; the course runs Triton compiled on the GPU")
else:
    os.environ["TRITON_INTERPRET"] = "1"
# Triton >= 3.9 warns on every import that this default will change; keep today's behaviour (FMA contraction on),
# which is also what the Triton 3.6 on the GPU machine does.
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")

if "triton" in sys.modules:
    _was = sys.modules["triton"]
    try:
        _interp_now = bool(_was.knobs.runtime.interpret)  # triton >= 3.4
    except AttributeError:  # pragma: no cover - older triton
        _interp_now = os.environ.get("TRITON_INTERPRET") == "1"
    if _interp_now == _GPU:
        raise RuntimeError(
            "Triton was imported before common.triton_support chose "
            f"{'the GPU compiler' if _GPU else 'the interpreter'}; import common.triton_support before triton"
        )

try:
    import triton  # noqa: E402
    import triton.language as tl  # noqa: E402
except ImportError as e:  # pragma: no cover - environment fault
    raise ImportError(
        f"Triton could not be imported ({e}). Install it with `pip install triton` (make test does this); the CUDA C "
        "labs still run without it."
    ) from None

INTERPRETER = not _GPU
VERSION = triton.__version__


class _CupyArg:
    """What Triton needs of a tensor argument: data_ptr() and dtype. Wrapping costs less than torch.from_dlpack."""

    __slots__ = ("_ptr", "dtype")

    def __init__(self, x):
        self._ptr = x.data.ptr
        self.dtype = x.dtype

    def data_ptr(self):
        return self._ptr


def kernel_arg(x):
    """Turn a CuPy / NumPy / torch array into something a Triton launch takes (other values pass through)."""
    lib = arrays.library(x)
    if lib == "cupy":
        if INTERPRETER:
            raise TypeError("a CuPy array reached a Triton kernel in interpreter mode; pass NumPy arrays on the CPU")
        return _CupyArg(x)
    if lib == "numpy":
        if not INTERPRETER:
            raise TypeError("a NumPy array reached a Triton kernel on the GPU; move it first with cupy.asarray(x)")
        import torch

        return torch.from_numpy(x)  # shares memory: what the interpreter writes lands in the NumPy array
    return x


def launch(kernel, grid, *args, **meta):
    """kernel[grid](*args, **meta) with array arguments converted for the mode in use."""
    return kernel[grid](*(kernel_arg(a) for a in args), **meta)


def device_ok(*xs) -> None:
    """Raise TypeError when arrays are on the wrong side for the mode in use (host for the interpreter, GPU else)."""
    for i, x in enumerate(xs):
        lib = arrays.library(x)
        if lib not in ("cupy", "numpy", "torch"):
            continue
        if INTERPRETER and arrays.on_device(x):
            raise TypeError(f"argument {i}: the Triton interpreter (no GPU) runs on host arrays, got a GPU array")
        if not INTERPRETER and not arrays.on_device(x):
            raise TypeError(f"argument {i}: expected a GPU array, got a host {lib} array; move it first with "
                            "cupy.asarray(x)")


# ---------------------------------------------------------------------------------------------------------------------
# Ahead-of-time compilation (no GPU needed)
# ---------------------------------------------------------------------------------------------------------------------
def _jit_function(kernel):
    """The JITFunction behind a kernel (in interpreter mode @triton.jit returns an InterpretedFunction)."""
    from triton.runtime.jit import JITFunction

    if isinstance(kernel, JITFunction):
        return kernel
    fn = getattr(kernel, "fn", None)
    if fn is None:
        raise TypeError(f"not a Triton kernel: {kernel!r}")
    return JITFunction(fn)


def compile_for(kernel, signature: dict, constexprs: dict | None = None, *, cc: int = 90, num_warps: int = 4,
                num_stages: int = 3, divisible_by_16: tuple[str, ...] = ()):
    """Compile `kernel` for an NVIDIA target of compute capability `cc` without launching it.

    signature: {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}; constexprs: {"BLOCK": 1024};
    divisible_by_16: argument names to promise 16-divisibility for (pointers: 16-byte aligned; ints: multiple of 16),
    which is what a GPU launch infers by itself from the actual arguments, and what lets loads become 128-bit.
    Returns the compiled kernel: `.asm` has ttir, ttgir, llir, ptx, cubin; `.metadata` has num_warps, shared.
    """
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    jf = _jit_function(kernel)
    names = list(jf.arg_names)
    unknown = set(signature) - set(names)
    if unknown:
        raise ValueError(f"signature names {sorted(unknown)} are not arguments of {jf.__name__} ({names})")
    attrs = {(names.index(n),): [["tt.divisibility", 16]] for n in divisible_by_16}
    src = ASTSource(fn=jf, signature=signature, constexprs=constexprs or {}, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", cc, 32),
                          options={"num_warps": num_warps, "num_stages": num_stages})


def ptx_memory_ops(ptx: str) -> dict[str, int]:
    """Count global loads/stores in PTX by width: {'ld.global.b32': 2, 'ld.global.v4.b32': 2, ...}."""
    out: dict[str, int] = {}
    for m in re.finditer(r"\b((?:ld|st)\.global(?:\.[a-z0-9_]+)*)", ptx):
        op = re.sub(r"\.(L1::[a-z_]+|L2::[a-z_0-9]+|nc|relaxed|gpu|weak)", "", m.group(1))
        out[op] = out.get(op, 0) + 1
    return out
