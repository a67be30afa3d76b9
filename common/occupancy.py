"""Theoretical occupancy: how many blocks of a kernel one SM holds at once, and which resource runs out first.

The rules are those of NVIDIA's occupancy calculator (the CUDA toolkit's `cuda_occupancy.h`, which the runtime's
`cudaOccupancyMaxActiveBlocksPerMultiprocessor` follows), for sm_75, sm_80, sm_86, sm_89 and sm_90. A block is
resident on an SM only when all of its resources are; the SM holds as many blocks as the scarcest resource allows:

  warps      max warps per SM // ceil(threads per block / 32)          (a block of 33 threads costs two warps)
  blocks     the architecture's resident-block limit                    (16 on sm_75/sm_86, 24 on sm_89, 32 else)
  registers  registers are handed to *warps*, in chunks of 256 (8 per thread): a warp of a kernel using r registers
             per thread holds ceil(32 r / 256) * 256 of them. The register file is split over the SM's four
             sub-partitions (one warp scheduler and 16K registers each), and a warp lives in one of them, so an SM
             holds 4 * (16384 // registers per warp) warps. A block must also fit the per-block register limit, with
             its warp count rounded up to a multiple of 4 (the hardware checks as if every sub-partition allocated
             at once): 255 registers x 1024 threads can never launch.
  shared     a block holds static + dynamic + reserved shared memory (the runtime reserves 1 KiB per block from sm_80
             on), rounded up to the allocation unit (128 B; 256 B on sm_75). Dynamic shared memory above the
             kernel's limit (48 KiB - static, unless raised with cudaFuncAttributeMaxDynamicSharedMemorySize, up to
             the opt-in maximum) cannot launch at all. The SM's shared memory is a carve-out of its unified L1/shared
             array: with no preference the calculator (and the driver) count the largest carve-out; with a preferred
             carve-out in percent, the smallest configuration at or above it - unless one block needs more.
  barriers   (sm_90) 64 hardware barriers per SM: blocks <= 64 // named barriers per block (one for __syncthreads).

    >>> occupancy("sm_90", threads_per_block=256, regs_per_thread=33).explain()

Every limit is reported (`Occupancy.limits`), the smallest is the answer, and every resource that reaches it is a
limiter (`Occupancy.limiters`, strongest first: the one to change first is `limiter`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from . import device
from .i18n import said
from .device import KiB, Arch

SUB_PARTITIONS = 4          # warp schedulers per SM (each with a quarter of the register file), sm_75 .. sm_90
BARRIERS_PER_BLOCK_SLOT = 2  # sm_90: hardware barriers per resident-block slot (2 x 32 = 64 per SM)
LIMIT_ORDER = ("registers", "shared memory", "warps", "blocks", "barriers")


def _arch(arch) -> Arch:
    return arch if isinstance(arch, Arch) else device.arch_info(arch)


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _blocks(n: int) -> str:
    from .i18n import plural

    return plural(n, "{n} block", "{n} blocks")


@dataclass(frozen=True)
class Occupancy:
    arch: str
    threads_per_block: int
    regs_per_thread: int
    smem_static: int
    smem_dynamic: int
    blocks_per_sm: int
    limits: dict                 # blocks per SM each resource allows
    limiters: tuple              # the resources whose limit equals the answer
    max_warps_per_sm: int
    regs_per_warp: int           # allocated (rounded up to the 256-register unit)
    smem_per_block: int          # allocated: static + dynamic + reserved, rounded up to the allocation unit
    smem_per_sm: int             # the shared-memory carve-out the count used
    max_dynamic_smem: int        # the kernel's dynamic shared-memory limit the count assumed
    why_zero: str = ""           # when no block fits: why
    barriers: int = 1            # named barriers per block
    notes: tuple = field(default_factory=tuple)

    @property
    def warps_per_block(self) -> int:
        return -(-self.threads_per_block // 32)

    @property
    def active_warps(self) -> int:
        return self.blocks_per_sm * self.warps_per_block

    @property
    def active_threads(self) -> int:
        return self.blocks_per_sm * self.threads_per_block

    @property
    def occupancy(self) -> float:
        """Resident warps / the SM's maximum warps (0..1)."""
        return self.active_warps / self.max_warps_per_sm

    @property
    def limiter(self) -> str:
        return self.limiters[0] if self.limiters else ""

    def row(self) -> dict:
        return {"arch": self.arch, "threads": self.threads_per_block, "regs": self.regs_per_thread,
                "smem": self.smem_static + self.smem_dynamic, "blocks/SM": self.blocks_per_sm,
                "warps/SM": self.active_warps, "occupancy": round(self.occupancy, 4),
                "limiter": "+".join(self.limiters) if self.blocks_per_sm else f"none fits: {self.why_zero}"}

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(occupancy=self.occupancy, active_warps=self.active_warps, limiter=self.limiter)
        return d

    def explain(self) -> str:
        """The arithmetic, one resource per line (in the chosen language: common.i18n)."""
        from .i18n import tr

        a = _arch(self.arch)
        wpb = self.warps_per_block
        lines = [tr("{arch}: {threads} threads/block ({warps} warps), {regs} registers/thread, {static} B static + "
                    "{dynamic} B dynamic shared memory", arch=self.arch, threads=self.threads_per_block, warps=wpb,
                    regs=self.regs_per_thread, static=self.smem_static, dynamic=self.smem_dynamic)]
        lim = self.limits
        lines.append(tr("  warps      {max} warps/SM // {wpb} = {blocks}", max=a.max_warps_per_sm, wpb=wpb,
                        blocks=_blocks(lim["warps"])))
        lines.append(tr("  blocks     resident-block limit = {blocks}", blocks=_blocks(lim["blocks"])))
        if self.regs_per_thread:
            per_sp = a.regs_per_sm // SUB_PARTITIONS
            lines.append(tr("  registers  {regs} x 32 = {raw} -> {per_warp} per warp (unit {unit}); {sp} x ({per_sp} "
                            "// {per_warp}) = {warps} warps // {wpb} = {blocks}", regs=self.regs_per_thread,
                            raw=self.regs_per_thread * 32, per_warp=self.regs_per_warp, unit=a.reg_alloc_unit,
                            sp=SUB_PARTITIONS, per_sp=per_sp, warps=SUB_PARTITIONS * (per_sp // self.regs_per_warp),
                            wpb=wpb, blocks=_blocks(lim["registers"])))
        else:
            lines.append(tr("  registers  none used: no limit"))
        if self.smem_per_block:
            lines.append(tr("  shared     {static} + {dynamic} + {reserved} reserved -> {block} B/block (unit {unit}); "
                            "{sm} B/SM // {block} = {blocks}", static=self.smem_static, dynamic=self.smem_dynamic,
                            reserved=a.smem_reserved_per_block, block=self.smem_per_block, unit=a.smem_alloc_unit,
                            sm=self.smem_per_sm, blocks=_blocks(lim["shared memory"])))
        else:
            lines.append(tr("  shared     none used: no limit"))
        if "barriers" in lim and lim["barriers"] < 10**6:
            lines.append(tr("  barriers   {sm} per SM // {block} per block = {blocks}",
                            sm=BARRIERS_PER_BLOCK_SLOT * a.max_blocks_per_sm, block=self.barriers,
                            blocks=_blocks(lim["barriers"])))
        if self.blocks_per_sm:
            lines.append(tr("  => {blocks} x {wpb} warps = {active}/{max} warps = {occ:.1%} occupancy, limited by "
                            "{limiters}", blocks=_blocks(self.blocks_per_sm), wpb=wpb, active=self.active_warps,
                            max=self.max_warps_per_sm, occ=self.occupancy,
                            limiters=tr(" and ").join(tr(x) for x in self.limiters)))
        else:
            lines.append(tr("  => no block fits: {why}", why=tr(self.why_zero)))
        lines += [tr("  note: {text}", text=tr(n)) for n in self.notes]
        return "\n".join(lines)


def carveout_bytes(arch, preferred_pct: int | None = None, needed: int = 0) -> int:
    """The shared-memory size of an SM's L1/shared split.

    preferred_pct None: no preference, the largest carve-out is counted (what the driver allows a kernel to get).
    Else the preference (percent of the maximum) is rounded up to the next supported configuration; when one block
    needs more than that (`needed` bytes), the smallest configuration that holds one block is used instead.
    """
    a = _arch(arch)
    configs = sorted(k * KiB for k in a.smem_carveouts_kib)

    def align_up(nbytes: int) -> int:
        for c in configs:
            if (nbytes <= c and c > 0) or (nbytes == 0 and c == 0):
                return c
        raise ValueError(f"{a.arch}: {nbytes} B of shared memory is more than the largest carve-out "
                         f"({configs[-1]} B)")

    if preferred_pct is None or preferred_pct < 0:
        pref = align_up(a.smem_per_sm)
    else:
        if preferred_pct > 100:
            raise ValueError(f"preferred_pct: expected -1..100, got {preferred_pct}")
        pref = align_up(preferred_pct * a.smem_per_sm // 100)
    if pref >= needed:
        return pref
    return align_up(needed)


def occupancy(arch, threads_per_block: int, regs_per_thread: int, smem_static: int = 0, smem_dynamic: int = 0, *,
              max_dynamic_smem: int | None = None, carveout_pct: int | None = None, barriers: int = 1) -> Occupancy:
    """Resident blocks per SM for a kernel launch, with every limit and the limiting factor(s).

    arch: "sm_90" (or an Arch); regs_per_thread: what ptxas reports (RawKernel.num_regs); smem_static: the kernel's
    static __shared__ bytes (RawKernel.shared_size_bytes); smem_dynamic: the launch's dynamic shared memory;
    max_dynamic_smem: the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize (None: the default, 48 KiB - static);
    carveout_pct: cudaFuncAttributePreferredSharedMemoryCarveout (None: no preference); barriers: named barriers
    per block (ptxas "used N barriers"; 1 for __syncthreads; counted on sm_90, as the calculator does).
    """
    a = _arch(arch)
    for name, v in (("threads_per_block", threads_per_block), ("regs_per_thread", regs_per_thread),
                    ("smem_static", smem_static), ("smem_dynamic", smem_dynamic), ("barriers", barriers)):
        if not isinstance(v, (int,)) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name}: expected a non-negative integer, got {v!r}")
    if threads_per_block == 0:
        raise ValueError("threads_per_block: a block has at least one thread")
    if smem_static > a.smem_per_block_default:
        raise ValueError(f"smem_static: {smem_static} B of static shared memory is more than any kernel can declare "
                         f"({a.smem_per_block_default} B); larger tiles must use dynamic shared memory")
    default_dyn = a.smem_per_block_default - smem_static
    optin_dyn = a.smem_per_block_optin - smem_static
    if max_dynamic_smem is None:
        max_dynamic_smem = default_dyn
    elif max_dynamic_smem < 0 or max_dynamic_smem > optin_dyn:
        raise ValueError(f"max_dynamic_smem: the kernel's dynamic shared-memory limit can be raised to at most "
                         f"{optin_dyn} B on {a.arch} (opt-in {a.smem_per_block_optin} B - {smem_static} B static), "
                         f"got {max_dynamic_smem}")

    warps_per_block = -(-threads_per_block // a.warp_size)
    notes: list[str] = []
    why = ""
    limits: dict[str, int] = {}
    big = 10**9

    # warps
    if threads_per_block > a.max_threads_per_block:
        limits["warps"] = 0
        why = said("{threads} threads is more than the {max} a block may have", threads=threads_per_block,
                   max=a.max_threads_per_block)
    else:
        limits["warps"] = a.max_warps_per_sm // warps_per_block
    # blocks
    limits["blocks"] = a.max_blocks_per_sm
    # registers
    regs_per_warp = _round_up(regs_per_thread * a.warp_size, a.reg_alloc_unit)
    if regs_per_thread > a.max_regs_per_thread:
        limits["registers"] = 0
        why = why or said("{regs} registers/thread is more than the {max} ptxas can assign", regs=regs_per_thread,
                          max=a.max_regs_per_thread)
    elif regs_per_warp == 0:
        limits["registers"] = big
    else:
        assumed = regs_per_warp * _round_up(warps_per_block, a.warp_alloc_granularity)
        allocated = regs_per_warp * warps_per_block
        if assumed > a.max_regs_per_block or allocated > a.max_regs_per_block:
            limits["registers"] = 0
            why = why or said("one block needs {assumed} registers ({per_warp}/warp x {warps} warps, counted in groups "
                              "of {group} warps), more than the {max} a block may hold", assumed=assumed,
                              per_warp=regs_per_warp, warps=warps_per_block, group=a.warp_alloc_granularity,
                              max=a.max_regs_per_block)
        else:
            warps_per_sp = (a.regs_per_sm // SUB_PARTITIONS) // regs_per_warp
            limits["registers"] = (warps_per_sp * SUB_PARTITIONS) // warps_per_block
            if limits["registers"] == 0:
                why = why or said("the register file of the SM cannot hold one block")
    # shared memory
    smem_block = _round_up(smem_static + smem_dynamic + a.smem_reserved_per_block, a.smem_alloc_unit)
    per_block_limit = (a.smem_per_block_optin if smem_static + a.smem_reserved_per_block + max_dynamic_smem >
                       a.smem_per_block_default else a.smem_per_block_default) + a.smem_reserved_per_block
    if smem_dynamic > max_dynamic_smem:
        limits["shared memory"] = 0
        smem_sm = 0
        why = why or said("{dyn} B of dynamic shared memory is more than the kernel's limit of {limit} B: raise it "
                          "first (kernel.max_dynamic_shared_size_bytes = n, up to {optin} B)", dyn=smem_dynamic,
                          limit=max_dynamic_smem, optin=optin_dyn)
    elif smem_block > per_block_limit:
        limits["shared memory"] = 0
        smem_sm = 0
        why = why or said("one block needs {block} B of shared memory, more than the {limit} B allowed",
                          block=smem_block, limit=per_block_limit)
    else:
        smem_sm = carveout_bytes(a, carveout_pct, smem_block)
        limits["shared memory"] = smem_sm // smem_block if smem_block else big
        if carveout_pct is not None and carveout_pct >= 0 and smem_sm > carveout_bytes(a, carveout_pct):
            notes.append(said("one block needs more than the preferred carve-out: the SM is given {smem} B",
                              smem=smem_sm))
    # barriers (the calculator counts them from sm_90 on)
    if a.cc >= 90 and barriers > 0:
        limits["barriers"] = (BARRIERS_PER_BLOCK_SLOT * a.max_blocks_per_sm) // barriers
    blocks = min(limits.values())
    if blocks == 0 and not why:
        why = said("a resource limit is zero")
    limiters = tuple(k for k in LIMIT_ORDER if k in limits and limits[k] == blocks) if blocks else ()
    if a.smem_reserved_per_block and smem_block and blocks and limits["shared memory"] == blocks:
        without = smem_sm // _round_up(smem_static + smem_dynamic, a.smem_alloc_unit) \
            if smem_static + smem_dynamic else big
        if without > blocks:
            notes.append(said("the {reserved} B the runtime reserves per block costs a block: {without} would fit "
                              "without it", reserved=a.smem_reserved_per_block, without=without))
    return Occupancy(arch=a.arch, threads_per_block=threads_per_block, regs_per_thread=regs_per_thread,
                     smem_static=smem_static, smem_dynamic=smem_dynamic, blocks_per_sm=blocks, limits=limits,
                     limiters=limiters, max_warps_per_sm=a.max_warps_per_sm, regs_per_warp=regs_per_warp,
                     smem_per_block=smem_block, smem_per_sm=smem_sm, max_dynamic_smem=max_dynamic_smem,
                     why_zero=why if blocks == 0 else "", barriers=barriers, notes=tuple(notes))


# ---------------------------------------------------------------------------------------------------------------------
# Inverse questions
# ---------------------------------------------------------------------------------------------------------------------
def max_regs_for_blocks(arch, threads_per_block: int, blocks: int) -> int:
    """The most registers per thread that still let `blocks` blocks of this size be resident (0 if none does)."""
    best = 0
    for r in range(1, _arch(arch).max_regs_per_thread + 1):
        if occupancy(arch, threads_per_block, r).limits["registers"] >= blocks:
            best = r
    return best


def dynamic_smem_for_blocks(arch, blocks: int, smem_static: int = 0) -> int:
    """The largest dynamic shared memory per block with which `blocks` blocks still fit on one SM.

    Used to *force* an occupancy: a kernel that needs no shared memory launched with this much dynamic shared memory
    has at most `blocks` blocks per SM (one more would not fit: see the check in the lab that uses it).
    """
    a = _arch(arch)
    if blocks < 1:
        raise ValueError(f"blocks: expected >= 1, got {blocks}")
    per_block = (a.smem_per_sm // blocks) // a.smem_alloc_unit * a.smem_alloc_unit
    dyn = min(per_block - a.smem_reserved_per_block, a.smem_per_block_optin) - smem_static
    if dyn < 0:
        raise ValueError(f"{blocks} blocks of {smem_static} B static shared memory do not fit on one {a.arch} SM")
    return dyn


# ---------------------------------------------------------------------------------------------------------------------
# Recorded device answers (tests/data/occupancy_sm_XX.json)
# ---------------------------------------------------------------------------------------------------------------------
PROP_KEYS = {  # fixture "props" key -> Arch field
    "max_threads_per_sm": "max_threads_per_sm", "max_blocks_per_sm": "max_blocks_per_sm",
    "regs_per_sm": "regs_per_sm", "regs_per_block": "max_regs_per_block", "smem_per_sm": "smem_per_sm",
    "smem_per_block": "smem_per_block_default", "smem_per_block_optin": "smem_per_block_optin",
    "smem_reserved_per_block": "smem_reserved_per_block", "max_threads_per_block": "max_threads_per_block",
    "warp_size": "warp_size",
}


def predict_case(arch, case: dict) -> int:
    """The calculator's blocks/SM for one recorded case."""
    return occupancy(arch, case["threads"], case["regs"], case.get("smem_static", 0), case.get("smem_dynamic", 0),
                     max_dynamic_smem=case.get("max_dynamic_smem"), barriers=case.get("barriers", 1)).blocks_per_sm


def compare_fixture(doc: dict) -> tuple[list[dict], list[str]]:
    """(case mismatches, property mismatches) between a recorded fixture and the calculator + ARCHS table."""
    arch = doc["arch"]
    a = _arch(arch)
    prop_bad = []
    for key, attr in PROP_KEYS.items():
        if key in doc.get("props", {}) and doc["props"][key] != getattr(a, attr):
            prop_bad.append(f"{key}: device {doc['props'][key]}, ARCHS table {getattr(a, attr)}")
    bad = []
    for c in doc["cases"]:
        want = c["blocks"]
        got = predict_case(arch, c)
        if got != want:
            bad.append(dict(c, calculator=got))
    return bad, prop_bad
