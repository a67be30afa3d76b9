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

import contextlib
import inspect
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


class TritonMissing(ImportError):
    """Triton cannot be imported; the message says how to install it."""


try:
    import triton  # noqa: E402
    import triton.language as tl  # noqa: E402
except ImportError as e:  # environment fault (tests/test_env_faults.py)
    raise TritonMissing(
        f"Triton could not be imported ({e}); the labs run their Triton kernels next to the CUDA C ones: run "
        "`make setup` and use .venv/bin/python (or `pip install triton` into this Python) and run again."
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


# ---------------------------------------------------------------------------------------------------------------------
# Triton with the interpreter on: launching and compiling in one process
# ---------------------------------------------------------------------------------------------------------------------
# Two workarounds for running the real compiler in a process where the interpreter is on (no GPU), Triton 3.9:
#  1. the library's own @jit helpers (tl.sum, tl.max, tl.cdiv, ...) are interpreter objects there; the compiler would
#     call them as plain Python and fail ("'value' object has no attribute 'dtype'"). compiler_mode() swaps them for
#     compiler JITFunctions while triton.compile runs;
#  2. when an interpreted kernel calls such a helper, the interpreter patches triton.language for the helper's module
#     and never undoes it (only the kernel's own patches are undone at the end of the launch); a later AOT compile in
#     the same process then fails the same way. guarded_launch() puts back whatever a launch left patched, and
#     compiler_mode() also repairs leftovers from launches made elsewhere (any attribute that is an interpreter
#     function is set back to its value at import time, for the duration of the compile).
# On a GPU the interpreter is off and both are no-ops.
def _lang_namespaces() -> list:
    objs = [m for n, m in list(sys.modules.items())
            if m is not None and (n == "triton.language" or n.startswith("triton.language."))]
    for name in ("tensor", "dtype", "condition"):
        if isinstance(getattr(tl, name, None), type):
            objs.append(getattr(tl, name))
    tdb = getattr(tl.core, "tensor_descriptor_base", None)
    if isinstance(tdb, type):
        objs.append(tdb)
    return objs


def _snapshot() -> list:
    return [(obj, dict(vars(obj))) for obj in _lang_namespaces()]


_MISSING = object()


def _revert(snapshot: list, only_interpreter_made: bool = False) -> list:
    """Give every attribute that existed in the snapshot its snapshot value again; return (obj, name, value now)
    for each one changed. Names added since are left alone: the interpreter adds its own globals to the modules of
    the functions it rewrites, and its cached rewrites need them."""
    changed = []
    for obj, before in snapshot:
        now = vars(obj)
        for name, old in before.items():
            cur = now.get(name, _MISSING)
            if cur is old or (only_interpreter_made and not _interpreter_made(cur)):
                continue
            try:
                setattr(obj, name, old)
            except (AttributeError, TypeError):
                continue
            changed.append((obj, name, cur))
    return changed


def _interpreter_made(v) -> bool:
    import functools

    f = v.func if isinstance(v, functools.partial) else (v.fget if isinstance(v, property) else v)
    code = getattr(f, "__code__", None)
    return code is not None and code.co_filename.replace("\\", "/").endswith("runtime/interpreter.py")


_PRISTINE = _snapshot() if INTERPRETER else []


def launch(kernel, grid, *args, **meta):
    """kernel[grid](*args, **meta) with array arguments converted for the mode in use.

    In the interpreter the launch also leaves triton.language as it found it (see the note above), and NumPy's
    floating-point warnings are silenced: a GPU computes inf/NaN without warnings too.
    """
    conv = [kernel_arg(a) for a in args]
    if not INTERPRETER:
        return kernel[grid](*conv, **meta)
    import numpy as np

    before = _snapshot()
    try:
        with np.errstate(all="ignore"):
            return kernel[grid](*conv, **meta)
    finally:
        _revert(before)


def _user_helpers(kernel) -> list[tuple[dict, str, object]]:
    """(globals dict, name, value) for every interpreted @triton.jit helper a kernel can reach through its module's
    globals, helpers of helpers included (grouped_tile below, a lab's own rounding helper, ...)."""
    from triton.runtime.interpreter import InterpretedFunction

    out, seen, todo = [], set(), [getattr(kernel, "fn", kernel)]
    while todo:
        fn = todo.pop()
        g = getattr(fn, "__globals__", {})
        for name in getattr(getattr(fn, "__code__", None), "co_names", ()):
            val = g.get(name)
            if isinstance(val, InterpretedFunction) and (id(g), name) not in seen:
                seen.add((id(g), name))
                out.append((g, name, val))
                todo.append(val.fn)
    return out


@contextlib.contextmanager
def compiler_mode(kernel=None):
    """Let `triton.compile` run while the interpreter is on (a no-op on a GPU).

    With the interpreter on, @triton.jit makes every helper an interpreter function, which the compiler refuses to
    call: the library's own helpers (tl.sum, ...) and, given `kernel`, the @triton.jit helpers it calls are swapped
    for compiler JITFunctions while the compile runs.
    """
    if not INTERPRETER:
        yield
        return
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    repaired = _revert(_PRISTINE, only_interpreter_made=True)
    swapped = []
    for obj in _lang_namespaces():
        if not isinstance(obj, type(sys)):
            continue
        for attr, val in list(vars(obj).items()):
            if isinstance(val, InterpretedFunction):
                swapped.append((obj, attr, val))
                setattr(obj, attr, _COMPILER_FNS.setdefault(id(val), JITFunction(val.fn)))
    helpers = _user_helpers(kernel) if kernel is not None else []
    for g, name, val in helpers:
        g[name] = _COMPILER_FNS.setdefault(id(val), JITFunction(val.fn))
    try:
        yield
    finally:
        for g, name, val in helpers:
            g[name] = val
        for obj, attr, val in swapped:
            setattr(obj, attr, val)
        for obj, attr, val in repaired:
            if val is _MISSING:
                delattr(obj, attr)
            else:
                setattr(obj, attr, val)


_COMPILER_FNS: dict = {}


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
    with compiler_mode(kernel):
        return triton.compile(src, target=GPUTarget("cuda", cc, 32),
                              options={"num_warps": num_warps, "num_stages": num_stages})


# ---------------------------------------------------------------------------------------------------------------------
# @triton.jit helpers every tiled kernel of the course shares
# ---------------------------------------------------------------------------------------------------------------------
# tl.fdiv(x, y, approx=True) is div.approx.f32 (x times an approximate 1/y: 2 ulp for |y| in [2^-126, 2^126], 0 past
# it); Triton before 3.9 has no approx= and its fdiv default, div.full.f32 (the full range, also about 2 ulp, a few
# more instructions), is the nearest. fast_div picks at compile time (a constexpr branch: the other is never compiled)
FDIV_APPROX = tl.constexpr("approx" in inspect.signature(tl.fdiv).parameters)


@triton.jit
def fast_div(x, y):
    if FDIV_APPROX:
        q = tl.fdiv(x, y, approx=True)
    else:
        q = tl.fdiv(x, y)
    return q


@triton.jit
def grouped_tile(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, GROUP_M: tl.constexpr):
    """(pid_m, pid_n) of program `pid` in grouped order. Programs are numbered down a column of GROUP_M tile-rows,
    then across, so the programs that run at the same time share B column-panels and reuse a few A row-panels
    through L2 (the launch-order swizzle of Triton's matmul tutorial). GROUP_M = 1 is plain row-major order."""
    grid_m = tl.cdiv(M, BLOCK_M)
    grid_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * grid_n
    first_m = (pid // per_group) * GROUP_M
    rows_here = tl.minimum(grid_m - first_m, GROUP_M)       # the last group may have fewer tile-rows
    pid_m = first_m + (pid % per_group) % rows_here
    pid_n = (pid % per_group) // rows_here
    return pid_m, pid_n


@triton.jit
def tile_offsets(pid, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                 GROUP_M: tl.constexpr, INDEX_64: tl.constexpr):
    """The C tile of program `pid` in grouped order (grouped_tile), as the offsets a matmul kernel indexes with: its
    BLOCK_M rows, its BLOCK_N columns and the first K step's BLOCK_K. INDEX_64: rows and columns 64-bit (a matrix of
    2^31 elements or more, where row x stride would wrap in 32 bits)."""
    pid_m, pid_n = grouped_tile(pid, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    if INDEX_64:
        offs_m = offs_m.to(tl.int64)
        offs_n = offs_n.to(tl.int64)
    return offs_m, offs_n, offs_k


def ptx_memory_ops(ptx: str) -> dict[str, int]:
    """Global loads/stores in PTX by width, cache hints dropped: {'ld.global.v4.b32': 4, 'st.global.cs.b32': 1}.
    (A hint such as `.L1::evict_first`, which Triton emits for eviction_policy=..., is not part of the width.)"""
    out: dict[str, int] = {}
    for m in re.finditer(r"\b((?:ld|st)\.global(?:\.[A-Za-z0-9_:]+)*)", ptx):
        op = re.sub(r"\.(L1::[a-z_]+|L2::[a-z_0-9]+|nc|relaxed|gpu|weak)(?=\.|$)", "", m.group(1))
        out[op] = out.get(op, 0) + 1
    return out


_AOT_CACHE: dict = {}


def aot(kernel, signature: dict, constexprs: dict | None = None, *, cc: int = 90, num_warps: int = 4,
        num_stages: int = 3, divisible_by_16: tuple[str, ...] = ()):
    """compile_for, cached per argument set (a lab's report and its tests compile the same kernels)."""
    key = (id(kernel), tuple(sorted(signature.items())),
           tuple(sorted((constexprs or {}).items(), key=lambda kv: kv[0])), cc, num_warps, num_stages,
           tuple(sorted(divisible_by_16)))
    if key not in _AOT_CACHE:
        _AOT_CACHE[key] = compile_for(kernel, signature, constexprs, cc=cc, num_warps=num_warps,
                                      num_stages=num_stages, divisible_by_16=divisible_by_16)
    return _AOT_CACHE[key]


def cubin_resources(cubin: bytes) -> dict[str, dict[str, int]]:
    """{kernel: {'REG': .., 'SHARED': .., 'LOCAL': .., 'STACK': ..}} from `cuobjdump --dump-resource-usage`."""
    from . import cuda

    text = cuda.cuobjdump(cubin, "--dump-resource-usage", timeout=60)
    if text is None:
        return {}
    out, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function\s+(\S+?):\s*$", line)
        if m:
            cur = out.setdefault(m.group(1), {})
            continue
        if cur is not None:
            for k, v in re.findall(r"(REG|STACK|SHARED|LOCAL):(\d+)", line):
                cur[k] = int(v)
    return out


def _count(pattern: str, text: str) -> int:
    return len(re.findall(pattern, text))


_SUMMARIES: dict = {}


def summarize(k) -> dict:
    """The facts a kernel engineer reads first off a compiled Triton kernel (ahead of time or launched): warps,
    stages, shared memory, registers, local memory, the blocked layout's values per thread, global loads/stores by
    width, the SASS census, and counts of wgmma / mma.sync / cp.async / shuffles / barriers in the PTX. Cached."""
    key = getattr(k, "hash", None) or id(k)
    if key not in _SUMMARIES:
        _SUMMARIES[key] = _summarize(k)
    s = _SUMMARIES[key]
    if getattr(k, "n_regs", None):              # a launched kernel: the driver's register count is authoritative
        s = dict(s, regs=k.n_regs)
    return s


def _summarize(k) -> dict:
    from . import cuda

    ptx, ttgir = k.asm.get("ptx", ""), k.asm.get("ttgir", "")
    cubin = k.asm.get("cubin", b"")
    name = k.metadata.name
    sass = cuda.disassemble(cubin).get(name, []) if cubin else []
    res = cubin_resources(cubin).get(name, {}) if cubin else {}
    layout = re.search(r"#blocked\d*\s*=\s*#ttg\.blocked<\{sizePerThread = \[([\d, ]+)\]", ttgir)
    regs = getattr(k, "n_regs", None) or res.get("REG")
    return {
        "kernel": name,
        "num_warps": k.metadata.num_warps,
        "num_stages": getattr(k.metadata, "num_stages", None),
        "shared": k.metadata.shared,
        "regs": regs,
        "local": res.get("LOCAL"),                  # local memory per thread (spills, run-time indexed arrays)
        "size_per_thread": layout.group(1).replace(" ", "") if layout else "-",
        "ptx_mem": ptx_memory_ops(ptx),
        "sass": cuda.sass_census(sass),
        "sass_lines": sass,
        "wgmma": _count(r"wgmma\.mma_async", ptx),
        "mma_sync": _count(r"\bmma\.sync", ptx),
        "cp_async": _count(r"cp\.async\.(?:ca|cg)", ptx),
        "shfl": _count(r"shfl\.sync", ptx),
        "bar": _count(r"bar\.sync|barrier\.sync", ptx),
    }


def load_summary(s: dict) -> str:
    """'2x v4.b32' style summary of the global loads in a summarize() result."""
    parts = [f"{n}x {op.replace('ld.global.', '')}" for op, n in sorted(s["ptx_mem"].items()) if op.startswith("ld.")]
    return ", ".join(parts) or "-"
