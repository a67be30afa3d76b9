"""Lab 4.6's Triton flash attention on torch tensors: the checks of q, k, v (grouped-query, Sq != Sk, strided views),
flash_attn_fwd and flash_attn_bwd launching triton_kernels.py's kernels with tiles.py's configurations, their grids,
the autograd Function behind flash_attention, and where the kernels cannot run (triton_unavailable)."""
from __future__ import annotations

import dataclasses
import functools

from common import arrays, device
from common.i18n import tr
from common.triton_support import INTERPRETER, launch, triton

from .shared import DTYPES, FLASH_HEAD_DIMS, INT32_MAX, LOG2E, _check_dims_and_flags, block_d
from .tiles import _check_config, config_for
from .triton_kernels import attn_bwd_delta_kernel, attn_bwd_dkdv_kernel, attn_bwd_dq_kernel, attn_fwd_kernel


@dataclasses.dataclass(frozen=True)
class AttnDims:
    """The sizes the flash wrappers take from q (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D)."""

    b: int
    hq: int
    hkv: int
    sq: int
    sk: int
    d: int
    dtype: str
    scale: float

    @property
    def group(self) -> int:
        """Query heads per key/value head (1: ordinary multi-head attention; Hq: multi-query)."""
        return self.hq // self.hkv


def _check_attn(q, k, v, causal, sm_scale) -> AttnDims:
    """Validate q (B, Hq, Sq, D) and k, v (B, Hkv, Sk, D) for the flash kernels: Hkv divides Hq (grouped-query
    attention), Sq and Sk free (the causal mask aligned bottom-right), everything else shared."""
    dev = not INTERPRETER
    for name, x in (("q", q), ("k", k), ("v", v)):
        arrays.check_array(name, x, dtypes=DTYPES, ndim=4, device=dev, contiguous=False, libs=("torch",))
    dts = {arrays.dtype_name(x) for x in (q, k, v)}
    if len(dts) != 1:
        raise TypeError(f"q, k, v: dtypes must match, got {arrays.dtype_name(q)}, {arrays.dtype_name(k)}, "
                        f"{arrays.dtype_name(v)}")
    if len({str(x.device) for x in (q, k, v)}) != 1:
        raise TypeError(f"q, k, v: must be on one device, got {q.device}, {k.device}, {v.device}")
    b, hq, sq, d, scale = _check_dims_and_flags(q, causal, sm_scale, FLASH_HEAD_DIMS)
    kb, hkv, sk, kd = (int(n) for n in k.shape)
    if tuple(v.shape) != tuple(k.shape):
        raise ValueError(f"v: shape {tuple(v.shape)} must equal k's {tuple(k.shape)} (q, k, v: shapes must match as "
                         "(B, Hq, Sq, D), (B, Hkv, Sk, D), (B, Hkv, Sk, D))")
    if kb != b:
        raise ValueError(f"k: batch {kb} must match q's {b} (shapes q {tuple(q.shape)}, k {tuple(k.shape)})")
    if kd != d:
        raise ValueError(f"k: head dim {kd} must match q's {d} (shapes q {tuple(q.shape)}, k {tuple(k.shape)})")
    if hkv < 1 or hq % hkv:
        raise ValueError(f"k: its {hkv} heads must divide q's {hq} (grouped-query attention: query head h reads "
                         f"key/value head h // (Hq / Hkv)); shapes q {tuple(q.shape)}, k {tuple(k.shape)}")
    if sk < 1:
        raise ValueError(f"k: empty key sequence, shape {tuple(k.shape)} (Sk must be at least 1)")
    for name, x in (("q", q), ("k", k), ("v", v)):
        st, s = x.stride(), int(x.shape[2])
        if st[3] != 1:
            raise ValueError(f"{name}: the last (head) dimension must be contiguous (stride 1), got strides {st}; "
                             "pass x.contiguous()")
        if min(st) < 0 or (s - 1) * st[2] + d > INT32_MAX:
            raise ValueError(f"{name}: strides {st} put one head's rows beyond 32-bit offsets (or are negative)")
    return AttnDims(b, hq, hkv, sq, sk, d, dts.pop(), scale)


def _upcast(dtype: str) -> bool:
    """Interpreter only: Triton 3.9's interpreter multiplies the raw bits of bf16 tiles in tl.dot, so bf16 tiles are
    converted to fp32 before each dot, and P and dS are rounded to bf16 values (to nearest, as the GPU does) held in
    fp32 (triton_kernels._bf16_rn_as_fp32). Never on a GPU."""
    return INTERPRETER and dtype == "bfloat16"


def _bhs(x):
    st = x.stride()
    return int(st[0]), int(st[1]), int(st[2])


def _out(o, shape, dtype, like, name, strided: bool = False):
    """A checked output (a fresh contiguous one for None). strided=True accepts any view whose last dim is
    contiguous (the kernel takes its batch, head and sequence strides), e.g. a (B, H, S, D) view of a (B, S, H, D)
    buffer that the next GEMM reads as a plain matrix."""
    if o is None or not strided:
        o = arrays.check_out(o, shape, dtype, like, name=name)
    else:
        arrays.check_array(name, o, dtypes=(dtype,), ndim=len(shape), device=not INTERPRETER, contiguous=False,
                           libs=("torch",))
        if tuple(o.shape) != tuple(shape):
            raise ValueError(f"{name}: expected shape {tuple(shape)}, got {tuple(o.shape)}")
        if o.stride()[-1] != 1 or min(o.stride()) < 0 or (shape[2] - 1) * o.stride()[2] + shape[3] > INT32_MAX:
            raise ValueError(f"{name}: the last dimension must be contiguous (stride 1), got strides {o.stride()}")
    if str(o.device) != str(like.device):
        raise TypeError(f"{name}: expected an array on {like.device}, got {o.device}")
    return o


def flash_attn_fwd(q, k, v, causal: bool = False, sm_scale: float | None = None, out=None, *,
                   config: dict | None = None):
    """Flash attention forward on torch tensors: returns (o, lse).

    q: (B, Hq, Sq, D); k, v: (B, Hkv, Sk, D) with Hkv dividing Hq - grouped-query attention, query head h reading
    key/value head h // (Hq / Hkv) (multi-query when Hkv = 1; Hkv = Hq, Sq = Sk is the usual case). Causal masks key j
    for query i unless j <= i + (Sk - Sq): aligned to the bottom-right corner, as FlashAttention does; a query row
    with no key left (Sq > Sk) gets O = 0 and LSE = -inf. fp16 or bf16, D in FLASH_HEAD_DIMS (32, 64, 80, 96, 128,
    256), last dim contiguous (other strides free).
    o: (B, Hq, Sq, D), q's dtype, contiguous; lse: (B, Hq, Sq) fp32, natural log of sum_j exp(scale q_i . k_j) over
    the keys row i attends to. out: None or a tuple (o, lse) to write into: o any view with a contiguous last dim,
    lse contiguous. GPU: CUDA tensors; no GPU: CPU tensors, run in the interpreter.
    """
    a = _check_attn(q, k, v, causal, sm_scale)
    o_out, lse_out = (None, None) if out is None else out
    o = _out(o_out, (a.b, a.hq, a.sq, a.d), a.dtype, q, "out[0] (o)", strided=True)
    lse = _out(lse_out, (a.b, a.hq, a.sq), "float32", q, "out[1] (lse)")
    cfg = dict(config) if config else config_for("fwd", a.d, bool(causal), a.dtype)
    _check_config("fwd", cfg)
    # TMA descriptors are built on the device in scratch memory Triton asks torch for at launch; inside a CUDA graph
    # capture (lab 4.7 times its stages that way) that allocation would be recorded into the graph, so a capture
    # takes the pointer loads: the same result, without the copy engine
    tma = bool(cfg.get("TMA")) and fwd_tma_ok(k, v) and not _capturing()
    if tma:
        _tma_scratch_allocator()
    launch(attn_fwd_kernel, fwd_grid(a.b, a.hq, a.sq, cfg), q, k, v, o, lse, a.scale * LOG2E, a.hq, a.group, a.sq,
           a.sk, *_bhs(q), *_bhs(k), *_bhs(v), *_bhs(o), HEAD_DIM=a.d, BLOCK_D=block_d(a.d), BLOCK_M=cfg["BLOCK_M"],
           BLOCK_N=cfg["BLOCK_N"], CAUSAL=bool(causal), UPCAST=_upcast(a.dtype), TMA=tma, WS=bool(cfg.get("WS")),
           PIPE=bool(cfg.get("PIPE")), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return o, lse


def fwd_grid(b: int, hq: int, sq: int, cfg: dict) -> tuple[int, int]:
    """attn_fwd_kernel's programs: (query blocks of BLOCK_M rows, batch x query heads)."""
    return triton.cdiv(sq, cfg["BLOCK_M"]), b * hq


def bwd_grids(b: int, hq: int, hkv: int, sq: int, sk: int, cfg: dict) -> dict:
    """The backward's three grids: delta (query blocks of DELTA_BLOCK_M rows, B Hq), dK/dV (key blocks of BLOCK_N1,
    B Hkv), dQ (query blocks of BLOCK_M2, B Hq)."""
    return {"delta": (triton.cdiv(sq, delta_block_m()), b * hq), "dkdv": (triton.cdiv(sk, cfg["BLOCK_N1"]), b * hkv),
            "dq": (triton.cdiv(sq, cfg["BLOCK_M2"]), b * hq)}


DELTA_BLOCK_M, DELTA_WARPS = 128, 4       # attn_bwd_delta_kernel: rows per program (a row is D values of O and dO)


def delta_block_m(gpu: device.DeviceInfo | None = None) -> int:
    """Rows per program of the delta kernel: DELTA_BLOCK_M on a GPU, 32 in the interpreter (small tiles there)."""
    return 32 if INTERPRETER and gpu is None else DELTA_BLOCK_M


def fwd_tma_ok(k, v) -> bool:
    """Whether the forward's TMA attempt (config "TMA": True) can read these K and V: a TMA descriptor needs a
    16-byte aligned start and row strides of whole 16-byte units, for every head's base (so the batch and head strides
    too). Otherwise the forward quietly takes its pointer loads - the same result, without the copy engine."""
    if INTERPRETER or not str(k.device).startswith("cuda"):
        return True                   # the interpreter models the descriptor, alignment aside
    elt = k.element_size()
    return all(x.data_ptr() % 16 == 0 and all(st * elt % 16 == 0 for st in x.stride()[:3]) for x in (k, v))


def _capturing() -> bool:
    if INTERPRETER:
        return False
    import torch

    return bool(torch.cuda.is_current_stream_capturing())


@functools.cache
def _tma_scratch_allocator() -> None:
    # Descriptors built on the device (tl.make_tensor_descriptor) live in a little global scratch memory that Triton
    # asks the program's allocator for; set it once, to torch's caching allocator on the current device.
    import torch

    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device="cuda"))


def flash_attn_bwd(do, q, k, v, o, lse, causal: bool = False, sm_scale: float | None = None, out=None, *,
                   config: dict | None = None):
    """Gradients of flash_attn_fwd for an upstream dO: returns (dq, dk, dv), contiguous, q's dtype; dq has q's shape,
    dk and dv k's (B, Hkv, Sk, D), each summed over the Hq / Hkv query heads that share the key/value head.

    o and lse are what flash_attn_fwd returned (o may be any layout with a contiguous last dim, like dO).
    Three launches: delta = rowsum(dO * O); dK, dV (one program per key block and key/value head, walking the query
    blocks of every query head of its group); dQ (one program per query block and query head).
    """
    a = _check_attn(q, k, v, causal, sm_scale)
    b, h, s, d, dt = a.b, a.hq, a.sq, a.d, a.dtype
    for name, x in (("do", do), ("o", o)):
        arrays.check_array(name, x, dtypes=(dt,), ndim=4, device=not INTERPRETER, contiguous=False, libs=("torch",))
        if tuple(x.shape) != (b, h, s, d):
            raise ValueError(f"{name}: expected shape {(b, h, s, d)} like q, got {tuple(x.shape)}")
        if x.stride()[3] != 1 or (s - 1) * x.stride()[2] + d > INT32_MAX:
            raise ValueError(f"{name}: the last dimension must be contiguous, got strides {x.stride()}")
    arrays.check_array("lse", lse, dtypes=("float32",), ndim=3, device=not INTERPRETER, libs=("torch",))
    if tuple(lse.shape) != (b, h, s):
        raise ValueError(f"lse: expected shape {(b, h, s)}, got {tuple(lse.shape)}")
    dq_o, dk_o, dv_o = (None, None, None) if out is None else out
    dq = _out(dq_o, (b, h, s, d), dt, q, "out[0] (dq)")
    dk = _out(dk_o, (b, a.hkv, a.sk, d), dt, q, "out[1] (dk)")
    dv = _out(dv_o, (b, a.hkv, a.sk, d), dt, q, "out[2] (dv)")
    cfg = dict(config) if config else config_for("bwd", d, bool(causal), dt)
    _check_config("bwd", cfg)
    delta = arrays.empty((b, h, s), "float32", q)
    grids = bwd_grids(b, h, a.hkv, s, a.sk, cfg)
    launch(attn_bwd_delta_kernel, grids["delta"], o, do, delta, h, s, *_bhs(o), *_bhs(do),
           HEAD_DIM=d, BLOCK_D=block_d(d), BLOCK_M=delta_block_m(), num_warps=DELTA_WARPS)
    common_args = (a.scale, a.scale * LOG2E, h, a.group, s, a.sk, *_bhs(q), *_bhs(k), *_bhs(v), *_bhs(do))
    launch(attn_bwd_dkdv_kernel, grids["dkdv"], q, k, v, do, lse, delta, dk, dv, *common_args, HEAD_DIM=d,
           BLOCK_D=block_d(d), BLOCK_M=cfg["BLOCK_M1"], BLOCK_N=cfg["BLOCK_N1"], CAUSAL=bool(causal),
           UPCAST=_upcast(dt), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    launch(attn_bwd_dq_kernel, grids["dq"], q, k, v, do, lse, delta, dq, *common_args, HEAD_DIM=d,
           BLOCK_D=block_d(d), BLOCK_M=cfg["BLOCK_M2"], BLOCK_N=cfg["BLOCK_N2"], CAUSAL=bool(causal),
           UPCAST=_upcast(dt), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
    return dq, dk, dv


@functools.lru_cache(maxsize=1)
def _function_class():
    import torch

    class FlashAttentionFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, sm_scale):
            q, k, v = (t.detach() for t in (q, k, v))
            o, lse = flash_attn_fwd(q, k, v, causal, sm_scale)
            ctx.save_for_backward(q, k, v, o, lse)
            ctx.causal, ctx.sm_scale = causal, sm_scale
            return o

        @staticmethod
        def backward(ctx, do):
            q, k, v, o, lse = ctx.saved_tensors
            do = do if do.stride()[-1] == 1 else do.contiguous()
            dq, dk, dv = flash_attn_bwd(do, q, k, v, o, lse, ctx.causal, ctx.sm_scale)
            return dq, dk, dv, None, None

    return FlashAttentionFunction


def flash_attention(q, k, v, causal: bool = False, sm_scale: float | None = None):
    """Differentiable attention softmax(scale Q K^T [causal]) V on torch tensors, forward and backward by this lab's
    Triton kernels (for the transformer-block lab and for torch.autograd checks): q (B, Hq, Sq, D), k and v
    (B, Hkv, Sk, D) with Hkv dividing Hq, the causal mask aligned bottom-right (see flash_attn_fwd)."""
    return _function_class().apply(q, k, v, bool(causal), sm_scale)


def triton_unavailable(gpu: device.DeviceInfo | None = None) -> str | None:
    """Why the Triton flash kernels cannot run on `gpu` (None: here, where the interpreter runs them), or None: their
    bf16 tl.dot needs the tensor cores' bf16 MMA, which sm_80 brought."""
    if gpu is not None and gpu.cc < 80:
        return tr("the flash kernels' bf16 tl.dot needs sm_80 or newer (bf16 tensor cores); this GPU is {arch}",
                  arch=gpu.arch)
    return None
