"""Korean lines of what lab 4.2 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants: notes and why a case or a GPU is passed over
    "part 1: 2 launches": "part 1: launch 2번",
    "parts 1-2: 1 launch": "part 1-2: launch 1번",
    "2-3 launches": "launch 2-3번",
    "1 launch": "launch 1번",
    "part 3 without residual": "residual 없는 part 3",
    "CUDA C has an unfused chain for part 1 only (no layernorm or GEMM kernel here)":
        "CUDA C에는 part 1의 unfused chain만 있습니다(여기에는 layernorm 커널도 GEMM 커널도 없습니다)",
    "CUDA C has parts 1 and 2 only (no GEMM here: lab 4.3's is the CUDA C GEMM)":
        "CUDA C에는 part 1과 2만 있습니다(여기에는 GEMM이 없습니다. CUDA C GEMM은 랩 4.3에 있습니다)",
    "the GEMM takes 16-bit inputs only": "GEMM은 16비트 입력만 받습니다",
    "bf16 tl.dot needs sm_80 or newer; this GPU is {arch} (its fp16 GEMM cases run)":
        "bf16 tl.dot에는 sm_80 이상이 필요합니다. 이 GPU는 {arch}입니다(fp16 GEMM 케이스는 실행합니다)",
    "tensor descriptors (TMA) need sm_90 or newer; this GPU is {arch}":
        "tensor descriptor(TMA)에는 sm_90 이상이 필요합니다. 이 GPU는 {arch}입니다",
    "the persistent TMA tile (ring + C tile) needs {need} KiB of shared memory per block; this GPU has {have} KiB":
        "persistent TMA tile(ring + C tile)에는 block당 shared memory {need} KiB가 필요합니다. 이 GPU에는 {have} KiB가 "
        "있습니다",
    "the TMA kernel is part 3's GEMM only": "TMA 커널은 part 3의 GEMM 전용입니다",
    "no residual epilogue in the TMA kernel": "TMA 커널에는 residual epilogue가 없습니다",
    "TMA needs row strides of 16 bytes: N and K multiples of 8":
        "TMA에는 16바이트 단위의 row stride가 필요합니다: N과 K가 8의 배수여야 합니다",

    # the plan
    "part 2's unfused chain ends in phase 3's layernorm forward (lab 3.4's plan lists its launch); the small-tiles "
    "variant is checked, not benchmarked; torch eager and torch.compile launch their own kernels":
        "part 2의 unfused chain은 phase 3의 layernorm forward로 끝납니다(그 launch는 랩 3.4의 계획에 나옵니다). "
        "small-tiles variant는 검증만 하고 benchmark하지 않습니다. torch eager와 torch.compile은 자기 커널을 "
        "launch합니다",
    "{case}, the GEMM alone": "{case}, GEMM만",
    "{case}, persistent TMA": "{case}, persistent TMA",
    "{case}, grid per tile (tma=False)": "{case}, grid per tile 방식 (tma=False)",
    "{case}, the unfused tail": "{case}, fusion하지 않은 뒷부분",

    # explain: the prediction
    "The prediction: bytes each chain moves (bf16; M N = elements of one matrix) and the speed-up the byte ratio "
    "implies; the GEMM row on {gpu} at {gemm} and {gbps:.0f} GB/s ({hbm_from})":
        "예측: chain마다 옮기는 바이트(bf16, M N = 행렬 하나의 원소 수)와 바이트 비율로 본 속도 향상. GEMM 행은 "
        "{gpu}에서 {gemm}과 {gbps:.0f} GB/s({hbm_from})로 계산",
    "unfused launches": "unfused launch 수",
    "unfused bytes": "unfused 바이트",
    "fused launches": "fused launch 수",
    "fused bytes": "fused 바이트",
    "predicted speed-up": "예측한 속도 향상",
    "measured ({path})": "측정값 ({path})",
    "{unit} datasheet peak": "{unit} datasheet 최고 성능",
    "no {unit} rate known for {gpu}": "{gpu}의 {unit} 처리율을 모름",
    "HBM ceiling measured in this run": "이번 실행에서 측정한 HBM 한계",
    "HBM ceiling {where}": "HBM 한계 {where}",
    "datasheet bandwidth": "datasheet 대역폭",
    "memory clock x bus width": "memory clock x bus 폭",
    "{case} {shape}: speed-up of fusing": "{case} {shape}: fusion의 속도 향상",
    "{sp:.2f}x": "{sp:.2f}배",
    "fused bias + GELU floor ({m} x {n} bf16, 2 M N x 2 B)": "fused bias + GELU의 하한 ({m} x {n} bf16, 2 M N x 2 B)",
    "fused residual + layernorm floor ({m} x {n}, 4 M N x 2 B)":
        "fused residual + layernorm의 하한 ({m} x {n}, 4 M N x 2 B)",
    "rates of the GEMM row": "GEMM 행의 처리율",
    "fp32 ridge (parts 1-2 sit at <= 10 FLOP/B)": "fp32 ridge (part 1-2는 10 FLOP/B 이하)",
    "16-bit tensor-core ridge (part 3 sits at ~1365 FLOP/B)": "16비트 tensor core ridge (part 3은 ~1365 FLOP/B)",
    "fusion_02 bytes in flight per SM (resident threads x UNROLL x 16 B)":
        "fusion_02가 SM당 in flight로 두는 바이트 (상주 thread x UNROLL x 16 B)",
    "{kib:.0f} KiB ({blocks} blocks of {threads}, {regs} registers)":
        "{kib:.0f} KiB ({threads}-thread block {blocks}개, register {regs}개)",
    "part 3's GEMM": "part 3의 GEMM",
    "the persistent TMA kernel": "persistent TMA 커널",
    "note {i}": "참고 {i}",

    # the compile reports
    "kernels.cu compiled with NVRTC for {arch} (bf16 unless named): 128b = 16-byte accesses; the _scalar fallback uses "
    "16-bit ones":
        "NVRTC로 {arch}용 컴파일한 kernels.cu (이름에 없으면 bf16): 128b = 16바이트 접근, _scalar 대체 경로는 16비트 "
        "접근",
    "linear_kernel compiled ahead of time for {arch} ({dtype}, aligned shape): what the epilogue costs in registers and "
    "shared memory":
        "{arch}용으로 ahead-of-time 컴파일한 linear_kernel ({dtype}, 정렬된 shape): epilogue가 register와 shared "
        "memory에서 드는 비용",
    "epilogue": "epilogue",
    "bias only": "bias만",
    "TMA persistent, bias only": "TMA persistent, bias만",
    "the persistent TMA GEMM is not compiled for {gpu}: {why}": "{gpu}용으로는 persistent TMA GEMM을 컴파일하지 않습니다: {why}",
    "\nRan in the interpreter: every Triton kernel (elementwise chains fused and unfused, residual + layernorm "
    "single-piece and\nlong-row paths, the GEMM with bias / GELU / residual epilogues). The CUDA C kernels were only "
    "compiled (above);\ntiming, tuning and the torch peers need a GPU.":
        "\ninterpreter에서 실행한 것: 모든 Triton 커널(fusion한 elementwise chain과 하지 않은 chain, residual + layernorm의\n"
        "한 번에 읽는 경로와 긴 행 경로, bias / GELU / residual epilogue가 붙은 GEMM). CUDA C 커널은 컴파일만\n"
        "했습니다(위). 시간 측정, tuning, torch peer에는 GPU가 필요합니다.",

    # the benchmark (GPU)
    "{n} benchmarked result(s) failed their sampled check (see the 'check' column)":
        "benchmark한 결과 {n}개가 표본 검증에 실패했습니다 ('check' 열을 보십시오)",
    "Part 1 - elementwise chains, {m} x {n} bf16 (GB/s counts the bytes each contender must move: unfused chains more)":
        "Part 1 - elementwise chain, {m} x {n} bf16 (GB/s는 비교 대상마다 옮겨야 할 바이트로 셈: unfused chain이 더 "
        "많음)",
    "Part 2 - residual + layernorm, {m} x {n} bf16": "Part 2 - residual + layernorm, {m} x {n} bf16",
    "Part 3 - GEMM + bias + gelu_tanh, {dtype} {n}^3": "Part 3 - GEMM + bias + gelu_tanh, {dtype} {n}^3",
    "Tuning at the benchmark shapes (one timing per candidate; the fastest is used above)":
        "benchmark shape에서 tuning (후보마다 한 번 측정, 가장 빠른 것을 위에서 씀)",
    "Predicted (byte ratio) vs measured speed-up of fusing, and ratios vs the peers":
        "fusion의 예측(바이트 비율) 대 측정 속도 향상, 그리고 peer 대비 비율",
    "contender": "비교 대상",
    "moved": "옮긴 양",
    "vs_eager": "eager 대비",
    "vs_pair": "pair 대비",
    "ours": "우리 커널",
    "cuda measured": "cuda 측정",
    "triton measured": "triton 측정",
    "cuda 03 vs triton fused": "triton fused 대비 cuda 03",
    "torch eager -> compile": "torch eager -> compile 비율",
    "fused vs eager": "eager 대비 fused",
    "fused vs pair": "pair 대비 fused",
    "best fused vs compile": "compile 대비 가장 빠른 fused",
    "best fused": "가장 빠른 fused",
    "main loop vs cuBLAS": "cuBLAS 대비 main loop",
    "grid per tile vs pair": "pair 대비 grid per tile",
    "note": "참고",

    # the plot
    "speed-up over the unfused torch eager chain (x)": "fusion하지 않은 torch eager chain 대비 속도 향상 (배)",
    "Kernel fusion on {gpu}": "{gpu}에서 커널 fusion",
    "the GPU": "GPU",
    "{:.2f}x": "{:.2f}배",
}
