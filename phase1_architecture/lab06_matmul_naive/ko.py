"""Korean lines of what lab 1.6 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # --help
    "M,N,K of the benchmark (default 4096,4096,4096 and 2999,3001,2027)":
        "benchmark의 M,N,K (기본값 4096,4096,4096과 2999,3001,2027)",
    "expected M,N,K or one number, got {s!r}": "M,N,K 또는 숫자 하나가 와야 합니다. 받은 값: {s!r}",

    # the prediction, on every machine
    "Sectors one warp's loads touch per k step, {shape} (from the addresses)":
        "k 단계마다 warp 하나의 load가 건드리는 sector 수, {shape} (주소로 계산)",
    "mapping": "mapping",
    "mm_01 uncoalesced (lane -> row)": "mm_01 uncoalesced (lane -> 행)",
    "mm_02 coalesced (lane -> col)": "mm_02 coalesced (lane -> 열)",
    "A sectors": "A sector",
    "B sectors": "B sector",
    "total per k step": "k 단계당 합계",
    "prediction: mm_01 / mm_02 time = {ratio:.2f} (if the sectors moved through L1 are the limit)":
        "예측: mm_01 / mm_02 시간 = {ratio:.2f} (L1을 지나는 sector 수가 한계를 정한다면)",
    "cuBLAS peer: TF32 {state}": "cuBLAS 비교 대상: TF32 {state}",
    "off": "꺼짐",
    "CuPy's fp32 compute type is TF32 (CUPY_TF32=1)": "CuPy의 fp32 compute type이 TF32입니다(CUPY_TF32=1)",
    "CUPY_TF32 is set": "CUPY_TF32가 설정되어 있습니다",
    "the cuBLAS peer must run in fp32, but TF32 is on: {state}; unset it":
        "cuBLAS 비교 대상은 fp32로 실행해야 하는데 TF32가 켜져 있습니다: {state}. 설정을 해제하십시오",

    # predictions (--plan)
    "{shape}: FLOPs, bytes": "{shape}: FLOP 수, 바이트",
    "sectors per k step, mm_01 / mm_02": "k 단계당 sector, mm_01 / mm_02",
    "{un:.0f} / {co:.0f}: mm_01 {ratio:.1f}x slower": "{un:.0f} / {co:.0f}: mm_01이 {ratio:.1f}배 느림",
    "ridge point (FP32 peak / bandwidth)": "ridge point (FP32 최대 성능 / 대역폭)",
    "{ridge:.1f} FLOP/B: the main case is {x:.0f}x above it, compute-bound":
        "{ridge:.1f} FLOP/B: 주 케이스가 그보다 {x:.0f}배 높아 compute-bound입니다",
    "cuBLAS at ~{frac:.0%} of {peak:g} TFLOP/s FP32": "FP32 {peak:g} TFLOP/s의 약 {frac:.0%}로 도는 cuBLAS",

    # the compile report
    "-> same instruction mix in both: LDG {ldg1} vs {ldg2}, FFMA {ffma1} vs {ffma2}. The difference is only in the "
    "addresses the lanes of a warp produce.":
        "-> 두 커널의 명령어 구성은 같습니다: LDG {ldg1} 대 {ldg2}, FFMA {ffma1} 대 {ffma2}. 차이는 warp의 lane들이 "
        "만드는 주소뿐입니다.",
    "\nCUDA C kernels were compiled, not run (no GPU); the Triton kernel ran in the interpreter.":
        "\nGPU가 없어 CUDA C 커널은 컴파일만 하고 실행하지 않았습니다. Triton 커널은 interpreter에서 실행했습니다.",

    # the benchmark (GPU)
    "shapes": "shape",
    "Naive matmul, fp32 (GFLOP/s and the fraction of cuBLAS; peer_rel_err: cuBLAS vs float64)":
        "Naive matmul, fp32 (GFLOP/s와 cuBLAS 대비 비율. peer_rel_err: float64와 비교한 cuBLAS 오차)",
    "shape": "shape",
    "gflops": "GFLOP/s",
    "frac_cublas": "cuBLAS 대비",
    "peer_rel_err": "peer_rel_err",
    "coalesced beats uncoalesced by the sector ratio (within 0.5x .. 2x)":
        "coalesced가 uncoalesced보다 sector 비율만큼 빠름 (0.5배 .. 2배 안)",
    "cuBLAS error is fp32-level (TF32 off)": "cuBLAS 오차가 fp32 수준 (TF32 꺼짐)",

    # the plot
    "GFLOP/s (fp32)": "GFLOP/s (fp32)",
    "Naive matmul vs cuBLAS on {gpu} (fp32, TF32 off)": "{gpu}에서 naive matmul과 cuBLAS (fp32, TF32 꺼짐)",

    # --set values the kernels cannot take
    "triton matmul: BLOCK_M, BLOCK_N, BLOCK_K powers of two in 16..256 (tl.dot's smallest tile is 16), num_warps in "
    "1, 2, 4, 8, 16, num_stages in 1..8; got {got}":
        "triton matmul: BLOCK_M, BLOCK_N, BLOCK_K는 16..256 범위의 2의 거듭제곱(tl.dot의 가장 작은 tile이 16), num_warps는 1, 2, 4, "
        "8, 16 중 하나, num_stages는 1..8 범위여야 합니다. 받은 값: {got}",
}
