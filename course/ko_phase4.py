"""The Korean lines of phase 4's exercise checkers (course/exercises/ex_4_*): {english: korean}, with the same
{placeholders}. Read by common/i18n.py with course/ko.py and the other course/ko_phase*.py."""

KO = {
    # ---- 4.1.1 -------------------------------------------------------------------------------------------------------
    "all six placed as lab 4.1 places them: the vector add (0.083 FLOP/B) and the softmax (0.625) far left of every "
    "ridge, the k = 64 chain (16 FLOP/B) just right of the fp32 ridge (11.8), both GEMMs at 1365 FLOP/B far right of "
    "theirs, and naive attention - two matmuls - left of the bf16 ridge (60 against 157 FLOP/B) because S and P go "
    "through HBM: memory-bound":
        "여섯 개 모두 랩 4.1과 같은 자리에 놓았습니다. vector add(0.083 FLOP/B)와 softmax(0.625)는 모든 ridge의 훨씬 "
        "왼쪽, k = 64 chain(16 FLOP/B)은 fp32 ridge(11.8)의 바로 오른쪽, 두 GEMM은 1365 FLOP/B로 각자의 ridge보다 훨씬 "
        "오른쪽입니다. naive attention은 matmul 두 개인데도 S와 P가 HBM을 거치므로 bf16 ridge의 왼쪽(157 FLOP/B 대 "
        "60)에 있어 memory-bound입니다",
    "only the compulsory traffic counts: A, B and C each cross HBM once - how many elements has each of the three, "
    "and how many bytes is one element of the kernel's dtype?":
        "compulsory traffic만 셉니다. A, B, C는 저마다 HBM을 한 번 지나갑니다. 세 행렬의 원소는 각각 몇 개이고, 이 "
        "커널의 dtype 원소 하나는 몇 바이트입니까?",
    "how many multiply-adds does one element of C take, how many FLOPs is a multiply-add, and how many elements has "
    "C?":
        "C의 원소 하나에 곱셈-덧셈이 몇 번 들고, 곱셈-덧셈 하나는 몇 FLOP이며, C의 원소는 몇 개입니까?",
    "which arrays of n elements does c = a + b read from HBM, which does it write, and how many bytes is one fp32 "
    "element?":
        "c = a + b는 원소 n개짜리 배열 가운데 어느 것을 HBM에서 읽고 어느 것을 씁니까? fp32 원소 하나는 몇 "
        "바이트입니까?",
    "how many floating-point operations does c = a + b do on one element, and on how many elements?":
        "c = a + b는 원소 하나에 부동소수점 연산을 몇 번 하고, 원소는 몇 개입니까?",
    "the fused kernel keeps a row on chip between its passes: which whole arrays cross HBM then, and how many bytes "
    "is one fp32 element?":
        "fused 커널은 pass 사이에 행을 칩 안에 둡니다. 그러면 HBM을 지나가는 전체 배열은 무엇이고, fp32 원소 하나는 "
        "몇 바이트입니까?",
    "which operations does a numerically stable softmax do on one element, pass by pass (lab 4.1 counts each as one "
    "FLOP), and on how many elements?":
        "수치적으로 안정한 softmax는 pass마다 원소 하나에 어떤 연산을 합니까(랩 4.1은 연산 하나를 1 FLOP으로 "
        "셉니다)? 원소는 몇 개입니까?",
    "the k FMAs run in registers: how many bytes does one element cost in HBM, read and written, and does k change "
    "that?":
        "FMA k개는 register 안에서 실행됩니다. 원소 하나가 HBM에서 읽히고 쓰이는 바이트는 몇 개이고, k가 그 수를 "
        "바꿉니까?",
    "how many FMAs does the chain do on one element, how many FLOPs is an FMA, and on how many elements?":
        "chain은 원소 하나에 FMA를 몇 번 하고, FMA 하나는 몇 FLOP이며, 원소는 몇 개입니까?",
    "besides reading Q, K and V and writing O, the naive kernel puts the scores S and the probabilities P through "
    "HBM: how many times does each of them cross it, how many elements has each per head, and how many bytes is one "
    "bf16 element?":
        "naive 커널은 Q, K, V를 읽고 O를 쓰는 것 말고도 score S와 확률 P를 HBM에 거치게 합니다. 둘은 저마다 HBM을 "
        "몇 번 지나가고, head마다 원소는 몇 개이며, bf16 원소 하나는 몇 바이트입니까?",
    "which matmuls does attention do per head, of which shapes (the softmax between them is small beside them and "
    "not counted), and how many heads are there in all?":
        "attention은 head마다 어떤 matmul을 어떤 shape으로 합니까(그 사이의 softmax는 matmul에 비해 작아 세지 "
        "않습니다)? head는 모두 몇 개입니까?",
    "bytes: you said {said}, {off}: {why}": "bytes: {said}라고 답했고 {off}. {why}",
    "FLOPs: you said {said}, {off}: {why}": "FLOPs: {said}라고 답했고 {off}. {why}",
    "bound: {said!r} is not what the model says: compare the arithmetic intensity, FLOPs / bytes, with the ridge of "
    "its unit, peak TFLOP/s / HBM TB/s":
        "bound: {said!r}는 모델의 답과 다릅니다. arithmetic intensity(FLOPs / bytes)를 그 unit의 ridge(peak TFLOP/s / "
        "HBM TB/s)와 비교하세요",
    "{key}: {fields} not answered yet": "{key}: {fields}에 아직 답이 없습니다",
    "of {n} kernels": "커널 {n}개 중",
    "{key}: write a dict(bytes=..., flops=..., unit=..., bound=..., roof_tflops=...)":
        "{key}: dict(bytes=..., flops=..., unit=..., bound=..., roof_tflops=...)로 씁니다",

    # ---- 4.2.1 -------------------------------------------------------------------------------------------------------
    "all right: a chain costs its memory passes - every unfused kernel reads its inputs and writes its output, the "
    "fused one moves each input once and writes only what the caller keeps (2.0x for bias + GELU, 2.33x once a "
    "residual joins it, 1.25x for residual + layernorm while h is kept, 1.67x when it is not) - and a compute-bound "
    "GEMM gains only its elementwise tail ({want:.3f}x)":
        "모두 맞습니다. chain의 비용은 메모리 왕복 횟수입니다. fusion하지 않은 커널은 저마다 입력을 읽고 출력을 씁니다. "
        "fused 커널은 입력마다 한 번 옮기고 호출한 쪽이 간직할 것만 씁니다(bias + GELU는 2.0배, residual이 더해지면 "
        "2.33배, h를 간직하는 residual + layernorm은 1.25배, 간직하지 않으면 1.67배). compute-bound GEMM이 fusion으로 "
        "얻는 것은 elementwise tail뿐입니다({want:.3f}배)",
    "{key}: not answered yet": "{key}: 아직 답이 없습니다",
    "of {n}": "{n}개 중",
    "{key}: not answered yet (two numbers: unfused, fused)": "{key}: 아직 답이 없습니다(숫자 두 개: unfused, fused)",
    "unfused {said} M N is {off}: each of its kernels reads every full M x N matrix it takes and writes the one it "
    "makes, so an intermediate is written once and read back once - count kernel by kernel":
        "unfused {said} M N이라고 답했고 {off}. 커널마다 받는 M x N 행렬을 모두 읽고 만드는 행렬 하나를 씁니다. "
        "그래서 중간 결과는 한 번 쓰이고 한 번 다시 읽힙니다. 커널 하나씩 셉니다",
    "fused {said} M N is {off}: the one kernel reads each full-size input of the chain once and writes only the "
    "matrices the caller keeps":
        "fused {said} M N이라고 답했고 {off}. 커널 하나가 chain의 전체 크기 입력을 한 번씩 읽고, 호출한 쪽이 간직하는 "
        "행렬만 씁니다",
    "GEMM_EPILOGUE_SPEEDUP: {said} is {off}: the GEMM's 2 M N K FLOPs at 700 TFLOP/s take the same time fused or not "
    "(it is compute-bound, and fusing changes none of its bytes); what goes is the elementwise tail - how many bytes "
    "do the bias kernel and the GELU kernel move between them, and how long do those take at 4.4 TB/s? The speed-up "
    "is (GEMM time + tail time) / GEMM time":
        "GEMM_EPILOGUE_SPEEDUP: {said}라고 답했고 {off}. GEMM의 2 M N K FLOP은 fusion 여부와 관계없이 700 TFLOP/s에서 "
        "같은 시간이 걸립니다(compute-bound이고, fusion이 그 바이트를 하나도 바꾸지 않습니다). 사라지는 것은 "
        "elementwise tail입니다. bias 커널과 GELU 커널이 함께 옮기는 바이트는 몇 바이트이고, 4.4 TB/s에서 얼마나 "
        "걸립니까? speed-up은 (GEMM 시간 + tail 시간) / GEMM 시간입니다",

    # ---- 4.3.1 -------------------------------------------------------------------------------------------------------
    "all six as ptxas has them: a 64 x 64 warp tile (128 accumulators, ~240 registers) spills whenever 65536 / "
    "(threads x MIN_BLOCKS) falls under that - 8 warps at 2 blocks, 4 warps at 3, 16 warps at 1 - and a 64 x 32 warp "
    "tile (~128) fits 16 warps; shared memory never decided it here, registers did":
        "여섯 개 모두 ptxas와 같습니다. 64 x 64 warp tile(accumulator 128개, register 약 240개)은 65536 / (threads x "
        "MIN_BLOCKS)가 그보다 작아지면 spill합니다(block 2개에서 warp 8개, 3개에서 warp 4개, 1개에서 warp 16개). "
        "64 x 32 warp tile(약 128개)은 warp 16개에 들어갑니다. 여기서 결과를 정한 것은 shared memory가 아니라 "
        "register였습니다",
    "{name}: not answered yet (warps, KiB, spills)": "{name}: 아직 답이 없습니다(warp 수, KiB, spill 여부)",
    "{name}: {said} warps is {off}: a block has one warp per warp tile - how many WM x WN warp tiles cover its BM x BN "
    "block tile?":
        "{name}: warp {said}개는 {off}. block은 warp tile마다 warp 하나를 둡니다. BM x BN block tile을 WM x WN warp "
        "tile 몇 개가 덮습니까?",
    "{name}: {said} KiB is {off}: each of the STAGES buffers holds a BM x BK tile of A and a BK x BN tile of B, 2 bytes "
    "an element; a KiB is 1024 bytes":
        "{name}: {said} KiB는 {off}. STAGES개의 buffer마다 A의 BM x BK tile과 B의 BK x BN tile이 들어가고, 원소 하나는 "
        "2바이트입니다. 1 KiB는 1024바이트입니다",
    "{name}: write whether ptxas spills as True or False, not {said!r}":
        "{name}: ptxas가 spill하는지는 {said!r}가 아니라 True나 False로 씁니다",
    "{name}: spills = {said} is not what ptxas does: __launch_bounds__(threads, MIN_BLOCKS) caps a thread at 65536 / "
    "(threads x MIN_BLOCKS) registers, and never more than 255 - is that cap under what a WM x WN warp tile needs for "
    "its fp32 accumulators, its fragments and its addresses?":
        "{name}: spills = {said}는 ptxas의 결과와 다릅니다. __launch_bounds__(threads, MIN_BLOCKS)는 thread당 register를 "
        "65536 / (threads x MIN_BLOCKS)개로 제한하고, 255개를 넘지 않게 합니다. 그 상한이 WM x WN warp tile의 fp32 "
        "accumulator, fragment, 주소에 필요한 register 수보다 작습니까?",

    # ---- 4.4.1 -------------------------------------------------------------------------------------------------------
    "{bm}x{bn} tiles at M = N = {mn}, {per_sm} block(s) per SM": "M = N = {mn}에서 {bm}x{bn} tile, SM당 block {per_sm}개",
    "all right: 6% more work at 4224 costs a 5th wave a quarter full (0.97 to 0.85 efficiency); two blocks per SM "
    "halve the waves but not the quantization; reuse grows with the tile (BM BN / (BM + BN) FLOP/B) while the stages "
    "it can afford shrink - 4 for 128 x 256 x 64, 3 for 256 x 256 x 64. Lab 4.4's wave sweep measured 0.868 at 4224 "
    "against this 0.85":
        "모두 맞습니다. 4224에서 일이 6% 늘면 4분의 1만 찬 다섯 번째 wave가 생깁니다(효율 0.97에서 0.85로). SM당 "
        "block 두 개는 wave 수를 절반으로 줄이지만 양자화는 줄이지 못합니다. 재사용은 tile과 함께 커지고(BM BN / "
        "(BM + BN) FLOP/B), 들어가는 stage 수는 줄어듭니다(128 x 256 x 64는 4개, 256 x 256 x 64는 3개). 랩 4.4의 wave "
        "sweep은 4224에서 0.868을 측정했고, 여기 모델은 0.85입니다",
    "{name}: not answered yet (tiles, waves, efficiency)": "{name}: 아직 답이 없습니다(tile 수, wave 수, 효율)",
    "{bm}x{bn} reuse: not answered yet": "{bm}x{bn} 재사용: 아직 답이 없습니다",
    "{bm}x{bn}x{bk} stages: not answered yet": "{bm}x{bn}x{bk} stage 수: 아직 답이 없습니다",
    "{said} tiles is {off}: one block per BM x BN tile of the M x N output, and a partial tile at an edge is still a "
    "whole block - count the tiles a side, rounded up":
        "tile {said}개는 {off}. M x N 출력의 BM x BN tile 하나에 block 하나이고, 가장자리의 덜 찬 tile도 block "
        "하나입니다. 한 변의 tile 수를 올림해서 셉니다",
    "{said} waves is {off}: a wave puts one tile on every slot, {sms} SMs x the blocks per SM, and a last wave that is "
    "only partly full still counts as one":
        "wave {said}개는 {off}. wave 하나는 모든 slot(SM {sms}개 x SM당 block 수)에 tile을 하나씩 놓습니다. 마지막 "
        "wave는 일부만 차도 한 번으로 셉니다",
    "efficiency {said} is {off}: the tiles over the slots the waves offer, tiles / (waves x slots)":
        "효율 {said}는 {off}. tile 수를 wave들이 내주는 slot 수로 나눕니다: tiles / (waves x slots)",
    "{bm}x{bn} reuse: {said} FLOP/B is {off}: per k-step the tile does 2 BM BN BK FLOPs and loads (BM + BN) x BK "
    "elements of 2 bytes - divide, and BK cancels":
        "{bm}x{bn} 재사용: {said} FLOP/B는 {off}. k-step마다 tile은 2 BM BN BK FLOP을 계산하고 2바이트 원소 "
        "(BM + BN) x BK개를 load합니다. 나누면 BK는 약분됩니다",
    "{bm}x{bn}x{bk} stages: {said} is {off}: one stage holds a BM x BK tile of A and a BK x BN tile of B, 2 bytes an "
    "element - how many whole stages fit in 227 KiB?":
        "{bm}x{bn}x{bk} stage 수: {said}개는 {off}. stage 하나에는 A의 BM x BK tile과 B의 BK x BN tile이 들어가고, "
        "원소 하나는 2바이트입니다. 227 KiB에 stage가 몇 개까지 온전히 들어갑니까?",

    # ---- 4.5.1 -------------------------------------------------------------------------------------------------------
    "all five right: an fp16 accumulator overflows at K = 2048 products of 32 - and at K = 4096 when the answer is 0 - "
    "and its error doubles for every 4x K ({ratio:.2f}x measured over 16x); bf16 inputs with an fp32 accumulator cost "
    "their 8-bit rounding, {err:.1e}, the same at every K: accumulation precision is what grows with K, storage "
    "precision is not":
        "다섯 개 모두 맞습니다. fp16 accumulator는 32짜리 곱 K = 2048개에서 overflow하고, 답이 0일 때는 K = 4096에서 "
        "overflow합니다. 그 오차는 K가 4배가 될 때마다 두 배가 됩니다(16배 구간에서 측정값 {ratio:.2f}배). fp32 "
        "accumulator를 쓰는 bf16 입력은 8비트 반올림의 비용 {err:.1e}만 치르고, 이 값은 K와 관계없이 같습니다. K와 함께 "
        "커지는 것은 누적 정밀도이고, 저장 정밀도는 그렇지 않습니다",
    "not answered yet: {names}": "아직 답이 없습니다: {names}",
    "{said!r} is not an integer K >= {step}": "{said!r}는 K >= {step}인 정수가 아닙니다",
    "{k} is {off}: K = {k} still ends finite in fp16":
        "{k}라고 답했고 {off}. K = {k}에서는 fp16으로도 아직 유한하게 끝납니다",
    "{said} is {off}: K = {k} already ends at inf": "{said}라고 답했고 {off}. K = {k}에서 이미 inf로 끝납니다",
    "FIRST_INF_K: {why} - the running sum climbs by 32 a product: which product first takes it to 65520 or more, from "
    "where fp16 rounds to inf (and inf + 32 stays inf)?":
        "FIRST_INF_K: {why}. 누적 합은 곱 하나마다 32씩 올라갑니다. 몇 번째 곱에서 처음으로 65520 이상이 됩니까? "
        "fp16은 거기서부터 inf로 반올림합니다(inf + 32는 계속 inf입니다)",
    "CANCEL_INF_K: {why} - the partial sums climb through all K / 2 of the +32s before the first -32: for which K "
    "does that peak first round to inf, from where inf - 32 never comes back down to the exact 0?":
        "CANCEL_INF_K: {why}. 부분합은 첫 -32가 오기 전에 +32 K / 2개를 모두 거쳐 올라갑니다. 어떤 K에서 그 최고점이 "
        "처음으로 inf로 반올림됩니까? inf - 32는 정확한 답 0으로 돌아오지 않습니다",
    "FP16_ACC_GROWTH: {said} is {off} (within 20% passes): each rounding of the running sum is a random error of "
    "about u x |sum|, and independent errors add like a random walk - how does the size of a random walk grow with "
    "its number of steps, when K grows 16x?":
        "FP16_ACC_GROWTH: {said}라고 답했고 {off}(20% 안이면 통과). 누적 합을 반올림할 때마다 약 u x |sum| 크기의 "
        "무작위 오차가 생기고, 독립인 오차는 random walk처럼 더해집니다. random walk의 크기는 걸음 수에 따라 어떻게 "
        "커지고, K가 16배가 되면 몇 배가 됩니까?",
    "BF16_GROWTH: {said} is {off} (within 20% passes): with an fp32 accumulator, which errors are left - the sum's "
    "roundings, or each input's rounding to 8 bits - and does that one depend on how many products are summed?":
        "BF16_GROWTH: {said}라고 답했고 {off}(20% 안이면 통과). fp32 accumulator에서 남는 오차는 합의 반올림입니까, "
        "입력마다 8비트로 반올림한 것입니까? 그 오차는 더하는 곱의 수에 따라 달라집니까?",
    "BF16_ERROR: {said} is {off} (within 20% passes): how far off is one input rounded to bf16's 8 "
    "significant bits, relative and on average (not at most), and how do the two independent roundings a product "
    "carries add up?":
        "BF16_ERROR: {said}라고 답했고 {off}(20% 안이면 통과). 입력 하나를 bf16의 유효 비트 8개로 반올림하면 상대 "
        "오차는 평균(최대가 아니라) 얼마입니까? 곱 하나에 들어 있는 독립인 반올림 두 번은 어떻게 더해집니까?",

    # ---- 4.6.1, 4.6.2 ------------------------------------------------------------------------------------------------
    "right on all {n} cases, causal and not: query i keeps keys j <= i (its own key too, so row 0 always has one key "
    "and never divides 0 by 0), and the ragged last tile is masked by S":
        "causal과 non-causal의 {n}가지 경우 모두에서 맞습니다. query i는 key j <= i를 남깁니다(자기 key도 남으므로 "
        "0행에는 항상 key가 하나 있어 0을 0으로 나누지 않습니다). 들쭉날쭉한 마지막 tile은 S로 mask합니다",
    ". A causal query i attends keys 0 .. i - itself included - and no later one; the mask is the one place that says "
    "so":
        ". causal query i는 자기 자신을 포함한 key 0 .. i만 보고 그 뒤의 key는 보지 않습니다. 그것을 정하는 곳은 "
        "mask 하나뿐입니다",
    "each query block stops after its diagonal block, so the loop runs (n + 1) / 2n of the non-causal tiles with n = "
    "S / BLOCK_M: about half":
        "query block마다 대각선 block 다음에서 멈추므로 loop는 n = S / BLOCK_M일 때 non-causal tile의 (n + 1) / 2n만 "
        "돕니다. 약 절반입니다",
    "right on every case, and no tile past the diagonal is read: {said}. Timed at B*H = {bh}, S = {s}, D = {d}: causal "
    "{causal:.3f} ms, non-causal {full:.3f} ms, {ratio:.2f} of the time (timing spread {spread:.0%}); the rest of the "
    "way to the tile count is the mask still applied to every tile, and the programs of late query blocks running "
    "longest":
        "모든 경우에서 맞고, 대각선 너머의 tile은 읽지 않습니다: {said}. B*H = {bh}, S = {s}, D = {d}에서 잰 시간은 "
        "causal {causal:.3f} ms, non-causal {full:.3f} ms로 {ratio:.2f}배입니다(측정 편차 {spread:.0%}). tile 수의 "
        "비율에 못 미치는 나머지는 모든 tile에 여전히 mask를 적용하는 비용과, 뒤쪽 query block의 program이 가장 오래 "
        "도는 탓입니다",
    "right, but {reads}. A causal query block [m0, m0 + BLOCK_M) attends no key at or past m0 + BLOCK_M, so about half "
    "of the tiles your loop reads, multiplies and exponentiates are then masked to -inf in full: which tiles can the "
    "loop of a query block stop before?":
        "맞지만 {reads}. causal query block [m0, m0 + BLOCK_M)은 m0 + BLOCK_M 이후의 key를 보지 않습니다. 그래서 내 "
        "loop가 읽고 곱하고 exp를 계산하는 tile의 약 절반은 결국 모두 -inf로 mask됩니다. query block의 loop는 어느 "
        "tile 앞에서 멈출 수 있습니까?",
    "right on every case, and no tile past the diagonal is read: {said}. On a GPU this checker also times causal "
    "against non-causal":
        "모든 경우에서 맞고, 대각선 너머의 tile은 읽지 않습니다: {said}. GPU에서는 이 검사가 causal과 non-causal의 "
        "시간도 비교합니다",
    ". Faster does not count until it is right: a causal query i attends keys 0 .. i, and a tile you skip must hold no "
    "key any query of the block attends":
        ". 빨라도 맞아야 인정됩니다. causal query i는 key 0 .. i를 봅니다. 건너뛰는 tile에는 그 block의 어떤 query도 "
        "보는 key가 없어야 합니다",
    "the NaN probe failed to run ({error}: {detail})": "NaN 검사를 실행하지 못했습니다({error}: {detail})",

    # ---- the hints (HINTS in each exercise.py, `python -m course exercise ID --hint`) --------------------------------
    # 4.1.1
    "Fill one column at a time for all six: first the bytes (each input read once and each output written once, at "
    "the dtype's size), then the FLOPs (an FMA is 2); only then the unit, the bound and the roof.":
        "여섯 개 모두 한 열씩 채웁니다. 먼저 바이트(입력은 한 번 읽고 출력은 한 번 쓰며, dtype 크기로), 그다음 "
        "FLOP(FMA는 2)이고, 그 뒤에 unit, bound, roof입니다.",
    "Arithmetic intensity is FLOPs / bytes, and a unit's ridge is its peak / HBM bandwidth (51.3 / 4.34 for fp32, 680 "
    "/ 4.34 for bf16, in FLOP/B). Left of the ridge a kernel is memory-bound and its roof is AI x 4.34 TB/s; right of "
    "it, the unit's peak.":
        "arithmetic intensity는 FLOP / 바이트이고, unit의 ridge는 peak / HBM 대역폭입니다(FLOP/B로 fp32는 51.3 / "
        "4.34, bf16은 680 / 4.34). ridge 왼쪽이면 memory-bound이고 roof는 AI x 4.34 TB/s, 오른쪽이면 unit의 "
        "peak입니다.",
    "Vector add: 12 bytes and 1 FLOP an element; softmax: 8 bytes and 5 FLOPs; the k-FMA chain: 8 bytes and 2k FLOPs. "
    "A GEMM moves its three matrices once for 2 M N K FLOPs. Naive attention moves S and P twice each (written, then "
    "read back) at 2 bytes, plus Q, K, V and O: it falls left of the bf16 ridge.":
        "vector add는 원소당 12바이트와 1 FLOP, softmax는 8바이트와 5 FLOP, k-FMA chain은 8바이트와 2k FLOP입니다. "
        "GEMM은 행렬 세 개를 한 번씩 옮기고 2 M N K FLOP을 합니다. naive attention은 S와 P를 두 번씩(쓰고 다시 읽고) "
        "2바이트로 옮기고 Q, K, V, O도 옮깁니다. bf16 ridge의 왼쪽에 놓입니다.",
    # 4.2.1
    "Write each chain as the separate kernels it is unfused, and list for each kernel the full M x N matrices it "
    "reads and writes; then do the same for the single fused kernel.":
        "각 chain을 fusion 전의 개별 커널로 적고, 커널마다 읽고 쓰는 M x N 행렬을 나열합니다. 그다음 fusion된 커널 "
        "하나에 대해서도 똑같이 합니다.",
    "Unfused, every intermediate is written by one kernel and read back by the next: 2 M N more per intermediate. "
    "Fused, only the chain's inputs are read and only what the caller keeps is written - a kept h is still written "
    "once. Bias rows and layernorm weights are too small to count.":
        "fusion 전에는 중간 결과마다 한 커널이 쓰고 다음 커널이 다시 읽으므로 중간 결과 하나에 2 M N씩 더 듭니다. "
        "fusion하면 chain의 입력만 읽고 호출자가 갖는 것만 씁니다. 호출자가 갖는 h는 여전히 한 번 씁니다. bias 행과 "
        "layernorm 가중치는 너무 작아 세지 않습니다.",
    "GEMM epilogue: the GEMM takes 2 x 4096^3 FLOPs / 700 TFLOP/s; unfused, the bias kernel and the GELU kernel each "
    "read and write one 4096 x 4096 bf16 matrix at 4.4 TB/s; the speed-up is (GEMM time + those two kernels' time) / "
    "GEMM time.":
        "GEMM epilogue: GEMM은 2 x 4096^3 FLOP / 700 TFLOP/s가 걸립니다. fusion 전에는 bias 커널과 GELU 커널이 각각 "
        "4096 x 4096 bf16 행렬 하나를 4.4 TB/s로 읽고 씁니다. 속도 향상은 (GEMM 시간 + 두 커널 시간) / GEMM "
        "시간입니다.",
    # 4.3.1
    "Three numbers per configuration: warps = (BM / WM) x (BN / WN); shared memory = STAGES x (BM x BK + BK x BN) "
    "bf16 elements; and whether ptxas spills, which depends on the register cap.":
        "설정마다 숫자 세 개입니다. warp 수 = (BM / WM) x (BN / WN), shared memory = STAGES x (BM x BK + BK x BN)개의 "
        "bf16 원소, 그리고 ptxas가 spill하는지인데 이것은 register 상한에 달려 있습니다.",
    "The cap is 65536 / (threads per block x MIN_BLOCKS), and never more than 255. A 64 x 64 warp tile needs about "
    "240 registers (128 accumulators, its fragments, its addresses): ptxas spills when the cap is below what the warp "
    "tile needs.":
        "상한은 65536 / (block당 thread 수 x MIN_BLOCKS)이고 255를 넘지 않습니다. 64 x 64 warp tile은 register가 약 "
        "240개 필요합니다(accumulator 128개, fragment, 주소). 상한이 warp tile에 필요한 양보다 작으면 ptxas가 "
        "spill합니다.",
    "Threads = 32 x warps, so a 512-thread block caps a thread at 128 registers even with MIN_BLOCKS = 1; a 64 x 32 "
    "warp tile needs about half of 240 and fits that. Shared memory in KiB: the element count x 2 bytes / 1024.":
        "thread 수 = 32 x warp 수이므로 512-thread block은 MIN_BLOCKS = 1이어도 thread당 register 상한이 128입니다. "
        "64 x 32 warp tile은 240의 절반쯤이 필요해 거기에 들어갑니다. shared memory의 KiB는 원소 수 x 2바이트 / "
        "1024입니다.",
    # 4.4.1
    "Three small models, one per dictionary: waves, reuse and stages. For the waves, count the tiles first: ceil(M / "
    "BM) x ceil(N / BN).":
        "dictionary마다 작은 모델 하나, 모두 셋입니다. wave, reuse, stage입니다. wave는 먼저 tile 수를 셉니다. ceil(M "
        "/ BM) x ceil(N / BN)입니다.",
    "Slots = 132 x blocks per SM; waves = tiles / slots, rounded up; efficiency = tiles / (waves x slots). Reuse: 2 "
    "BM BN BK FLOPs per k-step over (BM + BN) x BK elements of 2 bytes. A stage holds one A tile and one B tile, the "
    "same (BM + BN) x BK x 2 bytes.":
        "slot = 132 x SM당 block 수, wave = tile 수 / slot 수를 올림, 효율 = tile 수 / (wave x slot)입니다. reuse는 "
        "k-step마다 2 BM BN BK FLOP을 2바이트 원소 (BM + BN) x BK개로 나눈 값입니다. stage 하나는 A tile과 B tile "
        "하나씩, 역시 (BM + BN) x BK x 2바이트입니다.",
    "At M = N = 4224 a 128-row tile needs 33 tiles a side instead of 32: about 6% more tiles, and they spill into an "
    "extra wave that is mostly empty. For stages, divide 227 KiB by one stage's bytes and round down.":
        "M = N = 4224에서 128행 tile은 한 변에 32개가 아니라 33개가 필요합니다. tile이 6%쯤 늘고, 대부분 빈 wave가 "
        "하나 더 생깁니다. stage는 227 KiB를 stage 하나의 바이트로 나눠 내림합니다.",
    # 4.5.1
    "Start with fp16's limits: the largest finite value is 65504 and a sum of 65520 or more rounds to inf, which then "
    "stays inf whatever is added. How many steps of +32 get there?":
        "fp16의 한계부터 봅니다. 가장 큰 유한 값은 65504이고, 65520 이상인 합은 inf로 반올림되며 그 뒤로는 무엇을 "
        "더해도 inf입니다. +32를 몇 번 더하면 거기에 닿습니까?",
    "With cancellation the running sum climbs through all K / 2 positive products before the first -32: it ends at "
    "inf exactly when that peak overflows. A long sum's rounding errors grow like a random walk, as the square root "
    "of K; with bf16 inputs and an fp32 sum, the inputs' rounding sets the error and does not grow with K.":
        "상쇄가 있으면 누적 합은 첫 -32가 오기 전에 양수 곱 K / 2개를 모두 거쳐 올라갑니다. 그 최고점이 overflow할 "
        "때에만 inf로 끝납니다. 긴 합의 반올림 오차는 random walk처럼 K의 제곱근으로 자랍니다. bf16 입력과 fp32 "
        "합에서는 입력의 반올림이 오차를 정하고 K에 따라 자라지 않습니다.",
    "The fp16 growth is the square root of 16384 / 1024, the bf16 one about 1. For the bf16 error: each input's "
    "rounding errs by up to 2^-8 relative, about 2^-8 / sqrt(3) on average, and a product carries two of them.":
        "fp16의 증가 배수는 16384 / 1024의 제곱근이고 bf16은 약 1입니다. bf16 오차는 입력마다 반올림의 상대 오차가 "
        "최대 2^-8, 평균 약 2^-8 / sqrt(3)이고, 곱 하나에 그런 오차가 두 개 있습니다.",
    # 4.6.1
    "Look at the causal mask inside the key loop, where a key's index is compared with a query's: which keys does it "
    "let query i attend?":
        "key loop 안에서 key index를 query index와 비교하는 causal mask를 봅니다. query i가 어느 key를 보게 합니까?",
    "Causal attention lets query i attend keys 0 .. i, its own included. A strict comparison drops the diagonal: row "
    "0 attends no key at all (0 / 0 in the softmax) and every other row misses its own key.":
        "causal attention에서 query i는 자기 자신을 포함해 key 0 .. i를 봅니다. 엄격한 부등호는 대각선을 빼 버립니다. "
        "0번 행은 key를 하나도 보지 않고(softmax에서 0 / 0), 다른 행은 모두 자기 key를 놓칩니다.",
    "Make the comparison keep the key whose index equals the query's: keep key j for query i when j is not greater "
    "than i.":
        "index가 query와 같은 key도 남도록 비교를 바꿉니다. j가 i보다 크지 않으면 query i에 key j를 남깁니다.",
    # 4.6.2
    "Look at the bound of the key loop: with causal on, how many key tiles does it visit for the first query block, "
    "and for the last?":
        "key loop의 상한을 봅니다. causal이 켜져 있을 때 첫 query block과 마지막 query block에서 key tile을 몇 개 "
        "돕니까?",
    "A query block holds queries m0 .. m0 + BLOCK_M - 1, and none of them attends a key at or past m0 + BLOCK_M: "
    "those tiles are fully masked, yet the loop still loads them, paying their bytes and FLOPs (and 0 x NaN is NaN if "
    "they hold NaN).":
        "query block은 query m0 .. m0 + BLOCK_M - 1을 갖고, 그중 어느 것도 m0 + BLOCK_M 이상의 key를 보지 않습니다. "
        "그 tile은 모두 mask되는데도 loop는 그것을 읽어 바이트와 FLOP을 치릅니다(그 안에 NaN이 있으면 0 x NaN은 "
        "NaN입니다).",
    "When CAUSAL, end the loop at the smaller of (the program's query block index + 1) x BLOCK_M and seq; otherwise "
    "at seq. Keep the mask: the diagonal tile is only partly visible.":
        "CAUSAL이면 loop를 (program의 query block 번호 + 1) x BLOCK_M과 seq 중 작은 값에서 끝내고, 아니면 seq에서 "
        "끝냅니다. mask는 그대로 둡니다. 대각선 tile은 일부만 보입니다.",
}
