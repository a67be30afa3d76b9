"""The mutants of tools/mutants.py: realistic one-line bugs, each with the tests that must catch it.

A mutant names a file, the exact text to change (it must occur once) and what it becomes. Keep them realistic - the
bug a kernel engineer writes on a bad day - and keep them current: tests/test_mutants_tool.py fails when a text is no
longer in its file.
"""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mutant:
    name: str          # what the bug is, in a few words
    path: str          # file, relative to the repository root
    find: str          # the exact text to change (must occur exactly once in the file)
    replace: str       # what it becomes
    tests: tuple       # pytest arguments that guard this code
    tier: str = "cpu"  # "cpu": judged in the CPU tier (Triton in the interpreter); "gpu": CUDA C, needs a GPU
    why: str = ""      # the real-world bug it stands for
    extra: dict = field(default_factory=dict, compare=False)


def guards(lab_dir: str, test_file: str) -> tuple:
    """A lab's own tests and the cross-cutting checks of its variants (every variant against float64, bad input,
    the property sweep), selected by the lab's folder name."""
    name = lab_dir.split("/")[-1]
    n = lab_dir.split("/")[0][len("phase")]
    return (f"tests/{test_file}", f"tests/test_variants_phase{n}.py", f"tests/test_bad_input_phase{n}.py",
            f"tests/test_properties_phase{n}.py", "-k", name)


P1, P2, P3, P4 = "phase1_architecture", "phase2_cuda", "phase3_triton", "phase4_optimization"
VADD = guards(f"{P1}/lab02_vector_add", "test_phase1_lab02_vector_add.py")
TOUR = guards(f"{P1}/lab01_device_tour", "test_phase1_lab01_device_tour.py")
MM = guards(f"{P1}/lab06_matmul_naive", "test_phase1_lab06_matmul_naive.py")
TR = guards(f"{P2}/lab01_coalescing_transpose", "test_phase2_lab01_coalescing_transpose.py")
BANK = guards(f"{P2}/lab02_bank_conflicts", "test_phase2_lab02_bank_conflicts.py")
SHFL = guards(f"{P2}/lab03_warp_shuffle", "test_phase2_lab03_warp_shuffle.py")
RED = guards(f"{P2}/lab06_reduction", "test_phase2_lab06_reduction.py")
SM27 = guards(f"{P2}/lab07_softmax", "test_phase2_lab07_softmax.py")
SGEMM = ("tests/test_phase2_lab08_sgemm_emulator.py", *guards(f"{P2}/lab08_sgemm", "test_phase2_lab08_sgemm_ladder.py"))
ROWSUM = guards(f"{P3}/lab01_programming_model", "test_phase3_lab01_programming_model.py")
MATMUL = guards(f"{P3}/lab02_matmul", "test_phase3_lab02_matmul.py")
FSM = guards(f"{P3}/lab03_fused_softmax", "test_phase3_lab03_fused_softmax.py")
LN = guards(f"{P3}/lab04_layernorm", "test_phase3_lab04_layernorm.py")
FUS = guards(f"{P4}/lab02_fusion", "test_phase4_lab02_fusion.py")
ATT = guards(f"{P4}/lab06_attention", "test_phase4_lab06_attention.py")

MUTANTS = [
    # ---- phase 1
    Mutant("vector add: store without its mask", f"{P1}/lab02_vector_add/triton_kernels.py",
           'tl.store(c_ptr + offs, a + b, mask=mask, cache_modifier=".cs")',
           'tl.store(c_ptr + offs, a + b, cache_modifier=".cs")', VADD,
           why="the last program writes past the end of c"),
    Mutant("vector add: bound off by one", f"{P1}/lab02_vector_add/triton_kernels.py",
           "mask = offs < n ", "mask = offs < n - 1 ", VADD, why="the last element is never written"),
    Mutant("device tour copy: <= instead of <", f"{P1}/lab01_device_tour/triton_kernels.py",
           "mask = offs < n", "mask = offs <= n", TOUR, why="reads and writes one element past the end"),
    Mutant("naive matmul: K mask ignores the tile offset", f"{P1}/lab06_matmul_naive/triton_kernels.py",
           "mask=(rm[:, None] < M) & (rk[None, :] < K - k0)", "mask=(rm[:, None] < M) & (rk[None, :] < K)", MM,
           why="the last k-tile reads past K when K is not a multiple of BLOCK_K"),
    # ---- phase 2
    Mutant("transpose: output row stride N instead of M", f"{P2}/lab01_coalescing_transpose/triton_kernels.py",
           "tl.store(y_ptr + rn[:, None] * M + rm[None, :]", "tl.store(y_ptr + rn[:, None] * N + rm[None, :]", TR,
           why="a square-only assumption: wrong on every non-square matrix"),
    Mutant("transpose: store mask with the dimensions swapped", f"{P2}/lab01_coalescing_transpose/triton_kernels.py",
           "mask=(rn[:, None] < N) & (rm[None, :] < M))", "mask=(rn[:, None] < M) & (rm[None, :] < N))", TR,
           why="the edge tiles of a non-square matrix"),
    Mutant("row sums: last row dropped", f"{P2}/lab02_bank_conflicts/triton_kernels.py",
           "tl.store(out_ptr + r, tl.sum(x, axis=1), mask=r < rows)",
           "tl.store(out_ptr + r, tl.sum(x, axis=1), mask=r < rows - 1)", BANK, why="a dropped tail"),
    Mutant("scan: carry from the segment itself, not the one before", f"{P2}/lab03_warp_shuffle/triton_kernels.py",
           "tl.maximum(g - 1, 0)", "tl.maximum(g, 0)", SHFL, why="an off-by-one in the reduce-then-scan carry"),
    Mutant("reduction: padding is 1, not the sum's identity", f"{P2}/lab06_reduction/triton_kernels.py",
           "acc += tl.load(x_ptr + idx, mask=mask, other=0.0)", "acc += tl.load(x_ptr + idx, mask=mask, other=1.0)",
           RED, why="the wrong neutral element for masked lanes"),
    Mutant("reduction: max padded with 0", f"{P2}/lab06_reduction/triton_kernels.py",
           'acc = tl.maximum(acc, tl.load(x_ptr + idx, mask=mask, other=float("-inf")))',
           "acc = tl.maximum(acc, tl.load(x_ptr + idx, mask=mask, other=0.0))", RED,
           why="max's identity is -inf: 0 wins on an all-negative input"),
    Mutant("online softmax: running sum not rescaled", f"{P2}/lab07_softmax/triton_kernels.py",
           "d = d * tl.exp(m - safe) + tl.exp(x - safe)", "d = d + tl.exp(x - safe)", SM27,
           why="the online merge forgets exp(m_old - m_new)"),
    Mutant("SGEMM (Triton): K-tail mask dropped on A", f"{P2}/lab08_sgemm/triton_kernels.py",
           "mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)", "mask=(rm[:, None] < M), other=0.0)", SGEMM,
           why="the last k-tile of a row reads the start of the next row"),
    # ---- phase 3
    Mutant("row sum: partial last tile dropped", f"{P3}/lab01_programming_model/triton_kernels.py",
           "acc += tl.load(base + cols, mask=cols < n_cols, other=0.0).to(tl.float32)",
           "acc += tl.load(base + cols, mask=cols < n_cols - n_cols % BLOCK_N, other=0.0).to(tl.float32)",
           ROWSUM, why="a dropped tail"),
    Mutant("row-sum tile: column mask missing", f"{P3}/lab01_programming_model/triton_kernels.py",
           "mask=row_ok[:, None] & (cols[None, :] < n_cols), other=0.0", "mask=row_ok[:, None], other=0.0", ROWSUM,
           why="the last tile of each row reads into the next row"),
    Mutant("matmul: accumulator rounded to the output dtype every k-tile", f"{P3}/lab02_matmul/triton_kernels.py",
           "acc = tl.dot(a, b, acc, input_precision=PRECISION)",
           "acc = tl.dot(a, b, acc, input_precision=PRECISION).to(c_ptr.dtype.element_ty).to(tl.float32)", MATMUL,
           why="16-bit accumulation by accident: the error grows with the number of k-tiles"),
    Mutant("matmul: K-tail mask dropped on A", f"{P3}/lab02_matmul/triton_kernels.py",
           "a = tl.load(a_ptrs, mask=m_ok & (offs_k[None, :] < k_left), other=0.0)",
           "a = tl.load(a_ptrs, mask=m_ok, other=0.0)", MATMUL, why="garbage past K in the last k-tile"),
    Mutant("fused softmax: no max subtraction", f"{P3}/lab03_fused_softmax/triton_kernels.py",
           "e = tl.exp(x - row_max[:, None])", "e = tl.exp(x)", FSM,
           why="exp overflows on large-magnitude rows"),
    Mutant("online softmax (3.3): sum not rescaled when the max grows", f"{P3}/lab03_fused_softmax/triton_kernels.py",
           "s = s * tl.exp(m - m_shift) + tl.sum(tl.exp(x - m_shift), axis=0)",
           "s = s + tl.sum(tl.exp(x - m_shift), axis=0)", FSM, why="the online merge forgets the rescale"),
    Mutant("layernorm: unbiased variance (N - 1)", f"{P3}/lab04_layernorm/triton_kernels.py",
           "rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)",
           "rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / (n_cols - 1) + eps)", LN,
           why="torch.var's default is not LayerNorm's"),
    Mutant("layernorm: no epsilon", f"{P3}/lab04_layernorm/triton_kernels.py",
           "rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n_cols + eps)",
           "rstd = 1.0 / tl.sqrt(tl.sum(xc * xc, axis=1) / n_cols)", LN,
           why="a constant row divides by zero"),
    Mutant("layernorm backward: mean of w*dy term dropped", f"{P3}/lab04_layernorm/triton_kernels.py",
           "dx = (wdy - (xhat * c1 + c2)) * rstd", "dx = (wdy - xhat * c1) * rstd", LN,
           why="half of the projection the LayerNorm gradient subtracts"),
    # ---- phase 4
    Mutant("fused GEMM: bias added after GELU", f"{P4}/lab02_fusion/triton_kernels.py",
           "    if HAS_BIAS:\n        acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]\n"
           "    if ACT == 1:\n        u = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)"
           "      # gelu_tanh, as in elementwise_kernel\n        acc = acc / (1.0 + tl.exp(-2.0 * u))",
           "    if ACT == 1:\n        u = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)"
           "      # gelu_tanh, as in elementwise_kernel\n        acc = acc / (1.0 + tl.exp(-2.0 * u))\n"
           "    if HAS_BIAS:\n        acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]",
           FUS, why="the epilogue applied in the wrong order"),
    Mutant("attention: causal mask off by one", f"{P4}/lab06_attention/triton_kernels.py",
           "keep = keep & (k_idx <= q_idx + shift)", "keep = keep & (k_idx < q_idx + shift)", ATT,
           why="each query stops attending to itself"),
    Mutant("attention: naive softmax's causal mask off by one", f"{P4}/lab06_attention/triton_kernels.py",
           "ok = ok & (cols <= i)", "ok = ok & (cols < i)", ATT, why="each query stops attending to itself"),
    Mutant("attention: softmax scale 1/D instead of 1/sqrt(D)", f"{P4}/lab06_attention/flash.py",
           "launch(attn_fwd_kernel, fwd_grid(a.b, a.hq, a.sq, cfg), q, k, v, o, lse, a.scale * LOG2E,",
           "launch(attn_fwd_kernel, fwd_grid(a.b, a.hq, a.sq, cfg), q, k, v, o, lse, a.scale * a.scale * LOG2E,", ATT,
           why="a wrong softmax scale"),
    Mutant("attention: Q rows read at the head-dim stride, not the view's", f"{P4}/lab06_attention/triton_kernels.py",
           "q = _load_rows(q_base, offs_m, sq_s, offs_d, row_ok, True, UPCAST, HEAD_DIM, BLOCK_D)",
           "q = _load_rows(q_base, offs_m, HEAD_DIM, offs_d, row_ok, True, UPCAST, HEAD_DIM, BLOCK_D)", ATT,
           why="a wrong row stride on a strided view (q sliced out of a packed QKV buffer)"),
    Mutant("attention forward: accumulator not rescaled", f"{P4}/lab06_attention/triton_kernels.py",
           "acc = acc * alpha[:, None]", "acc = acc * 1.0", ATT, why="the online softmax forgets to rescale O"),
    Mutant("attention backward: masked P not zeroed", f"{P4}/lab06_attention/triton_kernels.py",
           "p_t = tl.where(keep, p_t, 0.0)", "p_t = p_t", ATT,
           why="masked keys leak into dV in the diagonal block"),
    # ---- CUDA C (judged on a GPU)
    Mutant("CUDA vector add: <= n", f"{P1}/lab02_vector_add/kernels.cu", "    if (i < n) {", "    if (i <= n) {",
           VADD, tier="gpu", why="one thread writes past the end"),
    Mutant("CUDA softmax 05: no max subtraction", f"{P2}/lab07_softmax/kernels.cu",
           "        v[k] = exp_shifted(v[k], m);", "        v[k] = exp_shifted(v[k], 0.0f);", SM27, tier="gpu",
           why="exp overflows on large-magnitude rows"),
    Mutant("CUDA transpose 04: missing barrier after the tile store", f"{P2}/lab01_coalescing_transpose/kernels.cu",
           "for (int j = 0; j < CX; ++j) tile[ty + i * ROWS][tx + j * 32] = v[i][j];\n        }\n"
           "        __syncthreads();",
           "for (int j = 0; j < CX; ++j) tile[ty + i * ROWS][tx + j * 32] = v[i][j];\n        }", TR, tier="gpu",
           why="a missing barrier: threads read tile entries other warps have not written yet"),
]
