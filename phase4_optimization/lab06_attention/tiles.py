"""Lab 4.6's Triton launch configurations: the tiles of the flash forward and of the backward's two kernels, resolved
once per kernel family by common.config - the default that fits the GPU's shared memory (fit_tile), then a tuned
config (this run's tile sweep, or the GPU's --tune record), then --set FWD_BLOCK_N=64 and the like. The wrappers
(flash.py) launch with them; the plan (lab.launches) describes them."""
from __future__ import annotations

import functools

from common import config, device, tuned
from common.i18n import tr
from common.triton_support import INTERPRETER

from .shared import LAB, block_d


# The names a learner passes to --set for each field (FWD_BLOCK_N=64, BWD_WARPS=4, FWD_TMA=1); the config dicts, the
# tuning candidates and the tuned record keep the kernels' own names (BLOCK_N, num_warps, TMA)
FWD_SETTINGS = {"BLOCK_M": "FWD_BLOCK_M", "BLOCK_N": "FWD_BLOCK_N", "num_warps": "FWD_WARPS",
                "num_stages": "FWD_STAGES", "TMA": "FWD_TMA", "WS": "FWD_WS", "PIPE": "FWD_PIPE"}
BWD_SETTINGS = {"BLOCK_M1": "BWD_BLOCK_M1", "BLOCK_N1": "BWD_BLOCK_N1", "BLOCK_M2": "BWD_BLOCK_M2",
                "BLOCK_N2": "BWD_BLOCK_N2", "num_warps": "BWD_WARPS", "num_stages": "BWD_STAGES"}
SETTINGS = {"fwd": FWD_SETTINGS, "bwd": BWD_SETTINGS}
# Without a GPU: small tiles, so the ragged, diagonal and multi-tile paths all run at S ~ 70 in the interpreter
INTERPRETER_TILES = {"fwd": {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1},
                     "bwd": {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4,
                             "num_stages": 1}}


def fwd_default(d: int, causal: bool = False, gpu: device.DeviceInfo | None = None) -> dict:
    """The forward's default tile: the interpreter's small one on this machine without a GPU, else fwd_default_gpu
    (for `gpu`, a simulated one in a plan, or the GPU at hand)."""
    if INTERPRETER and gpu is None:
        return dict(INTERPRETER_TILES["fwd"])
    return fwd_default_gpu(d, causal, gpu)


def bwd_default(d: int, gpu: device.DeviceInfo | None = None) -> dict:
    """The backward's default tiles (see fwd_default): dK/dV kernel BLOCK_N1 keys per program, BLOCK_M1 queries per
    step; dQ kernel BLOCK_M2 queries per program, BLOCK_N2 keys per step."""
    if INTERPRETER and gpu is None:
        return dict(INTERPRETER_TILES["bwd"])
    return bwd_default_gpu(d, gpu)


def fwd_preferred(d: int, causal: bool = False) -> dict:
    """The forward tile the lab prefers on a GPU whose shared memory holds it: 128 query rows per program, 8 warps,
    64 keys per step (128 at D = 128 non-causal), 3 stages. Shared memory at D = 128, bf16: Q 32 KiB + 3 x (K 16 KiB
    + V 16 KiB) = 128 KiB, so one program per SM; the accumulator (128 x 128 fp32) is 64 registers a thread over 8
    warps."""
    # 8 warps at D = 64 too: with 4, one warpgroup holds the 128 x 64 fp32 accumulator and the 128 x 64 score tile,
    # and the sm_90 compile report shows 255 registers a thread, the ceiling.
    # D = 128 without a mask: 128 keys per step, which the lab's tuning picked on the GPU of its committed results
    # (64 and 128 keys were within a few percent of each other: the lesson, README.md); causal keeps 64, whose
    # diagonal tiles waste less.
    # D = 256 (untuned): half the query rows and 32 keys a step, 2 stages - Q 32 KiB + 2 x (K + V) 32 KiB each,
    # and a 64 x 256 fp32 accumulator, 64 registers a thread over 8 warps.
    if d > 128:
        return {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 8, "num_stages": 2}
    if d >= 128 and not causal:
        return {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8, "num_stages": 3}
    return {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3}


def bwd_preferred(d: int) -> dict:
    """The backward tiles the lab prefers: 64-query steps over 128-key dK/dV programs, 128-query dQ programs over
    64-key steps, 8 warps, 2 stages."""
    # The lab's tuning (B 4, H 32, S 4096, D 128): 128 keys per dK/dV program and 128 queries per dQ program ran about
    # twice as fast as the all-64 tiles (twice the work per K/V, or Q, tile loaded); the lesson has the table. The
    # same tiles are the default at D = 64 (and below).
    # D = 256 (untuned): dK and dV of 64 keys x 256 fp32 are already 128 registers a thread over 8 warps, so 64-key
    # programs and 64-query dQ programs, 32 rows a step.
    if d > 128:
        return {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 8, "num_stages": 1}
    return {"BLOCK_M1": 64, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 64, "num_warps": 8, "num_stages": 2}


# Where a GPU's shared memory per block cannot hold the preferred tile (the preferred D = 128 forward asks for about
# 224 KiB, which only the largest shared memories offer; the 99 KiB of sm_86/89/120 and sm_80's 163 KiB do not): the
# first of these that fits, largest first. Fewer stages first (the pipeline loses depth, the tile keeps its reuse),
# then narrower key steps, then fewer query rows.
FWD_FALLBACKS = [{"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 3},
                 {"BLOCK_M": 128, "BLOCK_N": 64, "num_warps": 8, "num_stages": 2},
                 {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
                 {"BLOCK_M": 64, "BLOCK_N": 32, "num_warps": 4, "num_stages": 2},
                 {"BLOCK_M": 32, "BLOCK_N": 16, "num_warps": 4, "num_stages": 1}]
BWD_FALLBACKS = [{"BLOCK_M1": 32, "BLOCK_N1": 128, "BLOCK_M2": 128, "BLOCK_N2": 32, "num_warps": 8, "num_stages": 2},
                 {"BLOCK_M1": 32, "BLOCK_N1": 64, "BLOCK_M2": 64, "BLOCK_N2": 32, "num_warps": 4, "num_stages": 2},
                 {"BLOCK_M1": 16, "BLOCK_N1": 32, "BLOCK_M2": 32, "BLOCK_N2": 16, "num_warps": 4, "num_stages": 1}]
FALLBACKS = {"fwd": FWD_FALLBACKS, "bwd": BWD_FALLBACKS}
SMEM_SLACK = 2048          # barriers and scratch some targets add to the tiles (about 1 KiB on sm_100)


def smem_estimate(kind: str, cfg: dict, d: int, elt: int = 2, arch: str = "sm_90") -> int:
    """Bytes of shared memory a flash kernel with this tile asks for on `arch`, from above: the tiles it keeps on chip
    plus num_stages copies of each tile it streams (what Triton allocates for sm_90's asynchronous pipeline; the
    mma.sync architectures keep one copy fewer), plus SMEM_SLACK. Forward: Q (BLOCK_M x D) kept, K and V (BLOCK_N x
    D each) streamed. Backward: the larger of the dK/dV kernel (K and V of BLOCK_N1 keys kept; Q, dO of BLOCK_M1 rows
    and their LSE and delta streamed) and the dQ kernel (Q and dO of BLOCK_M2 rows kept, K and V of BLOCK_N2 keys
    streamed); on sm_100 the backward's score-sized tiles (P^T and dS^T, dS) pass through shared memory too. One
    stage is counted as two: without a pipeline the mma.sync path still stages a streamed tile twice (a layout
    conversion). tests/test_gpu_plans.py compiles the tiles it picks for every GPU of the table and checks them."""
    bd, st = block_d(d), max(2, cfg["num_stages"])
    if kind == "fwd":
        return elt * bd * (cfg["BLOCK_M"] + st * 2 * cfg["BLOCK_N"]) + SMEM_SLACK
    scores = device.arch_info(arch).cc // 10 == 10          # sm_100 / sm_103: tcgen05 reads them from shared memory
    dkdv = elt * bd * (2 * cfg["BLOCK_N1"] + st * 2 * cfg["BLOCK_M1"]) + st * cfg["BLOCK_M1"] * 8
    dkdv += 2 * elt * cfg["BLOCK_N1"] * cfg["BLOCK_M1"] if scores else 0
    dq = elt * bd * (2 * cfg["BLOCK_M2"] + st * 2 * cfg["BLOCK_N2"])
    dq += elt * cfg["BLOCK_M2"] * cfg["BLOCK_N2"] if scores else 0
    return max(dkdv, dq) + SMEM_SLACK


def _gpu(gpu: device.DeviceInfo | None) -> device.DeviceInfo:
    """`gpu`, else the GPU every prediction uses here (the one at hand, or the profile --gpu / --arch chose)."""
    return gpu if gpu is not None else device.current()


def gpu_of_arch(arch: str) -> device.DeviceInfo:
    """The GPU a compile for `arch` describes: the one at hand (or --gpu's) when it is of that architecture, else the
    table's example of it (common/gpu_specs.py)."""
    a = device.arch_info(arch)
    g = device.current(a.arch)
    if device.arch_info(g.arch).arch == a.arch or not a.example:
        return g
    return device.profile_info(a.example)


def fit_tile(kind: str, cfg: dict, d: int, gpu: device.DeviceInfo | None = None) -> dict:
    """`cfg` where the GPU's shared memory per block (its opt-in limit) holds it (smem_estimate), else the first of
    FALLBACKS[kind] that fits (the smallest where none does)."""
    g = _gpu(gpu)
    for c in [cfg] + FALLBACKS[kind]:
        if smem_estimate(kind, c, d, arch=g.arch) <= g.smem_per_block_optin:
            return dict(c)
    return dict(FALLBACKS[kind][-1])


def fwd_default_gpu(d: int, causal: bool = False, gpu: device.DeviceInfo | None = None) -> dict:
    """The forward tile on `gpu` (default: the GPU at hand, or the one --gpu / --arch describes): fwd_preferred where
    its shared memory holds it, else the first fallback that fits (fit_tile)."""
    return fit_tile("fwd", fwd_preferred(d, causal), d, gpu)


def bwd_default_gpu(d: int, gpu: device.DeviceInfo | None = None) -> dict:
    """The backward tiles on `gpu`: bwd_preferred where its shared memory holds them, else a fallback (fit_tile)."""
    return fit_tile("bwd", bwd_preferred(d), d, gpu)


# Configs picked by bench.tune_configs() at a shape in this process: {("fwd" | "bwd", D, causal, dtype): config};
# on the GPU at hand they come before the tuned record (and --set before them).
TUNED: dict = {}
THIS_RUN = "tuned in this run (the benchmark's tile sweep)"

# Tuning record: `--tune` (bench.tune) times FWD_CANDIDATES / BWD_CANDIDATES at the target shapes, checks each winner
# against float64 on sampled heads, and records them in results/<gpu>/phase4_lab06_attention_tuned.json as
# {"fwd D128 full bfloat16": config, "fwd D128 causal bfloat16": ..., "bwd ...": ...}. On that GPU the wrappers use
# a recorded winner for the same kind, head dim, mask and dtype (any B, H, S); elsewhere, and for anything not
# recorded, the defaults above. A config is the dict bench.FWD_CANDIDATES / BWD_CANDIDATES hold.
TUNED_RECORD = LAB + "_tuned"
_FWD_KEYS, _BWD_KEYS = {"BLOCK_M", "BLOCK_N"}, {"BLOCK_M1", "BLOCK_N1", "BLOCK_M2", "BLOCK_N2"}
_FWD_FLAGS = {"TMA", "WS", "PIPE"}


def record_key(kind: str, d: int, causal: bool, dtype: str) -> str:
    return f"{kind} D{int(d)} {'causal' if causal else 'full'} {dtype}"


def check_tuned_config(kind: str, cfg: dict) -> dict:
    """A valid forward / backward config (normalized: ints and bools), or ValueError / KeyError / TypeError."""
    if kind not in ("fwd", "bwd"):
        raise ValueError(f"kind must be 'fwd' or 'bwd', got {kind!r}")
    blocks = _FWD_KEYS if kind == "fwd" else _BWD_KEYS
    flags = _FWD_FLAGS if kind == "fwd" else set()
    extra = sorted(set(cfg) - blocks - flags - {"num_warps", "num_stages"})
    if extra:
        raise ValueError(f"unknown {kind} config keys {extra}")
    out = {}
    for key in sorted(blocks):
        v = int(cfg[key])
        if not 16 <= v <= 256 or v & (v - 1):
            raise ValueError(f"{key} must be a power of two in 16..256, got {v}")
        out[key] = v
    out["num_warps"] = int(cfg["num_warps"])
    out["num_stages"] = int(cfg["num_stages"])
    if out["num_warps"] not in (4, 8, 16) or not 1 <= out["num_stages"] <= 6:
        raise ValueError(f"num_warps {out['num_warps']} (4, 8 or 16) / num_stages {out['num_stages']} (1..6)")
    for f in sorted(flags & set(cfg)):
        if not isinstance(cfg[f], bool):
            raise TypeError(f"{f} must be true or false, got {cfg[f]!r}")
        if cfg[f]:
            out[f] = True
    _check_config(kind, out)
    return out


def _check_winners(w: dict) -> dict:
    return {str(k): check_tuned_config(str(k).split()[0], v) for k, v in w.items()}


def tuned_config(kind: str, d: int, causal: bool, dtype: str, gpu: device.DeviceInfo | None = None) -> dict | None:
    """The recorded winner of `gpu` (default: the GPU at hand) for the kind, head dim, mask and dtype, or None (the
    interpreter never uses one)."""
    if INTERPRETER and gpu is None:
        return None
    winners, _ = tuned.record(TUNED_RECORD, _check_winners, gpu=gpu)
    return (winners or {}).get(record_key(kind, d, causal, dtype))


def tuned_source(gpu: device.DeviceInfo | None = None) -> str:
    if INTERPRETER and gpu is None:
        return "interpreter tiles"
    return tuned.record(TUNED_RECORD, _check_winners, gpu=gpu)[1]


def _settings(kind: str, cfg: dict) -> dict:
    """A config in --set names, every field present (a forward flag the config lacks is False)."""
    return {name: cfg.get(key, False) for key, name in SETTINGS[kind].items()}


def _config_of(kind: str, values: dict) -> dict:
    """The --set names back to a config the wrappers and the kernels take (a forward flag only when it is on)."""
    out = {}
    for key, name in SETTINGS[kind].items():
        if key not in _FWD_FLAGS:
            out[key] = values[name]
        elif values[name]:
            out[key] = True
    return out


def _check_settings(kind: str, values: dict) -> dict:
    try:
        check_tuned_config(kind, _config_of(kind, values))
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{'forward' if kind == 'fwd' else 'backward'} tile {config.fmt(values)}: {e}") from None
    return values


def resolved_config(kind: str, d: int, causal: bool, dtype: str,
                    gpu: device.DeviceInfo | None = None) -> config.Resolved:
    """The tile of one Triton kernel family (the forward, or the backward's dK/dV and dQ kernels) at one head dim, mask
    and dtype, in common.config's order: the default that fits the GPU (fit_tile), then a tuned config - this run's
    tile sweep (TUNED, the GPU at hand only) or the GPU's --tune record - then --set FWD_BLOCK_N=64 and the like.
    `gpu`: the GPU to resolve for (a simulated profile in a plan); None: the GPU at hand, or the interpreter."""
    if kind not in SETTINGS:
        raise ValueError(f"kind must be 'fwd' or 'bwd', got {kind!r}")
    d, causal = int(d), bool(causal)
    what = "attn_fwd_kernel" if kind == "fwd" else "attn_bwd_dkdv_kernel + attn_bwd_dq_kernel"
    family = f"triton {what} D{d} {'causal' if causal else 'full'} {dtype}"
    winner, source = None, ""
    if INTERPRETER and gpu is None:
        family += " (" + tr("interpreter tiles") + ")"
        default = INTERPRETER_TILES[kind]
    else:
        preferred = fwd_preferred(d, causal) if kind == "fwd" else bwd_preferred(d)
        default = fit_tile(kind, preferred, d, gpu)
        if default != preferred:
            family += tr(" (the preferred tile needs more than {kib} KiB a block)",
                         kib=_gpu(gpu).smem_per_block_optin // 1024)
        key = (kind, d, causal, dtype)
        if gpu is None and key in TUNED:
            winner, source = TUNED[key], THIS_RUN
        else:
            winner, source = tuned_config(kind, d, causal, dtype, gpu), tuned_source(gpu)
    return config.resolve(family, _settings(kind, default), tuned=_settings(kind, winner) if winner else None,
                          tuned_source=source, validate=functools.partial(_check_settings, kind))


def config_for(kind: str, d: int, causal: bool, dtype: str, gpu: device.DeviceInfo | None = None) -> dict:
    """The config a wrapper uses when none is passed (resolved_config, as the kernels take it)."""
    return _config_of(kind, resolved_config(kind, d, causal, dtype, gpu).values)


def _check_config(kind: str, cfg: dict) -> None:
    pairs = (("BLOCK_M", "BLOCK_N"),) if kind == "fwd" else (("BLOCK_N1", "BLOCK_M1"), ("BLOCK_M2", "BLOCK_N2"))
    for big, small in pairs:
        if cfg[big] % cfg[small]:
            raise ValueError(f"config: {big}={cfg[big]} must be a multiple of {small}={cfg[small]} (the causal "
                             "diagonal block is walked in whole tiles)")
