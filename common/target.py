"""One record for every target and prediction a lab checks, and one rule for when it is met.

A benchmark compares our kernels with a library peer in the same run, and checks the lesson's predictions against
what it measured. Each such comparison is a `Target`, written under the results JSON's header key "targets" as
`[t.as_dict() for t in targets]` and printed by the READMEs as it is (tools/readme_results.py):

    case    what was measured: operation, shape, dtype ("softmax 32768x4096 float32"); for a prediction, the
            statement predicted ("divergent / uniform time = (f + g) / max(f, g)")
    ours    our kernel ("cuda 05 registers, 16-byte loads"); "" for a prediction
    peer    what it is compared with ("torch.compile"); "" for a prediction
    ratio   against a peer: ours speed / peer speed = peer time / our time, from the same rounds (above 1: ours is
            faster); for a prediction: the measured value itself, in the goal's units (a time ratio, cycles, a
            count, a fraction)
    goal    the band the ratio must fall in, as text (">= 1.2", "<= 0.15", "1.7 .. 2.3", "28-45 cycles"); "" for a
            reference line: a comparison shown beside the targets with no goal of its own (the peer itself, a rung
            that is not the target's)
    steady  whether the rounds it came from were steady (common.bench.steady: in every counted round each
            contender's spread was within bench.MAX_SPREAD); None where the value is not a head-to-head timing (a
            count, an error, a latency, a prediction checked against a wide band)
    met     the verdict, from decide() below: never set by hand
    note    why there is no verdict, or where a published range comes from
    detail  the other figures measured beside the ratio (ms, GB/s or TFLOP/s of each side, rounds run): printed in
            the lab's table and kept in the JSON, never used for the verdict

The rule (decide()): no verdict (None) without a measured value or a goal, or from rounds that were not steady - a
ratio whose contenders spread more than 3% is within noise of either answer, so it is quoted as neither, and the
lab reruns it; False when the kernel failed its correctness check (a fast wrong kernel meets nothing) or the value
is outside the band; True otherwise. A target against a peer always says whether its rounds were steady (versus()
requires it): "steady rounds everywhere".

Results written before this record existed keep their own shapes (a ratio under 'vs_cublas', 'vs_peer', 'vs
torch.add', ...; predictions with 'predicted' or 'range'); Target.from_legacy() is the one place that reads them,
and recorded(doc) reads either kind from a results document. A legacy record keeps the verdict it was written with.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields


def finite(v) -> bool:
    """A finite number (not a bool)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _plain(v):
    """A NumPy scalar as the Python number it holds; anything else as it is."""
    return v.item() if hasattr(v, "item") and not isinstance(v, (list, dict)) else v


def fmt(v) -> str:
    """A number as the READMEs write it: 2^28 for a big power of two, 1,024 for big floats, 1.00045 near 1."""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if 0 < abs(v) < 1e-3:
            return f"{v:.2e}"
        if abs(v - 1) < 5e-4 and v != 1:
            return f"{v:.5f}"           # a ratio within rounding of 1.000: show which side of it
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.3f}".rstrip("0").rstrip(".") if abs(v) < 10 else f"{v:.1f}"
    if isinstance(v, int) and v >= 1024 and not v & (v - 1):
        return f"2^{v.bit_length() - 1}"
    return str(v)


def shape_text(shape, dtype: str = "") -> str:
    """'4096^3 bfloat16', '32768x4096 float32', '2^28': a shape (and dtype) as a case names it."""
    dims = list(shape) if isinstance(shape, (list, tuple)) else [shape]
    if len(dims) == 1:
        s = fmt(dims[0])
    elif len(dims) == 3 and len(set(dims)) == 1:
        s = f"{dims[0]}^3"
    else:
        s = "x".join(str(d) for d in dims)
    return f"{s} {dtype}".strip()


def band(at_least: float | None = None, at_most: float | None = None) -> str:
    """The goal's text for a band: '>= 1.2', '<= 0.15', '1.7 .. 2.3', '= 90'; '' for no band."""
    if at_least is not None and at_most is not None:
        return f"= {fmt(at_least)}" if at_least == at_most else f"{fmt(at_least)} .. {fmt(at_most)}"
    if at_least is not None:
        return f">= {fmt(at_least)}"
    return f"<= {fmt(at_most)}" if at_most is not None else ""


def decide(value, *, at_least: float | None = None, at_most: float | None = None, steady: bool | None = None,
           checked: bool = True) -> bool | None:
    """The one rule for 'met' (see the module docstring): None - nothing measured, no goal, or rounds not steady;
    False - the kernel failed its check, or the value is outside [at_least, at_most]; True - inside it."""
    if not finite(value) or (at_least is None and at_most is None):
        return None
    if not checked:
        return False
    if steady is False:
        return None
    return (at_least is None or value >= at_least) and (at_most is None or value <= at_most)


@dataclass(frozen=True)
class Target:
    case: str
    ours: str = ""
    peer: str = ""
    ratio: float | None = None
    goal: str = ""
    steady: bool | None = None
    met: bool | None = None
    note: str = ""
    detail: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.case, str) or not isinstance(self.goal, str):
            raise TypeError(f"Target: case and goal are text, got {self.case!r}, {self.goal!r}")
        for name in ("steady", "met"):
            if getattr(self, name) not in (True, False, None):
                raise TypeError(f"Target.{name}: True, False or None, got {getattr(self, name)!r}")
        if self.ratio is not None and not finite(self.ratio):
            raise TypeError(f"Target.ratio: a finite number or None, got {self.ratio!r}")

    @property
    def is_target(self) -> bool:
        """A target or a prediction (it has a goal), not a reference line."""
        return bool(self.goal)

    def as_dict(self) -> dict:
        """The record as the results JSON keeps it (from_dict reads it back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> Target:
        """A record as_dict() wrote (a results JSON's "targets")."""
        unknown = set(d) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"Target.from_dict: unknown keys {sorted(unknown)}")
        return cls(**d)

    @classmethod
    def from_legacy(cls, d: dict) -> Target:
        """A target as labs wrote it before this record (the committed results): its verdict as recorded."""
        return _from_legacy(cls, d)


def versus(case: str, ours: str, peer: str, ratio: float | None, *, steady: bool, at_least: float | None = None,
           at_most: float | None = None, checked: bool = True, note: str = "", detail: dict | None = None) -> Target:
    """Our kernel against a library peer, timed in the same rounds: ratio = peer time / our time (None: not
    measured, say why in `note`); steady: what common.bench.steady returned for those rounds; checked: the kernel's
    result passed its check. No goal (neither bound): a reference line shown beside the targets."""
    if not isinstance(steady, bool):
        raise TypeError(f"versus: steady is the bool common.bench.steady returned, got {steady!r}")
    ratio = float(_plain(ratio)) if finite(_plain(ratio)) else None
    return Target(case, ours, peer, ratio, band(at_least, at_most), steady,
                  decide(ratio, at_least=at_least, at_most=at_most, steady=steady, checked=checked), note,
                  dict(detail or {}))


def prediction(case: str, measured, *, at_least: float | None = None, at_most: float | None = None,
               goal: str | None = None, steady: bool | None = None, checked: bool = True, note: str = "",
               detail: dict | None = None) -> Target:
    """A prediction of the lesson checked against what was measured: met when at_least <= measured <= at_most.
    goal: the text shown for the band (default: band(at_least, at_most))."""
    measured = _plain(measured)
    value = measured if finite(measured) else None          # a count stays an int (the README shows 90, not 90.0)
    return Target(case, "", "", value, band(at_least, at_most) if goal is None else goal, steady,
                  decide(value, at_least=at_least, at_most=at_most, steady=steady, checked=checked), note,
                  dict(detail or {}))


def records(targets: list[Target]) -> list[dict]:
    """What a results JSON keeps under "targets"."""
    return [t.as_dict() for t in targets]


def said(targets: list[Target], translate: tuple[str, ...] = ()) -> list[dict]:
    """The records as a lab's table prints them: the fields, then the detail; met and steady as yes / no in the
    reader's language (예 / 아니오; the JSON keeps True / False), and the fields named in `translate` ('case', 'ours')
    translated where they are sentences of the lab's catalogue. 'ratio' is 'measured' for a prediction; a field empty
    in every row is left out."""
    from .i18n import tr, yes_no

    rows = []
    for t in targets:
        r = {"case": t.case, "ours": t.ours, "peer": t.peer, "ratio" if t.peer else "measured": t.ratio,
             "goal": t.goal, "steady": yes_no(t.steady), "met": yes_no(t.met), "note": tr(t.note) if t.note else ""}
        r.update({k: tr(r[k]) for k in translate if r.get(k)})
        rows.append(dict(r, **{k: v for k, v in t.detail.items() if k not in r}))
    keys = list(dict.fromkeys(k for r in rows for k in r))
    keep = [k for k in keys if any(r.get(k) not in ("", None) for r in rows)]
    return [{k: r.get(k) for k in keep} for r in rows]


def recorded(doc: dict) -> list[Target]:
    """Every target a results document holds: header "targets" (and "target", once a single dict), then rows of impl
    'target' (lab 4.7 wrote them so); records of either shape (as_dict, or legacy)."""
    found = []
    for key in ("targets", "target"):
        t = doc.get(key)
        found += [t] if isinstance(t, dict) else [x for x in t if isinstance(x, dict)] if isinstance(t, list) else []
    found += [r for r in doc.get("rows") or [] if isinstance(r, dict) and r.get("impl") == "target"]
    return [Target.from_dict(d) if "goal" in d else Target.from_legacy(d) for d in found]


# ---------------------------------------------------------------------------------------------------------------------
# The legacy reader: the shapes the committed results were written in, read once, here
# ---------------------------------------------------------------------------------------------------------------------
_CASE_KEYS = ("case", "size", "shape", "n")
_RATIO_KEYS = ("ratio", "vs_peer", "vs_cublas", "vs_compile", "vs torch.add", "vs torch.sum")
_NOT_PEER = ("vs eager", "vs_eager", "vs unfused", "vs_unfused", "vs_uniform", "vs_best", "vs_copy")
_PEER_WORDS = {"cublas": "cuBLAS", "compile": "torch.compile"}
_RESERVED = {"target", "met", "steady", "variant", "ours", "peer", "predicted", "range", "measured", "source",
             "impl", "lab", "dtype"}


def _legacy_case(d: dict) -> str:
    for k in _CASE_KEYS:
        v = d.get(k)
        if isinstance(v, (list, tuple)) and v:
            return shape_text(v, str(d.get("dtype", "")))
        if v not in (None, ""):
            return fmt(v)
    return ""


def _legacy_ratio(d: dict) -> tuple[str, float] | tuple[None, None]:
    hit = next((k for k in _RATIO_KEYS if finite(d.get(k))), None)
    if hit is None:
        hit = next((k for k, v in d.items() if k[:3] in ("vs ", "vs_") and k not in _NOT_PEER and finite(v)), None)
    return (hit, float(d[hit])) if hit else (None, None)


def _legacy_peer(d: dict, key: str | None) -> str:
    if d.get("peer"):
        return str(d["peer"])
    for pattern, text in ((r"target vs (.+)$", str(d.get("variant", ""))),
                          (r"\bx\s+(\S.*)$", str(d.get("target", "")))):
        m = re.search(pattern, text)
        if m:
            return m.group(1).strip()
    if key and key[:3] in ("vs ", "vs_"):
        return _PEER_WORDS.get(key[3:], key[3:])
    return "device copy (the lab's HBM ceiling)" if any("copy" in k for k in d) else "library peer"


def _legacy_ours(d: dict) -> str:
    v = str(d.get("variant") or "")
    if v and not v.startswith("target vs "):
        return v
    if d.get("ours"):
        return str(d["ours"])
    return next((k.split(" ")[0] for k in d if k.endswith(("GB/s", "TFLOP/s"))
                 and not k.startswith(("peer", "copy", "cublas"))), "")


def _from_legacy(cls, d: dict) -> Target:
    verdict = d.get("met")
    met_ = verdict if isinstance(verdict, bool) else None
    note = "" if verdict is None or isinstance(verdict, bool) else str(verdict)
    steady = d.get("steady") if isinstance(d.get("steady"), bool) else None
    goal = d.get("target", "")
    if "predicted" in d or "range" in d:          # a prediction: the measured value against what was predicted
        value = d.get("measured")
        shown = d.get("predicted", d.get("range"))
        detail = {k: v for k, v in d.items() if k not in _RESERVED}
        return cls(str(goal), "", "", value if finite(value) else None, fmt(shown), steady, met_,
                   note or str(d.get("source", "")), detail)
    key, ratio = _legacy_ratio(d)
    detail = {k: v for k, v in d.items() if k not in _RESERVED and k not in _CASE_KEYS and k != key}
    return cls(_legacy_case(d), _legacy_ours(d), _legacy_peer(d, key), ratio,
               goal if isinstance(goal, str) else fmt(goal), steady, met_, note, detail)

