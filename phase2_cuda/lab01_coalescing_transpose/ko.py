"""Korean lines of what lab 2.1 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "side of the square matrix benchmarked (default {side}, quick 4096)":
        "benchmark하는 정사각 행렬의 한 변 (기본값 {side}, quick 4096)",

    # the models, on every machine
    "sectors per warp request (32 B each; 4 is ideal for 32 floats)":
        "warp 요청당 sector 수 (sector 하나는 32 B. float 32개에는 4가 이상적입니다)",
    "load sectors": "load sector 수",
    "store sectors": "store sector 수",
    "ideal": "이상적인 값",
    "shared-memory passes per 32 x 32 tile (32 row stores + 32 column loads): pitch 32 -> {p32}, pitch 33 -> {p33}":
        "32 x 32 tile 하나의 shared memory pass 수 (행 store 32번 + 열 load 32번): pitch 32 -> {p32}, "
        "pitch 33 -> {p33}",
    "copy_strided: predicted cost per element (useful fraction = 8 / moved)":
        "copy_strided: 원소당 예측 비용 (유효 비율 = 8 / 실제로 옮긴 바이트)",
    "stride": "stride",
    "sectors/request": "요청당 sector",
    "bytes requested/elem": "원소당 요청 바이트",
    "bytes moved/elem": "원소당 이동 바이트",
    "useful fraction": "유효 비율",
    "predictions for {gpu} (its SMs, clock and bandwidth)": "{gpu}에 대한 예측 (SM 수, clock, 대역폭 반영)",
    "copy floor at {side}^2 (8 M N B / {gbps:.0f} GB/s)": "{side}^2에서 copy 시간의 하한 (8 M N B / {gbps:.0f} GB/s)",
    "32 x 32 tiles per SM": "SM당 32 x 32 tile 수",
    "cuda 02: 1056 shared-memory passes per tile, one per clock": "cuda 02: tile당 shared memory pass 1056번, clock당 한 번",
    "{ms:.3f} ms, {x:.2f}x the floor: shared memory is the bound":
        "{ms:.3f} ms, 하한의 {x:.2f}배: shared memory가 한계를 정합니다",
    "{ms:.3f} ms, {x:.2f}x the floor: under the DRAM time": "{ms:.3f} ms, 하한의 {x:.2f}배: DRAM 시간보다 짧습니다",
    "loads in flight per SM Little's law asks (half of {gbps:.0f} GB/s x {us} us)":
        "Little's law가 요구하는 SM당 in flight load ({gbps:.0f} GB/s의 절반 x {us} us)",
    "cuda 03 offers (blocks/SM x 256 threads x 16 B)": "cuda 03이 제공하는 양 (SM당 block x thread 256개 x 16 B)",
    "cuda 04 offers (blocks/SM x {threads} threads x {bytes} B)":
        "cuda 04가 제공하는 양 (SM당 block x thread {threads}개 x {bytes} B)",
    "{blocks} blocks: {kib:.0f} KiB": "block {blocks}개: {kib:.0f} KiB",
    "strided copy from stride 8 on (8 / 36 of the bandwidth)": "stride 8부터의 strided copy (대역폭의 8 / 36)",

    # the compile report
    "-> 02 and 03 differ only in the tile's pitch: shared memory {b2} vs {b3} bytes, the same instructions; the "
    "difference is in which banks the addresses fall.":
        "-> 02와 03은 tile의 pitch만 다릅니다: shared memory {b2} 대 {b3} 바이트, 명령어는 같습니다. 차이는 주소가 "
        "어느 bank에 떨어지는가에 있습니다.",
    "-> 04 issues {n} loads per thread before its first shared store ({regs} registers: capped at 64 by "
    "__launch_bounds__(256, 4), {spills} bytes spilled).":
        "-> 04는 첫 shared store 전에 thread마다 load를 {n}개 냅니다(register {regs}개: __launch_bounds__(256, 4)로 "
        "64개까지 제한, spill {spills} 바이트).",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton transpose ran in the interpreter. The sector and "
    "bank models printed first are what the GPU run measures.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton transpose는 interpreter에서 "
        "실행했습니다. 앞에 출력한 sector 모델과 bank 모델이 GPU에서 실행할 때 재는 것입니다.",

    # the variants' notes
    "coalesced read, strided write": "coalesced 읽기, strided 쓰기",
    "32-way bank conflicts": "32-way bank conflict 발생",
    "tile[32][33]": "tile[32][33]",
    "64x64 tile, 16 loads in flight per thread": "64x64 tile, thread마다 in flight load 16개",
    "tl.trans": "tl.trans",

    # the plan
    "strided copy, n = {n}, strides 1..{top}": "strided copy, n = {n}, stride는 1..{top}",

    # the benchmark (GPU)
    "the probes (copy_strided, copy_tiled)": "probe 검증 (copy_strided, copy_tiled)",
    "transpose {m}x{n}": "transpose {m}x{n}",
    "strided copy": "strided copy 크기",
    "32 sectors per store: L2 transactions": "store당 sector 32개: L2 transaction",
    "smem: {n} passes per tile": "smem: tile당 pass {n}번",
    "HBM (smem: 64 passes per tile)": "HBM (smem: tile당 pass 64번)",
    "strided reads: 32 sectors per load": "strided 읽기: load당 sector 32개",
    "library": "라이브러리",
    "strided copy: useful GB/s (8 B per element) vs the sector model":
        "strided copy: 유효 GB/s (원소당 8 B)와 sector 모델",
    "sectors_per_request": "요청당 sector",
    "pred_gbps": "예측 GB/s",
    "measured_vs_pred": "측정 / 예측",
    "moved_gbps": "이동 GB/s",
    "transpose {side}x{side} fp32: {gib:.2f} GiB moved, measured HBM ceiling {gbps:.0f} GB/s":
        "transpose {side}x{side} fp32: {gib:.2f} GiB 이동, 측정한 HBM 한계 {gbps:.0f} GB/s",
    "vs_copy": "copy 대비",
    "pred_ms": "예측 ms",
    "pred_bound": "예측한 한계",
    "transpose_04's compile-time parameters vs the flat copy (interleaved rounds); the lab's default is T04 in lab.py":
        "transpose_04의 compile-time parameter와 flat copy 비교 (번갈아 잰 round). 랩의 기본값은 lab.py의 T04입니다",
    "vs copy": "copy 대비",
    "same output as default": "기본값과 같은 출력",
    "target: padded transpose >= {frac:.0%} of the copy bandwidth (interleaved rounds, same run)":
        "목표: padded transpose가 copy 대역폭의 {frac:.0%} 이상 (번갈아 잰 round, 같은 실행)",
    "best padded transpose (the lab's target)": "가장 빠른 padded transpose (랩의 목표)",
    "copy GB/s (best of 2)": "copy GB/s (둘 중 최고)",
    "ratio": "비율",

    # the plots
    "GB/s (8 M N bytes / time)": "GB/s (8 M N 바이트 / 시간)",
    "Transpose {m}x{n} fp32 on {gpu}": "{gpu}에서 transpose {m}x{n} fp32",
    "best copy {gbps:.0f}": "가장 빠른 copy {gbps:.0f}",
    "{frac:.0%} of copy": "copy의 {frac:.0%}",
    "measured useful GB/s (8 B per element)": "측정한 유효 GB/s (원소당 8 B)",
    "predicted: ceiling x 8 / (4 + sectors)": "예측: 한계 x 8 / (4 + sector 수)",
    "measured moved GB/s (sector model)": "측정한 이동 GB/s (sector 모델)",
    "stride (floats)": "stride (float 단위)",
    "GB/s": "GB/s",
    "Strided copy out[i] = in[i*s] on {gpu}: sectors per request decide":
        "{gpu}의 strided copy out[i] = in[i*s]: 요청당 sector 수가 결정합니다",
    "HBM ceiling {gbps:.0f}": "HBM 한계 {gbps:.0f}",

    # --set values the kernels cannot take
    "transpose_04: BIG_TILE in 32, 64, 96; ROWS a power of two dividing 32 and BIG_TILE; T04_MIN_BLOCKS in 1..32; "
    "got {got}":
        "transpose_04: BIG_TILE은 32, 64, 96 중 하나, ROWS는 32와 BIG_TILE을 나누는 2의 거듭제곱, T04_MIN_BLOCKS는 1..32 범위여야 합니다. "
        "받은 값: {got}",
    "triton transpose: BM and BN in 16, 32, 64, 128, num_warps in 1, 2, 4, 8, 16; got {got}":
        "triton transpose: BM과 BN은 16, 32, 64, 128 중 하나, num_warps는 1, 2, 4, 8, 16 중 하나여야 합니다. 받은 값: {got}",

    # what a size note names when the GPU's memory cannot hold the benchmark (common.plan.fit)
    "matrix side": "행렬의 한 변",
    "strided copy n": "strided copy의 n",
}
