"""Lab 1.1 - Device tour: what the GPU is, what the software stack is, and what "fast" can mean on it.

You will learn
  * the numbers that bound every kernel of this course: SMs, warp size, registers and shared memory per SM and per
    block, resident threads and blocks per SM, L2 size, clocks, memory bus, and what follows from them (peak FP32
    FLOP/s = SMs x FP32 lanes x 2 x clock; theoretical bandwidth = 2 x memory clock x bus width; the ridge point);
  * the software stack under a kernel launch: NVIDIA driver (its CUDA version is the newest it can run), CUDA runtime
    (bundled with CuPy and torch), NVRTC (compiles CUDA C at run time), CuPy, Triton (its own LLVM and ptxas), torch;
    which of them must match which, and what the classic mismatch errors mean and how to fix them;
  * measured against theoretical bandwidth: the clock-derived figure and the datasheet are ceilings nobody reaches; a
    large copy shows what is really available (~90% of the clock-derived figure is typical of HBM);
  * without a GPU: the same report for a GPU a learner may have (a profile of common/gpu_specs.py: --gpu NAME, or the
    example GPU of --arch), and what can and cannot run on this machine.

The two numbers, for the bandwidth probe (a copy of n fp32 elements, the only kernel this lab times): bytes = 8 n
(4 read + 4 written per element), FLOPs = 0. Zero FLOPs per byte is as memory-bound as a kernel gets: its time is
bytes / bandwidth, which is exactly why a copy measures bandwidth. n = 2^28 moves 2 GiB: a fraction of a millisecond
at HBM speeds (`--plan` prints this GPU's floor). The lesson, the predictions and this GPU's measured figures:
README.md.

Run: python -m phase1_architecture.lab01_device_tour [--arch sm_75 | --gpu NAME] [--quick] [--size N] [--errors]
     [--replot] [--plan [--gpu NAME]] [--set COPY_BLOCK=4096]
"""
from __future__ import annotations

import os
import platform
import re
import traceback

import numpy as np

from common import arrays, config, cuda, device, lab, plan, report
from common.device import GiB, KiB, MiB
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .triton_kernels import copy_kernel

LAB = "phase1_lab01_device_tour"
CU = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels.cu")   # the smoke test's CUDA C kernel
BENCH_N = 2**28              # the copy probe's size (8 n bytes = 2 GiB moved)

# The errors learners meet first, what they mean, and the fix. `explain_error` matches them against a message.
KNOWN_ERRORS = [
    (r"InsufficientDriver|driver version is insufficient|CUDA driver version is insufficient",
     "cudaErrorInsufficientDriver: the CUDA runtime bundled with CuPy/torch is newer than the installed NVIDIA driver "
     "supports (nvidia-smi's 'CUDA Version' is the newest the driver runs).",
     "update the driver, or install the wheels built for the driver's CUDA major (cupy-cuda12x, a cu12x torch)"),
    (r"UNSUPPORTED_PTX_VERSION|PTX was compiled with an unsupported toolchain|unsupported toolchain",
     "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: PTX from a newer compiler (NVRTC, nvcc, Triton's ptxas) than the driver "
     "can JIT-compile. Compiling straight to the GPU's own code (a cubin, -arch=sm_XY) avoids the driver's JIT.",
     "use the NVRTC wheel of the driver's CUDA version (nvidia-cuda-nvrtc==<driver CUDA>.*), or update the driver"),
    (r"NO_BINARY_FOR_GPU|no kernel image is available",
     "CUDA_ERROR_NO_BINARY_FOR_GPU: the binary holds code for other GPUs only (a wheel built without this arch, or a "
     "cubin for sm_90a loaded on sm_80) and no PTX the driver could compile instead.",
     "install a build that lists this GPU's arch (torch.cuda.get_arch_list()), or compile for -arch=sm_XY of this GPU"),
    (r"invalid value for --gpu-architecture|invalid value for -arch|unsupported gpu architecture",
     "NVRTC/nvcc does not know the requested architecture: the compiler is older than the GPU (sm_90 needs CUDA "
     "11.8+), or newer and has dropped it.",
     "upgrade the NVRTC wheel to one that lists the arch (nvrtc.getSupportedArchs()), or target an arch it knows"),
    (r"libnvrtc|Failure finding \"libnvrtc|DynamicLibNotFoundError",
     "NVRTC is not installed: CuPy finds no libnvrtc.so.* (the CuPy wheel does not bundle it).",
     "pip install 'nvidia-cuda-nvrtc==13.0.*' for cupy-cuda13x (make test / make run do this)"),
    (r"cannot open source file \"cuda_(fp16|bf16)\.h\"|cannot open source file \"mma\.h\"",
     "NVRTC finds no CUDA headers: there is no CUDA toolkit, and the header wheels are missing.",
     "pip install 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*'"),
    (r"multiple CuPy packages|cupy-cuda\d+x.*cupy-cuda\d+x",
     "two CuPy wheels are installed (e.g. cupy-cuda12x and cupy-cuda13x): they overwrite each other's files.",
     "pip uninstall both, then install the one matching the driver"),
    (r"NoDevice|no CUDA-capable device",
     "cudaErrorNoDevice: the driver sees no GPU (CUDA_VISIBLE_DEVICES empty or wrong, or a container without --gpus).",
     "check nvidia-smi and CUDA_VISIBLE_DEVICES"),
    (r"out of resources|OUT_OF_RESOURCES|too many resources requested",
     "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: the block asks for more registers or shared memory than an SM has "
     "(threads x registers > 65536, or > 48 KiB dynamic shared memory without opting in).",
     "fewer threads per block, __launch_bounds__, or kernel.max_dynamic_shared_size_bytes = n first (lab 1.5)"),
]


def explain_error(message: str) -> tuple[str, str] | None:
    """(meaning, fix) for a known error message, else None."""
    for pat, meaning, fix in KNOWN_ERRORS:
        if re.search(pat, message, re.I):
            return meaning, fix
    return None


# ---------------------------------------------------------------------------------------------------------------------
# The bandwidth probe: a copy. reference / make_inputs / VARIANTS follow the lab contract so it is checked like any lab.
# ---------------------------------------------------------------------------------------------------------------------
def reference(x: np.ndarray) -> np.ndarray:
    return np.array(x, dtype=np.float64, copy=True)


def make_inputs(n: int, dtype: str, rng: np.random.Generator, where: str):
    """One random vector with a few large values (a copy that skips or duplicates an element shows)."""
    x = rng.standard_normal(n) * 3.0
    if n > 8:
        x[rng.integers(0, n, 3)] = 4.0e4
    return (arrays.from_numpy(x, dtype, where),)


# The copy's configuration (the lab's default; `--set COPY_BLOCK=4096` and the like override it): elements per program
# and warps per program. 2048 elements over 8 warps is 8 fp32 per thread, two 16-byte loads each: bytes in flight per
# thread, which is what a streaming copy needs (lab 1.5 shows why).
COPY = dict(COPY_BLOCK=2048, COPY_WARPS=8)


def copy_config() -> config.Resolved:
    return config.resolve("triton copy_kernel", COPY, validate=_check_copy)


def _check_copy(v: dict) -> dict:
    b, w = v["COPY_BLOCK"], v["COPY_WARPS"]
    if b < 32 or b > 2**16 or b & (b - 1) or w not in (1, 2, 4, 8, 16, 32) or b < 32 * w:
        raise ValueError(tr("triton copy: COPY_BLOCK a power of two in 32..65536 and at least 32 x COPY_WARPS, "
                            "COPY_WARPS in 1, 2, 4, 8, 16, 32; got {got}", got=config.fmt(v)))
    return v


def copy_grid(n: int, block: int) -> int:
    """Programs of the copy: one per `block` elements."""
    return triton.cdiv(n, block)


def copy_triton(x, out=None):
    """y = x with a Triton kernel (fp32 / fp16); CuPy/torch on a GPU, NumPy/torch CPU arrays in the interpreter."""
    dt = arrays.check_array("x", x, dtypes=("float32", "float16"), device=not INTERPRETER)
    out = arrays.check_out(out, x.shape, dt, x)
    n = arrays.size(x)
    if n == 0:
        return out
    cfg = copy_config().values
    launch(copy_kernel, (copy_grid(n, cfg["COPY_BLOCK"]),), x, out, n, BLOCK=cfg["COPY_BLOCK"],
           num_warps=cfg["COPY_WARPS"])
    return out


def peer_cupy_copy(x, out=None):
    import cupy

    arrays.check_array("x", x, dtypes=("float32", "float16"), libs=("cupy",))
    out = arrays.check_out(out, x.shape, arrays.dtype_name(x), x)
    cupy.copyto(out, x)
    return out


VARIANTS = [lab.Variant("triton copy", copy_triton, "triton", dtypes=("float32", "float16"))]
PEERS = [lab.Variant("cupy.copyto", peer_cupy_copy, "peer", dtypes=("float32", "float16"))]
CHECK_CASES = [(n, "float32") for n in (1, 3, 2047, 2048, 2049, 1_000_003)] + [(4099, "float16")]
CPU_CHECK_CASES = [(n, "float32") for n in (1, 2049, 5000)] + [(33, "float16")]


# ---------------------------------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------------------------------
def _fmt_bytes(b: float) -> str:
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if b >= size:
            v = b / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{b:.0f} B"


def derived(d: device.DeviceInfo) -> dict:
    """What follows from the raw properties of one GPU (its FP32 lanes per SM come from its architecture's entry)."""
    lanes = device.arch_info(d.arch).fp32_lanes_per_sm
    peak = d.sms * lanes * 2 * d.sm_clock_mhz * 1e6 / 1e12
    bw = d.theoretical_gbps
    return {
        "peak TFLOP/s, FP32 (SMs x lanes x 2 x clock)": peak,
        "ridge point FLOP/B (peak / bandwidth)": peak * 1e12 / (bw * 1e9) if bw else None,
        "resident threads on the GPU": d.sms * d.max_threads_per_sm,
        "registers per thread at full occupancy": d.regs_per_sm // d.max_threads_per_sm,
        "shared memory per thread at full occupancy (B)": d.smem_per_sm // d.max_threads_per_sm,
    }


def gpu_rows(d: device.DeviceInfo) -> list[dict]:
    """One GPU's description as labelled rows: read off the device, or a profile of the course's table."""
    a = device.arch_info(d.arch)
    rows = [
        ("name", f"{d.name} ({d.arch}, {a.family}, compute capability {d.cc_major}.{d.cc_minor})"),
        ("SMs", d.sms),
        ("warp size", d.warp_size),
        ("max threads / block", d.max_threads_per_block),
        ("max threads / SM  (warps)", f"{d.max_threads_per_sm}  ({d.max_threads_per_sm // d.warp_size})"),
        ("max resident blocks / SM", d.max_blocks_per_sm),
        ("32-bit registers / SM, / block", tr("{sm}, {block} (<= {most}/thread)", sm=d.regs_per_sm,
                                               block=d.regs_per_block, most=a.max_regs_per_thread)),
        ("FP32 lanes / SM", a.fp32_lanes_per_sm),
        ("shared memory / SM", _fmt_bytes(d.smem_per_sm)),
        ("shared memory / block (default, opt-in)", f"{_fmt_bytes(d.smem_per_block)}, "
                                                    f"{_fmt_bytes(d.smem_per_block_optin)}"),
        ("shared memory reserved / block", f"{d.smem_reserved_per_block} B"),
        ("L1/shared carve-outs (KiB)", ", ".join(map(str, a.smem_carveouts_kib))),
        ("L2", _fmt_bytes(d.l2_bytes)),
        ("SM clock (max)", f"{d.sm_clock_mhz:.0f} MHz"),
        ("memory", tr("{gib:.0f} GiB, {bits}-bit bus at {mhz:.0f} MHz", gib=d.total_mem_bytes / GiB,
                      bits=d.mem_bus_bits, mhz=d.mem_clock_mhz)),
        ("theoretical bandwidth (2 x clock x bus)", f"{d.theoretical_gbps:.0f} GB/s"),
    ]
    if d.datasheet:
        rows.append(("datasheet", f"{d.datasheet.get('hbm_gbps')} GB/s, {d.datasheet.get('fp32_tflops')} TFLOP/s "
                                  f"FP32 ({d.datasheet.get('source')})"))
    rows += [(k, round(v, 1) if isinstance(v, float) else v) for k, v in derived(d).items()]
    return [{"property": tr(k), "value": v} for k, v in rows]


def arch_rows(arch: str) -> list[dict]:
    """Without a GPU: the GPU that stands for `arch` (the profile chosen with --gpu, else the architecture's example
    profile of common/gpu_specs.py), as labelled rows."""
    d = device.current(arch)
    rows = gpu_rows(d)
    want = device.arch_info(arch).arch
    if d.arch != want:
        rows.insert(1, {"property": tr("note"),
                        "value": tr("the table has no {want} GPU: {name} ({arch}) stands for it", want=want,
                                    name=d.name, arch=d.arch)})
    return rows


def device_rows() -> list[dict]:
    """The GPU at hand, read off the device."""
    return gpu_rows(device.info())


# Fields compared with the architecture's entry (the device must agree exactly), and with the profile of the same
# name where the table has one. sms and l2_bytes identify a model; clocks, bus width and memory size may differ from
# the profile between boards, drivers and datasheet roundings, so they are reported as notes, not mismatches.
_ARCH_FIELDS = (("max_threads_per_sm", "max_threads_per_sm"), ("max_blocks_per_sm", "max_blocks_per_sm"),
                ("regs_per_sm", "regs_per_sm"), ("regs_per_block", "max_regs_per_block"),
                ("max_threads_per_block", "max_threads_per_block"), ("smem_per_sm", "smem_per_sm"),
                ("smem_per_block_optin", "smem_per_block_optin"),
                ("smem_reserved_per_block", "smem_reserved_per_block"))
_PROFILE_FIELDS = ("sms", "l2_bytes")
_PROFILE_NOTES = ("sm_clock_mhz", "mem_clock_mhz", "mem_bus_bits", "total_mem_bytes")


def profile_of(d: device.DeviceInfo) -> str | None:
    """The profile key of the table whose name is this GPU's, else None."""
    return (d.datasheet or {}).get("profile") or device.datasheet(d.name).get("profile")


def table_mismatches(d: device.DeviceInfo | None = None) -> list[str]:
    """Where the GPU at hand (or `d`) disagrees with the course's table (should be empty): its architecture's limits,
    and the SM count and L2 of the profile of the same name, when the table has one."""
    d = d or device.info()
    try:
        a = device.arch_info(d.arch)
    except ValueError:
        return [tr("{arch} is not in the course's table of architectures", arch=d.arch)]
    out = [tr("{field}: device {mine}, {arch} table {theirs}", field=f, mine=getattr(d, f), arch=a.arch,
              theirs=getattr(a, t)) for f, t in _ARCH_FIELDS if getattr(d, f) != getattr(a, t)]
    slug = profile_of(d)
    if slug:
        p = device.profile_info(slug)
        out += [tr("{field}: device {mine}, profile {slug} {theirs}", field=f, mine=getattr(d, f), slug=slug,
                   theirs=getattr(p, f)) for f in _PROFILE_FIELDS if getattr(d, f) != getattr(p, f)]
    return out


def profile_notes(d: device.DeviceInfo | None = None) -> list[str]:
    """Where the GPU at hand (or `d`) differs from its profile in figures that may differ between boards of one model
    (clocks, memory bus, memory size beyond 2%): one note each; one note saying so when the table has no profile."""
    d = d or device.info()
    slug = profile_of(d)
    if not slug:
        return [tr("the table has no profile named {name!r}: predictions use the figures read off the device",
                   name=d.name)]
    p = device.profile_info(slug)
    out = []
    for f in _PROFILE_NOTES:
        mine, theirs = getattr(d, f), getattr(p, f)
        if f == "total_mem_bytes" and abs(mine - theirs) <= 0.02 * theirs:
            continue
        if mine != theirs:
            out.append(tr("{field}: device {mine:g}, profile {slug} {theirs:g}", field=f, mine=mine, slug=slug,
                          theirs=theirs))
    return out


def _version(mod: str) -> str:
    try:
        m = __import__(mod)
        return getattr(m, "__version__", "?")
    except Exception as e:  # noqa: BLE001 - a broken install is itself a finding
        return tr("missing ({error})", error=type(e).__name__)


def versions() -> dict:
    """Every layer of the stack, with the CUDA versions each was built for."""
    v = {"python": platform.python_version(), "numpy": np.__version__, "cupy": _version("cupy"),
         "triton": triton.__version__, "torch": _version("torch"), "nvrtc": cuda.nvrtc_version()}
    try:
        import torch

        v["torch built for CUDA"] = torch.version.cuda or tr("none (CPU build)")
    except Exception:  # noqa: BLE001
        pass
    try:
        from cupy_backends.cuda.libs import nvrtc

        v["nvrtc archs"] = " ".join(f"sm_{a}" for a in nvrtc.getSupportedArchs())
    except Exception:  # noqa: BLE001
        pass
    if device.has_gpu():
        d = device.info()
        v["driver supports CUDA"] = d.driver_cuda
        v["CUDA runtime (CuPy's)"] = d.runtime_cuda
    return v


def _major_minor(s: str) -> tuple[int, int] | None:
    m = re.match(r"(\d+)\.(\d+)", s or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def version_checks(v: dict) -> list[dict]:
    """The compatibility rules, applied to the versions at hand."""
    rows = []
    drv = _major_minor(v.get("driver supports CUDA", ""))
    rt = _major_minor(v.get("CUDA runtime (CuPy's)", ""))
    nv = _major_minor(v.get("nvrtc", ""))
    tc = _major_minor(v.get("torch built for CUDA", ""))
    if drv and rt:
        ok = rt[0] <= drv[0]
        rows.append({"rule": tr("CUDA runtime major <= driver's CUDA major (minor versions are compatible)"),
                     "here": f"runtime {rt[0]}.{rt[1]}, driver {drv[0]}.{drv[1]}", "ok": ok})
    if drv and nv:
        ok = nv <= drv
        rows.append({"rule": tr("NVRTC <= driver (else its PTX needs a newer JIT; CuPy loads cubins, which is safer)"),
                     "here": f"NVRTC {nv[0]}.{nv[1]}, driver {drv[0]}.{drv[1]}", "ok": ok})
    if drv and tc:
        rows.append({"rule": tr("torch's CUDA major <= driver's CUDA major"),
                     "here": f"torch cu{tc[0]}{tc[1]}, driver {drv[0]}.{drv[1]}", "ok": tc[0] <= drv[0]})
    if nv and not drv:
        rows.append({"rule": tr("NVRTC present: CUDA C compiles without a GPU (compile reports)"),
                     "here": f"NVRTC {nv[0]}.{nv[1]}", "ok": True})
    return rows


def smoke_tests(arch: str) -> list[dict]:
    """One tiny action per layer; a failure is explained with the known-errors table."""
    rows = []

    def attempt(what, fn):
        try:
            detail = fn()
            rows.append({"check": what, "result": "ok", "detail": detail})
        except Exception as e:  # noqa: BLE001 - every failure is reported, not raised
            msg = f"{type(e).__name__}: {e}".splitlines()[0][:160]
            known = explain_error(str(e) + " " + traceback.format_exc(limit=1))
            rows.append({"check": what, "result": "FAILED", "detail": msg})
            if known:
                rows.append({"check": "  " + tr("meaning"), "result": "", "detail": tr(known[0])})
                rows.append({"check": "  " + tr("fix"), "result": "", "detail": tr(known[1])})

    def nvrtc_compile():
        rep = cuda.compile_report(CU, arch)
        k = rep["tour_add"]
        return tr("tour_add for {arch}: {regs} registers, {n} SASS instructions", arch=arch, regs=k.registers,
                  n=len(k.sass))

    attempt(tr("NVRTC compiles CUDA C for {arch}", arch=arch), nvrtc_compile)

    def triton_run():
        x = np.arange(4099, dtype=np.float32)
        if not INTERPRETER:
            import cupy

            x = cupy.asarray(x)
        y = copy_triton(x)
        assert np.array_equal(arrays.to_numpy(y), arrays.to_numpy(x)), tr("copy mismatch")
        return (tr("ran on the GPU") if not INTERPRETER else tr("ran in the interpreter (TRITON_INTERPRET=1, no GPU)"))

    attempt(tr("Triton launches a kernel"), triton_run)
    if device.has_gpu():
        def cupy_run():
            import cupy

            a = cupy.arange(1000, dtype=cupy.float32)
            return tr("cupy.sum = {got:.0f} (expected 499500)", got=float(a.sum()))

        def cuda_run():
            import cupy

            k = cuda.get_kernel(CU, "tour_add")
            a = cupy.arange(1000, dtype=cupy.float32)
            c = cupy.empty_like(a)
            k((4,), (256,), (a, a, c, np.int64(1000)))
            assert float(c[999]) == 1998.0
            return tr("tour_add loaded (NVRTC -> cubin) and ran: {regs} registers", regs=k.num_regs)

        def torch_run():
            import torch

            if not torch.cuda.is_available():
                raise RuntimeError(tr("torch.cuda.is_available() is False: a CPU-only torch build, or its CUDA is "
                                      "newer than the driver (CUDA driver version is insufficient)"))
            t = torch.ones(1000, device="cuda")
            return tr("torch {version} on {gpu}: sum = {got:.0f}", version=torch.__version__,
                      gpu=torch.cuda.get_device_name(), got=float(t.sum()))

        attempt(tr("CuPy allocates and reduces"), cupy_run)
        attempt(tr("a CUDA C kernel compiles, loads and runs"), cuda_run)
        attempt(tr("torch runs on the GPU"), torch_run)
    return rows


def file_needs(path: str, arch: str) -> str:
    """'' when the kernel file compiles for `arch`, else what it needs. A file's `// archs:` line names the targets it
    was written for: an architecture-specific one (sm_90a) means exactly that architecture; plain ones (sm_80 sm_90)
    mean the oldest of them and everything after it."""
    claims = cuda.claimed_archs(path)
    cc = device.arch_info(arch).cc
    specific = [c for c in claims if c.endswith("a")]
    if specific:
        ok = any(device.arch_info(c).arch == device.arch_info(arch).arch for c in specific)
        return "" if ok else tr("needs {archs} (architecture-specific instructions)",
                                archs=tr(" or ").join(specific))
    oldest = min(claims, key=lambda c: device.arch_info(c).cc)
    return "" if cc >= device.arch_info(oldest).cc else tr("needs {arch} or later", arch=oldest)


def what_runs_here(arch: str) -> list[dict]:
    """Without a GPU: what this machine can and cannot do, and which kernel files target the chosen arch."""
    import glob

    rows = [
        {"what": tr("Triton kernels"),
         "here": tr("run in the interpreter on NumPy/torch CPU arrays (correct, ~1000x slower)")},
        {"what": tr("CUDA C kernels"),
         "here": tr("compile with NVRTC for {arch}: registers, shared memory, spills, SASS", arch=arch)},
        {"what": tr("timings, bandwidth, TFLOP/s"), "here": tr("not available: nothing runs on a GPU")},
        {"what": tr("library peers (cuBLAS, torch CUDA)"), "here": tr("not available: they need a GPU")},
    ]
    files = sorted(glob.glob(os.path.join(report.ROOT, "phase*", "**", "*.cu"), recursive=True))
    needs = {os.path.relpath(f, report.ROOT): file_needs(f, arch) for f in files}
    rows.append({"what": tr("kernel files that target {arch}", arch=arch),
                 "here": tr("{n} of {total}", n=sum(not v for v in needs.values()), total=len(files))})
    for f, why in needs.items():
        if why:
            rows.append({"what": tr("not for {arch}: {file}", arch=arch, file=f), "here": why})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# The plan: the copy probe's launch on a given GPU (common.plan)
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(n: int) -> int:
    """Bytes the benchmark holds at once at size n: the fp32 source and destination."""
    return 8 * n


def launches(gpu: device.DeviceInfo, size: int | None = None) -> list[plan.Launch]:
    n, _ = plan.fit(size or BENCH_N, bench_bytes, gpu)
    cfg = copy_config()
    return [plan.Launch("triton copy", "copy_kernel", "triton", fn=copy_kernel,
                        grid=copy_grid(n, cfg["COPY_BLOCK"]),
                        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"},
                        defines={"BLOCK": cfg["COPY_BLOCK"]}, num_warps=cfg["COPY_WARPS"],
                        case=f"n = {plan.fmt_size(n)} float32", config_source=cfg.source())]
