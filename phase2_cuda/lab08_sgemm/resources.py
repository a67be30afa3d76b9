"""Lab 2.8's compile report, no GPU needed: registers, shared memory, spills and blocks per SM of every rung (NVRTC
and the occupancy calculator), and the SASS census of each (wide loads, shared-memory loads, cp.async, FFMAs)."""
from __future__ import annotations

from common import config, cuda, device, lab, report
from common import occupancy as occupancy_calc
from common.i18n import korean, tr

from .lab import ASYNC_ARCHS, ASYNC_DEFAULT, CU_ASYNC, RUNGS, VARIANTS, _ai, plan, tuned_config


def occupancy(arch: str, threads: int, regs: int, smem: int) -> tuple[int, str]:
    """(blocks per SM, what limits it) by common.occupancy, for `smem` bytes of shared memory per block (static +
    dynamic; the wrapper raises a kernel's dynamic limit to what its launch needs)."""
    a = device.arch_info(arch)
    o = occupancy_calc.occupancy(arch, threads, regs, 0, smem,
                                 max_dynamic_smem=min(max(smem, a.smem_per_block_default), a.smem_per_block_optin))
    return o.blocks_per_sm, "+".join(o.limiters) or min(o.limits, key=o.limits.get)


def _launch_of(v_name: str, gpu: device.DeviceInfo):
    """(Launch, label) of a CUDA variant for a 4096^3 product; rung 11 with the configuration it gets on `gpu`."""
    if v_name.startswith("cuda 10"):
        return plan(ASYNC_DEFAULT, 4096, 4096, 4096), ASYNC_DEFAULT.short()
    if v_name.startswith("cuda 11"):
        cfg, src = tuned_config(gpu=gpu)
        return plan(cfg, 4096, 4096, 4096), f"{cfg.short()} [{src}]"
    num = int(v_name.split()[1])
    return plan(num, 4096, 4096, 4096), ""


def resource_rows(arch: str, gpu: device.DeviceInfo | None = None) -> list[dict]:
    """Registers, shared memory, spills, occupancy and SASS census of every rung, compiled with NVRTC for `arch`;
    rung 11 with the tile configuration it gets on `gpu` (default: the GPU at hand, or without one the GPU `arch`
    stands for, or --gpu's)."""
    gpu = gpu or device.current(arch)
    rows = []
    for v in VARIANTS:
        if v.impl != "cuda":
            continue
        p, label = _launch_of(v.name, gpu)
        if p.path == CU_ASYNC and not lab.arch_matches(arch, ASYNC_ARCHS):
            rows.append({"rung": v.name, "note": tr("needs sm_80+ (cp.async); not compiled for {arch}", arch=arch)})
            continue
        rep = cuda.compile_report(p.path, arch, defines=dict(p.defines))
        k = rep[p.kernel]
        threads = p.block[0] * p.block[1] * p.block[2]
        smem = k.smem_bytes + p.smem
        try:
            blocks, limiter = occupancy(arch, threads, k.registers, smem)
        except ValueError:                          # an architecture the course's table does not describe
            blocks, limiter = 0, "?"
        c = _executed_census(k.sass)
        r = RUNGS.get(int(v.name.split()[1]))
        cfg = dict(p.defines)
        ai = r.tile_flop_per_byte if r else _ai(cfg["BM"], cfg["BN"])
        fpw = r.fma_per_smem_word if r else cfg["TM"] * cfg["TN"] / (cfg["TM"] + cfg["TN"])
        rows.append({
            "rung": v.name, "threads": threads, "regs": k.registers, "smem": smem, "spills": k.spills,
            "blocks/SM": blocks, "warps/SM": blocks * threads // 32, "limit": limiter,
            "tile FLOP/B": round(ai, 2), "FMA/smem word": round(fpw, 2) if fpw else "-",
            "LDG.128": c.get("LDG.128", 0), "LDS": sum(v for key, v in c.items() if key.startswith("LDS.")),
            "LDS.128": c.get("LDS.128", 0), "LDGSTS": c.get("LDGSTS", 0), "FFMA": c.get("FFMA", 0), "note": label,
        })
    return rows


def _limits(limiter: str) -> str:
    """What limits the blocks per SM ("registers+shared memory"), each part in the chosen language."""
    return "+".join(tr(x) for x in limiter.split("+"))


def _executed_census(sass: list[str]) -> dict[str, int]:
    """SASS census without the never-executed (@!PT) padding ptxas places around cp.async."""
    return cuda.sass_census([ln for ln in sass if not ln.startswith("@!PT")])


def show_compile_reports(arch: str) -> list[dict]:
    rows = resource_rows(arch)
    cols = ["rung", "threads", "regs", "smem", "spills", "blocks/SM", "warps/SM", "limit", "tile FLOP/B",
            "FMA/smem word", "LDG.128", "LDS", "LDS.128", "LDGSTS", "FFMA"]
    said = rows if not korean() else [dict(r, limit=_limits(r["limit"])) if "limit" in r else r for r in rows]
    report.print_table(said, cols, title=tr("What the compiler made of each rung (NVRTC {version}, {arch}; smem = "
                                            "static + dynamic bytes per block; occupancy from the allocation rules)",
                                            version=cuda.nvrtc_version(), arch=arch))
    for r in rows:
        if r.get("note"):
            print(f"  {r['rung']}: {_said_note(r['note'])}")
    print(tr("  Read it as: FFMA per LDS is the register blocking at work (rungs 03-05: ptxas already merged loads "
             "that\n  are contiguous in k into LDS.128); LDG.128 appears from rung 06 (the float4 path, its scalar "
             "fallback\n  beside it); LDGSTS is cp.async (rungs 10-11). Counts are static instructions of the whole "
             "kernel, not\n  per k-step; never-executed '@!PT LDS' slots that ptxas puts after cp.async are left out."))
    return rows


def _said_note(note: str) -> str:
    """A resource row's note as printed: rung 11's configuration with its source in the chosen language."""
    if note.endswith("]") and " [" in note:
        cfg, _, src = note[:-1].rpartition(" [")
        return f"{cfg} [{config.say_source(src)}]"
    return note
