"""What a lab would do on a given GPU, worked out without running anything: its plan.

A plan answers, for one lab and one GPU (the one at hand, or a profile of common/gpu_specs.py: a T4, an RTX 4090,
a B200...):
  * which variants run there, and for each one that does not, the one-line reason;
  * every kernel launch of the lab's benchmark case: the kernel, the configuration it gets and where that came from
    (common.config), the grid and block, the dynamic shared memory;
  * the lab's predictions for that GPU (its models, fed by the GPU's description);
  * the benchmark sizes, scaled down where the GPU's memory cannot hold them.
`verify(plan)` then compiles every launch for the GPU's architecture (NVRTC for CUDA C, Triton ahead of time) and
checks that it fits: registers x threads within the block's register file, static + dynamic shared memory within
the opt-in limit, a grid the hardware accepts. The CPU tier runs it for every lab on every profile
(tests/test_gpu_plans.py); `python -m <lab> --plan [--gpu t4]` prints it; tools/gpu_matrix.py turns the plans into
the page "what runs on your GPU" (GPUS.md).

A lab takes part through two optional functions:
    lab.py or bench.py  launches(gpu, size=None) -> [Launch]   every kernel its benchmark case would launch on `gpu`
    bench.py  predict(gpu) -> {name: value}          its predictions for `gpu` (byte counts over bandwidth, waves...)
`gpu` is a common.device.DeviceInfo: read off the device, or a simulated profile (device.profile_info).
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import inspect
import io
import math
import re
from dataclasses import dataclass, field

from . import device
from .i18n import said, tr

GRID_X_MAX = 2**31 - 1
GRID_YZ_MAX = 65535


@dataclass
class Launch:
    """One kernel launch a lab would make."""
    variant: str                    # the Variant it belongs to ("" for a helper kernel of the lab's own)
    kernel: str                     # the kernel's name (CUDA C: the extern "C" name; Triton: the @jit function)
    impl: str                       # "cuda" or "triton"
    grid: tuple                     # blocks (CUDA C) or programs (Triton), x[, y[, z]]
    threads: int = 0                # threads per block (Triton: num_warps x 32, filled in)
    source: str = ""                # CUDA C: the .cu file
    defines: dict = field(default_factory=dict)    # CUDA C: -D NAME=VALUE; Triton: the constexpr arguments
    options: tuple = ()             # CUDA C: more NVRTC options
    arch: str = ""                  # the target it needs ("sm_90a"); default: the GPU's own architecture
    dyn_smem: int = 0               # bytes of dynamic shared memory at launch (CUDA C)
    fn: object = None               # Triton: the kernel
    signature: dict = field(default_factory=dict)  # Triton: {"x_ptr": "*fp32", "n": "i32", "BLOCK": "constexpr"}
    num_warps: int = 4              # Triton
    num_stages: int = 3             # Triton
    case: str = ""                  # the problem it serves ("n = 2^28 float32")
    config_source: str = ""         # where its configuration came from (common.config)

    def __post_init__(self):
        self.grid = tuple(int(g) for g in (self.grid if isinstance(self.grid, (tuple, list)) else (self.grid,)))
        if self.impl == "triton" and not self.threads:
            self.threads = 32 * self.num_warps

    def row(self) -> dict:
        cfg = " ".join(f"{k}={v}" for k, v in self.defines.items())
        if self.impl == "triton":
            cfg = (cfg + f" warps={self.num_warps} stages={self.num_stages}").strip()
        from .config import say_source

        return {"variant": self.variant, "kernel": self.kernel, "grid": "x".join(map(str, self.grid)),
                "threads": self.threads, "smem": self.dyn_smem or "", "configuration": cfg or "-",
                "from": say_source(self.config_source or "fixed"), "case": tr(self.case) if self.case else ""}


@dataclass
class VariantPlan:
    name: str
    impl: str
    runs: bool
    why: str = ""


@dataclass
class Plan:
    lab: str                        # "phase2_cuda.lab07_softmax"
    gpu: device.DeviceInfo
    variants: list
    launches: list
    predictions: dict
    notes: list = field(default_factory=list)   # sizes scaled to fit, what the lab does not model here
    configs: list = field(default_factory=list)  # common.config.Resolved of every kernel family the plan resolved

    @property
    def running(self) -> list[str]:
        return [v.name for v in self.variants if v.runs]

    @property
    def skipped(self) -> list[VariantPlan]:
        return [v for v in self.variants if not v.runs]

    def print(self, file=None) -> None:
        from .table import print_table

        g = self.gpu
        print("\n" + tr("plan of {lab} on {gpu}: {sms} SMs, {smem} KiB shared memory per block, {mem} GiB, {bw} GB/s",
                        lab=self.lab, gpu=g.label(), sms=g.sms, smem=g.smem_per_block_optin // device.KiB,
                        mem=f"{g.total_mem_bytes / device.GiB:.0f}", bw=f"{g.hbm_gbps:.0f}"), file=file)
        print_table([{"variant": v.name, "impl": v.impl, "runs here": tr("yes") if v.runs else tr("no"),
                      "why not": tr(v.why) if v.why else ""} for v in self.variants], title="variants", file=file)
        if self.launches:
            print_table([x.row() for x in self.launches], title="kernel launches of the benchmark case", file=file)
        if self.configs:
            from .config import say_source

            print_table([dict(r.row(), **{"from": say_source(r.source())}) for r in self.configs],
                        ["kernel family", "configuration", "from"], title="configurations", file=file)
        if self.predictions:
            print_table([{"prediction": tr(k), "value": tr(v) if isinstance(v, str) else v}
                         for k, v in self.predictions.items()],
                        title=tr("predictions for {gpu}", gpu=g.name), file=file)
        for n in self.notes:
            print(tr("note: {text}", text=tr(n)), file=file)


# ---------------------------------------------------------------------------------------------------------------------
# Building a plan
# ---------------------------------------------------------------------------------------------------------------------
def _takes(fn, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def make(lab_mod, bench_mod=None, gpu: device.DeviceInfo | None = None, size=None) -> Plan:
    """The plan of a lab on `gpu` (default: the GPU every prediction uses here, common.device.current())."""
    from . import config

    gpu = gpu or device.current()
    variants = []
    for v in list(getattr(lab_mod, "VARIANTS", [])) + list(getattr(lab_mod, "PEERS", [])):
        ok, why = v.available(gpu)
        variants.append(VariantPlan(v.name, v.impl, ok, why))
    launches: list[Launch] = []
    notes: list[str] = []
    predictions = {}
    with config.recording() as rec:
        # the launches of the benchmark's cases: bench.py's where it describes them (it owns the cases), else lab.py's
        fn = getattr(bench_mod, "launches", None) if bench_mod is not None else None
        fn = fn or getattr(lab_mod, "launches", None)
        if fn is not None:
            got = fn(gpu, size) if _takes(fn, "size") else fn(gpu)
            runs = {v.name for v in variants if v.runs}
            launches = [x for x in got if not x.variant or x.variant in runs]
        pfn = getattr(bench_mod, "predict", None) if bench_mod is not None else None
        if pfn is not None:
            predictions = dict(pfn(gpu))
    notes.extend(getattr(lab_mod, "PLAN_NOTES", []))
    name = (lab_mod.__package__ or lab_mod.__name__)
    return Plan(lab=name, gpu=gpu, variants=variants, launches=launches, predictions=predictions, notes=notes,
                configs=rec.used)


# ---------------------------------------------------------------------------------------------------------------------
# Checking a plan: every launch compiles for the GPU and fits it
# ---------------------------------------------------------------------------------------------------------------------
@dataclass
class Fit:
    launch: Launch
    arch: str
    registers: int
    static_smem: int
    spills: int
    problems: list

    def row(self) -> dict:
        return {"kernel": self.launch.kernel, "arch": self.arch, "regs": self.registers,
                "threads": self.launch.threads, "smem": self.static_smem + self.launch.dyn_smem,
                "spill B": self.spills, "fits": "yes" if not self.problems else "; ".join(self.problems)}


def target_arch(launch: Launch, gpu: device.DeviceInfo) -> str:
    """The architecture a launch compiles for: the one it needs (sm_90a), else the GPU's own."""
    return launch.arch or gpu.arch


def _grid_problems(launch: Launch) -> list[str]:
    g = launch.grid
    out = []
    if not g or any(v < 1 for v in g):
        out.append(f"grid {g}: every dimension must be at least 1")
    if g and g[0] > GRID_X_MAX:
        out.append(f"grid.x = {g[0]} is more than {GRID_X_MAX}")
    if any(v > GRID_YZ_MAX for v in g[1:]):
        out.append(f"grid {g}: y and z are at most {GRID_YZ_MAX}")
    return out


def check_launch(launch: Launch, gpu: device.DeviceInfo) -> Fit:
    """Compile one launch for the GPU's architecture and check it against the GPU's limits."""
    arch = target_arch(launch, gpu)
    problems = _grid_problems(launch)
    a = device.arch_info(arch)
    if launch.arch and device.arch_info(launch.arch).arch != device.arch_info(gpu.arch).arch:
        problems.append(f"needs {launch.arch}, the GPU is {gpu.arch}")
    if launch.threads < 1 or launch.threads > gpu.max_threads_per_block:
        problems.append(f"{launch.threads} threads per block (1 to {gpu.max_threads_per_block})")
    if launch.impl == "cuda":
        from . import cuda

        rep = cuda.compile_report(launch.source, arch, tuple(launch.options), defines=launch.defines or None)
        k = rep.kernels.get(launch.kernel)
        if k is None:
            return Fit(launch, arch, 0, 0, 0, problems + [f"{launch.kernel} is not a kernel of the compiled file"])
        regs, smem, spills = k.registers, k.smem_bytes, k.spills
    else:
        from . import triton_support as ts

        const = {k: v for k, v in launch.defines.items() if launch.signature.get(k) == "constexpr"}
        kern = ts.aot(launch.fn, dict(launch.signature), const, cc=a.cc, num_warps=launch.num_warps,
                      num_stages=launch.num_stages)
        smem = int(kern.metadata.shared)                     # Triton's shared memory is all dynamic
        res = ts.cubin_resources(kern.asm.get("cubin", b"")).get(kern.metadata.name, {})
        regs, spills = int(res.get("REG", 0)), 0
    total = smem + launch.dyn_smem
    if total > gpu.smem_per_block_optin:
        problems.append(f"{total} B of shared memory per block ({smem} B the kernel's + {launch.dyn_smem} B at launch) "
                        f"is more than the {gpu.smem_per_block_optin} B a block may have")
    if regs and launch.threads and _regs_needed(regs, launch.threads, a) > gpu.regs_per_block:
        problems.append(f"{regs} registers x {launch.threads} threads is more than the {gpu.regs_per_block} "
                        "registers a block may hold")
    return Fit(launch, arch, regs, smem, spills, problems)


def _regs_needed(regs: int, threads: int, a) -> int:
    """Registers a block of `threads` threads takes, as the hardware counts them (common.occupancy's rule)."""
    per_warp = -(-regs * a.warp_size // a.reg_alloc_unit) * a.reg_alloc_unit
    warps = -(-threads // a.warp_size)
    return per_warp * warps


def verify(plan: Plan) -> list[Fit]:
    """Every launch of the plan compiled and checked (once per distinct kernel and configuration)."""
    seen, out = set(), []
    for x in plan.launches:
        key = (x.impl, x.source, x.kernel, tuple(sorted(x.defines.items())), x.options, x.arch, x.threads,
               x.dyn_smem, x.num_warps, x.num_stages, x.grid)
        if key in seen:
            continue
        seen.add(key)
        out.append(check_launch(x, plan.gpu))
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Sizes that fit the GPU's memory
# ---------------------------------------------------------------------------------------------------------------------
MEMORY_SHARE = 0.6   # a benchmark may use this share of the GPU's memory (the rest: the CUDA context, torch, caches)


def fit(size, nbytes, gpu: device.DeviceInfo | None = None, *, shrink=None, share: float = MEMORY_SHARE,
        what: str = "size"):
    """(size, note): `size` when `nbytes(size)` fits `share` of the GPU's memory, else the largest size reached by
    `shrink` (default: halve an int, or every entry of a tuple's last... as the caller says) that fits, with a
    one-line note saying so ('' when nothing changed). nbytes(size) -> bytes the benchmark holds at once."""
    gpu = gpu or device.current()
    budget = share * gpu.total_mem_bytes
    if nbytes(size) <= budget:
        return size, ""
    shrink = shrink or (lambda s: s // 2)
    first = size
    while nbytes(size) > budget:
        smaller = shrink(size)
        if smaller == size or not smaller:
            break
        size = smaller
    return size, said("{what} {first} needs {need:.1f} GiB, more than {share:.0%} of this GPU's {mem:.0f} GiB: scaled "
                      "down to {size} ({now:.1f} GiB)", what=tr(what), first=fmt_size(first),
                      need=nbytes(first) / device.GiB, share=share, mem=gpu.total_mem_bytes / device.GiB,
                      size=fmt_size(size), now=nbytes(size) / device.GiB)


def fmt_size(size) -> str:
    if isinstance(size, int) and size > 0 and size & (size - 1) == 0 and size >= 1024:
        return f"2^{int(math.log2(size))}"
    if isinstance(size, (tuple, list)):
        return "x".join(str(s) for s in size)
    return str(size)


# ---------------------------------------------------------------------------------------------------------------------
# Which variants launch a kernel: the names a compile report shows beside each kernel (common.table.naming)
# ---------------------------------------------------------------------------------------------------------------------
_RUNG = re.compile(r"^(.*?_\d{2})[a-z]?(?:_|$)")   # softmax_05_block_row_f32_scalar -> softmax_05


def kernel_users(lab: str, arch: str = device.DEFAULT_ARCH, kernels: list[str] | None = None) -> dict:
    """{kernel: [variant, ...]}: the variants whose launches (the lab's plan on the GPU of `arch`,
    make()) use each kernel, in the lab's order. A kernel of `kernels` the plan does not launch (a fallback
    such as *_scalar, a dtype the benchmark case does not take) takes the variants of the plan's kernels of its rung
    (softmax_05_block_row_f32_scalar: those of softmax_05_*); one no variant names (a helper) is left out."""
    named, order = _plan_users(lab, arch)
    out = {k: list(v) for k, v in named.items()}
    for k in kernels or ():
        m = _RUNG.match(k)
        if k in out or not m:
            continue
        found = {v for other, vs in named.items() if (_RUNG.match(other) or [None, None])[1] == m.group(1)
                 for v in vs}
        if found:
            out[k] = sorted(found, key=lambda n: order.index(n) if n in order else len(order))
    return out


@functools.lru_cache(maxsize=None)
def _lab_plan(lab: str, arch: str) -> Plan | None:
    """The lab's plan on the GPU of `arch` (the one at hand where it is of that architecture, else the architecture's
    example profile); None where the lab has no plan or it cannot be made here (the names are a help, never a reason
    for a compile report to fail)."""
    try:
        lab_mod = importlib.import_module(lab + ".lab")
        bench = importlib.import_module(lab + ".bench") if importlib.util.find_spec(lab + ".bench") else None
        gpu = device.current(arch)
        if gpu.arch != device.arch_info(arch).arch:
            gpu = device.profile_info(device.arch_info(arch).example)
        with contextlib.redirect_stdout(io.StringIO()):
            return make(lab_mod, bench, gpu)
    except Exception:  # noqa: BLE001 - any failure only means no names
        return None


def build_users(lab: str, arch: str, kernel: str, defines: dict | None = None, **more) -> list[str]:
    """The variants (in the lab's order) whose launches in the lab's plan for `arch` run `kernel` built as a lab's own
    compile table shows it: the same -D defines (CUDA C) or constexprs (Triton), compared whole, and where given the
    same `more` fields of the Launch (num_warps, num_stages, options, signature). [] where no variant launches that
    build (a study point: a sweep point, a setting compiled to compare) or the plan cannot be made here."""
    p = _lab_plan(lab, arch)
    if p is None:
        return []
    want = dict(defines or {})
    found = {x.variant for x in p.launches if x.variant and x.kernel == kernel and dict(x.defines) == want
             and all(getattr(x, k) == (tuple(v) if k == "options" else v) for k, v in more.items())}
    return [v.name for v in p.variants if v.name in found]


@functools.lru_cache(maxsize=None)
def _plan_users(lab: str, arch: str) -> tuple[dict, list]:
    """({kernel: (variant, ...)}, [variant names in order]) of the lab's plan for `arch`; empty where the lab has
    no plan (or it cannot be made here: the names are a help, never a reason for a compile report to fail)."""
    p = _lab_plan(lab, arch)
    if p is None:
        return {}, []
    order = [v.name for v in p.variants]
    out: dict[str, list[str]] = {}
    for x in p.launches:
        if x.variant and x.variant not in out.setdefault(x.kernel, []):
            out[x.kernel].append(x.variant)
    return ({k: tuple(sorted(v, key=lambda n: order.index(n) if n in order else len(order)))
             for k, v in out.items() if v}, order)
