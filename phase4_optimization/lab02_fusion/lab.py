"""Lab 4.2 - Kernel fusion: count the bytes a chain of kernels moves, then stop moving the ones nobody needs.

You will learn
  * (part 1) why a chain of cheap elementwise ops costs what its memory passes cost, not what its arithmetic costs:
    bias + GELU as two kernels (t = x + bias, then y = gelu(t)) writes t to memory and reads it back; one fused kernel
    keeps t in registers. Both GELUs are here and named: "gelu_tanh" (the tanh approximation, computed as
    t / (1 + exp(-2u)), the same function) and "gelu_erf" (the exact 0.5 t (1 + erf(t / sqrt 2)));
  * predicting the speed-up of a fusion from a byte count alone, and checking the prediction: one kernel per op,
    written here in CUDA C (16-byte vector loads, scalar fallback for unaligned arrays and ragged rows) and in
    Triton, against one fused kernel in each, with the number of launches and the bytes of every variant explicit;
  * (part 2) a normalization epilogue: h = x + residual, y = layernorm(h), where h is ALSO written (it is the next
    residual stream of a transformer block): one pass that reads x and residual and writes h and y, against an add
    kernel plus a layernorm kernel (phase 3's) that reads h back. In Triton the row stays in registers between the two
    reductions; the CUDA C version (a block per row) re-reads its own h from L2, with plain loads - the read-only
    __ldg path is wrong for data the kernel itself writes;
  * (part 3) a GEMM epilogue: y = gelu_tanh(x @ W + bias) computed while the accumulator tile is still in registers,
    against cuBLAS followed by separate bias and GELU kernels. The epilogue saves little memory traffic next to the
    GEMM's math, so the fused kernel wins only if the Triton GEMM itself runs close to cuBLAS: fusion cannot rescue a
    slow main loop. Optional residual add (y = x @ W + bias + residual) and no-activation mode;
  * public functions the transformer-block lab reuses: linear(), residual_layernorm(), bias_gelu(), bias_residual()
    (Triton; on CuPy / torch CUDA arrays on a GPU, NumPy / CPU torch in the interpreter).

One lab, three parts, one question asked of each: what does fusing the chain save, and does the saving show?
  part 1  elementwise chains: bias + gelu_tanh, bias + gelu_erf, bias + residual    CUDA C fusion_01/02, Triton
  part 2  residual + layernorm, h written too                                      CUDA C fusion_03, Triton
  part 3  GEMM + bias + gelu_tanh (or + bias + residual, or plain)                 Triton
A case's size names its op first - (op, M, N), or (op, M, N, K) for the GEMM - and so do the inputs, so every variant
below takes every part's cases: fused and unfused, CUDA C and Triton; where an implementation has no kernel for a part
(CUDA C has no GEMM here, and no unfused layernorm) the variant says so (cannot_serve) and the check passes it over.

The two numbers (elt = bytes per element, M N = the elements of one matrix; FLOPs ~20 per element for a GELU, ~10
for a layernorm, 2 M N K for a GEMM):
  * bias + GELU, bf16 8192 x 8192: unfused = 4 M N elt = 537 MB (read x, write t, read t, write y), fused = 2 M N elt =
    268 MB; ~1.3 GFLOP, at most ~10 FLOP/B: memory-bound either way, so the predicted speed-up is the byte ratio, 2.0x;
  * bias + residual, same shape: unfused 5 M N elt = 671 MB (add_bias 2 + add 3), fused 3 M N elt = 403 MB: 1.67x;
  * residual + layernorm, bf16 32768 x 4096: fused = read x, r + write h, y = 4 M N elt = 1.07 GB; unfused = add
    (3 M N) + layernorm (2 M N) = 5 M N elt = 1.34 GB: 1.25x; memory-bound. torch eager moves the same 5 M N;
    torch.compile fuses to 4 M N, so matching it means running at the same fraction of the ceiling;
  * GEMM + bias + GELU, bf16 4096^3: 2 M N K = 137.4 GFLOP against (M K + K N + M N) x 2 B = 101 MB, ~1365 FLOP/B:
    compute-bound (far right of the bf16 ridge of any current GPU; `--plan` prints this GPU's). The unfused tail
    (write t, then read + write for the bias add, read + write for GELU) moves 4 M N x 2 B = 134 MB more, plus two
    launches: the predicted speed-up of a fused kernel whose GEMM runs at cuBLAS's rate is (GEMM time + the tail's
    bytes over the bandwidth) / GEMM time - about 1.15x where the GEMM is ~0.2 ms and the bandwidth a few TB/s
    (`--plan` prints this GPU's), less if the fused GEMM runs a few percent slower.
Targets (same run): the fused GEMM epilogue at bf16 4096^3 >= 1.1x the unfused pair (torch.matmul + torch bias add +
torch GELU); fused residual + layernorm at bf16 32768 x 4096 >= 1.0x torch.compile. The lesson, each prediction and
what the measured runs taught: README.md.

Run: python -m phase4_optimization.lab02_fusion [--quick] [--no-bench] [--arch sm_80] [--replot] [--plan [--gpu NAME]]
     [--set UNROLL=4] [--set GEMM_STAGES=3]
"""
from __future__ import annotations

import math

import numpy as np

from common import arrays, check, device, lab, plan
from common.i18n import tr
from common.triton_support import INTERPRETER

# One module a job; lab.py keeps the lab's contract (the reference and inputs, the variants and their cases, the plan)
#   parts.py               the three parts and their ops; the dtypes, limits and argument checks every part shares
#   elementwise.py         part 1: the elementwise chains (Triton elementwise_kernel, CUDA C fusion_01/02, torch)
#   residual_layernorm.py  part 2: residual + layernorm (Triton, CUDA C fusion_03, unfused with lab 3.4's, torch)
#   gemm_tiles.py          part 3: the GEMM's tiles (the default on each GPU, tuning, --set) and launch arithmetic
#   gemm_tma.py            part 3 on Hopper: when the persistent TMA GEMM runs, its tile and its grid
#   gemm.py                part 3: linear() and linear_tma(), the GEMM chain unfused, torch
#   signatures.py          the Triton kernels as the ahead-of-time compiler takes them (the plan, the compile reports)
# Every name lab.py had before its parts moved out is re-exported here: lab 4.7, tools/, the tests and bench.py reach
# the parts through lab.py (`from phase4_optimization.lab02_fusion import lab`).
from .elementwise import (  # noqa: F401 - re-exported
    CUDA_EW, CUDA_THREADS, CUDA_UNROLL, EW_TILE, EW_TILE_INTERPRETER, SUFFIX, _check_cuda_ew, _check_ew, _cuda_args,
    _cuda_launch, _cuda_vector_ok, _ew_launch, _gelu_name, add_bias_triton, add_triton, bias_gelu, bias_residual,
    cuda_ew_config, cuda_plan, ew_config, ew_cuda_fused, ew_cuda_unfused, ew_grid, ew_tile, ew_torch_eager,
    ew_triton_fused, ew_triton_unfused, gelu_triton)
from .gemm import (  # noqa: F401 - re-exported
    _check_bias, _k_step_overflows, _linear_parts, linear, linear_tma, linear_torch_eager, linear_triton_fused,
    linear_triton_unfused)
from .gemm_tiles import (  # noqa: F401 - re-exported
    LINEAR_BIG, LINEAR_BIG_MIN, LINEAR_CONFIGS, LINEAR_FIT, LINEAR_INTERPRETER, LINEAR_SMALL, _KNOB, _gcfg,
    _no_bf16_dot_here, _tile_validator, gemm_dtype, knobs, linear_config, linear_default, linear_meta, ring_bytes,
    tile_of)
from .gemm_tma import (  # noqa: F401 - re-exported
    LINEAR_TMA, LINEAR_TMA_INTERPRETER, TMA_PROGRAMS_INTERPRETER, _matmul_lab, _tma_group, _tma_here,
    _variant_tma_unavailable, linear_tma_config, linear_uses_tma, tma_programs, tma_unavailable)
from .parts import (  # noqa: F401 - re-exported
    ACTIVATIONS, ACT_CODE, CU, DTYPES, EPS, EW, EW_OPS, GEMM, GEMM_DTYPES, LINEAR_OPS, LN, LN_OPS, MAX_GRID,
    MAX_GRID_YZ, PARTS, SQRT_2_OVER_PI, TUNED, TUNED_HERE, _check_like, _check_matrix, _check_row, _ew_args, _need,
    _torch_view, part_of)
from .residual_layernorm import (  # noqa: F401 - re-exported
    CUDA_LN, CUDA_LN_THREADS, LN_LOOP_BLOCK, LN_MAX_SINGLE, _check_cuda_ln, _check_ln, _layernorm_lab, _ln_args,
    cuda_ln_config, ln_config, ln_cuda_fused, ln_default, ln_launch, ln_torch_eager, ln_triton_fused,
    ln_triton_fused_looped, ln_triton_unfused, long_row_config, residual_layernorm, residual_layernorm_cuda)
from .signatures import (  # noqa: F401 - re-exported
    TY, ew_signature, linear_signature, linear_tma_signature, ln_signature, tma_constexprs)
from .triton_kernels import (ACT_GELU_ERF, ACT_GELU_TANH, ACT_NONE, elementwise_kernel, linear_kernel,
                             linear_tma_kernel, residual_layernorm_kernel)

LAB = "phase4_lab02_fusion"


# ---------------------------------------------------------------------------------------------------------------------
# Reference and inputs. A case's size names the op: (op, M, N) for the elementwise chains and residual_layernorm,
# (op, M, N, K) for the linear layer. make_inputs puts the op name first among the inputs, so reference() and every
# variant know which computation a case is (a name passes through the lab driver untouched).
# ---------------------------------------------------------------------------------------------------------------------
def gelu_tanh_ref(t: np.ndarray) -> np.ndarray:
    return 0.5 * t * (1.0 + np.tanh(SQRT_2_OVER_PI * (t + 0.044715 * t ** 3)))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu_erf_ref(t: np.ndarray) -> np.ndarray:
    return 0.5 * t * (1.0 + _erf(t / math.sqrt(2.0)))


def layernorm_ref(h: np.ndarray, w, b, eps: float = EPS) -> np.ndarray:
    mean = h.mean(axis=-1, keepdims=True)
    hc = h - mean
    return hc / np.sqrt((hc * hc).mean(axis=-1, keepdims=True) + eps) * w + b


def reference(op: str, *a, dtype: str | None = None):
    """float64 ground truth for every op of the lab. residual_layernorm: h = x + r is stored in `dtype` and the stored
    h is what gets normalized (by every variant here, as by an unfused add + layernorm), so y is the layernorm of h
    rounded to `dtype` (no rounding without it); the h it returns is exact, for the comparison to round."""
    a = [np.asarray(v, np.float64) for v in a]
    if op == "bias_gelu_tanh":
        return gelu_tanh_ref(a[0] + a[1])
    if op == "bias_gelu_erf":
        return gelu_erf_ref(a[0] + a[1])
    if op == "bias_residual":
        return a[0] + a[1] + a[2]
    if op == "residual_layernorm":
        x, r, w, b = a
        h = x + r
        if dtype:        # the interpreter truncates to bf16 (see tolerance()), so its stored h is truncated
            h_st = arrays.round_to(h, dtype, toward_zero=INTERPRETER and dtype == "bfloat16")
        return layernorm_ref(h_st if dtype else h, w, b), h
    if op in LINEAR_OPS:
        t = a[0] @ a[1]
        if op != "linear_plain":
            t = t + a[2]
        if op == "linear_gelu_tanh":
            t = gelu_tanh_ref(t)
        if op == "linear_bias_residual":
            t = t + a[3]
        return t
    raise ValueError(f"op: unknown op {op!r}")


def make_inputs(size, dtype: str, rng: np.random.Generator, where: str):
    """Inputs of the op the size names. Elementwise: x ~ 1.5 N(0,1) (GELU sees both tails), bias, residual.
    Layernorm: x with mean 3 and a few outliers (a large mean is what breaks a one-pass variance), residual, weight
    ~ 1 +- 0.2, bias. Linear: x ~ N(0,1), W ~ N(0,1)/sqrt(K) (outputs of order 1 whatever K), bias, residual."""
    op, m, n = size[0], size[1], size[2]

    def put(v):
        return arrays.from_numpy(v, dtype, where)

    if op in EW_OPS:
        x = 1.5 * rng.standard_normal((m, n))
        bias = 0.5 * rng.standard_normal(n)
        if op == "bias_residual":
            return op, put(x), put(bias), put(rng.standard_normal((m, n)))
        return op, put(x), put(bias)
    if op == "residual_layernorm":
        x = 3.0 + 2.0 * rng.standard_normal((m, n))
        if x.size > 16:
            x.flat[rng.integers(0, x.size, 3)] = 40.0
        r = rng.standard_normal((m, n))
        return op, put(x), put(r), put(1.0 + 0.2 * rng.standard_normal(n)), put(0.5 * rng.standard_normal(n))
    if op in LINEAR_OPS:
        k = size[3]
        x = rng.standard_normal((m, k))
        w = rng.standard_normal((k, n)) / math.sqrt(max(k, 1))
        out = [op, put(x), put(w)]
        if op != "linear_plain":
            out.append(put(0.5 * rng.standard_normal(n)))
        if op == "linear_bias_residual":
            out.append(put(rng.standard_normal((m, n))))
        return tuple(out)
    raise ValueError(f"size: unknown op {op!r}")


GELU_TAIL_GAIN = 0.198    # max over t < 0 of |t g'(t)| for gelu_tanh: the absolute error per unit relative error of t


def tolerance(size, dtype: str) -> check.Tol:
    # Elementwise and layernorm: fp32 arithmetic, one (fused) or two (unfused: the intermediate is stored) roundings
    # to the storage dtype: the dtype's default. Layernorm of one column: the variance is exactly 0 and y = bias.
    # Linear: fp32 accumulation, so the error is the final rounding (plus one of the intermediate when unfused).
    # 16-bit GELU chains: the unfused variants round t before the GELU, and in GELU's negative tail the function is
    # small next to its slope (|t g'(t) / g(t)| ~ 4 at t = -2), which amplifies that rounding; over a handful of
    # elements the norm error can pass the dtype's default (seen: 1.07e-2 for a 1 x 1 x 1 bf16 linear + GELU,
    # three roundings in a row). Twice the default norm limit; the per-element limit stays.
    # In the interpreter, bf16 also rounds toward zero (Triton 3.9's x.to(tl.bfloat16) truncates, as lab 4.3 notes):
    # each rounding can cost 2^-8 instead of 2^-9, all in the same direction, and the unfused linear + bias + GELU
    # chain rounds three times; seen on the CPU (seed 4065416443): 2.35e-2 on a 1 x 1 x 1 case (0.265 against the
    # reference: three truncations of 0.78%). So twice again there, on the CPU only; the GPU limits are unchanged.
    # Deep in GELU's negative tail the output is ~0 (g(-5) ~ -1.5e-6) and a relative error means nothing: on one
    # element (1 x 1 x 1) neither limit has another scale, and seed 3 gave 0.28 relative for 5e-8 absolute. An
    # absolute floor of 1e-4 (the inputs and outputs are of order 1; a real bug costs order 1) covers that.
    # fp32 has the same tail: 1 + tanh(u) cancels there, so GPU fp32 gave 1.09e-3 relative on a 1 x 1 bias + GELU
    # whose output is ~5e-5 (5.8e-8 absolute, one fp32 rounding of tanh times |x| / 2); its floor is 1e-6.
    # The relative limit alone cannot hold where one element sits in that tail at ~1e-2: a rounding of t by u
    # (relative) moves g(t) by |t g'(t)| u in absolute terms, and for t < 0 |t g'(t)| peaks at 0.198 (t = -1.65).
    # So the 16-bit floor is that gain times the two roundings of t before the GELU (t = x W, then t + bias, when
    # unfused), each 2u when the interpreter truncates: bf16 3.1e-3 in the interpreter, 1.5e-3 on a GPU; fp16 1.9e-4.
    # Seen (seed 4100928171): 7.83e-4 absolute, 8% of an output of ~1e-2, on a 1 x 1 x 1 bf16 linear + GELU in the
    # interpreter. A real bug (a wrong constant, the bias after the GELU) costs order 1.
    t = check.tolerance(dtype)
    if dtype in ("bfloat16", "float16") and "gelu" in size[0]:
        trunc = 2 if INTERPRETER and dtype == "bfloat16" else 1
        tail = GELU_TAIL_GAIN * 2 * trunc * check.UNIT_ROUNDOFF[dtype]
        return check.Tol(2 * trunc * t.rel_norm, t.elem, max(t.atol, 1e-4, tail))
    if "gelu" in size[0]:
        return check.Tol(t.rel_norm, t.elem, max(t.atol, 1e-6))
    return t


# =====================================================================================================================
# The lab contract: every variant takes every part's cases (the op comes first among the inputs) and dispatches
# on the op; a part an implementation has no kernel for is named by cannot_serve, and the checks pass it over.
# =====================================================================================================================
def _dispatch(op, table: dict, what: str):
    part = part_of(op)
    if part not in table:
        raise ValueError(f"op: {what} has no kernel for {part} ({op!r}): {NO_KERNEL[what]}")
    return table[part]


def _gpu_first(a):
    """The CUDA C variants refuse host arrays before anything else, whatever the op (the message says how to move
    them)."""
    arrays.check_array("x", a[0], ndim=None, libs=("cupy", "torch"), contiguous=False)


def cuda_unfused(op, *a, out=None):
    """CUDA C, one kernel per op: part 1's chains as fusion_01_add_bias, then fusion_01_gelu_* / fusion_01_add."""
    _gpu_first(a)
    return _dispatch(op, {EW: ew_cuda_unfused}, "cuda unfused")(op, *a, out=out)


def cuda_fused(op, *a, out=None):
    """CUDA C, one kernel per chain: fusion_02_<op> (part 1), fusion_03_residual_layernorm (part 2)."""
    _gpu_first(a)
    return _dispatch(op, {EW: ew_cuda_fused, LN: ln_cuda_fused}, "cuda fused")(op, *a, out=out)


def triton_unfused(op, *a, out=None):
    """Triton, one kernel per op: add_bias then gelu / add (part 1); add, then phase 3's layernorm (part 2); the GEMM,
    then bias, then gelu / add (part 3)."""
    return _dispatch(op, {EW: ew_triton_unfused, LN: ln_triton_unfused, GEMM: linear_triton_unfused},
                     "triton unfused")(op, *a, out=out)


def triton_fused(op, *a, out=None):
    """Triton, one kernel per chain: elementwise_kernel, residual_layernorm_kernel, linear_kernel with its epilogue."""
    return _dispatch(op, {EW: ew_triton_fused, LN: ln_triton_fused, GEMM: linear_triton_fused},
                     "triton fused")(op, *a, out=out)


# Tiles far smaller than the cases, so every fused kernel runs its multi-tile paths: several column blocks per row
# (part 1), a row in ~4 chunks - the long-row path of rows longer than LN_MAX_SINGLE (part 2), several tile groups and
# K steps with ragged edges (part 3).
SMALL_EW = {"BLOCK_M": 2, "BLOCK_N": 16, "num_warps": 1}
SMALL_LINEAR = _gcfg(16, 16, 16, 4, 1, group=2) if INTERPRETER else _gcfg(32, 32, 32, 4, 2, group=2)


def triton_fused_small_tiles(op, *a, out=None):
    """triton_fused with tiles smaller than the problem: SMALL_EW, the long-row path, SMALL_LINEAR."""
    return _dispatch(op, {EW: lambda *x, out: ew_triton_fused(*x, out=out, config=SMALL_EW),
                          LN: ln_triton_fused_looped,
                          GEMM: lambda *x, out: linear_triton_fused(*x, out=out, config=SMALL_LINEAR)},
                     "triton fused, small tiles")(op, *a, out=out)


def linear_tma_fused(op, *a, out=None):
    """Part 3 with the persistent TMA kernel (linear_tma); the residual op is not among its cases."""
    x, w, bias, res, act = _linear_parts(op, a)
    if res is not None:
        raise ValueError("linear_tma has no residual epilogue (its tile would not fit beside the ring); use linear")
    return linear_tma(x, w, bias, activation=act, out=out)


def _tma_cannot_serve(size, dtype) -> str:
    op = size[0]
    if part_of(op) != GEMM:
        return tr("the TMA kernel is part 3's GEMM only")
    if dtype not in GEMM_DTYPES:
        return tr("the GEMM takes 16-bit inputs only")
    if op == "linear_bias_residual":
        return tr("no residual epilogue in the TMA kernel")
    if size[2] % 8 or size[3] % 8:
        return tr("TMA needs row strides of 16 bytes: N and K multiples of 8")
    return ""


def peer_torch_eager(op, *a, out=None):
    """torch eager, one kernel per op as a user writes it (x + bias, F.gelu; x + r, F.layer_norm; matmul, + bias,
    F.gelu), the result copied into out."""
    return _dispatch(op, {EW: ew_torch_eager, LN: ln_torch_eager, GEMM: linear_torch_eager}, "torch")(op, *a, out=out)


# Why an implementation has no kernel for a part (CUDA C: no GEMM here, no unfused layernorm).
NO_KERNEL = {"cuda unfused": "CUDA C has an unfused chain for part 1 only (no layernorm or GEMM kernel here)",
             "cuda fused": "CUDA C has parts 1 and 2 only (no GEMM here: lab 4.3's is the CUDA C GEMM)"}


def _cannot(serves: tuple[str, ...], why: str = ""):
    """cannot_serve of a variant: the cases of the parts it has no kernel for, and fp32 GEMMs (16-bit inputs only)."""
    def cannot_serve(size, dtype) -> str:
        part = part_of(size[0])
        if part not in serves:
            return tr(why) if why else why
        if part == GEMM and dtype not in GEMM_DTYPES:
            return tr("the GEMM takes 16-bit inputs only")
        if part == GEMM and dtype == "bfloat16":
            return _no_bf16_dot_here()
        return ""
    return cannot_serve


VARIANTS = [
    lab.Variant("cuda 01 unfused (one kernel per op)", cuda_unfused, "cuda", dtypes=DTYPES,
                note="part 1: 2 launches", cannot_serve=_cannot((EW,), NO_KERNEL["cuda unfused"])),
    lab.Variant("cuda 02/03 fused (one kernel per chain)", cuda_fused, "cuda", dtypes=DTYPES,
                note="parts 1-2: 1 launch", cannot_serve=_cannot((EW, LN), NO_KERNEL["cuda fused"])),
    lab.Variant("triton unfused (one kernel per op)", triton_unfused, "triton", dtypes=DTYPES,
                note="2-3 launches", cannot_serve=_cannot((EW, LN, GEMM))),
    lab.Variant("triton fused (one kernel per chain)", triton_fused, "triton", dtypes=DTYPES, note="1 launch",
                cannot_serve=_cannot((EW, LN, GEMM))),
    lab.Variant("triton fused, small tiles (multi-tile and long-row paths)", triton_fused_small_tiles, "triton",
                dtypes=DTYPES, note="1 launch", cannot_serve=_cannot((EW, LN, GEMM))),
    lab.Variant("triton fused GEMM, persistent TMA (sm_90+)", linear_tma_fused, "triton", dtypes=GEMM_DTYPES,
                note="part 3 without residual", archs=("sm_90+",), unavailable=_variant_tma_unavailable,
                cannot_serve=_tma_cannot_serve),
]
PEERS = [lab.Variant("torch eager (one kernel per op)", peer_torch_eager, "peer", dtypes=DTYPES)]
# One case of each part first (--quick checks those three), then the awkward ones: 1 column, odd N (the scalar CUDA
# path), N % 8 == 0 (the vector path), rows not a multiple of any tile, a row longer than LN_MAX_SINGLE (part 2's
# long-row path), GEMMs ragged in M, N and K, and one large enough for the big tile.
CHECK_CASES = [(("bias_gelu_tanh", 257, 1030), "bfloat16"), (("residual_layernorm", 130, 4096), "bfloat16"),
               (("linear_gelu_tanh", 127, 264, 136), "bfloat16"),
               (("bias_gelu_tanh", 1, 1), "float32"), (("bias_gelu_erf", 37, 1000), "float32"),
               (("bias_residual", 129, 72), "bfloat16"), (("bias_gelu_erf", 64, 4104), "float16"),
               (("bias_residual", 3, 4097), "float32"), (("bias_gelu_tanh", 33, 520), "float16"),
               (("bias_gelu_erf", 5, 24), "bfloat16"),
               (("residual_layernorm", 1, 1), "float32"), (("residual_layernorm", 37, 1000), "float32"),
               (("residual_layernorm", 17, 768), "float16"), (("residual_layernorm", 9, 20000), "float32"),
               (("linear_gelu_tanh", 1, 1, 1), "bfloat16"), (("linear_bias_residual", 67, 131, 97), "float16"),
               (("linear_plain", 130, 70, 299), "bfloat16"), (("linear_gelu_tanh", 512, 768, 512), "bfloat16"),
               (("linear_gelu_tanh", 127, 255, 129), "bfloat16"), (("linear_plain", 1, 8, 8), "float16"),
               (("linear_gelu_tanh", 520, 1032, 776), "bfloat16")]
CPU_CHECK_CASES = [(("bias_gelu_tanh", 13, 40), "float16"), (("residual_layernorm", 5, 33), "float32"),
                   (("linear_gelu_tanh", 33, 72, 40), "bfloat16"),
                   (("bias_gelu_tanh", 1, 1), "float32"), (("bias_gelu_erf", 7, 33), "float32"),
                   (("bias_residual", 5, 24), "bfloat16"), (("bias_gelu_erf", 3, 130), "bfloat16"),
                   (("bias_residual", 9, 17), "float16"),
                   (("residual_layernorm", 1, 1), "float32"), (("residual_layernorm", 4, 100), "bfloat16"),
                   (("residual_layernorm", 6, 299), "float16"),
                   (("linear_gelu_tanh", 1, 1, 1), "bfloat16"), (("linear_bias_residual", 17, 31, 23), "float16"),
                   (("linear_plain", 5, 7, 3), "float16"), (("linear_gelu_tanh", 33, 65, 40), "bfloat16"),
                   (("linear_plain", 1, 8, 8), "float16")]
QUICK_CASES = 3


# =====================================================================================================================
# The plan: every kernel launch of the benchmark's three headline cases on a given GPU (common.plan)
# =====================================================================================================================
EW_SHAPE = (8192, 8192)          # part 1's benchmark, bf16
LN_SHAPE = (32768, 4096)         # part 2's benchmark, bf16
GEMM_N = 4096                    # part 3's benchmark, GEMM_N^3 in gemm_dtype(gpu)
PLAN_NOTES = ["part 2's unfused chain ends in phase 3's layernorm forward (lab 3.4's plan lists its launch); the "
              "small-tiles variant is checked, not benchmarked; torch eager and torch.compile launch their own kernels"]


def ew_bytes(shape) -> int:
    """Bytes part 1's benchmark holds at once: x, the residual, four outputs, the unfused chains' intermediates and
    torch's, about 12 matrices of 2-byte elements."""
    return 24 * shape[0] * shape[1]


def ln_bytes(shape) -> int:
    """Part 2's: x, r, three (y, h) pairs, torch's h and y and the unfused chain's statistics, about 14 matrices."""
    return 28 * shape[0] * shape[1]


def gemm_bytes(n: int) -> int:
    """Part 3's: x, W, five outputs, the unfused chains' intermediates, about 12 n x n matrices of 2-byte elements."""
    return 24 * n * n


def _halve_rows(shape):
    return (shape[0] // 2, shape[1])


def bench_shapes(gpu: device.DeviceInfo) -> tuple[tuple, tuple, int, list[str]]:
    """(part 1's shape, part 2's, part 3's n, notes): the benchmark's shapes, scaled down (rows halved, or n) where
    the GPU's memory cannot hold them."""
    ew, n1 = plan.fit(EW_SHAPE, ew_bytes, gpu, shrink=_halve_rows, what="part 1's shape")
    lnr, n2 = plan.fit(LN_SHAPE, ln_bytes, gpu, shrink=_halve_rows, what="part 2's shape")
    g, n3 = plan.fit(GEMM_N, gemm_bytes, gpu, what="part 3's n")
    return ew, lnr, g, [t for t in (n1, n2, n3) if t]


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Every kernel the benchmark's three parts launch on `gpu` (size: unused; the lab has one shape per part,
    bench_shapes fits them to the GPU's memory)."""
    (m, n), (lm, ln_), g, _ = bench_shapes(gpu)
    dt, gdt = "bfloat16", gemm_dtype(gpu)
    unf_c, fus_c, unf_t, fus_t, _small, tma_v = (v.name for v in VARIANTS)
    ew_case, ln_case, g_case = f"{m} x {n} {dt}", f"{lm} x {ln_} {dt}", f"GEMM {g}^3 {gdt}"
    out = []
    # part 1 (and part 2's CUDA C kernel): fusion_01 x 4, fusion_02 x 3, fusion_03; the benchmark's arrays are aligned
    ce, cl = cuda_ew_config(), cuda_ln_config()
    for var, names in ((unf_c, ("fusion_01_add_bias", "fusion_01_gelu_tanh", "fusion_01_gelu_erf", "fusion_01_add")),
                       (fus_c, ("fusion_02_bias_gelu_tanh", "fusion_02_bias_gelu_erf", "fusion_02_bias_residual"))):
        for name in names:
            how = cuda_plan(name, dt, m, n, n % (16 // arrays.ITEMSIZE[dt]) == 0)
            out.append(plan.Launch(var, how["kernel"], "cuda", grid=how["blocks"], threads=how["threads"], source=CU,
                                   defines=how["defines"], case=ew_case, config_source=ce.source()))
    vec = "" if ln_ % (16 // arrays.ITEMSIZE[dt]) == 0 else "_scalar"
    out.append(plan.Launch(fus_c, f"fusion_03_residual_layernorm_{SUFFIX[dt]}{vec}", "cuda", grid=lm,
                           threads=cl["LN_THREADS"], source=CU, defines=dict(cl.values), case=ln_case,
                           config_source=cl.source()))
    # Triton elementwise_kernel: (has_bias, act, has_c) per launch
    tile = ew_tile(gpu)

    def ew(var, flags, shape, ty, case):
        cfg = ew_config(*shape, tile.values)
        bias, act, c = flags
        return plan.Launch(var, "elementwise_kernel", "triton", fn=elementwise_kernel, grid=ew_grid(*shape, cfg),
                           signature=ew_signature(ty), defines=dict(HAS_BIAS=bias, ACT=act, HAS_C=c,
                                                                    BLOCK_M=cfg["BLOCK_M"], BLOCK_N=cfg["BLOCK_N"]),
                           num_warps=cfg["num_warps"], case=case, config_source=tile.source())

    add_bias, add = (True, ACT_NONE, False), (False, ACT_NONE, True)
    out += [ew(unf_t, f, (m, n), dt, ew_case) for f in (add_bias, (False, ACT_GELU_TANH, False),
                                                        (False, ACT_GELU_ERF, False), add)]
    out += [ew(fus_t, f, (m, n), dt, ew_case) for f in ((True, ACT_GELU_TANH, False), (True, ACT_GELU_ERF, False),
                                                        (True, ACT_NONE, True))]
    # part 2: the unfused chain's add (then lab 3.4's layernorm), the fused kernel
    out.append(ew(unf_t, add, (lm, ln_), dt, ln_case))
    lc = ln_config(ln_, dt)
    programs, meta = ln_launch(lm, ln_, {"BLOCK_M": lc["LN_BLOCK_M"], "num_warps": lc["LN_WARPS"]})
    out.append(plan.Launch(fus_t, "residual_layernorm_kernel", "triton", fn=residual_layernorm_kernel, grid=programs,
                           signature=ln_signature(dt), defines={k: meta[k] for k in ("BLOCK_M", "BLOCK_N", "SINGLE")},
                           num_warps=meta["num_warps"], case=ln_case, config_source=lc.source()))
    # part 3: the GEMM (linear_kernel, or the persistent TMA kernel where the GPU has it) with and without epilogue
    gc = linear_config(g, g, g, gdt, gpu)
    cfg = tile_of(gc.values, "GEMM_")
    programs, meta = linear_meta(g, g, g, cfg)

    def gemm(var, has_bias, act, case):
        const = dict(HAS_BIAS=has_bias, ACT=act, HAS_RES=False, INDEX_64=meta["INDEX_64"], UPCAST=False,
                     **{k: meta[k] for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M", "EVEN_K", "EVEN_MN")})
        return plan.Launch(var, "linear_kernel", "triton", fn=linear_kernel, grid=programs,
                           signature=linear_signature(gdt, const), defines=const, num_warps=cfg["num_warps"],
                           num_stages=cfg["num_stages"], case=case, config_source=gc.source())

    tma = not tma_unavailable(gpu) and g >= LINEAR_BIG_MIN and g ** 3 >= _matmul_lab().TMA_MIN_MNK
    if tma:
        tc = linear_tma_config(g, g, g, gpu)
        tcfg = tile_of(tc.values, "TMA_")
        tp = tma_programs(g, g, tcfg, gpu)

        def persistent(var, has_bias, act, case):
            const = tma_constexprs(tcfg, tp, act, has_bias)
            return plan.Launch(var, "linear_tma_kernel", "triton", fn=linear_tma_kernel, grid=tp,
                               signature=linear_tma_signature(gdt, tcfg, const), defines=const,
                               num_warps=tcfg["num_warps"], num_stages=tcfg["num_stages"], case=case,
                               config_source=tc.source())

        out += [persistent(unf_t, False, ACT_NONE, tr("{case}, the GEMM alone", case=g_case)),
                persistent(fus_t, True, ACT_GELU_TANH, tr("{case}, persistent TMA", case=g_case)),
                persistent(tma_v, True, ACT_GELU_TANH, g_case),
                gemm(fus_t, True, ACT_GELU_TANH, tr("{case}, grid per tile (tma=False)", case=g_case))]
    else:
        out += [gemm(unf_t, False, ACT_NONE, tr("{case}, the GEMM alone", case=g_case)),
                gemm(fus_t, True, ACT_GELU_TANH, g_case)]
    out += [ew(unf_t, f, (g, g), gdt, tr("{case}, the unfused tail", case=g_case))
            for f in (add_bias, (False, ACT_GELU_TANH, False))]
    return out
