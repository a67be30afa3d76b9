"""Lab 4.1's measurements on a GPU: the roofs (--measure: HBM and each unit's peak as torch.matmul reaches it), the
k-FMA sweep from the memory roof to the compute roof, and the sweep's predictions checked."""
from __future__ import annotations

from common import bench, cli, device, report, target

from .lab import LAB, SWEEP_KS, SWEEP_N, Ceilings, fma_chain, sweep_counts
from .phrases import TARGET_HIGH, TARGET_LOW


# ---------------------------------------------------------------------------------------------------------------------
# On a GPU: measure the ceilings, run the AI sweep
# ---------------------------------------------------------------------------------------------------------------------
def measure_ceilings(n: int = 8192, quick: bool = False) -> dict:
    """HBM (common.device) and the peak of each unit as torch.matmul at n^3 (cuBLAS / cuBLASLt) reaches it."""
    import torch

    device.require_gpu("measuring the compute ceilings")
    if quick:
        n = 4096
    hbm = bench.ceilings()
    out = {"hbm_gbps": hbm["hbm_gbps"], "hbm_method": hbm.get("hbm_method"), "tflops": {}, "method": {},
           "errors": {}, "n": n}
    flops = 2.0 * n ** 3
    dev = "cuda"
    prev = torch.backends.cuda.matmul.allow_tf32
    try:
        for unit, dt, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                               ("bf16", torch.bfloat16, False), ("fp16", torch.float16, False)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, device=dev, dtype=torch.float32).to(dt)
            b = torch.randn(n, n, device=dev, dtype=torch.float32).to(dt)
            c = torch.empty(n, n, device=dev, dtype=dt)
            t = bench.bench(lambda a=a, b=b, c=c: torch.matmul(a, b, out=c), warmup_ms=50, rep_ms=150)
            out["tflops"][unit] = t.tflops(flops)
            out["method"][unit] = f"torch.matmul {n}^3 {dt} (allow_tf32={tf32})"
            del a, b, c
    finally:
        torch.backends.cuda.matmul.allow_tf32 = prev
    try:   # fp8: torch._scaled_mm wants A row-major, B column-major, fp32 scales; its API moved between releases
        a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
        b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.tensor(1.0, device=dev, dtype=torch.float32)
        t = bench.bench(lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True),
                        warmup_ms=50, rep_ms=150)
        out["tflops"]["fp8"] = t.tflops(flops)
        out["method"]["fp8"] = f"torch._scaled_mm {n}^3 float8_e4m3fn -> bf16, fast accumulation"
    except Exception as e:  # noqa: BLE001 - fp8 is optional; the datasheet figure stands in, and the reason is kept
        out["errors"]["fp8"] = f"{type(e).__name__}: {e}"[:280]
    return out


def run_sweep(ks=SWEEP_KS, n: int = SWEEP_N, hbm_gbps: float | None = None) -> list[dict]:
    """Time fma_chain at each k (L2 flushed): one measured point per AI."""
    import cupy

    x = cupy.random.RandomState(1).standard_normal(n, dtype=cupy.float32)
    y = cupy.empty_like(x)
    rows = []
    for k in cli.progress(ks, "AI sweep"):
        t = bench.bench(lambda k=k: fma_chain(x, k, out=y), warmup_ms=10, rep_ms=60)
        nbytes, flops = sweep_counts(n, k)
        rows.append(report.row(LAB, f"triton fma chain k={k}", "triton", (n,), "float32", t, nbytes=nbytes,
                               flops=flops, ceiling_gbps=hbm_gbps, kind="sweep", k=k, ai=flops / nbytes))
    return rows


def sweep_targets(sweep: list[dict], ceil: Ceilings) -> list[target.Target]:
    """The lab's predictions for the k-FMA sweep, measured: both ends of the roof reached (fractions of single
    timings against a roof: no peer, no rounds)."""
    out = []
    low = [r["gbps"] / ceil.hbm_gbps for r in sweep if r.get("k") is not None and r["k"] <= 8 and r.get("gbps")]
    ds = ceil.datasheet.get("fp32")
    high = [r["tflops"] / ds for r in sweep if ds and r.get("k") is not None and r["k"] >= 512 and r.get("tflops")]
    if low:
        out.append(target.prediction(TARGET_LOW, min(low), at_least=0.85))
    if high:
        out.append(target.prediction(TARGET_HIGH, min(high), at_least=0.75))
    return out


def sweep_from_rows(rows: list[dict]) -> list[dict]:
    """The AI-sweep rows found in a results folder (kind == 'sweep'), ordered by k."""
    return sorted((r for r in rows if r.get("kind") == "sweep" and r.get("ms")), key=lambda r: r.get("k", 0))
