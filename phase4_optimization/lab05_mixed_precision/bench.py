"""Lab 4.5's measuring side: the formats, overflow and loss-scaling tables (computed on the CPU, every machine), the
softmax / layernorm error table (the interpreter at small sizes, the GPU at 4096 x 4096), the GEMM precision table
(error and TFLOP/s), the error-vs-K sweep and the accumulator overflow on the GPU, what NVRTC made of the WMMA kernel,
and the plots (redrawn from the JSON by --replot)."""
from __future__ import annotations

import math
import os
import re

import numpy as np

from common import arrays, bench, cli, cuda, device, lab, plan, report
from common.i18n import tr
from common.bench import torch_tf32 as _tf32      # TF32 on or off for cuBLAS through torch, restored afterwards
from common.triton_support import INTERPRETER

from . import lab as L

CPU_NOTE = ("\nRan on the CPU: the tables above, the Triton kernels in the interpreter (tl.dot with an fp16 "
            "accumulator, the naive 16-bit softmax/layernorm, phase 3's kernels). The WMMA kernel was only compiled. "
            "GEMM precisions, fp8 and timings need a GPU.")


# ---------------------------------------------------------------------------------------------------------------------
# Tables computed on the CPU: range, precision, overflow, underflow, loss scaling
# ---------------------------------------------------------------------------------------------------------------------
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
            say("past the top: e4m3fn has no inf; this cast {what} (casts differ: saturate or NaN), either way the value "
                "is lost: hence per-tensor scales", what=say("saturated to 448") if v == 448 else say("gave {v}", v=v)))
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


# ---------------------------------------------------------------------------------------------------------------------
# Softmax / layernorm error tables (CPU in the interpreter at small sizes, GPU at 4096 x 4096)
# ---------------------------------------------------------------------------------------------------------------------
def _err(out, ref) -> dict:
    o = np.asarray(arrays.to_numpy(out), np.float64)
    r = np.asarray(ref, np.float64)
    fin = np.isfinite(r)
    d = o[fin] - r[fin]
    bad = int((~np.isfinite(o[fin])).sum())
    nrm = float(np.linalg.norm(r[fin]))
    rel = float(np.linalg.norm(np.where(np.isfinite(d), d, 0.0))) / nrm if nrm else float("nan")
    return {"rel err": rel if not bad else float("inf"), "max abs err": float(np.nanmax(np.abs(d))) if d.size else 0.0,
            "non-finite": bad}


def _rounding_floor(ref, dtype: str) -> dict:
    import torch

    r = torch.from_numpy(np.ascontiguousarray(ref, np.float64)).to(getattr(torch, dtype))
    return _err(r, ref)


def _torch(x):
    import torch

    return x if arrays.library(x) == "torch" else torch.from_dlpack(x) if arrays.on_device(x) else torch.from_numpy(x)


def _interpretable(dtype: str, fn):
    """Triton's interpreter does arithmetic on NumPy arrays, and NumPy has no bf16: it adds and multiplies bf16 tiles
    as their raw 16-bit patterns (seen with Triton 3.9: inf and 1e38 out of a bf16 sum). Kernels that convert to fp32
    first (phase 3's) are fine; a kernel whose point is bf16 arithmetic can only run on a GPU."""
    if INTERPRETER and dtype == "bfloat16":
        def skipped():
            raise NotImplementedError("bf16 arithmetic needs a GPU (the interpreter has no bf16 arithmetic)")
        return skipped
    return fn


def norm_ops_table(rows_: int, cols: int, dtypes=("float32", "bfloat16", "float16"), seed: int = 5) -> list[dict]:
    """Softmax and layernorm (forward y) errors against float64, per dtype: the rounding floor, torch, the
    repository's Triton kernels (phase 3), and the naive 16-bit-sum kernels of this lab."""
    import torch.nn.functional as F

    sm = lab.lab_module("phase3_triton", "lab03_fused_softmax")
    ln = lab.lab_module("phase3_triton", "lab04_layernorm")

    where = lab.where()
    out = []
    for dt in dtypes:
        rng = np.random.default_rng(seed)
        (x,) = sm.make_inputs((rows_, cols), dt, rng, where)
        ref = sm.reference(np.asarray(arrays.to_numpy(x), np.float64))
        cands = {"rounding floor (exact, rounded to dtype)": None,
                 "torch.softmax": lambda: _torch(x).softmax(-1),
                 "phase 3 Triton softmax (fp32 inside)": lambda: sm.softmax_triton(x)}
        if dt in L.LOWP_DTYPES:
            cands[f"naive Triton, {dt} sums"] = _interpretable(dt, lambda: L.softmax_lowp(x))
        for name, fn in cands.items():
            try:
                e = _rounding_floor(ref, dt) if fn is None else _err(fn(), ref)
            except Exception as ex:  # noqa: BLE001 - a peer missing for a dtype on this machine is reported
                e = {"rel err": None, "max abs err": None, "non-finite": None, "note": f"{type(ex).__name__}: {ex}"}
            out.append({"op": "softmax", "dtype": dt, "shape": f"{rows_}x{cols}", "impl": name, **e})
        xs, w, b, _dy = ln.make_inputs((rows_, cols), dt, np.random.default_rng(seed + 1), where)
        ref = ln.reference(*(np.asarray(arrays.to_numpy(a), np.float64) for a in (xs, w, b, _dy)))[0]
        cands = {"rounding floor (exact, rounded to dtype)": None,
                 "torch F.layer_norm": lambda: F.layer_norm(_torch(xs), (cols,), _torch(w), _torch(b), ln.EPS),
                 "phase 3 Triton layernorm (fp32 inside)": lambda: ln.layernorm_fwd(xs, w, b)[0]}
        if dt in L.LOWP_DTYPES:
            cands[f"naive Triton, {dt} sums"] = _interpretable(dt, lambda: L.layernorm_lowp(xs, w, b, ln.EPS))
        for name, fn in cands.items():
            try:
                e = _rounding_floor(ref, dt) if fn is None else _err(fn(), ref)
            except Exception as ex:  # noqa: BLE001
                e = {"rel err": None, "max abs err": None, "non-finite": None, "note": f"{type(ex).__name__}: {ex}"}
            out.append({"op": "layernorm", "dtype": dt, "shape": f"{rows_}x{cols}", "impl": name, **e})
    return out


# ---------------------------------------------------------------------------------------------------------------------
# GPU: GEMM in each precision (cuBLAS through torch), error vs float64 and speed
# ---------------------------------------------------------------------------------------------------------------------
def fp8_available(gpu: device.DeviceInfo | None = None) -> tuple[bool, str]:
    """Whether the fp8 rows can run on `gpu` (default: the GPU at hand; a profile in a plan): fp8 tensor cores
    (sm_89 and newer) and a torch with float8_e4m3fn and _scaled_mm."""
    import torch

    if gpu is None:
        if not device.has_gpu():
            return False, tr("needs a GPU")
        gpu = device.info()
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        return False, tr("torch {version} has no float8_e4m3fn / _scaled_mm", version=torch.__version__)
    if gpu.cc < 89:
        return False, tr("fp8 tensor cores need sm_89 or newer, this GPU is {arch}", arch=gpu.arch)
    return True, ""


def fp8_prepare(a_f32, b_f32):
    """Per-tensor scaled e4m3 copies: A8 = A / sa, B8 = B / sb with s = amax / 448 (so the largest value maps to
    e4m3's largest), B8 column-major as cuBLASLt wants. Returns (a8, b8, sa, sb)."""
    import torch

    e4m3 = torch.float8_e4m3fn
    top = float(torch.finfo(e4m3).max)
    sa = (a_f32.abs().max().float() / top).clamp(min=1e-12).reshape(())
    sb = (b_f32.abs().max().float() / top).clamp(min=1e-12).reshape(())
    a8 = (a_f32 / sa).to(e4m3).contiguous()
    b8 = (b_f32 / sb).to(e4m3).t().contiguous().t()
    return a8, b8, sa, sb


def fp8_matmul(a8, b8, sa, sb, *, fast_accum: bool = False):
    """(sa * sb) * (A8 @ B8) on the fp8 tensor cores, fp32 output where the build allows it (see _fp8_call).
    fast_accum=False: cuBLASLt adds the tensor cores' partial sums into fp32 regularly; True: it does not."""
    import torch

    global _FP8_OUT
    if _FP8_OUT is None:
        _FP8_OUT = torch.float32
    return _fp8_call(a8, b8, sa, sb, fast_accum)


def _fp8_call(a8, b8, sa, sb, fast_accum):
    """torch._scaled_mm (torch 2.11: mat_a, mat_b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum):
    out = (sa * sb) * (A8 @ B8), fp32 output. Older torch returned (out, amax): take the first."""
    import torch

    global _FP8_OUT
    try:
        r = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=_FP8_OUT, use_fast_accum=fast_accum)
    except RuntimeError:
        if _FP8_OUT is torch.bfloat16:
            raise
        # a build that refuses an fp32 output for per-tensor scales: bf16 output (adds ~2^-9 rounding, far below
        # fp8's own ~4e-2)
        _FP8_OUT = torch.bfloat16
        r = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=_FP8_OUT, use_fast_accum=fast_accum)
    return r[0] if isinstance(r, tuple) else r


_FP8_OUT = None     # set on first use: torch.float32, or bfloat16 where fp32 output is refused


def _gpu_err(out, ref) -> dict:
    d = out.double() - ref
    fin = bool(torch_isfinite_all(out))
    return {"rel err": float(d.norm() / ref.norm()) if fin else float("inf"),
            "max abs err": float(d.abs().max()) if fin else float("inf"),
            "max err / rms(ref)": float(d.abs().max() / ref.pow(2).mean().sqrt()) if fin else float("inf")}


def torch_isfinite_all(x) -> bool:
    import torch

    return bool(torch.isfinite(x).all())


def gemm_precisions(a_f32, b_f32):
    """{name: (make, note)}: make() returns a zero-argument function that computes the product (inputs converted
    once, outside the timed call) in that precision, reading the fp32 inputs a_f32, b_f32 (torch CUDA)."""
    import torch

    out = {}
    a_f16, b_f16 = a_f32.half(), b_f32.half()
    ab, bb = a_f32.bfloat16(), b_f32.bfloat16()

    def fp32_inputs(allow_tf32: bool):
        def make():
            c = torch.empty(a_f32.shape[0], b_f32.shape[1], device=a_f32.device)

            def run():
                with _tf32(allow_tf32):
                    return torch.matmul(a_f32, b_f32, out=c)
            return run
        return make

    out["fp32 (TF32 off)"] = (fp32_inputs(False), "cuBLAS SGEMM, CUDA cores")
    out["tf32"] = (fp32_inputs(True), "fp32 in memory, 10-bit mantissa into the tensor cores, fp32 accumulate")
    out["bf16"] = (lambda: (lambda: torch.matmul(ab, bb)), "bf16 in/out, fp32 accumulate")
    out["fp16"] = (lambda: (lambda: torch.matmul(a_f16, b_f16)), "fp16 in/out, fp32 accumulate")
    ok8, why8 = fp8_available()
    if ok8:
        a8, b8, sa, sb = fp8_prepare(a_f32, b_f32)
        out["fp8 e4m3 (per-tensor scales)"] = (lambda: (lambda: fp8_matmul(a8, b8, sa, sb)),
                                               "torch._scaled_mm, fp32 out, accumulation promoted to fp32")
        out["fp8 e4m3, use_fast_accum"] = (lambda: (lambda: fp8_matmul(a8, b8, sa, sb, fast_accum=True)),
                                           "the tensor cores' own reduced-precision accumulator throughout")
    a_f16c = cupy_view(a_f16)
    b_f16c = cupy_view(b_f16)
    for acc in ("float32", "float16"):
        c = cupy_empty((int(a_f32.shape[0]), int(b_f32.shape[1])))
        out[f"our WMMA, fp16 in, {acc[5:]}-bit acc"] = (
            lambda c=c, acc=acc: (lambda: L.wmma_gemm(a_f16c, b_f16c, c, acc=acc)),
            f"kernels.cu, ACC_HALF={int(acc == 'float16')} (simple kernel: not tuned)")
        c2 = torch.empty(a_f32.shape[0], b_f32.shape[1], device=a_f32.device)
        out[f"our Triton dot, fp16 in, {acc[5:]}-bit acc"] = (
            lambda c2=c2, acc=acc: (lambda: L.dot_gemm(a_f16, b_f16, c2, acc=acc)),
            "dot_acc_kernel " + dot_tile())
    return out, ("" if ok8 else why8)


def dot_tile() -> str:
    d = L.dot_config().values
    return f"{d['BLOCK_M']}x{d['BLOCK_N']}x{d['BLOCK_K']}, {d['num_warps']} warps, {d['num_stages']} stages"


def cupy_view(t):
    import cupy

    return cupy.from_dlpack(t)


def cupy_empty(shape):
    import cupy

    return cupy.empty(shape, dtype=cupy.float32)


def _device_randn(shape, seed):
    """fp32 N(0, 1) on the GPU (common.arrays.device_randn), as the torch tensor the precisions below convert."""
    import torch

    return torch.from_dlpack(arrays.device_randn(shape, "float32", seed))


def gemm_table(n: int = L.GEMM_N, rep_ms: float = 40.0) -> tuple[list[dict], str]:
    """Every precision at n^3: relative error against the float64 product of the fp32 inputs (so rounding the inputs
    to the precision counts: that is what choosing the precision costs), and TFLOP/s."""
    import torch

    a_f32, b_f32 = _device_randn((n, n), 1), _device_randn((n, n), 2)
    ref = a_f32.double() @ b_f32.double()          # cuBLAS DGEMM: IEEE float64, ~1e-16, far below every error here
    fns, why8 = gemm_precisions(a_f32, b_f32)
    rows = []
    for name, (make, note) in cli.progress(list(fns.items()), tr("GEMM precisions at {n}^3", n=n)):
        try:
            fn = make()
            res = fn()
            res = torch.from_dlpack(res) if arrays.library(res) == "cupy" else res
            e = _gpu_err(res.float(), ref)
            t = bench.bench(fn, rep_ms=rep_ms)
        except Exception as ex:  # noqa: BLE001 - one precision this build cannot run must not hide the others
            rows.append({"precision": name, "n": n, "rel err": None, "max abs err": None, "max err / rms(ref)": None,
                         "ms": None, "tflops": None, "spread": None, "note": f"FAILED {type(ex).__name__}: {ex}"})
            continue
        if name.startswith("fp8") and _FP8_OUT is not None and _FP8_OUT != torch.float32:
            note += " (bf16 output: this build refused fp32)"
        rows.append({"precision": name, "n": n, **e, "ms": t.median_ms, "tflops": t.tflops(2.0 * n ** 3),
                     "spread": t.spread, "note": note})
    del ref
    torch.cuda.empty_cache()
    return rows, why8


K_SWEEP = (256, 1024, 4096, 16384)


def k_sweep(ks=K_SWEEP, mn: int = 1024) -> list[dict]:
    """Error against float64 as K grows (M = N = mn), each precision; no timing. Two references: the fp32 inputs'
    exact product (what the precision costs end to end), and the fp16-rounded inputs' exact product (what the
    accumulator alone costs, for the fp16-input kernels)."""
    import torch

    rows = []
    for k in cli.progress(list(ks), "K sweep"):
        a_f32, b_f32 = _device_randn((mn, k), 10 + k), _device_randn((k, mn), 20 + k)
        ref = a_f32.double() @ b_f32.double()
        ref16 = a_f32.half().double() @ b_f32.half().double()
        fns, _ = gemm_precisions(a_f32, b_f32)
        for name, (make, _note) in fns.items():
            try:
                res = make()()
            except Exception:  # noqa: BLE001 - reported (with its reason) in the 4096^3 table
                continue
            res = torch.from_dlpack(res) if arrays.library(res) == "cupy" else res
            e = _gpu_err(res.float(), ref)
            e16 = _gpu_err(res.float(), ref16) if "fp16 in" in name or name == "fp16" else {}
            rows.append({"precision": name, "K": k, "rel err": e["rel err"], "max err / rms(ref)":
                         e["max err / rms(ref)"], "rel err vs fp16-input product": e16.get("rel err"),
                         "model fp16 acc": (0.41 * L.U16 * math.sqrt(k) if "16-bit acc" in name else None)})
        torch.cuda.empty_cache()
    return rows


def accumulator_overflow_gpu(k: int = 4096) -> list[dict]:
    """All-ones A times B = 32: every C element is 32 K = 131072 (> 65504). And the same with B's second half -32:
    exact answer 0, but the running sum passes 65504 on the way."""
    import cupy

    rows = []
    for case, bcol in (("A = 1, B = 32: C = 32 K", np.full(k, 32.0)),
                       ("A = 1, B = +32 then -32: C = 0, partial sums reach 16 K",
                        np.concatenate([np.full(k // 2, 32.0), np.full(k - k // 2, -32.0)]))):
        a = cupy.ones((64, k), dtype=cupy.float16)
        b = cupy.asarray(np.tile(bcol[:, None], (1, 64)), dtype=cupy.float16)
        exact = float(bcol.sum())
        for name, fn in (("WMMA fp32 acc", L.wmma_acc_f32), ("WMMA fp16 acc", L.wmma_acc_f16),
                         ("Triton fp32 acc", L.dot_acc_f32), ("Triton fp16 acc", L.dot_acc_f16)):
            out = fn(a, b)
            v = cupy.asnumpy(out)
            rows.append({"case": case, "K": k, "kernel": name, "exact": exact, "C[0,0]": float(v[0, 0]),
                         "all equal exact": bool(np.all(v == exact))})
    return rows


# ---------------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------------
def plot_k_sweep(rows, path) -> str:
    ks = sorted({r["K"] for r in rows})
    names = list(dict.fromkeys(r["precision"] for r in rows))
    by = {(r["precision"], r["K"]): r["rel err"] for r in rows}
    series = {n: [by.get((n, k)) if by.get((n, k)) not in (None, float("inf")) else None for k in ks] for n in names}
    return report.plot_lines(path, ks, series, xlabel="K (M = N = 1024)", ylabel="relative error vs float64",
                             title="GEMM error against the float64 product of the fp32 inputs, as K grows",
                             logy=True, xticks=ks, xticklabels=[str(k) for k in ks])


def plot_speed_vs_error(rows, path, gpu: str | None = None) -> str:
    plt = report.pyplot()
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for r in rows:
        if r["rel err"] in (None, float("inf")) or not r.get("tflops"):
            continue
        ax.scatter(r["rel err"], r["tflops"], s=30)
        ax.annotate(r["precision"], (r["rel err"], r["tflops"]), xytext=(4, 3), textcoords="offset points", fontsize=7)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(tr("relative error vs float64 (4096^3, standard normal inputs)"))
    ax.set_ylabel("TFLOP/s")
    ax.set_title(tr("GEMM speed against error per precision on {gpu}", gpu=gpu or tr('the GPU')), fontsize=11)
    ax.grid(True, which="both", alpha=0.3)
    return report.save(fig, path)


def show_compile_report(arch: str) -> list[dict]:
    rows = []
    for acc, d in (("fp32", 0), ("fp16", 1)):
        try:
            rep = cuda.compile_report(L.CU, arch, defines={"ACC_HALF": d})
        except (cuda.ToolMissing, cuda.CompileError) as e:
            print(tr("compile report skipped: {error}", error=e))
            return rows
        k = rep[L.WMMA_KERNEL]
        hmma = sorted({ln.split()[0] for ln in k.sass if ln.split() and ln.split()[0].startswith("HMMA")})
        rows.append({"build": f"ACC_HALF={d} ({acc} accumulator)", "arch": arch, "regs": k.registers,
                     "smem B": k.smem_bytes, "spills B": k.spills, "HMMA": k.sass_counts.get("HMMA", 0),
                     "HMMA opcode": " ".join(hmma) or "(no cuobjdump)"})
    report.print_table([dict(r, build=tr("ACC_HALF={d} ({acc} accumulator)", d=d, acc=acc))
                        for r, (acc, d) in zip(rows, (("fp32", 0), ("fp16", 1)))],
                       title=tr("{file} compiled with NVRTC for {arch}: the one define changes the accumulator (HMMA "
                                ".F32 vs .F16) and halves the accumulator staging", file=os.path.basename(L.CU),
                                arch=arch))
    return rows

# ---------------------------------------------------------------------------------------------------------------------
# What the driver calls: before the checks, after them, the compile report, the benchmark, the plots
# ---------------------------------------------------------------------------------------------------------------------
def cpu_tables(quick: bool, said: bool = False) -> dict:
    """The tables that need no GPU: formats, overflow/rounding/underflow cases, loss scaling (said: their words in the
    chosen language, for printing)."""
    ls = loss_scaling_table(gradient_sample(200_000 if quick else 1_000_000))
    return {"formats": format_table(said), "overflow": overflow_table(said), "loss_scaling": ls}


# ---------------------------------------------------------------------------------------------------------------------
# Predictions from the GPU's description
# ---------------------------------------------------------------------------------------------------------------------
PRECISION_PEAKS = (("fp32 (TF32 off)", "fp32_tflops"), ("tf32", "tf32_tflops"), ("bf16", "bf16_tflops"),
                   ("fp16", "fp16_tflops"), ("fp8 e4m3", "fp8_tflops"))


def predict(gpu: device.DeviceInfo) -> dict:
    """The GEMM table's predictions for `gpu`: its n (fitted to the GPU's memory), the arithmetic intensity against
    the bf16 (else fp16) and fp32 ridge points, and each precision's floor time and rate relative to 16-bit, from the
    datasheet peaks (a precision the GPU has no unit for says so)."""
    n, _ = plan.fit(L.GEMM_N, L.bench_bytes, gpu)
    flops = 2.0 * n ** 3
    ai16 = flops / (3 * n * n * 2)             # compulsory bytes in 16-bit: A and B read, C written
    out = {"GEMM": tr("{n}^3: {gflop:.1f} GFLOP, {ai:.0f} FLOP/B with 16-bit inputs", n=n, gflop=flops / 1e9,
                      ai=ai16)}
    bw = gpu.hbm_gbps
    ref = gpu.peak("bf16_tflops") or gpu.peak("fp16_tflops")
    for name, key in (("bf16 (else fp16) tensor cores", "bf16_tflops" if gpu.peak("bf16_tflops") else "fp16_tflops"),
                      ("fp32 CUDA cores", "fp32_tflops")):
        if gpu.peak(key):
            out[tr("ridge point, {unit}", unit=tr(name))] = tr(
                "{ridge:.0f} FLOP/B: compute-bound by {times:.0f}x", ridge=gpu.peak(key) * 1e3 / bw,
                times=ai16 / (gpu.peak(key) * 1e3 / bw))
    for name, key in PRECISION_PEAKS:
        pk = gpu.peak(key)
        if not pk:
            out[tr("{name} floor", name=name)] = tr("no such unit on this GPU (skipped, or run by emulation)")
            continue
        rel = tr(", {times:.2g}x the 16-bit rate", times=pk / ref) if ref and key not in ("bf16_tflops",
                                                                                        "fp16_tflops") else ""
        out[tr("{name} floor", name=name)] = tr("{ms:.3f} ms at {tflops:g} TFLOP/s{rel}",
                                                ms=flops / (pk * 1e12) * 1e3, tflops=pk, rel=rel)
    ok8, why8 = fp8_available(gpu)
    if not ok8:
        out[tr("fp8 rows")] = tr("skipped: {why}", why=why8)
    return out


def explain(args) -> None:
    gpu = device.current(args.arch)
    report.print_table([{"prediction": k, "value": v} for k, v in predict(gpu).items()],
                       title=tr("GEMM {n}^3 per precision on {gpu}: datasheet peaks (leads, not measurements)",
                                n=L.GEMM_N, gpu=gpu.label()))
    t = cpu_tables(args.quick, said=True)
    report.print_table(t["formats"], title="Formats (torch.finfo): range and precision")
    report.print_table(t["overflow"], ["case", "dtype", "computed", "exact", "rel err", "why"],
                       title="Overflow, rounding and underflow, computed on the CPU (torch / NumPy)")
    report.print_table(t["loss_scaling"], ["dtype", "scale", "flushed to 0", "subnormal", "overflow (inf)",
                                           "median rel err (finite, nonzero)", "n"],
                       title="Loss scaling: a log-normal gradient population cast to fp16 after scaling by s")
    print("  -> " + loss_scaling_story(t["loss_scaling"]))


def norm_shape(quick: bool) -> tuple[int, int]:
    return L.NORM_SHAPE if device.has_gpu() else ((8, 512) if quick else (32, 1024))


def _said_norm(r: dict) -> dict:
    """A norm_ops_table row as printed: its implementation and note in the chosen language."""
    impl, note = r["impl"], r.get("note")
    m = re.fullmatch(r"naive Triton, (\w+) sums", impl)
    impl = tr("naive Triton, {dtype} sums", dtype=m.group(1)) if m else tr(impl)
    if isinstance(note, str) and note.startswith("NotImplementedError: "):
        note = "NotImplementedError: " + tr(note[len("NotImplementedError: "):])
    return dict(r, impl=impl, **({"note": note} if "note" in r else {}))


def show_norm_ops(shape) -> list[dict]:
    norm = norm_ops_table(*shape)
    report.print_table([_said_norm(r) for r in norm],
                       ["op", "dtype", "shape", "impl", "rel err", "max abs err", "non-finite", "note"],
                       title="Softmax and layernorm against float64: fp32 arithmetic inside keeps the error at the "
                             "output-rounding floor")
    return norm


def extra_checks(args) -> bool:
    """The softmax / layernorm error table, here when nothing is benchmarked (the benchmark makes it otherwise)."""
    if not args.bench:
        show_norm_ops(norm_shape(args.quick))
    return True


_COMPILE_ROWS: list[dict] = []      # this run's compile report, for the JSON


def compile_report(args) -> None:
    _COMPILE_ROWS[:] = show_compile_report(args.arch)


def benchmark(ctx) -> lab.Result:
    quick = ctx.quick
    norm = show_norm_ops(norm_shape(quick))
    n, note = plan.fit(2048 if quick else L.GEMM_N, L.bench_bytes, device.info(), what="the GEMM table's n")
    if note:
        print(tr(note))
    gemm, why8 = gemm_table(n, rep_ms=20.0 if quick else 40.0)
    if why8:
        print(tr("fp8 skipped: {why}", why=why8))
    fp16_row = next(r for r in gemm if r["precision"] == "fp16")
    for r in gemm:
        r["vs cuBLAS fp16"] = r["tflops"] / fp16_row["tflops"] if r["tflops"] and fp16_row["tflops"] else None
    sweep = k_sweep(K_SWEEP[:2] if quick else K_SWEEP)
    ovf_gpu = accumulator_overflow_gpu()
    rows = [report.row(L.LAB, r["precision"], "peer" if not r["precision"].startswith("our") else "ours",
                       [r["n"]] * 3, r["precision"], None, ms=r["ms"], tflops=r["tflops"], rel_err=r["rel err"],
                       max_err_rms=r["max err / rms(ref)"], spread=r["spread"], note=r["note"]) for r in gemm]
    meta = dict(k_sweep=sweep, accumulator_overflow=ovf_gpu, norm_ops=norm, **cpu_tables(quick), fp8_skipped=why8,
                compile_report=_COMPILE_ROWS, device=device.info().as_dict())
    return lab.Result(rows=rows, meta=meta, tables=[
        ([dict(r, note=tr(r["note"])) for r in gemm],
         ["precision", "n", "rel err", "max err / rms(ref)", "ms", "tflops", "vs cuBLAS fp16", "spread", "note"],
         tr("GEMM {n}^3 per precision: error against the float64 product of the fp32 inputs, speed", n=n)),
        (sweep, None, tr("GEMM error vs K (M = N = 1024); model fp16 acc = 0.41 u sqrt(K), one rounding per product "
                         "(the hardware rounds less often)")),
        ([dict(r, case=tr(r["case"])) for r in ovf_gpu], None, tr("Accumulator overflow on the GPU (K = 4096)"))])


def plot(data: dict, out_dir: str) -> list[str]:
    """The error-vs-K sweep and speed against error per precision, from the JSON."""
    gpu = data.get("gpu", "GPU")
    paths = []
    if data.get("k_sweep"):
        paths.append(plot_k_sweep(data["k_sweep"], os.path.join(out_dir, f"{L.LAB}_error_vs_k.png")))
    pts = [{"precision": r["variant"], "rel err": r.get("rel_err"), "tflops": r.get("tflops")} for r in data["rows"]]
    if pts:
        paths.append(plot_speed_vs_error(pts, os.path.join(out_dir, f"{L.LAB}_speed_vs_error.png"), gpu))
    return paths
