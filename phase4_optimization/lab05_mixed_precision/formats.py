"""Lab 4.5's tables computed on the CPU, on every machine: each format's range and precision, overflow, rounding and
underflow cases computed by running them, and loss scaling on a gradient population cast to fp16 (with its story)."""
from __future__ import annotations

import math

import numpy as np

from common import arrays
from common.i18n import tr

from . import lab as L


def _f(x) -> float:
    return float(np.asarray(arrays.to_numpy(x) if arrays.library(x) == "torch" else x, np.float64))


def fp16_sequential_sum(values, acc_dtype=np.float16) -> float:
    """Add values one after another in acc_dtype, rounding after every addition (what an fp16 accumulator does)."""
    s = acc_dtype(0)
    with np.errstate(over="ignore"):
        for v in np.asarray(values, acc_dtype):
            s = acc_dtype(s + v)
    return float(s)


def format_table(said: bool = False) -> list[dict]:
    """Each format's range and precision, read from torch.finfo (and one computed value each); said: the words in
    the chosen language (the table printed; the JSON keeps the English)."""
    import torch

    say = tr if said else str.format
    rows = []
    for name, dt in (("float32", torch.float32), ("tf32 (fp32 storage)", None), ("bfloat16", torch.bfloat16),
                     ("float16", torch.float16), ("float8 e4m3fn", getattr(torch, "float8_e4m3fn", None)),
                     ("float8 e5m2", getattr(torch, "float8_e5m2", None))):
        if name.startswith("tf32"):
            rows.append({"format": name, "bits": 19, "mantissa bits": 10, "max": _f(torch.finfo(torch.float32).max),
                         "smallest normal": _f(torch.finfo(torch.float32).tiny), "smallest subnormal": say("fp32's"),
                         "eps (1 ulp at 1)": 2.0 ** -10, "note": say("tensor-core input format; stored as fp32")})
            continue
        if dt is None:
            continue
        fi = torch.finfo(dt)
        sub = float(fi.smallest_normal) * float(fi.eps)  # one ulp of the subnormal range
        rows.append({"format": name, "bits": fi.bits, "mantissa bits": int(round(-math.log2(float(fi.eps)))),
                     "max": float(fi.max), "smallest normal": float(fi.smallest_normal), "smallest subnormal": sub,
                     "eps (1 ulp at 1)": float(fi.eps), "note": ""})
    return rows


def overflow_table(said: bool = False) -> list[dict]:
    """Range and precision cases, each computed by running the operation (torch / NumPy on the CPU); said: the words in
    the chosen language (the table printed; the JSON keeps the English)."""
    import torch

    say = tr if said else str.format
    f16, bf16, f32 = torch.float16, torch.bfloat16, torch.float32
    t = torch.tensor
    rows = []

    def add(case, dtype, value, exact, why):
        rows.append({"case": say(case), "dtype": dtype, "computed": value, "exact": exact, "why": say(why)})

    add("65504 * 2", "float16", _f(t(L.FP16_MAX, dtype=f16) * 2), 131008.0, "fp16 max is 65504: the product is inf")
    add("65504 * 2", "bfloat16", _f(t(L.FP16_MAX, dtype=bf16) * 2), 131008.0,
        "bf16 has fp32's exponent (max 3.4e38); 65504 itself rounds to 65536 in bf16")
    add("x * x, x = 256", "float16", _f(t(256.0, dtype=f16) * t(256.0, dtype=f16)), 65536.0,
        "65536 > 65504: a square of a modest activation overflows")
    for x in (11.0, 11.09, 11.1):
        add(say("exp({x}) computed in fp32, stored as fp16", x=x), "float16", _f(torch.exp(t(x, dtype=f32)).to(f16)),
            math.exp(x), "ln(65504) = 11.0898; values from 65520 up round to inf")
    vals = np.full(4096, 32.0)
    add("sum of 4096 x 32, fp16 accumulator", "float16", fp16_sequential_sum(vals, np.float16), 131072.0,
        "the running sum passes 65504 after 2047 terms, then stays inf")
    add("sum of 4096 x 32, fp32 accumulator", "float32", fp16_sequential_sum(vals, np.float32), 131072.0,
        "fp32 holds it exactly (stored back to fp16 it would still overflow)")
    add("256 + 1", "bfloat16", _f(t(256.0, dtype=bf16) + t(1.0, dtype=bf16)), 257.0,
        "8 significant bits: the spacing at 256 is 2, and the tie rounds to even (256)")
    add("256 + 1", "float16", _f(t(256.0, dtype=f16) + t(1.0, dtype=f16)), 257.0,
        "11 significant bits: exact up to 2048")
    add("2048 + 1", "float16", _f(t(2048.0, dtype=f16) + t(1.0, dtype=f16)), 2049.0,
        "fp16's spacing at 2048 is 2: the same loss, 8x further out")
    add("1e-8 stored as fp16", "float16", _f(t(1e-8, dtype=f32).to(f16)), 1e-8,
        "below half the smallest subnormal (2^-25 = 2.98e-8): flushed to 0")
    add("5e-8 stored as fp16", "float16", _f(t(5e-8, dtype=f32).to(f16)), 5e-8,
        "rounds to the smallest subnormal 2^-24 = 5.96e-8 (19% off)")
    add("1e-8 stored as bf16", "bfloat16", _f(t(1e-8, dtype=f32).to(bf16)), 1e-8, "bf16 reaches 1e-38: fine")
    e4m3 = getattr(torch, "float8_e4m3fn", None)
    if e4m3 is not None:
        add("448 stored as fp8 e4m3fn", "float8_e4m3fn", _f(t(448.0).to(e4m3).float()), 448.0, "e4m3fn's largest value")
        v = _f(t(500.0).to(e4m3).float())
        add("500 stored as fp8 e4m3fn", "float8_e4m3fn", v, 500.0,
            say("past the top: e4m3fn has no inf; this cast {what} (casts differ: saturate or NaN), either way "
                "the value is lost: hence per-tensor scales",
                what=say("saturated to 448") if v == 448 else say("gave {v}", v=v)))
        add("0.3 stored as fp8 e4m3fn", "float8_e4m3fn", _f(t(0.3).to(e4m3).float()), 0.3,
            "4 significant bits: 0.3 becomes 0.3125")
    for r in rows:
        c, e = r["computed"], r["exact"]
        r["rel err"] = abs(c - e) / abs(e) if math.isfinite(c) else c
    return rows


LOSS_SCALES = (1, 2**8, 2**16, 2**24, 2**32)


def gradient_sample(n: int = 1_000_000, seed: int = 0) -> np.ndarray:
    """A gradient population, fp32: random signs, log10|g| ~ Normal(-7.5, 0.75) (95% between 3e-9 and 1e-6), plus
    1% of larger values, log10|g| ~ Normal(-4, 1), the gradients of a few sensitive weights."""
    rng = np.random.default_rng(seed)
    lg = rng.normal(-7.5, 0.75, n)
    big = rng.random(n) < 0.01
    lg[big] = rng.normal(-4.0, 1.0, int(big.sum()))
    return (np.sign(rng.random(n) - 0.5) * 10.0 ** lg).astype(np.float32)


def loss_scaling_table(g: np.ndarray, scales=LOSS_SCALES) -> list[dict]:
    """For each scale s: cast s*g (fp32) to fp16 with torch and count zeros, subnormals and infs; the gradient is
    recovered as fp16(s*g) / s in fp32. bf16 at scale 1 for comparison."""
    import torch

    gt = torch.from_numpy(g)
    rows = []
    for dtype, scs in (("float16", scales), ("bfloat16", (1,))):
        tdt = getattr(torch, dtype)
        tiny = float(torch.finfo(tdt).smallest_normal)
        for s in scs:
            q = (gt * float(s)).to(tdt)
            zero = (q == 0) & (gt != 0)
            inf = torch.isinf(q)
            sub = (q != 0) & (q.abs() < tiny)
            ok = ~zero & ~inf
            back = q.float()[ok] / float(s)
            rel = ((back.double() - gt[ok].double()).abs() / gt[ok].double().abs())
            rows.append({"dtype": dtype, "scale": f"2^{int(math.log2(s))}", "scale_value": float(s),
                         "flushed to 0": float(zero.double().mean()), "subnormal": float(sub.double().mean()),
                         "overflow (inf)": float(inf.double().mean()),
                         "median rel err (finite, nonzero)": float(rel.median()) if rel.numel() else float("nan"),
                         "n": int(g.size)})
    return rows


def loss_scaling_story(rows: list[dict]) -> str:
    by = {(r["dtype"], r["scale"]): r for r in rows}
    a, b, top = by[("float16", "2^0")], by[("float16", "2^16")], by[("float16", "2^32")]
    bf = by[("bfloat16", "2^0")]
    return tr("fp16 at scale 1 flushes {flushed:.1%} of these gradients to zero (|g| < 2^-25 = 2.98e-8) and keeps "
              "{subnormal:.1%} as subnormals with few bits; scaling the loss by 2^16 = 65536 moves every value up 16 "
              "binades: {flushed16:.2%} flushed, {overflow16:.3%} overflow. Too large a scale overflows instead: 2^32 "
              "turns {overflow32:.2%} into inf (|g| > 65504 / 2^32 = 1.5e-5), which is why dynamic loss scaling halves "
              "the scale whenever an inf appears and grows it slowly otherwise. bf16 at scale 1: {bf_flushed:.2%} "
              "flushed (its range reaches 1e-38), median relative error {bf_err:.1e} from its 8 bits: no scaling "
              "needed, precision is its cost.", flushed=a['flushed to 0'], subnormal=a['subnormal'],
              flushed16=b['flushed to 0'], overflow16=b['overflow (inf)'], overflow32=top['overflow (inf)'],
              bf_flushed=bf['flushed to 0'], bf_err=bf['median rel err (finite, nonzero)'])


def cpu_tables(quick: bool, said: bool = False) -> dict:
    """The tables that need no GPU: formats, overflow/rounding/underflow cases, loss scaling (said: their words in the
    chosen language, for printing)."""
    ls = loss_scaling_table(gradient_sample(200_000 if quick else 1_000_000))
    return {"formats": format_table(said), "overflow": overflow_table(said), "loss_scaling": ls}
