"""Korean lines of what lab 1.3 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "elements of the divergence benchmark (default {n}, quick 2^20)": "divergence benchmark의 원소 수 (기본값 {n}, quick "
    "2^20)",
    "hash rounds per element in the benchmark": "benchmark에서 원소 하나에 돌리는 hash round 수",

    # the warp rule
    "What hier_01_whoami records for blocks of {block} threads (computed: no GPU)":
        "{block} thread block에서 hier_01_whoami가 기록하는 값 (GPU가 없어 계산한 값)",
    "warp = (tx + ty * blockDim.x) // 32, lane = the same % 32: the first warp of a (16, 4) block is rows ty = 0 and "
    "1.\nOn a GPU the lab also records %smid and %globaltimer, draws the block -> SM timeline, and times the two "
    "branches (predicted: divergent = 2.0x uniform).":
        "warp = (tx + ty * blockDim.x) // 32, lane = 같은 값 % 32: (16, 4) block의 첫 warp는 ty = 0과 1인 두 행입니다.\n"
        "GPU에서는 %smid와 %globaltimer도 기록하고, block -> SM timeline을 그리고, 두 branch의 시간을 잽니다"
        "(예측: divergent = uniform의 2.0배).",
    "hier_01_whoami, {blocks} blocks of {block} threads (selected rows)":
        "hier_01_whoami, {block} thread block {blocks}개 (일부 행)",
    "%laneid and the formula (tx + ty * bx) % 32 agree for all {n} threads: {ok}":
        "thread {n}개 모두에서 %laneid와 공식 (tx + ty * bx) % 32가 일치: {ok}",
    "? (GPU only)": "? (GPU에서만)",
    "sm": "SM",

    # the compile report
    "-> div_01 has {n} BSSY/BSYNC instructions: the compiler marks where the two sides of the branch re-converge, "
    "because lanes of one warp may take different sides. The even and odd hash loops are two separate loops in the "
    "SASS (multipliers 0x7feb352d and 0x846ca68b): a divergent warp runs both.":
        "-> div_01에는 BSSY/BSYNC 명령어가 {n}개 있습니다. 한 warp의 lane들이 branch의 서로 다른 쪽으로 갈 수 있어서, "
        "컴파일러가 두 쪽이 다시 합쳐지는 지점을 표시합니다. 짝수 hash loop와 홀수 hash loop는 SASS에서 서로 다른 "
        "loop 두 개입니다(곱하는 상수 0x7feb352d와 0x846ca68b). divergent warp는 둘 다 실행합니다.",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # the plan and the predictions
    "n = {n} int32, {rounds} rounds": "n = {n} int32, {rounds} round",
    "the timeline: {waves} waves of {blocks} blocks": "timeline: block {blocks}개씩 wave {waves}개",
    "the mapping: {blocks} blocks of {block}": "mapping: {block} block {blocks}개",
    "uniform (div_02) at n = {n}, {rounds} rounds": "n = {n}, {rounds} round에서 uniform (div_02)",
    "divergent (div_01) = (f + g) / max(f, g) x uniform": "divergent (div_01) = (f + g) / max(f, g) x uniform",
    "{ms:.3f} ms (ratio 2.0)": "{ms:.3f} ms (비율 2.0)",
    "the bytes alone (8 n B / {gbps:.0f} GB/s)": "바이트만 옮기는 시간 (8 n B / {gbps:.0f} GB/s)",
    "{ms:.4f} ms: the hash takes {x:.0f}x longer": "{ms:.4f} ms: hash가 {x:.0f}배 더 오래 걸립니다",
    "timeline: resident 256-thread blocks per SM (calculator)": "timeline: SM당 상주하는 256-thread block (계산기)",
    "timeline: {waves} waves of {blocks} blocks": "timeline: block {blocks}개씩 wave {waves}개",
    "{blocks} blocks in {waves} waves: {us:.0f} us at {per:.0f} us a block":
        "block {blocks}개를 wave {waves}개로: block 하나에 {per:.0f} us이면 {us:.0f} us",

    # the benchmark (GPU)
    "Blocks on SMs over time": "시간에 따라 SM에 놓인 block",
    "quantity": "항목",
    "blocks": "block",
    "SMs used": "사용한 SM",
    "SMs on the GPU": "GPU의 SM",
    "most blocks on one SM at once": "한 SM에 동시에 놓인 최대 block",
    "resident blocks/SM predicted (lab 1.5)": "예측한 SM당 상주 block (lab 1.5)",
    "waves seen": "관찰한 wave",
    "waves predicted": "예측한 wave",
    "kernel span us": "커널 실행 구간 us",
    "span predicted us": "예측한 실행 구간 us",
    "globaltimer step ns": "globaltimer 간격 ns",
    "Warp divergence: n = {n}, {rounds} rounds (interleaved rounds)":
        "Warp divergence: n = {n}, {rounds} round (번갈아 잰 round)",
    "predicted_ms": "예측 ms",
    "vs_uniform": "uniform 대비",
    "Prediction vs measurement": "예측과 측정",
    "predicted": "예측",
    "measured": "측정",
    "divergent / uniform time = (f + g) / max(f, g)": "divergent / uniform 시간 = (f + g) / max(f, g)",

    # the plots
    "which SM each block ran on (first {n} blocks)": "block마다 실행된 SM (처음 {n}개 block)",
    "time since the first block started (us, %globaltimer)": "첫 block이 시작한 뒤의 시간 (us, %globaltimer)",
    "SM (%smid); one line per resident block": "SM (%smid), 상주 block마다 선 하나",
    "{blocks} blocks of {threads} threads, each spinning {us:.0f} us: {per_wave} fit at once ({per_sm}/SM)":
        "{threads} thread block {blocks}개가 각각 {us:.0f} us 동안 대기: 한 번에 {per_wave}개가 들어감 (SM당 {per_sm}개)",
    "{gpu}: blocks dealt to SMs in waves (color = blockIdx)": "{gpu}: wave 단위로 SM에 나누어진 block (색 = blockIdx)",
    "ms (median)": "ms (중앙값)",
    "Warp divergence on {gpu}: n = {n}, same work": "{gpu}의 warp divergence: n = {n}, 같은 일",
    "predicted uniform": "예측한 uniform",
    "predicted divergent": "예측한 divergent",
    "(the timeline plot needs the per-block record, which this JSON predates: {name}_timeline.png is redrawn after "
    "the next GPU run)":
        "(timeline plot에는 block별 기록이 필요한데, 이 JSON은 그 기록을 남기기 전에 만들어졌습니다. "
        "{name}_timeline.png는 다음 GPU 실행 뒤에 다시 그려집니다)",

    # --set values the kernels cannot take
    "triton both_hashes_kernel: BLOCK a power of two in 32..65536, num_warps in 1, 2, 4, 8, 16, 32; got {got}":
        "triton both_hashes_kernel: BLOCK은 32..65536 범위의 2의 거듭제곱, num_warps는 1, 2, 4, 8, 16, 32 중 하나여야 합니다. 받은 값: "
        "{got}",
}
