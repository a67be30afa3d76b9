"""Lab 4.7 - A GPT-style transformer block rebuilt from this repository's own kernels, against PyTorch.

You will learn
  * where a transformer block spends its time: four GEMMs (QKV projection, output projection, the MLP's two
    layers), one attention, two layernorms, and the glue between them (bias, GELU, residual adds, layout changes);
  * which fusions phase 4 showed to pay, applied to a whole block: bias and GELU and the residual add done in the GEMM
    epilogue (lab 4.2), flash attention reading Q, K, V straight out of the QKV projection's output through strides
    and writing its output in the layout the next GEMM reads (lab 4.6), layernorm as one row kernel (lab 3.4). The
    forward reuses those labs' kernels on purpose (normal imports, made late): it writes no kernel of its own (the
    training step's backward adds the lab's own Triton kernels, backward_kernels.py, for fusions no earlier lab offers);
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
  each, a few hundred MB in all. At the tensor cores' rate the GEMMs take ~85% of the block's floor, attention ~10%
  and the memory-bound rest a few percent: compute wins, by far. So the block is only as fast as its GEMMs; fusion
  saves the few percent of time the glue kernels would add, not more.
  Second case: B 16, S 1024, d 1024, H 16 (D = 64): 24 M d^2 = 0.41 TFLOP of GEMMs and 0.034 TFLOP of attention; the
  glue is a larger share (the GEMMs are 4x smaller at the same M) and launch overhead starts to count.

Targets (same run): main case >= 1.08x torch.compile; second case >= 1.3x eager and >= 1.05x torch.compile.
Prediction: our block can only beat torch.compile where our GEMMs keep up with cuBLAS (torch.compile keeps cuBLAS for
the GEMMs and fuses the glue with Triton); the fused epilogues save the glue's ~0.2-0.3 ms on the main case, so if the
Triton GEMMs reach ~95% of cuBLAS the block lands near 1.0-1.05x torch.compile; reaching 1.08x needs GEMMs at
cuBLAS speed. The second case has more glue per FLOP: a better chance against eager. What was measured, stage by
stage, and what it taught: README.md.

The training step - this forward keeping what the backward needs, then the block's backward from the same labs'
kernels and this lab's own (backward_kernels.py), against torch.compile of the module's forward + backward - is
backward.py (its equations, FLOPs and prediction there; its timing train_bench.py). `--train` times it on a GPU
instead of the forward.

Without a GPU the block runs its Triton kernels in the interpreter at tiny sizes (the torch peers need a GPU). On a
GPU whose memory cannot hold a benchmark case, the case runs with B halved until it fits (and says so); `--plan [--gpu
NAME]` prints every launch of both cases on a GPU, with the configuration each kernel gets from its own lab (lab 3.4's
layernorm, lab 4.2's GEMM tiles, lab 4.6's attention tile or Hopper rung) and where that came from.

Run: python -m phase4_optimization.lab07_transformer_block [--quick] [--no-bench] [--dtype bfloat16] [--replot]
     [--plan [--gpu NAME]] [--set GEMM_STAGES=3] [--set FWD_BLOCK_N=64] [--train]
"""
from __future__ import annotations

import math

import numpy as np

from common import arrays, bench, check, device, lab, plan
from common.i18n import tr

LAB = "phase4_lab07_transformer_block"
DTYPES = ("bfloat16", "float16")
EPS = 1e-5
PARAM_NAMES = ("ln1_w", "ln1_b", "w_qkv", "b_qkv", "w_o", "b_o", "ln2_w", "ln2_b", "w_fc", "b_fc", "w_proj", "b_proj")
BENCH_CASES = [(8, 2048, 2048, 16), (16, 1024, 1024, 16)]      # (B, S, d, H): the benchmark's two blocks


def _kernels():
    """The repository's kernels this block is made of, on purpose: lab 3.4's layernorm, lab 4.2's fused-epilogue
    GEMMs and lab 4.6's flash attention (imported late: importing this lab stays cheap)."""
    from phase3_triton.lab04_layernorm import lab as ln
    from phase4_optimization.lab02_fusion import lab as fu
    from phase4_optimization.lab06_attention import lab as at

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

    def __init__(self, x, n_heads, *weights, out=None, attn_config=None, gemm_configs=None, attention: str = "auto",
                 gemm: str = "triton"):
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
        if dh not in at.FLASH_HEAD_DIMS:
            raise ValueError(f"n_heads: head dim d / H = {dh} is not supported by the attention kernel "
                             f"(expected one of {at.FLASH_HEAD_DIMS})")
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
        stats = [e(m, dtype=torch.float32) for _ in range(4)]      # mean and rstd of the two layernorms (backward.py)
        # Q, K, V are strided views into the QKV GEMM's output (B, S, 3, H, D): no copy. The attention output is
        # written through a (B, H, S, D) view of a (B, S, H, D) buffer, which is the (M, d) row-major matrix the
        # output projection reads: no copy either.
        q, k, v = (qkv.view(bsz, s, 3, n_heads, dh)[:, :, i].permute(0, 2, 1, 3) for i in range(3))
        o_view = o.view(bsz, s, n_heads, dh).permute(0, 2, 1, 3)
        # the attention kernel: lab 4.6's Hopper forward (CUDA C, wgmma + TMA) where the GPU has it - it reads these
        # strided views through tensor maps and writes o_view through its strides, no copies - else the Triton one
        self.attention = resolve_attention(attention, dh, x)
        triton_attn = (lambda: at.flash_attn_fwd(q, k, v, True, None, out=(o_view, lse), config=attn_config))
        if self.attention == "hopper":
            hop = _hopper()
            if all(hop.tma_ready(t) is t for t in (q, k, v)):
                # checked, tensor maps encoded and arguments packed once, here: a run only launches (prepare_hopper)
                attn = hop.prepare_hopper(q, k, v, causal=True, out=o_view, lse=lse, kernel=hop.DEFAULT_KERNEL)
            else:   # (a view TMA cannot read in place: a copy per run, so the full call each time)
                attn = (lambda: hop.flash_attn_hopper(*(hop.tma_ready(t) for t in (q, k, v)), causal=True,
                                                      out=o_view, lse=lse, kernel=hop.DEFAULT_KERNEL))
        else:
            attn = triton_attn
        # the other kernel, for the benchmark's comparison (None where only one can run here)
        self.attention_alternative = ("triton", triton_attn) if self.attention == "hopper" else None
        gc = self.gemm_configs = dict(gemm_configs or {})     # read by the stages at call time (tune_gemms)
        self.buffers = {"a": a, "qkv": qkv, "o": o, "h": h, "g": g, "f": f, "y": y, "lse": lse,
                        **dict(zip(("mean1", "rstd1", "mean2", "rstd2"), stats))}
        # The four GEMMs, (stage, key, x, w, bias, activation, residual, out): lab 4.2's Triton linear() by default;
        # gemm="wgmma": lab 4.3's wgmma + TMA kernel (CUDA C, sm_90) with the same epilogues fused (-DEPI_OPS)
        gemms = [("QKV GEMM + bias", "qkv", a, w["w_qkv"], w["b_qkv"], None, None, qkv),
                 ("out GEMM + bias + residual", "o", o.view(m, d), w["w_o"], w["b_o"], None, x2, h),
                 ("FC GEMM + bias + GELU", "fc", g, w["w_fc"], w["b_fc"], "gelu_tanh", None, f),
                 ("proj GEMM + bias + residual", "proj", f, w["w_proj"], w["b_proj"], None, h, y.view(m, d))]
        self.gemm = resolve_gemm(gemm, x)

        def triton_gemm(key, xa, wt, bias, act, res, dst):
            return lambda: fu.linear(xa, wt, bias, activation=act, residual=res, out=dst, config=gc.get(key))

        def wgmma_gemm(key, xa, wt, bias, act, res, dst):
            wg = _wgmma()
            # a residual's stage runs the TMA-store build: the residual's tiles come by TMA under the main loop
            # (lab 4.3's SRC_TMA) instead of one global load per accumulator pair after it
            build = {"tma_store": True, "c_passes": 1} if res is not None else {}
            return lambda: wg.gemm_wgmma(xa, wt, out=dst, bias=bias, activation=act, residual=res, **build)

        make = wgmma_gemm if self.gemm == "wgmma" else triton_gemm
        run_gemm = {name: make(*rest) for name, *rest in gemms}
        # the kernel each GEMM stage runs ("triton" | "wgmma"; bench.pick_gemm_kernels may change it per stage), and
        # the other one, for the benchmark's comparison (empty where only one can run here)
        self.gemm_kernels = {name: self.gemm for name, *_ in gemms}
        self.gemm_alternatives = {}
        if self.gemm == "triton" and _wgmma_unavailable(x) is None:
            self.gemm_alternatives = {name: ("wgmma", wgmma_gemm(*rest)) for name, *rest in gemms}
        self.stages = [
            ("LN1", "memory", lambda: ln.layernorm_fwd(x2, w["ln1_w"], w["ln1_b"], EPS, out=(a, stats[0], stats[1]))),
            ("QKV GEMM + bias", "gemm", run_gemm["QKV GEMM + bias"]),
            ("attention (causal)", "attention", attn),
            ("out GEMM + bias + residual", "gemm", run_gemm["out GEMM + bias + residual"]),
            ("LN2", "memory", lambda: ln.layernorm_fwd(h, w["ln2_w"], w["ln2_b"], EPS, out=(g, stats[2], stats[3]))),
            ("FC GEMM + bias + GELU", "gemm", run_gemm["FC GEMM + bias + GELU"]),
            ("proj GEMM + bias + residual", "gemm", run_gemm["proj GEMM + bias + residual"]),
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
            if key is None or self.gemm != "triton":      # (the wgmma kernel's build is its own record's, lab 4.3)
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


def _hopper():
    """Lab 4.6's Hopper module (hopper.py), imported late like the other labs' kernels."""
    from phase4_optimization.lab06_attention import hopper

    return hopper


ATTENTION_CHOICES = ("auto", "hopper", "triton")
GEMM_CHOICES = ("triton", "wgmma")


def _wgmma():
    """Lab 4.3's wgmma module (wgmma.py: the wgmma + TMA GEMM and its fused epilogue), imported late."""
    from phase4_optimization.lab03_tensor_cores import wgmma

    return wgmma


def _wgmma_unavailable(x=None) -> str | None:
    """Why lab 4.3's wgmma + TMA GEMM cannot run the block's GEMMs here (None: it can)."""
    if x is not None and not arrays.on_device(x):
        return "x is not on a GPU"
    return _wgmma().unavailable_reason()


def resolve_gemm(choice: str, x) -> str:
    """'triton' (lab 4.2's linear(), everywhere) or 'wgmma' (lab 4.3's CUDA C kernel with fused epilogues, sm_90
    only: asking for it elsewhere is a ValueError saying why)."""
    if choice not in GEMM_CHOICES:
        raise ValueError(f"gemm: expected one of {GEMM_CHOICES}, got {choice!r}")
    if choice == "wgmma":
        if not arrays.on_device(x):
            raise TypeError("x: the wgmma GEMMs need a GPU tensor, got a host tensor; move it first with x.cuda()")
        why = _wgmma().unavailable_reason()
        if why:
            raise ValueError(f"gemm: the wgmma kernel cannot run here ({why})")
    return choice


def resolve_attention(choice: str, head_dim: int, x) -> str:
    """'hopper' or 'triton': auto picks lab 4.6's Hopper forward where it can run (an sm_90 GPU, D in its head dims,
    a CUDA tensor), else the Triton flash forward; 'hopper' where it cannot is a ValueError saying why."""
    if choice not in ATTENTION_CHOICES:
        raise ValueError(f"attention: expected one of {ATTENTION_CHOICES}, got {choice!r}")
    if choice == "triton":
        return "triton"
    hop = _hopper()
    if not arrays.on_device(x):
        why = "x is not on a GPU"
    elif head_dim not in hop.HEAD_DIMS:
        why = f"head dim {head_dim} is not one of {hop.HEAD_DIMS}"
    else:
        why = hop.unavailable_reason()
    if why is None:
        return "hopper"
    if choice == "hopper":
        raise ValueError(f"attention: the Hopper kernel cannot run here ({why})")
    return "triton"


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


def block_ours_triton_attention(x, n_heads, *weights, out=None):
    """The block with the Triton flash forward even where the Hopper one runs (so both paths are checked there)."""
    return BlockPlan(x, n_heads, *weights, out=out, attention="triton").run()


def block_ours_wgmma_gemms(x, n_heads, *weights, out=None):
    """block_ours with lab 4.3's wgmma + TMA GEMMs (CUDA C, bias / GELU / residual fused into their epilogue)."""
    return BlockPlan(x, n_heads, *weights, out=out, gemm="wgmma").run()


def _block_unavailable(gpu=None) -> str | None:
    """Why the block's Triton kernels cannot run on `gpu` (None: here, where the interpreter runs them), or None: lab
    4.2's GEMMs and lab 4.6's attention multiply bf16 tiles with tl.dot, which needs sm_80's bf16 tensor cores."""
    if gpu is not None and gpu.cc < 80:
        return tr("the block's bf16 tl.dot (lab 4.2's GEMMs, lab 4.6's attention) needs sm_80 or newer; this GPU is "
                  "{arch}", arch=gpu.arch)
    return None


def _same_as_block_ours_here(gpu=None) -> str | None:
    """Why the Triton-attention variant would only repeat block_ours on `gpu` (None: here) - no GPU, or no sm_90:
    then block_ours runs the Triton attention itself - or None where block_ours picks the Hopper one."""
    if gpu is None and not device.has_gpu():
        return tr("without a GPU the block's attention is the Triton one already (the variant above)")
    why = _block_unavailable(gpu if gpu is not None else device.info())
    if why:
        return why
    reason = _hopper().unavailable_reason(gpu)
    return tr("the same as the variant above here ({reason})", reason=reason) if reason else None


def _wgmma_variant_unavailable(gpu=None) -> str | None:
    """Why the wgmma-GEMM variant cannot run on `gpu` (None: here): lab 4.3's kernel is sm_90a only."""
    return _wgmma().unavailable_reason(gpu)


VARIANTS = [lab.Variant("ours: LN + fused-epilogue GEMMs + flash attention (Hopper CUDA C where it runs, else Triton)",
                        block_ours, "triton", dtypes=DTYPES, unavailable=_block_unavailable),
            lab.Variant("ours with the Triton flash attention", block_ours_triton_attention, "triton", dtypes=DTYPES,
                        unavailable=_same_as_block_ours_here),
            lab.Variant("ours with lab 4.3's wgmma + TMA GEMMs (CUDA C, fused epilogues)", block_ours_wgmma_gemms,
                        "triton", dtypes=DTYPES, unavailable=_wgmma_variant_unavailable)]
PEERS = [lab.Variant("torch module, eager", peer_torch_eager, "peer", dtypes=DTYPES)]
# (B, S, d, H): S = 1, S not a multiple of any tile, D = 64 and 128, a d that is not a multiple of the GEMM tiles
CHECK_CASES = [((1, 1, 64, 1), "bfloat16"), ((2, 37, 128, 2), "bfloat16"), ((1, 129, 192, 3), "bfloat16"),
               ((3, 200, 256, 2), "float16"), ((2, 1000, 512, 8), "bfloat16"), ((1, 517, 1024, 8), "bfloat16")]
CPU_CHECK_CASES = [((1, 1, 64, 1), "bfloat16"), ((2, 13, 128, 2), "bfloat16"), ((1, 21, 64, 1), "float16")]
QUICK_CASES = 2


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's cases on a given GPU (common.plan), from the functions the kernels' own
# labs launch with - this lab writes no kernel, so each stage's launch and configuration are its lab's
# ---------------------------------------------------------------------------------------------------------------------
def bench_bytes(case) -> int:
    """Bytes a benchmark case (B, S, d, H) holds at once, 16-bit: our block's activations (x, a, qkv, o, h, g, f, y:
    12 M d) and weights (12 d^2), the torch module's copy of the weights and its activations and torch.compile's (12
    M d each), the floors' operands (the largest GEMM's, ~4 M d, and attention's q, k, v)."""
    bsz, s, d, _h = case
    m = bsz * s
    return 2 * (43 * m * d + 24 * d * d)


def fit_case(case, gpu=None, nbytes=bench_bytes, what: str = "case"):
    """(case, note): a benchmark case whose bytes (nbytes(case); the training step passes its own) fit the GPU's
    memory (common.plan.fit), B halved until they do."""
    return plan.fit(tuple(case), nbytes, gpu, shrink=lambda c: (max(1, c[0] // 2), *c[1:]),
                    what=f"{what} B{case[0]} S{case[1]} d{case[2]} H{case[3]}")


def _ln_launch(variant: str, name: str, rows: int, n: int, dt: str, gpu, case: str) -> plan.Launch:
    """Lab 3.4's layernorm forward on (rows, n), as layernorm_fwd resolves and launches it on `gpu`."""
    ln = _kernels()[0]
    res = ln.fwd_config(n, dt, gpu)
    kernel, programs, const, warps = ln.fwd_launch(rows, n, ln._fwd_dict(res.values), gpu.sms)
    welford = kernel is ln.layernorm_fwd_welford_kernel
    return plan.Launch(variant, "layernorm_fwd_welford_kernel" if welford else "layernorm_fwd_kernel", "triton",
                       fn=kernel, grid=programs, signature=ln.fwd_signature(dt, welford), defines=const,
                       num_warps=warps, case=f"{case}: {name}", config_source=res.source())


def _gemm_launch(variant: str, name: str, m: int, n: int, k: int, act, residual: bool, dt: str, gpu,
                 case: str) -> plan.Launch:
    """Lab 4.2's linear() on an M x N x K stage, as it launches it untuned (config=None): the persistent TMA kernel
    where linear_uses_tma would take it (a Hopper-class GPU, no residual, a problem large enough), else linear_kernel
    with the tile linear_config resolves. The benchmark then times each stage's tiles (BlockPlan.tune_gemms)."""
    fu = _kernels()[1]
    from phase3_triton.lab02_matmul import lab as mm

    if (not residual and not fu.tma_unavailable(gpu) and min(m, n, k) >= fu.LINEAR_BIG_MIN
            and m * n * k >= mm.TMA_MIN_MNK):
        tc = fu.linear_tma_config(m, n, k, gpu)
        cfg = fu.tile_of(tc.values, "TMA_")
        programs = fu.tma_programs(m, n, cfg, gpu)
        const = fu.tma_constexprs(cfg, programs, fu.ACT_CODE[act], True)
        return plan.Launch(variant, "linear_tma_kernel", "triton", fn=fu.linear_tma_kernel, grid=programs,
                           signature=fu.linear_tma_signature(dt, cfg, const), defines=const,
                           num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=f"{case}: {name}",
                           config_source=tc.source())
    gc = fu.linear_config(m, n, k, dt, gpu)
    cfg = fu.tile_of(gc.values, "GEMM_")
    programs, meta = fu.linear_meta(m, n, k, cfg)
    const = dict(HAS_BIAS=True, ACT=fu.ACT_CODE[act], HAS_RES=residual, UPCAST=False, **meta)
    return plan.Launch(variant, "linear_kernel", "triton", fn=fu.linear_kernel, grid=programs,
                       signature=fu.linear_signature(dt, const), defines=const, num_warps=cfg["num_warps"],
                       num_stages=cfg["num_stages"], case=f"{case}: {name}", config_source=gc.source())


def _wgmma_launch(variant: str, name: str, m: int, n: int, k: int, act, residual: bool, dt: str, gpu,
                  case: str) -> plan.Launch:
    """Lab 4.3's gemm_wgmma on an M x N x K stage with its epilogue fused (-DEPI_OPS), the build resolve_build picks
    for `gpu` (a residual's stage: with the TMA-store epilogue, as BlockPlan runs it)."""
    wg = _wgmma()
    kmajor = wg.default_b_kmajor()
    build, note = wg.resolve_build(m, n, k, b_kmajor=kmajor, gpu=gpu)
    if residual:        # as BlockPlan runs it: the TMA-store build, the residual's tiles by TMA (SRC_TMA)
        build = dict(build, tma_store=True, c_passes=1)
    cluster = wg.launch_cluster(m, build["cluster"])
    grid, smem, defs = wg.launch_shape(m, n, dt, kmajor, cluster, build["tma_store"], build["c_passes"],
                                       wg.epi_mask(True, act, residual), gpu=gpu)
    return plan.Launch(variant, wg.KERNEL, "cuda", grid=grid, threads=wg.THREADS, source=wg.KERNEL_PATH,
                       defines=defs, arch=wg.ARCH, dyn_smem=smem, case=f"{case}: {name}, {wg.build_label(build)}",
                       config_source=wg.say_note(note))


def _attention_launches(variant: str, kind: str, bsz: int, s: int, n_heads: int, dh: int, dt: str, gpu,
                        case: str) -> list[plan.Launch]:
    """Lab 4.6's causal forward on the block's q, k, v: its Hopper rung (hopper.DEFAULT_KERNEL, as prepare_hopper
    launches it) or its Triton kernel (flash_attn_fwd's tile for this GPU)."""
    at = _kernels()[2]
    if kind == "triton":
        return [at.fwd_launch(variant, gpu, bsz, n_heads, n_heads, s, s, dh, True, dt, f"{case}: attention (causal)")]
    hop = _hopper()
    rung = hop.DEFAULT_KERNEL
    res = hop.stages_config(rung)
    stages = res.values[f"STAGES_{rung}"]
    grid = (-(-s // hop.BLOCK_M), bsz * n_heads)
    if rung in hop.PERSISTENT:
        grid = (hop.persistent_grid(grid[0] * grid[1], gpu.sms),)
    return [plan.Launch(variant, hop.KERNELS[rung], "cuda", grid=grid, threads=hop.THREADS, source=hop.KERNEL_PATH,
                        defines=hop.defines(dh, dt, stages=stages), arch=hop.ARCH,
                        dyn_smem=hop.smem_bytes(dh, stages),
                        case=tr("{case}: attention (causal), {stages} stages", case=case, stages=stages),
                        config_source=res.source())]


def launches(gpu, size=None) -> list[plan.Launch]:
    """Every kernel launch of the benchmark's cases (BENCH_CASES, each fitted to the GPU's memory; `size`: one
    (B, S, d, H) instead) on `gpu`, bf16: our block's seven stages (the two layernorms, the four GEMMs, attention by
    the kernel resolve_attention picks there), then what the other variants launch differently - the Triton attention
    where our block runs the Hopper one, lab 4.3's wgmma GEMMs where they run."""
    dt = "bfloat16"
    runs = {v.name for v in VARIANTS if v.available(gpu)[0]}
    ours, triton_attn, wgmma = (v.name for v in VARIANTS)
    at, hop = _kernels()[2], _hopper()
    out = []
    for case in ([tuple(size)] if size else BENCH_CASES):
        (bsz, s, d, n_heads), _ = fit_case(case, gpu)
        m, dh = bsz * s, d // n_heads
        label = f"B{bsz} S{s} d{d} H{n_heads}"
        gemms = [("QKV GEMM + bias", m, 3 * d, d, None, False), ("out GEMM + bias + residual", m, d, d, None, True),
                 ("FC GEMM + bias + GELU", m, 4 * d, d, "gelu_tanh", False),
                 ("proj GEMM + bias + residual", m, d, 4 * d, None, True)]
        if ours in runs:
            attention = "hopper" if dh in hop.HEAD_DIMS and not hop.unavailable_reason(gpu) else "triton"
            out.append(_ln_launch(ours, "LN1", m, d, dt, gpu, label))
            out.append(_gemm_launch(ours, *gemms[0], dt, gpu, label))
            out += _attention_launches(ours, attention, bsz, s, n_heads, dh, dt, gpu, label)
            out.append(_gemm_launch(ours, *gemms[1], dt, gpu, label))
            out.append(_ln_launch(ours, "LN2", m, d, dt, gpu, label))
            out += [_gemm_launch(ours, *g, dt, gpu, label) for g in gemms[2:]]
        if triton_attn in runs and dh in at.FLASH_HEAD_DIMS:
            out += _attention_launches(triton_attn, "triton", bsz, s, n_heads, dh, dt, gpu,
                                       tr("{label} (the other stages as the first variant's)", label=label))
        if wgmma in runs:
            out += [_wgmma_launch(wgmma, *g, dt, gpu, tr("{label} (the other stages as the first variant's)",
                                                         label=label))
                    for g in gemms]
    return out
