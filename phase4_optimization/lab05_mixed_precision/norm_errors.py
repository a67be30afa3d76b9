"""Lab 4.5's softmax and layernorm error table: each dtype's output against float64 - the rounding floor, torch,
phase 3's Triton kernels (fp32 inside) and this lab's naive 16-bit-sum kernels - in the interpreter at small sizes on
the CPU, on the GPU at the benchmark's shape; and the table as printed."""
from __future__ import annotations

import re

import numpy as np

from common import arrays, device, lab, report
from common.i18n import tr
from common.triton_support import INTERPRETER

from . import lab as L


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

    from phase3_triton.lab03_fused_softmax import lab as fused_softmax
    from phase3_triton.lab04_layernorm import lab as layernorm

    where = lab.where()
    out = []
    for dt in dtypes:
        rng = np.random.default_rng(seed)
        (x,) = fused_softmax.make_inputs((rows_, cols), dt, rng, where)
        ref = fused_softmax.reference(np.asarray(arrays.to_numpy(x), np.float64))
        cands = {"rounding floor (exact, rounded to dtype)": None,
                 "torch.softmax": lambda: _torch(x).softmax(-1),
                 "phase 3 Triton softmax (fp32 inside)": lambda: fused_softmax.softmax_triton(x)}
        if dt in L.LOWP_DTYPES:
            cands[f"naive Triton, {dt} sums"] = _interpretable(dt, lambda: L.softmax_lowp(x))
        for name, fn in cands.items():
            try:
                e = _rounding_floor(ref, dt) if fn is None else _err(fn(), ref)
            except Exception as ex:  # noqa: BLE001 - a peer missing for a dtype on this machine is reported
                e = {"rel err": None, "max abs err": None, "non-finite": None, "note": f"{type(ex).__name__}: {ex}"}
            out.append({"op": "softmax", "dtype": dt, "shape": f"{rows_}x{cols}", "impl": name, **e})
        xs, w, b, _dy = layernorm.make_inputs((rows_, cols), dt, np.random.default_rng(seed + 1), where)
        ref = layernorm.reference(*(np.asarray(arrays.to_numpy(a), np.float64) for a in (xs, w, b, _dy)))[0]
        cands = {"rounding floor (exact, rounded to dtype)": None,
                 "torch F.layer_norm": lambda: F.layer_norm(_torch(xs), (cols,), _torch(w), _torch(b), layernorm.EPS),
                 "phase 3 Triton layernorm (fp32 inside)": lambda: layernorm.layernorm_fwd(xs, w, b)[0]}
        if dt in L.LOWP_DTYPES:
            cands[f"naive Triton, {dt} sums"] = _interpretable(dt, lambda: L.layernorm_lowp(xs, w, b, layernorm.EPS))
        for name, fn in cands.items():
            try:
                e = _rounding_floor(ref, dt) if fn is None else _err(fn(), ref)
            except Exception as ex:  # noqa: BLE001
                e = {"rel err": None, "max abs err": None, "non-finite": None, "note": f"{type(ex).__name__}: {ex}"}
            out.append({"op": "layernorm", "dtype": dt, "shape": f"{rows_}x{cols}", "impl": name, **e})
    return out


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
