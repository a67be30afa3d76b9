"""Lab 4.3, rung 03: which build of kernels_wgmma.cu runs - the builds there are (cluster, tma_store, c_passes), this
GPU's --tune record of the fastest correct one per size, the defaults without one, and the precedence of arguments,
WGMMA_* environment variables and --set over the record (resolve_build), with a sentence on where each field came
from (say_note)."""
from __future__ import annotations

import os

from common import config, device, tuned
from common.i18n import tr

from .wgmma_kernel import C_PASSES, CLUSTERS, _check_cluster, _check_tma_store


# ---------------------------------------------------------------------------------------------------------------------
# Which build runs: the --tune record for this GPU, the environment, the arguments
# ---------------------------------------------------------------------------------------------------------------------
# A build is (cluster, tma_store, c_passes). Lab 4.3's --tune (bench.tune_wgmma) times every one of builds() at the
# lab's sizes and records the fastest correct one at each size in results/<gpu>/<TUNED>.json as
#     "winner": [{"shape": [4096, 4096, 4096], "build": {"cluster": 1, "tma_store": true, "c_passes": 1}}, ...]
# gemm_wgmma reads it through common.tuned for the GPU it runs on; without a record it runs DEFAULT_BUILD (the kernel
# file's base build: single blocks, C stored from registers - no tensor map for C, no cluster launch; the other builds
# are the attempts beyond it, and which of them pays depends on the GPU, so only a measurement picks one).
TUNED = "phase4_lab03_tensor_cores_wgmma_tuned"
BUILD_KEYS = ("cluster", "tma_store", "c_passes")
DEFAULT_BUILD = {"cluster": 1, "tma_store": False, "c_passes": 1}
EPILOGUES = ((False, 1), (True, 1), (True, 2))          # (tma_store, c_passes): registers, TMA store, in two passes


def _env_choice(var: str, allowed: tuple[str, ...]) -> str | None:
    """The environment variable `var` when set (one of `allowed`, else ValueError naming it), None when unset."""
    v = os.environ.get(var, "")
    if v == "":
        return None
    if v not in allowed:
        raise ValueError(f"{var}: expected {' or '.join(allowed)}, got {v!r}")
    return v


def default_tma_store() -> bool:
    """The epilogue the environment asks for: WGMMA_TMA_STORE=1 the shared-memory + TMA-store epilogue (-DEPI_TMA=1),
    0 C stored from registers; unset: DEFAULT_BUILD's (resolve_build puts this GPU's --tune record in between)."""
    v = _env_choice("WGMMA_TMA_STORE", ("0", "1"))
    return DEFAULT_BUILD["tma_store"] if v is None else v == "1"


def default_cluster() -> int:
    """Blocks per cluster the environment asks for (WGMMA_CLUSTER=1 or 2); unset: DEFAULT_BUILD's (resolve_build puts
    this GPU's --tune record in between)."""
    v = _env_choice("WGMMA_CLUSTER", ("1", "2"))
    return DEFAULT_BUILD["cluster"] if v is None else int(v)


def default_b_kmajor() -> bool:
    """The B layout gemm_wgmma uses unless told: N-major (read in place, imm-trans-b = 1); WGMMA_B_KMAJOR=1 in the
    environment switches to the transposed-copy fallback."""
    return os.environ.get("WGMMA_B_KMAJOR", "0") == "1"


def builds(b_kmajor: bool = False) -> list[dict]:
    """Every build of the kernel file for a B layout (cluster 2 needs N-major B): what the head to head times and
    --tune sweeps."""
    clusters = (1,) if b_kmajor else CLUSTERS
    return [{"cluster": cl, "tma_store": ep, "c_passes": cp} for ep, cp in EPILOGUES for cl in clusters]


def build_label(build: dict) -> str:
    """'cluster 2', 'cluster 1 tma-store', 'cluster 2 tma-store 2 passes' (the head to head's names)."""
    return (f"cluster {build['cluster']}" + (" tma-store" if build["tma_store"] else "")
            + (" 2 passes" if build["c_passes"] == 2 else ""))


def check_build(build, where: str = "build") -> dict:
    """A checked, normalized copy of one build {cluster, tma_store, c_passes}; ValueError / TypeError naming the
    field (`where` is its place in the record, e.g. 'winner[1].build')."""
    if not isinstance(build, dict):
        raise TypeError(f"{where}: expected a dict of {', '.join(BUILD_KEYS)}, got {type(build).__name__}")
    missing = [k for k in BUILD_KEYS if k not in build]
    extra = sorted(set(build) - set(BUILD_KEYS))
    if missing or extra:
        raise ValueError(f"{where}: " + "; ".join(([f"missing {', '.join(missing)}"] if missing else [])
                                                   + ([f"unknown {', '.join(extra)}"] if extra else [])))
    cl, epi, cp = build["cluster"], build["tma_store"], build["c_passes"]
    if isinstance(cl, bool) or cl not in CLUSTERS:
        raise ValueError(f"{where}.cluster: expected one of {CLUSTERS}, got {cl!r}")
    if not isinstance(epi, bool):
        raise ValueError(f"{where}.tma_store: expected true or false, got {epi!r}")
    if isinstance(cp, bool) or cp not in C_PASSES:
        raise ValueError(f"{where}.c_passes: expected one of {C_PASSES}, got {cp!r}")
    if cp != 1 and not epi:
        raise ValueError(f"{where}.c_passes: {cp} passes belong to the TMA-store epilogue, but tma_store is false")
    return {"cluster": int(cl), "tma_store": epi, "c_passes": int(cp)}


def check_winners(winners) -> list[dict]:
    """The record's "winner" checked: a non-empty list of {"shape": [M, N, K], "build": {...}}; ValueError /
    TypeError naming the field (common.tuned then refuses the record and says why)."""
    if not isinstance(winners, list) or not winners:
        raise ValueError(f"winner: expected a non-empty list of {{shape, build}} entries, got {winners!r}")
    out = []
    for i, e in enumerate(winners):
        where = f"winner[{i}]"
        if not isinstance(e, dict):
            raise TypeError(f"{where}: expected a dict with shape and build, got {type(e).__name__}")
        shape = e.get("shape")
        if not (isinstance(shape, list) and len(shape) == 3
                and all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in shape)):
            raise ValueError(f"{where}.shape: expected [M, N, K] of positive integers, got {shape!r}")
        if "build" not in e:
            raise ValueError(f"{where}.build: missing")
        out.append({"shape": list(shape), "build": check_build(e["build"], where + ".build")})
    return out


def recorded_build(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> tuple[dict | None, str]:
    """(build, where it came from): the --tune winner for `gpu` (default: the GPU at hand) at the tuned size nearest
    m x n x k, or (None, why there is none)."""
    winners, source = tuned.record(TUNED, check_winners, gpu=gpu)
    if not winners:
        return None, source
    e = tuned.nearest(winners, (m, n, k))
    return dict(e["build"]), f"{source}, winner at {'x'.join(map(str, e['shape']))}"


# The names a learner passes to --set for each field of a build (the environment variables' names too)
BUILD_SETTINGS = {"cluster": "WGMMA_CLUSTER", "tma_store": "WGMMA_TMA_STORE", "c_passes": "WGMMA_C_PASSES"}


def build_config(m: int, n: int, k: int, gpu: device.DeviceInfo | None = None) -> tuple[config.Resolved, bool, str]:
    """The build of an m x n x k problem on `gpu` (default: the GPU at hand) as common.config resolves it:
    DEFAULT_BUILD, then this GPU's --tune record (the winner tuned nearest m n k), then --set WGMMA_CLUSTER=2,
    WGMMA_TMA_STORE=1, WGMMA_C_PASSES=2. Returns (the resolution, whether a record was applied, where it came from)."""
    rec, source = recorded_build(m, n, k, gpu)
    winner = source.rsplit(', ', 1)[-1]
    family = "wgmma + TMA build" + ((f" ({tr('winner at {shape}', shape=winner[len('winner at '):])})"
                                     if winner.startswith("winner at ") else f" ({winner})") if rec else "")
    return (config.resolve(family, {BUILD_SETTINGS[f]: v for f, v in DEFAULT_BUILD.items()},
                           tuned={BUILD_SETTINGS[f]: v for f, v in rec.items()} if rec else None,
                           tuned_source=tr("recorded build, {source}", source=_said_record(source)),
                           validate=_check_settings),
            rec is not None, source)


def _check_settings(v: dict) -> dict:
    if isinstance(v["WGMMA_CLUSTER"], bool) or v["WGMMA_CLUSTER"] not in CLUSTERS:
        raise ValueError(f"WGMMA_CLUSTER: expected one of {CLUSTERS}, got {v['WGMMA_CLUSTER']!r}")
    if isinstance(v["WGMMA_C_PASSES"], bool) or v["WGMMA_C_PASSES"] not in C_PASSES:
        raise ValueError(f"WGMMA_C_PASSES: expected one of {C_PASSES}, got {v['WGMMA_C_PASSES']!r}")
    return v


def _check_arguments(b_kmajor: bool, cluster, tma_store, c_passes) -> None:
    """The build arguments a caller gave (None: not given), each checked alone and against the others given."""
    if cluster is not None:
        _check_cluster(cluster, b_kmajor)
    if tma_store is not None:
        _check_tma_store(tma_store, 1 if c_passes is None else c_passes)
    elif c_passes is not None:
        _check_tma_store(True, c_passes)


def resolve_build(m: int, n: int, k: int, *, b_kmajor: bool = False, cluster: int | None = None,
                  tma_store: bool | None = None, c_passes: int | None = None,
                  gpu: device.DeviceInfo | None = None) -> tuple[dict, str]:
    """(build, a sentence on where it came from) that gemm_wgmma runs for an m x n x k problem on `gpu` (default: the
    GPU at hand). Precedence, field by field, first found: the argument (not None); the environment (WGMMA_CLUSTER,
    WGMMA_TMA_STORE, WGMMA_C_PASSES); --set of the same names; this GPU's --tune record (the winner at the tuned size
    nearest m n k); DEFAULT_BUILD (the last three: build_config). Two couplings: b_kmajor runs single blocks (cluster
    1 unless asked for 2, which is refused); c_passes applies to the TMA-store epilogue only - an explicit c_passes=2
    asks for it (tma_store None -> True), and with the register epilogue it is 1."""
    _check_arguments(b_kmajor, cluster, tma_store, c_passes)
    cfg, rec, source = build_config(m, n, k, gpu)
    base = {f: cfg[name] for f, name in BUILD_SETTINGS.items()}
    env_cl = _env_choice("WGMMA_CLUSTER", ("1", "2"))
    env_epi = _env_choice("WGMMA_TMA_STORE", ("0", "1"))
    env_cp = _env_choice("WGMMA_C_PASSES", ("1", "2"))
    changed = [f"{f} from {cfg.sources[name]}" for f, name in BUILD_SETTINGS.items()
               if cfg.sources[name].startswith("--set")]

    def pick(name, arg, env, env_var, fallback):
        if arg is not None:
            if arg != fallback:
                changed.append(f"{name} from the argument")
            return arg
        if env is not None:
            if env != fallback:
                changed.append(f"{name} from {env_var}")
            return env
        return fallback

    if b_kmajor and cluster is None:
        cl = 1
        if base["cluster"] != 1:
            changed.append("cluster 1 (B K-major)")
    else:
        cl = pick("cluster", cluster, None if env_cl is None else int(env_cl), "WGMMA_CLUSTER", base["cluster"])
    if tma_store is None and c_passes == 2:
        tma_store = True
    epi = pick("tma_store", tma_store, None if env_epi is None else env_epi == "1", "WGMMA_TMA_STORE",
               base["tma_store"])
    if epi:
        cp = pick("c_passes", c_passes, None if env_cp is None else int(env_cp), "WGMMA_C_PASSES",
                  base["c_passes"] if base["tma_store"] else 1)
    else:
        cp = 1 if c_passes is None else c_passes
    build = {"cluster": cl, "tma_store": epi, "c_passes": cp}
    _check_cluster(cl, b_kmajor)
    _check_tma_store(epi, cp)
    note = f"recorded build, {source}" if rec else source
    return build, note + (f"; {', '.join(changed)}" if changed else "")


def say_note(note: str) -> str:
    """resolve_build's sentence on where a build came from, in the chosen language (the JSON keeps the English)."""
    head, _, changed = note.partition("; ")
    if head.startswith("recorded build, "):
        head = tr("recorded build, {source}", source=_said_record(head[len("recorded build, "):]))
    else:
        head = config.say_source(head)
    if not changed:
        return head
    said = []
    for c in changed.split(", "):
        name, sep, rest = c.partition(" from ")
        said.append(tr("{name} from the argument", name=name) if rest == "the argument" else
                    tr("{name} from {source}", name=name, source=config.say_source(rest)) if sep else tr(c))
    return head + "; " + ", ".join(said)


def _said_record(source: str) -> str:
    """A tuning record's source ('tuned on GPU (file), winner at MxNxK') in the chosen language."""
    src, sep, shape = source.rpartition(", winner at ")
    if not sep:
        return config.say_source(source)
    return tr("{source}, winner at {shape}", source=config.say_source(src), shape=shape)
