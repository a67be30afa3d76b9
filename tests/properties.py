"""Property sweep: random shapes, dtypes, offsets and strides for every wrapper, checked against the float64 reference.
The sweep itself; tests/test_properties_phase*.py run it, one file per phase (a GPU run spreads them over its workers).

A seeded sweep (the process seed, COURSE_SEED to replay, is printed in every failure) rather than hypothesis, so the
same test runs on the CPU machine (Triton variants in the interpreter, small draws) and on the GPU (every variant,
larger draws). Each draw picks:
  * a dtype among the variant's dtypes;
  * a size: each dimension log-uniform between the smallest and largest value that dimension takes in the lab's
    check cases (capped: the interpreter is slow), so a draw lands on awkward, non-tile-multiple sizes;
  * a layout for the inputs: contiguous, contiguous at an offset of 1-3 elements past an aligned address (every
    array, outputs too: vector paths must fall back), or a non-contiguous view (every other column), which a wrapper
    may refuse with ValueError/TypeError but must never get wrong.
Outputs are poisoned first, so an element a kernel forgets to write fails the check.
"""
import zlib

import numpy as np
import pytest

from common import arrays, check
from tests import bad_input as B
from tests.helpers import skip_unless_available
from tests.seeds import GATE_SEEDS, process_seed_is_gate

DRAWS = 4 if B.GPU else 3
LAYOUTS = ("offset", "strided", "contiguous", "offset")
CAP_1D = 70000 if B.GPU else 2500
CAP_ND = 600 if B.GPU else 48


def _dims(size):
    return tuple(size) if isinstance(size, (tuple, list)) else (size,)


# dimensions tied to the kernels or to each other, kept at a check case's value: lab06's head dim D (64/128 only),
# lab07's model width d and head count H (d % H == 0 and d / H a supported head dim)
FIXED = {"lab06_attention": (3,), "lab07_transformer_block": (2, 3)}


def draw_size_templated(mod, rng):
    """Phase 4 sizes mix dimensions with fields that are not sizes (lab02's op name, lab06's causal flag) and with
    dimensions tied to the kernels or each other (FIXED): start from a random check case and redraw only its other
    dimensions, log-uniform between the smallest and largest value the cases give them (capped)."""
    cases = [c[0] for c in B.cases(mod)]
    tmpl = cases[int(rng.integers(len(cases)))]
    if not isinstance(tmpl, (tuple, list)):
        return draw_size(mod, rng)
    out = list(tmpl)
    fixed = FIXED.get(mod.__name__.split(".")[1], ())     # phaseN.labNN_name.lab: the lab folder
    for j, t in enumerate(tmpl):
        if not B.numeric([t]) or j in fixed:
            continue
        vals = [c[j] for c in cases if isinstance(c, (tuple, list)) and len(c) == len(tmpl) and B.numeric([c[j]])]
        lo, hi = max(1, min(vals)), min(max(vals), CAP_ND)
        if hi > lo:
            out[j] = min(max(int(round(np.exp(rng.uniform(np.log(lo), np.log(hi + 1))))), lo), hi)
    return tuple(out)


def draw_size(mod, rng):
    sizes = [_dims(c[0]) for c in B.cases(mod)]
    rank = len(sizes[0])
    out = []
    for j in range(rank):
        vals = [s[j] for s in sizes if len(s) == rank]
        lo, hi = max(1, min(vals)), max(vals)
        hi = max(lo, min(hi, CAP_1D if rank == 1 else CAP_ND))
        out.append(int(round(np.exp(rng.uniform(np.log(lo), np.log(hi + 1))))) if hi > lo else lo)
        out[-1] = min(max(out[-1], lo), hi)
    return out[0] if rank == 1 and not isinstance(B.cases(mod)[0][0], (tuple, list)) else tuple(out)


# a gate run sweeps every gate seed; a run with a chosen COURSE_SEED (make fuzz) sweeps that one
SEEDS = GATE_SEEDS if process_seed_is_gate() else (check.seed(),)


def params(phases):
    """pytest params (mod, v, seed) for every variant of ours in `phases` and every seed of this run."""
    return [pytest.param(mod, v, s, id=f"{q.split('.')[-1]}:{v.name}:seed{s}",
                         marks=[] if v.runs_without_gpu else [pytest.mark.gpu])
            for q, mod, v in B.ours(phases) for s in SEEDS]


def sweep(mod, v, seed):
    """The random draws of one variant; phase 4's sizes are templated (they mix dimensions with other fields)."""
    templated = mod.__name__.startswith("phase4_")
    _sweep(mod, v, draw_size_templated if templated else draw_size, seed)


def _sweep(mod, v, draw, seed):
    skip_unless_available(v)
    # the same streams check.rng(offset) gives when COURSE_SEED = seed, so a failing draw replays with COURSE_SEED
    rng = np.random.default_rng([seed, 9000 + zlib.crc32(v.name.encode()) % 1000])
    for d in range(DRAWS):
        size = draw(mod, rng)
        dtypes = [dt for dt in v.dtypes if not (v.cannot_serve and v.cannot_serve(size, dt))]
        if not dtypes:                  # a case this variant has no kernel for (lab 4.2's parts)
            continue
        dtype = str(rng.choice(dtypes))
        layout = LAYOUTS[d % len(LAYOUTS)]
        what = f"{v.name}: draw {d} size {size} {dtype} {layout} [seed {seed}: COURSE_SEED={seed} replays it]"
        inputs = list(mod.make_inputs(size, dtype, np.random.default_rng([seed, d]), B.WHERE))
        ref = B.reference(mod, inputs)
        first = B.array_positions(inputs)[0]
        out = B.out_for(mod, ref, dtype, inputs[first])
        if layout == "offset":
            k = int(rng.integers(1, 4))
            inputs = [B.offset(x, k) if B.is_array(x) else x for x in inputs]
            out = tuple(B.offset(o, k) for o in out) if isinstance(out, tuple) else B.offset(out, k)
        elif layout == "strided":
            inputs[first] = B.strided(inputs[first])
        try:
            res = v.fn(*inputs, out=out)
        except (TypeError, ValueError) as e:
            if layout == "contiguous":
                raise AssertionError(f"{what}: refused a valid input: {e}") from None
            if layout == "offset":
                assert "align" in str(e).lower(), f"{what}: refused an offset view without saying why: {e}"
            continue
        B.assert_right(mod, res, ref, size, dtype, what)
        if layout != "strided":
            # the answer went into the caller's out (the offset view), not a private copy
            outs = res if isinstance(res, tuple) else (res,)
            given = out if isinstance(out, tuple) else (out,)
            for r, o in zip(outs, given):
                assert arrays.ptr(r) == arrays.ptr(o), f"{what}: the result is not the out array it was given"
