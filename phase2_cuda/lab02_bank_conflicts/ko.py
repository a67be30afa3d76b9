"""Korean lines of what lab 2.2 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "rows of the row-sum benchmark (default 2^23 = {rows}, quick 2^20)":
        "row-sum benchmark의 행 수 (기본값 2^23 = {rows}, quick 2^20)",

    # the model, on every machine
    "lane i reads word i * stride: predicted passes per warp load (1 = conflict-free)":
        "lane i가 word i * stride를 읽을 때: warp load 하나의 예측 pass 수 (1 = conflict 없음)",
    "gcd(s,32)": "gcd(s,32)",
    "passes (simulated)": "pass 수 (시뮬레이션)",
    "banks used": "사용한 bank 수",
    "32, xor swizzle": "32, xor swizzle 적용",
    "row sums: shared-memory passes per tile": "row sum: tile당 shared memory pass 수",
    "row-sum tile layout": "row-sum tile 배치",
    "passes per 32x32 tile (32 stores + 32 loads)": "32x32 tile당 pass 수 (store 32번 + load 32번)",
    "conflicted": "conflict 있음",
    "padded": "padding",
    "swizzled": "swizzle",
    "predictions for {gpu} (its SMs, clock and bandwidth)": "{gpu}에 대한 예측 (SM 수, clock, 대역폭 반영)",
    "HBM bytes per clock per SM (bandwidth / SMs / clock)": "SM당 clock당 HBM 바이트 (대역폭 / SM 수 / clock)",
    "the conflicted tile walk (4096 B per 1056 passes)": "conflict가 있는 tile 순회 (pass 1056번에 4096 B)",
    "{b:.1f} B per clock per SM": "SM당 clock당 {b:.1f} B",
    "row sums floor at {rows} rows (132 B a row / {gbps:.0f} GB/s)":
        "행 {rows}개 row sum의 시간 하한 (행당 132 B / {gbps:.0f} GB/s)",
    "cuda 01 conflicted (1056 passes per tile)": "cuda 01 conflicted (tile당 pass 1056번)",
    "{x:.1f}x the floor: shared memory is the bound": "하한의 {x:.1f}배: shared memory가 한계를 정합니다",
    "the conflict hides under the DRAM time": "conflict가 DRAM 시간 뒤에 가려집니다",
    "cuda 02 / 03 (64 passes per tile)": "cuda 02 / 03 (tile당 pass 64번)",
    "stride sweep: one wave of both kernels": "stride sweep: 두 커널 모두 wave 하나",
    "{blocks} blocks ({per_sm} per SM)": "block {blocks}개 (SM당 {per_sm}개)",

    # the compile report
    "-> the three row-sum kernels issue the same shared-memory instructions (LDS {lds}, STS {sts}); only the "
    "addresses differ, and with them the number of passes per instruction.":
        "-> 세 row-sum 커널은 같은 shared memory 명령어를 냅니다(LDS {lds}, STS {sts}). 다른 것은 주소뿐이고, 그래서 "
        "명령어 하나당 pass 수가 달라집니다.",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton row sum ran in the interpreter. The pass counts "
    "printed first are the predictions the GPU run measures.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton row sum은 interpreter에서 실행했습니다. "
        "앞에 출력한 pass 수가 GPU에서 실행할 때 재는 예측입니다.",

    # the variants' notes
    "tile[32][32], 32-way": "tile[32][32], 32-way conflict",
    "word r*32 + (c^r)": "word r*32 + (c^r)",

    # the plan
    "stride sweep: one wave, {per_sm} blocks per SM": "stride sweep: wave 하나, SM당 block {per_sm}개",

    # the benchmark (GPU)
    "the sweep kernels (exact sums)": "sweep 커널 검증 (정확한 합)",
    "ok (exact)": "통과 (정확히 일치)",
    "MISMATCH: {n} threads differ": "불일치: thread {n}개가 다름",
    "bank stride sweep": "bank stride sweep 지점",
    "row sums {rows}x32": "row sum {rows}x32 측정",
    "stride sweep: measured slowdown vs predicted passes (cycles per load: estimated with the device's maximum SM "
    "clock)":
        "stride sweep: 측정한 감속 비율과 예측한 pass 수 (load당 cycle은 장치의 최대 SM clock으로 추정)",
    "passes_pred": "예측 pass",
    "slowdown": "감속 비율",
    "smem_gbps": "smem GB/s",
    "row sums {rows}x32 fp32 (132 B per row), measured HBM ceiling {gbps:.0f} GB/s":
        "row sum {rows}x32 fp32 (행당 132 B), 측정한 HBM 한계 {gbps:.0f} GB/s",
    "vs_fastest": "최고 대비",

    # the plots
    "measured slowdown vs stride 1": "stride 1 대비 측정한 감속 비율",
    "predicted: passes = gcd(stride, 32)": "예측: pass 수 = gcd(stride, 32)",
    "lane stride (4-byte words); 33 = a 32-word row padded by one": "lane stride (4바이트 word). 33 = 32-word 행에 "
    "padding 하나",
    "time / time at stride 1": "시간 / stride 1일 때의 시간",
    "Shared-memory bank conflicts on {gpu}": "{gpu}의 shared memory bank conflict",
    "xor swizzle of the stride-32 walk: {x:.2f}x": "stride-32 순회에 xor swizzle 적용: {x:.2f}배",
    "GB/s (132 bytes per row / time)": "GB/s (행당 132 바이트 / 시간)",
    "Row sums {rows}x32 fp32 on {gpu}": "{gpu}의 row sum {rows}x32 fp32",

    # --set values the kernels cannot take
    "rowsum_01..03: WARPS in 1, 2, 4, 8 (a 33 KiB tile array at 8), got {got}":
        "rowsum_01..03: WARPS는 1, 2, 4, 8 중 하나여야 합니다(8이면 tile 배열이 33 KiB). 받은 값: {got}",
    "triton rowsum: BLOCK_R a power of two in 16..512, num_warps in 1, 2, 4, 8, 16; got {got}":
        "triton rowsum: BLOCK_R은 16..512 범위의 2의 거듭제곱, num_warps는 1, 2, 4, 8, 16 중 하나여야 합니다. 받은 값: {got}",

    # what a size note names when the GPU's memory cannot hold the benchmark (common.plan.fit)
    "rows": "행 수",
}
