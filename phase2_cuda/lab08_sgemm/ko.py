"""Korean lines of what lab 2.8 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "benchmark this one square size instead of the sweep 1024..8192":
        "1024..8192 sweep 대신 이 정사각 크기 하나만 benchmark합니다",
    "(GPU) autotune rung 11's tile configuration at 4096^3 and record the winner in results/<gpu>/{name}.json (~60 "
    "s); the next run measures rung 11 with it":
        "(GPU) 4096^3에서 rung 11의 tile 설정을 autotune하고 가장 빠른 설정을 results/<gpu>/{name}.json에 기록합니다 "
        "(약 60초). 다음 실행은 그 설정으로 rung 11을 잽니다",

    # rung 11's configuration, on every machine
    "rung 11 would use {cfg} on {gpu} [{src}]": "{gpu}에서 rung 11이 쓸 설정: {cfg} [{src}]",
    " - but {why}": ". 다만 {why}",
    "rung 11 uses {cfg} [{src}]": "rung 11이 쓰는 설정: {cfg} [{src}]",
    "CuPy float32 matmul compute type: {kind} (CUPY_TF32={env})": "CuPy float32 matmul의 compute type: {kind} "
    "(CUPY_TF32={env})",
    "unset": "설정 안 됨",
    "sgemm_10_cp_async needs cp.async (sm_80 or later); this GPU is {arch}":
        "sgemm_10_cp_async에는 cp.async(sm_80 이상)가 필요합니다. 이 GPU는 {arch}입니다",

    # the compile report
    "What the compiler made of each rung (NVRTC {version}, {arch}; smem = static + dynamic bytes per block; occupancy "
    "from the allocation rules)":
        "rung마다 컴파일러가 만든 결과 (NVRTC {version}, {arch}. smem = block당 static + dynamic 바이트, occupancy는 "
        "할당 규칙으로 계산)",
    "rung": "rung",
    "spills": "spill",
    "warps/SM": "SM당 warp",
    "limit": "제한 요인",
    "tile FLOP/B": "tile FLOP/B",
    "FMA/smem word": "smem word당 FMA",
    "needs sm_80+ (cp.async); not compiled for {arch}": "sm_80 이상이 필요합니다(cp.async). {arch}용으로는 컴파일하지 않았습니다",
    "  Read it as: FFMA per LDS is the register blocking at work (rungs 03-05: ptxas already merged loads that\n"
    "  are contiguous in k into LDS.128); LDG.128 appears from rung 06 (the float4 path, its scalar fallback\n"
    "  beside it); LDGSTS is cp.async (rungs 10-11). Counts are static instructions of the whole kernel, not\n"
    "  per k-step; never-executed '@!PT LDS' slots that ptxas puts after cp.async are left out.":
        "  읽는 법: LDS당 FFMA 수가 register blocking의 효과입니다(rung 03-05: ptxas가 k 방향으로 연속인 load를 이미\n"
        "  LDS.128로 합쳤습니다). LDG.128은 rung 06부터 나옵니다(float4 경로, 그 옆에 대신 쓰는 scalar 경로).\n"
        "  LDGSTS는 cp.async입니다(rung 10-11). 수는 k 단계당이 아니라 커널 전체의 정적 명령어 수입니다. ptxas가\n"
        "  cp.async 뒤에 넣는, 실행되지 않는 '@!PT LDS' 자리는 뺐습니다.",
    "\nCUDA C rungs were compiled, not run (no GPU); the Triton kernel ran in the interpreter. Nothing was timed.":
        "\nGPU가 없어 CUDA C rung은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다. "
        "시간을 잰 것은 없습니다.",

    # the variants' notes
    "sm_80+: cp.async; default tile configuration": "sm_80 이상: cp.async, 기본 tile 설정",
    "rung 10's kernel with the tile configuration --tune recorded for this GPU":
        "rung 10의 커널에 --tune이 이 GPU용으로 기록한 tile 설정을 씀",

    # predictions (--plan)
    "bytes at {n}^3 over {bw:.0f} GB/s": "{n}^3의 바이트를 {bw:.0f} GB/s로 옮기는 시간",
    "floor at {n}^3 (2 n^3 FLOPs / the {peak:g} TFLOP/s fp32 peak)":
        "{n}^3에서 시간의 하한 (2 n^3 FLOP / fp32 최대 성능 {peak:g} TFLOP/s)",
    "{ridge:.1f} FLOP/B: {n}^3's {ai:.0f} FLOP/B is {x:.0f}x above":
        "{ridge:.1f} FLOP/B: {n}^3의 {ai:.0f} FLOP/B는 그보다 {x:.0f}배 높음",
    "cuBLAS at ~70-75% of the peak; the {t:.2f}x target at {n}^3":
        "최대 성능의 약 70-75%로 도는 cuBLAS. {n}^3에서 목표는 그 {t:.2f}배",
    "cuda 10-11 (cp.async)": "cuda 10-11 (cp.async)",
    "not here: {why}": "여기서는 실행하지 않음: {why}",
    "{name}: blocks per SM, waves at {n}^3": "{name}: {n}^3에서 SM당 block 수와 wave 수",
    "{blocks} of {threads} threads x {regs} registers, {kib:.1f} KiB (limit: {limit}); {tiles} tiles / ({sms} SMs x "
    "{blocks}) = {waves:.2f} waves":
        "thread {threads}개 x register {regs}개인 block {blocks}개, {kib:.1f} KiB (제한 요인: {limit}). tile {tiles}개 / "
        "(SM {sms}개 x {blocks}) = wave {waves:.2f}개",
    "triton tiles here": "여기서 쓰는 triton tile",
    "{bm} x {bn} x {bk}, {stages} stages ({kib} KiB of shared memory a block)":
        "{bm} x {bn} x {bk}, stage {stages}개 (block마다 shared memory {kib} KiB)",

    # the benchmark (GPU)
    "benchmark: rungs 01-03 run up to 2048^3 and 04-05 up to 4097^3 (at 8192^3 they would take seconds per call); "
    "the rest at every size":
        "benchmark: rung 01-03은 2048^3까지, 04-05는 4097^3까지만 잽니다(8192^3에서는 호출 한 번에 몇 초가 걸립니다). "
        "나머지는 모든 크기에서 잽니다",
    "SGEMM sizes": "SGEMM 크기",
    "target sizes": "목표 크기",
    "irregular shapes": "불규칙한 shape",
    "targets not measured: {best} {why}": "목표를 재지 않았습니다: {best} {why}",
    "TF32 check: relative error against float64 at 1024^3": "TF32 확인: 1024^3에서 float64 대비 상대 오차",
    "rel_err_vs_fp64": "fp64 대비 상대 오차",
    "verdict": "판정",
    "NOT fp32 (TF32?)": "fp32가 아님 (TF32?)",
    "SGEMM {n}^3 (fp32, L2 flushed; vs_cublas = cuBLAS time / this time)":
        "SGEMM {n}^3 (fp32, L2 flush. vs_cublas = cuBLAS 시간 / 이 variant의 시간)",
    "vs_cublas": "cuBLAS 대비",
    "frac_peak": "최대 성능 대비",
    "irregular and skinny shapes: best rung vs cuBLAS (checked on sampled rows; a ratio, no target)":
        "불규칙하고 가는 shape: 가장 좋은 rung과 cuBLAS (표본 행으로 검증. 비율만 보고 목표는 없음)",
    "cublas_ms": "cuBLAS ms",
    "cublas_tflops": "cuBLAS TFLOP/s",
    "check": "검사",
    "targets: best rung vs cuBLAS SGEMM (interleaved rounds, same run)":
        "목표: 가장 좋은 rung과 cuBLAS SGEMM (번갈아 잰 round, 같은 실행)",
    "size": "크기",

    # --tune (GPU)
    "--tune: {why}": "--tune: {why}",
    "autotuning {count} tile configurations at {n}^3": "{n}^3에서 tile 설정 {count}개 autotuning",
    "not tried: {s:.0f} s budget spent": "시도하지 않음: 시간 예산 {s:.0f}초를 다 씀",
    "spills {b} B of local memory on this GPU: excluded": "이 GPU에서 local memory로 {b} B spill: 제외",
    "WRONG RESULT: excluded": "결과가 틀림: 제외",
    "failed: {error}": "실패: {error}",
    "fast but WRONG on {shape}: excluded": "빠르지만 {shape}에서 결과가 틀림: 제외",
    "autotuner: {ok}/{n} configurations ok in {s:.1f} s; cuBLAS {cublas:.1f} TFLOP/s; winner {cfg} at {tflops:.1f} "
    "TFLOP/s ({x:.2f}x cuBLAS)":
        "autotuner: {s:.1f}초 동안 설정 {n}개 중 {ok}개 통과. cuBLAS {cublas:.1f} TFLOP/s. 선택한 설정 {cfg}: "
        "{tflops:.1f} TFLOP/s (cuBLAS의 {x:.2f}배)",
    "autotuner: rung 10's kernel over the declared space": "autotuner: 선언한 설정 공간에서 rung 10의 커널",
    "compile_s": "컴파일 초",
    "winner: {cfg} (the next run measures rung 11 with it)": "선택: {cfg} (다음 실행은 이 설정으로 rung 11을 잽니다)",

    # the plots
    "left out at {sizes} (too slow there): {rungs}": "{sizes}에서 뺌 (너무 느림): {rungs}",
    "* not a multiple of {tile} (rung 11's block tile): the tiles at the edges of C are partial":
        "* {tile}(rung 11의 block tile)의 배수가 아님: C 가장자리의 tile은 일부만 찹니다",
    "fp32 peak (datasheet) {peak} TFLOP/s": "fp32 최대 성능 (datasheet) {peak} TFLOP/s",
    "M = N = K (the sizes measured, evenly spaced)": "M = N = K (측정한 크기, 같은 간격으로 배치)",
    "SGEMM ladder on {gpu} (fp32, L2 flushed)": "{gpu}의 SGEMM ladder (fp32, L2 flush)",
    "{name}: not run at {at}^3 (too slow; largest size run: {last}^3, {tflops:.1f} TFLOP/s)":
        "{name}: {at}^3에서는 실행하지 않음 (너무 느림. 실행한 가장 큰 크기: {last}^3, {tflops:.1f} TFLOP/s)",
    "SGEMM {at}^3 on {gpu}: every rung against cuBLAS": "{gpu}의 SGEMM {at}^3: 모든 rung과 cuBLAS 비교",
    "0.90x cuBLAS {tflops:.1f}": "cuBLAS의 0.90배 {tflops:.1f}",
    "not run at {at}^3 (see the note below)": "{at}^3에서는 실행하지 않음 (아래 설명 참고)",
    "CUDA C (ours: the ladder's rungs)": "CUDA C (우리 커널: ladder의 rung)",
    "Triton (ours)": "Triton (우리 커널)",
    "library peer (cuBLAS through cupy and torch)": "라이브러리 peer (cupy와 torch를 거친 cuBLAS)",

    # --set values the kernels cannot take
    "warp tiles must divide the block tile":
        "warp tile이 block tile을 나누어떨어지게 해야 합니다",
    "thread tiles are multiples of 4":
        "thread tile은 4의 배수여야 합니다",
    "a warp tile must hold exactly 32 thread tiles":
        "warp tile 하나에 thread tile이 정확히 32개 있어야 합니다",
    "{n} threads per block":
        "block당 thread {n}개는 허용되지 않습니다",
    "BK must be a multiple of 8 dividing the warps' k columns":
        "BK는 warp들의 k 열 수를 나누는 8의 배수여야 합니다",
    "A stage must split evenly over the threads":
        "A stage가 thread들에 고르게 나뉘어야 합니다",
    "B stage must split evenly over the threads in float4s":
        "B stage가 float4 단위로 thread들에 고르게 나뉘어야 합니다",
    "at least two stages":
        "stage가 두 개 이상이어야 합니다",
    "DB is 0 or 1":
        "DB는 0 또는 1이어야 합니다",
    "MINB x threads exceeds 2048 threads per SM":
        "MINB x thread 수가 SM당 2048 thread를 넘습니다",
    "{b} B of shared memory > {limit} B per block":
        "shared memory {b} B > block당 {limit} B",
    "{rung}: tile configuration {cfg}: {bad}":
        "{rung}: tile 설정 {cfg}: {bad}",
}
