"""Korean lines of what lab 4.7 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants and why one does not run, the plan
    "the block's bf16 tl.dot (lab 4.2's GEMMs, lab 4.6's attention) needs sm_80 or newer; this GPU is {arch}":
        "block의 bf16 tl.dot(랩 4.2의 GEMM, 랩 4.6의 attention)에는 sm_80 이상이 필요합니다. 이 GPU는 {arch}입니다",
    "without a GPU the block's attention is the Triton one already (the variant above)":
        "GPU가 없으면 block의 attention이 이미 Triton attention입니다(위의 variant)",
    "the same as the variant above here ({reason})": "여기서는 위의 variant와 같습니다 ({reason})",
    "{case}: attention (causal), {stages} stages": "{case}: attention (causal), stage {stages}개",
    "{label} (the other stages as the first variant's)": "{label} (나머지 stage는 첫 variant와 같음)",

    # explain: the stage plan and the predictions
    "the block at B{b} S{s} d{d} H{h} (bf16)": "B{b} S{s} d{d} H{h}의 block (bf16)",
    "stage": "stage",
    "GFLOP": "GFLOP",
    "MB": "MB",
    "what the lesson predicts for {gpu}": "{gpu}에 대한 레슨의 예측",
    "bf16 tensor cores": "bf16 tensor core 지원",
    "none on {arch}: the block's kernels need sm_80 or newer": "{arch}에는 없음: block의 커널에는 sm_80 이상이 필요합니다",
    "{label}: the block's floor (bf16 rate {peak:.0f} TFLOP/s, {gbps:.0f} GB/s)":
        "{label}: block의 하한 (bf16 처리율 {peak:.0f} TFLOP/s, {gbps:.0f} GB/s)",
    "{label}: share of the floor, GEMMs / attention / layernorms": "{label}: 하한에서 차지하는 몫, GEMM / attention / layernorm",
    "{label}: scaled to this GPU's memory": "{label}: 이 GPU의 메모리에 맞게 줄임",
    "\nThe block ran its Triton kernels (lab 3.4's layernorm, lab 4.2's fused GEMMs, lab 4.6's flash attention) in the "
    "interpreter at tiny sizes;\nthe torch peers, the stage breakdown and the timing need a GPU.":
        "\nblock은 Triton 커널(랩 3.4의 layernorm, 랩 4.2의 fused GEMM, 랩 4.6의 flash attention)을 interpreter에서 아주\n"
        "작은 크기로 실행했습니다. torch peer, stage별 분석, 시간 측정에는 GPU가 필요합니다.",

    # the benchmark (GPU)
    "block cases": "block 케이스",
    "  SDPA {backend}: unavailable ({error})": "  SDPA {backend}: 쓸 수 없음 ({error})",
    "  attention: {kernel}": "  attention: {kernel}",
    "lab 4.6 Hopper CUDA C forward (wgmma + TMA)": "랩 4.6의 Hopper CUDA C forward (wgmma + TMA)",
    "lab 4.6 Triton flash forward": "랩 4.6의 Triton flash forward",
    "  GEMM configs picked: {list}": "  고른 GEMM config: {list}",
    "  GEMM kernels picked: {list}": "  고른 GEMM 커널: {list}",
    "  torch.compile of the block took {secs:.1f} s (first call)": "  block의 torch.compile에 {secs:.1f}초 걸림 (첫 호출)",
    "  ours vs the eager module at this size: relative difference {rel:.2e}":
        "  이 크기에서 우리 block 대 eager module: 상대 차이 {rel:.2e}",
    "  ours with the wgmma GEMMs vs the eager module: relative difference {rel:.2e}":
        "  wgmma GEMM을 쓴 우리 block 대 eager module: 상대 차이 {rel:.2e}",
    "  (left out of the timing: {rel_w:.2e} is far from the Triton GEMMs' {rel:.2e})":
        "  (시간 측정에서 뺌: {rel_w:.2e}는 Triton GEMM의 {rel:.2e}와 너무 다릅니다)",
    "whole block forward, bf16 (interleaved rounds)": "block 전체 forward, bf16 (번갈아 재는 round)",
    "targets (ours: the faster of our blocks in the same rounds)": "목표 (ours: 같은 round에서 더 빠른 우리 block)",
    "our stages vs their floors (each stage timed alone; floor/time = how close to the roof)":
        "우리 stage 대 그 하한 (stage마다 따로 측정, 하한/시간 = roof에 얼마나 가까운가)",
    "floor_ms": "하한 ms",
    "frac_of_floor": "하한 대비",
    "floor": "하한",

    # the plot
    "ours,\nby stage": "우리 block,\nstage별",
    "floor,\nby stage": "하한,\nstage별",
    "ours\n(whole)": "우리 block\n(전체)",
    "ours,\nwgmma\nGEMMs": "우리 block,\nwgmma\nGEMM",
    "torch\neager": "torch\neager",
    "torch.\ncompile": "torch.\ncompile",
    "ms (lower is better)": "ms (낮을수록 좋음)",
    "({x:.2f}x ours)": "(우리 block의 {x:.2f}배)",
    "whole block: {name}": "block 전체: {name}",
    "stages (top of the stack first)": "stage (쌓인 순서의 위부터)",
    "Transformer block forward (bf16) on {gpu}: each stage against its floor, and the whole block against PyTorch":
        "{gpu}에서 Transformer block forward (bf16): stage마다 그 하한과, block 전체는 PyTorch와 비교",
    "GEMM stages: cuBLAS (torch.matmul) at the stage's M x N x K": "GEMM stage: 그 stage의 M x N x K에서 cuBLAS (torch.matmul)",
    "attention: the fastest torch SDPA backend, causal, same B H S D":
        "attention: 가장 빠른 torch SDPA backend, causal, 같은 B H S D",
    " ({backends} here)": " (여기서는 {backends})",
    "LayerNorms (memory-bound): their bytes at the measured HBM ceiling{hbm}":
        "LayerNorm (memory-bound): 그 바이트를 측정한 HBM 한계로 나눈 값{hbm}",
    "floor of a stage = the fastest that stage can run on this GPU: {parts}. The numbers inside our stages: floor / our "
    "time (1.00 = at the floor). Each stage is timed alone (a CUDA graph of 20 calls), the whole block in interleaved "
    "rounds.":
        "stage의 하한 = 이 GPU에서 그 stage가 낼 수 있는 가장 빠른 시간: {parts}. 우리 stage 안의 숫자: 하한 / 우리 시간 "
        "(1.00 = 하한에 도달). stage는 따로 측정하고(호출 20번의 CUDA graph), block 전체는 번갈아 재는 round로 "
        "측정합니다.",

    # the training step (backward.py, train_bench.py)
    "{label}: the training step's floor": "{label}: 학습 step의 하한",
    "{label}: share of the floor, GEMMs / attention / memory-bound":
        "{label}: 하한에서 차지하는 몫, GEMM / attention / 메모리 한계 pass",
    "  SDPA {backend} backward: unavailable ({error})": "  SDPA {backend} backward: 사용할 수 없음 ({error})",
    "  GEMM tiles tuned in {secs:.0f} s": "  GEMM 타일 튜닝에 {secs:.0f}초 걸림",
    "  torch.compile of the block's forward + backward took {secs:.1f} s (first call)":
        "  block의 forward + backward를 torch.compile하는 데 {secs:.1f}초 걸림 (첫 호출)",
    "  ours vs the eager module's autograd: largest relative difference {rel:.2e} ({name})":
        "  우리 학습 step 대 eager module의 autograd: 가장 큰 상대 차이 {rel:.2e} ({name})",
    "scaled down: the target is set for the full case": "줄인 크기: 목표는 원래 크기에 대해 정한 것입니다",
    "training step at B{b} S{s} d{d} H{h}": "B{b} S{s} d{d} H{h}의 학습 step",
    "training step: forward + backward, bf16 (steady interleaved rounds)":
        "학습 step: forward + backward, bf16 (안정된 교차 round)",
    "training-step targets": "학습 step의 목표",
    "our backward, stage by stage, vs each stage's floor (each stage timed alone)":
        "우리 backward의 stage별 시간 대 각 stage의 하한 (stage마다 따로 측정)",
    "lab 4.7's training step (forward + backward) against the same block in PyTorch, eager and torch.compile'd; "
    "without a GPU, the prediction":
        "랩 4.7의 학습 step(forward + backward)을 PyTorch로 쓴 같은 block(eager, torch.compile)과 비교합니다. GPU가 없으면 "
        "예측만 보여 줍니다",
    "the second case only, one round, GEMM tiles untuned": "두 번째 케이스만, round 한 번, GEMM tile은 튜닝하지 않음",
    "where the JSON goes (default: results/<gpu>/)": "JSON을 쓸 곳 (기본: results/<gpu>/)",
    "the attention backward: auto (default: lab 4.6's Hopper CUDA C backward at its default rung on an sm_90 GPU, "
    "else its Triton one), triton, or a rung of the Hopper backward (sm_90 only)":
        "attention backward: auto(기본: sm_90 GPU에서는 랩 4.6의 Hopper CUDA C backward의 기본 rung, 그 밖에서는 "
        "Triton backward), triton, 또는 Hopper backward의 rung 하나(sm_90 전용)",
}
