"""Korean lines of what lab 3.3 prints: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants, the plan, the configurations
    "softmax_triton, rows of {n} ({dtype})": "softmax_triton, 길이 {n}의 행 ({dtype})",
    "softmax_triton, rows of {n} ({dtype}), no record": "softmax_triton, 길이 {n}의 행 ({dtype}), 기록 안 씀",
    "fp32 only: in 16 bits each intermediate is rounded": "fp32 전용: 16비트에서는 중간값마다 반올림됩니다",
    "{case}: softmax_triton with this GPU's record (the benchmark's 'tuned')":
        "{case}: 이 GPU의 기록을 쓰는 softmax_triton (benchmark의 'tuned')",
    "{rows} x {cols} float32 (the row-length sweep)": "{rows} x {cols} float32 (행 길이 sweep)",
    "fixed (a quarter row a step)": "고정 (한 step에 행의 4분의 1)",

    # explain: bytes and predictions
    "Bytes each implementation moves at {m} x {n} (a pass = every element read or written once)":
        "{m} x {n}에서 구현마다 옮기는 바이트 (pass 하나 = 모든 원소를 한 번 읽거나 씀)",
    "implementation": "구현",
    "passes": "pass 수",
    "torch unfused ops (max, sub, exp, sum, div)": "fusion하지 않은 torch 연산 (max, sub, exp, sum, div)",
    "fused (one read, one write)": "fused (읽기 한 번, 쓰기 한 번)",
    "online (two reads, one write)": "online (읽기 두 번, 쓰기 한 번)",
    "floor at {m} x {n} {dtype}: fused (2 passes) / unfused torch ({passes} passes)":
        "{m} x {n} {dtype}의 하한: fused (pass 2번) / fusion하지 않은 torch (pass {passes}번)",
    "{fused:.3f} ms / {unfused:.3f} ms at {bw:.0f} GB/s": "{bw:.0f} GB/s에서 {fused:.3f} ms / {unfused:.3f} ms",
    "fp32 ridge point (datasheet)": "fp32 ridge point (datasheet 기준)",
    "{ridge:.0f} FLOP/B: softmax's ~0.6 FLOP/B is {times:.0f}x below":
        "{ridge:.0f} FLOP/B: softmax의 ~0.6 FLOP/B는 이보다 {times:.0f}배 낮습니다",
    "rows held by the online kernel's resident programs ({resident} = {sms} SMs x {per_sm}, fp32 rows of {n})":
        "online 커널의 상주 program이 붙잡는 행 ({resident} = SM {sms}개 x {per_sm}, 길이 {n}의 fp32 행)",
    "{held:.1f} MiB against {l2:.0f} MiB of L2: ": "{held:.1f} MiB 대 L2 {l2:.0f} MiB: ",
    "its second read should hit L2": "두 번째 읽기는 L2에서 hit해야 합니다",
    "its second read may miss L2": "두 번째 읽기는 L2에서 miss할 수 있습니다",
    "softmax_triton at {n} columns, {dtype}": "{n}열에서 softmax_triton, {dtype}",
    "online, chunks of {chunk}, {warps} warps": "online, chunk {chunk}, warp {warps}개",
    "fused, {rows} row(s) a program, {warps} warps": "fused, program당 {rows}행, warp {warps}개",

    # the compile report
    "softmax kernels compiled ahead of time for {arch} (cols % 16 == 0, aligned)":
        "{arch}용으로 ahead-of-time 컴파일한 softmax 커널 (cols % 16 == 0, 정렬됨)",
    "values/thread": "thread당 값",
    "study point: no variant launches this build": "비교용 지점: 이 build를 launch하는 variant는 없습니다",
    "programs/SM": "SM당 program",
    "  One 16-byte load moves 4 fp32 or 8 bf16 values; a thread holding 16 values issues four (fp32) or two (bf16)\n"
    "  loads up front. programs/SM x row bytes = bytes in flight per SM, what hides HBM latency.":
        "  16바이트 load 하나는 fp32 값 4개나 bf16 값 8개를 옮깁니다. 값 16개를 맡은 thread는 load 4개(fp32)나\n"
        "  2개(bf16)를 먼저 보냅니다. SM당 program x 행 바이트 = SM당 in flight인 바이트이고, 이것이 HBM latency를 "
        "가립니다.",
    "\nThe Triton kernels ran in the interpreter (small shapes, -inf entries and outliers included); timing and the "
    "torch peers need a GPU.":
        "\nTriton 커널은 interpreter에서 실행했습니다(작은 shape, -inf 원소와 outlier 포함). 시간 측정과 torch peer에는 "
        "GPU가 필요합니다.",

    # the benchmark and --tune (GPU)
    "row lengths": "행 길이",
    "Softmax {m} x {n} (GB/s counts one read + one write; measured ceiling {ceiling:.0f}; Triton config: {source})":
        "Softmax {m} x {n} (GB/s는 읽기 한 번 + 쓰기 한 번으로 셈, 측정한 한계 {ceiling:.0f}, Triton 설정: {source})",
    "Row length sweep, fp32 (past {max_fused} columns the online kernel reads each row twice)":
        "행 길이 sweep, fp32 ({max_fused}열을 넘으면 online 커널이 행마다 두 번 읽음)",
    "vs_compile": 'compile 대비',
    "moved_bytes": "옮긴 바이트",
    "vs unfused": "unfused 대비",
    "(GPU) time both kernels' configs at the target shape and record this GPU's winners":
        "(GPU) 목표 shape에서 두 커널의 config 시간을 재고 이 GPU에서 가장 빠른 것을 기록합니다",
    "{dtype} configs (checked)": "{dtype} config (검증 포함)",
    "check failed: {message}": "검증 실패: {message}",
    "Tuning at {m} x {n} (interleaved rounds with torch.compile; each config checked first)":
        "{m} x {n}에서 tuning (torch.compile과 번갈아 재는 round, config마다 먼저 검증)",

    # the plot
    "columns per row (rows x cols = 2^{exp}, fp32)": "행당 열 수 (rows x cols = 2^{exp}, fp32)",
    "GB/s (read + write once)": 'GB/s (한 번 읽기 + 한 번 쓰기)',
    "Softmax bandwidth vs row length on {gpu}": "{gpu}에서 행 길이에 따른 softmax 대역폭",
    "measured HBM ceiling {gbps:.0f} GB/s": "측정한 HBM 한계 {gbps:.0f} GB/s",
    "2/3 of it (3 passes instead of 2)": "그 2/3 (pass 2번 대신 3번)",
}
