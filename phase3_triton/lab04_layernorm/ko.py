"""Korean lines of what lab 3.4 prints: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the plan and the configurations
    "layernorm forward, rows of {n} ({dtype})": "layernorm forward, 길이 {n}의 행 ({dtype})",
    "layernorm backward, rows of {n} ({dtype})": "layernorm backward, 길이 {n}의 행 ({dtype})",
    "fixed (the variant's own)": "고정 (이 variant 고유의 설정)",
    "{case}, over G = {g} partial rows": "{case}, 부분합 행 G = {g}개에 걸쳐",

    # explain: the predictions
    "floors at {m} x {n} {dtype}: forward (2 M N) / backward (3 M N)":
        "{m} x {n} {dtype}의 하한: forward (2 M N) / backward (3 M N)",
    "{ridge:.0f} FLOP/B: the forward's ~1 FLOP/B is {times:.0f}x below":
        "{ridge:.0f} FLOP/B: forward의 ~1 FLOP/B는 이보다 {times:.0f}배 낮습니다",
    "bytes in flight per SM to cover a {us} us round trip ({bw:.0f} GB/s over {sms} SMs)":
        "{us} us 왕복을 가리려면 SM당 in flight여야 하는 바이트 ({bw:.0f} GB/s를 SM {sms}개로 나눔)",
    "{kib:.0f} KiB (half of it loads: {half:.0f} KiB)": "{kib:.0f} KiB (그 절반이 load: {half:.0f} KiB)",
    "forward at {n} columns, {dtype}": "{n}열에서 forward, {dtype}",
    "backward at {n} columns, {dtype}: G = {per_sm} x {sms} SMs = {g}":
        "{n}열에서 backward, {dtype}: G = {per_sm} x SM {sms}개 = {g}",
    "{warps} warps; partial dw/db {mib:.0f} MiB, {share:.1%} of the backward's bytes ({source})":
        "warp {warps}개, 부분합 dw/db {mib:.0f} MiB, backward 바이트의 {share:.1%} ({source})",
    "{rows} row(s) in registers a program": "program당 register에 {rows}행",
    "{n} persistent programs per SM": "SM당 persistent program {n}개",
    "three passes, chunks of {chunk}": "pass 세 번, chunk {chunk}",
    "two-pass Welford, chunks of {chunk}": "pass 두 번의 Welford, chunk {chunk}",
    "{what}, {warps} warps": "{what}, warp {warps}개",

    # the compile report
    "layernorm kernels compiled ahead of time for {arch}, N = 4096 (aligned, N % 16 == 0)":
        "{arch}용으로 ahead-of-time 컴파일한 layernorm 커널, N = 4096 (정렬됨, N % 16 == 0)",
    "rows/program": "program당 행",
    "strided loop": "strided loop 방식",
    "1, chunks of {chunk}": "1, chunk {chunk}",
    "study point: no variant launches this build": "비교용 지점: 이 build를 launch하는 variant는 없습니다",
    "  The backward holds x, dy, w, xhat and two accumulators per element: more registers, fewer programs per SM;\n"
    "  G = programs_per_sm x SMs programs walk the rows, so the partial dw/db buffer has G rows.":
        "  backward는 원소마다 x, dy, w, xhat과 누적값 두 개를 붙잡습니다. 그래서 register가 늘고 SM당 program이\n"
        "  줄어듭니다. G = programs_per_sm x SM 수만큼의 program이 행을 훑으므로, 부분합 dw/db buffer는 G행입니다.",
    "\nThe Triton kernels ran in the interpreter (forward, backward and the column reduction, single-piece and looped "
    "paths,\nthe two-pass Welford forward; fp32 / bf16 / fp16 / fp64). Tuning, timing and the torch peers need a GPU.":
        "\nTriton 커널은 interpreter에서 실행했습니다(forward, backward, 열 방향 reduction의 한 번에 읽는 경로와 loop\n"
        "경로, pass 두 번의 Welford forward, fp32 / bf16 / fp16 / fp64). tuning, 시간 측정, torch peer에는 GPU가 "
        "필요합니다.",

    # the benchmark and --tune (GPU)
    "{kind} configs (checked)": "{kind} config (검증 포함)",
    "Tuning at {m} x {n} (each config checked, then interleaved rounds)":
        "{m} x {n}에서 tuning (config마다 검증한 다음 번갈아 재는 round)",
    "(GPU) time the forward and backward configs at the target shape and record this GPU's winners":
        "(GPU) 목표 shape에서 forward와 backward의 config 시간을 재고 이 GPU에서 가장 빠른 것을 기록합니다",
    "LayerNorm {m} x {n} (GB/s counts the bytes that must move: fwd 2 MN, bwd 3 MN elements, for every contender; "
    "Triton configs: {source})":
        "LayerNorm {m} x {n} (GB/s는 모든 비교 대상에 대해 옮겨야 할 바이트로 셈: fwd 원소 2 MN, bwd 원소 3 MN, "
        "Triton 설정: {source})",
    "vs eager": "eager 대비",

    # the plot
    "GB/s (bytes that must move)": "GB/s (옮겨야 할 바이트)",
    "LayerNorm {shape} on {gpu}": "{gpu}에서 LayerNorm {shape}",
}
