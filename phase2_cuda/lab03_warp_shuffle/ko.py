"""Korean lines of what lab 2.3 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "n of the benchmark (default 2^28, quick 2^24)": "benchmark의 n (기본값 2^28, quick 2^24)",

    # the predictions, on every machine
    "predictions for {gpu} (its SMs, clock and bandwidth)": "{gpu}에 대한 예측 (SM 수, clock, 대역폭 반영)",
    "SM clocks HBM takes to deliver one 128-byte segment to an SM":
        "HBM이 128바이트 segment 하나를 SM에 전달하는 데 걸리는 SM clock 수",
    "warp sums through shared memory ({passes} passes per segment)":
        "shared memory를 거치는 warp 합 (segment당 pass {passes}번)",
    "{frac:.0%} of the HBM ceiling at best": "최대 HBM 한계의 {frac:.0%}",
    ": shared memory is the bound": ": shared memory가 한계를 정합니다",
    ": HBM is the bound": ": HBM이 한계를 정합니다",
    "warp sums with shuffles ({passes} per segment)": "shuffle로 구하는 warp 합 (segment당 {passes}번)",
    "loads in flight per SM ({threads} resident threads x {segs} x 4 B)":
        "SM당 in flight load (상주 thread {threads}개 x {segs} x 4 B)",
    "scan floor at n = {n} (our ~12.6 n B / {gbps:.0f} GB/s)":
        "n = {n}에서 scan 시간의 하한 (이 랩의 약 12.6 n B / {gbps:.0f} GB/s)",
    "a one-pass scan's floor (8 n B)": "one-pass scan의 하한 (8 n B)",

    # the compile report
    "what each kernel exchanges with (SASS, {segs} segments per warp)":
        "커널마다 데이터를 주고받는 수단 (SASS, warp당 segment {segs}개)",
    "BAR (block barriers)": "BAR (block barrier 수)",
    "per segment": "segment당",
    "{n:.0f} shuffles": "shuffle {n:.0f}번",
    "-> no kernel has a block barrier (BAR): everything stays inside one warp. The shared-memory versions pay in "
    "LDS/STS and __syncwarp; the shuffle versions in SHFL only.":
        "-> block barrier(BAR)가 있는 커널은 없습니다. 모든 일이 warp 하나 안에서 끝납니다. shared memory 버전은 "
        "LDS/STS와 __syncwarp 비용을 치르고, shuffle 버전은 SHFL만 씁니다.",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton sums and scan ran in the interpreter.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton 합과 scan은 interpreter에서 실행했습니다.",

    # the variants' notes, the plan
    "tree + Hillis-Steele, __syncwarp": "tree + Hillis-Steele, __syncwarp 사용",
    "level {i}: {n} float32": "단계 {i}: {n} float32",

    # the benchmark (GPU)
    "reductions": "reduction",
    "{n} passes per segment": "segment당 pass {n}번",
    "L2-resident (L2 not flushed)": "L2 상주 (L2 flush 없음)",
    "HBM (L2 flushed)": "HBM (L2 flush)",
    "per-warp sums alone (GB/s counts 4 n + n / 8 bytes)": "warp별 합만 (GB/s는 4 n + n / 8 바이트로 계산)",
    "regime": "구간",
    "inclusive scan of n = {n:,} fp32 (GB/s counts the 8 n bytes that must move; our variants also write the "
    "segment sums and move ~12.6 n)":
        "n = {n:,} fp32의 inclusive scan (GB/s는 반드시 옮겨야 할 8 n 바이트로 계산. 이 랩의 variant는 segment 합도 "
        "쓰므로 약 12.6 n을 옮깁니다)",
    "vs_torch_cumsum": "torch.cumsum 대비",

    # the plot
    "sums, {where}": "합, {where}",
    "scan": "scan",
    "GB/s (bytes that must move / time)": "GB/s (반드시 옮겨야 할 바이트 / 시간)",
    "Warp sums and scans, fp32, on {gpu}": "{gpu}의 warp 합과 scan, fp32",

    # --set values the kernels cannot take
    "warp kernels: SEGS in 1..32 (warp_reduce_03 stores segment k from lane k), WARPS a power of two up to 32, WARPS "
    "x SEGS x 128 B <= 48 KiB; got {got}":
        "warp 커널: SEGS는 1..32 범위(warp_reduce_03은 segment k를 lane k에서 store), WARPS는 32 이하의 2의 거듭제곱, WARPS x SEGS x "
        "128 B <= 48 KiB여야 합니다. 받은 값: {got}",
    "triton segment kernels: SEGS_T a power of two in 1..128, num_warps in 1, 2, 4, 8, 16; got {got}":
        "triton segment 커널: SEGS_T는 1..128 범위의 2의 거듭제곱, num_warps는 1, 2, 4, 8, 16 중 하나여야 합니다. 받은 값: {got}",
}
