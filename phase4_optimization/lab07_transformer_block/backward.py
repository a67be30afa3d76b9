"""Lab 4.7, the training step: the block's forward keeping what the backward needs, then the backward, from this
repository's kernels - lab 4.6's Triton flash-attention backward, lab 3.4's layernorm backward (extended, below),
lab 3.2's strided GEMM main loop with the backward's epilogues - checked against torch.autograd.

What the backward computes (M = B S rows; dY, the gradient of the block's output, is given; Z = LN2(H) W_fc + b_fc is
the GELU's input, F = gelu_tanh(Z), G = LN2(H), A = LN1(X), O the attention output; one line per stage):
    dZ = (dY W_proj^T) * gelu'(Z)            GEMM M x 4d x d, GELU' in its epilogue; db_fc = sum_rows dZ there too
    dW_proj = F^T dY                         GEMM 4d x d x M (A transposed: a view, no copy)
    dG = dZ W_fc^T;  dW_fc = G^T dZ          GEMMs M x d x 4d and d x 4d x M
    dH = dY + LN2'(dG)                       LN2's backward + the skip connection's gradient, one row kernel that also
                                             sums dw2, db2, db_proj = sum_rows dY and db_o = sum_rows dH
    dO = dH W_o^T;  dW_o = O^T dH            GEMMs M x d x d and d x d x M
    dQ, dK, dV = attention'(dO)              lab 4.6's flash backward: P rebuilt from Q, K and the forward's LSE
    dQKV = pack(dQ, dK, dV)                  (B, H, S, D) x 3 -> (M, 3d), with db_qkv = sum_rows dQKV on the way
    dA = dQKV W_qkv^T;  dW_qkv = A^T dQKV    GEMMs M x d x 3d and d x 3d x M
    dX = dH + LN1'(dA)                       LN1's backward + skip; dw1, db1
with LN'(g) = rstd (w g - mean_row(w g) - xhat mean_row(w g xhat)) and gelu'(z) = s + 2 z s (1 - s) c (1 + 3 a z^2),
s = sigmoid(2 c (z + a z^3)), c = sqrt(2 / pi), a = 0.044715.

What the forward keeps, and why (main case B 8, S 2048, d 2048: M d x 2 B = 67 MB): x, the LN outputs A and G (the
weight gradients' operands: recomputing them would need a layernorm prologue in the GEMM), QKV (3 M d), O and its
LSE (B H S fp32, 1 MB: the attention backward rebuilds P from it instead of storing B H S^2), H, F (4 M d) and the
four LN row statistics (8 B a row each) - all of which the inference forward writes anyway - plus Z (4 M d = 268 MB),
written by the FC GEMM's epilogue beside F. Recomputing Z instead would be a second FC GEMM, 8 M d^2 = 0.55 TFLOP
(~0.8 ms at the tensor cores' rate) against the ~0.09 ms the 268 MB write costs: storing wins 9x.

The two numbers: the backward's GEMMs are twice the forward's, 48 M d^2 (two GEMMs per forward GEMM, each the same
size); the attention backward is 2.5x its forward (five S x S x D matmuls instead of two). Main case: forward 1.65 +
0.14 TFLOP, backward 3.30 + 0.34: the step is 5.43 TFLOP, 91% of it GEMMs. Second case (B 16, S 1024, d 1024): 1.36
TFLOP. The memory-bound glue of the backward - GELU' (z read in an epilogue), the two LN backwards (4 M d each: x,
the gradient, the skip gradient read, dx written), the pack (6 M d) and the bias sums (fused into passes made anyway)
- moves ~1.2 GB at the main case: ~4% of the step at an HBM3 GPU's bandwidth.

Prediction (against torch.compile of the module's forward + backward, which keeps cuBLAS for all twelve GEMMs and
SDPA for attention, and fuses the glue with Inductor): the step is only as fast as its GEMMs. Our forward's Triton
GEMMs ran at 0.78-0.93 of cuBLAS (the committed results, README.md); with GEMMs ~80% of torch.compile's step and ours
at r x cuBLAS's speed, the ratio is ~1 / (0.8 / r + 0.2): 0.90x at r = 0.88 - the prediction, 0.85-1.0x. The fusions
here (GELU' in an epilogue, bias sums and skip gradients inside passes that run anyway) save ~1-2%, not enough to
make up a GEMM gap; attention's backward moves the ratio a few percent either way (lab 4.6's Triton backward: 1.27x
SDPA's FlashAttention-2 backend, 0.74x its cuDNN one). 1.05x needs r >= 1.06 - GEMMs faster than cuBLAS - or
attention and glue well ahead of torch's: not expected.

Reused and extended: lab 3.4's layernorm_bwd has no input for the skip connection's gradient and sums only dw and db,
so called as is LN2's backward would be it (3 M d) + an add (3 M d) + two column sums (2 M d) = 8 M d against the
fused kernel's 4 M d (LN1: 6 against 4); its kernel structure (G programs, partial rows, a second level) is kept.
Lab 4.2's linear() takes row-major x and W only, with no derivative in its epilogue; the GEMM here is lab 3.2's strided
main loop (load_k_step, which linear_kernel also runs) with the backward's epilogues, at lab 4.2's tiles.

Not fused, and why: the attention backward writes dQ, dK, dV contiguous (lab 4.6's kernels take no output strides),
so the pack pass (2 x 3 M d x 2 B = 0.4 GB at the main case, ~1.5% of the step) could vanish if those kernels
stored straight into the (B, S, 3, H, D) layout; a bias gradient is never fused into the weight-gradient GEMM (only
the programs of one tile row would sum, and the slowest program sets a GEMM's time).

API: TrainPlan(x, dy, n_heads, *weights).run() -> (y, grads); train_step(x, n_heads, *weights, dy) -> (y, grads),
grads a dict with "x" and every name of lab.PARAM_NAMES, each in x's dtype and its parameter's shape;
torch_grads(...) (the plain module and torch.autograd, any dtype) and reference_grads(...) (the same in float64).
"""
from __future__ import annotations

import numpy as np

from common import arrays, device
from common.triton_support import INTERPRETER, launch, triton

from . import backward_kernels as K
from . import lab as L

COLSUM_TILE = dict(BLOCK_P=32, BLOCK_C=128)            # colsum_kernel on a GPU: 32 partial rows a step, 128 columns
COLSUM_TILE_INTERPRETER = dict(BLOCK_P=8, BLOCK_C=128)
DGELU_TILE = dict(SUB_R=16, BLOCK_C=128)               # dgelu_colsum_kernel: 16 rows x 128 columns a step (4 KiB)
PROJ_DX = ("fused", "pass")                            # the proj dX stage's wgmma kernels (TrainPlan's proj_dx)
PACK_ROWS = 32 if INTERPRETER else 64                  # rows of one head a pack program moves (64 x 128 bf16 = 16 KiB)
SPLIT_MIN_K = 1024                                     # a K slice of split-K keeps at least this many rows


# The interpreter runs one program at a time and its cost is per program and per operation (~3 ms a call of a jit
# helper), hardly per element: the training step's GEMMs there - ours and, passed as their config, the forward's lab
# 4.2 ones - take tiles 16x lab 4.2's interpreter tile (32 x 32 x 16), which runs the CPU tier's steps ~3x faster and
# still leaves ragged and multi-tile cases at its sizes (34 rows; 3d = 288 and 4d = 384 columns at d = 96); the GEMM's
# own test runs small tiles (multi-tile in M, N and K, split-K)
INTERPRETER_TILE = dict(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64, GROUP_M=2, num_warps=4, num_stages=1)


# The dGELU epilogue (EPI_DGELU) holds z's tile beside the fp32 accumulator: at lab 4.2's big default (128 x 256 over
# 8 warps, 128 accumulator elements a thread) ptxas spills on sm_90 (tests/test_phase4_lab07_train_step.py compiles it
# and reads the spills). A tile that fits without spilling (128 x 128, 64 a thread) was the stage's default for a
# while and measured slower on an sm_90 GPU (ncu: logs/h100-80gb-hbm3/session16/): half the tile's width costs more than
# the spills do. So this stage starts from lab 4.2's default like the others, and the tuning picks per GPU.


def _tile(m: int, n: int, k: int, dt: str, gpu: device.DeviceInfo | None = None) -> dict:
    """A GEMM stage's default tile: lab 4.2's linear_config for this M N K (its default on this GPU, this run's tuning
    and --set GEMM_...); INTERPRETER_TILE without a GPU. gpu: a GPU's limits instead of this machine's (a profile of
    common.device: device.profile_info(slug))."""
    if INTERPRETER and gpu is None:
        return dict(INTERPRETER_TILE)
    fu = L._kernels()[1]
    return fu.tile_of(fu.linear_config(m, n, k, dt, gpu=gpu).values, "GEMM_")


def default_split(m: int, n: int, k: int, cfg: dict, sms: int) -> int:
    """Split-K slices for a GEMM whose tiles would leave most SMs idle (a weight gradient with a small output: d x d
    at d = 1024 is 32 tiles of 128 x 256 for 132 SMs): doubled while the tiles fill under half the SMs and each slice
    keeps SPLIT_MIN_K or more of K. The partial tiles cost 4 x slices x M N bytes, written once and read once."""
    tiles = triton.cdiv(m, cfg["BLOCK_M"]) * triton.cdiv(n, cfg["BLOCK_N"])
    s = 1
    while s < 8 and tiles * s < 0.5 * sms and k >= 2 * s * SPLIT_MIN_K:
        s *= 2
    return s


def _sms() -> int:
    return L._kernels()[0]._sms()


class Gemm:
    """One GEMM of the training step, C = A @ B with an epilogue, launched with grad_gemm_kernel; A and B any strided
    2-D views (X^T, W^T) with one unit stride each. config (a lab 4.2 tile dict) and split_k are read at call time,
    so a tuner may change them between calls; None picks the defaults (_tile, default_split for weight gradients)."""

    def __init__(self, a, b, c, *, epi: int = K.EPI_NONE, z=None, bias=None, colsum: bool = False,
                 weight_grad: bool = False):
        self.a, self.b, self.c, self.z, self.bias = a, b, c, z, bias
        self.m, self.k = (int(v) for v in a.shape)
        self.n = int(b.shape[1])
        self.epi, self.colsum, self.weight_grad = epi, colsum, weight_grad
        self.dt = str(c.dtype).replace("torch.", "")
        self.config: dict | None = None
        self.split_k: int | None = None
        self.part = None                     # COLSUM's (cdiv(M, BLOCK_M), N) or split-K's (S, M N) fp32 buffer
        self._default = None                 # the default tile, resolved once (config resolution is host time)
        if c.stride(1) != 1 or (z is not None and tuple(z.stride()) != tuple(c.stride())):
            raise ValueError("Gemm: C (and z) must be row-major with unit column stride and the same strides")

    def tile(self) -> dict:
        if self.config:
            return self.config
        if self._default is None:
            self._default = _tile(self.m, self.n, self.k, self.dt)
        return self._default

    def splits(self, cfg: dict) -> int:
        if self.split_k:
            return int(self.split_k)
        if not self.weight_grad or INTERPRETER:
            return 1
        return default_split(self.m, self.n, self.k, cfg, _sms())

    def colsum_part(self, cfg: dict | None = None):
        """COLSUM's partial column sums, (cdiv(M, BLOCK_M), N) fp32 at tile cfg (default: self.tile()): the buffer
        the second-level sums read, whichever kernel ran the stage (dgelu_colsum writes the same rows)."""
        return self._buffer(triton.cdiv(self.m, (cfg or self.tile())["BLOCK_M"]), self.n)

    def _buffer(self, rows: int, cols: int):
        import torch

        if self.part is None or tuple(self.part.shape) != (rows, cols):
            self.part = torch.empty(rows, cols, device=self.c.device, dtype=torch.float32)
        return self.part

    def __call__(self):
        cfg = self.tile()
        split = self.splits(cfg)
        if split > 1 and (self.epi != K.EPI_NONE or self.colsum or self.bias is not None):
            raise ValueError("Gemm: split-K takes a plain product (no bias, epilogue or column sums)")
        if split > 1 and not self.c.is_contiguous():
            raise ValueError("Gemm: split-K writes a contiguous C")
        bm, bn, bk = cfg["BLOCK_M"], cfg["BLOCK_N"], cfg["BLOCK_K"]
        m, n, k = self.m, self.n, self.k
        tiles = triton.cdiv(m, bm) * triton.cdiv(n, bn)
        part = self._buffer(split, m * n) if split > 1 else self.colsum_part(cfg) if self.colsum else self.c
        sa, sb = self.a.stride(), self.b.stride()
        biggest = max((m - 1) * sa[0] + (k - 1) * sa[1], (k - 1) * sb[0] + (n - 1) * sb[1],
                      (m - 1) * self.c.stride(0) + n, split * m * n)
        launch(K.grad_gemm_kernel, (tiles * split,), self.a, self.b, self.c,
               self.z if self.z is not None else self.c, self.bias if self.bias is not None else self.c, part,
               m, n, k, sa[0], sa[1], sb[0], sb[1], self.c.stride(0),
               EPI=self.epi, HAS_BIAS=self.bias is not None, COLSUM=self.colsum, SPLIT_K=split,
               BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=cfg["GROUP_M"], EVEN_K=k % bk == 0,
               EVEN_MN=m % bm == 0 and n % bn == 0, INDEX_64=biggest >= 2**31 - 1,
               UPCAST=bool(INTERPRETER), num_warps=cfg["num_warps"], num_stages=cfg["num_stages"])
        if split > 1:
            colsum(part, self.c.view(-1))
        return self.c


def dgelu_colsum(df, z, dz, part, rows: int) -> None:
    """dz = df * gelu_tanh'(z) (row-major (M, N), one layout), and the column sums of the stored dz in `rows`-row
    blocks into part (cdiv(M, rows), N) fp32 - Gemm's COLSUM layout at BLOCK_M = rows (dgelu_colsum_kernel)."""
    m, n = (int(v) for v in df.shape)
    if any(tuple(t.shape) != (m, n) or not t.is_contiguous() or t.dtype != df.dtype or t.device != df.device
           for t in (df, z, dz)):
        raise ValueError("dgelu_colsum: df, z and dz must be contiguous, of one shape, dtype and device")
    if str(part.dtype) != "torch.float32" or not part.is_contiguous() or part.device != df.device:
        raise ValueError("dgelu_colsum: part must be a contiguous float32 tensor on df's device")
    sub = min(DGELU_TILE["SUB_R"], rows)
    if rows % sub or tuple(part.shape) != (triton.cdiv(m, rows), n):
        raise ValueError(f"dgelu_colsum: rows {rows} must be a multiple of {sub} and part "
                         f"({triton.cdiv(m, rows)}, {n})")
    launch(K.dgelu_colsum_kernel, (triton.cdiv(m, rows), triton.cdiv(n, DGELU_TILE["BLOCK_C"])), df, z, dz, part,
           m, n, BLOCK_R=rows, SUB_R=sub, BLOCK_C=DGELU_TILE["BLOCK_C"], num_warps=4)


def colsum(part, out) -> None:
    """out[j] = sum over the rows of part (P, N) fp32, rounded once to out's dtype (colsum_kernel)."""
    p, n = (int(v) for v in part.shape)
    t = COLSUM_TILE_INTERPRETER if INTERPRETER else COLSUM_TILE
    launch(K.colsum_kernel, (triton.cdiv(n, t["BLOCK_C"]),), part, out, p, n, **t, num_warps=4)


class LnBackward:
    """dx = res + LN'(dy) for rows of x (M, d) with the forward's mean and rstd (ln_bwd_residual_kernel), the partial
    column sums [dw | db | sum res (sum_res) | sum dx (sum_out)] in self.part; finish() sums them into `sums` (a
    contiguous vector of len(pieces) x d). G programs and warps: lab 3.4's backward configuration for rows of d."""

    def __init__(self, x, w, dy, res, mean, rstd, dx, sums, *, sum_res: bool = False, sum_out: bool = False):
        import torch

        ln = L._kernels()[0]
        self.args = (x, w, dy, res, mean, rstd, dx)
        self.rows, self.n = (int(v) for v in x.shape)
        self.block = triton.next_power_of_2(self.n)
        if self.block > ln.BWD_MAX_SINGLE:
            raise ValueError(f"d = {self.n}: the fused layernorm backward keeps a row in registers, up to "
                             f"{ln.BWD_MAX_SINGLE} columns")
        v = ln.bwd_config(self.n, str(x.dtype).replace("torch.", "")).values
        # G = lab 3.4's programs per SM x SMs; 4 in the interpreter, where each program costs time of its own
        self.programs = max(1, min(self.rows, 4 if INTERPRETER else v["BWD_PER_SM"] * _sms()))
        self.warps = v["BWD_WARPS"]
        self.flags = dict(SUM_RES=sum_res, SUM_OUT=sum_out, N_SUMS=2 + int(sum_res) + int(sum_out))
        self.part = torch.empty(self.programs, self.flags["N_SUMS"] * self.n, device=x.device, dtype=torch.float32)
        self.sums = sums
        if tuple(sums.shape) != (self.flags["N_SUMS"] * self.n,):
            raise ValueError(f"sums: expected {self.flags['N_SUMS']} x {self.n} values")

    def __call__(self):
        launch(K.ln_bwd_residual_kernel, (self.programs,), *self.args, self.part, self.rows, self.n,
               BLOCK_N=self.block, **self.flags, num_warps=self.warps)

    def finish(self):
        colsum(self.part, self.sums)


VECTOR_GRADS = (("ln1_w", "ln1_b"), ("ln2_w", "ln2_b", "b_proj", "b_o"), ("b_fc",), ("b_qkv",))


def resolve_attention_bwd(choice: str, head_dim: int, x) -> str:
    """"auto" -> lab 4.6's Hopper backward at its default rung where it can run (x on the GPU, an sm_90 GPU, a head
    dim it builds: lab.resolve_attention's rule for the forward), else "triton"; any other choice as it is."""
    if choice != "auto":
        return choice
    from phase4_optimization.lab06_attention import hopper, hopper_bwd

    if arrays.on_device(x) and head_dim in hopper_bwd.HEAD_DIMS and hopper.unavailable_reason() is None:
        return hopper_bwd.DEFAULT_RUNG
    return "triton"


class TrainPlan:
    """The training step over buffers allocated once: lab.BlockPlan's forward with its FC stage replaced by one that
    keeps Z, then the backward's stages. stages / bwd_stages: [(name, kind, fn)]; run() -> (y, grads).
    attention_bwd: "triton" (lab 4.6's Triton backward, every GPU), a rung of lab 4.6's Hopper CUDA C backward
    (hopper_bwd.RUNGS, sm_90 only) or "auto" (resolve_attention_bwd: the Hopper default rung where it runs, else
    Triton); self.attention_bwd is the one used. proj_dx: the proj dX stage's second kernel on sm_90 (PROJ_DX):
    "fused" (lab 4.3's wgmma GEMM with GELU' and the column sums in its epilogue) or "pass" (the wgmma GEMM, then
    dgelu_colsum's pass)."""

    def __init__(self, x, dy, n_heads, *weights, attention: str = "auto", attn_bwd_config=None,
                 attention_bwd: str = "auto", proj_dx: str = "fused"):
        import torch

        from phase4_optimization.lab06_attention import hopper_bwd

        if proj_dx not in PROJ_DX:
            raise ValueError(f"proj_dx: expected one of {PROJ_DX}, got {proj_dx!r}")
        if attention_bwd not in ("triton", "auto") and attention_bwd not in hopper_bwd.RUNGS:
            raise ValueError(f"attention_bwd: expected 'triton', 'auto' or a Hopper rung {hopper_bwd.RUNGS}, got "
                             f"{attention_bwd!r}")
        at = L._kernels()[2]
        tiles = {key: INTERPRETER_TILE for key in L.BlockPlan.GEMM_KEYS.values()} if INTERPRETER else None
        fwd = self.fwd = L.BlockPlan(x, n_heads, *weights, attention=attention, gemm_configs=tiles)
        if tuple(dy.shape) != tuple(x.shape) or dy.dtype != x.dtype or dy.device != x.device \
                or not dy.is_contiguous():
            raise ValueError(f"dy: expected a contiguous {x.dtype} tensor of x's shape {tuple(x.shape)} on {x.device}")
        bsz, s, d, nh = fwd.shape
        m, dh = bsz * s, d // nh
        attention_bwd = self.attention_bwd = resolve_attention_bwd(attention_bwd, dh, x)
        w = dict(zip(L.PARAM_NAMES, weights))
        buf = fwd.buffers
        e = lambda *shp: torch.empty(shp, device=x.device, dtype=x.dtype)  # noqa: E731
        z = e(m, 4 * d)
        # the forward's FC stage, now keeping Z beside F = gelu(Z) (lab 4.2's linear() writes one output)
        self.fc = Gemm(buf["g"], w["w_fc"], buf["f"], epi=K.EPI_GELU_KEEP, z=z, bias=w["b_fc"])
        i = [name for name, _, _ in fwd.stages].index("FC GEMM + bias + GELU")
        fwd.stages[i] = ("FC GEMM + bias + GELU, Z kept", "gemm", self.fc)
        self.stages = fwd.stages
        # the backward's buffers
        dy2 = dy.view(m, d)
        dz, dg, dh_, do, da, dx = e(m, 4 * d), e(m, d), e(m, d), e(m, d), e(m, d), e(bsz, s, d)
        heads = e(3, bsz, nh, s, dh)                      # dQ, dK, dV as lab 4.6's backward writes them
        dqkv = e(m, 3 * d)
        grads = {n: e(*w[n].shape) for n in ("w_qkv", "w_o", "w_fc", "w_proj")}
        vec = e(13 * d)                                   # every vector gradient, grouped by the pass that sums it
        at_ = 0
        for group in VECTOR_GRADS:
            for name in group:
                grads[name] = vec[at_:at_ + w[name].numel()]
                at_ += w[name].numel()
        self.grads = {"x": dx, **{n: grads[n] for n in L.PARAM_NAMES}}
        self.buffers = {**buf, "z": z, "dy": dy, "dz": dz, "dg": dg, "dh": dh_, "do": do, "heads": heads,
                        "dqkv": dqkv, "da": da}
        f, g, a, h, o2 = buf["f"], buf["g"], buf["a"], buf["h"], buf["o"].view(m, d)
        self.gemms = {
            "proj dX GEMM + GELU' + bias sums": Gemm(dy2, w["w_proj"].t(), dz, epi=K.EPI_DGELU, z=z, colsum=True),
            "proj dW GEMM": Gemm(f.t(), dy2, grads["w_proj"], weight_grad=True),
            "FC dX GEMM": Gemm(dz, w["w_fc"].t(), dg),
            "FC dW GEMM": Gemm(g.t(), dz, grads["w_fc"], weight_grad=True),
            "out dX GEMM": Gemm(dh_, w["w_o"].t(), do),
            "out dW GEMM": Gemm(o2.t(), dh_, grads["w_o"], weight_grad=True),
            "QKV dX GEMM": Gemm(dqkv, w["w_qkv"].t(), da),
            "QKV dW GEMM": Gemm(a.t(), dqkv, grads["w_qkv"], weight_grad=True),
        }
        # the input gradients' GEMMs (dX = dY W^T) have a second kernel where it runs: lab 4.3's wgmma + TMA GEMM
        # reading the weight W as B^T, K-major, with no copy; pick_gemm_kernels(self, self.bwd_stages) times both and
        # keeps the faster (each stage's kernel: self.gemm_kernels). Both of a stage write its column sums, if any,
        # into the Triton GEMM's partial buffer (Gemm.part), which the second-level sums read
        self.gemm_kernels = {name: "triton" for name in self.gemms}
        self.gemm_alternatives = {}
        if L._wgmma_unavailable(x) is None:
            wg = L._wgmma()
            self.gemm_alternatives = {
                name: ("wgmma", lambda a_=a_, w_=w_, c_=c_: wg.gemm_wgmma(a_, w_.t(), out=c_, b_kmajor=True))
                for name, a_, w_, c_ in (("FC dX GEMM", dz, w["w_fc"], dg), ("out dX GEMM", dh_, w["w_o"], do),
                                         ("QKV dX GEMM", dqkv, w["w_qkv"], da))}
            # proj dX too. "fused": GELU' (z read where a residual would be) and the column sums (one partial row
            # per 16 rows, a warp's share) in the wgmma kernel's epilogue, which its persistent loop overlaps with
            # the next tile's loads. "pass": the wgmma GEMM writes dF = dY W_proj^T, then dgelu_colsum's pass makes
            # dZ and the sums (dF written and read back: 2 M 4d 16-bit values more than a fused epilogue moves).
            # Either writes its sums into the Triton GEMM's partial buffer (Gemm.part), in its own row blocks.
            proj = self.gemms["proj dX GEMM + GELU' + bias sums"]
            if proj_dx == "fused":
                def proj_dx_wgmma():
                    part = proj.colsum_part({"BLOCK_M": wg.COLSUM_ROWS})       # the kernel's 16-row blocks
                    # the TMA-store build: z's tiles come by TMA under the main loop, C leaves by TMA (SRC_TMA)
                    wg.gemm_wgmma(dy2, w["w_proj"].t(), out=dz, dgelu=z, colsums=part, b_kmajor=True,
                                  tma_store=True, c_passes=1)
                label = "wgmma, GELU' + sums in its epilogue, z and C by TMA"
            else:
                df = self.buffers["df"] = e(m, 4 * d)

                def proj_dx_wgmma():
                    wg.gemm_wgmma(dy2, w["w_proj"].t(), out=df, b_kmajor=True)
                    dgelu_colsum(df, z, dz, proj.colsum_part(), proj.tile()["BLOCK_M"])
                label = "wgmma + GELU' pass"
            self.gemm_alternatives["proj dX GEMM + GELU' + bias sums"] = (label, proj_dx_wgmma)
        self.ln2 = LnBackward(h, w["ln2_w"], dg, dy2, buf["mean2"], buf["rstd2"], dh_,
                              vec[2 * d:6 * d], sum_res=True, sum_out=True)
        self.ln1 = LnBackward(x.view(m, d), w["ln1_w"], da, dh_, buf["mean1"], buf["rstd1"], dx.view(m, d),
                              vec[:2 * d])
        # attention backward on the forward's strided views: q, k, v in QKV's output, o and dO as (B, H, S, D) views
        # of (B, S, H, D) rows; it writes dQ, dK, dV contiguous, each (B, H, S, D)
        q, k, v = (buf["qkv"].view(bsz, s, 3, nh, dh)[:, :, j].permute(0, 2, 1, 3) for j in range(3))
        o_view = buf["o"].view(bsz, s, nh, dh).permute(0, 2, 1, 3)
        do_view = do.view(bsz, s, nh, dh).permute(0, 2, 1, 3)
        outs = tuple(heads)
        if attention_bwd == "triton":
            attn = (lambda: at.flash_attn_bwd(do_view, q, k, v, o_view, buf["lse"], True, out=outs,
                                              config=attn_bwd_config))
        else:
            attn = (lambda: hopper_bwd.flash_attn_bwd_hopper(do_view, q, k, v, o_view, buf["lse"], True, out=outs,
                                                             rung=attention_bwd))
        qkv_part = torch.empty(bsz * triton.cdiv(s, PACK_ROWS), 3 * d, device=x.device, dtype=torch.float32)
        block_d = at.block_d(dh)

        def pack():
            launch(K.pack_qkv_grad_kernel, (triton.cdiv(s, PACK_ROWS), bsz * nh, 3), heads, dqkv, qkv_part, s, nh,
                   HEAD_DIM=dh, BLOCK_D=block_d, BLOCK_S=PACK_ROWS, num_warps=4)

        fc_gemm = self.gemms["proj dX GEMM + GELU' + bias sums"]

        def finish():
            self.ln2.finish()
            self.ln1.finish()
            colsum(fc_gemm.part, grads["b_fc"])
            colsum(qkv_part, grads["b_qkv"])

        gm = self.gemms
        self.bwd_stages = [
            *((n, "gemm", gm[n]) for n in ("proj dX GEMM + GELU' + bias sums", "proj dW GEMM", "FC dX GEMM",
                                           "FC dW GEMM")),
            ("LN2 backward + skip + bias sums", "memory", self.ln2),
            *((n, "gemm", gm[n]) for n in ("out dX GEMM", "out dW GEMM")),
            ("attention backward (causal)", "attention", attn),
            ("dQKV pack + bias sums", "memory", pack),
            *((n, "gemm", gm[n]) for n in ("QKV dX GEMM", "QKV dW GEMM")),
            ("LN1 backward + skip", "memory", self.ln1),
            ("bias and LN gradients: second-level sums", "memory", finish),
        ]
        elt = x.element_size()
        # the second level reads every partial buffer once (fp32): the LN passes', the pack's, the GELU' GEMM's
        parts = (sum(int(t.numel()) for t in (self.ln1.part, self.ln2.part, qkv_part))
                 + 4 * d * triton.cdiv(m, fc_gemm.tile()["BLOCK_M"]))
        self.floor_of = {name: ("gemm", g_) for name, g_ in self.gemms.items()}
        self.floor_of.update({
            "LN2 backward + skip + bias sums": ("memory", 4 * m * d * elt), "LN1 backward + skip": ("memory",
                                                                                                    4 * m * d * elt),
            "dQKV pack + bias sums": ("memory", 6 * m * d * elt), "attention backward (causal)": ("attention",
                                                                                                  (bsz, nh, s, dh)),
            "bias and LN gradients: second-level sums": ("memory", 4 * parts)})

    def forward(self):
        for _, _, fn in self.stages:
            fn()
        return self.buffers["y"]

    def backward(self):
        for _, _, fn in self.bwd_stages:
            fn()
        return self.grads

    def run(self):
        return self.forward(), self.backward()

    def tune(self, configs, rep_ms: float = 25.0) -> list[dict]:
        """Each of our GEMM stages' tile (and split-K 1, 2, 4 for a weight gradient whose tiles are fewer than the
        SMs), picked by timing the candidates on its own shape, layout and epilogue (as BlockPlan.tune_gemms does
        for lab 4.2's linear()); a candidate that fails to compile or run is skipped and reported."""
        from common import bench

        rows = []
        for name, g_ in [("FC GEMM + bias + GELU, Z kept", self.fc), *self.gemms.items()]:
            best = None
            for cfg in configs:
                tiles = triton.cdiv(g_.m, cfg["BLOCK_M"]) * triton.cdiv(g_.n, cfg["BLOCK_N"])
                for split in ((1, 2, 4) if g_.weight_grad and tiles < _sms() else (1,)):
                    g_.config, g_.split_k = cfg, split
                    try:
                        t = bench.bench(g_, rep_ms=rep_ms)
                    except Exception as e:  # noqa: BLE001 - out of resources for this tile: skip, say so
                        rows.append({"stage": name, "config": str(cfg), "split_k": split, "ms": None,
                                     "note": type(e).__name__})
                        continue
                    rows.append({"stage": name, "config": str(cfg), "split_k": split, "ms": t.median_ms})
                    if best is None or t.median_ms < best[2]:
                        best = (cfg, split, t.median_ms)
            g_.config, g_.split_k = (best[0], best[1]) if best else (None, None)
        return rows


def train_step(x, n_heads, *weights, dy, attention: str = "auto", attention_bwd: str = "auto"):
    """The block's forward (keeping its activations) and backward from the repository's kernels: returns (y, grads),
    grads = {"x": dX, "ln1_w": ..., every name of lab.PARAM_NAMES}: each the gradient of sum(y * dy), in x's dtype."""
    return TrainPlan(x, dy, n_heads, *weights, attention=attention, attention_bwd=attention_bwd).run()


def train_flops(bsz: int, s: int, d: int, n_heads: int) -> float:
    """The step's FLOPs: the forward's GEMMs three times (forward, input and weight gradients), attention 3.5 times
    (its backward is 2.5 forwards)."""
    gemm = 24.0 * bsz * s * d * d
    attn = 4.0 * bsz * n_heads * s * s * (d // n_heads) / 2
    return 3 * gemm + 3.5 * attn


# ---------------------------------------------------------------------------------------------------------------------
# PyTorch: the same block as lab.torch_module, its gradients by torch.autograd
# ---------------------------------------------------------------------------------------------------------------------
def module_params(module) -> list:
    """The module's parameters in lab.PARAM_NAMES order (nn.Linear's weights are (out, in): ours transposed)."""
    return [module.ln1.weight, module.ln1.bias, module.qkv.weight, module.qkv.bias, module.o.weight, module.o.bias,
            module.ln2.weight, module.ln2.bias, module.fc.weight, module.fc.bias, module.proj.weight,
            module.proj.bias]


def module_grads(module, x, dy, call=None):
    """(y, grads) of `module` (or call(x), a compiled module) for the upstream dy, in lab.PARAM_NAMES's layouts; no
    .grad is accumulated (torch.autograd.grad)."""
    import torch

    xg = x.detach().requires_grad_(True)
    params = module_params(module)
    y = (module if call is None else call)(xg)
    got = torch.autograd.grad(y, [xg, *params], dy)
    grads = {"x": got[0]}
    for name, gr in zip(L.PARAM_NAMES, got[1:]):
        grads[name] = gr.t() if gr.dim() == 2 else gr
    return y.detach(), grads


def torch_grads(x, n_heads, *weights, dy):
    """The plain PyTorch module (lab.torch_module) with these weights, forward + torch.autograd, in x's dtype."""
    return module_grads(L.torch_module(x, n_heads, *weights), x, dy)


def reference_grads(x, n_heads, *weights, dy):
    """The same in float64 on the CPU, from the given (rounded) inputs: (y, grads) as float64 NumPy arrays."""
    import torch

    cast = (lambda t: t.detach().to("cpu", torch.float64))
    y, grads = torch_grads(cast(x), n_heads, *(cast(t) for t in weights), dy=cast(dy))
    return y.numpy(), {k: np.ascontiguousarray(v.numpy()) for k, v in grads.items()}
