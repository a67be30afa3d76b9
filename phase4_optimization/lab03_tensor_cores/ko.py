"""Korean lines of what lab 4.3 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants, why one does not run, the plan
    "nvcuda::wmma 16x16x16": "nvcuda::wmma 16x16x16",
    "mma.sync m16n8k16 + ldmatrix + swizzle + cp.async": "mma.sync m16n8k16 + ldmatrix + swizzle + cp.async",
    "sm_90a wgmma + TMA (kernels_wgmma.cu), the build --tune recorded for this GPU":
        "sm_90a wgmma + TMA (kernels_wgmma.cu), 이 GPU에서 --tune이 기록한 build",
    "rung 03 with CLUSTER=2: B tiles shared by TMA multicast": "CLUSTER=2인 rung 03: TMA multicast로 B tile을 나눠 씀",
    "rung 03 with EPI_TMA=1: C through shared memory + TMA store, 3 stages":
        "EPI_TMA=1인 rung 03: C를 shared memory와 TMA store로 씀, stage 3개",
    "rung 03 with CLUSTER=2 and EPI_TMA=1": "CLUSTER=2와 EPI_TMA=1을 함께 쓴 rung 03",
    "bf16 tl.dot needs sm_80 or later (no bf16 tensor cores before Ampere); this GPU is {arch}":
        "bf16 tl.dot에는 sm_80 이상이 필요합니다(Ampere 이전에는 bf16 tensor core가 없습니다). 이 GPU는 {arch}입니다",
    "wgmma is Hopper-only (sm_90a, compute capability 9.0); this GPU is {arch}":
        "wgmma는 Hopper 전용입니다(sm_90a, compute capability 9.0). 이 GPU는 {arch}입니다",
    "no CUDA GPU ({why})": "CUDA GPU 없음 ({why})",
    "{case}: the mma.sync ceiling, one full wave": "{case}: mma.sync 한계, 꽉 찬 wave 하나",
    "{case}, autotune candidate {i} of {n}": "{case}, autotune 후보 {n}개 중 {i}번째",
    "autotuned ({source})": "autotuning ({source})",
    "fixed (the variant's build)": "고정 (이 variant의 build)",
    "recorded build, {source}": "기록된 build, {source}",
    "{source}, winner at {shape}": "{source}, {shape}에서 가장 빠른 build",
    "{name} from {source}": "{name}: {source}에서",
    "{name} from the argument": "{name}: 인자에서",
    "winner at {shape}": "{shape}에서 가장 빠른 build",
    "cluster 1 (B K-major)": "cluster 1 (B K-major)",

    # the command line
    "benchmark this one square size (default: 2048, 4096, 8192; --quick: 4096)":
        "이 정사각 크기 하나만 benchmark합니다 (기본값: 2048, 4096, 8192. --quick: 4096)",
    "(GPU) time every mma.sync config of CONFIGS at 4096^3 bf16 and record the winner in results/<gpu>/{record}.json; "
    "on sm_90 also every wgmma + TMA build at {sizes}, winners in results/<gpu>/{wgmma_record}.json (a few minutes); "
    "later runs use them":
        "(GPU) 4096^3 bf16에서 CONFIGS의 mma.sync config를 모두 재고 가장 빠른 것을 results/<gpu>/{record}.json에 "
        "기록합니다. sm_90에서는 {sizes}에서 모든 wgmma + TMA build도 재고 가장 빠른 것을 "
        "results/<gpu>/{wgmma_record}.json에 기록합니다(몇 분 걸림). 이후 실행은 그 기록을 씁니다",
    "(sm_90) index-coded probes of the wgmma + TMA kernel that say where a layout bug is":
        "(sm_90) layout 버그가 어디 있는지 알려 주는, index를 값으로 넣은 wgmma + TMA 커널 probe",

    # explain and predict
    "{gpu}: the CUDA C rungs need bf16 mma.sync, ldmatrix and cp.async (sm_80 or later)":
        "{gpu}: CUDA C rung에는 bf16 mma.sync, ldmatrix, cp.async가 필요합니다(sm_80 이상)",
    "mma.sync uses {config} on {gpu} [{source}]": "{gpu}에서 mma.sync는 {config}를 씁니다 [{source}]",
    "mma.sync would use {config} on {gpu} [{source}]": "{gpu}에서라면 mma.sync는 {config}를 씁니다 [{source}]",
    "wgmma + TMA at {n}^3 runs {build} [{why}]": "{n}^3에서 wgmma + TMA는 {build}로 실행합니다 [{why}]",
    "fits {arch} ({kib} KiB a block)": "{arch}에 맞음 (block당 {kib} KiB)",
    "ldmatrix conflicts (A, B)": "ldmatrix conflict 수 (A, B)",
    "{a}-way, {b}-way": "{a}-way, {b}-way",
    "mma.sync configs (CONFIGS) - lab 4.4 sweeps these; --tune times them":
        "mma.sync config (CONFIGS): 랩 4.4가 이것을 훑고, --tune이 시간을 잽니다",
    "bf16 {n}^3: FLOPs, bytes that must move": "bf16 {n}^3: FLOPs, 옮겨야 할 바이트",
    "bf16 ridge point (datasheet FLOP/s over bandwidth)": "bf16 ridge point (datasheet FLOP/s를 대역폭으로 나눈 값)",
    "{ridge:.0f} FLOP/B: the main case is {times:.1f}x above it, compute-bound":
        "{ridge:.0f} FLOP/B: 주요 케이스는 이보다 {times:.1f}배 위에 있어 compute-bound입니다",
    "floor at {n}^3 (2 M N K over the datasheet bf16 rate)": "{n}^3의 하한 (2 M N K를 datasheet bf16 처리율로 나눔)",
    "tensor cores over CUDA cores (datasheet bf16 / fp32 rates)": "CUDA core 대비 tensor core (datasheet bf16 / fp32 처리율)",
    "{x:.1f}x": "{x:.1f}배",
    "bf16 tensor cores": "bf16 tensor core 지원",
    "none on {arch}: the CUDA C rungs and bf16 tl.dot need sm_80 or later":
        "{arch}에는 없음: CUDA C rung과 bf16 tl.dot에는 sm_80 이상이 필요합니다",
    "mma.sync configuration here": "여기서 쓰는 mma.sync 설정",
    "mma.sync blocks per SM, waves": "mma.sync의 SM당 block 수, wave",
    "{regs} registers: {blocks} block(s) per SM ({limiters}); {tiles} tiles = {waves:.2f} waves of {slots}":
        "register {regs}개: SM당 block {blocks}개 ({limiters}), tile {tiles}개 = {slots}개짜리 wave {waves:.2f}개",
    "FLOP per byte a block tile loads": "block tile이 load하는 바이트당 FLOP",
    "rung 03 (wgmma + TMA)": "rung 03 (wgmma + TMA)",
    "{build}: a persistent grid of {grid} blocks (one per SM) walks {tiles} tiles of {bm}x{bn}, {each:.2f} each":
        "{build}: block {grid}개(SM마다 하나)의 persistent grid가 {bm}x{bn} tile {tiles}개를 훑습니다. block마다 "
        "{each:.2f}개",
    "does not run here: {why}": "여기서는 실행하지 않음: {why}",
    "registers": "register",

    # the checks beyond VARIANTS x cases
    "wgmma checks": "wgmma 검증",
    "rung 03 (wgmma + TMA): both B layouts (poisoned output, float64 reference)":
        "rung 03 (wgmma + TMA): 두 가지 B layout (오염시킨 출력, float64 기준값)",
    "B layout": "B layout",
    "--wgmma-debug: the GPU probes need an sm_90 GPU ({why}); the CPU layout model: {result}":
        "--wgmma-debug: GPU probe에는 sm_90 GPU가 필요합니다({why}). CPU layout 모델: {result}",
    "every A and B slice correct": "A와 B의 모든 slice가 맞음",
    "WRONG: {bad}": "틀림: {bad}",
    "rung 03 failed a check; the debugging probes say where:": "rung 03이 검증에 실패했습니다. debugging probe가 위치를 알려 줍니다:",

    # the compile reports
    "compiling kernels.cu": "kernels.cu 컴파일",
    "compiling kernels_wgmma.cu": "kernels_wgmma.cu 컴파일",
    "kernels.cu compiled with NVRTC {version} (static SASS counts; smem of tc_02 = dynamic, STAGES x (BM BK + BK BN) "
    "x 2 B)":
        "NVRTC {version}로 컴파일한 kernels.cu (정적 SASS 개수, tc_02의 smem = dynamic, STAGES x (BM BK + BK BN) x 2 B)",
    "  Read it as: HMMA = tensor-core MMAs (wmma and mma.sync both become HMMA.16816.F32.BF16/F16); LDSM =\n"
    "  ldmatrix (rung 02: 4 plain + 4 .trans per 16-deep step for 32 HMMA per 64x64 warp tile); LDGSTS =\n"
    "  cp.async copies, global -> shared. Rung 01's wmma fragments come in through generic loads (LD, not LDS:\n"
    "  NVRTC 13.0 did not prove the address shared), 2 per HMMA. STS in rung 02 = the element-wise fallback for\n"
    "  misaligned operands. LDS counts leave out ptxas's never-executed '@!PT LDS' slots. Spills must be 0.":
        "  읽는 법: HMMA = tensor core MMA (wmma와 mma.sync 모두 HMMA.16816.F32.BF16/F16이 됩니다). LDSM =\n"
        "  ldmatrix (rung 02: 64x64 warp tile의 HMMA 32개마다, 깊이 16 step당 일반 4개 + .trans 4개). LDGSTS =\n"
        "  cp.async 복사, global -> shared. rung 01의 wmma fragment는 generic load로 들어옵니다(LDS가 아니라 LD:\n"
        "  NVRTC 13.0이 주소가 shared임을 증명하지 못했습니다). HMMA마다 2개입니다. rung 02의 STS = 정렬되지 않은\n"
        "  operand를 위한 원소 단위 대체 경로입니다. LDS 개수에서 ptxas가 넣은, 실행되지 않는 '@!PT LDS' slot은 "
        "뺐습니다. spill은 0이어야 합니다.",
    "  (no cuobjdump: SASS columns are 0; it ships with the triton wheel)":
        "  (cuobjdump 없음: SASS 열은 0입니다. cuobjdump는 triton wheel에 들어 있습니다)",
    "TMA store, {n} pass": "TMA store, pass {n}번",
    "TMA store, {n} passes": "TMA store, pass {n}번",
    "smem (dynamic)": "smem (dynamic)",
    "kernels_wgmma.cu compiled with NVRTC {version} for {arch} (regs = the launch-bound cap; setmaxnreg moves them at "
    "run time)":
        "NVRTC {version}로 {arch}용 컴파일한 kernels_wgmma.cu (regs = launch bound의 상한, setmaxnreg가 실행 중에 "
        "옮김)",
    "wgmma shared-memory descriptors of stage 0, consumer 0": "stage 0, consumer 0의 shared memory descriptor (wgmma용)",
    "descriptor/swizzle model: TMA-written stage read back through the kernel's descriptors (both B layouts) -> "
    "{result}":
        "descriptor/swizzle 모델: TMA가 쓴 stage를 커널의 descriptor로 다시 읽음 (두 가지 B layout) -> {result}",
    "kernels.cu, kernels_wgmma.cu: not compiled for {arch}: the rungs need bf16 mma.sync, ldmatrix and cp.async "
    "(sm_80 or later)":
        "kernels.cu, kernels_wgmma.cu: {arch}용으로 컴파일하지 않음: rung에는 bf16 mma.sync, ldmatrix, cp.async가 "
        "필요합니다(sm_80 이상)",
    "kernels_wgmma.cu: not compiled for {arch}: {why}": "kernels_wgmma.cu: {arch}용으로 컴파일하지 않음: {why}",
    "compile report unavailable: {error}": "컴파일 보고서를 만들 수 없음: {error}",
    "\nCUDA C rungs were compiled, not run (no GPU); the Triton kernel ran in the interpreter. Nothing was timed.":
        '\nGPU가 없어 CUDA C rung은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다. 시간을 잰 것은 없습니다.',

    # the wgmma debugging probes (--wgmma-debug)
    "stage-0 descriptors (consumer 0, B N-major)": "stage 0 descriptor (consumer 0, B N-major)",
    "debug: {kernel} ({dtype}), tile {bm}x{bn}x{bk}, {stages} stages, smem {smem} B, grid min(tiles, SMs)":
        "debug: {kernel} ({dtype}), tile {bm}x{bn}x{bk}, stage {stages}개, smem {smem} B, grid min(tile 수, SM 수)",
    "descriptor model (CPU), B {major}-major: {result}": "descriptor 모델 (CPU), B {major}-major: {result}",
    "K-major (fallback: transposed copy, -DB_KMAJOR=1)": "K-major (대체 경로: 전치한 복사본, -DB_KMAJOR=1)",
    "N-major (default, tnspB)": "N-major (기본값, tnspB)",
    "debug summary: B N-major (default): {n_major} | B K-major (fallback): {k_major}":
        "debug 요약: B N-major (기본값): {n_major} | B K-major (대체 경로): {k_major}",
    "correct": "맞음",
    "WRONG": "틀림",
    "-> the MN-major B descriptor (LBO/SBO/start step, tnspB) is the suspect; WGMMA_B_KMAJOR=1 makes gemm_wgmma use the "
    "fallback meanwhile":
        "-> MN-major B descriptor(LBO/SBO/start step, tnspB)가 의심됩니다. 그동안 WGMMA_B_KMAJOR=1로 gemm_wgmma가 대체 "
        "경로를 쓰게 할 수 있습니다",
    "[{kind}] launch failed: {error}": "[{kind}] launch 실패: {error}",
    "index probe {kind}": "index 검사 {kind}",
    "[{label}] {bad}/{size} wrong": "[{label}] {bad}/{size} 틀림",
    "  first: {cells}": "  처음 틀린 곳: {cells}",
    "({i},{j}) got {got:g} want {want:g}": "({i},{j}) 결과 {got:g}, 기대값 {want:g}",
    "  wrong rows mod 8: {mod}  rows by 16-row warp slab: {slabs}":
        "  틀린 행 mod 8: {mod}  16행 warp slab별 행: {slabs}",
    "  wrong cols mod 8: {mod}  cols by 64-col block: {blocks}": "  틀린 열 mod 8: {mod}  64열 block별 열: {blocks}",
    "  index read XOR index wanted (count): {top}   (8/16/32/48.. = swizzle chunk mix-up; 64 = wrong consumer half or "
    "LBO)":
        "  읽은 index XOR 기대한 index (개수): {top}   (8/16/32/48.. = swizzle chunk 혼동, 64 = 잘못된 consumer 절반 "
        "또는 LBO)",
    "  8x8 blocks of rows 0-63 ('.' ok, 'X' wrong):": "  행 0-63의 8x8 block ('.' 맞음, 'X' 틀림):",
    "  HANG RECORD: {record} (skipping this layout's remaining cases: each would wait out the timeout)":
        "  HANG 기록: {record} (이 layout의 남은 케이스는 건너뜀: 케이스마다 timeout까지 기다리게 됩니다)",
    "  wrong rows by 64: {rows}  cols by 64: {cols}  first: {first}":
        "  64행 단위 틀린 행: {rows}  64열 단위 열: {cols}  처음: {first}",
    "debug: {result}": "debug: {result}",
    "all correct": "모두 맞음",
    "MISMATCHES (see above)": "불일치 있음 (위를 보십시오)",

    # the benchmark and --tune (GPU)
    "tuning {count} mma.sync configs at {n}^3 {dtype}": "{n}^3 {dtype}에서 mma.sync config {count}개 tuning",
    "{dtype} sizes": "{dtype} 크기",
    "tuning {count} wgmma builds": "wgmma build {count}개 tuning",
    "wgmma head to head": "wgmma 맞대결",
    "{dtype} GEMM {n}^3 (L2 flushed; vs_cublas = cuBLAS time / this time)":
        "{dtype} GEMM {n}^3 (L2 flush, vs_cublas = cuBLAS 시간 / 이 시간)",
    "target: mma.sync vs cuBLAS, bf16 4096^3, steady interleaved rounds":
        "목표: mma.sync 대 cuBLAS, bf16 4096^3, 안정된 번갈아 재는 round",
    "the mma.sync ceiling (no memory traffic) vs cuBLAS, same run": "mma.sync 한계 (메모리 traffic 없음) 대 cuBLAS, 같은 실행",
    "rung 03, wgmma + TMA (single blocks / 2-block clusters sharing B by multicast; C stored from registers / through "
    "shared memory by TMA) vs cuBLAS (torch.matmul), steady interleaved rounds, L2 flushed; build/ratio: the build "
    "gemm_wgmma runs by default here":
        "rung 03, wgmma + TMA (단일 block / multicast로 B를 나눠 쓰는 2-block cluster, C를 register에서 / TMA로 shared "
        "memory를 거쳐 저장) 대 cuBLAS (torch.matmul), 안정된 번갈아 재는 round, L2 flush. build/ratio: 여기서 "
        "gemm_wgmma가 기본으로 실행하는 build",
    "targets: wgmma + TMA vs cuBLAS, bf16 4096^3 and 8192^3, the build gemm_wgmma runs by default (its source in the "
    "row)":
        "목표: wgmma + TMA 대 cuBLAS, bf16 4096^3과 8192^3, gemm_wgmma가 기본으로 실행하는 build (출처는 행에 있음)",
    "--tune: mma.sync configs at 4096^3 bf16 (vs_cublas = cuBLAS time / this time)":
        "--tune: 4096^3 bf16에서 mma.sync config (vs_cublas = cuBLAS 시간 / 이 시간)",
    "--tune: no mma.sync config was both fast and right; nothing recorded for it":
        "--tune: 빠르면서 맞는 mma.sync config가 없습니다. 아무것도 기록하지 않았습니다",
    "--tune winner: {config} (recorded in {record}.json)": "--tune 최고: {config} ({record}.json에 기록)",
    "--tune: wgmma + TMA builds not swept: {why}": "--tune: wgmma + TMA build는 훑지 않았습니다: {why}",
    "--tune: wgmma + TMA builds, bf16, steady interleaved rounds with cuBLAS (vs_cublas = cuBLAS time / this time)":
        "--tune: wgmma + TMA build, bf16, cuBLAS와 안정된 번갈아 재는 round (vs_cublas = cuBLAS 시간 / 이 시간)",
    "--tune wgmma winners: {list}": "--tune wgmma 최고: {list}",
    "--tune: no wgmma build was both fast and right; nothing recorded for it":
        "--tune: 빠르면서 맞는 wgmma build가 없습니다. 아무것도 기록하지 않았습니다",
    "vs_cublas": "cuBLAS 대비",
    "invalid here: {why}": "여기서는 쓸 수 없음: {why}",
    "failed: {why}": "실패: {why}",
    "fast but WRONG on {why}: excluded": "빠르지만 {why}에서 틀림: 제외",
    "WRONG RESULT ({why}): excluded": "틀린 결과 ({why}): 제외",
    "WRONG RESULT: excluded": '결과가 틀림: 제외',
    "not tried: {why} s budget spent": "시도하지 않음: 시간 예산 {why}초를 다 씀",
    "frac_peak": '최대 성능 대비',
    "sampled_rel_err": "표본 상대 오차",
    "rel_err": "상대 오차",
    "error": "오류",
    "build source": "build 출처",
    "best build": "가장 빠른 build",
    "best ratio": "가장 빠른 build의 비율",

    # the plots
    "TFLOP/s (2 M N K / time)": "TFLOP/s (2 M N K / 시간)",
    "target {target}x cuBLAS {tflops:.0f}": "목표 cuBLAS의 {target}배 {tflops:.0f}",
    "bf16 dense peak (datasheet) {peak}": "bf16 dense 최고 성능 (datasheet) {peak}",
    "bf16 GEMM {n}^3 on {gpu}: tensor-core rungs against cuBLAS (L2 flushed)":
        "{gpu}에서 bf16 GEMM {n}^3: tensor core rung 대 cuBLAS (L2 flush)",
    "rung 03, wgmma + TMA GEMM vs cuBLAS on {gpu} (bf16, interleaved)":
        "{gpu}에서 rung 03, wgmma + TMA GEMM 대 cuBLAS (bf16, 번갈아 잼)",
}
