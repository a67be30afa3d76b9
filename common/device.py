"""The GPU at hand: is there one, what is it, and what can it do.

Three kinds of numbers live here and are never mixed up:
  * properties read off the device (SM count, L2, shared memory, registers, clocks);
  * datasheet peaks, looked up by name (leads, not facts about your card);
  * measured ceilings (a large streaming copy for HBM bandwidth) live in common.bench, which measures them.
Without a GPU, `ARCHS` describes each architecture the course compiles for, so the CPU tier can still teach with
real limits (occupancy, shared memory per block) for a chosen target.
"""
from __future__ import annotations

import functools
import json
import os
import re
import sys
from dataclasses import asdict, dataclass, field

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


# ---------------------------------------------------------------------------------------------------------------------
# Architecture limits (CUDA programming guide, "Technical Specifications per Compute Capability", and the occupancy
# calculator's allocation rules). One entry per architecture this course compiles for.
# ---------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Arch:
    arch: str                     # "sm_90"
    family: str                   # "Hopper"
    example_gpu: str              # a GPU of this architecture, used for the CPU-only report
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_sm: int = 65536
    max_regs_per_thread: int = 255
    max_regs_per_block: int = 65536
    reg_alloc_unit: int = 256      # registers are handed out per warp, in chunks of this many
    warp_alloc_granularity: int = 4  # register-limited warps are counted in groups of this many (one per SM partition)
    smem_per_sm: int = 0           # bytes, the largest carve-out
    smem_per_block_optin: int = 0  # bytes, with cudaFuncSetAttribute(MaxDynamicSharedMemorySize)
    smem_per_block_default: int = 48 * KiB
    smem_reserved_per_block: int = 0  # the runtime keeps this much of the SM's shared memory for each resident block
    smem_alloc_unit: int = 128
    smem_carveouts_kib: tuple[int, ...] = ()  # shared-memory sizes the L1/shared split can take
    max_threads_per_block: int = 1024
    warp_size: int = 32
    # the example GPU's figures (datasheet / typical), for the CPU-only report
    example_sms: int = 0
    example_l2_bytes: int = 0
    example_hbm_gbps: float = 0.0

    @property
    def cc(self) -> int:
        return int(self.arch.split("_")[1].rstrip("a"))

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


ARCHS: dict[str, Arch] = {
    a.arch: a
    for a in [
        Arch("sm_75", "Turing", "Tesla T4", max_threads_per_sm=1024, max_blocks_per_sm=16,
             smem_per_sm=64 * KiB, smem_per_block_optin=64 * KiB, smem_reserved_per_block=0, smem_alloc_unit=256,
             smem_carveouts_kib=(32, 64), example_sms=40, example_l2_bytes=4 * MiB, example_hbm_gbps=320.0),
        Arch("sm_80", "Ampere", "A100-SXM4-80GB", max_threads_per_sm=2048, max_blocks_per_sm=32,
             smem_per_sm=164 * KiB, smem_per_block_optin=163 * KiB, smem_reserved_per_block=1 * KiB,
             smem_carveouts_kib=(0, 8, 16, 32, 64, 100, 132, 164), example_sms=108, example_l2_bytes=40 * MiB,
             example_hbm_gbps=2039.0),
        Arch("sm_86", "Ampere", "GeForce RTX 3090", max_threads_per_sm=1536, max_blocks_per_sm=16,
             smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, smem_reserved_per_block=1 * KiB,
             smem_carveouts_kib=(0, 8, 16, 32, 64, 100), example_sms=82, example_l2_bytes=6 * MiB,
             example_hbm_gbps=936.0),
        Arch("sm_89", "Ada Lovelace", "GeForce RTX 4090", max_threads_per_sm=1536, max_blocks_per_sm=24,
             smem_per_sm=100 * KiB, smem_per_block_optin=99 * KiB, smem_reserved_per_block=1 * KiB,
             smem_carveouts_kib=(0, 8, 16, 32, 64, 100), example_sms=128, example_l2_bytes=72 * MiB,
             example_hbm_gbps=1008.0),
        Arch("sm_90", "Hopper", "H200 SXM", max_threads_per_sm=2048, max_blocks_per_sm=32,
             smem_per_sm=228 * KiB, smem_per_block_optin=227 * KiB, smem_reserved_per_block=1 * KiB,
             smem_carveouts_kib=(0, 8, 16, 32, 64, 100, 132, 164, 196, 228), example_sms=132,
             example_l2_bytes=60 * MiB, example_hbm_gbps=4800.0),
    ]
}
DEFAULT_ARCH = "sm_90"


def arch_info(arch: str) -> Arch:
    """Limits of an architecture, "sm_90" or "90" or "sm_90a"."""
    key = arch if arch.startswith("sm_") else f"sm_{arch}"
    key = key.rstrip("a") if key.endswith("a") and key[:-1] in ARCHS else key
    if key not in ARCHS:
        raise ValueError(f"arch: expected one of {sorted(ARCHS)}, got {arch!r}")
    return ARCHS[key]


# ---------------------------------------------------------------------------------------------------------------------
# Datasheet peaks (dense, no sparsity). Leads for a learner to compare against, never used as a measured ceiling.
# ---------------------------------------------------------------------------------------------------------------------
DATASHEET = {
    # name fragment: HBM GB/s, fp32 CUDA-core TFLOP/s, tf32 / bf16 / fp16 tensor TFLOP/s (dense)
    "H200": dict(hbm_gbps=4800, fp32_tflops=67, tf32_tflops=494, bf16_tflops=989, fp16_tflops=989),
    "H100": dict(hbm_gbps=3350, fp32_tflops=67, tf32_tflops=494, bf16_tflops=989, fp16_tflops=989),
    "A100": dict(hbm_gbps=2039, fp32_tflops=19.5, tf32_tflops=156, bf16_tflops=312, fp16_tflops=312),
    "L4": dict(hbm_gbps=300, fp32_tflops=30.3, tf32_tflops=60, bf16_tflops=121, fp16_tflops=121),
    "A10": dict(hbm_gbps=600, fp32_tflops=31.2, tf32_tflops=62.5, bf16_tflops=125, fp16_tflops=125),
    "RTX 4090": dict(hbm_gbps=1008, fp32_tflops=82.6, tf32_tflops=82.6, bf16_tflops=165, fp16_tflops=165),
    "RTX 3090": dict(hbm_gbps=936, fp32_tflops=35.6, tf32_tflops=35.6, bf16_tflops=71, fp16_tflops=71),
    "T4": dict(hbm_gbps=320, fp32_tflops=8.1, tf32_tflops=0, bf16_tflops=0, fp16_tflops=65),
}


def datasheet(name: str) -> dict:
    """Datasheet peaks for a GPU name ("NVIDIA H200"); empty when the card is not in the table."""
    for key in sorted(DATASHEET, key=len, reverse=True):
        if key.lower() in name.lower():
            return dict(DATASHEET[key], source=f"datasheet ({key})")
    return {}


# ---------------------------------------------------------------------------------------------------------------------
# Is there a GPU?
# ---------------------------------------------------------------------------------------------------------------------
class GPUUnavailable(RuntimeError):
    """Raised when a CUDA GPU is needed and none can be used; the message says why and what still works."""


@functools.lru_cache(maxsize=None)
def _probe() -> tuple[bool, str]:
    if os.environ.get("COURSE_FORCE_CPU") == "1":
        return False, "COURSE_FORCE_CPU=1 is set"
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - the set-up installs CuPy everywhere
        detail = " ".join(str(e).split()) or type(e).__name__
        return False, f"CuPy is not installed or failed to import ({detail}); run `make setup` (tools/setup_env.py)"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError: no driver, driver too old, no device
        msg = str(e)
        if "InsufficientDriver" in msg:
            return False, ("no usable NVIDIA driver (cudaErrorInsufficientDriver: none installed, or older than "
                           "this CuPy wheel needs)")
        if "NoDevice" in msg:
            return False, "the driver reports no CUDA device (cudaErrorNoDevice)"
        return False, f"CUDA is unavailable: {msg}"
    if n < 1:
        return False, "the driver reports no CUDA device"
    return True, ""


# Environment faults (no GPU, NVRTC missing, Triton missing) raise these exception types, whose message is one sentence
# with what to do. Uncaught, they print that sentence instead of a traceback (COURSE_TRACEBACK=1 shows it).
FAULT_TYPES = ("GPUUnavailable", "ToolMissing", "TritonMissing")


def _fault_hook(exc_type, exc, tb):
    if getattr(exc_type, "__name__", "") in FAULT_TYPES and os.environ.get("COURSE_TRACEBACK") != "1":
        sys.stderr.write(f"error: {exc}\n(run with COURSE_TRACEBACK=1 to see where it was raised)\n")
        return
    _previous_hook(exc_type, exc, tb)


_previous_hook = sys.excepthook
if sys.excepthook is sys.__excepthook__:   # leave hooks of IPython, pytest and others alone
    sys.excepthook = _fault_hook


def has_gpu() -> bool:
    """True when a CUDA GPU is usable through CuPy."""
    return _probe()[0]


def no_gpu_reason() -> str:
    """One sentence on why there is no GPU ('' when there is one)."""
    return _probe()[1]


def require_gpu(what: str = "this") -> None:
    """Raise GPUUnavailable with a clear sentence when there is no GPU."""
    ok, why = _probe()
    if not ok:
        raise GPUUnavailable(
            f"{what} needs a CUDA GPU, and none is usable: {why}. Without a GPU the course runs Triton kernels in the "
            "interpreter and shows the CUDA C compile report instead."
        )


# ---------------------------------------------------------------------------------------------------------------------
# Properties of the GPU at hand
# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class DeviceInfo:
    name: str
    arch: str
    cc_major: int
    cc_minor: int
    sms: int
    warp_size: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_blocks_per_sm: int
    regs_per_sm: int
    regs_per_block: int
    smem_per_sm: int
    smem_per_block: int
    smem_per_block_optin: int
    smem_reserved_per_block: int
    l2_bytes: int
    sm_clock_mhz: float
    mem_clock_mhz: float
    mem_bus_bits: int
    total_mem_bytes: int
    theoretical_gbps: float      # 2 (double data rate) x memory clock x bus width
    driver_cuda: str
    runtime_cuda: str
    datasheet: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return asdict(self)


def _ver(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


# DeviceInfo's fields read as they are from cudaDeviceGetAttribute: field -> the attribute's name after "cudaDevAttr"
_ATTRIBUTES = {
    "sms": "MultiProcessorCount", "warp_size": "WarpSize",
    "max_threads_per_sm": "MaxThreadsPerMultiProcessor", "max_threads_per_block": "MaxThreadsPerBlock",
    "max_blocks_per_sm": "MaxBlocksPerMultiprocessor",
    "regs_per_sm": "MaxRegistersPerMultiprocessor", "regs_per_block": "MaxRegistersPerBlock",
    "smem_per_sm": "MaxSharedMemoryPerMultiprocessor", "smem_per_block": "MaxSharedMemoryPerBlock",
    "smem_per_block_optin": "MaxSharedMemoryPerBlockOptin", "smem_reserved_per_block": "ReservedSharedMemoryPerBlock",
    "l2_bytes": "L2CacheSize",
}


@functools.lru_cache(maxsize=None)
def info(device_id: int = 0) -> DeviceInfo:
    """Properties of a GPU, read off the device (raises GPUUnavailable without one)."""
    require_gpu("reading device properties")
    import cupy
    from cupy_backends.cuda.api import runtime as rt

    def attr(a):
        return rt.deviceGetAttribute(a, device_id)

    props = rt.getDeviceProperties(device_id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    cc = cupy.cuda.Device(device_id).compute_capability  # "90"
    major, minor = int(cc[:-1]), int(cc[-1])
    mem_khz = attr(rt.cudaDevAttrMemoryClockRate)
    bus = attr(rt.cudaDevAttrGlobalMemoryBusWidth)
    counted = {f: attr(getattr(rt, "cudaDevAttr" + a)) for f, a in _ATTRIBUTES.items()}
    return DeviceInfo(
        name=name,
        arch=f"sm_{cc}",
        cc_major=major,
        cc_minor=minor,
        **counted,
        sm_clock_mhz=attr(rt.cudaDevAttrClockRate) / 1000.0,
        mem_clock_mhz=mem_khz / 1000.0,
        mem_bus_bits=bus,
        total_mem_bytes=int(props["totalGlobalMem"]),
        theoretical_gbps=2.0 * mem_khz * 1e3 * (bus / 8) / 1e9,
        driver_cuda=_ver(rt.driverGetVersion()),
        runtime_cuda=_ver(rt.runtimeGetVersion()),
        datasheet=datasheet(name),
    )


def current_arch(default: str = DEFAULT_ARCH) -> str:
    """'sm_XY' of the GPU at hand, or `default` without one."""
    return info().arch if has_gpu() else default


def gpu_slug(name: str | None = None) -> str:
    """Short folder name for results: 'NVIDIA H200' -> 'h200', 'NVIDIA GeForce RTX 4090' -> 'rtx-4090'."""
    if name is None:
        if not has_gpu():
            return "no-gpu"
        name = info().name
    s = name.lower()
    for drop in ("nvidia", "geforce", "tesla", "quadro"):
        s = s.replace(drop, " ")
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return s or "gpu"


def describe(arch: str | None = None) -> str:
    """A few lines on the GPU at hand, or on an architecture from the table when there is none."""
    if has_gpu():
        d = info()
        ds = d.datasheet.get("hbm_gbps")
        lines = [
            f"{d.name} ({d.arch}), {d.sms} SMs, {d.l2_bytes / MiB:.0f} MiB L2, "
            f"{d.smem_per_sm // KiB} KiB shared/SM, {d.regs_per_sm} registers/SM, {d.total_mem_bytes / GiB:.0f} GiB",
            f"clocks: SM {d.sm_clock_mhz:.0f} MHz, memory {d.mem_clock_mhz:.0f} MHz x {d.mem_bus_bits}-bit bus = "
            f"{d.theoretical_gbps:.0f} GB/s from the clock" + (f" (datasheet {ds} GB/s)" if ds else ""),
            f"CUDA driver {d.driver_cuda}, runtime {d.runtime_cuda}",
        ]
        return "\n".join(lines)
    a = arch_info(arch or DEFAULT_ARCH)
    return (
        f"no GPU ({no_gpu_reason()}); describing {a.arch} ({a.family}) from the table, e.g. {a.example_gpu}: "
        f"{a.example_sms} SMs, {a.example_l2_bytes / MiB:.0f} MiB L2, {a.smem_per_sm // KiB} KiB shared/SM, "
        f"{a.example_hbm_gbps:.0f} GB/s datasheet"
    )
