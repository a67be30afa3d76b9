"""Korean lines of what common/ prints (the lab driver, the command line, plans, tables): {English: Korean}.
common/i18n.py reads every such catalogue; docs/GLOSSARY.ko.md says which words the Korean uses."""

KO = {
    # the mode line and the machine
    "GPU: {name} - CUDA C and Triton kernels run for real": "GPU: {name} - CUDA C와 Triton 커널을 실제로 실행합니다",
    "no GPU - {why}. Triton kernels run in the interpreter (slow, correct), CUDA C kernels are compiled with NVRTC "
    "and their resources shown, nothing is timed on a GPU":
        "GPU 없음 - {why}. Triton 커널은 interpreter에서 실행합니다(느리지만 결과는 정확합니다). CUDA C 커널은 NVRTC로 "
        "컴파일하고 자원 사용량을 보여 줍니다. GPU에서 시간을 재는 것은 없습니다",
    "COURSE_FORCE_CPU=1 is set": "COURSE_FORCE_CPU=1이 설정되어 있습니다",
    "no usable NVIDIA driver: none is installed, or it is older than this CuPy wheel needs (cudaErrorInsufficientDriver)":
        "쓸 수 있는 NVIDIA driver가 없습니다. 설치되어 있지 않거나, 이 CuPy wheel이 요구하는 것보다 오래되었습니다 "
        "(cudaErrorInsufficientDriver)",
    "the driver reports no CUDA device (cudaErrorNoDevice)": "driver가 CUDA 장치를 찾지 못했습니다(cudaErrorNoDevice)",
    "the driver reports no CUDA device": "driver가 CUDA 장치를 찾지 못했습니다",
    "{what} needs a CUDA GPU, and none is usable: {why}. Without a GPU the course runs Triton kernels in the "
    "interpreter and shows the CUDA C compile report instead.":
        "{what}에는 CUDA GPU가 필요한데 쓸 수 있는 GPU가 없습니다: {why}. GPU가 없으면 이 과정은 Triton 커널을 "
        "interpreter에서 실행하고, CUDA C는 컴파일 보고서를 대신 보여 줍니다.",
    "error: {what}": "오류: {what}",
    "(run with COURSE_TRACEBACK=1 to see where it was raised)": "(어디서 일어났는지 보려면 COURSE_TRACEBACK=1로 실행하십시오)",
    "--bench needs a GPU ({why}); running the checks only": "--bench에는 GPU가 필요합니다({why}). 검증만 실행합니다",
    "usage error: --gpu {gpu} is an {arch} GPU, --arch says {other}":
        "사용법 오류: --gpu {gpu}는 {arch} GPU인데 --arch는 {other}입니다",
    "--gpu {gpu}: this machine has a GPU ({name}), whose own figures are used; --gpu only chooses the GPU of --plan here":
        "--gpu {gpu}: 이 컴퓨터에는 GPU({name})가 있어서 그 GPU의 수치를 씁니다. 여기서 --gpu는 --plan이 설명할 GPU만 "
        "고릅니다",
    "no GPU - {why}. Describing {name} ({arch}, {family}) from the table":
        "GPU 없음 - {why}. 표에 있는 {name}({arch}, {family})을 설명합니다",
    "{head}, {sms} SMs, {l2} MiB L2, {smem} KiB shared/SM, {regs} registers/SM, {mem} GiB":
        "{head}, SM {sms}개, L2 {l2} MiB, SM당 shared memory {smem} KiB, SM당 register {regs}개, 메모리 {mem} GiB",
    "clocks: SM {sm} MHz, memory {mem} MHz x {bus}-bit bus = {gbps} GB/s from the clock":
        "clock: SM {sm} MHz, 메모리 {mem} MHz x {bus}-bit bus = clock으로 계산한 {gbps} GB/s",
    " (datasheet {gbps} GB/s)": " (datasheet {gbps} GB/s)",
    "CUDA driver {driver}, runtime {runtime}": "CUDA driver {driver}, runtime {runtime}",
    "(--arch {arch} has no profile of its own in the table)": "(--arch {arch}는 표에 자기 profile이 없습니다)",
    "note: {name} is {arch}, which the course's table (common/gpu_specs.py) does not describe; using the limits the "
    "device reports, and the rules of {base}. Every kernel that needs no more than this GPU offers runs; the plan "
    "(--plan) says which.":
        "참고: {name}는 {arch}인데, 이 과정의 표(common/gpu_specs.py)에는 이 아키텍처가 없습니다. 장치가 알려 주는 한계와 "
        "{base}의 규칙을 씁니다. 이 GPU가 제공하는 자원 안에서 도는 커널은 모두 실행합니다. 어느 커널인지는 계획"
        "(--plan)에 나옵니다.",

    # the lab driver
    "correctness against the float64 reference (seed {seed})": "float64 기준값과 비교한 정확도 (seed {seed})",
    "ok ({n} cases, worst rel err {worst:.1e})": "통과 (케이스 {n}개, 최대 상대 오차 {worst:.1e})",
    "not checked here": "여기서는 검증하지 않음",
    "FAILED {bad}/{of}: {first}": "실패 {bad}/{of}: {first}",
    "no case ran": "실행한 케이스 없음",
    "; {n} case(s) it cannot serve, passed over ({first})": "; 처리할 수 없는 케이스 {n}개는 건너뜀 ({first})",
    "skipped: {why}": "건너뜀: {why}",
    "needs a GPU (compile report shown)": "GPU가 필요합니다(컴파일 보고서를 대신 보여 줍니다)",
    "correctness failed: not benchmarking": "정확도 검증 실패: benchmark를 하지 않습니다",
    "\nNothing was timed (no GPU): the Triton kernels ran in the interpreter, CUDA C kernels were compiled.":
        "\nGPU가 없어 시간을 잰 것은 없습니다. Triton 커널은 interpreter에서 실행했고, CUDA C 커널은 컴파일만 했습니다.",
    "--replot: no {path}; measure on a GPU first (python -m {lab})":
        "--replot: {path}가 없습니다. 먼저 GPU에서 측정하십시오(python -m {lab})",
    "--replot: this GPU ({gpu}) has no results/{slug}/{name}.json yet; redrawing the committed {path} instead (measure "
    "yours with python -m {lab})":
        "--replot: 이 GPU({gpu})에는 아직 results/{slug}/{name}.json이 없습니다. 커밋된 {path}로 대신 그립니다(내 GPU에서 "
        "측정하려면 python -m {lab})",
    "wrote {path}": "저장: {path}",
    "{title}: summary": "{title}: 요약",
    "interpreter + compile report": "interpreter + 컴파일 보고서",

    # tables
    "(no rows)": "(행 없음)",
    "variant": "variant",
    "impl": "구현",
    "cases": "케이스",
    "secs": "초",
    "result": "결과",
    "lab": "랩",
    "exit": "종료 코드",
    "ran": "실행 방식",

    # plans (--plan) and configurations
    "plan of {lab} on {gpu}: {sms} SMs, {smem} KiB shared memory per block, {mem} GiB, {bw} GB/s":
        "{gpu}에서 {lab}의 계획: SM {sms}개, block당 shared memory {smem} KiB, 메모리 {mem} GiB, {bw} GB/s",
    "variants": "variant",
    "runs here": "여기서 실행",
    "why not": "실행하지 않는 이유",
    "yes": "예",
    "no": "아니오",
    "kernel launches of the benchmark case": "benchmark 케이스의 커널 launch",
    "kernel": "커널",
    "grid": "grid",
    "threads": "thread",
    "smem": "smem",
    "configuration": "설정",
    "from": "출처",
    "case": "케이스",
    "goal": "목표",
    "fixed": "고정",
    "configurations": "설정",
    "kernel family": "커널 묶음",
    "predictions for {gpu}": "{gpu}에 대한 예측",
    "prediction": "예측",
    "value": "값",
    "note: {text}": "참고: {text}",
    "configurations (the lab's default, this GPU's tuned record, --set NAME=VALUE)":
        "설정 (랩의 기본값, 이 GPU의 tuning 기록, --set NAME=VALUE)",
    "default": "기본값",
    "the rest default": "나머지는 기본값",
    "tuned on {gpu} ({path})": "{gpu}에서 tuning한 기록 ({path})",
    "default (no tuning record for this GPU: run the lab with --tune)":
        "기본값 (이 GPU의 tuning 기록이 없습니다: 랩을 --tune으로 실행하십시오)",
    "default (tuning record unreadable)": "기본값 (tuning 기록을 읽을 수 없음)",
    "--set {names}: no kernel of this lab has such a setting": "--set {names}: 이 랩의 어느 커널에도 그런 설정이 없습니다",
    " (it has: {names})": " (이 랩의 설정: {names})",
    "GPU profiles (common/gpu_specs.py: datasheet figures, each with its source)":
        "GPU profile (common/gpu_specs.py: datasheet 수치와 각각의 출처)",

    # the command line's own options (--help)
    "small sizes only; finishes in seconds": "작은 크기만 실행합니다. 몇 초면 끝납니다",
    "only this dtype (default: all the lab supports)": "이 dtype만 실행합니다 (기본값: 랩이 지원하는 모든 dtype)",
    "time variants and peers (default: on when a GPU is present)":
        "variant와 peer의 시간을 잽니다 (기본값: GPU가 있으면 켜짐)",
    "write the JSON results": "결과 JSON을 씁니다",
    "write the PNG plots": "PNG plot을 그립니다",
    "directory for JSON and PNG (default: results/<gpu>/)": "JSON과 PNG를 쓸 폴더 (기본값: results/<gpu>/)",
    "architecture of the compile report: {archs} (or sm_90a)": "컴파일 보고서의 아키텍처: {archs} (또는 sm_90a)",
    "without a GPU: the GPU whose figures the predictions and the plan use (a profile: {profiles}); 'list' shows them":
        "GPU가 없을 때 예측과 계획에 쓸 GPU (profile: {profiles}). 'list'로 목록을 봅니다",
    "print what would run on this GPU (or --gpu NAME): variants, launches, configurations, predictions; runs nothing":
        "이 GPU(또는 --gpu NAME)에서 실행될 것을 출력합니다: variant, launch, 설정, 예측. 아무것도 실행하지 않습니다",
    "override one configuration value of a kernel, e.g. --set EPT=16 (repeatable)":
        "커널 설정값 하나를 덮어씁니다. 예: --set EPT=16 (여러 번 줄 수 있음)",
    "describe the GPU (or --arch without one) and exit": "GPU(GPU가 없으면 --arch)를 설명하고 끝냅니다",
    "language of the output: en or ko (default: COURSE_LANG, else the locale; ko = Korean)":
        "출력 언어: en 또는 ko (기본값: COURSE_LANG, 없으면 locale. ko는 한국어)",
    "redraw the plots from the saved JSON in DIR (default: the committed results) and exit":
        "DIR에 저장된 JSON으로 plot을 다시 그리고 끝냅니다 (기본값: 커밋된 결과)",
    "{title}: runs its labs in order ({labs}); other flags go to every lab.":
        "{title}: 랩을 차례로 실행합니다({labs}). 다른 옵션은 모든 랩에 전달됩니다.",
    "only this dtype, in the labs that have a --dtype flag": "--dtype 옵션이 있는 랩에서 이 dtype만 실행합니다",
    "run only the labs whose name contains this (repeatable)": "이름에 이 문자열이 들어간 랩만 실행합니다 (여러 번 줄 수 있음)",
    "list the labs and exit": "랩 목록을 출력하고 끝냅니다",
    "needs {archs}, this GPU is {arch}": "{archs}가 필요합니다. 이 GPU는 {arch}입니다",
    "  ({what} skipped: {error})": "  ({what} 건너뜀: {error})",

    # compile reports
    "{file} compiled with NVRTC {version} for {arch}:": "{file}을 NVRTC {version}으로 {arch}용 컴파일:",
    # the compile report names each kernel's variants as the correctness table does
    "used by": "쓰는 variant",
    "used by: {variants}": "쓰는 variant: {variants}",
    "SASS excerpt of {kernel} (memory and sync instructions):": "{kernel}의 SASS 일부 (메모리와 동기화 명령):",
    "(no cuobjdump found: SASS columns are empty; it ships with the triton wheel)":
        "(cuobjdump를 찾지 못해 SASS 열이 비어 있습니다. cuobjdump는 triton wheel에 들어 있습니다)",

    # sizes that do not fit
    "{what} {first} needs {need:.1f} GiB, more than {share:.0%} of this GPU's {mem:.0f} GiB: scaled down to {size} "
    "({now:.1f} GiB)":
        "{what} {first}에는 {need:.1f} GiB가 필요해서 이 GPU 메모리 {mem:.0f} GiB의 {share:.0%}를 넘습니다. {size}로 "
        "줄였습니다 ({now:.1f} GiB)",

    # the occupancy arithmetic
    "{n} block": "block {n}개",
    "{n} blocks": "block {n}개",
    "{arch}: {threads} threads/block ({warps} warps), {regs} registers/thread, {static} B static + {dynamic} B dynamic "
    "shared memory":
        "{arch}: block당 thread {threads}개 (warp {warps}개), thread당 register {regs}개, shared memory는 static "
        "{static} B + dynamic {dynamic} B",
    "  warps      {max} warps/SM // {wpb} = {blocks}": "  warp       SM당 warp {max}개 // {wpb} = {blocks}",
    "  blocks     resident-block limit = {blocks}": "  block      상주 block 한도 = {blocks}",
    "  registers  {regs} x 32 = {raw} -> {per_warp} per warp (unit {unit}); {sp} x ({per_sp} // {per_warp}) = {warps} "
    "warps // {wpb} = {blocks}":
        "  register   {regs} x 32 = {raw} -> warp당 {per_warp} (할당 단위 {unit}). {sp} x ({per_sp} // {per_warp}) = "
        "warp {warps}개 // {wpb} = {blocks}",
    "  registers  none used: no limit": "  register   쓰지 않음: 제한 없음",
    "  shared     {static} + {dynamic} + {reserved} reserved -> {block} B/block (unit {unit}); {sm} B/SM // {block} = "
    "{blocks}":
        "  shared     {static} + {dynamic} + 예약 {reserved} -> block당 {block} B (할당 단위 {unit}). SM당 {sm} B // "
        "{block} = {blocks}",
    "  shared     none used: no limit": "  shared     쓰지 않음: 제한 없음",
    "  barriers   {sm} per SM // {block} per block = {blocks}": "  barrier    SM당 {sm}개 // block당 {block}개 = {blocks}",
    "  => {blocks} x {wpb} warps = {active}/{max} warps = {occ:.1%} occupancy, limited by {limiters}":
        "  => {blocks} x warp {wpb}개 = warp {active}/{max}개 = occupancy {occ:.1%}, 제한 요인: {limiters}",
    "  => no block fits: {why}": "  => block이 하나도 들어가지 않습니다: {why}",
    "  note: {text}": "  참고: {text}",
    " and ": ", ",
    "registers": "register",
    "shared memory": "shared memory",
    "warps": "warp",
    "blocks": "block",
    "barriers": "barrier",
    "{threads} threads is more than the {max} a block may have": "thread {threads}개는 block 하나가 가질 수 있는 {max}개보다 많습니다",
    "{regs} registers/thread is more than the {max} ptxas can assign":
        "thread당 register {regs}개는 ptxas가 줄 수 있는 {max}개보다 많습니다",
    "one block needs {assumed} registers ({per_warp}/warp x {warps} warps, counted in groups of {group} warps), more "
    "than the {max} a block may hold":
        "block 하나에 register {assumed}개가 필요합니다(warp당 {per_warp} x warp {warps}개, warp {group}개 단위로 셈). "
        "block 하나가 가질 수 있는 {max}개보다 많습니다",
    "the register file of the SM cannot hold one block": "SM의 register file에 block 하나도 들어가지 않습니다",
    "{dyn} B of dynamic shared memory is more than the kernel's limit of {limit} B: raise it first "
    "(kernel.max_dynamic_shared_size_bytes = n, up to {optin} B)":
        "dynamic shared memory {dyn} B는 커널의 한도 {limit} B보다 큽니다. 먼저 한도를 올리십시오"
        "(kernel.max_dynamic_shared_size_bytes = n, 최대 {optin} B)",
    "one block needs {block} B of shared memory, more than the {limit} B allowed":
        "block 하나에 shared memory {block} B가 필요해서 허용되는 {limit} B를 넘습니다",
    "one block needs more than the preferred carve-out: the SM is given {smem} B":
        "block 하나가 선호 carve-out보다 많이 필요해서 SM에 {smem} B가 주어집니다",
    "the {reserved} B the runtime reserves per block costs a block: {without} would fit without it":
        "runtime이 block마다 예약하는 {reserved} B 때문에 block 하나를 잃습니다. 예약이 없으면 {without}개가 들어갑니다",
    "a resource limit is zero": "자원 한도 하나가 0입니다",
    "--variant {w}: no such variant; the choices are {names}": "--variant {w}: 그런 variant가 없습니다. 고를 수 있는 것은 {names}입니다",
    "check the variants at this size instead of the lab's awkward cases (this lab's sizes look like {example}); --plan plans it":
        "랩의 까다로운 케이스 대신 이 크기에서 variant를 검사합니다(이 랩의 크기는 {example} 꼴입니다). --plan은 이 크기로 계획합니다",
    "only this variant (a rung number such as 05, or part of its name; repeatable): checked, and timed where the benchmark times variants one by one":
        "이 variant만(05 같은 rung 번호나 이름의 일부, 여러 번 쓸 수 있음): 검사하고, benchmark가 variant를 하나씩 잴 때는 시간도 잽니다",
    "--size {size}: this lab's sizes look like {example}": "--size {size}: 이 랩의 크기는 {example} 꼴입니다",
    "--variant names one lab's variant: run that lab alone (python -m {phase}.LAB --variant NN)":
        "--variant는 랩 하나의 variant를 고릅니다. 그 랩만 실행하세요 (python -m {phase}.LAB --variant NN)",
    "no lab of {phase} takes these arguments: {why}": "{phase}의 어느 랩도 이 인자를 받지 않습니다: {why}",
    "{lab}: not run ({why})": "{lab}: 실행하지 않음 ({why})",
    "not run: {why}": "실행하지 않음: {why}",
    "usage error": "사용법 오류",
    "{phase}: no lab takes these arguments ({why}); passed over": "{phase}: 이 인자를 받는 랩이 없어 건너뜁니다 ({why})",
    " (did you mean {names}?)": " ({names}을(를) 말씀하신 건가요?)",
    "--only {only}: no such lab{hint}; the labs are {labs}": "--only {only}: 그런 랩이 없습니다{hint}. 랩은 {labs}입니다",
    "NVRTC is not installed (pip install 'nvidia-cuda-nvrtc==13.0.*')":
        "NVRTC가 설치되어 있지 않습니다 (pip install 'nvidia-cuda-nvrtc==13.0.*')",
    "libcuda.so.1 cannot be loaded ({error})": "libcuda.so.1을 불러올 수 없습니다 ({error})",
    "--{flag}: the checks used it; this lab's benchmark times its own cases and every variant":
        "--{flag}: 검사에는 썼습니다. 이 랩의 benchmark는 자기 케이스와 모든 variant의 시간을 잽니다",
}
