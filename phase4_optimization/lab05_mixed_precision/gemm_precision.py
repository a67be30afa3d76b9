"""Lab 4.5's GEMMs on the GPU: the same product in every precision (cuBLAS through torch - fp32, TF32, bf16, fp16,
fp8 with per-tensor scales - and this lab's WMMA and Triton kernels with a 32- or a 16-bit accumulator), its error
against float64 and its speed, the error as K grows, and the 16-bit accumulator overflowing."""
from __future__ import annotations

import math

import numpy as np

from common import arrays, bench, cli, device
from common.bench import torch_tf32 as _tf32      # TF32 on or off for cuBLAS through torch, restored afterwards
from common.i18n import tr

from . import lab as L


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
