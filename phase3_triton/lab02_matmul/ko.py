"""Korean lines of what lab 3.2 prints: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants and why one does not run
    "fp32 = input_precision 'ieee'": "fp32 = input_precision 'ieee'",
    "sm_90+; K, N multiples of 8": "sm_90+, K와 N은 8의 배수",
    "fp32 storage, input_precision 'tf32'": "fp32로 저장, input_precision 'tf32'",
    "needs sm_90 or newer (TMA tensor descriptors), this GPU is {arch}":
        "sm_90 이상이 필요합니다(TMA tensor descriptor). 이 GPU는 {arch}입니다",
    "its tiles need ~{need} KiB of shared memory per block, this GPU's blocks get {have} KiB":
        "이 커널의 tile에는 block당 shared memory ~{need} KiB가 필요한데, 이 GPU의 block은 {have} KiB를 받습니다",
    "TMA needs row strides of 16 bytes: K and N multiples of 8":
        "TMA에는 16바이트 단위의 row stride가 필요합니다: K와 N이 8의 배수여야 합니다",

    # configurations and the plan
    "triton.autotune: none of the {n} configs fits {kib} KiB a block; the fixed config":
        "triton.autotune: config {n}개 중 block당 {kib} KiB에 맞는 것이 없어 고정 config를 씁니다",
    "triton.autotune over {fit} of {n} configs (those fitting {kib} KiB)":
        "config {n}개 중 {fit}개(block당 {kib} KiB에 맞는 것)에 대한 triton.autotune",
    "interpreter config": "interpreter용 config",
    "{case}: the grid kernel timed beside it": "{case}: 함께 시간을 재는 grid 커널",
    "{dtype} {shape} (under TUNE_MIN: the fixed config)": "{dtype} {shape} (TUNE_MIN 미만: 고정 config)",

    # explain: the predictions and the program-order model
    "What the lesson predicts for {gpu}": "{gpu}에 대한 레슨의 예측",
    "bf16 {n}^3: {ai:.0f} FLOP/B against the {unit} ridge point ({tflops:g} TFLOP/s over {gbps:.0f} GB/s)":
        "bf16 {n}^3: {ai:.0f} FLOP/B 대 {unit} ridge point ({tflops:g} TFLOP/s / {gbps:.0f} GB/s)",
    "{ridge:.0f} FLOP/B: compute-bound by {times:.1f}x": "{ridge:.0f} FLOP/B: {times:.1f}배 차이로 compute-bound",
    "bf16 {n}^3 floors: math at {tflops:g} TFLOP/s, {mb:.1f} MB once at {gbps:.0f} GB/s":
        "bf16 {n}^3의 하한: {tflops:g} TFLOP/s로 계산, {gbps:.0f} GB/s로 {mb:.1f} MB 한 번 이동",
    "fp32 'ieee' ridge point (CUDA cores)": "fp32 'ieee'의 ridge point (CUDA core)",
    "128 x 256 tiles at {n}^2 over {sms} SMs": "{n}^2에서 SM {sms}개에 나누는 128 x 256 tile",
    "{tiles} tiles = {waves:.2f} waves": "tile {tiles}개 = wave {waves:.2f}개",
    "GROUP_M=8 against row-major at {n}^3 (modelled DRAM traffic, waves of {sms})":
        "{n}^3에서 row-major 대비 GROUP_M=8 (모델의 DRAM traffic, wave당 program {sms}개)",
    "autotuning space, {what}": "autotuning 공간, {what}",
    "persistent TMA kernel": "persistent TMA 커널",
    "runs: {programs} programs at {n}^3 (one per SM)": "실행함: {n}^3에서 program {programs}개 (SM마다 하나)",
    "does not run: {why}": "실행하지 않음: {why}",
    "Tiles each program order reads from DRAM, bf16 {n}^3, 128x256x64 tiles, waves of {wave} programs (model: a wave "
    "shares tiles through L2, waves share nothing)":
        "program 순서별로 DRAM에서 읽는 tile, bf16 {n}^3, 128x256x64 tile, wave당 program {wave}개 (모델: 한 wave "
        "안에서는 L2로 tile을 나누고, wave끼리는 아무것도 나누지 않음)",
    "order": '더하는 순서',
    "A tiles": "A tile 수",
    "B tiles": "B tile 수",
    "DRAM MiB (model)": "DRAM MiB (모델)",
    "x minimum": "최소 대비 배수",
    "(no sharing at all: each program reads its own)": "(공유 전혀 없음: program마다 자기 tile을 읽음)",
    "a row-major wave of {wave} programs already spans every one of the {grid_n} B column-panels and reuses each of "
    "them ~{reuse:.0f}x, so there is little left to gain":
        "program {wave}개짜리 row-major wave가 이미 B의 column panel {grid_n}개를 모두 덮고 각각을 ~{reuse:.0f}번 다시 "
        "쓰므로, 더 얻을 것이 거의 없습니다",
    "a row-major wave needs all {grid_n} B column-panels, a GROUP_M=8 wave about half of them":
        "row-major wave는 B의 column panel {grid_n}개가 모두 필요하고, GROUP_M=8 wave는 그 절반 정도만 필요합니다",
    "GROUP_M=8 changes the modelled DRAM traffic by {change:+.0%} at {n}^3 ({why}).":
        "{n}^3에서 GROUP_M=8은 모델의 DRAM traffic을 {change:+.0%} 바꿉니다 ({why}).",
    "Even row-major traffic ({mib:.0f} MiB, ~{ms:.2f} ms at {tbps:.2f} TB/s) is under the math time (~{math_ms:.2f} "
    "ms at {tflops:g} TFLOP/s, the datasheet's dense {unit}), so the measured difference should be small, a few "
    "percent at most.":
        "row-major의 traffic({mib:.0f} MiB, {tbps:.2f} TB/s에서 ~{ms:.2f} ms)도 계산 시간(datasheet의 dense {unit} "
        "{tflops:g} TFLOP/s에서 ~{math_ms:.2f} ms)보다 짧습니다. 그래서 측정한 차이는 작아야 합니다. 많아야 몇 % "
        "정도입니다.",
    "The row-major traffic ({mib:.0f} MiB, ~{ms:.2f} ms at {tbps:.2f} TB/s) is over the math time (~{math_ms:.2f} ms "
    "at {tflops:g} TFLOP/s, the datasheet's dense {unit}), so grouping should show in the time here.":
        "row-major의 traffic({mib:.0f} MiB, {tbps:.2f} TB/s에서 ~{ms:.2f} ms)이 계산 시간(datasheet의 dense {unit} "
        "{tflops:g} TFLOP/s에서 ~{math_ms:.2f} ms)보다 깁니다. 그래서 여기서는 grouping의 효과가 시간에 드러나야 "
        "합니다.",

    # the compile report
    "matmul_kernel compiled ahead of time for {arch}: what num_stages, the dtype and input_precision turn into":
        "{arch}용으로 ahead-of-time 컴파일한 matmul_kernel: num_stages, dtype, input_precision이 만드는 코드",
    "study point: no variant launches this build": "비교용 지점: 이 build를 launch하는 variant는 없습니다",
    "fits {kib} KiB": "{kib} KiB에 맞음",
    "global loads": "global load 수와 폭",
    "{n} x UTMALDG (TMA tile copies)": "{n} x UTMALDG (TMA tile 복사)",
    "  one stage of A + B tiles = ({bm} + {bn}) x {bk} x 2 B = {kib} KiB: shared memory grows by that per stage; "
    "with 1 stage the loads go straight to registers (no cp.async ring). 'ieee' runs on FFMA (CUDA cores), 'tf32' on "
    "the tensor cores.":
        "  A + B tile의 stage 하나 = ({bm} + {bn}) x {bk} x 2 B = {kib} KiB: stage마다 shared memory가 이만큼 "
        "늘어납니다. stage가 1이면 load가 곧바로 register로 갑니다(cp.async ring 없음). 'ieee'는 FFMA(CUDA core)에서, "
        "'tf32'는 tensor core에서 돕니다.",
    "  A block of {gpu} may use {kib} KiB; its 16-bit autotuning: {source}.":
        "  {gpu}의 block은 {kib} KiB까지 쓸 수 있습니다. 이 GPU의 16비트 autotuning: {source}.",

    # the benchmark (GPU)
    "target shapes": "목표 shape",
    "small sizes": "작은 크기",
    "irregular shapes ({dtype})": "불규칙한 shape ({dtype})",
    "Targets: Triton vs cuBLAS, interleaved rounds (grid_per_tile_ratio: the autotuned grid-per-tile kernel in the "
    "same rounds)":
        "목표: Triton 대 cuBLAS, 번갈아 재는 round (grid_per_tile_ratio: 같은 round에서 잰 autotuning한 grid-per-tile "
        "커널)",
    "Sizes <= 2048, bf16 (reported separately: few tiles per SM, and launch and tail effects weigh more)":
        "2048 이하 크기, bf16 (따로 보고합니다: SM당 tile이 적어 launch와 tail의 영향이 큽니다)",
    "fp32 at 4096^3: 'float32' = input_precision ieee vs cuBLAS SGEMM (TF32 off) and phase 2's CUDA C; 'tf32' vs "
    "cuBLAS with TF32 on":
        "4096^3의 fp32: 'float32'는 input_precision ieee를 cuBLAS SGEMM(TF32 끔), phase 2의 CUDA C와 비교합니다. "
        "'tf32'는 TF32를 켠 cuBLAS와 비교합니다",
    "Irregular and skinny shapes (bf16; checked on sampled rows; a ratio, no target)":
        "불규칙하고 가는 shape (bf16, 표본 행으로 검증, 비율만 있고 목표는 없음)",
    "The autotuner's timings at bf16 4096^3 (best first)": "bf16 4096^3에서 autotuner가 잰 시간 (빠른 순)",
    "Program order measured at 8192^3 bf16 (same tile config)": "8192^3 bf16에서 측정한 program 순서 (같은 tile config)",
    "Performance targets": "성능 목표",
    "a benchmarked result failed its sampled check (see the 'check' column)":
        "benchmark한 결과 하나가 표본 검증에 실패했습니다 ('check' 열을 보십시오)",
    "case": "케이스",
    "peer": "peer",
    "ratio": "비율",
    "target": "목표",
    "met": "달성",
    "steady": "안정",
    "rounds_run": "실행한 round",
    "grid per tile vs cuBLAS": "grid per tile의 cuBLAS 대비",
    "config": "설정",
    "check": '검사',
    "model DRAM MiB": "모델 DRAM MiB",
    "winner": '선택',

    # --tune
    "(GPU, sm_90+) sweep the persistent TMA kernel's configs at 4096^3 and 8192^3 bf16 and record this GPU's winners":
        "(GPU, sm_90+) 4096^3과 8192^3 bf16에서 persistent TMA 커널의 config를 훑어 이 GPU에서 가장 빠른 것을 "
        "기록합니다",
    "--tune: the TMA kernel cannot run here: {why}": "--tune: 여기서는 TMA 커널을 실행할 수 없습니다: {why}",
    "{n}^3 configs (checked)": "{n}^3 config (검증 포함)",
    "--tune: no configuration passed its check; nothing recorded":
        "--tune: 검증을 통과한 설정이 없습니다. 아무것도 기록하지 않았습니다",
    "winners: {list} (recorded; used from now on)": "가장 빠른 설정: {list} (기록했고, 이제부터 씁니다)",
    "Tuning the persistent TMA kernel (bf16; interleaved rounds with cuBLAS)":
        "persistent TMA 커널 tuning (bf16, cuBLAS와 번갈아 재는 round)",

    # the plot
    "TFLOP/s": "TFLOP/s",
    "datasheet dense bf16 {peak} TFLOP/s": "datasheet의 dense bf16 {peak} TFLOP/s",
    "triton bf16 (autotuned)": "triton bf16 (autotuning)",
    "cuBLAS bf16 (torch.matmul)": "cuBLAS bf16 (torch.matmul)",
    "Triton matmul vs cuBLAS on {gpu} (bf16 in, fp32 accumulate)":
        "{gpu}에서 Triton matmul 대 cuBLAS (bf16 입력, fp32 누적)",
    "\nThe kernel ran in the interpreter on small ragged shapes (tl.dot ignores input_precision there, and bf16 tiles "
    "are\nconverted to fp32 first: Triton 3.9's interpreter mishandles bf16 in tl.dot). Autotuning, cuBLAS and timing "
    "need a GPU.":
        "\n커널은 interpreter에서 tile에 맞지 않는 작은 shape로 실행했습니다 (거기서 tl.dot은 input_precision을 무시하고,\n"
        "bf16 tile은 먼저 fp32로 바꿉니다. Triton 3.9의 interpreter가 tl.dot에서 bf16을 잘못 다루기 때문입니다). "
        "autotuning, cuBLAS, 시간 측정에는 GPU가 필요합니다.",
}
