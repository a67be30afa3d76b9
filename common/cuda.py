"""CUDA C kernels: load a .cu file on a GPU, or compile it without one and show what the compiler made of it.

On a GPU, `get_kernel(path, name)` compiles the file once per process (CuPy's NVRTC path, for the device's own
architecture) and returns a `cupy.RawKernel`.

Without a GPU (or whenever you want to look inside), `compile_report(path, arch)` compiles the same file with NVRTC
for a chosen architecture (sm_75, sm_80, sm_86, sm_89, sm_90, sm_90a) and returns, per kernel, what ptxas reported
(registers, static shared memory, stack frame, spill stores/loads, barriers) and an instruction census of the SASS
(how wide the global loads are, shared-memory traffic, barriers, shuffles, FFMA, tensor-core MMAs, local memory).

Every kernel in the course is `extern "C"` so Python finds it by its plain name; compile-time parameters are macros
with defaults in the file, overridden with `defines={"TILE": 64}`.
A file may claim the architectures it needs on a line of its own: `// archs: sm_80 sm_90` (default: ALL_ARCHS).
Device primitives shared by several labs (warp and block reductions, cp.async, ldmatrix / mma.sync, 16-bit bits,
GEMM epilogue stores) live in common/cuda/*.cuh, written once; every compile passes -I common/cuda.
"""
from __future__ import annotations

import functools
import glob
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from . import compile_cache, device
from .i18n import tr

ALL_ARCHS = ("sm_75", "sm_80", "sm_90")   # what every kernel must compile for, unless its file claims otherwise
# the shared device primitives every kernel file may #include: reduce.cuh, cp_async.cuh, mma_sm80.cuh, ...
HEADER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda")
BASE_OPTIONS = ("-std=c++17", f"-I{HEADER_DIR}")


class CompileError(RuntimeError):
    """NVRTC rejected the source; the message carries the compiler log."""


class ToolMissing(RuntimeError):
    """A compiler tool (NVRTC, cuobjdump) is not installed; the message says which package provides it."""


# ---------------------------------------------------------------------------------------------------------------------
# Source handling
# ---------------------------------------------------------------------------------------------------------------------
def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def claimed_archs(path: str) -> tuple[str, ...]:
    """The architectures a .cu file says it compiles for (`// archs: sm_80 sm_90`), else ALL_ARCHS."""
    m = re.search(r"^//\s*archs:\s*(.+)$", _read(path), re.M)
    return tuple(m.group(1).split()) if m else ALL_ARCHS


# (an upper-case attribute macro may stand before the name: `... __launch_bounds__(T, 1) CLUSTER_ATTR name(`)
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+'
                     r'(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:[A-Z][A-Z0-9_]*\s+)?(\w+(?:\s*##\s*\w+)*)\s*\(')
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)", re.M)


def kernel_lines(path: str) -> dict[str, int]:
    """{kernel name: 1-based line} - where each kernel is defined, or, for one a macro stamps out, where the macro is
    used (what a reader should look at)."""
    src = _read(path)
    macro_spans = [(m.start(), m.end()) for m in _DEFINE.finditer(src)]
    names = kernel_names(path)
    out: dict[str, int] = {}
    macros = {}
    for m in _DEFINE.finditer(src):
        found = _KERNEL.findall(m.group(3).replace("\\\n", " "))
        if found:
            macros[m.group(1)] = ([p.strip() for p in m.group(2).split(",")], found)
    for m in _KERNEL.finditer(src):
        if any(a <= m.start() < b for a, b in macro_spans):
            continue
        out.setdefault(m.group(1), src.count("\n", 0, m.start(1)) + 1)
    if macros:
        for m in re.finditer(r"^\s*(" + "|".join(macros) + r")\s*\(([^)]*)\)", src, re.M):
            if any(a <= m.start() < b for a, b in macro_spans):
                continue
            params, stamped = macros[m.group(1)]
            args = dict(zip(params, (a.strip() for a in m.group(2).split(","))))
            line = src.count("\n", 0, m.start(1)) + 1
            for n in stamped:
                out.setdefault("".join(args.get(part.strip(), part.strip()) for part in n.split("##")), line)
    return {n: out[n] for n in names if n in out}


def kernel_names(path: str) -> list[str]:
    """Names of the `extern "C" __global__` kernels in a file, in order - those written out, and those a macro
    stamps out (`#define ROWS_KERNEL(SFX, ...) extern "C" __global__ void name_##SFX(...)`, then
    ROWS_KERNEL(f32, ...))."""
    src = _read(path)
    macros = {}
    for m in _DEFINE.finditer(src):
        params = [p.strip() for p in m.group(2).split(",")]
        names = _KERNEL.findall(m.group(3).replace("\\\n", " "))
        if names:
            macros[m.group(1)] = (params, names)
    body = _DEFINE.sub("", src)
    out = []
    pat = re.compile(_KERNEL.pattern + "|"
                     + (r"\b(" + "|".join(macros) + r")\s*\(([^)]*)\)" if macros else r"(?!)()()"))
    for m in pat.finditer(body):
        if m.group(1):
            out.append(m.group(1))
            continue
        params, names = macros[m.group(2)]
        args = dict(zip(params, (a.strip() for a in m.group(3).split(","))))
        for n in names:
            out.append("".join(args.get(part.strip(), part.strip()) for part in n.split("##")))
    return out


def _define_options(defines: dict | None) -> tuple[str, ...]:
    return tuple(f"-D{k}={v}" for k, v in sorted((defines or {}).items()))


def _header_dirs() -> list[str]:
    """CUDA headers for NVRTC when no toolkit is installed: the nvidia-cuda-runtime (and -crt) wheels."""
    dirs = []
    for sp in sys.path:
        for sub in ("nvidia/cu13/include", "nvidia/cuda_runtime/include", "nvidia/cuda_nvrtc/include"):
            d = os.path.join(sp, sub)
            if os.path.isdir(d) and d not in dirs:
                dirs.append(d)
    return dirs


@functools.lru_cache(maxsize=None)
def _crt_dirs() -> tuple[str, ...]:
    """Include folders that hold crt/mma.h (which mma.h includes). Seen on the H200 machine: CuPy passes NVRTC the
    nvidia-cuda-runtime wheel's include folder, whose mma.h needs crt/mma.h from a wheel (nvidia-cuda-crt) that is not
    installed there, while the toolkit's own include folder has it; adding that folder lets WMMA kernels compile."""
    cands = [os.path.join(os.environ[v], "include") for v in ("CUDA_PATH", "CUDA_HOME") if os.environ.get(v)]
    cands += ["/usr/local/cuda/include"] + _header_dirs()
    out = []
    for d in cands:
        if os.path.isfile(os.path.join(d, "crt", "mma.h")) and d not in out:
            out.append(d)
    return tuple(out)


# ---------------------------------------------------------------------------------------------------------------------
# On a GPU: a cached RawModule per (file, options)
# ---------------------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _module(path: str, options: tuple[str, ...], mtime: float):
    import cupy

    src = _read(path)
    opts = BASE_OPTIONS + (f"-I{os.path.dirname(path)}",) + options + tuple(f"-I{d}" for d in _crt_dirs())
    try:
        return cupy.RawModule(code=src, options=opts, backend="nvrtc")
    except cupy.cuda.compiler.CompileException as e:
        raise CompileError(f"{os.path.basename(path)} failed to compile with {' '.join(opts)}:\n{e}") from None
    except (ImportError, OSError, RuntimeError) as e:
        if "nvrtc" in str(e).lower():
            _nvrtc()   # raises ToolMissing with the install hint when NVRTC itself cannot be loaded
        raise


def load_module(path: str, options: tuple[str, ...] = (), defines: dict | None = None):
    """The file compiled for the GPU at hand (once per process and option set), as a cupy.RawModule."""
    device.require_gpu(f"loading {os.path.basename(path)}")
    path = os.path.abspath(path)
    return _module(path, tuple(options) + _define_options(defines), os.path.getmtime(path))


def get_kernel(path: str, name: str, options: tuple[str, ...] = (), defines: dict | None = None):
    """One kernel of a .cu file as a cupy.RawKernel (compiled on first use)."""
    import cupy

    mod = load_module(path, options, defines)
    try:
        return mod.get_function(name)   # CuPy compiles here, on first use
    except cupy.cuda.compiler.CompileException as e:   # the same error as the compile report's, wherever it shows
        raise CompileError(f"{os.path.basename(path)} failed to compile:\n{e}") from None
    except (ImportError, OSError, RuntimeError) as e:
        if "nvrtc" in str(e).lower():
            _nvrtc()   # NVRTC itself cannot be loaded: raises ToolMissing with the install hint
        raise


# ---------------------------------------------------------------------------------------------------------------------
# Anywhere: NVRTC compile report
# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class KernelResources:
    name: str
    arch: str
    registers: int = 0
    smem_bytes: int = 0          # static shared memory (dynamic shared memory is chosen at launch)
    stack_bytes: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    barriers: int = 0
    cmem_bytes: int = 0
    _report: "CompileReport | None" = field(default=None, repr=False, compare=False)

    @property
    def sass(self) -> list[str]:
        """This kernel's SASS instructions, disassembled (once per report) on first use; [] without cuobjdump."""
        return self._report.sass().get(self.name, []) if self._report is not None else []

    @property
    def spills(self) -> int:
        return self.spill_stores + self.spill_loads

    @property
    def sass_counts(self) -> dict[str, int]:
        return sass_census(self.sass)

    def row(self) -> dict:
        c = self.sass_counts
        return {
            "kernel": self.name, "arch": self.arch, "regs": self.registers, "smem": self.smem_bytes,
            "stack": self.stack_bytes, "spill_st": self.spill_stores, "spill_ld": self.spill_loads,
            "ldg": fmt_widths(c, "LDG"), "stg": fmt_widths(c, "STG"),
            "lds/sts": f"{_total(c, 'LDS')}/{_total(c, 'STS')}", "bar": c.get("BAR", 0),
            "shfl": c.get("SHFL", 0), "ffma": c.get("FFMA", 0), "mma": c.get("HMMA", 0) + c.get("HGMMA", 0),
            "ldl/stl": f"{c.get('LDL', 0)}/{c.get('STL', 0)}",
        }


@dataclass
class CompileReport:
    path: str
    arch: str
    options: tuple[str, ...]
    log: str
    ptx: str
    cubin: bytes
    kernels: dict[str, KernelResources]
    _sass: dict | None = field(default=None, repr=False, compare=False)

    def sass(self) -> dict[str, list[str]]:
        if self._sass is None:
            self._sass = disassemble(self.cubin)
        return self._sass

    def __getitem__(self, name: str) -> KernelResources:
        return self.kernels[name]

    def census(self, name: str) -> dict[str, int] | None:
        """The SASS instruction census of kernel `name` (sass_census), or None where it has no SASS here: no such
        kernel, or no cuobjdump to disassemble with."""
        k = self.kernels.get(name)
        return k.sass_counts if k is not None and k.sass else None

    def rows(self) -> list[dict]:
        return [k.row() for k in self.kernels.values()]


_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(\w+)'")
_PROPS = re.compile(r"Function properties for (\S+)")
_STACK = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers")
_SMEM = re.compile(r"(\d+) bytes smem")
_BARS = re.compile(r"used (\d+) barriers")
_CMEM = re.compile(r"(\d+) bytes cmem\[0\]")


def parse_ptxas_log(log: str, arch: str) -> dict[str, KernelResources]:
    """Per-kernel resources from `--ptxas-options=-v` output."""
    out: dict[str, KernelResources] = {}
    current = None
    for line in log.splitlines():
        m = _ENTRY.search(line) or _PROPS.search(line)
        if m:
            name = m.group(1)
            current = out.setdefault(name, KernelResources(name=name, arch=arch))
            continue
        if current is None:
            continue
        if m := _STACK.search(line):
            current.stack_bytes, current.spill_stores, current.spill_loads = map(int, m.groups())
        if m := _USED.search(line):
            current.registers = int(m.group(1))
            if s := _SMEM.search(line):
                current.smem_bytes = int(s.group(1))
            if b := _BARS.search(line):
                current.barriers = int(b.group(1))
            if c := _CMEM.search(line):
                current.cmem_bytes = int(c.group(1))
    return out


def _nvrtc():
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
        return nvrtc
    except Exception as e:
        raise ToolMissing(
            f"NVRTC (the CUDA runtime compiler) could not be loaded: {e}. Install the wheel that matches your CuPy: "
            "`pip install 'nvidia-cuda-nvrtc==13.0.*'` for cupy-cuda13x (make test / make run do this)."
        ) from None


def nvrtc_version() -> str:
    try:
        return "%d.%d" % _nvrtc().getVersion()
    except ToolMissing:
        return "missing"


def _nvrtc_compile(nvrtc, src: str, name: str, opts: list[str]):
    """(ok, log, ptx, cubin) for one NVRTC compilation."""
    prog = nvrtc.createProgram(src, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, opts)
        except Exception as e:  # noqa: BLE001 - NVRTC raises its own error type; the log says why
            return False, nvrtc.getProgramLog(prog) or str(e), "", b""
        ptx = nvrtc.getPTX(prog)
        return True, nvrtc.getProgramLog(prog), ptx.decode(errors="replace") if isinstance(ptx, bytes) else ptx, \
            nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)


_NONCE = itertools.count()


@functools.lru_cache(maxsize=None)
def _compile(path: str, arch: str, options: tuple[str, ...], mtime: float) -> CompileReport:
    nvrtc = _nvrtc()
    src = _read(path)
    gpu_arch = arch if arch.startswith("sm_") else f"sm_{arch}"
    # without a CUDA toolkit NVRTC finds no cuda_fp16.h, mma.h, ...: the nvidia-cuda-runtime wheel has them
    # wheel headers first (the CPU machine has nothing else), then any folder that completes them with crt/mma.h
    # (the H200 machine's runtime wheel lacks it; its toolkit has it)
    includes = [f"-I{os.path.dirname(path)}"] + [f"-I{d}" for d in _header_dirs()]
    includes += [f"-I{d}" for d in _crt_dirs() if d not in _header_dirs()]
    opts = list(BASE_OPTIONS) + [f"-arch={gpu_arch}", "--ptxas-options=-v"] + includes + list(options)
    # the same compile done before, by this or another process (common/compile_cache.py: keyed by the source, the
    # project's headers, the options and NVRTC's version)
    key = compile_key(src, path, opts)
    hit = compile_cache.get(key)
    if hit is not None:
        ok, (log, ptx, cubin) = True, hit
    else:
        # NVRTC 13 on a GPU machine was seen to skip ptxas (and print no resource report) for code it had compiled
        # before, even in another process: an unused, uniquely named global makes every report's PTX new.
        src = src + f"\n__device__ int course_report_nonce_{os.getpid()}_{next(_NONCE)};\n"
        ok, log, ptx, cubin = _nvrtc_compile(nvrtc, src, os.path.basename(path), opts)
    if not ok:
        raise CompileError(f"{os.path.basename(path)} failed to compile for {gpu_arch} "
                           f"({' '.join(options) or 'no extra options'}):\n{log}")
    cubin = _complete_elf(cubin)
    parsed = parse_ptxas_log(log, gpu_arch)
    if not parsed:
        raise CompileError(f"{os.path.basename(path)}: NVRTC compiled for {gpu_arch} but returned no ptxas report "
                           f"(log: {log[:300]!r})")
    if hit is None:
        compile_cache.put(key, (log, ptx, cubin))
    order = kernel_names(path)
    kernels = {k: parsed[k] for k in sorted(parsed, key=lambda k: order.index(k) if k in order else len(order))}
    rep = CompileReport(path=path, arch=gpu_arch, options=options, log=log, ptx=ptx, cubin=cubin, kernels=kernels)
    for k in kernels.values():
        k._report = rep
    return rep


def compile_key(src: str, path: str, opts) -> str:
    """The disk cache's key of one compile of `path` (whose text is `src`) with NVRTC options `opts`."""
    return compile_cache.compile_key(src, (os.path.dirname(path), HEADER_DIR), tuple(opts), nvrtc_version())


def _complete_elf(cubin: bytes) -> bytes:
    """cupy 14.2's nvrtc.getCUBIN returns the cubin one byte short; pad to the length the ELF header implies."""
    import struct

    if len(cubin) >= 64 and cubin[:4] == b"\x7fELF" and cubin[4] == 2:  # 64-bit ELF
        phoff, shoff = struct.unpack_from("<QQ", cubin, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", cubin, 0x36)
        want = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
        if len(cubin) < want:
            cubin = cubin + b"\0" * (want - len(cubin))
    return cubin


def compile_report(path: str, arch: str = device.DEFAULT_ARCH, options: tuple[str, ...] = (),
                   defines: dict | None = None) -> CompileReport:
    """Compile a .cu file with NVRTC for `arch` (no GPU needed) and report each kernel's resources and SASS."""
    path = os.path.abspath(path)
    return _compile(path, arch, tuple(options) + _define_options(defines), os.path.getmtime(path))


# ---------------------------------------------------------------------------------------------------------------------
# SASS
# ---------------------------------------------------------------------------------------------------------------------
def find_cuobjdump() -> str | None:
    """cuobjdump from the PATH, the triton wheel, or the nvidia-cuda-cuobjdump wheel."""
    exe = shutil.which("cuobjdump")
    if exe:
        return exe
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec and spec.origin:
            cand = os.path.join(os.path.dirname(spec.origin), "backends", "nvidia", "bin", "cuobjdump")
            if os.access(cand, os.X_OK):
                return cand
    except (ImportError, ValueError):
        pass
    for sp in sys.path:
        for cand in glob.glob(os.path.join(sp, "nvidia", "*", "bin", "cuobjdump")):
            if os.access(cand, os.X_OK):
                return cand
    return None


_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
_INSN = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(.*?);")


def cuobjdump(cubin: bytes, option: str, timeout: float = 120) -> str | None:
    """`cuobjdump <option>` on a cubin (written to a temporary file): its stdout, or None without cuobjdump."""
    exe = find_cuobjdump()
    if exe is None:
        return None
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        tmp = f.name
    try:
        return subprocess.run([exe, option, tmp], capture_output=True, text=True, timeout=timeout).stdout
    finally:
        os.unlink(tmp)


def disassemble(cubin: bytes) -> dict[str, list[str]]:
    """{kernel name: [SASS instruction, ...]}; empty when no cuobjdump is available."""
    exe = find_cuobjdump()
    if exe is None:
        return {}
    key = compile_cache.sass_key(cubin, exe)
    hit = compile_cache.get(key)
    if hit is not None:
        return hit
    text = cuobjdump(cubin, "--dump-sass")
    if text is None:
        return {}
    out: dict[str, list[str]] = {}
    cur = None
    for line in text.splitlines():
        m = _FUNC.match(line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        if cur is not None and (m := _INSN.search(line)):
            cur.append(m.group(1).strip())
    if out:
        compile_cache.put(key, out)
    return out


def _opcode(insn: str) -> str:
    insn = re.sub(r"^@!?U?P\w+\s+", "", insn)   # drop a predicate guard such as "@P0" or "@!PT"
    return insn.split()[0] if insn.split() else ""


def _width(op: str) -> int:
    for w in ("128", "64", "U16", "S16", "U8", "S8"):
        if f".{w}" in op:
            return {"128": 128, "64": 64, "U16": 16, "S16": 16, "U8": 8, "S8": 8}[w]
    return 32


def sass_census(lines: list[str]) -> dict[str, int]:
    """Count the instructions a kernel engineer looks for first.

    Global loads and stores by width (LDG.32 / LDG.64 / LDG.128, the 128-bit ones are 16-byte vector accesses),
    shared memory (LDS/STS by width, LDSM = ldmatrix), BAR (barriers), SHFL, FFMA, HMMA (mma.sync), HGMMA (wgmma),
    LDGSTS (cp.async), UTMALDG (TMA), LDL/STL (local memory), ATOM/RED (atomics).
    """
    c: dict[str, int] = {}

    def add(k):
        c[k] = c.get(k, 0) + 1

    for insn in lines:
        op = _opcode(insn)
        base = op.split(".")[0]
        if base in ("LDG", "STG", "LDS", "STS"):
            add(f"{base}.{_width(op)}")
        elif base in ("BAR", "SHFL", "FFMA", "FADD", "FMUL", "HMMA", "HGMMA", "LDSM", "LDGSTS", "UTMALDG", "LDL",
                      "STL", "MUFU", "ATOM", "ATOMG", "RED", "REDG", "DFMA", "IMAD"):
            add({"ATOMG": "ATOM", "REDG": "RED"}.get(base, base))
    return c


def _total(c: dict[str, int], base: str) -> int:
    return sum(v for k, v in c.items() if k.startswith(base + "."))


def fmt_widths(c: dict[str, int], base: str) -> str:
    keys = sorted((k for k in c if k.startswith(base + ".")), key=lambda k: int(k.split(".")[1]))
    parts = [f"{c[k]}x{k.split('.')[1]}b" for k in keys]
    return " ".join(parts) or "-"


def sass_excerpt(lines: list[str], pattern: str = r"LDG|STG|LDS|STS|BAR|SHFL|HMMA|HGMMA|LDL|STL|LDGSTS", limit=12):
    """The first `limit` instructions matching `pattern` (memory and sync by default)."""
    pat = re.compile(pattern)
    return [ln for ln in lines if pat.search(_opcode(ln))][:limit]


# ---------------------------------------------------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------------------------------------------------
def print_compile_report(path: str, arch: str = device.DEFAULT_ARCH, defines: dict | None = None,
                         kernels: list[str] | None = None, excerpt_of: str | None = None, file=None) -> CompileReport:
    """Compile and print the resource table (and a SASS excerpt of one kernel). Each kernel row also names the
    variants that launch it, as the correctness table names them (common.plan.kernel_users, while common.lab.run
    prints the lab's compile report); a helper kernel no variant launches names none."""
    from .table import kernel_names, print_kernel_table, width

    rep = compile_report(path, arch, defines=defines)
    rows = [r for r in rep.rows() if kernels is None or r["kernel"] in kernels]
    head = tr("{file} compiled with NVRTC {version} for {arch}:", file=os.path.basename(path), version=nvrtc_version(),
              arch=rep.arch)
    print("\n" + head, file=file)
    used = kernel_names([r["kernel"] for r in rows], rep.arch)
    print_kernel_table(rows, file=file, used_by=used, width=width(head))
    if excerpt_of and excerpt_of in rep.kernels:
        ex = sass_excerpt(rep.kernels[excerpt_of].sass)
        if ex:
            print(tr("SASS excerpt of {kernel} (memory and sync instructions):", kernel=excerpt_of), file=file)
            for ln in ex:
                print("   ", ln, file=file)
    if find_cuobjdump() is None:
        print(tr("(no cuobjdump found: SASS columns are empty; it ships with the triton wheel)"), file=file)
    return rep


# ---------------------------------------------------------------------------------------------------------------------
# A kernel's resources on a given GPU (a launch plan needs them for the grid: blocks per SM x SMs)
# ---------------------------------------------------------------------------------------------------------------------
def resources(path: str, name: str, gpu=None, defines: dict | None = None,
              options: tuple[str, ...] = ()) -> tuple[int, int]:
    """(registers per thread, static shared memory bytes) of kernel `name` on `gpu` (a common.device.DeviceInfo;
    default the GPU at hand): from the loaded kernel on a real GPU, from an NVRTC compile for the GPU's architecture
    on a simulated one (the same compiler and options, so the same numbers)."""
    gpu = gpu or device.current()
    if not gpu.simulated and device.has_gpu():
        k = get_kernel(path, name, options, defines)
        return int(k.num_regs), int(k.shared_size_bytes)
    k = compile_report(path, gpu.arch, options, defines)[name]
    return k.registers, k.smem_bytes
