"""Lab 4.7 - A GPT-style transformer block rebuilt from this repository's own kernels, against PyTorch.

You will learn
  * where a transformer block spends its time: four GEMMs (QKV projection, output projection, the MLP's two
    layers), one attention, two layernorms, and the glue between them (bias, GELU, residual adds, layout changes);
  * which fusions phase 4 showed to pay, applied to a whole block: bias and GELU and the residual add done in the GEMM
    epilogue (lab 4.2), flash attention reading Q, K, V straight out of the QKV projection's output through strides
    and writing its output in the layout the next GEMM reads (lab 4.6), layernorm as one row kernel (lab 3.4);
  * how to judge a whole model's kernels: a per-stage time breakdown next to each stage's floor - every GEMM at the
    cuBLAS rate for its exact shape, attention at the best SDPA backend's rate, the memory-bound rest at the measured
    HBM bandwidth - so the learner sees which stage is far from its roof and which already sits on it;
  * how to check a model-level result: against a float64 NumPy block on the same (bf16-rounded) weights, and against
    a plain PyTorch module (eager and torch.compile) with the same weights.

The block (pre-LayerNorm, causal, tanh-GELU MLP of width 4 d), for x of shape (B, S, d) with H heads of D = d / H:
    a = LN1(x);  q, k, v = split(a W_qkv + b_qkv);  o = softmax(q k^T / sqrt(D), causal) v
    h = x + o W_o + b_o;  y = h + gelu_tanh(LN2(h) W_fc + b_fc) W_proj + b_proj

The two numbers (main case: B 8, S 2048, d 2048, H 16, so M = B S = 16,384 tokens, bf16):
  FLOPs: GEMMs 2 M d (3d + d + 4d + 4d) = 24 M d^2 = 1.65 TFLOP; attention 4 B H S^2 D / 2 (causal) = 0.14 TFLOP.
  Bytes that must move besides the GEMMs' own operands: x, h, y and the layernorm outputs, ~2 M d x 2 B = 67 MB
  each, a few hundred MB in all. At ~700 TFLOP/s (cuBLAS bf16 on an H200) the GEMMs take ~2.4 ms, attention at
  ~530 TFLOP/s ~0.26 ms, and the memory-bound rest ~0.1 ms at ~4.3 TB/s: compute wins, by far, and the GEMMs are
  ~85% of the floor (about 2.7 ms). So the block is only as fast as its GEMMs; fusion saves the ~10% of time the glue
  kernels would add, not more.
  Second case: B 16, S 1024, d 1024, H 16 (D = 64): 24 M d^2 = 0.41 TFLOP of GEMMs and 0.034 TFLOP of attention; the
  glue is a larger share (the GEMMs are 4x smaller at the same M) and launch overhead starts to count.

Targets (issue 11, H200, same run): main case >= 1.08x torch.compile (eager 3.04 ms, compiled 3.02 ms measured when
the issue was written); second case >= 1.3x eager and >= 1.05x torch.compile.
Prediction: our block can only beat torch.compile where our GEMMs keep up with cuBLAS (torch.compile keeps cuBLAS for
the GEMMs and fuses the glue with Triton); the fused epilogues save the glue's ~0.2-0.3 ms on the main case, so if the
Triton GEMMs reach ~95% of cuBLAS the block lands near 1.0-1.05x torch.compile; reaching 1.08x needs GEMMs at
cuBLAS speed. The second case has more glue per FLOP: a better chance against eager.

Measured on an H200 (results/h200/phase4_lab07_transformer_block.json, commit f2ffb1c; bf16; every stage also timed
alone next to its floor, each replayed as a CUDA graph): none of the three targets was met. Main case: ours 3.288 ms,
torch eager 3.154 ms, torch.compile 3.255 ms (compile no faster than eager again: 0.969x; 3.04 / 3.02 ms at issue
time): ours 0.990x torch.compile, target 1.08 missed by ~8% (0.959x eager). Second case: ours 0.955 ms, eager
0.972 ms, compile 0.953 ms: 1.017x eager (target 1.3, missed) and 0.998x compile (target 1.05, missed). The three
whole-block timings spread 10-19% (p20-p80) in this run, so these ratios are ties more than rankings; the first run
(commit 31784b5, plain timer) had 0.963x compile on the main case and 1.008x eager / 0.958x compile on the second.
Stage breakdown, main case (ours ms vs floor ms, floor/ours): LN1 0.036 vs 0.031 (0.86); QKV GEMM 0.696 vs cuBLAS
0.676 (0.97); attention 0.393 vs SDPA cuDNN 0.290 (0.74); out GEMM 0.253 vs 0.220 (0.87); LN2 0.037 vs 0.031 (0.84);
FC GEMM 1.106 vs 0.893 (0.81); proj GEMM 0.877 vs 0.796 (0.91); sum of stages 3.397 vs 2.937 (0.86). Where the time
goes: the FC GEMM with its GELU epilogue is the largest loss against its floor (0.213 ms), then attention (0.103),
proj + residual (0.081), out + residual (0.033), QKV + bias (0.020) and the two layernorms (0.011 together). Against
the prediction: the four GEMMs together took 2.932 ms against cuBLAS's 2.585 (0.88 of cuBLAS, short of the "~95%"
case that would have given 1.0-1.05x compile), and attention ran at 0.74 of cuDNN; both losses together (~0.45 ms)
are several times the 0.03 ms by which we trail torch.compile, which keeps cuBLAS and cuDNN for exactly those
stages and fuses only the glue. Why each falls short is what labs 4.2 and 4.6 profiled: our Triton GEMM's main loop
keeps the tensor pipe ~75% busy against cuBLAS's 95% (255 registers with the GELU epilogue), and the flash forward
55% against cuDNN's 76% (no warp specialization). The first run's layernorm figures (0.33-0.54 of floor, plain
timer) were mostly host time: timed as CUDA graphs the layernorms run at 0.84-0.86 of the HBM floor (and attention at
0.74 of cuDNN, against 0.66 then).
Second case (same order): LN1 0.018 vs 0.015 (0.86), QKV 0.191 vs 0.162 (0.85), attention 0.134 vs 0.110 (0.82), out
0.074 vs 0.057 (0.77), LN2 0.018 vs 0.015 (0.84), FC 0.287 vs 0.233 (0.81), proj 0.227 vs 0.220 (0.97); sum 0.951 vs
0.813 (0.86), now equal to the whole block's 0.955 ms (the plain-timer sum was 1.053 against 0.949). Here every GEMM
but proj sits at 0.77-0.85 of cuBLAS: at d 1024 three of the GEMMs have K = 1024, 16 k-steps of 64 to amortize
each tile's prologue and epilogue over (an inference; these shapes were not profiled).

Run: python -m phase4_optimization.lab07_transformer_block [--quick] [--no-bench]
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np

from common import arrays, bench, check, cli, device, lab, report
from common.triton_support import INTERPRETER

LAB = "phase4_lab07_transformer_block"
DTYPES = ("bfloat16", "float16")
EPS = 1e-5
PARAM_NAMES = ("ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o", "ln2_w", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj")
BENCH_CASES = [(8, 2048, 2048, 16), (16, 1024, 1024, 16)]      # (B, S, d, H)
TARGETS = {(8, 2048, 2048, 16): {"torch.compile": 1.08}, (16, 1024, 1024, 16): {"torch eager": 1.3,
                                                                                 "torch.compile": 1.05}}


def _kernels():
    """The repository's kernels this block is made of (imported late: the labs import Triton)."""
    ln = lab.lab_module("phase3_triton", "lab04_layernorm")
    fu = lab.lab_module("phase4_optimization", "lab02_fusion")
    at = lab.lab_module("phase4_optimization", "lab06_attention")
    return ln, fu, at


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs
# ---------------------------------------------------------------------------------------------------------------------
def gelu_tanh(z):
    return 0.5 * z * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z ** 3)))


def _ln(x, w, b, eps=EPS):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def reference(x, n_heads, ln1_w, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_w, ln2_b, w_fc, b_fc, w_proj, b_proj):
    """The block in float64 NumPy. Weights are (in, out): y = x @ W + b."""
    x = np.asarray(x, np.float64)
    bsz, s, d = x.shape
    dh = d // n_heads
    a = _ln(x, ln1_w, ln1_b)
    qkv = a @ w_qkv + b_qkv                                            # (B, S, 3d)
    q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(bsz, s, n_heads, dh).transpose(0, 2, 1, 3) for i in range(3))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(dh)               # (B, H, S, S)
    scores = np.where(np.tril(np.ones((s, s), bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(axis=-1, keepdims=True))
    p /= p.sum(axis=-1, keepdims=True)
    p = np.where(np.tril(np.ones((s, s), bool)), p, 0.0)    # a NaN row's masked keys stay exactly 0, as in lab 4.6
    # a token's NaN reaches the later tokens of its sequence, never the earlier ones (lab 4.6's exact-masking P V)
    o = _kernels()[2].probabilities_times_values(p, v, True).transpose(0, 2, 1, 3).reshape(bsz, s, d)
    h = x + o @ w_o + b_o
    f = gelu_tanh(_ln(h, ln2_w, ln2_b) @ w_fc + b_fc)
    return h + f @ w_proj + b_proj


def make_params(d: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Weights drawn like a trained block's scale: N(0, 1/fan_in) for projections, LN weights ~1 +- 0.1."""
    p = {"ln1_w": 1.0 + 0.1 * rng.standard_normal(d), "ln1_b": 0.1 * rng.standard_normal(d),
         "ln2_w": 1.0 + 0.1 * rng.standard_normal(d), "ln2_b": 0.1 * rng.standard_normal(d)}
    for name, fan_in, fan_out in (("qkv", d, 3 * d), ("o", d, d), ("fc", d, 4 * d), ("proj", 4 * d, d)):
        p[f"w_{name}"] = rng.standard_normal((fan_in, fan_out)) / math.sqrt(fan_in)
        p[f"b_{name}"] = 0.1 * rng.standard_normal(fan_out)
    return p


def _torch_dtype(dtype: str):
    import torch

    return getattr(torch, dtype)


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """(x, n_heads, *weights) as torch tensors on `where`; size = (B, S, d, H)."""
    import torch

    bsz, s, d, n_heads = size
    if d % n_heads:
        raise ValueError(f"size: d = {d} is not a multiple of H = {n_heads}")
    x = rng.standard_normal((bsz, s, d))
    p = make_params(d, rng)
    t = [torch.from_numpy(np.ascontiguousarray(a, np.float32)).to(device=where, dtype=_torch_dtype(dtype))
         for a in [x] + [p[n] for n in PARAM_NAMES]]
    return (t[0], int(n_heads), *t[1:])


def tolerance(size, dtype: str) -> check.Tol:
    # Every intermediate (LN outputs, qkv, attention output, h, the GELU output) is stored in 16 bits, as in any
    # bf16 model, so the block's output carries ~6 roundings of ~2^-9 (bf16) relative each, amplified by the
    # GEMMs' sums over d and 4d terms; measured on the GPU and in the interpreter: rel err ~4e-3 (bf16).
    # The limits keep a 3-5x margin over that, far below what a wrong mask, head split or missing bias gives (>0.1).
    return check.Tol(2e-2, 2e-1) if dtype == "bfloat16" else check.Tol(5e-3, 5e-2)


# ---------------------------------------------------------------------------------------------------------------------
# Our block: a plan of stages over preallocated buffers, so the whole block and each stage can be timed
# ---------------------------------------------------------------------------------------------------------------------
class BlockPlan:
    """The block as a list of stages, each a closure over buffers allocated once.

    stages: [(name, kind, fn)] with kind 'gemm' | 'attention' | 'memory'; run() runs them in order and returns y.
    """

    def __init__(self, x, n_heads, *weights, out=None, attn_config=None, gemm_configs=None):
        import torch

        ln, fu, at = _kernels()
        if not hasattr(x, "dim") or x.dim() != 3:
            raise ValueError(f"x: expected a torch tensor (B, S, d), got {type(x).__name__} "
                             f"{tuple(getattr(x, 'shape', ()))}")
        if len(weights) != len(PARAM_NAMES):
            raise TypeError(f"weights: expected {len(PARAM_NAMES)} tensors ({', '.join(PARAM_NAMES)}), "
                            f"got {len(weights)}")
        if not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
            raise TypeError(f"n_heads: expected a positive int, got {n_heads!r}")
        bsz, s, d = (int(n) for n in x.shape)
        if d % n_heads:
            raise ValueError(f"n_heads: d = {d} is not a multiple of n_heads = {n_heads}")
        dh = d // n_heads
        if dh not in at.HEAD_DIMS:
            raise ValueError(f"n_heads: head dim d / H = {dh} is not supported by the attention kernel "
                             f"(expected one of {at.HEAD_DIMS})")
        w = dict(zip(PARAM_NAMES, weights))
        shapes = {"ln1_w": (d,), "ln1_b": (d,), "ln2_w": (d,), "ln2_b": (d,), "w_qkv": (d, 3 * d), "b_qkv": (3 * d,),
                  "w_o": (d, d), "b_o": (d,), "w_fc": (d, 4 * d), "b_fc": (4 * d,), "w_proj": (4 * d, d),
                  "b_proj": (d,)}
        for name, shp in shapes.items():
            if tuple(w[name].shape) != shp:
                raise ValueError(f"{name}: expected shape {shp} for d = {d}, got {tuple(w[name].shape)}")
            if w[name].dtype != x.dtype:
                raise TypeError(f"{name}: expected {x.dtype} like x, got {w[name].dtype}")
        if not x.is_contiguous():
            raise ValueError("x: must be contiguous (B, S, d); pass x.contiguous()")
        m = bsz * s
        self.shape = (bsz, s, d, n_heads)
        dev, dt = x.device, x.dtype
        e = lambda *shp, dtype=dt: torch.empty(shp, device=dev, dtype=dtype)  # noqa: E731
        x2 = x.view(m, d)
        a, qkv, o, h, g, f = e(m, d), e(m, 3 * d), e(bsz, s, d), e(m, d), e(m, d), e(m, 4 * d)
        y = out if out is not None else e(bsz, s, d)
        if tuple(y.shape) != (bsz, s, d) or y.dtype != dt or not y.is_contiguous():
            raise ValueError(f"out: expected a contiguous {dt} tensor of shape {(bsz, s, d)}")
        lse = e(bsz, n_heads, s, dtype=torch.float32)
        stats = [e(m, dtype=torch.float32) for _ in range(4)]      # mean and rstd of the two layernorms (unused here)
        # Q, K, V are strided views into the QKV GEMM's output (B, S, 3, H, D): no copy. The attention output is
        # written through a (B, H, S, D) view of a (B, S, H, D) buffer, which is the (M, d) row-major matrix the
        # output projection reads: no copy either.
        q, k, v = (qkv.view(bsz, s, 3, n_heads, dh)[:, :, i].permute(0, 2, 1, 3) for i in range(3))
        o_view = o.view(bsz, s, n_heads, dh).permute(0, 2, 1, 3)
        gc = self.gemm_configs = dict(gemm_configs or {})     # read by the stages at call time (tune_gemms)
        self.buffers = {"a": a, "qkv": qkv, "o": o, "h": h, "g": g, "f": f, "y": y, "lse": lse}
        self.stages = [
            ("LN1", "memory", lambda: ln.layernorm_fwd(x2, w["ln1_w"], w["ln1_b"], EPS, out=(a, stats[0], stats[1]))),
            ("QKV GEMM + bias", "gemm",
             lambda: fu.linear(a, w["w_qkv"], w["b_qkv"], out=qkv, config=gc.get("qkv"))),
            ("attention (causal)", "attention",
             lambda: at.flash_attn_fwd(q, k, v, True, None, out=(o_view, lse), config=attn_config)),
            ("out GEMM + bias + residual", "gemm",
             lambda: fu.linear(o.view(m, d), w["w_o"], w["b_o"], residual=x2, out=h, config=gc.get("o"))),
            ("LN2", "memory", lambda: ln.layernorm_fwd(h, w["ln2_w"], w["ln2_b"], EPS, out=(g, stats[2], stats[3]))),
            ("FC GEMM + bias + GELU", "gemm",
             lambda: fu.linear(g, w["w_fc"], w["b_fc"], activation="gelu_tanh", out=f, config=gc.get("fc"))),
            ("proj GEMM + bias + residual", "gemm",
             lambda: fu.linear(f, w["w_proj"], w["b_proj"], residual=h, out=y.view(m, d), config=gc.get("proj"))),
        ]
        # what each stage is, for its floor: GEMM (M, N, K); attention (B, H, S, D); memory: bytes moved
        elt = x.element_size()
        self.floor_of = {
            "LN1": ("memory", 2 * m * d * elt), "LN2": ("memory", 2 * m * d * elt),
            "QKV GEMM + bias": ("gemm", (m, 3 * d, d)), "out GEMM + bias + residual": ("gemm", (m, d, d)),
            "FC GEMM + bias + GELU": ("gemm", (m, 4 * d, d)), "proj GEMM + bias + residual": ("gemm", (m, d, 4 * d)),
            "attention (causal)": ("attention", (bsz, n_heads, s, dh)),
        }

    GEMM_KEYS = {"QKV GEMM + bias": "qkv", "out GEMM + bias + residual": "o", "FC GEMM + bias + GELU": "fc",
                 "proj GEMM + bias + residual": "proj"}

    def tune_gemms(self, configs, rep_ms: float = 25.0) -> list[dict]:
        """Pick each GEMM stage's tile config by timing the candidates on its own shape and epilogue (in the open,
        as lab 4.2 does for one shape); a config that fails to compile is skipped and reported."""
        rows = []
        for name, kind, fn in self.stages:
            key = self.GEMM_KEYS.get(name)
            if key is None:
                continue
            best = None
            for cfg in configs:
                self.gemm_configs[key] = cfg
                try:
                    t = bench.bench(fn, rep_ms=rep_ms)
                except Exception as e:  # noqa: BLE001 - out of resources for this epilogue: skip, say so
                    rows.append({"stage": name, "config": str(cfg), "ms": None, "note": f"{type(e).__name__}"})
                    continue
                rows.append({"stage": name, "config": str(cfg), "ms": t.median_ms})
                if best is None or t.median_ms < best[1]:
                    best = (cfg, t.median_ms)
            self.gemm_configs[key] = best[0] if best else None
        return rows

    def run(self):
        for _, _, fn in self.stages:
            fn()
        return self.buffers["y"]


def block_ours(x, n_heads, *weights, out=None):
    """The block from the repository's kernels: returns y (B, S, d), x's dtype."""
    return BlockPlan(x, n_heads, *weights, out=out).run()


def flops(bsz: int, s: int, d: int, n_heads: int) -> float:
    gemm = 24.0 * bsz * s * d * d
    attn = 4.0 * bsz * n_heads * s * s * (d // n_heads) / 2
    return gemm + attn


# ---------------------------------------------------------------------------------------------------------------------
# PyTorch peers: the same block as a plain module
# ---------------------------------------------------------------------------------------------------------------------
def torch_module(x, n_heads, *weights):
    """A plain nn.Module with our weights (nn.Linear stores (out, in): the transpose of ours)."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    w = dict(zip(PARAM_NAMES, weights))
    d = int(x.shape[-1])

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.n_heads = n_heads
            self.ln1, self.ln2 = nn.LayerNorm(d, eps=EPS), nn.LayerNorm(d, eps=EPS)
            self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            bsz, s, _ = x.shape
            qkv = self.qkv(self.ln1(x)).view(bsz, s, 3, self.n_heads, d // self.n_heads)
            q, k, v = (qkv[:, :, i].transpose(1, 2) for i in range(3))
            o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            h = x + self.o(o.transpose(1, 2).reshape(bsz, s, d))
            return h + self.proj(F.gelu(self.fc(self.ln2(h)), approximate="tanh"))

    blk = Block().to(device=x.device, dtype=x.dtype)
    with torch.no_grad():
        for mod, wn, bn in ((blk.qkv, "w_qkv", "b_qkv"), (blk.o, "w_o", "b_o"), (blk.fc, "w_fc", "b_fc"),
                            (blk.proj, "w_proj", "b_proj")):
            mod.weight.copy_(w[wn].t())
            mod.bias.copy_(w[bn])
        for mod, wn, bn in ((blk.ln1, "ln1_w", "ln1_b"), (blk.ln2, "ln2_w", "ln2_b")):
            mod.weight.copy_(w[wn])
            mod.bias.copy_(w[bn])
    return blk.eval()


def peer_torch_eager(x, n_heads, *weights, out=None):
    import torch

    with torch.no_grad():
        y = torch_module(x, n_heads, *weights)(x)
    if out is None:
        return y
    out.copy_(y)
    return out


def peer_torch_compile(x, n_heads, *weights, out=None):
    import torch

    with torch.no_grad():
        y = torch.compile(torch_module(x, n_heads, *weights))(x)
    if out is None:
        return y
    out.copy_(y)
    return out


VARIANTS = [lab.Variant("ours: LN + fused-epilogue GEMMs + flash attention (Triton)", block_ours, "triton",
                        dtypes=DTYPES)]
PEERS = [lab.Variant("torch module, eager", peer_torch_eager, "peer", dtypes=DTYPES)]
# (B, S, d, H): S = 1, S not a multiple of any tile, D = 64 and 128, a d that is not a multiple of the GEMM tiles
CHECK_CASES = [((1, 1, 64, 1), "bfloat16"), ((2, 37, 128, 2), "bfloat16"), ((1, 129, 192, 3), "bfloat16"),
               ((3, 200, 256, 2), "float16"), ((2, 1000, 512, 8), "bfloat16"), ((1, 517, 1024, 8), "bfloat16")]
CPU_CHECK_CASES = [((1, 1, 64, 1), "bfloat16"), ((2, 13, 128, 2), "bfloat16"), ((1, 21, 64, 1), "float16")]


# ---------------------------------------------------------------------------------------------------------------------
# Benchmark: whole block vs peers, per-stage breakdown vs floors
# ---------------------------------------------------------------------------------------------------------------------
def stage_floors(plan: BlockPlan, ceiling_gbps: float) -> dict[str, dict]:
    """Each stage's floor on this GPU: GEMMs at cuBLAS's time for the same shape, attention at the best SDPA
    backend's time, memory-bound stages at the measured HBM bandwidth."""
    import torch

    at = lab.lab_module("phase4_optimization", "lab06_attention")

    floors = {}
    x = plan.buffers["a"]
    for name, (kind, what) in plan.floor_of.items():
        if kind == "memory":
            floors[name] = {"ms": what / (ceiling_gbps * 1e6), "how": f"{what / 1e6:.0f} MB at {ceiling_gbps:,.0f} GB/s"}
        elif kind == "gemm":
            m, n, k = what
            a = torch.randn(m, k, device=x.device, dtype=x.dtype)
            b = torch.randn(k, n, device=x.device, dtype=x.dtype)
            t = bench.bench(lambda: torch.matmul(a, b), rep_ms=60)
            floors[name] = {"ms": t.median_ms, "how": f"cuBLAS {m}x{n}x{k}: {t.tflops(2.0 * m * n * k):.0f} TFLOP/s"}
            del a, b
        else:
            bsz, h, s, dh = what
            q, k, v = (torch.randn(bsz, h, s, dh, device=x.device, dtype=x.dtype) for _ in range(3))
            best = None
            for backend in ("cudnn", "flash"):
                # sdpa_fwd runs the attention and returns its output: bench needs a callable
                fn = (lambda b_=backend: at.sdpa_fwd(q, k, v, True, b_))
                try:
                    fn()
                except Exception as e:  # noqa: BLE001 - a backend this build lacks is skipped, named below
                    first = (str(e).splitlines() or [""])[0][:80]
                    print(f"  SDPA {backend}: unavailable ({type(e).__name__}: {first})")
                    continue
                t = bench.bench(fn, rep_ms=60)
                if best is None or t.median_ms < best[1]:
                    best = (backend, t.median_ms)
            fl = at.attn_flops(bsz, h, s, dh, True)
            floors[name] = {"ms": best[1] if best else float("nan"),
                            "how": f"SDPA {best[0]}: {fl / best[1] / 1e9:.0f} TFLOP/s" if best else "no SDPA backend"}
            del q, k, v
    return floors


def bench_case(case, dtype: str, ceiling_gbps: float, rounds: int = 5) -> tuple[list[dict], list[dict], list[dict]]:
    """Whole block: ours vs eager vs torch.compile (interleaved); then each of our stages vs its floor."""
    import torch

    bsz, s, d, n_heads = case
    rng = check.rng(100)
    x, nh, *weights = make_inputs(case, dtype, rng, "cuda")
    plan = BlockPlan(x, nh, *weights)
    fu = lab.lab_module("phase4_optimization", "lab02_fusion")

    tuning = plan.tune_gemms(fu.LINEAR_CONFIGS[:4])
    for r in tuning:
        r["case"] = list(case)
    print("  GEMM configs picked: " + "; ".join(f"{k}: {c and (c['BLOCK_M'], c['BLOCK_N'], c['BLOCK_K'], c['num_warps'], c['num_stages'])}"
                                                for k, c in plan.gemm_configs.items()))
    module = torch_module(x, nh, *weights)
    t0 = time.perf_counter()
    compiled = torch.compile(module)
    with torch.no_grad():
        compiled(x)
        torch.cuda.synchronize()
    print(f"  torch.compile of the block took {time.perf_counter() - t0:.1f} s (first call)")
    # same answer? (the check tier compares with float64; here: ours vs the module at the benchmark size)
    with torch.no_grad():
        y_eager = module(x)
    y_ours = plan.run()
    rel = float((y_ours.float() - y_eager.float()).norm() / y_eager.float().norm())
    print(f"  ours vs the eager module at this size: relative difference {rel:.2e}")

    def eager():
        with torch.no_grad():
            module(x)

    def comp():
        with torch.no_grad():
            compiled(x)

    ts = bench.interleaved({"ours": plan.run, "torch eager": eager, "torch.compile": comp}, rounds=rounds, rep_ms=80)
    fl = flops(*case)
    rows = []
    for name, t in ts.items():
        rows.append(report.row(LAB, name, "triton" if name == "ours" else "peer", case, dtype, t, flops=fl,
                               vs_eager=ts["torch eager"].median_ms / t.median_ms,
                               vs_compile=ts["torch.compile"].median_ms / t.median_ms, rel_diff_vs_eager=rel))
    for peer, need in TARGETS.get(tuple(case), {}).items():
        ratio = ts[peer].median_ms / ts["ours"].median_ms
        rows.append({"lab": LAB, "variant": f"target vs {peer}", "impl": "target", "shape": list(case),
                     "dtype": dtype, "ratio": ratio, "target": need, "met": ratio >= need})
    floors = stage_floors(plan, ceiling_gbps)
    stage_rows = []
    for name, kind, fn in plan.stages:
        # Each stage alone, as a CUDA graph of 20 calls: a layernorm moves its 67 MB in ~15 us, less than one Python
        # call of its wrapper, so the plain timer measured the host there (commit 6580338's run: LN at 0.18 of its
        # floor, and the stages summed to more than the whole block); the graph takes the host out (lab 1.2).
        t = bench.bench(fn, rep_ms=60, graph=True, calls=20)
        f = floors[name]
        stage_rows.append({"lab": LAB, "case": list(case), "dtype": dtype, "stage": name, "kind": kind,
                           "ms": t.median_ms, "floor_ms": f["ms"], "frac_of_floor": f["ms"] / t.median_ms,
                           "floor": f["how"], "clock": t.clock})
    total = sum(r["ms"] for r in stage_rows)
    floor_total = sum(r["floor_ms"] for r in stage_rows)
    stage_rows.append({"lab": LAB, "case": list(case), "dtype": dtype, "stage": "sum of stages", "kind": "",
                       "ms": total, "floor_ms": floor_total, "frac_of_floor": floor_total / total,
                       "floor": "sum of the floors"})
    del plan, module, compiled
    torch.cuda.empty_cache()
    return rows, stage_rows, tuning


def plot(stage_rows: list[dict], rows: list[dict], path: str) -> str:
    """Per case: stacked bars of our stage times next to their floors, and the peers' totals."""
    plt = report.pyplot()
    cases = []
    for r in stage_rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    fig, axes = plt.subplots(1, len(cases), figsize=(7 * len(cases), 5), squeeze=False)
    colors = {"LN1": "#9ecae1", "QKV GEMM + bias": "#3182bd", "attention (causal)": "#e6550d",
              "out GEMM + bias + residual": "#6baed6", "LN2": "#c6dbef", "FC GEMM + bias + GELU": "#08519c",
              "proj GEMM + bias + residual": "#2171b5"}
    for ax, case in zip(axes[0], cases):
        srows = [r for r in stage_rows if r["case"] == case and r["stage"] != "sum of stages"]
        for col, key in ((0, "ms"), (1, "floor_ms")):
            bottom = 0.0
            for r in srows:
                ax.bar(col, r[key], bottom=bottom, color=colors.get(r["stage"], "gray"),
                       label=r["stage"] if col == 0 else None, edgecolor="white", lw=0.5)
                bottom += r[key]
        peers = {r["variant"]: r["ms"] for r in rows if r.get("shape") == case and r.get("impl") in ("peer", "triton")
                 and r.get("ms")}
        for i, name in enumerate(("ours", "torch eager", "torch.compile")):
            if name in peers:
                ax.bar(2 + i, peers[name], color="#31a354" if name == "ours" else "#756bb1")
                ax.annotate(f"{peers[name]:.2f}", xy=(2 + i, peers[name]), ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(5), ["ours,\nby stage", "floor,\nby stage", "ours\n(whole)", "torch\neager",
                                 "torch.\ncompile"])
        ax.set_ylabel("ms")
        ax.set_title(f"B{case[0]} S{case[1]} d{case[2]} H{case[3]}")
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("Transformer block forward (bf16): stages vs their floors, and the whole block vs PyTorch")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def print_plan(case=(8, 2048, 2048, 16)) -> None:
    """The stage list with each stage's FLOPs and bytes: what the learner should expect before any timing."""
    bsz, s, d, n_heads = case
    m = bsz * s
    rows = []
    for name, (mm, nn_, kk) in (("QKV GEMM + bias", (m, 3 * d, d)), ("out GEMM + bias + residual", (m, d, d)),
                                ("FC GEMM + bias + GELU", (m, 4 * d, d)), ("proj GEMM + bias + residual", (m, d, 4 * d))):
        rows.append({"stage": name, "GFLOP": 2 * mm * nn_ * kk / 1e9, "MB": 2 * (mm * kk + kk * nn_ + mm * nn_) / 1e6})
    rows.append({"stage": "attention (causal)", "GFLOP": 4 * bsz * n_heads * s * s * (d // n_heads) / 2 / 1e9,
                 "MB": 2 * 4 * m * d / 1e6})
    rows += [{"stage": n, "GFLOP": 8 * m * d / 1e9, "MB": 2 * 2 * m * d / 1e6} for n in ("LN1", "LN2")]
    report.print_table(rows, ["stage", "GFLOP", "MB"], title=f"the block at B{bsz} S{s} d{d} H{n_heads} (bf16)")


def main(argv=None) -> int:
    p = cli.parser(__doc__.splitlines()[0], dtype=DTYPES)
    args = cli.finish_args(p.parse_args(argv))
    print(cli.mode_line())
    print_plan()
    dts = (args.dtype,) if args.dtype else DTYPES
    if device.has_gpu():
        cases = [c for c in CHECK_CASES if c[1] in dts]
        variants = VARIANTS + PEERS
    else:
        cases = [c for c in CPU_CHECK_CASES if c[1] in dts][: 2 if args.quick else None]
        variants = VARIANTS
        print("the block runs its Triton kernels in the interpreter at tiny sizes; torch peers need a GPU")
    if args.quick and device.has_gpu():
        cases = cases[:3]
    _, ok = lab.check_variants(sys.modules[__name__], variants, cases)
    if not args.bench:
        return 0 if ok else 1
    ceiling = bench.ceilings()["hbm_gbps"]
    rows, stage_rows, tuning = [], [], []
    todo = BENCH_CASES[1:] if args.quick else BENCH_CASES
    for case in cli.progress(todo, "block cases"):
        r, s, t = bench_case(case, "bfloat16", ceiling)
        rows += r
        stage_rows += s
        tuning += t
    report.print_table([r for r in rows if r["impl"] != "target"],
                       ["variant", "shape", "ms", "tflops", "vs_eager", "vs_compile"],
                       title="whole block forward, bf16 (interleaved rounds)")
    report.print_table([r for r in rows if r["impl"] == "target"], ["variant", "shape", "ratio", "target", "met"],
                       title="targets")
    report.print_table(stage_rows, ["case", "stage", "ms", "floor_ms", "frac_of_floor", "floor"],
                       title="our stages vs their floors (each stage timed alone; floor/time = how close to the roof)")
    if args.json:
        print("wrote", report.write_json(LAB, rows + stage_rows, out_dir=args.out, ceiling_gbps=ceiling,
                                         gemm_tuning=tuning))
    if args.plot:
        import os

        out_dir = args.out or report.results_dir()
        os.makedirs(out_dir, exist_ok=True)
        print("wrote", plot(stage_rows, rows, os.path.join(out_dir, f"{LAB}.png")))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
