"""Korean lines of what lab 4.6 prints and draws (its hopper.py command line too): {English: Korean}
(common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants and why one does not run
    "kernels.cu attn_01_mma: single-buffered, unswizzled": "kernels.cu attn_01_mma: 단일 buffer, swizzle 없음",
    "kernels.cu attn_02_mma_pipelined: cp.async double buffering, XOR swizzle":
        "kernels.cu attn_02_mma_pipelined: cp.async 이중 buffer, XOR swizzle",
    "kernels.cu attn_02w_mma_wide: two row tiles a warp share each K/V fragment":
        "kernels.cu attn_02w_mma_wide: warp 하나의 행 tile 두 개가 K/V fragment를 함께 씀",
    "no CUDA GPU ({why}); the kernels are only compiled (NVRTC)":
        "CUDA GPU 없음 ({why}). 커널은 NVRTC로 컴파일만 합니다",
    "mma.sync bf16, ldmatrix and cp.async need sm_80 or newer; this GPU is {arch}":
        "mma.sync bf16, ldmatrix, cp.async에는 sm_80 이상이 필요합니다. 이 GPU는 {arch}입니다",
    "torch is needed for bfloat16 tensors": "bfloat16 tensor에는 torch가 필요합니다",
    "the flash kernels' bf16 tl.dot needs sm_80 or newer (bf16 tensor cores); this GPU is {arch}":
        "flash 커널의 bf16 tl.dot에는 sm_80 이상이 필요합니다(bf16 tensor core). 이 GPU는 {arch}입니다",
    "needs a GPU": 'GPU 필요',
    "SDPA {backend} backend unavailable: {error}": "SDPA {backend} backend를 쓸 수 없음: {error}",
    "SDPA's {backend} backend needs sm_80 or newer; this GPU is {arch}":
        "SDPA의 {backend} backend에는 sm_80 이상이 필요합니다. 이 GPU는 {arch}입니다",
    "cuDNN's SDPA has no kernel for S = 1": "cuDNN의 SDPA에는 S = 1용 커널이 없습니다",
    "wgmma, setmaxnreg and TMA tensor maps are Hopper-only (sm_90a, compute capability 9.0); this GPU is {arch}":
        "wgmma, setmaxnreg, TMA tensor map은 Hopper 전용입니다(sm_90a, compute capability 9.0). 이 GPU는 {arch}입니다",

    # configurations and the plan
    "interpreter tiles": "interpreter용 tile",
    " (the preferred tile needs more than {kib} KiB a block)": " (원래 tile에는 block당 {kib} KiB보다 많이 필요)",
    "tuned in this run (the benchmark's tile sweep)": "이번 실행에서 tuning (benchmark의 tile sweep)",
    "naive vs flash, {shape}": "naive 대 flash, {shape}",
    "cuda shapes, {shape}, causal and not": "cuda shape, {shape}, causal과 non-causal",
    "fwd D{d}, {shape}, {stages} stages, causal and not": "fwd D{d}, {shape}, stage {stages}개, causal과 non-causal",
    "fixed (a build the benchmark times)": "고정 (benchmark가 시간을 재는 build)",

    # explain: the two numbers and the predictions
    "the two numbers at the benchmark shapes (bf16; the {gpu}'s bf16 ridge point is {ridge:.0f} FLOP/B: above it "
    "compute wins)":
        "benchmark shape에서 핵심 수치 두 가지 (bf16, {gpu}의 bf16 ridge point는 {ridge:.0f} FLOP/B: 그 위에서는 연산이 "
        "결정함)",
    "the two numbers at the benchmark shapes (bf16; the {gpu} has no bf16 tensor cores: above it compute wins)":
        "benchmark shape에서 핵심 수치 두 가지 (bf16, {gpu}에는 bf16 tensor core가 없음)",
    "flash MB": "flash MB",
    "flash FLOP/B": "flash FLOP/B",
    "naive MB": "naive MB",
    "naive FLOP/B": "naive FLOP/B",
    "what the lesson predicts for {gpu}": "{gpu}에 대한 레슨의 예측",
    "flash forward at {shape}: FLOP per byte that must move": "{shape}에서 flash forward: 옮겨야 할 바이트당 FLOP",
    "bf16 ridge point (datasheet bf16 rate / bandwidth)": "bf16 ridge point (datasheet bf16 처리율 / 대역폭)",
    "{ridge:.0f} FLOP/B: flash is {times:.0f}x above it, compute-bound":
        "{ridge:.0f} FLOP/B: flash는 이보다 {times:.0f}배 위에 있어 compute-bound입니다",
    "flash forward floor at {shape} (FLOPs at the bf16 rate)": "{shape}에서 flash forward의 하한 (bf16 처리율로 본 FLOPs)",
    "naive / flash forward at S = {s} (floors: naive's bytes, flash's FLOPs)":
        "S = {s}에서 naive / flash forward (하한: naive는 바이트로, flash는 FLOPs로)",
    "{x:.1f}x": "{x:.1f}배",
    "bf16 tensor cores": "bf16 tensor core 지원",
    "none on {arch}: the flash kernels need sm_80 or newer": "{arch}에는 없음: flash 커널에는 sm_80 이상이 필요합니다",
    "Triton forward tile at D = {d}": "D = {d}에서 Triton forward tile",
    "{bm} x {bn}, {stages} stages, <= {kib} KiB of {limit} KiB; {per_sm} program(s) per SM":
        "{bm} x {bn}, stage {stages}개, {limit} KiB 중 <= {kib} KiB, SM당 program {per_sm}개",
    "Triton forward waves": "Triton forward의 wave",
    "{programs} programs / ({sms} SMs x {per_sm}) = {waves:.1f}": "program {programs}개 / (SM {sms}개 x {per_sm}) = {waves:.1f}",
    "CUDA C rung 02 at D = {d} ({warps} warps, {kib} KiB a CTA)": "D = {d}에서 CUDA C rung 02 (warp {warps}개, CTA당 {kib} KiB)",
    "{regs} registers, {ctas} CTA(s) per SM (limited by {limiter}); __launch_bounds__ asks for {min}":
        "register {regs}개, SM당 CTA {ctas}개 ({limiter}로 제한), __launch_bounds__의 요청은 {min}",
    "Hopper rung 07 (persistent) grid": "Hopper rung 07 (persistent)의 grid",
    "{sms} blocks, one per SM": "block {sms}개, SM마다 하나",
    "a head's K and V ({kv:.0f} MiB) in L2 ({l2:.0f} MiB)": "head 하나의 K와 V ({kv:.0f} MiB)를 L2 ({l2:.0f} MiB)에",
    "{n} heads at a time": "한 번에 head {n}개",

    # the checks beyond VARIANTS x cases: the NumPy models
    "NumPy model of the CUDA C kernel's tiling (Q block rows x key tile: 64 x 64 for 01/02, 128 x 32 for 02w; P in "
    "bf16) vs float64":
        "CUDA C 커널 tiling의 NumPy 모델 (Q block 행 x key tile: 01/02는 64 x 64, 02w는 128 x 32, P는 bf16) 대 float64",
    "causal": "causal",
    "tiles": "tile",
    "lse": "lse",
    "one warp, one K/V tile, modelled lane by lane (kernels.cu's address formulas through ldmatrix/mma semantics)":
        "warp 하나, K/V tile 하나를 lane 단위로 모델링 (kernels.cu의 주소 공식을 ldmatrix/mma 의미대로 적용)",
    "layout": "layout",
    "plain (01)": "swizzle 없음 (01)",
    "swizzled (02)": "swizzle (02)",
    "swizzled, 2 row tiles a warp (02w)": "swizzle, warp당 행 tile 2개 (02w)",
    "max err {err:.1e}": "최대 오차 {err:.1e}",

    # the compile reports
    "Triton flash kernels: not compiled for {arch} ({why})": "Triton flash 커널: {arch}용으로 컴파일하지 않음 ({why})",
    "Triton flash kernels compiled ahead of time for {arch} (bf16, the default tiles of {gpu})":
        "{arch}용으로 ahead-of-time 컴파일한 Triton flash 커널 (bf16, {gpu}의 기본 tile)",
    "part": "부분",
    "stages": "stages",
    "regs": "regs",
    "local B": "local B",
    "shared B": "shared B",
    "wgmma": "wgmma",
    "mma.sync": "mma.sync",
    "cp.async": "cp.async",
    "compile s": "컴파일 초",
    "kernels.cu: not compiled for {arch} (mma.sync bf16, ldmatrix and cp.async need sm_80 or newer)":
        "kernels.cu: {arch}용으로 컴파일하지 않음 (mma.sync bf16, ldmatrix, cp.async에는 sm_80 이상이 필요)",
    "kernels.cu compiled with NVRTC {version} ({builds}; BLOCK_N={block_n})":
        "NVRTC {version}로 컴파일한 kernels.cu ({builds}, BLOCK_N={block_n})",
    "kernels_hopper.cu (rungs {rungs}) compiled with NVRTC for sm_90a: registers at launch, the setmaxnreg split, "
    "wgmma (HGMMA), TMA (UTMALDG) and named barriers (BAR.ARV) in the SASS":
        "NVRTC로 sm_90a용 컴파일한 kernels_hopper.cu (rung {rungs}): launch 때 register, setmaxnreg 분배, SASS의 wgmma "
        "(HGMMA), TMA (UTMALDG), named barrier (BAR.ARV)",
    "kernels_hopper.cu: not compiled for {arch} ({why})": "kernels_hopper.cu: {arch}용으로 컴파일하지 않음 ({why})",
    "\nRan in the interpreter: the naive attention (torch matmuls + the Triton softmax kernel) and the flash forward "
    "and backward\n(small tiles, S up to 67, causal and not, ragged tails, strided views), against float64 NumPy; the "
    "CUDA C forward\nneeds a GPU: it was compiled, and its tiling and fragments were modelled in NumPy. Timing, tuning "
    "and the SDPA peers need a GPU.":
        "\ninterpreter에서 실행한 것: naive attention(torch matmul + Triton softmax 커널)과 flash forward, backward\n"
        "(작은 tile, S는 67까지, causal과 non-causal, tile에 맞지 않는 나머지, strided view)를 float64 NumPy와 비교했습니다.\n"
        "CUDA C forward에는 GPU가 필요합니다: 컴파일하고, tiling과 fragment는 NumPy로 모델링했습니다. 시간 측정, tuning, "
        "SDPA peer에는 GPU가 필요합니다.",

    # the benchmark and --tune (GPU)
    "compile the Triton flash kernels for --arch ahead of time and show their resources (default: on without a GPU "
    "unless --quick; the CUDA C table is always shown)":
        "Triton flash 커널을 --arch용으로 ahead-of-time 컴파일하고 자원 사용량을 보여 줍니다 (기본값: GPU가 없고 "
        "--quick이 아니면 켜짐. CUDA C 표는 항상 보여 줌)",
    "(GPU) time the Triton forward and backward candidates at the target shapes, check each winner against float64, "
    "and record this GPU's winners (results/<gpu>/phase4_lab06_attention_tuned.json), which the wrappers then use":
        "(GPU) 목표 shape에서 Triton forward와 backward 후보의 시간을 재고, 가장 빠른 것을 float64와 비교해 검증한 다음 "
        "이 GPU의 기록(results/<gpu>/phase4_lab06_attention_tuned.json)으로 남깁니다. 이후 wrapper가 그 기록을 씁니다",
    "tuning {label} B{b} H{h} S{s} D{d}: {n} candidates": "{label} B{b} H{h} S{s} D{d} tuning: 후보 {n}개",
    "Tuning at the target shapes (one timing per candidate)": "목표 shape에서 tuning (후보마다 한 번 측정)",
    "The winners, fastest first, checked against float64 on sampled heads until one passed":
        "가장 빠른 것부터, 하나가 통과할 때까지 표본 head로 float64와 비교해 검증한 최고 설정",
    "benchmark skipped: {why}": "benchmark 건너뜀: {why}",
    "Attention, bf16 (TFLOP/s: 4 B H S^2 D forward, halved for causal, backward 2.5x)":
        "Attention, bf16 (TFLOP/s: forward 4 B H S^2 D, causal이면 절반, backward는 2.5배)",
    "Naive (S and P in HBM) against flash, forward, {shape} non-causal (GB: bytes each must move)":
        "naive (S와 P가 HBM에 있음) 대 flash, forward, {shape} non-causal (GB: 각각 옮겨야 할 바이트)",
    "the CUDA C forward's rungs and occupancy shapes (vs_flash = SDPA flash time / this time)":
        "CUDA C forward의 rung과 occupancy shape (vs_flash = SDPA flash 시간 / 이 시간)",
    "Tuning at the target shapes (one timing per candidate; the fastest is used above)":
        "목표 shape에서 tuning (후보마다 한 번 측정, 가장 빠른 것을 위에서 씀)",
    "Performance targets (same run)": "성능 목표 (같은 실행)",
    "vs_flash": "flash 대비",

    # the plots
    "TFLOP/s (higher is better)": "TFLOP/s (높을수록 좋음)",
    "TFLOP/s counts 4 B H S^2 D FLOPs per forward, half that when causal, 2.5x for a backward":
        "TFLOP/s는 forward 하나를 4 B H S^2 D FLOP으로 셉니다 (causal이면 그 절반, backward는 2.5배)",
    "Attention on {gpu}: ours against torch SDPA, TFLOP/s by case": "{gpu}에서 attention: 우리 커널 대 torch SDPA, 케이스별 TFLOP/s",
    "CUDA C mma.sync forward: rungs and occupancy shapes against torch SDPA, on {gpu}":
        "CUDA C mma.sync forward: {gpu}에서 rung과 occupancy shape 대 torch SDPA",
    "shape not recorded": "shape 기록 없음",
    "ours: Triton flash attention": "우리 커널: Triton flash attention",
    "ours: naive (S and P through HBM)": "우리 커널: naive (S와 P가 HBM을 거침)",
    "ours: CUDA C wgmma + TMA flash, 3 stages (sm_90a)": "우리 커널: CUDA C wgmma + TMA flash, stage 3개 (sm_90a)",
    "ours: CUDA C wgmma + TMA flash (sm_90a)": "우리 커널: CUDA C wgmma + TMA flash (sm_90a)",
    "ours: CUDA C wgmma + TMA ping-pong flash, 3 stages (sm_90a)":
        "우리 커널: CUDA C wgmma + TMA ping-pong flash, stage 3개 (sm_90a)",
    "ours: CUDA C wgmma + TMA ping-pong flash (sm_90a)": "우리 커널: CUDA C wgmma + TMA ping-pong flash (sm_90a)",
    "ours: CUDA C wgmma + TMA overlapped softmax, 2 stages (sm_90a)":
        "우리 커널: CUDA C wgmma + TMA softmax 겹치기, stage 2개 (sm_90a)",
    "ours: CUDA C wgmma + TMA overlapped softmax (sm_90a)": "우리 커널: CUDA C wgmma + TMA softmax 겹치기 (sm_90a)",
    "ours: CUDA C wgmma + TMA overlapped softmax + ping-pong (sm_90a)":
        "우리 커널: CUDA C wgmma + TMA softmax 겹치기 + ping-pong (sm_90a)",
    "ours: CUDA C wgmma + TMA persistent, overlapped softmax (sm_90a)":
        "우리 커널: CUDA C wgmma + TMA persistent, softmax 겹치기 (sm_90a)",
    "ours: CUDA C mma.sync flash": "우리 커널: CUDA C mma.sync flash",
    "torch SDPA, cuDNN backend": "torch SDPA, cuDNN backend",
    "torch SDPA, FlashAttention-2 backend": "torch SDPA, FlashAttention-2 backend",
    "library peer": "라이브러리 peer",

    # hopper.py's command line (python -m phase4_optimization.lab06_attention.hopper)
    "Lab 4.6's Hopper attention forward (kernels_hopper.cu): the compile report for sm_90a (any machine) and, with "
    "--check, small cases against float64 on an sm_90 GPU.":
        "랩 4.6의 Hopper attention forward (kernels_hopper.cu): sm_90a용 컴파일 보고서(어느 컴퓨터에서나)와, --check를 "
        "주면 sm_90 GPU에서 작은 케이스를 float64와 비교합니다.",
    "run the small awkward cases (O and LSE, outputs poisoned) and print per case the error and where it fails":
        "작고 까다로운 크기의 케이스를 실행하고(O와 LSE, 출력은 오염시켜 둠) 케이스마다 오차와 틀린 위치를 보여 줍니다",
    "with --check: only S in {17, 129, 301}": "--check와 함께: S는 {17, 129, 301}만",
    "V's layout: mn (default, read in place), k (the transposed-copy fallback) or both":
        "V의 layout: mn (기본값, 제자리에서 읽음), k (전치한 복사본을 쓰는 대체 경로), both (둘 다)",
    "first input seed (case i uses seed + i)": "첫 입력 seed (케이스 i는 seed + i를 씀)",
    "which rung: {rungs} or all (default)": "어느 rung인지: {rungs}, all (기본값)",
    "the K/V ring's depth: each rung's default ({defaults}), 2, 3, or all":
        "K/V ring의 깊이: rung마다의 기본값 ({defaults}), 2, 3, all",
    "skip the sm_90a compile table": "sm_90a 컴파일 표를 건너뜁니다",
    "language of the output: en or ko (default: COURSE_LANG, else the locale; ko = Korean)":
        '출력 언어: en 또는 ko (기본값: COURSE_LANG, 없으면 locale. ko는 한국어)',
    "kernels_hopper.cu compiled for sm_90a (NVRTC)": "sm_90a용으로 컴파일한 kernels_hopper.cu (NVRTC)",
    "{kernel} check: BLOCK_M {bm}, BLOCK_N {bn}, {stages} stages, smem {smem}":
        "{kernel} 검증: BLOCK_M {bm}, BLOCK_N {bn}, stage {stages}개, smem {smem}",
    "descriptor model (CPU) D{d} V {major}-major, stages 0..{last}: {result}":
        "descriptor 모델 (CPU) D{d} V {major}-major, stage 0..{last}: {result}",
    "WRONG {bad}": "틀림 {bad}",
    "WRONG": "틀림",
    "P-from-registers fragment model (CPU): {result}": "register에서 P를 읽는 fragment 모델 (CPU): {result}",
    "GPU cases skipped: {why}": "GPU 케이스 건너뜀: {why}",
    "[{i}/{n}] {kernel} ({stages} stages) V {major}-major B{b} Hq{hq} Hkv{hkv} S{s} D{d} {mask} {dtype}{blocks}":
        "[{i}/{n}] {kernel} (stage {stages}개) V {major}-major B{b} Hq{hq} Hkv{hkv} S{s} D{d} {mask} {dtype}{blocks}",
    " on {n} blocks": ", block {n}개에서",
    "  (a barrier timed out: the remaining cases of this layout would each wait it out; stopping)":
        "  (barrier가 timeout됨: 이 layout의 남은 케이스도 모두 timeout까지 기다리게 되므로 멈춥니다)",
    "{n} case(s) failed with V MN-major; rerunning them with the K-major fallback (V transposed, -DV_KMAJOR=1):":
        "V MN-major에서 케이스 {n}개가 실패했습니다. K-major 대체 경로(V 전치, -DV_KMAJOR=1)로 다시 실행합니다:",
    "still wrong": "여전히 틀림",
    "-> every failure goes away with V K-major: the MN-major V descriptor (LBO/SBO/start step, tnspB) is the suspect":
        "-> V K-major에서는 실패가 모두 사라집니다: MN-major V descriptor(LBO/SBO/start step, tnspB)가 의심됩니다",
    "-> the fallback fails too: the bug is not (only) V's descriptor":
        "-> 대체 경로도 실패합니다: 버그는 V의 descriptor에만 있는 것이 아닙니다",
    "{kernel} ({stages} stages) check: {result}": "{kernel} (stage {stages}개) 검증: {result}",
    "all correct": "모두 맞음",
    "V {major}-major: {n} failed": "V {major}-major: {n}개 실패",
    "  launch failed: {error}": "  launch 실패: {error}",
    "  O wrong at:": "  O가 틀린 곳:",
    "  LSE wrong at:": "  LSE가 틀린 곳:",
    "  HANG RECORD: {record}": "  HANG 기록: {record}",
    "  {bad}/{size} wrong, {nan} NaN (unwritten or poisoned), heads {heads}":
        "  {bad}/{size} 틀림, NaN {nan}개 (쓰지 않았거나 오염된 값), head {heads}",
    "  rows by 128-row Q tile: {tiles}": "  128행 Q tile별 행: {tiles}",
    "  rows by consumer half (row % 128 // 64): {halves}  by warp slab (row % 64 // 16): {slabs}  row % 16: {mod}":
        "  consumer 절반별 행 (row % 128 // 64): {halves}  warp slab별 (row % 64 // 16): {slabs}  row % 16: {mod}",
    "  cols by 8-wide block: {blocks}  col % 8: {mod}": "  폭 8 block별 열: {blocks}  col % 8: {mod}",
    "  first: {cells}": "  처음 틀린 곳: {cells}",
    "{p} got {got:.4g} want {want:.4g}": "{p} 결과 {got:.4g}, 기대값 {want:.4g}",
    "not measured: no SDPA backend ran": "재지 못함: 실행된 SDPA backend가 없음",
    "kernels_hopper_bwd.cu compiled for sm_90a (NVRTC)": "sm_90a용으로 컴파일한 kernels_hopper_bwd.cu (NVRTC)",
    "ms": "ms",
    "no CUDA GPU": "CUDA GPU 없음",
    "{case}: checking rung {rung} against float64 on sampled heads":
        "{case}: 표본 head에서 rung {rung}을 float64와 비교하는 중",
    "{case}: timing {n} contenders in steady interleaved rounds": "{case}: 경쟁자 {n}개를 안정된 교대 라운드로 측정하는 중",
    "The Hopper attention backward's rungs against SDPA cuDNN's backward (and the Triton backward) at (B, H, S, D) = "
    "{shape}, bf16, causal and not: checked against float64 on sampled heads, then timed in steady interleaved "
    "rounds. Needs an sm_90 GPU; anywhere else the compile report.":
        "Hopper attention backward의 rung들을 SDPA cuDNN의 backward(그리고 Triton backward)와 (B, H, S, D) = {shape}, "
        "bf16, causal과 non-causal에서 비교합니다. 표본 head에서 float64와 대조한 뒤 안정된 교대 라운드로 시간을 "
        "잽니다. sm_90 GPU가 필요하고, 그 밖의 머신에서는 컴파일 보고만 보여 줍니다.",
    "one round and a quarter of the sequence length": "라운드 한 번, 시퀀스 길이는 4분의 1",
    "steady interleaved rounds (default 3)": "안정된 교대 라운드 수 (기본 3)",
    "which masks (default both)": "어느 mask (기본 both)",
    "which rung (default all)": "어느 rung (기본 all)",
    "also write the rows and targets to this JSON file": "행과 목표를 이 JSON 파일에도 씀",
    "--rounds must be at least 1, got {n}": "--rounds는 1 이상이어야 합니다. 받은 값: {n}",
    "The Hopper backward against SDPA cuDNN (vs_peer = cuDNN time / this time)":
        "Hopper backward 대 SDPA cuDNN (vs_peer = cuDNN 시간 / 이 시간)",
    "key": "key",
    "query": "query",
    "  {name}: {bad}/{size} wrong, {nan} NaN (never written, or poisoned)":
        "  {name}: {bad}/{size} 틀림, NaN {nan}개 (쓰지 않았거나 오염된 값)",
    "    rows by 64-row {what} tile: {tiles}": "    64행 {what} tile별 행: {tiles}",
    "    by warp slab (row % 64 // 16): {slabs}  row % 16: {mod}": "    warp slab별 (row % 64 // 16): {slabs}  row % 16: {mod}",
    "    cols by half of d: {halves}  by 8-wide block: {blocks}  col % 8: {mod}":
        "    d의 절반별 열: {halves}  폭 8 block별: {blocks}  col % 8: {mod}",
    "    first: {cells}": "    처음 틀린 곳: {cells}",
    "  {name}: wrote outside its array: {damage}": "  {name}: 배열 밖에 썼습니다: {damage}",
    "[{i}/{n}] rung {rung} ({kernel}) B{b} Hq{hq} Hkv{hkv} S{s} D{d} {mask} {dtype}":
        "[{i}/{n}] rung {rung} ({kernel}) B{b} Hq{hq} Hkv{hkv} S{s} D{d} {mask} {dtype}",
    "rung {rung}: {result}": "rung {rung}: {result}",
    "cases {cases} failed": "케이스 {cases} 실패",
    "Lab 4.6's Hopper attention backward on small awkward cases against float64 on an sm_90 GPU: per case the error "
    "of dQ, dK and dV and, for a wrong one, where it is wrong (tiles, warp slabs, rows, columns).":
        "랩 4.6의 Hopper attention backward를 sm_90 GPU에서 작고 까다로운 케이스로 float64와 비교합니다. 케이스마다 dQ, "
        "dK, dV의 오차를, 틀린 것은 어디가 틀렸는지(tile, warp slab, 행, 열)를 보여 줍니다.",
    "three of the cases": "케이스 세 개만",
    "non-causal": "non-causal",
}
