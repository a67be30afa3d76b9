"""Korean lines of what common/ prints (the lab driver, the command line, plans, tables): {English: Korean}.
common/i18n.py reads every such catalogue; docs/GLOSSARY.ko.md says which words the Korean uses."""

KO = {
    # the mode line and the machine
    "GPU: {name} - CUDA C and Triton kernels run for real": "GPU: {name} - CUDA C와 Triton 커널을 실제로 실행합니다",
    "no GPU ({why}): Triton kernels run in the interpreter (slow, correct), CUDA C kernels are compiled with NVRTC and "
    "their resources shown, nothing is timed on a GPU":
        "GPU 없음({why}): Triton 커널은 interpreter에서 실행합니다(느리지만 결과는 정확합니다). CUDA C 커널은 NVRTC로 "
        "컴파일하고 자원 사용량을 보여 줍니다. GPU에서 시간을 재는 것은 없습니다",
    "COURSE_FORCE_CPU=1 is set": "COURSE_FORCE_CPU=1이 설정되어 있습니다",
    "no usable NVIDIA driver (cudaErrorInsufficientDriver: none installed, or older than this CuPy wheel needs)":
        "쓸 수 있는 NVIDIA driver가 없습니다(cudaErrorInsufficientDriver: 설치되어 있지 않거나, 이 CuPy wheel이 "
        "요구하는 것보다 오래되었습니다)",
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
    "no GPU ({why}); describing {name} ({arch}, {family}) from the table":
        "GPU 없음({why}). 표에 있는 {name}({arch}, {family})을 설명합니다",
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
}
