"""Korean lines of what lab 1.1 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "elements of the copy probe (default {n}, quick 2^24; scaled down where the GPU's memory cannot hold it)":
        "copy probe의 원소 수(기본값 {n}, quick 2^24). GPU 메모리에 담기지 않으면 줄입니다",
    "print the full table of known version-mismatch errors": "알려진 버전 불일치 오류의 표 전체를 출력합니다",

    # the device, or the profile that stands for it
    "The GPU, read off the device": "장치에서 읽은 GPU",
    "the course's table (architecture limits, and the profile of this GPU's name where there is one) "
    "agrees with this GPU":
        "이 과정의 표(아키텍처 한계와, 있다면 이 GPU 이름의 profile)가 이 GPU와 일치합니다",
    "the course's table (architecture limits, and the profile of this GPU's name where there is one) "
    "differs from this GPU: {diffs}":
        "이 과정의 표(아키텍처 한계와, 있다면 이 GPU 이름의 profile)가 이 GPU와 다릅니다: {diffs}",
    "  note: {text}": "  참고: {text}",
    "No GPU: {name} ({arch}), a profile of the course's table (common/gpu_specs.py; --gpu chooses another)":
        "GPU 없음: 이 과정의 표에 있는 profile {name}({arch})의 수치입니다(common/gpu_specs.py. 다른 GPU는 --gpu로 "
        "고릅니다)",
    "property": "항목",
    "name": "이름",
    "SMs": "SM 수",
    "warp size": "warp 크기",
    "max threads / block": "block당 최대 thread",
    "max threads / SM  (warps)": "SM당 최대 thread  (warp)",
    "max resident blocks / SM": "SM당 최대 상주 block",
    "32-bit registers / SM, / block": "32-bit register 수 / SM, / block",
    "{sm}, {block} (<= {most}/thread)": "{sm}, {block} (thread당 <= {most})",
    "FP32 lanes / SM": "SM당 FP32 lane",
    "shared memory / SM": "SM당 shared memory",
    "shared memory / block (default, opt-in)": "block당 shared memory (기본, opt-in)",
    "shared memory reserved / block": "block당 예약된 shared memory",
    "L1/shared carve-outs (KiB)": "L1/shared carve-out 선택지 (KiB)",
    "SM clock (max)": "SM clock (최대)",
    "memory": "메모리",
    "{gib:.0f} GiB, {bits}-bit bus at {mhz:.0f} MHz": "{gib:.0f} GiB, {mhz:.0f} MHz의 {bits}-bit bus",
    "theoretical bandwidth (2 x clock x bus)": "이론상 대역폭 (2 x clock x bus)",
    "datasheet": "datasheet",
    "peak TFLOP/s, FP32 (SMs x lanes x 2 x clock)": "최대 TFLOP/s, FP32 (SM 수 x lane x 2 x clock)",
    "ridge point FLOP/B (peak / bandwidth)": "ridge point FLOP/B (최대 성능 / 대역폭)",
    "resident threads on the GPU": "GPU 전체의 상주 thread",
    "registers per thread at full occupancy": "occupancy 100%일 때 thread당 register",
    "shared memory per thread at full occupancy (B)": "occupancy 100%일 때 thread당 shared memory (B)",
    "note": "참고",
    "the table has no {want} GPU: {name} ({arch}) stands for it":
        "표에 {want} GPU가 없습니다. 대신 {name}({arch})의 수치를 씁니다",
    "{arch} is not in the course's table of architectures": "이 과정의 아키텍처 표에 {arch} 항목이 없습니다",
    "{field}: device {mine}, {arch} table {theirs}": "{field}: 장치 {mine}, {arch} 표 {theirs}",
    "{field}: device {mine}, profile {slug} {theirs}": "{field}: 장치 {mine}, profile {slug} {theirs}",
    "{field}: device {mine:g}, profile {slug} {theirs:g}": "{field}: 장치 {mine:g}, profile {slug} {theirs:g}",
    "the table has no profile named {name!r}: predictions use the figures read off the device":
        "표에 이름이 {name!r}인 profile이 없습니다. 예측에는 장치에서 읽은 수치를 씁니다",

    # what runs without a GPU
    "What runs on this machine": "이 컴퓨터에서 실행되는 것",
    "what": "항목",
    "here": "여기서",
    "Triton kernels": "Triton 커널",
    "run in the interpreter on NumPy/torch CPU arrays (correct, ~1000x slower)":
        "NumPy/torch CPU 배열로 interpreter에서 실행합니다(결과는 정확하고, 약 1000배 느립니다)",
    "CUDA C kernels": "CUDA C 커널",
    "compile with NVRTC for {arch}: registers, shared memory, spills, SASS":
        "NVRTC로 {arch}용 컴파일: register 수, shared memory, spill, SASS",
    "timings, bandwidth, TFLOP/s": "시간, 대역폭, TFLOP/s",
    "not available: nothing runs on a GPU": "볼 수 없습니다: GPU에서 실행하는 것이 없습니다",
    "library peers (cuBLAS, torch CUDA)": "라이브러리 비교 대상 (cuBLAS, torch CUDA)",
    "not available: they need a GPU": "볼 수 없습니다: GPU가 필요합니다",
    "kernel files that target {arch}": "{arch} 대상 커널 파일",
    "{n} of {total}": "{total}개 중 {n}개",
    "not for {arch}: {file}": "{arch}용이 아님: {file}",
    "needs {archs} (architecture-specific instructions)": "{archs} 필요 (아키텍처 전용 명령어)",
    " or ": " 또는 ",
    "needs {arch} or later": "{arch} 이상 필요",

    # the software stack and its rules
    "Software stack": "소프트웨어 스택",
    "component": "구성 요소",
    "version": "버전",
    "torch built for CUDA": "torch가 빌드된 CUDA",
    "nvrtc archs": "nvrtc 아키텍처",
    "driver supports CUDA": "driver가 지원하는 CUDA",
    "CUDA runtime (CuPy's)": "CUDA runtime (CuPy)",
    "none (CPU build)": "없음 (CPU 빌드)",
    "missing ({error})": "없음 ({error})",
    "Compatibility rules": "호환성 규칙",
    "rule": "규칙",
    "ok": "정상",
    "CUDA runtime major <= driver's CUDA major (minor versions are compatible)":
        "CUDA runtime major <= driver의 CUDA major (minor 버전끼리는 호환됩니다)",
    "NVRTC <= driver (else its PTX needs a newer JIT; CuPy loads cubins, which is safer)":
        "NVRTC <= driver (아니면 PTX에 더 새로운 JIT가 필요합니다. CuPy는 cubin을 load하므로 더 안전합니다)",
    "torch's CUDA major <= driver's CUDA major": "torch의 CUDA major <= driver의 CUDA major",
    "NVRTC present: CUDA C compiles without a GPU (compile reports)":
        "NVRTC 있음: GPU 없이도 CUDA C를 컴파일합니다(컴파일 보고서)",

    # one action per layer
    "One action per layer": "계층마다 동작 하나",
    "check": "검사",
    "detail": "내용",
    "FAILED": "실패",
    "meaning": "의미",
    "fix": "해결",
    "NVRTC compiles CUDA C for {arch}": "NVRTC가 {arch}용 CUDA C를 컴파일합니다",
    "tour_add for {arch}: {regs} registers, {n} SASS instructions":
        "{arch}용 tour_add: register {regs}개, SASS 명령어 {n}개",
    "Triton launches a kernel": "Triton이 커널을 launch합니다",
    "copy mismatch": "copy 결과가 다릅니다",
    "ran on the GPU": "GPU에서 실행했습니다",
    "ran in the interpreter (TRITON_INTERPRET=1, no GPU)": "interpreter에서 실행했습니다(TRITON_INTERPRET=1, GPU 없음)",
    "CuPy allocates and reduces": "CuPy가 메모리를 할당하고 reduction을 합니다",
    "cupy.sum = {got:.0f} (expected 499500)": "cupy.sum = {got:.0f} (기대값 499500)",
    "a CUDA C kernel compiles, loads and runs": "CUDA C 커널이 컴파일되고, load되고, 실행됩니다",
    "tour_add loaded (NVRTC -> cubin) and ran: {regs} registers":
        "tour_add를 load(NVRTC -> cubin)하고 실행했습니다: register {regs}개",
    "torch runs on the GPU": "torch가 GPU에서 실행됩니다",
    "torch {version} on {gpu}: sum = {got:.0f}": "{gpu}의 torch {version}: sum = {got:.0f}",
    "torch.cuda.is_available() is False: a CPU-only torch build, or its CUDA is newer than the driver "
    "(CUDA driver version is insufficient)":
        "torch.cuda.is_available()가 False입니다. CPU 전용 torch 빌드이거나, torch의 CUDA가 driver보다 새롭습니다"
        "(CUDA driver version is insufficient)",

    # the known errors
    "The mismatch errors met most often (--errors for all):": "가장 자주 만나는 불일치 오류 (전체는 --errors):",
    "With a GPU, the mismatch errors met most often are listed here (--errors shows them all).":
        "GPU가 있으면 가장 자주 만나는 불일치 오류를 여기에 보여 줍니다(--errors로 전부 볼 수 있습니다).",
    "  * {meaning}\n      fix: {fix}": "  * {meaning}\n      해결: {fix}",
    "cudaErrorInsufficientDriver: the CUDA runtime bundled with CuPy/torch is newer than the installed NVIDIA driver "
    "supports (nvidia-smi's 'CUDA Version' is the newest the driver runs).":
        "cudaErrorInsufficientDriver: CuPy/torch에 들어 있는 CUDA runtime이 설치된 NVIDIA driver가 지원하는 것보다 "
        "새롭습니다(nvidia-smi의 'CUDA Version'이 driver가 실행할 수 있는 가장 새로운 버전입니다).",
    "update the driver, or install the wheels built for the driver's CUDA major (cupy-cuda12x, a cu12x torch)":
        "driver를 업데이트하거나, driver의 CUDA major용으로 빌드된 wheel(cupy-cuda12x, cu12x torch)을 설치합니다",
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: PTX from a newer compiler (NVRTC, nvcc, Triton's ptxas) than the driver "
    "can JIT-compile. Compiling straight to the GPU's own code (a cubin, -arch=sm_XY) avoids the driver's JIT.":
        "CUDA_ERROR_UNSUPPORTED_PTX_VERSION: driver가 JIT 컴파일할 수 있는 것보다 새로운 컴파일러(NVRTC, nvcc, "
        "Triton의 ptxas)가 만든 PTX입니다. GPU 고유 코드(cubin, -arch=sm_XY)로 바로 컴파일하면 driver의 JIT를 "
        "거치지 않습니다.",
    "use the NVRTC wheel of the driver's CUDA version (nvidia-cuda-nvrtc==<driver CUDA>.*), or update the driver":
        "driver의 CUDA 버전에 맞는 NVRTC wheel(nvidia-cuda-nvrtc==<driver CUDA>.*)을 쓰거나, driver를 업데이트합니다",
    "CUDA_ERROR_NO_BINARY_FOR_GPU: the binary holds code for other GPUs only (a wheel built without this arch, or a "
    "cubin for sm_90a loaded on sm_80) and no PTX the driver could compile instead.":
        "CUDA_ERROR_NO_BINARY_FOR_GPU: binary에 다른 GPU용 코드만 있고(이 아키텍처 없이 빌드된 wheel, 또는 sm_80에서 "
        "load한 sm_90a용 cubin), driver가 대신 컴파일할 PTX도 없습니다.",
    "install a build that lists this GPU's arch (torch.cuda.get_arch_list()), or compile for -arch=sm_XY of this GPU":
        "이 GPU의 아키텍처가 목록에 있는 빌드를 설치하거나(torch.cuda.get_arch_list()), 이 GPU의 -arch=sm_XY로 "
        "컴파일합니다",
    "NVRTC/nvcc does not know the requested architecture: the compiler is older than the GPU (sm_90 needs CUDA "
    "11.8+), or newer and has dropped it.":
        "NVRTC/nvcc가 요청한 아키텍처를 모릅니다. 컴파일러가 GPU보다 오래되었거나(sm_90에는 CUDA 11.8 이상이 "
        "필요합니다), 더 새로워서 그 아키텍처 지원을 뺐습니다.",
    "upgrade the NVRTC wheel to one that lists the arch (nvrtc.getSupportedArchs()), or target an arch it knows":
        "그 아키텍처가 목록에 있는 NVRTC wheel로 올리거나(nvrtc.getSupportedArchs()), NVRTC가 아는 아키텍처를 "
        "대상으로 합니다",
    "NVRTC is not installed: CuPy finds no libnvrtc.so.* (the CuPy wheel does not bundle it).":
        "NVRTC가 설치되어 있지 않습니다. CuPy가 libnvrtc.so.*를 찾지 못합니다(CuPy wheel에는 들어 있지 않습니다).",
    "pip install 'nvidia-cuda-nvrtc==13.0.*' for cupy-cuda13x (make test / make run do this)":
        "cupy-cuda13x라면 pip install 'nvidia-cuda-nvrtc==13.0.*' (make test / make run이 해 줍니다)",
    "NVRTC finds no CUDA headers: there is no CUDA toolkit, and the header wheels are missing.":
        "NVRTC가 CUDA header를 찾지 못합니다. CUDA toolkit이 없고 header wheel도 없습니다.",
    "pip install 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*'":
        "pip install 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-crt==13.0.*'로 설치합니다",
    "two CuPy wheels are installed (e.g. cupy-cuda12x and cupy-cuda13x): they overwrite each other's files.":
        "CuPy wheel 두 개(예: cupy-cuda12x와 cupy-cuda13x)가 설치되어 있습니다. 서로의 파일을 덮어씁니다.",
    "pip uninstall both, then install the one matching the driver":
        "둘 다 pip uninstall한 다음, driver에 맞는 것 하나만 설치합니다",
    "cudaErrorNoDevice: the driver sees no GPU (CUDA_VISIBLE_DEVICES empty or wrong, or a container without --gpus).":
        "cudaErrorNoDevice: driver가 GPU를 보지 못합니다(CUDA_VISIBLE_DEVICES가 비었거나 틀렸거나, --gpus 없이 띄운 "
        "container입니다).",
    "check nvidia-smi and CUDA_VISIBLE_DEVICES": "nvidia-smi와 CUDA_VISIBLE_DEVICES를 확인합니다",
    "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: the block asks for more registers or shared memory than an SM has "
    "(threads x registers > 65536, or > 48 KiB dynamic shared memory without opting in).":
        "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: block이 SM에 있는 것보다 많은 register나 shared memory를 요구합니다"
        "(thread x register > 65536, 또는 opt-in 없이 dynamic shared memory > 48 KiB).",
    "fewer threads per block, __launch_bounds__, or kernel.max_dynamic_shared_size_bytes = n first (lab 1.5)":
        "block당 thread를 줄이거나, __launch_bounds__를 쓰거나, 먼저 kernel.max_dynamic_shared_size_bytes = n을 "
        "설정합니다(lab 1.5)",

    # predictions (--plan)
    "clock-derived bandwidth (2 x memory clock x bus)": "clock으로 계산한 대역폭 (2 x 메모리 clock x bus)",
    "a large copy reaches (~90% of it)": "큰 copy가 내는 대역폭 (그 값의 약 90%)",
    "copy floor at n = {n} (8 n B / {bw:.0f} GB/s)": "n = {n}에서 copy 시간의 하한 (8 n B / {bw:.0f} GB/s)",
    "peak FP32 (SMs x lanes x 2 x clock)": "최대 FP32 성능 (SM 수 x lane x 2 x clock)",
    "ridge point (FP32 peak / clock-derived bandwidth)": "ridge point (FP32 최대 성능 / clock으로 계산한 대역폭)",
    "resident threads (SMs x threads per SM)": "상주 thread (SM 수 x SM당 thread)",
    "datasheet FP32": "datasheet FP32",

    # the end of a run without a GPU
    "\nNothing was timed: no GPU. The Triton copy ran in the interpreter; CUDA C was only compiled.":
        "\nGPU가 없어 시간을 잰 것은 없습니다. Triton copy는 interpreter에서 실행했고, CUDA C는 컴파일만 했습니다.",

    # the bandwidth table (GPU)
    "figure": "수치",
    "of theoretical": "이론값 대비",
    "theoretical (2 x memory clock x bus width)": "이론값 (2 x 메모리 clock x bus 폭)",
    "measured ceiling ({method}, cached)": "측정한 한계 ({method}, cache된 값)",
    "measured: {variant}, n = {n}": "측정: {variant}, n = {n}",
    "Memory bandwidth of {gpu}": "{gpu}의 메모리 대역폭",

    # the plot
    "theoretical (2 x mem clock x bus)": "이론값 (2 x 메모리 clock x bus)",
    "measured: {probe} (ceiling probe)": "측정: {probe} (한계 probe)",
    "measured: {variant} ({gib:.1f} GiB moved)": "측정: {variant} ({gib:.1f} GiB 이동)",
    "GB/s (bytes read + written)": "GB/s (읽은 바이트 + 쓴 바이트)",
    "{gpu}: theoretical vs measured memory bandwidth": "{gpu}: 이론상 메모리 대역폭과 측정한 대역폭",

    # --set values the kernels cannot take
    "triton copy: COPY_BLOCK a power of two in 32..65536 and at least 32 x COPY_WARPS, COPY_WARPS in 1, 2, 4, 8, 16, "
    "32; got {got}":
        "triton copy: COPY_BLOCK은 32..65536 범위의 2의 거듭제곱이면서 32 x COPY_WARPS 이상이고, COPY_WARPS는 1, 2, 4, 8, 16, 32 중 "
        "하나여야 합니다. 받은 값: {got}",
}
