"""Korean lines of what lab 1.5 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "elements of the sweep (default {n}, quick 2^22; scaled down where the GPU's memory cannot hold it)":
        "sweep의 원소 수 (기본값 {n}, quick 2^22). GPU 메모리에 담기지 않으면 줄입니다",
    "(GPU) record the driver's occupancy answers as JSON for tests/test_common_occupancy.py and exit":
        "(GPU) driver가 답한 occupancy를 tests/test_common_occupancy.py용 JSON으로 기록하고 끝냅니다",
    "--record-fixture needs a GPU ({why})": "--record-fixture에는 GPU가 필요합니다({why})",

    # the calculator, explained
    "Worked examples from NVIDIA's documentation, recomputed": "NVIDIA 문서의 계산 예제를 다시 계산한 결과",
    "expected": "문서의 값",
    "calculator": "계산기",
    "CUDA C++ Programming Guide, 'Multiprocessor Level' (64K registers, 2048 threads/SM)":
        "CUDA C++ Programming Guide, 'Multiprocessor Level' (register 64K개, SM당 thread 2048개)",
    "CUDA C++ Best Practices Guide, 'Calculating Occupancy' (compute capability 7.0; sm_80 has the same register "
    "file and thread limits)":
        "CUDA C++ Best Practices Guide, 'Calculating Occupancy' (compute capability 7.0. sm_80도 register file과 "
        "thread 한계가 같습니다)",
    "512 threads x {regs} registers": "thread 512개 x register {regs}개",
    "{threads} threads x 37 registers": "thread {threads}개 x register 37개",
    "2 blocks (32 warps)": "block 2개 (warp 32개)",
    "1 block (16 warps)": "block 1개 (warp 16개)",
    "12 blocks, 75%": "block 12개, 75%",
    "4 blocks, 63%": "block 4개, 63%",
    "{blocks} block ({warps} warps), limiter {limiter}": "block {blocks}개 (warp {warps}개), 제한 요인 {limiter}",
    "{blocks} blocks ({warps} warps), limiter {limiter}": "block {blocks}개 (warp {warps}개), 제한 요인 {limiter}",
    "{blocks} blocks, {occ:.1%}": "block {blocks}개, {occ:.1%}",
    "The calculator on {arch}": "{arch}에서 계산기가 구한 값",
    "limiter": "제한 요인",
    "note": "참고",
    "registers": "register",
    "warps": "warp",
    "barriers": "barrier",

    # predictions (--plan)
    "floor at n = {n} (8 n B / {bw:.0f} GB/s)": "n = {n}에서 시간의 하한 (8 n B / {bw:.0f} GB/s)",
    "{kernel}: natural occupancy (256 threads, {regs} registers)":
        "{kernel}: 강제하지 않은 occupancy (thread 256개, register {regs}개)",
    "{blocks} blocks/SM = {warps}/{top} warps ({limiter})": "SM당 block {blocks}개 = warp {warps}/{top}개 ({limiter})",
    "{kernel}: the sweep's warps per SM": "{kernel}: sweep의 SM당 warp 수",
    "{kernel}: {bytes} B in flight per warp, Little's law at 1 warp/SM":
        "{kernel}: warp당 in flight {bytes} B, SM당 warp 1개일 때 Little's law",
    "{kernel}: warps/SM the datasheet bandwidth needs": "{kernel}: datasheet 대역폭에 필요한 SM당 warp 수",
    ": more than the SM's {top}, so it cannot saturate HBM": ": SM의 최대치 {top}보다 많아서 HBM을 포화시킬 수 없습니다",
    "1/8 FLOP/B against the ridge point": "1/8 FLOP/B와 ridge point 비교",
    "{ridge:.1f} FLOP/B: {x:.0f}x below it": "{ridge:.1f} FLOP/B: 그보다 {x:.0f}배 낮음",
    "the sweep: {w} warps/SM, {case}": "sweep: SM당 warp {w}개, {case}",
    "the sweep: {w} warp/SM, {case}": "sweep: SM당 warp {w}개, {case}",

    # the compile report
    "-> {kernel}: {regs} registers, {threads}-thread blocks: {blocks} blocks/SM = {occ:.0%} occupancy ({limiter})":
        "-> {kernel}: register {regs}개, {threads}-thread block: SM당 block {blocks}개 = occupancy {occ:.0%} ({limiter})",
    "Register counts of occ_probe_registers (NLIVE=240) under -maxrregcount caps, and what they allow:":
        "-maxrregcount 상한별 occ_probe_registers (NLIVE=240)의 register 수와, 그 상한으로 가능한 것:",
    "maxrregcount": "maxrregcount",
    "spill bytes": "spill 바이트",
    "blocks/SM at 256 threads": "256 thread일 때 SM당 block",
    "occupancy": "occupancy",
    "   (fewer registers buy occupancy and cost spills: local-memory traffic the kernel did not have)":
        "   (register를 줄이면 occupancy를 얻는 대신 spill이 생깁니다. 원래 커널에 없던 local memory 트래픽입니다)",
    "\nOn a GPU this lab also asks the driver for the same answers, and measures bandwidth from 1 warp/SM to full "
    "occupancy.\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.":
        "\nGPU에서는 같은 질문을 driver에게도 하고, SM당 warp 1개부터 occupancy 100%까지 대역폭을 잽니다.\n"
        "GPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # the driver's answers (GPU)
    "calculator vs driver on this GPU: {agree}/{n} cases agree": "이 GPU에서 계산기와 driver 비교: {n}개 중 {agree}개 일치",
    "  MISMATCH {case}": "  불일치 {case}",
    "  driver refused {threads} threads, {dyn} B dynamic shared memory: {error}":
        "  driver가 thread {threads}개, dynamic shared memory {dyn} B를 거부했습니다: {error}",
    "recording on {gpu} ({arch}): compiling occ_probe_registers with register caps ...":
        "{gpu}({arch})에서 기록 중: register 상한별로 occ_probe_registers를 컴파일합니다 ...",
    "wrote {path}: {n} cases, register counts {regs}": "저장: {path}: 케이스 {n}개, register 수 {regs}",
    "calculator vs driver: {agree}/{n} agree; ARCHS table vs device: {props}":
        "계산기와 driver 비교: {n}개 중 {agree}개 일치. ARCHS 표와 장치 비교: {props}",
    "agree": "일치",

    # the benchmark (GPU)
    "Bandwidth vs resident warps per SM (latency fitted on the 1-warp point: {ns:.0f} ns)":
        "SM당 상주 warp 수별 대역폭 (warp 1개 지점에 맞춘 latency: {ns:.0f} ns)",
    "warps_per_sm": "SM당 warp",
    "blocks_per_sm": "SM당 block",
    "driver_blocks_per_sm": "driver의 SM당 block",
    "dyn_smem": "dynamic smem",
    "predicted_gbps": "예측 GB/s",
    "Predictions vs measurement": "예측과 측정",
    "calculator == driver for every live case": "실제로 물어본 모든 케이스에서 계산기 == driver",
    "forced blocks/SM == driver's blocks/SM at every sweep point": "sweep의 모든 지점에서 강제한 SM당 block == driver의 SM당 block",
    "scalar: 16 warps/SM carry ~16x the bandwidth of 1 (Little's law, below the ceiling)":
        "scalar: SM당 warp 16개가 warp 1개의 약 16배 대역폭을 냄 (Little's law, 한계 아래에서)",
    "float4 x4: >= 80% of its {full}-warp (full occupancy) bandwidth at 16 warps/SM":
        "float4 x4: SM당 warp 16개에서 warp {full}개(occupancy 100%) 대역폭의 80% 이상",

    # the plots
    "driver (this GPU)": "driver (이 GPU)",
    "occupancy (% of max warps)": "occupancy (최대 warp 대비 %)",
    "registers (256 threads, no shared memory)": "register 수 (thread 256개, shared memory 없음)",
    "shared memory/block in KiB (128 threads, 32 registers)": "block당 shared memory, KiB (thread 128개, register 32개)",
    "threads/block (32 registers, no shared memory)": "block당 thread (register 32개, shared memory 없음)",
    "Theoretical occupancy on {arch} ({family})": "{arch}({family})의 이론상 occupancy",
    "Little's law: {name}": "Little's law: {name}",
    "measured HBM ceiling {gbps:,.0f} GB/s": "측정한 HBM 한계 {gbps:,.0f} GB/s",
    "resident warps per SM (forced with dynamic shared memory)": "SM당 상주 warp (dynamic shared memory로 강제)",
    "GB/s (read + write)": "GB/s (읽기 + 쓰기)",
    "{gpu}: bandwidth vs occupancy, y = a x over {n:,} floats\n"
    "dashed: Little's law, 2 x SMs x warps x bytes/warp in flight / {ns:.0f} ns (fitted on 1 warp/SM)":
        "{gpu}: occupancy별 대역폭, float {n:,}개에 y = a x\n"
        "파선: Little's law, 2 x SM 수 x warp 수 x warp당 in flight 바이트 / {ns:.0f} ns (SM당 warp 1개에 맞춤)",

    # --set values the kernels cannot take
    "occ_02: UNROLL in 1, 2, 4, 8, 16; got {got}":
        "occ_02: UNROLL은 1, 2, 4, 8, 16 중 하나여야 합니다. 받은 값: {got}",
    "triton scale_kernel: BLOCK a power of two in 32..65536, num_warps in 1, 2, 4, 8, 16, 32; got {got}":
        "triton scale_kernel: BLOCK은 32..65536 범위의 2의 거듭제곱, num_warps는 1, 2, 4, 8, 16, 32 중 하나여야 합니다. 받은 값: {got}",
}
