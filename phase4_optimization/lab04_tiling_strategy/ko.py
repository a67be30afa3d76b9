"""Korean lines of what lab 4.4 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants
    "the interpreter runs 16x32x16 tiles": "interpreter는 16x32x16 tile로 실행합니다",
    "3 stages, or as many as fit this GPU's shared memory (triton_large); the interpreter runs 32x64x32 tiles":
        "stage 3개, 또는 이 GPU의 shared memory에 들어가는 만큼 (triton_large). interpreter는 32x64x32 tile로 "
        "실행합니다",

    # explain and predict
    "the models, before any timing ({gpu}: {sms} SMs, one block per SM)":
        "시간을 재기 전의 모델 ({gpu}: SM {sms}개, SM당 block 하나)",
    "FLOP/B loaded": "load한 바이트당 FLOP",
    "tiles at 4096^2": "4096^2의 tile 수",
    "waves (1 block/SM)": "wave (SM당 block 1개)",
    "eff at 4096": "4096에서 효율",
    "eff at 4224": "4224에서 효율",
    "{ridge:.0f} FLOP/B; a tile gets 32 (64x64) to 128 (256x256) per byte it loads, so L2 reuse decides":
        "{ridge:.0f} FLOP/B. tile은 load하는 바이트당 32 (64x64)에서 128 (256x256)을 얻으므로 L2 재사용이 결정합니다",
    "128x256 tiles at M = N = {n}, one block per SM": "M = N = {n}에서 128x256 tile, SM당 block 하나",
    "{tiles} tiles = {waves:.2f} waves of {sms}: predicted efficiency {eff:.0%}":
        "tile {tiles}개 = {sms}개짜리 wave {waves:.2f}개: 예측 효율 {eff:.0%}",
    "mma.sync {bm}x{bn}x{bk}, {stages} stages": "mma.sync {bm}x{bn}x{bk}, stage {stages}개",
    "{regs} registers, {blocks} block(s) per SM ({limiters}): {waves:.2f} waves at {n}^3, efficiency {eff:.0%}":
        "register {regs}개, SM당 block {blocks}개 ({limiters}): {n}^3에서 wave {waves:.2f}개, 효율 {eff:.0%}",
    "sweep cells that fit this GPU": "이 GPU에 맞는 sweep 칸",
    "Triton {triton}, mma.sync {mma} (of {triton_all} and {mma_all})":
        "Triton {triton}개, mma.sync {mma}개 (전체 {triton_all}개와 {mma_all}개 중)",
    "sweeps": "sweep",
    "none on {arch}: both GEMMs need bf16 tensor cores (sm_80 or later)":
        "{arch}에는 없음: 두 GEMM 모두 bf16 tensor core가 필요합니다(sm_80 이상)",

    # the compile table
    "compiling {n} mma.sync tile shapes for {arch}": "{arch}용 mma.sync tile shape {n}개 컴파일",
    "mma.sync tile shapes compiled for {arch} (NVRTC; occupancy from the calculator; waves on {gpu}'s {sms} SMs)":
        "{arch}용으로 컴파일한 mma.sync tile shape (NVRTC, occupancy는 계산기로, wave는 {gpu}의 SM {sms}개 기준)",
    "study point of the sweep: no variant launches this tile shape":
        "sweep의 비교용 지점: 이 tile shape를 launch하는 variant는 없습니다",
    "smem KiB": "smem KiB",
    "blocks/SM": "SM당 block",
    "limited by": "제한 요인",
    "waves at 4096": "4096에서 wave",
    "mma.sync tile shapes: not compiled for {arch}: lab 4.3's kernels need bf16 mma.sync, ldmatrix and cp.async "
    "(sm_80 or later)":
        "mma.sync tile shape: {arch}용으로 컴파일하지 않음: 랩 4.3의 커널에는 bf16 mma.sync, ldmatrix, cp.async가 "
        "필요합니다(sm_80 이상)",
    "\nSweeps need a GPU: each cell is a compiled kernel timed at 4096^3; the models and the compile table above are "
    "what to expect.":
        "\nsweep에는 GPU가 필요합니다: 칸마다 4096^3에서 시간을 재는 컴파일된 커널입니다. 위의 모델과 컴파일 표가 "
        "예상할 결과입니다.",

    # the sweeps (GPU)
    "{kind} configs": "{kind} config",
    "wave sizes": "wave 크기",
    "  (blocks per SM from the shared-memory estimate, {est}: {error})":
        "  (SM당 block 수는 shared memory로 추정한 값 {est}: {error})",
    "{kind} sweep at {n}^3 bf16, fastest first": "{n}^3 bf16에서 {kind} sweep, 빠른 순",
    "  {n} {kind} configs failed or were wrong: {first}": "  {kind} config {n}개가 실패했거나 틀렸습니다: {first}",
    "wave quantization": "wave 양자화",
    "first_call_s": "첫 호출 초",
    "predicted_eff": "예측 효율",
    "measured_eff": "측정 효율",

    # the plots
    "does not fit": "맞지 않음",
    "BN (tile columns)": "BN (tile 열 수)",
    "BM (tile rows)": "BM (tile 행 수)",
    "measured TFLOP/s / best": "측정 TFLOP/s / 최고값",
    "predicted: tiles / (waves x slots)": "예측: tile 수 / (wave 수 x slot 수)",
    "efficiency": "효율",
    "Wave quantization (numbers: waves of tiles per SM slot)": "wave 양자화 (숫자: SM slot당 tile wave 수)",
}
