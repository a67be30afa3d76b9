"""Nsight Compute profiles of the kernels that missed their targets, next to the library kernel they were measured
against, so the closing notes can say what the hardware counters show instead of guessing.

    python -m tools.profile [--cases a,b] [--out results/h200/profile]     # on a GPU machine with ncu
    python -m tools.profile --list                                         # the cases (any machine)
    python -m tools.profile --summarize DIR                                # table from the CSVs a run wrote

How it works: one Python process sets up every case, runs each once to compile and warm it up, then runs it once
more between cudaProfilerStart and cudaProfilerStop. `ncu --profile-from-start off` records only those launches,
with every section of `--set full` (about 40 replays of each kernel, clocks left alone: `--clock-control none`).
The raw page is exported as CSV and reduced to one table of the numbers that explain a GEMM or an attention kernel:
tensor-pipe activity, issue-slot use, achieved occupancy, the top warp-stall reasons, shared-memory bank conflicts,
L2 hit rate and DRAM throughput. Without a GPU or without ncu the command says so in one sentence and exits 2.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from common import report  # noqa: E402 - after the path is set, for `python tools/profile.py`
from common.lab import lab_module  # noqa: E402

# case -> what it is (the shape and config are in _setup)
CASES = {
    "mma_default": "lab 4.3 tc_02_mma_sync, default 128x256x32 4 stages, bf16 4096^3",
    "mma_128x128": "lab 4.3 tc_02_mma_sync, 128x128x32 4 stages (lab 4.4's best), bf16 4096^3",
    "cublas_gemm": "torch.matmul (cuBLAS) bf16 4096^3, the peer of both",
    "linear_gelu": "lab 4.2 Triton GEMM + bias + GELU epilogue, bf16 4096^3, 128x256x64 8 warps 3 stages",
    "attn_triton": "lab 4.6 Triton flash forward, B4 H32 S4096 D128 non-causal, bf16",
    "attn_cudnn": "torch SDPA cuDNN forward, same shape",
    "attn_cuda": "lab 4.6 CUDA C mma.sync flash forward (attn_02), same shape",
    "attn_flash": "torch SDPA flash forward, same shape",
    "attn_cuda02w": "lab 4.6 CUDA C mma.sync rung 02w (32 rows a warp, 32-key tiles), same shape, non-causal",
    "attn_hopper03": "lab 4.6 CUDA C Hopper rung 03 (wgmma + TMA, warp-specialized), same shape, non-causal",
    "attn_hopper04": "lab 4.6 CUDA C Hopper rung 04 (rung 03 + ping-pong consumers), same shape, non-causal",
    "attn_hopper04_s3": "lab 4.6 CUDA C Hopper rung 04 with a 3-stage K/V ring, same shape, non-causal",
    "attn_hopper05": "lab 4.6 CUDA C Hopper rung 05 (softmax under the previous P V, 3 stages), same shape, non-causal",
    "attn_hopper05_s2": "lab 4.6 CUDA C Hopper rung 05 with a 2-stage K/V ring, same shape, non-causal",
    "attn_hopper06": "lab 4.6 CUDA C Hopper rung 06 (rung 05 + ping-pong at the GEMM issue, 3 stages), same shape, "
                     "non-causal",
    "attn_hopper07": "lab 4.6 CUDA C Hopper rung 07 (rung 05 persistent: one block per SM, 3 stages), same shape, "
                     "non-causal",
    "attn_triton_tma": "lab 4.6 Triton flash forward, K/V through TMA descriptors (128x128 tile, 3 stages), same shape",
    "attn_triton_pipe": "lab 4.6 Triton flash forward, TMA + the unmasked loop pipelined by hand (PIPE, 128x64 tile)",
    "mma_db": "lab 4.3 tc_02_mma_sync, 128x128x32 4 stages, fragments double-buffered (DB=1), bf16 4096^3",
    "mma_256_db": "lab 4.3 tc_02_mma_sync, 128x256x64 3 stages, fragments double-buffered (DB=1), bf16 4096^3",
    "mma_xt": "lab 4.3 tc_02_mma_sync, 128x128x32 4 stages, cross-tile loop (XT=1), bf16 4096^3",
    "mma_xt6": "lab 4.3 tc_02_mma_sync, 128x128x32 6 stages, cross-tile loop (XT=1), bf16 4096^3",
    "mma_peak": "lab 4.3 tc_00_mma_peak: mma.sync alone on register operands (the instruction's ceiling)",
    "wgmma_4096": "lab 4.3 rung 03 gemm_wgmma_tma (wgmma + TMA, 128x256x64, 4 stages), bf16 4096^3",
    "wgmma_8192": "lab 4.3 rung 03 gemm_wgmma_tma, bf16 8192^3",
    "wgmma_4096_c2": "lab 4.3 rung 03 with 2-block clusters sharing B by TMA multicast (CLUSTER=2), bf16 4096^3",
    "wgmma_8192_c2": "lab 4.3 rung 03 with 2-block clusters (CLUSTER=2), bf16 8192^3",
    "wgmma_4096_tma": "lab 4.3 rung 03 with the TMA-store epilogue (EPI_TMA=1, C via shared memory, 3 stages), 4096^3",
    "wgmma_8192_tma": "lab 4.3 rung 03 with the TMA-store epilogue (EPI_TMA=1, 3 stages), bf16 8192^3",
    "wgmma_4096_tma2": "lab 4.3 rung 03, TMA-store epilogue in two passes (C_PASSES=2, 4 stages), bf16 4096^3",
    "wgmma_8192_tma2": "lab 4.3 rung 03, TMA-store epilogue in two passes (C_PASSES=2, 4 stages), bf16 8192^3",
    "wgmma_4096_c2_tma": "lab 4.3 rung 03, 2-block clusters and the TMA-store epilogue, bf16 4096^3",
    "cublas_8192": "torch.matmul (cuBLAS) bf16 8192^3, the peer of wgmma_8192",
    "sgemm_best": "lab 2.8 rung 11 (the recorded winner), fp32 4096^3",
    "sgemm_db": "lab 2.8 sgemm_10_cp_async, the winner's tile with fragments double-buffered (DB=1), fp32 4096^3",
    "sgemm_cublas_tile": "lab 2.8 sgemm_10_cp_async, 256x128x8 tile, 64x64 warps, 16x8 threads (cuBLAS's shape)",
    "cublas_sgemm": "cuBLAS SGEMM (CuPy, TF32 off) fp32 4096^3, the peer of the three above",
    "ln_single": "lab 3.4 Triton layernorm fwd, rows in registers (1 row, 8 warps), fp32 32768x4096",
    "ln_chunked": "lab 3.4 Triton layernorm fwd, chunked three-pass loop (4096-column chunk, 8 warps), same shape",
    "ln_chunked_2048": "lab 3.4 Triton layernorm fwd, chunked three-pass loop (2048-column chunks, 8 warps)",
    "ln_persist": "lab 3.4 Triton layernorm fwd, persistent rows-in-registers, next row prefetched (4/SM, 8 warps)",
    "ln_welford": "lab 3.4 Triton layernorm fwd, two-pass Welford (2048-column chunks, 8 warps: 8 values a thread)",
    "ln_welford_v4": "lab 3.4 Triton layernorm fwd, two-pass Welford (2048-column chunks, 16 warps: 4 values a thread)",
    "ln_tuned": "lab 3.4 Triton layernorm fwd with the recorded (tuned) config, same shape",
    "ln_compile": "torch.compile F.layer_norm (Inductor's kernel), same shape, the peer",
    "block_ours": "lab 4.7 block B8 S2048 d2048 H16 bf16, ours (the GEMMs' default tile, the one the lab's timing "
                  "picks at this size): every kernel of one forward (profile it alone: its rows all take its name)",
    "block_compile": "torch.compile of lab 4.7's torch module, same shape: every kernel of one forward (alone too)",
    "block_wgmma": "lab 4.7 block, same shape, its GEMMs by lab 4.3's wgmma + TMA kernel with fused epilogues "
                   "(gemm='wgmma'): every kernel of one forward (alone too)",
}

# (label, metric name, scale) read from ncu's raw page; the first name present wins
METRICS = [
    ("time us", ["gpu__time_duration.sum"], "time"),
    ("SM %", ["sm__throughput.avg.pct_of_peak_sustained_elapsed"], 1),
    ("tensor pipe %", ["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                       "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"], 1),
    ("gmma pipe %", ["sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"], 1),
    ("issue active %", ["sm__inst_issued.avg.pct_of_peak_sustained_active",
                        "smsp__issue_active.avg.pct_of_peak_sustained_active"], 1),
    ("occupancy %", ["sm__warps_active.avg.pct_of_peak_sustained_active"], 1),
    ("regs", ["launch__registers_per_thread"], 1),
    ("smem KiB", ["launch__shared_mem_per_block_dynamic"], 1 / 1024),
    ("L2 hit %", ["lts__t_sector_hit_rate.pct"], 1),
    ("DRAM %", ["dram__throughput.avg.pct_of_peak_sustained_elapsed",
                "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"], 1),
    ("smem conflicts", ["l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
                        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"], 1),
]
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"


def _setup(case: str):
    """A zero-argument callable that launches the case's kernel(s) once on prepared inputs."""
    import torch

    torch.manual_seed(0)
    g = lambda *shape: torch.randn(*shape, device="cuda", dtype=torch.bfloat16)  # noqa: E731
    if case == "mma_peak":
        from phase4_optimization.lab03_tensor_cores import bench as tcb
        return tcb.mma_peak_launch(g(1))[0]
    if case.startswith(("mma_", "wgmma_", "cublas_")) and case != "cublas_sgemm":
        tc = lab_module("phase4_optimization", "lab03_tensor_cores")
        n = 8192 if "8192" in case else 4096
        a, b = g(n, n), g(n, n)
        c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        if case.startswith("cublas_"):
            return lambda: torch.matmul(a, b, out=c)
        if case.startswith("wgmma_"):
            from phase4_optimization.lab03_tensor_cores import wgmma as wg
            cl = 2 if "_c2" in case else 1
            ep = "_tma" in case                           # the TMA-store epilogue (EPI_TMA=1)
            cp = 2 if case.endswith("_tma2") else 1       # ... in two passes, keeping 4 stages (C_PASSES=2)
            return lambda: wg.gemm_wgmma(a, b, out=c, b_kmajor=False, cluster=cl, tma_store=ep, c_passes=cp)
        cfg = {"mma_default": tc.DEFAULT_CONFIG, "mma_128x128": tc._cfg(128, 128, 32, 64, 64, 4),
               "mma_db": dict(tc._cfg(128, 128, 32, 64, 64, 4), DB=1),
               "mma_256_db": dict(tc._cfg(128, 256, 64, 64, 64, 3), DB=1),
               "mma_xt": dict(tc._cfg(128, 128, 32, 64, 64, 4), XT=1),
               "mma_xt6": dict(tc._cfg(128, 128, 32, 64, 64, 6), XT=1)}[case]
        return lambda: tc.gemm_mma(a, b, c, config=cfg)
    if case.startswith("sgemm_") or case == "cublas_sgemm":
        import cupy

        sg = lab_module("phase2_cuda", "lab08_sgemm")
        n = 4096
        rs = cupy.random.RandomState(0)
        a, b = rs.standard_normal((n, n), dtype=cupy.float32), rs.standard_normal((n, n), dtype=cupy.float32)
        c = cupy.empty((n, n), dtype=cupy.float32)
        if case == "cublas_sgemm":
            return lambda: sg.peer_cublas(a, b, out=c)
        best = sg.tuned_config()[0]
        cfg = {"sgemm_best": best, "sgemm_db": sg.AsyncConfig(**{**best.defines, "DB": 1}),
               "sgemm_cublas_tile": sg.AsyncConfig(256, 128, 8, 64, 64, 16, 8, 3, 1)}[case]
        return lambda: sg.run(cfg, a, b, out=c)
    if case == "linear_gelu":
        fu = lab_module("phase4_optimization", "lab02_fusion")
        n = 4096
        x, w, bias = g(n, n), g(n, n) / math.sqrt(n), g(n)
        y = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        cfg = fu._gcfg(128, 256, 64, 8, 3)
        return lambda: fu.linear(x, w, bias, activation="gelu_tanh", out=y, config=cfg)
    if case.startswith("attn_"):
        at = lab_module("phase4_optimization", "lab06_attention")
        q, k, v = (g(4, 32, 4096, 128) for _ in range(3))
        if case == "attn_triton":
            return lambda: at.flash_attn_fwd(q, k, v, causal=False)
        if case.startswith("attn_hopper"):
            from phase4_optimization.lab06_attention import hopper
            rung = case[len("attn_hopper"):][:2]
            st = int(case.split("_s")[1]) if "_s" in case else None
            o, lse = hopper.flash_attn_hopper(q, k, v, causal=False, kernel=rung, stages=st)
            return lambda: hopper.flash_attn_hopper(q, k, v, causal=False, out=o, lse=lse, kernel=rung, stages=st)
        if case in ("attn_triton_tma", "attn_triton_pipe"):
            cfg = {"BLOCK_M": 128, "BLOCK_N": 128 if case.endswith("tma") else 64, "num_warps": 8, "num_stages": 3,
                   "TMA": True, "PIPE": case.endswith("pipe")}
            return lambda: at.flash_attn_fwd(q, k, v, causal=False, config=cfg)
        if case == "attn_cuda":
            return lambda: at.flash_attn_cuda(q, k, v, causal=False)
        if case == "attn_cuda02w":
            return lambda: at.flash_attn_cuda(q, k, v, causal=False, kernel="02w")
        return lambda: at.sdpa_fwd(q, k, v, False, case.split("_")[1])
    if case.startswith("block_"):
        import numpy as np

        tb = lab_module("phase4_optimization", "lab07_transformer_block")
        x, nh, *w = tb.make_inputs((8, 2048, 2048, 16), "bfloat16", np.random.default_rng(0), "cuda")
        if case == "block_compile":
            f = torch.compile(tb.torch_module(x, nh, *w))

            def run():
                with torch.no_grad():
                    f(x)
            return run
        return tb.BlockPlan(x, nh, *w, gemm="wgmma" if case == "block_wgmma" else "triton").run
    if case.startswith("ln_"):
        ln = lab_module("phase3_triton", "lab04_layernorm")
        x = torch.randn(32768, 4096, device="cuda") * 2 + 3
        w, b = torch.randn(4096, device="cuda") * 0.2 + 1, torch.randn(4096, device="cuda") * 0.5
        if case == "ln_compile":
            f = torch.compile(lambda t: torch.nn.functional.layer_norm(t, (4096,), w, b, ln.EPS), dynamic=False)
            return lambda: f(x)
        out = ln.layernorm_fwd(x, w, b)
        if case == "ln_tuned":
            return lambda: ln.layernorm_fwd(x, w, b, out=out)
        cfg = {"ln_single": {"BLOCK_M": 1, "num_warps": 8},
               "ln_chunked": {"SINGLE": False, "BLOCK_N": 4096, "num_warps": 8},
               "ln_chunked_2048": {"SINGLE": False, "BLOCK_N": 2048, "num_warps": 8},
               "ln_persist": {"BLOCK_M": 1, "PERSIST": 4, "num_warps": 8},
               "ln_welford": {"WELFORD": True, "BLOCK_N": 2048, "num_warps": 8},
               "ln_welford_v4": {"WELFORD": True, "BLOCK_N": 2048, "num_warps": 16}}[case]
        return lambda: ln.layernorm_fwd(x, w, b, out=out, config=cfg)
    raise ValueError(f"unknown case {case!r}; --list shows them")


def inner(cases: list[str]) -> int:
    """Run inside ncu: warm every case, then each once inside a profiler range. Prints the order."""
    import cupy
    import torch

    done = []
    for case in cases:
        try:
            fn = _setup(case)
            fn()
            fn()
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - one broken case must not lose the others' profiles
            print(f"case {case}: setup failed: {type(e).__name__}: {e}", flush=True)
            continue
        cupy.cuda.runtime.profilerStart()
        fn()
        torch.cuda.synchronize()
        cupy.cuda.runtime.profilerStop()
        done.append(case)
        print(f"case {case}: profiled", flush=True)
        del fn
        torch.cuda.empty_cache()
    with open(os.environ.get("PROFILE_ORDER", "profile_order.json"), "w") as f:
        json.dump(done, f)
    return 0


def _num(s: str) -> float | None:
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None


def summarize(csv_path: str, order: list[str] | None = None) -> list[dict]:
    """One row per profiled kernel: METRICS plus the three largest stall reasons (warps stalled per issued
    instruction, the measure ncu's WarpStateStats section ranks by)."""
    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    start = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
    head = rows[start]
    data = [r for r in rows[start + 1:] if r and r[0].strip().isdigit()]   # skip the units row
    units = rows[start + 1] if len(rows) > start + 1 and not rows[start + 1][0].strip().isdigit() else []
    col = {name: i for i, name in enumerate(head)}
    to_us = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3, "s": 1e6,
             "second": 1e6}
    out = []
    for r in data:
        row = {"kernel": r[col["Kernel Name"]][:60], "grid": r[col.get("Grid Size", 0)],
               "block": r[col.get("Block Size", 0)]}
        for label, names, scale in METRICS:
            for name in names:
                if name in col and _num(r[col[name]]) is not None:
                    if scale == "time":       # ncu picks the unit per report (ns, us or ms): read it
                        unit = units[col[name]].strip() if col[name] < len(units) else "ns"
                        scale = to_us.get(unit, 1e-3)
                    row[label] = _num(r[col[name]]) * scale
                    break
        stalls = {}
        for name, i in col.items():
            if name.startswith(STALL_PREFIX) and name.endswith(STALL_SUFFIX) and "not_issued" not in name:
                v = _num(r[i])
                if v is not None:
                    stalls[name[len(STALL_PREFIX):-len(STALL_SUFFIX)]] = v
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:4]
        row["top stalls (warps per issue)"] = ", ".join(f"{k} {v:.2f}" for k, v in top)
        out.append(row)
    if order and len(order) == len(out):
        for case, row in zip(order, out):
            row["case"] = case
    elif order and len(order) == 1:         # one case of several kernels (block_*): every row is that case's
        for row in out:
            row["case"] = order[0]
    return out


def summarize_folder(folder: str) -> list[dict]:
    """summarize() of the raw.csv a run wrote into `folder`, rows named by its order.json when that is there."""
    order_path = os.path.join(folder, "order.json")
    order = None
    if os.path.exists(order_path):
        with open(order_path) as f:
            order = json.load(f)
    return summarize(os.path.join(folder, "raw.csv"), order)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tools.profile", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cases", default=",".join(CASES), help="comma-separated cases (default: all; --list names them)")
    p.add_argument("--out", default=None, help="folder for the .ncu-rep, CSV and summary (default: "
                                               "results/<gpu>/profile)")
    p.add_argument("--list", action="store_true", help="print the cases and exit")
    p.add_argument("--summarize", metavar="DIR", help="print the summary table of a folder a run wrote, and exit")
    p.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.list:
        for k, v in CASES.items():
            print(f"{k:13s} {v}")
        return 0
    cases = [c for c in a.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad:
        p.error(f"unknown case(s) {', '.join(bad)}; choose from {', '.join(CASES)}")
    if a.summarize:
        path = os.path.join(a.summarize, "raw.csv")
        if not os.path.exists(path):
            print(f"{path} not found: run the profile on a GPU machine first", file=sys.stderr)
            return 2
        report.print_table(summarize_folder(a.summarize))
        return 0
    if a.inner:
        return inner(cases)
    from common import device
    try:
        device.require_gpu("tools.profile (Nsight Compute)")
    except device.GPUUnavailable as e:
        print(f"error: {e} `--list` and `--summarize DIR` work anywhere.", file=sys.stderr)
        return 2
    ncu = shutil.which("ncu") or next((q for q in ("/usr/local/cuda/bin/ncu",) if os.path.exists(q)), None)
    if not ncu:
        print("ncu (Nsight Compute) not found on PATH or in /usr/local/cuda/bin: install Nsight Compute",
              file=sys.stderr)
        return 2
    out = a.out or os.path.join(ROOT, "results", device.gpu_slug(), "profile")
    os.makedirs(out, exist_ok=True)
    rep = os.path.join(out, "kernels")
    env = dict(os.environ, PROFILE_ORDER=os.path.join(out, "order.json"))
    cmd = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--set", "full", "--force-overwrite",
           "-o", rep, sys.executable, "-m", "tools.profile", "--inner", "--cases", ",".join(cases)]
    print("$", " ".join(cmd), flush=True)
    rc = subprocess.call(cmd, cwd=ROOT, env=env)
    if rc != 0 or not os.path.exists(rep + ".ncu-rep"):
        print(f"ncu exited {rc}; no report written", file=sys.stderr)
        return 1
    with open(os.path.join(out, "raw.csv"), "w") as f:
        subprocess.call([ncu, "--import", rep + ".ncu-rep", "--page", "raw", "--csv"], stdout=f)
    with open(os.path.join(out, "details.txt"), "w") as f:
        subprocess.call([ncu, "--import", rep + ".ncu-rep", "--page", "details"], stdout=f)
    rows = summarize_folder(out)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"command": "python -m tools.profile --cases " + ",".join(cases), "cases": CASES,
                   "rows": rows}, f, indent=1)
    report.print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
