"""Korean lines of what lab 1.4 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # without a GPU: the predictions
    "What the GPU run would show on {gpu} (a profile of the course's table; --gpu chooses another)":
        "{gpu}에서 GPU로 실행하면 보일 결과 (이 과정의 표에 있는 profile. 다른 GPU는 --gpu로 고릅니다)",
    "(an L2 split in two halves ends its plateau earlier: past one half, loads are served partly by the far one)":
        "(L2가 두 부분으로 나뉜 GPU에서는 평탄 구간이 더 일찍 끝납니다. 한쪽 절반을 넘으면 load의 일부를 먼 쪽 "
        "L2가 처리합니다)",
    "L1 plateau (128 B/clock/SM x SMs x clock)": "L1 평탄 구간 (128 B/clock/SM x SM 수 x clock)",
    "~{gbps:,.0f} GB/s while the working set fits the L1 (at most {kib} KiB per SM)":
        "working set이 L1에 들어가는 동안 약 {gbps:,.0f} GB/s (SM당 최대 {kib} KiB)",
    "L2 plateau": "L2 평탄 구간",
    "above the HBM ceiling, ending within {lo:.0f}-{hi:.0f} MiB (0.5x-1.5x the {l2:.0f} MiB L2)":
        "HBM 한계보다 높고, {lo:.0f}-{hi:.0f} MiB 사이에서 끝남 ({l2:.0f} MiB L2의 0.5배-1.5배)",
    "HBM plateau": "HBM 평탄 구간",
    "near the measured ceiling, below the datasheet's {gbps:,.0f} GB/s":
        "측정한 한계 근처, datasheet의 {gbps:,.0f} GB/s보다 낮음",
    "the main case, {mib} MiB read once": "주 케이스: {mib} MiB를 한 번 읽음",
    "{ms:.2f} ms at {gbps:,.0f} GB/s": "{gbps:,.0f} GB/s에서 {ms:.2f} ms",
    "mem_02's grid (the calculator on its registers)": "mem_02의 grid (register 사용량으로 계산기가 구한 값)",
    "{blocks} blocks = {sms} SMs x {per_sm}": "block {blocks}개 = SM {sms}개 x {per_sm}",
    "bytes in flight per SM (threads x UNROLL x 16 B)": "SM당 in flight 바이트 (thread x UNROLL x 16 B)",
    "{kib} KiB; Little's law asks ~{need:.0f} KiB (bandwidth x ~0.7 us / SMs)":
        "{kib} KiB. Little's law가 요구하는 양은 약 {need:.0f} KiB (대역폭 x 약 0.7 us / SM 수)",
    "shared memory (mem_04)": "shared memory 대역폭 (mem_04)",
    "~{gbps:,.0f} GB/s (128 B/clock/SM)": "약 {gbps:,.0f} GB/s (128 B/clock/SM)",
    "registers (mem_05: 12 B of operands per FFMA)": "register (mem_05: FFMA 하나에 operand 12 B)",
    "~{gbps:,.0f} GB/s ({lanes} FFMA/clock/SM), at most 0.91 of it":
        "약 {gbps:,.0f} GB/s ({lanes} FFMA/clock/SM), 실제로는 그 값의 최대 0.91",
    "{level} latency (published range)": "{level} latency (공개된 범위)",
    "{lo}-{hi} cycles = {lo_ns:.0f}-{hi_ns:.0f} ns at {mhz:.0f} MHz":
        "{lo}-{hi} cycle = {mhz:.0f} MHz에서 {lo_ns:.0f}-{hi_ns:.0f} ns",
    "0.25 FLOP/B against the ridge point": "0.25 FLOP/B와 ridge point 비교",
    "{ridge:.1f} FLOP/B: {x:.0f}x below": "{ridge:.1f} FLOP/B: {x:.0f}배 낮음",

    # the compile report
    "-> mem_02 issues {n} x LDG.E.128 in its loop: {unroll} independent 16-byte loads before the first add "
    "(Little's law: bytes in flight hide latency).":
        "-> mem_02는 loop 안에서 LDG.E.128을 {n}개 냅니다. 첫 덧셈 전에 서로 독립인 16바이트 load를 {unroll}개 "
        "냅니다(Little's law: in flight 바이트가 latency를 가립니다).",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # the plan
    "a {mib} MiB working set read once": "{mib} MiB working set을 한 번 읽음",
    " (mem_02's fallback)": " (mem_02가 대신 쓰는 경로)",
    "a {mib} MiB working set, {floats} floats a program": "{mib} MiB working set, program 하나에 float {floats}개",
    "the pointer chase: one thread": "pointer chase: thread 하나",
    "shared memory: a {kib} KiB tile per block": "shared memory: block마다 {kib} KiB tile",
    "registers: {n} FFMA chains per thread": "register: thread마다 FFMA chain {n}개",
    "(could not set the L1 carve-out preference: {error})": "(L1 carve-out 선호 설정을 하지 못했습니다: {error})",

    # the benchmark (GPU)
    "working sets": "working set 크기",
    "pointer chase": "pointer chase 크기",
    "Read bandwidth vs working set (cuda 02, float4)": "working set별 읽기 대역폭 (cuda 02, float4)",
    "working_set_bytes": "working set 바이트",
    "per_block": "block당",
    "The same sweep in Triton, at one working set per level": "같은 sweep을 Triton으로, 계층마다 working set 하나",
    "GB/s cuda 02": "GB/s cuda 02",
    "GB/s triton": "GB/s triton",
    "Pointer-chase latency": "Pointer chase로 잰 latency",
    "level": "계층",
    "steps": "단계",
    "warm": "warm-up",
    "cycles_per_load": "load당 cycle",
    "ns_per_load": "load당 ns",
    "clock_mhz_seen": "관찰한 clock MHz",
    "chase_ok": "chase 정상",
    "L1": "L1",
    "L2 (fits half)": "L2 (절반에 들어감)",
    "L2 (full)": "L2 (가득 참)",
    "L2 edge": "L2 경계",
    "On-chip levels": "On-chip 계층",
    "shared memory (mem_04, LDS.128)": "shared memory 읽기 (mem_04, LDS.128)",
    "registers (mem_05, FFMA operands)": "register (mem_05, FFMA operand)",
    "tflops": "TFLOP/s",
    "Each level against its published figure": "계층별 측정값과 공개된 수치",
    "measured GB/s": "측정 GB/s",
    "published GB/s": "공개 GB/s",
    "source": "출처",
    "registers (FFMA operands)": "register (FFMA operand)",
    "{lanes} FP32 lanes/SM ({arch}): 12 B of operands x {lanes} FFMA/clock/SM":
        "SM당 FP32 lane {lanes}개 ({arch}): operand 12 B x {lanes} FFMA/clock/SM",
    "L1 (global loads)": "L1 (global load 경로)",
    "no per-GPU figure (the lesson cites published L2 bandwidths)":
        "GPU별 수치 없음 (공개된 L2 대역폭은 본문에 인용되어 있습니다)",
    "Predictions and published ranges vs measurement": "예측과 공개된 범위, 그리고 측정",
    "range": "범위",
    "{level} latency in the published range": "{level} latency가 공개된 범위 안에 있음",
    "{lo}-{hi} cycles": "{lo}-{hi} cycle",
    "L2 plateau ends near the L2 size (0.5x .. 1.5x)": "L2 평탄 구간이 L2 크기 근처에서 끝남 (0.5배 .. 1.5배)",
    "every pointer chase ended where the host's walk ends": "모든 pointer chase가 host에서 따라간 경로와 같은 곳에서 끝남",
    "published L1 latencies of recent NVIDIA GPUs, ~30-40 cycles (README.md)":
        "최근 NVIDIA GPU의 공개된 L1 latency, 약 30-40 cycle (README.md)",
    "published L2 latencies, near to far L2 half (README.md)": "공개된 L2 latency, 가까운 L2 절반부터 먼 절반까지 (README.md)",
    "published DRAM latencies beyond the L2 (README.md)": "L2 너머 DRAM의 공개된 latency (README.md)",
    "NVIDIA: 128 B/clock/SM from L1 and shared memory, Volta and later":
        "NVIDIA: L1과 shared memory에서 128 B/clock/SM, Volta 이후",

    # the plots
    "working set (bytes, log scale)": "working set (바이트, log 눈금)",
    "GB/s read": "읽기 GB/s",
    "{gpu}: read bandwidth vs working set (L2 not flushed, every block re-reads its range)":
        "{gpu}: working set별 읽기 대역폭 (L2 flush 없음, block마다 자기 범위를 반복해서 읽음)",
    "L1/shared published: 128 B/clk/SM x {sms} x {mhz:.0f} MHz = {gbps:,.0f} GB/s":
        "L1/shared 공개 수치: 128 B/clk/SM x {sms} x {mhz:.0f} MHz = {gbps:,.0f} GB/s",
    "measured HBM ceiling {gbps:,.0f} GB/s ({method})": "측정한 HBM 한계 {gbps:,.0f} GB/s ({method})",
    "datasheet HBM {gbps:,} GB/s": "datasheet HBM {gbps:,} GB/s",
    "L2 half {mib:.0f} MiB": "L2 절반 {mib:.0f} MiB",
    "published {level}: {lo}-{hi} cycles": "공개된 {level}: {lo}-{hi} cycle",
    "cycles per dependent load": "의존 load당 cycle",
    "ns per dependent load": "의존 load당 ns",
    "working set of the pointer chase (bytes)": "pointer chase의 working set (바이트)",
    "latency per load": "load당 latency",
    "{gpu}: pointer-chase latency (one thread, random 128-byte lines)":
        "{gpu}: pointer chase latency (thread 하나, 무작위 128바이트 line)",
    "published": "공개 수치",
    "GB/s (log scale)": "GB/s (log 눈금)",
    "{gpu}: bandwidth of each level of the hierarchy": "{gpu}: 메모리 계층별 대역폭",

    # --set values the kernels cannot take
    "mem_02: UNROLL in 1, 2, 4, 8, 16; got {got}":
        "mem_02: UNROLL은 1, 2, 4, 8, 16 중 하나여야 합니다. 받은 값: {got}",
    "mem_04: TILE_FLOAT4 a power of two from {lo} (one float4 per thread) to {hi} (48 KiB of static shared memory); "
    "got {got}":
        "mem_04: TILE_FLOAT4는 {lo}(thread마다 float4 하나)부터 {hi}(static shared memory 48 KiB)까지의 2의 거듭제곱이어야 합니다. 받은 값: "
        "{got}",
    "mem_05: NACC in 1..32; got {got}":
        "mem_05: NACC는 1..32 범위여야 합니다. 받은 값: {got}",
    "triton read_sweep_kernel: BLOCK a power of two in 32..65536, num_warps in 1, 2, 4, 8, 16, 32; got {got}":
        "triton read_sweep_kernel: BLOCK은 32..65536 범위의 2의 거듭제곱, num_warps는 1, 2, 4, 8, 16, 32 중 하나여야 합니다. 받은 값: {got}",

    # what a size note names when the GPU's memory cannot hold the benchmark (common.plan.fit)
    "the largest working set": "가장 큰 working set",
}
