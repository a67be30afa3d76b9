"""One place where a kernel's configuration is decided, and a record of where each value came from.

Every tunable kernel family of a lab (softmax rungs 05/06's values per thread, the SGEMM tile, a Triton matmul's
block sizes) is resolved here, in this order, each step overriding the one before:

    1. the lab's default           written once, in the lab's Python (it reaches the kernel as -D / a constexpr)
    2. this GPU's tuned record     results/<gpu>/<lab>_tuned.json, written by the lab's --tune on THIS GPU
                                   (common.tuned; a record made on another GPU is never applied)
    3. a command-line override     --set NAME=VALUE (any lab, repeatable): a learner changes one number and reruns

    cfg = config.resolve("softmax rungs 05/06", DEFAULTS, tuned=winner, tuned_source=source)
    cfg.values["EPT"]              # the value the kernel is compiled with
    cfg.sources["EPT"]             # "default", "tuned on NVIDIA H200 (results/h200/...)" or "--set EPT=16"

The lab driver prints every family resolved during a run (`print_used`), so the output says which configuration
each kernel used and where it came from. An override that no family of the lab knows is reported as unused, never
silently ignored.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

DEFAULT = "default"
REST_DEFAULT = "the rest default"


@dataclass
class Resolved:
    family: str
    values: dict
    sources: dict = field(default_factory=dict)

    def __getitem__(self, key: str):
        return self.values[key]

    def source(self) -> str:
        """One phrase for the whole family: 'default', 'tuned on X (file)', or a mix per key."""
        kinds = sorted(set(self.sources.values()))
        if len(kinds) == 1:
            return kinds[0]
        return "; ".join([f"{k}: {v}" for k, v in self.sources.items() if v != DEFAULT] + [REST_DEFAULT])

    def row(self) -> dict:
        return {"kernel family": self.family, "configuration": fmt(self.values), "from": self.source()}


def say_source(src: str) -> str:
    """A source phrase of source() in the chosen language (the JSON keeps the English one)."""
    from .i18n import korean, tr

    if not korean():
        return src
    out = []
    for piece in src.split("; "):
        key, sep, rest = piece.partition(": ") if re.match(r"^[A-Z_][A-Z0-9_]*: ", piece) else ("", "", piece)
        m = re.match(r"^tuned on (.+?) \(([^)]+)\)(.*)$", rest)
        said = (tr("tuned on {gpu} ({path})", gpu=m.group(1), path=m.group(2)) + tr(m.group(3))) if m else tr(rest)
        out.append(f"{key}{sep}{said}")
    return "; ".join(out)


def fmt(values: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in values.items())


_OVERRIDES: dict[str, str] = {}
_TAKEN: set[str] = set()
_USED: dict[str, Resolved] = {}
_CACHE: dict = {}          # (family, default, tuned, source, validate) -> Resolved, for wrappers that resolve per call
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def parse_override(text: str) -> tuple[str, str]:
    """'EPT=16' -> ('EPT', '16'); ValueError for anything else (argparse turns it into a usage error)."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not _NAME.match(name) or not value:
        raise ValueError(f"expected NAME=VALUE (a configuration name such as EPT=16 or BLOCK_M=64), got {text!r}")
    return name, value


def set_overrides(pairs) -> None:
    """The --set NAME=VALUE pairs of this run (replaces any earlier ones)."""
    _OVERRIDES.clear()
    _TAKEN.clear()
    _CACHE.clear()
    for p in pairs or ():
        name, value = parse_override(p)
        _OVERRIDES[name] = value


def overrides() -> dict[str, str]:
    return dict(_OVERRIDES)


def _convert(name: str, text: str, like):
    """An override's text as the type of the default it replaces (int, float, bool or str)."""
    try:
        if isinstance(like, bool):
            if text.lower() in ("1", "true", "yes", "on"):
                return True
            if text.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError
        if isinstance(like, int):
            return int(text, 0)
        if isinstance(like, float):
            return float(text)
    except ValueError:
        raise ValueError(f"--set {name}={text}: expected {type(like).__name__} like the default {like!r}") from None
    return text


def resolve(family: str, default: dict, tuned: dict | None = None, tuned_source: str = "", *,
            validate: Callable[[dict], dict] | None = None, remember: bool = True) -> Resolved:
    """The configuration of one kernel family: `default`, then the tuned record's values (only the keys the default
    has), then the --set overrides (likewise). `validate(values)` may normalize the result and raises ValueError with
    the key and what is allowed when a value cannot work (a tile that does not divide, a value outside the sweep).
    The same question answers from a cache: a wrapper may call this on every launch."""
    try:
        key = (family, repr(sorted(default.items())), repr(sorted((tuned or {}).items())), tuned_source, validate)
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _CACHE:
        res = _CACHE[key]
        _TAKEN.update(k for k, src in res.sources.items() if src.startswith("--set "))
        if remember:
            _USED[family] = res
        return res
    values = dict(default)
    sources = {k: DEFAULT for k in values}
    for k, v in (tuned or {}).items():
        if k in values:
            values[k] = v
            sources[k] = tuned_source or "tuned record"
    for k, text in _OVERRIDES.items():
        if k in values:
            values[k] = _convert(k, text, default[k])
            sources[k] = f"--set {k}={text}"
            _TAKEN.add(k)
    if validate is not None:
        values = validate(values)
    res = Resolved(family, values, sources)
    if key is not None:
        _CACHE[key] = res
    if remember:
        _USED[family] = res
    return res


def used() -> list[Resolved]:
    """Every family resolved in this process, in the order first resolved."""
    return list(_USED.values())


def forget() -> None:
    """Drop the record of resolutions (a new lab in the same process, or a test)."""
    _USED.clear()


class recording:
    """`with config.recording() as rec:` collects the families resolved inside (rec.used), and leaves the run's own
    record as it was (a plan worked out for another GPU must not show up as this run's configuration)."""

    def __enter__(self):
        self._saved = dict(_USED)
        _USED.clear()
        self.used: list[Resolved] = []
        return self

    def __exit__(self, *exc):
        self.used = list(_USED.values())
        _USED.clear()
        _USED.update(self._saved)
        return False


def unused_overrides() -> list[str]:
    return [f"{k}={v}" for k, v in _OVERRIDES.items() if k not in _TAKEN]


def print_used(file=None) -> None:
    """The configuration each kernel family used in this run and where it came from; and any --set that no family
    of this lab took."""
    from .i18n import tr
    from .table import print_table

    rows = [dict(r.row(), **{"from": say_source(r.source())}) for r in used()]
    if rows:
        print_table(rows, ["kernel family", "configuration", "from"],
                    title="configurations (the lab's default, this GPU's tuned record, --set NAME=VALUE)", file=file)
    left = unused_overrides()
    if left:
        has = ", ".join(sorted({k for r in used() for k in r.values}))
        print(tr("--set {names}: no kernel of this lab has such a setting", names=" ".join(left))
              + (tr(" (it has: {names})", names=has) if rows else ""), file=file)
