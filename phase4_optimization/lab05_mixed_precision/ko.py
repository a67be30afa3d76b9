"""Korean lines of what lab 4.5 prints and draws: {English: Korean} (common/i18n.py; docs/GLOSSARY.ko.md)."""

KO = {
    # the variants, the plan
    "HMMA.16816.F32; kernels.cu, ACC_HALF=0": "HMMA.16816.F32, kernels.cu, ACC_HALF=0",
    "HMMA.16816.F16; the same kernel, ACC_HALF=1": "HMMA.16816.F16, 같은 커널, ACC_HALF=1",
    "GEMM {n}^3, fp16 inputs, fp32 out": "GEMM {n}^3, fp16 입력, fp32 출력",
    "naive {dtype} sums, {rows} x {cols}": "단순한 {dtype} 덧셈, {rows} x {cols}",
    "the library peers (cuBLAS in each precision through torch, fp8 through torch._scaled_mm) and phase 3's softmax / "
    "layernorm kernels launch their own kernels; the K sweep and the overflow cases launch the four GEMM kernels above "
    "at other shapes":
        "라이브러리 peer(torch를 거친 정밀도별 cuBLAS, torch._scaled_mm을 거친 fp8)와 phase 3의 softmax / layernorm "
        "커널은 자기 커널을 launch합니다. K sweep과 overflow 케이스는 위의 GEMM 커널 네 개를 다른 shape로 launch합니다",

    # explain: the predictions
    "GEMM {n}^3 per precision on {gpu}: datasheet peaks (leads, not measurements)":
        "{gpu}에서 정밀도별 GEMM {n}^3: datasheet 최고 성능 (측정값이 아니라 실마리)",
    "{n}^3: {gflop:.1f} GFLOP, {ai:.0f} FLOP/B with 16-bit inputs": "{n}^3: {gflop:.1f} GFLOP, 16비트 입력에서 {ai:.0f} FLOP/B",
    "ridge point, {unit}": "{unit}의 ridge point",
    "bf16 (else fp16) tensor cores": "bf16 (없으면 fp16) tensor core",
    "fp32 CUDA cores": "fp32 CUDA core",
    "{ridge:.0f} FLOP/B: compute-bound by {times:.0f}x": "{ridge:.0f} FLOP/B: {times:.0f}배 차이로 compute-bound",
    "{name} floor": "{name}의 하한",
    "no such unit on this GPU (skipped, or run by emulation)": "이 GPU에는 그런 연산 장치가 없음 (건너뛰거나 emulation으로 실행)",
    "{ms:.3f} ms at {tflops:g} TFLOP/s{rel}": "{tflops:g} TFLOP/s에서 {ms:.3f} ms{rel}",
    ", {times:.2g}x the 16-bit rate": ", 16비트 처리율의 {times:.2g}배",
    "fp8 rows": "fp8 행",
    "needs a GPU": 'GPU 필요',
    "torch {version} has no float8_e4m3fn / _scaled_mm": "torch {version}에는 float8_e4m3fn / _scaled_mm이 없습니다",
    "fp8 tensor cores need sm_89 or newer, this GPU is {arch}":
        "fp8 tensor core에는 sm_89 이상이 필요합니다. 이 GPU는 {arch}입니다",

    # the formats table
    "Formats (torch.finfo): range and precision": "형식 (torch.finfo): 범위와 정밀도",
    "format": "형식",
    "bits": "비트",
    "mantissa bits": "mantissa 비트",
    "smallest normal": "가장 작은 normal",
    "smallest subnormal": "가장 작은 subnormal",
    "eps (1 ulp at 1)": "eps (1에서 1 ulp)",
    "fp32's": "fp32와 같음",
    "tensor-core input format; stored as fp32": "tensor core 입력 형식, fp32로 저장",

    # the overflow, rounding and underflow table
    "Overflow, rounding and underflow, computed on the CPU (torch / NumPy)":
        "overflow, 반올림, underflow를 CPU에서 계산 (torch / NumPy)",
    "dtype": "dtype",
    "computed": "계산값",
    "exact": "정확한 값",
    "rel err": "상대 오차",
    "why": "이유",
    "fp16 max is 65504: the product is inf": "fp16의 최댓값은 65504입니다: 곱은 inf입니다",
    "bf16 has fp32's exponent (max 3.4e38); 65504 itself rounds to 65536 in bf16":
        "bf16은 fp32의 exponent를 씁니다(최댓값 3.4e38). 65504 자체는 bf16에서 65536으로 반올림됩니다",
    "65536 > 65504: a square of a modest activation overflows": "65536 > 65504: 크지 않은 activation의 제곱도 overflow합니다",
    "exp({x}) computed in fp32, stored as fp16": "fp32로 계산해 fp16으로 저장한 exp({x})",
    "ln(65504) = 11.0898; values from 65520 up round to inf": "ln(65504) = 11.0898. 65520 이상의 값은 inf로 반올림됩니다",
    "sum of 4096 x 32, fp16 accumulator": "4096 x 32의 합, fp16 누적기",
    "sum of 4096 x 32, fp32 accumulator": "4096 x 32의 합, fp32 누적기",
    "the running sum passes 65504 after 2047 terms, then stays inf":
        "누적합이 2047번째 항 다음에 65504를 넘고, 그 뒤로는 inf로 남습니다",
    "fp32 holds it exactly (stored back to fp16 it would still overflow)":
        "fp32는 정확히 담습니다(다시 fp16으로 저장하면 여전히 overflow합니다)",
    "8 significant bits: the spacing at 256 is 2, and the tie rounds to even (256)":
        "유효 비트 8개: 256에서 간격은 2이고, 정확히 가운데인 값은 짝수 쪽(256)으로 반올림됩니다",
    "11 significant bits: exact up to 2048": "유효 비트 11개: 2048까지는 정확합니다",
    "fp16's spacing at 2048 is 2: the same loss, 8x further out": "2048에서 fp16의 간격은 2입니다: 같은 손실이 8배 먼 곳에서 일어납니다",
    "1e-8 stored as fp16": "fp16으로 저장한 1e-8",
    "below half the smallest subnormal (2^-25 = 2.98e-8): flushed to 0":
        "가장 작은 subnormal의 절반(2^-25 = 2.98e-8)보다 작음: 0으로 떨어집니다",
    "5e-8 stored as fp16": "fp16으로 저장한 5e-8",
    "rounds to the smallest subnormal 2^-24 = 5.96e-8 (19% off)": "가장 작은 subnormal 2^-24 = 5.96e-8로 반올림됩니다 (19% 차이)",
    "1e-8 stored as bf16": "bf16으로 저장한 1e-8",
    "bf16 reaches 1e-38: fine": "bf16은 1e-38까지 표현합니다: 문제없음",
    "448 stored as fp8 e4m3fn": "fp8 e4m3fn으로 저장한 448",
    "e4m3fn's largest value": "e4m3fn의 최댓값",
    "500 stored as fp8 e4m3fn": "fp8 e4m3fn으로 저장한 500",
    "past the top: e4m3fn has no inf; this cast {what} (casts differ: saturate or NaN), either way the value is lost: "
    "hence per-tensor scales":
        "최댓값을 넘음: e4m3fn에는 inf가 없습니다. 이 cast는 {what} (cast마다 다름: 포화 또는 NaN). 어느 쪽이든 값을 "
        "잃습니다. 그래서 tensor마다 scale을 둡니다",
    "saturated to 448": "448로 포화했습니다",
    "gave {v}": "{v}가 되었습니다",
    "0.3 stored as fp8 e4m3fn": "fp8 e4m3fn으로 저장한 0.3",
    "4 significant bits: 0.3 becomes 0.3125": "유효 비트 4개: 0.3은 0.3125가 됩니다",

    # loss scaling
    "Loss scaling: a log-normal gradient population cast to fp16 after scaling by s":
        "loss scaling: log-normal 분포의 gradient를 s배 한 다음 fp16으로 cast",
    "scale": "scale",
    "flushed to 0": "0으로 떨어짐",
    "subnormal": "subnormal",
    "overflow (inf)": "overflow (inf)",
    "median rel err (finite, nonzero)": "상대 오차 중앙값 (유한, 0 아님)",
    "fp16 at scale 1 flushes {flushed:.1%} of these gradients to zero (|g| < 2^-25 = 2.98e-8) and keeps {subnormal:.1%} "
    "as subnormals with few bits; scaling the loss by 2^16 = 65536 moves every value up 16 binades: {flushed16:.2%} "
    "flushed, {overflow16:.3%} overflow. Too large a scale overflows instead: 2^32 turns {overflow32:.2%} into inf "
    "(|g| > 65504 / 2^32 = 1.5e-5), which is why dynamic loss scaling halves the scale whenever an inf appears and "
    "grows it slowly otherwise. bf16 at scale 1: {bf_flushed:.2%} flushed (its range reaches 1e-38), median relative "
    "error {bf_err:.1e} from its 8 bits: no scaling needed, precision is its cost.":
        "scale 1의 fp16은 이 gradient의 {flushed:.1%}를 0으로 떨어뜨리고(|g| < 2^-25 = 2.98e-8), {subnormal:.1%}는 "
        "비트가 적은 subnormal로 남깁니다. loss를 2^16 = 65536배 하면 모든 값이 16 binade 위로 올라갑니다: "
        "{flushed16:.2%}가 0으로 떨어지고 {overflow16:.3%}가 overflow합니다. scale이 너무 크면 대신 overflow합니다: "
        "2^32는 {overflow32:.2%}를 inf로 만듭니다(|g| > 65504 / 2^32 = 1.5e-5). 그래서 dynamic loss scaling은 inf가 "
        "나올 때마다 scale을 절반으로 줄이고, 그렇지 않으면 천천히 키웁니다. scale 1의 bf16: {bf_flushed:.2%}가 0으로 "
        "떨어지고(범위가 1e-38까지 닿습니다), 8비트 때문에 상대 오차 중앙값은 {bf_err:.1e}입니다. scaling은 필요 "
        "없고, 정밀도가 그 대가입니다.",

    # softmax / layernorm errors
    "Softmax and layernorm against float64: fp32 arithmetic inside keeps the error at the output-rounding floor":
        "float64 대비 softmax와 layernorm: 안에서 fp32로 계산하면 오차가 출력 반올림의 하한에 머뭅니다",
    "op": "연산",
    "max abs err": "최대 절대 오차",
    "non-finite": "유한하지 않은 값",
    "rounding floor (exact, rounded to dtype)": "반올림 하한 (정확한 값을 dtype으로 반올림)",
    "phase 3 Triton softmax (fp32 inside)": "phase 3 Triton softmax (안에서 fp32)",
    "phase 3 Triton layernorm (fp32 inside)": "phase 3 Triton layernorm (안에서 fp32)",
    "naive Triton, {dtype} sums": "단순한 Triton, {dtype} 덧셈",
    "bf16 arithmetic needs a GPU (the interpreter has no bf16 arithmetic)":
        "bf16 연산에는 GPU가 필요합니다 (interpreter에는 bf16 연산이 없습니다)",

    # the compile report
    "{file} compiled with NVRTC for {arch}: the one define changes the accumulator (HMMA .F32 vs .F16) and halves the "
    "accumulator staging":
        "NVRTC로 {arch}용 컴파일한 {file}: define 하나가 누적기(HMMA .F32 대 .F16)를 바꾸고 누적값 staging을 절반으로 "
        "줄입니다",
    "ACC_HALF={d} ({acc} accumulator)": "ACC_HALF={d} ({acc} 누적기)",
    "compile report skipped: {error}": "컴파일 보고서를 건너뜀: {error}",
    "\nRan on the CPU: the tables above, the Triton kernels in the interpreter (tl.dot with an fp16 accumulator, the "
    "naive 16-bit softmax/layernorm, phase 3's kernels). The WMMA kernel was only compiled. GEMM precisions, fp8 and "
    "timings need a GPU.":
        "\nCPU에서 실행한 것: 위의 표들, interpreter에서 돌린 Triton 커널(fp16 누적기를 쓴 tl.dot, 16비트로 단순히 "
        "더하는 softmax/layernorm, phase 3의 커널). WMMA 커널은 컴파일만 했습니다. 정밀도별 GEMM, fp8, 시간 측정에는 "
        "GPU가 필요합니다.",

    # the GPU tables
    "GEMM precisions at {n}^3": "{n}^3에서 GEMM 정밀도",
    "K sweep": "K sweep",
    "fp8 skipped: {why}": "fp8 건너뜀: {why}",
    "GEMM {n}^3 per precision: error against the float64 product of the fp32 inputs, speed":
        "정밀도별 GEMM {n}^3: fp32 입력의 float64 곱 대비 오차와 속도",
    "GEMM error vs K (M = N = 1024); model fp16 acc = 0.41 u sqrt(K), one rounding per product (the hardware rounds "
    "less often)":
        "K에 따른 GEMM 오차 (M = N = 1024). 모델 fp16 acc = 0.41 u sqrt(K), 곱마다 반올림 한 번 (하드웨어는 더 드물게 "
        "반올림함)",
    "Accumulator overflow on the GPU (K = 4096)": "GPU에서 누적기 overflow (K = 4096)",
    "precision": "정밀도",
    "vs cuBLAS fp16": "cuBLAS fp16 대비",
    "max err / rms(ref)": "최대 오차 / rms(ref)",
    "rel err vs fp16-input product": "fp16 입력 곱 대비 상대 오차",
    "model fp16 acc": "모델 fp16 acc",
    "all equal exact": "모두 정확한 값과 같음",
    "cuBLAS SGEMM, CUDA cores": "cuBLAS SGEMM, CUDA core",
    "fp32 in memory, 10-bit mantissa into the tensor cores, fp32 accumulate":
        "메모리에서는 fp32, tensor core에는 10비트 mantissa, fp32 누적",
    "bf16 in/out, fp32 accumulate": "bf16 입출력, fp32 누적",
    "fp16 in/out, fp32 accumulate": "fp16 입출력, fp32 누적",
    "torch._scaled_mm, fp32 out, accumulation promoted to fp32": "torch._scaled_mm, fp32 출력, 누적은 fp32로 올림",
    "the tensor cores' own reduced-precision accumulator throughout": "처음부터 끝까지 tensor core 자체의 낮은 정밀도 누적기",
    "A = 1, B = 32: C = 32 K": "A = 1, B = 32: C = 32 K",
    "A = 1, B = +32 then -32: C = 0, partial sums reach 16 K": "A = 1, B = +32 다음 -32: C = 0, 부분합은 16 K까지 감",

    # the plots
    "relative error vs float64": "float64 대비 상대 오차",
    "GEMM error against the float64 product of the fp32 inputs, as K grows": "K가 커질 때 fp32 입력의 float64 곱 대비 GEMM 오차",
    "relative error vs float64 (4096^3, standard normal inputs)": "float64 대비 상대 오차 (4096^3, 표준정규분포 입력)",
    "GEMM speed against error per precision on {gpu}": "{gpu}에서 정밀도별 GEMM 속도와 오차",
}
