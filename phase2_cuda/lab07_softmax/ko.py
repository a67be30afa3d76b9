"""Korean lines of what lab 2.7 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "(GPU) sweep rung 05's EPT and cache hints at 4096 columns":
        "(GPU) 4096열에서 rung 05의 EPT와 cache hint를 sweep합니다",
    "(GPU) also torch.compile the 4096 x 32768 case (one more 20-60 s compilation)":
        "(GPU) 4096 x 32768 케이스도 torch.compile합니다 (컴파일이 한 번 더, 20-60초)",

    # the dispatch, on every machine
    "rung 05's dispatch by row length on {gpu} (R = 32768 rows up to 4096 columns, else 4096; EPT = {ept}, {sms} SMs "
    "for rung 06's split)":
        "{gpu}에서 행 길이별 rung 05의 커널 선택 (4096열까지는 R = 32768행, 그보다 길면 4096행. EPT = {ept}, rung 06의 "
        "분할에는 SM {sms}개)",
    "cols": "열 수",
    "16-byte loads": "16바이트 load",
    "launch": "launch",
    "HBM reads": "HBM 읽기 횟수",
    "06 online split": "06 online, 행 분할",
    "{grid} blocks x {block} ({chunks} per row)": "block {grid}개 x {block} (행마다 {chunks}개)",
    "{grid} blocks x {block}": "block {grid}개 x {block}",
    "2 (1 if in L2)": "2 (L2에 있으면 1)",
    "predictions for {gpu} (python -m {lab} --plan lists every launch)":
        "{gpu}에 대한 예측 (python -m {lab} --plan이 모든 launch를 보여 줍니다)",

    # predictions (--plan)
    "floor at {r} x {c} {dt} (2 s R C bytes / {bw:.0f} GB/s)": "{r} x {c} {dt}에서 시간의 하한 (2 s R C 바이트 / {bw:.0f} GB/s)",
    "{ridge:.1f} FLOP/B: fp32 softmax's 5 FLOP per 8 bytes is {x:.0f}x below":
        "{ridge:.1f} FLOP/B: fp32 softmax의 8바이트당 5 FLOP는 그보다 {x:.0f}배 낮음",
    "bytes in flight per SM that Little's law asks (bandwidth x ~1 us / SMs)":
        "Little's law가 요구하는 SM당 in flight 바이트 (대역폭 x 약 1 us / SM 수)",
    "rung 05 at 4096 {dt} columns: bytes in flight per SM": "4096열 {dt}에서 rung 05: SM당 in flight 바이트",
    "{blocks} blocks of {threads} threads x {regs} registers, {kib} KiB each: {flight} KiB ({x:.1f}x Little's law)":
        "{threads}-thread block {blocks}개 x register {regs}개, block마다 {kib} KiB: {flight} KiB (Little's law의 "
        "{x:.1f}배)",
    "rung 02: the longest fp32 row staged in shared memory": "rung 02: shared memory에 올릴 수 있는 가장 긴 fp32 행",
    "{cols:,} columns ({kib:.0f} KiB a block); longer rows stage in the output row":
        "{cols:,}열 (block마다 {kib:.0f} KiB). 더 긴 행은 출력 행을 임시 저장소로 씁니다",
    "rung 06 at {rows} x {cols} fp32 ({sms} SMs)": "{rows} x {cols} fp32에서 rung 06 (SM {sms}개)",
    "{grid:,} blocks, {chunks} per row of {chunk:,} columns": "block {grid:,}개, 행마다 {chunk:,}열짜리 {chunks}개",
    "rungs 04 and 06 reread from L2 a matrix up to": "rung 04와 06이 L2에서 다시 읽을 수 있는 행렬의 최대 크기",
    "~{mib:.0f} MiB (the L2)": "약 {mib:.0f} MiB (L2 크기)",

    # the compile report
    "-> softmax_05_block_row_f32 at 4096 fp32 columns (EPT = {ept}): {threads} threads x {regs} registers -> "
    "{blocks} blocks per SM on {arch} (by registers), each with 16 KiB of loads issued before the first use: ~{kib} "
    "KiB in flight per SM.":
        "-> 4096열 fp32에서 softmax_05_block_row_f32 (EPT = {ept}): thread {threads}개 x register {regs}개 -> {arch}에서 "
        "SM당 block {blocks}개 (register 기준). block마다 첫 사용 전에 load 16 KiB를 내므로 SM당 약 {kib} KiB가 "
        "in flight 상태입니다.",
    "-> its SASS: {ldg} x LDG.E.128 ({before} of them before the first FMNMX: all in flight at once), {bar} "
    "barriers, {shfl} SHFL, {mufu} MUFU (ex2), {stg} x STG.E.128.":
        "-> SASS: LDG.E.128 {ldg}개 (그중 {before}개가 첫 FMNMX 전에 있어 한꺼번에 in flight), barrier {bar}개, "
        "SHFL {shfl}개, MUFU {mufu}개 (ex2), STG.E.128 {stg}개.",
    "-> the full table (every dtype and the *_scalar fallbacks) is what tests/test_kernels_compile.py checks: zero "
    "spills on sm_75, sm_80, sm_90.":
        "-> 전체 표(모든 dtype과 대신 쓰는 *_scalar 경로)는 tests/test_kernels_compile.py가 검사합니다: sm_75, sm_80, "
        "sm_90에서 spill 0.",
    "\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter.":
        "\nGPU가 없어 CUDA C variant는 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # the variants' notes
    "rows > 32768 (16384 unaligned) go to 06": "32768보다 긴 행(정렬되지 않았으면 16384)은 06이 맡음",

    # the benchmark (GPU)
    "torch.compile unavailable: {error}": "torch.compile을 쓸 수 없습니다: {error}",
    "ladder {shape} {dtype}": "ladder 측정 {shape} {dtype}",
    "row lengths": "행 길이",
    "row-length sweep (fp32)": "행 길이 sweep (fp32)",
    "the ladder (L2 flushed; measured ceiling {hbm:.0f} GB/s)": "ladder (L2 flush, 측정한 한계 {hbm:.0f} GB/s)",
    "vs_eager": "eager 대비",
    "vs_compile": "compile 대비",
    "vs_peer": "비교 대상 대비",
    "rounds_run": "실행한 round",
    "steady": "안정",
    "peer not measured": "비교 대상을 재지 못함",

    # --tune (GPU)
    "tuning cases": "tuning 케이스",
    "check failed: {why}": "검증 실패: {why}",
    "vs compile": "compile 대비",
    "--tune: no combination passed its check; nothing recorded":
        "--tune: 검증을 통과한 조합이 없어 아무것도 기록하지 않았습니다",
    "rung 05 knobs: every combination failed its check": "rung 05 설정값: 모든 조합이 검증에 실패했습니다",
    "winner: EPT={ept} STREAM_HINTS={hints} (recorded; the next run's rung 05 uses it)":
        "선택: EPT={ept} STREAM_HINTS={hints} (기록했습니다. 다음 실행의 rung 05가 이 값을 씁니다)",
    "winner": "선택",
    "rung 05 knobs (interleaved rounds; winner: least total time)":
        "rung 05 설정값 (번갈아 잰 round. 선택 기준: 총 시간이 가장 짧음)",

    # the plots
    "GB/s (input read + output written once)": "GB/s (입력 한 번 읽기 + 출력 한 번 쓰기)",
    "Softmax {rows} x {cols} {dtype} on {gpu}": "{gpu}의 softmax {rows} x {cols} {dtype}",
    "CUDA C (ours: the ladder's rungs)": "CUDA C (우리 커널: ladder의 rung)",
    "Triton (ours)": "Triton (우리 커널)",
    "peer (torch, or phase 3's kernel)": "peer (torch, 또는 phase 3의 커널)",
    "row length (fp32 columns; 2^25 elements in all)": "행 길이 (fp32 열 수, 전체 원소 2^25개)",
    "GB/s (read + write once)": "GB/s (한 번 읽기 + 한 번 쓰기)",
    "Softmax: which design wins at which row length ({gpu})": "Softmax: 행 길이마다 이기는 설계 ({gpu})",
    "32 x EPT (warp in registers)": "32 x EPT (warp 하나가 register에 담는 행)",
    "1024 x EPT (block in registers)": "1024 x EPT (block 하나가 register에 담는 행)",

    # --set values the kernels cannot take
    "EPT a multiple of 8 from 8 to 64 (one 16-byte vector of a 16-bit type per 8)":
        "EPT는 8부터 64까지의 8의 배수여야 합니다(8마다 16-bit 타입의 16바이트 vector 하나)",
    "WARP_ROWS from 1 to 32 (blocks of 32 x WARP_ROWS threads)":
        "WARP_ROWS는 1부터 32까지여야 합니다(block은 32 x WARP_ROWS thread)",
    "ONLINE_UNROLL from 1 to 16":
        "ONLINE_UNROLL은 1부터 16까지여야 합니다",
    "STREAM_HINTS 0, 1 or 2":
        "STREAM_HINTS는 0, 1, 2 중 하나여야 합니다",
    "SM_THREADS a power of two from 32 to 1024 (the shared-memory trees)":
        "SM_THREADS는 32부터 1024까지의 2의 거듭제곱이어야 합니다(shared memory tree)",
    "{name} a multiple of 32 from 32 to 1024":
        "{name}은 32부터 1024까지의 32의 배수여야 합니다",
    "{family}: {bad}; got {got}":
        "{family}: {bad}. 받은 값: {got}",
}
