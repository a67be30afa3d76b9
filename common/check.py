"""Correctness: compare with a float64 NumPy reference, on fresh random inputs, into poisoned outputs.

Rules every lab follows:
  * the reference is float64 NumPy, written for clarity, never the code under test;
  * inputs are drawn fresh each run (the seed is printed so a failure can be replayed with COURSE_SEED=...);
  * outputs are filled with NaN before the kernel runs, so an element the kernel forgot to write fails the check;
  * the tolerance depends on the dtype of the arithmetic: ||out - ref|| / ||ref|| must be below `rel_norm`, and every
    element must satisfy |out - ref| <= elem * (|ref| + mean|ref|); NaN or Inf where the reference has a finite value
    always fails, and where the reference has +-Inf or NaN the output must have the same.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from . import arrays


@dataclass(frozen=True)
class Tol:
    rel_norm: float
    elem: float
    atol: float = 0.0   # an absolute floor, for outputs that are exactly 0 in exact arithmetic (say why when used)


# float32 arithmetic lands near 1e-7 per operation; long sums and dot products grow that with the length, so
# labs with long reductions pass a looser Tol of their own (and say why).
TOLERANCES = {
    "float64": Tol(1e-12, 1e-10),
    "float32": Tol(1e-5, 1e-4),
    "tf32": Tol(2e-3, 2e-2),
    "float16": Tol(2e-3, 1e-2),
    "bfloat16": Tol(1e-2, 5e-2),
}


# Unit roundoff (half an ulp at 1) of each storage format: what one rounding to it costs, relative. Error models of
# labs that round to a 16-bit format build their limits from these.
UNIT_ROUNDOFF = {"bfloat16": 2.0**-8, "float16": 2.0**-11, "float32": 2.0**-24}


def tolerance(dtype: str) -> Tol:
    try:
        return TOLERANCES[arrays.dtype_name(dtype)]
    except KeyError:
        raise ValueError(f"no tolerance for dtype {dtype!r}; expected one of {sorted(TOLERANCES)}") from None


@dataclass
class Comparison:
    ok: bool
    rel_norm_err: float
    max_abs_err: float
    n_bad: int
    n: int
    message: str

    def __bool__(self) -> bool:
        return self.ok


def compare(out, ref, dtype: str = "float32", tol: Tol | None = None) -> Comparison:
    """Compare an output (any library) with a float64 reference."""
    tol = tol or tolerance(dtype)
    o = np.asarray(arrays.to_numpy(out), dtype=np.float64)
    r = np.asarray(ref, dtype=np.float64)
    if o.shape != r.shape:
        return Comparison(False, np.inf, np.inf, r.size, r.size, f"shape {o.shape} != reference shape {r.shape}")
    n = r.size
    if n == 0:
        return Comparison(True, 0.0, 0.0, 0, 0, "empty")
    finite = np.isfinite(r)
    # non-finite reference values must be reproduced exactly (same infinity, NaN for NaN)
    special_bad = ~finite & ~((o == r) | (np.isnan(o) & np.isnan(r)))
    of, rf = o[finite], r[finite]
    err = np.abs(of - rf)
    bad_nonfinite = ~np.isfinite(of)
    err = np.where(bad_nonfinite, np.inf, err)
    scale = float(np.mean(np.abs(rf))) if rf.size else 0.0
    # an all-zero reference has no scale to be relative to: only the norm test below (then absolute) applies
    elem_bad = err > tol.atol + tol.elem * (np.abs(rf) + scale) if scale > 0 or tol.atol > 0 else \
        np.zeros(err.shape, bool)
    ref_norm = float(np.linalg.norm(rf))
    # the absolute floor, spread over the elements, counts as part of the reference's norm
    diff_norm = max(0.0, float(np.linalg.norm(np.where(bad_nonfinite, 0.0, of - rf))) - tol.atol * np.sqrt(rf.size))
    rel = diff_norm / ref_norm if ref_norm > 0 else diff_norm
    if bad_nonfinite.any():
        rel = np.inf
    n_bad = int(elem_bad.sum() + special_bad.sum())
    max_abs = float(err.max()) if err.size else 0.0
    ok = n_bad == 0 and rel <= tol.rel_norm
    if ok:
        msg = f"ok: rel err {rel:.2e}, max abs {max_abs:.2e}"
    else:
        where_bad = np.flatnonzero(~np.isfinite(o.ravel()) & np.isfinite(r.ravel()))
        first = ""
        if where_bad.size:
            first = f"; {where_bad.size} non-finite outputs (first at flat index {int(where_bad[0])}: unwritten?)"
        n_special = int(special_bad.sum())
        if n_special:
            at = int(np.flatnonzero(special_bad.ravel())[0])
            first += (f"; {n_special} outputs differ where the reference is NaN/Inf (first at flat index {at}: "
                      f"reference {r.ravel()[at]}, output {o.ravel()[at]})")
        msg = (f"MISMATCH: rel err {rel:.2e} (limit {tol.rel_norm:.0e}), {n_bad - n_special}/{n} finite elements "
               f"outside {tol.elem:.0e}, max abs {max_abs:.2e}{first}")
    return Comparison(ok, rel, max_abs, n_bad, n, msg)


def assert_close(out, ref, dtype: str = "float32", tol: Tol | None = None, what: str = "") -> Comparison:
    c = compare(out, ref, dtype, tol)
    if not c.ok:
        raise AssertionError(f"{what + ': ' if what else ''}{c.message} [seed {seed()}]")
    return c


def poison(x):
    """Fill an output with NaN (floats) or an unlikely integer pattern, so unwritten elements show up."""
    dt = arrays.dtype_name(x)
    arrays.fill(x, float("nan") if dt in arrays.FLOAT_DTYPES else int(np.iinfo(dt).max))
    return x


def poisoned(shape, dtype: str, like):
    return poison(arrays.empty(shape, dtype, like))


# Guard bands: an output is a view into a larger poisoned buffer, with GUARD_BEFORE elements before it and
# GUARD_AFTER after it. A kernel that writes past its output's end (a tail without a mask, a <= instead of a <) lands
# in a band, and guard_damage() finds it - on the GPU, and in the Triton interpreter, where such a write may neither
# crash nor touch the output itself. The leading band is 256 bytes for 2-byte types, so the view keeps the buffer's
# alignment for 16-byte vector paths.
GUARD_BEFORE = 128
GUARD_AFTER = 4096
_GUARDS: dict[int, tuple] = {}
# The bands of a float output hold a NaN no arithmetic produces (a signalling NaN with an odd payload), compared bit
# for bit: a kernel that writes NaN past the end (a masked-out lane's -inf - -inf) changes the bits, so it is caught
# too. (width of the integer view, the pattern)
BAND_BITS = {"float64": (64, 0x7FF4BADBADBADBAD), "float32": (32, 0x7FBADBAD), "float16": (16, 0x7D5B),
             "bfloat16": (16, 0x7FA5)}


def _int_view(x, width: int):
    """The same memory as signed integers of `width` bits (NumPy, CuPy or torch)."""
    if arrays.library(x) == "torch":
        import torch

        return x.view({16: torch.int16, 32: torch.int32, 64: torch.int64}[width])
    return x.view({16: np.int16, 32: np.int32, 64: np.int64}[width])


def _mark_bands(buf, n: int) -> None:
    dt = arrays.dtype_name(buf)
    if dt not in BAND_BITS:
        return                                   # integer outputs keep their poison value in the bands too
    width, pattern = BAND_BITS[dt]
    bits = _int_view(buf, width)
    bits[:GUARD_BEFORE] = pattern
    bits[GUARD_BEFORE + n:] = pattern


def guarded(shape, dtype: str, like):
    """A poisoned output of `shape` inside a buffer with guard bands on both sides (a NaN pattern of their own)."""
    n = int(np.prod(shape)) if len(shape) else 1
    buf = poison(arrays.empty((GUARD_BEFORE + n + GUARD_AFTER,), dtype, like))
    _mark_bands(buf, n)
    out = buf[GUARD_BEFORE: GUARD_BEFORE + n].reshape(tuple(shape))
    _GUARDS[id(out)] = (buf, n, out)
    return out


def guard_damage(out) -> str:
    """'' when the guard bands around a guarded() output are still poison, else what was written there (and
    forget the bands); '' for an output that has none."""
    entry = _GUARDS.pop(id(out), None)
    if entry is None or entry[2] is not out:
        return ""
    buf, n, _ = entry
    dt = arrays.dtype_name(buf)
    if dt in BAND_BITS:
        width, pattern = BAND_BITS[dt]
        bands = arrays.to_numpy(_int_view(buf, width))
        poison_value = np.array(pattern).astype(bands.dtype)
    else:
        bands, poison_value = arrays.to_numpy(buf), np.iinfo(dt).max
    before, after = bands[:GUARD_BEFORE], bands[GUARD_BEFORE + n:]

    def changed(a):
        return np.flatnonzero(a != poison_value)

    b, a = changed(before), changed(after)
    if not b.size and not a.size:
        return ""
    parts = []
    if b.size:
        parts.append(f"{b.size} element(s) before the output's start (the nearest {GUARD_BEFORE - int(b.max())} "
                     "before it)")
    if a.size:
        parts.append(f"{a.size} element(s) past its end (the first {int(a.min())} after the last element)")
    return "wrote outside the output: " + " and ".join(parts)


_SEED: int | None = None


def seed() -> int:
    """The seed of this process's random inputs: COURSE_SEED if set, else fresh from the OS (printed on failure)."""
    global _SEED
    if _SEED is None:
        env = os.environ.get("COURSE_SEED")
        _SEED = int(env) if env else int.from_bytes(os.urandom(4), "little")
    return _SEED


def rng(offset: int = 0) -> np.random.Generator:
    """A fresh generator derived from the process seed (pass an offset to get independent streams)."""
    return np.random.default_rng([seed(), offset])


# sizes that break kernels: 1, tiny, primes, one off a power of two, non-multiples of every tile
AWKWARD_1D = (1, 2, 3, 5, 31, 127, 1000, 1023, 1025, 4097, 65537, 1_000_003)
AWKWARD_1D_SMALL = (1, 3, 31, 127, 1000, 1025)
