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

    # ---- the hints (HINTS in each exercise.py, `python -m course exercise ID --hint`) --------------------------------
    # 3.1.1
    "First find how many consecutive floats each thread holds: BLOCK / (32 x num_warps). That caps the width of one "
    "load: 1 float is 4 bytes, 2 are 8, 4 or more allow 16.":
        "먼저 thread마다 연속된 float을 몇 개 갖는지 구합니다. BLOCK / (32 x num_warps)입니다. 그것이 load 하나의 "
        "폭을 제한합니다. float 1개면 4바이트, 2개면 8바이트, 4개 이상이면 16바이트까지 됩니다.",
    "A vector load is all or nothing under its mask, so Triton widens a load only where it can prove offs < n is the "
    "same for every float of the vector. n known divisible by 16 proves it; with an odd n each float gets its own "
    "4-byte load and its own mask bit.":
        "vector load는 mask 아래에서 전부 하거나 전부 안 하므로, Triton은 vector의 모든 float에서 offs < n이 같다고 "
        "증명할 수 있을 때만 load를 넓힙니다. n이 16으로 나누어떨어진다고 알려지면 증명됩니다. n이 홀수면 float마다 "
        "4바이트 load와 mask bit가 따로 붙습니다.",
    "Per case: bytes per load = 4 x min(4, floats per thread) when n is known divisible by 16, else 4; loads per "
    "thread per array = floats per thread x 4 / bytes per load.":
        "경우마다: n이 16으로 나누어떨어진다고 알려지면 load당 바이트 = 4 x min(4, thread당 float 수), 아니면 "
        "4입니다. 배열마다 thread당 load 수 = thread당 float 수 x 4 / load당 바이트입니다.",
    # 3.1.2
    "Look at the mask of the tl.load in the column loop: it has a term for the rows only. What does the last BLOCK_N "
    "step load at columns n_cols and beyond?":
        "column loop 안 tl.load의 mask를 봅니다. 행에 대한 항만 있습니다. 마지막 BLOCK_N step은 n_cols 이상의 열에서 "
        "무엇을 읽습니까?",
    "When n_cols is not a multiple of BLOCK_N, the last step's columns past the row's end are the next row's first "
    "elements (past the matrix, for the last row), and they are added in. The mask must be 2-D: the row in range and "
    "the column in range.":
        "n_cols가 BLOCK_N의 배수가 아니면 마지막 step에서 행 끝을 넘은 열은 다음 행의 첫 원소들이고(마지막 행이면 "
        "행렬 밖), 합에 더해집니다. mask는 2차원이어야 합니다. 행도 범위 안이고 열도 범위 안이어야 합니다.",
    "Combine the row mask, broadcast along the columns, with the test cols < n_cols, broadcast along the rows, into "
    "one BLOCK_M x BLOCK_N mask with &, and load with it; the load's other= already keeps masked elements out of the "
    "sum.":
        "열 방향으로 broadcast한 행 mask와 행 방향으로 broadcast한 cols < n_cols 검사를 &로 묶어 BLOCK_M x BLOCK_N "
        "mask 하나를 만들고 그것으로 load합니다. load의 other=가 이미 mask된 원소를 합에서 빼 줍니다.",
    # 3.1.3
    "At 128 columns a program loads one 512-byte row: 4 bytes per thread of its 4 warps, then a reduction and one "
    "store. Count what each of the 262144 programs pays besides its loads, and how little each thread has in flight.":
        "열이 128개면 program 하나가 512바이트 행 하나를 읽습니다. warp 4개의 thread마다 4바이트이고, 그다음 "
        "reduction과 store 하나입니다. program 262144개가 load 말고 무엇을 치르는지, thread마다 in-flight 바이트가 "
        "얼마나 적은지 셉니다.",
    "Give a program several rows: a BLOCK_M x BLOCK_N tile, so that it loads kilobytes and one reduction along axis 1 "
    "serves BLOCK_M rows. Lab 3.1's rowsum_tile_kernel, and exercise 3.1.2's fix, show the 2-D mask it needs.":
        "program 하나에 행 여러 개를 줍니다. BLOCK_M x BLOCK_N tile이면 program이 킬로바이트 단위로 읽고, axis 1 방향 "
        "reduction 하나가 BLOCK_M개 행을 처리합니다. 필요한 2차원 mask는 랩 3.1의 rowsum_tile_kernel과 연습 문제 "
        "3.1.2의 풀이에 있습니다.",
    "Choose BLOCK_N as the row length's next power of 2 (capped) and BLOCK_M so that the tile holds about 4096 "
    "elements; launch ceil(rows / BLOCK_M) programs; mask rows and columns on the load and rows on the store. Long "
    "rows then get BLOCK_M = 1 and keep their speed.":
        "BLOCK_N은 행 길이 이상인 가장 작은 2의 거듭제곱(상한 있음)으로, BLOCK_M은 tile이 원소 4096개쯤 되게 "
        "고릅니다. program은 ceil(rows / BLOCK_M)개 띄우고, load에서는 행과 열을, store에서는 행을 mask합니다. 그러면 "
        "긴 행은 BLOCK_M = 1이 되어 속도가 그대로입니다.",
    # 3.2.1
    "Look at the accumulator's dtype in three places: the tl.zeros it starts from, the out_dtype of tl.dot, and what "
    "the store writes.":
        "accumulator의 dtype을 세 곳에서 봅니다. 시작하는 tl.zeros, tl.dot의 out_dtype, store가 쓰는 값입니다.",
    "At K = 4096 with BLOCK_K = 32 an fp16 accumulator is rounded 128 times to 11 bits, and those errors add up to "
    "much more than the one rounding of the output that fp16 cannot avoid. Accumulate in fp32 (24 bits) and round to "
    "fp16 once, at the end.":
        "K = 4096, BLOCK_K = 32이면 fp16 accumulator는 11비트로 128번 반올림되고, 그 오차가 쌓이면 fp16이 피할 수 "
        "없는 출력의 반올림 한 번보다 훨씬 커집니다. fp32(24비트)로 누적하고 끝에서 한 번만 fp16으로 반올림합니다.",
    "Start the accumulator as fp32 zeros, let tl.dot add the fp16 x fp16 products into it in fp32 (no fp16 "
    "out_dtype), and convert to the output pointer's element type only in the store.":
        "accumulator를 fp32 0으로 시작하고, tl.dot이 fp16 x fp16 곱을 fp32로 더하게 합니다(fp16 out_dtype 없이). 출력 "
        "pointer의 원소 타입으로는 store에서만 변환합니다.",
    # 3.3.1
    "Look at tl.exp(x): what is exp(100) in fp32, and exp(-120)? Then look at what the masked lanes load, and what "
    "that would do to a maximum of the row.":
        "tl.exp(x)를 봅니다. fp32에서 exp(100)과 exp(-120)은 무엇입니까? 그다음 mask된 lane이 무엇을 읽는지, 그것이 "
        "행의 최댓값에 어떤 영향을 주는지 봅니다.",
    "Softmax is unchanged when a constant is subtracted from the whole row; subtracting the row max makes the largest "
    "exponent 0, so nothing overflows and the sum is at least 1. The row is already in registers, so a max reduction "
    "costs no pass over memory, and lanes that load -inf leave the max alone.":
        "softmax는 행 전체에서 상수 하나를 빼도 바뀌지 않습니다. 행 최댓값을 빼면 가장 큰 지수가 0이 되어 overflow가 "
        "없고 합은 1 이상입니다. 행은 이미 register에 있으므로 max reduction은 메모리를 다시 훑지 않고, -inf를 읽은 "
        "lane은 최댓값을 바꾸지 않습니다.",
    "Reduce the loaded row with tl.max along axis 0 and exponentiate x minus that max; the single load, the sum and "
    "the division stay as they are.":
        "읽어 온 행을 axis 0 방향 tl.max로 줄이고, x에서 그 최댓값을 뺀 값에 exp를 취합니다. load 한 번, 합, 나눗셈은 "
        "그대로 둡니다.",
    # 3.4.1
    "Look at the line that computes var: what does it divide the sum of squared deviations by?":
        "var를 계산하는 줄을 봅니다. 편차 제곱합을 무엇으로 나눕니까?",
    "LayerNorm (torch.nn.functional.layer_norm) uses the population variance, over N, not the sample variance over N "
    "- 1. The variance is then off by N / (N - 1) and rstd by its square root: about 1.2e-4 at N = 4096, more than "
    "fp32's 1e-5 tolerance; at N = 1 it divides by zero.":
        "LayerNorm(torch.nn.functional.layer_norm)은 N - 1로 나누는 표본 분산이 아니라 N으로 나누는 모분산을 씁니다. "
        "그러면 분산은 N / (N - 1)배, rstd는 그 제곱근만큼 어긋납니다. N = 4096에서 약 1.2e-4로 fp32 허용치 1e-5보다 "
        "크고, N = 1에서는 0으로 나눕니다.",
    "Divide the centred sum of squares by n_cols instead of n_cols - 1; nothing else changes (the mean already "
    "divides by n_cols).":
        "중심화한 제곱합을 n_cols - 1 대신 n_cols로 나눕니다. 다른 것은 바꾸지 않습니다(평균은 이미 n_cols로 "
        "나눕니다).",
}
