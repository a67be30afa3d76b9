"""Every lab's headline, re-measured in one run: our best kernel against its library peer at the lab's headline case.

    python -m tools.headline                 # (GPU) all of them, then a before/after table
    python -m tools.headline --only 2.7 --only 4.6
    python -m tools.headline --list          # the cases (no GPU needed)

The headline case, kernel and peer of each lab are the ones the README's headline table shows (from
results/<gpu>/*.json, tools/readme_tables.py). Here both are timed again in interleaved rounds with the L2 flushed
(common.bench.interleaved), and the ratio ours / peer (speed; above 1 ours is faster) is set beside the committed one:
a change that moved code around must not move these. Writes results/<gpu>/headline.json (or --out).
Exit status: 0 when every case ran, 1 when one failed, 2 for a usage error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# lab number -> (phase, lab folder, case label as the README writes it, how to build the two contenders)
CASES = {
    "1.1": ("phase1_architecture", "lab01_device_tour", "2^28 float32", ("V", 2**28, "float32", "triton copy",
                                                                         "cupy.copyto")),
    "1.2": ("phase1_architecture", "lab02_vector_add", "2^28", ("V", 2**28, "float32",
                                                                "cuda 04 float4 streaming store", "torch.add")),
    "1.6": ("phase1_architecture", "lab06_matmul_naive", "4096^3 float32",
            ("V", (4096, 4096, 4096), "float32", "triton, one program per 64x64 tile",
             "cuBLAS (cupy.matmul, TF32 off)")),
    "2.1": ("phase2_cuda", "lab01_coalescing_transpose", "16384x16384", ("copy", (16384, 16384), "float32",
                                                                         "cuda 04 padded ilp")),
    "2.2": ("phase2_cuda", "lab02_bank_conflicts", "8388608x32 float32", ("V", 8388608, "float32", "triton tl.sum",
                                                                          "cupy.sum(axis=1)")),
    "2.3": ("phase2_cuda", "lab03_warp_shuffle", "2^28 float32", ("cumsum", 2**28, "float32",
                                                                  "triton tl.sum + tl.cumsum")),
    "2.6": ("phase2_cuda", "lab06_reduction", "sum 2^28 fp32", ("V", 2**28, "float32",
                                                                "cuda 09 single pass, last block", "torch.sum")),
    "2.7": ("phase2_cuda", "lab07_softmax", "32768x4096 float32", ("softmax", (32768, 4096), "float32",
                                                                   "cuda 05 registers, 16-byte loads")),
    "2.8": ("phase2_cuda", "lab08_sgemm", "4096^3", ("V", (4096, 4096, 4096), "float32", "cuda 11 autotuned",
                                                     "cuBLAS (cupy)")),
    "3.1": ("phase3_triton", "lab01_programming_model", "row sum 32768x4096 float32",
            ("V", (32768, 4096), "float32", "cuda 01 block per row, shared-memory tree", "cupy.sum(axis=1)")),
    "3.2": ("phase3_triton", "lab02_matmul", "matmul bfloat16 4096^3", ("V", (4096, 4096, 4096), "bfloat16",
                                                                        "triton matmul", "torch.matmul (cuBLAS)")),
    "3.3": ("phase3_triton", "lab03_fused_softmax", "softmax 32768x4096 float32",
            ("softmax", (32768, 4096), "float32", None)),
    "3.4": ("phase3_triton", "lab04_layernorm", "layernorm fwd 32768x4096 float32", ("layernorm", (32768, 4096),
                                                                                     "float32")),
    "4.2": ("phase4_optimization", "lab02_fusion", "GEMM + bias + gelu_tanh bf16 4096^3", ("epilogue", 4096,
                                                                                         "bfloat16")),
    "4.3": ("phase4_optimization", "lab03_tensor_cores", "8192^3 bfloat16",
            ("V", (8192, 8192, 8192), "bfloat16", "cuda 03 wgmma+TMA", "torch.matmul (cuBLAS)")),
    "4.6": ("phase4_optimization", "lab06_attention", "fwd D128 non-causal B4 H32 S4096 bf16",
            ("attention", (4, 32, 4096, 128), "bfloat16")),
    "4.7": ("phase4_optimization", "lab07_transformer_block", "8x2048x2048x16 bfloat16",
            ("block", (8, 2048, 2048, 16), "bfloat16")),
}


def _variant(L, name):
    for v in list(getattr(L, "VARIANTS", [])) + list(getattr(L, "PEERS", [])):
        if v.name == name:
            return v
    raise KeyError(f"{L.__name__}: no variant {name!r} (there are {[v.name for v in L.VARIANTS + L.PEERS]})")


def contenders(num: str):
    """(ours name, ours fn, peer name, peer fn) for a lab's headline case, inputs made and warmed up."""
    import numpy as np
    import torch

    from common import arrays, lab

    phase, name, _, spec = CASES[num]
    L = lab.lab_module(phase, name)
    kind = spec[0]
    rng = np.random.default_rng(20261203)
    if kind in ("V", "copy", "cumsum", "softmax"):
        size, dtype = spec[1], spec[2]
        inputs = L.make_inputs(size, dtype, rng, "cuda")
        if kind == "softmax" and spec[3] is None:   # lab 3.3: softmax_triton, the kernel this GPU's record picks
            ours_name, ours = "triton softmax_triton (tuned)", lab.Variant("softmax_triton", L.softmax_triton, "triton")
        else:
            ours_name, ours = spec[3], _variant(L, spec[3])
        out = ours.fn(*inputs)
        f_ours = lambda: ours.fn(*inputs, out=out)  # noqa: E731
        if kind == "V":
            peer = _variant(L, spec[4])
            pout = peer.fn(*inputs)
            return ours_name, f_ours, spec[4], (lambda: peer.fn(*inputs, out=pout))
        if kind == "copy":
            import cupy

            src = inputs[0]
            dst = cupy.empty_like(src)
            return ours_name, f_ours, "device copy (the lab's HBM ceiling)", (lambda: cupy.copyto(dst, src))
        tx = inputs[0] if arrays.library(inputs[0]) == "torch" else torch.from_dlpack(inputs[0])
        if kind == "cumsum":
            return ours_name, f_ours, "torch.cumsum (scan only)", (lambda: torch.cumsum(tx, dim=0))
        compiled = torch.compile(lambda t: torch.softmax(t, dim=-1), dynamic=False)
        compiled(tx)
        return ours_name, f_ours, "torch.compile", (lambda: compiled(tx))
    if kind == "layernorm":
        size, dtype = spec[1], spec[2]
        x, w, b, _ = L.make_inputs(size, dtype, rng, "cuda")
        ys = L.layernorm_fwd(x, w, b)
        B = lab.bench_module(phase, name)
        fwd, _ = B.compiled_peers()
        tx, tw, tb = (t if arrays.library(t) == "torch" else torch.from_dlpack(t) for t in (x, w, b))
        fwd(tx, tw, tb)
        return "triton", (lambda: L.layernorm_fwd(x, w, b, out=ys)), "torch.compile", (lambda: fwd(tx, tw, tb))
    if kind == "epilogue":
        import torch.nn.functional as F

        n, dt = spec[1], getattr(torch, spec[2])
        x = torch.randn(n, n, device="cuda", dtype=dt)
        w = torch.randn(n, n, device="cuda", dtype=dt) / n ** 0.5
        bias = torch.randn(n, device="cuda", dtype=dt)
        y = torch.empty(n, n, device="cuda", dtype=dt)
        L.linear(x, w, bias, activation="gelu_tanh", out=y)
        return ("ours", (lambda: L.linear(x, w, bias, activation="gelu_tanh", out=y)),
                "unfused pair: torch.matmul + bias + F.gelu",
                (lambda: F.gelu(torch.matmul(x, w) + bias, approximate="tanh")))
    if kind == "attention":
        b, h, s, d = spec[1]
        dt = getattr(torch, spec[2])
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dt) for _ in range(3))
        L.flash_attn_fwd(q, k, v, False)
        L.sdpa_fwd(q, k, v, False, "cudnn")
        return ("triton", (lambda: L.flash_attn_fwd(q, k, v, False)), "torch SDPA cuDNN",
                (lambda: L.sdpa_fwd(q, k, v, False, "cudnn")))
    if kind == "block":
        case, dtype = spec[1], spec[2]
        x, nh, *weights = L.make_inputs(case, dtype, rng, "cuda")
        plan = L.BlockPlan(x, nh, *weights)
        fu = lab.lab_module("phase4_optimization", "lab02_fusion")
        plan.tune_gemms(fu.LINEAR_CONFIGS[:4])
        # and each GEMM stage's kernel, as the lab's benchmark picks it (the faster of Triton and wgmma, where both run)
        lab.lab_module("phase4_optimization", "lab07_transformer_block", "stage_picks").pick_gemm_kernels(plan)
        module = L.torch_module(x, nh, *weights)
        compiled = torch.compile(module)
        with torch.no_grad():
            compiled(x)

        def comp():
            with torch.no_grad():
                compiled(x)
        return "ours", plan.run, "torch.compile", comp
    raise ValueError(kind)


def committed(num: str, gpu: str) -> dict | None:
    """The headline the README shows for this lab, from the committed JSON."""
    from tools import readme_tables as rt

    phase, name, _, _ = CASES[num]
    stem = f"phase{phase[5]}_{name}"
    path = os.path.join(ROOT, "results", gpu, stem + ".json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return rt.headline(json.load(f), stem)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", action="append", default=None, metavar="N.M", help="these labs only (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the cases and exit")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--out", default=None, help="write headline.json here (default results/<gpu>/)")
    args = ap.parse_args(argv)
    nums = args.only or list(CASES)
    bad = [n for n in nums if n not in CASES]
    if bad:
        ap.error(f"no headline for {', '.join(bad)}; the labs are {', '.join(CASES)}")
    from common import bench, cli, device, report
    from common.table import print_table

    if args.list:
        print_table([{"lab": n, "case": CASES[n][2], "kind": CASES[n][3][0]} for n in nums], title="headline cases")
        return 0
    device.require_gpu("timing the headlines")
    gpu = device.gpu_slug()
    before_gpu = gpu if os.path.isdir(os.path.join(ROOT, "results", gpu)) else "h200"
    rows, status = [], 0
    for num in cli.progress(nums, "headlines"):
        t0 = time.perf_counter()
        row = {"lab": num, "case": CASES[num][2]}
        try:
            on, fo, pn, fp = contenders(num)
            ts = bench.interleaved({on: fo, pn: fp}, rounds=args.rounds, flush_l2=True)
            ratio = ts[pn].median_ms / ts[on].median_ms
            row.update(ours=on, peer=pn, ours_ms=ts[on].median_ms, peer_ms=ts[pn].median_ms, ratio=ratio,
                       spread=max(ts[on].spread, ts[pn].spread))
        except Exception as e:  # noqa: BLE001 - report the lab and go on with the others
            row.update(error=f"{type(e).__name__}: {str(e)[:200]}")
            status = 1
        before = committed(num, before_gpu)
        row["before"] = before["ratio"] if before else None
        row["secs"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(f"  {num}: {row.get('ratio', row.get('error'))}", flush=True)
        try:
            import torch

            torch.cuda.empty_cache()
            import cupy

            cupy.get_default_memory_pool().free_all_blocks()
        except Exception:  # noqa: BLE001
            pass
    print_table(rows, ["lab", "case", "ours", "peer", "before", "ratio", "spread", "ours_ms", "peer_ms", "secs"],
                title=f"headlines, ours / peer (speed), before = committed results/{before_gpu}, after = this run")
    out = args.out or report.results_dir()
    print("wrote", report.write_json("headline", rows, out_dir=out))
    return status


if __name__ == "__main__":
    sys.exit(main())
