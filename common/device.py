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
import os
import re
import sys
from dataclasses import asdict, dataclass, field, replace

from . import gpu_specs as _specs

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


# ---------------------------------------------------------------------------------------------------------------------
# Architecture limits: common/gpu_specs.py's ARCH_LIMITS (the CUDA programming guide's "Technical Specifications per
# Compute Capability", cited there), plus the occupancy calculator's allocation rules. One entry per architecture this
# course compiles for.
# ---------------------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Arch:
    arch: str                     # "sm_90"
    family: str                   # "Hopper"
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
    fp32_lanes_per_sm: int = 128   # FP32 FMA units per SM: what it issues as FFMA per clock
    example: str = ""              # a profile of common/gpu_specs.py with this architecture (the CPU-only default)
    source: str = ""

    @property
    def cc(self) -> int:
        return int(self.arch.split("_")[1].rstrip("a"))

    @property
    def max_warps_per_sm(self) -> int:
        return self.max_threads_per_sm // self.warp_size


# The profile that stands for an architecture when there is no GPU and none is chosen (--gpu): a GPU learners have.
EXAMPLE_PROFILE = {"sm_75": "t4", "sm_80": "a100-sxm4-80gb", "sm_86": "rtx-3060", "sm_89": "rtx-4090",
                   "sm_90": "h100-sxm", "sm_100": "b200", "sm_103": "b200", "sm_120": "rtx-5090"}
# FP32 lanes per SM (the programming guide's arithmetic-instruction throughput table: 32-bit floating-point add,
# multiply, multiply-add results per clock per SM)
_FP32_LANES = {"sm_75": 64, "sm_80": 64}


def _arch_entry(key: str, lim: dict) -> Arch:
    fields = {f for f in Arch.__dataclass_fields__}
    kw = {k: v for k, v in lim.items() if k in fields}
    kw["smem_carveouts_kib"] = tuple(kw.get("smem_carveouts_kib", ()))
    return Arch(arch=key, smem_alloc_unit=256 if key == "sm_75" else 128,
                fp32_lanes_per_sm=_FP32_LANES.get(key, 128), example=EXAMPLE_PROFILE.get(key, ""), **kw)


ARCHS: dict[str, Arch] = {k: _arch_entry(k, v) for k, v in _specs.ARCH_LIMITS.items()}
DEFAULT_ARCH = "sm_90"
# the architecture-specific targets ("a" suffix) the course compiles for: wgmma, setmaxnreg and TMA multicast
ARCH_SPECIFIC = ("sm_90a",)


def arch_info(arch: str) -> Arch:
    """Limits of an architecture, "sm_90" or "90" or "sm_90a"."""
    key = arch if arch.startswith("sm_") else f"sm_{arch}"
    key = key[:-1] if key.endswith("a") and key[:-1] in ARCHS else key
    if key not in ARCHS:
        raise ValueError(f"arch: expected one of {', '.join(sorted(ARCHS, key=_arch_order))}, got {arch!r}")
    return ARCHS[key]


def _arch_order(a: str) -> int:
    return int(a.split("_")[1].rstrip("a"))


# ---------------------------------------------------------------------------------------------------------------------
# Datasheet peaks (dense, no sparsity) of the GPUs in common/gpu_specs.py. Leads for a learner to compare against,
# never used as a measured ceiling.
# ---------------------------------------------------------------------------------------------------------------------
PEAK_KEYS = ("hbm_gbps", "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops")


def _profile_for_name(name: str) -> str | None:
    """The profile slug whose reported name is `name` (case and spacing aside), else None."""
    key = " ".join(name.lower().split())
    for slug, p in _specs.PROFILES.items():
        if " ".join(p["name"].lower().split()) == key:
            return slug
    return None


def datasheet(name: str) -> dict:
    """Datasheet peaks for a GPU name as the driver reports it ("NVIDIA H200"); empty when the card is not in the
    table (common/gpu_specs.py). A figure the GPU has no unit for (bf16 on a T4) is None."""
    slug = _profile_for_name(name)
    if slug is None:
        return {}
    p = _specs.PROFILES[slug]
    return dict({k: p.get(k) for k in PEAK_KEYS}, source=f"datasheet ({p['name']}; common/gpu_specs.py)",
                profile=slug)


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
            return False, ("no usable NVIDIA driver: none is installed, or it is older than this CuPy wheel needs "
                           "(cudaErrorInsufficientDriver)")
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
        from .i18n import tr

        sys.stderr.write(tr("error: {what}", what=tr(str(exc))) + "\n"
                         + tr("(run with COURSE_TRACEBACK=1 to see where it was raised)") + "\n")
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
        from .i18n import tr

        raise GPUUnavailable(tr("{what} needs a CUDA GPU, and none is usable: {why}. Without a GPU the course runs "
                                "Triton kernels in the interpreter and shows the CUDA C compile report instead.",
                                what=what, why=tr(why)))


# ---------------------------------------------------------------------------------------------------------------------
# Properties of the GPU at hand
# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class DeviceInfo:
    """One GPU: read off the device (info()), or a profile of the table (profile_info(), simulated=True)."""
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
    simulated: bool = False      # a profile of common/gpu_specs.py, not a device read here

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def slug(self) -> str:
        """The results folder of this GPU: results/<slug>/."""
        return gpu_slug(self.name)

    @property
    def cc(self) -> int:
        return self.cc_major * 10 + self.cc_minor

    @property
    def limits(self) -> Arch:
        """The architecture's limits (the ARCHS table), for the occupancy calculator."""
        return arch_info(self.arch)

    def peak(self, key: str) -> float | None:
        """A datasheet figure: peak('hbm_gbps'), peak('bf16_tflops'); None where the table has none."""
        return self.datasheet.get(key)

    @property
    def hbm_gbps(self) -> float:
        """The bandwidth a prediction divides by when nothing was measured: the datasheet figure, else the one the
        memory clock and bus width give."""
        return float(self.datasheet.get("hbm_gbps") or self.theoretical_gbps)

    def label(self) -> str:
        return f"{self.name} ({self.arch})" + (" [simulated]" if self.simulated else "")


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
    d = DeviceInfo(
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
    if d.arch not in ARCHS:
        register_arch(d)
    return d


def register_arch(d: DeviceInfo) -> Arch:
    """An architecture the course has no entry for (a GPU newer than the table, or a Jetson): its limits as the device
    reports them, added to ARCHS for this process, so the occupancy calculator, the compile reports and every
    "sm_80+" requirement work on it. Said once on stderr: the labs run what the device supports."""
    cc = d.cc_major * 10 + d.cc_minor
    known = [a for a in ARCHS.values() if a.cc <= cc]
    base = max(known, key=lambda a: a.cc) if known else ARCHS[DEFAULT_ARCH]
    a = replace(base, arch=d.arch, family=f"{base.family} or later (sm_{cc} is not in the course's table)",
                max_threads_per_sm=d.max_threads_per_sm, max_blocks_per_sm=d.max_blocks_per_sm,
                regs_per_sm=d.regs_per_sm, max_regs_per_block=d.regs_per_block, smem_per_sm=d.smem_per_sm,
                smem_per_block_optin=d.smem_per_block_optin, smem_reserved_per_block=d.smem_reserved_per_block,
                smem_carveouts_kib=tuple(k for k in base.smem_carveouts_kib if k * KiB <= d.smem_per_sm),
                example="", source="read off the device")
    ARCHS[d.arch] = a
    from .i18n import tr

    print(tr("note: {name} is {arch}, which the course's table (common/gpu_specs.py) does not describe; using the "
             "limits the device reports, and the rules of {base}. Every kernel that needs no more than this GPU offers "
             "runs; the plan (--plan) says which.", name=d.name, arch=d.arch, base=base.arch), file=sys.stderr)
    return a


def profile_info(slug: str) -> DeviceInfo:
    """A GPU of the table (common/gpu_specs.py) as if read off the device: what a learner with that card would see.
    `slug` is a profile key ("t4", "h100-sxm") or a unique part of one ("4090")."""
    slug = resolve_profile(slug)
    p = _specs.PROFILES[slug]
    a = arch_info(p["arch"])
    theo = 2.0 * p["mem_clock_mhz"] * 1e6 * (p["mem_bus_bits"] / 8) / 1e9
    return DeviceInfo(
        name=p["name"], arch=a.arch, cc_major=a.cc // 10, cc_minor=a.cc % 10, sms=p["sms"], warp_size=a.warp_size,
        max_threads_per_sm=a.max_threads_per_sm, max_threads_per_block=a.max_threads_per_block,
        max_blocks_per_sm=a.max_blocks_per_sm, regs_per_sm=a.regs_per_sm, regs_per_block=a.max_regs_per_block,
        smem_per_sm=a.smem_per_sm, smem_per_block=a.smem_per_block_default, smem_per_block_optin=a.smem_per_block_optin,
        smem_reserved_per_block=a.smem_reserved_per_block, l2_bytes=p["l2_bytes"], sm_clock_mhz=p["sm_clock_mhz"],
        mem_clock_mhz=p["mem_clock_mhz"], mem_bus_bits=p["mem_bus_bits"], total_mem_bytes=p["total_mem_bytes"],
        theoretical_gbps=theo, driver_cuda="-", runtime_cuda="-", datasheet=datasheet(p["name"]), simulated=True)


def profiles() -> list[str]:
    """Every profile key of the table, oldest architecture first."""
    return sorted(_specs.PROFILES, key=lambda s: (_arch_order(_specs.PROFILES[s]["arch"]), s))


def resolve_profile(name: str) -> str:
    """A profile key from a key, a unique part of one or of a GPU's name ("4090", "a100"); ValueError else."""
    key = name.strip().lower()
    if key in _specs.PROFILES:
        return key
    hits = [s for s, p in _specs.PROFILES.items() if key and (key in s or key in p["name"].lower())]
    if len(hits) == 1:
        return hits[0]
    what = f"matches {', '.join(sorted(hits))}" if hits else "matches no GPU of the table"
    raise ValueError(f"GPU {name!r} {what}; the table has {', '.join(profiles())}")


# The GPU a machine without one describes: None (the example of --arch), or a profile chosen by --gpu / COURSE_GPU.
_SIMULATED: str | None = None


def simulate(slug: str | None) -> None:
    """Describe the GPU of profile `slug` where there is no GPU (None: back to the architecture's example). Has no
    effect on a machine with a GPU, whose own figures always win."""
    global _SIMULATED
    _SIMULATED = resolve_profile(slug) if slug else None


def simulated_slug() -> str | None:
    return _SIMULATED or (resolve_profile(os.environ["COURSE_GPU"]) if os.environ.get("COURSE_GPU") else None)


def current(arch: str | None = None) -> DeviceInfo:
    """The GPU every prediction, model, ceiling and plot takes its numbers from: the one at hand; without one, the
    profile chosen with --gpu (or COURSE_GPU), else the example profile of `arch` (default sm_90)."""
    if has_gpu():
        return info()
    slug = simulated_slug()
    if slug is None:
        a = arch_info(arch or DEFAULT_ARCH)
        slug = a.example
    return profile_info(slug)


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
    """A few lines on the GPU at hand, or on the profile that stands for it when there is none."""
    from .i18n import tr

    d = current(arch)
    ds = d.datasheet.get("hbm_gbps")
    head = f"{d.name} ({d.arch})" if not d.simulated else \
        tr("no GPU - {why}. Describing {name} ({arch}, {family}) from the table", why=tr(no_gpu_reason()),
           name=d.name, arch=d.arch, family=arch_info(d.arch).family)
    lines = [
        tr("{head}, {sms} SMs, {l2} MiB L2, {smem} KiB shared/SM, {regs} registers/SM, {mem} GiB", head=head,
           sms=d.sms, l2=f"{d.l2_bytes / MiB:.0f}", smem=d.smem_per_sm // KiB, regs=d.regs_per_sm,
           mem=f"{d.total_mem_bytes / GiB:.0f}"),
        tr("clocks: SM {sm} MHz, memory {mem} MHz x {bus}-bit bus = {gbps} GB/s from the clock",
           sm=f"{d.sm_clock_mhz:.0f}", mem=f"{d.mem_clock_mhz:.0f}", bus=d.mem_bus_bits,
           gbps=f"{d.theoretical_gbps:.0f}")
        + (tr(" (datasheet {gbps} GB/s)", gbps=ds) if ds else ""),
    ]
    if not d.simulated:
        lines.append(tr("CUDA driver {driver}, runtime {runtime}", driver=d.driver_cuda, runtime=d.runtime_cuda))
    elif d.arch != arch_info(arch or d.arch).arch:
        lines.append(tr("(--arch {arch} has no profile of its own in the table)", arch=arch))
    return "\n".join(lines)
