"""The Korean lines of `python -m course` (common/i18n.py): {english: korean}, with the same {placeholders}. The English
text is the key, so the English output reads exactly as written; tests/test_i18n.py checks that every tr() message of
course/ has its line here, and tests/test_course_korean.py that every exercise's TITLE has one."""

KO = {
    # ---- course/__main__.py: the command -----------------------------------------------------------------------------
    "every exercise, by phase, and where it runs (CPU or GPU)": "phase별 모든 연습 문제와 실행되는 곳(CPU 또는 GPU)",
    "check your answer to exercise 2.6.3": "연습 문제 2.6.3의 답을 검사합니다",
    "copy the starting point to my_work/2.6.3/ to edit": "시작 파일을 my_work/2.6.3/에 복사해 고칠 수 있게 합니다",
    "show the solution (try first)": "풀이를 보여 줍니다(먼저 직접 풀어 봅니다)",
    "in Korean (or COURSE_LANG=ko, or a Korean locale)": "한국어로 출력합니다(COURSE_LANG=ko나 한국어 locale도 같습니다)",
    "language of the output: en or ko (default: COURSE_LANG, else the locale; ko = Korean)":
        '출력 언어: en 또는 ko (기본값: COURSE_LANG, 없으면 locale. ko는 한국어)',
    "The course's own command: exercises that check themselves.":
        "이 과정의 명령입니다. 연습 문제마다 답을 스스로 검사합니다.",
    "every exercise, by phase": "phase별 모든 연습 문제",
    "check (or begin, or see the solution of) one exercise": "연습 문제 하나를 검사합니다(시작하거나 풀이를 볼 수도 있습니다)",
    "the exercise, e.g. 2.6.3": "연습 문제 번호, 예: 2.6.3",
    "copy the starting point to my_work/<id>/ to edit": "시작 파일을 my_work/<id>/에 복사해 고칠 수 있게 합니다",
    "print the solution file": "풀이 파일을 출력합니다",
    "check this file instead of my_work/<id>/<file>": "my_work/<id>/<file> 대신 이 파일을 검사합니다",
    "CPU only": "CPU만 있음",
    "{n} exercises (this machine: {here}); `python -m course exercise ID --begin` to start one\n":
        "연습 문제 {n}개 (이 컴퓨터: {here}). 하나를 시작하려면 `python -m course exercise ID --begin`을 실행합니다\n",
    "copied the starting point to {path}; the task: {readme}; check with `python -m course exercise {id}`":
        "시작 파일을 {path}에 복사했습니다. 문제는 {readme}에 있습니다. 검사는 `python -m course exercise {id}`로 합니다",
    "(no {path} yet: checking the starting point; `--begin` copies it for you to edit)":
        "({path} 파일이 아직 없어 시작 파일을 검사합니다. `--begin`이 고칠 수 있도록 복사해 줍니다)",
    "RIGHT: {why}": "정답: {why}",
    "NOT YET: {why}": "아직 아님: {why}",
    "CPU or GPU": "CPU 또는 GPU",
    "needs a GPU": "GPU 필요",
    "no exercise {id}; the exercises are {ids}": "연습 문제 {id}번은 없습니다. 연습 문제 목록: {ids}",
    "{path} exists already: edit it (delete it to start over)":
        "{path} 파일이 이미 있습니다. 그 파일을 고칩니다(처음부터 다시 하려면 지웁니다)",
    "exercise {id} needs a GPU to check ({why})": "연습 문제 {id}의 검사에는 GPU가 필요합니다({why})",

    # ---- course/checks.py: what the checkers share -------------------------------------------------------------------
    "MISMATCH: rel err {rel} (limit {limit}), {bad}/{n} finite elements outside {elem}, max abs {abs}":
        "불일치: 상대 오차 {rel} (허용치 {limit}), 유한한 원소 {bad}/{n}개가 {elem} 밖, 최대 절대 오차 {abs}",
    "shape {got} != reference shape {want}": "모양이 다릅니다: 출력 {got}, 기준 {want}",
    "wrote outside the output: {parts}": "출력 밖에 썼습니다: {parts}",
    " (elements left NaN were never written)": " (NaN으로 남은 원소는 한 번도 쓰이지 않았습니다)",
    "; {k} non-finite outputs (first at flat index {i}: unwritten?)":
        ". 유한하지 않은 출력 {k}개 (첫 번째는 flat index {i}: 쓰지 않은 원소일 수 있습니다)",
    "; {k} outputs differ where the reference is NaN/Inf (first at flat index {i}: reference {ref}, output {out})":
        ". 기준이 NaN/Inf인 곳에서 다른 출력 {k}개 (첫 번째는 flat index {i}: 기준 {ref}, 출력 {out})",
    "{k} element(s) before the output's start (the nearest {d} before it)":
        "출력 시작 앞의 원소 {k}개 (가장 가까운 것은 {d}칸 앞)",
    "{k} element(s) past its end (the first {d} after the last element)":
        "출력 끝 뒤의 원소 {k}개 (첫 번째는 마지막 원소 뒤 {d}칸)",
    "{before} and {after}": "{before}, {after}",
    "{file} does not load: {error}: {detail}": "{file} 파일을 불러올 수 없습니다: {error}: {detail}",
    "it does not compile: {errors}": "컴파일되지 않습니다: {errors}",
    "kernel {name}: {error}: {detail}": "커널 {name}: {error}: {detail}",
    "{case}: the kernel failed ({error}: {detail}); in the interpreter an access past the end of an array raises - on "
    "a GPU it would read or write memory that is not the array's":
        "{case}: 커널이 실패했습니다({error}: {detail}). interpreter에서는 배열 끝을 넘는 접근이 예외를 냅니다. "
        "GPU에서라면 그 배열이 아닌 메모리를 읽거나 씁니다",

    # ---- the exercises' titles (TITLE in each exercise.py) -----------------------------------------------------------
    "Fix the tail of a Triton vector add (any n, not only multiples of the block)":
        "Triton vector add의 tail 고치기 (block의 배수가 아닌 n도 포함한 모든 n)",
    "Predict the occupancy of four kernels on sm_90, and what limits each":
        "sm_90에서 커널 네 개의 occupancy와 각각을 제한하는 자원 예측하기",
    "Little's law: predict the bytes in flight per SM of four streaming kernels, and which cover HBM latency":
        "Little의 법칙: streaming 커널 네 개의 SM당 in-flight 바이트와 HBM latency를 가리는 커널 예측하기",
    "Count the 32-byte sectors a warp's loads touch in the naive matmul (both mappings, awkward shapes)":
        "naive matmul에서 warp의 load가 건드리는 32바이트 sector 세기 (두 가지 mapping, 까다로운 크기)",
    "Coalesce a naive matmul: fix the index so each warp's loads touch 4 sectors, not 17 (timed on a GPU)":
        "naive matmul coalescing: warp의 load가 sector 17개가 아닌 4개를 건드리도록 index 고치기 (GPU에서 시간 측정)",
    "A tiled transpose that is sometimes wrong: find the race between its warps and fix it (GPU)":
        "가끔 틀리는 tiled transpose: warp 사이의 race를 찾아 고치기 (GPU)",
    "Pad a shared tile: predict the bank-conflict passes of 17 warp loads and choose the padding":
        "shared tile에 padding 넣기: warp load 17개의 bank conflict pass 수를 예측하고 padding 고르기",
    "Waves and the tail: predict blocks per SM, waves, Little's-law GB/s and a partial wave's cost (lab 2.4)":
        "wave와 tail: SM당 block 수, wave 수, Little의 법칙으로 본 GB/s, 덜 찬 wave의 비용 예측하기 (랩 2.4)",
    "Make a grid-stride loop's loads and stores 16 bytes wide (LDG.E.128 in the SASS; any n)":
        "grid-stride loop의 load와 store를 16바이트 폭으로 만들기 (SASS의 LDG.E.128, 모든 n)",
    "Remove the spill of a kernel under __launch_bounds__(256, 8) without losing its occupancy (compile report)":
        "__launch_bounds__(256, 8) 아래 커널의 spill을 occupancy를 잃지 않고 없애기 (compile report)",
    "A float4 reduction that is right only for some lengths: find what it drops and fix it (GPU)":
        "일부 길이에서만 맞는 float4 reduction: 빠뜨리는 원소를 찾아 고치기 (GPU)",
    "A CUDA C softmax that breaks on large-magnitude rows: find the rows and fix it (GPU)":
        "절댓값이 큰 행에서 깨지는 CUDA C softmax: 그 행을 찾아 고치기 (GPU)",
    "Predict the load width Triton generates (BLOCK, num_warps, n % 16), checked against the compiler":
        "Triton이 만드는 load 폭 예측하기 (BLOCK, num_warps, n % 16), 컴파일러 결과와 대조",
    "Fix the 2-D mask of a row-sum tile kernel (rows of any length)":
        "row-sum tile 커널의 2차원 mask 고치기 (모든 길이의 행)",
    "Short rows: row sums of 262144 x 128 at least 2x faster than one program per row":
        "짧은 행: 262144 x 128의 행 합을 행마다 program 하나인 방식보다 2배 이상 빠르게",
    "Accumulate an fp16 matmul in fp32 (the result as accurate as fp16 output allows)":
        "fp16 matmul을 fp32로 누적하기 (fp16 출력이 허락하는 만큼 정확한 결과)",
    "Make a fused softmax survive rows of large magnitude (the max subtraction)":
        "fused softmax가 절댓값이 큰 행에서도 버티게 하기 (최댓값 빼기)",
    "Fix the variance of a LayerNorm forward (biased, over N, not N - 1)":
        "LayerNorm forward의 분산 고치기 (N - 1이 아닌 N으로 나누는 biased 분산)",
    "Place six kernels on the roofline by hand: bytes, FLOPs, unit, bound, roof":
        "커널 여섯 개를 손으로 roofline에 놓기: 바이트, FLOP, 연산 장치, bound, roof",
    "Count the bytes a fusion saves, and the speed-up they predict":
        "fusion으로 줄어드는 바이트와 그 바이트가 예측하는 속도 향상 세기",
    "Predict warps, shared memory and spills of six mma.sync tile configurations (NVRTC compile report)":
        "mma.sync tile 설정 여섯 가지의 warp 수, shared memory, spill 예측하기 (NVRTC compile report)",
    "Predict a GEMM tile's waves, reuse and the pipeline stages that fit (lab 4.4's models)":
        "GEMM tile의 wave, 재사용, 들어가는 pipeline stage 수 예측하기 (랩 4.4의 모델)",
    "fp16 accumulation against fp32: when it overflows, how its error grows with K, what bf16 inputs cost":
        "fp16 누적과 fp32 누적: 언제 overflow하는지, 오차가 K에 따라 어떻게 커지는지, bf16 입력의 비용은 얼마인지",
    "Fix the causal mask of a flash-attention forward (one key off)":
        "flash-attention forward의 causal mask 고치기 (key 하나 어긋남)",
    "Causal attention at the causal price: skip the key tiles past the diagonal":
        "causal 비용만 내는 causal attention: 대각선 너머의 key tile 건너뛰기",

    # ---- 1.2.1 -------------------------------------------------------------------------------------------------------
    "right for n = {sizes}: every element written once, none past the end (a mask on the loads and the store, and a "
    "grid of ceil(n / BLOCK) programs)":
        "n = {sizes}에서 맞습니다. 모든 원소를 한 번씩 쓰고 끝을 넘어서는 쓰지 않습니다(load와 store에 mask를 걸고, "
        "grid는 program ceil(n / BLOCK)개입니다)",
    "n = {why}. How many programs does grid(n) launch, and what does the last one do with its lanes past n?":
        "n = {why}. grid(n)은 program을 몇 개 띄웁니까? 마지막 program은 n을 넘는 lane으로 무엇을 합니까?",

    # ---- 1.5.1 -------------------------------------------------------------------------------------------------------
    "all four right: you counted threads, blocks, registers (per warp, in units of 256) and shared memory (with the "
    "runtime's 1 KiB per block) the way the hardware does":
        "네 개 모두 맞습니다. thread, block, register(warp 단위, 256개씩), shared memory(block마다 runtime이 쓰는 "
        "1 KiB 포함)를 하드웨어와 같은 방식으로 셌습니다",
    "keep the four kernels of the starting point": "시작 파일의 커널 네 개를 그대로 둡니다",
    "{n} of 4 not yet right: {reasons}": "4개 중 {n}개가 아직 맞지 않습니다:{reasons}",
    "{threads} threads x {regs} registers + {kib} KiB: you said {blocks} ({limit}); the calculator says {right} "
    "({limits})":
        "thread {threads}개 x register {regs}개 + {kib} KiB: 답은 {blocks} ({limit})입니다. 계산기는 {right} "
        "({limits})입니다",

    # ---- 1.5.2 -------------------------------------------------------------------------------------------------------
    "NVRTC gives it {regs} registers, so {blocks} blocks of {size} fit an SM ({limit} limit): {threads} threads x "
    "{per_thread} B":
        "NVRTC가 register {regs}개를 주므로 SM 하나에 {size}-thread block {blocks}개가 들어갑니다({limit} 제한). "
        "thread {threads}개 x {per_thread} B",
    "all right: bytes in flight per SM = resident threads (from registers and the occupancy rules) x the bytes each "
    "thread has outstanding, against bandwidth x latency / SMs. One float per thread leaves HBM waiting even at full "
    "occupancy; 16-byte loads, or several of them per thread, cover it with room to spare - even at the 75% occupancy "
    "mem_02's registers allow":
        "모두 맞습니다. SM당 in-flight 바이트는 상주 thread 수(register와 occupancy 규칙으로 정해짐) x thread마다 "
        "기다리는 load 바이트이고, 이것을 대역폭 x latency / SM 수와 비교합니다. thread마다 float 하나면 occupancy가 "
        "가득 차도 HBM이 기다립니다. 16바이트 load나 thread마다 그런 load 여러 개면 넉넉히 가립니다. mem_02의 "
        "register가 허락하는 75% occupancy에서도 그렇습니다",
    "two 4-byte loads, a[i] and b[i]": "4바이트 load 두 개, a[i]와 b[i]",
    "two 16-byte loads, a float4 of a and one of b": "16바이트 load 두 개, a의 float4 하나와 b의 float4 하나",
    "{n} independent 16-byte loads before the first add": "첫 덧셈 전에 서로 독립인 16바이트 load {n}개",
    "{n} independent 16-byte loads before the first multiply": "첫 곱셈 전에 서로 독립인 16바이트 load {n}개",
    "{name}: no answer yet": "{name}: 아직 답이 없습니다",
    "could not compile the labs' kernels here ({error}: {detail}); the labs' compile reports need the same NVRTC":
        "여기서는 랩의 커널을 컴파일할 수 없습니다({error}: {detail}). 랩의 compile report에도 같은 NVRTC가 필요합니다",
    "NEEDED_PER_SM: you said {said}; Little's law gives {tbps:.1f} TB/s x {us:.1f} us = {mb:.2f} MB in flight on the "
    "whole GPU, / {sms} SMs = {needed:,.0f} bytes per SM":
        "NEEDED_PER_SM: 답은 {said}입니다. Little의 법칙으로 {tbps:.1f} TB/s x {us:.1f} us = GPU 전체에서 in-flight "
        "{mb:.2f} MB이고, / SM {sms}개 = SM당 {needed:,.0f}바이트입니다",
    "{name}: you said {said} bytes; {how} ({what}) = {nbytes:,} bytes":
        "{name}: 답은 {said}바이트입니다. {how} ({what}) = {nbytes:,}바이트입니다",
    "COVERS[{name}]: {nbytes:,} bytes in flight >= the {needed:,.0f} needed, so it does cover the latency":
        "COVERS[{name}]: in-flight {nbytes:,}바이트 >= 필요한 {needed:,.0f}바이트이므로 latency를 가립니다",
    "COVERS[{name}]: {nbytes:,} bytes in flight < the {needed:,.0f} needed, so it does not cover the latency":
        "COVERS[{name}]: in-flight {nbytes:,}바이트 < 필요한 {needed:,.0f}바이트이므로 latency를 가리지 못합니다",

    # ---- 1.6.1 -------------------------------------------------------------------------------------------------------
    "the lanes read 128 consecutive bytes of row {kk} of B, which starts at byte {kk} x {n} x 4 = {start}, {offset} "
    "bytes into a sector: {count} sectors":
        "lane들은 B의 {kk}행에서 연속된 128바이트를 읽습니다. 그 행은 {kk} x {n} x 4 = {start}바이트에서 시작하고, "
        "sector 안으로 {offset}바이트 들어간 곳입니다: sector {count}개",
    "every lane reads the same {matrix} element: one address, 1 sector (a broadcast)":
        "모든 lane이 {matrix}의 같은 원소를 읽습니다. 주소 하나, sector 1개입니다(broadcast)",
    "lane l reads A[l, {kk}], {stride} bytes after lane l - 1: 32 addresses spanning {span} bytes, in {count} sectors":
        "lane l은 A[l, {kk}]를 읽고, lane l - 1보다 {stride}바이트 뒤입니다. 주소 32개가 {span}바이트에 걸쳐 "
        "sector {count}개에 들어갑니다",
    "all right: a load costs the distinct 32-byte sectors its 32 addresses fall in - one for a broadcast, four for 128 "
    "aligned contiguous bytes, a fifth when the row starts mid-sector, and one per lane once lanes are 32 bytes or "
    "more apart. The same instructions, another mapping: 33 sectors against 5 per step, the 6.6x lab 1.6 predicts (the "
    "H200 measured ~9x)":
        "모두 맞습니다. load 하나의 비용은 주소 32개가 들어가는 서로 다른 32바이트 sector의 수입니다. broadcast는 "
        "1개, 정렬된 연속 128바이트는 4개, 행이 sector 중간에서 시작하면 5개, lane 사이가 32바이트 이상이면 lane마다 "
        "1개입니다. 명령은 같고 mapping만 다릅니다. step마다 sector 33개 대 5개로, 랩 1.6이 예측하는 6.6배입니다"
        "(H200에서는 약 9배로 측정되었습니다)",
    "{case}: no answer yet (write a pair: A sectors, B sectors)":
        "{case}: 아직 답이 없습니다(A sector 수, B sector 수의 쌍으로 씁니다)",
    "RATIO at {shape}: no answer yet": "{shape}의 RATIO: 아직 답이 없습니다",
    "RATIO at {shape}: you said {said}; per k step the uncoalesced warp touches {ua:g} + {ub:g} sectors and the "
    "coalesced one {ca:g} + {cb:g} (averaged over 8 steps), so the model predicts {ratio:.2f}x":
        "{shape}의 RATIO: 답은 {said}입니다. k step마다 coalescing되지 않은 warp는 sector {ua:g} + {ub:g}개, "
        "coalescing된 warp는 {ca:g} + {cb:g}개를 건드립니다(8 step 평균). 그래서 모델은 {ratio:.2f}배로 예측합니다",
    "{case}, {matrix}: you said {said}; {why}": "{case}, {matrix}: 답은 {said}입니다. {why}",

    # ---- 1.6.2 -------------------------------------------------------------------------------------------------------
    "right on every shape, and at {m}^3 {yours:.2f} TFLOP/s against {first:.2f} for the starting kernel ({ratio:.1f}x; "
    "the sector model says 17 / 4 = 4.25x): with threadIdx.x on the column a warp's A load touches 2 sectors (two "
    "rows) and its B load 2 (64 consecutive bytes), where threadIdx.x on the row made A touch 16 and B 1":
        "모든 shape에서 맞습니다. {m}^3에서 {yours:.2f} TFLOP/s로, 시작 커널의 {first:.2f}보다 {ratio:.1f}배입니다"
        "(sector 모델의 예측은 17 / 4 = 4.25배). threadIdx.x가 열을 따라가면 warp의 A load는 sector 2개(두 행), "
        "B load는 2개(연속된 64바이트)를 건드립니다. threadIdx.x가 행을 따라갈 때는 A가 16개, B가 1개였습니다",
    "this exercise times kernels, which needs a GPU ({why})":
        "이 연습 문제는 커널의 시간을 재므로 GPU가 필요합니다({why})",
    "{file} must define extern \"C\" __global__ void {kernel}(A, B, C, M, N, K) and compile: {why}":
        "{file} 파일은 extern \"C\" __global__ void {kernel}(A, B, C, M, N, K)를 정의하고 컴파일되어야 합니다: {why}",
    "the starting kernel does not compile here, so there is nothing to time against: {why}":
        "여기서는 시작 커널이 컴파일되지 않아 비교할 시간이 없습니다: {why}",
    "right, but at {m}^3 yours ran at {yours:.2f} TFLOP/s and the starting kernel at {first:.2f} ({ratio:.2f}x, "
    "{needed:.0f}x needed). A warp is threadIdx.x = 0 .. 15 at two values of threadIdx.y: which of row and col should "
    "the 16 fast lanes walk so that one A load is a broadcast and one B load reads consecutive floats?":
        "맞지만 {m}^3에서 내 커널은 {yours:.2f} TFLOP/s, 시작 커널은 {first:.2f} TFLOP/s입니다({ratio:.2f}배, "
        "필요한 것은 {needed:.0f}배). warp 하나는 threadIdx.y 두 값에서 threadIdx.x = 0 .. 15입니다. A load 하나가 "
        "broadcast가 되고 B load 하나가 연속된 float를 읽으려면 빠르게 변하는 lane 16개가 row와 col 중 어느 쪽을 "
        "따라가야 합니까?",
    "{why}. Faster does not count until it is right: does every (row, col) of C get exactly one thread, and does each "
    "thread still check row < M and col < N?":
        "{why}. 빨라도 맞아야 인정됩니다. C의 모든 (row, col)이 thread를 정확히 하나씩 받습니까? thread마다 여전히 "
        "row < M과 col < N을 검사합니까?",
    "{m} x {n} x {k}: the kernel failed ({error}: {detail}); an index past the end of A, B or C is the usual cause":
        "{m} x {n} x {k}: 커널이 실패했습니다({error}: {detail}). 보통은 A, B, C의 끝을 넘는 index 때문입니다",

    # ---- 2.1.1 -------------------------------------------------------------------------------------------------------
    "{bad:,} of {size:,} elements wrong, in {tiles:,} of {all_tiles:,} tiles":
        "원소 {size:,}개 중 {bad:,}개가 틀렸고, tile {all_tiles:,}개 중 {tiles:,}개에 있습니다",
    "{words}{unwritten}: values written, but not the right ones. A warp writes elements that other warps loaded into "
    "the tile - were they in the tile yet?":
        "{words}{unwritten}: 값은 썼지만 맞는 값이 아닙니다. warp는 다른 warp가 tile에 load한 원소를 씁니다. 그때 "
        "그 원소가 이미 tile에 있었습니까?",
    "{words}, all of them never written: does every element of out get a thread, at the edges too?":
        "{words}. 모두 한 번도 쓰이지 않았습니다. 가장자리까지 out의 모든 원소가 thread를 받습니까?",
    "right on {shapes} shapes, the large ones {repeats} times: every warp now waits at __syncthreads() until the whole "
    "tile is in shared memory before it reads a column that other warps stored. Without it a warp whose loads "
    "returned early read elements its neighbours had not stored yet - left over from the previous tile or never "
    "written":
        "shape {shapes}개에서 맞습니다(큰 shape는 {repeats}번씩). 이제 모든 warp는 다른 warp가 저장한 열을 읽기 전에 "
        "tile 전체가 shared memory에 들어올 때까지 __syncthreads()에서 기다립니다. 이것이 없으면 load가 일찍 끝난 "
        "warp가 이웃 warp가 아직 저장하지 않은 원소를 읽었습니다. 이전 tile에서 남은 값이거나 한 번도 쓰이지 않은 "
        "값입니다",
    ", run {i} of {n}": ", {n}번 중 {i}번째 실행",
    " ({n:,} never written)": " (한 번도 쓰이지 않은 원소 {n:,}개)",
    'extern "C" __global__ void transpose_tiled(const float* in, float* out, long long M, long long N) '
    "launched with (32, 8)-thread blocks":
        'extern "C" __global__ void transpose_tiled(const float* in, float* out, long long M, long long N) '
        "((32, 8) thread block으로 launch)",

    # ---- 2.2.1 -------------------------------------------------------------------------------------------------------
    "a column read of tile[32][32 + p] takes gcd(32 + p, 32) passes, which is 1 for every odd pitch":
        "tile[32][32 + p]의 열 읽기는 gcd(32 + p, 32)번의 pass가 걸립니다. pitch가 홀수면 모두 1입니다",
    "a pitch that keeps rows 16-byte aligned is a multiple of 4, so gcd(pitch, 32) >= 4: no padding of an aligned tile "
    "gets under 4 passes, and pitch 36 is the first to reach 4 (40 gives 8, 48 gives 16)":
        "행을 16바이트로 정렬하는 pitch는 4의 배수이므로 gcd(pitch, 32) >= 4입니다. 정렬된 tile은 어떤 padding으로도 "
        "pass 4번 아래로 내려가지 않습니다. 4에 처음 닿는 pitch는 36입니다(40은 8, 48은 16)",
    " Measured on the H200, stride 16 took {s16:.2f} SM clocks per warp load and stride 33 {s33:.2f} ({lab}.json).":
        " H200에서 측정하면 warp load 하나에 stride 16은 SM clock {s16:.2f}, stride 33은 {s33:.2f}이 걸렸습니다"
        "({lab}.json).",
    "lane i asks bank {s} i % 32, which takes {values} different values, each asked by {lanes} for different words "
    "(gcd({s}, 32) = {g})":
        "lane i는 bank {s} i % 32에 요청합니다. 이 값은 서로 다른 {values}가지이고, bank마다 {lanes}가 서로 다른 "
        "word를 요청합니다(gcd({s}, 32) = {g})",
    "column of tile[32][{pitch}]": "tile[32][{pitch}]의 열",
    "lane i reads word {pitch} i + c, bank ({bank} i + c) % 32: the pitch acts as the lane stride, gcd({pitch}, 32) = "
    "{g}":
        "lane i는 word {pitch} i + c, bank ({bank} i + c) % 32를 읽습니다. pitch가 lane stride 역할을 합니다. "
        "gcd({pitch}, 32) = {g}",
    "all {total} right: passes = the most distinct words one bank is asked for, so a lane stride (or a tile's pitch, "
    "for a column read) costs gcd(stride, 32), shared words are free, and one word of padding makes a 32-wide column "
    "conflict-free - but an aligned pitch cannot beat 4 passes, which is why tensor-core kernels swizzle (1 pass, no "
    "padding) instead of padding.":
        "{total}개 모두 맞습니다. pass 수는 한 bank가 요청받는 서로 다른 word의 최대 개수입니다. 그래서 lane stride"
        "(열 읽기에서는 tile의 pitch)는 gcd(stride, 32)의 비용이 들고, 같은 word는 공짜이며, word 하나의 padding으로 "
        "폭 32인 열에서 bank conflict가 사라집니다. 하지만 정렬된 pitch는 pass 4번보다 나아질 수 없습니다. 그래서 "
        "tensor core 커널은 padding 대신 swizzle을 씁니다(pass 1번, padding 없음).",
    "{case}: you said {said}; it is {got} - {why}": "{case}: 답은 {said}이고, 정답은 {got}입니다. {why}",
    "{n} lane": "lane {n}개",
    "{n} lanes": "lane {n}개",
    "one word for all 32 lanes is a broadcast: 1 pass": "32개 lane 모두에 word 하나면 broadcast입니다: pass 1번",
    "16 distinct words in 16 different banks, each read by two lanes (a broadcast within the pair): 1 pass":
        "서로 다른 bank 16개에 서로 다른 word 16개가 있고, 각각 lane 두 개가 읽습니다(쌍 안에서는 broadcast): pass 1번",
    "16 distinct words 0, 32, 64, ..., all in bank 0: 16 passes (pairs of lanes share a word, so not 32)":
        "서로 다른 word 0, 32, 64, ... 16개가 모두 bank 0에 있습니다: pass 16번(lane 쌍이 word를 함께 쓰므로 32번이 "
        "아닙니다)",
    "bank (5 ^ i) % 32, and i -> 5 ^ i is a permutation of 0..31: 1 pass":
        "bank (5 ^ i) % 32이고, i -> 5 ^ i는 0..31의 순열입니다: pass 1번",
    "word 65 i + 2087, bank (i + 7) % 32 since 65 = 2 x 32 + 1 and 2087 = 65 x 32 + 7: 32 different banks, 1 pass":
        "word 65 i + 2087이고, 65 = 2 x 32 + 1이며 2087 = 65 x 32 + 7이므로 bank는 (i + 7) % 32입니다: 서로 다른 "
        "bank 32개, pass 1번",

    # ---- 2.4.1 -------------------------------------------------------------------------------------------------------
    " Measured on the H200 ({lab}.json): {t0:.3f}, {t1:.3f} and {t2:.3f} wave-times at 1.1, 1.25 and 2.5 waves; "
    "{g0:,.0f}, {g1:,.0f} and {g2:,.0f} GB/s at 1/8, 1/4 and 1 wave of 256-thread blocks - the model holds where the "
    "kernel is latency-bound, and over-promises where queueing in the memory system raises the latency.":
        " H200에서 측정한 값({lab}.json): 1.1, 1.25, 2.5 wave에서 각각 wave 시간의 {t0:.3f}, {t1:.3f}, {t2:.3f}배이고, "
        "256-thread block의 1/8, 1/4, 1 wave에서 {g0:,.0f}, {g1:,.0f}, {g2:,.0f} GB/s입니다. 커널이 latency-bound인 "
        "곳에서는 모델이 맞고, 메모리 시스템의 대기열이 latency를 늘리는 곳에서는 모델이 너무 좋게 예측합니다.",
    "every started wave costs a whole one: ceil(w)": "시작한 wave는 모두 wave 하나의 시간이 듭니다: ceil(w)",
    "time in proportion to the work: w": "시간이 일의 양에 비례합니다: w",
    "{full} full wave(s), then the last {f:.2g} of a wave with {threads:,.0f} threads resident: {gbps:,.0f} GB/s "
    "against {ceiling:,.0f} for a full wave, so that part takes {f:.2g} x {ceiling:,.0f} / that":
        "가득 찬 wave {full}개 다음에 마지막 {f:.2g} wave가 남고, 그때 상주 thread는 {threads:,.0f}개입니다. 가득 찬 "
        "wave의 {ceiling:,.0f} GB/s 대신 {gbps:,.0f} GB/s이므로 그 부분은 {f:.2g} x {ceiling:,.0f} / 그 값만큼 걸립니다",
    "{name} is {v:.3g}, not {s} ({why})": "{name}: 답은 {s}, 정답은 {v:.3g}입니다({why})",
    "all {total} right: residency is the smallest of the SM's limits (32-thread blocks hit the 32-block limit at half "
    "the threads), a wave is 132 x that, and a memory-bound kernel's bandwidth is bytes in flight over latency until "
    "the ceiling. A partial wave is latency-bound, so its time does not shrink with its size: any last wave under "
    "~0.28 costs ~0.28 of a wave, not a whole one.":
        "{total}개 모두 맞습니다. 상주 block 수는 SM의 제한 중 가장 작은 값입니다(32-thread block은 thread의 절반에서 "
        "block 32개 제한에 걸립니다). wave는 그 132배이고, memory-bound 커널의 대역폭은 한계에 닿기 전까지 in-flight "
        "바이트를 latency로 나눈 값입니다. 덜 찬 wave는 latency-bound라서 크기가 줄어도 시간이 줄지 않습니다. 약 "
        "0.28보다 작은 마지막 wave는 wave 하나가 아니라 약 0.28 wave의 시간이 듭니다.",
    "could not compile lab {lab}'s kernels.cu here ({error}: {detail}); its compile report needs the same":
        "여기서는 랩 {lab}의 kernels.cu를 컴파일할 수 없습니다({error}: {detail}). 그 랩의 compile report에도 같은 "
        "컴파일이 필요합니다",
    "TAIL[{w}]: no answer yet (three numbers: quantized, fluid, Little's law)":
        "TAIL[{w}]: 아직 답이 없습니다(숫자 세 개: quantized, fluid, Little의 법칙)",
    "BLOCKS_PER_SM[{t}]: you said {said}; it is {bps}, limited by {limits} - threads allow {by_threads}, blocks 32, "
    "registers ({regs} a thread, {per_warp} a warp) {by_regs}":
        "BLOCKS_PER_SM[{t}]: 답은 {said}이고, 정답은 {bps}입니다. 제한하는 자원은 {limits}입니다. thread로는 "
        "{by_threads}, block으로는 32, register로는(thread당 {regs}개, warp당 {per_warp}개) {by_regs}입니다",
    "WAVES[{t}, {grid}]: you said {said}; a wave of {t}-thread blocks is {sms} SMs x {per_sm} = {wave} blocks, so "
    "{grid} blocks are {waves:.4g} waves":
        "WAVES[{t}, {grid}]: 답은 {said}입니다. {t}-thread block의 wave 하나는 SM {sms}개 x {per_sm} = block "
        "{wave}개이므로 block {grid}개는 {waves:.4g} wave입니다",
    " - more than the ceiling, so the ceiling": " (한계보다 크므로 한계)",
    "GBPS[{t}, {grid}]: you said {said}; {resident:,} resident threads x 16 B = {kib:,.0f} KiB of loads in flight, / "
    "{us} us = {reads:,.0f} GB/s of reads, x 2 for the writes{capped}: {want:,.0f} GB/s":
        "GBPS[{t}, {grid}]: 답은 {said}입니다. 상주 thread {resident:,}개 x 16 B = in-flight load {kib:,.0f} KiB, "
        "/ {us} us = 읽기 {reads:,.0f} GB/s, 쓰기까지 x 2{capped}: {want:,.0f} GB/s",

    # ---- 2.4.2 -------------------------------------------------------------------------------------------------------
    "{why} (the compile report for sm_90: {report})": "{why} (sm_90의 compile report: {report})",
    "n = {n}, {blocks} blocks of {threads} threads": "n = {n}, {threads}-thread block {blocks}개",
    "the loop still moves 4 bytes per access: read x as float4 (reinterpret_cast<const float4*>) and write y as "
    "float4, one 16-byte load and one 16-byte store per iteration":
        "loop가 아직 접근마다 4바이트를 옮깁니다. x를 float4로 읽고(reinterpret_cast<const float4*>) y를 float4로 "
        "써서 반복마다 16바이트 load 하나와 16바이트 store 하나로 만듭니다",
    "; the last {k} element(s) (n % 4) stay unwritten: the tail":
        ". 마지막 원소 {k}개(n % 4)가 쓰이지 않은 채 남습니다: tail입니다",
    "{what}: {message}{tail}. Does every element belong to exactly one float4 or to the scalar tail, for every grid?":
        "{what}: {message}{tail}. 어떤 grid에서든 모든 원소가 float4 하나나 scalar tail 중 정확히 한 곳에 속합니까?",
    "every load is 16 bytes wide, so nothing reads the last n % 4 elements: a float4 cannot start past the last whole "
    "group of 4, and those elements need single-float accesses":
        "모든 load가 16바이트 폭이라 마지막 n % 4개 원소는 아무도 읽지 않습니다. float4는 마지막 온전한 4개 묶음 "
        "너머에서 시작할 수 없으므로 그 원소들에는 float 하나씩의 접근이 필요합니다",
    "the compile report for sm_90 shows what was asked: {report}, {regs} registers, no spill - one 16-byte load in "
    "flight per thread where there were 4 bytes, and a quarter of the load and store instructions":
        "sm_90의 compile report가 요구한 대로입니다: {report}, register {regs}개, spill 없음. thread마다 4바이트였던 "
        "in-flight load가 16바이트 load 하나가 되었고, load와 store 명령은 4분의 1로 줄었습니다",
    "ptxas spills {n} bytes: nothing here needs more than a few registers":
        "ptxas가 {n}바이트를 spill합니다. 이 커널에는 register가 몇 개만 있으면 됩니다",

    # ---- 2.5.1 -------------------------------------------------------------------------------------------------------
    "{regs} registers, {stores} B spill stores / {loads} B spill loads, {stack} B stack frame, {stl} STL / {ldl} LDL, "
    "{smem} B shared":
        "register {regs}개, spill store {stores} B / spill load {loads} B, stack frame {stack} B, STL {stl} / LDL "
        "{ldl}, shared {smem} B",
    "{blocks} blocks of {threads} threads fit on an SM, limited by {limits}; the task keeps {keep} (100% occupancy): "
    "at most 65536 / ({threads} x {keep}) = 32 registers a thread, and no shared memory to speak of":
        "SM 하나에 {threads}-thread block {blocks}개가 들어가고, 제한하는 자원은 {limits}입니다. 이 연습 문제는 "
        "{keep}개(100% occupancy)를 지킵니다. 그러려면 thread당 register가 많아야 65536 / ({threads} x {keep}) = "
        "32개이고, shared memory는 거의 쓰지 않아야 합니다",
    "{rows} x {cols}: {message}. Spill-free does not count until it is right: every column's norm over all its rows, "
    "every element of y written once":
        "{rows} x {cols}: {message}. spill이 없어도 맞아야 인정됩니다. 모든 열의 norm을 그 열의 모든 행에 걸쳐 "
        "계산하고, y의 모든 원소를 한 번씩 씁니다",
    "ptxas spills: 32 registers cannot hold 32 column values plus the addresses and the sum, so some go to local "
    "memory (STL/LDL). The cap is fixed; what the thread keeps live is not - does it need every value of its column "
    "at once?":
        "ptxas가 spill합니다. register 32개에는 열의 값 32개와 주소와 합을 모두 담을 수 없어서 일부가 local "
        "memory(STL/LDL)로 갑니다. 상한은 고정이지만 thread가 살려 두는 값은 바꿀 수 있습니다. 열의 모든 값이 한꺼번에 "
        "필요합니까?",
    "the compile report for sm_90: {report}, {blocks} blocks of {threads} per SM - the promise kept, nothing in local "
    "memory: a thread that holds one running sum instead of its whole column fits 32 registers; the price is a second "
    "read of x, mostly from L2, where the spill paid local-memory stores and loads":
        "sm_90의 compile report: {report}, SM당 {threads}-thread block {blocks}개. 약속을 지켰고 local memory에는 "
        "아무것도 없습니다. 열 전체 대신 누적 합 하나만 들고 있는 thread는 register 32개에 들어갑니다. 그 대가는 "
        "x를 한 번 더 읽는 것이고 대부분 L2에서 옵니다. spill은 그 대가로 local memory의 store와 load를 치렀습니다",
    "0 bytes spilled, but a stack frame (local memory: LDL/STL in the SASS) - an array indexed at run time lives "
    "there, the silent cousin of a spill (lab 2.5's colnorm_03)":
        "spill은 0바이트지만 stack frame이 있습니다(local memory: SASS의 LDL/STL). 실행 중에 index하는 배열은 "
        "그곳에 놓입니다. 조용한 spill이라 할 수 있습니다(랩 2.5의 colnorm_03)",

    # ---- 2.6.1 -------------------------------------------------------------------------------------------------------
    "the result is {got:g}, the exact sum {want:g}": "결과는 {got:g}이고, 정확한 합은 {want:g}입니다",
    "{result}: NaN - a partial or the result was never written, or a NaN was read past the end":
        "{result}: NaN입니다. partial이나 결과가 쓰이지 않았거나, 끝을 넘어 NaN을 읽었습니다",
    "{what}: {why}. Every element belongs to exactly one of: the head, a whole float4, what comes after them":
        "{what}: {why}. 모든 원소는 앞부분(head), 온전한 float4, 그 뒤의 나머지 중 정확히 한 곳에 속합니다",
    "exact for {n} lengths from 1 to {last:,} and views at every 4-byte offset: the body is read as float4 (16-byte "
    "loads, 16 bytes in flight per thread per step), the up to 3 floats before the first 16-byte boundary and the up "
    "to 3 after the last whole float4 one float each, by the first threads of the grid - in both launches":
        "1부터 {last:,}까지 길이 {n}가지와 4바이트 offset마다의 view에서 정확합니다. 본문은 float4로 읽고(16바이트 "
        "load, step마다 thread당 16바이트 in flight), 첫 16바이트 경계 앞의 float 최대 3개와 마지막 온전한 float4 "
        "뒤의 최대 3개는 grid의 앞쪽 thread가 하나씩 읽습니다. 두 launch 모두 그렇습니다",
    ", a view {b} bytes past a 16-byte boundary": ", 16바이트 경계에서 {b}바이트 뒤에 시작하는 view",
    "the {n} elements after the last whole float4 sum {total:g}": "마지막 온전한 float4 뒤의 원소 {n}개는 합이 {total:g}입니다",
    "the {n} element after the last whole float4 is {total:g}": "마지막 온전한 float4 뒤의 원소 {n}개는 {total:g}입니다",
    "the {n} elements before the first float4 (the view starts {b} bytes past a 16-byte boundary) sum {total:g}":
        "첫 float4 앞의 원소 {n}개는 합이 {total:g}입니다(view가 16바이트 경계에서 {b}바이트 뒤에 시작합니다)",
    "the {n} element before the first float4 (the view starts {b} bytes past a 16-byte boundary) is {total:g}":
        "첫 float4 앞의 원소 {n}개는 {total:g}입니다(view가 16바이트 경계에서 {b}바이트 뒤에 시작합니다)",
    "and the second launch sums {n} partials, {k} of them after its last whole float4":
        "두 번째 launch도 partial {n}개를 더하고, 그중 {k}개는 마지막 온전한 float4 뒤에 있습니다",
    "and the second launch sums {n} partial, {k} of them after its last whole float4":
        "두 번째 launch도 partial {n}개를 더하고, 그중 {k}개는 마지막 온전한 float4 뒤에 있습니다",

    # ---- 2.7.1 -------------------------------------------------------------------------------------------------------
    "Row {r}'s largest value is {top:.0f}, and {fate}. Softmax does not change when every value of a row moves by the "
    "same amount: which amount keeps every exp in range - and does the kernel already have it?":
        "{r}행의 최댓값은 {top:.0f}입니다. {fate}. softmax는 한 행의 모든 값을 같은 양만큼 옮겨도 변하지 않습니다. "
        "어떤 양을 빼야 모든 exp가 범위 안에 머뭅니까? 커널이 그 값을 이미 가지고 있습니까?",
    "exp({top:.0f}) is inf in fp32, whose largest value is 3.4e38 = e^{limit:.1f}: the row's sum is inf, and inf / inf "
    "is NaN":
        "fp32의 최댓값은 3.4e38 = e^{limit:.1f}이므로 exp({top:.0f})는 fp32에서 inf입니다. 행의 합이 inf가 되고, "
        "inf / inf는 NaN입니다",
    "NaN or inf where the reference is finite": "기준은 유한한데 NaN이나 inf가 나왔습니다",
    "right on rows near 0, +30, +89, +100, -90 and -120 (with -inf entries): with the row max subtracted every "
    "exponent is <= 0, so exp never overflows, and the largest term is exactly 1, so the sum never underflows. The max "
    "was already computed - the bug was one subtraction in two places, and it cost no extra pass over memory":
        "0, +30, +89, +100, -90, -120 근처의 행(-inf 원소 포함)에서 맞습니다. 행의 최댓값을 빼면 모든 지수가 <= 0이라 "
        "exp가 overflow하지 않고, 가장 큰 항이 정확히 1이라 합이 underflow하지 않습니다. 최댓값은 이미 계산되어 "
        "있었습니다. 버그는 두 곳에서 빠진 뺄셈 하나였고, 고쳐도 메모리를 한 번 더 훑지 않습니다",
    "exp({top:.0f}) is below the smallest normal fp32, e^{limit:.1f}: every term is a subnormal with few bits left, or "
    "0, so the sum is inexact or 0, and 0 / 0 is NaN":
        "exp({top:.0f})는 fp32의 가장 작은 normal 값 e^{limit:.1f}보다 작습니다. 모든 항이 비트가 얼마 남지 않은 "
        "subnormal이거나 0이라 합이 부정확하거나 0이 되고, 0 / 0은 NaN입니다",
    "row {r} is neither large nor small (its max is {top:.0f}): compare your kernel with the starting point":
        "{r}행은 크지도 작지도 않습니다(최댓값 {top:.0f}). 내 커널을 시작 파일과 비교해 봅니다",
    "{rows} x {cols}: rows {shown} wrong ({how}). ": "{rows} x {cols}: {shown}행이 틀렸습니다({how}). ",
    'extern "C" __global__ void softmax_warp_rows(const float* x, float* y, long long rows, int cols) '
    "launched with (32, 4)-thread blocks (a warp per row)":
        'extern "C" __global__ void softmax_warp_rows(const float* x, float* y, long long rows, int cols) '
        "((32, 4) thread block으로 launch, 행마다 warp 하나)",

    # ---- 3.1.1 -------------------------------------------------------------------------------------------------------
    "all five right: a thread loads its BLOCK / (32 x num_warps) consecutive floats up to 16 bytes at a time, and only "
    "when n is known divisible by 16 - the mask of a 4-float vector must be provably all-true or all-false. A GPU "
    "launch learns n % 16 and the pointers' alignment from the actual arguments, so the same kernel can load 16 or 4 "
    "bytes at a time":
        "다섯 개 모두 맞습니다. thread는 연속된 float BLOCK / (32 x num_warps)개를 한 번에 최대 16바이트씩 load합니다. "
        "단, n이 16으로 나누어떨어진다고 알려진 경우에만 그렇습니다. float 4개짜리 vector의 mask가 모두 참이거나 모두 "
        "거짓이라고 증명할 수 있어야 하기 때문입니다. GPU launch는 실제 인자에서 n % 16과 pointer의 정렬을 알아내므로 "
        "같은 커널이 한 번에 16바이트를 load할 수도, 4바이트를 load할 수도 있습니다",
    "keep the five cases of the starting point as keys of ANSWERS: {keys}":
        "시작 파일의 다섯 경우를 ANSWERS의 key로 그대로 둡니다: {keys}",
    "{n} of {total} not yet right: {reasons}": "{total}개 중 {n}개가 아직 맞지 않습니다:{reasons}",
    "n odd": "n은 홀수",
    "{block} / (32 x {warps}) = {n} floats a thread": "{block} / (32 x {warps}) = thread당 float {n}개",
    "{block} / (32 x {warps}) = {n} float a thread": "{block} / (32 x {warps}) = thread당 float {n}개",
    "BLOCK={block}, num_warps={warps}, {n_text}: you said {said}, the compiler made {count} x {width}-byte loads per "
    "array ({why})":
        "BLOCK={block}, num_warps={warps}, {n_text}: 답은 {said}입니다. 컴파일러는 배열마다 {width}바이트 load를 "
        "{count}개 만들었습니다({why})",
    "could not compile the vector add ahead of time here ({error}: {detail}); lab 3.1's compile report needs the same":
        "여기서는 vector add를 ahead-of-time으로 컴파일할 수 없습니다({error}: {detail}). 랩 3.1의 compile report에도 "
        "같은 컴파일이 필요합니다",
    ", {n} per load (at most 16 bytes)": ", load 하나에 {n}개(최대 16바이트)",
    ", but with n odd no 4-float group is known to be all in or all out of the mask, so one float at a time":
        ". 하지만 n이 홀수면 float 4개 묶음이 mask 안에 모두 있는지, 모두 밖에 있는지 알 수 없으므로 한 번에 float "
        "하나씩입니다",

    # ---- 3.1.2 -------------------------------------------------------------------------------------------------------
    "{reasons}. The mask says which rows exist; what says which columns do?":
        "{reasons}. mask는 어떤 행이 있는지 알려 줍니다. 어떤 열이 있는지는 무엇이 알려 줍니까?",
    "right at {shapes}: every lane of the tile loads only where its row AND its column exist - a (BLOCK_M, 1) row mask "
    "broadcast against a (1, BLOCK_N) column mask - and the store only where the row exists":
        "{shapes}에서 맞습니다. tile의 모든 lane은 행과 열이 둘 다 있는 곳에서만 load합니다((BLOCK_M, 1) 행 mask와 "
        "(1, BLOCK_N) 열 mask의 broadcast). store는 행이 있는 곳에서만 합니다",
    "row 0's sum is too large by exactly the first {over} values of row 1: in the last column step {over} of the "
    "tile's {block_n} lanes lie past the end of the {cols}-column row, and the addresses there belong to the next row":
        "0행의 합이 정확히 1행의 첫 값 {over}개만큼 큽니다. 마지막 열 step에서 tile의 lane {block_n}개 중 {over}개가 "
        "열 {cols}개짜리 행의 끝을 넘어가고, 그 주소는 다음 행의 것입니다",
    "the last row's sum is NaN: its lanes past the end read past the end of the whole array (NaN here; on a GPU "
    "whatever lies there, or an illegal-address fault)":
        "마지막 행의 합이 NaN입니다. 끝을 넘은 lane이 배열 전체의 끝 너머를 읽습니다(여기서는 NaN, GPU에서는 그곳에 "
        "있는 아무 값이나 illegal-address fault)",
    "the sums differ from the reference in a way the starting point's bug does not explain":
        "합이 기준과 다른데, 시작 파일의 버그로는 설명되지 않는 방식입니다",
    " (right at {shapes})": " ({shapes}에서는 맞음)",

    # ---- 3.1.3 -------------------------------------------------------------------------------------------------------
    "right for every row length, and {rows} x {cols}: yours {mine:,.0f} GB/s against {theirs:,.0f} GB/s for one "
    "program per row ({ratio:.1f}x): with several rows per program each thread has many floats in flight and one "
    "program's reduction and bookkeeping serve many rows":
        "모든 행 길이에서 맞습니다. {rows} x {cols}에서 내 커널은 {mine:,.0f} GB/s, 행마다 program 하나인 방식은 "
        "{theirs:,.0f} GB/s입니다({ratio:.1f}배). program 하나가 여러 행을 맡으면 thread마다 in-flight float가 많아지고, "
        "program 하나의 reduction과 부수 작업이 여러 행에 쓰입니다",
    "{file} must define rowsum(x, out), as the starting point does":
        "{file} 파일은 시작 파일처럼 rowsum(x, out)을 정의해야 합니다",
    "right, but {rows} x {cols}: yours {mine:,.0f} GB/s, one program per row {theirs:,.0f} GB/s ({ratio:.2f}x, "
    "{needed:.0f}x needed). A program of one {row_bytes}-byte row gives each of its threads a single float to load "
    "and pays a whole block reduction (shuffles, shared memory, a barrier) and its own start and end for {row_bytes} "
    "bytes, {rows} times: what does a program that owns several rows change?":
        "맞지만 {rows} x {cols}에서 내 커널은 {mine:,.0f} GB/s, 행마다 program 하나인 방식은 {theirs:,.0f} GB/s입니다"
        "({ratio:.2f}배, 필요한 것은 {needed:.0f}배). {row_bytes}바이트 행 하나를 맡는 program은 thread마다 float 하나만 "
        "load하게 하고, {row_bytes}바이트를 위해 block reduction 전체(shuffle, shared memory, barrier)와 program의 "
        "시작과 끝을 치릅니다. 그것도 {rows}번입니다. program이 여러 행을 맡으면 무엇이 달라집니까?",
    "{rows} x {cols}: {wrong}. Faster does not count until it is right: check the masks of a multi-row tile (row AND "
    "column) and the grid (every row in exactly one program)":
        "{rows} x {cols}: {wrong}. 빨라도 맞아야 인정됩니다. 여러 행 tile의 mask(행과 열 둘 다)와 grid(모든 행이 "
        "정확히 한 program에 속함)를 확인합니다",
    "{rows} x {cols}: rowsum failed ({error}: {detail})": "{rows} x {cols}: rowsum이 실패했습니다({error}: {detail})",

    # ---- 3.2.1 -------------------------------------------------------------------------------------------------------
    "M, N, K = {m}, {n}, {k} ({dist} fp16 inputs)": "M, N, K = {m}, {n}, {k} ({dist} fp16 입력)",
    "C within one fp16 rounding of the float64 product at K up to 8192 and on ragged tiles: the products of fp16 "
    "inputs are exact in fp32, the sum stays in fp32 (24 bits) for all {steps} K-steps, and C is rounded to fp16 once, "
    "at the store":
        "K가 8192까지이고 tile이 들쭉날쭉한 경우에도 C가 float64 곱과 fp16 반올림 한 번 이내로 같습니다. fp16 입력의 "
        "곱은 fp32에서 정확하고, 합은 K-step {steps}번 내내 fp32(24비트)에 머물며, C는 store할 때 한 번만 fp16으로 "
        "반올림됩니다",
    "{what}: relative error {err:.1e}, {times:.1f}x one rounding to fp16 (2^-11 = {u:.1e}), which is all fp16 output "
    "must lose. A 16-bit accumulator is rounded to 11 significant bits after each of the {steps} K-steps, at the size "
    "of the running sum (near |C|, so each rounding costs as much as the final one), and those errors add up. Where "
    "should the sum live, and when should it become fp16?":
        "{what}: 상대 오차는 {err:.1e}이고, fp16 반올림 한 번(2^-11 = {u:.1e})의 {times:.1f}배입니다. fp16 출력이 잃어야 "
        "하는 것은 그 한 번뿐입니다. 16비트 accumulator는 K-step {steps}번마다 누적 합의 크기에서 유효 비트 11개로 "
        "반올림됩니다(누적 합은 |C|에 가까우므로 반올림 한 번이 마지막 반올림만큼 비쌉니다). 그 오차가 쌓입니다. 합은 "
        "어디에 두어야 하고, 언제 fp16이 되어야 합니까?",
    "{what}: NaN or inf in C ({message}): some elements were never written, or a mask lets values past the end of A or "
    "B in":
        "{what}: C에 NaN이나 inf가 있습니다({message}). 쓰이지 않은 원소가 있거나, mask가 A나 B의 끝 너머 값을 "
        "들여보냅니다",

    # ---- 3.3.1 -------------------------------------------------------------------------------------------------------
    "{reasons}. Softmax does not change when every value of a row moves by the same amount: which amount keeps every "
    "exp(x) in range, and costs no extra pass over memory?":
        "{reasons}. softmax는 한 행의 모든 값을 같은 양만큼 옮겨도 변하지 않습니다. 어떤 양을 빼야 모든 exp(x)가 범위 "
        "안에 머물고, 메모리를 한 번 더 훑지 않아도 됩니까?",
    "the wrong rows are not the large or small ones: compare your kernel with the starting point":
        "틀린 행은 값이 크거나 작은 행이 아닙니다. 내 커널을 시작 파일과 비교해 봅니다",
    "right on rows near 0, +30, +89, +100, -90 and -120 (fp32 and fp16, -inf entries too): with the row maximum "
    "subtracted every exponent is <= 0, so exp never overflows, and the largest term is exactly 1, so the sum never "
    "underflows - one more reduction on registers, no extra pass over memory":
        "0, +30, +89, +100, -90, -120 근처의 행(fp32와 fp16, -inf 원소 포함)에서 맞습니다. 행의 최댓값을 빼면 모든 "
        "지수가 <= 0이라 exp가 overflow하지 않고, 가장 큰 항이 정확히 1이라 합이 underflow하지 않습니다. register 위의 "
        "reduction 하나가 늘 뿐이고, 메모리를 한 번 더 훑지 않습니다",
    "row {r}'s largest value is {top:.0f}: exp(x) is inf above {limit:.1f} in fp32 (the largest fp32 is 3.4e38 = "
    "e^88.7), and inf / inf is NaN":
        "{r}행의 최댓값은 {top:.0f}입니다. fp32에서 exp(x)는 {limit:.1f}보다 크면 inf이고(fp32의 최댓값은 3.4e38 = "
        "e^88.7), inf / inf는 NaN입니다",
    "row {r}'s largest value is {top:.0f}: every exp(x) falls under the smallest normal fp32 (e^{limit:.1f}) - "
    "subnormal with few bits left, or 0 - so the sum is inexact or 0, and 0 / 0 is NaN":
        "{r}행의 최댓값은 {top:.0f}입니다. 모든 exp(x)가 fp32의 가장 작은 normal 값(e^{limit:.1f})보다 작아서 비트가 "
        "얼마 남지 않은 subnormal이거나 0입니다. 그래서 합이 부정확하거나 0이 되고, 0 / 0은 NaN입니다",

    # ---- 3.4.1 -------------------------------------------------------------------------------------------------------
    "rstd differs from the reference's by a factor that changes from row to row ({lo:.4f} to {hi:.4f}): look at how "
    "the variance is computed (the rows have means up to 1000: a one-pass E[x^2] - E[x]^2 cancels catastrophically "
    "there in fp32; the centred sum does not)":
        "rstd가 기준과 행마다 다른 배율({lo:.4f}부터 {hi:.4f}까지)로 다릅니다. 분산을 계산하는 방식을 봅니다(행의 "
        "평균이 1000까지 갑니다. 그곳에서 한 번에 계산하는 E[x^2] - E[x]^2는 fp32에서 catastrophic cancellation을 "
        "일으킵니다. 중심화한 합은 그렇지 않습니다)",
    "rstd is NaN or inf at N = {n}: a row of one value has variance 0, and 0 / (N - 1) = 0 / 0. Which N does LayerNorm "
    "divide by?":
        "N = {n}에서 rstd가 NaN이나 inf입니다. 값이 하나인 행은 분산이 0이고, 0 / (N - 1) = 0 / 0입니다. LayerNorm은 "
        "무엇으로 나눕니까?",
    "rstd is {ratio:.5f}x the reference's in every row - the same factor whatever the row's values, so it depends on "
    "N = {n} alone (compare sqrt((N - 1) / N) = {factor:.5f}): your variance is the sample variance, N / (N - 1) times "
    "LayerNorm's. Even at N = 4096 that is 1.2e-4 relative, over ten times fp32's tolerance":
        "모든 행에서 rstd가 기준의 {ratio:.5f}배입니다. 행의 값과 관계없이 같은 배율이므로 N = {n}에만 달려 있습니다"
        "(sqrt((N - 1) / N) = {factor:.5f}와 비교해 봅니다). 내 분산은 표본 분산이고, LayerNorm 분산의 N / (N - 1)배"
        "입니다. N = 4096에서도 상대 오차 1.2e-4로, fp32 허용 오차의 10배가 넘습니다",
    "{rows} rows x N = {n} {dtype}": "{rows}행 x N = {n} {dtype}",
    "y, mean and rstd right for N = 1, 2, 37, 300 and 4096 (fp32 and fp16, row means up to 1000): LayerNorm divides "
    "the centred sum of squares by N - the population variance of the row, the statistic it normalizes by - and the "
    "centred form keeps it exact for large means":
        "N = 1, 2, 37, 300, 4096(fp32와 fp16, 행 평균은 1000까지)에서 y, mean, rstd가 맞습니다. LayerNorm은 중심화한 "
        "제곱합을 N으로 나눕니다. 그것이 정규화의 기준인 행의 모분산입니다. 중심화한 형태는 평균이 커도 정확합니다",
    "{what}: mean wrong ({message}): the mean is the sum of the row's N values over N":
        "{what}: mean이 틀렸습니다({message}). 평균은 행의 값 N개의 합을 N으로 나눈 값입니다",
    "{what}: {name} wrong ({message}). ": "{what}: {name} 값이 틀렸습니다({message}). ",

    # ---- 4.1.1 -------------------------------------------------------------------------------------------------------
    "all six placed as lab 4.1 places them: the vector add (0.083 FLOP/B) and the softmax (0.625) far left of every "
    "ridge, the k = 64 chain (16 FLOP/B) just right of the fp32 ridge (11.8), both GEMMs at 1365 FLOP/B far right of "
    "theirs, and naive attention - two matmuls - left of the bf16 ridge (60 against 157 FLOP/B) because S and P go "
    "through HBM: memory-bound":
        "여섯 개 모두 랩 4.1과 같은 자리에 놓았습니다. vector add(0.083 FLOP/B)와 softmax(0.625)는 모든 ridge의 훨씬 "
        "왼쪽, k = 64 chain(16 FLOP/B)은 fp32 ridge(11.8)의 바로 오른쪽, 두 GEMM은 1365 FLOP/B로 각자의 ridge보다 훨씬 "
        "오른쪽입니다. naive attention은 matmul 두 개인데도 S와 P가 HBM을 거치므로 bf16 ridge의 왼쪽(157 FLOP/B 대 "
        "60)에 있어 memory-bound입니다",
    "read a and b, write c: 3 x 4 bytes an element": "a와 b를 읽고 c를 씁니다: 원소마다 3 x 4바이트",
    "one add an element": "원소마다 덧셈 하나",
    "read x, write y: 2 x 4 bytes an element": "x를 읽고 y를 씁니다: 원소마다 2 x 4바이트",
    "5 an element": "원소마다 5",
    "read x, write y: 8 bytes an element, whatever k": "x를 읽고 y를 씁니다: k와 관계없이 원소마다 8바이트",
    "k FMAs of 2 FLOPs an element": "원소마다 2 FLOP짜리 FMA k개",
    "(M K + K N + M N) x 4 bytes": "(M K + K N + M N) x 4바이트",
    "(M K + K N + M N) x 2 bytes": "(M K + K N + M N) x 2바이트",
    "Q, K, V read and O written (4 B H S D) plus S written, S read, P written, P read (4 B H S^2), 2 bytes each":
        "Q, K, V 읽기와 O 쓰기(4 B H S D), 그리고 S 쓰기, S 읽기, P 쓰기, P 읽기(4 B H S^2), 각각 2바이트",
    "4 B H S^2 D: two matmuls of 2 S^2 D per head": "4 B H S^2 D: head마다 2 S^2 D짜리 matmul 두 개",
    "{key}: {fields} not answered yet": "{key}: {fields}에 아직 답이 없습니다",
    "bytes: you said {said}, lab 4.1's model says {want} ({why})":
        "바이트: 답은 {said}이고, 랩 4.1의 모델은 {want}입니다({why})",
    "FLOPs: you said {said}, the model says {want} ({why})": "FLOP: 답은 {said}이고, 모델은 {want}입니다({why})",
    "unit: you said {said!r}, lab 4.1 says {unit!r} ({why})": "연산 장치: 답은 {said!r}이고, 랩 4.1은 {unit!r}입니다({why})",
    "bound: AI = {flops} / {nbytes} = {ai:.3g} FLOP/B against the {unit} ridge {peak:.1f} TFLOP/s / {tbps:.2f} TB/s = "
    "{ridge:.3g} FLOP/B: {bound}-bound, not {said}":
        "bound: AI = {flops} / {nbytes} = {ai:.3g} FLOP/B이고, {unit} ridge는 {peak:.1f} TFLOP/s / {tbps:.2f} TB/s = "
        "{ridge:.3g} FLOP/B입니다. {bound}-bound입니다(답은 {said})",
    "roof: min({peak:.1f}, {ai:.3g} FLOP/B x {tbps:.2f} TB/s) = {roof:.3g} TFLOP/s, not {said}":
        "roof: min({peak:.1f}, {ai:.3g} FLOP/B x {tbps:.2f} TB/s) = {roof:.3g} TFLOP/s입니다(답은 {said})",
    "of {n} kernels": "커널 {n}개 중",
    "{key}: write a dict(bytes=..., flops=..., unit=..., bound=..., roof_tflops=...)":
        "{key}: dict(bytes=..., flops=..., unit=..., bound=..., roof_tflops=...)로 씁니다",
    "16-bit matmuls run on the tensor cores": "16비트 matmul은 tensor core에서 돕니다",
    "fp32 arithmetic runs on the CUDA cores, whatever the kernel is": "fp32 연산은 커널이 무엇이든 CUDA core에서 돕니다",

    # ---- 4.2.1 -------------------------------------------------------------------------------------------------------
    "all right: a chain costs its memory passes - every unfused kernel reads its inputs and writes its output, the "
    "fused one moves each input once and writes only what the caller keeps (2.0x for bias + GELU, 2.33x once a "
    "residual joins it, 1.25x for residual + layernorm while h is kept, 1.67x when it is not) - and a compute-bound "
    "GEMM gains only its elementwise tail ({want:.3f}x)":
        "모두 맞습니다. chain의 비용은 메모리 왕복 횟수입니다. fusion하지 않은 커널은 저마다 입력을 읽고 출력을 씁니다. "
        "fused 커널은 입력마다 한 번 옮기고 호출한 쪽이 간직할 것만 씁니다(bias + GELU는 2.0배, residual이 더해지면 "
        "2.33배, h를 간직하는 residual + layernorm은 1.25배, 간직하지 않으면 1.67배). compute-bound GEMM이 fusion으로 "
        "얻는 것은 elementwise tail뿐입니다({want:.3f}배)",
    "{read} in, {written} out": "{read} 읽기, {written} 쓰기",
    "{key}: not answered yet": "{key}: 아직 답이 없습니다",
    "of {n}": "{n}개 중",
    "{key}: not answered yet (two numbers: unfused, fused)": "{key}: 아직 답이 없습니다(숫자 두 개: unfused, fused)",
    "GEMM_EPILOGUE_SPEEDUP: you said {said}, lab 4.2 predicts {want:.3f}: the GEMM's 2 M N K = 137.4 GFLOP take "
    "{gemm_ms:.3f} ms at 700 TFLOP/s either way (compute-bound: fusing changes none of its bytes), and only the tail "
    "goes - the bias kernel and the GELU kernel each read and write M N bf16 elements, 4 M N x 2 B = 134 MB, "
    "{tail_ms:.4f} ms at 4.4 TB/s":
        "GEMM_EPILOGUE_SPEEDUP: 답은 {said}이고, 랩 4.2의 예측은 {want:.3f}입니다. GEMM의 2 M N K = 137.4 GFLOP은 "
        "어느 쪽이든 700 TFLOP/s에서 {gemm_ms:.3f} ms가 걸립니다(compute-bound라 fusion이 그 바이트를 하나도 바꾸지 "
        "않습니다). 사라지는 것은 tail뿐입니다. bias 커널과 GELU 커널은 각각 bf16 원소 M N개를 읽고 쓰므로 "
        "4 M N x 2 B = 134 MB이고, 4.4 TB/s에서 {tail_ms:.4f} ms입니다",
    "{key}: you said {said}, the byte model says ({unf}, {fu}): unfused {how} = {unf} M N, fused {how_fused} = {fu} M "
    "N, so {ratio:.2f}x at equal bandwidth":
        "{key}: 답은 {said}이고, 바이트 모델은 ({unf}, {fu})입니다. unfused는 {how} = {unf} M N, fused는 {how_fused} "
        "= {fu} M N이므로 대역폭이 같으면 {ratio:.2f}배입니다",

    # ---- 4.3.1 -------------------------------------------------------------------------------------------------------
    "all six as ptxas has them: a 64 x 64 warp tile (128 accumulators, ~240 registers) spills whenever 65536 / "
    "(threads x MIN_BLOCKS) falls under that - 8 warps at 2 blocks, 4 warps at 3, 16 warps at 1 - and a 64 x 32 warp "
    "tile (~128) fits 16 warps; shared memory never decided it here, registers did":
        "여섯 개 모두 ptxas와 같습니다. 64 x 64 warp tile(accumulator 128개, register 약 240개)은 65536 / (threads x "
        "MIN_BLOCKS)가 그보다 작아지면 spill합니다(block 2개에서 warp 8개, 3개에서 warp 4개, 1개에서 warp 16개). "
        "64 x 32 warp tile(약 128개)은 warp 16개에 들어갑니다. 여기서 결과를 정한 것은 shared memory가 아니라 "
        "register였습니다",
    "{name}: not answered yet (warps, KiB, spills)": "{name}: 아직 답이 없습니다(warp 수, KiB, spill 여부)",
    "{name}: {warps} warps, not {said} - one warp per {wm}x{wn} warp tile: ({bm} / {wm}) x ({bn} / {wn})":
        "{name}: warp {warps}개입니다(답은 {said}). {wm}x{wn} warp tile마다 warp 하나: ({bm} / {wm}) x ({bn} / {wn})",
    "{name}: {kib:g} KiB, not {said} - {stages} stages x ({bm} x {bk} + {bk} x {bn}) x 2 bytes":
        "{name}: {kib:g} KiB입니다(답은 {said}). stage {stages}개 x ({bm} x {bk} + {bk} x {bn}) x 2바이트",
    "spills {spills} bytes at {regs} registers": "register {regs}개에서 {spills}바이트를 spill함",
    "fits in {regs} registers, no spill": "register {regs}개에 들어가고 spill 없음",
    "{name}: ptxas {how} - {threads} threads x {min_blocks} block(s) per SM cap a thread at min(255, 65536 / "
    "{per_sm}) = {cap} registers, and {acc} fp32 accumulators a thread (a {wm}x{wn} warp tile) need more than that "
    "with their fragments and addresses":
        "{name}: ptxas 결과는 {how}입니다. thread {threads}개 x SM당 block {min_blocks}개이면 thread당 register 상한은 "
        "min(255, 65536 / {per_sm}) = {cap}개입니다. thread당 fp32 accumulator {acc}개({wm}x{wn} warp tile)는 "
        "fragment와 주소까지 합치면 그보다 많이 필요합니다",
    "{name}: ptxas {how} - {threads} threads x {min_blocks} block(s) per SM cap a thread at min(255, 65536 / "
    "{per_sm}) = {cap} registers, and {acc} fp32 accumulators a thread (a {wm}x{wn} warp tile) need no more than that "
    "with their fragments and addresses":
        "{name}: ptxas 결과는 {how}입니다. thread {threads}개 x SM당 block {min_blocks}개이면 thread당 register 상한은 "
        "min(255, 65536 / {per_sm}) = {cap}개입니다. thread당 fp32 accumulator {acc}개({wm}x{wn} warp tile)는 "
        "fragment와 주소까지 합쳐도 그 안에 들어갑니다",

    # ---- 4.4.1 -------------------------------------------------------------------------------------------------------
    "{bm}x{bn} tiles at M = N = {mn}, {per_sm} block(s) per SM": "M = N = {mn}에서 {bm}x{bn} tile, SM당 block {per_sm}개",
    "all right: 6% more work at 4224 costs a 5th wave a quarter full (0.97 to 0.85 efficiency); two blocks per SM "
    "halve the waves but not the quantization; reuse grows with the tile (BM BN / (BM + BN) FLOP/B) while the stages "
    "it can afford shrink - 4 for 128 x 256 x 64, 3 for 256 x 256 x 64. Lab 4.4's wave sweep measured 0.868 at 4224 "
    "against this 0.85":
        "모두 맞습니다. 4224에서 일이 6% 늘면 4분의 1만 찬 다섯 번째 wave가 생깁니다(효율 0.97에서 0.85로). SM당 "
        "block 두 개는 wave 수를 절반으로 줄이지만 양자화는 줄이지 못합니다. 재사용은 tile과 함께 커지고(BM BN / "
        "(BM + BN) FLOP/B), 들어가는 stage 수는 줄어듭니다(128 x 256 x 64는 4개, 256 x 256 x 64는 3개). 랩 4.4의 wave "
        "sweep은 4224에서 0.868을 측정했고, 여기 모델은 0.85입니다",
    "{name}: not answered yet (tiles, waves, efficiency)": "{name}: 아직 답이 없습니다(tile 수, wave 수, 효율)",
    "{bm}x{bn} reuse: not answered yet": "{bm}x{bn} 재사용: 아직 답이 없습니다",
    "{bm}x{bn}x{bk} stages: not answered yet": "{bm}x{bn}x{bk} stage 수: 아직 답이 없습니다",
    "{name}: {rows} x {cols} = {tiles} tiles on {slots} slots = {waves:.2f} waves, so {rounds} rounds, the last "
    "{fill:.0%} full: efficiency {tiles} / ({rounds} x {slots}) = {efficiency:.3f}; you said {said}":
        "{name}: {rows} x {cols} = tile {tiles}개를 slot {slots}개에 놓으면 {waves:.2f} wave이므로 {rounds}번 돌고, "
        "마지막은 {fill:.0%}만 찹니다. 효율은 {tiles} / ({rounds} x {slots}) = {efficiency:.3f}입니다. 답은 "
        "{said}입니다",
    "{bm}x{bn} reuse: 2 x {bm} x {bn} x BK FLOPs / (({bm} + {bn}) x BK x 2 bytes) = {bm} x {bn} / {sum} = {want:.1f} "
    "FLOP/B, not {said}":
        "{bm}x{bn} 재사용: 2 x {bm} x {bn} x BK FLOP / (({bm} + {bn}) x BK x 2바이트) = {bm} x {bn} / {sum} = "
        "{want:.1f} FLOP/B입니다(답은 {said})",
    "{bm}x{bn}x{bk} stages: one stage is ({bm} + {bn}) x {bk} x 2 B = {kib} KiB, {want} of them fit in 227 KiB "
    "({total} KiB), {more} would not; you said {said}":
        "{bm}x{bn}x{bk} stage 수: stage 하나는 ({bm} + {bn}) x {bk} x 2 B = {kib} KiB입니다. {want}개는 227 KiB에 "
        "들어가고({total} KiB), {more}개는 들어가지 않습니다. 답은 {said}입니다",

    # ---- 4.5.1 -------------------------------------------------------------------------------------------------------
    "K = {k} already ends at inf": "K = {k}에서 이미 inf로 끝납니다",
    "an integer K >= {step}": "K >= {step}인 정수를 씁니다",
    "K = {k} still ends finite in fp16": "K = {k}에서는 fp16으로도 아직 유한하게 끝납니다",
    "all five right: an fp16 accumulator overflows at K = 2048 products of 32 - and at K = 4096 when the answer is 0 - "
    "and its error doubles for every 4x K ({ratio:.2f}x measured over 16x); bf16 inputs with an fp32 accumulator cost "
    "their 8-bit rounding, {err:.1e}, the same at every K: accumulation precision is what grows with K, storage "
    "precision is not":
        "다섯 개 모두 맞습니다. fp16 accumulator는 32짜리 곱 K = 2048개에서 overflow하고, 답이 0일 때는 K = 4096에서 "
        "overflow합니다. 그 오차는 K가 4배가 될 때마다 두 배가 됩니다(16배 구간에서 측정값 {ratio:.2f}배). fp32 "
        "accumulator를 쓰는 bf16 입력은 8비트 반올림의 비용 {err:.1e}만 치르고, 이 값은 K와 관계없이 같습니다. K와 함께 "
        "커지는 것은 누적 정밀도이고, 저장 정밀도는 그렇지 않습니다",
    "not answered yet: {names}": "아직 답이 없습니다: {names}",
    "FIRST_INF_K: {why} - 2047 x 32 = 65504 is fp16's largest value, exactly; one more 32 makes 65536, past the 65520 "
    "from which fp16 rounds to inf, and inf + 32 stays inf":
        "FIRST_INF_K: {why}. 2047 x 32 = 65504는 정확히 fp16의 최댓값입니다. 32를 한 번 더 더하면 65536으로, fp16이 "
        "inf로 반올림하는 65520을 넘습니다. inf + 32는 계속 inf입니다",
    "CANCEL_INF_K: {why} - the partial sums climb to 32 K / 2 before the -32s start: at K / 2 = 2048 they reach 65536 "
    "= inf, and inf - 32 is inf, although the answer is 0":
        "CANCEL_INF_K: {why}. 부분합은 -32가 시작되기 전에 32 K / 2까지 올라갑니다. K / 2 = 2048에서 65536 = inf에 "
        "닿고, inf - 32는 inf입니다. 답은 0인데도 그렇습니다",
    "FP16_ACC_GROWTH: the H200 measured {lo:.2e} at K = 1024 and {hi:.2e} at 16384, {ratio:.2f}x (you said {said}): "
    "each rounding of the running sum is a random error of about u x |sum|, and independent errors add like a random "
    "walk, so the error grows like sqrt(K): sqrt(16) = 4 for 16x the K":
        "FP16_ACC_GROWTH: H200에서 K = 1024일 때 {lo:.2e}, 16384일 때 {hi:.2e}로 {ratio:.2f}배를 측정했습니다(답은 "
        "{said}). 누적 합을 반올림할 때마다 약 u x |sum| 크기의 무작위 오차가 생기고, 독립인 오차는 random walk처럼 "
        "더해집니다. 그래서 오차는 sqrt(K)처럼 커집니다: K가 16배면 sqrt(16) = 4배",
    "BF16_GROWTH: the H200 measured {lo:.2e} at K = 1024 and {hi:.2e} at 16384, {ratio:.2f}x (you said {said}): in "
    "fp32 the sum itself adds almost nothing; the error is each input's rounding to 8 bits, a relative error per "
    "product that does not grow when more products are summed":
        "BF16_GROWTH: H200에서 K = 1024일 때 {lo:.2e}, 16384일 때 {hi:.2e}로 {ratio:.2f}배를 측정했습니다(답은 "
        "{said}). fp32에서는 합 자체가 더하는 오차가 거의 없습니다. 오차는 입력마다 8비트로 반올림한 것이고, 곱마다의 "
        "상대 오차라서 더하는 곱이 늘어도 커지지 않습니다",
    "BF16_ERROR: the H200 measured {err:.2e} at K = 4096 (you said {said}): rounding to 8 bits errs by up to u = 2^-8 "
    "= 3.9e-3 relative, about u / sqrt(3) on average, and each product carries two such roundings":
        "BF16_ERROR: H200에서 K = 4096일 때 {err:.2e}를 측정했습니다(답은 {said}). 8비트로 반올림하면 상대 오차가 최대 "
        "u = 2^-8 = 3.9e-3, 평균 약 u / sqrt(3)이고, 곱 하나에는 그런 반올림이 두 번 들어 있습니다",

    # ---- 4.6.1, 4.6.2 ------------------------------------------------------------------------------------------------
    "right on all {n} cases, causal and not: query i keeps keys j <= i (its own key too, so row 0 always has one key "
    "and never divides 0 by 0), and the ragged last tile is masked by S":
        "causal과 non-causal의 {n}가지 경우 모두에서 맞습니다. query i는 key j <= i를 남깁니다(자기 key도 남으므로 "
        "0행에는 항상 key가 하나 있어 0을 0으로 나누지 않습니다). 들쭉날쭉한 마지막 tile은 S로 mask합니다",
    ". A causal query i attends keys 0 .. i - itself included - and no later one; the mask is the one place that says "
    "so":
        ". causal query i는 자기 자신을 포함한 key 0 .. i만 보고 그 뒤의 key는 보지 않습니다. 그것을 정하는 곳은 "
        "mask 하나뿐입니다",
    "each query block stops after its diagonal block, so the loop runs (n + 1) / 2n of the non-causal tiles with n = "
    "S / BLOCK_M: about half":
        "query block마다 대각선 block 다음에서 멈추므로 loop는 n = S / BLOCK_M일 때 non-causal tile의 (n + 1) / 2n만 "
        "돕니다. 약 절반입니다",
    "right on every case, and no tile past the diagonal is read: {said}. Timed at B*H = {bh}, S = {s}, D = {d}: causal "
    "{causal:.3f} ms, non-causal {full:.3f} ms, {ratio:.2f} of the time (timing spread {spread:.0%}); the rest of the "
    "way to the tile count is the mask still applied to every tile, and the programs of late query blocks running "
    "longest":
        "모든 경우에서 맞고, 대각선 너머의 tile은 읽지 않습니다: {said}. B*H = {bh}, S = {s}, D = {d}에서 잰 시간은 "
        "causal {causal:.3f} ms, non-causal {full:.3f} ms로 {ratio:.2f}배입니다(측정 편차 {spread:.0%}). tile 수의 "
        "비율에 못 미치는 나머지는 모든 tile에 여전히 mask를 적용하는 비용과, 뒤쪽 query block의 program이 가장 오래 "
        "도는 탓입니다",
    "right, but {reads}. A causal query block [m0, m0 + BLOCK_M) attends no key at or past m0 + BLOCK_M, so about half "
    "of the tiles your loop reads, multiplies and exponentiates are then masked to -inf in full: which tiles can the "
    "loop of a query block stop before?":
        "맞지만 {reads}. causal query block [m0, m0 + BLOCK_M)은 m0 + BLOCK_M 이후의 key를 보지 않습니다. 그래서 내 "
        "loop가 읽고 곱하고 exp를 계산하는 tile의 약 절반은 결국 모두 -inf로 mask됩니다. query block의 loop는 어느 "
        "tile 앞에서 멈출 수 있습니까?",
    "right on every case, and no tile past the diagonal is read: {said}. On a GPU this checker also times causal "
    "against non-causal":
        "모든 경우에서 맞고, 대각선 너머의 tile은 읽지 않습니다: {said}. GPU에서는 이 검사가 causal과 non-causal의 "
        "시간도 비교합니다",
    ". Faster does not count until it is right: a causal query i attends keys 0 .. i, and a tile you skip must hold no "
    "key any query of the block attends":
        ". 빨라도 맞아야 인정됩니다. causal query i는 key 0 .. i를 봅니다. 건너뛰는 tile에는 그 block의 어떤 query도 "
        "보는 key가 없어야 합니다",
    "the NaN probe failed to run ({error}: {detail})": "NaN 검사를 실행하지 못했습니다({error}: {detail})",

    # ---- course/exercises/phase*_checks.py ---------------------------------------------------------------------------
    "{file} must keep {name} as a dict with the starting point's cases as its keys: {keys}":
        "{file} 파일의 {name}은 시작 파일의 경우들을 key로 가진 dict로 남아 있어야 합니다: {keys}",
    "{right}, and right on every case on this GPU": "{right}. 이 GPU에서 모든 경우가 맞습니다",
    "{file} must define extern \"C\" __global__ void {kernel}(...), as the starting point does; it defines {kernels}":
        "{file} 파일은 시작 파일처럼 extern \"C\" __global__ void {kernel}(...)을 정의해야 합니다. 지금 정의한 "
        "커널: {kernels}",
    "this exercise runs its kernel, which needs a GPU ({why})": "이 연습 문제는 커널을 실행하므로 GPU가 필요합니다({why})",
    "{file} must compile and define {signature}: {why}":
        "{file} 파일은 컴파일되어야 하고 다음 커널을 정의해야 합니다: {signature}. 이유: {why}",
    "{right}. Correctness is checked on a GPU (none here: {why}): run this again on one":
        "{right}. 정확성은 GPU에서 검사합니다(여기에는 없습니다: {why}). GPU가 있는 곳에서 다시 실행합니다",
    "{file} must define {name}, as the starting point does": "{file} 파일은 시작 파일처럼 {name}을 정의해야 합니다",
    "{what}: the kernel failed ({error}: {detail}); an index past the end of an array is the usual cause":
        "{what}: 커널이 실패했습니다({error}: {detail}). 보통은 배열 끝을 넘는 index 때문입니다",
    "no kernel": "커널 없음",
    "{n} of {total} rows wrong ({shown})": "{total}행 중 {n}행이 틀렸습니다({shown})",
    "{what}: the kernel failed ({error}: {detail})": "{what}: 커널이 실패했습니다({error}: {detail})",
    "with NaN in keys and values {p} .. {end} of a {n}-token causal head, {what}, though none of them attends those "
    "keys: your loop reads tiles past its block's diagonal (this probe needs BLOCK_M to divide {p})":
        "token {n}개인 causal head의 key와 value {p} .. {end}에 NaN을 넣었더니 {what}. 그 행들은 어느 것도 그 key를 "
        "보지 않습니다. 내 loop가 block의 대각선 너머 tile을 읽습니다(이 검사는 BLOCK_M이 {p}를 나누어야 합니다)",
    "NaN in rows {rows}": "{rows}행에 NaN이 있습니다",
    "{bad} of query rows 0 .. {last} came out NaN": "query 행 0 .. {last} 중 {bad}개가 NaN이 되었습니다",
    "query rows 0 .. {last} are wrong ({message})": "query 행 0 .. {last}가 틀렸습니다({message})",
    "keep the cases of the starting point as the keys of {name}: {keys}":
        "시작 파일의 경우들을 {name}의 key로 그대로 둡니다: {keys}",
    "{count} {of} not yet right; {reasons}": "{of} {count}개가 아직 맞지 않습니다:{reasons}",
    "keys j < i: the mask drops the diagonal, so every query loses its own key":
        "key j < i (mask가 대각선을 빼서 모든 query가 자기 key를 잃습니다)",
    "keys j <= i + 1: the mask lets every query see one key of its future":
        "key j <= i + 1 (mask가 모든 query에게 미래의 key 하나를 보여 줍니다)",
    "your output is attention where query i attends {what}{nan}": "내 출력은 query i가 다음 key를 보는 attention입니다: {what}{nan}",
    "the file must define flash_forward(q, k, v, out, causal), as the starting point does":
        "파일은 시작 파일처럼 flash_forward(q, k, v, out, causal)을 정의해야 합니다",
    "; rows {rows} came out NaN: no key left to attend, 0 / 0": ". {rows}행이 NaN이 되었습니다. 볼 key가 남지 않아 0 / 0입니다",
    "; row {rows} came out NaN: no key left to attend, 0 / 0": ". {rows}행이 NaN이 되었습니다. 볼 key가 남지 않아 0 / 0입니다",
    "answers": "답 중",
}
