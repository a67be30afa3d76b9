"""The Korean lines of phase 3's exercise checkers (course/exercises/ex_3_*): {english: korean}, with the same
{placeholders}. Read by common/i18n.py with course/ko.py and the other course/ko_phase*.py."""

KO = {
    # ---- 3.1.1 -------------------------------------------------------------------------------------------------------
    "all five right: a thread loads its BLOCK / (32 x num_warps) consecutive floats up to 16 bytes at a time, and only "
    "when n is known divisible by 16 - the mask of a 4-float vector must be provably all-true or all-false. A GPU "
    "launch learns n % 16 and the pointers' alignment from the actual arguments, so the same kernel can load 16 or 4 "
    "bytes at a time":
        "다섯 개 모두 맞습니다. thread는 연속된 float BLOCK / (32 x num_warps)개를 한 번에 최대 16바이트씩 load합니다. "
        "단, n이 16으로 나누어떨어진다고 알려진 경우에만 그렇습니다. float 4개짜리 vector의 mask가 모두 참이거나 모두 "
        "거짓이라고 증명할 수 있어야 하기 때문입니다. GPU launch는 실제 인자에서 n % 16과 pointer의 정렬을 알아내므로 "
        "같은 커널이 한 번에 16바이트를 load할 수도, 4바이트를 load할 수도 있습니다",
    "keep the five cases of the starting point as keys of ANSWERS: {keys}":
        "시작 파일의 다섯 경우를 ANSWERS의 key로 그대로 둡니다: {keys}",
    "{n} of {total} not yet right: {reasons}": "{total}개 중 {n}개가 아직 맞지 않습니다:{reasons}",
    "n odd": "n은 홀수",
    "could not compile the vector add ahead of time here ({error}: {detail}); lab 3.1's compile report needs the same":
        "여기서는 vector add를 ahead-of-time으로 컴파일할 수 없습니다({error}: {detail}). 랩 3.1의 compile report에도 "
        "같은 컴파일이 필요합니다",

    # ---- 3.1.2 -------------------------------------------------------------------------------------------------------
    "{reasons}. The mask says which rows exist; what says which columns do?":
        "{reasons}. mask는 어떤 행이 있는지 알려 줍니다. 어떤 열이 있는지는 무엇이 알려 줍니까?",
    "right at {shapes}: every lane of the tile loads only where its row AND its column exist - a (BLOCK_M, 1) row mask "
    "broadcast against a (1, BLOCK_N) column mask - and the store only where the row exists":
        "{shapes}에서 맞습니다. tile의 모든 lane은 행과 열이 둘 다 있는 곳에서만 load합니다((BLOCK_M, 1) 행 mask와 "
        "(1, BLOCK_N) 열 mask의 broadcast). store는 행이 있는 곳에서만 합니다",
    "row 0's sum is too large by exactly the first {over} values of row 1: in the last column step {over} of the "
    "tile's {block_n} lanes lie past the end of the {cols}-column row, and the addresses there belong to the next row":
        "0행의 합이 정확히 1행의 첫 값 {over}개만큼 큽니다. 마지막 열 step에서 tile의 lane {block_n}개 중 {over}개가 "
        "열 {cols}개짜리 행의 끝을 넘어가고, 그 주소는 다음 행의 것입니다",
    "the last row's sum is NaN: its lanes past the end read past the end of the whole array (NaN here; on a GPU "
    "whatever lies there, or an illegal-address fault)":
        "마지막 행의 합이 NaN입니다. 끝을 넘은 lane이 배열 전체의 끝 너머를 읽습니다(여기서는 NaN, GPU에서는 그곳에 "
        "있는 아무 값이나 illegal-address fault)",
    "the sums differ from the reference in a way the starting point's bug does not explain":
        "합이 기준과 다른데, 시작 파일의 버그로는 설명되지 않는 방식입니다",
    " (right at {shapes})": " ({shapes}에서는 맞음)",

    # ---- 3.1.3 -------------------------------------------------------------------------------------------------------
    "right for every row length, and {rows} x {cols}: yours {mine:,.0f} GB/s against {theirs:,.0f} GB/s for one "
    "program per row ({ratio:.1f}x): with several rows per program each thread has many floats in flight and one "
    "program's reduction and bookkeeping serve many rows":
        "모든 행 길이에서 맞습니다. {rows} x {cols}에서 내 커널은 {mine:,.0f} GB/s, 행마다 program 하나인 방식은 "
        "{theirs:,.0f} GB/s입니다({ratio:.1f}배). program 하나가 여러 행을 맡으면 thread마다 in-flight float가 많아지고, "
        "program 하나의 reduction과 부수 작업이 여러 행에 쓰입니다",
    "{file} must define rowsum(x, out), as the starting point does":
        "{file} 파일은 시작 파일처럼 rowsum(x, out)을 정의해야 합니다",
    "right, but {rows} x {cols}: yours {mine:,.0f} GB/s, one program per row {theirs:,.0f} GB/s ({ratio:.2f}x, "
    "{needed:.0f}x needed). A program of one {row_bytes}-byte row gives each of its threads a single float to load "
    "and pays a whole block reduction (shuffles, shared memory, a barrier) and its own start and end for {row_bytes} "
    "bytes, {rows} times: what does a program that owns several rows change?":
        "맞지만 {rows} x {cols}에서 내 커널은 {mine:,.0f} GB/s, 행마다 program 하나인 방식은 {theirs:,.0f} GB/s입니다"
        "({ratio:.2f}배, 필요한 것은 {needed:.0f}배). {row_bytes}바이트 행 하나를 맡는 program은 thread마다 float 하나만 "
        "load하게 하고, {row_bytes}바이트를 위해 block reduction 전체(shuffle, shared memory, barrier)와 program의 "
        "시작과 끝을 치릅니다. 그것도 {rows}번입니다. program이 여러 행을 맡으면 무엇이 달라집니까?",
    "{rows} x {cols}: {wrong}. Faster does not count until it is right: check the masks of a multi-row tile (row AND "
    "column) and the grid (every row in exactly one program)":
        "{rows} x {cols}: {wrong}. 빨라도 맞아야 인정됩니다. 여러 행 tile의 mask(행과 열 둘 다)와 grid(모든 행이 "
        "정확히 한 program에 속함)를 확인합니다",
    "{rows} x {cols}: rowsum failed ({error}: {detail})": "{rows} x {cols}: rowsum이 실패했습니다({error}: {detail})",

    # ---- 3.2.1 -------------------------------------------------------------------------------------------------------
    "M, N, K = {m}, {n}, {k} ({dist} fp16 inputs)": "M, N, K = {m}, {n}, {k} ({dist} fp16 입력)",
    "C within one fp16 rounding of the float64 product at K up to 8192 and on ragged tiles: the products of fp16 "
    "inputs are exact in fp32, the sum stays in fp32 (24 bits) for all {steps} K-steps, and C is rounded to fp16 once, "
    "at the store":
        "K가 8192까지이고 tile이 들쭉날쭉한 경우에도 C가 float64 곱과 fp16 반올림 한 번 이내로 같습니다. fp16 입력의 "
        "곱은 fp32에서 정확하고, 합은 K-step {steps}번 내내 fp32(24비트)에 머물며, C는 store할 때 한 번만 fp16으로 "
        "반올림됩니다",
    "{what}: relative error {err:.1e}, {times:.1f}x one rounding to fp16 (2^-11 = {u:.1e}), which is all fp16 output "
    "must lose. A 16-bit accumulator is rounded to 11 significant bits after each of the {steps} K-steps, at the size "
    "of the running sum (near |C|, so each rounding costs as much as the final one), and those errors add up. Where "
    "should the sum live, and when should it become fp16?":
        "{what}: 상대 오차는 {err:.1e}이고, fp16 반올림 한 번(2^-11 = {u:.1e})의 {times:.1f}배입니다. fp16 출력이 잃어야 "
        "하는 것은 그 한 번뿐입니다. 16비트 accumulator는 K-step {steps}번마다 누적 합의 크기에서 유효 비트 11개로 "
        "반올림됩니다(누적 합은 |C|에 가까우므로 반올림 한 번이 마지막 반올림만큼 비쌉니다). 그 오차가 쌓입니다. 합은 "
        "어디에 두어야 하고, 언제 fp16이 되어야 합니까?",
    "{what}: NaN or inf in C ({message}): some elements were never written, or a mask lets values past the end of A or "
    "B in":
        "{what}: C에 NaN이나 inf가 있습니다({message}). 쓰이지 않은 원소가 있거나, mask가 A나 B의 끝 너머 값을 "
        "들여보냅니다",

    # ---- 3.3.1 -------------------------------------------------------------------------------------------------------
    "{reasons}. Softmax does not change when every value of a row moves by the same amount: which amount keeps every "
    "exp(x) in range, and costs no extra pass over memory?":
        "{reasons}. softmax는 한 행의 모든 값을 같은 양만큼 옮겨도 변하지 않습니다. 어떤 양을 빼야 모든 exp(x)가 범위 "
        "안에 머물고, 메모리를 한 번 더 훑지 않아도 됩니까?",
    "the wrong rows are not the large or small ones: compare your kernel with the starting point":
        "틀린 행은 값이 크거나 작은 행이 아닙니다. 내 커널을 시작 파일과 비교해 봅니다",
    "right on rows near 0, +30, +89, +100, -90 and -120 (fp32 and fp16, -inf entries too): with the row maximum "
    "subtracted every exponent is <= 0, so exp never overflows, and the largest term is exactly 1, so the sum never "
    "underflows - one more reduction on registers, no extra pass over memory":
        "0, +30, +89, +100, -90, -120 근처의 행(fp32와 fp16, -inf 원소 포함)에서 맞습니다. 행의 최댓값을 빼면 모든 "
        "지수가 <= 0이라 exp가 overflow하지 않고, 가장 큰 항이 정확히 1이라 합이 underflow하지 않습니다. register 위의 "
        "reduction 하나가 늘 뿐이고, 메모리를 한 번 더 훑지 않습니다",
    "row {r}'s largest value is {top:.0f}: exp(x) is inf above {limit:.1f} in fp32 (the largest fp32 is 3.4e38 = "
    "e^88.7), and inf / inf is NaN":
        "{r}행의 최댓값은 {top:.0f}입니다. fp32에서 exp(x)는 {limit:.1f}보다 크면 inf이고(fp32의 최댓값은 3.4e38 = "
        "e^88.7), inf / inf는 NaN입니다",
    "row {r}'s largest value is {top:.0f}: every exp(x) falls under the smallest normal fp32 (e^{limit:.1f}) - "
    "subnormal with few bits left, or 0 - so the sum is inexact or 0, and 0 / 0 is NaN":
        "{r}행의 최댓값은 {top:.0f}입니다. 모든 exp(x)가 fp32의 가장 작은 normal 값(e^{limit:.1f})보다 작아서 비트가 "
        "얼마 남지 않은 subnormal이거나 0입니다. 그래서 합이 부정확하거나 0이 되고, 0 / 0은 NaN입니다",

    # ---- 3.4.1 -------------------------------------------------------------------------------------------------------
    "rstd differs from the reference's by a factor that changes from row to row ({lo:.4f} to {hi:.4f}): look at how "
    "the variance is computed (the rows have means up to 1000: a one-pass E[x^2] - E[x]^2 cancels catastrophically "
    "there in fp32; the centred sum does not)":
        "rstd가 기준과 행마다 다른 배율({lo:.4f}부터 {hi:.4f}까지)로 다릅니다. 분산을 계산하는 방식을 봅니다(행의 "
        "평균이 1000까지 갑니다. 그곳에서 한 번에 계산하는 E[x^2] - E[x]^2는 fp32에서 catastrophic cancellation을 "
        "일으킵니다. 중심화한 합은 그렇지 않습니다)",
    "rstd is NaN or inf at N = {n}: a row of one value has variance 0, and 0 / (N - 1) = 0 / 0. Which N does LayerNorm "
    "divide by?":
        "N = {n}에서 rstd가 NaN이나 inf입니다. 값이 하나인 행은 분산이 0이고, 0 / (N - 1) = 0 / 0입니다. LayerNorm은 "
        "무엇으로 나눕니까?",
    "rstd is {ratio:.5f}x the reference's in every row - the same factor whatever the row's values, so it depends on "
    "N = {n} alone (compare sqrt((N - 1) / N) = {factor:.5f}): your variance is the sample variance, N / (N - 1) times "
    "LayerNorm's. Even at N = 4096 that is 1.2e-4 relative, over ten times fp32's tolerance":
        "모든 행에서 rstd가 기준의 {ratio:.5f}배입니다. 행의 값과 관계없이 같은 배율이므로 N = {n}에만 달려 있습니다"
        "(sqrt((N - 1) / N) = {factor:.5f}와 비교해 봅니다). 내 분산은 표본 분산이고, LayerNorm 분산의 N / (N - 1)배"
        "입니다. N = 4096에서도 상대 오차 1.2e-4로, fp32 허용 오차의 10배가 넘습니다",
    "{rows} rows x N = {n} {dtype}": "{rows}행 x N = {n} {dtype}",
    "y, mean and rstd right for N = 1, 2, 37, 300 and 4096 (fp32 and fp16, row means up to 1000): LayerNorm divides "
    "the centred sum of squares by N - the population variance of the row, the statistic it normalizes by - and the "
    "centred form keeps it exact for large means":
        "N = 1, 2, 37, 300, 4096(fp32와 fp16, 행 평균은 1000까지)에서 y, mean, rstd가 맞습니다. LayerNorm은 중심화한 "
        "제곱합을 N으로 나눕니다. 그것이 정규화의 기준인 행의 모분산입니다. 중심화한 형태는 평균이 커도 정확합니다",
    "{what}: mean wrong ({message}): the mean is the sum of the row's N values over N":
        "{what}: mean이 틀렸습니다({message}). 평균은 행의 값 N개의 합을 N으로 나눈 값입니다",
    "{what}: {name} wrong ({message}). ": "{what}: {name} 값이 틀렸습니다({message}). ",
}
