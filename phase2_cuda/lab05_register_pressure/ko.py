"""Korean lines of what lab 2.5 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "elements of the timed matrix (default 2^26, quick 2^22); cols = size / WORK":
        "시간을 재는 행렬의 원소 수 (기본값 2^26, quick 2^22). 열 수 = size / WORK",

    # the compile report, on every machine
    "compiling for {arch}": "{arch}용 컴파일",
    "{file} compiled with NVRTC {version} for {arch}: one row per setting ({threads} threads per block)":
        "{arch}용 NVRTC {version} 컴파일 결과, {file}: 설정마다 한 행 (block당 thread {threads}개)",
    "setting": "설정",
    "study point: no variant launches this setting": "비교용 지점: 이 설정을 launch하는 variant는 없습니다",
    "work": "WORK",
    "stack": "stack",
    "max loads in flight/SM (B)": "SM당 최대 in flight load (B)",
    "-> as WORK grows, registers {rise} and spills {appear} (values from the compile report above).":
        "-> WORK가 커지면 register 수는 {rise}, spill은 {appear} (위 컴파일 보고서의 값).",
    "rise": "늘어나고",
    "DO NOT rise": "늘어나지 않고(예상과 다름)",
    "appear": "생깁니다",
    "DO NOT appear": "생기지 않습니다(예상과 다름)",
    "{n} B spilled": "spill {n} B",
    "no spill": "spill 없음",
    "-> {name}: {before} -> {after} registers, occupancy {occ0:.0%} -> {occ:.0%}, {spill}":
        "-> {name}: register {before} -> {after}개, occupancy {occ0:.0%} -> {occ:.0%}, {spill}",
    "-> {name}: {regs} registers, occupancy {occ:.0%}, {spill}": "-> {name}: register {regs}개, occupancy {occ:.0%}, "
    "{spill}",
    "-> {name}: {b} B of local memory per thread, {spill}: the array lives in local memory because it is indexed at "
    "run time":
        "-> {name}: thread당 local memory {b} B, {spill}: 실행 중에 계산한 index로 접근하므로 배열이 local memory에 "
        "놓입니다",
    "\nCUDA C kernels were compiled, not run (no GPU): the registers, spills and occupancy above are what the GPU run "
    "times; the Triton kernel ran in the interpreter.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. 위의 register, spill, occupancy가 GPU에서 "
        "실행할 때 시간을 재는 대상입니다. Triton 커널은 interpreter에서 실행했습니다.",

    # predictions (--plan)
    "floor at {n} elements (8 B each / {gbps:.0f} GB/s)": "원소 {n}개에서 시간의 하한 (원소당 8 B / {gbps:.0f} GB/s)",
    "loads in flight per SM Little's law asks (half the bandwidth x 0.7 us)":
        "Little's law가 요구하는 SM당 in flight load (대역폭의 절반 x 0.7 us)",
    "{regs} registers, {spill}, {blocks} blocks/SM ({occ:.0%}, {limit}), {kib:.0f} KiB in flight per SM":
        "register {regs}개, {spill}, SM당 block {blocks}개 ({occ:.0%}, {limit}), SM당 in flight {kib:.0f} KiB",

    # the plan
    "setting {name}: {rows} x {cols} float32": "설정 {name}: {rows} x {cols} float32",
    "{rows} x {cols} float32 (checked, not timed)": "{rows} x {cols} float32 (검증만 하고 시간은 재지 않음)",

    # the benchmark (GPU)
    "settings": "설정",
    "column normalize, {n:,} fp32 elements per setting (rows = WORK): registers, spills, occupancy (driver / "
    "measured by the probe), time; ceiling {gbps:.0f} GB/s":
        "열 정규화, 설정마다 fp32 원소 {n:,}개 (행 수 = WORK): register, spill, occupancy (driver / probe로 측정), "
        "시간. 한계 {gbps:.0f} GB/s",
    "local_bytes": "local 바이트",
    "blocks_per_sm_driver": "driver의 SM당 block",
    "occupancy_theory": "이론 occupancy",
    "occupancy_measured": "측정 occupancy",
    "vs_best": "최고 대비",
    "the caps, against colnorm_01 at the same work": "상한을 건 설정과 같은 WORK의 colnorm_01 비교",
    "cap": "상한",

    # the plot
    "GB/s (left)": "GB/s (왼쪽 축)",
    "WORK (values per thread, compile-time)": "WORK (thread당 값 개수, compile-time)",
    "registers (right)": "register (오른쪽 축)",
    "measured occupancy % (right)": "측정한 occupancy % (오른쪽 축)",
    "registers / occupancy %": "register / occupancy %",
    "spills: {n} B stored": "spill: {n} B store",
    "Column normalize, 2^{log} fp32, on {gpu}": "{gpu}의 열 정규화, 2^{log} fp32",

    # --set values the kernels cannot take
    "triton colnorm: BLOCK_C a power of two in 16..256, num_warps in 1, 2, 4, 8, 16; got {got}":
        "triton colnorm: BLOCK_C는 16..256 범위의 2의 거듭제곱, num_warps는 1, 2, 4, 8, 16 중 하나여야 합니다. 받은 값: {got}",
}
