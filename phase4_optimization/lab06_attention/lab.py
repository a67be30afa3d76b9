"""Lab 4.6 - Attention, from naive to flash: the S x S matrix in memory, then never in memory.

You will learn
  * naive attention as three library-sized steps: S = Q K^T (cuBLAS batched matmul through torch), a row softmax
    (a small Triton kernel of this lab that also applies the scale and the causal mask and saves the log-sum-exp),
    O = P V (cuBLAS again). Each step is fast on its own, but S and P, B x H x S x S elements each, are written to
    HBM and read back: at S = 4096 that is 32 MiB per head and per matrix, against 1 MiB for each of Q, K, V, O;
  * flash attention (forward): one program per (BLOCK_M query rows, batch x head), grid (cdiv(S, BLOCK_M), B x H).
    Q's tile stays in registers; K and V stream through shared memory BLOCK_N rows at a time; the softmax is
    computed online: a running row maximum m and row sum l, and every time the maximum grows the accumulator and l
    are rescaled by exp(m_old - m_new). Nothing of size S x S ever leaves the chip. exp2 is used instead of exp
    (one MUFU.EX2 instruction), with the softmax scale folded into log2(e): p = 2^(s * scale * log2(e) - m);
  * masking only where it is needed: in causal mode the key tiles wholly above the diagonal are skipped (half the
    work), the tiles wholly below it run without a mask, and only the BLOCK_M / BLOCK_N tiles on the diagonal (and
    the ragged last tile of any length S) pay for the compare-and-select. The loop is split in two for that;
    both halves are one loop body, unrolled twice at compile time (tl.static_range);
  * the log-sum-exp of every row, LSE = m + log(l), saved in fp32 (stored in natural log, the API's base; the kernel
    works in base 2 and converts once per row): it is all the backward needs to rebuild P tile by tile;
  * the backward pass without S x S either (FlashAttention-2 style): delta = rowsum(dO * O) in a small kernel, then
    one kernel per K/V block that walks the query blocks (dK, dV accumulate in registers) and one per Q block that
    walks the K/V blocks (dQ). P is recomputed from Q, K and the LSE; no atomics, so the result is deterministic.
    Wrapped in a torch.autograd.Function (`flash_attention`) and checked against torch.autograd on the naive
    version and against analytical float64 gradients;
  * what Triton's tl.dot did for you, by hand (kernels.cu): the same forward in CUDA C with mma.sync m16n8k16, the
    fragment layouts, ldmatrix (plain and .trans) to fill them, the Q K^T accumulator reused as the A operand of P V
    without touching shared memory, an online softmax across the four threads of a quad, then cp.async double
    buffering and an XOR swizzle (rung 01 -> rung 02);
  * where the time goes: attention at long S is compute-bound, so the figure of merit is TFLOP/s against the tensor
    cores (and against cuDNN's and FlashAttention-2's kernels, behind torch's SDPA, in the same run).

The two numbers (main case: bf16, B 4, H 32, S 4096, D 128, non-causal):
  FLOPs = 4 B H S^2 D (two matmuls of 2 S^2 D each per head) = 1.10 TFLOP (halved for causal); the backward does 2.5x
  that (five matmuls instead of two, P recomputed). Bytes that must move = Q, K, V read + O written = 4 B H S D x 2 B
  = 537 MB (+ 2 MB of LSE): 2048 FLOP/B, an order of magnitude above the bf16 ridge point of any current GPU
  (`--plan` prints this GPU's), so compute wins by far: moving the bytes once costs a small fraction of the tensor
  cores' time. The naive version adds S and P, B H S^2 elements
  each, written and read back: 4 accesses x B H S^2 x 2 bytes = 17 GB at this shape, 32x the flash bytes, ~60 FLOP/B:
  below the ridge, memory-bound however fast its matmuls are. The benchmark shows it at S = 2048 next to flash.
Predictions: flash forward within ~0.85x of cuDNN at D = 128 (the kernel is a plain-pointer Triton kernel: its loads
are cp.async from every warp, where cuDNN's Hopper kernels use TMA and warp-specialized producers); the naive forward
~10x slower than flash at S = 2048; the backward below the forward in TFLOP/s (more registers per program, dS
rounded and re-read); the CUDA C rung 02 2-3x rung 01 and near SDPA's FlashAttention-2 backend (the same structure
with 16 query rows per warp where FA2 has 32). Targets, same run: forward bf16 (B, H, S, D) = (4, 32, 4096, 128)
>= 0.85x SDPA cuDNN, non-causal and causal; forward bf16 (8, 32, 2048, 64) non-causal >= 0.85x cuDNN; backward bf16
(4, 32, 4096, 128) non-causal >= 1.2x SDPA flash; CUDA C rung 02 >= 1.0x SDPA flash at the first shape. What was
measured, and what it taught: README.md. On a GPU whose memory cannot hold a shape, the benchmark halves B until it
fits (and says so); `--plan [--gpu NAME]` prints every launch of these cases on a GPU, its tiles and where they came
from.

Without a GPU the naive and flash kernels run in Triton's interpreter with small tiles (32 x 16 forward), so the
ragged, diagonal and multi-tile paths all run at S ~ 70; two interpreter faults are worked around there only (bf16
tiles go to tl.dot as fp32, and P and dS are rounded to bf16 to nearest, as the GPU does: see _upcast); the Triton
kernels are compiled ahead of time for --arch (default sm_90, with that GPU's tiles) and the CUDA C ones with NVRTC,
to show their registers, shared memory and tensor-core instructions, and the CUDA C forward's tiling and one warp's
fragments are modelled in NumPy.

API for other labs: flash_attention(q, k, v, causal=False, sm_scale=None) (differentiable, torch tensors),
flash_attn_fwd(q, k, v, causal, sm_scale, out=None) -> (o, lse), flash_attn_bwd(do, q, k, v, o, lse, causal, ...),
flash_attn_cuda(q, k, v, causal=False, sm_scale=None, out=None) -> (o, lse) (the CUDA C forward, GPU only). The
three Triton entry points also take grouped-query / multi-query k, v of shape (B, Hkv, Sk, D), Hkv dividing Hq, and
Sq != Sk, the causal mask aligned bottom-right (j <= i + Sk - Sq) as in reference(); the naive version and the CUDA C
forward take q, k, v of one shape. hopper.flash_attn_hopper(q, k, v, causal=False, sm_scale=None, out=None) -> (o, lse)
is the sm_90a forward (kernels_hopper.cu: wgmma + TMA, warp-specialized; grouped-query k, v, Sq == Sk), wrapped
below as HOPPER_VARIANT.

Where things are: this module is the lab's contract with the shared runner (common/contract.py) - the variants and
peers, the check cases, tolerance() and the plan's launches(). The pieces are modules of their own, each importing only
those listed before it: triton_kernels.py and shared.py (names, limits, the size checks, the two numbers),
reference.py (the float64 reference and the inputs), tiles.py (the Triton tiles), flash.py, naive.py, cuda_rungs.py,
sdpa.py and hopper.py (the wrappers), cases.py (the benchmark's cases). lab.py re-exports their names
(lab.flash_attention, lab.FLASH_HEAD_DIMS, ...); the measuring side (bench.py and the modules it gathers) imports
lab.py, never the reverse.

Run: python -m phase4_optimization.lab06_attention [--quick] [--no-bench] [--compile-report] [--arch sm_90] [--replot]
     [--plan [--gpu NAME]] [--set FWD_BLOCK_N=64] [--set NWARPS=8] [--set STAGES_06=2]
"""
from __future__ import annotations

import dataclasses
import os

from common import check, cuda, device, lab, plan
from common.i18n import tr

from . import hopper, hopper_bwd
# The lab's pieces (see "Where things are" above), re-exported: other labs, the course's exercises, tools/ and the tests
# reach them as lab.X
from .cases import (  # noqa: F401 - re-exported
    CUDA_SHAPE, GQA_TARGET, NAIVE_SHAPE, TARGETS, cuda_bench_bytes, fit_shape, gqa_bytes, naive_bench_bytes,
    target_bytes)
from .cuda_rungs import (  # noqa: F401 - re-exported
    CONFIG, CU, CUDA_BLOCK_N, CUDA_WIDE_BLOCK_N, KERNELS, MIN_BLOCKS_4W, ROW_TILES, WIDE_MAX_BLOCKS, WIDE_NWARPS, _arch,
    _check_cuda_config, _check_cuda_qkv, _cuda_kernel, _ptr, check_qkv_placement, cuda_build, cuda_config, cuda_grid,
    cuda_warps, defines, flash_attn_cuda, min_blocks_default, smem_bytes, unavailable_reason)
from .flash import (  # noqa: F401 - re-exported
    DELTA_BLOCK_M, DELTA_WARPS, AttnDims, _bhs, _capturing, _check_attn, _function_class, _out, _tma_scratch_allocator,
    _upcast, bwd_grids, delta_block_m, flash_attention, flash_attn_bwd, flash_attn_fwd, fwd_grid, fwd_tma_ok,
    triton_unavailable)
from .naive import (  # noqa: F401 - re-exported
    _check_qkv, library_matmul, naive_attn_bwd, naive_attn_fwd, naive_softmax_config)
from .reference import (  # noqa: F401 - re-exported
    _group, _probabilities, causal_mask, forward_reference, make_inputs, out_dtype, probabilities_times_values,
    reference)
from .sdpa import (  # noqa: F401 - re-exported
    SDPA_NAMES, _sdpa_backend, sdpa_fwd, sdpa_lse, sdpa_unavailable, sdpa_unavailable_on)
from .shared import (  # noqa: F401 - re-exported
    DTYPES, FLASH_HEAD_DIMS, HEAD_DIMS, INT32_MAX, LAB, LN2, LOG2E, MAX_GRID_Y, NAIVE_MAX_S, _check_dims_and_flags,
    attn_flops, block_d, flash_bytes, naive_bytes)
from .tiles import (  # noqa: F401 - re-exported
    _BWD_KEYS, _FWD_FLAGS, _FWD_KEYS, BWD_FALLBACKS, BWD_SETTINGS, FALLBACKS, FWD_FALLBACKS, FWD_SETTINGS,
    INTERPRETER_TILES, SETTINGS, SMEM_SLACK, THIS_RUN, TUNED, TUNED_RECORD, _check_config, _check_settings,
    _check_winners, _config_of, _gpu, _settings, bwd_default, bwd_default_gpu, bwd_preferred, check_tuned_config,
    config_for, fit_tile, fwd_default, fwd_default_gpu, fwd_preferred, gpu_of_arch, record_key, resolved_config,
    smem_estimate, tuned_config, tuned_source)
from .triton_kernels import (  # noqa: F401 - re-exported
    attn_bwd_delta_kernel, attn_bwd_dkdv_kernel, attn_bwd_dq_kernel, attn_fwd_kernel, naive_softmax_kernel)


# ---------------------------------------------------------------------------------------------------------------------
# The -D values of a compile outside the wrappers
# ---------------------------------------------------------------------------------------------------------------------
def compile_defines(path: str = CU, arch: str | None = None) -> dict:
    """The -D values a compile of this lab's .cu file `path` needs (for tools and tests that compile it outside the
    wrappers; neither file has a default of its own): kernels.cu's shipped build at D = 128, bf16, for `arch` (default:
    the lowest register caps over the architectures the file claims, so one set compiles without a spill on each);
    kernels_hopper.cu's hopper.defines(128) and kernels_hopper_bwd.cu's hopper_bwd.defines(128) (sm_90a only)."""
    path = os.path.abspath(path)
    if path == os.path.abspath(hopper.KERNEL_PATH):
        return hopper.defines(128)
    if path == os.path.abspath(hopper_bwd.KERNEL_PATH):
        return hopper_bwd.defines(128)
    if path != os.path.abspath(CU):
        raise ValueError(f"{path}: not a CUDA C file of this lab ({CU}, {hopper.KERNEL_PATH}, "
                         f"{hopper_bwd.KERNEL_PATH})")
    if arch is not None:
        return defines(128, arch=arch)
    builds = [defines(128, arch=a) for a in cuda.claimed_archs(CU)]
    return min(builds, key=lambda d: (d["MIN_BLOCKS"], d["MIN_BLOCKS_WIDE"]))


# ---------------------------------------------------------------------------------------------------------------------
# The checks' tolerance (their float64 reference and inputs: reference.py)
# ---------------------------------------------------------------------------------------------------------------------
NAIVE_BF16_ELEM_FACTOR = 2             # the naive version's bf16 element limit over the flash kernels' (tolerance())


def tolerance(size, dtype: str, variant=None) -> check.Tol:
    """The dtype's default limits, wider where 16-bit attention gradients are known to stray; every case, the sweeps
    behind each number and why it is a property of 16-bit gradients and not of one kernel are in the lesson (README.md,
    "The tolerance"). In short: the element limit x3 in bf16 and x2 in fp16; an absolute floor of 16 u for rows of at
    most 16 keys (u = 2^-8 bf16, 2^-11 fp16; the sweeps found at most 8 u); and twice that bf16 element limit for the
    naive version (`variant`: the lab.Variant under check), which rounds S to bf16 before its softmax. A causal mask
    one key too wide still fails every one of them (tests/test_phase4_lab06_attention_naive_tolerance.py)."""
    t = check.tolerance(dtype)
    elem_factor = {"bfloat16": 3, "float16": 2}.get(dtype)
    if elem_factor is None:
        return t
    if dtype == "bfloat16" and getattr(variant, "fn", None) is attention_naive:
        elem_factor *= NAIVE_BF16_ELEM_FACTOR
    short = isinstance(size, (tuple, list)) and len(size) > 2 and int(size[2]) <= 16
    floor = 16 * check.UNIT_ROUNDOFF[dtype] if short else 0.0
    return check.Tol(t.rel_norm, elem_factor * t.elem, max(t.atol, floor))


# ---------------------------------------------------------------------------------------------------------------------
# Variants: each takes (q, k, v, do, causal) and returns (o, lse, dq, dk, dv) - forward, then backward for dO
# ---------------------------------------------------------------------------------------------------------------------
def _outs(out):
    out = (None,) * 5 if out is None else tuple(out)
    if len(out) != 5:
        raise TypeError("out: expected a 5-tuple (o, lse, dq, dk, dv) or None")
    return out


def _copy_into(outs, results):
    res = []
    for o, r in zip(outs, results):
        if o is None:
            res.append(r)
        else:
            if tuple(o.shape) != tuple(r.shape):
                raise ValueError(f"out: expected shape {tuple(r.shape)}, got {tuple(o.shape)}")
            o.copy_(r)
            res.append(o)
    return tuple(res)


def attention_naive(q, k, v, do, causal=False, out=None):
    """Naive forward (S, P in HBM) and naive backward (dP, dS in HBM)."""
    outs = _outs(out)
    o, lse, p = naive_attn_fwd(q, k, v, causal)
    grads = naive_attn_bwd(do, q, k, v, p)
    return _copy_into(outs, (o, lse) + grads)


def attention_flash(q, k, v, do, causal=False, out=None):
    """Triton flash forward, then the Triton backward from its O and LSE."""
    outs = _outs(out)
    o, lse = flash_attn_fwd(q, k, v, causal, out=outs[:2] if outs[0] is not None else None)
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


def attention_cuda_fwd_triton_bwd(q, k, v, do, causal=False, out=None, *, kernel: str = "02"):
    """The CUDA C mma.sync forward (flash_attn_cuda, rung `kernel`); the Triton backward then runs from ITS O and
    LSE, so a wrong LSE shows in the gradients too."""
    outs = _outs(out)
    # the CUDA C kernels take contiguous (B, H, S, D) only: strided views (odd S in the checks) are copied first
    o, lse = flash_attn_cuda(q.contiguous(), k.contiguous(), v.contiguous(), causal=bool(causal), kernel=kernel)
    o, lse = _copy_into(outs[:2], (o, lse.reshape(tuple(q.shape[:3]))))
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


def attention_cuda01_fwd_triton_bwd(q, k, v, do, causal=False, out=None):
    """Rung 01 of the CUDA C forward (single-buffered, unswizzled), then the Triton backward from its O and LSE."""
    return attention_cuda_fwd_triton_bwd(q, k, v, do, causal, out, kernel="01")


def attention_cuda02w_fwd_triton_bwd(q, k, v, do, causal=False, out=None):
    """Rung 02w of the CUDA C forward (32 rows a warp), then the Triton backward from its O and LSE."""
    return attention_cuda_fwd_triton_bwd(q, k, v, do, causal, out, kernel="02w")


def attention_hopper_fwd_triton_bwd(q, k, v, do, causal=False, out=None, *, kernel: str = "03"):
    """The Hopper wgmma + TMA forward (hopper.flash_attn_hopper, kernels_hopper.cu rung `kernel`: 03 attn_03_wgmma, 04
    attn_04_wgmma_pingpong, 05 attn_05_wgmma_overlap, 06 attn_06_wgmma_overlap_pingpong, 07
    attn_07_wgmma_persistent; sm_90a); the Triton backward then runs from ITS O and LSE, so a wrong LSE shows in the
    gradients too."""
    outs = _outs(out)
    # TMA reads a view in place when its strides are whole 16-byte units; others (odd S in the checks) are copied
    o, lse = hopper.flash_attn_hopper(*(hopper.tma_ready(x) for x in (q, k, v)), causal=bool(causal), kernel=kernel)
    o, lse = _copy_into(outs[:2], (o, lse))
    dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, causal, out=outs[2:] if outs[2] is not None else None)
    return o, lse, dq, dk, dv


def _hopper_rung(kernel: str, what: str):
    """attention_hopper_fwd_triton_bwd fixed to one Hopper rung, as a variant's function (it takes no keyword)."""
    def fn(q, k, v, do, causal=False, out=None):
        return attention_hopper_fwd_triton_bwd(q, k, v, do, causal, out, kernel=kernel)

    fn.__name__ = fn.__qualname__ = f"attention_hopper{kernel}_fwd_triton_bwd"
    fn.__doc__ = f"Rung {kernel} of the Hopper forward ({what}), then the Triton backward from its O and LSE."
    return fn


def _hopper_unavailable(gpu: device.DeviceInfo | None = None) -> str | None:
    """Why the sm_90a kernels cannot run on `gpu` (None: here), or None: the Hopper variants' `unavailable`
    (hopper.unavailable_reason)."""
    return hopper.unavailable_reason(gpu)


class _HopperVariant(lab.Variant):
    """A Hopper rung (archs=("sm_90",), an sm_90a kernel): off Hopper its one-line reason is the kernel's own (wgmma and
    TMA tensor maps are Hopper-only) rather than the bare architecture mismatch."""

    def available(self, gpu: device.DeviceInfo | None = None) -> tuple[bool, str]:
        ok, why = super().available(gpu)
        here = gpu if gpu is not None else device.info() if device.has_gpu() else None
        if not ok and here is not None and not lab.arch_matches(here.arch, self.archs):
            why = _hopper_unavailable(here) or why
        return ok, why


# ---------------------------------------------------------------------------------------------------------------------
# Peers: torch SDPA with a chosen backend
# ---------------------------------------------------------------------------------------------------------------------
@dataclasses.dataclass
class _PeerVariant(lab.Variant):
    """A torch SDPA backend; unavailable (with torch's reason) where the backend cannot run."""

    backend: str = "flash"

    def available(self, gpu: device.DeviceInfo | None = None) -> tuple[bool, str]:
        ok, why = super().available(gpu)
        if not ok:
            return ok, why
        reason = sdpa_unavailable_on(self.backend, gpu if gpu is not None else device.info())
        return (not reason, reason)


def _peer(backend: str):
    def fn(q, k, v, do, causal=False, out=None):
        import torch

        outs = _outs(out)
        o, lse = sdpa_lse(q, k, v, causal, backend)
        qq, kk, vv = (t.detach().requires_grad_(True) for t in (q, k, v))
        o2 = sdpa_fwd(qq, kk, vv, causal, backend)
        dq, dk, dv = torch.autograd.grad(o2, (qq, kk, vv), do)
        return _copy_into(outs, (o, lse, dq, dk, dv))

    fn.__name__ = f"peer_sdpa_{backend}"
    fn.__doc__ = f"torch SDPA, {backend} backend: o and lse from its aten op, gradients through torch.autograd."
    return fn


def _cudnn_cannot_serve(size, dtype) -> str:
    """SDPA's cuDNN backend has no kernel for a sequence of one (torch answers "No available kernel")."""
    return tr("cuDNN's SDPA has no kernel for S = 1") if int(size[2]) == 1 else ""


HOPPER_NAME = "cuda 03 wgmma+TMA flash fwd (+ triton bwd)"
NAIVE_NAME = "naive (cuBLAS QK^T, Triton softmax, cuBLAS PV; S x S in HBM)"
FLASH_NAME = "triton flash fwd + bwd"
CUDA_ARCHS = ("sm_80+",)          # bf16 mma.sync, ldmatrix, cp.async: compute capability 8.0 and later
VARIANTS = [
    lab.Variant(NAIVE_NAME, attention_naive, "triton", dtypes=DTYPES),
    lab.Variant(FLASH_NAME, attention_flash, "triton", dtypes=DTYPES, unavailable=triton_unavailable),
    # the CUDA C rungs run where unavailable_reason(gpu) is empty: a GPU of sm_80 or newer
    lab.Variant("cuda 01 mma.sync flash fwd (+ triton bwd)", attention_cuda01_fwd_triton_bwd, "cuda", dtypes=DTYPES,
                archs=CUDA_ARCHS, unavailable=unavailable_reason,
                note="kernels.cu attn_01_mma: single-buffered, unswizzled"),
    lab.Variant("cuda 02 mma.sync pipelined flash fwd (+ triton bwd)", attention_cuda_fwd_triton_bwd, "cuda",
                dtypes=DTYPES, archs=CUDA_ARCHS, unavailable=unavailable_reason,
                note="kernels.cu attn_02_mma_pipelined: cp.async double buffering, XOR swizzle"),
    lab.Variant("cuda 02w mma.sync 32-row warps flash fwd (+ triton bwd)", attention_cuda02w_fwd_triton_bwd, "cuda",
                dtypes=DTYPES, archs=CUDA_ARCHS, unavailable=unavailable_reason,
                note="kernels.cu attn_02w_mma_wide: two row tiles a warp share each K/V fragment"),
]
# The Hopper rungs (sm_90a; available only on an sm_90 GPU, each saying why not elsewhere): (rung, variant name,
# its kernels_hopper.cu kernel, what the rung is)
HOPPER_RUNGS = [
    ("03", HOPPER_NAME, "attn_03_wgmma", "wgmma + TMA, producer / consumer warpgroups"),
    ("04", "cuda 04 wgmma+TMA ping-pong flash fwd (+ triton bwd)", "attn_04_wgmma_pingpong",
     "the consumers take turns"),
    ("05", "cuda 05 wgmma+TMA overlapped softmax flash fwd (+ triton bwd)", "attn_05_wgmma_overlap",
     "softmax_j under P_{j-1} V, 3 stages"),
    ("06", "cuda 06 wgmma+TMA overlapped softmax + ping-pong flash fwd (+ triton bwd)",
     "attn_06_wgmma_overlap_pingpong", "rung 05 + turns at issue"),
    ("07", "cuda 07 wgmma+TMA persistent overlapped-softmax flash fwd (+ triton bwd)", "attn_07_wgmma_persistent",
     "rung 05, one block per SM"),
    ("08", "cuda 08 wgmma+TMA persistent overlapped-softmax ping-pong flash fwd (+ triton bwd)",
     "attn_08_wgmma_persistent_pingpong", "rung 07 + rung 06's turns"),
]
HOPPER_VARIANTS = [_HopperVariant(name, attention_hopper_fwd_triton_bwd if rung == "03" else _hopper_rung(rung, what),
                                  "cuda", dtypes=DTYPES, archs=("sm_90",), unavailable=_hopper_unavailable,
                                  note=f"kernels_hopper.cu {kernel}: {what}")
                   for rung, name, kernel, what in HOPPER_RUNGS]
HOPPER_VARIANT = HOPPER_VARIANTS[0]
VARIANTS += HOPPER_VARIANTS
CUDA_VARIANT_NAMES = {"01": VARIANTS[2].name, "02": VARIANTS[3].name, "02w": VARIANTS[4].name}
PEERS = [_PeerVariant("torch SDPA cuDNN", _peer("cudnn"), "peer", dtypes=DTYPES, backend="cudnn",
                      cannot_serve=_cudnn_cannot_serve),
         _PeerVariant("torch SDPA flash", _peer("flash"), "peer", dtypes=DTYPES, backend="flash")]

# (B, H, S, D, causal): S = 1, primes and non-multiples of every tile (odd S also runs the strided-view path), and
# the CUDA C tiles' edges (64-key tiles, 64-row Q blocks: S = 17, 128, 129)
CHECK_CASES = [((1, 1, 1, 64, False), "bfloat16"), ((1, 1, 1, 128, True), "float16"),
               ((2, 3, 127, 64, True), "float16"), ((2, 2, 127, 128, False), "bfloat16"),
               ((1, 2, 1000, 128, False), "bfloat16"), ((1, 2, 1000, 128, True), "float16"),
               ((1, 2, 1000, 64, True), "bfloat16"), ((1, 1, 4097, 64, True), "bfloat16"),
               ((1, 2, 4097, 128, False), "float16"), ((1, 1, 4097, 128, True), "bfloat16"),
               ((1, 2, 17, 128, True), "bfloat16"), ((2, 1, 128, 64, False), "float16"),
               ((1, 2, 129, 128, True), "bfloat16")]
CPU_CHECK_CASES = [((1, 2, 1, 64, False), "bfloat16"), ((2, 1, 17, 64, True), "float16"),
                   ((1, 2, 67, 64, False), "bfloat16"), ((1, 2, 67, 64, True), "bfloat16")]
# --quick: S = 1 both ways and the two S = 127 cases (ragged tiles, causal and not, D 64 and 128)
QUICK_CASES = 4


# ---------------------------------------------------------------------------------------------------------------------
# The plan: every launch of the benchmark's cases on a given GPU (common.plan), from the functions the wrappers use
# ---------------------------------------------------------------------------------------------------------------------
_TY = {"bfloat16": "*bf16", "float16": "*fp16"}
_QKV_STRIDES = ("sq_b", "sq_h", "sq_s", "sk_b", "sk_h", "sk_s", "sv_b", "sv_h", "sv_s")


def triton_signature(kernel: str, dtype: str = "bfloat16") -> dict:
    """The Triton signature of one of this lab's kernels ("fwd", "bwd_delta", "bwd_dkdv", "bwd_dq", "naive_softmax"),
    as common.triton_support.compile_for and common.plan.Launch take it."""
    ty = _TY[dtype]
    ints = {n: "i32" for n in ("n_heads", "group", "seq_q", "seq_k") + _QKV_STRIDES}
    if kernel == "fwd":
        return {"q_ptr": ty, "k_ptr": ty, "v_ptr": ty, "o_ptr": ty, "lse_ptr": "*fp32", "qk_scale": "fp32", **ints,
                "so_b": "i32", "so_h": "i32", "so_s": "i32", "HEAD_DIM": "constexpr", "BLOCK_D": "constexpr",
                "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "CAUSAL": "constexpr", "UPCAST": "constexpr",
                "TMA": "constexpr", "WS": "constexpr", "PIPE": "constexpr"}
    if kernel == "bwd_delta":
        return {"o_ptr": ty, "do_ptr": ty, "delta_ptr": "*fp32", "n_heads": "i32", "seq": "i32", "so_b": "i32",
                "so_h": "i32", "so_s": "i32", "sdo_b": "i32", "sdo_h": "i32", "sdo_s": "i32",
                "HEAD_DIM": "constexpr", "BLOCK_D": "constexpr", "BLOCK_M": "constexpr"}
    if kernel in ("bwd_dkdv", "bwd_dq"):
        outs = {"dk_ptr": ty, "dv_ptr": ty} if kernel == "bwd_dkdv" else {"dq_ptr": ty}
        return {"q_ptr": ty, "k_ptr": ty, "v_ptr": ty, "do_ptr": ty, "lse_ptr": "*fp32", "delta_ptr": "*fp32",
                **outs, "sm_scale": "fp32", "qk_scale": "fp32", **ints, "sdo_b": "i32", "sdo_h": "i32",
                "sdo_s": "i32", "HEAD_DIM": "constexpr", "BLOCK_D": "constexpr", "BLOCK_M": "constexpr",
                "BLOCK_N": "constexpr", "CAUSAL": "constexpr", "UPCAST": "constexpr"}
    if kernel == "naive_softmax":
        return {"s_ptr": ty, "p_ptr": ty, "lse_ptr": "*fp32", "seq": "i32", "scale_log2": "fp32",
                "BLOCK": "constexpr", "CAUSAL": "constexpr"}
    raise ValueError(f"kernel: expected fwd, bwd_delta, bwd_dkdv, bwd_dq or naive_softmax, got {kernel!r}")


def fwd_constexprs(d: int, cfg: dict, causal: bool) -> dict:
    """attn_fwd_kernel's compile-time arguments on a GPU (UPCAST is the interpreter's)."""
    return {"HEAD_DIM": d, "BLOCK_D": block_d(d), "BLOCK_M": cfg["BLOCK_M"], "BLOCK_N": cfg["BLOCK_N"],
            "CAUSAL": bool(causal), "UPCAST": False, "TMA": bool(cfg.get("TMA")), "WS": bool(cfg.get("WS")),
            "PIPE": bool(cfg.get("PIPE"))}


def bwd_constexprs(kernel: str, d: int, cfg: dict, causal: bool) -> dict:
    """The backward kernels' compile-time arguments on a GPU: dK/dV walks BLOCK_M1 queries past BLOCK_N1 keys, dQ
    BLOCK_N2 keys past BLOCK_M2 queries."""
    bm, bn = (cfg["BLOCK_M1"], cfg["BLOCK_N1"]) if kernel == "bwd_dkdv" else (cfg["BLOCK_M2"], cfg["BLOCK_N2"])
    return {"HEAD_DIM": d, "BLOCK_D": block_d(d), "BLOCK_M": bm, "BLOCK_N": bn, "CAUSAL": bool(causal),
            "UPCAST": False}


def fwd_launch(variant: str, gpu: device.DeviceInfo, b: int, hq: int, hkv: int, sq: int, sk: int, d: int,
               causal: bool, dtype: str, case: str) -> plan.Launch:
    """attn_fwd_kernel's launch for q (B, Hq, Sq, D), k, v (B, Hkv, Sk, D) on `gpu` with its resolved tile."""
    res = resolved_config("fwd", d, causal, dtype, gpu)
    cfg = _config_of("fwd", res.values)
    return plan.Launch(variant, "attn_fwd_kernel", "triton", grid=fwd_grid(b, hq, sq, cfg), fn=attn_fwd_kernel,
                       signature=triton_signature("fwd", dtype), defines=fwd_constexprs(d, cfg, causal),
                       num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case,
                       config_source=res.source())


def bwd_launches(variant: str, gpu: device.DeviceInfo, b: int, hq: int, hkv: int, sq: int, sk: int, d: int,
                 causal: bool, dtype: str, case: str) -> list[plan.Launch]:
    """flash_attn_bwd's three launches (delta, dK/dV, dQ) on `gpu` with its resolved tiles."""
    res = resolved_config("bwd", d, causal, dtype, gpu)
    cfg = _config_of("bwd", res.values)
    grids = bwd_grids(b, hq, hkv, sq, sk, cfg)
    out = [plan.Launch(variant, "attn_bwd_delta_kernel", "triton", grid=grids["delta"], fn=attn_bwd_delta_kernel,
                       signature=triton_signature("bwd_delta", dtype), num_warps=DELTA_WARPS, num_stages=1,
                       defines={"HEAD_DIM": d, "BLOCK_D": block_d(d), "BLOCK_M": delta_block_m(gpu)}, case=case)]
    for kind, fn in (("bwd_dkdv", attn_bwd_dkdv_kernel), ("bwd_dq", attn_bwd_dq_kernel)):
        out.append(plan.Launch(variant, fn.__name__, "triton", grid=grids[kind[4:]], fn=fn,
                               signature=triton_signature(kind, dtype), defines=bwd_constexprs(kind, d, cfg, causal),
                               num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], case=case,
                               config_source=res.source()))
    return out


def launches(gpu: device.DeviceInfo, size=None) -> list[plan.Launch]:
    """Every kernel launch of the benchmark's cases on `gpu` (each shape fitted to its memory): the Triton flash
    kernels at every target (the backward's three), the grouped-query forward, the naive version's softmax, the
    CUDA C rungs at their shape and each Hopper build the benchmark times. `size`: another (B, H, S, D) for every
    case."""
    dt = "bfloat16"
    out = []
    runs = {v.name for v in VARIANTS if v.available(gpu)[0]}     # (no tile is resolved for a variant that cannot run)

    def shaped(shape, nbytes, label, batch_only=False):
        sh, _ = fit_shape(size or shape, nbytes, gpu, label, batch_only)
        return sh

    if NAIVE_NAME in runs:
        b, h, s, d = shaped(NAIVE_SHAPE, naive_bench_bytes, "naive vs flash")
        block, warps = naive_softmax_config(s)
        out.append(plan.Launch(NAIVE_NAME, "naive_softmax_kernel", "triton", grid=b * h * s, fn=naive_softmax_kernel,
                               signature=triton_signature("naive_softmax", dt),
                               defines={"BLOCK": block, "CAUSAL": False}, num_warps=warps, num_stages=1,
                               case=tr("naive vs flash, {shape}", shape=plan.fmt_size((b, h, s, d)))))
    for label, kind, shape, causal, _peer, _goal in TARGETS if FLASH_NAME in runs else ():
        b, h, s, d = shaped(shape, target_bytes(kind), label)
        case = f"{label}, {plan.fmt_size((b, h, s, d))}"
        if kind == "fwd":
            out.append(fwd_launch(FLASH_NAME, gpu, b, h, h, s, s, d, causal, dt, case))
        else:
            out += bwd_launches(FLASH_NAME, gpu, b, h, h, s, s, d, causal, dt, case)
    if FLASH_NAME in runs:
        label, gshape, causal, _goal = GQA_TARGET
        if size:
            gshape = (size[0], size[1], size[1], size[2], size[3])
        b, hq, hkv, s, d = shaped(gshape, gqa_bytes, label, batch_only=True)
        out.append(fwd_launch(FLASH_NAME, gpu, b, hq, hkv, s, s, d, causal, dt, f"{label}, B{b} S{s}"))
    cuda_variants = {k: v for k, v in CUDA_VARIANT_NAMES.items() if v in runs}
    b, h, s, d = shaped(CUDA_SHAPE, cuda_bench_bytes, "cuda shapes")
    src = cuda_config(d, gpu.arch).source() if cuda_variants else ""
    for kernel, variant in cuda_variants.items():
        defs, nw, smem = cuda_build(kernel, d, dt, arch=gpu.arch)
        out.append(plan.Launch(variant, KERNELS[kernel], "cuda", grid=cuda_grid(kernel, s, b * h, nw),
                               threads=32 * nw, source=CU, defines=defs, dyn_smem=smem,
                               case=tr("cuda shapes, {shape}, causal and not", shape=plan.fmt_size((b, h, s, d))),
                               config_source=src))
    b, h, s, d = shaped(TARGETS[0][2], target_bytes("fwd"), "Hopper rungs")
    by_rung = {rung: name for rung, name, _k, _w in HOPPER_RUNGS if name in runs}
    builds = [(rung, hopper.stages_config(rung)) for rung in hopper.KERNELS if rung in by_rung]
    builds = [(rung, r.values[f"STAGES_{rung}"], r.source()) for rung, r in builds]
    builds += [(rung, st, "fixed (a build the benchmark times)") for rung, st in hopper.BENCH_BUILDS
               if rung in by_rung and (rung, st) not in {(r, s_) for r, s_, _ in builds}]
    for rung, stages, source in builds:
        grid = (-(-s // hopper.BLOCK_M), b * h)
        if rung in hopper.PERSISTENT:
            grid = (hopper.persistent_grid(grid[0] * grid[1], gpu.sms),)
        out.append(plan.Launch(by_rung[rung], hopper.KERNELS[rung], "cuda", grid=grid, threads=hopper.THREADS,
                               source=hopper.KERNEL_PATH, defines=hopper.defines(d, dt, stages=stages),
                               arch=hopper.ARCH, dyn_smem=hopper.smem_bytes(d, stages),
                               case=tr("fwd D{d}, {shape}, {stages} stages, causal and not", d=d,
                                       shape=plan.fmt_size((b, h, s, d)), stages=stages),
                               config_source=source))
    return out
