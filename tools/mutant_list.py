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
# the GPU tier's own guards: labs whose CUDA C kernels are checked in more files than the lab's test file
OCC = guards(f"{P1}/lab05_occupancy", "test_phase1_lab05_occupancy.py")
REG = guards(f"{P2}/lab05_register_pressure", "test_phase2_lab05_register_pressure.py")
TC = guards(f"{P4}/lab03_tensor_cores", "test_phase4_lab03_tensor_cores_gpu.py")
MP = guards(f"{P4}/lab05_mixed_precision", "test_phase4_lab05_mixed_precision.py")
WG = "tests/test_phase4_lab03_tensor_cores_wgmma_gpu.py"    # rung 03 (wgmma) against float64, every build family
ATT_CU = ("tests/test_phase4_lab06_attention_cuda.py", "-k", "gpu_matches_float64")   # rungs 01/02/02w, causal too
ATT_H = ("tests/test_phase4_lab06_attention_hopper_gpu.py", "-k", "gpu_matches_float64")  # the Hopper rungs
ATT_HB = ("tests/test_phase4_lab06_attention_hopper_bwd_gpu.py",    # the Hopper backward's rungs (GPU), and their
          "tests/test_phase4_lab06_attention_hopper_bwd.py")        # compiles
# the Hopper backward's mutants run its bounded-wait build: one that breaks a barrier's phase ends in seconds with
# garbage gradients (the tests fail) instead of hanging the GPU, and the other mutants' kernels, until --timeout
HB_DEBUG = {"env": {"ATTN_MBAR_TIMEOUT": "1"}}
# lab 4.3's build that reads the epilogue's source (z here) by TMA: one C pass, the TMA-store ring's 3 stages
SRC_TMA_BUILD = {"defines": {"EPI_OPS": 24, "EPI_TMA": 1, "C_PASSES": 1, "STAGES": 3}}
TRAIN = ("tests/test_phase4_lab07_train_step.py",)      # lab 4.7's training step against autograd

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
           "    if ACT == 1:\n        acc = gelu_tanh(acc)",
           "    if ACT == 1:\n        acc = gelu_tanh(acc)\n"
           "    if HAS_BIAS:\n        acc += tl.load(bias_ptr + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]",
           FUS, why="the epilogue applied in the wrong order"),
    Mutant("gelu_tanh: the cubic term's folded constant dropped", f"{P4}/lab02_fusion/triton_kernels.py",
           "(-2.302208198144325 + -0.1029432395800235 * (t * t))", "(-2.302208198144325 + 0.0 * (t * t))", FUS,
           why="K2 = 0.044715 K1 carries u's 0.044715 t^3; without it the kernels compute t sigmoid(1.596 t), "
               "GELU's sigmoid approximation, not its tanh form"),
    Mutant("training step: GELU's derivative without its cubic term", f"{P4}/lab07_transformer_block/"
           "backward_kernels.py", "q = z * (1.5957691216057308 + 0.21406444881780076 * z2)",
           "q = z * 1.5957691216057308", TRAIN, why="u'(z) = c (1 + 3 a z^2): the 3 a z^2 folded into 6 c a"),
    Mutant("training step: the GELU' pass sums dZ before its rounding", f"{P4}/lab07_transformer_block/"
           "backward_kernels.py", "sums += tl.sum(tl.where(mask, dz.to(tl.float32), 0.0), axis=0)",
           "sums += tl.sum(tl.where(mask, df * _gelu_tanh_grad(z), 0.0), axis=0)", TRAIN,
           why="the bias gradient must sum the dZ the next GEMMs read (the fused epilogue's rule), not the fp32 "
               "values before the store"),
    Mutant("training step: the GELU' pass skips each block's last rows", f"{P4}/lab07_transformer_block/"
           "backward_kernels.py", "for r0 in range(0, BLOCK_R, SUB_R):", "for r0 in range(0, BLOCK_R - SUB_R, SUB_R):",
           TRAIN, why="a loop bound one step short: rows past it keep their poison"),
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
    Mutant("attention backward: dV rounded per query head", f"{P4}/lab06_attention/triton_kernels.py",
           "                dk = tl.dot(_mma_operand(ds_t, in_ty, UPCAST), q, dk)\n    dk = dk * sm_scale",
           "                dk = tl.dot(_mma_operand(ds_t, in_ty, UPCAST), q, dk)\n"
           "        dv = dv.to(dv_ptr.dtype.element_ty).to(tl.float32)\n    dk = dk * sm_scale",
           ("tests/test_phase4_lab06_attention_dv_rounding.py",), why="a double rounding: each query head's "
           "share of a GQA group's dV rounded to bf16 before the group sum (issue 33)"),
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
    Mutant("CUDA vector add 03: float4 tail indexed in float4 units", f"{P1}/lab02_vector_add/kernels.cu",
           "long long t = (n4 << 2) + i;  // the scalar tail", "long long t = n4 + i;  // the scalar tail", VADD,
           tier="gpu", why="a float4 tail not handled: the last n % 4 elements are never written"),
    Mutant("CUDA occupancy 02: unrolled loads one float4 apart, not one grid apart", f"{P1}/lab05_occupancy/kernels.cu",
           "v[u] = x4[i + u * total];", "v[u] = x4[i + u];", OCC, tier="gpu",
           why="an ILP unroll that reads its neighbours' elements instead of its own"),
    Mutant("CUDA naive matmul 01: A's row stride N instead of K", f"{P1}/lab06_matmul_naive/kernels.cu",
           "const float* a = A + (long long)row * K;     // this lane's row",
           "const float* a = A + (long long)row * N;     // this lane's row", MM, tier="gpu",
           why="a square-only assumption: wrong whenever N != K"),
    Mutant("CUDA transpose 02: store bounds with M and N swapped", f"{P2}/lab01_coalescing_transpose/kernels.cu",
           "its row is a column index of in\n            if (orow < N && ocol < M)",
           "its row is a column index of in\n            if (orow < M && ocol < N)", TR, tier="gpu",
           why="the edge tiles of a non-square matrix: writes past the end, or drops the edge"),
    Mutant("CUDA transpose 03: the tile read back untransposed", f"{P2}/lab01_coalescing_transpose/kernels.cu",
           "ocol = r0 + tx;\n            if (orow < N && ocol < M) out[orow * M + ocol] = tile[tx][ty + j];",
           "ocol = r0 + tx;\n            if (orow < N && ocol < M) out[orow * M + ocol] = tile[ty + j][tx];", TR,
           tier="gpu", why="a wrong transpose index in shared memory: the tile is copied, not transposed"),
    Mutant("CUDA row sums 01: the shared tile written transposed", f"{P2}/lab02_bank_conflicts/kernels.cu",
           "t[r][lane] = v[r];     // row r", "t[lane][r] = v[r];     // row r", BANK, tier="gpu",
           why="a swapped shared-memory index: each lane sums a column instead of its row"),
    Mutant("CUDA warp reduce 02: shuffle width 16", f"{P2}/lab03_warp_shuffle/kernels.cu",
           "v[k] += __shfl_down_sync(FULL, v[k], offset);", "v[k] += __shfl_down_sync(FULL, v[k], offset, 16);",
           SHFL, tier="gpu", why="a wrong shuffle width: the two half-warps never meet"),
    Mutant("CUDA warp scan 02: shfl_up without the lane guard", f"{P2}/lab03_warp_shuffle/kernels.cu",
           "if (lane >= offset) v[k] += t;", "v[k] += t;", SHFL, tier="gpu",
           why="lanes below the offset get their own value back and add it twice"),
    Mutant("CUDA column norm 03: the first row left out of the norm", f"{P2}/lab05_register_pressure/kernels.cu",
           "for (int k = 0; k < rows; ++k) s = fmaf(v[k], v[k], s);",
           "for (int k = 1; k < rows; ++k) s = fmaf(v[k], v[k], s);", REG, tier="gpu",
           why="a loop that starts at 1"),
    Mutant("CUDA reduction 05: the unrolled last warp drops slots 32..63", f"{P2}/lab06_reduction/kernels.cu",
           "float v = s[tid] + s[tid + 32];", "float v = s[tid];", RED, tier="gpu",
           why="the tree stops at 32 threads but the last warp starts from 32 slots, not 64"),
    Mutant("CUDA reduction 07-09: float4 padding is 0, not the op's identity", f"{P2}/lab06_reduction/kernels.cu",
           ": make_float4(Op::identity(), Op::identity(), Op::identity(), Op::identity());",
           ": make_float4(0.0f, 0.0f, 0.0f, 0.0f);", RED, tier="gpu",
           why="sum's identity reused for max: 0 wins on an all-negative input"),
    Mutant("CUDA softmax 03: the row max not reduced across the warp", f"{P2}/lab07_softmax/kernels.cu",
           "    m = warp_allreduce<MaxOp>(m);\n", "", SM27, tier="gpu",
           why="each lane subtracts its own max: the exponentials no longer share a scale"),
    Mutant("CUDA softmax 04: online padding 0, not -inf", f"{P2}/lab07_softmax/kernels.cu",
           "v[u] = (j < cols) ? xr[j] : neg_inf();", "v[u] = (j < cols) ? xr[j] : 0.0f;", SM27, tier="gpu",
           why="padded lanes add exp(0 - max) to the denominator"),
    Mutant("CUDA SGEMM 03: no barrier between the tile store and the FMAs", f"{P2}/lab08_sgemm/kernels.cu",
           "        __syncthreads();                    // the tile is complete before anyone reads it\n", "",
           SGEMM, tier="gpu", why="a missing __syncthreads: warps read As/Bs entries other warps have not written"),
    Mutant("CUDA SGEMM 03: k-loop drops the partial last tile", f"{P2}/lab08_sgemm/kernels.cu",
           "for (int k0 = 0; k0 < K; k0 += TILE) {", "for (int k0 = 0; k0 + TILE <= K; k0 += TILE) {", SGEMM,
           tier="gpu", why="a GEMM k-loop bound off by a tile: K % TILE columns never accumulated"),
    Mutant("CUDA SGEMM 09: the prefetch masks with this tile's k, not the next's", f"{P2}/lab08_sgemm/kernels.cu",
           "wt_load_global(L, K, (kt + 1) * WT_BK, vec, a_reg, b_reg);",
           "wt_load_global(L, K, kt * WT_BK, vec, a_reg, b_reg);", SGEMM, tier="gpu",
           why="double buffering one tile off: the last k-tile reads past K instead of zero-filling"),
    Mutant("CUDA SGEMM 10: cp.async prefetch one stage too far", f"{P2}/lab08_sgemm/kernels_async.cu",
           "const int next = kt + STAGES - 1;", "const int next = kt + STAGES;", SGEMM, tier="gpu",
           why="a pipeline off by one: the refill lands in the stage being read, one tile is never loaded"),
    Mutant("CUDA row sum 01 (3.1): the tree stops one level early", f"{P3}/lab01_programming_model/kernels.cu",
           "for (int half = THREADS / 2; half > 0; half >>= 1) {",
           "for (int half = THREADS / 2; half > 1; half >>= 1) {", ROWSUM, tier="gpu",
           why="partial[1] is never added into partial[0]"),
    Mutant("CUDA fusion: bias indexed by row instead of column", f"{P4}/lab02_fusion/kernels.cu",
           "(unsigned long long)i % (unsigned)(n_cols / V)", "(unsigned long long)i / (unsigned)(n_cols / V)", FUS,
           tier="gpu", why="an epilogue bias read with the row index"),
    Mutant("CUDA fused layernorm: the mean divided by the vector count", f"{P4}/lab02_fusion/kernels.cu",
           "const float mean = row_block_sum(s, red) / n;", "const float mean = row_block_sum(s, red) / nv;", FUS,
           tier="gpu", why="vectorizing: elements and vectors confused (wrong on the 16-byte path only)"),
    Mutant("CUDA tensor cores 01: wmma B leading dimension without the padding", f"{P4}/lab03_tensor_cores/kernels.cu",
           "&Bs[kk][wn + 16 * j], WMMA_BN + WMMA_PAD);", "&Bs[kk][wn + 16 * j], WMMA_BN);", TC, tier="gpu",
           why="a padded shared tile read with the unpadded stride"),
    Mutant("CUDA tensor cores 02: mma.sync C fragment column t, not 2t", f"{P4}/lab03_tensor_cores/kernels.cu",
           "const int col = bn + wn + j * 8 + 2 * t;", "const int col = bn + wn + j * 8 + t;", TC, tier="gpu",
           why="the accumulator layout misread: each thread holds a column pair"),
    Mutant("CUDA wgmma: epilogue bias indexed by row instead of column", f"{P4}/lab03_tensor_cores/kernels_wgmma.cu",
           "if (col < N) x += half_to_f32(__ldg(bias + col));", "if (r < N) x += half_to_f32(__ldg(bias + r));",
           (WG, "-k", "fused_epilogue"), tier="gpu", why="a fused GEMM epilogue's bias read with the row index",
           extra={"defines": {"EPI_OPS": 1}}),
    Mutant("CUDA wgmma: consumers wait for the wrong mbarrier parity", f"{P4}/lab03_tensor_cores/kernels_wgmma.cu",
           "if (!mbar_wait(bars + 8 * s, (it / STAGES) & 1, 0)) {",
           "if (!mbar_wait(bars + 8 * s, ((it / STAGES) + 1) & 1, 0)) {", (WG, "-k", "bf16_awkward"), tier="gpu",
           why="a wrong phase parity: the wait returns at once and the MMAs read a slot TMA has not filled"),
    Mutant("CUDA wgmma: TMA store issued without the proxy fence and barrier",
           f"{P4}/lab03_tensor_cores/kernels_wgmma.cu",
           "fence_proxy_async_smem();         // each writer: its st.shared before the async proxy's reads\n"
           "                    named_bar_sync(1 + cw, 128);      // all 128 writers done before the one thread issues",
           "// (fence.proxy.async and the writers' barrier forgotten)\n"
           "                    // all 128 writers done before the one thread issues", (WG, "-k", "tma_store"),
           tier="gpu", why="a missing fence before a TMA store: the copy engine may read the buffer before it is "
           "written (a race; the tests hold warps 1-3 back with CONFIG's STORE_RACE, so it shows on every launch)",
           extra={"defines": {"EPI_TMA": 1, "C_PASSES": 2}}),
    Mutant("CUDA wgmma: the backward's column sums stored under another lane's column",
           f"{P4}/lab03_tensor_cores/kernels_wgmma.cu",
           "4 * g + 2 * ((lane >> 4) & 1) + ((lane >> 3) & 1)) + ((lane >> 2) & 1);",
           "4 * g + 2 * ((lane >> 4) & 1) + ((lane >> 2) & 1)) + ((lane >> 3) & 1);",
           (WG, "-k", "backward_epilogue"), tier="gpu",
           why="after a reduce-scatter each lane holds the sums its lane bits name: read the bits in another order "
               "and every sum lands in a neighbour's column", extra={"defines": {"EPI_OPS": 24}}),
    Mutant("CUDA wgmma: GELU's derivative without its cubic term", f"{P4}/lab03_tensor_cores/kernels_wgmma.cu",
           "(1.5957691216057308f + 0.21406444881780076f * t2)", "(1.5957691216057308f + 0.f * t2)",
           (WG, "-k", "backward_epilogue"), tier="gpu", why="u'(t) = c (1 + 3 a t^2): the 3 a t^2 folded into 6 c a",
           extra={"defines": {"EPI_OPS": 24}}),
    Mutant("CUDA wgmma: z staged by TMA read from the other row of the pair",
           f"{P4}/lab03_tensor_cores/kernels_wgmma.cu", "ld_shared_u32(at + (r0 + 8 * h) * 128)",
           "ld_shared_u32(at + (r0 + 8 * (1 - h)) * 128)", (WG, "-k", "backward_epilogue"), tier="gpu",
           why="a thread holds rows r0 and r0 + 8: z of one multiplies the other's accumulators (SRC_TMA's shared "
               "reads must mirror the C writes exactly)",
           extra=SRC_TMA_BUILD),
    Mutant("CUDA wgmma: the source barrier waited at a fixed parity",
           f"{P4}/lab03_tensor_cores/kernels_wgmma.cu", "!mbar_wait(sbar, (src_loads++) & 1, 2)",
           "!mbar_wait(sbar, (src_loads++) & 0, 2)", (WG, "-k", "many_tiles_per_block"), tier="gpu",
           why="a block's second tile waits for phase 0 again, which has long completed: the epilogue reads the "
               "buffer before the source lands (the last tile's C, or half of it)",
           extra=SRC_TMA_BUILD),
    Mutant("CUDA mixed precision: B read with A's row stride", f"{P4}/lab05_mixed_precision/kernels.cu",
           "? B[(size_t)gr * N + gc] : zero;", "? B[(size_t)gr * K + gc] : zero;", MP, tier="gpu",
           why="a copy-pasted load: wrong whenever N != K"),
    Mutant("CUDA attention 01/02: causal mask off by one", f"{P4}/lab06_attention/kernels.cu",
           "(causal && key > row)", "(causal && key >= row)", ATT_CU, tier="gpu",
           why="each query stops attending to itself"),
    Mutant("CUDA attention 01/02: running sum not rescaled", f"{P4}/lab06_attention/kernels.cu",
           "l_run[mt][h] *= alpha[h];", "l_run[mt][h] *= 1.0f;", ATT_CU, tier="gpu",
           why="the online softmax rescales O but forgets l when the max grows"),
    Mutant("CUDA attention 01/02: quad sum with the wrong shuffle offset", f"{P4}/lab06_attention/kernels.cu",
           "l_run[mt][h] += __shfl_xor_sync(0xffffffffu, l_run[mt][h], 2);",
           "l_run[mt][h] += __shfl_xor_sync(0xffffffffu, l_run[mt][h], 1);", ATT_CU, tier="gpu",
           why="a wrong shuffle offset: half of the row's sum counted twice, the other half never"),
    Mutant("CUDA Hopper attention: causal mask off by one", f"{P4}/lab06_attention/kernels_hopper.cu",
           "(rt.causal && col > row)", "(rt.causal && col >= row)", ATT_H, tier="gpu",
           why="each query stops attending to itself"),
    Mutant("CUDA Hopper backward: causal mask off by one", f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "if (key >= S || (diag && m0 + qi < key)) p = 0.f;", "if (key >= S || (diag && m0 + qi <= key)) p = 0.f;",
           ATT_HB, extra=HB_DEBUG, tier="gpu", why="the diagonal's P zeroed: no query's gradient flows to its own key"),
    Mutant("CUDA Hopper backward: dK without its softmax scale", f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "pack2(pack_t(), acc_dk[4 * dt] * sm_scale, acc_dk[4 * dt + 1] * sm_scale);",
           "pack2(pack_t(), acc_dk[4 * dt], acc_dk[4 * dt + 1] * sm_scale);", ATT_HB, extra=HB_DEBUG,
           tier="gpu",
           why="dK = dS^T Q needs sm_scale once; forgotten on half the columns"),
    Mutant("CUDA Hopper backward: dQ accumulated without its scale", f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "pack2(pack_t(), a.x * sm_scale, a.y * sm_scale);", "pack2(pack_t(), a.x, a.y);", ATT_HB,
           extra=HB_DEBUG, tier="gpu",
           why="the accumulator holds dS K unscaled; the conversion is where sm_scale goes, and it was left out"),
    Mutant("CUDA Hopper backward: GQA heads mapped interleaved, not grouped",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "const int h = hkv * group + hh;", "const int h = hh * Hkv + hkv;", ATT_HB, extra=HB_DEBUG, tier="gpu",
           why="query head h belongs to key/value head h / group; h % Hkv is the other convention, and wrong here"),
    Mutant("CUDA Hopper backward 03: MN-major slice stepped 8 rows, not 16",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "return wgmma_desc_128b(tile + 2048 * kk, BOX_BYTES, 1024);",
           "return wgmma_desc_128b(tile + 1024 * kk, BOX_BYTES, 1024);", ATT_HB, extra=HB_DEBUG, tier="gpu",
           why="a k16 slice of an MN-major operand is 16 rows of 128 bytes; stepping by one 8-row core matrix"),
    Mutant("CUDA Hopper backward 05: a stage's mbarrier waited with the wrong parity",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "WAIT(full0 + 8 * s, (step >> 1) & 1);", "WAIT(full0 + 8 * s, step & 1);", ATT_HB, extra=HB_DEBUG,
           tier="gpu", why="stage s is used by every other step, so its k-th use waits for phase k: parity (step / 2) "
                           "& 1; step & 1 passes at once on stage 1 and reads Q, dO before they land (a race that "
                           "the copies a step ahead hide: the tests hold them back with CONFIG's LOAD_RACE)"),
    Mutant("CUDA Hopper backward 06: every consumer's dQ half reads K's first 64 columns",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "desc_mnmajor(base + (kk / 4) * TILE_BYTES + c * BOX_BYTES, kk % 4)",
           "desc_mnmajor(base + (kk / 4) * TILE_BYTES, kk % 4)", ATT_HB, extra=HB_DEBUG, tier="gpu",
           why="consumer c adds dQ's columns 64 c .. + 63, which are dS times K's box c; box 0 for both gives the "
               "second half the first half's values"),
    Mutant("CUDA Hopper backward 07: dQ staged with the other swizzle than the accumulator's",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "st_shared_f2(stage_dq + ra * 256 + 8 * (p ^ ((ra & 7) << 2)), dqh[4 * j], dqh[4 * j + 1]);",
           "st_shared_f2(stage_dq + ra * 256 + 8 * (p ^ ((ra & 7) << 1)), dqh[4 * j], dqh[4 * j + 1]);", ATT_HB,
           extra=HB_DEBUG, tier="gpu",
           why="the bulk reduction copies the staging block as it is, so its layout must be dq_index's; "
               "a different swizzle adds row a's pairs into the wrong columns"),
    Mutant("CUDA Hopper backward 09: the second consumer's diagonal tile takes the unmasked path",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "const bool diag = causal && m0 < n0 + KEYS6;", "const bool diag = causal && m0 < n0 + BLOCK_N;", ATT_HB,
           extra=HB_DEBUG, tier="gpu",
           why="a block's 128 keys meet the diagonal in two query tiles (m0 = n0 and n0 + 64: consumer "
               "1's); the second one unmasked lets its queries attend to later keys"),
    Mutant("CUDA Hopper backward 10: the rotated walk wraps one tile late",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "return m >= n_tiles * BLOCK_M ? m - n_tiles * BLOCK_M : m;",
           "return m > n_tiles * BLOCK_M ? m - n_tiles * BLOCK_M : m;", ATT_HB, extra=HB_DEBUG,
           tier="gpu", why="a block that starts past tile 0 reaches row n_tiles x 64 instead of row 0: it never sees "
                           "query tile 0 (dK, dV short of its rows) and adds a tile past the end"),
    Mutant("CUDA Hopper backward 11: a dQ block converted one reduction early",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu", "return old == expected - 1;",
           "return old == expected - 2;", ATT_HB, extra=HB_DEBUG,
           tier="gpu", why="the consumer whose count is the second to last converts the block: the last key block's "
                           "adds are missing from dq (and the block is never converted where only one add lands)"),
    Mutant("CUDA Hopper backward 12: a head converted before its last key block has counted",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "if (threadIdx.x == 128) *last = count_dq_add(dq_count + bh, (int)gridDim.x);",
           "if (threadIdx.x == 128) *last = count_dq_add(dq_count + bh, (int)gridDim.x - 1);", ATT_HB, extra=HB_DEBUG,
           tier="gpu", why="the second to last key block converts the head: the last one's dQ adds are missing (and "
                           "with one key block the head is never converted)"),
    Mutant("CUDA Hopper backward 13: a consumer of rungs 09-12 waits for its stage at the wrong parity",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "const int s = step & 1;\n            WAIT(full0 + 8 * s, (step / 2) & 1);",
           "const int s = step & 1;\n            WAIT(full0 + 8 * s, step & 1);", ATT_HB, extra=HB_DEBUG, tier="gpu",
           why="the producer runs up to two stages ahead, so the stage has landed by the time a consumer looks - "
               "except when the copies are late (LOAD_RACE): then steps 1 and 2 read a stage before its copy"),
    Mutant("CUDA Hopper backward 08: the dQ pass's causal mask off by one",
           f"{P4}/lab06_attention/kernels_hopper_bwd.cu",
           "if (key >= S || (causal && key > row)) p = 0.f;", "if (key >= S || (causal && key >= row)) p = 0.f;",
           ATT_HB, extra=HB_DEBUG, tier="gpu",
           why="each query's own key dropped from dQ (dK, dV keep it): dQ alone is wrong"),
]
