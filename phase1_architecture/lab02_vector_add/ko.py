"""Korean lines of what lab 1.2 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "largest n of the sweep (default 2^29, quick 2^22)": "sweep의 최대 n (기본값 2^29, quick 2^22)",
    "(GPU) sweep the launch parameters of vadd_04 and Triton": "(GPU) vadd_04와 Triton의 launch parameter를 sweep합니다",

    # the compile report
    "-> vadd_03_float4 issues {n128} x 128-bit loads (LDG.E.128): the float4 path really is 16 bytes per load; "
    "vadd_01 issues {n32} x 32-bit loads.":
        "-> vadd_03_float4는 128-bit load(LDG.E.128)를 {n128}개 냅니다. float4 경로는 실제로 load 하나에 16바이트를 "
        "읽습니다. vadd_01은 32-bit load를 {n32}개 냅니다.",
    "Triton add_kernel compiled ahead of time for {arch} (BLOCK={block}, num_warps={warps}):":
        "{arch}용으로 ahead-of-time 컴파일한 Triton add_kernel (BLOCK={block}, num_warps={warps}):",
    "no alignment known": "정렬을 모를 때",
    "pointers 16-byte aligned and n % 16 == 0": "pointer가 16바이트 정렬이고 n % 16 == 0일 때",
    "PTX global memory ops: {ops}": "PTX global memory 명령: {ops}",
    "  A GPU launch learns alignment from the actual arguments (addresses and n divisible by 16), so the fast\n"
    "  path is taken on aligned data and the scalar one on odd sizes or offset views.":
        "  GPU에서 launch할 때 Triton은 실제 인자(16으로 나누어지는 주소와 n)에서 정렬을 알아냅니다. 그래서 정렬된\n"
        "  데이터에는 빠른 경로를 쓰고, 홀수 크기나 offset이 있는 view에는 대신 scalar 경로를 씁니다.",
    "\nCUDA C variants were compiled, not run (no GPU); the Triton kernel ran in the interpreter.":
        "\nGPU가 없어 CUDA C variant는 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # predictions (--plan)
    "floor at n = {n} (12 n B / {bw:.0f} GB/s)": "n = {n}에서 시간의 하한 (12 n B / {bw:.0f} GB/s)",
    "largest n whose three arrays fit in L2": "배열 세 개가 L2에 들어가는 최대 n",
    "one wave of vadd_02 (blocks of 256 on every SM)": "vadd_02의 wave 하나 (모든 SM에 256 thread block)",
    "fp32 ridge point (datasheet FLOP/s over bandwidth)": "fp32 ridge point (datasheet FLOP/s / 대역폭)",
    "{ridge:.1f} FLOP/B: 1/12 FLOP/B is {below:.0f}x below": "{ridge:.1f} FLOP/B: 1/12 FLOP/B는 그보다 {below:.0f}배 낮습니다",

    # the benchmark (GPU)
    "vector add sizes": "vector add 크기",
    "head-to-head sizes": "직접 비교 크기",
    "n = 2^{log} (12 n = {gib:.2f} GiB moved), measured ceiling {ceiling:.0f} GB/s":
        "n = 2^{log} (12 n = {gib:.2f} GiB 이동), 측정한 한계 {ceiling:.0f} GB/s",
    "target: >= 1.0x torch.add at 2^28 elements and above (interleaved rounds)":
        "목표: 원소 2^28개 이상에서 torch.add의 1.0배 이상 (번갈아 잰 round)",
    "vadd_04 / Triton launch parameters at n = 2^28 (interleaved rounds)":
        "n = 2^28에서 vadd_04 / Triton의 launch parameter (번갈아 잰 round)",
    "gbps": "GB/s",
    "frac_ceiling": "한계 대비",
    "vs_torch_add": "torch.add 대비",
    "vs torch.add": "torch.add 대비",
    "spread": "편차",
    "target": "목표",
    "met": "달성",
    "config": "설정",

    # the plot
    "launch-bound": "launch 비용 구간",
    "L2-resident": "L2 상주",
    "HBM-bound": "HBM 대역폭 구간",
    "measured HBM ceiling {gbps:.0f} GB/s ({method})": "측정한 HBM 한계 {gbps:.0f} GB/s ({method})",
    "datasheet {gbps} GB/s": "datasheet {gbps} GB/s",
    "HBM: measured {gbps:.0f} GB/s (dashed)": "HBM: 측정값 {gbps:.0f} GB/s (파선)",
    ", datasheet {gbps} (dotted)": ", datasheet {gbps} (점선)",
    " (peer)": " (비교 대상)",
    "{names} lie on one another: each is drawn as a band, the one drawn first widest, so every colour shows":
        "{names}의 선이 서로 겹칩니다: 각 선을 띠로 그리고 먼저 그린 선일수록 넓게 그려 모든 색이 보입니다",
    "GB/s (reads + writes)": "GB/s (읽기 + 쓰기)",
    ", log scale": ", log 눈금",
    "3 arrays = L2 ({mib:.0f} MiB)": "배열 3개 = L2 ({mib:.0f} MiB)",
    "if every call took a fixed {us:.2f} \u00b5s\n(the fastest call measured):\n"
    "GB/s = 12 n bytes / {us:.2f} \u00b5s,\ndoubling with n":
        "호출마다 고정된 {us:.2f} \u03bcs가 든다면\n(측정한 가장 빠른 호출):\n"
        "GB/s = 12 n 바이트 / {us:.2f} \u03bcs,\nn이 두 배면 두 배",
    "elements n (fp32; 12 n bytes moved)": "원소 수 n (fp32, 12 n 바이트 이동)",
    "linear axis: the L2 peak and the HBM plateau": "선형 축: L2 최고점과 HBM 평탄 구간",
    "log axis: the launch-bound region, where bandwidth grows with n":
        "log 축: 대역폭이 n에 비례해 커지는 launch 비용 구간",
    "Vector add on {gpu}: bandwidth vs size (L2 not flushed; n <= 2^{log} timed as CUDA graphs)":
        "{gpu}의 vector add: 크기별 대역폭 (L2 flush 없음, n <= 2^{log}: CUDA graph로 측정)",

    # --set values the kernels cannot take
    "vadd_04: THREADS_04 in 32..1024 (a power of two), UNROLL in 1, 2, 4, 8, STREAM 0 or 1; got {got}":
        "vadd_04: THREADS_04는 32..1024 범위의 2의 거듭제곱, UNROLL은 1, 2, 4, 8 중 하나, STREAM은 0 또는 1이어야 합니다. 받은 값: {got}",
}
