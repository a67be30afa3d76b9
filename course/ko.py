"""The Korean lines of `python -m course` (common/i18n.py): {english: korean}, with the same {placeholders}. The English
text is the key, so the English output reads exactly as written; tests/test_i18n.py checks that every tr() message of
course/ has its line here, and tests/test_course_korean.py that every exercise's TITLE has one. Each phase's
checker messages are in course/ko_phase1.py ... ko_phase4.py."""

KO = {
    # ---- course/__main__.py: the command -----------------------------------------------------------------------------
    "every exercise, by phase, and where it runs (CPU or GPU)": "phase별 모든 연습 문제와 실행되는 곳(CPU 또는 GPU)",
    "check your answer to exercise 1.2.1": "연습 문제 1.2.1의 답을 검사합니다",
    "copy the starting point to my_work/1.2.1/ to edit": "시작 파일을 my_work/1.2.1/에 복사해 고칠 수 있게 합니다",
    "the next hint (three at most, each nearer the fix)": "다음 힌트를 보여 줍니다(최대 세 개, 갈수록 답에 가깝습니다)",
    "show the solution (try first)": "풀이를 보여 줍니다(먼저 직접 풀어 봅니다)",
    "in Korean (or COURSE_LANG=ko, or a Korean locale)": "한국어로 출력합니다(COURSE_LANG=ko나 한국어 locale도 같습니다)",
    "language of the output: en or ko (default: COURSE_LANG, else the locale; ko = Korean)":
        '출력 언어: en 또는 ko (기본값: COURSE_LANG, 없으면 locale. ko는 한국어)',
    "The course's own command: exercises that check themselves.":
        "이 과정의 명령입니다. 연습 문제마다 답을 스스로 검사합니다.",
    "every exercise, by phase": "phase별 모든 연습 문제",
    "check (or begin, or see the solution of) one exercise": "연습 문제 하나를 검사합니다(시작하거나 풀이를 볼 수도 있습니다)",
    "the exercise, e.g. 1.2.1": "연습 문제 번호, 예: 1.2.1",
    "copy the starting point to my_work/<id>/ to edit": "시작 파일을 my_work/<id>/에 복사해 고칠 수 있게 합니다",
    "print the solution file": "풀이 파일을 출력합니다",
    "the next hint not yet seen, or hint N (1 to 3); after the last, --solution":
        "아직 보지 않은 다음 힌트, 또는 N번 힌트(1에서 3)를 보여 줍니다. 마지막 힌트 다음은 --solution입니다",
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
    # ---- guard bands, CPU-only verdicts, directions without the answer (checks.py, phase2_checks.py, ...) --------
    "NOT RUN HERE: {why}; {not_run}": "여기서는 실행하지 못함: {why}. {not_run}",
    "exit status of a check: 0 RIGHT; 1 NOT YET (wrong, or it does not load or compile); 2 a wrong command; 3 "
    "NOT RUN HERE: nothing found wrong, but part of the check needs a GPU (a CUDA kernel compiled, not run)":
        "검사의 종료 상태: 0 RIGHT(맞음), 1 NOT YET(틀렸거나 불러오거나 컴파일되지 않음), 2 잘못된 명령, 3 NOT RUN HERE(틀린 것은 찾지 못했지만 "
        "검사의 일부에 GPU가 필요함: CUDA kernel을 컴파일만 하고 실행하지 않음)",
    "{what}: {wrote}. A lane past the end stored anyway: on a GPU that memory belongs to another array (or to "
    "nothing, and the launch faults)":
        "{what}: {wrote}. 끝을 넘은 lane이 그래도 store했습니다. GPU에서 그 메모리는 다른 배열의 것입니다(아무 것의 것도 아니면 launch가 fault를 "
        "냅니다)",
    "not a number": "숫자가 아님",
    "too high": "너무 큼",
    "too low": "너무 작음",
    "wrote 1 element before the start of {name}": "{name}의 시작 앞에 원소 1개를 썼습니다",
    "wrote {k} elements before the start of {name}": "{name}의 시작 앞에 원소 {k}개를 썼습니다",
    "wrote 1 element past the end of {name}": "{name}의 끝을 넘어 원소 1개를 썼습니다",
    "wrote {k} elements past the end of {name}": "{name}의 끝을 넘어 원소 {k}개를 썼습니다",
    "the check stopped: the process that ran your code died (exit status {rc}). A kernel that writes far past "
    "the end of an array corrupts the memory around it, and on a GPU the launch faults: check every index "
    "against its bound":
        "검사가 멈췄습니다. 코드를 실행한 프로세스가 죽었습니다(종료 상태 {rc}). 배열의 끝을 훨씬 넘어 쓰는 kernel은 주변 메모리를 망가뜨리고, GPU에서는 launch가 "
        "fault를 냅니다. 모든 index를 그 경계와 비교해 보세요",
    "the last lines the process wrote as it died:": "프로세스가 죽으면서 마지막으로 쓴 줄:",
    "the last lines the process wrote before it was stopped:": "프로세스가 멈추기 전에 마지막으로 쓴 줄:",
    "stop a check that hangs after 120 s (default 600)": "멈춰 버린 검사를 120초 뒤에 멈춥니다(기본값 600초)",
    "the check stopped: the process that ran your code gave no answer in {secs:.0f} s and was stopped. A kernel that "
    "writes far past the end of an array corrupts the memory around it, which can hang the process: check every "
    "index against its bound":
        "검사가 멈췄습니다. 코드를 실행한 프로세스가 {secs:.0f}초 안에 답하지 않아 멈췄습니다. 배열의 끝을 훨씬 넘어 쓰는 kernel은 주변 메모리를 "
        "망가뜨리고, 그러면 프로세스가 멈춰 버릴 수 있습니다. 모든 index를 그 경계와 비교해 보세요",
    "{threads} threads x {regs} registers + {kib} KiB": "{threads} thread x register {regs}개 + {kib} KiB",
    "{what}: not answered yet": "{what}: 아직 답하지 않음",
    "{what}: {blocks} blocks is {off}: for each resource, how many of these blocks fit in what one SM has of it? "
    "The SM holds as many as the scarcest allows":
        "{what}: block {blocks}개는 {off}. 자원마다, SM 하나가 가진 양에 이 block이 몇 개 들어갑니까? SM은 가장 부족한 자원이 허락하는 만큼만 "
        "담습니다",
    "{what}: {blocks} blocks is right, but {limit!r} is not what runs out first: which resource allows exactly "
    "that many blocks?":
        "{what}: block {blocks}개는 맞지만 먼저 바닥나는 것은 {limit!r}가 아닙니다. 어느 자원이 정확히 그만큼의 block을 허락합니까?",
    "whether it is right on every shape, and its speed-up over the starting kernel,":
        "모든 shape에서 맞는지와 시작 kernel 대비 속도 향상",
    "BLOCK={block}, num_warps={warps}, {n_text}": "BLOCK={block}, num_warps={warps}, {n_text}",
    "{what}: not answered yet (bytes per load, loads per array per thread)":
        "{what}: 아직 답하지 않음(load 하나의 byte 수, thread마다 배열 하나당 load 수)",
    "a thread holds BLOCK / (32 x num_warps) consecutive floats, and one load moves at most 16 bytes of them":
        "thread 하나는 연속된 float BLOCK / (32 x num_warps)개를 맡고, load 하나는 그중 최대 16 byte를 옮깁니다",
    "with n odd, can any group of 4 floats be known to be all in or all out of the mask?":
        "n이 홀수일 때, float 4개 묶음이 mask 안에 모두 있거나 모두 밖에 있다고 알 수 있습니까?",
    "{what}: {width}-byte loads is {off}: {why}": "{what}: {width}-byte load는 {off}. {why}",
    "{what}: {count} loads per array is {off}: the floats a thread holds, over the floats one load of that width "
    "moves":
        "{what}: 배열 하나당 load {count}개는 {off}. thread가 맡은 float 수를 그 폭의 load 하나가 옮기는 float 수로 나눕니다",
    "checked on this CPU: rowsum is right for every row length in the Triton interpreter":
        "이 CPU에서 검사함: Triton interpreter에서 모든 행 길이에 대해 rowsum이 맞습니다",
    "its speed against one program per row": "행마다 program 하나인 kernel 대비 속도",
    "unit: not {said!r}: which units run 16-bit matmuls, and which run fp32 arithmetic, whatever the kernel is?":
        "unit: {said!r}가 아닙니다. kernel이 무엇이든 16-bit matmul은 어느 unit이, fp32 연산은 어느 unit이 실행합니까?",
    "roof: you said {said} TFLOP/s, {off}: the roof is min(the unit's peak, AI x HBM bandwidth)":
        "roof: {said} TFLOP/s라고 답했고 {off}. roof는 min(unit의 peak, AI x HBM bandwidth)입니다",
    "not run: no GPU here ({why}), so {what} is unchecked: run this again on a machine with one":
        "실행하지 않음: 여기에는 GPU가 없어({why}) {what}은(는) 검사하지 못했습니다. GPU가 있는 머신에서 다시 실행하세요",
    "checked on this CPU: {file} compiles for sm_90 ({kernel}: {regs} registers, {spills} bytes spilled)":
        "이 CPU에서 검사함: {file}이(가) sm_90용으로 컴파일됩니다({kernel}: register {regs}개, spill {spills} byte)",
    "whether the kernel is right on every case": "kernel이 모든 경우에 맞는지",
    "checked on this CPU: it compiles for sm_90, and {right}": "이 CPU에서 검사함: sm_90용으로 컴파일되고, {right}",
    "whether it is right on every length and grid (the tail, the last float4)": "모든 길이와 grid에서 맞는지(tail, 마지막 float4)",
    # ---- course/__main__.py: `--hint` (how many were shown is kept in my_work/.progress.json) ----------------------
    "hint {k} of {n} for {id}:": "{id}의 힌트 {n}개 중 {k}번:",
    "(`python -m course exercise {id} --hint` again for hint {next})":
        "(힌트 {next}번은 `python -m course exercise {id} --hint`를 한 번 더 실행합니다)",
    "(hint {next}: `python -m course exercise {id} --hint {next}`)":
        "(힌트 {next}번: `python -m course exercise {id} --hint {next}`)",
    "(that was the last hint. Next: `{solution}`)": "(마지막 힌트였습니다. 다음은 `{solution}`입니다)",
    "no hints left for {id}: you have seen all {n}. Next: `{solution}`":
        "{id}의 힌트가 더 없습니다. {n}개를 모두 보았습니다. 다음은 `{solution}`입니다",
    "--hint N: N is a hint's number, 1 to {n}, for exercise {id} (not {got})":
        "--hint N: N은 연습 문제 {id}의 힌트 번호로 1에서 {n}까지입니다({got}는 아닙니다)",
    # ---- course/__main__.py: `list`'s progress, from my_work/.progress.json ------------------------------------------
    "done": "완료",
    "tried": "시도함",
    "compiled": "컴파일만 됨",
    "not started": "시작 안 함",
}
